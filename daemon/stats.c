// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Log2 histograms and a slope: see stats.h. */
#include "stats.h"

unsigned int stats_log2_bucket(uint64_t v)
{
	return v ? 63 - __builtin_clzll(v) : 0;
}

uint64_t stats_log2_percentile(const uint32_t *hist, double q)
{
	uint64_t total = 0, seen = 0, lo, width, off;
	double rank, frac;
	unsigned int b;

	for (b = 0; b < HIST_BUCKETS; b++)
		total += hist[b];
	if (!total)
		return 0;
	rank = q * (double)total;
	for (b = 0; b < HIST_BUCKETS; b++) {
		if (!hist[b])
			continue;
		if ((double)(seen + hist[b]) >= rank) {
			lo = b ? 1ull << b : 0;
			width = b ? 1ull << b : 2;
			frac = (rank - (double)seen) / hist[b];
			off = frac > 0 ? (uint64_t)(frac * (double)width) : 0;
			return lo + (off < width ? off : width - 1);
		}
		seen += hist[b];
	}
	return 1ull << 63;
}

double stats_slope(const double *x, const double *y, unsigned int n)
{
	double mx = 0, my = 0, sxx = 0, sxy = 0;
	unsigned int i;

	if (n < 2)
		return 0;
	for (i = 0; i < n; i++) {
		mx += x[i];
		my += y[i];
	}
	mx /= n;
	my /= n;
	for (i = 0; i < n; i++) {
		sxx += (x[i] - mx) * (x[i] - mx);
		sxy += (x[i] - mx) * (y[i] - my);
	}
	return sxx > 0 ? sxy / sxx : 0;
}
