// SPDX-License-Identifier: GPL-2.0
/*
 * swapsteal - lead 6.12's builtin allocator into its order-0 steal from a
 * 64K cluster on a nearly full swap device, for
 * tests/guest/42-steal-swapoff.sh.
 *
 *   swapsteal -d DEVICE -c CLUSTERS -a ARMFILE
 *
 * DEVICE is the only active swap device, non-rotational, freshly swapped
 * on, CLUSTERS 2 MiB clusters big (cluster 0 holds the header); 64K mTHP
 * is "always".  The steps, each checked:
 *   1. R1, one cluster of 64K folios, is paged out: one 64K cluster full.
 *   2. R1's first page is read back: the 64K folio still in the swap
 *      cache is mapped whole, its 16 slots cached with no swap count
 *      (slots only reclaim can free).
 *   3. R2, CLUSTERS - 2 clusters of 64K folios, is paged out: no free
 *      cluster is left and more than half the device is in use
 *      (vm_swap_full()).
 *   4. R1's pages 16-47 are dropped: R1's cluster goes on the order-4
 *      nonfull list, its first slots still the cached ones, the rest of
 *      it in use.
 *   5. 1 is written to ARMFILE, and R3, 4 MiB of 4K pages, is paged out:
 *      the order-0 allocations fill cluster 0, then steal from R1's
 *      cluster, whose scan meets the cached slot first and drops si->lock
 *      to reclaim it (where the suite holds the window open).
 * Then it prints "swapsteal: holding" and waits for SIGUSR1 (the suite
 * sends it once the device is swapped off), reads every page it still
 * maps and prints "swapsteal: verified N pages, M mismatches".
 *
 * Exit status: 0; 1 on mismatches; 2 if a step did not come out as
 * needed (the scenario was not reached: the message says which); 3 on a
 * usage or system error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "figures.h"
#include "pagemap.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT		21
#endif
#define PAGE			4096UL
#define CLUSTER_PAGES		512UL
#define CLUSTER			(CLUSTER_PAGES * PAGE)
#define FOLIO_PAGES		16UL
#define SWPOUT_64K "/sys/kernel/mm/transparent_hugepage/hugepages-64kB/stats/swpout"

static const char *dev;
static int pm;

static void die(const char *what)
{
	fprintf(stderr, "swapsteal: %s: %s\n", what, strerror(errno));
	exit(3);
}

static void unreached(const char *step, const char *why, long a, long b)
{
	printf("swapsteal: scenario not reached at %s: %s (%ld, %ld)\n", step, why, a, b);
	exit(2);
}

/* A 2 MiB-aligned anonymous region of npages pages. */
static char *region(size_t npages, int advice)
{
	size_t len = npages * PAGE;
	char *p = mmap(NULL, len + CLUSTER, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	p = (char *)(((uintptr_t)p + CLUSTER - 1) & ~(CLUSTER - 1));
	if (advice && madvise(p, len, advice))
		die("madvise");
	return p;
}

static uint64_t word(int r, size_t i)
{
	return ((uint64_t)0x5357 << 48) | ((uint64_t)r << 40) | i;
}

static void fill(char *p, int r, size_t npages)
{
	size_t i;

	for (i = 0; i < npages; i++) {
		*(uint64_t *)(p + i * PAGE) = word(r, i);
		*(uint64_t *)(p + i * PAGE + PAGE - 8) = ~word(r, i);
	}
}

static size_t check(char *p, int r, size_t from, size_t to)
{
	size_t i, bad = 0;

	for (i = from; i < to; i++)
		bad += *(uint64_t *)(p + i * PAGE) != word(r, i) ||
		       *(uint64_t *)(p + i * PAGE + PAGE - 8) != ~word(r, i);
	return bad;
}

static size_t swapped(char *p, size_t npages)
{
	ssize_t n = pagemap_swapped(pm, p, npages, PAGE);

	if (n < 0)
		die("read /proc/self/pagemap");
	return n;
}

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v;

	if (!f)
		die(path);
	if (fscanf(f, "%ld", &v) != 1)
		die(path);
	fclose(f);
	return v;
}

/* Used and Size of DEVICE in /proc/swaps, in pages. */
static long swaps(int used)
{
	char name[256], type[32];
	long size, u, prio;
	FILE *f = fopen("/proc/swaps", "r");

	if (!f)
		die("/proc/swaps");
	fscanf(f, "%*[^\n]\n");
	while (fscanf(f, "%255s %31s %ld %ld %ld\n", name, type, &size, &u, &prio) == 5) {
		if (!strcmp(name, dev)) {
			fclose(f);
			return (used ? u : size) / 4;
		}
	}
	fclose(f);
	fprintf(stderr, "swapsteal: %s is not in /proc/swaps\n", dev);
	exit(3);
}

/* Page out [p, p + npages) until all of it is in swap (up to 3 passes). */
static size_t pageout(char *p, size_t npages)
{
	size_t n = 0;
	int pass;

	for (pass = 0; pass < 3 && n < npages; pass++) {
		if (madvise(p, npages * PAGE, MADV_PAGEOUT))
			die("madvise(MADV_PAGEOUT)");
		n = swapped(p, npages);
	}
	return n;
}

