// SPDX-License-Identifier: GPL-2.0
/*
 * swapverify - data-integrity check for swap slot allocation.
 *
 * Proves that no swap slot was handed out twice: every 4K page of an
 * anonymous region gets a pattern unique to (seed, process, iteration,
 * chunk, page), is pushed to swap with MADV_PAGEOUT, read back and checked.
 * If two pages ever share a slot, one of them reads back the other's data,
 * and the header of what was found names the page it really belongs to.
 *
 * Each process works through SIZE bytes in chunks of CHUNK, so the total
 * written may exceed RAM. Per chunk: mmap, fill, page out, count the pages
 * that really left memory (/proc/self/pagemap bit 62, else mincore()),
 * verify; then for every further iteration rewrite some pages and drop
 * others with MADV_DONTNEED (frees slots, allocates new ones), page out and
 * verify again. A chunk then stays mapped and swapped out while the next
 * KEEP chunks are written, and is verified once more before munmap(), so
 * slot allocations and frees of different chunks interleave.
 *
 * Page layout (page size units, normally 4K):
 *   word 0      header: proc << 52 | iter << 40 | chunk << 24 | page
 *   word 1..n   xorshift64 stream seeded from (seed, header)
 * A page dropped with MADV_DONTNEED must read back as zeroes.
 *
 * Exit status: 0 all verified and something was swapped out (or -n),
 * 1 mismatches found, 2 nothing was swapped out, 3 usage or runtime error
 * (including a worker killed by a signal, e.g. SIGBUS on a swap-in error).
 *
 * Checker self-test: SWAPVERIFY_CORRUPT=N flips one byte in N pages of each
 * process's first chunk right after its first page-out (the write faults the
 * page back in); the second of them instead gets its neighbour's contents, as
 * if the two had shared a slot. Every such run must report exactly N
 * mismatches per process and exit 1; if it does not, the checker is broken.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "figures.h"
#include "pagemap.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT		21
#endif
#ifndef MADV_HUGEPAGE
#define MADV_HUGEPAGE		14
#endif
#ifndef MADV_NOHUGEPAGE
#define MADV_NOHUGEPAGE		15
#endif

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

#define SZ_64K			(64UL << 10)
#define MTHP_DIR		"/sys/kernel/mm/transparent_hugepage"

/* Header bit fields: 12 + 12 + 16 + 24 = 64 bits. */
#define HDR_PROC_SHIFT		52
#define HDR_ITER_SHIFT		40
#define HDR_CHUNK_SHIFT		24
#define MAX_PROCS		1024
#define MAX_ITERS		4095
#define MAX_CHUNKS		65536
#define MAX_CHUNK_PAGES		(1UL << 24)

#define GEN_ZERO		0xffff	/* page dropped with MADV_DONTNEED */
#define MAX_REPORT		8	/* mismatches printed per process */

#define EXIT_MISMATCH		1
#define EXIT_NOSWAP		2
#define EXIT_ERROR		3

struct config {
	uint64_t size;
	uint64_t chunk;
	uint64_t seed;
	unsigned int iters;
	bool write_out;		/* -w: rewrite pages while they are swapped out */
	unsigned int procs;
	unsigned int keep;
	unsigned int corrupt;
	size_t page;
	bool mthp;
	bool quiet;
	bool noswap_ok;
};

/* Per-worker counters, in a MAP_SHARED page the parent reads after wait(). */
struct result {
	uint64_t verified_pages;
	uint64_t pageout_pages;	/* pages holding data when MADV_PAGEOUT ran */
	uint64_t swapped_pages;	/* of those, seen swapped out right after */
	uint64_t mismatches;
};

struct chunk {
	unsigned int idx;
	char *map;
	size_t map_len;
	char *base;
	size_t len;
	size_t npages;
	uint16_t *gen;		/* iteration that wrote each page, or GEN_ZERO */
};

struct worker {
	unsigned int id;
	unsigned int nchunks;
	struct result *res;
	int pagemap_fd;
	uint64_t *pm;
	unsigned char *vec;
	unsigned int reported;
};

