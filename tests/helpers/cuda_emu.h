/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Just enough of the CUDA execution model to run cuda/kvref_kernels.cuh on
 * the host, for tests on machines without a GPU: a launch runs the grid's
 * blocks one after another, each block as blockDim.x real threads; they
 * meet at __syncthreads() on a std::barrier, and __shfl_down_sync() trades
 * values through a per-warp array between two warp barriers, so a kernel
 * that misses a barrier or reads a lane it should not shows up here as a
 * wrong result, as it would on a GPU.  Static __shared__ arrays become
 * function statics: shared by the threads of the block running, and blocks
 * never run at the same time.  One dimension only (x).
 */
#ifndef CACHESCOPE_CUDA_EMU_H
#define CACHESCOPE_CUDA_EMU_H

#include <barrier>
#include <cstddef>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

struct emu_dim {
	unsigned int x, y, z;
};

inline thread_local emu_dim threadIdx, blockIdx;
inline emu_dim blockDim, gridDim;

struct emu_block {
	std::unique_ptr<std::barrier<>> all;
	std::vector<std::unique_ptr<std::barrier<>>> warp;
	std::vector<float> lanes;	/* 32 per warp */
	std::vector<float> dyn;		/* dynamic shared memory */
};

inline emu_block *emu_cur;

#define __global__
#define __device__
#define __shared__ static
#define KVREF_DYN_SHARED(type, name) type *name = (type *)emu_cur->dyn.data()

inline void __syncthreads()
{
	emu_cur->all->arrive_and_wait();
}

/* Every lane of the warp must call it, as CUDA requires of a full mask. */
inline float __shfl_down_sync(unsigned int mask, float v, int delta)
{
	unsigned int w = threadIdx.x / 32, lane = threadIdx.x % 32;
	float *x = emu_cur->lanes.data() + 32 * w;
	float r;

	(void)mask;
	x[lane] = v;
	emu_cur->warp[w]->arrive_and_wait();
	r = lane + delta < 32 ? x[lane + delta] : v;
	emu_cur->warp[w]->arrive_and_wait();
	return r;
}

/* kernel<<<grid, block, shmem>>>(...) is emu_launch(grid, block, shmem, [&] { kernel(...); }) */
inline void emu_launch(unsigned int grid, unsigned int block, size_t shmem,
		       const std::function<void()> &body)
{
	emu_block b;
	unsigned int nw = (block + 31) / 32, g, t;

	b.all = std::make_unique<std::barrier<>>(block);
	for (unsigned int w = 0; w < nw; w++)
		b.warp.push_back(std::make_unique<std::barrier<>>(
			block - 32 * w < 32 ? block - 32 * w : 32));
	b.lanes.assign(32 * nw, 0.0f);
	b.dyn.assign(shmem / sizeof(float) + 1, 0.0f);
	blockDim = { block, 1, 1 };
	gridDim = { grid, 1, 1 };
	emu_cur = &b;
	for (g = 0; g < grid; g++) {
		std::vector<std::thread> th;

		for (t = 0; t < block; t++)
			th.emplace_back([&body, g, t] {
				blockIdx = { g, 0, 0 };
				threadIdx = { t, 0, 0 };
				body();
			});
		for (auto &x : th)
			x.join();
	}
	emu_cur = nullptr;
}

#endif
