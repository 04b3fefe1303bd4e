// SPDX-License-Identifier: GPL-2.0
/*
 * Per-device control at run time: the choices a device's sysfs `policy`
 * file offers, and the records that keep a device's sysfs and debugfs
 * directories for as long as it is swapped on, whoever allocates its slots.
 *
 * A switch (swapalloc_policy_set()) hands the device back to the builtin
 * allocator with swap_alloc_release_device() and, for one of swapalloc's
 * choices, offers it again with swap_alloc_offer_device(); ->attach()
 * then builds the new state with the choice the record names (rec->want).
 * The kernel's bind and unbind make allocations wait while the new owner
 * builds its state from swap_map, so no slot is lost or handed out twice.
 * Policy writes are serialised by swapalloc_policy_mutex, which is taken
 * before the kernel's swap_alloc_mutex and never under it.
 *
 * Lifetimes.  ->detach() runs under swap_alloc_mutex, which a policy
 * write waits for while sysfs counts it as an active user of its file,
 * and removing a directory waits for its files' active users.  So no
 * directory is removed under swap_alloc_mutex (lockdep would see the
 * cycle even where the users reference below rules it out): a record dies
 * at swapoff's ->detach(), once the device's users reference is zero, or
 * when its device is found gone (si->swap_map is no longer the one
 * recorded), and swapalloc_prune(), a work item that holds no lock,
 * removes its directories and puts its kobject, whose release frees it.
 * A policy write takes the users reference (percpu_ref_tryget_live(), as
 * get_swap_device() does) before it waits for anything and keeps it until
 * it returns, so swapoff waits for the write, and writes that come later
 * fail at once with -ENODEV.  Module exit removes every sysfs directory
 * before it lets go of the devices (swapalloc_recs_unlink()), while
 * holding nothing.  The kernel does not tell a module that a
 * device it does not own is swapped off, so the work looks every second
 * while some device is not swapalloc's, and every 100 ms while one is
 * being swapped off; swapon, reads of `devices` and of a gone device's
 * `policy` make it look at once.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/percpu-refcount.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/swap.h>
#include <linux/workqueue.h>
#include <swapalloc_env_types.h>
#include "swapalloc.h"

const struct swapalloc_choice swapalloc_choices[SWAPALLOC_NR_CHOICES] = {
	[SWAPALLOC_BUILTIN] = { .name = "builtin" },
	[SWAPALLOC_AUTO] = { .name = "auto", .by_media = true },
	[SWAPALLOC_PERCPU] = { .name = "percpu", .cursors = SA_POLICY_PERCPU },
	[SWAPALLOC_GLOBAL] = { .name = "global", .cursors = SA_POLICY_GLOBAL },
	[SWAPALLOC_ANTIFRAG] = { .name = "antifrag", .by_media = true,
				 .placement = SA_PLACE_ANTIFRAG },
};

/* Records of active devices; of dead ones whose directory is going. */
LIST_HEAD(swapalloc_recs);
static LIST_HEAD(swapalloc_dying);
/* Both lists, every record's fields but check_result, their directories. */
DEFINE_MUTEX(swapalloc_devices_lock);
/* One switch at a time; outside swap_alloc_mutex. */
static DEFINE_MUTEX(swapalloc_policy_mutex);

/*
 * Set by module exit, under swapalloc_devices_lock: no directory is made
 * or removed but by exit, no record freed but by swapalloc_recs_exit().
 */
bool swapalloc_unloading;

static void swapalloc_prune(struct work_struct *work);
static DECLARE_DELAYED_WORK(swapalloc_prune_work, swapalloc_prune);

/* The choice named by @buf (a trailing newline allowed), or -EINVAL. */
int swapalloc_choice_parse(const char *buf)
{
	int i;

	for (i = 0; i < SWAPALLOC_NR_CHOICES; i++)
		if (sysfs_streq(buf, swapalloc_choices[i].name))
			return i;
	return -EINVAL;
}

