// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cachescope plot: what cachescope cluster finds, drawn as one SVG file
 * with nothing outside it (no script, no font, no link): a timeline of the
 * keys that matter, one row each, a cell per vector coloured by its label,
 * and the vectors in the plane of their first two principal components,
 * coloured by cluster.  Every text others chose (keys, comms, hosts, file
 * names) is escaped as the terminal output is (str_escape: bytes that are
 * not valid UTF-8 become \xNN) and then for XML.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "../daemon/strutil.h"
#include "../daemon/window.h"
#include "offline.h"
#include "pca.h"

#define W 1280
#define MARGIN 24
#define LABEL_W 330		/* the timeline's key names */
#define ROW_H 18
#define SCATTER_W 760
#define SCATTER_H 520
#define MAX_POINTS 30000	/* drawn at most */


static const char *const label_colour[LABEL_COUNT] = {
	[LABEL_NORMAL] = "#c3c7ce",
	[LABEL_THRASH] = "#d62728",
	[LABEL_FALSE_SHARING] = "#8e44c9",
	[LABEL_LEAK] = "#ff8c00",
};

static const char *const label_title[LABEL_COUNT] = {
	[LABEL_NORMAL] = "normal",
	[LABEL_THRASH] = "thrash",
	[LABEL_FALSE_SHARING] = "false sharing",
	[LABEL_LEAK] = "leak",
};

/* clusters: a qualitative palette, none of it the label colours' hues */
static const char *const cluster_colour[] = {
	"#1f77b4", "#2ca02c", "#17becf", "#bcbd22", "#e377c2", "#8c564b",
	"#393b79", "#637939", "#7b4173", "#5f6b7a", "#7fc97f", "#9c9ede",
};
#define NCOLOURS (sizeof(cluster_colour) / sizeof(cluster_colour[0]))

/* Text for the picture: terminal-safe, then XML-safe. */
static void xml_text(FILE *f, const char *s, size_t max_chars)
{
	char buf[STR_ESC_SIZE(512)];
	const unsigned char *p;
	size_t chars = 0;

	str_escape(buf, sizeof(buf), s, 0);
	for (p = (const unsigned char *)buf; *p; p++) {
		if ((*p & 0xc0) != 0x80 && ++chars > max_chars) {
			fputs("\xe2\x80\xa6", f);	/* an ellipsis */
			return;
		}
		switch (*p) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default: fputc(*p, f);
		}
	}
}

/* A step of 1, 2 or 5 times a power of ten giving about n ticks over span. */
static double nice_step(double span, int n)
{
	double raw = span / n, p, m;

	if (!(raw > 0))
		return 1;
	p = pow(10, floor(log10(raw)));
	m = raw / p;
	return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

static const struct offline *rank_o;

static unsigned int key_anomalies(const struct off_key *k)
{
	return k->counts[LABEL_THRASH] + k->counts[LABEL_FALSE_SHARING] + k->counts[LABEL_LEAK];
}

/* Keys with anomalous vectors first (most first), then the busiest. */
static int key_rank(const void *x, const void *y)
{
	const struct off_key *p = &rank_o->keys[*(const size_t *)x];
	const struct off_key *q = &rank_o->keys[*(const size_t *)y];
	unsigned int a = key_anomalies(p), b = key_anomalies(q);

	if (a != b)
		return a < b ? 1 : -1;
	if (p->ops != q->ops)
		return p->ops < q->ops ? 1 : -1;
	return *(const size_t *)x < *(const size_t *)y ? -1 : 1;
}

static void key_title(FILE *f, const struct offline *o, const struct off_key *k)
{
	char t[256];

	const char *base = strrchr(k->file_name, '/');

	/* a page key by its file's name where the daemon had one */
	snprintf(t, sizeof(t), "%s %s", domain_name(k->domain),
		 *k->file_name ? (base ? base + 1 : k->file_name) : k->name);
	xml_text(f, t, 34);
	fputs(" \xc2\xb7 ", f);
	snprintf(t, sizeof(t), "%s %s", *k->tgid ? k->tgid : k->kind, k->comm);
	xml_text(f, t, 22);
	if (o->nhosts > 1) {
		fputs(" @", f);
		xml_text(f, o->hosts[k->host], 12);
	}
}

static void legend_labels(FILE *f, double x, double y)
{
	unsigned int l;

	for (l = 0; l < LABEL_COUNT; l++, x += 130) {
		fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"14\" rx=\"2\" fill=\"%s\"/>",
			x, y - 11, label_colour[l]);
		fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" class=\"lg\">%s</text>\n", x + 20, y,
			label_title[l]);
	}
}

