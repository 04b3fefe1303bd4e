#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The demo's guest side: zram0 with the builtin allocator, then zram1 bound
# to swapalloc, the same 64K mTHP swap workload on each, bpftrace watching.
set -euo pipefail
. "$SWAPALLOC_TOP/tests/lib/guest.sh"

stats=/sys/kernel/mm/transparent_hugepage/hugepages-64kB/stats
d=/sys/kernel/debug/swapalloc

phase() {
	local name=$1 dev=$2 out0 fb0 out fb
	out0=$(cat $stats/swpout); fb0=$(cat $stats/swpout_fallback)
	echo
	echo "=== $name: 256 MiB of 64K mTHP folios written, paged out to $dev, read back"
	"$SWAPALLOC_TOOLS/swapverify" -s 256M -f 64k -p 2 -q | tail -n 1
	out=$(( $(cat $stats/swpout) - out0 )); fb=$(( $(cat $stats/swpout_fallback) - fb0 ))
	echo "$name: 64K swpout $out, swpout_fallback $fb"
}

mthp_enable 64
setup_zram 512M >/dev/null			# zram0: builtin allocator
setup_zram 512M >/dev/null			# zram1: swapalloc (off until phase 2)
echo "=== loading swapalloc for zram1 only (devices=zram1)"
insmod "$SWAPALLOC_TOP/swapalloc.ko" devices=zram1
swapoff /dev/zram1

bpftrace "$SWAPALLOC_TOP/bpftrace/alloc-latency.bt" > /tmp/bt.out 2>&1 &
bt=$!
for i in $(seq 1 60); do grep -q Tracing /tmp/bt.out 2>/dev/null && break; sleep 1; done

phase builtin /dev/zram0
swapoff /dev/zram0
swapon /dev/zram1			# swapalloc binds it at swapon
phase swapalloc /dev/zram1

bpftrace_stop $bt || true

echo
echo "=== /sys/kernel/debug/swapalloc/"
for f in version devices; do echo "--- $f"; cat $d/$f; done
for f in clusters alloc reclaim discard cursors; do
	echo "--- zram1/$f"; cat $d/zram1/$f
done
echo "--- zram1/check (echo 1 > check runs it)"; sa_check zram1
echo
echo "=== bpftrace/alloc-latency.bt"
# bpftrace 0.17 warns that it cannot check traceability without
# CONFIG_DYNAMIC_FTRACE's available_filter_functions; the probes attach.
grep -v "is not traceable" /tmp/bt.out
swapoff -a
rmmod swapalloc
