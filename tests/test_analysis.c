// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the analysis stage (daemon/analysis.c): history, DBSCAN
 * runs, stable cluster ids, labels of clusters. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "../daemon/analysis.h"

#define WIN_NS 100000000ull

static struct analysis an;

static int setup(void **state)
{
	struct analysis_params p = { .eps = 0.08, .min_pts = 3, .history_windows = 50 };
	struct rules rules;

	(void)state;
	rules_defaults(&rules);
	analysis_init(&an, &rules, &p);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	analysis_release(&an);
	return 0;
}

/* A row of key `name` in window w: group 'a' is busy and local, group 'b'
 * is quieter, spread over call sites and freed remotely; 'c' is quieter
 * still, with no call site of note. */
static const struct vec_entry *add(uint64_t w, const char *name, char group, int jitter)
{
	static struct acc acc;
	static struct wslot s;
	struct wrow r = { 0 };

	memset(&acc, 0, sizeof(acc));
	memset(&s, 0, sizeof(s));
	acc.key.domain = DOM_SLAB;
	acc.key.id = (uint64_t)name[0] << 40;
	snprintf(acc.name, sizeof(acc.name), "%s", name);
	s.window = w;
	if (group == 'a') {
		s.allocs = s.frees = 500 + jitter;
		s.same_cpu_frees = s.frees;
		r.top_site_share = 1.0;
	} else if (group == 'c') {
		s.allocs = s.frees = 3;
		s.remote_frees = s.frees;
	} else {
		s.allocs = s.frees = 20 + jitter;
		s.remote_frees = s.frees;
		r.top_site_share = 0.3;
		r.same_size_share = 0.5;
	}
	r.window = w;
	wrow_of_key(&r, &acc);
	r.s = &s;
	return analysis_add(&an, &r, WIN_NS);
}

static void analysis_recluster__two_behaviours__two_clusters(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < 10; i++) {
		add(i, "filp", 'a', i);
		add(i, "skb", 'b', i % 3);
	}
	assert_int_equal(analysis_recluster(&an, 10), 2);
	assert_int_equal(an.nclusters, 2);
	assert_int_equal(an.noise, 0);
	/* numbered in order of first members: filp's cluster first */
	assert_int_equal(an.v[0].cluster, 0);
	assert_int_equal(an.v[1].cluster, 1);
	for (i = 0; i < 20; i++)
		assert_int_equal(an.v[i].cluster, i % 2);
	assert_int_equal(an.clusters[0].size + an.clusters[1].size, 20);
}

static void analysis_recluster__first_cluster_ages_out__second_keeps_its_id(void **state)
{
	int i, k;

	(void)state;
	for (i = 0; i < 10; i++) {
		add(i, "filp", 'a', i);
		add(i, "skb", 'b', i % 3);
	}
	assert_int_equal(analysis_recluster(&an, 10), 2);
	/* filp goes quiet; skb goes on; its first run id was 1 */
	for (i = 10; i < 60; i++)
		add(i, "skb", 'b', i % 3);
	k = analysis_recluster(&an, 60);
	assert_int_equal(k, 1);
	assert_int_equal(an.clusters[0].id, 1);
	for (i = 0; i < (int)an.n; i++) {
		assert_int_equal(an.v[i].cluster, 1);
		assert_true(an.v[i].window + 50 > 60);	/* older ones trimmed */
	}
	/* filp comes back: a new cluster, with a new id */
	for (i = 60; i < 70; i++)
		add(i, "filp", 'a', i % 5);
	assert_int_equal(analysis_recluster(&an, 70), 2);
	assert_true(an.clusters[0].id == 2 || an.clusters[1].id == 2);
}

