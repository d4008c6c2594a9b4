// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The CUPTI subscriber: CUPTI hands us buffers of activity records, we walk
 * them and turn each record into a USDT probe of this library plus a few
 * counters (see cupti_sub.h for the API and environment, probes.h for the
 * probes).
 *
 * The one design idea: the traced process only fires probes, it never sends
 * anything.  USDT rather than a datagram channel to the daemon because
 *   - the daemon attaches uprobes once, by library path, and then sees
 *     every process that loads libcachescope_cupti.so, started before or
 *     after the daemon, with no registration and no per-process state;
 *   - the traced process opens no socket and makes no system call per
 *     record, and nothing can block or fail in it when the daemon is gone;
 *   - when nobody traces, a probe costs a nop and loading its arguments.
 * The price: records are only seen while a probe is attached (the counters
 * stay in the process), and string arguments must be read by the BPF
 * program while the probe fires.
 *
 * A record's cost is bounded: whether a kernel is a KV kernel is decided
 * once per function and cached (kv_cache below), since fnmatch on the
 * kilobyte-long mangled names of templated kernels, for every pattern and
 * every record, cost microseconds per record; the patterns and the cache
 * are read and replaced under one lock, so a reset while records are
 * handled never shows a half-written table.
 *
 * The CUPTI wiring follows CUPTI's documentation and Kineto: subscribe
 * first (cuptiSubscribe is how CUPTI clients claim the one subscriber slot),
 * register buffer callbacks, enable the kinds, flush every flush_ms from a
 * thread with cuptiActivityFlushAll(0), and force-flush at stop and at exit.
 * When another profiler holds CUPTI (named as CUPTI names it, in printable
 * ASCII), or there is no driver, the library says so in one line on stderr
 * and stays out of the way; those two lines are all it ever prints.  The
 * other way round, while we record, a profiler started later in the same
 * process (torch.profiler, Nsight) is refused by CUPTI: first subscriber
 * wins, as CUPTI defines it; CACHESCOPE_CUPTI=off, read at injection,
 * leaves the slot to it.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "batch.h"
#include "cupti_api.h"
#include "cupti_sub.h"
#include "probes.h"

#define SUB_ALIGN 8		/* CUPTI wants 8-byte aligned buffers */
#define SUB_MB (1024u * 1024u)
#define SUB_PATTERN_CHARS 1024
#define SUB_PLAIN_CHARS 256
#define SUB_NAME "cachescope"

_Static_assert(sizeof(struct cupti_sub_stats) % sizeof(uint64_t) == 0,
	       "cupti_sub_stats must be made of 64-bit fields only");
_Static_assert(CUPTI_SUB_MEMCPY_KINDS == CS_GPU_MEMCPY_KINDS,
	       "the copy kinds counted are the ones the daemon takes");

/* ---- configuration ---- */

/* The patterns (text, pat, glob, n) and the KV cache are read and written
 * under kv_lock only; the rest of cfg is set once and at reset, which is
 * refused while recording. */
static pthread_mutex_t kv_lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
	pthread_once_t once;
	bool kv_cache_on;		/* CACHESCOPE_KV_CACHE, default 1 */
	char text[SUB_PATTERN_CHARS];
	const char *pat[CUPTI_SUB_MAX_PATTERNS];
	bool glob[CUPTI_SUB_MAX_PATTERNS];
	unsigned int n;
	size_t buffer_bytes;
	unsigned int flush_ms;
	bool off;			/* CACHESCOPE_CUPTI=off: no subscription */
} cfg = { .once = PTHREAD_ONCE_INIT };

static struct cupti_sub_stats st;

#define ST_ADD(field, v) __atomic_add_fetch(&st.field, (v), __ATOMIC_RELAXED)

/* Read env name as a number in [lo, hi]; def when unset, -EINVAL when bad. */
static long cfg_number(const char *name, long lo, long hi, long def)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s)
		return def;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -EINVAL;
	return v;
}

/* Split text (already in cfg.text) into patterns; -E2BIG when too many. */
static int cfg_split_patterns(void)
{
	char *p = cfg.text, *tok, *save = NULL;
	size_t len;

	cfg.n = 0;
	for (tok = strtok_r(p, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*tok))
			tok++;
		len = strlen(tok);
		while (len && isspace((unsigned char)tok[len - 1]))
			tok[--len] = '\0';
		if (!len)
			continue;
		if (cfg.n == CUPTI_SUB_MAX_PATTERNS)
			return -E2BIG;
		cfg.glob[cfg.n] = strpbrk(tok, "*?[") != NULL;
		cfg.pat[cfg.n++] = tok;
	}
	return 0;
}

static void kv_cache_clear(void);

/* Append the patterns of file path, one a line ('#' starts a comment), to
 * text (size bytes), comma-separated; 0, or -1 with text as it was (the
 * file cannot be read, a pattern holds a comma, or they do not fit). */
static int cfg_append_file(char *text, size_t size, const char *path)
{
	size_t len = strlen(text), keep = len;
	char line[SUB_PATTERN_CHARS], *p, *e;
	FILE *f = fopen(path, "re");
	int err = 0;

	if (!f)
		return -1;
	while (!err && fgets(line, sizeof(line), f)) {
		if (!strchr(line, '\n') && !feof(f)) {
			err = -1;	/* longer than all the patterns may be */
			break;
		}
		if ((e = strchr(line, '#')))
			*e = '\0';
		for (p = line; isspace((unsigned char)*p); p++)
			;
		for (e = p + strlen(p); e > p && isspace((unsigned char)e[-1]); e--)
			;
		*e = '\0';
		if (!*p)
			continue;
		if (strchr(p, ',') || len + 1 + strlen(p) >= size) {
			err = -1;
			break;
		}
		len += (size_t)snprintf(text + len, size - len, "%s%s", len ? "," : "", p);
	}
	if (ferror(f))
		err = -1;
	fclose(f);
	if (err)
		text[keep] = '\0';
	return err;
}

/* Load the KV patterns: CACHESCOPE_KV_KERNELS (or the defaults), and after
 * them those of the file CACHESCOPE_KV_KERNELS_FILE names; returns how
 * many of those were ignored (more patterns in all than the library holds:
 * the defaults alone).  Takes kv_lock: records may be handled meanwhile. */
static int cfg_load_patterns(void)
{
	const char *s = getenv("CACHESCOPE_KV_KERNELS");
	const char *file = getenv("CACHESCOPE_KV_KERNELS_FILE");
	long c = cfg_number("CACHESCOPE_KV_CACHE", 0, 1, 1);
	char text[SUB_PATTERN_CHARS];
	int bad = c < 0;

	if (s && strlen(s) < sizeof(text)) {
		strcpy(text, s);
	} else {
		bad += s != NULL;
		strcpy(text, CUPTI_SUB_KV_DEFAULT);
	}
	if (file && cfg_append_file(text, sizeof(text), file))
		bad++;
	pthread_mutex_lock(&kv_lock);
	kv_cache_clear();
	cfg.kv_cache_on = c != 0;
	strcpy(cfg.text, text);
	if (cfg_split_patterns()) {
		bad++;
		strcpy(cfg.text, CUPTI_SUB_KV_DEFAULT);
		cfg_split_patterns();
	}
	pthread_mutex_unlock(&kv_lock);
	return bad;
}

