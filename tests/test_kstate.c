// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the kernel's own numbers (daemon/kstate.c), on files in the
 * formats of /proc/slabinfo, /proc/sys/fs/dentry-state, /proc/meminfo and
 * /proc/kallsyms. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "../daemon/kstate.h"

#define S 1000000000ull

static char slab[64], dent[64], mem[64];

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* One /proc/slabinfo with these active counts. */
static void slabinfo(long filp, long k64, long k64cg, long k64rnd, long dentry)
{
	char buf[2048];

	snprintf(buf, sizeof(buf),
		 "slabinfo - version: 2.1\n"
		 "# name            <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab> : tunables <limit> <batchcount> <sharedfactor> : slabdata <active_slabs> <num_slabs> <sharedavail>\n"
		 "filp              %ld    567    192   21    1 : tunables    0    0    0 : slabdata     27     27      0\n"
		 "kmalloc-64        %ld   1024     64   64    1 : tunables    0    0    0 : slabdata     16     16      0\n"
		 "kmalloc-cg-64     %ld    512     64   64    1 : tunables    0    0    0 : slabdata      8      8      0\n"
		 "kmalloc-rnd-03-64 %ld    512     64   64    1 : tunables    0    0    0 : slabdata      8      8      0\n"
		 "kmalloc-1k          12     16   1024   16    4 : tunables    0    0    0 : slabdata      1      1      0\n"
		 "dma-kmalloc-1k       4      4   1024   16    4 : tunables    0    0    0 : slabdata      1      1      0\n"
		 "dentry            %ld  81564    192   21    1 : tunables    0    0    0 : slabdata   3884   3884      0\n",
		 filp, k64, k64cg, k64rnd, dentry);
	put(slab, buf);
}

static int setup(void **state)
{
	(void)state;
	snprintf(slab, sizeof(slab), "/tmp/cs-kstate-slab-%d", getpid());
	snprintf(dent, sizeof(dent), "/tmp/cs-kstate-dent-%d", getpid());
	snprintf(mem, sizeof(mem), "/tmp/cs-kstate-mem-%d", getpid());
	put(dent, "81090\t79737\t45\t0\t26806\t0\n");
	put(mem, "MemTotal:       24000000 kB\nActive(file):     600000 kB\nInactive(file):  1600000 kB\n");
	return 0;
}

static struct kstate *ks_new(void)
{
	struct kstate *ks = kstate_new(slab, dent, mem);
	char vm[64];

	assert_non_null(ks);
	snprintf(vm, sizeof(vm), "/tmp/cs-kstate-vm-%d", getpid());
	put(vm, "0x1-0x2 20480 irq_init_percpu_irqstack+0xca/0x100 vmap\n"
		"0x3-0x4 16384 dup_task_struct+0x4f/0x1b0 pages=4 vmalloc\n");
	assert_int_equal(kstate_set_vmallocinfo(ks, vm), 0);
	assert_int_equal(kstate_set_slab_dir(ks, "/nonexistent"), 0);
	return ks;
}

static int teardown(void **state)
{
	(void)state;
	unlink(slab);
	unlink(dent);
	unlink(mem);
	snprintf(slab, sizeof(slab), "/tmp/cs-kstate-vm-%d", getpid());
	unlink(slab);
	return 0;
}

static void kstate_growth__cache_grows__slope_per_second(void **state)
{
	struct kstate *ks = ks_new();
	double g, got;
	int i;

	(void)state;
	assert_non_null(ks);
	assert_int_equal(kstate_growth(ks, "filp", 10 * S, &g, &got), -ENODATA);
	/* filp +100 per 200 ms sample: +500/s */
	for (i = 0; i < 11; i++) {
		slabinfo(1000 + 100 * i, 500, 10, 10, 80000);
		assert_int_equal(kstate_sample(ks, 5 * S + i * S / 5), 0);
	}
	assert_int_equal(kstate_growth(ks, "filp", 10 * S, &g, &got), 0);
	assert_true(fabs(g - 500) < 1e-6);
	assert_true(fabs(got - 2.0) < 1e-9);
	/* only the last second */
	assert_int_equal(kstate_growth(ks, "filp", 1 * S, &g, &got), 0);
	assert_true(fabs(got - 1.0) < 1e-9);
	assert_true(fabs(g - 500) < 1e-6);
	assert_int_equal(kstate_growth(ks, "no_such_cache", 10 * S, &g, &got), -ENOENT);
	kstate_free(ks);
}

