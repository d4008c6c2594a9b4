// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer harness of the CUPTI library's batches (cuda/batch.c): runs,
 * allocations and drops of any timing go into batches, handed over when
 * batch_room says so, as the record handler does.
 *
 * Input: records of 16 bytes: a selector byte (op and copy kind), then
 * start, length and bytes, within what the record handler lets through
 * (a start below 2^63, a run of at most an hour, at most
 * CS_GPU_MAX_BYTES).
 *
 * Invariants checked: every bin is one the daemon takes (usdt_check finds
 * nothing to reject); no batch passes CS_GPU_BATCH_MAX bins; over all
 * batches, the counts, the run time and the bytes of each op are exactly
 * those of the records, and the releases' ages those of their allocations
 * to the slice.
 */
#include <stdlib.h>
#include <string.h>
#include "../../cuda/batch.h"
#include "../../daemon/usdt.h"

#define STEP 16

static void check(bool ok)
{
	if (!ok)
		abort();
}

struct sums {
	uint64_t count[CS_GPU_OP_LAST + 1], busy[CS_GPU_OP_LAST + 1], bytes[CS_GPU_OP_LAST + 1];
	uint64_t ages;		/* releases: the allocations' ages, to the slice */
};

static void take(const struct batch *b, struct sums *got)
{
	struct cs_event e;
	unsigned int i;

	check(b->n <= CS_GPU_BATCH_MAX);
	for (i = 0; i < b->n; i++) {
		const struct cs_gpu_bin *x = &b->bin[i];

		memset(&e, 0, sizeof(e));
		e.type = CS_EV_GPU;
		e.gpu.start = x->start;
		e.gpu.end = x->end;
		e.gpu.bytes = x->bytes;
		e.gpu.busy_ns = x->busy_ns;
		e.gpu.size = x->size;
		e.gpu.count = x->count;
		e.gpu.kind = x->kind;
		e.gpu.op = x->op;
		check(usdt_check(&e) == REJ_NONE);
		check(x->op == CS_GPU_DROPPED || x->end > x->start);
		check(x->op >= CS_GPU_KERNEL && x->op <= CS_GPU_OP_LAST);
		got->count[x->op] += x->count;
		/* a release's busy_ns is its allocations' age: summed by age */
		if (x->op == CS_GPU_RELEASE && x->kind == CS_GPU_AGE_KNOWN)
			got->ages += (uint64_t)x->count * x->busy_ns;
		else
			got->busy[x->op] += x->busy_ns;
		got->bytes[x->op] += x->bytes;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct batch b;
	struct sums want, got;
	uint64_t start, len, bytes;
	uint8_t sel, op;
	int i;

	memset(&want, 0, sizeof(want));
	memset(&got, 0, sizeof(got));
	batch_clear(&b);
	for (; size >= STEP; data += STEP, size -= STEP) {
		sel = data[0];
		memcpy(&start, data + 1, 8);
		memcpy(&len, data + 9, 4);
		memcpy(&bytes, data + 12, 4);
		len &= 0xffffffffull;
		bytes &= 0xffffffffull;
		/* small numbers mostly, any allowed value sometimes */
		start = sel & 0x80 ? start % (1ull << 63) : start % (1ull << 32);
		if (sel & 0x40)
			len *= 1000;		/* up to 71 minutes */
		if (len > CS_GPU_MAX_SPAN_NS)
			len = CS_GPU_MAX_SPAN_NS;
		if (start + len >= 1ull << 63)
			len = 0;
		if (sel & 0x20)
			bytes <<= 10;		/* up to 4 TiB */
		if (bytes > CS_GPU_MAX_BYTES)
			bytes = CS_GPU_MAX_BYTES;
		if (!batch_room(&b)) {
			take(&b, &got);
			batch_clear(&b);
		}
		op = (uint8_t)(CS_GPU_KERNEL + (sel & 7));	/* all CS_GPU_OP_LAST */
		switch (op) {
		case CS_GPU_KERNEL:
		case CS_GPU_KV_KERNEL:
		case CS_GPU_MEMCPY:
			batch_run(&b, op, op == CS_GPU_MEMCPY ? (sel >> 3) & 3 : 0, start,
				  sel & 0x10 ? 0 : start + len, op == CS_GPU_MEMCPY ? bytes : 0);
			want.count[op]++;
			want.busy[op] += sel & 0x10 ? 0 : len;
			want.bytes[op] += op == CS_GPU_MEMCPY ? bytes : 0;
			break;
		case CS_GPU_ALLOC:
		case CS_GPU_RELEASE:
			/* a release of an allocation len ns before, or of one
			 * not seen (0x10) */
			batch_mem(&b, op, start, bytes,
				  op == CS_GPU_RELEASE && !(sel & 0x10) ? start - (len < start ? len : start) :
									 BATCH_AGE_UNKNOWN);
			want.count[op]++;
			want.bytes[op] += bytes;
			if (op == CS_GPU_RELEASE && !(sel & 0x10))
				want.ages += start / CS_GPU_BIN_NS * CS_GPU_BIN_NS -
					     (start - (len < start ? len : start)) / CS_GPU_BIN_NS * CS_GPU_BIN_NS;
			break;
		case CS_GPU_SWAP_OUT:
		case CS_GPU_SWAP_IN:
			batch_swap(&b, op, start, bytes, sel & 0x10);
			want.count[op]++;
			want.bytes[op] += bytes;
			break;
		default:
			batch_dropped(&b, bytes);
			want.bytes[op] += bytes < CS_GPU_MAX_DROPPED ? bytes : CS_GPU_MAX_DROPPED;
			break;
		}
	}
	take(&b, &got);
	for (i = 0; i <= CS_GPU_OP_LAST; i++) {
		check(got.count[i] == want.count[i]);
		check(got.busy[i] == want.busy[i]);
		check(got.bytes[i] == want.bytes[i]);
	}
	check(got.ages == want.ages);
	return 0;
}
