// SPDX-License-Identifier: GPL-2.0
/*
 * swapalloc placement policies, included by core.c (they use its helpers
 * and run under the same device lock).
 *
 * SA_PLACE_DEFAULT changes nothing: core.c's order of preference, as
 * upstream has it.
 *
 * SA_PLACE_ANTIFRAG keeps order-0 pages out of the blocks of higher
 * orders' clusters.  A 4K swap-in of one page of a 64K entry frees one
 * slot of its aligned block; the other 15 belong to the same 64K region
 * of one process and are freed with it (munmap, MADV_DONTNEED, exit) or
 * page by page.  Left alone, the block becomes wholly free again and
 * serves the next 64K folio; plugged with an order-0 page of some other
 * region, it stays broken for as long as that page lives.  So, while the
 * device has room:
 *
 *  - order 0 skips the holes of higher orders' blocks (core.c's step 3)
 *    and goes to its own clusters and to free clusters first;
 *  - when those are all used, instead of taking single slots from higher
 *    orders' clusters (core.c's last steal, one slot here and one there,
 *    each spoiling a block), it adopts one: the emptiest of the first
 *    SA_PLACE_ADOPT_SCAN frag, then nonfull, clusters of orders 1 and up
 *    becomes an order-0 cluster, with the cursor in it.  Its live 64K
 *    entries stay where they are; their slots go to order 0 as they are
 *    freed.  Order 0 then fills the holes of one cluster, the one with
 *    the fewest live entries to spoil, and the other clusters' blocks
 *    drain whole.
 *
 * While the device runs nearly full the holes are all the room there is,
 * and filling them is better; so both rules apply only while the fewest
 * free slots seen over the last two windows of allocations (each half
 * the device's slots) stayed at or above SA_PLACE_FREE_MIN.  Below it,
 * order 0 takes holes (core.c's step 3) through sa_place_holes()'s own
 * search, which keeps a cluster that gave a hole at its list's head:
 * core.c's search rotates every cluster it looked at to the tail, which
 * spreads order-0 pages over more blocks (64 MiB disk, -s below: 73.21
 * with it).
 *
 * Measured with bench/swapsim --swapin memcg (the kernel model: the test
 * in a 32M memory cgroup, pages back as 4K pages unless still in the swap
 * cache), steady-state 64K fallback %, mean (range) of seeds 1-5:
 *
 *   72 MiB disk      -a    none                -a -s  -s
 *   builtin 6.12     0.00  32.49 (31.58-33.21) 0.00   47.00 (46.53-47.27)
 *   default          0.00  21.03 (20.41-21.72) 0.00   35.15 (34.24-36.39)
 *   antifrag         0.00  11.89 (8.09-14.21)  0.00   28.17 (27.50-29.66)
 *   64 MiB disk
 *   builtin 6.12     0.00  56.74 (56.22-57.10) 0.26   64.68 (63.93-65.17)
 *   default          0.00  45.17 (44.72-45.64) 5.22   73.21 (72.06-74.88)
 *   antifrag         0.00  49.09 (48.78-49.56) 0.14   60.03 (59.79-60.30)
 *
 * Swap-map reads per allocation (cost), none / -s: 72 MiB builtin 73 /
 * 68, default 214 / 238, antifrag 49 / 56; 64 MiB builtin 64 / 55,
 * default 285 / 328, antifrag 318 / 310.  bench/README.md has the
 * variants tried and dropped.
 */

static const char * const sa_placement_names[SA_NR_PLACEMENTS] = {
	[SA_PLACE_DEFAULT] = "default",
	[SA_PLACE_ANTIFRAG] = "antifrag",
};

const char *swapalloc_placement_name(enum swapalloc_placement placement)
{
	return placement < SA_NR_PLACEMENTS ? sa_placement_names[placement] : "?";
}

/* Free slots the device must have kept for SA_PLACE_ANTIFRAG's rules. */
#define SA_PLACE_FREE_MIN	(2 * SA_CLUSTER_SLOTS)

/* Higher orders' clusters order 0 compares when it adopts one. */
#define SA_PLACE_ADOPT_SCAN	4

/*
 * Slots swapalloc_keep_cache() may have kept and not freed since, at
 * most: one in this many of the device's.  Kept slots stay charged to
 * their memory cgroup and count as used swap, and a page mlocked after
 * its keep would pin its slot; the bound caps all three.  6.12 itself
 * leaves a read fault's swap cache in place until half the device is
 * used (vm_swap_full()); a quarter is below that, and is what the 72 MiB
 * memory-cgroup case needs to fall back 0.00 % (one in 8: 6-8 % with
 * -s, one in 16: 17-18 %, in swapsim's model; bench/README.md).
 */
#define SA_PLACE_KEEP_SHARE	4

static unsigned long sa_alloc_from(struct swapalloc_dev *dev,
				   struct swapalloc_cluster *ci, int order,
				   unsigned char usage, unsigned long *next);
static unsigned long sa_alloc_hole(struct swapalloc_dev *dev,
				   struct swapalloc_cluster *ci, unsigned char usage);
static bool sa_place_roomy(struct swapalloc_dev *dev);

