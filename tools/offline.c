// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cachescope cluster: the daemon's CSV, of one host or many, clustered and
 * labelled again with the daemon's own code (features_from_row, classify,
 * analysis + DBSCAN).  The one idea: a CSV row is a closed window row
 * (struct wrow, its counts a struct wslot) minus what the daemon derived
 * from the key's past, and that past is in the file's earlier rows; so
 * each key's rows, in window order, go through the daemon's own history
 * step (history_row: the growth slope, the key's median lifetime, the rise
 * of the old population, locality over the last second, refaults of the
 * file over the last 32 windows) with a history of the daemon's own kind
 * (struct obj_hist), and the row then through the same features, rules
 * and analysis as a live one.  What the file does not hold
 * (the kernel's own counts, see offline_missing) is left out of the rules,
 * which say so in their reasons.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../daemon/array.h"
#include "../daemon/clock.h"
#include "../daemon/csvread.h"
#include "../daemon/htab.h"
#include "../daemon/report.h"
#include "../daemon/csvschema.h"
#include "../daemon/strutil.h"
#include "../daemon/window.h"
#include <json-c/json.h>
#include "cli.h"
#include "offline.h"

const char offline_missing[] =
	"not in the CSV, so not used here: the kernel's own slab counts (a leak "
	"is not cross-checked against them), which caches the kernel reclaims, "
	"the file LRU size (refault distance), lifetime histograms (a key's median "
	"lifetime is taken from its windows' medians); old_objs are aged as the "
	"daemon's rules aged them";

/* ---- the history one key's rows rebuild (daemon/window.c's, per row) ---- */

struct off_hist {
	uint64_t first_ns, last_window;
	int64_t last_live;
	bool seen;
	/* the daemon's own history of a key (history.h), fed from the rows */
	struct obj_hist oh;
	uint64_t total_allocs, total_frees, total_unseen;
	/* refaults: kv keys keep their own, page keys their file's (row_thist) */
	struct thist *th;
};

struct off_state {
	/* key lookup: entries are indices into o->keys plus one (never NULL) */
	struct htab keys;
	/* per file while it is read: its files' refault histories (the
	 * daemon's own table, a page key's file named by its key) */
	struct history_files files;
	uint64_t window_ns, last_window;
	bool any_window, drops;
	uint64_t last_drop_ns;
};

static uint64_t str_hash(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return (h ^ 0xff) * 0x100000001b3ull;
}

static uint64_t key_hash(const struct off_key *k)
{
	uint64_t h = 0xcbf29ce484222325ull ^ k->file;

	h = str_hash(h, k->name);
	h = str_hash(h, k->tgid);
	h = str_hash(h, k->kind);
	h = str_hash(h, k->comm);
	return h ^ (uint64_t)k->domain << 56;
}

/* The daemon's key: a family is one per command, a process one per tgid
 * (whatever its comm became), others one per cache. */
static bool key_same(const struct off_key *a, const struct off_key *b)
{
	return a->file == b->file && a->domain == b->domain && !strcmp(a->name, b->name) &&
	       !strcmp(a->tgid, b->tgid) && !strcmp(a->kind, b->kind) &&
	       (strcmp(a->kind, "family") || !strcmp(a->comm, b->comm));
}

static size_t key_ref(const void *entry)
{
	return (size_t)(uintptr_t)entry - 1;
}

static uint64_t key_ref_hash(const void *entry, void *ctx)
{
	const struct offline *o = ctx;

	return key_hash(&o->keys[key_ref(entry)]);
}

static bool key_ref_is(const void *entry, const void *key, void *ctx)
{
	const struct offline *o = ctx;

	return key_same(&o->keys[key_ref(entry)], key);
}

/* The key's index; made when new.  -ENOMEM. */
static long key_get(struct offline *o, const struct off_key *k)
{
	struct off_state *st = o->st;
	void *ref = htab_find(&st->keys, key_hash(k), k);

	if (ref) {
		struct off_key *have = &o->keys[key_ref(ref)];

		/* a process's comm is the latest one (exec renames) */
		if (strcmp(k->kind, "family"))
			memcpy(have->comm, k->comm, sizeof(k->comm));
		if (*k->file_name)
			memcpy(have->file_name, k->file_name, sizeof(k->file_name));
		return (long)key_ref(ref);
	}
	if (array_room(&o->keys, &o->kcap, o->nkeys, sizeof(*o->keys), 256))
		return -ENOMEM;
	o->keys[o->nkeys] = *k;
	o->keys[o->nkeys].h = calloc(1, sizeof(struct off_hist));
	if (!o->keys[o->nkeys].h)
		return -ENOMEM;
	/* hashed from o->keys: the entry is there before the insert */
	if (htab_insert(&st->keys, (void *)(uintptr_t)(o->nkeys + 1))) {
		free(o->keys[o->nkeys].h);
		return -ENOMEM;
	}
	return (long)o->nkeys++;
}

/* A page key's file in the table of the CSV file being read: its name
 * ("maj:min:ino"), hashed twice into the daemon's file id. */
static struct thist *file_thist(struct offline *o, const char *name, bool create)
{
	uint64_t a = str_hash(0xcbf29ce484222325ull, name), b = str_hash(0x84222325cbf29ce4ull, name);

	return history_file(&o->st->files, a, (uint32_t)b, (uint32_t)(b >> 32), create);
}

/* The refault history a row adds to, as window.c's row_thist: its file's
 * (page keys; the files of one CSV told apart by name), or its own (kv). */
static struct thist *row_thist(struct offline *o, const struct off_key *k, struct off_hist *h,
			       const struct wrow *r)
{
	bool refaulted = r->s->refault_pages > 0;

	if (k->domain == DOM_PAGE)
		return file_thist(o, k->name, refaulted);
	if (!h->th && refaulted)
		h->th = calloc(1, sizeof(*h->th));
	return h->th;
}

/* The daemon forgets a key idle for a minute with nothing live (a family
 * even with objects live: merged into others) at its next collection; the
 * key's next rows start a new history. */
static void hist_expire(struct off_hist *h, const struct off_key *k, uint64_t window,
			uint64_t window_ns)
{
	uint64_t idle = WTABLE_GC_IDLE_NS / window_ns, p;

	if (!h->seen)
		return;
	p = ((h->last_window + idle) / WTABLE_GC_EVERY_WINDOWS + 1) * WTABLE_GC_EVERY_WINDOWS;
	if (p <= window && (!h->last_live || !strcmp(k->kind, "family"))) {
		free(h->th);
		memset(h, 0, sizeof(*h));
	}
}

/* ---- reading the files ---- */

/* The index of name s in v (n of them), added if new: a hash index, so
 * that a file of a million distinct hosts or sites is not read in time
 * quadratic in them. */
static long intern(char ***v, size_t *n, size_t *cap, struct name_ix *ix, const char *s)
{
	size_t i, j, k, ncap;
	size_t *slot;

	if (ix->cap < 2 * (*n + 1)) {	/* at most half full */
		ncap = ix->cap ? 2 * ix->cap : 64;
		slot = calloc(ncap, sizeof(*slot));
		if (!slot)
			return -ENOMEM;
		for (k = 0; k < *n; k++) {
			for (j = str_hash(0, (*v)[k]) & (ncap - 1); slot[j]; j = (j + 1) & (ncap - 1))
				;
			slot[j] = k + 1;
		}
		free(ix->slot);
		ix->slot = slot;
		ix->cap = ncap;
	}
	for (j = str_hash(0, s) & (ix->cap - 1); ix->slot[j]; j = (j + 1) & (ix->cap - 1)) {
		i = ix->slot[j] - 1;
		if (!strcmp((*v)[i], s))
			return (long)i;
	}
	if (array_room(v, cap, *n, sizeof(**v), 16))
		return -ENOMEM;
	(*v)[*n] = strdup(s);
	if (!(*v)[*n])
		return -ENOMEM;
	ix->slot[j] = *n + 1;
	return (long)(*n)++;
}

static int site_name(void *ctx, uint64_t addr, char *buf, size_t n)
{
	const struct offline *o = ctx;

	if (!addr || addr > o->nsites)
		return -ENOENT;
	snprintf(buf, n, "%s", o->sites[addr - 1]);
	return 0;
}

struct rd {
	struct csvr *r;
	int col[CSV_COLS];	/* each column of csv_schema: its index in the file, or -1 */
};

static int get_u64(struct rd *d, enum csv_col c, uint64_t *v)
{
	unsigned long long x;

	if (d->col[c] < 0) {	/* an optional column the file lacks */
		*v = 0;
		return 0;
	}
	if (csvr_u64(d->r, d->col[c], &x))
		return csvr_fail(d->r, "column %s: not a count: '%.40s'", csv_schema[c].name,
				 csvr_field(d->r, d->col[c]));
	*v = x;
	return 0;
}

static int get_i64(struct rd *d, enum csv_col c, int64_t *v)
{
	long long x;

	if (d->col[c] < 0) {
		*v = 0;
		return 0;
	}
	if (csvr_i64(d->r, d->col[c], &x))
		return csvr_fail(d->r, "column %s: not an integer: '%.40s'", csv_schema[c].name,
				 csvr_field(d->r, d->col[c]));
	*v = x;
	return 0;
}

static int get_dbl(struct rd *d, enum csv_col c, double lo, double hi, double *v)
{
	if (csvr_dbl(d->r, d->col[c], v) || *v < lo || *v > hi)
		return csvr_fail(d->r, "column %s: not a number in [%g, %g]: '%.40s'",
				 csv_schema[c].name, lo, hi, csvr_field(d->r, d->col[c]));
	return 0;
}

static int str_col(struct rd *d, enum csv_col c, char *buf, size_t n)
{
	const char *s = csvr_text(d->r, d->col[c]);

	if (strlen(s) >= n)
		return csvr_fail(d->r, "column %s: longer than %zu bytes", csv_schema[c].name, n - 1);
	memcpy(buf, s, strlen(s) + 1);
	return 0;
}

/* The row's key: its domain, names and kind (k, as the offline reader
 * keeps keys; wk, as the daemon's rows carry one), and r pointed at them. */
static int read_key(struct rd *d, struct off_key *k, struct wkey *wk, struct wrow *r)
{
	const char *f;

	k->domain = domain_of(csvr_text(d->r, d->col[COL_DOMAIN]));
	if (!k->domain)
		return csvr_fail(d->r, "column domain: not slab, page, kv or gpu");
	if (str_col(d, COL_KEY, k->name, sizeof(k->name)) ||
	    str_col(d, COL_TGID, k->tgid, sizeof(k->tgid)) ||
	    str_col(d, COL_COMM, k->comm, sizeof(k->comm)))
		return -EINVAL;
	/* a file's name (any length) for the picture: its last 63 bytes
	 * hold the base name that tells files apart */
	f = csvr_text(d->r, d->col[COL_FILE]);
	if (strlen(f) >= sizeof(k->file_name))
		f += strlen(f) - (sizeof(k->file_name) - 1);
	memcpy(k->file_name, f, strlen(f) + 1);
	if (d->col[COL_KEY_KIND] >= 0) {
		if (str_col(d, COL_KEY_KIND, k->kind, sizeof(k->kind)))
			return -EINVAL;
	} else {
		snprintf(k->kind, sizeof(k->kind), "%s", *k->tgid ? "process" : "others");
	}
	wk->domain = (uint8_t)k->domain;
	if (!strcmp(k->kind, "family")) {
		wk->tgid = CS_TGID_FAMILY | 1;
	} else if (!strcmp(k->kind, "others")) {
		wk->tgid = CS_TGID_OTHER;
	} else if (!strcmp(k->kind, "process")) {
		unsigned long long t;

		if (csvr_u64(d->r, d->col[COL_TGID], &t) || t >= CS_TGID_FAMILY)
			return csvr_fail(d->r, "column tgid: not a process id");
		wk->tgid = (uint32_t)t;
	} else {
		return csvr_fail(d->r, "column key_kind: not process, family or others");
	}
	r->key = wk;
	r->name = k->name;
	r->file = k->file_name;
	r->comm = k->comm;
	return 0;
}

/* The row's counts (s) and what the daemon derived of its window (r):
 * the columns of the window's counts, in the order of the file; drops:
 * the records dropped in the window. */
static int read_counts(struct rd *d, struct wslot *s, struct wrow *r, uint64_t *drops)
{
	uint64_t u, sample;
	int err;

	err = get_u64(d, COL_ALLOCS, &s->allocs) ?: get_u64(d, COL_FREES, &s->frees) ?:
	      get_i64(d, COL_LIVE_OBJS, &r->live_objs) ?: get_i64(d, COL_LIVE_BYTES, &r->live_bytes) ?:
	      get_u64(d, COL_LIFETIME_P50_NS, &r->lifetime_p50_ns) ?:
	      get_u64(d, COL_SAME_CPU_FREES, &s->same_cpu_frees) ?: get_u64(d, COL_REMOTE_FREES, &s->remote_frees) ?:
	      get_u64(d, COL_CROSS_NUMA, &s->cross_numa) ?:
	      get_dbl(d, COL_SIZE_ENTROPY, 0, 64, &r->size_entropy) ?:
	      get_dbl(d, COL_SAME_SIZE_SHARE, 0, 1, &r->same_size_share) ?:
	      get_dbl(d, COL_TOP_SITE_SHARE, 0, 1, &r->top_site_share) ?:
	      get_u64(d, COL_PAGE_ADDS, &s->page_adds) ?: get_u64(d, COL_PAGE_DELS, &s->page_dels) ?:
	      get_u64(d, COL_REFAULTS, &s->refaults) ?: get_u64(d, COL_REFAULT_PAGES, &s->refault_pages) ?:
	      get_u64(d, COL_REFAULT_DIST_P50, &r->refault_dist_p50) ?:
	      get_u64(d, COL_GPU_KERNELS, &s->gpu_kernels) ?: get_u64(d, COL_GPU_KERNEL_NS, &s->gpu_kernel_ns) ?:
	      get_u64(d, COL_GPU_COPY_IN_BYTES, &s->gpu_copy_in_bytes) ?: get_u64(d, COL_GPU_COPY_OUT_BYTES, &s->gpu_copy_out_bytes) ?:
	      get_u64(d, COL_TGID_GPU_KERNEL_NS, &r->tgid_gpu_kernel_ns) ?:
	      get_u64(d, COL_TGID_GPU_KV_KERNEL_NS, &r->tgid_gpu_kv_kernel_ns) ?:
	      get_u64(d, COL_TGID_GPU_COPY_BYTES, &r->tgid_gpu_copy_bytes) ?:
	      get_u64(d, COL_UNSEEN_FREES, &s->unseen_frees) ?: get_u64(d, COL_REPEAT_PAGES, &s->repeat_pages) ?:
	      get_i64(d, COL_OLD_OBJS, &r->old_objs) ?: get_u64(d, COL_AGE_MS, &u) ?:
	      get_u64(d, COL_WINDOW_DROPS, drops) ?: get_u64(d, COL_SAMPLE, &sample) ?:
	      get_u64(d, COL_OWN_REMOTE_FREES, &s->own_remote_frees);
	if (err)
		return err;
	/* a file of a daemon before own_remote_frees does not say who freed:
	 * its remote frees count as hand-offs inside the process, as its
	 * daemon counted them */
	if (d->col[COL_OWN_REMOTE_FREES] < 0)
		s->own_remote_frees = s->remote_frees;
	if (s->own_remote_frees > s->remote_frees)
		return csvr_fail(d->r, "column own_remote_frees: more than remote_frees");
	r->age_ns = u * 1000000;
	/* the window's lifetimes as far as the row tells them: its median,
	 * for each free a tracepoint saw */
	if (r->lifetime_p50_ns && s->frees > s->unseen_frees)
		s->lifetime_hist[stats_log2_bucket(r->lifetime_p50_ns)] =
			(uint32_t)(s->frees - s->unseen_frees);
	if (d->col[COL_SAMPLE] < 0 || !sample)
		sample = 1;
	if (sample & (sample - 1) || sample > 1u << 20)
		return csvr_fail(d->r, "column sample: %llu is not a power of two up to 2^20",
				 (unsigned long long)sample);
	while (sample >> s->max_shift > 1)
		s->max_shift++;
	return 0;
}

/* Everything of one row that the daemon's wrow holds: its window, key and
 * counts, what they leave out, its hot site, the daemon's label, its host. */
static int read_row(struct offline *o, struct rd *d, unsigned int file,
		    struct off_key *k, struct wkey *wk, struct wslot *s, struct wrow *r,
		    double *ts, uint64_t *window_ms, int *daemon_label)
{
	uint64_t drops;
	const char *f;
	double ops_s;
	long i;

	memset(k, 0, sizeof(*k));
	memset(wk, 0, sizeof(*wk));
	memset(s, 0, sizeof(*s));
	memset(r, 0, sizeof(*r));
	k->file = file;
	if (get_dbl(d, COL_TS, 0, 1e11, ts) || get_u64(d, COL_WINDOW, &r->window) ||
	    get_u64(d, COL_WINDOW_MS, window_ms))
		return -EINVAL;
	if (*window_ms < 1 || *window_ms > 60000)
		return csvr_fail(d->r, "column window_ms: %llu is not in 1..60000",
				 (unsigned long long)*window_ms);
	if (read_key(d, k, wk, r) || read_counts(d, s, r, &drops))
		return -EINVAL;
	/* the operations the row's counts leave out (kv swaps, GPU copies):
	 * what ops_per_s adds up to beyond them, where the row has a vector */
	if (*csvr_field(d->r, d->col[COL_OPS_PER_S])) {
		uint64_t ops, known;

		if (get_dbl(d, COL_OPS_PER_S, 0, 1e15, &ops_s))
			return -EINVAL;
		ops = (uint64_t)llround(ops_s * (double)*window_ms / 1000.0);
		known = s->allocs + s->frees + (k->domain == DOM_GPU ? s->gpu_kernels : 0);
		if (k->domain == DOM_KV && ops > known)
			s->kv_swap_outs = ops - known;
		if (k->domain == DOM_GPU && ops > known)
			s->gpu_copies = ops - known;
	}
	f = csvr_text(d->r, d->col[COL_HOT_SITE]);
	if (*f) {
		i = intern(&o->sites, &o->nsites, &o->scap, &o->site_ix, f);
		if (i < 0)
			return (int)i;
		r->top_site = (uint64_t)i + 1;
	}
	*daemon_label = -1;
	f = csvr_text(d->r, d->col[COL_LABEL]);
	if (*f && (*daemon_label = label_of(f)) == LABEL_NONE)
		return csvr_fail(d->r, "column label: not a label: '%.40s'", f);
	i = intern(&o->hosts, &o->nhosts, &o->hcap, &o->host_ix, csvr_text(d->r, d->col[COL_HOST]));
	if (i < 0)
		return (int)i;
	k->host = (unsigned int)i;
	/* records were dropped before this window closed (window.c's
	 * wtable_note_drops, at the tick that closes it) */
	o->st->drops |= drops > 0;
	if (drops)
		o->st->last_drop_ns = (uint64_t)llround(*ts * 1e9) + *window_ms * 1000000;
	return 0;
}

/* The file's columns, found by name in its header: the required ones must
 * be there (csv_schema), the others read as 0 where missing. */
static int find_columns(struct offline *o, struct rd *d)
{
	int i;

	for (i = 0; i < CSV_COLS; i++) {
		d->col[i] = csvr_col(d->r, csv_schema[i].name);
		if (d->col[i] < 0 && csv_schema[i].required)
			return csvr_fail(d->r, "no column '%s': not a CSV of cachescoped --csv",
					 csv_schema[i].name);
	}
	if (d->col[COL_HOST] < 0)
		o->host_missing = true;
	return 0;
}

/* A row's window against the file's earlier rows: of the same length
 * (window_ns: the file's, set by its first row) and in order; then the
 * daemon's collections between the last window and this one, replayed. */
static int row_window(struct offline *o, struct rd *d, uint64_t window, uint64_t window_ms,
		      uint64_t *window_ns)
{
	struct off_state *st = o->st;
	uint64_t p;

	if (!*window_ns)
		*window_ns = window_ms * 1000000;
	if (window_ms * 1000000 != *window_ns)
		return csvr_fail(d->r, "column window_ms: %llu, earlier rows %llu",
				 (unsigned long long)window_ms,
				 (unsigned long long)(*window_ns / 1000000));
	/* a window no run reaches: its start would pass the clock's 2^64 ns */
	if (window > UINT64_MAX / *window_ns)
		return csvr_fail(d->r, "column window: %llu windows of %llu ms pass what a clock can count",
				 (unsigned long long)window, (unsigned long long)window_ms);
	if (st->any_window && window < st->last_window)
		return csvr_fail(d->r, "window %llu after window %llu: rows out of order",
				 (unsigned long long)window, (unsigned long long)st->last_window);
	/* the daemon's collections since the last row's window: each forgets
	 * what has been idle long enough by then, so the last of them alone
	 * forgets the same (no row came between them) */
	p = st->any_window ? (st->last_window / WTABLE_GC_EVERY_WINDOWS + 1) *
			     WTABLE_GC_EVERY_WINDOWS : WTABLE_GC_EVERY_WINDOWS;
	if (p <= window)
		history_files_gc(&st->files, window / WTABLE_GC_EVERY_WINDOWS * WTABLE_GC_EVERY_WINDOWS);
	st->any_window = true;
	st->last_window = window;
	return 0;
}

/* Key ki's row r, of a window starting at ts, through the daemon's history
 * step and analysis; its vector, if it makes one, noted beside the
 * analysis' (o->vec) with the label the daemon gave it. */
static int take_row(struct offline *o, long ki, struct wrow *r, uint64_t window_ns, double ts,
		    int daemon_label)
{
	struct off_state *st = o->st;
	struct off_key *key = &o->keys[ki];
	struct off_hist *h = key->h;
	const struct wslot *s = r->s;
	const struct vec_entry *v;

	hist_expire(h, key, r->window, window_ns);
	if (!h->seen) {
		h->first_ns = r->start_ns;
		h->seen = true;
	}
	h->total_allocs += s->allocs;
	h->total_frees += s->frees;
	h->total_unseen += s->unseen_frees;
	/* old_objs and age_ns come from the row: the daemon's cohorts aged them */
	history_row(&h->oh, row_thist(o, key, h, r), &(struct history_step){
			.window_ns = window_ns,
			.aged = true,
			.allocs = h->total_allocs,
			.seen_frees = h->total_frees - h->total_unseen,
			.first_ns = h->first_ns,
			.drops = st->drops,
			.last_drop_ns = st->last_drop_ns,
		    }, r);
	h->last_window = r->window;
	h->last_live = r->live_objs;
	key->rows++;
	key->ops += key->domain == DOM_PAGE ? s->page_adds + s->page_dels : s->allocs + s->frees;
	v = analysis_add(&o->an, r, window_ns);
	if (!v)
		return 0;
	if (o->an.n > o->vcap) {
		struct off_vec *nv = realloc(o->vec, o->an.cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		o->vec = nv;
		o->vcap = o->an.cap;
	}
	o->vec[o->an.n - 1] = (struct off_vec){ .key = (unsigned int)ki, .t = ts,
						.daemon_label = daemon_label };
	return 0;
}

static int load_file(struct offline *o, const char *path, unsigned int file,
		     char *err, size_t errlen)
{
	struct off_state *st = o->st;
	struct rd d = { 0 };
	struct off_key k;
	struct wkey wk;
	struct wslot s;
	struct wrow r;
	uint64_t window_ms, window_ns = 0;
	int rc, daemon_label = -1;
	double ts;
	long ki;
	FILE *f;

	f = fopen(path, "r");
	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(-rc));
		return rc;
	}
	history_files_init(&st->files);
	rc = csvr_open(f, path, 0, &d.r);
	if (rc || (rc = find_columns(o, &d)))
		goto out;
	st->any_window = false;
	st->drops = false;
	while ((rc = csvr_next(d.r)) == 1) {
		/* rows of the other scope are not read: their keys are others */
		if (o->scope && strcmp(csvr_text(d.r, d.col[COL_SCOPE]), o->scope))
			continue;
		rc = read_row(o, &d, file, &k, &wk, &s, &r, &ts, &window_ms, &daemon_label);
		if (rc || (rc = row_window(o, &d, r.window, window_ms, &window_ns)))
			goto out;
		if (o->rows == 0 || ts < o->t0)
			o->t0 = ts;
		if (ts + window_ms / 1000.0 > o->t1)
			o->t1 = ts + window_ms / 1000.0;
		o->rows++;
		ki = key_get(o, &k);
		if (ki < 0) {
			rc = (int)ki;
			goto out;
		}
		r.start_ns = (uint64_t)llround(ts * 1e9);
		r.s = &s;
		rc = take_row(o, ki, &r, window_ns, ts, daemon_label);
		if (rc)
			goto out;
	}
out:
	if (rc > 0)
		rc = 0;
	if (!o->window_ns)
		o->window_ns = window_ns;
	if (rc && d.r && *csvr_error(d.r))
		snprintf(err, errlen, "%s", csvr_error(d.r));
	else if (rc)
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(-rc));
	csvr_free(d.r);
	history_files_release(&st->files);
	fclose(f);
	return rc;
}

