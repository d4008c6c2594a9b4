/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Per-window, per-key accumulators.
 *
 * A key is (domain, cache or file, tgid).  Each key keeps two window slots,
 * the window being closed and the next one, because the per-CPU rings are
 * drained one after another: while ring 0 already holds events of window
 * w+1, ring 1 may still hold events of window w.  A window is closed only
 * after every ring was drained past its end.
 */
#ifndef CS_WINDOW_H
#define CS_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../bpf/cachescope.h"
#include "clock.h"
#include "history.h"
#include "kvpool.h"
#include "usdt.h"
#include "stats.h"
#include "topk.h"

enum cs_domain {
	DOM_SLAB = 1,	/* kmem_cache and kmalloc objects */
	DOM_PAGE = 2,	/* page-cache pages of one file */
	DOM_KV = 3,	/* blocks of a user-space KV cache (kvref's USDT probes) */
	DOM_GPU = 4,	/* CUPTI records of a CUDA process (libcachescope_cupti.so) */
};

/* ids of the gpu domain's keys, one each per process: every kernel, the
 * KV-cache kernels (again), copies and device allocations */
enum { GPU_KEY_KERNELS = 1, GPU_KEY_KV_KERNELS = 2, GPU_KEY_MEMORY = 3 };

/* "slab" for DOM_SLAB... ("?" for none), and back (0 for none). */
const char *domain_name(int domain);
int domain_of(const char *name);

struct wkey {
	uint64_t id;		/* slab: cache id; page: inode */
	uint32_t tgid;
	uint32_t dev;		/* page: kernel dev_t of the file's sb */
	uint32_t gen;		/* page: inode generation (a reused number is another file) */
	uint8_t domain;
};

static inline uint64_t wkey_hash(const struct wkey *k)
{
	uint64_t h = k->id ^ ((uint64_t)k->tgid << 32 | k->dev) * 0x9e3779b97f4a7c15ull;

	h ^= (uint64_t)k->domain << 56 ^ (uint64_t)k->gen * 0xff51afd7ed558ccdull;
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 29;
	return h;
}

/* An order of keys: domain, id, tgid, dev, gen. */
static inline int wkey_cmp(const struct wkey *x, const struct wkey *y)
{
	if (x->domain != y->domain)
		return x->domain < y->domain ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->gen != y->gen)
		return x->gen < y->gen ? -1 : 1;
	return 0;
}

static inline bool wkey_eq(const struct wkey *a, const struct wkey *b)
{
	return a->id == b->id && a->tgid == b->tgid && a->dev == b->dev &&
	       a->gen == b->gen && a->domain == b->domain;
}

struct wslot {
	uint64_t window;	/* window index held */
	uint64_t allocs, frees;
	uint64_t bytes_req, bytes_alloc, bytes_freed;
	uint64_t same_cpu_frees, remote_frees;
	uint64_t own_remote_frees;	/* of remote_frees: by a thread of the
					 * allocating process (CS_F_OWN) */
	uint64_t unseen_frees;	/* of frees: no tracepoint saw them (CS_F_UNSEEN);
				 * neither same-CPU nor remote, no lifetime */
	uint64_t cross_numa;
	uint64_t page_adds, page_dels;	/* pages, not folios */
	uint64_t refaults;		/* folios that refaulted */
	uint64_t refault_pages;
	uint64_t repeat_pages;		/* of refault_pages: back a second time or more
					 * (kv: swap-ins within a pool's worth of
					 * evictions of their swap-out) */
	uint64_t kv_swap_outs, kv_swap_ins;	/* kv domain: blocks */
	uint64_t gpu_kernels, gpu_kernel_ns;	/* gpu domain */
	uint64_t gpu_copies, gpu_copy_in_bytes, gpu_copy_out_bytes;
	uint8_t max_shift;	/* slab: largest sample shift of its records (the
				 * counts are estimates when it is not 0) */
	uint32_t lifetime_hist[HIST_BUCKETS];	/* log2 ns */
	uint32_t refault_hist[HIST_BUCKETS];	/* log2 evictions */
	struct topk sizes;	/* bytes requested */
	struct topk sites;	/* call sites */
};

