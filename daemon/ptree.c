// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The descendants of some processes, from /proc.  One walk reads every
 * process's parent into an array of (ppid, pid) pairs, sorted by ppid; the
 * descendants are then a breadth-first search from the roots, each step a
 * binary search for the children of one process.  /proc lists thread-group
 * leaders only, and a stat's ppid is the parent's process (a child forked
 * by a thread has its process as parent), so threads never appear.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ptree.h"

int ptree_parse_stat(const char *line, pid_t *ppid)
{
	const char *p = strrchr(line, ')');	/* comm ends at the last one */
	long v;
	char st;

	if (!p || sscanf(p + 1, " %c %ld", &st, &v) != 2 || v < 0)
		return -EINVAL;
	*ppid = (pid_t)v;
	return 0;
}

struct pair {
	pid_t ppid, pid;
};

static int by_ppid(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	return (x->ppid > y->ppid) - (x->ppid < y->ppid);
}

static int read_ppid(const char *proc, const char *pid, pid_t *ppid)
{
	char path[300], line[512];
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "%s/%s/stat", proc, pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	err = fgets(line, sizeof(line), f) ? ptree_parse_stat(line, ppid) : -EINVAL;
	fclose(f);
	return err;
}

/* Every (ppid, pid) under proc, sorted by ppid. */
static int read_pairs(const char *proc, struct pair **out, size_t *n)
{
	struct pair *v = NULL, *nv;
	size_t len = 0, cap = 0;
	struct dirent *de;
	DIR *d = opendir(proc);
	pid_t ppid;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (read_ppid(proc, de->d_name, &ppid))
			continue;	/* exited meanwhile */
		if (len == cap) {
			cap = cap ? cap * 2 : 256;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
		}
		v[len].ppid = ppid;
		v[len].pid = (pid_t)atol(de->d_name);
		len++;
	}
	closedir(d);
	if (len)
		qsort(v, len, sizeof(*v), by_ppid);
	*out = v;
	*n = len;
	return 0;
}

/* The first pair whose ppid is parent, or len. */
static size_t first_child(const struct pair *v, size_t len, pid_t parent)
{
	size_t lo = 0, hi = len;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].ppid < parent)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int ptree_descendants(const char *proc, const pid_t *roots, size_t nroots,
		      pid_t **out, size_t *n)
{
	size_t len = 0, i, head = 0, tail = 0, k;
	struct pair *v = NULL;
	pid_t *q;
	int err;

	err = read_pairs(proc, &v, &len);
	if (err)
		return err;
	/* the queue holds roots then descendants: each pid at most once,
	 * since a process has one parent (pid 0's children, when 0 is a
	 * root, include 1 and 2, whose ppid is 0) */
	q = malloc((nroots + len + 1) * sizeof(*q));
	if (!q) {
		free(v);
		return -ENOMEM;
	}
	for (i = 0; i < nroots; i++) {
		for (k = 0; k < tail && q[k] != roots[i]; k++)
			;
		if (k == tail)
			q[tail++] = roots[i];
	}
	head = 0;
	while (head < tail) {
		pid_t p = q[head++];

		for (k = first_child(v, len, p); k < len && v[k].ppid == p; k++) {
			size_t j;

			/* a root below another root is queued already */
			for (j = 0; j < nroots && roots[j] != v[k].pid; j++)
				;
			if (j == nroots && v[k].pid != p)
				q[tail++] = v[k].pid;
		}
	}
	free(v);
	/* drop the roots at the front */
	for (i = 0, k = 0; i < tail; i++) {
		size_t j;

		for (j = 0; j < nroots && roots[j] != q[i]; j++)
			;
		if (j == nroots)
			q[k++] = q[i];
	}
	if (!k) {
		free(q);
		q = NULL;
	}
	*out = q;
	*n = k;
	return 0;
}

bool ptree_alive(const char *proc, pid_t pid)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/%d", proc, (int)pid);
	return !access(path, F_OK) || errno != ENOENT;
}
