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
#include "window.h"

#define GC_EVERY_WINDOWS 64
#define GC_IDLE_NS (60ull * 1000000000ull)
/* a process's key idle this long is checked for the process's exit */
#define GC_EXIT_CHECK_NS (5ull * 1000000000ull)

struct fhist;

struct kvq_ent {
	struct cs_event e;
	uint64_t seq;		/* arrival order, for equal timestamps */
};

struct wtable {
	struct acc **slots;
	size_t cap, n;
	uint64_t t0_ns, window_ns;
	uint64_t cur;		/* oldest open window */
	wtable_row_fn row_fn;
	wtable_resolve_fn resolve;
	void *ctx;
	struct wtable_stats st;
	struct wtable_rules rules;
	struct fhist **files;	/* refault history per file */
	size_t fcap, nfiles;
	struct wtable_limits lim;
	uint64_t room_window;	/* the last window make_room found none */
	uint64_t drops, last_drop_ns;	/* records dropped so far, and when last */
	/* kv records waiting for their window to close (kvq_flush) */
	struct kvq_ent *kvq;
	size_t kvq_n, kvq_cap;
	uint64_t kvq_seq;
	bool kvq_busy;
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

/* ---- small statistics ---- */

void topk_add_n(struct topk *t, uint64_t val, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < t->n; i++) {
		if (t->val[i] == val) {
			t->cnt[i] += n;
			return;
		}
	}
	if (t->n < TOPK_SLOTS) {
		t->val[t->n] = val;
		t->cnt[t->n++] = n;
		return;
	}
	t->other += n;
}

void topk_add(struct topk *t, uint64_t val)
{
	topk_add_n(t, val, 1);
}

uint64_t topk_total(const struct topk *t)
{
	uint64_t sum = t->other;
	uint32_t i;

	for (i = 0; i < t->n; i++)
		sum += t->cnt[i];
	return sum;
}

uint64_t topk_argmax(const struct topk *t)
{
	uint32_t i, m = 0;
	uint64_t v = 0;

	for (i = 0; i < t->n; i++) {
		if (t->cnt[i] > m) {
			m = t->cnt[i];
			v = t->val[i];
		}
	}
	return v;
}

uint32_t topk_max(const struct topk *t)
{
	uint32_t i, m = 0;

	for (i = 0; i < t->n; i++)
		if (t->cnt[i] > m)
			m = t->cnt[i];
	return m;
}

/* Shannon entropy in bits.  Values past the first TOPK_SLOTS are spread
 * over as many singletons, which bounds the entropy from above. */
double topk_entropy(const struct topk *t)
{
	double total = (double)topk_total(t), h = 0, p;
	uint32_t i;

	if (total <= 0)
		return 0;
	for (i = 0; i < t->n; i++) {
		p = t->cnt[i] / total;
		h -= p * log2(p);
	}
	if (t->other) {
		p = 1.0 / total;
		h -= (double)t->other * p * log2(p);
	}
	return h;
}

unsigned int hist_bucket(uint64_t v)
{
	return v ? 63 - __builtin_clzll(v) : 0;
}

/* Percentile q in [0,1] of a log2 histogram, interpolated linearly inside
 * the bucket [2^b, 2^(b+1)).  Returns 0 for an empty histogram. */
uint64_t hist_percentile(const uint32_t *hist, double q)
{
	uint64_t total = 0, seen = 0, lo, width, off;
	double rank, frac;
	unsigned int b;

	for (b = 0; b < HIST_BUCKETS; b++)
		total += hist[b];
	if (!total)
		return 0;
	rank = q * (double)total;
	for (b = 0; b < HIST_BUCKETS; b++) {
		if (!hist[b])
			continue;
		if ((double)(seen + hist[b]) >= rank) {
			lo = b ? 1ull << b : 0;
			width = b ? 1ull << b : 2;
			frac = (rank - (double)seen) / hist[b];
			off = frac > 0 ? (uint64_t)(frac * (double)width) : 0;
			return lo + (off < width ? off : width - 1);
		}
		seen += hist[b];
	}
	return 1ull << 63;
}

