// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dbscan: time cluster/dbscan.c on points from a file, for bench/dbscan.sh.
 * Reads N x DIM float64 values (native byte order, row-major, as numpy's
 * tofile writes them), runs dbscan_run once, writes the labels (int32) and
 * core flags (uint8) for the comparison with sklearn, and prints one line:
 *
 *   seconds=S maxrss_kib=K clusters=C
 *
 * S is wall time around dbscan_run alone (CLOCK_MONOTONIC), after one pass
 * over the input; K is this process's peak resident set (getrusage),
 * input and output arrays included.
 *
 *   dbscan POINTS.f64 DIM EPS MIN_PTS LABELS.i32 CORE.u8
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include "../cluster/dbscan.h"

struct env {
	const char *in, *labels_out, *core_out;
	unsigned int dim, min_pts;
	double eps;
};

static int parse_uint(const char *s, const char *name, unsigned int *v)
{
	char *end;
	long x;

	errno = 0;
	x = strtol(s, &end, 10);
	if (errno || *end || end == s || x <= 0 || x > 1000000) {
		fprintf(stderr, "dbscan: bad %s: %s\n", name, s);
		return -1;
	}
	*v = (unsigned int)x;
	return 0;
}

static int parse_args(int argc, char **argv, struct env *env)
{
	char *end;

	if (argc != 7) {
		fprintf(stderr, "usage: dbscan POINTS.f64 DIM EPS MIN_PTS "
			"LABELS.i32 CORE.u8\n");
		return -1;
	}
	env->in = argv[1];
	env->labels_out = argv[5];
	env->core_out = argv[6];
	if (parse_uint(argv[2], "dim", &env->dim) ||
	    parse_uint(argv[4], "min_pts", &env->min_pts))
		return -1;
	errno = 0;
	env->eps = strtod(argv[3], &end);
	if (errno || *end || end == argv[3]) {
		fprintf(stderr, "dbscan: bad eps: %s\n", argv[3]);
		return -1;
	}
	return 0;
}

static double *read_points(const char *path, unsigned int dim, size_t *n)
{
	struct stat st;
	double *pts = NULL;
	FILE *f;
	size_t count;

	f = fopen(path, "rb");
	if (!f || fstat(fileno(f), &st)) {
		fprintf(stderr, "dbscan: cannot open %s: %s\n", path,
			strerror(errno));
		goto cleanup;
	}
	count = (size_t)st.st_size / sizeof(double);
	if (count % dim || !count) {
		fprintf(stderr, "dbscan: %s: size is not a multiple of %u "
			"doubles\n", path, dim);
		goto cleanup;
	}
	pts = malloc(count * sizeof(double));
	if (!pts || fread(pts, sizeof(double), count, f) != count) {
		fprintf(stderr, "dbscan: cannot read %s\n", path);
		free(pts);
		pts = NULL;
		goto cleanup;
	}
	*n = count / dim;
cleanup:
	if (f)
		fclose(f);
	return pts;
}

/*
 * Read every page once before the clock starts: on some VMs the first
 * touch of pages filled by read() costs as much as the clustering.  The
 * sklearn side does the same.
 */
static void touch(const double *pts, size_t count)
{
	volatile double sink;
	double s = 0;
	size_t i;

	for (i = 0; i < count; i++)
		s += pts[i];
	sink = s;
	(void)sink;
}

static int write_file(const char *path, const void *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f) {
		fprintf(stderr, "dbscan: cannot create %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	ok = fwrite(data, 1, size, f) == size;
	ok = !fclose(f) && ok;
	if (!ok)
		fprintf(stderr, "dbscan: cannot write %s\n", path);
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct env env;
	struct timespec a, b;
	struct rusage ru;
	double *pts = NULL;
	int *labels = NULL;
	uint8_t *core = NULL;
	size_t n = 0;
	int ret = 1, k;

	if (parse_args(argc, argv, &env))
		return 2;
	pts = read_points(env.in, env.dim, &n);
	if (!pts)
		goto cleanup;
	touch(pts, n * env.dim);
	labels = malloc(n * sizeof(*labels));
	core = malloc(n);
	if (!labels || !core) {
		fprintf(stderr, "dbscan: cannot allocate outputs\n");
		goto cleanup;
	}

	clock_gettime(CLOCK_MONOTONIC, &a);
	k = dbscan_run(pts, n, env.dim, env.eps, env.min_pts, labels, core);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (k < 0) {
		fprintf(stderr, "dbscan: dbscan_run failed: %s\n", strerror(-k));
		goto cleanup;
	}

	if (write_file(env.labels_out, labels, n * sizeof(*labels)) ||
	    write_file(env.core_out, core, n))
		goto cleanup;
	getrusage(RUSAGE_SELF, &ru);
	printf("seconds=%.6f maxrss_kib=%ld clusters=%d\n",
	       (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9,
	       ru.ru_maxrss, k);
	ret = 0;
cleanup:
	free(pts);
	free(labels);
	free(core);
	return ret;
}
