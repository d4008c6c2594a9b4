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

/* A quarter: off at once, then a slice of 25 ms in each period, at
 * offsets that are not all the same, round the period as a circle (one
 * piece, or two where it runs past the period's end, on through a next
 * period's piece that starts where it ends): 25 ms of each period, every
 * moment of a period traced a quarter of the time, the time attached a
 * quarter of the whole. */
static void duty__quarter__a_slice_a_period_every_phase_alike(void **state)
{
	uint64_t t0 = 5 * MS, now = t0 + 30 * MS, start = 0, in[2001] = { 0 }, p, q;
	unsigned int periods = 2000, covered[10] = { 0 }, pieces = 0, b;
	struct duty u;
	bool on;

	(void)state;
	duty_init(&u, t0, 100 * MS, 42);
	on = duty_set(&u, 2, now);
	assert_false(on);
	/* the attached clock: all the time from the windows' origin till now */
	assert_int_equal(duty_attached_clock(&u, now + 10 * MS), 30 * MS);
	/* the first slice is in the next period, not this one's remainder */
	assert_true(u.next_ns >= t0 + 100 * MS);
	assert_true(u.next_ns < t0 + 200 * MS);
	while ((u.next_ns - t0) / (100 * MS) <= periods) {
		bool was = u.on;

		now = u.next_ns;
		on = duty_step(&u, now);
		if (on && !was) {
			/* no lead yet: a run starts at its planned time */
			start = now;
			pieces++;
		}
		if (on || !was)
			continue;
		/* a run [start, now): counted to its periods and their
		 * phases (10 ms bins, at their middles) */
		for (q = start; q < now; q = (q - t0) / (100 * MS) * 100 * MS + t0 + 100 * MS) {
			uint64_t pe = t0 + ((q - t0) / (100 * MS) + 1) * 100 * MS, e = now < pe ? now : pe;

			p = (q - t0) / (100 * MS);
			if (p <= periods)
				in[p] += e - q;
			for (b = 0; b < 10 && p >= 1 && p <= periods; b++) {
				uint64_t mid = pe - 100 * MS + b * 10 * MS + 5 * MS;

				covered[b] += mid >= q && mid < e;
			}
		}
	}
	/* each whole period: 25 ms */
	for (p = 1; p < periods; p++)
		assert_int_equal(in[p], 25 * MS);
	/* every phase a quarter of the periods, edges as the middle */
	for (b = 0; b < 10; b++) {
		assert_true(covered[b] > periods / 4 - 100);
		assert_true(covered[b] < periods / 4 + 100);
	}
	/* a run a period, more where a slice ran past its end, fewer where
	 * the next one went on from it */
	assert_true(pieces > periods * 1.05 && pieces < periods * 1.3);
	assert_true((double)u.on_ns / (double)(u.on_ns + u.off_ns) > 0.24);
	assert_true((double)u.on_ns / (double)(u.on_ns + u.off_ns) < 0.26);
	/* the attached clock ran only in the slices since */
	assert_int_equal(duty_attached_clock(&u, now + 50 * MS), 30 * MS + u.on_ns);
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
	assert_int_equal(u.missed, 1);
	assert_true(u.next_ns >= 200 * MS);
	assert_true(u.next_ns < 300 * MS);
}

/* The shift over a span: the objects tracked under a higher one stay live
 * after it falls, so the rules ask for the largest over their span. */
static void duty__shift_lowered__the_higher_one_within_its_span(void **state)
{
	struct duty u;
	double per_s;

	(void)state;
	duty_init(&u, 0, 100 * MS, 5);
	assert_int_equal(duty_shift_within(&u, 1 * MS, 10000 * MS, &per_s), 0);
	duty_set(&u, 2, 1 * MS);
	assert_int_equal(duty_shift_within(&u, 2 * MS, 10000 * MS, &per_s), 2);
	assert_true(per_s > 9.99 && per_s < 10.01);
	duty_set(&u, 0, 5000 * MS);
	assert_int_equal(duty_shift_within(&u, 8000 * MS, 4000 * MS, &per_s), 2);
	assert_int_equal(duty_shift_within(&u, 8000 * MS, 2000 * MS, &per_s), 0);
	/* raised again past it: the present one */
	duty_set(&u, 3, 9000 * MS);
	assert_int_equal(duty_shift_within(&u, 9000 * MS, 10000 * MS, &per_s), 3);
}

/* The frees cycled with the allocs: while they do, and over any span that
 * reaches back to when they stopped (by the ladder or by the allocs going
 * back to all the time), objects freed unseen may still count as live. */
