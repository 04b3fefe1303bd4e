#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Kernel style on everything that goes into the kernel or the module:
# checkpatch.pl --strict (from the patched tree) on patches/, on the
# module's C files and on the userspace tools, and sparse on the module
# build and on the bench's kernel module (bench/kmod).  Exit 1 on any
# finding.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/deps.sh" test >/dev/null
# The tree tests/run boots, when it was given one: building the cached one
# here would replace it under guests that are running from it.
tree=${SWAPALLOC_KERNEL_TREE:-$("$top/scripts/kernel-build.sh" -q)}
cp="$tree/scripts/checkpatch.pl"
bad=0

# --no-tree: in a tree, checkpatch runs scripts/spdxcheck.py, which needs
# the kernel's git history; the unpacked source has none, and for the same
# reason no commit id (a Fixes: tag's) can be looked up: UNKNOWN_COMMIT_ID
# is ignored, the ids being upstream's.
echo "== checkpatch --strict patches/"
for p in "$top"/patches/*.patch; do
	if ! perl "$cp" --strict --quiet --no-tree --ignore UNKNOWN_COMMIT_ID "$p"; then
		echo "   in $(basename "$p")"
		bad=1
	fi
done

echo "== checkpatch --strict module sources"
mapfile -t srcs < <(cd "$top" && ls module/*.c module/*.h module/kenv/*.h debugfs/*.c include/swapalloc/*.h)
(cd "$top" && perl "$cp" --strict --quiet --no-tree --show-types \
	-f "${srcs[@]}") || bad=1

# The userspace tools and the test module in kernel style too, less what
# only makes sense in the kernel (u64 for uint64_t, BIT(), PRIx64 is not
# CamelCase, __func__ in usage text, unsplit format strings).
echo "== checkpatch --strict userspace tools and test module"
mapfile -t tools < <(cd "$top" && ls tests/tools/*.c bench/*.c bench/*.h tests/kmod/*.c bench/kmod/*.c | grep -v '\.mod\.c$')
(cd "$top" && perl "$cp" --strict --quiet --no-tree --show-types \
	--ignore PREFER_KERNEL_TYPES,CAMELCASE,BIT_MACRO,EMBEDDED_FUNCTION_NAME,LONG_LINE_STRING,SPLIT_STRING,VOLATILE \
	-f "${tools[@]}") || bad=1

# Every helper the series exports has kernel-doc, and kernel-doc finds
# nothing wrong in the files the series adds to or changes.
echo "== kernel-doc of the series' exports"
kd="$tree/scripts/kernel-doc"
exports=$(sed -n 's/^EXPORT_SYMBOL_GPL(\(swap_alloc_[a-z_]*\));/\1/p' "$tree/mm/swapfile.c")
[ -n "$exports" ] || { echo "   no swap_alloc_* exports in $tree/mm/swapfile.c"; bad=1; }
for sym in $exports; do
	if ! perl "$kd" -rst -function "$sym" "$tree/mm/swapfile.c" 2>/dev/null |
		grep -q "^.. c:function::"; then
		echo "   $sym: exported without kernel-doc"
		bad=1
	fi
done
for f in mm/swapfile.c include/linux/swap_alloc.h; do
	out=$(perl "$kd" -none -Wall "$tree/$f" 2>&1 | grep -i "swap_alloc" || true)
	[ -z "$out" ] || { echo "$out"; bad=1; }
done

echo "== sparse"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# C=2 runs sparse on every source whether or not it needs compiling: no
# clean build needed.
make -C "$top" module KDIR="$tree" C=2 CHECK="sparse -Wno-unknown-attribute" >"$log" 2>&1 || {
	cat "$log"; bad=1; }
if grep -E "^/.*: (warning|error):" "$log"; then
	bad=1
fi
# The bench's kernel module too, built in a scratch copy.
kmod=$(mktemp -d)
trap 'rm -f "$log"; rm -rf "$kmod"' EXIT
cp "$top/bench/kmod/Kbuild" "$top"/bench/kmod/*.c "$kmod/"
make -C "$tree" M="$kmod" C=2 CHECK="sparse -Wno-unknown-attribute" modules >"$log" 2>&1 || {
	cat "$log"; bad=1; }
if grep -E "^/.*: (warning|error):" "$log"; then
	bad=1
fi

[ $bad -eq 0 ] && echo "style: clean"
exit $bad
