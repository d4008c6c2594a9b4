/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A decoder-only transformer (the Llama 2 architecture) for the reference
 * workload, with the math and the checkpoint layout of Karpathy's llama2.c:
 * RMSNorm, rotary position embeddings, grouped-query attention, a SwiGLU
 * feed-forward block, and a classifier tied to the token embeddings unless
 * the checkpoint carries its own.
 *
 * The one idea: keys and values never live in a per-sequence array.  The
 * forward pass writes the new token's K/V into the sequence's current block
 * of the paged cache (kvcache.h) and reads every earlier position through the
 * sequence's block table, so the memory traffic is that of a paged-attention
 * server.  The model is read-only after loading; each thread brings its own
 * struct kv_state of scratch buffers, so many threads can run forwards over
 * one model at once.
 */
#ifndef KVREF_MODEL_H
#define KVREF_MODEL_H

#include <stdint.h>
#include "kvcache.h"

/* The 7 int32 header of a llama2.c checkpoint.  In a file a negative
 * vocab_size says that untied classifier weights follow; in memory
 * vocab_size is always positive. */
struct kv_config {
	int dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
};

/* Pointers into kv_model.data, in file order. */
struct kv_weights {
	float *token_embedding_table;	/* [vocab_size][dim] */
	float *rms_att_weight;		/* [n_layers][dim] */
	float *wq;			/* [n_layers][dim][dim] (out, in) */
	float *wk;			/* [n_layers][kv_dim][dim] */
	float *wv;			/* [n_layers][kv_dim][dim] */
	float *wo;			/* [n_layers][dim][dim] */
	float *rms_ffn_weight;		/* [n_layers][dim] */
	float *w1;			/* [n_layers][hidden_dim][dim] */
	float *w2;			/* [n_layers][dim][hidden_dim] */
	float *w3;			/* [n_layers][hidden_dim][dim] */
	float *rms_final_weight;	/* [dim] */
	float *wcls;			/* [vocab_size][dim]; the embeddings if shared */
};

struct kv_model {
	struct kv_config config;
	int shared_weights;		/* classifier tied to the embeddings */
	struct kv_weights w;
	float *data;			/* every float after the header, as in the file */
	size_t n_floats;
};

/* Per-thread scratch of a forward pass. */
struct kv_state {
	struct kv_config config;
	float *x, *xb, *xb2;		/* [dim] */
	float *hb, *hb2;		/* [hidden_dim] */
	float *q;			/* [dim] */
	float *att;			/* [n_heads][seq_len] */
	float *logits;			/* [vocab_size] */
	float *rope_cos, *rope_sin;	/* [head_size / 2] */
	float *mem;
	const struct kv_model *model;	/* set by the CPU backend */
};

/* dim 288, hidden 768, 6 layers, 6 heads, 2 KV heads, vocab 4096, seq 512. */
void kv_config_default(struct kv_config *c);
/* 0 if the shape is usable, -EINVAL if not. */
int kv_config_check(const struct kv_config *c);
int kv_config_head_size(const struct kv_config *c);
int kv_config_kv_dim(const struct kv_config *c);

/*
 * Deterministic weights from seed: uniform with std 1/sqrt(fan_in) (the
 * output projections wo and w2 scaled down by sqrt(2 n_layers)), RMSNorm
 * gains 1.  A negative c->vocab_size asks for an untied classifier, as in a
 * file.  Fails with -EINVAL on a bad shape, -ENOMEM.
 */
int model_init_random(struct kv_model *m, const struct kv_config *c, uint64_t seed);
/* Writes a llama2.c checkpoint atomically (temporary file, then rename).
 * Fails with -errno of the failed call. */
int model_save(const struct kv_model *m, const char *path);
/* Reads a llama2.c checkpoint.  Fails with -EINVAL if the header is bad or
 * the file size is not exactly what the header implies, -ENOMEM, or -errno
 * of open/read. */
int model_load(struct kv_model *m, const char *path);
void model_release(struct kv_model *m);

int kv_state_init(struct kv_state *s, const struct kv_config *c);
void kv_state_release(struct kv_state *s);

/*
 * Runs token at position pos of seq (pos must be seq->len) through the
 * model: reserves the position in the cache, writes its K/V there, attends
 * over positions 0..pos through the block table and commits the token.  On
 * success *logits points to s->logits ([vocab_size]).  Fails with -EINVAL
 * (wrong position, token out of range, state or cache of another shape) or
 * -ENOMEM (every cache block in use), leaving seq as it was.
 */
int model_forward(const struct kv_model *m, struct kv_state *s, struct kv_cache *kc,
		  struct kv_seq *seq, int token, int pos, float **logits);

/*
 * Attention of every head for a query at position pos over positions
 * 0..pos.  q is [n_heads * head_size], out the same size, att scratch of
 * n_heads * (pos + 1) floats.  The paged form reads layer's K/V through
 * seq's block table; the contiguous form reads k and v as [pos + 1][kv_dim]
 * arrays.  Query head h uses KV head h / (n_heads / n_kv_heads).
 */
void attention_paged(const struct kv_config *c, const struct kv_cache *kc,
		     const struct kv_seq *seq, int layer, int pos,
		     const float *q, float *att, float *out);
void attention_contiguous(const struct kv_config *c, const float *k, const float *v,
			  int pos, const float *q, float *att, float *out);

/* Index of the largest logit (the first of equals). */
int sample_argmax(const float *logits, int n);
/* Draws from softmax(logits / temperature); temperature <= 0 is argmax. */
int sample_temperature(const float *logits, int n, float temperature, uint64_t *rng);

/* splitmix64 step, and a uniform float in [0, 1) from it. */
uint64_t kv_rand_next(uint64_t *state);
float kv_rand_float(uint64_t *state);

#endif