/* Read the whole configuration; returns the number of values ignored. */
static int cfg_load(void)
{
	int bad = cfg_load_patterns();
	const char *mode;
	long v;

	v = cfg_number("CACHESCOPE_CUPTI_BUFFER_MB", 1, CUPTI_SUB_BUFFER_MB_MAX,
		       CUPTI_SUB_BUFFER_MB_DEFAULT);
	if (v < 0) {
		bad++;
		v = CUPTI_SUB_BUFFER_MB_DEFAULT;
	}
	cfg.buffer_bytes = (size_t)v * SUB_MB;
	v = cfg_number("CACHESCOPE_CUPTI_FLUSH_MS", 0, CUPTI_SUB_FLUSH_MS_MAX,
		       CUPTI_SUB_FLUSH_MS_DEFAULT);
	if (v < 0) {
		bad++;
		v = CUPTI_SUB_FLUSH_MS_DEFAULT;
	}
	cfg.flush_ms = (unsigned int)v;
	/* CACHESCOPE_CUPTI=off: leave CUPTI's one subscriber slot to another
	 * tool (torch.profiler, Kineto, Nsight) for this process */
	mode = getenv("CACHESCOPE_CUPTI");
	cfg.off = mode && !strcmp(mode, "off");
	if (mode && !cfg.off && strcmp(mode, "on"))
		bad++;
	ST_ADD(config_errors, (uint64_t)bad);
	return bad;
}

static void cfg_once(void)
{
	cfg_load();
}

static void cfg_ensure(void)
{
	pthread_once(&cfg.once, cfg_once);
}

/* ---- KV kernel names ---- */

/*
 * Write the plain qualified name of an Itanium-mangled name into out
 * ("_ZN4vllm24reshape_and_cache_kernelI..." gives
 * "vllm::reshape_and_cache_kernel") and return the offset of its last
 * component, or -1 when name is not mangled that way.  Only the leading
 * source names are read: template arguments, parameters and substitutions
 * end the walk.
 */
static int kv_plain_name(const char *name, char *out, size_t len)
{
	const char *p = name + 2;
	bool nested = false;
	size_t o = 0, n;
	int leaf = -1;
	char *end;

	if (name[0] != '_' || name[1] != 'Z')
		return -1;
	if (*p == 'L')
		p++;
	if (*p == 'N') {
		nested = true;
		p++;
		while (*p == 'r' || *p == 'V' || *p == 'K')
			p++;
	}
	while (isdigit((unsigned char)*p)) {
		n = strtoul(p, &end, 10);
		if (n == 0 || strnlen(end, n) < n || o + 2 + n + 1 > len)
			break;
		if (o) {
			out[o++] = ':';
			out[o++] = ':';
		}
		leaf = (int)o;
		memcpy(out + o, end, n);
		o += n;
		p = end + n;
		if (!nested)
			break;
	}
	out[o] = '\0';
	return leaf;
}

static bool kv_match(unsigned int i, const char *raw, const char *plain,
		     const char *leaf)
{
	if (!cfg.glob[i])
		return strstr(raw, cfg.pat[i]) != NULL;
	if (fnmatch(cfg.pat[i], raw, 0) == 0)
		return true;
	return plain && (fnmatch(cfg.pat[i], plain, 0) == 0 ||
			 fnmatch(cfg.pat[i], leaf, 0) == 0);
}

/* The patterns' decision; under kv_lock. */
static bool kv_decide(const char *name)
{
	char plain[SUB_PLAIN_CHARS];
	const char *leaf = NULL;
	unsigned int i;
	int off;

	off = kv_plain_name(name, plain, sizeof(plain));
	if (off >= 0)
		leaf = plain + off;
	for (i = 0; i < cfg.n; i++)
		if (kv_match(i, name, leaf ? plain : NULL, leaf))
			return true;
	return false;
}

/*
 * The decision per function.  CUPTI hands every record of one kernel the
 * same name pointer, so entries are found by pointer (4-way sets: two
 * kernels whose pointers share a set do not evict each other); an
 * entry keeps a copy of its name and a hit needs the name to be equal too,
 * so a pointer reused for another name (a module unloaded, a caller's
 * buffer) is a miss, never a wrong answer.  Bounded: SUB_KV_CACHE entries
 * and SUB_KV_CACHE_BYTES of names (names of up to SUB_KV_NAME_MAX); a name that does not fit is decided
 * every time (kv_cache_uncached).  All under kv_lock.
 */
#define SUB_KV_CACHE 1024
#define SUB_KV_WAYS 4
#define SUB_KV_CACHE_BYTES (2u << 20)
#define SUB_KV_NAME_MAX (16u << 10)

static struct {
	const char *ptr[SUB_KV_CACHE];
	char *copy[SUB_KV_CACHE];
	size_t len[SUB_KV_CACHE];
	bool kv[SUB_KV_CACHE];
	uint64_t rnd;		/* xorshift: the way a full set replaces */
	size_t bytes;
} kvc;

static void kv_cache_clear(void)
{
	unsigned int i;

	for (i = 0; i < SUB_KV_CACHE; i++) {
		free(kvc.copy[i]);
		kvc.copy[i] = NULL;
		kvc.ptr[i] = NULL;
	}
	kvc.rnd = 0x9e3779b97f4a7c15ull;
	kvc.bytes = 0;
}

/* The first entry of name's set. */
static unsigned int kv_cache_set(const char *name)
{
	uint64_t h = (uint64_t)(uintptr_t)name * 0x9e3779b97f4a7c15ull;

	return (unsigned int)(h >> 56) * SUB_KV_WAYS;
}

/* The entry of name in the set at i, or -1. */
static int kv_cache_find(unsigned int i, const char *name)
{
	unsigned int w;

	for (w = 0; w < SUB_KV_WAYS; w++)
		if (kvc.ptr[i + w] == name && strcmp(kvc.copy[i + w], name) == 0)
			return (int)(i + w);
	return -1;
}

/* The entry of the set at i to fill: an empty one, else one at random
 * (a cycle through more kernels than the cache holds still hits, where
 * replacing in turn would miss every time). */
static unsigned int kv_cache_victim(unsigned int i)
{
	unsigned int w;

	for (w = 0; w < SUB_KV_WAYS; w++)
		if (!kvc.ptr[i + w])
			return i + w;
	kvc.rnd ^= kvc.rnd << 13;
	kvc.rnd ^= kvc.rnd >> 7;
	kvc.rnd ^= kvc.rnd << 17;
	return i + (unsigned int)(kvc.rnd >> 32) % SUB_KV_WAYS;
}

