/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Records from user-space probes: kvref's KV-cache blocks and the CUPTI
 * library's GPU records, both with the current task's header.
 * It owns no map.
 */
#ifndef CS_PROBES_BPF_H
#define CS_PROBES_BPF_H

#include "record.bpf.h"
#include "task.bpf.h"

/* Probe arguments are whatever the process passed: one that does not fit
 * its field is not truncated into a plausible value but flagged
 * (CS_F_RANGE), and the daemon rejects the record. */
static __always_inline int emit_kv(__u32 op, long block, __u64 hash, long arg)
{
	struct cs_rec rec;
	struct cs_event *e = task_event(CS_EV_KV, &rec, false, false);

	if (!e)
		return 0;
	if ((unsigned long)block > 0xffffffffUL)
		e->flags |= CS_F_RANGE;
	e->kv.hash = hash;
	e->kv.arg = arg;
	e->kv.block = block;
	e->kv.op = op;
	event_submit(e, &rec);
	return 0;
}

static __always_inline int emit_gpu(__u8 op, __u64 start, __u64 end, __u64 bytes,
				    __u64 addr, long stream, long kind, long device)
{
	struct cs_rec rec;
	struct cs_event *e = task_event(CS_EV_GPU, &rec, false, false);

	if (!e)
		return 0;
	if ((unsigned long)stream > 0xffffffffUL || (unsigned long)kind > 0xffffUL ||
	    (unsigned long)device >= CS_GPU_MAX_DEVICES)
		e->flags |= CS_F_RANGE;
	e->gpu.start = start;
	e->gpu.end = end;
	e->gpu.bytes = bytes;
	e->gpu.addr = addr;
	e->gpu.stream = stream;
	e->gpu.kind = kind;
	e->gpu.op = op;
	e->gpu.pad = 0;
	event_submit(e, &rec);
	return 0;
}

#endif /* CS_PROBES_BPF_H */
