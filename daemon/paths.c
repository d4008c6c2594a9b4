// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The files cachescoped runs or watches, looked up beside it first (the
 * build folder, where `make` leaves them all in one place), then in its
 * package library directory relative to it (an installed tree: sbin/ and
 * lib/cachescope/).  Nothing is looked up on $PATH: root runs what it
 * finds, and privs_check_file() still has to accept it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cs_dirs.h"
#include "paths.h"

static int join(char *out, size_t size, const char *a, const char *b, const char *c)
{
	int n = c ? snprintf(out, size, "%s/%s/%s", a, b, c) : snprintf(out, size, "%s/%s", a, b);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int paths_find(const char *dir, const char *rel, const char *name, char *out, size_t size)
{
	char first[PATH_MAX], second[PATH_MAX];
	int err;

	err = join(first, sizeof(first), dir, name, NULL);
	if (err || strlen(first) >= size)
		return -ENAMETOOLONG;
	if (!access(first, F_OK) || !rel || !*rel) {
		snprintf(out, size, "%s", first);
		return access(first, F_OK) ? -ENOENT : 0;
	}
	err = join(second, sizeof(second), dir, rel, name);
	if (!err && !access(second, F_OK)) {
		char real[PATH_MAX];

		/* without the "..": the path is logged and handed to kvref */
		if (!realpath(second, real))
			snprintf(real, sizeof(real), "%s", second);
		if (strlen(real) >= size)
			return -ENAMETOOLONG;
		snprintf(out, size, "%s", real);
		return 0;
	}
	snprintf(out, size, "%s", first);
	return err ? err : -ENOENT;
}

int paths_find_mine(const char *name, char *out, size_t size)
{
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return n ? -errno : -ENOENT;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	return paths_find(exe, CS_PKGLIBDIR_REL, name, out, size);
}

const char *paths_pkglib_rel(void)
{
	return CS_PKGLIBDIR_REL;
}
