// SPDX-License-Identifier: GPL-2.0
/*
 * swapalloc placement policies, included by core.c (they use its static
 * helpers and run under the same device lock).
 *
 * SA_PLACE_DEFAULT changes nothing: core.c's order of preference, as
 * upstream has it.  SA_PLACE_ANTIFRAG keeps aligned 64K runs whole, from
 * measurements with bench/swapsim --swapin memcg (the test in a 32M
 * memory cgroup on a 72 MiB disk, where pages come back 4K at a time):
 *
 *  - Order 0 first fills a hole: a free slot in an aligned 16-slot block
 *    that already has a slot in use, in whatever cluster and for whatever
 *    order the cluster serves, before the cursor, nonfull[0] or a free
 *    cluster.  A 4K swap-in leaves such a hole in a 64K entry; filling it
 *    breaks no run an order-4 entry could use, while an order-0 cluster's
 *    next slot may open a whole free block.
 *  - Order 4, when the core finds nothing (cursor, nonfull[4], the free
 *    list, frag[4]), takes a wholly free aligned block in a cluster of any
 *    order, instead of failing while such blocks sit in order-0 or frag
 *    clusters.
 *
 * Both are found from per-block accounting kept on every commit and final
 * free (place.used, one byte per 16-slot block; per cluster the clean
 * blocks and the free slots in partly used blocks), so a search reads the
 * swap map only inside the block it picks: at most 16 map reads, plus one
 * byte per cluster skipped (at most SA_PLACE_SCAN_MAX clusters).  Other
 * orders are placed as by default.
 */

#define SA_PLACE_BLK_ORDER	4
#define SA_PLACE_BLK		BIT(SA_PLACE_BLK_ORDER)
#define SA_PLACE_BLKS		(SA_CLUSTER_SLOTS / SA_PLACE_BLK)
#ifndef SA_PLACE_VARIANT
#define SA_PLACE_VARIANT 0
#endif
/* Clusters one placement search may look at before leaving it to the core. */
#define SA_PLACE_SCAN_MAX	64

static void sa_account_alloc(struct swapalloc_dev *dev,
			     struct swapalloc_cluster *ci, int order);
static __printf(3, 4) int sa_violation(char *buf, size_t len,
					const char *fmt, ...);

static const char * const sa_placement_names[SA_NR_PLACEMENTS] = {
	[SA_PLACE_DEFAULT] = "default",
	[SA_PLACE_ANTIFRAG] = "antifrag",
};

const char *swapalloc_placement_name(enum swapalloc_placement placement)
{
	return placement < SA_NR_PLACEMENTS ? sa_placement_names[placement] : "?";
}

static inline bool sa_place_on(struct swapalloc_dev *dev)
{
	return dev->placement == SA_PLACE_ANTIFRAG && dev->place.used;
}

static int sa_place_init(struct swapalloc_dev *dev)
{
	struct swapalloc_place *pl = &dev->place;

	pl->used = kvcalloc((size_t)dev->nr_clusters * SA_PLACE_BLKS, 1, GFP_KERNEL);
	pl->clean = kvcalloc(dev->nr_clusters, 1, GFP_KERNEL);
	pl->holes = kvcalloc(dev->nr_clusters, sizeof(*pl->holes), GFP_KERNEL);
	return pl->used && pl->clean && pl->holes ? 0 : -ENOMEM;
}

static void sa_place_destroy(struct swapalloc_dev *dev)
{
	struct swapalloc_place *pl = &dev->place;

	kvfree(pl->holes);
	pl->holes = NULL;
	kvfree(pl->clean);
	pl->clean = NULL;
	kvfree(pl->used);
	pl->used = NULL;
}

/* A block's share of its cluster's clean and hole counts. */
static void sa_place_blk_count(struct swapalloc_place *pl, unsigned int c,
			       unsigned int used, int sign)
{
	if (!used)
		pl->clean[c] += sign;
	else if (used < SA_PLACE_BLK)
		pl->holes[c] += sign * (int)(SA_PLACE_BLK - used);
}

static void sa_place_blk_add(struct swapalloc_dev *dev, unsigned long blk, int n)
{
	struct swapalloc_place *pl = &dev->place;
	unsigned int c = blk / SA_PLACE_BLKS;

	sa_place_blk_count(pl, c, pl->used[blk], -1);
	pl->used[blk] += n;
	sa_place_blk_count(pl, c, pl->used[blk], 1);
}

/* @nr slots from @off went into use (@sign 1) or back to free (-1). */
static void sa_place_range(struct swapalloc_dev *dev, unsigned long off,
			   unsigned long nr, int sign)
{
	unsigned long n;

	if (!sa_place_on(dev))
		return;
	while (nr) {
		n = min_t(unsigned long, nr, SA_PLACE_BLK - off % SA_PLACE_BLK);
		sa_place_blk_add(dev, off / SA_PLACE_BLK, sign * (int)n);
		off += n;
		nr -= n;
	}
}

