#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bad input, and devices at the edges of what swapon accepts, with
# swapalloc loaded; then the data checker's own corruption mode.
#
#  - Every module parameter: empty, overlong (devices= over 255
#    characters), leading, trailing and doubled commas, spaces,
#    non-ASCII, unknown values: insmod fails with EINVAL, the kernel log
#    says why, nothing is loaded.  A device that does not exist loads (it
#    may be swapped on later), binds nothing else and says so.
#  - No debugfs file of swapalloc has a write bit (lockdown refuses to
#    open such a file, and control lives in sysfs).
#  - Every writable sysfs control file (/sys/kernel/swapalloc/<dev>/):
#    empty, junk, overflowing numbers, a write longer than the kernel's
#    conversion buffer (33 zeros, then "1junk"), a NUL inside,
#    non-ASCII: EINVAL, counters unchanged.
#  - A debugfs and a sysfs descriptor held open across swapoff and across
#    rmmod: swapoff works, the stale descriptors get an error, rmmod
#    refuses while the debugfs one is open ("in use") and works once it
#    is closed; a sysfs descriptor does not hold the module, and a write
#    to it after rmmod fails.
#  - Size edges: a device smaller than one cluster, one with a partial
#    last cluster, one whose swap header lists bad pages: bound, data
#    verified, check ok.
#  - SWAPVERIFY_CORRUPT: swapverify must report the damage it plants.
#
# Prints "figures: N bad inputs tried" at the end.
#
# vm: --mem 1G --timeout 600
. "$(dirname "$0")/../lib/guest.sh"

verify=$(tool swapverify) || { fail "infrastructure: swapverify built"; finish; }
ko=$SWAPALLOC_TOP/swapalloc.ko
dbg=/sys/kernel/debug/swapalloc
ctl=/sys/kernel/swapalloc
tried=0

check_ok() {
	local name=$1 dev=$2 res
	res=$(sa_check "$dev")
	[ "$res" = ok ] && pass "$name" || fail "$name" "$res"
}

# bad_insmod LABEL LOGRE ARG: insmod with ARG fails with EINVAL, nothing is
# left loaded, the kernel log has a line matching LOGRE since the attempt.
bad_insmod() {
	local label=$1 re=$2 arg=$3 err
	tried=$((tried + 1))
	kmsg_mark
	if insmod "$ko" "$arg" 2>/tmp/insmod.err; then
		fail "insmod $label refused" "it loaded"
		rmmod swapalloc
		return
	fi
	err=$(</tmp/insmod.err)
	if module_loaded swapalloc; then
		fail "insmod $label refused" "module left loaded"
	elif [[ $err != *"Invalid argument"* && $err != *"Invalid parameters"* ]]; then
		fail "insmod $label refused with EINVAL" "$err"
	elif ! kmsg_since "swapalloc: $re"; then
		fail "insmod $label refused, the kernel log says why" \
			"no 'swapalloc: $re' in: $(dmesg | tail -n +$((_kmsg_mark + 1)) | tail -n 3 | tr '\n' ' ')"
	else
		pass "insmod $label refused with EINVAL, the kernel log says why"
	fi
}

long=$(printf 'z%.0s' $(seq 256))
bad_insmod "devices= of 256 characters" "devices= is longer than 255" "devices=$long"
bad_insmod "devices= of 1000 characters" "devices= is longer than 255" "devices=$long$long$long${long:0:232}"
bad_insmod "devices=,zram0" "devices=: empty device name" "devices=,zram0"
bad_insmod "devices=zram0," "devices=: empty device name" "devices=zram0,"
bad_insmod "devices=zram0,,zram1" "devices=: empty device name" "devices=zram0,,zram1"
bad_insmod "devices=," "devices=: empty device name" "devices=,"
bad_insmod "devices='zram0 zram1'" "devices=: device names are printable ASCII" 'devices="zram0 zram1"'
bad_insmod "devices= with a tab" "devices=: device names are printable ASCII" "devices=\"zram0$(printf '\t')x\""
bad_insmod "devices= non-ASCII" "devices=: device names are printable ASCII" "devices=zr$(printf '\303\251')m0"
bad_insmod "devices= control character" "devices=: device names are printable ASCII" "devices=zram$(printf '\001')"
bad_insmod "policy=" "policy= must be auto, percpu or global" "policy="
bad_insmod "policy=bogus" "policy= must be auto, percpu or global" "policy=bogus"
bad_insmod "policy=PERCPU" "policy= must be auto, percpu or global" "policy=PERCPU"
bad_insmod "policy=percpu,global" "policy= must be auto, percpu or global" "policy=percpu,global"
bad_insmod "policy= overlong" "policy= must be auto, percpu or global" "policy=$long"
bad_insmod "policy= non-ASCII" "policy= must be auto, percpu or global" "policy=p$(printf '\303\251')rcpu"

