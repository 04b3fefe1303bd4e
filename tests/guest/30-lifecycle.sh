#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Binding and unbinding under load, full devices and bad input: binding
# drains the swap slot caches the builtin allocator left slots in, rmmod and
# insmod while a process swaps, swapoff while another pages out, a device
# that fills up, garbage in module parameters and sysfs writes, and every
# debugfs file read in a loop while swap is busy.  Data is verified
# throughout; a WARN or lockdep report anywhere fails the suite.  make
# stress (SWAPALLOC_STRESS=1) moves three times the volume.
#
# vm: --mem 1G --timeout 600
. "$(dirname "$0")/../lib/guest.sh"

verify=$(tool swapverify) || exit 1
fill=$(tool swapfill) || exit 1
ko=$SWAPALLOC_TOP/swapalloc.ko
dbg=/sys/kernel/debug/swapalloc
ctl=/sys/kernel/swapalloc
if [ "${SWAPALLOC_STRESS:-0}" = 1 ]; then
	big="-s 384M -i 3" busy="-s 256M -p 2 -i 2"
else
	big="-s 192M -i 2" busy="-s 96M -p 2 -i 2"
fi

# busy_still NAME: fail NAME if the background writer has already ended
# (the step it names did not happen under load).
busy_still() {
	kill -0 "$bgpid" 2>/dev/null && return 0
	fail "$1" "the writer had already finished: the step ran without load"
	return 1
}

# bg_verify LOG ARGS...: swapverify in the background; sets $bgpid.
bg_verify() {
	local log=$1
	shift
	"$verify" -q "$@" > "$log" 2>&1 &
	bgpid=$!
}

wait_verify() {
	local name=$1 log=$2
	if wait "$bgpid"; then
		note "$name: $(tail -n 1 "$log")"
		pass "$name"
	else
		sed 's/^/# /' "$log" | tail -n 15
		fail "$name" "$(tail -n 1 "$log")"
	fi
}

check_ok() {
	local name=$1 dev=$2 res
	res=$(sa_check "$dev")
	[ "$res" = ok ] && pass "$name" || fail "$name" "$res"
}

mthp_enable 64 || fail "infrastructure: 64K mTHP enabled" "no hugepages-64kB"

# --- bad module parameters: refused, nothing loaded
# (insmod hands the kernel one string; quotes keep a space inside a value.)
for arg in policy=bogus policy= devices=zram0,,zram1 devices=, 'devices="a b"'; do
	if insmod "$ko" "$arg" 2>/dev/null; then
		fail "insmod $arg refused" "it loaded"
		rmmod swapalloc
	elif module_loaded swapalloc; then
		fail "insmod $arg refused" "module left loaded"
	else
		pass "insmod $arg refused"
	fi
done
dmesg | grep -q "swapalloc: policy= must be auto, percpu or global" &&
	pass "bad policy= explained in the kernel log" ||
	fail "bad policy= explained in the kernel log"

# --- binding drains the swap slot caches
# The builtin allocator hands order-0 slots to the per-CPU swap slot
# caches, 64 at a time, and frees come back through them: after a process
# swapped 4K pages out and exited, the caches still hold slots of the
# device, and /proc/swaps counts them as used.  Binding the device must
# give them back (patches/0009): ->bind() counts them as used, and each
# CPU's set kept a cluster from 64K folios (40-thp, 2.7-13 % fallback).
zram=$(setup_zram 512M) || { fail "setup_zram 512M"; finish; }
used() { awk -v d="$1" '$1 == d { print $4 }' /proc/swaps; }
# 1001 pages: not a multiple of the caches' batch of 64, so some are left.
"$fill" -s 4004K > /tmp/fill.log 2>&1 || fail "swapfill -s 4004K" "$(tail -n 1 /tmp/fill.log)"
u0=$(used "$zram")
if [ "${u0:-0}" -gt 0 ]; then
	pass "infrastructure: the swap slot caches hold slots after the builtin allocator's 4K swap-out (${u0} KiB used, no process swapped)"
