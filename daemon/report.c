// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tables of the control socket, text and JSON.  The one idea: every
 * table is built from plain data (counters, snapshot rows, the analysis
 * history) by a pair of renderers, so the text a terminal shows and the
 * JSON a script reads hold the same values, and every name in either went
 * through str_escape once (see report.h for the non-UTF-8 policy).
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <json-c/json.h>
#include <errno.h>
#include "array.h"
#include "proto.h"
#include "anomaly.h"
#include "change.h"
#include "report.h"
#include "strutil.h"

#define ESC(buf, s) str_escape(buf, sizeof(buf), s, 0)
/* an argument word of a request, at most */
#define CONTROL_WORD_MAX 96

/* ---- JSON helpers ---- */

json_object *report_jstr(const char *s)
{
	size_t n = STR_ESC_SIZE(strlen(s));
	char small[512], *buf = n <= sizeof(small) ? small : malloc(n);
	json_object *o;

	if (!buf)
		return NULL;
	o = json_object_new_string(str_escape(buf, n, s, 0));
	if (buf != small)
		free(buf);
	return o;
}

/* NaN and infinities are not JSON: null */
json_object *report_jdbl(double v)
{
	return isfinite(v) ? json_object_new_double(v) : NULL;
}

static json_object *ju64(uint64_t v)
{
	return json_object_new_uint64(v);
}

static void jput(json_object *o, const char *k, json_object *v)
{
	json_object_object_add(o, k, v);
}

void report_jprint(json_object *o, FILE *out)
{
	fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					      JSON_C_TO_STRING_NOSLASHESCAPE), out);
	fputc('\n', out);
	json_object_put(o);
}

/* ---- small answers ---- */

void report_error(enum report_fmt fmt, FILE *out, const char *fmtstr, ...)
{
	char msg[512], safe[STR_ESC_SIZE(sizeof(msg))];
	va_list ap;

	va_start(ap, fmtstr);
	vsnprintf(msg, sizeof(msg), fmtstr, ap);
	va_end(ap);
	if (fmt == REPORT_JSON) {
		json_object *o = json_object_new_object();

		jput(o, "error", report_jstr(msg));
		report_jprint(o, out);
	} else {
		fprintf(out, "error: %s\n", ESC(safe, msg));
	}
}

void report_ok(enum report_fmt fmt, FILE *out, const char *msg)
{
	char safe[STR_ESC_SIZE(512)];

	if (fmt == REPORT_JSON) {
		json_object *o = json_object_new_object();

		jput(o, "ok", json_object_new_boolean(1));
		jput(o, "message", report_jstr(msg));
		report_jprint(o, out);
	} else {
		fprintf(out, "%s\n", ESC(safe, msg));
	}
}

const char *report_tgid_str(uint32_t tgid, char *buf, size_t n)
{
	if (tgid == CS_TGID_OTHER || tgid_is_family(tgid))
		return tgid_kind(tgid);
	snprintf(buf, n, "%u", tgid);
	return buf;
}

static json_object *jtgid(uint32_t tgid)
{
	if (tgid == CS_TGID_OTHER || tgid_is_family(tgid))
		return json_object_new_string(tgid_kind(tgid));
	return ju64(tgid);
}

/* ---- counters ---- */

static struct report_field *field_add(struct report_fields *f, const char *name)
{
	struct report_field *x;

	if (f->n >= REPORT_MAX_FIELDS)
		return NULL;
	x = &f->v[f->n++];
	snprintf(x->name, sizeof(x->name), "%s", name);
	return x;
}

void report_u64(struct report_fields *f, const char *name, uint64_t v)
{
	struct report_field *x = field_add(f, name);

	if (x) {
		x->decimals = -1;
		x->u = v;
	}
}

void report_dbl(struct report_fields *f, const char *name, double v, int decimals)
{
	struct report_field *x = field_add(f, name);

	if (x) {
		x->decimals = decimals < 0 ? 0 : decimals;
		x->d = v;
	}
}

void report_stats(const struct report_fields *f, enum report_fmt fmt, FILE *out)
{
	json_object *o = fmt == REPORT_JSON ? json_object_new_object() : NULL;
	size_t i;

	for (i = 0; i < f->n; i++) {
		const struct report_field *x = &f->v[i];

		if (o)
			jput(o, x->name, x->decimals < 0 ? ju64(x->u) : report_jdbl(x->d));
		else if (x->decimals < 0)
			fprintf(out, "%s %" PRIu64 "\n", x->name, x->u);
		else
			fprintf(out, "%s %.*f\n", x->name, x->decimals, x->d);
	}
	if (o)
		report_jprint(o, out);
}

