// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer harness: kvref's llama2.c checkpoint reader (model_load,
 * tools/kvref/model.c).  The input is the file, written to a memfd and
 * loaded through /proc/self/fd; or, when its first byte is 'P', a header
 * (the next 28 bytes) whose weights the harness pads to the size it computes
 * itself from llama2.c's layout (up to 1 Mi floats, the input's remaining
 * bytes repeated), so that every shape kv_config_check allows is loaded and
 * run, and the two size computations must agree.  model_load must either
 * refuse it with
 * -EINVAL, leaving the model as it was, or accept a header that passes
 * kv_config_check and a size that is exactly the header's (28 bytes + the
 * weights): then every weight array must lie inside the floats read, and a
 * forward pass over a small paged cache (which reads every weight once)
 * must stay in bounds.  abort() on a violation; ASan catches the reads.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "../../tools/kvref/kvcache.h"
#include "../../tools/kvref/model.h"

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "fuzz_model: invariant failed at %s:%d: %s\n", __FILE__, __LINE__, #c); \
	abort(); } } while (0)

/* a forward pass this big costs too much per input */
#define FORWARD_MAX_FLOATS (1u << 20)
/* the padded form writes at most this many */
#define PAD_MAX_FLOATS (1u << 18)

static int fd = -1;
static char path[64];

static bool inside(const struct kv_model *m, const float *p, size_t n)
{
	return p >= m->data && n <= m->n_floats && p - m->data <= (ptrdiff_t)(m->n_floats - n);
}

static void check_model(const struct kv_model *m, size_t size, int32_t file_vocab)
{
	const struct kv_config *c = &m->config;
	size_t dim = (size_t)c->dim, hid = (size_t)c->hidden_dim, L = (size_t)c->n_layers;
	size_t kvd, voc = (size_t)c->vocab_size;

	CHECK(kv_config_check(c) == 0);
	CHECK(size == sizeof(struct kv_config) + m->n_floats * sizeof(float));
	CHECK(m->shared_weights == (file_vocab > 0));
	CHECK(c->vocab_size == (file_vocab > 0 ? file_vocab : -file_vocab));
	kvd = (size_t)kv_config_kv_dim(c);
	CHECK(inside(m, m->w.token_embedding_table, voc * dim));
	CHECK(inside(m, m->w.rms_att_weight, L * dim));
	CHECK(inside(m, m->w.wq, L * dim * dim));
	CHECK(inside(m, m->w.wk, L * dim * kvd));
	CHECK(inside(m, m->w.wv, L * dim * kvd));
	CHECK(inside(m, m->w.wo, L * dim * dim));
	CHECK(inside(m, m->w.rms_ffn_weight, L * dim));
	CHECK(inside(m, m->w.w1, L * dim * hid));
	CHECK(inside(m, m->w.w2, L * hid * dim));
	CHECK(inside(m, m->w.w3, L * dim * hid));
	CHECK(inside(m, m->w.rms_final_weight, dim));
	CHECK(inside(m, m->w.wcls, voc * dim));
	CHECK(m->shared_weights == (m->w.wcls == m->w.token_embedding_table));
}

/* Two tokens through the model, over a paged cache of blocks of one token. */
static void forward(const struct kv_model *m)
{
	struct kv_cache_params p;
	struct kv_cache *kc = NULL;
	struct kv_state s;
	struct kv_seq seq;
	float *logits;
	int pos;

	if (m->n_floats > FORWARD_MAX_FLOATS || m->config.seq_len < 2)
		return;
	kv_cache_params_default(&p, m->config.n_layers, kv_config_kv_dim(&m->config));
	p.block_size = 1;
	p.n_blocks = 4;
	CHECK(kv_cache_new(&kc, &p) == 0);
	CHECK(kv_state_init(&s, &m->config) == 0);
	kv_seq_init(&seq);
	for (pos = 0; pos < 2; pos++) {
		CHECK(model_forward(m, &s, kc, &seq, pos % m->config.vocab_size, pos, &logits) == 0);
		CHECK(logits == s.logits);
	}
	CHECK(model_forward(m, &s, kc, &seq, m->config.vocab_size, 2, &logits) == -EINVAL);
	kv_seq_release(kc, &seq);
	kv_state_release(&s);
	kv_cache_free(kc);
}

