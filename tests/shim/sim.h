/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A simulated swap device driving the swapalloc core, for the unit tests,
 * the model test, the fuzzer and bench/swapsim.
 *
 * Every sim_*() function that calls into the core takes the simulated
 * si->lock around the call, as the kernel's callers do; the swap map
 * changes they make are the ones mm/swapfile.c makes at the same point:
 * sim_free() is swap_entry_range_free() (the final free of a range within
 * one cluster, which calls ->free()), sim_set_map() a change of count or
 * SWAP_HAS_CACHE that frees nothing, sim_cache_*() the swap cache.
 */
#ifndef _SWAPALLOC_SIM_H
#define _SWAPALLOC_SIM_H

#include <swapalloc/core.h>
#include <swapalloc_env.h>

struct sim {
	struct sim_dev sd;
	struct swapalloc_dev dev;
};

/*
 * Set up a device of @max slots (slot 0 is the header, SWAP_MAP_BAD) and
 * the core for it; the core's lists are built by sim_bind(), after the
 * caller has marked bad slots or filled the map.
 */
int sim_init(struct sim *s, unsigned long max, enum swapalloc_policy policy,
	     bool discard);
void sim_destroy(struct sim *s);
void sim_mark_bad(struct sim *s, unsigned long offset);
/* Mark slots in use before sim_bind(), as a device bound while in use. */
void sim_prefill(struct sim *s, unsigned long offset, unsigned long nr,
		 unsigned char usage);
void sim_bind(struct sim *s);

void sim_lock(struct sim_dev *sd);
void sim_unlock(struct sim_dev *sd);
static inline void sim_set_cpu(int cpu)
{
	shim_cpu = shim_check_cpu(cpu);
}

/* The core's entry points, each under the simulated lock. */
unsigned long sim_alloc(struct sim *s, int order, unsigned char usage);
/*
 * swapalloc_alloc_fast() and swapalloc_alloc_fast_done() without the lock,
 * the lock once for swapalloc_alloc_fast_after() when asked, then the
 * kernel's accounting (sim_account_fast()): what ->alloc_fast() and
 * get_swap_pages() do.
 */
int sim_alloc_fast(struct sim *s, int order, unsigned char usage, int nr,
		   swp_entry_t *slots);
void sim_reclaim_full(struct sim *s, bool force);
bool sim_discard_one(struct sim *s);
/* main.c's discard and reclaim work items. */
void sim_discard_work(struct sim *s);
void sim_reclaim_work(struct sim *s);
/* Unbind and bind again: quiesce, finish discards, rebuild from the map. */
void sim_rebind(struct sim *s);

/* swap_entry_range_free(): @nr in-use slots within one cluster go to 0. */
void sim_free(struct sim *s, unsigned long offset, unsigned int nr);
bool sim_free_fast(struct sim *s, unsigned long offset, unsigned int nr);
/* Change the map value of in-use slots (count or cache changes). */
void sim_set_map(struct sim *s, unsigned long offset, unsigned int nr,
		 unsigned char val);

/* The swap cache: folios of 1 << @order slots at naturally aligned @base. */
void sim_cache_add(struct sim *s, unsigned long base, int order, bool busy);
void sim_cache_del(struct sim *s, unsigned long base);
void sim_cache_set_busy(struct sim *s, unsigned long base, bool busy);
/* Split the folio caching @offset into order-0 folios. */
void sim_cache_split(struct sim *s, unsigned long offset);
/* First slot of the folio caching @offset, or -1. */
long sim_cache_folio(struct sim *s, unsigned long offset);

/*
 * swapalloc_check() under the lock, then the environment's own
 * accounting: inuse equals the slots in use, held slots are exactly those
 * of discard clusters, cached slots have SWAP_HAS_CACHE, no violation was
 * recorded.  0 or -EUCLEAN with the reason in @buf.
 */
int sim_check(struct sim *s, char *buf, size_t len);

/* Slots of a cluster that are past the end of the device. */
unsigned long sim_past_end(struct sim *s, unsigned int cluster);

#endif /* _SWAPALLOC_SIM_H */
