// SPDX-License-Identifier: GPL-2.0
/* swapsim: the bound no placement can beat (perfect compaction). */
#include "swapsim.h"

void bound_init(struct bound *b, struct sim_dev *sd)
{
	unsigned long blk, i, nr, bad;
	int o;

	for (o = 1; o < SA_NR_ORDERS; o++) {
		nr = 1UL << o;
		b->clean[o] = 0;
		b->spoiled[o] = 0;
		for (blk = 0; blk < sd->max; blk += nr) {
			for (i = blk, bad = 0; i < blk + nr; i++)
				bad += i >= sd->max || sd->bad[i];
			if (!bad)
				b->clean[o]++;
			else
				b->spoiled[o] += nr - bad;
		}
	}
}

/* Could perfect compaction serve 1 << @order slots with @inuse live? */
bool bound_servable(const struct bound *b, unsigned long pages, unsigned long inuse,
		    int order, bool packed)
{
	unsigned long nr = 1UL << order, spill;

	if (!order)
		return inuse < pages;
	if (!packed)
		return pages - inuse >= nr;
	spill = inuse > b->spoiled[order] ? inuse - b->spoiled[order] : 0;
	return b->clean[order] * nr >= spill + nr;
}
