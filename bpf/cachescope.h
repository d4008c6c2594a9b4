/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Records and counters shared by the BPF programs and the daemon.
 *
 * Every record starts with the same header, so the daemon can decode a ring
 * buffer sample by looking at one byte.  Strings never travel per event: a slab
 * cache is named by its kmem_cache pointer (resolved once through the
 * cache_info map) and a process by its tgid (comm resolved once through the
 * task_comm map).
 */
#ifndef CACHESCOPE_H
#define CACHESCOPE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define CS_COMM_LEN		16
#define CS_CACHE_NAME_LEN	32

/* Default sizes; the daemon overrides them before load. */
#define CS_RINGBUF_BYTES	(4u << 20)	/* per CPU */
#define CS_LIVE_MAX_ENTRIES	(256u << 10)
#define CS_EVICTED_MAX_ENTRIES	(128u << 10)
#define CS_CACHE_MAX_ENTRIES	4096
#define CS_COMM_MAX_ENTRIES	16384
#define CS_TGID_MAX_ENTRIES	1024
#define CS_TREE_MAX_ENTRIES	65536	/* --pid-tree: the roots' descendants too */
#define CS_MAX_CPUS		1024

/* Sampling of slab objects.  An alloc is tracked (live map, a record at its
 * alloc and at its free) with probability 2^-shift, at random (the
 * allocator reuses few addresses, so a choice by address would be all or
 * nothing for a busy cache), the shift set by the daemon, per slot of
 * caches, from the rate of records it receives (0: every object, the
 * default below the record budget).  A tracked object stands for 2^shift objects in the daemon's
 * counts, alloc and free alike, so counts stay unbiased and a free always
 * pairs with its alloc.  The track array counts tracked objects per slot
 * (an address's 64-byte grain, modulo the slots: 64 MiB) and place in it
 * (8 bytes), and the bitmap track_mask says which places hold any: a free
 * whose bit is clear was never tracked and leaves after one load, with
 * no hash lookup, whatever the shift was when it was allocated.  A place's
 * count only ever errs high (an LRU eviction of the live map does not
 * decrement it), which costs a lookup, never a missed free. */
#define CS_TRACK_BITS		20
#define CS_TRACK_SLOTS		(1u << CS_TRACK_BITS)
#define CS_SAMPLE_SHIFT_MAX	10

/* Sampling in time, --budget's last levels: the alloc programs
 * (kmem_cache_alloc, kmalloc) are attached 1/2^duty of the time (the
 * daemon attaches and detaches them; while detached an alloc costs
 * nothing, not even the dispatch), and a tracked object stands for 2^duty
 * more (alloc_duty_shift, added to its shift).  The frees stay attached,
 * and every tracked object's free is seen, unless --sample-time-frees
 * cycles them too: a tracked object freed while they are off is reported
 * when a slice sees its address handed out again (reclaim_unseen,
 * CS_F_UNSEEN). */
#define CS_DUTY_SHIFT_MAX	3
#define CS_RECORD_SHIFT_MAX	(CS_SAMPLE_SHIFT_MAX + CS_DUTY_SHIFT_MAX)

/* The shift is per slot of (cache, process): a busy cache of a busy
 * process is thinned, a quiet one keeps every object -- and so does a
 * quiet process in a cache a busy one fills (a leak of 15 files a second
 * beside a web server's thousands).  The slot hashes the low 32 bits of
 * the cache id (a kmem_cache pointer, a kmalloc size, a hashed name) with
 * the allocating process's tgid (the task's own, before any folding into
 * a key); the programs compute it at the alloc, keep it with the object,
 * and send it in both records (cs_event.slot), which the daemon counts. */
#define CS_SHIFT_SLOT_BITS	10
#define CS_SHIFT_SLOTS		(1u << CS_SHIFT_SLOT_BITS)

static inline __u32 cs_shift_slot(__u32 id_lo, __u32 tgid)
{
	return ((id_lo ^ (tgid * 0x85ebca6bu)) * 2654435761u) >> (32 - CS_SHIFT_SLOT_BITS);
}

/* Evicted pages are remembered per granule of 64 pages: one map entry per
 * granule, one mask bit per page.  So a page evicted as part of one folio is
 * still recognised when readahead brings it back in a folio of another
 * order, and a folio of up to order 11 touches at most 32 granules. */
#define CS_GRANULE_SHIFT	6
#define CS_GRANULE_PAGES	(1u << CS_GRANULE_SHIFT)
#define CS_MAX_GRANULES		32

