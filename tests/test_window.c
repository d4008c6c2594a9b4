// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the per-window accumulators (daemon/window.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include <cmocka.h>
#include "../daemon/stats.h"
#include "../daemon/window.h"

#define MS 1000000ull
#define T0 (1000 * MS)
#define WIN (100 * MS)
#define FILP 0xffff888003a1b200ull

struct rows {
	struct wrow r[64];
	struct acc a[64];
	struct wslot s[64];
	int n;
};

static void keep_row(const struct wrow *r, void *ctx)
{
	struct rows *rows = ctx;

	assert_true(rows->n < 64);
	rows->a[rows->n] = *r->acc;
	rows->s[rows->n] = *r->s;
	rows->r[rows->n] = *r;
	wrow_of_key(&rows->r[rows->n], &rows->a[rows->n]);
	rows->r[rows->n].s = &rows->s[rows->n];
	rows->n++;
}

static void name_filp(struct acc *a, void *ctx)
{
	(void)ctx;
	if (a->key.id == FILP)
		strcpy(a->name, "filp");
}

static struct cs_event alloc_ev(uint64_t ts, uint64_t ptr, uint32_t cpu,
				uint32_t size, uint64_t site)
{
	struct cs_event e = { 0 };

	e.ts_ns = ts;
	e.tgid = 42;
	e.pid = 42;
	e.cpu = cpu;
	e.type = CS_EV_SLAB_ALLOC;
	e.slab.cache = FILP;
	e.slab.ptr = ptr;
	e.slab.call_site = site;
	e.slab.bytes_req = size;
	e.slab.bytes_alloc = 256;
	e.slab.alloc_cpu = cpu;
	e.slab.req_node = -1;
	return e;
}

static struct cs_event free_ev(uint64_t ts, uint64_t ptr, uint32_t cpu,
			       uint32_t alloc_cpu, uint64_t lifetime)
{
	struct cs_event e = { 0 };

	e.ts_ns = ts;
	e.tgid = 42;
	e.cpu = cpu;
	e.type = CS_EV_SLAB_FREE;
	e.slab.cache = FILP;
	e.slab.ptr = ptr;
	e.slab.bytes_alloc = 256;
	e.slab.lifetime_ns = lifetime;
	e.slab.alloc_cpu = alloc_cpu;
	e.slab.req_node = -1;
	return e;
}

static void wtable_add__allocs_and_frees__row_counts_them(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, name_filp, &rows);
	struct cs_event e;
	int i;

	(void)state;
	for (i = 0; i < 10; i++) {
		e = alloc_ev(T0 + 1 * MS + i, 0x1000 + i * 256, 0, 200, 0xaa);
		assert_int_equal(wtable_add(wt, &e), 0);
	}
	/* 6 frees: 4 on the allocating CPU, 2 remote, lifetimes ~1000 ns */
	for (i = 0; i < 6; i++) {
		e = free_ev(T0 + 2 * MS + i, 0x1000 + i * 256, i < 4 ? 0 : 1, 0, 1000);
		assert_int_equal(wtable_add(wt, &e), 0);
	}
	wtable_close_until(wt, T0 + WIN);
	assert_int_equal(rows.n, 1);
	assert_string_equal(rows.r[0].acc->name, "filp");
	assert_int_equal(rows.r[0].window, 0);
	assert_int_equal(rows.r[0].s->allocs, 10);
	assert_int_equal(rows.r[0].s->frees, 6);
	assert_int_equal(rows.r[0].live_objs, 4);
	assert_int_equal(rows.r[0].live_bytes, 4 * 256);
	assert_int_equal(rows.r[0].s->same_cpu_frees, 4);
	assert_int_equal(rows.r[0].s->remote_frees, 2);
	/* 1000 lies in the bucket [512, 1024) */
	assert_in_range(rows.r[0].lifetime_p50_ns, 512, 1023);
	assert_true(rows.r[0].top_site_share == 1.0);
	assert_true(rows.r[0].same_size_share == 1.0);
	assert_true(rows.r[0].size_entropy == 0.0);
	wtable_free(wt);
}

/* A sampled record stands for 2^shift objects: every count it makes is
 * weighted, allocs and frees, bytes, live objects, CPUs, lifetimes, sizes
 * and sites; the row says its largest shift. */
static void wtable_add__sampled_records__counts_weighted(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, name_filp, &rows);
	struct cs_event e;
	int i;

	(void)state;
	for (i = 0; i < 3; i++) {
		e = alloc_ev(T0 + 1 * MS + i, 0x1000 + i * 256, 0, 200, 0xaa);
		e.slab.shift = 4;
		assert_int_equal(wtable_add(wt, &e), 0);
	}
	e = alloc_ev(T0 + 1 * MS + 5, 0x9000, 0, 100, 0xbb);	/* tracked at 1 in 1 */
	assert_int_equal(wtable_add(wt, &e), 0);
	e = free_ev(T0 + 2 * MS, 0x1000, 1, 0, 1000);
	e.slab.shift = 4;
	assert_int_equal(wtable_add(wt, &e), 0);
	wtable_close_until(wt, T0 + WIN);
	assert_int_equal(rows.n, 1);
	assert_int_equal(rows.r[0].s->allocs, 3 * 16 + 1);
	assert_int_equal(rows.r[0].s->frees, 16);
	assert_int_equal(rows.r[0].s->bytes_req, 3 * 16 * 200 + 100);
	assert_int_equal(rows.r[0].live_objs, 2 * 16 + 1);
	assert_int_equal(rows.r[0].live_bytes, (2 * 16 + 1) * 256);
	assert_int_equal(rows.r[0].s->remote_frees, 16);
	assert_int_equal(rows.r[0].s->max_shift, 4);
	/* 48 of 49 allocs are of size 200, from site 0xaa */
	assert_true(rows.r[0].same_size_share > 0.97 && rows.r[0].same_size_share < 0.98);
	assert_true(rows.r[0].top_site_share > 0.97 && rows.r[0].top_site_share < 0.98);
	wtable_free(wt);
}

/* An alloc over a live address reports the unseen free of the object it
 * replaced with that object's weight, its own with its own. */
static void wtable_add__unseen_free_of_sampled_object__old_weight(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, name_filp, &rows);
	struct cs_event e;

	(void)state;
	e = alloc_ev(T0 + 1 * MS, 0x1000, 0, 200, 0xaa);
	e.slab.shift = 3;
	assert_int_equal(wtable_add(wt, &e), 0);
	e = alloc_ev(T0 + 2 * MS, 0x1000, 0, 200, 0xaa);
	e.flags = CS_F_UNSEEN;
	e.slab.shift = 1;
	e.slab.old_shift = 3;
	e.slab.old_cache = FILP;
	e.slab.old_tgid = 42;
	e.slab.old_bytes = 256;
	e.slab.lifetime_ns = 1 * MS;
	assert_int_equal(wtable_add(wt, &e), 0);
	wtable_close_until(wt, T0 + WIN);
	assert_int_equal(rows.n, 1);
	assert_int_equal(rows.r[0].s->allocs, 8 + 2);
	assert_int_equal(rows.r[0].s->frees, 8);
	assert_int_equal(rows.r[0].s->unseen_frees, 8);
	assert_int_equal(rows.r[0].live_objs, 2);
	wtable_free(wt);
}

static void wtable_close_until__next_window_events__not_in_live_of_closed(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, NULL, &rows);
	struct cs_event e;

	(void)state;
	e = alloc_ev(T0 + 10 * MS, 0x1000, 0, 64, 1);
	wtable_add(wt, &e);
	/* ring 0 already holds window 1 while window 0 is still open */
	e = alloc_ev(T0 + WIN + 5 * MS, 0x2000, 0, 64, 1);
	wtable_add(wt, &e);
	e = alloc_ev(T0 + WIN + 6 * MS, 0x3000, 0, 64, 1);
	wtable_add(wt, &e);
	/* ring 1 still had one event of window 0 */
	e = free_ev(T0 + 50 * MS, 0x1000, 1, 0, 40 * MS);
	wtable_add(wt, &e);

	wtable_close_until(wt, T0 + WIN);
	assert_int_equal(rows.n, 1);
	assert_int_equal(rows.r[0].s->allocs, 1);
	assert_int_equal(rows.r[0].s->frees, 1);
	assert_int_equal(rows.r[0].live_objs, 0);

	wtable_close_until(wt, T0 + 2 * WIN);
	assert_int_equal(rows.n, 2);
	assert_int_equal(rows.r[1].window, 1);
	assert_int_equal(rows.r[1].s->allocs, 2);
	assert_int_equal(rows.r[1].live_objs, 2);
	wtable_free(wt);
}

static void wtable_add__event_of_closed_window__counted_late(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, NULL, &rows);
	struct wtable_stats st;
	struct cs_event e;

	(void)state;
	wtable_close_until(wt, T0 + 3 * WIN);
	e = alloc_ev(T0 + 10 * MS, 0x1000, 0, 64, 1);
	wtable_add(wt, &e);
	wtable_get_stats(wt, &st);
	assert_int_equal(st.late, 1);
	assert_int_equal(st.windows, 3);
	wtable_close_all(wt);
	assert_int_equal(rows.n, 1);
	assert_int_equal(rows.r[0].window, 3);
	wtable_free(wt);
}

static void wtable_add__far_future_event__closes_windows_between(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, NULL, &rows);
	struct cs_event e;

	(void)state;
	e = alloc_ev(T0 + 1 * MS, 0x1000, 0, 64, 1);
	wtable_add(wt, &e);
	e = alloc_ev(T0 + 5 * WIN + 1, 0x2000, 0, 64, 1);
	wtable_add(wt, &e);
	/* window 0 had to close so that slot 0 could hold window 4 or 5 */
	assert_int_equal(rows.n, 1);
	assert_int_equal(rows.r[0].window, 0);
	wtable_close_all(wt);
	assert_int_equal(rows.n, 2);
	assert_int_equal(rows.r[1].window, 5);
	assert_int_equal(rows.r[1].live_objs, 2);
	wtable_free(wt);
}

static void wtable_add__page_refaults__counted_per_file(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, NULL, &rows);
	struct cs_event e = { 0 };
	int i;

	(void)state;
	e.type = CS_EV_PAGE_ADD;
	e.tgid = 7;
	e.page.dev = (254u << 20) | 1;
	e.page.ino = 12;
	for (i = 0; i < 4; i++) {
		e.ts_ns = T0 + i;
		e.order = 2;	/* 4 pages */
		e.flags = i < 3 ? CS_F_REFAULT : 0;
		e.page.refault_pages = i < 3 ? 3 : 0;	/* 3 of the 4 pages */
		e.page.refault_dist = 100;
		wtable_add(wt, &e);
	}
	e.type = CS_EV_PAGE_DEL;
	e.order = 0;
	wtable_add(wt, &e);
	wtable_close_all(wt);
	assert_int_equal(rows.n, 1);
	assert_string_equal(rows.r[0].acc->name, "254:1:12");
	assert_int_equal(rows.r[0].s->page_adds, 16);
	assert_int_equal(rows.r[0].s->page_dels, 1);
	assert_int_equal(rows.r[0].s->refaults, 3);
	assert_int_equal(rows.r[0].s->refault_pages, 9);
	assert_in_range(rows.r[0].refault_dist_p50, 64, 127);
	wtable_free(wt);
}

/* a deleted file's inode number given to a new file: another key */
static void wtable_add__same_inode_number_new_generation__separate_keys(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, NULL, &rows);
	struct cs_event e = { 0 };

	(void)state;
	e.type = CS_EV_PAGE_ADD;
	e.tgid = 7;
	e.ts_ns = T0 + 1;
	e.page.dev = (254u << 20) | 1;
	e.page.ino = 12;
	e.page.gen = 1;
	wtable_add(wt, &e);
	wtable_add(wt, &e);
	e.page.gen = 2;
	wtable_add(wt, &e);
	wtable_close_all(wt);
	assert_int_equal(rows.n, 2);
	assert_int_equal(rows.r[0].s->page_adds + rows.r[1].s->page_adds, 3);
	assert_int_not_equal(rows.r[0].acc->key.gen, rows.r[1].acc->key.gen);
	wtable_free(wt);
}