/* Remember name's decision in slot i; false when it does not fit. */
static bool kv_cache_put(unsigned int i, const char *name, bool kv)
{
	size_t len = strnlen(name, SUB_KV_NAME_MAX + 1);
	char *copy;

	kvc.bytes -= kvc.copy[i] ? kvc.len[i] + 1 : 0;
	free(kvc.copy[i]);
	kvc.copy[i] = NULL;
	kvc.ptr[i] = NULL;
	if (len > SUB_KV_NAME_MAX || kvc.bytes + len + 1 > SUB_KV_CACHE_BYTES)
		return false;
	copy = malloc(len + 1);
	if (!copy)
		return false;
	memcpy(copy, name, len + 1);
	kvc.copy[i] = copy;
	kvc.ptr[i] = name;
	kvc.len[i] = len;
	kvc.kv[i] = kv;
	kvc.bytes += len + 1;
	return true;
}

bool cupti_sub_is_kv_kernel(const char *name)
{
	unsigned int i;
	bool kv;
	int hit;

	if (!name)
		return false;
	cfg_ensure();
	pthread_mutex_lock(&kv_lock);
	if (!cfg.kv_cache_on) {
		kv = kv_decide(name);
		goto cleanup;
	}
	i = kv_cache_set(name);
	hit = kv_cache_find(i, name);
	if (hit >= 0) {
		ST_ADD(kv_cache_hits, 1);
		kv = kvc.kv[hit];
		goto cleanup;
	}
	kv = kv_decide(name);
	ST_ADD(kv_cache_misses, 1);
	if (!kv_cache_put(kv_cache_victim(i), name, kv))
		ST_ADD(kv_cache_uncached, 1);
cleanup:
	pthread_mutex_unlock(&kv_lock);
	return kv;
}

/* ---- records ---- */

/*
 * What a thread handling records keeps: the batch it is filling, the
 * counters since they were last folded into st (plain adds: a record costs
 * no atomic operation), and the KV decision of the names met in this
 * batch, by pointer alone: while a batch is open its records' names stay
 * where they are (CUPTI's, for the life of the module; the handler's
 * callers, see cupti_sub.h), so a pointer is one name.  Cleared when the
 * batch is handed over.
 */
#define SUB_MEMO 64

struct sub_thread {
	struct batch b;
	struct cupti_sub_stats st;
	const char *memo_name[SUB_MEMO];
	bool memo_kv[SUB_MEMO];
};

static pthread_key_t sub_thread_key;
static pthread_once_t sub_thread_once = PTHREAD_ONCE_INIT;
static __thread struct sub_thread *sub_self;

#define TH_ADD(t, field, v) ((t)->st.field += (v))

/* Fold t's counters into st: an atomic add per field that moved. */
static void thread_fold(struct sub_thread *t)
{
	uint64_t *src = (uint64_t *)&t->st, *dst = (uint64_t *)&st;
	size_t i;

	for (i = 0; i < sizeof(st) / sizeof(uint64_t); i++) {
		if (!src[i])
			continue;
		__atomic_add_fetch(&dst[i], src[i], __ATOMIC_RELAXED);
		src[i] = 0;
	}
}

/* Hand t's batch to the batch probe, when a daemon listens, and fold its
 * counters; returns the number of bins handed over. */
static int thread_flush(struct sub_thread *t)
{
	int n = (int)t->b.n;

	if (n) {
		TH_ADD(t, batches, 1);
		TH_ADD(t, bins, (uint64_t)n);
		if (CS_GPU_HEARD(batch))
			probe_batch(t->b.bin, t->b.n);
		else
			TH_ADD(t, batches_unheard, 1);
		batch_clear(&t->b);
	}
	memset(t->memo_name, 0, sizeof(t->memo_name));
	thread_fold(t);
	return n;
}

static void thread_exit(void *p)
{
	thread_flush(p);
	free(p);
}

static void thread_key_once(void)
{
	pthread_key_create(&sub_thread_key, thread_exit);
}

/* The calling thread's state, made on its first record; NULL when out of
 * memory (records are then counted in st directly, one atomic add each,
 * and none is batched). */
static struct sub_thread *thread_self(void)
{
	struct sub_thread *t = sub_self;

	if (t)
		return t;
	pthread_once(&sub_thread_once, thread_key_once);
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	if (pthread_setspecific(sub_thread_key, t)) {
		free(t);
		return NULL;
	}
	sub_self = t;
	return t;
}

/* The KV decision for name, by this batch's memo first. */
static bool thread_is_kv(struct sub_thread *t, const char *name)
{
	unsigned int i = (unsigned int)(((uintptr_t)name * 0x9e3779b97f4a7c15ull) >> 58);

	if (t->memo_name[i] != name) {
		t->memo_kv[i] = cupti_sub_is_kv_kernel(name);
		t->memo_name[i] = name;
	}
	return t->memo_kv[i];
}

/* Make room in t's batch for one more record. */
static void thread_room(struct sub_thread *t)
{
	if (!batch_room(&t->b))
		thread_flush(t);
}

/* CUPTI's timestamps are nanoseconds of a clock since boot; one at or past
 * 2^63, a run that ends before it starts or lasts over an hour, a device
 * id past CS_GPU_MAX_DEVICES, a copy kind past the known ones or a size
 * over CS_GPU_MAX_BYTES come from no device: such a record is counted
 * (rejected) and not batched, so that it cannot spoil a bin. */
#define SUB_MAX_TS (1ull << 63)

static bool run_bad(uint64_t start, uint64_t end, uint32_t dev)
{
	return start >= SUB_MAX_TS || end >= SUB_MAX_TS || dev >= CS_GPU_MAX_DEVICES ||
	       (end && (end < start || end - start > CS_GPU_MAX_SPAN_NS));
}

static void rec_kernel(struct sub_thread *t, const cupti_sub_kernel_rec *k)
{
	const char *name = k->name ? k->name : "";
	uint64_t start = k->start, end = k->end;
	uint32_t dev = k->deviceId, stream = k->streamId, corr = k->correlationId;
	uint64_t ns = start && end > start ? end - start : 0;
	bool kv = k->name && thread_is_kv(t, k->name);

	TH_ADD(t, kernels, 1);
	TH_ADD(t, kernel_ns, ns);
	TH_ADD(t, unnamed_kernels, !k->name);
	TH_ADD(t, kv_kernels, kv);
	TH_ADD(t, kv_kernel_ns, kv ? ns : 0);
	if (CS_GPU_HEARD(kernel))
		CS_GPU_PROBE_KERNEL(kernel, name, start, end, dev, stream, corr,
				    k->gridX, k->gridY, k->gridZ, k->blockX, k->blockY, k->blockZ);
	if (kv && CS_GPU_HEARD(kv_kernel))
		CS_GPU_PROBE_KERNEL(kv_kernel, name, start, end, dev, stream, corr,
				    k->gridX, k->gridY, k->gridZ, k->blockX, k->blockY, k->blockZ);
	if (!CS_GPU_HEARD(batch))
		return;
	if (run_bad(start, end, dev)) {
		TH_ADD(t, rejected, 1);
		return;
	}
	thread_room(t);
	batch_run(&t->b, CS_GPU_KERNEL, 0, start, end, 0);
	if (kv)
		batch_run(&t->b, CS_GPU_KV_KERNEL, 0, start, end, 0);
}

