/* SPDX-License-Identifier: GPL-2.0 */
/*
 * swapalloc allocator core: per-device cluster state, the order of
 * preference for each allocation, frees, reclaim and discard decisions.
 *
 * The same module/core.c builds into swapalloc.ko and into the userspace
 * tests.  It reaches the swap device only through the swapalloc_env_*()
 * functions of <swapalloc_env.h>: the kernel one (module/kenv/) wraps the
 * helpers of the swap_alloc patch series, the userspace one (tests/shim/)
 * simulates a swap_map.
 *
 * Locking: every field of struct swapalloc_dev is protected by the lock
 * the core is called under: si->lock in the kernel, which
 * get_swap_pages(), swap_entry_range_free() and the bind and unbind paths
 * of the hook already hold.  The per-CPU cursors of non-rotational devices
 * and the global cursor of rotational ones are protected by it too.  The
 * core drops it only inside swapalloc_env_reclaim() (and the discard work
 * drops it around the discard), and revalidates after retaking it.
 *
 * The one exception is swapalloc_alloc_fast() on a device with ->fast
 * set: it runs without si->lock, under the lock of one cluster the
 * calling CPU owns (SA_LIST_OWNED).  Of an owned cluster, ->count and
 * ->fast_next are protected by the cluster lock; ->owner is written under
 * si->lock and the cluster lock, so either one is enough to read it; every
 * other field stays under si->lock, and ->order does not change while the
 * cluster is owned.  What it hands out, swapalloc_alloc_fast_done()
 * counts without si->lock too, in the CPU's own count of fast entries;
 * the environment's caller accounts it in the device's slots in use,
 * which it keeps atomic.
 * See "Owned clusters" in module/core.c.
 */
#ifndef _SWAPALLOC_CORE_H
#define _SWAPALLOC_CORE_H

#include <swapalloc_env_types.h>

/* The release, from the top-level VERSION file (Kbuild, tests/unit/Makefile). */
#ifndef SWAPALLOC_VERSION
#error "SWAPALLOC_VERSION comes from the VERSION file: build with Kbuild or tests/unit/Makefile"
#endif

/* A cluster is the largest naturally aligned entry: a PMD's worth of slots. */
#define SA_CLUSTER_ORDER	SWAPALLOC_MAX_ORDER
#define SA_CLUSTER_SLOTS	BIT(SA_CLUSTER_ORDER)
#define SA_NR_ORDERS		(SA_CLUSTER_ORDER + 1)

/*
 * The swap cache splits a device into address spaces of this many slots
 * (SWAP_ADDRESS_SPACE_PAGES in mm/swap.h), each with its own i_pages
 * lock: CPUs that swap out into different ones do not contend on it.
 */
#define SA_SPACE_SLOTS		BIT(14)
#define SA_SPACE_CLUSTERS	(SA_SPACE_SLOTS / SA_CLUSTER_SLOTS ?: 1)

/* Which list a cluster is on; every cluster is on exactly one. */
enum swapalloc_list {
	SA_LIST_FREE,		/* no slot used */
	SA_LIST_NONFULL,	/* some free slots, serves ->order */
	SA_LIST_FRAG,		/* a scan for ->order failed since its last free */
	SA_LIST_FULL,		/* every slot used (or past the end) */
	SA_LIST_DISCARD,	/* freed, slots held while it is discarded */
	SA_LIST_OWNED,		/* a CPU's fast-path cluster, scanned by no one */
	SA_NR_LISTS,
};

/* Where a successful allocation came from. */
enum swapalloc_src {
	SA_SRC_CURSOR,		/* the CPU's (or device's) current cluster */
	SA_SRC_FREE,		/* a cluster from the free list */
	SA_SRC_NONFULL,		/* nonfull[order] */
	SA_SRC_FRAG,		/* frag[order] */
	SA_SRC_STEAL,		/* order 0 from a higher order's cluster */
	SA_NR_SRCS,
};

struct swapalloc_cursor;

struct swapalloc_cluster {
	struct list_head node;
	u16 count;		/* used slots, including bad and past-end ones */
	u16 cursors;		/* cursors (CPUs' or the device's) in it */
	u8 order;		/* the order the cluster serves */
	u8 list;		/* enum swapalloc_list */
	bool discarding;	/* on the discard list, discard in flight */
	u16 free_hint;		/* where a free range likely starts: sa_hint() */
	/*
	 * ->count may be above the slots in use by ->pending_free, slots
	 * freed since they were last folded in: in an owned cluster (see
	 * "Owned clusters" in core.c), and in any cluster of a device whose
	 * frees come without si->lock (swapalloc_free_fast()), which queues
	 * the cluster on ->freed for sa_fold_frees().
	 */
	u16 pending_free;	/* cluster lock */
	u16 fast_next;		/* cluster lock: where the fast path goes on */
	bool queued;		/* cluster lock: on the device's ->freed */
	struct llist_node fnode;	/* on ->freed */
	struct swapalloc_cursor *owner;	/* whose fast path may allocate here */
};

