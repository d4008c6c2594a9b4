// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Prometheus text exposition of the daemon's numbers (metrics.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"
#include "metrics.h"

void metrics_keys_add(struct metrics_keys *ks, const char *domain, const char *key,
		      int64_t live_objs, int64_t live_bytes)
{
	struct metrics_key *k;

	if (array_room(&ks->v, &ks->cap, ks->n, sizeof(*ks->v), 256)) {
		ks->err = -ENOMEM;
		return;
	}
	k = &ks->v[ks->n++];
	snprintf(k->domain, sizeof(k->domain), "%s", domain);
	snprintf(k->key, sizeof(k->key), "%s", key);
	k->live_objs = live_objs;
	k->live_bytes = live_bytes;
}

static int by_name(const void *a, const void *b)
{
	const struct metrics_key *x = a, *y = b;
	int c = strcmp(x->domain, y->domain);

	return c ? c : strcmp(x->key, y->key);
}

static int by_bytes(const void *a, const void *b)
{
	const struct metrics_key *x = a, *y = b;

	if (x->live_bytes != y->live_bytes)
		return x->live_bytes < y->live_bytes ? 1 : -1;
	return by_name(a, b);
}

void metrics_keys_finish(struct metrics_keys *ks, size_t limit)
{
	size_t i, n = 0;

	if (!ks->n)
		return;
	qsort(ks->v, ks->n, sizeof(*ks->v), by_name);
	for (i = 1; i < ks->n; i++) {
		if (!by_name(&ks->v[n], &ks->v[i])) {
			ks->v[n].live_objs += ks->v[i].live_objs;
			ks->v[n].live_bytes += ks->v[i].live_bytes;
		} else {
			ks->v[++n] = ks->v[i];
		}
	}
	ks->n = n + 1;
	/* keys that hold nothing get no series */
	for (i = n = 0; i < ks->n; i++)
		if (ks->v[i].live_objs || ks->v[i].live_bytes)
			ks->v[n++] = ks->v[i];
	ks->n = n;
	qsort(ks->v, ks->n, sizeof(*ks->v), by_bytes);
	for (i = limit; i < ks->n; i++) {
		ks->omitted++;
		ks->omitted_objs += ks->v[i].live_objs;
		ks->omitted_bytes += ks->v[i].live_bytes;
	}
	if (ks->n > limit)
		ks->n = limit;
}

void metrics_keys_release(struct metrics_keys *ks)
{
	free(ks->v);
	memset(ks, 0, sizeof(*ks));
}

void metrics_named_set(struct metrics_named *s, const char *name, uint64_t v)
{
	if (s->n >= METRICS_MAX_NAMES)
		return;
	s->name[s->n] = name;
	s->v[s->n++] = v;
}

