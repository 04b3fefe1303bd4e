// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/debug/swapalloc/: what the allocator is doing, per device and
 * per order, read only: the control files are in sysfs (module/sysfs.c).
 * Every file but `version` is a table: one header row, then rows of the
 * same space-separated columns, meant for scripts as well as people;
 * README.md documents every file.  One vocabulary across the tables: the
 * names users write (a policy is its sysfs choice's name), "-" is the one
 * marker for none, a flag is yes or no, free is free slots wherever it is
 * a column, and a column that is not a count names its unit.  debugfs is
 * not a stable ABI (Documentation/filesystems/debugfs.rst): columns may
 * change between releases, so scripts should look columns up by their
 * header name.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/swap.h>
#include <swapalloc_env_types.h>
#include "../module/swapalloc.h"

static struct dentry *swapalloc_debugfs_root;

/*
 * Every per-device file's private data is the device's record, which
 * lives as long as the directory; the allocator state (kdev) comes and
 * goes with binding.  A file finds it under si->lock, which frees and
 * allocations change everything shown here under, with
 * swapalloc_rec_kdev(), and fails with -ENODEV while swapalloc does not
 * allocate for the device.  The record's si may change while a handler
 * runs (the same name swapped on again as another type): the old one's
 * kdev, if any, is then not the record's.
 */
static struct swap_info_struct *swapalloc_rec_si(struct swapalloc_rec *rec)
{
	return READ_ONCE(rec->si);
}

/*
 * A table is made once, when its file is opened, and every read and seek
 * of that open file is served from that text.  A seq_file would make it
 * again at each seek back, and shells read line by line by reading ahead
 * and seeking back: with counts changing under load between two reads,
 * the second text is not the first and a reader loses or cuts a row.
 */
struct swapalloc_snap {
	size_t len;
	char buf[];
};

static int swapalloc_snap_open(struct inode *inode, struct file *file,
			       int (*show)(struct seq_file *, void *))
{
	size_t size = PAGE_SIZE;
	struct swapalloc_snap *snap;
	struct seq_file m;
	int err;

	for (;;) {
		snap = kvmalloc(struct_size(snap, buf, size), GFP_KERNEL);
		if (!snap)
			return -ENOMEM;
		memset(&m, 0, sizeof(m));
		m.buf = snap->buf;
		m.size = size;
		m.private = inode->i_private;
		err = show(&m, NULL);
		if (err) {
			kvfree(snap);
			return err;
		}
		if (!seq_has_overflowed(&m))
			break;
		kvfree(snap);
		if (size >= SZ_4M)
			return -E2BIG;
		size *= 2;
	}
	snap->len = m.count;
	file->private_data = snap;
	return 0;
}

static ssize_t swapalloc_snap_read(struct file *file, char __user *ubuf,
				   size_t count, loff_t *ppos)
{
	struct swapalloc_snap *snap = file->private_data;

	return simple_read_from_buffer(ubuf, count, ppos, snap->buf, snap->len);
}

static int swapalloc_snap_release(struct inode *inode, struct file *file)
{
	kvfree(file->private_data);
	return 0;
}

#define DEFINE_SWAPALLOC_TABLE(__name)					\
static int __name ## _open(struct inode *inode, struct file *file)	\
{									\
	return swapalloc_snap_open(inode, file, __name ## _show);	\
}									\
static const struct file_operations __name ## _fops = {		\
	.owner = THIS_MODULE,						\
	.open = __name ## _open,					\
	.read = swapalloc_snap_read,					\
	.llseek = default_llseek,					\
	.release = swapalloc_snap_release,				\
}

static int swapalloc_version_show(struct seq_file *m, void *v)
{
	seq_printf(m, "swapalloc %s swap_alloc_api %d\n", SWAPALLOC_VERSION,
		   SWAP_ALLOC_API_VERSION);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(swapalloc_version);

/*
 * A device's media as `devices` names it: zram, ssd or rotational; a swap
 * file's is the media of its filesystem's disk.  zram is told by its
 * disk's name: the zram driver names every disk it makes zram<N>
 * (zram_add() in drivers/block/zram/zram_drv.c), and no other driver
 * uses that name.  Nothing else tells zram apart: SWP_SYNCHRONOUS_IO is
 * set for brd and pmem too, and with zram built in its disks' fops name
 * no module.  Any other device is what swapon found: non-rotational
 * (SWP_SOLIDSTATE) is ssd, the rest rotational; that is also what auto
 * picks its cursors by.
 */
static const char *swapalloc_media_name(struct swap_info_struct *si)
{
	struct block_device *bdev = si->bdev;
	const char *disk;

	if (bdev && bdev->bd_disk) {
		disk = bdev->bd_disk->disk_name;
		if (strstarts(disk, "zram") && isdigit(disk[4]))
			return "zram";
	}
	return (si->flags & SWP_SOLIDSTATE) ? "ssd" : "rotational";
}

/*
 * One row per active swap device.  policy is the choice the device's
 * sysfs policy file shows active, builtin for a device the builtin
 * allocator has; cursors where allocations go on from: swapalloc's
 * percpu or global, or for the builtin allocator 6.12's per-CPU clusters
 * (percpu, non-rotational devices) or its scan of swap_map from one
 * offset (scan, devices without clusters).  "-" is the one marker for
 * none: the builtin allocator has no placement.
 */
static int swapalloc_devices_row(struct swap_info_struct *si, void *arg)
{
	struct seq_file *m = arg;
	struct swapalloc_kdev *kdev = NULL;
	const char *owner = "builtin", *policy, *cursors, *placement;
	char name[SWAPALLOC_NAME_LEN];
	unsigned long clusters, used;

	swapalloc_device_name(si, name, sizeof(name));
	spin_lock(&si->lock);
	if (si->alloc_state >= SWAP_ALLOC_BOUND && si->alloc_ops == &swapalloc_ops)
		kdev = si->alloc_data;
	if (kdev) {
		owner = "swapalloc";
		policy = swapalloc_choices[kdev->choice].name;
		cursors = swapalloc_policy_name(kdev->core.policy);
		placement = swapalloc_placement_name(kdev->core.placement);
		clusters = kdev->core.nr_clusters;
	} else {
		policy = swapalloc_choices[SWAPALLOC_BUILTIN].name;
		cursors = si->percpu_cluster ? "percpu" : "scan";
		placement = "-";
		clusters = DIV_ROUND_UP(si->max, SA_CLUSTER_SLOTS);
	}
	/* Slots held for discard are neither in use nor free: used + free + held = size. */
	used = atomic_long_read(&si->inuse_pages);
	seq_printf(m, "%s %d %s %s %s %s %s %lu %lu %lu %u\n", name, si->type,
		   swapalloc_media_name(si), owner, policy, cursors, placement,
		   clusters, used, si->pages - used - si->alloc_held,
		   si->alloc_held);
	spin_unlock(&si->lock);
	return 0;
}

static int swapalloc_devices_show(struct seq_file *m, void *v)
{
	int err;

	seq_puts(m, "name type media owner policy cursors placement clusters used free held\n");
	err = swap_alloc_walk_devices(swapalloc_devices_row, m);
	/* A device left to the builtin allocator may have gone meanwhile. */
	swapalloc_prune_soon();
	return err;
}

DEFINE_SWAPALLOC_TABLE(swapalloc_devices);

/* Free slots held by the clusters of a list. */
static unsigned long swapalloc_list_free(struct list_head *head)
{
	struct swapalloc_cluster *ci;
	unsigned long free = 0;

	list_for_each_entry(ci, head, node)
		free += SA_CLUSTER_SLOTS - ci->count;
	return free;
}

static void swapalloc_clusters_row(struct seq_file *m, enum swapalloc_list list,
				   int order, unsigned int nr, struct list_head *head)
{
	if (order < 0)
		seq_printf(m, "%s - %u %lu\n", swapalloc_list_name(list), nr,
			   swapalloc_list_free(head));
	else
		seq_printf(m, "%s %d %u %lu\n", swapalloc_list_name(list), order, nr,
			   swapalloc_list_free(head));
}

/*
 * The owned clusters of @order (the fast path's, one per CPU and order
 * at most): their count and pending frees change under their cluster
 * locks alone, so they are read racily, as a statistic.
 */
static void swapalloc_owned_row(struct seq_file *m, struct swapalloc_dev *dev, int order)
{
	struct swapalloc_cluster *ci;
	unsigned long free = 0;
	unsigned int nr = 0;

	list_for_each_entry(ci, &dev->owned, node) {
		if (ci->order != order)
			continue;
		nr++;
		/* Racy by design: the owner changes both under its cluster lock. */
		free += SA_CLUSTER_SLOTS - data_race(ci->count) + data_race(ci->pending_free);
	}
	seq_printf(m, "%s %d %u %lu\n", swapalloc_list_name(SA_LIST_OWNED), order, nr, free);
}

/*
 * One row per list: the per-order lists once per order, the others with
 * order "-"; free is the free slots of the list's clusters, as free in
 * `devices`.  The clusters column adds up to the device's row there.
 */
static int swapalloc_clusters_show(struct seq_file *m, void *v)
{
	struct swapalloc_rec *rec = m->private;
	struct swap_info_struct *si = swapalloc_rec_si(rec);
	struct swapalloc_kdev *kdev;
	struct swapalloc_dev *dev;
	int o;

	spin_lock(&si->lock);
	kdev = swapalloc_rec_kdev(rec, si);
	if (!kdev) {
		spin_unlock(&si->lock);
		return -ENODEV;
	}
	dev = &kdev->core;
	/* Frees that came without si->lock: on their lists first. */
	swapalloc_fold_frees(dev);
	seq_puts(m, "list order clusters free\n");
	swapalloc_clusters_row(m, SA_LIST_FREE, -1, dev->nr_free, &dev->free);
	for (o = 0; o < SA_NR_ORDERS; o++)
		swapalloc_clusters_row(m, SA_LIST_NONFULL, o, dev->nr_nonfull[o],
				       &dev->nonfull[o]);
	for (o = 0; o < SA_NR_ORDERS; o++)
		swapalloc_clusters_row(m, SA_LIST_FRAG, o, dev->nr_frag[o], &dev->frag[o]);
	swapalloc_clusters_row(m, SA_LIST_FULL, -1, dev->nr_full, &dev->full);
	swapalloc_clusters_row(m, SA_LIST_DISCARD, -1, dev->nr_discard, &dev->discard);
	for (o = 0; o < SA_NR_ORDERS; o++)
		swapalloc_owned_row(m, dev, o);
	spin_unlock(&si->lock);
	return 0;
}

DEFINE_SWAPALLOC_TABLE(swapalloc_clusters);

static int swapalloc_alloc_show(struct seq_file *m, void *v)
{
	struct swapalloc_rec *rec = m->private;
	struct swap_info_struct *si = swapalloc_rec_si(rec);
	struct swapalloc_order_stats *st;
	struct swapalloc_stats *all;
	struct swapalloc_kdev *kdev;
	unsigned int o, s;

	all = kmalloc(sizeof(*all), GFP_KERNEL);
	if (!all)
		return -ENOMEM;
	spin_lock(&si->lock);
	kdev = swapalloc_rec_kdev(rec, si);
	if (kdev)
		swapalloc_read_stats(&kdev->core, all);
	spin_unlock(&si->lock);
	if (!kdev) {
		kfree(all);
		return -ENODEV;
	}
	st = all->order;

	/* Where successes came from: from_free is from the free list. */
	seq_puts(m, "order requests success fail");
	for (s = 0; s < SA_NR_SRCS; s++)
		seq_printf(m, " from_%s", swapalloc_src_name(s));
	seq_putc(m, '\n');
	for (o = 0; o < SA_NR_ORDERS; o++) {
		seq_printf(m, "%u %llu %llu %llu", o, st[o].requests,
			   st[o].success, st[o].fail);
		for (s = 0; s < SA_NR_SRCS; s++)
			seq_printf(m, " %llu", st[o].src[s]);
		seq_putc(m, '\n');
	}
	kfree(all);
	return 0;
}

DEFINE_SWAPALLOC_TABLE(swapalloc_alloc);

/*
 * A table printed by @rows under si->lock, from the device's swapalloc
 * state; -ENODEV while swapalloc does not own the device.
 */
static int swapalloc_show_locked(struct seq_file *m,
				 void (*rows)(struct seq_file *m,
					      struct swapalloc_kdev *kdev))
{
	struct swapalloc_rec *rec = m->private;
	struct swap_info_struct *si = swapalloc_rec_si(rec);
	struct swapalloc_kdev *kdev;

	spin_lock(&si->lock);
	kdev = swapalloc_rec_kdev(rec, si);
	if (kdev)
		rows(m, kdev);
	spin_unlock(&si->lock);
	return kdev ? 0 : -ENODEV;
}

static void swapalloc_reclaim_rows(struct seq_file *m,
				   struct swapalloc_kdev *kdev)
{
	struct swapalloc_stats *st = &kdev->core.stats;

	seq_puts(m, "full_passes full_clusters_scanned full_slots_reclaimed range_slots_reclaimed background_runs\n");
	seq_printf(m, "%llu %llu %llu %llu %llu\n", st->reclaim_passes,
		   st->reclaim_clusters, st->reclaim_slots, st->range_reclaims,
		   st->background_runs);
}

static int swapalloc_reclaim_show(struct seq_file *m, void *v)
{
	return swapalloc_show_locked(m, swapalloc_reclaim_rows);
}

DEFINE_SWAPALLOC_TABLE(swapalloc_reclaim);

static void swapalloc_discard_rows(struct seq_file *m,
				   struct swapalloc_kdev *kdev)
{
	seq_puts(m, "enabled discarded sync waits pending\n");
	seq_printf(m, "%s %llu %llu %llu %u\n",
		   kdev->core.discards ? "yes" : "no", kdev->core.stats.discarded,
		   kdev->core.stats.sync_discards, kdev->core.stats.discard_waits,
		   kdev->core.nr_discard);
}

static int swapalloc_discard_show(struct seq_file *m, void *v)
{
	return swapalloc_show_locked(m, swapalloc_discard_rows);
}

DEFINE_SWAPALLOC_TABLE(swapalloc_discard);

/* The lockless fast path (fast=1): entries it served, owned clusters. */
static void swapalloc_fast_rows(struct seq_file *m, struct swapalloc_kdev *kdev)
{
	struct swapalloc_stats *st = &kdev->core.stats;

	seq_puts(m, "enabled entries owned revoked folded\n");
	/* The entries are counted per CPU, the rest under si->lock. */
	seq_printf(m, "%s %llu %llu %llu %llu\n", kdev->core.fast ? "yes" : "no",
		   swapalloc_fast_entries(&kdev->core), st->owned, st->revoked,
		   st->folded);
}

static int swapalloc_fast_show(struct seq_file *m, void *v)
{
	return swapalloc_show_locked(m, swapalloc_fast_rows);
}

DEFINE_SWAPALLOC_TABLE(swapalloc_fast);

static int swapalloc_place_show(struct seq_file *m, void *v)
{
	struct swapalloc_rec *rec = m->private;
	struct swap_info_struct *si = swapalloc_rec_si(rec);
	struct swapalloc_kdev *kdev;
	struct swapalloc_dev *dev;

	spin_lock(&si->lock);
	kdev = swapalloc_rec_kdev(rec, si);
	if (!kdev) {
		spin_unlock(&si->lock);
		return -ENODEV;
	}
	dev = &kdev->core;
	seq_puts(m, "placement holes_kept adopted cache_kept\n");
	seq_printf(m, "%s %llu %llu %llu\n",
		   swapalloc_placement_name(dev->placement),
		   dev->place.holes_kept, dev->place.adopted,
		   dev->place.cache_kept);
	spin_unlock(&si->lock);
	return 0;
}

DEFINE_SWAPALLOC_TABLE(swapalloc_place);

/* A cursor's next slot per order; "-" where it has none (next 0). */
static void swapalloc_cursor_row(struct seq_file *m, const char *who,
				 struct swapalloc_cursor *cur)
{
	unsigned int o;

	seq_printf(m, "%s", who);
	for (o = 0; o < SA_NR_ORDERS; o++) {
		if (cur->next[o])
			seq_printf(m, " %lu", cur->next[o]);
		else
			seq_puts(m, " -");
	}
	seq_putc(m, '\n');
}

static int swapalloc_cursors_show(struct seq_file *m, void *v)
{
	struct swapalloc_rec *rec = m->private;
	struct swap_info_struct *si = swapalloc_rec_si(rec);
	struct swapalloc_kdev *kdev;
	struct swapalloc_dev *dev;
	char who[16];
	unsigned int o;
	int cpu;

	spin_lock(&si->lock);
	kdev = swapalloc_rec_kdev(rec, si);
	if (!kdev) {
		spin_unlock(&si->lock);
		return -ENODEV;
	}
	dev = &kdev->core;
	seq_puts(m, "cursor");
	for (o = 0; o < SA_NR_ORDERS; o++)
		seq_printf(m, " order%u_slot", o);
	seq_putc(m, '\n');
	if (dev->policy == SA_POLICY_GLOBAL) {
		swapalloc_cursor_row(m, "global", &dev->global);
	} else {
		for_each_possible_cpu(cpu) {
			snprintf(who, sizeof(who), "cpu%d", cpu);
			swapalloc_cursor_row(m, who, per_cpu_ptr(dev->pcp, cpu));
		}
	}
	spin_unlock(&si->lock);
	return 0;
}

DEFINE_SWAPALLOC_TABLE(swapalloc_cursors);

/* Caller holds swapalloc_devices_lock. */
void swapalloc_debugfs_add(struct swapalloc_rec *rec)
{
	struct dentry *dir;

	dir = debugfs_create_dir(rec->name, swapalloc_debugfs_root);
	rec->dir = dir;
	debugfs_create_file("clusters", 0444, dir, rec, &swapalloc_clusters_fops);
	debugfs_create_file("alloc", 0444, dir, rec, &swapalloc_alloc_fops);
	debugfs_create_file("reclaim", 0444, dir, rec, &swapalloc_reclaim_fops);
	debugfs_create_file("discard", 0444, dir, rec, &swapalloc_discard_fops);
	debugfs_create_file("fast", 0444, dir, rec, &swapalloc_fast_fops);
	debugfs_create_file("place", 0444, dir, rec, &swapalloc_place_fops);
	debugfs_create_file("cursors", 0444, dir, rec, &swapalloc_cursors_fops);
}

/*
 * Waits for the handlers of the files running: they take si->lock and
 * swap_lock, so the caller holds neither (module/policy.c says who may
 * call it when).
 */
void swapalloc_debugfs_remove(struct dentry *dir)
{
	debugfs_remove_recursive(dir);
}

void swapalloc_debugfs_init(void)
{
	swapalloc_debugfs_root = debugfs_create_dir("swapalloc", NULL);
	debugfs_create_file("version", 0444, swapalloc_debugfs_root, NULL,
			    &swapalloc_version_fops);
	debugfs_create_file("devices", 0444, swapalloc_debugfs_root, NULL,
			    &swapalloc_devices_fops);
}

void swapalloc_debugfs_exit(void)
{
	debugfs_remove_recursive(swapalloc_debugfs_root);
	swapalloc_debugfs_root = NULL;
}
