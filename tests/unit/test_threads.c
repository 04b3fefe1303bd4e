// SPDX-License-Identifier: GPL-2.0
/*
 * The swapalloc core with real threads, built with SIM_THREADS (the
 * simulated si->lock is a pthread mutex, each thread a CPU of its own)
 * and ThreadSanitizer.  At once:
 *
 *  - allocator threads take entries of order 0 (one by one, and in
 *    slot-cache refills through swapalloc_alloc_batch()) and of order 4,
 *    and free some of them again.  On devices with ->fast set they try
 *    swapalloc_alloc_fast() first, without the lock, inside the read side
 *    of the bind lock (the kernel's rcu_read_lock()), and count and
 *    account what it got without the lock (swapalloc_alloc_fast_done(),
 *    then the kernel's accounting, sim_account_fast()); then they take
 *    the lock for what is left, if anything, and ask the slow path;
 *  - a swap-cache thread takes entries and leaves them in the swap cache
 *    only, so that the allocators' reclaim, forced reclaim and the
 *    background reclaim free them with the lock dropped;
 *  - a worker runs main.c's reclaim and discard work items;
 *  - a rebind thread quiesces and rebuilds the device from the map, as an
 *    unbind and bind do, while frees go on (allocations wait, as the
 *    kernel's hook makes them wait, and fast paths are waited for, as
 *    synchronize_rcu() waits for them).
 *
 * Every slot handed out is claimed in an owner array with a
 * compare-and-swap: a slot handed out twice fails the test at once.  The
 * worker also runs swapalloc_check() now and then while all this goes on.
 * After the threads are done, swapalloc_check() and the environment's
 * accounting (sim_check()) must hold, the owner array must match the swap
 * map slot for slot, and once everything is freed nothing may be left in
 * use.  ThreadSanitizer fails the run on any data race, for the lockless
 * paths to come as for the locked ones today.
 *
 *   test_threads-tsan [-i ITERATIONS] [-s SEED] [-t SECONDS_PER_CASE] [-v]
 */
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "harness.h"
#include "sim.h"

#define CS		SA_CLUSTER_SLOTS
#define NR_ALLOCATORS	3
#define CPU_CACHE	NR_ALLOCATORS
#define CPU_WORKER	(NR_ALLOCATORS + 1)
#define CPU_REBIND	(NR_ALLOCATORS + 2)
#define HELD_MAX	1500		/* entries an allocator thread holds */
#define OWNER_CACHE	(CPU_CACHE + 1)

/* ThreadSanitizer: the first report ends the run with a failure. */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "halt_on_error=1:exitcode=66:second_deadlock_stack=1";
}

struct entry {
	unsigned long off;
	int order;
};

struct run {
	struct sim s;
	unsigned int *owner;		/* slot -> thread number + 1, 0 = free */
	pthread_rwlock_t bind;		/* allocations: read; rebind: write */
	int stop;			/* allocators done: helpers stop */
	int failed;
	char why[256];
	pthread_mutex_t why_lock;
	unsigned long iters;
	unsigned int seed;
	long cache_live;		/* slots the cache thread has cached */
	int in_discard;			/* a discard is in flight (on_event()) */
	int rebinding;			/* the rebinder holds the bind lock */
	unsigned long double_claims, reclaimed, rebinds, allocated;
	unsigned long fast;		/* entries from swapalloc_alloc_fast() */
	unsigned long checks;		/* swapalloc_check() runs while running */
};

struct thread {
	struct run *r;
	int cpu;
	unsigned int seed;
	struct entry held[HELD_MAX];
	int nr_held;
};

static __printf(2, 3) void run_fail(struct run *r, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&r->why_lock);
	if (!r->failed) {
		va_start(ap, fmt);
		vsnprintf(r->why, sizeof(r->why), fmt, ap);
		va_end(ap);
	}
	r->failed = 1;
	pthread_mutex_unlock(&r->why_lock);
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
}

