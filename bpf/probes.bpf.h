/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Records from user-space probes: kvref's KV-cache blocks and the CUPTI
 * library's GPU records (its batches' bins, or single records), all with
 * the current task's header.
 * It owns no map.
 */
#ifndef CS_PROBES_BPF_H
#define CS_PROBES_BPF_H

#include "record.bpf.h"
#include "task.bpf.h"

/* Any process may load the CUPTI library or run kvref and fire their
 * probes with values of its choosing.  A record is believed when the
 * operator chose its process (the --pid or --cgroup filter let it through
 * traced()) or its real uid is one of --probe-user's: a user cannot take
 * another's real uid.  Else it is flagged and the daemon rejects it
 * (counted: usdt_rejected, reason untrusted), unless the daemon started
 * that process itself (--workload's kvref, known by its pid there). */
static __always_inline __u8 probe_trust(void)
{
	__u32 uid, i;

	if (filter_tgid || filter_cgroup)
		return 0;
	uid = (__u32)bpf_get_current_uid_gid();
	for (i = 0; i < CS_PROBE_UIDS; i++)
		if (i < probe_nuids && probe_uids[i] == uid)
			return 0;
	return CS_F_FOREIGN;
}

/* Probe arguments are whatever the process passed: one that does not fit
 * its field is not truncated into a plausible value but flagged
 * (CS_F_RANGE), and the daemon rejects the record. */
static __always_inline int emit_kv(__u32 op, long block, __u64 hash, long arg)
{
	struct cs_rec rec;
	struct cs_event *e = task_event(CS_EV_KV, &rec, false, false);

	if (!e)
		return 0;
	e->flags |= probe_trust();
	if ((unsigned long)block > 0xffffffffUL)
		e->flags |= CS_F_RANGE;
	e->kv.hash = hash;
	e->kv.arg = arg;
	e->kv.block = block;
	e->kv.op = op;
	event_submit(e, &rec);
	return 0;
}

/* A gpu record: one CUPTI record (the per-record probes) or one bin of a
 * batch.  Values the daemon bounds (usdt.h) are passed as they came. */
static __always_inline void emit_gpu(const struct cs_gpu_bin *b, __u8 flags)
{
	struct cs_rec rec;
	struct cs_event *e = task_event(CS_EV_GPU, &rec, false, false);

	if (!e)
		return;
	e->flags |= flags;
	e->gpu.start = b->start;
	e->gpu.end = b->end;
	e->gpu.bytes = b->bytes;
	e->gpu.busy_ns = b->busy_ns;
	e->gpu.size = b->size;
	e->gpu.count = b->count;
	e->gpu.kind = b->kind;
	e->gpu.op = b->op;
	e->gpu.pad = 0;
	event_submit(e, &rec);
}

/* One CUPTI record of the per-record probes (cachescoped --gpu-probes records). */
static __always_inline int emit_gpu_record(__u8 op, __u64 start, __u64 end, __u64 bytes,
					   __u64 size, long kind, long device)
{
	struct cs_gpu_bin b = {
		.start = start,
		.end = end,
		.busy_ns = end > start ? end - start : 0,
		.bytes = bytes,
		.size = size,
		.count = 1,
		.kind = (__u16)kind,
		.op = op,
	};

	emit_gpu(&b, probe_trust() | ((unsigned long)kind > 0xffffUL ||
				      (unsigned long)device >= CS_GPU_MAX_DEVICES ? CS_F_RANGE : 0));
	return 0;
}

#endif /* CS_PROBES_BPF_H */
