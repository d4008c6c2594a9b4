// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the reference workload's engine (tools/kvref/model.c and
 * kvcache.c): paged attention against a contiguous cache and against an
 * independent double-precision reference, the whole forward pass against a
 * reference forward over a contiguous cache, prefix caching, LRU eviction,
 * the swap tier and llama2.c checkpoints.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "../tools/kvref/model.h"
#include "../tools/kvref/kvcache.h"

/* 8 query heads over 2 KV heads: grouped-query attention */
static void small_config(struct kv_config *c)
{
	c->dim = 64;
	c->hidden_dim = 160;
	c->n_layers = 3;
	c->n_heads = 8;
	c->n_kv_heads = 2;
	c->vocab_size = 256;
	c->seq_len = 128;
}

static void fill_random(float *p, size_t n, uint64_t *rng)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = 2.0f * kv_rand_float(rng) - 1.0f;
}

static float max_abs_diff(const float *a, const float *b, size_t n)
{
	float m = 0.0f;
	size_t i;

	for (i = 0; i < n; i++)
		if (fabsf(a[i] - b[i]) > m || isnan(a[i] - b[i]))
			m = isnan(a[i] - b[i]) ? INFINITY : fabsf(a[i] - b[i]);
	return m;
}

static struct kv_cache *cache_new(int n_layers, int kv_dim, int block_size, int n_blocks,
				  const char *swap_dir, const struct kv_cache_hooks *hooks)
{
	struct kv_cache_params p;
	struct kv_cache *kc = NULL;

	kv_cache_params_default(&p, n_layers, kv_dim);
	p.block_size = block_size;
	p.n_blocks = n_blocks;
	p.swap_dir = swap_dir;
	if (hooks)
		p.hooks = *hooks;
	assert_int_equal(kv_cache_new(&kc, &p), 0);
	return kc;
}

/*
 * Makes the free list hand out blocks in a shuffled order: takes every
 * block with a one-token sequence, then releases them in a random order
 * (the free list is a stack), so that the first two blocks handed out are
 * in decreasing order.  Needs block_size >= 2 and no block referenced.
 */
