// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The sample shift of slab objects (see sample.h).  The rate that matters
 * is the records' (each costs the programs a map insert, a delete and a
 * record, and the daemon its ingest); the rate of the traffic itself is
 * that times 2^shift.  Raising is immediate, so a burst costs at most one
 * tick at the old shift; lowering waits until the rate at the lower shift
 * has stayed under half the budget, so the shift does not flap.
 */
#include "sample.h"

void sampler_init(struct sampler *s, int fixed_shift, unsigned int max_shift,
		  uint64_t budget, uint64_t now_ns)
{
	s->fixed = fixed_shift >= 0;
	s->max_shift = max_shift;
	s->shift = s->fixed ? (unsigned int)fixed_shift : 0;
	if (s->shift > max_shift)
		s->shift = max_shift;
	s->peak_shift = s->shift;
	s->budget = budget ? budget : 1;
	s->span_start_ns = now_ns;
	s->span_records = 0;
	s->fitting = false;
	s->changes = 0;
}

unsigned int sampler_update(struct sampler *s, uint64_t now_ns, uint64_t records)
{
	uint64_t span, rate;
	unsigned int want;

	s->span_records += records;
	if (s->fixed || now_ns < s->span_start_ns + SAMPLE_MIN_SPAN_NS)
		return s->shift;
	span = now_ns - s->span_start_ns;
	rate = (uint64_t)((double)s->span_records * 1e9 / (double)span);
	s->span_start_ns = now_ns;
	s->span_records = 0;

	want = s->shift;
	/* over budget: as many halvings as it takes, at once */
	while (want < s->max_shift && (rate >> (want - s->shift)) > s->budget)
		want++;
	if (want > s->shift) {
		s->fitting = false;
		goto change;
	}
	/* one step down once that rate has stayed under half the budget */
	if (s->shift && rate * 2 <= s->budget / 2) {
		if (!s->fitting) {
			s->fitting = true;
			s->fits_since_ns = now_ns;
		}
		if (now_ns - s->fits_since_ns >= SAMPLE_LOWER_AFTER_NS) {
			want = s->shift - 1;
			s->fitting = false;
			goto change;
		}
	} else {
		s->fitting = false;
	}
	return s->shift;
change:
	s->shift = want;
	s->changes++;
	if (want > s->peak_shift)
		s->peak_shift = want;
	return s->shift;
}
