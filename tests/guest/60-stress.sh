#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make stress only: 4 vCPUs, four devices at once (zram, a non-rotational
# disk, a rotational disk, a discard disk), four swapverify workers mixing
# 4K and 64K folios for a bounded time (STRESS_SECONDS, default 300),
# while one loop swaps the devices off and on again in turn, another
# unloads and reloads the module, and a third reads every bound device's
# check, which must say ok.  Every swapoff must succeed; data is verified
# throughout.  Prints its figures: GiB verified, workers, devices,
# swapoff/swapon and rmmod/insmod cycles, checks read, mismatches.
#
# vm: --smp 4 --mem 2G --disk ssd0:384M --disk rot0:384M --disk disc0:384M --timeout 1500
# stress-only
. "$(dirname "$0")/../lib/guest.sh"

verify=$(tool swapverify) || { fail "infrastructure: swapverify built"; finish; }
ko=$SWAPALLOC_TOP/swapalloc.ko
dbg=/sys/kernel/debug/swapalloc
ctl=/sys/kernel/swapalloc
secs=${STRESS_SECONDS:-300}
mthp_enable 64 || fail "infrastructure: 64K mTHP enabled" "no hugepages-64kB"
zram=$(setup_zram 384M) || { fail "setup_zram 384M"; finish; }
ssd=$(find_disk ssd0) && rot=$(find_disk rot0) && disc=$(find_disk disc0) ||
	{ fail "infrastructure: disks attached"; finish; }
must set_rotational "$ssd" 0 && must set_rotational "$rot" 1 && must set_rotational "$disc" 0 ||
	finish
for d in "$ssd" "$rot" "$disc"; do must mkswap "$d" > /dev/null || finish; done
declare -A opts=([$zram]="" [$ssd]="" [$rot]="" [$disc]="--discard=pages")
for d in "$ssd" "$rot" "$disc"; do
	# shellcheck disable=SC2086 # opts may be empty
	must swapon ${opts[$d]} "$d" || finish
done
must insmod "$ko" || finish
devs=("$zram" "$ssd" "$rot" "$disc")
note "devices: ${devs[*]}; $(awk 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$c["owner"] == "swapalloc" { n++ } END { print n + 0 }' "$dbg/devices") bound"

end=$((SECONDS + secs))
# worker N FOLIO: swapverify runs of 96M (2 processes) until the deadline.
worker() {
	local n=$1 folio=$2 runs=0 rc
	while [ $SECONDS -lt $end ]; do
		rc=0
		"$verify" -s 96M -f "$folio" -p 2 -i 2 -q > "/tmp/w$n.log" 2>&1 || rc=$?
		tail -n 1 "/tmp/w$n.log" >> "/tmp/w$n.all"
		if [ $rc -ne 0 ]; then
			echo "worker $n run $runs: exit $rc: $(tail -n 1 "/tmp/w$n.log")" >> /tmp/stress.fail
			[ $rc -eq 1 ] && return 1
		fi
		runs=$((runs + 1))
	done
}
rm -f /tmp/stress.fail /tmp/w*.all
pids=()
for n in 0 1 2 3; do
	folio=4k
	[ $((n % 2)) -eq 1 ] && folio=64k
	worker $n $folio &
	pids+=($!)
done

# swapoff/swapon churn: each device in turn (the other three keep swapping).
( i=0
  while [ $SECONDS -lt $end ]; do
	d=${devs[$((i % 4))]}
	if ! swapoff "$d" 2>/tmp/so.err; then
		echo "swapoff $d failed: $(</tmp/so.err)" >> /tmp/stress.fail
	else
		# shellcheck disable=SC2086
		swapon ${opts[$d]} "$d" 2>/tmp/so.err ||
			echo "swapon $d failed: $(</tmp/so.err)" >> /tmp/stress.fail
	fi
	echo $((++i)) > /tmp/swapcycles
	sleep 3
  done ) &
churn=$!

# rmmod/insmod churn.
( i=0
  while [ $SECONDS -lt $end ]; do
	sleep 7
	if rmmod swapalloc 2>/tmp/rm.err; then
		sleep 2
		insmod "$ko" 2>/tmp/rm.err || echo "insmod failed: $(</tmp/rm.err)" >> /tmp/stress.fail
		echo $((++i)) > /tmp/bindcycles
	elif ! grep -q "in use" /tmp/rm.err; then
		echo "rmmod failed: $(</tmp/rm.err)" >> /tmp/stress.fail
	fi
  done ) &
