// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The daemon's CSV rows (rowcsv.h).  The columns are listed once, in
 * csv_schema, and rowcsv_row writes them in that order: the window's
 * counts, then the vector (features, evidence, cluster and label) or as
 * many empty fields, then the GPU join, ages, names and where the row
 * came from; columns added later go at the end, so that a reader of an
 * older layout finds its columns where they were.
 */
#include <errno.h>
#include <time.h>
#include "clock.h"
#include "rowcsv.h"

/* the fields a row without a vector leaves empty: ops_per_s, the
 * features, the evidence, cluster, label and reason */
#define VECTOR_COLUMNS (1 + FEAT_DIM + 4 + 3)

unsigned int rowcsv_columns(void)
{
	return CSV_COLS;
}

void rowcsv_header(struct csv *c)
{
	unsigned int i;

	for (i = 0; i < rowcsv_columns(); i++)
		csv_str(c, csv_schema[i].name);
	csv_end_row(c);
}

static void vector_fields(struct csv *c, const struct vec_entry *v)
{
	int i;

	if (!v) {	/* too little traffic for a vector: counts only */
		for (i = 0; i < VECTOR_COLUMNS; i++)
			csv_str(c, "");
		return;
	}
	csv_dbl(c, v->f.raw[FEAT_FREQ], 1);
	for (i = 0; i < FEAT_DIM; i++)
		csv_dbl(c, v->f.v[i], 4);
	csv_dbl(c, v->growth_per_s, 1);
	csv_u64(c, v->grew_windows);
	csv_dbl(c, v->free_ratio, 4);
	csv_dbl(c, v->refault_share, 4);
	csv_i64(c, v->cluster);
	csv_str(c, label_name(v->label));
	csv_str(c, v->reason);
}

/* A slab leak's allocation stack, "user [kernel: path]", else empty. */
static void leak_stack(struct csv *c, const struct rowcsv_ctx *x, const struct wrow *r,
		       const struct vec_entry *v)
{
	struct stack_top top;
	char text[sizeof(top.user) + sizeof(top.kernel) + 16];

	if (!v || v->label != LABEL_LEAK || r->key->domain != DOM_SLAB || !x->leak_stack ||
	    x->leak_stack(x->ctx, r->key->tgid, r->key->id, r->age_ns, &top)) {
		csv_str(c, "");
		return;
	}
	snprintf(text, sizeof(text), "%s [kernel: %s]", top.user, top.kernel);
	csv_str(c, text);
}

void rowcsv_row(struct csv *c, const struct rowcsv_ctx *x, const struct wrow *r,
		const struct vec_entry *v)
{
	const struct wkey *k = r->key;
	const struct wslot *s = r->s;
	const struct cgroup_info *cg;
	bool workload = x->is_workload && x->is_workload(k->tgid, x->ctx);

	csv_dbl(c, (double)(r->start_ns + x->real_off_ns) / NSEC_PER_SEC, 3);
	csv_u64(c, r->window);
	csv_u64(c, x->window_ms);
	csv_str(c, domain_name(k->domain));
	csv_str(c, r->name);
	csv_str(c, r->file);
	if (k->tgid == CS_TGID_OTHER || tgid_is_family(k->tgid))
		csv_str(c, "");
	else
		csv_u64(c, k->tgid);
	csv_str(c, r->comm);
	csv_str(c, workload ? "workload" : "system");
	csv_u64(c, s->allocs);
	csv_u64(c, s->frees);
	csv_u64(c, s->bytes_req);
	csv_u64(c, s->bytes_alloc);
	csv_u64(c, s->bytes_freed);
	csv_i64(c, r->live_objs);
	csv_i64(c, r->live_bytes);
	csv_u64(c, r->lifetime_p50_ns);
	csv_u64(c, s->same_cpu_frees);
	csv_u64(c, s->remote_frees);
	csv_u64(c, s->cross_numa);
	csv_dbl(c, r->size_entropy, 4);
	csv_dbl(c, r->same_size_share, 4);
	csv_dbl(c, r->top_site_share, 4);
	csv_u64(c, s->page_adds);
	csv_u64(c, s->page_dels);
	csv_u64(c, s->refaults);
	csv_u64(c, s->refault_pages);
	csv_u64(c, r->refault_dist_p50);
	vector_fields(c, v);
	csv_u64(c, s->gpu_kernels);
	csv_u64(c, s->gpu_kernel_ns);
	csv_u64(c, s->gpu_copy_in_bytes);
	csv_u64(c, s->gpu_copy_out_bytes);
	csv_u64(c, r->tgid_gpu_kernel_ns);
	csv_u64(c, r->tgid_gpu_kv_kernel_ns);
	csv_u64(c, r->tgid_gpu_copy_bytes);
	csv_u64(c, s->unseen_frees);
	csv_u64(c, s->repeat_pages);
	csv_i64(c, r->old_objs);
	csv_u64(c, r->age_ns / 1000000);
	if (k->domain == DOM_SLAB && r->top_site) {
		char sym[128];

		ksyms_name(x->syms, r->top_site, sym, sizeof(sym));
		csv_str(c, sym);
	} else {
		csv_str(c, "");
	}
	csv_str(c, tgid_kind(k->tgid));
	csv_u64(c, x->window_drops);
	csv_u64(c, k->domain == DOM_SLAB ? 1ull << s->max_shift : 1);
	csv_str(c, x->host);
	cg = x->cg ? cgcache_get(x->cg, k->tgid, clock_ns(CLOCK_MONOTONIC)) : NULL;
	csv_str(c, cg ? cg->path : "");
	csv_str(c, cg ? cg->container : "");
	csv_u64(c, s->own_remote_frees);
	leak_stack(c, x, r, v);
	csv_end_row(c);
}

static void keep_header(const char *row, size_t len, void *ctx)
{
	rows_set_header(ctx, row, len);
}

static void keep_row(const char *row, size_t len, void *ctx)
{
	rows_add(ctx, row, len);
}

int rowcsv_keep(struct rows *rows, struct csv *out)
{
	struct csv *h;

	if (csv_new_mem(&h))
		return -ENOMEM;
	csv_set_row_fn(h, keep_header, rows);
	rowcsv_header(h);
	csv_free(h);
	if (!rows->header)
		return -ENOMEM;
	csv_set_row_fn(out, keep_row, rows);
	return 0;
}
