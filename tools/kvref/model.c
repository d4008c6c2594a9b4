// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The transformer of the reference workload: llama2.c's weights layout and
 * forward pass, with attention read through a paged KV cache.
 *
 * The one idea: the whole checkpoint body (everything after the 7-int
 * header, including the two unused freq_cis tables llama2.c skips) is one
 * float array in file order, and struct kv_weights only points into it.  So
 * loading is one read, saving one write, and a checkpoint round trip is
 * byte-identical.
 *
 * The math follows llama2.c's run.c step for step (RMSNorm with eps 1e-5,
 * RoPE over pairs with freq 1/10000^(i/head_size), softmax attention scaled
 * by 1/sqrt(head_size), SwiGLU); only the dot products keep eight partial
 * sums, which lets the compiler use vector registers at -O2.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "backend.h"
#include "model.h"

_Static_assert(sizeof(struct kv_config) == 7 * 4, "the llama2.c header is 7 int32");

#define RMS_EPS 1e-5f
#define ROPE_THETA 10000.0f

/* ---- random numbers ---- */

uint64_t kv_rand_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

float kv_rand_float(uint64_t *state)
{
	return (float)(kv_rand_next(state) >> 40) * (1.0f / 16777216.0f);
}

/* ---- shapes ---- */

void kv_config_default(struct kv_config *c)
{
	c->dim = 288;
	c->hidden_dim = 768;
	c->n_layers = 6;
	c->n_heads = 6;
	c->n_kv_heads = 2;
	c->vocab_size = 4096;
	c->seq_len = 512;
}

int kv_config_check(const struct kv_config *c)
{
	if (c->dim <= 0 || c->hidden_dim <= 0 || c->n_layers <= 0 || c->n_heads <= 0 ||
	    c->n_kv_heads <= 0 || c->vocab_size <= 0 || c->seq_len <= 0)
		return -EINVAL;
	if (c->dim > (1 << 16) || c->hidden_dim > (1 << 20) || c->n_layers > 1024 ||
	    c->vocab_size > (1 << 22) || c->seq_len > (1 << 20))
		return -EINVAL;
	if (c->dim % c->n_heads || c->n_heads % c->n_kv_heads || (c->dim / c->n_heads) % 2)
		return -EINVAL;
	return 0;
}

int kv_config_head_size(const struct kv_config *c)
{
	return c->dim / c->n_heads;
}

int kv_config_kv_dim(const struct kv_config *c)
{
	return c->dim / c->n_heads * c->n_kv_heads;
}

/* Floats after the header; the bounds of kv_config_check keep this far
 * below 2^64. */
static uint64_t weights_floats(const struct kv_config *c, int shared)
{
	uint64_t dim = (uint64_t)c->dim, hid = (uint64_t)c->hidden_dim;
	uint64_t L = (uint64_t)c->n_layers, voc = (uint64_t)c->vocab_size;
	uint64_t hs = (uint64_t)kv_config_head_size(c);
	uint64_t kvd = (uint64_t)kv_config_kv_dim(c);
	uint64_t n;

	n = voc * dim;				/* token_embedding_table */
	n += L * dim;				/* rms_att_weight */
	n += L * dim * dim;			/* wq */
	n += 2 * L * dim * kvd;			/* wk, wv */
	n += L * dim * dim;			/* wo */
	n += L * dim;				/* rms_ffn_weight */
	n += 3 * L * dim * hid;			/* w1, w2, w3 */
	n += dim;				/* rms_final_weight */
	n += 2 * (uint64_t)c->seq_len * hs / 2;	/* freq_cis_real, freq_cis_imag */
	if (!shared)
		n += voc * dim;			/* wcls */
	return n;
}

/* llama2.c's memory_map_weights. */
static void weights_map(struct kv_weights *w, const struct kv_config *c, int shared,
			float *ptr)
{
	size_t dim = (size_t)c->dim, hid = (size_t)c->hidden_dim, L = (size_t)c->n_layers;
	size_t kvd = (size_t)kv_config_kv_dim(c), hs = (size_t)kv_config_head_size(c);

	w->token_embedding_table = ptr;
	ptr += (size_t)c->vocab_size * dim;
	w->rms_att_weight = ptr;
	ptr += L * dim;
	w->wq = ptr;
	ptr += L * dim * dim;
	w->wk = ptr;
	ptr += L * dim * kvd;
	w->wv = ptr;
	ptr += L * dim * kvd;
	w->wo = ptr;
	ptr += L * dim * dim;
	w->rms_ffn_weight = ptr;
	ptr += L * dim;
	w->w1 = ptr;
	ptr += L * dim * hid;
	w->w2 = ptr;
	ptr += L * hid * dim;
	w->w3 = ptr;
	ptr += L * dim * hid;
	w->rms_final_weight = ptr;
	ptr += dim;
	ptr += (size_t)c->seq_len * hs / 2;	/* freq_cis_real */
	ptr += (size_t)c->seq_len * hs / 2;	/* freq_cis_imag */
	w->wcls = shared ? w->token_embedding_table : ptr;
}

