// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Per-window, per-key accumulators: an open-addressing table of keys, each
 * with two window slots (see window.h for why two).  Closing a window walks
 * the keys once, derives the row of every key that saw traffic in it, hands
 * the row to the caller and clears the slot.  Keys idle for a minute with no
 * live objects are forgotten, so the table follows the working set.  Keys
 * that still count live objects are merged into their cache's others key
 * (CS_TGID_OTHER) when their process has exited, when a family has been
 * idle for a minute, or, longest idle first, when the table reaches its
 * budget.  A later free of one of their objects makes the key again, one
 * object short, and the next merge evens it out: the sum over keys never
 * loses an object.  (The free cannot go to the others key at once: the
 * rings are drained one CPU after another, so a new key's first free may
 * come before its first alloc.)  So the table stays within its budget
 * whatever the load, and no count is lost.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "htab.h"
#include "window.h"

#define GC_EVERY_WINDOWS 64
#define GC_IDLE_NS (60ull * 1000000000ull)
/* a process's key idle this long is checked for the process's exit */
#define GC_EXIT_CHECK_NS (5ull * 1000000000ull)

struct kvq_ent {
	struct cs_event e;
	uint64_t seq;		/* arrival order, for equal timestamps */
};

struct wtable {
	struct htab keys;	/* of struct acc */
	uint64_t t0_ns, window_ns;
	uint64_t cur;		/* oldest open window */
	wtable_row_fn row_fn;
	wtable_resolve_fn resolve;
	void *ctx;
	struct wtable_stats st;
	struct wtable_rules rules;
	struct history_files files;	/* refault history per file */
	struct wtable_limits lim;
	uint64_t room_window;	/* the last window make_room found none */
	uint64_t drops, last_drop_ns;	/* records dropped so far, and when last */
	/* kv records waiting for their window to close (kvq_apply) */
	struct kvq_ent *kvq;
	size_t kvq_n, kvq_cap;
	uint64_t kvq_seq;
};

const char *domain_name(int domain)
{
	switch (domain) {
	case DOM_SLAB: return "slab";
	case DOM_PAGE: return "page";
	case DOM_KV: return "kv";
	case DOM_GPU: return "gpu";
	default: return "?";
	}
}

void wtable_note_drops(struct wtable *wt, uint64_t dropped, uint64_t now_ns)
{
	if (dropped > wt->drops) {
		wt->drops = dropped;
		wt->last_drop_ns = now_ns;
	}
}

void wtable_set_rules(struct wtable *wt, const struct wtable_rules *r)
{
	wt->rules = *r;
}

/* The age test's evidence at the end of the row's window. */
static void age_update(struct wtable *wt, struct acc *a, struct wrow *r)
{
	const struct wtable_rules *ru = &wt->rules;
	uint64_t end = r->start_ns + wt->window_ns, p50, age;
	int64_t tracked;
	uint32_t b;

	for (b = 0; b < HIST_BUCKETS; b++)
		a->life_hist[b] += r->s->lifetime_hist[b];
	if (++a->life_windows % 100 == 0)
		for (b = 0; b < HIST_BUCKETS; b++)
			a->life_hist[b] /= 2;
	if (!a->expiry_known) {
		a->expiry_ns = a->key.domain == DOM_SLAB && ru->expiry_ns ?
			       ru->expiry_ns(a->name) : 0;
		a->expiry_known = true;
	}
	p50 = stats_log2_percentile(a->life_hist, 0.5);
	r->key_lifetime_p50_ns = p50;
	age = ru->age_min_ns > a->expiry_ns ? ru->age_min_ns : a->expiry_ns;
	if (ru->age_lifetimes * (double)p50 > (double)age)
		age = (uint64_t)(ru->age_lifetimes * (double)p50);
	r->age_ns = age;
	r->old_objs = end > age ? history_old_objs(&a->age, end - age) : 0;
	tracked = end > age ? history_old_tracked(&a->age, end - age) : 0;
	history_rise(&a->rise, r, end, tracked, a->total_allocs,
		  a->total_frees - a->total_unseen_frees, a->first_ns);
	/* a free lost to a full ring leaves its object live for good: any
	 * drop since the rise's objects were allocated may have made it */
	r->old_rise_dropped = wt->drops && wt->last_drop_ns + age >= a->rise.start_ns;
}

static void thrash_update(struct wtable *wt, struct acc *a, struct wrow *r)
{
	bool refaulted = r->s->refault_pages > 0;
	struct thist *th;

	if (a->key.domain == DOM_PAGE) {
		th = history_file(&wt->files, a->key.id, a->key.dev, a->key.gen, refaulted);
	} else {
		if (!a->th && refaulted)
			a->th = calloc(1, sizeof(*a->th));
		th = a->th;
	}
	history_refaults(th, wt->window_ns, r);
}

/* ---- the key table ---- */

static void acc_free(struct acc *a)
{
	if (!a)
		return;
	free(a->slot);
	free(a->th);
	free(a->kv_use_ts);
	free(a->kv_use_cpu);
	free(a);
}

