/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace stand-in for module/kenv/swapalloc_trace.h: the core's
 * tracepoints compile to nothing.
 */
#ifndef _SWAPALLOC_TRACE_SHIM_H
#define _SWAPALLOC_TRACE_SHIM_H

#include <swapalloc/core.h>

static inline void trace_swapalloc_alloc(struct swapalloc_dev *dev, int order,
					 unsigned long offset, int src) { }
static inline void trace_swapalloc_alloc_fail(struct swapalloc_dev *dev, int order) { }
static inline void trace_swapalloc_free(struct swapalloc_dev *dev,
					unsigned long offset, unsigned int nr) { }
static inline void trace_swapalloc_reclaim(struct swapalloc_dev *dev, bool force,
					   unsigned int clusters, unsigned long slots) { }
static inline void trace_swapalloc_discard(struct swapalloc_dev *dev,
					   unsigned int cluster) { }
static inline void trace_swapalloc_cluster_move(struct swapalloc_dev *dev,
						unsigned int cluster, int from,
						int to, int order) { }

#endif /* _SWAPALLOC_TRACE_SHIM_H */
