// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Slab and page-cache tracing for cachescoped.
 *
 * Seven tracepoints, each as a BTF tracepoint (tp_btf, typed arguments, cheap)
 * and as a classic tracepoint that the loader enables only where the kernel
 * lacks the BTF one.  Both variants decode their arguments and call one
 * handler per event kind, so there is one copy of the logic.
 *
 * The design idea: keep in the kernel only the state that lets one event
 * explain another, and keep it bounded.  The live-object map tells a free when
 * and where its object was allocated (lifetime, remote free, owning process);
 * the evicted-page map tells a page-cache insert that the same file range was
 * evicted shortly before (a refault, and how many evictions ago).  Everything
 * else is counted in userspace.  Records go to a ring buffer per CPU, with
 * wakeups batched by a byte threshold, and every failed reserve is counted.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/usdt.bpf.h>
#include "cachescope.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define EEXIST 17

/* Tunables, set by the loader through rodata. */
const volatile __u32 self_tgid = 0;
const volatile bool filter_tgid = false;
const volatile bool filter_cgroup = false;
const volatile __u64 cgroup_id = 0;
const volatile bool filter_comm = false;
const volatile char comm_filter[CS_COMM_LEN] = {};
const volatile __u32 wakeup_bytes = 256 << 10;
const volatile __u32 page_shift = 12;

struct ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, CS_RINGBUF_BYTES);
};

/* One ring buffer per CPU; the loader creates them and fills this array. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, CS_MAX_CPUS);
	__type(key, __u32);
	__array(values, struct ring);
} rings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cs_stats);
} stats SEC(".maps");

/* Global page-cache eviction sequence, the clock of refault distances. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} evict_seq SEC(".maps");

/* Per-CPU LRU lists: an insert takes no global lock.  The capacity is
 * shared out between CPUs' lists; a free on any CPU still finds its entry. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CS_LIVE_MAX_ENTRIES);
	__uint(map_flags, BPF_F_NO_COMMON_LRU);
	__type(key, __u64);
	__type(value, struct cs_live);
} live SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CS_EVICTED_MAX_ENTRIES);
	__type(key, struct cs_page_key);
	__type(value, struct cs_evicted);
} evicted SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CS_CACHE_MAX_ENTRIES);
	__type(key, __u64);
	__type(value, struct cs_cache_info);
} cache_info SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CS_COMM_MAX_ENTRIES);
	__type(key, __u32);
	__type(value, char[CS_COMM_LEN]);
} task_comm SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CS_COMM_MAX_ENTRIES);
	__type(key, struct cs_file_key);
	__type(value, char[CS_CACHE_NAME_LEN]);
} file_name SEC(".maps");

/* Processes to trace when filter_tgid is set. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CS_TGID_MAX_ENTRIES);
	__type(key, __u32);
	__type(value, __u8);
} tgids SEC(".maps");

static __always_inline struct cs_stats *stats_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&stats, &zero);
}

#define STAT_INC(st, field) \
	do { if (st) __sync_fetch_and_add(&(st)->field, 1); } while (0)

static __always_inline bool comm_matches(void)
{
	char comm[CS_COMM_LEN];
	int i;

	bpf_get_current_comm(comm, sizeof(comm));
	for (i = 0; i < CS_COMM_LEN; i++) {
		if (comm[i] != comm_filter[i])
			return false;
		if (!comm[i])
			break;
	}
	return true;
}

static __always_inline bool traced(__u32 tgid)
{
	if (tgid == self_tgid)
		return false;
	if (filter_tgid && !bpf_map_lookup_elem(&tgids, &tgid))
		return false;
	if (filter_cgroup && bpf_get_current_cgroup_id() != cgroup_id)
		return false;
	if (filter_comm && !comm_matches())
		return false;
	return true;
}

static __always_inline void remember_comm(__u32 tgid)
{
	char comm[CS_COMM_LEN];

	if (bpf_map_lookup_elem(&task_comm, &tgid))
		return;
	bpf_get_current_comm(comm, sizeof(comm));
	bpf_map_update_elem(&task_comm, &tgid, comm, BPF_NOEXIST);
}

/* Reserve a record on this CPU's ring; counts the attempt and any drop. */
static __always_inline struct cs_event *event_reserve(struct cs_stats *st,
						      void **ringp, __u32 cpu)
{
	struct cs_event *e;
	void *ring;

	STAT_INC(st, produced);
	ring = bpf_map_lookup_elem(&rings, &cpu);
	if (!ring) {
		STAT_INC(st, no_ring);
		STAT_INC(st, dropped);
		return NULL;
	}
	e = bpf_ringbuf_reserve(ring, sizeof(*e), 0);
	if (!e) {
		STAT_INC(st, dropped);
		return NULL;
	}
	*ringp = ring;
	return e;
}

