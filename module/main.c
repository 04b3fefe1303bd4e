// SPDX-License-Identifier: GPL-2.0
/*
 * swapalloc: the cluster swap slot allocator of later upstream kernels as a
 * module for Linux 6.12, bound to swap devices through the swap_alloc hook
 * of patches/.
 *
 * Non-rotational devices (SSD, NVMe, zram) allocate from per-CPU clusters;
 * rotational devices from one global cluster per order per device, so
 * their writes stay sequential and they get mTHP swap-out too.
 *
 * Locking, outermost first:
 *   swapalloc_policy_mutex      one policy switch at a time (policy.c)
 *   swap_alloc_mutex (kernel)   registration, binding and unbinding
 *   swapalloc_devices_lock      the device records, their directories
 *   si->lock (kernel)           all allocator state of a device: lists,
 *                               counts, cursors, statistics
 *   ci->lock (kernel)           swap_map bytes, inside the helpers only
 * The discard and reclaim work items take si->lock themselves and drop it
 * around discards and swap-cache reclaim.  They run on swapalloc_wq, which
 * has WQ_MEM_RECLAIM: they free swap space that swap-out under memory
 * pressure may be waiting for.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/swap.h>
#include <swapalloc_env_types.h>
#include <swapalloc_env.h>
#include "swapalloc.h"

#define CREATE_TRACE_POINTS
#include <swapalloc_trace.h>

struct workqueue_struct *swapalloc_wq;

/* devices=: comma-separated names of the devices to bind; empty binds all. */
static char swapalloc_param_devices[256];

static int swapalloc_set_devices(const char *val, const struct kernel_param *kp)
{
	size_t len = strlen(val);
	const char *p;

	if (len && val[len - 1] == '\n')
		len--;
	if (len >= sizeof(swapalloc_param_devices)) {
		pr_warn("devices= is longer than %zu characters\n",
			sizeof(swapalloc_param_devices) - 1);
		return -EINVAL;
	}
	for (p = val; p < val + len; p++) {
		if (*p == ',' && (p == val || p[-1] == ',' || p + 1 == val + len)) {
			pr_warn("devices=: empty device name in '%.*s'\n", (int)len, val);
			return -EINVAL;
		}
		if (!isascii(*p) || !isgraph(*p)) {
			pr_warn("devices=: device names are printable ASCII, without spaces\n");
			return -EINVAL;
		}
	}
	memcpy(swapalloc_param_devices, val, len);
	swapalloc_param_devices[len] = '\0';
	/* A swap file may be named by its path: /swap/file is !swap!file. */
	strreplace(swapalloc_param_devices, '/', '!');
	return 0;
}

static const struct kernel_param_ops swapalloc_devices_ops = {
	.set = swapalloc_set_devices,
	.get = param_get_string,
};

static struct kparam_string swapalloc_devices_kps = {
	.maxlen = sizeof(swapalloc_param_devices),
	.string = swapalloc_param_devices,
};

module_param_cb(devices, &swapalloc_devices_ops, &swapalloc_devices_kps, 0444);
MODULE_PARM_DESC(devices, "Comma-separated swap devices to bind (zram0,vdb,...); empty: all");

/*
 * policy=: the choice (module/policy.c) for the devices of devices= when
 * swapalloc first sees them: auto picks the cursors per device, percpu or
 * global forces them, antifrag is auto with place.c's antifrag placement,
 * builtin leaves every device to the kernel until its `policy` file says
 * otherwise.  Each device's `policy` file in sysfs changes it at run time.
 */
static int swapalloc_param_policy = SWAPALLOC_AUTO;

static int swapalloc_set_policy(const char *val, const struct kernel_param *kp)
{
	int choice = swapalloc_choice_parse(val);

	if (choice < 0) {
		pr_warn("policy= must be auto, percpu or global, or antifrag or builtin\n");
		return -EINVAL;
	}
	swapalloc_param_policy = choice;
	return 0;
}

static int swapalloc_get_policy(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", swapalloc_choices[swapalloc_param_policy].name);
}

static const struct kernel_param_ops swapalloc_policy_ops = {
	.set = swapalloc_set_policy,
	.get = swapalloc_get_policy,
};

