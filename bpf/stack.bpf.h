/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Allocation stacks of tracked slab objects (struct cs_stack): what the
 * daemon needs to name the user code behind a leak.  The kernel walks a
 * user stack by frame pointers only, and the distributions' programs and
 * libraries are built without them, so the walk would stop in libc's
 * system-call wrapper; instead this copies the user registers and the top
 * of the user stack, and the daemon unwinds them by the programs' own
 * call-frame information (libdw), as perf's --call-graph dwarf does.
 *
 * Stacks are taken only where a leak is suspected: for the keys (process,
 * cache) the daemon names in stack_keys (their old objects rise), until
 * the deadline it gives; with none named (stack_any 0) the cost is one
 * load.  The copy (up to CS_STACK_BYTES) is then taken only for objects
 * already tracked (the sampler's 1 in 2^shift), only in a task's own
 * context (not an interrupt's, not a kernel thread's), and about
 * stack_per_s a second per process, at random among the key's
 * allocations.  What the limit and a full ring turn away is counted
 * (stats.stack_limited, stats.stack_dropped).
 *
 * The daemon unwinds after it has given up its privileges, when the
 * kernel no longer lets it read other processes' /proc/PID/maps; the
 * iterator stack_maps tells it a process's executable mappings instead
 * (the file, its address and offset), for the process it names in
 * maps_tgid.
 * In a Python process the daemon registered (py_procs), the innermost
 * frames of the interpreter's own stack are read too (py_frames): the
 * native stack of a Python program names the interpreter's loop alone.
 * The maps it owns: stack_ring, stack_rate, stack_keys, py_procs.
 */
#ifndef CS_STACK_BPF_H
#define CS_STACK_BPF_H

#include "tunables.bpf.h"
#include "record.bpf.h"
#include "task.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, CS_STACK_RING_BYTES);
} stack_ring SEC(".maps");

/* per process: the second (ktime >> 30), the wanted allocations seen in
 * it and in the second before, and the stacks taken in it */
struct cs_stack_rate {
	__u32 sec;
	__u32 seen, last, taken;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct cs_stack_rate);
} stack_rate SEC(".maps");

/* the keys whose objects' stacks are wanted: (key id, cache) -> until when
 * (bpf_ktime_get_ns) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CS_STACK_KEYS);
	__type(key, struct cs_stack_key);
	__type(value, __u64);
} stack_keys SEC(".maps");

/* Python processes: pid -> the address of its interpreter's _PyRuntime
 * (CPython 3.11), registered by the daemon */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u64);
} py_procs SEC(".maps");

/* whether stack_keys has any entry: the daemon keeps it */
__u32 stack_any = 0;

/* A process's turn to have a stack taken: each wanted allocation with
 * the chance stack_per_s / (those of the second before), so that the
 * stacks are spread over all of them at random (the first allocation
 * after a pause would always be the same code's), and never more than
 * twice stack_per_s in a second. */
static __always_inline bool stack_turn(__u32 pid, __u64 now, struct cs_stats *st)
{
	struct cs_stack_rate r0 = { .sec = (__u32)(now >> 30), .seen = 1, .taken = 1 }, *r;

	r = bpf_map_lookup_elem(&stack_rate, &pid);
	if (!r) {
		bpf_map_update_elem(&stack_rate, &pid, &r0, BPF_ANY);
		return true;
	}
	if (r->sec != r0.sec) {
		r->last = r->sec + 1 == r0.sec ? r->seen : 0;
		r->sec = r0.sec;
		r->seen = 0;
		r->taken = 0;
	}
	r->seen++;
	if (r->taken >= 2 * stack_per_s ||
	    (r->last > stack_per_s && bpf_get_prandom_u32() % r->last >= stack_per_s)) {
		STAT_INC(st, stack_limited);
		return false;
	}
	r->taken++;
	return true;
}

static __always_inline __u64 user_u64(__u64 addr)
{
	__u64 v = 0;

	bpf_probe_read_user(&v, sizeof(v), (void *)addr);
	return v;
}

/* A str's text into buf: its last n - 1 characters (the end of a path
 * says the most), "" unless it is compact ASCII. */
