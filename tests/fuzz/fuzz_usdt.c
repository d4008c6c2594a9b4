// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer harness of the daemon's ingest of user-space probe records
 * (daemon/window.c: wtable_reject and the kv queue; usdt.c, kvpool.c, gpu.c): the
 * records kvref's and the CUPTI library's probes produce, with any values
 * a process can pass, from a few processes on a few CPUs, drained out of
 * order as the rings are.
 *
 * Input: 24-byte steps.  Byte 0: bit 0 gpu or kv, bits 1-3 the op, bits
 * 4-5 the process, bit 6 CS_F_RANGE, bit 7 close windows now; byte 1: the
 * time step (ms, with bit 7: this record is 0..127 us older than the last,
 * as a record read late from another CPU's ring); byte 2: the CPU; then
 * block or kind (4), arg or bytes (8), start/end deltas (2 x 4).
 *
 * Invariants: pools of all processes hold at most KV_BLOCK_BUDGET blocks;
 * a kv key's live objects are exactly its blocks in use, never negative;
 * nothing leaks (ASan).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../../daemon/window.h"

#define MS 1000000ull
#define STEP 24

static void check(bool ok)
{
	if (!ok)
		abort();
}

static int key_check(struct acc *a, void *ctx)
{
	uint64_t in_use = 0;
	uint32_t b;

	(void)ctx;
	if (a->key.domain != DOM_KV || a->key.tgid == CS_TGID_OTHER)
		return 0;
	for (b = 0; b < a->pool.nblocks; b++)
		in_use += a->pool.use_ts[b] != 0;
	check(a->live_objs >= 0 && (uint64_t)a->live_objs == in_use);
	check(a->pool.nblocks <= KV_MAX_BLOCKS);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wtable *wt = wtable_new(1000 * MS, 100 * MS, NULL, NULL, NULL);
	uint64_t ts = 1000 * MS + 1;
	struct wtable_stats st;
	struct cs_event e;
	uint32_t u32, d0, d1;
	uint64_t u64;

	check(wt != NULL);
	for (; size >= STEP; data += STEP, size -= STEP) {
		memset(&e, 0, sizeof(e));
		ts += (uint64_t)(data[1] & 0x7f) * MS;
		e.ts_ns = data[1] & 0x80 ? ts - (uint64_t)data[2] * 1000 : ts;
		e.tgid = 100 + ((data[0] >> 4) & 3);
		e.cpu = data[2] & 3;
		e.flags = data[0] & 0x40 ? CS_F_RANGE : 0;
		memcpy(&u32, data + 4, 4);
		memcpy(&u64, data + 8, 8);
		memcpy(&d0, data + 16, 4);
		memcpy(&d1, data + 20, 4);
		if (data[0] & 1) {
			e.type = CS_EV_GPU;
			e.gpu.op = (uint8_t)(CS_GPU_KERNEL + ((data[0] >> 1) & 7) % CS_GPU_OP_LAST);
			e.gpu.kind = (uint16_t)u32;
			e.gpu.bytes = u64;
			e.gpu.start = d0;
			e.gpu.end = d0 + (int32_t)d1;	/* may go before the start */
			/* a record as the per-record probes make it, mostly;
			 * a bin of any count, time and size sometimes */
			e.gpu.count = data[3] & 0x20 ? d1 : 1;
			e.gpu.busy_ns = data[3] & 0x10 ? u64 >> (data[3] & 15) :
					e.gpu.end > e.gpu.start ? e.gpu.end - e.gpu.start : 0;
			e.gpu.size = data[3] & 0x08 ? u64 / (e.gpu.count ? e.gpu.count : 1) : u64;
		} else {
			e.type = CS_EV_KV;
			e.kv.op = CS_KV_USE + ((data[0] >> 1) & 7) % 5;
			/* small pools and indices mostly, any value sometimes */
			e.kv.block = data[3] & 0x80 ? u32 : u32 % 64;
			e.kv.arg = (int64_t)u64;
			if (e.kv.op == CS_KV_POOL && !(data[3] & 0x40))
				e.kv.arg = (int64_t)(u64 % 100000);
			e.kv.hash = data[3] & 1;
		}
		wtable_add(wt, &e);	/* -ENOMEM only: the event is lost */
		if (data[0] & 0x80)
			wtable_close_until(wt, ts - 2 * MS);
		wtable_get_stats(wt, &st);
		check(st.kv_blocks <= KV_BLOCK_BUDGET);
	}
	wtable_close_all(wt);
	wtable_foreach(wt, key_check, NULL);
	wtable_get_stats(wt, &st);
	check(st.kv_blocks <= KV_BLOCK_BUDGET);
	wtable_free(wt);
	return 0;
}
