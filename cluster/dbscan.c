// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Exact DBSCAN (definitions in dbscan.h, identical to scikit-learn's), for
 * grouping feature vectors of a few dimensions.
 *
 * The one idea: a uniform grid whose cells are a hair wider than eps, so a
 * point's neighbours all lie in its own cell or the 3^dim - 1 around it,
 * and tight bounding boxes of the cells decide whole cells at once where
 * they can.  Points are radix-sorted by cell number, so cells come in
 * lexicographic order, each a contiguous range, and form a trie (level k:
 * runs of cells equal in coordinates 0..k).  One walk over pairs of trie
 * nodes at most one step apart lists, once, every pair of adjacent cells
 * whose boxes come within eps.  Every later step runs over that list:
 *   1. core flags: neighbour counts that stop at min_pts; a box wholly
 *      within eps of a point counts whole, one wholly beyond is skipped, a
 *      cell whose box has diameter <= eps is a clique;
 *   2. clusters: union-find over core points, pair of cells by pair; once a
 *      cell's core points are all in one set, a pair of such cells needs a
 *      single touching pair of points, or nothing when already joined;
 *   3. labels: clusters numbered by their lowest-index core point; a border
 *      point takes the lowest-numbered cluster among its core neighbours.
 * Each shortcut compares a bound computed in the same order and rounding as
 * the distance itself (sum over dims of (a_i - b_i)^2 against eps * eps),
 * so floating-point monotonicity keeps it exact, ties on eps included.
 *
 * Time: O(n) to sort (O(n log n) when the grid has over 2^32 cells), O(dim
 * * P) for the walk over the P pairs of adjacent cells among C non-empty
 * ones (P < C * 3^dim / 2), then per point the candidates in adjacent cells
 * that boxes leave open; counting stops at min_pts.
 * Worst case (most points in a few cells wider than eps) O(n^2).  Memory:
 * a sorted copy of the points (its space doubles as the sort's), 13 bytes
 * per point, 13 + 16 * dim per cell, 8 per adjacent pair kept (tens per
 * cell in clustered data), transient trie levels of 8 * dim per cell.
 */

/* keep a*b+c out of fused multiply-add so sums round as sklearn's do */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* qsort_r */
#endif
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "dbscan.h"

#define CELL_CLIQUE 1u		/* box diameter <= eps: all mutual neighbours */
#define CELL_SATURATED 2u	/* every point counted min_pts neighbours */
#define CELL_MERGED 4u		/* all core points already in one set */
#define RADIX_BITS 11

struct grid {
	unsigned int dim;
	uint32_t n;
	unsigned int min_pts;
	double eps2;

	/*
	 * Grid coordinate along k: (x * h - lo_h) * inv, truncated.  When
	 * numbered, sum(coord[k] * mul[k]) numbers cells in lexicographic
	 * order below 2^32.
	 */
	double h[DBSCAN_MAX_DIM], lo_h[DBSCAN_MAX_DIM], inv[DBSCAN_MAX_DIM];
	uint64_t mul[DBSCAN_MAX_DIM];
	int numbered;

	/* per point, by position in cell order */
	double *pts;		/* n * dim */
	uint32_t *orig;		/* index in the caller's array */
	uint8_t *core;
	uint32_t *up;		/* neighbour counts, then union-find parent */
	int32_t *lab;

	/* per cell, in lexicographic order of grid coordinates */
	uint32_t ncell;
	uint32_t *start;	/* ncell + 1 positions */
	uint32_t *ncore;	/* core points come first in the cell */
	double *box;		/* ncell * 2 * dim: lows, then highs */
	uint8_t *flags;
	int32_t *clab;		/* label shared by all core points, or -1 */

	/* pairs of adjacent cells within eps, a < b, as a << 32 | b */
	uint64_t *pair;
	size_t npair;
};

static void grid_free(struct grid *g)
{
	free(g->pts);
	free(g->orig);
	free(g->core);
	free(g->up);
	free(g->lab);
	free(g->start);
	free(g->ncore);
	free(g->box);
	free(g->flags);
	free(g->clab);
	free(g->pair);
}

/* ---- distances: the same sums, in the same order, as sklearn ---- */

static inline __attribute__((always_inline)) double
dist2(const double *a, const double *b, unsigned int dim)
{
	double s = 0, t;
	unsigned int k;

	for (k = 0; k < dim; k++) {
		t = a[k] - b[k];
		s += t * t;
	}
	return s;
}

static inline double pos(double v)
{
	return v > 0 ? v : 0;
}

/*
 * Bounds on dist2(x, q) over every q inside box b (lows, then highs).  As
 * x[k] - q[k] rounds monotonically in q[k], each term is bounded by the
 * term at a face, and the rounded sum by the sum of the bounds.  At most
 * one of the two gaps along an axis is non-zero, so their sum is exact.
 */
static inline __attribute__((always_inline)) void
box_range(const double *x, const double *b, unsigned int dim, double *near,
	  double *far)
{
	double n = 0, f = 0, a, z, t;
	unsigned int k;

	for (k = 0; k < dim; k++) {
		a = x[k] - b[k];
		z = x[k] - b[dim + k];
		t = pos(-a) + pos(z);
		n += t * t;
		a = fabs(a);
		z = fabs(z);
		t = a > z ? a : z;
		f += t * t;
	}
	*near = n;
	*far = f;
}

static inline __attribute__((always_inline)) double
box_near(const double *x, const double *b, unsigned int dim)
{
	double n = 0, t;
	unsigned int k;

	for (k = 0; k < dim; k++) {
		t = pos(b[k] - x[k]) + pos(x[k] - b[dim + k]);
		n += t * t;
	}
	return n;
}

/* lower bound on dist2 between any point of box a and any of box b */
static inline __attribute__((always_inline)) double
box_gap(const double *a, const double *b, unsigned int dim)
{
	double n = 0, t;
	unsigned int k;

	for (k = 0; k < dim; k++) {
		t = pos(b[k] - a[dim + k]) + pos(a[k] - b[dim + k]);
		n += t * t;
	}
	return n;
}

/*
 * How many of the m points at q are within eps of x; counting may stop
 * once at least need (it goes four at a time, four sums in flight).
 */
static inline __attribute__((always_inline)) uint32_t
count_near(const double *x, const double *q, uint32_t m, uint32_t need,
	   double eps2, unsigned int dim)
{
	double s0, s1, s2, s3, t0, t1, t2, t3;
	uint32_t cnt = 0, i = 0;
	unsigned int k;

	for (; i + 4 <= m && cnt < need; i += 4, q += 4 * dim) {
		s0 = s1 = s2 = s3 = 0;
		for (k = 0; k < dim; k++) {
			t0 = x[k] - q[k];
			t1 = x[k] - q[dim + k];
			t2 = x[k] - q[2 * dim + k];
			t3 = x[k] - q[3 * dim + k];
			s0 += t0 * t0;
			s1 += t1 * t1;
			s2 += t2 * t2;
			s3 += t3 * t3;
		}
		cnt += (s0 <= eps2) + (s1 <= eps2) + (s2 <= eps2) +
		       (s3 <= eps2);
	}
	for (; i < m && cnt < need; i++, q += dim)
		cnt += dist2(x, q, dim) <= eps2;
	return cnt;
}

/* ---- union-find over positions of core points ---- */

static inline uint32_t uf_find(uint32_t *up, uint32_t x)
{
	while (up[x] != x) {
		up[x] = up[up[x]];
		x = up[x];
	}
	return x;
}

static inline void uf_join(uint32_t *up, uint32_t a, uint32_t b)
{
	a = uf_find(up, a);
	b = uf_find(up, b);
	if (a < b)
		up[b] = a;
	else if (b < a)
		up[a] = b;
}

/* ---- the grid ---- */

static inline int64_t grid_coord(const struct grid *g, double x,
				 unsigned int k)
{
	return (int64_t)((x * g->h[k] - g->lo_h[k]) * g->inv[k]);
}

/* the coordinate of a cell, from the low corner of its box */
static inline int64_t cell_coord(const struct grid *g, uint32_t cell,
				 unsigned int k)
{
	return grid_coord(g, g->box[(size_t)cell * 2 * g->dim + k], k);
}

/*
 * Choose the grid.  Neighbours pass dist2 <= eps2, so in real numbers no
 * coordinate differs by reach or more; a cell side a hair above reach,
 * the hair wider than the rounding of grid coordinates, keeps any two
 * neighbours at most one cell apart.  Coordinates are halved first where
 * max - min overflows.  Returns -EINVAL on a non-finite coordinate.
 */
static int grid_scale(struct grid *g, const double *points)
{
	double lo[DBSCAN_MAX_DIM], hi[DBSCAN_MAX_DIM], reach, span, side, x;
	uint64_t count[DBSCAN_MAX_DIM], stride = 1;
	unsigned int dim = g->dim, k;
	size_t i;

	for (k = 0; k < dim; k++) {
		lo[k] = INFINITY;
		hi[k] = -INFINITY;
	}
	for (i = 0; i < (size_t)g->n * dim; i += dim) {
		for (k = 0; k < dim; k++) {
			x = points[i + k];
			if (!isfinite(x))
				return -EINVAL;
			if (x < lo[k])
				lo[k] = x;
			if (x > hi[k])
				hi[k] = x;
		}
	}

	/*
	 * Each term d * d of a neighbour's sum is <= eps2, and d * d rounds
	 * to at least d^2 (1 - 2^-53) - 2^-1075, so a neighbour's coordinates
	 * differ by less than reach, even where eps2 is subnormal or zero.
	 */
	reach = sqrt(g->eps2 + 0x1p-1070) * (1 + 0x1p-40);

	/*
	 * Grid coordinates round with a relative error under 2^-51, below
	 * 2^-5 of a cell as they stay under 2^46: a hair of 2^-20 of the
	 * side, or of 2^-46 of the span where that is more, covers it.
	 */
	for (k = 0; k < dim; k++) {
		g->h[k] = isfinite(hi[k] - lo[k]) ? 1 : 0.5;
		g->lo_h[k] = lo[k] * g->h[k];
		span = hi[k] * g->h[k] - g->lo_h[k];
		side = reach * g->h[k];
		side += fmax(side * 0x1p-20, span * 0x1p-46);
		g->inv[k] = side > 0 && isfinite(side) ? 1 / side : 0;
		count[k] = (uint64_t)grid_coord(g, hi[k], k) + 1;
	}

	/* number the cells when 32 bits will do */
	g->numbered = 1;
	for (k = dim; k-- > 0;) {
		g->mul[k] = stride;
		if (__builtin_mul_overflow(stride, count[k], &stride) ||
		    stride > UINT32_MAX)
			g->numbered = 0;
	}
	return 0;
}

/*
 * Radix sort of cell number << 32 | index, on the cell number, in scratch
 * space of 2 * n words (that of the sorted copy of the points to come).
 */
static int grid_sort_radix(struct grid *g, const double *points,
			   uint32_t *order, uint64_t *scratch)
{
	const uint64_t mask = (1u << RADIX_BITS) - 1;
	uint64_t *a = scratch, *b = scratch + g->n, *t, key, top = 0;
	unsigned int dim = g->dim, k, shift;
	uint32_t *count, n = g->n;
	size_t i, c, sum, v;

	count = malloc(sizeof(*count) << RADIX_BITS);
	if (!count)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		key = 0;
		for (k = 0; k < dim; k++)
			key += (uint64_t)grid_coord(g, points[i * dim + k], k) *
			       g->mul[k];
		a[i] = key << 32 | i;
		top |= key;
	}
	for (shift = 32; shift < 64 && top >> (shift - 32);
	     shift += RADIX_BITS) {
		memset(count, 0, sizeof(*count) << RADIX_BITS);
		for (i = 0; i < n; i++)
			count[(a[i] >> shift) & mask]++;
		for (c = 0, sum = 0; c <= mask; c++) {
			v = count[c];
			count[c] = (uint32_t)sum;
			sum += v;
		}
		for (i = 0; i < n; i++)
			b[count[(a[i] >> shift) & mask]++] = a[i];
		t = a;
		a = b;
		b = t;
	}
	for (i = 0; i < n; i++)
		order[i] = (uint32_t)a[i];
	free(count);
	return 0;
}

