// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the daemon's CSV rows (daemon/rowcsv.c): the header, and
 * rows with and without a vector compared with the exact text. */
#include <stdarg.h>
#include <errno.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "../daemon/clock.h"
#include "../daemon/rowcsv.h"

#define ID64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* the rows the csv hands on, one after another */
struct got {
	char text[8192];
	size_t len;
	unsigned int rows;
};

static void keep_row(const char *row, size_t len, void *ctx)
{
	struct got *g = ctx;

	assert_true(g->len + len < sizeof(g->text));
	memcpy(g->text + g->len, row, len);
	g->len += len;
	g->text[g->len] = '\0';
	g->rows++;
}

static struct csv *mem_csv(struct got *g)
{
	struct csv *c;

	memset(g, 0, sizeof(*g));
	assert_int_equal(csv_new_mem(&c), 0);
	csv_set_row_fn(c, keep_row, g);
	return c;
}

static unsigned int fields(const char *line)
{
	unsigned int n = 1;

	for (; *line && *line != '\n'; line++)
		n += *line == ',';
	return n;
}

static bool workload_4242(uint32_t tgid, void *ctx)
{
	(void)ctx;
	return tgid == 4242;
}

/* A row of key k with its names, every count 0 */
static void new_row(struct acc *a, struct wslot *s, struct wrow *r, struct wkey k,
		    const char *name, const char *comm)
{
	memset(a, 0, sizeof(*a));
	memset(s, 0, sizeof(*s));
	memset(r, 0, sizeof(*r));
	a->key = k;
	snprintf(a->name, sizeof(a->name), "%s", name);
	snprintf(a->comm, sizeof(a->comm), "%s", comm);
	wrow_of_key(r, a);
	r->s = s;
}

static void rowcsv_header__columns__in_order(void **state)
{
	struct got g;
	struct csv *c = mem_csv(&g);

	(void)state;
	rowcsv_header(c);
	csv_free(c);
	assert_int_equal(g.rows, 1);
	assert_int_equal(fields(g.text), rowcsv_columns());
	assert_int_equal(rowcsv_columns(), 61);
	assert_true(!strncmp(g.text, "ts,window,window_ms,domain,key,file,tgid,comm,scope,", 52));
	assert_non_null(strstr(g.text, ",refault_dist_p50,ops_per_s,f_freq,f_hot,f_entropy,"
				      "f_locality,f_numa,growth_per_s,grew_windows,free_ratio,"
				      "refault_share,cluster,label,reason,gpu_kernels,"));
	assert_non_null(strstr(g.text, ",window_drops,sample,host,cgroup,container,own_remote_frees,stack\n"));
}

/* the allocation stack of a leak key of process 4242 */
static int stack_4242(void *ctx, uint32_t tgid, uint64_t cache, uint64_t age_ns,
		      struct stack_top *top)
{
	(void)ctx;
	if (tgid != 4242 || cache != 7 || age_ns != 1500 * 1000000ull)
		return -ENOENT;
	snprintf(top->user, sizeof(top->user), "f (a) < main (a)");
	snprintf(top->kernel, sizeof(top->kernel), "k1 < k2");
	top->with = top->of = 1;
	return 0;
}

static void rowcsv_row__slab_row_with_vector__exact_line(void **state)
{
	char dir[64], cmd[512], syms[80];
	struct acc a;
	struct wslot s;
	struct wrow r;
	struct vec_entry v;
	struct got g;
	struct csv *c;
	struct cgcache *cg;
	struct ksyms *ks;
	FILE *f;

	(void)state;
	/* a process's cgroup, and the kernel's symbols, from files of ours */
	snprintf(dir, sizeof(dir), "/tmp/cs-rowcsv-%d", getpid());
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/4242 && printf '0::/system.slice/docker-%s.scope\\n' "
		 "> %s/4242/cgroup", dir, ID64, dir);
	assert_int_equal(system(cmd), 0);
	cg = cgcache_new(dir, NSEC_PER_SEC);
	assert_non_null(cg);
	snprintf(syms, sizeof(syms), "%s/kallsyms", dir);
	f = fopen(syms, "w");
	assert_non_null(f);
	fputs("ffffffff81000000 T _stext\nffffffff81234550 T alloc_empty_file\n", f);
	fclose(f);
	ks = ksyms_load(syms);
	assert_non_null(ks);

	new_row(&a, &s, &r, (struct wkey){ .domain = DOM_SLAB, .id = 7, .tgid = 4242 },
		"kmalloc-64", "nginx");
	memset(&v, 0, sizeof(v));
	s.window = 52;
	s.allocs = 10;
	s.frees = 7;
	s.bytes_req = 600;
	s.bytes_alloc = 640;
	s.bytes_freed = 448;
	s.same_cpu_frees = 5;
	s.remote_frees = 2;
	s.own_remote_frees = 1;
	s.cross_numa = 1;
	s.unseen_frees = 1;
	s.max_shift = 3;
	r.window = 52;
	r.start_ns = 5 * NSEC_PER_SEC + 250000000;
	r.live_objs = 3;
	r.live_bytes = 192;
	r.lifetime_p50_ns = 1000;
	r.size_entropy = 0.5;
	r.same_size_share = 0.75;
	r.top_site_share = 0.125;
	r.top_site = 0xffffffff81234560ull;
	r.old_objs = 2;
	r.age_ns = 1500 * 1000000ull;
	v.f.raw[FEAT_FREQ] = 170.04;
	v.f.v[0] = 0.1;
	v.f.v[1] = 0.2;
	v.f.v[2] = 0.3;
	v.f.v[3] = 0.4;
	v.f.v[4] = 0.5;
	v.growth_per_s = 30;
	v.grew_windows = 4;
	v.free_ratio = 0.7;
	v.cluster = 3;
	v.label = LABEL_LEAK;
	v.reason = "grows, never freed";

	c = mem_csv(&g);
	rowcsv_row(c, &(struct rowcsv_ctx){ .real_off_ns = 1000 * NSEC_PER_SEC, .window_ms = 100,
					    .host = "h1", .cg = cg, .syms = ks,
					    .is_workload = workload_4242, .leak_stack = stack_4242,
					    .window_drops = 9 },
		   &r, &v);
	csv_free(c);
	assert_int_equal(g.rows, 1);
	assert_string_equal(g.text,
		"1005.250,52,100,slab,kmalloc-64,,4242,nginx,workload,"
		"10,7,600,640,448,3,192,1000,5,2,1,0.5000,0.7500,0.1250,0,0,0,0,0,"
		"170.0,0.1000,0.2000,0.3000,0.4000,0.5000,30.0,4,0.7000,0.0000,3,leak,"
		"\"grows, never freed\","
		"0,0,0,0,0,0,0,1,0,2,1500,alloc_empty_file+0x10,process,9,8,h1,"
		"/system.slice/docker-" ID64 ".scope," ID64 ",1,"
		"f (a) < main (a) [kernel: k1 < k2]\n");

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	ksyms_free(ks);
	cgcache_free(cg);
}

