/* SPDX-License-Identifier: GPL-2.0 */
/*
 * swapalloc tracepoints: what the allocator decides, for bpftrace/, perf
 * and trace-cmd.  `bpftrace -l 'tracepoint:swapalloc:*'` or
 * `perf list 'swapalloc:*'` lists them.  The userspace tests build the
 * core against no-op versions (tests/shim/).
 *
 * Every event names its device as debugfs does: `name` is the name of the
 * device's directory and of the `name` column of
 * /sys/kernel/debug/swapalloc/devices, `type` the swap type (si->type, the
 * `type` column there).  Lists and sources are printed with
 * __print_symbolic() over enums exported with TRACE_DEFINE_ENUM(), so the
 * format in tracefs holds the numbers and tools that parse it (perf,
 * trace-cmd, libtraceevent) print the names without calling into the
 * module.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM swapalloc

#if !defined(_SWAPALLOC_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _SWAPALLOC_TRACE_H

#include <linux/tracepoint.h>
#include <swapalloc/core.h>
#include "../swapalloc.h"

/* The name debugfs shows for @dev: every core device is a kdev's. */
#define swapalloc_trace_name(dev)	(container_of(dev, struct swapalloc_kdev, core)->name)

TRACE_DEFINE_ENUM(SA_LIST_FREE);
TRACE_DEFINE_ENUM(SA_LIST_NONFULL);
TRACE_DEFINE_ENUM(SA_LIST_FRAG);
TRACE_DEFINE_ENUM(SA_LIST_FULL);
TRACE_DEFINE_ENUM(SA_LIST_DISCARD);
TRACE_DEFINE_ENUM(SA_LIST_OWNED);

TRACE_DEFINE_ENUM(SA_SRC_CURSOR);
TRACE_DEFINE_ENUM(SA_SRC_FREE);
TRACE_DEFINE_ENUM(SA_SRC_NONFULL);
TRACE_DEFINE_ENUM(SA_SRC_FRAG);
TRACE_DEFINE_ENUM(SA_SRC_STEAL);

/* The same names as swapalloc_list_name() and swapalloc_src_name(). */
#define swapalloc_show_list(list)					\
	__print_symbolic(list,						\
			 { SA_LIST_FREE, "free" },			\
			 { SA_LIST_NONFULL, "nonfull" },		\
			 { SA_LIST_FRAG, "frag" },			\
			 { SA_LIST_FULL, "full" },			\
			 { SA_LIST_DISCARD, "discard" },		\
			 { SA_LIST_OWNED, "owned" })

#define swapalloc_show_src(src)						\
	__print_symbolic(src,						\
			 { SA_SRC_CURSOR, "cursor" },			\
			 { SA_SRC_FREE, "free" },			\
			 { SA_SRC_NONFULL, "nonfull" },			\
			 { SA_SRC_FRAG, "frag" },			\
			 { SA_SRC_STEAL, "steal" })

TRACE_EVENT(swapalloc_alloc,
	    TP_PROTO(struct swapalloc_dev *dev, int order, unsigned long offset, int src),
	    TP_ARGS(dev, order, offset, src),
	    TP_STRUCT__entry(__string(name, swapalloc_trace_name(dev))
			     __field(int, type)
			     __field(int, order)
			     __field(unsigned long, offset)
			     __field(int, src)),
	    TP_fast_assign(__assign_str(name);
			   __entry->type = dev->env.si->type;
			   __entry->order = order;
			   __entry->offset = offset;
			   __entry->src = src;),
	    TP_printk("name=%s type=%d order=%d offset=%lu src=%s", __get_str(name), __entry->type,
		      __entry->order, __entry->offset, swapalloc_show_src(__entry->src))
);