static void wtable_close__idle_key_without_live__forgotten(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, NULL, &rows);
	struct wtable_stats st;
	struct cs_event e;

	(void)state;
	e = alloc_ev(T0 + 1, 0x1000, 0, 64, 1);
	wtable_add(wt, &e);
	e = free_ev(T0 + 2, 0x1000, 0, 0, 1);
	wtable_add(wt, &e);
	e = alloc_ev(T0 + 3, 0x2000, 0, 64, 1);
	e.slab.cache = 64;	/* kmalloc-64, keeps one live object */
	wtable_add(wt, &e);
	wtable_get_stats(wt, &st);
	assert_int_equal(st.keys, 2);
	wtable_close_until(wt, T0 + 61000 * MS + 64 * WIN);
	wtable_get_stats(wt, &st);
	assert_int_equal(st.keys, 1);
	assert_int_equal(st.keys_dropped, 1);
	assert_int_equal(rows.n, 2);
	wtable_free(wt);
}

static void topk_entropy__uniform_sizes__log2_of_count(void **state)
{
	struct topk t = { 0 };
	int i;

	(void)state;
	for (i = 0; i < 800; i++)
		topk_add(&t, 8 * (i % 8));
	assert_true(fabs(topk_entropy(&t) - 3.0) < 1e-9);
	assert_int_equal(topk_max(&t), 100);
	assert_int_equal(topk_total(&t), 800);
}

static void topk_add__more_values_than_slots__rest_in_other(void **state)
{
	struct topk t = { 0 };
	int i;

	(void)state;
	for (i = 0; i < TOPK_SLOTS + 10; i++)
		topk_add(&t, i);
	assert_int_equal(t.n, TOPK_SLOTS);
	assert_int_equal(t.other, 10);
	/* the overflow counts as distinct values: log2(42) */
	assert_true(fabs(topk_entropy(&t) - log2(TOPK_SLOTS + 10)) < 1e-9);
}

static void hist_percentile__known_buckets__median_inside_bucket(void **state)
{
	uint32_t h[HIST_BUCKETS] = { 0 };

	(void)state;
	assert_int_equal(stats_log2_percentile(h, 0.5), 0);
	h[stats_log2_bucket(1000)] = 3;	/* [512, 1024) */
	h[stats_log2_bucket(1 << 20)] = 1;
	assert_in_range(stats_log2_percentile(h, 0.5), 512, 1023);
	assert_in_range(stats_log2_percentile(h, 1.0), 1 << 20, (1 << 21) - 1);
	assert_int_equal(stats_log2_bucket(0), 0);
	assert_int_equal(stats_log2_bucket(1), 0);
	assert_int_equal(stats_log2_bucket(4096), 12);
}

static void wtable_add__many_keys__table_grows_and_finds_all(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, NULL, NULL, &rows);
	struct wtable_stats st;
	struct cs_event e;
	int i;

	(void)state;
	for (i = 0; i < 5000; i++) {
		e = alloc_ev(T0 + 1, 0x1000 + i, 0, 64, 1);
		e.tgid = i;
		assert_int_equal(wtable_add(wt, &e), 0);
	}
	for (i = 0; i < 5000; i++) {
		e = alloc_ev(T0 + 2, 0x9000 + i, 0, 64, 1);
		e.tgid = i;
		wtable_add(wt, &e);
	}
	wtable_get_stats(wt, &st);
	assert_int_equal(st.keys, 5000);
	wtable_close_all(wt);
	wtable_get_stats(wt, &st);
	assert_int_equal(st.rows, 5000);
	wtable_free(wt);
}

static int sum_live(struct acc *a, void *ctx)
{
	int64_t *sum = ctx;

	*sum += a->live_objs;
	return 0;
}

struct find {
	uint32_t tgid;
	uint64_t cache;
	struct acc *a;
};

static int find_one(struct acc *a, void *ctx)
{
	struct find *f = ctx;

	if (a->key.tgid == f->tgid && a->key.id == f->cache) {
		f->a = a;
		return 1;
	}
	return 0;
}

static struct acc *find_key(struct wtable *wt, uint32_t tgid, uint64_t cache)
{
	struct find f = { tgid, cache, NULL };

	wtable_foreach(wt, find_one, &f);
	return f.a;
}

/* 300 processes each keep two objects: past a budget of 64 keys, the keys
 * open in the window count on the cache's others key; later, the longest
 * idle keys make room by merging into it.  Frees of their objects make
 * their keys again, one object short each: no object is lost on the way. */
static void wtable_add__past_key_budget__merged_into_others_nothing_lost(void **state)
{
	struct wtable *wt = wtable_new(T0, WIN, NULL, NULL, NULL);
	struct wtable_stats st;
	struct cs_event e;
	int64_t live = 0;
	int i;

	(void)state;
	wtable_set_limits(wt, &(struct wtable_limits){ .max_keys = 64 });
	for (i = 0; i < 100; i++) {
		e = alloc_ev(T0 + 1, 0x10000 + 16 * i, 0, 64, 1);
		e.tgid = 1000 + i;
		assert_int_equal(wtable_add(wt, &e), 0);
	}
	wtable_get_stats(wt, &st);
	assert_int_equal(st.keys, 65);		/* 64 and the others key */
	assert_int_equal(st.others_events, 36);
	assert_non_null(find_key(wt, CS_TGID_OTHER, FILP));
	/* a window later, the first keys are idle: new ones take their room */
	for (i = 100; i < 300; i++) {
		e = alloc_ev(T0 + 3 * WIN + i, 0x10000 + 16 * i, 0, 64, 1);
		e.tgid = 1000 + i;
		assert_int_equal(wtable_add(wt, &e), 0);
	}
	wtable_get_stats(wt, &st);
	assert_true(st.keys <= 65);
	assert_true(st.keys_evicted > 0);
	wtable_foreach(wt, sum_live, &live);
	assert_int_equal(live, 300);
	/* free everything: merged keys' frees land on others */
	for (i = 0; i < 300; i++) {
		e = free_ev(T0 + 6 * WIN + i, 0x10000 + 16 * i, 0, 0, 1000);
		e.tgid = 1000 + i;
		assert_int_equal(wtable_add(wt, &e), 0);
	}
	live = 0;
	wtable_foreach(wt, sum_live, &live);
	assert_int_equal(live, 0);
	assert_true(find_key(wt, CS_TGID_OTHER, FILP)->live_objs > 0);
	wtable_free(wt);
}

/* tgids below 2000 are user 1000's, the rest root's */
static uint32_t owner_by_tgid(uint32_t tgid, void *ctx)
{
	(void)ctx;
	return tgid < 2000 ? 1000 : 0;
}

/* One user's 200 busy processes fill a budget of 64 before anyone else
 * comes: root's processes still get keys of their own (up to a quarter
 * past the budget), and from then on the first user holds no more than
 * its half, its further processes counted on the others key (share). */
static void wtable_add__one_user_fills_budget__others_keep_their_keys(void **state)
{
	struct wtable *wt = wtable_new(T0, WIN, NULL, NULL, NULL);
	struct wtable_stats st;
	struct cs_event e;
	int i, mine = 0;

	(void)state;
	wtable_set_limits(wt, &(struct wtable_limits){ .max_keys = 64, .owner = owner_by_tgid });
	for (i = 0; i < 200; i++) {
		e = alloc_ev(T0 + 1 + i, 0x10000 + 16 * i, 0, 64, 1);
		e.tgid = 1000 + i;		/* the first user's, all busy now */
		assert_int_equal(wtable_add(wt, &e), 0);
	}
	for (i = 0; i < 10; i++) {
		e = alloc_ev(T0 + 300 + i, 0x90000 + 16 * i, 0, 64, 1);
		e.tgid = 5000 + i;		/* root's */
		assert_int_equal(wtable_add(wt, &e), 0);
	}
	for (i = 0; i < 10; i++)
		assert_non_null(find_key(wt, 5000 + i, FILP));
	for (i = 200; i < 300; i++) {
		e = alloc_ev(T0 + 400 + i, 0x10000 + 16 * i, 0, 64, 1);
		e.tgid = 1000 + i;		/* more of the first user's */
		assert_int_equal(wtable_add(wt, &e), 0);
	}
	for (i = 200; i < 300; i++)
		mine += find_key(wt, 1000 + i, FILP) != NULL;
	assert_int_equal(mine, 0);
	wtable_get_stats(wt, &st);
	assert_true(st.share_events >= 100);
	assert_true(st.keys <= 64 + 16 + 1);
	wtable_free(wt);
}

static bool none_alive(uint32_t tgid, void *ctx)
{
	(void)ctx;
	return tgid == 43;
}

/* A process gone for five seconds: its key (and live object) goes to the
 * others key; a living idle process keeps its own. */
static void wtable_close__exited_process__key_merged_into_others(void **state)
{
	struct wtable *wt = wtable_new(T0, WIN, NULL, NULL, NULL);
	struct wtable_stats st;
	struct cs_event e;
	struct acc *o;

	(void)state;
	wtable_set_limits(wt, &(struct wtable_limits){ .max_keys = 64, .alive = none_alive });
	e = alloc_ev(T0 + 1, 0x1000, 0, 64, 1);
	wtable_add(wt, &e);
	e = alloc_ev(T0 + 2, 0x2000, 0, 64, 1);
	e.tgid = 43;
	wtable_add(wt, &e);
	wtable_close_until(wt, T0 + 5000 * MS + 128 * WIN);
	wtable_get_stats(wt, &st);
	assert_int_equal(st.keys_exited, 1);
	assert_null(find_key(wt, 42, FILP));
	assert_non_null(find_key(wt, 43, FILP));
	o = find_key(wt, CS_TGID_OTHER, FILP);
	assert_non_null(o);
	assert_int_equal(o->live_objs, 1);
	assert_string_equal(o->comm, "(others)");
	/* its object's free, a while later, makes the key again one object
	 * short; the next sweep evens it out */
	e = free_ev(T0 + 14000 * MS, 0x1000, 1, 0, 14000 * MS);
	wtable_add(wt, &e);
	assert_int_equal(find_key(wt, 42, FILP)->live_objs, -1);
	wtable_close_until(wt, T0 + 20000 * MS + 128 * WIN);
	assert_null(find_key(wt, 42, FILP));
	assert_int_equal(find_key(wt, CS_TGID_OTHER, FILP)->live_objs, 0);
	wtable_free(wt);
}

/* A family of young processes idle for a minute, with objects still live,
 * is merged too; its cohorts keep their ages. */
static void wtable_close__idle_family__merged_with_its_ages(void **state)
{
	uint32_t fam = cs_family_of(0, "true");
	struct wtable *wt = wtable_new(T0, WIN, NULL, NULL, NULL);
	struct wtable_stats st;
	struct cs_event e;
	struct acc *o;

	(void)state;
	assert_true(tgid_is_family(fam));
	assert_string_equal(tgid_kind(fam), "family");
	wtable_set_limits(wt, &(struct wtable_limits){ .max_keys = 64 });
	e = alloc_ev(T0 + 1, 0x1000, 0, 64, 1);
	e.tgid = fam;
	wtable_add(wt, &e);
	wtable_close_until(wt, T0 + 61000 * MS + 64 * WIN);
	wtable_get_stats(wt, &st);
	assert_int_equal(st.keys_idle_merged, 1);
	o = find_key(wt, CS_TGID_OTHER, FILP);
	assert_non_null(o);
	assert_int_equal(o->live_objs, 1);
	assert_int_equal(history_old_objs(&o->oh->age, T0 + 1000 * MS), 1);
	assert_int_equal(history_old_objs(&o->oh->age, T0), 0);
	wtable_free(wt);
}

static struct cs_event kv_ev(uint64_t ts, uint32_t op, uint32_t block, uint16_t cpu, int64_t arg)
{
	struct cs_event e = { 0 };

	e.ts_ns = ts;
	e.tgid = 9;
	e.cpu = cpu;
	e.type = CS_EV_KV;
	e.kv.op = op;
	e.kv.block = block;
	e.kv.arg = arg;
	return e;
}

