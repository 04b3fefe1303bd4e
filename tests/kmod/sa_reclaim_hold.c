// SPDX-License-Identifier: GPL-2.0
/*
 * sa_reclaim_hold: hold open the window in which 6.12's builtin allocator
 * has dropped si->lock to reclaim a swap-cache slot, for
 * tests/guest/42-steal-swapoff.sh.
 *
 *   insmod sa_reclaim_hold.ko major=M minor=N [caller=SYMBOL] [hold_ms=MS]
 *   echo 1 > /sys/module/sa_reclaim_hold/parameters/armed
 *
 * A kprobe on __try_to_reclaim_swap() waits, once armed and only once, in
 * the first call for the swap device M:N made with TTRS_ANYWAY |
 * TTRS_DIRECT from CALLER (default alloc_swap_scan_cluster: the reclaim
 * that cluster_reclaim_range() does with si->lock and the cluster lock
 * dropped) until the device has lost SWP_WRITEOK (swapoff has begun) or
 * MS milliseconds (default 5000) have passed.  Read-only parameters:
 * hits (holds begun) and opened (holds that saw SWP_WRITEOK cleared).
 *
 * The kprobe sits at the function's entry, so once optimized it runs with
 * interrupts on, preemption off: the wait is a bounded busy-wait.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kallsyms.h>
#include <linux/kdev_t.h>
#include <linux/blkdev.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/sched/clock.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/swap.h>

/* mm/swapfile.c's reclaim flags. */
#define SA_RH_TTRS_ANYWAY	0x1
#define SA_RH_TTRS_DIRECT	0x8

static uint sa_rh_major;
module_param_named(major, sa_rh_major, uint, 0444);
MODULE_PARM_DESC(major, "major number of the swap device to hold");
static uint sa_rh_minor;
module_param_named(minor, sa_rh_minor, uint, 0444);
MODULE_PARM_DESC(minor, "minor number of the swap device to hold");
static char sa_rh_caller[KSYM_NAME_LEN] = "alloc_swap_scan_cluster";
module_param_string(caller, sa_rh_caller, sizeof(sa_rh_caller), 0444);
MODULE_PARM_DESC(caller, "hold only a reclaim called from this function");
static uint sa_rh_hold_ms = 5000;
module_param_named(hold_ms, sa_rh_hold_ms, uint, 0444);
MODULE_PARM_DESC(hold_ms, "longest hold, in milliseconds (at most 10000)");
static int sa_rh_armed;
module_param_named(armed, sa_rh_armed, int, 0644);
MODULE_PARM_DESC(armed, "write 1 to hold the next matching reclaim");
static int sa_rh_hits;
module_param_named(hits, sa_rh_hits, int, 0444);
MODULE_PARM_DESC(hits, "holds begun");
static int sa_rh_opened;
module_param_named(opened, sa_rh_opened, int, 0444);
MODULE_PARM_DESC(opened, "holds that saw the device lose SWP_WRITEOK");

static int sa_rh_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct swap_info_struct *si = (void *)regs_get_kernel_argument(regs, 0);
	unsigned long offset = regs_get_kernel_argument(regs, 1);
	unsigned long flags = regs_get_kernel_argument(regs, 2);
	unsigned long ret = *(unsigned long *)kernel_stack_pointer(regs);
	char name[KSYM_SYMBOL_LEN];
	u64 end;

	if (!READ_ONCE(sa_rh_armed) ||
	    flags != (SA_RH_TTRS_ANYWAY | SA_RH_TTRS_DIRECT) ||
	    !si->bdev || si->bdev->bd_dev != MKDEV(sa_rh_major, sa_rh_minor))
		return 0;
	sprint_symbol_no_offset(name, ret);
	if (strcmp(name, sa_rh_caller))
		return 0;
	if (cmpxchg(&sa_rh_armed, 1, 0) != 1)
		return 0;
	WRITE_ONCE(sa_rh_hits, sa_rh_hits + 1);

	end = local_clock() + (u64)sa_rh_hold_ms * NSEC_PER_MSEC;
	while (READ_ONCE(si->flags) & SWP_WRITEOK) {
		if (local_clock() > end)
			break;
		cpu_relax();
	}
	if (!(READ_ONCE(si->flags) & SWP_WRITEOK))
		WRITE_ONCE(sa_rh_opened, sa_rh_opened + 1);
	/* Printed after the hold: printk in the window would only widen it. */
	pr_info("held the reclaim of slot %lu from %s: SWP_WRITEOK %s\n", offset,
		name, (READ_ONCE(si->flags) & SWP_WRITEOK) ? "still set" : "cleared");
	return 0;
}

static struct kprobe sa_rh_kprobe = {
	.symbol_name	= "__try_to_reclaim_swap",
	.pre_handler	= sa_rh_pre,
};

static int __init sa_rh_init(void)
{
	int err;

	if (!sa_rh_major || sa_rh_hold_ms > 10000) {
		pr_warn("major= is required and hold_ms= at most 10000\n");
		return -EINVAL;
	}
	err = register_kprobe(&sa_rh_kprobe);
	if (err) {
		pr_warn("cannot probe __try_to_reclaim_swap: %d\n", err);
		return err;
	}
	pr_info("probing __try_to_reclaim_swap for %u:%u from %s\n",
		sa_rh_major, sa_rh_minor, sa_rh_caller);
	return 0;
}

static void __exit sa_rh_exit(void)
{
	unregister_kprobe(&sa_rh_kprobe);
}

module_init(sa_rh_init);
module_exit(sa_rh_exit);
MODULE_DESCRIPTION("Hold open the builtin allocator's reclaim window (test)");
MODULE_AUTHOR("The swapalloc developers");
MODULE_LICENSE("GPL");
