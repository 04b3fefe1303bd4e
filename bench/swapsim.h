/* SPDX-License-Identifier: GPL-2.0 */
/* swapsim: what its parts share (bench/swapsim.c describes the model). */
#ifndef _SWAPSIM_H
#define _SWAPSIM_H

#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <time.h>

#include "sim.h"
#include "builtin612.h"

#define CS			SIM_CLUSTER_SLOTS
#define UNIT_PAGES		16		/* 64K mTHP */
#define MEM1_UNITS		(60 * 1024 / 64)
#define MEM1_PAGES		(MEM1_UNITS * UNIT_PAGES)
#define MEM2_PAGES		(4 * 1024 / 4)
#define SWAPIN_UNITS		(16 * 1024 / 64)
#define SWAPIN_PAGES		(16 * 1024 / 4)
#define DONTNEED_UNITS		(16 * 1024 / 64)
#define DONTNEED_MEM2_PAGES	(1 * 1024 / 4)
#define BATCH_UNITS		(2048 / 64)	/* one PMD of mem1 */
#define DEFAULT_SLOTS		(64 * 1024 / 4)
#define DEFAULT_ITERATIONS	100
#define STEADY_FROM		51

enum swapin_mode { SWAPIN_WHOLE, SWAPIN_4K, SWAPIN_MEMCG, NR_SWAPIN };

struct kmodel;
struct run;

/* The allocators swapsim can run: swapalloc's policies and 6.12's builtin. */
enum ss_allocator { AL_PERCPU, AL_GLOBAL, AL_BUILTIN, AL_ANTIFRAG, AL_ANTIFRAG_G, NR_ALLOCS };
/*
 * The bound no placement can beat (perfect compaction): an entry of
 * 1 << order slots can be served only if, with every live slot moved
 * anywhere, an aligned free run of that size could exist.  "count": at
 * least 1 << order slots are free.  "packed": after packing the live
 * slots densely, first into the good slots of the aligned blocks that a
 * bad slot (the header) or the device's end spoils for this order, then
 * into whole blocks, one whole aligned block is left.  Both depend only
 * on how many slots are live, not where.
 */
struct bound {
	unsigned long clean[SA_NR_ORDERS];	/* aligned blocks with no bad slot */
	unsigned long spoiled[SA_NR_ORDERS];	/* good slots in the other blocks */
};

struct run {
	struct sim s;
	enum swapin_mode swapin;
	bool aligned, small;
	u64 rng;
	unsigned int slot1[MEM1_PAGES];		/* 0: resident */
	bool large[MEM1_UNITS];			/* resident as one 64K folio */
	unsigned int slot2[MEM2_PAGES];
	unsigned long swpout, fallback, stuck;
	unsigned int cpus;		/* the task moves among them */
	FILE *record;			/* write the run as a trace */
	enum ss_allocator alloc;
	struct kmodel *k;		/* --swapin memcg */
	struct bound bound;
	unsigned long bound_count, bound_packed;	/* order-4 requests they fail */
	u64 alloc_ns;			/* time spent in the allocator */
	/* Runs of consecutive offsets, in allocation (write) order. */
	unsigned long run_end, runs, run_pages;
};

/* Per iteration: 64K folios swapped out whole, split, pages left in memory. */
struct iter_stat {
	unsigned long swpout, fallback, stuck;
	double pct;
	double bound_count, bound_packed;	/* the bound's fallback %, see struct bound */
	unsigned long map_reads, allocs;	/* the whole run, in [0] */
	u64 alloc_ns;
	double mean_run;		/* pages per run of consecutive offsets */
};

extern bool opt_keep_cache;
extern unsigned int opt_memcg_pages;
extern unsigned int opt_cpus;
extern FILE *opt_record;
extern enum ss_allocator replay_allocator;
extern const char * const alloc_names[NR_ALLOCS];

enum swapalloc_policy alloc_policy(enum ss_allocator a);
enum swapalloc_placement alloc_placement(enum ss_allocator a);
unsigned long ss_alloc_usage(struct run *r, int order, unsigned char usage);
unsigned long ss_alloc(struct run *r, int order);
void ss_free(struct run *r, unsigned long off, unsigned int nr);
unsigned int parse_allocs(const char *arg);
void bound_init(struct bound *b, struct sim_dev *sd);
bool bound_servable(const struct bound *b, unsigned long pages, unsigned long inuse,
		    int order, bool packed);
void k_reclaim_work(struct run *r);
void run_test(enum swapin_mode swapin, bool aligned, bool small,
	      enum ss_allocator alloc, unsigned long slots, u64 seed,
	      unsigned int iterations, struct iter_stat *st);
int replay_trace(const char *path, unsigned long slots);
void die(const char *what);

#endif /* _SWAPSIM_H */
