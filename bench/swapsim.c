// SPDX-License-Identifier: GPL-2.0
/*
 * swapsim - the swapalloc core against a synthetic model of upstream's
 * tools/mm/thp_swap_allocator_test, and a replayer for recorded allocation
 * traces.  Runs in userspace on the simulated swap device of tests/shim/.
 *
 * The model
 * ---------
 * A 64 MiB swap device (16384 slots, slot 0 the header).  mem1 is 60 MiB
 * of 64K mTHP: 960 units of 16 pages; mem2 (with -s) 4 MiB of small
 * folios: 1024 pages.  As in the upstream test: fill and page out mem1
 * (and mem2), then 100 iterations of
 *
 *   1. swap in 16 MiB of mem1 at random offsets: 256 random 64K units with
 *      -a, else 4096 random 4K pages;
 *   2. MADV_DONTNEED and refill 16 MiB of mem1 in 256 random 64K units
 *      (each refilled unit is a new 64K folio); with -s also 1 MiB of mem2
 *      in 256 random 4K pages;
 *   3. page out all of mem1, then all of mem2.
 *
 * A page is resident or swapped out to a slot.  Swap-in, two ways:
 *
 *   --swapin=whole  a touched page of a unit whose 16 pages are all swapped
 *                   out to 16 contiguous, 16-aligned slots (a 64K entry,
 *                   or order-0 slots that happen to line up) comes back as
 *                   one 64K folio and its 16 slots are freed in one
 *                   swapalloc_free(), as zram does on 6.12 (mTHP swap-in
 *                   of SWP_SYNCHRONOUS_IO devices); any other swapped
 *                   page comes back alone as a 4K folio, its slot freed.
 *   --swapin=4k     every touched swapped page comes back as a 4K folio
 *                   and its slot is freed on its own, as from a disk under
 *                   memory-cgroup pressure.
 *
 * MADV_DONTNEED frees a unit's swapped pages in runs of contiguous slots
 * within one cluster, one swapalloc_free() per run (__swap_entries_free()
 * batching), else slot by slot.  Page-out goes through mem1 in 2 MiB
 * batches, as MADV_PAGEOUT hands reclaim one PMD's folios at a time: a
 * 64K folio asks for order 4; if that fails (counted as a fallback, like
 * swpout_fallback) it is split and its 16 pages go to the end of the
 * batch, each asking for order 0 (also how 4K folios are paged out).  A
 * page whose order-0 allocation fails stays resident.  The fallback rate
 * of an iteration is fallback / (fallback + swpout) over mem1's 64K
 * folios, as the upstream test prints it.
 *
 * Simplifications (whole and 4k): one CPU and no concurrency; no swap cache (swap-in
 * frees the slots at once, so there are no SWAP_HAS_CACHE-only slots to
 * reclaim); the per-CPU swap_slots cache of 6.12 (order-0 allocations in
 * batches of 64, frees deferred in batches) is not modelled; no
 * readahead; swap-in of a unit never fails for lack of memory; the random
 * numbers are not glibc's rand(), so the offsets differ from the upstream
 * test's.  The swap device is not discard-capable (zram).
 *
 * The kernel model (--swapin memcg)
 * ---------------------------------
 * What bench/thp-allocator-test.sh ssd72-memcg runs: the test in a memory
 * cgroup on a non-rotational disk (not SWP_SYNCHRONOUS_IO), as 6.12.117
 * handles it.  Each page is swapped (its slot holds the PTE's reference),
 * in the swap cache (resident, unmapped, clean: slot count 1 plus
 * SWAP_HAS_CACHE) or mapped (no slot).  Grounded in mm/memory.c,
 * mm/swap_state.c, mm/swap_slots.c, mm/swapfile.c and mm/vmscan.c:
 *
 *  - swap-cache retention: MADV_PAGEOUT leaves every written folio in the
 *    swap cache, rotated to the inactive list's tail when its writeback
 *    ends, until memcg reclaim drops it (__remove_mapping(): the slot
 *    stays in use).  A write to a page whose folio is still cached is a
 *    minor fault; a cached 64K folio is mapped whole (do_swap_page() maps
 *    a large swap-cache folio entirely) and, with swap over half full
 *    (should_try_to_free_swap()), its 16 slots are freed as one range
 *    (put_swap_folio()), so the unit is a 64K folio again at page-out;
 *  - a write to a swapped page is a major fault read as a 4K folio, with
 *    VMA readahead (swap_vma_ra_win(): window from the hits, at most
 *    1 << page_cluster = 8, within the PMD) bringing swapped neighbours
 *    into the swap cache as 4K folios; the faulting page's slot is freed;
 *  - the swap slots cache: order-0 slots come 64 at a time per CPU
 *    (refill_swap_slots_cache(): 64 allocations in a row, usage
 *    SWAP_HAS_CACHE), and order-0 frees wait in slots_ret, 64 at a time,
 *    their map byte SWAP_HAS_CACHE meanwhile (free_swap_slot()); 64K
 *    ranges and multi-slot zaps (__swap_entries_free()) are freed at once;
 *  - the memory cgroup: --memcg-pages resident pages (default 7168, 28 of
 *    the 32 MiB: the rest is the shell, the tool's text, page tables,
 *    per-CPU charge stock and folios under writeback that reclaim has not
 *    freed yet; this one figure was fitted on builtin's no-flag case, the
 *    others are predictions).  Over it, reclaim (at least 32 pages,
 *    SWAP_CLUSTER_MAX) takes the inactive tail: unmapped swap-cache folios
 *    are dropped, a mapped folio referenced since last seen goes round
 *    again (FOLIOREF_KEEP), any other is paged out (counted in swpout or
 *    swpout_fallback, as the test counts it) and dropped;
 *  - MADV_DONTNEED frees swapped slots through the swap cache as 6.12's
 *    zap does; the refill is a new 64K folio.  With -s, mem2 pages are
 *    written (swapped in), as the upstream test does;
 *  - the allocator's say at swap-in (patch 0010): where do_swap_page()
 *    frees the swap cache of the folio it maps (swap_free_nr(), then
 *    should_try_to_free_swap(): every touch here is a write fault, so it
 *    always would), swapalloc's policies are asked first,
 *    swapalloc_keep_cache() (builtin never keeps; --keep-cache off asks
 *    nobody).  A kept folio is mapped (dirty: written) and stays in the
 *    swap cache, its slots SWAP_HAS_CACHE only (K_KEPT).  Paged out (by
 *    MADV_PAGEOUT or memcg reclaim) it takes no new slot: it is written
 *    to its own and becomes an ordinary swap-cache folio (count 1).
 *    MADV_DONTNEED frees its slots at once (free_swap_cache(): a 4K slot
 *    through the slots cache's slots_ret, a 64K range directly).  The
 *    allocators' reclaim of swap-cache-only slots (sim_env_reclaim(),
 *    __try_to_reclaim_swap() with TTRS_ANYWAY: in an allocation's range
 *    scan, its full-cluster reclaim, and swapalloc's reclaim worker, run
 *    right after the allocation that kicked it) frees them while the
 *    folio stays mapped: it is then a plain mapped folio and needs a new
 *    slot at its next page-out.  Not modelled: reclaim's activation of a
 *    kept folio (shrink_folio_list()'s activate_locked frees the swap of
 *    an activated folio when swap is over half full; there is no active
 *    list here).
 *
 * Left out: writeback time (a folio written is clean at once), a second
 * CPU, the active list and workingset refault activation.  Swap-cache-only
 * slots therefore exist only in the slots caches and, with the allocator's
 * say at swap-in, in kept folios; the allocators' reclaim of them is
 * modelled (sim_env_reclaim()): it can free only kept folios' slots.
 *
 * Allocators (--policy): percpu and global are swapalloc's core;
 * builtin is 6.12.117's cluster_alloc_swap_entry() (bench/builtin612.c).
 *
 * The bound
 * ---------
 * Beside each policy's steady state, swapsim prints the fallback perfect
 * compaction would give on the same run's order-4 requests (struct bound):
 * "count" fails a request when fewer than 16 slots are free, "packed" when
 * no aligned 16-slot block could be left free by packing every live slot
 * around the spoiled blocks.  Live slots are counted as the run had them,
 * so the bound is a property of the workload's occupancy, not of where a
 * policy put things: how far a policy is above it is what placement costs.
 *
 * Trace replay
 * ------------
 * --trace FILE reads lines "A <dev> <order> <offset>" (an allocation of
 * 1 << order slots, offset 0 if it failed) and "F <dev> <offset> <nr>" (a
 * final free of nr slots), '#' comments ignored, and replays the requests
 * in order against the core, one simulated device per <dev>, sized
 * --slots or from the largest offset in the trace.  Recorded offsets are
 * mapped to the replay's own; a replayed order > 0 request that fails is
 * split into order-0 ones, as the kernel does.  Reported: fallbacks per
 * order, recorded and replayed, and whether every recorded free could be
 * applied (each of its slots had been handed out in the replay).
 */
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

/* The allocators swapsim can run: swapalloc's policies and 6.12's builtin. */
enum ss_allocator { AL_PERCPU, AL_GLOBAL, AL_BUILTIN, AL_ANTIFRAG, AL_ANTIFRAG_G, NR_ALLOCS };

static const char * const alloc_names[NR_ALLOCS] = {
	[AL_PERCPU] = "percpu",
	[AL_GLOBAL] = "global",
	[AL_BUILTIN] = "builtin",
	[AL_ANTIFRAG] = "antifrag",		/* percpu, SA_PLACE_ANTIFRAG */
	[AL_ANTIFRAG_G] = "antifrag-g",	/* global, SA_PLACE_ANTIFRAG */
};

