/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * USDT probes of the CUPTI subscriber (provider "cachescope_gpu").  The
 * daemon attaches uprobes to libcachescope_cupti.so by path and sees every
 * CUDA process that loaded it.  Each probe is a nop in the code and a note
 * in the ELF file (readelf -n build/libcachescope_cupti.so), and each has a
 * semaphore: the library fires a probe only while a tracer is attached to
 * it, and collects CUPTI activity only while one is attached to any.
 *
 *   batch(bins, n, version)   n struct cs_gpu_bin (bpf/cachescope.h) at
 *                             bins, layout CS_GPU_BATCH_VERSION: the records
 *                             of one CUPTI buffer, folded; what the daemon
 *                             reads by default
 *
 * And one probe per record, as CUPTI gave it (cachescoped --gpu-probes
 * records, or a tracer of one's own):
 *
 *   kernel(name, start, end, device, stream, correlation,
 *          grid_x, grid_y, grid_z, block_x, block_y, block_z)
 *   kv_kernel(...)            same arguments, for kernels whose name matches
 *                             a KV pattern (fires after kernel)
 *   memcpy(copy_kind, bytes, src_kind, dst_kind, start, end,
 *          device, stream, correlation)
 *                             kinds: CUpti_ActivityMemcpyKind and
 *                             CUpti_ActivityMemoryKind values
 *   memset(bytes, start, end, device, stream, correlation, memory_kind)
 *   memory(op, address, bytes, timestamp, device, stream, memory_kind,
 *          correlation)       op: 1 allocation, 2 release
 *                             (CUpti_ActivityMemoryOperationType)
 *   ext_corr(external_kind, external_id, correlation)
 *   dropped(count, total)     records CUPTI dropped since the last buffer
 *
 * Times are CUPTI timestamps in ns; ids are CUPTI's (device, stream,
 * correlation).  Strings and bins are pointers into the process, valid
 * only while the probe fires; a record without a name passes "".
 */
#ifndef CACHESCOPE_CUDA_PROBES_H
#define CACHESCOPE_CUDA_PROBES_H

#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#include "../bpf/cachescope.h"

/* A probe's semaphore, defined once (probes.c), and whether anyone is
 * attached to the probe now.  The kernel writes it (uprobe ref_ctr). */
#define CS_GPU_SEMA(probe) cachescope_gpu_##probe##_semaphore
#define CS_GPU_SEMAPHORE(probe) \
	unsigned short CS_GPU_SEMA(probe) __attribute__((section(".probes"), used))
#define CS_GPU_HEARD(probe) \
	__builtin_expect(__atomic_load_n(&CS_GPU_SEMA(probe), __ATOMIC_RELAXED) != 0, 0)

extern unsigned short CS_GPU_SEMA(kernel), CS_GPU_SEMA(kv_kernel), CS_GPU_SEMA(memcpy),
	CS_GPU_SEMA(memset), CS_GPU_SEMA(memory), CS_GPU_SEMA(ext_corr),
	CS_GPU_SEMA(dropped), CS_GPU_SEMA(batch);

#define CS_GPU_PROBE_BATCH(a1, a2, a3) \
	DTRACE_PROBE3(cachescope_gpu, batch, a1, a2, a3)

/* Fire the batch probe with n bins (probes.c: a call of its own, which the
 * unit tests wrap to see what it was handed). */
void probe_batch(const struct cs_gpu_bin *bins, unsigned int n);

/* probe: kernel or kv_kernel */
#define CS_GPU_PROBE_KERNEL(probe, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12) \
	DTRACE_PROBE12(cachescope_gpu, probe, a1, a2, a3, a4, a5, a6, a7, a8, \
		       a9, a10, a11, a12)
#define CS_GPU_PROBE_MEMCPY(a1, a2, a3, a4, a5, a6, a7, a8, a9) \
	DTRACE_PROBE9(cachescope_gpu, memcpy, a1, a2, a3, a4, a5, a6, a7, a8, a9)
#define CS_GPU_PROBE_MEMSET(a1, a2, a3, a4, a5, a6, a7) \
	DTRACE_PROBE7(cachescope_gpu, memset, a1, a2, a3, a4, a5, a6, a7)
#define CS_GPU_PROBE_MEMORY(a1, a2, a3, a4, a5, a6, a7, a8) \
	DTRACE_PROBE8(cachescope_gpu, memory, a1, a2, a3, a4, a5, a6, a7, a8)
#define CS_GPU_PROBE_EXT_CORR(a1, a2, a3) \
	DTRACE_PROBE3(cachescope_gpu, ext_corr, a1, a2, a3)
#define CS_GPU_PROBE_DROPPED(a1, a2) \
	DTRACE_PROBE2(cachescope_gpu, dropped, a1, a2)

#endif