static uint64_t acc_hash(const void *entry, void *ctx)
{
	(void)ctx;
	return wkey_hash(&((const struct acc *)entry)->key);
}

static bool acc_has_key(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return wkey_eq(&((const struct acc *)entry)->key, key);
}

static struct acc *acc_find(const struct wtable *wt, const struct wkey *k)
{
	return htab_find(&wt->keys, wkey_hash(k), k);
}

static void acc_name(struct acc *a)
{
	const struct wkey *k = &a->key;

	if (k->domain == DOM_PAGE && !k->id)
		snprintf(a->name, sizeof(a->name), "%s",
			 k->tgid == CS_TGID_OTHER ? "other-files" : "evicted-files");
	else if (k->domain == DOM_PAGE)
		snprintf(a->name, sizeof(a->name), "%u:%u:%llu", k->dev >> 20,
			 k->dev & 0xfffff, (unsigned long long)k->id);
	else if (k->domain == DOM_KV)
		snprintf(a->name, sizeof(a->name), "kv-pool");
	else if (k->domain == DOM_GPU)
		snprintf(a->name, sizeof(a->name), "%s",
			 k->id == GPU_KEY_KV_KERNELS ? "gpu-kv-kernels" :
			 k->id == GPU_KEY_KERNELS ? "gpu-kernels" : "gpu-memory");
	else if (k->id < CS_KMALLOC_ID_MAX)
		snprintf(a->name, sizeof(a->name), "kmalloc-%llu",
			 (unsigned long long)k->id);
	else
		snprintf(a->name, sizeof(a->name), "cache-%llx",
			 (unsigned long long)k->id);
}

static struct acc *acc_create(struct wtable *wt, const struct wkey *k)
{
	struct acc *a;

	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->key = *k;
	acc_name(a);
	if (wt->resolve)
		wt->resolve(a, wt->ctx);
	if (k->tgid == CS_TGID_OTHER)
		snprintf(a->comm, sizeof(a->comm), "(others)");
	if (htab_insert(&wt->keys, a)) {
		free(a);
		return NULL;
	}
	return a;
}

/* The others key of k's cache (slab, kv, gpu) or of all files (page). */
static struct wkey others_key(const struct wkey *k)
{
	struct wkey o = *k;

	o.tgid = CS_TGID_OTHER;
	if (k->domain == DOM_PAGE)
		o.id = o.dev = o.gen = 0;
	return o;
}

static bool acc_open(const struct acc *a)
{
	return a->slot && (a->slot[0].window != WINDOW_NONE ||
			   a->slot[1].window != WINDOW_NONE);
}

/* Add src's live objects, totals and history into dst (its others key). */
static void acc_merge(struct acc *dst, const struct acc *src)
{
	uint32_t i;

	dst->live_objs += src->live_objs;
	dst->live_bytes += src->live_bytes;
	dst->total_allocs += src->total_allocs;
	dst->total_frees += src->total_frees;
	dst->total_unseen_frees += src->total_unseen_frees;
	dst->total_page_adds += src->total_page_adds;
	dst->total_page_dels += src->total_page_dels;
	dst->total_refaults += src->total_refaults;
	for (i = 0; i < HIST_BUCKETS; i++)
		dst->life_hist[i] += src->life_hist[i];
	history_cohorts_merge(&dst->age, &src->age);
	if (!dst->first_ns || (src->first_ns && src->first_ns < dst->first_ns))
		dst->first_ns = src->first_ns;
}

/* Forget a key with nothing live (drop) or merge it into its others key
 * (retire: live objects, totals and history go there, and so will the
 * frees of its objects).  Returns 0, or -ENOMEM (the key stays). */
static void kv_pool_release(struct wtable *wt, struct acc *a);

static void acc_drop(struct wtable *wt, struct acc *a)
{
	if (wt->lim.key_gone)
		wt->lim.key_gone(&a->key, NULL, wt->ctx);
	kv_pool_release(wt, a);
	htab_remove(&wt->keys, a);
	acc_free(a);
	wt->st.keys_dropped++;
}

static int acc_retire(struct wtable *wt, struct acc *a)
{
	struct wkey ok = others_key(&a->key);
	struct acc *o = acc_find(wt, &ok);

	if (!o && !(o = acc_create(wt, &ok)))
		return -ENOMEM;
	acc_merge(o, a);
	if (wt->lim.key_gone)
		wt->lim.key_gone(&a->key, &o->key, wt->ctx);
	kv_pool_release(wt, a);
	htab_remove(&wt->keys, a);
	acc_free(a);
	return 0;
}

static int idle_cmp(const void *x, const void *y)
{
	const struct acc *a = *(struct acc *const *)x, *b = *(struct acc *const *)y;

	/* keys without live objects first (nothing to carry), then the
	 * longest idle */
	if (!a->live_objs != !b->live_objs)
		return !a->live_objs ? -1 : 1;
	return a->last_window < b->last_window ? -1 : a->last_window > b->last_window;
}

/* The table is at its budget: merge the longest idle keys (none with an
 * open window) until it is at 7/8 of it.  At most one try a window. */
