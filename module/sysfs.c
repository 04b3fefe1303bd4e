// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/swapalloc/<dev>/: the per-device control files.
 *
 *   policy  the choices, the active one in brackets; writing one switches
 *           the device live (module/policy.c), like a block queue's
 *           `scheduler`
 *   check   writing 1 runs the full invariant check (-EUCLEAN if one is
 *           broken); reading shows what the last check found, or "not run"
 *   reset   writing 1 zeroes the device's counters (write only)
 *
 * Control lives in sysfs, not debugfs: a kernel in lockdown refuses to open
 * any debugfs file with a write bit (debugfs_locked_down()), and some
 * systems do not mount debugfs at all.  debugfs keeps the statistics,
 * read only.  docs/control.md says why the directory is where it is.
 *
 * Lifetimes.  A device's directory is its record's kobject; the record is
 * freed by the kobject's release, after the last reference is put.
 * Removing the directory (kobject_del()) waits for the handlers running in
 * its files, so it is never done under a lock that a handler takes or
 * waits for: a `policy` write waits for the kernel's swap_alloc_mutex, and
 * ->detach() runs under it.  Directories are therefore removed only by the
 * prune work (module/policy.c), which holds no lock, and at module exit
 * before the module lets go of any device.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/swap.h>
#include <linux/sysfs.h>
#include <swapalloc_env_types.h>
#include "swapalloc.h"

static struct kobject *swapalloc_sysfs_root;

static struct swapalloc_rec *swapalloc_kobj_rec(struct kobject *kobj)
{
	return container_of(kobj, struct swapalloc_rec, kobj);
}

/*
 * Is the write "1" (or "1\n")?  sysfs hands the bytes written with a NUL
 * after them: a NUL inside ("1\0junk") is not 1, nor are writes longer
 * than 16 bytes.
 */
#define SWAPALLOC_WRITE_MAX	16
static bool swapalloc_sysfs_is_1(const char *buf, size_t count)
{
	unsigned int val;

	return count <= SWAPALLOC_WRITE_MAX && strlen(buf) == count &&
	       !kstrtouint(buf, 10, &val) && val == 1;
}

static ssize_t policy_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	struct swapalloc_rec *rec = swapalloc_kobj_rec(kobj);
	int cur, i, len = 0;

	cur = swapalloc_policy_get(rec);
	if (cur < 0)
		return cur;
	for (i = 0; i < SWAPALLOC_NR_CHOICES; i++)
		len += sysfs_emit_at(buf, len, i == cur ? "%s[%s]" : "%s%s",
				     i ? " " : "", swapalloc_choices[i].name);
	len += sysfs_emit_at(buf, len, "\n");
	return len;
}

/*
 * Anything but a choice's name, with at most one trailing newline, is
 * -EINVAL and changes nothing.
 */
static ssize_t policy_store(struct kobject *kobj, struct kobj_attribute *attr,
			    const char *buf, size_t count)
{
	struct swapalloc_rec *rec = swapalloc_kobj_rec(kobj);
	int choice, err;

	if (count > SWAPALLOC_WRITE_MAX || strlen(buf) != count)
		return -EINVAL;
	choice = swapalloc_choice_parse(buf);
	if (choice < 0)
		return choice;
	err = swapalloc_policy_set(rec, choice);
	return err ? err : count;
}

static ssize_t check_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	struct swapalloc_rec *rec = swapalloc_kobj_rec(kobj);
	ssize_t len;

	mutex_lock(&rec->check_lock);
	len = sysfs_emit(buf, "%s\n", rec->check_result);
	mutex_unlock(&rec->check_lock);
	return len;
}

/*
 * The check lets go of si->lock between batches; the kdev it checks stays
 * because ->detach() takes rec->check_lock before freeing it.
 */
