// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CSV writer.  A row is assembled in memory and appended whole to a buffer
 * of complete rows that write(2) pushes to the temporary file, so whatever
 * stays in the file is a sequence of complete rows: when a write fails
 * (disk full, I/O error) the partial row it left is cut off again, the
 * file keeps every row before it, and the rows after are counted as lost
 * instead of being written, so that the run's other outputs go on and the
 * file still takes the target's name at commit (fsync, rename, fsync of
 * the directory).
 *
 * The file holds every process's comm and file names: it is 0600 from its
 * creation (mkostemp) and stays so, and O_CLOEXEC so that kvref and other
 * children do not inherit it.  Its name carries our pid, so that the
 * temporary file of a killed run can be told from a live daemon's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "csv.h"
#include "strutil.h"

/* complete rows are written once this many bytes wait */
#define CSV_BUF_BYTES 65536

struct csv {
	int fd;
	char *path;
	char *tmp;
	char *row;		/* the row being built */
	size_t len, cap;
	bool row_bad;		/* no memory for part of it */
	char *buf;		/* complete rows not yet written */
	size_t blen, bcap, brows;
	off_t off;		/* bytes of complete rows in the file */
	bool first;		/* no field yet in this row */
	bool said;		/* csv_flush returned the error */
	void (*row_fn)(const char *row, size_t len, void *ctx);
	void *row_ctx;
	struct csv_stats st;
	/* the bound: files committed at max_bytes, keep older ones kept */
	uint64_t max_bytes;
	int keep;
	int (*rotate)(void *ctx, int *fd);
	void *rot_ctx;
	char *header;		/* the first row, begins every file */
	size_t hlen;
	/* rows (but the header) of the file being written ([0]), of <path>
	 * ([1]) and of <path>.i ([i + 1]), as far as this run wrote them */
	uint64_t seg_rows[CSV_KEEP_MAX + 2];
};

int csv_open(const char *path, struct csv **out)
{
	struct csv *c;
	int err;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->fd = -1;
	c->first = true;
	c->path = strdup(path);
	if (!c->path || asprintf(&c->tmp, "%s.tmp.%ld.XXXXXX", path, (long)getpid()) < 0) {
		c->tmp = NULL;
		err = -ENOMEM;
		goto fail;
	}
	/* mkostemp: O_EXCL, mode 0600 */
	c->fd = mkostemp(c->tmp, O_CLOEXEC);
	if (c->fd < 0) {
		err = -errno;
		goto fail;
	}
	*out = c;
	return 0;
fail:
	free(c->tmp);
	free(c->path);
	free(c);
	return err;
}

int csv_new_mem(struct csv **out)
{
	struct csv *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->fd = -1;
	c->first = true;
	*out = c;
	return 0;
}

void csv_set_row_fn(struct csv *c, void (*fn)(const char *row, size_t len, void *ctx),
		    void *ctx)
{
	c->row_fn = fn;
	c->row_ctx = ctx;
}

static bool grow(char **p, size_t *cap, size_t need)
{
	size_t n = *cap ? *cap : 512;
	char *q;

	if (need <= *cap)
		return true;
	while (n < need)
		n *= 2;
	q = realloc(*p, n);
	if (!q)
		return false;
	*p = q;
	*cap = n;
	return true;
}

static void row_put(struct csv *c, const char *s, size_t n)
{
	if (!grow(&c->row, &c->cap, c->len + n + 1)) {
		c->row_bad = true;
		return;
	}
	memcpy(c->row + c->len, s, n);
	c->len += n;
}

static void field_sep(struct csv *c)
{
	if (!c->first)
		row_put(c, ",", 1);
	c->first = false;
}

static bool needs_quotes(const char *s)
{
	size_t n = strlen(s);

	if (!n)
		return false;
	if (s[0] == ' ' || s[0] == '\t' || s[n - 1] == ' ' || s[n - 1] == '\t')
		return true;
	return strpbrk(s, ",\"\r\n") != NULL;
}

