// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Sampling in time: when the alloc programs are attached (see
 * duty.h).
 */
#include "duty.h"

/* the most an attach's measured time moves the lead, and the lead's cap:
 * a slice of 1/8 of 100 ms is 12.5 ms */
#define DUTY_LEAD_MAX_NS 2000000ull

void duty_init(struct duty *u, uint64_t t0_ns, uint64_t window_ns, uint64_t seed)
{
	uint64_t n = window_ns / DUTY_PERIOD_MAX_NS;

	*u = (struct duty){ .t0_ns = t0_ns, .on = true, .since_ns = t0_ns,
			    .rnd = seed ? seed : 0x9e3779b97f4a7c15ull };
	if (window_ns % DUTY_PERIOD_MAX_NS || !n)
		n++;
	u->window_ns = window_ns ? window_ns : 1;
	u->per_window = n;
	u->period_ns = u->window_ns / n ? u->window_ns / n : 1;
}

static uint64_t next_rand(struct duty *u)
{
	u->rnd ^= u->rnd << 13;
	u->rnd ^= u->rnd >> 7;
	u->rnd ^= u->rnd << 17;
	return u->rnd;
}

static uint64_t slice_len(const struct duty *u)
{
	return u->period_ns >> u->shift;
}

/* The start of period p: the window's start and its share of the window
 * (exact: periods of a window that does not divide evenly differ by 1 ns
 * and never drift from the windows) */
static uint64_t period_start(const struct duty *u, uint64_t p)
{
	return u->t0_ns + p / u->per_window * u->window_ns +
	       p % u->per_window * u->window_ns / u->per_window;
}

/* The slice of the first period that starts at or after from: at a random
 * offset in the period, round it as a circle (duty.h): one piece, or two,
 * the one at the period's start planned first. */
static void plan_slice(struct duty *u, uint64_t from)
{
	uint64_t p = from > u->t0_ns ? (from - u->t0_ns) / u->period_ns : 0;
	uint64_t start, end, len, off;

	/* the estimate is within a period or two of the one wanted (the
	 * periods of an uneven window are 1 ns apart in length) */
	while (p && period_start(u, p - 1) >= from)
		p--;
	while (period_start(u, p) < from)
		p++;
	start = period_start(u, p);
	end = period_start(u, p + 1);
	len = slice_len(u);
	off = next_rand(u) % (end - start);
	if (start + off + len <= end) {
		u->slice_ns = start + off;
		u->end_ns = start + off + len;
		u->rest_ns = u->rest_end_ns = 0;
	} else {
		u->slice_ns = start;
		u->end_ns = start + off + len - (end - start);
		u->rest_ns = start + off;
		u->rest_end_ns = end;
	}
}

/* The piece after the one planned or run: its slice's other piece, or the
 * next period's slice. */
static void next_piece(struct duty *u)
{
	if (u->rest_ns) {
		u->slice_ns = u->rest_ns;
		u->end_ns = u->rest_end_ns;
		u->rest_ns = u->rest_end_ns = 0;
	} else {
		plan_slice(u, u->slice_ns + 1);
	}
}

/* The next change: a planned slice's start, less the lead an attach takes */
static void arm_slice(struct duty *u, uint64_t now_ns)
{
	u->next_ns = u->slice_ns > u->lead_ns ? u->slice_ns - u->lead_ns : u->slice_ns;
	if (u->next_ns < now_ns)
		u->next_ns = now_ns;
	if (!u->next_ns)
		u->next_ns = 1;
}

/* The time since the last change: to the attached clock where attached,
 * and to on_ns or off_ns while cycling. */
static void account(struct duty *u, uint64_t now_ns)
{
	uint64_t d;

	if (now_ns <= u->since_ns)
		return;
	d = now_ns - u->since_ns;
	if (u->on)
		u->att_ns += d;
	if (u->shift)
		*(u->on ? &u->on_ns : &u->off_ns) += d;
	u->since_ns = now_ns;
}

