// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer harness: ring-buffer records through the daemon's whole path,
 * event_decode -> wtable_add -> closed rows -> features -> classify ->
 * analysis (DBSCAN every ten windows), as main.c's on_sample and on_row do.
 *
 * Input: an 8-byte header (window length, key budget, which processes are
 * alive, history size), then records of sizeof(struct cs_event) bytes.  Most
 * fields go in as the fuzzer wrote them; the ones that must be valid for a
 * record to get past event_decode (type, op, order) are folded into their
 * valid sets, and ids are folded into small sets so that keys collide, so
 * most inputs exercise the table rather than the decoder.  Timestamps are
 * deltas (forward within a window, back into closed windows, or jumps of
 * many windows, so that the periodic sweep runs), the span bounded; after
 * one record in 64 the daemon's tick closes the windows that ended 2 ms
 * before.  One record in sixteen goes in raw, to exercise the
 * decoder's rejections.
 *
 * The kv and gpu records carry values of user space (USDT arguments of any
 * process) and go in unbounded: the daemon must refuse what it cannot hold
 * (wtable_reject, counted; the model leaves refused records out).  Slab
 * records carry a sample shift: each stands for 2^shift objects.
 *
 * Invariants, checked after every record (abort() on a violation so that
 * libFuzzer reports it):
 * - a record with fixed fields decodes; one of an unknown type does not;
 * - wtable_add succeeds (no -ENOMEM without memory pressure);
 * - no object is lost: per slab cache, the live objects and bytes over all
 *   its keys (others key included) equal allocations - frees fed; the same
 *   for device memory; on every slab key live objects = total allocations -
 *   total frees, and its bytes are its objects' (sizes are per cache, as
 *   the programs report them from the live-object map);
 * - kv keys never count negative live blocks;
 * - the table stays within its budget: keys <= max_keys + the others keys
 *   there can be;
 * - rows come in window order, each feature in [0, 1], a known label, a
 *   NUL-terminated reason; the history stays within history_max; a
 *   clustering gives sizes + noise = vectors;
 * - the heap grows by under 256 MiB within an input (a record must not size
 *   an allocation).
 *
 * Run on one input with CS_INGEST_DUMP=FILE set, it also writes what the
 * daemon would show of it to FILE: every row as the export CSV has it
 * (rowcsv), then the clusters as text and as JSON (the clustering's run
 * time written as 0: a measure, not an output).  Two builds' dumps of
 * the same inputs, compared with cmp, tell whether a change of the path
 * changed any output (tests/fuzz/dump.sh).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sanitizer/allocator_interface.h>
#include "../../daemon/analysis.h"
#include "../../daemon/event.h"
#include "../../daemon/report.h"
#include "../../daemon/rowcsv.h"
#include "../../daemon/window.h"

#define T0_NS 1000000000000ull
#define TICK_SLACK_NS 2000000ull	/* main.c's */
#define MAX_SPAN_WINDOWS 2048	/* reaches the sweep's minute of idleness at 100 ms */
#define HEAP_MAX (256ull << 20)
#define N_CACHES 8	/* slab ids: 4 kmalloc sizes, 4 cache pointers */
#define N_TGIDS 48
#define GPU_TGIDS 8

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "fuzz_ingest: invariant failed at %s:%d: %s\n", __FILE__, __LINE__, #c); \
	abort(); } } while (0)

struct model {
	/* what was fed, per slab cache (index of cache_id) */
	int64_t live[N_CACHES], live_bytes[N_CACHES];
	int64_t gpu_live;
	uint64_t events;	/* accepted records but kv ones (applied at once) */
	uint64_t kv;		/* accepted kv records: queued until their window closes */
	uint64_t rejected;	/* records refused as they came (wtable_reject) */
};

struct run {
	struct wtable *wt;
	struct analysis an;
	struct model m;	/* what was fed */
	size_t max_keys;
	uint64_t window_ns, last_row_window, last_recluster;
	size_t heap_base;
	uint8_t alive_seed;
	/* label counts: vectors counted, and those of keys forgotten */
	uint64_t labelled, labels_forgotten;
};

static FILE *devnull;
static FILE *dump;	/* CS_INGEST_DUMP */
static struct csv *dump_csv;

