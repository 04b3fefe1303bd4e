/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel APIs module/core.c uses, for building it unmodified in
 * userspace, the way tools/testing/vma builds mm/vma.c.  Included with
 * -include before anything else (and by the shim's swapalloc_env_types.h,
 * so that it is there either way).
 *
 * Per-CPU data is an array of SHIM_NR_CPUS copies; this_cpu_ptr() picks
 * the copy of shim_cpu, which the tests set to simulate running on
 * another CPU.  WARN_ON_ONCE() warns every time, not once, and counts the
 * warnings in shim_warnings, which the tests expect to stay 0.
 * kvcalloc() can be made to fail for testing error paths.
 */
#ifndef _SWAPALLOC_LINUX_SHIM_H
#define _SWAPALLOC_LINUX_SHIM_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef unsigned int gfp_t;

#ifndef EUCLEAN
#define EUCLEAN		117
#endif

#define __percpu
#define __must_hold(x)
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
/*
 * Relaxed atomics: marked accesses, which ThreadSanitizer then does not
 * report as races, as KCSAN does not report READ_ONCE()/WRITE_ONCE().
 */
#define READ_ONCE(x)	__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, val)	__atomic_store_n(&(x), (val), __ATOMIC_RELAXED)

#define BIT(nr)			(1UL << (nr))
#define BITS_PER_LONG		(8 * (int)sizeof(long))
#define BITS_TO_LONGS(n)	(((n) + BITS_PER_LONG - 1) / BITS_PER_LONG)
#define BIT_WORD(nr)		((nr) / BITS_PER_LONG)
#define BIT_MASK(nr)		(1UL << ((nr) % BITS_PER_LONG))
#define __set_bit(nr, map)	((map)[BIT_WORD(nr)] |= BIT_MASK(nr))
#define test_bit(nr, map)	(!!((map)[BIT_WORD(nr)] & BIT_MASK(nr)))
#define __test_and_clear_bit(nr, map) ({				\
	bool __was = test_bit(nr, map);					\
	(map)[BIT_WORD(nr)] &= ~BIT_MASK(nr);				\
	__was;								\
})
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#define ALIGN(x, a)		(((x) + ((typeof(x))(a) - 1)) & ~((typeof(x))(a) - 1))
#define ALIGN_DOWN(x, a)	((x) & ~((typeof(x))(a) - 1))
#define round_down(x, y)	ALIGN_DOWN(x, y)
#define round_up(x, y)		ALIGN(x, y)
#define IS_ALIGNED(x, a)	(((x) & ((typeof(x))(a) - 1)) == 0)
#define min_t(type, a, b)	({ type __a = (a); type __b = (b); __a < __b ? __a : __b; })
#define max_t(type, a, b)	({ type __a = (a); type __b = (b); __a > __b ? __a : __b; })

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* include/linux/swap.h */
#define SWAP_HAS_CACHE	0x40
#define SWAP_MAP_BAD	0x3f

/* Warnings: counted, printed, never fatal by themselves. */
extern unsigned long shim_warnings;
extern bool shim_quiet_warnings;
void shim_warn(const char *file, int line, const char *cond);

#define WARN_ON(cond) ({						\
	bool __w = !!(cond);						\
	if (__w)							\
		shim_warn(__FILE__, __LINE__, #cond);			\
	__w;								\
})
#define WARN_ON_ONCE(cond)	WARN_ON(cond)

/* Memory.  shim_fail_alloc_after: fail the allocation after that many more. */
#define GFP_KERNEL	0U
extern long shim_fail_alloc_after;	/* -1: never fail */
extern long shim_live_allocs;		/* allocations not yet freed */
void *kvcalloc(size_t n, size_t size, gfp_t gfp);
void kvfree(const void *p);

/*
 * Per-CPU data and the simulated current CPU.  Built with SIM_THREADS
 * (tests/unit/test_threads.c), each thread is a CPU of its own.
 */
#define SHIM_NR_CPUS	8
#ifdef SIM_THREADS
extern __thread int shim_cpu;
#else
extern int shim_cpu;
#endif
void *shim_alloc_percpu(size_t size);
int shim_check_cpu(int cpu);