static void rec_memcpy(struct sub_thread *t, const cupti_sub_memcpy_rec *m)
{
	uint32_t kind = m->copyKind, src = m->srcKind, dst = m->dstKind;
	uint64_t bytes = m->bytes, start = m->start, end = m->end;
	uint32_t dev = m->deviceId, stream = m->streamId, corr = m->correlationId;

	TH_ADD(t, memcpys, 1);
	TH_ADD(t, memcpy_bytes, bytes);
	TH_ADD(t, memcpy_bytes_by_kind[kind < CUPTI_SUB_MEMCPY_KINDS ? kind : 0], bytes);
	if (CS_GPU_HEARD(memcpy))
		CS_GPU_PROBE_MEMCPY(kind, bytes, src, dst, start, end, dev, stream, corr);
	if (!CS_GPU_HEARD(batch))
		return;
	if (run_bad(start, end, dev) || kind >= CUPTI_SUB_MEMCPY_KINDS || bytes > CS_GPU_MAX_BYTES) {
		TH_ADD(t, rejected, 1);
		return;
	}
	thread_room(t);
	batch_run(&t->b, CS_GPU_MEMCPY, (uint16_t)kind, start, end, bytes);
}

static void rec_memset(struct sub_thread *t, const cupti_sub_memset_rec *m)
{
	uint64_t bytes = m->bytes, start = m->start, end = m->end;
	uint32_t dev = m->deviceId, stream = m->streamId, corr = m->correlationId;
	uint32_t mkind = m->memoryKind;

	TH_ADD(t, memsets, 1);
	TH_ADD(t, memset_bytes, bytes);
	if (CS_GPU_HEARD(memset))
		CS_GPU_PROBE_MEMSET(bytes, start, end, dev, stream, corr, mkind);
}

/* Live bytes wrap as the atomic adds of the fold do, never overflow. */
static void live_add(struct sub_thread *t, uint64_t v)
{
	t->st.mem_live_bytes = (int64_t)((uint64_t)t->st.mem_live_bytes + v);
}

/*
 * Tables by address, for what a record alone does not say.  The device
 * allocations this process made and has not released: a release's bin
 * then says when its allocation was made, so the daemon can tell old
 * memory from young (a leak from churn).  The host buffers device memory
 * was copied out to: a copy back in from one is a block that left the
 * device and came back.  Both are rare next to kernels (a caching
 * allocator makes few allocations, an engine swaps blocks, not kernels),
 * so one lock each; linear probing with backward-shift deletion, allocated
 * at the first entry (nothing before a tracer is there).
 */
#define TAB_SLOTS 65536			/* > CUPTI_SUB_LIVE_MAX / 0.75 */
struct addr_slot {
	uint64_t addr;			/* 0: empty */
	uint64_t a, bytes;
};
struct addr_tab {
	pthread_mutex_t lock;
	struct addr_slot *slot;
	unsigned int n;
	uint64_t bytes;			/* of the entries */
};
static struct addr_tab live = { .lock = PTHREAD_MUTEX_INITIALIZER };
static struct addr_tab trips = { .lock = PTHREAD_MUTEX_INITIALIZER };

static unsigned int tab_home(uint64_t addr)
{
	return (unsigned int)((addr * 0x9e3779b97f4a7c15ull) >> 48) & (TAB_SLOTS - 1);
}

/* The slot of addr, or the empty one where it would go; t->lock held. */
static unsigned int tab_find(const struct addr_tab *t, uint64_t addr)
{
	unsigned int i;

	for (i = tab_home(addr); t->slot[i].addr && t->slot[i].addr != addr; i = (i + 1) & (TAB_SLOTS - 1))
		;
	return i;
}

/* Remember addr with (a, bytes), over what it held; false: no room. */
static bool tab_put(struct addr_tab *t, uint64_t addr, uint64_t a, uint64_t bytes)
{
	unsigned int i;
	bool ok = false;

	if (!addr)
		return false;
	pthread_mutex_lock(&t->lock);
	if (!t->slot)
		t->slot = calloc(TAB_SLOTS, sizeof(*t->slot));
	if (!t->slot)
		goto out;
	i = tab_find(t, addr);
	if (!t->slot[i].addr) {
		if (t->n >= CUPTI_SUB_LIVE_MAX)
			goto out;
		t->n++;
	} else {
		t->bytes -= t->slot[i].bytes;	/* the same address again */
	}
	t->slot[i] = (struct addr_slot){ addr, a, bytes };
	t->bytes += bytes;
	ok = true;
out:
	pthread_mutex_unlock(&t->lock);
	return ok;
}

/* Take addr out: true with its (a, bytes), false if it is not there. */
static bool tab_take(struct addr_tab *t, uint64_t addr, uint64_t *a, uint64_t *bytes)
{
	unsigned int i, j, h;
	bool found = false;

	pthread_mutex_lock(&t->lock);
	if (!t->slot || !addr)
		goto out;
	i = tab_find(t, addr);
	if (!t->slot[i].addr)
		goto out;
	found = true;
	*a = t->slot[i].a;
	*bytes = t->slot[i].bytes;
	t->bytes -= t->slot[i].bytes;
	t->n--;
	/* shift back the entries after it that would no longer be found */
	for (j = (i + 1) & (TAB_SLOTS - 1); t->slot[j].addr; j = (j + 1) & (TAB_SLOTS - 1)) {
		h = tab_home(t->slot[j].addr);
		if (((j - h) & (TAB_SLOTS - 1)) >= ((j - i) & (TAB_SLOTS - 1))) {
			t->slot[i] = t->slot[j];
			i = j;
		}
	}
	t->slot[i].addr = 0;
out:
	pthread_mutex_unlock(&t->lock);
	return found;
}

static uint64_t tab_bytes(struct addr_tab *t)
{
	uint64_t v;

	pthread_mutex_lock(&t->lock);
	v = t->bytes;
	pthread_mutex_unlock(&t->lock);
	return v;
}

static bool live_put(uint64_t addr, uint64_t ts, uint64_t bytes)
{
	return tab_put(&live, addr, ts, bytes);
}

/* When addr was allocated, forgetting it; BATCH_AGE_UNKNOWN if not known. */
static uint64_t live_take(uint64_t addr)
{
	uint64_t ts, bytes;

	return tab_take(&live, addr, &ts, &bytes) ? ts : BATCH_AGE_UNKNOWN;
}