static void analysis_add__near_a_core_point__joins_its_cluster_at_once(void **state)
{
	const struct vec_entry *e;
	int i;

	(void)state;
	for (i = 0; i < 10; i++) {
		add(i, "filp", 'a', i);
		add(i, "skb", 'b', i % 3);
	}
	analysis_recluster(&an, 10);
	e = add(10, "filp", 'a', 3);
	assert_non_null(e);
	assert_int_equal(e->cluster, 0);
	e = add(10, "skb", 'b', 1);
	assert_int_equal(e->cluster, 1);
	/* a quiet key spread over call sites is near neither */
	e = add(10, "odd", 'c', 0);
	assert_non_null(e);
	assert_int_equal(e->cluster, CLUSTER_NOISE);
}

static void analysis_recluster__cluster_label_from_members(void **state)
{
	int i;

	(void)state;
	/* skb-like vectors: remote frees, but mixed sizes -> normal; make
	 * them one size so that the false-sharing rule holds */
	for (i = 0; i < 10; i++) {
		const struct vec_entry *e = add(i, "skb", 'b', i % 3);

		((struct vec_entry *)e)->label = i < 8 ? LABEL_FALSE_SHARING : LABEL_NORMAL;
	}
	assert_int_equal(analysis_recluster(&an, 10), 1);
	assert_int_equal(an.clusters[0].label, LABEL_FALSE_SHARING);
	assert_int_equal(an.clusters[0].counts[LABEL_FALSE_SHARING], 8);
	assert_non_null(strstr(an.clusters[0].keys, "skb"));
}

/* Set a vector's label and reason (the history owns the reason). */
static void relabel(const struct vec_entry *ce, enum cs_label l, const char *reason)
{
	struct vec_entry *e = (struct vec_entry *)ce;

	e->label = l;
	if (reason) {
		free((char *)e->reason);
		e->reason = strdup(reason);
		assert_non_null(e->reason);
	}
}

/* The raw index of the cluster whose id is id. */
static size_t cluster_with_id(int id)
{
	size_t c;

	for (c = 0; c < an.nclusters; c++)
		if (an.clusters[c].id == id)
			return c;
	fail_msg("no cluster with id %d", id);
	return 0;
}

/* Two clusters whose members interleave in the history: each is described
 * from its own members alone: its size and label counts, its keys busiest
 * first, its reason from its newest member with its label, a normal
 * cluster's minority label named with its key, its centroid. */
static void analysis_recluster__interleaved_clusters__each_described_from_its_own(void **state)
{
	const struct cluster_info *ca, *cb;
	const struct vec_entry *e;
	char reason[64];
	int i;

	(void)state;
	for (i = 0; i < 10; i++) {
		e = add(i, i < 6 ? "filp" : "mnt", 'a', i % 4);
		snprintf(reason, sizeof(reason), "leak: member %d", i);
		relabel(e, i == 9 ? LABEL_NORMAL : LABEL_LEAK, reason);
		e = add(i, "skb", 'b', i % 3);
		relabel(e, i % 4 == 1 ? LABEL_THRASH : LABEL_NORMAL, NULL);
	}
	assert_int_equal(analysis_recluster(&an, 10), 2);
	ca = &an.clusters[cluster_with_id(an.v[0].cluster)];
	cb = &an.clusters[cluster_with_id(an.v[1].cluster)];
	assert_ptr_not_equal(ca, cb);
	assert_int_equal(ca->size, 10);
	assert_int_equal(cb->size, 10);
	assert_int_equal(ca->label, LABEL_LEAK);
	assert_int_equal(ca->counts[LABEL_LEAK], 9);
	assert_int_equal(ca->counts[LABEL_NORMAL], 1);
	/* filp's 6 leak members, then mnt's 3: the normal one is not counted */
	assert_string_equal(ca->keys, "filp,mnt");
	/* member 9 is normal: the newest leak is member 8 */
	assert_string_equal(ca->reason, "9 of 10 members; leak: member 8");
	assert_int_equal(cb->label, LABEL_NORMAL);
	assert_int_equal(cb->counts[LABEL_THRASH], 3);
	assert_string_equal(cb->keys, "skb");
	assert_string_equal(cb->reason, "normal: 7 of 10 members normal; thrash 3 (skb)");
	/* busy filp/mnt against quiet skb: allocs per window apart */
	assert_true(ca->centroid[0] != cb->centroid[0]);
}