/* What a spreadsheet would evaluate (OWASP, CSV injection): a cell that
 * starts with one of = + - @ tab CR, also after the spaces and quotes
 * a spreadsheet skips before it looks ("  =cmd|...", "\"=1+1"). */
static bool looks_like_formula(const char *s)
{
	while (*s == ' ' || *s == '"')
		s++;
	return *s && strchr("=+-@\t\r", *s);
}

size_t csv_quote(char *buf, size_t n, const char *s)
{
	size_t need = 0;
	bool q = needs_quotes(s);

#define PUT(ch) do { if (need + 1 < n) buf[need] = (ch); need++; } while (0)
	if (q)
		PUT('"');
	if (looks_like_formula(s))
		PUT('\'');
	for (; *s; s++) {
		if (*s == '"')
			PUT('"');
		PUT(*s);
	}
	if (q)
		PUT('"');
#undef PUT
	if (n)
		buf[need < n ? need : n - 1] = '\0';
	return need;
}

void csv_str(struct csv *c, const char *s)
{
	char small[256], esc_small[512], *buf = small, *esc = esc_small;
	size_t need, en = STR_ESC_SIZE(strlen(s));

	field_sep(c);
	/* the names of other processes: escaped as in text and JSON (strutil.h) */
	if (en > sizeof(esc_small)) {
		esc = malloc(en);
		if (!esc) {
			c->row_bad = true;
			return;
		}
	}
	str_escape(esc, en < sizeof(esc_small) ? sizeof(esc_small) : en, s, 0);
	need = csv_quote(small, sizeof(small), esc);
	if (need >= sizeof(small)) {
		buf = malloc(need + 1);
		if (!buf) {
			c->row_bad = true;
			goto out;
		}
		csv_quote(buf, need + 1, esc);
	}
	row_put(c, buf, need);
	if (buf != small)
		free(buf);
out:
	if (esc != esc_small)
		free(esc);
}

/* v in decimal, written backwards from end; returns where it starts.  Half
 * a row's fields are counts: a tenth of the daemon's CPU under a server's
 * load went to snprintf's formatting of them. */
static char *u64_dec(char *end, uint64_t v)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

void csv_u64(struct csv *c, uint64_t v)
{
	char buf[24], *p = u64_dec(buf + sizeof(buf), v);

	field_sep(c);
	row_put(c, p, (size_t)(buf + sizeof(buf) - p));
}

void csv_i64(struct csv *c, int64_t v)
{
	char buf[24], *p = u64_dec(buf + sizeof(buf), v < 0 ? -(uint64_t)v : (uint64_t)v);

	if (v < 0)
		*--p = '-';
	field_sep(c);
	row_put(c, p, (size_t)(buf + sizeof(buf) - p));
}

void csv_dbl(struct csv *c, double v, int decimals)
{
	char buf[64];

	field_sep(c);
	row_put(c, buf, snprintf(buf, sizeof(buf), "%.*f", decimals, v));
}

/* Write the buffered rows.  On the first failure, cut the file back to
 * its last complete row and count the rest as lost. */
