#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# No slot handed out twice, none lost: per-page patterns written, pushed to
# swap with MADV_PAGEOUT as 4K and as 64K folios, read back and verified,
# with swapalloc on zram, a non-rotational
# and a rotational virtio disk (make stress also with the builtin allocator on
# zram, the checker's baseline); after each scenario swapalloc's invariant
# check, and its per-order counters against the kernel's mTHP counters.
# make check moves 64M per process and scenario (256M per device, in a
# 96M memory cgroup); make stress (SWAPALLOC_STRESS=1) 512M (2 GiB per
# device, 256M cgroup).
#
# vm: --mem 1G --disk ssd0:640M --disk rot0:640M --timeout 1800
. "$(dirname "$0")/../lib/guest.sh"

verify=$(tool swapverify) || exit 1
stats=/sys/kernel/mm/transparent_hugepage/hugepages-64kB/stats
dbg=/sys/kernel/debug/swapalloc
ctl=/sys/kernel/swapalloc

# The workload runs in a memory cgroup smaller than what it touches, so that
# swap-cache folios are really reclaimed and data comes back from the device,
# not from the swap cache, on the disks too.
# Half of what the two processes of one run touch (make stress); three
# quarters in make check: with half (64M) the suite took 172 s, as long as
# with twice the volume; with 96M, 127 s (TCG).
if [ "${SWAPALLOC_STRESS:-0}" = 1 ]; then
	cg=$(memcg swapverify 256M)
else
	cg=$(memcg swapverify 96M)
fi

# run NAME FOLIO SIZE_PER_PROC: two processes, SIZE each, in the cgroup.
# run NAME FOLIO SIZE [swapverify options]
run() {
	local name=$1 folio=$2 size=$3 out t0=$SECONDS
	shift 3
	if out=$("${in_memcg[@]}" "$cg" "$verify" -s "$size" -f "$folio" -p 2 -q "$@" 2>&1); then
		note "$name: $(echo "$out" | tail -n 1) ($((SECONDS - t0)) s)"
		pass "$name"
	else
		echo "$out" | tail -n 20 | sed 's/^/# /'
		fail "$name" "$(echo "$out" | tail -n 1)"
	fi
}

check_invariants() {
	local name=$1 dev=$2 res
	res=$(sa_check "$dev")
	if [ "$res" = ok ]; then
		pass "$name: invariants"
	else
		fail "$name: invariants" "$res"
	fi
}

# Column COL of the order-ORDER row of a device's alloc table.
alloc_col() {
	awk -v o="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == o { print $col[c] }' "$dbg/$1/alloc"
}