/* The pieces whose time has passed (the daemon was late) are given up,
 * not run short: counted, and the next one to come planned.  Returns
 * whether any was. */
static bool give_up_past(struct duty *u, uint64_t now_ns)
{
	bool any = false;

	while (now_ns >= u->end_ns) {
		u->missed++;
		next_piece(u);
		any = true;
	}
	return any;
}

bool duty_set(struct duty *u, unsigned int shift, uint64_t now_ns)
{
	account(u, now_ns);
	if (shift < u->shift) {
		u->prev_shift = u->shift;
		u->prev_until_ns = now_ns;
	}
	if (!shift && u->shift && u->frees)
		u->frees_until_ns = now_ns;	/* the frees stop cycling */
	u->shift = shift;
	if (!shift) {
		u->on = true;
		u->next_ns = 0;
		return true;
	}
	/* off until a slice of the next period (this one's share is spent
	 * or partly spent: an unbiased window takes its whole slice) */
	u->on = false;
	plan_slice(u, now_ns + 1);
	arm_slice(u, now_ns);
	return false;
}

bool duty_step(struct duty *u, uint64_t now_ns)
{
	if (!u->shift) {
		u->next_ns = 0;
		return u->on = true;
	}
	account(u, now_ns);
	if (!u->on) {
		if (give_up_past(u, now_ns)) {
			arm_slice(u, now_ns);
			return false;
		}
		u->on = true;
		u->cycles++;
		u->next_ns = u->end_ns;
		return true;
	}
	next_piece(u);
	/* the next piece starts where this one ends (a slice of the next
	 * period round its start): on through both, no detach and attach */
	if (u->slice_ns == u->next_ns && u->end_ns > now_ns) {
		u->next_ns = u->end_ns;
		return true;
	}
	u->on = false;
	give_up_past(u, now_ns);
	arm_slice(u, now_ns);
	return false;
}

void duty_attached(struct duty *u, uint64_t now_ns, bool ok, uint64_t took_ns)
{
	if (ok) {
		if (took_ns > DUTY_LEAD_MAX_NS)
			took_ns = DUTY_LEAD_MAX_NS;
		/* a moving average, an eighth a step */
		u->lead_ns = u->lead_ns ? u->lead_ns - u->lead_ns / 8 + took_ns / 8 : took_ns;
		return;
	}
	u->failures++;
	account(u, now_ns);
	u->on = false;
	if (u->cycles)
		u->cycles--;
	if (!u->shift) {
		/* attached for good was asked: ask again in a period */
		u->next_ns = now_ns + u->period_ns;
		return;
	}
	next_piece(u);
	arm_slice(u, now_ns);
}

bool duty_kmalloc_cycles(const struct duty *u, double runs_per_s, double run_ns,
			 double periods_per_s)
{
	double saved, cost;

	/* with the frees cycling too, never held: its objects allocated
	 * between the slices would be freed unseen there, every one (a held
	 * kmalloc made sqlite's kmalloc-16 look leaked) */
	if (u->frees)
		return true;
	if (!u->shift || !u->kmalloc_cycle_ns)
		return !u->kmalloc_held;
	saved = runs_per_s * run_ns * (1.0 - 1.0 / (double)(1u << u->shift));
	cost = periods_per_s * (double)u->kmalloc_cycle_ns;
	return u->kmalloc_held ? saved >= 2 * cost : saved >= cost;
}

void duty_hold_kmalloc(struct duty *u, bool on, uint64_t now_ns)
{
	if (on == u->kmalloc_held)
		return;
	if (on) {
		u->kmalloc_cycled_until_ns = now_ns;
		u->kmalloc_holds++;
	}
	u->kmalloc_held = on;
}

void duty_kmalloc_cycled(struct duty *u, uint64_t cpu_ns)
{
	/* a moving average, an eighth a cycle */
	u->kmalloc_cycle_ns = u->kmalloc_cycle_ns ?
		u->kmalloc_cycle_ns - u->kmalloc_cycle_ns / 8 + cpu_ns / 8 : cpu_ns;
}
