#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench with BENCH_RESUME, without a guest: bench/resume.py's plan and
# its bookkeeping on a copy of a real results directory whose one boot was
# killed in its last case (tests/fixtures/bench-resume: the meta.txt, raw
# tables and boot 1 console output of the run of 2026-12-04 12:02 UTC,
# commit f09f93d75d80, whose boot 1 ran eight cases and died in the build
# case), then on boots made up from it (a
# second part that finishes the boot; a guest that bench/run itself did
# not outlive; a case with a FAIL line), and bench/run's refusals: a
# directory that is no results directory, another BENCH_ITER, sources that
# changed since the run's commit, uncommitted sources.  A resume that
# passes those checks goes on to the kernel (here a missing one).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "PASS: $1"; }
bad() { echo "FAIL: $1: ${2:-failed}"; fails=1; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what" "$*"; fi; }

all="thp-zram thp-rot64 thp-ssd72-memcg thp-ssd72-discard thp-rot72-memcg cost tput-zram tput-ssd build"
fix=$top/tests/fixtures/bench-resume
r=$tmp/run
cp -a "$fix" "$r"
resume() { python3 "$top/bench/resume.py" "$@"; }
not_in_report() { ! grep -qF -- "$1" "$r/report.md"; }
rows() { tail -n +2 "$r/raw/$1" | awk -F'\t' -v b="$2" -v c="$3" '$1 == b && (c == "" || $2 == c)' | wc -l; }

# 1. The killed boot: every case but build finished; boots 2 and 3 never ran.
plan=$(resume "$r" 3 $all)
check "plan: boot 1 reruns only build, in boot1.2" [ "$(sed -n 1p <<<"$plan")" = "1 boot1.2 build" ]
check "plan: boots 2 and 3 run every case" [ "$(sed -n 2,3p <<<"$plan")" = "2 boot2 $all
3 boot3 $all" ]
check "plan without --apply writes nothing" diff -r "$fix/raw" "$r/raw"
n_thp=$(rows thp.tsv 1 thp-zram)
check "fixture: boot 1 has build rows" [ "$(rows build.tsv 1 build)" -eq 1 ]
resume --apply "$r" 3 $all > /dev/null
check "--apply: boot 1's build rows removed" [ "$(rows build.tsv 1 build)" -eq 0 ]
check "fixture: boot 1 has thp-zram rows" [ "$n_thp" -gt 0 ]
check "--apply: boot 1's finished cases kept" [ "$(rows thp.tsv 1 thp-zram)" -eq "$n_thp" ]
check "--apply: cost rows (no case column) of boot 1 kept" [ "$(tail -n +2 "$r/raw/cost.tsv" | grep -c .)" -gt 0 ]
check "--apply: resumed.txt says what boot 1 ran and what runs again" \
	grep -qx "boot1: boot1 (status 1) finished thp-zram thp-rot64 thp-ssd72-memcg thp-ssd72-discard thp-rot72-memcg cost tput-zram tput-ssd; build run again in boot1.2" "$r/raw/resumed.txt"
resume --apply "$r" 3 $all > /dev/null
check "a second --apply adds no line" [ "$(grep -c . "$r/raw/resumed.txt")" -eq 1 ]

# 2. boot1.2 finishes the build case: boot 1 is done; its part 1 is no failure.
mkdir -p "$r/boot1.2/raw"
printf '# case build (boot 1, builtin swapalloc)\nPASS: build zram512 builtin\nPASS: build zram512 swapalloc\n' > "$r/boot1.2/output.log"
head -n 1 "$fix/raw/build.tsv" > "$r/boot1.2/raw/build.tsv"
printf '1\tbuild\t%s\tzram512\t200\t2\t128M\t%s\t270.00\t1000.00\t290000\t1000\n' \
	builtin 800.00 swapalloc 790.00 >> "$r/boot1.2/raw/build.tsv"
echo "boot 1" > "$r/boot1.2/raw/meta-boot1.txt"
resume --merge "$r" boot1.2
echo "boot1.2 0" >> "$r/raw/status.txt"
check "--merge: boot1.2's two build rows in raw/" [ "$(rows build.tsv 1 build)" -eq 2 ]
check "--merge: a later part's meta-boot1.txt kept as meta-boot1.2.txt" \
	cmp -s "$r/boot1.2/raw/meta-boot1.txt" "$r/raw/meta-boot1.2.txt"
check "--merge: part 1's meta-boot1.txt left alone" cmp -s "$fix/raw/meta-boot1.txt" "$r/raw/meta-boot1.txt"
check "plan: boot 1 has nothing left" [ -z "$(resume "$r" 1 $all)" ]
printf 'boot1\t2026-12-04 12:02\t2940\thost-a\tf09f93d75d80\t%s\n' "$all" > "$r/raw/guests.txt"
python3 "$top/bench/report.py" "$r" > /dev/null
check "report: a boot of one guest on one host has no Guests table" not_in_report '## Guests'
printf 'boot1.2\t2026-12-05 09:00\t1600\thost-b\tc314ee1a2b3c\tbuild\n' >> "$r/raw/guests.txt"
python3 "$top/bench/report.py" "$r" > /dev/null
check "report: a boot of two guests has the Guests table, both rows" \
	grep -qzF $'| boot1 | 2026-12-04 12:02 | 2940 | host-a | f09f93d75d80 | '"$all"$' |\n| boot1.2 | 2026-12-05 09:00 | 1600 | host-b | c314ee1a2b3c | build |' "$r/report.md"
python3 - "$r" <<'EOF' && ok "report: no failures; boot 1's stop listed under Resumed boots; its tables, build figures n=1" || bad "report of the resumed boot"
import json, sys
j = json.load(open(sys.argv[1] + "/results.json"))
assert not j["failures"], j["failures"]
rep = open(sys.argv[1] + "/report.md").read()
assert "## Resumed boots" in rep and "- boot1: guest exited with status 1" in rep, rep
assert any(r.startswith("boot1: guest exited with status 1") for r in j.get("resumed", [])) and "resumed_notes" not in j["meta"], j.get("resumed")
assert "## Tables" in rep and "## Plots" in rep, rep
assert "| 512 MiB zram | elapsed s | 800.0 (n=1) | 790.0 (n=1) | 0.99 |" in rep, rep
f = [f for f in j["figures"] if f["kind"] == "build" and f.get("figure") == "elapsed"]
assert f and f[0]["builtin"]["n"] == 1 and f[0]["builtin"]["median"] == 800.0 and f[0]["swapalloc"]["median"] == 790.0, f
EOF

# 3. bench/run was stopped during boot 2, in its second case: no status
# line, rows only in boot2/raw.  The first case's rows are merged, the
# second's are not; a FAIL line makes a case unfinished too.
mkdir -p "$r/boot2/raw"
printf '# case thp-zram (boot 2, swapalloc builtin)\nPASS: x\n# case thp-rot64 (boot 2, swapalloc builtin)\nPASS: y\n' > "$r/boot2/output.log"
{ head -n 1 "$fix/raw/thp.tsv"; printf '2\tthp-zram\tbuiltin\ta\t1\t0.00\n2\tthp-rot64\tbuiltin\ta\t1\t100.00\n'; } > "$r/boot2/raw/thp.tsv"
{ head -n 1 "$fix/raw/thp.tsv"; printf '3\tthp-zram\tbuiltin\ta\t1\t0.00\n3\tthp-rot64\tbuiltin\ta\t1\t100.00\n'; } > "$tmp/thp3.tsv"
mkdir -p "$r/boot3/raw"
cp "$tmp/thp3.tsv" "$r/boot3/raw/thp.tsv"
printf '# case thp-zram (boot 3, builtin swapalloc)\nFAIL: thp-zram swapalloc: z\n# case thp-rot64 (boot 3, builtin swapalloc)\nPASS: y\n' > "$r/boot3/output.log"
echo "boot3 1" >> "$r/raw/status.txt"
resume --merge "$r" boot3
plan=$(resume --apply "$r" 3 $all)
check "interrupted boot 2: thp-rot64 on, in boot2.2" [ "$(sed -n 1p <<<"$plan")" = "2 boot2.2 ${all#thp-zram }" ]
check "interrupted boot 2: its finished case merged" [ "$(rows thp.tsv 2 thp-zram)" -eq 1 ]
check "interrupted boot 2: its unfinished case not merged" [ "$(rows thp.tsv 2 thp-rot64)" -eq 0 ]
check "interrupted boot 2: status line 'boot2 interrupted'" grep -qx 'boot2 interrupted' "$r/raw/status.txt"
check "boot 3: the case with a FAIL line runs again" [ "$(sed -n 2p <<<"$plan")" = "3 boot3.2 $all" ]
check "boot 3: rows of its cases to run again removed" [ "$(rows thp.tsv 3 '')" -eq 0 ]

# 4. bench/run's refusals, before anything is built.
# (A run that is not refused stops at the missing kernel tree.)
brun() { env -u BENCH_ITER -u BENCH_BOOTS SWAPALLOC_KERNEL_TREE="$tmp/nokernel" "$@" > "$tmp/out" 2>&1 && echo 0 || echo $?; }
# said TEXT: the last bench/run exited with status 2 and printed TEXT.
said() { [ "$st" = 2 ] && grep -qF -- "$1" "$tmp/out"; }
not_said() { ! grep -qF -- "$1" "$tmp/out"; }
st=$(brun BENCH_RESUME="$tmp" "$top/bench/run")
check "BENCH_RESUME of a directory without meta.txt: status 2, says so" \
	said 'has no meta.txt'
src=$tmp/src
# A clone with this work tree's files committed on top, so that the
# bench/run under test is this one.
git clone -q "$top" "$src"
tar -C "$top" --exclude=./.git --exclude=./build --exclude=./bench/results -cf - . | tar -C "$src" -xf -
git -C "$src" add -A
git -C "$src" -c user.name=t -c user.email=t@t commit -qm "the work tree under test" || true
head=$(git -C "$src" rev-parse --short=12 HEAD)
m=$tmp/m
mkdir -p "$m/raw"
sed "s/^commit .*/commit $head/" "$fix/meta.txt" > "$m/meta.txt"
st=$(brun BENCH_RESUME="$m" BENCH_ITER=5 "$src/bench/run")
check "another BENCH_ITER: refused, naming it" said 'BENCH_ITER="100" (its meta.txt), not "5"'
st=$(brun BENCH_RESUME="$m" BENCH_ITER=200 "$src/bench/run")
check "a larger BENCH_ITER: refused too" said 'not "200"'
st=$(brun BENCH_RESUME="$m" BENCH_BOOTS=2 "$src/bench/run")
check "fewer BENCH_BOOTS than the run's 3: refused" said 'BENCH_BOOTS="3" (its meta.txt), not "2"'
st=$(brun BENCH_RESUME="$m" BENCH_BOOTS=5 "$src/bench/run")
check "more BENCH_BOOTS than the run's 3: resumed, on to the kernel" said 'nokernel is not a built kernel tree'
echo "/* changed */" >> "$src/module/core.c"
st=$(brun BENCH_RESUME="$m" "$src/bench/run")
check "uncommitted change to module/core.c: refused, naming it" said 'changed: module/core.c'
git -C "$src" -c user.name=t -c user.email=t@t commit -qam "core.c changed"
st=$(brun BENCH_RESUME="$m" "$src/bench/run")
check "committed change to module/core.c: refused, naming it" said 'changed: module/core.c'
git -C "$src" reset -q --hard "$head"
echo "more" >> "$src/README.md"
git -C "$src" -c user.name=t -c user.email=t@t commit -qam "README changed"
st=$(brun BENCH_RESUME="$m" "$src/bench/run")
check "a change to README.md only: resumed, on to the kernel" said 'nokernel is not a built kernel tree'
check "a change to README.md only: no refusal" not_said BENCH_RESUME
sed -i "s/^commit .*/commit $head-dirty/" "$m/meta.txt"
st=$(brun BENCH_RESUME="$m" "$src/bench/run")
check "a run from uncommitted sources: refused" said 'ran from uncommitted sources'
exit $fails