/* Both directories of a record; caller holds swapalloc_devices_lock. */
static void swapalloc_dirs_add(struct swapalloc_rec *rec)
{
	swapalloc_sysfs_add(rec);
	swapalloc_debugfs_add(rec);
}

/*
 * The debugfs directory, which waits for its files' handlers: they take
 * si->lock and swap_lock only, so the caller may hold swap_alloc_mutex,
 * but not swapalloc_devices_lock.
 */
static void swapalloc_rec_debugfs_remove(struct swapalloc_rec *rec)
{
	struct dentry *dir;

	mutex_lock(&swapalloc_devices_lock);
	dir = rec->dir;
	rec->dir = NULL;
	mutex_unlock(&swapalloc_devices_lock);
	swapalloc_debugfs_remove(dir);
}

/* Waits for the files' handlers: caller holds no lock. */
static void swapalloc_dirs_remove(struct swapalloc_rec *rec)
{
	swapalloc_sysfs_remove(rec);
	swapalloc_rec_debugfs_remove(rec);
}

/* Let swapalloc_prune() look at the records now. */
void swapalloc_prune_soon(void)
{
	mod_delayed_work(system_wq, &swapalloc_prune_work, 0);
}

/**
 * swapalloc_rec_kdev() - the allocator state swapalloc keeps for a record
 * @rec: the record
 * @si: its device, with si->lock held
 *
 * Return: the bound kdev of @rec, or NULL if swapalloc does not allocate
 * for it (builtin, binding, unbinding, or @si is another device now).  The
 * kdev stays valid while si->lock is held: ->detach() frees it only after
 * the kernel has cleared si->alloc_data under that lock.
 */
struct swapalloc_kdev *swapalloc_rec_kdev(struct swapalloc_rec *rec,
					  struct swap_info_struct *si)
	__must_hold(&si->lock)
{
	struct swapalloc_kdev *kdev;

	if (si->alloc_ops != &swapalloc_ops || si->alloc_state < SWAP_ALLOC_BOUND)
		return NULL;
	kdev = si->alloc_data;
	return kdev && kdev->rec == rec && kdev->bound ? kdev : NULL;
}

enum swapalloc_rec_state {
	SWAPALLOC_REC_GONE,	/* swapped off; or the type holds another device */
	SWAPALLOC_REC_LEAVING,	/* being swapped off */
	SWAPALLOC_REC_BUILTIN,	/* active, not allocated for by swapalloc */
	SWAPALLOC_REC_OWNED,	/* active, swapalloc's */
};

/* Caller holds swapalloc_devices_lock; @rec is not dead. */
static enum swapalloc_rec_state swapalloc_rec_state(struct swapalloc_rec *rec,
						    int *choice)
{
	struct swap_info_struct *si = rec->si;
	enum swapalloc_rec_state st;
	struct swapalloc_kdev *kdev;

	spin_lock(&si->lock);
	kdev = swapalloc_rec_kdev(rec, si);
	if (!(si->flags & SWP_USED) || !rec->swap_map || si->swap_map != rec->swap_map)
		st = SWAPALLOC_REC_GONE;
	else if (!(si->flags & SWP_WRITEOK))
		st = SWAPALLOC_REC_LEAVING;
	else
		st = kdev ? SWAPALLOC_REC_OWNED : SWAPALLOC_REC_BUILTIN;
	if (choice)
		*choice = kdev ? kdev->choice : SWAPALLOC_BUILTIN;
	spin_unlock(&si->lock);
	return st;
}

/*
 * Move the records of devices that have gone to swapalloc_dying, remove
 * their directories with no lock held, make the directories whose names
 * were still taken at swapon; look again later while a device is leaving
 * or not swapalloc's.
 */
