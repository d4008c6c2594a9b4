/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Just enough of the CUDA execution model to run cuda/kvref_kernels.cuh on
 * the host, for tests on machines without a GPU.
 *
 * A launch runs the grid's blocks one after another; the threads of a block
 * are coroutines on the launching OS thread, each with its own stack
 * (started with makecontext/setcontext, switched with GCC's
 * __builtin_setjmp/__builtin_longjmp, which save no signal mask and so make
 * no system call).  __syncthreads() parks the calling thread until every thread of
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
#include <set>
#include <ucontext.h>
#include <vector>

struct emu_dim {
	unsigned int x, y, z;
};

inline thread_local emu_dim threadIdx, blockIdx, blockDim, gridDim;

struct emu_thread {
	ucontext_t ctx;			/* its start */
	void *jb[5];			/* where it parked */
	bool started, done;
	int waiting;			/* 0 runnable, 1 block barrier, 2 warp barrier */
};

struct emu_block {
	std::vector<emu_thread> t;
	std::set<unsigned int> runnable;
	void *sched[5];
	unsigned int cur;
	unsigned int arrived;			/* at the block barrier */
	std::vector<unsigned int> warp_arrived;
	std::vector<float> lanes;		/* 32 per warp */
	std::vector<float> dyn;			/* dynamic shared memory */
	const std::function<void()> *body;
};

inline thread_local emu_block *emu_cur;

/* Coroutine stacks, kept for the next launch on this OS thread. */
#define EMU_STACK (32 * 1024)
inline thread_local std::vector<std::vector<char>> emu_stacks;

#define __global__
#define __device__
#define __shared__ static thread_local
#define KVREF_DYN_SHARED(type, name) type *name = (type *)emu_cur->dyn.data()

/* __builtin_longjmp must not be called from the function that did the
 * matching __builtin_setjmp */
__attribute__((noinline, noreturn)) inline void emu_jump(void **jb)
{
	__builtin_longjmp(jb, 1);
}

/* Back to the scheduler; returns when this thread may run again. */
__attribute__((noinline)) inline void emu_park(int why)
{
	emu_block *b = emu_cur;
	emu_thread *me = &b->t[b->cur];

	me->waiting = why;
	b->runnable.erase(b->cur);
	if (__builtin_setjmp(me->jb) == 0)
		emu_jump(b->sched);
}

inline void emu_wake(emu_block *b, unsigned int i)
{
	b->t[i].waiting = 0;
	b->runnable.insert(i);
}

inline void __syncthreads()
{
	emu_block *b = emu_cur;

	if (++b->arrived == b->t.size()) {
		b->arrived = 0;
		for (unsigned int i = 0; i < b->t.size(); i++)
			if (b->t[i].waiting == 1)
				emu_wake(b, i);
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
				emu_wake(b, i);
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
	b->runnable.erase(b->cur);
	emu_jump(b->sched);
}

/* Run thread i until it parks or ends: nothing is used after the
 * __builtin_setjmp receiver, so nothing can be clobbered. */
__attribute__((noinline)) inline void emu_resume(emu_block *b, unsigned int i)
{
	if (__builtin_setjmp(b->sched) == 0) {
		if (b->t[i].started)
			emu_jump(b->t[i].jb);
		b->t[i].started = true;
		setcontext(&b->t[i].ctx);
	}
}

/* kernel<<<grid, block, shmem>>>(...) is emu_launch(grid, block, shmem, [&] { kernel(...); }) */
inline void emu_launch(unsigned int grid, unsigned int block, size_t shmem,
		       const std::function<void()> &body)
{
	emu_block b;
	emu_block *outer = emu_cur;
	unsigned int nw = (block + 31) / 32, g, i;
	ucontext_t start;

	b.t.resize(block);
	while (emu_stacks.size() < block)
		emu_stacks.emplace_back(EMU_STACK);
	b.warp_arrived.assign(nw, 0);
	b.lanes.assign(32 * nw, 0.0f);
	b.dyn.assign(shmem / sizeof(float) + 1, 0.0f);
	b.body = &body;
	blockDim = { block, 1, 1 };
	gridDim = { grid, 1, 1 };
	emu_cur = &b;
	getcontext(&start);
	for (g = 0; g < grid; g++) {
		blockIdx = { g, 0, 0 };
		b.arrived = 0;
		for (i = 0; i < block; i++) {
			emu_thread &t = b.t[i];

			t.started = t.done = false;
			t.waiting = 0;
			t.ctx = start;
			t.ctx.uc_stack.ss_sp = emu_stacks[i].data();
			t.ctx.uc_stack.ss_size = EMU_STACK;
			t.ctx.uc_link = nullptr;
			makecontext(&t.ctx, emu_entry, 0);
			b.runnable.insert(i);
		}
		/* always the lowest runnable thread: a warp released from a
		 * barrier runs ahead of the warps still behind it */
		while (!b.runnable.empty()) {
			i = *b.runnable.begin();
			b.cur = i;
			threadIdx = { i, 0, 0 };
			emu_resume(&b, i);
		}
		for (i = 0; i < block; i++) {
			if (!b.t[i].done) {
				fprintf(stderr, "cuda_emu: block %u deadlocked (a barrier not every thread reaches)\n", g);
				abort();
			}
		}
	}
	emu_cur = outer;
}

#endif
