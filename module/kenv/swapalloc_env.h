/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel environment of the swapalloc core: how it reads the swap map and
 * commits, reclaims, holds and discards slots, through the helpers of the
 * swap_alloc patch series.  Everything is called with si->lock held, but
 * what the fast path calls (swapalloc_env_lock_cluster() to
 * swapalloc_env_commit_fast()).
 */
#ifndef _SWAPALLOC_ENV_H
#define _SWAPALLOC_ENV_H

#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/spinlock.h>
#include <linux/swapops.h>
#include <linux/wait_bit.h>
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

/*
 * Hand out the first @nr free aligned ranges of [@start, @end), within one
 * cluster, under one cluster lock; their entries go to @slots.
 */
static inline int swapalloc_env_commit_batch(struct swapalloc_env *env,
					     unsigned long start, unsigned long end,
					     int order, unsigned char usage,
					     int nr, swp_entry_t *slots)
{
	return swap_alloc_commit_batch(env->si, start, end, order, usage, nr, slots);
}

/* The swap entry of slot @offset of the device. */
static inline swp_entry_t swapalloc_env_slot(struct swapalloc_env *env,
					     unsigned long offset)
{
	return swp_entry(env->si->type, offset);
}

/*
 * May this device still be allocated from?  Not once swapoff has cleared
 * SWP_WRITEOK, nor once an unbind has begun: swap_alloc_commit() refuses
 * both, and an unbind can begin while an allocation has dropped si->lock
 * (a swap cache reclaim), so the allocation must look again afterwards.
 */
static inline bool swapalloc_env_writable(struct swapalloc_env *env)
{
	return (env->si->flags & SWP_WRITEOK) &&
	       env->si->alloc_state == SWAP_ALLOC_BOUND;
}

/*
 * The fast path (swapalloc_alloc_fast(), module/core.c) runs without
 * si->lock, under the lock of one cluster: the one 6.12 keeps in
 * si->cluster_info, which guards that cluster's swap_map bytes, so that
 * frees and swap count changes, which take it too, are excluded.  Per-CPU
 * devices, the only ones with owned clusters, always have cluster_info.
 */
static inline void swapalloc_env_lock_cluster(struct swapalloc_env *env,
					      unsigned long offset)
{
	spin_lock(&env->si->cluster_info[offset >> SWAPALLOC_MAX_ORDER].lock);
}

static inline void swapalloc_env_unlock_cluster(struct swapalloc_env *env,
						unsigned long offset)
{
	spin_unlock(&env->si->cluster_info[offset >> SWAPALLOC_MAX_ORDER].lock);
}

/*
 * swapalloc_env_writable() without si->lock, for the fast path under the
 * cluster lock: swapoff and the unbind change both, then wait for every
 * fast path in flight with synchronize_rcu().
 */
static inline bool swapalloc_env_live(struct swapalloc_env *env)
{
	return (READ_ONCE(env->si->flags) & SWP_WRITEOK) &&
	       READ_ONCE(env->si->alloc_state) == SWAP_ALLOC_BOUND;
}

/*
 * The commit of the fast path: swap_alloc_commit_batch() under the cluster
 * lock the caller holds (swapalloc_env_lock_cluster()), without si->lock
 * and without the accounting: get_swap_pages() accounts what ->alloc_fast()
 * returns, which must be everything committed here.  Commits nothing once
 * swapoff or an unbind has begun; both wait for the fast path with
 * synchronize_rcu().
 */
static inline int swapalloc_env_commit_fast(struct swapalloc_env *env,
					    unsigned long start, unsigned long end,
					    int order, unsigned char usage,
					    int nr, swp_entry_t *slots)
{
	return swap_alloc_commit_fast(env->si, start, end, order, usage, nr,
				      slots);
}

static inline bool swapalloc_env_swap_full(struct swapalloc_env *env)
{
	return swap_alloc_swap_full();
}

/*
 * Slots that can still be allocated: neither in use nor held by the module
 * while they are discarded (held slots are not in inuse_pages).
 */
static inline unsigned long swapalloc_env_free_slots(struct swapalloc_env *env)
{
	return env->si->pages - atomic_long_read(&env->si->inuse_pages) -
	       READ_ONCE(env->si->alloc_held);
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

/*
 * Let other lock holders in and reschedule, between batches of work that
 * grows with the device.  Keeps the longest hold since swapalloc_env_hold_start().
 */
static inline void swapalloc_env_relax(struct swapalloc_env *env)
	__must_hold(&env->si->lock)
{
	u64 now = ktime_get_ns();

	env->longest_hold = max(env->longest_hold, now - env->hold_start);
	spin_unlock(&env->si->lock);
	cond_resched();
	spin_lock(&env->si->lock);
	env->hold_start = ktime_get_ns();
}

/* Start measuring lock holds; the lock was just taken. */
static inline void swapalloc_env_hold_start(struct swapalloc_env *env)
{
	env->longest_hold = 0;
	env->hold_start = ktime_get_ns();
}

/* The longest hold since swapalloc_env_hold_start(), up to now, in ns. */
static inline u64 swapalloc_env_hold_end(struct swapalloc_env *env)
{
	return max(env->longest_hold, ktime_get_ns() - env->hold_start);
}

static inline bool swapalloc_env_hold(struct swapalloc_env *env,
				      unsigned long offset, unsigned long nr)
{
	return swap_alloc_hold(env->si, offset, nr);
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
	env->hold_start = ktime_get_ns();
}

void swapalloc_wait_discard_done(unsigned int *done, unsigned int seen);

/*
 * An allocation whose only free space is being discarded by others: sleep,
 * si->lock dropped, until a discard finishes (*@done changes) or 100 ms.
 */
static inline void swapalloc_env_wait_discard(struct swapalloc_env *env,
					      unsigned int *done)
	__must_hold(&env->si->lock)
{
	unsigned int seen = *done;

	spin_unlock(&env->si->lock);
	swapalloc_wait_discard_done(done, seen);
	spin_lock(&env->si->lock);
	env->hold_start = ktime_get_ns();
}

/*
 * A discard finished, *@done advanced under si->lock: wake the waiters.
 * The barrier orders that store before wake_up_var()'s lockless look at
 * the wait queue (pairs with prepare_to_wait_event()'s), or a waiter that
 * has just queued itself and still read the old count sleeps its timeout.
 */
static inline void swapalloc_env_discard_done(struct swapalloc_env *env,
					      unsigned int *done)
{
	smp_mb();	/* the count before the look at the wait queue */
	wake_up_var(done);
}

/*
 * Discard and reclaim free space allocations may be waiting for, so they
 * run on swapalloc_wq, a WQ_MEM_RECLAIM workqueue with a rescuer: under
 * memory pressure system_wq may get no worker.
 */
extern struct workqueue_struct *swapalloc_wq;

static inline void swapalloc_env_kick_discard(struct swapalloc_env *env)
{
	queue_work(swapalloc_wq, &env->discard_work);
}

static inline void swapalloc_env_kick_reclaim(struct swapalloc_env *env)
{
	queue_work(swapalloc_wq, &env->reclaim_work);
}

#endif /* _SWAPALLOC_ENV_H */