static void rec_memory(struct sub_thread *t, const cupti_sub_memory_rec *m)
{
	uint64_t alloc_ts = BATCH_AGE_UNKNOWN;
	uint32_t op = m->memoryOperationType, mkind = m->memoryKind;
	uint64_t addr = m->address, bytes = m->bytes, ts = m->timestamp;
	uint32_t dev = m->deviceId, stream = m->streamId, corr = m->correlationId;
	bool alloc = op == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
	bool release = op == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;

	TH_ADD(t, memory_records, 1);
	if (alloc) {
		TH_ADD(t, mem_allocs, 1);
		TH_ADD(t, mem_alloc_bytes, bytes);
		live_add(t, bytes);
	} else if (release) {
		TH_ADD(t, mem_releases, 1);
		TH_ADD(t, mem_release_bytes, bytes);
		live_add(t, -bytes);
	}
	if (CS_GPU_HEARD(memory))
		CS_GPU_PROBE_MEMORY(op, addr, bytes, ts, dev, stream, mkind, corr);
	if (!(alloc || release) || !CS_GPU_HEARD(batch))
		return;
	if (ts >= SUB_MAX_TS || dev >= CS_GPU_MAX_DEVICES || bytes > CS_GPU_MAX_BYTES) {
		TH_ADD(t, rejected, 1);
		return;
	}
	if (alloc && !live_put(addr, ts, bytes))
		TH_ADD(t, mem_untracked, 1);
	if (release && (alloc_ts = live_take(addr)) == BATCH_AGE_UNKNOWN)
		TH_ADD(t, mem_unmatched, 1);
	thread_room(t);
	batch_mem(&t->b, alloc ? CS_GPU_ALLOC : CS_GPU_RELEASE, ts, bytes, alloc_ts);
}

static void rec_ext_corr(struct sub_thread *t, const cupti_sub_extcorr_rec *e)
{
	uint32_t kind = e->externalKind, corr = e->correlationId;
	uint64_t id = e->externalId;

	TH_ADD(t, ext_corrs, 1);
	if (CS_GPU_HEARD(ext_corr))
		CS_GPU_PROBE_EXT_CORR(kind, id, corr);
}


int cupti_sub_handle_record(const CUpti_Activity *rec)
{
	struct sub_thread *t;

	if (!rec)
		return -EINVAL;
	t = thread_self();
	if (!t) {	/* no memory for its state: counted, no more */
		ST_ADD(records, 1);
		ST_ADD(unbatched, 1);
		return 0;
	}
	TH_ADD(t, records, 1);
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		rec_kernel(t, (const cupti_sub_kernel_rec *)rec);
		return 0;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		rec_memcpy(t, (const cupti_sub_memcpy_rec *)rec);
		return 0;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		rec_memset(t, (const cupti_sub_memset_rec *)rec);
		return 0;
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		rec_memory(t, (const cupti_sub_memory_rec *)rec);
		return 0;
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
		rec_ext_corr(t, (const cupti_sub_extcorr_rec *)rec);
		return 0;
	default:
		TH_ADD(t, ignored, 1);
		return CUPTI_SUB_IGNORED;
	}
}

static void trip_flush(void);

int cupti_sub_flush_batch(void)
{
	struct sub_thread *t = sub_self;

	trip_flush();		/* the copy bins too */
	return t ? thread_flush(t) : 0;
}

/* n records CUPTI dropped: to the per-record probe and to the batch. */
static void sub_dropped(uint64_t n)
{
	struct sub_thread *t = thread_self();
	uint64_t total = ST_ADD(dropped, n);

	if (CS_GPU_HEARD(dropped))
		CS_GPU_PROBE_DROPPED(n, total);
	if (!t || !CS_GPU_HEARD(batch))
		return;
	thread_room(t);
	batch_dropped(&t->b, n);
}

int cupti_sub_handle_buffer(uint8_t *buf, size_t valid)
{
	CUpti_Activity *rec = NULL;
	CUptiResult r;
	int n = 0;

	if (!buf)
		return -EINVAL;
	if (!cupti_api.ActivityGetNextRecord)	/* no CUPTI found: nothing walks it */
		return -ENODEV;
	ST_ADD(buffers, 1);
	ST_ADD(buffer_bytes, valid);
	while ((r = cupti_api.ActivityGetNextRecord(buf, valid, &rec)) == CUPTI_SUCCESS) {
		cupti_sub_handle_record(rec);
		n++;
	}
	cupti_sub_flush_batch();
	if (r != CUPTI_ERROR_MAX_LIMIT_REACHED) {
		ST_ADD(buffer_errors, 1);
		return -EIO;
	}
	return n;
}

