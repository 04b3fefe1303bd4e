// SPDX-License-Identifier: GPL-2.0
/*
 * sa_fast_hold: hold swapalloc's lockless fast path open, for
 * tests/guest/43-fast-path.sh.
 *
 *   insmod sa_fast_hold.ko major=M minor=N [cpu=C] [hold_ms=MS] [linger_ms=MS]
 *	[free=1]
 *   echo 1 > /sys/module/sa_fast_hold/parameters/armed
 *
 * A kretprobe on swapalloc_alloc_fast() (module/core.c; swapalloc must be
 * loaded first) waits, once armed and only once, at the return of the
 * first call on CPU C (default 0) for the swap device M:N, of order
 * min_order or more (default 0, writable), that committed entries: their
 * slots
 * are in swap_map but not accounted yet, and the caller, ->alloc_fast(),
 * runs inside rcu_read_lock() with preemption disabled and no lock held.
 * It waits until swapoff has cleared SWP_WRITEOK or an unbind has left
 * SWAP_ALLOC_BOUND, or hold_ms (default 8000) have passed, then lingers
 * linger_ms (default 2000) more, watching whether the other side gets past
 * the point where it must wait for the fast path: swapoff beyond
 * try_to_unuse() (si->users dying) or an unbind beyond its rebuild
 * (alloc_state SWAP_ALLOC_NONE).  Both wait with synchronize_rcu(), so
 * neither may.  Read-only parameters: hits (holds begun), opened (holds
 * that saw the device leave) and overtaken (holds the other side got past).
 *
 * The wait is a bounded busy-wait with preemption disabled: the suite runs
 * swapoff and the unbind on another CPU.
 *
 * With free=1 it holds a free without si->lock instead (patch 0017): a
 * kprobe on swap_range_clean() waits, as above, in the first call on CPU C
 * for the device while the device takes its frees without si->lock, that
 * is from swap_entry_range_free_fast(): the device seen bound, inside
 * rcu_read_lock(), no lock held yet, the slots still in use.  An unbind
 * must wait for it with synchronize_rcu(): otherwise it rebuilds the
 * builtin state and frees the module's while the free goes on to clear
 * the map and call ->free_fast().  (swapoff cannot get past try_to_unuse()
 * while the slots are in use, whatever it does.)
 *
 * An order-0 fast allocation is a swap slot cache refill, made with the
 * CPU's cache->alloc_lock held, which swapoff takes too before
 * try_to_unuse() (disable_swap_slots_cache_lock() drains every CPU's
 * cache): only a large folio's allocation, made without that mutex, shows
 * whether swapoff waits for the fast path itself.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/irqflags.h>
#include <linux/kdev_t.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/sched/clock.h>
#include <linux/moduleparam.h>
#include <linux/percpu-refcount.h>
#include <linux/swap.h>
#include <linux/swap_alloc.h>
#include <swapalloc/core.h>

static uint sa_fh_major;
module_param_named(major, sa_fh_major, uint, 0444);
MODULE_PARM_DESC(major, "major number of the swap device to hold");
static uint sa_fh_minor;
module_param_named(minor, sa_fh_minor, uint, 0444);
MODULE_PARM_DESC(minor, "minor number of the swap device to hold");
static int sa_fh_cpu;
module_param_named(cpu, sa_fh_cpu, int, 0444);
MODULE_PARM_DESC(cpu, "hold only on this CPU");
static uint sa_fh_hold_ms = 8000;
module_param_named(hold_ms, sa_fh_hold_ms, uint, 0444);
MODULE_PARM_DESC(hold_ms, "longest wait for swapoff or an unbind, in milliseconds (at most 10000)");
static uint sa_fh_linger_ms = 2000;
module_param_named(linger_ms, sa_fh_linger_ms, uint, 0444);
MODULE_PARM_DESC(linger_ms, "how long to hold on after that, in milliseconds (at most 5000)");
static int sa_fh_min_order;
module_param_named(min_order, sa_fh_min_order, int, 0644);
MODULE_PARM_DESC(min_order, "hold only allocations of this order or more");
static bool sa_fh_free;
module_param_named(free, sa_fh_free, bool, 0444);
MODULE_PARM_DESC(free, "hold a free without si->lock instead of a fast allocation");
static int sa_fh_armed;
module_param_named(armed, sa_fh_armed, int, 0644);
MODULE_PARM_DESC(armed, "write 1 to hold the next fast allocation that commits");
static int sa_fh_hits;
module_param_named(hits, sa_fh_hits, int, 0444);
MODULE_PARM_DESC(hits, "holds begun");
static int sa_fh_opened;
module_param_named(opened, sa_fh_opened, int, 0444);
MODULE_PARM_DESC(opened, "holds that saw swapoff or an unbind begin");
static int sa_fh_overtaken;
module_param_named(overtaken, sa_fh_overtaken, int, 0444);
MODULE_PARM_DESC(overtaken, "holds that swapoff or an unbind got past");

/* Still open to the fast path: writable and bound. */
static bool sa_fh_live(struct swap_info_struct *si)
{
	return (READ_ONCE(si->flags) & SWP_WRITEOK) &&
	       READ_ONCE(si->alloc_state) == SWAP_ALLOC_BOUND;
}

/* Past where swapoff or the unbind must wait for the fast path. */
static bool sa_fh_passed(struct swap_info_struct *si)
{
	return percpu_ref_is_dying(&si->users) ||
	       READ_ONCE(si->alloc_state) == SWAP_ALLOC_NONE;
}

