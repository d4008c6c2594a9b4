// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of exact DBSCAN (cluster/dbscan.c): hand-made cases, a
 * brute-force reference on random data in every dimension, and sklearn's
 * result on tests/data/dbscan_5d.csv (from tests/gen_dbscan_fixture.py).
 * Run from the repository root, or set CS_SRC to it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "../cluster/dbscan.h"

#define NMAX 64

struct run {
	int labels[NMAX];
	uint8_t core[NMAX];
	int ret;
};

static void run(struct run *r, const double *pts, size_t n, unsigned int dim,
		double eps, unsigned int min_pts)
{
	assert_true(n <= NMAX);
	memset(r->labels, 0x55, sizeof(r->labels));
	memset(r->core, 0x55, sizeof(r->core));
	r->ret = dbscan_run(pts, n, dim, eps, min_pts, r->labels, r->core);
}

/* ---- brute force, straight from the definitions ---- */

static double ref_dist2(const double *a, const double *b, unsigned int dim)
{
	double s = 0, t;
	unsigned int k;

	for (k = 0; k < dim; k++) {
		t = a[k] - b[k];
		s += t * t;
	}
	return s;
}

/* labels and core flags as dbscan.h defines them; returns the clusters */
static int ref_dbscan(const double *pts, size_t n, unsigned int dim,
		      double eps, unsigned int min_pts, int *labels,
		      uint8_t *core)
{
	double eps2 = eps * eps;
	size_t i, j, head, tail, *queue;
	unsigned int cnt;
	int next = 0;

	queue = malloc(n * sizeof(*queue));
	assert_non_null(queue);
	for (i = 0; i < n; i++) {
		for (j = 0, cnt = 0; j < n; j++)
			cnt += ref_dist2(pts + i * dim, pts + j * dim, dim) <= eps2;
		core[i] = cnt >= min_pts;
		labels[i] = DBSCAN_NOISE;
	}
	/* clusters: components of core points, numbered by lowest index */
	for (i = 0; i < n; i++) {
		if (!core[i] || labels[i] != DBSCAN_NOISE)
			continue;
		labels[i] = next;
		queue[0] = i;
		for (head = 0, tail = 1; head < tail; head++) {
			for (j = 0; j < n; j++) {
				if (!core[j] || labels[j] != DBSCAN_NOISE ||
				    ref_dist2(pts + queue[head] * dim,
					      pts + j * dim, dim) > eps2)
					continue;
				labels[j] = next;
				queue[tail++] = j;
			}
		}
		next++;
	}
	/* border points: the lowest cluster among core neighbours */
	for (i = 0; i < n; i++) {
		if (core[i])
			continue;
		for (j = 0; j < n; j++)
			if (core[j] &&
			    ref_dist2(pts + i * dim, pts + j * dim, dim) <= eps2 &&
			    (labels[i] == DBSCAN_NOISE || labels[j] < labels[i]))
				labels[i] = labels[j];
	}
	free(queue);
	return next;
}

static void assert_matches_reference(const double *pts, size_t n,
				     unsigned int dim, double eps,
				     unsigned int min_pts)
{
	int *lab = malloc(n * sizeof(*lab)), *want = malloc(n * sizeof(*want));
	uint8_t *core = malloc(n), *want_core = malloc(n);
	int k, wk;
	size_t i;

	assert_true(lab && want && core && want_core);
	k = dbscan_run(pts, n, dim, eps, min_pts, lab, core);
	wk = ref_dbscan(pts, n, dim, eps, min_pts, want, want_core);
	assert_int_equal(k, wk);
	for (i = 0; i < n; i++) {
		assert_int_equal(core[i], want_core[i]);
		assert_int_equal(lab[i], want[i]);
	}
	free(lab);
	free(want);
	free(core);
	free(want_core);
}

/* ---- hand-made cases ---- */

