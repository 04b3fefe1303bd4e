#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Building against a kernel without patches/ stops at once, naming the patch.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
"$top/scripts/deps.sh" dkms >/dev/null
# Debian's linux-headers for its own kernel: a real, unpatched build tree.
kdir=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | head -n 1)
[ -n "$kdir" ] || { echo "no /usr/src/linux-headers-*-amd64 (apt-get install linux-headers-amd64)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Build a copy, so that the tree's own objects are not touched.
# (What make dkms-install copies: the Makefile includes scripts/kdir-stamp.mk.)
cp -r "$top/Kbuild" "$top/Makefile" "$top/include" "$top/module" "$top/debugfs" "$tmp/"
mkdir "$tmp/scripts" && cp "$top/scripts/kdir-stamp.mk" "$tmp/scripts/"
rc=0
make -C "$tmp" module KDIR="$kdir" >"$tmp/log" 2>&1 || rc=$?
cat "$tmp/log"
[ $rc -ne 0 ] || { echo "the build succeeded against unpatched $kdir"; exit 1; }
grep -q "swapalloc: .*has no include/linux/swap_alloc.h. Apply swapalloc's patches/" "$tmp/log" || {
	echo "no clear error naming the missing patch"; exit 1; }
if grep -q "CC \[M\]" "$tmp/log"; then
	echo "compilation started before the error"; exit 1
fi

# A missing KDIR gets a message too, not a bare make error.
rc=0
make -C "$tmp" module KDIR=/nonexistent >"$tmp/log2" 2>&1 || rc=$?
cat "$tmp/log2"
[ $rc -ne 0 ] && grep -q "no kernel build tree at /nonexistent" "$tmp/log2"