static void pool_shuffle(struct kv_cache *kc, int n_blocks, uint64_t seed)
{
	struct kv_seq *s = calloc((size_t)n_blocks, sizeof(*s));
	int *perm = malloc((size_t)n_blocks * sizeof(*perm));
	int i, j, t;

	assert_non_null(s);
	assert_non_null(perm);
	for (i = 0; i < n_blocks; i++) {
		kv_seq_init(&s[i]);
		assert_int_equal(kv_seq_reserve(kc, &s[i]), 0);
		perm[i] = i;
	}
	for (i = n_blocks - 1; i > 0; i--) {
		j = (int)(kv_rand_next(&seed) % (uint64_t)(i + 1));
		t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	/* the first two handed out are in decreasing order */
	if (n_blocks >= 2 && perm[n_blocks - 1] < perm[n_blocks - 2]) {
		t = perm[n_blocks - 1];
		perm[n_blocks - 1] = perm[n_blocks - 2];
		perm[n_blocks - 2] = t;
	}
	for (i = 0; i < n_blocks; i++)
		kv_seq_release(kc, &s[perm[i]]);
	free(perm);
	free(s);
}

static int table_is_sorted(const struct kv_seq *seq)
{
	int i;

	for (i = 1; i < seq->n_blocks; i++)
		if (seq->blocks[i] < seq->blocks[i - 1])
			return 0;
	return 1;
}

static int block_not_in(const struct kv_seq *seq, int n_blocks)
{
	int b, i;

	for (b = 0; b < n_blocks; b++) {
		for (i = 0; i < seq->n_blocks && seq->blocks[i] != b; i++)
			;
		if (i == seq->n_blocks)
			return b;
	}
	fail();
	return -1;
}

/* Appends tokens with K/V drawn from rng (all layers). */
static void seq_fill(struct kv_cache *kc, struct kv_seq *seq, const int *tokens, int n,
		     uint64_t *rng)
{
	int kvd = kv_cache_kv_dim(kc), i, l;

	for (i = 0; i < n; i++) {
		assert_int_equal(kv_seq_reserve(kc, seq), 0);
		for (l = 0; l < kv_cache_n_layers(kc); l++) {
			fill_random(kv_seq_key(kc, seq, l, seq->len), (size_t)kvd, rng);
			fill_random(kv_seq_value(kc, seq, l, seq->len), (size_t)kvd, rng);
		}
		kv_seq_commit(kc, seq, tokens[i]);
	}
}

static void tokens_range(int *t, int n, int first)
{
	int i;

	for (i = 0; i < n; i++)
		t[i] = first + i;
}

/*
 * Two 4-token blocks of sequence a (tokens ta) saved to save (2 blocks of
 * bytes), a released, then b (tokens tb) filled, which in a 2-block pool
 * evicts both of a's blocks.
 */
static void fill_save_evict(struct kv_cache *kc, struct kv_seq *a, struct kv_seq *b,
			    const int *ta, const int *tb, float *save, uint64_t *rng)
{
	size_t bytes = kv_cache_block_bytes(kc);

	seq_fill(kc, a, ta, 8, rng);
	/* a block is one run of floats starting at layer 0's keys */
	memcpy(save, kv_cache_key(kc, a->blocks[0], 0), bytes);
	memcpy((char *)save + bytes, kv_cache_key(kc, a->blocks[1], 0), bytes);
	kv_seq_release(kc, a);
	seq_fill(kc, b, tb, 8, rng);
}

/* ---- an independent reference, in double precision ---- */

static void ref_attention(const struct kv_config *c, const float *k, const float *v,
			  int pos, const float *q, float *out)
{
	int hs = c->dim / c->n_heads, kvd = hs * c->n_kv_heads;
	int group = c->n_heads / c->n_kv_heads, h, t, i;
	double *sc = malloc((size_t)(pos + 1) * sizeof(double)), max, sum, o;

	assert_non_null(sc);
	for (h = 0; h < c->n_heads; h++) {
		const float *qh = q + h * hs;
		int kvh = h / group;

		max = -INFINITY;
		for (t = 0; t <= pos; t++) {
			double d = 0.0;

			for (i = 0; i < hs; i++)
				d += (double)qh[i] * k[t * kvd + kvh * hs + i];
			sc[t] = d / sqrt((double)hs);
			if (sc[t] > max)
				max = sc[t];
		}
		sum = 0.0;
		for (t = 0; t <= pos; t++) {
			sc[t] = exp(sc[t] - max);
			sum += sc[t];
		}
		for (i = 0; i < hs; i++) {
			o = 0.0;
			for (t = 0; t <= pos; t++)
				o += sc[t] / sum * v[t * kvd + kvh * hs + i];
			out[h * hs + i] = (float)o;
		}
	}
	free(sc);
}

static void ref_matmul(float *out, const float *x, const float *w, int n, int d)
{
	int i, j;

	for (i = 0; i < d; i++) {
		double s = 0.0;

		for (j = 0; j < n; j++)
			s += (double)w[(size_t)i * n + j] * x[j];
		out[i] = (float)s;
	}
}

static void ref_rmsnorm(float *o, const float *x, const float *w, int n)
{
	double ss = 0.0, r;
	int j;

	for (j = 0; j < n; j++)
		ss += (double)x[j] * x[j];
	r = 1.0 / sqrt(ss / n + 1e-5);
	for (j = 0; j < n; j++)
		o[j] = (float)(w[j] * (r * x[j]));
}

static void ref_rope(float *vec, int n, int hs, int pos)
{
	int i;

	for (i = 0; i < n; i += 2) {
		double f = 1.0 / pow(10000.0, (double)(i % hs) / hs), a = pos * f;
		double v0 = vec[i], v1 = vec[i + 1];

		vec[i] = (float)(v0 * cos(a) - v1 * sin(a));
		vec[i + 1] = (float)(v0 * sin(a) + v1 * cos(a));
	}
}

/* Contiguous K/V of every layer: [n_layers][seq_len][kv_dim]. */
struct ref {
	float *k, *v;
	float *x, *xb, *xb2, *q, *hb, *hb2;
};

static void ref_init(struct ref *r, const struct kv_config *c)
{
	size_t kv = (size_t)c->n_layers * c->seq_len * (c->dim / c->n_heads * c->n_kv_heads);

	r->k = calloc(kv, sizeof(float));
	r->v = calloc(kv, sizeof(float));
	r->x = calloc((size_t)c->dim, sizeof(float));
	r->xb = calloc((size_t)c->dim, sizeof(float));
	r->xb2 = calloc((size_t)c->dim, sizeof(float));
	r->q = calloc((size_t)c->dim, sizeof(float));
	r->hb = calloc((size_t)c->hidden_dim, sizeof(float));
	r->hb2 = calloc((size_t)c->hidden_dim, sizeof(float));
	assert_true(r->k && r->v && r->x && r->xb && r->xb2 && r->q && r->hb && r->hb2);
}

static void ref_release(struct ref *r)
{
	free(r->k);
	free(r->v);
	free(r->x);
	free(r->xb);
	free(r->xb2);
	free(r->q);
	free(r->hb);
	free(r->hb2);
}

static void ref_forward(const struct kv_model *m, struct ref *r, int token, int pos,
			float *logits)
{
	const struct kv_config *c = &m->config;
	int dim = c->dim, hid = c->hidden_dim, hs = dim / c->n_heads, kvd = hs * c->n_kv_heads;
	int l, i;

	memcpy(r->x, m->w.token_embedding_table + (size_t)token * dim, (size_t)dim * sizeof(float));
	for (l = 0; l < c->n_layers; l++) {
		float *kl = r->k + (size_t)l * c->seq_len * kvd;
		float *vl = r->v + (size_t)l * c->seq_len * kvd;

		ref_rmsnorm(r->xb, r->x, m->w.rms_att_weight + l * dim, dim);
		ref_matmul(r->q, r->xb, m->w.wq + (size_t)l * dim * dim, dim, dim);
		ref_matmul(kl + pos * kvd, r->xb, m->w.wk + (size_t)l * dim * kvd, dim, kvd);
		ref_matmul(vl + pos * kvd, r->xb, m->w.wv + (size_t)l * dim * kvd, dim, kvd);
		ref_rope(r->q, dim, hs, pos);
		ref_rope(kl + pos * kvd, kvd, hs, pos);
		ref_attention(c, kl, vl, pos, r->q, r->xb);
		ref_matmul(r->xb2, r->xb, m->w.wo + (size_t)l * dim * dim, dim, dim);
		for (i = 0; i < dim; i++)
			r->x[i] += r->xb2[i];
		ref_rmsnorm(r->xb, r->x, m->w.rms_ffn_weight + l * dim, dim);
		ref_matmul(r->hb, r->xb, m->w.w1 + (size_t)l * dim * hid, dim, hid);
		ref_matmul(r->hb2, r->xb, m->w.w3 + (size_t)l * dim * hid, dim, hid);
		for (i = 0; i < hid; i++)
			r->hb[i] = (float)(r->hb[i] / (1.0 + exp(-(double)r->hb[i])) * r->hb2[i]);
		ref_matmul(r->xb, r->hb, m->w.w2 + (size_t)l * dim * hid, hid, dim);
		for (i = 0; i < dim; i++)
			r->x[i] += r->xb[i];
	}
	ref_rmsnorm(r->x, r->x, m->w.rms_final_weight, dim);
	ref_matmul(logits, r->x, m->w.wcls, dim, c->vocab_size);
}

/* ---- attention ---- */

static void attention_paged__shuffled_blocks_gqa__equals_contiguous(void **state)
{
	static const int lens[] = { 1, 3, 4, 5, 16, 17, 30 };
	struct kv_config c;
	struct kv_cache *kc;
	struct kv_seq seq;
	uint64_t rng = 11;
	int kvd, bs = 4, layers = 2, layer = 1, li, pos, l, tmp;
	float *k, *v, *q, *att, *out_p, *out_c, *out_r;

	(void)state;
	small_config(&c);
	kvd = kv_config_kv_dim(&c);
	kc = cache_new(layers, kvd, bs, 16, NULL, NULL);
	k = calloc(32 * (size_t)kvd, sizeof(float));
	v = calloc(32 * (size_t)kvd, sizeof(float));
	q = calloc((size_t)c.dim, sizeof(float));
	att = calloc((size_t)c.n_heads * 32, sizeof(float));
	out_p = calloc((size_t)c.dim, sizeof(float));
	out_c = calloc((size_t)c.dim, sizeof(float));
	out_r = calloc((size_t)c.dim, sizeof(float));
	assert_true(k && v && q && att && out_p && out_c && out_r);

	for (li = 0; li < (int)(sizeof(lens) / sizeof(lens[0])); li++) {
		pool_shuffle(kc, 16, 100 + li);
		kv_seq_init(&seq);
		for (pos = 0; pos < lens[li]; pos++) {
			assert_int_equal(kv_seq_reserve(kc, &seq), 0);
			for (l = 0; l < layers; l++) {
				float *kr = kv_seq_key(kc, &seq, l, pos), *vr = kv_seq_value(kc, &seq, l, pos);

				fill_random(kr, (size_t)kvd, &rng);
				fill_random(vr, (size_t)kvd, &rng);
				if (l == layer) {
					memcpy(k + pos * kvd, kr, (size_t)kvd * sizeof(float));
					memcpy(v + pos * kvd, vr, (size_t)kvd * sizeof(float));
				}
			}
			kv_seq_commit(kc, &seq, pos);
			/* attend from every position, crossing block boundaries */
			fill_random(q, (size_t)c.dim, &rng);
			for (l = 0; l < c.dim; l++)
				q[l] *= 4.0f;	/* sharper softmax */
			attention_paged(&c, kc, &seq, layer, pos, q, att, out_p);
			attention_contiguous(&c, k, v, pos, q, att, out_c);
			ref_attention(&c, k, v, pos, q, out_r);
			assert_true(max_abs_diff(out_p, out_c, (size_t)c.dim) <= 1e-5f);
			assert_true(max_abs_diff(out_c, out_r, (size_t)c.dim) <= 1e-5f);
		}
		if (seq.n_blocks >= 2)
			assert_false(table_is_sorted(&seq));
		if (seq.n_blocks >= 3) {
			/* the test can tell: a wrong entry in the table gives another
			 * answer (swapping two entries would not: attention does not
			 * care about the order of positions) */
			tmp = seq.blocks[1];
			seq.blocks[1] = block_not_in(&seq, 16);
			attention_paged(&c, kc, &seq, layer, pos - 1, q, att, out_p);
			assert_true(max_abs_diff(out_p, out_c, (size_t)c.dim) > 1e-3f);
			seq.blocks[1] = tmp;
		}
		kv_seq_release(kc, &seq);
	}
	free(k);
	free(v);
	free(q);
	free(att);
	free(out_p);
	free(out_c);
	free(out_r);
	kv_cache_free(kc);
}

/* ---- the forward pass ---- */

static void forward_vs_reference(int vocab_sign)
{
	struct kv_config c;
	struct kv_model m;
	struct kv_state s;
	struct kv_cache *kc;
	struct kv_seq seq;
	struct ref r;
	uint64_t rng = 5;
	int prompt[37], i;
	float *logits, *want, d, worst = 0.0f;

	small_config(&c);
	c.vocab_size *= vocab_sign;
	assert_int_equal(model_init_random(&m, &c, 1234), 0);
	assert_int_equal(m.shared_weights, vocab_sign > 0);
	assert_int_equal(kv_state_init(&s, &m.config), 0);
	kc = cache_new(c.n_layers, kv_config_kv_dim(&c), 4, 16, NULL, NULL);
	pool_shuffle(kc, 16, 77);
	ref_init(&r, &m.config);
	want = calloc((size_t)m.config.vocab_size, sizeof(float));
	assert_non_null(want);
	for (i = 0; i < 37; i++)
		prompt[i] = (int)(kv_rand_next(&rng) % (uint64_t)m.config.vocab_size);

	kv_seq_init(&seq);
	for (i = 0; i < 37; i++) {
		assert_int_equal(model_forward(&m, &s, kc, &seq, prompt[i], i, &logits), 0);
		ref_forward(&m, &r, prompt[i], i, want);
		d = max_abs_diff(logits, want, (size_t)m.config.vocab_size);
		if (d > worst)
			worst = d;
	}
	assert_true(worst <= 1e-4f);
	assert_false(table_is_sorted(&seq));
	assert_int_equal(seq.len, 37);
	assert_int_equal(seq.n_blocks, 10);
	/* the logits are not degenerate */
	assert_true(fabsf(want[sample_argmax(want, m.config.vocab_size)] - want[0]) > 1e-3f ||
		    fabsf(want[1] - want[0]) > 1e-3f);
	/* a position other than seq->len is refused, and seq stays as it was */
	assert_int_equal(model_forward(&m, &s, kc, &seq, 1, 5, &logits), -EINVAL);
	assert_int_equal(model_forward(&m, &s, kc, &seq, m.config.vocab_size, 37, &logits), -EINVAL);
	assert_int_equal(seq.len, 37);

	kv_seq_release(kc, &seq);
	free(want);
	ref_release(&r);
	kv_cache_free(kc);
	kv_state_release(&s);
	model_release(&m);
}

static void model_forward__tied_classifier__matches_contiguous_reference(void **state)
{
	(void)state;
	forward_vs_reference(1);
}

static void model_forward__untied_classifier__matches_contiguous_reference(void **state)
{
	(void)state;
	forward_vs_reference(-1);
}

static void model_forward__pool_all_in_use__enomem(void **state)
{
	struct kv_config c;
	struct kv_model m;
	struct kv_state s;
	struct kv_cache *kc;
	struct kv_seq seq;
	float *logits;
	int i;

	(void)state;
	small_config(&c);
	assert_int_equal(model_init_random(&m, &c, 3), 0);
	assert_int_equal(kv_state_init(&s, &c), 0);
	kc = cache_new(c.n_layers, kv_config_kv_dim(&c), 4, 2, NULL, NULL);
	kv_seq_init(&seq);
	for (i = 0; i < 8; i++)
		assert_int_equal(model_forward(&m, &s, kc, &seq, i, i, &logits), 0);
	assert_int_equal(model_forward(&m, &s, kc, &seq, 8, 8, &logits), -ENOMEM);
	assert_int_equal(seq.len, 8);
	kv_seq_release(kc, &seq);
	kv_cache_free(kc);
	kv_state_release(&s);
	model_release(&m);
}

/* ---- prefix caching ---- */

static void kv_seq_match_prefix__same_40_token_prefix__shares_two_blocks(void **state)
{
	struct kv_cache *kc = cache_new(2, 8, 16, 16, NULL, NULL);
	struct kv_seq a, b, d;
	struct kv_cache_stats st;
	int ta[48], tb[50], td[50];
	uint64_t rng = 1;

	(void)state;
	tokens_range(ta, 48, 1000);	/* prefix 1000..1039, then 1040..1047 */
	memcpy(tb, ta, 40 * sizeof(int));
	tokens_range(tb + 40, 10, 5000);
	memcpy(td, tb, sizeof(td));
	td[0] = 7;			/* a different prefix */

	kv_seq_init(&a);
	kv_seq_init(&b);
	kv_seq_init(&d);
	seq_fill(kc, &a, ta, 48, &rng);
	assert_int_equal(kv_seq_match_prefix(kc, &b, tb, 50), 32);
	assert_int_equal(b.len, 32);
	assert_int_equal(b.n_blocks, 2);
	assert_int_equal(b.blocks[0], a.blocks[0]);
	assert_int_equal(b.blocks[1], a.blocks[1]);
	assert_int_equal(kv_cache_block_refcnt(kc, a.blocks[0]), 2);
	assert_int_equal(kv_cache_block_refcnt(kc, a.blocks[1]), 2);
	assert_int_equal(kv_cache_block_refcnt(kc, a.blocks[2]), 1);
	assert_memory_equal(b.tokens, tb, 32 * sizeof(int));
	kv_cache_get_stats(kc, &st);
	assert_int_equal(st.prefix_hits, 2);
	assert_int_equal(st.prefix_misses, 1);	/* block 2 of b differs from a's */

	assert_int_equal(kv_seq_match_prefix(kc, &d, td, 50), 0);
	assert_int_equal(d.n_blocks, 0);
	kv_cache_get_stats(kc, &st);
	assert_int_equal(st.prefix_hits, 2);
	assert_int_equal(st.prefix_misses, 4);
	/* a non-empty sequence is refused */
	assert_int_equal(kv_seq_match_prefix(kc, &b, tb, 50), -EINVAL);

	/* b continues after the shared part into blocks of its own */
	seq_fill(kc, &b, tb + 32, 18, &rng);
	assert_int_not_equal(b.blocks[2], a.blocks[2]);
	kv_seq_release(kc, &a);
	assert_int_equal(kv_cache_block_refcnt(kc, b.blocks[0]), 1);
	kv_seq_release(kc, &b);
	kv_seq_release(kc, &d);
	kv_cache_get_stats(kc, &st);
	assert_int_equal(st.blocks_in_use, 0);
	/* a's 3 full blocks and b's 2nd full one stay cached, partial ones freed */
	assert_int_equal(st.blocks_cached, 4);
	assert_int_equal(st.allocated - st.freed - st.evicted, 4);
	kv_cache_free(kc);
}

static void kv_block_hash__same_tokens_other_parent__differs(void **state)
{
	struct kv_cache *kc = cache_new(1, 8, 4, 8, NULL, NULL);
	int x[4] = { 9, 9, 9, 9 }, p1[8] = { 1, 2, 3, 4, 9, 9, 9, 9 }, p2[8] = { 5, 6, 7, 8, 9, 9, 9, 9 };
	struct kv_seq a, b;
	uint64_t rng = 2, h0;

	(void)state;
	h0 = kv_block_hash(KV_HASH_ROOT, x, 4);
	assert_int_not_equal(h0, kv_block_hash(kv_block_hash(KV_HASH_ROOT, p1, 4), x, 4));
	assert_int_not_equal(kv_block_hash(kv_block_hash(KV_HASH_ROOT, p1, 4), x, 4),
			     kv_block_hash(kv_block_hash(KV_HASH_ROOT, p2, 4), x, 4));
	assert_int_equal(h0, kv_block_hash(KV_HASH_ROOT, x, 4));

	kv_seq_init(&a);
	kv_seq_init(&b);
	seq_fill(kc, &a, p1, 8, &rng);
	assert_int_equal(a.hashes[1], kv_block_hash(a.hashes[0], x, 4));
	kv_seq_release(kc, &a);
	/* the second blocks hold equal tokens but hang off other parents */
	assert_int_equal(kv_seq_match_prefix(kc, &b, p2, 8), 0);
	kv_seq_release(kc, &b);
	assert_int_equal(kv_seq_match_prefix(kc, &b, p1, 8), 8);
	kv_seq_release(kc, &b);
	kv_cache_free(kc);
}

static void kv_seq_commit__block_filled_twice__second_copy_stays_private(void **state)
{
	struct kv_cache *kc = cache_new(1, 8, 4, 4, NULL, NULL);
	struct kv_cache_stats st;
	struct kv_seq a, b;
	int t[4] = { 1, 2, 3, 4 };
	uint64_t rng = 13;

	(void)state;
	kv_seq_init(&a);
	kv_seq_init(&b);
	/* as when two requests with one prompt run at once */
	seq_fill(kc, &a, t, 4, &rng);
	seq_fill(kc, &b, t, 4, &rng);
	assert_int_equal(a.hashes[0], b.hashes[0]);
	assert_int_not_equal(a.blocks[0], b.blocks[0]);
	kv_seq_release(kc, &b);
	kv_cache_get_stats(kc, &st);
	assert_int_equal(st.freed, 1);
	assert_int_equal(st.blocks_cached, 0);
	assert_int_equal(kv_seq_match_prefix(kc, &b, t, 4), 4);
	assert_int_equal(b.blocks[0], a.blocks[0]);
	kv_seq_release(kc, &b);
	kv_seq_release(kc, &a);
	kv_cache_get_stats(kc, &st);
	assert_int_equal(st.blocks_cached, 1);
	kv_cache_free(kc);
}

/* ---- LRU ---- */

struct log {
	int block[64];
	uint64_t hash[64];
	int64_t arg[64];
	int n;
};

static void log_event(void *ctx, int block, uint64_t hash, int64_t arg)
{
	struct log *lg = ctx;

	assert_true(lg->n < 64);
	lg->block[lg->n] = block;
	lg->hash[lg->n] = hash;
	lg->arg[lg->n] = arg;
	lg->n++;
}

static void kv_seq_reserve__pool_full__evicts_least_recently_released_first(void **state)
{
	struct log ev = { .n = 0 };
	struct kv_cache_hooks hooks = { .ctx = &ev, .evict = log_event };
	struct kv_cache *kc = cache_new(1, 8, 4, 4, NULL, &hooks);
	struct kv_seq s[4], t[5];
	struct kv_cache_stats st;
	int tok[4][4], blk[4], order[4] = { 2, 0, 3, 1 }, i;
	uint64_t rng = 3;

	(void)state;
	for (i = 0; i < 4; i++) {
		tokens_range(tok[i], 4, 100 * (i + 1));
		kv_seq_init(&s[i]);
		seq_fill(kc, &s[i], tok[i], 4, &rng);
		blk[i] = s[i].blocks[0];
	}
	/* every block referenced: nothing can be taken */
	kv_seq_init(&t[0]);
	assert_int_equal(kv_seq_reserve(kc, &t[0]), -ENOMEM);
	kv_seq_release(kc, &t[0]);
	for (i = 0; i < 4; i++)
		kv_seq_release(kc, &s[order[i]]);
	kv_cache_get_stats(kc, &st);
	assert_int_equal(st.blocks_cached, 4);
	assert_int_equal(st.blocks_free, 0);

	/* touching sequence 2's block again makes it the most recent */
	kv_seq_init(&t[4]);
	assert_int_equal(kv_seq_match_prefix(kc, &t[4], tok[2], 4), 4);
	assert_int_equal(t[4].blocks[0], blk[2]);
	kv_seq_release(kc, &t[4]);

	/* released 0, 3, 1, then 2 again: evicted in that order */
	for (i = 0; i < 4; i++) {
		kv_seq_init(&t[i]);
		assert_int_equal(kv_seq_reserve(kc, &t[i]), 0);
	}
	assert_int_equal(ev.n, 4);
	assert_int_equal(ev.block[0], blk[0]);
	assert_int_equal(ev.block[1], blk[3]);
	assert_int_equal(ev.block[2], blk[1]);
	assert_int_equal(ev.block[3], blk[2]);
	assert_int_equal(ev.hash[0], kv_block_hash(KV_HASH_ROOT, tok[0], 4));
	assert_int_equal(ev.arg[0], 0);		/* no swap tier */
	kv_cache_get_stats(kc, &st);
	assert_int_equal(st.evicted, 4);
	assert_int_equal(st.swap_outs, 0);
	for (i = 0; i < 4; i++)
		kv_seq_release(kc, &t[i]);
	/* evicted without a swap tier: gone */
	assert_int_equal(kv_seq_match_prefix(kc, &t[0], tok[0], 4), 0);
	kv_seq_release(kc, &t[0]);
	kv_cache_free(kc);
}

static void kv_seq_release__multi_block_sequence__tail_evicted_first(void **state)
{
	struct log ev = { .n = 0 };
	struct kv_cache_hooks hooks = { .ctx = &ev, .evict = log_event };
	struct kv_cache *kc = cache_new(1, 8, 4, 3, NULL, &hooks);
	struct kv_seq a, b;
	int ta[12], tb[4];
	uint64_t rng = 4, tail;

	(void)state;
	tokens_range(ta, 12, 0);
	tokens_range(tb, 4, 50);
	kv_seq_init(&a);
	kv_seq_init(&b);
	seq_fill(kc, &a, ta, 12, &rng);
	tail = a.hashes[2];
	kv_seq_release(kc, &a);
	seq_fill(kc, &b, tb, 4, &rng);
	assert_int_equal(ev.n, 1);
	assert_int_equal(ev.hash[0], tail);
	/* the head of the chain survives and still matches */
	assert_int_equal(kv_seq_match_prefix(kc, &a, ta, 12), 8);
	kv_seq_release(kc, &a);
	kv_seq_release(kc, &b);
	kv_cache_free(kc);
}

/* ---- the swap tier ---- */

static void kv_seq_match_prefix__block_in_swap_file__bit_identical_kv(void **state)
{
	char dir[] = "/tmp/kvref-test-XXXXXX";
	struct log in = { .n = 0 };
	struct kv_cache_hooks hooks = { .ctx = &in, .swap_in = log_event };
	struct kv_cache *kc;
	struct kv_seq a, b, c;
	struct kv_cache_stats st;
	struct stat sb;
	int ta[8], tb[8];
	size_t bytes;
	float *save;
	uint64_t rng = 6;

	(void)state;
	assert_non_null(mkdtemp(dir));
	kc = cache_new(2, 16, 4, 2, dir, &hooks);
	bytes = kv_cache_block_bytes(kc);
	assert_int_equal(bytes, 2 * 2 * 4 * 16 * sizeof(float));
	save = malloc(2 * bytes);
	assert_non_null(save);
	tokens_range(ta, 8, 10);
	tokens_range(tb, 8, 20);

	kv_seq_init(&a);
	kv_seq_init(&b);
	kv_seq_init(&c);
	fill_save_evict(kc, &a, &b, ta, tb, save, &rng);
	kv_cache_get_stats(kc, &st);
	assert_int_equal(st.evicted, 2);
	assert_int_equal(st.swap_outs, 2);
	assert_int_equal(st.bytes_swapped_out, 2 * bytes);
	assert_int_equal(st.swap_slots_used, 2);
	assert_int_equal(fstat(kv_cache_swap_fd(kc), &sb), 0);
	assert_true((size_t)sb.st_size >= 2 * bytes);
	/* overwrite the pool copies so that only the file can bring them back */
	assert_memory_not_equal(kv_cache_key(kc, b.blocks[0], 0), save, bytes);
	kv_seq_release(kc, &b);

	assert_int_equal(kv_seq_match_prefix(kc, &c, ta, 8), 8);
	assert_memory_equal(kv_cache_key(kc, c.blocks[0], 0), save, bytes);
	assert_memory_equal(kv_cache_key(kc, c.blocks[1], 0), (char *)save + bytes, bytes);
	kv_cache_get_stats(kc, &st);
	assert_int_equal(st.swap_ins, 2);
	assert_int_equal(st.bytes_swapped_in, 2 * bytes);
	assert_int_equal(st.prefix_hits, 2);
	/*
	 * a released its tail first: block 1 went out at eviction 1, block 0
	 * at eviction 2.  Reading them back evicts b's two blocks (evictions 3
	 * and 4), so block 0 returns 1 eviction later (recent: <= n_blocks = 2)
	 * and block 1 returns 3 evictions later (not recent).
	 */
	assert_int_equal(st.swap_ins_recent, 1);
	assert_int_equal(in.n, 2);
	assert_int_equal(in.arg[0], 1);
	assert_int_equal(in.arg[1], 3);
	assert_int_equal(st.swap_outs, 4);
	assert_int_equal(st.swap_slots_used, 2);	/* a's slots freed, b's taken */
	kv_seq_release(kc, &c);

	/* and b comes back from the file as well */
	assert_int_equal(kv_seq_match_prefix(kc, &c, tb, 8), 8);
	kv_cache_get_stats(kc, &st);
	assert_int_equal(st.swap_ins, 4);
	kv_seq_release(kc, &c);
	free(save);
	kv_cache_free(kc);
	assert_int_equal(rmdir(dir), 0);	/* nothing left in it */
}

/* A pool behind storage ops, as the CUDA backend's is: host memory here, so
 * that the test can look, but every swap must go through the ops and the
 * staging buffer. */
struct fake_dev {
	int pool_allocs, pool_frees, stage_allocs, stage_frees;
	int outs, ins, fail_out;
	void *pool, *stage;
	size_t stage_bytes;
};

static int fd_pool_alloc(void *ctx, size_t bytes, void **pool)
{
	struct fake_dev *d = ctx;

	d->pool_allocs++;
	d->pool = calloc(1, bytes);
	*pool = d->pool;
	return d->pool ? 0 : -ENOMEM;
}

static void fd_pool_free(void *ctx, void *pool)
{
	struct fake_dev *d = ctx;

	assert_ptr_equal(pool, d->pool);
	d->pool_frees++;
	free(pool);
}

static int fd_stage_alloc(void *ctx, size_t bytes, void **buf)
{
	struct fake_dev *d = ctx;

	d->stage_allocs++;
	d->stage_bytes = bytes;
	d->stage = malloc(bytes);
	*buf = d->stage;
	return d->stage ? 0 : -ENOMEM;
}

static void fd_stage_free(void *ctx, void *buf)
{
	struct fake_dev *d = ctx;

	assert_ptr_equal(buf, d->stage);
	d->stage_frees++;
	free(buf);
}

static int fd_copy_out(void *ctx, void *host, const void *block, size_t bytes)
{
	struct fake_dev *d = ctx;

	assert_ptr_equal(host, d->stage);
	assert_int_equal(bytes, d->stage_bytes);
	if (d->fail_out)
		return -EIO;
	d->outs++;
	memcpy(host, block, bytes);
	return 0;
}

static int fd_copy_in(void *ctx, void *block, const void *host, size_t bytes)
{
	struct fake_dev *d = ctx;

	assert_ptr_equal(host, d->stage);
	d->ins++;
	memcpy(block, host, bytes);
	return 0;
}

static const struct kv_storage_ops fake_ops = {
	.pool_alloc = fd_pool_alloc, .pool_free = fd_pool_free,
	.stage_alloc = fd_stage_alloc, .stage_free = fd_stage_free,
	.copy_out = fd_copy_out, .copy_in = fd_copy_in,
};

static void kv_cache_new__storage_ops__swaps_go_through_staging(void **state)
{
	char dir[] = "/tmp/kvref-test-XXXXXX";
	struct fake_dev dev = { 0 };
	struct kv_cache_params p;
	struct kv_cache_stats st;
	struct kv_storage_ops half = fake_ops;
	struct kv_cache *kc = NULL;
	struct kv_seq a, b, c;
	int ta[8], tb[12];	/* tb + 4 fills 8 below */
	uint64_t rng = 11;
	size_t bytes;
	float *save;

	(void)state;
	assert_non_null(mkdtemp(dir));
	kv_cache_params_default(&p, 2, 16);
	p.block_size = 4;
	p.n_blocks = 2;
	p.swap_dir = dir;
	half.copy_in = NULL;
	p.storage = &half;
	p.storage_ctx = &dev;
	assert_int_equal(kv_cache_new(&kc, &p), -EINVAL);	/* ops incomplete */
	assert_int_equal(dev.pool_allocs, 0);
	p.storage = &fake_ops;
	assert_int_equal(kv_cache_new(&kc, &p), 0);
	assert_ptr_equal(kv_cache_pool(kc), dev.pool);
	bytes = kv_cache_block_bytes(kc);
	assert_int_equal(dev.stage_allocs, 1);
	assert_int_equal(dev.stage_bytes, bytes);
	save = malloc(2 * bytes);
	assert_non_null(save);
	tokens_range(ta, 8, 10);
	tokens_range(tb, 12, 20);
	kv_seq_init(&a);
	kv_seq_init(&b);
	kv_seq_init(&c);

	fill_save_evict(kc, &a, &b, ta, tb, save, &rng);	/* through copy_out */
	assert_int_equal(dev.outs, 2);
	kv_seq_release(kc, &b);
	assert_int_equal(kv_seq_match_prefix(kc, &c, ta, 8), 8);	/* and come back */
	assert_int_equal(dev.ins, 2);
	assert_int_equal(dev.outs, 4);
	assert_memory_equal(kv_cache_key(kc, c.blocks[0], 0), save, bytes);
	assert_memory_equal(kv_cache_key(kc, c.blocks[1], 0), (char *)save + bytes, bytes);
	kv_seq_release(kc, &c);

	/* a failed device copy: counted, and the block is dropped, not swapped */
	dev.fail_out = 1;
	seq_fill(kc, &a, ta + 0, 4, &rng);
	kv_seq_release(kc, &a);
	seq_fill(kc, &a, tb + 4, 8, &rng);
	kv_cache_get_stats(kc, &st);
	assert_true(st.swap_errors >= 1);
	assert_int_equal(st.swap_outs, 4);
	kv_seq_release(kc, &a);
	kv_cache_free(kc);
	assert_int_equal(dev.pool_frees, 1);
	assert_int_equal(dev.stage_frees, 1);
	free(save);
	assert_int_equal(rmdir(dir), 0);	/* nothing left in it */
}

static void kv_cache_new__swap_slots_full__oldest_swapped_block_dropped(void **state)
{
	char dir[] = "/tmp/kvref-test-XXXXXX";
	struct kv_cache_params p;
	struct kv_cache *kc;
	struct kv_cache_stats st;
	struct kv_seq s;
	int t[4][4], i;
	uint64_t rng = 8;

	(void)state;
	assert_non_null(mkdtemp(dir));
	kv_cache_params_default(&p, 1, 8);
	p.block_size = 4;
	p.n_blocks = 1;
	p.swap_dir = dir;
	p.swap_slots = 2;
	p.recent_evictions = 1;
	assert_int_equal(kv_cache_new(&kc, &p), 0);
	/* four one-block sequences through a one-block pool and two slots */
	for (i = 0; i < 4; i++) {
		tokens_range(t[i], 4, 10 * i);
		kv_seq_init(&s);
		seq_fill(kc, &s, t[i], 4, &rng);
		kv_seq_release(kc, &s);
	}
	kv_cache_get_stats(kc, &st);
	assert_int_equal(st.swap_outs, 3);
	assert_int_equal(st.swap_drops, 1);
	/* 0 was dropped, 1 and 2 are in the file, 3 is in the pool */
	kv_seq_init(&s);
	assert_int_equal(kv_seq_match_prefix(kc, &s, t[0], 4), 0);
	kv_seq_release(kc, &s);
	assert_int_equal(kv_seq_match_prefix(kc, &s, t[3], 4), 4);
	kv_seq_release(kc, &s);
	/*
	 * Reading 2 back pushes 3 out of the pool while 2's slot is still
	 * pinned, so 3 takes the only other slot and 1, the oldest, is lost.
	 */
	assert_int_equal(kv_seq_match_prefix(kc, &s, t[2], 4), 4);
	kv_seq_release(kc, &s);
	kv_cache_get_stats(kc, &st);
	assert_int_equal(st.swap_drops, 2);
	assert_int_equal(st.swap_ins, 1);
	/* 2 went out at eviction 3 and came back at eviction 4: distance 1 */
	assert_int_equal(st.swap_ins_recent, 1);
	assert_int_equal(kv_seq_match_prefix(kc, &s, t[1], 4), 0);
	assert_int_equal(kv_seq_match_prefix(kc, &s, t[3], 4), 4);
	kv_seq_release(kc, &s);
	kv_cache_free(kc);
	assert_int_equal(rmdir(dir), 0);	/* nothing left in it */
}

static void model_forward__prefix_back_from_swap__same_logits_as_fresh(void **state)
{
	char dir[] = "/tmp/kvref-test-XXXXXX";
	struct kv_config c;
	struct kv_model m;
	struct kv_state s;
	struct kv_cache *kc;
	struct kv_cache_stats st;
	struct kv_seq a, b, x;
	int prompt[40], other[40], i, n;
	float *logits, *want;
	uint64_t rng = 9;

	(void)state;
	assert_non_null(mkdtemp(dir));
	small_config(&c);
	assert_int_equal(model_init_random(&m, &c, 99), 0);
	assert_int_equal(kv_state_init(&s, &c), 0);
	kc = cache_new(c.n_layers, kv_config_kv_dim(&c), 16, 3, dir, NULL);
	want = malloc((size_t)c.vocab_size * sizeof(float));
	assert_non_null(want);
	for (i = 0; i < 40; i++) {
		prompt[i] = (int)(kv_rand_next(&rng) % (uint64_t)c.vocab_size);
		other[i] = (int)(kv_rand_next(&rng) % (uint64_t)c.vocab_size);
	}
	kv_seq_init(&a);
	kv_seq_init(&b);
	kv_seq_init(&x);
	for (i = 0; i < 40; i++)
		assert_int_equal(model_forward(&m, &s, kc, &a, prompt[i], i, &logits), 0);
	memcpy(want, logits, (size_t)c.vocab_size * sizeof(float));
	kv_seq_release(kc, &a);
	/* another prompt pushes the first one's blocks out to the file */
	for (i = 0; i < 40; i++)
		assert_int_equal(model_forward(&m, &s, kc, &x, other[i], i, &logits), 0);
	kv_seq_release(kc, &x);
	kv_cache_get_stats(kc, &st);
	assert_true(st.swap_outs >= 2);

	n = kv_seq_match_prefix(kc, &b, prompt, 39);
	assert_int_equal(n, 32);
	kv_cache_get_stats(kc, &st);
	assert_int_equal(st.swap_ins, 2);
	for (i = n; i < 40; i++)
		assert_int_equal(model_forward(&m, &s, kc, &b, prompt[i], i, &logits), 0);
	assert_memory_equal(logits, want, (size_t)c.vocab_size * sizeof(float));
	kv_seq_release(kc, &b);
	free(want);
	kv_cache_free(kc);
	kv_state_release(&s);
	model_release(&m);
	assert_int_equal(rmdir(dir), 0);	/* nothing left in it */
}

/* ---- the swap file is made safely (kvref may run as root in /var/tmp) ---- */

static const char victim_text[] = "precious, not kvref's\n";

static void victim_make(char *path)
{
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, victim_text, sizeof(victim_text) - 1),
			 (ssize_t)sizeof(victim_text) - 1);
	close(fd);
}

