/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The Prometheus text exposition (format 0.0.4) of the daemon's numbers:
 * pure functions that render a struct of numbers and a list of keys into
 * a buffer, no HTTP (httpd.h serves it).  Names follow Prometheus's rules:
 * the cachescope_ prefix, base units (bytes, seconds), _total on counters.
 * Labels stay bounded: domain, key (cache or pool name, or a file's own
 * name -- the last component of its path, which the process that made it
 * chose and which may hold a pid; the top METRICS_MAX_KEYS by live bytes,
 * the rest counted), pattern (thrash, false_sharing, leak, normal), comm
 * and container of an anomalous key (at most METRICS_MAX_ANOMALIES, the
 * rest counted), reason (a fixed phrase a pattern and domain have:
 * label_cause, never the numbers of a vector), program, result; never a
 * tgid label or a directory.
 *
 * Per key (live, anomalies, rates) is shown only with detail: to whom may
 * read /proc/slabinfo (main.c decides).
 *
 * Label values: valid UTF-8 passes, with backslash, double quote and
 * newline escaped as the format says (\\, \", \n); every other C0 control,
 * DEL, C1 control and byte that is not part of valid UTF-8 is written as
 * the four characters \xNN (so the wire shows \\xNN), as the daemon's
 * terminal output (strutil.h) writes them.
 */
#ifndef CS_METRICS_H
#define CS_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include "budget.h"
#include "duty.h"

#define METRICS_MAX_KEYS 256	/* keys with live_* series, at most */
#define METRICS_KEY_LEN 64
#define METRICS_MAX_NAMES 16	/* labels, reasons */
#define METRICS_MAX_ANOMALIES 64	/* anomalous keys with series, at most */
#define METRICS_TOP_RATES 20	/* keys with per-key event counters */
#define METRICS_MAX_PROGS 48	/* BPF programs with series */
/* the port a service suggests: see docs/operating.md for why this one */
#define METRICS_DEFAULT_PORT 10422

struct metrics_key {
	char domain[8];
	char key[METRICS_KEY_LEN];	/* cache or file name */
	int64_t live_objs, live_bytes;
};

/* Keys summed over processes: add every (domain, key) row, then finish. */
struct metrics_keys {
	struct metrics_key *v;
	size_t n, cap;
	size_t omitted;			/* keys left out by the bound */
	int64_t omitted_objs, omitted_bytes;	/* what they held */
	int err;			/* -ENOMEM once an add failed */
};

/* Counts by a bounded set of names (labels, reject reasons). */
struct metrics_named {
	const char *name[METRICS_MAX_NAMES];
	uint64_t v[METRICS_MAX_NAMES];
	unsigned int n;
};

/* A duration histogram: counts of observations at most each bound. */
#define METRICS_HIST_BUCKETS 12
extern const double metrics_hist_bounds[METRICS_HIST_BUCKETS];	/* seconds */
struct metrics_hist {
	uint64_t le[METRICS_HIST_BUCKETS];	/* cumulative, as exposed */
	uint64_t count;
	double sum;
};
void metrics_hist_observe(struct metrics_hist *h, double seconds);

/* The process's own cost, as every Prometheus client library names it
 * (process_*): read from /proc/self by metrics_process_read. */
struct metrics_process {
	bool ok;
	double cpu_s, start_time_s;
	uint64_t resident_bytes, virtual_bytes, open_fds, max_fds;
};
/* From proc (a /proc/<pid> directory: "/proc/self"); btime_s the boot
 * time (/proc/stat's btime, seconds since the epoch).  0, or -errno. */
int metrics_process_read(struct metrics_process *p, const char *proc, double btime_s);

/* One BPF program: runs and their time (with kernel.bpf_stats_enabled),
 * and runs the kernel skipped (re-entered on a CPU: recursion_misses). */
struct metrics_prog {
	char name[40];
	uint64_t run_ns, run_cnt, recursion_misses;
};

/* One anomalous key, summed over the processes whose keys have the same
 * domain, key, comm, container and pattern. */
struct metrics_anomaly {
	char domain[8];
	char key[METRICS_KEY_LEN];
	char comm[16];
	char container[64];
	const char *pattern;		/* label_name */
	const char *reason;		/* label_cause: a fixed phrase */
	int64_t live_bytes;
	double start_time_s;		/* the earliest start, seconds since the epoch */
};

struct metrics_anomalies {
	struct metrics_anomaly *v;
	size_t n, cap;
	size_t omitted;			/* past METRICS_MAX_ANOMALIES */
	int err;
};
/* Add one (merged with an equal one: bytes summed, the earliest start). */
void metrics_anomalies_add(struct metrics_anomalies *as, const struct metrics_anomaly *a);
/* Keep the limit with the most live bytes, count the rest. */
void metrics_anomalies_finish(struct metrics_anomalies *as, size_t limit);
void metrics_anomalies_release(struct metrics_anomalies *as);

/* Events of keys by (domain, name) since the daemon started, summed over
 * processes (a counter must not fall when a process exits), and how busy
 * each was lately (decayed by half every METRICS_RATE_HALF_NS), to choose
 * the top keys.  At most METRICS_TOTALS_MAX names; further ones are
 * summed under the domain's "(others)". */
#define METRICS_TOTALS_MAX 4096
#define METRICS_RATE_HALF_NS (5 * 1000000000ull)
struct metrics_total {
	char domain[8];
	char key[METRICS_KEY_LEN];
	uint64_t allocs, frees, refaults;
	double recent;			/* events, decayed to recent_ns */
	uint64_t recent_ns;
};
struct metrics_totals {
	struct metrics_total *v;
	size_t n, cap;
	int err;
};
/* Count a row's events of (domain, key) at time now_ns (any clock that
 * never goes back). */
void metrics_totals_add(struct metrics_totals *t, const char *domain, const char *key,
			uint64_t allocs, uint64_t frees, uint64_t refaults, uint64_t now_ns);
/* The n busiest lately (at now_ns) into out (at most n): how many. */
size_t metrics_totals_top(const struct metrics_totals *t, uint64_t now_ns,
			  const struct metrics_total **out, size_t n);
void metrics_totals_release(struct metrics_totals *t);

struct metrics {
	const char *version;
	struct metrics_process proc;
	uint64_t produced, consumed, dropped, bad_records, lost_nomem, late;
	uint64_t unseen_frees, page_refaults, kv_swap_ins;
	uint64_t keys;			/* keys tracked now (per process) */
	struct metrics_named keys_merged;	/* keys merged into others, by why */
	uint64_t keys_dropped, others_events, share_events;
	uint64_t history_vectors, history_trimmed, rules_reloads;
	struct metrics_named vectors;	/* vectors made, per pattern */
	struct metrics_named anomalous;	/* keys whose latest vector has the (anomaly) pattern */
	uint64_t anomalies_started, anomaly_events_limited;
	uint64_t changes;		/* behaviour changes found by clustering */
	struct metrics_hist clustering;	/* each run's duration */
	uint64_t gpu_records, gpu_bins, cupti_dropped, gpu_late, gpu_release_unmatched;
	uint64_t kv_queue_full;
	uint64_t csv_rows, csv_rotations, csv_rows_dropped;
	unsigned int sample_shift, sample_shift_peak, sample_slots;
	uint64_t sample_changes;
	uint64_t ring_backoff;		/* allocs passed over while a ring filled */
	struct budget budget;		/* --budget */
	struct duty duty;		/* its kmem_cache_alloc slices */
	struct metrics_named usdt_rejected;	/* by reason */
	struct metrics_named control;	/* control-socket clients, by result */
	uint64_t scrapes;		/* /metrics requests answered */
	struct metrics_named http_refused;	/* connections, requests refused, by reason */
	struct metrics_named leak_stacks;	/* allocation stacks, by what became of them */
	uint64_t leak_stacks_kept;		/* objects held with their stack now */
	int bpf_stats_enabled;		/* kernel.bpf_stats_enabled: 1, 0, or -1 unknown */
	struct metrics_prog progs[METRICS_MAX_PROGS];
	unsigned int nprogs;
};

/* What only detail shows: per key (NULL members: none). */
struct metrics_detail {
	const struct metrics_keys *live;
	const struct metrics_anomalies *anomalies;
	const struct metrics_total *const *rates;
	size_t nrates;
};

/* Add (domain, key)'s live objects and bytes (summed with those of the
 * same pair already added).  Names are cut at METRICS_KEY_LEN - 1 bytes. */
void metrics_keys_add(struct metrics_keys *ks, const char *domain, const char *key,
		      int64_t live_objs, int64_t live_bytes);
/* Merge equal pairs, drop those that hold nothing (no live objects or
 * bytes), keep the limit with the most live bytes (ties by name), count
 * the rest in omitted. */
void metrics_keys_finish(struct metrics_keys *ks, size_t limit);
void metrics_keys_release(struct metrics_keys *ks);

/* Append n to a set of names (ignored past METRICS_MAX_NAMES). */
void metrics_named_set(struct metrics_named *s, const char *name, uint64_t v);

/* Escape a label value into buf (of size n > 0), as said above; what does
 * not fit is left off, never half an escape.  Returns buf. */
#define METRICS_ESC_SIZE(n) (5 * (n) + 1)
const char *metrics_escape(char *buf, size_t n, const char *s);

/* Render the exposition into a malloc'd buffer (*out, *len; NUL-terminated):
 * m for everyone, det's per-key series besides.  Returns 0 or -ENOMEM. */
int metrics_render(const struct metrics *m, const struct metrics_detail *det,
		   char **out, size_t *len);

/* Parse --metrics-addr: PORT, ADDR:PORT or [ADDR6]:PORT (ADDR numeric;
 * only a port: 127.0.0.1).  Returns 0 or -EINVAL. */
int metrics_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len);

#endif
