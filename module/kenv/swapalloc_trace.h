/* SPDX-License-Identifier: GPL-2.0 */
/*
 * swapalloc tracepoints: what the allocator decides, for bpftrace/ and
 * perf.  `bpftrace -l 'tracepoint:swapalloc:*'` lists them.  The userspace
 * tests build the core against no-op versions (tests/shim/).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM swapalloc

#if !defined(_SWAPALLOC_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _SWAPALLOC_TRACE_H

#include <linux/tracepoint.h>
#include <swapalloc/core.h>

TRACE_EVENT(swapalloc_alloc,
	    TP_PROTO(struct swapalloc_dev *dev, int order, unsigned long offset, int src),
	    TP_ARGS(dev, order, offset, src),
	    TP_STRUCT__entry(__field(int, type)
			     __field(int, order)
			     __field(unsigned long, offset)
			     __field(int, src)),
	    TP_fast_assign(__entry->type = dev->env.si->type;
			   __entry->order = order;
			   __entry->offset = offset;
			   __entry->src = src;),
	    TP_printk("type=%d order=%d offset=%lu src=%s", __entry->type, __entry->order,
		      __entry->offset, swapalloc_src_name(__entry->src))
);

TRACE_EVENT(swapalloc_alloc_fail,
	    TP_PROTO(struct swapalloc_dev *dev, int order),
	    TP_ARGS(dev, order),
	    TP_STRUCT__entry(__field(int, type)
			     __field(int, order)
			     __field(unsigned int, nr_free)
			     __field(unsigned int, nr_nonfull)
			     __field(unsigned int, nr_frag)
			     __field(unsigned int, nr_full)
			     __field(unsigned int, nr_discard)),
	    TP_fast_assign(__entry->type = dev->env.si->type;
			   __entry->order = order;
			   __entry->nr_free = dev->nr_free;
			   __entry->nr_nonfull = dev->nr_nonfull[order];
			   __entry->nr_frag = dev->nr_frag[order];
			   __entry->nr_full = dev->nr_full;
			   __entry->nr_discard = dev->nr_discard;),
	    TP_printk("type=%d order=%d free=%u nonfull=%u frag=%u full=%u discard=%u",
		      __entry->type, __entry->order, __entry->nr_free, __entry->nr_nonfull,
		      __entry->nr_frag, __entry->nr_full, __entry->nr_discard)
);

TRACE_EVENT(swapalloc_free,
	    TP_PROTO(struct swapalloc_dev *dev, unsigned long offset, unsigned int nr),
	    TP_ARGS(dev, offset, nr),
	    TP_STRUCT__entry(__field(int, type)
			     __field(unsigned long, offset)
			     __field(unsigned int, nr)),
	    TP_fast_assign(__entry->type = dev->env.si->type;
			   __entry->offset = offset;
			   __entry->nr = nr;),
	    TP_printk("type=%d offset=%lu nr=%u", __entry->type, __entry->offset, __entry->nr)
);

TRACE_EVENT(swapalloc_reclaim,
	    TP_PROTO(struct swapalloc_dev *dev, bool force, unsigned int clusters, unsigned long
		     slots),
	    TP_ARGS(dev, force, clusters, slots),
	    TP_STRUCT__entry(__field(int, type)
			     __field(bool, force)
			     __field(unsigned int, clusters)
			     __field(unsigned long, slots)),
	    TP_fast_assign(__entry->type = dev->env.si->type;
			   __entry->force = force;
			   __entry->clusters = clusters;
			   __entry->slots = slots;),
	    TP_printk("type=%d force=%d clusters=%u slots=%lu", __entry->type, __entry->force,
		      __entry->clusters, __entry->slots)
);

TRACE_EVENT(swapalloc_discard,
	    TP_PROTO(struct swapalloc_dev *dev, unsigned int cluster),
	    TP_ARGS(dev, cluster),
	    TP_STRUCT__entry(__field(int, type)
			     __field(unsigned int, cluster)),
	    TP_fast_assign(__entry->type = dev->env.si->type;
			   __entry->cluster = cluster;),
	    TP_printk("type=%d cluster=%u", __entry->type, __entry->cluster)
);

TRACE_EVENT(swapalloc_cluster_move,
	    TP_PROTO(struct swapalloc_dev *dev, unsigned int cluster, int from, int to, int order),
	    TP_ARGS(dev, cluster, from, to, order),
	    TP_STRUCT__entry(__field(int, type)
			     __field(unsigned int, cluster)
			     __field(int, from)
			     __field(int, to)
			     __field(int, order)),
	    TP_fast_assign(__entry->type = dev->env.si->type;
			   __entry->cluster = cluster;
			   __entry->from = from;
			   __entry->to = to;
			   __entry->order = order;),
	    TP_printk("type=%d cluster=%u %s -> %s order=%d", __entry->type, __entry->cluster,
		      swapalloc_list_name(__entry->from), swapalloc_list_name(__entry->to),
		      __entry->order)
);

#endif /* _SWAPALLOC_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE swapalloc_trace
#include <trace/define_trace.h>