static void key_counts(struct offline *o)
{
	size_t i;

	for (i = 0; i < o->an.n; i++) {
		struct off_key *k = &o->keys[o->vec[i].key];
		int dl = o->vec[i].daemon_label;

		k->counts[o->an.v[i].label]++;
		if (dl < 0)
			continue;
		k->daemon[dl]++;
		o->confusion[dl][o->an.v[i].label]++;
		o->daemon_vectors++;
		o->agree += dl == (int)o->an.v[i].label;
	}
}

int offline_load(struct offline *o, char *const *files, size_t nfiles,
		 const struct offline_params *p, char *err, size_t errlen)
{
	struct rules rules;
	size_t i;
	int rc;

	memset(o, 0, sizeof(*o));
	o->scope = p->scope;
	err[0] = '\0';
	/* the user's own file, read with the user's own rights */
	rc = rules_from(&rules, p->rules_path, NULL, NULL, 0, err, errlen);
	if (rc)
		return rc;
	analysis_init(&o->an, &rules, &(struct analysis_params){
		.eps = p->eps, .min_pts = p->min_pts,
		.history_windows = UINT64_MAX / 4,	/* every row of every file */
	});
	/* the file names its hot sites; nothing else of the kernel is known */
	o->an.kview.site_name = site_name;
	o->an.kview.ctx = o;
	/* no run yet: with no core point each vector is noise at once (not
	 * a scan of all before it), until the one run at the end */
	o->an.grid_ok = true;
	o->st = calloc(1, sizeof(*o->st));
	o->files = calloc(nfiles ? nfiles : 1, sizeof(*o->files));
	if (!o->st || !o->files) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	htab_init(&o->st->keys, 1024, 1, 2, key_ref_hash, key_ref_is, o);
	for (i = 0; i < nfiles; i++) {
		o->files[i] = strdup(files[i]);
		if (!o->files[i]) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		o->nfiles++;
		rc = load_file(o, files[i], (unsigned int)i, err, errlen);
		if (rc)
			return rc;
	}
	rc = analysis_recluster(&o->an, 0);
	if (rc < 0) {
		snprintf(err, errlen, "cannot cluster %zu vectors: %s", o->an.n, strerror(-rc));
		return rc;
	}
	o->nclusters = rc;
	key_counts(o);
	return 0;
}