/* ---- weights ---- */

static void fill_uniform(float *p, size_t n, float std, uint64_t *rng)
{
	float a = std * 1.7320508f;	/* uniform(-a, a) has std a/sqrt(3) */
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (2.0f * kv_rand_float(rng) - 1.0f) * a;
}

static void fill_const(float *p, size_t n, float v)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = v;
}

int model_init_random(struct kv_model *m, const struct kv_config *c, uint64_t seed)
{
	struct kv_config cfg = *c;
	struct kv_model t;
	size_t L, dim, hid, kvd, hs, pos, i;
	float *fr, *fi, resid;
	uint64_t rng = seed;
	int shared = 1, err;

	if (cfg.vocab_size < 0) {
		shared = 0;
		cfg.vocab_size = -cfg.vocab_size;
	}
	err = kv_config_check(&cfg);
	if (err)
		return err;
	memset(&t, 0, sizeof(t));
	t.config = cfg;
	t.shared_weights = shared;
	t.n_floats = (size_t)weights_floats(&cfg, shared);
	t.data = malloc(t.n_floats * sizeof(float));
	if (!t.data)
		return -ENOMEM;
	weights_map(&t.w, &cfg, shared, t.data);

	L = (size_t)cfg.n_layers;
	dim = (size_t)cfg.dim;
	hid = (size_t)cfg.hidden_dim;
	kvd = (size_t)kv_config_kv_dim(&cfg);
	hs = (size_t)kv_config_head_size(&cfg);
	resid = 1.0f / sqrtf(2.0f * (float)L);
	fill_uniform(t.w.token_embedding_table, (size_t)cfg.vocab_size * dim,
		     1.0f / sqrtf((float)dim), &rng);
	fill_const(t.w.rms_att_weight, L * dim, 1.0f);
	fill_uniform(t.w.wq, L * dim * dim, 1.0f / sqrtf((float)dim), &rng);
	fill_uniform(t.w.wk, L * kvd * dim, 1.0f / sqrtf((float)dim), &rng);
	fill_uniform(t.w.wv, L * kvd * dim, 1.0f / sqrtf((float)dim), &rng);
	fill_uniform(t.w.wo, L * dim * dim, resid / sqrtf((float)dim), &rng);
	fill_const(t.w.rms_ffn_weight, L * dim, 1.0f);
	fill_uniform(t.w.w1, L * hid * dim, 1.0f / sqrtf((float)dim), &rng);
	fill_uniform(t.w.w2, L * dim * hid, resid / sqrtf((float)hid), &rng);
	fill_uniform(t.w.w3, L * hid * dim, 1.0f / sqrtf((float)dim), &rng);
	fill_const(t.w.rms_final_weight, dim, 1.0f);
	/* the freq_cis tables llama2.c's legacy export wrote; unused here */
	fr = t.w.rms_final_weight + dim;
	fi = fr + (size_t)cfg.seq_len * hs / 2;
	for (pos = 0; pos < (size_t)cfg.seq_len; pos++) {
		for (i = 0; i < hs / 2; i++) {
			float f = 1.0f / powf(ROPE_THETA, (float)(2 * i) / (float)hs);

			fr[pos * hs / 2 + i] = cosf((float)pos * f);
			fi[pos * hs / 2 + i] = sinf((float)pos * f);
		}
	}
	if (!shared)
		fill_uniform(t.w.wcls, (size_t)cfg.vocab_size * dim, 1.0f / sqrtf((float)dim), &rng);
	*m = t;
	return 0;
}

void model_release(struct kv_model *m)
{
	free(m->data);
	memset(m, 0, sizeof(*m));
}

