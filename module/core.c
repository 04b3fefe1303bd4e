// SPDX-License-Identifier: GPL-2.0
/*
 * swapalloc allocator core.
 *
 * Clusters of SA_CLUSTER_SLOTS slots, each on exactly one list: free,
 * nonfull[order], frag[order], full or discard.  A cluster takes the order
 * of the first allocation made in it and from then on serves that order
 * (order 0 may borrow its free slots, see below) until it is empty again.
 *
 * Every function here but swapalloc_alloc_fast() and swapalloc_free_fast()
 * is called with the device lock held (si->lock in the kernel) and keeps all state consistent
 * whenever it lets go of it, which only swapalloc_env_reclaim() and the
 * discard path do.  On a device with ->fast set, a CPU's current cluster
 * may instead be on no list at all, owned by that CPU's fast path, which
 * allocates in it under the cluster lock alone (see "Owned clusters").
 */
#include <swapalloc/core.h>
#include <swapalloc_env.h>
#include <swapalloc_trace.h>

/*
 * How many frag clusters one allocation may scan before giving up on the
 * order: all of them, as upstream does (frag_cluster_nr), but at most
 * this many, so that an allocation on a huge, fragmented device stays
 * bounded.  Each scan is at most SA_CLUSTER_SLOTS map reads.
 */
#define SA_FRAG_SCAN_MAX	64

/*
 * Bounds on the other walks of one allocation, for the same reason: the
 * order-0 search for holes in higher orders' clusters (all orders and
 * lists together), the order-0 steal (per list; it succeeds in the first
 * cluster with a free slot unless the device is being swapped off), and
 * the full-cluster reclaim an allocation does itself when the device is
 * nearly exhausted.  The background reclaim worker walks every full
 * cluster instead, letting go of the lock between clusters.
 */
#define SA_HOLE_SCAN_MAX	32
#define SA_STEAL_SCAN_MAX	64
#define SA_RECLAIM_SCAN_MAX	16

/*
 * Work that grows with the device (rebuilding the lists from the swap map,
 * a full check) lets go of the lock every this many clusters: 64 clusters
 * are 32768 swap map reads.
 */
#define SA_BATCH_CLUSTERS	64

/*
 * When the only free space is clusters other CPUs are discarding, an
 * allocation waits for one of those discards to finish (at most 100 ms
 * each in the kernel) this many times before it gives up.
 */
#define SA_DISCARD_WAITS	4

/*
 * What follows a fast allocation (sa_after_alloc()) waits, per CPU, while
 * the device has at least this much room: two clusters, one for the
 * reclaim's threshold in sa_after_alloc(), one for what fast paths,
 * this one's included, committed and the kernel has not accounted yet
 * (the antifrag placement adds its own SA_PLACE_FREE_MIN).  Below it,
 * that work runs under si->lock after each fast allocation
 * (swapalloc_alloc_fast_after()).
 */
#define SA_FAST_ROOM	(2 * SA_CLUSTER_SLOTS)

/*
 * Statistics are plain counters in struct swapalloc_dev, updated under the
 * lock every caller already holds, so they add no atomic operation and no
 * cache line the allocation does not touch anyway; the fast path, which
 * runs without that lock, counts per CPU instead (struct swapalloc_cursor).
 * Build with SWAPALLOC_NO_STATS=y (Kbuild) to measure what they cost.
 */
#ifdef SWAPALLOC_NO_STATS
static const bool sa_stats_on;
#else
static const bool sa_stats_on = true;
#endif

static inline void sa_count(u64 *counter, u64 n)
{
	if (sa_stats_on)
		*counter += n;
}

static const char * const sa_list_names[SA_NR_LISTS] = {
	[SA_LIST_FREE] = "free",
	[SA_LIST_NONFULL] = "nonfull",
	[SA_LIST_FRAG] = "frag",
	[SA_LIST_FULL] = "full",
	[SA_LIST_DISCARD] = "discard",
	[SA_LIST_OWNED] = "owned",
};

static const char * const sa_src_names[SA_NR_SRCS] = {
	[SA_SRC_CURSOR] = "cursor",
	[SA_SRC_FREE] = "free",
	[SA_SRC_NONFULL] = "nonfull",
	[SA_SRC_FRAG] = "frag",
	[SA_SRC_STEAL] = "steal",
};

const char *swapalloc_list_name(enum swapalloc_list list)
{
	return list < SA_NR_LISTS ? sa_list_names[list] : "?";
}

const char *swapalloc_src_name(enum swapalloc_src src)
{
	return src < SA_NR_SRCS ? sa_src_names[src] : "?";
}

const char *swapalloc_policy_name(enum swapalloc_policy policy)
{
	return policy == SA_POLICY_GLOBAL ? "global" : "percpu";
}

static inline unsigned int sa_idx(struct swapalloc_cluster *ci,
				  struct swapalloc_dev *dev)
{
	return ci - dev->clusters;
}

static inline unsigned long sa_start(struct swapalloc_dev *dev,
				     struct swapalloc_cluster *ci)
{
	return (unsigned long)sa_idx(ci, dev) * SA_CLUSTER_SLOTS;
}

/* Slots of the cluster that exist on the device. */
static inline unsigned long sa_end(struct swapalloc_dev *dev,
				   struct swapalloc_cluster *ci)
{
	unsigned long end = sa_start(dev, ci) + SA_CLUSTER_SLOTS;

	return end < dev->max ? end : dev->max;
}

static inline struct swapalloc_cluster *sa_cluster(struct swapalloc_dev *dev,
						   unsigned long offset)
{
	return &dev->clusters[offset / SA_CLUSTER_SLOTS];
}

/* Move @ci to the tail of @list (for its current ->order). */
static void sa_move(struct swapalloc_dev *dev, struct swapalloc_cluster *ci,
		    enum swapalloc_list list)
{
	trace_swapalloc_cluster_move(dev, sa_idx(ci, dev), ci->list, list, ci->order);
	(*swapalloc_list_counter(dev, ci->list, ci->order))--;
	ci->list = list;
	(*swapalloc_list_counter(dev, list, ci->order))++;
	list_move_tail(&ci->node, swapalloc_list_head(dev, list, ci->order));
	/* Full: the next free sets the hint (sa_hint()) to itself. */
	if (list == SA_LIST_FULL)
		WRITE_ONCE(ci->free_hint, SA_CLUSTER_SLOTS);
}

/* The list a cluster in use belongs on, from its count alone. */
static enum swapalloc_list sa_list_for_count(struct swapalloc_cluster *ci)
{
	if (!ci->count)
		return SA_LIST_FREE;
	if (ci->count == SA_CLUSTER_SLOTS)
		return SA_LIST_FULL;
	return SA_LIST_NONFULL;
}

static struct swapalloc_cursor *sa_cursor(struct swapalloc_dev *dev)
{
	if (dev->policy == SA_POLICY_GLOBAL)
		return &dev->global;
	return this_cpu_ptr(dev->pcp);
}

/*
 * Point @cur's cursor for @order at @next (0: none), keeping count in each
 * cluster of the cursors inside it: a cluster with a cursor in it is some
 * CPU's current cluster, which the others leave alone while they can.
 */
static void sa_set_cursor(struct swapalloc_dev *dev, struct swapalloc_cursor *cur,
			  int order, unsigned long next)
{
	unsigned long old = cur->next[order];

	/* WRITE_ONCE(): swapalloc_alloc_fast() reads it without the lock. */
	if (old && next && old / SA_CLUSTER_SLOTS == next / SA_CLUSTER_SLOTS) {
		WRITE_ONCE(cur->next[order], next);
		return;
	}
	if (old)
		sa_cluster(dev, old)->cursors--;
	if (next)
		sa_cluster(dev, next)->cursors++;
	WRITE_ONCE(cur->next[order], next);
}

/* Every cursor to none; the rebuild zeroes the clusters' counts. */
static void sa_reset_cursors(struct swapalloc_dev *dev)
{
	int cpu, o;

	for (o = 0; o < SA_NR_ORDERS; o++)
		dev->global.next[o] = 0;
	if (!dev->pcp)
		return;
	for_each_possible_cpu(cpu)
		for (o = 0; o < SA_NR_ORDERS; o++)
			WRITE_ONCE(per_cpu_ptr(dev->pcp, cpu)->next[o], 0);
}

#include "place.c"

/**
 * swapalloc_dev_init() - set up cluster state for a device
 * @dev: zeroed, with ->env filled in by the caller
 * @max: the device's slots (si->max); slot 0 is the header
 * @policy: per-CPU or global cursors
 * @discard: discard freed clusters before reuse
 *
 * Allocates memory; may sleep.  The lists are empty until
 * swapalloc_dev_rebuild().
 */
int swapalloc_dev_init(struct swapalloc_dev *dev, unsigned long max,
		       enum swapalloc_policy policy, bool discard)
{
	int o;

	if (!max)
		return -EINVAL;
	dev->max = max;
	dev->nr_clusters = DIV_ROUND_UP(max, SA_CLUSTER_SLOTS);
	dev->policy = policy;
	dev->discards = discard;
	dev->clusters = kvcalloc(dev->nr_clusters, sizeof(*dev->clusters),
				 GFP_KERNEL);
	dev->scratch = kvcalloc(dev->nr_clusters, sizeof(*dev->scratch),
				GFP_KERNEL);
	/* One bit per slot; only an antifrag placement sets any. */
	dev->place.kept = kvcalloc(BITS_TO_LONGS(max), sizeof(unsigned long),
				   GFP_KERNEL);
	if (policy == SA_POLICY_PERCPU)
		dev->pcp = alloc_percpu(struct swapalloc_cursor);
	if (!dev->clusters || !dev->scratch || !dev->place.kept ||
	    (policy == SA_POLICY_PERCPU && !dev->pcp)) {
		swapalloc_dev_destroy(dev);
		return -ENOMEM;
	}
	INIT_LIST_HEAD(&dev->free);
	INIT_LIST_HEAD(&dev->full);
	INIT_LIST_HEAD(&dev->discard);
	INIT_LIST_HEAD(&dev->owned);
	init_llist_head(&dev->freed);
	for (o = 0; o < SA_NR_ORDERS; o++) {
		INIT_LIST_HEAD(&dev->nonfull[o]);
		INIT_LIST_HEAD(&dev->frag[o]);
	}
	return 0;
}