/* Called by the rebuild: a new low-water mark from the current state. */
static void sa_place_rebuild(struct swapalloc_dev *dev)
{
	struct swapalloc_place *pl = &dev->place;

	pl->win_slots = 0;
	pl->low_free = swapalloc_env_free_slots(&dev->env);
	pl->prev_low_free = pl->low_free;
	/* What an earlier binding kept is just swap cache now. */
	if (pl->nr_kept)
		memset(pl->kept, 0, BITS_TO_LONGS(dev->max) * sizeof(unsigned long));
	pl->nr_kept = 0;
	pl->returning = false;
}

/* Slots at @offset, @nr of them, were freed: kept ones are kept no more. */
static void sa_place_note_free(struct swapalloc_dev *dev, unsigned long offset,
			       unsigned int nr)
{
	struct swapalloc_place *pl = &dev->place;
	unsigned long i;

	for (i = offset; i < offset + nr; i++)
		if (__test_and_clear_bit(i, pl->kept))
			pl->nr_kept--;
}

/*
 * The reclaim work's share: when the device ran short of room, give back
 * every kept slot that only the swap cache holds now (the folio is
 * dropped from the swap cache, dirty, and needs a new slot at its next
 * swap-out).  Lets go of the lock around each reclaim and between
 * batches of the bitmap.
 */
static void sa_place_return_kept(struct swapalloc_dev *dev)
{
	struct swapalloc_place *pl = &dev->place;
	unsigned long w, i, off, words = BITS_TO_LONGS(dev->max);
	int ret;

	if (!pl->returning)
		return;
	for (w = 0; w < words && pl->nr_kept; w++) {
		if (w && !(w % SA_BATCH_CLUSTERS))
			swapalloc_env_relax(&dev->env);
		for (i = 0; i < BITS_PER_LONG && pl->kept[w]; i++) {
			off = w * BITS_PER_LONG + i;
			if (!test_bit(off, pl->kept) ||
			    swapalloc_env_map(&dev->env, off) != SWAP_HAS_CACHE)
				continue;
			ret = swapalloc_env_reclaim(&dev->env, off);
			if (ret > 0)
				sa_count(&pl->kept_returned, ret);
			if (!swapalloc_env_writable(&dev->env))
				goto out;
		}
	}
out:
	pl->returning = false;
}

/*
 * After each successful allocation of @nr slots: the low-water mark of
 * free slots, over windows of half the device's slots allocated (about
 * one cycle of a workload that keeps the device busy).
 */
static void sa_place_note_alloc(struct swapalloc_dev *dev, unsigned long nr)
{
	struct swapalloc_place *pl = &dev->place;
	unsigned long free;

	if (dev->placement != SA_PLACE_ANTIFRAG)
		return;
	free = swapalloc_env_free_slots(&dev->env);
	if (free < pl->low_free)
		pl->low_free = free;
	pl->win_slots += nr;
	if (pl->win_slots >= dev->max / 2) {
		pl->prev_low_free = pl->low_free;
		pl->low_free = free;
		pl->win_slots = 0;
	}
	/* Room ran short: the reclaim work gives the kept slots back. */
	if (pl->nr_kept && !pl->returning && !dev->quiescing &&
	    !sa_place_roomy(dev)) {
		pl->returning = true;
		swapalloc_env_kick_reclaim(&dev->env);
	}
}

/* Does SA_PLACE_ANTIFRAG apply now: has the device kept enough room? */
static bool sa_place_roomy(struct swapalloc_dev *dev)
{
	struct swapalloc_place *pl = &dev->place;

	return dev->placement == SA_PLACE_ANTIFRAG &&
	       min_t(unsigned long, pl->low_free, pl->prev_low_free) >= SA_PLACE_FREE_MIN;
}

/*
 * core.c's step 3 for order 0, holes in higher orders' blocks.  Returns
 * false to let core.c do it (SA_PLACE_DEFAULT); else true, with the slot
 * allocated (or 0) in *@off: none while the device has room, else the
 * first hole of at most SA_HOLE_SCAN_MAX clusters, frag then nonfull of
 * each order, the lists left in their order.
 */
static bool sa_place_holes(struct swapalloc_dev *dev, unsigned char usage,
			   unsigned long *off)
{
	static const enum swapalloc_list lists[] = { SA_LIST_FRAG, SA_LIST_NONFULL };
	unsigned int budget = SA_HOLE_SCAN_MAX, i;
	struct swapalloc_cluster *ci;
	int o;

	*off = 0;
	if (dev->placement != SA_PLACE_ANTIFRAG)
		return false;
	if (sa_place_roomy(dev)) {
		sa_count(&dev->place.holes_kept, 1);
		return true;
	}
	for (o = 1; o < SA_NR_ORDERS; o++) {
		for (i = 0; i < ARRAY_SIZE(lists); i++) {
			struct list_head *head = swapalloc_list_head(dev, lists[i], o);
			unsigned int n = *swapalloc_list_counter(dev, lists[i], o);

			while (n-- && budget && !list_empty(head)) {
				budget--;
				ci = list_first_entry(head, struct swapalloc_cluster, node);
				*off = sa_alloc_hole(dev, ci, usage);
				if (*off)
					return true;
				/* No hole here: the next search looks at others first. */
				if (ci->list == lists[i] && ci->order == o)
					list_move_tail(&ci->node, head);
			}
		}
		if (!swapalloc_env_writable(&dev->env))
			return true;
	}
	return true;
}

