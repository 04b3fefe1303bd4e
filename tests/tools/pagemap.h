/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pagemap.h - how many pages of a range are in swap, read from
 * /proc/self/pagemap (bit 62 of a page's entry: its PTE holds a swap
 * entry).  Shared by swapfill and swapsteal.
 */
#ifndef SWAPALLOC_TOOLS_PAGEMAP_H
#define SWAPALLOC_TOOLS_PAGEMAP_H

#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>

#define PM_SWAPPED		(1ULL << 62)

/*
 * Pages of [p, p + npages) whose PTE holds a swap entry, pm an open
 * /proc/self/pagemap and psz the page size; -1 if pagemap cannot be read.
 */
static inline ssize_t pagemap_swapped(int pm, const void *p, size_t npages, long psz)
{
	uint64_t buf[512];
	size_t i = 0, n = 0, j, want;
	ssize_t got;

	while (i < npages) {
		want = npages - i < 512 ? npages - i : 512;
		got = pread(pm, buf, want * 8, ((uintptr_t)p / psz + i) * 8);
		if (got <= 0)
			return -1;
		for (j = 0; j < (size_t)got / 8; j++)
			n += !!(buf[j] & PM_SWAPPED);
		i += got / 8;
	}
	return n;
}

#endif
