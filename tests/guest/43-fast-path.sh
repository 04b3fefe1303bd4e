#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# swapalloc's lockless fast path (fast=1, ->alloc_fast() of patch 0013):
# get_swap_pages() asks it before it takes si->lock, inside
# rcu_read_lock(); swapoff and the unbind wait for it with
# synchronize_rcu().
#
# fast=: a bad value is refused (insmod fails, nothing loaded); fast=0
# turns it off (parameter N, `fast` table says no), and the disk's data
# still reads back through the locked path.
#
# data: with the default (fast on: parameter Y) on a zram device and a
# non-rotational disk (the SSD case), swapverify runs in a 64M memory
# cgroup on each in turn (the other swapped off); its data reads back,
# the fast path handed out entries (`fast` table), sa_check is ok.
#
# revocation: an 8M zram device, a 4K and a 64K swapverify on CPU 0 and
# CPU 1 keeping more swapped out than it holds: a CPU that finds nothing
# free takes back the clusters the other owns (`fast` table: revoked);
# the data reads back, sa_check ok (seen failing: a revocation that left
# the owner in place; none at all).
#
# clean before free: tests/kmod/sa_free_probe.ko counts the slots
# swapalloc's ->free() hears of while their zeromap bit is still set,
# for swapfill -z's zero-filled pages freed at its exit (4K pages, read
# back first, so that their slots are freed one by one through the swap
# slot cache; then, with the fast path, 64K folios left swapped out,
# freed a folio at a time with the page tables).  Their swap_map
# bytes are 0 by then: without a fast path si->lock keeps them from the
# allocators until the free has cleaned them, as in 6.12 (the probe sees
# the bits still set, which shows it can); with the fast path they can be
# taken at once, so the kernel cleans them first (none set).
#
# swapoff under a writer: both devices on at one priority, swapverify in
# a loop, the disk swapped off and on FAST_SWAPOFF_ROUNDS times (1; make
# stress 6) while it writes; every swapoff completes, every run verifies,
# sa_check ok.
#
# held fast path: tests/kmod/sa_fast_hold.ko holds one fast allocation
# on the disk at the return of swapalloc_alloc_fast(), slots committed
# but not accounted, until swapoff (then, second case, a policy switch to
# builtin: the unbind) has begun, and then 4 s more, watching whether the
# other side gets past try_to_unuse() or the rebuild meanwhile.  It must
# not: both wait for the fast path with synchronize_rcu().  The writer
# runs on CPU 0, swapoff and the switch on CPU 1; it is small for the
# swapoff (16M runs of 64K folios paged out by MADV_PAGEOUT), so that
# try_to_unuse() would be over within the 4 s if swapoff did not wait,
# and the allocation held there is a 64K one: an order-0 one is a slot
# cache refill, under the mutex that swapoff's drain of the slot caches
# takes before try_to_unuse(), so it would hide a swapoff that does not
# wait for the fast path.
#
# held free: the same module with free=1 holds a free of the disk without
# si->lock (patch 0017) in swap_range_clean(), where it has seen the device
# bound and not yet cleared the map nor called ->free_fast(), across an
# unbind: the unbind must wait for it with synchronize_rcu() before it
# rebuilds the builtin state and frees the module's.
#
# The holds of swapoff and the unbind run again with the disk's policy
# antifrag (the antifrag placement on the fast path).
#
# rmmod under the writer: the module goes with the writer running on the
# zram device; the writer's data still reads back.
#
# Any WARN, lockdep report or other kernel error fails the run (vm-run.sh
# scans the console).
#
# vm: --mem 1G --smp 2 --disk fast0:192M --timeout 900

# The hold busy-waits on CPU 0: everything here runs on CPU 1 but the writer.
if [ -z "${FAST_PINNED:-}" ]; then
	FAST_PINNED=1 exec taskset -c 1 "$0" "$@"
fi
. "$(dirname "$0")/../lib/guest.sh"

