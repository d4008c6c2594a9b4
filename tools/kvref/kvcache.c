// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The paged KV cache: a block pool with a free list, an LRU list of cached
 * (unreferenced but still named) blocks, an open-addressing table from chain
 * hash to where that block's K/V are now, and a swap file of fixed slots.
 *
 * The one idea: every chain hash in the table names exactly one copy of the
 * data, either a pool block (entry.block) or a swap slot (entry.slot), never
 * both.  A swap-in moves the entry back to a pool block and frees the slot;
 * a swap-out moves it to a slot.  So the table never holds more than
 * n_blocks + swap_slots entries, and is sized for twice that.
 *
 * Policies:
 * - Allocation takes a never-named block from the free list first, and only
 *   then evicts the least recently released cached block.
 * - A sequence releases its blocks last block first, so that the tail of a
 *   prompt is evicted before its head: a chain whose head is gone cannot be
 *   matched any more.
 * - Swap slots form their own LRU, oldest swap-out first; when all are
 *   taken, the oldest swapped-out block is dropped for good (swap_drops).
 * - A swap-in is "recent" when at most recent_evictions evictions happened
 *   between its swap-out and its swap-in: the block would still have been in
 *   a pool larger by that many blocks (the kernel's refault distance).
 * - Two sequences may compute the same block at once; the first to fill it
 *   names it, the other keeps a private copy that goes to the free list.
 * - Hash collisions between different chains are not detected (64 bits).
 * - The swap file is never opened by a name someone else could have
 *   chosen: kvref may run as root in a world-writable /var/tmp, so it is
 *   made O_EXCL|O_NOFOLLOW in a fresh mkdtemp directory and unlinked at
 *   once.  Not O_TMPFILE: cachescoped names page-cache keys by the file's
 *   dentry, and an O_TMPFILE's is "#<inode>", where the thrash phase's
 *   truth expects kvref-swap*; an unlinked file still open keeps its name.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "kvcache.h"

enum { BLK_FREE, BLK_USED, BLK_CACHED };

struct kv_link {
	int prev, next;
};

struct kv_list {
	int head, tail, n;
};

struct kv_block {
	uint64_t hash;		/* chain hash while it names this block, else 0 */
	int refcnt;
	int state;
	int next_free;
};

struct kv_slot {
	uint64_t hash;		/* block held, 0 when the slot is free */
	uint64_t evicted_at;	/* kc->evictions at its swap-out */
	int next_free;
};

struct kv_entry {
	uint64_t hash;		/* 0: empty */
	int block;		/* pool block, or -1 */
	int slot;		/* swap slot, or -1 */
};

struct kv_cache {
	pthread_mutex_t lock;
	float *data;
	size_t block_floats;
	int n_layers, kv_dim, block_size, n_blocks;

	struct kv_block *blk;
	struct kv_link *blk_link;	/* links of the LRU of cached blocks */
	struct kv_list lru;		/* least recently released first */
	int free_head, n_free;

	struct kv_entry *tab;
	size_t tab_mask;

	int fd;				/* swap file, or -1 */
	int n_slots;
	struct kv_slot *slot;
	struct kv_link *slot_link;
	struct kv_list slot_lru;	/* oldest swap-out first */
	int slot_free;

	uint64_t evictions;
	uint64_t recent;
	struct kv_cache_hooks hooks;
	const struct kv_storage_ops *ops;	/* NULL: host pool */
	void *ops_ctx;
	void *stage;			/* one block of host memory, with ops */
	struct kv_cache_stats st;
};

#define HOOK(kc, name, b, h, a) \
	do { \
		if ((kc)->hooks.name) \
			(kc)->hooks.name((kc)->hooks.ctx, (b), (h), (a)); \
	} while (0)

/* ---- intrusive doubly-linked lists over index arrays ---- */

static void list_init(struct kv_list *l)
{
	l->head = l->tail = -1;
	l->n = 0;
}

static void list_append(struct kv_list *l, struct kv_link *ln, int i)
{
	ln[i].prev = l->tail;
	ln[i].next = -1;
	if (l->tail >= 0)
		ln[l->tail].next = i;
	else
		l->head = i;
	l->tail = i;
	l->n++;
}

static void list_remove(struct kv_list *l, struct kv_link *ln, int i)
{
	if (ln[i].prev >= 0)
		ln[ln[i].prev].next = ln[i].next;
	else
		l->head = ln[i].next;
	if (ln[i].next >= 0)
		ln[ln[i].next].prev = ln[i].prev;
	else
		l->tail = ln[i].prev;
	ln[i].prev = ln[i].next = -1;
	l->n--;
}

/* ---- hashing ---- */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

uint64_t kv_block_hash(uint64_t parent, const int *tokens, int n)
{
	uint64_t h = mix64(parent ^ 0x9e3779b97f4a7c15ull);
	int i;

	for (i = 0; i < n; i++)
		h = mix64(h ^ ((uint64_t)(uint32_t)tokens[i] + 0x9e3779b97f4a7c15ull));
	h = mix64(h ^ (uint64_t)n);
	return h ? h : 1;
}

/* ---- the hash table: linear probing, deletion by backward shift ---- */

static size_t tab_home(const struct kv_cache *kc, uint64_t hash)
{
	return (size_t)(hash ^ (hash >> 29)) & kc->tab_mask;
}

static struct kv_entry *tab_find(struct kv_cache *kc, uint64_t hash)
{
	size_t i = tab_home(kc, hash);

	while (kc->tab[i].hash) {
		if (kc->tab[i].hash == hash)
			return &kc->tab[i];
		i = (i + 1) & kc->tab_mask;
	}
	return NULL;
}

/* The table has room by construction (see the file-top comment). */
static struct kv_entry *tab_insert(struct kv_cache *kc, uint64_t hash)
{
	size_t i = tab_home(kc, hash);

	while (kc->tab[i].hash)
		i = (i + 1) & kc->tab_mask;
	kc->tab[i].hash = hash;
	kc->tab[i].block = -1;
	kc->tab[i].slot = -1;
	return &kc->tab[i];
}

static void tab_delete(struct kv_cache *kc, uint64_t hash)
{
	struct kv_entry *e = tab_find(kc, hash);
	size_t i, j, k;

	if (!e)
		return;
	i = (size_t)(e - kc->tab);
	j = i;
	for (;;) {
		j = (j + 1) & kc->tab_mask;
		if (!kc->tab[j].hash)
			break;
		k = tab_home(kc, kc->tab[j].hash);
		/* entry j stays if its home lies cyclically in (i, j] */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		kc->tab[i] = kc->tab[j];
		i = j;
	}
	kc->tab[i].hash = 0;
}

/* ---- swap file ---- */

/* pwrite or pread all of len bytes, through short transfers and EINTR. */
static int io_full(int fd, void *buf, size_t len, off_t off, bool out)
{
	char *p = buf;
	ssize_t n;

	while (len) {
		n = out ? pwrite(fd, p, len, off) : pread(fd, p, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

static float *block_data(const struct kv_cache *kc, int b)
{
	return kc->data + (size_t)b * kc->block_floats;
}

static off_t slot_offset(const struct kv_cache *kc, int s)
{
	return (off_t)s * (off_t)(kc->block_floats * sizeof(float));
}

static void slot_put(struct kv_cache *kc, int s)
{
	kc->slot[s].hash = 0;
	kc->slot[s].next_free = kc->slot_free;
	kc->slot_free = s;
}

/* A free slot, or the oldest one after dropping what it holds; -1 if every
 * slot is pinned by a swap-in in progress. */
static int slot_get(struct kv_cache *kc)
{
	int s = kc->slot_free;

	if (s >= 0) {
		kc->slot_free = kc->slot[s].next_free;
		return s;
	}
	s = kc->slot_lru.head;
	if (s < 0)
		return -1;
	list_remove(&kc->slot_lru, kc->slot_link, s);
	tab_delete(kc, kc->slot[s].hash);
	kc->slot[s].hash = 0;
	kc->st.swap_drops++;
	return s;
}

/* Block b to slot s: in place from a host pool, through the staging
 * buffer from a device pool. */
static int swap_write(struct kv_cache *kc, int b, int s)
{
	size_t bytes = kc->block_floats * sizeof(float);
	int err;

	if (!kc->ops)
		return io_full(kc->fd, block_data(kc, b), bytes, slot_offset(kc, s), true);
	err = kc->ops->copy_out(kc->ops_ctx, kc->stage, block_data(kc, b), bytes);
	return err ? err : io_full(kc->fd, kc->stage, bytes, slot_offset(kc, s), true);
}

static int swap_read(struct kv_cache *kc, int b, int s)
{
	size_t bytes = kc->block_floats * sizeof(float);
	int err;

	if (!kc->ops)
		return io_full(kc->fd, block_data(kc, b), bytes, slot_offset(kc, s), false);
	err = io_full(kc->fd, kc->stage, bytes, slot_offset(kc, s), false);
	return err ? err : kc->ops->copy_in(kc->ops_ctx, block_data(kc, b), kc->stage, bytes);
}

/* ---- blocks (all with the lock held) ---- */

static void block_evict(struct kv_cache *kc, int b)
{
	size_t bytes = kc->block_floats * sizeof(float);
	uint64_t h = kc->blk[b].hash;
	struct kv_entry *e;
	int s = -1;

	list_remove(&kc->lru, kc->blk_link, b);
	kc->evictions++;
	kc->st.evicted++;
	if (kc->fd >= 0)
		s = slot_get(kc);
	if (s >= 0 && swap_write(kc, b, s) < 0) {
		kc->st.swap_errors++;
		slot_put(kc, s);
		s = -1;
	}
	if (s >= 0) {
		/* found again: slot_get may have moved entries */
		e = tab_find(kc, h);
		e->block = -1;
		e->slot = s;
		kc->slot[s].hash = h;
		kc->slot[s].evicted_at = kc->evictions;
		list_append(&kc->slot_lru, kc->slot_link, s);
		kc->st.swap_outs++;
		kc->st.bytes_swapped_out += bytes;
		HOOK(kc, swap_out, b, h, s);
	} else {
		tab_delete(kc, h);
	}
	kc->blk[b].hash = 0;
	kc->blk[b].state = BLK_FREE;
	HOOK(kc, evict, b, h, s >= 0);
}

/* A block with refcount 1, or -ENOMEM when every block is referenced. */
static int block_take(struct kv_cache *kc)
{
	int b = kc->free_head;

	if (b >= 0) {
		kc->free_head = kc->blk[b].next_free;
		kc->n_free--;
	} else if (kc->lru.head >= 0) {
		b = kc->lru.head;
		block_evict(kc, b);
	} else {
		return -ENOMEM;
	}
	kc->blk[b].refcnt = 1;
	kc->blk[b].state = BLK_USED;
	kc->blk[b].hash = 0;
	kc->st.allocated++;
	HOOK(kc, alloc, b, 0, 0);
	return b;
}

static void block_put(struct kv_cache *kc, int b)
{
	struct kv_block *k = &kc->blk[b];

	if (--k->refcnt > 0)
		return;
	HOOK(kc, release, b, k->hash, 0);
	if (k->hash) {
		k->state = BLK_CACHED;
		list_append(&kc->lru, kc->blk_link, b);
		return;
	}
	k->state = BLK_FREE;
	k->next_free = kc->free_head;
	kc->free_head = b;
	kc->n_free++;
	kc->st.freed++;
	HOOK(kc, free, b, 0, 0);
}

/* Names a block that has just been filled. */
static void block_register(struct kv_cache *kc, int b, uint64_t h)
{
	struct kv_entry *e = tab_find(kc, h);

	if (e && e->block >= 0)
		return;		/* another copy already has the name */
	if (e) {
		/* the pool copy supersedes the swapped-out one */
		list_remove(&kc->slot_lru, kc->slot_link, e->slot);
		slot_put(kc, e->slot);
	} else {
		e = tab_insert(kc, h);
	}
	e->slot = -1;
	e->block = b;
	kc->blk[b].hash = h;
}

/* Reads a swapped-out block back into the pool; returns it referenced once,
 * or -1 (no block to read it into, or a failed read). */
static int block_swap_in(struct kv_cache *kc, uint64_t h, int s)
{
	size_t bytes = kc->block_floats * sizeof(float);
	struct kv_entry *e;
	uint64_t dist;
	int b;

	/* pin the slot: block_take may evict, and eviction may reuse slots */
	list_remove(&kc->slot_lru, kc->slot_link, s);
	b = block_take(kc);
	if (b < 0) {
		list_append(&kc->slot_lru, kc->slot_link, s);
		return -1;
	}
	if (swap_read(kc, b, s) < 0) {
		kc->st.swap_errors++;
		tab_delete(kc, h);
		slot_put(kc, s);
		block_put(kc, b);
		return -1;
	}
	dist = kc->evictions - kc->slot[s].evicted_at;
	kc->st.swap_ins++;
	if (dist <= kc->recent)
		kc->st.swap_ins_recent++;
	kc->st.bytes_swapped_in += bytes;
	slot_put(kc, s);
	e = tab_find(kc, h);
	e->slot = -1;
	e->block = b;
	kc->blk[b].hash = h;
	HOOK(kc, swap_in, b, h, (int64_t)dist);
	return b;
}

/* The block named h, referenced once more; -1 if the cache lacks it. */
static int block_lookup(struct kv_cache *kc, uint64_t h)
{
	struct kv_entry *e = tab_find(kc, h);
	int b;

	if (!e)
		return -1;
	if (e->block < 0)
		return block_swap_in(kc, h, e->slot);
	b = e->block;
	if (kc->blk[b].refcnt == 0) {
		list_remove(&kc->lru, kc->blk_link, b);
		kc->blk[b].state = BLK_USED;
	}
	kc->blk[b].refcnt++;
	return b;
}

/* ---- the cache ---- */

void kv_cache_params_default(struct kv_cache_params *p, int n_layers, int kv_dim)
{
	memset(p, 0, sizeof(*p));
	p->n_layers = n_layers;
	p->kv_dim = kv_dim;
	p->block_size = 16;
	p->n_blocks = 256;
}

static int params_check(const struct kv_cache_params *p, size_t *block_floats)
{
	size_t n;

	if (p->n_layers <= 0 || p->kv_dim <= 0 || p->block_size <= 0 ||
	    p->n_blocks <= 0 || p->swap_slots < 0 || p->n_blocks > (1 << 24) ||
	    p->swap_slots > (1 << 26))
		return -EINVAL;
	if (p->storage && (!p->storage->pool_alloc || !p->storage->pool_free ||
			   !p->storage->stage_alloc || !p->storage->stage_free ||
			   !p->storage->copy_out || !p->storage->copy_in))
		return -EINVAL;
	if (__builtin_mul_overflow((size_t)p->n_layers * 2, (size_t)p->block_size, &n) ||
	    __builtin_mul_overflow(n, (size_t)p->kv_dim, &n) ||
	    n > ((size_t)1 << 40) / sizeof(float) / (size_t)p->n_blocks)
		return -EINVAL;
	*block_floats = n;
	return 0;
}

/* The swap file, as the file comment says.  Returns its fd or -errno. */
static int swap_create(const char *dir, const char *name)
{
	char tmpl[4096];
	int dfd = -1, fd = -1, err = 0;

	if (strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	if ((size_t)snprintf(tmpl, sizeof(tmpl), "%s/kvref-XXXXXX", dir) >= sizeof(tmpl))
		return -ENAMETOOLONG;
	if (!mkdtemp(tmpl))	/* mode 0700 */
		return -errno;
	dfd = open(tmpl, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		err = -errno;
		goto cleanup;
	}
	fd = openat(dfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	/* the umask may have taken bits away, never added any: 0600 or less */
	if (unlinkat(dfd, name, 0))
		err = -errno;
cleanup:
	if (dfd >= 0)
		close(dfd);
	if (rmdir(tmpl) && !err)
		err = -errno;
	if (err && fd >= 0) {
		close(fd);
		fd = -1;
	}
	return err ? err : fd;
}

int kv_cache_new(struct kv_cache **out, const struct kv_cache_params *p)
{
	struct kv_cache *kc;
	size_t block_floats, cap;
	int err, i;

	err = params_check(p, &block_floats);
	if (err)
		return err;
	kc = calloc(1, sizeof(*kc));
	if (!kc)
		return -ENOMEM;
	kc->fd = -1;
	kc->n_layers = p->n_layers;
	kc->kv_dim = p->kv_dim;
	kc->block_size = p->block_size;
	kc->n_blocks = p->n_blocks;
	kc->block_floats = block_floats;
	kc->n_slots = p->swap_dir ? (p->swap_slots ? p->swap_slots : 4 * p->n_blocks) : 0;
	kc->recent = p->recent_evictions ? p->recent_evictions : (uint64_t)p->n_blocks;
	kc->hooks = p->hooks;
	kc->ops = p->storage;
	kc->ops_ctx = p->storage_ctx;
	pthread_mutex_init(&kc->lock, NULL);

	if (kc->ops) {
		err = kc->ops->pool_alloc(kc->ops_ctx, block_floats * sizeof(float) *
					  (size_t)p->n_blocks, (void **)&kc->data);
		if (!err && kc->n_slots)
			err = kc->ops->stage_alloc(kc->ops_ctx, block_floats * sizeof(float),
						   &kc->stage);
		if (err)
			goto cleanup;
	}
	err = -ENOMEM;
	if (!kc->ops) {
		if (posix_memalign((void **)&kc->data, 64,
				   block_floats * sizeof(float) * (size_t)p->n_blocks))
			goto cleanup;
		memset(kc->data, 0, block_floats * sizeof(float) * (size_t)p->n_blocks);
	}
	kc->blk = calloc((size_t)p->n_blocks, sizeof(*kc->blk));
	kc->blk_link = calloc((size_t)p->n_blocks, sizeof(*kc->blk_link));
	for (cap = 16; cap < 2 * ((size_t)kc->n_blocks + (size_t)kc->n_slots); cap *= 2)
		;
	kc->tab = calloc(cap, sizeof(*kc->tab));
	kc->tab_mask = cap - 1;
	if (!kc->blk || !kc->blk_link || !kc->tab)
		goto cleanup;
	if (kc->n_slots) {
		kc->slot = calloc((size_t)kc->n_slots, sizeof(*kc->slot));
		kc->slot_link = calloc((size_t)kc->n_slots, sizeof(*kc->slot_link));
		if (!kc->slot || !kc->slot_link)
			goto cleanup;
	}

	list_init(&kc->lru);
	list_init(&kc->slot_lru);
	/* free lists hand out low ids first */
	kc->free_head = -1;
	for (i = kc->n_blocks - 1; i >= 0; i--) {
		kc->blk[i].next_free = kc->free_head;
		kc->free_head = i;
		kc->blk_link[i].prev = kc->blk_link[i].next = -1;
	}
	kc->n_free = kc->n_blocks;
	kc->slot_free = -1;
	for (i = kc->n_slots - 1; i >= 0; i--) {
		kc->slot[i].next_free = kc->slot_free;
		kc->slot_free = i;
		kc->slot_link[i].prev = kc->slot_link[i].next = -1;
	}

	if (p->swap_dir) {
		kc->fd = swap_create(p->swap_dir, p->swap_name ? p->swap_name : "kvref-swap.bin");
		if (kc->fd < 0) {
			err = kc->fd;
			goto cleanup;
		}
	}
	*out = kc;
	return 0;

cleanup:
	kv_cache_free(kc);
	return err;
}

void kv_cache_free(struct kv_cache *kc)
{
	if (!kc)
		return;
	if (kc->fd >= 0)
		close(kc->fd);
	pthread_mutex_destroy(&kc->lock);
	free(kc->slot_link);
	free(kc->slot);
	free(kc->tab);
	free(kc->blk_link);
	free(kc->blk);
	if (kc->ops) {
		if (kc->stage)
			kc->ops->stage_free(kc->ops_ctx, kc->stage);
		if (kc->data)
			kc->ops->pool_free(kc->ops_ctx, kc->data);
	} else {
		free(kc->data);
	}
	free(kc);
}

int kv_cache_swap_fd(const struct kv_cache *kc)
{
	return kc->fd;
}

float *kv_cache_key(const struct kv_cache *kc, int block, int layer)
{
	return block_data(kc, block) +
	       (size_t)layer * 2 * (size_t)kc->block_size * (size_t)kc->kv_dim;
}

float *kv_cache_value(const struct kv_cache *kc, int block, int layer)
{
	return kv_cache_key(kc, block, layer) + (size_t)kc->block_size * (size_t)kc->kv_dim;
}

float *kv_cache_pool(const struct kv_cache *kc)
{
	return kc->data;
}

int kv_cache_block_size(const struct kv_cache *kc)
{
	return kc->block_size;
}

int kv_cache_kv_dim(const struct kv_cache *kc)
{
	return kc->kv_dim;
}

int kv_cache_n_layers(const struct kv_cache *kc)
{
	return kc->n_layers;
}

size_t kv_cache_block_bytes(const struct kv_cache *kc)
{
	return kc->block_floats * sizeof(float);
}

int kv_cache_block_refcnt(struct kv_cache *kc, int block)
{
	int r;

	if (block < 0 || block >= kc->n_blocks)
		return -EINVAL;
	pthread_mutex_lock(&kc->lock);
	r = kc->blk[block].refcnt;
	pthread_mutex_unlock(&kc->lock);
	return r;
}

void kv_cache_get_stats(struct kv_cache *kc, struct kv_cache_stats *st)
{
	pthread_mutex_lock(&kc->lock);
	*st = kc->st;
	st->blocks_free = kc->n_free;
	st->blocks_cached = kc->lru.n;
	st->blocks_in_use = kc->n_blocks - kc->n_free - kc->lru.n;
	st->swap_slots_used = kc->slot_lru.n;
	pthread_mutex_unlock(&kc->lock);
}

/* ---- sequences ---- */

void kv_seq_init(struct kv_seq *seq)
{
	memset(seq, 0, sizeof(*seq));
}

void kv_seq_release(struct kv_cache *kc, struct kv_seq *seq)
{
	int i;

	if (seq->n_blocks) {
		pthread_mutex_lock(&kc->lock);
		for (i = seq->n_blocks - 1; i >= 0; i--)
			block_put(kc, seq->blocks[i]);
		pthread_mutex_unlock(&kc->lock);
	}
	free(seq->blocks);
	free(seq->hashes);
	free(seq->tokens);
	kv_seq_init(seq);
}

/* Room for n_blocks blocks and n_tokens tokens. */
static int seq_grow(struct kv_seq *seq, int n_blocks, int n_tokens)
{
	int cap;
	void *p;

	if (n_blocks > seq->cap_blocks) {
		for (cap = seq->cap_blocks ? seq->cap_blocks : 8; cap < n_blocks; cap *= 2)
			;
		p = realloc(seq->blocks, (size_t)cap * sizeof(*seq->blocks));
		if (!p)
			return -ENOMEM;
		seq->blocks = p;
		p = realloc(seq->hashes, (size_t)cap * sizeof(*seq->hashes));
		if (!p)
			return -ENOMEM;
		seq->hashes = p;
		seq->cap_blocks = cap;
	}
	if (n_tokens > seq->cap_tokens) {
		for (cap = seq->cap_tokens ? seq->cap_tokens : 64; cap < n_tokens; cap *= 2)
			;
		p = realloc(seq->tokens, (size_t)cap * sizeof(*seq->tokens));
		if (!p)
			return -ENOMEM;
		seq->tokens = p;
		seq->cap_tokens = cap;
	}
	return 0;
}

int kv_seq_match_prefix(struct kv_cache *kc, struct kv_seq *seq,
			const int *tokens, int n)
{
	int bs = kc->block_size, nb, got = 0, b, err, i;
	uint64_t parent = KV_HASH_ROOT;

	if (seq->len || seq->n_blocks || n < 0 || (n && !tokens))
		return -EINVAL;
	nb = n / bs;
	if (!nb)
		return 0;
	err = seq_grow(seq, nb, nb * bs);
	if (err)
		return err;
	for (i = 0; i < nb; i++) {
		seq->hashes[i] = kv_block_hash(parent, tokens + (size_t)i * bs, bs);
		parent = seq->hashes[i];
	}

	pthread_mutex_lock(&kc->lock);
	for (got = 0; got < nb; got++) {
		b = block_lookup(kc, seq->hashes[got]);
		if (b < 0)
			break;
		seq->blocks[got] = b;
		HOOK(kc, prefix_hit, b, seq->hashes[got], kc->blk[b].refcnt);
	}
	kc->st.prefix_hits += (uint64_t)got;
	kc->st.prefix_misses += (uint64_t)(nb - got);
	if (got < nb)
		HOOK(kc, prefix_miss, -1, seq->hashes[got], got);
	pthread_mutex_unlock(&kc->lock);

	memcpy(seq->tokens, tokens, (size_t)got * bs * sizeof(*tokens));
	seq->n_blocks = got;
	seq->len = got * bs;
	return seq->len;
}

int kv_seq_reserve(struct kv_cache *kc, struct kv_seq *seq)
{
	int bi = seq->len / kc->block_size, b, err;

	if (bi < seq->n_blocks)
		return 0;
	err = seq_grow(seq, bi + 1, (bi + 1) * kc->block_size);
	if (err)
		return err;
	pthread_mutex_lock(&kc->lock);
	b = block_take(kc);
	pthread_mutex_unlock(&kc->lock);
	if (b < 0)
		return b;
	seq->blocks[bi] = b;
	seq->n_blocks = bi + 1;
	return 0;
}

float *kv_seq_key(const struct kv_cache *kc, const struct kv_seq *seq,
		  int layer, int pos)
{
	int bs = kc->block_size;

	return kv_cache_key(kc, seq->blocks[pos / bs], layer) + (size_t)(pos % bs) * kc->kv_dim;
}

float *kv_seq_value(const struct kv_cache *kc, const struct kv_seq *seq,
		    int layer, int pos)
{
	int bs = kc->block_size;

	return kv_cache_value(kc, seq->blocks[pos / bs], layer) + (size_t)(pos % bs) * kc->kv_dim;
}

void kv_seq_commit(struct kv_cache *kc, struct kv_seq *seq, int token)
{
	int bs = kc->block_size, pos = seq->len, bi = pos / bs;
	uint64_t parent;

	seq->tokens[pos] = token;
	seq->len++;
	if (seq->len % bs)
		return;
	parent = bi ? seq->hashes[bi - 1] : KV_HASH_ROOT;
	seq->hashes[bi] = kv_block_hash(parent, seq->tokens + (size_t)bi * bs, bs);
	pthread_mutex_lock(&kc->lock);
	block_register(kc, seq->blocks[bi], seq->hashes[bi]);
	pthread_mutex_unlock(&kc->lock);
}
