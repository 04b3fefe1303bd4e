/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Model-based testing of the swapalloc core: random operations on a
 * simulated device, each checked against a plain reference of what every
 * slot should hold.  Shared by test_model (choices from a seeded PRNG) and
 * fuzz_core (choices from the fuzzer's input bytes).
 */
#ifndef _SWAPALLOC_MODEL_H
#define _SWAPALLOC_MODEL_H

#include "sim.h"

/* Where the model's choices come from. */
struct model_src {
	/* A number in [0, bound); bound >= 1. */
	unsigned int (*next)(struct model_src *src, unsigned int bound);
	bool exhausted;		/* the fuzzer's input ran out */
};

struct model_cfg {
	unsigned long max;		/* slots */
	enum swapalloc_policy policy;
	bool discard;
	bool races;			/* other CPUs run while the lock is dropped */
	unsigned int cpus;		/* simulated CPUs, 1..SHIM_NR_CPUS */
	unsigned int nr_bad;		/* bad slots besides the header */
	enum swapalloc_placement placement;
};

struct model_entry {
	unsigned long off;		/* first slot */
	unsigned int nr;		/* 1 << order */
	unsigned int live;		/* slots not yet freed */
};

struct model_stats {
	unsigned long allocs[SA_NR_ORDERS], fails[SA_NR_ORDERS];
	unsigned long frees, partial_frees, cache_only, reclaimed, nested;
	unsigned long rebinds, swapoffs, discards;
	unsigned long swapins, kept;	/* swap-ins asked of keep_cache, kept */
	unsigned long rebuild_frees;	/* frees while a rebuild let go */
};

struct model {
	struct sim s;
	struct model_cfg cfg;
	struct model_src *src;

	unsigned char *ref;		/* expected swap_map byte, 0 = free */
	int *owner;			/* entry index per slot, -1 */
	struct model_entry *ent;
	unsigned int nr_ent, cap_ent;
	unsigned long ref_used;		/* slots in use by the reference */

	unsigned long ops;		/* top-level operations done */
	unsigned long nested;		/* operations run inside a hook */
	int depth;			/* > 0 inside a hook */
	unsigned int target;		/* fill level aimed at, percent */
	unsigned int swapoff_left;	/* operations until swapon again */
	char op[160];			/* the current top-level operation */
	bool check_in_hooks;		/* full check whenever the lock is dropped */
	unsigned int hook_checks;	/* at most this many per top-level operation */
	unsigned int op_checks;		/* of those, in this top-level operation */
	unsigned int op_nested;		/* other-CPU operations in this one */
	bool rebinding;			/* inside sim_rebind(): only frees come in */

	bool failed;
	char why[320];
	struct model_stats st;
};

int model_init(struct model *m, const struct model_cfg *cfg, struct model_src *src);
void model_destroy(struct model *m);
/* One random operation and the full check; false once the model failed. */
bool model_step(struct model *m);
/* The full check; false (and m->why) on the first violation. */
bool model_check(struct model *m);
/*
 * A random configuration: device of 2..@max_clusters clusters and so on;
 * the placement too (test_model sets its own).
 */
void model_random_cfg(struct model_src *src, struct model_cfg *cfg,
		      unsigned int max_clusters);

#endif /* _SWAPALLOC_MODEL_H */
