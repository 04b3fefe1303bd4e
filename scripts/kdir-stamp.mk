# SPDX-License-Identifier: GPL-2.0
#
# Included by the Makefiles that build external modules (the top one
# and tests/kmod's).  Kbuild relinks an external module when its objects
# change, not when only the tree's vmlinux does; but the module's BTF is
# made against vmlinux, and a kernel with other BTF refuses it ("failed to
# validate module BTF", insmod: Invalid parameters).  So `@$(KDIR_STAMP)`
# before the module build drops the .ko whenever the tree or its vmlinux
# is not the one it was linked against (.kdir-stamp in the current
# directory).  The objects go too: Kbuild compiles an external module with
# include paths relative to the tree, so after a switch to another tree
# (another KERNEL_FLAVOR) it would find every object up to date and link
# the old tree's, whose version magic the new kernel refuses.
KDIR_STAMP = stamp="$(KDIR) $$(stat -c %Y $(KDIR)/vmlinux 2>/dev/null)"; \
	[ "$$(cat .kdir-stamp 2>/dev/null)" = "$$stamp" ] || { \
		find . -path ./build -prune -o -type f \( -name '*.ko' -o -name '*.o' \
			-o -name '*.mod' -o -name '*.mod.c' \) -print0 | xargs -0 rm -f; \
		echo "$$stamp" > .kdir-stamp; }
