/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace environment of the swapalloc core: the simulated swap device.
 * Each function keeps the contract of its kernel version in
 * module/kenv/swapalloc_env.h and of the swap_alloc_*() helper behind it
 * (patches/0007), and checks that the core keeps its side: the simulated
 * si->lock is held on every call, ranges are aligned and within one
 * cluster, held slots were free, released ones held.  A broken rule is a
 * "violation": counted in sim_dev::violations and warned about.
 */
#ifndef _SWAPALLOC_ENV_H
#define _SWAPALLOC_ENV_H

#include <swapalloc_env_types.h>

#define SIM_CLUSTER_SLOTS	BIT(SWAPALLOC_MAX_ORDER)
/*
 * Most map reads in one hold of the lock: the core's batch of 64 clusters
 * and a quarter (rebuild and check let go after each batch, a forced
 * reclaim after each cluster), so a pass over more than 80 clusters that
 * never lets go of the lock is a violation.
 */
#define SIM_HELD_READS_MAX	(80 * SIM_CLUSTER_SLOTS)

__printf(2, 3) void sim_violation(struct sim_dev *sd, const char *fmt, ...);
int sim_env_reclaim(struct sim_dev *sd, unsigned long offset);
bool sim_cluster_is_free(struct sim_dev *sd, unsigned long offset);
void sim_env_relax(struct sim_dev *sd);
void sim_env_discard(struct sim_dev *sd, unsigned long offset, unsigned long nr);

static inline void sim_must_hold(struct sim_dev *sd, const char *what)
{
	if (!sd->locked)
		sim_violation(sd, "%s called without the device lock", what);
}

/* swap_alloc_range_ok(): inside the device and within one cluster. */
static inline bool sim_range_ok(struct sim_dev *sd, unsigned long offset,
				unsigned long nr)
{
	return nr && offset + nr <= sd->max &&
	       offset / SIM_CLUSTER_SLOTS == (offset + nr - 1) / SIM_CLUSTER_SLOTS;
}

/* ci->lock of the cluster of @offset: see sim_dev::cluster_locked. */
static inline void sim_lock_cluster(struct sim_dev *sd, unsigned long offset)
{
	unsigned long c = offset / SIM_CLUSTER_SLOTS;

	if (c >= sd->nr_clusters) {
		sim_violation(sd, "cluster lock of slot %lu, max %lu", offset, sd->max);
		return;
	}
#ifdef SIM_THREADS
	pthread_mutex_lock(&sd->cluster_mutex[c]);
#endif
	if (sd->cluster_locked[c])
		sim_violation(sd, "cluster lock %lu taken twice (self-deadlock)", c);
	sd->cluster_locked[c] = 1;
}

static inline void sim_unlock_cluster(struct sim_dev *sd, unsigned long offset)
{
	unsigned long c = offset / SIM_CLUSTER_SLOTS;

	if (c >= sd->nr_clusters)
		return;
	if (!sd->cluster_locked[c])
		sim_violation(sd, "cluster lock %lu released but not held", c);
	sd->cluster_locked[c] = 0;
#ifdef SIM_THREADS
	pthread_mutex_unlock(&sd->cluster_mutex[c]);
#endif
}

static inline unsigned char swapalloc_env_map(struct swapalloc_env *env,
					      unsigned long offset)
{
	struct sim_dev *sd = env->sim;

	sim_must_hold(sd, "swapalloc_env_map()");
	if (offset >= sd->max) {
		sim_violation(sd, "map read of slot %lu, max %lu", offset, sd->max);
		return SWAP_MAP_BAD;
	}
	sd->cnt.map_reads++;
	if (++sd->held_reads == SIM_HELD_READS_MAX + 1)
		sim_violation(sd, "%lu map reads without letting go of the lock",
			      sd->held_reads);
	/*
	 * READ_ONCE() in the kernel: frees without the lock clear bytes
	 * under the cluster lock alone, and the commit checks again under it.
	 */
	return __atomic_load_n(&sd->swap_map[offset], __ATOMIC_RELAXED);
}