double slope(const double *x, const double *y, unsigned int n)
{
	double mx = 0, my = 0, sxx = 0, sxy = 0;
	unsigned int i;

	if (n < 2)
		return 0;
	for (i = 0; i < n; i++) {
		mx += x[i];
		my += y[i];
	}
	mx /= n;
	my /= n;
	for (i = 0; i < n; i++) {
		sxx += (x[i] - mx) * (x[i] - mx);
		sxy += (x[i] - mx) * (y[i] - my);
	}
	return sxx > 0 ? sxy / sxx : 0;
}

/* ---- live objects by age ---- */

static void cohort_advance(struct acc *a, uint64_t c)
{
	if (c <= a->cohort_head)
		return;
	if (c - a->cohort_head >= AGE_COHORTS) {
		uint32_t i;

		for (i = 0; i < AGE_COHORTS; i++) {
			a->cohort_older += a->cohort[i];
			a->tcohort_older += a->tcohort[i];
			a->cohort[i] = a->tcohort[i] = 0;
		}
		a->cohort_head = c;
		return;
	}
	while (a->cohort_head < c) {
		uint32_t i = ++a->cohort_head % AGE_COHORTS;

		a->cohort_older += a->cohort[i];	/* falls off the ring */
		a->tcohort_older += a->tcohort[i];
		a->cohort[i] = a->tcohort[i] = 0;
	}
}

/* One object allocated at ts_ns (sign +1) or freed (sign -1, ts_ns = its
 * allocation time), standing for w objects. */
static void cohort_add(struct acc *a, uint64_t ts_ns, int sign, uint32_t w)
{
	uint64_t c = ts_ns / AGE_COHORT_NS;

	cohort_advance(a, c);
	if (c + AGE_COHORTS <= a->cohort_head) {
		a->cohort_older += sign * (int64_t)w;
		a->tcohort_older += sign;
	} else {
		a->cohort[c % AGE_COHORTS] += sign * (int32_t)w;
		a->tcohort[c % AGE_COHORTS] += sign;
	}
}

static int64_t old_in(const int32_t *ring, int64_t older, uint64_t head, uint64_t cutoff_ns)
{
	int64_t n = older;
	uint64_t c, first;

	first = head >= AGE_COHORTS - 1 ? head - (AGE_COHORTS - 1) : 0;
	/* whole cohorts that ended by the cutoff */
	for (c = first; c <= head; c++)
		if ((c + 1) * AGE_COHORT_NS <= cutoff_ns)
			n += ring[c % AGE_COHORTS];
	return n > 0 ? n : 0;
}

int64_t acc_old_objs(const struct acc *a, uint64_t cutoff_ns)
{
	return old_in(a->cohort, a->cohort_older, a->cohort_head, cutoff_ns);
}

int64_t acc_old_tracked(const struct acc *a, uint64_t cutoff_ns)
{
	return old_in(a->tcohort, a->tcohort_older, a->cohort_head, cutoff_ns);
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
	p50 = hist_percentile(a->life_hist, 0.5);
	r->key_lifetime_p50_ns = p50;
	age = ru->age_min_ns > a->expiry_ns ? ru->age_min_ns : a->expiry_ns;
	if (ru->age_lifetimes * (double)p50 > (double)age)
		age = (uint64_t)(ru->age_lifetimes * (double)p50);
	r->age_ns = age;
	r->old_objs = end > age ? acc_old_objs(a, end - age) : 0;
	tracked = end > age ? acc_old_tracked(a, end - age) : 0;
	hist_rise(&a->rise, r, end, tracked, a->total_allocs,
		  a->total_frees - a->total_unseen_frees, a->first_ns);
	/* a free lost to a full ring leaves its object live for good: any
	 * drop since the rise's objects were allocated may have made it */
	r->old_rise_dropped = wt->drops && wt->last_drop_ns + age >= a->rise.start_ns;
}