static void buf_write(struct csv *c)
{
	size_t done = 0, keep, i, rows = 0;
	ssize_t n;

	while (done < c->blen && !c->st.err) {
		n = write(c->fd, c->buf + done, c->blen - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			c->st.err = n < 0 ? -errno : -EIO;
		else
			done += n;
	}
	if (c->st.err) {
		for (keep = done; keep && c->buf[keep - 1] != '\n'; keep--)
			;
		for (i = 0; i < keep; i++)
			rows += c->buf[i] == '\n';
		if (keep != done) {
			/* best effort: a reader then sees whole rows only */
			if (ftruncate(c->fd, c->off + keep) == 0)
				lseek(c->fd, c->off + keep, SEEK_SET);
		}
		c->off += keep;
		c->st.rows += rows;
		c->st.lost += c->brows - rows;
	} else {
		c->off += c->blen;
		c->st.rows += c->brows;
	}
	c->blen = c->brows = 0;
}

static void rotate_now(struct csv *c);

void csv_end_row(struct csv *c)
{
	row_put(c, "\n", 1);
	if (c->max_bytes && c->fd >= 0 && !c->row_bad) {
		if (!c->header) {	/* the first row: every file's header */
			c->header = malloc(c->len);
			if (c->header) {
				memcpy(c->header, c->row, c->len);
				c->hlen = c->len;
			}
		} else {
			/* a file holds a row at least, however long */
			if ((uint64_t)c->off + c->blen + c->len > c->max_bytes &&
			    c->seg_rows[0] && !c->st.err)
				rotate_now(c);
			c->seg_rows[0]++;
		}
	}
	if (c->row_fn && !c->row_bad)
		c->row_fn(c->row, c->len, c->row_ctx);
	if (c->fd < 0) {
		/* no file: the row function had it */
		if (!c->row_bad)
			c->st.rows++;
	} else if (c->row_bad || c->st.err || !grow(&c->buf, &c->bcap, c->blen + c->len)) {
		c->st.lost++;
	} else {
		memcpy(c->buf + c->blen, c->row, c->len);
		c->blen += c->len;
		c->brows++;
		if (c->blen >= CSV_BUF_BYTES)
			buf_write(c);
	}
	c->len = 0;
	c->row_bad = false;
	c->first = true;
}

static void sync_dir(const char *path)
{
	char *dir = strdup(path);
	int dfd;

	if (!dir)
		return;
	dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	free(dir);
}

int csv_shift_files(const char *path, const char *tmp, int keep, bool *dropped)
{
	char from[4200], to[4200];
	int i;

	*dropped = false;
	if (keep > 0) {
		snprintf(to, sizeof(to), "%s.%d", path, keep);
		if (!unlink(to))
			*dropped = true;
		else if (errno != ENOENT)
			return -errno;
		for (i = keep - 1; i >= 0; i--) {
			if (i)
				snprintf(from, sizeof(from), "%s.%d", path, i);
			else
				snprintf(from, sizeof(from), "%s", path);
			snprintf(to, sizeof(to), "%s.%d", path, i + 1);
			if (rename(from, to) && errno != ENOENT)
				return -errno;
		}
	} else if (!access(path, F_OK)) {
		*dropped = true;
	}
	if (rename(tmp, path))
		return -errno;
	sync_dir(path);
	return 0;
}

static int rotate_here(struct csv *c, int *fd)
{
	bool dropped;
	int err = csv_shift_files(c->path, c->tmp, c->keep, &dropped);

	if (err)
		return err;
	*fd = open(c->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	return *fd < 0 ? -errno : 0;
}

/* The oldest file went at a shift: what it held, where this run wrote it
 * (an earlier run's file counts nothing). */
static void count_dropped(struct csv *c)
{
	uint64_t rows = c->seg_rows[c->keep + 1];

	if (rows) {
		c->st.files_dropped++;
		c->st.rows_dropped += rows;
	}
}

/* The file so far committed, a new one begun with the header.  A failure
 * is the file's write error: later rows are counted as lost. */
static void rotate_now(struct csv *c)
{
	int fd = -1, err, i, last = c->keep + 1;
	size_t done;

	buf_write(c);
	if (c->st.err)
		return;
	if (fsync(c->fd)) {
		c->st.err = -errno;
		return;
	}
	err = c->rotate ? c->rotate(c->rot_ctx, &fd) : -ENOSYS;
	if (err == -ENOSYS)	/* not another's to do */
		err = rotate_here(c, &fd);
	if (err || fd < 0) {
		c->st.err = err ? err : -EIO;
		return;
	}
	close(c->fd);
	c->fd = fd;
	c->off = 0;
	c->st.rotations++;
	count_dropped(c);
	for (i = last; i > 0; i--)
		c->seg_rows[i] = c->seg_rows[i - 1];
	c->seg_rows[0] = 0;
	/* the header again, not counted as a row */
	for (done = 0; done < c->hlen;) {
		ssize_t n = write(c->fd, c->header + done, c->hlen - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			c->st.err = n < 0 ? -errno : -EIO;
			return;
		}
		done += n;
	}
	c->off = c->hlen;
}

void csv_set_rotation(struct csv *c, uint64_t max_bytes, int keep,
		      int (*rotate)(void *ctx, int *fd), void *ctx)
{
	c->max_bytes = max_bytes;
	c->keep = keep < 0 ? 0 : keep > CSV_KEEP_MAX ? CSV_KEEP_MAX : keep;
	c->rotate = rotate;
	c->rot_ctx = ctx;
}

int csv_flush(struct csv *c)
{
	if (c->fd >= 0 && c->blen)
		buf_write(c);
	/* the error may have come from csv_end_row's write: said here, once */
	if (!c->st.err || c->said)
		return 0;
	c->said = true;
	return c->st.err;
}

void csv_get_stats(const struct csv *c, struct csv_stats *st)
{
	*st = c->st;
}

const char *csv_tmp_path(const struct csv *c)
{
	return c->tmp;
}

int csv_commit_by(struct csv *c, int (*move)(void *ctx), void *ctx)
{
	bool dropped;
	int r;

	csv_flush(c);
	/* a failed fsync is a write error too: what it lost is unknown */
	if (fsync(c->fd) && !c->st.err)
		c->st.err = -errno;
	/* the older files move up, an earlier run's too (a service's CSV
	 * outlives a restart); with keep 0 the file replaces the target */
	if (move) {
		r = move(ctx);
	} else {
		r = csv_shift_files(c->path, c->tmp, c->keep, &dropped);
		if (!r)
			r = dropped;
	}
	if (r > 0)
		count_dropped(c);
	return r < 0 ? r : 0;
}

int csv_commit(struct csv *c)
{
	return csv_commit_by(c, NULL, NULL);
}

void csv_free(struct csv *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
	free(c->row);
	free(c->header);
	free(c->tmp);
	free(c->path);
	free(c);
}

void csv_abort(struct csv *c)
{
	if (!c)
		return;
	unlink(c->tmp);
	csv_free(c);
}

/* Whether process pid holds the file st open; true where we cannot tell. */
static bool held_by(long pid, const struct stat *st)
{
	char path[64], fd[340];
	struct dirent *e;
	struct stat fs;
	bool held = false;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%ld/fd", pid);
	d = opendir(path);
	if (!d)
		return errno != ENOENT;
	while (!held && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(fd, sizeof(fd), "%s/%s", path, e->d_name);
		held = !stat(fd, &fs) && fs.st_dev == st->st_dev && fs.st_ino == st->st_ino;
	}
	closedir(d);
	return held;
}

/* NAME.tmp.PID.XXXXXX: the pid, or 0 where name is not of that form. */
static long tmp_pid(const char *name)
{
	size_t n = strlen(name);
	const char *p, *dot;
	long pid = 0;

	if (n < 7 || name[n - 7] != '.')
		return 0;
	for (dot = name + n - 7, p = dot; p > name && p[-1] >= '0' && p[-1] <= '9'; p--)
		;
	if (p == dot || dot - p > 9 || p - name < 6 || strncmp(p - 5, ".tmp.", 5))
		return 0;
	for (; p < dot; p++)
		pid = pid * 10 + (*p - '0');
	return pid;
}

int csv_orphans(const char *path, void (*found)(const char *tmp, long pid, void *ctx),
		void *ctx)
{
	char *copy = strdup(path), full[4200];
	struct dirent *e;
	struct stat st;
	int n = 0, err = 0;
	const char *dir;
	DIR *d;
	long pid;

	if (!copy)
		return -ENOMEM;
	dir = dirname(copy);
	d = opendir(dir);
	if (!d) {
		err = -errno;
		goto cleanup;
	}
	while ((e = readdir(d))) {
		pid = tmp_pid(e->d_name);
		if (pid <= 0 || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid() || held_by(pid, &st))
			continue;
		snprintf(full, sizeof(full), "%s/%s", dir, e->d_name);
		found(full, pid, ctx);
		n++;
	}
	closedir(d);
cleanup:
	free(copy);
	return err ? err : n;
}