static void make_room(struct wtable *wt)
{
	size_t i, n = 0, target = wt->lim.max_keys - wt->lim.max_keys / 8;
	struct acc **cand;

	if (wt->room_window == wt->cur + 1)
		return;
	wt->room_window = wt->cur + 1;
	cand = malloc(wt->keys.n * sizeof(*cand));
	if (!cand)
		return;
	for (i = htab_next(&wt->keys, 0); i < wt->keys.cap; i = htab_next(&wt->keys, i + 1)) {
		struct acc *a = wt->keys.slot[i];

		if (a && a->key.tgid != CS_TGID_OTHER && !acc_open(a))
			cand[n++] = a;
	}
	qsort(cand, n, sizeof(*cand), idle_cmp);
	for (i = 0; i < n && wt->keys.n > target; i++) {
		if (!cand[i]->live_objs)
			acc_drop(wt, cand[i]);
		else if (!acc_retire(wt, cand[i]))
			wt->st.keys_evicted++;
		else
			break;
	}
	free(cand);
	if (wt->keys.n <= target)
		wt->room_window = 0;
}

/* The key's accumulator, made if new.  Past the budget, the longest idle
 * keys make room; when none can, the event counts on its others key. */
static struct acc *acc_get(struct wtable *wt, const struct wkey *k, bool *others)
{
	struct acc *a = acc_find(wt, k);
	struct wkey ok;

	*others = false;
	if (a)
		return a;
	if (wt->lim.max_keys && k->tgid != CS_TGID_OTHER && wt->keys.n >= wt->lim.max_keys) {
		make_room(wt);
		if (wt->keys.n >= wt->lim.max_keys) {
			ok = others_key(k);
			*others = true;
			a = acc_find(wt, &ok);
			return a ? a : acc_create(wt, &ok);
		}
	}
	return acc_create(wt, k);
}

struct wtable *wtable_new(uint64_t t0_ns, uint64_t window_ns,
			  wtable_row_fn row_fn, wtable_resolve_fn resolve,
			  void *ctx)
{
	struct wtable *wt;

	if (!window_ns)
		return NULL;
	wt = calloc(1, sizeof(*wt));
	if (!wt)
		return NULL;
	htab_init(&wt->keys, 256, 7, 10, acc_hash, acc_has_key, NULL);
	history_files_init(&wt->files);
	if (htab_reserve(&wt->keys)) {
		free(wt);
		return NULL;
	}
	wt->t0_ns = t0_ns;
	wt->window_ns = window_ns;
	wt->row_fn = row_fn;
	wt->resolve = resolve;
	wt->ctx = ctx;
	return wt;
}

void wtable_free(struct wtable *wt)
{
	size_t i;

	if (!wt)
		return;
	for (i = htab_next(&wt->keys, 0); i < wt->keys.cap; i = htab_next(&wt->keys, i + 1))
		acc_free(wt->keys.slot[i]);
	htab_release(&wt->keys);
	history_files_release(&wt->files);
	free(wt->kvq);
	free(wt);
}

void wtable_set_limits(struct wtable *wt, const struct wtable_limits *l)
{
	wt->lim = *l;
}

uint64_t wtable_window_of(const struct wtable *wt, uint64_t ts_ns)
{
	return ts_ns <= wt->t0_ns ? 0 : (ts_ns - wt->t0_ns) / wt->window_ns;
}

/* ---- closing windows ---- */

static void row_derive(struct wrow *r, const struct acc *a,
		       const struct wslot *s, const struct wslot *next)
{
	uint64_t sizes = topk_total(&s->sizes), sites = topk_total(&s->sites);

	r->acc = a;
	r->s = s;
	r->live_objs = a->live_objs;
	r->live_bytes = a->live_bytes;
	if (next->window == s->window + 1) {
		r->live_objs -= (int64_t)next->allocs - (int64_t)next->frees;
		r->live_bytes -= (int64_t)next->bytes_alloc -
				 (int64_t)next->bytes_freed;
	}
	r->lifetime_p50_ns = stats_log2_percentile(s->lifetime_hist, 0.5);
	r->refault_dist_p50 = stats_log2_percentile(s->refault_hist, 0.5);
	r->top_site_share = sites ? (double)topk_max(&s->sites) / sites : 0;
	r->top_site = topk_argmax(&s->sites);
	r->same_size_share = sizes ? (double)topk_max(&s->sizes) / sizes : 0;
	r->size_entropy = topk_entropy(&s->sizes);
}

static bool process_gone(struct wtable *wt, const struct acc *a)
{
	uint32_t t = a->key.tgid;

	if (!wt->lim.alive || !t || t == CS_TGID_OTHER || tgid_is_family(t) ||
	    a->key.domain == DOM_KV || a->key.domain == DOM_GPU)
		return false;
	return !wt->lim.alive(t, wt->ctx);
}

/* Forget idle keys with nothing live; merge into others the keys of
 * exited processes and of families idle for a minute; hand back the
 * window slots of keys with no open window. */
