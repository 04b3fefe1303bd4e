// SPDX-License-Identifier: GPL-2.0
/*
 * sa_helpers_test: a minimal swap slot allocator that calls the helpers the
 * kernel exports for allocator modules (include/linux/swap_alloc.h) with
 * bad arguments, for tests/guest/38-helpers.sh.
 *
 *   insmod sa_helpers_test.ko dev=vdb test=NAME
 *
 * binds the swap device named dev= (and no other), runs one test and stays
 * loaded; rmmod unbinds.  The allocator has no ->quiesce unless quiesce=1
 * (one that releases every cluster the test still holds).  Tests:
 *
 *   commit_order40    swap_alloc_commit() with order 40
 *   commit_order_neg  swap_alloc_commit() with order -1
 *   commit_usage0     swap_alloc_commit() of a free slot with usage 0
 *   commit_usage_bad  swap_alloc_commit() of a free slot with usage 0x3f
 *                     (SWAP_MAP_BAD)
 *   batch_order40     swap_alloc_commit_batch() of a free cluster, order 40
 *   batch_across      swap_alloc_commit_batch() of a range that runs into
 *                     the next cluster
 *   ask_nokeep        swap_alloc_ask_keep_cache(si, true) from an
 *                     allocator without ->keep_cache
 *   discard_nodiscard swap_alloc_discard() of held slots on a device
 *                     swapped on without discard
 *   discard_notheld   swap_alloc_discard() of free slots that are not held
 *   hold_noquiesce    swap_alloc_hold() of 4 free clusters, kept until
 *                     rmmod: the allocator is unregistered holding them
 *   unbind_in_alloc   no bad call: the first order-0 ->alloc drops si->lock
 *                     and sleeps until an unbind (rmmod) has begun, then
 *                     gives up, as an allocator must once the device is no
 *                     longer bound; the kernel is to serve that allocation
 *                     from the builtin allocator rather than fail it
 *   bind              no call: the device is bound until rmmod
 *   free_in_unbind    no bad call: once hold=1 is written to the module's
 *                     parameter, the next order-0 ->alloc drops si->lock
 *                     and sleeps until an unbind has begun and hold=0 is
 *                     written, so that the unbind waits for it before any
 *                     cluster is rebuilt; ->free counts the slots freed
 *                     meanwhile, and the kernel must account them to
 *                     nobody but swap_map
 *
 * Every call is logged between "sa_helpers_test: TEST: calling ..." and
 * "sa_helpers_test: TEST: ... returned ..." so that the suite can find the
 * kernel's own log lines in between.  Allocation (->alloc) is a first-fit
 * scan of swap_map for order 0 and nothing for larger orders.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/blkdev.h>
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/swap.h>
#include <linux/swap_alloc.h>

#define SA_TEST_CLUSTER		512UL	/* SWAPFILE_CLUSTER on x86-64 */
#define SA_TEST_HOLD_CLUSTERS	4

static char sa_test_dev[32];
module_param_string(dev, sa_test_dev, sizeof(sa_test_dev), 0444);
MODULE_PARM_DESC(dev, "swap block device to bind, e.g. vdb");

static char sa_test_name[32];
module_param_string(test, sa_test_name, sizeof(sa_test_name), 0444);
MODULE_PARM_DESC(test, "which bad call to make (see the source)");

static bool sa_test_with_quiesce;
module_param_named(quiesce, sa_test_with_quiesce, bool, 0444);
MODULE_PARM_DESC(quiesce, "give the allocator a ->quiesce that releases what it holds");

static bool sa_test_hold;
module_param_named(hold, sa_test_hold, bool, 0644);
MODULE_PARM_DESC(hold, "free_in_unbind: 1 stalls the next order-0 ->alloc until an unbind has begun and hold is 0 again");

/*
 * What a helper returned, for the log: API version 2 made
 * swap_alloc_hold(), _release() and _discard() return whether they did it.
 */
#if SWAP_ALLOC_API_VERSION >= 2
#define sa_test_ret(call)	((call) ? "true" : "false")
#define sa_test_ret_ok(call)	(call)
#else
#define sa_test_ret(call)	((call), "(void)")
#define sa_test_ret_ok(call)	((call), true)
#endif