static void rowcsv_row__family_page_row_without_vector__empty_vector_fields(void **state)
{
	struct acc a;
	struct wslot s;
	struct wrow r;
	struct got g;
	struct csv *c;

	(void)state;
	new_row(&a, &s, &r, (struct wkey){ .domain = DOM_PAGE, .id = 99, .dev = 1,
					   .tgid = CS_TGID_FAMILY | 5 }, "1:99", "sh");
	snprintf(a.file, sizeof(a.file), "/var/log/x.log");
	s.page_adds = 4;
	s.page_dels = 2;
	s.refaults = 1;
	s.refault_pages = 1;
	s.max_shift = 5;	/* the sample is a slab domain's only */
	r.window = 3;
	r.start_ns = 300000000;
	r.refault_dist_p50 = 64;
	r.top_site = 0x1234;	/* no hot site outside slab */

	c = mem_csv(&g);
	/* workload 4242 runs, but this key is no process of it; no cgroup
	 * table, no symbols */
	rowcsv_row(c, &(struct rowcsv_ctx){ .window_ms = 100, .host = "",
					    .is_workload = workload_4242 }, &r, NULL);
	csv_free(c);
	assert_string_equal(g.text,
		"0.300,3,100,page,1:99,/var/log/x.log,,sh,system,"
		"0,0,0,0,0,0,0,0,0,0,0,0.0000,0.0000,0.0000,4,2,1,1,64,"
		",,,,,,,,,,,,,"
		"0,0,0,0,0,0,0,0,0,0,0,,family,0,1,,,,0,\n");
	assert_int_equal(fields(g.text), rowcsv_columns());
}

/* docs/csv.md's table names every column of the schema, in the file's
 * order (a line of it may name several: "`window`, `window_ms`"), and no
 * other: the schema is the one list, the docs follow it. */
static void csv_schema__docs_list__same_columns_in_order(void **state)
{
	FILE *f = fopen("docs/csv.md", "r");
	char line[4096];
	unsigned int next = 0;
	bool table = false;

	(void)state;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *p, *end, *cell;

		if (!strncmp(line, "| column |", 10)) {
			table = true;
			continue;
		}
		if (!table || strncmp(line, "| `", 3))
			continue;
		/* the first cell: the names, each in backquotes */
		cell = line + 1;
		end = strchr(cell, '|');
		assert_non_null(end);
		*end = 0;
		for (p = strchr(cell, '`'); p; p = strchr(p, '`')) {
			char *q = strchr(++p, '`');

			assert_non_null(q);
			*q = 0;
			assert_true(next < CSV_COLS);
			if (strcmp(p, csv_schema[next].name))
				fail_msg("docs/csv.md lists '%s' where the schema has '%s'", p,
					 csv_schema[next].name);
			next++;
			p = q + 1;
		}
	}
	fclose(f);
	assert_int_equal(next, CSV_COLS);
}

/* tools/clickhouse/schema.sql's table has the schema's columns in the
 * file's order: an old ClickHouse takes CSVWithNames by position. */
static void csv_schema__clickhouse_table__same_columns_in_order(void **state)
{
	FILE *f = fopen("tools/clickhouse/schema.sql", "r");
	char line[512], name[64];
	unsigned int next = 0;
	bool table = false;

	(void)state;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "CREATE TABLE", 12)) {
			table = true;
			continue;
		}
		if (!table || line[0] == '(' || line[0] == '-')
			continue;
		if (line[0] == ')')
			break;
		assert_int_equal(sscanf(line, " %63[a-z_0-9]", name), 1);
		assert_true(next < CSV_COLS);
		if (strcmp(name, csv_schema[next].name))
			fail_msg("schema.sql has '%s' where the CSV has '%s'", name, csv_schema[next].name);
		next++;
	}
	fclose(f);
	assert_int_equal(next, CSV_COLS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rowcsv_header__columns__in_order),
		cmocka_unit_test(csv_schema__docs_list__same_columns_in_order),
		cmocka_unit_test(csv_schema__clickhouse_table__same_columns_in_order),
		cmocka_unit_test(rowcsv_row__slab_row_with_vector__exact_line),
		cmocka_unit_test(rowcsv_row__family_page_row_without_vector__empty_vector_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
