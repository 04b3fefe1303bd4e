#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Per-device control at run time: /sys/kernel/swapalloc/<dev>/policy
# (sysfs; debugfs has the statistics) on zram, a non-rotational and a rotational virtio disk, all
# swapped on at the same priority, so that two swapverify workers (4K and
# 64K folios, in a memory cgroup) swap to all three throughout.
#
#  - the debugfs tables speak README's one vocabulary: media zram for
#    zram, ssd and rotational for the disks, policy a choice's name,
#    words for flags, "-" for none (vocab below)
#  - bad names (unknown, case, junk after the name, spaces, a NUL, empty,
#    overlong) are EINVAL with nothing changed; the active name is a no-op
#  - POLICY_ROUNDS rounds (1; 8 with SWAPALLOC_STRESS=1) switch every
#    device through builtin -> auto -> antifrag -> global or percpu (the
#    one auto does not pick); after each write the file reads back what
#    was written, the devices table agrees (policy the choice's name,
#    owner, media, cursors and placement what the choice and media make
#    them), the
#    kernel logged the release and bind the switch needs, and sa_check is
#    ok on every device swapalloc owns
#  - three writers on two files (two on the same one) for POLICY_RACE_SECS
#    (3 s; 60 s with SWAPALLOC_STRESS=1)
#  - a policy write loop on a held descriptor racing swapoff of its device
#    and a write loop racing rmmod, with another policy descriptor held
#    open (sysfs files do not hold the module: rmmod works, the held
#    descriptor then fails): nothing hangs, the kernel log stays clean
#    (tests/run)
#  - a released device's directories stay while it swaps and go at its
#    swapoff; the module parameters are the defaults at swapon and insmod
#  - every worker run verified its data
#
# vm: --mem 1G --disk ssd0:128M --disk rot0:128M --timeout 600
# stress-vm: --timeout 1200
. "$(dirname "$0")/../lib/guest.sh"

verify=$(tool swapverify) || { fail "swapverify built"; finish; }
ko=$SWAPALLOC_TOP/swapalloc.ko
dbg=/sys/kernel/debug/swapalloc
ctl=/sys/kernel/swapalloc
if [ "${SWAPALLOC_STRESS:-0}" = 1 ]; then
	rounds=${POLICY_ROUNDS:-8} race_secs=${POLICY_RACE_SECS:-60}
else
	rounds=${POLICY_ROUNDS:-1} race_secs=${POLICY_RACE_SECS:-3}
fi
choices="builtin auto percpu global antifrag"

mthp_enable 64 || fail "infrastructure: 64K mTHP enabled" "no hugepages-64kB"
zdev=$(setup_zram 128M -p 5) || { fail "setup_zram"; finish; }
sdev=$(find_disk ssd0) && rdev=$(find_disk rot0) || { fail "disks"; finish; }
set_rotational "$sdev" 0 && set_rotational "$rdev" 1 || { fail "set_rotational"; finish; }
for d in "$sdev" "$rdev"; do
	mkswap "$d" >/dev/null && swapon -p 5 "$d" || { fail "swapon $d"; finish; }
done
zn=${zdev##*/} sn=${sdev##*/} rn=${rdev##*/}
devs="$zn $sn $rn"

# line CHOICE: what the policy file reads with CHOICE active.
line() {
	local c out=
	for c in $choices; do
		[ "$c" = "$1" ] && c="[$c]"
		out="${out:+$out }$c"
	done
	echo "$out"
}

declare -A lines
for c in $choices; do lines[$c]=$(line "$c"); done

# active DEV: the active choice in DEV's policy file (bash only: forks
# are slow under TCG).
active() {
	local l=
	read -r l < "$ctl/$1/policy" 2>/dev/null
	[[ $l =~ \[([a-z]+)\] ]] && echo "${BASH_REMATCH[1]}"
}

# The media devices names each device by.
declare -A media=([$zn]=zram [$sn]=ssd [$rn]=rotational)

# row DEV: DEV's media, owner, policy, cursors and placement columns in
# devices, looked up by the header row.
row() {
	local -a h f
	local i m=0 o=0 p=0 cu=0 pl=0
	{
		read -ra h
		for i in "${!h[@]}"; do
			case ${h[$i]} in
			media) m=$i ;; owner) o=$i ;; policy) p=$i ;; cursors) cu=$i ;; placement) pl=$i ;;
			esac
		done
		while read -ra f; do
			[ "${f[0]}" = "$1" ] &&
				{ echo "${f[$m]} ${f[$o]} ${f[$p]} ${f[$cu]} ${f[$pl]}"; return; }
		done
	} < "$dbg/devices"
}

