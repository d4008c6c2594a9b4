// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Cost of one CUPTI kernel record in the CUPTI library's handler
 * (cupti_sub_handle_record), on the CPU, no GPU needed: real
 * CUpti_ActivityKernel10 records of 64 kernels with the kilobyte-long
 * mangled names of templated GEMM and attention kernels (one in eight a KV
 * kernel), each kernel's records sharing one name pointer as CUPTI's do,
 * go through the handler with the KV decision cache off
 * (CACHESCOPE_KV_CACHE=0: the patterns are matched on every record) and
 * on, in the same run, alternately, three rounds each; prints the median
 * ns/record of each and their ratio.  No probe is attached: a probe costs
 * a nop here, as in a process nobody traces.
 *
 *   build/bench/cupti_record [records]     (default 200000 with the cache)
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../cuda/cupti_sub.h"
#include "kernel_names.h"

#define KERNELS 64
#define ROUNDS 3

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* ns per record over n records, with the cache on or off */
static uint64_t run(cupti_sub_kernel_rec *recs, long n, bool cache)
{
	uint64_t t0;
	long i;

	setenv("CACHESCOPE_KV_CACHE", cache ? "1" : "0", 1);
	if (cupti_sub_reset() != 0)
		exit(1);
	t0 = bench_clock_ns(CLOCK_MONOTONIC);
	for (i = 0; i < n; i++)
		cupti_sub_handle_record((const CUpti_Activity *)&recs[i % KERNELS]);
	return (bench_clock_ns(CLOCK_MONOTONIC) - t0) / (uint64_t)n;
}

int main(int argc, char **argv)
{
	cupti_sub_kernel_rec recs[KERNELS];
	uint64_t on[ROUNDS], off[ROUNDS];
	struct cupti_sub_stats st;
	long n = argc > 1 ? atol(argv[1]) : 200000, n_off;
	unsigned int i;
	int r;

	if (n < KERNELS) {
		fprintf(stderr, "cupti_record: records must be at least %d\n", KERNELS);
		return 2;
	}
	n_off = n / 20 < KERNELS ? KERNELS : n / 20;	/* the slow path: fewer */
	memset(recs, 0, sizeof(recs));
	for (i = 0; i < KERNELS; i++) {
		recs[i].kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
		recs[i].name = bench_kernel_name(i);
		recs[i].start = 1000 * i;
		recs[i].end = 1000 * i + 500;
		recs[i].streamId = 7;
		recs[i].gridX = 128;
		recs[i].blockX = 256;
	}
	for (r = 0; r < ROUNDS; r++) {
		off[r] = run(recs, n_off, false);
		on[r] = run(recs, n, true);
	}
	cupti_sub_get_stats(&st);
	qsort(on, ROUNDS, sizeof(on[0]), cmp_u64);
	qsort(off, ROUNDS, sizeof(off[0]), cmp_u64);
	printf("cupti_record: %d kernels, names %zu bytes, KV kernels 1 in 8\n", KERNELS,
	       strlen(recs[1].name));
	printf("  patterns every record (cache off): %8" PRIu64 " ns/record (%ld records, median of %d)\n",
	       off[ROUNDS / 2], n_off, ROUNDS);
	printf("  decision cached per function:      %8" PRIu64 " ns/record (%ld records, median of %d)\n",
	       on[ROUNDS / 2], n, ROUNDS);
	printf("  ratio %.1fx; last round: %" PRIu64 " kv kernels, cache %" PRIu64 " hits %"
	       PRIu64 " misses\n", on[ROUNDS / 2] ? (double)off[ROUNDS / 2] / on[ROUNDS / 2] : 0,
	       st.kv_kernels, st.kv_cache_hits, st.kv_cache_misses);
	for (i = 0; i < KERNELS; i++)
		free((void *)recs[i].name);
	return 0;
}
