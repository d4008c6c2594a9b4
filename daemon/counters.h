/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One snapshot of the daemon's counters, read by every report of them:
 * the status answer (cachescope status), the Prometheus metrics, the
 * --interval line and the exit summary.  main.c takes it in one place
 * (counters_take); this module only says how each output shows it, so a
 * counter added here reaches every output that names it, by the same
 * value, and none is copied by hand twice.
 */
#ifndef CS_COUNTERS_H
#define CS_COUNTERS_H

#include <stdint.h>
#include "../bpf/cachescope.h"
#include "budget.h"
#include "duty.h"
#include "classify.h"
#include "control.h"
#include "httpd.h"
#include "metrics.h"
#include "rows.h"
#include "stacks.h"
#include "window.h"

struct report_fields;
struct metrics;
struct status;
struct summary;

struct counters {
	double uptime_s;
	struct cs_stats k;		/* the programs' counters */
	uint64_t consumed;		/* records read off the rings */
	struct wtable_stats w;
	uint64_t recursion_misses;	/* over every program */
	uint64_t bad_records, lost_nomem;
	uint64_t page_refaults, kv_swap_ins;	/* sums over closed rows */
	uint64_t vectors[LABEL_COUNT];	/* vectors made, by label */
	/* keys whose newest vector of the last ANOMALY_RECENT_NS has the label
	 * (filled by the outputs that show it: the metrics, the --interval line) */
	uint64_t anomalous[LABEL_COUNT];
	unsigned int sample_shift, sample_shift_peak, sample_slots;
	uint64_t sample_changes;
	struct budget budget;		/* --budget: the controller's state */
	struct duty duty;		/* its kmem_cache_alloc slices */
	uint64_t history_vectors, history_trimmed;
	double history_s;
	struct rows_stats rows;		/* kept for cachescope export */
	uint64_t cluster_runs;
	double cluster_ms, cluster_s_total;
	struct metrics_hist clustering;	/* each run's duration */
	/* anomalies (anomaly.h): held now, begun and over so far, their
	 * events logged and left unsaid by the rate limit, and anomalous
	 * vectors of keys the table had no room for */
	uint64_t anomalies_now, anomalies_started, anomalies_ended;
	uint64_t anomaly_events_said, anomaly_events_limited, anomalies_not_held;
	uint64_t changes;		/* behaviour changes found (change.h) */
	uint64_t reloads;		/* rules re-read */
	uint64_t gpu_records, gpu_bins, cupti_dropped;
	/* the --csv file: rows written, at its bound files committed and the
	 * oldest removed with their rows */
	uint64_t csv_rows, csv_rotations, csv_files_dropped, csv_rows_dropped;
	/* allocation stacks (stacks.h); the programs' part is in k */
	struct stacks_stats stacks;
	struct control_stats ctl;
	struct httpd_stats http;	/* the metrics endpoint */
};

/* A key counts as anomalous under a label when its newest vector of the
 * last ANOMALY_RECENT_NS carries it. */
#define ANOMALY_RECENT_NS (10 * 1000000000ull)

/* The status answer's fields, in the order they are shown. */
void counters_status(const struct counters *c, struct report_fields *f);
/* The metrics' counters (all but the version). */
void counters_metrics(const struct counters *c, struct metrics *m);
/* The --interval line's counters (all but its rate and newest vectors). */
void counters_line(const struct counters *c, struct status *st);
/* The exit summary's counters (all but its limits, sampler and files). */
void counters_summary(const struct counters *c, struct summary *s);

#endif
