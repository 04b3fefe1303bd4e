#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The patched mm/swapfile.c and mm/memory.c build, without a warning, with
# CONFIG_SWAP_ALLOC_HOOK off: a distribution that applies patches/ and
# leaves the option off gets the kernel it had.  The guest kernel has the
# option on, so this compiles the tree's mm/swapfile.c once more with the
# command kbuild used for it, the option undefined after the config is
# read, into a scratch object: nothing in the tree is touched.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tree=${SWAPALLOC_KERNEL_TREE:-$("$top/scripts/kernel-build.sh" -q)}
cmdfile=$tree/mm/.swapfile.o.cmd
[ -f "$cmdfile" ] || { echo "FAIL: no $cmdfile (is $tree a built tree?)"; exit 1; }
grep -q '^CONFIG_SWAP_ALLOC_HOOK=y' "$tree/.config" ||
	{ echo "FAIL: $tree/.config has no CONFIG_SWAP_ALLOC_HOOK=y"; exit 1; }

tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
echo '#undef CONFIG_SWAP_ALLOC_HOOK' > "$tmp/hook-off.h"
# hook_off NAME: compile mm/NAME.c once more with the option off, into
# $tmp/NAME.o; fail on an error or a warning.  Only the compiler: what
# follows the first ';' (objtool) works on the tree's own object.
hook_off() {
	local f=$1 cmd rc=0
	cmd=$(sed -n "s/^savedcmd_mm\/$f.o := //p" "$tree/mm/.$f.o.cmd" | cut -d';' -f1)
	[ -n "$cmd" ] || { echo "FAIL: no compile command in $tree/mm/.$f.o.cmd"; exit 1; }
	# Drop the dependency output, write the object elsewhere, and undefine
	# the option after kconfig.h (later -include files are read later).
	cmd=$(sed -e 's/-Wp,-MMD,[^ ]*//' -e "s| -o mm/$f.o | -o $tmp/$f.o -include $tmp/hook-off.h |" <<<"$cmd")
	grep -q -- "-include $tmp/hook-off.h" <<<"$cmd" ||
		{ echo "FAIL: could not rewrite the mm/$f.c command"; exit 1; }
	(cd "$tree" && eval "$cmd") >"$tmp/log" 2>&1 || rc=$?
	cat "$tmp/log"
	[ $rc -eq 0 ] || { echo "FAIL: mm/$f.c does not build with CONFIG_SWAP_ALLOC_HOOK off"; exit 1; }
	if grep -q 'warning:' "$tmp/log"; then
		echo "FAIL: mm/$f.c warns with CONFIG_SWAP_ALLOC_HOOK off"; exit 1
	fi
}

hook_off swapfile
# The hook really was off: none of its exported symbols is in the object.
nm "$tmp/swapfile.o" > "$tmp/syms"	# not piped: grep -q would SIGPIPE nm
if grep -q 'swap_alloc_register' "$tmp/syms"; then
	echo "FAIL: the object still has swap_alloc_register: the option was not undefined"; exit 1
fi
grep -q ' T get_swap_pages$' "$tmp/syms" ||
	{ echo "FAIL: no get_swap_pages in the object"; exit 1; }
echo "mm/swapfile.c builds cleanly with CONFIG_SWAP_ALLOC_HOOK off"

# mm/memory.c asks the hook at swap-in (patch 0011): with the option off
# it builds without a warning and calls nothing of the hook's (the stub
# in mm/swap.h), while the tree's own object, built with it on, does.
hook_off memory
nm "$tmp/memory.o" > "$tmp/syms"
nm "$tree/mm/memory.o" > "$tmp/syms-on"
grep -q 'swap_alloc_keep_swapcache' "$tmp/syms-on" ||
	{ echo "FAIL: the tree's mm/memory.o does not call swap_alloc_keep_swapcache"; exit 1; }
if grep -q 'swap_alloc_keep_swapcache' "$tmp/syms"; then
	echo "FAIL: mm/memory.o calls swap_alloc_keep_swapcache with the option off"; exit 1
fi
echo "mm/memory.c builds cleanly with CONFIG_SWAP_ALLOC_HOOK off and asks no module"
