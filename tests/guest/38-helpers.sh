#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The helpers the kernel exports to allocator modules refuse bad input
#.  tests/kmod/sa_helpers_test.ko registers its own
# struct swap_alloc_ops (without ->quiesce, but for the discard of held
# slots on a device without discard) on one device and makes one bad
# call per load: swap_alloc_commit() with order 40 or -1 or usage 0 or
# 0x3f, swap_alloc_commit_batch() with order 40 or a range across two
# clusters, swap_alloc_ask_keep_cache() from an allocator without
# ->keep_cache, swap_alloc_discard() on a device swapped on without
# discard and of slots not held, and swap_alloc_hold() of 4 clusters kept
# through rmmod.
# Two more cases hold an allocation in ->alloc while rmmod unbinds the
# device (unbind_in_alloc, free_in_unbind: see below).
# Per call, asserted: no WARN or Call Trace, a kernel log line (not the
# test module's) between the call and its return, and no slot lost: the
# device's Used in /proc/swaps is back where it was once the module is
# gone, the builtin allocator then fills every slot of the device, and
# swapoff completes.
#
# The suite turns panic_on_warn off so that every case runs; a WARN still
# fails the run (vm-run.sh scans the console), and the case it came from
# gets a FAIL line here.
#
# vm: --mem 512M --disk h1:16M --disk h2:16M --disk h3:16M --disk h4:16M
# vm: --disk h5:16M --disk h6:16M --disk h7:16M --disk h8:16M --disk h9:16M
# vm: --disk h10:16M --disk h11:16M --disk h12:16M
# vm: --timeout 900
. "$(dirname "$0")/../lib/guest.sh"

ko=$SWAPALLOC_TOP/tests/kmod/sa_helpers_test.ko
[ -f "$ko" ] || { fail "sa_helpers_test.ko built" "no $ko (tests/run builds tests/kmod)"; finish; }
fill=$(tool swapfill) || { fail "swapfill built"; finish; }

echo 0 > /proc/sys/kernel/panic_on_warn

# Each case gets a disk of its own (a slot it leaks stays leaked), swapped
# on with a higher priority than any disk an earlier case could not swap off.
# swapon_disk SERIAL [swapon options]: non-rotational, mkswap, swapon; prints /dev/vdX.
prio=10
swapon_disk() {
	local d s=$1
	shift
	d=$(find_disk "$s") || return 1
	set_rotational "$d" 0 && mkswap "$d" >/dev/null && swapon -p $prio "$@" "$d" && echo "$d"
}

# swaps_col DEV COL: a column (3 Size, 4 Used, in KiB) of DEV's /proc/swaps row.
swaps_col() { awk -v d="$1" -v c="$2" '$1 == d { print $c }' /proc/swaps; }

# log_since MARK: the kernel log (no timestamps) after the line MARK.
log_since() {
	dmesg -t | awk -v m="$1" 'f { print } $0 == m { f = 1 }'
}

# kernel_lines_between LOG FROM TO: lines strictly between the first line
# matching FROM and the next matching TO, minus the test module's own, the
# usual bind/release notices and WARN splats (a WARN is no clear message).
kernel_lines_between() {
	awk -v a="$2" -v b="$3" '$0 ~ b && f { exit }
		/cut here|^WARNING:/ { splat = 1 } f && !splat { print } /end trace/ { splat = 0 }
		$0 ~ a { f = 1 }' <<<"$1" |
		grep -v '^sa_helpers_test: ' |
		grep -vE '^swap: sa_helpers_test (allocates slots of|released) swap area' || true
}

# fill_check NAME DEV: the builtin allocator must be able to use every slot
# of DEV: page out more than DEV holds and look at DEV's Used.
fill_check() {
	local name=$1 dev=$2 size used pid
	size=$(swaps_col "$dev" 3)
	"$fill" -s $((size + 4096))K -p 3 -H > /tmp/fill.log 2>&1 &
	pid=$!
	wait_line /tmp/fill.log 'swapfill: holding' $pid || true
	used=$(swaps_col "$dev" 4)
	note "$name: $(grep '^swapfill: swapped' /tmp/fill.log); $dev Used $used of $size KiB"
	kill -TERM $pid 2>/dev/null
	wait $pid
	# 64 pages of slack for the per-CPU slot caches; 4 held clusters are 8 MiB.
	if [ -n "$used" ] && [ "$used" -ge $((size - 256)) ]; then
		pass "$name: builtin allocator fills the whole device again"
	else
		fail "$name: builtin allocator fills the whole device again" \
			"Used reached ${used:-?} of $size KiB"
	fi
}

