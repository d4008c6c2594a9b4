// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The --interval status line and kvref's phase echo.  The line is built
 * piece by piece into one buffer with a cursor that stops at its end, so
 * a long line is cut, never overrun; what processes named (a key, a comm,
 * a phase) is escaped first, as every name the daemon shows a terminal.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "status.h"
#include "strutil.h"

struct cursor {
	char *buf;
	size_t size, len;
	bool cut;
};

static void put(struct cursor *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct cursor *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (c->cut)
		return;
	va_start(ap, fmt);
	n = vsnprintf(c->buf + c->len, c->size - c->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= c->size - c->len) {
		c->len = c->size - 1;
		c->cut = true;
		return;
	}
	c->len += n;
}

static bool same_key(const struct wkey *x, const struct wkey *y)
{
	return x->domain == y->domain && x->id == y->id && x->tgid == y->tgid &&
	       x->dev == y->dev && x->gen == y->gen;
}

size_t status_newest(const struct vec_entry *v, size_t n, uint64_t from_window,
		     const struct vec_entry **out, size_t max)
{
	size_t i, j, m = 0;

	for (i = n; i-- > 0 && v[i].window >= from_window && m < max;) {
		if (v[i].label == LABEL_NORMAL || v[i].label >= LABEL_COUNT)
			continue;
		for (j = 0; j < m && !same_key(&out[j]->key, &v[i].key); j++)
			;
		if (j == m)	/* a key once, at its newest anomaly */
			out[m++] = &v[i];
	}
	return m;
}

int status_format(char *buf, size_t size, const struct status *st,
		  const struct vec_entry *const *newest, size_t nnewest)
{
	struct cursor c = { buf, size, 0, false };
	uint64_t anomalous = 0;
	unsigned int l;
	size_t i;

	if (!size)
		return -ENOSPC;
	buf[0] = '\0';
	for (l = LABEL_NORMAL + 1; l < LABEL_COUNT; l++)
		anomalous += st->anomalous[l];
	put(&c, "%.1f s: %" PRIu64 " events", st->uptime_s, st->events);
	if (st->events_per_s >= 0)
		put(&c, " (%.0f/s)", st->events_per_s);
	put(&c, ", %" PRIu64 " dropped, %" PRIu64 " keys, %" PRIu64 " anomalous", st->dropped,
	    st->keys, anomalous);
	if (anomalous) {
		const char *sep = " (";

		for (l = LABEL_NORMAL + 1; l < LABEL_COUNT; l++) {
			if (!st->anomalous[l])
				continue;
			put(&c, "%s%s %" PRIu64, sep, label_name(l), st->anomalous[l]);
			sep = ", ";
		}
		put(&c, ")");
	}
	for (i = 0; i < nnewest; i++) {
		char name[STR_ESC_SIZE(sizeof(newest[i]->name))];
		char comm[STR_ESC_SIZE(sizeof(newest[i]->comm))];

		put(&c, "%s%s %s", i ? ", " : "; newest anomalies: ", label_name(newest[i]->label),
		    str_escape_mem(name, sizeof(name), newest[i]->name,
				   strnlen(newest[i]->name, sizeof(newest[i]->name)), 0));
		if (newest[i]->comm[0])
			put(&c, " (%s)", str_escape_mem(comm, sizeof(comm), newest[i]->comm,
						       strnlen(newest[i]->comm,
							       sizeof(newest[i]->comm)), 0));
	}
	return c.cut ? -ENOSPC : (int)c.len;
}

int status_phase(char *buf, size_t size, const char *phase, double at_s)
{
	char safe[STR_ESC_SIZE(64)];
	int n;

	if (!size)
		return -ENOSPC;
	n = snprintf(buf, size, "workload: phase %s starts at %.1f s",
		     str_escape_mem(safe, sizeof(safe), phase, strnlen(phase, 64), 0), at_s);
	return n < 0 || (size_t)n >= size ? -ENOSPC : n;
}
