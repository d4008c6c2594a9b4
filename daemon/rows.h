/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The CSV rows the daemon keeps for 'cachescope export': the newest rows
 * of its CSV, the same text the --csv file gets, in a fixed memory bound.
 * Rows go into chunks of ROWS_CHUNK bytes, a full one kept compressed;
 * once the chunks take more than the bound, the oldest goes, its rows
 * counted as evicted.
 */
#ifndef CS_ROWS_H
#define CS_ROWS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ROWS_CHUNK (256u << 10)

struct rows_chunk;

struct rows {
	struct rows_chunk *oldest, *newest;
	size_t max_bytes, bytes;	/* bytes: of the chunks held */
	char *header;			/* the header row, newline included */
	size_t header_len;
	uint64_t rows, evicted, lost;	/* held; gone for the bound; no memory */
};

struct rows_stats {
	uint64_t rows, evicted, lost;
	size_t bytes, max_bytes;
	double oldest_ts;		/* the ts of the oldest row held, 0 if none */
};

/* max_bytes: the bound (at least one chunk is kept). */
void rows_init(struct rows *r, size_t max_bytes);
void rows_release(struct rows *r);
/* The header row (text with its newline).  Returns 0 or -ENOMEM. */
int rows_set_header(struct rows *r, const char *text, size_t len);
/* Keep one row (text with its newline, its first field the ts in
 * seconds); the oldest rows go first past the bound.  A row with no
 * memory for it is counted in lost. */
void rows_add(struct rows *r, const char *row, size_t len);
/* Write the header and the rows whose ts is >= since, oldest first.
 * Returns the number of rows written. */
uint64_t rows_write(const struct rows *r, double since, FILE *out);
void rows_get_stats(const struct rows *r, struct rows_stats *st);

#endif