struct tuple_ctx {
	const int64_t *co;
	unsigned int dim;
};

static int cmp_tuple(const void *x, const void *y, void *arg)
{
	const struct tuple_ctx *t = arg;
	const int64_t *a = t->co + (size_t)*(const uint32_t *)x * t->dim;
	const int64_t *b = t->co + (size_t)*(const uint32_t *)y * t->dim;
	unsigned int k;

	for (k = 0; k < t->dim; k++)
		if (a[k] != b[k])
			return a[k] < b[k] ? -1 : 1;
	return 0;
}

/* For grids too large to number: sort on coordinate tuples. */
static int grid_sort_tuples(struct grid *g, const double *points,
			    uint32_t *order)
{
	struct tuple_ctx t = { .dim = g->dim };
	unsigned int k;
	int64_t *co;
	size_t i;

	co = malloc((size_t)g->n * g->dim * sizeof(*co));
	if (!co)
		return -ENOMEM;
	for (i = 0; i < g->n; i++) {
		order[i] = (uint32_t)i;
		for (k = 0; k < g->dim; k++)
			co[i * g->dim + k] =
				grid_coord(g, points[i * g->dim + k], k);
	}
	t.co = co;
	qsort_r(order, g->n, sizeof(*order), cmp_tuple, &t);
	free(co);
	return 0;
}