/* Panel 1: the timeline.  Returns the height used. */
static double timeline(FILE *f, const struct offline *o, unsigned int top, double y0)
{
	double x0 = MARGIN + LABEL_W, xw = W - MARGIN - x0, span = o->t1 - o->t0, step, t;
	double win_s = o->window_ns ? o->window_ns / 1e9 : 0.1;
	size_t *idx, nk = 0, i, *row_of;
	double y, h;

	idx = malloc((o->nkeys + 1) * sizeof(*idx));
	row_of = malloc((o->nkeys + 1) * sizeof(*row_of));
	if (!idx || !row_of) {
		free(idx);
		free(row_of);
		return 0;
	}
	for (i = 0; i < o->nkeys; i++) {
		row_of[i] = SIZE_MAX;
		if (o->keys[i].counts[0] + key_anomalies(&o->keys[i]))
			idx[nk++] = i;	/* keys with vectors */
	}
	rank_o = o;
	qsort(idx, nk, sizeof(*idx), key_rank);
	if (nk > top)
		nk = top;
	for (i = 0; i < nk; i++)
		row_of[idx[i]] = i;
	if (!(span > 0))
		span = win_s;
	h = 64 + nk * ROW_H + 44;
	fprintf(f, "<text x=\"%d\" y=\"%.0f\" class=\"h2\">Keys over time</text>\n", MARGIN, y0 + 20);
	fprintf(f, "<text x=\"%d\" y=\"%.0f\" class=\"sub\">the %zu keys with the most anomalous vectors, then the busiest; a cell per vector (%.0f ms window)</text>\n",
		MARGIN, y0 + 38, nk, win_s * 1e3);
	legend_labels(f, W - MARGIN - 4 * 130 + 10, y0 + 20);
	y = y0 + 56;
	/* row stripes and names */
	for (i = 0; i < nk; i++) {
		double ry = y + i * ROW_H;

		if (i % 2 == 0)
			fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"#f4f5f7\"/>\n",
				MARGIN, ry, W - 2 * MARGIN, ROW_H);
		fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" class=\"key\">", x0 - 8, ry + ROW_H - 5);
		key_title(f, o, &o->keys[idx[i]]);
		fputs("</text>\n", f);
	}
	/* the grid of seconds */
	step = nice_step(span, 10);
	for (t = 0; t <= span + 1e-9; t += step) {
		double x = x0 + t / span * xw;

		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>",
			x, y, x, y + nk * ROW_H + 4);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">%g</text>\n",
			x, y + nk * ROW_H + 18, t);
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"axis\" text-anchor=\"middle\">time since the first window (s)</text>\n",
		x0 + xw / 2, y + nk * ROW_H + 36);
	/* the cells: normal first, so that an anomaly is never hidden */
	for (int pass = 0; pass < 2; pass++) {
		fprintf(f, "<g>\n");
		for (i = 0; i < o->an.n; i++) {
			const struct vec_entry *v = &o->an.v[i];
			size_t r = row_of[o->vec[i].key];
			double x, cw;

			if (r == SIZE_MAX || (pass == 0) != (v->label == LABEL_NORMAL))
				continue;
			x = x0 + (o->vec[i].t - o->t0) / span * xw;
			cw = win_s / span * xw;
			if (cw < 1.2)
				cw = 1.2;
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>\n",
				x, y + r * ROW_H + 2, cw, ROW_H - 4, label_colour[v->label]);
		}
		fprintf(f, "</g>\n");
	}
	free(idx);
	free(row_of);
	return h;
}

static int cluster_size_desc(const void *x, const void *y)
{
	const struct cluster_info *p = x, *q = y;

	if (p->size != q->size)
		return p->size < q->size ? 1 : -1;
	return p->id - q->id;
}