void swapalloc_dev_destroy(struct swapalloc_dev *dev)
{
	free_percpu(dev->pcp);
	dev->pcp = NULL;
	kvfree(dev->scratch);
	dev->scratch = NULL;
	kvfree(dev->place.kept);
	dev->place.kept = NULL;
	kvfree(dev->clusters);
	dev->clusters = NULL;
}

/*
 * Used slots of a cluster according to the swap map.  Any non-zero byte is
 * in use (a count, SWAP_HAS_CACHE, bad or held); slots past the end of the
 * device count as used so that the last cluster can never be free.
 */
static unsigned int sa_count_map(struct swapalloc_dev *dev,
				 struct swapalloc_cluster *ci)
{
	unsigned long start = sa_start(dev, ci), end = sa_end(dev, ci), off;
	unsigned int count = SA_CLUSTER_SLOTS - (end - start);

	for (off = start; off < end; off++)
		if (swapalloc_env_map(&dev->env, off))
			count++;
	return count;
}

/*
 * Order the free list so that consecutive free clusters lie in different
 * swap cache address spaces (0, 32, 64, ..., 1, 33, ... with 2M clusters
 * and 64M spaces), as 6.12's setup_clusters() does: CPUs that each take a
 * free cluster then swap out under different i_pages locks.  Rotational
 * devices keep offset order, so that they are written from their start.
 */
static void sa_interleave_free(struct swapalloc_dev *dev)
{
	unsigned int col, i, moved = 0;
	struct swapalloc_cluster *ci;

	if (dev->nr_clusters <= SA_SPACE_CLUSTERS)
		return;
	for (col = 0; col < SA_SPACE_CLUSTERS; col++) {
		for (i = col; i < dev->nr_clusters; i += SA_SPACE_CLUSTERS) {
			ci = &dev->clusters[i];
			if (ci->list == SA_LIST_FREE)
				list_move_tail(&ci->node, &dev->free);
			/* Pointer moves only, but many: let others in now and then. */
			if (!(++moved % (8 * SA_BATCH_CLUSTERS)))
				swapalloc_env_relax(&dev->env);
		}
	}
}

/**
 * swapalloc_dev_rebuild() - build the lists from the swap map
 * @dev: an initialised device
 *
 * Called when binding, with no allocation in flight, the fast path's
 * included (no CPU owns a cluster afterwards).  Clusters in use get
 * order 0: which order their entries were allocated for is not recorded
 * in the swap map.  Free clusters are listed in offset order on a
 * rotational disk, so that it is written from its start, and spread over
 * the swap cache's address spaces otherwise (sa_interleave_free()).
 *
 * Lets go of the lock every SA_BATCH_CLUSTERS clusters.  Frees that come
 * in meanwhile are accounted in the clusters counted already (below
 * ->rebuilt) and ignored above it, where the swap map is still to be read.
 */
void swapalloc_dev_rebuild(struct swapalloc_dev *dev)
{
	unsigned int i, o;

	dev->rebuilt = 0;

	INIT_LIST_HEAD(&dev->free);
	INIT_LIST_HEAD(&dev->full);
	INIT_LIST_HEAD(&dev->discard);
	INIT_LIST_HEAD(&dev->owned);
	/* No free comes without the lock while the device is being bound. */
	init_llist_head(&dev->freed);
	dev->nr_free = 0;
	dev->nr_full = 0;
	dev->nr_discard = 0;
	dev->nr_owned = 0;
	for (o = 0; o < SA_NR_ORDERS; o++) {
		INIT_LIST_HEAD(&dev->nonfull[o]);
		INIT_LIST_HEAD(&dev->frag[o]);
		dev->nr_nonfull[o] = 0;
		dev->nr_frag[o] = 0;
	}
	sa_reset_cursors(dev);
	for (i = 0; i < dev->nr_clusters; i++) {
		struct swapalloc_cluster *ci = &dev->clusters[i];

		if (i && !(i % SA_BATCH_CLUSTERS))
			swapalloc_env_relax(&dev->env);
		ci->count = sa_count_map(dev, ci);
		ci->cursors = 0;
		ci->order = 0;
		ci->discarding = false;
		ci->owner = NULL;
		ci->pending_free = 0;
		ci->queued = false;
		ci->fast_next = 0;
		ci->free_hint = 0;
		ci->list = sa_list_for_count(ci);
		(*swapalloc_list_counter(dev, ci->list, 0))++;
		list_add_tail(&ci->node, swapalloc_list_head(dev, ci->list, 0));
		dev->rebuilt = i + 1;
	}
	if (dev->policy == SA_POLICY_PERCPU)
		sa_interleave_free(dev);
	sa_place_rebuild(dev);
}

/*
 * Is [off, off + nr) free, once the slots that only the swap cache holds
 * are reclaimed?  For when swap is filling up (upstream's
 * cluster_scan_range()): *reclaim is set if there are such slots, and the
 * caller must reclaim them before committing.
 */
static bool sa_range_usable(struct swapalloc_dev *dev, unsigned long off,
			    unsigned int nr, bool *reclaim)
{
	unsigned long end = off + nr;
	unsigned char v;

	*reclaim = false;
	for (; off < end; off++) {
		v = swapalloc_env_map(&dev->env, off);
		if (!v)
			continue;
		if (v != SWAP_HAS_CACHE)
			return false;
		*reclaim = true;
	}
	return true;
}

/*
 * Reclaim the swap-cache-only slots of a range.  Drops and retakes the
 * device lock; returns true when the whole range is free afterwards.
 */
static bool sa_reclaim_range(struct swapalloc_dev *dev, unsigned long off,
			     unsigned int nr)
{
	unsigned long end = off + nr, i;
	int ret;

	for (i = off; i < end; i++) {
		if (swapalloc_env_map(&dev->env, i) != SWAP_HAS_CACHE)
			continue;
		ret = swapalloc_env_reclaim(&dev->env, i);
		if (ret <= 0)
			break;
		sa_count(&dev->stats.range_reclaims, ret);
	}
	for (i = off; i < end; i++)
		if (swapalloc_env_map(&dev->env, i))
			return false;
	return true;
}

/* Account a committed range in its cluster and move the cluster on. */
static void sa_account_alloc(struct swapalloc_dev *dev,
			     struct swapalloc_cluster *ci, int order)
{
	if (ci->list == SA_LIST_FREE) {
		/* A fresh cluster serves the order that opened it. */
		trace_swapalloc_cluster_move(dev, sa_idx(ci, dev), SA_LIST_FREE,
					     SA_LIST_NONFULL, order);
		(*swapalloc_list_counter(dev, SA_LIST_FREE, 0))--;
		ci->order = order;
		ci->list = SA_LIST_NONFULL;
		(*swapalloc_list_counter(dev, SA_LIST_NONFULL, order))++;
		list_move_tail(&ci->node, &dev->nonfull[order]);
	}
	ci->count += 1U << order;
	if (ci->count == SA_CLUSTER_SLOTS)
		sa_move(dev, ci, SA_LIST_FULL);
}

/*
 * Where to look for a free range in @ci first: ->free_hint, a slot of
 * the cluster below which its order has likely no free range
 * (SA_CLUSTER_SLOTS: none, the cluster was full since).  Frees lower it to
 * the slot they freed; an allocation found through it raises it past what
 * it took.  Written by frees under si->lock and by frees under the
 * cluster lock alone, without either lock between them, so it is only ever
 * a hint: a scan of the lists that starts there goes round to the start.
 */
static inline unsigned long sa_hint(struct swapalloc_cluster *ci,
				    unsigned long start, unsigned int size)
{
	/* Slot 0, the header, is never free: nor is the block holding it. */
	return start + ALIGN_DOWN(READ_ONCE(ci->free_hint) % SA_CLUSTER_SLOTS,
				  size) ?: size;
}

static inline void sa_set_hint(struct swapalloc_cluster *ci,
			       unsigned long offset)
{
	WRITE_ONCE(ci->free_hint, offset % SA_CLUSTER_SLOTS);
}

/* A free of @offset in @ci: the hint comes down to it. */
static inline void sa_lower_hint(struct swapalloc_cluster *ci,
				 unsigned long offset)
{
	if (offset % SA_CLUSTER_SLOTS < READ_ONCE(ci->free_hint))
		sa_set_hint(ci, offset);
}

/*
 * A cluster that has just lost its last used slot: to the discard list on
 * discard devices (its slots held until the discard work is done), to the
 * free list otherwise.
 */
static void sa_emptied(struct swapalloc_dev *dev, struct swapalloc_cluster *ci)
{
	if (dev->discards && !dev->quiescing &&
	    swapalloc_env_writable(&dev->env) &&
	    swapalloc_env_hold(&dev->env, sa_start(dev, ci), SA_CLUSTER_SLOTS)) {
		sa_move(dev, ci, SA_LIST_DISCARD);
		swapalloc_env_kick_discard(&dev->env);
		return;
	}
	sa_move(dev, ci, SA_LIST_FREE);
	ci->order = 0;
	sa_set_hint(ci, 0);
}

