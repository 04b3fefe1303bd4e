#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest side of make bench (bench/run boots one guest per repetition
# and runs this in it).  Each case runs with every allocator of
# BENCH_ALLOCATORS in this boot, interleaved: odd boots in their order, even
# boots in reverse (by default builtin first, then swapalloc first).  Every
# run gets a freshly made swap device.  Raw figures go to /mnt/out/raw/*.tsv
# (bench/report.py reads them), one row per iteration or per run, with the
# allocator's name; problems are FAIL lines, as in a guest suite.
#
# Environment (bench/run sets it):
#   BENCH_BOOT    repetition number, 1...
#   BENCH_CASES   cases, in order (see bench/README.md):
#                 thp-zram thp-rot64 thp-ssd72-memcg thp-ssd72-discard
#                 thp-rot72-memcg cost cost-direct tput-zram tput-ssd tput4-zram
#                 tput4-ssd lock build
#   BENCH_ITER    iterations of thp_swap_allocator_test (at most 100)
#   BENCH_MODES   its modes: a none as s (-a, none, -a -s, -s)
#   BENCH_ALLOCATORS  of: builtin, swapalloc (swapalloc.ko, its defaults),
#                 swapalloc-antifrag (swapalloc.ko placement=antifrag),
#                 swapalloc-percpu, swapalloc-global (policy=percpu or
#                 global on every device), swapalloc-fast (fast=1: the
#                 fast path off si->lock), swapalloc-antifrag-fast
#                 (placement=antifrag fast=1), swapalloc-nostats (the
#                 SWAPALLOC_NO_STATS=y build, BENCH_KO_NOSTATS)
#                 (default "builtin swapalloc")
#   BENCH_TPUT_SIZE, BENCH_COST_SIZE  bytes swapped per throughput / cost run
#   BENCH_WORKERS worker counts for cost and throughput (default "1 2")
#   BENCH_COSTBENCH_KO, BENCH_DIRECT_CALLS  the cost-direct case's
#                 sa_costbench.ko (bench/kmod) and its calls per thread
#   BENCH_WIDE_WORKERS  workers of the tput4 cases (default 4), which bench/run
#                 runs in a guest of their own, of BENCH_WIDE_VCPUS vCPUs
#   BENCH_KO      swapalloc.ko built for this kernel
#   BENCH_KO_NOSTATS  the same built with SWAPALLOC_NO_STATS=y
#   BENCH_TOOLS   directory with swaptput
#   BENCH_LOCK_KEYS, BENCH_LOCK_SIZE, BENCH_LOCK_WORKERS  the lock case's
#   BENCH_BUILD_CMDS, BENCH_BUILD_JOBS, BENCH_BUILD_MEM  the build case's
. "$SWAPALLOC_TOP/tests/lib/guest.sh"

