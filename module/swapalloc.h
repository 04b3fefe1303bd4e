/* SPDX-License-Identifier: GPL-2.0 */
/*
 * swapalloc module internals shared by module/ and debugfs/.
 */
#ifndef _SWAPALLOC_MODULE_H
#define _SWAPALLOC_MODULE_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <swapalloc/core.h>

#define SWAPALLOC_NAME_LEN	64

/* A swap device swapalloc is bound to. */
struct swapalloc_kdev {
	struct swapalloc_dev core;	/* allocator state, under si->lock */
	struct list_head node;		/* on swapalloc_devices */
	bool bound;			/* ->bind() ran: core is built */
	char name[SWAPALLOC_NAME_LEN];	/* zram0, vdb, or a file's path */
	struct dentry *dir;		/* debugfs directory */
	struct mutex check_lock;	/* one full check at a time */
	char check_result[128];		/* what the last full check found */
};

/* Bound devices; swapalloc_devices_lock protects the list. */
extern struct list_head swapalloc_devices;
extern struct mutex swapalloc_devices_lock;

void swapalloc_device_name(struct swap_info_struct *si, char *buf, size_t len);

void swapalloc_debugfs_init(void);
void swapalloc_debugfs_exit(void);
void swapalloc_debugfs_add(struct swapalloc_kdev *kdev);
void swapalloc_debugfs_remove(struct swapalloc_kdev *kdev);

#endif /* _SWAPALLOC_MODULE_H */
