#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Upstream's tools/mm/thp_swap_allocator_test, built from the same
# linux-source-6.12 as the kernel, in its four modes (-a, none, -a -s, -s),
# with the builtin allocator and then with swapalloc in the same boot, on a
# 64 MiB zram device and a 64 MiB rotational virtio disk.  Per-iteration
# fallback % goes to results/thp-swap-allocator.tsv in the VM's output
# directory (tests/run copies it to build/results/).  Asserted: the tool
# ran its iterations, swapalloc never falls back on zram (builtin does
# not either) and stays at most half the builtin's figure, measured in
# the same boot, on the rotational disk, where in mode -a (64K folios
# only) no iteration after the first falls back at all; invariants hold
# after every run.
#
# The tool always runs 100 iterations; make check stops it after 3 (2 for
# the builtin allocator on the rotational disk, 100 % from the first; 6
# in the memcg case below; THP_TEST_ITERATIONS sets all three) and takes
# the steady state over the second half,
# make stress (SWAPALLOC_STRESS=1) lets it run all 100, steady state =
# mean of iterations 51-100, the figures README quotes.  make check runs
# modes -a and -s only (THP_TEST_MODES picks others), and the builtin
# allocator on the rotational disk only (on zram it is 0.00 % in every
# mode on 6.12, and nothing is compared with it there); make stress and
# the benchmarks run all four modes and the builtin allocator on both.
#
# Then, unless THP_TEST_DEVICES or THP_TEST_ALLOCATORS name a benchmark's
# configurations, the target where fragmentation is real: the
# 72 MiB non-rotational disk, the tool in a 32M memory cgroup (pages
# come back as 4K pages), mode -s, builtin,
# swapalloc and placement=antifrag in the same boot: the default within
# 8 points of builtin, antifrag at most half of builtin's steady state
# (builtin is at 15-20 % by iterations 4-6, 47 % by 13-25; antifrag
# 0.00, patch 0011's kept swap cache), with slots kept at swap-in.
#
# vm: --mem 1G --disk rot0:64M --disk ssd1:72M --timeout 1200
# stress-vm: --timeout 4800
. "$(dirname "$0")/../lib/guest.sh"

t=${SWAPALLOC_KERNEL_TREE:-}/tools/mm/thp_swap_allocator_test
[ -x "$t" ] || { fail "thp_swap_allocator_test built" "no $t"; finish; }
ko=$SWAPALLOC_TOP/swapalloc.ko
dbg=/sys/kernel/debug/swapalloc
if [ "${SWAPALLOC_STRESS:-0}" = 1 ]; then
	iters=${THP_TEST_ITERATIONS:-100} memcg_iters=$iters
else
	# zram and the rotational disk are at their steady state from the
	# second iteration (0.00 and 100.00 %): 3 are enough there, 2 for
	# the builtin on the rotational disk (100.00 % in every iteration of
	# every run); the memcg case below needs 6 for the builtin to be
	# past 15 % (it climbs by 2-4 points an iteration from the third).
	iters=${THP_TEST_ITERATIONS:-3} memcg_iters=${THP_TEST_ITERATIONS:-6}
	builtin_iters=${THP_TEST_ITERATIONS:-2}
fi
builtin_iters=${builtin_iters:-$iters}
[ "$iters" -ge 2 ] && [ "$iters" -le 100 ] || { fail "THP_TEST_ITERATIONS=$iters" "must be 2..100"; finish; }
res=/mnt/out/results
mkdir -p "$res"
tsv=$res/thp-swap-allocator.tsv
echo -e "device\tallocator\tmode\titeration\tfallback_pct\tswpout\tswpout_fallback" > "$tsv"

mthp_enable 64 || fail "infrastructure: 64K mTHP enabled" "no hugepages-64kB"