/* The victim still holds its text and nothing else. */
static void victim_check(const char *path)
{
	char buf[64];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	assert_int_equal(n, (ssize_t)sizeof(victim_text) - 1);
	assert_memory_equal(buf, victim_text, sizeof(victim_text) - 1);
}

static int dir_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static void kv_cache_new__symlink_at_swap_name__not_followed_file_0600_unlinked(void **state)
{
	char dir[] = "/tmp/kvref-test-XXXXXX", victim[] = "/tmp/kvref-victim-XXXXXX";
	char link[64];
	struct kv_cache *kc;
	struct kv_cache_params p;
	struct kv_seq a, b;
	struct stat sb;
	int ta[8], tb[8];
	float *save;
	uint64_t rng = 3;
	mode_t old;

	(void)state;
	assert_non_null(mkdtemp(dir));
	victim_make(victim);
	snprintf(link, sizeof(link), "%s/kvref-swap-1-1.bin", dir);
	assert_int_equal(symlink(victim, link), 0);
	kv_cache_params_default(&p, 2, 16);
	p.block_size = 4;
	p.n_blocks = 2;
	p.swap_dir = dir;
	p.swap_name = "kvref-swap-1-1.bin";
	old = umask(0);		/* the mode is the code's, not the umask's */
	assert_int_equal(kv_cache_new(&kc, &p), 0);
	umask(old);
	/* a file of its own, 0600, already without a name */
	assert_int_equal(fstat(kv_cache_swap_fd(kc), &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	assert_int_equal(sb.st_mode & 07777, 0600);
	assert_int_equal(sb.st_nlink, 0);
	/* blocks through the swap file leave the victim alone */
	save = malloc(2 * kv_cache_block_bytes(kc));
	assert_non_null(save);
	tokens_range(ta, 8, 10);
	tokens_range(tb, 8, 20);
	kv_seq_init(&a);
	kv_seq_init(&b);
	fill_save_evict(kc, &a, &b, ta, tb, save, &rng);
	assert_int_equal(fstat(kv_cache_swap_fd(kc), &sb), 0);
	assert_true(sb.st_size > 0);
	victim_check(victim);
	assert_int_equal(lstat(link, &sb), 0);
	assert_true(S_ISLNK(sb.st_mode));
	assert_int_equal(dir_entries(dir), 1);	/* the link, nothing of ours */
	kv_seq_release(kc, &b);
	kv_cache_free(kc);
	free(save);
	/* a name that would leave the directory is refused */
	p.swap_name = "../kvref-swap.bin";
	assert_int_equal(kv_cache_new(&kc, &p), -EINVAL);
	assert_int_equal(unlink(link), 0);
	assert_int_equal(rmdir(dir), 0);
	unlink(victim);
}

/* kvref itself, with links planted at the names it used to open as root in
 * --swap-dir (kvref-swap-<pid>-<n>.bin, kvref-check-<pid>-<n>.bin): the
 * pid is known between fork and exec. */
static void run_kvref_beside_links(const char *const *args)
{
	const char *b = getenv("CS_BUILD") ? getenv("CS_BUILD") : "build";
	char dir[] = "/tmp/kvref-test-XXXXXX", victim[] = "/tmp/kvref-victim-XXXXXX";
	char kvref[4096], link[128], go = 1;
	const char *argv[16];
	int pfd[2], status, n = 0, i, k;
	pid_t pid;

	snprintf(kvref, sizeof(kvref), "%s/kvref", b);
	assert_int_equal(access(kvref, X_OK), 0);
	assert_non_null(mkdtemp(dir));
	victim_make(victim);
	argv[n++] = "kvref";
	for (i = 0; args[i]; i++)
		argv[n++] = args[i];
	argv[n++] = "--swap-dir";
	argv[n++] = dir;
	argv[n] = NULL;
	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		close(pfd[1]);
		if (read(pfd[0], &go, 1) != 1)
			_exit(126);
		if (!freopen("/dev/null", "w", stdout))
			_exit(126);
		execv(kvref, (char *const *)argv);
		_exit(127);
	}
	close(pfd[0]);
	for (k = 0; k < 5; k++) {
		snprintf(link, sizeof(link), "%s/kvref-swap-%d-%d.bin", dir, pid, k);
		assert_int_equal(symlink(victim, link), 0);
	}
	for (k = 0; k < 2; k++) {
		snprintf(link, sizeof(link), "%s/kvref-check-%d-%d.bin", dir, pid, k);
		assert_int_equal(symlink(victim, link), 0);
	}
	assert_int_equal(write(pfd[1], &go, 1), 1);
	close(pfd[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	victim_check(victim);
	assert_int_equal(dir_entries(dir), 7);	/* the links, nothing left of kvref's */
	for (k = 0; k < 5; k++) {
		snprintf(link, sizeof(link), "%s/kvref-swap-%d-%d.bin", dir, pid, k);
		assert_int_equal(unlink(link), 0);
	}
	for (k = 0; k < 2; k++) {
		snprintf(link, sizeof(link), "%s/kvref-check-%d-%d.bin", dir, pid, k);
		assert_int_equal(unlink(link), 0);
	}
	assert_int_equal(rmdir(dir), 0);
	unlink(victim);
}

static void kvref_thrash__links_at_old_swap_names__victim_intact(void **state)
{
	const char *args[] = { "--scenario", "thrash", "--duration", "1", "--workers", "1", NULL };

	(void)state;
	run_kvref_beside_links(args);
}

static void kvref_check__links_at_old_check_names__victim_intact(void **state)
{
	const char *args[] = { "--check", NULL };

	(void)state;
	run_kvref_beside_links(args);
}

/* ---- threads ---- */

struct worker {
	const struct kv_model *m;
	struct kv_cache *kc;
	int prompt[48];
	float *logits;
	int err;
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct kv_state s;
	struct kv_seq seq;
	float *logits = NULL;
	int round, pos, n;

	w->err = kv_state_init(&s, &w->m->config);
	if (w->err)
		return NULL;
	for (round = 0; round < 3 && !w->err; round++) {
		kv_seq_init(&seq);
		n = kv_seq_match_prefix(w->kc, &seq, w->prompt, 47);
		if (n < 0)
			w->err = n;
		for (pos = n < 0 ? 48 : n; pos < 48 && !w->err; pos++)
			w->err = model_forward(w->m, &s, w->kc, &seq, w->prompt[pos], pos, &logits);
		if (!w->err)
			memcpy(w->logits, logits, (size_t)w->m->config.vocab_size * sizeof(float));
		kv_seq_release(w->kc, &seq);
	}
	kv_state_release(&s);
	return NULL;
}

static void model_forward__threads_share_model_and_cache__same_logits(void **state)
{
	struct kv_config c;
	struct kv_model m;
	struct kv_cache *kc;
	struct kv_cache_stats st;
	struct worker w[4], solo;
	pthread_t th[4];
	int i, j;

	(void)state;
	small_config(&c);
	assert_int_equal(model_init_random(&m, &c, 7), 0);
	/* 4 threads x 3 full blocks fit in 16; shared 32-token prefix */
	kc = cache_new(c.n_layers, kv_config_kv_dim(&c), 16, 16, NULL, NULL);
	for (i = 0; i < 4; i++) {
		w[i].m = &m;
		w[i].kc = kc;
		w[i].err = 0;
		w[i].logits = malloc((size_t)c.vocab_size * sizeof(float));
		assert_non_null(w[i].logits);
		for (j = 0; j < 48; j++)
			w[i].prompt[j] = j < 32 ? 3 * j + 1 : 100 + 10 * i + j % 10;
	}
	for (i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&th[i], NULL, worker_run, &w[i]), 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);

	kv_cache_get_stats(kc, &st);
	assert_int_equal(st.blocks_in_use, 0);
	assert_int_equal((int)(st.allocated - st.freed - st.evicted), st.blocks_cached);
	assert_true(st.prefix_hits > 0);
	for (i = 0; i < 4; i++) {
		struct kv_cache *fresh = cache_new(c.n_layers, kv_config_kv_dim(&c), 16, 16, NULL, NULL);

		assert_int_equal(w[i].err, 0);
		solo = w[i];
		solo.kc = fresh;
		solo.logits = malloc((size_t)c.vocab_size * sizeof(float));
		assert_non_null(solo.logits);
		worker_run(&solo);
		assert_int_equal(solo.err, 0);
		assert_memory_equal(solo.logits, w[i].logits, (size_t)c.vocab_size * sizeof(float));
		free(solo.logits);
		free(w[i].logits);
		kv_cache_free(fresh);
	}
	kv_cache_free(kc);
	model_release(&m);
}

/* ---- checkpoints ---- */

static void save_load_round_trip(int vocab_sign)
{
	char path[] = "/tmp/kvref-model-XXXXXX";
	struct kv_config c, hdr;
	struct kv_model m, m2;
	struct kv_state s;
	struct kv_cache *kc1, *kc2;
	struct kv_seq q1, q2;
	struct stat sb;
	float *l1, *l2;
	size_t dim, L, hid, kvd, hs, off;
	FILE *f;
	int fd, i;

	small_config(&c);
	c.vocab_size *= vocab_sign;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(model_init_random(&m, &c, 2024), 0);

	/* llama2.c's order: wcls after rms_final and two freq_cis tables */
	dim = 64, L = 3, hid = 160, kvd = 16, hs = 8;
	off = 256 * dim + L * dim + L * dim * dim + 2 * L * dim * kvd + L * dim * dim +
	      L * dim + 3 * L * dim * hid;
	assert_ptr_equal(m.w.rms_final_weight, m.data + off);
	off += dim + 2 * 128 * hs / 2;
	if (vocab_sign > 0) {
		assert_ptr_equal(m.w.wcls, m.w.token_embedding_table);
		assert_int_equal(m.n_floats, off);
	} else {
		assert_ptr_equal(m.w.wcls, m.data + off);
		assert_int_equal(m.n_floats, off + 256 * dim);
	}

	assert_int_equal(model_save(&m, path), 0);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_size, sizeof(struct kv_config) + m.n_floats * sizeof(float));
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(&hdr, sizeof(hdr), 1, f), 1);
	fclose(f);
	assert_int_equal(hdr.vocab_size, 256 * vocab_sign);
	assert_int_equal(hdr.dim, 64);
	assert_int_equal(hdr.n_kv_heads, 2);

	assert_int_equal(model_load(&m2, path), 0);
	assert_memory_equal(&m2.config, &m.config, sizeof(m.config));
	assert_int_equal(m2.shared_weights, m.shared_weights);
	assert_int_equal(m2.n_floats, m.n_floats);
	assert_memory_equal(m2.data, m.data, m.n_floats * sizeof(float));
	assert_int_equal(m2.w.wcls - m2.data, m.w.wcls - m.data);

	assert_int_equal(kv_state_init(&s, &m.config), 0);
	kc1 = cache_new(3, 16, 16, 4, NULL, NULL);
	kc2 = cache_new(3, 16, 16, 4, NULL, NULL);
	l1 = malloc(256 * sizeof(float));
	assert_non_null(l1);
	kv_seq_init(&q1);
	kv_seq_init(&q2);
	for (i = 0; i < 20; i++) {
		assert_int_equal(model_forward(&m, &s, kc1, &q1, (i * 37) % 256, i, &l2), 0);
		memcpy(l1, l2, 256 * sizeof(float));
		assert_int_equal(model_forward(&m2, &s, kc2, &q2, (i * 37) % 256, i, &l2), 0);
		assert_memory_equal(l1, l2, 256 * sizeof(float));
	}
	kv_seq_release(kc1, &q1);
	kv_seq_release(kc2, &q2);
	free(l1);
	kv_cache_free(kc1);
	kv_cache_free(kc2);
	kv_state_release(&s);
	model_release(&m2);
	model_release(&m);
	unlink(path);
}

