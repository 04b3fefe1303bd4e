// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of rules of the allocator core that mutations of core.c
 * (tests/mutants/core.list) showed no other test pinned down: where order
 * 0 goes once its own clusters are used up (the hole-filling step, free
 * slots in partly used blocks of higher orders' clusters, before any free
 * cluster; the last-resort steal, any free slot of higher orders'
 * clusters, after the free list), the partial last cluster, the cursor
 * after a cluster fills, swapalloc_free()'s bounds.  Built like
 * test_core.c, with module/core.c included whole, as its own binary.
 */
#include "../../module/core.c"

#include "sim.h"
#include "harness.h"

#define CS		((unsigned long)SA_CLUSTER_SLOTS)
#define CL(s, i)	(&(s)->dev.clusters[i])

static struct sim *t_sim;
static unsigned long t_expected_warnings;

static void before_each(void)
{
	t_sim = NULL;
	t_expected_warnings = 0;
	shim_warnings = 0;
	shim_quiet_warnings = !t_verbose;
	shim_fail_alloc_after = -1;
	sim_set_cpu(0);
}

static void after_each(void)
{
	char buf[256];

	if (t_sim && sim_check(t_sim, buf, sizeof(buf)))
		T_FAIL("device after the test: %s", buf);
	if (shim_warnings != t_expected_warnings)
		T_FAIL("%lu warnings, expected %lu", shim_warnings, t_expected_warnings);
}

static void free_sim(void *arg)
{
	struct sim *s = arg;

	sim_destroy(s);
	free(s);
}

/*
 * A device of @max slots, cluster 0 (the header's) full, never "swap
 * full" (no reclaim gets in the way), bound.
 */
static struct sim *new_dev_slots(unsigned long max)
{
	struct sim *s = calloc(1, sizeof(*s));
	int err;

	T_ASSERT(s);
	err = sim_init(s, max, SA_POLICY_PERCPU, false);
	if (err) {
		free(s);
		T_FAIL("sim_init: %d", err);
	}
	t_defer(free_sim, s);
	sim_prefill(s, 1, CS - 1, 1);
	sim_bind(s);
	s->sd.full = SIM_FULL_OFF;
	t_sim = s;
	T_EQ(CL(s, 0)->list, SA_LIST_FULL);
	return s;
}

static struct sim *new_dev(unsigned int clusters)
{
	return new_dev_slots(clusters * CS);
}

static unsigned long alloc_ok(struct sim *s, int order)
{
	unsigned long off = sim_alloc(s, order, 1);

	if (!off)
		T_FAIL("order %d allocation failed", order);
	if (off % (1UL << order))
		T_FAIL("order %d entry at %lu is not aligned", order, off);
	return off;
}

/* Fill cluster @c with order-@order entries. */
static void fill(struct sim *s, unsigned int c, int order)
{
	while (CL(s, c)->count < CS) {
		unsigned long off = alloc_ok(s, order);

		if (off / CS != c)
			T_FAIL("order %d entry at %lu, expected cluster %u", order, off, c);
	}
}

static u64 steals(struct sim *s)
{
	return s->dev.stats.order[0].src[SA_SRC_STEAL];
}

/* ------------------------------------------------------------------ */

/*
 * No free cluster, no order-0 cluster, one wholly free 64K block in an
 * order-4 cluster: order 0 must take it (the last-resort steal), slot by
 * slot, and fail only once the device is really full.
 */
