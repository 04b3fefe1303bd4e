// SPDX-License-Identifier: GPL-2.0
/*
 * swapsim's oracle build (make -C tests/unit swapsim-oracle): the core,
 * unmodified, plus one helper that no kernel path has, an order-0
 * allocation of a given free slot.  swapsim built with SWAPSIM_ORACLE
 * uses it to put each 4K page of the test's 64K area back in the slot it
 * left at swap-in (antifrag), bypassing the slots cache: what an
 * allocator told the folio's old offset, or its neighbours' swap entries,
 * could do.  Not a policy: an estimate of what such a hint would be worth.
 */
#include "../module/core.c"

unsigned long swapsim_oracle_alloc_at(struct swapalloc_dev *dev, unsigned long off,
				      unsigned char usage);

unsigned long swapsim_oracle_alloc_at(struct swapalloc_dev *dev, unsigned long off,
				      unsigned char usage)
{
	struct swapalloc_cluster *ci;

	if (!off || off >= dev->max)
		return 0;
	ci = sa_cluster(dev, off);
	/* Only holes of higher orders' clusters: the page's own 64K block. */
	if (ci->list == SA_LIST_FREE || ci->list == SA_LIST_DISCARD || !ci->order)
		return 0;
	if (swapalloc_env_map(&dev->env, off))
		return 0;
	if (!swapalloc_env_commit(&dev->env, off, 0, usage))
		return 0;
	sa_account_alloc(dev, ci, 0);
	return off;
}