static void model_load__saved_tied_model__identical_weights_and_logits(void **state)
{
	(void)state;
	save_load_round_trip(1);
}

static void model_load__saved_untied_model__identical_weights_and_logits(void **state)
{
	(void)state;
	save_load_round_trip(-1);
}

static void model_load__truncated_or_padded_file__einval(void **state)
{
	char path[] = "/tmp/kvref-model-XXXXXX";
	struct kv_config c;
	struct kv_model m, out;
	struct stat sb;
	FILE *f;
	int fd;

	(void)state;
	small_config(&c);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(model_init_random(&m, &c, 1), 0);
	assert_int_equal(model_save(&m, path), 0);
	assert_int_equal(stat(path, &sb), 0);

	memset(&out, 0x5a, sizeof(out));
	assert_int_equal(truncate(path, sb.st_size - 4), 0);
	assert_int_equal(model_load(&out, path), -EINVAL);
	assert_int_equal(truncate(path, 10), 0);	/* not even a header */
	assert_int_equal(model_load(&out, path), -EINVAL);
	assert_int_equal(model_save(&m, path), 0);
	f = fopen(path, "ab");
	assert_non_null(f);
	fputc(0, f);
	fclose(f);
	assert_int_equal(model_load(&out, path), -EINVAL);
	/* out was not touched */
	assert_int_equal(out.config.dim, 0x5a5a5a5a);
	unlink(path);
	assert_int_equal(model_load(&out, path), -ENOENT);
	model_release(&m);
}

