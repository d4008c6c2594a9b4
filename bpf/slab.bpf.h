/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The slab programs' logic: an alloc remembers its object in the live map (and
 * reports the unseen free of an address handed out again); a free that finds
 * its object reports lifetime and CPUs to the allocating process.
 * A tracked object's allocation stack goes to stack.bpf.h's ring.
 * The maps it owns: live, track (with its bits track_mask), cache_info,
 * cache_seen, rnd.
 */
#ifndef CS_SLAB_BPF_H
#define CS_SLAB_BPF_H

#include "tunables.bpf.h"
#include "record.bpf.h"
#include "task.bpf.h"
#include "stack.bpf.h"

/* Per-CPU LRU lists: an insert takes no global lock.  The capacity is
 * shared out between CPUs' lists; a free on any CPU still finds its entry. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CS_LIVE_MAX_ENTRIES);
	__uint(map_flags, BPF_F_NO_COMMON_LRU);
	__type(key, __u64);
	__type(value, struct cs_live);
} live SEC(".maps");

/* Tracked objects per slot of addresses (CS_TRACK_SLOTS, cachescope.h), a
 * count a byte for each 8-byte place in the slot's 64-byte grain. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CS_TRACK_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} track SEC(".maps");

/* Which places of each slot hold a tracked object, a bit a place, a byte
 * a slot (1 MiB; four slots a word: the BPF atomics work on 32 and 64
 * bits).  Every alloc and free asks it; the counts (8 MiB) are touched
 * only when an object is tracked or forgotten.  Asking the counts cost a
 * cache miss an alloc under a server's load, most of an untracked alloc's
 * time. */
__u32 track_mask[CS_TRACK_SLOTS / 4] = {};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CS_CACHE_MAX_ENTRIES);
	__type(key, __u64);
	__type(value, struct cs_cache_info);
} cache_info SEC(".maps");

/* Caches already named in cache_info, direct-mapped by pointer: a slot
 * that holds the pointer saves the hash lookup. */
#define CS_CACHE_SEEN_SLOTS 1024

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CS_CACHE_SEEN_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} cache_seen SEC(".maps");


static __always_inline void remember_cache(const struct kmem_cache *s)
{
	struct cs_cache_info info = {};
	__u64 key = (__u64)s, *seen, id;
	const char *name;
	__u32 slot;

	/* the verifier allows no arithmetic on the pointer itself: the slot
	 * hashes a copy of it read as a number */
	bpf_probe_read_kernel(&id, sizeof(id), &key);
	slot = (__u32)((id >> 6) * 0x9e3779b97f4a7c15ull >> 54);
	seen = bpf_map_lookup_elem(&cache_seen, &slot);
	if (seen && *seen == id)
		return;
	if (seen)
		*seen = id;
	if (bpf_map_lookup_elem(&cache_info, &key))
		return;
	name = BPF_CORE_READ(s, name);
	bpf_probe_read_kernel_str(info.name, sizeof(info.name), name);
	info.object_size = BPF_CORE_READ(s, object_size);
	info.size = BPF_CORE_READ(s, size);
	bpf_map_update_elem(&cache_info, &key, &info, BPF_NOEXIST);
}

/* ---- address sampling (CS_TRACK_SLOTS in cachescope.h) ---- */

/* The track slot of an object's address: its 64-byte grain, modulo the
 * slots (a period of 64 MiB), not a hash, and its place in the grain.
 * The allocator hands out the objects of a few slab pages again and
 * again, and a page's slots share a cache line of track_mask, so the line
 * an alloc or free asks is most likely one a recent one asked: in the
 * cache.  A hash sent each to a line of its own, a cache miss an event
 * under a server's load.  The place (objects are 8-byte aligned) keeps an
 * object's neighbours in its grain from looking it up: objects of small
 * caches share a grain, and where one lived long and was tracked, every
 * free of its busy neighbours was a lookup that found nothing (tens of
 * thousands a second under redis when the bit was the grain's). */
#define CS_TRACK_GRAIN_SHIFT 6	/* a 64-byte grain: a cache line a 4 KiB page */

static __always_inline __u32 track_slot(__u64 ptr)
{
	return (ptr >> CS_TRACK_GRAIN_SHIFT) & (CS_TRACK_SLOTS - 1);
}

static __always_inline __u32 track_place(__u64 ptr)
{
	return (ptr >> 3) & 7;
}

/* The word of a slot in track_mask (bounded for the verifier), and the bit
 * of a place of the slot in it. */
