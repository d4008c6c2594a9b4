// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the per-cache sample shifts (daemon/sample.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "../daemon/sample.h"

#define MS 1000000ull
#define BUSY 7		/* slots */
#define QUIET 300
#define OTHER 901

static struct sampler s;

/* rate[i]: traffic of slot i per second; 100 ms ticks for ms milliseconds:
 * what arrives is the traffic thinned by each slot's current shift. */
static void feed(uint64_t *now, const uint64_t rate[CS_SHIFT_SLOTS], uint64_t ms)
{
	uint64_t t, n;
	unsigned int i;

	for (t = 0; t < ms; t += 100) {
		*now += 100 * MS;
		for (i = 0; i < CS_SHIFT_SLOTS; i++)
			for (n = (rate[i] >> s.slot[i].shift) / 10; n; n--)
				sampler_count(&s, i);
		sampler_update(&s, *now);
	}
}

static uint64_t rates[CS_SHIFT_SLOTS];

static int setup(void **state)
{
	(void)state;
	memset(rates, 0, sizeof(rates));
	return 0;
}

static void sampler__under_budget__every_object(void **state)
{
	uint64_t now = 0;

	(void)state;
	sampler_init(&s, -1, 10, 50000, now);
	rates[BUSY] = 30000;
	rates[QUIET] = 9000;
	feed(&now, rates, 5000);
	assert_int_equal(s.slot[BUSY].shift, 0);
	assert_int_equal(s.slot[QUIET].shift, 0);
	assert_int_equal(s.changes, 0);
	assert_int_equal(s.sampled, 0);
}

static void sampler__one_busy_cache__thinned_at_once_quiet_one_kept(void **state)
{
	uint64_t now = 0;

	(void)state;
	sampler_init(&s, -1, 10, 50000, now);
	/* 1.6 M/s of one cache beside 2 000/s of another: the busy one is
	 * brought to ~48 000/s in one tick, the quiet one keeps every object */
	rates[BUSY] = 1600000;
	rates[QUIET] = 2000;
	feed(&now, rates, 100);
	assert_int_equal(s.slot[BUSY].shift, 6);
	assert_int_equal(s.slot[QUIET].shift, 0);
	assert_int_equal(s.sampled, 1);
	feed(&now, rates, 5000);
	assert_int_equal(s.slot[BUSY].shift, 6);
	assert_int_equal(s.slot[QUIET].shift, 0);
	assert_int_equal(s.changes, 1);
}

static void sampler__several_busy_caches__budget_shared(void **state)
{
	uint64_t now = 0, sent = 0;
	unsigned int i;

	(void)state;
	sampler_init(&s, -1, 10, 50000, now);
	rates[BUSY] = 800000;
	rates[BUSY + 1] = 400000;
	rates[QUIET] = 5000;
	feed(&now, rates, 1000);
	/* every busy cache thinned, the total within the budget */
	assert_true(s.slot[BUSY].shift > s.slot[BUSY + 1].shift);
	assert_true(s.slot[BUSY + 1].shift > 0);
	assert_int_equal(s.slot[QUIET].shift, 0);
	for (i = 0; i < CS_SHIFT_SLOTS; i++)
		sent += rates[i] >> s.slot[i].shift;
	assert_true(sent <= 50000);
	assert_true(sent >= 25000);
}

static void sampler__rate_falls__lowered_after_a_while(void **state)
{
	uint64_t now = 0;

	(void)state;
	sampler_init(&s, -1, 10, 50000, now);
	/* alone, 1 in 32 brings it to the budget exactly */
	rates[BUSY] = 1600000;
	feed(&now, rates, 100);
	assert_int_equal(s.slot[BUSY].shift, 5);
	/* quiet: not lowered within the first 2 s ... */
	rates[BUSY] = 1000;
	feed(&now, rates, 2000);
	assert_int_equal(s.slot[BUSY].shift, 5);
	/* ... then back to every object */
	feed(&now, rates, 1500);
	assert_int_equal(s.slot[BUSY].shift, 0);
	assert_int_equal(s.peak_shift, 5);
	assert_int_equal(s.sampled, 0);
}