/*
 * Owned clusters (devices with ->fast set, per-CPU cursors only).
 *
 * When a CPU's cursor for an order settles in a cluster that no other
 * cursor is in, the cluster leaves every list (SA_LIST_OWNED): no scan
 * reaches it, and that CPU's swapalloc_alloc_fast() allocates in it under
 * the cluster lock alone, from ->fast_next on, adding to ->count.  The
 * rest of the cluster's state stays under si->lock:
 *
 *  - A free into it (swapalloc_free(): si->lock held, not the cluster
 *    lock) adds to ->pending_free instead of taking from ->count, which
 *    belongs to the fast path.  ->count is then an upper bound of the slots
 *    in use, which can only make the fast path stop early; it commits only
 *    slots the swap map shows free, under the cluster lock.  When nothing
 *    is free after its position, the fast path folds a range's worth of
 *    pending frees in itself, under the cluster lock, and goes on from
 *    the cluster's hint (sa_hint()), which every such free lowered.
 *  - A cluster the slow path fills up is owned all the same, full
 *    (sa_keep_full()): its frees then come back to the owner's fast path.
 *  - The owner's slow path gives the cluster back before it does anything
 *    else (sa_unown()): pending frees folded in under both locks, the
 *    cursor moved to where the fast path got to, the cluster back on the
 *    list its count calls for.  The locked code below thus never meets an
 *    owned cluster of the CPU it runs for, and the slow path takes
 *    ownership again of wherever the cursor ends up (sa_own()).
 *  - When nothing free is left, an allocation takes every owned cluster
 *    back (sa_revoke()).  ->owner is cleared under both locks, and the
 *    fast path checks it under the cluster lock before it commits.
 *
 * Clusters of the largest order are never owned: one entry fills them.
 */

/*
 * Take @ci from its owner: fold its pending frees in and put it back on the
 * list its count calls for.  Returns where the owner's fast path would
 * have gone on, 0 if nowhere.
 */
static unsigned long sa_give_back(struct swapalloc_dev *dev,
				  struct swapalloc_cluster *ci)
{
	unsigned long start = sa_start(dev, ci), next = 0;
	unsigned int pending;

	swapalloc_env_lock_cluster(&dev->env, start);
	ci->owner = NULL;
	pending = ci->pending_free;
	ci->pending_free = 0;
	if (WARN_ON_ONCE(pending > ci->count))
		pending = ci->count;
	ci->count -= pending;
	if (start + ci->fast_next < sa_end(dev, ci))
		next = start + ci->fast_next;
	swapalloc_env_unlock_cluster(&dev->env, start);

	/* Not owned any more: ->count is under si->lock again. */
	sa_count(&dev->stats.folded, pending);
	if (!ci->count)
		sa_emptied(dev, ci);
	else
		sa_move(dev, ci, sa_list_for_count(ci));
	return next;
}

/*
 * The slow path of @cur for @order begins: if @cur owns the cluster its
 * cursor is in, give it back, the cursor where the fast path got to.
 */
static void sa_unown(struct swapalloc_dev *dev, struct swapalloc_cursor *cur,
		     int order)
{
	unsigned long from = cur->next[order];
	struct swapalloc_cluster *ci;

	if (!from || from >= dev->max)
		return;
	ci = sa_cluster(dev, from);
	if (ci->list != SA_LIST_OWNED)
		return;
	/* Only the owner's cursor is ever in an owned cluster. */
	if (WARN_ON_ONCE(ci->owner != cur))
		return;
	sa_set_cursor(dev, cur, order, sa_give_back(dev, ci));
}

/*
 * Where a cursor goes after an allocation at @off that left no room after
 * it in @ci: nowhere (0), except on a device with the fast path, where a
 * cluster that is full now becomes the CPU's own all the same (sa_own()).
 * The frees into it pend, and its fast path folds them in and takes
 * their ranges again without si->lock (swapalloc_alloc_fast()).  Other
 * CPUs do not need it while it is full; its give-back or sa_revoke()
 * returns it to the lists.
 */
static unsigned long sa_keep_full(struct swapalloc_dev *dev,
				  struct swapalloc_cluster *ci,
				  unsigned long off)
{
	if (dev->fast && dev->policy == SA_POLICY_PERCPU &&
	    ci->list == SA_LIST_FULL)
		return off;
	return 0;
}

/*
 * The slow path of @cur for @order left the cursor in a cluster: own it,
 * unless another cursor is in it too (a cluster taken back from its owner
 * by sa_revoke(), whose cursor is still there).
 */
static void sa_own(struct swapalloc_dev *dev, struct swapalloc_cursor *cur,
		   int order)
{
	unsigned long next = cur->next[order], start;
	struct swapalloc_cluster *ci;
	unsigned int pending;

	if (!dev->fast || dev->policy != SA_POLICY_PERCPU || !next ||
	    order >= SA_CLUSTER_ORDER)
		return;
	ci = sa_cluster(dev, next);
	if ((ci->list != SA_LIST_NONFULL && ci->list != SA_LIST_FRAG &&
	     ci->list != SA_LIST_FULL) ||
	    ci->order != order || ci->cursors != 1)
		return;
	start = sa_start(dev, ci);
	sa_move(dev, ci, SA_LIST_OWNED);
	swapalloc_env_lock_cluster(&dev->env, start);
	/* Frees swapalloc_free_fast() queued and not folded in yet. */
	pending = ci->pending_free;
	ci->pending_free = 0;
	ci->count -= min_t(unsigned int, pending, ci->count);
	ci->fast_next = next - start;
	ci->owner = cur;
	swapalloc_env_unlock_cluster(&dev->env, start);
	sa_count(&dev->stats.owned, 1);
}

/*
 * Nothing free is left: take every owned cluster back from its owner, so
 * that the scans of other CPUs' clusters can reach them.  Returns whether
 * there was any.
 */
static bool sa_revoke(struct swapalloc_dev *dev)
{
	struct swapalloc_cluster *ci;
	bool any = false;

	while (!list_empty(&dev->owned)) {
		ci = list_first_entry(&dev->owned, struct swapalloc_cluster, node);
		sa_give_back(dev, ci);
		sa_count(&dev->stats.revoked, 1);
		any = true;
	}
	return any;
}

/*
 * May the locked paths allocate @nr slots in @ci?  Not in a cluster being
 * discarded, nor in one a CPU owns (its ->count belongs to the owner's
 * fast path, and is not read here), nor beyond its count.
 */
static inline bool sa_may_alloc_in(struct swapalloc_cluster *ci,
				   unsigned int nr)
{
	return ci->list != SA_LIST_DISCARD && ci->list != SA_LIST_OWNED &&
	       ci->count + nr <= SA_CLUSTER_SLOTS;
}

/*
 * Try to allocate 1 << @order slots in cluster @ci, scanning aligned
 * positions from @from (a slot in @ci) up to @to (the cluster's end if 0).
 * On success returns the offset and sets *@next to where the cursor
 * should go on.  Returns 0 when nothing fits.  May drop the lock to
 * reclaim, so @ci may have changed lists when it returns.
 */
static unsigned long sa_alloc_range(struct swapalloc_dev *dev,
				    struct swapalloc_cluster *ci,
				    unsigned long from, unsigned long to,
				    int order, unsigned char usage,
				    unsigned long *next)
{
	unsigned int nr = 1U << order;
	unsigned long end = sa_end(dev, ci), off;
	bool reclaim;

	if (!to || to > end)
		to = end;

	*next = 0;
	if (!sa_may_alloc_in(ci, nr))
		return 0;

	/* Slot 0, the header, is never free: nor is the block holding it. */
	from = ALIGN(from, nr) ?: nr;
	/*
	 * Nothing to reclaim while swap is not filling up: the first free
	 * range is found and committed in one pass, under the cluster lock.
	 */
	if (!swapalloc_env_swap_full(&dev->env)) {
		swp_entry_t slot;

		if (from + nr > to ||
		    !swapalloc_env_commit_batch(&dev->env, from, to, order,
						usage, 1, &slot))
			return 0;
		off = swp_offset(slot);
		goto found;
	}

	for (off = from; off + nr <= to; off += nr) {
		if (!sa_range_usable(dev, off, nr, &reclaim))
			continue;
		if (reclaim && !sa_reclaim_range(dev, off, nr))
			continue;
		/*
		 * The lock may have been dropped: recheck the cluster, which
		 * another CPU may even have taken ownership of meanwhile.
		 */
		if (!sa_may_alloc_in(ci, nr))
			return 0;
		if (!swapalloc_env_commit(&dev->env, off, order, usage))
			return 0;
		goto found;
	}
	return 0;
found:
	sa_account_alloc(dev, ci, order);
	if (ci->count < SA_CLUSTER_SLOTS && off + 2 * nr <= end)
		*next = off + nr;
	return off;
}

static inline unsigned long sa_alloc_in_cluster(struct swapalloc_dev *dev,
						struct swapalloc_cluster *ci,
						unsigned long from, int order,
						unsigned char usage,
						unsigned long *next)
{
	return sa_alloc_range(dev, ci, from, 0, order, usage, next);
}

static unsigned long sa_alloc_from(struct swapalloc_dev *dev,
				   struct swapalloc_cluster *ci, int order,
				   unsigned char usage, unsigned long *next)
{
	return sa_alloc_in_cluster(dev, ci, sa_start(dev, ci), order, usage,
				   next);
}

/*
 * sa_alloc_from() for a cluster on nonfull[@order] or frag[@order]: scan
 * from the hint (sa_hint()) to the end, then from the start up to there.
 * The hint is a lower bound of the cluster's free ranges, so this finds
 * the range a scan from the start finds, without reading the used blocks
 * below it: in a steady state of frees and allocations (swapped-in folios
 * freed, the next ones swapped out) that scan read half the cluster on
 * average.  The second part only serves a hint a racing free left too high.
 */
static unsigned long sa_alloc_hinted(struct swapalloc_dev *dev,
				     struct swapalloc_cluster *ci, int order,
				     unsigned char usage, unsigned long *next)
{
	unsigned long start = sa_start(dev, ci), hint, off;

	if (ci->order != order)
		return sa_alloc_from(dev, ci, order, usage, next);

	hint = sa_hint(ci, start, 1U << order);
	off = sa_alloc_range(dev, ci, hint, 0, order, usage, next);
	if (!off && hint > start && swapalloc_env_writable(&dev->env))
		off = sa_alloc_range(dev, ci, start, hint, order, usage, next);
	/* A cluster this filled keeps the hint its move to full set. */
	if (off && ci->count < SA_CLUSTER_SLOTS)
		sa_set_hint(ci, off + (1U << order));
	return off;
}

/* How sa_scan_list() treats the clusters it looks at. */
#define SA_SCAN_DEMOTE	BIT(0)	/* nonfull that fails its own order -> frag */
#define SA_SCAN_UNOWNED	BIT(1)	/* pass over clusters a cursor is in */

