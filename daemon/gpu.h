/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The gpu domain: the CUPTI library's records of a CUDA process on three
 * keys of it (GPU_KEY_*): kernels (count and busy time), the KV-cache
 * kernels again, and copies and device allocations, counted like slab
 * objects (live bytes from allocation to release).
 *
 * And the host-GPU join: every row of a process in a window carries what
 * that process did on the GPU in the same window (tgid_gpu_*), whichever
 * key the row is of.  The sums are gathered over the window's gpu keys
 * before its rows are made, for every process with gpu traffic in the
 * window: one entry a process, sorted by tgid, looked up by each row.
 */
#ifndef CS_GPU_H
#define CS_GPU_H

#include <stdbool.h>
#include <stdint.h>
#include "../bpf/cachescope.h"

struct acc;
struct wslot;
struct wrow;

/* Account the gpu record e (usdt_check passed) on key a's window slot s,
 * every sum saturating.  A release of more than the key holds live stops
 * the live count at zero; true then, for the caller to count. */
bool gpu_add(struct acc *a, struct wslot *s, const struct cs_event *e);

struct gpu_sum {
	uint32_t tgid;
	uint64_t kernel_ns, kv_kernel_ns, copy_bytes;
};

/* Kept from window to window (its array grows to the most gpu keys of a
 * window, and stays): a process's keys are summed in gpu_join_done. */
struct gpu_join {
	struct gpu_sum *sum;
	size_t n, cap;
	uint64_t unjoined;	/* gpu keys left out: no memory to grow */
};

/* Begin a window's join. */
void gpu_join_reset(struct gpu_join *j);
/* Add key a's window w, if it is a gpu key with traffic in it; without
 * memory to hold it the key is counted in unjoined and left out. */
void gpu_join_key(struct gpu_join *j, const struct acc *a, uint64_t w);
/* The keys added are in: one sum a process, sorted. */
void gpu_join_done(struct gpu_join *j);
/* The row's tgid_gpu_* from the sums of its process (none: left 0). */
void gpu_join_row(const struct gpu_join *j, struct wrow *r);
void gpu_join_release(struct gpu_join *j);

#endif
