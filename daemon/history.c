// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A key's history that the rules read: see history.h.  The same code
 * serves the rows made from records (window.c) and the rows read back from
 * CSV (tools/offline.c).
 */
#include <stdlib.h>
#include <string.h>
#include "history.h"
#include "stats.h"
#include "window.h"

static void cohort_advance(struct age_cohorts *a, uint64_t c)
{
	if (c <= a->head)
		return;
	if (c - a->head >= AGE_COHORTS) {
		uint32_t i;

		for (i = 0; i < AGE_COHORTS; i++) {
			a->older += a->cohort[i];
			a->tolder += a->tracked[i];
			a->cohort[i] = a->tracked[i] = 0;
		}
		a->head = c;
		return;
	}
	while (a->head < c) {
		uint32_t i = ++a->head % AGE_COHORTS;

		a->older += a->cohort[i];	/* falls off the ring */
		a->tolder += a->tracked[i];
		a->cohort[i] = a->tracked[i] = 0;
	}
}

static void cohort_add(struct age_cohorts *a, uint64_t ts_ns, int sign, uint32_t w, uint32_t t)
{
	uint64_t c = ts_ns / AGE_COHORT_NS;

	cohort_advance(a, c);
	if (c + AGE_COHORTS <= a->head) {
		a->older += sign * (int64_t)w;
		a->tolder += sign * (int64_t)t;
	} else {
		a->cohort[c % AGE_COHORTS] += sign * (int32_t)w;
		a->tracked[c % AGE_COHORTS] += sign * (int32_t)t;
	}
}

void history_cohort_add(struct age_cohorts *a, uint64_t ts_ns, int sign, uint32_t w)
{
	cohort_add(a, ts_ns, sign, w, 1);
}

