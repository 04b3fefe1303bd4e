// SPDX-License-Identifier: GPL-2.0
/*
 * sa_free_probe: is a freed slot clean when swapalloc hears of it?  For
 * tests/guest/43-fast-path.sh.
 *
 *   insmod sa_free_probe.ko major=M minor=N
 *
 * A kprobe on swapalloc's ->free() (swapalloc_free_slots(), module/main.c;
 * swapalloc must be loaded first) counts, for the swap device M:N, the
 * slots it is told are free (frees) and those among them whose zeromap bit
 * is still set (unclean).  Their swap_map bytes are 0 by then, and on a
 * device with a lockless fast path that makes them allocatable at once,
 * without si->lock, under which the kernel frees: whatever a free cleans
 * (the zeromap bit, the driver's copy of the data, the shadow in the swap
 * cache) must be gone by then, or it would be dropped from the page of the
 * slot's next owner.  A zero-filled page swapped out sets its slot's
 * zeromap bit, so frees of such pages show which came first.
 *
 * Read-only parameters: frees, unclean, and large (slots freed in ranges
 * of more than one, a large folio's); write anything to reset, which
 * zeroes them.
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

static int sa_fp_reset_set(const char *val, const struct kernel_param *kp)
{
	WRITE_ONCE(sa_fp_frees, 0);
	WRITE_ONCE(sa_fp_unclean, 0);
	WRITE_ONCE(sa_fp_large, 0);
	return 0;
}

static const struct kernel_param_ops sa_fp_reset_ops = {
	.set = sa_fp_reset_set,
};

module_param_cb(reset, &sa_fp_reset_ops, NULL, 0200);
MODULE_PARM_DESC(reset, "write anything to zero the counts");

/* ->free() runs under si->lock: one device's counts never race. */
static int sa_fp_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct swap_info_struct *si = (void *)regs_get_kernel_argument(regs, 0);
	unsigned long offset = regs_get_kernel_argument(regs, 1);
	unsigned int nr = regs_get_kernel_argument(regs, 2);
	unsigned int i, dirty = 0;

	if (!si->bdev || si->bdev->bd_dev != MKDEV(sa_fp_major, sa_fp_minor) ||
	    !si->zeromap || offset + nr > si->max)
		return 0;
	for (i = 0; i < nr; i++)
		dirty += test_bit(offset + i, si->zeromap);
	WRITE_ONCE(sa_fp_frees, sa_fp_frees + nr);
	WRITE_ONCE(sa_fp_unclean, sa_fp_unclean + dirty);
	if (nr > 1)
		WRITE_ONCE(sa_fp_large, sa_fp_large + nr);
	return 0;
}

static struct kprobe sa_fp_kprobe = {
	.symbol_name	= "swapalloc_free_slots",
	.pre_handler	= sa_fp_pre,
};

static int __init sa_fp_init(void)
{
	int err;

	if (!sa_fp_major) {
		pr_warn("major= is required\n");
		return -EINVAL;
	}
	err = register_kprobe(&sa_fp_kprobe);
	if (err) {
		pr_warn("cannot probe swapalloc_free_slots (swapalloc loaded?): %d\n", err);
		return err;
	}
	pr_info("probing swapalloc_free_slots for %u:%u\n", sa_fp_major, sa_fp_minor);
	return 0;
}

static void __exit sa_fp_exit(void)
{
	unregister_kprobe(&sa_fp_kprobe);
}

module_init(sa_fp_init);
module_exit(sa_fp_exit);
MODULE_DESCRIPTION("Count swapalloc frees of slots not yet cleaned (test)");
MODULE_AUTHOR("The swapalloc developers");
MODULE_LICENSE("GPL");