# occupancy_sums DEV: "<clusters on all lists> <total>": the clusters
# column of DEV's clusters table and DEV's clusters column in devices.
occupancy_sums() {
	local n t
	n=$(awk 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		{ n += $col["clusters"] } END { print n + 0 }' "$dbg/$1/clusters")
	t=$(awk -v d="$1" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$col["name"] == d { print $col["clusters"] }' "$dbg/devices")
	echo "$n ${t:-none}"
}

# bound_as NAME MEDIA CURSORS: NAME's row in devices has that media, owner
# swapalloc, policy auto (the default) and those cursors.
bound_as() {
	awk -v d="$1" -v m="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$col["name"] == d && $col["media"] == m && $col["owner"] == "swapalloc" &&
		$col["policy"] == "auto" && $col["cursors"] == c { ok = 1 } END { exit !ok }' "$dbg/devices"
}

# scenario NAME DEV SIZE [FOLIOS]: 4K then 64K (or only the folio sizes
# FOLIOS names, e.g. "64k") on DEV with swapalloc bound.
scenario() {
	local name=$1 dev=$2 size=$3 folios=${4:-4k 64k} out0 fb0 ok0 fail0 out fb ok fl f
	out0=$(<$stats/swpout); fb0=$(<$stats/swpout_fallback)
	ok0=$(alloc_col "$dev" 4 success); fail0=$(alloc_col "$dev" 4 fail)
	for f in $folios; do
		run "$name: ${f^^} folios" "$f" "$size"
	done
	check_invariants "$name" "$dev"
	local sums
	sums=$(occupancy_sums "$dev")
	[ "${sums% *}" = "${sums#* }" ] && pass "$name: cluster occupancy sums to the cluster count" ||
		fail "$name: cluster occupancy sums to the cluster count" "lists $sums total"
	out=$(( $(<$stats/swpout) - out0 )); fb=$(( $(<$stats/swpout_fallback) - fb0 ))
	ok=$(( $(alloc_col "$dev" 4 success) - ok0 )); fl=$(( $(alloc_col "$dev" 4 fail) - fail0 ))
	note "$name: 64K swpout +$out fallback +$fb; swapalloc order-4 success +$ok fail +$fl"
	# The kernel counts writes, swapalloc counts allocations.  On zram
	# every swap-out needs a new entry (swap-in frees it), so they agree,
	# except that an entry allocated for a folio reclaim then keeps (the
	# unmap raced with a fault, or the folio is zero-filled, which 6.12
	# records in the zeromap without counting a swpout) is never written:
	# success may exceed swpout by a few (seen: 1 in 42035; 7 in 5342 in
	# an earlier make check, where swapverify's MADV_DONTNEED churn
	# raced reclaim: 0.13 %, so up to 0.5 % + 2 is allowed).  On a disk a
	# folio still in the swap cache is written again to the entry it has,
	# so swpout may also exceed success there.  Failures must match.
	local slack=$(( ok / 200 + 2 ))
	if [ "$fb" -eq "$fl" ] && [ "$ok" -gt 0 ] && [ "$out" -ge $(( ok - slack )) ] &&
	   { [ "$out" -le "$ok" ] || [ "$dev" != zram0 ]; }; then
		pass "$name: order-4 counters match swpout and swpout_fallback"
	else
		fail "$name: order-4 counters match swpout and swpout_fallback" \
			"swpout +$out vs success +$ok (slack $slack), swpout_fallback +$fb vs fail +$fl"
	fi
	if [ "$fb" -eq 0 ]; then
		pass "$name: no 64K fallback"
	else
		fail "$name: no 64K fallback" "$fb of $((out + fb)) 64K folios fell back"
	fi
}

mthp_enable 64 || fail "infrastructure: 64K mTHP enabled" "no hugepages-64kB"
# make check leaves out 4K folios on the non-rotational disk: there they
# take the same per-CPU order-0 path as on zram (make stress runs both).
if [ "${SWAPALLOC_STRESS:-0}" = 1 ]; then
	size=512M base=256M ssd_folios="4k 64k"
else
	size=64M base=32M ssd_folios=64k
fi

# The builtin allocator, as a baseline for the checker itself: 1 GiB
# through zram, make stress only (it tests no swapalloc code).
zram=$(setup_zram 640M) || { fail "setup_zram 640M"; finish; }
if [ "${SWAPALLOC_STRESS:-0}" = 1 ]; then
	run "builtin zram: 4K folios" 4k $base
	run "builtin zram: 64K folios" 64k $base
fi
must swapoff "$zram"

must insmod "$SWAPALLOC_TOP/swapalloc.ko" || finish

must swapon "$zram"
bound_as zram0 zram percpu && pass "zram bound, auto: per-CPU cursors" ||
	fail "zram bound, auto: per-CPU cursors" "$(tr '\n' '|' < $dbg/devices)"
scenario "swapalloc zram" zram0 $size
must swapoff "$zram"

ssd=$(find_disk ssd0) || fail "find_disk ssd0"
must set_rotational "$ssd" 0
must mkswap "$ssd" >/dev/null && must swapon "$ssd"
scenario "swapalloc ssd virtio" "${ssd##*/}" $size "$ssd_folios"

# antifrag keeps the slot of a 4K page swapped in out of a live 64K block
# (patch 0011, swapalloc_keep_cache()): the page is mapped from the swap
# cache and written back to that slot at its next swap-out, with no new
# allocation.  The kernel asks only where it would free the slot: here,
# rewrites of swapped-out pages (swapverify -w), write faults that map
# the page writable.
place_col() {
	awk -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		{ print $col[c] }' "$dbg/$1/place"
}
d=${ssd##*/}
if echo antifrag > "$ctl/$d/policy" && grep -q '\[antifrag\]' "$ctl/$d/policy"; then
	pass "ssd virtio: policy antifrag"
	kept0=$(place_col "$d" cache_kept)
	run "swapalloc ssd virtio antifrag: 64K folios" 64k $base -i 3 -w
	kept=$(( $(place_col "$d" cache_kept) - kept0 ))
	# Thousands are kept (6813 in one run): a handful means the question
	# is not asked where the kernel frees.
	[ "$kept" -ge 256 ] && pass "ssd virtio antifrag: slots kept at swap-in ($kept, at least 256)" ||
		fail "ssd virtio antifrag: slots kept at swap-in (at least 256)" "cache_kept +$kept: $(<"$dbg/$d/place")"
	check_invariants "swapalloc ssd virtio antifrag" "$d"
else
	fail "ssd virtio: policy antifrag" "$(<"$ctl/$d/policy")"
fi
must swapoff "$ssd"

rot=$(find_disk rot0) || fail "find_disk rot0"
must set_rotational "$rot" 1
must mkswap "$rot" >/dev/null && must swapon "$rot"
bound_as "${rot##*/}" rotational global &&
	pass "rotational disk bound, auto: global cursors" ||
	fail "rotational disk bound, auto: global cursors" "$(tr '\n' '|' < $dbg/devices)"
scenario "swapalloc rotational virtio" "${rot##*/}" $size
must swapoff "$rot"

rmmod swapalloc && pass "rmmod" || fail "rmmod"
finish
