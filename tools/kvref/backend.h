/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A compute backend of kvref: where the weights, the KV block pool and the
 * forward pass live.  The CPU backend is model.c (kv_backend_cpu); the CUDA
 * backend is cuda/kvref_cuda.cu, built into kvref_cuda.so where nvcc exists
 * and loaded by kvref with dlopen() only when --backend cuda asks for it, so
 * kvref itself never links CUDA and runs the same on every machine.
 *
 * The cache bookkeeping (kvcache.c: free list, LRU, prefix hashes, swap
 * slots) stays on the host for every backend; a backend only says where the
 * pool's bytes are (storage, NULL for host memory) and runs the forward
 * pass over them.
 */
#ifndef KVREF_BACKEND_H
#define KVREF_BACKEND_H

#include <stddef.h>
#include "kvcache.h"
#include "model.h"

struct kv_backend {
	const char *name;
	void *ctx;
	const struct kv_storage_ops *storage;	/* pass with ctx to kv_cache_new */
	/* scratch of one worker thread; 0 or -errno */
	int (*state_new)(void *ctx, void **state);
	void (*state_free)(void *ctx, void *state);
	/* model_forward's contract: *logits is host memory, valid until the
	 * next forward on the same state */
	int (*forward)(void *state, struct kv_cache *kc, struct kv_seq *seq,
		       int token, int pos, float **logits);
	void (*close)(void *ctx);
};

/* The CPU backend over model m (which must outlive it). */
void kv_backend_cpu(struct kv_backend *b, const struct kv_model *m);

/*
 * Entry point of kvref_cuda.so: fills b with the CUDA backend of model m
 * (weights copied to the device; m must outlive b).  Returns 0, or -errno
 * with a one-line reason in err (no device, no driver, out of memory).
 */
#define KVREF_CUDA_OPEN "kvref_cuda_open"
typedef int kvref_cuda_open_fn(const struct kv_model *m, struct kv_backend *b,
			       char *err, size_t errlen);

#endif
