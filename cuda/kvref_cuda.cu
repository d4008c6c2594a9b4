// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The CUDA backend of kvref (kvref_cuda.so, loaded by kvref --backend cuda):
 * the same transformer and the same paged KV cache as the CPU backend, with
 * the weights, the block pool and every step of the forward pass on GPU 0.
 *
 * The one idea: only the bytes move to the GPU, the cache's bookkeeping does
 * not.  kvcache.c still owns the free list, the LRU, the prefix hashes and
 * the swap slots and fires the same USDT probes; this file gives it a pool
 * in device memory (cudaMalloc) and a pinned staging block through which a
 * swap-out is a cudaMemcpyAsync device-to-host then a pwrite to the offload
 * file, and a swap-in a pread then a cudaMemcpyAsync host-to-device.  So
 * the four scenarios keep their meaning on the GPU: thrash moves blocks out
 * of GPU memory and back, leak keeps GPU blocks referenced forever.
 *
 * A decode step of one sequence, per layer, on the worker's own stream:
 *   kvref_rmsnorm                      RMSNorm of the residual stream
 *   cublasSgemv x3                     q, k, v projections
 *   kvref_kv_append                    RoPE on q and k; k and v written
 *                                      into the position's slot of its pool
 *                                      block, found through the block table
 *   kvref_kv_paged_attention           one thread block per query head:
 *                                      scores, softmax and the weighted sum
 *                                      of values, every key and value read
 *                                      through the block table
 *   cublasSgemv, kvref_residual        output projection, residual
 *   kvref_rmsnorm, cublasSgemv x2,
 *   kvref_swiglu, cublasSgemv,
 *   kvref_residual                     the SwiGLU feed-forward block
 * then the final RMSNorm, the classifier (cublasSgemv) and one copy of the
 * logits to pinned host memory, where the worker samples the next token.
 * The block table goes to the device (one small copy) only when it changed.
 *
 * Kernel names are plain (extern "C"): the two that touch the KV cache are
 * kvref_kv_*, which the CUPTI subscriber's default patterns mark as
 * KV-cache kernels; the others are not.  They live in kvref_kernels.cuh,
 * and launches go through KVREF_LAUNCH, so that the tests can run the
 * kernels and this whole file on the host (tests/helpers/cuda_emu.h and
 * tests/helpers/fakecuda) where there is no GPU.
 *
 * Threads: each worker has a stream, a cuBLAS handle and its scratch; the
 * model and the swap stream are shared (swaps run under the cache lock).
 * A worker waits for its step's logits, so a block it released has no
 * kernel in flight when the cache hands it to a swap or to another worker.
 */
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>
#include <cublas_v2.h>
#include <cuda_runtime.h>

extern "C" {
#include "../tools/kvref/backend.h"
}

#define KVREF_API extern "C" __attribute__((visibility("default")))
#define NORM_THREADS 256
#define ATT_THREADS 128
#define EW_THREADS 256

struct gpu {
	const struct kv_model *m;
	int dev;
	float *wmem;			/* every weight, in the file's layout */
	struct kv_weights w;		/* device addresses in wmem */
	cudaStream_t swap;		/* swap copies, under the cache lock */
	int dim, hid, kvd, hs, kv_mul, vocab;
	int reported;			/* the first error was printed */
};

struct gstate {
	struct gpu *g;
	cudaStream_t stream;
	cublasHandle_t blas;
	float *mem;			/* device scratch, one allocation */
	float *x, *xb, *xb2, *hb, *hb2, *q, *k, *v, *logits;
	int *table;			/* device block table */
	int *htable;			/* what it holds, in pinned memory */
	int table_len, table_cap;
	float *hlogits;			/* pinned */
};

/* ---- errors: the first one is printed, each one fails the call ---- */

static int fail(struct gpu *g, const char *what, const char *why)
{
	if (!__atomic_exchange_n(&g->reported, 1, __ATOMIC_RELAXED))
		fprintf(stderr, "kvref: CUDA backend: %s: %s\n", what, why);
	return -EIO;
}

