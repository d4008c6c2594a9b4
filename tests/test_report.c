// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the control socket's tables (daemon/report.c): every JSON
 * answer parses back with json-c (UTF-8 checked) to the values it was made
 * from, names of other processes come out escaped the same in text and
 * JSON, and requests parse as proto.h says.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <json-c/json.h>
#include "../daemon/proto.h"
#include "../daemon/anomaly.h"
#include "../daemon/change.h"
#include "../daemon/report.h"

/* a comm that is not UTF-8 (0xff), with an escape sequence and a backslash */
#define EVIL_COMM "ev\xff\x1b[31m\\x"
#define EVIL_ESC "ev\\xff\\x1b[31m\\\\x"

static char *render(void (*fn)(void *, enum report_fmt, FILE *), void *arg, enum report_fmt fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fn(arg, fmt, f);
	fclose(f);
	return buf;
}

/* parse with UTF-8 validation: the document must be one valid JSON value */
static json_object *parse(const char *s)
{
	struct json_tokener *tok = json_tokener_new();
	json_object *o;

	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, s, strlen(s));
	if (!o)
		fail_msg("not JSON (%s): %s", json_tokener_error_desc(json_tokener_get_error(tok)), s);
	/* one document, all of it, ending in a newline */
	assert_int_equal(json_tokener_get_parse_end(tok), strlen(s));
	assert_int_equal(s[strlen(s) - 1], '\n');
	json_tokener_free(tok);
	return o;
}

static json_object *get(json_object *o, const char *k)
{
	json_object *v;

	if (!json_object_object_get_ex(o, k, &v))
		fail_msg("no \"%s\" in %s", k, json_object_to_json_string(o));
	return v;
}

static void stats_fn(void *arg, enum report_fmt fmt, FILE *out)
{
	report_stats(arg, fmt, out);
}

static void report_stats__json__round_trips_values(void **state)
{
	struct report_fields f = { .n = 0 };
	json_object *o;
	char *s;

	(void)state;
	report_dbl(&f, "uptime_s", 12.5, 1);
	report_u64(&f, "produced", 18446744073709551615ull);
	report_u64(&f, "dropped", 0);
	s = render(stats_fn, &f, REPORT_TEXT);
	assert_string_equal(s, "uptime_s 12.5\nproduced 18446744073709551615\ndropped 0\n");
	free(s);
	s = render(stats_fn, &f, REPORT_JSON);
	o = parse(s);
	assert_true(json_object_get_double(get(o, "uptime_s")) == 12.5);
	assert_true(json_object_get_uint64(get(o, "produced")) == 18446744073709551615ull);
	assert_int_equal(json_object_get_uint64(get(o, "dropped")), 0);
	json_object_put(o);
	free(s);
}

static void top_fn(void *arg, enum report_fmt fmt, FILE *out)
{
	report_top(arg, 100, 10, fmt, out);
}