static struct config cfg;

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static inline uint64_t xorshift64(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

static inline uint64_t stream_init(uint64_t hdr)
{
	return splitmix64(cfg.seed ^ splitmix64(hdr)) | 1;
}

static inline uint64_t hdr_pack(unsigned int proc, unsigned int iter, unsigned int chunk,
				size_t page)
{
	return (uint64_t)proc << HDR_PROC_SHIFT | (uint64_t)iter << HDR_ITER_SHIFT |
	       (uint64_t)chunk << HDR_CHUNK_SHIFT | page;
}

static void hdr_describe(char *buf, size_t len, uint64_t hdr)
{
	snprintf(buf, len, "proc %u chunk %u page %u written in iter %u",
		 (unsigned int)(hdr >> HDR_PROC_SHIFT),
		 (unsigned int)(hdr >> HDR_CHUNK_SHIFT) & 0xffff,
		 (unsigned int)hdr & 0xffffff,
		 (unsigned int)(hdr >> HDR_ITER_SHIFT) & 0xfff);
}

static void fill_page(void *p, uint64_t hdr)
{
	size_t i, words = cfg.page / sizeof(uint64_t);
	uint64_t *w = p;
	uint64_t s = stream_init(hdr);

	w[0] = hdr;
	for (i = 1; i < words; i++)
		w[i] = xorshift64(&s);
}

/* Number of 64-bit words that differ from the expected page; *first = first one. */
static size_t check_page(const void *p, uint16_t gen, uint64_t hdr, size_t *first)
{
	size_t i, bad = 0, words = cfg.page / sizeof(uint64_t);
	const uint64_t *w = p;
	uint64_t s = stream_init(hdr);
	uint64_t want;

	for (i = 0; i < words; i++) {
		if (gen == GEN_ZERO)
			want = 0;
		else
			want = i ? xorshift64(&s) : hdr;
		if (w[i] != want && !bad++)
			*first = i;
	}
	return bad;
}

/* Does this page carry a valid pattern of this run (any proc/iter/chunk/page)? */
static bool page_is_ours(const uint64_t *w)
{
	uint64_t s = stream_init(w[0]);

	return w[1] == xorshift64(&s);
}

static bool page_is_zero(const uint64_t *w)
{
	size_t i, words = cfg.page / sizeof(uint64_t);

	for (i = 0; i < words; i++)
		if (w[i])
			return false;
	return true;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void fmt_size(char *buf, size_t len, uint64_t bytes)
{
	if (bytes >= (1ULL << 30) && !(bytes & ((1ULL << 30) - 1)))
		snprintf(buf, len, "%" PRIu64 " GiB", bytes >> 30);
	else if (bytes >= (1ULL << 30))
		snprintf(buf, len, "%.2f GiB", bytes / (double)(1ULL << 30));
	else if (bytes >= (1ULL << 20) && !(bytes & ((1ULL << 20) - 1)))
		snprintf(buf, len, "%" PRIu64 " MiB", bytes >> 20);
	else
		snprintf(buf, len, "%" PRIu64 " KiB", bytes >> 10);
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * part / whole : 0.0;
}

/* Flushed line by line, so lines of concurrent workers do not mix. */
#define wprint(w, fmt, ...)							\
	do {									\
		printf("swapverify[%u]: " fmt "\n", (w)->id, ##__VA_ARGS__);	\
		fflush(stdout);							\
	} while (0)

static int chunk_create(struct worker *w, struct chunk *c, unsigned int idx, size_t len)
{
	size_t align = cfg.mthp ? SZ_64K : cfg.page;
	uintptr_t base;
	size_t i;

	memset(c, 0, sizeof(*c));
	c->idx = idx;
	c->len = len;
	c->npages = len / cfg.page;
	c->map_len = len + align - cfg.page;
	c->map = mmap(NULL, c->map_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->map == MAP_FAILED) {
		wprint(w, "mmap %zu bytes for chunk %u: %s", c->map_len, idx, strerror(errno));
		c->map = NULL;
		return -1;
	}
	base = ((uintptr_t)c->map + align - 1) & ~(uintptr_t)(align - 1);
	c->base = (char *)base;
	if (madvise(c->base, c->len, cfg.mthp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) &&
	    idx == 0 && !cfg.quiet)
		wprint(w, "note: madvise(%s): %s", cfg.mthp ? "MADV_HUGEPAGE" : "MADV_NOHUGEPAGE",
		       strerror(errno));

	c->gen = calloc(c->npages, sizeof(*c->gen));
	if (!c->gen) {
		wprint(w, "out of memory for chunk %u page state", idx);
		return -1;
	}
	for (i = 0; i < c->npages; i++)
		fill_page(c->base + i * cfg.page, hdr_pack(w->id, 0, idx, i));
	return 0;
}

static void chunk_destroy(struct chunk *c)
{
	if (c->map)
		munmap(c->map, c->map_len);
	free(c->gen);
	memset(c, 0, sizeof(*c));
}

/* Pages of the chunk that hold data and pages of those that are swapped out. */
static int count_swapped(struct worker *w, struct chunk *c, uint64_t *data, uint64_t *out)
{
	size_t i, want = c->npages * sizeof(uint64_t), got = 0;
	off_t off = (uintptr_t)c->base / cfg.page * sizeof(uint64_t);
	ssize_t n;

	if (w->pagemap_fd >= 0) {
		while (got < want) {
			n = pread(w->pagemap_fd, (char *)w->pm + got, want - got, off + got);
			if (n <= 0) {
				wprint(w, "reading /proc/self/pagemap: %s",
				       n ? strerror(errno) : "short read");
				return -1;
			}
			got += n;
		}
	} else if (mincore(c->base, c->len, w->vec)) {
		wprint(w, "mincore: %s", strerror(errno));
		return -1;
	}

	*data = *out = 0;
	for (i = 0; i < c->npages; i++) {
		if (c->gen[i] == GEN_ZERO)
			continue;
		(*data)++;
		if (w->pagemap_fd >= 0 ? !!(w->pm[i] & PM_SWAPPED) : !(w->vec[i] & 1))
			(*out)++;
	}
	return 0;
}

static int pageout(struct worker *w, struct chunk *c, double *swapped_pct)
{
	uint64_t data, out;

	if (madvise(c->base, c->len, MADV_PAGEOUT)) {
		wprint(w, "madvise(MADV_PAGEOUT): %s%s", strerror(errno),
		       errno == EINVAL ? " (kernel older than 5.4?)" : "");
		return -1;
	}
	if (count_swapped(w, c, &data, &out))
		return -1;
	w->res->pageout_pages += data;
	w->res->swapped_pages += out;
	*swapped_pct = pct(out, data);
	return 0;
}

static void report_mismatch(struct worker *w, struct chunk *c, size_t i, uint64_t hdr,
			    size_t bad, size_t first, const char *when)
{
	const uint64_t *p = (const uint64_t *)(c->base + i * cfg.page);
	const uint64_t id_mask = ~(0xfffULL << HDR_ITER_SHIFT);
	size_t words = cfg.page / sizeof(uint64_t);
	char want[128], found[192], ids[80];
	const char *why = "";

	if (c->gen[i] == GEN_ZERO) {
		snprintf(want, sizeof(want), "zero page (MADV_DONTNEED)");
	} else {
		hdr_describe(ids, sizeof(ids), hdr);
		snprintf(want, sizeof(want), "header %016" PRIx64 " (%s)", hdr, ids);
	}

	if (page_is_zero(p)) {
		snprintf(found, sizeof(found), "a zero-filled page");
	} else if (page_is_ours(p)) {
		if (p[0] == hdr)
			why = ", body differs";
		else if ((p[0] & id_mask) == (hdr & id_mask))
			why = ": stale version of this page";
		else
			why = ": another page's data, slot handed out twice?";
		hdr_describe(ids, sizeof(ids), p[0]);
		snprintf(found, sizeof(found), "header %016" PRIx64 " (%s)%s", p[0], ids, why);
	} else {
		snprintf(found, sizeof(found), "header %016" PRIx64 " (not a page of this run)",
			 p[0]);
	}
	wprint(w, "MISMATCH in %s, page %zu at %p: expected %s, found %s; first bad byte +0x%zx, %zu/%zu words differ",
	       when, i, (void *)p, want, found, first * sizeof(uint64_t), bad, words);
}

/* Check every page of the chunk; returns the number of bad pages. */
static uint64_t verify(struct worker *w, struct chunk *c, const char *when)
{
	uint64_t hdr, bad_pages = 0;
	size_t i, bad, first = 0;
	char *p;

	for (i = 0; i < c->npages; i++) {
		p = c->base + i * cfg.page;
		hdr = hdr_pack(w->id, c->gen[i] == GEN_ZERO ? 0 : c->gen[i], c->idx, i);
		bad = check_page(p, c->gen[i], hdr, &first);
		if (!bad)
			continue;
		bad_pages++;
		if (w->reported < MAX_REPORT)
			report_mismatch(w, c, i, hdr, bad, first, when);
		else if (w->reported == MAX_REPORT)
			wprint(w, "further mismatches are counted, not printed");
		w->reported++;
		/* Repair, so every later pass only counts new damage. */
		if (c->gen[i] == GEN_ZERO)
			madvise(p, cfg.page, MADV_DONTNEED);
		else
			fill_page(p, hdr);
	}
	w->res->verified_pages += c->npages;
	w->res->mismatches += bad_pages;
	return bad_pages;
}

/* Rewrite some runs of pages and drop others, so slots get freed and reallocated. */
static void churn(struct worker *w, struct chunk *c, unsigned int iter, size_t *rewritten,
		  size_t *dropped)
{
	uint64_t r, s = splitmix64(cfg.seed ^ ~hdr_pack(w->id, iter, c->idx, 0)) | 1;
	size_t i = 0, j, n;

	*rewritten = *dropped = 0;
	while (i < c->npages) {
		r = xorshift64(&s);
		n = 1 + (r >> 8) % 32;
		if (n > c->npages - i)
			n = c->npages - i;
		switch (r & 7) {
		case 0:
		case 1:
			for (j = i; j < i + n; j++) {
				c->gen[j] = iter;
				fill_page(c->base + j * cfg.page, hdr_pack(w->id, iter, c->idx, j));
			}
			*rewritten += n;
			break;
		case 2:
			if (madvise(c->base + i * cfg.page, n * cfg.page, MADV_DONTNEED))
				break;
			for (j = i; j < i + n; j++)
				c->gen[j] = GEN_ZERO;
			*dropped += n;
			break;
		default:
			break;
		}
		i += n;
	}
}

/*
 * Checker self-test: damage cfg.corrupt pages after their first page-out. The
 * first gets a byte of its header flipped, the second the contents of its
 * neighbour (what a slot handed out twice looks like), the rest a body byte.
 */
static void corrupt(struct worker *w, struct chunk *c)
{
	size_t j, i, off, n = cfg.corrupt < c->npages ? cfg.corrupt : c->npages;
	char *p;

	for (j = 0; j < n; j++) {
		i = j * c->npages / n;
		p = c->base + i * cfg.page;
		if (j == 1 && c->npages > 1) {
			memcpy(p, c->base + (i + 1) % c->npages * cfg.page, cfg.page);
			continue;
		}
		off = j ? 16 + (j * 1031) % (cfg.page - 16) : 3;
		p[off] ^= 0x5a;
	}
	if (!cfg.quiet)
		wprint(w, "SWAPVERIFY_CORRUPT: damaged %zu pages of chunk %u (checker self-test)",
		       n, c->idx);
}

/* Page out, count, verify: one pass over a chunk. */
static int pass(struct worker *w, struct chunk *c, unsigned int iter, const char *what)
{
	double swapped;
	uint64_t bad;
	char when[64];

	if (pageout(w, c, &swapped))
		return -1;
	if (cfg.corrupt && c->idx == 0 && iter == 0)
		corrupt(w, c);
	snprintf(when, sizeof(when), "chunk %u iter %u", c->idx, iter);
	bad = verify(w, c, when);
	if (!cfg.quiet)
		wprint(w, "chunk %u of %u iter %u%s: swapped out %5.1f%%, %" PRIu64 " mismatches",
		       c->idx, w->nchunks, iter, what, swapped, bad);
	return 0;
}

/* Last check of a chunk that stayed swapped out while later chunks ran, then unmap. */
static int retire(struct worker *w, struct chunk *c)
{
	uint64_t data, out, bad;
	char when[64];

	if (count_swapped(w, c, &data, &out))
		return -1;
	snprintf(when, sizeof(when), "chunk %u final check", c->idx);
	bad = verify(w, c, when);
	if (!cfg.quiet)
		wprint(w, "chunk %u of %u final: %5.1f%% still swapped out, %" PRIu64 " mismatches",
		       c->idx, w->nchunks, pct(out, data), bad);
	chunk_destroy(c);
	return 0;
}

static int worker_run(struct worker *w)
{
	unsigned int ci, iter, ring = cfg.keep + 1;
	size_t len, rewritten, dropped;
	struct chunk *win, *c;
	double swapped;
	char what[64];
	int ret = -1;

	win = calloc(ring, sizeof(*win));
	if (!win)
		return -1;
	for (ci = 0; ci < w->nchunks; ci++) {
		len = cfg.size - (uint64_t)ci * cfg.chunk;
		if (len > cfg.chunk)
			len = cfg.chunk;
		c = &win[ci % ring];
		if (chunk_create(w, c, ci, len) || pass(w, c, 0, ""))
			goto out;
		/* The new chunk's slots are allocated; now free the oldest chunk's. */
		if (ci >= cfg.keep && retire(w, &win[(ci - cfg.keep) % ring]))
			goto out;
		for (iter = 1; iter < cfg.iters; iter++) {
			/* -w: the rewrites fault swapped-out pages in with a write. */
			if (cfg.write_out && pageout(w, c, &swapped))
				goto out;
			churn(w, c, iter, &rewritten, &dropped);
			snprintf(what, sizeof(what), " (rewrote %zu, dropped %zu)", rewritten,
				 dropped);
			if (pass(w, c, iter, what))
				goto out;
		}
		/* Leave it swapped out while the next chunks allocate slots. */
		if (pageout(w, c, &swapped))
			goto out;
	}
	for (ci = w->nchunks > cfg.keep ? w->nchunks - cfg.keep : 0; ci < w->nchunks; ci++)
		if (retire(w, &win[ci % ring]))
			goto out;
	ret = 0;
out:
	for (ci = 0; ci < ring; ci++)
		chunk_destroy(&win[ci]);
	free(win);
	return ret;
}

static int worker_main(unsigned int id, struct result *res)
{
	size_t max_pages = cfg.chunk / cfg.page;
	struct worker w = {
		.id = id,
		.nchunks = (cfg.size + cfg.chunk - 1) / cfg.chunk,
		.res = res,
	};
	int ret;

	w.pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	if (w.pagemap_fd < 0) {
		if (id == 0 && !cfg.quiet)
			wprint(&w, "note: /proc/self/pagemap: %s; counting with mincore()",
			       strerror(errno));
		w.vec = malloc(max_pages);
	} else {
		w.pm = malloc(max_pages * sizeof(uint64_t));
	}
	if (!w.vec && !w.pm) {
		wprint(&w, "out of memory");
		return EXIT_ERROR;
	}
	ret = worker_run(&w);
	free(w.pm);
	free(w.vec);
	if (w.pagemap_fd >= 0)
		close(w.pagemap_fd);
	if (ret)
		return EXIT_ERROR;
	return res->mismatches ? EXIT_MISMATCH : 0;
}

/* Global counters the kernel keeps; printed as deltas over the run. */
static const char * const stat_files[] = {
	"/proc/vmstat:pswpout",
	"/proc/vmstat:pswpin",
	MTHP_DIR "/hugepages-64kB/stats/anon_fault_alloc",
	MTHP_DIR "/hugepages-64kB/stats/anon_fault_fallback",
	MTHP_DIR "/hugepages-64kB/stats/swpout",
	MTHP_DIR "/hugepages-64kB/stats/swpout_fallback",
	MTHP_DIR "/hugepages-64kB/stats/swpin",
	MTHP_DIR "/hugepages-64kB/stats/split",
};

#define NR_STATS ARRAY_SIZE(stat_files)

static int64_t read_stat(const char *spec)
{
	char path[256], line[256], *key;
	long long val = -1;
	size_t klen;
	FILE *f;

	snprintf(path, sizeof(path), "%s", spec);
	key = strchr(path, ':');
	if (key)
		*key++ = '\0';
	f = fopen(path, "r");
	if (!f)
		return -1;
	klen = key ? strlen(key) : 0;
	while (fgets(line, sizeof(line), f)) {
		if (!key) {
			val = strtoll(line, NULL, 10);
			break;
		}
		if (!strncmp(line, key, klen) && line[klen] == ' ') {
			val = strtoll(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return val;
}

static void read_stats(int64_t *v)
{
	size_t i;

	for (i = 0; i < NR_STATS; i++)
		v[i] = read_stat(stat_files[i]);
}

static void print_stat_deltas(const int64_t *before, const int64_t *after)
{
	char buf[512];
	const char *name;
	size_t i, len = 0;

	for (i = 0; i < NR_STATS && len < sizeof(buf); i++) {
		if (before[i] < 0 || after[i] < 0)
			continue;
		if (!cfg.mthp && strstr(stat_files[i], "hugepages-"))
			continue;
		name = strrchr(stat_files[i], strchr(stat_files[i], ':') ? ':' : '/') + 1;
		len += snprintf(buf + len, sizeof(buf) - len, "%s%s%s +%" PRId64,
				len ? ", " : "", strstr(stat_files[i], "hugepages-") ? "64K " : "",
				name, after[i] - before[i]);
	}
	if (len)
		printf("swapverify: kernel counters (system-wide): %s\n", buf);
}

/* Number of active swap devices, -1 if /proc/swaps cannot be read. */
static int swap_devices(uint64_t *total_kb)
{
	char line[512];
	int n = 0;
	FILE *f;

	*total_kb = 0;
	f = fopen("/proc/swaps", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char name[256], type[32];
		unsigned long long size;

		if (sscanf(line, "%255s %31s %llu", name, type, &size) == 3) {
			n++;
			*total_kb += size;
		}
	}
	fclose(f);
	return n;
}

/* First line of a sysfs file, without the newline; "" if unreadable. */
static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (f) {
		if (!fgets(buf, len, f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
}

/* Would an order with this hugepages-<size>/enabled setting be used under MADV_HUGEPAGE? */
static bool order_on(const char *val, const char *top)
{
	if (strstr(val, "[inherit]"))
		val = top;
	return strstr(val, "[always]") || strstr(val, "[madvise]");
}

static void mthp_note(void)
{
	char top[128], val[128], path[PATH_MAX], others[256] = "";
	struct dirent *de;
	size_t len = 0;
	DIR *dir;

	read_line(MTHP_DIR "/enabled", top, sizeof(top));
	read_line(MTHP_DIR "/hugepages-64kB/enabled", val, sizeof(val));
	if (!val[0]) {
		printf("swapverify: note: no %s/hugepages-64kB: no 64K mTHP on this kernel, pages stay 4K\n",
		       MTHP_DIR);
		return;
	}
	if (!order_on(val, top))
		printf("swapverify: note: 64K mTHP off (hugepages-64kB/enabled: %s; enabled: %s), pages stay 4K; echo madvise > %s/hugepages-64kB/enabled\n",
		       val, top, MTHP_DIR);
	else if (!cfg.quiet)
		printf("swapverify: 64K mTHP on (hugepages-64kB/enabled: %s; enabled: %s)\n",
		       val, top);

	/* Larger orders win where they fit, so 64K is only exercised if they are off. */
	dir = opendir(MTHP_DIR);
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		if (strncmp(de->d_name, "hugepages-", 10) || atoi(de->d_name + 10) <= 64)
			continue;
		snprintf(path, sizeof(path), "%s/%s/enabled", MTHP_DIR, de->d_name);
		read_line(path, val, sizeof(val));
		if (order_on(val, top) && len < sizeof(others))
			len += snprintf(others + len, sizeof(others) - len, " %s",
					de->d_name + 10);
	}
	closedir(dir);
	if (len)
		printf("swapverify: note: larger THP sizes also on under MADV_HUGEPAGE:%s; the kernel prefers them, set them to never to test 64K folios only\n",
		       others);
}

static int parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -1;
	switch (*end) {
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	case 't': case 'T':
		shift = 40;
		break;
	case '\0':
		break;
	default:
		return -1;
	}
	if (shift) {
		end++;
		if (!strcmp(end, "iB") || !strcmp(end, "B"))
			end += strlen(end);
	}
	if (*end || (shift && v > (~0ULL >> shift)))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static int parse_uint(const char *s, unsigned int min, unsigned int max, unsigned int *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || *s == '-' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static void help(FILE *f)
{
	fprintf(f,
		"usage: swapverify [-s SIZE] [-c CHUNK] [-f 4k|64k] [-i ITER] [-p PROCS] [-k KEEP]\n"
		"                  [-r SEED] [-w] [-q] [-n]\n"
		"Fill anonymous memory with unique per-page patterns, push it to swap with\n"
		"MADV_PAGEOUT, read it back and verify it: detects swap slots handed out twice.\n"
		"  -s SIZE   bytes to verify per process, K/M/G suffixes (default 256M)\n"
		"  -c CHUNK  mapping size worked on at a time (default 64M)\n"
		"  -f 4k     4K pages, MADV_NOHUGEPAGE (default)\n"
		"  -f 64k    64K-aligned chunks with MADV_HUGEPAGE, for 64K mTHP folios\n"
		"  -i ITER   passes per chunk; passes after the first rewrite some pages and\n"
		"            MADV_DONTNEED others before paging out again (default 2)\n"
		"  -w        page out before those rewrites too, so that they fault swapped-out\n"
		"            pages in with a write (the swap-in frees or keeps their slots)\n"
		"  -p PROCS  concurrent worker processes (default 1)\n"
		"  -k KEEP   earlier chunks kept mapped and swapped out, verified last (default 2)\n"
		"  -r SEED   pattern seed (default: from the clock; always printed)\n"
		"  -q        only print the seed, problems and the result line\n"
		"  -n        nothing swapped out is not an error (checks the checker without swap)\n"
		"Exit: 0 ok, 1 mismatches, 2 nothing swapped out, 3 error.\n"
		"SWAPVERIFY_CORRUPT=N: checker self-test, damage N pages after the first page-out;\n"
		"  the run must then report N mismatches per process and exit 1.\n");
}

int main(int argc, char **argv)
{
	uint64_t verified = 0, pageout = 0, swapped = 0, mismatches = 0, swap_kb, align, nchunks;
	int64_t stats_before[NR_STATS], stats_after[NR_STATS];
	unsigned int i, started = 0, failed = 0;
	bool seeded = false;
	char s1[32], s2[32], *end;
	struct result *res;
	struct timeval tv;
	const char *env;
	int opt, status, nswap;
	pid_t *pids, pid;
	double t0;

	cfg.size = 256ULL << 20;
	cfg.chunk = 64ULL << 20;
	cfg.iters = 2;
	cfg.procs = 1;
	cfg.keep = 2;

	while ((opt = getopt(argc, argv, "s:c:f:i:p:k:r:wqnh")) != -1) {
		switch (opt) {
		case 's':
			if (parse_size(optarg, &cfg.size) || !cfg.size)
				goto bad_arg;
			break;
		case 'c':
			if (parse_size(optarg, &cfg.chunk) || !cfg.chunk)
				goto bad_arg;
			break;
		case 'f':
			if (!strcasecmp(optarg, "4k"))
				cfg.mthp = false;
			else if (!strcasecmp(optarg, "64k"))
				cfg.mthp = true;
			else
				goto bad_arg;
			break;
		case 'i':
			if (parse_uint(optarg, 1, MAX_ITERS, &cfg.iters))
				goto bad_arg;
			break;
		case 'w':
			cfg.write_out = true;
			break;
		case 'p':
			if (parse_uint(optarg, 1, MAX_PROCS, &cfg.procs))
				goto bad_arg;
			break;
		case 'k':
			if (parse_uint(optarg, 1, 1024, &cfg.keep))
				goto bad_arg;
			break;
		case 'r':
			errno = 0;
			cfg.seed = strtoull(optarg, &end, 0);
			if (errno || end == optarg || *end || *optarg == '-')
				goto bad_arg;
			seeded = true;
			break;
		case 'q':
			cfg.quiet = true;
			break;
		case 'n':
			cfg.noswap_ok = true;
			break;
		case 'h':
			help(stdout);
			return 0;
		default:
			help(stderr);
			return EXIT_ERROR;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "swapverify: unexpected argument '%s'\n", argv[optind]);
		help(stderr);
		return EXIT_ERROR;
	}

	env = getenv("SWAPVERIFY_CORRUPT");
	if (env && *env && parse_uint(env, 0, ~0U, &cfg.corrupt)) {
		fprintf(stderr, "swapverify: SWAPVERIFY_CORRUPT must be a page count, not '%s'\n",
			env);
		return EXIT_ERROR;
	}

	cfg.page = sysconf(_SC_PAGESIZE);
	align = cfg.mthp ? SZ_64K : cfg.page;
	if (align < cfg.page)
		align = cfg.page;
	cfg.size = (cfg.size + cfg.page - 1) / cfg.page * cfg.page;
	cfg.chunk = (cfg.chunk + align - 1) / align * align;
	if (cfg.chunk > cfg.size)
		cfg.chunk = cfg.size;
	nchunks = (cfg.size + cfg.chunk - 1) / cfg.chunk;
	if (nchunks > MAX_CHUNKS) {
		fprintf(stderr, "swapverify: %" PRIu64 " chunks is more than %u; use a larger -c\n",
			nchunks, MAX_CHUNKS);
		return EXIT_ERROR;
	}
	if (cfg.chunk / cfg.page > MAX_CHUNK_PAGES) {
		fprintf(stderr, "swapverify: -c larger than %lu pages; use a smaller -c\n",
			MAX_CHUNK_PAGES);
		return EXIT_ERROR;
	}
	if (!seeded) {
		gettimeofday(&tv, NULL);
		cfg.seed = (uint64_t)tv.tv_sec * 1000000 + tv.tv_usec;
	}

	printf("swapverify: seed %" PRIu64 " (replay with -r %" PRIu64 ")\n", cfg.seed, cfg.seed);
	fmt_size(s1, sizeof(s1), cfg.size);
	fmt_size(s2, sizeof(s2), cfg.chunk);
	nswap = swap_devices(&swap_kb);
	if (!cfg.quiet) {
		printf("swapverify: %u procs x %s in %" PRIu64 " chunks of %s, %u iterations, %s pages, keep %u\n",
		       cfg.procs, s1, nchunks, s2, cfg.iters, cfg.mthp ? "64K mTHP" : "4K",
		       cfg.keep);
		if (nswap > 0)
			printf("swapverify: swap: %d devices, %" PRIu64 " MiB\n", nswap,
			       swap_kb >> 10);
	}
	if (nswap == 0)
		printf("swapverify: note: no swap device in /proc/swaps%s\n",
		       cfg.noswap_ok ? "; -n: checking data in memory only" : "");
	if (cfg.mthp)
		mthp_note();
	if (cfg.corrupt)
		printf("swapverify: SWAPVERIFY_CORRUPT=%u: checker self-test, expect %u mismatches per process and exit 1\n",
		       cfg.corrupt, cfg.corrupt);

	res = mmap(NULL, cfg.procs * sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pids = calloc(cfg.procs, sizeof(*pids));
	if (res == MAP_FAILED || !pids) {
		fprintf(stderr, "swapverify: out of memory\n");
		return EXIT_ERROR;
	}

	read_stats(stats_before);
	t0 = now();
	fflush(stdout);
	for (i = 0; i < cfg.procs; i++) {
		pid = fork();
		if (pid < 0) {
			fprintf(stderr, "swapverify: fork: %s\n", strerror(errno));
			failed++;
			break;
		}
		if (pid == 0)
			_exit(worker_main(i, &res[i]));
		pids[i] = pid;
		started++;
	}

	for (i = 0; i < started; i++) {
		if (waitpid(pids[i], &status, 0) < 0) {
			fprintf(stderr, "swapverify: waitpid: %s\n", strerror(errno));
			failed++;
			continue;
		}
		if (WIFSIGNALED(status)) {
			fprintf(stderr, "swapverify: worker %u killed by signal %d (%s)%s\n", i,
				WTERMSIG(status), strsignal(WTERMSIG(status)),
				WTERMSIG(status) == SIGBUS ? ", swap-in I/O error?" :
				WTERMSIG(status) == SIGKILL ? ", OOM killer?" : "");
			failed++;
		} else if (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != EXIT_MISMATCH) {
			fprintf(stderr, "swapverify: worker %u failed (exit %d)\n", i,
				WEXITSTATUS(status));
			failed++;
		}
	}
	for (i = 0; i < cfg.procs; i++) {
		verified += res[i].verified_pages;
		pageout += res[i].pageout_pages;
		swapped += res[i].swapped_pages;
		mismatches += res[i].mismatches;
	}
	read_stats(stats_after);
	if (!cfg.quiet) {
		print_stat_deltas(stats_before, stats_after);
		printf("swapverify: %.1f s, %" PRIu64 " of %" PRIu64 " pages seen swapped out after MADV_PAGEOUT\n",
		       now() - t0, swapped, pageout);
	}

	if (mismatches)
		printf("swapverify: FAIL: %" PRIu64 " pages read back wrong%s\n", mismatches,
		       cfg.corrupt ? " (SWAPVERIFY_CORRUPT self-test)" : "");
	if (!swapped && !failed)
		printf("swapverify: %snothing was swapped out (is swap on?): %s\n",
		       cfg.noswap_ok ? "note: " : "FAIL: ",
		       nswap == 0 ? "/proc/swaps lists no device" :
		       nswap > 0 ? "swap is listed; is it full, or is MADV_PAGEOUT ineffective?" :
		       "/proc/swaps unreadable");
	printf("swapverify: verified %.2f GiB in %u procs, swapped out %.1f%%, %" PRIu64 " mismatches\n",
	       (double)verified * cfg.page / (1ULL << 30), cfg.procs, pct(swapped, pageout),
	       mismatches);
	fflush(stdout);
	/* The self-test's planted mismatches are not the allocator's. */
	if (!cfg.corrupt)
		figures_add(verified * cfg.page, mismatches);
	free(pids);
	munmap(res, cfg.procs * sizeof(*res));

	if (mismatches)
		return EXIT_MISMATCH;
	if (failed)
		return EXIT_ERROR;
	if (!swapped && !cfg.noswap_ok)
		return EXIT_NOSWAP;
	return 0;

bad_arg:
	fprintf(stderr, "swapverify: bad value '%s' for -%c\n", optarg, opt);
	help(stderr);
	return EXIT_ERROR;
}