static void wtable_add__kv_blocks__in_use_lifetimes_and_swap_refaults(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, NULL, &rows);
	struct cs_event e;

	(void)state;
	/* a pool of 8 blocks of 73728 bytes (18 pages) */
	e = kv_ev(T0 + 1, CS_KV_POOL, 8, 0, 73728);
	wtable_add(wt, &e);
	e = kv_ev(T0 + 10, CS_KV_USE, 3, 0, 0);
	wtable_add(wt, &e);
	/* a swap-in fires block_alloc and a prefix hit: counted once */
	e = kv_ev(T0 + 20, CS_KV_USE, 5, 0, 0);
	wtable_add(wt, &e);
	e = kv_ev(T0 + 21, CS_KV_SWAP_IN, 5, 0, 12);
	wtable_add(wt, &e);
	e = kv_ev(T0 + 22, CS_KV_USE, 5, 0, 0);
	wtable_add(wt, &e);
	/* block 3 released on another CPU after 1000 ns */
	e = kv_ev(T0 + 1010, CS_KV_RELEASE, 3, 1, 0);
	wtable_add(wt, &e);
	/* a release of a block never seen taken up is not counted */
	e = kv_ev(T0 + 1020, CS_KV_RELEASE, 6, 0, 0);
	wtable_add(wt, &e);
	e = kv_ev(T0 + 1030, CS_KV_SWAP_OUT, 7, 0, 2);
	wtable_add(wt, &e);
	wtable_close_all(wt);
	assert_int_equal(rows.n, 1);
	assert_string_equal(rows.r[0].acc->name, "kv-pool");
	assert_int_equal(rows.r[0].s->allocs, 2);
	assert_int_equal(rows.r[0].s->frees, 1);
	assert_int_equal(rows.r[0].live_objs, 1);
	assert_int_equal(rows.r[0].live_bytes, 73728);
	assert_int_equal(rows.r[0].s->remote_frees, 1);
	assert_in_range(rows.r[0].lifetime_p50_ns, 512, 1023);
	assert_int_equal(rows.r[0].s->refaults, 1);
	assert_int_equal(rows.r[0].s->refault_pages, 18);
	/* back 12 evictions after its swap-out, with 8 blocks: not a repeat */
	assert_int_equal(rows.r[0].s->repeat_pages, 0);
	assert_int_equal(rows.r[0].s->page_adds, 18);
	assert_int_equal(rows.r[0].s->page_dels, 18);
	assert_in_range(rows.r[0].refault_dist_p50, 8, 15);
	wtable_free(wt);
}


/* Frees that no tracepoint saw (address reuse): frees of the key, but with
 * no lifetime and no CPU to compare. */
static void wtable_add__unseen_frees__counted_apart_from_locality_and_lifetime(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, name_filp, &rows);
	struct cs_event e;
	int i;

	(void)state;
	for (i = 0; i < 10; i++) {
		e = alloc_ev(T0 + 1 * MS + i, 0x1000 + i * 256, 0, 200, 0xaa);
		wtable_add(wt, &e);
	}
	for (i = 0; i < 7; i++) {
		e = free_ev(T0 + 2 * MS + i, 0x1000 + i * 256, i < 4 ? 0 : 1, 0,
			    i < 4 ? 1000 : 900000);
		if (i >= 4)
			e.flags = CS_F_UNSEEN;
		wtable_add(wt, &e);
	}
	wtable_close_until(wt, T0 + WIN);
	assert_int_equal(rows.n, 1);
	assert_int_equal(rows.r[0].s->frees, 7);
	assert_int_equal(rows.r[0].s->unseen_frees, 3);
	assert_int_equal(rows.r[0].s->same_cpu_frees, 4);
	assert_int_equal(rows.r[0].s->remote_frees, 0);
	assert_int_equal(rows.r[0].live_objs, 3);
	/* the unseen frees' lifetimes (upper bounds) stay out of the median */
	assert_in_range(rows.r[0].lifetime_p50_ns, 512, 1023);
	wtable_free(wt);
}

/* One record for an alloc over a live address: the unseen free of the
 * object it replaced goes to that object's key (another process here),
 * the alloc to its own; one event counted. */
static void wtable_add__alloc_replacing_live_object__unseen_free_to_old_key(void **state)
{
	struct wtable *wt = wtable_new(T0, WIN, NULL, name_filp, NULL);
	struct wtable_stats st;
	struct cs_event e;
	struct acc *old, *cur;

	(void)state;
	e = alloc_ev(T0 + 1 * MS, 0x1000, 0, 200, 0xaa);
	e.tgid = 7;
	wtable_add(wt, &e);
	e = alloc_ev(T0 + 3 * MS, 0x1000, 1, 200, 0xbb);
	e.flags = CS_F_UNSEEN;
	e.slab.lifetime_ns = 2 * MS;
	e.slab.old_cache = FILP;
	e.slab.old_tgid = 7;
	e.slab.old_bytes = 256;
	assert_int_equal(wtable_add(wt, &e), 0);
	old = find_key(wt, 7, FILP);
	cur = find_key(wt, 42, FILP);
	assert_non_null(old);
	assert_non_null(cur);
	assert_int_equal(old->live_objs, 0);
	assert_int_equal(old->total_frees, 1);
	assert_int_equal(old->total_unseen_frees, 1);
	assert_int_equal(cur->live_objs, 1);
	assert_int_equal(cur->total_allocs, 1);
	assert_int_equal(cur->total_frees, 0);
	wtable_get_stats(wt, &st);
	assert_int_equal(st.events, 2);
	wtable_free(wt);
}

/* The last row of FILP, for runs of many windows. */
static void keep_last(const struct wrow *r, void *ctx)
{
	struct wrow *last = ctx;

	if (r->acc->key.id == FILP)
		*last = *r;
}

/* rate allocs/s for secs seconds; every keep_every-th object is never
 * freed, the others live 1 ms.  Returns the old population's rise seen. */
static void churn(struct wtable *wt, int rate, int secs, int keep_every)
{
	uint64_t step = 1000000000ull / rate, ts;
	struct cs_event e;
	int i;

	for (i = 0; i < rate * secs; i++) {
		ts = T0 + (uint64_t)i * step;
		e = alloc_ev(ts, 0x100000 + (uint64_t)i * 256, 0, 200, 0xaa);
		wtable_add(wt, &e);
		if (keep_every && i % keep_every == 0)
			continue;
		e = free_ev(ts + MS, 0x100000 + (uint64_t)i * 256, 0, 0, MS);
		wtable_add(wt, &e);
		wtable_close_until(wt, ts);
	}
}

static void wtable_close__leak_amid_churn__old_population_rises(void **state)
{
	struct wrow last = { 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_last, NULL, &last);

	(void)state;
	wtable_set_rules(wt, &(struct wtable_rules){ .age_min_ns = 1000 * MS, .age_lifetimes = 20 });
	/* 1000 allocs/s, 1 in 20 kept (5 %), for 5 s */
	churn(wt, 1000, 5, 20);
	assert_int_equal(last.age_ns, 1000 * MS);
	/* objects older than 1 s: about 4 s of 50/s */
	assert_in_range(last.old_objs, 150, 210);
	assert_true(last.old_rise_s >= 3.5);
	assert_true(last.old_steps >= 12);
	assert_in_range(last.old_max_step, 10, 16);
	assert_in_range(last.old_rise, 150, 210);
	assert_in_range(last.live_objs, 240, 260);
	wtable_free(wt);
}

/* A rise's frees of old objects (seen) and frees found unseen (an alloc
 * over a tracked address) are counted from the rise's start: what the leak
 * rule weighs against the rise when the frees are sampled in time.  A young
 * object's free is neither. */
static void wtable_close__old_frees_during_rise__counted_with_it(void **state)
{
	struct wrow last = { 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_last, NULL, &last);
	struct cs_event e;
	uint64_t ts;
	int i;

	(void)state;
	wtable_set_rules(wt, &(struct wtable_rules){ .age_min_ns = 1000 * MS, .age_lifetimes = 20 });
	/* 1000 allocs/s for 5 s, 1 in 20 kept; at 4.95 s a kept object
	 * 1.45 s old is freed and one 1.05 s old is found freed unseen (an
	 * alloc over its address), in a window where the old population
	 * still rises (its cohorts turn old a dozen at a time) */
	for (i = 0; i < 5000; i++) {
		ts = T0 + (uint64_t)i * MS;
		e = alloc_ev(ts, 0x100000 + (uint64_t)i * 256, 0, 200, 0xaa);
		if (i == 4950) {
			e.slab.ptr = 0x100000 + 3900ull * 256;
			e.flags = CS_F_UNSEEN;
			e.slab.old_cache = FILP;
			e.slab.old_tgid = 42;
			e.slab.old_bytes = 256;
			e.slab.lifetime_ns = 1050 * MS;
		}
		wtable_add(wt, &e);
		if (i % 20 && i != 4950) {
			e = free_ev(ts + MS / 2, 0x100000 + (uint64_t)i * 256, 0, 0, MS / 2);
			wtable_add(wt, &e);
		}
		if (i == 4950) {
			e = free_ev(ts + MS / 2, 0x100000 + 3500ull * 256, 0, 0, 1450 * MS);
			wtable_add(wt, &e);
		}
		wtable_close_until(wt, ts);
	}
	wtable_close_until(wt, T0 + 5000 * MS + 2 * WIN);
	assert_true(last.old_rise > 100);
	assert_int_equal(last.old_rise_old_frees, 1);
	assert_int_equal(last.old_rise_unseen, 1);
	wtable_free(wt);
}

/* the last row of each of three keys: (42, filp), (43, filp), (42, other) */
static void keep_three(const struct wrow *r, void *ctx)
{
	struct wrow *last = ctx;

	if (r->acc->key.id == FILP)
		last[r->acc->key.tgid == 43] = *r;
	else
		last[2] = *r;
}

/* Two processes leak files, 50/s and 25/s (k 0 and 1), and one leaks 50/s
 * in another cache (k 2), from millisecond from to to; k 1 only before
 * stop1. */
static void three_leaks(struct wtable *wt, int from, int to, int stop1)
{
	struct cs_event e;
	uint64_t ts, ptr;
	int i, k;

	for (i = from; i < to; i++) {
		ts = T0 + (uint64_t)i * MS;
		for (k = 0; k < 3; k++) {
			if (k == 1 && i >= stop1)
				continue;
			ptr = 0x100000 + ((uint64_t)i * 3 + (uint64_t)k) * 256;
			e = alloc_ev(ts, ptr, 0, 200, 0xaa);
			e.tgid = e.pid = k == 1 ? 43 : 42;
			if (k == 2)
				e.slab.cache = FILP + 0x1000;
			wtable_add(wt, &e);
			if (i % (k == 1 ? 40 : 20) == 0)
				continue;
			e = free_ev(ts + MS / 2, ptr, 0, 0, MS / 2);
			e.tgid = k == 1 ? 43 : 42;
			if (k == 2)
				e.slab.cache = FILP + 0x1000;
			wtable_add(wt, &e);
		}
		wtable_close_until(wt, ts);
	}
}

/* A rising slab row carries the rises of every key of its cache whose rise
 * goes on, its own included: what the kernel's count of the cache must pay
 * for (classify.c).  Each filp row of three_leaks says +75/s of 2 keys,
 * the other cache's row its own.  A key with no row in the window counts
 * by its last one for 4 s (sampled in time, a busy key sleeps through
 * slices), not after. */
