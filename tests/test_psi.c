// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of daemon/psi.c: the pressure files parsed, the stall share
 * of a span from the samples inside it, the history bounded. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "../daemon/psi.h"

#define MS 1000000ull

static void psi_parse__system_and_cgroup_forms__totals(void **state)
{
	uint64_t some, full;

	(void)state;
	assert_int_equal(psi_parse("some avg10=0.00 avg60=0.00 avg300=0.00 total=615332\n"
				   "full avg10=0.00 avg60=0.00 avg300=0.00 total=572592\n", &some, &full), 0);
	assert_int_equal(some, 615332);
	assert_int_equal(full, 572592);
	/* cpu.pressure before 5.13 had no full line */
	assert_int_equal(psi_parse("some avg10=1.50 avg60=0.20 avg300=0.00 total=42\n", &some, &full), 0);
	assert_int_equal(some, 42);
	assert_int_equal(full, 0);
	assert_int_equal(psi_parse("", &some, &full), -EINVAL);
	assert_int_equal(psi_parse("full avg10=0 total=5\n", &some, &full), -EINVAL);
	assert_int_equal(psi_parse("some avg10=0.00\nfull total=5\n", &some, &full), -EINVAL);
	/* the real file, where the kernel has PSI */
	if (!psi_read("/proc/pressure/memory", &some, &full))
		assert_true(some >= full);
	assert_int_equal(psi_read("/proc/no-such-pressure", &some, &full), -ENOENT);
}

/* 1 s stalled of every 10 over 5 s: a share of 0.1, from the samples in
 * the span; too short a span, or an unknown source, is unknown. */
static void psi_track_share__samples_in_span__stalled_share(void **state)
{
	struct psi_track t = { .n = 0 };
	double share;
	int i;

	(void)state;
	for (i = 0; i <= 50; i++)
		psi_track_note(&t, "/proc/pressure/memory", 1000 * MS + i * 100 * MS, i * 10000);
	assert_int_equal(psi_track_share(&t, "/proc/pressure/memory", 1000 * MS, 6000 * MS, 500 * MS,
					 &share), 0);
	assert_true(share > 0.0999 && share < 0.1001);
	/* a stall only in the span's second half: half the share */
	psi_track_note(&t, "cg", 0, 0);
	psi_track_note(&t, "cg", 1000 * MS, 0);
	psi_track_note(&t, "cg", 2000 * MS, 200000);
	assert_int_equal(psi_track_share(&t, "cg", 0, 2000 * MS, 500 * MS, &share), 0);
	assert_true(share > 0.0999 && share < 0.1001);
	assert_int_equal(psi_track_share(&t, "cg", 1000 * MS, 1200 * MS, 500 * MS, &share), -ENOENT);
	assert_int_equal(psi_track_share(&t, "nope", 0, 2000 * MS, 500 * MS, &share), -ENOENT);
	/* time only forward; the history bounded in time */
	psi_track_note(&t, "cg", 1500 * MS, 999999999);
	assert_int_equal(psi_track_share(&t, "cg", 0, 2000 * MS, 500 * MS, &share), 0);
	assert_true(share < 0.11);
	psi_track_note(&t, "cg", 2000 * MS + PSI_KEEP_NS + 1, 200000);
	assert_int_equal(psi_track_share(&t, "cg", 0, 2000 * MS, 500 * MS, &share), -ENOENT);
	psi_track_gc(&t, 60000 * MS);
	assert_int_equal(psi_track_sources(&t), 1);	/* the first, the system's, stays */
	psi_track_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(psi_parse__system_and_cgroup_forms__totals),
		cmocka_unit_test(psi_track_share__samples_in_span__stalled_share),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
