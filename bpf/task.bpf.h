/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The current task: the filter (--pid, --pid-tree, --cgroup, --comm), its
 * command's name (task_comm), the key id a record counts under (key_tgid,
 * with the per-CPU task cache and the exec sequence), whether this CPU is
 * in an interrupt, and task_event, which starts a record about the task.
 */
#ifndef CS_TASK_BPF_H
#define CS_TASK_BPF_H

#include "tunables.bpf.h"
#include "record.bpf.h"

#define CS_PF_KTHREAD 0x00200000	/* include/linux/sched.h */

/* The command of each key id (a process, or a young one's family);
 * exec renames a process (handle_exec). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CS_COMM_MAX_ENTRIES);
	__type(key, __u32);
	__type(value, char[CS_COMM_LEN]);
} task_comm SEC(".maps");

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

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} exec_seq SEC(".maps");

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
 * than fold_young_ns its user's and command's family (cs_family_of), so that a fork
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
			key = cs_family_of((__u32)bpf_get_current_uid_gid(), comm);
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

/* Whether the program runs in an interrupt (hardirq, softirq, NMI), where
 * the current task is only whoever was interrupted.  Interrupts taken in
 * the kernel run on stacks of their own: x86-64 and arm64 switch to the
 * CPU's IRQ stack for a hardirq and for softirqs (do_softirq_own_stack,
 * from local_bh_enable), NMIs and exceptions to theirs.  So the first
 * question is where this program's own frame is: on the task's stack
 * (task->stack up to its pt_regs at the top) or not.  One probe read
 * copies the two pointers as numbers (the verifier allows no arithmetic
 * on them), and it runs only where a free's process matches the object's.
 * x86-64 alone does not switch for an interrupt taken in user mode (the
 * task's kernel stack is empty then: irq_stack.h), nor for the softirqs
 * its exit runs: there the frame is on the task's stack, and the entry's
 * pt_regs at the top say so: orig_ax is -1 (no system call to restart)
 * for an interrupt or an exception, the call's number in a system call.
 * A page fault taken in user mode looks the same, so its frees count as
 * an interrupt's too: they are few (its allocations are the process's).
 * A PREEMPT_RT kernel runs softirqs in threads: there a free counts as
 * the thread's (a kthread's: nobody's own free either). */
static __always_inline bool in_irq_ctx(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct { void *fp, *regs; } p;
	struct { __u64 fp, top; } n;
	__u64 lo = (__u64)task->stack;

	asm volatile("%0 = r10" : "=r"(p.fp));
	p.regs = regs;
	if (bpf_probe_read_kernel(&n, sizeof(n), &p))
		return false;
	if (n.fp - lo >= n.top - lo)
		return true;
#if defined(__TARGET_ARCH_x86)
	/* a user task's entry frame (a kthread's is zeroed) */
	return !(task->flags & CS_PF_KTHREAD) && regs->orig_ax == (unsigned long)-1;
#else
	return false;
#endif
}

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

#endif /* CS_TASK_BPF_H */
