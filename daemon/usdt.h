/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The checks of user-space probe records that need no state.  Records of
 * user-space probes (kvref's kv probes, the CUPTI library's gpu probes)
 * carry whatever values the process passed: any local process can load the
 * library or run kvref and fire them.  Values out of these bounds are
 * rejected, counted by reason (wtable_stats.rejected) and never reach a
 * key's state; the kv pool's per-block state is bounded per pool and over
 * all pools together (kvpool.h).
 */
#ifndef CS_USDT_H
#define CS_USDT_H

#include <stdint.h>
#include "../bpf/cachescope.h"

#define KV_MAX_BLOCKS		(1u << 22)	/* blocks of one pool */
#define KV_BLOCK_BUDGET		(1u << 22)	/* of all pools together (10 bytes each) */
#define KV_MAX_BLOCK_BYTES	(1ull << 30)
#define GPU_MAX_SPAN_NS		CS_GPU_MAX_SPAN_NS	/* a kernel or copy */
#define GPU_MAX_BYTES		CS_GPU_MAX_BYTES	/* a copy, allocation or release */
#define GPU_MAX_DROPPED		CS_GPU_MAX_DROPPED	/* records CUPTI dropped, one report */
#define GPU_MEMCPY_KINDS	CS_GPU_MEMCPY_KINDS	/* CUpti_ActivityMemcpyKind below */
#define GPU_MAX_CONCURRENT	CS_GPU_MAX_CONCURRENT	/* kernels or copies of one
							 * process at once: busy
							 * time over a span */
#define GPU_MAX_COUNT		CS_GPU_MAX_COUNT	/* records begun in one bin */

enum usdt_reject {
	REJ_RANGE,	/* an argument did not fit its field (CS_F_RANGE, BPF) */
	REJ_KV_POOL,	/* a pool of no or over KV_MAX_BLOCKS blocks, or block
			 * bytes not in 1..KV_MAX_BLOCK_BYTES */
	REJ_KV_BUDGET,	/* pools of all processes past KV_BLOCK_BUDGET blocks */
	REJ_KV_BLOCK,	/* a block index outside the process's pool (or no pool) */
	REJ_KV_ARG,	/* a negative swap slot or eviction count */
	REJ_GPU_TIME,	/* end before start, a span over GPU_MAX_SPAN_NS, or
			 * busy time over GPU_MAX_CONCURRENT times the span */
	REJ_GPU_BYTES,	/* bytes over GPU_MAX_BYTES (dropped: GPU_MAX_DROPPED),
			 * or an allocation bin's bytes not count x size */
	REJ_GPU_KIND,	/* a copy kind not below GPU_MEMCPY_KINDS */
	REJ_GPU_COUNT,	/* more than GPU_MAX_COUNT records in one */
	REJ_UNTRUSTED,	/* of a process not believed (CS_F_FOREIGN, BPF): not
			 * chosen by --pid or --cgroup, not of a --probe-user,
			 * not started by the daemon (window.c) */
	REJ_N
};

#define REJ_NONE REJ_N

/* The reason to reject e (a kv or gpu record, CS_GPU_DROPPED included),
 * REJ_NONE for none; records of other types are never rejected here. */
unsigned int usdt_check(const struct cs_event *e);
/* "kv_block" for REJ_KV_BLOCK...; "?" past REJ_N */
const char *usdt_reject_name(unsigned int reason);

#endif