static void dbscan_run__chain_eps_apart__one_cluster(void **state)
{
	double pts[20 * 2];
	struct run r;
	int i;

	(void)state;
	/* a diagonal chain, steps of exactly eps: 0.3^2 + 0.4^2 = 0.5^2 */
	for (i = 0; i < 20; i++) {
		pts[2 * i] = 100 + 0.375 * i;
		pts[2 * i + 1] = -7 + 0.5 * i;
	}
	/* with 0.375 and 0.5 steps, eps = 0.625 is met exactly */
	run(&r, pts, 20, 2, 0.625, 3);
	assert_int_equal(r.ret, 1);
	for (i = 0; i < 20; i++) {
		assert_int_equal(r.labels[i], 0);
		assert_int_equal(r.core[i], i > 0 && i < 19);
	}
}

static void dbscan_run__chain_far_from_minimum__one_cluster(void **state)
{
	double pts[42];
	struct run r;
	int i;

	(void)state;
	/* a chain a thousand cells out: cells must stay a hair over eps */
	pts[0] = 0;
	for (i = 1; i < 42; i++)
		pts[i] = 0.5 * (1002 + i);
	run(&r, pts, 42, 1, 0.5, 2);
	assert_int_equal(r.ret, 1);
	assert_int_equal(r.labels[0], DBSCAN_NOISE);
	for (i = 1; i < 42; i++)
		assert_int_equal(r.labels[i], 0);
}

static void dbscan_run__points_exactly_eps_apart__are_neighbours(void **state)
{
	/* a 3 x 3 grid of step 0.5: the centre has 4 neighbours at eps */
	double grid[9 * 2];
	double apart[] = { 0.7, 0.8, 0.0, 0.1 };
	double fused[] = { 0.289, 0.961, 0.539, 0.678 };
	struct run r;
	int i;

	(void)state;
	for (i = 0; i < 9; i++) {
		grid[2 * i] = 0.5 * (i % 3);
		grid[2 * i + 1] = 0.5 * (i / 3);
	}
	run(&r, grid, 9, 2, 0.5, 5);
	assert_int_equal(r.ret, 1);
	for (i = 0; i < 9; i++) {
		/* corners (even i but 4) have no core neighbour */
		int corner = i % 2 == 0 && i != 4;

		assert_int_equal(r.core[i], i == 4);
		assert_int_equal(r.labels[i], corner ? DBSCAN_NOISE : 0);
	}

	/*
	 * As in sklearn, the rounded sum decides: 0.8 - 0.7 rounds above 0.1
	 * and its square above 0.1 * 0.1, while 0.1 - 0.0 squares to it.
	 */
	run(&r, apart, 4, 1, 0.1, 2);
	assert_int_equal(r.ret, 1);
	assert_int_equal(r.labels[0], DBSCAN_NOISE);
	assert_int_equal(r.labels[1], DBSCAN_NOISE);
	assert_int_equal(r.labels[2], 0);
	assert_int_equal(r.labels[3], 0);

	/*
	 * Each square rounds before the sum, as in sklearn: here the sum
	 * lands exactly on eps * eps, where a fused multiply-add, rounding
	 * once, would land one bit above it.
	 */
	run(&r, fused, 2, 2, 0.37760958674270967, 2);
	assert_int_equal(r.ret, 1);
	assert_int_equal(r.labels[0], 0);
	assert_int_equal(r.labels[1], 0);
}

static void dbscan_run__duplicates__counted_each(void **state)
{
	double pts[13 * 3];
	struct run r;
	int i;

	(void)state;
	/* a pile of 11 equal points, and one exactly eps each side of it */
	for (i = 0; i < 13; i++) {
		pts[3 * i] = 1.25;
		pts[3 * i + 1] = -3;
		pts[3 * i + 2] = 1e6 + (i == 11) - (i == 12);
	}

	/* the pile sees 13 points, the other two 12 */
	run(&r, pts, 13, 3, 1, 13);
	assert_int_equal(r.ret, 1);
	for (i = 0; i < 13; i++) {
		assert_int_equal(r.core[i], i < 11);
		assert_int_equal(r.labels[i], 0);
	}

	run(&r, pts, 13, 3, 1, 14);
	assert_int_equal(r.ret, 0);
	for (i = 0; i < 13; i++)
		assert_int_equal(r.labels[i], DBSCAN_NOISE);
}