/*
 * Scan up to @limit clusters of @list for @list_order, allocating
 * 1 << @order slots, rotating each scanned cluster to the tail.  The list
 * is re-read after every cluster, since reclaim may drop the lock.  With
 * SA_SCAN_DEMOTE, a nonfull cluster that cannot serve its own order moves
 * to frag so that it is not rescanned before one of its slots is freed.
 * With SA_SCAN_UNOWNED, clusters another cursor than @mine (the cluster
 * of the allocating cursor, or NULL) is in are passed over (and *@owned
 * set): they are other CPUs' current clusters, and a CPU that joined one
 * would share its cache lines and swap cache address space.
 */
static unsigned long sa_scan_list(struct swapalloc_dev *dev,
				  enum swapalloc_list list, int list_order,
				  int order, unsigned char usage,
				  unsigned int limit, unsigned int flags,
				  const struct swapalloc_cluster *mine,
				  unsigned long *next, bool *owned)
{
	struct list_head *head = swapalloc_list_head(dev, list, list_order);
	struct swapalloc_cluster *ci;
	unsigned long off;

	while (limit-- && !list_empty(head)) {
		ci = list_first_entry(head, struct swapalloc_cluster, node);
		list_move_tail(&ci->node, head);
		if ((flags & SA_SCAN_UNOWNED) && ci->cursors &&
		    (ci != mine || ci->cursors > 1)) {
			*owned = true;
			continue;
		}
		if (list_order == order)
			off = sa_alloc_hinted(dev, ci, order, usage, next);
		else
			off = sa_alloc_from(dev, ci, order, usage, next);
		if (off)
			return off;
		if (!swapalloc_env_writable(&dev->env))
			return 0;
		if ((flags & SA_SCAN_DEMOTE) && ci->list == SA_LIST_NONFULL &&
		    ci->order == list_order)
			sa_move(dev, ci, SA_LIST_FRAG);
	}
	return 0;
}

/*
 * A free slot of @ci inside an aligned block of the cluster's order that
 * is already partly used: a hole that order cannot use anyway.  Returns 0
 * if every free slot of @ci lies in a wholly free block.
 */
static unsigned long sa_alloc_hole(struct swapalloc_dev *dev,
				   struct swapalloc_cluster *ci, unsigned char usage)
{
	unsigned long start = sa_start(dev, ci), end = sa_end(dev, ci);
	unsigned long bs = 1UL << ci->order, blk, off, hole;
	bool used;

	if (ci->list == SA_LIST_DISCARD || ci->count >= SA_CLUSTER_SLOTS)
		return 0;
	for (blk = start; blk < end; blk += bs) {
		hole = 0;
		used = blk + bs > end;	/* a block running past the end */
		for (off = blk; off < blk + bs && off < end; off++) {
			if (swapalloc_env_map(&dev->env, off))
				used = true;
			else if (!hole)
				hole = off;
		}
		if (!hole || !used)
			continue;
		if (!swapalloc_env_commit(&dev->env, hole, 0, usage))
			return 0;
		sa_account_alloc(dev, ci, 0);
		return hole;
	}
	return 0;
}

/*
 * Order 0 only: take a free slot from clusters serving higher orders,
 * frag clusters first (they have already failed their own order), then
 * nonfull ones, as upstream's cluster_alloc_swap_entry() does.  With
 * @holes, only slots in blocks of the cluster's order that are partly
 * used already, which that order cannot use: order 0 then fills the
 * holes 4K swap-in leaves in 64K entries instead of breaking the aligned
 * free runs the next 64K folios need.  The cursor is not left in such a
 * cluster, so that the next order-0 allocation looks for an order-0
 * cluster again.
 */
static unsigned long sa_steal(struct swapalloc_dev *dev, bool holes,
			      unsigned char usage)
{
	static const enum swapalloc_list lists[] = { SA_LIST_FRAG, SA_LIST_NONFULL };
	unsigned int i, n, budget = SA_HOLE_SCAN_MAX;
	struct swapalloc_cluster *ci;
	struct list_head *head;
	unsigned long off, next;
	int o;

	for (o = 1; o < SA_NR_ORDERS; o++) {
		for (i = 0; i < ARRAY_SIZE(lists); i++) {
			n = *swapalloc_list_counter(dev, lists[i], o);
			if (!holes) {
				off = sa_scan_list(dev, lists[i], o, 0, usage,
						   min_t(unsigned int, n, SA_STEAL_SCAN_MAX),
						   0, NULL, &next, NULL);
				if (off)
					return off;
				continue;
			}
			/*
			 * At most SA_HOLE_SCAN_MAX clusters in all; those
			 * without a hole go to the tail, so that the next
			 * search looks at others.
			 */
			head = swapalloc_list_head(dev, lists[i], o);
			while (n-- && budget && !list_empty(head)) {
				budget--;
				ci = list_first_entry(head, struct swapalloc_cluster, node);
				list_move_tail(&ci->node, head);
				off = sa_alloc_hole(dev, ci, usage);
				if (off)
					return off;
			}
		}
		if (!swapalloc_env_writable(&dev->env))
			return 0;
	}
	return 0;
}

/*
 * Does order 0's search for holes in higher orders' clusters (step 3)
 * pay for itself?  It reads up to SA_HOLE_SCAN_MAX clusters' swap map,
 * and a hole found leaves no cursor, so the next order-0 allocation
 * searches again.  While free clusters are plentiful, order 0 takes one
 * of them instead: large entries have free clusters to spare then, and
 * the holes stay for when they do not (one in eight free, or fewer).
 */
static inline bool sa_holes_pay(struct swapalloc_dev *dev)
{
	return dev->nr_free <= DIV_ROUND_UP(dev->nr_clusters, 8);
}

/* Slots allocated or freed count down the wait after a fruitless reclaim. */
static inline void sa_reclaim_churn(struct swapalloc_dev *dev, unsigned int nr)
{
	dev->reclaim_wait -= min_t(unsigned int, dev->reclaim_wait, nr);
}

/*
 * After @nr slots were allocated: the reclaim's back-off, the placement's
 * bookkeeping, and the background reclaim when the device is nearly
 * exhausted.
 */
static void sa_after_alloc(struct swapalloc_dev *dev, unsigned int nr)
{
	sa_reclaim_churn(dev, nr);
	sa_place_note_alloc(dev, nr);
	if (swapalloc_env_free_slots(&dev->env) < SA_CLUSTER_SLOTS &&
	    !dev->reclaim_wait && !dev->quiescing &&
	    swapalloc_env_swap_full(&dev->env))
		swapalloc_env_kick_reclaim(&dev->env);
}

/*
 * Full-cluster reclaim: free slots that only the swap cache holds, oldest
 * full cluster first.  Normally one cluster, stopping at the first slot
 * freed; when @force (the device is nearly exhausted, or from the
 * background worker) up to @to_scan clusters: as many as are in use from
 * the worker, SA_RECLAIM_SCAN_MAX from an allocation.  Only one pass runs
 * per device at a time, so CPUs do not all reclaim at once.  A forced
 * pass that frees nothing holds further forced passes, and the background
 * worker, off until a cluster's worth of slots has been allocated or
 * freed (->reclaim_wait), instead of walking every full cluster again for
 * nothing: on zram, whose swap-in bypasses the swap cache, almost no slot
 * is ever held by the cache alone.  Measured in `make demo` (zram full,
 * before this): 498 passes scanned 60556 clusters and freed no slot.
 */
static void sa_reclaim_full(struct swapalloc_dev *dev, bool force,
			    unsigned int to_scan)
{
	unsigned long off, end, slots = 0;
	unsigned int scanned = 0;
	struct swapalloc_cluster *ci;
	int ret;

	if (dev->reclaiming || !dev->nr_full)
		return;
	dev->reclaiming = true;
	sa_count(&dev->stats.reclaim_passes, 1);

	while (to_scan-- && !list_empty(&dev->full)) {
		ci = list_first_entry(&dev->full, struct swapalloc_cluster, node);
		list_move_tail(&ci->node, &dev->full);
		sa_count(&dev->stats.reclaim_clusters, 1);
		scanned++;
		off = sa_start(dev, ci);
		end = sa_end(dev, ci);
		while (off < end) {
			if (swapalloc_env_map(&dev->env, off) != SWAP_HAS_CACHE) {
				off++;
				continue;
			}
			/*
			 * The folio caching @off, reclaimed (ret > 0) or not
			 * (ret < 0), covers a naturally aligned range that
			 * may start before @off: go on after its end.
			 */
			ret = swapalloc_env_reclaim(&dev->env, off);
			if (ret > 0)
				slots += ret;
			ret = abs(ret);
			off = ret > 1 ? ALIGN_DOWN(off, ret) + ret : off + 1;
		}
		if (slots && !force)
			break;
		if (!swapalloc_env_writable(&dev->env))
			break;
		/* A forced pass may walk every full cluster: let others in. */
		if (force)
			swapalloc_env_relax(&dev->env);
	}
	sa_count(&dev->stats.reclaim_slots, slots);
	trace_swapalloc_reclaim(dev, force, scanned, slots);
	if (force && !slots)
		dev->reclaim_wait = SA_CLUSTER_SLOTS;
	dev->reclaiming = false;
}

void swapalloc_reclaim_full(struct swapalloc_dev *dev, bool force)
{
	swapalloc_fold_frees(dev);
	sa_reclaim_full(dev, force, force ? dev->nr_full : 1);
}

/*
 * The fast path of a batch under si->lock: as many entries as the cursor's
 * cluster has free, up to @nr, from the cursor on, committed under one
 * cluster lock.  Returns how many; 0 if the cursor has no cluster of
 * @order, or no free range is left in it after the cursor.  A cluster
 * @cur owns is given back first, and owned again afterwards.
 */