void cupti_sub_get_stats(struct cupti_sub_stats *out)
{
	const uint64_t *src = (const uint64_t *)&st;
	uint64_t *dst = (uint64_t *)out;
	size_t i;

	if (sub_self)
		thread_fold(sub_self);
	for (i = 0; i < sizeof(st) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

void cupti_sub_get_config(struct cupti_sub_config *out)
{
	unsigned int i;

	cfg_ensure();
	memset(out, 0, sizeof(*out));
	out->buffer_bytes = cfg.buffer_bytes;
	out->flush_ms = cfg.flush_ms;
	pthread_mutex_lock(&kv_lock);
	out->n_patterns = cfg.n;
	for (i = 0; i < cfg.n; i++)
		out->patterns[i] = cfg.pat[i];
	out->kv_cache = cfg.kv_cache_on;
	pthread_mutex_unlock(&kv_lock);
}

/* ---- CUPTI wiring ---- */

enum sub_state { SUB_IDLE, SUB_RECORDING, SUB_OUT };

static struct {
	pthread_mutex_t lock;		/* start, stop, reset */
	enum sub_state state;
	int out_err;			/* why SUB_OUT */
	bool atexit_set;		/* and the fork handler */
	CUpti_SubscriberHandle handle;
	uint64_t kinds;			/* the kinds CUPTI took at start */
	bool copy_cbs;			/* the runtime's copy callbacks are on */
	/* the flush thread */
	pthread_mutex_t flock;
	pthread_cond_t fcond;
	pthread_t flusher;
	bool flusher_on, flusher_stop;
} sub = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.flock = PTHREAD_MUTEX_INITIALIZER,
};

static const CUpti_ActivityKind sub_optional_kinds[] = {
	CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMSET,
	CUPTI_ACTIVITY_KIND_MEMORY2,
	CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
};

#define KIND(k) (1ull << CUPTI_ACTIVITY_KIND_##k)

/* The kinds the tracers attached now need: kernels, copies and device
 * memory for the batch probe or their own probes, memsets and external
 * correlations only for theirs (the daemon reads neither). */
static uint64_t sub_wanted(void)
{
	uint64_t k = 0;

	if (CS_GPU_HEARD(batch) || CS_GPU_HEARD(kernel) || CS_GPU_HEARD(kv_kernel) ||
	    CS_GPU_HEARD(memcpy) || CS_GPU_HEARD(memory) || CS_GPU_HEARD(dropped))
		k |= KIND(CONCURRENT_KERNEL) | KIND(MEMCPY) | KIND(MEMORY2);
	if (CS_GPU_HEARD(memset))
		k |= KIND(MEMSET);
	if (CS_GPU_HEARD(ext_corr))
		k |= KIND(EXTERNAL_CORRELATION);
	return k;
}

/*
 * Blocks that leave the device and come back.  CUPTI's copy records carry
 * no addresses, so the runtime's copy entry points are watched too (the
 * callback API, at entry): a device-to-host copy into a host buffer is a
 * block out, remembered by that buffer's address; a host-to-device copy
 * of the same size from a buffer remembered is the block back in, near
 * when fewer bytes were copied out meanwhile than the process has in
 * device memory (a pool twice the size would have kept it: the kernel's
 * workingset test, in bytes), or than 64 such blocks where its
 * allocations were not seen.  An engine that stages every block through
 * one host buffer makes each swap-in a block back (it is one).  The bins
 * of these go into one batch under trip_lock, handed over by the flush
 * thread (the copying threads are the engine's own).
 */
static const CUpti_CallbackId sub_copy_cbids[] = {
	CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000,
};
#define TRIP_POOL_BLOCKS 64
static pthread_mutex_t trip_lock = PTHREAD_MUTEX_INITIALIZER;
static struct batch trip_batch;		/* under trip_lock */
static uint64_t trip_out_bytes;		/* copied out so far, under trip_lock */

/* Hand the copy bins over; trip_lock held. */
static void trip_flush_locked(void)
{
	if (!trip_batch.n)
		return;
	ST_ADD(batches, 1);
	ST_ADD(bins, trip_batch.n);
	if (CS_GPU_HEARD(batch))
		probe_batch(trip_batch.bin, trip_batch.n);
	else
		ST_ADD(batches_unheard, 1);
	batch_clear(&trip_batch);
}

static void trip_flush(void)
{
	pthread_mutex_lock(&trip_lock);
	trip_flush_locked();
	pthread_mutex_unlock(&trip_lock);
}

static void trip_bin(uint8_t op, uint64_t ts, uint64_t bytes, bool near)
{
	pthread_mutex_lock(&trip_lock);
	if (!batch_room(&trip_batch))
		trip_flush_locked();
	batch_swap(&trip_batch, op, ts, bytes, near);
	pthread_mutex_unlock(&trip_lock);
}

static uint64_t CUPTIAPI sub_timestamp(void);

void cupti_sub_handle_copy(void *dst, const void *src, size_t bytes, int kind)
{
	uint64_t now, at, was, out, pool;
	bool near;

	if (!CS_GPU_HEARD(batch) || !bytes || bytes > CS_GPU_MAX_BYTES)
		return;
	now = sub_timestamp();
	if (kind == 2) {		/* cudaMemcpyDeviceToHost: the host side is dst */
		pthread_mutex_lock(&trip_lock);
		out = trip_out_bytes += bytes;
		pthread_mutex_unlock(&trip_lock);
		if (!tab_put(&trips, (uint64_t)(uintptr_t)dst, out, bytes))
			ST_ADD(swap_untracked, 1);
		ST_ADD(swap_outs, 1);
		trip_bin(CS_GPU_SWAP_OUT, now, bytes, false);
	} else if (kind == 1) {		/* cudaMemcpyHostToDevice: from src */
		if (!tab_take(&trips, (uint64_t)(uintptr_t)src, &at, &was) || was != bytes)
			return;
		pthread_mutex_lock(&trip_lock);
		out = trip_out_bytes - at;
		pthread_mutex_unlock(&trip_lock);
		pool = tab_bytes(&live);
		near = out <= (pool ? pool : TRIP_POOL_BLOCKS * (uint64_t)bytes);
		ST_ADD(swap_ins, 1);
		if (near)
			ST_ADD(swap_ins_near, 1);
		trip_bin(CS_GPU_SWAP_IN, now, bytes, near);
	}
}

/* The copy entry points' callbacks on or off, with the copy records; the
 * subscription held. */
static void sub_copy_callbacks(bool on)
{
	size_t i;
	bool any = false;

	if (on == sub.copy_cbs)
		return;
	for (i = 0; i < sizeof(sub_copy_cbids) / sizeof(sub_copy_cbids[0]); i++)
		any |= cupti_api.EnableCallback(on, sub.handle, CUPTI_CB_DOMAIN_RUNTIME_API,
						sub_copy_cbids[i]) == CUPTI_SUCCESS;
	sub.copy_cbs = on && any;
	__atomic_store_n(&st.copy_callbacks, sub.copy_cbs, __ATOMIC_RELAXED);
}

/*
 * Enable the kinds of want that CUPTI took at start and disable the rest:
 * CUPTI collects only what a tracer attached now reads.  Called by the
 * flush thread (switch: counted in collect_on, collect_off), and by start
 * before there is one; disabling a kind leaves the records already
 * collected to the next flush.
 */
static void sub_collect(uint64_t want, bool counted)
{
	uint64_t now = __atomic_load_n(&st.enabled_kinds, __ATOMIC_RELAXED), bit;
	unsigned int k;

	want &= sub.kinds;
	if (want == now)
		return;
	for (k = 0; k < 64; k++) {
		bit = 1ull << k;
		if ((want & bit) && !(now & bit) &&
		    cupti_api.ActivityEnable((CUpti_ActivityKind)k) == CUPTI_SUCCESS)
			now |= bit;
		else if (!(want & bit) && (now & bit) &&
			 cupti_api.ActivityDisable((CUpti_ActivityKind)k) == CUPTI_SUCCESS)
			now &= ~bit;
	}
	if (counted && now && !__atomic_load_n(&st.collecting, __ATOMIC_RELAXED))
		ST_ADD(collect_on, 1);
	else if (counted && !now && __atomic_load_n(&st.collecting, __ATOMIC_RELAXED))
		ST_ADD(collect_off, 1);
	__atomic_store_n(&st.collecting, now != 0, __ATOMIC_RELAXED);
	__atomic_store_n(&st.enabled_kinds, now, __ATOMIC_RELAXED);
	sub_copy_callbacks((now & (1ull << CUPTI_ACTIVITY_KIND_MEMCPY)) != 0);
}

/* Zero the counters field by field, atomically: records may be handled
 * meanwhile (each field is 64 bits, see the assertion above). */
static void stats_zero(void)
{
	uint64_t *f = (uint64_t *)&st;
	size_t i;

	for (i = 0; i < sizeof(st) / sizeof(uint64_t); i++)
		__atomic_store_n(&f[i], 0, __ATOMIC_RELAXED);
}

int cupti_sub_reset(void)
{
	int n;

	pthread_mutex_lock(&sub.lock);
	if (sub.state == SUB_RECORDING) {
		pthread_mutex_unlock(&sub.lock);
		return -EBUSY;
	}
	cfg_ensure();
	if (sub_self) {		/* this thread's open batch goes too */
		batch_clear(&sub_self->b);
		memset(sub_self->memo_name, 0, sizeof(sub_self->memo_name));
		memset(&sub_self->st, 0, sizeof(sub_self->st));
	}
	stats_zero();
	n = cfg_load();
	pthread_mutex_unlock(&sub.lock);
	return n;
}

static void CUPTIAPI sub_buffer_requested(uint8_t **buffer, size_t *size,
					  size_t *max_records)
{
	uint8_t *b = aligned_alloc(SUB_ALIGN, cfg.buffer_bytes);

	*max_records = 0;
	if (!b) {
		ST_ADD(alloc_failures, 1);
		*buffer = NULL;
		*size = 0;
		return;
	}
	*buffer = b;
	*size = cfg.buffer_bytes;
}

static void CUPTIAPI sub_buffer_completed(CUcontext ctx, uint32_t stream,
					  uint8_t *buffer, size_t size,
					  size_t valid)
{
	size_t dropped = 0;

	(void)size;
	if (cupti_api.ActivityGetNumDroppedRecords(ctx, stream, &dropped) ==
	    CUPTI_SUCCESS && dropped)
		sub_dropped(dropped);
	if (buffer && valid)
		cupti_sub_handle_buffer(buffer, valid);	/* and hands the batch over */
	else
		cupti_sub_flush_batch();
	free(buffer);
}

/* The subscription only claims CUPTI; no callback domain is enabled. */
/* The runtime's copies, at their entry: what the copy records do not say
 * (the addresses).  The four entry points' parameters begin alike. */
static void CUPTIAPI sub_callback(void *userdata, CUpti_CallbackDomain domain,
				  CUpti_CallbackId cbid, const void *data)
{
	const CUpti_CallbackData *cb = data;
	const cudaMemcpy_v3020_params *p;

	(void)userdata;
	if (domain != CUPTI_CB_DOMAIN_RUNTIME_API || !cb || cb->callbackSite != CUPTI_API_ENTER)
		return;
	switch (cbid) {
	case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020:
	case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020:
	case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000:
	case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000:
		p = cb->functionParams;
		if (p)
			cupti_sub_handle_copy(p->dst, p->src, p->count, (int)p->kind);
		break;
	default:
		break;
	}
}

_Static_assert(offsetof(cudaMemcpyAsync_v3020_params, kind) == offsetof(cudaMemcpy_v3020_params, kind) &&
	       offsetof(cudaMemcpy_ptds_v7000_params, kind) == offsetof(cudaMemcpy_v3020_params, kind) &&
	       offsetof(cudaMemcpyAsync_ptsz_v7000_params, kind) == offsetof(cudaMemcpy_v3020_params, kind),
	       "the copy entry points' parameters begin alike");

static void *sub_flush_main(void *arg)
{
	struct timespec t;
	int r;

	(void)arg;
	pthread_mutex_lock(&sub.flock);
	while (!sub.flusher_stop) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		t.tv_sec += cfg.flush_ms / 1000;
		t.tv_nsec += (long)(cfg.flush_ms % 1000) * 1000000L;
		if (t.tv_nsec >= 1000000000L) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000L;
		}
		r = 0;
		while (!sub.flusher_stop && r != ETIMEDOUT)
			r = pthread_cond_timedwait(&sub.fcond, &sub.flock, &t);
		if (sub.flusher_stop)
			break;
		pthread_mutex_unlock(&sub.flock);
		sub_collect(sub_wanted(), true);
		trip_flush();
		if (__atomic_load_n(&st.collecting, __ATOMIC_RELAXED) &&
		    cupti_api.ActivityFlushAll(0) == CUPTI_SUCCESS)
			ST_ADD(flushes, 1);
		pthread_mutex_lock(&sub.flock);
	}
	pthread_mutex_unlock(&sub.flock);
	return NULL;
}

