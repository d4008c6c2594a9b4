/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernels of the CUPTI benchmarks (cupti_record, gpu_rate): names of
 * about 1.2 KB, mangled as CUTLASS GEMMs and, one in eight, as
 * FlashAttention 2's paged-KV kernel (a KV kernel under the default
 * patterns), as templated kernels' names are.
 */
#ifndef CS_BENCH_KERNEL_NAMES_H
#define CS_BENCH_KERNEL_NAMES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline uint64_t bench_clock_ns(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Kernel i's name, malloc'ed (exits when out of memory). */
static inline char *bench_kernel_name(unsigned int i)
{
	static const char *const part =
		"NS_9transform11threadblock28PredicatedTileAccessIteratorINS_11"
		"MatrixShapeILi128ELi32EEENS_6half_tENS_6layout8RowMajorELi1E";
	char *n = malloc(2048);
	size_t o;

	if (!n)
		exit(1);
	if (i % 8 == 0)
		o = (size_t)sprintf(n, "_ZN5flash24flash_fwd_splitkv_kernelI%uILi128ELi64E", i);
	else
		o = (size_t)sprintf(n, "_ZN7cutlass6KernelINS_4gemm6kernel13GemmUniversal%uI", i);
	while (o < 1200)
		o += (size_t)sprintf(n + o, "%sLi%zuE", part, o);
	strcpy(n + o, "EEEEvNT_6ParamsE");
	return n;
}

#endif