static void write_header_only(const char *path, const struct kv_config *h, size_t body_floats)
{
	FILE *f = fopen(path, "wb");
	size_t i;
	float z = 0.0f;

	assert_non_null(f);
	assert_int_equal(fwrite(h, sizeof(*h), 1, f), 1);
	for (i = 0; i < body_floats; i++)
		assert_int_equal(fwrite(&z, sizeof(z), 1, f), 1);
	fclose(f);
}

static void model_load__bad_header__einval(void **state)
{
	char path[] = "/tmp/kvref-model-XXXXXX";
	struct kv_config c, h;
	struct kv_model m;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	small_config(&c);
	assert_int_equal(model_init_random(&m, &c, 1), 0);

	/* the right size for the small shape, but heads that do not divide */
	h = c;
	h.n_heads = 5;
	write_header_only(path, &h, m.n_floats);
	assert_int_equal(model_load(&m, path), -EINVAL);
	/* 3 KV heads for 8 query heads, sized as kv_dim 24 would be */
	h = c;
	h.n_kv_heads = 3;
	write_header_only(path, &h, m.n_floats + 2 * 3 * 64 * (24 - 16));
	assert_int_equal(model_load(&m, path), -EINVAL);
	h = c;
	h.dim = 0;
	write_header_only(path, &h, m.n_floats);
	assert_int_equal(model_load(&m, path), -EINVAL);
	h = c;
	h.vocab_size = 0;
	write_header_only(path, &h, m.n_floats);
	assert_int_equal(model_load(&m, path), -EINVAL);
	/* a good header over the right number of floats loads */
	write_header_only(path, &c, m.n_floats);
	model_release(&m);
	assert_int_equal(model_load(&m, path), 0);
	model_release(&m);
	unlink(path);
}