void hist_rise(struct rise_hist *h, struct wrow *r, uint64_t end, int64_t tracked,
	       uint64_t allocs, uint64_t seen_frees, uint64_t first_ns)
{
	uint64_t age = r->age_ns;

	/* a rise starts where the old population last fell or was empty */
	if (r->old_objs < h->last || !r->old_objs || !h->start_ns) {
		h->start = r->old_objs;
		h->start_tracked = tracked;
		h->start_ns = end;
		h->steps = 0;
		h->max_step = 0;
		h->start_allocs = allocs;
		h->start_frees = seen_frees;
	} else if (r->old_objs > h->last) {
		if (!h->steps++)
			h->first_step_ns = end;
		h->last_step_ns = end;
		if (r->old_objs - h->last > h->max_step)
			h->max_step = r->old_objs - h->last;
	}
	h->last = r->old_objs;
	r->old_rise = r->old_objs - h->start;
	r->old_rise_tracked = tracked - h->start_tracked;
	r->old_steps = h->steps;
	r->old_max_step = h->max_step;
	r->old_rise_allocs = allocs - h->start_allocs;
	r->old_rise_frees = seen_frees - h->start_frees;
	if (h->steps) {
		r->old_rise_s = (double)(h->last_step_ns - h->first_step_ns) / 1e9;
		r->old_quiet_s = (double)(end - h->last_step_ns) / 1e9;
		r->old_warmup_s = h->first_step_ns > first_ns + age ?
			(double)(h->first_step_ns - age - first_ns) / 1e9 : 0;
	}
}

/* Locality over the key's last LOCALITY_SAMPLES windows: a handoff between
 * CPUs that lasts, not a scheduler's moment or a burst. */
void hist_locality(struct loc_hist *h, struct wrow *r)
{
	uint64_t same = 0, all = 0, own = 0;
	uint32_t i, n;

	if (r->s->same_cpu_frees + r->s->remote_frees) {
		i = h->head++ % LOCALITY_SAMPLES;
		h->win[i] = r->window;
		h->same[i] = r->s->same_cpu_frees > UINT32_MAX ? UINT32_MAX :
			     (uint32_t)r->s->same_cpu_frees;
		h->remote[i] = r->s->remote_frees > UINT32_MAX ? UINT32_MAX :
			       (uint32_t)r->s->remote_frees;
		h->own[i] = r->s->own_remote_frees > h->remote[i] ? h->remote[i] :
			    (uint32_t)r->s->own_remote_frees;
	}
	n = h->head < LOCALITY_SAMPLES ? h->head : LOCALITY_SAMPLES;
	r->recent_windows = 0;
	for (i = 0; i < n; i++) {
		if (h->win[i] + LOCALITY_SAMPLES <= r->window)
			continue;	/* older than the last second */
		same += h->same[i];
		all += h->same[i] + h->remote[i];
		own += h->own[i];
		r->recent_windows++;
	}
	r->recent_locality = all ? (double)same / all : 1.0;
	r->recent_own_share = all > same ? (double)own / (all - same) : 0.0;
}

/* ---- refault history per file ---- */

struct fhist {
	uint64_t ino;
	uint32_t dev, gen;
	struct thist th;
};

static uint64_t file_hash(uint64_t ino, uint32_t dev, uint32_t gen)
{
	uint64_t h = ino * 0x9e3779b97f4a7c15ull ^ ((uint64_t)dev << 32 | gen);

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

static int files_resize(struct wtable *wt, size_t cap)
{
	struct fhist **slots = calloc(cap, sizeof(*slots));
	size_t i, j;

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < wt->fcap; i++) {
		struct fhist *f = wt->files[i];

		if (!f)
			continue;
		j = file_hash(f->ino, f->dev, f->gen) & (cap - 1);
		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = f;
	}
	free(wt->files);
	wt->files = slots;
	wt->fcap = cap;
	return 0;
}

/* The file's history; created on its first refault (NULL: out of memory). */
static struct thist *file_thist(struct wtable *wt, const struct wkey *k, bool create)
{
	struct fhist *f;
	size_t i;