static void dump_line(const char *row, size_t len, void *ctx)
{
	(void)ctx;
	fwrite(row, 1, len, dump);
}

static uint64_t cache_id(unsigned int i)
{
	return i < 4 ? 8ull << (i * 2) : 0xffff888100000000ull + (uint64_t)i * 0x1c0;
}

/* bytes of one object: kmalloc-N's N, or a cache's object size */
static uint32_t cache_size(uint64_t id)
{
	return id < CS_KMALLOC_ID_MAX ? (uint32_t)id : (uint32_t)(id & 0xfff);
}

static int cache_index(uint64_t id)
{
	unsigned int i;

	for (i = 0; i < N_CACHES; i++)
		if (cache_id(i) == id)
			return (int)i;
	return -1;
}

/* A process, a family of young processes, or the kernel (0). */
static uint32_t fold_tgid(uint32_t t)
{
	switch (t >> 30) {
	case 0:
	case 1:
		return t % N_TGIDS;
	case 2:
		return CS_TGID_FAMILY | (t % 4);
	default:
		return 1000 + t % N_TGIDS;
	}
}

static bool alive(uint32_t tgid, void *ctx)
{
	const struct run *r = ctx;

	return (tgid + r->alive_seed) % 3 != 0;
}

static void fold_record(struct cs_event *e, uint64_t *clock_ns, uint64_t window_ns)
{
	uint64_t d = e->ts_ns >> 2, now = *clock_ns;

	switch (e->ts_ns & 3) {
	case 0:
	case 1:
		now += d % window_ns;
		break;
	case 2:		/* back, maybe into a closed window: late */
		d %= 2 * window_ns;
		now = now - T0_NS > d ? now - d : T0_NS;
		break;
	default:	/* a jump: windows close, the sweep runs */
		now += d % (100 * window_ns);
		break;
	}
	if (now > T0_NS + MAX_SPAN_WINDOWS * window_ns)
		now = T0_NS + MAX_SPAN_WINDOWS * window_ns;
	*clock_ns = now;
	e->ts_ns = now;
	/* what is valid stays as it is */
	if (e->type < CS_EV_SLAB_ALLOC || e->type > CS_EV_GPU)
		e->type = (uint8_t)(CS_EV_SLAB_ALLOC + e->type % 6);
	e->tgid = fold_tgid(e->tgid);
	e->cpu %= 4;
	e->node %= 2;
	switch (e->type) {
	case CS_EV_SLAB_ALLOC:
	case CS_EV_SLAB_FREE:
		e->slab.cache = cache_id((unsigned int)(e->slab.cache % N_CACHES));
		e->slab.old_cache = cache_id((unsigned int)(e->slab.old_cache % N_CACHES));
		e->slab.old_tgid = fold_tgid(e->slab.old_tgid);
		e->slab.bytes_alloc = cache_size(e->slab.cache);
		e->slab.bytes_req %= e->slab.bytes_alloc + 1;
		e->slab.old_bytes = cache_size(e->slab.old_cache);
		e->slab.alloc_cpu %= 4;
		e->slab.alloc_node %= 2;
		e->flags &= CS_F_KMALLOC | CS_F_UNSEEN;
		/* what event_decode lets through: a tracked object stands for
		 * 2^shift (sampling) */
		e->slab.shift %= CS_RECORD_SHIFT_MAX + 1;
		e->slab.old_shift %= CS_RECORD_SHIFT_MAX + 1;
		/* as the programs send it: a lifetime within the clock */
		if (e->slab.lifetime_ns > e->ts_ns - T0_NS)
			e->slab.lifetime_ns %= e->ts_ns - T0_NS + 1;
		break;
	case CS_EV_PAGE_ADD:
	case CS_EV_PAGE_DEL:
		e->order %= 12;
		e->page.ino %= 8;
		e->page.dev %= 2;
		e->page.gen %= 2;
		e->flags &= CS_F_REFAULT;
		break;
	case CS_EV_KV:
		/* block and arg as user space sent them: a USDT argument */
		if (e->kv.op < CS_KV_USE || e->kv.op > CS_KV_POOL)
			e->kv.op = CS_KV_USE + e->kv.op % 5;
		break;
	case CS_EV_GPU:
		if (e->gpu.op < CS_GPU_KERNEL || e->gpu.op > CS_GPU_OP_LAST)
			e->gpu.op = (uint8_t)(CS_GPU_KERNEL + e->gpu.op % CS_GPU_OP_LAST);
		e->tgid %= GPU_TGIDS;
		break;
	}
}

