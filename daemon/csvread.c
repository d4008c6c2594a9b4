// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CSV reader.  One state machine over the bytes of a record: a field is
 * quoted or not; inside quotes anything but a lone '"' is data, '""' is a
 * quote; outside, ',' ends the field and LF (or CRLF) the record.  The
 * record's fields are kept NUL-terminated one after another in one buffer,
 * with their offsets, so a field is a pointer and nothing is copied twice.
 * The header's names are kept apart, to look columns up by name.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"
#include "csvread.h"

struct csvr {
	FILE *f;
	char *name;
	size_t max;
	char *buf;		/* fields, each NUL-terminated */
	size_t len, cap;
	size_t *off;		/* field starts in buf */
	size_t nf, fcap;
	char **cols;		/* the header's names */
	size_t ncols;
	unsigned long line;	/* the line the next byte is on */
	unsigned long rec_line;	/* the line the current record began on */
	char err[512];
	int failed;		/* sticky error */
};

static int put(struct csvr *r, char c)
{
	if (array_room(&r->buf, &r->cap, r->len, 1, 4096))
		return -ENOMEM;
	r->buf[r->len++] = c;
	return 0;
}

static int field_start(struct csvr *r)
{
	if (array_room(&r->off, &r->fcap, r->nf, sizeof(*r->off), 64))
		return -ENOMEM;
	r->off[r->nf++] = r->len;
	return 0;
}

static int fail_at(struct csvr *r, unsigned long line, int err, const char *fmt, va_list ap)
{
	int n = snprintf(r->err, sizeof(r->err), "%s:%lu: ", r->name, line);

	if (n >= 0 && (size_t)n < sizeof(r->err))
		vsnprintf(r->err + n, sizeof(r->err) - n, fmt, ap);
	r->failed = err;
	return err;
}

