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
 * before its rows are made, for at most GPU_JOIN_MAX processes a window
 * (the first met in the table's walk; the rest join nothing).
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

#define GPU_JOIN_MAX 64

struct gpu_join {
	struct {
		uint32_t tgid;
		uint64_t kernel_ns, kv_kernel_ns, copy_bytes;
	} sum[GPU_JOIN_MAX];
	unsigned int n;
};

void gpu_join_reset(struct gpu_join *j);
/* Add key a's window w, if it is a gpu key with traffic in it. */
void gpu_join_key(struct gpu_join *j, const struct acc *a, uint64_t w);
/* The row's tgid_gpu_* from the sums of its process (none: left 0). */
void gpu_join_row(const struct gpu_join *j, struct wrow *r);

#endif