boot=${BENCH_BOOT:-1}
iters=${BENCH_ITER:-100}
modes=${BENCH_MODES:-a none as s}
workers_list=${BENCH_WORKERS:-1 2}
wide_workers=${BENCH_WIDE_WORKERS:-4}
# A host path under /tmp, /root, ... is under /mnt/host in the guest (guest-init).
guest_path() {
	case "$1" in
	/tmp/*|/var/tmp/*|/run/*|/root/*|/mnt/*) echo "${SWAPALLOC_HOST:-/mnt/host}$1" ;;
	*) echo "$1" ;;
	esac
}
ko=$(guest_path "${BENCH_KO:?BENCH_KO names swapalloc.ko}")
ko_nostats=$(guest_path "${BENCH_KO_NOSTATS:-}")
tput=${BENCH_TOOLS:?BENCH_TOOLS names the bench tools}/swaptput
costko=$(guest_path "${BENCH_COSTBENCH_KO:-}")
thp=$SWAPALLOC_KERNEL_TREE/tools/mm/thp_swap_allocator_test
dbg=/sys/kernel/debug/swapalloc
stats=/sys/kernel/mm/transparent_hugepage/hugepages-64kB/stats
raw=/mnt/out/raw
mkdir -p "$raw"

allocs=
for a in ${BENCH_ALLOCATORS:-builtin swapalloc}; do
	if [ $((boot % 2)) -eq 1 ]; then allocs+="${allocs:+ }$a"; else allocs="$a${allocs:+ }$allocs"; fi
done
[ "$iters" -ge 1 ] && [ "$iters" -le 100 ] || { fail "BENCH_ITER" "must be 1-100, not $iters"; finish; }

hdr() {	# hdr FILE COLUMNS...: a TSV with this header unless it exists
	[ -s "$raw/$1" ] || (IFS=$'\t'; echo "${*:2}") > "$raw/$1"
}
row() {	# row FILE VALUES...
	local f=$1
	shift
	(IFS=$'\t'; echo "$*") >> "$raw/$f"
}
hdr thp.tsv boot case allocator mode iteration fallback_pct
hdr thp-runs.tsv boot case allocator mode iterations seconds
hdr seq.tsv boot case allocator mode writes runs written_kib max_run_kib
hdr cost.tsv boot allocator order workers count sum_ns
hdr cost-hist.tsv boot allocator order workers bucket_ns count
hdr cost-direct.tsv boot allocator order workers median_ns mean_ns entries free_median_ns free_mean_ns clock_ns net_median_ns
hdr tput.tsv boot case allocator folio workers bytes out_s in_s fallback_pct resident_pct

{
	echo "release $(uname -r)"
	echo "vcpus $(nproc)"
	echo "mem_kib $(awk '/^MemTotal/ { print $2 }' /proc/meminfo)"
	echo "boot $boot"
	echo "allocator_order $allocs"
	echo "clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
} > "$raw/meta-boot$boot.txt"

mthp_enable 64
echo +memory > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true

# use ALLOC: swapalloc.ko loaded with ALLOC's parameters (binds devices at
# swapon), or not loaded for builtin; swapalloc-nostats loads the build
# with SWAPALLOC_NO_STATS=y.  A module loaded for another allocator is
# unloaded first.
loaded=builtin
grep -q '^swapalloc ' /proc/modules && loaded=unknown
use() {
	local args=() k=$ko
	case $1 in
	builtin|swapalloc) ;;
	swapalloc-antifrag) args=(placement=antifrag) ;;
	swapalloc-percpu) args=(policy=percpu) ;;
	swapalloc-global) args=(policy=global) ;;
	swapalloc-fast) args=(fast=1) ;;
	swapalloc-antifrag-fast) args=(placement=antifrag fast=1) ;;
	swapalloc-locked) args=(fast=0) ;;
	swapalloc-antifrag-locked) args=(placement=antifrag fast=0) ;;
	swapalloc-nostats) k=$ko_nostats ;;
	*) fail "allocator $1" "unknown (builtin swapalloc swapalloc-antifrag swapalloc-percpu swapalloc-global swapalloc-fast swapalloc-antifrag-fast swapalloc-locked swapalloc-antifrag-locked swapalloc-nostats)"; return 1 ;;
	esac
	[ "$loaded" != "$1" ] || return 0
	if [ "$loaded" != builtin ]; then
		rmmod swapalloc || { fail "rmmod swapalloc"; return 1; }
		loaded=builtin
	fi
	if [ "$1" != builtin ]; then
		[ -n "$k" ] || { fail "insmod for $1" "no module built for it (BENCH_KO_NOSTATS)"; return 1; }
		insmod "$k" "${args[@]}" || { fail "insmod $k${args[*]:+ ${args[*]}}"; return 1; }
		loaded=$1
	fi
	return 0
}

# owner_ok ALLOC DEV: the device is bound to ALLOC (debugfs devices table:
# its owner, swapalloc for every swapalloc-*; its policy, the choice ALLOC's
# parameters make; for swapalloc-antifrag its placement, for
# swapalloc-percpu and -global its cursors).
owner_ok() {
	local want=$1 dev=${2##*/} got kv col val
	[ "$want" = builtin ] && ! grep -q '^swapalloc ' /proc/modules && return 0
	got=$(awk -v d="$dev" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$1 == d { print $c["owner"] }' "$dbg/devices")
	[ "$got" = "${want%%-*}" ] || { fail "$dev bound to $want" "owner is '${got:-none}'"; return 1; }
	case $want in
	swapalloc-antifrag|swapalloc-antifrag-fast) set -- policy=antifrag placement=antifrag ;;
	swapalloc-percpu) set -- policy=percpu cursors=percpu ;;
	swapalloc-global) set -- policy=global cursors=global ;;
	swapalloc*) set -- policy=auto ;;
	*) return 0 ;;
	esac
	for kv in "$@"; do
		col=${kv%%=*} val=${kv#*=}
		got=$(awk -v d="$dev" -v k="$col" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
			$1 == d && (k in c) { print $c[k] }' "$dbg/devices")
		[ "$got" = "$val" ] || { fail "$dev bound to $want" "$col is '${got:-none}'"; return 1; }
	done
}

# stats_ok ALLOC DEV CASE: swapalloc-nostats counted no allocation on DEV
# (its build has the counters compiled out), every other swapalloc did.
stats_ok() {
	[ "$1" != builtin ] || return 0
	local n
	n=$(awk 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		{ s += $c["requests"] } END { print s + 0 }' "$dbg/${2##*/}/alloc")
	if [ "$1" = swapalloc-nostats ]; then
		[ "$n" -eq 0 ] || fail "$3 $1: statistics compiled out" "$n requests counted"
	else
		[ "$n" -gt 0 ] || fail "$3 $1: statistics counted" "no request counted"
	fi
	fast_ok "$@"
}

# fast_ok ALLOC DEV CASE: the fast path (on by default) served the
# allocations of every swapalloc allocator but the -locked ones on a
# device with per-CPU cursors, and stayed off for those (debugfs
# DEV/fast: enabled, entries).
fast_ok() {
	local f=$dbg/${2##*/}/fast on n cur fast=1
	[ -f "$f" ] || return 0
	read -r on n _ <<<"$(sed -n 2p "$f")"
	cur=$(awk -v d="${2##*/}" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$1 == d { print $c["cursors"] }' "$dbg/devices")
	case $1 in *-locked) fast=0 ;; esac
	if [ $fast = 1 ] && [ "$cur" = percpu ]; then
		# swapalloc-nostats counts nothing, its fast path's entries neither.
		if [ "$1" = swapalloc-nostats ]; then
			[ "$on" = yes ] && [ "$n" = 0 ] ||
				fail "$3 $1: fast path on, nothing counted" "enabled $on, $n entries"
		else
			[ "$on" = yes ] && [ "$n" -gt 0 ] ||
				fail "$3 $1: fast path served" "enabled $on, $n entries"
		fi
	elif [ $fast = 0 ]; then
		[ "$on" = no ] || fail "$3 $1: fast path off" "enabled $on, $n entries"
	fi
}

# check_ok ALLOC DEV CASE: swapalloc's invariants hold after a run.
check_ok() {
	[ "$1" != builtin ] || return 0
	local c
	stats_ok "$@"
	# sa_check (tests/lib/guest.sh) runs the full check; older
	# trees ran it on every read of check.
	if declare -F sa_check > /dev/null; then
		c=$(sa_check "${2##*/}")
	else
		c=$(cat "$dbg/${2##*/}/check")
	fi
	[ "$c" = ok ] || fail "$3 $1: invariants" "$c"
}

# swap_dev KIND [N]: a freshly made, active swap device for KIND; prints
# it.  N (2, 3, ...) picks a rotational kind's Nth disk of the same size
# (rot0-N, rot1-N), so that one sequentiality.bt run can tell the
# allocators' runs apart by device.
swap_dev() {
	local d n=${2:+-$2}
	case $1 in
	zram) setup_zram 64M ;;
	zram512) setup_zram 512M ;;
	rot64) d=$(find_disk "rot0$n") && set_rotational "$d" 1 && mkswap "$d" >/dev/null && swapon "$d" && echo "$d" ;;
	rot72) d=$(find_disk "rot1$n") && set_rotational "$d" 1 && mkswap "$d" >/dev/null && swapon "$d" && echo "$d" ;;
	ssd72) d=$(find_disk ssd1) && set_rotational "$d" 0 && mkswap "$d" >/dev/null && swapon "$d" && echo "$d" ;;
	ssd72-discard) d=$(find_disk ssd2) && set_rotational "$d" 0 && mkswap "$d" >/dev/null &&
		swapon --discard=pages "$d" && echo "$d" ;;
	ssd) d=$(find_disk tput0) && set_rotational "$d" 0 && mkswap "$d" >/dev/null && swapon "$d" && echo "$d" ;;
	esac
}