static void sampler__rate_near_budget__does_not_flap(void **state)
{
	uint64_t now = 0;

	(void)state;
	sampler_init(&s, -1, 10, 50000, now);
	/* 80 k/s: 1 in 2 fits; back to 1 in 1 would not: it stays */
	rates[BUSY] = 80000;
	feed(&now, rates, 20000);
	assert_int_equal(s.slot[BUSY].shift, 1);
	assert_int_equal(s.changes, 1);
}

/* Allocations traced 1/4 of the time (duty.h), a 25 ms slice of each
 * 100 ms: 40 000/s of one cache arrive as 40 000/s for a quarter of the
 * time, 10 000/s on average.  On the wall clock, with the budget cut to a
 * quarter (12 500/s), spans inside a slice read 40 000 and thin it 1 in 4
 * more than its share; on the clock that runs while the program is
 * attached (*traced), with the whole budget, every object is kept, and a
 * cache past the budget is thinned within one slice. */
static void sliced(uint64_t *now, uint64_t *traced, uint64_t rate, uint64_t ms)
{
	uint64_t t, n;

	for (t = 0; t < ms; t += 25) {
		*now += 25 * MS;
		if (!(t % 100)) {
			if (traced)
				*traced += 25 * MS;
			for (n = (rate >> s.slot[BUSY].shift) / 40; n; n--)
				sampler_count(&s, BUSY);
		}
		sampler_update(&s, traced ? *traced : *now);
	}
}

static void sampler__sampled_in_time__rates_per_second_attached(void **state)
{
	uint64_t now = 0, traced = 0;

	(void)state;
	/* the wall clock and a budget cut to a quarter: thinned 1 in 4 */
	sampler_init(&s, -1, 10, 12500, now);
	sliced(&now, NULL, 40000, 2000);
	assert_int_equal(s.slot[BUSY].shift, 2);
	/* the attached clock and the whole budget: every object */
	sampler_init(&s, -1, 10, 50000, traced);
	sliced(&now, &traced, 40000, 5000);
	assert_int_equal(s.slot[BUSY].shift, 0);
	/* twice the budget: 1 in 2; a burst of 1.6 M/s: thinned in the
	 * first slice of it */
	sliced(&now, &traced, 80000, 2000);
	assert_int_equal(s.slot[BUSY].shift, 1);
	sliced(&now, &traced, 1600000, 100);
	assert_int_equal(s.slot[BUSY].shift, 5);
}

static void sampler__fixed__every_cache_never_changes(void **state)
{
	uint64_t now = 0;

	(void)state;
	sampler_init(&s, 4, 10, 50000, now);
	assert_int_equal(s.slot[OTHER].shift, 4);
	rates[BUSY] = 100000000;
	feed(&now, rates, 1000);
	assert_int_equal(s.slot[BUSY].shift, 4);
	rates[BUSY] = 0;
	feed(&now, rates, 10000);
	assert_int_equal(s.slot[BUSY].shift, 4);
	assert_int_equal(s.changes, 0);
}

static void sampler__beyond_max__clamped(void **state)
{
	uint64_t now = 0;

	(void)state;
	sampler_init(&s, -1, 10, 1000, now);
	rates[BUSY] = 1ull << 32;
	feed(&now, rates, 200);
	assert_int_equal(s.slot[BUSY].shift, 10);
	sampler_init(&s, 12, 10, 1000, now);
	assert_int_equal(s.slot[BUSY].shift, 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(sampler__under_budget__every_object, setup),
		cmocka_unit_test_setup(sampler__one_busy_cache__thinned_at_once_quiet_one_kept, setup),
		cmocka_unit_test_setup(sampler__several_busy_caches__budget_shared, setup),
		cmocka_unit_test_setup(sampler__rate_falls__lowered_after_a_while, setup),
		cmocka_unit_test_setup(sampler__rate_near_budget__does_not_flap, setup),
		cmocka_unit_test_setup(sampler__sampled_in_time__rates_per_second_attached, setup),
		cmocka_unit_test_setup(sampler__fixed__every_cache_never_changes, setup),
		cmocka_unit_test_setup(sampler__beyond_max__clamped, setup),
	};

	return cmocka_run_group_tests_name("sample", tests, NULL, NULL);
}
