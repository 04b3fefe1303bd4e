// SPDX-License-Identifier: GPL-2.0
/*
 * Model-based testing of the swapalloc core, see model.h.
 *
 * The reference is a plain array holding the swap_map byte every slot
 * should have, and the allocations ("entries") that own the slots.  The
 * operations are those the kernel performs on a swap device:
 *
 *  - allocations of order 0..9, weighted toward 0 and 4, with usage 1 or
 *    SWAP_HAS_CACHE (a folio added to the swap cache, busy under
 *    writeback until a later operation finishes it);
 *  - final frees of whole entries in one swapalloc_free() call (as
 *    __swap_entries_free() batches them) and of some slots one by one
 *    (pages swapped in one at a time, or zapped separately);
 *  - entries or single slots left in the swap cache only (SWAP_HAS_CACHE),
 *    reclaimable by the core when swap is full, or dropped later;
 *  - CPU switches, vm_swap_full() forced either way or automatic, swapoff
 *    (SWP_WRITEOK cleared for a while), a commit that fails as if another
 *    CPU had raced for the slot, the discard and reclaim work items,
 *    direct full-cluster reclaim, and unbind + bind (rebuild) in between;
 *  - swap-ins of single pages or small folios of an entry, as
 *    do_swap_page() does them: the slots become SWAP_HAS_CACHE only and
 *    swapalloc_keep_cache() is asked; its answer must be the reference's
 *    (SA_PLACE_ANTIFRAG, roomy, a folio smaller than its cluster's order
 *    whose block has another slot in use); slots it keeps stay in the
 *    swap cache until dropped or reclaimed, the others are freed;
 *  - with races, while the core has dropped the lock (inside reclaim,
 *    discard, forced reclaim's and check's let-go) another operation
 *    runs, as another CPU would; while a rebind's rebuild lets go, frees
 *    only (no allocation reaches an unbound device), half of them in the
 *    clusters at the rebuild's boundary.
 *
 * After every operation, and whenever the core has dropped the lock, the
 * model checks: swapalloc_check() passes, the environment's accounting
 * holds (inuse, held slots, cluster counts), every slot's swap_map byte is
 * the reference's, the reference's used count is the device's, no WARN_ON
 * fired.  Each allocation must return an aligned range within one cluster
 * whose slots were all free, and must not fail while the core's own rules
 * say it has room: a free cluster, a cluster of its order with an aligned
 * free range, or (order 0) any free slot outside discard clusters.
 */
#include <stdarg.h>

#include "model.h"

#define CS	SIM_CLUSTER_SLOTS

/*
 * Per top-level operation, at most this many full checks and other-CPU
 * operations while the lock is dropped: a forced reclaim pass may drop it
 * thousands of times.
 */
#define MODEL_HOOK_CHECKS	32
#define MODEL_HOOK_OPS		8

static __printf(2, 3) void model_fail(struct model *m, const char *fmt, ...)
{
	va_list ap;

	if (m->failed)
		return;
	m->failed = true;
	va_start(ap, fmt);
	vsnprintf(m->why, sizeof(m->why), fmt, ap);
	va_end(ap);
}

static unsigned int rnd(struct model *m, unsigned int bound)
{
	return bound <= 1 ? 0 : m->src->next(m->src, bound) % bound;
}

/* Never once the fuzzer's input has run out, so that its tail stays cheap. */
static bool chance(struct model *m, unsigned int percent)
{
	return rnd(m, 100) < percent && !m->src->exhausted;
}

