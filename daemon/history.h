/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A key's history, the part of its past that the rules read: its live
 * count over the last active windows (growth), where its objects were
 * freed (locality), the refaults of a file or pool (persistence), and its
 * live objects by age with the current rise of the old population (leak).
 *
 * Each history is a small ring of fixed size, updated once per closed row
 * of its key and read back into that row (struct wrow, window.h): the
 * same calls serve the rows made from records (window.c) and the rows
 * read back from CSV (tools/offline.c), so the two paths derive the same
 * evidence.  Nothing here allocates or fails.
 */
#ifndef CS_HISTORY_H
#define CS_HISTORY_H

#include <stdbool.h>
#include <stdint.h>
#include "htab.h"
#include "stats.h"

struct wrow;

#define GROWTH_SAMPLES 32	/* live counts kept per key for the growth slope */

/* Live objects by age (memleak's idea, in counts): objects are counted in
 * the cohort of their allocation time, and a free takes its object out of
 * the cohort its lifetime points back to, so the live objects older than
 * any age are known without tracking objects.  A balanced churn has none;
 * a leak amid churn has a steadily growing old population. */
#define AGE_COHORTS 64
#define AGE_COHORT_NS 250000000ull	/* 16 s of cohorts, then one "older" */

/* Locality over the recent windows: a handoff between CPUs that lasts,
 * not a scheduler's moment. */
#define LOCALITY_SAMPLES 10

/* Refaults of the recent windows, for persistence.  Kept per file for the
 * page cache, whichever processes read it (a shell loop of readers is one
 * thrashing file, not many one-pass keys), and per pool for kv keys. */
#define THRASH_SAMPLES 32

/* live objects by allocation cohort (AGE_COHORT_NS each, a ring numbered
 * by absolute cohort): weighted (each tracked object stands for 2^shift)
 * and tracked (records: how much evidence there is behind the estimate) */
struct age_cohorts {
	int32_t cohort[AGE_COHORTS], tracked[AGE_COHORTS];
	uint64_t head;		/* newest cohort held */
	int64_t older, tolder;	/* live objects older than the ring */
};

struct thist {
	uint64_t win[THRASH_SAMPLES];	/* windows with refaults, newest at head - 1 */
	uint32_t adds[THRASH_SAMPLES];	/* pages inserted */
	uint32_t refault[THRASH_SAMPLES], repeat[THRASH_SAMPLES];
	uint32_t head;
};

/* The refault histories of files, whichever processes read them: one
 * file's is made on its first refault and forgotten after THRASH_SAMPLES
 * windows without one. */
struct history_files {
	struct htab tab;	/* of struct thist, in a struct of the file's id */
};

/* live objects at the end of the last GROWTH_SAMPLES active windows
 * (window numbers kept in 32 bits: only their differences are read, and
 * the samples span far less than 2^32 windows) */
struct grow_hist {
	uint32_t win[GROWTH_SAMPLES];
	int64_t live[GROWTH_SAMPLES];
	uint32_t n, head;
	uint32_t grew_windows;	/* consecutive active windows with net growth */
};

/* frees with a CPU of the last LOCALITY_SAMPLES windows that had any */
struct loc_hist {
	uint32_t win[LOCALITY_SAMPLES];	/* 32 bits, as grow_hist's */
	uint32_t same[LOCALITY_SAMPLES], remote[LOCALITY_SAMPLES];
	uint32_t own[LOCALITY_SAMPLES];	/* of remote: by the process's own threads */
	uint32_t head;
};

/* the old population at the end of recent windows: its current rise */
struct rise_hist {
	int64_t start;		/* at the start of the current rise */
	int64_t start_tracked;	/* the same in tracked objects */
	uint64_t start_ns;	/* when it started (a window's end) */
	uint64_t first_step_ns, last_step_ns;	/* its first and last rise */
	uint32_t steps;		/* windows of the rise in which it rose */
	int64_t max_step;	/* the largest of those rises */
	uint64_t start_allocs, start_frees;	/* totals when it started */
	uint64_t start_old_frees, start_unseen;
	int64_t last;		/* at the end of the last window */
};

/* The history of a key of objects (slab, kv, gpu: what is allocated and
 * freed), which the leak and false-sharing rules read; a page key has no
 * objects and holds none (window.c gives its rows a zeroed one, which reads
 * as the history of no objects, the same as one kept from zeros). */