static void table_gc(struct wtable *wt)
{
	uint64_t idle = GC_IDLE_NS / wt->window_ns;
	uint64_t exit_idle = GC_EXIT_CHECK_NS / wt->window_ns;
	struct acc **gone, **old, *a;
	size_t i, ngone = 0, nold = 0;

	gone = malloc(wt->keys.n * sizeof(*gone));
	old = malloc(wt->keys.n * sizeof(*old));
	for (i = htab_next(&wt->keys, 0); i < wt->keys.cap; i = htab_next(&wt->keys, i + 1)) {
		a = wt->keys.slot[i];
		if (acc_open(a))
			continue;
		free(a->slot);
		a->slot = NULL;
		if (a->key.tgid == CS_TGID_OTHER)
			continue;
		if (a->last_window + idle < wt->cur && (!a->live_objs || tgid_is_family(a->key.tgid))) {
			if (old)
				old[nold++] = a;
		} else if (a->last_window + exit_idle < wt->cur && process_gone(wt, a)) {
			if (gone)
				gone[ngone++] = a;
		}
	}
	/* the table is not walked any more: removals may move entries */
	for (i = 0; i < nold; i++) {
		if (!old[i]->live_objs)
			acc_drop(wt, old[i]);
		else if (!acc_retire(wt, old[i]))
			wt->st.keys_idle_merged++;
	}
	for (i = 0; i < ngone; i++)
		if (!acc_retire(wt, gone[i]))
			wt->st.keys_exited++;
	free(gone);
	free(old);
	history_files_gc(&wt->files, wt->cur);
}

/* The host-GPU join: what each process did on the GPU in window w. */
struct gpu_sum {
	uint32_t tgid;
	uint64_t kernel_ns, kv_kernel_ns, copy_bytes;
};

#define GPU_SUMS 64

static unsigned int gpu_sums(struct wtable *wt, uint64_t w, struct gpu_sum *g)
{
	unsigned int n = 0, j;
	size_t i;

	for (i = htab_next(&wt->keys, 0); i < wt->keys.cap; i = htab_next(&wt->keys, i + 1)) {
		const struct acc *a = wt->keys.slot[i];
		const struct wslot *s;

		if (a->key.domain != DOM_GPU || !a->slot)
			continue;
		s = &a->slot[w & 1];
		if (s->window != w)
			continue;
		for (j = 0; j < n && g[j].tgid != a->key.tgid; j++)
			;
		if (j == n) {
			if (n == GPU_SUMS)
				continue;
			memset(&g[n], 0, sizeof(g[n]));
			g[n++].tgid = a->key.tgid;
		}
		if (a->key.id == GPU_KEY_KV_KERNELS)
			g[j].kv_kernel_ns += s->gpu_kernel_ns;
		else
			g[j].kernel_ns += s->gpu_kernel_ns;
		g[j].copy_bytes += s->gpu_copy_in_bytes + s->gpu_copy_out_bytes;
	}
	return n;
}

/* Close the oldest open window: derive the row of every key that saw
 * traffic in it and hand it on.  The only place a window closes; its kv
 * records were applied before (close_next, kvq_apply). */
static void close_one(struct wtable *wt)
{
	struct gpu_sum g[GPU_SUMS];
	uint64_t w = wt->cur;
	unsigned int ng, j;
	struct wslot *s;
	struct wrow r;
	size_t i;

	ng = gpu_sums(wt, w, g);
	for (i = htab_next(&wt->keys, 0); i < wt->keys.cap; i = htab_next(&wt->keys, i + 1)) {
		struct acc *a = wt->keys.slot[i];

		if (!a->slot)
			continue;
		s = &a->slot[w & 1];
		if (s->window != w)
			continue;
		memset(&r, 0, sizeof(r));
		r.window = w;
		r.start_ns = wt->t0_ns + w * wt->window_ns;
		row_derive(&r, a, s, &a->slot[(w + 1) & 1]);
		history_growth(&a->grow, wt->window_ns, &r);
		age_update(wt, a, &r);
		history_locality(&a->loc, &r);
		thrash_update(wt, a, &r);
		for (j = 0; j < ng; j++) {
			if (g[j].tgid != a->key.tgid)
				continue;
			r.tgid_gpu_kernel_ns = g[j].kernel_ns;
			r.tgid_gpu_kv_kernel_ns = g[j].kv_kernel_ns;
			r.tgid_gpu_copy_bytes = g[j].copy_bytes;
		}
		if (wt->row_fn)
			wt->row_fn(&r, wt->ctx);
		wt->st.rows++;
		s->window = WINDOW_NONE;
		a->last_window = w;
	}
	wt->st.windows++;
	wt->cur = w + 1;
	if (wt->cur % GC_EVERY_WINDOWS == 0)
		table_gc(wt);
}

/* ---- events ---- */

/* A slab record's object stands for 2^shift objects (address sampling,
 * CS_TRACK_SLOTS): every count it makes is weighted, alloc and free alike,
 * so counts, live objects, ages and shares stay unbiased estimates, and
 * exact where the shift is 0. */