else
	fail "infrastructure: the swap slot caches hold slots after the builtin allocator's 4K swap-out" "${u0:-no} KiB used: $(tail -n 1 /tmp/fill.log)"
fi
insmod "$ko" || { fail "insmod"; finish; }
u1=$(used "$zram")
[ "${u1:-x}" = 0 ] && pass "binding drains the swap slot caches (${u0} KiB used before, 0 after)" ||
	fail "binding drains the swap slot caches" "${u0} KiB used before, ${u1:-?} KiB after"

# --- rmmod and insmod while a process swaps
# The writer runs again and again until both steps are done: one run of a
# fixed volume once ended before the insmod (a step then without load).
rm -f /tmp/stop /tmp/v1.log /tmp/v1.runs
# shellcheck disable=SC2086 # $big: several swapverify options
repeat_until_stop /tmp/v1.log /tmp/v1.runs "$verify" -q $big -f 64k &
bgpid=$!
sleep 5
busy_still "rmmod while swapping" || true
if rmmod swapalloc; then
	pass "rmmod while swapping"
else
	fail "rmmod while swapping" "rmmod failed"
fi
# Unbound: no module, no debugfs, the device still swapping (builtin).
if module_loaded swapalloc || [ -e "$dbg" ]; then
	fail "rmmod unbinds" "module or $dbg still there"
elif ! grep -q "^$zram " /proc/swaps; then
	fail "rmmod unbinds" "$zram is no longer in /proc/swaps"
else
	pass "rmmod unbinds; $zram swaps on with the builtin allocator"
fi
sleep 3
# Bind a device full of live slots: the state is rebuilt from swap_map.
busy_still "insmod while swapping" || true
if insmod "$ko"; then
	pass "insmod while swapping"
	check_ok "rebuilt state matches swap_map" zram0
else
	fail "insmod while swapping"
fi
touch /tmp/stop
wait "$bgpid"
runs=$(wc -l < /tmp/v1.runs)
bad=$(grep -v ' exit 0$' /tmp/v1.runs | head -n 1)
if [ -z "$bad" ] && [ "$runs" -gt 0 ]; then
	note "data intact across rmmod and insmod: $runs runs, the last: $(tail -n 1 /tmp/v1.log)"
	pass "data intact across rmmod and insmod ($runs runs)"
else
	sed 's/^/# /' /tmp/v1.log | tail -n 15
	fail "data intact across rmmod and insmod" "${bad:-no run}: $(tail -n 1 /tmp/v1.log)"
fi
check_ok "invariants after unbind and rebind" zram0