#define WINDOW_NONE UINT64_MAX
struct acc {
	struct wkey key;
	char name[64];		/* cache name, or dev:ino */
	char file[CS_CACHE_NAME_LEN];
	char comm[CS_COMM_LEN];
	uint64_t comm_window;	/* when comm was last read (exec renames) */
	/* the slots of its open windows, window w's at [w & 1], NULL while
	 * closed: taken from the table's spare slots when the window's first
	 * event comes, handed back when it closes */
	struct wslot *slot[2];
	int64_t live_objs, live_bytes;	/* since the daemon started */
	uint64_t total_allocs, total_frees;
	uint64_t total_page_adds, total_page_dels, total_refaults;
	uint64_t last_window;
	uint64_t first_ns;	/* the key's first event */
	struct obj_hist *oh;	/* keys of objects only: NULL for a page key */
	struct thist *th;	/* kv keys' refaults (page keys: per file) */
	uint64_t total_unseen_frees;
	/* of the frees a tracepoint saw, those of objects older than the
	 * rules' least age (wtable_rules' age_min_ns) */
	uint64_t total_old_frees;
	uint64_t last_top_site;	/* slab: the top call site of its last window
				 * with allocations */
	struct kvpool pool;	/* kv domain: the pool's blocks */
	uint32_t uid;		/* its process's owner (wtable_limits.owner), or
				 * WTABLE_UID_NONE: no user's (others keys, a
				 * process gone before it was asked) */
};

/* One closed (window, key), with what the accumulators derive. */
struct wrow {
	uint64_t window;
	uint64_t start_ns;	/* CLOCK_MONOTONIC */
	/* the key, as every reader of a row sees it: a row made from
	 * records points into its key's accumulator (wrow_of_key), a row read
	 * back from a CSV into the key read with it */
	const struct wkey *key;
	const char *name;	/* cache name, or dev:ino */
	const char *file;	/* page: the file's name ("" unknown) */
	const char *comm;
	/* the daemon's accumulator of the key: for the daemon's own use (its
	 * comm refreshed, its totals); NULL for a row read from a CSV */
	const struct acc *acc;
	const struct wslot *s;	/* the window's counts */
	int64_t live_objs, live_bytes;	/* at the window's end */
	uint64_t lifetime_p50_ns;
	uint64_t refault_dist_p50;
	double top_site_share;	/* allocs from the busiest call site */
	uint64_t top_site;	/* that call site (slab: kernel address) */
	uint64_t key_top_site;	/* the key's: of its last window with
				 * allocations (this one's where it has any) */
	double size_entropy;	/* bits, over bytes requested */
	double same_size_share;	/* allocs of the most common size */
	double growth_per_s;	/* slope of live objects over the recent windows */
	uint32_t grew_windows;	/* consecutive active windows (this one
				 * included) whose allocs exceeded their frees */
	/* the age test: live objects older than age_ns at the window's end,
	 * and how much and for how long (since it last fell or was empty,
	 * in time, not windows: a slow leaker has rows in few windows) */
	uint64_t age_ns;
	uint64_t key_lifetime_p50_ns;	/* over the key's recent history (halved
					 * every 100 windows), not one window */
	int64_t old_objs;
	int64_t old_rise;
	int64_t old_rise_tracked;	/* of which tracked objects (records; the
					 * same as old_rise where nothing is sampled) */
	double old_rise_s;	/* from its first rise to its last */
	double old_quiet_s;	/* since its last rise */
	double old_warmup_s;	/* from the key's first event to the allocations
				 * behind the rise: a process's start-up grows */
	uint32_t old_steps;	/* in how many windows it rose: steady, not one jump */
	int64_t old_max_step;	/* the largest rise of one window */
	uint64_t old_rise_allocs, old_rise_frees;	/* since the rise began; frees
							 * a tracepoint saw */
	/* since the rise began: frees seen of objects older than the least
	 * age; frees found unseen (a tracked object freed while no free
	 * program was attached, --sample-time-frees: its address handed out
	 * again in a slice) */
	uint64_t old_rise_old_frees, old_rise_unseen;
	bool old_rise_dropped;	/* records were dropped (rings full) since the
				 * rise's objects were allocated */
	/* a slab row whose old objects rise: the rises a second of every key
	 * of its cache that had a rising row in the last 4 s, by its last
	 * one, this one's included, and how many keys: what the kernel's
	 * count of the cache must pay for to confirm one of them (0: not
	 * known, a row read from a CSV) */
	double cache_rise_per_s;
	uint32_t cache_rising_keys;
	/* and the sum of their squares over their lengths, per_s^2 / rise_s,
	 * of those that rose for 1.5 s at least (a shorter one counts at its
	 * rate): counted 1 period in d (sampled in time), the sum's variance
	 * is this x (d - 1) / the periods a second (classify.c, cache_rise_low) */
	double cache_rise_var;
	/* frees on the allocating CPU / frees (with a CPU) over the last
	 * LOCALITY_SAMPLES windows (of time), and how many of them had frees */
	double recent_locality;
	uint32_t recent_windows;
	/* of the remote frees of those windows: the share freed by a thread
	 * of the allocating process (0 with none) */
	double recent_own_share;
	/* persistence: refaults of the file (or pool) over the recent
	 * THRASH_SAMPLES windows, by every process */
	uint64_t recent_page_adds, recent_refault_pages, recent_repeat_pages;
	uint32_t refault_windows;	/* of them, windows with refaults */
	double refault_span_s;	/* first to last such window */
	double refault_quiet_s;	/* since the last such window */
	/* what the same process did on the GPU in this window (any key) */
	uint64_t tgid_gpu_kernel_ns, tgid_gpu_kv_kernel_ns, tgid_gpu_copy_bytes;
};