static void add_slab(struct acc *a, struct wslot *s, const struct cs_event *e)
{
	uint32_t w = 1u << e->slab.shift;

	if (e->slab.shift > s->max_shift)
		s->max_shift = e->slab.shift;
	if (e->type == CS_EV_SLAB_ALLOC) {
		s->allocs += w;
		s->bytes_req += (uint64_t)w * e->slab.bytes_req;
		s->bytes_alloc += (uint64_t)w * e->slab.bytes_alloc;
		topk_add_n(&s->sizes, e->slab.bytes_req, w);
		topk_add_n(&s->sites, e->slab.call_site, w);
		if (e->slab.req_node >= 0 && e->slab.req_node != e->node)
			s->cross_numa += w;
		a->live_objs += w;
		a->live_bytes += (int64_t)w * e->slab.bytes_alloc;
		a->total_allocs += w;
		history_cohort_add(&a->age, e->ts_ns, 1, w);
		return;
	}
	s->frees += w;
	s->bytes_freed += (uint64_t)w * e->slab.bytes_alloc;
	a->live_objs -= w;
	a->live_bytes -= (int64_t)w * e->slab.bytes_alloc;
	a->total_frees += w;
	history_cohort_add(&a->age, e->ts_ns - (e->slab.lifetime_ns < e->ts_ns ? e->slab.lifetime_ns : 0),
		   -1, w);
	if (e->flags & CS_F_UNSEEN) {
		/* freed some time before: no lifetime, no CPU to compare */
		s->unseen_frees += w;
		a->total_unseen_frees += w;
		return;
	}
	s->lifetime_hist[stats_log2_bucket(e->slab.lifetime_ns)] += w;
	if (e->cpu == e->slab.alloc_cpu) {
		s->same_cpu_frees += w;
	} else {
		s->remote_frees += w;
		if (e->flags & CS_F_OWN)
			s->own_remote_frees += w;
	}
	if (e->node != e->slab.alloc_node)
		s->cross_numa += w;
}

static void add_page(struct acc *a, struct wslot *s, const struct cs_event *e)
{
	uint64_t pages = 1ull << (e->order & 31);

	if (e->type == CS_EV_PAGE_ADD) {
		s->page_adds += pages;
		topk_add(&s->sizes, pages);
		topk_add(&s->sites, e->page.index >> CS_GRANULE_SHIFT);
		a->total_page_adds += pages;
		if (e->flags & CS_F_REFAULT) {
			s->refaults++;
			s->refault_pages += e->page.refault_pages;
			s->repeat_pages += e->page.repeat_pages < e->page.refault_pages ?
					   e->page.repeat_pages : e->page.refault_pages;
			s->refault_hist[stats_log2_bucket(e->page.refault_dist)]++;
			a->total_refaults++;
		}
		return;
	}
	s->page_dels += pages;
	a->total_page_dels += pages;
}

/* ---- user-space probe records: bounds, and kv records in order ---- */

static const char *const reject_names[REJ_N] = {
	[REJ_RANGE] = "range", [REJ_KV_POOL] = "kv_pool", [REJ_KV_BUDGET] = "kv_budget",
	[REJ_KV_BLOCK] = "kv_block", [REJ_KV_ARG] = "kv_arg", [REJ_GPU_TIME] = "gpu_time",
	[REJ_GPU_BYTES] = "gpu_bytes", [REJ_GPU_KIND] = "gpu_kind",
};

const char *wtable_reject_name(unsigned int reason)
{
	return reason < REJ_N ? reject_names[reason] : "?";
}

static bool reject(struct wtable *wt, const struct cs_event *e, unsigned int reason)
{
	wt->st.rejected++;
	wt->st.rejected_by[reason]++;
	wt->st.rejected_tgid = e->tgid;
	return true;
}

/* A start/end pair: an open record (end 0, CUPTI's forced flush) has no
 * time; otherwise end >= start and the span is bounded. */
static bool gpu_time_bad(const struct cs_event *e)
{
	return e->gpu.end && (e->gpu.end < e->gpu.start ||
			      e->gpu.end - e->gpu.start > GPU_MAX_SPAN_NS);
}

bool wtable_reject(struct wtable *wt, const struct cs_event *e)
{
	if (e->type != CS_EV_KV && e->type != CS_EV_GPU)
		return false;
	if (e->flags & CS_F_RANGE)
		return reject(wt, e, REJ_RANGE);
	if (e->type == CS_EV_KV) {
		if (e->kv.op == CS_KV_POOL && (!e->kv.block || e->kv.block > KV_MAX_BLOCKS ||
					       e->kv.arg < 1 ||
					       (uint64_t)e->kv.arg > KV_MAX_BLOCK_BYTES))
			return reject(wt, e, REJ_KV_POOL);
		if ((e->kv.op == CS_KV_SWAP_IN || e->kv.op == CS_KV_SWAP_OUT) && e->kv.arg < 0)
			return reject(wt, e, REJ_KV_ARG);
		return false;
	}
	switch (e->gpu.op) {
	case CS_GPU_MEMCPY:
		if (e->gpu.kind >= GPU_MEMCPY_KINDS)
			return reject(wt, e, REJ_GPU_KIND);
		/* fall through */
	case CS_GPU_KERNEL:
	case CS_GPU_KV_KERNEL:
		if (gpu_time_bad(e))
			return reject(wt, e, REJ_GPU_TIME);
		/* fall through */
	case CS_GPU_ALLOC:
	case CS_GPU_RELEASE:
		if (e->gpu.bytes > GPU_MAX_BYTES)
			return reject(wt, e, REJ_GPU_BYTES);
		return false;
	case CS_GPU_DROPPED:
		if (e->gpu.bytes > GPU_MAX_DROPPED)
			return reject(wt, e, REJ_GPU_BYTES);
		return false;
	}
	return false;
}

