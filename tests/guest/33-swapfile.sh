#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Swap files on ext4 (a virtio disk, non-rotational), bound to swapalloc.
#
#  - A file made with fallocate, swapped on before insmod and named in
#    devices= by its path with '/' written as '!'; a file made with dd and
#    named with '/', swapped on after insmod: both bound (owner swapalloc,
#    policy auto, per-CPU cursors, media ssd: its disk's), each with its
#    debugfs directory; a third file, not
#    named, stays builtin (its policy file says [builtin], devices says
#    owner and policy builtin, placement -).
#  - 6.12 gives swap files order-0 entries only: 64K mTHP folios fall back
#    to 4K pages (kernel swpout_fallback grows, swpout does not, swapalloc
#    sees no order-4 request), none fails, and every page reads back right
#    (swapverify in a memory cgroup, so data comes back from the file).
#  - `check` ok on each file; every swapoff succeeds.
#  - With devices= empty: a file swapped on after insmod with a space in
#    its name and one whose path is too long for a name: bound, named
#    sanely (no '/', no space: '?', swap<type>), the devices table keeps
#    its columns; data held on a bound file across rmmod reads back right.
#  - A swap file's media is its disk's: zram for a file on ext4 on zram.
#
# vm: --mem 1G --disk fs0:448M --timeout 600
. "$(dirname "$0")/../lib/guest.sh"

verify=$(tool swapverify) || { fail "infrastructure: swapverify built"; finish; }
fill=$(tool swapfill) || { fail "infrastructure: swapfill built"; finish; }
require_cmd mkfs.ext4 fallocate
ko=$SWAPALLOC_TOP/swapalloc.ko
dbg=/sys/kernel/debug/swapalloc
ctl=/sys/kernel/swapalloc
stats=/sys/kernel/mm/transparent_hugepage/hugepages-64kB/stats
mnt=/mnt/sf
# Per process and run: make check 48M (24M on the second file), make
# stress 256M (128M).
if [ "${SWAPALLOC_STRESS:-0}" = 1 ]; then vol=256M vol2=128M; else vol=48M vol2=24M; fi

cg=$(memcg swapfile 64M)

# in_cg CMD...: run CMD in the memory cgroup.
in_cg() { "${in_memcg[@]}" "$cg" "$@"; }

# verify_run NAME FOLIO SIZE: swapverify, 2 processes of SIZE, in the cgroup.
verify_run() {
	local name=$1 out
	if out=$(in_cg "$verify" -s "$3" -c 16M -f "$2" -p 2 -q 2>&1); then
		pass "$name ($(tail -n 1 <<<"$out" | sed 's/^swapverify: //'))"
	else
		sed 's/^/# /' <<<"$out" | tail -n 10
		fail "$name" "$(tail -n 1 <<<"$out")"
	fi
}

# row NAME [COL]: NAME's row of the devices table, or its column COL.
row() {
	awk -v d="$1" -v c="${2:-}" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$col["name"] == d { print c == "" ? $0 : $col[c] }' "$dbg/devices"
}

# alloc_col NAME ORDER COL: column COL of the order-ORDER row of NAME's alloc table.
alloc_col() {
	awk -v o="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == o { print $col[c] }' "$dbg/$1/alloc"
}

# bound NAME LABEL: NAME is owned by swapalloc, policy auto, per-CPU
# cursors, with its directory; its media is its disk's, ssd.
bound() {
	local name=$1 label=$2
	if [ "$(row "$name" owner)" = swapalloc ] && [ "$(row "$name" policy)" = auto ] &&
	   [ "$(row "$name" cursors)" = percpu ] && [ "$(row "$name" media)" = ssd ] &&
	   [ -e "$ctl/$name/check" ]; then
		pass "$label: bound as $name (auto, per-CPU, $dbg/$name)"
	else
		fail "$label: bound as $name" "row '$(row "$name")'; $(ls "$dbg" | tr '\n' ' ')"
	fi
}

check_ok() {
	local res
	res=$(sa_check "$1")
	[ "$res" = ok ] && pass "$2: invariants" || fail "$2: invariants" "$res"
}