static void wtable_close__keys_of_a_cache_rise__rows_carry_their_sum(void **state)
{
	struct wrow last[3];
	struct wtable *wt = wtable_new(T0, WIN, keep_three, NULL, last);
	double own1;
	int k;

	(void)state;
	memset(last, 0, sizeof(last));
	wtable_set_rules(wt, &(struct wtable_rules){ .age_min_ns = 1000 * MS, .age_lifetimes = 20 });
	/* rises of a second: in the sum at their rates, not yet in its
	 * error (1.5 s at least: most of a shorter one would be error) */
	three_leaks(wt, 0, 2300, 5000);
	assert_true(last[0].old_rise_s > 0.5 && last[0].old_rise_s < 1.5);
	assert_true(last[0].cache_rise_per_s > 0);
	assert_true(last[0].cache_rise_var == 0);
	three_leaks(wt, 2300, 5000, 5000);
	for (k = 0; k < 3; k++)
		assert_true(last[k].old_rise > 0 && last[k].old_rise_s > 2);
	assert_int_equal(last[0].cache_rising_keys, 2);
	assert_int_equal(last[1].cache_rising_keys, 2);
	assert_int_equal(last[2].cache_rising_keys, 1);
	/* each its own rise over its own span: the same sum in both rows */
	assert_true(last[0].cache_rise_per_s == last[1].cache_rise_per_s);
	assert_true(fabs(last[0].cache_rise_per_s -
			 ((double)last[0].old_rise / last[0].old_rise_s +
			  (double)last[1].old_rise / last[1].old_rise_s)) < 1e-9);
	assert_true(last[0].cache_rise_per_s > 60 && last[0].cache_rise_per_s < 90);
	/* and the sum of their squares over their spans, for its error
	 * where they are counted by periods (classify.c, cache_rise_low) */
	assert_true(last[0].cache_rise_var == last[1].cache_rise_var);
	assert_true(fabs(last[0].cache_rise_var -
			 (pow((double)last[0].old_rise / last[0].old_rise_s, 2) / last[0].old_rise_s +
			  pow((double)last[1].old_rise / last[1].old_rise_s, 2) / last[1].old_rise_s)) < 1e-6);
	assert_true(fabs(last[2].cache_rise_per_s -
			 (double)last[2].old_rise / last[2].old_rise_s) < 1e-9);
	assert_true(fabs(last[2].cache_rise_var -
			 pow((double)last[2].old_rise / last[2].old_rise_s, 2) / last[2].old_rise_s) < 1e-6);
	assert_true(last[2].cache_rise_per_s > 40 && last[2].cache_rise_per_s < 60);
	/* 43 stops: for 2 s its last row still counts */
	three_leaks(wt, 5000, 7000, 5000);
	assert_true(last[1].window < last[0].window);
	own1 = (double)last[1].old_rise / last[1].old_rise_s;
	assert_int_equal(last[0].cache_rising_keys, 2);
	assert_true(fabs(last[0].cache_rise_per_s -
			 ((double)last[0].old_rise / last[0].old_rise_s + own1)) < 1e-9);
	/* 4 s on, it does not */
	three_leaks(wt, 7000, 9500, 5000);
	assert_int_equal(last[0].cache_rising_keys, 1);
	assert_true(fabs(last[0].cache_rise_per_s -
			 (double)last[0].old_rise / last[0].old_rise_s) < 1e-9);
	wtable_free(wt);
}

/* Records dropped while the old objects were allocated: the rise may be
 * frees that never arrived, and the row says so. */
static void wtable_close__drops_during_rise__row_says_so(void **state)
{
	struct wrow last = { 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_last, NULL, &last);

	(void)state;
	wtable_set_rules(wt, &(struct wtable_rules){ .age_min_ns = 1000 * MS, .age_lifetimes = 20 });
	churn(wt, 1000, 5, 20);
	assert_false(last.old_rise_dropped);
	wtable_free(wt);

	memset(&last, 0, sizeof(last));
	wt = wtable_new(T0, WIN, keep_last, NULL, &last);
	wtable_set_rules(wt, &(struct wtable_rules){ .age_min_ns = 1000 * MS, .age_lifetimes = 20 });
	wtable_note_drops(wt, 7, T0 + 300 * MS);
	churn(wt, 1000, 5, 20);
	assert_true(last.old_rise > 100);
	assert_true(last.old_rise_dropped);
	wtable_free(wt);
}

static void wtable_close__balanced_churn__no_old_objects(void **state)
{
	struct wrow last = { 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_last, NULL, &last);

	(void)state;
	wtable_set_rules(wt, &(struct wtable_rules){ .age_min_ns = 1000 * MS, .age_lifetimes = 20 });
	churn(wt, 1000, 5, 0);
	assert_int_equal(last.old_objs, 0);
	assert_int_equal(last.old_rise, 0);
	assert_in_range(last.live_objs, 0, 2);
	wtable_free(wt);
}

static void wtable_close__remote_frees_over_a_second__recent_locality(void **state)
{
	struct wrow last = { 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_last, NULL, &last);
	struct cs_event e;
	int w, i;

	(void)state;
	/* 10 windows of handoff: 4 frees a window, 3 on the other CPU, of
	 * which one by a thread of the allocating process (CS_F_OWN) */
	for (w = 0; w < 10; w++) {
		for (i = 0; i < 4; i++) {
			uint64_t ptr = 0x1000 + (w * 4 + i) * 256;

			e = alloc_ev(T0 + w * WIN + 1 + i, ptr, 0, 64, 0xaa);
			wtable_add(wt, &e);
			e = free_ev(T0 + w * WIN + 10 + i, ptr, i ? 1 : 0, 0, 9);
			if (i == 1)
				e.flags |= CS_F_OWN;
			wtable_add(wt, &e);
		}
	}
	wtable_close_until(wt, T0 + 10 * WIN);
	assert_int_equal(last.recent_windows, 10);
	assert_true(fabs(last.recent_locality - 0.25) < 1e-9);
	assert_true(fabs(last.recent_own_share - 1.0 / 3) < 1e-9);
	/* a second later, one window of local frees: the handoff is over */
	e = alloc_ev(T0 + 30 * WIN + 1, 0x9000, 0, 64, 0xaa);
	wtable_add(wt, &e);
	e = free_ev(T0 + 30 * WIN + 2, 0x9000, 0, 0, 1);
	wtable_add(wt, &e);
	wtable_close_until(wt, T0 + 31 * WIN);
	assert_int_equal(last.recent_windows, 1);
	assert_true(last.recent_locality == 1.0);
	wtable_free(wt);
}

static int first_acc(struct acc *a, void *ctx)
{
	*(struct acc **)ctx = a;
	return 1;
}

static void wtable_add__kv_swap_in_soon_after_swap_out__repeat(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, NULL, &rows);
	struct cs_event e;

	(void)state;
	e = kv_ev(T0 + 1, CS_KV_POOL, 8, 0, 73728);
	wtable_add(wt, &e);
	/* back 3 evictions after its swap-out: a pool of 8 would have kept it */
	e = kv_ev(T0 + 2, CS_KV_SWAP_IN, 5, 0, 3);
	wtable_add(wt, &e);
	/* back 100 evictions later: a cold return */
	e = kv_ev(T0 + 3, CS_KV_SWAP_IN, 6, 0, 100);
	wtable_add(wt, &e);
	wtable_close_all(wt);
	assert_int_equal(rows.n, 1);
	assert_int_equal(rows.r[0].s->refault_pages, 36);
	assert_int_equal(rows.r[0].s->repeat_pages, 18);
	wtable_free(wt);
}

static void history_old_objs__cohorts_and_older__counted_by_cutoff(void **state)
{
	struct wrow last = { 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_last, NULL, &last);
	struct acc *a = NULL;
	struct cs_event e;

	(void)state;
	/* one object at 0 s, one at 20 s (past the 16 s of cohorts), one
	 * freed: the first falls into "older" and still counts */
	e = alloc_ev(T0, 0x1000, 0, 200, 0xaa);
	wtable_add(wt, &e);
	e = alloc_ev(T0 + 1, 0x2000, 0, 200, 0xaa);
	wtable_add(wt, &e);
	e = alloc_ev(T0 + 20000 * MS, 0x3000, 0, 200, 0xaa);
	wtable_add(wt, &e);
	e = free_ev(T0 + 20001 * MS, 0x2000, 0, 0, 20001 * MS - 1);
	wtable_add(wt, &e);
	wtable_foreach(wt, first_acc, &a);
	assert_non_null(a);
	assert_int_equal(a->live_objs, 2);
	assert_int_equal(history_old_objs(&a->oh->age, T0 + 19000 * MS), 1);
	assert_int_equal(history_old_objs(&a->oh->age, T0 + 21000 * MS), 2);
	assert_int_equal(history_old_tracked(&a->oh->age, T0 + 21000 * MS), 2);
	/* a sampled object (1 in 16) stands for 16, and is one record */
	e = alloc_ev(T0 + 20002 * MS, 0x4000, 0, 200, 0xaa);
	e.slab.shift = 4;
	wtable_add(wt, &e);
	assert_int_equal(history_old_objs(&a->oh->age, T0 + 21000 * MS), 18);
	assert_int_equal(history_old_tracked(&a->oh->age, T0 + 21000 * MS), 3);
	e = free_ev(T0 + 20003 * MS, 0x4000, 0, 0, 1 * MS);
	e.slab.shift = 4;
	wtable_add(wt, &e);
	assert_int_equal(history_old_objs(&a->oh->age, T0 + 21000 * MS), 2);
	assert_int_equal(history_old_tracked(&a->oh->age, T0 + 21000 * MS), 2);
	wtable_free(wt);
}

static struct cs_event page_ev(uint64_t ts, uint32_t refault, uint32_t repeat)
{
	struct cs_event e = { 0 };

	e.ts_ns = ts;
	e.type = CS_EV_PAGE_ADD;
	e.tgid = 7;
	e.page.dev = (254u << 20) | 1;
	e.page.ino = 12;
	e.order = 4;	/* 16 pages */
	e.flags = refault ? CS_F_REFAULT : 0;
	e.page.refault_pages = refault;
	e.page.repeat_pages = repeat;
	return e;
}

/* A kernel thread's evictions (kswapd, kdamond) go to one key of all its
 * files; a process's stay per file, and so do a kernel thread's adds. */
static void wtable_add__kthread_evictions__one_key_of_its_files(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, NULL, &rows);
	struct cs_event e;
	int i, evicted = -1;

	(void)state;
	for (i = 0; i < 3; i++) {
		e = page_ev(T0 + 1 + i, 0, 0);
		e.type = CS_EV_PAGE_DEL;
		e.tgid = 90;		/* kdamond */
		e.flags = CS_F_KTHREAD;
		e.page.ino = 100 + i;
		wtable_add(wt, &e);
		e.tgid = 7;		/* a process truncating the same files */
		e.flags = 0;
		wtable_add(wt, &e);
	}
	e = page_ev(T0 + 9, 0, 0);
	e.tgid = 90;
	e.flags = CS_F_KTHREAD;	/* not a delete: per file */
	wtable_add(wt, &e);
	wtable_close_all(wt);
	assert_int_equal(rows.n, 5);
	for (i = 0; i < rows.n; i++)
		if (rows.a[i].key.tgid == 90 && !strcmp(rows.a[i].name, "evicted-files"))
			evicted = i;
	assert_true(evicted >= 0);
	assert_int_equal(rows.s[evicted].page_dels, 3 * 16);
	assert_int_equal(rows.a[evicted].key.id, 0);
	wtable_free(wt);
}

static void keep_last_page(const struct wrow *r, void *ctx)
{
	struct wrow *last = ctx;

	if (r->acc->key.domain == DOM_PAGE)
		*last = *r;
}

static void wtable_close__refaults_over_seconds__persistence_evidence(void **state)
{
	struct wrow last = { 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_last_page, NULL, &last);
	struct cs_event e;
	int w;

	(void)state;
	/* a cyclic reader: 16 pages refault in every window for 2 s, 12 of
	 * them for the second time or more; each pass is a new process (a
	 * shell loop of cat), and in window 5 two of them read at once */
	for (w = 0; w < 20; w++) {
		e = page_ev(T0 + w * WIN + 1, w == 5 ? 8 : 16, w == 5 ? 6 : 12);
		e.tgid = 100 + w / 2;
		wtable_add(wt, &e);
		if (w == 5) {
			e.tgid = 200;
			wtable_add(wt, &e);
		}
	}
	wtable_close_all(wt);
	assert_int_equal(last.s->repeat_pages, 12);
	/* the last 32 windows: all 20 */
	assert_int_equal(last.refault_windows, 20);
	assert_int_equal(last.recent_refault_pages, 320);
	assert_int_equal(last.recent_repeat_pages, 240);
	assert_true(fabs(last.refault_span_s - 2.0) < 1e-9);
	/* later, one more window of refaults: the old ones have aged out */
	e = page_ev(T0 + 100 * WIN + 1, 16, 0);
	wtable_add(wt, &e);
	wtable_close_all(wt);
	assert_int_equal(last.refault_windows, 1);
	assert_int_equal(last.recent_refault_pages, 16);
	assert_int_equal(last.recent_repeat_pages, 0);
	assert_true(fabs(last.refault_span_s - 0.1) < 1e-9);
	wtable_free(wt);
}

