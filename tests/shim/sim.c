// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated swap device behind tests/shim/swapalloc_env.h, see sim.h.
 */
#include <stdarg.h>

#include "sim.h"

void sim_violation(struct sim_dev *sd, const char *fmt, ...)
{
	va_list ap;

	sd->violations++;
	if (sd->violations > 1)
		return;		/* keep the first */
	va_start(ap, fmt);
	vsnprintf(sd->violation, sizeof(sd->violation), fmt, ap);
	va_end(ap);
	if (!shim_quiet_warnings)
		fprintf(stderr, "sim: violation: %s\n", sd->violation);
}

/*
 * With SIM_THREADS the simulated lock is a real mutex too: a thread that
 * takes it twice deadlocks, as on the kernel's spinlock, instead of
 * recording a violation; every other rule stays.  Where the kernel lets
 * go of si->lock, other threads get in (sim_let_others_in()).
 */
#ifdef SIM_THREADS
#include <sched.h>
static inline void sim_let_others_in(void)
{
	sched_yield();
}
#else
static inline void sim_let_others_in(void)
{
}
#endif

void sim_lock(struct sim_dev *sd)
{
#ifdef SIM_THREADS
	pthread_mutex_lock(&sd->mutex);
#endif
	if (sd->locked)
		sim_violation(sd, "device lock taken twice (self-deadlock)");
	sd->locked = 1;
	sd->held_reads = 0;
}

void sim_unlock(struct sim_dev *sd)
{
	if (!sd->locked)
		sim_violation(sd, "device lock released but not held");
	sd->locked = 0;
#ifdef SIM_THREADS
	pthread_mutex_unlock(&sd->mutex);
#endif
}

int sim_init(struct sim *s, unsigned long max, enum swapalloc_policy policy,
	     bool discard)
{
	struct sim_dev *sd = &s->sd;
	int err;

	memset(s, 0, sizeof(*s));
	if (!max)
		return -EINVAL;
	sd->max = max;
	sd->swap_map = calloc(max, 1);
	sd->cache_base = calloc(max, sizeof(*sd->cache_base));
	sd->cache_order = calloc(max, 1);
	sd->cache_busy = calloc(max, sizeof(*sd->cache_busy));
	sd->bad = calloc(max, sizeof(*sd->bad));
	sd->nr_clusters = DIV_ROUND_UP(max, SIM_CLUSTER_SLOTS);
	sd->cluster_locked = calloc(sd->nr_clusters, sizeof(*sd->cluster_locked));
#ifdef SIM_THREADS
	sd->cluster_mutex = calloc(sd->nr_clusters, sizeof(*sd->cluster_mutex));
	if (!sd->cluster_mutex) {
		sim_destroy(s);
		return -ENOMEM;
	}
#endif
	if (!sd->swap_map || !sd->cache_base || !sd->cache_order ||
	    !sd->cache_busy || !sd->bad || !sd->cluster_locked) {
		sim_destroy(s);
		return -ENOMEM;
	}
#ifdef SIM_THREADS
	pthread_mutex_init(&sd->mutex, NULL);
	for (unsigned long c = 0; c < sd->nr_clusters; c++)
		pthread_mutex_init(&sd->cluster_mutex[c], NULL);
#endif
	sd->writable = true;
	sd->full = SIM_FULL_AUTO;
	sd->dev = &s->dev;
	sd->pages = max;
	sim_mark_bad(s, 0);		/* the header */

	s->dev.env.sim = sd;
	err = swapalloc_dev_init(&s->dev, max, policy, discard);
	if (err) {
		sim_destroy(s);
		return err;
	}
	return 0;
}

void sim_destroy(struct sim *s)
{
	struct sim_dev *sd = &s->sd;

	if (s->dev.env.sim)
		swapalloc_dev_destroy(&s->dev);
	free(sd->swap_map);
	free(sd->cache_base);
	free(sd->cache_order);
	free(sd->cache_busy);
	free(sd->bad);
	free(sd->cluster_locked);
#ifdef SIM_THREADS
	free(sd->cluster_mutex);
#endif
	memset(s, 0, sizeof(*s));
}

void sim_mark_bad(struct sim *s, unsigned long offset)
{
	struct sim_dev *sd = &s->sd;

	if (offset >= sd->max || sd->bad[offset])
		return;
	sd->bad[offset] = true;
	sd->swap_map[offset] = SWAP_MAP_BAD;
	sd->nr_bad++;
	sd->pages--;
}