module_param_cb(policy, &swapalloc_policy_ops, NULL, 0444);
MODULE_PARM_DESC(policy, "Default for devices: auto (per-CPU clusters for SSD/zram, global for rotational), percpu, global, antifrag or builtin");

/*
 * placement=: default (upstream's order) or antifrag (module/place.c).
 * antifrag is the same as policy=antifrag, and goes with policy=auto only.
 */
static int swapalloc_param_placement = SA_PLACE_DEFAULT;

static int swapalloc_set_placement(const char *val, const struct kernel_param *kp)
{
	int p;

	for (p = 0; p < SA_NR_PLACEMENTS; p++) {
		if (sysfs_streq(val, swapalloc_placement_name(p))) {
			swapalloc_param_placement = p;
			return 0;
		}
	}
	pr_warn("placement= must be default or antifrag\n");
	return -EINVAL;
}

static int swapalloc_get_placement(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", swapalloc_placement_name(swapalloc_param_placement));
}

static const struct kernel_param_ops swapalloc_placement_ops = {
	.set = swapalloc_set_placement,
	.get = swapalloc_get_placement,
};

module_param_cb(placement, &swapalloc_placement_ops, NULL, 0444);
MODULE_PARM_DESC(placement, "default (upstream's order of preference) or antifrag (as policy=antifrag)");

/*
 * fast=: allocate from each CPU's owned cluster without si->lock
 * (->alloc_fast(), swapalloc_alloc_fast()) on per-CPU devices; fast=0
 * takes every allocation under si->lock, as 6.12 does.  Read at load
 * only: the hook waits for the fast path at swapoff and unbind only when
 * the ops have ->alloc_fast(), so it is set once, before registering.
 */
static bool swapalloc_param_fast = true;
module_param_named(fast, swapalloc_param_fast, bool, 0444);
MODULE_PARM_DESC(fast, "Per-CPU devices allocate from each CPU's own cluster without the device lock (default: on; 0 takes the device lock for every allocation)");

/**
 * swapalloc_device_name() - the name users know a swap device by
 * @si: the device
 * @buf: output
 * @len: size of @buf
 *
 * The block device name (zram0, vdb) or a swap file's path with '/'
 * written as '!', the way sysfs escapes block device names, and any other
 * character but printable ASCII as '?' (the name is a sysfs and a debugfs
 * directory and a column of space-separated tables).  A path longer than @len - 1
 * characters is named swap<type>.
 */
void swapalloc_device_name(struct swap_info_struct *si, char *buf, size_t len)
{
	char *path, *p;

	if ((si->flags & SWP_BLKDEV) && si->bdev) {
		snprintf(buf, len, "%pg", si->bdev);
		return;
	}
	path = si->swap_file ? file_path(si->swap_file, buf, len) : ERR_PTR(-ENOENT);
	if (IS_ERR(path)) {
		snprintf(buf, len, "swap%d", si->type);
		return;
	}
	memmove(buf, path, strlen(path) + 1);
	for (p = buf; *p; p++) {
		if (*p == '/')
			*p = '!';
		else if (!isascii(*p) || !isgraph(*p))
			*p = '?';
	}
}

static bool swapalloc_wanted(const char *name)
{
	const char *p = swapalloc_param_devices;
	size_t n = strlen(name);

	if (!*p)
		return true;
	while (*p) {
		size_t l = strcspn(p, ",");

		if (l == n && !strncmp(p, name, n))
			return true;
		p += l;
		if (*p == ',')
			p++;
	}
	return false;
}

/* Say which names of devices= matched no active swap device (yet). */
static void swapalloc_report_unbound(void)
{
	const char *p = swapalloc_param_devices;
	struct swapalloc_rec *rec;
	bool found;
	size_t l;

	while (*p) {
		l = strcspn(p, ",");
		found = false;
		mutex_lock(&swapalloc_devices_lock);
		list_for_each_entry(rec, &swapalloc_recs, node)
			if (strlen(rec->name) == l && !strncmp(rec->name, p, l))
				found = true;
		mutex_unlock(&swapalloc_devices_lock);
		if (!found)
			pr_info("devices=: no active swap device %.*s; it is bound when swapped on\n",
				(int)l, p);
		p += l;
		if (*p == ',')
			p++;
	}
}

