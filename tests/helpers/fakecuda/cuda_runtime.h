/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The part of the CUDA runtime API that cuda/kvref_cuda.cu uses, on the
 * host, for tests on machines without a GPU: "device" memory is host
 * memory, every call is synchronous, streams are names.  Built together
 * with tests/helpers/cuda_emu.h (kernels as coroutines) into
 * build/tests/kvref_cuda_emu.so, it lets the tests run kvref's CUDA backend
 * end to end (weights, block pool, staging copies, swap, logits) without
 * CUDA.  Signatures and semantics as the CUDA runtime documents them.
 * What a driver's CUPTI would record (launches, copies, device allocations
 * and releases) goes to tests/helpers/cupti_emu.c, and from there to the
 * CUPTI library the process was given to inject.
 */
#ifndef CACHESCOPE_FAKE_CUDA_RUNTIME_H
#define CACHESCOPE_FAKE_CUDA_RUNTIME_H

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include "../cupti_emu.h"

enum cudaError_t {
	cudaSuccess = 0,
	cudaErrorInvalidValue = 1,
	cudaErrorMemoryAllocation = 2,
};

enum cudaMemcpyKind {
	cudaMemcpyHostToHost = 0,
	cudaMemcpyHostToDevice = 1,
	cudaMemcpyDeviceToHost = 2,
	cudaMemcpyDeviceToDevice = 3,
	cudaMemcpyDefault = 4,
};

typedef struct fake_stream *cudaStream_t;

#define cudaHostAllocDefault 0u
#define cudaStreamNonBlocking 1u

struct cudaDeviceProp {
	char name[256];
	size_t totalGlobalMem;
	size_t sharedMemPerBlock;
	int major, minor;
};

inline const char *cudaGetErrorString(cudaError_t e)
{
	switch (e) {
	case cudaSuccess: return "no error";
	case cudaErrorInvalidValue: return "invalid argument";
	case cudaErrorMemoryAllocation: return "out of memory";
	}
	return "unknown error";
}

inline cudaError_t cudaGetDeviceCount(int *n)
{
	*n = 1;
	return cudaSuccess;
}

inline cudaError_t cudaSetDevice(int dev)
{
	return dev == 0 ? cudaSuccess : cudaErrorInvalidValue;
}

inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int dev)
{
	if (dev)
		return cudaErrorInvalidValue;
	memset(p, 0, sizeof(*p));
	strcpy(p->name, "cuda_emu (host)");
	p->totalGlobalMem = (size_t)1 << 30;
	p->sharedMemPerBlock = 48 * 1024;
	p->major = 9;
	return cudaSuccess;
}

/* the size of each device allocation, for its release record */
inline std::mutex fake_mem_lock;
inline std::unordered_map<void *, size_t> fake_mem;

inline cudaError_t cudaMalloc(void **p, size_t bytes)
{
	*p = malloc(bytes ? bytes : 1);
	if (!*p)
		return cudaErrorMemoryAllocation;
	{
		std::lock_guard<std::mutex> hold(fake_mem_lock);
		fake_mem[*p] = bytes;
	}
	cupti_emu_memory(true, *p, bytes);
	return cudaSuccess;
}

template <class T> inline cudaError_t cudaMalloc(T **p, size_t bytes)
{
	return cudaMalloc((void **)p, bytes);
}

inline cudaError_t cudaFree(void *p)
{
	size_t bytes = 0;
	bool found = false;

	if (!p)
		return cudaSuccess;
	{
		std::lock_guard<std::mutex> hold(fake_mem_lock);
		auto it = fake_mem.find(p);

		if (it != fake_mem.end()) {
			bytes = it->second;
			found = true;
			fake_mem.erase(it);
		}
	}
	if (!found)
		return cudaErrorInvalidValue;
	cupti_emu_memory(false, p, bytes);
	free(p);
	return cudaSuccess;
}

inline cudaError_t cudaHostAlloc(void **p, size_t bytes, unsigned int flags)
{
	(void)flags;
	*p = malloc(bytes ? bytes : 1);
	return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}

template <class T> inline cudaError_t cudaHostAlloc(T **p, size_t bytes, unsigned int flags)
{
	return cudaHostAlloc((void **)p, bytes, flags);
}

inline cudaError_t cudaFreeHost(void *p)
{
	free(p);
	return cudaSuccess;
}

inline cudaError_t cudaMemset(void *p, int v, size_t bytes)
{
	memset(p, v, bytes);
	return cudaSuccess;
}

inline cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
	uint64_t t0;

	cupti_emu_copy_api(dst, src, bytes, kind);
	t0 = cupti_emu_now();
	memcpy(dst, src, bytes);
	cupti_emu_copy(kind, bytes, t0, cupti_emu_now());
	return cudaSuccess;
}

inline cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes,
				   cudaMemcpyKind kind, cudaStream_t s)
{
	(void)s;
	return cudaMemcpy(dst, src, bytes, kind);
}

inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
	(void)flags;
	*s = (cudaStream_t)malloc(1);
	return *s ? cudaSuccess : cudaErrorMemoryAllocation;
}

inline cudaError_t cudaStreamDestroy(cudaStream_t s)
{
	free(s);
	return cudaSuccess;
}

inline cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
	return s ? cudaSuccess : cudaErrorInvalidValue;
}

inline cudaError_t cudaGetLastError(void)
{
	return cudaSuccess;
}

/* kernel<<<grid, block, shmem, stream>>>(args): run now, on the host, and
 * recorded under the kernel's name */
#define KVREF_LAUNCH(kernel, grid, block, shmem, stream, ...) \
	do { \
		uint64_t t0_ = cupti_emu_now(); \
		emu_launch((grid), (block), (shmem), [&] { kernel(__VA_ARGS__); }); \
		cupti_emu_kernel(#kernel, t0_, cupti_emu_now(), (grid), (block), (shmem)); \
	} while (0)

#endif