static __always_inline void py_str(__u64 obj, char *buf, __u32 n)
{
	__u64 len = user_u64(obj + CS_PY_STR_LENGTH), from = 0;
	__u32 state = 0;

	buf[0] = 0;
	if (!obj || bpf_probe_read_user(&state, sizeof(state), (void *)(obj + CS_PY_STR_STATE)) ||
	    (state & 0x60) != 0x60)
		return;
	if (len > n - 1)
		from = len - (n - 1);
	bpf_probe_read_user_str(buf, n, (void *)(obj + CS_PY_STR_ASCII_DATA + from));
}

/* The current thread's innermost Python frames, where the process is a
 * registered Python 3.11: its thread state found by native thread id in
 * the first interpreter's list, then down the frame chain. */
static __always_inline void py_frames(struct cs_stack *s, __u32 pid, __u32 tid)
{
	__u64 *rt = bpf_map_lookup_elem(&py_procs, &pid), ts, frame, code;
	__u32 i, n = 0;

	s->npy = 0;
	if (!rt)
		return;
	ts = user_u64(user_u64(*rt + CS_PY_RT_INTERP_HEAD) + CS_PY_IS_THREADS_HEAD);
	for (i = 0; i < CS_PY_THREADS && ts; i++) {
		if ((__u32)user_u64(ts + CS_PY_TS_NATIVE_ID) == tid)
			break;
		ts = user_u64(ts + CS_PY_TS_NEXT);
	}
	if (!ts || i == CS_PY_THREADS)
		return;
	frame = user_u64(user_u64(ts + CS_PY_TS_CFRAME) + CS_PY_CF_CURRENT);
	for (i = 0; i < CS_PY_FRAMES && frame; i++) {
		struct cs_py_frame *f = &s->py[i];

		code = user_u64(frame + CS_PY_IF_CODE);
		if (!code)
			break;
		py_str(user_u64(code + CS_PY_CO_QUALNAME), f->name, sizeof(f->name));
		py_str(user_u64(code + CS_PY_CO_FILENAME), f->file, sizeof(f->file));
		f->line = 0;
		bpf_probe_read_user(&f->line, sizeof(f->line), (void *)(code + CS_PY_CO_FIRSTLINENO));
		f->pad = 0;
		n++;
		frame = user_u64(frame + CS_PY_IF_PREVIOUS);
	}
	s->npy = n;
}

/* The allocation stack of the object at ptr, allocated at now and counted
 * under key id tgid, to stack_ring. */
static __always_inline void stack_take(void *ctx, __u64 ptr, __u64 now, __u64 cache,
				       __u32 tgid, struct cs_stats *st)
{
#if defined(__TARGET_ARCH_x86)
	struct cs_stack_key sk = { .cache = cache, .tgid = tgid };
	struct task_struct *task;
	struct cs_stack *s;
	struct pt_regs *regs;
	__u64 id, sp, *until;
	__u32 i, len = 0;
	long n;

	if (!stack_per_s || !stack_any)
		return;
	until = bpf_map_lookup_elem(&stack_keys, &sk);
	if (!until || *until < now || in_irq_ctx())
		return;
	task = bpf_get_current_task_btf();
	if (task->flags & CS_PF_KTHREAD)
		return;
	id = bpf_get_current_pid_tgid();
	if (!stack_turn(id >> 32, now, st))
		return;
	s = bpf_ringbuf_reserve(&stack_ring, sizeof(*s), 0);
	if (!s) {
		STAT_INC(st, stack_dropped);
		return;
	}
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	s->ts_ns = now;
	s->ptr = ptr;
	s->cache = cache;
	s->tgid = tgid;
	s->pid = id >> 32;
	s->tid = (__u32)id;
	py_frames(s, s->pid, s->tid);
	/* DWARF's x86-64 register numbers */
	s->regs[0] = BPF_CORE_READ(regs, ax);
	s->regs[1] = BPF_CORE_READ(regs, dx);
	s->regs[2] = BPF_CORE_READ(regs, cx);
	s->regs[3] = BPF_CORE_READ(regs, bx);
	s->regs[4] = BPF_CORE_READ(regs, si);
	s->regs[5] = BPF_CORE_READ(regs, di);
	s->regs[6] = BPF_CORE_READ(regs, bp);
	s->regs[7] = sp = BPF_CORE_READ(regs, sp);
	s->regs[8] = BPF_CORE_READ(regs, r8);
	s->regs[9] = BPF_CORE_READ(regs, r9);
	s->regs[10] = BPF_CORE_READ(regs, r10);
	s->regs[11] = BPF_CORE_READ(regs, r11);
	s->regs[12] = BPF_CORE_READ(regs, r12);
	s->regs[13] = BPF_CORE_READ(regs, r13);
	s->regs[14] = BPF_CORE_READ(regs, r14);
	s->regs[15] = BPF_CORE_READ(regs, r15);
	s->regs[16] = BPF_CORE_READ(regs, ip);
	/* chunk by chunk: the stack may end (the main thread's top, below
	 * its arguments) before CS_STACK_BYTES, and a read past the end
	 * fails whole */
	for (i = 0; i < CS_STACK_BYTES / CS_STACK_CHUNK; i++) {
		if (bpf_probe_read_user(s->data + i * CS_STACK_CHUNK, CS_STACK_CHUNK,
					(void *)(sp + i * CS_STACK_CHUNK)))
			break;
		len += CS_STACK_CHUNK;
	}
	s->len = len;
	n = bpf_get_stack(ctx, s->kframes, sizeof(s->kframes), 0);
	s->nkframes = n > 0 ? n / sizeof(__u64) : 0;
	STAT_INC(st, stack_sampled);
	bpf_ringbuf_submit(s, 0);
#endif
}