# An unknown parameter: the module loader ignores it (6.12 does so for
# every module) and says so; nothing else changes.
tried=$((tried + 1))
kmsg_mark
if must insmod "$ko" bogus=1; then
	kmsg_since "swapalloc: unknown parameter 'bogus' ignored" &&
		pass "insmod bogus=1: the kernel log says it is ignored" ||
		fail "insmod bogus=1: the kernel log says it is ignored" "$(dmesg | tail -n 2 | tr '\n' ' ')"
	must rmmod swapalloc
fi

# The longest devices= that fits (255) is accepted.
tried=$((tried + 1))
if must insmod "$ko" "devices=${long:0:255}"; then
	pass "devices= of 255 characters accepted"
	must rmmod swapalloc
fi

mthp_enable 64 || fail "infrastructure: 64K mTHP enabled" "no hugepages-64kB"
zram=$(setup_zram 256M) || { fail "setup_zram 256M"; finish; }
name=${zram##*/}

# A device that does not exist: loads, binds nothing, the log says so.
tried=$((tried + 1))
kmsg_mark
if must insmod "$ko" devices=nosuchdev; then
	# Its directory is there, for its policy file to take it.
	if [ "$(sa_col "$dbg/devices" "$name" owner)" != builtin ] ||
	   ! grep -q '\[builtin\]' "$ctl/$name/policy" 2>/dev/null; then
		fail "devices=nosuchdev binds nothing" "$(cat "$dbg/devices" "$ctl/$name/policy" 2>&1)"
	else
		pass "devices=nosuchdev binds nothing ($name stays builtin, its policy file says so)"
	fi
	kmsg_since "swapalloc: devices=: no active swap device nosuchdev" &&
		pass "devices=nosuchdev: the kernel log names it" ||
		fail "devices=nosuchdev: the kernel log names it" "$(dmesg | tail -n +$((_kmsg_mark + 1)) | tr '\n' ' ')"
	must rmmod swapalloc
fi

# --- debugfs: statistics only; writable sysfs control files
must insmod "$ko" devices="$name" || finish
"$verify" -s 32M -f 64k -i 1 -q > /tmp/v.log 2>&1 || fail "swap before the sysfs writes" "$(tail -n 1 /tmp/v.log)"
tried=$((tried + 1))
dfiles=$(find "$dbg" -type f | wc -l)
wdbg=$(find "$dbg" -type f -perm /222 | sort)
if [ -z "$wdbg" ] && [ "$dfiles" -gt 2 ]; then
	pass "no debugfs file has a write bit ($dfiles files)"
else
	fail "no debugfs file has a write bit" "$dfiles files; writable: $(echo $wdbg)"
fi
zeros33=$(printf '0%.0s' $(seq 33))
junk=($'\n' "" "abc" "-1" "2" "1junk" " 1 1" "0x1" "1.0" "99999999999999999999"
      "4294967297" "${zeros33}1junk" "$long" "$(printf '1\303\251')"
      "$(printf '\303\251')" "1,")
writable=$(find "$ctl" -type f -perm -200 | sort)
[ "$(echo $writable)" = "$ctl/$name/check $ctl/$name/policy $ctl/$name/reset" ] ||
	fail "sysfs has the control files" "found: $(echo $writable)"
for f in $writable; do
	rel=${f#"$ctl"/}
	cat "$dbg/$name/alloc" "$dbg/$name/reclaim" "$dbg/$name/discard" > /tmp/before 2>&1
	nbad=0
	for j in "${junk[@]}"; do
		tried=$((tried + 1))
		printf -v shown '%q' "$j"
		shown=${shown:0:24}
		if printf '%s' "$j" > "$f" 2>/tmp/err; then
			# An empty write never reaches the file (no write(2) call).
			[ -z "$j" ] && continue
			fail "$rel: write $shown refused" "write succeeded"
			nbad=$((nbad + 1))
		elif [[ $(</tmp/err) != *"Invalid argument"* ]]; then
			fail "$rel: write $shown refused with EINVAL" "$(</tmp/err)"
			nbad=$((nbad + 1))
		fi
	done
	# A NUL after a valid value: bash variables cannot hold it.
	tried=$((tried + 1))
	v=1
	[ "${rel##*/}" = policy ] && v=auto
	if printf '%s\0x' "$v" > "$f" 2>/tmp/err || [[ $(</tmp/err) != *"Invalid argument"* ]]; then
		fail "$rel: write '$v\\0x' refused with EINVAL" "$(</tmp/err)"
		nbad=$((nbad + 1))
	fi
	[ $nbad -eq 0 ] && pass "$rel: $((${#junk[@]} + 1)) bad writes refused with EINVAL"
	cat "$dbg/$name/alloc" "$dbg/$name/reclaim" "$dbg/$name/discard" > /tmp/after 2>&1
	cmp -s /tmp/before /tmp/after && pass "$rel: counters unchanged by bad writes" ||
		fail "$rel: counters unchanged by bad writes" "$(diff /tmp/before /tmp/after | head -n 4 | tr '\n' ' ')"
done
check_ok "invariants after the bad writes" "$name"

# --- a descriptor held open across swapoff, then across rmmod
exec 3< "$dbg/$name/alloc"
exec 4> "$ctl/$name/reset"
exec 5> "$ctl/$name/policy"
# The module cannot make swapoff fail (its hooks return void), only wait
# for something a descriptor holds, or oops: so swapoff is bounded, and
# when it overruns the descriptors are closed to let it finish.  It must
# not hold 3 and 4 itself.
swapoff "$zram" 2>/tmp/err 3<&- 4>&- 5>&- &
spid=$!
for _ in $(seq 120); do kill -0 $spid 2>/dev/null || break; sleep 0.5; done
if kill -0 $spid 2>/dev/null; then
	task_stacks $spid
	fail "swapoff with debugfs and sysfs descriptors open" "still running after 60 s; closing them"
	exec 3<&- 4>&- 5>&-
	wait_bounded 60 $spid || true
	finish
elif wait $spid; then
	pass "swapoff with debugfs and sysfs descriptors open"
else
	fail "swapoff with debugfs and sysfs descriptors open" "$(</tmp/err)"
fi
tried=$((tried + 3))
if out=$(cat <&3 2>&1); then
	# A read from offset 0 of a file that is gone must not show counters.
	[ -z "$out" ] && pass "read of a removed debugfs file: nothing" ||
		fail "read of a removed debugfs file fails" "read: $(head -c 100 <<<"$out")"
else
	pass "read of a removed debugfs file fails ($(tail -n 1 <<<"$out" | sed 's/.*: //'))"
fi
for fd in 4 5; do
	if echo 1 >&$fd 2>/tmp/err; then
		fail "write to a removed sysfs file fails (fd $fd)" "it succeeded"
	else
		pass "write to a removed sysfs file fails (fd $fd: $(sed 's/.*: //' /tmp/err))"
	fi
done
exec 3<&- 4>&- 5>&-
[ ! -e "$dbg/$name" ] && pass "swapoff removed $dbg/$name" || fail "swapoff removed $dbg/$name"
# The sysfs directory goes from a work item, just after swapoff returns.
wait_gone "$ctl/$name" && pass "swapoff removed $ctl/$name" || fail "swapoff removed $ctl/$name"
must swapon "$zram"
[ -e "$dbg/$name" ] && [ -e "$ctl/$name/policy" ] && pass "swapon bound $name again" ||
	fail "swapon bound $name again" "$(<"$dbg/devices")"
exec 3< "$dbg/$name/alloc"
exec 5> "$ctl/$name/policy"
tried=$((tried + 2))
if rmmod swapalloc 2>/tmp/err; then
	fail "rmmod refused while a debugfs file is open" "it unloaded"
	exec 3<&-
else
	grep -q "in use" /tmp/err && pass "rmmod refused while a debugfs file is open (in use)" ||
		fail "rmmod refused while a debugfs file is open, saying why" "$(</tmp/err)"
	if module_loaded swapalloc && [ -e "$dbg/$name" ]; then
		check_ok "nothing changed by the refused rmmod" "$name"
	else
		fail "nothing changed by the refused rmmod" "the module or $dbg/$name is gone"
	fi
	exec 3<&-
	must rmmod swapalloc && pass "rmmod once the debugfs descriptor is closed, a sysfs one open"
fi
if echo auto >&5 2>/tmp/err; then
	fail "write to a sysfs file after rmmod fails" "it succeeded"
else
	pass "write to a sysfs file after rmmod fails ($(sed 's/.*: //' /tmp/err))"
fi
exec 5>&-
must swapoff "$zram"
must eval "echo 1 > /sys/block/$name/reset"

# --- size edges
must insmod "$ko" || finish
# edge LABEL SIZE [BADPAGES...]: a zram device of SIZE, mkswap, the swap
# header's bad-page list set to BADPAGES, swapon, bound, data, check.
edge() {
	local label=$1 size=$2 dev n i off
	shift 2
	dev=$(setup_zram "$size" 2>/tmp/err) || { fail "$label: set up" "$(</tmp/err)"; return; }
	if [ $# -gt 0 ]; then
		must swapoff "$dev" || return
		# union swap_header: nr_badpages at 1032, badpages[] at 1536, __u32 LE.
		n=$#
		printf "$(printf '\\%03o' $((n & 255)) 0 0 0)" | dd of="$dev" bs=1 seek=1032 conv=notrunc status=none
		off=1536
		for i in "$@"; do
			printf "$(printf '\\%03o' $((i & 255)) $(((i >> 8) & 255)) $(((i >> 16) & 255)) 0)" |
				dd of="$dev" bs=1 seek=$off conv=notrunc status=none
			off=$((off + 4))
		done
		sync
		must swapon "$dev" || return
		note "$label: /proc/swaps: $(grep "^$dev " /proc/swaps)"
	fi
	local d=${dev##*/} slots
	slots=$(awk -v d="$dev" '$1 == d { print $3 / 4 }' /proc/swaps)
	if [ "$(sa_col "$dbg/devices" "$d" owner)" != swapalloc ]; then
		fail "$label: bound" "$(<"$dbg/devices")"
	else
		pass "$label ($slots slots): bound"
	fi
	# Without -n: a device the allocator cannot use (nothing swapped out) fails.
	if "$verify" -s 8M -f 64k -i 2 -q > /tmp/edge.log 2>&1; then
		pass "$label: data intact ($(tail -n 1 /tmp/edge.log | sed 's/^swapverify: //'))"
	else
		fail "$label: data intact" "$(tail -n 1 /tmp/edge.log)"
	fi
	check_ok "$label: invariants" "$d"
	note "$label: $(awk -v d="$d" '$1 == d' "$dbg/devices")"
	must swapoff "$dev"
	must eval "echo 1 > /sys/block/$d/reset"
}
edge "device smaller than a cluster (1M)" 1M
edge "partial last cluster (2M + 152K)" 2200K
edge "bad pages in the header" 8M 1 5 511 512 513 1000 2047
must rmmod swapalloc

# --- the checker checks: SWAPVERIFY_CORRUPT=3 must find 3 per process
zram=$(setup_zram 64M) || { fail "setup_zram 64M"; finish; }
must insmod "$ko"
rc=0
SWAPVERIFY_CORRUPT=3 "$verify" -s 16M -p 2 -i 2 > /tmp/corrupt.log 2>&1 || rc=$?
n=$(sed -n 's/.*verified .*, \([0-9]*\) mismatches$/\1/p' /tmp/corrupt.log | tail -n 1)
if [ $rc -eq 1 ] && [ "${n:-0}" -eq 6 ] && grep -q "FAIL: 6 pages read back wrong" /tmp/corrupt.log; then
	pass "swapverify's self-test: 6 planted corruptions in 2 processes reported, exit 1"
else
	tail -n 8 /tmp/corrupt.log | sed 's/^/# /'
	fail "swapverify's self-test reports planted corruption" "exit $rc, ${n:-no} mismatches (want exit 1, 6)"
fi
check_ok "invariants after the self-test" "${zram##*/}"
must rmmod swapalloc

note "figures: $tried bad inputs tried"
finish