static void report_top__non_utf8_comm__escaped_alike_in_text_and_json(void **state)
{
	struct acc a = { .key = { .domain = DOM_SLAB, .tgid = 4242 }, .name = "kmalloc-64",
			 .comm = EVIL_COMM };
	struct acc b = { .key = { .domain = DOM_PAGE, .tgid = CS_TGID_OTHER }, .name = "8:1:77",
			 .file = "/var/log/x", .comm = "" };
	struct wslot sa = { .allocs = 5, .frees = 3 }, sb = { .page_adds = 90, .refaults = 4 };
	struct wrow ra = { .window = 7, .s = &sa, .live_objs = 2 };
	struct wrow rb = { .window = 7, .s = &sb };
	struct report_snap snap = { 0 };
	json_object *o, *keys, *k;
	char *s;

	(void)state;
	wrow_of_key(&ra, &a);
	wrow_of_key(&rb, &b);
	report_snap_add(&snap, &ra, LABEL_LEAK);
	report_snap_add(&snap, &rb, LABEL_NONE);
	s = render(top_fn, &snap, REPORT_TEXT);
	assert_non_null(strstr(s, EVIL_ESC));
	assert_null(strchr(s, '\x1b'));
	/* the label of each key's vector, last; "-" where none was made */
	assert_non_null(strstr(s, " leak\n"));
	assert_non_null(strstr(s, " -\n"));
	free(s);
	s = render(top_fn, &snap, REPORT_JSON);
	o = parse(s);
	assert_int_equal(json_object_get_uint64(get(o, "window")), 7);
	keys = get(o, "keys");
	assert_int_equal(json_object_array_length(keys), 2);
	/* busiest first: 94 page events before 8 slab ones */
	k = json_object_array_get_idx(keys, 0);
	assert_string_equal(json_object_get_string(get(k, "file")), "/var/log/x");
	assert_string_equal(json_object_get_string(get(k, "tgid")), "others");
	assert_null(json_object_object_get(k, "label") ? json_object_get_string(get(k, "label")) : NULL);
	k = json_object_array_get_idx(keys, 1);
	assert_string_equal(json_object_get_string(get(k, "comm")), EVIL_ESC);
	assert_string_equal(json_object_get_string(get(k, "label")), "leak");
	assert_int_equal(json_object_get_int(get(k, "tgid")), 4242);
	assert_int_equal(json_object_get_int64(get(k, "live")), 2);
	json_object_put(o);
	free(s);
	report_snap_release(&snap);
}

static struct anomalies *anom_arg;

static void anomalies_fn(void *arg, enum report_fmt fmt, FILE *out)
{
	/* window 0 at 1000 s of the monotonic clock, real time 1.8e9 s later */
	struct report_clock clk = { 1000ull * 1000000000, 100000000, 1800000000ull * 1000000000 };

	(void)arg;
	report_anomalies(anom_arg, &clk, 1012ull * 1000000000, fmt, out);
}

/* The keys anomalous now: names escaped alike in text and JSON, since
 * when in UTC, for how long, the bounded cause beside the reason. */
static void report_anomalies__leak_now__named_escaped_with_cause(void **state)
{
	struct acc a = { .key = { .domain = DOM_SLAB, .tgid = 4242, .id = 9 }, .name = "filp",
			 .comm = EVIL_COMM };
	struct wslot sa = { .allocs = 50, .frees = 10 };
	struct wrow ra = { .window = 20, .s = &sa, .live_objs = 300, .live_bytes = 76800,
			   .start_ns = 1002ull * 1000000000 };
	struct anomalies as;
	json_object *o, *arr, *k;
	char *s;

	(void)state;
	wrow_of_key(&ra, &a);
	anomalies_init(&as, 100000000, NULL, NULL, 0, 0);
	anom_arg = &as;
	s = render(anomalies_fn, NULL, REPORT_TEXT);
	assert_string_equal(s, "0 anomalous keys now (0 started, 0 ended since the start)\n");
	free(s);
	assert_int_equal(anomalies_vector(&as, &ra, LABEL_LEAK, "leak: filp " EVIL_COMM, "web-1"), 0);
	s = render(anomalies_fn, NULL, REPORT_TEXT);
	assert_non_null(strstr(s, "1 anomalous keys now (1 started, 0 ended"));
	assert_non_null(strstr(s, "leak          slab   filp"));
	assert_non_null(strstr(s, " 4242 " EVIL_ESC));
	assert_non_null(strstr(s, "web-1"));
	assert_non_null(strstr(s, "2027-01-15T08:16:42Z"));	/* 1.8e9 + 1002 s */
	assert_non_null(strstr(s, "    10.0        76800"));
	assert_non_null(strstr(s, "leak: filp " EVIL_ESC "\n"));
	assert_null(strchr(s, '\x1b'));
	free(s);
	s = render(anomalies_fn, NULL, REPORT_JSON);
	o = parse(s);
	arr = get(o, "anomalies");
	assert_int_equal(json_object_array_length(arr), 1);
	k = json_object_array_get_idx(arr, 0);
	assert_string_equal(json_object_get_string(get(k, "label")), "leak");
	assert_string_equal(json_object_get_string(get(k, "key")), "filp");
	assert_string_equal(json_object_get_string(get(k, "comm")), EVIL_ESC);
	assert_int_equal(json_object_get_int(get(k, "tgid")), 4242);
	assert_string_equal(json_object_get_string(get(k, "container")), "web-1");
	assert_int_equal(json_object_get_int64(get(k, "live_bytes")), 76800);
	assert_true(json_object_get_double(get(k, "ops_per_s")) == 600);
	assert_true(json_object_get_double(get(k, "for_s")) == 10);
	assert_string_equal(json_object_get_string(get(k, "cause")),
			    "objects older than their lifetimes keep growing and are not freed");
	assert_string_equal(json_object_get_string(get(k, "reason")), "leak: filp " EVIL_ESC);
	json_object_put(o);
	free(s);
	anomalies_release(&as);
}

