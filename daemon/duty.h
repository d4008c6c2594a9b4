/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Sampling in time, --budget's last levels (budget.h): the alloc
 * programs (kmem_cache_alloc, and kmalloc where the budget does not shed
 * it) attached 1/2^shift of the time, detached the rest.  Detached, an
 * alloc costs nothing at all, where a program that returns at once still
 * costs the tracepoint's dispatch: the floor that no records budget and no
 * early exit moves (bench/floor: 0.74-0.77x of the eventfd loop, 0.93x of
 * redis's requests/s here with empty programs).  The frees stay attached,
 * so every tracked object's free is seen and nothing looks leaked for
 * want of it; their dispatch alone holds the eventfd loop near the floor
 * (0.74-0.77x, half its events are frees).  With frees set
 * (--sample-time-frees) the kmem_cache_free and kfree programs go with
 * them (on first, off last): a tracked object freed between the slices is
 * reported when a slice sees its address handed out again (slab.bpf.h,
 * reclaim_unseen: an unseen free, its lifetime to then); one whose address
 * is not handed out again stays live, and the leak rule then labels a
 * rise the kernel's count of the cache cannot confirm only where the frees
 * it may hide are a small part of it (classify.c, hidden_frees).
 *
 * The time is cut into periods that tile the windows (a window of up to
 * DUTY_PERIOD_MAX_NS is one period, a longer one several of equal length),
 * and the program is attached for one slice of 1/2^shift of each period,
 * at an offset drawn at random each period over the whole period, taken as
 * a circle: a slice that runs past the period's end goes on at its start
 * (two pieces).  So every moment of a period is traced with the same
 * chance, 1/2^shift: a workload with a period of its own is caught as often
 * in any phase.  (Slices kept whole inside their period left the middle of
 * it traced 1 time in 3 at 1/4, its edges almost never: a burst every 100
 * ms in the middle was counted 4/3 of what it was.)
 * Every window is traced for the same share of its time, so a tracked
 * object standing for 2^shift more (alloc_duty_shift) keeps each window's
 * counts unbiased.  An attach takes the kernel a few hundred microseconds
 * (a grace period when it follows a detach closely): the slice starts that
 * early, by the attach times measured so far.  Pure logic: main.c arms a
 * timer for next_ns and attaches or detaches as told.
 */
#ifndef CS_DUTY_H
#define CS_DUTY_H

#include <stdbool.h>
#include <stdint.h>

#define DUTY_PERIOD_MAX_NS	100000000ull	/* 100 ms: 10 attaches a second */

struct duty {
	uint64_t t0_ns, window_ns;	/* the windows' origin and length */
	uint64_t per_window;		/* periods a window */
	uint64_t period_ns;		/* a period (window_ns / per_window) */
	unsigned int shift;		/* attached 1/2^shift of the time; 0: always */
	bool frees;			/* the frees' programs too (--sample-time-frees,
					 * or the budget's last level: duty_set_frees) */
	uint64_t frees_until_ns;	/* when the frees last stopped cycling (0:
					 * never): tracked objects freed unseen
					 * before it may still count as live */
	bool on;			/* attached now (as told) */
	uint64_t slice_ns, end_ns;	/* the piece of a slice planned or running */
	uint64_t rest_ns, rest_end_ns;	/* its other piece in the period (0: none) */
	uint64_t next_ns;		/* the next change; 0: none */
	uint64_t lead_ns;		/* how early an attach starts (measured) */
	uint64_t rnd;			/* xorshift64 state of the offsets */
	/* for the status and metrics */
	uint64_t cycles;		/* slices run */
	uint64_t failures;		/* attaches the kernel refused */
	uint64_t missed;		/* slices given up: the daemon woke past them */
	uint64_t on_ns, off_ns;		/* time attached and detached while cycling */
	uint64_t since_ns;		/* the last change, for on_ns and off_ns */
	uint64_t att_ns;		/* time attached before since_ns, in all */
	/* the last shift lowered, and when: objects tracked under it stay
	 * live, standing for 2^that many, after the duty falls */
	unsigned int prev_shift;
	uint64_t prev_until_ns;
	/* kmalloc's program: held attached while the allocs cycle, where
	 * cycling it costs more than its detach saves (duty_kmalloc_cycles);
	 * when it last stopped cycling (0: never), its attach and detach's
	 * CPU a cycle (a moving average; 0: not measured yet), and holds */
	bool kmalloc_held;
	uint64_t kmalloc_cycled_until_ns;
	uint64_t kmalloc_cycle_ns;
	uint64_t kmalloc_holds;
};

/* The share of the time the program is meant to be attached (1/2^shift),
 * and the share it was while cycling (1 before any cycling). */
static inline double duty_share(const struct duty *u)
{
	return 1.0 / (double)(1u << u->shift);
}

static inline double duty_share_measured(const struct duty *u)
{
	return u->on_ns + u->off_ns ? (double)u->on_ns / (double)(u->on_ns + u->off_ns) : 1.0;
}

/* The time the program was attached up to now_ns, from duty_init on:
 * a clock that runs only while it is.  The auto sampler measures its
 * rates on it (sample.h): a rate over wall time would read a slice's rate,
 * 2^shift times the mean, over a span inside a slice, and the mean, late,
 * over a long one. */
static inline uint64_t duty_attached_clock(const struct duty *u, uint64_t now_ns)
{
	return u->att_ns + (u->on && now_ns > u->since_ns ? now_ns - u->since_ns : 0);
}

/* The largest shift in effect over the last span_ns before now_ns (0:
 * attached all that time), and the periods a second. */
static inline unsigned int duty_shift_within(const struct duty *u, uint64_t now_ns,
					     uint64_t span_ns, double *periods_per_s)
{
	unsigned int s = u->shift;

	if (u->prev_shift > s && u->prev_until_ns + span_ns >= now_ns)
		s = u->prev_shift;
	*periods_per_s = u->period_ns ? 1e9 / (double)u->period_ns : 0;
	return s;
}

/* The same for kmalloc's program, which the daemon may hold attached
 * while the allocs cycle: the largest shift it ran under over the last
 * span_ns (0: attached all that time). */
static inline unsigned int duty_kmalloc_shift_within(const struct duty *u, uint64_t now_ns,
						     uint64_t span_ns, double *periods_per_s)
{
	unsigned int s = duty_shift_within(u, now_ns, span_ns, periods_per_s);

	if (u->kmalloc_held && !(u->kmalloc_cycled_until_ns &&
				 u->kmalloc_cycled_until_ns + span_ns >= now_ns))
		return 0;
	return s;
}

/* Whether the frees' programs cycled with the allocs' at any time over
 * the last span_ns before now_ns. */
static inline bool duty_frees_within(const struct duty *u, uint64_t now_ns, uint64_t span_ns)
{
	return (u->frees && u->shift) ||
	       (u->frees_until_ns && u->frees_until_ns + span_ns >= now_ns);
}

/* The frees' programs cycle with the allocs' (on) or stay attached. */
static inline void duty_set_frees(struct duty *u, bool on, uint64_t now_ns)
{
	if (u->frees && u->shift && !on)
		u->frees_until_ns = now_ns;
	u->frees = on;
}

/* Whether kmalloc's program is to cycle with the allocs' (else be held
 * attached): where what its detach saves, runs_per_s (a second attached)
 * of run_ns each for the share of the time it is off, is more than what
 * cycling it costs, cycle_ns of CPU (its attach and detach, measured; 0:
 * not yet) periods_per_s times a second.  A held program starts cycling
 * again only where that saves twice the cost: no flapping at the edge.
 * Never held while the frees cycle too (--sample-time-frees): the objects
 * it tracked between the slices would all be freed unseen there.
 * Under nginx the kmalloc tracepoint fired about 500 times a second and
 * its attach and detach cost 1.3 ms of CPU: cycling it cost 1.3 % of a
 * CPU to save some 35 us a second. */
bool duty_kmalloc_cycles(const struct duty *u, double runs_per_s, double run_ns,
			 double periods_per_s);
/* kmalloc's program held attached (on) or cycling again, from now_ns. */
void duty_hold_kmalloc(struct duty *u, bool on, uint64_t now_ns);
/* One attach and detach of kmalloc's program took cpu_ns of CPU. */
void duty_kmalloc_cycled(struct duty *u, uint64_t cpu_ns);

/* Windows of window_ns from t0_ns; seed: any nonzero number. */
void duty_init(struct duty *u, uint64_t t0_ns, uint64_t window_ns, uint64_t seed);
/* Cycle 1/2^shift of the time from now (0: attached for good).  Returns
 * whether the program is to be attached now; next_ns says when next. */
bool duty_set(struct duty *u, unsigned int shift, uint64_t now_ns);
/* The timer fired (now_ns >= next_ns): whether the program is to be
 * attached from now; next_ns says when next. */
bool duty_step(struct duty *u, uint64_t now_ns);
/* An attach told by duty_step took took_ns, or failed (took_ns unused):
 * the lead of the next ones, or the failure counted and the slice given
 * up (next_ns moves to the next period's). */
void duty_attached(struct duty *u, uint64_t now_ns, bool ok, uint64_t took_ns);

#endif