void offline_release(struct offline *o)
{
	size_t i;

	for (i = 0; i < o->nkeys; i++) {
		if (o->keys[i].h)
			free(o->keys[i].h->th);
		free(o->keys[i].h);
	}
	for (i = 0; i < o->nhosts; i++)
		free(o->hosts[i]);
	for (i = 0; i < o->nfiles; i++)
		free(o->files[i]);
	for (i = 0; i < o->nsites; i++)
		free(o->sites[i]);
	if (o->st)
		htab_release(&o->st->keys);
	free(o->st);
	free(o->sites);
	free(o->hosts);
	free(o->site_ix.slot);
	free(o->host_ix.slot);
	free(o->files);
	free(o->keys);
	free(o->vec);
	analysis_release(&o->an);
	memset(o, 0, sizeof(*o));
}

/* ---- the verbs ---- */

#define ESC(buf, s) str_escape(buf, sizeof(buf), s, 0)

static void span_text(const struct offline *o, char *buf, size_t n)
{
	char a[32], b[32];
	time_t t0 = (time_t)o->t0, t1 = (time_t)o->t1;
	struct tm tm;

	if (!o->rows) {
		snprintf(buf, n, "no rows");
		return;
	}
	strftime(a, sizeof(a), "%Y-%m-%d %H:%M:%S", gmtime_r(&t0, &tm));
	strftime(b, sizeof(b), "%H:%M:%S", gmtime_r(&t1, &tm));
	snprintf(buf, n, "%.1f s, %s - %s UTC", o->t1 - o->t0, a, b);
}

