// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the rows kept for export (daemon/rows.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "../daemon/rows.h"

/* what rows_write writes, as a string */
static char *written(const struct rows *r, double since, uint64_t *n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	*n = rows_write(r, since, f);
	fclose(f);
	return buf;
}

static void add_row(struct rows *r, double ts, int i)
{
	char row[64];
	int n = snprintf(row, sizeof(row), "%.3f,%d,kmalloc-64\n", ts, i);

	rows_add(r, row, n);
}

static void rows_write__header_then_rows_since__oldest_first(void **state)
{
	struct rows r;
	uint64_t n;
	char *out;

	(void)state;
	rows_init(&r, 1u << 20);
	assert_int_equal(rows_set_header(&r, "ts,window,key\n", 14), 0);
	add_row(&r, 100.0, 1);
	add_row(&r, 100.1, 2);
	add_row(&r, 101.5, 3);
	out = written(&r, 0, &n);
	assert_int_equal(n, 3);
	assert_string_equal(out, "ts,window,key\n100.000,1,kmalloc-64\n100.100,2,kmalloc-64\n"
			    "101.500,3,kmalloc-64\n");
	free(out);
	out = written(&r, 100.05, &n);
	assert_int_equal(n, 2);
	assert_string_equal(out, "ts,window,key\n100.100,2,kmalloc-64\n101.500,3,kmalloc-64\n");
	free(out);
	rows_release(&r);
}

/* Past the bound the oldest chunk goes, counted; memory stays in it. */
static void rows_add__past_bound__oldest_evicted_and_counted(void **state)
{
	struct rows_stats st;
	struct rows r;
	uint64_t n;
	char *out;
	int i;

	(void)state;
	rows_init(&r, 2 * ROWS_CHUNK);
	assert_int_equal(rows_set_header(&r, "ts,window,key\n", 14), 0);
	for (i = 0; i < 100000; i++)	/* ~2.5 MB of rows */
		add_row(&r, 1000.0 + i * 0.001, i);
	rows_get_stats(&r, &st);
	assert_true(st.bytes <= 2 * ROWS_CHUNK);
	assert_true(st.evicted > 0);
	assert_int_equal(st.rows + st.evicted, 100000);
	assert_int_equal(st.lost, 0);
	/* the newest row is kept, and the oldest kept is the one after the evicted */
	out = written(&r, 0, &n);
	assert_int_equal(n, st.rows);
	assert_non_null(strstr(out, ",99999,kmalloc-64\n"));
	assert_true(st.oldest_ts > 1000.0);
	assert_int_equal(strtoull(strchr(strchr(out, '\n') + 1, ',') + 1, NULL, 10), st.evicted);
	free(out);
	rows_release(&r);
}

/* Full chunks are kept compressed: a bound of 4 chunks holds far more
 * than 4 chunks of text, and an export gives every byte back, in order. */
static void rows_add__full_chunks__compressed_more_history_same_text(void **state)
{
	struct rows_stats st;
	struct rows r;
	uint64_t n;
	char *out, *p, want[64];
	int i;

	(void)state;
	rows_init(&r, 4 * ROWS_CHUNK);
	assert_int_equal(rows_set_header(&r, "ts,window,key\n", 14), 0);
	for (i = 0; i < 100000; i++)	/* ~2.5 MB of rows, 10 chunks of text */
		add_row(&r, 1000.0 + i * 0.001, i);
	rows_get_stats(&r, &st);
	assert_true(st.bytes <= 4 * ROWS_CHUNK);
	assert_int_equal(st.evicted, 0);
	assert_int_equal(st.rows, 100000);
	assert_true(st.oldest_ts == 1000.0);
	out = written(&r, 0, &n);
	assert_int_equal(n, 100000);
	p = strchr(out, '\n') + 1;
	for (i = 0; i < 100000; i++) {
		int len = snprintf(want, sizeof(want), "%.3f,%d,kmalloc-64\n", 1000.0 + i * 0.001, i);

		assert_memory_equal(p, want, len);
		p += len;
	}
	assert_int_equal(*p, '\0');
	free(out);
	/* since, inside a compressed chunk */
	out = written(&r, 1050.0, &n);
	assert_int_equal(n, 50000);
	free(out);
	rows_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rows_write__header_then_rows_since__oldest_first),
		cmocka_unit_test(rows_add__past_bound__oldest_evicted_and_counted),
		cmocka_unit_test(rows_add__full_chunks__compressed_more_history_same_text),
	};

	return cmocka_run_group_tests_name("rows", tests, NULL, NULL);
}