int main(int argc, char **argv)
{
	size_t r1n = CLUSTER_PAGES, r2n, r3n = 1024, n, bad, total;
	const char *armfile = NULL;
	long clusters = 0, out0, used, size;
	char *r1, *r2, *r3;
	volatile char c;
	sigset_t set;
	int opt, sig, fd;

	while ((opt = getopt(argc, argv, "d:c:a:")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'c':
			clusters = atol(optarg);
			break;
		case 'a':
			armfile = optarg;
			break;
		default:
			clusters = 0;
		}
	}
	if (!dev || !armfile || clusters < 4 || optind != argc) {
		fprintf(stderr, "usage: swapsteal -d DEVICE -c CLUSTERS -a ARMFILE\n");
		return 3;
	}
	r2n = (clusters - 2) * CLUSTER_PAGES;
	pm = open("/proc/self/pagemap", O_RDONLY);
	if (pm < 0)
		die("/proc/self/pagemap");
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	size = swaps(0);

	/* 1. One cluster of 64K folios. */
	r1 = region(r1n, 0);
	fill(r1, 1, r1n);
	out0 = read_long(SWPOUT_64K);
	n = pageout(r1, r1n);
	printf("swapsteal: 1. R1: %zu of %zu pages swapped, %ld 64K folios swapped out whole\n",
	       n, r1n, read_long(SWPOUT_64K) - out0);
	if (n != r1n || read_long(SWPOUT_64K) - out0 != (long)(r1n / FOLIO_PAGES))
		unreached("1", "R1 not all swapped out as 64K folios", n,
			  read_long(SWPOUT_64K) - out0);

	/* 2. Its first page back in, its slot left in the swap cache. */
	used = swaps(1);
	c = r1[0];
	(void)c;
	printf("swapsteal: 2. R1's first page read back: Used %ld -> %ld pages\n", used, swaps(1));
	if (swapped(r1, 1) || swaps(1) != used)
		unreached("2", "the read page's slot was freed", used, swaps(1));

	/* 3. Every other free cluster full of 64K folios. */
	r2 = region(r2n, 0);
	fill(r2, 2, r2n);
	out0 = read_long(SWPOUT_64K);
	n = pageout(r2, r2n);
	used = swaps(1);
	printf("swapsteal: 3. R2: %zu of %zu pages swapped, %ld 64K folios; Used %ld of %ld pages\n",
	       n, r2n, read_long(SWPOUT_64K) - out0, used, size);
	if (n != r2n || read_long(SWPOUT_64K) - out0 != (long)(r2n / FOLIO_PAGES))
		unreached("3", "R2 not all swapped out as 64K folios", n,
			  read_long(SWPOUT_64K) - out0);
	if (used * 2 <= size)
		unreached("3", "the device is not more than half full", used, size);

	/*
	 * 4. Free R1's second and third folios, behind its cached first one
	 * (the read mapped all of that 64K folio from the swap cache: its 16
	 * slots are cached, with no swap count) and before the rest, which
	 * keeps the cluster from going free when the first folio's slots are
	 * reclaimed.  Writeback must be over for the frees to be immediate.
	 */
	sleep(1);
	used = swaps(1);
	if (madvise(r1 + FOLIO_PAGES * PAGE, 2 * FOLIO_PAGES * PAGE, MADV_DONTNEED))
		die("madvise(MADV_DONTNEED)");
	printf("swapsteal: 4. R1's pages %lu-%lu dropped: Used %ld -> %ld pages\n",
	       FOLIO_PAGES, 3 * FOLIO_PAGES - 1, used, swaps(1));
	if (used - swaps(1) != (long)(2 * FOLIO_PAGES))
		unreached("4", "R1's two folios were not freed at once", used, swaps(1));
	if (swaps(1) * 2 <= size)
		unreached("4", "the device is not more than half full", swaps(1), size);

	/* 5. Order-0 allocations past cluster 0, with the hold armed. */
	r3 = region(r3n, MADV_NOHUGEPAGE);
	fill(r3, 3, r3n);
	fd = open(armfile, O_WRONLY);
	if (fd < 0 || write(fd, "1\n", 2) != 2)
		die(armfile);
	close(fd);
	n = pageout(r3, r3n);
	printf("swapsteal: 5. R3: %zu of %zu 4K pages swapped; Used %ld pages\n", n, r3n, swaps(1));

	printf("swapsteal: holding\n");
	if (sigwait(&set, &sig))
		die("sigwait");
	total = r1n - 2 * FOLIO_PAGES + r2n + r3n;
	bad = check(r1, 1, 0, FOLIO_PAGES) + check(r1, 1, 3 * FOLIO_PAGES, r1n) +
	      check(r2, 2, 0, r2n) + check(r3, 3, 0, r3n);
	printf("swapsteal: verified %zu pages, %zu mismatches\n", total, bad);
	figures_add(total * PAGE, bad);
	return bad ? 1 : 0;
}
