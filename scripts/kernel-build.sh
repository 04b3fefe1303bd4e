#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the patched guest kernel: unpack Debian's linux-source-6.12, apply
# patches/, configure allnoconfig + scripts/config fragments, build bzImage,
# the tree modules are built against, and upstream's tools/mm allocator test.
#
# The tree lives outside the work tree, one per source version and flavor:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/swapalloc/linux-<version>-<flavor>/
# and .swapalloc-key inside it records the patches and config it was built
# from.  Nothing changed: the path is printed at once.  Patches changed:
# only the files whose content differs are replaced, and make rebuilds what
# depends on them.  Config changed: reconfigure and rebuild.
#
#   scripts/kernel-build.sh [-q]       build if needed, print the tree path
#   scripts/kernel-build.sh --config-only DIR   configure the flavor in DIR (a
#                                      tree of Kconfig files) and check it
# Environment: KERNEL_FLAVOR=base|debug|perf|lockstat|kcsan (default base), JOBS (default nproc).
#   base   base.config: lockdep, DEBUG_VM, DEBUG_ATOMIC_SLEEP (make check)
#   debug  base + debug.config: KASAN, kmemleak
#   perf   base + perf.config: the same kernel without those checks (make bench)
#   lockstat  perf + lockstat.config: CONFIG_LOCK_STAT (make bench's lock case)
# A later fragment's setting of an option overrides an earlier one's.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
quiet=0 config_only=
while [ $# -gt 0 ]; do
	case "$1" in
	-q) quiet=1; shift ;;
	--config-only) config_only=${2:?--config-only needs a directory}; shift 2 ;;
	*) echo "swapalloc: usage: scripts/kernel-build.sh [-q] [--config-only DIR]" >&2; exit 2 ;;
	esac
done
say() { [ $quiet -eq 1 ] || echo "swapalloc: $*" >&2; }

# Bump when this script builds differently, to invalidate cached trees.
recipe=2

flavor=${KERNEL_FLAVOR:-base}
case "$flavor" in
base) frags=("$top/scripts/config/base.config") ;;
debug) frags=("$top/scripts/config/base.config" "$top/scripts/config/debug.config") ;;
perf) frags=("$top/scripts/config/base.config" "$top/scripts/config/perf.config") ;;
lockstat) frags=("$top/scripts/config/base.config" "$top/scripts/config/perf.config" "$top/scripts/config/lockstat.config") ;;
kcsan) frags=("$top/scripts/config/base.config" "$top/scripts/config/kcsan.config") ;;
*) echo "swapalloc: KERNEL_FLAVOR must be base, debug, perf, lockstat or kcsan, not '$flavor'" >&2; exit 2 ;;
esac

"$top/scripts/deps.sh" kernel >&2