/* Vectors but no core point: no clusters, every vector noise, and an empty
 * grid (qsort of no cores was called with NULL, undefined behaviour that
 * the sanitizer run reports; found by tests/fuzz/fuzz_ingest). */
static void analysis_recluster__no_core_points__all_noise(void **state)
{
	const struct vec_entry *v;

	(void)state;
	add(0, "filp", 'a', 0);
	add(0, "skb", 'b', 0);
	assert_int_equal(an.n, 2);
	assert_int_equal(analysis_recluster(&an, 1), 0);
	assert_int_equal(an.nclusters, 0);
	assert_int_equal(an.noise, 2);
	assert_int_equal(an.ncores, 0);
	v = add(1, "filp", 'a', 0);
	assert_non_null(v);
	assert_int_equal(v->cluster, CLUSTER_NOISE);
}

static void analysis_add__idle_row__no_vector(void **state)
{
	struct acc acc = { 0 };
	struct wslot s = { 0 };
	struct wrow r = { .s = &s };

	(void)state;
	wrow_of_key(&r, &acc);
	acc.key.domain = DOM_SLAB;
	s.allocs = 1;
	assert_null(analysis_add(&an, &r, WIN_NS));
	assert_int_equal(an.n, 0);
	assert_int_equal(analysis_recluster(&an, 1), 0);
}

/* The rule the grid must reproduce, as a plain scan: the nearest core
 * point within eps, and of equally near ones the latest. */
static int ref_nearest_core(const struct analysis *a, const double *x)
{
	double best = a->eps * a->eps, d;
	int cluster = CLUSTER_NOISE, k;
	size_t i;

	for (i = 0; i < a->n; i++) {
		if (!a->v[i].core)
			continue;
		for (d = 0, k = 0; k < FEAT_DIM; k++)
			d += (x[k] - a->v[i].f.v[k]) * (x[k] - a->v[i].f.v[k]);
		if (d <= best) {
			best = d;
			cluster = a->v[i].cluster;
		}
	}
	return cluster;
}

static uint64_t lcg = 99;

static double unit(void)
{
	lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(lcg >> 11) / (double)(1ull << 53);
}

/* A history of blobs and scatter, clustered; then new points: random, on
 * and beside core points (ties: duplicates of cores in several clusters),
 * at the edges of the feature space; grid and scan must agree on each. */
static void nearest_core__grid_vs_scan(double eps)
{
	size_t n = 3000, i, q;
	int k, agree = 0, clustered = 0;
	double x[FEAT_DIM];

	an.eps = eps;
	an.history_windows = 1000;
	an.v = calloc(n, sizeof(*an.v));
	assert_non_null(an.v);
	an.cap = n;
	for (i = 0; i < n; i++) {
		double centre = (double)(i % 7) / 7.0;

		for (k = 0; k < FEAT_DIM; k++)
			an.v[i].f.v[k] = i % 5 == 4 ? unit() : centre + (unit() - 0.5) * 0.75 * eps;
		if (i % 97 == 0 && i)	/* exact duplicates of earlier points */
			memcpy(an.v[i].f.v, an.v[i - 7].f.v, sizeof(an.v[i].f.v));
		an.v[i].window = 10;
		an.v[i].cluster = CLUSTER_NOISE;	/* as analysis_add leaves a new point here */
	}
	an.n = n;
	assert_true(analysis_recluster(&an, 10) > 1);
	for (q = 0; q < 4000; q++) {
		const double *base = an.v[(q * 31) % n].f.v;

		for (k = 0; k < FEAT_DIM; k++) {
			switch (q % 4) {
			case 0: x[k] = unit(); break;
			case 1: x[k] = base[k]; break;
			case 2: x[k] = base[k] + (unit() - 0.5) * 2 * eps; break;
			default: x[k] = unit() < 0.5 ? 0.0 : 1.0; break;
			}
		}
		k = analysis_nearest_core(&an, x);
		agree += k == ref_nearest_core(&an, x);
		clustered += k != CLUSTER_NOISE;
	}
	assert_int_equal(agree, 4000);
	assert_true(clustered > 500);
}