# sane_table: every row of devices has as many columns as the header,
# every swapalloc row has a directory of its name, no name has a '/'.
sane_table() {
	local bad name
	bad=$(awk 'NR == 1 { n = NF; next } NF != n || $1 ~ /\// { print }' "$dbg/devices")
	# (no process substitution: the guest has no /dev/fd)
	while read -r name; do
		[ -z "$name" ] || [ -d "$dbg/$name" ] || bad+=" no dir for $name;"
	done <<<"$(awk 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["owner"] == "swapalloc" { print $c["name"] }' "$dbg/devices")"
	[ -z "$bad" ] && pass "$1: devices table well-formed, a directory per bound file" ||
		fail "$1: devices table well-formed" "$bad: $(cat "$dbg/devices" | tr '\n' '|')"
}

# mkswapfile PATH SIZE_MB fallocate|dd
mkswapfile() {
	if [ "$3" = dd ]; then
		dd if=/dev/zero of="$1" bs=1M count="$2" status=none || return 1
	else
		fallocate -l "${2}M" "$1" || return 1
	fi
	chmod 600 "$1" && mkswap "$1" > /dev/null
}

mthp_enable 64 || fail "infrastructure: 64K mTHP enabled" "no hugepages-64kB"
disk=$(find_disk fs0) || { fail "infrastructure: find_disk fs0"; finish; }
must set_rotational "$disk" 0 || finish
must mkfs.ext4 -q -F "$disk" || finish
mkdir -p "$mnt"
must mount -t ext4 "$disk" "$mnt" || finish
f1=$mnt/swap1 f2=$mnt/swap2 f3=$mnt/swap3
n1='!mnt!sf!swap1' n2='!mnt!sf!swap2' n3='!mnt!sf!swap3'
must mkswapfile "$f1" 160 fallocate || finish
must mkswapfile "$f2" 128 dd || finish
must mkswapfile "$f3" 32 fallocate || finish

# --- devices= names a file swapped on before insmod and one swapped on after.
must swapon "$f1" || finish
n0=$(dmesg | wc -l)
must insmod "$ko" "devices=$n1,$mnt/swap2" || finish
p=$(</sys/module/swapalloc/parameters/devices)
[ "$p" = "$n1,$n2" ] && pass "devices=: '/' in a file's path is read as '!' ($p)" ||
	fail "devices=: '/' in a file's path is read as '!'" "parameter reads '$p'"
log=$(dmesg | tail -n +$((n0 + 1)))
grep -q "devices=: no active swap device $n2; it is bound when swapped on" <<<"$log" &&
	! grep -q "no active swap device $n1" <<<"$log" &&
	pass "the kernel log names the file not swapped on yet, not the other" ||
	fail "the kernel log names the file not swapped on yet" "$(tr '\n' '|' <<<"$log")"
bound "$n1" "file swapped on before insmod, named with '!'"
sane_table "after insmod"

# --- 4K and 64K folios on a file: order 0 only, verified.
out0=$(<$stats/swpout) fb0=$(<$stats/swpout_fallback)
req0=$(alloc_col "$n1" 4 requests) ok0=$(alloc_col "$n1" 0 success)
verify_run "4K folios on a bound swap file" 4k $vol
verify_run "64K folios on a bound swap file" 64k $vol
out=$(( $(<$stats/swpout) - out0 )) fb=$(( $(<$stats/swpout_fallback) - fb0 ))
req=$(( $(alloc_col "$n1" 4 requests) - req0 )) ok=$(( $(alloc_col "$n1" 0 success) - ok0 ))
note "swap file: 64K swpout +$out swpout_fallback +$fb; swapalloc order-4 requests +$req, order-0 successes +$ok"
if [ "$fb" -gt 0 ] && [ "$out" -eq 0 ] && [ "$req" -eq 0 ] && [ "$ok" -gt 0 ]; then
	pass "swap file: 64K folios fall back to order 0 (6.12), no order-4 request reaches swapalloc"
else
	fail "swap file: 64K folios fall back to order 0" \
		"swpout +$out fallback +$fb, order-4 requests +$req, order-0 successes +$ok"
fi
check_ok "$n1" "file $n1"