/* "a, b, c" of the hosts (escaped), cut to fit. */
static void hosts_text(const struct offline *o, char *buf, size_t n)
{
	char e[STR_ESC_SIZE(64)];
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < o->nhosts && len + 1 < n; i++)
		len += snprintf(buf + len, n - len, "%s%s", i ? ", " : "",
				*o->hosts[i] ? str_escape(e, sizeof(e), o->hosts[i], 0) : "(none)");
	if (!o->nhosts)
		snprintf(buf, n, "(none)");
}

static unsigned int anomalies(const unsigned int *c)
{
	return c[LABEL_THRASH] + c[LABEL_FALSE_SHARING] + c[LABEL_LEAK];
}

static const struct offline *sort_o;

static int key_by_anomalies(const void *x, const void *y)
{
	const struct off_key *p = &sort_o->keys[*(const size_t *)x];
	const struct off_key *q = &sort_o->keys[*(const size_t *)y];
	unsigned int a = anomalies(p->counts) + anomalies(p->daemon);
	unsigned int b = anomalies(q->counts) + anomalies(q->daemon);

	if (a != b)
		return a < b ? 1 : -1;
	return *(const size_t *)x < *(const size_t *)y ? -1 : 1;
}

static int cluster_by_id(const void *x, const void *y)
{
	return ((const struct cluster_info *)x)->id - ((const struct cluster_info *)y)->id;
}