/* ---- sampling ---- */

static void sample_temperature__two_tokens__follows_softmax(void **state)
{
	float logits[3] = { 0.0f, logf(3.0f), -INFINITY };
	uint64_t rng = 12;
	int i, n1 = 0, t;

	(void)state;
	assert_int_equal(sample_argmax(logits, 3), 1);
	assert_int_equal(sample_temperature(logits, 3, 0.0f, &rng), 1);
	for (i = 0; i < 20000; i++) {
		t = sample_temperature(logits, 3, 1.0f, &rng);
		assert_in_range(t, 0, 1);
		n1 += t == 1;
	}
	/* p(1) = 3/4 */
	assert_in_range(n1, 14700, 15300);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(attention_paged__shuffled_blocks_gqa__equals_contiguous),
		cmocka_unit_test(model_forward__tied_classifier__matches_contiguous_reference),
		cmocka_unit_test(model_forward__untied_classifier__matches_contiguous_reference),
		cmocka_unit_test(model_forward__pool_all_in_use__enomem),
		cmocka_unit_test(kv_seq_match_prefix__same_40_token_prefix__shares_two_blocks),
		cmocka_unit_test(kv_block_hash__same_tokens_other_parent__differs),
		cmocka_unit_test(kv_seq_commit__block_filled_twice__second_copy_stays_private),
		cmocka_unit_test(kv_seq_reserve__pool_full__evicts_least_recently_released_first),
		cmocka_unit_test(kv_seq_release__multi_block_sequence__tail_evicted_first),
		cmocka_unit_test(kv_seq_match_prefix__block_in_swap_file__bit_identical_kv),
		cmocka_unit_test(kv_cache_new__swap_slots_full__oldest_swapped_block_dropped),
		cmocka_unit_test(kv_cache_new__storage_ops__swaps_go_through_staging),
		cmocka_unit_test(model_forward__prefix_back_from_swap__same_logits_as_fresh),
		cmocka_unit_test(kv_cache_new__symlink_at_swap_name__not_followed_file_0600_unlinked),
		cmocka_unit_test(kvref_thrash__links_at_old_swap_names__victim_intact),
		cmocka_unit_test(kvref_check__links_at_old_check_names__victim_intact),
		cmocka_unit_test(model_forward__threads_share_model_and_cache__same_logits),
		cmocka_unit_test(model_load__saved_tied_model__identical_weights_and_logits),
		cmocka_unit_test(model_load__saved_untied_model__identical_weights_and_logits),
		cmocka_unit_test(model_load__truncated_or_padded_file__einval),
		cmocka_unit_test(model_load__bad_header__einval),
		cmocka_unit_test(sample_temperature__two_tokens__follows_softmax),
	};

	return cmocka_run_group_tests_name("kvref", tests, NULL, NULL);
}
