/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A paged KV cache, built the way vLLM-style inference servers build it.
 *
 * The cache is a pool of fixed-size blocks; a block holds the keys and
 * values of block_size consecutive token positions for every layer.  A
 * sequence owns a block table: logical block i of the sequence lives in pool
 * block blocks[i], so a sequence's K/V are scattered over the pool and
 * attention reads them through the table.
 *
 * The one idea: a full block is named by the hash of its chain, that is
 * hash(parent block's hash, the block's token ids), so equal prompt prefixes
 * give equal names.  A later sequence whose prompt starts the same way
 * attaches the named blocks (refcount + 1) instead of recomputing them.  A
 * block nobody references stays cached in an LRU list until its pool slot is
 * needed; then it is evicted, and with an offload tier its K/V go to a swap
 * file with pwrite(), from where a later prefix match reads them back with
 * pread() into a free block.
 *
 * Layout of a block, floats: [layer][0 = K, 1 = V][slot][kv_dim], so a block
 * is one contiguous run (one pwrite per swap-out) and one layer's keys of a
 * block are a plain [block_size][kv_dim] array.
 *
 * Threads: one mutex guards the bookkeeping (free list, LRU, hash table,
 * swap slots, counters); swap I/O is done under it.  A struct kv_seq belongs
 * to one thread at a time, and so do the K/V rows of the block that sequence
 * is filling.  A full, registered block is never written again, so readers
 * that hold a reference need no lock.
 */
#ifndef KVREF_KVCACHE_H
#define KVREF_KVCACHE_H

#include <stddef.h>
#include <stdint.h>

#define KV_HASH_ROOT 0x6b7672656630ull	/* parent hash of a sequence's first block */

/*
 * Hooks, for probes.  Each is optional and is called with the cache lock
 * held, so it must not call back into the cache.  block is a pool block id
 * (-1 where there is none), hash a chain hash (0 for a block not yet full).
 */
typedef void kv_hook_fn(void *ctx, int block, uint64_t hash, int64_t arg);

struct kv_cache_hooks {
	void *ctx;
	kv_hook_fn *alloc;	/* block handed to a sequence; arg 0 */
	kv_hook_fn *free;	/* block back on the free list; arg 0 */
	kv_hook_fn *evict;	/* cached block dropped from the pool; arg 1 if swapped out */
	kv_hook_fn *swap_out;	/* arg: swap slot written */
	kv_hook_fn *swap_in;	/* arg: evictions since its swap-out */
	kv_hook_fn *prefix_hit;	/* arg: refcount after the hit */
	kv_hook_fn *prefix_miss;	/* block -1; arg: index of the block in the prompt */
	kv_hook_fn *release;	/* last reference dropped (block cached or freed); arg 0 */
};

/*
 * Where the pool lives.  Without ops (the default) the pool is host memory
 * and swap I/O reads and writes the blocks in place.  With ops (the CUDA
 * backend) the pool is memory the host cannot dereference: kv_cache_key()
 * and friends return addresses in it for kernels to use, and swap I/O goes
 * through a host staging buffer of one block: copy_out (pool to staging)
 * before the pwrite of a swap-out, copy_in (staging to pool) after the pread
 * of a swap-in.  Both copies are complete when they return; they run with
 * the cache lock held.  Each returns 0 or a negative errno.
 */
struct kv_storage_ops {
	int (*pool_alloc)(void *ctx, size_t bytes, void **pool);	/* zeroed */
	void (*pool_free)(void *ctx, void *pool);
	int (*stage_alloc)(void *ctx, size_t bytes, void **buf);
	void (*stage_free)(void *ctx, void *buf);
	int (*copy_out)(void *ctx, void *host, const void *block, size_t bytes);
	int (*copy_in)(void *ctx, void *block, const void *host, size_t bytes);
};

struct kv_cache_params {
	int n_layers;
	int kv_dim;		/* n_kv_heads * head_size */
	int block_size;		/* tokens per block */
	int n_blocks;		/* pool size */
	/* the offload file: created as swap_name (NULL: "kvref-swap.bin"),
	 * mode 0600, O_EXCL|O_NOFOLLOW, in a fresh 0700 directory (mkdtemp)
	 * inside swap_dir; file and directory are removed at once and the
	 * file lives on as an open fd.  NULL swap_dir: no swap tier */
	const char *swap_dir;
	const char *swap_name;
	int swap_slots;		/* blocks the swap file holds; 0: 4 * n_blocks */
	/* a swap-in is "recent" when at most this many evictions happened
	 * since its swap-out; 0: n_blocks */
	uint64_t recent_evictions;
	struct kv_cache_hooks hooks;
	const struct kv_storage_ops *storage;	/* NULL: host memory */
	void *storage_ctx;
};