static const struct changes *chg_arg;

static void changes_fn(void *arg, enum report_fmt fmt, FILE *out)
{
	struct report_clock clk = { 1000ull * 1000000000, 100000000, 1800000000ull * 1000000000 };

	(void)arg;
	report_changes(chg_arg, &clk, fmt, out);
}

/* A behaviour change: when in UTC, the key and process escaped alike in
 * text and JSON, the features that moved, both centroids in JSON. */
static void report_changes__one_change__when_who_and_what_moved(void **state)
{
	struct changes c;
	struct change *ch;
	json_object *o, *arr, *k;
	char *s;

	(void)state;
	changes_init(&c);
	chg_arg = &c;
	s = render(changes_fn, NULL, REPORT_TEXT);
	assert_string_equal(s, "0 behaviour changes since the start (the newest 0, newest first)\n");
	free(s);
	ch = &c.ring[0];
	ch->key = (struct wkey){ .domain = DOM_SLAB, .tgid = 4242, .id = 9 };
	snprintf(ch->name, sizeof(ch->name), "kmalloc-512");
	snprintf(ch->comm, sizeof(ch->comm), "%s", EVIL_COMM);
	ch->window = 20;
	ch->from = 0;
	ch->to = CLUSTER_NOISE;
	ch->before[FEAT_LOCALITY] = 0.97;
	ch->dist = 0.97;
	c.n = 1;
	c.found = 1;
	s = render(changes_fn, NULL, REPORT_TEXT);
	assert_non_null(strstr(s, "1 behaviour changes since the start (the newest 1"));
	assert_non_null(strstr(s, "2027-01-15T08:16:42Z  slab kmalloc-512 of pid 4242 (" EVIL_ESC
			       ") left cluster 0 for noise: loc -0.97 (0.97 to 0.00); distance 0.97\n"));
	assert_null(strchr(s, '\x1b'));
	free(s);
	s = render(changes_fn, NULL, REPORT_JSON);
	o = parse(s);
	assert_int_equal(json_object_get_int(get(o, "found")), 1);
	arr = get(o, "changes");
	assert_int_equal(json_object_array_length(arr), 1);
	k = json_object_array_get_idx(arr, 0);
	assert_string_equal(json_object_get_string(get(k, "key")), "kmalloc-512");
	assert_string_equal(json_object_get_string(get(k, "comm")), EVIL_ESC);
	assert_string_equal(json_object_get_string(get(k, "to")), "noise");
	assert_int_equal(json_object_get_int(get(k, "from")), 0);
	assert_true(json_object_get_double(get(get(k, "before"), "loc")) == 0.97);
	assert_true(json_object_get_double(get(get(k, "after"), "loc")) == 0);
	json_object_put(o);
	free(s);
	changes_release(&c);
}

struct clusters_arg {
	struct analysis *a;
	enum cs_label label;
};

static void clusters_fn(void *arg, enum report_fmt fmt, FILE *out)
{
	struct clusters_arg *c = arg;

	report_clusters(c->a, c->label, fmt, out);
}