drop_dev() {	# drop_dev DEV: swap off; a zram device is reset
	swapoff "$1"
	case $1 in
	/dev/zram*) echo 1 > "/sys/block/${1##*/}/reset" ;;
	esac
}

memcg_enter() {
	mkdir -p /sys/fs/cgroup/bench
	echo 32M > /sys/fs/cgroup/bench/memory.max
	echo $$ > /sys/fs/cgroup/bench/cgroup.procs
}
memcg_leave() { echo $$ > /sys/fs/cgroup/cgroup.procs; }

# sequentiality.bt around the runs of a rotational case: seq_start once,
# seq_mark DEV before a run on DEV and seq_done DEV after it, seq_stop
# once, then seq_row CASE ALLOC MODE DEV for each run.  Runs: the counts of
# the script's @run_kib histogram for DEV's block device (which holds, from
# the script's END, the run still going too); KiB written: DEV's
# sectors-written counter (/sys/block/DEV/stat) over the run, so the mean
# run is exact.  Each bpftrace start costs 10-20 s under TCG, so a mode's
# allocators share one bpftrace run, each on a disk of its own.
btpid=
declare -A sect0 sect1
sect() { awk '{ print $7 }' "/sys/block/${1##*/}/stat"; }
seq_start() {
	local i
	"$SWAPALLOC_TOP/bpftrace/run" sequentiality.bt > /tmp/seq.txt 2> /tmp/seq.err &
	btpid=$!
	for i in $(seq 1 240); do
		grep -q '^Tracing' /tmp/seq.txt 2>/dev/null && return 0
		kill -0 $btpid 2>/dev/null || break
		sleep 0.5
	done
	fail "sequentiality.bt starts" "$(grep -v 'not traceable' /tmp/seq.err | tail -n 3)"
	btpid=
	return 1
}
seq_mark() { sect0[$1]=$(sect "$1"); }
seq_done() { sect1[$1]=$(sect "$1"); }
seq_stop() {	# seq_stop NAME: the capture is kept as raw/bt-seq-bootB-NAME.txt
	[ -n "$btpid" ] || return 1
	sleep 2		# let the perf buffer drain
	bpftrace_stop $btpid || true
	btpid=
	cp /tmp/seq.txt "$raw/bt-seq-boot$boot-$1.txt"
}
seq_row() {
	local c=$1 a=$2 m=$3 dev=$4 mm kib
	kib=$(( (${sect1[$dev]:-0} - ${sect0[$dev]:-0}) / 2 ))
	mm=$(stat -L -c '%t %T' "$dev")
	mm="$((16#${mm% *})), $((16#${mm#* }))"
	# @writes[254, 16]: 1536, @max_run_kib[254, 16]: 64, @run_kib[254, 16]: then buckets
	awk -v k="[$mm]: " -v c="$c" -v a="$a" -v m="$m" -v b="$boot" -v kib="$kib" '
		/^@/ { h = 0; i = index($0, k); if (!i) next
			name = substr($0, 1, index($0, "[") - 1)
			if (name == "@run_kib") h = 1; else v[name] = substr($0, i + length(k)) + 0; next }
		/^\[/ && h { runs += ($1 ~ /\]$/) ? $2 : $3; next }
		/^$/ { h = 0 }
		END { w = v["@writes"] + 0
			printf "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\n", b, c, a, m, w, runs, kib, v["@max_run_kib"] + 0 }' \
		/tmp/seq.txt >> "$raw/seq.tsv"
}