static int sa_alloc_cursor_batch(struct swapalloc_dev *dev,
				 struct swapalloc_cursor *cur, int order,
				 unsigned char usage, int nr,
				 swp_entry_t *slots)
{
	unsigned long from, size = 1UL << order, end, last;
	struct swapalloc_cluster *ci;
	int n, i;

	sa_unown(dev, cur, order);
	from = cur->next[order];
	if (!from || from >= dev->max)
		return 0;
	ci = sa_cluster(dev, from);
	/* Owned by another cursor: cannot be (sa_unown() warns), but never count it. */
	if (ci->list == SA_LIST_FREE || ci->list == SA_LIST_DISCARD ||
	    ci->list == SA_LIST_OWNED || ci->order != order)
		return 0;
	nr = min_t(int, nr, (SA_CLUSTER_SLOTS - ci->count) >> order);
	end = sa_end(dev, ci);
	from = ALIGN(from, size);
	if (nr <= 0 || from + size > end)
		return 0;
	n = swapalloc_env_commit_batch(&dev->env, from, end, order, usage, nr, slots);
	if (!n)
		return 0;
	ci->count += n << order;
	if (ci->count == SA_CLUSTER_SLOTS)
		sa_move(dev, ci, SA_LIST_FULL);
	sa_count(&dev->stats.order[order].requests, n);
	sa_count(&dev->stats.order[order].success, n);
	sa_count(&dev->stats.order[order].src[SA_SRC_CURSOR], n);
	for (i = 0; i < n; i++)
		trace_swapalloc_alloc(dev, order, swp_offset(slots[i]),
				      SA_SRC_CURSOR);
	last = swp_offset(slots[n - 1]);
	sa_set_cursor(dev, cur, order,
		      ci->count < SA_CLUSTER_SLOTS && last + 2 * size <= end ?
		      last + size : sa_keep_full(dev, ci, last));
	sa_own(dev, cur, order);
	sa_after_alloc(dev, n << order);
	return n;
}

/**
 * swapalloc_alloc_fast() - allocate from this CPU's owned cluster, unlocked
 * @dev: the device, ->fast set; si->lock NOT held
 * @order: each entry is 1 << @order slots
 * @usage: the swap map value, as for swapalloc_alloc()
 * @nr: how many entries at most
 * @slots: where they go
 *
 * The fast path of a slot cache refill or a large folio's entry: up to @nr
 * entries from the cluster the calling CPU's cursor for @order owns, from
 * where its last fast allocation stopped, committed and counted under
 * that cluster's lock alone.  Returns 0, and leaves everything to the
 * slow path (swapalloc_alloc_batch() or swapalloc_alloc() under
 * si->lock), whenever anything is not simple: a device without ->fast or
 * with a global cursor, no owned cluster for @order, a cluster taken back
 * by another CPU (sa_revoke()), nothing free after the position, or a
 * device no longer writable or bound.  Fewer than @nr is not a failure:
 * the slow path serves the rest, and folds the frees pending in the
 * cluster when it gives the cluster back.
 *
 * What it committed is not counted yet: the caller calls
 * swapalloc_alloc_fast_done() with the same entries, without si->lock, and
 * returns every one of them from ->alloc_fast(), whose caller accounts
 * them in the device's slots in use before it leaves its RCU read-side
 * section.
 *
 * Context: preemption disabled (the per-CPU cursor), inside
 * rcu_read_lock(): swapoff and the unbind clear what
 * swapalloc_env_live() checks, then wait for every fast path in flight
 * with synchronize_rcu() before they scan the map or rebuild.
 * Return: the number of entries committed.
 */
int swapalloc_alloc_fast(struct swapalloc_dev *dev, int order,
			 unsigned char usage, int nr, swp_entry_t *slots)
{
	unsigned long from, start, end, size, last;
	struct swapalloc_cursor *cur;
	struct swapalloc_cluster *ci;
	bool refolded = false;
	int n = 0, want;

	if (!dev->fast || dev->policy != SA_POLICY_PERCPU || order < 0 ||
	    order >= SA_CLUSTER_ORDER || nr <= 0)
		return 0;
	cur = this_cpu_ptr(dev->pcp);
	/* Written under si->lock; ->owner, under the cluster lock, decides. */
	from = READ_ONCE(cur->next[order]);
	if (!from || from >= dev->max)
		return 0;
	ci = sa_cluster(dev, from);
	start = sa_start(dev, ci);
	end = sa_end(dev, ci);
	size = 1UL << order;

	swapalloc_env_lock_cluster(&dev->env, start);
	/*
	 * Owned by this cursor, or revoked, given back or never owned.
	 * ->order does not change while the cluster is owned, and ->owner
	 * only changes under this lock, so both hold until the unlock.
	 */
	if (ci->owner != cur || ci->order != order)
		goto out;
	if (!swapalloc_env_live(&dev->env))
		goto out;
	for (;;) {
		from = start + ci->fast_next;
		/* Pending frees are still in ->count: at worst this stops early. */
		want = min_t(int, nr, (SA_CLUSTER_SLOTS - ci->count) >> order);
		if (want > 0 && from + size <= end) {
			n = swapalloc_env_commit_fast(&dev->env, from, end,
						      order, usage, want, slots);
			if (n)
				break;
		}
		/*
		 * Nothing free after the position.  Frees since the last fold
		 * may have left a range: once they add up to one, fold them
		 * in and go on from the hint, once.  Else the slow path's turn.
		 */
		if (refolded || ci->pending_free < size) {
			ci->fast_next = SA_CLUSTER_SLOTS;
			goto out;
		}
		refolded = true;
		ci->count -= min_t(unsigned int, ci->pending_free, ci->count);
		ci->pending_free = 0;
		/*
		 * Every free of an owned cluster lowers the hint under the
		 * cluster lock, so the pending ones all lie after it.
		 */
		ci->fast_next = sa_hint(ci, start, size) - start;
	}
	ci->count += n << order;
	last = swp_offset(slots[n - 1]);
	ci->fast_next = last + 2 * size <= end ? last + size - start :
			SA_CLUSTER_SLOTS;
	if (ci->count == SA_CLUSTER_SLOTS)
		WRITE_ONCE(ci->free_hint, SA_CLUSTER_SLOTS);
	else if (refolded)
		sa_set_hint(ci, last + size);
out:
	swapalloc_env_unlock_cluster(&dev->env, start);
	return n;
}

/**
 * swapalloc_alloc_fast_done() - count what swapalloc_alloc_fast() committed
 * @dev: the device, si->lock not held
 * @order: as passed to swapalloc_alloc_fast()
 * @n: the entries it returned
 * @slots: those entries
 *
 * Adds the entries to this CPU's counts, without si->lock; the device's
 * slots in use are the kernel's to account (get_swap_pages(), one atomic
 * add for what ->alloc_fast() returns).  The work after an allocation
 * (sa_after_alloc(): the reclaim of a device nearly exhausted, its
 * back-off, the antifrag placement's watch of the room) is under
 * si->lock; this CPU's slots wait for it in ->after_pending until the
 * caller runs swapalloc_alloc_fast_after(), which this asks for when the
 * device is short of room (below SA_FAST_ROOM, plus SA_PLACE_FREE_MIN with
 * antifrag) and, with antifrag, once a cluster's worth waits: its window
 * of allocated slots and its low-water mark of free slots are then at
 * most that late.
 *
 * Context: preemption disabled (this CPU's counts), as for
 * swapalloc_alloc_fast().
 * Return: whether the caller must take si->lock and call
 * swapalloc_alloc_fast_after().
 */
bool swapalloc_alloc_fast_done(struct swapalloc_dev *dev, int order, int n,
			       const swp_entry_t *slots)
{
	unsigned long room = SA_FAST_ROOM;
	struct swapalloc_cursor *cur;
	int i;

	if (n <= 0)
		return false;
	for (i = 0; i < n; i++)
		trace_swapalloc_alloc(dev, order, swp_offset(slots[i]),
				      SA_SRC_CURSOR);
	cur = this_cpu_ptr(dev->pcp);
	if (sa_stats_on)
		WRITE_ONCE(cur->fast[order], cur->fast[order] + n);
	/*
	 * Capped: with the default placement only the reclaim's back-off
	 * reads it, which is at most a cluster; antifrag asks at a cluster.
	 */
	cur->after_pending = min_t(unsigned int, cur->after_pending + (n << order),
				   2 * SA_CLUSTER_SLOTS);
	/* ->placement is set before the device is bound and stays. */
	if (dev->placement == SA_PLACE_ANTIFRAG) {
		if (cur->after_pending >= SA_CLUSTER_SLOTS)
			return true;
		room += SA_PLACE_FREE_MIN;
	}
	return swapalloc_env_free_slots(&dev->env) < room;
}

/**
 * swapalloc_alloc_fast_after() - the work after this CPU's fast allocations
 * @dev: the device, si->lock held
 *
 * sa_after_alloc() for the slots this CPU's fast path handed out since it
 * last ran, when swapalloc_alloc_fast_done() asks for it.
 *
 * Context: preemption disabled, as for swapalloc_alloc_fast_done().
 */
void swapalloc_alloc_fast_after(struct swapalloc_dev *dev)
{
	struct swapalloc_cursor *cur = this_cpu_ptr(dev->pcp);
	unsigned int nr = cur->after_pending;

	swapalloc_fold_frees(dev);
	cur->after_pending = 0;
	if (nr)
		sa_after_alloc(dev, nr);
}

/**
 * swapalloc_reclaim_background() - the background reclaim work's pass
 * @dev: the device, lock held
 *
 * A forced full-cluster reclaim pass, counted in background_runs, unless
 * the device is being unbound.
 */
void swapalloc_reclaim_background(struct swapalloc_dev *dev)
{
	if (dev->quiescing)
		return;
	sa_count(&dev->stats.background_runs, 1);
	sa_place_return_kept(dev);
	swapalloc_reclaim_full(dev, true);
}