/* Is the point at x in another cell than the one whose coordinates are c? */
static inline int new_cell(const struct grid *g, const double *x, int64_t *c)
{
	unsigned int k;
	int64_t v;
	int moved = 0;

	for (k = 0; k < g->dim; k++) {
		v = grid_coord(g, x[k], k);
		moved |= v != c[k];
		c[k] = v;
	}
	return moved;
}

/*
 * Copy the points in lexicographic order of their cells, cut the cells,
 * and give each its box and, when the box has diameter <= eps, the clique
 * flag.
 */
static int grid_build(struct grid *g, const double *points)
{
	unsigned int dim = g->dim, k;
	int64_t c[DBSCAN_MAX_DIM] = { 0 };
	uint32_t p, cell;
	const double *x;
	double *b, d, t;
	int err;

	g->orig = malloc((size_t)g->n * sizeof(*g->orig));
	g->pts = malloc((size_t)g->n * (dim > 2 ? dim : 2) * sizeof(*g->pts));
	if (!g->orig || !g->pts)
		return -ENOMEM;
	err = g->numbered ?
	      grid_sort_radix(g, points, g->orig, (uint64_t *)g->pts) :
	      grid_sort_tuples(g, points, g->orig);
	if (err)
		return err;

	g->ncell = 0;
	for (p = 0; p < g->n; p++) {
		if (p + 8 < g->n)
			__builtin_prefetch(points + (size_t)g->orig[p + 8] * dim);
		x = points + (size_t)g->orig[p] * dim;
		for (k = 0; k < dim; k++)
			g->pts[(size_t)p * dim + k] = x[k];
		g->ncell += new_cell(g, x, c) || !p;
	}

	g->start = malloc(((size_t)g->ncell + 1) * sizeof(*g->start));
	g->box = malloc((size_t)g->ncell * 2 * dim * sizeof(*g->box));
	g->flags = calloc(g->ncell, sizeof(*g->flags));
	if (!g->start || !g->box || !g->flags)
		return -ENOMEM;
	b = g->box;
	for (p = 0, cell = 0; p < g->n; p++) {
		x = g->pts + (size_t)p * dim;
		if (new_cell(g, x, c) || !p) {
			g->start[cell] = p;
			b = g->box + (size_t)cell++ * 2 * dim;
			memcpy(b, x, dim * sizeof(*x));
			memcpy(b + dim, x, dim * sizeof(*x));
			continue;
		}
		for (k = 0; k < dim; k++) {
			if (x[k] < b[k])
				b[k] = x[k];
			if (x[k] > b[dim + k])
				b[dim + k] = x[k];
		}
	}
	g->start[g->ncell] = g->n;

	for (cell = 0; cell < g->ncell; cell++) {
		b = g->box + (size_t)cell * 2 * dim;
		d = 0;
		for (k = 0; k < dim; k++) {
			t = b[dim + k] - b[k];
			d += t * t;
		}
		if (d <= g->eps2)
			g->flags[cell] |= CELL_CLIQUE;
	}
	return 0;
}

