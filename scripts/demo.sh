#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: build what is missing, boot the patched kernel in QEMU, swap to
# zram with the builtin allocator and then with swapalloc, and show
# /sys/kernel/debug/swapalloc/ and a bpftrace latency histogram of both.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

"$top/scripts/deps.sh" kernel vm tools
echo "swapalloc: kernel (cached after the first build)"
tree=$("$top/scripts/kernel-build.sh")
echo "swapalloc: module and tools"
make -s -C "$top" module KDIR="$tree" >/dev/null
make -s -C "$top/tests/tools" >/dev/null
echo "swapalloc: booting $(cat "$tree/kernelrelease") under QEMU (TCG: about 2 minutes)"
SWAPALLOC_KERNEL_TREE=$tree exec "$top/scripts/vm-run.sh" --mem 1G --timeout 900 \
	-- "$top/scripts/demo-guest.sh"
