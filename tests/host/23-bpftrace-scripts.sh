#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The bpftrace scripts in the style of bpftrace's own tools: each .bt has
# an SPDX line, a "<name>.bt - what" line, a USAGE line and a needs line,
# and bpftrace/<name>_example.txt holds the command, output captured in the
# guest and how to read it, and ends with the script's USAGE lines (the
# USAGE line and the '//' + 8 spaces lines after it, without '// ').  A
# script's '// device:' line is one bpftrace/run knows.  bpftrace/run -h,
# --list and a bad name.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bt=$top/bpftrace
bad=0
err() { echo "FAIL: $*"; bad=1; }

n=0
for s in "$bt"/*.bt; do
	name=$(basename "$s" .bt)
	n=$((n + 1))
	[ "$(sed -n 2p "$s")" = "// SPDX-License-Identifier: GPL-2.0" ] || err "$name.bt: line 2 is not the SPDX line"
	grep -q "^// $name\.bt - " "$s" || err "$name.bt: no '// $name.bt - <what it shows>' line"
	grep -q "^// USAGE: $name\.bt" "$s" || err "$name.bt: no '// USAGE: $name.bt ...' line"
	grep -q "^// needs: " "$s" || err "$name.bt: no '// needs:' line"
	ex=$bt/${name}_example.txt
	if [ ! -f "$ex" ]; then
		err "$name.bt: no bpftrace/${name}_example.txt"
		continue
	fi
	grep -q "^# .*$name\.bt" "$ex" || err "${name}_example.txt: no '# ... $name.bt' command line"
	grep -q "^Tracing\|^# swapalloc recorder" "$ex" || err "${name}_example.txt: no captured output"
	[ "$(wc -l < "$ex")" -ge 12 ] || err "${name}_example.txt: too short to say how to read it"
	usage=$(awk '/^\/\/ USAGE: / { u = 1; sub(/^\/\/ /, ""); print; next }
		u && /^\/\/        / { sub(/^\/\/ /, ""); print; next } { u = 0 }' "$s")
	[ "$(tail -n "$(wc -l <<<"$usage")" "$ex")" = "$usage" ] ||
		err "${name}_example.txt does not end with $name.bt's USAGE lines"
	case $(sed -n 's|^// device: ||p' "$s") in
	"" | name | "name type" | "name major minor") ;;
	*) err "$name.bt: a '// device:' line bpftrace/run does not know" ;;
	esac
	if grep -q '\$1' "$s"; then
		grep -q "^// USAGE: $name\.bt \[" "$s" || err "$name.bt uses \$1 but USAGE shows no optional argument"
	fi
done
[ $n -ge 6 ] || err "only $n scripts in bpftrace/"

list=$("$bt/run" --list)
for s in "$bt"/*.bt; do
	grep -q "^$(basename "$s") " <<<"$list" || err "bpftrace/run --list does not name $(basename "$s")"
done
"$bt/run" -h | grep -q "bpftrace/run SCRIPT" || err "bpftrace/run -h prints no usage"
rc=0
"$bt/run" no-such-script >/tmp/swapalloc-run.$$ 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q "no script 'no-such-script'" /tmp/swapalloc-run.$$ ||
	err "bpftrace/run no-such-script: status $rc, $(cat /tmp/swapalloc-run.$$)"
rm -f /tmp/swapalloc-run.$$
[ $bad -eq 0 ] && echo "ok: $n scripts, run -h and --list"
exit $bad