static struct swap_info_struct *sa_test_si;
static bool sa_test_stall;	/* unbind_in_alloc, until the first ->alloc */
static bool sa_test_hold_used;	/* free_in_unbind: one ->alloc has stalled */
static atomic_t sa_test_unbind_frees;	/* slots freed while unbinding */
static unsigned long sa_test_held[SA_TEST_HOLD_CLUSTERS];
static unsigned int sa_test_nr_held;

static int sa_test_attach(struct swap_info_struct *si, void **data)
{
	char name[BDEVNAME_SIZE];

	if (!(si->flags & SWP_BLKDEV) || !si->bdev || sa_test_si)
		return -ENODEV;
	snprintf(name, sizeof(name), "%pg", si->bdev);
	if (strcmp(name, sa_test_dev))
		return -ENODEV;
	sa_test_si = si;
	*data = NULL;
	return 0;
}

static void sa_test_bind(struct swap_info_struct *si)
{
}

/*
 * unbind_in_alloc: sleep with si->lock dropped, as an allocator may while it
 * reclaims, until the unbind has begun (or 60 s have passed).  With @hold
 * (free_in_unbind), go on sleeping once it has begun until hold=0 is
 * written, which keeps the unbind waiting before its rebuild.
 */
static void sa_test_stall_until_unbind(struct swap_info_struct *si, bool hold)
	__releases(&si->lock) __acquires(&si->lock)
{
	unsigned long start = jiffies;
	bool began, said = false;

	sa_test_stall = false;
	spin_unlock(&si->lock);
	pr_info("%s: ->alloc of pid %d drops si->lock until an unbind begins\n",
		sa_test_name, task_pid_nr(current));
	for (;;) {
		began = READ_ONCE(si->alloc_state) == SWAP_ALLOC_UNBINDING;
		if (began && !(hold && READ_ONCE(sa_test_hold)))
			break;
		if (time_after(jiffies, start + 60 * HZ))
			break;
		if (began && !said) {
			pr_info("%s: the unbind has begun; ->alloc keeps si->lock dropped until hold=0\n",
				sa_test_name);
			said = true;
		}
		msleep(20);
	}
	pr_info("%s: ->alloc retakes si->lock after %u ms: %s (%d slots freed while unbinding)\n",
		sa_test_name, jiffies_to_msecs(jiffies - start),
		began ? "the unbind has begun" : "no unbind began",
		atomic_read(&sa_test_unbind_frees));
	spin_lock(&si->lock);
}

static unsigned long sa_test_alloc(struct swap_info_struct *si, int order,
				   unsigned char usage)
{
	unsigned long off;

	if (order)
		return 0;
	if (sa_test_stall) {
		sa_test_stall_until_unbind(si, false);
	} else if (READ_ONCE(sa_test_hold) && !sa_test_hold_used) {
		sa_test_hold_used = true;
		sa_test_stall_until_unbind(si, true);
	}
	/* The kernel refuses commits once the device is no longer bound. */
	if (si->alloc_state != SWAP_ALLOC_BOUND)
		return 0;
	for (off = 1; off < si->max; off++)
		if (!READ_ONCE(si->swap_map[off]) &&
		    swap_alloc_commit(si, off, 0, usage))
			return off;
	return 0;
}

static void sa_test_free(struct swap_info_struct *si, unsigned long offset,
			 unsigned int nr)
{
	if (si->alloc_state == SWAP_ALLOC_UNBINDING)
		atomic_add(nr, &sa_test_unbind_frees);
}

/* Only with quiesce=1: release every cluster sa_test_run() still holds. */
static void sa_test_quiesce(struct swap_info_struct *si)
{
	unsigned int i;

	spin_lock(&si->lock);
	for (i = 0; i < sa_test_nr_held; i++)
		pr_info("%s: ->quiesce: swap_alloc_release(offset %lu) returned %s\n",
			sa_test_name, sa_test_held[i],
			sa_test_ret(swap_alloc_release(si, sa_test_held[i],
						       SA_TEST_CLUSTER)));
	sa_test_nr_held = 0;
	spin_unlock(&si->lock);
}

static void sa_test_detach(struct swap_info_struct *si, void *data)
{
	sa_test_si = NULL;
}

