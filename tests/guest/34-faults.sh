#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fault injection into insmod (every device bound) and into swapon with the
# module loaded (the device bound at swapon): failslab and fail_page_alloc
# fail the Nth allocation of the one call, for N = 1, 2, ... until the call
# gets through without reaching N (tests/tools/failnth writes
# /proc/thread-self/fail-nth right before finit_module(2) or swapon(2), so
# only that call of that task sees the fault).  Each sweep covers the
# allocation sites of its call in turn: the module's init, attach, the
# cluster rebuild of bind, and what the kernel allocates around them.
# After every call, whatever it returned:
#  - a clean outcome: the module is loaded or not (nothing in between:
#    no debugfs directory without the module), /proc/swaps keeps its
#    devices, every device has one row in `devices`; a device left builtin
#    (by a failed bind or by devices=) has no directory, or one whose
#    policy file says [builtin]; a bound one passes `check`
#  - rmmod (when loaded) and swapoff (when swapped on) succeed
# Then: data held on both devices all along reads back right; a device
# whose bind failed swaps for the builtin allocator, data verified; a
# clean insmod binds every device; no WARN, oops or lockdep report (the
# kernel log of the sweeps is audited here: allocation failure reports,
# which carry a stack, are expected; they are kept off the console, which
# vm-run.sh scans).  A run with probability 100 (task-filter, make-it-fail)
# and random ones at 10 % follow.  kmemleak's findings are printed when
# the kernel has it (KERNEL_FLAVOR=debug).
# Figures: points swept, faults injected, outcomes.
#
#
# vm: --mem 1G --disk rot0:48M --timeout 900
. "$(dirname "$0")/../lib/guest.sh"
. "$SWAPALLOC_TOP/scripts/kernel-reports.sh"

fn=$(tool failnth) || { fail "infrastructure: failnth built"; finish; }
fill=$(tool swapfill) || { fail "infrastructure: swapfill built"; finish; }
verify=$(tool swapverify) || { fail "infrastructure: swapverify built"; finish; }
# From tmpfs: every insmod reads the whole module.
cp "$SWAPALLOC_TOP/swapalloc.ko" /tmp/swapalloc.ko || { fail "infrastructure: copy swapalloc.ko"; finish; }
ko=/tmp/swapalloc.ko
dbg=/sys/kernel/debug/swapalloc
ctl=/sys/kernel/swapalloc
fdbg=/sys/kernel/debug
# make check binds one device in the insmod sweep (the other one's attach
# and bind run the same code), make stress both.
params=
for f in "$fdbg/failslab" "$fdbg/fail_page_alloc" /proc/thread-self/fail-nth; do
	[ -e "$f" ] || { fail "infrastructure: fault injection" "no $f (CONFIG_FAILSLAB, FAIL_PAGE_ALLOC, FAULT_INJECTION_DEBUG_FS)"; finish; }
done
pass "infrastructure: failslab, fail_page_alloc and fail-nth present"

# The whole kernel log, for the audit at the end.
cat /dev/kmsg > /tmp/kmsg.log &
kmsg=$!

# arm: fail-nth reaches every slab and page allocation, with or without
# __GFP_DIRECT_RECLAIM, of any order (__GFP_NOFAIL ones excepted).
arm() {
	local s=$fdbg/failslab p=$fdbg/fail_page_alloc
	echo 0 > $s/probability; echo 0 > $p/probability
	echo 1 > $s/verbose; echo 1 > $p/verbose
	echo N > $s/ignore-gfp-wait; echo N > $p/ignore-gfp-wait
	echo N > $p/ignore-gfp-highmem
	echo N > $s/cache-filter; echo 0 > $p/min-order
}
disarm() {
	echo 0 > $fdbg/failslab/probability; echo 0 > $fdbg/fail_page_alloc/probability
	echo Y > $fdbg/failslab/ignore-gfp-wait; echo Y > $fdbg/fail_page_alloc/ignore-gfp-wait
	echo N > $fdbg/failslab/cache-filter; echo 1 > $fdbg/fail_page_alloc/min-order
}