#define TRACK_WORD(slot) (track_mask[((slot) / 4) & (CS_TRACK_SLOTS / 4 - 1)])
#define TRACK_BIT(slot, place) (1u << (((slot) % 4) * 8 + (place)))

/* Whether a tracked object may have this address: one load of a word that
 * is most likely in the cache. */
static __always_inline bool track_maybe(__u32 slot, __u32 place)
{
	return TRACK_WORD(slot) & TRACK_BIT(slot, place);
}

/* An object of the slot's place is tracked: count it, and the first one
 * sets the place's bit.  A count is a byte: 256 objects tracked at one
 * address modulo 64 MiB would carry into the next place's. */
static __noinline void track_add(__u32 slot, __u32 place)
{
	__u64 *cnt = bpf_map_lookup_elem(&track, &slot);
	__u32 sh = (place & 7) * 8;

	if (cnt && !((__sync_fetch_and_add(cnt, 1ull << sh) >> sh) & 0xff))
		__sync_fetch_and_or(&TRACK_WORD(slot), TRACK_BIT(slot, place));
}

/* An object of the slot's place is forgotten: the last one clears the
 * bit, and sets it again if another was tracked meanwhile (its add may
 * have set the bit before this cleared it; an add after this read sets
 * it anew). */
static __noinline void track_sub(__u32 slot, __u32 place)
{
	__u64 *cnt = bpf_map_lookup_elem(&track, &slot);
	__u32 sh = (place & 7) * 8;

	if (!cnt || ((__sync_fetch_and_add(cnt, -(1ull << sh)) >> sh) & 0xff) != 1)
		return;
	__sync_fetch_and_and(&TRACK_WORD(slot), ~TRACK_BIT(slot, place));
	if ((*(volatile __u64 *)cnt >> sh) & 0xff)
		__sync_fetch_and_or(&TRACK_WORD(slot), TRACK_BIT(slot, place));
}

/* Fill a free record of object ptr from what its alloc recorded.  A free
 * seen as it happens (extra without CS_F_UNSEEN) says whether the freeing
 * task is of the process the object was counted under and the free is its
 * own, not an interrupt's (CS_F_OWN); an unseen one runs in the task that
 * took the address over, not the freer. */
static __always_inline void fill_free(struct cs_event *e, __u64 ptr,
				      const struct cs_live *v, __u64 now,
				      __u64 call_site, __u32 cpu, __u8 extra,
				      struct cs_stats *st)
{
	__u64 id = bpf_get_current_pid_tgid();

	if (!(extra & CS_F_UNSEEN) && (__u32)(id >> 32) == v->tgid) {
		if (!in_irq_ctx())
			extra |= CS_F_OWN;
		else
			STAT_INC(st, irq_frees);
	}
	event_header(e, now, v->tgid, (__u32)id, cpu,
		     bpf_get_numa_node_id(), CS_EV_SLAB_FREE, v->flags | extra);
	e->slot = v->slot;
	e->slab.cache = v->cache;
	e->slab.ptr = ptr;
	e->slab.call_site = call_site;
	e->slab.bytes_req = 0;
	e->slab.bytes_alloc = v->bytes_alloc;
	e->slab.lifetime_ns = now > v->ts_ns ? now - v->ts_ns : 0;
	e->slab.alloc_cpu = v->cpu;
	e->slab.alloc_node = v->node;
	e->slab.req_node = -1;
	e->slab.shift = v->shift;
	e->slab.old_shift = 0;
	e->slab.old_cache = 0;
	e->slab.old_tgid = 0;
	e->slab.old_bytes = 0;
}

/* A tracked object at key was freed by a path with no tracepoint, and its
 * address is handed out again untracked: report that free alone (its key,
 * lifetime to now, CS_F_UNSEEN) and forget the object. */
static __always_inline void reclaim_unseen(__u64 key, __u32 tslot)
{
	struct cs_live *vp, v;
	struct cs_stats *st;
	struct cs_event *e;
	struct cs_rec rec;
	__u32 cpu;

	vp = bpf_map_lookup_elem(&live, &key);
	if (!vp)
		return;
	v = *vp;
	if (bpf_map_delete_elem(&live, &key))
		return;
	track_sub(tslot, track_place(key));
	st = stats_get();
	STAT_INC(st, track_reclaimed);
	cpu = bpf_get_smp_processor_id();
	e = event_reserve(st, &rec, cpu);
	if (!e)
		return;
	fill_free(e, key, &v, bpf_ktime_get_ns(), 0, cpu, CS_F_UNSEEN, st);
	event_submit(e, &rec);
}

