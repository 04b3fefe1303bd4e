#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every relative link in the tracked Markdown files (README.md, docs/,
# bench/README.md, the published bench reports, ...) points to a file or
# directory that is in the tree, and every #anchor into a Markdown file
# names one of its headings (GitHub's anchor rule: lower case, spaces to
# dashes, punctuation other than '-' and '_' dropped).  Links to the web
# are not followed.  One PASS/FAIL line per kind; a FAIL names up to 20
# bad links, file:line.
#
#   tests/host/28-doc-links.sh [DIR]   check the git tree at DIR (default: this one)
set -uo pipefail
top=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
cd "$top" || exit 1

git ls-files -z '*.md' | python3 -c '
import os, re, sys

files = [f for f in sys.stdin.read().split("\0") if f]
link = re.compile(r"\]\(([^)\s]*)\)")
anchors = {}

def slugs(path):
    if path not in anchors:
        s = set()
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                m = re.match(r"#+\s+(.*?)\s*#*\s*$", line)
                if m:
                    h = m.group(1).lower()
                    h = re.sub(r"[^\w\- ]", "", h)
                    s.add(h.replace(" ", "-"))
        anchors[path] = s
    return anchors[path]

missing, badanchor, n = [], [], 0
for f in files:
    with open(f, encoding="utf-8", errors="replace") as fh:
        lines = fh.read().split("\n")
    fence = False
    for i, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            fence = not fence
        if fence:
            continue
        for m in link.finditer(line):
            t = m.group(1)
            if not t or re.match(r"[a-z]+:", t):
                continue
            n += 1
            path, _, frag = t.partition("#")
            target = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
            if not os.path.exists(target):
                missing.append("%s:%d: %s" % (f, i, t))
            elif frag and target.endswith(".md") and frag not in slugs(target):
                badanchor.append("%s:%d: %s" % (f, i, t))

def report(what, bad):
    if bad:
        print("FAIL: %s: %d bad: %s" % (what, len(bad), "; ".join(bad[:20])))
    else:
        print("PASS: %s" % what)
    return not bad

ok = report("every relative link in %d Markdown files (%d links) names a file in the tree" % (len(files), n), missing)
ok = report("every #anchor into a Markdown file names one of its headings", badanchor) and ok
print("%d passed, %d failed" % (int(not missing) + int(not badanchor), int(bool(missing)) + int(bool(badanchor))))
sys.exit(0 if ok else 1)
'
