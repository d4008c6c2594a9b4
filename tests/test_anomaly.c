// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of daemon/anomaly.c: when a key's anomaly starts and ends,
 * which events are told under the rate limit (never an end without its
 * start), and the table's order.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "../daemon/anomaly.h"

#define S 1000000000ull
#define WIN (100 * 1000000ull)

struct told {
	enum anomaly_event ev[64];
	uint64_t lasted_ns[64];
	char name[64][64];
	int n;
};

static void keep(enum anomaly_event ev, const struct anomaly *a, uint64_t now_ns, void *ctx)
{
	struct told *t = ctx;

	assert_true(t->n < 64);
	t->ev[t->n] = ev;
	t->lasted_ns[t->n] = now_ns - a->since_ns;
	snprintf(t->name[t->n], sizeof(t->name[0]), "%s", a->name);
	t->n++;
}

/* A row of key (id, tgid) at window start ts, holding bytes. */
static struct wrow row(struct wkey *k, struct wslot *s, uint64_t id, uint32_t tgid, uint64_t ts,
		       int64_t bytes, const char *name)
{
	struct wrow r;

	memset(k, 0, sizeof(*k));
	memset(s, 0, sizeof(*s));
	memset(&r, 0, sizeof(r));
	k->domain = DOM_SLAB;
	k->id = id;
	k->tgid = tgid;
	s->allocs = 30;
	s->frees = 10;
	r.key = k;
	r.s = s;
	r.start_ns = ts;
	r.name = name;
	r.file = "";
	r.comm = "leaker";
	r.live_bytes = bytes;
	r.live_objs = bytes / 256;
	return r;
}

/* One leak vector a window for 3 s: one start, told once; quiet for the
 * recovery time: one end, lasting from its first window. */
static void anomalies__leak_then_quiet__one_start_one_end(void **state)
{
	struct told t = { .n = 0 };
	struct anomalies as;
	struct wkey k;
	struct wslot s;
	struct wrow r;
	uint64_t ts;

	(void)state;
	anomalies_init(&as, WIN, keep, &t, 0, 0);
	for (ts = 10 * S; ts < 13 * S; ts += WIN) {
		r = row(&k, &s, 1, 42, ts, 4096, "filp");
		assert_int_equal(anomalies_vector(&as, &r, LABEL_LEAK, "leak: filp grows", "c1"), 0);
		anomalies_expire(&as, ts);
	}
	assert_int_equal(t.n, 1);
	assert_int_equal(t.ev[0], ANOMALY_STARTS);
	assert_string_equal(t.name[0], "filp");
	/* a normal vector is no end; the quiet time is */
	r = row(&k, &s, 1, 42, 13 * S, 4096, "filp");
	assert_int_equal(anomalies_vector(&as, &r, LABEL_NORMAL, "normal", "c1"), 0);
	/* the last leak vector was of the window at 12.9 s */
	anomalies_expire(&as, 13 * S - WIN + ANOMALY_RECOVER_NS - 1);
	assert_int_equal(t.n, 1);
	assert_non_null(anomalies_find(&as, &k));
	assert_string_equal(anomalies_find(&as, &k)->container, "c1");
	assert_int_equal(anomalies_find(&as, &k)->vectors, 30);
	/* ops: (30 + 10) in 0.1 s */
	assert_true(anomalies_find(&as, &k)->ops_per_s > 399 && anomalies_find(&as, &k)->ops_per_s < 401);
	anomalies_expire(&as, 13 * S - WIN + ANOMALY_RECOVER_NS);
	assert_int_equal(t.n, 2);
	assert_int_equal(t.ev[1], ANOMALY_ENDS);
	assert_int_equal(t.lasted_ns[1], 3 * S - WIN + ANOMALY_RECOVER_NS);
	assert_null(anomalies_find(&as, &k));
	assert_int_equal(as.started, 1);
	{
		struct anomaly a = { .key = k, .label = LABEL_LEAK, .since_ns = 10 * S,
				     .vectors = 30, .name = "filp", .comm = "leaker",
				     .container = "web-1", .reason = "leak: filp grows" };
		char line[512];

		assert_string_equal(anomaly_line(line, sizeof(line), ANOMALY_STARTS, &a, 10 * S),
				    "leak starts: slab filp of pid 42 (leaker) in container web-1: leak: filp grows");
		assert_string_equal(anomaly_line(line, sizeof(line), ANOMALY_ENDS, &a, 22 * S + S / 2),
				    "leak ends after 12.5 s: slab filp of pid 42 (leaker) in container web-1: no leak vector for 10 s (30 vectors)");
		a.container[0] = 0;
		a.key.tgid = CS_TGID_OTHER;
		assert_string_equal(anomaly_line(line, sizeof(line), ANOMALY_KEY_GONE, &a, 11 * S),
				    "leak ends after 1.0 s: slab filp of other processes: its key is gone: the process exited or the key was merged (30 vectors)");
		/* cut, never overrun */
		anomaly_line(line, 20, ANOMALY_ENDS, &a, 11 * S);
		assert_int_equal(strlen(line), 19);
	}
	assert_int_equal(as.ended, 1);
	anomalies_release(&as);
}