/*
 * Sleep until *@done is no longer @seen (a discard finished) or 100 ms
 * passed; no lock held.  Out of line: sparse loses track of si->lock
 * around wait_var_event_timeout() inlined into swapalloc_alloc().
 */
void swapalloc_wait_discard_done(unsigned int *done, unsigned int seen)
{
	wait_var_event_timeout(done, READ_ONCE(*done) != seen, HZ / 10);
}

static void swapalloc_discard_work(struct work_struct *work)
{
	struct swapalloc_kdev *kdev = container_of(work, struct swapalloc_kdev,
						   core.env.discard_work);
	struct swap_info_struct *si = kdev->core.env.si;

	spin_lock(&si->lock);
	while (swapalloc_discard_one(&kdev->core))
		;
	spin_unlock(&si->lock);
}

static void swapalloc_reclaim_work(struct work_struct *work)
{
	struct swapalloc_kdev *kdev = container_of(work, struct swapalloc_kdev,
						   core.env.reclaim_work);
	struct swap_info_struct *si = kdev->core.env.si;

	spin_lock(&si->lock);
	swapalloc_reclaim_background(&kdev->core);
	spin_unlock(&si->lock);
}

/*
 * Offered a device: at registration, at swapon, or by a policy write.
 * Every device offered gets a record (and its directories), the
 * ones swapalloc declines too, so that their `policy` file can take them.
 */
static int swapalloc_attach(struct swap_info_struct *si, void **data)
{
	const struct swapalloc_choice *c;
	enum swapalloc_choice_id choice;
	struct swapalloc_kdev *kdev;
	enum swapalloc_policy policy;
	struct swapalloc_rec *rec;
	int err;

	kdev = kzalloc(sizeof(*kdev), GFP_KERNEL);
	if (!kdev)
		return -ENOMEM;
	swapalloc_device_name(si, kdev->name, sizeof(kdev->name));
	rec = swapalloc_rec_attach(si, kdev->name,
				   swapalloc_wanted(kdev->name) ?
				   swapalloc_param_policy : SWAPALLOC_BUILTIN, &choice);
	if (IS_ERR(rec) || choice == SWAPALLOC_BUILTIN) {
		kfree(kdev);
		return IS_ERR(rec) ? PTR_ERR(rec) : -ENODEV;
	}

	c = &swapalloc_choices[choice];
	if (!c->by_media)
		policy = c->cursors;
	else
		policy = (si->flags & SWP_SOLIDSTATE) ? SA_POLICY_PERCPU : SA_POLICY_GLOBAL;

	kdev->core.env.si = si;
	kdev->rec = rec;
	kdev->choice = choice;
	INIT_WORK(&kdev->core.env.discard_work, swapalloc_discard_work);
	INIT_WORK(&kdev->core.env.reclaim_work, swapalloc_reclaim_work);
	err = swapalloc_dev_init(&kdev->core, si->max, policy,
				 si->flags & SWP_PAGE_DISCARD);
	if (err) {
		kfree(kdev);
		return err;
	}
	kdev->core.placement = c->placement;
	/* Owned clusters need the cluster locks of si->cluster_info. */
	kdev->core.fast = swapalloc_param_fast && policy == SA_POLICY_PERCPU &&
			  si->cluster_info;
	*data = kdev;
	return 0;
}

/*
 * Under si->lock, allocations waiting: build the lists from swap_map, with
 * the lock let go between batches (swapalloc_dev_rebuild()).
 */