static struct swap_alloc_ops sa_test_ops = {
	.name = "sa_helpers_test",
	.owner = THIS_MODULE,
	.attach = sa_test_attach,
	.bind = sa_test_bind,
	.alloc = sa_test_alloc,
	.free = sa_test_free,
	.detach = sa_test_detach,
};

/* The first wholly free cluster at or after @from, or 0.  si->lock held. */
static unsigned long sa_test_free_cluster(struct swap_info_struct *si,
					  unsigned long from)
{
	unsigned long c, i;

	for (c = max(from, SA_TEST_CLUSTER); c + SA_TEST_CLUSTER <= si->max;
	     c += SA_TEST_CLUSTER) {
		for (i = 0; i < SA_TEST_CLUSTER; i++)
			if (READ_ONCE(si->swap_map[c + i]))
				break;
		if (i == SA_TEST_CLUSTER)
			return c;
	}
	return 0;
}

static int sa_test_commit(struct swap_info_struct *si, unsigned long off,
			  int order, unsigned char usage)
{
	bool ok;

	pr_info("%s: calling swap_alloc_commit(offset %lu, order %d, usage %#x)\n",
		sa_test_name, off, order, usage);
	spin_lock(&si->lock);
	ok = swap_alloc_commit(si, off, order, usage);
	spin_unlock(&si->lock);
	pr_info("%s: swap_alloc_commit returned %s\n", sa_test_name,
		ok ? "true" : "false");
	return 0;
}

static int sa_test_commit_batch(struct swap_info_struct *si, unsigned long start,
				unsigned long end, int order)
{
	swp_entry_t slots[4];
	int n;

	pr_info("%s: calling swap_alloc_commit_batch(%lu-%lu, order %d)\n",
		sa_test_name, start, end, order);
	spin_lock(&si->lock);
	n = swap_alloc_commit_batch(si, start, end, order, SWAP_HAS_CACHE,
				    ARRAY_SIZE(slots), slots);
	spin_unlock(&si->lock);
	pr_info("%s: swap_alloc_commit_batch returned %d\n", sa_test_name, n);
	return 0;
}