static int fail(struct csvr *r, unsigned long line, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(struct csvr *r, unsigned long line, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err = fail_at(r, line, err, fmt, ap);
	va_end(ap);
	return err;
}

int csvr_fail(struct csvr *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fail_at(r, r->rec_line, -EINVAL, fmt, ap);
	va_end(ap);
	/* a caller's verdict on one record, not the reader's state */
	r->failed = 0;
	return -EINVAL;
}

enum { SEP_NONE, SEP_FIELD, SEP_RECORD, SEP_CR };

/* What c, after a field's text (plain, or its closing quote), is: the end
 * of the field (','), of the record ("\n", "\r\n"), a CR with no LF after
 * it, or none of those. */
static int separator(struct csvr *r, int c)
{
	int d;

	if (c == ',')
		return SEP_FIELD;
	if (c == '\n')
		return SEP_RECORD;
	if (c != '\r')
		return SEP_NONE;
	d = getc_unlocked(r->f);
	if (d == '\n') {
		r->line++;
		return SEP_RECORD;
	}
	if (d != EOF)
		ungetc(d, r->f);
	return SEP_CR;
}

/* Read one record into buf/off.  1, 0 at a clean end, or -errno. */
static int read_record(struct csvr *r)
{
	enum { START, PLAIN, QUOTED, QUOTE_SEEN } st = START;
	size_t bytes = 0;
	int c, err, sep;

	r->len = r->nf = 0;
	r->rec_line = r->line;
	for (;;) {
		c = getc_unlocked(r->f);
		if (c == EOF) {
			if (ferror(r->f))
				return fail(r, r->line, -EIO, "read error: %s", strerror(errno ? errno : EIO));
			if (st == QUOTED)
				return fail(r, r->rec_line, -EINVAL, "quoted field not closed at the end of the file");
			if (st == START && !r->nf)
				return 0;	/* after the last LF */
			break;		/* a last record without its LF */
		}
		if (++bytes > r->max)
			return fail(r, r->rec_line, -EINVAL, "record longer than %zu bytes", r->max);
		if (c == '\0')
			return fail(r, r->line, -EINVAL, "NUL byte");
		if (c == '\n')
			r->line++;
		switch (st) {
		case START:
			if ((err = field_start(r)))
				return err;
			if (c == '"') {
				st = QUOTED;
				continue;
			}
			st = PLAIN;
			/* fall through */
		case PLAIN:
		case QUOTE_SEEN:
			if (st == QUOTE_SEEN && c == '"') {
				st = QUOTED;	/* "" within quotes: one quote */
				break;
			}
			/* the end of an unquoted field, or after its closing quote */
			sep = separator(r, c);
			if (sep == SEP_FIELD) {
				if ((err = put(r, '\0')))
					return err;
				st = START;
				continue;
			}
			if (sep == SEP_RECORD)
				goto end;
			if (st == QUOTE_SEEN)
				return fail(r, r->line, -EINVAL, "text after a closing quote (field %zu)",
					    r->nf);
			if (sep == SEP_CR)
				return fail(r, r->line, -EINVAL, "CR outside quotes not followed by LF");
			if (c == '"')
				return fail(r, r->line, -EINVAL, "quote inside an unquoted field (field %zu)",
					    r->nf);
			break;
		case QUOTED:
			if (c == '"') {
				st = QUOTE_SEEN;
				continue;
			}
			break;
		}
		if ((err = put(r, (char)c)))
			return err;
	}
end:
	/* "a,b," ends with an empty field; so does an empty line (one field) */
	if (st == START && (err = field_start(r)))
		return err;
	if ((err = put(r, '\0')))
		return err;
	return 1;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int csvr_open(FILE *f, const char *name, size_t max_record, struct csvr **out)
{
	struct csvr *r = calloc(1, sizeof(*r));
	char **sorted;
	size_t i, j;
	int rc;

	*out = r;
	if (!r)
		return -ENOMEM;
	r->f = f;
	r->max = max_record ? max_record : CSVR_MAX_RECORD;
	r->line = 1;
	r->name = strdup(name);
	if (!r->name)
		return -ENOMEM;
	rc = read_record(r);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return fail(r, 1, -EINVAL, "empty file: no header");
	r->cols = calloc(r->nf, sizeof(*r->cols));
	if (!r->cols)
		return -ENOMEM;
	for (i = 0; i < r->nf; i++) {
		const char *c = r->buf + r->off[i];

		if (!*c)
			return fail(r, 1, -EINVAL, "header: column %zu has no name", i + 1);
		r->cols[i] = strdup(c);
		if (!r->cols[i])
			return -ENOMEM;
		r->ncols++;
	}
	/* a name twice, found sorted: a header of 10^5 columns is read in
	 * n log n, not in n^2 comparisons */
	sorted = malloc(r->ncols * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	memcpy(sorted, r->cols, r->ncols * sizeof(*sorted));
	qsort(sorted, r->ncols, sizeof(*sorted), name_cmp);
	for (j = 1; j < r->ncols; j++)
		if (!strcmp(sorted[j - 1], sorted[j])) {
			rc = fail(r, 1, -EINVAL, "header: column '%.64s' twice", sorted[j]);
			free(sorted);
			return rc;
		}
	free(sorted);
	r->nf = 0;
	return 0;
}

void csvr_free(struct csvr *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->ncols; i++)
		free(r->cols[i]);
	free(r->cols);
	free(r->buf);
	free(r->off);
	free(r->name);
	free(r);
}

int csvr_next(struct csvr *r)
{
	int rc;

	if (r->failed)
		return r->failed;
	rc = read_record(r);
	if (rc <= 0) {
		r->nf = 0;
		return rc;
	}
	if (r->nf != r->ncols) {
		size_t nf = r->nf;

		r->nf = 0;
		return fail(r, r->rec_line, -EINVAL, "%zu fields, the header has %zu", nf, r->ncols);
	}
	return 1;
}

int csvr_col(const struct csvr *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->ncols; i++)
		if (!strcmp(r->cols[i], name))
			return (int)i;
	return -1;
}

size_t csvr_ncols(const struct csvr *r)
{
	return r->ncols;
}

const char *csvr_colname(const struct csvr *r, size_t i)
{
	return i < r->ncols ? r->cols[i] : "";
}

const char *csvr_field(const struct csvr *r, int i)
{
	if (i < 0 || (size_t)i >= r->nf)
		return "";
	return r->buf + r->off[i];
}

const char *csvr_text(const struct csvr *r, int i)
{
	const char *s = csvr_field(r, i), *p;

	/* the writer's guard (csv.c): a quote before a cell that starts, past
	 * spaces and quotes, with a formula's first character */
	if (s[0] != '\'')
		return s;
	for (p = s + 1; *p == ' ' || *p == '"'; p++)
		;
	return *p && strchr("=+-@\t\r", *p) ? s + 1 : s;
}

int csvr_u64(const struct csvr *r, int i, unsigned long long *v)
{
	const char *s = csvr_field(r, i);
	unsigned long long x;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;	/* strtoull would take " 1" and "-1" */
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*v = x;
	return 0;
}

int csvr_i64(const struct csvr *r, int i, long long *v)
{
	const char *s = csvr_field(r, i);
	long long x;
	char *end;

	if (!((*s >= '0' && *s <= '9') || (*s == '-' && s[1] >= '0' && s[1] <= '9')))
		return -EINVAL;
	errno = 0;
	x = strtoll(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*v = x;
	return 0;
}

int csvr_dbl(const struct csvr *r, int i, double *v)
{
	const char *s = csvr_field(r, i);
	double x;
	char *end;

	if (!((*s >= '0' && *s <= '9') || (*s == '-' && s[1] >= '0' && s[1] <= '9')))
		return -EINVAL;	/* no blanks, inf, nan, hex */
	errno = 0;
	x = strtod(s, &end);
	if (errno || *end || x != x || x - x != 0)
		return -EINVAL;
	*v = x;
	return 0;
}

unsigned long csvr_line(const struct csvr *r)
{
	return r->rec_line;
}

const char *csvr_error(const struct csvr *r)
{
	return r ? r->err : "";
}