static void kstate_growth__kmalloc_size__sums_every_variant(void **state)
{
	struct kstate *ks = ks_new();
	double g, got;

	(void)state;
	/* the plain cache flat, the cg and random ones +50 each per second */
	slabinfo(500, 500, 100, 100, 80000);
	kstate_sample(ks, 1 * S);
	slabinfo(500, 500, 150, 150, 80000);
	kstate_sample(ks, 2 * S);
	assert_int_equal(kstate_growth(ks, "kmalloc-64", 10 * S, &g, &got), 0);
	assert_true(fabs(g - 100) < 1e-6);
	/* 1k = 1024 bytes: both the plain and the dma cache */
	assert_int_equal(kstate_growth(ks, "kmalloc-1024", 10 * S, &g, &got), 0);
	assert_true(fabs(g) < 1e-9);
	assert_int_equal(kstate_growth(ks, "kmalloc-96", 10 * S, &g, &got), -ENOENT);
	/* two slabs per CPU of each of the three 64-byte caches */
	assert_int_equal(kstate_resolution(ks, "kmalloc-64"),
			 3 * 2 * 64 * sysconf(_SC_NPROCESSORS_ONLN));
	assert_int_equal(kstate_resolution(ks, "filp"), 2 * 21 * sysconf(_SC_NPROCESSORS_ONLN));
	assert_int_equal(kstate_resolution(ks, "dentry"), 0);
	assert_int_equal(kstate_resolution(ks, "kmalloc-96"), -1);
	kstate_free(ks);
}

static void kstate_growth__dentry__counts_in_use_not_unused(void **state)
{
	struct kstate *ks = ks_new();
	double g, got;

	(void)state;
	/* slabinfo's dentry grows by 5000 (negative dentries, say), but the
	 * dentries in use (total - unused) stay at 1353 */
	slabinfo(500, 500, 10, 10, 80000);
	kstate_sample(ks, 1 * S);
	slabinfo(500, 500, 10, 10, 85000);
	put(dent, "86090\t84737\t45\t0\t31806\t0\n");
	kstate_sample(ks, 2 * S);
	assert_int_equal(kstate_growth(ks, "dentry", 10 * S, &g, &got), 0);
	assert_true(fabs(g) < 1e-9);
	/* 100 more in use */
	put(dent, "86190\t84737\t45\t0\t31806\t0\n");
	kstate_sample(ks, 3 * S);
	assert_int_equal(kstate_growth(ks, "dentry", 1 * S, &g, &got), 0);
	assert_true(fabs(g - 100) < 1e-6);
	/* vmap_area: the two busy areas of vmallocinfo, flat */
	assert_int_equal(kstate_growth(ks, "vmap_area", 10 * S, &g, &got), 0);
	assert_true(fabs(g) < 1e-9);
	assert_int_equal(kstate_resolution(ks, "vmap_area"), 0);
	kstate_free(ks);
}

static void kstate_file_lru__meminfo__pages_of_both_lists(void **state)
{
	struct kstate *ks = ks_new();
	uint64_t pages;

	(void)state;
	assert_int_equal(kstate_file_lru(ks, &pages), -ENODATA);
	slabinfo(500, 500, 10, 10, 80000);
	kstate_sample(ks, 1 * S);
	assert_int_equal(kstate_file_lru(ks, &pages), 0);
	assert_int_equal(pages, 2200000ull * 1024 / (uint64_t)sysconf(_SC_PAGESIZE));
	kstate_free(ks);
}

static void kstate_sample__no_slabinfo__error_and_no_counts(void **state)
{
	struct kstate *ks = kstate_new("/nonexistent/slabinfo", dent, mem);
	double g, got;

	(void)state;
	assert_int_equal(kstate_sample(ks, 1 * S), -ENOENT);
	assert_int_equal(kstate_growth(ks, "filp", 10 * S, &g, &got), -ENODATA);
	kstate_free(ks);
	kstate_free(NULL);
}

/* Names are kept in compressed blocks of 64, more blocks than are kept
 * open: every symbol, asked in an order that reopens blocks, by name. */