static const char *const dim_name[FEAT_DIM] = { "freq", "hot", "entropy", "locality", "numa" };

/* The scatter's plot area and the PCA plane's bounds drawn in it. */
struct plane {
	double px0, py0, pw, ph;
	double lo[2], hi[2];
};

static double plane_x(const struct plane *p, double v)
{
	return p->px0 + (v - p->lo[0]) / (p->hi[0] - p->lo[0]) * p->pw;
}

static double plane_y(const struct plane *p, double v)
{
	return p->py0 + p->ph - (v - p->lo[1]) / (p->hi[1] - p->lo[1]) * p->ph;
}

/* The n vectors' coordinates in the plane of their first two principal
 * components (xy, two per vector; var: the share of the variance of each,
 * load: the features' loadings on them), and the plane's bounds with a
 * margin.  0, or -ENOMEM / pca2's error. */
static int project(const struct offline *o, double *xy, double var[2], double *load,
		   struct plane *p)
{
	size_t n = o->an.n, i;
	double *pts;
	int k, err;

	pts = malloc(n * FEAT_DIM * sizeof(*pts));
	if (!pts)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		memcpy(pts + i * FEAT_DIM, o->an.v[i].f.v, sizeof(o->an.v[i].f.v));
	err = pca2(pts, n, FEAT_DIM, xy, var, load);
	free(pts);
	if (err)
		return err;
	for (k = 0; k < 2; k++) {
		p->lo[k] = p->hi[k] = xy[k];
		for (i = 1; i < n; i++) {
			if (xy[i * 2 + k] < p->lo[k])
				p->lo[k] = xy[i * 2 + k];
			if (xy[i * 2 + k] > p->hi[k])
				p->hi[k] = xy[i * 2 + k];
		}
		if (p->hi[k] - p->lo[k] < 1e-9) {
			p->lo[k] -= 0.5;
			p->hi[k] += 0.5;
		} else {
			double pad = (p->hi[k] - p->lo[k]) * 0.04;

			p->lo[k] -= pad;
			p->hi[k] += pad;
		}
	}
	return 0;
}

/* The plot area's frame, its grid and ticks, and the axes' titles. */
static void plane_axes(FILE *f, const struct plane *p)
{
	int k;

	fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"#fbfbfc\" stroke=\"#9aa0a8\"/>\n",
		p->px0, p->py0, p->pw, p->ph);
	for (k = 0; k < 2; k++) {
		double step = nice_step(p->hi[k] - p->lo[k], 6), t;

		for (t = ceil(p->lo[k] / step) * step; t <= p->hi[k]; t += step) {
			double v = fabs(t) < step * 1e-6 ? 0 : t;

			if (k == 0) {
				double x = plane_x(p, t);

				fprintf(f, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" class=\"grid\"/><text x=\"%.1f\" y=\"%.0f\" class=\"tick\" text-anchor=\"middle\">%g</text>\n",
					x, p->py0, x, p->py0 + p->ph, x, p->py0 + p->ph + 16, v);
			} else {
				double y = plane_y(p, t);

				fprintf(f, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" class=\"grid\"/><text x=\"%.0f\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">%g</text>\n",
					p->px0, y, p->px0 + p->pw, y, p->px0 - 6, y + 4, v);
			}
		}
	}
	fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" class=\"axis\" text-anchor=\"middle\">PC1</text>\n",
		p->px0 + p->pw / 2, p->py0 + p->ph + 36);
	fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" class=\"axis\" text-anchor=\"middle\" transform=\"rotate(-90 %.0f %.0f)\">PC2</text>\n",
		p->px0 - 44, p->py0 + p->ph / 2, p->px0 - 44, p->py0 + p->ph / 2);
}

/* Every every-th vector: a dot in its cluster's colour, a cross for noise,
 * and a ring in its label's colour over an anomalous one. */
