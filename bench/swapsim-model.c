// SPDX-License-Identifier: GPL-2.0
/*
 * swapsim: the workload and device models: thp_swap_allocator_test on a
 * simulated device, and the memory-cgroup kernel model (--swapin memcg).
 */
#include "swapsim.h"

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
 * model" at the top of bench/swapsim.c.
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
bool opt_keep_cache;
#else
bool opt_keep_cache = true;
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
void k_reclaim_work(struct run *r)
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

unsigned int opt_memcg_pages = 28 * 256;

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

/* One thp_swap_allocator_test run, @iterations results into @st. */
unsigned int opt_cpus = 1;
FILE *opt_record;

void run_test(enum swapin_mode swapin, bool aligned, bool small,
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