void sim_prefill(struct sim *s, unsigned long offset, unsigned long nr,
		 unsigned char usage)
{
	struct sim_dev *sd = &s->sd;
	unsigned long i;

	for (i = offset; i < offset + nr && i < sd->max; i++) {
		if (sd->bad[i])
			continue;
		if (!sd->swap_map[i] && usage)
			sim_inuse_add(sd, 1);
		else if (sd->swap_map[i] && !usage)
			sim_inuse_add(sd, -1);
		sd->swap_map[i] = usage;
	}
}

void sim_bind(struct sim *s)
{
	sim_lock(&s->sd);
	swapalloc_dev_rebuild(&s->dev);
	sim_unlock(&s->sd);
}

unsigned long sim_alloc(struct sim *s, int order, unsigned char usage)
{
	unsigned long off;

	sim_lock(&s->sd);
	off = swapalloc_alloc(&s->dev, order, usage);
	sim_unlock(&s->sd);
	return off;
}

int sim_alloc_fast(struct sim *s, int order, unsigned char usage, int nr,
		   swp_entry_t *slots)
{
	int n = swapalloc_alloc_fast(&s->dev, order, usage, nr, slots);

	/* As main.c's ->alloc_fast(): the lock only when asked for. */
	if (swapalloc_alloc_fast_done(&s->dev, order, n, slots)) {
		sim_lock(&s->sd);
		swapalloc_alloc_fast_after(&s->dev);
		sim_unlock(&s->sd);
	}
	/* And as get_swap_pages() once it returns. */
	sim_account_fast(&s->dev.env, order, n, slots);
	return n;
}

void sim_reclaim_full(struct sim *s, bool force)
{
	sim_lock(&s->sd);
	swapalloc_reclaim_full(&s->dev, force);
	sim_unlock(&s->sd);
}

bool sim_discard_one(struct sim *s)
{
	bool ret;

	sim_lock(&s->sd);
	ret = swapalloc_discard_one(&s->dev);
	sim_unlock(&s->sd);
	return ret;
}

/* module/main.c: swapalloc_discard_work() */
void sim_discard_work(struct sim *s)
{
	sim_lock(&s->sd);
	while (swapalloc_discard_one(&s->dev))
		;
	sim_unlock(&s->sd);
}

/* module/main.c: swapalloc_reclaim_work() */
void sim_reclaim_work(struct sim *s)
{
	sim_lock(&s->sd);
	swapalloc_reclaim_background(&s->dev);
	sim_unlock(&s->sd);
}

/*
 * module/main.c's ->quiesce() and the patch's unbind, then ->bind() again:
 * no allocation is in flight, discards are finished, lists rebuilt.
 */
void sim_rebind(struct sim *s)
{
	sim_lock(&s->sd);
	__atomic_store_n(&s->sd.unbound, true, __ATOMIC_RELAXED);
	s->dev.quiescing = true;
	/*
	 * As swapalloc_quiesce(): every discard finished, those other threads
	 * have in flight with the lock dropped included.  A rebuild under one
	 * of them would put its cluster on a list that the discard then moves
	 * it off again.
	 */
	while (s->dev.nr_discard) {
		if (swapalloc_discard_one(&s->dev))
			continue;
#ifndef SIM_THREADS
		/* Only another thread can have a discard in flight. */
		sim_violation(&s->sd, "rebind inside a discard");
		break;
#endif
		s->sd.cnt.rebind_waits++;
		sim_unlock(&s->sd);
		sim_let_others_in();
		sim_lock(&s->sd);
	}
	swapalloc_dev_rebuild(&s->dev);
	s->dev.quiescing = false;
	__atomic_store_n(&s->sd.unbound, false, __ATOMIC_RELAXED);
	sim_unlock(&s->sd);
}

/* The final free, with the lock held: map, ->free(), then inuse. */
static void sim_final_free_locked(struct sim_dev *sd, unsigned long offset,
				  unsigned int nr)
{
	unsigned long i;

	/* swap_entry_range_free(): the map under the cluster lock, ->free() after. */
	sim_lock_cluster(sd, offset);
	for (i = offset; i < offset + nr; i++)
		sd->swap_map[i] = 0;
	sim_unlock_cluster(sd, offset);
	sd->cnt.frees++;
	sd->cnt.freed += nr;
	swapalloc_free(sd->dev, offset, nr);
	sim_inuse_add(sd, -(long)nr);
}