/* ---- top ---- */

void report_snap_add(struct report_snap *s, const struct wrow *r, enum cs_label label)
{
	struct snap_row *sr;

	if (r->window != s->window) {
		s->n = 0;
		s->window = r->window;
	}
	if (array_room(&s->v, &s->cap, s->n, sizeof(*s->v), 256))
		return;
	sr = &s->v[s->n++];
	snprintf(sr->domain, sizeof(sr->domain), "%s", domain_name(r->key->domain));
	snprintf(sr->name, sizeof(sr->name), "%s", r->name);
	snprintf(sr->file, sizeof(sr->file), "%s", r->file);
	snprintf(sr->comm, sizeof(sr->comm), "%s", r->comm);
	sr->tgid = r->key->tgid;
	sr->allocs = r->s->allocs;
	sr->frees = r->s->frees;
	sr->page_adds = r->s->page_adds;
	sr->page_dels = r->s->page_dels;
	sr->refaults = r->s->refaults;
	sr->live = r->live_objs;
	sr->label = label;
}

void report_snap_release(struct report_snap *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int snap_cmp(const void *a, const void *b)
{
	const struct snap_row *x = a, *y = b;
	uint64_t ex = x->allocs + x->frees + x->page_adds + x->page_dels;
	uint64_t ey = y->allocs + y->frees + y->page_adds + y->page_dels;

	return ex < ey ? 1 : ex > ey ? -1 : strcmp(x->name, y->name);
}

void report_top(struct report_snap *s, long window_ms, long n, enum report_fmt fmt, FILE *out)
{
	json_object *o = NULL, *keys = NULL;
	size_t i;

	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), snap_cmp);
	if (fmt == REPORT_JSON) {
		o = json_object_new_object();
		keys = json_object_new_array();
		jput(o, "window", ju64(s->window));
		jput(o, "window_ms", json_object_new_int64(window_ms));
		jput(o, "keys", keys);
	} else {
		fprintf(out, "window %" PRIu64 " (%ld ms)\n", s->window, window_ms);
		fprintf(out, "%-6s %-28s %-16s %8s %-16s %9s %9s %9s %9s %8s %s\n", "domain",
			"key", "file", "tgid", "comm", "allocs", "frees", "live",
			"pg_adds", "refaults", "label");
	}
	for (i = 0; i < s->n && (long)i < n; i++) {
		const struct snap_row *r = &s->v[i];

		if (keys) {
			json_object *k = json_object_new_object();

			jput(k, "domain", json_object_new_string(r->domain));
			jput(k, "key", report_jstr(r->name));
			jput(k, "file", report_jstr(r->file));
			jput(k, "tgid", jtgid(r->tgid));
			jput(k, "comm", report_jstr(r->comm));
			jput(k, "allocs", ju64(r->allocs));
			jput(k, "frees", ju64(r->frees));
			jput(k, "live", json_object_new_int64(r->live));
			jput(k, "page_adds", ju64(r->page_adds));
			jput(k, "page_dels", ju64(r->page_dels));
			jput(k, "refaults", ju64(r->refaults));
			jput(k, "label", r->label < LABEL_COUNT ?
				 json_object_new_string(label_name(r->label)) : NULL);
			json_object_array_add(keys, k);
		} else {
			char name[STR_ESC_SIZE(sizeof(r->name))], file[STR_ESC_SIZE(sizeof(r->file))];
			char comm[STR_ESC_SIZE(sizeof(r->comm))], t[16];

			fprintf(out, "%-6s %-28s %-16s %8s %-16s %9" PRIu64 " %9" PRIu64
				" %9" PRId64 " %9" PRIu64 " %8" PRIu64 " %s\n",
				r->domain, ESC(name, r->name), ESC(file, r->file),
				report_tgid_str(r->tgid, t, sizeof(t)), ESC(comm, r->comm),
				r->allocs, r->frees, r->live, r->page_adds, r->refaults,
				r->label < LABEL_COUNT ? label_name(r->label) : "-");
		}
	}
	if (o)
		report_jprint(o, out);
}