static void ksyms_name__many_symbols_out_of_order__each_its_own(void **state)
{
	char path[64], buf[128], want[128];
	unsigned int i, j, n = 1000;
	struct ksyms *k;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/cs-kstate-many-%d", getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	for (i = n; i-- > 0;)	/* the file out of address order */
		fprintf(f, "%llx t func_%u_%.*s\n", 0xffffffff81000000ull + i * 0x100ull, i,
			(int)(i % 40), "abcdefghijklmnopqrstuvwxyzabcdefghijklmn");
	fclose(f);
	k = ksyms_load(path);
	unlink(path);
	assert_non_null(k);
	for (j = 0; j < 3 * n; j++) {
		i = (j * 7919) % n;
		snprintf(want, sizeof(want), "func_%u_%.*s+0x%x", i, (int)(i % 40),
			 "abcdefghijklmnopqrstuvwxyzabcdefghijklmn", j % 0x100);
		assert_int_equal(ksyms_name(k, 0xffffffff81000000ull + i * 0x100ull + j % 0x100,
					    buf, sizeof(buf)), 0);
		assert_string_equal(buf, want);
	}
	ksyms_free(k);
}

static void ksyms_name__address_inside_symbol__name_plus_offset(void **state)
{
	char path[64], buf[128];
	struct ksyms *k;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/cs-kstate-syms-%d", getpid());
	put(path, "ffffffff81000000 T _stext\n"
		  "ffffffff81234500 T alloc_empty_file\n"
		  "ffffffff81234600 t __alloc_file\n"
		  "ffffffff82000000 D some_data\n"
		  "ffffffffc0001000 t mod_func\t[mymod]\n");
	k = ksyms_load(path);
	unlink(path);
	assert_non_null(k);
	assert_int_equal(ksyms_name(k, 0xffffffff8123454aull, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "alloc_empty_file+0x4a");
	assert_int_equal(ksyms_name(k, 0xffffffffc0001010ull, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "mod_func+0x10");
	/* data symbols are not call sites: the text symbol before it */
	assert_int_equal(ksyms_name(k, 0xffffffff82000001ull, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "__alloc_file+0xdcba01");
	assert_int_equal(ksyms_name(k, 0x1000, buf, sizeof(buf)), -ENOENT);
	assert_string_equal(buf, "0x1000");
	ksyms_free(k);
	/* kptr_restrict: every address 0 */
	put(path, "0000000000000000 T _stext\n0000000000000000 T alloc_empty_file\n");
	assert_null(ksyms_load(path));
	unlink(path);
	assert_int_equal(ksyms_name(NULL, 0xffffffff8123454aull, buf, sizeof(buf)), -ENOENT);
	assert_string_equal(buf, "0xffffffff8123454a");
}

static void kstate_reclaimable__sysfs_flag__read_once_per_cache(void **state)
{
	struct kstate *ks = ks_new();
	char dir[64], cmd[512];

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/cs-kstate-sys-%d", getpid());
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/buffer_head %s/filp && echo 1 > %s/buffer_head/reclaim_account && "
		 "echo 0 > %s/filp/reclaim_account", dir, dir, dir, dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(kstate_set_slab_dir(ks, dir), 0);
	assert_int_equal(kstate_reclaimable(ks, "buffer_head"), 1);
	assert_int_equal(kstate_reclaimable(ks, "filp"), 0);
	assert_int_equal(kstate_reclaimable(ks, "kmalloc-64"), 0);
	assert_int_equal(kstate_reclaimable(ks, "nosuch"), -ENOENT);
	assert_int_equal(kstate_reclaimable(ks, "../etc"), -EINVAL);
	/* the answer is kept for a cache slabinfo lists: read once */
	slabinfo(500, 500, 10, 10, 80000);
	kstate_sample(ks, 1 * S);
	assert_int_equal(kstate_reclaimable(ks, "filp"), 0);
	snprintf(cmd, sizeof(cmd), "echo 1 > %s/filp/reclaim_account", dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(kstate_reclaimable(ks, "filp"), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	kstate_free(ks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(kstate_growth__cache_grows__slope_per_second, setup, teardown),
		cmocka_unit_test_setup_teardown(kstate_growth__kmalloc_size__sums_every_variant, setup, teardown),
		cmocka_unit_test_setup_teardown(kstate_growth__dentry__counts_in_use_not_unused, setup, teardown),
		cmocka_unit_test_setup_teardown(kstate_file_lru__meminfo__pages_of_both_lists, setup, teardown),
		cmocka_unit_test_setup_teardown(kstate_sample__no_slabinfo__error_and_no_counts, setup, teardown),
		cmocka_unit_test(ksyms_name__address_inside_symbol__name_plus_offset),
		cmocka_unit_test(ksyms_name__many_symbols_out_of_order__each_its_own),
		cmocka_unit_test_setup_teardown(kstate_reclaimable__sysfs_flag__read_once_per_cache, setup, teardown),
	};

	return cmocka_run_group_tests_name("kstate", tests, NULL, NULL);
}