static void swapalloc_prune(struct work_struct *work)
{
	struct swapalloc_rec *rec, *tmp;
	unsigned long again = 0;

	mutex_lock(&swapalloc_devices_lock);
	if (swapalloc_unloading) {
		mutex_unlock(&swapalloc_devices_lock);
		return;
	}
	list_for_each_entry_safe(rec, tmp, &swapalloc_recs, node) {
		switch (swapalloc_rec_state(rec, NULL)) {
		case SWAPALLOC_REC_GONE:
			rec->dead = true;
			list_move_tail(&rec->node, &swapalloc_dying);
			break;
		case SWAPALLOC_REC_LEAVING:
			again = HZ / 10;
			break;
		case SWAPALLOC_REC_BUILTIN:
			if (!again)
				again = HZ;
			break;
		case SWAPALLOC_REC_OWNED:
			break;
		}
	}
	mutex_unlock(&swapalloc_devices_lock);

	/* Only this work takes records off swapalloc_dying. */
	for (;;) {
		mutex_lock(&swapalloc_devices_lock);
		rec = list_first_entry_or_null(&swapalloc_dying, struct swapalloc_rec, node);
		mutex_unlock(&swapalloc_devices_lock);
		if (!rec)
			break;
		/* Waits for the files' handlers, which find the record dead. */
		swapalloc_dirs_remove(rec);
		mutex_lock(&swapalloc_devices_lock);
		list_del(&rec->node);
		mutex_unlock(&swapalloc_devices_lock);
		kobject_put(&rec->kobj);
	}

	mutex_lock(&swapalloc_devices_lock);
	list_for_each_entry(rec, &swapalloc_recs, node) {
		if (rec->need_dir) {
			rec->need_dir = false;
			swapalloc_dirs_add(rec);
		}
	}
	mutex_unlock(&swapalloc_devices_lock);

	if (again)
		queue_delayed_work(system_wq, &swapalloc_prune_work, again);
}

/**
 * swapalloc_rec_attach() - find or make the record of a device offered
 * @si: the device, from ->attach() (swap_alloc_mutex held)
 * @name: its name
 * @dflt: the choice for a device that no policy write offers
 * @choice: the choice to bind it with (SWAPALLOC_BUILTIN: decline it)
 *
 * Return: the record, or ERR_PTR(-ENOMEM).
 */
struct swapalloc_rec *swapalloc_rec_attach(struct swap_info_struct *si,
					   const char *name,
					   enum swapalloc_choice_id dflt,
					   enum swapalloc_choice_id *choice)
{
	struct swapalloc_rec *rec = NULL, *r;
	const unsigned char *map;
	bool prune = false, clash = false, taken = false;

	spin_lock(&si->lock);
	map = si->swap_map;
	spin_unlock(&si->lock);

	mutex_lock(&swapalloc_devices_lock);
	list_for_each_entry(r, &swapalloc_recs, node) {
		if (!strcmp(r->name, name)) {
			/* Two active devices, one name: swap files' paths cut short. */
			if (r->si != si && swapalloc_rec_state(r, NULL) != SWAPALLOC_REC_GONE)
				taken = true;
			else
				rec = r;
		} else if (r->si == si) {
			/* The device this type held before has gone. */
			r->swap_map = NULL;
			prune = true;
		}
	}
	/* A directory of that name still being removed: make ours after. */
	list_for_each_entry(r, &swapalloc_dying, node)
		if (!strcmp(r->name, name))
			clash = true;
	if (!rec) {
		rec = kzalloc(sizeof(*rec), GFP_KERNEL);
		if (!rec) {
			mutex_unlock(&swapalloc_devices_lock);
			return ERR_PTR(-ENOMEM);
		}
		swapalloc_sysfs_init_rec(rec);
		strscpy(rec->name, name, sizeof(rec->name));
		mutex_init(&rec->check_lock);
		strscpy(rec->check_result, "not run", sizeof(rec->check_result));
		rec->si = si;
		list_add_tail(&rec->node, &swapalloc_recs);
		if (taken) {
			pr_warn("%s: another swap device has that name: no sysfs or debugfs directory for swap type %d\n",
				name, si->type);
		} else if (swapalloc_unloading) {
			/* No directory: module exit has removed them all. */
		} else if (clash) {
			rec->need_dir = true;
			prune = true;
		} else {
			swapalloc_dirs_add(rec);
		}
	}
	/* A policy write offers this very device; else it is new to us. */
	if (rec->offering && rec->si == si && rec->swap_map == map)
		*choice = rec->want;
	else
		*choice = dflt;
	rec->si = si;
	rec->swap_map = map;
	mutex_unlock(&swapalloc_devices_lock);
	if (prune || *choice == SWAPALLOC_BUILTIN)
		swapalloc_prune_soon();
	return rec;
}