/* Another anomaly label on the key ends the first and starts the second;
 * the key leaving the table ends it too. */
static void anomalies__label_changes_or_key_gone__ended(void **state)
{
	struct told t = { .n = 0 };
	struct anomalies as;
	struct wkey k;
	struct wslot s;
	struct wrow r;

	(void)state;
	anomalies_init(&as, WIN, keep, &t, 0, 0);
	r = row(&k, &s, 7, 1, 1 * S, 100, "kv-pool");
	anomalies_vector(&as, &r, LABEL_LEAK, "leak", NULL);
	r = row(&k, &s, 7, 1, 2 * S, 100, "kv-pool");
	anomalies_vector(&as, &r, LABEL_THRASH, "thrash", NULL);
	assert_int_equal(t.n, 3);
	assert_int_equal(t.ev[0], ANOMALY_STARTS);
	assert_int_equal(t.ev[1], ANOMALY_REPLACED);
	assert_int_equal(t.lasted_ns[1], 1 * S);
	assert_int_equal(t.ev[2], ANOMALY_STARTS);
	assert_int_equal(anomalies_find(&as, &k)->label, LABEL_THRASH);
	anomalies_key_gone(&as, &k, 3 * S);
	assert_int_equal(t.n, 4);
	assert_int_equal(t.ev[3], ANOMALY_KEY_GONE);
	assert_null(anomalies_find(&as, &k));
	anomalies_key_gone(&as, &k, 3 * S);	/* none: nothing */
	assert_int_equal(t.n, 4);
	anomalies_release(&as);
}

/* Ten keys turn at once under a burst of 3 and 1 a second: 3 starts are
 * told, 7 counted; their ends are told for the 3 alone; a second later
 * one more start may be told. */
static void anomalies__flood__limited_no_end_without_start(void **state)
{
	struct told t = { .n = 0 };
	struct anomalies as;
	struct wkey k[11];
	struct wslot s;
	struct wrow r;
	int i, starts = 0, ends = 0;

	(void)state;
	anomalies_init(&as, WIN, keep, &t, 1, 3);
	for (i = 0; i < 10; i++) {
		r = row(&k[i], &s, 100 + i, 1, 5 * S, 10, "filp");
		anomalies_vector(&as, &r, LABEL_LEAK, "leak", NULL);
	}
	assert_int_equal(t.n, 3);
	assert_int_equal(as.events_limited, 7);
	assert_int_equal(as.started, 10);
	r = row(&k[10], &s, 999, 1, 6 * S, 10, "dentry");
	anomalies_vector(&as, &r, LABEL_LEAK, "leak", NULL);
	assert_int_equal(t.n, 4);
	anomalies_expire(&as, 6 * S + ANOMALY_RECOVER_NS);
	for (i = 0; i < t.n; i++) {
		starts += t.ev[i] == ANOMALY_STARTS;
		ends += t.ev[i] == ANOMALY_ENDS;
	}
	assert_int_equal(starts, 4);
	assert_int_equal(ends, 4);
	assert_int_equal(as.ended, 11);
	assert_int_equal(as.events_limited, 7 + 7);
	anomalies_release(&as);
}

/* The table: most live bytes first, then the oldest. */
static void anomalies_sorted__by_bytes_then_age(void **state)
{
	const struct anomaly **v;
	struct anomalies as;
	struct wkey k[3];
	struct wslot s;
	struct wrow r;

	(void)state;
	anomalies_init(&as, WIN, NULL, NULL, 0, 0);
	assert_int_equal(anomalies_sorted(&as, &v), 0);
	r = row(&k[0], &s, 1, 1, 2 * S, 100, "a");
	anomalies_vector(&as, &r, LABEL_LEAK, "leak", NULL);
	r = row(&k[1], &s, 2, 1, 1 * S, 100, "b");
	anomalies_vector(&as, &r, LABEL_LEAK, "leak", NULL);
	r = row(&k[2], &s, 3, 1, 3 * S, 5000, "c");
	anomalies_vector(&as, &r, LABEL_FALSE_SHARING, "false_sharing", NULL);
	assert_int_equal(anomalies_sorted(&as, &v), 3);
	assert_string_equal(v[0]->name, "c");
	assert_string_equal(v[1]->name, "b");
	assert_string_equal(v[2]->name, "a");
	free(v);
	anomalies_release(&as);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(anomalies__leak_then_quiet__one_start_one_end),
		cmocka_unit_test(anomalies__label_changes_or_key_gone__ended),
		cmocka_unit_test(anomalies__flood__limited_no_end_without_start),
		cmocka_unit_test(anomalies_sorted__by_bytes_then_age),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
