#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
#   bench/thp-allocator-test.sh [DEVICES...]
#
# Upstream's tools/mm/thp_swap_allocator_test (built from linux-source-6.12)
# in its four modes, builtin allocator then swapalloc, in one guest boot,
# on each configuration named (default: all):
#   zram         64 MiB zram, as in the tool's header
#   rotational   64 MiB virtio disk with queue/rotational = 1
#   ssd-memcg    64 MiB non-rotational virtio disk, the tool in a 32M memcg
#   ssd72-memcg  the same on a 72 MiB disk
#   ssd72-discard  the same with swapon --discard=pages
# THP_TEST_ALLOCATORS="swapalloc" skips the builtin runs; it may also name
# swapalloc-antifrag (the module with placement=antifrag).  THP_TEST_MODES
# ("none s"), THP_TEST_ITERATIONS (100) and THP_TEST_TIMEOUT (7200 s, the
# guest's) shorten a run.
# SWAPALLOC_KERNEL_TREE: a built kernel tree to use instead of kernel-build.sh's.
# Per-iteration fallback % lands in build/bench-results/thp-swap-allocator-<date>.tsv
# (not tracked by git),
# and the steady state (mean of iterations 51-100) is printed.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
devices=${*:-zram rotational ssd-memcg ssd72-memcg}

"$top/scripts/deps.sh" kernel vm
tree=${SWAPALLOC_KERNEL_TREE:-$("$top/scripts/kernel-build.sh")}
make -s -C "$top" module KDIR="$tree" >/dev/null
make -s -C "$top/tests/tools" >/dev/null
out=$(mktemp -d /tmp/swapalloc-bench.XXXXXX)
rc=0
SWAPALLOC_KERNEL_TREE=$tree "$top/scripts/vm-run.sh" --mem 1G --timeout "${THP_TEST_TIMEOUT:-7200}" --out "$out" \
	--disk rot0:64M --disk ssd0:64M --disk ssd1:72M --disk ssd2:72M \
	--env THP_TEST_DEVICES="$devices" \
	--env THP_TEST_ALLOCATORS="${THP_TEST_ALLOCATORS:-builtin swapalloc}" \
	--env THP_TEST_ITERATIONS="${THP_TEST_ITERATIONS:-100}" \
	--env THP_TEST_MODES="${THP_TEST_MODES:-a none as s}" \
	-- "$top/tests/guest/40-thp-allocator-test.sh" | grep -E '^# (steady|  |[a-z])|^(PASS|FAIL)' || rc=$?
mkdir -p "$top/build/bench-results"
dst=$top/build/bench-results/thp-swap-allocator-$(date +%Y%m%d-%H%M).tsv
if [ -f "$out/results/thp-swap-allocator.tsv" ]; then
	cp "$out/results/thp-swap-allocator.tsv" "$dst"
	echo "per-iteration results: $dst"
fi
exit $rc