# one DEV DEVNAME ALLOC MODE [ITERATIONS]: run the tool once (for
# $iters iterations unless ITERATIONS), record, print the steady state
# (the mean of the later half of the iterations); sets $steady and $log.
steady=
one() {
	local dev=$1 devname=$2 alloc=$3 mode=$4 iters=${5:-$iters} half t0=$SECONDS
	half=$((iters / 2))
	log=/tmp/thp-$devname-$alloc-${mode// /}.log
	# The tool runs 100 iterations; stop it after $iters (line-buffered
	# output, so that the lines it printed are not lost with it).
	local pid rc=0 k
	: > "$log"
	stdbuf -oL "$t" $mode > "$log" 2>&1 &
	pid=$!
	for ((k = 0; k < 1800; k++)); do
		kill -0 $pid 2>/dev/null || break
		[ "$(grep -c '^Iteration' "$log")" -ge "$iters" ] && { kill $pid; break; }
		sleep 0.5
	done
	kill -0 $pid 2>/dev/null && kill -KILL $pid
	wait $pid || rc=$?
	if [ $rc -ne 0 ] && [ "$(grep -c '^Iteration' "$log")" -lt "$iters" ]; then
		fail "$devname $alloc '$mode': tool ran" "exit status $rc: $(tail -n 2 "$log" | tr '\n' ' ')"
		steady=
		return
	fi
	awk -v d="$devname" -v a="$alloc" -v m="${mode:-none}" \
		'/^Iteration/ { sub(":", "", $2); p = $NF; sub("%", "", p); o = $5; f = $9;
			sub(",", "", o); sub(",", "", f);
			printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d, a, m, $2, p, o, f }' "$log" >> "$tsv"
	local n
	n=$(grep -c '^Iteration' "$log")
	if [ "$n" -lt "$iters" ]; then
		fail "$devname $alloc '$mode': tool ran" "$n iterations"
		steady=
		return
	fi
	steady=$(awk -v h="$half" -v e="$iters" '/^Iteration/ { sub(":", "", $2); i = $2 + 0; p = $NF; sub("%", "", p);
		if (i > h && i <= e) { s += p; n++ } } END { if (n) printf "%.2f", s / n; else print "nan" }' "$log")
	note "$devname $alloc ${mode:-none}: steady-state fallback ${steady}% (mean of iterations $((half + 1))-$iters; $((SECONDS - t0)) s)"
	pass "$devname $alloc '${mode:-none}': tool ran"
}

declare -A result
# make check runs the two ends, -a (64K folios only) and -s (64K and 4K
# folios fragmenting the device); make stress and the benchmarks all four.
if [ "${SWAPALLOC_STRESS:-0}" = 1 ]; then
	modes=("-a" "" "-a -s" "-s")
else
	modes=("-a" "-s")
fi
# THP_TEST_MODES: a subset, by name (a none as s), e.g. "none s".
if [ -n "${THP_TEST_MODES:-}" ]; then
	modes=()
	for m in $THP_TEST_MODES; do
		case $m in
		a) modes+=("-a") ;;
		none) modes+=("") ;;
		as) modes+=("-a -s") ;;
		s) modes+=("-s") ;;
		*) fail "THP_TEST_MODES=$THP_TEST_MODES" "modes are a, none, as, s"; finish ;;
		esac
	done
fi

device() {
	local devname=$1 dev=$2 m allocs=${THP_TEST_ALLOCATORS:-builtin swapalloc}
	[ -n "${THP_TEST_ALLOCATORS:-}" ] || [ "${SWAPALLOC_STRESS:-0}" = 1 ] ||
		[ "$devname" != zram ] || allocs=swapalloc
	for alloc in $allocs; do
		case $alloc in
		swapalloc) must insmod "$ko" || return ;;
		swapalloc-antifrag) must insmod "$ko" placement=antifrag || return ;;
		esac
		for m in "${modes[@]}"; do
			if [ $alloc = builtin ]; then
				one "$dev" "$devname" $alloc "$m" "$builtin_iters"
			else
				one "$dev" "$devname" $alloc "$m"
			fi
			result[$devname,$alloc,${m:-none}]=$steady
			if [ $alloc != builtin ]; then
				local c
				note "$devname $alloc ${m:-none}: reclaim $(tail -n 1 "$dbg/${dev##*/}/reclaim")"
				note "$devname $alloc ${m:-none}: place $(tail -n 1 "$dbg/${dev##*/}/place")"
				[ "$devname,$alloc,$m" != rotational,swapalloc,-a ] ||
					cp "$dbg/${dev##*/}/clusters" /tmp/thp-rot-a.clusters
				c=$(sa_check "${dev##*/}")
				[ "$c" = ok ] && pass "$devname '${m:-none}': invariants" ||
					fail "$devname '${m:-none}': invariants" "$c"
			fi
		done
		[ $alloc = builtin ] || must rmmod swapalloc
	done
}

# disk_swapon SERIAL ROTATIONAL [SWAPON-OPTION]: mkswap and swapon a --disk;
# prints /dev/vdX.
disk_swapon() {
	local d
	d=$(find_disk "$1") || return 1
	set_rotational "$d" "$2" && mkswap "$d" >/dev/null && swapon ${3:-} "$d" && echo "$d"
}

# THP_TEST_DEVICES picks the configurations (bench/thp-allocator-test.sh runs
# all): zram (64 MiB), rotational (64 MiB virtio disk, rotational=1),
# ssd-memcg and ssd72-memcg (64 and 72 MiB non-rotational virtio disks with
# the tool in a memory cgroup limited to 32M, so swap-cache folios are
# really reclaimed and come back as 4K pages), ssd72-discard (the 72 MiB
# disk's twin, swapon --discard=pages, in the same cgroup).  THP_TEST_ALLOCATORS
# (default "builtin swapalloc"; swapalloc-antifrag loads the module with
# placement=antifrag) picks the allocators.
devices=${THP_TEST_DEVICES:-zram rotational}
for devname in $devices; do
	case $devname in
	zram) dev=$(setup_zram 64M) ;;
	rotational) dev=$(disk_swapon rot0 1) ;;
	ssd-memcg) dev=$(disk_swapon ssd0 0) ;;
	ssd72-memcg) dev=$(disk_swapon ssd1 0) ;;
	ssd72-discard) dev=$(disk_swapon ssd2 0 --discard=pages) ;;
	*) fail "device $devname" "unknown THP_TEST_DEVICES entry"; continue ;;
	esac
	[ -n "$dev" ] || { fail "device $devname" "swapon failed"; continue; }
	case $devname in
	*-memcg|*-discard)
		cg=$(memcg thptest 32M) && echo $$ > "$cg/cgroup.procs" ;;
	esac
	device "$devname" "$dev"
	case $devname in
	*-memcg|*-discard) echo $$ > /sys/fs/cgroup/cgroup.procs ;;
	esac
	must swapoff "$dev"