static void kv_pool_release(struct wtable *wt, struct acc *a)
{
	wt->st.kv_blocks -= a->kv_nblocks;
	a->kv_nblocks = 0;
	free(a->kv_use_ts);
	free(a->kv_use_cpu);
	a->kv_use_ts = NULL;
	a->kv_use_cpu = NULL;
}

/* A new pool (bounds checked by wtable_reject): the last one is gone with
 * it, whether or not this one can be tracked. */
static void kv_pool_new(struct wtable *wt, struct acc *a, const struct cs_event *e)
{
	kv_pool_release(wt, a);
	a->kv_block_bytes = (uint64_t)e->kv.arg;
	a->live_objs = 0;
	a->live_bytes = 0;
	history_cohorts_clear(&a->age);
	if (wt->st.kv_blocks + e->kv.block > KV_BLOCK_BUDGET) {
		reject(wt, e, REJ_KV_BUDGET);
		return;
	}
	a->kv_use_ts = calloc(e->kv.block, sizeof(*a->kv_use_ts));
	a->kv_use_cpu = calloc(e->kv.block, sizeof(*a->kv_use_cpu));
	if (!a->kv_use_ts || !a->kv_use_cpu) {
		kv_pool_release(wt, a);
		return;
	}
	a->kv_nblocks = e->kv.block;
	wt->st.kv_blocks += a->kv_nblocks;
}

/* kvref's blocks: in use from CS_KV_USE to CS_KV_RELEASE, counted like slab
 * objects (with lifetime and CPU locality from per-block state); swap-ins
 * are refaults of the block's pages.  Records come in timestamp order
 * (kvq_apply), with block indices inside the pool (apply_event). */
static void add_kv(struct wtable *wt, struct acc *a, struct wslot *s, const struct cs_event *e)
{
	uint64_t pages = a->kv_block_bytes ? (a->kv_block_bytes + 4095) / 4096 : 1;
	uint32_t b = e->kv.block;

	switch (e->kv.op) {
	case CS_KV_POOL:
		/* hash: 1 when the pool is in GPU memory (kvref --backend cuda) */
		snprintf(a->name, sizeof(a->name), "%s", e->kv.hash == 1 ? "kv-pool-gpu" : "kv-pool");
		kv_pool_new(wt, a, e);
		break;
	case CS_KV_USE:
		/* a swap-in fires block_alloc and then a prefix hit at
		 * refcount 1: one taking-up, counted once */
		if (a->kv_use_ts[b])
			break;
		s->allocs++;
		s->bytes_req += a->kv_block_bytes;
		s->bytes_alloc += a->kv_block_bytes;
		topk_add(&s->sizes, a->kv_block_bytes);
		topk_add(&s->sites, 0);
		a->live_objs++;
		a->live_bytes += a->kv_block_bytes;
		a->total_allocs++;
		history_cohort_add(&a->age, e->ts_ns, 1, 1);
		a->kv_use_ts[b] = e->ts_ns;
		a->kv_use_cpu[b] = e->cpu;
		break;
	case CS_KV_RELEASE:
		/* only blocks seen taken up count, as for slab objects */
		if (!a->kv_use_ts[b])
			break;
		s->frees++;
		s->bytes_freed += a->kv_block_bytes;
		s->lifetime_hist[stats_log2_bucket(e->ts_ns > a->kv_use_ts[b] ?
					     e->ts_ns - a->kv_use_ts[b] : 0)]++;
		history_cohort_add(&a->age, a->kv_use_ts[b], -1, 1);
		if (a->kv_use_cpu[b] == e->cpu) {
			s->same_cpu_frees++;
		} else {
			s->remote_frees++;
			s->own_remote_frees++;	/* the pool's own process */
		}
		a->kv_use_ts[b] = 0;
		a->live_objs--;
		a->live_bytes -= a->kv_block_bytes;
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
		if ((uint64_t)e->kv.arg <= a->kv_nblocks)
			s->repeat_pages += pages;
		s->refault_hist[stats_log2_bucket((uint64_t)e->kv.arg)]++;
		a->total_page_adds += pages;
		a->total_refaults++;
		break;
	}
}