/* ---- clusters ---- */

static int cluster_cmp(const void *x, const void *y)
{
	const struct cluster_info *p = x, *q = y;

	return p->id - q->id;
}

json_object *report_jlabels(const unsigned int *counts)
{
	json_object *o = json_object_new_object();
	int l;

	for (l = 0; l < LABEL_COUNT; l++)
		jput(o, label_name(l), ju64(counts[l]));
	return o;
}

static json_object *jvec(const double *v, int n)
{
	json_object *a = json_object_new_array();
	int i;

	for (i = 0; i < n; i++)
		json_object_array_add(a, report_jdbl(v[i]));
	return a;
}

void report_clusters(const struct analysis *a, enum cs_label label, enum report_fmt fmt,
		     FILE *out)
{
	unsigned int counts[LABEL_COUNT] = { 0 }, l;
	json_object *o = NULL, *list = NULL;
	struct cluster_info *sorted = NULL;
	size_t i, shown = 0;

	for (i = 0; i < a->n; i++)
		if (a->v[i].cluster == CLUSTER_NOISE && a->v[i].label < LABEL_COUNT)
			counts[a->v[i].label]++;
	if (a->nclusters) {
		sorted = malloc(a->nclusters * sizeof(*sorted));
		if (!sorted) {
			report_error(fmt, out, "out of memory");
			return;
		}
		memcpy(sorted, a->clusters, a->nclusters * sizeof(*sorted));
		qsort(sorted, a->nclusters, sizeof(*sorted), cluster_cmp);
	}
	if (fmt == REPORT_JSON) {
		o = json_object_new_object();
		list = json_object_new_array();
		jput(o, "vectors", ju64(a->n));
		jput(o, "noise", ju64(a->noise));
		jput(o, "noise_labels", report_jlabels(counts));
		jput(o, "eps", report_jdbl(a->eps));
		jput(o, "min_pts", ju64(a->min_pts));
		jput(o, "runs", ju64(a->runs));
		jput(o, "run_ms", report_jdbl(a->last_run_ms));
		if (label != LABEL_NONE)
			jput(o, "label", json_object_new_string(label_name(label)));
		jput(o, "clusters", list);
	} else {
		fprintf(out, "clusters: %zu over %zu vectors (%u noise), eps %.3f, min_pts %u, run %llu took %.1f ms\n",
			a->nclusters, a->n, a->noise, a->eps, a->min_pts,
			(unsigned long long)a->runs, a->last_run_ms);
		if (a->noise) {
			fprintf(out, "noise: %u points:", a->noise);
			for (l = 0; l < LABEL_COUNT; l++)
				fprintf(out, " %s %u", label_name(l), counts[l]);
			fputc('\n', out);
		}
	}
	for (i = 0; i < a->nclusters; i++) {
		const struct cluster_info *c = &sorted[i];

		/* L: the clusters labelled L or holding vectors labelled L */
		if (label != LABEL_NONE && c->label != label && !c->counts[label])
			continue;
		if (list) {
			json_object *j = json_object_new_object();

			jput(j, "id", json_object_new_int(c->id));
			jput(j, "label", json_object_new_string(label_name(c->label)));
			jput(j, "size", ju64(c->size));
			jput(j, "labels", report_jlabels(c->counts));
			jput(j, "keys", report_jstr(c->keys));
			jput(j, "centroid", jvec(c->centroid, FEAT_DIM));
			jput(j, "reason", report_jstr(c->reason));
			json_object_array_add(list, j);
		} else {
			/* keys and reasons name what processes chose: for a terminal */
			char keys[STR_ESC_SIZE(sizeof(c->keys))], why[STR_ESC_SIZE(sizeof(c->reason))];

			if (!shown)
				fprintf(out, "%4s %-13s %6s %-40s %-34s %s\n", "id", "label", "size",
					"keys", "centroid (freq hot entr loc numa)", "reason");
			fprintf(out, "%4d %-13s %6u %-40.40s %.2f %.2f %.2f %.2f %.2f %s\n", c->id,
				label_name(c->label), c->size, ESC(keys, c->keys),
				c->centroid[0], c->centroid[1], c->centroid[2], c->centroid[3],
				c->centroid[4], ESC(why, c->reason));
		}
		shown++;
	}
	if (!list && label != LABEL_NONE && !shown)
		fprintf(out, "(no %s cluster)\n", label_name(label));
	free(sorted);
	if (o)
		report_jprint(o, out);
}