/* ---- checkpoint files ---- */

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* -EINVAL if the file ends early. */
static int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;
	ssize_t n;

	while (len) {
		n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EINVAL;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int model_save(const struct kv_model *m, const char *path)
{
	struct kv_config hdr = m->config;
	size_t len = strlen(path);
	char *tmp;
	int fd = -1, err;

	tmp = malloc(len + sizeof(".tmpXXXXXX"));
	if (!tmp)
		return -ENOMEM;
	memcpy(tmp, path, len);
	memcpy(tmp + len, ".tmpXXXXXX", sizeof(".tmpXXXXXX"));
	fd = mkstemp(tmp);
	if (fd < 0) {
		err = -errno;
		free(tmp);
		return err;
	}
	if (!m->shared_weights)
		hdr.vocab_size = -hdr.vocab_size;
	err = write_all(fd, &hdr, sizeof(hdr));
	if (!err)
		err = write_all(fd, m->data, m->n_floats * sizeof(float));
	if (!err && (fchmod(fd, 0644) || fsync(fd)))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	free(tmp);
	return err;
}

int model_load(struct kv_model *m, const char *path)
{
	struct kv_model t;
	struct stat st;
	uint64_t n;
	int fd, err;

	memset(&t, 0, sizeof(t));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto cleanup;
	}
	err = read_all(fd, &t.config, sizeof(t.config));
	if (err)
		goto cleanup;
	err = -EINVAL;
	if (t.config.vocab_size == 0 || t.config.vocab_size == INT32_MIN)
		goto cleanup;
	t.shared_weights = t.config.vocab_size > 0;
	t.config.vocab_size = abs(t.config.vocab_size);
	if (kv_config_check(&t.config))
		goto cleanup;
	n = weights_floats(&t.config, t.shared_weights);
	if ((uint64_t)st.st_size != sizeof(t.config) + n * sizeof(float) || n > SIZE_MAX / sizeof(float))
		goto cleanup;
	t.n_floats = (size_t)n;
	t.data = malloc(t.n_floats * sizeof(float));
	if (!t.data) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = read_all(fd, t.data, t.n_floats * sizeof(float));
	if (err)
		goto cleanup;
	weights_map(&t.w, &t.config, t.shared_weights, t.data);
	*m = t;
	t.data = NULL;
cleanup:
	free(t.data);
	close(fd);
	return err;
}

/* ---- per-thread state ---- */

int kv_state_init(struct kv_state *s, const struct kv_config *c)
{
	size_t dim, hid, n;
	float *p;
	int err = kv_config_check(c);

	if (err)
		return err;
	dim = (size_t)c->dim;
	hid = (size_t)c->hidden_dim;
	n = 4 * dim + 2 * hid + (size_t)c->n_heads * (size_t)c->seq_len +
	    (size_t)c->vocab_size + (size_t)kv_config_head_size(c);
	p = calloc(n, sizeof(float));
	if (!p)
		return -ENOMEM;
	memset(s, 0, sizeof(*s));
	s->config = *c;
	s->mem = p;
	s->x = p;
	s->xb = s->x + dim;
	s->xb2 = s->xb + dim;
	s->q = s->xb2 + dim;
	s->hb = s->q + dim;
	s->hb2 = s->hb + hid;
	s->att = s->hb2 + hid;
	s->logits = s->att + (size_t)c->n_heads * (size_t)c->seq_len;
	s->rope_cos = s->logits + c->vocab_size;
	s->rope_sin = s->rope_cos + kv_config_head_size(c) / 2;
	return 0;
}

void kv_state_release(struct kv_state *s)
{
	free(s->mem);
	memset(s, 0, sizeof(*s));
}

/* ---- the math ---- */

static float dot(const float *a, const float *b, int n)
{
	float s[8] = { 0 }, r;
	int i, k;

	for (i = 0; i + 8 <= n; i += 8)
		for (k = 0; k < 8; k++)
			s[k] += a[i + k] * b[i + k];
	r = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
	for (; i < n; i++)
		r += a[i] * b[i];
	return r;
}

/* xout[d] = W[d][n] x[n] */
static void matmul(float *xout, const float *x, const float *w, int n, int d)
{
	int i;

	for (i = 0; i < d; i++)
		xout[i] = dot(w + (size_t)i * n, x, n);
}

static void rmsnorm(float *o, const float *x, const float *weight, int size)
{
	float ss = 0.0f;
	int j;

	for (j = 0; j < size; j++)
		ss += x[j] * x[j];
	ss /= (float)size;
	ss += RMS_EPS;
	ss = 1.0f / sqrtf(ss);
	for (j = 0; j < size; j++)
		o[j] = weight[j] * (ss * x[j]);
}

static void softmax(float *x, int size)
{
	float max = x[0], sum = 0.0f;
	int i;

	for (i = 1; i < size; i++)
		if (x[i] > max)
			max = x[i];
	for (i = 0; i < size; i++) {
		x[i] = expf(x[i] - max);
		sum += x[i];
	}
	for (i = 0; i < size; i++)
		x[i] /= sum;
}