verify=$(tool swapverify) || { fail "swapverify built"; finish; }
ko=$SWAPALLOC_TOP/swapalloc.ko
fill=$(tool swapfill) || { fail "swapfill built"; finish; }
hold=$SWAPALLOC_TOP/tests/kmod/sa_fast_hold.ko
fprobe=$SWAPALLOC_TOP/tests/kmod/sa_free_probe.ko
for k in "$hold" "$fprobe"; do
	[ -f "$k" ] || { fail "${k##*/} built" "no $k (tests/run builds tests/kmod)"; finish; }
done
prm=/sys/module/sa_fast_hold/parameters
# make check swaps the disk off and on once under the writer, make stress
# (SWAPALLOC_STRESS=1) six times.
rounds=1
[ "${SWAPALLOC_STRESS:-0}" != 1 ] || rounds=6
rounds=${FAST_SWAPOFF_ROUNDS:-$rounds}

swapoff_all
D=$(find_disk fast0) && set_rotational "$D" 0 && mkswap "$D" >/dev/null ||
	{ fail "disk fast0"; finish; }
Z=$(setup_zram 192M) || { fail "zram"; finish; }
swapoff "$Z"
dn=${D##*/} zn=${Z##*/}
cg=$(memcg fastpath 64M)

# fast_col DEV COL: column COL of DEV's `fast` table.
fast_col() { sa_col "$SA_DBG/$1/fast" '' "$2"; }

check_dev() {
	local name=$1 r
	r=$(sa_check "$2")
	[ "$r" = ok ] && pass "$name: sa_check $2" || fail "$name: sa_check $2" "$r"
}

# verify_run NAME SIZE: one swapverify run in the cgroup, on CPU 0.
verify_run() {
	local out
	if out=$("${in_memcg[@]}" "$cg" taskset -c 0 "$verify" -q -s "$2" -c 32M -p 2 -i 2 2>&1); then
		note "$1: $(echo "$out" | tail -n 1)"
		pass "$1: data reads back"
	else
		echo "$out" | tail -n 20 | sed 's/^/# /'
		fail "$1: data reads back" "$(echo "$out" | tail -n 1)"
	fi
}

# writer_start [small] / writer_stop NAME: swapverify in a loop on CPU 0,
# in the cgroup; small: 16M runs of 64K folios outside it, paged out by
# MADV_PAGEOUT alone, so that swapoff has little to bring back.
writer_start() {
	rm -f /tmp/stop /tmp/writer.log /tmp/writer.runs
	if [ "${1:-}" = small ]; then
		repeat_until_stop /tmp/writer.log /tmp/writer.runs \
			taskset -c 0 "$verify" -q -s 16M -c 4M -f 64k -i 1 &
	else
		repeat_until_stop /tmp/writer.log /tmp/writer.runs \
			"${in_memcg[@]}" "$cg" taskset -c 0 "$verify" -q -s 96M -c 32M -i 1 &
	fi
	wpid=$!
}
writer_stop() {
	local rc=0 runs bad
	touch /tmp/stop
	wait_bounded 300 "$wpid" || rc=$?
	runs=$(wc -l < /tmp/writer.runs 2>/dev/null || echo 0)
	bad=$(grep -vc ' exit 0$' /tmp/writer.runs 2>/dev/null || true)
	if [ $rc = 0 ] && [ "$runs" -gt 0 ] && [ "${bad:-0}" = 0 ]; then
		pass "$1: every writer run verifies ($runs runs)"
	else
		tail -n 20 /tmp/writer.log | sed 's/^/# /'
		fail "$1: every writer run verifies" "$runs runs, ${bad:-?} failed, wait rc $rc"
	fi
}

# free_probe DEV [ARGS]: swapfill -z's pages on DEV (ARGS: more swapfill
# options), freed at its exit, counted by sa_free_probe.ko; prints
# "FREES UNCLEAN LARGE FAST" (LARGE: slots freed in ranges of more than
# one; FAST: freed through ->free_fast(), without si->lock), or fails.
free_probe() {
	local maj min out frees unclean large fast dev=$1
	shift
	IFS=: read -r maj min < "/sys/block/${dev##*/}/dev"
	insmod "$fprobe" major="$maj" minor="$min" || return 1
	out=$(taskset -c 0 "$fill" -z -s 8M "$@" 2>&1) || { echo "$out" >&2; rmmod sa_free_probe; return 1; }
	echo "$out" | sed "s/^/# /" >&2
	read -r frees < /sys/module/sa_free_probe/parameters/frees
	read -r unclean < /sys/module/sa_free_probe/parameters/unclean
	read -r large < /sys/module/sa_free_probe/parameters/large
	read -r fast < /sys/module/sa_free_probe/parameters/fast
	rmmod sa_free_probe || return 1
	echo "$frees $unclean $large $fast"
}

# --- fast=: bad values refused, fast=0 turns it off
if insmod "$ko" fast=maybe 2>/tmp/insmod.err; then
	fail "fast=maybe refused" "insmod succeeded"
	rmmod swapalloc
else
	[ -d /sys/module/swapalloc ] && fail "fast=maybe refused" "module left loaded" ||
		pass "fast=maybe refused ($(tr '\n' ' ' < /tmp/insmod.err))"
fi
swapon "$D" || { fail "swapon $D"; finish; }
must insmod "$ko" fast=0 || finish
p=$(cat /sys/module/swapalloc/parameters/fast)
e=$(fast_col "$dn" enabled)
[ "$p" = N ] && [ "$e" = no ] && pass "fast=0 turns the fast path off" ||
	fail "fast=0 turns the fast path off" "parameter $p, enabled $e"
verify_run "fast off: $dn" 32M
f=$(fast_col "$dn" entries)
[ "${f:-0}" = 0 ] && pass "fast off: $dn handed out nothing without si->lock" ||
	fail "fast off: $dn handed out nothing without si->lock" "entries ${f:-none}"
check_dev "fast off: $dn" "$dn"
if r=$(free_probe "$D"); then
	read -r frees unclean large fast <<< "$r"
	[ "$frees" -gt 0 ] && [ "$unclean" -gt 0 ] &&
		pass "fast off: the probe sees frees cleaned after ($unclean of $frees)" ||
		fail "fast off: the probe sees frees cleaned after" "frees $frees, unclean $unclean"
	[ "$fast" = 0 ] && pass "fast off: every free under si->lock" ||
		fail "fast off: every free under si->lock" "$fast of $frees through ->free_fast()"
else
	fail "fast off: free probe" "see above"
fi
must rmmod swapalloc
swapoff "$D"

# --- data through the fast path, on by default, zram then the disk
must insmod "$ko" || finish
p=$(cat /sys/module/swapalloc/parameters/fast)
[ "$p" = Y ] && pass "fast on by default" || fail "fast on by default" "parameter $p"
for dev in "$Z" "$D"; do
	n=${dev##*/}
	swapon "$dev" || { fail "swapon $dev"; continue; }
	e=$(fast_col "$n" enabled)
	[ "$e" = yes ] && pass "$n: fast path enabled" || fail "$n: fast path enabled" "enabled $e"
	verify_run "$n" 64M
	f=$(fast_col "$n" entries)
	note "$n fast table: $(tail -n 1 "$SA_DBG/$n/fast")"
	[ "${f:-0}" -gt 0 ] && pass "$n: fast path used ($f entries)" ||
		fail "$n: fast path used" "entries ${f:-none}"
	check_dev "$n" "$n"
	swapoff "$dev" || fail "$n: swapoff"
done

# --- revocation: an 8M zram device (a few clusters), a 4K and a 64K
# swapverify, one per CPU, each keeping more swapped out than the device
# holds: a CPU that finds nothing free takes back the clusters the other
# owns (sa_revoke()) and allocates from them under si->lock while the
# owner's fast path has let go of them; what went out reads back.
thp=/sys/kernel/mm/transparent_hugepage
thp_mode() { sed 's/.*\[\(.*\)\].*/\1/' "$thp/hugepages-$1kB/enabled"; }
if S=$(setup_zram 8M); then
	sn=${S##*/}
	m64=$(thp_mode 64)
	mthp_enable 64 || fail "64K mTHP enabled for the revocation"
	taskset -c 0 "$verify" -q -s 8M -c 1M -k 6 -i 2 -f 4k > /tmp/rv0.out 2>&1 &
	p0=$!
	taskset -c 1 "$verify" -q -s 8M -c 1M -k 6 -i 2 -f 64k > /tmp/rv1.out 2>&1 &
	p1=$!
	rc0=0 rc1=0
	wait $p0 || rc0=$?
	wait $p1 || rc1=$?
	note "$sn: $(tail -n 1 /tmp/rv0.out); $(tail -n 1 /tmp/rv1.out)"
	note "$sn fast table: $(tail -n 1 "$SA_DBG/$sn/fast")"
	[ $rc0 = 0 ] && [ $rc1 = 0 ] && pass "$sn: data reads back on a device too small for both" ||
		fail "$sn: data reads back on a device too small for both" "exit $rc0 and $rc1"
	r=$(fast_col "$sn" revoked)
	[ "${r:-0}" -gt 0 ] && pass "$sn: owned clusters taken back ($r)" ||
		fail "$sn: owned clusters taken back" "revoked ${r:-none}"
	check_dev "revocation" "$sn"
	echo "$m64" > "$thp/hugepages-64kB/enabled" || fail "64K mTHP setting restored"
	swapoff "$S" || fail "$sn: swapoff"
else
	fail "an 8M zram device for the revocation"
fi

swapon "$D" || fail "swapon $D for the free probe"
m64=$(thp_mode 64) m2m=$(thp_mode 2048)
for folio in 4K 64K; do
	args=(-V) want=0
	if [ $folio = 64K ]; then
		mthp_enable 64 || fail "64K mTHP enabled for the free probe"
		args=(-T) want=1
	fi
	if r=$(free_probe "$D" "${args[@]}"); then
		read -r frees unclean large fast <<< "$r"
		[ "$fast" = "$frees" ] &&
			pass "$dn: $folio frees without si->lock (all $frees through ->free_fast())" ||
			fail "$dn: $folio frees without si->lock" "$fast of $frees through ->free_fast()"
		# 4K read back: most freed one by one; 64K: most as ranges.
		if [ $want = 1 ]; then ok=$((large * 2 > frees)); else ok=$((large * 2 < frees)); fi
		[ "$frees" -gt 0 ] && [ "$unclean" = 0 ] && [ $ok = 1 ] &&
			pass "$dn: $folio frees cleaned before the fast path can take them ($frees, $large in ranges)" ||
			fail "$dn: $folio frees cleaned before the fast path can take them" "frees $frees, unclean $unclean, in ranges $large"
	else
		fail "$dn: $folio free probe" "see above"
	fi
done
echo "$m64" > "$thp/hugepages-64kB/enabled" && echo "$m2m" > "$thp/hugepages-2048kB/enabled" ||
	fail "mTHP settings restored after the free probe"
swapoff "$D" || fail "$dn: swapoff after the free probe"

# --- swapoff of the disk under a writer
swapon -p 5 "$Z" && swapon -p 5 "$D" || { fail "swapon both"; finish; }
writer_start
swap_used_wait "$D" 16384 60 || fail "writer reaches $dn"
for ((i = 1; i <= rounds; i++)); do
	rc=0
	swapoff "$D" &
	wait_bounded 120 $! || rc=$?
	[ $rc = 0 ] && pass "swapoff under writer $i" || fail "swapoff under writer $i" "rc $rc"
	check_dev "swapoff under writer $i" "$zn"
	swapon -p 5 "$D" || fail "swapon again $i"
	swap_used_wait "$D" 4096 60 || fail "writer reaches $dn again $i"
done
writer_stop "swapoff under writer"
check_dev "swapoff under writer" "$dn"
note "fast tables: $zn $(tail -n 1 "$SA_DBG/$zn/fast"); $dn $(tail -n 1 "$SA_DBG/$dn/fast")"

# --- a fast allocation held open across swapoff, then across an unbind
# The disk first; the writer's pages go to zram once it is off or unbound.
swapoff "$Z" && swapoff "$D" && swapon -p 1 "$Z" && swapon -p 10 "$D" ||
	fail "swapon for the holds"
IFS=: read -r maj min < "/sys/block/$dn/dev"
must insmod "$hold" major="$maj" minor="$min" cpu=0 linger_ms=4000 || finish

# held NAME CMD...: arm the hold, wait for it to begin under the writer,
# run CMD (on this CPU, 1) and check what the hold saw.
held() {
	local name=$1 hits0 op0 ov0 hits rc=0 t0
	shift
	read -r hits0 < "$prm/hits"
	read -r op0 < "$prm/opened"
	read -r ov0 < "$prm/overtaken"
	echo 1 > "$prm/armed"
	for _ in $(seq 600); do
		read -r hits < "$prm/hits"
		[ "$hits" -gt "$hits0" ] && break
		sleep 0.1
	done
	if [ "$hits" -le "$hits0" ]; then
		echo 0 > "$prm/armed"
		fail "$name: held" "no hold began in 60 s"
		return
	fi
	pass "$name: held"
	t0=$SECONDS
	"$@" &
	wait_bounded 120 $! || rc=$?
	[ $rc = 0 ] && pass "$name: completes ($((SECONDS - t0)) s)" || fail "$name: completes" "rc $rc"
	read -r op < "$prm/opened"
	read -r ov < "$prm/overtaken"
	[ "$op" -gt "$op0" ] && pass "$name: the hold saw it begin" ||
		fail "$name: the hold saw it begin" "opened $op0 -> $op"
	[ "$ov" = "$ov0" ] && pass "$name: waited for it" ||
		fail "$name: waited for it" "overtaken $ov0 -> $ov"
}

mthp_enable 64 || fail "64K mTHP enabled"
writer_start small
echo 4 > "$prm/min_order"
held "held swapoff" swapoff "$D"
swapon -p 10 "$D" || fail "swapon after held swapoff"
echo 0 > "$prm/min_order"
held "held unbind" sa_policy "$dn" builtin
writer_stop "held fast path"
dmesg | grep 'sa_fast_hold: held' | sed 's/^/# /'
must rmmod sa_fast_hold
sa_policy "$dn" percpu || fail "back to percpu"
check_dev "after the holds" "$dn"

# --- a free without si->lock held open across an unbind: it has seen the
# device bound and not yet cleared the map nor called ->free_fast()
must insmod "$hold" major="$maj" minor="$min" cpu=0 linger_ms=4000 free=1 || finish
writer_start small
held "held free" sa_policy "$dn" builtin
writer_stop "held free"
dmesg | grep 'sa_fast_hold: held a free' | sed 's/^/# /'
must rmmod sa_fast_hold
sa_policy "$dn" percpu || fail "back to percpu after the held free"
check_dev "after the held free" "$dn"

# --- the holds again with the antifrag placement on the fast path (its
# allocations take a cluster's worth of room under si->lock, the rest
# without it); a swapon binds the disk with the module's defaults, so the
# policy is set again before the unbind
sa_policy "$dn" antifrag && [ "$(fast_col "$dn" enabled)" = yes ] &&
	pass "$dn: antifrag on the fast path" ||
	fail "$dn: antifrag on the fast path" "policy or fast table: $(tail -n 1 "$SA_DBG/$dn/fast")"
must insmod "$hold" major="$maj" minor="$min" cpu=0 linger_ms=4000 || finish
writer_start small
echo 4 > "$prm/min_order"
held "antifrag: held swapoff" swapoff "$D"
swapon -p 10 "$D" && sa_policy "$dn" antifrag || fail "antifrag again after held swapoff"
echo 0 > "$prm/min_order"
held "antifrag: held unbind" sa_policy "$dn" builtin
writer_stop "antifrag: held fast path"
must rmmod sa_fast_hold
sa_policy "$dn" percpu || fail "back to percpu after the antifrag holds"
check_dev "after the antifrag holds" "$dn"

# --- rmmod under the writer (on zram, still on from the holds)
swapoff "$D" || fail "swapoff $D before rmmod"
writer_start
swap_used_wait "$Z" 16384 60 || fail "writer reaches $zn"
rc=0
rmmod swapalloc &
wait_bounded 120 $! || rc=$?
[ $rc = 0 ] && pass "rmmod under writer" || fail "rmmod under writer" "rc $rc"
sleep 3
writer_stop "rmmod under writer"
finish
