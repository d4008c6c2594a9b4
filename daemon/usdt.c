// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The stateless bounds of user-space probe records: see usdt.h. */
#include <stdbool.h>
#include "usdt.h"

static const char *const reject_names[REJ_N] = {
	[REJ_RANGE] = "range", [REJ_KV_POOL] = "kv_pool", [REJ_KV_BUDGET] = "kv_budget",
	[REJ_KV_BLOCK] = "kv_block", [REJ_KV_ARG] = "kv_arg", [REJ_GPU_TIME] = "gpu_time",
	[REJ_GPU_BYTES] = "gpu_bytes", [REJ_GPU_KIND] = "gpu_kind", [REJ_GPU_COUNT] = "gpu_count",
	[REJ_UNTRUSTED] = "untrusted",
};

const char *usdt_reject_name(unsigned int reason)
{
	return reason < REJ_N ? reject_names[reason] : "?";
}

/* A start/end pair: an open record (end 0, CUPTI's forced flush) has no
 * time; otherwise end >= start and the span is bounded, and so is the busy
 * time in it (kernels of several streams and devices overlap). */
static bool gpu_time_bad(const struct cs_event *e)
{
	uint64_t span = e->gpu.end - e->gpu.start;

	if (!e->gpu.end)
		return e->gpu.busy_ns != 0;
	return e->gpu.end < e->gpu.start || span > GPU_MAX_SPAN_NS ||
	       e->gpu.busy_ns / GPU_MAX_CONCURRENT > span;
}

/* An allocation or release record: count of size bytes, bytes in all. */
static bool gpu_sizes_bad(const struct cs_event *e)
{
	return e->gpu.size > GPU_MAX_BYTES || e->gpu.bytes > GPU_MAX_BYTES ||
	       e->gpu.bytes != e->gpu.size * e->gpu.count;
}

unsigned int usdt_check(const struct cs_event *e)
{
	if (e->type != CS_EV_KV && e->type != CS_EV_GPU)
		return REJ_NONE;
	if (e->flags & CS_F_RANGE)
		return REJ_RANGE;
	if (e->type == CS_EV_KV) {
		if (e->kv.op == CS_KV_POOL && (!e->kv.block || e->kv.block > KV_MAX_BLOCKS ||
					       e->kv.arg < 1 ||
					       (uint64_t)e->kv.arg > KV_MAX_BLOCK_BYTES))
			return REJ_KV_POOL;
		if ((e->kv.op == CS_KV_SWAP_IN || e->kv.op == CS_KV_SWAP_OUT) && e->kv.arg < 0)
			return REJ_KV_ARG;
		return REJ_NONE;
	}
	if (e->gpu.count > GPU_MAX_COUNT)
		return REJ_GPU_COUNT;
	switch (e->gpu.op) {
	case CS_GPU_MEMCPY:
		if (e->gpu.kind >= GPU_MEMCPY_KINDS)
			return REJ_GPU_KIND;
		/* fall through */
	case CS_GPU_KERNEL:
	case CS_GPU_KV_KERNEL:
		if (gpu_time_bad(e))
			return REJ_GPU_TIME;
		if (e->gpu.bytes > GPU_MAX_BYTES)
			return REJ_GPU_BYTES;
		return REJ_NONE;
	case CS_GPU_ALLOC:
	case CS_GPU_RELEASE:
		if (gpu_sizes_bad(e))
			return REJ_GPU_BYTES;
		/* a release may say how old its allocations were (not before
		 * the clock began); nothing else has a kind or a busy time */
		if (e->gpu.op == CS_GPU_RELEASE && e->gpu.kind == CS_GPU_AGE_KNOWN)
			return e->gpu.busy_ns > e->gpu.start ? REJ_GPU_TIME : REJ_NONE;
		if (e->gpu.kind)
			return REJ_GPU_KIND;
		return e->gpu.busy_ns ? REJ_GPU_TIME : REJ_NONE;
	case CS_GPU_SWAP_OUT:
	case CS_GPU_SWAP_IN:
		if (e->gpu.bytes > GPU_MAX_BYTES)
			return REJ_GPU_BYTES;
		if (e->gpu.kind > (e->gpu.op == CS_GPU_SWAP_IN ? CS_GPU_NEAR : 0))
			return REJ_GPU_KIND;
		return e->gpu.busy_ns || e->gpu.size ? REJ_GPU_TIME : REJ_NONE;
	case CS_GPU_DROPPED:
		if (e->gpu.bytes > GPU_MAX_DROPPED)
			return REJ_GPU_BYTES;
		return REJ_NONE;
	}
	return REJ_NONE;
}