# agrees DEV CHOICE: the policy file and devices say CHOICE is active:
# devices' policy is the choice's name, its media DEV's, its cursors what
# the choice and the media make them (the builtin allocator's: 6.12's
# per-CPU clusters on non-rotational devices, a scan on rotational ones),
# its placement antifrag for antifrag, default for the others, "-" for
# builtin; prints what disagrees.
agrees() {
	local d=$1 c=$2 got= m owner pol cur place want_cur want_place=default want_owner=swapalloc
	read -r got < "$ctl/$d/policy" 2>/dev/null
	[ "$got" = "${lines[$c]}" ] || { echo "$d/policy reads '$got' after $c"; return 1; }
	read -r m owner pol cur place <<<"$(row "$d")"
	case $c in
	builtin) want_owner=builtin want_place=-
		 [ "${media[$d]}" = rotational ] && want_cur=scan || want_cur=percpu ;;
	auto|antifrag) [ "${media[$d]}" = rotational ] && want_cur=global || want_cur=percpu ;;
	*) want_cur=$c ;;
	esac
	[ "$c" = antifrag ] && want_place=antifrag
	[ "$m" = "${media[$d]}" ] && [ "$owner" = $want_owner ] && [ "$pol" = "$c" ] &&
		[ "$cur" = $want_cur ] && [ "$place" = $want_place ] && return 0
	echo "$d: devices says media $m owner $owner policy $pol cursors $cur placement $place for $c;" \
		"want ${media[$d]} $want_owner $c $want_cur $want_place"
	return 1
}

# vocab: what the tables say is in README's one vocabulary; prints what
# is not.  devices: its header; each device's media (zram for zram); in
# every row the choice's name for policy, words for owner, cursors and
# placement, "-" the one marker for none, numbers for the counts.  The
# tables of each device swapalloc has: discard's enabled yes or no,
# clusters' free (free slots, as in devices), alloc's sources from_*,
# cursors' "-" for a cursor with no next slot, never 0.
vocab() {
	local h d m
	read -r h < "$dbg/devices"
	[ "$h" = "name type media owner policy cursors placement clusters used free held" ] ||
		echo "devices header '$h';"
	for d in $devs; do
		m=$(sa_col "$dbg/devices" "$d" media)
		[ "$m" = "${media[$d]}" ] || echo "$d: media '$m', not ${media[$d]};"
	done
	awk -v choices=" $choices " 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		{
			o = $c["owner"]; p = $c["policy"]; cu = $c["cursors"]; pl = $c["placement"]
			ok = index(choices, " " p " ") && $c["media"] ~ /^(zram|ssd|rotational)$/
			if (o == "swapalloc")
				ok = ok && p != "builtin" && cu ~ /^(percpu|global)$/ && pl ~ /^(default|antifrag)$/
			else
				ok = ok && o == "builtin" && p == "builtin" && cu ~ /^(percpu|scan)$/ && pl == "-"
			for (k in c)
				if (k ~ /^(type|clusters|used|free|held)$/ && $c[k] !~ /^[0-9]+$/)
					ok = 0
			if (!ok)
				printf "devices row \"%s\";", $0
		}' "$dbg/devices"
	for d in $devs; do
		[ "$(sa_col "$dbg/devices" "$d" owner)" = swapalloc ] || continue
		m=$(sa_col "$dbg/$d/discard" '' enabled)
		[ "$m" = yes ] || [ "$m" = no ] || echo "$d/discard: enabled '$m';"
		read -r h < "$dbg/$d/clusters"
		[ "$h" = "list order clusters free" ] || echo "$d/clusters header '$h';"
		read -r h < "$dbg/$d/alloc"
		[[ " $h " == *" from_free "* && " $h " != *" free "* ]] || echo "$d/alloc header '$h';"
		awk 'NR == 1 { if ($1 != "cursor" || $2 != "order0_slot") print FILENAME ": header \"" $0 "\";"; next }
			$1 !~ /^(cpu[0-9]+|global)$/ { print FILENAME ": row \"" $0 "\";"; next }
			{ for (i = 2; i <= NF; i++) if ($i !~ /^([1-9][0-9]*|-)$/) { print FILENAME ": row \"" $0 "\";"; next } }' \
			"$dbg/$d/cursors"
	done
}

