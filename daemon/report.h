/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The daemon's answers as tables: counters, the busiest keys of the last
 * window, the clusters, the vectors of the history.  Each has a text
 * renderer (for a terminal: names escaped, strutil.h) and a JSON one (one
 * document, made with json-c).
 *
 * Non-UTF-8 policy, the same in text, JSON and CSV: a name other
 * processes chose (comm, file, cache, reason) goes through str_escape, so
 * a byte that is not valid UTF-8 or that a terminal would act on becomes
 * the four characters \xNN and a backslash becomes \\; JSON then escapes
 * that text as JSON does (the document holds "\\xNN"), so every JSON
 * string is valid UTF-8 and decodes to the same text the CSV holds.
 */
#ifndef CS_REPORT_H
#define CS_REPORT_H

#include <stdint.h>
#include <stdio.h>
#include "analysis.h"
#include "window.h"

enum report_fmt { REPORT_TEXT, REPORT_JSON };

/* ---- counters: name value pairs, in order ---- */
#define REPORT_MAX_FIELDS 128

struct report_field {
	char name[48];
	int decimals;		/* < 0: an integer */
	uint64_t u;
	double d;
};

struct report_fields {
	struct report_field v[REPORT_MAX_FIELDS];
	size_t n;		/* past REPORT_MAX_FIELDS further ones are left off */
};

void report_u64(struct report_fields *f, const char *name, uint64_t v);
void report_dbl(struct report_fields *f, const char *name, double v, int decimals);
/* text: "name value" lines; JSON: one object */
void report_stats(const struct report_fields *f, enum report_fmt fmt, FILE *out);

/* ---- the rows of the last closed window, for top ---- */
struct snap_row {
	char domain[8];
	char name[64];
	char file[CS_CACHE_NAME_LEN];
	char comm[CS_COMM_LEN];
	uint32_t tgid;
	uint64_t allocs, frees, page_adds, page_dels, refaults;
	int64_t live;
	enum cs_label label;	/* its vector's (LABEL_NONE: none made) */
};

struct report_snap {
	struct snap_row *v;
	size_t n, cap;
	uint64_t window;
};

/* Keep r, whose vector was labelled label (LABEL_NONE: none made); a row
 * of a later window starts the snapshot anew; a row is left out when
 * memory runs out. */
void report_snap_add(struct report_snap *s, const struct wrow *r, enum cs_label label);
void report_snap_release(struct report_snap *s);
/* The n busiest keys of the snapshot (sorts it). */
void report_top(struct report_snap *s, long window_ms, long n, enum report_fmt fmt, FILE *out);

/* ---- clusters and vectors ---- */
/* label: only the clusters labelled so or holding vectors labelled so;
 * LABEL_NONE: all. */
void report_clusters(const struct analysis *a, enum cs_label label, enum report_fmt fmt,
		     FILE *out);

struct report_clock {
	uint64_t t0_ns;		/* CLOCK_MONOTONIC start of window 0 */
	uint64_t window_ns;
	uint64_t real_off_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC */
};

/* The vectors of windows >= since_window whose key is key (NULL: any). */
void report_vectors(const struct analysis *a, const struct report_clock *clk,
		    uint64_t since_window, const char *key, enum report_fmt fmt, FILE *out);

/* ---- anomalies now (anomaly.h) ---- */
struct anomalies;
/* The keys anomalous now, most live bytes first: label, key, process,
 * container, since when (UTC) and for how long, live bytes, ops/s, the
 * bounded cause and the newest reason.  now_ns: CLOCK_MONOTONIC. */
void report_anomalies(const struct anomalies *as, const struct report_clock *clk,
		      uint64_t now_ns, enum report_fmt fmt, FILE *out);

/* ---- behaviour changes (change.h) ---- */
struct changes;
/* The newest behaviour changes, newest first: when (UTC), key, process,
 * from and to (cluster or noise), the features that moved, the distance;
 * JSON with both spans' mean vectors. */
void report_changes(const struct changes *c, const struct report_clock *clk, enum report_fmt fmt,
		    FILE *out);

/* An error answer: "error: msg" or {"error": "msg"}. */
void report_error(enum report_fmt fmt, FILE *out, const char *fmtstr, ...)
	__attribute__((format(printf, 3, 4)));
/* A short success answer: "msg" or {"ok": true, "message": "msg"}. */
void report_ok(enum report_fmt fmt, FILE *out, const char *msg);

/* ---- requests (proto.h's grammar) ---- */
struct report_request {
	enum report_fmt fmt;
	int cmd;		/* enum proto_cmd */
	long n;			/* top: keys shown (default 10) */
	long since_s;		/* vectors, export: seconds back; 0: all */
	enum cs_label label;	/* clusters: LABEL_NONE for all */
	char key[256];		/* vectors: "" for all */
};

/* Parse a request line.  Returns 0, or -EINVAL with a one-line reason in
 * err (rq->fmt is set even then, so the error can be answered in kind). */
int report_parse_request(const char *line, struct report_request *rq, char *err, size_t n);

/* The tgid column of a key: the process, or what stands for many. */
const char *report_tgid_str(uint32_t tgid, char *buf, size_t n);

/* JSON pieces every output builds the same way (json-c): a name as
 * str_escape writes it everywhere; a double (NaN and infinities: null);
 * vectors per label; a document printed on one line, then released. */
struct json_object;
struct json_object *report_jstr(const char *s);
struct json_object *report_jdbl(double v);
struct json_object *report_jlabels(const unsigned int *counts);
void report_jprint(struct json_object *o, FILE *out);

#endif