static enum swapalloc_policy alloc_policy(enum ss_allocator a)
{
	return a == AL_GLOBAL || a == AL_ANTIFRAG_G ? SA_POLICY_GLOBAL : SA_POLICY_PERCPU;
}

static enum swapalloc_placement alloc_placement(enum ss_allocator a)
{
	return a == AL_ANTIFRAG || a == AL_ANTIFRAG_G ? SA_PLACE_ANTIFRAG : SA_PLACE_DEFAULT;
}

struct kmodel;
struct run;
static void k_reclaim_work(struct run *r);

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

static void bound_init(struct bound *b, struct sim_dev *sd)
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
static bool bound_servable(const struct bound *b, unsigned long pages, unsigned long inuse,
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

static u64 rnd64(struct run *r)
{
	u64 z = (r->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned int rnd(struct run *r, unsigned int bound)
{
	return (rnd64(r) >> 32) % bound;
}

static void die(const char *what)
{
	fprintf(stderr, "swapsim: %s\n", what);
	exit(1);
}

static u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static unsigned long ss_alloc_usage(struct run *r, int order, unsigned char usage)
{
	unsigned long off;
	u64 t0;

	if (order == 4) {
		r->bound_count += !bound_servable(&r->bound, r->s.sd.pages, r->s.sd.inuse,
						  order, false);
		r->bound_packed += !bound_servable(&r->bound, r->s.sd.pages, r->s.sd.inuse,
						   order, true);
	}
	t0 = now_ns();
	if (r->alloc == AL_BUILTIN) {
		sim_lock(&r->s.sd);
		off = builtin612_alloc(&r->s.dev, order, usage);
		sim_unlock(&r->s.sd);
	} else {
		off = sim_alloc(&r->s, order, usage);
	}
	r->alloc_ns += now_ns() - t0;
	if (r->k && r->alloc != AL_BUILTIN)
		k_reclaim_work(r);
	if (off) {
		r->runs += off != r->run_end;
		r->run_pages += 1UL << order;
		r->run_end = off + (1UL << order);
	}

	if (r->record)
		fprintf(r->record, "A swapsim %d %lu\n", order, off);
	return off;
}

static unsigned long ss_alloc(struct run *r, int order)
{
	return ss_alloc_usage(r, order, 1);
}

static void ss_free(struct run *r, unsigned long off, unsigned int nr)
{
	sim_free(&r->s, off, nr);
	if (r->record)
		fprintf(r->record, "F swapsim %lu %u\n", off, nr);
}

/* Free swapped pages @slots[0..n) in runs of contiguous slots in a cluster. */
static void free_runs(struct run *r, unsigned int *slots, unsigned int n)
{
	unsigned int i = 0, j;

	while (i < n) {
		if (!slots[i]) {
			i++;
			continue;
		}
		for (j = i + 1; j < n && slots[j] == slots[j - 1] + 1 &&
		     slots[j] / CS == slots[i] / CS; j++)
			;
		ss_free(r, slots[i], j - i);
		for (; i < j; i++)
			slots[i] = 0;
	}
}

/* All 16 pages of unit @u out in 16 contiguous, aligned slots? */
static bool unit_whole_entry(struct run *r, unsigned int u)
{
	unsigned int *sl = &r->slot1[u * UNIT_PAGES], i;

	if (!sl[0] || sl[0] % UNIT_PAGES)
		return false;
	for (i = 1; i < UNIT_PAGES; i++)
		if (sl[i] != sl[0] + i)
			return false;
	return true;
}

static void swapin_page(struct run *r, unsigned int page)
{
	unsigned int u = page / UNIT_PAGES;

	if (!r->slot1[page])
		return;
	if (r->swapin == SWAPIN_WHOLE && unit_whole_entry(r, u)) {
		ss_free(r, r->slot1[u * UNIT_PAGES], UNIT_PAGES);
		memset(&r->slot1[u * UNIT_PAGES], 0, UNIT_PAGES * sizeof(r->slot1[0]));
		r->large[u] = true;
		return;
	}
	ss_free(r, r->slot1[page], 1);
	r->slot1[page] = 0;
	r->large[u] = false;
}

static void random_swapin(struct run *r)
{
	unsigned int i, p, u;

	if (r->aligned) {
		for (i = 0; i < SWAPIN_UNITS; i++) {
			u = rnd(r, MEM1_UNITS);
			for (p = 0; p < UNIT_PAGES; p++)
				swapin_page(r, u * UNIT_PAGES + p);
		}
	} else {
		for (i = 0; i < SWAPIN_PAGES; i++)
			swapin_page(r, rnd(r, MEM1_PAGES));
	}
}

static void random_dontneed(struct run *r)
{
	unsigned int i, u, p;

	for (i = 0; i < DONTNEED_UNITS; i++) {
		u = rnd(r, MEM1_UNITS);
		free_runs(r, &r->slot1[u * UNIT_PAGES], UNIT_PAGES);
		r->large[u] = true;		/* refilled: a new 64K folio */
	}
	if (!r->small)
		return;
	for (i = 0; i < DONTNEED_MEM2_PAGES; i++) {
		p = rnd(r, MEM2_PAGES);
		if (r->slot2[p]) {
			ss_free(r, r->slot2[p], 1);
			r->slot2[p] = 0;
		}
	}
}

static void pageout_small(struct run *r, unsigned int *slot)
{
	unsigned long off;

	if (*slot)
		return;
	off = ss_alloc(r, 0);
	if (off)
		*slot = off;
	else
		r->stuck++;
}

static void pageout(struct run *r)
{
	unsigned int split[BATCH_UNITS], nr_split, b, u, i, p;
	unsigned long off;

	for (b = 0; b < MEM1_UNITS; b += BATCH_UNITS) {
		if (r->cpus > 1)
			sim_set_cpu(rnd(r, r->cpus));
		nr_split = 0;
		for (u = b; u < b + BATCH_UNITS && u < MEM1_UNITS; u++) {
			unsigned int *sl = &r->slot1[u * UNIT_PAGES];

			if (!r->large[u]) {
				for (p = 0; p < UNIT_PAGES; p++)
					pageout_small(r, &sl[p]);
				continue;
			}
			off = ss_alloc(r, 4);
			if (off) {
				for (p = 0; p < UNIT_PAGES; p++)
					sl[p] = off + p;
				r->swpout++;
			} else {
				r->fallback++;
				split[nr_split++] = u;
			}
			r->large[u] = false;
		}
		/* Split folios' pages were put at the end of the batch. */
		for (i = 0; i < nr_split; i++)
			for (p = 0; p < UNIT_PAGES; p++)
				pageout_small(r, &r->slot1[split[i] * UNIT_PAGES + p]);
	}
	if (r->small)
		for (p = 0; p < MEM2_PAGES; p++)
			pageout_small(r, &r->slot2[p]);
}

/* ------------------------------------------------------------------ */
/*
 * --swapin memcg: the test in a memory cgroup on a disk, as the kernel
 * runs it (bench/thp-allocator-test.sh ssd72-memcg).  See "The kernel
 * model" at the top of the file.
 */
#define NPAGES		(MEM1_PAGES + MEM2_PAGES)
#define NIDS		(NPAGES + MEM1_UNITS)	/* folios: 4K pages, then 64K units */
#define LRU_HEAD	NIDS			/* the list's sentinel */
#ifndef SLOTS_BATCH
#define SLOTS_BATCH	64			/* SWAP_SLOTS_CACHE_SIZE */
#endif
#ifndef RA_MAX_WIN
#define RA_MAX_WIN	8			/* 1 << page_cluster (3) */
#endif
#define RA_HITS_MAX	63			/* SWAP_RA_HITS_MAX */
#define PMD_PAGES	512
#define RECLAIM_MIN	32			/* SWAP_CLUSTER_MAX */
#define SLOTS_CPUS	2			/* the guest's vCPUs: cache thresholds */

/*
 * Where a page is.  K_KEPT: mapped like K_MAPPED, but its folio stayed in
 * the swap cache at its swap-in (swapalloc_keep_cache()); its slot holds
 * SWAP_HAS_CACHE only.
 */
enum { K_SWAP, K_CACHE, K_MAPPED, K_KEPT };

struct kmodel {
	unsigned char st[NPAGES];	/* K_*: where each page is */
	unsigned int slot[NPAGES];	/* its slot while K_SWAP, K_CACHE or K_KEPT */
	unsigned int *kept_by;		/* slot -> K_KEPT folio id + 1, else 0 */
	bool big[MEM1_UNITS];		/* resident as one 64K folio */
	bool ra[NPAGES];		/* PG_readahead: read ahead, not yet hit */
	unsigned int old[NPAGES];	/* SWAPSIM_ORACLE: the slot it left */
	int prev[NIDS + 1], next[NIDS + 1];
	bool on_lru[NIDS], ref[NIDS];
	unsigned long nres, cap;	/* resident pages, memcg limit in pages */
	/* the swap slots cache of this CPU (mm/swap_slots.c) */
	unsigned int sc[SLOTS_BATCH], sc_nr, sc_cur;
	unsigned int ret[SLOTS_BATCH], ret_nr;
	bool sc_active;
	/* per-VMA readahead state (swap_readahead_info): mem1, mem2 */
	struct { long prev; unsigned int win, hits; } vra[2];
	/* counters, over the whole run */
	unsigned long major, minor4, minor64, ra_pages, dropped, evicted;
	/*
	 * kept folios' pages: kept at swap-in, written back to their own
	 * slots, freed by MADV_DONTNEED, freed by the allocators' reclaim
	 */
	unsigned long kept, rewritten, kept_zapped, kept_reclaimed;
	/*
	 * module/main.c's reclaim work: kicks seen, runs, slots of kept
	 * folios it freed (of kept_reclaimed), its swap-map reads
	 */
	unsigned long kicks, worker_runs, worker_kept, worker_reads;
	bool in_worker;
	/* swapalloc_keep_cache() calls and their swap-map reads */
	unsigned long keep_asked, keep_reads;
};

/*
 * --keep-cache: ask swapalloc_keep_cache() at swap-in (patch 0010).  Off
 * by default in the oracle build, whose figures are without the hook.
 */
#ifdef SWAPSIM_ORACLE
static bool opt_keep_cache;
#else
static bool opt_keep_cache = true;
#endif

#ifdef SWAPSIM_ORACLE
/* bench/swapsim-oracle.c: an order-0 allocation of slot @off, if free. */
unsigned long swapsim_oracle_alloc_at(struct swapalloc_dev *dev, unsigned long off,
				      unsigned char usage);
static unsigned long oracle_hits, oracle_tries;
#endif
/* Mapped, with or without kept slots. */
static bool k_present(unsigned char st)
{
	return st == K_MAPPED || st == K_KEPT;
}

static unsigned int k_id(struct kmodel *k, unsigned int p)
{
	return p < MEM1_PAGES && k->big[p / UNIT_PAGES] ? NPAGES + p / UNIT_PAGES : p;
}

static unsigned int k_first(unsigned int id)
{
	return id >= NPAGES ? (id - NPAGES) * UNIT_PAGES : id;
}

static unsigned int k_size(unsigned int id)
{
	return id >= NPAGES ? UNIT_PAGES : 1;
}

static void lru_del(struct kmodel *k, unsigned int id)
{
	if (!k->on_lru[id])
		return;
	k->next[k->prev[id]] = k->next[id];
	k->prev[k->next[id]] = k->prev[id];
	k->on_lru[id] = false;
}

/* At the head (new, reclaimed last) or the tail (reclaimed next). */
static void lru_add(struct kmodel *k, unsigned int id, bool tail)
{
	unsigned int at;

	lru_del(k, id);
	at = tail ? k->prev[LRU_HEAD] : LRU_HEAD;
	k->prev[id] = at;
	k->next[id] = k->next[at];
	k->prev[k->next[at]] = id;
	k->next[at] = id;
	k->on_lru[id] = true;
}

/* swapcache_free_entries() of the deferred frees. */
static void k_flush_ret(struct run *r)
{
	struct kmodel *k = r->k;
	unsigned int i;

	for (i = 0; i < k->ret_nr; i++)
		ss_free(r, k->ret[i], 1);
	k->ret_nr = 0;
}

/*
 * free_swap_slot(): the slot's last reference is gone and its map byte is
 * SWAP_HAS_CACHE; the final free waits in the CPU's slots_ret, 64 at a time.
 */
static void k_free_slot(struct run *r, unsigned int off)
{
	struct kmodel *k = r->k;

	sim_set_map(&r->s, off, 1, SWAP_HAS_CACHE);
	if (k->ret_nr >= SLOTS_BATCH)
		k_flush_ret(r);
	k->ret[k->ret_nr++] = off;
}

/* check_cache_active(): on above 5 x 64 free slots per CPU, off below 2 x 64. */
static void k_slots_cache_check(struct run *r)
{
	struct kmodel *k = r->k;
	unsigned long free = r->s.sd.pages - r->s.sd.inuse;

	if (!k->sc_active) {
		if (free > SLOTS_CPUS * 5 * SLOTS_BATCH)
			k->sc_active = true;
		return;
	}
	if (free >= SLOTS_CPUS * 2 * SLOTS_BATCH)
		return;
	k->sc_active = false;
	while (k->sc_nr) {		/* drain: unused slots go back */
		ss_free(r, k->sc[k->sc_cur++], 1);
		k->sc_nr--;
	}
	k_flush_ret(r);
}

/* folio_alloc_swap() for an order-0 folio. */
static unsigned int k_alloc0(struct run *r)
{
	struct kmodel *k = r->k;
	unsigned long off;

	k_slots_cache_check(r);
	if (k->sc_active) {
		if (!k->sc_nr) {
			k->sc_cur = 0;
			while (k->sc_nr < SLOTS_BATCH) {
				off = ss_alloc_usage(r, 0, SWAP_HAS_CACHE);
				if (!off)
					break;
				k->sc[k->sc_nr++] = off;
			}
		}
		if (k->sc_nr) {
			k->sc_nr--;
			return k->sc[k->sc_cur++];
		}
	}
	return ss_alloc_usage(r, 0, SWAP_HAS_CACHE);
}

/* add_to_swap() + try_to_unmap(): the folio's pages become K_CACHE. */
static void k_cached(struct run *r, unsigned int id, unsigned long off)
{
	struct kmodel *k = r->k;
	unsigned int p = k_first(id), n = k_size(id), i;

	sim_cache_add(&r->s, off, n > 1 ? 4 : 0, false);
	sim_set_map(&r->s, off, n, 1 | SWAP_HAS_CACHE);
	for (i = 0; i < n; i++) {
		k->st[p + i] = K_CACHE;
		k->slot[p + i] = off + i;
	}
	lru_add(k, id, true);	/* written: rotated to the tail */
}

/*
 * should_try_to_free_swap() with patch 0010: may the swap-in of the folio
 * of @nr slots at @off keep them?  swapalloc's policies are asked, under
 * the device lock as swap_alloc_keep_swapcache() takes it; builtin 6.12
 * has no hook, and frees.
 */
static bool k_keep(struct run *r, unsigned long off, unsigned int nr)
{
	struct kmodel *k = r->k;
	unsigned long reads = r->s.sd.cnt.map_reads;
	bool keep;

	if (!opt_keep_cache || r->alloc == AL_BUILTIN)
		return false;
	sim_lock(&r->s.sd);
	keep = swapalloc_keep_cache(&r->s.dev, off, nr);
	sim_unlock(&r->s.sd);
	/* A swap-in's cost, not an allocation's. */
	k->keep_reads += r->s.sd.cnt.map_reads - reads;
	r->s.sd.cnt.map_reads = reads;
	k->keep_asked++;
	return keep;
}

/* Folio @id, just mapped, kept its slots from @base on: K_KEPT. */
static void k_set_kept(struct run *r, unsigned int id, unsigned long base)
{
	struct kmodel *k = r->k;
	unsigned int p = k_first(id), n = k_size(id), i;

	for (i = 0; i < n; i++) {
		k->st[p + i] = K_KEPT;
		k->slot[p + i] = base + i;
		k->kept_by[base + i] = id + 1;
	}
	k->kept += n;
}

/* Folio @id is no longer K_KEPT: forget its slots (the caller sets st). */
static unsigned long k_unkeep(struct kmodel *k, unsigned int id)
{
	unsigned int p = k_first(id), n = k_size(id), i;
	unsigned long base = k->slot[p];

	for (i = 0; i < n; i++) {
		if (k->st[p + i] != K_KEPT || k->slot[p + i] != base + i ||
		    k->kept_by[base + i] != id + 1)
			die("memcg model: kept folio's slots inconsistent");
		k->kept_by[base + i] = 0;
	}
	return base;
}

/*
 * Page out a kept folio: still in the swap cache, so add_to_swap() is
 * skipped and nothing is allocated; try_to_unmap() gives its slots the
 * swap PTEs' count back and pageout() writes it (it was written to) to
 * them.  Then an ordinary swap-cache folio, rotated to the tail.
 */
static void k_rewrite(struct run *r, unsigned int id)
{
	struct kmodel *k = r->k;
	unsigned int p = k_first(id), n = k_size(id), i;
	unsigned long base = k_unkeep(k, id);

	sim_set_map(&r->s, base, n, 1 | SWAP_HAS_CACHE);
	for (i = 0; i < n; i++)
		k->st[p + i] = K_CACHE;
	if (n > 1)
		r->swpout++;		/* a 64K folio written: swpout */
	k->rewritten += n;
	lru_add(k, id, true);
}

/*
 * free_swap_cache() of a kept folio that MADV_DONTNEED zaps:
 * folio_free_swap() frees its slots at once, a 64K range directly
 * (put_swap_folio()), a 4K slot through the slots cache
 * (free_swap_slot()).  The caller takes the folio off the LRU.
 */
static void k_zap_kept(struct run *r, unsigned int id)
{
	struct kmodel *k = r->k;
	unsigned int p = k_first(id), n = k_size(id), i;
	unsigned long base = k_unkeep(k, id);

	if (n > 1) {
		sim_cache_del(&r->s, base);
	} else {
		/*
		 * The sim's cache_del frees a SWAP_HAS_CACHE-only slot at
		 * once: the cache goes with the count still up, as at a 4K
		 * minor fault, and the final free waits in slots_ret.
		 */
		sim_set_map(&r->s, base, 1, 1 | SWAP_HAS_CACHE);
		sim_cache_del(&r->s, base);
		k_free_slot(r, base);
	}
	for (i = 0; i < n; i++) {
		k->st[p + i] = K_MAPPED;
		k->slot[p + i] = 0;
	}
	k->kept_zapped += n;
}

/*
 * sim_dev::on_free: the allocators' reclaim of swap-cache-only slots
 * (__try_to_reclaim_swap() with TTRS_ANYWAY) freed @nr slots at @off.  In
 * this model only kept folios have such slots: folio_free_swap() took
 * the folio, still mapped, out of the swap cache; a plain mapped folio
 * now, it needs a new slot at its next page-out.
 */
static void k_reclaimed(struct sim_dev *sd, unsigned long off, unsigned int nr,
			void *arg)
{
	struct run *r = arg;
	struct kmodel *k = r->k;
	unsigned int id, p, i;

	if (off >= sd->max || !k->kept_by[off])
		die("memcg model: the allocator reclaimed a slot no kept folio has");
	id = k->kept_by[off] - 1;
	p = k_first(id);
	if (k->slot[p] != off || k_size(id) != nr)
		die("memcg model: the allocator reclaimed part of a kept folio");
	k_unkeep(k, id);
	for (i = 0; i < nr; i++) {
		k->st[p + i] = K_MAPPED;
		k->slot[p + i] = 0;
	}
	k->kept_reclaimed += nr;
	if (k->in_worker)
		k->worker_kept += nr;
}

/*
 * module/main.c's reclaim work (swapalloc_reclaim_background(): a forced
 * full-cluster reclaim pass), which core.c kicks when fewer than a
 * cluster's worth of slots is free and swap is over half full.  It runs
 * on another CPU soon after; here right after the allocation that kicked
 * it, and its swap-map reads are not counted as the allocation's.
 * 6.12's own reclaim work (kicked when the device fills up) is not in
 * builtin612.c: it would find nothing to free here, builtin keeps no
 * folio and the slots caches' slots have no folio.
 */
static void k_reclaim_work(struct run *r)
{
	struct kmodel *k = r->k;
	unsigned long reads;

	if (r->s.sd.cnt.kick_reclaim == k->kicks)
		return;
	k->kicks = r->s.sd.cnt.kick_reclaim;
	reads = r->s.sd.cnt.map_reads;
	k->in_worker = true;
	sim_reclaim_work(&r->s);
	k->in_worker = false;
	k->worker_reads += r->s.sd.cnt.map_reads - reads;
	r->s.sd.cnt.map_reads = reads;
	k->worker_runs++;
}

/*
 * Page out a mapped folio (shrink_folio_list()): a 64K folio asks for
 * order 4, else it is split and counted as a fallback, and its pages are
 * appended to @split (or paged out at once if @split is NULL).
 */
static void k_swapout(struct run *r, unsigned int id, unsigned int *split,
		      unsigned int *nr_split)
{
	struct kmodel *k = r->k;
	unsigned int p = k_first(id), i;
	unsigned long off;

	if (k->st[p] == K_KEPT) {
		k_rewrite(r, id);
		return;
	}
	if (id >= NPAGES) {
		off = ss_alloc_usage(r, 4, SWAP_HAS_CACHE);
		if (off) {
			r->swpout++;
			k_cached(r, id, off);
			return;
		}
		r->fallback++;
		lru_del(k, id);
		k->big[id - NPAGES] = false;
		for (i = 0; i < UNIT_PAGES; i++) {
			lru_add(k, p + i, false);
			k->ref[p + i] = false;
			if (split)
				split[(*nr_split)++] = p + i;
		}
		if (split)
			return;
		for (i = 0; i < UNIT_PAGES; i++)
			k_swapout(r, p + i, NULL, NULL);
		return;
	}
	off = 0;
#ifdef SWAPSIM_ORACLE
	/*
	 * The oracle: a 4K page of mem1 goes back to the slot it left at
	 * swap-in if that is still free (antifrag leaves such holes alone),
	 * bypassing the slots cache, as an allocator told the folio's old
	 * offset (or its neighbours' swap entries) could do.
	 */
	if (p < MEM1_PAGES && k->old[p] && r->alloc == AL_ANTIFRAG) {
		oracle_tries++;
		if (!r->s.sd.swap_map[k->old[p]]) {
			sim_lock(&r->s.sd);
			off = swapsim_oracle_alloc_at(&r->s.dev, k->old[p], SWAP_HAS_CACHE);
			sim_unlock(&r->s.sd);
			oracle_hits += off != 0;
		}
	}
	k->old[p] = 0;
#endif
	if (!off)
		off = k_alloc0(r);
	if (!off) {
		r->stuck++;
		lru_add(k, id, false);
		return;
	}
	k_cached(r, id, off);
}

/* Drop a clean swap-cache folio (__remove_mapping()): its slots stay in use. */
static void k_drop(struct run *r, unsigned int id)
{
	struct kmodel *k = r->k;
	unsigned int p = k_first(id), n = k_size(id), i;

	sim_cache_del(&r->s, k->slot[p]);
	for (i = 0; i < n; i++) {
		k->st[p + i] = K_SWAP;
		k->ra[p + i] = false;
	}
	if (id >= NPAGES)
		k->big[id - NPAGES] = false;
	lru_del(k, id);
	k->nres -= n;
	k->dropped += n;
}

/*
 * Memory-cgroup reclaim from the inactive list's tail, at least
 * SWAP_CLUSTER_MAX pages: swap-cache folios nobody maps are dropped; a
 * mapped folio referenced since it was last looked at gets a second trip
 * (folio_check_references(): FOLIOREF_KEEP), else it is paged out and
 * then dropped once written.
 */
static void k_reclaim(struct run *r, unsigned long want)
{
	struct kmodel *k = r->k;
	unsigned long freed = 0, budget = 4 * NIDS;
	unsigned int id;

	while (freed < want && budget--) {
		id = k->prev[LRU_HEAD];
		if (id == LRU_HEAD)
			return;
		if (k->st[k_first(id)] == K_CACHE) {
			freed += k_size(id);
			k_drop(r, id);
			continue;
		}
		if (k->ref[id]) {
			k->ref[id] = false;
			lru_add(k, id, false);
			continue;
		}
		k->evicted += k_size(id);
		k_swapout(r, id, NULL, NULL);
	}
}

static void k_charge(struct run *r, unsigned long n)
{
	struct kmodel *k = r->k;

	if (k->nres + n > k->cap)
		k_reclaim(r, max_t(unsigned long, n, RECLAIM_MIN));
}

/* A mapped page or folio comes in: resident, referenced, at the LRU head. */
static void k_map(struct kmodel *k, unsigned int id)
{
	unsigned int p = k_first(id), n = k_size(id), i;

	for (i = 0; i < n; i++) {
		k->st[p + i] = K_MAPPED;
		k->slot[p + i] = 0;
		k->ra[p + i] = false;
	}
	if (!k->on_lru[id])
		lru_add(k, id, false);
	k->ref[id] = true;
}

/*
 * swap_vma_ra_win(): the readahead window around a major fault at @p, in
 * the area [@lo, @hi) (a VMA, taken to start on a PMD boundary).
 */
static unsigned int k_ra_window(struct kmodel *k, unsigned int p, unsigned int lo,
				unsigned int hi, unsigned int *start, unsigned int *end)
{
	int area = p >= MEM1_PAGES;
	long prev = k->vra[area].prev, left, pmd = lo + ALIGN_DOWN(p - lo, PMD_PAGES);
	unsigned int hits = k->vra[area].hits, pages, last_ra, win;

	pages = hits + 2;
	if (pages == 2) {
		if (p != prev + 1 && p != prev - 1)
			pages = 1;
	} else {
		unsigned int roundup = 4;

		while (roundup < pages)
			roundup <<= 1;
		pages = roundup;
	}
	if (pages > RA_MAX_WIN)
		pages = RA_MAX_WIN;
	last_ra = k->vra[area].win / 2;
	win = pages < last_ra ? last_ra : pages;
	k->vra[area].prev = p;
	k->vra[area].win = win;
	k->vra[area].hits = 0;
	if (win == 1)
		return 1;
	if (p == prev + 1)
		left = p;
	else if (prev == p + 1)
		left = (long)p - win + 1;
	else
		left = (long)p - (win - 1) / 2;
	*start = max_t(long, left, pmd);
	*end = min_t(long, min_t(long, left + win, hi), pmd + PMD_PAGES);
	return win;
}

/* A write to page @p (memset), through do_swap_page() if it is swapped. */
static void k_touch(struct run *r, unsigned int p)
{
	struct kmodel *k = r->k;
	unsigned int id = k_id(k, p), lo, hi, start = p, end = p + 1, q, n;
	int area = p >= MEM1_PAGES;
	unsigned long base;
	bool keep;

	if (k_present(k->st[p])) {
		k->ref[id] = true;
		return;
	}
	if (k->st[p] == K_CACHE) {
		/* A swap-cache hit: a large folio is mapped whole. */
		if (k->ra[p]) {
			k->ra[p] = false;
			if (k->vra[area].hits < RA_HITS_MAX)
				k->vra[area].hits++;
		}
		if (id >= NPAGES) {
			base = k->slot[k_first(id)];
			sim_set_map(&r->s, base, UNIT_PAGES, SWAP_HAS_CACHE);
			keep = k_keep(r, base, UNIT_PAGES);
			if (!keep)
				sim_cache_del(&r->s, base);	/* put_swap_folio(): range free */
			k->minor64++;
		} else {
			/*
			 * Asked before the count drops: swapalloc_keep_cache()
			 * does not read the folio's own slots.
			 */
			base = k->slot[p];
			keep = k_keep(r, base, 1);
			if (keep) {
				sim_set_map(&r->s, base, 1, SWAP_HAS_CACHE);
			} else {
				sim_cache_del(&r->s, base);
#ifdef SWAPSIM_ORACLE
				k->old[p] = base;
#endif
				k_free_slot(r, base);
			}
			k->minor4++;
		}
		k_map(k, id);
		if (keep)
			k_set_kept(r, id, base);
		return;
	}
	/* Major fault: read page @p, and its readahead window, as 4K folios. */
	lo = area ? MEM1_PAGES : 0;
	hi = area ? NPAGES : MEM1_PAGES;
	n = 1;
	if (k_ra_window(k, p, lo, hi, &start, &end) > 1)
		for (q = start, n = 0; q < end; q++)
			n += k->st[q] == K_SWAP;
	k_charge(r, n ? n : 1);
	for (q = start; q < end; q++) {
		if (q == p || k->st[q] != K_SWAP)
			continue;
		sim_cache_add(&r->s, k->slot[q], 0, false);
		k->st[q] = K_CACHE;
		k->ra[q] = true;
		lru_add(k, q, false);
		k->ref[q] = false;
		k->nres++;
		k->ra_pages++;
	}
	if (k->st[p] != K_SWAP || id != p)
		die("memcg model: faulting page not swapped");
	base = k->slot[p];
	keep = k_keep(r, base, 1);
	if (keep) {
		/* Read into the swap cache and left there; the PTE's count goes. */
		sim_cache_add(&r->s, base, 0, false);
		sim_set_map(&r->s, base, 1, SWAP_HAS_CACHE);
	} else {
#ifdef SWAPSIM_ORACLE
		k->old[p] = base;
#endif
		k_free_slot(r, base);
	}
	k->nres++;
	k->major++;
	k_map(k, p);
	if (keep)
		k_set_kept(r, p, base);
}

/* MADV_DONTNEED of unit @u (zap_pte_range()), then memset: a new 64K folio. */
static void k_dontneed_refill(struct run *r, unsigned int u)
{
	struct kmodel *k = r->k;
	unsigned int p0 = u * UNIT_PAGES, i, j, id;
	unsigned long base;
	bool all_swap;

	if (k->big[u]) {
		id = NPAGES + u;
		if (k->st[p0] == K_CACHE) {
			base = k->slot[p0];
			sim_set_map(&r->s, base, UNIT_PAGES, SWAP_HAS_CACHE);
			sim_cache_del(&r->s, base);
		} else if (k->st[p0] == K_KEPT) {
			k_zap_kept(r, id);
		}
		lru_del(k, id);
		k->nres -= UNIT_PAGES;
	} else {
		for (i = 0; i < UNIT_PAGES; ) {
			unsigned int p = p0 + i;

			if (k_present(k->st[p])) {
				if (k->st[p] == K_KEPT)
					k_zap_kept(r, p);
				lru_del(k, p);
				k->nres--;
				i++;
				continue;
			}
			/* A PTE batch: consecutive swap offsets within a cluster. */
			for (j = i + 1; j < UNIT_PAGES && !k_present(k->st[p0 + j]) &&
			     k->slot[p0 + j] == k->slot[p0 + j - 1] + 1 &&
			     k->slot[p0 + j] / CS == k->slot[p] / CS; j++)
				;
			all_swap = true;
			for (id = i; id < j; id++)
				all_swap &= k->st[p0 + id] == K_SWAP;
			if (all_swap && j - i > 1) {
				ss_free(r, k->slot[p], j - i);	/* __swap_entries_free() */
			} else {
				for (id = i; id < j; id++) {
					unsigned int q = p0 + id;

					if (k->st[q] == K_CACHE) {
						sim_cache_del(&r->s, k->slot[q]);
						lru_del(k, q);
						k->nres--;
					}
					k_free_slot(r, k->slot[q]);
				}
			}
			i = j;
		}
	}
	for (i = 0; i < UNIT_PAGES; i++) {
		k->st[p0 + i] = K_MAPPED;
		k->slot[p0 + i] = 0;
		k->ra[p0 + i] = false;
	}
	k_charge(r, UNIT_PAGES);
	k->big[u] = true;
	k->nres += UNIT_PAGES;
	k_map(k, NPAGES + u);
}

/*
 * MADV_PAGEOUT of mem1, one PMD at a time (reclaim_pages()); split
 * folios' pages go to the end of the batch.  Then mem2.
 */
static void k_pageout(struct run *r)
{
	unsigned int split[BATCH_UNITS * UNIT_PAGES], nr_split, b, u, i, p;
	struct kmodel *k = r->k;

	for (b = 0; b < MEM1_UNITS; b += BATCH_UNITS) {
		nr_split = 0;
		for (u = b; u < b + BATCH_UNITS && u < MEM1_UNITS; u++) {
			if (k->big[u]) {
				if (k_present(k->st[u * UNIT_PAGES]))
					k_swapout(r, NPAGES + u, split, &nr_split);
				continue;
			}
			for (p = u * UNIT_PAGES; p < (u + 1) * UNIT_PAGES; p++)
				if (k_present(k->st[p]))
					k_swapout(r, p, NULL, NULL);
		}
		for (i = 0; i < nr_split; i++)
			if (k_present(k->st[split[i]]))
				k_swapout(r, split[i], NULL, NULL);
	}
	if (r->small)
		for (p = MEM1_PAGES; p < NPAGES; p++)
			if (k_present(k->st[p]))
				k_swapout(r, p, NULL, NULL);
}

/*
 * SWAPSIM_VERIFY=1: after each phase, every resident page's folio is on
 * the LRU, the LRU holds as many pages as are resident, and every slot in
 * use belongs to a page or waits in the slots cache.  Each page's slot
 * reads what its state says: K_SWAP the PTE's count alone, K_CACHE the
 * count and SWAP_HAS_CACHE, K_KEPT SWAP_HAS_CACHE alone, the slot in the
 * swap cache and owned by the page's folio in kept_by[]; a mapped page
 * has no slot.  The swap cache holds exactly the K_CACHE and K_KEPT
 * pages' slots, kept_by[] exactly the K_KEPT ones, and the device's
 * place.cache_kept counts every page the model kept (builtin: none).
 */
static void k_bad_page(const char *where, unsigned int p, int st, unsigned int slot,
		       unsigned char map, const char *what)
{
	fprintf(stderr, "%s: page %u (state %d) slot %u reads %#x: %s\n", where, p, st, slot,
		map, what);
	die("memcg model inconsistent");
}

static void k_verify(struct run *r, const char *where)
{
	struct kmodel *k = r->k;
	struct sim_dev *sd = &r->s.sd;
	unsigned long lru = 0, res = 0, owned = 0, cached = 0, kept = 0, kept_by = 0, i;
	unsigned int id, p, sl;
	unsigned char map;

	for (id = k->next[LRU_HEAD]; id != LRU_HEAD; id = k->next[id]) {
		lru += k_size(id);
		if (id >= NPAGES && !k->big[id - NPAGES])
			fprintf(stderr, "%s: unit %u on lru, not big\n", where, id - NPAGES);
	}
	for (p = 0; p < NPAGES; p++) {
		if (p >= MEM1_PAGES && !r->small)
			continue;
		if (k->st[p] == K_SWAP && !k->slot[p])
			continue;		/* never faulted in yet */
		res += k->st[p] != K_SWAP;
		owned += k->st[p] != K_MAPPED;
		if (k->st[p] != K_SWAP && !k->on_lru[k_id(k, p)]) {
			fprintf(stderr, "%s: page %u resident (%d), folio %u not on lru\n", where,
				p, k->st[p], k_id(k, p));
			die("memcg model inconsistent");
		}
		sl = k->slot[p];
		if (k->st[p] == K_MAPPED) {
			if (sl)
				k_bad_page(where, p, k->st[p], sl, 0, "mapped, with a slot");
			continue;
		}
		if (!sl || sl >= sd->max)
			k_bad_page(where, p, k->st[p], sl, 0, "no slot");
		map = sd->swap_map[sl];
		switch (k->st[p]) {
		case K_SWAP:
			if (map != 1 || sd->cache_base[sl])
				k_bad_page(where, p, K_SWAP, sl, map, "swapped: not count 1 alone");
			break;
		case K_CACHE:
			cached++;
			if (map != (1 | SWAP_HAS_CACHE) || !sd->cache_base[sl])
				k_bad_page(where, p, K_CACHE, sl, map, "cached: not count 1 + cache");
			break;
		case K_KEPT:
			cached++;
			kept++;
			if (map != SWAP_HAS_CACHE || !sd->cache_base[sl])
				k_bad_page(where, p, K_KEPT, sl, map, "kept: not cache only");
			if (k->kept_by[sl] != k_id(k, p) + 1)
				k_bad_page(where, p, K_KEPT, sl, map, "kept: not its folio's in kept_by");
			if (!opt_keep_cache || r->alloc == AL_BUILTIN)
				k_bad_page(where, p, K_KEPT, sl, map, "kept, nobody asked");
			break;
		default:
			k_bad_page(where, p, k->st[p], sl, map, "unknown state");
		}
	}
	for (i = 0; i < sd->max; i++)
		kept_by += k->kept_by[i] != 0;
	if (lru != res || res != k->nres || owned + k->sc_nr + k->ret_nr != r->s.sd.inuse) {
		fprintf(stderr, "%s: lru %lu res %lu nres %lu owned %lu + %u + %u inuse %lu\n",
			where, lru, res, k->nres, owned, k->sc_nr, k->ret_nr, r->s.sd.inuse);
		die("memcg model inconsistent");
	}
	if (cached != sd->cached || kept != kept_by ||
	    k->kept != r->s.dev.place.cache_kept ||
	    k->kept != k->rewritten + k->kept_zapped + k->kept_reclaimed + kept) {
		fprintf(stderr, "%s: cached %lu sim %lu; kept %lu kept_by %lu; kept at swap-in"
			" %lu place.cache_kept %llu; rewritten %lu zapped %lu reclaimed %lu\n",
			where, cached, sd->cached, kept, kept_by, k->kept,
			(unsigned long long)r->s.dev.place.cache_kept, k->rewritten,
			k->kept_zapped, k->kept_reclaimed);
		die("memcg model inconsistent");
	}
}

static unsigned int opt_memcg_pages = 28 * 256;

static void k_init(struct run *r)
{
	struct kmodel *k = calloc(1, sizeof(*k));
	unsigned int u, p;

	if (!k)
		die("out of memory");
	r->k = k;
	k->kept_by = calloc(r->s.sd.max, sizeof(*k->kept_by));
	if (!k->kept_by)
		die("out of memory");
	r->s.sd.on_free = k_reclaimed;
	r->s.sd.on_free_arg = r;
	k->cap = opt_memcg_pages;
	k->prev[LRU_HEAD] = LRU_HEAD;
	k->next[LRU_HEAD] = LRU_HEAD;
	k->vra[0].prev = -2;
	k->vra[1].prev = -2;
	k->sc_active = true;
	/* Warm-up: memset(mem1) faults in 64K folios, then MADV_PAGEOUT. */
	for (u = 0; u < MEM1_UNITS; u++) {
		k_charge(r, UNIT_PAGES);
		k->big[u] = true;
		k->nres += UNIT_PAGES;
		k_map(k, NPAGES + u);
	}
	k_pageout(r);
	if (getenv("SWAPSIM_VERIFY"))
		k_verify(r, "warmup");
	if (r->small) {
		for (p = MEM1_PAGES; p < NPAGES; p++) {
			k_charge(r, 1);
			k->nres++;
			k_map(k, p);
		}
		k_pageout(r);
	}
}

static void k_iteration(struct run *r)
{
	unsigned int i, u, p;

	if (r->aligned) {
		for (i = 0; i < SWAPIN_UNITS; i++) {
			u = rnd(r, MEM1_UNITS);
			for (p = 0; p < UNIT_PAGES; p++)
				k_touch(r, u * UNIT_PAGES + p);
		}
	} else {
		for (i = 0; i < SWAPIN_PAGES; i++)
			k_touch(r, rnd(r, MEM1_PAGES));
	}
	if (getenv("SWAPSIM_VERIFY"))
		k_verify(r, "swapin");
	for (i = 0; i < DONTNEED_UNITS; i++)
		k_dontneed_refill(r, rnd(r, MEM1_UNITS));
	if (getenv("SWAPSIM_VERIFY"))
		k_verify(r, "dontneed");
	if (r->small)
		for (i = 0; i < DONTNEED_MEM2_PAGES; i++)
			k_touch(r, MEM1_PAGES + rnd(r, MEM2_PAGES));
	k_pageout(r);
	if (getenv("SWAPSIM_VERIFY"))
		k_verify(r, "pageout");
}

/* Give every slot back: the run's end, as the test's exit would. */
static void k_destroy(struct run *r)
{
	r->s.sd.on_free = NULL;
	free(r->k->kept_by);
	free(r->k);
	r->k = NULL;
}

static void check_run(struct run *r)
{
	char buf[256];

	if (sim_check(&r->s, buf, sizeof(buf)) || shim_warnings) {
		fprintf(stderr, "swapsim: allocator state broken: %s (%lu warnings)\n", buf,
			shim_warnings);
		exit(1);
	}
}

/* Per iteration: 64K folios swapped out whole, split, pages left in memory. */
struct iter_stat {
	unsigned long swpout, fallback, stuck;
	double pct;
	double bound_count, bound_packed;	/* the bound's fallback %, see struct bound */
	unsigned long map_reads, allocs;	/* the whole run, in [0] */
	u64 alloc_ns;
	double mean_run;		/* pages per run of consecutive offsets */
};

/* One thp_swap_allocator_test run, @iterations results into @st. */
static unsigned int opt_cpus = 1;
static FILE *opt_record;

static void run_test(enum swapin_mode swapin, bool aligned, bool small,
		     enum ss_allocator alloc, unsigned long slots, u64 seed,
		     unsigned int iterations, struct iter_stat *st)
{
	struct run *r = calloc(1, sizeof(*r));
	unsigned int it, u;

	if (!r || sim_init(&r->s, slots, alloc_policy(alloc), false))
		die("out of memory");
	r->s.dev.placement = alloc_placement(alloc);
	sim_bind(&r->s);
	r->swapin = swapin;
	r->aligned = aligned;
	r->small = small;
	r->rng = seed;
	r->cpus = opt_cpus;
	r->record = opt_record;
	r->alloc = alloc;
	bound_init(&r->bound, &r->s.sd);
	sim_set_cpu(0);

	if (swapin == SWAPIN_MEMCG) {
		k_init(r);
	} else {
		for (u = 0; u < MEM1_UNITS; u++)
			r->large[u] = true;
		pageout(r);		/* warm-up: fill and page out */
	}

	for (it = 0; it < iterations; it++) {
		r->swpout = 0;
		r->fallback = 0;
		r->stuck = 0;
		r->bound_count = 0;
		r->bound_packed = 0;
		if (swapin == SWAPIN_MEMCG) {
			k_iteration(r);
		} else {
			random_swapin(r);
			random_dontneed(r);
			pageout(r);
		}
		st[it].swpout = r->swpout;
		st[it].fallback = r->fallback;
		st[it].stuck = r->stuck;
		st[it].pct = r->swpout + r->fallback ?
			     100.0 * r->fallback / (r->swpout + r->fallback) : 0;
		st[it].bound_count = r->swpout + r->fallback ?
			100.0 * r->bound_count / (r->swpout + r->fallback) : 0;
		st[it].bound_packed = r->swpout + r->fallback ?
			100.0 * r->bound_packed / (r->swpout + r->fallback) : 0;
	}
	st[0].alloc_ns = r->alloc_ns;
	st[0].mean_run = r->runs ? (double)r->run_pages / r->runs : 0;
	if (getenv("SWAPSIM_VERIFY")) {
		struct swapalloc_order_stats *o0 = &r->s.dev.stats.order[0];

		fprintf(stderr, "%s: order-0 allocations that left holes alone: %llu;"
			" clusters adopted by order 0: %llu;"
			" slots kept at swap-in: %llu;"
			" order 0 from cursor %llu free %llu nonfull %llu frag %llu steal %llu\n",
			alloc_names[alloc], (unsigned long long)r->s.dev.place.holes_kept,
			(unsigned long long)r->s.dev.place.adopted,
			(unsigned long long)r->s.dev.place.cache_kept,
			(unsigned long long)o0->src[SA_SRC_CURSOR],
			(unsigned long long)o0->src[SA_SRC_FREE],
			(unsigned long long)o0->src[SA_SRC_NONFULL],
			(unsigned long long)o0->src[SA_SRC_FRAG],
			(unsigned long long)o0->src[SA_SRC_STEAL]);
		if (r->k)
			fprintf(stderr, "%s: memcg model: pages kept at swap-in %lu: written back"
				" to their own slot %lu, zapped %lu, slots freed by the allocator's"
				" reclaim %lu (%lu by its worker), kept at the end %lu; asked %lu"
				" times, %lu map reads; reclaim worker runs %lu, map reads %lu\n",
				alloc_names[alloc], r->k->kept, r->k->rewritten,
				r->k->kept_zapped, r->k->kept_reclaimed, r->k->worker_kept,
				r->k->kept - r->k->rewritten - r->k->kept_zapped -
				r->k->kept_reclaimed, r->k->keep_asked, r->k->keep_reads,
				r->k->worker_runs, r->k->worker_reads);
	}
#ifdef SWAPSIM_ORACLE
	if (oracle_tries)
		fprintf(stderr, "oracle: %lu of %lu 4K page-outs went back to their own slot\n",
			oracle_hits, oracle_tries);
	oracle_hits = 0;
	oracle_tries = 0;
#endif
	st[0].map_reads = r->s.sd.cnt.map_reads;
	st[0].allocs = r->s.sd.cnt.commits - r->s.sd.cnt.commit_fails;
	check_run(r);
	if (r->k)
		k_destroy(r);
	sim_destroy(&r->s);
	free(r);
}

static const struct {
	const char *name;
	bool aligned, small;
} modes[] = {
	{ "-a", true, false },
	{ "none", false, false },
	{ "-a -s", true, true },
	{ "-s", false, true },
};

#define NR_MODES	ARRAY_SIZE(modes)

static const char * const swapin_name[NR_SWAPIN] = { "whole", "4k", "memcg" };

/* Run @allocs (a mask of enum ss_allocator) in each mode; print the tables. */
static void run_all(enum swapin_mode swapin, int only_mode, unsigned int allocs,
		    unsigned long slots, u64 seed, unsigned int iterations, bool quiet)
{
	struct iter_stat *pct[NR_MODES][NR_ALLOCS] = { };
	double steady, sum;
	unsigned int m, p, it, n, from, nr_allocs = 0, one = 0;

	for (p = 0; p < NR_ALLOCS; p++)
		if (allocs & BIT(p)) {
			nr_allocs++;
			one = p;
		}
	for (m = 0; m < NR_MODES; m++) {
		if (only_mode >= 0 && (unsigned int)only_mode != m)
			continue;
		for (p = 0; p < NR_ALLOCS; p++) {
			if (!(allocs & BIT(p)))
				continue;
			pct[m][p] = calloc(iterations, sizeof(*pct[m][p]));
			if (!pct[m][p])
				die("out of memory");
			run_test(swapin, modes[m].aligned, modes[m].small, p, slots, seed,
				 iterations, pct[m][p]);
		}
	}

	printf("# swapin=%s, %lu slots, %u cpu%s, seed=%llu", swapin_name[swapin], slots,
	       opt_cpus, opt_cpus > 1 ? "s" : "", (unsigned long long)seed);
	if (swapin == SWAPIN_MEMCG)
		printf(", memcg %u pages, keep-cache %s", opt_memcg_pages,
		       opt_keep_cache ? "on" : "off");
	printf("\n");
#ifdef SWAPSIM_ORACLE
	printf("# oracle build: antifrag's 4K pages of mem1 go back to the slot they left\n");
#endif
	if (!quiet)
		printf("# 64K swpout fallback %% per iteration\n");
	if (!quiet && only_mode >= 0 && nr_allocs == 1) {
		/* One run: the upstream test's own lines, plus pages left in memory. */
		struct iter_stat *st = pct[only_mode][one];

		for (it = 0; it < iterations; it++) {
			printf("Iteration %u: swpout inc: %lu, swpout fallback inc: %lu, ",
			       it + 1, st[it].swpout, st[it].fallback);
			printf("Fallback percentage: %.2f%% (pages not swapped out: %lu)\n",
			       st[it].pct, st[it].stuck);
		}
	} else if (!quiet) {
		printf("%-5s", "iter");
		for (m = 0; m < NR_MODES; m++)
			for (p = 0; p < NR_ALLOCS; p++)
				if (pct[m][p]) {
					char col[32];

					snprintf(col, sizeof(col), "%s/%s", modes[m].name,
						 alloc_names[p]);
					printf(" %13s", col);
				}
		printf("\n");
		for (it = 0; it < iterations; it++) {
			printf("%-5u", it + 1);
			for (m = 0; m < NR_MODES; m++)
				for (p = 0; p < NR_ALLOCS; p++)
					if (pct[m][p])
						printf(" %13.2f", pct[m][p][it].pct);
			printf("\n");
		}
	}

	/* Iterations 51-100, or the second half of a shorter run. */
	from = iterations >= 2 * (STEADY_FROM - 1) ? STEADY_FROM : iterations / 2 + 1;
	printf("# steady state, swapin=%s: mean fallback %% of iterations %u-%u\n",
	       swapin_name[swapin], from, iterations);
	printf("# bound-P: the fallback perfect compaction would give on P's own requests\n");
	printf("%-7s", "mode");
	for (p = 0; p < NR_ALLOCS; p++)
		if (allocs & BIT(p))
			printf(" %8s", alloc_names[p]);
	for (p = 0; p < NR_ALLOCS; p++)
		if (allocs & BIT(p)) {
			char col[32];

			snprintf(col, sizeof(col), "bound-%s", alloc_names[p]);
			printf(" %14s", col);
		}
	printf("\n");
	for (m = 0; m < NR_MODES; m++) {
		double bc, bp;

		if (only_mode >= 0 && (unsigned int)only_mode != m)
			continue;
		printf("%-7s", modes[m].name);
		for (p = 0; p < NR_ALLOCS; p++) {
			if (!pct[m][p])
				continue;
			sum = 0;
			n = 0;
			for (it = from - 1; it < iterations; it++, n++)
				sum += pct[m][p][it].pct;
			steady = n ? sum / n : NAN;
			printf(" %8.2f", steady);
		}
		for (p = 0; p < NR_ALLOCS; p++) {
			if (!pct[m][p])
				continue;
			bc = 0;
			bp = 0;
			n = 0;
			for (it = from - 1; it < iterations; it++, n++) {
				bc += pct[m][p][it].bound_count;
				bp += pct[m][p][it].bound_packed;
			}
			printf("    %5.2f/%5.2f", n ? bc / n : NAN, n ? bp / n : NAN);
		}
		printf("\n");
	}
	if (!quiet) {
		printf("# allocation cost: swap-map reads and ns per committed allocation;\n"
		       "# run: mean pages per run of consecutive offsets, in allocation order;\n"
		       "# left: pages not swapped out (no slot) per iteration, steady state\n");
		for (m = 0; m < NR_MODES; m++) {
			if (only_mode >= 0 && (unsigned int)only_mode != m)
				continue;
			printf("%-7s", modes[m].name);
			for (p = 0; p < NR_ALLOCS; p++) {
				unsigned long nr, left = 0;

				if (!pct[m][p])
					continue;
				nr = pct[m][p][0].allocs ? pct[m][p][0].allocs : 1;
				for (it = from - 1; it < iterations; it++)
					left += pct[m][p][it].stuck;
				printf(" %s %.1f reads %.0f ns run %.1f left %.1f", alloc_names[p],
				       (double)pct[m][p][0].map_reads / nr,
				       (double)pct[m][p][0].alloc_ns / nr, pct[m][p][0].mean_run,
				       iterations >= from ?
				       (double)left / (iterations - from + 1) : 0);
			}
			printf("\n");
		}
	}
	for (m = 0; m < NR_MODES; m++)
		for (p = 0; p < NR_ALLOCS; p++)
			free(pct[m][p]);
}

/* ------------------------------------------------------------------ */
/* Trace replay */

struct tdev {
	char name[64];
	unsigned long max;		/* slots */
	struct sim s;
	unsigned int *map;		/* recorded slot -> replayed slot + 1 */
	unsigned long req[SA_NR_ORDERS], rec_fail[SA_NR_ORDERS];
	unsigned long fallback[SA_NR_ORDERS], better[SA_NR_ORDERS];
	unsigned long bound[SA_NR_ORDERS];	/* requests perfect compaction fails */
	struct bound b;
	unsigned long no_slot, frees, freed, unapplied, remapped;
};

struct tevent {
	char kind;
	int dev;
	unsigned long a, b;		/* A: order, offset; F: offset, nr */
};

static int tdev_find(struct tdev **devs, int *nr, const char *name)
{
	int i;

	for (i = 0; i < *nr; i++)
		if (!strcmp((*devs)[i].name, name))
			return i;
	*devs = realloc(*devs, (*nr + 1) * sizeof(**devs));
	if (!*devs)
		die("out of memory");
	memset(&(*devs)[*nr], 0, sizeof(**devs));
	snprintf((*devs)[*nr].name, sizeof((*devs)[*nr].name), "%s", name);
	return (*nr)++;
}

static enum ss_allocator replay_allocator;

static unsigned long replay_sim_alloc(struct sim *s, int order)
{
	unsigned long off;

	if (replay_allocator != AL_BUILTIN)
		return sim_alloc(s, order, 1);
	sim_lock(&s->sd);
	off = builtin612_alloc(&s->dev, order, 1);
	sim_unlock(&s->sd);
	return off;
}

static void replay_alloc(struct tdev *d, int order, unsigned long rec)
{
	unsigned long nr = 1UL << order, off, i, o0;

	d->req[order]++;
	if (!rec)
		d->rec_fail[order]++;
	if (order && !bound_servable(&d->b, d->s.sd.pages, d->s.sd.inuse, order, true))
		d->bound[order]++;
	off = replay_sim_alloc(&d->s, order);
	if (!rec) {
		/* The kernel split the folio and recorded order-0 requests next. */
		if (off) {
			d->better[order]++;
			sim_free(&d->s, off, nr);
		} else if (order) {
			d->fallback[order]++;
		}
		return;
	}
	if (rec + nr > d->max)
		die("trace: allocation beyond the device; use --slots");
	if (!off && order)
		d->fallback[order]++;
	for (i = 0; i < nr; i++) {
		if (d->map[rec + i])
			d->remapped++;		/* allocated twice without a free */
		if (off) {
			d->map[rec + i] = off + i + 1;
			continue;
		}
		o0 = order ? replay_sim_alloc(&d->s, 0) : 0;
		if (!o0)
			d->no_slot++;
		d->map[rec + i] = o0 ? o0 + 1 : 0;
	}
}

static void replay_free(struct tdev *d, unsigned long rec, unsigned long nr)
{
	unsigned int slots[CS];
	unsigned long i;
	unsigned int n = 0;

	d->frees++;
	if (rec + nr > d->max || nr > CS)
		die("trace: free beyond the device or longer than a cluster");
	for (i = rec; i < rec + nr; i++) {
		if (!d->map[i]) {
			d->unapplied++;
			continue;
		}
		slots[n++] = d->map[i] - 1;
		d->map[i] = 0;
		d->freed++;
	}
	/* Replayed slots in runs within one cluster, one free per run. */
	for (i = 0; i < n; ) {
		unsigned int j = i + 1;

		while (j < n && slots[j] == slots[j - 1] + 1 && slots[j] / CS == slots[i] / CS)
			j++;
		for (; i < j; ) {
			sim_free(&d->s, slots[i], j - i);
			i = j;
		}
	}
}

static int replay_trace(const char *path, unsigned long slots)
{
	enum swapalloc_policy policy = alloc_policy(replay_allocator);
	struct tevent *ev = NULL;
	struct tdev *devs = NULL;
	size_t nr_ev = 0, cap = 0, e;
	int nr_devs = 0, i, o, lineno = 0;
	char line[256], name[64];
	bool all_applied = true;
	unsigned long lost = 0;
	FILE *f = fopen(path, "r");

	if (!f) {
		perror(path);
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct tevent t;
		char kind;

		lineno++;
		if (line[0] == '#' || line[0] == '\n' || !line[0])
			continue;
		/* bpftrace's own note when its perf buffer overflowed */
		if (sscanf(line, "Lost %lu events", &t.a) == 1) {
			lost += t.a;
			continue;
		}
		if (sscanf(line, " %c %63s %lu %lu", &kind, name, &t.a, &t.b) != 4 ||
		    (kind != 'A' && kind != 'F') || (kind == 'A' && t.a >= SA_NR_ORDERS) ||
		    (kind == 'F' && !t.b)) {
			fprintf(stderr, "%s:%d: not an A or F event: %s", path, lineno, line);
			fclose(f);
			return 1;
		}
		t.kind = kind;
		t.dev = tdev_find(&devs, &nr_devs, name);
		if (nr_ev == cap) {
			cap = cap ? 2 * cap : 4096;
			ev = realloc(ev, cap * sizeof(*ev));
			if (!ev)
				die("out of memory");
		}
		ev[nr_ev++] = t;
		if (kind == 'A' && t.b + (1UL << t.a) > devs[t.dev].max)
			devs[t.dev].max = t.b + (1UL << t.a);
		if (kind == 'F' && t.a + t.b > devs[t.dev].max)
			devs[t.dev].max = t.a + t.b;
	}
	fclose(f);
	if (lost)
		fprintf(stderr, "%s: bpftrace lost %lu events while recording: %s\n", path, lost,
			"frees of lost allocations will not apply (raise BPFTRACE_PERF_RB_PAGES)");

	for (i = 0; i < nr_devs; i++) {
		struct tdev *d = &devs[i];

		d->max = slots ? slots : ALIGN(d->max, CS);
		if (d->max < CS)
			d->max = CS;
		if (sim_init(&d->s, d->max, policy, false))
			die("out of memory");
		d->s.dev.placement = alloc_placement(replay_allocator);
		sim_bind(&d->s);
		bound_init(&d->b, &d->s.sd);
		d->map = calloc(d->max, sizeof(*d->map));
		if (!d->map)
			die("out of memory");
	}
	sim_set_cpu(0);
	for (e = 0; e < nr_ev; e++) {
		struct tdev *d = &devs[ev[e].dev];

		if (ev[e].kind == 'A')
			replay_alloc(d, ev[e].a, ev[e].b);
		else
			replay_free(d, ev[e].a, ev[e].b);
	}

	printf("# trace %s: %zu events, policy %s\n", path, nr_ev,
	       alloc_names[replay_allocator]);
	for (i = 0; i < nr_devs; i++) {
		struct tdev *d = &devs[i];
		char buf[256];

		printf("device %s: %lu slots\n", d->name, d->max);
		printf("  %-5s %10s %12s %12s %12s %12s\n", "order", "requests", "recorded-fb",
		       "replayed-fb", "replay-ok", "bound-fb");
		for (o = 0; o < SA_NR_ORDERS; o++) {
			if (!d->req[o])
				continue;
			printf("  %-5d %10lu %6lu %4.1f%% %6lu %4.1f%% %12lu %6lu %4.1f%%\n", o,
			       d->req[o], d->rec_fail[o], 100.0 * d->rec_fail[o] / d->req[o],
			       d->fallback[o], 100.0 * d->fallback[o] / d->req[o], d->better[o],
			       d->bound[o], 100.0 * d->bound[o] / d->req[o]);
		}
		printf("  frees %lu (%lu slots applied, %lu not handed out in the replay)\n",
		       d->frees, d->freed, d->unapplied);
		if (d->no_slot)
			printf("  %lu slots the replay could not allocate at all\n", d->no_slot);
		if (d->remapped)
			printf("  %lu recorded slots allocated again before being freed\n",
			       d->remapped);
		if (sim_check(&d->s, buf, sizeof(buf)))
			printf("  ALLOCATOR STATE BROKEN: %s\n", buf);
		if (d->unapplied)
			all_applied = false;
		sim_destroy(&d->s);
		free(d->map);
	}
	printf("every recorded free applied: %s\n", all_applied ? "yes" : "no");
	free(ev);
	free(devs);
	return 0;
}

/* "percpu,builtin", "both" (percpu,global) or "all": a mask of allocators. */
static unsigned int parse_allocs(const char *arg)
{
	char buf[128], *tok, *save = NULL;
	unsigned int mask = 0, p;

	if (!strcmp(arg, "both"))
		return BIT(AL_PERCPU) | BIT(AL_GLOBAL);
	if (!strcmp(arg, "all"))
		return BIT(NR_ALLOCS) - 1;
	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (p = 0; p < NR_ALLOCS; p++)
			if (!strcmp(tok, alloc_names[p]))
				break;
		if (p == NR_ALLOCS)
			return 0;
		mask |= BIT(p);
	}
	return mask;
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s [-a] [-s] [--mode MODE] [--policy P] [--swapin S] [--seed N]\n"
		"          [--iterations N] [--slots N] [--cpus N] [--record FILE] [-q]\n"
		"       %s --trace FILE [--policy P] [--slots N]\n"
		"  -a, -s        as thp_swap_allocator_test; without either (nor --mode)\n"
		"                all four modes run: -a, none, -a -s, -s\n"
		"  --mode M      a, none, as or s\n"
		"  --policy P    allocators, comma-separated: percpu, global (swapalloc's),\n"
		"                builtin (6.12.117's), antifrag, antifrag-g (percpu, global\n"
		"                with SA_PLACE_ANTIFRAG); both = percpu,global (the default;\n"
		"                memcg: builtin,percpu), all; a trace replays the first\n"
		"  --swapin S    whole (default), 4k, both, or memcg (the kernel model:\n"
		"                swap cache, readahead, slots cache, a memory cgroup)\n"
		"  --memcg-pages N  pages the memcg model lets the test hold (default 7168)\n"
		"  --keep-cache on|off  memcg: ask swapalloc_keep_cache() at swap-in, as\n"
		"                patch 0010's hook does (default on, off in the oracle\n"
		"                build; builtin never keeps)\n"
		"  --cpus N      the task moves among N CPUs, once per 2 MiB batch (default 1)\n"
		"  --record F    write the run's allocations and frees to F as a trace\n"
		"  -q            only the steady-state table\n", argv0, argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "policy", required_argument, NULL, 'p' },
		{ "swapin", required_argument, NULL, 'w' },
		{ "seed", required_argument, NULL, 'S' },
		{ "iterations", required_argument, NULL, 'i' },
		{ "slots", required_argument, NULL, 'n' },
		{ "trace", required_argument, NULL, 't' },
		{ "cpus", required_argument, NULL, 'c' },
		{ "record", required_argument, NULL, 'r' },
		{ "memcg-pages", required_argument, NULL, 'M' },
		{ "keep-cache", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	int only_mode = -1, opt;
	unsigned int allocs = 0;
	bool flag_a = false, flag_s = false, quiet = false, whole = true, four_k = false;
	bool memcg = false;
	unsigned int iterations = DEFAULT_ITERATIONS;
	unsigned long slots = 0;
	const char *trace = NULL, *record = NULL;
	u64 seed = 1;

	while ((opt = getopt_long(argc, argv, "asqhm:", opts, NULL)) != -1) {
		switch (opt) {
		case 'a':
			flag_a = true;
			break;
		case 's':
			flag_s = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'm':
			if (!strcmp(optarg, "a"))
				only_mode = 0;
			else if (!strcmp(optarg, "none"))
				only_mode = 1;
			else if (!strcmp(optarg, "as"))
				only_mode = 2;
			else if (!strcmp(optarg, "s"))
				only_mode = 3;
			else
				usage(argv[0]);
			break;
		case 'p':
			allocs = parse_allocs(optarg);
			if (!allocs)
				usage(argv[0]);
			break;
		case 'w':
			whole = !strcmp(optarg, "whole") || !strcmp(optarg, "both");
			four_k = !strcmp(optarg, "4k") || !strcmp(optarg, "both");
			memcg = !strcmp(optarg, "memcg");
			if (!whole && !four_k && !memcg)
				usage(argv[0]);
			break;
		case 'M':
			opt_memcg_pages = strtoul(optarg, NULL, 0);
			if (opt_memcg_pages < 1024)
				usage(argv[0]);
			break;
		case 'K':
			if (strcmp(optarg, "on") && strcmp(optarg, "off"))
				usage(argv[0]);
			opt_keep_cache = !strcmp(optarg, "on");
			break;
		case 'S':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'i':
			iterations = strtoul(optarg, NULL, 0);
			if (!iterations)
				usage(argv[0]);
			break;
		case 'n':
			slots = strtoul(optarg, NULL, 0);
			break;
		case 't':
			trace = optarg;
			break;
		case 'c':
			opt_cpus = strtoul(optarg, NULL, 0);
			if (opt_cpus < 1 || opt_cpus > SHIM_NR_CPUS)
				usage(argv[0]);
			break;
		case 'r':
			record = optarg;
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind != argc)
		usage(argv[0]);
	if (!allocs)
		allocs = memcg ? BIT(AL_BUILTIN) | BIT(AL_PERCPU) : BIT(AL_PERCPU) | BIT(AL_GLOBAL);
	if (trace) {
		for (replay_allocator = 0; !(allocs & BIT(replay_allocator));
		     replay_allocator++)
			;
		return replay_trace(trace, slots);
	}
	if (slots && slots < 2 * CS)
		usage(argv[0]);
	if (memcg && opt_cpus > 1)
		die("--cpus is not modelled with --swapin memcg (one CPU)");
	if (flag_a || flag_s)
		only_mode = flag_a ? (flag_s ? 2 : 0) : 3;
	if (record) {
		if (only_mode < 0 || (allocs & (allocs - 1)) || (whole && four_k) || memcg)
			die("--record needs one mode, one policy and swapin whole or 4k");
		opt_record = fopen(record, "w");
		if (!opt_record)
			die("cannot write the --record file");
		fprintf(opt_record, "# A <dev> <order> <offset> / F <dev> <offset> <nr>\n");
	}
	shim_quiet_warnings = false;
	if (memcg)
		run_all(SWAPIN_MEMCG, only_mode, allocs, slots ? slots : DEFAULT_SLOTS,
			seed, iterations, quiet);
	else if (whole)
		run_all(SWAPIN_WHOLE, only_mode, allocs, slots ? slots : DEFAULT_SLOTS,
			seed, iterations, quiet);
	if (four_k)
		run_all(SWAPIN_4K, only_mode, allocs, slots ? slots : DEFAULT_SLOTS,
			seed, iterations, quiet);
	if (opt_record && fclose(opt_record))
		die("cannot write the --record file");
	return 0;
}
