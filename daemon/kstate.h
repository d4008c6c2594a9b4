/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel's own numbers, to check what the events say against: object
 * counts of every slab cache (/proc/slabinfo, dentries in use from
 * /proc/sys/fs/dentry-state) sampled over time, and kernel symbols
 * (/proc/kallsyms) to name call sites.
 *
 * The tracepoints do not see every free (bulk frees, the per-CPU skb cache,
 * RCU batches), so a live count built from events can drift up where the
 * kernel's own count is flat.  A leak is only called where the kernel's
 * count of the cache grows too.
 */
#ifndef CS_KSTATE_H
#define CS_KSTATE_H

#include <stddef.h>
#include <stdint.h>

#define KSTATE_VMALLOC_EVERY_NS 5000000000ull	/* /proc/vmallocinfo at most this often */
#define KSTATE_SAMPLES 128	/* per cache: 25.6 s at the default 200 ms */

struct kstate;

/* Paths may be NULL for the defaults (/proc/...); tests pass files of
 * their own.  Returns NULL when out of memory. */
struct kstate *kstate_new(const char *slabinfo, const char *dentry_state,
			  const char *meminfo);
/* Where kstate_reclaimable looks (default /sys/kernel/slab), and the list
 * of vmalloc areas (default /proc/vmallocinfo; NULL: none); for tests. */
int kstate_set_slab_dir(struct kstate *ks, const char *dir);
int kstate_set_vmallocinfo(struct kstate *ks, const char *path);
void kstate_free(struct kstate *ks);

/* Read the counts now.  Returns 0 or -errno (the file cannot be read; the
 * checks then say the count is unknown). */
int kstate_sample(struct kstate *ks, uint64_t now_ns);

/* Whether the kernel reclaims the cache's objects under memory pressure
 * (SLAB_RECLAIM_ACCOUNT, /sys/kernel/slab/<cache>/reclaim_account): its
 * growth is cache, not leak, unless the objects are pinned.  Returns 1, 0,
 * or -errno when it cannot tell. */
int kstate_reclaimable(struct kstate *ks, const char *cache);

/* Pages on the file LRU lists (Active(file) + Inactive(file)) at the last
 * sample.  Returns 0 or -ENODATA. */
int kstate_file_lru(const struct kstate *ks, uint64_t *pages);

/* Growth per second of the kernel's count of the objects of cache over the
 * last span_ns, by least squares over the samples.  kmalloc-<N> sums every
 * kmalloc cache of objects of N bytes (-cg-, -rcl-, -dma-, -rnd-); dentry
 * counts dentries in use (not the unused and negative ones the dcache keeps
 * as cache), vmap_area the vmalloc areas in use (not the freed ones the
 * kernel purges lazily, in batches).  Returns 0, -ENOENT (no such cache, or too few samples) or
 * -ENODATA (never sampled).  *got_s: the span the samples cover. */
int kstate_growth(const struct kstate *ks, const char *cache, uint64_t span_ns,
		  double *per_s, double *got_s);

/* How many objects the kernel's count of cache can gain without showing
 * it: /proc/slabinfo counts every object of a CPU's active and partial
 * slabs as in use, so objects filling their free slots change nothing
 * (per CPU: two slabs and the partial slabs' objects, sysfs cpu_partial;
 * of every cache summed); 0 for the exact counts (dentries, vmalloc
 * areas), -1 when the cache is unknown. */
long kstate_resolution(struct kstate *ks, const char *cache);

/* Kernel symbols, loaded once (their names compressed, the blocks last
 * asked for kept open, which is why k is not const): "name+0xoff" of addr
 * into buf.  Returns 0, or -ENOENT (no symbol, or no memory to read its
 * name; buf gets the hex address). */
struct ksyms;
struct ksyms *ksyms_load(const char *path);
void ksyms_free(struct ksyms *k);
int ksyms_name(struct ksyms *k, uint64_t addr, char *buf, size_t n);

#endif
