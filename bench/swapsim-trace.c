// SPDX-License-Identifier: GPL-2.0
/* swapsim: trace input: replay of recorded allocations and frees. */
#include "swapsim.h"

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

enum ss_allocator replay_allocator;

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

int replay_trace(const char *path, unsigned long slots)
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

