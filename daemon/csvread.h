/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CSV reader for what daemon/csv.c writes: RFC 4180 records (quoted fields
 * may hold ',', '"' doubled, CR and LF; lines end with LF or CRLF), the
 * first record a header that names the columns, every record as many
 * fields as the header.  Input is strict and bounded: a record longer than
 * its limit, a stray quote, text after a closing quote, a NUL byte, an
 * unterminated quote or a wrong number of fields is an error, one line
 * naming the file and the line the record starts on.  Bytes pass as they
 * are (no encoding is assumed: names can be any bytes but NUL).
 */
#ifndef CS_CSVREAD_H
#define CS_CSVREAD_H

#include <stddef.h>
#include <stdio.h>

/* the default bound of one record (its bytes as read) */
#define CSVR_MAX_RECORD (1u << 20)

struct csvr;

/* Read records from f (not closed by csvr_free), whose name (for errors)
 * is name; max_record bounds one record's bytes (0: CSVR_MAX_RECORD).
 * Reads the header.  Returns 0, or -ENOMEM, or -EINVAL for a bad or
 * missing header, with the one-line error in csvr_error(*out); *out is
 * then still to be freed. */
int csvr_open(FILE *f, const char *name, size_t max_record, struct csvr **out);
void csvr_free(struct csvr *r);

/* The next record: 1, 0 at the end of the input, -EINVAL on bad input or
 * -EIO on a read error (csvr_error says which and where; the reader then
 * stays at that error), -ENOMEM. */
int csvr_next(struct csvr *r);

/* The header's column of that name, or -1. */
int csvr_col(const struct csvr *r, const char *name);
size_t csvr_ncols(const struct csvr *r);
/* A header name. */
const char *csvr_colname(const struct csvr *r, size_t i);

/* Field i of the current record, unquoted, NUL-terminated ("" for i < 0 or
 * past the last field: a column the file lacks reads as empty); valid until
 * the next csvr_next. */
const char *csvr_field(const struct csvr *r, int i);
/* The same with the writer's guard against spreadsheet formulas undone:
 * a leading ' before = + - @ TAB or CR is dropped.  (Text that itself began
 * with such a ' comes back without it: the writer's guard is not
 * reversible there.) */
const char *csvr_text(const struct csvr *r, int i);

/* Parse field i as a number.  Return 0, or -EINVAL when it is empty, not a
 * number of that type, or out of range; *v is written only on success. */
int csvr_u64(const struct csvr *r, int i, unsigned long long *v);
int csvr_i64(const struct csvr *r, int i, long long *v);
int csvr_dbl(const struct csvr *r, int i, double *v);

/* The line the current record starts on (the header is line 1). */
unsigned long csvr_line(const struct csvr *r);
/* The last error as one line, "FILE:LINE: what", or "". */
const char *csvr_error(const struct csvr *r);
/* Set the error of the current record (e.g. a field that does not parse):
 * "FILE:LINE: " and then the printf text.  Returns -EINVAL. */
int csvr_fail(struct csvr *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
