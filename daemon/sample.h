/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * How many slab objects the BPF programs track, cache by cache and process
 * by process: a sample shift per slot of (cache, process) (CS_SHIFT_SLOTS,
 * cs_shift_slot, which the records carry), chosen from the records the
 * daemon receives.  Every object is
 * tracked while all slab records stay within a budget; past it, the
 * busiest caches are thinned first (water-filling: every cache may send
 * up to a common share T, T as large as the budget allows), so a busy
 * network stack does not blind the quiet caches where leaks show.  A
 * shift is raised at once by as much as its cache's rate needs and lowered
 * once a lower one has kept the cache under half of T for a while.
 * A fixed shift (--sample N) holds for every cache and never changes.
 */
#ifndef CS_SAMPLE_H
#define CS_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>
#include "cachescope.h"

#define SAMPLE_LOWER_AFTER_NS	3000000000ull	/* a lower shift fits this long */
#define SAMPLE_MIN_SPAN_NS	20000000ull	/* rates over at least this */

struct sample_slot {
	uint8_t shift;
	bool fitting;		/* the next lower shift has fitted ... */
	uint64_t fits_since_ns;	/* ... since then */
	uint64_t records;	/* received in the current span */
};

struct sampler {
	bool fixed;
	unsigned int max_shift;
	uint64_t budget;	/* records per second, all caches */
	uint64_t span_start_ns;	/* on the clock sampler_update is given */
	uint64_t changes;	/* shifts changed */
	unsigned int peak_shift;	/* the largest shift so far */
	unsigned int sampled;	/* slots with a shift now */
	unsigned int top_shift;	/* the largest shift now */
	struct sample_slot slot[CS_SHIFT_SLOTS];
	double rate[CS_SHIFT_SLOTS];	/* scratch: traffic per slot, per second */
	double active[CS_SHIFT_SLOTS];	/* scratch: the nonzero rates */
};

/* fixed_shift < 0: auto, starting with every object tracked. */
void sampler_init(struct sampler *s, int fixed_shift, unsigned int max_shift,
		  uint64_t budget, uint64_t now_ns);

/* One slab record received (its cs_event.slot). */
static inline void sampler_count(struct sampler *s, uint32_t slot)
{
	s->slot[slot % CS_SHIFT_SLOTS].records++;
}

/* Choose the shifts from the records since the last call that began a
 * span (a span lasts SAMPLE_MIN_SPAN_NS at least), at traced_ns of the
 * time the alloc programs have been attached (duty.h's clock; the
 * monotonic clock where they always are): while they are attached only a slice
 * of each period, rates are per second attached, the records budget
 * too, and the records a second of the wall clock 1/2^duty of it, with
 * no wait for whole periods.  Returns how many slots changed; their new
 * shifts are in s->slot[i].shift. */
unsigned int sampler_update(struct sampler *s, uint64_t traced_ns);

#endif
