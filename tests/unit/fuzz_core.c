// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the swapalloc core: the input bytes are the
 * choices of the model test (model.c), so the fuzzer steers the same
 * operations (allocations of every order, whole and slot-by-slot frees,
 * swap-cache-only leftovers, CPU switches, swap full, swapoff, discard,
 * reclaim, rebuild, races while the lock is dropped) and every one is
 * checked against the same reference.  Any violation aborts.
 *
 *   clang -fsanitize=fuzzer,address,undefined ... (tests/unit/Makefile)
 *   build/unit/fuzz_core -max_total_time=20 [CORPUS_DIR]
 *   build/unit/fuzz_core crash-FILE        replay one input
 *
 * The first bytes choose the device (2..8 clusters, or one time in eight
 * 65..72, more than the core's batch of 64 so that rebuild and check let
 * go of the lock; maybe a partial last one, bad slots), policy, discard,
 * races, CPUs and placement (default or antifrag); each later byte, or
 * two for choices above 256, makes one choice.  At most 3000 operations
 * per input.
 */
#include <stdint.h>

#include "model.h"

#define FUZZ_MAX_OPS	3000

struct fuzz_src {
	struct model_src src;
	const uint8_t *data;
	size_t size, pos;
};

static unsigned int fuzz_next(struct model_src *src, unsigned int bound)
{
	struct fuzz_src *f = (struct fuzz_src *)src;
	unsigned int v;

	if (f->pos >= f->size) {
		src->exhausted = true;
		return 0;
	}
	v = f->data[f->pos++];
	if (bound > 256 && f->pos < f->size)
		v = v << 8 | f->data[f->pos++];
	return v % bound;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct model m;
	struct fuzz_src f = {
		.src.next = fuzz_next,
		.data = data,
		.size = size,
	};
	struct model_cfg cfg;

	shim_quiet_warnings = true;
	model_random_cfg(&f.src, &cfg, 8);
	if (!fuzz_next(&f.src, 8))
		cfg.max += (63 + fuzz_next(&f.src, 8)) * SIM_CLUSTER_SLOTS;
	if (model_init(&m, &cfg, &f.src))
		abort();
	while (!f.src.exhausted && m.ops < FUZZ_MAX_OPS) {
		if (!model_step(&m)) {
			fprintf(stderr, "fuzz_core: %s%s%s%s, %lu slots, %u cpus: op %lu (%s): %s\n",
				swapalloc_policy_name(cfg.policy), cfg.discard ? " discard" : "",
				cfg.races ? " races" : "",
				cfg.placement ? " antifrag" : "", cfg.max, cfg.cpus, m.ops, m.op,
				m.why);
			abort();
		}
	}
	model_destroy(&m);
	return 0;
}
