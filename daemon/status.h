/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The status line of --interval: one line on stderr every so often while
 * the daemon runs, saying what it has seen so far, and the line that
 * echoes each phase kvref starts under --workload.  Formatting only: the
 * daemon gathers the numbers and prints the line.
 */
#ifndef CS_STATUS_H
#define CS_STATUS_H

#include <stddef.h>
#include <stdint.h>
#include "analysis.h"
#include "classify.h"

/* the newest labels a line names at most */
#define STATUS_NEWEST 3

struct status {
	double uptime_s;
	uint64_t events;		/* produced by the programs so far */
	double events_per_s;		/* since the line before; < 0: none before */
	uint64_t dropped;		/* rings full, so far */
	uint64_t keys;			/* tracked now */
	uint64_t anomalous[LABEL_COUNT];	/* keys whose newest recent vector
						 * has the label (NORMAL unused) */
};

/*
 * The newest anomalous vectors of v[0..n) (oldest first) from window
 * from_window on, newest first, each key once: at most max of them are
 * pointed to from out.  O(n * max).  Returns how many.
 */
size_t status_newest(const struct vec_entry *v, size_t n, uint64_t from_window,
		     const struct vec_entry **out, size_t max);

/*
 * One status line, without a newline, into buf:
 *   12.0 s: 120345 events (10234/s), 0 dropped, 45 keys, 2 anomalous
 *   (thrash 1, leak 1); newest anomalies: leak filp (kvref),
 *   thrash kvref-swap (kvref)
 * Names are escaped for a terminal.  Returns the length, or -ENOSPC when
 * the line was cut to fit size (it is still a line).
 */
int status_format(char *buf, size_t size, const struct status *st,
		  const struct vec_entry *const *newest, size_t nnewest);

/*
 * The echo of a phase kvref started at at_s seconds into the run:
 *   workload: phase leak starts at 12.3 s
 * Its name is kvref's, escaped.  Returns the length or -ENOSPC (cut).
 */
int status_phase(char *buf, size_t size, const char *phase, double at_s);

#endif
