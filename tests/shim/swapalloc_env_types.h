/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace environment of the swapalloc core: types.  Instead of a
 * swap_info_struct, struct swapalloc_env points at a simulated swap device
 * (struct sim_dev): a swap_map, the usage counters of si->pages and
 * si->inuse_pages, SWP_WRITEOK, the vm_swap_full() state, a simulated swap
 * cache, counters of every environment call and hooks for injecting
 * failures and for running "other CPUs" while the core has dropped the
 * lock.  tests/shim/sim.h has the functions that drive it.
 */
#ifndef _SWAPALLOC_ENV_TYPES_H
#define _SWAPALLOC_ENV_TYPES_H

#include "linux-shim.h"
#ifdef SIM_THREADS
#include <pthread.h>
#endif

/* PMD order on x86-64 with CONFIG_THP_SWAP: 512-slot clusters. */
#define SWAPALLOC_MAX_ORDER	9

/* What swapalloc_env_swap_full() answers. */
enum sim_full_mode {
	SIM_FULL_AUTO,		/* vm_swap_full(): inuse * 2 > pages */
	SIM_FULL_ON,		/* always full */
	SIM_FULL_OFF,		/* never full */
};

/* When sim_dev::hook is called; the simulated lock is not held then. */
enum sim_event {
	SIM_EV_RECLAIM,		/* inside swapalloc_env_reclaim(), before the reclaim */
	SIM_EV_RECLAIMED,	/* inside swapalloc_env_reclaim(), after it */
	SIM_EV_DISCARD,		/* inside swapalloc_env_discard() */
	SIM_EV_RELAX,		/* inside swapalloc_env_relax() */
};

/* Calls into the environment, for tests that count them. */
struct sim_counters {
	unsigned long map_reads;
	unsigned long commits;		/* swapalloc_env_commit() calls */
	unsigned long batches;		/* swapalloc_env_commit_batch() calls */
	unsigned long commit_fails;	/* of which failed */
	unsigned long injected;		/* of which by fail_commit_at */
	unsigned long injected_free;	/* of those, into a free cluster */
	unsigned long committed;	/* slots committed under the lock */
	unsigned long reclaim_calls;
	unsigned long reclaimed;	/* slots freed by reclaim */
	unsigned long reclaim_busy;	/* reclaims that found a busy folio */
	unsigned long holds, held;	/* calls, slots */
	unsigned long releases, released;
	unsigned long discards, discarded;
	unsigned long kick_discard;
	unsigned long kick_reclaim;
	unsigned long relax;		/* swapalloc_env_relax() calls */
	unsigned long discard_waits;	/* swapalloc_env_wait_discard() calls */
	unsigned long rebind_waits;	/* sim_rebind() waits for a discard in flight */
	unsigned long frees;		/* final frees passed to swapalloc_free() */
	unsigned long freed;		/* slots they covered */
	/* The fast path's, without the device lock: atomic. */
	unsigned long fast_batches;	/* swapalloc_env_commit_fast() calls */
	unsigned long fast_committed;	/* slots they committed */
	unsigned long accounted;	/* slots sim_account_fast() took */
	unsigned long accounts;		/* sim_account_fast() calls */
	unsigned long fast_frees;	/* final frees passed to swapalloc_free_fast() */
	unsigned long fast_freed;	/* slots they covered */
};

struct sim_dev;
struct swapalloc_dev;

typedef void (*sim_hook_fn)(struct sim_dev *sd, enum sim_event ev,
			    unsigned long offset, void *arg);
typedef void (*sim_free_fn)(struct sim_dev *sd, unsigned long offset,
			    unsigned int nr, void *arg);

struct sim_dev {
	unsigned char *swap_map;	/* si->swap_map */
	unsigned long max;		/* si->max, slot 0 is the header */
	unsigned long pages;		/* si->pages: max less header and bad slots */
	unsigned long inuse;		/* si->inuse_pages: sim_inuse(), sim_inuse_add() */
	bool writable;			/* SWP_WRITEOK */
	bool unbound;			/* inside sim_rebind(): not SWAP_ALLOC_BOUND */
	bool fail_hold;			/* swap_alloc_hold() refuses */
	enum sim_full_mode full;
	int locked;			/* the simulated si->lock is held */
#ifdef SIM_THREADS
	pthread_mutex_t mutex;		/* si->lock itself, with real threads */
#endif
	/*
	 * The cluster locks (ci->lock of si->cluster_info): every write of
	 * a swap map byte holds its cluster's, as in the kernel, and the
	 * fast path holds only that one.  cluster_locked[] is set while it
	 * is held, for the rules; with SIM_THREADS a mutex per cluster too.
	 */
	unsigned long nr_clusters;
	int *cluster_locked;
#ifdef SIM_THREADS
	pthread_mutex_t *cluster_mutex;
#endif
	/*
	 * Map reads since the lock was last taken: the kernel's soft-lockup
	 * watchdog, in reads.  More than SIM_HELD_READS_MAX in one hold is
	 * a violation (a pass over the device that never lets go).
	 */
	unsigned long held_reads;
	struct swapalloc_dev *dev;	/* whose ->free() a reclaim calls */

	/*
	 * The simulated swap cache: folios, naturally aligned, over slots.
	 * cache_base[slot] is the first slot of the folio caching @slot plus
	 * one (0: not cached); cache_order[] and cache_busy[] are valid at a
	 * folio's first slot.  A busy folio is locked or under writeback, so
	 * reclaim fails on it as __try_to_reclaim_swap() does.
	 */
	unsigned int *cache_base;
	unsigned char *cache_order;
	bool *cache_busy;
	unsigned long cached;		/* slots in the swap cache */

	bool *bad;			/* permanently bad slots (and the header) */
	unsigned long nr_bad;

	struct sim_counters cnt;

	/* Failure injection: fail the commit whose number (cnt.commits) this is. */
	unsigned long fail_commit_at;
	/* Called with the lock dropped, see enum sim_event. */
	sim_hook_fn hook;
	void *hook_arg;
	/* Told about every slot range a reclaim freed. */
	sim_free_fn on_free;
	void *on_free_arg;
	/* Set when the core broke a rule of the environment. */
	unsigned long violations;
	char violation[160];
};

/*
 * si->inuse_pages is an atomic in the kernel: the fast path accounts
 * without the device lock (sim_account_fast()).  Every access to
 * ->inuse goes through these, so that ThreadSanitizer sees atomics.
 */
static inline unsigned long sim_inuse(struct sim_dev *sd)
{
	return __atomic_load_n(&sd->inuse, __ATOMIC_RELAXED);
}

static inline unsigned long sim_inuse_add(struct sim_dev *sd, long nr)
{
	return __atomic_add_fetch(&sd->inuse, nr, __ATOMIC_SEQ_CST);
}

/* What the core's device embeds: a pointer to the simulated device. */
struct swapalloc_env {
	struct sim_dev *sim;
};

/* A swap entry, as the kernel's: here the offset alone (one device). */
typedef struct {
	unsigned long val;
} swp_entry_t;

static inline unsigned long swp_offset(swp_entry_t entry)
{
	return entry.val;
}

#endif /* _SWAPALLOC_ENV_TYPES_H */