/*
 * The order of preference, for one allocation of 1 << @order slots:
 *
 *  1. The current cluster for @order: this CPU's on non-rotational devices,
 *     the device's on rotational ones.  Consecutive allocations then land
 *     next to each other, which keeps rotational writes sequential.
 *  2. nonfull[@order] before the free list, except for order > 0 on
 *     discard devices.  Taking a fresh cluster while partly used ones of
 *     the same order have room spends free clusters that higher orders
 *     need; upstream measured this ("mm, swap: prefer nonfull over free
 *     clusters", Aug 2025: 128K fallback 54525 -> 870 in make -j96 on
 *     zram).  Discard devices keep free-first for large entries to spread
 *     writes, as upstream does.  Order 0 fills nonfull[0] first there too:
 *     otherwise step 3 (holes in higher orders' clusters) comes before
 *     order 0's own clusters, and fills every hole 4K swap-in leaves in a
 *     64K block before the rest of that block is freed.  On the 72 MiB
 *     discard disk with upstream's test in a 32M memcg that cost 91.81 %
 *     64K fallback vs builtin's 28.55 % (one boot; 26808 order-0 steals).
 *     Free clusters come in offset order (the rebuild lists them so, and
 *     frees append).
 *  3. Order 0 only, before any free cluster: frag[0], then holes in
 *     higher orders' clusters, i.e. free slots in aligned blocks of the
 *     cluster's order that are partly used already (sa_alloc_hole()).
 *     4K swap-in leaves such holes in 64K entries; filling them with 4K
 *     pages instead of opening a cluster keeps whole free blocks for the
 *     next 64K folios.  Measured with bench/swapsim (64 MiB device, 4K
 *     swap-in, steady state): -a -s 6.68% -> 0.00% fallback.
 *  4. frag[@order] for order > 0, at most SA_FRAG_SCAN_MAX clusters,
 *     rotating the list (upstream bounds this scan by frag_cluster_nr).
 *  5. Clusters waiting for discard: discard one with the lock dropped
 *     and start over from step 2 (a free cluster serves any order); if
 *     other CPUs are discarding all of them, wait for one of those
 *     (SA_DISCARD_WAITS times at most).  Before step 6, as in 6.12: a
 *     cluster waiting for discard is a free cluster soon, and stealing
 *     instead spends the room higher orders' clusters keep for them.
 *  6. Order 0 only: any free slot of higher orders' clusters (steal),
 *     frag ones first, as upstream does.
 *  7. When swap is over half full and all that failed: one pass of
 *     full-cluster reclaim, of SA_RECLAIM_SCAN_MAX full clusters (and the
 *     background worker kicked for all of them) if the device has less
 *     than a cluster's worth of free slots, then steps 2-6 once more.
 *
 * Order > 0 fails after that: the kernel splits the folio and counts a
 * swpout_fallback.  Every walk is bounded (SA_*_SCAN_MAX), so one
 * allocation reads at most a few hundred clusters' worth of swap map.
 */
unsigned long swapalloc_alloc(struct swapalloc_dev *dev, int order,
			      unsigned char usage)
{
	struct swapalloc_cursor *cur = sa_cursor(dev);
	struct swapalloc_cluster *mine = NULL;
	unsigned long off = 0, next = 0, from;
	unsigned int limit, waits = 0;
	swp_entry_t slot;
	bool retried = false, revoked = false, owned;
	enum swapalloc_src src;

	if (order < 0 || order >= SA_NR_ORDERS)
		return 0;
	swapalloc_fold_frees(dev);

	/*
	 * Step 1's common case: one scan and commit under the cluster lock.
	 * Only slots the swap cache alone holds, reclaimed when swap is
	 * filling up, need the slower walk below.
	 */
	if (sa_alloc_cursor_batch(dev, cur, order, usage, 1, &slot))
		return swp_offset(slot);
	sa_count(&dev->stats.order[order].requests, 1);

	from = cur->next[order];
	if (from && from < dev->max) {
		mine = sa_cluster(dev, from);
		src = SA_SRC_CURSOR;
		if (mine->list != SA_LIST_FREE && mine->order == order &&
		    swapalloc_env_swap_full(&dev->env))
			off = sa_alloc_in_cluster(dev, mine, from, order, usage, &next);
		if (off)
			goto done;
	}

again:
	if (!swapalloc_env_writable(&dev->env))
		goto fail;

	owned = false;
	if ((!dev->discards || !order) && order < SA_CLUSTER_ORDER) {
		src = SA_SRC_NONFULL;
		off = sa_scan_list(dev, SA_LIST_NONFULL, order, order, usage,
				   dev->nr_nonfull[order],
				   SA_SCAN_DEMOTE | SA_SCAN_UNOWNED, mine, &next, &owned);
		if (off)
			goto done;
	}

	if (order == 0) {
		src = SA_SRC_FRAG;
		limit = min_t(unsigned int, dev->nr_frag[0], SA_FRAG_SCAN_MAX);
		off = sa_scan_list(dev, SA_LIST_FRAG, 0, 0, usage, limit,
				   SA_SCAN_UNOWNED, mine, &next, &owned);
		if (off)
			goto done;
		src = SA_SRC_STEAL;
		next = 0;
		if (!sa_place_holes(dev, usage, &off) && sa_holes_pay(dev))
			off = sa_steal(dev, true, usage);
		if (off)
			goto done;
	}

free_clusters:
	while (!list_empty(&dev->free)) {
		struct swapalloc_cluster *ci;

		ci = list_first_entry(&dev->free, struct swapalloc_cluster, node);
		src = SA_SRC_FREE;
		off = sa_alloc_from(dev, ci, order, usage, &next);
		if (off)
			goto done;
		/*
		 * Only a swapoff, or an unbind begun while a reclaim had
		 * si->lock dropped, makes a free cluster fail.
		 */
		if (!swapalloc_env_writable(&dev->env))
			goto fail;
		if (ci->list == SA_LIST_FREE) {
			WARN_ON_ONCE(1);
			break;
		}
	}

	/*
	 * Nothing free is left, but clusters other CPUs own may have room:
	 * take them all back, once per allocation.  Their owners' cursors
	 * are still in them, so only the passes over other CPUs' current
	 * clusters below reach them; the scans above would pass over them
	 * again, so do not start over (on a nearly full device that doubled
	 * the map reads of one allocation under the lock).  A cluster whose
	 * pending frees emptied it went to the free list: try that first.
	 */
	if (dev->nr_owned && !revoked) {
		revoked = true;
		sa_revoke(dev);
		owned = true;
		goto free_clusters;
	}

	/*
	 * Other CPUs' current clusters, only now that no free cluster is
	 * left (and first, on discard devices, for order > 0: step 2).
	 */
	if (((dev->discards && order) || owned) && order < SA_CLUSTER_ORDER) {
		src = SA_SRC_NONFULL;
		off = sa_scan_list(dev, SA_LIST_NONFULL, order, order, usage,
				   dev->nr_nonfull[order], SA_SCAN_DEMOTE, NULL, &next, NULL);
		if (off)
			goto done;
	}

	if (order < SA_CLUSTER_ORDER && (order || owned)) {
		src = SA_SRC_FRAG;
		limit = min_t(unsigned int, dev->nr_frag[order], SA_FRAG_SCAN_MAX);
		off = sa_scan_list(dev, SA_LIST_FRAG, order, order, usage, limit,
				   0, NULL, &next, NULL);
		if (off)
			goto done;
	}

	/*
	 * Nothing else can serve the request, but clusters freed on a
	 * discard device may be waiting for their discard: do one here, with
	 * the lock dropped, as 6.12's cluster_alloc_swap_entry() does, and
	 * start over.  One free cluster serves any order.  The worker does
	 * the others.
	 */
	if (dev->nr_discard) {
		if (!dev->quiescing)
			swapalloc_env_kick_discard(&dev->env);
		if (swapalloc_discard_one(dev)) {
			sa_count(&dev->stats.sync_discards, 1);
			goto again;
		}
		/* All of them are being discarded by others: wait for one. */
		if (dev->discards_in_flight && waits < SA_DISCARD_WAITS) {
			waits++;
			sa_count(&dev->stats.discard_waits, 1);
			swapalloc_env_wait_discard(&dev->env, &dev->discards_done);
			goto again;
		}
	}

	if (order == 0) {
		src = SA_SRC_STEAL;
		next = 0;
		off = sa_place_adopt(dev, usage, &next);
		if (!off)
			off = sa_steal(dev, false, usage);
		if (off)
			goto done;
	}

	if (!retried && swapalloc_env_swap_full(&dev->env) &&
	    swapalloc_env_writable(&dev->env)) {
		bool force = !dev->reclaim_wait &&
			     swapalloc_env_free_slots(&dev->env) < SA_CLUSTER_SLOTS;

		retried = true;
		sa_reclaim_full(dev, force,
				force ? min_t(unsigned int, dev->nr_full, SA_RECLAIM_SCAN_MAX) : 1);
		if (force && !dev->quiescing)
			swapalloc_env_kick_reclaim(&dev->env);
		goto again;
	}

fail:
	sa_count(&dev->stats.order[order].fail, 1);
	trace_swapalloc_alloc_fail(dev, order);
	sa_set_cursor(dev, cur, order, 0);
	return 0;

done:
	sa_count(&dev->stats.order[order].success, 1);
	sa_count(&dev->stats.order[order].src[src], 1);
	trace_swapalloc_alloc(dev, order, off, src);
	if (!next && src != SA_SRC_STEAL)
		next = sa_keep_full(dev, sa_cluster(dev, off), off);
	sa_set_cursor(dev, cur, order, next);
	sa_own(dev, cur, order);
	sa_after_alloc(dev, 1U << order);
	return off;
}

/**
 * swapalloc_alloc_batch() - allocate up to @nr entries of one order
 * @dev: the device
 * @order: each entry is 1 << @order slots
 * @usage: the swap map value, as for swapalloc_alloc()
 * @nr: how many entries
 * @slots: where they go
 *
 * A swap slot cache refill (64 entries of order 0) in one call: the
 * cursor's cluster serves as many as it can in one commit, and
 * swapalloc_alloc() the others, one by one, each setting the cursor
 * anew; once no free cluster is left, only one of those searches per
 * call.  Returns how many entries were allocated; fewer than @nr when no
 * more could be, or when the device is that full.
 */