static void dbscan_run__sparse_points__all_noise(void **state)
{
	double pts[10 * 4];
	struct run r;
	int i, k;

	(void)state;
	for (i = 0; i < 10; i++)
		for (k = 0; k < 4; k++)
			pts[4 * i + k] = (i * 7 + k * 3) % 10 + 0.001 * k;
	run(&r, pts, 10, 4, 0.9, 2);
	assert_int_equal(r.ret, 0);
	for (i = 0; i < 10; i++) {
		assert_int_equal(r.labels[i], DBSCAN_NOISE);
		assert_int_equal(r.core[i], 0);
	}
}

static void dbscan_run__one_blob__one_cluster(void **state)
{
	double pts[40 * 5];
	struct run r;
	int i, k;

	(void)state;
	for (i = 0; i < 40; i++)
		for (k = 0; k < 5; k++)
			pts[5 * i + k] = -2 + 0.01 * ((i * (k + 3)) % 17);
	run(&r, pts, 40, 5, 0.5, 10);
	assert_int_equal(r.ret, 1);
	for (i = 0; i < 40; i++) {
		assert_int_equal(r.labels[i], 0);
		assert_int_equal(r.core[i], 1);
	}
}

static void dbscan_run__two_blobs_and_noise__numbered_by_first_core(void **state)
{
	double pts[23 * 2];
	struct run r;
	int i;

	(void)state;
	/* 0..9: blob at (10, 10); 10..19: blob at (0, 0); 20..22: noise */
	for (i = 0; i < 10; i++) {
		pts[2 * i] = 10 + 0.1 * (i % 3);
		pts[2 * i + 1] = 10 + 0.1 * (i / 3);
		pts[2 * (i + 10)] = 0.1 * (i % 4);
		pts[2 * (i + 10) + 1] = 0.1 * (i / 4);
	}
	pts[40] = 5;
	pts[41] = 5;
	pts[42] = -5;
	pts[43] = 3;
	pts[44] = 20;
	pts[45] = 0;
	/* blob points 0 and 10 first, so that numbering shows */
	run(&r, pts, 23, 2, 0.5, 4);
	assert_int_equal(r.ret, 2);
	for (i = 0; i < 10; i++) {
		assert_int_equal(r.labels[i], 0);
		assert_int_equal(r.labels[i + 10], 1);
	}
	for (i = 20; i < 23; i++) {
		assert_int_equal(r.labels[i], DBSCAN_NOISE);
		assert_int_equal(r.core[i], 0);
	}

	/* the same points, second blob first: the numbers swap */
	for (i = 0; i < 20; i++) {
		double t = pts[i];

		pts[i] = pts[i + 20];
		pts[i + 20] = t;
	}
	run(&r, pts, 23, 2, 0.5, 4);
	assert_int_equal(r.ret, 2);
	for (i = 0; i < 10; i++) {
		assert_int_equal(r.labels[i], 0);
		assert_int_equal(r.labels[i + 10], 1);
	}
}

