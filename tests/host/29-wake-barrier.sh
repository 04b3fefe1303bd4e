#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# No lost wake-up: every wake_up_var() in the patch series (the new side
# of each hunk) and in module/ follows a full barrier.  wake_up_var()
# looks at the wait queue without a lock; a waiter in wait_var_event()
# adds itself to the queue and then reads the condition.  Without
# smp_mb() between the waker's store of the condition and that look, the
# load can pass the store (store buffering, allowed on x86): the waker
# sees no waiter and the waiter the old value, and it sleeps until the
# next wake of that variable, if one comes.  The statement right before
# each wake_up_var() (comments and blank lines skipped) must be smp_mb();
# store_release_wake_up() carries its own barrier and passes as is.
# Under TCG the reordering cannot be forced, so this is the check that
# fails when a barrier goes missing.  One PASS/FAIL line per file with a
# wake; a FAIL names file:line.
#
#   tests/host/29-wake-barrier.sh [DIR]   scan the tree at DIR (default: this one)
set -uo pipefail
top=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
passed=0
failed=0

# scan FILE PATCH: "N wakes" or the lines of wakes without a barrier
# before them.  PATCH=1 reads only a patch's hunks, new side.
scan() {
	awk -v patch="$2" '
	function code(s) {
		sub(/^[ \t]+/, "", s)
		return s != "" && s !~ /^(\/\*|\*|\/\/)/
	}
	patch && /^@@ / { hunk = 1; prev = ""; next }
	patch && /^(diff |--- |\+\+\+ )/ { hunk = 0; next }
	{
		line = $0
		if (patch) {
			if (!hunk || line ~ /^-/)
				next
			line = substr(line, 2)
		}
		if (code(line) && line ~ /(^|[^_a-z])wake_up_var\(/) {
			wakes++
			p = prev
			sub(/^[ \t]+/, "", p)
			if (p !~ /^smp_mb\(\);/)
				printf "%d: after \"%s\"\n", FNR, p
		}
		if (code(line))
			prev = line
	}
	END { printf "wakes %d\n", wakes }' "$1"
}

files=$(cd "$top" && ls patches/*.patch 2>/dev/null; cd "$top" && git ls-files 'module/*.c' 'module/*.h' 2>/dev/null)
[ -n "$files" ] || { echo "FAIL: no patches or module sources in $top"; echo "0 passed, 1 failed"; exit 1; }
total=0
for f in $files; do
	case $f in *.patch) patch=1 ;; *) patch=0 ;; esac
	out=$(scan "$top/$f" $patch)
	n=$(sed -n 's/^wakes //p' <<<"$out")
	[ "${n:-0}" -gt 0 ] || continue
	total=$((total + n))
	bad=$(grep -v '^wakes ' <<<"$out")
	if [ -z "$bad" ]; then
		echo "PASS: $f: $n wake_up_var() after smp_mb()"
		passed=$((passed + 1))
	else
		echo "FAIL: $f: wake_up_var() with no smp_mb() right before it"
		while IFS= read -r l; do echo "    $f:$l"; done <<<"$bad"
		failed=$((failed + 1))
	fi
done
# The series wakes in bind and unbind and the module in its discard
# completion: none found means the scan itself is broken.
if [ "$total" -ge 3 ]; then
	echo "PASS: $total wake_up_var() calls found"
	passed=$((passed + 1))
else
	echo "FAIL: $total wake_up_var() calls found, at least 3 expected"
	failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
