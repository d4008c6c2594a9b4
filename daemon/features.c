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
	/* a quiet key still makes a vector while its old objects pile up: a
	 * slow leak is a few objects per window */
	if (ops < FEAT_MIN_OPS && !s->refaults &&
	    !(r->old_rise > 0 && r->old_rise_s >= FEAT_MIN_RISE_S))
		return false;

	e.window_s = secs;
	e.family = tgid_is_family(r->acc->key.tgid);
	e.ops = ops;
	e.allocs = s->allocs;
	e.frees = s->frees;
	e.live_objs = r->live_objs;
	e.live_bytes = r->live_bytes;
	e.growth_per_s = r->growth_per_s;
	e.grew_windows = r->grew_windows;
	e.free_ratio = s->allocs ? (double)s->frees / s->allocs : 1.0;
	e.lifetime_p50_ns = r->lifetime_p50_ns;
	e.key_lifetime_p50_ns = r->key_lifetime_p50_ns;
	e.remote_frees = s->remote_frees;
	e.unseen_frees = s->unseen_frees;
	e.sample = r->acc->key.domain == DOM_SLAB ? 1u << s->max_shift : 1;
	e.same_size_share = r->same_size_share;
	e.top_site = r->top_site;
	e.age_ns = r->age_ns;
	e.old_objs = r->old_objs;
	e.old_rise = r->old_rise;
	e.old_rise_tracked = r->old_rise_tracked;
	e.old_rise_s = r->old_rise_s;
	e.old_steps = r->old_steps;
	e.old_max_step = r->old_max_step;
	e.old_quiet_s = r->old_quiet_s;
	e.old_warmup_s = r->old_warmup_s;
	e.recent_locality = r->recent_locality;
	e.recent_own_share = r->recent_own_share;
	e.recent_windows = r->recent_windows;
	e.old_rise_allocs = r->old_rise_allocs;
	e.old_rise_frees = r->old_rise_frees;
	e.old_rise_dropped = r->old_rise_dropped;
	e.repeat_pages = s->repeat_pages;
	e.recent_page_adds = r->recent_page_adds;
	e.recent_refault_pages = r->recent_refault_pages;
	e.recent_repeat_pages = r->recent_repeat_pages;
	e.refault_windows = r->refault_windows;
	e.refault_span_s = r->refault_span_s;
	e.refault_quiet_s = r->refault_quiet_s;
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
	/* no frees in the window: nothing was freed remotely; frees no
	 * tracepoint saw have no CPU and do not count */
	v.raw[FEAT_LOCALITY] = s->same_cpu_frees + s->remote_frees ?
		(double)s->same_cpu_frees / (s->same_cpu_frees + s->remote_frees) : 1.0;
	/* a window of no operation can still be a vector (old objects rising) */
	v.raw[FEAT_NUMA] = ops ? (double)s->cross_numa / ops : 0;

	v.v[FEAT_FREQ] = clamp01(log10(1 + v.raw[FEAT_FREQ]) / log10(1 + FEAT_FREQ_MAX_OPS_S));
	v.v[FEAT_HOT] = clamp01(v.raw[FEAT_HOT]);
	v.v[FEAT_ENTROPY] = clamp01(v.raw[FEAT_ENTROPY] / FEAT_ENTROPY_MAX_BITS);
	v.v[FEAT_LOCALITY] = clamp01(v.raw[FEAT_LOCALITY]);
	v.v[FEAT_NUMA] = clamp01(v.raw[FEAT_NUMA]);
	*f = v;
	*ev = e;
	return true;
}
