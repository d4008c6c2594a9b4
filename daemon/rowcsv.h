/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The daemon's CSV rows: the header, and one row per closed window of a
 * key (window.h's struct wrow), with the key's vector (analysis.h) when it
 * had one.  The same text goes to the --csv file and to export's rows.
 * What a row needs from the daemon beyond the row itself comes in a small
 * context: clocks, names, the cgroup table.
 */
#ifndef CS_ROWCSV_H
#define CS_ROWCSV_H

#include <stdbool.h>
#include <stdint.h>
#include "csvschema.h"
#include "analysis.h"
#include "cgroup.h"
#include "csv.h"
#include "kstate.h"
#include "rows.h"
#include "stacks.h"
#include "window.h"

struct rowcsv_ctx {
	uint64_t real_off_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC, for ts */
	long window_ms;
	const char *host;	/* the host column */
	struct cgcache *cg;	/* cgroup and container columns; NULL: empty */
	struct ksyms *syms;	/* hot_site names; NULL: empty names */
	/* whether tgid is the workload the daemon drives (scope column);
	 * NULL: none is */
	bool (*is_workload)(uint32_t tgid, void *ctx);
	/* a leak row's stack column (kview's leak_stack); NULL: empty */
	int (*leak_stack)(void *ctx, uint32_t tgid, uint64_t cache, uint64_t age_ns,
			  struct stack_top *top);
	void *ctx;
	uint64_t window_drops;	/* records dropped in the row's window */
};

/* The number of columns of every row. */
unsigned int rowcsv_columns(void);
/* The header row. */
void rowcsv_header(struct csv *c);
/* One row: r, and v (NULL: the row had too little traffic for a vector,
 * its vector columns are empty).  Reads the cgroup table at the
 * CLOCK_MONOTONIC now.  A row that cannot be built is counted by the csv
 * (csv_get_stats). */
void rowcsv_row(struct csv *c, const struct rowcsv_ctx *x, const struct wrow *r,
		const struct vec_entry *v);

/* Keep in rows (rows_init done) the header and, from now on, every row
 * written to out: what 'cachescope export' answers.  0, or -ENOMEM. */
int rowcsv_keep(struct rows *rows, struct csv *out);

#endif