# [kargs=PARAMS] one TEST SERIAL FROM TO [swapon options]: swap on disk
# SERIAL, load the module for TEST (and PARAMS) on it, unload it, check.  FROM and TO are regexes of the
# log lines around the call under test.
one() {
	local t=$1 serial=$2 from=$3 to=$4 mark log lines used dev base
	shift 4
	prio=$((prio + 1))
	dev=$(swapon_disk "$serial" "$@") || { fail "$t: swapon $serial $*"; return; }
	mark="sa-helpers-suite: begin $t"
	echo "$mark" > /dev/kmsg
	base=$(swaps_col "$dev" 4)
	# shellcheck disable=SC2086 # kargs: more module parameters, if any
	if ! insmod "$ko" dev="${dev##*/}" test="$t" ${kargs:-} 2>/tmp/insmod.err; then
		fail "$t: insmod" "$(</tmp/insmod.err)"
		log_since "$mark" | sed 's/^/# /' | tail -n 20
		return
	fi
	rmmod sa_helpers_test || fail "$t: rmmod"
	log=$(log_since "$mark")
	grep -E 'sa_helpers_test|swap' <<<"$log" | sed 's/^/# /'
	if grep -qE 'WARNING:|Call Trace:|BUG:' <<<"$log"; then
		fail "$t: no WARN" "$(grep -m1 -E 'WARNING:|BUG:' <<<"$log")"
	else
		pass "$t: no WARN"
	fi
	lines=$(kernel_lines_between "$log" "$from" "$to")
	if grep -q . <<<"$lines"; then
		note "$t: the kernel said: $(head -n 1 <<<"$lines")"
		pass "$t: refused with a kernel log line"
	else
		fail "$t: refused with a kernel log line" "the kernel accepted it silently"
	fi
	used=$(swaps_col "$dev" 4)
	[ "$used" = "$base" ] && pass "$t: $dev Used back to $base KiB" ||
		fail "$t: $dev Used back to $base KiB" "Used is $used KiB"
	fill_check "$t" "$dev"
	# swapoff waits for inuse_pages to reach 0: a slot counted used that
	# no page holds makes it retry until a signal.
	if timeout 60 swapoff "$dev"; then
		pass "$t: swapoff $dev completes"
	else
		fail "$t: swapoff $dev completes" "swapoff did not finish in 60 s"
	fi
}

call='calling swap_alloc_'
ret='swap_alloc_[a-z]* returned'
one commit_order40 h1 "$call" "$ret"
one commit_order_neg h2 "$call" "$ret"
one commit_usage0 h3 "$call" "$ret"
one commit_usage_bad h4 "$call" "$ret"
one batch_order40 h10 "$call" "$ret"
one batch_across h11 "$call" "$ret"
one ask_nokeep h12 "$call" "$ret"
# With a ->quiesce, so that swap_alloc_hold() may hold the slots first.
kargs=quiesce=1 one discard_nodiscard h5 "calling swap_alloc_discard" "swap_alloc_discard returned"
one discard_notheld h6 "$call" "$ret" --discard=pages
# Refused when holding (the allocator has no ->quiesce) or when unregistering.
one hold_noquiesce h7 "calling swap_alloc_hold" "swap_alloc_unregister returned"

