#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `dkms build` (Debian's dkms) of dkms.conf against the patched kernel tree,
# in a private dkms tree so that nothing is installed on the host.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
"$top/scripts/deps.sh" dkms >/dev/null
tree=$("$top/scripts/kernel-build.sh" -q)
release=$(cat "$tree/kernelrelease")
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=$tmp/src/swapalloc-$version
mkdir -p "$src" "$tmp/dkms"
# What a packager ships: the tracked sources, no build products.
(cd "$top" && git ls-files -z --cached --others --exclude-standard Kbuild Makefile dkms.conf include module debugfs 2>/dev/null ||
	find Kbuild Makefile dkms.conf include module debugfs -type f \( -name '*.[ch]' -o -name Kbuild \
		-o -name Makefile -o -name dkms.conf \) -print0) | (cd "$top" && xargs -0 cp --parents -t "$src")
opts=(--dkmstree "$tmp/dkms" --sourcetree "$tmp/src")
dkms add -m swapalloc -v "$version" "${opts[@]}"
dkms build -m swapalloc -v "$version" -k "$release" --kernelsourcedir "$tree" "${opts[@]}"
ko=$tmp/dkms/swapalloc/$version/$release/x86_64/module/swapalloc.ko
[ -f "$ko" ] || ko=$(find "$tmp/dkms" -name 'swapalloc.ko*' | head -n 1)
[ -n "$ko" ] && [ -f "$ko" ] || { echo "dkms build produced no swapalloc.ko"; exit 1; }
modinfo "$ko" | grep -E "^(version|vermagic):"
[ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$release" ]
