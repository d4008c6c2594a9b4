// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer harness: the CSV reader (daemon/csvread.c), the input as a CSV
 * file.  For every record it reads:
 *  - the record has as many fields as the header, each shorter than the
 *    record bound;
 *  - written again with RFC 4180 quoting of its own (every field quoted)
 *    and read back, it gives the same fields, byte for byte;
 *  - written again as the daemon's writer writes it (csv_quote, with its
 *    formula guard) and read back, csvr_text gives each field again, except
 *    the one kind of text the guard cannot give back (a leading ' before
 *    = + - @ TAB CR).
 * A reader error must be one line that starts with the file's name.
 * abort() on any broken invariant.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../daemon/csv.h"
#include "../../daemon/csvread.h"

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "fuzz_csvread: invariant failed at %s:%d: %s\n", __FILE__, __LINE__, #c); \
	abort(); } } while (0)

#define MAX_RECORD 4096

struct out {
	char *buf;
	size_t len, cap;
};

static void out_put(struct out *o, const char *s, size_t n)
{
	if (o->len + n + 1 > o->cap) {
		o->cap = (o->len + n + 1) * 2;
		o->buf = realloc(o->buf, o->cap);
		CHECK(o->buf);
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

static void quote_all(struct out *o, const char *s)
{
	out_put(o, "\"", 1);
	for (; *s; s++) {
		if (*s == '"')
			out_put(o, "\"", 1);
		out_put(o, s, 1);
	}
	out_put(o, "\"", 1);
}

static void quote_writer(struct out *o, const char *s)
{
	size_t need = csv_quote(NULL, 0, s);
	char *b = malloc(need + 1);

	CHECK(b);
	CHECK(csv_quote(b, need + 1, s) == need);
	out_put(o, b, need);
	free(b);
}

/* a cell that looks guarded already: csvr_text takes its quote off */
static bool guard_lossy(const char *s)
{
	const char *p;

	if (s[0] != '\'')
		return false;
	for (p = s + 1; *p == ' ' || *p == '"'; p++)
		;
	return *p && strchr("=+-@\t\r", *p);
}

/* Parse the single record (after a header "h0,h1,...") and compare. */
static void reparse(const struct out *o, size_t ncols, char **fields, bool writer)
{
	struct csvr *r;
	size_t i;
	FILE *f = fmemopen(o->buf, o->len, "r");

	CHECK(f);
	CHECK(csvr_open(f, "again", 0, &r) == 0);
	CHECK(csvr_ncols(r) == ncols);
	CHECK(csvr_next(r) == 1);
	for (i = 0; i < ncols; i++) {
		if (!writer)
			CHECK(!strcmp(csvr_field(r, i), fields[i]));
		else if (!guard_lossy(fields[i]))
			CHECK(!strcmp(csvr_text(r, i), fields[i]));
	}
	CHECK(csvr_next(r) == 0);
	csvr_free(r);
	fclose(f);
}

static void check_error(const struct csvr *r)
{
	const char *e = csvr_error(r);

	CHECK(!strncmp(e, "in.csv:", 7));
	CHECK(!strchr(e, '\n'));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct csvr *r = NULL;
	char **fields = NULL;
	size_t i, n, rows = 0;
	int rc;
	FILE *f;

	if (!size)
		return 0;	/* fmemopen needs a byte */
	f = fmemopen((void *)data, size, "r");
	CHECK(f);
	rc = csvr_open(f, "in.csv", MAX_RECORD, &r);
	if (rc) {
		CHECK(rc == -EINVAL);
		check_error(r);
		goto out;
	}
	n = csvr_ncols(r);
	CHECK(n >= 1);
	fields = calloc(n, sizeof(*fields));
	CHECK(fields);
	while ((rc = csvr_next(r)) == 1 && rows++ < 64) {
		struct out plain = { 0 }, w = { 0 };

		for (i = 0; i < n; i++) {
			fields[i] = strdup(csvr_field(r, i));
			CHECK(fields[i] && strlen(fields[i]) < MAX_RECORD);
			out_put(&plain, i ? ",h" : "h", i ? 2 : 1);
			out_put(&w, i ? ",h" : "h", i ? 2 : 1);
			if (i) {	/* distinct header names */
				char num[24];
				int k = snprintf(num, sizeof(num), "%zu", i);

				out_put(&plain, num, k);
				out_put(&w, num, k);
			}
		}
		out_put(&plain, "\n", 1);
		out_put(&w, "\n", 1);
		for (i = 0; i < n; i++) {
			if (i) {
				out_put(&plain, ",", 1);
				out_put(&w, ",", 1);
			}
			quote_all(&plain, fields[i]);
			quote_writer(&w, fields[i]);
		}
		out_put(&plain, "\n", 1);
		out_put(&w, "\n", 1);
		reparse(&plain, n, fields, false);
		reparse(&w, n, fields, true);
		for (i = 0; i < n; i++)
			free(fields[i]);
		free(plain.buf);
		free(w.buf);
	}
	if (rc < 0) {
		CHECK(rc == -EINVAL);
		check_error(r);
	}
out:
	free(fields);
	csvr_free(r);
	fclose(f);
	return 0;
}
