// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CSV writer.  A row is assembled in memory and written whole, so whatever
 * reaches the temporary file is a sequence of complete rows; the file takes
 * the target's name only at commit (fsync, rename, fsync of the directory).
 */
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

struct csv {
	FILE *f;
	char *path;
	char *tmp;
	char *row;
	size_t len, cap;
	bool first;	/* no field yet in this row */
	int err;	/* first write error, -errno */
};

int csv_open(const char *path, struct csv **out)
{
	struct csv *c;
	int fd, err;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->first = true;
	c->path = strdup(path);
	if (!c->path || asprintf(&c->tmp, "%s.tmp.XXXXXX", path) < 0) {
		c->tmp = NULL;
		err = -ENOMEM;
		goto fail;
	}
	fd = mkstemp(c->tmp);
	if (fd < 0) {
		err = -errno;
		free(c->tmp);
		c->tmp = NULL;
		goto fail;
	}
	fchmod(fd, 0644);
	c->f = fdopen(fd, "w");
	if (!c->f) {
		err = -errno;
		close(fd);
		goto fail;
	}
	*out = c;
	return 0;
fail:
	if (c->tmp)
		unlink(c->tmp);
	free(c->tmp);
	free(c->path);
	free(c);
	return err;
}

static void row_put(struct csv *c, const char *s, size_t n)
{
	if (c->len + n + 1 > c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 512;
		char *row;

		while (cap < c->len + n + 1)
			cap *= 2;
		row = realloc(c->row, cap);
		if (!row) {
			if (!c->err)
				c->err = -ENOMEM;
			return;
		}
		c->row = row;
		c->cap = cap;
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

size_t csv_quote(char *buf, size_t n, const char *s)
{
	size_t need = 0;
	bool q = needs_quotes(s);

#define PUT(ch) do { if (need + 1 < n) buf[need] = (ch); need++; } while (0)
	if (q)
		PUT('"');
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
	char small[256], *buf = small;
	size_t need;

	field_sep(c);
	need = csv_quote(small, sizeof(small), s);
	if (need >= sizeof(small)) {
		buf = malloc(need + 1);
		if (!buf) {
			if (!c->err)
				c->err = -ENOMEM;
			return;
		}
		csv_quote(buf, need + 1, s);
	}
	row_put(c, buf, need);
	if (buf != small)
		free(buf);
}

void csv_u64(struct csv *c, uint64_t v)
{
	char buf[24];

	field_sep(c);
	row_put(c, buf, snprintf(buf, sizeof(buf), "%" PRIu64, v));
}

void csv_i64(struct csv *c, int64_t v)
{
	char buf[24];

	field_sep(c);
	row_put(c, buf, snprintf(buf, sizeof(buf), "%" PRId64, v));
}

void csv_dbl(struct csv *c, double v, int decimals)
{
	char buf[64];

	field_sep(c);
	row_put(c, buf, snprintf(buf, sizeof(buf), "%.*f", decimals, v));
}

void csv_end_row(struct csv *c)
{
	row_put(c, "\n", 1);
	if (!c->err && fwrite(c->row, 1, c->len, c->f) != c->len)
		c->err = -errno ? -errno : -EIO;
	c->len = 0;
	c->first = true;
}

int csv_flush(struct csv *c)
{
	if (!c->err && fflush(c->f))
		c->err = -errno;
	return c->err;
}

static void csv_free(struct csv *c)
{
	free(c->row);
	free(c->tmp);
	free(c->path);
	free(c);
}

int csv_commit(struct csv *c)
{
	char *dir;
	int err, dfd;

	err = csv_flush(c);
	if (!err && fsync(fileno(c->f)))
		err = -errno;
	if (fclose(c->f) && !err)
		err = -errno;
	if (!err && rename(c->tmp, c->path))
		err = -errno;
	if (err) {
		unlink(c->tmp);
		csv_free(c);
		return err;
	}
	dir = strdup(c->path);
	if (dir) {
		dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			fsync(dfd);
			close(dfd);
		}
		free(dir);
	}
	csv_free(c);
	return 0;
}

void csv_abort(struct csv *c)
{
	if (!c)
		return;
	fclose(c->f);
	unlink(c->tmp);
	csv_free(c);
}