/*
 * The low-water mark of free slots, over windows of half the device's
 * slots allocated: about one cycle of a workload that keeps the device
 * busy.
 */
static void sa_place_low_water(struct swapalloc_dev *dev, unsigned long nr)
{
	struct swapalloc_place *pl = &dev->place;
	unsigned long free = swapalloc_env_free_slots(&dev->env);

	if (free < pl->low_free)
		pl->low_free = free;
	pl->win_slots += nr;
	if (pl->win_slots < dev->max / 2)
		return;
	pl->prev_low_free = pl->low_free;
	pl->low_free = free;
	pl->win_slots = 0;
}

static inline void sa_place_commit(struct swapalloc_dev *dev, unsigned long off,
				   int order)
{
	if (!sa_place_on(dev))
		return;
	sa_place_range(dev, off, 1UL << order, 1);
	sa_place_low_water(dev, 1UL << order);
}

static inline void sa_place_free(struct swapalloc_dev *dev, unsigned long off,
				 unsigned int nr)
{
	sa_place_range(dev, off, nr, -1);
}

/* From the swap map, as the rebuild does: any non-zero byte is in use. */
static void sa_place_rebuild(struct swapalloc_dev *dev)
{
	struct swapalloc_place *pl = &dev->place;
	unsigned long blk, off, nr_blks = (unsigned long)dev->nr_clusters * SA_PLACE_BLKS;
	unsigned int used;

	if (!sa_place_on(dev))
		return;
	memset(pl->clean, 0, dev->nr_clusters);
	memset(pl->holes, 0, dev->nr_clusters * sizeof(*pl->holes));
	for (blk = 0; blk < nr_blks; blk++) {
		used = 0;
		for (off = blk * SA_PLACE_BLK; off < (blk + 1) * SA_PLACE_BLK; off++)
			used += off >= dev->max || swapalloc_env_map(&dev->env, off);
		pl->used[blk] = used;
		sa_place_blk_count(pl, blk / SA_PLACE_BLKS, used, 1);
	}
	pl->rotor = 0;
	pl->win_slots = 0;
	pl->low_free = swapalloc_env_free_slots(&dev->env);
	pl->prev_low_free = pl->low_free;
}

/* Clusters a placement search may take from: in use, not being discarded. */
static inline bool sa_place_cluster_ok(struct swapalloc_cluster *ci)
{
	return ci->list != SA_LIST_FREE && ci->list != SA_LIST_DISCARD &&
	       ci->list != SA_LIST_FULL;
}

static unsigned long sa_place_commit_at(struct swapalloc_dev *dev,
					struct swapalloc_cluster *ci,
					unsigned long off, int order,
					unsigned char usage)
{
	if (!swapalloc_env_commit(&dev->env, off, order, usage))
		return 0;
	sa_place_commit(dev, off, order);
	sa_account_alloc(dev, ci, order);
	return off;
}

/* A free slot in a partly used block of cluster @c, or 0. */
static unsigned long sa_place_hole_in(struct swapalloc_dev *dev, unsigned int c,
				      unsigned char usage)
{
	struct swapalloc_cluster *ci = &dev->clusters[c];
	unsigned long blk = (unsigned long)c * SA_PLACE_BLKS, b, off;
	unsigned int used;

	if (!dev->place.holes[c] || !sa_place_cluster_ok(ci))
		return 0;
	for (b = blk; b < blk + SA_PLACE_BLKS; b++) {
		used = dev->place.used[b];
		if (!used || used >= SA_PLACE_BLK)
			continue;
		for (off = b * SA_PLACE_BLK; off < (b + 1) * SA_PLACE_BLK; off++)
			if (off < dev->max && !swapalloc_env_map(&dev->env, off))
				return sa_place_commit_at(dev, ci, off, 0, usage);
	}
	return 0;
}

/* The first wholly free block of cluster @c, or 0. */
static unsigned long sa_place_run_in(struct swapalloc_dev *dev, unsigned int c,
				     unsigned char usage)
{
	struct swapalloc_cluster *ci = &dev->clusters[c];
	unsigned long blk = (unsigned long)c * SA_PLACE_BLKS, b, off;

	if (!dev->place.clean[c] || !sa_place_cluster_ok(ci))
		return 0;
	for (b = blk; b < blk + SA_PLACE_BLKS; b++) {
		if (dev->place.used[b])
			continue;
		off = b * SA_PLACE_BLK;
		if (!off || off + SA_PLACE_BLK > dev->max)
			continue;
		return sa_place_commit_at(dev, ci, off, SA_PLACE_BLK_ORDER, usage);
	}
	return 0;
}

/*
 * Search at most SA_PLACE_SCAN_MAX clusters, the one the CPU's order-0
 * cursor is in first (so that consecutive pages stay together), then on
 * from the rotor.
 */