static void wtable_add__kv_pool_in_gpu_memory__named_kv_pool_gpu(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, NULL, &rows);
	struct cs_event e;

	(void)state;
	e = kv_ev(T0 + 1, CS_KV_POOL, 24, 0, 73728);
	e.kv.hash = 1;		/* kvref --backend cuda */
	wtable_add(wt, &e);
	e = kv_ev(T0 + 10, CS_KV_USE, 3, 0, 0);
	wtable_add(wt, &e);
	wtable_close_all(wt);
	assert_int_equal(rows.n, 1);
	assert_string_equal(rows.r[0].acc->name, "kv-pool-gpu");
	assert_int_equal(rows.r[0].live_bytes, 73728);
	wtable_free(wt);
}

static void wtable_close__gpu_records__gpu_keys_and_joined_host_row(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, name_filp, &rows);
	struct cs_event e = { 0 };
	int i;

	(void)state;
	e.type = CS_EV_GPU;
	e.tgid = 42;
	e.ts_ns = T0 + 5;
	e.gpu.op = CS_GPU_KV_KERNEL;
	e.gpu.start = 1000;
	e.gpu.end = 51000;
	e.gpu.busy_ns = 50000;
	e.gpu.count = 1;
	wtable_add(wt, &e);
	e.gpu.op = CS_GPU_MEMCPY;
	e.gpu.kind = 1;		/* host to device */
	e.gpu.bytes = 4096;
	e.gpu.busy_ns = 0;
	wtable_add(wt, &e);
	e.gpu.op = CS_GPU_ALLOC;
	e.gpu.kind = 0;
	e.gpu.bytes = e.gpu.size = 1 << 20;
	wtable_add(wt, &e);
	e = alloc_ev(T0 + 6, 0x1000, 0, 64, 1);	/* a host row of tgid 42 */
	wtable_add(wt, &e);
	wtable_close_all(wt);
	assert_int_equal(rows.n, 3);
	for (i = 0; i < rows.n; i++) {
		const struct wrow *r = &rows.r[i];

		assert_int_equal(r->tgid_gpu_kv_kernel_ns, 50000);
		assert_int_equal(r->tgid_gpu_kernel_ns, 0);
		assert_int_equal(r->tgid_gpu_copy_bytes, 4096);
		if (!strcmp(r->acc->name, "gpu-memory")) {
			assert_int_equal(r->s->allocs, 1);
			assert_int_equal(r->live_bytes, 1 << 20);
			assert_int_equal(r->s->gpu_copy_in_bytes, 4096);
		} else if (!strcmp(r->acc->name, "gpu-kv-kernels")) {
			assert_int_equal(r->s->gpu_kernels, 1);
			assert_int_equal(r->s->gpu_kernel_ns, 50000);
		} else {
			assert_string_equal(r->acc->name, "filp");
		}
	}
	wtable_free(wt);
}

static struct wtable_stats stats_of(const struct wtable *wt);

struct joined {
	int rows, host, wrong;
};

/* Each row's process sums must be its own: 100 ns of kernel per its index. */
static void check_joined(const struct wrow *r, void *ctx)
{
	struct joined *j = ctx;
	uint64_t want = 100 * (r->key->tgid - 1000 + 1);

	j->rows++;
	j->host += r->key->domain == DOM_SLAB;
	j->wrong += r->tgid_gpu_kernel_ns != want || r->tgid_gpu_kv_kernel_ns != want;
}

/* 100 processes with GPU work in one window, each its own kernel time:
 * every host row carries its own process's sums (the join had room for
 * 64 processes: the rest joined nothing, uncounted). */
static void wtable_close__gpu_of_many_processes__every_host_row_joined(void **state)
{
	struct joined j = { 0 };
	struct wtable *wt = wtable_new(T0, WIN, check_joined, name_filp, &j);
	struct cs_event e = { 0 };
	int i;

	(void)state;
	for (i = 0; i < 100; i++) {
		memset(&e, 0, sizeof(e));
		e.type = CS_EV_GPU;
		e.tgid = 1000 + i;
		e.ts_ns = T0 + 5;
		e.gpu.op = CS_GPU_KERNEL;
		e.gpu.start = 1000;
		e.gpu.end = 1000 + 100 * (i + 1);
		e.gpu.busy_ns = 100 * (i + 1);
		e.gpu.count = 1;
		wtable_add(wt, &e);
		e.gpu.op = CS_GPU_KV_KERNEL;
		wtable_add(wt, &e);
		e = alloc_ev(T0 + 6, 0x1000 + 64 * i, 0, 64, 1);
		e.tgid = 1000 + i;
		wtable_add(wt, &e);
	}
	wtable_close_all(wt);
	assert_int_equal(j.rows, 300);
	assert_int_equal(j.host, 100);
	assert_int_equal(j.wrong, 0);
	assert_int_equal(stats_of(wt).gpu_unjoined, 0);
	wtable_free(wt);
}

/* ---- records of user-space probes: forged values, out-of-order rings ---- */

static struct wtable_stats stats_of(const struct wtable *wt)
{
	struct wtable_stats st;

	wtable_get_stats(wt, &st);
	return st;
}

/* A pool's block count sizes its per-block state: a forged one is refused
 * before anything is allocated, and uses of blocks of no pool count nothing. */
static void wtable_add__forged_kv_pools__rejected_counted_nothing_allocated(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, NULL, &rows);
	struct wtable_stats st;
	struct cs_event e;

	(void)state;
	e = kv_ev(T0 + 1, CS_KV_POOL, 0xfffffff0u, 0, 73728);	/* ~40 GB of state */
	assert_int_equal(wtable_add(wt, &e), 0);
	e = kv_ev(T0 + 2, CS_KV_POOL, KV_MAX_BLOCKS + 1, 0, 73728);
	assert_int_equal(wtable_add(wt, &e), 0);
	e = kv_ev(T0 + 3, CS_KV_POOL, 0, 0, 73728);
	assert_int_equal(wtable_add(wt, &e), 0);
	e = kv_ev(T0 + 4, CS_KV_POOL, 8, 0, -1);			/* block bytes */
	assert_int_equal(wtable_add(wt, &e), 0);
	e = kv_ev(T0 + 5, CS_KV_POOL, 8, 0, (int64_t)KV_MAX_BLOCK_BYTES + 1);
	assert_int_equal(wtable_add(wt, &e), 0);
	e = kv_ev(T0 + 6, CS_KV_USE, 5, 0, 0);			/* no pool */
	assert_int_equal(wtable_add(wt, &e), 0);
	e = kv_ev(T0 + 7, CS_KV_SWAP_IN, 5, 0, 3);
	assert_int_equal(wtable_add(wt, &e), 0);
	wtable_close_all(wt);
	st = stats_of(wt);
	assert_int_equal(st.rejected, 7);
	assert_int_equal(st.rejected_by[REJ_KV_POOL], 5);
	assert_int_equal(st.rejected_by[REJ_KV_BLOCK], 2);
	assert_int_equal(st.rejected_tgid, 9);
	assert_int_equal(st.kv_blocks, 0);
	assert_int_equal(rows.n, 0);		/* no key saw a counted event */
	assert_string_equal(usdt_reject_name(REJ_KV_POOL), "kv_pool");
	assert_string_equal(usdt_reject_name(REJ_N), "?");
	wtable_free(wt);
}

/* Block indices outside the pool, negative slots and evictions, and
 * arguments that BPF found too wide for their field are rejected; the
 * valid records around them count as before. */
static void wtable_add__kv_block_outside_pool__rejected_valid_ones_counted(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, NULL, &rows);
	struct wtable_stats st;
	struct cs_event e;

	(void)state;
	e = kv_ev(T0 + 1, CS_KV_POOL, 8, 0, 73728);
	wtable_add(wt, &e);
	e = kv_ev(T0 + 10, CS_KV_USE, 3, 0, 0);
	wtable_add(wt, &e);
	e = kv_ev(T0 + 11, CS_KV_USE, 8, 0, 0);			/* one past the end */
	wtable_add(wt, &e);
	e = kv_ev(T0 + 12, CS_KV_USE, 0xffffffffu, 0, 0);		/* -1 */
	wtable_add(wt, &e);
	e = kv_ev(T0 + 13, CS_KV_RELEASE, 1000, 0, 0);
	wtable_add(wt, &e);
	e = kv_ev(T0 + 14, CS_KV_SWAP_OUT, 9, 0, 2);
	wtable_add(wt, &e);
	e = kv_ev(T0 + 15, CS_KV_SWAP_IN, 2, 0, -5);			/* evictions */
	wtable_add(wt, &e);
	e = kv_ev(T0 + 16, CS_KV_SWAP_OUT, 2, 0, -1);			/* slot */
	wtable_add(wt, &e);
	e = kv_ev(T0 + 17, CS_KV_USE, 2, 0, 0);	/* BPF: index was 2^32 + 2 */
	e.flags = CS_F_RANGE;
	wtable_add(wt, &e);
	wtable_close_all(wt);
	st = stats_of(wt);
	assert_int_equal(st.rejected, 7);
	assert_int_equal(st.rejected_by[REJ_KV_BLOCK], 4);
	assert_int_equal(st.rejected_by[REJ_KV_ARG], 2);
	assert_int_equal(st.rejected_by[REJ_RANGE], 1);
	assert_int_equal(st.kv_blocks, 8);
	assert_int_equal(rows.n, 1);
	assert_int_equal(rows.r[0].s->allocs, 1);
	assert_int_equal(rows.r[0].live_objs, 1);
	assert_int_equal(rows.r[0].s->frees, 0);
	assert_int_equal(rows.r[0].s->kv_swap_ins + rows.r[0].s->kv_swap_outs, 0);
	wtable_free(wt);
}

/* Pools of every process together stay within KV_BLOCK_BUDGET blocks: one
 * past it is refused, and a process's new pool gives back its old one. */
static void wtable_add__pools_past_block_budget__refused_state_bounded(void **state)
{
	struct wtable *wt = wtable_new(T0, WIN, NULL, NULL, NULL);
	struct cs_event e;
	uint32_t t;

	(void)state;
	for (t = 1; t <= 4; t++) {
		e = kv_ev(T0 + t, CS_KV_POOL, KV_MAX_BLOCKS, 0, 4096);
		e.tgid = t;
		wtable_add(wt, &e);
	}
	wtable_close_all(wt);
	assert_int_equal(stats_of(wt).kv_blocks, KV_BLOCK_BUDGET);
	assert_int_equal(stats_of(wt).rejected_by[REJ_KV_BUDGET], 3);
	/* process 1 makes a small pool: process 2's big one fits again */
	e = kv_ev(T0 + 10, CS_KV_POOL, 16, 0, 4096);
	e.tgid = 1;
	wtable_add(wt, &e);
	e = kv_ev(T0 + 11, CS_KV_POOL, KV_BLOCK_BUDGET - 16, 0, 4096);
	e.tgid = 2;
	wtable_add(wt, &e);
	e = kv_ev(T0 + 12, CS_KV_USE, KV_BLOCK_BUDGET - 17, 0, 0);
	e.tgid = 2;
	wtable_add(wt, &e);
	wtable_close_all(wt);
	assert_int_equal(stats_of(wt).kv_blocks, KV_BLOCK_BUDGET);
	assert_int_equal(stats_of(wt).rejected, 3);
	wtable_free(wt);
}

static struct cs_event gpu_ev(uint64_t ts, uint8_t op, uint64_t start, uint64_t end,
			      uint64_t bytes, uint16_t kind)
{
	struct cs_event e = { 0 };

	e.type = CS_EV_GPU;
	e.tgid = 42;
	e.ts_ns = ts;
	e.gpu.op = op;
	e.gpu.start = start;
	e.gpu.end = end;
	e.gpu.busy_ns = end > start && op != CS_GPU_ALLOC && op != CS_GPU_RELEASE ? end - start : 0;
	e.gpu.bytes = bytes;
	e.gpu.size = op == CS_GPU_ALLOC || op == CS_GPU_RELEASE ? bytes : 0;
	e.gpu.count = op != CS_GPU_DROPPED;
	e.gpu.kind = kind;
	return e;
}