/* What the return handler needs of swapalloc_alloc_fast()'s arguments. */
struct sa_fh_call {
	struct swapalloc_dev *dev;
	int order;
};

static int sa_fh_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct sa_fh_call *call = (struct sa_fh_call *)ri->data;

	call->dev = (struct swapalloc_dev *)regs_get_kernel_argument(regs, 0);
	call->order = (int)regs_get_kernel_argument(regs, 1);
	return 0;
}

/* Armed, on the CPU and device asked for: take the one hold. */
static bool sa_fh_take(struct swap_info_struct *si)
{
	/* Preemption is disabled: the CPU cannot change under us. */
	if (!READ_ONCE(sa_fh_armed) || raw_smp_processor_id() != sa_fh_cpu ||
	    !si->bdev || si->bdev->bd_dev != MKDEV(sa_fh_major, sa_fh_minor))
		return false;
	if (cmpxchg(&sa_fh_armed, 1, 0) != 1)
		return false;
	WRITE_ONCE(sa_fh_hits, sa_fh_hits + 1);
	return true;
}

/* Hold until the device leaves, then watch whether the other side passes. */
static void sa_fh_hold(struct swap_info_struct *si, const char *what, int n,
		       int order)
{
	bool opened, overtaken = false;
	u64 end;

	end = local_clock() + (u64)sa_fh_hold_ms * NSEC_PER_MSEC;
	while (sa_fh_live(si) && local_clock() < end)
		cpu_relax();
	opened = !sa_fh_live(si);
	if (opened) {
		WRITE_ONCE(sa_fh_opened, sa_fh_opened + 1);
		end = local_clock() + (u64)sa_fh_linger_ms * NSEC_PER_MSEC;
		while (local_clock() < end) {
			if (sa_fh_passed(si)) {
				overtaken = true;
				WRITE_ONCE(sa_fh_overtaken, sa_fh_overtaken + 1);
				break;
			}
			cpu_relax();
		}
	}
	/* Printed after the hold: printk in the window would only widen it. */
	pr_info("held %s of %d entries of order %d: %s, %s\n",
		what, n, order,
		opened ? "the device left" : "the device stayed",
		overtaken ? "overtaken" : "not overtaken");
}

static int sa_fh_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct sa_fh_call *call = (struct sa_fh_call *)ri->data;
	struct swap_info_struct *si = call->dev->env.si;
	int n = (int)regs_return_value(regs);

	if (n <= 0 || call->order < READ_ONCE(sa_fh_min_order) ||
	    !sa_fh_take(si))
		return 0;
	sa_fh_hold(si, "a fast allocation", n, call->order);
	return 0;
}

/* swap_range_clean(si, offset, nr), from a free without si->lock. */
static int sa_fh_free_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct swap_info_struct *si = (void *)regs_get_kernel_argument(regs, 0);
	unsigned int nr = regs_get_kernel_argument(regs, 2);

	/*
	 * Frees of such a device take no other path while it is bound.  Not
	 * with interrupts off (a slot cache's batch, or a kprobe not yet
	 * optimized, run from int3): the guest's clock would stop with them,
	 * and the hold with it.
	 */
	if (irqs_disabled() || !READ_ONCE(si->alloc_free_fast) ||
	    READ_ONCE(si->alloc_state) != SWAP_ALLOC_BOUND || !sa_fh_take(si))
		return 0;
	sa_fh_hold(si, "a free", nr, 0);
	return 0;
}

static struct kprobe sa_fh_free_kprobe = {
	.symbol_name	= "swap_range_clean",
	.pre_handler	= sa_fh_free_pre,
};

static struct kretprobe sa_fh_kretprobe = {
	.kp.symbol_name	= "swapalloc_alloc_fast",
	.entry_handler	= sa_fh_entry,
	.handler	= sa_fh_ret,
	.data_size	= sizeof(struct sa_fh_call),
	.maxactive	= 16,
};

static int __init sa_fh_init(void)
{
	int err;

	if (!sa_fh_major || sa_fh_hold_ms > 10000 || sa_fh_linger_ms > 5000) {
		pr_warn("major= is required, hold_ms= at most 10000, linger_ms= at most 5000\n");
		return -EINVAL;
	}
	if (sa_fh_free)
		err = register_kprobe(&sa_fh_free_kprobe);
	else
		err = register_kretprobe(&sa_fh_kretprobe);
	if (err) {
		pr_warn("cannot probe %s (swapalloc loaded?): %d\n",
			sa_fh_free ? "swap_range_clean" : "swapalloc_alloc_fast", err);
		return err;
	}
	pr_info("probing %s for %u:%u\n",
		sa_fh_free ? "swap_range_clean" : "swapalloc_alloc_fast",
		sa_fh_major, sa_fh_minor);
	return 0;
}

static void __exit sa_fh_exit(void)
{
	if (sa_fh_free)
		unregister_kprobe(&sa_fh_free_kprobe);
	else
		unregister_kretprobe(&sa_fh_kretprobe);
}

module_init(sa_fh_init);
module_exit(sa_fh_exit);
MODULE_DESCRIPTION("Hold open swapalloc's lockless fast path (test)");
MODULE_AUTHOR("The swapalloc developers");
MODULE_LICENSE("GPL");
