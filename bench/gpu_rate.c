// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gpu_rate: a CUDA engine's stream of CUPTI records at a set rate, through
 * the CUPTI library's handler, as its buffer walks hand them over, with no
 * GPU (bench/gpu_stream.sh).  Loads libcachescope_cupti.so, then every 10
 * ms hands it RATE/100 real CUpti_ActivityKernel10 and CUpti_ActivityMemcpy6
 * records (64 kernels of 1.2 KB mangled names, kernel_names.h, one in
 * eight a KV kernel;
 * one copy in sixteen records), stamped on CLOCK_MONOTONIC as the library
 * has CUPTI stamp them, and ends the round as the end of a buffer's walk
 * does (cupti_sub_flush_batch).  The thread's CPU time in the handler and
 * the flush, per record, is what the library adds to the traced process.
 *
 *   gpu_rate LIBRARY RATE SECONDS
 *
 * Prints: records N ns_per_record X rounds R behind B (rounds that took
 * longer than their 10 ms: the handler could not keep the rate).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../cuda/cupti_sub.h"
#include "kernel_names.h"

#define KERNELS 64
#define ROUND_NS 10000000ull

typedef int (*handle_fn)(const CUpti_Activity *rec);
typedef int (*flush_fn)(void);

int main(int argc, char **argv)
{
	uint64_t cpu = 0, n = 0, t0, next, now, per, i, c0, t, gap;
	unsigned long rounds = 0, behind = 0;
	cupti_sub_kernel_rec k;
	cupti_sub_memcpy_rec m;
	char *names[KERNELS];
	double rate, secs;
	handle_fn handle;
	flush_fn flush;
	void *lib;

	if (argc != 4 || (rate = atof(argv[2])) < 100 || (secs = atof(argv[3])) <= 0) {
		fprintf(stderr, "usage: gpu_rate LIBRARY RATE SECONDS\n");
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW);
	if (!lib || !(handle = (handle_fn)dlsym(lib, "cupti_sub_handle_record")) ||
	    !(flush = (flush_fn)dlsym(lib, "cupti_sub_flush_batch"))) {
		fprintf(stderr, "gpu_rate: cannot load %s: %s\n", argv[1], dlerror());
		return 1;
	}
	for (i = 0; i < KERNELS; i++)
		names[i] = bench_kernel_name((unsigned int)i);
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.streamId = 7;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	m.bytes = 1 << 16;
	per = (uint64_t)(rate / 100);
	gap = ROUND_NS / per;		/* the records' work, back to back */
	t0 = next = bench_clock_ns(CLOCK_MONOTONIC);
	while (next < t0 + (uint64_t)(secs * 1e9)) {
		/* the work of the last round, reported now */
		t = next - ROUND_NS;
		c0 = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
		for (i = 0; i < per; i++, t += gap) {
			if (i % 16 == 15) {
				m.start = t;
				m.end = t + gap;
				handle((const CUpti_Activity *)&m);
			} else {
				k.name = names[i % KERNELS];
				k.start = t;
				k.end = t + gap;
				handle((const CUpti_Activity *)&k);
			}
		}
		flush();
		cpu += bench_clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		n += per;
		rounds++;
		next += ROUND_NS;
		now = bench_clock_ns(CLOCK_MONOTONIC);
		if (now > next) {
			behind++;
			continue;
		}
		nanosleep(&(struct timespec){ 0, (long)(next - now) }, NULL);
	}
	printf("records %llu ns_per_record %.1f rounds %lu behind %lu\n", (unsigned long long)n,
	       n ? (double)cpu / (double)n : 0.0, rounds, behind);
	return 0;
}
