// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gpumem: device memory as an engine nobody here wrote uses it, seen only
 * through CUPTI (no probes of its own), for the GPU leak label: a caching
 * allocator that grows at its start and then stays, against memory
 * allocated and never released.
 *
 *   gpumem pool|leak|swap|far|offload SECONDS
 *
 * All, every 10 ms: a 256 KiB scratch buffer allocated, a kernel over it,
 * the buffer released (churn: short-lived allocations).
 *   pool: in the first 3 s, a 2 MiB segment every 50 ms, kept (60 segments,
 *         120 MiB: a caching allocator warming up, or a KV pool filled);
 *         then no more.
 *   leak: all along, a 1 MiB allocation every 50 ms, never released.
 * and for the KV blocks' traffic, with a pool of 32 blocks of 64 KiB in
 * one 2 MiB allocation, 4 blocks a tick:
 *   swap: each block copied out to its host slot (device to host) and back
 *         in from it (host to device) 8 blocks later: blocks preempted and
 *         brought back within a pool's worth (a swap storm);
 *   far:  the same, back 400 blocks later (25 MiB, past the pool's 2 MiB):
 *         a block that comes back after the pool has turned over many times;
 *   offload: each block copied out to a host slot that is never copied back
 *         (a log, a checkpoint), and inputs copied in from a buffer that was
 *         never copied out.
 * Prints "pid PID" first and "gpumem: MODE allocs A releases R live L out O
 * in I" at the end; exit 0 when every CUDA call succeeded.  Built over
 * tests/helpers/fakecuda for the emulation (records from
 * tests/helpers/cupti_emu.c), and by nvcc where one is.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cuda_runtime.h>
#include <unistd.h>

#ifndef KVREF_LAUNCH
#define KVREF_LAUNCH(kernel, grid, block, shmem, stream, ...) \
	kernel<<<(grid), (block), (shmem), (stream)>>>(__VA_ARGS__)
#endif

#define SCRATCH (256u << 10)
#define SEGMENT (2u << 20)
#define LEAKED (1u << 20)
#define MAX_KEPT 4096
#define BLOCK (64u << 10)
#define POOL_BLOCKS 32u
#define SLOTS 512u
#define PER_TICK 4

__global__ void gpumem_fill(float *x, unsigned int n)
{
	for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		x[i] = (float)i;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define CK(call) \
	do { \
		cudaError_t e_ = (call); \
		if (e_ != cudaSuccess) { \
			fprintf(stderr, "gpumem: %s: %s\n", #call, cudaGetErrorString(e_)); \
			return 1; \
		} \
	} while (0)

int main(int argc, char **argv)
{
	static void *kept[MAX_KEPT];
	unsigned long allocs = 0, releases = 0, live = 0, outs = 0, ins = 0, k = 0;
	const char *mode = argc == 3 ? argv[1] : "";
	double secs, t0, t;
	bool leak, blocks, back;
	char *end, *pool = NULL, *host = NULL, *input = NULL;
	unsigned int lag;
	int nk = 0, tick = 0, n;
	cudaStream_t s;

	if (argc != 3 || (strcmp(mode, "pool") && strcmp(mode, "leak") && strcmp(mode, "swap") &&
			  strcmp(mode, "far") && strcmp(mode, "offload")) ||
	    (secs = strtod(argv[2], &end)) <= 0 || *end || secs > 600) {
		fprintf(stderr, "usage: gpumem pool|leak|swap|far|offload SECONDS  (at most 600)\n");
		return 2;
	}
	leak = !strcmp(mode, "leak");
	blocks = !strcmp(mode, "swap") || !strcmp(mode, "far") || !strcmp(mode, "offload");
	back = strcmp(mode, "offload") != 0;
	lag = !strcmp(mode, "far") ? 400 : 8;
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
		fprintf(stderr, "gpumem: no CUDA device\n");
		return 1;
	}
	CK(cudaSetDevice(0));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	if (blocks) {
		CK(cudaMalloc(&pool, POOL_BLOCKS * BLOCK));
		CK(cudaHostAlloc(&host, (size_t)SLOTS * BLOCK, cudaHostAllocDefault));
		CK(cudaHostAlloc(&input, BLOCK, cudaHostAllocDefault));
		memset(host, 0, (size_t)SLOTS * BLOCK);
		memset(input, 1, BLOCK);
		allocs++;
		live += POOL_BLOCKS * BLOCK;
	}
	t0 = now_s();
	while ((t = now_s() - t0) < secs) {
		float *scratch;

		CK(cudaMalloc(&scratch, SCRATCH));
		KVREF_LAUNCH(gpumem_fill, 2u, 64u, 0, s, scratch, (unsigned int)(SCRATCH / sizeof(float)) / 64);
		CK(cudaGetLastError());
		CK(cudaStreamSynchronize(s));
		CK(cudaFree(scratch));
		allocs++;
		releases++;
		/* block k out to its host slot; block k - lag back in from its */
		for (int b = 0; blocks && b < PER_TICK; b++, k++) {
			char *blk = pool + (k % POOL_BLOCKS) * BLOCK;

			CK(cudaMemcpyAsync(host + (k % SLOTS) * BLOCK, blk, BLOCK,
					   cudaMemcpyDeviceToHost, s));
			outs++;
			if (back && k >= lag) {
				CK(cudaMemcpyAsync(blk, host + ((k - lag) % SLOTS) * BLOCK, BLOCK,
						   cudaMemcpyHostToDevice, s));
				ins++;
			} else if (!back) {
				CK(cudaMemcpyAsync(blk, input, BLOCK, cudaMemcpyHostToDevice, s));
			}
		}
		CK(cudaStreamSynchronize(s));
		if (!blocks && tick++ % 5 == 0 && nk < MAX_KEPT && (leak || t < 3.0)) {
			CK(cudaMalloc(&kept[nk], leak ? LEAKED : SEGMENT));
			live += leak ? LEAKED : SEGMENT;
			nk++;
			allocs++;
		}
		usleep(10000);
	}
	printf("gpumem: %s allocs %lu releases %lu live %lu out %lu in %lu\n", mode, allocs, releases, live,
	       outs, ins);
	fflush(stdout);
	if (blocks) {
		CK(cudaFreeHost(host));
		CK(cudaFreeHost(input));
	}
	CK(cudaStreamDestroy(s));
	return 0;
}
