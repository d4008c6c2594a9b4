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
	bool page = r->key->domain == DOM_PAGE;
	uint64_t ops = page ? s->page_adds + s->page_dels : s->allocs + s->frees;
	double secs = (double)window_ns / 1e9;
	struct evidence e = { 0 };
	struct fvec v;

	if (r->key->domain == DOM_KV)	/* blocks taken, released, swapped */
		ops += s->kv_swap_outs + s->kv_swap_ins;
	if (r->key->domain == DOM_GPU)	/* kernels, copies, (de)allocations */
		ops += s->gpu_kernels + s->gpu_copies;
	/* a quiet key still makes a vector while its old objects pile up: a
	 * slow leak is a few objects per window */
	if (ops < FEAT_MIN_OPS && !s->refaults &&
	    !(r->old_rise > 0 && r->old_rise_s >= FEAT_MIN_RISE_S))
		return false;

	e.r = r;
	e.window_s = secs;
	e.family = tgid_is_family(r->key->tgid);
	e.ops = ops;
	e.free_ratio = s->allocs ? (double)s->frees / s->allocs : 1.0;
	e.sample = r->key->domain == DOM_SLAB ? 1u << s->max_shift : 1;
	e.refault_share = s->page_adds ? (double)s->refault_pages / s->page_adds : 0;

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
