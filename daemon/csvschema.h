/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The export CSV's schema, apart from its writer (rowcsv.c) so that a
 * reader links the list and nothing else.
 */
#ifndef CS_CSVSCHEMA_H
#define CS_CSVSCHEMA_H

#include <stdbool.h>

/* The CSV's columns, in the order of the file: the one list of them.  The
 * writer writes every row in this order (rowcsv_row), the readers look the
 * columns up by these names (tools/offline.c), and docs/csv.md lists them
 * (test_rowcsv compares the two).  Columns added later go at the end, so a
 * reader of an older layout finds its columns where they were. */
enum csv_col {
	COL_TS, COL_WINDOW, COL_WINDOW_MS, COL_DOMAIN, COL_KEY, COL_FILE, COL_TGID,
	COL_COMM, COL_SCOPE, COL_ALLOCS, COL_FREES, COL_BYTES_REQ, COL_BYTES_ALLOC,
	COL_BYTES_FREED, COL_LIVE_OBJS, COL_LIVE_BYTES, COL_LIFETIME_P50_NS,
	COL_SAME_CPU_FREES, COL_REMOTE_FREES, COL_CROSS_NUMA, COL_SIZE_ENTROPY,
	COL_SAME_SIZE_SHARE, COL_TOP_SITE_SHARE, COL_PAGE_ADDS, COL_PAGE_DELS,
	COL_REFAULTS, COL_REFAULT_PAGES, COL_REFAULT_DIST_P50, COL_OPS_PER_S,
	COL_F_FREQ, COL_F_HOT, COL_F_ENTROPY, COL_F_LOCALITY, COL_F_NUMA,
	COL_GROWTH_PER_S, COL_GREW_WINDOWS, COL_FREE_RATIO, COL_REFAULT_SHARE,
	COL_CLUSTER, COL_LABEL, COL_REASON, COL_GPU_KERNELS, COL_GPU_KERNEL_NS,
	COL_GPU_COPY_IN_BYTES, COL_GPU_COPY_OUT_BYTES, COL_TGID_GPU_KERNEL_NS,
	COL_TGID_GPU_KV_KERNEL_NS, COL_TGID_GPU_COPY_BYTES, COL_UNSEEN_FREES,
	COL_REPEAT_PAGES, COL_OLD_OBJS, COL_AGE_MS, COL_HOT_SITE, COL_KEY_KIND,
	COL_WINDOW_DROPS, COL_SAMPLE, COL_HOST, COL_CGROUP, COL_CONTAINER,
	COL_OWN_REMOTE_FREES, COL_STACK, CSV_COLS,
};

struct csv_column {
	const char *name;
	/* a reader needs it, and every file since the first layout has it; a
	 * column added later may be missing from an older file */
	bool required;
};

extern const struct csv_column csv_schema[CSV_COLS];

#endif