/* llama2.c's layout, counted here independently of model.c */
static uint64_t file_floats(const struct kv_config *c, bool shared)
{
	uint64_t dim = (uint64_t)c->dim, hs = dim / (uint64_t)c->n_heads;
	uint64_t kvd = hs * (uint64_t)c->n_kv_heads, L = (uint64_t)c->n_layers;

	return (uint64_t)c->vocab_size * dim * (shared ? 1 : 2) +
	       L * (2 * dim + 2 * dim * dim + 2 * dim * kvd + 3 * dim * (uint64_t)c->hidden_dim) +
	       dim + (uint64_t)c->seq_len * hs;
}

/* The padded form: header, then floats to the size the header implies.
 * Returns the file's size, or 0 when the header is not one to pad. */
static size_t pad_file(const uint8_t *data, size_t size)
{
	struct kv_config c, c0;
	const uint8_t *fill = data + 1 + sizeof(c);
	size_t nfill, bytes;
	uint64_t n, i;
	bool shared;
	float *w;

	if (size < 1 + sizeof(c))
		return 0;
	nfill = size - 1 - sizeof(c);
	memcpy(&c, data + 1, sizeof(c));
	c0 = c;
	shared = c.vocab_size > 0;
	if (c.vocab_size == INT32_MIN)
		return 0;
	c.vocab_size = abs(c.vocab_size);
	if (kv_config_check(&c))
		return 0;
	n = file_floats(&c, shared);
	if (n > PAD_MAX_FLOATS)
		return 0;
	bytes = (size_t)n * sizeof(float);
	w = malloc(bytes ? bytes : 1);
	CHECK(w);
	for (i = 0; i < n; i++) {
		/* weights from the input, finite so that the pass is defined */
		w[i] = 0;
		if (nfill >= sizeof(float))
			memcpy(&w[i], fill + (i * sizeof(float)) % (nfill - nfill % sizeof(float)),
			       sizeof(float));
		if (!isfinite(w[i]))
			w[i] = 0;
	}
	CHECK(ftruncate(fd, 0) == 0);
	CHECK(pwrite(fd, &c0, sizeof(c0), 0) == (ssize_t)sizeof(c0));
	CHECK(pwrite(fd, w, bytes, sizeof(c0)) == (ssize_t)bytes);
	free(w);
	return sizeof(c) + bytes;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kv_model m, before;
	int32_t file_vocab = 0;
	size_t padded = 0;
	int err;

	if (fd < 0) {
		fd = memfd_create("fuzz-model", MFD_CLOEXEC);
		CHECK(fd >= 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (size && data[0] == 'P')
		padded = pad_file(data, size);
	if (padded) {
		memcpy(&file_vocab, data + 1 + 5 * sizeof(int32_t), sizeof(file_vocab));
		size = padded;
	} else {
		CHECK(ftruncate(fd, 0) == 0);
		CHECK(pwrite(fd, data, size, 0) == (ssize_t)size);
		if (size >= 6 * sizeof(int32_t) + sizeof(file_vocab))
			memcpy(&file_vocab, data + 5 * sizeof(int32_t), sizeof(file_vocab));
	}

	memset(&m, 0xa5, sizeof(m));
	before = m;
	err = model_load(&m, path);
	if (err) {
		CHECK(err == -EINVAL);
		CHECK(!padded);		/* the two layouts agree */
		CHECK(!memcmp(&m, &before, sizeof(m)));	/* written only on success */
		return 0;
	}
	check_model(&m, size, file_vocab);
	forward(&m);
	model_release(&m);
	return 0;
}