/* Extra sample shift while this CPU's ring fills faster than the daemon
 * drains it (a burst before the sampler's next look, a daemon starved of
 * CPU): 0 below half full, then 2, 4 and 6 as it passes 1/2, 3/4 and 7/8.
 * The volume is cut here, at the source, before the ring is full: a full
 * ring would drop frees too, and a lost free is an object that looks
 * leaked.  Frees are never passed over.  Only with the sampler on auto:
 * a fixed --sample N holds, and a full ring drops, counted. */
static __always_inline __u32 ring_backoff(void)
{
	__u32 cpu;
	void *ring;
	__u64 used;

	if (!ring_backoff_on)
		return 0;
	cpu = bpf_get_smp_processor_id();
	ring = bpf_map_lookup_elem(&rings, &cpu);
	if (!ring)
		return 0;
	used = bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA);
	if (used < ring_bytes / 2)
		return 0;
	return used < ring_bytes / 4 * 3 ? 2 : used < ring_bytes / 8 * 7 ? 4 : 6;
}

/* The sampler's random numbers: xorshift64* on a state per CPU, a few
 * instructions after a lookup the verifier inlines, where
 * bpf_get_prandom_u32() is a helper call and a Tausworthe generator
 * (under a server's load the untracked alloc's largest cost after its
 * dispatch).  Seeded from the kernel's generator at a CPU's first draw.
 * A program an interrupt nests in may draw the same number as the one it
 * interrupted: no harm to a sample. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} rnd SEC(".maps");

static __always_inline __u32 sample_rand(void)
{
	__u32 zero = 0;
	__u64 *sp = bpf_map_lookup_elem(&rnd, &zero), s;

	if (!sp)
		return bpf_get_prandom_u32();
	s = *sp;
	if (!s)
		s = (__u64)bpf_get_prandom_u32() << 32 | bpf_get_prandom_u32() | 1;
	s ^= s >> 12;
	s ^= s << 25;
	s ^= s >> 27;
	*sp = s;
	return (s * 0x2545f4914f6cdd1dull) >> 32;
}

/* The first thing every alloc program asks: the sample shift when the
 * object at ptr, of the cache whose id's low half is cache_lo, is to be
 * tracked (1 in 2^shift allocs of its slot of (cache, process), at
 * random, and 1 in 2^ring_backoff() of those, plus the duty while the
 * program is attached only part of the time: kmalloc_duty_shift for
 * kmalloc's, else alloc_duty_shift, read only for an object tracked; the
 * slot in *slot), else -1,
 * after reporting the unseen free of a tracked object whose address this
 * is.  An untracked alloc costs the tgid, a random number, two multiplies
 * and two reads of global arrays (its slot's shift, its address's bit in
 * track_mask). */
static __always_inline int alloc_track(const void *ptr, __u32 cache_lo, __u32 *slot,
				       bool kmalloc)
{
	__u64 key = (__u64)ptr;
	__u32 shift, more, tslot, duty;

	if (key <= 16)	/* NULL and ZERO_SIZE_PTR */
		return -1;
	/* the task's tgid by a plain load: the verifier inlines the task */
	*slot = cs_shift_slot(cache_lo, bpf_get_current_task_btf()->tgid) & (CS_SHIFT_SLOTS - 1);
	shift = cache_shift[*slot];
	if (shift > CS_SAMPLE_SHIFT_MAX)
		shift = CS_SAMPLE_SHIFT_MAX;
	/* at random, not by address: the allocator hands the same few
	 * addresses out again and again, and an address picked once would
	 * be picked for all of its objects */
	if (!shift || !(sample_rand() & ((1u << shift) - 1))) {
		more = ring_backoff();
		if (shift + more > CS_SAMPLE_SHIFT_MAX)
			more = CS_SAMPLE_SHIFT_MAX - shift;
		if (!more || !(sample_rand() & ((1u << more) - 1))) {
			duty = kmalloc ? kmalloc_duty_shift : alloc_duty_shift;
			return shift + more + (duty > CS_DUTY_SHIFT_MAX ? CS_DUTY_SHIFT_MAX : duty);
		}
		STAT_INC(stats_get(), ring_backoff);
	}
	tslot = track_slot(key);
	if (track_maybe(tslot, track_place(key)))
		reclaim_unseen(key, tslot);
	return -1;
}

