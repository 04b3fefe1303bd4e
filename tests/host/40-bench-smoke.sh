#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, smoke run: one boot of the make check kernel (not the perf
# one: nothing more to build), two cases (upstream's thp_swap_allocator_test
# on the 64 MiB rotational disk, mode -a, 2 iterations, sequentiality.bt
# watching; cost-direct, sa_costbench.ko's 256 timed get_swap_pages()
# calls per thread, 4K and 64K, 1 and 2 threads) with builtin, swapalloc,
# swapalloc-antifrag, swapalloc-locked (fast=0; bench/guest.sh fails its
# run if the fast path served it, or did not serve the others on per-CPU
# devices) and swapalloc-nostats (the SWAPALLOC_NO_STATS=y build;
# bench/guest.sh fails its run if it counted anything), into a scratch
# results directory.
# Asserts that the report, the JSON and the plots are produced and that
# the figures parse and agree: builtin 100 % fallback there, swapalloc and
# swapalloc-nostats far below, swapalloc-antifrag a percentage with its
# own column, each write run figure present, a direct cost figure for
# every allocator, order and thread count, with the entries the calls
# must have returned.  About 2-3 minutes under TCG
# (each allocator after the first two is one more run of 2 iterations).
# bench/run writes into its default build/bench-results/ and must leave
# git status as it was; the run is then moved to build/bench-smoke/.
# SMOKE_RESULTS=DIR checks such a directory again (or a doctored copy) without a guest.
# It boots a guest, so tests/run runs nothing beside it:
# alone
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
if [ -n "${SMOKE_RESULTS:-}" ]; then
	res=$SMOKE_RESULTS
else
	tree=${SWAPALLOC_KERNEL_TREE:-$("$top/scripts/kernel-build.sh" -q)}
	res=$top/build/bench-smoke
	rm -rf "$res"
	mkdir -p "$res"
	# bench/run's default results directory (build/bench-results), so
	# that the run shows it leaves git's view of the tree as it was: no
	# tracked file changed, no untracked one added (bench/results/ is
	# written only by bench/publish).  The run is then moved to $res;
	# a latest.json of an earlier run there is put back.
	def=$top/build/bench-results
	keep=
	if [ -f "$def/latest.json" ]; then keep=$res/latest.json.keep; cp "$def/latest.json" "$keep"; fi
	before=$(git -C "$top" status --porcelain --untracked-files=all 2>/dev/null || true)
	rc=0
	env -u BENCH_RESULTS BENCH_BOOTS=1 BENCH_ITER=2 BENCH_MODES=a BENCH_CASES="thp-rot64 cost-direct" \
		BENCH_DIRECT_CALLS=256 \
		BENCH_ALLOCATORS="builtin swapalloc swapalloc-antifrag swapalloc-locked swapalloc-nostats" \
		BENCH_LABEL="make check smoke run" SWAPALLOC_KERNEL_TREE=$tree \
		"$top/bench/run" > "$res/run.log" 2>&1 || rc=$?
	cat "$res/run.log"
	after=$(git -C "$top" status --porcelain --untracked-files=all 2>/dev/null || true)
	dir=$(sed -n 's/^bench: .*; results in \(.*\)$/\1/p' "$res/run.log" | tail -n 1)
	if [ -n "$dir" ] && [ -d "$dir" ]; then
		mv "$dir" "$res/"
		mv "$def/latest.json" "$res/latest.json"
		[ -z "$keep" ] || mv "$keep" "$def/latest.json"
	fi
	[ $rc -eq 0 ] || { echo "bench/run exited with status $rc"; exit 1; }
	[ "$(dirname "$dir")" = "$def" ] || { echo "NOT OK: bench/run wrote to $dir, not under $def"; exit 1; }
	if [ "$before" != "$after" ]; then
		echo "NOT OK: bench/run changed git status:"
		diff <(echo "$before") <(echo "$after") || true
		exit 1
	fi
	echo "ok: bench/run wrote under build/bench-results; git status unchanged"
fi

SMOKE_TOP=$top python3 - "$res" <<'EOF'
import json, os, sys
res = sys.argv[1]
bad = []
def check(ok, what):
    print(("ok: " if ok else "NOT OK: ") + what)
    if not ok:
        bad.append(what)

j = json.load(open(os.path.join(res, "latest.json")))
d = os.path.join(res, os.path.basename(j["dir"]))
for k in ("release", "flavor", "commit", "accel", "vcpus", "date"):
    check(j["meta"].get(k), "meta has %s (%s)" % (k, j["meta"].get(k)))
check(not j["failures"], "no failures: %s" % j["failures"])
AF = "swapalloc-antifrag"
NS = "swapalloc-nostats"
LK = "swapalloc-locked"
check(j.get("allocators") == ["builtin", "swapalloc", AF, LK, NS], "allocators listed (%s)" % j.get("allocators"))

