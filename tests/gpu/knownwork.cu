// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * knownwork: a CUDA program whose GPU work is known to the record, for the
 * device check (tests/gpu/device-check.sh): run with the CUPTI library
 * injected under cachescoped, the daemon's GPU rows of its pid must hold
 * exactly what it prints.
 *
 *   knownwork [ROUNDS]        (default 100)
 *
 * Each round, on one stream, synchronised at its end:
 *   3 launches of cs_known_axpy            (not a KV kernel)
 *   1 launch of paged_attention_v2_kernel  (a KV kernel: vLLM's name, one of
 *                                           the library's default patterns)
 *   one 1 MiB host-to-device and one 256 KiB device-to-host copy, from and
 *   to pinned host memory (one CUPTI memcpy record each)
 *   one 2 MiB device allocation, released the round after
 * plus, once, the 1 MiB device buffer the kernels work on.  Prints
 * "pid PID" first and, after the last round, the totals; exit 0 only when
 * every CUDA call succeeded.  Built by nvcc for the GPU, and over
 * tests/helpers/fakecuda for the emulation (the same source, the same
 * counts, records from tests/helpers/cupti_emu.c).
 */
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <unistd.h>

#ifndef KVREF_LAUNCH
#define KVREF_LAUNCH(kernel, grid, block, shmem, stream, ...) \
	kernel<<<(grid), (block), (shmem), (stream)>>>(__VA_ARGS__)
#endif

#define IN_BYTES (1u << 20)
#define OUT_BYTES (256u << 10)
#define ALLOC_BYTES (2u << 20)
#define N (IN_BYTES / sizeof(float))
#define GRID 4u
#define BLOCK 64u

__global__ void cs_known_axpy(float *x, float a, unsigned int n)
{
	for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		x[i] = a * x[i] + 1.0f;
}

/* named as vLLM's paged attention kernel; here a reduction of x into out */
__global__ void paged_attention_v2_kernel(float *out, const float *x, unsigned int n)
{
	float acc = 0.0f;

	for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		acc += x[i];
	out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

#define CK(call) \
	do { \
		cudaError_t e_ = (call); \
		if (e_ != cudaSuccess) { \
			fprintf(stderr, "knownwork: %s: %s\n", #call, cudaGetErrorString(e_)); \
			return 1; \
		} \
	} while (0)

int main(int argc, char **argv)
{
	unsigned long kernels = 0, kv = 0, in = 0, out = 0, allocs = 0, releases = 0, alloc_bytes = 0;
	float *x, *hin, *hout, *red;
	void *prev = NULL, *cur;
	cudaStream_t s;
	char *end;
	long rounds = 100, r;
	int n;

	if (argc > 2 || (argc == 2 && ((rounds = strtol(argv[1], &end, 10)) < 1 || *end || rounds > 100000))) {
		fprintf(stderr, "usage: knownwork [ROUNDS]  (1..100000, default 100)\n");
		return 2;
	}
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
		fprintf(stderr, "knownwork: no CUDA device\n");
		return 1;
	}
	CK(cudaSetDevice(0));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMalloc(&x, IN_BYTES));
	allocs++;
	alloc_bytes += IN_BYTES;
	CK(cudaHostAlloc(&hin, IN_BYTES, cudaHostAllocDefault));
	CK(cudaHostAlloc(&hout, OUT_BYTES, cudaHostAllocDefault));
	red = x + N - OUT_BYTES / sizeof(float);	/* the reduction writes the tail */
	for (unsigned int i = 0; i < N; i++)
		hin[i] = (float)(i % 7);
	for (r = 0; r < rounds; r++) {
		CK(cudaMemcpyAsync(x, hin, IN_BYTES, cudaMemcpyHostToDevice, s));
		in += IN_BYTES;
		for (int k = 0; k < 3; k++) {
			KVREF_LAUNCH(cs_known_axpy, GRID, BLOCK, 0, s, x, 0.5f, (unsigned int)N / 2);
			kernels++;
		}
		KVREF_LAUNCH(paged_attention_v2_kernel, GRID, BLOCK, 0, s, red, x, (unsigned int)N / 2);
		kernels++;
		kv++;
		CK(cudaGetLastError());
		CK(cudaMemcpyAsync(hout, red, OUT_BYTES, cudaMemcpyDeviceToHost, s));
		out += OUT_BYTES;
		CK(cudaMalloc(&cur, ALLOC_BYTES));
		allocs++;
		alloc_bytes += ALLOC_BYTES;
		if (prev) {
			CK(cudaFree(prev));
			releases++;
		}
		prev = cur;
		CK(cudaStreamSynchronize(s));
	}
	CK(cudaFree(prev));
	CK(cudaFree(x));
	releases += 2;
	CK(cudaFreeHost(hin));
	CK(cudaFreeHost(hout));
	CK(cudaStreamDestroy(s));
	printf("knownwork: kernels %lu kv_kernels %lu copy_in %lu copy_out %lu allocs %lu releases %lu alloc_bytes %lu\n",
	       kernels, kv, in, out, allocs, releases, alloc_bytes);
	return 0;
}