TRACE_EVENT(swapalloc_alloc_fail,
	    TP_PROTO(struct swapalloc_dev *dev, int order),
	    TP_ARGS(dev, order),
	    TP_STRUCT__entry(__string(name, swapalloc_trace_name(dev))
			     __field(int, type)
			     __field(int, order)
			     __field(unsigned int, nr_free)
			     __field(unsigned int, nr_nonfull)
			     __field(unsigned int, nr_frag)
			     __field(unsigned int, nr_full)
			     __field(unsigned int, nr_discard)),
	    TP_fast_assign(__assign_str(name);
			   __entry->type = dev->env.si->type;
			   __entry->order = order;
			   __entry->nr_free = dev->nr_free;
			   __entry->nr_nonfull = dev->nr_nonfull[order];
			   __entry->nr_frag = dev->nr_frag[order];
			   __entry->nr_full = dev->nr_full;
			   __entry->nr_discard = dev->nr_discard;),
	    TP_printk("name=%s type=%d order=%d free=%u nonfull=%u frag=%u full=%u discard=%u",
		      __get_str(name), __entry->type, __entry->order, __entry->nr_free,
		      __entry->nr_nonfull, __entry->nr_frag, __entry->nr_full, __entry->nr_discard)
);

TRACE_EVENT(swapalloc_free,
	    TP_PROTO(struct swapalloc_dev *dev, unsigned long offset, unsigned int nr),
	    TP_ARGS(dev, offset, nr),
	    TP_STRUCT__entry(__string(name, swapalloc_trace_name(dev))
			     __field(int, type)
			     __field(unsigned long, offset)
			     __field(unsigned int, nr)),
	    TP_fast_assign(__assign_str(name);
			   __entry->type = dev->env.si->type;
			   __entry->offset = offset;
			   __entry->nr = nr;),
	    TP_printk("name=%s type=%d offset=%lu nr=%u", __get_str(name), __entry->type,
		      __entry->offset, __entry->nr)
);

TRACE_EVENT(swapalloc_reclaim,
	    TP_PROTO(struct swapalloc_dev *dev, bool force, unsigned int clusters, unsigned long
		     slots),
	    TP_ARGS(dev, force, clusters, slots),
	    TP_STRUCT__entry(__string(name, swapalloc_trace_name(dev))
			     __field(int, type)
			     __field(bool, force)
			     __field(unsigned int, clusters)
			     __field(unsigned long, slots)),
	    TP_fast_assign(__assign_str(name);
			   __entry->type = dev->env.si->type;
			   __entry->force = force;
			   __entry->clusters = clusters;
			   __entry->slots = slots;),
	    TP_printk("name=%s type=%d force=%d clusters=%u slots=%lu", __get_str(name),
		      __entry->type, __entry->force, __entry->clusters, __entry->slots)
);

TRACE_EVENT(swapalloc_discard,
	    TP_PROTO(struct swapalloc_dev *dev, unsigned int cluster),
	    TP_ARGS(dev, cluster),
	    TP_STRUCT__entry(__string(name, swapalloc_trace_name(dev))
			     __field(int, type)
			     __field(unsigned int, cluster)),
	    TP_fast_assign(__assign_str(name);
			   __entry->type = dev->env.si->type;
			   __entry->cluster = cluster;),
	    TP_printk("name=%s type=%d cluster=%u", __get_str(name), __entry->type,
		      __entry->cluster)
);

TRACE_EVENT(swapalloc_cluster_move,
	    TP_PROTO(struct swapalloc_dev *dev, unsigned int cluster, int from, int to, int order),
	    TP_ARGS(dev, cluster, from, to, order),
	    TP_STRUCT__entry(__string(name, swapalloc_trace_name(dev))
			     __field(int, type)
			     __field(unsigned int, cluster)
			     __field(int, from)
			     __field(int, to)
			     __field(int, order)),
	    TP_fast_assign(__assign_str(name);
			   __entry->type = dev->env.si->type;
			   __entry->cluster = cluster;
			   __entry->from = from;
			   __entry->to = to;
			   __entry->order = order;),
	    TP_printk("name=%s type=%d cluster=%u %s -> %s order=%d", __get_str(name),
		      __entry->type, __entry->cluster, swapalloc_show_list(__entry->from),
		      swapalloc_show_list(__entry->to), __entry->order)
);

#endif /* _SWAPALLOC_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE swapalloc_trace
#include <trace/define_trace.h>
