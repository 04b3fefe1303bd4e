// SPDX-License-Identifier: GPL-2.0
/*
 * sa_costbench: the cost of swap slot allocation without probes, for
 * make bench's direct cost case (bench/guest.sh).
 *
 *   insmod sa_costbench.ko order=O [threads=T] [calls=N] [hold=H]
 *   cat /sys/module/sa_costbench/parameters/{median_ns,mean_ns,entries}
 *   cat /sys/module/sa_costbench/parameters/{free_median_ns,free_mean_ns}
 *   rmmod sa_costbench
 *
 * At load, T kernel threads (default 1, at most 8 and the CPUs online), one
 * per CPU, each call
 * the kernel's get_swap_pages() N times (default 16384): for up to 64
 * order-0 entries at a time (what a swap slot cache refill asks) or for one
 * entry of order O (a large folio's).  Each call is timed with
 * ktime_get_ns() on both sides, nothing else: no kprobe, no BPF.  The
 * entries of the last H calls (default 64) stay allocated; older ones are
 * given back with swapcache_free_entries(), slot by slot, as a swap slot
 * cache returns slots it did not use.  That keeps the device's fill steady
 * and lets the allocator reuse what was freed, as swap-in does.  Each such
 * free is timed too, apart: an allocator may move work from the free to
 * the next allocation (swapalloc's frees without si->lock leave the lists
 * to the next locked call), and the two figures together show it.
 *
 * The result is each call's time divided by the entries it returned: the
 * median over every call of every thread (a call that an interrupt or a
 * preemption lands in counts once, whatever it took) and the mean; the
 * same for the frees, per entry given back.  Timing a call costs two clock
 * reads, which under QEMU's TCG (HPET clocksource) cost more than an
 * order-4 allocation: each thread first times 1024 empty regions, and
 * net_median_ns is the median over the calls of each call's time less
 * that median (clock_ns), per entry.  The
 * load fails with -ENOSPC when a call returned nothing (the device filled,
 * or no swap is on), -EINVAL on bad parameters.
 *
 * Whichever swap device get_swap_pages() picks serves the calls: the case
 * swaps on one device.  Neither function is exported; the module finds
 * them through a kprobe's symbol lookup.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/swap.h>
#include <linux/swapops.h>
#include <linux/vmalloc.h>

#define SA_CB_BATCH	64	/* SWAP_SLOTS_CACHE_SIZE */
#define SA_CB_MAX_ORDER	9
#define SA_CB_MAX_THREADS	8
#define SA_CB_CLOCK_PAIRS	1024	/* empty timed regions per thread */

static int sa_cb_order;
module_param_named(order, sa_cb_order, int, 0444);
MODULE_PARM_DESC(order, "order of each entry: 0 (64 a call, a slot cache refill) or up to 9 (one a call)");
static int sa_cb_threads = 1;
module_param_named(threads, sa_cb_threads, int, 0444);
MODULE_PARM_DESC(threads, "threads calling at once, one per CPU (1-8, at most the CPUs online)");
static int sa_cb_calls = 16384;
module_param_named(calls, sa_cb_calls, int, 0444);
MODULE_PARM_DESC(calls, "get_swap_pages() calls per thread (1-1000000)");
static int sa_cb_hold = 64;
module_param_named(hold, sa_cb_hold, int, 0444);
MODULE_PARM_DESC(hold, "calls whose entries each thread keeps allocated (1-4096)");
static ulong sa_cb_median_ns;
module_param_named(median_ns, sa_cb_median_ns, ulong, 0444);
MODULE_PARM_DESC(median_ns, "result: median ns per entry over the calls");
static ulong sa_cb_mean_ns;
module_param_named(mean_ns, sa_cb_mean_ns, ulong, 0444);
MODULE_PARM_DESC(mean_ns, "result: total ns of the calls over the entries they returned");
static ulong sa_cb_free_median_ns;
module_param_named(free_median_ns, sa_cb_free_median_ns, ulong, 0444);
MODULE_PARM_DESC(free_median_ns, "result: median ns per entry over the timed frees");
static ulong sa_cb_free_mean_ns;
module_param_named(free_mean_ns, sa_cb_free_mean_ns, ulong, 0444);
MODULE_PARM_DESC(free_mean_ns, "result: total ns of the timed frees over the entries they gave back");
static ulong sa_cb_entries;
module_param_named(entries, sa_cb_entries, ulong, 0444);
MODULE_PARM_DESC(entries, "result: entries the calls returned");
static ulong sa_cb_clock_ns;
module_param_named(clock_ns, sa_cb_clock_ns, ulong, 0444);
MODULE_PARM_DESC(clock_ns, "result: median ns of an empty timed region, the clock's own cost");
static ulong sa_cb_net_median_ns;
module_param_named(net_median_ns, sa_cb_net_median_ns, ulong, 0444);
MODULE_PARM_DESC(net_median_ns, "result: median ns per entry over the calls, each less clock_ns");

