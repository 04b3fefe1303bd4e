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
 * Simplifications: one CPU and no concurrency; no swap cache (swap-in
 * frees the slots at once, so there are no SWAP_HAS_CACHE-only slots to
 * reclaim); the per-CPU swap_slots cache of 6.12 (order-0 allocations in
 * batches of 64, frees deferred in batches) is not modelled; no
 * readahead; swap-in of a unit never fails for lack of memory; the random
 * numbers are not glibc's rand(), so the offsets differ from the upstream
 * test's.  The swap device is not discard-capable (zram).
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

#include "sim.h"

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

enum swapin_mode { SWAPIN_WHOLE, SWAPIN_4K };

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

static unsigned long ss_alloc(struct run *r, int order)
{
	unsigned long off = sim_alloc(&r->s, order, 1);

	if (r->record)
		fprintf(r->record, "A swapsim %d %lu\n", order, off);
	return off;
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
};

/* One thp_swap_allocator_test run, @iterations results into @st. */
static unsigned int opt_cpus = 1;
static FILE *opt_record;

static void run_test(enum swapin_mode swapin, bool aligned, bool small,
		     enum swapalloc_policy policy, unsigned long slots, u64 seed,
		     unsigned int iterations, struct iter_stat *st)
{
	struct run *r = calloc(1, sizeof(*r));
	unsigned int it, u;

	if (!r || sim_init(&r->s, slots, policy, false))
		die("out of memory");
	sim_bind(&r->s);
	r->swapin = swapin;
	r->aligned = aligned;
	r->small = small;
	r->rng = seed;
	r->cpus = opt_cpus;
	r->record = opt_record;
	sim_set_cpu(0);

	for (u = 0; u < MEM1_UNITS; u++)
		r->large[u] = true;
	pageout(r);			/* warm-up: fill and page out */

	for (it = 0; it < iterations; it++) {
		r->swpout = 0;
		r->fallback = 0;
		r->stuck = 0;
		random_swapin(r);
		random_dontneed(r);
		pageout(r);
		st[it].swpout = r->swpout;
		st[it].fallback = r->fallback;
		st[it].stuck = r->stuck;
		st[it].pct = r->swpout + r->fallback ?
			     100.0 * r->fallback / (r->swpout + r->fallback) : 0;
	}
	check_run(r);
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

static void run_all(enum swapin_mode swapin, int only_mode, int only_policy,
		    unsigned long slots, u64 seed, unsigned int iterations, bool quiet)
{
	static const char * const swapin_name[] = { "whole", "4k" };
	struct iter_stat *pct[NR_MODES][2] = { };
	double steady, sum;
	unsigned int m, p, it, n, from;

	for (m = 0; m < NR_MODES; m++) {
		if (only_mode >= 0 && (unsigned int)only_mode != m)
			continue;
		for (p = 0; p < 2; p++) {
			if (only_policy >= 0 && (unsigned int)only_policy != p)
				continue;
			pct[m][p] = calloc(iterations, sizeof(*pct[m][p]));
			if (!pct[m][p])
				die("out of memory");
			run_test(swapin, modes[m].aligned, modes[m].small,
				 p ? SA_POLICY_GLOBAL : SA_POLICY_PERCPU, slots, seed,
				 iterations, pct[m][p]);
		}
	}

	printf("# swapin=%s, %lu slots, %u cpu%s, seed=%llu\n",
	       swapin_name[swapin], slots, opt_cpus, opt_cpus > 1 ? "s" : "",
	       (unsigned long long)seed);
	if (!quiet)
		printf("# 64K swpout fallback %% per iteration\n");
	if (!quiet && only_mode >= 0 && only_policy >= 0) {
		/* One run: the upstream test's own lines, plus pages left in memory. */
		struct iter_stat *st = pct[only_mode][only_policy];

		for (it = 0; it < iterations; it++) {
			printf("Iteration %u: swpout inc: %lu, swpout fallback inc: %lu, ",
			       it + 1, st[it].swpout, st[it].fallback);
			printf("Fallback percentage: %.2f%% (pages not swapped out: %lu)\n",
			       st[it].pct, st[it].stuck);
		}
	} else if (!quiet) {
		printf("%-5s", "iter");
		for (m = 0; m < NR_MODES; m++)
			for (p = 0; p < 2; p++)
				if (pct[m][p])
					printf(" %13s", "");
		printf("\n%-5s", "");
		for (m = 0; m < NR_MODES; m++)
			for (p = 0; p < 2; p++)
				if (pct[m][p]) {
					char col[32];

					snprintf(col, sizeof(col), "%s/%s", modes[m].name,
						 p ? "global" : "percpu");
					printf(" %13s", col);
				}
		printf("\n");
		for (it = 0; it < iterations; it++) {
			printf("%-5u", it + 1);
			for (m = 0; m < NR_MODES; m++)
				for (p = 0; p < 2; p++)
					if (pct[m][p])
						printf(" %13.2f", pct[m][p][it].pct);
			printf("\n");
		}
	}

	/* Iterations 51-100, or the second half of a shorter run. */
	from = iterations >= 2 * (STEADY_FROM - 1) ? STEADY_FROM : iterations / 2 + 1;
	printf("# steady state, swapin=%s: mean fallback %% of iterations %u-%u\n",
	       swapin_name[swapin], from, iterations);
	printf("%-7s %8s %8s\n", "mode", "percpu", "global");
	for (m = 0; m < NR_MODES; m++) {
		if (!pct[m][0] && !pct[m][1])
			continue;
		printf("%-7s", modes[m].name);
		for (p = 0; p < 2; p++) {
			if (!pct[m][p]) {
				printf(" %8s", "-");
				continue;
			}
			sum = 0;
			n = 0;
			for (it = from - 1; it < iterations; it++, n++)
				sum += pct[m][p][it].pct;
			steady = n ? sum / n : NAN;
			printf(" %8.2f", steady);
			free(pct[m][p]);
		}
		printf("\n");
	}
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

static void replay_alloc(struct tdev *d, int order, unsigned long rec)
{
	unsigned long nr = 1UL << order, off, i, o0;

	d->req[order]++;
	if (!rec)
		d->rec_fail[order]++;
	off = sim_alloc(&d->s, order, 1);
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
		o0 = order ? sim_alloc(&d->s, 0, 1) : 0;
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

static int replay_trace(const char *path, enum swapalloc_policy policy, unsigned long slots)
{
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
		sim_bind(&d->s);
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

	printf("# trace %s: %zu events, policy %s\n", path, nr_ev, swapalloc_policy_name(policy));
	for (i = 0; i < nr_devs; i++) {
		struct tdev *d = &devs[i];
		char buf[256];

		printf("device %s: %lu slots\n", d->name, d->max);
		printf("  %-5s %10s %12s %12s %12s\n", "order", "requests", "recorded-fb",
		       "replayed-fb", "replay-ok");
		for (o = 0; o < SA_NR_ORDERS; o++) {
			if (!d->req[o])
				continue;
			printf("  %-5d %10lu %6lu %4.1f%% %6lu %4.1f%% %12lu\n", o, d->req[o],
			       d->rec_fail[o], 100.0 * d->rec_fail[o] / d->req[o],
			       d->fallback[o], 100.0 * d->fallback[o] / d->req[o], d->better[o]);
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

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s [-a] [-s] [--mode MODE] [--policy P] [--swapin S] [--seed N]\n"
		"          [--iterations N] [--slots N] [--cpus N] [--record FILE] [-q]\n"
		"       %s --trace FILE [--policy P] [--slots N]\n"
		"  -a, -s        as thp_swap_allocator_test; without either (nor --mode)\n"
		"                all four modes run: -a, none, -a -s, -s\n"
		"  --mode M      a, none, as or s\n"
		"  --policy P    percpu, global or both (default both; trace: percpu)\n"
		"  --swapin S    whole (default), 4k or both\n"
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
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	int only_mode = -1, only_policy = -1, opt;
	bool flag_a = false, flag_s = false, quiet = false, whole = true, four_k = false;
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
			if (!strcmp(optarg, "percpu"))
				only_policy = 0;
			else if (!strcmp(optarg, "global"))
				only_policy = 1;
			else if (strcmp(optarg, "both"))
				usage(argv[0]);
			break;
		case 'w':
			whole = !strcmp(optarg, "whole") || !strcmp(optarg, "both");
			four_k = !strcmp(optarg, "4k") || !strcmp(optarg, "both");
			if (!whole && !four_k)
				usage(argv[0]);
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
	if (trace)
		return replay_trace(trace, only_policy == 1 ? SA_POLICY_GLOBAL :
					   SA_POLICY_PERCPU, slots);
	if (slots && slots < 2 * CS)
		usage(argv[0]);
	if (flag_a || flag_s)
		only_mode = flag_a ? (flag_s ? 2 : 0) : 3;
	if (record) {
		if (only_mode < 0 || only_policy < 0 || (whole && four_k))
			die("--record needs one mode, one policy and one swapin");
		opt_record = fopen(record, "w");
		if (!opt_record)
			die("cannot write the --record file");
		fprintf(opt_record, "# A <dev> <order> <offset> / F <dev> <offset> <nr>\n");
	}
	shim_quiet_warnings = false;
	if (whole)
		run_all(SWAPIN_WHOLE, only_mode, only_policy, slots ? slots : DEFAULT_SLOTS,
			seed, iterations, quiet);
	if (four_k)
		run_all(SWAPIN_4K, only_mode, only_policy, slots ? slots : DEFAULT_SLOTS,
			seed, iterations, quiet);
	if (opt_record && fclose(opt_record))
		die("cannot write the --record file");
	return 0;
}
