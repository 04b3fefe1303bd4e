# SPDX-License-Identifier: GPL-2.0
#
#   make demo            boot the patched kernel, load swapalloc, swap, show stats and a trace
#   make check           every test (what CI runs)
#   make module KDIR=... build swapalloc.ko against a patched kernel tree
#   make kernel          build (or find cached) the patched guest kernel
#   make style           checkpatch --strict and sparse on the module and patches
#   make install KDIR=.. swapalloc.ko to $(DESTDIR)/lib/modules/<release>/updates, depmod
#   make dkms-install    dkms-sources, dkms add (and install for KVER), bpftrace scripts to
#                        /usr/share/swapalloc/bpftrace; make dkms-remove
#   make dkms-sources    only the sources (dkms.conf with its version) to /usr/src/swapalloc-<VERSION>
#   make bench           builtin vs swapalloc on the perf kernel (bench/README.md; hours under TCG)
#   make mutants         mutations of module/core.c, each must be caught by the host tests
#   make stress          the volume versions of the guest suites (tests/run --stress)

KDIR ?= /lib/modules/$(shell uname -r)/build

.PHONY: all module modules clean kernel demo check style unit bench mutants stress
.PHONY: install dkms-install dkms-sources dkms-add dkms-remove install-bpftrace uninstall-bpftrace

VERSION := $(shell cat $(CURDIR)/VERSION)

all: module

include $(CURDIR)/scripts/kdir-stamp.mk

module modules:
	@test -f $(KDIR)/Makefile || { echo "swapalloc: no kernel build tree at $(KDIR). Build the patched kernel with 'make kernel' and pass KDIR=<the path it prints>, or point KDIR at your own kernel with patches/ applied." >&2; exit 1; }
	@$(KDIR_STAMP)
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null || true
	rm -rf build

kernel:
	@scripts/kernel-build.sh

demo:
	@scripts/demo.sh

check:
	@tests/run

unit:
	@tests/run -k unit

mutants:
	@tests/mutants/run

# The volume versions of every guest suite, 60-stress included, and the
# pressure suites 35-38 with their bigger workloads.
stress:
	@SWAPALLOC_GUEST_ENV="DISCARD_THP_ITERATIONS=100 DISCARD_THP_MODES=none,-s CHURN_RACE_SECS=300 $(SWAPALLOC_GUEST_ENV)" \
		tests/run --stress

style:
	@scripts/style.sh

# What dkms builds from, and nothing else (no .git, no build/).
DKMS_FILES := VERSION dkms.conf Kbuild Makefile scripts/kdir-stamp.mk $(wildcard include/swapalloc/*.h \
	      module/*.[ch] module/kenv/*.h debugfs/*.[ch])
BPFTRACE_FILES := $(wildcard bpftrace/*.bt bpftrace/*_example.txt) bpftrace/run bpftrace/README.md
# Where: DESTDIR for packaging (then no dkms command runs), DKMS_SOURCE_TREE
# and DKMS_FLAGS (e.g. --dkmstree DIR) for a private dkms tree, KVER the
# kernel to build for at once if it carries the patches (default: running).
DKMS_SOURCE_TREE ?= /usr/src
DKMS_FLAGS ?=
PREFIX ?= /usr
BPFTRACE_DIR ?= $(PREFIX)/share/swapalloc/bpftrace
KVER ?= $(shell uname -r)
dkms_src = $(DESTDIR)$(DKMS_SOURCE_TREE)/swapalloc-$(VERSION)
dkms = dkms $(1) -m swapalloc -v $(VERSION) --sourcetree $(DKMS_SOURCE_TREE) $(DKMS_FLAGS)

# The module, where modules_install puts a kernel's extra modules, and
# depmod's index for that kernel under DESTDIR (a package's staging root).
KRELEASE = $(shell cat $(KDIR)/include/config/kernel.release 2>/dev/null)
install: module
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_PATH=$(DESTDIR) INSTALL_MOD_DIR=updates DEPMOD=true modules_install
	depmod -b $(or $(DESTDIR),/) -a $(KRELEASE)

# What a packager copies: the sources, and dkms.conf with VERSION written in.
dkms-sources:
	rm -rf $(dkms_src)
	install -d $(dkms_src)
	cp --parents -t $(dkms_src) $(DKMS_FILES)
	sed -i 's/@VERSION@/$(VERSION)/' $(dkms_src)/dkms.conf
	@grep -q '^PACKAGE_VERSION="$(VERSION)"$$' $(dkms_src)/dkms.conf || \
		{ echo "swapalloc: $(dkms_src)/dkms.conf has no PACKAGE_VERSION=\"$(VERSION)\"" >&2; exit 1; }

# dkms add, and dkms install for KVER if it carries the patches.
dkms-add: dkms-sources
ifeq ($(DESTDIR),)
	$(call dkms,add)
	@if grep -qs '^CONFIG_SWAP_ALLOC_HOOK=y' /lib/modules/$(KVER)/build/.config; then \
		$(call dkms,install) -k $(KVER); \
	else \
		echo "swapalloc: added to dkms; kernel $(KVER) has no CONFIG_SWAP_ALLOC_HOOK=y (no swapalloc patches/), so nothing is built for it.  dkms builds swapalloc when a patched kernel's headers are installed, or: dkms install swapalloc/$(VERSION) -k <release>"; \
	fi
endif

dkms-install: dkms-sources dkms-add install-bpftrace

dkms-remove: uninstall-bpftrace
ifeq ($(DESTDIR),)
	@if $(call dkms,status) 2>/dev/null | grep -q '^swapalloc/$(VERSION)'; then \
		echo "$(call dkms,remove) --all"; $(call dkms,remove) --all; \
	fi
endif
	rm -rf $(dkms_src)

install-bpftrace:
	install -d $(DESTDIR)$(BPFTRACE_DIR)
	install -m 0644 -t $(DESTDIR)$(BPFTRACE_DIR) $(filter-out bpftrace/run %.bt,$(BPFTRACE_FILES))
	install -m 0755 -t $(DESTDIR)$(BPFTRACE_DIR) bpftrace/run $(filter %.bt,$(BPFTRACE_FILES))

uninstall-bpftrace:
	rm -rf $(DESTDIR)$(BPFTRACE_DIR)
	-rmdir $(DESTDIR)$(dir $(BPFTRACE_DIR:/=)) 2>/dev/null

bench:
	@bench/run
