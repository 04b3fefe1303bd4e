/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel environment of the swapalloc core: types.  The userspace tests
 * provide their own version of this header (tests/shim/).
 */
#ifndef _SWAPALLOC_ENV_TYPES_H
#define _SWAPALLOC_ENV_TYPES_H

#include <linux/list.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/swap.h>
#include <linux/swap_alloc.h>
#include <linux/types.h>
#include <linux/workqueue.h>

/* Kbuild stops earlier, with the fix, when the kernel has no hook at all. */
#if SWAP_ALLOC_API_VERSION != 10
#error "swapalloc: kernel swap_alloc hook is not version 10; apply this release's patches/"
#endif

#ifdef CONFIG_THP_SWAP
#define SWAPALLOC_MAX_ORDER	PMD_ORDER
#else
#define SWAPALLOC_MAX_ORDER	8	/* SWAPFILE_CLUSTER is 256 slots */
#endif

/* The swap device, and the work items that act on it outside allocation. */
struct swapalloc_env {
	struct swap_info_struct *si;
	struct work_struct discard_work;
	struct work_struct reclaim_work;
	u64 hold_start;			/* when si->lock was last taken, ns */
	u64 longest_hold;		/* longest hold of it seen, ns */
};

#endif /* _SWAPALLOC_ENV_TYPES_H */