static ssize_t check_store(struct kobject *kobj, struct kobj_attribute *attr,
			   const char *buf, size_t count)
{
	struct swapalloc_rec *rec = swapalloc_kobj_rec(kobj);
	struct swap_info_struct *si = READ_ONCE(rec->si);
	struct swapalloc_kdev *kdev;
	int err;

	if (!swapalloc_sysfs_is_1(buf, count))
		return -EINVAL;
	mutex_lock(&rec->check_lock);
	spin_lock(&si->lock);
	kdev = swapalloc_rec_kdev(rec, si);
	if (!kdev) {
		spin_unlock(&si->lock);
		mutex_unlock(&rec->check_lock);
		return -ENODEV;
	}
	err = swapalloc_check(&kdev->core, rec->check_result,
			      sizeof(rec->check_result));
	/* Handed back meanwhile: the state checked is no longer kept. */
	if (err && swapalloc_rec_kdev(rec, si) != kdev) {
		strscpy(rec->check_result, "not run", sizeof(rec->check_result));
		err = -ENODEV;
	}
	spin_unlock(&si->lock);
	mutex_unlock(&rec->check_lock);
	return err ? err : count;
}

static ssize_t reset_store(struct kobject *kobj, struct kobj_attribute *attr,
			   const char *buf, size_t count)
{
	struct swapalloc_rec *rec = swapalloc_kobj_rec(kobj);
	struct swap_info_struct *si = READ_ONCE(rec->si);
	struct swapalloc_kdev *kdev;

	if (!swapalloc_sysfs_is_1(buf, count))
		return -EINVAL;
	spin_lock(&si->lock);
	kdev = swapalloc_rec_kdev(rec, si);
	if (!kdev) {
		spin_unlock(&si->lock);
		return -ENODEV;
	}
	swapalloc_reset_stats(&kdev->core);
	spin_unlock(&si->lock);
	return count;
}

static struct kobj_attribute swapalloc_attr_policy = __ATTR_RW_MODE(policy, 0644);
static struct kobj_attribute swapalloc_attr_check = __ATTR_RW_MODE(check, 0644);
static struct kobj_attribute swapalloc_attr_reset = __ATTR_WO(reset);

static struct attribute *swapalloc_rec_attrs[] = {
	&swapalloc_attr_policy.attr,
	&swapalloc_attr_check.attr,
	&swapalloc_attr_reset.attr,
	NULL,
};
ATTRIBUTE_GROUPS(swapalloc_rec);

static void swapalloc_rec_release(struct kobject *kobj)
{
	kfree(swapalloc_kobj_rec(kobj));
}

static const struct kobj_type swapalloc_rec_ktype = {
	.release = swapalloc_rec_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = swapalloc_rec_groups,
};

/* A new record's kobject: its release frees the record. */
void swapalloc_sysfs_init_rec(struct swapalloc_rec *rec)
{
	kobject_init(&rec->kobj, &swapalloc_rec_ktype);
}

/* Caller holds swapalloc_devices_lock. */
void swapalloc_sysfs_add(struct swapalloc_rec *rec)
{
	int err;

	if (!swapalloc_sysfs_root)
		return;
	err = kobject_add(&rec->kobj, swapalloc_sysfs_root, "%s", rec->name);
	if (err)
		pr_warn("%s: no sysfs directory (%d)\n", rec->name, err);
	else
		rec->in_sysfs = true;
}

/*
 * Waits for the handlers running in the directory's files: the caller
 * holds no lock (see the top of this file).
 */
void swapalloc_sysfs_remove(struct swapalloc_rec *rec)
{
	if (rec->in_sysfs)
		kobject_del(&rec->kobj);
	rec->in_sysfs = false;
}

int swapalloc_sysfs_init(void)
{
	swapalloc_sysfs_root = kobject_create_and_add("swapalloc", kernel_kobj);
	return swapalloc_sysfs_root ? 0 : -ENOMEM;
}

void swapalloc_sysfs_exit(void)
{
	kobject_put(swapalloc_sysfs_root);
	swapalloc_sysfs_root = NULL;
}
