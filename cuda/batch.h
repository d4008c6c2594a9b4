/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One batch of the CUPTI library: the activity records of one CUPTI
 * buffer folded into bins (struct cs_gpu_bin, bpf/cachescope.h) of
 * CS_GPU_BIN_NS of GPU time by class: op, copy kind, allocation size.
 * Knows nothing of CUPTI: the record handler (cupti_sub.c) feeds it the
 * values it read, and hands its bins to the batch probe when a buffer is
 * done or the batch is full.
 *
 * A run (kernel, copy) is counted in the bin it began in; its run time and
 * its bytes, in proportion to time, go to the bins it ran in (the last
 * takes the remainder: the sums are exact).  A run over more than
 * CS_GPU_SPLIT_BINS bins is a bin of its own, its own [start, end), which
 * the daemon splits over its windows in the same way.  A run with no end
 * (CUPTI's forced flush of work still running) is counted, with its bytes,
 * and no time.
 */
#ifndef CACHESCOPE_CUDA_BATCH_H
#define CACHESCOPE_CUDA_BATCH_H

#include <stdbool.h>
#include <stdint.h>
#include "../bpf/cachescope.h"

#define BATCH_SLOTS 512		/* the bins' index: twice CS_GPU_BATCH_MAX */
/* the most bins one record takes: a KV kernel counts twice (all kernels,
 * and the KV ones again), each up to CS_GPU_SPLIT_BINS */
#define BATCH_RECORD_BINS (2 * CS_GPU_SPLIT_BINS)

struct batch {
	struct cs_gpu_bin bin[CS_GPU_BATCH_MAX];
	uint16_t slot[BATCH_SLOTS];	/* 1 + a bin's index; 0: free */
	unsigned int n;
};

void batch_clear(struct batch *b);

/* Room for one more record of any kind. */
static inline bool batch_room(const struct batch *b)
{
	return b->n + BATCH_RECORD_BINS <= CS_GPU_BATCH_MAX;
}

/* A kernel (op CS_GPU_KERNEL or CS_GPU_KV_KERNEL, kind 0) or a copy
 * (CS_GPU_MEMCPY, its copy kind) that ran over [start, end); end 0 or
 * before start: no run time.  Needs batch_room. */
void batch_run(struct batch *b, uint8_t op, uint16_t kind, uint64_t start,
	       uint64_t end, uint64_t bytes);

/* An allocation or release (CS_GPU_ALLOC, CS_GPU_RELEASE) of size bytes
 * at ts; a release of what was allocated at alloc_ts (BATCH_AGE_UNKNOWN:
 * an allocation not seen), binned with the releases of the same size, slice
 * and allocation slice.  Needs batch_room. */
#define BATCH_AGE_UNKNOWN UINT64_MAX
void batch_mem(struct batch *b, uint8_t op, uint64_t ts, uint64_t size, uint64_t alloc_ts);

/* A block copied out of the device (CS_GPU_SWAP_OUT) or back in
 * (CS_GPU_SWAP_IN, near: within a pool's worth of copies out) at ts.
 * Needs batch_room. */
void batch_swap(struct batch *b, uint8_t op, uint64_t ts, uint64_t bytes, bool near);

/* n records CUPTI dropped (at most CS_GPU_MAX_DROPPED: no buffer holds
 * more).  Needs batch_room. */
void batch_dropped(struct batch *b, uint64_t n);

#endif