# thp_case CASE KIND MEMCG: upstream's tool in each mode, every allocator.
thp_case() {
	local c=$1 kind=$2 memcg=$3 a m dev flags log pid n t0 t1 traced=0 shared=0 i k disk=
	local -A devs
	[ -x "$thp" ] || { fail "$c" "no $thp"; return; }
	case $kind in rot64) disk=rot0 ;; rot72) disk=rot1 ;; esac
	[ -z "$disk" ] || traced=1
	# One sequentiality.bt run per mode when every allocator has a
	# disk of its own (bench/run gives rot0-2.. and rot1-2..), else one per
	# run on the kind's one disk.
	if [ $traced -eq 1 ]; then
		shared=1 i=1
		for a in $allocs; do
			[ $i -eq 1 ] || find_disk "$disk-$i" >/dev/null || shared=0
			i=$((i + 1))
		done
	fi
	for m in $modes; do
		case $m in a) flags=-a ;; none) flags= ;; as) flags="-a -s" ;; s) flags=-s ;;
		*) fail "$c" "unknown mode '$m' (a none as s)"; continue ;;
		esac
		[ $shared -eq 0 ] || seq_start || true
		devs=()
		i=1
		for a in $allocs; do
			use $a || { [ -z "$btpid" ] || bpftrace_stop "$btpid"; return; }
			k=
			[ $shared -eq 0 ] || [ $i -eq 1 ] || k=$i
			i=$((i + 1))
			dev=$(swap_dev "$kind" $k) || { fail "$c $a: swap device"; continue; }
			owner_ok $a "$dev" || { drop_dev "$dev"; continue; }
			[ $traced -eq 0 ] || [ $shared -eq 1 ] || seq_start || true
			[ $traced -eq 0 ] || seq_mark "$dev"
			log=/tmp/thp-$c-$a-$m.log
			[ "$memcg" = 0 ] || memcg_enter
			t0=$(date +%s.%N)
			# The tool runs 100 iterations; stop it after $iters.
			stdbuf -oL "$thp" $flags > "$log" 2>&1 &
			pid=$!
			while kill -0 $pid 2>/dev/null; do
				n=$(grep -c '^Iteration' "$log")
				if [ "$n" -ge "$iters" ]; then
					kill $pid 2>/dev/null
					break
				fi
				sleep 0.5
			done
			wait $pid 2>/dev/null
			t1=$(date +%s.%N)
			[ "$memcg" = 0 ] || memcg_leave
			if [ $traced -eq 1 ]; then
				seq_done "$dev"
				devs[$a]=$dev
				[ $shared -eq 1 ] || { seq_stop "$c-$a-$m" && seq_row "$c" $a $m "$dev"; }
			fi
			n=$(grep -c '^Iteration' "$log")
			if [ "$n" -lt "$iters" ]; then
				fail "$c $a $m: thp_swap_allocator_test ran $iters iterations" \
					"$n; $(tail -n 2 "$log" | tr '\n' ' ')"
			else
				awk -v b="$boot" -v c="$c" -v a=$a -v m=$m -v n="$iters" \
					'/^Iteration/ { sub(":", "", $2); i = $2 + 0; p = $NF; sub("%", "", p);
						if (i <= n) printf "%s\t%s\t%s\t%s\t%d\t%s\n", b, c, a, m, i, p }' \
					"$log" >> "$raw/thp.tsv"
				row thp-runs.tsv "$boot" "$c" $a $m "$iters" \
					"$(awk -v s="$t0" -v e="$t1" 'BEGIN { printf "%.1f", e - s }')"
				pass "$c $a $m"
			fi
			check_ok $a "$dev" "$c $m"
			drop_dev "$dev"
		done
		if [ $shared -eq 1 ] && seq_stop "$c-$m"; then
			for a in $allocs; do
				[ -z "${devs[$a]:-}" ] || seq_row "$c" $a $m "${devs[$a]}"
			done
		fi
	done
}

