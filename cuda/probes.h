/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * USDT probes of the CUPTI subscriber (provider "cachescope_gpu"): every
 * CUPTI activity record the library reads is re-emitted as one probe, so the
 * daemon attaches uprobes to libcachescope_cupti.so by path and sees every
 * CUDA process that loaded it.  Each probe is a nop in the code and a note
 * in the ELF file (readelf -n build/libcachescope_cupti.so).
 *
 * Times are CUPTI timestamps in ns; ids are CUPTI's (device, stream,
 * correlation).  Strings are pointers into CUPTI's buffer, valid only while
 * the probe fires; a record without a name passes "".
 *
 *   kernel(name, start, end, device, stream, correlation,
 *          grid_x, grid_y, grid_z, block_x, block_y, block_z)
 *   kv_kernel(...)            same arguments, for kernels whose name matches
 *                             CACHESCOPE_KV_KERNELS (fires after kernel)
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
 */
#ifndef CACHESCOPE_CUDA_PROBES_H
#define CACHESCOPE_CUDA_PROBES_H

#include <sys/sdt.h>

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