/* A bin of the library's batches: count records begun in [start, end),
 * busy ns of run time in it. */
static struct cs_event gpu_bin(uint64_t ts, uint8_t op, uint64_t start, uint64_t end,
			       uint32_t count, uint64_t busy, uint64_t bytes)
{
	struct cs_event e = gpu_ev(ts, op, start, end, bytes, op == CS_GPU_MEMCPY);

	e.gpu.count = count;
	e.gpu.busy_ns = busy;
	return e;
}

/* Bins carry whatever the process wrote: counts past the bound, busy time
 * no span holds, allocation bins whose bytes are not count x size. */
static void wtable_add__forged_gpu_bins__rejected(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, NULL, &rows);
	struct wtable_stats st;
	struct cs_event e;

	(void)state;
	e = gpu_bin(T0 + 50 * MS, CS_GPU_KERNEL, T0 + 10 * MS, T0 + 11 * MS, 7, 3 * MS, 0);
	wtable_add(wt, &e);					/* 3 streams: counted */
	e = gpu_bin(T0 + 50 * MS, CS_GPU_KERNEL, T0 + 10 * MS, T0 + 11 * MS,
		    GPU_MAX_COUNT + 1, 0, 0);
	wtable_add(wt, &e);
	e = gpu_bin(T0 + 50 * MS, CS_GPU_KERNEL, T0 + 10 * MS, T0 + 11 * MS, 1,
		    (GPU_MAX_CONCURRENT + 1) * MS, 0);
	wtable_add(wt, &e);
	e = gpu_bin(T0 + 50 * MS, CS_GPU_KERNEL, T0 + 10 * MS, 0, 1, 5, 0);	/* open, busy */
	wtable_add(wt, &e);
	e = gpu_bin(T0 + 50 * MS, CS_GPU_ALLOC, T0 + 10 * MS, T0 + 11 * MS, 3, 0, 4096);
	e.gpu.size = 4096;					/* 3 x 4096 is not 4096 */
	wtable_add(wt, &e);
	e = gpu_bin(T0 + 50 * MS, CS_GPU_ALLOC, T0 + 10 * MS, T0 + 11 * MS, 3, 0, 3 * 4096);
	e.gpu.size = 4096;					/* counted */
	wtable_add(wt, &e);
	wtable_close_all(wt);
	st = stats_of(wt);
	assert_int_equal(st.rejected, 4);
	assert_int_equal(st.rejected_by[REJ_GPU_COUNT], 1);
	assert_int_equal(st.rejected_by[REJ_GPU_TIME], 2);
	assert_int_equal(st.rejected_by[REJ_GPU_BYTES], 1);
	assert_int_equal(rows.n, 2);
	assert_int_equal(rows.r[0].s->gpu_kernels + rows.r[1].s->gpu_kernels, 7);
	assert_int_equal(rows.r[0].s->gpu_kernel_ns + rows.r[1].s->gpu_kernel_ns, 3 * MS);
	assert_int_equal(rows.r[0].s->allocs + rows.r[1].s->allocs, 3);
	assert_int_equal(rows.r[0].live_bytes + rows.r[1].live_bytes, 3 * 4096);
	wtable_free(wt);
}

/* The library's release bins say how old their allocations were: those
 * leave their age cohort, so the old population (the leak test's) is what
 * still lives; a release of an allocation the library did not see leaves
 * none and is counted unseen.  A release older than the clock, or an
 * allocation with a kind, is forged. */
static int64_t old_gpu_objs(bool ages_known)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, NULL, &rows);
	struct wtable_stats st;
	struct cs_event e;
	int64_t old = -1;
	int i;

	e = gpu_bin(T0 + 10 * MS, CS_GPU_ALLOC, T0 + 5 * MS, T0 + 6 * MS, 10, 0, 10 * 4096);
	e.gpu.size = 4096;
	wtable_add(wt, &e);
	e = gpu_bin(T0 + 41 * MS, CS_GPU_RELEASE, T0 + 40 * MS, T0 + 41 * MS, 4,
		    ages_known ? 35 * MS : 0, 4 * 4096);
	e.gpu.size = 4096;
	e.gpu.kind = ages_known ? CS_GPU_AGE_KNOWN : 0;
	wtable_add(wt, &e);
	e = gpu_bin(T0 + 1210 * MS, CS_GPU_ALLOC, T0 + 1200 * MS, T0 + 1201 * MS, 1, 0, 4096);
	wtable_add(wt, &e);
	/* forged */
	e = gpu_bin(T0 + 1210 * MS, CS_GPU_RELEASE, T0 + 1200 * MS, T0 + 1201 * MS, 1,
		    T0 + 1201 * MS, 4096);
	e.gpu.kind = CS_GPU_AGE_KNOWN;
	wtable_add(wt, &e);
	e = gpu_bin(T0 + 1210 * MS, CS_GPU_ALLOC, T0 + 1200 * MS, T0 + 1201 * MS, 1, 0, 4096);
	e.gpu.kind = CS_GPU_AGE_KNOWN;
	wtable_add(wt, &e);
	wtable_close_all(wt);
	st = stats_of(wt);
	assert_int_equal(st.rejected_by[REJ_GPU_TIME], 1);
	assert_int_equal(st.rejected_by[REJ_GPU_KIND], 1);
	assert_int_equal(st.rejected, 2);
	for (i = 0; i < rows.n; i++) {
		if (rows.r[i].start_ns == T0)	/* the releases' window */
			assert_int_equal(rows.r[i].s->unseen_frees, ages_known ? 0 : 4);
		if (rows.r[i].start_ns == T0 + 1200 * MS)
			old = rows.r[i].old_objs;
	}
	wtable_free(wt);
	return old;
}

static void wtable_add__gpu_releases_with_age__old_population_is_what_lives(void **state)
{
	int64_t known, unknown;

	(void)state;
	known = old_gpu_objs(true);
	unknown = old_gpu_objs(false);
	/* the 10 of 5 ms (and the one of 1200 ms, where the age is short) */
	assert_true(unknown == 10 || unknown == 11);
	assert_int_equal(known, unknown - 4);
}

/* Work that straddles windows is split over them by time (the count where
 * it began, the sums exact); the part of it in windows already closed is
 * folded into the oldest open one; and the run ends at the record's
 * arrival at the latest. */
/* Believed: tgid 42, and only before T0 + 100 ms (as kvref is until it is
 * reaped). */
static bool started_42(uint32_t tgid, uint64_t ts_ns, void *ctx)
{
	(void)ctx;
	return tgid == 42 && ts_ns <= T0 + 100 * MS;
}

/* A record BPF flagged foreign (a process of a user not believed) is
 * rejected before it is anything, whatever its values, unless the caller
 * started the process; unflagged records of any process count. */
static void wtable_add__foreign_probe_records__rejected_unless_started_here(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, NULL, &rows);
	struct wtable_stats st;
	struct cs_event e;
	int i, allocs = 0;

	(void)state;
	wtable_set_limits(wt, &(struct wtable_limits){ .max_keys = 64, .believed = started_42 });
	e = gpu_bin(T0 + 10 * MS, CS_GPU_ALLOC, T0 + 5 * MS, T0 + 6 * MS, 2, 0, 2 * 4096);
	e.gpu.size = 4096;
	e.flags |= CS_F_FOREIGN;
	assert_false(wtable_reject(wt, &e));		/* 42, started here */
	wtable_apply(wt, &e);
	e.tgid = 43;					/* a neighbour's */
	assert_true(wtable_reject(wt, &e));
	e.tgid = 42;
	e.ts_ns = T0 + 150 * MS;			/* after 42 was reaped */
	assert_int_equal(wtable_add(wt, &e), 0);
	e = kv_ev(T0 + 20 * MS, CS_KV_POOL, 16, 0, 73728);
	e.tgid = 43;
	e.flags |= CS_F_FOREIGN;
	wtable_add(wt, &e);
	e = gpu_bin(T0 + 30 * MS, CS_GPU_ALLOC, T0 + 25 * MS, T0 + 26 * MS, 1, 0, 4096);
	e.tgid = 44;					/* unflagged: believed */
	e.gpu.size = 4096;
	wtable_add(wt, &e);
	wtable_close_all(wt);
	st = stats_of(wt);
	assert_int_equal(st.rejected, 3);
	assert_int_equal(st.rejected_by[REJ_UNTRUSTED], 3);
	assert_string_equal(usdt_reject_name(REJ_UNTRUSTED), "untrusted");
	assert_int_equal(st.kv_blocks, 0);
	for (i = 0; i < rows.n; i++) {
		assert_int_not_equal(rows.r[i].acc->key.tgid, 43);
		allocs += (int)rows.r[i].s->allocs;
	}
	assert_int_equal(allocs, 3);
	wtable_free(wt);
}

/* Releases of more than a key holds (memory from before the daemon, or no
 * allocation at all) stop its live count at zero and are counted, so a
 * later leak is not hidden under a negative figure; sums saturate. */
static void wtable_add__release_past_live__stops_at_zero_counted(void **state)
{
	struct wtable *wt = wtable_new(T0, WIN, NULL, NULL, NULL);
	struct cs_event e;
	struct acc *a;
	int i;

	(void)state;
	e = gpu_bin(T0 + 10 * MS, CS_GPU_ALLOC, T0 + 5 * MS, T0 + 6 * MS, 1, 0, 4096);
	e.gpu.size = 4096;
	wtable_add(wt, &e);
	for (i = 0; i < 3; i++) {
		e = gpu_bin(T0 + 20 * MS, CS_GPU_RELEASE, T0 + 15 * MS, T0 + 16 * MS, 1000, 0,
			    1000 * (uint64_t)(GPU_MAX_BYTES / 1000));
		e.gpu.size = GPU_MAX_BYTES / 1000;
		wtable_add(wt, &e);
	}
	assert_int_equal(stats_of(wt).rejected, 0);
	assert_int_equal(stats_of(wt).gpu_release_unmatched, 3);
	a = find_key(wt, 42, GPU_KEY_MEMORY);
	assert_non_null(a);
	assert_int_equal(a->live_objs, 0);
	assert_int_equal(a->live_bytes, 0);
	/* a leak after it shows from zero */
	e = gpu_bin(T0 + 30 * MS, CS_GPU_ALLOC, T0 + 25 * MS, T0 + 26 * MS, 2, 0, 2 * 4096);
	e.gpu.size = 4096;
	wtable_add(wt, &e);
	assert_int_equal(a->live_objs, 2);
	assert_int_equal(a->live_bytes, 2 * 4096);
	wtable_free(wt);

	assert_true(sat_add_i64(INT64_MAX - 1, 5) == INT64_MAX);
	assert_true(sat_add_i64(INT64_MIN + 1, -5) == INT64_MIN);
	assert_true(sat_sub_i64(INT64_MIN + 1, 5) == INT64_MIN);
	assert_true(sat_add_u64(UINT64_MAX - 1, 5) == UINT64_MAX);
	assert_true(sat_add_i64(-3, 5) == 2);
}

static bool only_43_alive(uint32_t tgid, void *ctx)
{
	(void)ctx;
	return tgid == 43;
}

/* Device memory and a KV pool die with their process: the keys of an
 * exited one are forgotten, not carried into an others key where a
 * neighbour's forged figures would stay. */
static void wtable_close__exited_gpu_and_kv_keys__forgotten(void **state)
{
	struct wtable *wt = wtable_new(T0, WIN, NULL, NULL, NULL);
	struct wtable_stats st;
	struct cs_event e;

	(void)state;
	wtable_set_limits(wt, &(struct wtable_limits){ .max_keys = 64, .alive = only_43_alive });
	e = gpu_bin(T0 + 10 * MS, CS_GPU_ALLOC, T0 + 5 * MS, T0 + 6 * MS, 4, 0, 4 * 4096);
	e.gpu.size = 4096;
	wtable_add(wt, &e);				/* 42: exits */
	e.tgid = 43;
	wtable_add(wt, &e);				/* 43: lives */
	e = kv_ev(T0 + 20 * MS, CS_KV_POOL, 16, 0, 73728);
	e.tgid = 42;
	wtable_add(wt, &e);				/* 42's pool */
	wtable_close_until(wt, T0 + 300 * MS);
	assert_int_equal(stats_of(wt).kv_blocks, 16);
	wtable_close_until(wt, T0 + 5000 * MS + 128 * WIN);
	st = stats_of(wt);
	assert_int_equal(st.keys_exited, 2);
	assert_int_equal(st.kv_blocks, 0);
	assert_null(find_key(wt, 42, GPU_KEY_MEMORY));
	assert_null(find_key(wt, CS_TGID_OTHER, GPU_KEY_MEMORY));
	assert_int_equal(find_key(wt, 43, GPU_KEY_MEMORY)->live_objs, 4);
	wtable_free(wt);
}