/* ---- pairs of adjacent cells ---- */

/*
 * The sorted cells form a trie: a node of level k is a run of cells equal
 * in coordinates 0..k, its children the nodes of level k + 1 inside it;
 * level dim - 1 is the cells.  Walking pairs of nodes whose coordinates
 * differ by at most one, level by level (a merge of two sorted lists of
 * children each time), reaches every pair of adjacent cells, and only
 * nodes that exist.
 */
struct trie {
	uint32_t *start[DBSCAN_MAX_DIM];	/* level k: first cells */
	uint32_t *down[DBSCAN_MAX_DIM];		/* level k: first children */
	uint32_t count[DBSCAN_MAX_DIM];
	size_t cap;				/* of g->pair */
};

static inline int64_t node_coord(const struct grid *g, const struct trie *t,
				 unsigned int k, uint32_t x)
{
	return cell_coord(g, k + 1 < g->dim ? t->start[k][x] : x, k);
}

/* List cells a < b when their boxes come within eps. */
static int pair_add(struct grid *g, struct trie *t, uint32_t a, uint32_t b)
{
	uint64_t *q;

	if (box_gap(g->box + (size_t)a * 2 * g->dim,
		    g->box + (size_t)b * 2 * g->dim, g->dim) > g->eps2)
		return 0;
	if (g->npair == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 4096;
		q = realloc(g->pair, t->cap * sizeof(*q));
		if (!q)
			return -ENOMEM;
		g->pair = q;
	}
	g->pair[g->npair++] = (uint64_t)a << 32 | b;
	return 0;
}