#define CK(g, call) \
	do { \
		cudaError_t e_ = (call); \
		if (e_ != cudaSuccess) \
			return fail((g), #call, cudaGetErrorString(e_)); \
	} while (0)

#define CKB(g, call) \
	do { \
		cublasStatus_t s_ = (call); \
		if (s_ != CUBLAS_STATUS_SUCCESS) \
			return fail((g), #call, cublasGetStatusString(s_)); \
	} while (0)

#include "kvref_kernels.cuh"

/* tests/helpers/fakecuda runs the launches on the host instead */
#ifndef KVREF_LAUNCH
#define KVREF_LAUNCH(kernel, grid, block, shmem, stream, ...) \
	kernel<<<(grid), (block), (shmem), (stream)>>>(__VA_ARGS__)
#endif

static unsigned int blocks_for(int n, int threads)
{
	return (unsigned int)((n + threads - 1) / threads);
}

/* ---- storage of the block pool ---- */

static int pool_alloc(void *ctx, size_t bytes, void **pool)
{
	struct gpu *g = (struct gpu *)ctx;

	CK(g, cudaSetDevice(g->dev));
	CK(g, cudaMalloc(pool, bytes));
	CK(g, cudaMemset(*pool, 0, bytes));
	return 0;
}

static void pool_free(void *ctx, void *pool)
{
	(void)ctx;
	cudaFree(pool);
}

static int stage_alloc(void *ctx, size_t bytes, void **buf)
{
	struct gpu *g = (struct gpu *)ctx;

	CK(g, cudaHostAlloc(buf, bytes, cudaHostAllocDefault));
	return 0;
}

static void stage_free(void *ctx, void *buf)
{
	(void)ctx;
	cudaFreeHost(buf);
}

static int copy_out(void *ctx, void *host, const void *block, size_t bytes)
{
	struct gpu *g = (struct gpu *)ctx;

	CK(g, cudaSetDevice(g->dev));
	CK(g, cudaMemcpyAsync(host, block, bytes, cudaMemcpyDeviceToHost, g->swap));
	CK(g, cudaStreamSynchronize(g->swap));
	return 0;
}

static int copy_in(void *ctx, void *block, const void *host, size_t bytes)
{
	struct gpu *g = (struct gpu *)ctx;

	CK(g, cudaSetDevice(g->dev));
	CK(g, cudaMemcpyAsync(block, host, bytes, cudaMemcpyHostToDevice, g->swap));
	CK(g, cudaStreamSynchronize(g->swap));
	return 0;
}

static const struct kv_storage_ops storage = {
	pool_alloc, pool_free, stage_alloc, stage_free, copy_out, copy_in,
};

/* ---- per-worker state ---- */

static void state_free(void *ctx, void *state)
{
	struct gstate *s = (struct gstate *)state;

	(void)ctx;
	if (!s)
		return;
	if (s->blas)
		cublasDestroy(s->blas);
	if (s->stream)
		cudaStreamDestroy(s->stream);
	cudaFree(s->mem);
	cudaFree(s->table);
	cudaFreeHost(s->htable);
	cudaFreeHost(s->hlogits);
	delete s;
}

static int state_setup(struct gstate *s)
{
	struct gpu *g = s->g;
	const struct kv_config *c = &g->m->config;
	size_t n = 3 * (size_t)g->dim + 2 * (size_t)g->hid + 2 * (size_t)g->kvd +
		   (size_t)g->dim + (size_t)g->vocab;

	CK(g, cudaSetDevice(g->dev));
	CK(g, cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
	CKB(g, cublasCreate(&s->blas));
	CKB(g, cublasSetStream(s->blas, s->stream));
	CK(g, cudaMalloc(&s->mem, n * sizeof(float)));
	s->x = s->mem;
	s->xb = s->x + g->dim;
	s->xb2 = s->xb + g->dim;
	s->hb = s->xb2 + g->dim;
	s->hb2 = s->hb + g->hid;
	s->k = s->hb2 + g->hid;
	s->v = s->k + g->kvd;
	s->q = s->v + g->kvd;
	s->logits = s->q + g->dim;
	/* a block size of 1 needs the most table entries */
	s->table_cap = c->seq_len + 1;
	CK(g, cudaMalloc(&s->table, (size_t)s->table_cap * sizeof(int)));
	CK(g, cudaHostAlloc(&s->htable, (size_t)s->table_cap * sizeof(int), cudaHostAllocDefault));
	CK(g, cudaHostAlloc(&s->hlogits, (size_t)g->vocab * sizeof(float), cudaHostAllocDefault));
	return 0;
}

static int state_new(void *ctx, void **state)
{
	struct gstate *s = new (std::nothrow) gstate();
	int err;

	if (!s)
		return -ENOMEM;
	s->g = (struct gpu *)ctx;
	err = state_setup(s);
	if (err) {
		state_free(ctx, s);
		return err;
	}
	*state = s;
	return 0;
}

/* ---- the forward pass ---- */

/* y[d] = W[d][n] x[n]: a row-major W is a column-major n x d matrix */
static int gemv(struct gstate *s, float *y, const float *x, const float *w, int n, int d)
{
	const float one = 1.0f, zero = 0.0f;

	CKB(s->g, cublasSgemv(s->blas, CUBLAS_OP_T, n, d, &one, w, n, x, 1, &zero, y, 1));
	return 0;
}

static int upload_table(struct gstate *s, const struct kv_seq *seq)
{
	size_t bytes = (size_t)seq->n_blocks * sizeof(int);

	if (seq->n_blocks > s->table_cap)
		return -EINVAL;
	if (seq->n_blocks == s->table_len && !memcmp(s->htable, seq->blocks, bytes))
		return 0;
	/* the previous step's copy is done: each step ends in a synchronize */
	memcpy(s->htable, seq->blocks, bytes);
	CK(s->g, cudaMemcpyAsync(s->table, s->htable, bytes, cudaMemcpyHostToDevice, s->stream));
	s->table_len = seq->n_blocks;
	return 0;
}

static int forward(void *state, struct kv_cache *kc, struct kv_seq *seq, int token, int pos,
		   float **logits)
{
	struct gstate *s = (struct gstate *)state;
	struct gpu *g = s->g;
	const struct kv_config *c = &g->m->config;
	const struct kv_weights *w = &g->w;
	int dim = g->dim, hid = g->hid, kvd = g->kvd, hs = g->hs, l, err;
	int bs = kv_cache_block_size(kc);
	size_t bf = kv_cache_block_bytes(kc) / sizeof(float), ld, shmem;
	float *pool = kv_cache_pool(kc);

	if (kv_cache_n_layers(kc) != c->n_layers || kv_cache_kv_dim(kc) != kvd)
		return -EINVAL;
	if (token < 0 || token >= g->vocab || pos != seq->len || pos >= c->seq_len)
		return -EINVAL;
	err = kv_seq_reserve(kc, seq);
	if (err)
		return err;
	CK(g, cudaSetDevice(g->dev));
	err = upload_table(s, seq);
	if (err)
		return err;
	shmem = ((size_t)pos + 1 + 32 + (size_t)hs) * sizeof(float);

	KVREF_LAUNCH(kvref_embed, blocks_for(dim, EW_THREADS), EW_THREADS, 0, s->stream,
		     s->x, w->token_embedding_table, token, dim);
	for (l = 0; l < c->n_layers; l++) {
		ld = (size_t)l * dim;
		KVREF_LAUNCH(kvref_rmsnorm, 1, NORM_THREADS, 0, s->stream,
		     s->xb, s->x, w->rms_att_weight + ld, dim);
		if ((err = gemv(s, s->q, s->xb, w->wq + ld * dim, dim, dim)) ||
		    (err = gemv(s, s->k, s->xb, w->wk + ld * kvd, dim, kvd)) ||
		    (err = gemv(s, s->v, s->xb, w->wv + ld * kvd, dim, kvd)))
			return err;
		KVREF_LAUNCH(kvref_kv_append, blocks_for(dim / 2, EW_THREADS), EW_THREADS, 0, s->stream,
		     s->q, s->k, s->v, pool, s->table, bf, l, pos, bs, dim, kvd, hs);
		KVREF_LAUNCH(kvref_kv_paged_attention, c->n_heads, ATT_THREADS, shmem, s->stream,
		     s->xb, s->q, pool, s->table, bf, l, pos, bs, kvd, hs, g->kv_mul);
		if ((err = gemv(s, s->xb2, s->xb, w->wo + ld * dim, dim, dim)))
			return err;
		KVREF_LAUNCH(kvref_residual, blocks_for(dim, EW_THREADS), EW_THREADS, 0, s->stream,
		     s->x, s->xb2, dim);

		KVREF_LAUNCH(kvref_rmsnorm, 1, NORM_THREADS, 0, s->stream,
		     s->xb, s->x, w->rms_ffn_weight + ld, dim);
		if ((err = gemv(s, s->hb, s->xb, w->w1 + ld * hid, dim, hid)) ||
		    (err = gemv(s, s->hb2, s->xb, w->w3 + ld * hid, dim, hid)))
			return err;
		KVREF_LAUNCH(kvref_swiglu, blocks_for(hid, EW_THREADS), EW_THREADS, 0, s->stream,
		     s->hb, s->hb2, hid);
		if ((err = gemv(s, s->xb, s->hb, w->w2 + ld * hid, hid, dim)))
			return err;
		KVREF_LAUNCH(kvref_residual, blocks_for(dim, EW_THREADS), EW_THREADS, 0, s->stream,
		     s->x, s->xb, dim);
	}
	KVREF_LAUNCH(kvref_rmsnorm, 1, NORM_THREADS, 0, s->stream,
		     s->x, s->x, w->rms_final_weight, dim);
	if ((err = gemv(s, s->logits, s->x, w->wcls, dim, g->vocab)))
		return err;
	CK(g, cudaGetLastError());
	CK(g, cudaMemcpyAsync(s->hlogits, s->logits, (size_t)g->vocab * sizeof(float),
			      cudaMemcpyDeviceToHost, s->stream));
	CK(g, cudaStreamSynchronize(s->stream));
	kv_seq_commit(kc, seq, token);
	*logits = s->hlogits;
	return 0;
}

/* ---- the backend ---- */

static void gpu_close(void *ctx)
{
	struct gpu *g = (struct gpu *)ctx;

	if (!g)
		return;
	if (g->swap)
		cudaStreamDestroy(g->swap);
	cudaFree(g->wmem);
	delete g;
}

/* device address of host weight p */
static float *dev_of(const struct gpu *g, const float *p)
{
	return g->wmem + (p - g->m->data);
}

static int gpu_setup(struct gpu *g, char *err, size_t errlen)
{
	const struct kv_config *c = &g->m->config;
	const struct kv_weights *hw = &g->m->w;
	cudaDeviceProp prop;
	cudaError_t e;
	int n = 0;
	size_t shmem;

#define SETUP(call) \
	do { \
		if ((e = (call)) != cudaSuccess) { \
			snprintf(err, errlen, "%s: %s", #call, cudaGetErrorString(e)); \
			return -EIO; \
		} \
	} while (0)

	e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess || n < 1) {
		snprintf(err, errlen, "no CUDA device: %s",
			 e != cudaSuccess ? cudaGetErrorString(e) : "none found");
		return -ENODEV;
	}
	g->dev = 0;
	SETUP(cudaSetDevice(g->dev));
	SETUP(cudaGetDeviceProperties(&prop, g->dev));
	shmem = ((size_t)c->seq_len + 32 + (size_t)g->hs) * sizeof(float);
	if (shmem > prop.sharedMemPerBlock) {
		snprintf(err, errlen, "seq_len %d needs %zu bytes of shared memory, %s has %zu",
			 c->seq_len, shmem, prop.name, prop.sharedMemPerBlock);
		return -EINVAL;
	}
	if (g->dim % 2 || g->hs % 2) {
		snprintf(err, errlen, "dim and head size must be even for RoPE");
		return -EINVAL;
	}
	SETUP(cudaMalloc(&g->wmem, g->m->n_floats * sizeof(float)));
	SETUP(cudaMemcpy(g->wmem, g->m->data, g->m->n_floats * sizeof(float),
			 cudaMemcpyHostToDevice));
	g->w.token_embedding_table = dev_of(g, hw->token_embedding_table);
	g->w.rms_att_weight = dev_of(g, hw->rms_att_weight);
	g->w.wq = dev_of(g, hw->wq);
	g->w.wk = dev_of(g, hw->wk);
	g->w.wv = dev_of(g, hw->wv);
	g->w.wo = dev_of(g, hw->wo);
	g->w.rms_ffn_weight = dev_of(g, hw->rms_ffn_weight);
	g->w.w1 = dev_of(g, hw->w1);
	g->w.w2 = dev_of(g, hw->w2);
	g->w.w3 = dev_of(g, hw->w3);
	g->w.rms_final_weight = dev_of(g, hw->rms_final_weight);
	g->w.wcls = dev_of(g, hw->wcls);
	SETUP(cudaStreamCreateWithFlags(&g->swap, cudaStreamNonBlocking));
	fprintf(stderr, "kvref: cuda backend on %s (sm_%d%d, %zu MiB), %zu MiB of weights\n",
		prop.name, prop.major, prop.minor, prop.totalGlobalMem >> 20,
		(g->m->n_floats * sizeof(float)) >> 20);
#undef SETUP
	return 0;
}

KVREF_API int kvref_cuda_open(const struct kv_model *m, struct kv_backend *b, char *err,
			      size_t errlen)
{
	struct gpu *g = new (std::nothrow) gpu();
	int rc;

	if (!g) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	g->m = m;
	g->dim = m->config.dim;
	g->hid = m->config.hidden_dim;
	/* as kv_config_kv_dim() and kv_config_head_size() */
	g->hs = m->config.dim / m->config.n_heads;
	g->kvd = g->hs * m->config.n_kv_heads;
	g->kv_mul = m->config.n_heads / m->config.n_kv_heads;
	g->vocab = m->config.vocab_size;
	rc = gpu_setup(g, err, errlen);
	if (rc) {
		gpu_close(g);
		return rc;
	}
	b->name = "cuda";
	b->ctx = g;
	b->storage = &storage;
	b->state_new = state_new;
	b->state_free = state_free;
	b->forward = forward;
	b->close = gpu_close;
	return 0;
}