static void test_order0_steals_whole_free_block_when_nothing_else(void)
{
	struct sim *s = new_dev(2);
	unsigned long off, i;

	fill(s, 1, 4);
	T_EQ(s->dev.nr_free, 0);
	sim_free(s, CS + 32, 16);
	T_EQ(CL(s, 1)->list, SA_LIST_NONFULL);
	T_EQ(CL(s, 1)->order, 4);

	off = alloc_ok(s, 0);
	T_EQ(off, CS + 32);
	T_EQ(steals(s), 1);
	T_EQ(CL(s, 1)->order, 4);
	/* The rest of the block is now a hole of a partly used block. */
	for (i = 1; i < 16; i++)
		T_EQ(alloc_ok(s, 0), CS + 32 + i);
	T_EQ(steals(s), 16);
	T_EQ(CL(s, 1)->list, SA_LIST_FULL);
	T_EQ(sim_alloc(s, 0, 1), 0);
	T_EQ(s->dev.stats.order[0].fail, 1);
}

/*
 * Holes first: with a hole in a partly used block, a wholly free block in
 * the same order-4 cluster and a free cluster, order 0 takes the hole;
 * then, with no hole left, the free cluster, not the whole block, which
 * stays for the next 64K folio.
 */
static void test_order0_fills_holes_and_keeps_whole_blocks(void)
{
	struct sim *s = new_dev(3);
	unsigned long off;

	fill(s, 1, 4);
	sim_free(s, CS + 32, 16);		/* a whole block */
	sim_free(s, CS + 64 + 3, 1);		/* a hole in block 64..79 */
	T_EQ(s->dev.nr_free, 1);

	off = alloc_ok(s, 0);
	T_EQ(off, CS + 64 + 3);
	T_EQ(steals(s), 1);
	T_EQ(per_cpu_ptr(s->dev.pcp, 0)->next[0], 0);

	off = alloc_ok(s, 0);
	T_EQ(off, 2 * CS);			/* the free cluster */
	T_EQ(s->dev.stats.order[0].src[SA_SRC_FREE], 1);
	T_EQ(CL(s, 2)->order, 0);
	T_EQ(alloc_ok(s, 4), CS + 32);		/* the whole block is intact */
}

/*
 * The hole step looks at every block of every higher order's cluster, up
 * to the last block of the cluster; order 9 clusters (one block) too.
 */
static void test_order0_hole_in_last_block_of_each_order(void)
{
	int o;

	for (o = 1; o <= SA_CLUSTER_ORDER; o++) {
		struct sim *s = new_dev(3);
		unsigned long nr = 1UL << o, last = 2 * CS - nr;
		bool whole = o > 1 && o < SA_CLUSTER_ORDER;

		fill(s, 1, o);
		sim_free(s, last + nr - 1, 1);	/* a hole at the cluster's last slot */
		if (whole)
			sim_free(s, CS, nr);	/* and a whole block at its start */
		T_EQ(alloc_ok(s, 0), last + nr - 1);
		if (whole)
			T_EQ(alloc_ok(s, o), CS);
		T_EQ(alloc_ok(s, 0), 2 * CS);	/* then the free cluster */
		after_each();
		t_sim = NULL;
	}
}

/*
 * The last, partial cluster counts its missing slots as used, so it is
 * never free: it stays order 0 from the rebind on, takes order-0 entries
 * before any free cluster (it is nonfull[0]) and never one of a higher
 * order, even when every slot it has is free again.
 */
static void test_order0_partial_last_cluster_stays_order0(void)
{
	/* 2 clusters and 40 slots: cluster 2 has 40 slots. */
	struct sim *s = new_dev_slots(2 * CS + 40);
	unsigned long i;

	T_EQ(CL(s, 2)->list, SA_LIST_NONFULL);
	T_EQ(CL(s, 2)->count, CS - 40);
	T_EQ(s->dev.nr_free, 1);
	for (i = 0; i < 40; i++)
		T_EQ(alloc_ok(s, 0), 2 * CS + i);
	T_EQ(CL(s, 2)->list, SA_LIST_FULL);
	for (i = 0; i < 40; i++)
		sim_free(s, 2 * CS + i, 1);
	T_EQ(CL(s, 2)->list, SA_LIST_NONFULL);
	T_EQ(CL(s, 2)->order, 0);
	fill(s, 1, 4);
	T_EQ(sim_alloc(s, 4, 1), 0);
	T_EQ(s->dev.stats.order[4].fail, 1);
	T_EQ(alloc_ok(s, 0), 2 * CS);
}

