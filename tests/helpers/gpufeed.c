// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gpufeed: what a CUDA process would do on a machine without a GPU.  It
 * loads libcachescope_cupti.so and hands its record handler real CUPTI
 * activity records (the structs of the installed headers, filled here),
 * then hands the batch over as a walk of a CUPTI buffer does, every round,
 * so the library's USDT probes fire exactly as they would for records
 * from a device.  The independent count the GPU-domain tests compare with.
 *
 *   gpufeed LIBRARY SECONDS [forged]
 *
 * Every 10 ms: 3 kernels named gemm_kernel (100 us each), 2 KV kernels named
 * kvref_kv_paged_attention (50 us each), one 1 MiB host-to-device and one
 * 256 KiB device-to-host copy, and one 2 MiB device allocation that is
 * released 10 ms later.  Prints "pid PID" first, the totals at the end,
 * and the library's counters ("library: ...").
 * With "forged", then four records with values no device gives, which the
 * daemon must reject: a kernel that ends before it starts, a kernel on
 * device 5000, a copy of 1 PiB and a copy of kind 200 (not in the totals).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "../../cuda/cupti_sub.h"

typedef int (*handle_fn)(const CUpti_Activity *rec);
typedef int (*flush_fn)(void);
typedef void (*stats_fn)(struct cupti_sub_stats *out);

static handle_fn handle;
static uint64_t t;		/* CUPTI-like timestamps */

static void kernel(const char *name, uint64_t ns)
{
	cupti_sub_kernel_rec k;

	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.name = name;
	k.start = t;
	k.end = t + ns;
	k.streamId = 7;
	k.gridX = k.gridY = k.gridZ = 1;
	k.blockX = 128;
	k.blockY = k.blockZ = 1;
	t += ns;
	handle((const CUpti_Activity *)&k);
}

static void copy(uint8_t kind, uint64_t bytes)
{
	cupti_sub_memcpy_rec m;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = kind;
	m.srcKind = kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD ? CUPTI_ACTIVITY_MEMORY_KIND_PINNED :
							      CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.dstKind = kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD ? CUPTI_ACTIVITY_MEMORY_KIND_DEVICE :
							      CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	m.bytes = bytes;
	m.start = t;
	m.end = t + bytes / 16;
	m.streamId = 7;
	m.copyCount = 1;
	handle((const CUpti_Activity *)&m);
}

static void memory(CUpti_ActivityMemoryOperationType op, uint64_t addr, uint64_t bytes)
{
	cupti_sub_memory_rec m;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	m.memoryOperationType = op;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.address = addr;
	m.bytes = bytes;
	m.timestamp = t;
	handle((const CUpti_Activity *)&m);
}

static void forged(void)
{
	cupti_sub_kernel_rec k;
	cupti_sub_memcpy_rec m;

	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.name = "gemm_kernel";
	k.start = t + 1000;
	k.end = t;
	handle((const CUpti_Activity *)&k);
	k.start = t;
	k.end = t + 1000;
	k.deviceId = 5000;
	handle((const CUpti_Activity *)&k);
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	m.bytes = 1ull << 50;
	m.start = t;
	m.end = t + 1000;
	handle((const CUpti_Activity *)&m);
	m.copyKind = 200;
	m.bytes = 4096;
	handle((const CUpti_Activity *)&m);
}

int main(int argc, char **argv)
{
	unsigned long kernels = 0, kv = 0, in = 0, out = 0, allocs = 0, releases = 0;
	struct cupti_sub_stats st;
	uint64_t prev = 0, addr;
	flush_fn flush;
	stats_fn stats;
	double secs;
	void *lib;
	long i, n;

	if (argc < 3 || argc > 4 || (secs = atof(argv[2])) <= 0 ||
	    (argc == 4 && strcmp(argv[3], "forged"))) {
		fprintf(stderr, "usage: gpufeed LIBRARY SECONDS [forged]\n");
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW);
	if (!lib || !(handle = (handle_fn)dlsym(lib, "cupti_sub_handle_record")) ||
	    !(flush = (flush_fn)dlsym(lib, "cupti_sub_flush_batch")) ||
	    !(stats = (stats_fn)dlsym(lib, "cupti_sub_get_stats"))) {
		fprintf(stderr, "gpufeed: cannot load %s: %s\n", argv[1], dlerror());
		return 1;
	}
	printf("pid %d\n", getpid());
	fflush(stdout);
	n = (long)(secs * 100);
	for (i = 0; i < n; i++) {
		kernel("gemm_kernel", 100000);
		kernel("gemm_kernel", 100000);
		kernel("gemm_kernel", 100000);
		kernel("kvref_kv_paged_attention", 50000);
		kernel("kvref_kv_paged_attention", 50000);
		kernels += 5;
		kv += 2;
		copy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 1 << 20);
		copy(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 256 << 10);
		in += 1 << 20;
		out += 256 << 10;
		addr = 0x7f0000000000ull + (uint64_t)i * (2 << 20);
		memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, addr, 2 << 20);
		allocs++;
		if (prev) {
			memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, prev, 2 << 20);
			releases++;
		}
		prev = addr;
		flush();
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	}
	memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, prev, 2 << 20);
	releases++;
	if (argc == 4)
		forged();
	flush();
	printf("kernels %lu kv_kernels %lu copy_in %lu copy_out %lu allocs %lu releases %lu\n",
	       kernels, kv, in, out, allocs, releases);
	stats(&st);
	printf("library: records %llu rejected %llu batches %llu bins %llu unheard %llu\n",
	       (unsigned long long)st.records, (unsigned long long)st.rejected,
	       (unsigned long long)st.batches, (unsigned long long)st.bins,
	       (unsigned long long)st.batches_unheard);
	return 0;
}
