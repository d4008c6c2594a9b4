// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of daemon/change.c: a key whose newest vectors leave every
 * cluster of its own history for another place (or noise) is one
 * behaviour change, told once; a cluster id that changes under a key that
 * did not move, a steady or noisy key, a key back in a place its history
 * knows, or too short a history are none.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "../daemon/change.h"

#define WIN 100000000ull	/* 100 ms */

static struct vec_entry hist[8192];
static struct analysis an;

/* Key id's vectors of windows [from, to): cluster c, every feature x. */
static void put(uint64_t id, uint64_t from, uint64_t to, int c, double x)
{
	uint64_t w;
	unsigned int d;

	for (w = from; w < to; w++) {
		struct vec_entry *v = &hist[an.n++];

		memset(v, 0, sizeof(*v));
		v->window = w;
		v->key.domain = DOM_SLAB;
		v->key.id = id;
		v->key.tgid = 4242;
		snprintf(v->name, sizeof(v->name), "cache-%llu", (unsigned long long)id);
		snprintf(v->comm, sizeof(v->comm), "kvref");
		for (d = 0; d < FEAT_DIM; d++)
			v->f.v[d] = x;
		v->f.v[FEAT_LOCALITY] = c == 2 ? 0.1 : x;
		v->cluster = c;
		v->label = LABEL_NORMAL;
		v->reason = "";
	}
}

static int sort_window(const void *a, const void *b)
{
	const struct vec_entry *x = a, *y = b;

	return x->window < y->window ? -1 : x->window > y->window;
}

static struct change told[8];
static int ntold;

static void keep(const struct change *ch, void *ctx)
{
	(void)ctx;
	told[ntold++] = *ch;
}

static void changes__key_leaves_its_cluster__one_change_told_once(void **state)
{
	struct changes c;
	char line[512];

	(void)state;
	memset(&an, 0, sizeof(an));
	an.v = hist;
	an.eps = 0.08;
	an.min_pts = 5;
	/* key 1: cluster 1 for 10 s, then cluster 2, moved (freq and the
	 * rest 0.3 -> 0.8, locality 0.3 -> 0.1) */
	put(1, 1000, 1100, 1, 0.3);
	put(1, 1100, 1125, 2, 0.8);
	/* key 2: its cluster renamed (1 -> 3) as DBSCAN merges clusters, but
	 * it did not move */
	put(2, 1000, 1100, 1, 0.5);
	put(2, 1100, 1125, 3, 0.52);
	/* key 3: steady */
	put(3, 1000, 1125, 4, 0.6);
	/* key 4: too short a history */
	put(4, 1050, 1125, 1, 0.3);
	/* key 5: moved far, but all keys' clustering kept it in one big
	 * cluster (DBSCAN chains): its own history says it moved */
	put(5, 1000, 1100, 6, 0.2);
	put(5, 1100, 1125, 6, 0.6);
	/* key 6: noisy but steady: alternating 0.3 and 0.4, after as before */
	for (uint64_t w = 1000; w < 1125; w++)
		put(6, w, w + 1, 1, w % 2 ? 0.3 : 0.4);
	/* key 8: back to a place its history knows (a server's threads moved
	 * back by the scheduler): its mean moved, it did not go anywhere new */
	put(8, 1000, 1040, 1, 0.3);
	put(8, 1040, 1100, 1, 0.8);
	put(8, 1100, 1125, 1, 0.3);
	qsort(hist, an.n, sizeof(hist[0]), sort_window);
	changes_init(&c);
	ntold = 0;
	assert_int_equal(changes_scan(&c, &an, 1125, WIN, keep, NULL), 2);
	assert_int_equal(ntold, 2);
	if (told[0].key.id == 5) {
		struct change t = told[0];

		told[0] = told[1];
		told[1] = t;
	}
	assert_int_equal(told[0].key.id, 1);
	assert_int_equal(told[1].key.id, 5);
	assert_int_equal(told[0].from, 1);
	assert_int_equal(told[0].to, 2);
	/* the newest span (2 s back) is all new: its first vector */
	assert_int_equal(told[0].window, 1105);
	/* before: the history's last 10 s (up to 4 s back) */
	assert_true(told[0].before[FEAT_FREQ] > 0.299 && told[0].before[FEAT_FREQ] < 0.301);
	assert_true(told[0].after[FEAT_FREQ] > 0.799 && told[0].after[FEAT_FREQ] < 0.801);
	assert_true(told[0].dist > 1.01 && told[0].dist < 1.03);
	change_line(line, sizeof(line), &told[0]);
	assert_string_equal(line, "slab cache-1 of pid 4242 (kvref) left cluster 1 for cluster 2: freq +0.50 (0.30 to 0.80) hot +0.50 (0.30 to 0.80) entr +0.50 (0.30 to 0.80) loc -0.20 (0.30 to 0.10) numa +0.50 (0.30 to 0.80); distance 1.02");
	assert_string_equal(change_line(line, sizeof(line), &told[1]),
			    "slab cache-5 of pid 4242 (kvref) left its history's clusters, staying in cluster 6: freq +0.40 (0.20 to 0.60) hot +0.40 (0.20 to 0.60) entr +0.40 (0.20 to 0.60) loc +0.40 (0.20 to 0.60) numa +0.40 (0.20 to 0.60); distance 0.89");
	/* told once: the next run finds nothing new */
	assert_int_equal(changes_scan(&c, &an, 1126, WIN, keep, NULL), 0);
	assert_int_equal(c.found, 2);
	assert_int_equal(c.n, 2);
	/* gone with its key */
	changes_key_gone(&c, &told[0].key);
	changes_release(&c);
}

/* Into noise is a change too: a key whose behaviour no cluster knows; and
 * the history the newest span is tested against ends 2 s before it, so a
 * new place's first vectors do not make it known. */
static void changes__key_turns_to_noise__change_to_noise(void **state)
{
	struct changes c;
	char line[512];

	(void)state;
	memset(&an, 0, sizeof(an));
	an.v = hist;
	an.eps = 0.08;
	an.min_pts = 5;
	put(7, 500, 600, 5, 0.2);
	put(7, 600, 640, CLUSTER_NOISE, 0.7);
	changes_init(&c);
	ntold = 0;
	assert_int_equal(changes_scan(&c, &an, 640, WIN, keep, NULL), 1);
	assert_int_equal(told[0].to, CLUSTER_NOISE);
	assert_int_equal(told[0].window, 620);
	assert_non_null(strstr(change_line(line, sizeof(line), &told[0]), "left cluster 5 for noise:"));
	changes_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(changes__key_leaves_its_cluster__one_change_told_once),
		cmocka_unit_test(changes__key_turns_to_noise__change_to_noise),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
