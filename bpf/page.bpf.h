/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The page-cache programs' logic: a delete marks its pages evicted in the
 * granule map, an insert counts the pages that come back (refaults), the
 * ones back a second time (repeats), and the evictions since (distance).
 * The maps it owns: evict_seq, evicted, file_name.
 */
#ifndef CS_PAGE_BPF_H
#define CS_PAGE_BPF_H

#include "tunables.bpf.h"
#include "core_fixes.bpf.h"
#include "record.bpf.h"
#include "task.bpf.h"

/* Global page-cache eviction sequence, the clock of refault distances. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} evict_seq SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CS_EVICTED_MAX_ENTRIES);
	__type(key, struct cs_page_key);
	__type(value, struct cs_evicted);
} evicted SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CS_COMM_MAX_ENTRIES);
	__type(key, struct cs_file_key);
	__type(value, char[CS_CACHE_NAME_LEN]);
} file_name SEC(".maps");


struct folio_id {
	__u64 ino;
	__u64 index;
	__u32 dev;
	__u32 order;
	__u32 gen;		/* i_generation: tells a reused inode number apart */
	bool gone;		/* beyond EOF or inode exiting: truncation, not eviction */
	struct inode *host;
};

static __always_inline bool folio_identify(struct folio *folio,
					   struct folio_id *fid)
{
	struct address_space *mapping = BPF_CORE_READ(folio, mapping);
	struct super_block *sb;
	struct inode *host;

	/* anonymous and movable mappings carry tag bits; not page cache */
	if (!mapping || ((unsigned long)mapping & 3))
		return false;
	host = BPF_CORE_READ(mapping, host);
	if (!host)
		return false;
	fid->host = host;
	fid->ino = BPF_CORE_READ(host, i_ino);
	sb = BPF_CORE_READ(host, i_sb);
	fid->dev = sb ? BPF_CORE_READ(sb, s_dev) : BPF_CORE_READ(host, i_rdev);
	fid->index = BPF_CORE_READ(folio, index);
	fid->order = folio_order_of(folio);
	fid->gen = BPF_CORE_READ(host, i_generation);
	/* A delete is an eviction only while the file keeps the page's range:
	 * truncate shrinks i_size first, and inode eviction sets AS_EXITING. */
	fid->gone = (BPF_CORE_READ(mapping, flags) &
		     (1ul << bpf_core_enum_value(enum mapping_flags, AS_EXITING))) ||
		    (__s64)(fid->index << page_shift) >= BPF_CORE_READ(host, i_size);
	return true;
}

static __always_inline void remember_file(struct folio_id *fid)
{
	struct cs_file_key key = { .ino = fid->ino, .dev = fid->dev, .gen = fid->gen };
	char name[CS_CACHE_NAME_LEN] = {};
	struct inode *host = fid->host;
	struct hlist_node *first;
	struct dentry *d;
	const unsigned char *s;

	if (!host || bpf_map_lookup_elem(&file_name, &key))
		return;
	first = BPF_CORE_READ(host, i_dentry.first);
	if (first) {
		d = container_of(first, struct dentry, d_u.d_alias);
		s = BPF_CORE_READ(d, d_name.name);
		bpf_probe_read_kernel_str(name, sizeof(name), s);
	}
	bpf_map_update_elem(&file_name, &key, name, BPF_NOEXIST);
}

/* Granules [first, first + n) covered by a folio, and the stride that keeps
 * the walk within CS_MAX_GRANULES (only folios above order 11 skip some);
 * pk: the file's part of their keys. */
static __always_inline void granules_of(struct folio_id *fid, struct cs_page_key *pk,
					__u64 *first, __u64 *n, __u64 *stride)
{
	__u64 pages = 1ull << (fid->order & 31);

	pk->ino = fid->ino;
	pk->dev = fid->dev;
	pk->gen = fid->gen;

	*first = fid->index >> CS_GRANULE_SHIFT;
	*n = ((fid->index + pages - 1) >> CS_GRANULE_SHIFT) - *first + 1;
	*stride = (*n + CS_MAX_GRANULES - 1) / CS_MAX_GRANULES;
	if (!*stride)
		*stride = 1;
}

/* The pages of a folio that fall in granule g, as bits of its mask. */
static __always_inline __u64 granule_bits(struct folio_id *fid, __u64 g)
{
	__u64 base = g << CS_GRANULE_SHIFT;
	__u64 end = fid->index + (1ull << (fid->order & 31));
	__u64 lo = fid->index > base ? fid->index - base : 0;
	__u64 hi = end - base;
	__u64 m;

	if (lo >= CS_GRANULE_PAGES)
		return 0;
	m = hi >= CS_GRANULE_PAGES ? ~0ull : (1ull << hi) - 1;
	return m & ~((1ull << lo) - 1);
}