/* Wake the reader only once a batch has piled up; the daemon also drains
 * every ring on its window tick, so a quiet ring is never stranded. */
static __always_inline void event_submit(struct cs_event *e, void *ring)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(e, flags);
}

static __always_inline void remember_cache(const struct kmem_cache *s)
{
	struct cs_cache_info info = {};
	__u64 key = (__u64)s;
	const char *name;

	if (bpf_map_lookup_elem(&cache_info, &key))
		return;
	name = BPF_CORE_READ(s, name);
	bpf_probe_read_kernel_str(info.name, sizeof(info.name), name);
	info.object_size = BPF_CORE_READ(s, object_size);
	info.size = BPF_CORE_READ(s, size);
	bpf_map_update_elem(&cache_info, &key, &info, BPF_NOEXIST);
}

/* Fill a free record of object ptr from what its alloc recorded. */
static __always_inline void fill_free(struct cs_event *e, __u64 ptr,
				      const struct cs_live *v, __u64 now,
				      __u64 call_site, __u32 cpu, __u8 extra)
{
	e->ts_ns = now;
	e->tgid = v->tgid;
	e->pid = (__u32)bpf_get_current_pid_tgid();
	e->cpu = cpu;
	e->node = bpf_get_numa_node_id();
	e->type = CS_EV_SLAB_FREE;
	e->flags = v->flags | extra;
	e->order = 0;
	e->slab.cache = v->cache;
	e->slab.ptr = ptr;
	e->slab.call_site = call_site;
	e->slab.bytes_req = 0;
	e->slab.bytes_alloc = v->bytes_alloc;
	e->slab.lifetime_ns = now > v->ts_ns ? now - v->ts_ns : 0;
	e->slab.alloc_cpu = v->cpu;
	e->slab.alloc_node = v->node;
	e->slab.req_node = -1;
	e->slab.pad = 0;
}

/* The allocator handed out an address that is still live in the map: the
 * object there was freed by a path with no tracepoint (kmem_cache_free_bulk,
 * the network stack's per-CPU skb cache, RCU batches).  Report that free,
 * to the old object's key, before the new alloc replaces the entry; its
 * lifetime ends now and its CPU is unknown (CS_F_UNSEEN). */
static __always_inline void report_unseen_free(struct cs_stats *st, __u64 ptr,
					       __u64 now, __u32 cpu)
{
	struct cs_live *vp = bpf_map_lookup_elem(&live, &ptr), v;
	struct cs_event *e;
	void *ring = NULL;

	STAT_INC(st, live_replaced);
	if (!vp)
		return;
	v = *vp;
	e = event_reserve(st, &ring, cpu);
	if (!e)
		return;
	fill_free(e, ptr, &v, now, 0, cpu, CS_F_UNSEEN);
	event_submit(e, ring);
}