/* What the record does to the objects, as the table must count it. */
static void model_add(struct model *m, const struct cs_event *e)
{
	int64_t w = 1, ow = 1;
	int c;

	if (e->type == CS_EV_SLAB_ALLOC || e->type == CS_EV_SLAB_FREE) {
		w = 1ll << e->slab.shift;
		ow = 1ll << e->slab.old_shift;
	}
	if (e->type == CS_EV_KV) {
		m->kv++;
		return;
	}
	m->events++;
	switch (e->type) {
	case CS_EV_SLAB_ALLOC:
		if (e->flags & CS_F_UNSEEN) {
			c = cache_index(e->slab.old_cache);
			m->live[c] -= ow;
			m->live_bytes[c] -= ow * e->slab.old_bytes;
		}
		c = cache_index(e->slab.cache);
		m->live[c] += w;
		m->live_bytes[c] += w * e->slab.bytes_alloc;
		break;
	case CS_EV_SLAB_FREE:
		c = cache_index(e->slab.cache);
		m->live[c] -= w;
		m->live_bytes[c] -= w * e->slab.bytes_alloc;
		break;
	case CS_EV_GPU:
		/* a bin of count allocations or releases (one, per record) */
		if (e->gpu.op == CS_GPU_ALLOC)
			m->gpu_live += e->gpu.count;
		else if (e->gpu.op == CS_GPU_RELEASE)
			m->gpu_live -= e->gpu.count;
		break;
	}
}

struct tally {
	int64_t live[N_CACHES], live_bytes[N_CACHES];
	int64_t gpu_live;
	size_t others;
};

static int tally_key(struct acc *a, void *ctx)
{
	struct tally *t = ctx;
	int c;

	if (a->key.tgid == CS_TGID_OTHER)
		t->others++;
	switch (a->key.domain) {
	case DOM_SLAB:
		c = cache_index(a->key.id);
		CHECK(c >= 0);
		t->live[c] += a->live_objs;
		t->live_bytes[c] += a->live_bytes;
		CHECK(a->live_objs == (int64_t)(a->total_allocs - a->total_frees));
		CHECK(a->live_bytes == a->live_objs * cache_size(a->key.id));
		break;
	case DOM_PAGE:
		break;
	case DOM_KV:
		CHECK(a->live_objs >= 0);
		break;
	case DOM_GPU:
		if (a->key.id == GPU_KEY_MEMORY)
			t->gpu_live += a->live_objs;
		break;
	default:
		CHECK(!"a key of no domain");
	}
	return 0;
}

static void check_table(struct run *r, bool all_closed)
{
	struct wtable_stats st;
	struct tally t;
	unsigned int i;

	memset(&t, 0, sizeof(t));
	wtable_foreach(r->wt, tally_key, &t);
	for (i = 0; i < N_CACHES; i++) {
		CHECK(t.live[i] == r->m.live[i]);
		CHECK(t.live_bytes[i] == r->m.live_bytes[i]);
	}
	CHECK(t.gpu_live == r->m.gpu_live);
	wtable_get_stats(r->wt, &st);
	/* kv records count once their window closed and they were applied
	 * (refused then or not, for a block outside the pool) */
	CHECK(st.events >= r->m.events && st.events <= r->m.events + r->m.kv);
	CHECK(st.rejected >= r->m.rejected);
	if (all_closed)	/* every kv record applied, counted even when refused then */
		CHECK(st.events == r->m.events + r->m.kv);
	CHECK(st.late <= st.events);
	/* others keys: one per slab cache, one for all files, one kv, three gpu */
	CHECK(t.others <= N_CACHES + 1 + 1 + 3);
	CHECK(st.keys <= r->max_keys + t.others);
	CHECK(__sanitizer_get_current_allocated_bytes() < r->heap_base + HEAP_MAX);
}

