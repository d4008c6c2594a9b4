/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The CUPTI subscriber of cachescope: an injection library
 * (libcachescope_cupti.so) that reads CUPTI activity records of a CUDA
 * process, counts them, folds the records of each CUPTI buffer into bins
 * of a millisecond by class (cuda/batch.h) and hands the bins over in one
 * USDT probe of provider "cachescope_gpu" per buffer (cuda/probes.h), or
 * re-emits each record as a probe of its own, as the tracer attached asks.
 * While no tracer is attached to any of its probes (their semaphores), it
 * fires none and CUPTI collects no activity (the flush thread looks every
 * flush period): a process that loaded it and is not watched pays nothing
 * per kernel.
 *
 * Two ways in:
 *   CUDA_INJECTION64_PATH=/path/libcachescope_cupti.so  the CUDA driver
 *       loads the library during cuInit and calls InitializeInjection();
 *   linked directly: call cupti_sub_start() before the first CUDA call and
 *       cupti_sub_stop() when done (an atexit handler stops it otherwise).
 *
 * The record handler (cupti_sub_handle_record) is separate from the CUPTI
 * wiring so that it can be tested on records built by hand, without a GPU.
 *
 * Environment, read on the first use and by cupti_sub_reset():
 *   CACHESCOPE_KV_KERNELS     comma-separated kernel name patterns that mark
 *                             a KV-cache kernel: an entry with * ? or [ is
 *                             an fnmatch glob, matched against the raw
 *                             (mangled) name, its plain qualified name
 *                             ("vllm::reshape_and_cache_kernel") and its
 *                             last component; any other entry is a substring
 *                             of the raw name.  Set but empty: no kernel is
 *                             a KV kernel.  Default CUPTI_SUB_KV_DEFAULT.
 *                             The decision is made once per function
 *                             (name pointer, checked against a copy of
 *                             the name) and cached: 1024 functions, 2 MiB
 *                             of names of up to 16 KiB.
 *   CACHESCOPE_KV_KERNELS_FILE a file of more such patterns, one a line
 *                             ('#' starts a comment), taken after those of
 *                             CACHESCOPE_KV_KERNELS or the defaults; one that
 *                             cannot be read, or with a comma in a pattern,
 *                             is ignored and counted
 *   CACHESCOPE_KV_CACHE       0 turns that cache off (to measure it), 1 on
 *                             (default)
 *   CACHESCOPE_CUPTI_BUFFER_MB activity buffer size, 1..8 MiB (default 4)
 *   CACHESCOPE_CUPTI_FLUSH_MS  period of cuptiActivityFlushAll(0) and of
 *                             the look for tracers, 0..60000 ms (default
 *                             100); 0 = no flush thread, and every kind is
 *                             collected from the start
 *   CACHESCOPE_CUPTI           off: do not subscribe (CUPTI's one subscriber
 *                             slot stays free for torch.profiler or Nsight;
 *                             cupti_sub_start says -ECANCELED, and nothing);
 *                             on (default) records
 *   CACHESCOPE_CUPTI_LIB       the CUPTI library to use (a path: a pip
 *                             wheel's, say); default the libcupti.so.13 the
 *                             process has loaded, else the one on the
 *                             library path (cuda/cupti_api.h).  Without a
 *                             CUPTI of CUDA 13 or newer, cupti_sub_start
 *                             says which it found and what it needs in one
 *                             line, and the process runs unrecorded.
 * A value out of range or malformed is ignored (the default is used) and
 * counted in cupti_sub_stats.config_errors.
 */
#ifndef CACHESCOPE_CUPTI_SUB_H
#define CACHESCOPE_CUPTI_SUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cupti.h>

#if !defined(CUPTI_API_VERSION) || CUPTI_API_VERSION < 130000
#error "cachescope-cupti needs the CUPTI headers of CUDA 13.0 or newer (CUPTI_API_VERSION >= 130000): it reads CUpti_ActivityKernel10, CUpti_ActivityMemcpy6, CUpti_ActivityMemset4 and CUpti_ActivityMemory4 records"
#endif

#define CUPTI_SUB_API __attribute__((visibility("default")))

/* The record versions this library reads (CUDA 13.0 headers). */
typedef CUpti_ActivityKernel10 cupti_sub_kernel_rec;
typedef CUpti_ActivityMemcpy6 cupti_sub_memcpy_rec;
typedef CUpti_ActivityMemset4 cupti_sub_memset_rec;
typedef CUpti_ActivityMemory4 cupti_sub_memory_rec;
typedef CUpti_ActivityExternalCorrelation cupti_sub_extcorr_rec;

/* The KV-cache kernels of the engines in use, by the names in their public
 * source (docs/gpu.md has the table of where each came from):
 *   vLLM csrc/cache_kernels.cu: reshape_and_cache(_flash)_kernel,
 *     concat_and_cache_mla_kernel, copy_blocks(_mla)_kernel;
 *   vLLM csrc/attention/: paged_attention_v1/v2(_reduce)_kernel;
 *   FlashAttention 2, csrc/flash_attn/src/flash_fwd_kernel.h (its paged-KV
 *     path): flash_fwd_splitkv(_combine)_kernel;
 *   FlashAttention 3, hopper/flash_fwd_kernel_sm90.h: flash::FlashAttnFwdSm90,
 *     launched as cutlass::device_kernel<...>: a substring of the mangled name;
 *   FlashInfer: Batch{Decode,Prefill}WithPagedKVCacheKernel, AppendPagedKVCache;
 *   TensorRT-LLM decoderMaskedMultiheadAttention: masked_multihead_attention_kernel;
 *   kvref's CUDA backend: kvref_kv_*. */
#define CUPTI_SUB_KV_DEFAULT \
	"reshape_and_cache*,concat_and_cache_mla*,copy_blocks*,paged_attention*," \
	"flash_fwd_splitkv*,FlashAttnFwdSm90,*PagedKVCache*,masked_multihead_attention*," \
	"kvref_kv_*"
#define CUPTI_SUB_BUFFER_MB_DEFAULT 4
#define CUPTI_SUB_BUFFER_MB_MAX 8
#define CUPTI_SUB_FLUSH_MS_DEFAULT 100
#define CUPTI_SUB_FLUSH_MS_MAX 60000
#define CUPTI_SUB_MAX_PATTERNS 32
/* memcpy bytes are split by CUpti_ActivityMemcpyKind; larger kinds go to 0 */
#define CUPTI_SUB_MEMCPY_KINDS 16

/* cupti_sub_handle_record: a record of a kind this library does not read */
#define CUPTI_SUB_IGNORED 1

/* Counters since the last cupti_sub_reset; every field is 64 bits wide. */
struct cupti_sub_stats {
	uint64_t records;		/* all records handed to the handler */
	uint64_t ignored;		/* of kinds not read here */
	uint64_t kernels;		/* KERNEL and CONCURRENT_KERNEL */
	uint64_t kernel_ns;		/* sum of end - start */
	uint64_t kv_kernels;		/* kernels matching a KV pattern */
	uint64_t kv_kernel_ns;
	uint64_t unnamed_kernels;	/* name == NULL (never a KV kernel) */
	uint64_t memcpys;
	uint64_t memcpy_bytes;
	uint64_t memcpy_bytes_by_kind[CUPTI_SUB_MEMCPY_KINDS];
	uint64_t memsets;
	uint64_t memset_bytes;
	uint64_t memory_records;	/* MEMORY2, any operation */
	uint64_t mem_allocs;
	uint64_t mem_alloc_bytes;
	uint64_t mem_releases;
	uint64_t mem_release_bytes;
	int64_t mem_live_bytes;		/* allocated - released; negative when
					 * memory allocated before the start is
					 * released */
	uint64_t ext_corrs;		/* EXTERNAL_CORRELATION records */
	uint64_t buffers;		/* buffers walked */
	uint64_t buffer_bytes;		/* valid bytes in them */
	uint64_t buffer_errors;		/* walks ended by an error */
	uint64_t alloc_failures;	/* buffer requests not satisfied */
	uint64_t dropped;		/* cuptiActivityGetNumDroppedRecords, summed */
	uint64_t flushes;		/* periodic cuptiActivityFlushAll(0) calls */
	uint64_t enabled_kinds;		/* bit (1 << kind) per enabled kind */
	uint64_t config_errors;		/* environment values ignored */
	uint64_t monotonic_clock;	/* starts whose records are stamped on
					 * CLOCK_MONOTONIC (the timestamp callback
					 * taken): 1 while recording */
	/* the KV decision per function (CACHESCOPE_KV_CACHE) */
	uint64_t kv_cache_hits;
	uint64_t kv_cache_misses;	/* decided by the patterns, then cached */
	uint64_t kv_cache_uncached;	/* decided, but too long to keep */
	uint64_t exit_stop_skipped;	/* exits that found the lock held (by a
					 * start in another thread) past 500 ms:
					 * no forced flush */
	/* the batches */
	uint64_t batches;		/* handed over (bins in them: bins) */
	uint64_t bins;
	uint64_t batches_unheard;	/* of batches, made while nobody listened
					 * to the batch probe (not fired) */
	uint64_t rejected;		/* records with values no device gives
					 * (cupti_sub_handle_record): counted,
					 * not batched */
	uint64_t unbatched;		/* records handled with no memory for the
					 * thread's batch: counted in records only */
	/* activity collection, switched by the flush thread */
	uint64_t collect_on;		/* a tracer came: kinds enabled */
	uint64_t collect_off;		/* none left: kinds disabled */
	uint64_t collecting;		/* 1 while kinds are enabled */
	/* allocations remembered by address, so that a release's bin says
	 * how old its allocation was (CUPTI_SUB_LIVE_MAX of them) */
	uint64_t mem_untracked;		/* allocations not remembered: table full */
	uint64_t mem_unmatched;		/* releases of nothing remembered */
	/* blocks out of the device and back (cupti_sub_handle_copy) */
	uint64_t copy_callbacks;	/* 1 while the copy callbacks are on */
	uint64_t swap_outs;		/* device-to-host copies, by host buffer */
	uint64_t swap_ins;		/* host-to-device from such a buffer */
	uint64_t swap_ins_near;		/* of those, within a pool's worth */
	uint64_t swap_untracked;	/* copies out not remembered: table full */
};

/* live device allocations remembered per process (16 bytes each) */
#define CUPTI_SUB_LIVE_MAX 49152

struct cupti_sub_config {
	size_t buffer_bytes;
	unsigned int flush_ms;
	unsigned int n_patterns;
	/* owned by the library, valid until the next cupti_sub_reset */
	const char *patterns[CUPTI_SUB_MAX_PATTERNS];
	bool kv_cache;			/* the decision is cached per function */
};

/*
 * Attach to CUPTI: subscribe, register the buffer callbacks, enable
 * CONCURRENT_KERNEL (required) then MEMCPY, MEMSET, MEMORY2 and
 * EXTERNAL_CORRELATION (each optional), start the flush thread.  Returns 0
 * when recording (also when already recording), -EBUSY when another CUPTI
 * subscriber is active, -ENODEV when there is no CUDA driver or device or
 * CUPTI refuses otherwise.  On -EBUSY and -ENODEV it prints its one line to
 * stderr, once per process, and later calls return the same error.  The
 * first successful start registers an atexit handler that stops, unless
 * another thread holds the library's lock for 500 ms then (counted in
 * exit_stop_skipped): exit never waits longer for the library.
 */
CUPTI_SUB_API int cupti_sub_start(void);

/*
 * Stop the flush thread, force-flush CUPTI's buffers (their records are
 * handled), disable the kinds and unsubscribe.  Returns 0, also when not
 * recording; -EIO when the forced flush failed (the rest is still done).
 */
CUPTI_SUB_API int cupti_sub_stop(void);

/*
 * Handle one activity record: count it, fire its own probe if a tracer is
 * attached to that, and add it to the calling thread's batch if one is
 * attached to the batch probe.  Returns 0, or CUPTI_SUB_IGNORED for a kind
 * not read here (counted in ignored), or -EINVAL when rec is NULL.  Safe to
 * call from several threads: each has its own batch and counters (folded
 * into cupti_sub_get_stats's when its batch is handed over, and the
 * caller's at cupti_sub_get_stats).  A kernel's name must stay where it is,
 * unchanged, until the batch is handed over (CUPTI's names do).
 */
CUPTI_SUB_API int cupti_sub_handle_record(const CUpti_Activity *rec);

/*
 * Hand the calling thread's batch, and the copy batch
 * (cupti_sub_handle_copy), to the batch probe (when a tracer is attached
 * to it; counted in batches_unheard otherwise) and start another.
 * A full batch is handed over by itself.  Returns the number of bins.
 */
CUPTI_SUB_API int cupti_sub_flush_batch(void);

/*
 * A runtime copy of bytes from src to dst of cudaMemcpyKind kind, at its
 * entry (the library's CUPTI callback calls it; so may an emulation): a
 * device-to-host copy is a block out, remembered by its host buffer, and
 * a host-to-device copy of the same size from such a buffer a block back
 * in.  Binned into the copy batch the flush thread hands over; nothing
 * while no tracer listens to the batch probe.
 */
CUPTI_SUB_API void cupti_sub_handle_copy(void *dst, const void *src, size_t bytes, int kind);

/*
 * Walk a completed buffer with cuptiActivityGetNextRecord, handle each
 * record, and hand the batch over.  Returns the number of records handled,
 * or -EIO when the walk ended with an error other than
 * CUPTI_ERROR_MAX_LIMIT_REACHED (the records before it are handled),
 * -EINVAL when buf is NULL.
 */
CUPTI_SUB_API int cupti_sub_handle_buffer(uint8_t *buf, size_t valid);

/* True when name matches one of the KV-kernel patterns; false for NULL.
 * Safe to call from several threads, also during cupti_sub_reset. */
CUPTI_SUB_API bool cupti_sub_is_kv_kernel(const char *name);

/* Copy the counters, the calling thread's own first; each field is read
 * atomically. */
CUPTI_SUB_API void cupti_sub_get_stats(struct cupti_sub_stats *out);

/* Copy the configuration in use. */
CUPTI_SUB_API void cupti_sub_get_config(struct cupti_sub_config *out);

/*
 * Re-read the environment and zero the counters, dropping the calling
 * thread's open batch.  Returns the number of environment values ignored
 * (>= 0), or -EBUSY while recording.
 */
CUPTI_SUB_API int cupti_sub_reset(void);

/* Entry point called by the CUDA driver (CUDA_INJECTION64_PATH); returns 1. */
CUPTI_SUB_API int InitializeInjection(void);

#endif
