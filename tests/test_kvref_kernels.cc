// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kernels of kvref's CUDA backend (cuda/kvref_kernels.cuh), run on the
 * host under tests/helpers/cuda_emu.h (real threads, barriers and warp
 * shuffles), against the CPU model: the KV append and paged attention over
 * a real kvcache.c pool with a shuffled block table, across block
 * boundaries, GQA and more positions than threads; RMSNorm (in place too),
 * SwiGLU, the residual add and the embedding lookup.
 */
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <csetjmp>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>
extern "C" {
#include "../tools/kvref/kvcache.h"
#include "../tools/kvref/model.h"
}
#include "helpers/cuda_emu.h"
#include "../cuda/kvref_kernels.cuh"
/* last: cmocka's fail() macro would break the C++ headers */
extern "C" {
#include <cmocka.h>
}

static uint64_t rng = 12345;

static float frand(void)
{
	return kv_rand_float(&rng) * 2.0f - 1.0f;
}

static void fill(float *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = frand();
}

/* |a - b| <= tol * max(1, |b|) for every element */
static void assert_close(const float *a, const float *b, size_t n, float tol)
{
	for (size_t i = 0; i < n; i++) {
		float lim = tol * (fabsf(b[i]) > 1.0f ? fabsf(b[i]) : 1.0f);

		if (!(fabsf(a[i] - b[i]) <= lim))
			fail_msg("element %zu: %.9g vs %.9g", i, (double)a[i], (double)b[i]);
	}
}

/* RoPE as model.c applies it: pairs (i, i + 1), frequency of i within its head */
static void ref_rope(float *v, int n, int hs, int pos)
{
	for (int i = 0; i < n; i += 2) {
		float freq = 1.0f / powf(10000.0f, (float)(i % hs) / (float)hs);
		float val = (float)pos * freq, c = cosf(val), s = sinf(val);
		float a = v[i], b = v[i + 1];

		v[i] = a * c - b * s;
		v[i + 1] = a * s + b * c;
	}
}

/*
 * A sequence of pos + 1 positions in a pool whose free list was shuffled,
 * K/V of positions 0..pos-1 random; then the kernels append position pos
 * and attend, and the CPU attends over the same cache.
 */
static void append_and_attend(int pos, int layer)
{
	struct kv_config c = { 64, 128, 2, 4, 2, 32, 256 };
	int hs = kv_config_head_size(&c), kvd = kv_config_kv_dim(&c), bs = 4, nb = 80;
	struct kv_cache_params p;
	struct kv_cache *kc = NULL;
	struct kv_seq seq, one[80];
	int i, l;

	kv_cache_params_default(&p, c.n_layers, kvd);
	p.block_size = bs;
	p.n_blocks = nb;
	assert_int_equal(kv_cache_new(&kc, &p), 0);
	/* take every block, give them back in a scrambled order */
	for (i = 0; i < nb; i++) {
		kv_seq_init(&one[i]);
		assert_int_equal(kv_seq_reserve(kc, &one[i]), 0);
		kv_seq_commit(kc, &one[i], i);
	}
	for (i = 0; i < nb; i++)
		kv_seq_release(kc, &one[(i * 37) % nb]);

	kv_seq_init(&seq);
	for (i = 0; i < pos; i++) {
		assert_int_equal(kv_seq_reserve(kc, &seq), 0);
		for (l = 0; l < c.n_layers; l++) {
			fill(kv_seq_key(kc, &seq, l, i), (size_t)kvd);
			fill(kv_seq_value(kc, &seq, l, i), (size_t)kvd);
		}
		kv_seq_commit(kc, &seq, i % c.vocab_size);
	}
	assert_int_equal(kv_seq_reserve(kc, &seq), 0);
	/* the table really is out of order */
	bool ordered = true;
	for (i = 1; i < seq.n_blocks; i++)
		ordered &= seq.blocks[i] == seq.blocks[i - 1] + 1;
	if (seq.n_blocks > 1)
		assert_false(ordered);

	std::vector<float> q(c.dim), k(kvd), v(kvd), qr, kr;
	std::vector<float> out(c.dim), ref(c.dim), att((size_t)c.n_heads * (pos + 1));
	fill(q.data(), q.size());
	fill(k.data(), k.size());
	fill(v.data(), v.size());
	qr = q;
	kr = k;
	ref_rope(qr.data(), c.dim, hs, pos);
	ref_rope(kr.data(), kvd, hs, pos);

	float *pool = kv_cache_pool(kc);
	size_t bf = kv_cache_block_bytes(kc) / sizeof(float);
	const int *table = seq.blocks;
	int dim = c.dim, kv_mul = c.n_heads / c.n_kv_heads;
	size_t shmem = ((size_t)pos + 1 + 32 + (size_t)hs) * sizeof(float);

	emu_launch((unsigned)((dim / 2 + 63) / 64), 64, 0, [&] {
		kvref_kv_append(q.data(), k.data(), v.data(), pool, table, bf, layer, pos, bs,
				dim, kvd, hs);
	});
	/* q rotated in place; k rotated and v as is in the position's slot */
	assert_close(q.data(), qr.data(), q.size(), 1e-5f);
	assert_close(kv_seq_key(kc, &seq, layer, pos), kr.data(), kr.size(), 1e-5f);
	assert_close(kv_seq_value(kc, &seq, layer, pos), v.data(), v.size(), 0.0f);

	emu_launch((unsigned)c.n_heads, 128, shmem, [&] {
		kvref_kv_paged_attention(out.data(), q.data(), pool, table, bf, layer, pos, bs,
					 kvd, hs, kv_mul);
	});
	attention_paged(&c, kc, &seq, layer, pos, qr.data(), att.data(), ref.data());
	assert_close(out.data(), ref.data(), ref.size(), 2e-5f);

	kv_seq_release(kc, &seq);
	kv_cache_free(kc);
}