/* The window table merged or forgot a key: so do its label counts. */
static void key_gone(const struct wkey *key, const struct wkey *into, void *ctx)
{
	struct run *r = ctx;
	const uint32_t *c = analysis_key_labels(&r->an, key);
	unsigned int l;

	if (c && !into)
		for (l = 0; l < LABEL_COUNT; l++)
			r->labels_forgotten += c[l];
	analysis_key_gone(&r->an, key, into);
	CHECK(!analysis_key_labels(&r->an, key));
}

/* Every vector counted under a key that is still there (merges move
 * counts, never lose them), and no more keys counted than the table has. */
static void check_labels(struct run *r)
{
	struct wtable_stats st;
	uint64_t sum = 0;
	size_t i, n = 0;
	unsigned int l;

	for (i = htab_next(&r->an.kl, 0); i < r->an.kl.cap; i = htab_next(&r->an.kl, i + 1)) {
		const struct key_labels *e = r->an.kl.slot[i];

		n++;
		for (l = 0; l < LABEL_COUNT; l++)
			sum += e->counts[l];
	}
	CHECK(n == r->an.kl.n);
	CHECK(sum + r->labels_forgotten + r->an.labels_lost == r->labelled);
	wtable_get_stats(r->wt, &st);
	CHECK(r->an.kl.n <= st.keys);
}

static void check_clusters(const struct analysis *an)
{
	size_t i, members = 0;

	for (i = 0; i < an->nclusters; i++) {
		CHECK(an->clusters[i].label < LABEL_COUNT);
		CHECK(memchr(an->clusters[i].reason, 0, sizeof(an->clusters[i].reason)));
		CHECK(memchr(an->clusters[i].keys, 0, sizeof(an->clusters[i].keys)));
		members += an->clusters[i].size;
	}
	CHECK(members + an->noise == an->n);
}

static void on_row(const struct wrow *row, void *ctx)
{
	struct run *r = ctx;
	const struct vec_entry *v;
	int i, k;

	CHECK(row->window >= r->last_row_window);
	CHECK(row->s->window == row->window);
	r->last_row_window = row->window;
	v = analysis_add(&r->an, row, r->window_ns);
	CHECK(r->an.n <= r->an.history_max);
	if (v) {
		for (i = 0; i < FEAT_DIM; i++)
			CHECK(v->f.v[i] >= 0 && v->f.v[i] <= 1);
		CHECK(v->label < LABEL_COUNT);
		CHECK(v->reason && strnlen(v->reason, VEC_REASON_MAX) < VEC_REASON_MAX);
		r->labelled++;
	}
	if (dump_csv)
		rowcsv_row(dump_csv, &(struct rowcsv_ctx){ .window_ms = (long)(r->window_ns / 1000000),
							   .host = "fuzz" }, row, v);
	if (row->window >= r->last_recluster + 10) {
		r->last_recluster = row->window;
		k = analysis_recluster(&r->an, row->window);
		CHECK(k >= 0);
		check_clusters(&r->an);
	}
}