/**
 * swapalloc_rec_detach() - a kdev's device is handed back or swapped off
 * @kdev: the allocator state, about to be freed
 *
 * Under swap_alloc_mutex.  Waits for a full check of @kdev to finish.  At
 * swapoff (users reference zero: no policy write is in a handler of this
 * device but to fail) the record dies, and the prune work removes its
 * directories; otherwise the record stays, for the `policy` file.  At
 * module exit the records stay for swapalloc_recs_exit().
 */
void swapalloc_rec_detach(struct swapalloc_kdev *kdev)
{
	struct swapalloc_rec *rec = kdev->rec;
	struct swap_info_struct *si = kdev->core.env.si;
	struct dentry *dir = NULL;

	mutex_lock(&rec->check_lock);
	strscpy(rec->check_result, "not run", sizeof(rec->check_result));
	mutex_unlock(&rec->check_lock);

	mutex_lock(&swapalloc_devices_lock);
	/* A dead record is the prune work's; a bound one is never dead. */
	if (!swapalloc_unloading && !rec->dead && percpu_ref_is_zero(&si->users)) {
		rec->dead = true;
		list_move_tail(&rec->node, &swapalloc_dying);
		/* The prune work may free a dead record at once: keep the dir. */
		dir = rec->dir;
		rec->dir = NULL;
	}
	mutex_unlock(&swapalloc_devices_lock);
	/* The statistics go with the device; the control files soon after. */
	swapalloc_debugfs_remove(dir);
	swapalloc_prune_soon();
}

/**
 * swapalloc_policy_get() - what a device's `policy` file shows as active
 * @rec: the record
 *
 * Return: the choice, or -ENODEV if the device has gone.
 */
int swapalloc_policy_get(struct swapalloc_rec *rec)
{
	int choice = -ENODEV;

	mutex_lock(&swapalloc_devices_lock);
	if (!rec->dead && swapalloc_rec_state(rec, &choice) == SWAPALLOC_REC_GONE)
		choice = -ENODEV;
	mutex_unlock(&swapalloc_devices_lock);
	if (choice < 0)
		swapalloc_prune_soon();
	return choice;
}

/**
 * swapalloc_policy_set() - switch a device to a choice
 * @rec: the record
 * @want: the choice
 *
 * Releases the device if swapalloc has it, then offers it again for
 * @want unless @want is SWAPALLOC_BUILTIN.  Nothing happens if @want is
 * active already.  Called from a `policy` write: no lock held.
 *
 * Return: 0; -ENODEV if the device has gone or is being swapped off (if
 * the offer is what failed, the device stays with the builtin allocator);
 * -EINTR if killed while waiting for another switch; an error of the
 * offer (-ENOMEM, or -EBUSY if another allocator module took it).
 */
