#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The test VM itself: the guest runs the kernel scripts/kernel-build.sh
# built, guest-init mounted what suites rely on, and a zram swap device can
# be set up and swapped to and from without losing data.
#
# vm: --mem 2G --smp 2 --timeout 300
set -euo pipefail
# shellcheck source=../lib/guest.sh
. "$(dirname "$0")/../lib/guest.sh"

# kernelrelease: uname -r is the release of the tree vm-run.sh booted.
want=${SWAPALLOC_KERNELRELEASE:-}
got=$(uname -r)
if [ -z "$want" ]; then
	fail "infrastructure: kernelrelease" "SWAPALLOC_KERNELRELEASE is not set (run me with scripts/vm-run.sh)"
elif [ "$got" = "$want" ]; then
	pass "infrastructure: kernelrelease"
else
	fail "infrastructure: kernelrelease" "uname -r is '$got', the built tree's kernelrelease is '$want'"
fi

# guest-mounts: the file systems guest-init promises.
missing=
for m in /proc /sys /dev /tmp /run /mnt/out /sys/kernel/debug /sys/kernel/tracing \
	 /sys/fs/cgroup /sys/fs/bpf; do
	mountpoint -q "$m" || missing+=" $m"
done
touch /mnt/out/.writable 2>/dev/null && rm -f /mnt/out/.writable || missing+=" /mnt/out(read-only)"
if [ -z "$missing" ]; then
	pass "infrastructure: guest-mounts"
else
	fail "infrastructure: guest-mounts" "not mounted:$missing"
fi

# zram-swap: 64 MiB of patterned memory out to zram with MADV_PAGEOUT and back.
if ! sv=$(tool swapverify); then
	fail zram-swap "tests/tools/swapverify is not built"
elif ! dev=$(setup_zram 128M); then
	fail zram-swap "setup_zram 128M failed"
else
	rc=0
	"$sv" -s 64M -q > /tmp/swapverify.log 2>&1 || rc=$?
	sed 's/^/# /' /tmp/swapverify.log
	# Field 5 of a block device's stat: write requests completed.
	writes=$(awk '{ print $5 }' "/sys/block/${dev##*/}/stat")
	if [ $rc -ne 0 ]; then
		fail zram-swap "swapverify -s 64M exited with status $rc"
	elif [ "${writes:-0}" -eq 0 ]; then
		fail zram-swap "swapverify passed but $dev saw no writes"
	else
		note "$dev: $writes write requests"
		pass zram-swap
	fi
fi

finish
