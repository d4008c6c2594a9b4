/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Record plumbing every program shares: the per-CPU rings, the per-CPU
 * stage that batches records into them, the drop counters, the programs'
 * run-time histogram, and the helpers that reserve, fill and submit a
 * record.  Every failed reserve is counted (stats.dropped).
 */
#ifndef CS_RECORD_BPF_H
#define CS_RECORD_BPF_H

#include "tunables.bpf.h"

struct ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, CS_RINGBUF_BYTES);
};

/* One ring buffer per CPU; the loader creates them and fills this array. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, CS_MAX_CPUS);
	__type(key, __u32);
	__array(values, struct ring);
} rings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cs_stats);
} stats SEC(".maps");

/* Records are staged per CPU and go to the ring CS_STAGE_RECORDS at a time
 * (a ring reservation costs more than writing a record); the daemon has
 * every CPU flush its stage (flush_stage) before it drains the rings on a
 * tick, so a window's records are all in by the time it closes.  busy:
 * held while a program writes; a program that interrupts it (an IRQ's)
 * reserves on the ring directly, and the flush skips that CPU this tick. */
#define CS_STAGE_RECORDS 16

struct cs_stage {
	__u32 busy;
	__u32 n;
	struct cs_event ev[CS_STAGE_RECORDS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cs_stage);
} stage SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CS_RUN_PROGS * CS_RUN_BUCKETS);
	__type(key, __u32);
	__type(value, __u64);
} run_hist SEC(".maps");

static __always_inline struct cs_stats *stats_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&stats, &zero);
}

#define STAT_INC(st, field) \
	do { if (st) __sync_fetch_and_add(&(st)->field, 1); } while (0)

/* A program's own run time (time_runs): start, then count the run in its
 * kind's histogram.  Off by default: two clock reads a run. */
static __always_inline __u64 run_start(void)
{
	return time_runs ? bpf_ktime_get_ns() : 0;
}

static __always_inline void run_end(__u32 prog, __u64 t0)
{
	__u64 d, *c;
	__u32 i;

	if (!time_runs)
		return;
	d = (bpf_ktime_get_ns() - t0) / CS_RUN_BUCKET_NS;
	i = prog * CS_RUN_BUCKETS + (d < CS_RUN_BUCKETS - 1 ? d : CS_RUN_BUCKETS - 1);
	c = bpf_map_lookup_elem(&run_hist, &i);
	if (c)
		__sync_fetch_and_add(c, 1);
}

/* A record being written: a slot of this CPU's stage, or a reservation on
 * its ring. */
struct cs_rec {
	struct cs_stage *st;	/* staged (st->busy held) */
	void *ring;		/* reserved directly */
	struct cs_stats *stats;
	__u32 cpu;
};

/* Wake the reader only once a batch has piled up; the daemon also drains
 * every ring on its window tick, so a quiet ring is never stranded. */
static __always_inline __u64 wakeup_flags(void *ring)
{
	return bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) >= wakeup_bytes ?
	       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

/* Move the staged records to the ring in one piece; a full ring drops
 * them all, counted. */
static __always_inline void stage_flush(struct cs_stage *st, struct cs_stats *stats,
					__u32 cpu)
{
	__u32 n = st->n;
	void *ring;

	if (!n)
		return;
	if (n > CS_STAGE_RECORDS)
		n = CS_STAGE_RECORDS;
	st->n = 0;
	ring = bpf_map_lookup_elem(&rings, &cpu);
	if (!ring) {
		if (stats) {
			__sync_fetch_and_add(&stats->no_ring, 1);
			__sync_fetch_and_add(&stats->dropped, n);
		}
		return;
	}
	if (bpf_ringbuf_output(ring, st->ev, n * sizeof(struct cs_event), wakeup_flags(ring)) &&
	    stats)
		__sync_fetch_and_add(&stats->dropped, n);
}

/* Begin a record on this CPU: a slot of its stage (records go to the ring
 * CS_STAGE_RECORDS at a time: one reservation for many), or, while a
 * program this one interrupted holds the stage, a reservation of its own.
 * Counts the attempt and any drop. */
static __always_inline struct cs_event *event_reserve(struct cs_stats *stats,
						      struct cs_rec *r, __u32 cpu)
{
	struct cs_stage *st;
	struct cs_event *e;
	__u32 zero = 0, n;
	void *ring;

	r->st = NULL;
	r->ring = NULL;
	r->stats = stats;
	r->cpu = cpu;
	STAT_INC(stats, produced);
	st = bpf_map_lookup_elem(&stage, &zero);
	if (st && !__sync_lock_test_and_set(&st->busy, 1)) {
		/* event_submit flushes a full stage: n is below the bound,
		 * which the verifier wants to see */
		n = st->n;
		if (n < CS_STAGE_RECORDS) {
			r->st = st;
			return &st->ev[n];
		}
		__sync_lock_test_and_set(&st->busy, 0);
	}
	ring = bpf_map_lookup_elem(&rings, &cpu);
	if (!ring) {
		STAT_INC(stats, no_ring);
		STAT_INC(stats, dropped);
		return NULL;
	}
	e = bpf_ringbuf_reserve(ring, sizeof(*e), 0);
	if (!e) {
		STAT_INC(stats, dropped);
		return NULL;
	}
	r->ring = ring;
	return e;
}

static __always_inline void event_submit(struct cs_event *e, struct cs_rec *r)
{
	struct cs_stage *st = r->st;

	if (st) {
		if (++st->n >= CS_STAGE_RECORDS)
			stage_flush(st, r->stats, r->cpu);
		__sync_lock_test_and_set(&st->busy, 0);
		return;
	}
	if (r->ring)
		bpf_ringbuf_submit(e, wakeup_flags(r->ring));
}

/* Fill the header every record starts with. */
static __always_inline void event_header(struct cs_event *e, __u64 ts, __u32 tgid,
					 __u32 pid, __u32 cpu, __u32 node, __u8 type,
					 __u8 flags)
{
	e->ts_ns = ts;
	e->tgid = tgid;
	e->pid = pid;
	e->cpu = cpu;
	e->node = node;
	e->type = type;
	e->flags = flags;
	e->order = 0;
}

/* For records about the current task: check the filter, reserve a record
 * of this type and fill its header; NULL when filtered out or full.
 * fold: count a young process under its family (key_tgid). */
#endif /* CS_RECORD_BPF_H */