# tput_case CASE KIND [WORKERS]: swaptput per folio size and worker count
# (of BENCH_WORKERS unless given), every allocator.
tput_case() {
	local c=$1 kind=$2 wl=${3:-$workers_list} f w a dev out0 fb0 out fb line rc
	for f in 4k 64k; do
		for w in $wl; do
			for a in $allocs; do
				use $a || return
				dev=$(swap_dev "$kind") || { fail "$c $a: swap device"; continue; }
				owner_ok $a "$dev" || { drop_dev "$dev"; continue; }
				out0=$(cat $stats/swpout); fb0=$(cat $stats/swpout_fallback)
				# In a memory cgroup: swaptput evicts the swap cache through its memory.reclaim.
				mkdir -p /sys/fs/cgroup/tput
				echo $$ > /sys/fs/cgroup/tput/cgroup.procs
				line=$("$tput" -s "${BENCH_TPUT_SIZE:-1G}" -f $f -p "$w" 2>/tmp/tput.err)
				rc=$?
				echo $$ > /sys/fs/cgroup/cgroup.procs
				if [ $rc -eq 0 ]; then
					out=$(( $(cat $stats/swpout) - out0 )); fb=$(( $(cat $stats/swpout_fallback) - fb0 ))
					# shellcheck disable=SC2086 # NAME=VALUE words
					eval local $line
					row tput.tsv "$boot" "$c" $a $f "$w" "$bytes" "$out_s" "$in_s" \
						"$(awk -v o=$out -v f=$fb 'BEGIN { printf "%.2f", o + f ? 100 * f / (o + f) : 0 }')" \
						"$resident_pct"
					pass "$c $a $f x$w"
				else
					fail "$c $a $f x$w: swaptput" "$(tail -n 2 /tmp/tput.err | tr '\n' ' ')"
				fi
				check_ok $a "$dev" "$c $f x$w"
				drop_dev "$dev"
			done
		done
	done
}

# wide_ok CASE: a vCPU for each of the tput4 cases' workers, whose figures
# would otherwise measure the workers waiting for a CPU.
wide_ok() {
	[ "$(nproc)" -ge "$wide_workers" ] && return 0
	fail "$1: a vCPU per worker" "$wide_workers workers (BENCH_WIDE_WORKERS), $(nproc) vCPUs: bench/run boots the tput4 cases with BENCH_WIDE_VCPUS"
	return 1
}