	if (!wt->fcap && (!create || files_resize(wt, 64)))
		return NULL;
	i = file_hash(k->id, k->dev, k->gen) & (wt->fcap - 1);
	while ((f = wt->files[i])) {
		if (f->ino == k->id && f->dev == k->dev && f->gen == k->gen)
			return &f->th;
		i = (i + 1) & (wt->fcap - 1);
	}
	if (!create)
		return NULL;
	if ((wt->nfiles + 1) * 10 > wt->fcap * 7) {
		if (files_resize(wt, wt->fcap * 2))
			return NULL;
		return file_thist(wt, k, create);
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->ino = k->id;
	f->dev = k->dev;
	f->gen = k->gen;
	wt->files[i] = f;
	wt->nfiles++;
	return &f->th;
}

/* Forget files with no refault for THRASH_SAMPLES windows. */
static void files_gc(struct wtable *wt)
{
	size_t i, kept = 0;

	for (i = 0; i < wt->fcap; i++) {
		struct fhist *f = wt->files[i];

		if (!f)
			continue;
		if (!f->th.head || f->th.win[(f->th.head - 1) % THRASH_SAMPLES] +
				   THRASH_SAMPLES <= wt->cur) {
			free(f);
			wt->files[i] = NULL;
			continue;
		}
		kept++;
	}
	wt->nfiles = kept;
	if (wt->fcap)
		files_resize(wt, wt->fcap);
}

/* Refaults of the recent windows: persistence tells thrash from one pass. */
void hist_refaults(struct thist *th, uint64_t window_ns, struct wrow *r)
{
	uint64_t first = WINDOW_NONE, last = 0;
	bool refaulted = r->s->refault_pages > 0;
	uint32_t i;

	if (!th)
		return;
	/* inserts count once the file has refaulted: the share of them that
	 * refaulted over the recent windows */
	if (refaulted || (th->head && r->s->page_adds)) {
		/* several readers of one file in one window: one sample */
		i = (th->head - 1) % THRASH_SAMPLES;
		if (!th->head || th->win[i] != r->window) {
			i = th->head++ % THRASH_SAMPLES;
			th->win[i] = r->window;
			th->adds[i] = th->refault[i] = th->repeat[i] = 0;
		}
		th->adds[i] += r->s->page_adds > UINT32_MAX ? UINT32_MAX : (uint32_t)r->s->page_adds;
		th->refault[i] += r->s->refault_pages > UINT32_MAX ? UINT32_MAX :
				  (uint32_t)r->s->refault_pages;
		th->repeat[i] += r->s->repeat_pages > UINT32_MAX ? UINT32_MAX :
				 (uint32_t)r->s->repeat_pages;
	}
	for (i = 0; i < THRASH_SAMPLES && i < th->head; i++) {
		/* only the last THRASH_SAMPLES windows of time count */
		if (th->win[i] + THRASH_SAMPLES <= r->window)
			continue;
		r->recent_page_adds += th->adds[i];
		if (!th->refault[i])
			continue;
		r->recent_refault_pages += th->refault[i];
		r->recent_repeat_pages += th->repeat[i];
		r->refault_windows++;
		if (th->win[i] < first)
			first = th->win[i];
		if (th->win[i] > last)
			last = th->win[i];
	}
	if (r->refault_windows) {
		r->refault_span_s = (double)((last - first + 1) * window_ns) / 1e9;
		r->refault_quiet_s = (double)((r->window - last) * window_ns) / 1e9;
	}
}

static void thrash_update(struct wtable *wt, struct acc *a, struct wrow *r)
{
	bool refaulted = r->s->refault_pages > 0;
	struct thist *th;

	if (a->key.domain == DOM_PAGE) {
		th = file_thist(wt, &a->key, refaulted);
	} else {
		if (!a->th && refaulted)
			a->th = calloc(1, sizeof(*a->th));
		th = a->th;
	}
	hist_refaults(th, wt->window_ns, r);
}

/* Record the key's live count at the end of window w and derive the
 * growth evidence of the row. */
void hist_growth(struct grow_hist *h, uint64_t window_ns, struct wrow *r)
{
	double x[GROWTH_SAMPLES], y[GROWTH_SAMPLES];
	uint32_t i, k;

	if (r->s->allocs > r->s->frees)
		h->grew_windows++;
	else if (r->s->allocs < r->s->frees)
		h->grew_windows = 0;
	h->win[h->head] = r->window;
	h->live[h->head] = r->live_objs;
	h->head = (h->head + 1) % GROWTH_SAMPLES;
	if (h->n < GROWTH_SAMPLES)
		h->n++;
	for (i = 0; i < h->n; i++) {
		k = (h->head + GROWTH_SAMPLES - h->n + i) % GROWTH_SAMPLES;
		x[i] = (double)(h->win[k] * window_ns) / 1e9;
		y[i] = (double)h->live[k];
	}
	r->growth_per_s = slope(x, y, h->n);
	r->grew_windows = h->grew_windows;
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

static int table_resize(struct wtable *wt, size_t cap)
{
	struct acc **slots = calloc(cap, sizeof(*slots));
	size_t i, j;

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < wt->cap; i++) {
		if (!wt->slots[i])
			continue;
		j = wkey_hash(&wt->slots[i]->key) & (cap - 1);
		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = wt->slots[i];
	}
	free(wt->slots);
	wt->slots = slots;
	wt->cap = cap;
	return 0;
}

/* The key's slot in the table: its entry, or the empty slot it would take. */
static size_t acc_slot(const struct wtable *wt, const struct wkey *k)
{
	size_t i = wkey_hash(k) & (wt->cap - 1);

	while (wt->slots[i] && !wkey_eq(&wt->slots[i]->key, k))
		i = (i + 1) & (wt->cap - 1);
	return i;
}

static struct acc *acc_find(const struct wtable *wt, const struct wkey *k)
{
	return wt->slots[acc_slot(wt, k)];
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
	size_t i;

