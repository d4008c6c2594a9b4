/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The 5-D feature vector of one (window, key), and the evidence beside it.
 *
 * Every dimension is scaled to [0, 1] by a fixed range (see FEAT_* below and
 * DESIGN.md), so that one eps means the same on every host.
 */
#ifndef CS_FEATURES_H
#define CS_FEATURES_H

#include <stdbool.h>
#include <stdint.h>
#include "window.h"

#define FEAT_DIM 5

enum feat_dim {
	FEAT_FREQ,	/* operations per second, log-scaled */
	FEAT_HOT,	/* share from the busiest call site (page: 256 KiB region) */
	FEAT_ENTROPY,	/* size-distribution entropy, bits */
	FEAT_LOCALITY,	/* frees on the allocating CPU / frees */
	FEAT_NUMA,	/* cross-NUMA operations / operations */
};

/* Fixed scaling ranges. */
#define FEAT_FREQ_MAX_OPS_S	1e6	/* log10(1 + ops/s) / log10(1 + 1e6) */
#define FEAT_ENTROPY_MAX_BITS	8.0	/* 256 equally likely sizes */

/* A window with fewer operations than this yields no vector, unless it
 * refaulted: idle keys must not flood the clusters. */
#define FEAT_MIN_OPS		4
/* ... or while its old objects have been rising for this long (s) */
#define FEAT_MIN_RISE_S		1.0

struct evidence {
	double window_s;		/* length of the window */
	bool family;			/* the key is a family of young processes */
	uint64_t ops;			/* allocs + frees, or page adds + deletes */
	uint64_t allocs, frees;
	int64_t live_objs, live_bytes;
	double growth_per_s;
	uint32_t grew_windows;
	double free_ratio;		/* frees / allocs (1 with no allocs) */
	uint64_t lifetime_p50_ns;
	uint64_t key_lifetime_p50_ns;	/* over the key's recent history */
	uint64_t remote_frees;
	uint64_t unseen_frees;		/* frees no tracepoint reported (address reuse) */
	uint32_t sample;		/* slab: each tracked object stood for this many
					 * (the rules' minimum counts of objects are
					 * of tracked ones: times this) */
	double same_size_share;
	uint64_t top_site;		/* busiest call site (slab), 0 if none */
	/* the age test: live objects older than age_ns, and how much that old
	 * population rose over old_rise_s seconds without falling */
	uint64_t age_ns;
	int64_t old_objs, old_rise;
	/* tracked objects (records) behind old_rise; 0: not known (rows read
	 * back from CSV), then old_rise / sample stands for it */
	int64_t old_rise_tracked;
	double old_rise_s, old_quiet_s, old_warmup_s;
	uint32_t old_steps;
	int64_t old_max_step;
	double recent_locality;	/* over the key's last windows with frees */
	double recent_own_share;	/* of their remote frees: by the process's
					 * own threads */
	uint32_t recent_windows;
	uint64_t old_rise_allocs, old_rise_frees;
	bool old_rise_dropped;		/* records dropped since the rise began */
	uint64_t page_adds, page_dels;
	uint64_t refaults, refault_pages, repeat_pages;
	double refault_share;		/* refault pages / page adds */
	uint64_t refault_dist_p50;
	/* persistence: refaults of the recent windows */
	uint64_t recent_page_adds, recent_refault_pages, recent_repeat_pages;
	uint32_t refault_windows;
	double refault_span_s;
	double refault_quiet_s;		/* since the last window with refaults */
	/* the process's GPU work in the same window (the host-GPU join) */
	uint64_t gpu_kernel_ns, gpu_kv_kernel_ns, gpu_copy_bytes;
};

struct fvec {
	double v[FEAT_DIM];	/* scaled, each in [0, 1] */
	double raw[FEAT_DIM];	/* unscaled: ops/s, share, bits, ratio, ratio */
};

/* Derive vector and evidence from a closed row.  Returns false (and writes
 * nothing) when the row has too little traffic to be a vector. */
bool features_from_row(const struct wrow *r, uint64_t window_ns,
		       struct fvec *f, struct evidence *ev);

#endif