/*
 * Pairs from level-k nodes [xs, xe) and [ys, ye), the children of two nodes
 * within one step of each other (of one node, when same).  Each unordered
 * pair of cells comes once.
 */
static int trie_walk(struct grid *g, struct trie *t, unsigned int k,
		     uint32_t xs, uint32_t xe, uint32_t ys, uint32_t ye,
		     int same)
{
	const uint32_t *down = k + 2 < g->dim ? t->down[k] : t->start[k];
	uint32_t x, y, j = ys;
	int64_t v;
	int err;

	for (x = xs; x < xe; x++) {
		v = node_coord(g, t, k, x);
		if (same)
			j = x;
		else
			while (j < ye && node_coord(g, t, k, j) < v - 1)
				j++;
		for (y = j; y < ye && node_coord(g, t, k, y) <= v + 1; y++) {
			if (k + 1 == g->dim)
				err = x != y ? pair_add(g, t, x, y) : 0;
			else
				err = trie_walk(g, t, k + 1, down[x],
						down[x + 1], down[y],
						down[y + 1], x == y);
			if (err)
				return err;
		}
	}
	return 0;
}

/*
 * Level k (below dim - 1) of the trie, and the first children of level
 * k - 1; depth[a] is the first coordinate in which cell a differs from
 * cell a - 1.
 */
static int trie_level(struct grid *g, struct trie *t, const uint8_t *depth,
		      unsigned int k)
{
	uint32_t a, i, n = 0, *s;

	for (a = 0; a < g->ncell; a++)
		n += depth[a] <= k;
	s = malloc(((size_t)n + 1) * sizeof(*s));
	if (!s)
		return -ENOMEM;
	t->start[k] = s;
	t->count[k] = n;
	for (a = 0, n = 0; a < g->ncell; a++)
		if (depth[a] <= k)
			s[n++] = a;
	s[n] = g->ncell;
	if (!k)
		return 0;
	t->down[k - 1] = malloc(((size_t)t->count[k - 1] + 1) * sizeof(*s));
	if (!t->down[k - 1])
		return -ENOMEM;
	for (a = 0, i = 0; a <= t->count[k - 1]; a++) {
		while (s[i] < t->start[k - 1][a])
			i++;
		t->down[k - 1][a] = i;
	}
	return 0;
}

/* List the pairs of adjacent cells whose boxes come within eps. */
static int grid_pairs(struct grid *g)
{
	struct trie t = { 0 };
	unsigned int k;
	uint8_t *depth;
	uint32_t a, top;
	int err = 0;

	depth = malloc(g->ncell);
	if (!depth)
		return -ENOMEM;
	for (a = 0; a < g->ncell; a++) {
		k = 0;
		while (a && k + 1 < g->dim &&
		       cell_coord(g, a, k) == cell_coord(g, a - 1, k))
			k++;
		depth[a] = (uint8_t)k;
	}
	for (k = 0; k + 1 < g->dim && !err; k++)
		err = trie_level(g, &t, depth, k);
	free(depth);
	top = g->dim > 1 ? t.count[0] : g->ncell;
	if (!err)
		err = trie_walk(g, &t, 0, 0, top, 0, top, 1);
	for (k = 0; k < DBSCAN_MAX_DIM; k++) {
		free(t.start[k]);
		free(t.down[k]);
	}
	return err;
}

/* ---- 1. core points ---- */

/*
 * Count for the points of cell a not yet at min_pts their neighbours in
 * cell b (in g->up); mark a saturated when all of them are.
 */