/* Length of the valid UTF-8 character at s (of len bytes), 0 if none. */
static size_t utf8_len(const unsigned char *s, size_t len)
{
	size_t n, i;
	uint32_t c;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, c = s[0] & 0x07;
	else
		return 0;
	if (len < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* overlong, surrogates, past U+10FFFF */
	if ((n == 3 && c < 0x800) || (n == 4 && c < 0x10000) || c > 0x10ffff ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	/* C1 controls */
	if (c >= 0x80 && c <= 0x9f)
		return 0;
	return n;
}

const char *metrics_escape(char *buf, size_t n, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), o = 0, i = 0;

	while (i < len) {
		char e[8];
		size_t el, cl = utf8_len(p + i, len - i);

		if (p[i] == '\\' || p[i] == '"') {
			e[0] = '\\', e[1] = (char)p[i], el = 2;
		} else if (p[i] == '\n') {
			e[0] = '\\', e[1] = 'n', el = 2;
		} else if (!cl || p[i] < 0x20 || p[i] == 0x7f) {
			snprintf(e, sizeof(e), "\\\\x%02x", p[i]);
			el = 5;
			cl = 1;
		} else {
			memcpy(e, p + i, cl);
			el = cl;
		}
		if (o + el >= n)
			break;
		memcpy(buf + o, e, el);
		o += el;
		i += cl ? cl : 1;
	}
	buf[o] = 0;
	return buf;
}


static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void one_u64(FILE *f, const char *name, const char *type, const char *help,
		    uint64_t v)
{
	head(f, name, type, help);
	fprintf(f, "%s %" PRIu64 "\n", name, v);
}

static void one_dbl(FILE *f, const char *name, const char *type, const char *help,
		    double v)
{
	head(f, name, type, help);
	fprintf(f, "%s %.6f\n", name, v);
}

static void named(FILE *f, const char *name, const char *type, const char *help,
		  const char *label, const struct metrics_named *s)
{
	char esc[METRICS_ESC_SIZE(64)];
	unsigned int i;

	head(f, name, type, help);
	for (i = 0; i < s->n; i++)
		fprintf(f, "%s{%s=\"%s\"} %" PRIu64 "\n", name, label,
			metrics_escape(esc, sizeof(esc), s->name[i]), s->v[i]);
}

static void keys(FILE *f, const struct metrics_keys *ks, bool bytes)
{
	char d[METRICS_ESC_SIZE(8)], k[METRICS_ESC_SIZE(METRICS_KEY_LEN)];
	const char *name = bytes ? "cachescope_live_bytes" : "cachescope_live_objects";
	size_t i;

	head(f, name, "gauge", bytes ?
	     "Bytes of the objects or pages a key holds now, summed over processes (top keys)" :
	     "Objects or pages a key holds now, summed over processes (top keys)");
	for (i = 0; i < ks->n; i++)
		fprintf(f, "%s{domain=\"%s\",key=\"%s\"} %" PRId64 "\n", name,
			metrics_escape(d, sizeof(d), ks->v[i].domain),
			metrics_escape(k, sizeof(k), ks->v[i].key),
			bytes ? ks->v[i].live_bytes : ks->v[i].live_objs);
}

int metrics_render(const struct metrics *m, const struct metrics_keys *ks,
		   char **out, size_t *len)
{
	char ver[METRICS_ESC_SIZE(32)];
	FILE *f;

	*out = NULL;
	*len = 0;
	f = open_memstream(out, len);
	if (!f)
		return -ENOMEM;
	head(f, "cachescope_build_info", "gauge", "The daemon's version, as a label; always 1");
	fprintf(f, "cachescope_build_info{version=\"%s\"} 1\n",
		metrics_escape(ver, sizeof(ver), m->version ? m->version : ""));
	one_dbl(f, "cachescope_uptime_seconds", "gauge", "Seconds since tracing started",
		m->uptime_s);
	one_u64(f, "cachescope_events_produced_total", "counter",
		"Records the BPF programs produced", m->produced);
	one_u64(f, "cachescope_events_consumed_total", "counter",
		"Records the daemon read from the rings", m->consumed);
	one_u64(f, "cachescope_events_dropped_total", "counter",
		"Records dropped because a ring was full", m->dropped);
	one_u64(f, "cachescope_events_bad_total", "counter",
		"Records that did not decode", m->bad_records);
	one_u64(f, "cachescope_events_lost_nomem_total", "counter",
		"Records the daemon had no memory to account", m->lost_nomem);
	one_u64(f, "cachescope_unseen_frees_total", "counter",
		"Frees of slab objects whose allocation was not seen", m->unseen_frees);
	one_u64(f, "cachescope_page_refaults_total", "counter",
		"Page-cache folios that refaulted, in closed windows", m->page_refaults);
	one_u64(f, "cachescope_kv_swap_ins_total", "counter",
		"KV-cache blocks swapped in, in closed windows", m->kv_swap_ins);
	one_u64(f, "cachescope_keys", "gauge",
		"Keys (domain, cache or file, process) tracked now", m->keys);
	keys(f, ks, false);
	keys(f, ks, true);
	one_u64(f, "cachescope_live_keys_omitted", "gauge",
		"Keys left out of cachescope_live_objects and _bytes by the bound", ks->omitted);
	head(f, "cachescope_live_omitted_bytes", "gauge", "Live bytes of the keys left out");
	fprintf(f, "cachescope_live_omitted_bytes %" PRId64 "\n", ks->omitted_bytes);
	named(f, "cachescope_vectors_total", "counter", "Feature vectors made, by label",
	      "label", &m->vectors);
	named(f, "cachescope_anomalous_keys", "gauge",
	      "Keys whose latest vector of the last 10 s has the label", "label", &m->anomalous);
	one_u64(f, "cachescope_clustering_runs_total", "counter", "DBSCAN runs", m->cluster_runs);
	one_dbl(f, "cachescope_clustering_seconds_total", "counter",
		"Seconds spent clustering", m->cluster_s_total);
	one_dbl(f, "cachescope_clustering_last_seconds", "gauge",
		"Seconds the last clustering run took", m->cluster_last_s);
	one_u64(f, "cachescope_gpu_records_total", "counter",
		"CUPTI activity records received from the CUPTI library (in its batches' bins, or one by one)",
		m->gpu_records);
	one_u64(f, "cachescope_gpu_bins_total", "counter",
		"Bins of the CUPTI library's batches received (a record each, in its per-record mode)",
		m->gpu_bins);
	one_u64(f, "cachescope_cupti_dropped_records_total", "counter",
		"Records CUPTI said it dropped", m->cupti_dropped);
	one_u64(f, "cachescope_gpu_late_records_total", "counter",
		"GPU records whose work ran in a window closed before they came (folded into the oldest open one)",
		m->gpu_late);
	one_u64(f, "cachescope_csv_rows_total", "counter", "Rows written to the --csv files",
		m->csv_rows);
	one_u64(f, "cachescope_csv_rotations_total", "counter",
		"--csv files committed at --csv-max-mb and a new one begun", m->csv_rotations);
	one_u64(f, "cachescope_csv_rows_dropped_total", "counter",
		"Rows of --csv files removed past --csv-keep", m->csv_rows_dropped);
	one_u64(f, "cachescope_gpu_release_unmatched_total", "counter",
		"GPU memory releases of more than their process had allocated (the live count stops at zero)",
		m->gpu_release_unmatched);
	one_u64(f, "cachescope_slab_sample_shift", "gauge",
		"Largest slab sampling shift now: 1 in 2^shift objects tracked", m->sample_shift);
	one_u64(f, "cachescope_slab_sample_shift_peak", "gauge",
		"Largest slab sampling shift so far", m->sample_shift_peak);
	one_u64(f, "cachescope_slab_sampled_slots", "gauge",
		"Slots of caches with a sampling shift now", m->sample_slots);
	one_u64(f, "cachescope_slab_sample_changes_total", "counter",
		"Sampling shifts changed", m->sample_changes);
	named(f, "cachescope_usdt_rejected_total", "counter",
	      "User-space probe records rejected, by reason: untrusted (a process not believed) or a value out of bounds", "reason",
	      &m->usdt_rejected);
	one_u64(f, "cachescope_control_requests_total", "counter",
		"Control-socket requests answered", m->control_served);
	one_u64(f, "cachescope_control_timeouts_total", "counter",
		"Control-socket clients dropped for slowness", m->control_timeouts);
	one_u64(f, "cachescope_control_denied_total", "counter",
		"Control-socket clients refused for their uid", m->control_denied);
	one_u64(f, "cachescope_control_busy_total", "counter",
		"Control-socket clients refused: too many at once", m->control_busy);
	one_u64(f, "cachescope_control_too_long_total", "counter",
		"Control-socket requests refused for their length", m->control_too_long);
	one_u64(f, "cachescope_scrapes_total", "counter", "Requests for /metrics answered",
		m->scrapes);
	named(f, "cachescope_http_refused_total", "counter",
	      "Metrics-endpoint connections or requests refused, by reason (client_limit: the client had its share open; deadline: the request took too long; host: Host: named another machine; auth: no or a wrong user; auth_rate: a password check a second)",
	      "reason", &m->http_refused);
	if (fclose(f) || !*out) {
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

int metrics_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[64];
	const char *port = NULL;
	unsigned long p;
	char *end;

	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		const char *c = strchr(s, ']');

		if (!c || c[1] != ':' || (size_t)(c - s - 1) >= sizeof(host))
			return -EINVAL;
		memcpy(host, s + 1, c - s - 1);
		host[c - s - 1] = 0;
		port = c + 2;
	} else if (strchr(s, ':')) {
		const char *c = strrchr(s, ':');

		if ((size_t)(c - s) >= sizeof(host) || strchr(s, ':') != c)
			return -EINVAL;
		memcpy(host, s, c - s);
		host[c - s] = 0;
		port = c + 1;
	} else {
		snprintf(host, sizeof(host), "127.0.0.1");
		port = s;
	}
	if (*port < '0' || *port > '9')
		return -EINVAL;
	errno = 0;
	p = strtoul(port, &end, 10);
	if (errno || *end || p > 65535)
		return -EINVAL;
	if (s[0] == '[') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			return -EINVAL;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)p);
		*len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			return -EINVAL;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)p);
		*len = sizeof(*a);
	}
	return 0;
}
