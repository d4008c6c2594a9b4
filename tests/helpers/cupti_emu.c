// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The driver's half of CUPTI for the host emulation of the CUDA backend
 * (build/tests/kvref_cuda_emu.so, tests/helpers/fakecuda): what a GPU's
 * driver would record of kvref's work, handed to the CUPTI library that
 * the process was given to inject (CUDA_INJECTION64_PATH), as real CUPTI
 * activity records of the installed headers.
 *
 * The driver dlopens the injection library in cuInit; here the first call
 * does.  Each emulated kernel launch becomes a CUpti_ActivityKernel10, each
 * copy a CUpti_ActivityMemcpy6, each device allocation and release a
 * CUpti_ActivityMemory4, timed on CLOCK_MONOTONIC around the host work that
 * stands for it (the library's timestamp callback gives CUPTI that clock);
 * each copy is also shown, at its entry, to the library's runtime callback
 * (cupti_sub_handle_copy), as CUPTI's callback API would.
 * CUPTI hands over a buffer when its flush period or the buffer's room ends;
 * here a thread's records are handed over every EMU_FLUSH_NS of its work,
 * and at its exit.  Without CUDA_INJECTION64_PATH nothing is recorded, as a
 * driver injects nothing.  The library's record handler sees the records
 * exactly as a buffer walk gives them, so its batches, the USDT probes,
 * the BPF programs and the daemon all run as they would with a GPU.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../../cuda/cupti_sub.h"
#include "cupti_emu.h"

#define EMU_FLUSH_NS 10000000ull	/* 10 ms of a thread's work a buffer */

typedef int (*handle_fn)(const CUpti_Activity *rec);
typedef int (*flush_fn)(void);
typedef void (*copy_fn)(void *dst, const void *src, size_t bytes, int kind);

static pthread_once_t once = PTHREAD_ONCE_INIT;
static handle_fn handle;
static flush_fn flush;
static copy_fn copy_api;	/* the library's runtime-callback side */
static unsigned int correlation;	/* as the driver numbers API calls */

/* per thread: when its records were last handed over; a key whose
 * destructor hands over the rest when the thread ends */
static pthread_key_t last_key;
static __thread uint64_t last_flush;

static void thread_done(void *p)
{
	(void)p;
	if (flush)
		flush();
}

static void at_exit(void)
{
	if (flush)
		flush();
}

static void open_library(void)
{
	const char *path = getenv("CUDA_INJECTION64_PATH");
	void *dl;

	if (!path || !*path)
		return;
	dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		fprintf(stderr, "cupti_emu: cannot load %s: %s\n", path, dlerror());
		return;
	}
	handle = (handle_fn)dlsym(dl, "cupti_sub_handle_record");
	flush = (flush_fn)dlsym(dl, "cupti_sub_flush_batch");
	copy_api = (copy_fn)dlsym(dl, "cupti_sub_handle_copy");
	if (!handle || !flush) {
		fprintf(stderr, "cupti_emu: %s is not cachescope's CUPTI library\n", path);
		handle = NULL;
		flush = NULL;
		return;
	}
	if (pthread_key_create(&last_key, thread_done))
		return;
	atexit(at_exit);
}

uint64_t cupti_emu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool ready(void)
{
	pthread_once(&once, open_library);
	return handle != NULL;
}

static void deliver(const CUpti_Activity *rec, uint64_t end)
{
	handle(rec);
	if (!last_flush) {
		last_flush = end;
		pthread_setspecific(last_key, &last_flush);	/* arms thread_done */
	} else if (end - last_flush >= EMU_FLUSH_NS) {
		flush();
		last_flush = end;
	}
}

void cupti_emu_kernel(const char *name, uint64_t start, uint64_t end, unsigned int grid,
		      unsigned int block, size_t shmem)
{
	cupti_sub_kernel_rec k;

	if (!ready())
		return;
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.name = name;
	k.start = start;
	k.end = end > start ? end : start + 1;
	k.deviceId = 0;
	k.contextId = 1;
	k.streamId = 13;
	k.gridX = (int32_t)grid;
	k.gridY = k.gridZ = 1;
	k.blockX = (int32_t)block;
	k.blockY = k.blockZ = 1;
	k.dynamicSharedMemory = (int32_t)shmem;
	k.correlationId = __atomic_add_fetch(&correlation, 1, __ATOMIC_RELAXED);
	deliver((const CUpti_Activity *)&k, k.end);
}

/* cudaMemcpyKind (runtime) to CUpti_ActivityMemcpyKind and the two sides */
static void copy_kinds(int kind, uint8_t *ck, uint8_t *src, uint8_t *dst)
{
	switch (kind) {
	case 1:		/* cudaMemcpyHostToDevice */
		*ck = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
		*src = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
		*dst = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
		break;
	case 2:		/* cudaMemcpyDeviceToHost */
		*ck = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
		*src = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
		*dst = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
		break;
	case 3:		/* cudaMemcpyDeviceToDevice */
		*ck = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
		*src = *dst = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
		break;
	default:
		*ck = CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
		*src = *dst = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
		break;
	}
}

void cupti_emu_copy(int kind, uint64_t bytes, uint64_t start, uint64_t end)
{
	cupti_sub_memcpy_rec m;

	if (!ready())
		return;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	copy_kinds(kind, &m.copyKind, &m.srcKind, &m.dstKind);
	m.bytes = bytes;
	m.start = start;
	m.end = end > start ? end : start + 1;
	m.deviceId = 0;
	m.contextId = 1;
	m.streamId = 13;
	m.copyCount = 1;
	m.correlationId = __atomic_add_fetch(&correlation, 1, __ATOMIC_RELAXED);
	deliver((const CUpti_Activity *)&m, m.end);
}

void cupti_emu_copy_api(void *dst, const void *src, uint64_t bytes, int kind)
{
	if (ready() && copy_api)
		copy_api(dst, src, (size_t)bytes, kind);
}

void cupti_emu_memory(bool alloc, const void *addr, uint64_t bytes)
{
	cupti_sub_memory_rec m;

	if (!ready())
		return;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	m.memoryOperationType = alloc ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION :
					CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.address = (uint64_t)(uintptr_t)addr;
	m.bytes = bytes;
	m.timestamp = cupti_emu_now();
	m.deviceId = 0;
	m.contextId = 1;
	m.correlationId = __atomic_add_fetch(&correlation, 1, __ATOMIC_RELAXED);
	deliver((const CUpti_Activity *)&m, m.timestamp);
}