enum cs_event_type {
	CS_EV_SLAB_ALLOC = 1,
	CS_EV_SLAB_FREE = 2,
	CS_EV_PAGE_ADD = 3,
	CS_EV_PAGE_DEL = 4,
	CS_EV_KV = 5,		/* a KV-cache block event from kvref's USDT probes */
	CS_EV_GPU = 6,		/* a CUPTI record, from libcachescope_cupti.so's probes */
};

/* cs_event.gpu.op, cs_gpu_bin.op */
enum cs_gpu_op {
	CS_GPU_KERNEL = 1,	/* count, busy_ns over [start, end) */
	CS_GPU_KV_KERNEL = 2,	/* the same, for the KV-cache kernels again */
	CS_GPU_MEMCPY = 3,	/* kind: CUpti_ActivityMemcpyKind; count, bytes, busy_ns */
	CS_GPU_ALLOC = 4,	/* count allocations of size bytes each, bytes in all */
	CS_GPU_RELEASE = 5,	/* the same, released */
	CS_GPU_DROPPED = 6,	/* bytes: records CUPTI dropped (one buffer's worth) */
	/* copies seen at the runtime API (CUPTI's callbacks), by host address:
	 * a device-to-host copy into a host buffer, and a host-to-device copy
	 * from a host buffer that one went to (a block that left the device
	 * and came back); count, bytes */
	CS_GPU_SWAP_OUT = 7,
	CS_GPU_SWAP_IN = 8,	/* kind CS_GPU_NEAR: back within a pool's worth */
	CS_GPU_OP_LAST = CS_GPU_SWAP_IN,
};

/*
 * The CUPTI library's batch probe: the records of one buffer of CUPTI
 * activity, folded into bins of CS_GPU_BIN_NS of GPU time by class (op,
 * copy kind, allocation size), and handed over as one array of up to
 * CS_GPU_BATCH_MAX bins; the BPF program makes a record of each bin.
 * A kernel or copy is counted in the bin it began in and its run time
 * (and a copy's bytes, in proportion) is split over the bins it ran in;
 * one that ran over more than CS_GPU_SPLIT_BINS bins is a bin of its own,
 * [start, end) its run.
 */
#define CS_GPU_BIN_NS		1000000ull	/* 1 ms */
/* What a record or bin may hold: the library starts another bin rather
 * than pass these, and the daemon rejects any over them (daemon/usdt.h) */
#define CS_GPU_MAX_SPAN_NS	(3600ull * 1000000000ull)	/* one kernel or copy */
#define CS_GPU_MAX_BYTES	(1ull << 42)	/* copied, allocated, released */
#define CS_GPU_MAX_COUNT	(1u << 20)	/* records begun in one bin */
#define CS_GPU_MAX_CONCURRENT	1024		/* busy time over a bin's span */
#define CS_GPU_MEMCPY_KINDS	16		/* CUpti_ActivityMemcpyKind below this */
#define CS_GPU_MAX_DROPPED	(1ull << 32)	/* records CUPTI dropped, one report */
#define CS_GPU_SPLIT_BINS	8
#define CS_GPU_BATCH_MAX	256
#define CS_GPU_BATCH_VERSION	1	/* the layout of struct cs_gpu_bin */
#define CS_GPU_AGE_KNOWN	1	/* cs_gpu_bin.kind of a release */
#define CS_GPU_NEAR		1	/* cs_gpu_bin.kind of a swap-in */

struct cs_gpu_bin {
	__u64 start, end;	/* the bin's time, CUPTI's clock (ns); 0, 0
				 * for the count of dropped records */
	__u64 busy_ns;	/* run time of kernels or copies within the bin;
			 * releases of kind CS_GPU_AGE_KNOWN: how long
			 * before start their allocations were made */
	__u64 bytes;	/* copied, allocated, released; dropped: records */
	__u64 size;	/* allocations, releases: the size of each */
	__u32 count;	/* records begun in the bin */
	__u16 kind;	/* copies: CUpti_ActivityMemcpyKind; releases:
			 * CS_GPU_AGE_KNOWN, or 0 (allocations not seen) */
	__u8 op;	/* enum cs_gpu_op */
	__u8 pad;
};

/* cs_event.kv.op */
enum cs_kv_op {
	CS_KV_USE = 1,		/* block taken into use (alloc, or reused at refcount 1) */
	CS_KV_RELEASE = 2,	/* last reference dropped */
	CS_KV_SWAP_OUT = 3,	/* evicted to the swap file */
	CS_KV_SWAP_IN = 4,	/* read back; arg: evictions since its swap-out */
	CS_KV_POOL = 5,		/* a pool was made: block = n_blocks, arg = block bytes,
				 * hash = 1 if it is in GPU memory */
};