void history_cohort_add_n(struct age_cohorts *a, uint64_t ts_ns, int sign, uint32_t n)
{
	cohort_add(a, ts_ns, sign, n, n);
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

int64_t history_old_objs(const struct age_cohorts *a, uint64_t cutoff_ns)
{
	return old_in(a->cohort, a->older, a->head, cutoff_ns);
}

int64_t history_old_tracked(const struct age_cohorts *a, uint64_t cutoff_ns)
{
	return old_in(a->tracked, a->tolder, a->head, cutoff_ns);
}

/* The same absolute numbering once both rings are advanced. */
void history_cohorts_merge(struct age_cohorts *dst, const struct age_cohorts *src)
{
	uint32_t i;

	if (src->head > dst->head)
		cohort_advance(dst, src->head);
	dst->older += src->older;
	dst->tolder += src->tolder;
	for (i = 0; i < AGE_COHORTS; i++) {
		uint64_t c = src->head >= i ? src->head - i : 0;
		uint32_t k = c % AGE_COHORTS;

		if (src->head < i || (!src->cohort[k] && !src->tracked[k]))
			continue;
		if (c + AGE_COHORTS <= dst->head) {
			dst->older += src->cohort[k];
			dst->tolder += src->tracked[k];
		} else {
			dst->cohort[k] += src->cohort[k];
			dst->tracked[k] += src->tracked[k];
		}
	}
}

void history_cohorts_clear(struct age_cohorts *a)
{
	uint64_t head = a->head;

	memset(a, 0, sizeof(*a));
	a->head = head;
}

void history_rise(struct rise_hist *h, struct wrow *r, uint64_t end, int64_t tracked,
		  const struct history_step *st)
{
	uint64_t allocs = st->allocs, seen_frees = st->seen_frees, first_ns = st->first_ns;
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
		h->start_old_frees = st->old_frees;
		h->start_unseen = st->unseen_frees;
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
	r->old_rise_old_frees = st->old_frees - h->start_old_frees;
	r->old_rise_unseen = st->unseen_frees - h->start_unseen;
	if (h->steps) {
		r->old_rise_s = (double)(h->last_step_ns - h->first_step_ns) / 1e9;
		r->old_quiet_s = (double)(end - h->last_step_ns) / 1e9;
		r->old_warmup_s = h->first_step_ns > first_ns + age ?
			(double)(h->first_step_ns - age - first_ns) / 1e9 : 0;
	}
}

/* Locality over the key's last LOCALITY_SAMPLES windows: a handoff between
 * CPUs that lasts, not a scheduler's moment or a burst. */
void history_locality(struct loc_hist *h, struct wrow *r)
{
	uint64_t same = 0, all = 0, own = 0;
	uint32_t i, n;

	if (r->s->same_cpu_frees + r->s->remote_frees) {
		i = h->head++ % LOCALITY_SAMPLES;
		h->win[i] = (uint32_t)r->window;
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
		if ((uint32_t)r->window - h->win[i] >= LOCALITY_SAMPLES)
			continue;	/* older than the last second */
		same += h->same[i];
		all += h->same[i] + h->remote[i];
		own += h->own[i];
		r->recent_windows++;
	}
	r->recent_locality = all ? (double)same / all : 1.0;
	r->recent_own_share = all > same ? (double)own / (all - same) : 0.0;
}

/* ---- refault histories per file ---- */

struct file_id {
	uint64_t ino;
	uint32_t dev, gen;
};

struct fhist {
	struct file_id id;	/* first: an entry is looked up by its id */
	struct thist th;
};

static uint64_t file_hash(const struct file_id *id)
{
	uint64_t h = id->ino * 0x9e3779b97f4a7c15ull ^ ((uint64_t)id->dev << 32 | id->gen);

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

static uint64_t fhist_hash(const void *entry, void *ctx)
{
	(void)ctx;
	return file_hash(&((const struct fhist *)entry)->id);
}

static bool fhist_is(const void *entry, const void *key, void *ctx)
{
	const struct file_id *f = &((const struct fhist *)entry)->id, *k = key;

	(void)ctx;
	return f->ino == k->ino && f->dev == k->dev && f->gen == k->gen;
}

void history_files_init(struct history_files *f)
{
	htab_init(&f->tab, 64, 7, 10, fhist_hash, fhist_is, NULL);
}

void history_files_release(struct history_files *f)
{
	size_t i;

	for (i = htab_next(&f->tab, 0); i < f->tab.cap; i = htab_next(&f->tab, i + 1))
		free(f->tab.slot[i]);
	htab_release(&f->tab);
}

struct thist *history_file(struct history_files *f, uint64_t ino, uint32_t dev, uint32_t gen,
			   bool create)
{
	struct file_id id = { .ino = ino, .dev = dev, .gen = gen };
	struct fhist *h = htab_find(&f->tab, file_hash(&id), &id);

	if (h || !create)
		return h ? &h->th : NULL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->id = id;
	if (htab_insert(&f->tab, h)) {
		free(h);
		return NULL;
	}
	return &h->th;
}

static bool fhist_recent(void *entry, void *arg)
{
	struct fhist *f = entry;
	uint64_t cur = *(const uint64_t *)arg;

	if (f->th.head && f->th.win[(f->th.head - 1) % THRASH_SAMPLES] + THRASH_SAMPLES > cur)
		return true;
	free(f);
	return false;
}

void history_files_gc(struct history_files *f, uint64_t cur)
{
	htab_filter(&f->tab, fhist_recent, &cur);
}

/* Refaults of the recent windows: persistence tells thrash from one pass. */
void history_refaults(struct thist *th, uint64_t window_ns, struct wrow *r)
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

/* Record the key's live count at the end of window w and derive the
 * growth evidence of the row. */
void history_growth(struct grow_hist *h, uint64_t window_ns, struct wrow *r)
{
	double x[GROWTH_SAMPLES], y[GROWTH_SAMPLES];
	uint32_t i, k;

	if (r->s->allocs > r->s->frees)
		h->grew_windows++;
	else if (r->s->allocs < r->s->frees)
		h->grew_windows = 0;
	h->win[h->head] = (uint32_t)r->window;
	h->live[h->head] = r->live_objs;
	h->head = (h->head + 1) % GROWTH_SAMPLES;
	if (h->n < GROWTH_SAMPLES)
		h->n++;
	for (i = 0; i < h->n; i++) {
		k = (h->head + GROWTH_SAMPLES - h->n + i) % GROWTH_SAMPLES;
		/* the sample's window, whole again from the row's (they are
		 * far less than 2^32 windows apart), in seconds since window 0:
		 * the slope is the same on any origin of time but its last
		 * bits are not, and this origin keeps the rows' figures */
		x[i] = (double)((r->window - ((uint32_t)r->window - h->win[k])) * window_ns) / 1e9;
		y[i] = (double)h->live[k];
	}
	r->growth_per_s = stats_slope(x, y, h->n);
	r->grew_windows = h->grew_windows;
}

/* The age test at the end of the row's window; its threshold (age_ns). */
static uint64_t history_age(struct obj_hist *oh, const struct history_step *st, struct wrow *r,
			    int64_t *tracked)
{
	uint64_t end = r->start_ns + st->window_ns, p50, age;
	uint32_t b;

	for (b = 0; b < HIST_BUCKETS; b++)
		oh->life_hist[b] += r->s->lifetime_hist[b];
	if (++oh->life_windows % 100 == 0)
		for (b = 0; b < HIST_BUCKETS; b++)
			oh->life_hist[b] /= 2;
	p50 = stats_log2_percentile(oh->life_hist, 0.5);
	r->key_lifetime_p50_ns = p50;
	if (st->aged) {
		*tracked = 0;	/* not known: the estimate over the sample */
		return r->age_ns;
	}
	age = st->age_min_ns > st->expiry_ns ? st->age_min_ns : st->expiry_ns;
	if (st->age_lifetimes * (double)p50 > (double)age)
		age = (uint64_t)(st->age_lifetimes * (double)p50);
	r->age_ns = age;
	r->old_objs = end > age ? history_old_objs(&oh->age, end - age) : 0;
	*tracked = end > age ? history_old_tracked(&oh->age, end - age) : 0;
	return age;
}

void history_row(struct obj_hist *oh, struct thist *th, const struct history_step *st,
		 struct wrow *r)
{
	uint64_t end = r->start_ns + st->window_ns, age;
	int64_t tracked;

	history_growth(&oh->grow, st->window_ns, r);
	age = history_age(oh, st, r, &tracked);
	history_rise(&oh->rise, r, end, tracked, st);
	/* a free lost to a full ring leaves its object live for good: any
	 * drop since the rise's objects were allocated may have made it */
	r->old_rise_dropped = st->drops && st->last_drop_ns + age >= oh->rise.start_ns;
	history_locality(&oh->loc, r);
	history_refaults(th, st->window_ns, r);
}
