// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the feature vectors (daemon/features.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>
#include "../daemon/features.h"

#define WIN_NS 100000000ull

static struct acc acc;
static struct wslot slot;
static struct wrow row;

static void reset(int domain)
{
	memset(&acc, 0, sizeof(acc));
	memset(&slot, 0, sizeof(slot));
	memset(&row, 0, sizeof(row));
	acc.key.domain = domain;
	wrow_of_key(&row, &acc);
	row.s = &slot;
}

static void features_from_row__slab_window__scaled_by_fixed_ranges(void **state)
{
	struct fvec f;
	struct evidence e;

	(void)state;
	reset(DOM_SLAB);
	slot.allocs = 600;
	slot.frees = 400;		/* 1000 ops in 100 ms: 10^4 ops/s */
	slot.same_cpu_frees = 100;
	slot.remote_frees = 300;
	slot.cross_numa = 250;
	row.top_site_share = 0.75;
	row.size_entropy = 2.0;
	row.same_size_share = 0.5;
	row.live_objs = 200;
	row.growth_per_s = 2000;
	row.grew_windows = 7;
	assert_true(features_from_row(&row, WIN_NS, &f, &e));
	assert_true(fabs(f.raw[FEAT_FREQ] - 10000) < 1e-6);
	assert_true(fabs(f.v[FEAT_FREQ] - log10(10001) / log10(1000001)) < 1e-12);
	assert_true(f.v[FEAT_HOT] == 0.75);
	assert_true(fabs(f.v[FEAT_ENTROPY] - 0.25) < 1e-12);
	assert_true(fabs(f.v[FEAT_LOCALITY] - 0.25) < 1e-12);
	assert_true(fabs(f.v[FEAT_NUMA] - 0.25) < 1e-12);
	assert_int_equal(e.ops, 1000);
	assert_true(fabs(e.free_ratio - 400.0 / 600) < 1e-12);
	assert_int_equal(e.r->live_objs, 200);
	assert_int_equal(e.r->grew_windows, 7);
	assert_true(e.r->growth_per_s == 2000);
}

static void features_from_row__extremes__clamped_to_unit_interval(void **state)
{
	struct fvec f;
	struct evidence e;
	int i;

	(void)state;
	reset(DOM_SLAB);
	slot.allocs = 1000000000;	/* 10^10 ops/s, beyond the range */
	row.size_entropy = 12;		/* beyond 8 bits */
	assert_true(features_from_row(&row, WIN_NS, &f, &e));
	assert_true(f.v[FEAT_FREQ] == 1.0);
	assert_true(f.v[FEAT_ENTROPY] == 1.0);
	/* no frees: nothing freed remotely */
	assert_true(f.v[FEAT_LOCALITY] == 1.0);
	for (i = 0; i < FEAT_DIM; i++)
		assert_true(f.v[i] >= 0 && f.v[i] <= 1);
}

static void features_from_row__little_traffic__no_vector(void **state)
{
	struct fvec f = { .v = { 9 } };
	struct evidence e;

	(void)state;
	reset(DOM_SLAB);
	slot.allocs = FEAT_MIN_OPS - 1;
	assert_false(features_from_row(&row, WIN_NS, &f, &e));
	assert_true(f.v[0] == 9);	/* untouched */
	slot.allocs = FEAT_MIN_OPS;
	assert_true(features_from_row(&row, WIN_NS, &f, &e));
}

static void features_from_row__page_refault__vector_with_refault_share(void **state)
{
	struct fvec f;
	struct evidence e;

	(void)state;
	reset(DOM_PAGE);
	slot.page_adds = 2;	/* below the traffic floor, but it refaulted */
	slot.refaults = 1;
	slot.refault_pages = 1;
	assert_true(features_from_row(&row, WIN_NS, &f, &e));
	assert_true(e.refault_share == 0.5);
	slot.page_adds = 512;
	slot.page_dels = 512;
	slot.refault_pages = 384;
	assert_true(features_from_row(&row, WIN_NS, &f, &e));
	assert_int_equal(e.ops, 1024);
	assert_true(e.refault_share == 0.75);
	assert_true(fabs(f.raw[FEAT_FREQ] - 10240) < 1e-6);
}

/* A window with no operation (a kv pool's window of repeated takings-up
 * only) still makes a vector while the old population rises: every feature
 * must be a number in [0, 1], not 0/0 (found by tests/fuzz/fuzz_ingest) */
static void features_from_row__no_ops_old_rising__features_in_unit_interval(void **state)
{
	struct fvec f;
	struct evidence e;
	int i;

	(void)state;
	reset(DOM_KV);
	row.old_rise = 40;
	row.old_rise_s = 3.0;
	assert_true(features_from_row(&row, WIN_NS, &f, &e));
	assert_int_equal(e.ops, 0);
	for (i = 0; i < FEAT_DIM; i++) {
		assert_false(isnan(f.raw[i]));
		assert_true(f.v[i] >= 0 && f.v[i] <= 1);
	}
	assert_true(f.v[FEAT_NUMA] == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(features_from_row__slab_window__scaled_by_fixed_ranges),
		cmocka_unit_test(features_from_row__extremes__clamped_to_unit_interval),
		cmocka_unit_test(features_from_row__little_traffic__no_vector),
		cmocka_unit_test(features_from_row__page_refault__vector_with_refault_share),
		cmocka_unit_test(features_from_row__no_ops_old_rising__features_in_unit_interval),
	};

	return cmocka_run_group_tests_name("features", tests, NULL, NULL);
}
