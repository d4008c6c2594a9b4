// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Memory pressure stall information, read and kept (psi.h).  A ring of
 * (time, some total) samples a source; a span's stall share is the rise
 * of the total between the first and the last sample inside it, over the
 * time between them.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "psi.h"

int psi_parse(const char *text, uint64_t *some_us, uint64_t *full_us)
{
	const char *some = strstr(text, "some "), *full = strstr(text, "full "), *t;

	if (!some || (some != text && some[-1] != '\n'))
		return -EINVAL;
	t = strstr(some, "total=");
	if (!t || (full && t > full) || sscanf(t, "total=%" SCNu64, some_us) != 1)
		return -EINVAL;
	*full_us = 0;
	if (full && (t = strstr(full, "total=")))
		sscanf(t, "total=%" SCNu64, full_us);
	return 0;
}

int psi_read(const char *path, uint64_t *some_us, uint64_t *full_us)
{
	char buf[512];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return psi_parse(buf, some_us, full_us);
}

int psi_cgroup2_root(const char *mountinfo, char *buf, size_t n)
{
	char line[1024], point[512], type[64];
	FILE *f = fopen(mountinfo, "re");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (err && fgets(line, sizeof(line), f)) {
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*s %*s %*s %*s %511s", point) != 1 ||
		    sscanf(dash + 3, "%63s", type) != 1 || strcmp(type, "cgroup2"))
			continue;
		snprintf(buf, n, "%s", point);
		err = 0;
	}
	fclose(f);
	return err;
}

static struct psi_source *find(const struct psi_track *t, const char *path)
{
	unsigned int i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->src[i]->path, path))
			return t->src[i];
	return NULL;
}

void psi_track_note(struct psi_track *t, const char *path, uint64_t at_ns, uint64_t some_us)
{
	struct psi_source *s = find(t, path);
	unsigned int i;

	if (!s) {
		if (t->n == PSI_SOURCES || strlen(path) >= sizeof(s->path))
			return;
		s = calloc(1, sizeof(*s));
		if (!s)
			return;
		snprintf(s->path, sizeof(s->path), "%s", path);
		s->last_used_ns = at_ns;
		t->src[t->n++] = s;
	}
	/* the oldest go past the kept time or the ring's size */
	while (s->n && (s->n == PSI_SAMPLES ||
			s->s[s->head].at_ns + PSI_KEEP_NS < at_ns)) {
		s->head = (s->head + 1) % PSI_SAMPLES;
		s->n--;
	}
	i = (s->head + s->n) % PSI_SAMPLES;
	if (s->n && at_ns <= s->s[(i + PSI_SAMPLES - 1) % PSI_SAMPLES].at_ns)
		return;		/* time runs forward only */
	s->s[i].at_ns = at_ns;
	s->s[i].some_us = some_us;
	s->n++;
}

int psi_track_share(const struct psi_track *t, const char *path, uint64_t from_ns,
		    uint64_t to_ns, uint64_t min_span_ns, double *share)
{
	struct psi_source *s = find(t, path);
	int first = -1, last = -1;
	unsigned int k;

	if (!s)
		return -ENOENT;
	s->last_used_ns = to_ns > s->last_used_ns ? to_ns : s->last_used_ns;
	for (k = 0; k < s->n; k++) {
		unsigned int i = (s->head + k) % PSI_SAMPLES;

		if (s->s[i].at_ns < from_ns || s->s[i].at_ns > to_ns)
			continue;
		if (first < 0)
			first = (int)i;
		last = (int)i;
	}
	if (first < 0 || first == last || s->s[last].at_ns - s->s[first].at_ns < min_span_ns)
		return -ENOENT;
	*share = (double)(s->s[last].some_us - s->s[first].some_us) * 1000.0 /
		 (double)(s->s[last].at_ns - s->s[first].at_ns);
	if (*share < 0)
		*share = 0;
	if (*share > 1)
		*share = 1;
	return 0;
}

void psi_track_gc(struct psi_track *t, uint64_t older_ns)
{
	unsigned int i, n = 0;

	for (i = 0; i < t->n; i++) {
		if (t->src[i]->last_used_ns < older_ns && i) {	/* the first: the system's */
			free(t->src[i]);
			continue;
		}
		t->src[n++] = t->src[i];
	}
	t->n = n;
}

void psi_track_release(struct psi_track *t)
{
	unsigned int i;

	for (i = 0; i < t->n; i++)
		free(t->src[i]);
	memset(t, 0, sizeof(*t));
}