done

echo "# steady-state fallback % (mean of the later half of the iterations: $((iters / 2 + 1))-$iters, builtin $((builtin_iters / 2 + 1))-$builtin_iters)"
printf '# %-11s %-10s %8s %8s %8s %8s\n' device allocator -a none "-a -s" -s
for d in $devices; do
	for a in ${THP_TEST_ALLOCATORS:-builtin swapalloc}; do
		printf '# %-11s %-10s %8s %8s %8s %8s\n' $d $a "${result[$d,$a,-a]:-}" \
			"${result[$d,$a,none]:-}" "${result[$d,$a,-a -s]:-}" "${result[$d,$a,-s]:-}"
	done
done

# Targets: zram stays at 0.00 % in every mode; on the rotational
# disk -a is 0.00 % and every mode at most half of the builtin's figure
# from this boot (100 % on 6.12: it never gives rotational disks mTHP).
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 < b + 0) }'; }
case " $devices " in
*" zram rotational "*) ;;
*) finish ;;	# a benchmark run of other configurations: figures only
esac
ran_a=0
for m in "${modes[@]}"; do
	m=${m:-none}
	[ "$m" = -a ] && ran_a=1
	# placement=antifrag, when it ran: 0.00 on zram, and on the rotational
	# disk no worse than the default (within 1 point: one boot, no spread).
	case " ${THP_TEST_ALLOCATORS:-} " in
	*" swapalloc-antifrag "*)
		v=${result[zram,swapalloc-antifrag,$m]:-}
		lt "$v" 0.005 && pass "zram swapalloc-antifrag '$m': 0.00% fallback" ||
			fail "zram swapalloc-antifrag '$m': 0.00% fallback" "steady state ${v:-missing}%"
		v=${result[rotational,swapalloc-antifrag,$m]:-}
		b=${result[rotational,swapalloc,$m]:-}
		h=$(awk -v b="$b" 'BEGIN { if (b != "") print b + 1 }')
		lt "$v" "${h:-}" && pass "rotational swapalloc-antifrag '$m': no worse than default (${v}% vs ${b}%)" ||
			fail "rotational swapalloc-antifrag '$m': no worse than default" "steady state ${v:-missing}% vs ${b:-missing}%" ;;
	esac
	v=${result[zram,swapalloc,$m]:-}
	lt "$v" 0.005 && pass "zram swapalloc '$m': 0.00% fallback" ||
		fail "zram swapalloc '$m': 0.00% fallback" "steady state ${v:-missing}%"
	v=${result[rotational,swapalloc,$m]:-}
	b=${result[rotational,builtin,$m]:-}
	h=$(awk -v b="$b" 'BEGIN { if (b != "") print b / 2 }')
	lt "$v" "${h:-}" && pass "rotational swapalloc '$m': far below builtin (${v}% vs ${b}%)" ||
		fail "rotational swapalloc '$m': far below builtin" "steady state ${v:-missing}% vs builtin ${b:-missing}%"
