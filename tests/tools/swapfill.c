// SPDX-License-Identifier: GPL-2.0
/*
 * swapfill - put a given amount of anonymous memory in swap and keep it there.
 *
 *   swapfill -s SIZE [-p PASSES] [-z] [-T] [-w] [-H] [-V]
 *
 * Maps SIZE bytes of anonymous memory (MADV_NOHUGEPAGE: 4K pages), writes a
 * non-zero word into every page, pushes the region to swap with
 * MADV_PAGEOUT (up to PASSES times, default 1, while pages are still
 * resident) and prints
 *   swapfill: swapped N of M pages
 * counted with /proc/self/pagemap (bit 62: the PTE is a swap entry).  A page
 * left resident is one whose swap allocation failed (or that reclaim
 * skipped); the guest suites compare N with M.
 *
 *   -z  write zeroes instead: every page is a zero-filled page of its own,
 *       which swap-out keeps in the device's zeromap, writing nothing
 *   -T  leave the region to THP instead of MADV_NOHUGEPAGE: with an mTHP
 *       size enabled in sysfs, its folios (and swap entries) are that size
 *   -w  after writing, print "swapfill: ready" and wait for SIGUSR1 before
 *       paging out, so that a suite can page out at a moment it chooses
 *   -H  after paging out, print "swapfill: holding" and keep the memory
 *       (and so its swap slots) until SIGTERM or SIGINT
 *   -V  then (after the hold, with -H) read every page back (swapping it
 *       in) and print "swapfill: verified N pages, M mismatches"; a page
 *       holding another page's word was given a slot someone else wrote
 *       to.  The slots are freed at exit from the swap cache, one by one
 *       through the swap slot cache, where without -V they go with the
 *       page tables, a run of slots at a time
 *
 * Exit status: 0, 1 on mismatches (-V), or 3 on a usage or system error.
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
#ifndef MADV_NOHUGEPAGE
#define MADV_NOHUGEPAGE		15
#endif

static void die(const char *what)
{
	fprintf(stderr, "swapfill: %s: %s\n", what, strerror(errno));
	exit(3);
}

static unsigned long long parse_size(const char *s)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		return 0;
	switch (*end) {
	case 'G':
	case 'g':
		v <<= 10;
		__attribute__((fallthrough));
	case 'M':
	case 'm':
		v <<= 10;
		__attribute__((fallthrough));
	case 'K':
	case 'k':
		v <<= 10;
		end++;
		break;
	case '\0':
		break;
	default:
		return 0;
	}
	return *end ? 0 : v;
}

/* Pages of [p, p + npages) whose PTE holds a swap entry. */
static size_t count_swapped(int pm, char *p, size_t npages, long psz)
{
	ssize_t n = pagemap_swapped(pm, p, npages, psz);

	if (n < 0)
		die("read /proc/self/pagemap");
	return n;
}

int main(int argc, char **argv)
{
	unsigned long long size = 0;
	int opt, passes = 1, wait_go = 0, hold = 0, check = 0, thp = 0, pm, sig, pass;
	uint64_t tag = 0x5a5a000000000000ULL;
	size_t npages, i, swapped = 0, bad = 0;
	long psz = sysconf(_SC_PAGESIZE);
	sigset_t set;
	char *p;

	while ((opt = getopt(argc, argv, "s:p:zTwHV")) != -1) {
		switch (opt) {
		case 's':
			size = parse_size(optarg);
			break;
		case 'p':
			passes = atoi(optarg);
			break;
		case 'z':
			tag = 0;
			break;
		case 'T':
			thp = 1;
			break;
		case 'w':
			wait_go = 1;
			break;
		case 'H':
			hold = 1;
			break;
		case 'V':
			check = 1;
			break;
		default:
			size = 0;
			passes = 0;
			break;
		}
	}
	if (!size || passes < 1 || optind != argc) {
		fprintf(stderr, "usage: swapfill -s SIZE [-p PASSES] [-z] [-T] [-w] [-H] [-V]\n");
		return 3;
	}
	npages = size / psz;

	/* Block the signals we wait for before anyone can send them. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		die("sigprocmask");

	p = mmap(NULL, npages * psz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	if (!thp)
		madvise(p, npages * psz, MADV_NOHUGEPAGE);
	for (i = 0; i < npages; i++)
		*(uint64_t *)(p + i * psz) = tag ? tag | i : 0;
	pm = open("/proc/self/pagemap", O_RDONLY);
	if (pm < 0)
		die("open /proc/self/pagemap");

	if (wait_go) {
		printf("swapfill: ready\n");
		fflush(stdout);
		do {
			if (sigwait(&set, &sig))
				die("sigwait");
		} while (sig != SIGUSR1 && sig != SIGTERM && sig != SIGINT);
		if (sig != SIGUSR1)
			return 0;
	}
	for (pass = 0; pass < passes; pass++) {
		if (madvise(p, npages * psz, MADV_PAGEOUT))
			die("madvise(MADV_PAGEOUT)");
		swapped = count_swapped(pm, p, npages, psz);
		if (swapped == npages)
			break;
	}
	printf("swapfill: swapped %zu of %zu pages\n", swapped, npages);
	fflush(stdout);
	if (hold) {
		printf("swapfill: holding\n");
		fflush(stdout);
		do {
			if (sigwait(&set, &sig))
				die("sigwait");
		} while (sig != SIGTERM && sig != SIGINT);
	}
	if (check) {
		for (i = 0; i < npages; i++)
			if (*(uint64_t *)(p + i * psz) != (tag ? tag | i : 0))
				bad++;
		printf("swapfill: verified %zu pages, %zu mismatches\n", npages, bad);
		fflush(stdout);
		figures_add((uint64_t)npages * psz, bad);
	}
	return bad ? 1 : 0;
}