static void dbscan_run__border_between_two_clusters__lower_number(void **state)
{
	/* x: 4 core points to the left, y: 4 to the right, b between */
	double x[] = { -3, -2.6, -2.3, -2 };
	double y[] = { 0, 0.3, 0.6, 1 };
	double pts[9];
	struct run r;
	int i;

	(void)state;
	/* y first: y is cluster 0, and b, exactly eps from both, joins it */
	for (i = 0; i < 4; i++) {
		pts[i] = y[i];
		pts[4 + i] = x[i];
	}
	pts[8] = -1;
	run(&r, pts, 9, 1, 1, 4);
	assert_int_equal(r.ret, 2);
	assert_int_equal(r.core[8], 0);
	assert_int_equal(r.labels[0], 0);
	assert_int_equal(r.labels[4], 1);
	assert_int_equal(r.labels[8], 0);

	/* x first: now x is cluster 0, and b goes with it */
	for (i = 0; i < 4; i++) {
		pts[i] = x[i];
		pts[4 + i] = y[i];
	}
	run(&r, pts, 9, 1, 1, 4);
	assert_int_equal(r.ret, 2);
	assert_int_equal(r.labels[0], 0);
	assert_int_equal(r.labels[4], 1);
	assert_int_equal(r.labels[8], 0);
}

static void dbscan_run__border_near_two_clusters_in_one_cell__lower_number(void **state)
{
	/*
	 * Two clusters run off diagonally from their tips (0, 0) and (0.75,
	 * 0.75), 1.06 apart; b = (0.375, 0.375) is within eps of both tips
	 * only.  A far point puts tips and b in one grid cell.
	 */
	static const double d[] = { 0.55, 0.65, 0.75, 0.85, 0.95 };
	double pts[14 * 2];
	struct run r;
	int i, xfirst;

	(void)state;
	for (xfirst = 0; xfirst < 2; xfirst++) {
		double *x = pts + (xfirst ? 0 : 12), *y = pts + (xfirst ? 12 : 0);

		x[0] = x[1] = 0;
		y[0] = y[1] = 0.75;
		for (i = 0; i < 5; i++) {
			x[2 * i + 2] = x[2 * i + 3] = -d[i] * M_SQRT1_2;
			y[2 * i + 2] = y[2 * i + 3] = 0.75 + d[i] * M_SQRT1_2;
		}
		pts[24] = pts[25] = 0.375;
		pts[26] = pts[27] = -10.2;
		run(&r, pts, 14, 2, 1, 5);
		assert_int_equal(r.ret, 2);
		assert_int_equal(r.core[12], 0);
		assert_int_equal(r.labels[12], 0);
		assert_int_equal(r.labels[13], DBSCAN_NOISE);
		for (i = 0; i < 6; i++) {
			assert_int_equal(r.labels[i], 0);
			assert_int_equal(r.labels[6 + i], 1);
		}
	}
}

static void dbscan_run__cells_split_between_clusters__joined_exactly(void **state)
{
	/*
	 * With (0, 0) the corner of the grid, cell [1,2)^2 holds a0 and a1,
	 * too far apart to share a cluster, and the cell above holds q and
	 * q2, also apart.  Only a0 and q touch: three clusters.
	 */
	double pts[] = {
		1.02, 1.98,	/* a0 */
		1.98, 1.02,	/* a1 */
		1.02, 2.5,	/* q, 0.52 from a0 */
		1.98, 2.98,	/* q2 */
		1.98, 0.5,	/* a1's partner */
		1.98, 3.5,	/* q2's partner */
		0, 0,		/* noise, fixing the grid */
	};
	int want[] = { 0, 1, 0, 2, 1, 2, DBSCAN_NOISE };

	/*
	 * Found by random search: cells holding pieces of both clusters, where
	 * the joining pair is seen only from the second cell's side.
	 */
	double pts2[] = {
		0.53, 2.33, 2.6, 2.15, 1.56, 0.64, 2.78, 0.96, 2.28, 2.24,
		0.93, 0.8, 2.51, 1, 0.82, 2.48, 1.63, 1.44, 1.55, 2.89,
		2.9, 0.3,
	};
	int want2[] = { 0, 0, 1, 1, 0, 1, 1, 0, 1, 0, 1 };
	struct run r;
	int i;

	(void)state;
	run(&r, pts, 7, 2, 1, 2);
	assert_int_equal(r.ret, 3);
	for (i = 0; i < 7; i++)
		assert_int_equal(r.labels[i], want[i]);

	run(&r, pts2, 11, 2, 1, 2);
	assert_int_equal(r.ret, 2);
	for (i = 0; i < 11; i++)
		assert_int_equal(r.labels[i], want2[i]);
}

