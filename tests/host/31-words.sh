#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tracked files speak of the project only: no name of a working period
# ("session", "wave", "stop N"), no bare issue numbers ("issue N", "#N"),
# no path of the machine a file was written on (/work/..., /root/...,
# /home/<user>).  tests/host/31-words.allow lists lines that are real
# identifiers: each non-comment line is a fixed string, and a hit whose
# line contains one is allowed.  One PASS/FAIL line per file with hits.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
allow=tests/host/31-words.allow
pattern='\bsessions?\b|\bwaves?\b|\bstop [0-9]+([^0-9.]|$)|\bissues? #?[0-9]+\b|(^|[ (])#[0-9]+\b|/work/|/root/|/home/[a-z]|our build machines'
self=tests/host/31-words.sh
pats=$(mktemp)
trap 'rm -f "$pats"' EXIT
grep -vE '^(#|$)' "$allow" >"$pats" || true
echo "$self" >>"$pats"
declare -A bad=()
nbad=0
while IFS= read -r hit; do
	f=${hit%%:*}
	case $f in "$self"|"$allow") continue ;; esac
	bad[$f]=$(( ${bad[$f]:-0} + 1 ))
	[ "${bad[$f]}" -le 3 ] && echo "  ${hit:0:160}"
	nbad=$((nbad + 1))
done < <(git ls-files -z | xargs -0 grep -nIiE "$pattern" -- | grep -vF -f "$pats" || true)
for f in "${!bad[@]}"; do
	echo "FAIL: $f: ${bad[$f]} working-period word(s) or host path(s)"
done
[ "$nbad" -gt 0 ] || echo "PASS: no working-period word or host path in $(git ls-files | wc -l) tracked files"
