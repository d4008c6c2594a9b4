/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The programs' tunables, the first thing every header includes: read-only
 * data the loader sets before load (the verifier sees them as constants,
 * so a filter that is off costs nothing), and one array the daemon writes
 * while it runs (the skeleton's bss is mapped).
 */
#ifndef CS_TUNABLES_BPF_H
#define CS_TUNABLES_BPF_H

const volatile __u32 self_tgid = 0;
const volatile bool filter_tgid = false;
const volatile bool filter_cgroup = false;	/* cgroup_filter holds it */
const volatile bool filter_comm = false;
const volatile char comm_filter[CS_COMM_LEN] = {};
const volatile __u32 wakeup_bytes = 256 << 10;
const volatile __u32 ring_bytes = CS_RINGBUF_BYTES;	/* --ring-kb */
/* the sampler is auto: allocs are passed over while a ring fills
 * (ring_backoff); a fixed --sample N never changes */
const volatile bool ring_backoff_on = false;
const volatile __u32 page_shift = 12;
const volatile __u64 fold_young_ns = 0;	/* 0: every process has its own keys */
const volatile bool time_runs = false;	/* run_hist: programs time themselves */
/* --probe-user: the real uids whose probe records are believed (root's
 * by default: probe_uids[0] is 0) */
const volatile __u32 probe_uids[CS_PROBE_UIDS] = {};
const volatile __u32 probe_nuids = 1;
/* allocation stacks taken a second per process (stack.bpf.h); 0: none */
const volatile __u32 stack_per_s = 0;

/* Slab objects of the caches of a slot are tracked 1 in 2^cache_shift[slot]
 * (CS_TRACK_SLOTS, CS_SHIFT_SLOTS); the daemon's sampler sets it. */
__u8 cache_shift[CS_SHIFT_SLOTS] = {};

/* Optional programs whose work the daemon's --budget has shed (CS_SHED_*):
 * such a program returns at its first load.  The daemon also detaches
 * the BTF ones (a detached program costs not even the dispatch); the flag
 * stops them first, and holds a classic tracepoint's, which it could not
 * attach again once its privileges are dropped (perf_event_open). */
__u32 shed_mask = 0;

/* While --budget cycles the alloc programs (attached 1/2^duty
 * of the time, CS_DUTY_SHIFT_MAX): duty, which every tracked object's
 * shift carries on top of the sampler's.  kmalloc's own: the same while
 * it cycles with kmem_cache_alloc's, 0 while the daemon holds it attached
 * (where cycling it would cost more than its detach saves: a tracepoint
 * that fires a few hundred times a second) or cannot detach it. */
__u32 alloc_duty_shift = 0;
__u32 kmalloc_duty_shift = 0;

#endif /* CS_TUNABLES_BPF_H */
