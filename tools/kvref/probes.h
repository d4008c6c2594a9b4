/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * USDT probes of kvref (provider "kvref"), so that BPF can observe the
 * user-space KV cache: each is a nop in the code and a note in the ELF file
 * (readelf -n build/kvref) that a uprobe can attach to by name.
 *
 *   block_alloc(block, hash, pool)        block_free(block, hash, pool)
 *   evict(block, hash, swapped)           swap_out(block, hash, slot)
 *   swap_in(block, hash, evictions_since) prefix_hit(block, hash, refcnt)
 *   prefix_miss(index, pool)              step_begin(seq, pos, worker)
 *   step_end(seq, pos, worker)            release(block, hash, 0)
 *   pool(n_blocks, block_bytes, block_size, device)   at each cache's
 *                                         creation; device 1: the pool is
 *                                         in GPU memory (--backend cuda)
 *
 * A block is in use from block_alloc, or from a prefix_hit that leaves its
 * reference count at 1 (a cached or swapped-in block taken up again), until
 * release.
 */
#ifndef KVREF_PROBES_H
#define KVREF_PROBES_H

#include <stdbool.h>
#include <sys/sdt.h>

/* false (kvref --no-probes): no probe is ever reached, so that a tracer
 * sees kvref as an engine with no probes of its own (CUPTI alone) */
extern bool kvref_probes_on;

#define KVREF_PROBE3(name, a, b, c) \
	do { \
		if (kvref_probes_on) \
			DTRACE_PROBE3(kvref, name, a, b, c); \
	} while (0)
#define KVREF_PROBE4(name, a, b, c, d) \
	do { \
		if (kvref_probes_on) \
			DTRACE_PROBE4(kvref, name, a, b, c, d); \
	} while (0)

#endif