# cost_case: ns per allocated entry from bench/alloc-cost.bt (get_swap_pages()
# for every allocator), 4K (order 0) and 64K (order 4) folios, per worker
# count, on 512 MiB zram.  Its maps are alloc_*, named after the run's allocator.
cost_case() {
	local w a dev f i
	for w in $workers_list; do
		for a in $allocs; do
			use $a || return
			dev=$(swap_dev zram512) || { fail "cost $a: swap device"; continue; }
			owner_ok $a "$dev" || { drop_dev "$dev"; continue; }
			cp "$SWAPALLOC_TOP/bench/alloc-cost.bt" /tmp/cost.bt
			bpftrace /tmp/cost.bt > /tmp/cost.txt 2>/tmp/cost.err &
			btpid=$!
			for i in $(seq 1 240); do
				grep -q '^Tracing' /tmp/cost.txt 2>/dev/null && break
				kill -0 $btpid 2>/dev/null || break
				sleep 0.5
			done
			for f in 4k 64k; do
				"$tput" -s "${BENCH_COST_SIZE:-256M}" -f $f -p "$w" > /dev/null 2>/tmp/tput.err ||
					fail "cost $a $f x$w: swaptput" "$(tail -n 2 /tmp/tput.err | tr '\n' ' ')"
			done
			sleep 2
			bpftrace_stop $btpid || true
			btpid=
			# @alloc_n[4]: 123, @alloc_sum_ns[4]: 456, @alloc_hist_ns[4]: and its buckets;
			# the rows are named after this run's allocator.
			awk -v b="$boot" -v w="$w" -v raw="$raw" -v a="$a" '
				function unit(s) { return s ~ /K$/ ? 1024 : s ~ /M$/ ? 1048576 : s ~ /G$/ ? 1073741824 : 1 }
				/^@alloc_(n|sum_ns|hist_ns)\[/ {
					t = $0; gsub(/[\[\]:_@]/, " ", t)
					split(t, p, " ")	# alloc n 4 ...  or  alloc sum ns 4 ...
					o = p[3] == "ns" ? p[4] : p[3]; key = a "\t" o
					hk = ""
					if ($0 ~ /_n\[/) n[key] = $2
					else if ($0 ~ /_sum_ns\[/) s[key] = $2
					else hk = key
					next }
				/^\[/ && hk != "" { lo = $1; sub(/^\[/, "", lo); sub(/[],]$/, "", lo)
					cnt = ($1 ~ /\]$/) ? $2 : $3
					printf "%s\t%s\t%s\t%d\t%s\n", b, hk, w, (lo + 0) * unit(lo), cnt >> (raw "/cost-hist.tsv"); next }
				/^$/ { hk = "" }
				END { for (k in n) printf "%s\t%s\t%s\t%s\t%s\n", b, k, w, n[k], s[k] >> (raw "/cost.tsv") }' \
				/tmp/cost.txt
			cp /tmp/cost.txt "$raw/bt-cost-boot$boot-$a-x$w.txt"
			cp /tmp/cost.err "$raw/bt-cost-boot$boot-$a-x$w.err"
			if grep -q '^@alloc_n\[' /tmp/cost.txt; then
				pass "cost $a x$w"
			else
				fail "cost $a x$w: allocations traced" "$(grep -v 'not traceable' /tmp/cost.err | head -c 300)"
			fi
			check_ok $a "$dev" "cost x$w"
			drop_dev "$dev"
		done
	done
}

# cost_direct_case: ns per allocated entry without probes: sa_costbench.ko
# (bench/kmod) calls get_swap_pages() from kernel threads, one per worker
# and CPU, BENCH_DIRECT_CALLS times each, and times every call with
# ktime_get_ns(); the entries of its last 64 calls stay allocated, older
# ones go back slot by slot, each such free timed apart.  It also times
# empty regions, the clock's own cost (clock_ns), and takes that off each
# call (net_median_ns).  4K (order 0, 64
# entries a call, a slot cache refill) and 64K (order 4, one a call), on
# 512 MiB zram.
cost_direct_case() {
	local w a dev o p r
	[ -f "$costko" ] || { fail "cost-direct" "no sa_costbench.ko (BENCH_COSTBENCH_KO)"; return; }
	for w in $workers_list; do
		for a in $allocs; do
			use $a || return
			dev=$(swap_dev zram512) || { fail "cost-direct $a: swap device"; continue; }
			owner_ok $a "$dev" || { drop_dev "$dev"; continue; }
			for o in 0 4; do
				if ! insmod "$costko" order=$o threads="$w" calls="${BENCH_DIRECT_CALLS:-8192}"; then
					fail "cost-direct $a order $o x$w" "$(dmesg | grep sa_costbench | tail -n 1)"
					continue
				fi
				p=/sys/module/sa_costbench/parameters
				r=("$(cat $p/median_ns)" "$(cat $p/mean_ns)" "$(cat $p/entries)"
				   "$(cat $p/free_median_ns)" "$(cat $p/free_mean_ns)"
				   "$(cat $p/clock_ns)" "$(cat $p/net_median_ns)")
				rmmod sa_costbench
				if [ "${r[2]}" -gt 0 ] && [ "${r[0]}" -gt 0 ]; then
					row cost-direct.tsv "$boot" "$a" "$o" "$w" "${r[@]}"
					pass "cost-direct $a order $o x$w"
				else
					fail "cost-direct $a order $o x$w" "median ${r[0]} ns over ${r[2]} entries"
				fi
			done
			check_ok $a "$dev" "cost-direct x$w"
			drop_dev "$dev"
		done
	done
}

# lock_key_names: "si NAME ipages NAME", the lock classes of si->lock and of
# the swap cache's i_pages locks, named by /proc/lockdep after the key
# addresses bench/run found in vmlinux (BENCH_LOCK_KEYS: si=, ipages=,
# stext= link addresses; moved by this boot's _stext, and readable only
# with no_hash_pointers).  A class exists once its lock was first taken.
lock_key_names() {
	local kv k v st off
	st=$(awk '$3 == "_stext" { print $1; exit }' /proc/kallsyms)
	for kv in ${BENCH_LOCK_KEYS:-}; do
		k=${kv%%=*} v=${kv#*=}
		case $k in stext) off=$((16#$st - 16#$v)) ;; esac
	done
	[ -n "${off:-}" ] || return 1
	for kv in ${BENCH_LOCK_KEYS:-}; do
		k=${kv%%=*} v=${kv#*=}
		[ "$k" = stext ] && continue
		printf '%s %s\n' "$k" "$(awk -v key="$(printf '%016x' $((16#$v + off)))" \
			'{ a = $1; sub(/:$/, "", a) } a == key { print $NF; exit }' /proc/lockdep)"
	done
}

# lock_case: /proc/lock_stat around swaptput runs (BENCH_LOCK_SIZE of 4K
# and of 64K folios, BENCH_LOCK_WORKERS workers) on the 256 MiB
# non-rotational disk, four 64 MiB swap cache address spaces: contentions,
# wait and hold times of si->lock and of the swap cache's i_pages locks.
lock_case() {
	local f w a dev line rc names si ip
	[ -r /proc/lock_stat ] || { fail "lock: /proc/lock_stat" "this kernel has no CONFIG_LOCK_STAT (BENCH_FLAVOR=lockstat)"; return; }
	hdr lock.tsv boot case allocator folio workers lock class contentions wait_us acquisitions hold_us
	for f in 4k 64k; do
		for w in ${BENCH_LOCK_WORKERS:-2 4}; do
			for a in $allocs; do
				use $a || return
				dev=$(swap_dev ssd) || { fail "lock $a: swap device"; continue; }
				owner_ok $a "$dev" || { drop_dev "$dev"; continue; }
				mkdir -p /sys/fs/cgroup/tput
				echo $$ > /sys/fs/cgroup/tput/cgroup.procs
				echo 0 > /proc/lock_stat
				echo 1 > /proc/sys/kernel/lock_stat
				line=$("$tput" -s "${BENCH_LOCK_SIZE:-256M}" -f $f -p "$w" 2>/tmp/tput.err)
				rc=$?
				echo 0 > /proc/sys/kernel/lock_stat
				echo $$ > /sys/fs/cgroup/cgroup.procs
				cp /proc/lock_stat "$raw/lockstat-boot$boot-$a-$f-x$w.txt"
				names=$(lock_key_names)
				si=$(awk '$1 == "si" { print $2 }' <<<"$names")
				ip=$(awk '$1 == "ipages" { print $2 }' <<<"$names")
				if [ $rc -ne 0 ]; then
					fail "lock $a $f x$w: swaptput" "$(tail -n 2 /tmp/tput.err | tr '\n' ' ')"
				elif [ -z "$si" ] || [ -z "$ip" ]; then
					fail "lock $a $f x$w: lock classes" "si->lock '$si', i_pages '$ip' (BENCH_LOCK_KEYS=${BENCH_LOCK_KEYS:-})"
				else
					# name: con-bounces contentions wait-min wait-max wait-total
					# wait-avg acq-bounces acquisitions hold-min hold-max
					# hold-total hold-avg (times in us)
					awk -v b="$boot" -v a="$a" -v f="$f" -v w="$w" -v si="$si:" -v ip="$ip:" \
						'$1 == si || $1 == ip { k = $1 == si ? "si_lock" : "i_pages"; sub(/:$/, "", $1)
							printf "%s\tlock\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", b, a, f, w, k, $1, $3, $6, $9, $12 }' \
						/proc/lock_stat >> "$raw/lock.tsv"
					if [ "$(grep -c "	$a	$f	$w	" "$raw/lock.tsv")" -ge 2 ]; then
						pass "lock $a $f x$w ($si, $ip)"
					else
						fail "lock $a $f x$w: both classes in /proc/lock_stat" "$si, $ip"
					fi
				fi
				check_ok $a "$dev" "lock $f x$w"
				drop_dev "$dev"
			done
		done
	done
	cp /proc/lockdep "$raw/lockdep-boot$boot.txt"
}

# build_case: a build-like workload.  BENCH_BUILD_CMDS (bench/run wrote
# it) holds the compile commands of BENCH_BUILD_FILES C files of this
# kernel tree, each writing its object under /tmp; BENCH_BUILD_JOBS (2)
# shells run them, every compiler in a BENCH_BUILD_MEM (128M) memory
# cgroup, on 512 MiB zram and on the 256 MiB non-rotational disk.
# Figures: elapsed, system and user seconds of the whole build, pages
# swapped out and in.
build_case() {
	local kind a dev j t pin0 pout0 rc cmds=${BENCH_BUILD_CMDS:-} jobs=${BENCH_BUILD_JOBS:-2}
	case "$cmds" in
	/tmp/*|/var/tmp/*|/run/*|/root/*|/mnt/*) cmds=${SWAPALLOC_HOST:-/mnt/host}$cmds ;;
	esac
	[ -s "$cmds" ] || { fail "build: compile commands" "no BENCH_BUILD_CMDS file '$cmds'"; return; }
	hdr build.tsv boot case allocator device files jobs mem elapsed_s sys_s user_s pswpout pswpin
	for kind in zram512 ssd; do
		for a in $allocs; do
			use $a || return
			dev=$(swap_dev $kind) || { fail "build $a: swap device $kind"; continue; }
			owner_ok $a "$dev" || { drop_dev "$dev"; continue; }
			rm -rf /tmp/build && mkdir -p /tmp/build
			for ((j = 0; j < jobs; j++)); do
				awk -v j=$j -v n="$jobs" '(NR - 1) % n == j' "$cmds" > /tmp/build/part$j
			done
			mkdir -p /sys/fs/cgroup/build
			echo "${BENCH_BUILD_MEM:-128M}" > /sys/fs/cgroup/build/memory.max
			pin0=$(awk '$1 == "pswpin" { print $2 }' /proc/vmstat)
			pout0=$(awk '$1 == "pswpout" { print $2 }' /proc/vmstat)
			# One shell per job, each running its commands in turn; a
			# failed compile is counted in /tmp/build/failed.
			t=$( { /usr/bin/time -f '%e %S %U' bash -c '
				echo $$ > /sys/fs/cgroup/build/cgroup.procs
				cd "$SWAPALLOC_KERNEL_TREE" || exit 1
				for ((j = 0; j < '"$jobs"'; j++)); do
					while read -r l; do
						sh -c "$l" > /dev/null 2>> /tmp/build/err || echo x >> /tmp/build/failed
						o=${l##* -c -o }; o=${o%% *}
						rm -f "$o" "${o%.o}.d"
					done < /tmp/build/part$j &
				done
				wait' > /dev/null; } 2>&1 | tail -n 1)
			rc=$?
			echo $$ > /sys/fs/cgroup/cgroup.procs
			if [ -s /tmp/build/failed ]; then
				fail "build $kind $a: every file compiles" "$(grep -c . /tmp/build/failed) failed: $(head -c 300 /tmp/build/err)"
			elif ! [[ "$t" =~ ^[0-9.]+\ [0-9.]+\ [0-9.]+$ ]]; then
				fail "build $kind $a: timed" "time printed '$t' (exit $rc)"
			else
				local pout=$(( $(awk '$1 == "pswpout" { print $2 }' /proc/vmstat) - pout0 ))
				local pin=$(( $(awk '$1 == "pswpin" { print $2 }' /proc/vmstat) - pin0 ))
				# shellcheck disable=SC2086 # three fields
				row build.tsv "$boot" build $a $kind "$(grep -c . "$cmds")" "$jobs" "${BENCH_BUILD_MEM:-128M}" $t $pout $pin
				if [ $pout -gt 0 ]; then
					pass "build $kind $a ($t s elapsed/sys/user, $pout pages out)"
				else
					fail "build $kind $a: the build swapped" "no page swapped out in ${BENCH_BUILD_MEM:-128M}"
				fi
			fi
			check_ok $a "$dev" "build $kind"
			drop_dev "$dev"
		done
	done
}

for c in ${BENCH_CASES:-thp-zram}; do
	note "case $c (boot $boot, $allocs)"
	case $c in
	thp-zram) thp_case "$c" zram 0 ;;
	thp-rot64) thp_case "$c" rot64 0 ;;
	thp-rot72-memcg) thp_case "$c" rot72 1 ;;
	thp-ssd72-memcg) thp_case "$c" ssd72 1 ;;
	thp-ssd72-discard) thp_case "$c" ssd72-discard 1 ;;
	tput-zram) tput_case "$c" zram512 ;;
	tput-ssd) tput_case "$c" ssd ;;
	tput4-zram) wide_ok "$c" && tput_case "$c" zram512 "$wide_workers" ;;
	tput4-ssd) wide_ok "$c" && tput_case "$c" ssd "$wide_workers" ;;
	cost) cost_case ;;
	cost-direct) cost_direct_case ;;
	lock) lock_case ;;
	build) build_case ;;
	*) fail "case $c" "unknown (see bench/README.md)" ;;
	esac
done
use builtin || true
finish
