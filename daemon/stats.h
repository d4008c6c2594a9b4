/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Small statistics over counts the windows keep: log2 histograms (bucket b
 * holds the values in [2^b, 2^(b+1)), bucket 0 also 0) and a least-squares
 * slope.  Pure functions: no state, no allocation, never fail.
 */
#ifndef CS_STATS_H
#define CS_STATS_H

#include <stdint.h>

#define HIST_BUCKETS 64

/* The bucket of v in a log2 histogram. */
unsigned int stats_log2_bucket(uint64_t v);
/* Percentile q in [0,1] of a log2 histogram of HIST_BUCKETS buckets,
 * interpolated linearly inside its bucket; 0 for an empty histogram. */
uint64_t stats_log2_percentile(const uint32_t *hist, double q);
/* Least-squares slope of y over x (per unit of x); 0 with under 2 points
 * or where every x is the same. */
double stats_slope(const double *x, const double *y, unsigned int n);

/* Sums that saturate: records of user-space probes carry values their
 * process chose, so a count of them stops at the type's end instead of
 * wrapping (or, signed, being undefined). */
static inline uint64_t sat_add_u64(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static inline int64_t sat_add_i64(int64_t a, int64_t b)
{
	int64_t r;

	if (!__builtin_add_overflow(a, b, &r))
		return r;
	return b > 0 ? INT64_MAX : INT64_MIN;
}

static inline int64_t sat_sub_i64(int64_t a, int64_t b)
{
	int64_t r;

	if (!__builtin_sub_overflow(a, b, &r))
		return r;
	return b < 0 ? INT64_MAX : INT64_MIN;
}

#endif