static bool sim_slots_in_use(struct sim_dev *sd, unsigned long offset,
			     unsigned int nr, const char *what)
{
	unsigned long i;

	if (!sim_range_ok(sd, offset, nr)) {
		sim_violation(sd, "%s of %lu+%u: not within one cluster", what,
			      offset, nr);
		return false;
	}
	for (i = offset; i < offset + nr; i++) {
		if (!sd->swap_map[i] || sd->swap_map[i] == SWAP_MAP_BAD) {
			sim_violation(sd, "%s of slot %lu, not in use (%#x)", what,
				      i, sd->swap_map[i]);
			return false;
		}
	}
	return true;
}

void sim_free(struct sim *s, unsigned long offset, unsigned int nr)
{
	struct sim_dev *sd = &s->sd;
	unsigned long i;

	sim_lock(sd);
	if (!sim_slots_in_use(sd, offset, nr, "free"))
		goto out;
	for (i = offset; i < offset + nr; i++) {
		if (sd->cache_base[i]) {
			sim_violation(sd, "free of slot %lu, still in the swap cache", i);
			goto out;
		}
	}
	sim_final_free_locked(sd, offset, nr);
out:
	sim_unlock(sd);
}

/*
 * The final free without the lock, as the patch's
 * swap_entry_range_free_fast() does on a device whose frees skip si->lock:
 * the map cleared and swapalloc_free_fast() told under the cluster lock,
 * then inuse.  The caller stands for rcu_read_lock() (the bind lock's read
 * side in test_threads.c); returns false, having done nothing, unless the
 * device is bound with ->free_fast.
 */
bool sim_free_fast(struct sim *s, unsigned long offset, unsigned int nr)
{
	struct sim_dev *sd = &s->sd;
	unsigned long i;

	if (!s->dev.free_fast || __atomic_load_n(&sd->unbound, __ATOMIC_RELAXED))
		return false;
	sim_lock_cluster(sd, offset);
	if (sim_slots_in_use(sd, offset, nr, "free")) {
		for (i = offset; i < offset + nr; i++)
			__atomic_store_n(&sd->swap_map[i], 0, __ATOMIC_RELAXED);
		swapalloc_free_fast(sd->dev, offset, nr);
	}
	sim_unlock_cluster(sd, offset);
	__atomic_fetch_add(&sd->cnt.fast_frees, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&sd->cnt.fast_freed, nr, __ATOMIC_RELAXED);
	sim_inuse_add(sd, -(long)nr);
	return true;
}

void sim_set_map(struct sim *s, unsigned long offset, unsigned int nr,
		 unsigned char val)
{
	struct sim_dev *sd = &s->sd;

	if (!val || val == SWAP_MAP_BAD) {
		sim_violation(sd, "%s(%#x): use sim_free()", __func__, val);
		return;
	}
	sim_lock(sd);
	if (sim_slots_in_use(sd, offset, nr, "set_map")) {
		sim_lock_cluster(sd, offset);
		memset(sd->swap_map + offset, val, nr);
		sim_unlock_cluster(sd, offset);
	}
	sim_unlock(sd);
}

void sim_cache_add(struct sim *s, unsigned long base, int order, bool busy)
{
	struct sim_dev *sd = &s->sd;
	unsigned long nr = 1UL << order, i;

	sim_lock(sd);
	if (!IS_ALIGNED(base, nr) || !sim_slots_in_use(sd, base, nr, "cache_add"))
		goto out;
	for (i = base; i < base + nr; i++) {
		if (sd->cache_base[i]) {
			sim_violation(sd, "slot %lu cached twice", i);
			goto out;
		}
	}
	sim_lock_cluster(sd, base);
	for (i = base; i < base + nr; i++) {
		sd->cache_base[i] = base + 1;
		sd->swap_map[i] |= SWAP_HAS_CACHE;
	}
	sim_unlock_cluster(sd, base);
	sd->cache_order[base] = order;
	sd->cache_busy[base] = busy;
	sd->cached += nr;
out:
	sim_unlock(sd);
}

long sim_cache_folio(struct sim *s, unsigned long offset)
{
	if (offset >= s->sd.max || !s->sd.cache_base[offset])
		return -1;
	return s->sd.cache_base[offset] - 1;
}