static bool stopping(struct run *r)
{
	return __atomic_load_n(&r->stop, __ATOMIC_ACQUIRE);
}

/* Claim every slot of an entry for @who: fails if one is someone's already. */
static void claim(struct run *r, unsigned long off, int order, unsigned int who)
{
	unsigned long i;

	for (i = off; i < off + (1UL << order); i++) {
		unsigned int none = 0;

		if (!__atomic_compare_exchange_n(&r->owner[i], &none, who, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			__atomic_fetch_add(&r->double_claims, 1, __ATOMIC_RELAXED);
			run_fail(r, "slot %lu handed out to %u while %u has it", i, who,
				 none);
		}
	}
}

static void unclaim(struct run *r, unsigned long off, int order, unsigned int who)
{
	unsigned long i;

	for (i = off; i < off + (1UL << order); i++) {
		unsigned int mine = who;

		if (!__atomic_compare_exchange_n(&r->owner[i], &mine, 0, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			run_fail(r, "slot %lu freed by %u but owned by %u", i, who, mine);
	}
}

/*
 * sim_dev::hook, the lock dropped: a discard takes a while, as a device's
 * does, and waits for a rebind to begin, so that rebinds come while
 * discards are in flight (the rebinder waits for one too).
 */
static void on_event(struct sim_dev *sd, enum sim_event ev,
		     unsigned long off, void *arg)
{
	struct run *r = arg;
	int k;

	if (ev != SIM_EV_DISCARD)
		return;
	__atomic_fetch_add(&r->in_discard, 1, __ATOMIC_RELEASE);
	/* Until the rebind that waits for it has begun, 10 ms at most. */
	for (k = 0; k < 100 && !__atomic_load_n(&r->rebinding, __ATOMIC_ACQUIRE); k++)
		usleep(100);
	usleep(500);
	__atomic_fetch_sub(&r->in_discard, 1, __ATOMIC_RELEASE);
}

/* sim_dev::on_free, under the lock: a reclaim freed a cache-only folio. */
static void on_reclaim(struct sim_dev *sd, unsigned long off, unsigned int nr,
		       void *arg)
{
	struct run *r = arg;
	unsigned long i;

	for (i = off; i < off + nr; i++) {
		unsigned int who = OWNER_CACHE;

		if (!__atomic_compare_exchange_n(&r->owner[i], &who, 0, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			run_fail(r, "reclaim freed slot %lu, owned by %u, not the cache",
				 i, who);
	}
	__atomic_fetch_sub(&r->cache_live, nr, __ATOMIC_RELAXED);
	__atomic_fetch_add(&r->reclaimed, nr, __ATOMIC_RELAXED);
}

/*
 * get_swap_pages() as it would be with the fast path: without the lock
 * first, then under it once, for the accounting and whatever the fast
 * path left.
 */
static int alloc_some(struct thread *t, int order, unsigned char usage,
		      struct entry *out, int max)
{
	struct run *r = t->r;
	swp_entry_t slots[16];
	int n = 0, want = min_t(int, max, 16), i;
	bool after;

	pthread_rwlock_rdlock(&r->bind);
	n = swapalloc_alloc_fast(&r->s.dev, order, usage, want, slots);
	if (n)
		__atomic_fetch_add(&r->fast, n, __ATOMIC_RELAXED);
	/* Counted and accounted without the lock (the kernel accounts). */
	after = swapalloc_alloc_fast_done(&r->s.dev, order, n, slots);
	sim_account_fast(&r->s.dev.env, order, n, slots);
	/* Served whole, the lock is not taken. */
	if (n == want && !after)
		goto out;
	sim_lock(&r->s.sd);
	if (after)
		swapalloc_alloc_fast_after(&r->s.dev);
	if (n < want && !order && want > 1) {
		n += swapalloc_alloc_batch(&r->s.dev, 0, usage, want - n, slots + n);
	} else if (n < want) {
		unsigned long off = swapalloc_alloc(&r->s.dev, order, usage);

		if (off)
			slots[n++] = (swp_entry_t){ off };
	}
	sim_unlock(&r->s.sd);
out:
	pthread_rwlock_unlock(&r->bind);
	for (i = 0; i < n; i++)
		out[i] = (struct entry){ swp_offset(slots[i]), order };
	for (i = 0; i < n; i++) {
		if (out[i].off % (1UL << order) || out[i].off + (1UL << order) > r->s.sd.max)
			run_fail(r, "entry %lu of order %d out of place", out[i].off, order);
		claim(r, out[i].off, out[i].order, t->cpu + 1);
	}
	__atomic_fetch_add(&r->allocated, n, __ATOMIC_RELAXED);
	return n;
}

static void free_held(struct thread *t, int i)
{
	struct entry e = t->held[i];

	t->held[i] = t->held[--t->nr_held];
	unclaim(t->r, e.off, e.order, t->cpu + 1);
	/*
	 * Without the lock on a device with ->free_fast, unless a rebind is
	 * under way: then under it, as the kernel's frees go once an unbind
	 * has begun (those in flight hold the read side, which the rebind
	 * waits for as synchronize_rcu() waits).
	 */
	if (!pthread_rwlock_tryrdlock(&t->r->bind)) {
		bool done = sim_free_fast(&t->r->s, e.off, 1U << e.order);

		pthread_rwlock_unlock(&t->r->bind);
		if (done)
			return;
	}
	sim_free(&t->r->s, e.off, 1U << e.order);
}

static void *allocator(void *arg)
{
	struct thread *t = arg;
	struct run *r = t->r;
	unsigned long it;

	shim_cpu = t->cpu;
	for (it = 0; it < r->iters && !stopping(r); it++) {
		unsigned int x = rand_r(&t->seed) % 100;

		if (x < 55 && t->nr_held < HELD_MAX - 16) {
			int order = x % 3 == 0 ? 4 : 0;
			int max = order == 0 && x % 2 ? 16 : 1;

			t->nr_held += alloc_some(t, order, 1, t->held + t->nr_held, max);
		} else if (t->nr_held) {
			free_held(t, rand_r(&t->seed) % t->nr_held);
		}
	}
	return NULL;
}

/*
 * Busy folios (one in eight the cacher adds: under writeback, say) stay
 * busy until CACHE_BUSY_MAX more have been added, or the cache is at its
 * cap: then the oldest one's writeback ends and reclaim may take it.
 * Busy for ever, they piled up to the cap, a third of a small device that
 * reclaim could never give back, and every allocation on the device the
 * threads fill tried them in vain (tens of reclaim calls each).
 */
#define CACHE_BUSY_MAX	64

struct busy_ring {
	unsigned long base[CACHE_BUSY_MAX];
	unsigned int head, tail;
};

static void busy_end(struct run *r, struct busy_ring *b)
{
	unsigned long base;

	if (b->head == b->tail)
		return;
	base = b->base[b->tail++ % CACHE_BUSY_MAX];
	sim_lock(&r->s.sd);
	/* Still that folio, still busy (reclaim may have taken it since). */
	if (sim_cache_folio(&r->s, base) == (long)base && r->s.sd.cache_busy[base])
		sim_cache_set_busy(&r->s, base, false);
	sim_unlock(&r->s.sd);
}

/* Entries left in the swap cache only, for reclaim to find. */
static void *cacher(void *arg)
{
	struct thread *t = arg;
	struct run *r = t->r;
	long cap = r->s.sd.max / 3;
	struct busy_ring busy = { .head = 0 };
	struct entry e;
	bool is_busy;

	shim_cpu = t->cpu;
	while (!stopping(r)) {
		int order = rand_r(&t->seed) % 4 == 0 ? 4 : 0;

		if (__atomic_load_n(&r->cache_live, __ATOMIC_RELAXED) > cap) {
			busy_end(r, &busy);
			sched_yield();
			continue;
		}
		if (alloc_some(t, order, SWAP_HAS_CACHE, &e, 1) != 1) {
			sched_yield();
			continue;
		}
		/* Claimed as OWNER_CACHE (this thread's number): reclaim unclaims. */
		__atomic_fetch_add(&r->cache_live, 1L << e.order, __ATOMIC_RELAXED);
		is_busy = rand_r(&t->seed) % 8 == 0;
		sim_cache_add(&r->s, e.off, e.order, is_busy);
		if (is_busy) {
			if (busy.head - busy.tail == CACHE_BUSY_MAX)
				busy_end(r, &busy);
			busy.base[busy.head++ % CACHE_BUSY_MAX] = e.off;
		}
	}
	return NULL;
}

/*
 * main.c's work items: background reclaim, discards; and now and then a
 * full swapalloc_check() while everything else runs, fast paths included
 * (a rebuild, which lets go of the lock half done, is waited for).
 */
static void *worker(void *arg)
{
	struct thread *t = arg;
	struct run *r = t->r;
	unsigned long n = 0;
	char buf[256];

	shim_cpu = t->cpu;
	while (!stopping(r)) {
		sim_reclaim_work(&r->s);
		if (r->s.dev.discards)
			sim_discard_work(&r->s);
		if (!(++n % 2)) {
			pthread_rwlock_rdlock(&r->bind);
			sim_lock(&r->s.sd);
			if (swapalloc_check(&r->s.dev, buf, sizeof(buf)))
				run_fail(r, "check while running: %s", buf);
			sim_unlock(&r->s.sd);
			pthread_rwlock_unlock(&r->bind);
			__atomic_fetch_add(&r->checks, 1, __ATOMIC_RELAXED);
		}
		usleep(200);
	}
	return NULL;
}

/* Unbind and bind again now and then; frees go on meanwhile. */
static void *rebinder(void *arg)
{
	struct thread *t = arg;
	struct run *r = t->r;
	int k;

	shim_cpu = t->cpu;
	while (!stopping(r)) {
		usleep(2000 + rand_r(&t->seed) % 3000);
		/* No last rebuild after the others stop: it would hide their state. */
		if (stopping(r))
			break;
		/* On a discard device, rebind while a discard is in flight. */
		for (k = 0; r->s.dev.discards && k < 50 &&
		     !__atomic_load_n(&r->in_discard, __ATOMIC_ACQUIRE); k++)
			usleep(100);
		pthread_rwlock_wrlock(&r->bind);
		__atomic_store_n(&r->rebinding, 1, __ATOMIC_RELEASE);
		sim_rebind(&r->s);
		__atomic_store_n(&r->rebinding, 0, __ATOMIC_RELEASE);
		pthread_rwlock_unlock(&r->bind);
		__atomic_fetch_add(&r->rebinds, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Every slot in use has an owner, and only those. */
static void check_owners(struct run *r)
{
	struct sim_dev *sd = &r->s.sd;
	unsigned long i;

	for (i = 0; i < sd->max; i++) {
		unsigned char v = sd->swap_map[i];
		bool used = v && v != SWAP_MAP_BAD;

		if (used != !!r->owner[i])
			T_FAIL("slot %lu: map %#x, owner %u", i, v, r->owner[i]);
	}
}

static unsigned long t_iters = 20000;
static unsigned int t_seed;
static unsigned int t_timeout = 120;	/* seconds per case */

/* A livelock or deadlock fails the run instead of hanging it. */
static void on_alarm(int sig)
{
	static const char msg[] = "FAIL: the threads did not finish in time (livelock or deadlock)\n";

	(void)sig;
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(1);
}

static void run_threads(enum swapalloc_policy policy, bool discard,
			enum swapalloc_placement placement, unsigned long clusters,
			bool fast)
{
	static struct thread th[NR_ALLOCATORS + 3];
	pthread_t tid[NR_ALLOCATORS + 3];
	struct run *r = calloc(1, sizeof(*r));
	pthread_rwlockattr_t rwa;
	char buf[256];
	int i;

	T_ASSERT(r);
	shim_warnings = 0;
	signal(SIGALRM, on_alarm);
	alarm(t_timeout);
	r->iters = t_iters;
	T_EQ(sim_init(&r->s, clusters * CS - CS / 4, policy, discard), 0);
	r->s.dev.placement = placement;
	r->s.dev.fast = fast;
	/* As module/main.c's swapalloc_bind(). */
	r->s.dev.free_fast = fast && placement != SA_PLACE_ANTIFRAG;
	sim_bind(&r->s);
	r->owner = calloc(r->s.sd.max, sizeof(*r->owner));
	T_ASSERT(r->owner);
	r->s.sd.on_free = on_reclaim;
	r->s.sd.on_free_arg = r;
	r->s.sd.hook = on_event;
	r->s.sd.hook_arg = r;
	/*
	 * Writers first: synchronize_rcu(), which the rebind stands for,
	 * waits only for the readers already in, so a stream of allocations
	 * cannot hold an unbind off; a reader-first lock let four allocators
	 * on a full device starve the rebinder for minutes.
	 */
	pthread_rwlockattr_init(&rwa);
	pthread_rwlockattr_setkind_np(&rwa, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&r->bind, &rwa);
	pthread_rwlockattr_destroy(&rwa);
	pthread_mutex_init(&r->why_lock, NULL);

	for (i = 0; i < NR_ALLOCATORS + 3; i++) {
		void *(*fn)(void *) = i < NR_ALLOCATORS ? allocator :
				      i == CPU_CACHE ? cacher :
				      i == CPU_WORKER ? worker : rebinder;

		th[i] = (struct thread){ .r = r, .cpu = i, .seed = t_seed * 131 + i };
		T_EQ(pthread_create(&tid[i], NULL, fn, &th[i]), 0);
	}
	for (i = 0; i < NR_ALLOCATORS; i++)
		pthread_join(tid[i], NULL);
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	for (i = NR_ALLOCATORS; i < NR_ALLOCATORS + 3; i++)
		pthread_join(tid[i], NULL);
	if (r->failed)
		T_FAIL("%s", r->why);

	if (sim_check(&r->s, buf, sizeof(buf)))
		T_FAIL("after the threads: %s", buf);
	check_owners(r);
	/* A WARN_ON in the core is a broken invariant, though the run went on. */
	T_EQ(shim_warnings, 0);
	if (t_verbose)
		printf("  %s%s%s%s, %lu clusters: %lu entries (%lu fast), %lu frees without the lock, %lu slots reclaimed, %lu rebinds (%lu yields to a discard in flight), %lu checks, %llu owned, %llu revoked, %llu folded\n",
		       swapalloc_policy_name(policy), discard ? " discard" : "",
		       placement == SA_PLACE_ANTIFRAG ? " antifrag" : "",
		       fast ? " fast" : "", clusters, r->allocated, r->fast,
		       r->s.sd.cnt.fast_frees, r->reclaimed,
		       r->rebinds, r->s.sd.cnt.rebind_waits, r->checks, (unsigned long long)r->s.dev.stats.owned,
		       (unsigned long long)r->s.dev.stats.revoked,
		       (unsigned long long)r->s.dev.stats.folded);
	T_ASSERT(r->allocated > t_iters / 4);
	T_ASSERT(r->rebinds > 0 || t_iters < 5000);
	/* Frees came without the lock exactly where the module has them so. */
	if (!(fast && placement != SA_PLACE_ANTIFRAG))
		T_EQ(r->s.sd.cnt.fast_frees, 0);
	else if (t_iters >= 5000)
		T_ASSERT(r->s.sd.cnt.fast_frees > 0);
	/*
	 * The fast path served most entries and frees pended in its
	 * clusters; on a device the threads fill, clusters were taken back.
	 */
	if (fast && policy == SA_POLICY_PERCPU && t_iters >= 5000) {
		T_ASSERT(r->fast > 0);
		T_ASSERT(r->s.dev.stats.folded > 0);
		if (clusters >= 32)
			T_ASSERT(r->fast > r->allocated / 4);
		else
			T_ASSERT(r->s.dev.stats.revoked > 0);
	}
	if (!fast || policy != SA_POLICY_PERCPU)
		T_EQ(r->fast, 0);

	/* Everything back: nothing may stay in use. */
	for (i = 0; i < NR_ALLOCATORS; i++)
		while (th[i].nr_held)
			free_held(&th[i], th[i].nr_held - 1);
	for (i = 0; i < (int)r->s.sd.max; i++)
		if (r->owner[i] == OWNER_CACHE && sim_cache_folio(&r->s, i) == i) {
			unsigned long nr = 1UL << r->s.sd.cache_order[i];

			unclaim(r, i, __builtin_ctzl(nr), OWNER_CACHE);
			sim_cache_del(&r->s, i);
		}
	sim_rebind(&r->s);
	if (sim_check(&r->s, buf, sizeof(buf)))
		T_FAIL("after freeing everything: %s", buf);
	T_EQ(r->s.sd.inuse, 0);
	check_owners(r);

	free(r->owner);
	sim_destroy(&r->s);
	free(r);
	alarm(0);
}

/* The per-CPU cases run the fast path; the first one also without it. */
static void test_threads_percpu_locked(void)
{
	run_threads(SA_POLICY_PERCPU, false, SA_PLACE_DEFAULT, 160, false);
}

static void test_threads_percpu(void)
{
	run_threads(SA_POLICY_PERCPU, false, SA_PLACE_DEFAULT, 160, true);
}

static void test_threads_percpu_antifrag(void)
{
	run_threads(SA_POLICY_PERCPU, false, SA_PLACE_ANTIFRAG, 160, true);
}

static void test_threads_percpu_discard(void)
{
	run_threads(SA_POLICY_PERCPU, true, SA_PLACE_DEFAULT, 140, true);
}

/*
 * A device the threads fill: free clusters run out, and allocations take
 * other CPUs' owned clusters back while those CPUs' fast paths run.
 */
static void test_threads_percpu_revoke(void)
{
	run_threads(SA_POLICY_PERCPU, false, SA_PLACE_DEFAULT, 12, true);
}

/* ->fast set, but a global cursor: the fast path must refuse every time. */
static void test_threads_global(void)
{
	run_threads(SA_POLICY_GLOBAL, false, SA_PLACE_DEFAULT, 130, true);
}

static const struct t_case cases[] = {
	T_CASE(test_threads_percpu_locked),
	T_CASE(test_threads_percpu),
	T_CASE(test_threads_percpu_antifrag),
	T_CASE(test_threads_percpu_discard),
	T_CASE(test_threads_percpu_revoke),
	T_CASE(test_threads_global),
};

int main(int argc, char **argv)
{
	int c, targc = 1;
	char *targv[4] = { argv[0] };

	t_seed = getpid();
	while ((c = getopt(argc, argv, "i:s:t:v")) != -1) {
		switch (c) {
		case 't':
			t_timeout = strtoul(optarg, NULL, 0);
			break;
		case 'i':
			t_iters = strtoul(optarg, NULL, 0);
			break;
		case 's':
			t_seed = strtoul(optarg, NULL, 0);
			break;
		case 'v':
			targv[targc++] = "-v";
			break;
		default:
			fprintf(stderr, "usage: %s [-i ITERATIONS] [-s SEED] [-t SECONDS] [-v]\n",
				argv[0]);
			return 2;
		}
	}
	printf("seed=%u iterations=%lu\n", t_seed, t_iters);
	optind = 1;
	shim_quiet_warnings = false;
	return t_main(cases, ARRAY_SIZE(cases), targc, targv);
}