struct obj_hist {
	struct grow_hist grow;
	struct age_cohorts age;	/* live objects by allocation time */
	uint32_t life_hist[HIST_BUCKETS];	/* lifetimes, halved every 100 windows */
	uint32_t life_windows;
	struct rise_hist rise;
	struct loc_hist loc;
	uint64_t expiry_ns;	/* the kernel keeps its objects this long by design */
	bool expiry_known;
};

/* One object allocated at ts_ns (sign +1) or freed (sign -1, ts_ns = its
 * allocation time), standing for w objects. */
void history_cohort_add(struct age_cohorts *a, uint64_t ts_ns, int sign, uint32_t w);
/* n objects, each tracked (n tracked, n in the population) */
void history_cohort_add_n(struct age_cohorts *a, uint64_t ts_ns, int sign, uint32_t n);
/* Live objects allocated at or before cutoff_ns (never negative). */
int64_t history_old_objs(const struct age_cohorts *a, uint64_t cutoff_ns);
/* The same in tracked objects (records, unweighted). */
int64_t history_old_tracked(const struct age_cohorts *a, uint64_t cutoff_ns);
/* Add src's cohorts into dst (a key merged into its others key): each
 * object keeps its age. */
void history_cohorts_merge(struct age_cohorts *dst, const struct age_cohorts *src);
/* No live objects (a kv pool made anew); the numbering stays. */
void history_cohorts_clear(struct age_cohorts *a);

void history_files_init(struct history_files *f);
void history_files_release(struct history_files *f);
/* The history of file (ino, dev, gen); made when create and new.  NULL:
 * none (or out of memory: the row then has no persistence evidence). */
struct thist *history_file(struct history_files *f, uint64_t ino, uint32_t dev, uint32_t gen,
			   bool create);
/* Forget the files with no refault in the THRASH_SAMPLES windows before
 * window cur (out of memory: kept until the next time). */
void history_files_gc(struct history_files *f, uint64_t cur);

/* The history's updates at the end of a row's window (row r, its window
 * ending at end): growth_per_s and grew_windows; recent_locality and
 * recent_windows; the old population's rise (r->old_objs and r->age_ns
 * set; tracked: the old tracked objects; st: the key's totals and first
 * event), all but old_rise_dropped. */
struct history_step;
void history_growth(struct grow_hist *h, uint64_t window_ns, struct wrow *r);
void history_locality(struct loc_hist *h, struct wrow *r);
/* A file's or pool's refaults over its last THRASH_SAMPLES windows, th
 * NULL: none kept (no refault yet). */
void history_refaults(struct thist *th, uint64_t window_ns, struct wrow *r);
void history_rise(struct rise_hist *h, struct wrow *r, uint64_t end, int64_t tracked,
		  const struct history_step *st);

/* What one row's history step reads beyond the row and the key's history. */
struct history_step {
	uint64_t window_ns;
	/* aged: the row holds age_ns and old_objs already (a row read from a
	 * CSV: the daemon aged them, and its cohorts are not in the file);
	 * else objects older than max(age_min_ns, expiry_ns, age_lifetimes x
	 * the key's median lifetime) are old, counted from the key's cohorts */
	bool aged;
	uint64_t age_min_ns, expiry_ns;
	double age_lifetimes;
	/* the key's totals, this window's included, and its first event */
	uint64_t allocs, seen_frees, first_ns;
	/* frees seen of objects older than age_min_ns; frees found unseen */
	uint64_t old_frees, unseen_frees;
	/* records were dropped (rings full) before the row's window closed,
	 * the last of them at last_drop_ns */
	bool drops;
	uint64_t last_drop_ns;
};

/* The history step of one closed row of a key: everything the rules read
 * of the key's past, derived into r (growth, the key's median lifetime, the
 * age test and the old population's rise, locality, refaults), and the row
 * added to that past (oh; th: its file's or pool's refaults, NULL for none
 * yet).  The window's lifetimes are r->s->lifetime_hist.  One sequence for
 * the rows made from records (window.c) and those read from a CSV
 * (tools/offline.c), so both derive the same evidence. */
void history_row(struct obj_hist *oh, struct thist *th, const struct history_step *st,
		 struct wrow *r);

#endif
