#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# swapalloc.ko builds against the patched tree without a single warning.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tree=$("$top/scripts/kernel-build.sh" -q)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Kbuild's clean only: "make clean" also removes build/, where
# host/10-unit builds its binaries (make check runs it beside this).
make -C "$tree" M="$top" clean >/dev/null 2>&1
if ! make -C "$top" module KDIR="$tree" W=1 >"$log" 2>&1; then
	cat "$log"
	echo "module build failed"
	exit 1
fi
if grep -E "warning:|error:" "$log"; then
	echo "module build printed warnings"
	exit 1
fi
modinfo "$top/swapalloc.ko" | grep -E "^(version|vermagic|parm):"
vermagic=$(modinfo -F vermagic "$top/swapalloc.ko")
[ "${vermagic%% *}" = "$(cat "$tree/kernelrelease")" ] || {
	echo "vermagic '$vermagic' does not match $(cat "$tree/kernelrelease")"; exit 1; }