static unsigned long sa_place_search(struct swapalloc_dev *dev, int order,
				     unsigned char usage)
{
	unsigned int from = sa_cursor(dev)->next[0], i, c, n;
	unsigned long off;

	n = min_t(unsigned int, dev->nr_clusters, SA_PLACE_SCAN_MAX);
	c = from && from < dev->max ? from / SA_CLUSTER_SLOTS : dev->place.rotor;
	for (i = 0; i <= n; i++) {
		off = order ? sa_place_run_in(dev, c, usage) : sa_place_hole_in(dev, c, usage);
		if (off) {
			dev->place.rotor = c;
			return off;
		}
		if (!swapalloc_env_writable(&dev->env))
			return 0;
		c = i ? c + 1 : dev->place.rotor;
		if (c >= dev->nr_clusters)
			c = 0;
	}
	dev->place.rotor = c;
	return 0;
}

/*
 * A hole in the order-0 cluster that has the fewest wholly free blocks:
 * order-0 clusters mix pages of many regions and rarely drain block by
 * block, and filling the most broken one first lets the others empty.
 */
static unsigned long sa_place_hole0(struct swapalloc_dev *dev, unsigned char usage)
{
	unsigned int c, best = dev->nr_clusters, best_clean = SA_PLACE_BLKS + 1;
	struct swapalloc_cluster *ci;

	for (c = 0; c < dev->nr_clusters; c++) {
		ci = &dev->clusters[c];
		if (ci->order || !dev->place.holes[c] || !sa_place_cluster_ok(ci))
			continue;
		if (dev->place.clean[c] < best_clean) {
			best = c;
			best_clean = dev->place.clean[c];
		}
	}
	return best == dev->nr_clusters ? 0 : sa_place_hole_in(dev, best, usage);
}

#ifndef SA_PLACE_FREE_MIN
#define SA_PLACE_FREE_MIN	(2 * SA_CLUSTER_SLOTS)
#endif
/*
 * Leave the holes of higher orders' blocks to drain rather than filling
 * them with order-0 pages, while the device has room elsewhere.
 */
static bool sa_place_keep_holes(struct swapalloc_dev *dev)
{
	return (SA_PLACE_VARIANT & 2) && sa_place_on(dev) &&
	       min_t(unsigned long, dev->place.low_free, dev->place.prev_low_free) >=
	       SA_PLACE_FREE_MIN;
}

/*
 * Called by swapalloc_alloc() before its own search (@last false) and
 * after it failed (@last true).  Returns an offset, or 0 to go on.
 */
static unsigned long sa_place_alloc(struct swapalloc_dev *dev, int order,
				    unsigned char usage, bool last)
{
	unsigned long off;

	if (!sa_place_on(dev))
		return 0;
	if (!order && !last && (SA_PLACE_VARIANT & 9)) {
		off = (SA_PLACE_VARIANT & 8) ? sa_place_hole0(dev, usage) :
		      sa_place_search(dev, 0, usage);
		if (off) {
			sa_count(&dev->place.holes_taken, 1);
			/* Keep the cursor here: the next page fills the next hole. */
			sa_cursor(dev)->next[0] = off;
		}
		return off;
	}
	if (order == SA_PLACE_BLK_ORDER && last) {
		off = sa_place_search(dev, order, usage);
		if (off)
			sa_count(&dev->place.runs_rescued, 1);
		return off;
	}
	return 0;
}

/* For swapalloc_check(): the accounting agrees with the swap map. */
static int sa_place_check(struct swapalloc_dev *dev, char *buf, size_t len)
{
	struct swapalloc_place *pl = &dev->place;
	unsigned long blk, off, nr_blks = (unsigned long)dev->nr_clusters * SA_PLACE_BLKS;
	unsigned int used, c, clean = 0, holes = 0;

	if (!sa_place_on(dev))
		return 0;
	for (blk = 0; blk < nr_blks; blk++) {
		c = blk / SA_PLACE_BLKS;
		if (dev->clusters[c].list == SA_LIST_DISCARD) {
			/* Held slots read SWAP_MAP_BAD but count as free here. */
			if (pl->used[blk])
				return sa_violation(buf, len, "discard cluster %u: block %lu used %u",
						    c, blk, pl->used[blk]);
		} else {
			used = 0;
			for (off = blk * SA_PLACE_BLK; off < (blk + 1) * SA_PLACE_BLK; off++)
				used += off >= dev->max || swapalloc_env_map(&dev->env, off);
			if (used != pl->used[blk])
				return sa_violation(buf, len, "block %lu: %u slots used, placement says %u",
						    blk, used, pl->used[blk]);
		}
		clean += !pl->used[blk];
		holes += pl->used[blk] && pl->used[blk] < SA_PLACE_BLK ?
			 SA_PLACE_BLK - pl->used[blk] : 0;
		if ((blk + 1) % SA_PLACE_BLKS)
			continue;
		if (clean != pl->clean[c] || holes != pl->holes[c])
			return sa_violation(buf, len, "cluster %u: %u clean blocks and %u holes, placement says %u and %u",
					    c, clean, holes, pl->clean[c], pl->holes[c]);
		clean = 0;
		holes = 0;
	}
	return 0;
}
