#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The demo's guest side: zram0 with the builtin allocator, then zram1 bound
# to swapalloc, the same 64K mTHP swap workload on each, bpftrace watching;
# then a rotational disk, builtin then swapalloc, where the builtin 6.12
# allocator splits every 64K folio and swapalloc does not.
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
echo "=== /sys/kernel/swapalloc/zram1/ (control)"
echo "--- policy"; cat /sys/kernel/swapalloc/zram1/policy
echo "--- check (echo 1 > check runs it)"; sa_check zram1
echo
echo "=== bpftrace/alloc-latency.bt"
# bpftrace 0.17 warns that it cannot check traceability without
# CONFIG_DYNAMIC_FTRACE's available_filter_functions; the probes attach.
grep -v "is not traceable" /tmp/bt.out
swapoff -a
rmmod swapalloc

# rot_phase ALLOC DEV: upstream's thp_swap_allocator_test on DEV in a 32M
# memory cgroup (so swapped-in pages really come back from the disk, as
# 4K pages), bpftrace/sequentiality.bt watching the disk's writes.
iters=${DEMO_ROT_ITERATIONS:-10}
thp=$SWAPALLOC_KERNEL_TREE/tools/mm/thp_swap_allocator_test
rot_phase() {
	local alloc=$1 dev=$2 bt i n kib runs fb
	mkswap "$dev" > /dev/null && swapon "$dev"
	bpftrace "$SWAPALLOC_TOP/bpftrace/sequentiality.bt" > /tmp/seq.out 2>&1 &
	bt=$!
	for i in $(seq 1 120); do grep -q Tracing /tmp/seq.out 2>/dev/null && break; sleep 0.5; done
	echo $$ > /sys/fs/cgroup/demo/cgroup.procs
	stdbuf -oL "$thp" > /tmp/thp.out 2>&1 &
	i=$!
	while kill -0 $i 2>/dev/null; do
		n=$(grep -c '^Iteration' /tmp/thp.out || true)
		[ "$n" -lt "$iters" ] || kill $i 2>/dev/null || true
		sleep 0.5
	done
	wait $i 2>/dev/null || true
	echo $$ > /sys/fs/cgroup/cgroup.procs
	sleep 2
	bpftrace_stop $bt || true
	# Runs and their KiB: @runs_kib's count and total (the swap writes
	# only, the run going at Ctrl-C included).
	runs=$(awk '/^@runs_kib\[/ { for (i = 1; i <= NF; i++) if ($i == "count") { v = $(i + 1); sub(",", "", v); n += v } }
		END { print n + 0 }' /tmp/seq.out)
	kib=$(awk '/^@runs_kib\[/ { for (i = 1; i <= NF; i++) if ($i == "total") s += $(i + 1) } END { print s + 0 }' /tmp/seq.out)
	fb=$(awk -v n="$iters" '/^Iteration/ { sub(":", "", $2); p = $NF; sub("%", "", p)
		if ($2 + 0 > n / 2 && $2 + 0 <= n) { s += p; k++ } } END { printf "%.2f", k ? s / k : -1 }' /tmp/thp.out)
	grep '^Iteration' /tmp/thp.out | head -n "$iters" | sed "s/^/$alloc: /" | sed -n '1p;$p'
	printf '%-9s 64K fallback %6s %% (mean of iterations %d-%d), mean write run %s pages (%d KiB in %d runs; sequentiality.bt)\n' \
		"$alloc:" "$fb" $((iters / 2 + 1)) "$iters" \
		"$(awk -v k="$kib" -v r="$runs" 'BEGIN { printf "%.1f", r ? k / r / 4 : 0 }')" "$kib" "$runs"
	if [ "$alloc" = swapalloc ]; then	# gone once swapoff unbinds the disk
		echo "--- ${dev##*/}/alloc"
		cat "$d/${dev##*/}/alloc"
	fi
	swapoff "$dev"
}

rot=$(find_disk rot0)
set_rotational "$rot" 1
echo +memory > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
mkdir -p /sys/fs/cgroup/demo
echo 32M > /sys/fs/cgroup/demo/memory.max
echo
echo "=== rotational disk: 72 MiB virtio disk with queue/rotational=1; upstream's"
echo "=== tools/mm/thp_swap_allocator_test, $iters iterations, in a 32M memory cgroup"
rot_phase builtin "$rot"
insmod "$SWAPALLOC_TOP/swapalloc.ko"	# binds the disk at swapon
rot_phase swapalloc "$rot"
rmmod swapalloc