/* swap_alloc_commit() */
static inline bool swapalloc_env_commit(struct swapalloc_env *env,
					unsigned long offset, int order,
					unsigned char usage)
{
	struct sim_dev *sd = env->sim;
	unsigned long nr, i;

	sim_must_hold(sd, "swapalloc_env_commit()");
	sd->cnt.commits++;
	if (order < 0 || order > SWAPALLOC_MAX_ORDER) {
		sim_violation(sd, "commit of order %d", order);
		goto fail;
	}
	nr = 1UL << order;
	if (WARN_ON_ONCE(!IS_ALIGNED(offset, nr) || !offset ||
			 !sim_range_ok(sd, offset, nr))) {
		sim_violation(sd, "commit of %lu order %d: unaligned, 0 or across clusters",
			      offset, order);
		goto fail;
	}
	if (!usage || usage == SWAP_MAP_BAD)
		sim_violation(sd, "commit with usage %#x", usage);
	if (!sd->writable)
		goto fail;
	if (sd->fail_commit_at && sd->cnt.commits == sd->fail_commit_at) {
		sd->cnt.injected++;
		if (sim_cluster_is_free(sd, offset))
			sd->cnt.injected_free++;
		goto fail;
	}
	/* As swap_alloc_commit(): the map under the cluster lock. */
	sim_lock_cluster(sd, offset);
	for (i = 0; i < nr; i++)
		if (sd->swap_map[offset + i])
			break;
	if (i == nr)
		memset(sd->swap_map + offset, usage, nr);
	sim_unlock_cluster(sd, offset);
	if (i < nr)
		goto fail;
	sim_inuse_add(sd, nr);
	sd->cnt.committed += nr;
	return true;
fail:
	sd->cnt.commit_fails++;
	return false;
}

/* The swap entry of slot @offset of the device. */
static inline swp_entry_t swapalloc_env_slot(struct swapalloc_env *env,
					     unsigned long offset)
{
	return (swp_entry_t){ .val = offset };
}

/*
 * swap_alloc_commit_batch(): every free aligned range of [@start, @end)
 * is committed with swapalloc_env_commit(), so it is checked, counted and
 * can be made to fail the same way.
 */
static inline int swapalloc_env_commit_batch(struct swapalloc_env *env,
					     unsigned long start, unsigned long end,
					     int order, unsigned char usage,
					     int nr, swp_entry_t *slots)
{
	struct sim_dev *sd = env->sim;
	unsigned long size = 1UL << order, off, i;
	int n = 0;

	sim_must_hold(sd, "swapalloc_env_commit_batch()");
	sd->cnt.batches++;
	if (!start || end <= start || !IS_ALIGNED(start, size) ||
	    !sim_range_ok(sd, start, end - start)) {
		sim_violation(sd, "commit_batch of %lu-%lu order %d: unaligned, 0 or across clusters",
			      start, end, order);
		return 0;
	}
	/* As the kernel's: nothing is tried on a device being swapped off. */
	if (!sd->writable)
		return 0;
	/*
	 * The kernel reads under the cluster lock; swapalloc_env_commit()
	 * checks again under it.  Atomic, as READ_ONCE() in
	 * swapalloc_env_map(), for frees that come without the lock.
	 */
	for (off = start; off + size <= end && n < nr; off += size) {
		for (i = 0; i < size; i++)
			if (__atomic_load_n(&sd->swap_map[off + i], __ATOMIC_RELAXED))
				break;
		sd->cnt.map_reads += i < size ? i + 1 : size;
		if (i < size)
			continue;
		if (!swapalloc_env_commit(env, off, order, usage))
			break;
		slots[n++] = swapalloc_env_slot(env, off);
	}
	return n;
}

static inline bool swapalloc_env_writable(struct swapalloc_env *env)
{
	return env->sim->writable;
}

static inline void swapalloc_env_lock_cluster(struct swapalloc_env *env,
					      unsigned long offset)
{
	/*
	 * The kernel's locks are in si->cluster_info, which only devices
	 * that can be ->fast are sure to have (a rotational one has none).
	 */
	if (!env->sim->dev->fast)
		sim_violation(env->sim, "cluster lock of slot %lu on a device without ->fast",
			      offset);
	sim_lock_cluster(env->sim, offset);
}

static inline void swapalloc_env_unlock_cluster(struct swapalloc_env *env,
						unsigned long offset)
{
	sim_unlock_cluster(env->sim, offset);
}

/* swapalloc_env_writable() without the device lock (READ_ONCE()s). */
static inline bool swapalloc_env_live(struct swapalloc_env *env)
{
	return __atomic_load_n(&env->sim->writable, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&env->sim->unbound, __ATOMIC_RELAXED);
}