# Allocation failure reports (a stack each) are expected from here on: off
# the console, into /tmp/kmsg.log.
read -r console_level _ < /proc/sys/kernel/printk
quiet() { echo 4 > /proc/sys/kernel/printk; }
loud() { echo "$console_level" > /proc/sys/kernel/printk; }

# --- devices, with data held on each
rot=$(find_disk rot0) || { fail "infrastructure: find_disk rot0"; finish; }
must set_rotational "$rot" 1 && must mkswap "$rot" > /dev/null && must swapon -p 20 "$rot" || finish
"$fill" -s 16M -H -V > /tmp/hold-rot.log 2>&1 &
hold_rot=$!
zram=$(setup_zram 48M -p 30) || { fail "setup_zram 48M"; finish; }
[ "${SWAPALLOC_STRESS:-0}" = 1 ] || params=devices=${zram##*/}
for _ in $(seq 120); do grep -q holding /tmp/hold-rot.log && break; sleep 0.5; done
"$fill" -s 16M -H -V > /tmp/hold-zram.log 2>&1 &
hold_zram=$!
for _ in $(seq 120); do grep -q holding /tmp/hold-zram.log && break; sleep 0.5; done
spare=$(setup_zram 32M) && must swapoff "$spare" || { fail "setup_zram 32M"; finish; }
note "devices: $rot (rotational, $(head -n 1 /tmp/hold-rot.log)), $zram ($(head -n 1 /tmp/hold-zram.log)), $spare for swapon"
# read_swaps: $swaps, the devices of /proc/swaps (no fork: this runs
# after every call).
read_swaps() {
	local d _r
	swaps=
	while read -r d _r; do [ "$d" = Filename ] || swaps+="$d "; done < /proc/swaps
}
read_swaps
swaps0=$swaps

problems=0
# bad LABEL WHY: one consistency failure (the first 10 are printed).
bad() {
	problems=$((problems + 1))
	[ $problems -le 10 ] && fail "$1" "$2"
	return 0
}

# state_ok LABEL: the outcome is clean (see the header); rmmod if loaded.
# Counts devices left builtin by a failed bind in $builtin_left.
state_ok() {
	local label=$1 name owner oc=-1 i swaps
	local -a f
	read_swaps
	[ "$swaps" = "$swaps0" ] || bad "$label: /proc/swaps unchanged" "'$swaps' was '$swaps0'"
	if ! module_loaded swapalloc; then
		[ ! -e "$dbg" ] || bad "$label: nothing left of a module that did not load" "$dbg exists"
		return 0
	fi
	local rows=0 devs
	read -ra devs <<<"$swaps"
	if [ ! -e "$dbg/devices" ]; then
		# debugfs is best effort: a failed debugfs_create_*() costs the
		# files, not the load (Documentation/filesystems/debugfs.rst).
		no_debugfs=$((no_debugfs + 1))
		rows=${#devs[@]}
	fi
	[ -e "$dbg/devices" ] && while read -ra f; do
		# The header row names the columns.
		if [ $oc -lt 0 ]; then
			for i in "${!f[@]}"; do [ "${f[$i]}" = owner ] && oc=$i; done
			continue
		fi
		name=${f[0]} owner=${f[$oc]}
		rows=$((rows + 1))
		if [ "$owner" = swapalloc ]; then
			if [ ! -e "$ctl/$name/check" ]; then
				no_debugfs=$((no_debugfs + 1))
				continue
			fi
			res=$(sa_check "$name") || bad "$label: $name bound, check ok" "$res"
		elif ! builtin_dir_ok "$name"; then
			bad "$label: $name left builtin: its directory's policy says [builtin]" \
				"$(cat "$ctl/$name/policy" 2>&1)"
		elif [ -z "$params" ] || [[ ",${params#devices=}," == *",$name,"* ]]; then
			builtin_left=$((builtin_left + 1))
		fi
	done < "$dbg/devices"
	[ $rows -eq ${#devs[@]} ] || bad "$label: a row per device" "$(tr '\n' '|' < "$dbg/devices")"
	rmmod swapalloc 2>/tmp/rm.err || bad "$label: rmmod" "$(</tmp/rm.err)"
	[ ! -e "$dbg" ] || bad "$label: rmmod removed $dbg" "it is still there"
}

# parse LINE: sets ret, injected, points from a failnth line.
parse() {
	local w
	ret= injected= points=
	for w in $1; do
		case $w in
		ret=*) ret=${w#ret=} ;;
		injected=*) injected=${w#injected=} ;;
		points=*) points=${w#points=} ;;
		esac
	done
	[ -n "$ret" ] && [ -n "$injected" ] && [ -n "$points" ]
}

declare -A outcome
total_injected=0 no_debugfs=0

# try_insmod KIND N: insmod failing at point N; counts the outcome, checks
# it (state_ok), sets $last to loaded, refused or through (no fault).
try_insmod() {
	local line
	line=$("$fn" -n "$2" insmod "$ko" "$params" 2>&1)
	if ! parse "$line"; then
		bad "insmod, $1 point $2" "failnth: $line"
		last=refused
		return
	fi
	if [ "$injected" = 0 ]; then
		last=through
		[ "$ret" = 0 ] || bad "insmod, $1 point $2: no fault injected, loads" "$line"
	elif [ "$ret" = 0 ]; then
		last=loaded inj=$((inj + 1)) ok=$((ok + 1))
	else
		last=refused inj=$((inj + 1)) errs=$((errs + 1)) outcome[$ret]=1
	fi
	tried_n=$((tried_n + 1))
	state_ok "insmod, $1 point $2 ($line)"
}

# sweep_insmod KIND: count the call's points (P), then fail each one
# from above P down: the kernel's work after the module's init, the init
# itself with every device's attach and bind, down to the first point of
# its alloc_workqueue() (the init's first allocation; the module logs
# "cannot allocate its workqueue").  Below that the module loader works,
# whose trace-event setup WARNs on -ENOMEM (event_define_fields() in
# kernel/trace/trace_events.c, a panic with panic_on_warn), so it is not
# swept; FAULT_LOADER_POINTS=N fails its first N points too.
sweep_insmod() {
	local kind=$1 n line P p0=$problems t0=$SECONDS wq=0 c0 c1 top lo
	inj=0 ok=0 errs=0 tried_n=0 builtin_left=0
	arm
	line=$("$fn" -c insmod "$ko" "$params" 2>&1)
	parse "$line" && [ "$ret" = 0 ] || { bad "insmod $kind count" "$line"; disarm; state_ok x; return; }
	P=$points
	state_ok "insmod, $kind points counted"
	# The count varies between loads (by a few on the base kernel, by more
	# than 8 with KASAN and kmemleak allocating): start from a point the
	# load does not reach, found from P + 8 up in steps of 16.
	top=$((P + 8))
	for ((k = 0; k < 8; k++)); do
		try_insmod "$kind" $top
		[ "$last" = through ] && break
		top=$((top + 16))
	done
	[ "$last" = through ] || bad "insmod, $kind: a point past the last within $P + 120" "point $top: $last"
	c0=$(dmesg | grep -c "swapalloc: cannot allocate its workqueue")
	for ((n = top - 1; n >= 1; n--)); do
		try_insmod "$kind" $n
		if [ "$last" = refused ]; then
			c1=$(dmesg | grep -c "swapalloc: cannot allocate its workqueue")
			if [ "$c1" -gt "$c0" ]; then
				wq=$((wq + 1)) c0=$c1
			elif [ $wq -gt 0 ]; then
				break
			fi
		fi
		[ $((top - n)) -lt 400 ] || { bad "insmod, $kind: the module's init starts within 400 points of the end" "no workqueue failure seen"; break; }
	done
	lo=$n
	[ $wq -gt 0 ] || bad "insmod, $kind: a fault in alloc_workqueue() refuses the load, saying so" "not seen"
	for ((n = 1; n <= ${FAULT_LOADER_POINTS:-0}; n++)); do
		try_insmod "$kind" $n
	done
	disarm
	total_injected=$((total_injected + inj))
	note "insmod, $kind: $P points; points $((lo + 1))-$P (the module's init, attach, bind and what follows)" \
		"and ${FAULT_LOADER_POINTS:-0} of the loader's failed in turn: $tried_n calls, $inj faults injected," \
		"$ok loaded anyway ($builtin_left devices left builtin), $errs refused (${!outcome[*]};" \
		"$wq in alloc_workqueue()), $((SECONDS - t0)) s"
	[ $inj -gt 0 ] || bad "insmod, $kind: the sweep injects faults" "no fault injected"
	[ $problems -eq $p0 ] && pass "insmod, each $kind allocation point of the module's init and bind ($((lo + 1))-$P) failed in turn: a clean outcome every time"
	unset outcome; declare -gA outcome
}

# builtin_dir_ok NAME: a device left builtin has no directory, or one whose
# policy file says [builtin]; or none at all where a fault failed its
# creation (debugfs is best effort: the files go, the device stays).
builtin_dir_ok() {
	local p=
	[ ! -e "$dbg/$1" ] || [ ! -e "$ctl/$1/policy" ] && return 0
	read -r p < "$ctl/$1/policy" 2>/dev/null
	[[ $p == *"[builtin]"* ]]
}

# swapon_ok LABEL: after a swapon of $spare that returned $ret: swapped on
# and bound (check ok) or left builtin (no directory; sets $left_builtin),
# then swapoff works; or refused and nothing is left of it.
swapon_ok() {
	local label=$1 name=${spare##*/} row swaps
	left_builtin=0
	row=$(sa_col "$dbg/devices" "$name" owner 2>/dev/null)
	if [ "$ret" = 0 ]; then
		if [ "$row" = swapalloc ] && [ ! -e "$ctl/$name/check" ]; then
			no_debugfs=$((no_debugfs + 1))
		elif [ "$row" = swapalloc ]; then
			res=$(sa_check "$name") || bad "$label: $name check" "$res"
		elif [ "$row" = builtin ] && builtin_dir_ok "$name"; then
			left_builtin=1
		else
			bad "$label: $name bound or builtin" "row owner '$row', $(ls "$dbg")"
		fi
		swapoff "$spare" 2>/tmp/so.err || bad "$label: swapoff" "$(</tmp/so.err)"
	elif [ -n "$row" ] || [ -e "$dbg/$name" ] ||
	     { read_swaps; [[ " $swaps" == *" $spare "* ]]; }; then
		bad "$label: a failed swapon leaves nothing" "row '$row'"
	fi
}

# sweep_swapon KIND: swapon of $spare, module loaded, failing at point 1,
# 2, ... until one is not reached; remembers in $bindfail_n a point where
# the bind failed and swapon succeeded.
sweep_swapon() {
	local kind=$1 n=1 line ok=0 errs=0 inj=0 left=0 p0=$problems t0=$SECONDS
	must insmod "$ko" || return
	arm
	while :; do
		line=$("$fn" -n $n swapon "$spare" 50 2>&1)
		parse "$line" || { bad "swapon, $kind point $n" "failnth: $line"; break; }
		swapon_ok "swapon, $kind point $n ($line)"
		if [ "$injected" = 0 ]; then
			[ "$ret" = 0 ] && [ $left_builtin = 0 ] || bad "swapon with no fault injected binds" "$line"
			break
		fi
		[ $left_builtin = 1 ] && left=$((left + 1)) bindfail_n+=" $n"
		inj=$((inj + 1))
		if [ "$ret" = 0 ]; then ok=$((ok + 1)); else errs=$((errs + 1)); outcome[$ret]=1; fi
		n=$((n + 1))
		[ $n -lt 100000 ] || { bad "swapon $kind sweep ends" "over 100000 points"; break; }
	done
	disarm
	sweep_points=$((n - 1))
	total_injected=$((total_injected + inj))
	note "swapon, $kind: $((n - 1)) points, $inj faults injected: $ok swapped on" \
		"($left left builtin), $errs refused (${!outcome[*]}), $((SECONDS - t0)) s"
	# A swapon that binds allocates at 45 points in every run seen (the
	# kernel's swap_info, swap_map and cluster info, the module's
	# device, clusters and debugfs files): a sweep that ends within 20
	# did not reach the bind (unarmed, fail-nth still fails point 1).
	[ $inj -ge 20 ] || bad "swapon, $kind: the sweep injects faults at 20 points or more" "$inj faults injected"
	[ $problems -eq $p0 ] && pass "swapon with swapalloc loaded, each of $((n - 1)) $kind allocation points failed in turn: a clean outcome every time"
	unset outcome; declare -gA outcome
	state_ok "rmmod after the swapon sweep"
}

quiet
sweep_insmod "slab and page"
bindfail_n=
sweep_swapon "slab and page"
loud

# A device whose bind failed swaps for the builtin allocator.  Which
# allocation a fault point number hits differs from one swapon to the next
# (per-CPU caches and slab refills, kmemleak's and KASAN's own allocations
# in the debug kernel), so the sweep's numbers cannot be replayed: sweep
# again, from a little below the first point where the bind failed, until
# a swapon succeeds with the device left builtin.
if [ -n "$bindfail_n" ]; then
	must insmod "$ko"
	first=$(echo $bindfail_n | tr ' ' '\n' | sort -n | head -n 1)
	from=$((first > 20 ? first - 20 : 1))
	p=
	for ((n = from; n <= sweep_points + 8; n++)); do
		arm; quiet
		line=$("$fn" -n "$n" swapon "$spare" 50 2>&1)
		loud; disarm
		parse "$line" && [ "$injected" = 0 ] && break
		if parse "$line" && [ "$ret" = 0 ] && [ "$(sa_col "$dbg/devices" "${spare##*/}" owner)" = builtin ]; then
			p=$n
			break
		fi
		[ "$ret" = 0 ] && swapoff "$spare" 2>/dev/null
		line="$line; $(tr '\n' '|' < "$dbg/devices")"
	done
	if [ -n "$p" ]; then
		note "bind failed again at point $p (points $from-$p swept again; the first sweep's:$bindfail_n)"
		"$fill" -s 8M -H -V > /tmp/hold-spare.log 2>&1 &
		h=$!
		for _ in $(seq 120); do grep -q holding /tmp/hold-spare.log && break; sleep 0.5; done
		used=$(awk -v d="$spare" '$1 == d { print $4 }' /proc/swaps)
		kill -TERM $h
		if wait_bounded 60 $h && [ "${used:-0}" -gt 0 ]; then
			pass "a device whose bind failed (point $p) swaps for the builtin allocator (${used} KiB; $(tail -n 1 /tmp/hold-spare.log))"
		else
			fail "a device whose bind failed swaps for the builtin allocator" "used ${used:-?} KiB; $(tail -n 1 /tmp/hold-spare.log)"
		fi
	else
		fail "swapon at a point where the bind failed leaves the device builtin again" "points $from-$n swept again (the first sweep's:$bindfail_n), last: $line"
	fi
	swapoff "$spare" 2>/dev/null
	must rmmod swapalloc
else
	fail "a swapon sweep point where the bind failed and swapon succeeded" "none seen"
fi

# Probability 100 for the insmod task only (task-filter, make-it-fail):
# the load fails at its first slab allocation.  Then 10 % for five swapons
# with the module loaded: several faults in one call.  (Not for insmod:
# the module loader's trace-event setup WARNs on -ENOMEM, see above.)
fs=$fdbg/failslab
arm
echo 1000 > $fdbg/fail_page_alloc/min-order
echo Y > $fs/task-filter; echo 1 > $fs/interval; echo 100 > $fs/probability
echo 1000000 > $fs/times
quiet
line=$("$fn" -m insmod "$ko" 2>&1)
loud
n100=$((1000000 - $(<$fs/times)))
if parse "$line" && [ "$ret" != 0 ] && ! module_loaded swapalloc; then
	pass "insmod with every slab allocation failing: refused ($ret), $n100 faults"
else
	fail "insmod with every slab allocation failing: refused" "$line"
fi
builtin_left=0
state_ok "insmod with every slab allocation failing"
must insmod "$ko"
echo 10 > $fs/probability
runs10=0 on10=0 left10=0 p0=$problems
quiet
for i in 1 2 3 4 5; do
	line=$("$fn" -m swapon "$spare" 50 2>&1)
	parse "$line" || { bad "swapon at 10 %" "$line"; continue; }
	swapon_ok "swapon at 10 %, run $i ($line)"
	runs10=$((runs10 + 1))
	[ "$ret" = 0 ] && on10=$((on10 + 1)) left10=$((left10 + left_builtin))
done
loud
nrand=$((1000000 - $(<$fs/times) - n100))
# Probability 0 first: with task-filter off every task would see the faults.
echo 0 > $fs/probability; echo N > $fs/task-filter; echo 1 > $fs/times
disarm
total_injected=$((total_injected + n100 + nrand))
note "probability runs: insmod at 100 %: $n100 faults; swapon at 10 %: $runs10 calls, $on10 swapped on ($left10 left builtin), $nrand faults"
[ $runs10 -eq 5 ] && [ $problems -eq $p0 ] && pass "swapon at 10 % slab failure, 5 runs: a clean outcome every time"
state_ok "rmmod after the 10 % runs"

# --- afterwards: the builtin allocator, then a clean insmod, then the data.
if "$verify" -s 8M -i 2 -q > /tmp/v.log 2>&1; then
	pass "builtin allocator after the sweeps ($(tail -n 1 /tmp/v.log | sed 's/^swapverify: //'))"
else
	fail "builtin allocator after the sweeps" "$(tail -n 1 /tmp/v.log)"
fi
if must insmod "$ko"; then
	n=$(awk 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["owner"] == "swapalloc" { n++ } END { print n + 0 }' "$dbg/devices")
	[ "$n" -eq 2 ] && pass "a clean insmod after the sweeps binds both devices" ||
		fail "a clean insmod after the sweeps binds both devices" "$(tr '\n' '|' < "$dbg/devices")"
	for d in "$rot" "$zram"; do
		res=$(sa_check "${d##*/}") && pass "${d##*/}: invariants after the sweeps" ||
			fail "${d##*/}: invariants after the sweeps" "$res"
	done
	if "$verify" -s 8M -f 64k -i 2 -q > /tmp/v.log 2>&1; then
		pass "swapalloc after the sweeps ($(tail -n 1 /tmp/v.log | sed 's/^swapverify: //'))"
	else
		fail "swapalloc after the sweeps" "$(tail -n 1 /tmp/v.log)"
	fi
fi
for h in "$hold_rot:rot" "$hold_zram:zram"; do
	kill -TERM "${h%:*}"
	if wait_bounded 120 "${h%:*}"; then
		pass "data held on ${h#*:} through every sweep reads back right ($(tail -n 1 "/tmp/hold-${h#*:}.log"))"
	else
		fail "data held on ${h#*:} through every sweep reads back right" "$(tail -n 1 "/tmp/hold-${h#*:}.log")"
	fi
done
module_loaded swapalloc && must rmmod swapalloc

if [ -e "$fdbg/kmemleak" ]; then
	echo scan > "$fdbg/kmemleak"; sleep 6; echo scan > "$fdbg/kmemleak"
	leaks=$(grep -c "unreferenced object" "$fdbg/kmemleak")
	note "kmemleak: $leaks unreferenced objects"
	grep -A 12 "unreferenced object" "$fdbg/kmemleak" | head -n 40 | sed 's/^/# /'
	[ "$leaks" -eq 0 ] && pass "kmemleak: nothing leaked" || fail "kmemleak: nothing leaked" "$leaks objects"
else
	note "kmemleak: not in this kernel (KERNEL_FLAVOR=debug has it)"
fi

# --- the kernel log: only allocation failure reports may carry a stack.
sleep 1
kill "$kmsg" 2>/dev/null
wait "$kmsg" 2>/dev/null
# audit_kmsg FILE: /dev/kmsg records; prints problems (vm-run.sh's pattern,
# or a stack that is not warn_alloc()'s), then a summary line ending in
# ", N problems".
audit_kmsg() {
	local pattern=$sa_report_pattern allow=$sa_report_allow
	sed 's/^[^;]*;//' "$1" | awk -v pat="$pattern" -v allow="$allow" '
		$0 ~ allow { next }
		# Frames of a stack are judged by the stack (lockdep_* frames).
		!trace && $0 ~ pat { print "report: " $0; bad++ }
		/Call Trace:/ { trace = 1; alloc = 0; next }
		trace && /(^| )warn_alloc\+/ { alloc = 1 }
		trace && /<\/TASK>/ {
			trace = 0
			if (alloc) stacks++; else { print "a stack not from warn_alloc at line " NR; bad++ }
		}
		/FAULT_INJECTION: forcing a failure/ { forced++ }
		END { printf "summary: %d allocation failure reports with a stack, %d FAULT_INJECTION notices, %d problems\n", stacks, forced, bad }'
}
# The audit's own test: a WARNING and a stack of another origin are found;
# a lockdep frame inside an allocation failure's stack and kmemleak's
# scan-area notice are not reports.
cat > /tmp/kmsg.bad <<'EOK'
4,1,1,-;WARNING: CPU: 0 PID: 1 at mm/swapfile.c:1 x+0x1/0x2
4,2,2,-;Call Trace:
4,3,3,-; <TASK>
4,4,4,-; warn_alloc+0x1/0x2
4,5,5,-; ? lockdep_hardirqs_on_prepare+0x3e0/0x3e0
4,6,6,-; </TASK>
4,7,7,-;kmemleak: Cannot allocate a scan area, scanning the full object
4,8,8,-;Call Trace:
4,9,9,-; <TASK>
4,10,10,-; dump_stack_lvl+0x1/0x2
4,11,11,-; </TASK>
EOK
selftest=$(audit_kmsg /tmp/kmsg.bad | tail -n 1)
[ "$selftest" = "summary: 1 allocation failure reports with a stack, 0 FAULT_INJECTION notices, 2 problems" ] &&
	pass "kernel log audit: finds a WARNING and a stack not from warn_alloc in a planted log" ||
	fail "kernel log audit: finds a WARNING and a stack not from warn_alloc in a planted log" "$selftest"
audit=$(audit_kmsg /tmp/kmsg.log)
note "kernel log: $(tail -n 1 <<<"$audit" | sed 's/^summary: //')"
if [ "$(tail -n 1 <<<"$audit" | sed -n 's/.*, \([0-9]*\) problems$/\1/p')" = 0 ] &&
   [ -s /tmp/kmsg.log ]; then
	pass "kernel log: no WARN, oops or lockdep report; every stack is an allocation failure report"
else
	head -n 20 <<<"$audit" | sed 's/^/# /'
	fail "kernel log: no WARN, oops or lockdep report" "$(head -n 1 <<<"$audit")"
fi
if [ -e /proc/lockdep_stats ]; then
	dl=$(awk '/debug_locks:/ { print $2 }' /proc/lockdep_stats)
	[ "$dl" = 1 ] && pass "lockdep still on (debug_locks 1)" || fail "lockdep still on" "debug_locks ${dl:-?}"
fi
note "figures: $total_injected faults injected; $no_debugfs times a debugfs file was missing after a fault; $problems inconsistencies"
[ $problems -le 10 ] || fail "inconsistencies" "$problems in all, the first 10 above"
finish
