#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: build what is missing, boot the patched kernel in QEMU, swap to
# zram with the builtin allocator and then with swapalloc, and show
# /sys/kernel/debug/swapalloc/ and a bpftrace latency histogram of both;
# then the same on a rotational disk, where swapalloc's global cluster
# keeps 64K folios whole (64K fallback and write runs, builtin vs swapalloc).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

"$top/scripts/deps.sh" kernel vm tools
echo "swapalloc: kernel (cached after the first build)"
tree=${SWAPALLOC_KERNEL_TREE:-$("$top/scripts/kernel-build.sh")}
echo "swapalloc: module and tools"
make -s -C "$top" module KDIR="$tree" >/dev/null
make -s -C "$top/tests/tools" >/dev/null
echo "swapalloc: booting $(cat "$tree/kernelrelease") under QEMU (TCG: about 6 minutes)"
SWAPALLOC_KERNEL_TREE=$tree exec "$top/scripts/vm-run.sh" --mem 1G --timeout 900 --disk rot0:72M \
	-- "$top/scripts/demo-guest.sh"
