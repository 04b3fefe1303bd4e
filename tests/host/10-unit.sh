#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The allocator core in userspace (tests/unit/, tests/shim/): build, then
#   - the unit tests (test_core, test_rules): one result per test, and
#     one per binary for the rerun with ASan + UBSan;
#   - the model test with a fresh random seed (printed, seed=N) and with a
#     fixed one: one result per configuration; a shorter run with ASan +
#     UBSan: one result;
#   - the core with real threads under ThreadSanitizer (allocate, free,
#     reclaim, discard and rebuild at once; a fresh seed): one result per
#     configuration;
#   - the libFuzzer target for a bounded time: one result;
#   - bench/swapsim: a short run recorded as a trace, replayed, and every
#     recorded free must apply: one result; the kernel model's 72 MiB
#     memory-cgroup case, builtin and antifrag: one result.
# make check runs it beside the other host tests, up to the bench smoke
# run (tests/run; its prerequisites first):
# beside-others: test
# Each prints PASS/FAIL lines, which tests/run counts one by one
# (host/10-unit/...); the last line is "N passed, N failed".  Exit 0 if
# everything passed, 1 otherwise.  About a minute on 2 cores.
#
#   FUZZ_TIME=SECONDS (default 10; 300 with SWAPALLOC_STRESS=1),
#   MODEL_OPS=N (default 20000 per config; 200000 with SWAPALLOC_STRESS=1),
#   THREAD_ITERS=N (default 20000 per thread; 400000 with SWAPALLOC_STRESS=1)
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
O=$top/build/unit
if [ "${SWAPALLOC_STRESS:-0}" = 1 ]; then
	fuzz_time=${FUZZ_TIME:-300}
	model_ops=${MODEL_OPS:-200000}
	thread_iters=${THREAD_ITERS:-400000}
else
	fuzz_time=${FUZZ_TIME:-10}
	model_ops=${MODEL_OPS:-20000}
	thread_iters=${THREAD_ITERS:-20000}
fi
passed=0
failed=0

# clang, llvm and libclang-rt-14-dev for the fuzzer
if ! "$top/scripts/deps.sh" test >/dev/null; then
	echo "FAIL: prerequisites (infrastructure): scripts/deps.sh test failed"
	echo "0 passed, 1 failed"
	exit 1
fi

step() {
	local name=$1 log
	shift
	log=$(mktemp)
	if "$@" >"$log" 2>&1; then
		echo "PASS: $name: $(grep -E 'passed, [0-9]+ failed|every recorded free|^Done [0-9]+ runs|^model steady' \
			"$log" | tail -1)"
		passed=$((passed + 1))
	else
		echo "FAIL: $name"
		{ grep -E '^(FAIL|  )|ERROR|fuzz_core:|violation|WARNING' "$log" | head -n 40
		  tail -n 5 "$log"; } | sed 's/^/    /'
		failed=$((failed + 1))
	fi
	grep -m1 '^seed=' "$log" | sed "s/^/    $name: /"
	rm -f "$log"
}

# each NAME CMD...: run CMD, a test binary printing one PASS/FAIL line per
# test or configuration, and pass each line on as NAME/...; fails also if
# it exits non-zero without a FAIL line or prints no result at all.
each() {
	local name=$1 log rc=0 n=0 line
	shift
	log=$(mktemp)
	"$@" >"$log" 2>&1 || rc=$?
	while IFS= read -r line; do
		case "$line" in
		PASS:*) echo "PASS: $name/${line#PASS: }"; passed=$((passed + 1)); n=$((n + 1)) ;;
		FAIL:*) echo "FAIL: $name/${line#FAIL: }"; failed=$((failed + 1)); n=$((n + 1)) ;;
		esac
	done <"$log"
	if [ $n -eq 0 ] || { [ $rc -ne 0 ] && ! grep -q '^FAIL' "$log"; }; then
		echo "FAIL: $name: exit status $rc, $n results"
		tail -n 10 "$log" | sed 's/^/    /'
		failed=$((failed + 1))
	fi
	grep -m1 '^seed=' "$log" | sed "s/^/    $name: /"
	rm -f "$log"
}

if ! make -s -C "$top/tests/unit" -j2 O="$O" all; then
	echo "FAIL: build (infrastructure)"
	echo "0 passed, 1 failed"
	exit 1
fi

each "unit" "$O/test_core"
each "unit" "$O/test_rules"
step "unit-asan-ubsan: test_core" "$O/test_core-san"
step "unit-asan-ubsan: test_rules" "$O/test_rules-san"
each "model-fresh-seed" "$O/test_model" -n "$model_ops"
each "model-seed-1" "$O/test_model" -n "$model_ops" -s 1
step "model-asan-ubsan" "$O/test_model-san" -n 3000
each "threads-tsan" "$O/test_threads-tsan" -i "$thread_iters"

fuzz() {
	local corpus
	corpus=$(mktemp -d)
	"$O/fuzz_core" -max_total_time="$fuzz_time" -max_len=4096 -len_control=20 \
		-timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
		-artifact_prefix="$O/fuzz-" "$corpus"
	local rc=$?
	rm -rf "$corpus"
	[ $rc -eq 0 ] || echo "crash input kept as $O/fuzz-*; replay: $O/fuzz_core FILE"
	return $rc
}
step "fuzz-${fuzz_time}s" fuzz

swapsim_replay() {
	local trace out
	trace=$(mktemp)
	"$O/swapsim" --swapin 4k --mode none --policy percpu --iterations 10 \
		--record "$trace" || return 1
	out=$("$O/swapsim" --trace "$trace") || return 1
	rm -f "$trace"
	echo "$out"
	echo "$out" | grep -q "every recorded free applied: yes"
}
step "swapsim-record-replay" swapsim_replay

# The kernel model (72 MiB disk, a 32M memory cgroup, mode -s): every
# phase's state checks pass for builtin 6.12 and antifrag (the builtin
# model keeps the core's cursor counts), and antifrag, keeping swap cache
# at swap-in, stays below 1 % while builtin climbs past 30 %.
swapsim_memcg() {
	local out
	out=$(SWAPSIM_VERIFY=1 "$O/swapsim" --swapin memcg --slots 18432 -q --mode s \
		--policy builtin,antifrag --iterations 12 --seed 1) || return 1
	echo "$out" | tail -n 4
	echo "$out" | awk '$1 == "-s" { printf "model steady state -s: builtin %s %%, antifrag %s %%\n", $2, $3
		ok = $2 > 30 && $3 < 1 } END { exit !ok }'
}
step "swapsim-memcg" swapsim_memcg

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
