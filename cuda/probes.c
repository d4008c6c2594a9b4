// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The probes' semaphores and the batch probe's call site: see probes.h. */
#include "probes.h"

/* The kernel counts the tracers attached to each probe in every process
 * that maps this library (uprobe reference counters). */
CS_GPU_SEMAPHORE(kernel);
CS_GPU_SEMAPHORE(kv_kernel);
CS_GPU_SEMAPHORE(memcpy);
CS_GPU_SEMAPHORE(memset);
CS_GPU_SEMAPHORE(memory);
CS_GPU_SEMAPHORE(ext_corr);
CS_GPU_SEMAPHORE(dropped);
CS_GPU_SEMAPHORE(batch);

void probe_batch(const struct cs_gpu_bin *bins, unsigned int n)
{
	CS_GPU_PROBE_BATCH(bins, n, CS_GPU_BATCH_VERSION);
}