static int sa_test_run(struct swap_info_struct *si)
{
	unsigned long off, from;
	unsigned int i;

	spin_lock(&si->lock);
	off = sa_test_free_cluster(si, 0);
	spin_unlock(&si->lock);
	if (!off) {
		pr_warn("%s: no free cluster on %s\n", sa_test_name, sa_test_dev);
		return -ENOSPC;
	}

	if (!strcmp(sa_test_name, "commit_order40"))
		return sa_test_commit(si, off, 40, SWAP_HAS_CACHE);
	if (!strcmp(sa_test_name, "commit_order_neg"))
		return sa_test_commit(si, off, -1, SWAP_HAS_CACHE);
	if (!strcmp(sa_test_name, "commit_usage0"))
		return sa_test_commit(si, off, 0, 0);
	if (!strcmp(sa_test_name, "commit_usage_bad"))
		return sa_test_commit(si, off, 0, SWAP_MAP_BAD);
	if (!strcmp(sa_test_name, "batch_order40"))
		return sa_test_commit_batch(si, off, off + SA_TEST_CLUSTER, 40);
	if (!strcmp(sa_test_name, "batch_across"))
		return sa_test_commit_batch(si, off + SA_TEST_CLUSTER - 2,
					    off + SA_TEST_CLUSTER + 2, 0);
	if (!strcmp(sa_test_name, "ask_nokeep")) {
		pr_info("%s: calling swap_alloc_ask_keep_cache(true) without ->keep_cache\n",
			sa_test_name);
		spin_lock(&si->lock);
		swap_alloc_ask_keep_cache(si, true);
		pr_info("%s: swap_alloc_ask_keep_cache returned; alloc_keep_cache is %d\n",
			sa_test_name, READ_ONCE(si->alloc_keep_cache));
		spin_unlock(&si->lock);
		return 0;
	}

	if (!strcmp(sa_test_name, "discard_nodiscard")) {
		/* Held first, so that only the device's missing discard is wrong. */
		spin_lock(&si->lock);
		pr_info("%s: swap_alloc_hold(offset %lu, nr %lu) returned %s\n",
			sa_test_name, off, SA_TEST_CLUSTER,
			sa_test_ret(swap_alloc_hold(si, off, SA_TEST_CLUSTER)));
		spin_unlock(&si->lock);
		pr_info("%s: calling swap_alloc_discard(offset %lu, nr %lu) on a device without SWP_PAGE_DISCARD\n",
			sa_test_name, off, SA_TEST_CLUSTER);
		pr_info("%s: swap_alloc_discard returned %s\n", sa_test_name,
			sa_test_ret(swap_alloc_discard(si, off, SA_TEST_CLUSTER)));
		spin_lock(&si->lock);
		pr_info("%s: swap_alloc_release(offset %lu, nr %lu) returned %s\n",
			sa_test_name, off, SA_TEST_CLUSTER,
			sa_test_ret(swap_alloc_release(si, off, SA_TEST_CLUSTER)));
		spin_unlock(&si->lock);
		return 0;
	}
	if (!strcmp(sa_test_name, "discard_notheld")) {
		pr_info("%s: calling swap_alloc_discard(offset %lu, nr %lu) of slots not held (discard %s)\n",
			sa_test_name, off, SA_TEST_CLUSTER,
			(si->flags & SWP_PAGE_DISCARD) ? "on" : "off");
		pr_info("%s: swap_alloc_discard returned %s\n", sa_test_name,
			sa_test_ret(swap_alloc_discard(si, off, SA_TEST_CLUSTER)));
		return 0;
	}
	if (!strcmp(sa_test_name, "hold_noquiesce")) {
		pr_info("%s: calling swap_alloc_hold() of %d free clusters, %s ->quiesce\n",
			sa_test_name, SA_TEST_HOLD_CLUSTERS,
			sa_test_ops.quiesce ? "with" : "without");
		spin_lock(&si->lock);
		for (from = 0, i = 0; i < SA_TEST_HOLD_CLUSTERS; i++) {
			off = sa_test_free_cluster(si, from);
			if (!off)
				break;
			from = off + SA_TEST_CLUSTER;
			if (!sa_test_ret_ok(swap_alloc_hold(si, off, SA_TEST_CLUSTER)))
				continue;
			sa_test_held[sa_test_nr_held++] = off;
		}
		spin_unlock(&si->lock);
		pr_info("%s: swap_alloc_hold returned: holding %u clusters (%lu slots) of %s until rmmod\n",
			sa_test_name, sa_test_nr_held,
			sa_test_nr_held * SA_TEST_CLUSTER, sa_test_dev);
		return 0;
	}
	if (!strcmp(sa_test_name, "unbind_in_alloc")) {
		spin_lock(&si->lock);
		sa_test_stall = true;
		spin_unlock(&si->lock);
		pr_info("%s: the next order-0 ->alloc waits for rmmod\n",
			sa_test_name);
		return 0;
	}
	if (!strcmp(sa_test_name, "bind"))
		return 0;
	if (!strcmp(sa_test_name, "free_in_unbind")) {
		pr_info("%s: hold=1 makes the next order-0 ->alloc wait for rmmod and hold=0\n",
			sa_test_name);
		return 0;
	}
	pr_warn("unknown test=%s\n", sa_test_name);
	return -EINVAL;
}

static int __init sa_test_init(void)
{
	int err;

	if (!sa_test_dev[0]) {
		pr_warn("dev= is required\n");
		return -EINVAL;
	}
	if (sa_test_with_quiesce)
		sa_test_ops.quiesce = sa_test_quiesce;
	err = swap_alloc_register(&sa_test_ops);
	if (err) {
		pr_warn("swap_alloc_register: %d\n", err);
		return err;
	}
	if (!sa_test_si) {
		pr_warn("no active swap device %s\n", sa_test_dev);
		swap_alloc_unregister(&sa_test_ops);
		return -ENODEV;
	}
	err = sa_test_run(sa_test_si);
	if (err) {
		swap_alloc_unregister(&sa_test_ops);
		return err;
	}
	return 0;
}

static void __exit sa_test_exit(void)
{
	pr_info("%s: calling swap_alloc_unregister() holding %u clusters\n",
		sa_test_name, sa_test_nr_held);
	swap_alloc_unregister(&sa_test_ops);
	pr_info("%s: swap_alloc_unregister returned\n", sa_test_name);
}

module_init(sa_test_init);
module_exit(sa_test_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Feeds the swap_alloc helpers bad input (swapalloc's guest tests)");
