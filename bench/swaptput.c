// SPDX-License-Identifier: GPL-2.0
/*
 * swaptput - swap-out and swap-in throughput of anonymous memory.
 *
 *   swaptput -s SIZE [-f 4k|64k] [-p WORKERS] [-c CHUNK] [-t SECONDS]
 *
 * WORKERS processes (default 1) page SIZE bytes in all (default unit:
 * bytes; K, M, G suffixes) out and back in, CHUNK bytes per worker at a
 * time (default 32M), so SIZE may exceed RAM.  Per chunk: mmap, fill
 * (untimed; the first quarter of every page is pseudo-random, the rest
 * zero, so zram compresses it about 4:1 and no page is same-filled), then
 *
 *   swap-out  MADV_PAGEOUT of the chunk, repeated until pagemap shows
 *             every page swapped out (each repeat on the next CPU the
 *             worker may run on: a page faulted in on another CPU can sit
 *             in that CPU's LRU batch, which MADV_PAGEOUT does not drain),
 *             then until /proc/meminfo's Writeback is 0: every write has
 *             completed (a disk writes asynchronously, zram at once);
 *   (untimed) the folios still in the swap cache (a disk's: reclaim
 *             keeps them until a later pass) are evicted through the
 *             memory cgroup's memory.reclaim, until mincore() reports no
 *             page of the chunk resident, so that swap-in reads the device;
 *   swap-in   one read per 4K page, which faults each page (or 64K folio,
 *             where the kernel swaps mTHP in) back in.
 *
 * The workers start each phase of each chunk together (a barrier in shared
 * memory); a phase of a chunk lasts from the first worker's start to the
 * last one's end, and the phase times of all chunks add up.  -f 64k asks
 * for 64K mTHP folios (MADV_HUGEPAGE; hugepages-64kB/enabled must allow
 * it), -f 4k for base pages (MADV_NOHUGEPAGE).
 *
 * Prints one line of NAME=VALUE pairs:
 *   bytes folio workers out_s in_s out_gibs in_gibs swapped_pct resident_pct
 * swapped_pct: share of pages that pagemap showed swapped out after the
 * swap-out phase; resident_pct: share still in memory (the swap cache)
 * when swap-in began.  Exit status 0; 1 when a chunk could not be paged
 * out or evicted within -t SECONDS (default 60); 2 on bad arguments or a
 * failed system call.  Run it in a memory cgroup (not the root) on a disk.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT		21
#endif

#define PAGE			4096UL
#define MAX_WORKERS		64
#define PM_SWAPPED		(1ULL << 62)

enum { PH_OUT, PH_IN, NR_PHASES };

struct shared {
	volatile int arrived[2 * NR_PHASES];	/* barrier counters, by chunk parity */
	double start[MAX_WORKERS][NR_PHASES];
	double end[MAX_WORKERS][NR_PHASES];
	double total[NR_PHASES];
	volatile int done[MAX_WORKERS];
	unsigned long pages, swapped, resident;
	int failed;
};

static struct shared *sh;
static int workers = 1, use_thp;
static unsigned long chunk = 32UL << 20;
static double limit = 60;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned long parse_size(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	switch (*end) {
	case 'k':
	case 'K':
		v <<= 10;
		end++;
		break;
	case 'm':
	case 'M':
		v <<= 20;
		end++;
		break;
	case 'g':
	case 'G':
		v <<= 30;
		end++;
		break;
	}
	if (*end || !v) {
		fprintf(stderr, "swaptput: bad size '%s' (e.g. 256M, 1G)\n", s);
		exit(2);
	}
	return v;
}

/* Every worker waits here until all have arrived for this chunk and phase. */
static void barrier(unsigned long c, int phase)
{
	int slot = (c & 1) * NR_PHASES + phase, other = (!(c & 1)) * NR_PHASES + phase;

	__atomic_add_fetch(&sh->arrived[slot], 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&sh->arrived[slot], __ATOMIC_SEQ_CST) < workers)
		sched_yield();
	/* The slot for the next chunk of this phase was used two chunks ago. */
	__atomic_store_n(&sh->arrived[other], 0, __ATOMIC_SEQ_CST);
}

/*
 * MADV_PAGEOUT isolates only folios on the LRU, and drains only the local
 * CPU's batch of folios waiting to go on it: a page the worker faulted in
 * on another CPU stays out of reach until that CPU drains its batch, which
 * an idle CPU does not do.  After a pass that left pages, move to the next
 * CPU of the worker's affinity mask (*cpu: the last one used, -1 at first),
 * so that the next pass drains that CPU's batch.
 */
