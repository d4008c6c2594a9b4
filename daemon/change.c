// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Behaviour changes found by clustering (change.h).  The recent history is
 * copied, sorted by key and window, and each key's run is split in its
 * before and after spans; the clusters the spans mostly sit in, and how
 * far the spans' means are apart, decide.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "change.h"
#include "window.h"
#include "../cluster/dbscan.h"

struct told {
	struct wkey key;
	uint64_t window;
};

static uint64_t told_hash(const void *entry, void *ctx)
{
	(void)ctx;
	return wkey_hash(&((const struct told *)entry)->key);
}

static bool told_eq(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return wkey_eq(&((const struct told *)entry)->key, key);
}

void changes_init(struct changes *c)
{
	memset(c, 0, sizeof(*c));
	htab_init(&c->told, 64, 7, 10, told_hash, told_eq, NULL);
}

void changes_release(struct changes *c)
{
	size_t i;

	for (i = htab_next(&c->told, 0); i < c->told.cap; i = htab_next(&c->told, i + 1))
		free(c->told.slot[i]);
	htab_release(&c->told);
}

void changes_key_gone(struct changes *c, const struct wkey *k)
{
	struct told *t = htab_find(&c->told, wkey_hash(k), k);

	if (t) {
		htab_remove(&c->told, t);
		free(t);
	}
}

const char *change_feature(unsigned int i)
{
	static const char *const names[FEAT_DIM] = { "freq", "hot", "entr", "loc", "numa" };

	return i < FEAT_DIM ? names[i] : "?";
}

const char *change_line(char *buf, size_t n, const struct change *ch)
{
	char from[24], to[24], who[48];
	size_t len;
	unsigned int i;

	if (ch->from == CLUSTER_NOISE)
		snprintf(from, sizeof(from), "noise");
	else
		snprintf(from, sizeof(from), "cluster %d", ch->from);
	if (ch->to == CLUSTER_NOISE)
		snprintf(to, sizeof(to), "noise");
	else
		snprintf(to, sizeof(to), "cluster %d", ch->to);
	if (ch->key.tgid == CS_TGID_OTHER)
		snprintf(who, sizeof(who), "other processes");
	else if (tgid_is_family(ch->key.tgid))
		snprintf(who, sizeof(who), "young processes (%s)", ch->comm);
	else
		snprintf(who, sizeof(who), "pid %u (%s)", ch->key.tgid, ch->comm);
	/* the key left its own history's clusters; among all keys' clusters
	 * it may have stayed in the one it was in (a big one) */
	if (ch->from == ch->to)
		len = (size_t)snprintf(buf, n, "%s %s of %s left its history's clusters, staying in %s:",
				       domain_name(ch->key.domain), ch->name, who, from);
	else
		len = (size_t)snprintf(buf, n, "%s %s of %s left %s for %s:",
				       domain_name(ch->key.domain), ch->name, who, from, to);
	for (i = 0; i < FEAT_DIM && len < n; i++) {
		double d = ch->after[i] - ch->before[i];

		if (fabs(d) >= 0.1)
			len += (size_t)snprintf(buf + len, n - len, " %s %+.2f (%.2f to %.2f)",
						change_feature(i), d, ch->before[i], ch->after[i]);
	}
	if (len < n)
		snprintf(buf + len, n - len, "; distance %.2f", ch->dist);
	return buf;
}

struct pt {
	struct wkey key;
	uint64_t window;
	int cluster;
	const struct vec_entry *v;
};

static int pt_cmp(const void *x, const void *y)
{
	const struct pt *a = x, *b = y;
	int c = wkey_cmp(&a->key, &b->key);

	if (c)
		return c;
	return a->window < b->window ? -1 : a->window > b->window;
}

static int int_cmp(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;

	return (a > b) - (a < b);
}

/* The id most of lab[0..n) hold, and its share (sorted into ids, of n at
 * least). */
static int majority_of(const int *lab, size_t n, int *ids, double *share)
{
	size_t i, run = 0, best = 0;
	int id = CLUSTER_NOISE;

	memcpy(ids, lab, n * sizeof(*ids));
	qsort(ids, n, sizeof(*ids), int_cmp);
	for (i = 0; i < n; i++) {
		run = i && ids[i] == ids[i - 1] ? run + 1 : 1;
		if (run > best) {
			best = run;
			id = ids[i];
		}
	}
	*share = n ? (double)best / n : 0;
	return id;
}

/* The cluster (of all keys') most of p[0..n) sit in; tmp, ids: room for
 * n ints. */
static int majority(const struct pt *p, size_t n, int *tmp, int *ids)
{
	double share;
	size_t i;

	for (i = 0; i < n; i++)
		tmp[i] = p[i].cluster;
	return majority_of(tmp, n, ids, &share);
}

static void mean(const struct pt *p, size_t n, double *m)
{
	size_t i, d;

	for (d = 0; d < FEAT_DIM; d++)
		m[d] = 0;
	for (i = 0; i < n; i++)
		for (d = 0; d < FEAT_DIM; d++)
			m[d] += p[i].v->f.v[d] / n;
}

/* The key's run p[0..n) (window order): a change, into ch?  Its history
 * is the run before hist_end, the place it left the history's last
 * recent_from.. hist_end, its newest span the run from split on.  ids,
 * tmp: room for n ints; pts, core: for n points and flags. */
