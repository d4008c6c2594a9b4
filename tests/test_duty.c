// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of sampling in time (daemon/duty.c): when the
 * kmem_cache_alloc program is attached, with the timer firing on time,
 * late, and an attach refused. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "../daemon/duty.h"

#define MS 1000000ull

/* periods tile the windows: one of a window up to 100 ms, else equal ones */
static void duty__periods__tile_the_windows(void **state)
{
	struct duty u;

	(void)state;
	duty_init(&u, 0, 100 * MS, 1);
	assert_int_equal(u.period_ns, 100 * MS);
	duty_init(&u, 0, 1000 * MS, 1);
	assert_int_equal(u.period_ns, 100 * MS);
	duty_init(&u, 0, 250 * MS, 1);
	assert_int_equal(u.per_window, 3);
	assert_int_equal(u.period_ns, 83333333);
	duty_init(&u, 0, 200 * MS, 1);
	assert_int_equal(u.per_window, 2);
	assert_int_equal(u.period_ns, 100 * MS);
	duty_init(&u, 0, 20 * MS, 1);
	assert_int_equal(u.period_ns, 20 * MS);
	assert_true(u.on);
	assert_int_equal(u.next_ns, 0);
}

/* A quarter: off at once, then one slice of 25 ms in each period, wholly
 * inside it, at offsets that are not all the same; the time attached a
 * quarter of the whole. */
static void duty__quarter__one_slice_a_period_inside_it(void **state)
{
	uint64_t t0 = 5 * MS, now = t0 + 30 * MS, start = 0, first_off = 0, last_off = ~0ull;
	unsigned int slices = 0, offsets_differ = 0;
	struct duty u;
	bool on;

	(void)state;
	duty_init(&u, t0, 100 * MS, 42);
	on = duty_set(&u, 2, now);
	assert_false(on);
	/* the first slice is in the next period, not this one's remainder */
	assert_true(u.next_ns >= t0 + 100 * MS);
	assert_true(u.next_ns <= t0 + 175 * MS);
	while (slices < 400) {
		now = u.next_ns;
		on = duty_step(&u, now);
		if (on) {
			uint64_t p = (now - t0) / (100 * MS), off = (now - t0) % (100 * MS);

			start = now;
			/* no lead yet: the slice starts at its planned time */
			assert_true(off <= 75 * MS);
			assert_int_equal(u.next_ns, now + 25 * MS);
			assert_true(u.next_ns <= t0 + (p + 1) * 100 * MS);
			if (!slices)
				first_off = off;
			else if (off != last_off)
				offsets_differ++;
			last_off = off;
			slices++;
		} else {
			assert_int_equal(now, start + 25 * MS);
		}
	}
	(void)first_off;
	assert_true(offsets_differ > 300);
	assert_int_equal(u.cycles, 400);
	/* attached 25 ms of each 100: a quarter, give or take the first
	 * period's wait */
	assert_true(u.on_ns == 400 * 25 * MS - 25 * MS || u.on_ns == 400 * 25 * MS);
	assert_true((double)u.on_ns / (double)(u.on_ns + u.off_ns) > 0.24);
	assert_true((double)u.on_ns / (double)(u.on_ns + u.off_ns) < 0.26);
	/* back to always */
	assert_true(duty_set(&u, 0, now + MS));
	assert_int_equal(u.next_ns, 0);
	assert_true(duty_step(&u, now + 2 * MS));
}

/* The daemon woke after the slice's time: the slice is given up, not run
 * short, and the next one planned in a later period. */
static void duty__late_timer__slice_given_up(void **state)
{
	struct duty u;
	uint64_t planned, now;

	(void)state;
	duty_init(&u, 0, 100 * MS, 7);
	duty_set(&u, 3, 1 * MS);
	planned = u.next_ns;
	now = planned + 13 * MS;	/* past its 12.5 ms */
	assert_false(duty_step(&u, now));
	assert_int_equal(u.cycles, 0);
	assert_true(u.next_ns >= 200 * MS);
	assert_true(u.next_ns < 300 * MS);
}

/* An attach the kernel refused: counted, the slice given up; a measured
 * attach time makes the next slices start that much early. */
static void duty__attach_refused_then_lead__counted_and_early(void **state)
{
	struct duty u;
	uint64_t now, slice;

	(void)state;
	duty_init(&u, 0, 100 * MS, 9);
	duty_set(&u, 1, 1 * MS);
	now = u.next_ns;
	assert_true(duty_step(&u, now));
	duty_attached(&u, now, false, 0);
	assert_false(u.on);
	assert_int_equal(u.failures, 1);
	assert_int_equal(u.cycles, 0);
	assert_true(u.next_ns >= 200 * MS);
	/* the next attach took 400 us: the lead */
	now = u.next_ns;
	assert_true(duty_step(&u, now));
	duty_attached(&u, now, true, 400000);
	assert_int_equal(u.lead_ns, 400000);
	assert_true(!duty_step(&u, u.next_ns));
	slice = u.slice_ns;
	assert_int_equal(u.next_ns, slice - 400000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(duty__periods__tile_the_windows),
		cmocka_unit_test(duty__quarter__one_slice_a_period_inside_it),
		cmocka_unit_test(duty__late_timer__slice_given_up),
		cmocka_unit_test(duty__attach_refused_then_lead__counted_and_early),
	};

	return cmocka_run_group_tests_name("duty", tests, NULL, NULL);
}
