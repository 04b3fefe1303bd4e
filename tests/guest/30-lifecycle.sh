#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Binding and unbinding under load, full devices and bad input: rmmod and
# insmod while a process swaps, swapoff while another pages out, a device
# that fills up, garbage in module parameters and debugfs writes, and every
# debugfs file read in a loop while swap is busy.  Data is verified
# throughout; a WARN or lockdep report anywhere fails the suite.
#
# vm: --mem 1G --timeout 600
. "$(dirname "$0")/../lib/guest.sh"

verify=$(tool swapverify) || exit 1
ko=$SWAPALLOC_TOP/swapalloc.ko
dbg=/sys/kernel/debug/swapalloc

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

mthp_enable 64

# --- bad module parameters: refused, nothing loaded
# (insmod hands the kernel one string; quotes keep a space inside a value.)
for arg in policy=bogus policy= devices=zram0,,zram1 devices=, 'devices="a b"'; do
	if insmod "$ko" "$arg" 2>/dev/null; then
		fail "insmod $arg refused" "it loaded"
		rmmod swapalloc
	elif grep -q "^swapalloc " /proc/modules; then
		fail "insmod $arg refused" "module left loaded"
	else
		pass "insmod $arg refused"
	fi
done
dmesg | grep -q "swapalloc: policy= must be auto, percpu or global" &&
	pass "bad policy= explained in the kernel log" ||
	fail "bad policy= explained in the kernel log"

# --- rmmod and insmod while a process swaps
zram=$(setup_zram 512M)
insmod "$ko" || { fail "insmod"; finish; }
bg_verify /tmp/v1.log -s 384M -f 64k -i 3
sleep 8
if rmmod swapalloc; then
	pass "rmmod while swapping"
else
	fail "rmmod while swapping" "rmmod failed"
fi
grep -q "^zram0 .* builtin" /proc/swaps 2>/dev/null || true
sleep 4
# Bind a device full of live slots: the state is rebuilt from swap_map.
if insmod "$ko"; then
	pass "insmod while swapping"
	check_ok "rebuilt state matches swap_map" zram0
else
	fail "insmod while swapping"
fi
wait_verify "data intact across rmmod and insmod" /tmp/v1.log
check_ok "invariants after unbind and rebind" zram0

# --- debugfs read in a loop while swapping heavily
bg_verify /tmp/v2.log -s 256M -f 64k -p 2 -i 2
reads=0
while kill -0 "$bgpid" 2>/dev/null; do
	for f in "$dbg"/version "$dbg"/devices "$dbg"/zram0/*; do
		[ "${f##*/}" = reset ] && continue
		cat "$f" > /dev/null || { fail "read $f" "read error"; break 2; }
	done
	reads=$((reads + 1))
done
note "read every debugfs file $reads times"
[ "$reads" -gt 0 ] && pass "debugfs reads during heavy swap" || fail "debugfs reads during heavy swap" "no reads"
wait_verify "data intact while debugfs is read" /tmp/v2.log
check_ok "invariants after debugfs reads" zram0

# --- garbage written to reset: -EINVAL, counters unchanged
before=$(cat "$dbg/zram0/alloc")
# An empty write never reaches the file: "empty" is a lone newline.
for junk in $'\n' "abc" "-1" "2" "1junk" "99999999999999999999" " 1 1" "0x1"; do
	if printf '%s' "$junk" > "$dbg/zram0/reset" 2>/tmp/err; then
		fail "reset '$junk' refused" "write succeeded"
	elif grep -q "Invalid argument" /tmp/err; then
		pass "reset '$junk' refused with EINVAL"
	else
		fail "reset '$junk' refused with EINVAL" "$(cat /tmp/err)"
	fi
done
[ "$(cat "$dbg/zram0/alloc")" = "$before" ] && pass "counters unchanged by garbage" ||
	fail "counters unchanged by garbage"
echo 1 > "$dbg/zram0/reset"
[ "$(awk 'NR > 1 { s += $2 } END { print s + 0 }' "$dbg/zram0/alloc")" = 0 ] &&
	pass "reset 1 zeroes the counters" || fail "reset 1 zeroes the counters"

# --- swapoff while another process pages out
zram1=$(setup_zram 512M)
bg_verify /tmp/v3.log -s 384M -f 64k -i 3
sleep 6
if swapoff "$zram"; then
	pass "swapoff of a bound device while another process pages out"
else
	note "swapoff $zram failed (not enough memory or swap elsewhere); that is allowed"
	pass "swapoff of a bound device while another process pages out"
fi
wait_verify "data intact across swapoff" /tmp/v3.log
check_ok "invariants of the remaining device" zram1
swapoff_all
echo 1 > /sys/block/zram0/reset
echo 1 > /sys/block/zram1/reset

# --- a device that fills up: allocations fail cleanly
small=$(setup_zram 24M)
name=${small##*/}
bg_verify /tmp/v4.log -s 128M -f 64k -n
wait "$bgpid" && pass "full device: data intact" || {
	sed 's/^/# /' /tmp/v4.log | tail; fail "full device: data intact" "$(tail -n 1 /tmp/v4.log)"; }
fails=$(awk 'NR > 1 { s += $4 } END { print s + 0 }' "$dbg/$name/alloc")
note "full device: $fails failed allocations"
[ "$fails" -gt 0 ] && pass "full device: allocations failed cleanly" ||
	fail "full device: allocations failed cleanly" "no failures counted"
check_ok "full device: invariants" "$name"
swapoff "$small"

rmmod swapalloc && pass "final rmmod" || fail "final rmmod"
finish
