// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer harness: kvref's llama2.c checkpoint reader (model_load,
 * tools/kvref/model.c).  The input is the file, written to a memfd and
 * loaded through /proc/self/fd.  model_load must either refuse it with
 * -EINVAL, leaving the model as it was, or accept a header that passes
 * kv_config_check and a size that is exactly the header's (28 bytes + the
 * weights): then every weight array must lie inside the floats read, and a
 * forward pass over a small paged cache (which reads every weight once)
 * must stay in bounds.  abort() on a violation; ASan catches the reads.
 */
#include <errno.h>
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kv_model m, before;
	int32_t file_vocab = 0;
	int err;

	if (fd < 0) {
		fd = memfd_create("fuzz-model", MFD_CLOEXEC);
		CHECK(fd >= 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	CHECK(ftruncate(fd, 0) == 0);
	CHECK(pwrite(fd, data, size, 0) == (ssize_t)size);
	if (size >= 6 * sizeof(int32_t) + sizeof(file_vocab))
		memcpy(&file_vocab, data + 5 * sizeof(int32_t), sizeof(file_vocab));

	memset(&m, 0xa5, sizeof(m));
	before = m;
	err = model_load(&m, path);
	if (err) {
		CHECK(err == -EINVAL);
		CHECK(!memcmp(&m, &before, sizeof(m)));	/* written only on success */
		return 0;
	}
	check_model(&m, size, file_vocab);
	forward(&m);
	model_release(&m);
	return 0;
}