static void axpy(float *y, float a, const float *x, int n)
{
	int i;

	for (i = 0; i < n; i++)
		y[i] += a * x[i];
}

/* cos/sin of pos * freq for each pair of a head, as llama2.c computes them */
static void rope_tables(struct kv_state *s, int head_size, int pos)
{
	int i;

	for (i = 0; i < head_size; i += 2) {
		float freq = 1.0f / powf(ROPE_THETA, (float)i / (float)head_size);
		float val = (float)pos * freq;

		s->rope_cos[i / 2] = cosf(val);
		s->rope_sin[i / 2] = sinf(val);
	}
}

static void rope_rotate(const struct kv_state *s, float *vec, int n, int head_size)
{
	int i;

	for (i = 0; i < n; i += 2) {
		float fcr = s->rope_cos[(i % head_size) / 2];
		float fci = s->rope_sin[(i % head_size) / 2];
		float v0 = vec[i], v1 = vec[i + 1];

		vec[i] = v0 * fcr - v1 * fci;
		vec[i + 1] = v0 * fci + v1 * fcr;
	}
}

/* Scores of one query head against n keys at k + t * stride, into att[0..n). */
static void head_scores(const float *qh, const float *k, int stride, int n,
			int head_size, float *att)
{
	int t;

	for (t = 0; t < n; t++)
		att[t] = dot(qh, k + (size_t)t * stride, head_size) / sqrtf((float)head_size);
}

/* out += sum over t of att[t] * (the value at v + t * stride) */
static void head_mix(const float *att, const float *v, int stride, int n,
		     int head_size, float *out)
{
	int t;

	for (t = 0; t < n; t++)
		axpy(out, att[t], v + (size_t)t * stride, head_size);
}

void attention_paged(const struct kv_config *c, const struct kv_cache *kc,
		     const struct kv_seq *seq, int layer, int pos,
		     const float *q, float *att, float *out)
{
	int hs = kv_config_head_size(c), kvd = kv_config_kv_dim(c);
	int kv_mul = c->n_heads / c->n_kv_heads, bs = kv_cache_block_size(kc);
	int n = pos + 1, h, t0, rows;

	for (h = 0; h < c->n_heads; h++) {
		const float *qh = q + (size_t)h * hs;
		float *a = att + (size_t)h * n, *o = out + (size_t)h * hs;
		size_t off = (size_t)(h / kv_mul) * hs;

		for (t0 = 0; t0 < n; t0 += bs) {
			rows = n - t0 < bs ? n - t0 : bs;
			head_scores(qh, kv_cache_key(kc, seq->blocks[t0 / bs], layer) + off,
				    kvd, rows, hs, a + t0);
		}
		softmax(a, n);
		memset(o, 0, (size_t)hs * sizeof(float));
		for (t0 = 0; t0 < n; t0 += bs) {
			rows = n - t0 < bs ? n - t0 : bs;
			head_mix(a + t0, kv_cache_value(kc, seq->blocks[t0 / bs], layer) + off,
				 kvd, rows, hs, o);
		}
	}
}

void attention_contiguous(const struct kv_config *c, const float *k, const float *v,
			  int pos, const float *q, float *att, float *out)
{
	int hs = kv_config_head_size(c), kvd = kv_config_kv_dim(c);
	int kv_mul = c->n_heads / c->n_kv_heads, n = pos + 1, h;

	for (h = 0; h < c->n_heads; h++) {
		size_t off = (size_t)(h / kv_mul) * hs;
		float *a = att + (size_t)h * n, *o = out + (size_t)h * hs;

		head_scores(q + (size_t)h * hs, k + off, kvd, n, hs, a);
		softmax(a, n);
		memset(o, 0, (size_t)hs * sizeof(float));
		head_mix(a, v + off, kvd, n, hs, o);
	}
}

static int forward_check(const struct kv_model *m, const struct kv_state *s,
			 const struct kv_cache *kc, const struct kv_seq *seq,
			 int token, int pos)
{
	const struct kv_config *c = &m->config;

	if (memcmp(&s->config, c, sizeof(*c)) || kv_cache_n_layers(kc) != c->n_layers ||
	    kv_cache_kv_dim(kc) != kv_config_kv_dim(c))
		return -EINVAL;
	if (token < 0 || token >= c->vocab_size || pos != seq->len || pos >= c->seq_len)
		return -EINVAL;
	return 0;
}