/* Emit a page-cache record for the current task, if it is traced; extra:
 * flags the caller knows (CS_F_KTHREAD). */
static __always_inline void emit_page(struct folio_id *fid, __u8 type, __u8 extra,
				      __u32 refault_pages, __u32 repeat_pages,
				      __u64 refault_ns, __u64 refault_dist, bool btf)
{
	struct cs_rec rec;
	struct cs_event *e = task_event(type, &rec, true, btf);

	if (!e)
		return;
	remember_file(fid);
	e->flags = extra | (refault_pages ? CS_F_REFAULT : 0);
	e->order = fid->order;
	e->page.ino = fid->ino;
	e->page.gen = fid->gen;
	e->page.repeat_pages = repeat_pages;
	e->page.index = fid->index;
	e->page.dev = fid->dev;
	e->page.refault_pages = refault_pages;
	e->page.refault_ns = refault_ns;
	e->page.refault_dist = refault_dist;
	event_submit(e, &rec);
}

static __always_inline int handle_page_add(struct folio_id *fidp, bool btf)
{
	struct cs_page_key pk = {};
	struct cs_evicted *ev, best = {};
	__u64 first, n, stride, now, *seqp, bits, old, hit;
	__u64 refault_ns = 0, refault_dist = 0;
	struct folio_id fid = *fidp;
	__u32 zero = 0, refault_pages = 0, repeat_pages = 0;
	int i;

	granules_of(&fid, &pk, &first, &n, &stride);
	/* Take this folio's pages out of the evicted masks whoever adds it,
	 * so that a mask never outlives the pages it describes. */
	for (i = 0; i < CS_MAX_GRANULES && i * stride < n; i++) {
		pk.granule = first + i * stride;
		ev = bpf_map_lookup_elem(&evicted, &pk);
		if (!ev)
			continue;
		bits = granule_bits(&fid, pk.granule);
		old = __sync_fetch_and_and(&ev->mask, ~bits);
		hit = old & bits;
		if (!hit)
			continue;
		refault_pages += __builtin_popcountll(hit);
		/* pages back for the second time or more: the cache keeps
		 * dropping what it needs (the entry stays, to tell) */
		old = __sync_fetch_and_or(&ev->refaulted, hit);
		repeat_pages += __builtin_popcountll(old & hit);
		if (ev->ts_ns > best.ts_ns) {
			best.ts_ns = ev->ts_ns;
			best.seq = ev->seq;
		}
	}

	now = bpf_ktime_get_ns();
	if (refault_pages) {
		seqp = bpf_map_lookup_elem(&evict_seq, &zero);
		refault_ns = now > best.ts_ns ? now - best.ts_ns : 0;
		if (seqp && *seqp > best.seq)
			refault_dist = *seqp - best.seq;
	}
	emit_page(&fid, CS_EV_PAGE_ADD, 0, refault_pages, repeat_pages, refault_ns,
		  refault_dist, btf);
	return 0;
}

static __always_inline int handle_page_del(struct folio_id *fidp, bool btf)
{
	struct cs_page_key pk = {};
	struct cs_evicted ev = {}, *evp;
	struct task_struct *t;
	__u64 first, n, stride, *seqp, bits;
	struct folio_id fid = *fidp;
	struct cs_stats *st;
	__u32 zero = 0;
	int i, err;

	st = stats_get();
	ev.ts_ns = bpf_ktime_get_ns();
	if (fid.gone) {
		STAT_INC(st, truncations);
		goto emit;
	}
	STAT_INC(st, evictions);
	seqp = bpf_map_lookup_elem(&evict_seq, &zero);
	if (seqp)
		ev.seq = __sync_fetch_and_add(seqp, 1);
	granules_of(&fid, &pk, &first, &n, &stride);
	for (i = 0; i < CS_MAX_GRANULES && i * stride < n; i++) {
		pk.granule = first + i * stride;
		bits = granule_bits(&fid, pk.granule);
		evp = bpf_map_lookup_elem(&evicted, &pk);
		if (!evp) {
			ev.mask = bits;
			err = bpf_map_update_elem(&evicted, &pk, &ev, BPF_NOEXIST);
			if (!err) {
				STAT_INC(st, evicted_inserted);
				continue;
			}
			evp = bpf_map_lookup_elem(&evicted, &pk);
			if (!evp)
				continue;
		}
		__sync_fetch_and_or(&evp->mask, bits);
		evp->ts_ns = ev.ts_ns;
		evp->seq = ev.seq;
	}

emit:
	t = (void *)bpf_get_current_task();
	emit_page(&fid, CS_EV_PAGE_DEL,
		  BPF_CORE_READ(t, flags) & 0x00200000 ? CS_F_KTHREAD : 0,	/* PF_KTHREAD */
		  0, 0, 0, 0, btf);
	return 0;
}

#endif /* CS_PAGE_BPF_H */