# mark: a new mark in the kernel log; since_mark PATTERN: lines matching
# PATTERN after the last mark.  Counting in the whole log would not do:
# the ring buffer (128 KiB) wraps when many switches log.
marks=0
mark() { marks=$((marks + 1)); echo "39-policy: mark $marks." > /dev/kmsg; }
since_mark() {
	dmesg | awk -v m="39-policy: mark $marks." -v p="$1" \
		'index($0, m) { n = 0; on = 1; next } on && $0 ~ p { n++ } END { print n + 0 }'
}
# released: devices the kernel logged handing back since the last mark.
released() { since_mark 'swap: swapalloc released swap area'; }

# --- the workers: swapverify in a memory cgroup until /tmp/stop
note "t=$SECONDS s: the workers: swapverify in a memory cgroup until /tmp/stop"
cg=$(memcg policy 48M)
worker() {
	repeat_until_stop "/tmp/w$1.log" "/tmp/w$1.runs" \
		"${in_memcg[@]}" "$cg" "$verify" -q -s 32M -c 8M -f "$1" -i 2
}
rm -f /tmp/stop /tmp/w*.log /tmp/w*.runs

must insmod "$ko" || finish
ok=1
for d in $devs; do
	m=$(agrees "$d" auto) || { fail "insmod: every device auto" "$m"; ok=0; }
done
[ $ok -eq 1 ] && pass "insmod: every device's policy reads $(line auto), devices agrees"
worker 4k &
w1=$!
worker 64k &
w2=$!
sleep 1

# --- one open of a table is one table.  bash's read reads ahead and seeks
# back to the end of the line; a table made again at that seek (as
# seq_file does) with the first row changed meanwhile puts the rest of the
# rows at the wrong offset: "devices has no row for vda" after a switch,
# under load.  Switch the first row's device between two reads of one
# open: the rest must be the other devices' rows, whole.
note "t=$SECONDS s: one open of devices reads one table"
d1=$(awk 'NR == 2 { print $1 }' "$dbg/devices")
p1=$(active "$d1")
[ "$p1" = builtin ] && o1=auto || o1=builtin
exec 7< "$dbg/devices"
read -r _ <&7
echo "$o1" > "$ctl/$d1/policy"
read -r first <&7
rest=$(cat <&7)
exec 7<&-
echo "$p1" > "$ctl/$d1/policy"
want=$(awk 'NR > 2 { print $1 }' "$dbg/devices" | sort | tr '\n' ' ')
got=$(awk '{ print $1 }' <<<"$rest" | sort | tr '\n' ' ')
[ "${first%% *}" = "$d1" ] && [ "$got" = "$want" ] &&
	pass "one open of devices reads one table (first row switched between two reads)" ||
	fail "one open of devices reads one table (first row switched between two reads)" \
		"first '$first', then rows '$got', want '$want'"

