/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CSV writer: RFC 4180 quoting, written to a temporary file beside the
 * target and renamed over it on commit, so a reader never sees half a file.
 */
#ifndef CS_CSV_H
#define CS_CSV_H

#include <stdint.h>

struct csv;

/* Create the temporary file for path.  Returns 0 or -errno. */
int csv_open(const char *path, struct csv **out);

void csv_str(struct csv *c, const char *s);
void csv_u64(struct csv *c, uint64_t v);
void csv_i64(struct csv *c, int64_t v);
void csv_dbl(struct csv *c, double v, int decimals);
/* End the current row.  Rows are written whole, never split by a flush. */
void csv_end_row(struct csv *c);
/* Push complete rows to the temporary file.  Returns 0 or -errno. */
int csv_flush(struct csv *c);

/* fsync and rename over the target; frees c.  Returns 0 or -errno (the
 * temporary file is removed on failure). */
int csv_commit(struct csv *c);
/* Drop the temporary file; frees c.  csv_abort(NULL) does nothing. */
void csv_abort(struct csv *c);

/* Append s to buf (of size n) quoted as a CSV field; returns the length the
 * full field needs, like snprintf. */
size_t csv_quote(char *buf, size_t n, const char *s);

#endif