/* cs_event.flags */
#define CS_F_KMALLOC	(1u << 0)	/* allocated with kmalloc, cache is synthetic */
#define CS_F_REFAULT	(1u << 1)	/* page add matched a recent eviction */
#define CS_F_UNSEEN	(1u << 2)	/* slab free no tracepoint reported: the
					 * address was handed out again while
					 * still live in the map (bulk, per-CPU
					 * skb cache, RCU batch frees); on an
					 * alloc record: it carries that free
					 * of the object it replaced (old_*) */
#define CS_F_RANGE	(1u << 3)	/* user-space probe record: an argument
					 * did not fit its field (block index,
					 * stream, copy kind) or a device id was
					 * out of range; the daemon rejects it */
#define CS_F_OWN	(1u << 4)	/* slab free by a thread of the process
					 * the object was allocated under, in
					 * its own context: a hand-off inside
					 * one program, not between programs
					 * (a socket's peer, a kernel thread)
					 * nor in an interrupt (whose current
					 * task is a bystander) */
#define CS_F_KTHREAD	(1u << 5)	/* page-cache delete by a kernel thread
					 * (reclaim: kswapd, DAMON's kdamond;
					 * writeback workers): the daemon counts
					 * all its files in one key, not a key
					 * per file it evicts from */
#define CS_F_FOREIGN	(1u << 6)	/* user-space probe record of a process
					 * the operator did not choose to
					 * believe: not named by --pid or
					 * --cgroup, its real uid not one of
					 * --probe-user's (root by default);
					 * the daemon rejects it unless it
					 * started the process (--workload) */

/* What --budget sheds, in this order while over it at the sampler's floor
 * (shed_mask): the page-cache programs (no refaults, so no thrash label
 * on files, while shed), then kmalloc's allocations (no new kmalloc-*
 * objects tracked; the frees of those tracked still are). */
#define CS_SHED_PAGE		(1u << 0)
#define CS_SHED_KMALLOC		(1u << 1)

/* users whose processes' probe records are believed (--probe-user) */
#define CS_PROBE_UIDS		8

#define CS_GPU_MAX_DEVICES	1024

/* Key ids that are not processes.  A process younger than the daemon's fold
 * age is counted under its command's family: CS_TGID_FAMILY | a 30-bit hash
 * of its real uid and its comm (pid_max is at most 2^22, so no tgid looks
 * like one).  Any process can set its comm: with the uid in the hash, a
 * user's fork storm named like another user's server is a family of its
 * own, not that server's.  The
 * daemon's catch-all key of a cache, CS_TGID_OTHER, holds what it stopped
 * tracking apart: keys of exited processes, keys past its key budget. */
#define CS_TGID_FAMILY		0x40000000u
#define CS_TGID_FAMILY_MASK	0x3fffffffu
#define CS_TGID_OTHER		0x80000000u

static inline __u32 cs_family_of(__u32 uid, const char *comm)
{
	__u32 h = 2166136261u;	/* FNV-1a, 32 bits */
	int i;

	for (i = 0; i < 4; i++)
		h = (h ^ ((uid >> (8 * i)) & 0xff)) * 16777619u;
	for (i = 0; i < CS_COMM_LEN && comm[i]; i++)
		h = (h ^ (unsigned char)comm[i]) * 16777619u;
	return CS_TGID_FAMILY | (h & CS_TGID_FAMILY_MASK);
}

/* A slab cache id is the kmem_cache pointer (a kernel address, far above
 * 4 GiB), or for kmalloc objects the allocated size, which the daemon names
 * "kmalloc-<size>": the tracepoint does not say which kmalloc cache served. */
#define CS_KMALLOC_ID_MAX	(1ull << 32)

struct cs_event {
	__u64 ts_ns;		/* bpf_ktime_get_ns() (CLOCK_MONOTONIC) */
	__u32 tgid;		/* allocating process for slab records, or its
				 * family (CS_TGID_FAMILY) while it is young */
	__u32 pid;
	__u16 cpu;
	__u16 node;		/* NUMA node of the CPU at the event */
	__u8 type;		/* enum cs_event_type */
	__u8 flags;
	union {
		__u16 order;	/* page cache: folio order */
		__u16 slot;	/* slab: the object's sample slot (cs_shift_slot) */
	};
	union {
		struct {
			__u64 cache;	/* kmem_cache pointer or kmalloc id */
			__u64 ptr;
			__u64 call_site;
			__u32 bytes_req;
			__u32 bytes_alloc;
			/* free records: what the alloc recorded; an alloc
			 * with CS_F_UNSEEN also reports the unseen free of
			 * the object it replaced: its lifetime here, its
			 * key and size in old_* */
			__u64 lifetime_ns;
			__u16 alloc_cpu;
			__u16 alloc_node;
			__s16 req_node;	/* alloc: node asked for, -1 if any */
			/* the object stands for 2^shift objects (address
			 * sampling, see CS_TRACK_SLOTS); old_shift: the
			 * replaced object's, on an alloc with CS_F_UNSEEN */
			__u8 shift;
			__u8 old_shift;
			__u64 old_cache;
			__u32 old_tgid;
			__u32 old_bytes;
		} slab;
		struct {
			__u64 ino;
			__u64 index;
			__u32 dev;
			__u32 refault_pages;	/* pages of the folio that refaulted */
			/* refaults: time and evictions since the eviction */
			__u64 refault_ns;
			__u64 refault_dist;
			__u32 gen;	/* i_generation: a reused inode number is another file */
			__u32 repeat_pages;	/* of refault_pages: pages that had
						 * refaulted before (thrash, not a
						 * one-off cold read) */
		} page;
		struct {
			__u64 hash;
			__s64 arg;
			__u32 block;
			__u32 op;	/* enum cs_kv_op */
		} kv;
		struct {
			__u64 start, end;	/* CUPTI timestamps, ns: a bin, or
						 * one record's run (per-record
						 * probes) */
			__u64 bytes;
			__u64 busy_ns;
			__u64 size;
			__u32 count;
			__u16 kind;
			__u8 op;	/* enum cs_gpu_op */
			__u8 pad;
		} gpu;
	};
};

/* Run times of the slab and page-cache programs, measured by the programs
 * themselves under --bpf-stats (the kernel's accounting gives a mean that
 * an interrupt taken mid-run inflates; this gives the median): per program
 * kind, CS_RUN_BUCKETS buckets of CS_RUN_BUCKET_NS, the last one open. */
enum cs_run_prog { CS_RUN_ALLOC, CS_RUN_FREE, CS_RUN_KMALLOC, CS_RUN_KFREE,
		   CS_RUN_PAGE_ADD, CS_RUN_PAGE_DEL, CS_RUN_PROGS };
#define CS_RUN_BUCKETS		256
#define CS_RUN_BUCKET_NS	8

/* Per-CPU counters, one array slot per CPU (percpu array of one element). */
struct cs_stats {
	__u64 produced;		/* records the programs tried to emit */
	__u64 dropped;		/* ring buffer reserve failures */
	__u64 live_inserted;	/* new keys in the live-object map */
	__u64 live_deleted;	/* frees that found their object */
	__u64 live_replaced;	/* alloc over a live entry: an unseen free,
				 * reported as a CS_F_UNSEEN free record */
	__u64 free_unmatched;	/* frees of objects we did not see allocated */
	__u64 track_reclaimed;	/* untracked allocs over a tracked address:
				 * its unseen free, reported alone */
	__u64 evicted_inserted;
	__u64 evicted_deleted;	/* (unused: granules stay to tell repeats) */
	__u64 evictions;	/* page-cache deletes seen (all processes) */
	__u64 truncations;	/* deletes by truncate or inode eviction */
	__u64 no_ring;		/* no ring buffer for this CPU */
	__u64 stack_sampled;	/* user stacks copied for tracked objects */
	__u64 stack_limited;	/* not copied: the process's share a second spent */
	__u64 stack_dropped;	/* not copied: the stack ring was full */
	__u64 irq_frees;	/* frees in an interrupt while a thread of the
				 * object's process ran: not its own (in_irq_ctx) */
	__u64 ring_backoff;	/* allocs the sampler would track, passed
				 * over while this CPU's ring was over half
				 * full (ring_backoff(): those tracked then
				 * stand for more, their shift says how many) */
};

/* A tracked slab object's allocation stack, for the daemon to unwind while
 * the process is there (stack.bpf.h): the user registers at the system
 * call, as DWARF numbers them (x86-64: rax rdx rcx rbx rsi rdi rbp rsp
 * r8-r15, then the return address column, rip), a copy of the user stack
 * from rsp up, and the kernel's own path.  Taken for the tracked objects
 * of the keys the daemon names in stack_keys, at most --leak-stacks a
 * second per process; the object is known by (ptr, ts_ns), as its free
 * record will name it. */
#define CS_STACK_BYTES		8192
#define CS_STACK_CHUNK		512
#define CS_STACK_REGS		17
#define CS_STACK_KFRAMES	12
#define CS_STACK_RING_BYTES	(2u << 20)
#define CS_STACK_KEYS		256

/* A key of stack_keys: the slab keys whose allocation stacks are taken. */
struct cs_stack_key {
	__u64 cache;
	__u32 tgid;
	__u32 pad;
};

/* CPython 3.11's frames (x86-64), as the interpreter keeps them: read by
 * stack.bpf.h in a Python process the daemon registered (py_procs, the
 * address of its _PyRuntime), from the thread's state down its frame
 * chain.  The offsets are 3.11's (Include/internal/pycore_*.h, checked
 * against the headers by tests/test_pyoffsets.c); the daemon registers a
 * process only when its interpreter's Py_Version says 3.11. */
#define CS_PY_FRAMES		4
#define CS_PY_THREADS		64	/* threads searched for the current one */
#define CS_PY_RT_INTERP_HEAD	40	/* _PyRuntimeState.interpreters.head */
#define CS_PY_IS_THREADS_HEAD	16	/* PyInterpreterState.threads.head */
#define CS_PY_TS_NEXT		8	/* PyThreadState.next */
#define CS_PY_TS_CFRAME		56	/* PyThreadState.cframe */
#define CS_PY_TS_NATIVE_ID	160	/* PyThreadState.native_thread_id */
#define CS_PY_CF_CURRENT	8	/* _PyCFrame.current_frame */
#define CS_PY_IF_CODE		32	/* _PyInterpreterFrame.f_code */
#define CS_PY_IF_PREVIOUS	48	/* _PyInterpreterFrame.previous */
#define CS_PY_CO_FIRSTLINENO	72	/* PyCodeObject.co_firstlineno */
#define CS_PY_CO_FILENAME	112	/* PyCodeObject.co_filename */
#define CS_PY_CO_QUALNAME	128	/* PyCodeObject.co_qualname */
#define CS_PY_STR_LENGTH	16	/* PyASCIIObject.length */
#define CS_PY_STR_STATE		32	/* PyASCIIObject.state (bit 6: ascii, bit 5: compact) */
#define CS_PY_STR_ASCII_DATA	48	/* sizeof(PyASCIIObject): a compact ASCII string's text */

struct cs_py_frame {
	char name[40];		/* co_qualname ("" where not ASCII) */
	char file[48];		/* co_filename's last 47 characters */
	__u32 line;		/* co_firstlineno: the def line */
	__u32 pad;
};

struct cs_stack {
	__u64 ts_ns;		/* the object's allocation (its live entry's) */
	__u64 ptr;
	__u64 cache;
	__u32 tgid;		/* the key id the alloc was counted under */
	__u32 pid;		/* the process (tgid) whose memory this is */
	__u32 tid;
	__u32 len;		/* bytes of stack copied, from regs[7] up */
	__u32 nkframes;
	__u32 npy;		/* Python frames, innermost first */
	__u64 regs[CS_STACK_REGS];
	__u64 kframes[CS_STACK_KFRAMES];
	struct cs_py_frame py[CS_PY_FRAMES];
	__u8 data[CS_STACK_BYTES];
};

/* Value of the live-object map (key: object pointer). */
struct cs_live {
	__u64 ts_ns;
	__u64 cache;
	__u32 tgid;		/* the key id the alloc was counted under */
	__u32 bytes_alloc;
	__u16 cpu;
	__u16 node;
	__u8 flags;
	__u8 shift;		/* sampled at 1 in 2^shift addresses */
	__u16 slot;		/* its sample slot: both records carry it */
};

/* Key and value of the evicted-page map. */
struct cs_page_key {
	__u64 ino;
	__u64 granule;
	__u32 dev;
	__u32 gen;		/* inode generation (0 from classic tracepoints) */
};

struct cs_evicted {
	__u64 ts_ns;		/* last eviction in the granule */
	__u64 seq;		/* its global page-cache eviction sequence */
	__u64 mask;		/* pages of the granule evicted and not back */
	__u64 refaulted;	/* pages that came back from an eviction at
				 * least once: a refault of one of them is a
				 * repeat, the mark of thrash */
};

/* Key of the file-name map: one name per inode generation, so a file that
 * gets a deleted file's inode number has its own entry. */
struct cs_file_key {
	__u64 ino;
	__u32 dev;
	__u32 gen;
};

struct cs_cache_info {
	char name[CS_CACHE_NAME_LEN];
	__u32 object_size;
	__u32 size;
};

#endif /* CACHESCOPE_H */