static __always_inline int handle_alloc(void *ctx, __u64 call_site, const void *ptr,
					__u64 cache, __u32 bytes_req,
					__u32 bytes_alloc, int req_node,
					__u8 flags, bool btf, __u32 shift, __u32 slot)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, cpu, node;
	struct cs_live v = {}, old = {}, *vp;
	__u64 key = (__u64)ptr, now;
	bool replaced = false;
	struct cs_stats *st;
	int err = 0;
	struct cs_event *e;
	struct cs_rec rec;
	__u32 tslot = track_slot(key);

	if (!traced(tgid)) {
		if (track_maybe(tslot, track_place(key)))
			reclaim_unseen(key, tslot);
		return 0;
	}
	st = stats_get();
	now = bpf_ktime_get_ns();
	cpu = bpf_get_smp_processor_id();
	node = bpf_get_numa_node_id();

	tgid = key_tgid(tgid, now, btf);
	v.ts_ns = now;
	v.cache = cache;
	v.tgid = tgid;
	v.bytes_alloc = bytes_alloc;
	v.cpu = cpu;
	v.node = node;
	v.flags = flags;
	v.shift = shift;
	v.slot = slot;
	/* Look first: an LRU insert takes a node from the free lists (and may
	 * shrink them) before it finds the key, and a replace takes another.
	 * An address still live was freed by a path with no tracepoint
	 * (kmem_cache_free_bulk, the network stack's per-CPU skb cache, RCU
	 * batches: every skb under network load).  Its entry is taken over
	 * in place (nothing else can touch it: the kernel just handed the
	 * address out here), and this alloc's record also reports that
	 * unseen free, to the old object's key, its lifetime ending now. */
	vp = bpf_map_lookup_elem(&live, &key);
	if (vp) {
		old = *vp;
		*vp = v;
		replaced = true;
		STAT_INC(st, live_replaced);
	} else {
		err = bpf_map_update_elem(&live, &key, &v, BPF_NOEXIST);
		if (!err) {
			STAT_INC(st, live_inserted);
			track_add(tslot, track_place(key));
		}
	}
	if (!err)	/* in the live map: inserted, or its entry taken over */
		stack_take(ctx, key, now, cache, tgid, st);
	e = event_reserve(st, &rec, cpu);
	if (!e)
		return 0;
	event_header(e, now, tgid, (__u32)id, cpu, node, CS_EV_SLAB_ALLOC,
		     flags | (replaced ? CS_F_UNSEEN : 0));
	e->slot = slot;
	e->slab.cache = cache;
	e->slab.ptr = key;
	e->slab.call_site = call_site;
	e->slab.bytes_req = bytes_req;
	e->slab.bytes_alloc = bytes_alloc;
	e->slab.alloc_cpu = cpu;
	e->slab.alloc_node = node;
	e->slab.req_node = req_node;
	e->slab.shift = shift;
	/* old_* only where replaced: a select on them makes the compiler
	 * read the stack slot of old on the other path too.  old starts
	 * zeroed for the same reason: clang may still hoist a read of it
	 * out of the branch, and the verifier refuses the read of a slot
	 * another variable shares on the other path */
	if (replaced) {
		e->slab.old_shift = old.shift;
		e->slab.lifetime_ns = now > old.ts_ns ? now - old.ts_ns : 0;
		e->slab.old_cache = old.cache;
		e->slab.old_tgid = old.tgid;
		e->slab.old_bytes = old.bytes_alloc;
	} else {
		e->slab.old_shift = 0;
		e->slab.lifetime_ns = 0;
		e->slab.old_cache = 0;
		e->slab.old_tgid = 0;
		e->slab.old_bytes = 0;
	}
	event_submit(e, &rec);
	return 0;
}

static __always_inline int handle_free(__u64 call_site, const void *ptr)
{
	__u64 key = (__u64)ptr;
	struct cs_live *vp, v;
	struct cs_stats *st;
	struct cs_event *e;
	struct cs_rec rec;
	__u32 cpu, tslot;

	if (key <= 16)
		return 0;
	/* never tracked (sampled out, or allocated before we started): one
	 * bit read, no hash lookup */
	tslot = track_slot(key);
	if (!track_maybe(tslot, track_place(key)))
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
	track_sub(tslot, track_place(key));
	STAT_INC(st, live_deleted);

	cpu = bpf_get_smp_processor_id();
	e = event_reserve(st, &rec, cpu);
	if (!e)
		return 0;
	fill_free(e, key, &v, bpf_ktime_get_ns(), call_site, cpu, 0, st);
	event_submit(e, &rec);
	return 0;
}

static __always_inline __u64 kmalloc_id(__u64 bytes_alloc)
{
	return bytes_alloc < CS_KMALLOC_ID_MAX ? bytes_alloc : CS_KMALLOC_ID_MAX - 1;
}

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

#endif /* CS_SLAB_BPF_H */