static void analysis_nearest_core__grid__same_as_scan(void **state)
{
	(void)state;
	nearest_core__grid_vs_scan(0.08);
	assert_true(an.grid_ok);
}

/* eps so small that [0, 1] needs more cells than the grid packs: the scan */
static void analysis_nearest_core__eps_beyond_the_grid__scan_same_answers(void **state)
{
	(void)state;
	nearest_core__grid_vs_scan(0.0002);
	assert_false(an.grid_ok);
}

/* Eight points in window 10 at (x0, 0.5, 0.5, 0.5, 0.5): the first four at
 * x0 = a, the last four at x0 = b. */
static void eight_points(double a, double b)
{
	int i, k;

	an.v = calloc(8, sizeof(*an.v));
	assert_non_null(an.v);
	an.cap = an.n = 8;
	for (i = 0; i < 8; i++) {
		for (k = 1; k < FEAT_DIM; k++)
			an.v[i].f.v[k] = 0.5;
		an.v[i].f.v[0] = i < 4 ? a : b;
		an.v[i].window = 10;
		an.v[i].cluster = CLUSTER_NOISE;	/* as analysis_add leaves a new point here */
	}
}

/* Two clusters whose cores are at exactly the same distance from x (all
 * dyadic, so no rounding): the later core's cluster, as the scan says. */
static void analysis_nearest_core__equidistant_cores__the_later_ones_cluster(void **state)
{
	double x[FEAT_DIM] = { 0.3125, 0.5, 0.5, 0.5, 0.5 };

	(void)state;
	eight_points(0.25, 0.375);	/* 0.0625 either side of x */
	assert_int_equal(analysis_recluster(&an, 10), 2);
	assert_true(an.grid_ok);
	assert_int_not_equal(an.v[0].cluster, an.v[7].cluster);
	assert_int_equal(analysis_nearest_core(&an, x), an.v[7].cluster);
	assert_int_equal(ref_nearest_core(&an, x), an.v[7].cluster);
}

/* Every vector aged out: no core is left to join. */
static void analysis_nearest_core__history_aged_out__noise(void **state)
{
	double x[FEAT_DIM] = { 0.25, 0.5, 0.5, 0.5, 0.5 };

	(void)state;
	eight_points(0.25, 0.25);
	assert_int_equal(analysis_recluster(&an, 10), 1);
	assert_int_not_equal(analysis_nearest_core(&an, x), CLUSTER_NOISE);
	assert_int_equal(analysis_recluster(&an, 10 + an.history_windows), 0);
	assert_int_equal(an.n, 0);
	assert_int_equal(analysis_nearest_core(&an, x), CLUSTER_NOISE);
}

/* Past history_max the oldest vectors go first: the history stays within
 * it, the trimmed vectors are counted, and placing a new vector by the
 * last run's core points still agrees with a scan of what is left. */
static void analysis_add__past_history_max__oldest_trimmed_cores_follow(void **state)
{
	struct analysis_params p = { .eps = 0.08, .min_pts = 3, .history_windows = 100000,
				     .history_max = 256 };
	struct rules rules;
	const struct vec_entry *v;
	int i;

	(void)state;
	analysis_release(&an);
	rules_defaults(&rules);
	analysis_init(&an, &rules, &p);
	for (i = 0; i < 200; i++) {
		add(i, "filp", 'a', i % 5);
		add(i, "skb", 'b', i % 3);
	}
	assert_true(an.n <= 256);
	assert_int_equal(an.n + an.history_trimmed, 400);
	assert_true(analysis_recluster(&an, 200) >= 2);
	for (i = 200; i < 400; i++) {
		v = add(i, "filp", 'a', i % 5);
		assert_non_null(v);
		assert_int_equal(v->cluster, analysis_nearest_core_scan(&an, v->f.v));
		assert_true(v->cluster != CLUSTER_NOISE);
	}
	assert_true(an.n <= 256);
	assert_int_equal(an.n + an.history_trimmed, 600);
	assert_true(analysis_history_s(&an, 400, WIN_NS) < 100000 * 0.1);
}