/* ---- vectors ---- */

void report_vectors(const struct analysis *a, const struct report_clock *clk,
		    uint64_t since_window, const char *key, enum report_fmt fmt, FILE *out)
{
	json_object *o = NULL, *list = NULL;
	size_t i, shown = 0;

	if (fmt == REPORT_JSON) {
		o = json_object_new_object();
		list = json_object_new_array();
		jput(o, "window_ms", ju64(clk->window_ns / 1000000));
		jput(o, "vectors", list);
	} else {
		fprintf(out, "%-14s %-6s %-28s %8s %-16s %-13s %7s %5s %5s %5s %5s %5s %s\n", "ts",
			"domain", "key", "tgid", "comm", "label", "cluster", "freq", "hot", "entr",
			"loc", "numa", "reason");
	}
	for (i = 0; i < a->n; i++) {
		const struct vec_entry *v = &a->v[i];
		double ts = (double)(clk->t0_ns + v->window * clk->window_ns + clk->real_off_ns) / 1e9;

		if (v->window < since_window || (key && strcmp(key, v->name)))
			continue;
		shown++;
		if (list) {
			json_object *j = json_object_new_object();

			jput(j, "ts", report_jdbl(ts));
			jput(j, "window", ju64(v->window));
			jput(j, "domain", json_object_new_string(domain_name(v->key.domain)));
			jput(j, "key", report_jstr(v->name));
			jput(j, "tgid", jtgid(v->key.tgid));
			jput(j, "comm", report_jstr(v->comm));
			jput(j, "label", json_object_new_string(label_name(v->label)));
			jput(j, "cluster", json_object_new_int(v->cluster));
			jput(j, "ops_per_s", report_jdbl(v->f.raw[FEAT_FREQ]));
			jput(j, "features", jvec(v->f.v, FEAT_DIM));
			jput(j, "growth_per_s", report_jdbl(v->growth_per_s));
			jput(j, "grew_windows", ju64(v->grew_windows));
			jput(j, "free_ratio", report_jdbl(v->free_ratio));
			jput(j, "refault_share", report_jdbl(v->refault_share));
			jput(j, "reason", report_jstr(v->reason));
			json_object_array_add(list, j);
		} else {
			char name[STR_ESC_SIZE(sizeof(v->name))], comm[STR_ESC_SIZE(sizeof(v->comm))];
			char why[STR_ESC_SIZE(VEC_REASON_MAX)], t[16];

			fprintf(out, "%-14.3f %-6s %-28s %8s %-16s %-13s %7d %5.2f %5.2f %5.2f %5.2f %5.2f %s\n",
				ts, domain_name(v->key.domain), ESC(name, v->name),
				report_tgid_str(v->key.tgid, t, sizeof(t)), ESC(comm, v->comm),
				label_name(v->label), v->cluster, v->f.v[0], v->f.v[1], v->f.v[2],
				v->f.v[3], v->f.v[4], ESC(why, v->reason));
		}
	}
	if (o)
		report_jprint(o, out);
	else if (!shown)
		fprintf(out, "(no vectors%s)\n", key ? " of that key" : "");
}

/* ---- anomalies now ---- */

/* "2026-12-05T08:01:02Z" of a CLOCK_MONOTONIC time */
static const char *utc(char *buf, size_t n, uint64_t mono_ns, const struct report_clock *clk)
{
	time_t t = (time_t)((mono_ns + clk->real_off_ns) / 1000000000ull);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, n, "?");
	return buf;
}

