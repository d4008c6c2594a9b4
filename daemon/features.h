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
	/* the row: its window's counts (r->s) and the evidence its key's
	 * history gave it (struct wrow, window.h); read, not copied */
	const struct wrow *r;
	/* what the features derive from it */
	double window_s;		/* length of the window */
	bool family;			/* the key is a family of young processes */
	uint64_t ops;			/* allocs + frees, or page adds + deletes */
	double free_ratio;		/* frees / allocs (1 with no allocs) */
	uint32_t sample;		/* slab: each tracked object stood for this many
					 * (the rules' minimum counts of objects are
					 * of tracked ones: times this) */
	double refault_share;		/* refault pages / page adds */
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