static void next_cpu(const cpu_set_t *allowed, int *cpu)
{
	cpu_set_t one;
	int i, c;

	for (i = 1; i <= CPU_SETSIZE; i++) {
		c = (*cpu + i + CPU_SETSIZE) % CPU_SETSIZE;
		if (!CPU_ISSET(c, allowed))
			continue;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		if (!sched_setaffinity(0, sizeof(one), &one))
			*cpu = c;
		return;
	}
}

static unsigned long resident(char *p, unsigned long len, unsigned char *vec)
{
	unsigned long i, n = 0;

	if (mincore(p, len, vec)) {
		perror("swaptput: mincore");
		exit(2);
	}
	for (i = 0; i < len / PAGE; i++)
		n += vec[i] & 1;
	return n;
}

static unsigned long swapped(char *p, unsigned long len, int pm)
{
	unsigned long i, n = 0, npages = len / PAGE;
	size_t bytes = npages * sizeof(uint64_t);
	uint64_t *ent = malloc(bytes);
	off_t off = (uintptr_t)p / PAGE * sizeof(*ent);

	if (!ent || pread(pm, ent, bytes, off) != (ssize_t)bytes) {
		perror("swaptput: /proc/self/pagemap");
		exit(2);
	}
	for (i = 0; i < npages; i++)
		n += !!(ent[i] & PM_SWAPPED);
	free(ent);
	return n;
}

static unsigned long writeback_kib(void)
{
	char line[128];
	unsigned long kib = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f) {
		perror("swaptput: /proc/meminfo");
		exit(2);
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Writeback: %lu kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* memory.reclaim of our memory cgroup, or NULL in the root or without one. */
static char *reclaim_file(void)
{
	static char path[4096];
	char line[4000];
	FILE *f = fopen("/proc/self/cgroup", "r");

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "0::/", 4) && line[4]) {
			snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.reclaim", line + 3);
			fclose(f);
			return access(path, W_OK) ? NULL : path;
		}
	}
	fclose(f);
	return NULL;
}

static void reclaim(const char *file, unsigned long bytes)
{
	int fd = open(file, O_WRONLY);
	char buf[32];

	if (fd < 0)
		return;
	snprintf(buf, sizeof(buf), "%lu", bytes);
	/* -EAGAIN when less than asked for could be reclaimed: fine. */
	if (write(fd, buf, strlen(buf)) < 0 && errno != EAGAIN) {
		perror("swaptput: memory.reclaim");
		exit(2);
	}
	close(fd);
}

