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
 *
 * The parts: this file, the command line and the tables; swapsim-model.c,
 * the workload and device models; swapsim-policy.c, the allocators;
 * swapsim-bound.c, the bound; swapsim-trace.c, trace replay; swapsim.h,
 * what they share.
 */
#include "swapsim.h"
void die(const char *what)
{
	fprintf(stderr, "swapsim: %s\n", what);
	exit(1);
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