static void duty__frees_stopped__cycled_within_its_span(void **state)
{
	struct duty u;

	(void)state;
	duty_init(&u, 0, 100 * MS, 5);
	duty_set_frees(&u, true, 1 * MS);
	/* the frees go with allocs attached all the time: nothing cycles */
	assert_false(duty_frees_within(&u, 1 * MS, 10000 * MS));
	duty_set(&u, 3, 1 * MS);
	assert_true(duty_frees_within(&u, 2 * MS, 0));
	duty_set_frees(&u, false, 5000 * MS);
	assert_true(duty_frees_within(&u, 8000 * MS, 4000 * MS));
	assert_false(duty_frees_within(&u, 8000 * MS, 2000 * MS));
	/* again, and then the allocs back all the time */
	duty_set_frees(&u, true, 9000 * MS);
	duty_set(&u, 0, 12000 * MS);
	assert_true(duty_frees_within(&u, 13000 * MS, 2000 * MS));
	assert_false(duty_frees_within(&u, 13000 * MS, 500 * MS));
}

/* kmalloc's program cycles only where its detach saves more than cycling
 * it costs: nginx's ~500 runs a second against 1.3 ms of CPU an attach
 * and detach, 10 times a second, is held; the eventfd loop's 400 000 is
 * not.  A held one cycles again only at twice the cost; the rules ask
 * its shift over a span, 0 where it was held all of it. */
static void duty__kmalloc__held_where_cycling_costs_more(void **state)
{
	double p;
	struct duty u;

	(void)state;
	duty_init(&u, 0, 100 * MS, 9);
	/* not cycling at all, or not measured yet: nothing to hold */
	assert_true(duty_kmalloc_cycles(&u, 500, 45, 10));
	duty_set(&u, 2, 1 * MS);
	assert_true(duty_kmalloc_cycles(&u, 500, 45, 10));
	duty_kmalloc_cycled(&u, 1300000);
	assert_int_equal(u.kmalloc_cycle_ns, 1300000);
	/* 500 x 45 ns x 3/4 = 17 us a second against 13 ms */
	assert_false(duty_kmalloc_cycles(&u, 500, 45, 10));
	assert_true(duty_kmalloc_cycles(&u, 400000, 45, 10));
	/* the edge: saves 13.5 ms against 13 ms, cycles; held, it needs 26 */
	assert_true(duty_kmalloc_cycles(&u, 400000, 45, 10));
	duty_hold_kmalloc(&u, true, 5000 * MS);
	assert_int_equal(u.kmalloc_holds, 1);
	assert_false(duty_kmalloc_cycles(&u, 400000, 45, 10));
	assert_true(duty_kmalloc_cycles(&u, 800000, 45, 10));
	/* the average moves an eighth a cycle */
	duty_kmalloc_cycled(&u, 500000);
	assert_int_equal(u.kmalloc_cycle_ns, 1300000 - 1300000 / 8 + 500000 / 8);
	/* its shift over a span: the allocs' where the span reaches back
	 * to when it cycled, 0 after */
	assert_int_equal(duty_shift_within(&u, 8000 * MS, 2000 * MS, &p), 2);
	assert_int_equal(duty_kmalloc_shift_within(&u, 8000 * MS, 4000 * MS, &p), 2);
	assert_int_equal(duty_kmalloc_shift_within(&u, 8000 * MS, 2000 * MS, &p), 0);
	assert_true(p > 9.99 && p < 10.01);
	/* cycling again: the allocs' */
	duty_hold_kmalloc(&u, false, 9000 * MS);
	assert_int_equal(duty_kmalloc_shift_within(&u, 9500 * MS, 100 * MS, &p), 2);
	assert_int_equal(u.kmalloc_holds, 1);
	/* with the frees cycling too, never held, however rare */
	duty_set_frees(&u, true, 10000 * MS);
	assert_true(duty_kmalloc_cycles(&u, 0, 45, 10));
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
		cmocka_unit_test(duty__quarter__a_slice_a_period_every_phase_alike),
		cmocka_unit_test(duty__late_timer__slice_given_up),
		cmocka_unit_test(duty__shift_lowered__the_higher_one_within_its_span),
		cmocka_unit_test(duty__frees_stopped__cycled_within_its_span),
		cmocka_unit_test(duty__kmalloc__held_where_cycling_costs_more),
		cmocka_unit_test(duty__attach_refused_then_lead__counted_and_early),
	};

	return cmocka_run_group_tests_name("duty", tests, NULL, NULL);
}