/*
 * Order 0, when its own clusters and the free ones are used up and the
 * device has room: adopt the emptiest of the first SA_PLACE_ADOPT_SCAN
 * frag, then nonfull, clusters of the higher orders (each looked at goes
 * to its list's tail), and allocate there, setting *@next for the
 * cursor.  Returns 0 to leave it to core.c's last steal.
 */
static unsigned long sa_place_adopt(struct swapalloc_dev *dev, unsigned char usage,
				    unsigned long *next)
{
	static const enum swapalloc_list lists[] = { SA_LIST_FRAG, SA_LIST_NONFULL };
	unsigned int budget = SA_PLACE_ADOPT_SCAN, n, i;
	struct swapalloc_cluster *ci, *best = NULL;
	struct list_head *head;
	int o;

	if (!sa_place_roomy(dev))
		return 0;
	for (o = 1; o < SA_NR_ORDERS && budget; o++) {
		for (i = 0; i < ARRAY_SIZE(lists) && budget; i++) {
			n = *swapalloc_list_counter(dev, lists[i], o);
			head = swapalloc_list_head(dev, lists[i], o);
			while (n-- && budget && !list_empty(head)) {
				budget--;
				ci = list_first_entry(head, struct swapalloc_cluster, node);
				list_move_tail(&ci->node, head);
				if (!best || ci->count < best->count)
					best = ci;
			}
		}
	}
	if (!best)
		return 0;
	trace_swapalloc_cluster_move(dev, sa_idx(best, dev), best->list,
				     SA_LIST_NONFULL, 0);
	(*swapalloc_list_counter(dev, best->list, best->order))--;
	best->order = 0;
	best->list = SA_LIST_NONFULL;
	(*swapalloc_list_counter(dev, SA_LIST_NONFULL, 0))++;
	list_move_tail(&best->node, &dev->nonfull[0]);
	sa_count(&dev->place.adopted, 1);
	return sa_alloc_from(dev, best, 0, usage, next);
}

/**
 * swapalloc_keep_cache() - should a swap-in leave @nr slots at @offset in use?
 * @dev: the device
 * @offset: the first slot of the folio being swapped in
 * @nr: its pages
 *
 * The kernel asks before a swap-in fault frees the swap cache of the
 * folio it maps (swap filling up, or a write fault; the slots' map bytes
 * are then SWAP_HAS_CACHE only).  A 4K page of a 64K entry is the case
 * that matters: its slot, freed, is a hole no 64K folio can use while
 * the rest of the block lives, and order 0 would fill it with another
 * region's page.  Kept, the page goes back to its own slot at its next
 * swap-out (written there if dirtied, dropped without a write if not),
 * and the block still drains whole when its region goes.  It is what
 * swapsim's own-slot oracle measured (bench/README.md).
 *
 * SA_PLACE_ANTIFRAG only, while the device has room (the holes are then
 * not needed), and only for a folio smaller than its cluster's order
 * whose aligned block of that order has another slot in use: freeing a
 * whole block, or the last of one, is left to go ahead.  At most one in
 * SA_PLACE_KEEP_SHARE of the device's slots is kept at a time; when the
 * device runs short of room, the reclaim work gives them back
 * (sa_place_return_kept()).
 *
 * Return: true to keep the slots.
 */
bool swapalloc_keep_cache(struct swapalloc_dev *dev, unsigned long offset,
			  unsigned int nr)
{
	struct swapalloc_place *pl = &dev->place;
	struct swapalloc_cluster *ci;
	unsigned long start, end, i;

	if (!nr || offset >= dev->max || nr > dev->max - offset ||
	    !sa_place_roomy(dev) ||
	    pl->nr_kept + nr > dev->max / SA_PLACE_KEEP_SHARE)
		return false;
	ci = sa_cluster(dev, offset);
	/*
	 * Not in a cluster a CPU owns: its fast path writes the free slots
	 * of the block under the cluster lock alone, and it is the cluster
	 * being filled, where holes do not last anyway.
	 */
	if (!ci->order || nr >= BIT(ci->order) ||
	    ci->list == SA_LIST_FREE || ci->list == SA_LIST_DISCARD ||
	    ci->list == SA_LIST_OWNED)
		return false;
	start = round_down(offset, BIT(ci->order));
	end = min_t(unsigned long, start + BIT(ci->order), dev->max);
	for (i = start; i < end; i++) {
		if (i >= offset && i < offset + nr)
			continue;
		if (swapalloc_env_map(&dev->env, i)) {
			sa_count(&pl->cache_kept, nr);
			for (i = offset; i < offset + nr; i++)
				if (!test_bit(i, pl->kept)) {
					__set_bit(i, pl->kept);
					pl->nr_kept++;
				}
			return true;
		}
	}
	return false;
}