int swapalloc_alloc_batch(struct swapalloc_dev *dev, int order,
			  unsigned char usage, int nr, swp_entry_t *slots)
{
	bool searched = false;
	unsigned long off;
	int n = 0, got;

	if (order < 0 || order >= SA_NR_ORDERS)
		return 0;
	swapalloc_fold_frees(dev);
	while (n < nr && swapalloc_env_writable(&dev->env)) {
		/* Looked up each time: a reclaim may have moved us to another CPU. */
		got = sa_alloc_cursor_batch(dev, sa_cursor(dev), order, usage,
					    nr - n, slots + n);
		if (got) {
			n += got;
			continue;
		}
		/*
		 * With no free cluster left, each search may scan most of the
		 * device under the lock: one per batch, the next refill goes
		 * on.  What the cursor's cluster serves stays cheap.
		 */
		if (searched && list_empty(&dev->free))
			break;
		searched = true;
		off = swapalloc_alloc(dev, order, usage);
		if (!off)
			break;
		slots[n++] = swapalloc_env_slot(&dev->env, off);
	}
	return n;
}

/*
 * @nr slots of @ci are free again: off its count, and onto the list the
 * count calls for.
 */
static void sa_free_counted(struct swapalloc_dev *dev,
			    struct swapalloc_cluster *ci, unsigned int nr)
{
	sa_reclaim_churn(dev, nr);
	if (WARN_ON_ONCE(ci->count < nr || ci->list == SA_LIST_FREE ||
			 ci->list == SA_LIST_DISCARD))
		return;

	ci->count -= nr;
	if (!ci->count) {
		sa_emptied(dev, ci);
		return;
	}
	if (ci->list != SA_LIST_NONFULL)
		sa_move(dev, ci, SA_LIST_NONFULL);
}

/* A freed range: at least one slot, on the device, within one cluster. */
static inline bool sa_free_range_ok(struct swapalloc_dev *dev,
				    unsigned long offset, unsigned int nr)
{
	return nr && offset + nr <= dev->max &&
	       offset / SA_CLUSTER_SLOTS == (offset + nr - 1) / SA_CLUSTER_SLOTS;
}

/**
 * swapalloc_free() - account slots that returned to 0 in the swap map
 * @dev: the device
 * @offset: first slot
 * @nr: slots, all within one cluster
 *
 * A cluster that empties goes to the free list, or to the discard list on
 * discard devices (its slots held until the discard worker is done).  A
 * full or frag cluster that gets a free slot moves to nonfull again.  A
 * cluster a CPU owns stays off the lists: the free pends until its owner
 * gives it back (sa_give_back()).
 */
void swapalloc_free(struct swapalloc_dev *dev, unsigned long offset,
		    unsigned int nr)
{
	struct swapalloc_cluster *ci;

	if (WARN_ON_ONCE(!sa_free_range_ok(dev, offset, nr)))
		return;
	/* Not counted yet by a rebuild in progress: it reads the map later. */
	if (offset / SA_CLUSTER_SLOTS >= dev->rebuilt)
		return;
	trace_swapalloc_free(dev, offset, nr);
	if (unlikely(dev->place.nr_kept))
		sa_place_note_free(dev, offset, nr);
	ci = sa_cluster(dev, offset);
	if (ci->list == SA_LIST_OWNED) {
		unsigned long start = sa_start(dev, ci);

		/*
		 * ->count belongs to the owner's fast path: the owner folds
		 * this in when it gives the cluster back.  ->pending_free is
		 * under the cluster lock, which swapalloc_free_fast() may
		 * hold meanwhile while an unbind waits for it.
		 */
		sa_reclaim_churn(dev, nr);
		swapalloc_env_lock_cluster(&dev->env, start);
		if (!WARN_ON_ONCE(ci->pending_free + nr > SA_CLUSTER_SLOTS))
			ci->pending_free += nr;
		sa_lower_hint(ci, offset);
		swapalloc_env_unlock_cluster(&dev->env, start);
		return;
	}
	sa_lower_hint(ci, offset);
	sa_free_counted(dev, ci, nr);
}

/**
 * swapalloc_free_fast() - note slots that returned to 0, without the lock
 * @dev: a device with ->free_fast set
 * @offset: first slot
 * @nr: slots, all within one cluster
 *
 * As swapalloc_free(), but called with the cluster lock of @offset held
 * instead of the device lock, right after the slots' map bytes went to 0
 * under it.  The slots are added to the cluster's ->pending_free and the
 * cluster queued on ->freed, once: the next holder of the device lock
 * folds them in (sa_fold_frees()), or the owner when it gives the cluster
 * back.  Until then ->count is above the slots in use, which can only make
 * an allocation pass the cluster over.
 */
void swapalloc_free_fast(struct swapalloc_dev *dev, unsigned long offset,
			 unsigned int nr)
{
	struct swapalloc_cluster *ci;

	if (WARN_ON_ONCE(!sa_free_range_ok(dev, offset, nr)))
		return;
	trace_swapalloc_free(dev, offset, nr);
	ci = sa_cluster(dev, offset);
	if (WARN_ON_ONCE(ci->pending_free + nr > SA_CLUSTER_SLOTS))
		return;
	sa_lower_hint(ci, offset);
	ci->pending_free += nr;
	if (!ci->queued) {
		ci->queued = true;
		llist_add(&ci->fnode, &dev->freed);
	}
}

/**
 * swapalloc_fold_frees() - account the frees swapalloc_free_fast() queued
 * @dev: the device, lock held
 *
 * Each queued cluster's pending frees come off its count, which moves it to
 * the list the count calls for, as swapalloc_free() would have; an owned
 * cluster's stay pending for its owner.  Every locked entry point that
 * reads the lists calls this first.
 */
void swapalloc_fold_frees(struct swapalloc_dev *dev)
{
	struct swapalloc_cluster *ci, *tmp;
	struct llist_node *first;
	unsigned long start;
	unsigned int nr;

	if (llist_empty(&dev->freed))
		return;
	first = llist_del_all(&dev->freed);
	/* _safe: once unlocked, a free may queue @ci again, over ->fnode. */
	llist_for_each_entry_safe(ci, tmp, first, fnode) {
		start = sa_start(dev, ci);
		nr = 0;
		swapalloc_env_lock_cluster(&dev->env, start);
		ci->queued = false;
		if (ci->list != SA_LIST_OWNED) {
			nr = ci->pending_free;
			ci->pending_free = 0;
		}
		swapalloc_env_unlock_cluster(&dev->env, start);
		if (nr)
			sa_free_counted(dev, ci, nr);
	}
}

/**
 * swapalloc_discard_one() - discard the oldest cluster waiting for it
 * @dev: the device
 *
 * Drops the lock around the discard (which sleeps), then releases the
 * cluster's slots and puts it on the free list.  Returns false when no
 * cluster was waiting.
 */
bool swapalloc_discard_one(struct swapalloc_dev *dev)
{
	struct swapalloc_cluster *ci, *pick = NULL;
	unsigned long start;

	/* Clusters being discarded by others: at most one per discarder. */
	list_for_each_entry(ci, &dev->discard, node) {
		if (!ci->discarding) {
			pick = ci;
			break;
		}
	}
	if (!pick)
		return false;
	ci = pick;
	start = sa_start(dev, ci);
	/*
	 * The cluster stays on the discard list, its slots held, while the
	 * lock is dropped: nothing can allocate or free in it meanwhile, and
	 * ->discarding keeps other discarders off it.
	 */
	ci->discarding = true;
	dev->discards_in_flight++;
	swapalloc_env_discard(&dev->env, start, SA_CLUSTER_SLOTS);
	dev->discards_in_flight--;
	ci->discarding = false;
	swapalloc_env_release(&dev->env, start, SA_CLUSTER_SLOTS);
	WRITE_ONCE(dev->discards_done, dev->discards_done + 1);
	swapalloc_env_discard_done(&dev->env, &dev->discards_done);
	ci->order = 0;
	sa_move(dev, ci, SA_LIST_FREE);
	sa_count(&dev->stats.discarded, 1);
	trace_swapalloc_discard(dev, sa_idx(ci, dev));
	return true;
}

static __printf(3, 4) int sa_violation(char *buf, size_t len,
					const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	vsnprintf(buf, len, fmt, args);
	va_end(args);
	return -EUCLEAN;
}

/* Each cluster on list @l (for order @o) once, marked and counted right. */
static int sa_check_list(struct swapalloc_dev *dev, unsigned int l,
			 unsigned int o, char *buf, size_t len)
{
	bool per_order = l == SA_LIST_NONFULL || l == SA_LIST_FRAG;
	unsigned int i, n = 0, *seen_in = dev->scratch;
	const char *name = sa_list_names[l];
	struct swapalloc_cluster *ci;

	list_for_each_entry(ci, swapalloc_list_head(dev, l, o), node) {
		i = sa_idx(ci, dev);
		if (i >= dev->nr_clusters)
			return sa_violation(buf, len, "%s list holds a foreign cluster", name);
		if (seen_in[i] == l * SA_NR_ORDERS + o + 1)
			return sa_violation(buf, len, "%s list loops", name);
		if (seen_in[i])
			return sa_violation(buf, len, "cluster %u on two lists: %s and %s", i,
					    sa_list_names[(seen_in[i] - 1) / SA_NR_ORDERS], name);
		seen_in[i] = l * SA_NR_ORDERS + o + 1;
		if (ci->list != l)
			return sa_violation(buf, len, "cluster %u on %s list but marked %s", i,
					    name, swapalloc_list_name(ci->list));
		if (per_order && ci->order != o)
			return sa_violation(buf, len, "cluster %u of order %u on %s[%u]", i,
					    ci->order, name, o);
		if (++n > dev->nr_clusters)
			return sa_violation(buf, len, "%s list loops", name);
	}
	if (n != *swapalloc_list_counter(dev, l, o))
		return sa_violation(buf, len, "%s[%u] holds %u clusters, counter says %u",
				    name, o, n, *swapalloc_list_counter(dev, l, o));
	return 0;
}

/* A cluster's count against the swap map and the list it is on. */
/* What sa_check_cluster() reads of a cluster at once. */
struct sa_cluster_view {
	unsigned int used, count, pending, fast_next;
	bool queued;
};

