#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The project speaks of itself only: no tracked file names the working
# period a change or a run came from, refers to a bare issue number, or
# holds a path of the machine a run was made on.  Every tracked text file
# (git ls-files; binary files and compressed tables skipped) is scanned
# for:
#   period  "session(s) N", "sessions", "wave", "stop N" (not a version
#           such as "stop 6.12's"), "our build machines";
#   issue   "issue N", "issues N", "issue #N";
#   path    /work/..., /home/<user>/..., /root/... (but /root/* in the
#           shell case patterns that map guest paths, listed below).
# tests/host/words-allow.txt lists the exceptions, one "FILE:REGEX" per
# line (REGEX matched against the offending line), each with its reason.
# One PASS/FAIL line per kind; a FAIL names up to 20 hits, file:line.
#
#   tests/host/27-words.sh [DIR]   scan the git tree at DIR (default: this one)
set -uo pipefail
top=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
allow=$(dirname "$0")/words-allow.txt
passed=0
failed=0

declare -A pattern=(
	[period]='\bsessions?\b|\bwaves?\b|\bstop [0-9]+\b(?![.][0-9])|our build machines'
	[issue]='\bissues? #?[0-9]+\b'
	[path]='(?<![\w.-])/(work|home/[a-z][a-z0-9_-]*|root)/'
)

files=$(git -C "$top" ls-files) || { echo "FAIL: git ls-files in $top"; echo "0 passed, 1 failed"; exit 1; }

for kind in period issue path; do
	hits=$(cd "$top" && grep -I -n -i -P "${pattern[$kind]}" -- $files 2>/dev/null |
		grep -v -E '\.tar\.xz:' || true)
	if [ -f "$allow" ] && [ -n "$hits" ]; then
		while IFS= read -r rule; do
			case "$rule" in '' | '#'*) continue ;; esac
			f=${rule%%:*}
			re=${rule#*:}
			hits=$(awk -v f="$f" -v re="$re" '{ split($0, a, ":"); line = substr($0, length(a[1]) + length(a[2]) + 3) }
				!(a[1] == f && line ~ re)' <<<"$hits")
		done <"$allow"
	fi
	n=$(grep -c . <<<"$hits")
	if [ "$n" -eq 0 ]; then
		echo "PASS: no $kind words in $(wc -l <<<"$files") tracked files"
		passed=$((passed + 1))
	else
		echo "FAIL: $n $kind hit(s) in tracked files"
		head -n 20 <<<"$hits" | cut -c1-160 | sed 's/^/    /'
		failed=$((failed + 1))
	fi
done

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