figs = {(f["kind"], f.get("case"), f.get("mode")): f for f in j["figures"]}
f = figs.get(("thp_fallback", "thp-rot64", "a"))
check(f is not None, "thp-rot64 -a fallback figure")
if f:
    b, s = f["builtin"], f["swapalloc"]
    check(f["iterations"] == 2, "2 iterations (%s)" % f["iterations"])
    check(b and s and b["n"] == 1 and s["n"] == 1, "one boot per allocator")
    check(b and b["median"] == 100.0, "builtin falls back 100 %% on the rotational disk (%s)" % (b and b["median"]))
    check(s and 0 <= s["median"] < 50, "swapalloc far below (%s)" % (s and s["median"]))
    check(s and b and b["median"] and abs(f["ratio"] - s["median"] / b["median"]) < 1e-9, "ratio is swapalloc/builtin")
    af = f.get(AF)
    check(af and af["n"] == 1 and 0 <= af["median"] <= 100, "%s: one boot, a percentage (%s)" % (AF, af and af["median"]))
    r = f.get("ratios", {})
    check(af and b and b["median"] and AF in r and abs(r[AF] - af["median"] / b["median"]) < 1e-9,
          "ratios has %s/builtin" % AF)
    ns = f.get(NS)
    check(ns and ns["n"] == 1 and 0 <= ns["median"] < 50,
          "%s (statistics compiled out) far below builtin too (%s)" % (NS, ns and ns["median"]))
w = figs.get(("write_run", "thp-rot64", "a"))
check(w and all(w.get(a) and w[a]["median"] > 0 for a in ("builtin", "swapalloc", AF, LK, NS)),
      "mean write run, every allocator (sequentiality.bt)")

ALL = ["builtin", "swapalloc", AF, LK, NS]
calls = int(j["meta"].get("direct_calls", 0))
check(calls == 256, "meta has direct_calls 256 (%s)" % calls)
for o in (0, 4):
    for w in (1, 2):
        f = [x for x in j["figures"] if x["kind"] == "alloc_direct_ns" and x["order"] == o and x["workers"] == w]
        check(len(f) == 1 and all(f[0].get(a) and f[0][a]["n"] == 1 and f[0][a]["median"] > 0 for a in ALL),
              "direct cost, order %d, %d thread(s): a median for every allocator" % (o, w))
drows = [l.rstrip("\n").split("\t") for l in open(os.path.join(d, "raw", "cost-direct.tsv"))][1:]
check(len(drows) == 20, "raw/cost-direct.tsv: 5 allocators x 2 orders x 2 thread counts (%d rows)" % len(drows))
for r in drows:
    o, w, med, mean, n, fmed, fmean, clk, net = (int(x) for x in r[2:11])
    lo, hi = calls * w, calls * w * (1 if o else 64)
    check(lo <= n <= hi and med > 0 and mean > 0 and fmed > 0 and fmean > 0,
          "cost-direct %s order %d x%d: %d entries in %d..%d, median %d, mean %d ns; frees %d, %d ns"
          % (r[1], o, w, n, lo, hi, med, mean, fmed, fmean))
    # The clock's cost comes off each call, so the net median is below the
    # median by about it (per entry: by a 64th of it at order 0).
    check(clk > 0 and net < med and med - net <= clk,
          "cost-direct %s order %d x%d: clock %d ns, median %d, less the clock %d" % (r[1], o, w, clk, med, net))
check("**Allocation cost without probes**" in open(os.path.join(d, "report.md")).read(), "report.md has the direct cost table")

rows = [l.split("\t") for l in open(os.path.join(d, "raw", "thp.tsv"))][1:]
check(len(rows) == 10 and all(0 <= float(r[5]) <= 100 for r in rows), "raw/thp.tsv: 5 x 2 iterations, percentages")
check(sorted(set(r[2] for r in rows)) == sorted(["builtin", "swapalloc", AF, LK, NS]), "raw/thp.tsv: allocators named")

rep = open(os.path.join(d, "report.md")).read()
check("| 64 MiB rotational virtio disk | `-a` | 100.00 (n=1) |" in rep, "report.md table row with the builtin figure")
hdr = "| swapalloc/builtin | %s median [min-max] | %s/builtin |" % (AF, AF)
check(hdr in rep, "report.md has the %s columns" % AF)
check(j["meta"]["release"] in rep and j["meta"]["commit"] in rep, "report.md names release and commit")
for p in ("fallback-thp-rot64-a.png", "fallback-summary.png"):
    path = os.path.join(d, "plots", p)
    ok = os.path.exists(path) and os.path.getsize(path) > 2000 and open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    check(ok, "plot %s is a PNG" % p)
    check(("plots/" + p) in rep, "report.md embeds %s" % p)

# README's results section is generated from the JSON.
top = os.environ["SMOKE_TOP"]
readme = os.path.join(res, "README.md")
open(readme, "w").write(open(os.path.join(top, "README.md")).read())
sys.path.insert(0, os.path.join(top, "bench"))
import report
report.readme(readme, os.path.join(res, "latest.json"))
text = open(readme).read()
check("| 64 MiB rotational virtio disk | `-a` | 100.00 (n=1) |" in text, "README section generated")
check(hdr in text, "README section has the %s columns" % AF)
check(text.count(report.BEGIN) == 1 and text.count(report.END) == 1, "README markers kept")
sys.exit(1 if bad else 0)
EOF
