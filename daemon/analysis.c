// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The analysis stage.  Vectors are appended in window order, so the history
 * is an array trimmed from the front.  Each run clusters the whole history
 * with DBSCAN, then renames the run's clusters to the ids of the previous
 * run they overlap most (members are the same vectors from run to run, so
 * overlap is exact), so a user watching sees a cluster keep its id.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "array.h"
#include "../cluster/dbscan.h"
#include "analysis.h"

/* ---- label counts per key ---- */

static uint64_t labels_hash(const void *entry, void *ctx)
{
	(void)ctx;
	return wkey_hash(&((const struct key_labels *)entry)->key);
}

static bool labels_of(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return wkey_eq(&((const struct key_labels *)entry)->key, key);
}

static struct key_labels *labels_find(const struct analysis *a, const struct wkey *k)
{
	return htab_find(&a->kl, wkey_hash(k), k);
}

/* The entry of k, made (with no counts) when there is none; NULL when out
 * of memory. */
static struct key_labels *labels_get(struct analysis *a, const struct wkey *k)
{
	struct key_labels *e = labels_find(a, k);

	if (e)
		return e;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->key = *k;
	if (htab_insert(&a->kl, e)) {
		free(e);
		return NULL;
	}
	return e;
}

const uint32_t *analysis_key_labels(const struct analysis *a, const struct wkey *k)
{
	const struct key_labels *e = labels_find(a, k);

	return e ? e->counts : NULL;
}

void analysis_key_gone(struct analysis *a, const struct wkey *k, const struct wkey *into)
{
	struct key_labels *e = labels_find(a, k), *o;
	int l;

	if (!e)
		return;
	htab_remove(&a->kl, e);
	o = into ? labels_find(a, into) : NULL;
	if (o) {
		for (l = 0; l < LABEL_COUNT; l++)
			o->counts[l] += e->counts[l];
	} else if (into) {
		/* k's entry becomes into's: no memory needed, and the table,
		 * one entry short, does not grow */
		e->key = *into;
		if (!htab_insert(&a->kl, e))
			return;
	}
	free(e);
}

void analysis_init(struct analysis *a, const struct rules *rules,
		   const struct analysis_params *p)
{
	memset(a, 0, sizeof(*a));
	htab_init(&a->kl, 256, 3, 4, labels_hash, labels_of, NULL);
	a->rules = *rules;
	a->eps = p->eps;
	a->min_pts = p->min_pts;
	a->history_windows = p->history_windows;
	a->history_max = p->history_max;
}

void analysis_release(struct analysis *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		free((char *)a->v[i].reason);
	free(a->v);
	free(a->clusters);
	free(a->cores);
	for (i = htab_next(&a->kl, 0); i < a->kl.cap; i = htab_next(&a->kl, i + 1))
		free(a->kl.slot[i]);
	htab_release(&a->kl);
	memset(a, 0, sizeof(*a));
}

static double dist2(const double *x, const double *y)
{
	double d = 0;
	int i;

	for (i = 0; i < FEAT_DIM; i++)
		d += (x[i] - y[i]) * (x[i] - y[i]);
	return d;
}

/* ---- placing a new vector: the grid of the last run's core points ----
 *
 * Cells have side eps, so a core point within eps of x lies in x's cell or
 * one of its 3^5 - 1 neighbours.  Cell coordinates are packed 12 bits each
 * (offset by GRID_HALF); the features are scaled to [0, 1], so that covers
 * eps down to about 1/2000, and any coordinate outside the range turns the
 * grid off (grid_ok) in favour of the scan it replaces. */
#define GRID_BITS 12
#define GRID_HALF (1 << (GRID_BITS - 1))
_Static_assert(FEAT_DIM * GRID_BITS <= 64, "grid cells must pack into 64 bits");

static bool grid_cell(const struct analysis *a, const double *x, int64_t *c)
{
	int d;

	for (d = 0; d < FEAT_DIM; d++) {
		double q = floor(x[d] / a->eps);

		if (!(q >= -GRID_HALF + 1 && q < GRID_HALF - 1))
			return false;	/* room for the neighbours too; and NaN */
		c[d] = (int64_t)q;
	}
	return true;
}

static uint64_t grid_pack(const int64_t *c)
{
	uint64_t id = 0;
	int d;

	for (d = 0; d < FEAT_DIM; d++)
		id = id << GRID_BITS | (uint64_t)(c[d] + GRID_HALF);
	return id;
}