static inline __attribute__((always_inline)) void
count_side(struct grid *g, uint32_t a, uint32_t b, unsigned int dim)
{
	const double *bb = g->box + (size_t)b * 2 * dim;
	const double *q = g->pts + (size_t)g->start[b] * dim;
	uint32_t p, e = g->start[a + 1], m = g->start[b + 1] - g->start[b];
	uint32_t min_pts = g->min_pts;
	double near, far;
	int open = 0;

	if (g->flags[a] & CELL_SATURATED)
		return;
	for (p = g->start[a]; p < e; p++) {
		const double *x = g->pts + (size_t)p * dim;

		if (g->up[p] >= min_pts)
			continue;
		box_range(x, bb, dim, &near, &far);
		if (far <= g->eps2)
			g->up[p] += m;
		else if (near <= g->eps2)
			g->up[p] += count_near(x, q, m, min_pts - g->up[p],
					       g->eps2, dim);
		open |= g->up[p] < min_pts;
	}
	if (!open)
		g->flags[a] |= CELL_SATURATED;
}

static inline __attribute__((always_inline)) void
mark_core_dim(struct grid *g, unsigned int dim)
{
	uint32_t a, b, p, s, e;
	size_t i;

	for (a = 0; a < g->ncell; a++) {
		s = g->start[a];
		e = g->start[a + 1];
		for (p = s; p < e; p++)
			g->up[p] = g->flags[a] & CELL_CLIQUE ? e - s :
				   count_near(g->pts + (size_t)p * dim,
					      g->pts + (size_t)s * dim, e - s,
					      g->min_pts, g->eps2, dim);
	}
	for (i = 0; i < g->npair; i++) {
		a = g->pair[i] >> 32;
		b = (uint32_t)g->pair[i];
		count_side(g, a, b, dim);
		count_side(g, b, a, dim);
	}
	for (p = 0; p < g->n; p++)
		g->core[p] = g->up[p] >= g->min_pts;
}

/* Move the core points of every cell to its front; count them. */
static void core_first(struct grid *g)
{
	unsigned int dim = g->dim, k;
	uint32_t a, i, j, o;
	double t;

	for (a = 0; a < g->ncell; a++) {
		i = g->start[a];
		j = g->start[a + 1];
		for (;;) {
			while (i < j && g->core[i])
				i++;
			while (i < j && !g->core[j - 1])
				j--;
			if (i >= j)
				break;
			j--;
			g->core[i] = 1;
			g->core[j] = 0;
			o = g->orig[i];
			g->orig[i] = g->orig[j];
			g->orig[j] = o;
			for (k = 0; k < dim; k++) {
				t = g->pts[(size_t)i * dim + k];
				g->pts[(size_t)i * dim + k] =
					g->pts[(size_t)j * dim + k];
				g->pts[(size_t)j * dim + k] = t;
			}
			i++;
		}
		g->ncore[a] = i - g->start[a];
	}
}

/* ---- 2. clusters of core points ---- */

/* Are all core points of cell a in one set?  *root receives that set. */
static inline int cell_root(struct grid *g, uint32_t a, uint32_t *root)
{
	uint32_t s = g->start[a], e = s + g->ncore[a], r, q;

	r = uf_find(g->up, s);
	*root = r;
	if (g->flags[a] & CELL_MERGED)
		return 1;
	for (q = s + 1; q < e; q++)
		if (uf_find(g->up, q) != r)
			return 0;
	g->flags[a] |= CELL_MERGED;
	return 1;
}

/* Is the point at x within eps of some core point of cell b? */
static inline __attribute__((always_inline)) int
touches(const struct grid *g, const double *x, uint32_t b, unsigned int dim)
{
	double near, far;

	box_range(x, g->box + (size_t)b * 2 * dim, dim, &near, &far);
	if (near > g->eps2)
		return 0;
	if (far <= g->eps2)
		return 1;
	return count_near(x, g->pts + (size_t)g->start[b] * dim, g->ncore[b],
			  1, g->eps2, dim) > 0;
}

/*
 * Join every core point of cell a not yet in the set of ref with each core
 * point of cell b in another set within eps.  Run from both sides with the
 * same ref, this joins every touching pair: a pair still split at the end
 * has a member outside ref's final set, which was never skipped.
 */