static void worker(int id, unsigned long bytes)
{
	unsigned long nchunks = (bytes + chunk - 1) / chunk, c, i;
	unsigned char *vec = malloc(chunk / PAGE);
	uint64_t x = 0x9e3779b97f4a7c15ULL * (id + 1);
	volatile unsigned long sum = 0;
	int pm = open("/proc/self/pagemap", O_RDONLY);
	char *rfile = reclaim_file();
	unsigned long n = 0;
	cpu_set_t allowed;
	int cpu;

	if (!vec || pm < 0 || sched_getaffinity(0, sizeof(allowed), &allowed)) {
		perror("swaptput: worker setup");
		exit(2);
	}
	for (c = 0; c < nchunks; c++) {
		unsigned long len = bytes - c * chunk < chunk ? bytes - c * chunk : chunk;
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		double t0;

		len &= ~(PAGE - 1);
		if (p == MAP_FAILED) {
			perror("swaptput: mmap");
			exit(2);
		}
		madvise(p, len, use_thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
		for (i = 0; i < len; i += PAGE) {
			uint64_t *w = (uint64_t *)(p + i);
			unsigned int k;

			for (k = 0; k < PAGE / 4 / sizeof(*w); k++) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				w[k] = x;
			}
		}

		barrier(c, PH_OUT);
		t0 = now();
		sh->start[id][PH_OUT] = t0;
		for (cpu = -1;;) {
			if (madvise(p, len, MADV_PAGEOUT)) {
				perror("swaptput: MADV_PAGEOUT");
				exit(2);
			}
			n = swapped(p, len, pm);
			if (n == len / PAGE)
				break;
			if (now() - t0 > limit) {
				fprintf(stderr, "swaptput: worker %d chunk %lu: %lu of %lu pages not swapped out after %.0f s\n",
					id, c, len / PAGE - n, len / PAGE, limit);
				sh->failed = 1;
				break;
			}
			next_cpu(&allowed, &cpu);
			usleep(200);
		}
		if (cpu >= 0)
			sched_setaffinity(0, sizeof(allowed), &allowed);
		while (writeback_kib() && now() - t0 <= limit)
			usleep(200);
		sh->end[id][PH_OUT] = now();
		__atomic_add_fetch(&sh->swapped, n, __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&sh->pages, len / PAGE, __ATOMIC_SEQ_CST);

		/*
		 * Each reclaim from the next CPU: a folio whose writeback
		 * completed on another CPU can wait in that CPU's LRU batch
		 * (the rotation after writeback), on no LRU list, where
		 * memory.reclaim looks only on its last retry, which a small
		 * request never reaches.  A reclaim drains the batches of the
		 * CPU it runs on.  Three runs with the worker on one CPU of
		 * two left 6-14 pages for 60 s, fewer than a batch holds (15).
		 */
		t0 = now();
		for (cpu = -1; (n = resident(p, len, vec)) && rfile && now() - t0 <= limit;) {
			next_cpu(&allowed, &cpu);
			reclaim(rfile, n * PAGE);
		}
		if (cpu >= 0)
			sched_setaffinity(0, sizeof(allowed), &allowed);
		if (n && rfile) {
			fprintf(stderr, "swaptput: worker %d chunk %lu: %lu pages still in memory after %.0f s of memory.reclaim\n",
				id, c, n, limit);
			sh->failed = 1;
		}
		__atomic_add_fetch(&sh->resident, n, __ATOMIC_SEQ_CST);

		barrier(c, PH_IN);
		sh->start[id][PH_IN] = now();
		for (i = 0; i < len; i += PAGE)
			sum += *(volatile char *)(p + i);
		sh->end[id][PH_IN] = now();

		/* The first worker adds up this chunk's phases once all are done. */
		__atomic_store_n(&sh->done[id], (int)c + 1, __ATOMIC_SEQ_CST);
		if (id == 0) {
			int w, ph;

			for (w = 0; w < workers; w++)
				while (__atomic_load_n(&sh->done[w], __ATOMIC_SEQ_CST) < (int)c + 1)
					sched_yield();
			for (ph = 0; ph < NR_PHASES; ph++) {
				double s = sh->start[0][ph], e = sh->end[0][ph];

				for (w = 1; w < workers; w++) {
					if (sh->start[w][ph] < s)
						s = sh->start[w][ph];
					if (sh->end[w][ph] > e)
						e = sh->end[w][ph];
				}
				sh->total[ph] += e - s;
			}
		}
		munmap(p, len);
	}
	exit(0);
}

int main(int argc, char **argv)
{
	unsigned long size = 0;
	double gib;
	int opt, i, status, bad = 0;
	pid_t pid[MAX_WORKERS];

	while ((opt = getopt(argc, argv, "s:f:p:c:t:")) != -1) {
		switch (opt) {
		case 's':
			size = parse_size(optarg);
			break;
		case 'c':
			chunk = parse_size(optarg);
			break;
		case 'f':
			if (!strcmp(optarg, "64k"))
				use_thp = 1;
			else if (strcmp(optarg, "4k"))
				bad = 1;
			break;
		case 'p':
			workers = atoi(optarg);
			break;
		case 't':
			limit = atof(optarg);
			break;
		default:
			bad = 1;
		}
	}
	if (bad || !size || workers < 1 || workers > MAX_WORKERS || chunk < PAGE || limit <= 0) {
		fprintf(stderr, "usage: swaptput -s SIZE [-f 4k|64k] [-p WORKERS(1-%d)] [-c CHUNK] [-t SECONDS]\n",
			MAX_WORKERS);
		return 2;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("swaptput: mmap");
		return 2;
	}
	memset(sh, 0, sizeof(*sh));
	for (i = 0; i < workers; i++) {
		pid[i] = fork();
		if (pid[i] < 0) {
			perror("swaptput: fork");
			return 2;
		}
		if (!pid[i])
			worker(i, size / workers);
	}
	for (i = 0; i < workers; i++) {
		if (waitpid(pid[i], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "swaptput: worker %d failed (status 0x%x)\n", i, status);
			return 2;
		}
	}
	gib = (double)sh->pages * PAGE / (1UL << 30);
	printf("bytes=%lu folio=%s workers=%d out_s=%.4f in_s=%.4f out_gibs=%.4f in_gibs=%.4f swapped_pct=%.2f resident_pct=%.2f\n",
	       sh->pages * PAGE, use_thp ? "64k" : "4k", workers,
	       sh->total[PH_OUT], sh->total[PH_IN],
	       gib / sh->total[PH_OUT], gib / sh->total[PH_IN],
	       sh->pages ? 100.0 * sh->swapped / sh->pages : 0.0,
	       sh->pages ? 100.0 * sh->resident / sh->pages : 0.0);
	return sh->failed;
}
