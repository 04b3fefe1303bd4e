#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 6.12's own allocator (no module bound) when swapoff comes while an
# order-0 allocation steals from a 64K cluster and has dropped si->lock to
# reclaim a swap-cache slot: patch 0001 ends the steal once the device has
# lost SWP_WRITEOK; without it the steal retries the same cluster for ever
# with si->lock held.
#
# tests/tools/swapsteal (pinned to CPU 0) leads the builtin allocator on a
# 16 MiB non-rotational disk into that steal (the steps are in its
# header), and tests/kmod/sa_reclaim_hold.ko holds the reclaim, called
# from alloc_swap_scan_cluster() with both locks dropped, until swapoff
# (run from CPU 1) has cleared SWP_WRITEOK.  Asserted: every step of the
# scenario came out as needed; the hold began once and saw SWP_WRITEOK
# cleared; swapoff completes within 60 s; every page swapsteal still maps
# reads back as written.  A soft lockup or any other kernel report fails
# the run.
#
# vm: --mem 1G --smp 2 --disk steal0:16M --timeout 180

# The hold busy-waits on CPU 0: everything here runs on CPU 1 but swapsteal.
if [ -z "${STEAL_PINNED:-}" ]; then
	STEAL_PINNED=1 exec taskset -c 1 "$0" "$@"
fi
. "$(dirname "$0")/../lib/guest.sh"

steal=$(tool swapsteal) || { fail "swapsteal built"; finish; }
ko=$SWAPALLOC_TOP/tests/kmod/sa_reclaim_hold.ko
[ -f "$ko" ] || { fail "sa_reclaim_hold.ko built" "no $ko (tests/run builds tests/kmod)"; finish; }
prm=/sys/module/sa_reclaim_hold/parameters

swapoff_all
d=$(find_disk steal0) || { fail "find steal0"; finish; }
set_rotational "$d" 0 || { fail "steal0 non-rotational"; finish; }
mthp_enable 64 || { fail "64K mTHP enabled"; finish; }
mkswap "$d" >/dev/null && swapon "$d" || { fail "swapon $d"; finish; }
IFS=: read -r maj min < "/sys/block/${d##*/}/dev"
insmod "$ko" major="$maj" minor="$min" || { fail "insmod sa_reclaim_hold.ko"; finish; }
# Once optimized, the probe runs with interrupts on (not as an int3 trap).
for _ in $(seq 50); do
	grep -q '__try_to_reclaim_swap.*OPTIMIZED' /sys/kernel/debug/kprobes/list && break
	sleep 0.1
done
note "kprobe: $(grep __try_to_reclaim_swap /sys/kernel/debug/kprobes/list)"

taskset -c 0 "$steal" -d "$d" -c 8 -a "$prm/armed" > /tmp/steal.log 2>&1 &
spid=$!
hits=0
for _ in $(seq 1200); do
	read -r hits < "$prm/hits"
	[ "$hits" -ge 1 ] && break
	kill -0 "$spid" 2>/dev/null || break
	sleep 0.1
done
if [ "$hits" -lt 1 ]; then
	fail "the steal's reclaim is held" "no hold began: $(tr '\n' ' ' < /tmp/steal.log)"
	kill -USR1 "$spid" 2>/dev/null
	wait "$spid"
	rmmod sa_reclaim_hold
	finish
fi
pass "the steal's reclaim is held"

swapoff "$d" &
opid=$!
rc=0
wait_bounded 60 "$opid" || rc=$?
[ $rc = 0 ] && pass "swapoff completes while the steal is under way" ||
	fail "swapoff completes while the steal is under way" "rc $rc"
read -r opened < "$prm/opened"
[ "$opened" = 1 ] && pass "the hold saw SWP_WRITEOK cleared" ||
	fail "the hold saw SWP_WRITEOK cleared" "opened=$opened"
dmesg | grep 'sa_reclaim_hold: held' | sed 's/^/# /'
dmesg | grep -q 'sa_reclaim_hold: held the reclaim of slot [0-9]* from alloc_swap_scan_cluster: SWP_WRITEOK cleared' &&
	pass "the held reclaim was alloc_swap_scan_cluster()'s" ||
	fail "the held reclaim was alloc_swap_scan_cluster()'s" "see the kernel log lines above"

for _ in $(seq 300); do
	grep -q '^swapsteal: holding' /tmp/steal.log && break
	kill -0 "$spid" 2>/dev/null || break
	sleep 0.1
done
kill -USR1 "$spid" 2>/dev/null
rc=0
wait_bounded 60 "$spid" || rc=$?
sed 's/^/# /' /tmp/steal.log
if [ $rc = 0 ] && grep -q '^swapsteal: verified [0-9]* pages, 0 mismatches' /tmp/steal.log; then
	pass "every page swapsteal maps reads back as written"
else
	fail "every page swapsteal maps reads back as written" "swapsteal exited $rc"
fi
rmmod sa_reclaim_hold || fail "rmmod sa_reclaim_hold"
finish