static int core_cmp(const void *x, const void *y)
{
	const struct core_ref *p = x, *q = y;

	if (p->cell != q->cell)
		return p->cell < q->cell ? -1 : 1;
	return p->idx > q->idx ? -1 : p->idx < q->idx;	/* the latest first */
}

/* After a run: index its core points (a->v[i].core) by cell. */
static int grid_build(struct analysis *a)
{
	int64_t c[FEAT_DIM];
	size_t i, n = 0;

	free(a->cores);
	a->cores = NULL;
	a->ncores = 0;
	a->grid_ok = false;
	for (i = 0; i < a->n; i++)
		n += a->v[i].core;
	if (n && !(a->cores = malloc(n * sizeof(*a->cores))))
		return -ENOMEM;
	for (i = 0; i < a->n; i++) {
		if (!a->v[i].core)
			continue;
		if (!grid_cell(a, a->v[i].f.v, c))
			return 0;	/* scan instead */
		a->cores[a->ncores].cell = grid_pack(c);
		a->cores[a->ncores++].idx = i;
	}
	if (a->ncores)	/* no cores: a->cores is NULL, which qsort must not get */
		qsort(a->cores, a->ncores, sizeof(*a->cores), core_cmp);
	a->grid_ok = true;
	return 0;
}

/* First entry of cell in the sorted cores, or ncores. */
static size_t grid_find(const struct analysis *a, uint64_t cell)
{
	size_t lo = 0, hi = a->ncores, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (a->cores[mid].cell < cell)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* DBSCAN's rule for a new point: the cluster of a core point within eps.
 * Linear in the history; the grid below is used whenever it can be. */
int analysis_nearest_core_scan(const struct analysis *a, const double *x)
{
	double best = a->eps * a->eps, d;
	int cluster = CLUSTER_NOISE;
	size_t i;

	for (i = 0; i < a->n; i++) {
		if (!a->v[i].core)
			continue;
		d = dist2(x, a->v[i].f.v);
		if (d <= best) {
			best = d;
			cluster = a->v[i].cluster;
		}
	}
	return cluster;
}

/* The search of the cells round x's (nearest_cells): the best so far, as
 * the scan would choose it. */
struct near {
	const struct analysis *a;
	const double *x;
	double gap[FEAT_DIM][3];	/* the least distance to a neighbour cell,
					 * dimension by dimension: 0, below, above */
	int64_t c[FEAT_DIM];
	double best;
	size_t best_idx;
	int cluster;
	bool found;
};

static void near_cell(struct near *s, uint64_t cell)
{
	const struct analysis *a = s->a;
	size_t j;
	double d;

	for (j = grid_find(a, cell); j < a->ncores && a->cores[j].cell == cell; j++) {
		const struct vec_entry *v = &a->v[a->cores[j].idx];

		d = dist2(s->x, v->f.v);
		/* the scan's choice: the nearest, and of equals the latest */
		if (d < s->best || (d == s->best && (!s->found || a->cores[j].idx > s->best_idx))) {
			s->best = d;
			s->best_idx = a->cores[j].idx;
			s->cluster = v->cluster;
			s->found = true;
		}
		/* x itself, the latest of its copies in the cell (the cell's
		 * cores come latest first): none after it is nearer or later.
		 * Idle keys' vectors are one point, thousands of times over */
		if (d == 0)
			break;
	}
}

/* The cells at offsets -1, 0, +1 from x's in dimensions dim on, of those
 * fixed before (packed into cell so far, their least distance to x
 * squared in gap2): a cell no nearer than the best core point found is
 * not looked in.  x's own cell first, then its nearest neighbours, so that
 * the best falls early (of the 3^5 cells, about a fifth are looked in). */
static void nearest_cells(struct near *s, int dim, uint64_t cell, double gap2)
{
	static const int step[3] = { 0, -1, 1 };	/* as gap[][]: 0, below, above */
	int o;

	if (dim == FEAT_DIM) {
		near_cell(s, cell);
		return;
	}
	for (o = 0; o < 3; o++) {
		double g = gap2 + s->gap[dim][o] * s->gap[dim][o];

		if (g > s->best)
			continue;
		nearest_cells(s, dim + 1,
			      cell << GRID_BITS | (uint64_t)(s->c[dim] + step[o] + GRID_HALF),
			      g);
	}
}

int analysis_nearest_core(const struct analysis *a, const double *x)
{
	struct near s = { .a = a, .x = x, .best = a->eps * a->eps, .cluster = CLUSTER_NOISE };
	int d;

	if (!a->grid_ok || !grid_cell(a, x, s.c))
		return analysis_nearest_core_scan(a, x);
	for (d = 0; d < FEAT_DIM; d++) {
		/* a point of the cell below is at least x's distance from
		 * the cell's lower side away, of the one above from its upper
		 * side; a millionth of eps less, for the rounding of the
		 * cells' bounds */
		double lo = x[d] - (double)s.c[d] * a->eps, hi = (double)(s.c[d] + 1) * a->eps - x[d];
		double slack = a->eps * 1e-6;

		s.gap[d][0] = 0;
		s.gap[d][1] = lo > slack ? lo - slack : 0;
		s.gap[d][2] = hi > slack ? hi - slack : 0;
	}
	nearest_cells(&s, 0, 0, 0);
	return s.cluster;
}

/* Drop the oldest drop vectors; the core index follows them. */
static void trim_front(struct analysis *a, size_t drop)
{
	size_t i, k = 0;

	if (!drop)
		return;
	for (i = 0; i < drop; i++)
		free((char *)a->v[i].reason);
	memmove(a->v, a->v + drop, (a->n - drop) * sizeof(*a->v));
	a->n -= drop;
	for (i = 0; i < a->ncores; i++) {
		if (a->cores[i].idx < drop)
			continue;
		a->cores[k] = a->cores[i];
		a->cores[k++].idx -= drop;
	}
	a->ncores = k;
}

const struct vec_entry *analysis_add(struct analysis *a, const struct wrow *r,
				     uint64_t window_ns)
{
	char reason[VEC_REASON_MAX];
	struct key_labels *labels;
	struct vec_entry *e;
	struct evidence ev;
	struct fvec f;

	if (!features_from_row(r, window_ns, &f, &ev))
		return NULL;
	if (a->history_max && a->n >= a->history_max) {
		/* an eighth at a time: one move per many vectors */
		size_t drop = a->n - a->history_max + a->history_max / 8 + 1;

		a->history_trimmed += drop;
		trim_front(a, drop);
	}
	if (array_room(&a->v, &a->cap, a->n, sizeof(*a->v), 1024))
		return NULL;
	e = &a->v[a->n];
	memset(e, 0, sizeof(*e));
	e->window = r->window;
	e->key = *r->key;
	snprintf(e->name, sizeof(e->name), "%s", r->name);
	snprintf(e->comm, sizeof(e->comm), "%s", r->comm);
	e->f = f;
	e->growth_per_s = r->growth_per_s;
	e->grew_windows = r->grew_windows;
	e->free_ratio = ev.free_ratio;
	e->refault_share = ev.refault_share;
	e->label = classify(&a->rules, e->key.domain, e->name, &f, &ev, &a->kview, reason,
			    sizeof(reason));
	e->reason = strdup(reason);
	if (!e->reason)
		return NULL;
	e->cluster = analysis_nearest_core(a, f.v);
	a->n++;
	labels = labels_get(a, &e->key);
	if (!labels)
		a->labels_lost++;
	else if (e->label < LABEL_COUNT)
		labels->counts[e->label]++;
	return e;
}

static void trim_history(struct analysis *a, uint64_t now_window)
{
	size_t drop = 0;

	while (drop < a->n && a->v[drop].window + a->history_windows <= now_window)
		drop++;
	trim_front(a, drop);
}

double analysis_history_s(const struct analysis *a, uint64_t now_window,
			  uint64_t window_ns)
{
	uint64_t w = a->history_windows;

	if (a->n && now_window > a->v[0].window && now_window - a->v[0].window < w)
		w = now_window - a->v[0].window;
	return (double)(w * window_ns) / 1e9;
}

struct pair {
	int raw, old;
	unsigned int count;
};

static int pair_by_ids(const void *x, const void *y)
{
	const struct pair *p = x, *q = y;

	return p->raw != q->raw ? p->raw - q->raw : p->old - q->old;
}

static int pair_by_count(const void *x, const void *y)
{
	const struct pair *p = x, *q = y;

	if (p->count != q->count)
		return p->count < q->count ? 1 : -1;
	return p->raw != q->raw ? p->raw - q->raw : p->old - q->old;
}

/* Map this run's cluster numbers to stable ids: greatest overlap first. */
static int stable_ids(struct analysis *a, const int *raw, int k, int *ids)
{
	struct pair *pairs = malloc((a->n + 1) * sizeof(*pairs));
	char *old_taken;
	size_t i, np = 0, m = 0;
	int c;

	if (!pairs)
		return -ENOMEM;
	old_taken = calloc(a->next_id + 1, 1);
	if (!old_taken) {
		free(pairs);
		return -ENOMEM;
	}
	for (i = 0; i < a->n; i++)
		if (raw[i] >= 0 && a->v[i].cluster >= 0)
			pairs[np++] = (struct pair){ raw[i], a->v[i].cluster, 1 };
	qsort(pairs, np, sizeof(*pairs), pair_by_ids);
	for (i = 0; i < np; i++) {	/* merge equal (raw, old) pairs */
		if (m && pairs[m - 1].raw == pairs[i].raw && pairs[m - 1].old == pairs[i].old)
			pairs[m - 1].count++;
		else
			pairs[m++] = pairs[i];
	}
	qsort(pairs, m, sizeof(*pairs), pair_by_count);
	for (c = 0; c < k; c++)
		ids[c] = -1;
	for (i = 0; i < m; i++) {
		if (ids[pairs[i].raw] >= 0 || old_taken[pairs[i].old])
			continue;
		ids[pairs[i].raw] = pairs[i].old;
		old_taken[pairs[i].old] = 1;
	}
	for (c = 0; c < k; c++)
		if (ids[c] < 0)
			ids[c] = a->next_id++;
	free(old_taken);
	free(pairs);
	return 0;
}

struct key_count {
	const char *name;
	unsigned int n;
};

static int key_count_cmp(const void *x, const void *y)
{
	const struct key_count *p = x, *q = y;

	return p->n != q->n ? (p->n < q->n ? 1 : -1) : strcmp(p->name, q->name);
}

/* The busiest key among the members of raw cluster c labelled l (counted
 * over the first 16 distinct keys met). */
static const char *minority_keys(const struct analysis *a, const int *raw, int c,
				 enum cs_label l)
{
	struct key_count kc[16];
	unsigned int nk = 0, j, best = 0;
	size_t i;

	for (i = 0; i < a->n; i++) {
		if (raw[i] != c || a->v[i].label != l)
			continue;
		for (j = 0; j < nk && strcmp(kc[j].name, a->v[i].name); j++)
			;
		if (j < nk)
			kc[j].n++;
		else if (nk < 16)
			kc[nk++] = (struct key_count){ a->v[i].name, 1 };
	}
	for (j = 1; j < nk; j++)
		if (kc[j].n > kc[best].n)
			best = j;
	return nk ? kc[best].name : "";
}

/* The keys of one cluster that carry its label, as met (the first 8), and
 * its newest member that does. */
struct cluster_keys {
	struct key_count kc[8];
	unsigned int nk;
	const struct vec_entry *latest;
};

/* Each cluster's size, label counts, centroid, label, busiest keys and
 * reason: two passes over the history for all k clusters together (a pass
 * a cluster was k times the history, up to 16 384 vectors, every second). */
static int describe_clusters(struct analysis *a, const int *raw, int k)
{
	struct cluster_keys *ck, *ks;
	struct cluster_info *ci;
	unsigned int j;
	size_t i, len;
	int c, d;

	if (k <= 0)
		return 0;
	ck = calloc(k, sizeof(*ck));
	if (!ck)
		return -ENOMEM;
	for (i = 0; i < a->n; i++) {
		const struct vec_entry *e = &a->v[i];

		if (raw[i] < 0)
			continue;
		ci = &a->clusters[raw[i]];
		ci->size++;
		ci->counts[e->label]++;
		for (d = 0; d < FEAT_DIM; d++)
			ci->centroid[d] += e->f.v[d];
	}
	for (c = 0; c < k; c++) {
		ci = &a->clusters[c];
		for (d = 0; d < FEAT_DIM; d++)
			ci->centroid[d] /= ci->size ? ci->size : 1;
		ci->label = classify_cluster(&a->rules, ci->counts, ci->size);
	}
	/* name the keys that carry the cluster's label, busiest first */
	for (i = 0; i < a->n; i++) {
		const struct vec_entry *e = &a->v[i];

		if (raw[i] < 0 || e->label != a->clusters[raw[i]].label)
			continue;
		ks = &ck[raw[i]];
		ks->latest = e;
		for (j = 0; j < ks->nk && strcmp(ks->kc[j].name, e->name); j++)
			;
		if (j < ks->nk)
			ks->kc[j].n++;
		else if (ks->nk < 8)
			ks->kc[ks->nk++] = (struct key_count){ e->name, 1 };
	}
	for (c = 0; c < k; c++) {
		ci = &a->clusters[c];
		ks = &ck[c];
		qsort(ks->kc, ks->nk, sizeof(ks->kc[0]), key_count_cmp);
		ci->keys[0] = '\0';
		len = 0;
		for (j = 0; j < ks->nk && j < 3; j++)
			len += snprintf(ci->keys + len, len < sizeof(ci->keys) ? sizeof(ci->keys) - len : 0,
					"%s%s", j ? "," : "", ks->kc[j].name);
		if (ci->label == LABEL_NORMAL) {
			unsigned int l;

			len = snprintf(ci->reason, sizeof(ci->reason), "normal: %u of %u members normal",
				       ci->counts[LABEL_NORMAL], ci->size);
			/* a minority label still deserves a mention, with its keys */
			for (l = LABEL_NORMAL + 1; l < LABEL_COUNT; l++) {
				if (!ci->counts[l] || len >= sizeof(ci->reason))
					continue;
				len += snprintf(ci->reason + len, sizeof(ci->reason) - len, "; %s %u (%s)",
						label_name(l), ci->counts[l], minority_keys(a, raw, c, l));
			}
		} else
			snprintf(ci->reason, sizeof(ci->reason), "%u of %u members; %s",
				 ci->counts[ci->label], ci->size, ks->latest ? ks->latest->reason : "");
	}
	free(ck);
	return 0;
}

int analysis_recluster(struct analysis *a, uint64_t now_window)
{
	struct timespec t0, t1;
	double *pts = NULL;
	int *raw = NULL, *ids = NULL, k, err = 0;
	uint8_t *core = NULL;
	size_t i;
	int c;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	trim_history(a, now_window);
	free(a->clusters);
	a->clusters = NULL;
	a->nclusters = 0;
	a->noise = 0;
	if (!a->n)
		return 0;
	pts = malloc(a->n * FEAT_DIM * sizeof(*pts));
	raw = malloc(a->n * sizeof(*raw));
	core = malloc(a->n);
	if (!pts || !raw || !core) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < a->n; i++)
		memcpy(pts + i * FEAT_DIM, a->v[i].f.v, sizeof(a->v[i].f.v));
	k = dbscan_run(pts, a->n, FEAT_DIM, a->eps, a->min_pts, raw, core);
	if (k < 0) {
		err = k;
		goto out;
	}
	ids = malloc((k + 1) * sizeof(*ids));
	a->clusters = calloc(k + 1, sizeof(*a->clusters));
	if (!ids || !a->clusters) {
		err = -ENOMEM;
		goto out;
	}
	err = stable_ids(a, raw, k, ids);
	if (err)
		goto out;
	for (c = 0; c < k; c++)
		a->clusters[c].id = ids[c];
	err = describe_clusters(a, raw, k);
	if (err)
		goto out;
	a->nclusters = k;
	for (i = 0; i < a->n; i++) {
		a->v[i].cluster = raw[i] >= 0 ? ids[raw[i]] : CLUSTER_NOISE;
		a->v[i].core = core[i];
		a->noise += raw[i] < 0;
	}
	a->runs++;
	err = grid_build(a);
	if (!err)
		err = k;
out:
	clock_gettime(CLOCK_MONOTONIC, &t1);
	a->last_run_ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	free(pts);
	free(raw);
	free(core);
	free(ids);
	return err;
}

/* ---- the keys labelled lately ---- */

struct recent {
	struct wkey key;
	uint64_t window;
	enum cs_label label;
};

/* by key, newest first */
static int recent_cmp(const void *a, const void *b)
{
	const struct recent *x = a, *y = b;
	int c = wkey_cmp(&x->key, &y->key);

	if (c)
		return c;
	return x->window > y->window ? -1 : x->window < y->window ? 1 : 0;
}

int analysis_count_recent(const struct analysis *a, uint64_t from, uint64_t *by_label)
{
	struct recent *r;
	size_t i, n = 0;

	if (!a->n)
		return 0;
	r = malloc(a->n * sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (i = a->n; i-- > 0 && a->v[i].window >= from;) {
		r[n].key = a->v[i].key;
		r[n].window = a->v[i].window;
		r[n++].label = a->v[i].label;
	}
	qsort(r, n, sizeof(*r), recent_cmp);
	for (i = 0; i < n; i++) {
		if (i && !wkey_cmp(&r[i - 1].key, &r[i].key))
			continue;	/* an older vector of the key before */
		if (r[i].label < LABEL_COUNT)
			by_label[r[i].label]++;
	}
	free(r);
	return 0;
}