typedef int (*sa_cb_get_t)(int n, swp_entry_t entries[], int order);
typedef void (*sa_cb_free_t)(swp_entry_t *entries, int n);
static sa_cb_get_t sa_cb_get;
static sa_cb_free_t sa_cb_free;

struct sa_cb_thread {
	struct task_struct *task;
	struct completion *start;
	u64 *ns;		/* per call: ns per entry returned */
	u64 *net;		/* per call: the same, less the clock's cost */
	u64 *cal;		/* the empty timed regions */
	u64 clock_ns;		/* their median */
	u64 *fns;		/* per timed free: ns per entry given back */
	swp_entry_t *held;	/* hold calls' entries, a ring */
	int *held_n;
	swp_entry_t *slots;	/* one call's entries, as order-0 slots */
	u64 sum_ns, free_sum_ns;
	unsigned long entries, freed;
	int calls, frees;
	int err;
	struct completion done;
};

static void *sa_cb_lookup(const char *name)
{
	struct kprobe kp = { .symbol_name = name };
	void *addr;

	if (register_kprobe(&kp))
		return NULL;
	addr = kp.addr;
	unregister_kprobe(&kp);
	return addr;
}

static int sa_cb_cmp(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* Give back one call's entries, slot by slot. */
static void sa_cb_give_back(struct sa_cb_thread *t, swp_entry_t *e, int n)
{
	int size = 1 << sa_cb_order, i, j, k = 0;

	for (i = 0; i < n; i++)
		for (j = 0; j < size; j++)
			t->slots[k++] = swp_entry(swp_type(e[i]), swp_offset(e[i]) + j);
	sa_cb_free(t->slots, k);
}

static int sa_cb_run(void *arg)
{
	struct sa_cb_thread *t = arg;
	int want = sa_cb_order ? 1 : SA_CB_BATCH;
	int i, slot, n;
	u64 t0, d;

	wait_for_completion(t->start);
	/*
	 * What timing a call costs by itself: two clock reads.  Under QEMU's
	 * TCG the clocksource is the HPET, whose reads are emulated device
	 * accesses, and the pair costs more than an order-4 allocation.
	 */
	for (i = 0; i < SA_CB_CLOCK_PAIRS; i++) {
		t0 = ktime_get_ns();
		t->cal[i] = ktime_get_ns() - t0;
	}
	sort(t->cal, SA_CB_CLOCK_PAIRS, sizeof(*t->cal), sa_cb_cmp, NULL);
	t->clock_ns = t->cal[SA_CB_CLOCK_PAIRS / 2];
	for (i = 0; i < sa_cb_calls; i++) {
		slot = i % sa_cb_hold;
		if (i >= sa_cb_hold) {
			n = t->held_n[slot];
			t0 = ktime_get_ns();
			sa_cb_give_back(t, t->held + slot * SA_CB_BATCH, n);
			d = ktime_get_ns() - t0;
			t->fns[t->frees++] = div_u64(d, n);
			t->free_sum_ns += d;
			t->freed += n;
		}
		t0 = ktime_get_ns();
		n = sa_cb_get(want, t->held + slot * SA_CB_BATCH, sa_cb_order);
		d = ktime_get_ns() - t0;
		t->held_n[slot] = n;
		if (n <= 0) {
			t->err = -ENOSPC;
			t->held_n[slot] = 0;
			i++;
			break;
		}
		t->net[t->calls] = div_u64(d > t->clock_ns ? d - t->clock_ns : 0, n);
		t->ns[t->calls++] = div_u64(d, n);
		t->sum_ns += d;
		t->entries += n;
		cond_resched();
	}
	for (slot = 0; slot < min(i, sa_cb_hold); slot++)
		sa_cb_give_back(t, t->held + slot * SA_CB_BATCH, t->held_n[slot]);
	complete(&t->done);
	/*
	 * kthread_stop() collects the thread, so that the module outlives
	 * it; it is called only once the work is done, since a thread
	 * stopped before it first runs never calls this function.
	 */
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

enum sa_cb_what { SA_CB_CALLS, SA_CB_NET, SA_CB_FREES };

/* The median over every thread of @what, sorted in @all. */
static u64 sa_cb_median(struct sa_cb_thread *th, enum sa_cb_what what, u64 *all)
{
	int i, n = 0, c;
	u64 *v;

	for (i = 0; i < sa_cb_threads; i++) {
		c = what == SA_CB_FREES ? th[i].frees : th[i].calls;
		v = what == SA_CB_FREES ? th[i].fns :
		    what == SA_CB_NET ? th[i].net : th[i].ns;
		memcpy(all + n, v, c * sizeof(*all));
		n += c;
	}
	if (!n)
		return 0;
	sort(all, n, sizeof(*all), sa_cb_cmp, NULL);
	return all[n / 2];
}

static void sa_cb_free_thread(struct sa_cb_thread *t)
{
	vfree(t->ns);
	vfree(t->net);
	kfree(t->cal);
	vfree(t->fns);
	vfree(t->held);
	kfree(t->held_n);
	kfree(t->slots);
}

static int __init sa_cb_init(void)
{
	struct sa_cb_thread *th;
	DECLARE_COMPLETION_ONSTACK(start);
	unsigned long entries = 0, freed = 0;
	u64 *all, sum = 0, free_sum = 0;
	int i, cpu, err = 0;

	if (sa_cb_order < 0 || sa_cb_order > SA_CB_MAX_ORDER ||
	    sa_cb_threads < 1 || sa_cb_threads > SA_CB_MAX_THREADS ||
	    sa_cb_threads > num_online_cpus() ||
	    sa_cb_calls < 1 || sa_cb_calls > 1000000 ||
	    sa_cb_hold < 1 || sa_cb_hold > 4096) {
		pr_warn("order 0-%d, threads 1-%d (at most the CPUs online), calls 1-1000000, hold 1-4096\n",
			SA_CB_MAX_ORDER, SA_CB_MAX_THREADS);
		return -EINVAL;
	}
	sa_cb_get = sa_cb_lookup("get_swap_pages");
	sa_cb_free = sa_cb_lookup("swapcache_free_entries");
	if (!sa_cb_get || !sa_cb_free) {
		pr_warn("get_swap_pages() or swapcache_free_entries() not found\n");
		return -ENOENT;
	}
	th = kcalloc(sa_cb_threads, sizeof(*th), GFP_KERNEL);
	if (!th)
		return -ENOMEM;
	for (i = 0; i < sa_cb_threads; i++) {
		struct sa_cb_thread *t = &th[i];

		t->start = &start;
		init_completion(&t->done);
		t->ns = vcalloc(sa_cb_calls, sizeof(*t->ns));
		t->net = vcalloc(sa_cb_calls, sizeof(*t->net));
		t->cal = kcalloc(SA_CB_CLOCK_PAIRS, sizeof(*t->cal), GFP_KERNEL);
		t->fns = vcalloc(sa_cb_calls, sizeof(*t->fns));
		t->held = vcalloc(sa_cb_hold * SA_CB_BATCH, sizeof(*t->held));
		t->held_n = kcalloc(sa_cb_hold, sizeof(*t->held_n), GFP_KERNEL);
		t->slots = kcalloc(SA_CB_BATCH << sa_cb_order, sizeof(*t->slots),
				   GFP_KERNEL);
		if (!t->ns || !t->net || !t->cal || !t->fns || !t->held ||
		    !t->held_n || !t->slots) {
			err = -ENOMEM;
			goto out;
		}
	}
	i = 0;
	for_each_online_cpu(cpu) {
		if (i == sa_cb_threads)
			break;
		th[i].task = kthread_create_on_cpu(sa_cb_run, &th[i], cpu,
						   "sa_costbench/%u");
		if (IS_ERR(th[i].task)) {
			err = PTR_ERR(th[i].task);
			th[i].task = NULL;
			break;
		}
		wake_up_process(th[i].task);
		i++;
	}
	complete_all(&start);
	for (i = 0; i < sa_cb_threads; i++) {
		if (!th[i].task)
			continue;
		wait_for_completion(&th[i].done);
		kthread_stop(th[i].task);
	}
	if (err)
		goto out;

	all = vcalloc(sa_cb_calls * sa_cb_threads, sizeof(*all));
	if (!all) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < sa_cb_threads; i++) {
		sum += th[i].sum_ns;
		entries += th[i].entries;
		free_sum += th[i].free_sum_ns;
		freed += th[i].freed;
		if (th[i].err)
			err = th[i].err;
	}
	sa_cb_median_ns = sa_cb_median(th, SA_CB_CALLS, all);
	sa_cb_net_median_ns = sa_cb_median(th, SA_CB_NET, all);
	sa_cb_free_median_ns = sa_cb_median(th, SA_CB_FREES, all);
	/* Each thread subtracted its own; shown: the largest of them. */
	for (i = 0; i < sa_cb_threads; i++)
		sa_cb_clock_ns = max(sa_cb_clock_ns, th[i].clock_ns);
	if (entries)
		sa_cb_mean_ns = div64_ul(sum, entries);
	if (freed)
		sa_cb_free_mean_ns = div64_ul(free_sum, freed);
	sa_cb_entries = entries;
	vfree(all);
	if (err)
		pr_warn("a call returned no entry after %lu: is a swap device on, with room?\n",
			entries);
	else
		pr_info("order %d, %d thread(s): %lu entries, median %lu ns (%lu less the clock's %lu), mean %lu ns per entry; frees %lu and %lu ns\n",
			sa_cb_order, sa_cb_threads, entries, sa_cb_median_ns,
			sa_cb_net_median_ns, sa_cb_clock_ns,
			sa_cb_mean_ns, sa_cb_free_median_ns, sa_cb_free_mean_ns);
out:
	for (i = 0; i < sa_cb_threads; i++)
		sa_cb_free_thread(&th[i]);
	kfree(th);
	return err;
}

static void __exit sa_cb_exit(void)
{
}

module_init(sa_cb_init);
module_exit(sa_cb_exit);
MODULE_DESCRIPTION("The cost of swap slot allocation, timed without probes");
MODULE_LICENSE("GPL");
