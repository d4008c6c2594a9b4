/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * How many slab objects the BPF programs track: the sample shift, chosen
 * from the rate of records the daemon receives.  Every object is tracked
 * while the slab records stay within a budget; past it, 1 in 2^shift
 * addresses, the shift raised at once by as much as the rate needs and
 * lowered one step at a time once the lower shift has fitted for a while.
 * A fixed shift (--sample N) never changes.
 */
#ifndef CS_SAMPLE_H
#define CS_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>

#define SAMPLE_LOWER_AFTER_NS	3000000000ull	/* a lower shift fits this long */
#define SAMPLE_MIN_SPAN_NS	20000000ull	/* rates over at least this */

struct sampler {
	bool fixed;
	unsigned int shift, max_shift;
	uint64_t budget;	/* records per second */
	uint64_t span_start_ns, span_records;
	bool fitting;		/* the next lower shift has fitted ... */
	uint64_t fits_since_ns;	/* ... since then */
	uint64_t changes;	/* times the shift changed */
	unsigned int peak_shift;
};

/* fixed_shift < 0: auto, starting with every object tracked. */
void sampler_init(struct sampler *s, int fixed_shift, unsigned int max_shift,
		  uint64_t budget, uint64_t now_ns);

/* Account records slab records received since the last call; returns the
 * shift to use from now on. */
unsigned int sampler_update(struct sampler *s, uint64_t now_ns, uint64_t records);

#endif