/* Keys with an anomalous vector here or in the file, most first. */
static size_t *labelled_keys(const struct offline *o, size_t *n)
{
	size_t *idx = malloc((o->nkeys + 1) * sizeof(*idx)), i, m = 0;

	if (!idx)
		return NULL;
	for (i = 0; i < o->nkeys; i++)
		if (anomalies(o->keys[i].counts) || anomalies(o->keys[i].daemon))
			idx[m++] = i;
	sort_o = o;
	qsort(idx, m, sizeof(*idx), key_by_anomalies);
	*n = m;
	return idx;
}

static struct cluster_info *sorted_clusters(const struct offline *o)
{
	struct cluster_info *c = malloc((o->an.nclusters + 1) * sizeof(*c));

	if (!c)
		return NULL;
	/* none: the table is NULL, which memcpy may not be given even for 0 */
	if (o->an.nclusters)
		memcpy(c, o->an.clusters, o->an.nclusters * sizeof(*c));
	qsort(c, o->an.nclusters, sizeof(*c), cluster_by_id);
	return c;
}

static int by_cluster_label_key(const void *x, const void *y)
{
	const struct vec_entry *p = &sort_o->an.v[*(const size_t *)x];
	const struct vec_entry *q = &sort_o->an.v[*(const size_t *)y];
	unsigned int kp = sort_o->vec[*(const size_t *)x].key, kq = sort_o->vec[*(const size_t *)y].key;

	if (p->cluster != q->cluster)
		return p->cluster < q->cluster ? -1 : 1;
	if (p->label != q->label)
		return p->label < q->label ? -1 : 1;
	return kp < kq ? -1 : kp > kq;
}