int model_forward(const struct kv_model *m, struct kv_state *s, struct kv_cache *kc,
		  struct kv_seq *seq, int token, int pos, float **logits)
{
	const struct kv_config *c = &m->config;
	const struct kv_weights *w = &m->w;
	int dim = c->dim, hid = c->hidden_dim, kvd = kv_config_kv_dim(c);
	int hs = kv_config_head_size(c), l, i, err;
	size_t ld;
	float *k, *v;

	err = forward_check(m, s, kc, seq, token, pos);
	if (err)
		return err;
	err = kv_seq_reserve(kc, seq);
	if (err)
		return err;

	memcpy(s->x, w->token_embedding_table + (size_t)token * dim, (size_t)dim * sizeof(float));
	rope_tables(s, hs, pos);
	for (l = 0; l < c->n_layers; l++) {
		ld = (size_t)l * dim;

		/* attention: q, and this position's k, v straight into the cache */
		rmsnorm(s->xb, s->x, w->rms_att_weight + ld, dim);
		k = kv_seq_key(kc, seq, l, pos);
		v = kv_seq_value(kc, seq, l, pos);
		matmul(s->q, s->xb, w->wq + ld * dim, dim, dim);
		matmul(k, s->xb, w->wk + ld * kvd, dim, kvd);
		matmul(v, s->xb, w->wv + ld * kvd, dim, kvd);
		rope_rotate(s, s->q, dim, hs);
		rope_rotate(s, k, kvd, hs);
		attention_paged(c, kc, seq, l, pos, s->q, s->att, s->xb);
		matmul(s->xb2, s->xb, w->wo + ld * dim, dim, dim);
		for (i = 0; i < dim; i++)
			s->x[i] += s->xb2[i];

		/* feed-forward: w2(silu(w1 x) * w3 x) */
		rmsnorm(s->xb, s->x, w->rms_ffn_weight + ld, dim);
		matmul(s->hb, s->xb, w->w1 + ld * hid, dim, hid);
		matmul(s->hb2, s->xb, w->w3 + ld * hid, dim, hid);
		for (i = 0; i < hid; i++) {
			float val = s->hb[i];

			val *= 1.0f / (1.0f + expf(-val));
			s->hb[i] = val * s->hb2[i];
		}
		matmul(s->xb, s->hb, w->w2 + ld * hid, hid, dim);
		for (i = 0; i < dim; i++)
			s->x[i] += s->xb[i];
	}
	rmsnorm(s->x, s->x, w->rms_final_weight, dim);
	matmul(s->logits, s->x, w->wcls, dim, c->vocab_size);
	kv_seq_commit(kc, seq, token);
	*logits = s->logits;
	return 0;
}

/* ---- sampling ---- */

int sample_argmax(const float *logits, int n)
{
	int i, best = 0;

	for (i = 1; i < n; i++)
		if (logits[i] > logits[best])
			best = i;
	return best;
}

int sample_temperature(const float *logits, int n, float temperature, uint64_t *rng)
{
	float max, sum = 0.0f, r, cdf = 0.0f;
	int i;

	if (temperature <= 0.0f)
		return sample_argmax(logits, n);
	max = logits[sample_argmax(logits, n)];
	for (i = 0; i < n; i++)
		sum += expf((logits[i] - max) / temperature);
	r = kv_rand_float(rng) * sum;
	for (i = 0; i < n; i++) {
		cdf += expf((logits[i] - max) / temperature);
		if (r < cdf)
			return i;
	}
	return n - 1;
}

/* ---- the CPU backend ---- */

static int cpu_state_new(void *ctx, void **state)
{
	const struct kv_model *m = ctx;
	struct kv_state *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	err = kv_state_init(s, &m->config);
	if (err) {
		free(s);
		return err;
	}
	s->model = m;
	*state = s;
	return 0;
}

static void cpu_state_free(void *ctx, void *state)
{
	(void)ctx;
	if (state)
		kv_state_release(state);
	free(state);
}

static int cpu_forward(void *state, struct kv_cache *kc, struct kv_seq *seq,
		       int token, int pos, float **logits)
{
	struct kv_state *s = state;

	return model_forward(s->model, s, kc, seq, token, pos, logits);
}

static void cpu_close(void *ctx)
{
	(void)ctx;
}

void kv_backend_cpu(struct kv_backend *b, const struct kv_model *m)
{
	*b = (struct kv_backend){
		.name = "cpu", .ctx = (void *)m, .storage = NULL,
		.state_new = cpu_state_new, .state_free = cpu_state_free,
		.forward = cpu_forward, .close = cpu_close,
	};
}