/* the process whose executable mappings stack_maps prints: the daemon sets
 * it before each read (the skeleton's bss is mapped) */
__u32 maps_tgid = 0;
/* and a number each line begins with, new for each read: a file name with
 * a newline in it cannot begin a line of its own */
__u64 maps_nonce = 0;

#define CS_VM_EXEC 0x00000004	/* include/linux/mm.h */

#define CS_PATH_DEPTH 24

/* One line per executable file mapping of process maps_tgid: the nonce,
 * "start end offset" in hex, the file's device (the kernel's dev_t) and
 * inode, then its path components, innermost first, each after a tab (the
 * daemon puts them in order, and opens the file only if it is that
 * inode).  The path is walked up the dentries and across mounts by hand:
 * bpf_d_path takes only a trusted path, and an iterator's vm_file is not
 * one. */
SEC("iter/task_vma")
int stack_maps(struct bpf_iter__task_vma *ctx)
{
	struct vm_area_struct *vma = ctx->vma;
	struct task_struct *task = ctx->task;
	struct seq_file *seq = ctx->meta->seq;
	struct dentry *d, *parent, *root;
	struct mount *mnt, *up;
	struct vfsmount *vfs;
	struct file *file;
	char name[64];
	__u64 off;
	int i;

	if (!task || !vma || task->tgid != maps_tgid || task->pid != task->tgid)
		return 0;
	if (!(vma->vm_flags & CS_VM_EXEC))
		return 0;
	file = vma->vm_file;
	if (!file)
		return 0;
	off = (__u64)vma->vm_pgoff << page_shift;
	BPF_SEQ_PRINTF(seq, "%llx %lx %lx %llx %u %lu", maps_nonce, vma->vm_start, vma->vm_end,
		       off, BPF_CORE_READ(file, f_inode, i_sb, s_dev),
		       BPF_CORE_READ(file, f_inode, i_ino));
	d = BPF_CORE_READ(file, f_path.dentry);
	vfs = BPF_CORE_READ(file, f_path.mnt);
	mnt = container_of(vfs, struct mount, mnt);
	for (i = 0; i < CS_PATH_DEPTH && d; i++) {
		root = BPF_CORE_READ(mnt, mnt.mnt_root);
		if (d == root) {	/* up to the mount point, in the mount above */
			up = BPF_CORE_READ(mnt, mnt_parent);
			if (up == mnt)
				break;
			d = BPF_CORE_READ(mnt, mnt_mountpoint);
			mnt = up;
			continue;
		}
		parent = BPF_CORE_READ(d, d_parent);
		if (parent == d)
			break;
		if (bpf_probe_read_kernel_str(name, sizeof(name), BPF_CORE_READ(d, d_name.name)) < 0)
			break;
		BPF_SEQ_PRINTF(seq, "\t%s", name);
		d = parent;
	}
	BPF_SEQ_PRINTF(seq, "\n");
	return 0;
}

#endif /* CS_STACK_BPF_H */
