#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bpftrace can see the swap slot allocator: a kprobe on
# cluster_alloc_swap_entry (kept out of line by patch 0002) fires while
# memory is pushed to zram swap with MADV_PAGEOUT.
#
# vm: --mem 2G --smp 2 --timeout 300
set -euo pipefail
# shellcheck source=../lib/guest.sh
. "$(dirname "$0")/../lib/guest.sh"

require_cmd bpftrace
fn=cluster_alloc_swap_entry

if ! grep -qE " [tT] $fn\$" /proc/kallsyms; then
	fail "infrastructure: kprobe-symbol" "$fn is not in /proc/kallsyms (inlined?)"
	finish
fi
pass "infrastructure: kprobe-symbol"

if ! sv=$(tool swapverify); then
	fail "infrastructure: kprobe-hits" "tests/tools/swapverify is not built"
	finish
fi
if ! setup_zram 256M >/dev/null; then
	fail "infrastructure: kprobe-hits" "setup_zram 256M failed"
	finish
fi

bt_out=/tmp/bpftrace.out
bpftrace -e "kprobe:$fn { @hits = count(); }" >"$bt_out" 2>&1 &
bt=$!

# Wait until bpftrace says it attaches, then until the kprobe is registered.
attached=0
for _ in $(seq 600); do
	kill -0 $bt 2>/dev/null || break
	if grep -q '^Attaching' "$bt_out" &&
	   { [ ! -r /sys/kernel/debug/kprobes/list ] || grep -q "$fn" /sys/kernel/debug/kprobes/list; }; then
		attached=1
		break
	fi
	sleep 0.5
done
if [ $attached -eq 0 ]; then
	bpftrace_stop $bt || true
	sed 's/^/# bpftrace: /' "$bt_out"
	fail "infrastructure: kprobe-hits" "bpftrace did not attach to kprobe:$fn within 300 s"
	finish
fi
[ -r /sys/kernel/debug/kprobes/list ] || sleep 2
note "bpftrace attached after $SECONDS s"

rc=0
"$sv" -s 64M -i 1 -q >/tmp/swapverify.log 2>&1 || rc=$?
sed 's/^/# /' /tmp/swapverify.log

btrc=0
bpftrace_stop $bt || btrc=$?
sed 's/^/# bpftrace: /' "$bt_out"
hits=$(sed -n 's/^@hits: *\([0-9]*\).*/\1/p' "$bt_out" | tail -n 1)

if [ $rc -ne 0 ]; then
	fail "infrastructure: kprobe-hits" "swapverify -s 64M exited with status $rc"
elif [ -z "$hits" ]; then
	fail "infrastructure: kprobe-hits" "no @hits in bpftrace's output (bpftrace exit status $btrc)"
elif [ "$hits" -gt 0 ]; then
	note "$fn: $hits hits"
	pass "infrastructure: kprobe-hits"
else
	fail "infrastructure: kprobe-hits" "$fn was never called while swapping to zram"
fi

finish