/*
 * Counters since kv_cache_new.  allocated - freed - evicted is the number of
 * blocks holding data (in use or cached).  prefix_hits counts blocks reused
 * by kv_seq_match_prefix, whether found in the pool or swapped back in;
 * prefix_misses counts full prompt blocks it did not find.
 */
struct kv_cache_stats {
	uint64_t allocated, freed, evicted;
	uint64_t swap_outs, swap_ins, swap_ins_recent;
	uint64_t swap_drops;	/* swapped-out blocks lost when their slot was reused */
	uint64_t swap_errors;	/* failed pwrite/pread; the block is then dropped */
	uint64_t prefix_hits, prefix_misses;
	uint64_t bytes_swapped_out, bytes_swapped_in;
	/* gauges */
	int blocks_free, blocks_cached, blocks_in_use, swap_slots_used;
};

/*
 * One sequence.  blocks[i] is the pool block of positions
 * [i * block_size, (i + 1) * block_size); hashes[i] is the chain hash of
 * logical block i once it is full.  len counts the positions whose K/V are
 * in the cache; tokens[0..len) their token ids.
 */
struct kv_seq {
	int *blocks;
	uint64_t *hashes;
	int *tokens;
	int n_blocks;
	int len;
	int cap_blocks, cap_tokens;
};

struct kv_cache;

void kv_cache_params_default(struct kv_cache_params *p, int n_layers, int kv_dim);

/* Creates the pool (and the swap file, if any).  Fails with -EINVAL on bad
 * parameters (a swap_name with a '/' too), -ENOMEM, or the errno of
 * mkdtemp() or openat(). */
int kv_cache_new(struct kv_cache **out, const struct kv_cache_params *p);
void kv_cache_free(struct kv_cache *kc);
/* The swap file's fd (it has no path any more), or -1 without one. */
int kv_cache_swap_fd(const struct kv_cache *kc);

/* Keys (values) of one layer of one pool block: [block_size][kv_dim]. */
float *kv_cache_key(const struct kv_cache *kc, int block, int layer);
float *kv_cache_value(const struct kv_cache *kc, int block, int layer);
int kv_cache_block_size(const struct kv_cache *kc);
int kv_cache_kv_dim(const struct kv_cache *kc);
int kv_cache_n_layers(const struct kv_cache *kc);
size_t kv_cache_block_bytes(const struct kv_cache *kc);
/* Base of the pool: block b starts kv_cache_block_bytes() * b bytes in. */
float *kv_cache_pool(const struct kv_cache *kc);

/* Refcount of a pool block, or -EINVAL for a bad id. */
int kv_cache_block_refcnt(struct kv_cache *kc, int block);
void kv_cache_get_stats(struct kv_cache *kc, struct kv_cache_stats *st);

/* Chain hash of a block of n tokens whose parent block has hash parent
 * (KV_HASH_ROOT for the first block).  Never 0. */
uint64_t kv_block_hash(uint64_t parent, const int *tokens, int n);

void kv_seq_init(struct kv_seq *seq);
/* Drops the sequence's block references and frees its tables; the sequence
 * is empty and usable again afterwards. */
void kv_seq_release(struct kv_cache *kc, struct kv_seq *seq);

/*
 * On an empty sequence: finds the longest run of whole leading blocks of
 * tokens[0..n) that the cache holds (in the pool or in the swap file),
 * attaches them and sets seq->len.  Returns the number of tokens attached
 * (a multiple of block_size), -EINVAL if seq is not empty, -ENOMEM.  A
 * caller that needs the logits of the last prompt token passes n - 1.
 */
int kv_seq_match_prefix(struct kv_cache *kc, struct kv_seq *seq,
			const int *tokens, int n);

/* Makes sure position seq->len has a block (allocating, and evicting an
 * unreferenced cached block if the pool is full).  Fails with -ENOMEM when
 * every block is in use. */
int kv_seq_reserve(struct kv_cache *kc, struct kv_seq *seq);

/* Key (value) row of a position below seq->len, or of the reserved position
 * seq->len: kv_dim floats. */
float *kv_seq_key(const struct kv_cache *kc, const struct kv_seq *seq,
		  int layer, int pos);
float *kv_seq_value(const struct kv_cache *kc, const struct kv_seq *seq,
		    int layer, int pos);

/* After the K/V of every layer of the reserved position were written:
 * appends token, and registers the block for prefix caching if it is now
 * full.  Requires a successful kv_seq_reserve before. */
void kv_seq_commit(struct kv_cache *kc, struct kv_seq *seq, int token);

#endif
