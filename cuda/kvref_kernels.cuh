/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernels of kvref's CUDA backend, in a header of their own so that the
 * same source is compiled by nvcc for the GPU (cuda/kvref_cuda.cu) and by a
 * host C++ compiler under tests/helpers/cuda_emu.h, which runs each thread
 * block as real threads with real barriers and warp shuffles, so that the
 * unit tests check this code against the CPU model without a GPU.
 *
 * Only what both compilers accept: threadIdx/blockIdx/blockDim, static
 * __shared__ arrays, KVREF_DYN_SHARED for the dynamic shared memory,
 * __syncthreads, __shfl_down_sync on full warps, and the float math of
 * <cmath>.
 */
#ifndef KVREF_KERNELS_CUH
#define KVREF_KERNELS_CUH

#include <cmath>
#include <cstddef>

#ifndef KVREF_DYN_SHARED
#define KVREF_DYN_SHARED(type, name) extern __shared__ type name[]
#endif

#define RMS_EPS 1e-5f		/* as model.c */
#define ROPE_THETA 10000.0f

/* Sum (or max) over the thread block; blockDim.x a multiple of 32, sh 32 floats. */
__device__ static float block_reduce(float v, float *sh, bool is_max)
{
	int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = blockDim.x >> 5, o;

	for (o = 16; o; o >>= 1) {
		float u = __shfl_down_sync(0xffffffffu, v, o);

		v = is_max ? fmaxf(v, u) : v + u;
	}
	if (!lane)
		sh[wid] = v;
	__syncthreads();
	if (!wid) {
		v = lane < nw ? sh[lane] : (is_max ? -INFINITY : 0.0f);
		for (o = 16; o; o >>= 1) {
			float u = __shfl_down_sync(0xffffffffu, v, o);

			v = is_max ? fmaxf(v, u) : v + u;
		}
		if (!lane)
			sh[0] = v;
	}
	__syncthreads();
	v = sh[0];
	__syncthreads();	/* sh may be reused at once */
	return v;
}

extern "C" __global__ void kvref_embed(float *x, const float *table, int token, int dim)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < dim)
		x[i] = table[(size_t)token * dim + i];
}

/* o = weight * x / rms(x); one thread block; o may be x */
extern "C" __global__ void kvref_rmsnorm(float *o, const float *x, const float *weight, int n)
{
	__shared__ float sh[32];
	float ss = 0.0f;
	int j;

	for (j = threadIdx.x; j < n; j += blockDim.x)
		ss += x[j] * x[j];
	ss = block_reduce(ss, sh, false);
	ss = 1.0f / sqrtf(ss / (float)n + RMS_EPS);
	for (j = threadIdx.x; j < n; j += blockDim.x)
		o[j] = weight[j] * (ss * x[j]);
}

/*
 * RoPE on q (dim floats) and k (kvd floats), then k and v into position
 * pos's slot of its pool block.  Block layout as kvcache.h: floats
 * [layer][K, V][slot][kvd].  One thread per pair of q.
 */
extern "C" __global__ void kvref_kv_append(float *q, const float *k, const float *v,
					   float *pool, const int *table, size_t block_floats,
					   int layer, int pos, int bs, int dim, int kvd, int hs)
{
	int p = blockIdx.x * blockDim.x + threadIdx.x, e = 2 * p;
	float freq, fcr, fci, a, b;

	if (e >= dim)
		return;
	freq = 1.0f / powf(ROPE_THETA, (float)(e % hs) / (float)hs);
	sincosf((float)pos * freq, &fci, &fcr);
	a = q[e];
	b = q[e + 1];
	q[e] = a * fcr - b * fci;
	q[e + 1] = a * fci + b * fcr;
	if (e < kvd) {
		float *kd = pool + (size_t)table[pos / bs] * block_floats +
			    (size_t)layer * 2 * bs * kvd + (size_t)(pos % bs) * kvd;
		float *vd = kd + (size_t)bs * kvd;

		a = k[e];
		b = k[e + 1];
		kd[e] = a * fcr - b * fci;
		kd[e + 1] = a * fci + b * fcr;
		vd[e] = v[e];
		vd[e + 1] = v[e + 1];
	}
}

/*
 * Decode attention of query head blockIdx.x at position pos over positions
 * 0..pos, reading keys and values through the block table.  Dynamic shared
 * memory: (pos + 1) scores, 32 for reductions, hs for the query.
 */
extern "C" __global__ void kvref_kv_paged_attention(float *out, const float *q,
						    const float *pool, const int *table,
						    size_t block_floats, int layer, int pos,
						    int bs, int kvd, int hs, int kv_mul)
{
	KVREF_DYN_SHARED(float, sh);
	int h = blockIdx.x, n = pos + 1, t, i, j;
	float *att = sh, *red = sh + n, *qs = red + 32;
	size_t koff = (size_t)layer * 2 * bs * kvd + (size_t)(h / kv_mul) * hs;
	size_t voff = koff + (size_t)bs * kvd;
	float mx = -INFINITY, sum = 0.0f, scale = sqrtf((float)hs);

	for (i = threadIdx.x; i < hs; i += blockDim.x)
		qs[i] = q[(size_t)h * hs + i];
	__syncthreads();
	for (t = threadIdx.x; t < n; t += blockDim.x) {
		const float *kp = pool + (size_t)table[t / bs] * block_floats + koff +
				  (size_t)(t % bs) * kvd;
		float s = 0.0f;

		for (j = 0; j < hs; j++)
			s += qs[j] * kp[j];
		att[t] = s / scale;
		mx = fmaxf(mx, att[t]);
	}
	mx = block_reduce(mx, red, true);
	for (t = threadIdx.x; t < n; t += blockDim.x) {
		att[t] = expf(att[t] - mx);
		sum += att[t];
	}
	sum = block_reduce(sum, red, false);	/* its barriers publish att[] too */
	for (i = threadIdx.x; i < hs; i += blockDim.x) {
		float acc = 0.0f;

		for (t = 0; t < n; t++)
			acc += att[t] * pool[(size_t)table[t / bs] * block_floats + voff +
					     (size_t)(t % bs) * kvd + i];
		out[(size_t)h * hs + i] = acc / sum;
	}
}

extern "C" __global__ void kvref_residual(float *x, const float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] += y[i];
}

/* hb = silu(hb) * hb2 */
extern "C" __global__ void kvref_swiglu(float *hb, const float *hb2, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n) {
		float val = hb[i];

		hb[i] = val * (1.0f / (1.0f + expf(-val))) * hb2[i];
	}
}

#endif
