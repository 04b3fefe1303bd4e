#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/kernel-reports.sh, the pattern every guest's console is scanned
# with (scripts/vm-run.sh, 34-faults): planted report lines must match it
# and not its allow list, swapalloc's own error lines among them (a slot
# held at unbind fails the run); ordinary lines, and other modules'
# deliberate holds (38-helpers), must not.  One PASS/FAIL line per line.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/kernel-reports.sh
. "$top/scripts/kernel-reports.sh"
passed=0
failed=0

# is_report LINE: would vm-run.sh count LINE as a kernel report?
is_report() {
	grep -aE "$sa_report_pattern" <<<"$1" | grep -vaqE "$sa_report_allow"
}

check() {
	local want=$1 line=$2 got=no
	is_report "$line" && got=yes
	if [ "$got" = "$want" ]; then
		echo "PASS: report=$want: $line"
		passed=$((passed + 1))
	else
		echo "FAIL: report=$want: $line (the pattern says $got)"
		failed=$((failed + 1))
	fi
}

check yes '[   41.203117] swap: swapalloc still holds 512 slots of swap area 0 after ->quiesce(); they stay out of use until swapoff'
check yes '[   12.000001] swapalloc: zram0: invariant violation: cluster 3 on two lists'
check yes '[   12.000001] swapalloc: zram0: 3 slots leaked at unbind'
check yes '[    3.141592] WARNING: CPU: 1 PID: 77 at mm/swapfile.c:1234 swap_alloc_detach_device+0x1/0x2'
check yes '[    9.000000] BUG: KASAN: slab-use-after-free in swapalloc_free+0x10/0x20'
check yes '[  200.1] watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [kworker/0:1:12]'
check yes '[   60.000000] BUG: KCSAN: data-race in swapalloc_alloc_fast+0x1c/0x3f0 [swapalloc]'
check yes '[   60.000000] BUG: KCSAN: data-race in swap_alloc_account / swap_range_free'
check no '[   41.203117] swap: sa_helpers_test still holds 2048 slots of swap area 3 after ->quiesce(); they stay out of use until swapoff'
check no '[    5.000000] swapalloc: bound zram0: 1024 clusters, percpu cursors, rebuilt in 210 us, longest hold 80 us'
check no '[    5.000000] swapalloc: released zram0'
check no '[    5.000000] swapalloc: policy= must be auto, percpu or global, or antifrag or builtin'
check no '[    0.000000] RCU lockdep checking is enabled.'
check no '[  102.776555] BUG: KCSAN: data-race in virtqueue_kick_prepare+0x105/0x190'
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
