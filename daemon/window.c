// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Per-window, per-key accumulators: an open-addressing table of keys, each
 * with a slot for each of its two open windows (see window.h for why two).
 * Closing a window walks the keys once, derives the row of every key that
 * saw traffic in it, hands the row to the caller and hands the slot back to
 * the table's spares, for a later window of any key.  Keys idle for a minute with no
 * live objects are forgotten, so the table follows the working set.  Keys
 * that still count live objects are merged into their cache's others key
 * (CS_TGID_OTHER) when their process has exited, when a family has been
 * idle for a minute, or, longest idle first, when the table reaches its
 * budget.  A later free of one of their objects makes the key again, one
 * object short, and the next merge evens it out: the sum over keys never
 * loses an object.  (The free cannot go to the others key at once: the
 * rings are drained one CPU after another, so a new key's first free may
 * come before its first alloc.)  So the table stays within its budget
 * whatever the load, and no count is lost.  Keys of device memory and KV
 * pools are the exception: what they held dies with their process, so an
 * exited process's are forgotten, not merged.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"
#include "clock.h"
#include "gpu.h"
#include "htab.h"
#include "kvpool.h"
#include "stats.h"
#include "window.h"

/* a process's key idle this long is checked for the process's exit */
#define GC_EXIT_CHECK_NS (5 * NSEC_PER_SEC)

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
	struct kvpool_queue kvq;
	/* window slots handed back, for the next windows: a key's next
	 * window takes one only when its first event comes, which for most
	 * keys is after this one closed, so the slots in use are about one
	 * per busy key, not two */
	struct wslot **spare;
	size_t nspare, spare_cap;
	size_t busy_max;	/* the most rows of one window since the last sweep */
	/* the keys that took a slot of each open window (by w & 1): closing
	 * a window walks these, not every key, so its work is bounded by
	 * what changed in it; a key with an open slot is never dropped or
	 * merged (acc_open), so the pointers hold until the close */
	struct touched {
		struct acc **acc;
		size_t n, cap;
	} touched[2];
	/* keys held per user (the others keys not counted): fair shares */
	struct wuser {
		uint32_t uid, keys;
	} *users;
	size_t nusers, ucap;
	struct gpu_join join;	/* the host-GPU join of the window closing */
	/* the rows of the window closing, all derived before any is handed
	 * on (cache_rises) */
	struct wrow *rows;
	size_t rows_cap;
	/* the slab keys whose old objects rise, by their last row of the
	 * last CACHE_RISE_QUIET_S (cache_rises), then this window's rows */
	struct rising {
		uint64_t cache;
		uint32_t tgid;
		uint64_t window;
		double per_s, rise_s;
		size_t row;	/* in rows, or SIZE_MAX: none this window */
	} *rising;
	size_t nrising, rising_cap;
	bool rising_lost;	/* no room for one this window */
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