static void sa_view_cluster(struct swapalloc_dev *dev,
			    struct swapalloc_cluster *ci,
			    struct sa_cluster_view *v)
{
	/* A discard cluster's slots are held: see sa_check_cluster(). */
	v->used = ci->list == SA_LIST_DISCARD ? 0 : sa_count_map(dev, ci);
	v->count = ci->count;
	v->pending = ci->pending_free;
	v->queued = ci->queued;
	v->fast_next = ci->fast_next;
}

static int sa_check_cluster(struct swapalloc_dev *dev, unsigned int i,
			    char *buf, size_t len)
{
	struct swapalloc_cluster *ci = &dev->clusters[i];
	const char *name = swapalloc_list_name(ci->list);
	unsigned long off, start = sa_start(dev, ci);
	struct sa_cluster_view v;

	/*
	 * The owner's fast path commits and counts, and frees without the
	 * device lock clear the map and add to the pending frees, under the
	 * cluster lock: read the map, the count and those together under it.
	 * Only ->fast devices have either, and only they are sure to have
	 * cluster locks (a rotational device has none).
	 */
	if (dev->fast) {
		swapalloc_env_lock_cluster(&dev->env, start);
		sa_view_cluster(dev, ci, &v);
		swapalloc_env_unlock_cluster(&dev->env, start);
	} else {
		sa_view_cluster(dev, ci, &v);
	}
	if (ci->list != SA_LIST_DISCARD &&
	    (v.pending > v.count || v.used != v.count - v.pending))
		return sa_violation(buf, len,
				    "%s cluster %u: count %u, %u pending, swap map has %u used",
				    name, i, v.count, v.pending, v.used);
	if (ci->list == SA_LIST_OWNED) {
		if (v.fast_next > SA_CLUSTER_SLOTS)
			return sa_violation(buf, len, "owned cluster %u: fast path at %u",
					    i, v.fast_next);
		return 0;
	}
	if (ci->owner)
		return sa_violation(buf, len, "%s cluster %u has an owner", name, i);
	/* Pending frees are folded in from ->freed, or never. */
	if (v.pending && (!dev->free_fast || !v.queued))
		return sa_violation(buf, len, "%s cluster %u: %u frees pending, %s",
				    name, i, v.pending,
				    dev->free_fast ? "not queued" : "frees take the lock");
	if (ci->list == SA_LIST_DISCARD) {
		if (ci->count || v.pending)
			return sa_violation(buf, len, "discard cluster %u has count %u",
					    i, ci->count);
		for (off = sa_start(dev, ci); off < sa_end(dev, ci); off++) {
			if (swapalloc_env_map(&dev->env, off) == SWAP_MAP_BAD)
				continue;
			return sa_violation(buf, len, "discard cluster %u: slot %lu not held",
					    i, off);
		}
		return 0;
	}
	if (sa_list_for_count(ci) == SA_LIST_NONFULL ?
	    ci->list != SA_LIST_NONFULL && ci->list != SA_LIST_FRAG :
	    ci->list != sa_list_for_count(ci))
		return sa_violation(buf, len, "%s cluster %u has count %u", name, i, ci->count);
	return 0;
}

/*
 * Owned clusters: each owned by a per-CPU cursor of its order whose cursor
 * is in it and alone there, on a ->fast device; ->owner and ->order do not
 * change without si->lock, which the caller holds.
 */
static int sa_check_owned(struct swapalloc_dev *dev, char *buf, size_t len)
{
	struct swapalloc_cluster *ci;
	struct swapalloc_cursor *cur;
	unsigned long next;
	bool found;
	int cpu;

	list_for_each_entry(ci, &dev->owned, node) {
		unsigned int i = sa_idx(ci, dev);

		if (!dev->fast || !dev->pcp || ci->order >= SA_CLUSTER_ORDER)
			return sa_violation(buf, len, "cluster %u owned on a device without owners",
					    i);
		found = false;
		for_each_possible_cpu(cpu) {
			cur = per_cpu_ptr(dev->pcp, cpu);
			if (cur == ci->owner)
				found = true;
		}
		if (!found)
			return sa_violation(buf, len, "owned cluster %u: no CPU's cursor owns it",
					    i);
		next = ci->owner->next[ci->order];
		if (!next || next / SA_CLUSTER_SLOTS != i || ci->cursors != 1)
			return sa_violation(buf, len,
					    "owned cluster %u: owner's cursor at %lu, %u cursors in it",
					    i, next, ci->cursors);
	}
	return 0;
}

/**
 * swapalloc_check() - validate every invariant of the cluster state
 * @dev: the device, with its lock held
 * @buf: where the first violation is described
 * @len: size of @buf
 *
 * Every cluster is on exactly one list, the one its count calls for;
 * nonfull and frag clusters are on the list of their order; the list
 * counters match the lists; every count equals the used slots in the swap
 * map (a discard cluster's slots are all held), less its pending frees;
 * cursors point into the device; an owned cluster is one of a per-CPU
 * cursor of its order that no other cursor shares, and only owned
 * clusters have an owner; pending frees of a cluster not owned are queued
 * for sa_fold_frees(), on a device whose frees come without the lock.  Returns 0 and "ok"
 * if all hold, -EUCLEAN and the first violation otherwise.
 *
 * Fast paths may run meanwhile: an owned cluster's count and map are
 * read together under its cluster lock.
 *
 * The lists are checked in one hold of the lock (a pointer walk over
 * every cluster); the counts, which read the whole swap map, in batches
 * of SA_BATCH_CLUSTERS with the lock let go in between.  Each cluster's
 * count, list and map agree whenever the lock is held, so every batch is
 * checked against a consistent state.
 */
int swapalloc_check(struct swapalloc_dev *dev, char *buf, size_t len)
{
	unsigned int i, o, l;
	unsigned long next;
	int cpu, err;

	/* A device bound without its clusters (a failed init let through). */
	if (dev->nr_clusters != DIV_ROUND_UP(dev->max, SA_CLUSTER_SLOTS))
		return sa_violation(buf, len, "%u clusters for %lu slots",
				    dev->nr_clusters, dev->max);
	swapalloc_fold_frees(dev);
	memset(dev->scratch, 0, dev->nr_clusters * sizeof(*dev->scratch));
	for (l = 0; l < SA_NR_LISTS; l++) {
		for (o = 0; o < SA_NR_ORDERS; o++) {
			if (o && l != SA_LIST_NONFULL && l != SA_LIST_FRAG)
				break;
			err = sa_check_list(dev, l, o, buf, len);
			if (err)
				return err;
		}
	}
	for (i = 0; i < dev->nr_clusters; i++)
		if (!dev->scratch[i])
			return sa_violation(buf, len, "cluster %u is on no list", i);
	/* Cursors inside the device, each counted in its cluster. */
	memset(dev->scratch, 0, dev->nr_clusters * sizeof(*dev->scratch));
	for (o = 0; o < SA_NR_ORDERS; o++) {
		next = dev->global.next[o];
		if (next >= dev->max)
			return sa_violation(buf, len, "global cursor[%u] = %lu beyond the device",
					    o, next);
		if (next)
			dev->scratch[next / SA_CLUSTER_SLOTS]++;
		if (!dev->pcp)
			continue;
		for_each_possible_cpu(cpu) {
			next = per_cpu_ptr(dev->pcp, cpu)->next[o];
			if (next >= dev->max)
				return sa_violation(buf, len,
						    "cpu %d cursor[%u] = %lu beyond the device",
						    cpu, o, next);
			if (next)
				dev->scratch[next / SA_CLUSTER_SLOTS]++;
		}
	}
	for (i = 0; i < dev->nr_clusters; i++)
		if (dev->clusters[i].cursors != dev->scratch[i])
			return sa_violation(buf, len,
					    "cluster %u counts %u cursors, %u point into it",
					    i, dev->clusters[i].cursors, dev->scratch[i]);
	err = sa_check_owned(dev, buf, len);
	if (err)
		return err;
	for (i = 0; i < dev->nr_clusters; i++) {
		if (i && !(i % SA_BATCH_CLUSTERS))
			swapalloc_env_relax(&dev->env);
		err = sa_check_cluster(dev, i, buf, len);
		if (err)
			return err;
	}
	snprintf(buf, len, "ok");
	return 0;
}

/* The fast path's entries of @order, summed over every CPU's count. */
static u64 sa_fast_count(struct swapalloc_dev *dev, int order)
{
	u64 sum = 0;
	int cpu;

	if (!dev->pcp)
		return 0;
	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(dev->pcp, cpu)->fast[order]);
	return sum;
}

void swapalloc_reset_stats(struct swapalloc_dev *dev)
{
	int o;

	memset(&dev->stats, 0, sizeof(dev->stats));
	for (o = 0; o < SA_NR_ORDERS; o++)
		dev->fast_base[o] = sa_fast_count(dev, o);
	dev->place.holes_kept = 0;
	dev->place.adopted = 0;
	dev->place.cache_kept = 0;
}

/**
 * swapalloc_read_stats() - the device's statistics
 * @dev: the device, lock held
 * @st: where they go
 *
 * ->stats, with what the fast path counted on every CPU since the last
 * reset: its entries are requests, successes and cursor allocations of
 * their order.
 */
void swapalloc_read_stats(struct swapalloc_dev *dev, struct swapalloc_stats *st)
{
	u64 n;
	int o;

	*st = dev->stats;
	for (o = 0; o < SA_NR_ORDERS; o++) {
		n = sa_fast_count(dev, o) - dev->fast_base[o];
		st->order[o].requests += n;
		st->order[o].success += n;
		st->order[o].src[SA_SRC_CURSOR] += n;
	}
}

/**
 * swapalloc_fast_entries() - entries the fast path handed out
 * @dev: the device, lock held
 *
 * Return: the entries of every order swapalloc_alloc_fast() handed out on
 * every CPU since the statistics were last reset.
 */
u64 swapalloc_fast_entries(struct swapalloc_dev *dev)
{
	u64 n = 0;
	int o;

	for (o = 0; o < SA_NR_ORDERS; o++)
		n += sa_fast_count(dev, o) - dev->fast_base[o];
	return n;
}