void report_anomalies(const struct anomalies *as, const struct report_clock *clk,
		      uint64_t now_ns, enum report_fmt fmt, FILE *out)
{
	const struct anomaly **v = NULL;
	json_object *o = NULL, *arr = NULL;
	int n = anomalies_sorted(as, &v), i;
	char since[32];

	if (n < 0) {
		report_error(fmt, out, "out of memory");
		return;
	}
	if (fmt == REPORT_JSON) {
		o = json_object_new_object();
		arr = json_object_new_array();
		jput(o, "anomalies", arr);
		jput(o, "started", ju64(as->started));
		jput(o, "ended", ju64(as->ended));
		jput(o, "events_limited", ju64(as->events_limited));
	} else {
		fprintf(out, "%d anomalous keys now (%" PRIu64 " started, %" PRIu64 " ended since the start)\n",
			n, as->started, as->ended);
		if (n)
			fprintf(out, "%-13s %-6s %-28s %8s %-16s %-14s %-20s %8s %12s %9s %s\n", "label",
				"domain", "key", "tgid", "comm", "container", "since", "for_s",
				"live_bytes", "ops/s", "reason");
	}
	for (i = 0; i < n; i++) {
		const struct anomaly *a = v[i];
		double for_s = now_ns > a->since_ns ? (double)(now_ns - a->since_ns) / 1e9 : 0;

		utc(since, sizeof(since), a->since_ns, clk);
		if (arr) {
			json_object *j = json_object_new_object();

			jput(j, "label", json_object_new_string(label_name(a->label)));
			jput(j, "domain", json_object_new_string(domain_name(a->key.domain)));
			jput(j, "key", report_jstr(a->name));
			jput(j, "tgid", jtgid(a->key.tgid));
			jput(j, "comm", report_jstr(a->comm));
			jput(j, "container", report_jstr(a->container));
			jput(j, "since", json_object_new_string(since));
			jput(j, "since_ts", report_jdbl((double)(a->since_ns + clk->real_off_ns) / 1e9));
			jput(j, "for_s", report_jdbl(for_s));
			jput(j, "vectors", ju64(a->vectors));
			jput(j, "live_objs", json_object_new_int64(a->live_objs));
			jput(j, "live_bytes", json_object_new_int64(a->live_bytes));
			jput(j, "ops_per_s", report_jdbl(a->ops_per_s));
			jput(j, "cause", json_object_new_string(label_cause(a->label, a->key.domain)));
			jput(j, "reason", report_jstr(a->reason));
			json_object_array_add(arr, j);
		} else {
			char name[STR_ESC_SIZE(sizeof(a->name))], comm[STR_ESC_SIZE(sizeof(a->comm))];
			char cont[STR_ESC_SIZE(sizeof(a->container))];
			char reason[STR_ESC_SIZE(sizeof(a->reason))], t[16];

			fprintf(out, "%-13s %-6s %-28s %8s %-16s %-14s %-20s %8.1f %12" PRId64 " %9.0f %s\n",
				label_name(a->label), domain_name(a->key.domain), ESC(name, a->name),
				report_tgid_str(a->key.tgid, t, sizeof(t)), ESC(comm, a->comm),
				a->container[0] ? ESC(cont, a->container) : "-", since, for_s,
				a->live_bytes, a->ops_per_s, ESC(reason, a->reason));
		}
	}
	free(v);
	if (o)
		report_jprint(o, out);
}

/* ---- behaviour changes ---- */

void report_changes(const struct changes *c, const struct report_clock *clk, enum report_fmt fmt,
		    FILE *out)
{
	json_object *o = NULL, *arr = NULL;
	char when[32], line[768], safe[STR_ESC_SIZE(768)];
	unsigned int i, d;

	if (fmt == REPORT_JSON) {
		o = json_object_new_object();
		arr = json_object_new_array();
		jput(o, "changes", arr);
		jput(o, "found", ju64(c->found));
	} else {
		fprintf(out, "%" PRIu64 " behaviour changes since the start (the newest %u, newest first)\n",
			c->found, c->n);
	}
	for (i = c->n; i-- > 0;) {
		const struct change *ch = &c->ring[(c->head + i) % CHANGE_KEEP];

		utc(when, sizeof(when), clk->t0_ns + ch->window * clk->window_ns, clk);
		if (arr) {
			json_object *j = json_object_new_object(), *b = json_object_new_object(),
				    *a = json_object_new_object();

			jput(j, "at", json_object_new_string(when));
			jput(j, "domain", json_object_new_string(domain_name(ch->key.domain)));
			jput(j, "key", report_jstr(ch->name));
			jput(j, "tgid", jtgid(ch->key.tgid));
			jput(j, "comm", report_jstr(ch->comm));
			jput(j, "from", ch->from == CLUSTER_NOISE ? json_object_new_string("noise") :
								     json_object_new_int(ch->from));
			jput(j, "to", ch->to == CLUSTER_NOISE ? json_object_new_string("noise") :
								 json_object_new_int(ch->to));
			for (d = 0; d < FEAT_DIM; d++) {
				jput(b, change_feature(d), report_jdbl(ch->before[d]));
				jput(a, change_feature(d), report_jdbl(ch->after[d]));
			}
			jput(j, "before", b);
			jput(j, "after", a);
			jput(j, "distance", report_jdbl(ch->dist));
			json_object_array_add(arr, j);
		} else {
			fprintf(out, "%s  %s\n", when,
				str_escape(safe, sizeof(safe), change_line(line, sizeof(line), ch), 0));
		}
	}
	if (o)
		report_jprint(o, out);
}