/* Describe the current top-level operation, for failure reports. */
static __printf(2, 3) void model_op(struct model *m, const char *fmt, ...)
{
	va_list ap;

	if (m->depth)
		return;
	va_start(ap, fmt);
	vsnprintf(m->op, sizeof(m->op), fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------------ */
/* The reference */

static int ent_add(struct model *m, unsigned long off, unsigned int nr)
{
	if (m->nr_ent == m->cap_ent) {
		unsigned int cap = m->cap_ent ? 2 * m->cap_ent : 256;
		struct model_entry *ent = realloc(m->ent, cap * sizeof(*ent));

		if (!ent) {
			model_fail(m, "out of memory");
			return -1;
		}
		m->ent = ent;
		m->cap_ent = cap;
	}
	m->ent[m->nr_ent].off = off;
	m->ent[m->nr_ent].nr = nr;
	m->ent[m->nr_ent].live = nr;
	return m->nr_ent++;
}

static void ent_remove(struct model *m, unsigned int i)
{
	unsigned int last = --m->nr_ent;
	unsigned long s;

	if (i == last)
		return;
	m->ent[i] = m->ent[last];
	for (s = m->ent[i].off; s < m->ent[i].off + m->ent[i].nr; s++)
		if (m->owner[s] == (int)last)
			m->owner[s] = i;
}

/* The reference's byte for @slot becomes @v; 0 frees it. */
static void ref_set(struct model *m, unsigned long slot, unsigned char v)
{
	int e = m->owner[slot];

	if (!m->ref[slot] || e < 0) {
		model_fail(m, "model: slot %lu not in use", slot);
		return;
	}
	m->ref[slot] = v;
	if (v)
		return;
	m->owner[slot] = -1;
	m->ref_used--;
	if (!--m->ent[e].live)
		ent_remove(m, e);
}

/* sim's on_free: a reclaim inside the core freed a swap-cache-only folio. */
static void model_on_free(struct sim_dev *sd, unsigned long off, unsigned int nr,
			  void *arg)
{
	struct model *m = arg;
	unsigned long i;

	(void)sd;
	m->st.reclaimed += nr;
	for (i = off; i < off + nr; i++) {
		if (m->ref[i] != SWAP_HAS_CACHE) {
			model_fail(m, "reclaim freed slot %lu, which the reference has as %#x",
				   i, m->ref[i]);
			return;
		}
		ref_set(m, i, 0);
	}
}

/* Remove the folio at @base from the swap cache, in sim and reference. */
static void cache_del(struct model *m, unsigned long base)
{
	unsigned long i, nr = 1UL << m->s.sd.cache_order[base];

	sim_cache_del(&m->s, base);
	for (i = base; i < base + nr; i++)
		ref_set(m, i, m->ref[i] & ~SWAP_HAS_CACHE);
}

/* ------------------------------------------------------------------ */
/* Checks */

/*
 * Does the core's order of preference promise an order-@order entry?
 * Returns the cluster that has room plus one, or 0.
 */
static unsigned int model_room(struct model *m, int order)
{
	struct swapalloc_dev *dev = &m->s.dev;
	unsigned long nr = 1UL << order, start, end, off, i;
	unsigned int c;

	for (c = 0; c < dev->nr_clusters; c++) {
		struct swapalloc_cluster *ci = &dev->clusters[c];

		if (ci->list == SA_LIST_DISCARD)
			continue;
		start = (unsigned long)c * CS;
		end = start + CS < m->s.sd.max ? start + CS : m->s.sd.max;
		if (order && ci->list == SA_LIST_FREE)
			return c + 1;
		if (order && (order >= SA_CLUSTER_ORDER || ci->order != order ||
			      (ci->list != SA_LIST_NONFULL && ci->list != SA_LIST_FRAG)))
			continue;
		for (off = start; off + nr <= end; off += nr) {
			for (i = off; i < off + nr; i++)
				if (m->s.sd.swap_map[i])
					break;
			if (i == off + nr)
				return c + 1;
		}
	}
	return 0;
}

bool model_check(struct model *m)
{
	struct sim_dev *sd = &m->s.sd;
	unsigned long i, live = 0;
	char buf[256];
	unsigned int e;

	if (m->failed)
		return false;
	if (sim_check(&m->s, buf, sizeof(buf))) {
		model_fail(m, "%s", buf);
		return false;
	}
	/*
	 * A commit into a free cluster cannot lose a race in the kernel, so
	 * the core warns when one fails (and goes on): the injected failures
	 * into free clusters may each cause one warning, nothing else may.
	 */
	if (shim_warnings > sd->cnt.injected_free) {
		model_fail(m, "a WARN_ON fired");
		return false;
	}
	if (m->ref_used != sd->inuse) {
		model_fail(m, "reference uses %lu slots, device %lu", m->ref_used, sd->inuse);
		return false;
	}
	for (i = 0; i < sd->max; i++) {
		if (sd->bad[i])
			continue;
		if (sd->swap_map[i] == SWAP_MAP_BAD) {
			if (m->ref[i])
				model_fail(m, "slot %lu held for discard, reference has %#x",
					   i, m->ref[i]);
		} else if (sd->swap_map[i] != m->ref[i]) {
			model_fail(m, "slot %lu: swap map %#x, reference %#x", i,
				   sd->swap_map[i], m->ref[i]);
		}
		if (m->failed)
			return false;
	}
	for (e = 0; e < m->nr_ent; e++)
		live += m->ent[e].live;
	if (live != m->ref_used)
		model_fail(m, "model: entries hold %lu slots, reference %lu", live, m->ref_used);
	return !m->failed;
}

/* ------------------------------------------------------------------ */
/* Operations */

static int pick_order(struct model *m)
{
	static const unsigned char weight[SA_NR_ORDERS] = {
		40, 4, 5, 5, 30, 4, 3, 3, 3, 3,
	};
	unsigned int r = rnd(m, 100);
	int o;

	for (o = 0; o < SA_NR_ORDERS - 1; o++) {
		if (r < weight[o])
			return o;
		r -= weight[o];
	}
	return o;
}

static void op_alloc(struct model *m, int order)
{
	struct sim_dev *sd = &m->s.sd;
	unsigned long nr = 1UL << order, nested = m->nested, off, i;
	unsigned long commits = sd->cnt.commits, holds = sd->cnt.holds;
	bool has_cache = chance(m, 25), pending, hit;
	unsigned int room;
	unsigned char usage = has_cache ? SWAP_HAS_CACHE : 1;
	int cpu = shim_cpu, e;

	model_op(m, "alloc order %d usage %#x on cpu %d", order, usage, cpu);
	pending = sd->fail_commit_at > commits;
	room = sd->writable ? model_room(m, order) : 0;
	off = sim_alloc(&m->s, order, usage);
	hit = pending && sd->fail_commit_at <= sd->cnt.commits;
	if (hit)
		sd->fail_commit_at = 0;
	sim_set_cpu(cpu);
	if (!off) {
		m->st.fails[order]++;
		/*
		 * Not if another CPU ran meanwhile, an injected failure hit,
		 * or the allocation's own reclaim emptied a cluster on a
		 * discard device: that cluster went to discard with its free
		 * range (as upstream's would).
		 */
		if (room && !hit && m->nested == nested && sd->writable &&
		    sd->cnt.holds == holds) {
			struct swapalloc_cluster *ci = &m->s.dev.clusters[room - 1];

			model_fail(m, "order %d failed, cluster %u has room (%s[%u], count %u)",
				   order, room - 1, swapalloc_list_name(ci->list), ci->order,
				   ci->count);
		}
		return;
	}
	if (off % nr || off / CS != (off + nr - 1) / CS || off + nr > sd->max)
		model_fail(m, "order %d entry at %lu: not aligned, crosses a cluster or the end",
			   order, off);
	if (!sd->writable)
		model_fail(m, "order %d entry at %lu allocated after swapoff", order, off);
	for (i = off; i < off + nr && !m->failed; i++) {
		if (m->ref[i])
			model_fail(m, "slot %lu handed out twice (reference has %#x)", i,
				   m->ref[i]);
		else if (sd->swap_map[i] != usage)
			model_fail(m, "slot %lu returned but not committed (%#x)", i,
				   sd->swap_map[i]);
	}
	if (m->failed)
		return;
	e = ent_add(m, off, nr);
	if (e < 0)
		return;
	for (i = off; i < off + nr; i++) {
		m->ref[i] = usage;
		m->owner[i] = e;
	}
	m->ref_used += nr;
	m->st.allocs[order]++;
	if (has_cache)
		sim_cache_add(&m->s, off, order, true);	/* under writeback */
}

static int pick_entry(struct model *m)
{
	return m->nr_ent ? (int)rnd(m, m->nr_ent) : -1;
}

/* All references to an entry go: cache first, then the count. */
static void op_free_whole(struct model *m)
{
	unsigned long off, nr, i, live = 0;
	int e = pick_entry(m);
	long base;

	if (e < 0)
		return;
	off = m->ent[e].off;
	nr = m->ent[e].nr;
	model_op(m, "free entry %lu+%lu", off, nr);
	m->st.frees++;
	for (i = off; i < off + nr; i++) {
		base = sim_cache_folio(&m->s, i);
		if (base >= 0)
			cache_del(m, base);
	}
	for (i = off; i < off + nr; i++)
		live += !!m->ref[i];
	if (live == nr) {
		sim_free(&m->s, off, nr);
		for (i = off; i < off + nr; i++)
			ref_set(m, i, 0);
		return;
	}
	for (i = off; i < off + nr; i++) {
		if (!m->ref[i])
			continue;
		sim_free(&m->s, i, 1);
		ref_set(m, i, 0);
	}
}

/* Some slots of an entry freed one at a time, in random order. */
static void op_free_slots(struct model *m)
{
	unsigned long off, nr, i, k;
	int e = pick_entry(m);
	long base;

	if (e < 0)
		return;
	off = m->ent[e].off;
	nr = m->ent[e].nr;
	k = 1 + rnd(m, nr);
	model_op(m, "free %lu slots of entry %lu+%lu one by one", k, off, nr);
	m->st.partial_frees++;
	while (k--) {
		i = off + rnd(m, nr);
		if (!m->ref[i])
			continue;
		base = sim_cache_folio(&m->s, i);
		if (base >= 0) {
			sim_cache_split(&m->s, i);
			cache_del(m, i);
		}
		if (!m->ref[i])
			continue;
		sim_free(&m->s, i, 1);
		ref_set(m, i, 0);
	}
}

/* A whole entry swapped in and left in the swap cache. */
static void op_cache_whole(struct model *m)
{
	unsigned long off, nr, i;
	int e = pick_entry(m), order = 0;

	if (e < 0)
		return;
	off = m->ent[e].off;
	nr = m->ent[e].nr;
	for (i = off; i < off + nr; i++)
		if (m->ref[i] != 1)
			return;
	while ((1UL << order) < nr)
		order++;
	model_op(m, "entry %lu+%lu into the swap cache", off, nr);
	sim_cache_add(&m->s, off, order, false);
	for (i = off; i < off + nr; i++)
		m->ref[i] |= SWAP_HAS_CACHE;
	if (chance(m, 75)) {
		/* and unmapped: only the swap cache holds it */
		sim_set_map(&m->s, off, nr, SWAP_HAS_CACHE);
		memset(m->ref + off, SWAP_HAS_CACHE, nr);
		m->st.cache_only += nr;
	}
}

/* Some pages of an entry swapped in as small folios, left in the cache. */
static void op_cache_slots(struct model *m)
{
	unsigned long off, nr, i, k;
	int e = pick_entry(m);

	if (e < 0)
		return;
	off = m->ent[e].off;
	nr = m->ent[e].nr;
	k = 1 + rnd(m, nr);
	model_op(m, "%lu slots of entry %lu+%lu into the swap cache only", k, off, nr);
	while (k--) {
		i = off + rnd(m, nr);
		if (m->ref[i] != 1)
			continue;
		sim_cache_add(&m->s, i, 0, false);
		sim_set_map(&m->s, i, 1, SWAP_HAS_CACHE);
		m->ref[i] = SWAP_HAS_CACHE;
		m->st.cache_only++;
	}
}

/* What swapalloc_keep_cache() must answer for @nr slots at @off. */
static bool model_keep_expected(struct model *m, unsigned long off, unsigned int nr)
{
	struct swapalloc_dev *dev = &m->s.dev;
	struct swapalloc_cluster *ci = &dev->clusters[off / CS];
	unsigned long start, end, i, low;

	low = min_t(unsigned long, dev->place.low_free, dev->place.prev_low_free);
	if (dev->placement != SA_PLACE_ANTIFRAG || low < 2 * CS)
		return false;
	if (!ci->order || nr >= 1U << ci->order || ci->list == SA_LIST_FREE ||
	    ci->list == SA_LIST_DISCARD)
		return false;
	start = off & ~((1UL << ci->order) - 1);
	end = min_t(unsigned long, start + (1UL << ci->order), m->s.sd.max);
	for (i = start; i < end; i++)
		if ((i < off || i >= off + nr) && m->s.sd.swap_map[i])
			return true;
	return false;
}

/*
 * do_swap_page(): a folio of 1, 2 or 4 pages of an entry swapped in, its
 * count gone to the page tables (SWAP_HAS_CACHE only), keep_cache asked
 * under the lock; not kept, the swap cache lets go of it and the slots
 * are freed.
 */
static void op_swapin(struct model *m)
{
	unsigned long off, nr, base, i;
	unsigned int k, fnr;
	bool keep, want;
	int e = pick_entry(m);

	if (e < 0)
		return;
	off = m->ent[e].off;
	nr = m->ent[e].nr;
	k = rnd(m, 6);
	fnr = k < 4 ? 1 : 1U << (k - 3);
	if (fnr > nr)
		fnr = 1;
	base = off + rnd(m, nr / fnr) * fnr;
	for (i = base; i < base + fnr; i++)
		if (m->ref[i] != 1 || sim_cache_folio(&m->s, i) >= 0)
			return;
	model_op(m, "swap-in of %u slots at %lu (entry %lu+%lu), keep_cache asked", fnr,
		 base, off, nr);
	sim_cache_add(&m->s, base, fnr == 1 ? 0 : fnr == 2 ? 1 : 2, false);
	sim_set_map(&m->s, base, fnr, SWAP_HAS_CACHE);
	memset(m->ref + base, SWAP_HAS_CACHE, fnr);
	m->st.swapins++;
	want = model_keep_expected(m, base, fnr);
	sim_lock(&m->s.sd);
	keep = swapalloc_keep_cache(&m->s.dev, base, fnr);
	sim_unlock(&m->s.sd);
	if (keep != want) {
		model_fail(m, "keep_cache(%lu, %u) said %s, the reference %s", base, fnr,
			   keep ? "keep" : "free", want ? "keep" : "free");
		return;
	}
	if (keep)
		m->st.kept += fnr;
	else
		cache_del(m, base);
}

/* An entry in cluster @c, or -1. */
static int entry_in_cluster(struct model *m, unsigned long c)
{
	unsigned int e, n = m->nr_ent, j = rnd(m, n ? n : 1);

	for (e = 0; e < n; e++)
		if (m->ent[(e + j) % n].off / CS == c)
			return (e + j) % n;
	return -1;
}

/* Find a cached slot of a random entry; -1 if none. */
static long find_cached(struct model *m)
{
	unsigned long off, nr, i, j;
	int e = pick_entry(m);

	if (e < 0)
		return -1;
	off = m->ent[e].off;
	nr = m->ent[e].nr;
	j = rnd(m, nr);
	for (i = 0; i < nr; i++) {
		unsigned long s = off + (i + j) % nr;

		if (sim_cache_folio(&m->s, s) >= 0)
			return s;
	}
	return -1;
}

static void op_cache_drop(struct model *m)
{
	long s = find_cached(m);

	if (s < 0)
		return;
	model_op(m, "drop the folio caching slot %ld", s);
	cache_del(m, sim_cache_folio(&m->s, s));
}

static void op_writeback_done(struct model *m)
{
	long s = find_cached(m), base;

	if (s < 0)
		return;
	base = sim_cache_folio(&m->s, s);
	model_op(m, "writeback of the folio at %ld done", base);
	sim_cache_set_busy(&m->s, base, false);
}

/* A count changes: a cached page mapped again, or an entry duplicated. */
static void op_map_again(struct model *m)
{
	unsigned long off, nr, i;
	unsigned char v;
	int e = pick_entry(m);

	if (e < 0)
		return;
	off = m->ent[e].off;
	nr = m->ent[e].nr;
	i = off + rnd(m, nr);
	if (!m->ref[i])
		return;
	v = (m->ref[i] & SWAP_HAS_CACHE) | (1 + rnd(m, 3));
	model_op(m, "slot %lu count: %#x -> %#x", i, m->ref[i], v);
	sim_set_map(&m->s, i, 1, v);
	m->ref[i] = v;
}

/* A process exits: a random share of all entries is freed. */
static void op_drain(struct model *m)
{
	unsigned int pct = 20 + rnd(m, 81), n = m->nr_ent * pct / 100;

	model_op(m, "free %u%% of the entries", pct);
	while (n-- && m->nr_ent && !m->failed)
		op_free_whole(m);
	model_op(m, "free %u%% of the entries", pct);
}

static void op_swapoff(struct model *m)
{
	model_op(m, "swapoff");
	m->s.sd.writable = false;
	m->swapoff_left = 1 + rnd(m, 40);
	m->st.swapoffs++;
}

static void op_full(struct model *m)
{
	m->s.sd.full = rnd(m, 3);
	model_op(m, "swap full mode %d", m->s.sd.full);
}

static void op_cpu(struct model *m)
{
	sim_set_cpu(rnd(m, m->cfg.cpus));
	model_op(m, "cpu %d", shim_cpu);
}

static void op_discard(struct model *m)
{
	m->st.discards++;
	if (chance(m, 50)) {
		model_op(m, "discard work");
		sim_discard_work(&m->s);
	} else {
		model_op(m, "discard one");
		sim_discard_one(&m->s);
	}
}

static void op_reclaim(struct model *m)
{
	switch (rnd(m, 3)) {
	case 0:
		model_op(m, "reclaim work");
		sim_reclaim_work(&m->s);
		break;
	case 1:
		model_op(m, "reclaim full, forced");
		sim_reclaim_full(&m->s, true);
		break;
	default:
		model_op(m, "reclaim full");
		sim_reclaim_full(&m->s, false);
		break;
	}
}

static void op_fail_commit(struct model *m)
{
	m->s.sd.fail_commit_at = m->s.sd.cnt.commits + 1 + rnd(m, 4);
	model_op(m, "fail commit #%lu", m->s.sd.fail_commit_at);
}

static void op_rebind(struct model *m)
{
	model_op(m, "unbind and bind (rebuild)");
	m->st.rebinds++;
	m->depth++;		/* no allocation while unbinding */
	m->rebinding = true;
	sim_rebind(&m->s);
	m->rebinding = false;
	m->depth--;
}

static void op_target(struct model *m)
{
	m->target = 10 + rnd(m, 101);
	model_op(m, "target fill %u%%", m->target);
}

enum {
	OP_ALLOC, OP_FREE, OP_FREE_SLOTS, OP_CACHE_WHOLE, OP_CACHE_SLOTS,
	OP_CACHE_DROP, OP_WRITEBACK, OP_MAP, OP_CPU, OP_FULL, OP_DISCARD,
	OP_RECLAIM, OP_SWAPOFF, OP_FAIL_COMMIT, OP_REBIND, OP_DRAIN, OP_SWAPIN, OP_TARGET,
	NR_OPS,
};

/* Weights per mille; allocations are weighted by the fill level. */
static const unsigned short op_weight[NR_OPS] = {
	[OP_ALLOC] = 0, [OP_FREE] = 150, [OP_FREE_SLOTS] = 70,
	[OP_CACHE_WHOLE] = 50, [OP_CACHE_SLOTS] = 50, [OP_CACHE_DROP] = 50,
	[OP_WRITEBACK] = 40, [OP_MAP] = 20, [OP_CPU] = 40, [OP_FULL] = 15,
	[OP_DISCARD] = 40, [OP_RECLAIM] = 10, [OP_SWAPOFF] = 4,
	[OP_FAIL_COMMIT] = 8, [OP_REBIND] = 3, [OP_DRAIN] = 4, [OP_SWAPIN] = 60,
	[OP_TARGET] = 10,
};

static void model_random_op(struct model *m, bool nested)
{
	unsigned int fill = m->s.sd.pages ? 100 * m->ref_used / m->s.sd.pages : 100;
	unsigned int alloc_w = fill < m->target ? 700 : 250, total = alloc_w, r, op;

	for (op = 1; op < NR_OPS; op++)
		total += op_weight[op];
	r = rnd(m, total);
	if (r < alloc_w) {
		op = OP_ALLOC;
	} else {
		r -= alloc_w;
		for (op = 1; op < NR_OPS - 1 && r >= op_weight[op]; op++)
			r -= op_weight[op];
	}
	if (nested && (op == OP_REBIND || op == OP_TARGET || op == OP_FAIL_COMMIT ||
		       op == OP_DRAIN))
		op = OP_ALLOC;
	if (nested && op == OP_CPU)
		op = OP_ALLOC;

	switch (op) {
	case OP_ALLOC:
		if (nested) {
			int cpu = shim_cpu;

			sim_set_cpu(rnd(m, m->cfg.cpus));
			op_alloc(m, pick_order(m));
			sim_set_cpu(cpu);
		} else {
			op_alloc(m, pick_order(m));
		}
		break;
	case OP_FREE:
		op_free_whole(m);
		break;
	case OP_FREE_SLOTS:
		op_free_slots(m);
		break;
	case OP_CACHE_WHOLE:
		op_cache_whole(m);
		break;
	case OP_CACHE_SLOTS:
		op_cache_slots(m);
		break;
	case OP_CACHE_DROP:
		op_cache_drop(m);
		break;
	case OP_WRITEBACK:
		op_writeback_done(m);
		break;
	case OP_MAP:
		op_map_again(m);
		break;
	case OP_CPU:
		op_cpu(m);
		break;
	case OP_FULL:
		op_full(m);
		break;
	case OP_DISCARD:
		op_discard(m);
		break;
	case OP_RECLAIM:
		op_reclaim(m);
		break;
	case OP_SWAPOFF:
		op_swapoff(m);
		break;
	case OP_FAIL_COMMIT:
		op_fail_commit(m);
		break;
	case OP_REBIND:
		op_rebind(m);
		break;
	case OP_DRAIN:
		op_drain(m);
		break;
	case OP_SWAPIN:
		op_swapin(m);
		break;
	default:
		op_target(m);
		break;
	}
}

/* Entry @e goes now: its folios leave the swap cache, its slots are freed. */
static void free_entry_now(struct model *m, int e)
{
	unsigned long i, off = m->ent[e].off, nr = m->ent[e].nr;

	for (i = off; i < off + nr; i++) {
		long base = sim_cache_folio(&m->s, i);

		if (base >= 0)
			cache_del(m, base);
	}
	for (i = off; i < off + nr && !m->failed; i++) {
		if (!m->ref[i])
			continue;
		sim_free(&m->s, i, 1);
		ref_set(m, i, 0);
	}
}

/* Another CPU, while the core has dropped the lock. */
static void model_hook(struct sim_dev *sd, enum sim_event ev, unsigned long offset,
		       void *arg)
{
	struct model *m = arg;

	(void)sd;
	(void)ev;
	(void)offset;
	if (m->failed)
		return;
	if (m->rebinding) {
		/*
		 * The rebuild let go of the lock: its lists are half built,
		 * so no check; frees come in, half of them in the cluster it
		 * reads next or the one it just counted.
		 */
		if (ev != SIM_EV_RELAX || m->depth != 1 || !m->cfg.races)
			return;
		m->depth++;
		for (int k = rnd(m, 4); k-- && !m->failed;) {
			unsigned long c = m->s.dev.rebuilt - rnd(m, 2);
			int e = chance(m, 50) ? entry_in_cluster(m, c) : pick_entry(m);

			if (e < 0)
				continue;
			m->st.rebuild_frees++;
			if (chance(m, 15)) {
				/* every entry of that cluster: it empties */
				while ((e = entry_in_cluster(m, c)) >= 0 && !m->failed)
					free_entry_now(m, e);
			} else if (chance(m, 50)) {
				/* free_whole picks its own entry: free this one */
				free_entry_now(m, e);
			} else {
				op_free_slots(m);
			}
		}
		m->depth--;
		return;
	}
	if (m->check_in_hooks && m->op_checks++ < m->hook_checks && !model_check(m)) {
		char why[sizeof(m->why)];
		int n;

		memcpy(why, m->why, sizeof(why));
		n = snprintf(m->why, sizeof(m->why), "with the lock dropped (%s at %lu): ",
			     ev == SIM_EV_DISCARD ? "discard" :
			     ev == SIM_EV_RELAX ? "relax" : "reclaim", offset);
		if (n > 0 && (size_t)n < sizeof(m->why))
			memcpy(m->why + n, why,
			       min_t(size_t, strlen(why) + 1, sizeof(m->why) - n - 1));
		m->why[sizeof(m->why) - 1] = '\0';
		return;
	}
	if (m->depth || !m->cfg.races || m->op_nested >= MODEL_HOOK_OPS || !chance(m, 30))
		return;
	m->depth++;
	m->nested++;
	m->op_nested++;
	m->st.nested++;
	model_random_op(m, true);
	m->depth--;
}

int model_init(struct model *m, const struct model_cfg *cfg, struct model_src *src)
{
	unsigned long i;
	unsigned int b;
	int err;

	memset(m, 0, sizeof(*m));
	m->cfg = *cfg;
	m->src = src;
	if (m->cfg.cpus < 1 || m->cfg.cpus > SHIM_NR_CPUS)
		m->cfg.cpus = 1;
	shim_warnings = 0;
	sim_set_cpu(0);
	err = sim_init(&m->s, cfg->max, cfg->policy, cfg->discard);
	if (err)
		return err;
	for (b = 0; b < cfg->nr_bad; b++)
		sim_mark_bad(&m->s, 1 + rnd(m, cfg->max - 1));
	m->s.dev.placement = cfg->placement;
	sim_bind(&m->s);
	m->ref = calloc(cfg->max, 1);
	m->owner = malloc(cfg->max * sizeof(*m->owner));
	if (!m->ref || !m->owner) {
		model_destroy(m);
		return -ENOMEM;
	}
	for (i = 0; i < cfg->max; i++)
		m->owner[i] = -1;
	m->s.sd.on_free = model_on_free;
	m->s.sd.on_free_arg = m;
	m->s.sd.hook = model_hook;
	m->s.sd.hook_arg = m;
	m->check_in_hooks = true;
	/* A check reads the whole device: fewer of them on big ones. */
	m->hook_checks = cfg->max > 64 * CS ? 3 : MODEL_HOOK_CHECKS;
	m->target = 60;
	snprintf(m->op, sizeof(m->op), "bind");
	return 0;
}

void model_destroy(struct model *m)
{
	sim_destroy(&m->s);
	free(m->ref);
	free(m->owner);
	free(m->ent);
	m->ref = NULL;
	m->owner = NULL;
	m->ent = NULL;
}

bool model_step(struct model *m)
{
	if (m->failed)
		return false;
	m->ops++;
	m->op_checks = 0;
	m->op_nested = 0;
	if (m->swapoff_left && !--m->swapoff_left)
		m->s.sd.writable = true;
	model_random_op(m, false);
	return model_check(m);
}

void model_random_cfg(struct model_src *src, struct model_cfg *cfg,
		      unsigned int max_clusters)
{
	unsigned int clusters = 2 + src->next(src, max_clusters - 1);
	unsigned int tail = src->next(src, 3) ? 0 : src->next(src, CS - 1);

	memset(cfg, 0, sizeof(*cfg));
	cfg->max = (unsigned long)clusters * CS - tail;
	cfg->policy = src->next(src, 2) ? SA_POLICY_GLOBAL : SA_POLICY_PERCPU;
	cfg->discard = src->next(src, 2);
	cfg->races = src->next(src, 4) != 0;
	cfg->cpus = 1 + src->next(src, SHIM_NR_CPUS);
	cfg->nr_bad = src->next(src, 4);
	cfg->placement = src->next(src, 2) ? SA_PLACE_ANTIFRAG : SA_PLACE_DEFAULT;
}