# unbind_in_alloc: test=unbind_in_alloc makes the first order-0 ->alloc
# drop si->lock and sleep until the unbind has begun.  swapfill pages out
# 4M; once that allocation sleeps, rmmod.  Every get_swap_pages() call is
# traced: the sleeper's call (its longest) must get every entry it asked
# for, from the builtin allocator once the unbind is done.
unbind_in_alloc() {
	local t=unbind_in_alloc dev mark log pid P rm i rc sum n r fr lat
	prio=$((prio + 1))
	dev=$(swapon_disk h8) || { fail "$t: swapon h8"; return; }
	mark="sa-helpers-suite: begin $t"
	echo "$mark" > /dev/kmsg
	gsp_trace_on || { fail "$t: get_swap_pages traceable" "cannot add kprobe events"; return; }
	if ! insmod "$ko" dev="${dev##*/}" test=$t 2>/tmp/insmod.err; then
		fail "$t: insmod" "$(</tmp/insmod.err)"
		return
	fi
	"$fill" -s 4M -H > /tmp/fill.log 2>&1 &
	pid=$!
	P=
	for ((i = 0; i < 120; i++)); do
		P=$(log_since "$mark" | sed -n 's/.*->alloc of pid \([0-9]*\) drops si->lock.*/\1/p')
		[ -n "$P" ] && break
		sleep 0.5
	done
	[ -n "$P" ] && pass "$t: an allocation sleeps in ->alloc with si->lock dropped" ||
		fail "$t: an allocation sleeps in ->alloc with si->lock dropped" "none in 60 s"
	rmmod sa_helpers_test &
	rm=$!
	wait_line /tmp/fill.log 'swapfill: holding' $pid || true
	rc=0
	wait $rm || rc=$?
	[ $rc -eq 0 ] && pass "$t: rmmod" || fail "$t: rmmod" "exit $rc"
	note "$t: $(grep '^swapfill: swapped' /tmp/fill.log)"
	gsp_trace_off /tmp/$t-trace.txt
	log=$(log_since "$mark")
	grep -E 'sa_helpers_test|swap' <<<"$log" | sed 's/^/# /'
	grep -qE 'WARNING:|Call Trace:|BUG:' <<<"$log" &&
		fail "$t: no WARN" "$(grep -m1 -E 'WARNING:|BUG:' <<<"$log")" ||
		pass "$t: no WARN"
	grep -q -- '->alloc retakes si->lock after [0-9]* ms: the unbind has begun' <<<"$log" &&
		pass "$t: the unbind began while ->alloc had si->lock dropped" ||
		fail "$t: the unbind began while ->alloc had si->lock dropped" \
			"$(grep -- '->alloc retakes' <<<"$log" || echo 'no retake logged')"
	# P's longest call: entries asked for, got, slots free, milliseconds.
	sum=$(awk -v P="$P" "$gsp_awk"'
		pid() != P { next }
		/sa_gsp_in:/ { t0 = ts(); n = val("n"); fr = val("free"); next }
		/sa_gsp_out:/ && t0 { lat = (ts() - t0) * 1000; if (lat > ml) { ml = lat; bn = n; br = val("ret"); bf = fr }; t0 = 0 }
		END { if (ml) printf "%d %d %d %.1f\n", bn, br, bf, ml }' /tmp/$t-trace.txt)
	read -r n r fr lat <<<"$sum"
	if [ -z "$n" ]; then
		fail "$t: the overtaken allocation gets its entries" "no get_swap_pages call of pid ${P:-?} traced"
	elif [ "$r" -ge "$n" ]; then
		pass "$t: the overtaken allocation gets its entries ($r of $n, after $lat ms)"
	else
		fail "$t: the overtaken allocation gets its entries" \
			"get_swap_pages returned $r of $n with $fr slots free, after $lat ms"
	fi
	kill -TERM $pid 2>/dev/null
	wait $pid
	# The per-CPU slot caches keep up to 64 slots each of this device
	# now: no Used check here.  swapoff completing below means no slot
	# was left counted in use.
	note "$t: $dev Used $(swaps_col "$dev" 4) KiB after swapfill exited (slot caches)"
	fill_check "$t" "$dev"
	if timeout 60 swapoff "$dev"; then
		pass "$t: swapoff $dev completes"
	else
		fail "$t: swapoff $dev completes" "swapoff did not finish in 60 s"
	fi
}
unbind_in_alloc

# free_in_unbind: slots freed during a device's second unbind, after
# SWAP_ALLOC_UNBINDING is set and before the rebuild has reached their
# cluster, must be left to swap_map.  Until 8993964, si->alloc_rebuilt still
# held the count of the first unbind there, so such a free went to builtin
# cluster counts stale since then (a kernel BUG in dec_cluster_info_page()
# at 60-stress's rmmod churn).  The first load binds and unbinds (every
# cluster rebuilt).  In the second, A pages out 4M through the module;
# hold=1 makes B's next allocation sleep in ->alloc with si->lock dropped;
# rmmod begins the unbind, which waits for B; A exits, freeing its slots in
# that window; hold=0 lets the unbind go on.
free_in_unbind() {
	local t=free_in_unbind dev mark log a b rm rc i used fr par
	prio=$((prio + 1))
	dev=$(swapon_disk h9) || { fail "$t: swapon h9"; return; }
	mark="sa-helpers-suite: begin $t"
	echo "$mark" > /dev/kmsg
	if ! { insmod "$ko" dev="${dev##*/}" test=bind && rmmod sa_helpers_test; } 2>/tmp/insmod.err; then
		fail "$t: a first bind and unbind" "$(</tmp/insmod.err)"
		return
	fi
	if ! insmod "$ko" dev="${dev##*/}" test=$t 2>/tmp/insmod.err; then
		fail "$t: insmod" "$(</tmp/insmod.err)"
		return
	fi
	par=/sys/module/sa_helpers_test/parameters/hold
	"$fill" -s 4M -H > /tmp/fillA.log 2>&1 &
	a=$!
	wait_line /tmp/fillA.log 'swapfill: holding' $a || true
	used=$(swaps_col "$dev" 4)
	[ "${used:-0}" -ge 3072 ] && pass "$t: A holds $used KiB of $dev, allocated by the module" ||
		fail "$t: A holds 3072 KiB or more of $dev" "Used ${used:-?} KiB: $(tail -n 2 /tmp/fillA.log)"
	echo 1 > $par
	"$fill" -s 1M -H > /tmp/fillB.log 2>&1 &
	b=$!
	for ((i = 0; i < 120; i++)); do
		log_since "$mark" | grep -q -- '->alloc of pid [0-9]* drops si->lock' && break
		sleep 0.5
	done
	rmmod sa_helpers_test &
	rm=$!
	for ((i = 0; i < 120; i++)); do
		log_since "$mark" | grep -q 'the unbind has begun; ->alloc keeps si->lock dropped' && break
		sleep 0.5
	done
	kill -TERM $a 2>/dev/null
	wait $a
	echo 0 > $par
	rc=0
	wait $rm || rc=$?
	[ $rc -eq 0 ] && pass "$t: rmmod" || fail "$t: rmmod" "exit $rc"
	log=$(log_since "$mark")
	grep -E 'sa_helpers_test|swap' <<<"$log" | sed 's/^/# /'
	grep -qE 'WARNING:|Call Trace:|BUG:' <<<"$log" &&
		fail "$t: no WARN or BUG" "$(grep -m1 -E 'WARNING:|BUG:' <<<"$log")" ||
		pass "$t: no WARN or BUG"
	fr=$(sed -n 's/.*->alloc retakes si->lock after [0-9]* ms: the unbind has begun (\([0-9]*\) slots freed while unbinding).*/\1/p' <<<"$log")
	if [ "${fr:-0}" -gt 0 ]; then
		pass "$t: A's slots freed while the unbind waited ($fr slots)"
	else
		fail "$t: A's slots freed while the unbind waited" \
			"$(grep -- '->alloc retakes' <<<"$log" || echo 'no stall logged')"
	fi
	kill -TERM $b 2>/dev/null
	wait $b
	note "$t: B: $(grep '^swapfill: swapped' /tmp/fillB.log)"
	fill_check "$t" "$dev"
	if timeout 60 swapoff "$dev"; then
		pass "$t: swapoff $dev completes"
	else
		fail "$t: swapoff $dev completes" "swapoff did not finish in 60 s"
	fi
}
free_in_unbind
# A disk whose swapoff failed above holds a slot counted in use that no
# page holds: swapoff_all in finish would retry forever.  Leave it on.
left=$(awk 'NR > 1 { print $1 }' /proc/swaps)
for d in $left; do
	timeout 30 swapoff "$d" || { note "$d left swapped on"; _guest_failed=1; }
done
[ "$_guest_failed" = 0 ] || exit 1
finish
