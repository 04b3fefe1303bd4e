// SPDX-License-Identifier: GPL-2.0
/*
 * swapalloc placement policies, included by core.c (they use its helpers
 * and run under the same device lock).
 *
 * SA_PLACE_DEFAULT changes nothing: core.c's order of preference, as
 * upstream has it.
 *
 * SA_PLACE_ANTIFRAG leaves the holes of higher orders' blocks alone.  A
 * 4K swap-in of one page of a 64K entry frees one slot of its aligned
 * block; the other 15 belong to the same 64K region of one process and
 * are freed with it (munmap, MADV_DONTNEED, exit) or page by page.  Left
 * alone, the block becomes wholly free again and serves the next 64K
 * folio; plugged with an order-0 page of some other region (core.c's step
 * 3, sa_alloc_hole()), it stays broken for as long as that page lives.
 * So order 0 goes to order-0 clusters and free clusters first, and takes
 * holes only in the last steal, which core.c does anyway.  While the
 * device runs nearly full the holes are all the room there is, and
 * filling them is better (the 64 MiB disk below); so the policy applies
 * only while the fewest free slots seen over the last two windows of
 * allocations (each half the device's slots) stayed at or above one
 * cluster's worth.
 *
 * Measured with bench/swapsim --swapin memcg (the kernel model: the test
 * in a 32M memory cgroup, pages back as 4K pages unless still in the swap
 * cache), steady-state 64K fallback %, seed 1, -a / none / -a -s / -s:
 *
 *   72 MiB disk  builtin 6.12  0.00 33.14 0.00 46.85
 *                default       0.00 28.60 0.00 42.49
 *                antifrag      0.00 14.17 0.00 31.52
 *   64 MiB disk  builtin 6.12  0.00 56.22 0.14 64.69
 *                default       0.00 49.27 0.21 60.22
 *                antifrag      0.00 43.63 0.21 60.22
 *
 * Where order 0 then goes, in that model (no-flag case): 110057 times the
 * cursor, 749 nonfull[0], 4 a free cluster and 185574 core.c's last
 * steal, which takes the first free slot of a higher order's frag (then
 * nonfull) cluster and rotates the list, so consecutive pages go to
 * different clusters (default: 23161 cursor, 362676 steals).  That
 * rotation is part of the gain: the same steal without rotating reads
 * 25.20 / 39.35 (none / -s) with runs of 4.7 pages.  It also shortens
 * runs of consecutive offsets (rotational devices): 4.6 -> 3.4 pages in
 * the no-flag case with the global cursor, so antifrag is meant for
 * non-rotational devices for now.
 *
 * Also measured and dropped (bench/README.md): order 0 filling holes
 * first, everywhere (worse: 39.99 / 52.08 on the 72 MiB disk); filling
 * first the order-0 cluster with the fewest free blocks (no gain); an
 * order-4 request taking a free aligned block in a cluster of another
 * order before failing (never found one: when order 4 fails, no cluster
 * has a wholly free block left).
 */

static const char * const sa_placement_names[SA_NR_PLACEMENTS] = {
	[SA_PLACE_DEFAULT] = "default",
	[SA_PLACE_ANTIFRAG] = "antifrag",
};

const char *swapalloc_placement_name(enum swapalloc_placement placement)
{
	return placement < SA_NR_PLACEMENTS ? sa_placement_names[placement] : "?";
}

/* Free slots the device must have kept for SA_PLACE_ANTIFRAG to apply. */
#define SA_PLACE_FREE_MIN	SA_CLUSTER_SLOTS

/* Called by the rebuild: a new low-water mark from the current state. */
static void sa_place_rebuild(struct swapalloc_dev *dev)
{
	struct swapalloc_place *pl = &dev->place;

	pl->win_slots = 0;
	pl->low_free = swapalloc_env_free_slots(&dev->env);
	pl->prev_low_free = pl->low_free;
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
	if (pl->win_slots < dev->max / 2)
		return;
	pl->prev_low_free = pl->low_free;
	pl->low_free = free;
	pl->win_slots = 0;
}

/* Should order 0 skip the holes of higher orders' blocks (core.c step 3)? */
static bool sa_place_keep_holes(struct swapalloc_dev *dev)
{
	struct swapalloc_place *pl = &dev->place;

	if (dev->placement != SA_PLACE_ANTIFRAG ||
	    min_t(unsigned long, pl->low_free, pl->prev_low_free) < SA_PLACE_FREE_MIN)
		return false;
	sa_count(&pl->holes_kept, 1);
	return true;
}