static void kv_append_and_paged_attention__one_block__equal_cpu(void **state)
{
	(void)state;
	append_and_attend(2, 0);
}

static void kv_append_and_paged_attention__shuffled_blocks_layer_1__equal_cpu(void **state)
{
	(void)state;
	append_and_attend(13, 1);
}

/* 251 positions over 128 threads: each thread scores several */
static void kv_append_and_paged_attention__more_positions_than_threads__equal_cpu(void **state)
{
	(void)state;
	append_and_attend(250, 1);
}

static void rmsnorm__uneven_size_and_in_place__equal_reference(void **state)
{
	int n = 288;
	std::vector<float> x(n), w(n), o(n), ref(n);
	double ss = 0;

	(void)state;
	fill(x.data(), n);
	fill(w.data(), n);
	for (int j = 0; j < n; j++)
		ss += (double)x[j] * x[j];
	float scale = (float)(1.0 / sqrt(ss / n + 1e-5));
	for (int j = 0; j < n; j++)
		ref[j] = w[j] * (scale * x[j]);
	emu_launch(1, 256, 0, [&] { kvref_rmsnorm(o.data(), x.data(), w.data(), n); });
	assert_close(o.data(), ref.data(), n, 1e-5f);
	/* o == x, as the final norm runs */
	emu_launch(1, 256, 0, [&] { kvref_rmsnorm(x.data(), x.data(), w.data(), n); });
	assert_close(x.data(), ref.data(), n, 1e-5f);
}

static void elementwise__swiglu_residual_embed__equal_reference(void **state)
{
	int n = 300, dim = 40;
	std::vector<float> hb(n), hb2(n), ref(n), x(n), y(n), xr(n), table(8 * dim), e(dim);

	(void)state;
	fill(hb.data(), n);
	fill(hb2.data(), n);
	fill(x.data(), n);
	fill(y.data(), n);
	fill(table.data(), table.size());
	for (int i = 0; i < n; i++) {
		ref[i] = hb[i] / (1.0f + expf(-hb[i])) * hb2[i];
		xr[i] = x[i] + y[i];
	}
	/* grids cover n with a ragged last block */
	emu_launch((unsigned)((n + 127) / 128), 128, 0, [&] {
		kvref_swiglu(hb.data(), hb2.data(), n);
		kvref_residual(x.data(), y.data(), n);
	});
	assert_close(hb.data(), ref.data(), n, 1e-6f);
	assert_close(x.data(), xr.data(), n, 0.0f);
	emu_launch(1, 64, 0, [&] { kvref_embed(e.data(), table.data(), 5, dim); });
	assert_close(e.data(), table.data() + 5 * dim, dim, 0.0f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kv_append_and_paged_attention__one_block__equal_cpu),
		cmocka_unit_test(kv_append_and_paged_attention__shuffled_blocks_layer_1__equal_cpu),
		cmocka_unit_test(kv_append_and_paged_attention__more_positions_than_threads__equal_cpu),
		cmocka_unit_test(rmsnorm__uneven_size_and_in_place__equal_reference),
		cmocka_unit_test(elementwise__swiglu_residual_embed__equal_reference),
	};

	return cmocka_run_group_tests_name("kvref_kernels", tests, NULL, NULL);
}
