/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The tables cachescoped prints when it stops: the busiest keys, the keys
 * labelled anomalous (their counts from analysis.h), and the run's
 * counters.  Each takes plain data the daemon gathered, so that they can
 * be printed (and tested) without a loaded program.  Names other processes
 * chose are escaped for a terminal (strutil.h).
 */
#ifndef CS_SUMMARY_H
#define CS_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "budget.h"
#include "duty.h"
#include "analysis.h"
#include "csv.h"
#include "loader.h"
#include "sample.h"
#include "window.h"
#include "stacks.h"

/* The keys of the window table, in the table's order (summary_add_key
 * with wtable_foreach). */
struct summary_keys {
	const struct acc **v;
	size_t n, cap;
};

/* A wtable_foreach visitor: keep a.  Returns 1 (stop) when out of memory:
 * the keys so far are kept. */
int summary_add_key(struct acc *a, void *keys);
void summary_keys_release(struct summary_keys *k);

/* The top keys by events (allocs, frees, page adds and deletes); nothing
 * when top <= 0. */
void summary_busiest(const struct summary_keys *k, long top, FILE *out);
/* Every key with an anomalous vector, most first, with its vectors per
 * label as analysis counted them. */
void summary_labelled(const struct summary_keys *k, const struct analysis *an, FILE *out);

#define SUMMARY_PROGS 128

/* The run's counters, gathered at its end. */
struct summary {
	double elapsed_s;
	struct cs_stats k;		/* the programs' counters */
	uint64_t consumed;
	struct wtable_stats w;
	uint64_t recursion_misses;	/* over every program */
	uint64_t live_evictions, evicted_evictions;	/* loader_map_evictions */
	uint64_t bad_records, lost_nomem;
	const struct sampler *smp;
	const struct budget *budget;
	const struct duty *duty;	/* --budget's alloc programs' slices, or NULL */
	long sample_budget, max_keys, history_max;
	size_t history_vectors;
	uint64_t history_trimmed;
	bool gpu;			/* a CUPTI library was watched */
	uint64_t gpu_records, gpu_bins, cupti_dropped;
	bool stacks;			/* --leak-stacks: stacks_st shown */
	struct stacks_stats stacks_st;
	bool csv;			/* a --csv file was committed: csv_st */
	struct csv_stats csv_st;
	/* --bpf-stats: the programs (summary_add_prog with loader_prog_stats;
	 * none: not shown), whether the kernel's run-time accounting was on,
	 * and the programs' own timing (NULL: none) */
	bool kernel_stats;
	struct loader_prog_stats progs[SUMMARY_PROGS];
	size_t nprogs, progs_left_out;
	const struct loader_run_times *run_times;
};

/* A loader_prog_stats visitor: keep one program's numbers in summary. */
void summary_add_prog(const struct loader_prog_stats *ps, void *summary);
/* The counters on out; the warnings they call for (records dropped or
 * rejected) through log.h. */
void summary_print(const struct summary *s, FILE *out);

#endif
