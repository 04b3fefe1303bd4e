// SPDX-License-Identifier: GPL-2.0
/*
 * sa_free_probe: is a freed slot clean when swapalloc hears of it?  For
 * tests/guest/43-fast-path.sh.
 *
 *   insmod sa_free_probe.ko major=M minor=N
 *
 * Kprobes on swapalloc's ->free() and ->free_fast() (swapalloc_free_slots()
 * and swapalloc_free_slots_fast(), module/main.c; swapalloc must be loaded
 * first) count, for the swap device M:N, the
 * slots it is told are free (frees) and those among them whose zeromap bit
 * is still set (unclean).  Their swap_map bytes are 0 by then, and on a
 * device with a lockless fast path that makes them allocatable at once,
 * without si->lock, under which the kernel frees: whatever a free cleans
 * (the zeromap bit, the driver's copy of the data, the shadow in the swap
 * cache) must be gone by then, or it would be dropped from the page of the
 * slot's next owner.  A zero-filled page swapped out sets its slot's
 * zeromap bit, so frees of such pages show which came first.
 *
 * Read-only parameters: frees, unclean, large (slots freed in ranges of
 * more than one, a large folio's) and fast (slots freed through
 * ->free_fast(), without si->lock); write anything to reset, which zeroes
 * them.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/kdev_t.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/swap.h>

static uint sa_fp_major;
module_param_named(major, sa_fp_major, uint, 0444);
MODULE_PARM_DESC(major, "major number of the swap device to watch");
static uint sa_fp_minor;
module_param_named(minor, sa_fp_minor, uint, 0444);
MODULE_PARM_DESC(minor, "minor number of the swap device to watch");
static ulong sa_fp_frees;
module_param_named(frees, sa_fp_frees, ulong, 0444);
MODULE_PARM_DESC(frees, "slots swapalloc was told are free");
static ulong sa_fp_unclean;
module_param_named(unclean, sa_fp_unclean, ulong, 0444);
MODULE_PARM_DESC(unclean, "of those, slots whose zeromap bit was still set");
static ulong sa_fp_large;
module_param_named(large, sa_fp_large, ulong, 0444);
MODULE_PARM_DESC(large, "of those, slots freed in ranges of more than one");
static ulong sa_fp_fast;
module_param_named(fast, sa_fp_fast, ulong, 0444);
MODULE_PARM_DESC(fast, "of those, slots freed through ->free_fast()");

static int sa_fp_reset_set(const char *val, const struct kernel_param *kp)
{
	WRITE_ONCE(sa_fp_frees, 0);
	WRITE_ONCE(sa_fp_unclean, 0);
	WRITE_ONCE(sa_fp_large, 0);
	WRITE_ONCE(sa_fp_fast, 0);
	return 0;
}

static const struct kernel_param_ops sa_fp_reset_ops = {
	.set = sa_fp_reset_set,
};

module_param_cb(reset, &sa_fp_reset_ops, NULL, 0200);
MODULE_PARM_DESC(reset, "write anything to zero the counts");

/* ->free_fast() runs without si->lock, on several CPUs at once. */
static DEFINE_SPINLOCK(sa_fp_lock);

static int sa_fp_count(struct pt_regs *regs, bool fast)
{
	struct swap_info_struct *si = (void *)regs_get_kernel_argument(regs, 0);
	unsigned long offset = regs_get_kernel_argument(regs, 1);
	unsigned int nr = regs_get_kernel_argument(regs, 2);
	unsigned int i, dirty = 0;
	unsigned long flags;

	if (!si->bdev || si->bdev->bd_dev != MKDEV(sa_fp_major, sa_fp_minor) ||
	    !si->zeromap || offset + nr > si->max)
		return 0;
	for (i = 0; i < nr; i++)
		dirty += test_bit(offset + i, si->zeromap);
	spin_lock_irqsave(&sa_fp_lock, flags);
	WRITE_ONCE(sa_fp_frees, sa_fp_frees + nr);
	WRITE_ONCE(sa_fp_unclean, sa_fp_unclean + dirty);
	if (nr > 1)
		WRITE_ONCE(sa_fp_large, sa_fp_large + nr);
	if (fast)
		WRITE_ONCE(sa_fp_fast, sa_fp_fast + nr);
	spin_unlock_irqrestore(&sa_fp_lock, flags);
	return 0;
}

static int sa_fp_pre(struct kprobe *kp, struct pt_regs *regs)
{
	return sa_fp_count(regs, false);
}

static int sa_fp_pre_fast(struct kprobe *kp, struct pt_regs *regs)
{
	return sa_fp_count(regs, true);
}

static struct kprobe sa_fp_kprobes[] = {
	{ .symbol_name = "swapalloc_free_slots", .pre_handler = sa_fp_pre },
	{ .symbol_name = "swapalloc_free_slots_fast", .pre_handler = sa_fp_pre_fast },
};

static struct kprobe *sa_fp_kps[] = { &sa_fp_kprobes[0], &sa_fp_kprobes[1] };

static int __init sa_fp_init(void)
{
	int err;

	if (!sa_fp_major) {
		pr_warn("major= is required\n");
		return -EINVAL;
	}
	err = register_kprobes(sa_fp_kps, ARRAY_SIZE(sa_fp_kps));
	if (err) {
		pr_warn("cannot probe swapalloc_free_slots{,_fast} (swapalloc loaded?): %d\n",
			err);
		return err;
	}
	pr_info("probing swapalloc_free_slots{,_fast} for %u:%u\n", sa_fp_major,
		sa_fp_minor);
	return 0;
}

static void __exit sa_fp_exit(void)
{
	unregister_kprobes(sa_fp_kps, ARRAY_SIZE(sa_fp_kps));
}

module_init(sa_fp_init);
module_exit(sa_fp_exit);
MODULE_DESCRIPTION("Count swapalloc frees of slots not yet cleaned (test)");
MODULE_AUTHOR("The swapalloc developers");
MODULE_LICENSE("GPL");