static void plane_points(FILE *f, const struct offline *o, const double *xy, size_t every,
			 const struct plane *p, const int *colour_of)
{
	size_t n = o->an.n, i;

	fprintf(f, "<g fill-opacity=\"0.55\">\n");
	for (i = 0; i < n; i += every) {
		int c = o->an.v[i].cluster;

		if (c == CLUSTER_NOISE)
			continue;
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
			plane_x(p, xy[i * 2]), plane_y(p, xy[i * 2 + 1]), cluster_colour[colour_of[c]]);
	}
	fprintf(f, "</g>\n<g stroke=\"#222\" stroke-width=\"1.2\">\n");
	for (i = 0; i < n; i += every) {
		if (o->an.v[i].cluster != CLUSTER_NOISE)
			continue;
		fprintf(f, "<path d=\"M%.1f %.1fl5 5m0 -5l-5 5\"/>\n",
			plane_x(p, xy[i * 2]) - 2.5, plane_y(p, xy[i * 2 + 1]) - 2.5);
	}
	fprintf(f, "</g>\n");
	/* anomalous vectors ringed in their label's colour, over the rest */
	fprintf(f, "<g fill=\"none\" stroke-width=\"1.6\">\n");
	for (i = 0; i < n; i += every) {
		const struct vec_entry *v = &o->an.v[i];

		if (v->label == LABEL_NORMAL)
			continue;
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" stroke=\"%s\"/>\n",
			plane_x(p, xy[i * 2]), plane_y(p, xy[i * 2 + 1]), label_colour[v->label]);
	}
	fprintf(f, "</g>\n");
}

/* Component k in words: its share of the variance and its three largest
 * loadings. */
static void axis_words(char *text, size_t size, int k, const double var[2], const double *load)
{
	int order[FEAT_DIM], a, b, d;
	size_t len;

	for (d = 0; d < FEAT_DIM; d++)
		order[d] = d;
	for (a = 0; a < FEAT_DIM; a++)
		for (b = a + 1; b < FEAT_DIM; b++)
			if (fabs(load[order[b] * 2 + k]) > fabs(load[order[a] * 2 + k])) {
				int t = order[a];

				order[a] = order[b];
				order[b] = t;
			}
	len = (size_t)snprintf(text, size, "PC%d (%.0f%% of the variance) \xe2\x89\x88", k + 1,
			       100 * var[k]);
	for (a = 0; a < 3 && len < size; a++)
		len += (size_t)snprintf(text + len, size - len, " %s%.2f %s",
					a && load[order[a] * 2 + k] >= 0 ? "+" : "",
					load[order[a] * 2 + k], dim_name[order[a]]);
}

/* The legend: clusters by size (cs), then noise, then the rings, then the
 * axes in words. */
static void plane_legend(FILE *f, const struct offline *o, const struct cluster_info *cs,
			 const int *colour_of, const struct plane *p, const double var[2],
			 const double *load)
{
	double lx = p->px0 + p->pw + 30, ly = p->py0 + 8;
	size_t shown_c = o->an.nclusters < 14 ? o->an.nclusters : 14, i;
	char text[160];
	int k;

	fprintf(f, "<text y=\"%.0f\" class=\"lgh\"><tspan x=\"%.0f\">id</tspan><tspan x=\"%.0f\">label</tspan><tspan x=\"%.0f\" text-anchor=\"end\">size</tspan><tspan x=\"%.0f\">busiest keys</tspan></text>\n",
		ly, lx + 16, lx + 44, lx + 180, lx + 190);
	ly += 20;
	for (i = 0; i < shown_c; i++, ly += 19) {
		fprintf(f, "<circle cx=\"%.0f\" cy=\"%.0f\" r=\"5\" fill=\"%s\" fill-opacity=\"0.8\"/>",
			lx + 5, ly - 4, cluster_colour[colour_of[cs[i].id]]);
		fprintf(f, "<text y=\"%.0f\" class=\"lg\"><tspan x=\"%.0f\">%d</tspan><tspan x=\"%.0f\" fill=\"%s\" font-weight=\"bold\">%s</tspan><tspan x=\"%.0f\" text-anchor=\"end\">%u</tspan><tspan x=\"%.0f\">",
			ly, lx + 16, cs[i].id, lx + 44,
			cs[i].label == LABEL_NORMAL ? "#555" : label_colour[cs[i].label],
			label_title[cs[i].label], lx + 180, cs[i].size, lx + 190);
		xml_text(f, cs[i].keys, 32);
		fputs("</tspan>", f);
		fputs("</text>\n", f);
	}
	if (o->an.nclusters > shown_c)
		fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" class=\"lg\">\xe2\x80\xa6 %zu smaller clusters</text>\n",
			lx + 16, ly, o->an.nclusters - shown_c), ly += 19;
	fprintf(f, "<path d=\"M%.0f %.0fl7 7m0 -7l-7 7\" stroke=\"#222\" stroke-width=\"1.4\"/>",
		lx + 1.5, ly - 8);
	fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" class=\"lg\">noise: %u vectors</text>\n", lx + 16, ly,
		o->an.noise);
	ly += 19;
	fprintf(f, "<circle cx=\"%.0f\" cy=\"%.0f\" r=\"5\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\"/>",
		lx + 5, ly - 4, label_colour[LABEL_LEAK]);
	fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" class=\"lg\">ring: a vector labelled thrash, false sharing or leak (its colour)</text>\n",
		lx + 16, ly);
	ly += 30;
	for (k = 0; k < 2 && o->an.n; k++) {
		axis_words(text, sizeof(text), k, var, load);
		fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" class=\"lg\">%s</text>\n", lx, ly, text);
		ly += 19;
	}
}

