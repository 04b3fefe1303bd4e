/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel environment of the swapalloc core: how it reads the swap map and
 * commits, reclaims, holds and discards slots, through the helpers of the
 * swap_alloc patch series.  Everything is called with si->lock held.
 */
#ifndef _SWAPALLOC_ENV_H
#define _SWAPALLOC_ENV_H

#include <linux/spinlock.h>
#include <linux/swap_alloc.h>

static inline unsigned char swapalloc_env_map(struct swapalloc_env *env,
					      unsigned long offset)
{
	return READ_ONCE(env->si->swap_map[offset]);
}

static inline bool swapalloc_env_commit(struct swapalloc_env *env,
					unsigned long offset, int order,
					unsigned char usage)
{
	return swap_alloc_commit(env->si, offset, order, usage);
}

static inline bool swapalloc_env_writable(struct swapalloc_env *env)
{
	return env->si->flags & SWP_WRITEOK;
}

static inline bool swapalloc_env_swap_full(struct swapalloc_env *env)
{
	return swap_alloc_swap_full();
}

static inline unsigned long swapalloc_env_free_slots(struct swapalloc_env *env)
{
	return env->si->pages - READ_ONCE(env->si->inuse_pages);
}

/* Drops si->lock around the reclaim, as cluster_reclaim_range() does. */
static inline int swapalloc_env_reclaim(struct swapalloc_env *env,
					unsigned long offset)
	__must_hold(&env->si->lock)
{
	int ret;

	spin_unlock(&env->si->lock);
	ret = swap_alloc_reclaim(env->si, offset);
	spin_lock(&env->si->lock);
	return ret;
}

/* Let other lock holders in and reschedule: long reclaim passes only. */
static inline void swapalloc_env_relax(struct swapalloc_env *env)
	__must_hold(&env->si->lock)
{
	spin_unlock(&env->si->lock);
	cond_resched();
	spin_lock(&env->si->lock);
}

static inline void swapalloc_env_hold(struct swapalloc_env *env,
				      unsigned long offset, unsigned long nr)
{
	swap_alloc_hold(env->si, offset, nr);
}

static inline void swapalloc_env_release(struct swapalloc_env *env,
					 unsigned long offset, unsigned long nr)
{
	swap_alloc_release(env->si, offset, nr);
}

/* Only from the discard work or ->quiesce(): sleeps with si->lock dropped. */
static inline void swapalloc_env_discard(struct swapalloc_env *env,
					 unsigned long offset, unsigned long nr)
	__must_hold(&env->si->lock)
{
	spin_unlock(&env->si->lock);
	swap_alloc_discard(env->si, offset, nr);
	spin_lock(&env->si->lock);
}

static inline void swapalloc_env_kick_discard(struct swapalloc_env *env)
{
	schedule_work(&env->discard_work);
}

static inline void swapalloc_env_kick_reclaim(struct swapalloc_env *env)
{
	schedule_work(&env->reclaim_work);
}

#endif /* _SWAPALLOC_ENV_H */