/* A busy row of key k in window w (group 'a' of add) */
static const struct vec_entry *add_key(uint64_t w, const struct wkey *k)
{
	static struct acc acc;
	static struct wslot s;
	struct wrow r = { 0 };

	memset(&acc, 0, sizeof(acc));
	memset(&s, 0, sizeof(s));
	acc.key = *k;
	snprintf(acc.name, sizeof(acc.name), "k%llu", (unsigned long long)k->id);
	s.window = w;
	s.allocs = s.frees = s.same_cpu_frees = 500;
	r.top_site_share = 1.0;
	r.window = w;
	wrow_of_key(&r, &acc);
	r.s = &s;
	return analysis_add(&an, &r, WIN_NS);
}

static uint32_t total(const uint32_t *c)
{
	uint32_t t = 0;
	int l;

	for (l = 0; l < LABEL_COUNT; l++)
		t += c[l];
	return t;
}

static void analysis_key_labels__vectors_of_keys__counted_per_key_and_label(void **state)
{
	uint32_t want[2][LABEL_COUNT] = { { 0 } };
	const struct wkey filp = { .domain = DOM_SLAB, .id = (uint64_t)'f' << 40 };
	const struct wkey skb = { .domain = DOM_SLAB, .id = (uint64_t)'s' << 40 };
	const struct wkey other = { .domain = DOM_SLAB, .id = 1, .tgid = 7 };
	const struct vec_entry *e;
	const uint32_t *c;
	int i, l;

	(void)state;
	for (i = 0; i < 6; i++) {
		e = add(i, "filp", 'a', i);
		assert_non_null(e);
		want[0][e->label]++;
		e = add(i, "skb", i % 2 ? 'b' : 'a', i);
		assert_non_null(e);
		want[1][e->label]++;
	}
	c = analysis_key_labels(&an, &filp);
	assert_non_null(c);
	for (l = 0; l < LABEL_COUNT; l++)
		assert_int_equal(c[l], want[0][l]);
	assert_int_equal(total(c), 6);
	c = analysis_key_labels(&an, &skb);
	assert_non_null(c);
	for (l = 0; l < LABEL_COUNT; l++)
		assert_int_equal(c[l], want[1][l]);
	/* another tgid is another key */
	assert_null(analysis_key_labels(&an, &other));
	/* the history's trim does not touch the counts */
	assert_true(analysis_recluster(&an, 1000) >= 0);
	assert_int_equal(an.n, 0);
	assert_int_equal(total(analysis_key_labels(&an, &filp)), 6);
}