/* Panel 2: the vectors in the PCA plane. */
static double scatter(FILE *f, const struct offline *o, double y0)
{
	struct plane p = { .px0 = MARGIN + 70, .py0 = y0 + 60, .pw = SCATTER_W - 90,
			   .ph = SCATTER_H - 110, .lo = { 0, 0 }, .hi = { 1, 1 } };
	double *xy = NULL, var[2] = { 0, 0 }, load[FEAT_DIM * 2] = { 0 };
	struct cluster_info *cs = NULL;
	size_t n = o->an.n, i, every = n > MAX_POINTS ? (n + MAX_POINTS - 1) / MAX_POINTS : 1;
	int *colour_of = NULL, maxid = 0;

	fprintf(f, "<text x=\"%d\" y=\"%.0f\" class=\"h2\">Vectors by cluster</text>\n", MARGIN, y0 + 20);
	if (n) {
		xy = malloc(n * 2 * sizeof(*xy));
		if (!xy || project(o, xy, var, load, &p))
			goto out;
	}
	fprintf(f, "<text x=\"%d\" y=\"%.0f\" class=\"sub\">%zu vectors in the plane of the first two principal components of their 5 features (eps %.3f, min_pts %u)",
		MARGIN, y0 + 38, n, o->an.eps, o->an.min_pts);
	if (every > 1)
		fprintf(f, "; every %zu-th drawn", every);
	fputs("</text>\n", f);
	plane_axes(f, &p);
	/* a colour per cluster, the biggest clusters first */
	cs = malloc((o->an.nclusters + 1) * sizeof(*cs));
	if (!cs)
		goto out;
	memcpy(cs, o->an.clusters, o->an.nclusters * sizeof(*cs));
	qsort(cs, o->an.nclusters, sizeof(*cs), cluster_size_desc);
	for (i = 0; i < o->an.nclusters; i++)
		if (cs[i].id > maxid)
			maxid = cs[i].id;
	colour_of = malloc((maxid + 1) * sizeof(*colour_of));
	if (!colour_of)
		goto out;
	for (i = 0; i < o->an.nclusters; i++)
		colour_of[cs[i].id] = (int)(i % NCOLOURS);
	plane_points(f, o, xy, every, &p, colour_of);
	plane_legend(f, o, cs, colour_of, &p, var, load);
out:
	free(colour_of);
	free(cs);
	free(xy);
	return SCATTER_H;
}

