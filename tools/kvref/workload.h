/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kvref serving loop: a front end and a worker thread per worker slot,
 * requests with shared system-prompt prefixes, and the scenarios that make
 * one cache pattern happen each, for a physical reason.
 */
#ifndef KVREF_WORKLOAD_H
#define KVREF_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "backend.h"
#include "kvcache.h"
#include "model.h"

enum kvref_scenario {
	SC_NORMAL,
	SC_THRASH,
	SC_FALSE_SHARING,
	SC_LEAK,
	SC_MIXED,
	SC_COUNT,
};

const char *scenario_name(enum kvref_scenario s);
/* Returns the scenario named name, or -EINVAL. */
int scenario_parse(const char *name);

struct workload_opts {
	enum kvref_scenario scenario;
	double duration_s;	/* whole run; mixed splits it into four phases */
	int workers;
	int kv_blocks;		/* pool of the normal, false-sharing and leak phases */
	int block_size;
	const char *swap_dir;
	uint64_t seed;
	bool quiet;
	const struct kv_backend *backend;	/* NULL: the CPU backend */
};

/* What really happened in one phase: the ground truth detection is scored
 * against. */
struct phase_report {
	enum kvref_scenario scenario;
	double start_s, end_s;		/* since the run started */
	uint64_t start_mono_ns;		/* CLOCK_MONOTONIC at the start */
	uint64_t requests, tokens;
	uint64_t prefill_tokens, cached_tokens;
	uint64_t leaked_seqs, leaked_fds;
	uint64_t handoffs_cross_cpu, handoffs_same_cpu;
	uint64_t swap_file_drops;	/* posix_fadvise(DONTNEED) of the swap file */
	uint64_t failed;		/* requests that found no free block */
	double cpu_s;			/* CPU time of the process in the phase */
	int nslots;
	double worker_cpu_s[64];	/* CPU time of each worker thread */
	double frontend_cpu_s[64];	/* and of its front end */
	struct kv_cache_stats kv;
};

struct run_report {
	const char *backend;
	struct phase_report phases[4];
	int nphases;
	double seconds;
	uint64_t tokens;
};

/* Serve requests for opts->duration_s on model m.  Returns 0 and fills rep,
 * or -errno. */
int workload_run(const struct kv_model *m, const struct workload_opts *opts,
		 struct run_report *rep);

void report_print(const struct run_report *rep, FILE *out);
void report_json(const struct run_report *rep, FILE *out);

#endif