configure() {
	say "configuring: allnoconfig + ${frags[*]##*/}"
	KCONFIG_ALLCONFIG=/dev/null scripts/kconfig/merge_config.sh -n -O "$dir" "${frags[@]}" >"$log" 2>&1 || {
		tail -n 30 "$log" >&2; echo "swapalloc: kernel configuration failed (log: $log)" >&2; exit 1; }

	# merge_config only warns when a fragment's value did not stick: fail
	# instead.  An option a later fragment sets again is checked there.
	local bad=0 f line opt i later
	for i in "${!frags[@]}"; do
		f=${frags[$i]}
		later=("${frags[@]:$((i + 1))}")
		while IFS= read -r line; do
			case "$line" in
			CONFIG_*=*|"# CONFIG_"*" is not set")
				opt=${line#\# }; opt=${opt%%[= ]*}
				if [ ${#later[@]} -gt 0 ] && grep -qE "^(# )?$opt[= ]" "${later[@]}"; then
					continue
				fi ;;
			esac
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
}
# --config-only DIR: configure the flavor in DIR, a tree of the series'
# Kconfig files without a .config (tests/host/25-flavor-configs.sh), and stop.
if [ -n "$config_only" ]; then
	cd "$config_only"
	dir=$PWD
	log=$PWD/config.log
	configure
	say "$flavor: every fragment line is in $PWD/.config"
	exit 0
fi

tarball=$(ls /usr/src/linux-source-6.12.tar.* 2>/dev/null | head -n 1)
if [ -z "$tarball" ]; then
	echo "swapalloc: /usr/src/linux-source-6.12.tar.* missing; apt-get install linux-source-6.12" >&2
	exit 1
fi
version=$(dpkg-query -W -f='${Version}' linux-source-6.12)
cfgkey=$( { echo "$version $flavor $recipe"; cat "${frags[@]}"; } | sha256sum | cut -c1-16)
patchkey=$(cat /dev/null "$top"/patches/*.patch | sha256sum | cut -c1-16)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/swapalloc
dir=$cache/linux-${version//\~/_}-$flavor
key="$cfgkey $patchkey"

mkdir -p "$cache"
exec 9>"$cache/.lock-$flavor"
if ! flock -n 9; then
	say "waiting for another kernel build in $dir"
	flock 9
fi

if [ -f "$dir/.swapalloc-built" ] && [ "$(cat "$dir/.swapalloc-key" 2>/dev/null)" = "$key" ]; then
	echo "$dir"
	exit 0
fi

# Files the patch series touches.
patched_files() {
	sed -n 's|^+++ b/||p; s|^--- a/||p' "$@" | sort -u
}

# Pristine copies of files $2... from the tarball, into $1.
extract() {
	local to=$1
	shift
	mkdir -p "$to"
	[ $# -gt 0 ] || return 0
	tar -xf "$tarball" -C "$to" --strip-components=1 --wildcards "${@/#/*/}" 2>/dev/null || true
}

log=$dir/build.log
old_cfgkey=
[ -f "$dir/.swapalloc-key" ] && old_cfgkey=$(cut -d' ' -f1 "$dir/.swapalloc-key")
rm -f "$dir/.swapalloc-built"

if [ -f "$dir/Makefile" ] && [ "$old_cfgkey" = "$cfgkey" ]; then
	say "updating kernel $version ($flavor) in $dir: patches changed, only what depends on them recompiles"
	reconfigure=0
else
	say "building kernel $version ($flavor) in $dir; a cold build takes about 6-10 minutes on 2 cores"
	rm -rf "$dir"
	mkdir -p "$dir"
	tar -xf "$tarball" -C "$dir" --strip-components=1
	: > "$dir/.swapalloc-files"
	reconfigure=1
fi

# Apply patches/ to pristine copies of the files involved (those the old
# and the new series touch), then copy over only what differs, so that
# unchanged files keep their timestamps.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mapfile -t files < <( { cat "$dir/.swapalloc-files"; patched_files "$top"/patches/*.patch; } | sort -u)
extract "$work/src" "${files[@]}"
cp -a "$work/src" "$work/pristine"
for p in "$top"/patches/*.patch; do
	say "applying $(basename "$p")"
	if ! patch -d "$work/src" -p1 --batch --forward --quiet < "$p"; then
		echo "swapalloc: $(basename "$p") does not apply to linux-source-6.12 $version" >&2
		exit 1
	fi
done
for f in "${files[@]}"; do
	if [ -f "$work/src/$f" ]; then
		mkdir -p "$dir/$(dirname "$f")"
		cmp -s "$work/src/$f" "$dir/$f" || cp "$work/src/$f" "$dir/$f"
	elif [ ! -f "$work/pristine/$f" ]; then
		rm -f "$dir/$f"		# created by an old patch, gone now
	fi
done
patched_files "$top"/patches/*.patch > "$dir/.swapalloc-files"

cd "$dir"
jobs=${JOBS:-$(nproc)}

[ $reconfigure -eq 0 ] || configure

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

echo "$key" > .swapalloc-key
touch .swapalloc-built
say "kernel $(cat kernelrelease) ready"
echo "$dir"