int domain_of(const char *name)
{
	int d;

	for (d = DOM_SLAB; d <= DOM_GPU; d++)
		if (!strcmp(name, domain_name(d)))
			return d;
	return 0;
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

/* The refault history a row of key a adds to: its file's (page keys: per
 * file, whichever processes read it), or its own (kv keys), made at its
 * first refault; NULL while there is none. */
static struct thist *row_thist(struct wtable *wt, struct acc *a, const struct wrow *r)
{
	bool refaulted = r->s->refault_pages > 0;

	if (a->key.domain == DOM_PAGE)
		return history_file(&wt->files, a->key.id, a->key.dev, a->key.gen, refaulted);
	if (!a->th && refaulted)
		a->th = calloc(1, sizeof(*a->th));
	return a->th;
}

/* The history step of key a's row r (history_row), with a's history or,
 * for a page key, which has none, a zeroed one. */
static void row_history(struct wtable *wt, struct acc *a, struct wrow *r)
{
	const struct wtable_rules *ru = &wt->rules;
	struct obj_hist none, *oh = a->oh;

	if (!oh) {
		memset(&none, 0, sizeof(none));
		oh = &none;
	}
	if (!oh->expiry_known) {
		oh->expiry_ns = a->key.domain == DOM_SLAB && ru->expiry_ns ?
				ru->expiry_ns(a->name) : 0;
		oh->expiry_known = true;
	}
	history_row(oh, row_thist(wt, a, r), &(struct history_step){
			.window_ns = wt->window_ns,
			.age_min_ns = ru->age_min_ns,
			.age_lifetimes = ru->age_lifetimes,
			.expiry_ns = oh->expiry_ns,
			.allocs = a->total_allocs,
			.seen_frees = a->total_frees - a->total_unseen_frees,
			.old_frees = a->total_old_frees,
			.unseen_frees = a->total_unseen_frees,
			.first_ns = a->first_ns,
			.drops = wt->drops > 0,
			.last_drop_ns = wt->last_drop_ns,
		    }, r);
}

/* ---- the key table ---- */

static void acc_free(struct acc *a)
{
	if (!a)
		return;
	free(a->slot[0]);
	free(a->slot[1]);
	free(a->oh);
	free(a->th);
	free(a->pool.use_ts);
	free(a->pool.use_cpu);
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

static struct wuser *user_of(struct wtable *wt, uint32_t uid)
{
	size_t i;

	for (i = 0; i < wt->nusers; i++)
		if (wt->users[i].uid == uid)
			return &wt->users[i];
	return NULL;
}

/* A key more (+1) or less (-1) for its user: 0, or -ENOMEM. */
static int user_count(struct wtable *wt, const struct acc *a, int d)
{
	struct wuser *u;

	if (a->key.tgid == CS_TGID_OTHER || a->uid == WTABLE_UID_NONE)
		return 0;
	u = user_of(wt, a->uid);
	if (!u) {
		if (d < 0)
			return 0;
		if (wt->nusers == wt->ucap) {
			size_t cap = wt->ucap ? wt->ucap * 2 : 8;
			struct wuser *n = realloc(wt->users, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			wt->users = n;
			wt->ucap = cap;
		}
		u = &wt->users[wt->nusers++];
		u->uid = a->uid;
		u->keys = 0;
	}
	if (d > 0) {
		u->keys++;
	} else if (!--u->keys) {
		*u = wt->users[--wt->nusers];	/* a user without keys leaves */
	}
	return 0;
}

/* A user's share of the key budget: the budget over the users holding
 * keys, itself counted. */
static size_t user_share(const struct wtable *wt, const struct wuser *u)
{
	return wt->lim.max_keys / (wt->nusers + !u);
}

static struct acc *acc_create(struct wtable *wt, const struct wkey *k, uint32_t uid)
{
	struct acc *a;

	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->key = *k;
	a->uid = uid;
	if (k->domain != DOM_PAGE && !(a->oh = calloc(1, sizeof(*a->oh)))) {
		free(a);
		return NULL;
	}
	acc_name(a);
	if (wt->resolve)
		wt->resolve(a, wt->ctx);
	if (k->tgid == CS_TGID_OTHER)
		snprintf(a->comm, sizeof(a->comm), "(others)");
	if (user_count(wt, a, +1)) {
		free(a->oh);
		free(a);
		return NULL;
	}
	if (htab_insert(&wt->keys, a)) {
		user_count(wt, a, -1);
		free(a->oh);
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
	return a->slot[0] || a->slot[1];
}

/* A slot for window w of key a (a's slot of w, or one spare or new, made
 * empty), NULL when out of memory. */
static struct wslot *slot_take(struct wtable *wt, struct acc *a, uint64_t w)
{
	struct touched *t = &wt->touched[w & 1];
	struct wslot *s = a->slot[w & 1];

	if (s)
		return s;
	if (array_room(&t->acc, &t->cap, t->n, sizeof(*t->acc), 64))
		return NULL;
	s = wt->nspare ? wt->spare[--wt->nspare] : malloc(sizeof(*s));
	if (!s)
		return NULL;
	memset(s, 0, sizeof(*s));
	s->window = w;
	a->slot[w & 1] = s;
	t->acc[t->n++] = a;
	return s;
}

/* Key a's slot of window w closed: kept for a later window (or freed when
 * no more can be kept). */
static void slot_give(struct wtable *wt, struct acc *a, uint64_t w)
{
	struct wslot *s = a->slot[w & 1];

	a->slot[w & 1] = NULL;
	if (array_room(&wt->spare, &wt->spare_cap, wt->nspare, sizeof(*wt->spare), 256)) {
		free(s);
		return;
	}
	wt->spare[wt->nspare++] = s;
}

/* Keep spare slots for the busy keys of one window and a margin: a
 * burst's slots go back to the allocator on the sweep after it. */
static void slots_trim(struct wtable *wt, size_t busy)
{
	size_t keep = busy ? busy + busy / 8 + 64 : 0;

	while (wt->nspare > keep)
		free(wt->spare[--wt->nspare]);
}

/* Add src's live objects, totals and history into dst (its others key). */
static void acc_merge(struct acc *dst, const struct acc *src)
{
	uint32_t i;

	/* summed over processes: saturating (gpu keys' sums are of values
	 * a process chose) */
	dst->live_objs = sat_add_i64(dst->live_objs, src->live_objs);
	dst->live_bytes = sat_add_i64(dst->live_bytes, src->live_bytes);
	dst->total_allocs = sat_add_u64(dst->total_allocs, src->total_allocs);
	dst->total_frees = sat_add_u64(dst->total_frees, src->total_frees);
	dst->total_unseen_frees = sat_add_u64(dst->total_unseen_frees, src->total_unseen_frees);
	dst->total_old_frees = sat_add_u64(dst->total_old_frees, src->total_old_frees);
	dst->total_page_adds = sat_add_u64(dst->total_page_adds, src->total_page_adds);
	dst->total_page_dels = sat_add_u64(dst->total_page_dels, src->total_page_dels);
	dst->total_refaults = sat_add_u64(dst->total_refaults, src->total_refaults);
	if (dst->oh && src->oh) {	/* one domain: both or neither */
		for (i = 0; i < HIST_BUCKETS; i++)
			dst->oh->life_hist[i] += src->oh->life_hist[i];
		history_cohorts_merge(&dst->oh->age, &src->oh->age);
	}
	if (!dst->first_ns || (src->first_ns && src->first_ns < dst->first_ns))
		dst->first_ns = src->first_ns;
}

/* Forget a key: with nothing live (drop), or a key of device memory or
 * of a KV pool whose process has exited, whose live state went with the
 * process (the driver frees a context's memory, the pool was the
 * process's own), so nothing is carried anywhere.  Or merge it into its
 * others key (retire: live objects, totals and history go there, and so
 * will the frees of its objects; returns 0, or -ENOMEM: the key stays). */
static void acc_forget(struct wtable *wt, struct acc *a)
{
	if (wt->lim.key_gone)
		wt->lim.key_gone(&a->key, NULL, wt->ctx);
	kvpool_release(&a->pool, &wt->st.kv_blocks);
	user_count(wt, a, -1);
	htab_remove(&wt->keys, a);
	acc_free(a);
}

static void acc_drop(struct wtable *wt, struct acc *a)
{
	acc_forget(wt, a);
	wt->st.keys_dropped++;
}

static int acc_retire(struct wtable *wt, struct acc *a)
{
	struct wkey ok = others_key(&a->key);
	struct acc *o = acc_find(wt, &ok);

	if (!o && !(o = acc_create(wt, &ok, WTABLE_UID_NONE)))
		return -ENOMEM;
	acc_merge(o, a);
	if (wt->lim.key_gone)
		wt->lim.key_gone(&a->key, &o->key, wt->ctx);
	kvpool_release(&a->pool, &wt->st.kv_blocks);
	user_count(wt, a, -1);
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

/* The key's accumulator, made if new (pid: a process of it, whose owner
 * the key's user is).  Past the budget, the longest idle keys make room;
 * when none can, a user below its share of the budget (the budget over
 * the users holding keys, itself counted) still gets its key, within a
 * quarter more: so one user's busy keys, there first, cannot keep
 * everyone else's out.  Anyone else counts on the others key. */
static struct acc *acc_get(struct wtable *wt, const struct wkey *k, uint32_t pid, bool *others)
{
	struct acc *a = acc_find(wt, k);
	uint32_t uid = WTABLE_UID_NONE;
	struct wuser *u;
	struct wkey ok;

	*others = false;
	if (a)
		return a;
	if (!wt->lim.max_keys || k->tgid == CS_TGID_OTHER)
		return acc_create(wt, k, WTABLE_UID_NONE);
	if (wt->lim.owner)
		uid = wt->lim.owner(pid, wt->ctx);
	if (wt->keys.n < wt->lim.max_keys)
		return acc_create(wt, k, uid);
	make_room(wt);
	if (wt->keys.n < wt->lim.max_keys)
		return acc_create(wt, k, uid);
	if (uid != WTABLE_UID_NONE) {
		u = user_of(wt, uid);
		if (wt->nusers + !u >= 2 && (!u || u->keys < user_share(wt, u))) {
			if (wt->keys.n < wt->lim.max_keys + wt->lim.max_keys / 4)
				return acc_create(wt, k, uid);
		} else if (wt->nusers >= 2) {
			wt->st.share_events++;
		}
	}
	ok = others_key(k);
	*others = true;
	a = acc_find(wt, &ok);
	return a ? a : acc_create(wt, &ok, WTABLE_UID_NONE);
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
	kvpool_queue_release(&wt->kvq);
	slots_trim(wt, 0);
	free(wt->spare);
	free(wt->touched[0].acc);
	free(wt->touched[1].acc);
	free(wt->users);
	gpu_join_release(&wt->join);
	free(wt->rows);
	free(wt->rising);
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

	wrow_of_key(r, a);
	r->s = s;
	r->live_objs = a->live_objs;
	r->live_bytes = a->live_bytes;
	if (next) {	/* the next window's events, already in the totals */
		r->live_objs = sat_add_i64(sat_sub_i64(r->live_objs, (int64_t)next->allocs),
					   (int64_t)next->frees);
		r->live_bytes = sat_add_i64(sat_sub_i64(r->live_bytes, (int64_t)next->bytes_alloc),
					    (int64_t)next->bytes_freed);
	}
	r->lifetime_p50_ns = stats_log2_percentile(s->lifetime_hist, 0.5);
	r->refault_dist_p50 = stats_log2_percentile(s->refault_hist, 0.5);
	r->top_site_share = sites ? (double)topk_max(&s->sites) / sites : 0;
	r->top_site = topk_argmax(&s->sites);
	r->same_size_share = sizes ? (double)topk_max(&s->sizes) / sizes : 0;
	r->size_entropy = topk_entropy(&s->sizes);
}

/* The rows' array down to what the busiest window since the last sweep
 * took, and the rising keys' to what they hold, where either holds more
 * than twice that. */
static void rows_trim(struct wtable *wt, size_t keep)
{
	void *p;

	if (wt->rising_cap > 2 * wt->nrising + 64) {
		p = realloc(wt->rising, (wt->nrising + 64) * sizeof(*wt->rising));
		if (p) {
			wt->rising = p;
			wt->rising_cap = wt->nrising + 64;
		}
	}
	if (wt->rows_cap <= 2 * keep + 64)
		return;
	if (!keep) {
		free(wt->rows);
		wt->rows = NULL;
		wt->rows_cap = 0;
		return;
	}
	p = realloc(wt->rows, keep * sizeof(*wt->rows));
	if (p) {
		wt->rows = p;
		wt->rows_cap = keep;
	}
}

static bool process_gone(struct wtable *wt, const struct acc *a)
{
	uint32_t t = a->key.tgid;

	if (!wt->lim.alive || !t || t == CS_TGID_OTHER || tgid_is_family(t))
		return false;
	return !wt->lim.alive(t, wt->ctx);
}

/* Forget idle keys with nothing live; merge into others the keys of
 * exited processes and of families idle for a minute; free the spare
 * window slots beyond what the busiest window since the last sweep took. */
static void table_gc(struct wtable *wt)
{
	uint64_t idle = WTABLE_GC_IDLE_NS / wt->window_ns;
	uint64_t exit_idle = GC_EXIT_CHECK_NS / wt->window_ns;
	struct acc **gone, **old, *a;
	size_t i, ngone = 0, nold = 0;

	gone = malloc(wt->keys.n * sizeof(*gone));
	old = malloc(wt->keys.n * sizeof(*old));
	for (i = htab_next(&wt->keys, 0); i < wt->keys.cap; i = htab_next(&wt->keys, i + 1)) {
		a = wt->keys.slot[i];
		if (acc_open(a))
			continue;
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
	for (i = 0; i < ngone; i++) {
		if (gone[i]->key.domain == DOM_GPU || gone[i]->key.domain == DOM_KV) {
			acc_forget(wt, gone[i]);
			wt->st.keys_exited++;
		} else if (!acc_retire(wt, gone[i])) {
			wt->st.keys_exited++;
		}
	}
	free(gone);
	free(old);
	slots_trim(wt, wt->busy_max);
	rows_trim(wt, wt->busy_max);
	wt->busy_max = 0;
	history_files_gc(&wt->files, wt->cur);
}

/* A key's rise of old objects counts in the sum of its cache's rises
 * for this long after its last rising row (whose last step is at most as
 * old): the kernel's count it is weighed against spans the judged key's
 * rise, seconds, and a rise that just ended (nginx's workers at their
 * exit) or that a slice missed (sampled in time, a key has rows only in
 * windows whose slices caught its events) still went into it.  The
 * longest quiet the leak rule allows at 1/8 of the time is 3.5 s
 * (classify.c, sampled_quiet_s). */
#define CACHE_RISE_QUIET_S 4.0

/* A rise shorter than this goes into its cache's sum's error (the
 * variance of a count by periods, cache_rise_var) only from this long:
 * over fewer periods the error is most of the rise, and a rise that
 * just started (a false one, of frees missed, as well as a leak's)
 * would make the count's test lenient for every key of the cache.  The
 * leak rule's own shortest rise (leak_min_rise_s). */
#define CACHE_RISE_VAR_MIN_S 1.5

/* Note row i of the window closing, of key a, for cache_rises: a slab
 * key whose old objects rise. */
static void rise_note(struct wtable *wt, const struct acc *a, const struct wrow *r, size_t i)
{
	if (a->key.domain != DOM_SLAB || r->old_rise <= 0 || r->old_rise_s <= 0 ||
	    r->old_quiet_s > CACHE_RISE_QUIET_S)
		return;
	if (array_room(&wt->rising, &wt->rising_cap, wt->nrising, sizeof(*wt->rising), 64)) {
		wt->rising_lost = true;
		return;
	}
	wt->rising[wt->nrising++] = (struct rising){
		.cache = a->key.id, .tgid = a->key.tgid, .window = r->window,
		.per_s = (double)r->old_rise / r->old_rise_s, .rise_s = r->old_rise_s, .row = i,
	};
}

/* by cache and key, the newest first */
static int rising_order(const void *x, const void *y)
{
	const struct rising *p = x, *q = y;

	if (p->cache != q->cache)
		return p->cache < q->cache ? -1 : 1;
	if (p->tgid != q->tgid)
		return p->tgid < q->tgid ? -1 : 1;
	return p->window > q->window ? -1 : p->window < q->window;
}

/* Every rising slab row's cache_rise_per_s among rows: the rises of the
 * keys of its cache with a rising row in the last CACHE_RISE_QUIET_S,
 * itself included, each by its last one (rise_note).  The kernel counts
 * a cache, not a key: its count confirms one key's rise only where it
 * pays for all of them (nginx's two workers' filp, +361 and +421/s,
 * against the count's +822/s; not wrk's filp, +1259/s by frees it
 * missed, beside nginx's +1774/s against +1774/s).  Keeps the list for
 * the next window; a lost note (no room) leaves every sum 0, unknown,
 * and starts the list again. */
static void cache_rises(struct wtable *wt, struct wrow *rows, uint64_t w)
{
	uint64_t keep = (uint64_t)(CACHE_RISE_QUIET_S * 1e9) / wt->window_ns + 1;
	size_t i, j, k, m = 0;

	if (wt->rising_lost) {
		wt->rising_lost = false;
		wt->nrising = 0;
		return;
	}
	if (wt->nrising > 1)
		qsort(wt->rising, wt->nrising, sizeof(*wt->rising), rising_order);
	/* each key's newest note, where it is recent */
	for (i = 0; i < wt->nrising; i++) {
		struct rising *e = &wt->rising[i];

		if (i && e->cache == wt->rising[i - 1].cache && e->tgid == wt->rising[i - 1].tgid)
			continue;
		if (e->window + keep < w)
			continue;
		wt->rising[m++] = *e;
	}
	wt->nrising = m;
	for (i = 0; i < m; i = j) {
		double sum = 0, var = 0;

		for (j = i; j < m && wt->rising[j].cache == wt->rising[i].cache; j++) {
			sum += wt->rising[j].per_s;
			if (wt->rising[j].rise_s >= CACHE_RISE_VAR_MIN_S)
				var += wt->rising[j].per_s * wt->rising[j].per_s /
				       wt->rising[j].rise_s;
		}
		for (k = i; k < j; k++) {
			if (wt->rising[k].row == SIZE_MAX)
				continue;
			rows[wt->rising[k].row].cache_rise_per_s = sum;
			rows[wt->rising[k].row].cache_rise_var = var;
			rows[wt->rising[k].row].cache_rising_keys = (uint32_t)(j - i);
			wt->rising[k].row = SIZE_MAX;
		}
	}
}

/* Close the oldest open window: derive the row of every key that saw
 * traffic in it, then hand them on.  The only place a window closes; its
 * kv records were applied before (close_next, kvq_apply). */
static void close_one(struct wtable *wt)
{
	struct gpu_join *g = &wt->join;
	uint64_t w = wt->cur;
	size_t i, rows = 0;
	struct touched *t = &wt->touched[w & 1];
	struct wslot *s;
	struct wrow one, *r;
	bool all;

	gpu_join_reset(g);
	for (i = 0; i < t->n; i++)
		gpu_join_key(g, t->acc[i], w);
	gpu_join_done(g);
	wt->st.gpu_unjoined = g->unjoined;
	/* every row first (no room: each handed on as it is made, without
	 * its cache's sum) */
	all = !t->n || !array_room(&wt->rows, &wt->rows_cap, t->n - 1, sizeof(*wt->rows), 64);
	if (!all)
		wt->rising_lost = true;
	for (i = 0; i < t->n; i++) {
		struct acc *a = t->acc[i];

		s = a->slot[w & 1];
		if (!s)
			continue;
		r = all ? &wt->rows[rows] : &one;
		memset(r, 0, sizeof(*r));
		r->window = w;
		r->start_ns = wt->t0_ns + w * wt->window_ns;
		row_derive(r, a, s, a->slot[(w + 1) & 1]);
		if (r->top_site)
			a->last_top_site = r->top_site;
		r->key_top_site = a->last_top_site;
		row_history(wt, a, r);
		gpu_join_row(g, r);
		if (all)
			rise_note(wt, a, r, rows);
		else if (wt->row_fn)
			wt->row_fn(r, wt->ctx);
		rows++;
	}
	cache_rises(wt, wt->rows, w);
	for (i = 0; all && wt->row_fn && i < rows; i++)
		wt->row_fn(&wt->rows[i], wt->ctx);
	wt->st.rows += rows;
	for (i = 0; i < t->n; i++) {
		struct acc *a = t->acc[i];

		if (!a->slot[w & 1])
			continue;
		slot_give(wt, a, w);
		a->last_window = w;
	}
	t->n = 0;
	if (rows > wt->busy_max)
		wt->busy_max = rows;
	wt->st.windows++;
	wt->cur = w + 1;
	if (wt->cur % WTABLE_GC_EVERY_WINDOWS == 0)
		table_gc(wt);
}

/* ---- events ---- */

/* A slab record's object stands for 2^shift objects (address sampling,
 * CS_TRACK_SLOTS): every count it makes is weighted, alloc and free alike,
 * so counts, live objects, ages and shares stay unbiased estimates, and
 * exact where the shift is 0. */
static void add_slab(struct acc *a, struct wslot *s, const struct cs_event *e, uint64_t old_ns)
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
		history_cohort_add(&a->oh->age, e->ts_ns, 1, w);
		return;
	}
	s->frees += w;
	s->bytes_freed += (uint64_t)w * e->slab.bytes_alloc;
	a->live_objs -= w;
	a->live_bytes -= (int64_t)w * e->slab.bytes_alloc;
	a->total_frees += w;
	history_cohort_add(&a->oh->age, e->ts_ns - (e->slab.lifetime_ns < e->ts_ns ? e->slab.lifetime_ns : 0),
		   -1, w);
	if (old_ns && e->slab.lifetime_ns >= old_ns && !(e->flags & CS_F_UNSEEN))
		a->total_old_frees += w;
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

/* ---- user-space probe records: bounds (usdt.c), kv records in order ---- */

static bool reject(struct wtable *wt, const struct cs_event *e, unsigned int reason)
{
	wt->st.rejected++;
	wt->st.rejected_by[reason]++;
	wt->st.rejected_tgid = e->tgid;
	return true;
}

bool wtable_reject(struct wtable *wt, const struct cs_event *e)
{
	unsigned int why;

	if ((e->flags & CS_F_FOREIGN) && (e->type == CS_EV_KV || e->type == CS_EV_GPU) &&
	    !(wt->lim.believed && wt->lim.believed(e->tgid, e->ts_ns, wt->ctx)))
		return reject(wt, e, REJ_UNTRUSTED);
	why = usdt_check(e);
	return why != REJ_NONE && reject(wt, e, why);
}

/* Account one event in its window, which is open: at most one past the
 * oldest open one (advance).  Never closes a window. */
static int apply_event(struct wtable *wt, const struct cs_event *e)
{
	uint64_t w = wtable_window_of(wt, e->ts_ns);
	struct wkey k = { 0 };
	struct wslot *s;
	unsigned int why;
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
	a = acc_get(wt, &k, tgid_is_family(e->tgid) ? e->pid : e->tgid, &others);
	if (!a)
		return -ENOMEM;
	if (others)
		wt->st.others_events++;
	if (k.domain == DOM_KV && e->kv.op != CS_KV_POOL && e->kv.block >= a->pool.nblocks) {
		reject(wt, e, REJ_KV_BLOCK);	/* before it opens a window */
		return 0;
	}
	s = slot_take(wt, a, w);
	if (!s)
		return -ENOMEM;
	if (!a->first_ns)
		a->first_ns = e->ts_ns;
	if (k.domain == DOM_SLAB)
		add_slab(a, s, e, wt->rules.age_min_ns);
	else if (k.domain == DOM_PAGE)
		add_page(a, s, e);
	else if (k.domain == DOM_GPU)
		wt->st.gpu_release_unmatched += gpu_add(a, s, e);
	else if ((why = kvpool_add(a, s, e, &wt->st.kv_blocks)) != REJ_NONE)
		reject(wt, e, why);
	return 0;
}

/* Apply, in timestamp order, the queued kv records of windows up to w
 * (WINDOW_NONE: all).  Called before window w closes, when every ring was
 * drained past its end: the two-window slack orders them.  With all, a
 * record of a window two past the oldest open one first closes the
 * windows before it, as an event of any other kind would (advance). */
static void kvq_apply(struct wtable *wt, uint64_t w)
{
	struct kvpool_queue *q = &wt->kvq;
	size_t i, n = 0;

	if (!q->n)
		return;
	kvpool_queue_sort(q);
	while (n < q->n && (w == WINDOW_NONE || wtable_window_of(wt, q->ent[n].e.ts_ns) <= w))
		n++;
	for (i = 0; i < n; i++) {
		while (wtable_window_of(wt, q->ent[i].e.ts_ns) > wt->cur + 1)
			close_one(wt);
		apply_event(wt, &q->ent[i].e);
	}
	kvpool_queue_drop(q, n);
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

/* The CUPTI library stamps its records on CLOCK_MONOTONIC, the daemon's
 * clock (cupti_sub.c's sub_timestamp), and hands them over when CUPTI
 * delivers their buffer, up to a flush period or more after the work ran.
 * A start before the record came, and not longer ago than this, is the
 * daemon's time; anything else (CUPTI's own clock, where the callback was
 * refused, or a forged value) leaves the record at its arrival. */
#define GPU_MAX_DELAY_NS (60 * NSEC_PER_SEC)

/* The share of v that part of whole is (part <= whole, whole > 0). */
static uint64_t gpu_share(uint64_t v, uint64_t part, uint64_t whole)
{
	return (uint64_t)((unsigned __int128)v * part / whole);
}

/*
 * A gpu record in the windows its work ran in: counted in the window it
 * began in, its busy time and bytes split over the windows its run
 * [start, end) covers, in proportion (the last piece takes the remainder,
 * so the sums are exact).  The run is cut at the record's arrival (work
 * cannot end after it was reported: its busy time is cut in proportion),
 * and the part of it in windows closed by then is one piece, folded into
 * the oldest open window.
 */
static int add_gpu(struct wtable *wt, const struct cs_event *e)
{
	uint64_t start = e->gpu.start, end = e->gpu.end, span, at, cut, w;
	uint64_t busy, busy_left, bytes_left;
	struct cs_event g;
	int err;

	if (!start || start > e->ts_ns || e->ts_ns - start > GPU_MAX_DELAY_NS)
		return add_event(wt, e);
	wt->st.gpu_run_timed++;
	if (wtable_window_of(wt, start) < wt->cur)
		wt->st.gpu_late++;
	g = *e;
	g.ts_ns = start;
	busy = e->gpu.busy_ns;
	if (end > e->ts_ns) {
		busy = gpu_share(busy, e->ts_ns - start, end - start);
		end = e->ts_ns;
	}
	g.gpu.busy_ns = busy;
	if (end <= start || e->gpu.op == CS_GPU_ALLOC || e->gpu.op == CS_GPU_RELEASE ||
	    e->gpu.op == CS_GPU_SWAP_OUT || e->gpu.op == CS_GPU_SWAP_IN ||
	    wtable_window_of(wt, end - 1) == wtable_window_of(wt, start))
		return add_event(wt, &g);
	wt->st.gpu_split++;
	span = end - start;
	busy_left = busy;
	bytes_left = e->gpu.bytes;
	for (at = start; at < end; at = cut) {
		w = wtable_window_of(wt, at);
		if (w < wt->cur)
			w = wt->cur;	/* closed: up to the oldest open one */
		cut = wt->t0_ns + (w + 1) * wt->window_ns;
		if (cut > end)
			cut = end;
		g.ts_ns = at;
		g.gpu.busy_ns = cut == end ? busy_left : gpu_share(busy, cut - at, span);
		g.gpu.bytes = cut == end ? bytes_left : gpu_share(e->gpu.bytes, cut - at, span);
		busy_left -= g.gpu.busy_ns;
		bytes_left -= g.gpu.bytes;
		err = add_event(wt, &g);
		if (err)
			return err;
		g.gpu.count = 0;	/* counted where it began */
		wt->st.events -= at != start;	/* one record, however many pieces */
	}
	return 0;
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

		if (a->slot[0] && a->slot[0]->window > last)
			last = a->slot[0]->window;
		if (a->slot[1] && a->slot[1]->window > last)
			last = a->slot[1]->window;
	}
	while (wt->cur <= last)
		close_next(wt);
}

static int kv_queue(struct wtable *wt, const struct cs_event *e)
{
	if (wt->kvq.n == KV_QUEUE_MAX) {
		wt->st.kv_queue_full++;
		kvq_apply(wt, WINDOW_NONE);
	}
	return kvpool_queue_push(&wt->kvq, e);
}

int wtable_add(struct wtable *wt, const struct cs_event *e)
{
	return wtable_reject(wt, e) ? 0 : wtable_apply(wt, e);
}

int wtable_apply(struct wtable *wt, const struct cs_event *e)
{
	struct cs_event f, a;
	uint64_t late;
	int err;

	if (e->type == CS_EV_KV)
		return kv_queue(wt, e);
	if (e->type == CS_EV_GPU)
		return add_gpu(wt, e);
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