/*
 * Start the flush thread with every signal blocked, so that the process's
 * handlers never run on it.  Returns 0 or -errno; without it, CUPTI still
 * delivers buffers when they fill up and at the forced flush.
 */
static int sub_flusher_start(void)
{
	pthread_condattr_t ca;
	sigset_t all, old;
	int err;

	if (cfg.flush_ms == 0)
		return 0;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sub.fcond, &ca);
	pthread_condattr_destroy(&ca);
	sub.flusher_stop = false;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&sub.flusher, NULL, sub_flush_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_cond_destroy(&sub.fcond);
		return -err;
	}
	pthread_setname_np(sub.flusher, "cs-cupti-flush");
	sub.flusher_on = true;
	return 0;
}

static void sub_flusher_stop(void)
{
	if (!sub.flusher_on)
		return;
	pthread_mutex_lock(&sub.flock);
	sub.flusher_stop = true;
	pthread_cond_signal(&sub.fcond);
	pthread_mutex_unlock(&sub.flock);
	pthread_join(sub.flusher, NULL);
	pthread_cond_destroy(&sub.fcond);
	sub.flusher_on = false;
}

/* Map a failed CUPTI call to -EBUSY or -ENODEV, writing the reason to why. */
static int sub_cupti_error(const char *call, CUptiResult r, char *why,
			   size_t len)
{
	const char *s = NULL;

	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
		return -EBUSY;
	if (cupti_api.GetResultString(r, &s) != CUPTI_SUCCESS || !s)
		s = "unknown CUPTI error";
	snprintf(why, len, "%s: %s", call, s);
	return -ENODEV;
}

/*
 * CUPTI answers CUPTI_ERROR_UNKNOWN to everything when libcuda is missing,
 * so look for the driver first to say what is really wrong.  The handle is
 * kept: CUPTI would load the driver anyway.
 */
static int sub_driver_check(char *why, size_t len)
{
	const char *e;

	if (dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD))
		return 0;
	if (dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL))
		return 0;
	e = dlerror();
	snprintf(why, len, "%s", e ? e : "cannot load libcuda.so.1");
	return -ENODEV;
}

static void sub_disable_kinds(void)
{
	uint64_t kinds = __atomic_load_n(&st.enabled_kinds, __ATOMIC_RELAXED);
	unsigned int k;

	for (k = 0; k < 64; k++)
		if (kinds & (1ull << k))
			cupti_api.ActivityDisable((CUpti_ActivityKind)k);
	__atomic_store_n(&st.enabled_kinds, 0, __ATOMIC_RELAXED);
}

static void sub_enable_optional(void)
{
	size_t i;

	for (i = 0; i < sizeof(sub_optional_kinds) / sizeof(sub_optional_kinds[0]); i++)
		if (cupti_api.ActivityEnable(sub_optional_kinds[i]) == CUPTI_SUCCESS)
			__atomic_or_fetch(&st.enabled_kinds,
					  1ull << sub_optional_kinds[i],
					  __ATOMIC_RELAXED);
}

/* CUPTI's timestamps on CLOCK_MONOTONIC, the clock of the daemon's windows
 * (bpf_ktime_get_ns): a record's start and end say when its kernel or copy
 * ran in the daemon's time, not when its buffer was delivered. */
static uint64_t CUPTIAPI sub_timestamp(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* The other subscriber's name as CUPTI wrote it into holder (size bytes,
 * maybe not terminated) into why, printable ASCII only; "" when CUPTI
 * wrote none. */
static void sub_holder_name(const char *holder, size_t size, char *why, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < size && holder[i] && n + 1 < len; i++)
		why[n++] = holder[i] >= 0x20 && holder[i] < 0x7f ? holder[i] : '?';
	why[n] = '\0';
}

