// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The gpu domain's records and the host-GPU join: see gpu.h. */
#include <stdlib.h>
#include <string.h>
#include "gpu.h"
#include "history.h"
#include "stats.h"
#include "window.h"

/* A release of more than the key holds live: what it had from before the
 * daemon started, or a record no allocation matches.  The live count
 * stops at zero and the excess is the caller's to count. */
static bool release_live(struct acc *a, uint32_t n, uint64_t bytes)
{
	bool over = a->live_objs < (int64_t)n || a->live_bytes < 0 ||
		    (uint64_t)a->live_bytes < bytes;

	a->live_objs = a->live_objs < (int64_t)n ? 0 : a->live_objs - n;
	a->live_bytes = a->live_bytes < 0 || (uint64_t)a->live_bytes < bytes ?
			0 : a->live_bytes - (int64_t)bytes;
	return over;
}

bool gpu_add(struct acc *a, struct wslot *s, const struct cs_event *e)
{
	uint32_t n = e->gpu.count;
	uint64_t bytes = e->gpu.bytes;
	bool over = false;

	/* every sum saturates: usdt_check bounds one record, not how many */
	switch (e->gpu.op) {
	case CS_GPU_KERNEL:
	case CS_GPU_KV_KERNEL:
		s->gpu_kernels = sat_add_u64(s->gpu_kernels, n);
		s->gpu_kernel_ns = sat_add_u64(s->gpu_kernel_ns, e->gpu.busy_ns);
		break;
	case CS_GPU_MEMCPY:
		s->gpu_copies = sat_add_u64(s->gpu_copies, n);
		if (e->gpu.kind == 1)		/* CUPTI_ACTIVITY_MEMCPY_KIND_HTOD */
			s->gpu_copy_in_bytes = sat_add_u64(s->gpu_copy_in_bytes, bytes);
		else if (e->gpu.kind == 2)	/* CUPTI_ACTIVITY_MEMCPY_KIND_DTOH */
			s->gpu_copy_out_bytes = sat_add_u64(s->gpu_copy_out_bytes, bytes);
		break;
	case CS_GPU_ALLOC:
		s->allocs = sat_add_u64(s->allocs, n);
		s->bytes_req = sat_add_u64(s->bytes_req, bytes);
		s->bytes_alloc = sat_add_u64(s->bytes_alloc, bytes);
		topk_add_n(&s->sizes, e->gpu.size, n);
		topk_add_n(&s->sites, 0, n);
		a->live_objs = sat_add_i64(a->live_objs, n);
		a->live_bytes = sat_add_i64(a->live_bytes, (int64_t)bytes);
		a->total_allocs = sat_add_u64(a->total_allocs, n);
		/* its age cohort: the leak test's old population */
		history_cohort_add_n(&a->oh->age, e->ts_ns, 1, n);
		break;
	case CS_GPU_SWAP_OUT:
		/* blocks out of device memory: its evictions */
		s->page_dels = sat_add_u64(s->page_dels, n);
		a->total_page_dels = sat_add_u64(a->total_page_dels, n);
		break;
	case CS_GPU_SWAP_IN:
		/* and back: each a refault, near ones within a pool's worth */
		s->page_adds = sat_add_u64(s->page_adds, n);
		s->refaults = sat_add_u64(s->refaults, n);
		s->refault_pages = sat_add_u64(s->refault_pages, n);
		if (e->gpu.kind == CS_GPU_NEAR)
			s->repeat_pages = sat_add_u64(s->repeat_pages, n);
		a->total_page_adds = sat_add_u64(a->total_page_adds, n);
		a->total_refaults = sat_add_u64(a->total_refaults, n);
		break;
	case CS_GPU_RELEASE:
		s->frees = sat_add_u64(s->frees, n);
		s->same_cpu_frees = sat_add_u64(s->same_cpu_frees, n);	/* device memory: no
									 * CPU to be remote from */
		s->bytes_freed = sat_add_u64(s->bytes_freed, bytes);
		over = release_live(a, n, bytes);
		a->total_frees = sat_add_u64(a->total_frees, n);
		/* out of the cohort of its allocation, where the library knew
		 * it (an allocation it did not see was never in one) */
		if (e->gpu.kind == CS_GPU_AGE_KNOWN && e->gpu.busy_ns <= e->ts_ns) {
			history_cohort_add_n(&a->oh->age, e->ts_ns - e->gpu.busy_ns, -1, n);
			s->lifetime_hist[stats_log2_bucket(e->gpu.busy_ns)] += n;
		} else {
			s->unseen_frees = sat_add_u64(s->unseen_frees, n);
			a->total_unseen_frees = sat_add_u64(a->total_unseen_frees, n);
		}
		break;
	}
	return over;
}

void gpu_join_reset(struct gpu_join *j)
{
	j->n = 0;
}

/* One entry a gpu key; gpu_join_done sums a process's entries. */
void gpu_join_key(struct gpu_join *j, const struct acc *a, uint64_t w)
{
	const struct wslot *s;
	struct gpu_sum *e;

	s = a->slot[w & 1];
	if (a->key.domain != DOM_GPU || !s)
		return;
	if (j->n == j->cap) {
		size_t cap = j->cap ? 2 * j->cap : 64;
		struct gpu_sum *grown = realloc(j->sum, cap * sizeof(*grown));

		if (!grown) {
			j->unjoined++;
			return;
		}
		j->sum = grown;
		j->cap = cap;
	}
	e = &j->sum[j->n++];
	memset(e, 0, sizeof(*e));
	e->tgid = a->key.tgid;
	if (a->key.id == GPU_KEY_KV_KERNELS)
		e->kv_kernel_ns = s->gpu_kernel_ns;
	else
		e->kernel_ns = s->gpu_kernel_ns;
	e->copy_bytes = sat_add_u64(s->gpu_copy_in_bytes, s->gpu_copy_out_bytes);
}

static int by_tgid(const void *a, const void *b)
{
	uint32_t x = ((const struct gpu_sum *)a)->tgid, y = ((const struct gpu_sum *)b)->tgid;

	return (x > y) - (x < y);
}

void gpu_join_done(struct gpu_join *j)
{
	size_t i, k = 0;

	if (!j->n)
		return;
	qsort(j->sum, j->n, sizeof(*j->sum), by_tgid);
	for (i = 1; i < j->n; i++) {
		struct gpu_sum *t = &j->sum[k], *e = &j->sum[i];

		if (e->tgid != t->tgid) {
			j->sum[++k] = *e;
			continue;
		}
		t->kernel_ns = sat_add_u64(t->kernel_ns, e->kernel_ns);
		t->kv_kernel_ns = sat_add_u64(t->kv_kernel_ns, e->kv_kernel_ns);
		t->copy_bytes = sat_add_u64(t->copy_bytes, e->copy_bytes);
	}
	j->n = k + 1;
}

void gpu_join_row(const struct gpu_join *j, struct wrow *r)
{
	struct gpu_sum key = { .tgid = r->key->tgid };
	const struct gpu_sum *e;

	if (!j->n)
		return;
	e = bsearch(&key, j->sum, j->n, sizeof(*j->sum), by_tgid);
	if (!e)
		return;
	r->tgid_gpu_kernel_ns = e->kernel_ns;
	r->tgid_gpu_kv_kernel_ns = e->kv_kernel_ns;
	r->tgid_gpu_copy_bytes = e->copy_bytes;
}

void gpu_join_release(struct gpu_join *j)
{
	free(j->sum);
	memset(j, 0, sizeof(*j));
}
