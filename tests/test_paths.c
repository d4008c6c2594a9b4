// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of where cachescoped finds kvref and the CUPTI library
 * (daemon/paths.c), over a temporary tree laid out as the build folder
 * and as an installed prefix. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "../daemon/paths.h"

static char root[64];

static void touch(const char *rel)
{
	char p[PATH_MAX];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0755);
	assert_true(fd >= 0);
	close(fd);
}

static void sub(char *out, const char *rel)
{
	snprintf(out, PATH_MAX, "%s/%s", root, rel);
}

static int setup(void **state)
{
	char d[PATH_MAX];

	(void)state;
	snprintf(root, sizeof(root), "/tmp/cs-paths-XXXXXX");
	if (!mkdtemp(root))
		return -1;
	sub(d, "sbin");
	mkdir(d, 0755);
	sub(d, "lib");
	mkdir(d, 0755);
	sub(d, "lib/cachescope");
	mkdir(d, 0755);
	sub(d, "build");
	mkdir(d, 0755);
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

static void paths_find__beside__found_first(void **state)
{
	char dir[PATH_MAX], want[PATH_MAX], out[PATH_MAX];

	(void)state;
	touch("build/kvref");
	touch("lib/cachescope/kvref");
	sub(dir, "build");
	sub(want, "build/kvref");
	assert_int_equal(paths_find(dir, "../lib/cachescope", "kvref", out, sizeof(out)), 0);
	assert_string_equal(out, want);
}

static void paths_find__installed__found_in_pkglib(void **state)
{
	char dir[PATH_MAX], want[PATH_MAX], out[PATH_MAX];

	(void)state;
	touch("lib/cachescope/libcachescope_cupti.so");
	sub(dir, "sbin");
	sub(want, "lib/cachescope/libcachescope_cupti.so");
	assert_int_equal(paths_find(dir, "../lib/cachescope", "libcachescope_cupti.so", out,
				    sizeof(out)), 0);
	assert_string_equal(out, want);
	assert_int_equal(access(out, F_OK), 0);
}

static void paths_find__nowhere__enoent_names_first(void **state)
{
	char dir[PATH_MAX], want[PATH_MAX], out[PATH_MAX];

	(void)state;
	sub(dir, "sbin");
	sub(want, "sbin/nothing");
	assert_int_equal(paths_find(dir, "../lib/cachescope", "nothing", out, sizeof(out)), -ENOENT);
	assert_string_equal(out, want);
	/* no relative directory: beside only */
	touch("lib/cachescope/only-there");
	assert_int_equal(paths_find(dir, "", "only-there", out, sizeof(out)), -ENOENT);
	assert_int_equal(paths_find(dir, NULL, "only-there", out, sizeof(out)), -ENOENT);
}

static void paths_find__small_buffer__enametoolong(void **state)
{
	char dir[PATH_MAX], out[8];

	(void)state;
	touch("lib/cachescope/kvref2");
	sub(dir, "sbin");
	assert_int_equal(paths_find(dir, "../lib/cachescope", "kvref2", out, sizeof(out)),
			 -ENAMETOOLONG);
}

static void paths_pkglib_rel__built_in__relative(void **state)
{
	(void)state;
	assert_non_null(paths_pkglib_rel());
	assert_true(paths_pkglib_rel()[0] != '/');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(paths_find__beside__found_first),
		cmocka_unit_test(paths_find__installed__found_in_pkglib),
		cmocka_unit_test(paths_find__nowhere__enoent_names_first),
		cmocka_unit_test(paths_find__small_buffer__enametoolong),
		cmocka_unit_test(paths_pkglib_rel__built_in__relative),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
