# SPDX-License-Identifier: GPL-2.0
#
#   make demo            boot the patched kernel, load swapalloc, swap, show stats and a trace
#   make check           every test (what CI runs)
#   make stress          the pressure suites (35-38) with bigger workloads
#   make module KDIR=... build swapalloc.ko against a patched kernel tree
#   make kernel          build (or find cached) the patched guest kernel
#   make style           checkpatch --strict and sparse on the module and patches

KDIR ?= /lib/modules/$(shell uname -r)/build

.PHONY: all module modules clean kernel demo check stress style unit

all: module

module modules:
	@test -f $(KDIR)/Makefile || { echo "swapalloc: no kernel build tree at $(KDIR). Build the patched kernel with 'make kernel' and pass KDIR=<the path it prints>, or point KDIR at your own kernel with patches/ applied." >&2; exit 1; }
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

stress:
	@SWAPALLOC_GUEST_ENV="DISCARD_THP_ITERATIONS=100 CHURN_RACE_SECS=300 $(SWAPALLOC_GUEST_ENV)" \
		tests/run -k 35-discard -k 36-bind-churn -k 37-bigdev -k 38-helpers

unit:
	@tests/run -k unit

style:
	@scripts/style.sh