must swapon "$f2"
bound "$n2" "file made with dd, named with '/', swapped on after insmod"
must swapon "$f3"
# It has a directory all the same, whose policy file can take it.
[ "$(row "$n3" owner)" = builtin ] && [ "$(row "$n3" policy)" = builtin ] &&
	[ "$(row "$n3" cursors)" = percpu ] && [ "$(row "$n3" placement)" = - ] &&
	grep -qs '\[builtin\]' "$ctl/$n3/policy" &&
	pass "a file devices= does not name stays builtin" ||
	fail "a file devices= does not name stays builtin" "row '$(row "$n3")'"
if [ "$(row "$n1" owner)" != swapalloc ]; then
	fail "swapoff of a bound file removes its row and directory" "$n1 was not bound before its swapoff"
	must swapoff "$f1" || true
elif must swapoff "$f1"; then
	[ -z "$(row "$n1")" ] && [ ! -e "$dbg/$n1" ] &&
		pass "swapoff of a bound file removes its row and directory" ||
		fail "swapoff of a bound file removes its row and directory" "row '$(row "$n1")'"
fi
verify_run "4K folios on the file swapped on after insmod" 4k $vol2
check_ok "$n2" "file $n2"
must swapoff "$f2" && pass "swapoff of $n2"
must swapoff "$f3" && pass "swapoff of $n3"
must rmmod swapalloc

# --- devices= empty: odd names, data held across rmmod.
f4="$mnt/my swap"
f5=$mnt/$(printf 'l%.0s' $(seq 60))
must mkswapfile "$f4" 16 fallocate
must mkswapfile "$f5" 16 fallocate
must swapon "$f1" || finish
must insmod "$ko" || finish
bound "$n1" "all devices: file swapped on before insmod"
must swapon "$f4" && bound '!mnt!sf!my?swap' "a space in the path is written as '?'"
if must swapon "$f5"; then
	t=$(awk 'NR > 1 && $1 ~ /^swap[0-9]+$/ { print $1 }' "$dbg/devices")
	[ -n "$t" ] && bound "$t" "a path over 63 characters is named swap<type>" ||
		fail "a path over 63 characters is named swap<type>" "$(cat "$dbg/devices" | tr '\n' '|')"
fi
sane_table "odd names"
for f in "$f4" "$f5"; do must swapoff "$f"; done
sane_table "after their swapoff"

# --- a swap file's media is its disk's: zram for a file on ext4 on zram.
zmnt=/mnt/zf zn='!mnt!zf!swap'
if zdev=$(setup_zram 64M) && must swapoff "$zdev" && must mkfs.ext4 -q -F "$zdev" &&
   mkdir -p "$zmnt" && must mount -t ext4 "$zdev" "$zmnt" &&
   must mkswapfile "$zmnt/swap" 16 fallocate && must swapon "$zmnt/swap"; then
	[ "$(row "$zn" media)" = zram ] && [ "$(row "$zn" owner)" = swapalloc ] &&
		[ "$(row "$zn" cursors)" = percpu ] &&
		pass "a swap file on ext4 on zram: media zram, its disk's" ||
		fail "a swap file on ext4 on zram: media zram, its disk's" "row '$(row "$zn")'"
	must swapoff "$zmnt/swap"
	umount "$zmnt"
else
	fail "a swap file on ext4 on zram" "setup_zram, mkfs, mount or swapon failed"
fi

# Not through in_cg: $! must be swapfill's pid (sh execs it), not a subshell's.
"${in_memcg[@]}" "$cg" "$fill" -s 48M -H -V > /tmp/fill.log 2>&1 &
holder=$!
for _ in $(seq 120); do grep -q holding /tmp/fill.log && break; sleep 0.5; done
used=$(awk -v f="$f1" '$1 == f { print $4 }' /proc/swaps)
note "holder: $(head -n 1 /tmp/fill.log); $f1 uses ${used:-?} KiB"
[ "${used:-0}" -gt 0 ] || fail "data held on $n1" "$(</tmp/fill.log) /proc/swaps: $(cat /proc/swaps | tr '\n' '|')"
check_ok "$n1" "file with data held"
must rmmod swapalloc && pass "rmmod with data on a bound file"
kill -TERM $holder
if wait_bounded 120 $holder; then
	pass "data held across rmmod reads back right ($(tail -n 1 /tmp/fill.log))"
else
	fail "data held across rmmod reads back right" "$(tail -n 1 /tmp/fill.log)"
fi
must swapoff "$f1" && pass "swapoff of $f1 after rmmod"
umount "$mnt"
finish
