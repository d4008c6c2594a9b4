// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the sample-shift controller (daemon/sample.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "../daemon/sample.h"

#define MS 1000000ull

/* Feed rate records/s in 100 ms ticks for ms milliseconds, from *now. */
static unsigned int feed(struct sampler *s, uint64_t *now, uint64_t rate, uint64_t ms)
{
	unsigned int shift = s->shift;
	uint64_t t;

	for (t = 0; t < ms; t += 100) {
		*now += 100 * MS;
		/* what arrives is the traffic thinned by the current shift */
		shift = sampler_update(s, *now, (rate >> shift) / 10);
	}
	return shift;
}

static void sampler__under_budget__every_object(void **state)
{
	struct sampler s;
	uint64_t now = 0;

	(void)state;
	sampler_init(&s, -1, 10, 50000, now);
	assert_int_equal(feed(&s, &now, 40000, 5000), 0);
	assert_int_equal(s.changes, 0);
}

static void sampler__over_budget__raised_at_once_to_fit(void **state)
{
	struct sampler s;
	uint64_t now = 0;

	(void)state;
	sampler_init(&s, -1, 10, 50000, now);
	/* 1.6 M/s: 1 in 32 brings it to the budget; one tick does it */
	assert_int_equal(feed(&s, &now, 1600000, 100), 5);
	assert_int_equal(s.changes, 1);
	/* and it stays there while the rate does */
	assert_int_equal(feed(&s, &now, 1600000, 5000), 5);
	assert_int_equal(s.changes, 1);
}

static void sampler__rate_falls__lowered_one_step_after_a_while(void **state)
{
	struct sampler s;
	uint64_t now = 0;

	(void)state;
	sampler_init(&s, -1, 10, 50000, now);
	feed(&s, &now, 1600000, 100);
	assert_int_equal(s.shift, 5);
	/* quiet: not lowered within the first 2 s ... */
	assert_int_equal(feed(&s, &now, 1000, 2000), 5);
	/* ... one step at a time, then down to every object */
	assert_int_equal(feed(&s, &now, 1000, 1500), 4);
	assert_int_equal(feed(&s, &now, 1000, 30000), 0);
	assert_int_equal(s.peak_shift, 5);
}

static void sampler__rate_near_budget__does_not_flap(void **state)
{
	struct sampler s;
	uint64_t now = 0;

	(void)state;
	sampler_init(&s, -1, 10, 50000, now);
	/* 80 k/s: 1 in 2 fits (40 k/s); back to 1 in 1 would not: stays */
	assert_int_equal(feed(&s, &now, 80000, 20000), 1);
	assert_int_equal(s.changes, 1);
}

static void sampler__fixed__never_changes(void **state)
{
	struct sampler s;
	uint64_t now = 0;

	(void)state;
	sampler_init(&s, 4, 10, 50000, now);
	assert_int_equal(feed(&s, &now, 100000000, 1000), 4);
	assert_int_equal(feed(&s, &now, 0, 10000), 4);
	assert_int_equal(s.changes, 0);
}

static void sampler__beyond_max__clamped(void **state)
{
	struct sampler s;
	uint64_t now = 0;

	(void)state;
	sampler_init(&s, -1, 10, 1000, now);
	assert_int_equal(feed(&s, &now, 1ull << 40, 200), 10);
	sampler_init(&s, 12, 10, 1000, now);
	assert_int_equal(s.shift, 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sampler__under_budget__every_object),
		cmocka_unit_test(sampler__over_budget__raised_at_once_to_fit),
		cmocka_unit_test(sampler__rate_falls__lowered_one_step_after_a_while),
		cmocka_unit_test(sampler__rate_near_budget__does_not_flap),
		cmocka_unit_test(sampler__fixed__never_changes),
		cmocka_unit_test(sampler__beyond_max__clamped),
	};

	return cmocka_run_group_tests_name("sample", tests, NULL, NULL);
}
