// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the CSV reader (daemon/csvread.c), against the writer
 * (daemon/csv.c) and against malformed input. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "helpers/tmpdir.h"
#include "../daemon/csv.h"
#include "../daemon/csvread.h"
#include "../daemon/strutil.h"

static char dir[] = "/tmp/cs-test-csvread-XXXXXX";

TMPDIR_GROUP(dir)

/* A reader over the bytes of s (fmemopen), with the given record bound. */
static struct csvr *open_mem(const char *s, size_t max, int *rc, FILE **f)
{
	struct csvr *r;

	*f = fmemopen((void *)s, strlen(s), "r");
	assert_non_null(*f);
	*rc = csvr_open(*f, "in.csv", max, &r);
	return r;
}

/* What the writer cannot tell apart is left out here (see csvr_text):
 * every other kind of text comes back byte for byte. */
static const char *const texts[] = {
	"",
	"plain",
	"with,comma",
	"with \"quotes\" inside",
	"\"",
	"two\nlines",
	"crlf\r\nend",
	"cr\ronly",
	" leading blank",
	"trailing blank ",
	"\ttab first",
	"=HYPERLINK(\"x\")",
	"-bash",
	"+1",
	"@sum",
	"\xff\xfe not utf-8 \xc3\x28",
	"\xe2\x80\xae bidi override",
	"\x1b[31mred",
	"a,\"b\"\n,c",
};

static void csvr__writer_round_trip__same_fields(void **state)
{
	char path[256];
	struct csv *c;
	struct csvr *r;
	unsigned long long u;
	long long i64;
	double d;
	size_t i;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/rt.csv", dir);
	assert_int_equal(csv_open(path, &c), 0);
	csv_str(c, "text");
	csv_str(c, "u");
	csv_str(c, "i");
	csv_str(c, "d");
	csv_end_row(c);
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		csv_str(c, texts[i]);
		csv_u64(c, 18446744073709551615ull - i);
		csv_i64(c, -(long long)i * 1000);
		csv_dbl(c, i + 0.25, 3);
		csv_end_row(c);
	}
	assert_int_equal(csv_commit(c), 0);
	csv_free(c);

	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(csvr_open(f, path, 0, &r), 0);
	assert_int_equal(csvr_ncols(r), 4);
	assert_int_equal(csvr_col(r, "d"), 3);
	assert_int_equal(csvr_col(r, "host"), -1);
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		char want[STR_ESC_SIZE(64)];

		assert_int_equal(csvr_next(r), 1);
		/* the writer's policy: a name comes out as the terminal-safe
		 * text str_escape makes of it, the same in every output */
		assert_string_equal(csvr_text(r, 0), str_escape(want, sizeof(want), texts[i], 0));
		assert_int_equal(csvr_u64(r, 1, &u), 0);
		assert_true(u == 18446744073709551615ull - i);
		assert_int_equal(csvr_i64(r, 2, &i64), 0);
		assert_true(i64 == -(long long)i * 1000);
		assert_int_equal(csvr_dbl(r, 3, &d), 0);
		assert_true(d == i + 0.25);
		/* a column the file lacks reads as empty */
		assert_string_equal(csvr_field(r, csvr_col(r, "host")), "");
	}
	assert_int_equal(csvr_next(r), 0);
	assert_string_equal(csvr_error(r), "");
	csvr_free(r);
	fclose(f);
}

static void csvr__formula_guard__undone_by_text_only(void **state)
{
	struct csvr *r;
	int rc;
	FILE *f;

	(void)state;
	r = open_mem("a,b,c\n'-bash,'x,\"'  =1\"\n", 0, &rc, &f);
	assert_int_equal(rc, 0);
	assert_int_equal(csvr_next(r), 1);
	assert_string_equal(csvr_field(r, 0), "'-bash");
	assert_string_equal(csvr_text(r, 0), "-bash");
	assert_string_equal(csvr_text(r, 1), "'x");
	/* the guard past spaces, undone as well */
	assert_string_equal(csvr_text(r, 2), "  =1");
	csvr_free(r);
	fclose(f);
}

static void csvr__line_numbers__count_quoted_newlines(void **state)
{
	struct csvr *r;
	int rc;
	FILE *f;

	(void)state;
	r = open_mem("a,b\r\n\"x\ny\",1\r\n2,\"\"\"\"\n3,4", 0, &rc, &f);
	assert_int_equal(rc, 0);
	assert_int_equal(csvr_next(r), 1);
	assert_int_equal(csvr_line(r), 2);
	assert_string_equal(csvr_field(r, 0), "x\ny");
	assert_int_equal(csvr_next(r), 1);
	assert_int_equal(csvr_line(r), 4);
	assert_string_equal(csvr_field(r, 1), "\"");
	/* the last record may lack its LF */
	assert_int_equal(csvr_next(r), 1);
	assert_int_equal(csvr_line(r), 5);
	assert_string_equal(csvr_field(r, 1), "4");
	assert_int_equal(csvr_next(r), 0);
	csvr_free(r);
	fclose(f);
}

