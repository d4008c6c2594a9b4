// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The kv domain's pools and the queue that orders their records: see kvpool.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kvpool.h"
#include "window.h"

void kvpool_release(struct kvpool *p, uint64_t *held)
{
	*held -= p->nblocks;
	p->nblocks = 0;
	free(p->use_ts);
	free(p->use_cpu);
	p->use_ts = NULL;
	p->use_cpu = NULL;
}

/* A new pool (bounds checked by usdt_check): the last one is gone with
 * it, whether or not this one can be tracked. */
static unsigned int pool_new(struct acc *a, const struct cs_event *e, uint64_t *held)
{
	kvpool_release(&a->pool, held);
	a->pool.block_bytes = (uint64_t)e->kv.arg;
	a->live_objs = 0;
	a->live_bytes = 0;
	history_cohorts_clear(&a->oh->age);
	if (*held + e->kv.block > KV_BLOCK_BUDGET)
		return REJ_KV_BUDGET;
	a->pool.use_ts = calloc(e->kv.block, sizeof(*a->pool.use_ts));
	a->pool.use_cpu = calloc(e->kv.block, sizeof(*a->pool.use_cpu));
	if (!a->pool.use_ts || !a->pool.use_cpu) {
		kvpool_release(&a->pool, held);
		return REJ_NONE;
	}
	a->pool.nblocks = e->kv.block;
	*held += a->pool.nblocks;
	return REJ_NONE;
}

unsigned int kvpool_add(struct acc *a, struct wslot *s, const struct cs_event *e, uint64_t *held)
{
	uint64_t pages = a->pool.block_bytes ? (a->pool.block_bytes + 4095) / 4096 : 1;
	uint32_t b = e->kv.block;

	switch (e->kv.op) {
	case CS_KV_POOL:
		/* hash: 1 when the pool is in GPU memory (kvref --backend cuda) */
		snprintf(a->name, sizeof(a->name), "%s", e->kv.hash == 1 ? "kv-pool-gpu" : "kv-pool");
		return pool_new(a, e, held);
	case CS_KV_USE:
		/* a swap-in fires block_alloc and then a prefix hit at
		 * refcount 1: one taking-up, counted once */
		if (a->pool.use_ts[b])
			break;
		s->allocs++;
		s->bytes_req += a->pool.block_bytes;
		s->bytes_alloc += a->pool.block_bytes;
		topk_add(&s->sizes, a->pool.block_bytes);
		topk_add(&s->sites, 0);
		a->live_objs++;
		a->live_bytes += a->pool.block_bytes;
		a->total_allocs++;
		history_cohort_add(&a->oh->age, e->ts_ns, 1, 1);
		a->pool.use_ts[b] = e->ts_ns;
		a->pool.use_cpu[b] = e->cpu;
		break;
	case CS_KV_RELEASE:
		/* only blocks seen taken up count, as for slab objects */
		if (!a->pool.use_ts[b])
			break;
		s->frees++;
		s->bytes_freed += a->pool.block_bytes;
		s->lifetime_hist[stats_log2_bucket(e->ts_ns > a->pool.use_ts[b] ?
					     e->ts_ns - a->pool.use_ts[b] : 0)]++;
		history_cohort_add(&a->oh->age, a->pool.use_ts[b], -1, 1);
		if (a->pool.use_cpu[b] == e->cpu) {
			s->same_cpu_frees++;
		} else {
			s->remote_frees++;
			s->own_remote_frees++;	/* the pool's own process */
		}
		a->pool.use_ts[b] = 0;
		a->live_objs--;
		a->live_bytes -= a->pool.block_bytes;
		a->total_frees++;
		break;
	case CS_KV_SWAP_OUT:
		s->kv_swap_outs++;
		s->page_dels += pages;
		a->total_page_dels += pages;
		break;
	case CS_KV_SWAP_IN:
		s->kv_swap_ins++;
		s->page_adds += pages;
		s->refaults++;
		s->refault_pages += pages;
		/* back within a pool's worth of evictions: a pool twice the
		 * size would have kept it (the kernel's workingset test) */
		if ((uint64_t)e->kv.arg <= a->pool.nblocks)
			s->repeat_pages += pages;
		s->refault_hist[stats_log2_bucket((uint64_t)e->kv.arg)]++;
		a->total_page_adds += pages;
		a->total_refaults++;
		break;
	}
	return REJ_NONE;
}

static int queue_cmp(const void *x, const void *y)
{
	const struct kvq_ent *a = x, *b = y;

	if (a->e.ts_ns != b->e.ts_ns)
		return a->e.ts_ns < b->e.ts_ns ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

void kvpool_queue_release(struct kvpool_queue *q)
{
	free(q->ent);
	memset(q, 0, sizeof(*q));
}

int kvpool_queue_push(struct kvpool_queue *q, const struct cs_event *e)
{
	struct kvq_ent *n;
	size_t cap;

	if (q->n == q->cap) {
		cap = q->cap ? 2 * q->cap : 256;
		n = realloc(q->ent, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		q->ent = n;
		q->cap = cap;
	}
	q->ent[q->n].e = *e;
	q->ent[q->n++].seq = q->seq++;
	return 0;
}

void kvpool_queue_sort(struct kvpool_queue *q)
{
	qsort(q->ent, q->n, sizeof(*q->ent), queue_cmp);
}

void kvpool_queue_drop(struct kvpool_queue *q, size_t n)
{
	memmove(q->ent, q->ent + n, (q->n - n) * sizeof(*q->ent));
	q->n -= n;
}
