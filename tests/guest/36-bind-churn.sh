#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Binding and unbinding under continuous swap-out pressure.
#
# Blackout: one swap device A (16 GiB sparse
# non-rotational virtio disk, --discard=pages: each bind and unbind has an
# O(size) rebuild and drains pending discards) takes every swap-out of a
# writer in a 64M memory cgroup (swapverify in a loop, 96M each run: data
# verified; one pass a run, so that the writer stops soon after it is
# told), while (1) swapalloc is rmmod-ed and insmod-ed 3 times (5
# with SWAPALLOC_STRESS=1) with A the only
# swap device, (2) another device B is swapped on and off twice (bound and
# unbound by swapalloc each time), (3) A itself is swapped off (its pages
# go to B) and on again.  Every get_swap_pages() call is traced (kprobe
# and kretprobe events in tracefs): an order-0 call that returns fewer
# entries than asked while the system had at least 4096 free slots is an
# allocation that failed for no reason; its time, and the longest call,
# are printed per phase.  Asserted: no such call, no call over 2 s, no
# order-0 failure in swapalloc's own counters, no OOM kill, every
# swapverify run verifies, sa_check ok on every bound device after each
# step.
#
# attach/bind race: swapon/swapoff of two devices of different
# sizes (64 and 160 MiB, so the swap type they share changes size) races
# against insmod/rmmod for 10 s (CHURN_RACE_SECS; 300 in make stress), the
# writer still running; after every insmod and at the end, each device
# swapalloc shows in `devices` must have the cluster count and slot total
# of its /proc/swaps size, and sa_check must be ok.
#
# insmod during a swapoff (found by make stress): A holds 64M (128M in
# make stress) of the pages
# of a process in a 32M memory cgroup (CHURN_SWAPOFF_FILL) and D is swapped
# on; swapoff A runs (its pages go back to the cgroup, and out to D), and
# swapalloc is loaded once it has begun.  insmod must return, with C
# bound, while A still holds pages: before, binding waited for the mutex
# swapoff holds through try_to_unuse().  The held data must read back.
#
# vm: --mem 1G --disk a0:16G --disk b0:128M --disk c0:64M --disk d0:160M --timeout 900
. "$(dirname "$0")/../lib/guest.sh"

verify=$(tool swapverify) || { fail "swapverify built"; finish; }
fill=$(tool swapfill) || { fail "swapfill built"; finish; }
ko=$SWAPALLOC_TOP/swapalloc.ko
dbg=/sys/kernel/debug/swapalloc
tr=/sys/kernel/tracing
res=/mnt/out/results
mkdir -p "$res"
max_lat_ms=${CHURN_MAX_LATENCY_MS:-2000}
race_secs=${CHURN_RACE_SECS:-10}
churns=3
[ "${SWAPALLOC_STRESS:-0}" != 1 ] || churns=5
# 64M: swapoff takes about 5 s under TCG, insmod returns in under 1 s.
off_fill=${CHURN_SWAPOFF_FILL:-64M}
[ "${SWAPALLOC_STRESS:-0}" != 1 ] || off_fill=${CHURN_SWAPOFF_FILL:-128M}

disk() {
	local d
	d=$(find_disk "$1") && set_rotational "$d" 0 && mkswap "$d" >/dev/null && echo "$d"
}
A=$(disk a0) && B=$(disk b0) && C=$(disk c0) && D=$(disk d0) ||
	{ fail "disks"; finish; }
