// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The overhead budget's controller (see budget.h).  Cutting is
 * proportional and immediate (a second over costs a second), shedding
 * takes BUDGET_SHED_AFTER_S seconds a level (one far over); giving back
 * waits, grows by half at a time and stops at --sample-budget, so that a
 * load near the limit does not flap between two settings.
 */
#include <string.h>
#include "budget.h"
#include "cachescope.h"

void budget_init(struct budget *b, double pct, uint64_t max_records)
{
	*b = (struct budget){ .pct = pct, .max_records = max_records, .records = max_records,
			      .top = BUDGET_LEVELS - 1 };
}

unsigned int budget_shed_mask(unsigned int level)
{
	return (level >= BUDGET_SHED_PAGE ? CS_SHED_PAGE : 0) |
	       (level >= BUDGET_SHED_KMALLOC ? CS_SHED_KMALLOC : 0);
}

_Static_assert(BUDGET_SHED_ALLOC_EIGHTH - BUDGET_SHED_KMALLOC == CS_DUTY_SHIFT_MAX,
	       "a level for each duty the programs know");

unsigned int budget_alloc_duty(unsigned int level)
{
	if (level < BUDGET_SHED_ALLOC_HALF || level >= BUDGET_LEVELS)
		return 0;
	return level >= BUDGET_SHED_FREES ? CS_DUTY_SHIFT_MAX : level - BUDGET_SHED_KMALLOC;
}

bool budget_frees_in_time(unsigned int level)
{
	return level >= BUDGET_SHED_FREES && level < BUDGET_LEVELS;
}

const char *budget_level_name(unsigned int level)
{
	static const char *const names[BUDGET_LEVELS] = {
		"none", "page_cache", "page_cache,kmalloc", "page_cache,kmalloc,alloc_1/2",
		"page_cache,kmalloc,alloc_1/4", "page_cache,kmalloc,alloc_1/8",
		"page_cache,kmalloc,alloc_1/8,frees"
	};

	return level < BUDGET_LEVELS ? names[level] : "?";
}

/* The mean cost of the seconds since the controller last acted, the last
 * BUDGET_SHED_AFTER_S at most. */
static double recent_mean(const struct budget *b)
{
	double sum = 0;
	unsigned int i;

	for (i = 0; i < b->nrecent; i++)
		sum += b->recent[i];
	return b->nrecent ? sum / b->nrecent : 0;
}

bool budget_update(struct budget *b, uint64_t now_ns, uint64_t daemon_ns, uint64_t bpf_ns,
		   uint64_t fixed_ns, bool kernel)
{
	uint64_t dt, floor_records;
	double cut, room;

	/* a change of source (the kernel's accounting switched on or off)
	 * starts over: the two sums do not subtract */
	if (!b->started || kernel != b->last_kernel || bpf_ns < b->last_bpf_ns ||
	    daemon_ns < b->last_daemon_ns || fixed_ns < b->last_fixed_ns) {
		b->started = true;
		b->last_kernel = kernel;
		b->last_ns = now_ns;
		b->last_daemon_ns = daemon_ns;
		b->last_bpf_ns = bpf_ns;
		b->last_fixed_ns = fixed_ns;
		return false;
	}
	if (now_ns < b->last_ns + BUDGET_EVERY_NS)
		return false;
	dt = now_ns - b->last_ns;
	b->bpf_pct = 100.0 * (double)(bpf_ns - b->last_bpf_ns) / (double)dt;
	b->daemon_pct = 100.0 * (double)(daemon_ns - b->last_daemon_ns) / (double)dt;
	b->cost_pct = b->bpf_pct + b->daemon_pct;
	b->fixed_pct = 100.0 * (double)(fixed_ns - b->last_fixed_ns) / (double)dt;
	if (b->fixed_pct > b->bpf_pct)
		b->fixed_pct = b->bpf_pct;	/* an estimate, never more than measured */
	if (b->cost_pct > b->peak_pct)
		b->peak_pct = b->cost_pct;
	b->kernel = kernel;
	b->measured++;
	b->last_ns = now_ns;
	b->last_daemon_ns = daemon_ns;
	b->last_bpf_ns = bpf_ns;
	b->last_fixed_ns = fixed_ns;
	if (b->pct <= 0)
		return false;

	floor_records = b->max_records < BUDGET_MIN_RECORDS ? b->max_records : BUDGET_MIN_RECORDS;
	memmove(b->recent + 1, b->recent, sizeof(b->recent) - sizeof(b->recent[0]));
	b->recent[0] = b->cost_pct;
	if (b->nrecent < BUDGET_SHED_AFTER_S)
		b->nrecent++;
	if (b->cost_pct > b->pct) {
		b->over_s++;
		b->under_since_ns = 0;
		if (b->records > floor_records) {
			/* to where the cost would fit, with a tenth to spare:
			 * only the part above the fixed one falls with the
			 * records; where the fixed part alone is over, to the
			 * floor at once */
			room = b->pct * BUDGET_HOLD_SHARE - b->fixed_pct;
			cut = room > 0 && b->cost_pct > b->fixed_pct ?
				      (double)b->records * room / (b->cost_pct - b->fixed_pct) : 0;
			/* still over a second after a cut: less of the rest
			 * moved with the records than assumed (the daemon's
			 * own floor); each cut in a row goes twice as far */
			if (b->over_since_ns && now_ns - b->over_since_ns <= 2 * BUDGET_EVERY_NS)
				b->streak = b->streak < 6 ? b->streak + 1 : 6;
			else
				b->streak = 0;
			cut /= (double)(1u << b->streak);
			b->records = cut > (double)floor_records ? (uint64_t)cut : floor_records;
			b->lowered++;
			b->over_since_ns = now_ns;
			b->nrecent = 0;
			return true;
		}
	}
	/* at the floor: a level shed where the seconds since the last
	 * change were above the share of the budget aimed at, on the mean
	 * (a cost that wavers about the budget is not held by it), or the
	 * last one far over it */
	if (b->records <= floor_records && b->level < b->top &&
	    b->cost_pct > b->pct * BUDGET_HOLD_SHARE &&
	    ((b->nrecent >= BUDGET_SHED_AFTER_S && recent_mean(b) > b->pct * BUDGET_HOLD_SHARE) ||
	     b->cost_pct > b->pct * BUDGET_FAR_SHARE)) {
		b->level++;
		b->sheds++;
		b->under_since_ns = 0;
		b->nrecent = 0;
		return true;
	}
	if (b->cost_pct > b->pct)
		return false;
	/* under what the controller aims at: the next cut is not one in a row */
	if (b->cost_pct <= b->pct * BUDGET_HOLD_SHARE)
		b->over_since_ns = 0;
	if (b->cost_pct >= b->pct * BUDGET_LOW_SHARE) {
		b->under_since_ns = 0;
		return false;
	}
	if (!b->under_since_ns) {
		b->under_since_ns = now_ns;
		return false;
	}
	if (b->level) {
		if (now_ns - b->under_since_ns >= BUDGET_BACK_AFTER_NS) {
			b->level--;
			b->restores++;
			b->under_since_ns = now_ns;
			b->nrecent = 0;
			return true;
		}
		return false;
	}
	if (b->records < b->max_records && now_ns - b->under_since_ns >= BUDGET_GROW_AFTER_NS) {
		b->records = b->records + b->records / 2 < b->max_records ?
			     b->records + b->records / 2 : b->max_records;
		b->raised++;
		b->under_since_ns = now_ns;
		b->nrecent = 0;
		return true;
	}
	return false;
}