static void swapalloc_bind(struct swap_info_struct *si)
{
	struct swapalloc_kdev *kdev = si->alloc_data;
	u64 t0 = ktime_get_ns(), longest;

	swapalloc_env_hold_start(&kdev->core.env);
	swapalloc_dev_rebuild(&kdev->core);
	longest = swapalloc_env_hold_end(&kdev->core.env);
	/* Only antifrag keeps slots at swap-in: spare the others the lock. */
	if (kdev->core.placement == SA_PLACE_ANTIFRAG)
		swap_alloc_ask_keep_cache(si, true);
	/*
	 * Frees without si->lock, with the fast path; not with antifrag,
	 * whose record of kept slots is under si->lock.
	 */
	kdev->core.free_fast = kdev->core.fast &&
			       kdev->core.placement != SA_PLACE_ANTIFRAG;
	if (kdev->core.free_fast)
		swap_alloc_take_frees_fast(si);
	kdev->bound = true;
	pr_info("bound %s: %u clusters, %s cursors%s%s%s, rebuilt in %llu us, longest hold %llu us\n",
		kdev->name, kdev->core.nr_clusters,
		swapalloc_policy_name(kdev->core.policy),
		kdev->core.free_fast ? ", fast path and frees" :
		kdev->core.fast ? ", fast path" : "",
		kdev->core.discards ? ", discard" : "",
		kdev->core.placement == SA_PLACE_ANTIFRAG ? ", antifrag placement" : "",
		div_u64(ktime_get_ns() - t0, NSEC_PER_USEC),
		div_u64(longest, NSEC_PER_USEC));
}

static unsigned long swapalloc_alloc_slots(struct swap_info_struct *si,
					   int order, unsigned char usage)
{
	struct swapalloc_kdev *kdev = si->alloc_data;

	return swapalloc_alloc(&kdev->core, order, usage);
}

static int swapalloc_alloc_slots_batch(struct swap_info_struct *si, int order,
				       unsigned char usage, int nr,
				       swp_entry_t *slots)
{
	struct swapalloc_kdev *kdev = si->alloc_data;

	return swapalloc_alloc_batch(&kdev->core, order, usage, nr, slots);
}

/*
 * ->alloc_fast(): get_swap_pages() asks before it takes si->lock, inside
 * rcu_read_lock() with preemption disabled.  Commit from this CPU's owned
 * cluster under its lock alone and account it without si->lock; take
 * si->lock only when the device runs short of room, or once a cluster's
 * worth with the antifrag placement (swapalloc_alloc_fast_done() says
 * when).
 */
static int swapalloc_alloc_slots_fast(struct swap_info_struct *si, int order,
				      unsigned char usage, int nr,
				      swp_entry_t *slots)
{
	struct swapalloc_kdev *kdev = si->alloc_data;
	int n;

	n = swapalloc_alloc_fast(&kdev->core, order, usage, nr, slots);
	if (swapalloc_alloc_fast_done(&kdev->core, order, n, slots)) {
		spin_lock(&si->lock);
		swapalloc_alloc_fast_after(&kdev->core);
		spin_unlock(&si->lock);
	}
	return n;
}

static void swapalloc_free_slots(struct swap_info_struct *si,
				 unsigned long offset, unsigned int nr)
{
	struct swapalloc_kdev *kdev = si->alloc_data;

	swapalloc_free(&kdev->core, offset, nr);
}

/*
 * ->free_fast(): on devices that asked for it in swapalloc_bind(), the
 * frees, under the cluster lock and without si->lock, inside
 * rcu_read_lock(); the slow path folds them in.
 */
static void swapalloc_free_slots_fast(struct swap_info_struct *si,
				      unsigned long offset, unsigned int nr)
{
	struct swapalloc_kdev *kdev = si->alloc_data;

	swapalloc_free_fast(&kdev->core, offset, nr);
}

/* A swap-in asks whether to keep a folio's slots (antifrag, place.c). */
static bool swapalloc_keep_cache_slots(struct swap_info_struct *si,
				       unsigned long offset, unsigned int nr)
{
	struct swapalloc_kdev *kdev = si->alloc_data;

	return swapalloc_keep_cache(&kdev->core, offset, nr);
}

/*
 * Before the device is handed back, while it still allocates: stop the work
 * items and queuing discards (->quiescing), then finish every discard,
 * including those allocations have in flight, so that no slot stays held.
 */