#define alloc_percpu(type)	((type *)shim_alloc_percpu(sizeof(type)))
#define free_percpu(p)		kvfree(p)
#define per_cpu_ptr(p, cpu)	(&(p)[shim_check_cpu(cpu)])
#define this_cpu_ptr(p)		per_cpu_ptr(p, shim_cpu)
#define for_each_possible_cpu(cpu) \
	for ((cpu) = 0; (cpu) < SHIM_NR_CPUS; (cpu)++)

/*
 * A minimal circular doubly linked list with the kernel's names.  Deleted
 * entries are poisoned so that a use after list_del() crashes in tests.
 */
struct list_head {
	struct list_head *next, *prev;
};

#define LIST_HEAD_INIT(name)	{ &(name), &(name) }
#define LIST_HEAD(name)		struct list_head name = LIST_HEAD_INIT(name)
#define SHIM_LIST_POISON1	((struct list_head *)0x100)
#define SHIM_LIST_POISON2	((struct list_head *)0x122)

static inline void INIT_LIST_HEAD(struct list_head *list)
{
	list->next = list;
	list->prev = list;
}

static inline void shim_list_link(struct list_head *entry, struct list_head *prev,
				  struct list_head *next)
{
	next->prev = entry;
	entry->next = next;
	entry->prev = prev;
	prev->next = entry;
}

static inline void list_add(struct list_head *entry, struct list_head *head)
{
	shim_list_link(entry, head, head->next);
}

static inline void list_add_tail(struct list_head *entry, struct list_head *head)
{
	shim_list_link(entry, head->prev, head);
}

static inline void shim_list_unlink(struct list_head *entry)
{
	entry->next->prev = entry->prev;
	entry->prev->next = entry->next;
}

static inline void list_del(struct list_head *entry)
{
	shim_list_unlink(entry);
	entry->next = SHIM_LIST_POISON1;
	entry->prev = SHIM_LIST_POISON2;
}

static inline void list_del_init(struct list_head *entry)
{
	shim_list_unlink(entry);
	INIT_LIST_HEAD(entry);
}

static inline void list_move_tail(struct list_head *entry, struct list_head *head)
{
	shim_list_unlink(entry);
	list_add_tail(entry, head);
}

static inline bool list_empty(const struct list_head *head)
{
	return head->next == head;
}

#define list_entry(ptr, type, member)	container_of(ptr, type, member)
#define list_first_entry(head, type, member) \
	list_entry((head)->next, type, member)
#define list_last_entry(head, type, member) \
	list_entry((head)->prev, type, member)
#define list_next_entry(pos, member) \
	list_entry((pos)->member.next, typeof(*(pos)), member)
#define list_for_each_entry(pos, head, member)				\
	for (pos = list_first_entry(head, typeof(*pos), member);	\
	     &pos->member != (head);					\
	     pos = list_next_entry(pos, member))

/*
 * The kernel's lock-less singly linked list: adds race with each other
 * and with a del_all, which takes the whole list at once.  Atomics, so
 * that ThreadSanitizer sees what the kernel's cmpxchg() and xchg() order.
 */
struct llist_node {
	struct llist_node *next;
};

struct llist_head {
	struct llist_node *first;
};

static inline void init_llist_head(struct llist_head *list)
{
	__atomic_store_n(&list->first, NULL, __ATOMIC_RELAXED);
}

static inline bool llist_empty(const struct llist_head *head)
{
	return !__atomic_load_n(&head->first, __ATOMIC_RELAXED);
}

static inline bool llist_add(struct llist_node *new, struct llist_head *head)
{
	struct llist_node *first = __atomic_load_n(&head->first, __ATOMIC_RELAXED);

	do {
		new->next = first;
	} while (!__atomic_compare_exchange_n(&head->first, &first, new, false,
					      __ATOMIC_RELEASE, __ATOMIC_RELAXED));
	return !first;
}

static inline struct llist_node *llist_del_all(struct llist_head *head)
{
	return __atomic_exchange_n(&head->first, NULL, __ATOMIC_ACQUIRE);
}

#define llist_entry(ptr, type, member)	container_of(ptr, type, member)
#define llist_for_each_entry_safe(pos, n, node, member)			\
	for (pos = (node) ? llist_entry((node), typeof(*pos), member) : NULL; \
	     pos && ((n = pos->member.next ?				\
		      llist_entry(pos->member.next, typeof(*n), member) : NULL), 1); \
	     pos = n)

#endif /* _SWAPALLOC_LINUX_SHIM_H */