/*
 * The fast path's commit: swap_alloc_commit_batch() under the cluster
 * lock the caller holds, without the device lock and without the
 * accounting (the kernel's caller of ->alloc_fast() does that later,
 * without the device lock too: sim_account_fast()).  Its counters are atomic, as it runs beside everything else.
 */
static inline int swapalloc_env_commit_fast(struct swapalloc_env *env,
					    unsigned long start, unsigned long end,
					    int order, unsigned char usage,
					    int nr, swp_entry_t *slots)
{
	struct sim_dev *sd = env->sim;
	unsigned long size = 1UL << order, off, i;
	int n = 0;

	if (!start || end <= start || !IS_ALIGNED(start, size) ||
	    !sim_range_ok(sd, start, end - start)) {
		sim_violation(sd, "commit_fast of %lu-%lu order %d: unaligned, 0 or across clusters",
			      start, end, order);
		return 0;
	}
	if (!sd->cluster_locked[start / SIM_CLUSTER_SLOTS])
		sim_violation(sd, "commit_fast of %lu-%lu without the cluster lock",
			      start, end);
	if (!usage || usage == SWAP_MAP_BAD)
		sim_violation(sd, "commit_fast with usage %#x", usage);
	__atomic_fetch_add(&sd->cnt.fast_batches, 1, __ATOMIC_RELAXED);
	if (!swapalloc_env_live(env))
		return 0;
	for (off = start; off + size <= end && n < nr; off += size) {
		for (i = 0; i < size; i++)
			if (sd->swap_map[off + i])
				break;
		if (i < size)
			continue;
		memset(sd->swap_map + off, usage, size);
		slots[n++] = swapalloc_env_slot(env, off);
	}
	__atomic_fetch_add(&sd->cnt.fast_committed, (unsigned long)n << order,
			   __ATOMIC_RELAXED);
	return n;
}

/*
 * What the kernel's get_swap_pages() does with the @n entries of order
 * @order that ->alloc_fast() returned (swap_alloc_account_fast()): add
 * them to inuse with an atomic add, without the device lock.  The
 * simulator checks, as a CONFIG_DEBUG_VM kernel does, that each was
 * committed; its check of the lists (sim_check()) that every slot the
 * fast path committed was accounted once.
 */
static inline void sim_account_fast(struct swapalloc_env *env, int order,
				    int n, const swp_entry_t *slots)
{
	struct sim_dev *sd = env->sim;
	unsigned long size = 1UL << order, off, i;
	int k;

	if (n <= 0)
		return;
#ifndef SIM_THREADS
	/* lockdep_assert_not_held(); with threads ->locked is another's. */
	if (sd->locked)
		sim_violation(sd, "fast path accounted with the device lock held");
#endif
	for (k = 0; k < n; k++) {
		off = swp_offset(slots[k]);
		if (!sim_range_ok(sd, off, size)) {
			sim_violation(sd, "account of %lu+%lu: bad range", off, size);
			return;
		}
		for (i = off; i < off + size; i++)
			if (!sd->swap_map[i] || sd->swap_map[i] == SWAP_MAP_BAD)
				sim_violation(sd, "account of slot %lu, not committed (%#x)",
					      i, sd->swap_map[i]);
	}
	sim_inuse_add(sd, (unsigned long)n * size);
	__atomic_fetch_add(&sd->cnt.accounted, (unsigned long)n * size,
			   __ATOMIC_RELAXED);
	__atomic_fetch_add(&sd->cnt.accounts, 1, __ATOMIC_RELAXED);
}

/* vm_swap_full(): less than half of swap free, unless forced either way. */
static inline bool swapalloc_env_swap_full(struct swapalloc_env *env)
{
	struct sim_dev *sd = env->sim;

	if (sd->full != SIM_FULL_AUTO)
		return sd->full == SIM_FULL_ON;
	return sim_inuse(sd) * 2 > sd->pages;
}

static inline unsigned long swapalloc_env_free_slots(struct swapalloc_env *env)
{
	/* Held slots (discard) are not in use, but cannot be allocated. */
	/* Read without the lock by swapalloc_alloc_fast_done(): atomics. */
	return env->sim->pages - sim_inuse(env->sim) -
	       (__atomic_load_n(&env->sim->cnt.held, __ATOMIC_RELAXED) -
		__atomic_load_n(&env->sim->cnt.released, __ATOMIC_RELAXED));
}