static void dbscan_run__min_pts_one__every_point_core(void **state)
{
	double pts[] = { 5, 0, 5.5, 10, 6.5 };
	struct run r;
	int i;

	(void)state;
	run(&r, pts, 5, 1, 1, 1);
	assert_int_equal(r.ret, 3);
	for (i = 0; i < 5; i++)
		assert_int_equal(r.core[i], 1);
	assert_int_equal(r.labels[0], 0);
	assert_int_equal(r.labels[1], 1);
	assert_int_equal(r.labels[2], 0);
	assert_int_equal(r.labels[3], 2);
	assert_int_equal(r.labels[4], 0);	/* 5.5 to 6.5: exactly eps */
}

static void assert_einval(const double *pts, size_t n, unsigned int dim,
			  double eps, unsigned int min_pts, int with_labels)
{
	int labels[4] = { 77, 77, 77, 77 };
	uint8_t core[4] = { 9, 9, 9, 9 };
	int i;

	assert_int_equal(dbscan_run(pts, n, dim, eps, min_pts,
				    with_labels ? labels : NULL, core),
			 -EINVAL);
	for (i = 0; i < 4; i++) {
		assert_int_equal(labels[i], 77);
		assert_int_equal(core[i], 9);
	}
}

static void dbscan_run__invalid_arguments__einval_outputs_untouched(void **state)
{
	double ok[] = { 0, 1, 2, 3 };
	double nan_pt[] = { 0, NAN, 2, 3 };
	double inf_pt[] = { 0, 1, -INFINITY, 3 };

	(void)state;
	assert_einval(ok, 4, 0, 1, 2, 1);
	assert_einval(ok, 4, DBSCAN_MAX_DIM + 1, 1, 2, 1);
	assert_einval(ok, 4, 1, 0, 2, 1);
	assert_einval(ok, 4, 1, -1, 2, 1);
	assert_einval(ok, 4, 1, NAN, 2, 1);
	assert_einval(ok, 4, 1, INFINITY, 2, 1);
	assert_einval(ok, 4, 1, 1, 0, 1);
	assert_einval(nan_pt, 4, 1, 1, 2, 1);
	assert_einval(inf_pt, 2, 2, 1, 2, 1);
	assert_einval(NULL, 4, 1, 1, 2, 1);
	assert_einval(ok, 4, 1, 1, 2, 0);
}

static void dbscan_run__no_points__zero_clusters(void **state)
{
	int label = 77;
	uint8_t core = 9;

	(void)state;
	assert_int_equal(dbscan_run(NULL, 0, 3, 1, 2, NULL, NULL), 0);
	assert_int_equal(dbscan_run(NULL, 0, 3, 1, 2, &label, &core), 0);
	assert_int_equal(label, 77);
	assert_int_equal(core, 9);
}

/* ---- against the brute force ---- */

static uint64_t rng_state = 0x853c49e6748fea9bull;

static double rnd(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(rng_state >> 11) * 0x1p-53;
}

/*
 * Clumps, noise, duplicates and lattice points (step eps / 2, eps a power
 * of two, so ties are exact) in every dimension, with NULL is_core too.
 */
