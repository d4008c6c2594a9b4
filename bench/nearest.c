// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Placing new vectors in the last run's clusters: analysis_nearest_core()
 * (the grid of core points) against analysis_nearest_core_scan(), the scan
 * of the history it replaced and still falls back to,
 * on the same history and the same queries, in one run.  The history is
 * what a busy host gives the daemon: K keys a window for 600 windows (60 s
 * at 100 ms), in 7 behaviours plus 20 % scatter in [0, 1]^5; eps 0.08 and
 * min_pts 5 as the daemon's defaults.  The grid answers a second's new
 * vectors (10 windows of K), the scan the first 1000 of them.  Prints both
 * times per query, the ratio, and whether every answer agreed (exit 1 if
 * not).
 *
 *   build/bench/nearest [KEYS_PER_WINDOW...]     (default 10 100 1000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../daemon/analysis.h"

static uint64_t lcg = 7;

static double unit(void)
{
	lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(lcg >> 11) / (double)(1ull << 53);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int one(size_t keys)
{
	struct analysis_params p = { .eps = 0.08, .min_pts = 5, .history_windows = 600 };
	size_t n = keys * 600, nq = keys * 10, ns, i, q;	/* nq: a second's new vectors */
	struct analysis a;
	struct rules rules;
	double *x = malloc(nq * FEAT_DIM * sizeof(*x)), t0, tg, ts;
	int *rg = malloc(nq * sizeof(int)), *rs = malloc(nq * sizeof(int)), k, agree = 0;

	rules_defaults(&rules);
	analysis_init(&a, &rules, &p);
	a.v = calloc(n, sizeof(*a.v));
	if (!x || !rg || !rs || !a.v)
		return 2;
	a.cap = a.n = n;
	for (i = 0; i < n; i++) {
		double c = (double)(i % 7) / 7.0;

		for (k = 0; k < FEAT_DIM; k++)
			a.v[i].f.v[k] = i % 5 == 4 ? unit() : c + (unit() - 0.5) * 0.1;
		a.v[i].window = 600;
		a.v[i].cluster = CLUSTER_NOISE;
	}
	for (q = 0; q < nq * FEAT_DIM; q++)
		x[q] = unit();
	if (analysis_recluster(&a, 600) < 0)
		return 2;
	t0 = now_s();
	for (q = 0; q < nq; q++)
		rg[q] = analysis_nearest_core(&a, x + q * FEAT_DIM);
	tg = now_s() - t0;
	/* the scan on the first 1000 queries at most: it is the slow one */
	ns = nq < 1000 ? nq : 1000;
	t0 = now_s();
	for (q = 0; q < ns; q++)
		rs[q] = analysis_nearest_core_scan(&a, x + q * FEAT_DIM);
	ts = now_s() - t0;
	for (q = 0; q < ns; q++)
		agree += rg[q] == rs[q];
	printf("%6zu keys/window  history %7zu  cores %7zu  grid %7.2f us/query  scan %9.2f us/query  %6.1fx  %s\n",
	       keys, n, a.ncores, tg / nq * 1e6, ts / ns * 1e6, (ts / ns) / (tg / nq),
	       (size_t)agree == ns ? "same answers" : "DIFFERENT ANSWERS");
	analysis_release(&a);
	free(x);
	free(rg);
	free(rs);
	return (size_t)agree == ns ? 0 : 1;
}

int main(int argc, char **argv)
{
	static const char *defaults[] = { "10", "100", "1000" };
	int i, n = argc > 1 ? argc - 1 : 3, rc = 0;

	for (i = 0; i < n; i++) {
		long keys = atol(argc > 1 ? argv[i + 1] : defaults[i]);

		if (keys < 1) {
			fprintf(stderr, "nearest: invalid KEYS_PER_WINDOW '%s'\n", argv[i + 1]);
			return 2;
		}
		rc |= one((size_t)keys);
	}
	return rc;
}