/* Current cluster per order: one set per CPU, or one per rotational device. */
struct swapalloc_cursor {
	unsigned long next[SA_NR_ORDERS];	/* next offset to try, 0 = none */
	/*
	 * Entries swapalloc_alloc_fast() handed out on this CPU, counted
	 * without si->lock by the CPU alone (preemption disabled), read by
	 * swapalloc_read_stats() with READ_ONCE().
	 */
	u64 fast[SA_NR_ORDERS];
	/*
	 * Slots the fast path handed out on this CPU whose work after the
	 * allocation (sa_after_alloc()) has not run yet: it runs, under
	 * si->lock, once they reach a cluster's worth with the antifrag
	 * placement, or when the device runs short of room.  Capped at two
	 * clusters: the reclaim's back-off needs no more.
	 */
	unsigned int after_pending;
};

struct swapalloc_order_stats {
	u64 requests;
	u64 success;
	u64 fail;
	u64 src[SA_NR_SRCS];
};

struct swapalloc_stats {
	struct swapalloc_order_stats order[SA_NR_ORDERS];
	u64 reclaim_passes;	/* full-cluster reclaim passes */
	u64 reclaim_clusters;	/* full clusters scanned by them */
	u64 reclaim_slots;	/* slots they freed */
	u64 range_reclaims;	/* slots freed while scanning a range */
	u64 background_runs;	/* background full-cluster reclaim runs */
	u64 discarded;		/* clusters discarded */
	u64 sync_discards;	/* of which by an allocation that needed one */
	u64 discard_waits;	/* allocations that waited for others' discards */
	u64 owned;		/* clusters a cursor took ownership of */
	u64 revoked;		/* of those, taken back for another CPU */
	u64 folded;		/* pending frees folded into owned clusters */
};

enum swapalloc_policy {
	SA_POLICY_PERCPU,	/* per-CPU cursors: SSD, NVMe, zram */
	SA_POLICY_GLOBAL,	/* one cursor per device: rotational disks */
};

/* How allocations are placed within the device (module/place.c). */
enum swapalloc_placement {
	SA_PLACE_DEFAULT,	/* upstream's order of preference, see core.c */
	SA_PLACE_ANTIFRAG,	/* leave 64K entries' holes to drain, see place.c */
	SA_NR_PLACEMENTS,
};

/* place.c's state: the fewest free slots seen, per window of allocations. */
struct swapalloc_place {
	unsigned long win_slots;	/* slots allocated in this window */
	unsigned long low_free, prev_low_free;	/* this window's, the last one's */
	u64 holes_kept;		/* order-0 allocations that skipped core.c's step 3 */
	u64 adopted;		/* higher orders' clusters order 0 took over */
	u64 cache_kept;		/* slots swapalloc_keep_cache() kept at swap-in */
	u64 kept_returned;	/* kept slots given back when room ran short */
	unsigned long *kept;	/* slots kept at a swap-in and not freed since */
	unsigned long nr_kept;	/* bits set in ->kept */
	bool returning;		/* the reclaim work is to give kept slots back */
};

struct swapalloc_dev {
	struct swapalloc_env env;	/* the device as the environment sees it */
	unsigned long max;		/* slots, as si->max */
	unsigned int nr_clusters;
	enum swapalloc_policy policy;
	bool discards;			/* discard freed clusters before reuse */
	bool fast;			/* owned clusters, swapalloc_alloc_fast() */
	bool free_fast;			/* frees without the lock: swapalloc_free_fast() */
	bool quiescing;			/* being unbound: no new deferred work */
	bool reclaiming;		/* a full-cluster reclaim pass is running */
	unsigned int reclaim_wait;	/* churn left before a forced reclaim */
	unsigned int discards_in_flight;	/* clusters being discarded, lock dropped */
	unsigned int discards_done;	/* discards finished, for waiters */
	unsigned int rebuilt;		/* clusters counted by swapalloc_dev_rebuild() */

