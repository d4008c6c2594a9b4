// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The rows kept for export.  The one idea: rows are text already (the
 * CSV writer hands each complete row over), kept whole in chunks, so the
 * memory they take is their bytes plus one header per chunk, eviction is
 * one free, and an export writes the very text the --csv file holds.  A
 * row's time is its first field, read back when an export asks for rows
 * since some time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "rows.h"

struct rows_chunk {
	struct rows_chunk *next;
	size_t len, cap;
	uint64_t nrows;
	double last_ts;
	char text[];
};

static double row_ts(const char *row)
{
	return strtod(row, NULL);
}

void rows_init(struct rows *r, size_t max_bytes)
{
	memset(r, 0, sizeof(*r));
	r->max_bytes = max_bytes;
}

void rows_release(struct rows *r)
{
	struct rows_chunk *c, *n;

	for (c = r->oldest; c; c = n) {
		n = c->next;
		free(c);
	}
	free(r->header);
	memset(r, 0, sizeof(*r));
}

int rows_set_header(struct rows *r, const char *text, size_t len)
{
	char *h = malloc(len + 1);

	if (!h)
		return -ENOMEM;
	memcpy(h, text, len);
	h[len] = '\0';
	free(r->header);
	r->header = h;
	r->header_len = len;
	return 0;
}

static void evict_oldest(struct rows *r)
{
	struct rows_chunk *c = r->oldest;

	r->oldest = c->next;
	if (!r->oldest)
		r->newest = NULL;
	r->bytes -= c->cap;
	r->rows -= c->nrows;
	r->evicted += c->nrows;
	free(c);
}

void rows_add(struct rows *r, const char *row, size_t len)
{
	struct rows_chunk *c = r->newest;

	if (!c || c->len + len > c->cap) {
		size_t cap = len > ROWS_CHUNK ? len : ROWS_CHUNK;

		/* the newest chunk always stays: the bound is met by the older ones */
		while (r->oldest && r->bytes + cap > r->max_bytes)
			evict_oldest(r);
		c = malloc(sizeof(*c) + cap);
		if (!c) {
			r->lost++;
			return;
		}
		c->next = NULL;
		c->len = 0;
		c->cap = cap;
		c->nrows = 0;
		if (r->newest)
			r->newest->next = c;
		else
			r->oldest = c;
		r->newest = c;
		r->bytes += cap;
	}
	memcpy(c->text + c->len, row, len);
	c->len += len;
	c->nrows++;
	c->last_ts = row_ts(row);
	r->rows++;
}

uint64_t rows_write(const struct rows *r, double since, FILE *out)
{
	const struct rows_chunk *c;
	uint64_t n = 0;

	if (r->header)
		fwrite(r->header, 1, r->header_len, out);
	for (c = r->oldest; c; c = c->next) {
		const char *p = c->text, *end = c->text + c->len, *nl;

		if (c->last_ts < since)
			continue;
		for (; p < end; p = nl + 1) {
			nl = memchr(p, '\n', end - p);
			if (!nl)
				break;
			if (row_ts(p) < since)
				continue;
			fwrite(p, 1, nl + 1 - p, out);
			n++;
		}
	}
	return n;
}

void rows_get_stats(const struct rows *r, struct rows_stats *st)
{
	st->rows = r->rows;
	st->evicted = r->evicted;
	st->lost = r->lost;
	st->bytes = r->bytes;
	st->max_bytes = r->max_bytes;
	st->oldest_ts = r->oldest && r->oldest->len ? row_ts(r->oldest->text) : 0;
}