static inline __attribute__((always_inline)) void
join_side(struct grid *g, uint32_t a, uint32_t b, uint32_t ref,
	  unsigned int dim)
{
	uint32_t p, q, rp, sa = g->start[a], ea = sa + g->ncore[a];
	uint32_t sb = g->start[b], eb = sb + g->ncore[b];
	const double *bb = g->box + (size_t)b * 2 * dim;

	for (p = sa; p < ea; p++) {
		const double *x = g->pts + (size_t)p * dim;

		rp = uf_find(g->up, p);
		if (rp == uf_find(g->up, ref) || box_near(x, bb, dim) > g->eps2)
			continue;
		for (q = sb; q < eb; q++) {
			if (q == p || uf_find(g->up, q) == rp ||
			    dist2(x, g->pts + (size_t)q * dim, dim) > g->eps2)
				continue;
			uf_join(g->up, p, q);
			rp = uf_find(g->up, p);
		}
	}
}

static inline __attribute__((always_inline)) void
join_cells(struct grid *g, uint32_t a, uint32_t b, unsigned int dim)
{
	uint32_t ra, rb, q, e;
	int ma, mb;

	ma = cell_root(g, a, &ra);
	mb = cell_root(g, b, &rb);
	if (ma && mb) {
		if (ra == rb)
			return;
		e = g->start[a] + g->ncore[a];
		for (q = g->start[a]; q < e; q++) {
			if (touches(g, g->pts + (size_t)q * dim, b, dim)) {
				uf_join(g->up, ra, rb);
				return;
			}
		}
		return;
	}
	if (!ma && mb) {
		q = a;
		a = b;
		b = q;
		ra = rb;
		ma = 1;
	}
	if (ma) {
		/* one set in a: each point of b needs one touch */
		e = g->start[b] + g->ncore[b];
		for (q = g->start[b]; q < e; q++) {
			if (uf_find(g->up, q) == uf_find(g->up, ra))
				continue;
			if (touches(g, g->pts + (size_t)q * dim, a, dim))
				uf_join(g->up, q, ra);
		}
		return;
	}
	join_side(g, a, b, g->start[a], dim);
	join_side(g, b, a, g->start[a], dim);
}

static inline __attribute__((always_inline)) void
join_all_dim(struct grid *g, unsigned int dim)
{
	uint32_t a, b, p, s, e;
	size_t i;

	for (p = 0; p < g->n; p++)
		g->up[p] = p;
	for (a = 0; a < g->ncell; a++) {
		s = g->start[a];
		e = s + g->ncore[a];
		if (s == e)
			continue;
		if (g->flags[a] & CELL_CLIQUE) {
			for (p = s + 1; p < e; p++)
				g->up[p] = s;
			g->flags[a] |= CELL_MERGED;
		} else {
			join_side(g, a, a, s, dim);
		}
	}
	for (i = 0; i < g->npair; i++) {
		a = g->pair[i] >> 32;
		b = (uint32_t)g->pair[i];
		if (g->ncore[a] && g->ncore[b])
			join_cells(g, a, b, dim);
	}
}

/* ---- 3. labels ---- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Number the sets by their lowest caller index: core points get their
 * set's number, other points INT32_MAX, and cells whose core points share
 * one number keep it.  Returns the number of clusters or -ENOMEM.
 */
static int number_clusters(struct grid *g)
{
	uint64_t *roots;
	uint32_t p, r, a, s, e, nroot = 0;

	for (p = 0; p < g->n; p++)
		g->lab[p] = INT32_MAX;
	for (p = 0; p < g->n; p++) {
		if (!g->core[p])
			continue;
		r = uf_find(g->up, p);
		g->up[p] = r;
		if (r == p)
			nroot++;
		if ((uint32_t)g->lab[r] > g->orig[p])
			g->lab[r] = (int32_t)g->orig[p];
	}
	roots = malloc(((size_t)nroot + 1) * sizeof(*roots));
	if (!roots)
		return -ENOMEM;
	nroot = 0;
	for (p = 0; p < g->n; p++)
		if (g->core[p] && g->up[p] == p)
			roots[nroot++] = (uint64_t)(uint32_t)g->lab[p] << 32 | p;
	qsort(roots, nroot, sizeof(*roots), cmp_u64);
	for (r = 0; r < nroot; r++)
		g->lab[(uint32_t)roots[r]] = (int32_t)r;
	free(roots);
	for (p = 0; p < g->n; p++)
		if (g->core[p])
			g->lab[p] = g->lab[g->up[p]];

	for (a = 0; a < g->ncell; a++) {
		s = g->start[a];
		e = s + g->ncore[a];
		g->clab[a] = s < e ? g->lab[s] : -1;
		for (p = s + 1; p < e; p++)
			if (g->lab[p] != g->lab[s])
				g->clab[a] = -1;
	}
	return (int)nroot;
}

