#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every kernel flavor configures: allnoconfig + its scripts/config
# fragments, through scripts/kernel-build.sh's own configure step, leaves
# every fragment line in the final .config (an option a later fragment
# sets again is checked there).  make check builds only the base flavor,
# so without this a fragment change that breaks KERNEL_FLAVOR=debug or
# perf (a later fragment turning off an option that base's lines depend
# on) shows only when someone builds that flavor, an hour later.  The
# Kconfig files come from the base tree (the series applied); each flavor
# is configured in a scratch copy of them, nothing is built.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tree=${SWAPALLOC_KERNEL_TREE:-$("$top/scripts/kernel-build.sh" -q)}
[ -f "$tree/Kconfig" ] || { echo "FAIL: no $tree/Kconfig (is $tree a kernel tree?)"; exit 1; }

tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
# What kconfig reads: every Kconfig and Makefile (the top Makefile
# includes arch/x86/Makefile and scripts/Kbuild.include for config
# targets), and scripts/ whole (kconfig's sources, the shell helpers
# Kconfig calls).
(cd "$tree" && find . \( -name 'Kconfig*' -o -name 'Makefile*' -o -name '*.include' \) \
	-not -path './tools/*' -print0 | cpio -0pdm --quiet "$tmp/src") ||
	{ echo "FAIL: copying the Kconfig files of $tree"; exit 1; }
cp -a "$tree/scripts" "$tmp/src/"
rm -f "$tmp/src/.config"

flavors=$(sed -n 's/^\([a-z]*\)) frags=.*/\1/p' "$top/scripts/kernel-build.sh")
[ -n "$flavors" ] || { echo "FAIL: no flavors found in scripts/kernel-build.sh"; exit 1; }
# configure F: one flavor in its own copy; its lines go to $tmp/F.out.
configure() {
	local f=$1 out
	cp -a "$tmp/src" "$tmp/$f"
	if out=$(KERNEL_FLAVOR=$f "$top/scripts/kernel-build.sh" --config-only "$tmp/$f" 2>&1); then
		echo "PASS: $f: $(grep -c '^CONFIG_.*=' "$tmp/$f/.config") options set, every fragment line in place"
	else
		echo "$out" | sed 's/^/    /'
		echo "FAIL: KERNEL_FLAVOR=$f does not configure as its fragments say"
	fi
	rm -rf "${tmp:?}/$f"
}

# Two flavors at a time (each configure is one CPU's work), printed in order.
pids=()
for f in $flavors; do
	[ ${#pids[@]} -lt 2 ] || { wait "${pids[0]}"; pids=("${pids[@]:1}"); }
	configure "$f" > "$tmp/$f.out" 2>&1 &
	pids+=($!)
done
wait
failed=0
for f in $flavors; do
	cat "$tmp/$f.out"
	grep -q '^PASS: ' "$tmp/$f.out" || failed=1
done
exit $failed