static void analysis_key_gone__merged_then_forgotten__counts_follow(void **state)
{
	const struct wkey filp = { .domain = DOM_SLAB, .id = 1, .tgid = 100 };
	const struct wkey skb = { .domain = DOM_SLAB, .id = 2, .tgid = 100 };
	const struct wkey others = { .domain = DOM_SLAB, .id = 1, .tgid = CS_TGID_OTHER };
	uint32_t label;
	const uint32_t *c;
	int i;

	(void)state;
	for (i = 0; i < 4; i++)
		assert_non_null(add_key(i, &filp));
	label = add_key(4, &skb)->label;
	/* merged into an others key that had no vector: made for it */
	analysis_key_gone(&an, &filp, &others);
	assert_null(analysis_key_labels(&an, &filp));
	c = analysis_key_labels(&an, &others);
	assert_non_null(c);
	assert_int_equal(total(c), 4);
	/* the others key's own vectors add to what was merged */
	assert_non_null(add_key(5, &others));
	assert_int_equal(total(analysis_key_labels(&an, &others)), 5);
	/* a second merge adds, label by label */
	analysis_key_gone(&an, &skb, &others);
	assert_null(analysis_key_labels(&an, &skb));
	c = analysis_key_labels(&an, &others);
	assert_int_equal(total(c), 6);
	assert_true(c[label] >= 1);
	/* a key that comes back starts anew */
	assert_non_null(add_key(6, &filp));
	assert_int_equal(total(analysis_key_labels(&an, &filp)), 1);
	/* forgotten (nothing live): gone, the others key untouched */
	analysis_key_gone(&an, &filp, NULL);
	assert_null(analysis_key_labels(&an, &filp));
	assert_int_equal(total(analysis_key_labels(&an, &others)), 6);
	assert_int_equal(an.kl.n, 1);
	/* a key with no vectors: nothing to merge, nothing made */
	analysis_key_gone(&an, &skb, &filp);
	assert_null(analysis_key_labels(&an, &filp));
	assert_int_equal(an.labels_lost, 0);
}

static void analysis_key_gone__many_keys_half_gone__the_rest_still_found(void **state)
{
	struct wkey k = { .domain = DOM_SLAB, .id = 9 };
	uint32_t t;

	(void)state;
	/* past the first table's three quarters: it grows, and removals
	 * shift entries back within runs */
	for (t = 1; t <= 1000; t++) {
		k.tgid = t;
		assert_non_null(add_key(t, &k));
	}
	assert_int_equal(an.kl.n, 1000);
	for (t = 1; t <= 1000; t += 2) {
		k.tgid = t;
		analysis_key_gone(&an, &k, NULL);
	}
	assert_int_equal(an.kl.n, 500);
	for (t = 1; t <= 1000; t++) {
		k.tgid = t;
		if (t % 2)
			assert_null(analysis_key_labels(&an, &k));
		else
			assert_int_equal(total(analysis_key_labels(&an, &k)), 1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(analysis_recluster__two_behaviours__two_clusters, setup, teardown),
		cmocka_unit_test_setup_teardown(analysis_recluster__first_cluster_ages_out__second_keeps_its_id, setup, teardown),
		cmocka_unit_test_setup_teardown(analysis_add__near_a_core_point__joins_its_cluster_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(analysis_recluster__cluster_label_from_members, setup, teardown),
		cmocka_unit_test_setup_teardown(analysis_recluster__interleaved_clusters__each_described_from_its_own,
						setup, teardown),
		cmocka_unit_test_setup_teardown(analysis_recluster__no_core_points__all_noise, setup, teardown),
		cmocka_unit_test_setup_teardown(analysis_add__idle_row__no_vector, setup, teardown),
		cmocka_unit_test_setup_teardown(analysis_nearest_core__grid__same_as_scan, setup, teardown),
		cmocka_unit_test_setup_teardown(analysis_nearest_core__eps_beyond_the_grid__scan_same_answers, setup, teardown),
		cmocka_unit_test_setup_teardown(analysis_nearest_core__equidistant_cores__the_later_ones_cluster, setup, teardown),
		cmocka_unit_test_setup_teardown(analysis_nearest_core__history_aged_out__noise, setup, teardown),
		cmocka_unit_test_setup_teardown(analysis_add__past_history_max__oldest_trimmed_cores_follow, setup, teardown),
		cmocka_unit_test_setup_teardown(analysis_key_labels__vectors_of_keys__counted_per_key_and_label, setup, teardown),
		cmocka_unit_test_setup_teardown(analysis_key_gone__merged_then_forgotten__counts_follow, setup, teardown),
		cmocka_unit_test_setup_teardown(analysis_key_gone__many_keys_half_gone__the_rest_still_found, setup, teardown),
	};

	return cmocka_run_group_tests_name("analysis", tests, NULL, NULL);
}