/*
 * Lower the label of every non-core point of cell a to the lowest cluster
 * among its core neighbours in cell b.
 */
static inline __attribute__((always_inline)) void
border_side(struct grid *g, uint32_t a, uint32_t b, unsigned int dim)
{
	const double *bb = g->box + (size_t)b * 2 * dim, *x;
	uint32_t p, q, e = g->start[a + 1], eb = g->start[b] + g->ncore[b];
	int32_t cl = g->clab[b], best;

	if (!g->ncore[b])
		return;
	for (p = g->start[a] + g->ncore[a]; p < e; p++) {
		best = g->lab[p];
		x = g->pts + (size_t)p * dim;
		if (cl >= 0) {
			/* one cluster in b: one touch settles it */
			if (cl < best && touches(g, x, b, dim))
				g->lab[p] = cl;
			continue;
		}
		if (box_near(x, bb, dim) > g->eps2)
			continue;
		for (q = g->start[b]; q < eb; q++)
			if (g->lab[q] < best &&
			    dist2(x, g->pts + (size_t)q * dim, dim) <= g->eps2)
				best = g->lab[q];
		g->lab[p] = best;
	}
}

static inline __attribute__((always_inline)) void
label_borders_dim(struct grid *g, unsigned int dim)
{
	uint32_t a, b, p;
	size_t i;

	for (a = 0; a < g->ncell; a++)
		border_side(g, a, a, dim);
	for (i = 0; i < g->npair; i++) {
		a = g->pair[i] >> 32;
		b = (uint32_t)g->pair[i];
		border_side(g, a, b, dim);
		border_side(g, b, a, dim);
	}
	for (p = 0; p < g->n; p++)
		if (g->lab[p] == INT32_MAX)
			g->lab[p] = DBSCAN_NOISE;
}

/* the hot steps, compiled once per dimension */
#define DIM_SWITCH(fn, g)						\
	do {								\
		switch ((g)->dim) {					\
		case 1: fn(g, 1); break;				\
		case 2: fn(g, 2); break;				\
		case 3: fn(g, 3); break;				\
		case 4: fn(g, 4); break;				\
		case 5: fn(g, 5); break;				\
		case 6: fn(g, 6); break;				\
		case 7: fn(g, 7); break;				\
		default: fn(g, 8); break;				\
		}							\
	} while (0)

static int dbscan_check(const double *points, size_t n, unsigned int dim,
			double eps, unsigned int min_pts, const int *labels)
{
	if (dim < 1 || dim > DBSCAN_MAX_DIM || !isfinite(eps) || eps <= 0 ||
	    min_pts == 0)
		return -EINVAL;
	if (n && (!points || !labels))
		return -EINVAL;
	return 0;
}

int dbscan_run(const double *points, size_t n, unsigned int dim, double eps,
	       unsigned int min_pts, int *labels, uint8_t *is_core)
{
	struct grid g = { 0 };
	uint32_t p;
	int err;

	err = dbscan_check(points, n, dim, eps, min_pts, labels);
	if (err || n == 0)
		return err;
	if (n > INT_MAX)
		return -ENOMEM;
	g.dim = dim;
	g.n = (uint32_t)n;
	g.min_pts = min_pts;
	g.eps2 = eps * eps;

	err = grid_scale(&g, points);
	if (err)
		goto cleanup;
	err = grid_build(&g, points);
	if (err)
		goto cleanup;
	err = grid_pairs(&g);
	if (err)
		goto cleanup;

	err = -ENOMEM;
	g.core = malloc(n);
	g.up = malloc(n * sizeof(*g.up));
	g.lab = malloc(n * sizeof(*g.lab));
	g.ncore = malloc((size_t)g.ncell * sizeof(*g.ncore));
	g.clab = malloc((size_t)g.ncell * sizeof(*g.clab));
	if (!g.core || !g.up || !g.lab || !g.ncore || !g.clab)
		goto cleanup;

	DIM_SWITCH(mark_core_dim, &g);
	core_first(&g);
	DIM_SWITCH(join_all_dim, &g);
	err = number_clusters(&g);
	if (err < 0)
		goto cleanup;
	DIM_SWITCH(label_borders_dim, &g);

	for (p = 0; p < g.n; p++)
		labels[g.orig[p]] = g.lab[p];
	if (is_core)
		for (p = 0; p < g.n; p++)
			is_core[g.orig[p]] = g.core[p];
cleanup:
	grid_free(&g);
	return err;
}