static void wtable_add__gpu_run_straddling_windows__split_by_time(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, NULL, &rows);
	uint64_t ns[5] = { 0 }, bytes[5] = { 0 }, count[5] = { 0 };
	struct wtable_stats st;
	struct cs_event e;
	int i;

	(void)state;
	/* a copy over windows 0, 1, 2: 10 + 100 + 30 ms, 1400001 bytes */
	e = gpu_ev(T0 + 240 * MS, CS_GPU_MEMCPY, T0 + 90 * MS, T0 + 230 * MS, 1400001, 1);
	wtable_add(wt, &e);
	wtable_close_until(wt, T0 + 300 * MS);		/* windows 0 to 2 closed */
	/* a kernel from window 1 to 3, reported in 3: late; windows 1 and 2
	 * are closed, its 250 ms all go to window 3 */
	e = gpu_ev(T0 + 360 * MS, CS_GPU_KERNEL, T0 + 100 * MS, T0 + 350 * MS, 0, 0);
	wtable_add(wt, &e);
	/* a kernel that claims to run on past its report: cut there */
	e = gpu_ev(T0 + 420 * MS, CS_GPU_KERNEL, T0 + 380 * MS, T0 + 900 * MS, 0, 0);
	wtable_add(wt, &e);
	wtable_close_all(wt);
	st = stats_of(wt);
	assert_int_equal(st.gpu_split, 3);
	assert_int_equal(st.gpu_late, 1);
	assert_int_equal(st.events, 3);
	for (i = 0; i < rows.n; i++) {
		const struct wrow *r = &rows.r[i];
		unsigned int w = r->window < 4 ? (unsigned int)r->window : 4;

		ns[w] += r->s->gpu_kernel_ns;
		bytes[w] += r->s->gpu_copy_in_bytes;
		count[w] += r->s->gpu_kernels + r->s->gpu_copies;
	}
	assert_int_equal(bytes[0], 1400001ull * 10 / 140);
	assert_int_equal(bytes[1], 1400001ull * 100 / 140);
	assert_int_equal(bytes[0] + bytes[1] + bytes[2], 1400001);
	assert_int_equal(count[0], 1);
	assert_int_equal(count[1] + count[2], 0);
	assert_int_equal(ns[3], 250 * MS + 20 * MS);	/* the late one; 380 to 400 */
	assert_int_equal(ns[4], 20 * MS);		/* 400 to its report at 420 */
	assert_int_equal(count[3], 2);
	wtable_free(wt);
}

/* Bins of several batches, delivered out of order while their windows
 * are open, each land in the window they ran in. */
static void wtable_add__gpu_bins_out_of_order__each_in_its_window(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, NULL, &rows);
	uint64_t ns[3] = { 0 };
	struct cs_event e;
	int i;

	(void)state;
	e = gpu_bin(T0 + 190 * MS, CS_GPU_KERNEL, T0 + 150 * MS, T0 + 151 * MS, 4, 800000, 0);
	wtable_add(wt, &e);
	e = gpu_bin(T0 + 191 * MS, CS_GPU_KERNEL, T0 + 40 * MS, T0 + 41 * MS, 2, 300000, 0);
	wtable_add(wt, &e);
	e = gpu_bin(T0 + 192 * MS, CS_GPU_KERNEL, T0 + 99 * MS + MS / 2, T0 + 100 * MS + MS / 2,
		    1, 1000000, 0);			/* straddles: half and half */
	wtable_add(wt, &e);
	wtable_close_all(wt);
	assert_int_equal(stats_of(wt).gpu_late, 0);
	for (i = 0; i < rows.n; i++)
		if (rows.r[i].window < 3)
			ns[rows.r[i].window] += rows.r[i].s->gpu_kernel_ns;
	assert_int_equal(ns[0], 300000 + 500000);
	assert_int_equal(ns[1], 800000 + 500000);
	wtable_free(wt);
}

/* CUPTI values come from the traced process: end before start, a span of
 * days, exabyte copies and unknown kinds are refused, not summed. */
static void wtable_add__forged_gpu_records__rejected_sums_bounded(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, NULL, &rows);
	struct wtable_stats st;
	struct cs_event e;
	int i, kernels = 0;

	(void)state;
	e = gpu_ev(T0 + 1, CS_GPU_KERNEL, 1000, 3000, 0, 0);		/* counted */
	wtable_add(wt, &e);
	e = gpu_ev(T0 + 2, CS_GPU_KERNEL, 5000, 0, 0, 0);		/* open: no time */
	wtable_add(wt, &e);
	e = gpu_ev(T0 + 3, CS_GPU_KERNEL, 3000, 1000, 0, 0);		/* end < start */
	wtable_add(wt, &e);
	e = gpu_ev(T0 + 4, CS_GPU_KV_KERNEL, 1, UINT64_MAX, 0, 0);	/* 584 years */
	wtable_add(wt, &e);
	e = gpu_ev(T0 + 5, CS_GPU_MEMCPY, 10, 20, GPU_MAX_BYTES + 1, 1);
	wtable_add(wt, &e);
	e = gpu_ev(T0 + 6, CS_GPU_MEMCPY, 10, 20, 4096, GPU_MEMCPY_KINDS);
	wtable_add(wt, &e);
	e = gpu_ev(T0 + 7, CS_GPU_MEMCPY, 10, 20, 4096, 2);		/* counted */
	wtable_add(wt, &e);
	e = gpu_ev(T0 + 8, CS_GPU_ALLOC, 30, 30, UINT64_MAX, 0);
	wtable_add(wt, &e);
	e = gpu_ev(T0 + 9, CS_GPU_RELEASE, 30, 30, 1ull << 63, 0);
	wtable_add(wt, &e);
	e = gpu_ev(T0 + 10, CS_GPU_KERNEL, 1000, 2000, 0, 0);	/* stream too wide */
	e.flags = CS_F_RANGE;
	wtable_add(wt, &e);
	e = gpu_ev(T0 + 11, CS_GPU_DROPPED, 0, 0, UINT64_MAX, 0);
	assert_true(wtable_reject(wt, &e));
	e = gpu_ev(T0 + 11, CS_GPU_DROPPED, 0, 0, 12, 0);
	assert_false(wtable_reject(wt, &e));
	wtable_close_all(wt);
	st = stats_of(wt);
	assert_int_equal(st.rejected, 8);
	assert_int_equal(st.rejected_by[REJ_GPU_TIME], 2);
	assert_int_equal(st.rejected_by[REJ_GPU_BYTES], 4);
	assert_int_equal(st.rejected_by[REJ_GPU_KIND], 1);
	assert_int_equal(st.rejected_by[REJ_RANGE], 1);
	for (i = 0; i < rows.n; i++) {
		const struct wrow *r = &rows.r[i];

		if (!strcmp(r->acc->name, "gpu-kernels")) {
			kernels = 1;
			assert_int_equal(r->s->gpu_kernels, 2);
			assert_int_equal(r->s->gpu_kernel_ns, 2000);
		} else {
			assert_string_equal(r->acc->name, "gpu-memory");
			assert_int_equal(r->s->gpu_copies, 1);
			assert_int_equal(r->s->gpu_copy_out_bytes, 4096);
			assert_int_equal(r->s->allocs + r->s->frees, 0);
			assert_int_equal(r->live_bytes, 0);
		}
	}
	assert_int_equal(rows.n, 2);	/* no gpu-kv-kernels key */
	assert_true(kernels);
	wtable_free(wt);
}

/* GPU work is windowed by when it ran, not when CUPTI delivered it: a
 * kernel delivered a window late lands in the window it began in while
 * that is open; once its window has closed it is counted late and folded
 * into the oldest open one.  A start after the record came, or far
 * before it (CUPTI's own clock, a forged value), leaves it at arrival. */
static void wtable_add__gpu_records__windowed_by_run_time(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, NULL, &rows);
	uint64_t in_window[5] = { 0 };	/* the last: windows from 4 on */
	struct wtable_stats st;
	struct cs_event e;
	int i;

	(void)state;
	/* ran in window 0, delivered in window 1: window 0 */
	e = gpu_ev(T0 + 150 * MS, CS_GPU_KERNEL, T0 + 20 * MS, T0 + 21 * MS, 0, 0);
	wtable_add(wt, &e);
	/* delivered in window 1, ran in it */
	e = gpu_ev(T0 + 160 * MS, CS_GPU_KERNEL, T0 + 120 * MS, T0 + 121 * MS, 0, 0);
	wtable_add(wt, &e);
	wtable_close_until(wt, T0 + 202 * MS);	/* windows 0 and 1 closed */
	/* ran in window 0, delivered in window 2: late, in window 2 */
	e = gpu_ev(T0 + 250 * MS, CS_GPU_KERNEL, T0 + 50 * MS, T0 + 51 * MS, 0, 0);
	wtable_add(wt, &e);
	/* a start after arrival (window 3), a start on CUPTI's own clock
	 * (since 1970, window 3), and one 61 s before arrival (window 613):
	 * each at its arrival */
	e = gpu_ev(T0 + 310 * MS, CS_GPU_KERNEL, T0 + 390 * MS, T0 + 391 * MS, 0, 0);
	wtable_add(wt, &e);
	e = gpu_ev(T0 + 320 * MS, CS_GPU_KERNEL, 1764700000000000000ull,
		   1764700000000001000ull, 0, 0);
	wtable_add(wt, &e);
	e = gpu_ev(T0 + 61320 * MS, CS_GPU_KERNEL, T0 + 320 * MS, T0 + 321 * MS, 0, 0);
	wtable_add(wt, &e);
	wtable_close_all(wt);
	st = stats_of(wt);
	assert_int_equal(st.gpu_run_timed, 3);
	assert_int_equal(st.gpu_late, 1);
	assert_int_equal(st.late, 1);
	for (i = 0; i < rows.n; i++) {
		assert_string_equal(rows.r[i].name, "gpu-kernels");
		in_window[rows.r[i].window < 4 ? rows.r[i].window : 4] += rows.r[i].s->gpu_kernels;
	}
	assert_int_equal(in_window[0], 1);
	assert_int_equal(in_window[1], 1);
	assert_int_equal(in_window[2], 1);
	assert_int_equal(in_window[3], 2);
	assert_int_equal(in_window[4], 1);
	wtable_free(wt);
}

/* Rings are drained one CPU after another: CPU 1's ring, read first, holds
 * the release; CPU 0's, read next, the use that came before it.  In
 * timestamp order the block is free again, and no leak stays behind. */
static void wtable_add__kv_release_read_before_use_across_cpus__block_freed(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, NULL, &rows);
	struct cs_event e;

	(void)state;
	e = kv_ev(T0 + 1, CS_KV_POOL, 8, 0, 73728);
	wtable_add(wt, &e);
	/* CPU 1's ring: a release, then another use and its release */
	e = kv_ev(T0 + 2000, CS_KV_RELEASE, 3, 1, 0);
	wtable_add(wt, &e);
	e = kv_ev(T0 + 3000, CS_KV_USE, 4, 1, 0);
	wtable_add(wt, &e);
	/* CPU 0's ring: the uses before those, and block 4's release */
	e = kv_ev(T0 + 1000, CS_KV_USE, 3, 0, 0);
	wtable_add(wt, &e);
	e = kv_ev(T0 + 4000, CS_KV_RELEASE, 4, 0, 0);
	wtable_add(wt, &e);
	wtable_close_all(wt);
	assert_int_equal(rows.n, 1);
	assert_int_equal(rows.r[0].s->allocs, 2);
	assert_int_equal(rows.r[0].s->frees, 2);
	assert_int_equal(rows.r[0].live_objs, 0);
	assert_int_equal(rows.r[0].s->remote_frees, 2);
	assert_in_range(rows.r[0].lifetime_p50_ns, 512, 1023);
	assert_int_equal(stats_of(wt).rejected, 0);
	wtable_free(wt);
}