# --- bad names: EINVAL, nothing changed; the active name: a no-op
note "t=$SECONDS s: bad names: EINVAL, nothing changed; the active name: a no-op"
must eval "echo builtin > $ctl/$sn/policy"
# A table of each kind of row: zram auto (per-CPU), the rotational disk
# auto (global), the non-rotational one builtin.
m=$(vocab)
[ -z "$m" ] && pass "the tables speak one vocabulary: media $zn zram, $sn ssd, $rn rotational; words, '-' for none" ||
	fail "the tables speak one vocabulary" "$(tr '\n' ' ' <<<"$m")"
sed 's/^/# /' "$dbg/devices"
long=$(printf 'a%.0s' $(seq 300))
bad_all=("bogus" "AUTO" "auto junk" "auto " " auto" "autox" "auto,global" $'\n' $'auto\n\n'
	 "builtinbuiltinbuiltin" "$long" "$(printf 'p\303\251rcpu')")
bad_few=("bogus" "global " $'\n' "$long")
mark
nbad=0 tried=0
# refused DEV STRING: writing STRING to DEV's policy fails with EINVAL.
refused() {
	local err=
	printf '%s' "$2" > "$ctl/$1/policy" 2>/tmp/err && return 1
	read -r err < /tmp/err
	[[ $err == *"Invalid argument"* ]]
}
for d in "$zn:auto" "$sn:builtin"; do
	c=${d#*:} d=${d%%:*}
	if [ "$c" = auto ]; then set -- "${bad_all[@]}"; else set -- "${bad_few[@]}"; fi
	for j in "$@"; do
		tried=$((tried + 1))
		refused "$d" "$j" || { note "$d: write $(printf '%q' "$j" | cut -c1-24) not refused with EINVAL"; nbad=$((nbad + 1)); }
	done
	# A NUL after the name: printf writes it, bash variables cannot hold it.
	tried=$((tried + 1))
	if printf 'auto\0x' > "$ctl/$d/policy" 2>/tmp/err || ! grep -q "Invalid argument" /tmp/err; then
		note "$d: write 'auto\\0x' not refused with EINVAL"; nbad=$((nbad + 1))
	fi
	m=$(agrees "$d" "$c") || { note "$m"; nbad=$((nbad + 1)); }
done
r=$(released) n=$(since_mark 'swapalloc: .*: policy')
[ $nbad -eq 0 ] && [ "$r" = 0 ] && [ "$n" = 0 ] &&
	pass "$tried bad names refused with EINVAL, nothing changed" ||
	fail "$tried bad names refused with EINVAL, nothing changed" \
		"$nbad wrong; since: $r releases, $n policy log lines"
mark
if echo auto > "$ctl/$zn/policy" && echo builtin > "$ctl/$sn/policy" &&
   [ "$(released)" = 0 ] && agrees "$zn" auto >/dev/null && agrees "$sn" builtin >/dev/null; then
	pass "writing the active name succeeds and changes nothing"
else
	fail "writing the active name succeeds and changes nothing" "$(released) releases"
fi
must eval "echo auto > $ctl/$sn/policy"

# --- switching under load
note "t=$SECONDS s: switching under load"
writes=0 wfail=0 rb=0 logs=0 checks=0 cfail=0
for ((r = 1; r <= rounds; r++)); do
	for step in builtin auto antifrag other; do
		mark
		want=0
		for d in $devs; do
			c=$step
			# other: the one of percpu and global that auto does not pick
			[ "$c" = other ] && { [ "$d" = "$rn" ] && c=percpu || c=global; }
			prev=$(active "$d")
			writes=$((writes + 1))
			if ! echo "$c" > "$ctl/$d/policy" 2>/tmp/err; then
				wfail=$((wfail + 1)); note "round $r: $d: write $c: $(</tmp/err)"
				continue
			fi
			m=$(agrees "$d" "$c") || { rb=$((rb + 1)); note "round $r: $m"; }
			# Leaving swapalloc (or switching inside it) releases once.
			[ "$prev" != builtin ] && [ "$prev" != "$c" ] && want=$((want + 1))
		done
		n=$(released)
		[ "$n" -eq $want ] || { logs=$((logs + 1)); note "round $r $step: $n releases, want $want"; }
		sleep 0.5
		[ "$step" = builtin ] && continue
		for d in $devs; do
			checks=$((checks + 1))
			res=$(sa_check "$d") || { cfail=$((cfail + 1)); note "round $r $step: sa_check $d: $res"; }
		done
	done
done
[ $wfail -eq 0 ] && pass "switch: $writes policy writes under load succeeded" ||
	fail "switch: $writes policy writes under load succeeded" "$wfail failed"
[ $rb -eq 0 ] && pass "switch: policy reads back what was written, devices agrees ($writes writes)" ||
	fail "switch: policy reads back what was written, devices agrees" "$rb of $writes wrong"
[ $logs -eq 0 ] && pass "switch: the kernel released each device once per switch away from swapalloc's state" ||
	fail "switch: the kernel released each device once per switch away from swapalloc's state" "$logs of $((rounds * 4)) steps wrong"
[ $cfail -eq 0 ] && pass "switch: sa_check ok after every module-owned phase ($checks checks)" ||
	fail "switch: sa_check ok after every module-owned phase" "$cfail of $checks failed"

# --- concurrent writers: two on one file, one on another
note "t=$SECONDS s: concurrent writers: two on one file, one on another"
race_writer() {
	local f=$ctl/$1/policy end=$((SECONDS + race_secs)) n=0 e=0 c
	shift
	while [ $SECONDS -lt $end ]; do
		for c in "$@"; do
			n=$((n + 1))
			echo "$c" > "$f" 2>/dev/null || e=$((e + 1))
		done
	done
	echo "$n $e"
}
race_writer "$sn" auto global builtin antifrag percpu > /tmp/rw1 &
p1=$!
race_writer "$sn" percpu builtin antifrag auto > /tmp/rw2 &
p2=$!
race_writer "$rn" global auto builtin percpu antifrag > /tmp/rw3 &
p3=$!
hung=0
for p in $p1 $p2 $p3; do wait_bounded $((race_secs + 120)) $p || hung=1; done
read -r n1 e1 < /tmp/rw1; read -r n2 e2 < /tmp/rw2; read -r n3 e3 < /tmp/rw3
note "concurrent writers: $((n1 + n2 + n3)) writes, $((e1 + e2 + e3)) failed"
[ $hung -eq 0 ] && [ $((e1 + e2 + e3)) -eq 0 ] && [ $((n1 + n2 + n3)) -gt 0 ] &&
	pass "concurrent writers on two files: every write succeeded" ||
	fail "concurrent writers on two files: every write succeeded" "hung $hung, $((e1 + e2 + e3)) failed"
ok=1
for d in $sn $rn; do
	c=$(active "$d")
	m=$(agrees "$d" "$c") || { ok=0; note "$m"; }
	if [ "$c" != builtin ]; then
		res=$(sa_check "$d") || { ok=0; note "sa_check $d: $res"; }
	fi
done
[ $ok -eq 1 ] && pass "concurrent writers: each device consistent, sa_check ok" ||
	fail "concurrent writers: each device consistent, sa_check ok"
must eval "echo auto > $ctl/$sn/policy"
must eval "echo auto > $ctl/$rn/policy"

# --- a write loop on a held descriptor racing swapoff of its device
note "t=$SECONDS s: a write loop on a held descriptor racing swapoff of its device"
rm -f /tmp/stop_pol
(
	exec 5> "$ctl/$sn/policy"
	while [ ! -e /tmp/stop_pol ]; do
		for c in builtin auto global antifrag; do echo "$c" >&5; done 2>/dev/null
		sleep 0.02
	done
) &
pw=$!
sleep 1
swapoff "$sdev" 2>/tmp/swapoff.err &
so=$!
# Not wait_bounded: a swapoff stuck in D state cannot be killed, nor waited for.
for ((i = 0; i < 240; i++)); do kill -0 $so 2>/dev/null || break; sleep 0.5; done
if kill -0 $so 2>/dev/null; then
	task_stacks $so
	fail "swapoff during policy writes on a held descriptor" "still running after 120 s"
elif wait $so; then
	pass "swapoff during policy writes on a held descriptor"
else
	fail "swapoff during policy writes on a held descriptor" "$(</tmp/swapoff.err)"
fi
touch /tmp/stop_pol
wait_bounded 30 $pw >/dev/null || fail "the policy writer stops after swapoff" "still running"
gone=0
for _ in $(seq 30); do [ -e "$dbg/$sn" ] || { gone=1; break; }; sleep 0.1; done
[ $gone -eq 1 ] && pass "swapoff removed $dbg/$sn" || fail "swapoff removed $dbg/$sn" "still there after 3 s"
wait_gone "$ctl/$sn" && pass "swapoff removed $ctl/$sn" || fail "swapoff removed $ctl/$sn" "still there after 5 s"
must swapon -p 5 "$sdev"
for _ in $(seq 30); do [ -e "$ctl/$sn/policy" ] && break; sleep 0.1; done
m=$(agrees "$sn" auto) && pass "swapon again: the default (auto) again" || fail "swapon again: the default (auto) again" "$m"

# --- a released device keeps its directory; its swapoff removes it
note "t=$SECONDS s: a released device keeps its directory; its swapoff removes it"
must eval "echo builtin > $ctl/$rn/policy"
[ "$(<"$ctl/$rn/policy")" = "$(line builtin)" ] && [ -e "$ctl/$rn/check" ] &&
	pass "a released device keeps its policy file" || fail "a released device keeps its policy file"
res=$(cat "$dbg/$rn/alloc" 2>&1) && fail "a released device's alloc fails" "$res" ||
	pass "a released device's alloc fails ($(sed 's/.*: //' <<<"$res"))"
must swapoff "$rdev"
gone=0
for _ in $(seq 50); do [ -e "$dbg/$rn" ] || { gone=1; break; }; sleep 0.1; done
[ $gone -eq 1 ] && pass "swapoff of a released device removed $dbg/$rn" ||
	fail "swapoff of a released device removed $dbg/$rn" "still there after 5 s"
wait_gone "$ctl/$rn" && pass "swapoff of a released device removed $ctl/$rn" ||
	fail "swapoff of a released device removed $ctl/$rn" "still there after 5 s"
must swapon -p 5 "$rdev"
for _ in $(seq 30); do [ -e "$ctl/$rn/policy" ] && break; sleep 0.1; done
m=$(agrees "$rn" auto) && pass "a released device swapped on again gets the default" ||
	fail "a released device swapped on again gets the default" "$m"

# --- rmmod with a policy descriptor held open, racing a write loop
note "t=$SECONDS s: rmmod with a policy descriptor held open, racing a write loop"
exec 6> "$ctl/$rn/policy"
echo global >&6 && m=$(agrees "$rn" global) && pass "a held policy descriptor switches" ||
	fail "a held policy descriptor switches" "$m"
rm -f /tmp/stop_rm
(
	while [ ! -e /tmp/stop_rm ]; do
		for c in builtin auto; do echo "$c" > "$ctl/$zn/policy"; done 2>/dev/null
		sleep 0.02
	done
) &
pw=$!
unloaded=0
for i in $(seq 50); do
	if rmmod swapalloc 2>/dev/null; then unloaded=$i; break; fi
	sleep 0.2
done
touch /tmp/stop_rm
wait_bounded 30 $pw >/dev/null || fail "the policy writer stops after rmmod" "still running"
[ $unloaded -gt 0 ] && pass "rmmod while a write loop opens a policy file and another is held (attempt $unloaded)" ||
	fail "rmmod while a write loop opens a policy file and another is held" "50 attempts refused"
if echo percpu >&6 2>/tmp/err; then
	fail "the held policy descriptor fails after rmmod" "the write succeeded"
else
	pass "the held policy descriptor fails after rmmod ($(sed 's/.*: //' /tmp/err))"
fi
exec 6>&-
[ ! -e "$ctl" ] && pass "rmmod removed $ctl" || fail "rmmod removed $ctl" "$(ls "$ctl")"
[ "$(grep -c '^/' /proc/swaps)" = 3 ] && pass "rmmod: all three devices still swapping" ||
	fail "rmmod: all three devices still swapping" "$(</proc/swaps)"

# --- the workers' verdict
note "t=$SECONDS s: the workers' verdict"
touch /tmp/stop
wait_bounded 300 $w1 || fail "4K worker finished"
wait_bounded 300 $w2 || fail "64K worker finished"
for f in 4k 64k; do
	runs=$(grep -c . "/tmp/w$f.runs" 2>/dev/null || echo 0)
	badr=$(grep -vc ' exit 0$' "/tmp/w$f.runs" 2>/dev/null || true)
	note "$f worker: $runs runs, $(grep -h 'swapverify: ' "/tmp/w$f.log" | grep -v seed | tail -n 1)"
	if [ "$runs" -gt 0 ] && [ "${badr:-0}" -eq 0 ]; then
		pass "$f worker: data verified in every run"
	else
		grep -v seed "/tmp/w$f.log" | tail -n 10 | sed 's/^/# /'
		fail "$f worker: data verified in every run" "$badr of $runs runs failed"
	fi
done

# --- the parameters are the defaults at insmod (and swapon)
note "t=$SECONDS s: the parameters are the defaults at insmod (and swapon)"
if must insmod "$ko" policy=builtin; then
	ok=1
	for d in $devs; do m=$(agrees "$d" builtin) || { ok=0; note "$m"; }; done
	echo percpu > "$ctl/$rn/policy" && m=$(agrees "$rn" percpu) || { ok=0; note "$m"; }
	[ $ok -eq 1 ] && pass "policy=builtin: every device builtin until its policy file takes it" ||
		fail "policy=builtin: every device builtin until its policy file takes it"
	res=$(sa_check "$rn") && pass "policy=builtin, $rn taken: sa_check" || fail "policy=builtin, $rn taken: sa_check" "$res"
	must rmmod swapalloc
fi
if must insmod "$ko" placement=antifrag devices="$zn,$rn"; then
	m=$(agrees "$zn" antifrag) && m=$(agrees "$rn" antifrag) && m=$(agrees "$sn" builtin) &&
		pass "placement=antifrag devices=$zn,$rn: those antifrag, $sn builtin" ||
		fail "placement=antifrag devices=$zn,$rn: those antifrag, $sn builtin" "$m"
	echo antifrag > "$ctl/$sn/policy" && m=$(agrees "$sn" antifrag) &&
		pass "a device left out of devices= can be taken" || fail "a device left out of devices= can be taken" "$m"
	must rmmod swapalloc
fi
if insmod "$ko" policy=global placement=antifrag 2>/tmp/err; then
	fail "policy=global placement=antifrag refused" "it loaded"
	rmmod swapalloc
else
	# The last lines: a full ring buffer keeps its line count.
	dmesg | tail -n 3 | grep -q "placement=antifrag goes with policy=auto only" &&
		pass "policy=global placement=antifrag refused, the log says why" ||
		fail "policy=global placement=antifrag refused, the log says why" "$(dmesg | tail -n 2 | tr '\n' ' ')"
fi
note "t=$SECONDS s: end"
finish