/* Each bad input: -EINVAL and one line that names the file and line. */
static void csvr__bad_input__one_line_with_file_and_line(void **state)
{
	static const struct {
		const char *in, *err;
	} bad[] = {
		{ "a,b\n1,2\n1,2,3\n", "in.csv:3: 3 fields, the header has 2" },
		{ "a,b\n1\n", "in.csv:2: 1 fields, the header has 2" },
		{ "a,b\n1,2\n\"x,2\n", "in.csv:3: quoted field not closed at the end of the file" },
		{ "a,b\nx\"y,2\n", "in.csv:2: quote inside an unquoted field (field 1)" },
		{ "a,b\n\"x\"y,2\n", "in.csv:2: text after a closing quote (field 1)" },
		{ "a,b\n1,2\r3\n", "in.csv:2: CR outside quotes not followed by LF" },
		{ "a,b\n1,2\n\n", "in.csv:3: 1 fields, the header has 2" },
		{ "a,,c\n", "in.csv:1: header: column 2 has no name" },
		{ "a,b,a\n", "in.csv:1: header: column 'a' twice" },
		{ "", "in.csv:1: empty file: no header" },
		{ "a,b\n1,2\n3,4444444444444444444444444444444\n", "in.csv:3: record longer than 32 bytes" },
	};
	struct csvr *r;
	size_t i;
	int rc;
	FILE *f;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = open_mem(bad[i].in, 32, &rc, &f);
		assert_non_null(r);
		if (!rc)
			while ((rc = csvr_next(r)) == 1)
				;
		assert_int_equal(rc, -EINVAL);
		assert_string_equal(csvr_error(r), bad[i].err);
		assert_null(strchr(csvr_error(r), '\n'));
		/* the error is sticky */
		if (csvr_ncols(r))
			assert_int_equal(csvr_next(r), -EINVAL);
		csvr_free(r);
		fclose(f);
	}
}

/* A header of a million names (a reader given 16 MiB records): read at
 * once, and a name in it twice found.  Its check compared every pair
 * before (5e11 comparisons here: half an hour; 120000 names, what 1 MiB
 * holds, took 24 s); the alarm fails the test if it still does. */
static void csvr__widest_header__read_and_duplicate_found(void **state)
{
	size_t n = 1000000, i, len = 0, cap = n * 8 + 16;
	char *in = malloc(cap);
	struct csvr *r;
	int rc;
	FILE *f;

	(void)state;
	assert_non_null(in);
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(in + len, cap - len, "%sc%zu", i ? "," : "", i);
	snprintf(in + len, cap - len, "\n");
	alarm(60);
	r = open_mem(in, 16 << 20, &rc, &f);
	assert_int_equal(rc, 0);
	assert_int_equal(csvr_ncols(r), n);
	csvr_free(r);
	fclose(f);
	snprintf(in + len, cap - len, ",c77777\n");
	r = open_mem(in, 16 << 20, &rc, &f);
	assert_int_equal(rc, -EINVAL);
	assert_string_equal(csvr_error(r), "in.csv:1: header: column 'c77777' twice");
	alarm(0);
	csvr_free(r);
	fclose(f);
	free(in);
}

static void csvr__nul_byte__refused(void **state)
{
	static const char in[] = "a\nx\0y\n";
	struct csvr *r;
	FILE *f;

	(void)state;
	f = fmemopen((void *)in, sizeof(in) - 1, "r");
	assert_non_null(f);
	assert_int_equal(csvr_open(f, "in.csv", 0, &r), 0);
	assert_int_equal(csvr_next(r), -EINVAL);
	assert_string_equal(csvr_error(r), "in.csv:2: NUL byte");
	csvr_free(r);
	fclose(f);
}

static void csvr__numbers__strict(void **state)
{
	struct csvr *r;
	unsigned long long u;
	long long i;
	double d;
	int rc;
	FILE *f;

	(void)state;
	r = open_mem("a,b,c,d,e,f\n,-1, 1,1x,nan,18446744073709551616\n", 0, &rc, &f);
	assert_int_equal(rc, 0);
	assert_int_equal(csvr_next(r), 1);
	assert_int_equal(csvr_u64(r, 0, &u), -EINVAL);
	assert_int_equal(csvr_u64(r, 1, &u), -EINVAL);
	assert_int_equal(csvr_i64(r, 1, &i), 0);
	assert_true(i == -1);
	assert_int_equal(csvr_i64(r, 2, &i), -EINVAL);
	assert_int_equal(csvr_dbl(r, 3, &d), -EINVAL);
	assert_int_equal(csvr_dbl(r, 4, &d), -EINVAL);
	assert_int_equal(csvr_u64(r, 5, &u), -EINVAL);
	assert_int_equal(csvr_u64(r, -1, &u), -EINVAL);
	/* a caller's verdict names the record's line, and reading goes on */
	assert_int_equal(csvr_fail(r, "column %s: not a number", "a"), -EINVAL);
	assert_string_equal(csvr_error(r), "in.csv:2: column a: not a number");
	assert_int_equal(csvr_next(r), 0);
	csvr_free(r);
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(csvr__writer_round_trip__same_fields),
		cmocka_unit_test(csvr__formula_guard__undone_by_text_only),
		cmocka_unit_test(csvr__line_numbers__count_quoted_newlines),
		cmocka_unit_test(csvr__bad_input__one_line_with_file_and_line),
		cmocka_unit_test(csvr__widest_header__read_and_duplicate_found),
		cmocka_unit_test(csvr__nul_byte__refused),
		cmocka_unit_test(csvr__numbers__strict),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
