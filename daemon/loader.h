/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Loads and attaches the tracing programs, owns the per-CPU ring buffers,
 * and reads back the kernel-side counters and names.
 */
#ifndef CS_LOADER_H
#define CS_LOADER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "../bpf/cachescope.h"
#include "args.h"

struct cachescope_bpf;
struct ring_buffer;

/* Called for every record; cpu is the ring it came from. */
typedef int (*loader_sample_fn)(void *ctx, int cpu, const void *data, size_t size);
/* a record of the allocation stacks' ring (struct cs_stack), ctx sample_fn's */
typedef void (*loader_stack_fn)(void *ctx, const void *data, size_t size);

#define LOADER_NR_TP 9	/* the last two: --pid-tree only */

/* The tracepoints, as loader.c's tps[] lists them */
enum loader_tp {
	LOADER_TP_CACHE_ALLOC,
	LOADER_TP_CACHE_FREE,
	LOADER_TP_KMALLOC,
	LOADER_TP_KFREE,
	LOADER_TP_PAGE_ADD,
	LOADER_TP_PAGE_DEL,
};

struct loader_ring {
	struct loader *ld;
	int cpu;
	int fd;
	uint64_t consumed;
};

struct loader {
	struct cachescope_bpf *skel;
	struct ring_buffer *rb;
	struct loader_ring *rings;
	int nr_cpus;
	loader_sample_fn sample_fn;
	loader_stack_fn stack_fn;	/* loader_on_stacks, or NULL */
	void *sample_ctx;
	bool classic[LOADER_NR_TP];	/* which events use a classic tracepoint */
	int stats_fd;			/* held while run-time stats are on, or -1 */
	int cgroup_fd;			/* --cgroup's directory until installed, or -1 */
};

struct loader_prog_stats {
	const char *name;
	uint64_t recursion_misses;
	uint64_t run_cnt, run_time_ns;	/* only with --bpf-stats */
};

/* Check root/capabilities and BTF, open, size, load and attach.  Logs one
 * line naming the cause and returns -errno on failure. */
int loader_start(struct loader *ld, const struct env *env,
		 loader_sample_fn fn, void *ctx);
/* Hand the allocation stacks' records to fn (with sample_fn's ctx) from
 * now on; before, they are read and dropped. */
void loader_on_stacks(struct loader *ld, loader_stack_fn fn);
/* Take the allocation stacks of key (tgid, cache)'s tracked objects until
 * until_ns (CLOCK_MONOTONIC); until_ns 0: of no key (the programs skip
 * the look-up).  0, or -errno. */
int loader_want_stacks(struct loader *ld, uint32_t tgid, uint64_t cache, uint64_t until_ns);
/* Process pid is a CPython 3.11 whose _PyRuntime is at runtime (0: is no
 * more): the stacks taken of it carry its Python frames.  0, or -errno. */
int loader_py_register(struct loader *ld, uint32_t pid, uint64_t runtime);
/* Process pid's executable file mappings, one "start end offset path" line
 * each (hex), into buf (n bytes, NUL-terminated) through the stack_maps
 * iterator: what /proc/PID/maps tells, without the privilege it asks
 * once the daemon has dropped its own.  Bytes read, or -errno. */
ssize_t loader_read_maps(struct loader *ld, uint32_t pid, char *buf, size_t n);
/* Attach the KV-cache programs to the USDT probes of a kvref binary, for
 * every process that runs it.  Returns 0 or -errno (logged). */
int loader_attach_usdt(struct loader *ld, const char *binary);
/* Attach the GPU programs to the USDT probes of libcachescope_cupti.so
 * (every process that loads it): to its batch probe, or with per_record
 * to its probe per CUPTI record.  Returns 0 or -errno (logged). */
int loader_attach_gpu(struct loader *ld, const char *library, bool per_record);
/* Detach every program; records already in the rings stay readable. */
void loader_detach(struct loader *ld);
void loader_stop(struct loader *ld);

int loader_epoll_fd(const struct loader *ld);
/* Drain every ring.  Returns records consumed or -errno. */
int loader_drain(struct loader *ld);
uint64_t loader_consumed(const struct loader *ld);

void loader_read_stats(const struct loader *ld, struct cs_stats *sum);
/* Track 1 in 2^shift slab objects of the caches of slot from now on
 * (CS_TRACK_SLOTS, CS_SHIFT_SLOTS). */
void loader_set_sample_shift(struct loader *ld, unsigned int slot, unsigned int shift);
/* The optional programs whose work is shed (CS_SHED_*, --budget). */
void loader_set_shed(struct loader *ld, unsigned int mask);
/* Whether the program of tracepoint tp (enum loader_tp) can be detached
 * and attached again while the daemon runs: a BTF tracepoint's, loaded
 * (a classic tracepoint's would need perf_event_open's CAP_PERFMON, gone
 * after the privilege drop). */
bool loader_can_detach(const struct loader *ld, int tp);
/* Attach (on) or detach the program of tracepoint tp: 1 when it did, 0
 * where it already was, or -errno (the program stays as it was). */
int loader_set_attached(struct loader *ld, int tp, bool on);
/* The alloc programs' duty (CS_DUTY_SHIFT_MAX): what the
 * tracked objects' shifts carry on top of the sampler's. */
void loader_set_alloc_duty(struct loader *ld, unsigned int duty);
/* kmalloc's: the same while it cycles with them, 0 while it does not. */
void loader_set_kmalloc_duty(struct loader *ld, unsigned int duty);
/* Have every CPU move its staged records to its ring (before a drain that
 * must see all records up to now). */
void loader_flush(const struct loader *ld);
/* What the daemon does with its programs and maps once attached (a map
 * lookup, the flush test-run): 0 when they work with the caller's present
 * capabilities, else -errno (-EPERM: bpf() needs CAP_BPF here). */
int loader_check_access(const struct loader *ld);
/* Sum over the loaded programs; with each, also call fn (may be NULL). */
void loader_prog_stats(const struct loader *ld, struct loader_prog_stats *sum,
		       void (*fn)(const struct loader_prog_stats *ps, void *ctx),
		       void *ctx);
/* The programs' own run-time histograms (--bpf-stats): runs, median and
 * 90th percentile per program kind (CS_RUN_BUCKET_NS resolution; a value
 * of the last bucket means that much or more). */
struct loader_run_times {
	struct {
		const char *name;
		uint64_t runs, p50_ns, p90_ns;
	} prog[CS_RUN_PROGS];
};

int loader_run_times(const struct loader *ld, struct loader_run_times *rt);

/* LRU evictions of the live-object and evicted-page maps: inserted minus
 * deleted minus what the map holds now.  Walks both maps: at exit only. */
void loader_map_evictions(const struct loader *ld, const struct cs_stats *st,
			  uint64_t *live, uint64_t *evicted);

/* Names recorded by the programs; return 0 and fill buf, or -ENOENT. */
int loader_cache_name(const struct loader *ld, uint64_t cache, char *buf, size_t n);
int loader_comm(const struct loader *ld, uint32_t tgid, char *buf, size_t n);
int loader_file_name(const struct loader *ld, uint32_t dev, uint64_t ino, uint32_t gen,
		     char *buf, size_t n);

#endif
