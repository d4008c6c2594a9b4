// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the CSV writer (daemon/csv.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>
#include <cmocka.h>
#include "helpers/tmpdir.h"
#include "../daemon/csv.h"

static char dir[] = "/tmp/cs-test-csv-XXXXXX";

/* write(2) with -Wl,--wrap=write: a full disk cannot be had without root.
 * write_budget >= 0: that many more bytes go through (the last call cut
 * short), then every call fails with write_errno. */
static long write_budget = -1;
static int write_errno;
ssize_t __real_write(int fd, const void *buf, size_t n);

ssize_t __wrap_write(int fd, const void *buf, size_t n)
{
	if (write_budget < 0)
		return __real_write(fd, buf, n);
	if (!write_budget) {
		errno = write_errno;
		return -1;
	}
	if ((long)n > write_budget)
		n = write_budget;
	write_budget -= n;
	return __real_write(fd, buf, n);
}

TMPDIR_GROUP(dir)

static char *slurp(const char *path)
{
	static char buf[8192];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static int entries_in_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static void csv_quote__hostile_names__rfc4180(void **state)
{
	char buf[128];

	(void)state;
	csv_quote(buf, sizeof(buf), "filp");
	assert_string_equal(buf, "filp");
	csv_quote(buf, sizeof(buf), "a,b");
	assert_string_equal(buf, "\"a,b\"");
	csv_quote(buf, sizeof(buf), "say \"hi\"");
	assert_string_equal(buf, "\"say \"\"hi\"\"\"");
	csv_quote(buf, sizeof(buf), "line\nbreak");
	assert_string_equal(buf, "\"line\nbreak\"");
	csv_quote(buf, sizeof(buf), "cr\rhere");
	assert_string_equal(buf, "\"cr\rhere\"");
	csv_quote(buf, sizeof(buf), " padded");
	assert_string_equal(buf, "\" padded\"");
	csv_quote(buf, sizeof(buf), "");
	assert_string_equal(buf, "");
	/* a short buffer is cut but the needed length is returned */
	assert_int_equal(csv_quote(buf, 4, "\"\"\""), 8);
	assert_int_equal(strlen(buf), 3);
}

static void csv_commit__rows__file_appears_whole(void **state)
{
	char path[256];
	struct csv *c;
	char *got;

	(void)state;
	snprintf(path, sizeof(path), "%s/out.csv", dir);
	assert_int_equal(csv_open(path, &c), 0);
	csv_str(c, "key");
	csv_str(c, "n");
	csv_str(c, "x");
	csv_end_row(c);
	csv_str(c, "kmalloc-64,\"evil\"\n");
	csv_u64(c, 18446744073709551615ull);
	csv_dbl(c, 0.5, 3);
	csv_end_row(c);
	csv_str(c, "neg");
	csv_i64(c, -3);
	csv_dbl(c, 2.0 / 3.0, 4);
	csv_end_row(c);
	/* the integers' own formatting: the ends of their ranges, and 0 */
	csv_i64(c, INT64_MIN);
	csv_i64(c, INT64_MAX);
	csv_i64(c, 0);
	csv_u64(c, 0);
	csv_end_row(c);
	assert_int_equal(csv_flush(c), 0);
	/* before commit the target does not exist, only the temporary file */
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(entries_in_dir(), 1);
	assert_int_equal(csv_commit(c), 0);
	csv_free(c);
	got = slurp(path);
	assert_non_null(got);
	assert_string_equal(got,
		"key,n,x\n"
		"\"kmalloc-64,\"\"evil\"\"\\x0a\",18446744073709551615,0.500\n"
		"neg,-3,0.6667\n"
		"-9223372036854775808,9223372036854775807,0,0\n");
	assert_int_equal(entries_in_dir(), 1);
}

static void csv_commit__existing_target__replaced_only_at_commit(void **state)
{
	char path[256];
	struct csv *c;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/keep.csv", dir);
	f = fopen(path, "w");
	fputs("old\n", f);
	fclose(f);
	assert_int_equal(csv_open(path, &c), 0);
	csv_str(c, "new");
	csv_end_row(c);
	csv_flush(c);
	assert_string_equal(slurp(path), "old\n");
	assert_int_equal(csv_commit(c), 0);
	csv_free(c);
	assert_string_equal(slurp(path), "new\n");
}

/* With files kept (--csv-keep), an earlier run's file is one of them: a
 * service's CSV outlives its restart as FILE.1 (before, the new run's
 * file replaced it unless the new one had rotated). */
static void csv_commit__keep_earlier_run__moved_up_not_replaced(void **state)
{
	char path[256], one[300];
	struct csv *c;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/svc.csv", dir);
	snprintf(one, sizeof(one), "%s.1", path);
	f = fopen(path, "w");
	fputs("last run\n", f);
	fclose(f);
	assert_int_equal(csv_open(path, &c), 0);
	csv_set_rotation(c, 0, 2, NULL, NULL);
	csv_str(c, "this run");
	csv_end_row(c);
	assert_int_equal(csv_commit(c), 0);
	csv_free(c);
	assert_string_equal(slurp(path), "this run\n");
	assert_string_equal(slurp(one), "last run\n");
	unlink(one);
	unlink(path);
}

static void csv_abort__temporary_file__removed(void **state)
{
	char path[256];
	struct csv *c;
	int before = entries_in_dir();

	(void)state;
	snprintf(path, sizeof(path), "%s/aborted.csv", dir);
	assert_int_equal(csv_open(path, &c), 0);
	assert_int_equal(entries_in_dir(), before + 1);
	csv_str(c, "x");
	csv_end_row(c);
	csv_abort(c);
	assert_int_equal(entries_in_dir(), before);
	assert_int_equal(access(path, F_OK), -1);
	csv_abort(NULL);
}

static void csv_open__missing_directory__enoent(void **state)
{
	struct csv *c = NULL;

	(void)state;
	assert_int_equal(csv_open("/nonexistent-cs-dir/x.csv", &c), -ENOENT);
	assert_null(c);
}

static void csv_str__long_field__written_whole(void **state)
{
	char path[256], *big, *got;
	struct csv *c;

	(void)state;
	big = malloc(2001);
	memset(big, 'a', 2000);
	big[0] = ',';
	big[2000] = '\0';
	snprintf(path, sizeof(path), "%s/big.csv", dir);
	assert_int_equal(csv_open(path, &c), 0);
	csv_str(c, big);
	csv_end_row(c);
	assert_int_equal(csv_commit(c), 0);
	csv_free(c);
	got = slurp(path);
	assert_int_equal(strlen(got), 2000 + 2 + 1);
	assert_int_equal(got[0], '"');
	assert_int_equal(got[2001], '"');
	free(big);
}

static void csv_quote__formula_cells__neutralised(void **state)
{
	char buf[128];

	(void)state;
	csv_quote(buf, sizeof(buf), "=HYPERLINK(\"http://x\")");
	assert_string_equal(buf, "\"'=HYPERLINK(\"\"http://x\"\")\"");
	csv_quote(buf, sizeof(buf), "+1+2");
	assert_string_equal(buf, "'+1+2");
	csv_quote(buf, sizeof(buf), "-2+3");
	assert_string_equal(buf, "'-2+3");
	csv_quote(buf, sizeof(buf), "@SUM(A1)");
	assert_string_equal(buf, "'@SUM(A1)");
	csv_quote(buf, sizeof(buf), "=1,2");
	assert_string_equal(buf, "\"'=1,2\"");
	csv_quote(buf, sizeof(buf), "\t=1");
	assert_string_equal(buf, "\"'\t=1\"");
	csv_quote(buf, sizeof(buf), "\rx");
	assert_string_equal(buf, "\"'\rx\"");
	/* nor after the spaces and quotes a spreadsheet skips (it failed
	 * before: the guard looked at the first byte only) */
	csv_quote(buf, sizeof(buf), "  =cmd|' /C calc'!A0");
	assert_string_equal(buf, "\"'  =cmd|' /C calc'!A0\"");
	csv_quote(buf, sizeof(buf), "\"=1+1\"");
	assert_string_equal(buf, "\"'\"\"=1+1\"\"\"");
	/* but the first byte after them counts, not any later one */
	csv_quote(buf, sizeof(buf), "a=b-c");
	assert_string_equal(buf, "a=b-c");
	assert_int_equal(csv_quote(buf, 2, "=x"), 3);
}

/* The fd of the temporary file, found in /proc/self/fd, or -1. */
static int fd_of(const char *path)
{
	char link[512], fp[300];
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");
	int fd = -1;
	ssize_t n;

	assert_non_null(d);
	while (fd < 0 && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(fp, sizeof(fp), "/proc/self/fd/%s", e->d_name);
		n = readlink(fp, link, sizeof(link) - 1);
		if (n > 0) {
			link[n] = '\0';
			if (!strcmp(link, path))
				fd = atoi(e->d_name);
		}
	}
	closedir(d);
	return fd;
}

static void csv_open__any_umask__file_0600_and_cloexec(void **state)
{
	char path[256], want[300];
	struct csv *c;
	struct stat st;
	mode_t old;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s/private.csv", dir);
	old = umask(0);
	assert_int_equal(csv_open(path, &c), 0);
	umask(old);
	/* the name carries our pid, for csv_orphans */
	snprintf(want, sizeof(want), "%s.tmp.%d.", path, (int)getpid());
	assert_memory_equal(csv_tmp_path(c), want, strlen(want));
	assert_int_equal(strlen(csv_tmp_path(c)), strlen(want) + 6);
	assert_int_equal(stat(csv_tmp_path(c), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	fd = fd_of(csv_tmp_path(c));
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	csv_str(c, "x");
	csv_end_row(c);
	assert_int_equal(csv_commit(c), 0);
	csv_free(c);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	unlink(path);
}

/* The disk fills in the middle of a row: the rows before stay, the cut
 * row goes, later rows are counted as lost, and commit still gives the
 * target what was written. */
static void csv_flush__enospc_mid_row__rows_before_kept_rest_counted_lost(void **state)
{
	char path[256], tmp[300], *got;
	struct csv_stats st;
	struct csv *c;
	int i;

	(void)state;
	snprintf(path, sizeof(path), "%s/full.csv", dir);
	assert_int_equal(csv_open(path, &c), 0);
	csv_str(c, "row");
	csv_end_row(c);
	assert_int_equal(csv_flush(c), 0);
	/* the next flush: one row of 6 bytes and half of the second */
	for (i = 0; i < 3; i++) {
		csv_u64(c, 10 + i);
		csv_str(c, "ab");
		csv_end_row(c);
	}
	write_budget = 9;
	write_errno = ENOSPC;
	assert_int_equal(csv_flush(c), -ENOSPC);
	/* said once; later rows are lost, not written, and not an error again */
	csv_str(c, "later");
	csv_end_row(c);
	assert_int_equal(csv_flush(c), 0);
	csv_get_stats(c, &st);
	assert_int_equal(st.rows, 2);
	assert_int_equal(st.lost, 3);
	assert_int_equal(st.err, -ENOSPC);
	/* the temporary file is still there, whole rows only */
	got = slurp(csv_tmp_path(c));
	assert_non_null(got);
	assert_string_equal(got, "row\n10,ab\n");
	write_budget = -1;
	snprintf(tmp, sizeof(tmp), "%s", csv_tmp_path(c));
	assert_int_equal(csv_commit(c), 0);
	csv_free(c);
	assert_string_equal(slurp(path), "row\n10,ab\n");
	assert_int_equal(access(tmp, F_OK), -1);	/* renamed, not left */
	unlink(path);
}

/* Past 64 KiB of rows csv_end_row writes itself: an error met there is
 * still returned by the next csv_flush, once. */
static void csv_flush__error_met_by_end_row__returned_once(void **state)
{
	char path[256], field[101];
	struct csv_stats st;
	struct csv *c;
	int i;

	(void)state;
	memset(field, 'x', 100);
	field[100] = '\0';
	snprintf(path, sizeof(path), "%s/big-rows.csv", dir);
	assert_int_equal(csv_open(path, &c), 0);
	write_budget = 1000;
	write_errno = ENOSPC;
	for (i = 0; i < 1000; i++) {	/* 101 KiB */
		csv_str(c, field);
		csv_end_row(c);
	}
	csv_get_stats(c, &st);
	assert_int_equal(st.err, -ENOSPC);	/* met before any flush */
	assert_int_equal(csv_flush(c), -ENOSPC);
	assert_int_equal(csv_flush(c), 0);
	write_budget = -1;
	assert_int_equal(csv_commit(c), 0);
	csv_get_stats(c, &st);
	csv_free(c);
	assert_int_equal(st.rows, 1000 / 101);
	assert_int_equal(st.rows + st.lost, 1000);
	unlink(path);
}

static void csv_commit__eio_on_first_flush__target_has_what_was_written(void **state)
{
	char path[256];
	struct csv_stats st;
	struct csv *c;

	(void)state;
	snprintf(path, sizeof(path), "%s/eio.csv", dir);
	assert_int_equal(csv_open(path, &c), 0);
	csv_str(c, "header");
	csv_end_row(c);
	write_budget = 0;
	write_errno = EIO;
	csv_str(c, "a");
	csv_end_row(c);
	/* commit flushes: the error is met there */
	assert_int_equal(csv_commit(c), 0);
	write_budget = -1;
	csv_get_stats(c, &st);
	csv_free(c);
	assert_int_equal(st.err, -EIO);
	assert_int_equal(st.rows, 0);
	assert_int_equal(st.lost, 2);
	assert_string_equal(slurp(path), "");
	unlink(path);
}

struct found {
	char names[4][512];
	long pids[4];
	int n;
};

static void on_orphan(const char *tmp, long pid, void *ctx)
{
	struct found *f = ctx;

	if (f->n < 4) {
		snprintf(f->names[f->n], sizeof(f->names[f->n]), "%s", tmp);
		f->pids[f->n++] = pid;
	}
}

static void touch(const char *path)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs("ts,window\n", f);
	fclose(f);
}

static void csv_orphans__killed_run_and_live_daemon__only_the_dead_reported(void **state)
{
	char sub[256], target[300], dead[400], live[400], reused[400], other[400];
	struct found f = { .n = 0 };
	pid_t gone;
	int fd, i;

	(void)state;
	snprintf(sub, sizeof(sub), "%s/orphans", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	snprintf(target, sizeof(target), "%s/run.csv", sub);
	gone = fork();
	assert_true(gone >= 0);
	if (!gone)
		_exit(0);
	assert_int_equal(waitpid(gone, NULL, 0), gone);
	/* a killed run: its pid is gone */
	snprintf(dead, sizeof(dead), "%s.tmp.%d.aB3dEf", target, (int)gone);
	touch(dead);
	/* a live daemon's: its pid (ours) holds it open */
	snprintf(live, sizeof(live), "%s.tmp.%d.xYz123", target, (int)getpid());
	touch(live);
	fd = open(live, O_RDONLY);
	assert_true(fd >= 0);
	/* a pid that lives again in another process: it does not hold it */
	snprintf(reused, sizeof(reused), "%s/old.csv.tmp.%d.QwErTy", sub, (int)getpid());
	touch(reused);
	/* not ours: no pid, or not of the pattern */
	snprintf(other, sizeof(other), "%s/run.csv.tmp.QwErTy", sub);
	touch(other);
	snprintf(other, sizeof(other), "%s/notes.tmp.txt", sub);
	touch(other);
	assert_int_equal(csv_orphans(target, on_orphan, &f), 2);
	assert_int_equal(f.n, 2);
	for (i = 0; i < 2; i++) {
		if (!strcmp(f.names[i], dead))
			assert_int_equal(f.pids[i], gone);
		else if (!strcmp(f.names[i], reused))
			assert_int_equal(f.pids[i], getpid());
		else
			fail_msg("reported %s", f.names[i]);
	}
	/* nothing removed */
	assert_int_equal(access(dead, F_OK), 0);
	assert_int_equal(access(live, F_OK), 0);
	close(fd);
	assert_int_equal(csv_orphans("/nonexistent-cs-dir/x.csv", on_orphan, &f), -ENOENT);
}

struct got_rows {
	char text[512];
	size_t len;
	int n;
};

static void keep_row(const char *row, size_t len, void *ctx)
{
	struct got_rows *g = ctx;

	assert_true(g->len + len < sizeof(g->text));
	memcpy(g->text + g->len, row, len);
	g->len += len;
	g->text[g->len] = '\0';
	g->n++;
}

/* The rows a file-less CSV builds reach the row function whole, with
 * names escaped as the terminal's and JSON's text is. */
static void csv_new_mem__rows__to_row_fn_escaped(void **state)
{
	struct got_rows g = { .len = 0 };
	struct csv_stats st;
	struct csv *c;

	(void)state;
	assert_int_equal(csv_new_mem(&c), 0);
	csv_set_row_fn(c, keep_row, &g);
	csv_str(c, "comm");
	csv_u64(c, 1);
	csv_end_row(c);
	/* an invalid UTF-8 byte, an escape sequence, a backslash */
	csv_str(c, "ev\xffil\x1b[31m\\x");
	csv_u64(c, 2);
	csv_end_row(c);
	assert_int_equal(csv_flush(c), 0);
	csv_get_stats(c, &st);
	assert_int_equal(st.rows, 2);
	assert_int_equal(g.n, 2);
	assert_string_equal(g.text, "comm,1\nev\\xffil\\x1b[31m\\\\x,2\n");
	csv_free(c);
}

/* Rows of a file (lines), and whether it begins with the header. */
static int rows_of(const char *path, bool *headed)
{
	char *got = slurp(path), *p;
	int n = 0;

	*headed = false;
	if (!got)
		return -1;
	*headed = !strncmp(got, "window,key\n", 11);
	for (p = got; *p; p++)
		n += *p == '\n';
	return n;
}

static void rows_into(struct csv *c, int from, int to)
{
	int i;

	for (i = from; i < to; i++) {
		csv_u64(c, (uint64_t)i);
		csv_str(c, "kmalloc-64");
		csv_end_row(c);
	}
}

/* The rotation another process does (the keeper's), here in this one. */
static int rotations_by_other;

static int rotate_elsewhere(void *ctx, int *fd)
{
	const char *const *paths = ctx;
	bool dropped;
	int err = csv_shift_files(paths[0], paths[1], 2, &dropped);

	rotations_by_other++;
	if (err)
		return err;
	*fd = open(paths[1], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	return *fd < 0 ? -errno : 0;
}

/* Past its bound the file so far is committed and the older ones move up:
 * FILE the newest, FILE.1, FILE.2 (keep 2), each with the header and whole
 * rows; what the oldest held is counted when it goes, and the rows of
 * every file kept and dropped are all the rows written.  A file an
 * earlier run left as FILE.1 moves up too, but is not this run's rows. */
static void csv_set_rotation__past_bound__files_move_up_rows_counted(void **state)
{
	char sub[256], path[300], name[320], tmp[400];
	int i, kept = 0, total, other;
	struct csv_stats st;
	struct csv *c;
	bool headed;

	(void)state;
	for (other = 0; other < 2; other++) {
		snprintf(sub, sizeof(sub), "%s/rot%d", dir, other);
		assert_int_equal(mkdir(sub, 0700), 0);
		snprintf(path, sizeof(path), "%s/rows.csv", sub);
		snprintf(name, sizeof(name), "%s.1", path);
		touch(name);				/* an earlier run's */
		assert_int_equal(csv_open(path, &c), 0);
		snprintf(tmp, sizeof(tmp), "%s", csv_tmp_path(c));
		{
			const char *paths[] = { path, tmp };

			rotations_by_other = 0;
			/* rows of 13..15 bytes: some 15 a file of 200 */
			csv_set_rotation(c, 200, 2, other ? rotate_elsewhere : NULL,
					 other ? (void *)paths : NULL);
			csv_str(c, "window");
			csv_str(c, "key");
			csv_end_row(c);
			rows_into(c, 0, 100);
			assert_int_equal(csv_flush(c), 0);
			csv_get_stats(c, &st);
			assert_true(st.rotations >= 5);
			assert_int_equal(rotations_by_other, other ? (int)st.rotations : 0);
			assert_int_equal(csv_commit(c), 0);
		}
		csv_get_stats(c, &st);
		csv_free(c);
		assert_int_equal(st.rows, 101);			/* the header once */
		assert_int_equal(st.lost, 0);
		for (i = 0; i <= 2; i++) {
			if (i)
				snprintf(name, sizeof(name), "%s.%d", path, i);
			else
				snprintf(name, sizeof(name), "%s", path);
			total = rows_of(name, &headed);
			assert_true(total >= 2);
			assert_true(headed);
			assert_true(strlen(slurp(name)) <= 200);
			kept += total - 1;
		}
		snprintf(name, sizeof(name), "%s.3", path);
		assert_int_equal(access(name, F_OK), -1);
		/* the newest file holds the last row */
		assert_non_null(strstr(slurp(path), "\n99,kmalloc-64\n"));
		assert_int_equal(st.files_dropped, st.rotations - 2);
		assert_int_equal(kept + st.rows_dropped, 100);
		assert_int_equal(access(tmp, F_OK), -1);
		kept = 0;
	}
}

/* A row longer than the bound is a file of its own, not a loop. */
static void csv_set_rotation__row_past_bound__a_file_of_its_own(void **state)
{
	char sub[256], path[300], big[600];
	struct csv_stats st;
	struct csv *c;

	(void)state;
	snprintf(sub, sizeof(sub), "%s/rotbig", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	snprintf(path, sizeof(path), "%s/rows.csv", sub);
	assert_int_equal(csv_open(path, &c), 0);
	csv_set_rotation(c, 100, 1, NULL, NULL);
	csv_str(c, "window");
	csv_str(c, "key");
	csv_end_row(c);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	csv_u64(c, 1);
	csv_str(c, big);
	csv_end_row(c);
	csv_u64(c, 2);
	csv_str(c, big);
	csv_end_row(c);
	rows_into(c, 3, 4);
	assert_int_equal(csv_commit(c), 0);
	csv_get_stats(c, &st);
	csv_free(c);
	assert_int_equal(st.rotations, 2);
	assert_int_equal(st.rows, 4);
	assert_int_equal(st.files_dropped, 1);
	assert_int_equal(st.rows_dropped, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(csv_quote__hostile_names__rfc4180),
		cmocka_unit_test(csv_commit__rows__file_appears_whole),
		cmocka_unit_test(csv_commit__existing_target__replaced_only_at_commit),
		cmocka_unit_test(csv_commit__keep_earlier_run__moved_up_not_replaced),
		cmocka_unit_test(csv_abort__temporary_file__removed),
		cmocka_unit_test(csv_open__missing_directory__enoent),
		cmocka_unit_test(csv_str__long_field__written_whole),
		cmocka_unit_test(csv_quote__formula_cells__neutralised),
		cmocka_unit_test(csv_open__any_umask__file_0600_and_cloexec),
		cmocka_unit_test(csv_flush__enospc_mid_row__rows_before_kept_rest_counted_lost),
		cmocka_unit_test(csv_flush__error_met_by_end_row__returned_once),
		cmocka_unit_test(csv_commit__eio_on_first_flush__target_has_what_was_written),
		cmocka_unit_test(csv_orphans__killed_run_and_live_daemon__only_the_dead_reported),
		cmocka_unit_test(csv_new_mem__rows__to_row_fn_escaped),
		cmocka_unit_test(csv_set_rotation__past_bound__files_move_up_rows_counted),
		cmocka_unit_test(csv_set_rotation__row_past_bound__a_file_of_its_own),
	};

	return cmocka_run_group_tests_name("csv", tests, setup, teardown);
}
