#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The test VM itself: the guest runs the kernel scripts/kernel-build.sh
# built, guest-init mounted what suites rely on, and a zram swap device can
# be set up and swapped to and from without losing data.
#
# And bpftrace can see the swap slot allocator: a kprobe on
# cluster_alloc_swap_entry (kept out of line by patch 0002) fires while
# that data is pushed to zram with MADV_PAGEOUT.
#
# vm: --mem 2G --smp 2 --timeout 300
set -euo pipefail
# shellcheck source=../lib/guest.sh
. "$(dirname "$0")/../lib/guest.sh"

# kernelrelease: uname -r is the release of the tree vm-run.sh booted.
want=${SWAPALLOC_KERNELRELEASE:-}
got=$(uname -r)
if [ -z "$want" ]; then
	fail "infrastructure: kernelrelease" "SWAPALLOC_KERNELRELEASE is not set (run me with scripts/vm-run.sh)"
elif [ "$got" = "$want" ]; then
	pass "infrastructure: kernelrelease"
else
	fail "infrastructure: kernelrelease" "uname -r is '$got', the built tree's kernelrelease is '$want'"
fi

# guest-mounts: the file systems guest-init promises.
missing=
for m in /proc /sys /dev /tmp /run /mnt/out /sys/kernel/debug /sys/kernel/tracing \
	 /sys/fs/cgroup /sys/fs/bpf; do
	mountpoint -q "$m" || missing+=" $m"
done
touch /mnt/out/.writable 2>/dev/null && rm -f /mnt/out/.writable || missing+=" /mnt/out(read-only)"
if [ -z "$missing" ]; then
	pass "infrastructure: guest-mounts"
else
	fail "infrastructure: guest-mounts" "not mounted:$missing"
fi

# kprobe-symbol: the builtin allocator's function is there to be probed;
# then bpftrace counts its calls through the zram-swap run below.
fn=cluster_alloc_swap_entry
bt=
bt_out=/tmp/bpftrace.out
if ! grep -qE " [tT] $fn\$" /proc/kallsyms; then
	fail "infrastructure: kprobe-symbol" "$fn is not in /proc/kallsyms (inlined?)"
elif ! command -v bpftrace >/dev/null; then
	pass "infrastructure: kprobe-symbol"
	fail "infrastructure: kprobe-hits" "bpftrace is not installed"
else
	pass "infrastructure: kprobe-symbol"
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
		bt=
		sed 's/^/# bpftrace: /' "$bt_out"
		fail "infrastructure: kprobe-hits" "bpftrace did not attach to kprobe:$fn within 300 s"
	else
		[ -r /sys/kernel/debug/kprobes/list ] || sleep 2
		note "bpftrace attached after $SECONDS s"
	fi
fi

# zram-swap: 64 MiB of patterned memory out to zram with MADV_PAGEOUT and back.
rc=1
if ! sv=$(tool swapverify); then
	fail zram-swap "tests/tools/swapverify is not built"
elif ! dev=$(setup_zram 128M); then
	fail zram-swap "setup_zram 128M failed"
else
	rc=0
	"$sv" -s 64M -q > /tmp/swapverify.log 2>&1 || rc=$?
	sed 's/^/# /' /tmp/swapverify.log
	# Field 5 of a block device's stat: write requests completed.
	writes=$(awk '{ print $5 }' "/sys/block/${dev##*/}/stat")
	if [ $rc -ne 0 ]; then
		fail zram-swap "swapverify -s 64M exited with status $rc"
	elif [ "${writes:-0}" -eq 0 ]; then
		fail zram-swap "swapverify passed but $dev saw no writes"
	else
		note "$dev: $writes write requests"
		pass zram-swap
	fi
fi

# kprobe-hits: the probe fired while zram-swap swapped.
if [ -n "$bt" ]; then
	btrc=0
	bpftrace_stop $bt || btrc=$?
	sed 's/^/# bpftrace: /' "$bt_out"
	hits=$(sed -n 's/^@hits: *\([0-9]*\).*/\1/p' "$bt_out" | tail -n 1)
	if [ $rc -ne 0 ]; then
		fail "infrastructure: kprobe-hits" "zram-swap did not swap"
	elif [ -z "$hits" ]; then
		fail "infrastructure: kprobe-hits" "no @hits in bpftrace's output (bpftrace exit status $btrc)"
	elif [ "$hits" -gt 0 ]; then
		note "$fn: $hits hits"
		pass "infrastructure: kprobe-hits"
	else
		fail "infrastructure: kprobe-hits" "$fn was never called while swapping to zram"
	fi
fi

finish
