/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The analysis stage: a sliding history of feature vectors, re-clustered
 * with DBSCAN every second, with cluster ids kept stable across runs and a
 * label (and its reason) for every vector and every cluster.
 */
#ifndef CS_ANALYSIS_H
#define CS_ANALYSIS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "classify.h"
#include "features.h"
#include "htab.h"

#define CLUSTER_NOISE (-1)

/* One vector of the history.  The evidence behind its label is made from
 * the row for the rules and not kept (a full history holds 16 384 vectors):
 * what the vector tables show of it is, and the rules' reason. */
struct vec_entry {
	uint64_t window;
	struct wkey key;
	char name[64];
	char comm[16];
	struct fvec f;
	double growth_per_s;	/* of the evidence (struct evidence) */
	double free_ratio;
	double refault_share;
	uint32_t grew_windows;
	enum cs_label label;
	const char *reason;	/* the label's, owned by the history ("" for none) */
	int cluster;		/* stable id, or CLUSTER_NOISE */
	uint8_t core;		/* a core point in the last run */
};

/* The longest reason the rules give (with its terminating 0). */
#define VEC_REASON_MAX 768

struct cluster_info {
	int id;
	enum cs_label label;
	unsigned int size;
	unsigned int counts[LABEL_COUNT];
	double centroid[FEAT_DIM];
	char keys[160];		/* busiest member keys */
	char reason[448];
};

/* How many vectors of one key carried each label. */
struct key_labels {
	struct wkey key;
	uint32_t counts[LABEL_COUNT];
};

struct analysis {
	struct vec_entry *v;	/* oldest first */
	size_t n, cap;
	struct rules rules;
	double eps;
	unsigned int min_pts;
	uint64_t history_windows;
	size_t history_max;	/* vectors kept at most (0: no limit) */
	uint64_t history_trimmed;	/* vectors dropped early for history_max */
	int next_id;
	struct cluster_info *clusters;
	size_t nclusters;
	unsigned int noise;	/* noise points in the last run */
	uint64_t runs;
	double last_run_ms;
	/* the last run's core points, sorted by grid cell (side eps), for
	 * placing new vectors; grid_ok false: a coordinate was out of the
	 * grid's range and new vectors are placed by a scan of the history */
	struct core_ref *cores;
	size_t ncores;
	bool grid_ok;
	struct kview kview;	/* the kernel's numbers for the rules (may be empty) */
	/* label counts per key (struct key_labels): every key with a
	 * vector since it was last merged or forgotten */
	struct htab kl;
	uint64_t labels_lost;	/* vectors not counted per key: no memory */
};

struct core_ref {
	uint64_t cell;		/* packed grid coordinates */
	size_t idx;		/* into v, valid until the next run trims it */
};

/* The cluster DBSCAN would give a new point x now: that of the nearest core
 * point within eps (of the nearest, the latest in the history), or
 * CLUSTER_NOISE. */
int analysis_nearest_core(const struct analysis *a, const double *x);
/* The same by a scan of the whole history: what the grid falls back to. */
int analysis_nearest_core_scan(const struct analysis *a, const double *x);

struct analysis_params {
	double eps;
	unsigned int min_pts;
	uint64_t history_windows;
	size_t history_max;	/* past it the oldest vectors go first */
};

/* Seconds of history held now (shorter than history_windows once
 * history_max trims it). */
double analysis_history_s(const struct analysis *a, uint64_t now_window,
			  uint64_t window_ns);

void analysis_init(struct analysis *a, const struct rules *rules,
		   const struct analysis_params *p);
void analysis_release(struct analysis *a);

/* Turn a closed row into a vector: label it, give it the cluster of the
 * nearest core point of the last run (or noise), keep it in the history.
 * Returns the entry (valid until the next call), or NULL when the row has
 * too little traffic or memory ran out. */
const struct vec_entry *analysis_add(struct analysis *a, const struct wrow *r,
				     uint64_t window_ns);

/* ---- label counts per key ----
 * analysis_add counts each vector under its key and label.  The counts
 * outlive the history, so the window table tells of the keys it merges or
 * forgets (wtable_limits.key_gone) and analysis_key_gone does the same with
 * the counts: the table then holds at most as many keys as the window
 * table. */

/* The counts of key k (LABEL_COUNT of them), or NULL when no vector of k
 * was counted. */
const uint32_t *analysis_key_labels(const struct analysis *a, const struct wkey *k);
/* Count, by label, the keys whose newest vector of windows >= from carries
 * it (by_label: LABEL_COUNT counts, added to).  0, or -ENOMEM. */
int analysis_count_recent(const struct analysis *a, uint64_t from, uint64_t *by_label);
/* Key k left the window table: its counts are added to into's (into NULL:
 * forgotten), then k's are forgotten.  Cannot fail: k's entry makes room
 * for into's. */
void analysis_key_gone(struct analysis *a, const struct wkey *k, const struct wkey *into);

/* Forget vectors older than the history, then cluster what remains.
 * Returns the number of clusters or -errno. */
int analysis_recluster(struct analysis *a, uint64_t now_window);

/* The cluster table is rendered by report.h (report_clusters). */

#endif