static void document(FILE *f, const struct offline *o, unsigned int top)
{
	char span[128], t[64];
	size_t i, nk = 0;
	double h1, h;
	time_t t0 = (time_t)o->t0;
	struct tm tm;

	for (i = 0; i < o->nkeys; i++)
		nk += o->keys[i].counts[0] + key_anomalies(&o->keys[i]) > 0;
	if (nk > top)
		nk = top;
	h1 = 64 + nk * ROW_H + 44;
	h = 96 + h1 + 20 + SCATTER_H + MARGIN;
	strftime(t, sizeof(t), "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&t0, &tm));
	snprintf(span, sizeof(span), "%s, %.1f s", t, o->rows ? o->t1 - o->t0 : 0);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\">\n",
		W, h, W, h);
	fprintf(f, "<style>\n"
		"text { font-family: 'DejaVu Sans', 'Liberation Sans', Arial, sans-serif; fill: #222; }\n"
		".h1 { font-size: 21px; font-weight: bold; }\n"
		".h2 { font-size: 16px; font-weight: bold; }\n"
		".sub { font-size: 12px; fill: #555; }\n"
		".key { font-size: 11.5px; text-anchor: end; font-family: 'DejaVu Sans Mono', monospace; }\n"
		".tick { font-size: 11px; fill: #555; }\n"
		".axis { font-size: 12.5px; fill: #333; }\n"
		".lg { font-size: 12px; }\n"
		".lgh { font-size: 12px; font-weight: bold; fill: #555; }\n"
		".grid { stroke: #dde0e4; stroke-width: 1; }\n"
		"</style>\n");
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n");
	fprintf(f, "<title>cachescope: ");
	for (i = 0; i < o->nfiles; i++) {
		fputs(i ? ", " : "", f);
		xml_text(f, o->files[i], 200);
	}
	fprintf(f, "</title>\n");
	fprintf(f, "<text x=\"%d\" y=\"34\" class=\"h1\">cachescope \xc2\xb7 ", MARGIN);
	for (i = 0; i < o->nfiles && i < 3; i++) {
		char *copy = strdup(o->files[i]);

		fputs(i ? ", " : "", f);
		xml_text(f, copy ? basename(copy) : o->files[i], 60);
		free(copy);
	}
	if (o->nfiles > 3)
		fprintf(f, " and %zu more", o->nfiles - 3);
	fprintf(f, "</text>\n");
	fprintf(f, "<text x=\"%d\" y=\"56\" class=\"sub\">host%s ", MARGIN, o->nhosts == 1 ? "" : "s");
	if (!o->nhosts)
		fputs("(none)", f);
	for (i = 0; i < o->nhosts && i < 8; i++) {
		fputs(i ? ", " : "", f);
		xml_text(f, *o->hosts[i] ? o->hosts[i] : "(none)", 40);
	}
	if (o->nhosts > 8)
		fprintf(f, " and %zu more", o->nhosts - 8);
	fprintf(f, " \xc2\xb7 %s \xc2\xb7 %llu rows, %zu vectors, %zu keys, %zu clusters</text>\n",
		span, (unsigned long long)o->rows, o->an.n, o->nkeys, o->an.nclusters);
	fprintf(f, "<text x=\"%d\" y=\"74\" class=\"sub\">labelled offline by cachescope plot with the daemon's rules; ", MARGIN);
	if (o->daemon_vectors)
		fprintf(f, "%.1f%% of the vectors as the daemon labelled them; ",
			100.0 * o->agree / o->daemon_vectors);
	fprintf(f, "no kernel cross-check (not in the CSV)</text>\n");
	fprintf(f, "<line x1=\"%d\" y1=\"86\" x2=\"%d\" y2=\"86\" stroke=\"#9aa0a8\"/>\n", MARGIN,
		W - MARGIN);
	timeline(f, o, top, 96);
	fprintf(f, "<line x1=\"%d\" y1=\"%.0f\" x2=\"%d\" y2=\"%.0f\" stroke=\"#9aa0a8\"/>\n", MARGIN,
		96 + h1 + 6, W - MARGIN, 96 + h1 + 6);
	scatter(f, o, 96 + h1 + 20);
	fprintf(f, "</svg>\n");
}

int svg_write(const struct offline *o, const char *path, unsigned int top)
{
	char *tmp = NULL;
	int fd, err = 0;
	FILE *f;

	if (asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0)
		return -ENOMEM;
	/* 0600, as the CSV: it names other processes' comms and files */
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(tmp);
		return err;
	}
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		goto fail;
	}
	document(f, o, top);
	if (fflush(f) || ferror(f) || fsync(fileno(f)))
		err = -(errno ? errno : EIO);
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (!err) {
		free(tmp);
		return 0;
	}
fail:
	unlink(tmp);
	free(tmp);
	return err;
}
