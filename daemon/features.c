// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Feature vectors: turn one closed (window, key) row into five numbers in
 * [0, 1] by fixed, documented ranges, plus the evidence the rules read.
 */
#include <math.h>
#include "features.h"

static double clamp01(double x)
{
	return x < 0 ? 0 : x > 1 ? 1 : x;
}

bool features_from_row(const struct wrow *r, uint64_t window_ns,
		       struct fvec *f, struct evidence *ev)
{
	const struct wslot *s = r->s;
	bool page = r->acc->key.domain == DOM_PAGE;
	uint64_t ops = page ? s->page_adds + s->page_dels : s->allocs + s->frees;
	double secs = (double)window_ns / 1e9;
	struct evidence e = { 0 };
	struct fvec v;

	if (r->acc->key.domain == DOM_KV)	/* blocks taken, released, swapped */
		ops += s->kv_swap_outs + s->kv_swap_ins;
	if (r->acc->key.domain == DOM_GPU)	/* kernels, copies, (de)allocations */
		ops += s->gpu_kernels + s->gpu_copies;
	if (ops < FEAT_MIN_OPS && !s->refaults)
		return false;

	e.window_s = secs;
	e.ops = ops;
	e.allocs = s->allocs;
	e.frees = s->frees;
	e.live_objs = r->live_objs;
	e.live_bytes = r->live_bytes;
	e.growth_per_s = r->growth_per_s;
	e.grew_windows = r->grew_windows;
	e.free_ratio = s->allocs ? (double)s->frees / s->allocs : 1.0;
	e.lifetime_p50_ns = r->lifetime_p50_ns;
	e.remote_frees = s->remote_frees;
	e.same_size_share = r->same_size_share;
	e.page_adds = s->page_adds;
	e.page_dels = s->page_dels;
	e.refaults = s->refaults;
	e.refault_pages = s->refault_pages;
	e.refault_share = s->page_adds ? (double)s->refault_pages / s->page_adds : 0;
	e.refault_dist_p50 = r->refault_dist_p50;
	e.gpu_kernel_ns = r->tgid_gpu_kernel_ns;
	e.gpu_kv_kernel_ns = r->tgid_gpu_kv_kernel_ns;
	e.gpu_copy_bytes = r->tgid_gpu_copy_bytes;

	v.raw[FEAT_FREQ] = ops / secs;
	v.raw[FEAT_HOT] = r->top_site_share;
	v.raw[FEAT_ENTROPY] = r->size_entropy;
	/* no frees in the window: nothing was freed remotely */
	v.raw[FEAT_LOCALITY] = s->frees ? (double)s->same_cpu_frees / s->frees : 1.0;
	v.raw[FEAT_NUMA] = (double)s->cross_numa / ops;

	v.v[FEAT_FREQ] = clamp01(log10(1 + v.raw[FEAT_FREQ]) / log10(1 + FEAT_FREQ_MAX_OPS_S));
	v.v[FEAT_HOT] = clamp01(v.raw[FEAT_HOT]);
	v.v[FEAT_ENTROPY] = clamp01(v.raw[FEAT_ENTROPY] / FEAT_ENTROPY_MAX_BITS);
	v.v[FEAT_LOCALITY] = clamp01(v.raw[FEAT_LOCALITY]);
	v.v[FEAT_NUMA] = clamp01(v.raw[FEAT_NUMA]);
	*f = v;
	*ev = e;
	return true;
}
