/* SPDX-License-Identifier: GPL-2.0 */
/*
 * swapalloc module internals shared by module/ and debugfs/.
 */
#ifndef _SWAPALLOC_MODULE_H
#define _SWAPALLOC_MODULE_H

#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <swapalloc/core.h>

#define SWAPALLOC_NAME_LEN	64

struct dentry;
struct swap_alloc_ops;
struct swap_info_struct;

/*
 * What a device's `policy` file offers (module/policy.c): the builtin
 * allocator, or swapalloc with some cursors and placement.
 */
enum swapalloc_choice_id {
	SWAPALLOC_BUILTIN,	/* the kernel's own allocator keeps the device */
	SWAPALLOC_AUTO,		/* per-CPU cursors if non-rotational, else global */
	SWAPALLOC_PERCPU,
	SWAPALLOC_GLOBAL,
	SWAPALLOC_ANTIFRAG,	/* auto's cursors, place.c's antifrag placement */
	SWAPALLOC_NR_CHOICES,
};

struct swapalloc_choice {
	const char *name;
	bool by_media;			/* cursors from the device's kind */
	enum swapalloc_policy cursors;	/* unless by_media */
	enum swapalloc_placement placement;
};

extern const struct swapalloc_choice swapalloc_choices[SWAPALLOC_NR_CHOICES];

/*
 * A swap device swapalloc has been offered, bound or not: its sysfs and
 * debugfs directories and what outlives one binding.  Lives from the
 * device's first ->attach() until it is swapped off (or the module
 * unloads), so that a device handed back to the builtin allocator keeps its
 * `policy` file; freed by its kobject's release (module/sysfs.c).
 */
struct swapalloc_rec {
	struct list_head node;		/* on swapalloc_recs */
	char name[SWAPALLOC_NAME_LEN];	/* zram0, vdb, or a file's path */
	struct swap_info_struct *si;	/* never freed by the kernel */
	const unsigned char *swap_map;	/* si->swap_map when last offered */
	struct kobject kobj;		/* the sysfs directory; frees the record */
	bool in_sysfs;			/* kobj added */
	struct dentry *dir;		/* debugfs directory, or NULL */
	bool dead;			/* unlisted, directories being removed */
	bool need_dir;			/* directories still to be made */
	bool offering;			/* a policy write offers it: use want */
	enum swapalloc_choice_id want;
	struct mutex check_lock;	/* one full check at a time */
	char check_result[128];		/* what the last full check found */
};

/* A swap device swapalloc is bound to. */
struct swapalloc_kdev {
	struct swapalloc_dev core;	/* allocator state, under si->lock */
	struct swapalloc_rec *rec;	/* its record, which outlives it */
	enum swapalloc_choice_id choice;
	bool bound;			/* ->bind() ran: core is built */
	char name[SWAPALLOC_NAME_LEN];	/* as rec->name */
};

/*
 * Records; swapalloc_devices_lock protects the list and every record's
 * fields but check_result.  Lock order: swapalloc_policy_mutex ->
 * swap_alloc_mutex (kernel) -> swapalloc_devices_lock -> si->lock.
 */
extern struct list_head swapalloc_recs;
extern struct mutex swapalloc_devices_lock;
extern struct swap_alloc_ops swapalloc_ops;
extern bool swapalloc_unloading;

void swapalloc_device_name(struct swap_info_struct *si, char *buf, size_t len);

int swapalloc_choice_parse(const char *buf);
struct swapalloc_rec *swapalloc_rec_attach(struct swap_info_struct *si,
					   const char *name,
					   enum swapalloc_choice_id dflt,
					   enum swapalloc_choice_id *choice);
void swapalloc_rec_detach(struct swapalloc_kdev *kdev);
struct swapalloc_kdev *swapalloc_rec_kdev(struct swapalloc_rec *rec,
					  struct swap_info_struct *si);
int swapalloc_policy_get(struct swapalloc_rec *rec);
int swapalloc_policy_set(struct swapalloc_rec *rec, enum swapalloc_choice_id want);
void swapalloc_prune_soon(void);
void swapalloc_recs_unlink(void);
void swapalloc_recs_exit(void);

void swapalloc_debugfs_init(void);
void swapalloc_debugfs_exit(void);
void swapalloc_debugfs_add(struct swapalloc_rec *rec);
void swapalloc_debugfs_remove(struct dentry *dir);

int swapalloc_sysfs_init(void);
void swapalloc_sysfs_exit(void);
void swapalloc_sysfs_init_rec(struct swapalloc_rec *rec);
void swapalloc_sysfs_add(struct swapalloc_rec *rec);
void swapalloc_sysfs_remove(struct swapalloc_rec *rec);

#endif /* _SWAPALLOC_MODULE_H */