/* Remove a folio from the swap cache: SWAP_HAS_CACHE goes, maybe the slot. */
void sim_cache_del(struct sim *s, unsigned long base)
{
	struct sim_dev *sd = &s->sd;
	unsigned long nr, i;

	sim_lock(sd);
	if (sim_cache_folio(s, base) != (long)base) {
		sim_violation(sd, "cache_del of %lu: no folio starts there", base);
		goto out;
	}
	nr = 1UL << sd->cache_order[base];
	sim_lock_cluster(sd, base);
	for (i = base; i < base + nr; i++) {
		sd->cache_base[i] = 0;
		sd->swap_map[i] &= ~SWAP_HAS_CACHE;
	}
	sim_unlock_cluster(sd, base);
	sd->cached -= nr;
	/* Slots only the cache held are freed, runs within the folio. */
	for (i = base; i < base + nr; ) {
		unsigned long j = i;

		while (j < base + nr && !sd->swap_map[j])
			j++;
		if (j > i) {
			sim_final_free_locked(sd, i, j - i);
			i = j;
		} else {
			i++;
		}
	}
out:
	sim_unlock(sd);
}

void sim_cache_set_busy(struct sim *s, unsigned long base, bool busy)
{
	if (sim_cache_folio(s, base) != (long)base) {
		sim_violation(&s->sd, "cache_set_busy of %lu: no folio", base);
		return;
	}
	s->sd.cache_busy[base] = busy;
}

void sim_cache_split(struct sim *s, unsigned long offset)
{
	struct sim_dev *sd = &s->sd;
	long base = sim_cache_folio(s, offset);
	unsigned long nr, i;
	bool busy;

	if (base < 0)
		return;
	nr = 1UL << sd->cache_order[base];
	busy = sd->cache_busy[base];
	for (i = base; i < base + nr; i++) {
		sd->cache_base[i] = i + 1;
		sd->cache_order[i] = 0;
		sd->cache_busy[i] = busy;
	}
}

/*
 * __try_to_reclaim_swap(TTRS_ANYWAY | TTRS_DIRECT) as swap_alloc_reclaim()
 * calls it, the lock dropped around it by the kernel env's wrapper.
 */
int sim_env_reclaim(struct sim_dev *sd, unsigned long offset)
{
	unsigned long base, nr, i;
	int ret;

	sim_must_hold(sd, "swapalloc_env_reclaim()");
	sd->cnt.reclaim_calls++;
	sim_unlock(sd);
	if (sd->hook)
		sd->hook(sd, SIM_EV_RECLAIM, offset, sd->hook_arg);
	sim_let_others_in();

	/* The folio and the swap map as the kernel sees them: under their locks. */
	sim_lock(sd);
	ret = 0;
	if (offset >= sd->max || !sd->cache_base[offset])
		goto out;
	base = sd->cache_base[offset] - 1;
	nr = 1UL << sd->cache_order[base];
	ret = -(int)nr;
	if (sd->cache_busy[base]) {
		sd->cnt.reclaim_busy++;
		goto out;
	}
	for (i = base; i < base + nr; i++)
		if (sd->swap_map[i] != SWAP_HAS_CACHE)
			goto out;
	for (i = base; i < base + nr; i++)
		sd->cache_base[i] = 0;
	sd->cached -= nr;
	sd->cnt.reclaimed += nr;
	sim_final_free_locked(sd, base, nr);
	if (sd->on_free)
		sd->on_free(sd, base, nr, sd->on_free_arg);
	ret = nr;
out:
	sim_unlock(sd);
	if (sd->hook)
		sd->hook(sd, SIM_EV_RECLAIMED, offset, sd->hook_arg);
	sim_let_others_in();
	sim_lock(sd);
	return ret;
}

void sim_env_discard(struct sim_dev *sd, unsigned long offset, unsigned long nr)
{
	unsigned long i;

	sim_must_hold(sd, "swapalloc_env_discard()");
	if (offset + nr > sd->max) {
		sim_violation(sd, "discard of %lu+%lu beyond the device", offset, nr);
		return;
	}
	for (i = offset; i < offset + nr; i++)
		if (sd->swap_map[i] != SWAP_MAP_BAD)
			sim_violation(sd, "discard of slot %lu, not held", i);
	sd->cnt.discards++;
	sd->cnt.discarded += nr;
	sim_unlock(sd);
	if (sd->hook)
		sd->hook(sd, SIM_EV_DISCARD, offset, sd->hook_arg);
	sim_let_others_in();
	sim_lock(sd);
}

