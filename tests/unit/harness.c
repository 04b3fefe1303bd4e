// SPDX-License-Identifier: GPL-2.0
/*
 * The tiny test harness, see harness.h.
 */
#include <unistd.h>

#include "harness.h"

#define T_MAX_DEFER	16

bool t_verbose;
void (*t_before_each)(void);
void (*t_after_each)(void);

static jmp_buf t_jmp;
static bool t_in_test;
static char t_why[512];
static struct {
	void (*fn)(void *arg);
	void *arg;
} t_deferred[T_MAX_DEFER];
static int t_nr_deferred;

void t_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(t_why, sizeof(t_why), "%s:%d: ", file, line);
	va_start(ap, fmt);
	vsnprintf(t_why + n, sizeof(t_why) - n, fmt, ap);
	va_end(ap);
	if (!t_in_test) {
		fprintf(stderr, "FAIL outside a test: %s\n", t_why);
		exit(1);
	}
	longjmp(t_jmp, 1);
}

void t_defer(void (*fn)(void *), void *arg)
{
	if (t_nr_deferred == T_MAX_DEFER)
		T_FAIL("too many deferred cleanups");
	t_deferred[t_nr_deferred].fn = fn;
	t_deferred[t_nr_deferred].arg = arg;
	t_nr_deferred++;
}

static void t_cleanup(void)
{
	while (t_nr_deferred) {
		t_nr_deferred--;
		t_deferred[t_nr_deferred].fn(t_deferred[t_nr_deferred].arg);
	}
}

/* Run one test and its cleanups; returns the failures (0, 1 or 2). */
static int t_run_one(const struct t_case *c)
{
	volatile int failures = 0;

	t_in_test = true;
	if (!setjmp(t_jmp)) {
		if (t_before_each)
			t_before_each();
		c->fn();
		if (t_after_each)
			t_after_each();
		printf("PASS: %s\n", c->name);
	} else {
		printf("FAIL: %s: %s\n", c->name, t_why);
		failures = 1;
	}
	if (!setjmp(t_jmp)) {
		t_cleanup();
	} else {
		printf("FAIL: %s (cleanup): %s\n", c->name, t_why);
		t_nr_deferred = 0;
		failures++;
	}
	t_in_test = false;
	fflush(stdout);
	return failures;
}

int t_main(const struct t_case *cases, size_t n, int argc, char **argv)
{
	const char *only = NULL;
	unsigned int passed = 0, failed = 0;
	size_t i;
	int opt, f;

	while ((opt = getopt(argc, argv, "t:v")) != -1) {
		switch (opt) {
		case 't':
			only = optarg;
			break;
		case 'v':
			t_verbose = true;
			break;
		default:
			fprintf(stderr, "usage: %s [-v] [-t SUBSTRING]\n", argv[0]);
			return 2;
		}
	}

	for (i = 0; i < n; i++) {
		if (only && !strstr(cases[i].name, only))
			continue;
		f = t_run_one(&cases[i]);
		if (f)
			failed++;
		else
			passed++;
	}
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