/*
 * swap_alloc_reclaim() with the lock dropped around it: the folio caching
 * @offset is freed whole, through swapalloc_free(), if every one of its
 * slots is SWAP_HAS_CACHE only and it is not busy.  Returns the slots
 * freed, minus the folio's size if it was not reclaimable, 0 if no folio
 * caches @offset.  See sim_env_reclaim() in sim.c.
 */
static inline int swapalloc_env_reclaim(struct swapalloc_env *env,
					unsigned long offset)
{
	return sim_env_reclaim(env->sim, offset);
}

/*
 * The kernel drops the lock and reschedules: other CPUs may allocate and
 * free meanwhile, so the hook runs with the lock dropped.
 */
static inline void swapalloc_env_relax(struct swapalloc_env *env)
{
	sim_env_relax(env->sim);
}

/*
 * swap_alloc_hold(): free slots become SWAP_MAP_BAD while discarded.  The
 * kernel refuses a bad range or a slot in use, changing nothing; the core
 * never asks for either, so here both are violations too.
 */
static inline bool swapalloc_env_hold(struct swapalloc_env *env,
				      unsigned long offset, unsigned long nr)
{
	struct sim_dev *sd = env->sim;
	unsigned long i;

	sim_must_hold(sd, "swapalloc_env_hold()");
	sd->cnt.holds++;
	if (!sim_range_ok(sd, offset, nr)) {
		sim_violation(sd, "hold of %lu+%lu: bad range", offset, nr);
		return false;
	}
	for (i = 0; i < nr; i++) {
		if (sd->swap_map[offset + i]) {
			sim_violation(sd, "hold of slot %lu, in use (%#x)",
				      offset + i, sd->swap_map[offset + i]);
			return false;
		}
	}
	if (sd->fail_hold) {
		sd->cnt.injected++;
		return false;
	}
	sim_lock_cluster(sd, offset);
	memset(sd->swap_map + offset, SWAP_MAP_BAD, nr);
	sim_unlock_cluster(sd, offset);
	__atomic_fetch_add(&sd->cnt.held, nr, __ATOMIC_RELAXED);
	return true;
}

/* swap_alloc_release() */
static inline void swapalloc_env_release(struct swapalloc_env *env,
					 unsigned long offset, unsigned long nr)
{
	struct sim_dev *sd = env->sim;
	unsigned long i;

	sim_must_hold(sd, "swapalloc_env_release()");
	sd->cnt.releases++;
	if (WARN_ON_ONCE(!sim_range_ok(sd, offset, nr))) {
		sim_violation(sd, "release of %lu+%lu: bad range", offset, nr);
		return;
	}
	for (i = 0; i < nr; i++)
		if (WARN_ON_ONCE(sd->swap_map[offset + i] != SWAP_MAP_BAD))
			sim_violation(sd, "release of slot %lu, not held (%#x)",
				      offset + i, sd->swap_map[offset + i]);
	sim_lock_cluster(sd, offset);
	memset(sd->swap_map + offset, 0, nr);
	sim_unlock_cluster(sd, offset);
	__atomic_fetch_add(&sd->cnt.released, nr, __ATOMIC_RELAXED);
}

/* swap_alloc_discard() with the lock dropped: counts, runs the hook. */
static inline void swapalloc_env_discard(struct swapalloc_env *env,
					 unsigned long offset, unsigned long nr)
{
	sim_env_discard(env->sim, offset, nr);
}

/*
 * The kernel sleeps with the lock dropped until another discard finishes:
 * here the lock is dropped (the hook runs, SIM_EV_RELAX) and the wait counted.
 */
static inline void swapalloc_env_wait_discard(struct swapalloc_env *env,
					      unsigned int *done)
{
	env->sim->cnt.discard_waits++;
	sim_env_relax(env->sim);
}

static inline void swapalloc_env_discard_done(struct swapalloc_env *env,
					      unsigned int *done)
{
}

/* schedule_work(): counted; the tests run the work themselves. */
static inline void swapalloc_env_kick_discard(struct swapalloc_env *env)
{
	env->sim->cnt.kick_discard++;
}

static inline void swapalloc_env_kick_reclaim(struct swapalloc_env *env)
{
	env->sim->cnt.kick_reclaim++;
}

#endif /* _SWAPALLOC_ENV_H */
