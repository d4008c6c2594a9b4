/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --budget PERCENT: what tracing may cost, as a share of one CPU: the BPF
 * programs' run time (the kernel's own accounting where it is on, else an
 * estimate from the slab traffic and the records) plus the daemon's CPU.
 * Measured once a second.  Over the budget, the sampler's records budget
 * is cut to where the part of the cost above the fixed one (every slab
 * event's run) would fit (fewer tracked objects: fewer map inserts,
 * records and ingest); at its floor, while the mean cost of the last
 * BUDGET_SHED_AFTER_S seconds since the controller last acted is above
 * BUDGET_HOLD_SHARE of the budget (of the last second alone, where that is
 * BUDGET_FAR_SHARE of it), the optional programs are shed, one level at a
 * time (CS_SHED_*: the page cache, then kmalloc's allocations), then the
 * alloc programs are attached only part of the time (budget_alloc_duty):
 * the controller aims under the budget, not at it, so that a second's
 * noise stays under it too.  Well under it (BUDGET_LOW_SHARE),
 * the levels come back one at a time, then the records budget grows back
 * to --sample-budget.  Pure logic: main.c feeds it the two clocks and
 * applies what it decides.
 */
#ifndef CS_BUDGET_H
#define CS_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#define BUDGET_DEFAULT_PCT	25.0
#define BUDGET_EVERY_NS		1000000000ull	/* one measurement a second */
/* The sampler's floor, records/s: the labels' evidence, cheap beside the
 * dispatch of every event.  At 1 000 kvref's false sharing went unseen
 * under nginx at --budget 5; at 5 000 both labels were found and the
 * budget held by shedding programs instead (DESIGN.md, --budget). */
#define BUDGET_MIN_RECORDS	5000ull
#define BUDGET_SHED_AFTER_S	2		/* over at the floor this long: shed */
#define BUDGET_BACK_AFTER_NS	10000000000ull	/* well under this long: a level back */
#define BUDGET_GROW_AFTER_NS	2000000000ull	/* well under this long: more records */
#define BUDGET_LOW_SHARE	0.6		/* "well under": below this share of it */
#define BUDGET_HOLD_SHARE	0.9		/* at the floor, a mean above this share: over */
#define BUDGET_FAR_SHARE	1.5		/* a second above this share: shed at once */
/* The estimate where the kernel does not time the programs, from
 * bench/overhead.sh's per-program medians here (an untracked slab event:
 * 28-60 ns in the program, plus the tracepoint's dispatch; a tracked one:
 * the live-map insert or delete and the record) */
#define BUDGET_EST_RUN_NS	45.0
#define BUDGET_EST_RECORD_NS	250.0

/* What is shed, level by level: the page-cache programs, kmalloc's
 * allocations, then the alloc programs attached only half, a
 * quarter, an eighth of the time (sampling in time: a detached program
 * costs nothing, not even the tracepoint's dispatch, the floor no
 * records budget moves; CS_DUTY_SHIFT_MAX), then the free programs with
 * them (--sample-time-frees: half the slab events of a churn are frees) */
enum budget_level {
	BUDGET_SHED_NONE,
	BUDGET_SHED_PAGE,
	BUDGET_SHED_KMALLOC,
	BUDGET_SHED_ALLOC_HALF,
	BUDGET_SHED_ALLOC_QUARTER,
	BUDGET_SHED_ALLOC_EIGHTH,
	BUDGET_SHED_FREES,
	BUDGET_LEVELS
};

struct budget {
	double pct;			/* the limit; 0: off */
	uint64_t max_records;		/* --sample-budget */
	uint64_t records;		/* the sampler's records budget now */
	unsigned int level;		/* enum budget_level: what is shed */
	unsigned int top;		/* the highest level it may reach (no
					 * sampling in time where the alloc
					 * program is a classic tracepoint's) */
	/* the last measurement's, in percent of one CPU */
	double cost_pct, bpf_pct, daemon_pct, peak_pct;
	double fixed_pct;		/* of bpf_pct, what the records do not change */
	bool kernel;			/* the BPF part from the kernel's accounting */
	uint64_t lowered, raised, sheds, restores;
	uint64_t over_s;		/* measurements over the limit */
	uint64_t measured;		/* measurements in all */
	/* state */
	uint64_t last_ns, last_daemon_ns, last_bpf_ns, last_fixed_ns;
	bool started, last_kernel;
	uint64_t over_since_ns, under_since_ns;
	unsigned int streak;		/* cuts in a row, a second apart */
	/* the costs of the last seconds since the controller last acted
	 * (a cut, a shed, a restore), the latest at [0] */
	double recent[BUDGET_SHED_AFTER_S];
	unsigned int nrecent;
};

void budget_init(struct budget *b, double pct, uint64_t max_records);
/* One look at the clocks: daemon_ns, the daemon's CPU time so far; bpf_ns,
 * the programs' run time so far (kernel: from the kernel's accounting,
 * else the estimate's running sum); fixed_ns, the estimate's running sum
 * of the programs' runs that no records budget changes (every slab event,
 * tracked or not, BUDGET_EST_RUN_NS each): a cut aims at the rest.
 * Returns true when the records budget or the level changed. */
bool budget_update(struct budget *b, uint64_t now_ns, uint64_t daemon_ns, uint64_t bpf_ns,
		   uint64_t fixed_ns, bool kernel);
/* CS_SHED_* bits of a level */
unsigned int budget_shed_mask(unsigned int level);
/* The alloc programs' duty at a level: attached 1/2^n of the
 * time (0: always) */
unsigned int budget_alloc_duty(unsigned int level);
/* Whether a level cycles the free programs with the alloc programs */
bool budget_frees_in_time(unsigned int level);
/* "none", "page_cache", "page_cache,kmalloc", "page_cache,kmalloc,alloc_1/2" ... */
const char *budget_level_name(unsigned int level);

#endif
