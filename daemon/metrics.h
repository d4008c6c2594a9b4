/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The Prometheus text exposition (format 0.0.4) of the daemon's numbers:
 * pure functions that render a struct of numbers and a list of keys into
 * a buffer, no HTTP (httpd.h serves it).  Names follow Prometheus's rules:
 * the cachescope_ prefix, base units (bytes, seconds), _total on counters.
 * Labels stay bounded: domain, key (cache or pool name, or a file's own
 * name -- the last component of its path, which the process that made it
 * chose and which may hold a pid; the top METRICS_MAX_KEYS by live bytes,
 * the rest counted), label, reason; never a tgid label or a directory.
 *
 * Label values: valid UTF-8 passes, with backslash, double quote and
 * newline escaped as the format says (\\, \", \n); every other C0 control,
 * DEL, C1 control and byte that is not part of valid UTF-8 is written as
 * the four characters \xNN (so the wire shows \\xNN), as the daemon's
 * terminal output (strutil.h) writes them.
 */
#ifndef CS_METRICS_H
#define CS_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define METRICS_MAX_KEYS 256	/* keys with live_* series, at most */
#define METRICS_KEY_LEN 64
#define METRICS_MAX_NAMES 16	/* labels, reasons */
#define METRICS_DEFAULT_PORT 9464

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

struct metrics {
	const char *version;
	double uptime_s;
	uint64_t produced, consumed, dropped, bad_records, lost_nomem;
	uint64_t unseen_frees, page_refaults, kv_swap_ins;
	uint64_t keys;			/* keys tracked now (per process) */
	struct metrics_named vectors;	/* vectors made, per label */
	struct metrics_named anomalous;	/* keys whose latest vector has the (anomaly) label */
	uint64_t cluster_runs;
	double cluster_s_total, cluster_last_s;
	uint64_t gpu_records, gpu_bins, cupti_dropped, gpu_late, gpu_release_unmatched;
	uint64_t csv_rows, csv_rotations, csv_rows_dropped;
	unsigned int sample_shift, sample_shift_peak, sample_slots;
	uint64_t sample_changes;
	struct metrics_named usdt_rejected;	/* by reason */
	uint64_t control_served, control_timeouts, control_denied, control_busy,
		control_too_long;
	uint64_t scrapes;		/* /metrics requests answered */
	struct metrics_named http_refused;	/* connections, requests refused, by reason */
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

/* Render the exposition into a malloc'd buffer (*out, *len; NUL-terminated).
 * Returns 0 or -ENOMEM. */
int metrics_render(const struct metrics *m, const struct metrics_keys *ks,
		   char **out, size_t *len);

/* Parse --metrics-addr: PORT, ADDR:PORT or [ADDR6]:PORT (ADDR numeric;
 * only a port: 127.0.0.1).  Returns 0 or -EINVAL. */
int metrics_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len);

#endif