an=${A##*/}

check_dev() {
	local name=$1 dev=${2##*/} r
	r=$(sa_check "$dev")
	[ "$r" = ok ] && pass "$name: sa_check $dev" || fail "$name: sa_check $dev" "$r"
}

# alloc_fail0 DEV: swapalloc's order-0 failures on DEV so far.
alloc_fail0() {
	awk 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$1 == 0 { print $c["fail"] }' "$dbg/$1/alloc" 2>/dev/null
}
fails0=0
add_fails() { local f; f=$(alloc_fail0 "$1"); fails0=$((fails0 + ${f:-0})); }

# --- tracing every get_swap_pages() call
if ! grep -qE ' [tT] get_swap_pages$' /proc/kallsyms; then
	fail "get_swap_pages traceable" "not in /proc/kallsyms"
	finish
fi
echo 8192 > $tr/buffer_size_kb
gsp_trace_on || { fail "get_swap_pages traceable" "cannot add kprobe events"; finish; }
pass "get_swap_pages traceable"
phase() { echo "phase $1" > $tr/trace_marker; note "phase $1"; }

# --- the writer: swapverify runs in a 64M memory cgroup until /tmp/stop
cg=$(memcg churn 64M)
oom0=$(awk '$1 == "oom_kill" { print $2 }' /proc/vmstat)
writer() {
	repeat_until_stop /tmp/writer.log /tmp/writer.runs \
		"${in_memcg[@]}" "$cg" "$verify" -q -s 96M -c 32M -f 4k -i 1
}

swapon --discard=pages "$A" || { fail "swapon --discard=pages $A"; finish; }
insmod "$ko" || { fail "insmod"; finish; }
check_dev "start" "$A"
rm -f /tmp/stop /tmp/writer.log /tmp/writer.runs
writer &
wpid=$!
sleep 6

# (1) the module comes and goes with A the only swap device.  Unbinding
# drains swapalloc's pending discards, binding waits for the builtin's:
# the writer frees clusters all the time.
phase module-churn
for ((i = 1; i <= churns; i++)); do
	add_fails "$an"
	note "module churn $i: rmmod with $(awk 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } { print $c["pending"] }' "$dbg/$an/discard") discards pending"
	rmmod swapalloc || fail "module churn $i: rmmod"
	sleep 1
	insmod "$ko" || fail "module churn $i: insmod"
	check_dev "module churn $i" "$A"
	sleep 1
done

# (2) another device is swapped on (and bound) and off
phase other-device
for i in 1 2; do
	swapon "$B" || fail "other device $i: swapon $B"
	sleep 2
	check_dev "other device $i" "$B"
	swapoff "$B" || fail "other device $i: swapoff $B"
	sleep 1
done

# (3) the bound device itself goes off and on; B takes the pages meanwhile
phase bound-device
swapon "$B" || fail "bound device: swapon $B"
sleep 2
add_fails "$an"
if swapoff "$A"; then pass "bound device: swapoff $A under pressure"
else fail "bound device: swapoff $A under pressure"; fi
sleep 1
swapon --discard=pages "$A" || fail "bound device: swapon $A again"
sleep 2
check_dev "bound device" "$A"
check_dev "bound device" "$B"
add_fails "${B##*/}"
swapoff "$B" || fail "bound device: swapoff $B"
sleep 2
phase end

# --- (4) attach/bind race: swap types reused with a different size
devices_match() {
	# Every swapalloc row of `devices` against /proc/swaps: clusters =
	# ceil((size + 1 header slot) / 512), used + free + held = size (in
	# slots): free leaves out the slots held while they are discarded.
	awk 'FNR == 1 { file++ } file == 1 && FNR > 1 { n = $1; sub(".*/", "", n); sz[n] = $3 / 4 }
		file == 2 && FNR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
		file == 2 && FNR > 1 && $c["owner"] == "swapalloc" && ($1 in sz) {
			want = int((sz[$1] + 1 + 511) / 512)
			slots = $c["used"] + $c["free"] + $c["held"]
			if ($c["clusters"] != want || slots != sz[$1])
				printf "%s: %s clusters, %s slots; /proc/swaps says %d slots (%d clusters)\n",
					$1, $c["clusters"], slots, sz[$1], want }' /proc/swaps "$dbg/devices"
}
phase race
mismatch=0
end=$((SECONDS + race_secs))
(
	while [ $SECONDS -lt $end ]; do
		swapon "$C"; swapoff "$C"; swapon "$D"; swapoff "$D"
	done
) > /tmp/race-swap.log 2>&1 &
spid=$!
loads=0
while [ $SECONDS -lt $end ]; do
	module_loaded swapalloc && rmmod swapalloc
	insmod "$ko" && loads=$((loads + 1))
	m=$(devices_match)
	if [ -n "$m" ]; then
		mismatch=$((mismatch + 1))
		note "after insmod: $m"
	fi
done
wait $spid
module_loaded swapalloc || insmod "$ko"
note "race: $loads insmods against $(grep -c . /tmp/race-swap.log || true) swapon/swapoff complaints"
[ $mismatch -eq 0 ] && pass "race: bound sizes match /proc/swaps after every insmod" ||
	fail "race: bound sizes match /proc/swaps after every insmod" "$mismatch mismatches"
swapon "$D" || fail "race: swapon $D at the end"
m=$(devices_match)
[ -z "$m" ] && pass "race: devices shows the right sizes at the end" ||
	fail "race: devices shows the right sizes at the end" "$m"
sed 's/^/# /' "$dbg/devices"
for d in $(awk 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $c["owner"] == "swapalloc" { print $1 }' "$dbg/devices"); do
	check_dev "race: end" "$d"
done
swapoff "$D" || fail "race: swapoff $D"
phase finished

# --- the writer's verdict
touch /tmp/stop
if wait_bounded 300 $wpid; then :; else fail "writer finished" "still running after 300 s"; fi
runs=$(grep -c . /tmp/writer.runs 2>/dev/null || echo 0)
bad=$(grep -vc ' exit 0$' /tmp/writer.runs 2>/dev/null || true)
note "writer: $runs swapverify runs, $(grep -h 'swapverify: ' /tmp/writer.log | grep -v seed | tail -n 1)"
if [ "$runs" -gt 0 ] && [ "${bad:-0}" -eq 0 ]; then
	pass "data verified in every writer run"
else
	grep -v 'seed' /tmp/writer.log | tail -n 15 | sed 's/^/# /'
	fail "data verified in every writer run" "$bad of $runs runs failed"
fi
oom=$(( $(awk '$1 == "oom_kill" { print $2 }' /proc/vmstat) - oom0 ))
[ "$oom" -eq 0 ] && pass "no OOM kill" || fail "no OOM kill" "$oom OOM kills"

add_fails "$an"
[ "$fails0" -eq 0 ] && pass "swapalloc counted no order-0 failure" ||
	fail "swapalloc counted no order-0 failure" "$fails0 order-0 failures"

# --- what the trace shows
gsp_trace_off "$res/bind-churn-trace.txt"
# Pair each call with its return (same pid); per phase: calls, calls that
# got fewer order-0 entries than asked while >= 4096 slots were free, the
# span from the first to the last of those, the longest call.
awk -v maxlat="$max_lat_ms" "$gsp_awk"'
	/tracing_mark_write: phase / { ph = $NF; order_[++np] = ph; next }
	/sa_gsp_in:/ { p = pid(); t0[p] = ts(); n[p] = val("n"); o[p] = val("order"); fr[p] = val("free"); next }
	/sa_gsp_out:/ {
		p = pid(); if (!(p in t0)) next
		lat = (ts() - t0[p]) * 1000; r = val("ret"); k = ph == "" ? "setup" : ph
		calls[k]++
		if (lat > maxl[k]) maxl[k] = lat
		if (o[p] == 0 && r < n[p] && fr[p] >= 4096) {
			short[k]++
			if (!(k in first)) first[k] = t0[p]
			last[k] = ts()
		}
		delete t0[p]
	}
	END {
		order_[0] = "setup"
		for (i = 0; i <= np; i++) {
			k = order_[i]; if (!(k in calls)) continue
			printf "# %-13s %6d calls, %4d failed with free slots (window %.1f ms), longest %.1f ms\n",
				k, calls[k], short[k], (k in first) ? (last[k] - first[k]) * 1000 : 0, maxl[k]
			ts_ += short[k]; tc += calls[k]; if (maxl[k] > ml) ml = maxl[k]
		}
		printf "TOTAL %d %.1f %d\n", ts_, ml, tc
	}' "$res/bind-churn-trace.txt" > /tmp/trace.sum
grep '^#' /tmp/trace.sum
read -r _ short maxl ncalls <<<"$(grep '^TOTAL' /tmp/trace.sum)"
note "figures: $loads insmods raced swapon/swapoff; ${ncalls:-?} get_swap_pages calls traced, ${short:-?} short with free slots, longest ${maxl:-?} ms"
[ "${short:-x}" = 0 ] && pass "no allocation failed while free slots existed" ||
	fail "no allocation failed while free slots existed" "${short:-?} order-0 get_swap_pages calls came back short"
awk -v a="${maxl:-1e9}" -v b="$max_lat_ms" 'BEGIN { exit !(a < b) }' &&
	pass "longest get_swap_pages under $max_lat_ms ms (${maxl} ms)" ||
	fail "longest get_swap_pages under $max_lat_ms ms" "${maxl:-?} ms"

# --- (5) insmod while another device is swapped off
# 6.12's swapoff holds swap_slots_cache_enable_mutex through try_to_unuse().
# A bind drained the slot caches under that mutex, so an insmod waited in
# D state for the whole swapoff of another device (make stress: "task
# insmod blocked for more than 120 seconds").  Here A holds $off_fill of
# the pages of a process in a 32M memory cgroup, and D is swapped on: A's
# swapoff brings them back into that cgroup, whose reclaim pushes them out
# to D again, as under load.  Once swapoff A has begun, swapalloc is
# loaded: it must be back, with D bound, while A still holds pages.
phase swapoff-insmod
ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
swap_used() { awk -v d="$1" '$1 == d { print $4 }' /proc/swaps; }
must rmmod swapalloc
must swapoff "$A"
must swapon "$A"
offcg=$(memcg swapoff-insmod 32M)
# Not through a subshell: $! must be swapfill's pid (sh execs it).
"${in_memcg[@]}" "$offcg" "$fill" -s "$off_fill" -H -V > /tmp/off-fill.log 2>&1 &
holder=$!
for _ in $(seq 240); do grep -q holding /tmp/off-fill.log && break; sleep 0.5; done
must swapon "$D"
a_used=$(swap_used "$A")
swap_total() { awk '$1 == "SwapTotal:" { print $2 }' /proc/meminfo; }
total_kb=$(swap_total)
note "holder: $(grep swapped /tmp/off-fill.log); $A uses ${a_used:-0} KiB"
t0=$(ms)
swapoff "$A" 2>/tmp/off.err &
offpid=$!
# swapoff clears SWP_WRITEOK right before it takes the mutex and starts
# try_to_unuse(): SwapTotal drops from A's size and D's to D's size plus
# what A still holds (si_swapinfo() counts that in).
for _ in $(seq 200); do
	[ "$(swap_total)" -lt "$total_kb" ] && break
	sleep 0.05
done
t1=$(ms)
insmod "$ko"
rc=$?
left=$(swap_used "$A")
t2=$(ms)
if kill -0 $offpid 2>/dev/null; then running=yes; else running=no; fi
wait_bounded 300 $offpid
orc=$?
t3=$(ms)
note "swapoff $A began emptying it after $((t1 - t0)) ms; insmod took $((t2 - t1)) ms (exit $rc)," \
	"then $A still held ${left:-0} of ${a_used:-0} KiB, swapoff running: $running; swapoff took $((t3 - t0)) ms (exit $orc)"
if [ $rc -eq 0 ] && [ "${a_used:-0}" -gt 0 ] && [ "${left:-0}" -gt 0 ]; then
	pass "insmod during swapoff of $A: back while the swapoff still emptied it"
else
	fail "insmod during swapoff of $A: back while the swapoff still emptied it" \
		"insmod exit $rc; $A held ${left:-0} of ${a_used:-0} KiB when insmod returned"
fi
[ $orc -eq 0 ] && pass "swapoff of $A with swapalloc loaded meanwhile" ||
	fail "swapoff of $A with swapalloc loaded meanwhile" "exit $orc: $(</tmp/off.err)"
check_dev "swapoff-insmod" "$D"
kill -TERM $holder
if wait_bounded 120 $holder && grep -q ' 0 mismatches' /tmp/off-fill.log; then
	pass "swapoff-insmod: held data reads back right ($(tail -n 1 /tmp/off-fill.log))"
else
	fail "swapoff-insmod: held data reads back right" "$(tail -n 1 /tmp/off-fill.log)"
fi
must swapoff "$D"

rmmod swapalloc || fail "final rmmod"
# The kernel's own figure, where it gives one ("swap: swapalloc allocates
# slots of swap area N (allocations waited W us)", "... released ...").
w=$(dmesg -t | sed -n 's/^swap: swapalloc .*allocations waited \([0-9]*\) us.*/\1/p' | sort -n | tail -n 1)
note "kernel log: allocations waited at most ${w:-(not reported)} us in one bind or unbind"
finish