# --- debugfs read in a loop while swapping heavily
bg_verify /tmp/v2.log $busy -f 64k
reads=0
bad_check=0
while kill -0 "$bgpid" 2>/dev/null; do
	for f in "$dbg"/version "$dbg"/devices "$dbg"/zram0/*; do
		cat "$f" > /dev/null || { fail "read $f" "read error"; break 2; }
	done
	# The invariant check runs under the lock: ok, even now.
	out=$(sa_check zram0 2>&1)
	if [ "$out" != ok ]; then
		fail "check ok during heavy swap" "$out"
		bad_check=1
		break
	fi
	reads=$((reads + 1))
done
note "read every debugfs file $reads times"
if [ $bad_check -eq 0 ]; then
	[ "$reads" -gt 0 ] && pass "check ok during heavy swap ($reads reads)" ||
		fail "check ok during heavy swap" "no check ran: the writer had already finished"
fi
[ "$reads" -gt 0 ] && pass "debugfs reads during heavy swap" || fail "debugfs reads during heavy swap" "no reads"
wait_verify "data intact while debugfs is read" /tmp/v2.log
check_ok "invariants after debugfs reads" zram0

# --- garbage written to reset: -EINVAL, counters unchanged
before=$(<"$dbg/zram0/alloc")
# An empty write never reaches the file: "empty" is a lone newline.
for junk in $'\n' "abc" "-1" "2" "1junk" "99999999999999999999" " 1 1" "0x1"; do
	if printf '%s' "$junk" > "$ctl/zram0/reset" 2>/tmp/err; then
		fail "reset '$junk' refused" "write succeeded"
	elif grep -q "Invalid argument" /tmp/err; then
		pass "reset '$junk' refused with EINVAL"
	else
		fail "reset '$junk' refused with EINVAL" "$(</tmp/err)"
	fi
done
[ "$(<"$dbg/zram0/alloc")" = "$before" ] && pass "counters unchanged by garbage" ||
	fail "counters unchanged by garbage"
echo 1 > "$ctl/zram0/reset"
[ "$(awk 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{ s += $c["requests"] } END { print s + 0 }' "$dbg/zram0/alloc")" = 0 ] &&
	pass "reset 1 zeroes the counters" || fail "reset 1 zeroes the counters"

# --- swapoff while another process pages out
zram1=$(setup_zram 512M) || fail "setup_zram 512M (second device)"
bg_verify /tmp/v3.log $big -f 64k
sleep 4
busy_still "swapoff of a bound device while another process pages out" || true
# 1G of RAM and a second 512M device: swapoff has room, so it must work.
if swapoff "$zram" 2>/tmp/swapoff.err; then
	# The kernel takes the device off /proc/swaps (and so off `devices`,
	# which walks the same list) before swapoff returns: what swapalloc
	# itself must have dropped by then is its record and directory
	# (swapalloc_rec_detach()).
	if [ -e "$dbg/${zram##*/}" ]; then
		fail "swapoff of a bound device while another process pages out" "$dbg/${zram##*/} still there"
	else
		pass "swapoff of a bound device while another process pages out"
	fi
else
	fail "swapoff of a bound device while another process pages out" "$(</tmp/swapoff.err)"
fi
wait_verify "data intact across swapoff" /tmp/v3.log
check_ok "invariants of the remaining device" zram1
swapoff_all || fail "swapoff of every device" "see above"
must eval 'echo 1 > /sys/block/zram0/reset'
must eval 'echo 1 > /sys/block/zram1/reset'

# --- a device that fills up: allocations fail cleanly
small=$(setup_zram 24M) || { fail "setup_zram 24M"; finish; }
name=${small##*/}
bg_verify /tmp/v4.log -s 128M -f 64k -n
wait "$bgpid" && pass "full device: data intact" || {
	sed 's/^/# /' /tmp/v4.log | tail; fail "full device: data intact" "$(tail -n 1 /tmp/v4.log)"; }
fails=$(awk 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{ s += $c["fail"] } END { print s + 0 }' "$dbg/$name/alloc")
note "full device: $fails failed allocations"
[ "$fails" -gt 0 ] && pass "full device: allocations failed cleanly" ||
	fail "full device: allocations failed cleanly" "no failures counted"
check_ok "full device: invariants" "$name"
must swapoff "$small"

# --- rmmod gives every slot back: /proc/swaps' Used is the same across it
# A process holds 32M paged out to a bound device; rmmod hands the device
# to the builtin allocator, which must count the same slots in use.  A
# cluster the module still holds at unbind is caught by the kernel's
# "swap: swapalloc still holds" line (a kernel report, seen with one
# planted in ->quiesce()); this Used does not show it while held slots
# count as free in inuse_pages.
keep=$(setup_zram 64M) || { fail "setup_zram 64M"; finish; }
"$fill" -s 32M -H > /tmp/keep.log 2>&1 &
kpid=$!
wait_line /tmp/keep.log 'swapfill: holding' $kpid || true
ub=$(used "$keep")
rmmod swapalloc && pass "final rmmod" || fail "final rmmod"
ua=$(used "$keep")
if [ "${ub:-0}" -gt 0 ] && [ "${ua:-x}" = "$ub" ]; then
	pass "rmmod leaves $keep's Used as it was (${ub} KiB)"
else
	fail "rmmod leaves $keep's Used as it was" "${ub:-?} KiB before rmmod, ${ua:-?} KiB after: $(tail -n 1 /tmp/keep.log)"
fi
kill -TERM $kpid 2>/dev/null
wait $kpid
must swapoff "$keep"
finish
