#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what swapalloc needs from Debian's packages when it is missing.
#   scripts/deps.sh [kernel] [vm] [tools] [test] [dkms] [bench]
# Says what it installs; fails with a message naming the package otherwise.
set -euo pipefail

declare -A pkgs_for=(
	[kernel]="linux-source-6.12 build-essential flex bison bc libelf-dev libssl-dev dwarves cpio kmod xz-utils zstd python3 rsync"
	[vm]="qemu-system-x86 util-linux procps e2fsprogs"
	[tools]="bpftrace stress-ng trace-cmd"
	[test]="clang llvm libclang-rt-14-dev sparse git"
	[dkms]="dkms linux-headers-amd64"
	[bench]="gnuplot-nox"
)

groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=(kernel vm tools test dkms bench)

missing=()
for g in "${groups[@]}"; do
	[ -n "${pkgs_for[$g]+x}" ] || { echo "deps.sh: unknown group '$g'" >&2; exit 2; }
	for p in ${pkgs_for[$g]}; do
		if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
			missing+=("$p")
		fi
	done
done

[ ${#missing[@]} -eq 0 ] && exit 0

echo "swapalloc: installing missing Debian packages: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
	echo "swapalloc: need root to install ${missing[*]}; run: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
stamp=/var/lib/apt/periodic/swapalloc-update
if [ ! -e "$stamp" ] || [ -n "$(find "$stamp" -mmin +720 2>/dev/null)" ]; then
	apt-get update -qq || echo "swapalloc: apt-get update failed, trying with the lists we have" >&2
	mkdir -p "$(dirname "$stamp")" && touch "$stamp"
fi
if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/swapalloc-apt.log 2>&1; then
	tail -n 20 /tmp/swapalloc-apt.log >&2
	echo "swapalloc: could not install: ${missing[*]} (log: /tmp/swapalloc-apt.log)" >&2
	exit 1
fi
echo "swapalloc: installed ${missing[*]}"