/* Subscribe, register the buffers and enable the kinds; 0 or -errno.
 * -EBUSY when another tool holds CUPTI's one subscriber slot (why: its
 * name, as CUPTI gives it), -ENODEV for any other refusal. */
static int sub_attach(char *why, size_t len)
{
	char holder[2 * CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = "";
	CUpti_SubscriberParams params = {
		.structSize = CUpti_SubscriberParams_STRUCT_SIZE,
		.subscriberName = SUB_NAME,
		.oldSubscriberName = holder,
		.oldSubscriberSize = sizeof(holder),
	};
	CUptiResult r;
	int err;

	r = cupti_api.Subscribe_v2(&sub.handle, sub_callback, NULL, &params);
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		sub_holder_name(holder, sizeof(holder), why, len);	/* who has the slot */
		return -EBUSY;
	}
	if (r != CUPTI_SUCCESS)
		return sub_cupti_error("cuptiSubscribe", r, why, len);
	r = cupti_api.ActivityRegisterCallbacks(sub_buffer_requested,
					   sub_buffer_completed);
	if (r != CUPTI_SUCCESS) {
		err = sub_cupti_error("cuptiActivityRegisterCallbacks", r, why, len);
		goto cleanup;
	}
	/* before any kind is enabled, as CUPTI asks; refused, the records
	 * keep CUPTI's own clock and the daemon windows them by arrival */
	if (cupti_api.ActivityRegisterTimestampCallback(sub_timestamp) == CUPTI_SUCCESS)
		ST_ADD(monotonic_clock, 1);
	r = cupti_api.ActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	if (r != CUPTI_SUCCESS) {
		err = sub_cupti_error("cuptiActivityEnable", r, why, len);
		goto cleanup;
	}
	__atomic_or_fetch(&st.enabled_kinds,
			  1ull << CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
			  __ATOMIC_RELAXED);
	sub_enable_optional();
	sub.kinds = __atomic_load_n(&st.enabled_kinds, __ATOMIC_RELAXED);
	sub_copy_callbacks((sub.kinds & (1ull << CUPTI_ACTIVITY_KIND_MEMCPY)) != 0);
	__atomic_store_n(&st.collecting, 1, __ATOMIC_RELAXED);
	return 0;
cleanup:
	cupti_api.Unsubscribe(sub.handle);
	return err;
}

/* cupti_sub_stop with sub.lock held. */
static int sub_stop_locked(void)
{
	int err = 0;

	if (sub.state != SUB_RECORDING)
		return 0;
	sub_flusher_stop();
	if (cupti_api.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != CUPTI_SUCCESS)
		err = -EIO;
	sub_copy_callbacks(false);
	trip_flush();
	sub_disable_kinds();
	__atomic_store_n(&st.collecting, 0, __ATOMIC_RELAXED);
	cupti_api.Unsubscribe(sub.handle);
	sub.state = SUB_IDLE;
	return err;
}

/* The library's only output: one line, once per process. */
static void sub_say(int err, const char *why)
{
	if (err == -EBUSY && *why)
		fprintf(stderr, "cachescope-cupti: another CUPTI subscriber is active (%s); "
			"not recording\n", why);
	else if (err == -EBUSY)
		fputs("cachescope-cupti: another CUPTI subscriber is active; "
		      "not recording\n", stderr);
	else if (err == -ENOENT || err == -EPROTO)	/* cupti_api_load's */
		fprintf(stderr, "cachescope-cupti: %s; not recording\n", why);
	else
		fprintf(stderr, "cachescope-cupti: no CUDA driver or device (%s); "
			"not recording\n", why);
}

/*
 * At exit, stop only if the lock comes within SUB_EXIT_WAIT_MS: another
 * thread may hold it inside cupti_sub_start (stuck in the driver, or
 * exiting from a signal handler on the very thread that holds it), and a
 * process must never hang in its exit because of us.  Then the records
 * CUPTI still holds are lost (exit_stop_skipped).
 */
#define SUB_EXIT_WAIT_MS 500

static void sub_atexit(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_nsec += SUB_EXIT_WAIT_MS * 1000000L;
	t.tv_sec += t.tv_nsec / 1000000000L;
	t.tv_nsec %= 1000000000L;
	if (pthread_mutex_timedlock(&sub.lock, &t) != 0) {
		ST_ADD(exit_stop_skipped, 1);
		return;
	}
	sub_stop_locked();
	pthread_mutex_unlock(&sub.lock);
}

/*
 * A forked child has no flush thread and cannot use its parent's CUDA
 * context: forget the recording, so that its exit neither joins a thread
 * that is not there nor flushes the parent's CUPTI state, and the forking
 * thread's open batch, the parent's work, which the child must not hand
 * over as its own.
 */
static void sub_atfork_child(void)
{
	pthread_mutex_init(&sub.lock, NULL);
	pthread_mutex_init(&live.lock, NULL);
	pthread_mutex_init(&trip_lock, NULL);
	pthread_mutex_init(&trips.lock, NULL);
	pthread_mutex_init(&sub.flock, NULL);
	pthread_mutex_init(&kv_lock, NULL);
	if (sub_self) {
		batch_clear(&sub_self->b);
		memset(&sub_self->st, 0, sizeof(sub_self->st));
	}
	sub.flusher_on = false;
	if (sub.state == SUB_RECORDING)
		sub.state = SUB_IDLE;
}

int cupti_sub_start(void)
{
	char why[256] = "";
	int err;

	pthread_mutex_lock(&sub.lock);
	if (sub.state != SUB_IDLE) {
		err = sub.state == SUB_OUT ? sub.out_err : 0;
		goto cleanup;
	}
	cfg_ensure();
	if (cfg.off) {
		/* asked to stay out of the way: no subscription, no line */
		sub.state = SUB_OUT;
		sub.out_err = err = -ECANCELED;
		goto cleanup;
	}
	/* the CUPTI of our headers first: on an older CUDA, say which is needed */
	err = cupti_api_load(why, sizeof(why));
	if (!err)
		err = sub_driver_check(why, sizeof(why));
	if (!err)
		err = sub_attach(why, sizeof(why));
	if (err) {
		sub.state = SUB_OUT;
		sub.out_err = err;
		sub_say(err, why);
		goto cleanup;
	}
	/* with a flush thread to watch for tracers, collect only what those
	 * attached now read (maybe nothing); without one, everything */
	if (cfg.flush_ms) {
		sub_collect(sub_wanted(), false);
		if (sub_flusher_start())
			sub_collect(~0ull, false);
	}
	sub.state = SUB_RECORDING;
	if (!sub.atexit_set && atexit(sub_atexit) == 0 &&
	    pthread_atfork(NULL, NULL, sub_atfork_child) == 0)
		sub.atexit_set = true;
cleanup:
	pthread_mutex_unlock(&sub.lock);
	return err;
}

int cupti_sub_stop(void)
{
	int err;

	pthread_mutex_lock(&sub.lock);
	err = sub_stop_locked();
	pthread_mutex_unlock(&sub.lock);
	return err;
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
	cupti_sub_start();
	return 1;
}