static __always_inline int handle_alloc(__u64 call_site, const void *ptr,
					__u64 cache, __u32 bytes_req,
					__u32 bytes_alloc, int req_node,
					__u8 flags)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, cpu, node;
	struct cs_live v = {};
	struct cs_stats *st;
	struct cs_event *e;
	__u64 key = (__u64)ptr, now;
	void *ring = NULL;
	int err;

	if (key <= 16)	/* NULL and ZERO_SIZE_PTR */
		return 0;
	if (!traced(tgid))
		return 0;
	st = stats_get();
	now = bpf_ktime_get_ns();
	cpu = bpf_get_smp_processor_id();
	node = bpf_get_numa_node_id();

	v.ts_ns = now;
	v.cache = cache;
	v.call_site = call_site;
	v.tgid = tgid;
	v.bytes_alloc = bytes_alloc;
	v.cpu = cpu;
	v.node = node;
	v.flags = flags;
	err = bpf_map_update_elem(&live, &key, &v, BPF_NOEXIST);
	if (err == -EEXIST) {
		report_unseen_free(st, key, now, cpu);
		bpf_map_update_elem(&live, &key, &v, BPF_ANY);
	} else if (!err) {
		STAT_INC(st, live_inserted);
	}
	remember_comm(tgid);

	e = event_reserve(st, &ring, cpu);
	if (!e)
		return 0;
	e->ts_ns = now;
	e->tgid = tgid;
	e->pid = (__u32)id;
	e->cpu = cpu;
	e->node = node;
	e->type = CS_EV_SLAB_ALLOC;
	e->flags = flags;
	e->order = 0;
	e->slab.cache = cache;
	e->slab.ptr = key;
	e->slab.call_site = call_site;
	e->slab.bytes_req = bytes_req;
	e->slab.bytes_alloc = bytes_alloc;
	e->slab.lifetime_ns = 0;
	e->slab.alloc_cpu = cpu;
	e->slab.alloc_node = node;
	e->slab.req_node = req_node;
	e->slab.pad = 0;
	event_submit(e, ring);
	return 0;
}

static __always_inline int handle_free(__u64 call_site, const void *ptr)
{
	__u64 key = (__u64)ptr;
	struct cs_live *vp, v;
	struct cs_stats *st;
	struct cs_event *e;
	void *ring = NULL;
	__u32 cpu;

	if (key <= 16)
		return 0;
	vp = bpf_map_lookup_elem(&live, &key);
	st = stats_get();
	if (!vp) {
		STAT_INC(st, free_unmatched);
		return 0;
	}
	v = *vp;
	/* Two frees racing for one object: only the one that deletes reports. */
	if (bpf_map_delete_elem(&live, &key))
		return 0;
	STAT_INC(st, live_deleted);

	cpu = bpf_get_smp_processor_id();
	e = event_reserve(st, &ring, cpu);
	if (!e)
		return 0;
	fill_free(e, key, &v, bpf_ktime_get_ns(), call_site, cpu, 0);
	event_submit(e, ring);
	return 0;
}

static __always_inline __u64 kmalloc_id(__u64 bytes_alloc)
{
	return bytes_alloc < CS_KMALLOC_ID_MAX ? bytes_alloc : CS_KMALLOC_ID_MAX - 1;
}

/* ---- page cache ---- */

struct folio_id {
	__u64 ino;
	__u64 index;
	__u32 dev;
	__u32 order;
	__u32 gen;		/* i_generation: tells a reused inode number apart */
	bool gone;		/* beyond EOF or inode exiting: truncation, not eviction */
	struct inode *host;
};

/* folio_order() without the kernel's inline helpers: PG_head in the first
 * flags word (a plain unsigned long before 6.17, memdesc_flags_t after),
 * the order in the low byte of _flags_1. */
static __always_inline __u32 folio_order_of(struct folio *folio)
{
	unsigned long flags = 0, flags1 = 0;
	int head = bpf_core_enum_value(enum pageflags, PG_head);

	bpf_core_read(&flags, sizeof(flags), &folio->flags);
	if (!(flags & (1ul << head)))
		return 0;
	if (bpf_core_field_exists(folio->_flags_1))
		flags1 = BPF_CORE_READ(folio, _flags_1);
	return flags1 & 0xff;
}

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
 * the walk within CS_MAX_GRANULES (only folios above order 11 skip some). */