static void swapalloc_quiesce(struct swap_info_struct *si)
{
	struct swapalloc_kdev *kdev = si->alloc_data;
	struct swapalloc_dev *dev = &kdev->core;

	spin_lock(&si->lock);
	dev->quiescing = true;
	spin_unlock(&si->lock);

	cancel_work_sync(&dev->env.reclaim_work);
	cancel_work_sync(&dev->env.discard_work);

	spin_lock(&si->lock);
	while (dev->nr_discard) {
		if (swapalloc_discard_one(dev))
			continue;
		/* The rest are being discarded by allocations: let them finish. */
		spin_unlock(&si->lock);
		schedule_timeout_uninterruptible(1);
		spin_lock(&si->lock);
	}
	spin_unlock(&si->lock);
}

static void swapalloc_detach(struct swap_info_struct *si, void *data)
{
	struct swapalloc_kdev *kdev = data;

	/* At swapoff removes the directory, else waits for a full check. */
	swapalloc_rec_detach(kdev);
	cancel_work_sync(&kdev->core.env.reclaim_work);
	cancel_work_sync(&kdev->core.env.discard_work);
	if (kdev->bound)
		pr_info("released %s\n", kdev->name);
	swapalloc_dev_destroy(&kdev->core);
	kfree(kdev);
}

struct swap_alloc_ops swapalloc_ops = {
	.name = "swapalloc",
	.owner = THIS_MODULE,
	.attach = swapalloc_attach,
	.bind = swapalloc_bind,
	.alloc = swapalloc_alloc_slots,
	.alloc_batch = swapalloc_alloc_slots_batch,
	.free = swapalloc_free_slots,
	.keep_cache = swapalloc_keep_cache_slots,
	.quiesce = swapalloc_quiesce,
	.detach = swapalloc_detach,
};

static int __init swapalloc_init(void)
{
	int err;

	/* Checked here, once both are set, whatever their order. */
	if (swapalloc_param_placement == SA_PLACE_ANTIFRAG) {
		if (swapalloc_param_policy != SWAPALLOC_AUTO &&
		    swapalloc_param_policy != SWAPALLOC_ANTIFRAG) {
			pr_warn("placement=antifrag goes with policy=auto only: it is policy=antifrag\n");
			return -EINVAL;
		}
		swapalloc_param_policy = SWAPALLOC_ANTIFRAG;
	}
	if (swapalloc_param_fast) {
		swapalloc_ops.alloc_fast = swapalloc_alloc_slots_fast;
		swapalloc_ops.free_fast = swapalloc_free_slots_fast;
	}
	swapalloc_wq = alloc_workqueue("swapalloc", WQ_MEM_RECLAIM | WQ_UNBOUND, 0);
	if (!swapalloc_wq) {
		pr_warn("cannot allocate its workqueue\n");
		return -ENOMEM;
	}
	err = swapalloc_sysfs_init();
	if (err) {
		pr_warn("cannot make /sys/kernel/swapalloc\n");
		destroy_workqueue(swapalloc_wq);
		return err;
	}
	swapalloc_debugfs_init();
	err = swap_alloc_register(&swapalloc_ops);
	if (err) {
		pr_warn("cannot register with the swap_alloc hook: %d\n", err);
		swapalloc_recs_unlink();
		swapalloc_recs_exit();
		swapalloc_debugfs_exit();
		swapalloc_sysfs_exit();
		destroy_workqueue(swapalloc_wq);
		return err;
	}
	pr_info("version %s loaded%s\n", SWAPALLOC_VERSION,
		swapalloc_param_fast ? "" : ", fast path off");
	swapalloc_report_unbound();
	return 0;
}

static void __exit swapalloc_exit(void)
{
	/* No policy write runs once the sysfs directories are gone. */
	swapalloc_recs_unlink();
	/* Hands every bound device back to the builtin allocator. */
	swap_alloc_unregister(&swapalloc_ops);
	swapalloc_recs_exit();
	swapalloc_debugfs_exit();
	swapalloc_sysfs_exit();
	destroy_workqueue(swapalloc_wq);
	pr_info("unloaded\n");
}

module_init(swapalloc_init);
module_exit(swapalloc_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("The swapalloc developers");
MODULE_DESCRIPTION("Cluster swap slot allocator with per-CPU (SSD) and global (rotational) clusters");
MODULE_VERSION(SWAPALLOC_VERSION);
