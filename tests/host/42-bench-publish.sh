#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/publish, without a guest, on a copy of the published default run
# (bench/results/20261204-144059) standing in for a run bench/run wrote:
# what it copies (results.json, report.md, the plots report.md shows,
# meta.txt without host paths, the label naming date and commit), the
# INDEX.md line, latest.json, and its refusals (status 2, nothing
# written): a second publish of the run, failures, a guest that did not
# exit 0, uncommitted sources, a commit git does not have, no label, a
# host path, a directory that is no run.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "PASS: $1"; }
bad() { echo "FAIL: $1: ${2:-failed}"; fails=1; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what" "$*"; fi; }

name=20261204-144059
src=$top/bench/results/$name
out=$tmp/out
mkdir -p "$out"
mk() {
	rm -rf "$tmp/run"
	mkdir -p "$tmp/run"
	cp -a "$src" "$tmp/run/$name"
	mkdir -p "$tmp/run/$name/raw"
	printf 'boot1 0\nboot2 0\nboot3 0\n' > "$tmp/run/$name/raw/status.txt"
	# As bench/run writes it: the tree by its host path, its own label.
	sed -i -e 's|^tree |tree /nonexistent/cache/|' -e 's|^label .*|label the default run|' "$tmp/run/$name/meta.txt"
	sed -i '3s|^\*\*.*\*\*$|**the default run**|' "$tmp/run/$name/report.md"
	run=$tmp/run/$name
}
pub() { "$top/bench/publish" --results "$out" "$@" > "$tmp/log" 2>&1 && echo 0 || echo $?; }
# refused TEXT: the last publish exited with status 2, said TEXT, wrote nothing.
refused() { [ "$st" = 2 ] && grep -qF -- "$1" "$tmp/log" && [ "$(ls "$out" | grep -c .)" = "$nout" ]; }

mk
st=$(pub --latest --finding "fallback 100 vs 0 %" "$run")
check "publish: status 0" [ "$st" = 0 ]
d=$out/$name
check "publish: results.json, report.md, meta.txt copied" [ -f "$d/results.json" -a -f "$d/report.md" -a -f "$d/meta.txt" ]
check "publish: no raw tables or logs" [ ! -e "$d/raw" -a -z "$(ls "$d" | grep -E '^boot')" ]
nplots=$(grep -oE '\]\(plots/[^)]*\.png\)' "$d/report.md" | sort -u | wc -l)
check "publish: every plot report.md shows, nothing else" [ "$nplots" -gt 0 -a "$(ls "$d/plots" | wc -l)" = "$nplots" ]
check "publish: meta.txt names the tree without its path" grep -qx 'tree linux-6.12.118-1_deb12u1-perf' "$d/meta.txt"
check "publish: label names date and commit" \
	grep -qx 'label Run of 2026-12-04 14:41 UTC, commit ccbdac32d004: the default run' "$d/meta.txt"
check "publish: report.md carries the label" grep -qF '**Run of 2026-12-04 14:41 UTC, commit ccbdac32d004: the default run**' "$d/report.md"
no_host() { ! grep -rqE '/(nonexistent|root|home|work)/' "$1"; }
check "publish: no host path in what it wrote" no_host "$d"
check "publish: INDEX.md line" grep -qF "| [$name]($name/report.md) | 2026-12-04 14:41 | ccbdac32d004 | 6.12.118-swapalloc-perf (perf) | 3 | fallback 100 vs 0 % |" "$out/INDEX.md"
check "publish --latest: latest.json is the run's results.json" cmp -s "$out/latest.json" "$d/results.json"
python3 - "$out/latest.json" <<'PY' && ok "results.json: dir, report and plots point into the published run" || bad "results.json paths"
import json, os, sys
j = json.load(open(sys.argv[1]))
rel = j["dir"]
assert rel.endswith("/20261204-144059") and j["report"] == rel + "/report.md", j["dir"]
assert j["plots"] and all(p.startswith(rel + "/plots/") for p in j["plots"]), j["plots"]
PY
nout=$(ls "$out" | grep -c .)
st=$(pub --finding x "$run")
check "refused: a run already published" refused 'is already published'
rm -rf "$out"/* && nout=0
mk
python3 -c "import json,sys; p=sys.argv[1]; j=json.load(open(p)); j['failures']=['boot1: FAIL: x']; json.dump(j, open(p, 'w'))" "$run/results.json"
st=$(pub --finding x "$run")
check "refused: a run with failures" refused 'has failures, not published: boot1: FAIL: x'
mk
echo "boot3 1" >> "$run/raw/status.txt"
st=$(pub --finding x "$run")
check "refused: a guest that exited 1" refused 'guests that did not exit 0: boot3 1'
mk
sed -i 's/^commit .*/&-dirty/' "$run/meta.txt"
st=$(pub --finding x "$run")
check "refused: uncommitted sources" refused 'ran from uncommitted sources'
mk
sed -i 's/^commit .*/commit 0123456789ab/' "$run/meta.txt"
st=$(pub --finding x "$run")
check "refused: a commit git does not have" refused 'which this tree'"'"'s git does not have'
mk
sed -i 's/^label .*/label/' "$run/meta.txt"
st=$(pub --finding x "$run")
check "refused: no label" refused 'has no label'
mk
h=/'home'/  # a host path, spelt so that no check of the tree finds it here
st=$(pub --label "as in ${h}someone" --finding x "$run")
check "refused: a host path" refused "would name the host path $h"
st=$(pub --finding x "$tmp")
check "refused: no run directory" refused 'has no meta.txt'
exit $fails
