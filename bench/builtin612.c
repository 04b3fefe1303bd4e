// SPDX-License-Identifier: GPL-2.0
/*
 * The builtin allocator of Linux 6.12.117 for bench/swapsim: a userspace
 * transcription of cluster_alloc_swap_entry() and its helpers
 * (mm/swapfile.c: alloc_swap_scan_cluster(), cluster_scan_range(),
 * cluster_reclaim_range(), cluster_alloc_range(),
 * swap_reclaim_full_clusters()), on the cluster state of struct
 * swapalloc_dev, so that swapsim can put the kernel's own placement beside
 * swapalloc's on the same simulated workload.
 *
 * The cluster lists and counters mean what they mean in 6.12: free,
 * nonfull[order], frag[order] (nr_frag is frag_cluster_nr), full.  Frees
 * are accounted by the core's swapalloc_free(), which does what 6.12's
 * dec_cluster_info_page() does (count down; an empty cluster goes to the
 * free list tail with order 0; a full or frag one back to nonfull[order]).
 * The device must not discard.  Called with the simulated si->lock held.
 */
#include "sim.h"
#include "builtin612.h"

#define BI_CLUSTER	SA_CLUSTER_SLOTS

/* list_move_tail() to @list for @order, with the counters. */
static void bi_move(struct swapalloc_dev *dev, struct swapalloc_cluster *ci,
		    unsigned int list, unsigned int order)
{
	(*swapalloc_list_counter(dev, ci->list, ci->order))--;
	ci->list = list;
	ci->order = order;
	(*swapalloc_list_counter(dev, list, order))++;
	list_move_tail(&ci->node, swapalloc_list_head(dev, list, order));
}

static unsigned long bi_start(struct swapalloc_dev *dev, struct swapalloc_cluster *ci)
{
	return (unsigned long)(ci - dev->clusters) * BI_CLUSTER;
}

/* cluster_reclaim_range(): the locks are dropped around each reclaim. */
static bool bi_reclaim_range(struct swapalloc_dev *dev, unsigned long start,
			     unsigned long end)
{
	unsigned long off;

	for (off = start; off < end; off++) {
		unsigned char v = swapalloc_env_map(&dev->env, off);

		if (!v)
			continue;
		if (v == SWAP_HAS_CACHE && swapalloc_env_reclaim(&dev->env, off) > 0)
			continue;
		break;
	}
	for (off = start; off < end; off++)
		if (swapalloc_env_map(&dev->env, off))
			return false;
	return true;
}

/* cluster_scan_range() */
static bool bi_scan_range(struct swapalloc_dev *dev, unsigned long start,
			  unsigned int nr)
{
	unsigned long off, end = start + nr;
	bool need_reclaim = false;

	for (off = start; off < end; off++) {
		unsigned char v = swapalloc_env_map(&dev->env, off);

		if (!v)
			continue;
		if (v == SWAP_HAS_CACHE) {
			if (!swapalloc_env_swap_full(&dev->env))
				return false;
			need_reclaim = true;
			continue;
		}
		return false;
	}
	return need_reclaim ? bi_reclaim_range(dev, start, end) : true;
}

/* cluster_alloc_range() */
static bool bi_alloc_range(struct swapalloc_dev *dev, struct swapalloc_cluster *ci,
			   unsigned long start, unsigned char usage, int order)
{
	unsigned int nr = 1U << order;

	if (!swapalloc_env_writable(&dev->env))
		return false;
	if (ci->list == SA_LIST_FREE) {
		if (nr < BI_CLUSTER)
			bi_move(dev, ci, SA_LIST_NONFULL, order);
		else
			ci->order = order;
	}
	if (!swapalloc_env_commit(&dev->env, start, order, usage))
		return false;
	ci->count += nr;
	if (ci->count == BI_CLUSTER)
		bi_move(dev, ci, SA_LIST_FULL, ci->order);
	return true;
}

/* alloc_swap_scan_cluster(): returns the next cursor, 0 for none. */
static unsigned long bi_scan_cluster(struct swapalloc_dev *dev, unsigned long offset,
				     unsigned long *found, int order, unsigned char usage)
{
	unsigned long start = offset & ~(unsigned long)(BI_CLUSTER - 1);
	unsigned long end = min_t(unsigned long, start + BI_CLUSTER, dev->max);
	unsigned int nr = 1U << order;
	struct swapalloc_cluster *ci = &dev->clusters[offset / BI_CLUSTER];

	if (end < nr)
		return 0;
	end -= nr;
	if (ci->count + nr > BI_CLUSTER)
		return 0;
	while (offset <= end) {
		if (bi_scan_range(dev, offset, nr)) {
			if (!bi_alloc_range(dev, ci, offset, usage, order))
				return 0;
			*found = offset;
			if (ci->count == BI_CLUSTER)
				return 0;
			offset += nr;
			break;
		}
		offset += nr;
	}
	return offset > end ? 0 : offset;
}