void sim_env_relax(struct sim_dev *sd)
{
	sim_must_hold(sd, "swapalloc_env_relax()");
	sd->cnt.relax++;
	sim_unlock(sd);
	if (sd->hook)
		sd->hook(sd, SIM_EV_RELAX, 0, sd->hook_arg);
	sim_let_others_in();
	sim_lock(sd);
}

/* For failure injection only: is the core's cluster of @offset free? */
bool sim_cluster_is_free(struct sim_dev *sd, unsigned long offset)
{
	return sd->dev->clusters[offset / SIM_CLUSTER_SLOTS].list == SA_LIST_FREE;
}

unsigned long sim_past_end(struct sim *s, unsigned int cluster)
{
	unsigned long start = (unsigned long)cluster * SIM_CLUSTER_SLOTS;
	unsigned long end = start + SIM_CLUSTER_SLOTS;

	return end > s->sd.max ? end - (start > s->sd.max ? start : s->sd.max) : 0;
}

static __printf(3, 4) int sim_bad(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return -EUCLEAN;
}

int sim_check(struct sim *s, char *buf, size_t len)
{
	struct swapalloc_dev *dev = &s->dev;
	struct sim_dev *sd = &s->sd;
	unsigned long used = 0, held = 0, counted = 0, expect, i;
	unsigned int c;
	int ret;

	sim_lock(sd);
	ret = swapalloc_check(dev, buf, len);
	sim_unlock(sd);
	if (ret)
		return ret;

	if (sd->violations)
		return sim_bad(buf, len, "environment violation: %s", sd->violation);
	if (sd->locked)
		return sim_bad(buf, len, "device lock left held");
	for (i = 0; i < sd->nr_clusters; i++)
		if (sd->cluster_locked[i])
			return sim_bad(buf, len, "cluster lock %lu left held", i);
	if (__atomic_load_n(&sd->cnt.accounted, __ATOMIC_RELAXED) !=
	    __atomic_load_n(&sd->cnt.fast_committed, __ATOMIC_RELAXED))
		return sim_bad(buf, len, "fast path committed %lu slots, %lu accounted",
			       sd->cnt.fast_committed, sd->cnt.accounted);
	for (i = 0; i < sd->max; i++) {
		unsigned char v = sd->swap_map[i];

		if (sd->bad[i]) {
			if (v != SWAP_MAP_BAD)
				return sim_bad(buf, len, "bad slot %lu reads %#x", i, v);
			continue;
		}
		if (v == SWAP_MAP_BAD) {
			held++;
			if (dev->clusters[i / SIM_CLUSTER_SLOTS].list != SA_LIST_DISCARD)
				return sim_bad(buf, len, "slot %lu held, not in a discard cluster",
					       i);
		} else if (v) {
			used++;
		}
		if (sd->cache_base[i] && !(v & SWAP_HAS_CACHE))
			return sim_bad(buf, len, "cached slot %lu reads %#x", i, v);
	}
	if (used != sim_inuse(sd))
		return sim_bad(buf, len, "inuse %lu, swap map has %lu slots in use",
			       sim_inuse(sd), used);
	if (held != (unsigned long)dev->nr_discard * SIM_CLUSTER_SLOTS)
		return sim_bad(buf, len, "%lu slots held, %u discard clusters", held,
			       dev->nr_discard);
	expect = used + sd->nr_bad;
	for (c = 0; c < dev->nr_clusters; c++) {
		struct swapalloc_cluster *ci = &dev->clusters[c];

		if (ci->list == SA_LIST_DISCARD)
			continue;
		/* An owned cluster's count still holds its pending frees. */
		if (ci->list == SA_LIST_OWNED) {
			sim_lock_cluster(sd, (unsigned long)c * SIM_CLUSTER_SLOTS);
			counted += ci->count - ci->pending_free;
			sim_unlock_cluster(sd, (unsigned long)c * SIM_CLUSTER_SLOTS);
		} else {
			counted += ci->count;
		}
		expect += sim_past_end(s, c);
	}
	if (counted != expect)
		return sim_bad(buf, len, "cluster counts add up to %lu, expected %lu",
			       counted, expect);
	snprintf(buf, len, "ok");
	return 0;
}
