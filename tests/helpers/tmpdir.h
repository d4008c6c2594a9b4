/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A test's scratch directory: made under /tmp with a name of its own,
 * removed with everything in it.  Header-only: each unit test binary links
 * its own module alone.
 */
#ifndef CS_TEST_TMPDIR_H
#define CS_TEST_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>

/* /tmp/cs-test-<what>-XXXXXX into buf, made.  0, or -1. */
static inline int tmpdir_make(char *buf, size_t n, const char *what)
{
	snprintf(buf, n, "/tmp/cs-test-%s-XXXXXX", what);
	return mkdtemp(buf) ? 0 : -1;
}

/* dir and everything in it.  0, or what the shell returned. */
static inline int tmpdir_remove(const char *dir)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

/* The group setup and teardown of a test file whose tests share one
 * scratch directory, dir (its "/tmp/cs-test-<what>-XXXXXX" array): made
 * before the first test, removed with its contents after the last. */
#define TMPDIR_GROUP(dir)						\
	static int setup(void **state)					\
	{								\
		(void)state;						\
		return mkdtemp(dir) ? 0 : -1;				\
	}								\
	static int teardown(void **state)				\
	{								\
		(void)state;						\
		return tmpdir_remove(dir);				\
	}

#endif