/* ---- requests ---- */

static int arg_long(const char *name, const char *v, long min, long max, long *out,
		    char *err, size_t n)
{
	char safe[STR_ESC_SIZE(64)];

	if (!str_to_long(v, min, max, out))
		return 0;
	snprintf(err, n, "invalid %s '%.60s': expected an integer in %ld..%ld", name,
		 str_escape_mem(safe, sizeof(safe), v, strnlen(v, 60), 0), min, max);
	return -EINVAL;
}

int report_parse_request(const char *line, struct report_request *rq, char *err, size_t n)
{
	const char *p = line, *w;
	char word[CONTROL_WORD_MAX], safe[STR_ESC_SIZE(CONTROL_WORD_MAX)];
	size_t len;

	memset(rq, 0, sizeof(*rq));
	rq->fmt = REPORT_TEXT;
	rq->n = 10;
	rq->label = LABEL_NONE;
	rq->cmd = -1;
	while (*p == ' ')
		p++;
	if (!strncmp(p, PROTO_JSON, strlen(PROTO_JSON)) &&
	    (p[strlen(PROTO_JSON)] == ' ' || !p[strlen(PROTO_JSON)])) {
		rq->fmt = REPORT_JSON;
		p += strlen(PROTO_JSON);
		while (*p == ' ')
			p++;
	}
	len = strcspn(p, " ");
	rq->cmd = proto_cmd_of(p, len);
	if (rq->cmd < 0) {
		snprintf(err, n, "unknown command '%s' (commands: status, clusters, top, vectors, export, reload)",
			 str_escape_mem(safe, sizeof(safe), p, len < 60 ? len : 60, 0));
		return -EINVAL;
	}
	for (p += len; *p; p += len) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		if (!strncmp(p, "key=", 4) && rq->cmd == CMD_VECTORS) {
			/* the rest of the line: a key may hold spaces */
			if (strlen(p + 4) >= sizeof(rq->key)) {
				snprintf(err, n, "key too long");
				return -EINVAL;
			}
			strcpy(rq->key, p + 4);
			break;
		}
		len = strcspn(p, " ");
		if (len >= sizeof(word)) {
			snprintf(err, n, "argument too long");
			return -EINVAL;
		}
		memcpy(word, p, len);
		word[len] = '\0';
		w = strchr(word, '=');
		if (w && !strncmp(word, "n=", 2) && rq->cmd == CMD_TOP) {
			if (arg_long("count", w + 1, 1, 1000000, &rq->n, err, n))
				return -EINVAL;
		} else if (!w && rq->cmd == CMD_TOP) {
			/* "top 5" as the first CLI sent it */
			if (arg_long("count", word, 1, 1000000, &rq->n, err, n))
				return -EINVAL;
		} else if (w && !strncmp(word, "since=", 6) &&
			   (rq->cmd == CMD_VECTORS || rq->cmd == CMD_EXPORT)) {
			if (arg_long("since", w + 1, 1, 366l * 86400, &rq->since_s, err, n))
				return -EINVAL;
		} else if (w && !strncmp(word, "label=", 6) && rq->cmd == CMD_CLUSTERS) {
			rq->label = label_of(w + 1);
			if (rq->label == LABEL_NONE) {
				snprintf(err, n, "unknown label '%s' (labels: normal, thrash, false_sharing, leak)",
					 str_escape(safe, sizeof(safe), w + 1, 0));
				return -EINVAL;
			}
		} else {
			snprintf(err, n, "unexpected argument '%s' to %s",
				 str_escape(safe, sizeof(safe), word, 0), proto_cmd_names[rq->cmd]);
			return -EINVAL;
		}
	}
	return 0;
}
