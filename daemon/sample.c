// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The sample shifts of slab caches (see sample.h).  The rate that matters
 * is the records' (each costs the programs a map insert, a delete and a
 * record, and the daemon its ingest); a cache's traffic is its records
 * times 2^shift.  The budget is shared out by water-filling: the largest
 * share T such that the caches' traffic, each capped at T, fits in the
 * budget; a cache above T is thinned to about T.  Raising is immediate, so
 * a burst costs at most one span at the old shift; lowering waits until
 * a lower shift has kept its cache under T/2 for a while, so shifts do
 * not flap.
 */
#include <math.h>
#include "sample.h"

void sampler_init(struct sampler *s, int fixed_shift, unsigned int max_shift,
		  uint64_t budget, uint64_t now_ns)
{
	unsigned int shift = fixed_shift >= 0 ? (unsigned int)fixed_shift : 0, i;

	if (shift > max_shift)
		shift = max_shift;
	s->fixed = fixed_shift >= 0;
	s->max_shift = max_shift;
	s->budget = budget ? budget : 1;
	s->span_start_ns = now_ns;
	s->changes = 0;
	s->peak_shift = s->top_shift = shift;
	s->sampled = shift ? CS_SHIFT_SLOTS : 0;
	for (i = 0; i < CS_SHIFT_SLOTS; i++)
		s->slot[i] = (struct sample_slot){ .shift = (uint8_t)shift };
}

/* Traffic allowed per cache: the largest T with sum(min(rate, T)) within
 * the budget, or INFINITY when everything fits. */
static double water_level(const double *rate, unsigned int n, double budget)
{
	double lo = 0, hi = 0, sum = 0, mid, f;
	unsigned int i, k;

	for (i = 0; i < n; i++) {
		sum += rate[i];
		if (rate[i] > hi)
			hi = rate[i];
	}
	if (sum <= budget)
		return INFINITY;
	for (k = 0; k < 40; k++) {
		mid = (lo + hi) / 2;
		for (f = 0, i = 0; i < n; i++)
			f += rate[i] < mid ? rate[i] : mid;
		if (f <= budget)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* The shift that brings rate to level or under. */
static unsigned int shift_for(double rate, double level, unsigned int max)
{
	unsigned int sh = 0;

	while (sh < max && rate > level * (double)(1ull << sh))
		sh++;
	return sh;
}

unsigned int sampler_update(struct sampler *s, uint64_t traced_ns)
{
	double *rate = s->rate;
	unsigned int i, n, changed = 0, want, low;
	double span, level;

	if (s->fixed || traced_ns < s->span_start_ns + SAMPLE_MIN_SPAN_NS)
		return 0;
	span = (double)(traced_ns - s->span_start_ns) / 1e9;
	s->span_start_ns = traced_ns;
	/* the slots with traffic, packed at the front of active[] for the
	 * water level's forty passes (a few dozen of the 1 024, mostly) */
	for (i = 0, n = 0; i < CS_SHIFT_SLOTS; i++) {
		rate[i] = (double)s->slot[i].records * (double)(1ull << s->slot[i].shift) / span;
		s->slot[i].records = 0;
		if (rate[i] > 0)
			s->active[n++] = rate[i];
	}
	level = water_level(s->active, n, (double)s->budget);
	s->sampled = 0;
	s->top_shift = 0;
	for (i = 0; i < CS_SHIFT_SLOTS; i++) {
		struct sample_slot *sl = &s->slot[i];

		want = isinf(level) ? 0 : shift_for(rate[i], level, s->max_shift);
		if (want > sl->shift) {
			sl->shift = (uint8_t)want;
			sl->fitting = false;
			changed++;
		} else if (sl->shift) {
			/* down once a lower shift has kept it under half the
			 * level for a while: to that shift */
			low = isinf(level) ? 0 : shift_for(rate[i], level / 2, s->max_shift);
			if (low < sl->shift) {
				if (!sl->fitting) {
					sl->fitting = true;
					sl->fits_since_ns = traced_ns;
				}
				if (traced_ns - sl->fits_since_ns >= SAMPLE_LOWER_AFTER_NS) {
					sl->shift = (uint8_t)low;
					sl->fitting = false;
					changed++;
				}
			} else {
				sl->fitting = false;
			}
		}
		if (sl->shift) {
			s->sampled++;
			if (sl->shift > s->top_shift)
				s->top_shift = sl->shift;
		}
	}
	if (s->top_shift > s->peak_shift)
		s->peak_shift = s->top_shift;
	s->changes += changed;
	return changed;
}
