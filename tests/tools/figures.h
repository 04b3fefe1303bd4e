/* SPDX-License-Identifier: GPL-2.0 */
/*
 * figures.h - the data checkers' running totals for a suite's figures.
 *
 * When SWAPALLOC_FIGURES names a file (tests/lib/guest.sh sets it in every
 * guest), swapverify and swapfill append one line per checking run to it:
 * "<bytes verified> <mismatches>".  The suite's finish sums them into its
 * "# figures: data: ..." line, which tests/run prints under the suite.
 */
#ifndef SWAPALLOC_TOOLS_FIGURES_H
#define SWAPALLOC_TOOLS_FIGURES_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void figures_add(uint64_t bytes, uint64_t mismatches)
{
	const char *path = getenv("SWAPALLOC_FIGURES");
	char line[64];
	int fd, len;

	if (!path || !*path)
		return;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(path);
		return;
	}
	len = snprintf(line, sizeof(line), "%llu %llu\n",
		       (unsigned long long)bytes, (unsigned long long)mismatches);
	/* One write() with O_APPEND: lines of concurrent runs do not mix. */
	if (write(fd, line, len) != len)
		perror(path);
	close(fd);
}

#endif