done
# Mode -a on the rotational disk: 64K folios only, one global cluster per
# order.  Every 64K folio the tool frees (or swaps in and dirties) leaves
# a whole aligned block free in an order-4 cluster, so a 64K allocation
# finds room whenever the device has any: no iteration after the first
# (which follows the tool's first page-out of everything) may fall back,
# not even one folio.  (A mean of 2.08 % over iterations 16-30 was seen
# once, in a 30-iteration run of an early version; make stress runs all
# 100 iterations and holds them to the same.)
if [ $ran_a = 1 ]; then
	f=/tmp/thp-rotational-swapalloc--a.log
	bad=$(awk '/^Iteration/ { sub(":", "", $2); f = $9; sub(",", "", f);
		if ($2 + 0 >= 2 && f + 0 > 0) printf "%s:%s ", $2, f }' "$f" 2>/dev/null)
	n=$(grep -c '^Iteration' "$f" 2>/dev/null || true)
	if [ "${n:-0}" -ge 2 ] && [ -z "$bad" ]; then
		pass "rotational swapalloc '-a': no 64K folio fell back in iterations 2-$n"
	else
		fail "rotational swapalloc '-a': no 64K folio fell back in iterations 2-${n:-0}" \
			"fallbacks (iteration:folios) ${bad:-none, but too few iterations}"
		note "clusters after it: $(tr '\n' ' ' < /tmp/thp-rot-a.clusters 2>/dev/null)"
	fi
fi

[ -z "${THP_TEST_DEVICES:-}" ] && [ -z "${THP_TEST_ALLOCATORS:-}" ] || finish
iters=$memcg_iters
dev=$(disk_swapon ssd1 0) || { fail "ssd72-memcg: swapon"; finish; }
cg=$(memcg thptest 32M) && echo $$ > "$cg/cgroup.procs" ||
	{ fail "ssd72-memcg: memory cgroup"; finish; }
for alloc in builtin swapalloc swapalloc-antifrag; do
	case $alloc in
	swapalloc) must insmod "$ko" || break ;;
	swapalloc-antifrag)
		must rmmod swapalloc || break
		must insmod "$ko" placement=antifrag || break
		kept0=$(sa_col "$dbg/${dev##*/}/place" '' cache_kept) ;;
	esac
	one "$dev" ssd72-memcg $alloc -s
	result[ssd72-memcg,$alloc,-s]=$steady
	if [ $alloc = swapalloc ]; then
		c=$(sa_check "${dev##*/}")
		[ "$c" = ok ] && pass "ssd72-memcg swapalloc '-s': invariants" ||
			fail "ssd72-memcg swapalloc '-s': invariants" "$c"
	fi
done
echo $$ > /sys/fs/cgroup/cgroup.procs
if [ -d "$dbg/${dev##*/}" ]; then
	kept=$(( $(sa_col "$dbg/${dev##*/}/place" '' cache_kept) - ${kept0:-0} ))
	note "ssd72-memcg swapalloc-antifrag -s: place $(tail -n 1 "$dbg/${dev##*/}/place")"
	# 5670-5867 in every make check run seen.
	[ "$kept" -ge 1024 ] && pass "ssd72-memcg antifrag '-s': slots kept at swap-in ($kept, at least 1024)" ||
		fail "ssd72-memcg antifrag '-s': slots kept at swap-in, at least 1024" "cache_kept +$kept"
	c=$(sa_check "${dev##*/}")
	[ "$c" = ok ] && pass "ssd72-memcg antifrag '-s': invariants" ||
		fail "ssd72-memcg antifrag '-s': invariants" "$c"
	must rmmod swapalloc
fi
must swapoff "$dev"
v=${result[ssd72-memcg,swapalloc-antifrag,-s]:-}
b=${result[ssd72-memcg,builtin,-s]:-}
h=$(awk -v b="$b" 'BEGIN { if (b != "") print b / 2 }')
lt "$v" "${h:-}" && pass "ssd72-memcg antifrag '-s': at most half of builtin (${v}% vs ${b}%)" ||
	fail "ssd72-memcg antifrag '-s': at most half of builtin" "steady state ${v:-missing}% vs builtin ${b:-missing}%"
# The default placement: no more than 8 points above builtin.  Over
# iterations 4-6 the two are about even (-3.0 to +4.2 points in the runs
# seen; 0.68-0.75 of builtin over iterations 51-100 in make bench); a
# placement regression once made it 91.81 % against builtin's 28.55 %
# (on a discard device: 35-discard holds the default to 3 points there,
# in make stress).  Antifrag was not half of builtin on a --discard=pages
# disk (15.38 % against 24.51 %) while its kept slots were bounded to one
# in 16 of the device, so the case runs on the plain disk.
v=${result[ssd72-memcg,swapalloc,-s]:-}
h=$(awk -v b="$b" 'BEGIN { if (b != "") print b + 8 }')
lt "$v" "${h:-}" && pass "ssd72-memcg swapalloc '-s': within 8 points of builtin (${v}% vs ${b}%)" ||
	fail "ssd72-memcg swapalloc '-s': within 8 points of builtin" "steady state ${v:-missing}% vs builtin ${b:-missing}%"
finish