	struct swapalloc_cluster *clusters;
	struct list_head free, full, discard;
	struct list_head nonfull[SA_NR_ORDERS];
	struct list_head frag[SA_NR_ORDERS];
	struct list_head owned;		/* SA_LIST_OWNED, for revocation */
	struct llist_head freed;	/* clusters with frees to fold in */
	unsigned int nr_free, nr_full, nr_discard, nr_owned;
	unsigned int nr_nonfull[SA_NR_ORDERS];
	unsigned int nr_frag[SA_NR_ORDERS];

	struct swapalloc_cursor global;	/* SA_POLICY_GLOBAL */
	struct swapalloc_cursor __percpu *pcp;	/* SA_POLICY_PERCPU */

	struct swapalloc_stats stats;	/* read with swapalloc_read_stats() */
	/*
	 * The per-CPU fast counts when the statistics were last reset:
	 * swapalloc_read_stats() gives what was counted since.
	 */
	u64 fast_base[SA_NR_ORDERS];
	unsigned int *scratch;		/* nr_clusters words for swapalloc_check() */

	enum swapalloc_placement placement;	/* SA_PLACE_DEFAULT unless set */
	struct swapalloc_place place;
};

/* The counter and the head of one of @dev's lists (@order for nonfull, frag). */
static inline unsigned int *swapalloc_list_counter(struct swapalloc_dev *dev,
						   unsigned int list,
						   unsigned int order)
{
	switch (list) {
	case SA_LIST_FREE:
		return &dev->nr_free;
	case SA_LIST_NONFULL:
		return &dev->nr_nonfull[order];
	case SA_LIST_FRAG:
		return &dev->nr_frag[order];
	case SA_LIST_FULL:
		return &dev->nr_full;
	case SA_LIST_OWNED:
		return &dev->nr_owned;
	default:
		return &dev->nr_discard;
	}
}

static inline struct list_head *swapalloc_list_head(struct swapalloc_dev *dev,
						    unsigned int list,
						    unsigned int order)
{
	switch (list) {
	case SA_LIST_FREE:
		return &dev->free;
	case SA_LIST_NONFULL:
		return &dev->nonfull[order];
	case SA_LIST_FRAG:
		return &dev->frag[order];
	case SA_LIST_FULL:
		return &dev->full;
	case SA_LIST_OWNED:
		return &dev->owned;
	default:
		return &dev->discard;
	}
}

int swapalloc_dev_init(struct swapalloc_dev *dev, unsigned long max,
		       enum swapalloc_policy policy, bool discard);
void swapalloc_dev_destroy(struct swapalloc_dev *dev);
void swapalloc_dev_rebuild(struct swapalloc_dev *dev);

unsigned long swapalloc_alloc(struct swapalloc_dev *dev, int order,
			      unsigned char usage);
int swapalloc_alloc_batch(struct swapalloc_dev *dev, int order,
			  unsigned char usage, int nr, swp_entry_t *slots);
int swapalloc_alloc_fast(struct swapalloc_dev *dev, int order,
			 unsigned char usage, int nr, swp_entry_t *slots);
bool swapalloc_alloc_fast_done(struct swapalloc_dev *dev, int order, int n,
			       const swp_entry_t *slots);
void swapalloc_alloc_fast_after(struct swapalloc_dev *dev);
void swapalloc_free(struct swapalloc_dev *dev, unsigned long offset,
		    unsigned int nr);
void swapalloc_free_fast(struct swapalloc_dev *dev, unsigned long offset,
			 unsigned int nr);
void swapalloc_fold_frees(struct swapalloc_dev *dev);
void swapalloc_reclaim_full(struct swapalloc_dev *dev, bool force);
void swapalloc_reclaim_background(struct swapalloc_dev *dev);
bool swapalloc_discard_one(struct swapalloc_dev *dev);
bool swapalloc_keep_cache(struct swapalloc_dev *dev, unsigned long offset,
			  unsigned int nr);

int swapalloc_check(struct swapalloc_dev *dev, char *buf, size_t len);
void swapalloc_reset_stats(struct swapalloc_dev *dev);
void swapalloc_read_stats(struct swapalloc_dev *dev, struct swapalloc_stats *st);
u64 swapalloc_fast_entries(struct swapalloc_dev *dev);

const char *swapalloc_list_name(enum swapalloc_list list);
const char *swapalloc_src_name(enum swapalloc_src src);
const char *swapalloc_policy_name(enum swapalloc_policy policy);
const char *swapalloc_placement_name(enum swapalloc_placement placement);

#endif /* _SWAPALLOC_CORE_H */
