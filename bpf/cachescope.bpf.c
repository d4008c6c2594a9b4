// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Slab and page-cache tracing for cachescoped.
 *
 * Seven tracepoints, each as a BTF tracepoint (tp_btf, typed arguments, cheap)
 * and as a classic tracepoint that the loader enables only where the kernel
 * lacks the BTF one.  Both variants decode their arguments and call one
 * handler per event kind, so there is one copy of the logic.
 *
 * The design idea: keep in the kernel only the state that lets one event
 * explain another, and keep it bounded.  The live-object map tells a free when
 * and where its object was allocated (lifetime, remote free, owning process);
 * the evicted-page map tells a page-cache insert that the same file range was
 * evicted shortly before (a refault, and how many evictions ago).  Everything
 * else is counted in userspace.  Records go to a ring buffer per CPU, with
 * wakeups batched by a byte threshold, and every failed reserve is counted.
 *
 * This file holds the programs, a few lines each; the logic lives in the
 * headers it includes, each with the maps it owns, as libbpf-tools split
 * theirs: tunables.bpf.h (first: what the loader sets), core_fixes.bpf.h
 * (where kernels differ, with the commits), record.bpf.h (rings, stage,
 * drop counters, record reserve and submit), task.bpf.h (the filter, key
 * ids, interrupt context), slab.bpf.h (with stack.bpf.h, the allocation
 * stacks of tracked objects), page.bpf.h and probes.bpf.h
 * (kvref's and the CUPTI library's USDT probes).  One object, one skeleton.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/usdt.bpf.h>
#include "cachescope.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#include "tunables.bpf.h"
#include "core_fixes.bpf.h"
#include "record.bpf.h"
#include "task.bpf.h"
#include "slab.bpf.h"
#include "page.bpf.h"
#include "probes.bpf.h"

/* ---- BTF tracepoints ---- */

SEC("tp_btf/kmem_cache_alloc")
int BPF_PROG(btf_kmem_cache_alloc, unsigned long call_site, const void *ptr,
	     struct kmem_cache *s, gfp_t gfp_flags, int node)
{
	/* the pointer's low half as a number, first, while it is in a
	 * register: a 32-bit move (the verifier allows no arithmetic on the
	 * pointer, nor a partial read of it once spilled) */
	__u32 lo, slot;
	__u64 t0;
	int shift;

	asm volatile("%0 = %1" : "=w"(lo) : "w"((__u32)(__u64)s));
	t0 = run_start();
	shift = alloc_track(ptr, lo, &slot, false);

	/* an untracked object leaves here: no name, no maps */
	if (shift >= 0) {
		remember_cache(s);
		/* typed argument: plain loads, no probe-read helper calls */
		handle_alloc(ctx, call_site, ptr, (__u64)s, s->object_size, s->size, node, 0,
			     true, shift, slot);
	}
	run_end(CS_RUN_ALLOC, t0);
	return 0;
}

SEC("tp_btf/kmem_cache_free")
int BPF_PROG(btf_kmem_cache_free, unsigned long call_site, const void *ptr,
	     const struct kmem_cache *s)
{
	__u64 t0 = run_start();

	handle_free(call_site, ptr);
	run_end(CS_RUN_FREE, t0);
	return 0;
}

SEC("tp_btf/kmalloc")
int BPF_PROG(btf_kmalloc, unsigned long call_site, const void *ptr,
	     size_t bytes_req, size_t bytes_alloc, gfp_t gfp_flags, int node)
{
	__u32 slot;
	__u64 t0;
	int shift;

	if (shed_mask & CS_SHED_KMALLOC)
		return 0;
	t0 = run_start();
	shift = alloc_track(ptr, (__u32)kmalloc_id(bytes_alloc), &slot, true);
	if (shift >= 0)
		handle_alloc(ctx, call_site, ptr, kmalloc_id(bytes_alloc), bytes_req, bytes_alloc,
			     node, CS_F_KMALLOC, true, shift, slot);
	run_end(CS_RUN_KMALLOC, t0);
	return 0;
}

SEC("tp_btf/kfree")
int BPF_PROG(btf_kfree, unsigned long call_site, const void *ptr)
{
	__u64 t0 = run_start();

	handle_free(call_site, ptr);
	run_end(CS_RUN_KFREE, t0);
	return 0;
}

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(btf_page_add, struct folio *folio)
{
	struct folio_id fid;
	__u64 t0;

	if (shed_mask & CS_SHED_PAGE)
		return 0;
	t0 = run_start();
	if (!folio_identify(folio, &fid))
		return 0;
	handle_page_add(&fid, true);
	run_end(CS_RUN_PAGE_ADD, t0);
	return 0;
}

SEC("tp_btf/mm_filemap_delete_from_page_cache")
int BPF_PROG(btf_page_del, struct folio *folio)
{
	struct folio_id fid;
	__u64 t0;

	if (shed_mask & CS_SHED_PAGE)
		return 0;
	t0 = run_start();
	if (!folio_identify(folio, &fid))
		return 0;
	handle_page_del(&fid, true);
	run_end(CS_RUN_PAGE_DEL, t0);
	return 0;
}