/* Order 0's own clusters come before any hole in a higher order's. */
static void test_order0_own_clusters_before_holes(void)
{
	struct sim *s = new_dev(3);

	fill(s, 1, 4);
	fill(s, 2, 0);
	sim_free(s, CS + 5, 1);			/* a hole */
	sim_free(s, 2 * CS + 9, 1);		/* cluster 2: nonfull[0] */
	T_EQ(CL(s, 2)->list, SA_LIST_NONFULL);
	T_EQ(alloc_ok(s, 0), 2 * CS + 9);
	T_EQ(steals(s), 0);
	T_EQ(alloc_ok(s, 0), CS + 5);
	T_EQ(steals(s), 1);
	T_EQ(per_cpu_ptr(s->dev.pcp, 0)->next[0], 0);
	sim_free(s, CS + 6, 1);			/* another hole */
	sim_free(s, 2 * CS + 100, 1);
	T_EQ(alloc_ok(s, 0), 2 * CS + 100);
	T_EQ(alloc_ok(s, 0), CS + 6);
}

/*
 * The cursor goes on after an allocation only while the cluster has room:
 * once the cluster is full it is 0 (none), as debugfs cursors shows.
 */
static void test_cursor_cleared_when_cluster_fills(void)
{
	struct sim *s = new_dev(3);
	unsigned long off = 0;
	int o;

	for (o = 0; o < 2; o++) {
		unsigned int c = o + 1;

		while (CL(s, c)->count < CS) {
			off = alloc_ok(s, o);
			T_EQ(off / CS, c);
			if (CL(s, c)->count < CS)
				T_EQ(per_cpu_ptr(s->dev.pcp, 0)->next[o], off + (1UL << o));
		}
		T_EQ(off, (c + 1) * CS - (1UL << o));
		T_EQ(per_cpu_ptr(s->dev.pcp, 0)->next[o], 0);
		/* Filled by an entry in its middle: no cursor either. */
		sim_free(s, c * CS + 64, 1U << o);
		T_EQ(alloc_ok(s, o), c * CS + 64);
		T_EQ(CL(s, c)->list, SA_LIST_FULL);
		T_EQ(per_cpu_ptr(s->dev.pcp, 0)->next[o], 0);
	}
}

/*
 * swapalloc_free() of a range that ends past si->max, in the partial last
 * cluster, warns and changes nothing.
 */
static void test_free_past_device_end_refused(void)
{
	struct sim *s = new_dev_slots(2 * CS + 40);
	unsigned int count;

	T_EQ(alloc_ok(s, 0), 2 * CS);
	count = CL(s, 2)->count;
	sim_lock(&s->sd);
	swapalloc_free(&s->dev, 2 * CS + 40, 1);	/* one past the end */
	swapalloc_free(&s->dev, 2 * CS + 39, 2);	/* ends one past it */
	sim_unlock(&s->sd);
	t_expected_warnings = 2;
	T_EQ(shim_warnings, 2);
	T_EQ(CL(s, 2)->count, count);
}

static const struct t_case cases[] = {
	T_CASE(test_order0_steals_whole_free_block_when_nothing_else),
	T_CASE(test_order0_fills_holes_and_keeps_whole_blocks),
	T_CASE(test_order0_hole_in_last_block_of_each_order),
	T_CASE(test_order0_partial_last_cluster_stays_order0),
	T_CASE(test_order0_own_clusters_before_holes),
	T_CASE(test_cursor_cleared_when_cluster_fills),
	T_CASE(test_free_past_device_end_refused),
};

int main(int argc, char **argv)
{
	t_before_each = before_each;
	t_after_each = after_each;
	return t_main(cases, ARRAY_SIZE(cases), argc, argv);
}
