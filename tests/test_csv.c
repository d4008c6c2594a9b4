// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the CSV writer (daemon/csv.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>
#include <cmocka.h>
#include "../daemon/csv.h"

static char dir[] = "/tmp/cs-test-csv-XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static char *slurp(const char *path)
{
	static char buf[8192];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static int entries_in_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static void csv_quote__hostile_names__rfc4180(void **state)
{
	char buf[128];

	(void)state;
	csv_quote(buf, sizeof(buf), "filp");
	assert_string_equal(buf, "filp");
	csv_quote(buf, sizeof(buf), "a,b");
	assert_string_equal(buf, "\"a,b\"");
	csv_quote(buf, sizeof(buf), "say \"hi\"");
	assert_string_equal(buf, "\"say \"\"hi\"\"\"");
	csv_quote(buf, sizeof(buf), "line\nbreak");
	assert_string_equal(buf, "\"line\nbreak\"");
	csv_quote(buf, sizeof(buf), "cr\rhere");
	assert_string_equal(buf, "\"cr\rhere\"");
	csv_quote(buf, sizeof(buf), " padded");
	assert_string_equal(buf, "\" padded\"");
	csv_quote(buf, sizeof(buf), "");
	assert_string_equal(buf, "");
	/* a short buffer is cut but the needed length is returned */
	assert_int_equal(csv_quote(buf, 4, "\"\"\""), 8);
	assert_int_equal(strlen(buf), 3);
}

static void csv_commit__rows__file_appears_whole(void **state)
{
	char path[256];
	struct csv *c;
	char *got;

	(void)state;
	snprintf(path, sizeof(path), "%s/out.csv", dir);
	assert_int_equal(csv_open(path, &c), 0);
	csv_str(c, "key");
	csv_str(c, "n");
	csv_str(c, "x");
	csv_end_row(c);
	csv_str(c, "kmalloc-64,\"evil\"\n");
	csv_u64(c, 18446744073709551615ull);
	csv_dbl(c, 0.5, 3);
	csv_end_row(c);
	csv_str(c, "neg");
	csv_i64(c, -3);
	csv_dbl(c, 2.0 / 3.0, 4);
	csv_end_row(c);
	assert_int_equal(csv_flush(c), 0);
	/* before commit the target does not exist, only the temporary file */
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(entries_in_dir(), 1);
	assert_int_equal(csv_commit(c), 0);
	got = slurp(path);
	assert_non_null(got);
	assert_string_equal(got,
		"key,n,x\n"
		"\"kmalloc-64,\"\"evil\"\"\n\",18446744073709551615,0.500\n"
		"neg,-3,0.6667\n");
	assert_int_equal(entries_in_dir(), 1);
}

static void csv_commit__existing_target__replaced_only_at_commit(void **state)
{
	char path[256];
	struct csv *c;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/keep.csv", dir);
	f = fopen(path, "w");
	fputs("old\n", f);
	fclose(f);
	assert_int_equal(csv_open(path, &c), 0);
	csv_str(c, "new");
	csv_end_row(c);
	csv_flush(c);
	assert_string_equal(slurp(path), "old\n");
	assert_int_equal(csv_commit(c), 0);
	assert_string_equal(slurp(path), "new\n");
}

static void csv_abort__temporary_file__removed(void **state)
{
	char path[256];
	struct csv *c;
	int before = entries_in_dir();

	(void)state;
	snprintf(path, sizeof(path), "%s/aborted.csv", dir);
	assert_int_equal(csv_open(path, &c), 0);
	assert_int_equal(entries_in_dir(), before + 1);
	csv_str(c, "x");
	csv_end_row(c);
	csv_abort(c);
	assert_int_equal(entries_in_dir(), before);
	assert_int_equal(access(path, F_OK), -1);
	csv_abort(NULL);
}

static void csv_open__missing_directory__enoent(void **state)
{
	struct csv *c = NULL;

	(void)state;
	assert_int_equal(csv_open("/nonexistent-cs-dir/x.csv", &c), -ENOENT);
	assert_null(c);
}

static void csv_str__long_field__written_whole(void **state)
{
	char path[256], *big, *got;
	struct csv *c;

	(void)state;
	big = malloc(2001);
	memset(big, 'a', 2000);
	big[0] = ',';
	big[2000] = '\0';
	snprintf(path, sizeof(path), "%s/big.csv", dir);
	assert_int_equal(csv_open(path, &c), 0);
	csv_str(c, big);
	csv_end_row(c);
	assert_int_equal(csv_commit(c), 0);
	got = slurp(path);
	assert_int_equal(strlen(got), 2000 + 2 + 1);
	assert_int_equal(got[0], '"');
	assert_int_equal(got[2001], '"');
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(csv_quote__hostile_names__rfc4180),
		cmocka_unit_test(csv_commit__rows__file_appears_whole),
		cmocka_unit_test(csv_commit__existing_target__replaced_only_at_commit),
		cmocka_unit_test(csv_abort__temporary_file__removed),
		cmocka_unit_test(csv_open__missing_directory__enoent),
		cmocka_unit_test(csv_str__long_field__written_whole),
	};

	return cmocka_run_group_tests_name("csv", tests, setup, teardown);
}
