// SPDX-License-Identifier: GPL-2.0
/*
 * failnth - make the Nth fault-injection site of one system call fail.
 *
 *   failnth [-n N | -c | -m] insmod MODULE.ko [PARAMS]
 *   failnth [-n N | -c | -m] swapon PATH [PRIO]
 *
 * Runs finit_module(2) or swapon(2) itself, so that the fault is injected in
 * that call and not in the fork, exec and dynamic linking a shell command
 * would add.  Everything but the call is done before arming.
 *
 *   -n N  write N to /proc/thread-self/fail-nth just before the call: the
 *         Nth allocation of the call that reaches a fault-injection point
 *         (failslab, fail_page_alloc, ...; what each point lets through is
 *         set in /sys/kernel/debug/<point>/) fails, once
 *   -c    count: arm with a huge N and report how many points the call
 *         passed (nothing fails)
 *   -m    write 1 to /proc/self/make-it-fail around the call, for the
 *         points with task-filter=Y and a probability set
 *
 * Prints one line:
 *   failnth: insmod nth=N ret=0|-ERRNO (strerror) injected=0|1 points=P
 * injected=1 when the Nth point was reached (fail-nth read back 0), so the
 * call saw a fault; points= is how many points the call passed (with -n, N
 * when injected, fewer otherwise; with -c, the count; -1 with -m).
 * Exit status: 0 (whatever the call returned), 3 on a usage or setup error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/swap.h>
#include <sys/syscall.h>

#define COUNT_N		1000000000U

static void usage(void)
{
	fprintf(stderr,
		"usage: failnth [-n N | -c | -m] insmod MODULE.ko [PARAMS]\n"
		"       failnth [-n N | -c | -m] swapon PATH [PRIO]\n");
	exit(3);
}

static int open_or_die(const char *path, int flags)
{
	int fd = open(path, flags);

	if (fd < 0) {
		fprintf(stderr, "failnth: %s: %s\n", path, strerror(errno));
		exit(3);
	}
	return fd;
}

/* Write @s to @fd from offset 0; 0 or -errno. */
static int put(int fd, const char *s)
{
	ssize_t n = pwrite(fd, s, strlen(s), 0);

	return n == (ssize_t)strlen(s) ? 0 : -errno;
}

int main(int argc, char **argv)
{
	unsigned long n = 0;
	int opt, count = 0, mif = 0, nth_fd = -1, mif_fd = -1, mod_fd = -1;
	int prio = -1, ret, err, injected = 0;
	long points = -1;
	const char *op, *arg, *params = "";
	char nbuf[32], rbuf[32];
	ssize_t len;
	char *end;

	while ((opt = getopt(argc, argv, "+n:cm")) != -1) {
		switch (opt) {
		case 'n':
			errno = 0;
			n = strtoul(optarg, &end, 10);
			if (errno || *end || !n || n >= COUNT_N)
				usage();
			break;
		case 'c':
			count = 1;
			break;
		case 'm':
			mif = 1;
			break;
		default:
			usage();
		}
	}
	if ((!!n + count + mif) != 1 || argc - optind < 2 || argc - optind > 3)
		usage();
	op = argv[optind];
	arg = argv[optind + 1];
	if (!strcmp(op, "insmod")) {
		mod_fd = open_or_die(arg, O_RDONLY | O_CLOEXEC);
		if (argc - optind == 3)
			params = argv[optind + 2];
	} else if (!strcmp(op, "swapon")) {
		if (argc - optind == 3) {
			prio = strtol(argv[optind + 2], &end, 10);
			if (*end || prio < 0 || prio > SWAP_FLAG_PRIO_MASK)
				usage();
		}
	} else {
		usage();
	}
	if (count)
		n = COUNT_N;
	if (n) {
		nth_fd = open_or_die("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
		snprintf(nbuf, sizeof(nbuf), "%lu", n);
	}
	if (mif)
		mif_fd = open_or_die("/proc/self/make-it-fail", O_WRONLY | O_CLOEXEC);

	/* Armed from here: no allocation of our own until disarmed. */
	err = n ? put(nth_fd, nbuf) : 0;
	if (err) {
		fprintf(stderr, "failnth: write fail-nth: %s\n", strerror(-err));
		return 3;
	}
	err = mif ? put(mif_fd, "1") : 0;
	if (err) {
		fprintf(stderr, "failnth: write make-it-fail: %s\n", strerror(-err));
		return 3;
	}
	if (mod_fd >= 0)
		ret = syscall(SYS_finit_module, mod_fd, params, 0);
	else
		ret = swapon(arg, prio < 0 ? 0 :
			     SWAP_FLAG_PREFER | (prio << SWAP_FLAG_PRIO_SHIFT));
	err = ret ? errno : 0;
	if (mif)
		put(mif_fd, "0");
	if (n) {
		len = pread(nth_fd, rbuf, sizeof(rbuf) - 1, 0);
		put(nth_fd, "0");
		if (len <= 0) {
			fprintf(stderr, "failnth: read fail-nth: %s\n", strerror(errno));
			return 3;
		}
		rbuf[len] = '\0';
		/* fail-nth counts down to 0, where it injects. */
		points = n - strtoul(rbuf, NULL, 10);
		injected = !count && points == (long)n;
	}

	if (err)
		printf("failnth: %s nth=%lu ret=-%d (%s) injected=%d points=%ld\n",
		       op, count ? 0 : n, err, strerror(err), injected, points);
	else
		printf("failnth: %s nth=%lu ret=0 injected=%d points=%ld\n",
		       op, count ? 0 : n, injected, points);
	return 0;
}
