/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tiny test harness: T_ASSERT() and friends longjmp out of the failing
 * test, the runner counts and prints "PASS: name" / "FAIL: name: why" per
 * test and "N passed, N failed" as the last line.
 *
 *   static void test_foo(void) { T_EQ(1 + 1, 2); }
 *   static const struct t_case cases[] = { T_CASE(test_foo), };
 *   int main(int argc, char **argv) { return t_main(cases, ARRAY_SIZE(cases), argc, argv); }
 *
 * t_main() options: -t SUBSTRING runs the matching tests only, -v is
 * verbose (warnings printed).  A test's cleanup is registered with
 * t_defer(), run after the test whether it passed or not.
 */
#ifndef _SWAPALLOC_HARNESS_H
#define _SWAPALLOC_HARNESS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct t_case {
	const char *name;
	void (*fn)(void);
};

#define T_CASE(fn)	{ #fn, fn }

extern bool t_verbose;

void t_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));
void t_defer(void (*fn)(void *), void *arg);
int t_main(const struct t_case *cases, size_t n, int argc, char **argv);
/* Run before each test, and after each test body (before its cleanups). */
extern void (*t_before_each)(void);
extern void (*t_after_each)(void);

#define T_FAIL(...)	t_fail(__FILE__, __LINE__, __VA_ARGS__)
#define T_ASSERT(cond) do {						\
	if (!(cond))							\
		T_FAIL("%s", #cond);					\
} while (0)
#define T_EQ(a, b) do {							\
	unsigned long long __a = (unsigned long long)(a);		\
	unsigned long long __b = (unsigned long long)(b);		\
	if (__a != __b)							\
		T_FAIL("%s == %s: %llu != %llu", #a, #b, __a, __b);	\
} while (0)
#define T_NE(a, b) do {							\
	unsigned long long __a = (unsigned long long)(a);		\
	unsigned long long __b = (unsigned long long)(b);		\
	if (__a == __b)							\
		T_FAIL("%s != %s: both %llu", #a, #b, __a);		\
} while (0)
#define T_STR_HAS(s, sub) do {						\
	if (!strstr((s), (sub)))					\
		T_FAIL("\"%s\" does not contain \"%s\"", (s), (sub));	\
} while (0)

#endif /* _SWAPALLOC_HARNESS_H */