/* exec renames the process: refresh its comm for keys created after it */
static __always_inline int handle_exec(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, zero = 0;
	char comm[CS_COMM_LEN];
	__u64 *gen;

	bpf_get_current_comm(comm, sizeof(comm));
	bpf_map_update_elem(&task_comm, &tgid, comm, BPF_ANY);
	/* every CPU's task cache: a young process's family follows its comm */
	gen = bpf_map_lookup_elem(&exec_seq, &zero);
	if (gen)
		__sync_fetch_and_add(gen, 1);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(btf_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	return handle_exec();
}

/* --pid-tree only (the loader loads these two pairs then): the filter's
 * set of processes follows forks and exits.  The last thread's exit has
 * already counted its group's live threads down to 0 (do_exit). */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(btf_fork, struct task_struct *parent, struct task_struct *child)
{
	tree_fork(parent->tgid, child->tgid);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(btf_exit_task, struct task_struct *p)
{
	tree_exit(p->tgid, p->tgid, !p->signal->live.counter);
	return 0;
}

/* Run by the daemon on every CPU (BPF_PROG_TEST_RUN, BPF_F_TEST_RUN_ON_CPU)
 * before it drains the rings: this CPU's staged records go to its ring.
 * Runs in an IPI: a program it interrupted holds the stage, and then the
 * records wait for the next tick. */
SEC("raw_tp")
int flush_stage(void *ctx)
{
	__u32 zero = 0, cpu = bpf_get_smp_processor_id();
	struct cs_stage *st = bpf_map_lookup_elem(&stage, &zero);

	if (!st || __sync_lock_test_and_set(&st->busy, 1))
		return 0;
	stage_flush(st, stats_get(), cpu);
	__sync_lock_test_and_set(&st->busy, 0);
	return 0;
}

/* ---- kvref's USDT probes: the user-space KV cache ---- */


SEC("usdt")
int BPF_USDT(kv_block_alloc, long block, __u64 hash, long arg)
{
	return emit_kv(CS_KV_USE, block, hash, 0);
}

SEC("usdt")
int BPF_USDT(kv_prefix_hit, long block, __u64 hash, long refcnt)
{
	/* a cached or swapped-in block taken up again is in use once more */
	return refcnt == 1 ? emit_kv(CS_KV_USE, block, hash, 0) : 0;
}

SEC("usdt")
int BPF_USDT(kv_release, long block, __u64 hash, long arg)
{
	return emit_kv(CS_KV_RELEASE, block, hash, 0);
}

SEC("usdt")
int BPF_USDT(kv_swap_out, long block, __u64 hash, long slot)
{
	return emit_kv(CS_KV_SWAP_OUT, block, hash, slot);
}

SEC("usdt")
int BPF_USDT(kv_swap_in, long block, __u64 hash, long evictions)
{
	return emit_kv(CS_KV_SWAP_IN, block, hash, evictions);
}

SEC("usdt")
int BPF_USDT(kv_pool, long n_blocks, long block_bytes, long block_size, long device)
{
	return emit_kv(CS_KV_POOL, n_blocks, device == 1, block_bytes);
}

/* ---- libcachescope_cupti.so's USDT probes: CUPTI records of GPU work ---- */


SEC("usdt")
int BPF_USDT(gpu_kernel, long name, __u64 start, __u64 end, long device, long stream)
{
	return emit_gpu_record(CS_GPU_KERNEL, start, end, 0, 0, 0, device);
}

SEC("usdt")
int BPF_USDT(gpu_kv_kernel, long name, __u64 start, __u64 end, long device, long stream)
{
	return emit_gpu_record(CS_GPU_KV_KERNEL, start, end, 0, 0, 0, device);
}

SEC("usdt")
int BPF_USDT(gpu_memcpy, long copy_kind, __u64 bytes, long src_kind, long dst_kind,
	     __u64 start, __u64 end, long device, long stream)
{
	return emit_gpu_record(CS_GPU_MEMCPY, start, end, bytes, 0, copy_kind, device);
}

SEC("usdt")
int BPF_USDT(gpu_dropped, __u64 count, __u64 total)
{
	return emit_gpu_record(CS_GPU_DROPPED, 0, 0, count, 0, 0, 0);
}

SEC("usdt")
int BPF_USDT(gpu_memory, long op, __u64 address, __u64 bytes, __u64 timestamp, long device)
{
	/* CUpti_ActivityMemoryOperationType: 1 allocation, 2 release */
	if (op != 1 && op != 2)
		return 0;
	return emit_gpu_record(op == 1 ? CS_GPU_ALLOC : CS_GPU_RELEASE, timestamp, timestamp,
			       bytes, bytes, 0, device);
}

/* A batch: n bins at bins, read from the process one at a time, a record
 * each (a bin the process does not let us read ends the batch; a count over
 * CS_GPU_BATCH_MAX or a layout of another version is flagged, and the
 * daemon rejects it). */
struct batch_ctx {
	__u64 bins;
	__u8 flags;		/* probe_trust()'s, once a batch */
};

static long gpu_batch_bin(__u32 i, void *ctx)
{
	struct batch_ctx *c = ctx;
	struct cs_gpu_bin b;

	if (bpf_probe_read_user(&b, sizeof(b), (const void *)(c->bins + i * sizeof(b))))
		return 1;
	emit_gpu(&b, c->flags);	/* a drop is counted */
	return 0;
}

SEC("usdt")
int BPF_USDT(gpu_batch, __u64 bins, long n, long version)
{
	struct cs_gpu_bin b = { .op = CS_GPU_DROPPED };
	struct batch_ctx c = { .bins = bins, .flags = probe_trust() };

	if (version != CS_GPU_BATCH_VERSION || (unsigned long)n > CS_GPU_BATCH_MAX) {
		emit_gpu(&b, c.flags | CS_F_RANGE);
		return 0;
	}
	bpf_loop((__u32)n, gpu_batch_bin, &c, 0);
	return 0;
}

/* ---- classic tracepoints, for kernels without the BTF ones ---- */

SEC("tracepoint/kmem/kmem_cache_alloc")
int tp_kmem_cache_alloc(struct trace_event_raw_kmem_cache_alloc *ctx)
{
	/* fields read once, before any call: the verifier refuses a ctx
	 * pointer the compiler has moved */
	const void *ptr = ctx->ptr;
	__u64 call_site = ctx->call_site;
	__u32 req = ctx->bytes_req, alloc = ctx->bytes_alloc, loc = ctx->__data_loc_name;
	int node = ctx->node, shift;
	__u32 slot;
	__u64 cache;

	barrier_var(ptr);
	if ((__u64)ptr <= 16)
		return 0;
	cache = cache_id_from_name(ctx, loc);
	shift = alloc_track(ptr, (__u32)cache, &slot, false);
	if (shift < 0)
		return 0;
	return handle_alloc(ctx, call_site, ptr, cache, req, alloc, node, 0, false, shift, slot);
}

SEC("tracepoint/kmem/kmem_cache_free")
int tp_kmem_cache_free(struct trace_event_raw_kmem_cache_free *ctx)
{
	return handle_free(ctx->call_site, ctx->ptr);
}

SEC("tracepoint/kmem/kmalloc")
int tp_kmalloc(struct trace_event_raw_kmalloc *ctx)
{
	const void *ptr = ctx->ptr;
	__u64 call_site = ctx->call_site;
	__u32 req = ctx->bytes_req, alloc = ctx->bytes_alloc;
	int node = ctx->node, shift;
	__u32 slot;

	if (shed_mask & CS_SHED_KMALLOC)
		return 0;
	barrier_var(ptr);
	shift = alloc_track(ptr, (__u32)kmalloc_id(alloc), &slot, true);
	if (shift < 0)
		return 0;
	return handle_alloc(ctx, call_site, ptr, kmalloc_id(alloc), req, alloc, node, CS_F_KMALLOC,
			    false, shift, slot);
}

SEC("tracepoint/kmem/kfree")
int tp_kfree(struct trace_event_raw_kfree *ctx)
{
	return handle_free(ctx->call_site, ctx->ptr);
}

/* The classic page-cache events carry (dev, ino, index, order) but no
 * folio, so no file name either. */
static __always_inline void classic_fid(struct trace_event_raw_mm_filemap_op_page_cache *ctx,
					struct folio_id *fid)
{
	fid->ino = ctx->i_ino;
	fid->index = ctx->index;
	fid->dev = ctx->s_dev;
	fid->order = ctx->order;
	fid->gen = 0;
	fid->gone = false;	/* not visible here: truncations count as evictions */
	fid->host = NULL;
}

SEC("tracepoint/filemap/mm_filemap_add_to_page_cache")
int tp_page_add(struct trace_event_raw_mm_filemap_op_page_cache *ctx)
{
	struct folio_id fid;

	if (shed_mask & CS_SHED_PAGE)
		return 0;
	classic_fid(ctx, &fid);
	return handle_page_add(&fid, false);
}

SEC("tracepoint/filemap/mm_filemap_delete_from_page_cache")
int tp_page_del(struct trace_event_raw_mm_filemap_op_page_cache *ctx)
{
	struct folio_id fid;

	if (shed_mask & CS_SHED_PAGE)
		return 0;
	classic_fid(ctx, &fid);
	return handle_page_del(&fid, false);
}

SEC("tracepoint/sched/sched_process_exec")
int tp_exec(void *ctx)
{
	return handle_exec();
}

SEC("tracepoint/sched/sched_process_fork")
int tp_fork(struct trace_event_raw_sched_process_fork *ctx)
{
	tree_fork(bpf_get_current_pid_tgid() >> 32, ctx->child_pid);
	return 0;
}

SEC("tracepoint/sched/sched_process_exit")
int tp_exit_task(void *ctx)
{
	struct task_struct *t = (void *)bpf_get_current_task();
	__u64 id = bpf_get_current_pid_tgid();

	tree_exit(id >> 32, (__u32)id, !BPF_CORE_READ(t, signal, live.counter));
	return 0;
}