static int site_name(void *ctx, uint64_t addr, char *buf, size_t n)
{
	(void)ctx;
	snprintf(buf, n, "site_%llx+0x10", (unsigned long long)addr);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t windows_ms[] = { 10, 100, 1000 };
	struct rules rules;
	struct analysis_params p;
	struct run r;
	struct wtable_stats st0, st1;
	uint64_t clock = T0_NS;
	size_t off;

	if (size < 8)
		return 0;
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	if (!dump && getenv("CS_INGEST_DUMP")) {
		dump = fopen(getenv("CS_INGEST_DUMP"), "w");
		CHECK(dump && !csv_new_mem(&dump_csv));
		csv_set_row_fn(dump_csv, dump_line, NULL);
		rowcsv_header(dump_csv);
	}
	memset(&r, 0, sizeof(r));
	r.window_ns = windows_ms[data[0] % 3] * 1000000ull;
	r.max_keys = data[1] & 1 ? 64 + (data[1] >> 1) : 4096;
	r.alive_seed = data[2];
	r.heap_base = __sanitizer_get_current_allocated_bytes();
	rules_defaults(&rules);
	p.eps = 0.08;
	p.min_pts = 1 + data[3] % 8;
	p.history_windows = 60000000000ull / r.window_ns;
	p.history_max = data[3] & 0x80 ? 16384 : 256;
	analysis_init(&r.an, &rules, &p);
	r.an.kview.site_name = site_name;
	r.wt = wtable_new(T0_NS, r.window_ns, on_row, NULL, &r);
	CHECK(r.wt);
	wtable_set_rules(r.wt, &(struct wtable_rules){
		.age_min_ns = (uint64_t)(rules.v[R_LEAK_MIN_AGE_S] * 1e9),
		.age_lifetimes = rules.v[R_LEAK_AGE_LIFETIMES],
		.expiry_ns = rules_expiry_ns,
	});
	wtable_set_limits(r.wt, &(struct wtable_limits){
		.max_keys = r.max_keys,
		.alive = data[2] & 1 ? alive : NULL,
		.key_gone = key_gone,
	});

	for (off = 8; off + sizeof(struct cs_event) <= size; off += sizeof(struct cs_event)) {
		struct cs_event raw, e;
		bool as_is;

		memcpy(&raw, data + off, sizeof(raw));
		as_is = (raw.flags & 0xf0) == 0xf0;	/* one in sixteen */
		if (!as_is)
			fold_record(&raw, &clock, r.window_ns);
		if (event_decode(&raw, sizeof(raw), &e)) {
			CHECK(as_is);
			continue;
		}
		CHECK(e.type >= CS_EV_SLAB_ALLOC && e.type <= CS_EV_GPU);
		if (as_is) {
			/* a valid raw record: only its time is made to fit */
			e.ts_ns = clock;
			e.tgid = fold_tgid(e.tgid);
			if (e.type == CS_EV_SLAB_ALLOC || e.type == CS_EV_SLAB_FREE) {
				e.slab.cache = cache_id((unsigned int)(e.slab.cache % N_CACHES));
				e.slab.old_cache = cache_id((unsigned int)(e.slab.old_cache % N_CACHES));
				e.slab.old_tgid = fold_tgid(e.slab.old_tgid);
				e.slab.bytes_alloc = cache_size(e.slab.cache);
				e.slab.old_bytes = cache_size(e.slab.old_cache);
				e.slab.lifetime_ns = 0;
			}
			if (e.type == CS_EV_GPU)
				e.tgid %= GPU_TGIDS;
		}
		/* on_sample: a CUPTI drop count is not a record */
		if (e.type == CS_EV_GPU && e.gpu.op == CS_GPU_DROPPED)
			continue;
		wtable_get_stats(r.wt, &st0);
		CHECK(wtable_add(r.wt, &e) == 0);
		wtable_get_stats(r.wt, &st1);
		/* refused for its values: counted, and nothing else happened
		 * (a record that closes windows may apply queued kv records,
		 * some of them refused then, but those count as events) */
		if ((e.type == CS_EV_KV || e.type == CS_EV_GPU) &&
		    st1.rejected == st0.rejected + 1 && st1.events == st0.events)
			r.m.rejected++;
		else
			model_add(&r.m, &e);
		check_table(&r, false);
		/* one record in 64 is followed by the daemon's tick, which closes
		 * the windows that ended TICK_SLACK_NS (main.c) before now */
		if (!(raw.pid & 0x3f)) {
			wtable_close_until(r.wt, clock - TICK_SLACK_NS);
			check_table(&r, false);
			check_labels(&r);
		}
	}
	wtable_close_all(r.wt);
	check_table(&r, true);
	check_labels(&r);
	CHECK(analysis_recluster(&r.an, r.last_row_window + 1) >= 0);
	check_clusters(&r.an);
	if (dump)
		r.an.last_run_ms = 0;	/* a measure of this run, not an output */
	report_clusters(&r.an, LABEL_NONE, REPORT_TEXT, dump ? dump : devnull);
	report_clusters(&r.an, LABEL_NONE, REPORT_JSON, dump ? dump : devnull);
	if (dump)
		fflush(dump);
	wtable_free(r.wt);
	analysis_release(&r.an);
	return 0;
}