/* Every key carrying an anomaly label, per cluster (noise as -1): where the
 * labelled vectors are a minority of a normal cluster, the keys they are
 * on (leaking and balanced churn share their five features). */
static int print_anomalies(const struct offline *o, FILE *out)
{
	char e[STR_ESC_SIZE(64)];
	size_t *idx = malloc((o->an.n + 1) * sizeof(*idx)), i, j, m = 0, len;
	bool any = false;

	if (!idx)
		return -ENOMEM;
	for (i = 0; i < o->an.n; i++)
		if (o->an.v[i].label != LABEL_NORMAL)
			idx[m++] = i;
	sort_o = o;
	qsort(idx, m, sizeof(*idx), by_cluster_label_key);
	for (i = 0; i < m; i = j) {
		const struct vec_entry *v = &o->an.v[idx[i]];
		char line[1024];

		len = (size_t)snprintf(line, sizeof(line), "  cluster %3d  %-13s", v->cluster,
				       label_name(v->label));
		for (j = i; j < m && o->an.v[idx[j]].cluster == v->cluster &&
		     o->an.v[idx[j]].label == v->label;) {
			unsigned int key = o->vec[idx[j]].key, n = 0;

			for (; j < m && o->an.v[idx[j]].cluster == v->cluster &&
			     o->an.v[idx[j]].label == v->label && o->vec[idx[j]].key == key; j++)
				n++;
			if (len < sizeof(line))
				len += (size_t)snprintf(line + len, sizeof(line) - len, " %s", ESC(e, o->keys[key].name));
			if (len < sizeof(line) && o->nhosts > 1)	/* whose: one key per host */
				len += (size_t)snprintf(line + len, sizeof(line) - len, "@%s",
							ESC(e, o->hosts[o->keys[key].host]));
			if (len < sizeof(line))
				len += (size_t)snprintf(line + len, sizeof(line) - len, " %u", n);
		}
		fprintf(out, "%s%s\n", any ? "" : "anomalous vectors by cluster (key and vectors):\n", line);
		any = true;
	}
	free(idx);
	return 0;
}

static int print_text(const struct offline *o, unsigned int top, FILE *out)
{
	char span[96], hosts[1024], e1[STR_ESC_SIZE(64)], e2[STR_ESC_SIZE(64)],
	     e3[STR_ESC_SIZE(16)], e4[STR_ESC_SIZE(32)], why[STR_ESC_SIZE(448)],
	     keys[STR_ESC_SIZE(160)];
	struct cluster_info *c = sorted_clusters(o);
	size_t *lk, nlk, i;
	unsigned int counts[LABEL_COUNT] = { 0 }, l;

	lk = labelled_keys(o, &nlk);
	if (!c || !lk) {
		free(c);
		free(lk);
		return -ENOMEM;
	}
	span_text(o, span, sizeof(span));
	hosts_text(o, hosts, sizeof(hosts));
	fprintf(out, "%zu file%s, host%s %s; %s; %llu rows, %zu vectors, %zu keys\n",
		o->nfiles, o->nfiles == 1 ? "" : "s", o->nhosts == 1 ? "" : "s", hosts, span,
		(unsigned long long)o->rows, o->an.n, o->nkeys);
	if (o->scope)
		fprintf(out, "scope: only the rows of scope '%s'\n", ESC(e1, o->scope));
	if (o->host_missing)
		fprintf(out, "note: a file has no host column (written before it was added): its host is (none)\n");
	fprintf(out, "note: %s\n", offline_missing);
	if (o->daemon_vectors) {
		unsigned int a, b;

		fprintf(out, "labels: %llu of %llu vectors as the daemon labelled them (%.1f%%)",
			(unsigned long long)o->agree, (unsigned long long)o->daemon_vectors,
			100.0 * o->agree / o->daemon_vectors);
		for (a = 0, l = 0; a < LABEL_COUNT; a++)
			for (b = 0; b < LABEL_COUNT; b++)
				if (a != b && o->confusion[a][b])
					fprintf(out, "%s %s in the file, %s here: %llu", l++ ? "," : ";",
						label_name(a), label_name(b),
						(unsigned long long)o->confusion[a][b]);
		fputc('\n', out);
	}
	for (i = 0; i < o->an.n; i++)
		if (o->an.v[i].cluster == CLUSTER_NOISE)
			counts[o->an.v[i].label]++;
	fprintf(out, "clusters: %zu over %zu vectors (%u noise), eps %.3f, min_pts %u\n",
		o->an.nclusters, o->an.n, o->an.noise, o->an.eps, o->an.min_pts);
	if (o->an.noise) {
		fprintf(out, "noise: %u points:", o->an.noise);
		for (l = 0; l < LABEL_COUNT; l++)
			fprintf(out, " %s %u", label_name(l), counts[l]);
		fputc('\n', out);
	}
	if (o->an.nclusters)
		fprintf(out, "%4s %-13s %6s %-40s %-34s %s\n", "id", "label", "size", "keys",
			"centroid (freq hot entr loc numa)", "reason");
	for (i = 0; i < o->an.nclusters; i++)
		fprintf(out, "%4d %-13s %6u %-40.40s %.2f %.2f %.2f %.2f %.2f %s\n", c[i].id,
			label_name(c[i].label), c[i].size, ESC(keys, c[i].keys), c[i].centroid[0],
			c[i].centroid[1], c[i].centroid[2], c[i].centroid[3], c[i].centroid[4],
			ESC(why, c[i].reason));
	if (print_anomalies(o, out)) {
		free(lk);
		free(c);
		return -ENOMEM;
	}
	fprintf(out, "labelled keys (vectors per label, here / in the file):\n");
	fprintf(out, "%-16s %-6s %-32s %-10s %-16s %13s %13s %13s %13s\n", "host", "domain", "key",
		"tgid", "comm", label_short(LABEL_NORMAL), label_short(LABEL_THRASH),
		label_short(LABEL_FALSE_SHARING), label_short(LABEL_LEAK));
	for (i = 0; i < nlk && i < top; i++) {
		const struct off_key *k = &o->keys[lk[i]];

		fprintf(out, "%-16.16s %-6s %-32.32s %-10s %-16.16s", ESC(e1, o->hosts[k->host]),
			domain_name(k->domain), ESC(e2, k->name), ESC(e4, *k->tgid ? k->tgid : k->kind),
			ESC(e3, k->comm));
		for (l = 0; l < LABEL_COUNT; l++) {
			char cell[32];

			snprintf(cell, sizeof(cell), "%u / %u", k->counts[l], k->daemon[l]);
			fprintf(out, " %13s", cell);
		}
		fputc('\n', out);
	}
	if (nlk > top)
		fprintf(out, "... %zu more keys (--top)\n", nlk - top);
	if (!nlk)
		fprintf(out, "  (none)\n");
	free(lk);
	free(c);
	return ferror(out) ? -EIO : 0;
}

