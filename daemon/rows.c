// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The rows kept for export.  The one idea: rows are text already (the
 * CSV writer hands each complete row over), kept whole in chunks, so the
 * memory they take is their bytes plus one header per chunk, eviction is
 * one free, and an export writes the very text the --csv file holds.  A
 * row's time is its first field, read back when an export asks for rows
 * since some time.  A chunk that is full is compressed (zlib, its fastest
 * level: CSV text shrinks about 5x), so the bound holds that much more
 * history; an export inflates one chunk at a time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "rows.h"

struct rows_chunk {
	struct rows_chunk *next;
	size_t len, cap;	/* text bytes; bytes held (compressed: its size) */
	size_t zlen;		/* compressed bytes, 0: text as it came */
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

/* Replace the full chunk c (the newest) by its compressed copy, when
 * that is smaller and memory allows; else it stays as it is. */
static void compress_newest(struct rows *r)
{
	struct rows_chunk *c = r->newest, *z, **pp;
	uLongf zlen = compressBound(c->len);

	z = malloc(sizeof(*z) + zlen);
	if (!z)
		return;
	if (compress2((Bytef *)z->text, &zlen, (const Bytef *)c->text, c->len, Z_BEST_SPEED) != Z_OK ||
	    zlen >= c->len) {
		free(z);
		return;
	}
	*z = *c;
	z->zlen = zlen;
	z->cap = zlen;
	{
		struct rows_chunk *t = realloc(z, sizeof(*z) + zlen);

		if (t)
			z = t;
	}
	for (pp = &r->oldest; *pp != c; pp = &(*pp)->next)
		;
	*pp = z;
	r->newest = z;
	r->bytes -= c->cap - zlen;
	free(c);
}

void rows_add(struct rows *r, const char *row, size_t len)
{
	struct rows_chunk *c = r->newest;

	if (c && !c->zlen && c->len + len > c->cap)
		compress_newest(r);
	c = r->newest;
	if (!c || c->zlen || c->len + len > c->cap) {
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
		c->zlen = 0;
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
	char *buf = NULL;
	size_t bufcap = 0;
	uint64_t n = 0;

	if (r->header)
		fwrite(r->header, 1, r->header_len, out);
	for (c = r->oldest; c; c = c->next) {
		const char *p = c->text, *end, *nl;

		if (c->last_ts < since)
			continue;
		if (c->zlen) {
			uLongf len = c->len;

			if (bufcap < c->len) {
				char *b = realloc(buf, c->len);

				if (!b)
					continue;	/* no memory: the chunk is left out */
				buf = b;
				bufcap = c->len;
			}
			if (uncompress((Bytef *)buf, &len, (const Bytef *)c->text, c->zlen) != Z_OK ||
			    len != c->len)
				continue;
			p = buf;
		}
		end = p + c->len;
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
	free(buf);
	return n;
}

void rows_get_stats(const struct rows *r, struct rows_stats *st)
{
	st->rows = r->rows;
	st->evicted = r->evicted;
	st->lost = r->lost;
	st->bytes = r->bytes;
	st->max_bytes = r->max_bytes;
	st->oldest_ts = 0;
	if (r->oldest && r->oldest->len && !r->oldest->zlen) {
		st->oldest_ts = row_ts(r->oldest->text);
	} else if (r->oldest && r->oldest->len) {
		/* the first row's time, from the start of the compressed text */
		char head[64];
		uLongf len = sizeof(head) - 1;
		z_stream zs = { .next_in = (Bytef *)r->oldest->text,
				.avail_in = (uInt)r->oldest->zlen,
				.next_out = (Bytef *)head, .avail_out = (uInt)len };

		if (inflateInit(&zs) == Z_OK) {
			inflate(&zs, Z_SYNC_FLUSH);
			head[sizeof(head) - 1 - zs.avail_out] = '\0';
			st->oldest_ts = row_ts(head);
			inflateEnd(&zs);
		}
	}
}
