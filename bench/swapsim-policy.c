// SPDX-License-Identifier: GPL-2.0
/*
 * swapsim: the allocators it runs (swapalloc's policies and placements,
 * 6.12's builtin), timed and recorded allocation and free calls.
 */
#include "swapsim.h"

const char * const alloc_names[NR_ALLOCS] = {
	[AL_PERCPU] = "percpu",
	[AL_GLOBAL] = "global",
	[AL_BUILTIN] = "builtin",
	[AL_ANTIFRAG] = "antifrag",		/* percpu, SA_PLACE_ANTIFRAG */
	[AL_ANTIFRAG_G] = "antifrag-g",	/* global, SA_PLACE_ANTIFRAG */
};

enum swapalloc_policy alloc_policy(enum ss_allocator a)
{
	return a == AL_GLOBAL || a == AL_ANTIFRAG_G ? SA_POLICY_GLOBAL : SA_POLICY_PERCPU;
}

enum swapalloc_placement alloc_placement(enum ss_allocator a)
{
	return a == AL_ANTIFRAG || a == AL_ANTIFRAG_G ? SA_PLACE_ANTIFRAG : SA_PLACE_DEFAULT;
}

static u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

unsigned long ss_alloc_usage(struct run *r, int order, unsigned char usage)
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

unsigned long ss_alloc(struct run *r, int order)
{
	return ss_alloc_usage(r, order, 1);
}

void ss_free(struct run *r, unsigned long off, unsigned int nr)
{
	sim_free(&r->s, off, nr);
	if (r->record)
		fprintf(r->record, "F swapsim %lu %u\n", off, nr);
}

/* "percpu,builtin", "both" (percpu,global) or "all": a mask of allocators. */
unsigned int parse_allocs(const char *arg)
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

