# SPDX-License-Identifier: GPL-2.0
#
# What counts as a kernel report in a guest's log, for scripts/vm-run.sh
# (the console) and tests/guest/34-faults.sh (its /dev/kmsg audit), which
# source this.  sa_report_pattern: a line that means the kernel is
# unhappy (kmemleak only when it reports leaks or gives up; it announces
# itself at boot).  sa_report_allow: lines that match it and are not
# reports: the lockdep notice every PROVE_LOCKING boot prints, and
# kmemleak's notice that it scans an object whole because the scan area's
# own allocation failed (fault injection), and KCSAN's report of a value
# change in virtqueue_kick_prepare(): it reads the avail event index that
# the device (QEMU, the 9p root's transport) writes in shared memory, a
# write no instrumented code makes ("race at unknown origin"), not a race
# between CPUs.  vm-run.sh adds "Call Trace:";
# 34-faults judges each stack by its frames instead.  swapalloc's own
# error lines count as reports too: the kernel's "swap: swapalloc still
# holds N slots" at unbind (patch 0006: slots lost until swapoff), and any
# "swapalloc: ... violation" or "swapalloc: ... leak" line.  Other
# modules' (tests/kmod's deliberate holds in 38-helpers) do not.
# tests/host/26-kernel-reports checks the pattern on planted lines.
# shellcheck disable=SC2034
sa_report_pattern='WARNING:|BUG:|Oops|Kernel panic|general protection fault|possible circular locking|possible recursive locking|INFO: inconsistent lock state|lockdep|KASAN|unreferenced object|kmemleak:.*(suspected memory leak|disabled|[Cc]annot|[Ee]rror)|soft lockup|blocked for more than|Unable to handle|swap: swapalloc still holds|swapalloc: .*(violation|leak)'
# shellcheck disable=SC2034
sa_report_allow='RCU lockdep checking is enabled|kmemleak: Cannot allocate a scan area, scanning the full object|BUG: KCSAN: data-race in virtqueue_kick_prepare\+'
