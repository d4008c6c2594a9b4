/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The maps, counters and record plumbing every program shares: the per-CPU
 * rings and their drop counters, the live-object and evicted-page maps, the
 * name maps, the filter, and one helper that fills a record's header.
 * Included once, by cachescope.bpf.c, after its tunables.
 */
#ifndef CS_MAPS_BPF_H
#define CS_MAPS_BPF_H

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

/* Global page-cache eviction sequence, the clock of refault distances. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} evict_seq SEC(".maps");

/* Per-CPU LRU lists: an insert takes no global lock.  The capacity is
 * shared out between CPUs' lists; a free on any CPU still finds its entry. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CS_LIVE_MAX_ENTRIES);
	__uint(map_flags, BPF_F_NO_COMMON_LRU);
	__type(key, __u64);
	__type(value, struct cs_live);
} live SEC(".maps");

/* Tracked objects per address-hash slot (CS_TRACK_SLOTS, cachescope.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CS_TRACK_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} track SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CS_EVICTED_MAX_ENTRIES);
	__type(key, struct cs_page_key);
	__type(value, struct cs_evicted);
} evicted SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CS_CACHE_MAX_ENTRIES);
	__type(key, __u64);
	__type(value, struct cs_cache_info);
} cache_info SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CS_COMM_MAX_ENTRIES);
	__type(key, __u32);
	__type(value, char[CS_COMM_LEN]);
} task_comm SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CS_COMM_MAX_ENTRIES);
	__type(key, struct cs_file_key);
	__type(value, char[CS_CACHE_NAME_LEN]);
} file_name SEC(".maps");

/* The process last seen on each CPU and the key id it counts under, so
 * that the common case (the same process again) costs one per-CPU lookup:
 * no task walk, no comm copy, no hash lookups in the name maps.  exec_seq
 * counts execs (a comm change moves a young process to another family). */
struct cs_task_cache {
	__u32 tgid;
	__u32 key;
	__u64 start;		/* its group leader's start_time */
	__u64 exec_gen;		/* exec_seq when this was filled */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cs_task_cache);
} task_cache SEC(".maps");

/* whether this CPU is in a hardirq or softirq handler (CS_IRQ_STALE_NS) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cs_irq);
} irq_ctx SEC(".maps");

static __always_inline struct cs_irq *irq_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&irq_ctx, &zero);
}

static __always_inline void irq_enter_ev(void)
{
	struct cs_irq *c = irq_get();
	__u64 now;

	if (!c)
		return;
	now = bpf_ktime_get_ns();
	if (!c->depth || now - c->since > CS_IRQ_STALE_NS) {
		c->depth = 1;
		c->since = now;
	} else {
		c->depth++;
	}
}

static __always_inline void irq_exit_ev(void)
{
	struct cs_irq *c = irq_get();

	if (c && c->depth)
		c->depth--;
}

/* In an interrupt the current task is whoever was interrupted. */
static __always_inline bool in_irq_ctx(__u64 now)
{
	struct cs_irq *c = irq_get();

	return c && c->depth && now - c->since <= CS_IRQ_STALE_NS;
}

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} exec_seq SEC(".maps");

/* Caches already named in cache_info, direct-mapped by pointer: a slot
 * that holds the pointer saves the hash lookup. */
#define CS_CACHE_SEEN_SLOTS 1024

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CS_CACHE_SEEN_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} cache_seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CS_RUN_PROGS * CS_RUN_BUCKETS);
	__type(key, __u32);
	__type(value, __u64);
} run_hist SEC(".maps");

/* --cgroup: the cgroup whose subtree is traced, in slot 0 (the loader
 * puts its directory's fd there). */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_filter SEC(".maps");

/* Processes to trace when filter_tgid is set. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CS_TGID_MAX_ENTRIES);
	__type(key, __u32);
	__type(value, __u8);
} tgids SEC(".maps");

static __always_inline struct cs_stats *stats_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&stats, &zero);
}

#define STAT_INC(st, field) \
	do { if (st) __sync_fetch_and_add(&(st)->field, 1); } while (0)

static __always_inline bool comm_matches(void)
{
	char comm[CS_COMM_LEN];
	int i;

	bpf_get_current_comm(comm, sizeof(comm));
	for (i = 0; i < CS_COMM_LEN; i++) {
		if (comm[i] != comm_filter[i])
			return false;
		if (!comm[i])
			break;
	}
	return true;
}

static __always_inline bool traced(__u32 tgid)
{
	if (tgid == self_tgid)
		return false;
	if (filter_tgid && !bpf_map_lookup_elem(&tgids, &tgid))
		return false;
	/* the cgroup or any below it: one helper, no map lookup of ours
	 * (cheaper than the one-id compare it replaced: DESIGN.md, Filters) */
	if (filter_cgroup && bpf_current_task_under_cgroup(&cgroup_filter, 0) != 1)
		return false;
	if (filter_comm && !comm_matches())
		return false;
	return true;
}

