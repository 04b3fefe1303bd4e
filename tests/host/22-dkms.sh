#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# swapalloc in Debian's dkms (3.0.10) as a distribution user meets it, in a
# private mount namespace whose /var/lib/dkms (and, for the last step,
# /lib/modules) is a throwaway directory, so nothing reaches the host:
#  1. `make dkms-install` copies only what dkms needs and adds swapalloc;
#  2. the hook a kernel header package runs, /etc/kernel/header_postinst.d/dkms
#     (dkms autoinstall), exits 0 and says it skipped swapalloc for every
#     unpatched kernel with headers here (Debian's linux-headers-amd64);
#  3. `dkms build` against the patched tree builds swapalloc.ko, version
#     from VERSION;
#  4. the same hook for the patched kernel installs it;
#  5. `make dkms-remove` takes it all away again;
#  6. `make dkms-sources DESTDIR=...` copies the sources and runs no dkms;
#     `make install DESTDIR=... KDIR=<tree>` installs swapalloc.ko where
#     depmod indexes it.
# dkms.conf's PACKAGE_VERSION is a literal in every copy (step 1).
# SWAPALLOC_KERNEL_TREE names the patched tree (default: kernel-build.sh).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)

if [ -z "${SWAPALLOC_DKMS_NS:-}" ]; then
	# One version, in VERSION: the READMEs name none of their own.
	if grep -nE 'swapalloc[-/][0-9]+\.[0-9]' "$top/README.md" "$top/bpftrace/README.md"; then
		echo "FAIL: a README names a swapalloc version; write <VERSION> or \$(cat VERSION)" >&2
		exit 1
	fi
	"$top/scripts/deps.sh" dkms >/dev/null
	tree=${SWAPALLOC_KERNEL_TREE:-$("$top/scripts/kernel-build.sh" -q)}
	unshare -m true 2>/dev/null || { echo "SKIP: unshare -m (a private mount namespace) is not permitted here"; exit 77; }
	exec unshare -m env SWAPALLOC_DKMS_NS=1 SWAPALLOC_KERNEL_TREE="$tree" bash "$0"
fi

tree=$SWAPALLOC_KERNEL_TREE
release=$(cat "$tree/kernelrelease")
version=$(cat "$top/VERSION")
hook=/etc/kernel/header_postinst.d/dkms
tmp=$(mktemp -d /tmp/swapalloc-dkms.XXXXXX)
trap 'umount /lib/modules 2>/dev/null || true; umount /var/lib/dkms 2>/dev/null || true; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir -p "$tmp/dkms" "$tmp/src" "$tmp/share"
mount --bind "$tmp/dkms" /var/lib/dkms
mkopts=(-s -C "$top" DKMS_SOURCE_TREE="$tmp/src" BPFTRACE_DIR="$tmp/share/bpftrace")

# 1. The copy holds dkms' sources and nothing else.
make "${mkopts[@]}" dkms-install KVER=none
src=$tmp/src/swapalloc-$version
[ -f "$src/dkms.conf" ] || fail "make dkms-install made no $src/dkms.conf"
extra=$(cd "$src" && find . -type f | grep -vE '^\./(VERSION|dkms\.conf|Kbuild|Makefile|scripts/kdir-stamp\.mk|include/swapalloc/[a-z_]+\.h|module/[a-z_]+\.[ch]|module/kenv/[a-z_]+\.h|debugfs/[a-z_]+\.[ch])$' || true)
[ -z "$extra" ] || fail "make dkms-install copied more than dkms needs: $extra"
[ -x "$tmp/share/bpftrace/run" ] && [ -f "$tmp/share/bpftrace/alloc-latency.bt" ] ||
	fail "make dkms-install did not install bpftrace/ to BPFTRACE_DIR"
dkms status | grep -q "^swapalloc/$version: added" || fail "dkms status: $(dkms status)"
grep -qx "PACKAGE_VERSION=\"$version\"" "$src/dkms.conf" ||
	fail "$src/dkms.conf: PACKAGE_VERSION is not the literal \"$version\": $(grep PACKAGE_VERSION "$src/dkms.conf")"
echo "ok: make dkms-install: $(cd "$src" && find . -type f | wc -l) files, swapalloc/$version added"