/* A row's key from its accumulator a (a row made from records). */
static inline void wrow_of_key(struct wrow *r, const struct acc *a)
{
	r->acc = a;
	r->key = &a->key;
	r->name = a->name;
	r->file = a->file;
	r->comm = a->comm;
}

typedef void (*wtable_row_fn)(const struct wrow *row, void *ctx);
typedef void (*wtable_resolve_fn)(struct acc *acc, void *ctx);

struct wtable_stats {
	uint64_t events;
	uint64_t late;		/* events of an already closed window */
	uint64_t windows;	/* windows closed */
	uint64_t rows;
	uint64_t keys;		/* keys now */
	uint64_t keys_dropped;	/* idle keys with no live objects forgotten */
	/* keys merged into their cache's others key (CS_TGID_OTHER), live
	 * objects and all: of exited processes, of families idle for a
	 * minute, and the longest idle ones past the key budget */
	uint64_t keys_exited, keys_idle_merged, keys_evicted;
	uint64_t others_events;	/* events counted on an others key because the
				 * table was full of keys active right now */
	uint64_t share_events;	/* of those, of a user holding its share of the
				 * full budget (keys / users with keys) */
	uint64_t files;		/* files with a refault history now */
	/* user-space probe records rejected, all and by reason, and the
	 * process of the last one */
	uint64_t rejected;
	uint64_t rejected_by[REJ_N];
	uint32_t rejected_tgid;
	/* gpu records windowed by when their work ran (their start, on the
	 * daemon's clock), and of those the ones whose window had closed by
	 * the time they came: counted in late too, and folded into the oldest
	 * open window */
	uint64_t gpu_run_timed, gpu_late;
	uint64_t gpu_split;	/* of those, records whose run straddled windows:
				 * busy time and bytes split over them */
	uint64_t gpu_release_unmatched;	/* gpu releases of more than their key held
					 * live (stopped at zero) */
	uint64_t gpu_unjoined;	/* gpu keys' windows left out of the host-GPU
				 * join: no memory to hold them */
	uint64_t kv_blocks;	/* per-block state held now, all pools */
	uint64_t kv_queue_full;	/* kv records applied early: the queue was full */
};

struct wtable;

/* Where the table may grow: at most max_keys keys apart (others keys come
 * on top: one per cache at most); alive tells whether a process still
 * exists (NULL: always), so an exited process's key can be merged. */
#define WTABLE_UID_NONE UINT32_MAX

