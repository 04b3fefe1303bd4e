/* SPDX-License-Identifier: GPL-2.0 */
/* Linux 6.12.117's builtin cluster allocator on swapalloc's cluster state. */
#ifndef _SWAPSIM_BUILTIN612_H
#define _SWAPSIM_BUILTIN612_H

#include <swapalloc/core.h>

/* cluster_alloc_swap_entry(): an offset, or 0.  Device lock held. */
unsigned long builtin612_alloc(struct swapalloc_dev *dev, int order, unsigned char usage);

#endif /* _SWAPSIM_BUILTIN612_H */
