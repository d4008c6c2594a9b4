/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CSV writer: RFC 4180 quoting, written to a temporary file beside the
 * target and renamed over it on commit, so a reader never sees half a file.
 */
#ifndef CS_CSV_H
#define CS_CSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct csv;

struct csv_stats {
	uint64_t rows;		/* complete rows written, in every file */
	uint64_t lost;		/* rows not written: after a write error, or no memory */
	int err;		/* the first write error, -errno, or 0 */
	/* the size bound (csv_set_rotation) */
	uint64_t rotations;	/* files committed at the bound */
	uint64_t files_dropped;	/* the oldest, removed past the kept count */
	uint64_t rows_dropped;	/* their rows (not the header), of this run's files */
};

/* the most older files kept beside the newest (<path>.1 ... <path>.N) */
#define CSV_KEEP_MAX 64

/* Create the temporary file for path: <path>.tmp.<pid>.XXXXXX, mode 0600,
 * O_CLOEXEC.  Returns 0 or -errno. */
int csv_open(const char *path, struct csv **out);

/* A CSV with no file: each complete row only goes to the row function
 * (csv_set_row_fn); nothing is kept.  Returns 0 or -ENOMEM. */
int csv_new_mem(struct csv **out);
/* Hand every complete row from now on (its text with the newline, len
 * bytes) to fn, whether or not a file gets it too; NULL: none. */
void csv_set_row_fn(struct csv *c, void (*fn)(const char *row, size_t len, void *ctx),
		    void *ctx);

/* String fields are escaped as the terminal's text is (str_escape: bytes
 * that are not valid UTF-8 or that a terminal would act on become \xNN,
 * a backslash \\), then quoted as RFC 4180 says and neutralised as
 * formulas (see csv_quote). */
void csv_str(struct csv *c, const char *s);
void csv_u64(struct csv *c, uint64_t v);
void csv_i64(struct csv *c, int64_t v);
void csv_dbl(struct csv *c, double v, int decimals);
/* End the current row.  Rows are written whole, never split by a flush. */
void csv_end_row(struct csv *c);
/* Push complete rows to the temporary file.  Returns -errno when this call
 * met the first write error (ENOSPC, EIO...): the file then keeps the
 * complete rows that reached it (a partial one is cut off), and every
 * later row is counted as lost, not written; else 0, also after that
 * first error. */
int csv_flush(struct csv *c);
void csv_get_stats(const struct csv *c, struct csv_stats *st);
/* The temporary file's path. */
const char *csv_tmp_path(const struct csv *c);

/* Flush, fsync and rename over the target, also after a write error (the
 * rows written are kept).  Returns 0 or the -errno of fsync or rename; the
 * temporary file is then left where csv_tmp_path says, never removed.
 * Does not free c. */
int csv_commit(struct csv *c);
/* The same with move(ctx) doing the rename (and the directory's sync; the
 * files moved up after a rotation) in its stead: another process's,
 * allowed to (keeper.h); it returns 1 when that removed the oldest file. */
int csv_commit_by(struct csv *c, int (*move)(void *ctx), void *ctx);
/* Bound the file: once max_bytes would be passed, the file so far is
 * committed (an older <path> becomes <path>.1, <path>.1 becomes <path>.2
 * and so on, <path>.keep removed) and a new one is begun with the same
 * header (the first row written: call this before it).  rotate NULL, or
 * returning -ENOSYS, does that here; else rotate(ctx, &fd) has done it in
 * another process and handed back the new temporary file's descriptor
 * (keeper.h).  At commit the files move up the same way once the bound
 * was reached.  max_bytes 0: no bound. */
void csv_set_rotation(struct csv *c, uint64_t max_bytes, int keep,
		      int (*rotate)(void *ctx, int *fd), void *ctx);
/* The shift of files at the bound (for whoever does it): <path>.keep
 * removed, each older one moved up, <path> to <path>.1 (keep 0: <path> is
 * replaced), tmp to <path>, the directory synced; *dropped set when a file
 * was removed.  0 or -errno. */
int csv_shift_files(const char *path, const char *tmp, int keep, bool *dropped);

/* Free c (after csv_commit).  csv_free(NULL) does nothing. */
void csv_free(struct csv *c);
/* Drop the temporary file, before anything was committed; frees c.
 * csv_abort(NULL) does nothing. */
void csv_abort(struct csv *c);

/* Temporary files of path's directory left by a cachescoped that is gone
 * (killed before it could commit): ours, of our temporary-name pattern,
 * whose pid is gone or, reused, does not hold the file open.  Calls found
 * for each with its path and that pid; removes nothing.  Returns how many,
 * or -errno when the directory cannot be read. */
int csv_orphans(const char *path, void (*found)(const char *tmp, long pid, void *ctx),
		void *ctx);

/* Append s to buf (of size n) quoted as a CSV field; returns the length the
 * full field needs, like snprintf.  A field that a spreadsheet would take
 * for a formula (its first byte = + - @ TAB or CR) gets a leading ', as
 * OWASP recommends against CSV injection. */
size_t csv_quote(char *buf, size_t n, const char *s);

#endif
