/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Just enough of the CUDA execution model to run cuda/kvref_kernels.cuh on
 * the host, for tests on machines without a GPU.
 *
 * A launch runs the grid's blocks one after another; the threads of a block
 * are coroutines (ucontext) on the launching OS thread, each with its own
 * stack.  __syncthreads() parks the calling thread until every thread of
 * the block has arrived; __shfl_down_sync() parks it until all 32 lanes of
 * its warp have posted their value, reads lane + delta, and parks again
 * until all have read.  So a kernel that misses a barrier, or reads what
 * another thread has not written yet, gives a wrong result here as it
 * would on a GPU.  The order is one a GPU may take and the one that shows
 * most races: the lowest-numbered runnable thread always runs next, so a
 * warp released from a barrier runs ahead and reuses shared memory before
 * the later warps have read it.  Static __shared__ arrays become thread_local
 * function statics: shared by the threads of one block, and launches on
 * different OS threads (kvref's workers) do not see each other's.  One
 * dimension only (x); blockDim.x a multiple of 32 when warps shuffle.
 */
#ifndef CACHESCOPE_CUDA_EMU_H
#define CACHESCOPE_CUDA_EMU_H

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <ucontext.h>
#include <vector>

struct emu_dim {
	unsigned int x, y, z;
};

inline thread_local emu_dim threadIdx, blockIdx, blockDim, gridDim;

struct emu_thread {
	ucontext_t ctx;
	std::vector<char> stack;
	bool done;
	int waiting;		/* 0 runnable, 1 block barrier, 2 warp barrier */
};

struct emu_block {
	std::vector<emu_thread> t;
	ucontext_t sched;
	unsigned int cur;
	unsigned int arrived;			/* at the block barrier */
	std::vector<unsigned int> warp_arrived;
	std::vector<float> lanes;		/* 32 per warp */
	std::vector<float> dyn;			/* dynamic shared memory */
	const std::function<void()> *body;
};

inline thread_local emu_block *emu_cur;

#define __global__
#define __device__
#define __shared__ static thread_local
#define KVREF_DYN_SHARED(type, name) type *name = (type *)emu_cur->dyn.data()

/* Back to the scheduler; returns when this thread may run again. */
inline void emu_park(int why)
{
	emu_block *b = emu_cur;
	emu_thread *me = &b->t[b->cur];

	me->waiting = why;
	swapcontext(&me->ctx, &b->sched);
}

inline void __syncthreads()
{
	emu_block *b = emu_cur;

	if (++b->arrived == b->t.size()) {
		b->arrived = 0;
		for (auto &t : b->t)
			if (t.waiting == 1)
				t.waiting = 0;
		return;
	}
	emu_park(1);
}

inline void emu_warp_barrier()
{
	emu_block *b = emu_cur;
	unsigned int w = threadIdx.x / 32, first = 32 * w, n = b->t.size() - first;

	if (n > 32)
		n = 32;
	if (++b->warp_arrived[w] == n) {
		b->warp_arrived[w] = 0;
		for (unsigned int i = first; i < first + n; i++)
			if (b->t[i].waiting == 2)
				b->t[i].waiting = 0;
		return;
	}
	emu_park(2);
}

/* Every lane of the warp must call it, as CUDA requires of a full mask. */
inline float __shfl_down_sync(unsigned int mask, float v, int delta)
{
	unsigned int lane = threadIdx.x % 32;
	float *x = emu_cur->lanes.data() + 32 * (threadIdx.x / 32), r;

	(void)mask;
	x[lane] = v;
	emu_warp_barrier();
	r = lane + delta < 32 ? x[lane + delta] : v;
	emu_warp_barrier();
	return r;
}

inline void emu_entry()
{
	emu_block *b = emu_cur;

	(*b->body)();
	b->t[b->cur].done = true;
	swapcontext(&b->t[b->cur].ctx, &b->sched);
}

/* swapcontext() is declared returns_twice like setjmp(), but it restores
 * every register when it comes back, so no local is clobbered */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wclobbered"

/* kernel<<<grid, block, shmem>>>(...) is emu_launch(grid, block, shmem, [&] { kernel(...); }) */
inline void emu_launch(unsigned int grid, unsigned int block, size_t shmem,
		       const std::function<void()> &body)
{
	emu_block b;
	emu_block *outer = emu_cur;
	unsigned int nw = (block + 31) / 32, g, i, left;

	b.t.resize(block);
	b.warp_arrived.assign(nw, 0);
	b.lanes.assign(32 * nw, 0.0f);
	b.dyn.assign(shmem / sizeof(float) + 1, 0.0f);
	b.body = &body;
	blockDim = { block, 1, 1 };
	gridDim = { grid, 1, 1 };
	emu_cur = &b;
	for (g = 0; g < grid; g++) {
		blockIdx = { g, 0, 0 };
		b.arrived = 0;
		for (i = 0; i < block; i++) {
			emu_thread &t = b.t[i];

			t.stack.resize(64 * 1024);
			t.done = false;
			t.waiting = 0;
			getcontext(&t.ctx);
			t.ctx.uc_stack.ss_sp = t.stack.data();
			t.ctx.uc_stack.ss_size = t.stack.size();
			t.ctx.uc_link = nullptr;
			makecontext(&t.ctx, emu_entry, 0);
		}
		/* always the lowest runnable thread: a warp released from a
		 * barrier runs ahead of the warps still behind it */
		for (left = block; left;) {
			for (i = 0; i < block && (b.t[i].done || b.t[i].waiting); i++)
				;
			if (i == block) {
				fprintf(stderr, "cuda_emu: block %u deadlocked (a barrier not every thread reaches)\n", g);
				abort();
			}
			b.cur = i;
			threadIdx = { i, 0, 0 };
			swapcontext(&b.sched, &b.t[i].ctx);
			if (b.t[i].done)
				left--;
		}
	}
	emu_cur = outer;
}

#pragma GCC diagnostic pop

#endif