int swapalloc_policy_set(struct swapalloc_rec *rec, enum swapalloc_choice_id want)
{
	enum swapalloc_rec_state st;
	struct swap_info_struct *si;
	int cur = SWAPALLOC_BUILTIN, err;

	mutex_lock(&swapalloc_devices_lock);
	si = rec->dead ? NULL : rec->si;
	mutex_unlock(&swapalloc_devices_lock);
	/* Keeps swapoff of the device out until the switch is done. */
	if (!si || !percpu_ref_tryget_live(&si->users)) {
		swapalloc_prune_soon();
		return -ENODEV;
	}
	err = mutex_lock_killable(&swapalloc_policy_mutex);
	if (err)
		goto out_put;

	mutex_lock(&swapalloc_devices_lock);
	st = rec->dead || rec->si != si ? SWAPALLOC_REC_GONE :
	     swapalloc_rec_state(rec, &cur);
	mutex_unlock(&swapalloc_devices_lock);
	/* Being swapped off, it can be released but not taken. */
	if (st == SWAPALLOC_REC_GONE ||
	    (st == SWAPALLOC_REC_LEAVING && want != SWAPALLOC_BUILTIN)) {
		err = -ENODEV;
		goto out_unlock;
	}
	if (cur == want)
		goto out_unlock;

	if (cur != SWAPALLOC_BUILTIN) {
		err = swap_alloc_release_device(&swapalloc_ops, si);
		if (err)
			goto out_unlock;
	}
	if (want != SWAPALLOC_BUILTIN) {
		mutex_lock(&swapalloc_devices_lock);
		rec->want = want;
		rec->offering = true;
		mutex_unlock(&swapalloc_devices_lock);
		err = swap_alloc_offer_device(&swapalloc_ops, si);
		mutex_lock(&swapalloc_devices_lock);
		rec->offering = false;
		mutex_unlock(&swapalloc_devices_lock);
	}
	if (err)
		pr_warn("%s: policy %s -> %s failed (%d); it stays builtin\n", rec->name,
			swapalloc_choices[cur].name, swapalloc_choices[want].name, err);
	else
		pr_info("%s: policy %s -> %s\n", rec->name, swapalloc_choices[cur].name,
			swapalloc_choices[want].name);
out_unlock:
	mutex_unlock(&swapalloc_policy_mutex);
out_put:
	percpu_ref_put(&si->users);
	return err;
}

/*
 * First at module exit, with no lock held: from now on no directory is
 * made, and the prune work does nothing.  Remove every sysfs directory,
 * which waits for the handlers running in them (a policy write may be
 * switching a device), before swap_alloc_unregister() takes
 * swap_alloc_mutex to let go of the devices.
 */
void swapalloc_recs_unlink(void)
{
	struct swapalloc_rec *rec, *found;

	mutex_lock(&swapalloc_devices_lock);
	swapalloc_unloading = true;
	mutex_unlock(&swapalloc_devices_lock);
	cancel_delayed_work_sync(&swapalloc_prune_work);
	for (;;) {
		found = NULL;
		mutex_lock(&swapalloc_devices_lock);
		list_for_each_entry(rec, &swapalloc_recs, node)
			if (!found && rec->in_sysfs)
				found = rec;
		list_for_each_entry(rec, &swapalloc_dying, node)
			if (!found && rec->in_sysfs)
				found = rec;
		mutex_unlock(&swapalloc_devices_lock);
		if (!found)
			break;
		/* Records are freed only by swapalloc_recs_exit() now. */
		swapalloc_sysfs_remove(found);
	}
}

/*
 * At module exit, after swap_alloc_unregister(): nothing attaches,
 * detaches or opens a file any more.  Remove the debugfs directories left,
 * free the records.
 */
void swapalloc_recs_exit(void)
{
	struct swapalloc_rec *rec, *tmp;

	cancel_delayed_work_sync(&swapalloc_prune_work);
	list_splice_tail_init(&swapalloc_dying, &swapalloc_recs);
	list_for_each_entry_safe(rec, tmp, &swapalloc_recs, node) {
		list_del(&rec->node);
		swapalloc_dirs_remove(rec);
		kobject_put(&rec->kobj);
	}
}