static void dbscan_run__random_data_every_dim__matches_brute_force(void **state)
{
	const size_t n = 700;
	double *pts = malloc(n * DBSCAN_MAX_DIM * sizeof(*pts)), eps;
	unsigned int dim, k, min_pts, round;
	int *lab = malloc(n * sizeof(*lab)), *want = malloc(n * sizeof(*want));
	uint8_t *want_core = malloc(n);
	size_t i;

	(void)state;
	assert_true(pts && lab && want && want_core);
	for (round = 0; round < 3; round++) {
		for (dim = 1; dim <= DBSCAN_MAX_DIM; dim++) {
			eps = 0.125 * (1 << round);
			min_pts = 2 + (dim + round) % 6;
			for (i = 0; i < n; i++) {
				double c = (double)(i % 5), s = 0.05 * (i % 3 + 1);

				for (k = 0; k < dim; k++) {
					double *x = &pts[i * dim + k];

					if (i % 7 == 0)
						*x = 5 * rnd();
					else
						*x = c + s * (rnd() - 0.5) *
							 dim;
					if (i % 4 == 1)
						*x = floor(*x / (eps / 2)) *
						     (eps / 2);
				}
				if (i % 11 == 3)
					memcpy(&pts[i * dim], &pts[(i / 2) * dim],
					       dim * sizeof(*pts));
			}
			assert_matches_reference(pts, n, dim, eps, min_pts);
			/* is_core is optional */
			assert_int_equal(dbscan_run(pts, n, dim, eps, min_pts,
						    lab, NULL),
					 ref_dbscan(pts, n, dim, eps, min_pts,
						    want, want_core));
			for (i = 0; i < n; i++)
				assert_int_equal(lab[i], want[i]);
		}
	}
	free(pts);
	free(lab);
	free(want);
	free(want_core);
}

/*
 * Uniform points near the percolation threshold: many small clusters, and
 * cells shared by pieces of several clusters.
 */
static void dbscan_run__many_small_clusters__matches_brute_force(void **state)
{
	const size_t n = 900;
	double *pts = malloc(n * 3 * sizeof(*pts));
	unsigned int dim;
	size_t i;

	(void)state;
	assert_non_null(pts);
	for (dim = 2; dim <= 3; dim++) {
		for (i = 0; i < n * dim; i++)
			pts[i] = 10 * rnd();
		assert_matches_reference(pts, n, dim, dim == 2 ? 0.3 : 0.9, 3);
		assert_matches_reference(pts, n, dim, dim == 2 ? 0.45 : 1.2, 4);
	}
	free(pts);
}

static void dbscan_run__huge_coordinates__matches_brute_force(void **state)
{
	double pts[NMAX * 3];
	size_t i;

	(void)state;
	/* far apart groups, at 1e15 (ulp 0.125) and across 3.4e308 */
	for (i = 0; i < 40; i++) {
		pts[3 * i] = 1e15 + 0.125 * (double)(i % 9);
		pts[3 * i + 1] = -1e15 + 0.25 * (double)(i % 4);
		pts[3 * i + 2] = 3 + 0.5 * (double)(i / 20);
	}
	for (; i < NMAX; i++) {
		pts[3 * i] = i % 2 ? 1.7e308 : -1.7e308;	/* max - min overflows */
		pts[3 * i + 1] = (double)(i % 3) * 0.5;
		pts[3 * i + 2] = i % 5 ? 0 : -1e300;
	}
	assert_matches_reference(pts, NMAX, 3, 0.5, 3);
	assert_matches_reference(pts, NMAX, 3, 1.5, 5);
	/* eps squared overflows: everything is one cluster */
	assert_matches_reference(pts, NMAX, 3, 1e200, 5);
}

/* ---- against sklearn ---- */

static FILE *open_fixture(void)
{
	const char *root = getenv("CS_SRC");
	char path[4096];

	snprintf(path, sizeof(path), "%s/tests/data/dbscan_5d.csv",
		 root && *root ? root : ".");
	return fopen(path, "r");
}

/*
 * Core flags and noise as sklearn's, and the clusters of core points the
 * same up to renumbering: a one-to-one map between the two numberings.
 */
