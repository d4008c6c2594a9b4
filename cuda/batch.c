// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* One batch of the CUPTI library's bins: see batch.h. */
#include <string.h>
#include "batch.h"

void batch_clear(struct batch *b)
{
	memset(b->slot, 0, sizeof(b->slot));
	b->n = 0;
}

/* A new bin at the end; the caller made room. */
static struct cs_gpu_bin *bin_new(struct batch *b, uint8_t op, uint16_t kind,
				  uint64_t start, uint64_t end, uint64_t size)
{
	struct cs_gpu_bin *x = &b->bin[b->n++];

	memset(x, 0, sizeof(*x));
	x->start = start;
	x->end = end;
	x->size = size;
	x->kind = kind;
	x->op = op;
	return x;
}

/* A bin that takes busy and bytes more and one record more (count) without
 * passing what a bin may hold. */
static bool bin_takes(const struct cs_gpu_bin *x, uint64_t busy, uint64_t bytes,
		      uint32_t count)
{
	bool run = x->op == CS_GPU_KERNEL || x->op == CS_GPU_KV_KERNEL || x->op == CS_GPU_MEMCPY;

	return x->count + count <= CS_GPU_MAX_COUNT &&
	       x->bytes + bytes <= CS_GPU_MAX_BYTES &&
	       (!run || x->busy_ns + busy <= (x->end - x->start) * CS_GPU_MAX_CONCURRENT);
}

/*
 * The bin of class (op, kind, size) for the CS_GPU_BIN_NS slice k that
 * takes the values given: the one already there, or a new one (also where
 * the one there is full: the index then points at the new one).
 */
static struct cs_gpu_bin *bin_of_age(struct batch *b, uint8_t op, uint16_t kind,
				     uint64_t size, uint64_t k, uint64_t busy,
				     uint64_t bytes, uint32_t count, uint64_t age)
{
	uint64_t h = (k * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)op << 56) ^
		     ((uint64_t)kind << 40) ^ (size * 0xff51afd7ed558ccdull) ^
		     (age * 0xc4ceb9fe1a85ec53ull);
	unsigned int i = (unsigned int)(h >> 32) & (BATCH_SLOTS - 1);
	struct cs_gpu_bin *x;

	for (;; i = (i + 1) & (BATCH_SLOTS - 1)) {
		if (!b->slot[i])
			break;
		x = &b->bin[b->slot[i] - 1];
		if (x->op != op || x->kind != kind || x->size != size ||
		    x->start != k * CS_GPU_BIN_NS || (op == CS_GPU_RELEASE && x->busy_ns != age))
			continue;
		if (bin_takes(x, busy, bytes, count))
			return x;
		break;	/* full: a new bin takes its place in the index */
	}
	x = bin_new(b, op, kind, k * CS_GPU_BIN_NS, (k + 1) * CS_GPU_BIN_NS, size);
	if (op == CS_GPU_RELEASE)
		x->busy_ns = age;
	b->slot[i] = (uint16_t)b->n;
	return x;
}

static struct cs_gpu_bin *bin_of(struct batch *b, uint8_t op, uint16_t kind,
				 uint64_t size, uint64_t k, uint64_t busy,
				 uint64_t bytes, uint32_t count)
{
	return bin_of_age(b, op, kind, size, k, busy, bytes, count, 0);
}

/* A run with no time: counted, with its bytes, in the bin of start. */
static void run_untimed(struct batch *b, uint8_t op, uint16_t kind, uint64_t start,
			uint64_t bytes)
{
	struct cs_gpu_bin *x = bin_of(b, op, kind, 0, start / CS_GPU_BIN_NS, 0, bytes, 1);

	x->count++;
	x->bytes += bytes;
}

void batch_run(struct batch *b, uint8_t op, uint16_t kind, uint64_t start,
	       uint64_t end, uint64_t bytes)
{
	uint64_t first = start / CS_GPU_BIN_NS, k, last, span, at, cut, busy, part;
	struct cs_gpu_bin *x;
	uint64_t bytes_left = bytes;

	if (end <= start) {
		run_untimed(b, op, kind, start, bytes);
		return;
	}
	last = (end - 1) / CS_GPU_BIN_NS;
	span = end - start;
	if (last - first >= CS_GPU_SPLIT_BINS) {
		/* a long run: a bin of its own, split by the daemon */
		x = bin_new(b, op, kind, start, end, 0);
		x->count = 1;
		x->busy_ns = span;
		x->bytes = bytes;
		return;
	}
	for (k = first, at = start; k <= last; k++, at = cut) {
		cut = k == last ? end : (k + 1) * CS_GPU_BIN_NS;
		busy = cut - at;
		part = k == last ? bytes_left :
		       (uint64_t)((unsigned __int128)bytes * busy / span);
		bytes_left -= part;
		x = bin_of(b, op, kind, 0, k, busy, part, k == first);
		x->count += k == first;
		x->busy_ns += busy;
		x->bytes += part;
	}
}

/* A release's bin says how old the allocations it released were, to the
 * slice (kind CS_GPU_AGE_KNOWN, busy_ns the age): the daemon takes them
 * from the right age cohort.  An allocation made after ts (clocks of two
 * threads' buffers) is age 0. */
void batch_mem(struct batch *b, uint8_t op, uint64_t ts, uint64_t size, uint64_t alloc_ts)
{
	uint64_t k = ts / CS_GPU_BIN_NS, age = 0;
	uint16_t kind = 0;
	struct cs_gpu_bin *x;

	if (op == CS_GPU_RELEASE && alloc_ts != BATCH_AGE_UNKNOWN) {
		kind = CS_GPU_AGE_KNOWN;
		age = alloc_ts / CS_GPU_BIN_NS < k ? (k - alloc_ts / CS_GPU_BIN_NS) * CS_GPU_BIN_NS : 0;
	}
	x = bin_of_age(b, op, kind, size, k, 0, size, 1, age);

	x->count++;
	x->bytes += size;
}

void batch_swap(struct batch *b, uint8_t op, uint64_t ts, uint64_t bytes, bool near)
{
	struct cs_gpu_bin *x = bin_of(b, op, op == CS_GPU_SWAP_IN && near ? CS_GPU_NEAR : 0, 0,
				      ts / CS_GPU_BIN_NS, 0, bytes, 1);

	x->count++;
	x->bytes += bytes;
}

void batch_dropped(struct batch *b, uint64_t n)
{
	struct cs_gpu_bin *x = bin_new(b, CS_GPU_DROPPED, 0, 0, 0, 0);

	x->bytes = n < CS_GPU_MAX_DROPPED ? n : CS_GPU_MAX_DROPPED;	/* more: none is */
}
