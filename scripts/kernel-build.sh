#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the patched guest kernel: unpack Debian's linux-source-6.12, apply
# patches/, configure allnoconfig + scripts/config fragments, build bzImage,
# the tree modules are built against, and upstream's tools/mm allocator test.
#
# The result is cached outside the work tree, keyed by source version,
# patches, config and this script:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/swapalloc/linux-<version>-<flavor>-<key>/
# A warm run prints that directory and does nothing else.
#
#   scripts/kernel-build.sh [-q]       build if needed, print the tree path
# Environment: KERNEL_FLAVOR=base|debug (default base), JOBS (default nproc).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
quiet=0
[ "${1:-}" = "-q" ] && quiet=1
say() { [ $quiet -eq 1 ] || echo "swapalloc: $*" >&2; }

flavor=${KERNEL_FLAVOR:-base}
case "$flavor" in
base) frags=("$top/scripts/config/base.config") ;;
debug) frags=("$top/scripts/config/base.config" "$top/scripts/config/debug.config") ;;
*) echo "swapalloc: KERNEL_FLAVOR must be base or debug, not '$flavor'" >&2; exit 2 ;;
esac

"$top/scripts/deps.sh" kernel >&2

tarball=$(ls /usr/src/linux-source-6.12.tar.* 2>/dev/null | head -n 1)
if [ -z "$tarball" ]; then
	echo "swapalloc: /usr/src/linux-source-6.12.tar.* missing; apt-get install linux-source-6.12" >&2
	exit 1
fi
version=$(dpkg-query -W -f='${Version}' linux-source-6.12)
key=$( { echo "$version $flavor"; cat "$top"/patches/*.patch "${frags[@]}" "$0"; } | sha256sum | cut -c1-12)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/swapalloc
dir=$cache/linux-$version-$flavor-$key

if [ -f "$dir/.swapalloc-built" ]; then
	echo "$dir"
	exit 0
fi

say "building kernel $version ($flavor) in $dir; a cold build takes about 10 minutes on 2 cores"
mkdir -p "$cache"
rm -rf "$dir"
mkdir -p "$dir"
tar -xf "$tarball" -C "$dir" --strip-components=1

cd "$dir"
for p in "$top"/patches/*.patch; do
	say "applying $(basename "$p")"
	if ! patch -p1 --batch --forward --quiet < "$p"; then
		echo "swapalloc: $(basename "$p") does not apply to linux-source-6.12 $version" >&2
		exit 1
	fi
done

jobs=${JOBS:-$(nproc)}
log=$dir/build.log
say "configuring: allnoconfig + ${frags[*]##*/}"
KCONFIG_ALLCONFIG=/dev/null scripts/kconfig/merge_config.sh -n -O "$dir" "${frags[@]}" >"$log" 2>&1 || {
	tail -n 30 "$log" >&2; echo "swapalloc: kernel configuration failed (log: $log)" >&2; exit 1; }

# merge_config only warns when a fragment's value did not stick: fail instead.
bad=0
for f in "${frags[@]}"; do
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*)
			if ! grep -qxF "$line" .config; then
				echo "swapalloc: $line from ${f##*/} is not in the final .config" >&2
				bad=1
			fi ;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }; opt=${opt%% *}
			if grep -q "^$opt=" .config; then
				echo "swapalloc: $opt should be unset (${f##*/})" >&2
				bad=1
			fi ;;
		esac
	done < "$f"
done
[ $bad -eq 0 ] || exit 1

say "compiling with $jobs jobs (log: $log)"
if ! make -j"$jobs" >>"$log" 2>&1; then
	grep -E "error|Error" "$log" | head -n 20 >&2
	echo "swapalloc: kernel build failed (log: $log)" >&2
	exit 1
fi
make -s kernelrelease > kernelrelease

say "building tools/mm/thp_swap_allocator_test from the same source"
make -C tools/mm thp_swap_allocator_test >>"$log" 2>&1 || {
	echo "swapalloc: building tools/mm/thp_swap_allocator_test failed (log: $log)" >&2; exit 1; }

touch .swapalloc-built
say "kernel $(cat kernelrelease) ready"
echo "$dir"
