/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the emulated CUDA runtime (tests/helpers/fakecuda) tells the
 * emulated driver's CUPTI (tests/helpers/cupti_emu.c): each launch, copy,
 * device allocation and release, for the injected CUPTI library.  Built
 * without CUPTI headers, these do nothing.
 */
#ifndef CACHESCOPE_CUPTI_EMU_H
#define CACHESCOPE_CUPTI_EMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef KVREF_EMU_CUPTI
uint64_t cupti_emu_now(void);
/* a kernel of grid blocks of block threads, run from start to end (ns) */
void cupti_emu_kernel(const char *name, uint64_t start, uint64_t end, unsigned int grid,
		      unsigned int block, size_t shmem);
/* a copy of cudaMemcpyKind kind */
void cupti_emu_copy(int kind, uint64_t bytes, uint64_t start, uint64_t end);
/* the same copy at its entry, as the runtime's callback shows it */
void cupti_emu_copy_api(void *dst, const void *src, uint64_t bytes, int kind);
/* a device allocation (alloc) or release of bytes at addr */
void cupti_emu_memory(bool alloc, const void *addr, uint64_t bytes);
#else
static inline uint64_t cupti_emu_now(void) { return 0; }
static inline void cupti_emu_kernel(const char *name, uint64_t start, uint64_t end,
				    unsigned int grid, unsigned int block, size_t shmem)
{
	(void)name; (void)start; (void)end; (void)grid; (void)block; (void)shmem;
}
static inline void cupti_emu_copy(int kind, uint64_t bytes, uint64_t start, uint64_t end)
{
	(void)kind; (void)bytes; (void)start; (void)end;
}
static inline void cupti_emu_copy_api(void *dst, const void *src, uint64_t bytes, int kind)
{
	(void)dst; (void)src; (void)bytes; (void)kind;
}
static inline void cupti_emu_memory(bool alloc, const void *addr, uint64_t bytes)
{
	(void)alloc; (void)addr; (void)bytes;
}
#endif

#ifdef __cplusplus
}
#endif

#endif