static void report_clusters__json_and_label_filter__round_trip(void **state)
{
	struct cluster_info cl[2] = {
		{ .id = 3, .label = LABEL_NORMAL, .size = 40, .counts = { 35, 0, 0, 5 },
		  .centroid = { 0.1, 0.2, 0.3, 0.4, 0.5 }, .keys = "filp,dentry",
		  .reason = "normal: 35 of 40 members normal; leak 5 (kv-pool)" },
		{ .id = 1, .label = LABEL_THRASH, .size = 9, .counts = { 0, 9, 0, 0 },
		  .keys = "kmalloc-" EVIL_COMM, .reason = "thrash" },
	};
	struct vec_entry v[2] = { { .cluster = CLUSTER_NOISE, .label = LABEL_LEAK },
				  { .cluster = 3, .label = LABEL_NORMAL } };
	struct analysis a = { .v = v, .n = 2, .clusters = cl, .nclusters = 2, .noise = 1,
			      .eps = 0.08, .min_pts = 5, .runs = 4 };
	struct clusters_arg arg = { &a, LABEL_NONE };
	json_object *o, *list, *c;
	char *s;

	(void)state;
	s = render(clusters_fn, &arg, REPORT_JSON);
	o = parse(s);
	list = get(o, "clusters");
	assert_int_equal(json_object_array_length(list), 2);
	c = json_object_array_get_idx(list, 0);	/* by id */
	assert_int_equal(json_object_get_int(get(c, "id")), 1);
	assert_string_equal(json_object_get_string(get(c, "label")), "thrash");
	assert_string_equal(json_object_get_string(get(c, "keys")), "kmalloc-" EVIL_ESC);
	c = json_object_array_get_idx(list, 1);
	assert_int_equal(json_object_array_length(get(c, "centroid")), 5);
	assert_true(json_object_get_double(json_object_array_get_idx(get(c, "centroid"), 4)) == 0.5);
	assert_int_equal(json_object_get_int(get(get(c, "labels"), "leak")), 5);
	assert_int_equal(json_object_get_int(get(get(o, "noise_labels"), "leak")), 1);
	json_object_put(o);
	free(s);
	/* leak: the normal cluster holds leak vectors, the thrash one none */
	arg.label = LABEL_LEAK;
	s = render(clusters_fn, &arg, REPORT_JSON);
	o = parse(s);
	list = get(o, "clusters");
	assert_int_equal(json_object_array_length(list), 1);
	assert_int_equal(json_object_get_int(get(json_object_array_get_idx(list, 0), "id")), 3);
	json_object_put(o);
	free(s);
	arg.label = LABEL_FALSE_SHARING;
	s = render(clusters_fn, &arg, REPORT_TEXT);
	assert_non_null(strstr(s, "(no false_sharing cluster)"));
	free(s);
}

static void vectors_fn(void *arg, enum report_fmt fmt, FILE *out)
{
	struct report_clock clk = { .t0_ns = 1000000000ull, .window_ns = 100000000ull,
				    .real_off_ns = 1700000000ull * 1000000000ull };

	report_vectors(arg, &clk, 5, "kv-pool", fmt, out);
}

static void report_vectors__since_and_key__only_those(void **state)
{
	struct vec_entry v[3] = {
		{ .window = 4, .name = "kv-pool", .label = LABEL_LEAK },
		{ .window = 6, .name = "kv-pool", .comm = EVIL_COMM, .label = LABEL_LEAK,
		  .key = { .domain = DOM_KV, .tgid = 9 }, .cluster = 2, .reason = "leak: grows" },
		{ .window = 7, .name = "filp", .label = LABEL_NORMAL },
	};
	struct analysis a = { .v = v, .n = 3 };
	json_object *o, *list, *e;
	char *s;

	(void)state;
	s = render(vectors_fn, &a, REPORT_JSON);
	o = parse(s);
	list = get(o, "vectors");
	assert_int_equal(json_object_array_length(list), 1);
	e = json_object_array_get_idx(list, 0);
	assert_int_equal(json_object_get_int(get(e, "window")), 6);
	/* t0 1 s + 6 windows of 0.1 s, on the wall clock */
	assert_true(json_object_get_double(get(e, "ts")) > 1700000001.59 &&
		    json_object_get_double(get(e, "ts")) < 1700000001.61);
	assert_string_equal(json_object_get_string(get(e, "comm")), EVIL_ESC);
	assert_string_equal(json_object_get_string(get(e, "label")), "leak");
	assert_int_equal(json_object_array_length(get(e, "features")), 5);
	json_object_put(o);
	free(s);
	s = render(vectors_fn, &a, REPORT_TEXT);
	assert_non_null(strstr(s, EVIL_ESC));
	assert_null(strstr(s, "filp"));
	free(s);
}