modchurn=$!

# check of every bound device while all that runs.  At least one check per
# 10 s of load in all, and every device checked at least twice: a loop
# starved by slow binds or skipping devices would otherwise pass on nothing.
# (A check under this load takes about 5 s and a device is often swapped
# off or unbound: make stress's 300 s saw 58 checks, 4 of the discard disk.)
checks=0
declare -A nchk=()
while [ $SECONDS -lt $end ]; do
	for c in "$ctl"/*/check; do
		[ -e "$c" ] || continue
		d=${c%/check}
		d=${d##*/}
		res=$(sa_check "$d" 2>&1)
		[ -e "$c" ] || continue		# unbound meanwhile
		checks=$((checks + 1))
		nchk[$d]=$((${nchk[$d]:-0} + 1))
		[ "$res" = ok ] || echo "check $d: $res" >> /tmp/stress.fail
	done
	sleep 1
done

wait_bounded 600 $churn || echo "swap churn did not stop" >> /tmp/stress.fail
wait_bounded 120 $modchurn || echo "module churn did not stop" >> /tmp/stress.fail
wrc=0
for p in "${pids[@]}"; do wait_bounded 600 "$p" || wrc=1; done
module_loaded swapalloc || must insmod "$ko"

gib=$(cat /tmp/w*.all 2>/dev/null | sed -n 's/.*verified \([0-9.]*\) GiB.*/\1/p' | awk '{ s += $1 } END { printf "%.2f", s }')
mism=$(cat /tmp/w*.all 2>/dev/null | sed -n 's/.*, \([0-9]*\) mismatches$/\1/p' | awk '{ s += $1 } END { print s + 0 }')
# Kernel reports so far (vm-run.sh's pattern; it scans the console too).
reports=$(dmesg | grep -aE 'WARNING:|BUG:|Oops|Kernel panic|general protection fault|possible circular locking|possible recursive locking|INFO: inconsistent lock state|lockdep|KASAN|unreferenced object|Call Trace:|soft lockup|blocked for more than|Unable to handle' |
	grep -cv 'RCU lockdep checking is enabled')
note "figures: ${gib} GiB written and verified, 4 workers (2 x 4K, 2 x 64K, 2 processes each), ${#devs[@]} devices," \
	"$(cat /tmp/swapcycles 2>/dev/null || echo 0) swapoff/swapon cycles," \
	"$(cat /tmp/bindcycles 2>/dev/null || echo 0) rmmod/insmod cycles, $checks checks run, $mism mismatches," \
	"$reports kernel reports"
[ "$reports" -eq 0 ] && pass "stress: no kernel report" || fail "stress: no kernel report" "$reports lines, see the console"
if [ -s /tmp/stress.fail ]; then
	sed 's/^/# /' /tmp/stress.fail | head -n 20
	fail "stress: $secs s of load and churn" "$(wc -l < /tmp/stress.fail) problems, first: $(head -n 1 /tmp/stress.fail)"
elif [ $wrc -ne 0 ] || [ "$mism" -ne 0 ]; then
	fail "stress: $secs s of load and churn" "workers: status $wrc, $mism mismatches"
else
	pass "stress: $secs s of load and churn, $gib GiB verified, 0 mismatches"
fi
want=$((secs / 10))
few=
for d in "${devs[@]}"; do
	n=${nchk[${d##*/}]:-0}
	[ "$n" -ge 2 ] || few="$few ${d##*/}: $n"
done
if [ -n "$few" ]; then
	fail "stress: every device checked under load" "fewer than 2 checks:$few"
elif [ "$checks" -lt "$want" ]; then
	fail "stress: every device checked under load" "$checks checks in $secs s, want at least $want"
else
	pass "stress: every device checked under load ($checks checks, each device at least twice)"
fi
for d in "${devs[@]}"; do
	c=$(sa_check "${d##*/}")
	[ "$c" = ok ] || fail "${d##*/}: invariants after the stress" "$c"
done
for d in "${devs[@]}"; do
	must swapoff "$d" && pass "final swapoff of $d"
done
must rmmod swapalloc
finish