static bool judge(const struct pt *p, size_t n, uint64_t recent_from, uint64_t hist_end,
		  uint64_t split, double eps, unsigned int min_pts, int *ids, int *tmp,
		  double *pts, uint8_t *core, struct change *ch)
{
	size_t nh = 0, nr, na, a0, i, k, novel = 0, first = SIZE_MAX;
	double d2 = 0;
	unsigned int d;
	int *lab = tmp;

	while (nh < n && p[nh].window < hist_end)
		nh++;
	for (a0 = nh; a0 < n && p[a0].window < split; a0++)
		;
	na = n - a0;
	for (nr = 0; nr < nh && p[nh - 1 - nr].window >= recent_from; nr++)
		;
	if (nh < CHANGE_MIN_BEFORE || na < CHANGE_MIN_AFTER || !nr)
		return false;
	/* cheap first: did the newest span's mean move from the recent one's? */
	mean(p + nh - nr, nr, ch->before);
	mean(p + a0, na, ch->after);
	for (d = 0; d < FEAT_DIM; d++)
		d2 += (ch->after[d] - ch->before[d]) * (ch->after[d] - ch->before[d]);
	ch->dist = sqrt(d2);
	if (ch->dist < CHANGE_MIN_DIST)
		return false;
	/* the key's history clustered as the daemon clusters all vectors: a
	 * newest vector within eps of none of its core points is outside
	 * every cluster the key lived in */
	for (i = 0; i < nh; i++)
		memcpy(pts + i * FEAT_DIM, p[i].v->f.v, sizeof(p[i].v->f.v));
	if (dbscan_run(pts, nh, FEAT_DIM, eps, min_pts, lab, core) < 0)
		return false;
	for (i = a0; i < n; i++) {
		const double *x = p[i].v->f.v;
		bool near = false;

		for (k = 0; k < nh && !near; k++) {
			double s = 0;

			if (!core[k])
				continue;
			for (d = 0; d < FEAT_DIM; d++)
				s += (x[d] - pts[k * FEAT_DIM + d]) * (x[d] - pts[k * FEAT_DIM + d]);
			near = s <= eps * eps;
		}
		if (!near) {
			novel++;
			if (first == SIZE_MAX)
				first = i;
		}
	}
	if (novel < CHANGE_NOVEL_SHARE * na)
		return false;
	ch->key = p[0].key;
	/* where the spans sit among all keys' clusters, for the reader */
	ch->from = majority(p + nh - nr, nr, tmp, ids);
	ch->to = majority(p + a0, na, tmp, ids);
	ch->window = p[first].window;
	snprintf(ch->name, sizeof(ch->name), "%s", p[n - 1].v->name);
	snprintf(ch->comm, sizeof(ch->comm), "%s", p[n - 1].v->comm);
	return true;
}

int changes_scan(struct changes *c, const struct analysis *a, uint64_t now_window,
		 uint64_t window_ns, void (*fn)(const struct change *ch, void *ctx), void *ctx)
{
	uint64_t after = (uint64_t)(CHANGE_AFTER_S * 1e9 / window_ns);
	uint64_t gap = (uint64_t)(CHANGE_GAP_S * 1e9 / window_ns);
	uint64_t recent = (uint64_t)(CHANGE_RECENT_S * 1e9 / window_ns);
	uint64_t split = now_window > after ? now_window - after : 0;
	uint64_t hist_end = split > gap ? split - gap : 0;
	uint64_t recent_from = hist_end > recent ? hist_end - recent : 0;
	/* once told, the key's new place needs min_pts vectors in its history */
	uint64_t quiet = after + gap + (uint64_t)(1e9 / window_ns);
	struct pt *p;
	size_t n = 0, i, j;
	int found = 0, *ids, *tmp;
	double *pts;
	uint8_t *core;

	if (!a->n)
		return 0;
	p = malloc(a->n * sizeof(*p));
	ids = malloc(a->n * sizeof(*ids));
	tmp = malloc(a->n * sizeof(*tmp));
	pts = malloc(a->n * FEAT_DIM * sizeof(*pts));
	core = malloc(a->n);
	if (!p || !ids || !tmp || !pts || !core) {
		found = -ENOMEM;
		goto out;
	}
	for (i = 0; i < a->n; i++) {
		const struct vec_entry *v = &a->v[i];

		p[n].key = v->key;
		p[n].window = v->window;
		p[n].cluster = v->cluster;
		p[n++].v = v;
	}
	qsort(p, n, sizeof(*p), pt_cmp);
	for (i = 0; i < n; i = j) {
		struct told *t;
		struct change ch;

		for (j = i + 1; j < n && !wkey_cmp(&p[j].key, &p[i].key); j++)
			;
		t = htab_find(&c->told, wkey_hash(&p[i].key), &p[i].key);
		if (t && t->window > now_window)
			continue;
		memset(&ch, 0, sizeof(ch));
		if (!judge(p + i, j - i, recent_from, hist_end, split, a->eps, a->min_pts, ids, tmp,
			   pts, core, &ch))
			continue;
		if (!t) {
			t = calloc(1, sizeof(*t));
			if (t)
				t->key = p[i].key;
			if (!t || htab_insert(&c->told, t)) {
				free(t);
				c->lost++;
				continue;
			}
		}
		t->window = now_window + quiet;	/* quiet until then */
		c->ring[(c->head + c->n) % CHANGE_KEEP] = ch;
		if (c->n < CHANGE_KEEP)
			c->n++;
		else
			c->head = (c->head + 1) % CHANGE_KEEP;
		c->found++;
		found++;
		if (fn)
			fn(&ch, ctx);
	}
out:
	free(p);
	free(ids);
	free(tmp);
	free(pts);
	free(core);
	return found;
}
