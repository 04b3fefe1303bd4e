// SPDX-License-Identifier: GPL-2.0
/*
 * Model-based randomized test of the swapalloc core (see model.c): long
 * random operation sequences on simulated devices, every operation checked
 * against a reference.  Twelve configurations per run: per-CPU or global
 * cursors, with or without discard, with or without other CPUs running
 * while the core has dropped the lock (0-7); antifrag with races (8, 9);
 * and devices of 130 to 160 clusters, more than two of the core's
 * batches of 64, so that rebuild, check and forced reclaim let go of the
 * lock, with races, default and antifrag placement (10, 11: an eighth of
 * the operations, each checks the whole device).  Device size, bad
 * slots, CPUs and the operations are drawn from the seed.
 *
 *   test_model [-s SEED] [-n OPS] [-c CONFIG] [-v]
 *
 * The seed is printed first (seed=N); without -s it is fresh.  -n is the
 * number of operations per configuration (default 20000), -c runs one
 * configuration only.  A failure prints the command that replays it.
 * The last line is "N passed, N failed", one count per configuration.
 */
#include <getopt.h>
#include <sys/time.h>
#include <unistd.h>

#include "model.h"

#define NR_CONFIGS	12	/* 8, 9: SA_PLACE_ANTIFRAG, races; 10, 11: big */
#define BIG_CONFIG	10

struct prng {
	struct model_src src;
	u64 state;
};

/* splitmix64 */
static u64 prng_next64(struct prng *p)
{
	u64 z = (p->state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned int prng_next(struct model_src *src, unsigned int bound)
{
	struct prng *p = (struct prng *)src;

	return (unsigned int)((prng_next64(p) >> 32) % bound);
}

static void prng_init(struct prng *p, u64 seed, unsigned int config)
{
	p->src.next = prng_next;
	p->src.exhausted = false;
	p->state = seed ^ (0x5851f42d4c957f2dULL * (config + 1));
}

static u64 fresh_seed(void)
{
	struct timeval tv;
	u64 seed = 0;

	if (getentropy(&seed, sizeof(seed)) == 0 && seed)
		return seed % 1000000000000ULL;
	gettimeofday(&tv, NULL);
	return ((u64)tv.tv_sec * 1000003 + tv.tv_usec) ^ ((u64)getpid() << 20);
}

static bool run_config(u64 seed, unsigned int c, unsigned long ops, bool verbose,
		       const char *argv0)
{
	struct prng p;
	struct model_cfg cfg;
	struct model *m;
	unsigned long i;
	bool ok;
	int err, o;

	prng_init(&p, seed, c);
	model_random_cfg(&p.src, &cfg, 12);
	cfg.policy = c & 1 ? SA_POLICY_GLOBAL : SA_POLICY_PERCPU;
	cfg.discard = c & 2;
	cfg.races = c & 4 || c >= 8;
	cfg.placement = c == 8 || c == 9 || c == 11 ? SA_PLACE_ANTIFRAG : SA_PLACE_DEFAULT;
	if (c >= BIG_CONFIG) {
		cfg.max = (130 + prng_next(&p.src, 31)) * SIM_CLUSTER_SLOTS -
			  prng_next(&p.src, 2) * prng_next(&p.src, SIM_CLUSTER_SLOTS);
		cfg.policy = prng_next(&p.src, 2) ? SA_POLICY_GLOBAL : SA_POLICY_PERCPU;
		cfg.discard = prng_next(&p.src, 2);
		ops = ops / 8 ? ops / 8 : 1;
	}

	m = calloc(1, sizeof(*m));
	err = m ? model_init(m, &cfg, &p.src) : -ENOMEM;
	if (err) {
		printf("FAIL: config %u: cannot set up the model\n", c);
		free(m);
		return false;
	}
	for (i = 0; i < ops; i++)
		if (!model_step(m))
			break;
	ok = !m->failed;
	printf("%s: config %u: %s%s%s%s, %lu slots, %u cpus, %u bad, %lu ops",
	       ok ? "PASS" : "FAIL", c, swapalloc_policy_name(cfg.policy),
	       cfg.discard ? " discard" : "", cfg.races ? " races" : "",
	       cfg.placement ? " antifrag" : "", cfg.max,
	       cfg.cpus, cfg.nr_bad, m->ops);
	if (!ok) {
		printf(": %s\n", m->why);
		printf("  at op %lu: %s\n", m->ops, m->op);
		printf("  replay: %s -s %llu -n %lu -c %u\n", argv0, (unsigned long long)seed,
		       m->ops, c);
	} else {
		printf("\n");
	}
	if (verbose || !ok) {
		printf("  allocs/fails by order:");
		for (o = 0; o < SA_NR_ORDERS; o++)
			printf(" %d:%lu/%lu", o, m->st.allocs[o], m->st.fails[o]);
		printf("\n  frees %lu, partial %lu, cache-only %lu, reclaimed %lu, nested %lu,",
		       m->st.frees, m->st.partial_frees, m->st.cache_only, m->st.reclaimed,
		       m->st.nested);
		printf(" rebinds %lu, swapoffs %lu, discards %lu (done %lu),",
		       m->st.rebinds, m->st.swapoffs, m->st.discards, m->s.sd.cnt.discards);
		printf(" lock drops: reclaim %lu relax %lu\n",
		       m->s.sd.cnt.reclaim_calls, m->s.sd.cnt.relax);
		printf("  swap-ins %lu, kept %lu slots, frees during rebuilds %lu;"
		       " holes kept %llu, adopted %llu\n",
		       m->st.swapins, m->st.kept, m->st.rebuild_frees,
		       (unsigned long long)m->s.dev.place.holes_kept,
		       (unsigned long long)m->s.dev.place.adopted);
	}
	model_destroy(m);
	free(m);
	return ok;
}

int main(int argc, char **argv)
{
	unsigned long ops = 20000;
	unsigned int passed = 0, failed = 0, c;
	u64 seed = fresh_seed();
	bool verbose = false;
	int only = -1, opt;

	while ((opt = getopt(argc, argv, "s:n:c:v")) != -1) {
		switch (opt) {
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			ops = strtoul(optarg, NULL, 0);
			break;
		case 'c':
			only = atoi(optarg);
			break;
		case 'v':
			verbose = true;
			break;
		default:
			fprintf(stderr, "usage: %s [-s SEED] [-n OPS] [-c CONFIG] [-v]\n", argv[0]);
			return 2;
		}
	}
	shim_quiet_warnings = !verbose;
	printf("seed=%llu\n", (unsigned long long)seed);
	fflush(stdout);
	for (c = 0; c < NR_CONFIGS; c++) {
		if (only >= 0 && (unsigned int)only != c)
			continue;
		if (run_config(seed, c, ops, verbose, argv[0]))
			passed++;
		else
			failed++;
		fflush(stdout);
	}
	printf("seed=%llu\n", (unsigned long long)seed);
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