/* --pid-tree: a process forked by a traced process is traced (the daemon
 * adds those alive at start).  A thread is no new process: the classic
 * tracepoint cannot tell one (it has the child's pid, the thread id), so
 * it adds the thread too, and its exit takes it out again. */
static __always_inline void tree_fork(__u32 parent_tgid, __u32 child)
{
	__u8 one = 1;

	if (child == parent_tgid || !bpf_map_lookup_elem(&tgids, &parent_tgid))
		return;
	bpf_map_update_elem(&tgids, &child, &one, BPF_ANY);
}

/* A task exits: its process leaves the map with its last thread (its pid
 * may be given out again); thread: a thread id the classic fork added. */
static __always_inline void tree_exit(__u32 tgid, __u32 thread, bool group_dead)
{
	if (thread != tgid)
		bpf_map_delete_elem(&tgids, &thread);
	if (group_dead)
		bpf_map_delete_elem(&tgids, &tgid);
}

static __always_inline void remember_comm(__u32 tgid)
{
	char comm[CS_COMM_LEN];

	if (bpf_map_lookup_elem(&task_comm, &tgid))
		return;
	bpf_get_current_comm(comm, sizeof(comm));
	bpf_map_update_elem(&task_comm, &tgid, comm, BPF_NOEXIST);
}

/* The id a record is counted under: the process, or while it is younger
 * than fold_young_ns its command's family (cs_family_of), so that a fork
 * storm of /bin/true is a key per cache, not a key per cache and process.
 * The live map keeps the id an object was counted under, so its free goes
 * to the same key: a long-lived process's first moments stay with its
 * family.  Also names the id in task_comm.  The per-CPU task cache answers
 * for the process seen last on this CPU.  btf: the caller is a BTF program
 * (plain loads of the task). */
static __always_inline __u32 key_tgid(__u32 tgid, __u64 now, bool btf)
{
	struct cs_task_cache *tc;
	char comm[CS_COMM_LEN];
	__u32 zero = 0, key = tgid;
	__u64 *genp, gen = 0, start = 0;

	tc = bpf_map_lookup_elem(&task_cache, &zero);
	genp = bpf_map_lookup_elem(&exec_seq, &zero);
	if (genp)
		gen = *genp;
	if (tc && tc->tgid == tgid && tc->exec_gen == gen &&
	    (tc->key == tgid || now - tc->start < fold_young_ns))
		return tc->key;

	if (fold_young_ns && tgid) {
		if (btf) {
			start = bpf_get_current_task_btf()->group_leader->start_time;
		} else {
			struct task_struct *t = (void *)bpf_get_current_task();

			start = BPF_CORE_READ(t, group_leader, start_time);
		}
		if (now - start < fold_young_ns) {
			bpf_get_current_comm(comm, sizeof(comm));
			key = cs_family_of(comm);
		}
	}
	remember_comm(key);
	if (tc) {
		/* an IRQ's program on this CPU may read it between these
		 * stores: the tgid goes last, so it sees a miss, never a
		 * stale key under the right tgid */
		tc->tgid = 0;
		asm volatile("" ::: "memory");
		tc->key = key;
		tc->start = start;
		tc->exec_gen = gen;
		asm volatile("" ::: "memory");
		tc->tgid = tgid;
	}
	return key;
}

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
static __always_inline struct cs_event *task_event(__u8 type, struct cs_rec *r,
						   bool fold, bool btf)
{
	__u64 id = bpf_get_current_pid_tgid(), now;
	__u32 tgid = id >> 32, cpu;
	struct cs_event *e;

	if (!traced(tgid))
		return NULL;
	now = bpf_ktime_get_ns();
	if (fold)
		tgid = key_tgid(tgid, now, btf);
	else
		remember_comm(tgid);
	cpu = bpf_get_smp_processor_id();
	e = event_reserve(stats_get(), r, cpu);
	if (!e)
		return NULL;
	event_header(e, now, tgid, (__u32)id, cpu, bpf_get_numa_node_id(), type, 0);
	return e;
}

#endif /* CS_MAPS_BPF_H */