static void report_parse_request__grammar__as_proto_h_says(void **state)
{
	struct report_request rq;
	char err[256];

	(void)state;
	assert_int_equal(report_parse_request("stats", &rq, err, sizeof(err)), 0);
	assert_int_equal(rq.cmd, CMD_STATUS);
	assert_int_equal(rq.fmt, REPORT_TEXT);
	assert_int_equal(report_parse_request("json top n=3", &rq, err, sizeof(err)), 0);
	assert_int_equal(rq.cmd, CMD_TOP);
	assert_int_equal(rq.fmt, REPORT_JSON);
	assert_int_equal(rq.n, 3);
	assert_int_equal(report_parse_request("top 5", &rq, err, sizeof(err)), 0);
	assert_int_equal(rq.n, 5);
	assert_int_equal(report_parse_request("clusters label=leak", &rq, err, sizeof(err)), 0);
	assert_int_equal(rq.label, LABEL_LEAK);
	assert_int_equal(report_parse_request("vectors since=30 key=8:1:2 a b", &rq, err,
					      sizeof(err)), 0);
	assert_int_equal(rq.since_s, 30);
	assert_string_equal(rq.key, "8:1:2 a b");
	assert_int_equal(report_parse_request("json bogus", &rq, err, sizeof(err)), -EINVAL);
	assert_int_equal(rq.fmt, REPORT_JSON);	/* the error is answered in JSON */
	assert_non_null(strstr(err, "unknown command 'bogus'"));
	assert_int_equal(report_parse_request("top n=0", &rq, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "invalid count '0'"));
	assert_int_equal(report_parse_request("clusters label=x", &rq, err, sizeof(err)), -EINVAL);
	assert_int_equal(report_parse_request("status since=4", &rq, err, sizeof(err)), -EINVAL);
	assert_int_equal(report_parse_request("export since=1x", &rq, err, sizeof(err)), -EINVAL);
}

static void error_fn(void *arg, enum report_fmt fmt, FILE *out)
{
	report_error(fmt, out, "no key '%s'", (const char *)arg);
}

static void report_error__json__one_object_escaped(void **state)
{
	json_object *o;
	char *s;

	(void)state;
	s = render(error_fn, EVIL_COMM, REPORT_JSON);
	o = parse(s);
	assert_string_equal(json_object_get_string(get(o, "error")), "no key '" EVIL_ESC "'");
	json_object_put(o);
	free(s);
	s = render(error_fn, EVIL_COMM, REPORT_TEXT);
	assert_string_equal(s, "error: no key '" EVIL_ESC "'\n");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(report_stats__json__round_trips_values),
		cmocka_unit_test(report_top__non_utf8_comm__escaped_alike_in_text_and_json),
		cmocka_unit_test(report_anomalies__leak_now__named_escaped_with_cause),
		cmocka_unit_test(report_changes__one_change__when_who_and_what_moved),
		cmocka_unit_test(report_clusters__json_and_label_filter__round_trip),
		cmocka_unit_test(report_vectors__since_and_key__only_those),
		cmocka_unit_test(report_parse_request__grammar__as_proto_h_says),
		cmocka_unit_test(report_error__json__one_object_escaped),
	};

	return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