/* swap_reclaim_full_clusters(si, false): the oldest full cluster. */
static void bi_reclaim_full(struct swapalloc_dev *dev)
{
	struct swapalloc_cluster *ci;
	unsigned long off, end;
	int n;

	if (list_empty(&dev->full))
		return;
	ci = list_first_entry(&dev->full, struct swapalloc_cluster, node);
	list_move_tail(&ci->node, &dev->full);
	off = bi_start(dev, ci);
	end = min_t(unsigned long, off + BI_CLUSTER, dev->max);
	while (off < end) {
		if (swapalloc_env_map(&dev->env, off) == SWAP_HAS_CACHE) {
			n = swapalloc_env_reclaim(&dev->env, off);
			if (n) {
				off += abs(n);
				continue;
			}
		}
		off++;
	}
}

/*
 * 6.12's per-CPU next cluster, kept in the core's cursor with the core's
 * count of cursors per cluster (sa_set_cursor()), so that
 * swapalloc_check() holds of a device the builtin model allocated from.
 */
static void bi_set_next(struct swapalloc_dev *dev, struct swapalloc_cursor *cur,
			int order, unsigned long next)
{
	unsigned long old = cur->next[order];

	if (old && next && old / BI_CLUSTER == next / BI_CLUSTER) {
		cur->next[order] = next;
		return;
	}
	if (old)
		dev->clusters[old / BI_CLUSTER].cursors--;
	if (next)
		dev->clusters[next / BI_CLUSTER].cursors++;
	cur->next[order] = next;
}

unsigned long builtin612_alloc(struct swapalloc_dev *dev, int order, unsigned char usage)
{
	struct swapalloc_cursor *cur = this_cpu_ptr(dev->pcp);
	struct swapalloc_cluster *ci;
	unsigned long offset, found = 0;
	unsigned int frags = 0;
	int o;

	offset = cur->next[order];
	if (offset) {
		offset = bi_scan_cluster(dev, offset, &found, order, usage);
		if (found)
			goto done;
	}

	if (!list_empty(&dev->free)) {
		ci = list_first_entry(&dev->free, struct swapalloc_cluster, node);
		offset = bi_scan_cluster(dev, bi_start(dev, ci), &found, order, usage);
		goto done;
	}

	if (swapalloc_env_swap_full(&dev->env))
		bi_reclaim_full(dev);

	if (order < SA_CLUSTER_ORDER) {
		while (!list_empty(&dev->nonfull[order])) {
			ci = list_first_entry(&dev->nonfull[order], struct swapalloc_cluster,
					      node);
			bi_move(dev, ci, SA_LIST_FRAG, order);
			offset = bi_scan_cluster(dev, bi_start(dev, ci), &found, order, usage);
			frags++;
			if (found)
				break;
		}
		if (!found) {
			while (frags < dev->nr_frag[order]) {
				ci = list_first_entry(&dev->frag[order],
						      struct swapalloc_cluster, node);
				list_move_tail(&ci->node, &dev->frag[order]);
				offset = bi_scan_cluster(dev, bi_start(dev, ci), &found,
							 order, usage);
				frags++;
				if (found)
					break;
			}
		}
	}
	if (found || order)
		goto done;

	/* Order 0 steals from higher orders, frag then nonfull. */
	for (o = 1; o < SA_NR_ORDERS; o++) {
		static const unsigned int lists[] = { SA_LIST_FRAG, SA_LIST_NONFULL };
		unsigned int l;

		for (l = 0; l < ARRAY_SIZE(lists); l++) {
			struct list_head *head = swapalloc_list_head(dev, lists[l], o);

			/*
			 * 6.12 loops while the list is not empty; a cluster
			 * that fails (a reclaim race) would be retried
			 * forever, so stop after one pass.
			 */
			unsigned int n = *swapalloc_list_counter(dev, lists[l], o);

			while (n-- && !list_empty(head)) {
				ci = list_first_entry(head, struct swapalloc_cluster, node);
				offset = bi_scan_cluster(dev, bi_start(dev, ci), &found, 0,
							 usage);
				if (found)
					goto done;
				list_move_tail(&ci->node, head);
			}
		}
	}
done:
	bi_set_next(dev, cur, order, offset);
	return found;
}