static __always_inline void granules_of(struct folio_id *fid, __u64 *first,
					__u64 *n, __u64 *stride)
{
	__u64 pages = 1ull << (fid->order & 31);

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

/* For records about the current task: check the filter, reserve a record
 * of this type and fill its header; NULL when filtered out or full. */
static __always_inline struct cs_event *task_event(__u8 type, void **ringp)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, cpu;
	struct cs_event *e;

	if (!traced(tgid))
		return NULL;
	remember_comm(tgid);
	cpu = bpf_get_smp_processor_id();
	e = event_reserve(stats_get(), ringp, cpu);
	if (!e)
		return NULL;
	e->ts_ns = bpf_ktime_get_ns();
	e->tgid = tgid;
	e->pid = (__u32)id;
	e->cpu = cpu;
	e->node = bpf_get_numa_node_id();
	e->type = type;
	e->flags = 0;
	e->order = 0;
	return e;
}

/* Emit a page-cache record for the current task, if it is traced. */
static __always_inline void emit_page(struct folio_id *fid, __u8 type,
				      __u32 refault_pages, __u32 repeat_pages,
				      __u64 refault_ns, __u64 refault_dist)
{
	void *ring = NULL;
	struct cs_event *e = task_event(type, &ring);

	if (!e)
		return;
	remember_file(fid);
	e->flags = refault_pages ? CS_F_REFAULT : 0;
	e->order = fid->order;
	e->page.ino = fid->ino;
	e->page.gen = fid->gen;
	e->page.repeat_pages = repeat_pages;
	e->page.index = fid->index;
	e->page.dev = fid->dev;
	e->page.refault_pages = refault_pages;
	e->page.refault_ns = refault_ns;
	e->page.refault_dist = refault_dist;
	event_submit(e, ring);
}