/* A JSON string of text others chose: escaped for a terminal first (as
 * every output of cachescope is), then for JSON. */
static json_object *jstrs(char *const *v, size_t n)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; a && i < n; i++)
		json_object_array_add(a, report_jstr(v[i]));
	return a;
}

/* The same tables as print_text, one JSON document (json-c). */
static int print_json(const struct offline *o, unsigned int top, FILE *out)
{
	struct cluster_info *c = sorted_clusters(o);
	json_object *j = NULL, *cl, *ks;
	size_t *lk, nlk, i;
	int d, err = -ENOMEM;

	lk = labelled_keys(o, &nlk);
	if (!c || !lk || !(j = json_object_new_object()))
		goto out;
	json_object_object_add(j, "files", jstrs(o->files, o->nfiles));
	json_object_object_add(j, "hosts", jstrs(o->hosts, o->nhosts));
	json_object_object_add(j, "start", report_jdbl(o->t0));
	json_object_object_add(j, "end", report_jdbl(o->t1));
	json_object_object_add(j, "rows", json_object_new_uint64(o->rows));
	json_object_object_add(j, "vectors", json_object_new_uint64(o->an.n));
	json_object_object_add(j, "keys", json_object_new_uint64(o->nkeys));
	json_object_object_add(j, "not_in_csv", report_jstr(offline_missing));
	json_object_object_add(j, "daemon_vectors", json_object_new_uint64(o->daemon_vectors));
	json_object_object_add(j, "agree", json_object_new_uint64(o->agree));
	json_object_object_add(j, "eps", report_jdbl(o->an.eps));
	json_object_object_add(j, "min_pts", json_object_new_int64(o->an.min_pts));
	json_object_object_add(j, "noise", json_object_new_int64(o->an.noise));
	cl = json_object_new_array();
	for (i = 0; cl && i < o->an.nclusters; i++) {
		json_object *e = json_object_new_object(), *cen = json_object_new_array();

		for (d = 0; cen && d < FEAT_DIM; d++)
			json_object_array_add(cen, report_jdbl(c[i].centroid[d]));
		json_object_object_add(e, "id", json_object_new_int64(c[i].id));
		json_object_object_add(e, "label", json_object_new_string(label_name(c[i].label)));
		json_object_object_add(e, "size", json_object_new_int64(c[i].size));
		json_object_object_add(e, "labels", report_jlabels(c[i].counts));
		json_object_object_add(e, "keys", report_jstr(c[i].keys));
		json_object_object_add(e, "centroid", cen);
		json_object_object_add(e, "reason", report_jstr(c[i].reason));
		json_object_array_add(cl, e);
	}
	json_object_object_add(j, "clusters", cl);
	ks = json_object_new_array();
	for (i = 0; ks && i < nlk && i < top; i++) {
		const struct off_key *k = &o->keys[lk[i]];
		json_object *e = json_object_new_object();

		json_object_object_add(e, "host", report_jstr(o->hosts[k->host]));
		json_object_object_add(e, "domain", json_object_new_string(domain_name(k->domain)));
		json_object_object_add(e, "key", report_jstr(k->name));
		json_object_object_add(e, "tgid", report_jstr(k->tgid));
		json_object_object_add(e, "kind", report_jstr(k->kind));
		json_object_object_add(e, "comm", report_jstr(k->comm));
		json_object_object_add(e, "labels", report_jlabels(k->counts));
		json_object_object_add(e, "daemon_labels", report_jlabels(k->daemon));
		json_object_array_add(ks, e);
	}
	json_object_object_add(j, "labelled_keys", ks);
	report_jprint(j, out);	/* and releases it */
	j = NULL;
	err = ferror(out) ? -EIO : 0;
out:
	json_object_put(j);
	free(lk);
	free(c);
	return err;
}

struct off_opts {
	struct offline_params p;
	bool json;
	const char *svg;
	unsigned long top;
};

static void cluster_usage(FILE *out)
{
	fprintf(out,
		"usage: cachescope cluster [OPTIONS] FILE.csv...\n"
		"\n"
		"Cluster and label again, offline, the rows of CSV files written by\n"
		"cachescoped --csv (of one host or many), with the daemon's features,\n"
		"rules and DBSCAN over every vector of every file at once.\n"
		"\n"
		"  --eps X          DBSCAN radius, (0, 2.24] (default 0.08, the daemon's)\n"
		"  --min-pts N      DBSCAN core size, 1..100000 (default 5)\n"
		"  --rules FILE     threshold overrides, NAME = VALUE lines (as cachescoped --rules)\n"
		"  --scope S        only the rows of scope S: workload (the process of\n"
		"                   cachescoped --workload) or system\n"
		"  --top N          labelled keys listed (default 30)\n"
		"  -j, --json       one JSON object instead of the tables\n"
		"  -h, --help       this text\n");
}