/* The same across a window's end: the use in window 0 on CPU 0, read after
 * the release in window 1 on CPU 1; window 0 closes with the block in use,
 * window 1 with it free, and one block twice taken up and given back in
 * an interleaving of both rings ends free too. */
/* No tick for three windows (the daemon's loop stalled): an event of window
 * 3 closes windows 0 and 1 first, each after its queued kv records were
 * applied, so the rows come in window order and none is late. */
static void wtable_add__event_past_two_open_windows__closes_them_kv_first(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, NULL, &rows);
	struct cs_event e;
	int i;

	(void)state;
	e = kv_ev(T0 + 1, CS_KV_POOL, 8, 0, 73728);
	wtable_add(wt, &e);
	e = kv_ev(T0 + 10 * MS, CS_KV_USE, 2, 0, 0);
	wtable_add(wt, &e);
	e = alloc_ev(T0 + 20 * MS, 0x1000, 0, 192, 0xaa);
	wtable_add(wt, &e);
	e = kv_ev(T0 + WIN + 10 * MS, CS_KV_USE, 3, 0, 0);
	wtable_add(wt, &e);
	assert_int_equal(rows.n, 0);
	e = alloc_ev(T0 + 3 * WIN + 10 * MS, 0x2000, 0, 192, 0xaa);
	wtable_add(wt, &e);
	/* windows 0 (kv and slab) and 1 (kv) closed; 2 and 3 still open */
	assert_int_equal(rows.n, 3);
	for (i = 0; i < rows.n; i++)
		assert_true(rows.r[i].window == (i < 2 ? 0 : 1));
	for (i = 0; i < rows.n; i++)
		assert_int_equal(rows.r[i].s->allocs, 1);
	assert_int_equal(stats_of(wt).windows, 2);
	assert_int_equal(stats_of(wt).late, 0);
	wtable_close_all(wt);
	assert_int_equal(rows.n, 4);
	assert_int_equal(rows.r[3].window, 3);
	wtable_free(wt);
}

static void wtable_close_until__kv_out_of_order_over_window_end__ordered(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, NULL, &rows);
	struct cs_event e;

	(void)state;
	e = kv_ev(T0 + 1, CS_KV_POOL, 8, 0, 73728);
	wtable_add(wt, &e);
	e = kv_ev(T0 + WIN + 10, CS_KV_RELEASE, 3, 1, 0);	/* CPU 1's ring */
	wtable_add(wt, &e);
	e = kv_ev(T0 + WIN + 20, CS_KV_USE, 5, 1, 0);		/* block 5, use 2 */
	wtable_add(wt, &e);
	e = kv_ev(T0 + WIN + 40, CS_KV_RELEASE, 5, 1, 0);	/* block 5, release 2 */
	wtable_add(wt, &e);
	e = kv_ev(T0 + WIN - 10, CS_KV_USE, 3, 0, 0);		/* CPU 0's ring */
	wtable_add(wt, &e);
	e = kv_ev(T0 + WIN - 5, CS_KV_USE, 5, 0, 0);		/* block 5, use 1 */
	wtable_add(wt, &e);
	e = kv_ev(T0 + WIN + 15, CS_KV_RELEASE, 5, 0, 0);	/* block 5, release 1 */
	wtable_add(wt, &e);
	wtable_close_until(wt, T0 + WIN + 2 * MS);
	assert_int_equal(rows.n, 1);
	assert_int_equal(rows.r[0].window, 0);
	assert_int_equal(rows.r[0].s->allocs, 2);
	assert_int_equal(rows.r[0].live_objs, 2);
	wtable_close_all(wt);
	assert_int_equal(rows.n, 2);
	assert_int_equal(rows.r[1].window, 1);
	assert_int_equal(rows.r[1].s->allocs, 1);
	assert_int_equal(rows.r[1].s->frees, 3);
	assert_int_equal(rows.r[1].live_objs, 0);
	assert_int_equal(stats_of(wt).late, 0);
	wtable_free(wt);
}

/* A flood of kv records: the queue stays at KV_QUEUE_MAX, applies what it
 * holds in order when full, and loses none. */
static void wtable_add__kv_flood__queue_bounded_nothing_lost(void **state)
{
	struct rows rows = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, keep_row, NULL, &rows);
	struct cs_event e;
	uint32_t i;

	(void)state;
	e = kv_ev(T0 + 1, CS_KV_POOL, 8, 0, 4096);
	wtable_add(wt, &e);
	for (i = 0; i < KV_QUEUE_MAX + 10; i++) {
		e = kv_ev(T0 + 10 + 2 * i, i & 1 ? CS_KV_RELEASE : CS_KV_USE, 1, 0, 0);
		assert_int_equal(wtable_add(wt, &e), 0);
	}
	assert_int_equal(stats_of(wt).kv_queue_full, 1);
	wtable_close_all(wt);
	assert_int_equal(rows.n, 1);
	assert_int_equal(rows.r[0].s->allocs, (KV_QUEUE_MAX + 10) / 2);
	assert_int_equal(rows.r[0].s->frees, (KV_QUEUE_MAX + 10) / 2);
	assert_int_equal(rows.r[0].live_objs, 0);
	assert_int_equal(stats_of(wt).events, KV_QUEUE_MAX + 11);
	wtable_free(wt);
}

/* What the table told of the keys that left it. */
struct gone_log {
	struct wkey key[8], into[8];
	bool merged[8];
	int n;
};

static void log_gone(const struct wkey *key, const struct wkey *into, void *ctx)
{
	struct gone_log *g = ctx;

	assert_true(g->n < 8);
	g->key[g->n] = *key;
	g->merged[g->n] = into != NULL;
	if (into)
		g->into[g->n] = *into;
	g->n++;
}

/* An idle key with nothing live is forgotten, an exited process's key is
 * merged into its others key: key_gone is told of each, once. */
static void wtable_close__keys_leave__key_gone_told_each(void **state)
{
	struct gone_log g = { .n = 0 };
	struct wtable *wt = wtable_new(T0, WIN, NULL, NULL, &g);
	struct cs_event e;
	int i, merged = -1, dropped = -1;

	(void)state;
	wtable_set_limits(wt, &(struct wtable_limits){ .max_keys = 64, .alive = none_alive,
							 .key_gone = log_gone });
	e = alloc_ev(T0 + 1, 0x1000, 0, 64, 1);	/* tgid 42: gone, one live object */
	wtable_add(wt, &e);
	e = alloc_ev(T0 + 2, 0x2000, 0, 64, 1);	/* tgid 43: alive, nothing live */
	e.tgid = 43;
	wtable_add(wt, &e);
	e = free_ev(T0 + 3, 0x2000, 0, 0, 1);
	e.tgid = 43;
	wtable_add(wt, &e);
	wtable_close_until(wt, T0 + 61000 * MS + 64 * WIN);
	assert_int_equal(g.n, 2);
	for (i = 0; i < g.n; i++) {
		if (g.merged[i])
			merged = i;
		else
			dropped = i;
	}
	assert_true(merged >= 0 && dropped >= 0);
	assert_int_equal(g.key[merged].tgid, 42);
	assert_int_equal(g.into[merged].tgid, CS_TGID_OTHER);
	assert_int_equal(g.into[merged].id, g.key[merged].id);
	assert_int_equal(g.key[dropped].tgid, 43);
	assert_null(find_key(wt, 42, FILP));
	assert_null(find_key(wt, 43, FILP));
	wtable_free(wt);
	assert_int_equal(g.n, 2);	/* freeing the table tells of nothing */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(wtable_add__allocs_and_frees__row_counts_them),
		cmocka_unit_test(wtable_close_until__next_window_events__not_in_live_of_closed),
		cmocka_unit_test(wtable_add__event_of_closed_window__counted_late),
		cmocka_unit_test(wtable_add__sampled_records__counts_weighted),
		cmocka_unit_test(wtable_close__old_frees_during_rise__counted_with_it),
		cmocka_unit_test(wtable_close__keys_of_a_cache_rise__rows_carry_their_sum),
		cmocka_unit_test(wtable_close__drops_during_rise__row_says_so),
		cmocka_unit_test(wtable_add__unseen_free_of_sampled_object__old_weight),
		cmocka_unit_test(wtable_add__far_future_event__closes_windows_between),
		cmocka_unit_test(wtable_add__page_refaults__counted_per_file),
		cmocka_unit_test(wtable_add__same_inode_number_new_generation__separate_keys),
		cmocka_unit_test(wtable_close__idle_key_without_live__forgotten),
		cmocka_unit_test(wtable_close__keys_leave__key_gone_told_each),
		cmocka_unit_test(topk_entropy__uniform_sizes__log2_of_count),
		cmocka_unit_test(topk_add__more_values_than_slots__rest_in_other),
		cmocka_unit_test(hist_percentile__known_buckets__median_inside_bucket),
		cmocka_unit_test(wtable_add__many_keys__table_grows_and_finds_all),
		cmocka_unit_test(wtable_add__past_key_budget__merged_into_others_nothing_lost),
		cmocka_unit_test(wtable_close__exited_process__key_merged_into_others),
		cmocka_unit_test(wtable_add__one_user_fills_budget__others_keep_their_keys),
		cmocka_unit_test(wtable_close__idle_family__merged_with_its_ages),
		cmocka_unit_test(wtable_add__kv_blocks__in_use_lifetimes_and_swap_refaults),
		cmocka_unit_test(wtable_add__kv_pool_in_gpu_memory__named_kv_pool_gpu),
		cmocka_unit_test(wtable_add__unseen_frees__counted_apart_from_locality_and_lifetime),
		cmocka_unit_test(wtable_add__alloc_replacing_live_object__unseen_free_to_old_key),
		cmocka_unit_test(wtable_close__leak_amid_churn__old_population_rises),
		cmocka_unit_test(wtable_close__balanced_churn__no_old_objects),
		cmocka_unit_test(history_old_objs__cohorts_and_older__counted_by_cutoff),
		cmocka_unit_test(wtable_add__kv_swap_in_soon_after_swap_out__repeat),
		cmocka_unit_test(wtable_add__kthread_evictions__one_key_of_its_files),
		cmocka_unit_test(wtable_close__remote_frees_over_a_second__recent_locality),
		cmocka_unit_test(wtable_close__refaults_over_seconds__persistence_evidence),
		cmocka_unit_test(wtable_close__gpu_records__gpu_keys_and_joined_host_row),
		cmocka_unit_test(wtable_close__gpu_of_many_processes__every_host_row_joined),
		cmocka_unit_test(wtable_add__forged_kv_pools__rejected_counted_nothing_allocated),
		cmocka_unit_test(wtable_add__kv_block_outside_pool__rejected_valid_ones_counted),
		cmocka_unit_test(wtable_add__pools_past_block_budget__refused_state_bounded),
		cmocka_unit_test(wtable_add__forged_gpu_records__rejected_sums_bounded),
		cmocka_unit_test(wtable_add__gpu_records__windowed_by_run_time),
		cmocka_unit_test(wtable_add__forged_gpu_bins__rejected),
		cmocka_unit_test(wtable_add__gpu_releases_with_age__old_population_is_what_lives),
		cmocka_unit_test(wtable_add__gpu_run_straddling_windows__split_by_time),
		cmocka_unit_test(wtable_add__foreign_probe_records__rejected_unless_started_here),
		cmocka_unit_test(wtable_add__release_past_live__stops_at_zero_counted),
		cmocka_unit_test(wtable_close__exited_gpu_and_kv_keys__forgotten),
		cmocka_unit_test(wtable_add__gpu_bins_out_of_order__each_in_its_window),
		cmocka_unit_test(wtable_add__kv_release_read_before_use_across_cpus__block_freed),
		cmocka_unit_test(wtable_close_until__kv_out_of_order_over_window_end__ordered),
		cmocka_unit_test(wtable_add__event_past_two_open_windows__closes_them_kv_first),
		cmocka_unit_test(wtable_add__kv_flood__queue_bounded_nothing_lost),
	};

	return cmocka_run_group_tests_name("window", tests, NULL, NULL);
}