static int kvq_cmp(const void *x, const void *y)
{
	const struct kvq_ent *a = x, *b = y;

	if (a->e.ts_ns != b->e.ts_ns)
		return a->e.ts_ns < b->e.ts_ns ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* CUPTI records: kernels (count and busy time) on their family's key,
 * copies and device allocations on the memory key, counted like slab
 * objects (live bytes from allocation to release). */
static void add_gpu(struct acc *a, struct wslot *s, const struct cs_event *e)
{
	switch (e->gpu.op) {
	case CS_GPU_KERNEL:
	case CS_GPU_KV_KERNEL:
		s->gpu_kernels++;
		if (e->gpu.end > e->gpu.start)
			s->gpu_kernel_ns += e->gpu.end - e->gpu.start;
		break;
	case CS_GPU_MEMCPY:
		s->gpu_copies++;
		if (e->gpu.kind == 1)		/* CUPTI_ACTIVITY_MEMCPY_KIND_HTOD */
			s->gpu_copy_in_bytes += e->gpu.bytes;
		else if (e->gpu.kind == 2)	/* CUPTI_ACTIVITY_MEMCPY_KIND_DTOH */
			s->gpu_copy_out_bytes += e->gpu.bytes;
		break;
	case CS_GPU_ALLOC:
		s->allocs++;
		s->bytes_req += e->gpu.bytes;
		s->bytes_alloc += e->gpu.bytes;
		topk_add(&s->sizes, e->gpu.bytes);
		topk_add(&s->sites, 0);
		a->live_objs++;
		a->live_bytes += e->gpu.bytes;
		a->total_allocs++;
		break;
	case CS_GPU_RELEASE:
		s->frees++;
		s->same_cpu_frees++;	/* device memory: no CPU to be remote from */
		s->bytes_freed += e->gpu.bytes;
		a->live_objs--;
		a->live_bytes -= e->gpu.bytes;
		a->total_frees++;
		break;
	}
}

/* Account one event in its window, which is open: at most one past the
 * oldest open one (advance).  Never closes a window. */
static int apply_event(struct wtable *wt, const struct cs_event *e)
{
	uint64_t w = wtable_window_of(wt, e->ts_ns);
	struct wkey k = { 0 };
	struct wslot *s;
	struct acc *a;
	bool others;

	wt->st.events++;
	if (w < wt->cur) {
		wt->st.late++;
		w = wt->cur;
	}

	k.tgid = e->tgid;
	switch (e->type) {
	case CS_EV_SLAB_ALLOC:
	case CS_EV_SLAB_FREE:
		k.domain = DOM_SLAB;
		k.id = e->slab.cache;
		break;
	case CS_EV_PAGE_ADD:
	case CS_EV_PAGE_DEL:
		k.domain = DOM_PAGE;
		/* a kernel thread's evictions: one key of all its files
		 * (reclaim goes through every file of the page cache; a key
		 * per file filled the key budget under DAMON's reclaim) */
		if (e->type == CS_EV_PAGE_DEL && (e->flags & CS_F_KTHREAD))
			break;
		k.id = e->page.ino;
		k.dev = e->page.dev;
		k.gen = e->page.gen;
		break;
	case CS_EV_KV:
		k.domain = DOM_KV;	/* one pool per process */
		break;
	case CS_EV_GPU:
		k.domain = DOM_GPU;
		k.id = e->gpu.op == CS_GPU_KV_KERNEL ? GPU_KEY_KV_KERNELS :
		       e->gpu.op == CS_GPU_KERNEL ? GPU_KEY_KERNELS : GPU_KEY_MEMORY;
		break;
	default:
		return -EINVAL;
	}
	a = acc_get(wt, &k, &others);
	if (!a)
		return -ENOMEM;
	if (others)
		wt->st.others_events++;
	if (k.domain == DOM_KV && e->kv.op != CS_KV_POOL && e->kv.block >= a->kv_nblocks) {
		reject(wt, e, REJ_KV_BLOCK);	/* before it opens a window */
		return 0;
	}
	if (!a->slot) {
		a->slot = malloc(2 * sizeof(*a->slot));
		if (!a->slot)
			return -ENOMEM;
		a->slot[0].window = a->slot[1].window = WINDOW_NONE;
	}
	s = &a->slot[w & 1];
	if (s->window != w) {
		memset(s, 0, sizeof(*s));
		s->window = w;
	}
	if (!a->first_ns)
		a->first_ns = e->ts_ns;
	if (k.domain == DOM_SLAB)
		add_slab(a, s, e);
	else if (k.domain == DOM_PAGE)
		add_page(a, s, e);
	else if (k.domain == DOM_KV)
		add_kv(wt, a, s, e);
	else
		add_gpu(a, s, e);
	return 0;
}

/* Apply, in timestamp order, the queued kv records of windows up to w
 * (WINDOW_NONE: all).  Called before window w closes, when every ring was
 * drained past its end: the two-window slack orders them.  With all, a
 * record of a window two past the oldest open one first closes the
 * windows before it, as an event of any other kind would (advance). */
static void kvq_apply(struct wtable *wt, uint64_t w)
{
	size_t i, n = 0;

	if (!wt->kvq_n)
		return;
	qsort(wt->kvq, wt->kvq_n, sizeof(*wt->kvq), kvq_cmp);
	while (n < wt->kvq_n && (w == WINDOW_NONE || wtable_window_of(wt, wt->kvq[n].e.ts_ns) <= w))
		n++;
	for (i = 0; i < n; i++) {
		while (wtable_window_of(wt, wt->kvq[i].e.ts_ns) > wt->cur + 1)
			close_one(wt);
		apply_event(wt, &wt->kvq[i].e);
	}
	memmove(wt->kvq, wt->kvq + n, (wt->kvq_n - n) * sizeof(*wt->kvq));
	wt->kvq_n -= n;
}

/* ---- closing windows: close_next, from the tick or from advance ---- */

static void close_next(struct wtable *wt)
{
	kvq_apply(wt, wt->cur);
	close_one(wt);
}

/* Make window w open.  A key holds two window slots (window.h), so an
 * event two windows past the oldest open one closes the windows before
 * it: the daemon's tick was late (its loop stalled for a window), and the
 * rows still come in window order. */
static void advance(struct wtable *wt, uint64_t w)
{
	while (w > wt->cur + 1)
		close_next(wt);
}

static int add_event(struct wtable *wt, const struct cs_event *e)
{
	advance(wt, wtable_window_of(wt, e->ts_ns));
	return apply_event(wt, e);
}

void wtable_close_until(struct wtable *wt, uint64_t now_ns)
{
	while (wt->t0_ns + (wt->cur + 1) * wt->window_ns <= now_ns)
		close_next(wt);
}

void wtable_close_all(struct wtable *wt)
{
	size_t i;
	uint64_t last;

	kvq_apply(wt, WINDOW_NONE);
	last = wt->cur;
	for (i = htab_next(&wt->keys, 0); i < wt->keys.cap; i = htab_next(&wt->keys, i + 1)) {
		struct acc *a = wt->keys.slot[i];

		if (!a->slot)
			continue;
		if (a->slot[0].window != WINDOW_NONE && a->slot[0].window > last)
			last = a->slot[0].window;
		if (a->slot[1].window != WINDOW_NONE && a->slot[1].window > last)
			last = a->slot[1].window;
	}
	while (wt->cur <= last)
		close_next(wt);
}

static int kvq_push(struct wtable *wt, const struct cs_event *e)
{
	struct kvq_ent *q;
	size_t cap;

	if (wt->kvq_n == KV_QUEUE_MAX) {
		wt->st.kv_queue_full++;
		kvq_apply(wt, WINDOW_NONE);
	}
	if (wt->kvq_n == wt->kvq_cap) {
		cap = wt->kvq_cap ? 2 * wt->kvq_cap : 256;
		q = realloc(wt->kvq, cap * sizeof(*q));
		if (!q)
			return -ENOMEM;
		wt->kvq = q;
		wt->kvq_cap = cap;
	}
	wt->kvq[wt->kvq_n].e = *e;
	wt->kvq[wt->kvq_n++].seq = wt->kvq_seq++;
	return 0;
}

int wtable_add(struct wtable *wt, const struct cs_event *e)
{
	struct cs_event f, a;
	uint64_t late;
	int err;

	if (wtable_reject(wt, e))
		return 0;
	if (e->type == CS_EV_KV)
		return kvq_push(wt, e);
	if (e->type != CS_EV_SLAB_ALLOC || !(e->flags & CS_F_UNSEEN))
		return add_event(wt, e);
	/* an alloc over a live address: first the unseen free of the object
	 * it replaced, to that object's key, then the alloc; one record */
	f = *e;
	f.type = CS_EV_SLAB_FREE;
	f.tgid = e->slab.old_tgid;
	f.flags = CS_F_UNSEEN | (e->slab.old_cache < CS_KMALLOC_ID_MAX ? CS_F_KMALLOC : 0);
	f.slab.cache = e->slab.old_cache;
	f.slab.bytes_alloc = e->slab.old_bytes;
	f.slab.shift = e->slab.old_shift;
	f.slab.bytes_req = 0;
	f.slab.call_site = 0;
	late = wt->st.late;
	err = add_event(wt, &f);
	if (err)
		return err;
	wt->st.events--;
	wt->st.late = late;
	a = *e;
	a.flags &= ~CS_F_UNSEEN;
	a.slab.lifetime_ns = 0;
	return add_event(wt, &a);
}

void wtable_get_stats(const struct wtable *wt, struct wtable_stats *st)
{
	*st = wt->st;
	st->keys = wt->keys.n;
	st->files = wt->files.tab.n;
}

void wtable_foreach(struct wtable *wt, int (*fn)(struct acc *acc, void *ctx),
		    void *ctx)
{
	size_t i;

	for (i = htab_next(&wt->keys, 0); i < wt->keys.cap; i = htab_next(&wt->keys, i + 1))
		if (fn(wt->keys.slot[i], ctx))
			return;
}