static __always_inline int handle_page_add(struct folio_id *fidp)
{
	struct cs_page_key pk = {};
	struct cs_evicted *ev, best = {};
	__u64 first, n, stride, now, *seqp, bits, old, hit;
	__u64 refault_ns = 0, refault_dist = 0;
	struct folio_id fid = *fidp;
	__u32 zero = 0, refault_pages = 0, repeat_pages = 0;
	int i;

	granules_of(&fid, &first, &n, &stride);
	pk.ino = fid.ino;
	pk.dev = fid.dev;
	pk.gen = fid.gen;
	/* Take this folio's pages out of the evicted masks whoever adds it,
	 * so that a mask never outlives the pages it describes. */
	for (i = 0; i < CS_MAX_GRANULES; i++) {
		if (i * stride >= n)
			break;
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
	emit_page(&fid, CS_EV_PAGE_ADD, refault_pages, repeat_pages, refault_ns,
		  refault_dist);
	return 0;
}

static __always_inline int handle_page_del(struct folio_id *fidp)
{
	struct cs_page_key pk = {};
	struct cs_evicted ev = {}, *evp;
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
	granules_of(&fid, &first, &n, &stride);
	pk.ino = fid.ino;
	pk.dev = fid.dev;
	pk.gen = fid.gen;
	for (i = 0; i < CS_MAX_GRANULES; i++) {
		if (i * stride >= n)
			break;
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
	emit_page(&fid, CS_EV_PAGE_DEL, 0, 0, 0, 0);
	return 0;
}

/* ---- BTF tracepoints ---- */

SEC("tp_btf/kmem_cache_alloc")
int BPF_PROG(btf_kmem_cache_alloc, unsigned long call_site, const void *ptr,
	     struct kmem_cache *s, gfp_t gfp_flags, int node)
{
	if (!ptr)
		return 0;
	remember_cache(s);
	/* typed argument: plain loads, no probe-read helper calls */
	return handle_alloc(call_site, ptr, (__u64)s, s->object_size, s->size,
			    node, 0);
}

SEC("tp_btf/kmem_cache_free")
int BPF_PROG(btf_kmem_cache_free, unsigned long call_site, const void *ptr,
	     const struct kmem_cache *s)
{
	return handle_free(call_site, ptr);
}

SEC("tp_btf/kmalloc")
int BPF_PROG(btf_kmalloc, unsigned long call_site, const void *ptr,
	     size_t bytes_req, size_t bytes_alloc, gfp_t gfp_flags, int node)
{
	return handle_alloc(call_site, ptr, kmalloc_id(bytes_alloc), bytes_req,
			    bytes_alloc, node, CS_F_KMALLOC);
}

SEC("tp_btf/kfree")
int BPF_PROG(btf_kfree, unsigned long call_site, const void *ptr)
{
	return handle_free(call_site, ptr);
}

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(btf_page_add, struct folio *folio)
{
	struct folio_id fid;

	if (!folio_identify(folio, &fid))
		return 0;
	return handle_page_add(&fid);
}

SEC("tp_btf/mm_filemap_delete_from_page_cache")
int BPF_PROG(btf_page_del, struct folio *folio)
{
	struct folio_id fid;

	if (!folio_identify(folio, &fid))
		return 0;
	return handle_page_del(&fid);
}

/* exec renames the process: refresh its comm for keys created after it */
static __always_inline int handle_exec(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	char comm[CS_COMM_LEN];

	bpf_get_current_comm(comm, sizeof(comm));
	bpf_map_update_elem(&task_comm, &tgid, comm, BPF_ANY);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(btf_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	return handle_exec();
}

/* ---- kvref's USDT probes: the user-space KV cache ---- */

static __always_inline int emit_kv(__u32 op, long block, __u64 hash, long arg)
{
	void *ring = NULL;
	struct cs_event *e = task_event(CS_EV_KV, &ring);

	if (!e)
		return 0;
	e->kv.hash = hash;
	e->kv.arg = arg;
	e->kv.block = block;
	e->kv.op = op;
	event_submit(e, ring);
	return 0;
}

SEC("usdt")
int BPF_USDT(kv_block_alloc, long block, __u64 hash, long arg)
{
	return emit_kv(CS_KV_USE, block, hash, 0);
}

SEC("usdt")
int BPF_USDT(kv_prefix_hit, long block, __u64 hash, long refcnt)
{
	/* a cached or swapped-in block taken up again is in use once more */
	return refcnt == 1 ? emit_kv(CS_KV_USE, block, hash, 0) : 0;
}

SEC("usdt")
int BPF_USDT(kv_release, long block, __u64 hash, long arg)
{
	return emit_kv(CS_KV_RELEASE, block, hash, 0);
}

SEC("usdt")
int BPF_USDT(kv_swap_out, long block, __u64 hash, long slot)
{
	return emit_kv(CS_KV_SWAP_OUT, block, hash, slot);
}

SEC("usdt")
int BPF_USDT(kv_swap_in, long block, __u64 hash, long evictions)
{
	return emit_kv(CS_KV_SWAP_IN, block, hash, evictions);
}

SEC("usdt")
int BPF_USDT(kv_pool, long n_blocks, long block_bytes, long block_size, long device)
{
	return emit_kv(CS_KV_POOL, n_blocks, device == 1, block_bytes);
}

/* ---- libcachescope_cupti.so's USDT probes: CUPTI records of GPU work ---- */

static __always_inline int emit_gpu(__u8 op, __u64 start, __u64 end, __u64 bytes,
				    __u64 addr, __u32 stream, __u16 kind)
{
	void *ring = NULL;
	struct cs_event *e = task_event(CS_EV_GPU, &ring);

	if (!e)
		return 0;
	e->gpu.start = start;
	e->gpu.end = end;
	e->gpu.bytes = bytes;
	e->gpu.addr = addr;
	e->gpu.stream = stream;
	e->gpu.kind = kind;
	e->gpu.op = op;
	e->gpu.pad = 0;
	event_submit(e, ring);
	return 0;
}

SEC("usdt")
int BPF_USDT(gpu_kernel, long name, __u64 start, __u64 end, long device, long stream)
{
	return emit_gpu(CS_GPU_KERNEL, start, end, 0, 0, stream, 0);
}

SEC("usdt")
int BPF_USDT(gpu_kv_kernel, long name, __u64 start, __u64 end, long device, long stream)
{
	return emit_gpu(CS_GPU_KV_KERNEL, start, end, 0, 0, stream, 0);
}

SEC("usdt")
int BPF_USDT(gpu_memcpy, long copy_kind, __u64 bytes, long src_kind, long dst_kind,
	     __u64 start, __u64 end, long device, long stream)
{
	return emit_gpu(CS_GPU_MEMCPY, start, end, bytes, 0, stream, copy_kind);
}

SEC("usdt")
int BPF_USDT(gpu_dropped, __u64 count, __u64 total)
{
	return emit_gpu(CS_GPU_DROPPED, 0, 0, count, 0, 0, 0);
}

SEC("usdt")
int BPF_USDT(gpu_memory, long op, __u64 address, __u64 bytes, __u64 timestamp)
{
	/* CUpti_ActivityMemoryOperationType: 1 allocation, 2 release */
	if (op != 1 && op != 2)
		return 0;
	return emit_gpu(op == 1 ? CS_GPU_ALLOC : CS_GPU_RELEASE, timestamp, timestamp,
			bytes, address, 0, 0);
}

/* ---- classic tracepoints, for kernels without the BTF ones ---- */

/* Classic kmem_cache_alloc has no cache pointer, only its name: hash the
 * name into a stable id and remember it, so records look the same. */
static __always_inline __u64 cache_id_from_name(void *ctx, __u32 data_loc)
{
	struct cs_cache_info info = {};
	__u64 h = 0xcbf29ce484222325ull;	/* FNV-1a */
	int i;

	bpf_probe_read_kernel_str(info.name, sizeof(info.name),
				  (char *)ctx + (data_loc & 0xffff));
	for (i = 0; i < CS_CACHE_NAME_LEN; i++) {
		if (!info.name[i])
			break;
		h = (h ^ (__u8)info.name[i]) * 0x100000001b3ull;
	}
	h |= 1ull << 63;	/* never a kmalloc id */
	bpf_map_update_elem(&cache_info, &h, &info, BPF_NOEXIST);
	return h;
}

SEC("tracepoint/kmem/kmem_cache_alloc")
int tp_kmem_cache_alloc(struct trace_event_raw_kmem_cache_alloc *ctx)
{
	__u64 cache;

	if (!ctx->ptr)
		return 0;
	cache = cache_id_from_name(ctx, ctx->__data_loc_name);
	return handle_alloc(ctx->call_site, ctx->ptr, cache, ctx->bytes_req,
			    ctx->bytes_alloc, ctx->node, 0);
}

SEC("tracepoint/kmem/kmem_cache_free")
int tp_kmem_cache_free(struct trace_event_raw_kmem_cache_free *ctx)
{
	return handle_free(ctx->call_site, ctx->ptr);
}

SEC("tracepoint/kmem/kmalloc")
int tp_kmalloc(struct trace_event_raw_kmalloc *ctx)
{
	return handle_alloc(ctx->call_site, ctx->ptr,
			    kmalloc_id(ctx->bytes_alloc), ctx->bytes_req,
			    ctx->bytes_alloc, ctx->node, CS_F_KMALLOC);
}

SEC("tracepoint/kmem/kfree")
int tp_kfree(struct trace_event_raw_kfree *ctx)
{
	return handle_free(ctx->call_site, ctx->ptr);
}

/* The classic page-cache events carry (dev, ino, index, order) but no
 * folio, so no file name either. */
static __always_inline void classic_fid(struct trace_event_raw_mm_filemap_op_page_cache *ctx,
					struct folio_id *fid)
{
	fid->ino = ctx->i_ino;
	fid->index = ctx->index;
	fid->dev = ctx->s_dev;
	fid->order = ctx->order;
	fid->gen = 0;
	fid->gone = false;	/* not visible here: truncations count as evictions */
	fid->host = NULL;
}

SEC("tracepoint/filemap/mm_filemap_add_to_page_cache")
int tp_page_add(struct trace_event_raw_mm_filemap_op_page_cache *ctx)
{
	struct folio_id fid;

	classic_fid(ctx, &fid);
	return handle_page_add(&fid);
}

SEC("tracepoint/filemap/mm_filemap_delete_from_page_cache")
int tp_page_del(struct trace_event_raw_mm_filemap_op_page_cache *ctx)
{
	struct folio_id fid;

	classic_fid(ctx, &fid);
	return handle_page_del(&fid);
}

SEC("tracepoint/sched/sched_process_exec")
int tp_exec(void *ctx)
{
	return handle_exec();
}