struct wtable_limits {
	size_t max_keys;
	bool (*alive)(uint32_t tgid, void *ctx);
	/* told of every key that leaves the table (NULL: none told):
	 * merged into into, its others key, or forgotten (into NULL, when
	 * nothing of it was live), so a later stage can do the same with
	 * what it keeps per key */
	void (*key_gone)(const struct wkey *key, const struct wkey *into, void *ctx);
	/* whether a probe record BPF flagged CS_F_FOREIGN, of process tgid at
	 * ts_ns, is of a process the caller started itself (NULL: none is;
	 * every flagged record is rejected, reason untrusted) */
	bool (*believed)(uint32_t tgid, uint64_t ts_ns, void *ctx);
	/* the uid that owns process tgid (WTABLE_UID_NONE: gone), for the
	 * fair shares of a full key budget (NULL: no key is a user's) */
	uint32_t (*owner)(uint32_t tgid, void *ctx);
};

void wtable_set_limits(struct wtable *wt, const struct wtable_limits *l);

/* The kind of a key's process id: a process, a family of young processes
 * of one command (CS_TGID_FAMILY), or a cache's others key. */
static inline bool tgid_is_family(uint32_t tgid)
{
	return (tgid & ~CS_TGID_FAMILY_MASK) == CS_TGID_FAMILY;
}

static inline const char *tgid_kind(uint32_t tgid)
{
	return tgid == CS_TGID_OTHER ? "others" : tgid_is_family(tgid) ? "family" : "process";
}

/* The table collects after closing every WTABLE_GC_EVERY_WINDOWS-th window:
 * a key idle for WTABLE_GC_IDLE_NS with nothing live is forgotten (a
 * family's merged into others), and the files' refault histories with no
 * sample for THRASH_SAMPLES windows (history_files_gc).  The offline
 * reader replays these collections between a CSV's rows. */
#define WTABLE_GC_EVERY_WINDOWS 64
#define WTABLE_GC_IDLE_NS (60 * NSEC_PER_SEC)

struct wtable;

/* What the rows derive that depends on the rules, set before windows close:
 * objects older than max(age_min_ns, age_lifetimes x the key's median
 * lifetime, expiry_ns(name)) are old. */
struct wtable_rules {
	uint64_t age_min_ns;
	double age_lifetimes;
	/* how long the kernel keeps objects of this cache by design (timers),
	 * 0 for none; may be NULL */
	uint64_t (*expiry_ns)(const char *cache);
};

void wtable_set_rules(struct wtable *wt, const struct wtable_rules *r);

/* Records dropped so far (the programs' count, monotonic), read at now_ns:
 * rows say whether a leak's rise may rest on frees that were lost. */
void wtable_note_drops(struct wtable *wt, uint64_t dropped, uint64_t now_ns);

/* t0_ns is the start of window 0.  resolve names a new key (may be NULL).
 * Returns NULL when out of memory. */
struct wtable *wtable_new(uint64_t t0_ns, uint64_t window_ns,
			  wtable_row_fn row_fn, wtable_resolve_fn resolve,
			  void *ctx);
void wtable_free(struct wtable *wt);

/* Account one event.  Windows close on the caller's tick
 * (wtable_close_until), and here only where they must: a key holds two
 * window slots, so an event two windows past the oldest open one (a tick
 * a window late) closes the windows before it first, each after its
 * queued kv records; rows still come in window order.  Returns 0 (also
 * for a rejected user-space probe record, counted in the stats), or
 * -ENOMEM (the event is lost and counted by the caller). */
int wtable_add(struct wtable *wt, const struct cs_event *e);
/* The same for an event that wtable_reject() has passed. */
int wtable_apply(struct wtable *wt, const struct cs_event *e);

/* The checks of a user-space probe record: its process believed (see
 * wtable_limits.believed), then the bounds that need no state (also for
 * CS_GPU_DROPPED, which the caller sums itself): true when it is rejected,
 * counted in the stats. */
bool wtable_reject(struct wtable *wt, const struct cs_event *e);

/* Close every window that ends at or before now_ns, emitting its rows. */
void wtable_close_until(struct wtable *wt, uint64_t now_ns);
/* Close every open window (at exit). */
void wtable_close_all(struct wtable *wt);

uint64_t wtable_window_of(const struct wtable *wt, uint64_t ts_ns);
void wtable_get_stats(const struct wtable *wt, struct wtable_stats *st);

/* Visit every key; stop early when fn returns non-zero. */
void wtable_foreach(struct wtable *wt, int (*fn)(struct acc *acc, void *ctx),
		    void *ctx);

#endif