	if ((wt->n + 1) * 10 > wt->cap * 7 && table_resize(wt, wt->cap * 2))
		return NULL;
	i = acc_slot(wt, k);
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->key = *k;
	acc_name(a);
	if (wt->resolve)
		wt->resolve(a, wt->ctx);
	if (k->tgid == CS_TGID_OTHER)
		snprintf(a->comm, sizeof(a->comm), "(others)");
	wt->slots[i] = a;
	wt->n++;
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

static void cohort_advance(struct acc *a, uint64_t c);

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
	/* cohorts: the same absolute numbering once both rings are advanced */
	if (src->cohort_head > dst->cohort_head)
		cohort_advance(dst, src->cohort_head);
	dst->cohort_older += src->cohort_older;
	dst->tcohort_older += src->tcohort_older;
	for (i = 0; i < AGE_COHORTS; i++) {
		uint64_t c = src->cohort_head >= i ? src->cohort_head - i : 0;
		uint32_t k = c % AGE_COHORTS;

		if (src->cohort_head < i || (!src->cohort[k] && !src->tcohort[k]))
			continue;
		if (c + AGE_COHORTS <= dst->cohort_head) {
			dst->cohort_older += src->cohort[k];
			dst->tcohort_older += src->tcohort[k];
		} else {
			dst->cohort[k] += src->cohort[k];
			dst->tcohort[k] += src->tcohort[k];
		}
	}
	if (!dst->first_ns || (src->first_ns && src->first_ns < dst->first_ns))
		dst->first_ns = src->first_ns;
}

/* Take the entry in slot i out, shifting later entries of its probe run
 * back so that every lookup still finds its key (linear probing). */
static void slot_remove(struct wtable *wt, size_t i)
{
	size_t mask = wt->cap - 1, j = i, h;

	wt->slots[i] = NULL;
	wt->n--;
	for (;;) {
		j = (j + 1) & mask;
		if (!wt->slots[j])
			return;
		h = wkey_hash(&wt->slots[j]->key) & mask;
		/* stays when its home lies cyclically in (i, j] */
		if (i <= j ? (h > i && h <= j) : (h > i || h <= j))
			continue;
		wt->slots[i] = wt->slots[j];
		wt->slots[j] = NULL;
		i = j;
	}
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
	slot_remove(wt, acc_slot(wt, &a->key));
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
	slot_remove(wt, acc_slot(wt, &a->key));
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
	cand = malloc(wt->n * sizeof(*cand));
	if (!cand)
		return;
	for (i = 0; i < wt->cap; i++) {
		struct acc *a = wt->slots[i];

		if (a && a->key.tgid != CS_TGID_OTHER && !acc_open(a))
			cand[n++] = a;
	}
	qsort(cand, n, sizeof(*cand), idle_cmp);
	for (i = 0; i < n && wt->n > target; i++) {
		if (!cand[i]->live_objs)
			acc_drop(wt, cand[i]);
		else if (!acc_retire(wt, cand[i]))
			wt->st.keys_evicted++;
		else
			break;
	}
	free(cand);
	if (wt->n <= target)
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
	if (wt->lim.max_keys && k->tgid != CS_TGID_OTHER && wt->n >= wt->lim.max_keys) {
		make_room(wt);
		if (wt->n >= wt->lim.max_keys) {
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
	wt->cap = 256;
	wt->slots = calloc(wt->cap, sizeof(*wt->slots));
	if (!wt->slots) {
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
	for (i = 0; i < wt->cap; i++)
		acc_free(wt->slots[i]);
	for (i = 0; i < wt->fcap; i++)
		free(wt->files[i]);
	free(wt->files);
	free(wt->slots);
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
	r->lifetime_p50_ns = hist_percentile(s->lifetime_hist, 0.5);
	r->refault_dist_p50 = hist_percentile(s->refault_hist, 0.5);
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

	gone = malloc(wt->n * sizeof(*gone));
	old = malloc(wt->n * sizeof(*old));
	for (i = 0; i < wt->cap; i++) {
		a = wt->slots[i];
		if (!a || acc_open(a))
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
	files_gc(wt);
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

	for (i = 0; i < wt->cap; i++) {
		const struct acc *a = wt->slots[i];
		const struct wslot *s;

		if (!a || a->key.domain != DOM_GPU || !a->slot)
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

static void kvq_flush(struct wtable *wt, uint64_t w);

static void close_window(struct wtable *wt)
{
	struct gpu_sum g[GPU_SUMS];
	uint64_t w = wt->cur;
	unsigned int ng, j;
	struct wslot *s;
	struct wrow r;
	size_t i;

	kvq_flush(wt, w);
	ng = gpu_sums(wt, w, g);
	for (i = 0; i < wt->cap; i++) {
		struct acc *a = wt->slots[i];

		if (!a || !a->slot)
			continue;
		s = &a->slot[w & 1];
		if (s->window != w)
			continue;
		memset(&r, 0, sizeof(r));
		r.window = w;
		r.start_ns = wt->t0_ns + w * wt->window_ns;
		row_derive(&r, a, s, &a->slot[(w + 1) & 1]);
		hist_growth(&a->grow, wt->window_ns, &r);
		age_update(wt, a, &r);
		hist_locality(&a->loc, &r);
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

void wtable_close_until(struct wtable *wt, uint64_t now_ns)
{
	while (wt->t0_ns + (wt->cur + 1) * wt->window_ns <= now_ns)
		close_window(wt);
}

void wtable_close_all(struct wtable *wt)
{
	size_t i;
	uint64_t last;

	kvq_flush(wt, WINDOW_NONE);
	last = wt->cur;
	for (i = 0; i < wt->cap; i++) {
		struct acc *a = wt->slots[i];

		if (!a || !a->slot)
			continue;
		if (a->slot[0].window != WINDOW_NONE && a->slot[0].window > last)
			last = a->slot[0].window;
		if (a->slot[1].window != WINDOW_NONE && a->slot[1].window > last)
			last = a->slot[1].window;
	}
	while (wt->cur <= last)
		close_window(wt);
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
		cohort_add(a, e->ts_ns, 1, w);
		return;
	}
	s->frees += w;
	s->bytes_freed += (uint64_t)w * e->slab.bytes_alloc;
	a->live_objs -= w;
	a->live_bytes -= (int64_t)w * e->slab.bytes_alloc;
	a->total_frees += w;
	cohort_add(a, e->ts_ns - (e->slab.lifetime_ns < e->ts_ns ? e->slab.lifetime_ns : 0),
		   -1, w);
	if (e->flags & CS_F_UNSEEN) {
		/* freed some time before: no lifetime, no CPU to compare */
		s->unseen_frees += w;
		a->total_unseen_frees += w;
		return;
	}
	s->lifetime_hist[hist_bucket(e->slab.lifetime_ns)] += w;
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
			s->refault_hist[hist_bucket(e->page.refault_dist)]++;
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
	memset(a->cohort, 0, sizeof(a->cohort));
	memset(a->tcohort, 0, sizeof(a->tcohort));
	a->cohort_older = a->tcohort_older = 0;
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
 * (kvq_flush), with block indices inside the pool (add_event). */
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
		cohort_add(a, e->ts_ns, 1, 1);
		a->kv_use_ts[b] = e->ts_ns;
		a->kv_use_cpu[b] = e->cpu;
		break;
	case CS_KV_RELEASE:
		/* only blocks seen taken up count, as for slab objects */
		if (!a->kv_use_ts[b])
			break;
		s->frees++;
		s->bytes_freed += a->kv_block_bytes;
		s->lifetime_hist[hist_bucket(e->ts_ns > a->kv_use_ts[b] ?
					     e->ts_ns - a->kv_use_ts[b] : 0)]++;
		cohort_add(a, a->kv_use_ts[b], -1, 1);
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
		s->refault_hist[hist_bucket((uint64_t)e->kv.arg)]++;
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

static int add_event(struct wtable *wt, const struct cs_event *e);

/* Apply, in timestamp order, the queued kv records of windows up to w
 * (WINDOW_NONE: all).  Called when window w closes, when every ring was
 * drained past its end: the two-window slack orders them. */
static void kvq_flush(struct wtable *wt, uint64_t w)
{
	size_t i, n = 0;

	if (wt->kvq_busy || !wt->kvq_n)
		return;
	qsort(wt->kvq, wt->kvq_n, sizeof(*wt->kvq), kvq_cmp);
	while (n < wt->kvq_n && (w == WINDOW_NONE || wtable_window_of(wt, wt->kvq[n].e.ts_ns) <= w))
		n++;
	/* applying may close windows, which must not flush again meanwhile:
	 * what they would flush is earlier, so applied already */
	wt->kvq_busy = true;
	for (i = 0; i < n; i++)
		add_event(wt, &wt->kvq[i].e);
	wt->kvq_busy = false;
	memmove(wt->kvq, wt->kvq + n, (wt->kvq_n - n) * sizeof(*wt->kvq));
	wt->kvq_n -= n;
}

static int kvq_push(struct wtable *wt, const struct cs_event *e)
{
	struct kvq_ent *q;
	size_t cap;

	if (wt->kvq_n == KV_QUEUE_MAX) {
		wt->st.kv_queue_full++;
		kvq_flush(wt, WINDOW_NONE);
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

static int add_event(struct wtable *wt, const struct cs_event *e)
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
	while (w > wt->cur + 1)
		close_window(wt);

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
	st->keys = wt->n;
	st->files = wt->nfiles;
}

void wtable_foreach(struct wtable *wt, int (*fn)(struct acc *acc, void *ctx),
		    void *ctx)
{
	size_t i;

	for (i = 0; i < wt->cap; i++)
		if (wt->slots[i] && fn(wt->slots[i], ctx))
			return;
}