static void dbscan_run__sklearn_fixture__same_core_noise_and_partition(void **state)
{
	char line[1024];
	double eps = 0, *pts = NULL;
	unsigned int min_pts = 0;
	int *want = NULL, *lab, *ours_to_sk, *sk_to_ours, k, nsk = 0;
	uint8_t *want_core = NULL, *core;
	size_t n = 0, cap = 0, i, ncore = 0;
	FILE *f;

	(void)state;
	f = open_fixture();
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	assert_int_equal(sscanf(line, "# eps=%lf min_pts=%u", &eps, &min_pts),
			 2);
	assert_non_null(fgets(line, sizeof(line), f));	/* column names */
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;
		int c;

		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			pts = realloc(pts, cap * 5 * sizeof(*pts));
			want = realloc(want, cap * sizeof(*want));
			want_core = realloc(want_core, cap);
			assert_true(pts && want && want_core);
		}
		for (k = 0; k < 5; k++, p = end + 1) {
			pts[n * 5 + k] = strtod(p, &end);
			assert_true(end != p && *end == ',');
		}
		assert_int_equal(sscanf(p, "%d,%d", &want[n], &c), 2);
		want_core[n] = (uint8_t)c;
		if (want[n] >= nsk)
			nsk = want[n] + 1;
		n++;
	}
	fclose(f);
	assert_true(n > 1000);

	lab = malloc(n * sizeof(*lab));
	core = malloc(n);
	assert_true(lab && core);
	k = dbscan_run(pts, n, 5, eps, min_pts, lab, core);
	assert_int_equal(k, nsk);

	ours_to_sk = malloc(k * sizeof(*ours_to_sk));
	sk_to_ours = malloc(k * sizeof(*sk_to_ours));
	assert_true(ours_to_sk && sk_to_ours);
	for (i = 0; i < (size_t)k; i++)
		ours_to_sk[i] = sk_to_ours[i] = -1;
	for (i = 0; i < n; i++) {
		assert_int_equal(core[i], want_core[i]);
		assert_int_equal(lab[i] == DBSCAN_NOISE, want[i] == -1);
		if (!core[i])
			continue;
		ncore++;
		assert_in_range(lab[i], 0, k - 1);
		assert_in_range(want[i], 0, k - 1);
		if (ours_to_sk[lab[i]] == -1 && sk_to_ours[want[i]] == -1) {
			ours_to_sk[lab[i]] = want[i];
			sk_to_ours[want[i]] = lab[i];
		}
		assert_int_equal(ours_to_sk[lab[i]], want[i]);
		assert_int_equal(sk_to_ours[want[i]], lab[i]);
	}
	assert_true(ncore > 0 && ncore < n);
	free(ours_to_sk);
	free(sk_to_ours);
	free(lab);
	free(core);
	free(pts);
	free(want);
	free(want_core);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dbscan_run__chain_eps_apart__one_cluster),
		cmocka_unit_test(dbscan_run__chain_far_from_minimum__one_cluster),
		cmocka_unit_test(dbscan_run__points_exactly_eps_apart__are_neighbours),
		cmocka_unit_test(dbscan_run__duplicates__counted_each),
		cmocka_unit_test(dbscan_run__sparse_points__all_noise),
		cmocka_unit_test(dbscan_run__one_blob__one_cluster),
		cmocka_unit_test(dbscan_run__two_blobs_and_noise__numbered_by_first_core),
		cmocka_unit_test(dbscan_run__border_between_two_clusters__lower_number),
		cmocka_unit_test(dbscan_run__border_near_two_clusters_in_one_cell__lower_number),
		cmocka_unit_test(dbscan_run__cells_split_between_clusters__joined_exactly),
		cmocka_unit_test(dbscan_run__min_pts_one__every_point_core),
		cmocka_unit_test(dbscan_run__invalid_arguments__einval_outputs_untouched),
		cmocka_unit_test(dbscan_run__no_points__zero_clusters),
		cmocka_unit_test(dbscan_run__random_data_every_dim__matches_brute_force),
		cmocka_unit_test(dbscan_run__many_small_clusters__matches_brute_force),
		cmocka_unit_test(dbscan_run__huge_coordinates__matches_brute_force),
		cmocka_unit_test(dbscan_run__sklearn_fixture__same_core_noise_and_partition),
	};

	return cmocka_run_group_tests_name("dbscan", tests, NULL, NULL);
}
