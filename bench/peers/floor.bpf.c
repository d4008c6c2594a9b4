// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The floor under every tracer of these events: a program that does
 * nothing, on each of the four slab tracepoints cachescoped uses, the same
 * kind of attachment (tp_btf).  What it costs the traced is what the
 * kernel's dispatch to a BPF program costs, which no tracer of these
 * events can go below (bench/floor.c loads it; bench/lib.sh's
 * tracer_rounds runs it beside the peers).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tp_btf/kmem_cache_alloc")
int BPF_PROG(floor_kmem_cache_alloc)
{
	return 0;
}

SEC("tp_btf/kmem_cache_free")
int BPF_PROG(floor_kmem_cache_free)
{
	return 0;
}

SEC("tp_btf/kmalloc")
int BPF_PROG(floor_kmalloc)
{
	return 0;
}

SEC("tp_btf/kfree")
int BPF_PROG(floor_kfree)
{
	return 0;
}