static void plot_usage(FILE *out)
{
	fprintf(out,
		"usage: cachescope plot [OPTIONS] FILE.csv... --svg OUT.svg\n"
		"\n"
		"Draw what cachescope cluster finds as one self-contained SVG: the\n"
		"busiest keys over time coloured by label, and the vectors in the plane\n"
		"of their first two principal components coloured by cluster.\n"
		"\n"
		"  --svg OUT.svg    the picture to write (atomically)\n"
		"  --top N          keys in the timeline, 1..200 (default 24)\n"
		"  --eps X, --min-pts N, --rules FILE, --scope S   as for cachescope cluster\n"
		"  -j, --json       say what was written (or the error) as one JSON object\n"
		"  -h, --help       this text\n");
}

/* A failure: one line on stderr, "cachescope VERB: msg", or under --json
 * one JSON document on stdout, {"error": "cachescope VERB: msg"}. */
static void say(bool json, const char *verb, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(bool json, const char *verb, const char *fmt, ...)
{
	char msg[1024], full[1100], e[STR_ESC_SIZE(1100)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full), "cachescope %s: %s", verb, msg);
	if (json) {
		char *j = cli_json_error(full);

		puts(j ? j : "{\"error\":\"out of memory\"}");
		free(j);
		fflush(stdout);
	} else {
		fprintf(stderr, "%s\n", ESC(e, full));
	}
}

static int parse_opts(int argc, char **argv, struct off_opts *op, bool plot)
{
	static const struct option longs[] = {
		{ "eps", required_argument, NULL, 'e' },
		{ "min-pts", required_argument, NULL, 'm' },
		{ "rules", required_argument, NULL, 'r' },
		{ "top", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "svg", required_argument, NULL, 's' },
		{ "scope", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *verb = plot ? "plot" : "cluster";
	char *end;
	int c;

	op->p.eps = 0.08;
	op->p.min_pts = 5;
	op->top = plot ? 24 : 30;
	/* errors of the options before it are JSON too */
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json"))
			op->json = true;
	optind = 0;	/* a fresh scan: main may have used getopt */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "jh", longs, NULL)) != -1) {
		switch (c) {
		case 'e':
			errno = 0;
			op->p.eps = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(op->p.eps > 0 && op->p.eps <= 2.24)) {
				say(op->json, verb, "--eps: '%s' is not a number in (0, 2.24]", optarg);
				return 2;
			}
			break;
		case 'm':
		case 't': {
			long v, hi = c == 'm' ? 100000 : plot ? 200 : 1000000;

			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 1 || v > hi) {
				say(op->json, verb, "--%s: '%s' is not a number in 1..%ld", c == 'm' ? "min-pts" : "top", optarg, hi);
				return 2;
			}
			if (c == 'm')
				op->p.min_pts = (unsigned int)v;
			else
				op->top = (unsigned long)v;
			break;
		}
		case 'r':
			op->p.rules_path = optarg;
			break;
		case 'S':
			if (strcmp(optarg, "workload") && strcmp(optarg, "system")) {
				say(op->json, verb, "--scope: '%s' is not workload or system", optarg);
				return 2;
			}
			op->p.scope = optarg;
			break;
		case 'j':
			op->json = true;
			break;
		case 's':
			if (!plot)
				goto bad;
			op->svg = optarg;
			break;
		case 'h':
			(plot ? plot_usage : cluster_usage)(stdout);
			return 1;
		default:
bad:
			say(op->json, verb, "unknown option or missing value: '%s' (see --help)", argv[optind - 1]);
			return 2;
		}
	}
	if (optind >= argc) {
		say(op->json, verb, "no CSV file given (see --help)");
		return 2;
	}
	if (plot && !op->svg) {
		say(op->json, "plot", "--svg OUT.svg is required (see --help)");
		return 2;
	}
	return 0;
}

static int load_or_say(struct offline *o, const struct off_opts *op, int argc, char **argv,
		       const char *verb)
{
	char err[700];
	int rc;

	rc = offline_load(o, argv + optind, argc - optind, &op->p, err, sizeof(err));
	if (rc) {
		say(op->json, verb, "%s", err);
		return 1;
	}
	return 0;
}

int offline_cluster_main(int argc, char **argv)
{
	struct off_opts op = { 0 };
	struct offline o;
	int rc;

	rc = parse_opts(argc, argv, &op, false);
	if (rc)
		return rc == 1 ? 0 : rc;
	if (load_or_say(&o, &op, argc, argv, "cluster")) {
		offline_release(&o);
		return 1;
	}
	rc = op.json ? print_json(&o, op.top, stdout) : print_text(&o, op.top, stdout);
	offline_release(&o);
	if (rc || fflush(stdout)) {
		say(op.json, "cluster", "cannot write the output: %s", strerror(rc ? -rc : errno));
		return 1;
	}
	return 0;
}

/* What plot wrote, under --json. */
static void plot_json(const struct offline *o, const char *svg)
{
	json_object *j = json_object_new_object();

	json_object_object_add(j, "svg", json_object_new_string(svg));
	json_object_object_add(j, "vectors", json_object_new_uint64(o->an.n));
	json_object_object_add(j, "keys", json_object_new_uint64(o->nkeys));
	json_object_object_add(j, "clusters", json_object_new_uint64(o->an.nclusters));
	json_object_object_add(j, "span_s", json_object_new_double(o->t1 - o->t0));
	report_jprint(j, stdout);
}

int offline_plot_main(int argc, char **argv)
{
	struct off_opts op = { 0 };
	struct offline o;
	char e[STR_ESC_SIZE(512)];
	int rc;

	rc = parse_opts(argc, argv, &op, true);
	if (rc)
		return rc == 1 ? 0 : rc;
	if (load_or_say(&o, &op, argc, argv, "plot")) {
		offline_release(&o);
		return 1;
	}
	rc = svg_write(&o, op.svg, (unsigned int)op.top);
	if (rc)
		say(op.json, "plot", "cannot write %s: %s", op.svg, strerror(-rc));
	else if (op.json)
		plot_json(&o, op.svg);
	else
		printf("%s: %zu vectors of %zu keys, %zu clusters, %.1f s\n", ESC(e, op.svg), o.an.n,
		       o.nkeys, o.an.nclusters, o.t1 - o.t0);
	offline_release(&o);
	return rc ? 1 : 0;
}
