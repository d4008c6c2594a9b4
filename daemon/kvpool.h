/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kv domain: a process's KV-cache pool as kvref's USDT probes report
 * it, one key per process.  Its blocks are counted like slab objects, in
 * use from CS_KV_USE to CS_KV_RELEASE, with lifetime and CPU locality from
 * per-block state (when and on which CPU each block was taken up); swap-ins
 * are refaults of the block's pages.  The per-block state is bounded per
 * pool (KV_MAX_BLOCKS, usdt_check) and over all pools together
 * (KV_BLOCK_BUDGET: held, the caller's count of blocks of all pools).
 *
 * The records must be applied in timestamp order: the rings are drained
 * one CPU after another, so a block's release on one CPU may be read
 * before its use on another.  They wait in a queue (at most KV_QUEUE_MAX)
 * until their window closes, when every ring was drained past its end.
 */
#ifndef CS_KVPOOL_H
#define CS_KVPOOL_H

#include <stddef.h>
#include <stdint.h>
#include "../bpf/cachescope.h"
#include "usdt.h"

struct acc;
struct wslot;

struct kvpool {
	uint64_t block_bytes;
	uint32_t nblocks;	/* tracked (0: none, or over the budget) */
	uint64_t *use_ts;	/* [nblocks], 0 while free */
	uint16_t *use_cpu;
};

/* The pool's blocks go (held less them). */
void kvpool_release(struct kvpool *p, uint64_t *held);
/* Account the kv record e (block inside the pool, usdt_check passed) on
 * key a's window slot s.  Returns REJ_NONE, or REJ_KV_BUDGET: a new pool
 * past the budget, kept without per-block state (its records then fall
 * outside it). */
unsigned int kvpool_add(struct acc *a, struct wslot *s, const struct cs_event *e, uint64_t *held);

/* kv records wait (at most this many) until their window closes */
#define KV_QUEUE_MAX		65536

struct kvq_ent {
	struct cs_event e;
	uint64_t seq;		/* arrival order, for equal timestamps */
};

struct kvpool_queue {
	struct kvq_ent *ent;
	size_t n, cap;
	uint64_t seq;
};

void kvpool_queue_release(struct kvpool_queue *q);
/* Queue e: 0, or -ENOMEM.  The caller keeps it under KV_QUEUE_MAX. */
int kvpool_queue_push(struct kvpool_queue *q, const struct cs_event *e);
/* In timestamp order, arrival order among equal timestamps. */
void kvpool_queue_sort(struct kvpool_queue *q);
/* The first n records go. */
void kvpool_queue_drop(struct kvpool_queue *q, size_t n);

#endif