# 2. Unpatched kernels: the header package's hook succeeds and says why.
unpatched=0
for build in /lib/modules/*/build; do
	k=$(basename "$(dirname "$build")")
	[ -f "$build/.config" ] || continue
	grep -q '^CONFIG_SWAP_ALLOC_HOOK=y' "$build/.config" && continue
	rc=0
	out=$("$hook" "$k" 2>&1) || rc=$?
	echo "$out" | sed 's/^/    /'
	[ $rc -eq 0 ] || fail "$hook $k exited $rc: a header package install would fail"
	grep -q "swapalloc: skipped for kernel $k: .*no CONFIG_SWAP_ALLOC_HOOK=y" <<<"$out" ||
		fail "$hook $k did not say that it skipped swapalloc"
	! dkms status | grep -q "^swapalloc/$version, $k" || fail "swapalloc built for unpatched $k"
	echo "ok: $hook $k (unpatched) exits 0 and skips swapalloc"
	unpatched=$((unpatched + 1))
done
[ $unpatched -gt 0 ] || fail "no unpatched kernel headers under /lib/modules (apt-get install linux-headers-amd64)"

# 3. The patched tree: dkms build.
grep -q '^CONFIG_SWAP_ALLOC_HOOK=y' "$tree/.config" ||
	fail "$tree/.config has no CONFIG_SWAP_ALLOC_HOOK=y: build it from a patches/ series that has the symbol"
dkms build -m swapalloc -v "$version" -k "$release" --kernelsourcedir "$tree"
ko=$(find /var/lib/dkms/swapalloc/"$version"/"$release" -name 'swapalloc.ko*' | head -n 1)
[ -n "$ko" ] || fail "dkms build produced no swapalloc.ko"
modinfo "$ko" | grep -E "^(version|vermagic|author):"
[ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$release" ] || fail "vermagic is not $release"
[ "$(modinfo -F version "$ko")" = "$version" ] || fail "module version is not VERSION's $version"
echo "ok: dkms build for $release: $ko"

# 4. The same hook for the patched kernel installs it (into a throwaway
# /lib/modules whose $release/build is the tree).
mkdir -p "$tmp/modules/$release"
ln -s "$tree" "$tmp/modules/$release/build"
mount --bind "$tmp/modules" /lib/modules
"$hook" "$release"
[ -f "/lib/modules/$release/updates/dkms/swapalloc.ko" ] ||
	[ -f "/lib/modules/$release/updates/dkms/swapalloc.ko.xz" ] ||
	fail "$hook $release installed no swapalloc.ko"
dkms status | grep -q "^swapalloc/$version, $release, .*: installed" || fail "dkms status: $(dkms status)"
echo "ok: $hook $release (patched) installs swapalloc"

# 5. make dkms-remove.
make "${mkopts[@]}" dkms-remove
[ ! -e "$src" ] || fail "make dkms-remove left $src"
[ ! -e "$tmp/share/bpftrace" ] || fail "make dkms-remove left the bpftrace scripts"
[ -z "$(dkms status)" ] || fail "dkms status after dkms-remove: $(dkms status)"
[ ! -e "/lib/modules/$release/updates/dkms/swapalloc.ko" ] || fail "dkms-remove left the installed module"
echo "ok: make dkms-remove"

# 6. For a packager: the sources alone; the module installed and indexed.
stage=$tmp/stage
make -s -C "$top" DESTDIR="$stage" DKMS_SOURCE_TREE=/usr/src dkms-sources
[ -f "$stage/usr/src/swapalloc-$version/dkms.conf" ] || fail "make dkms-sources DESTDIR= copied no dkms.conf"
[ -z "$(dkms status)" ] || fail "make dkms-sources ran dkms: $(dkms status)"
grep -qx "PACKAGE_VERSION=\"$version\"" "$stage/usr/src/swapalloc-$version/dkms.conf" ||
	fail "make dkms-sources: PACKAGE_VERSION is not \"$version\""
echo "ok: make dkms-sources DESTDIR=: $(find "$stage/usr/src" -type f | wc -l) files, no dkms"
make -s -C "$top" DESTDIR="$stage" KDIR="$tree" install >/dev/null
kdir=$stage/lib/modules/$release
[ -f "$kdir/updates/swapalloc.ko" ] || [ -f "$kdir/updates/swapalloc.ko.xz" ] ||
	fail "make install DESTDIR= put no swapalloc.ko in $kdir/updates"
grep -q '^updates/swapalloc\.ko[.a-z]*:' "$kdir/modules.dep" ||
	fail "depmod did not index updates/swapalloc.ko: $(head -c 200 "$kdir/modules.dep" 2>&1)"
[ "$(modinfo -b "$stage" -k "$release" -F version swapalloc)" = "$version" ] ||
	fail "modinfo -b $stage -k $release swapalloc does not find the module"
echo "ok: make install DESTDIR=: $kdir/updates/swapalloc.ko, in modules.dep, modinfo finds it"
