// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the labelling rules (daemon/classify.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "../daemon/classify.h"

static struct rules rules;
static struct fvec f;
static struct evidence e;
static char reason[256];

static int setup(void **state)
{
	(void)state;
	rules_defaults(&rules);
	memset(&f, 0, sizeof(f));
	memset(&e, 0, sizeof(e));
	f.raw[FEAT_LOCALITY] = 1.0;
	f.raw[FEAT_FREQ] = 1000;
	e.allocs = 100;
	e.frees = 100;
	e.free_ratio = 1.0;
	e.lifetime_p50_ns = 1000000;
	e.window_s = 0.1;
	return 0;
}

static void classify__ordinary_churn__normal(void **state)
{
	(void)state;
	assert_int_equal(classify(&rules, "filp", &f, &e, reason, sizeof(reason)), LABEL_NORMAL);
	assert_non_null(strstr(reason, "normal: filp"));
}

static void classify__refaults_dominate__thrash_with_numbers(void **state)
{
	(void)state;
	e.page_adds = 512;
	e.refault_pages = 500;
	e.refault_share = 500.0 / 512;
	e.refault_dist_p50 = 42;
	assert_int_equal(classify(&rules, "254:0:12", &f, &e, reason, sizeof(reason)), LABEL_THRASH);
	assert_string_equal(reason, "thrash: 254:0:12 500 of 512 inserted pages refaulted (98%), median refault distance 42 evictions");
	/* a few refaults in a large insert stream are not thrash */
	e.refault_pages = 100;
	e.refault_share = 100.0 / 512;
	assert_int_equal(classify(&rules, "254:0:12", &f, &e, reason, sizeof(reason)), LABEL_NORMAL);
	/* nor is a high share of very few pages */
	e.page_adds = 4;
	e.refault_pages = 4;
	e.refault_share = 1;
	assert_int_equal(classify(&rules, "254:0:12", &f, &e, reason, sizeof(reason)), LABEL_NORMAL);
}

static void classify__sustained_growth_without_frees__leak(void **state)
{
	(void)state;
	e.frees = 2;
	e.free_ratio = 0.02;
	e.growth_per_s = 1180;
	e.grew_windows = 24;
	e.live_objs = 9000;
	assert_int_equal(classify(&rules, "filp", &f, &e, reason, sizeof(reason)), LABEL_LEAK);
	assert_string_equal(reason, "leak: filp live +1180/s for 24 consecutive windows, 9000 live, frees/allocs 0.02");
	/* growth for too few windows is a burst, not a leak */
	e.grew_windows = 19;
	assert_int_equal(classify(&rules, "filp", &f, &e, reason, sizeof(reason)), LABEL_NORMAL);
	/* growth with frees keeping up is not a leak */
	e.grew_windows = 24;
	e.free_ratio = 0.9;
	assert_int_equal(classify(&rules, "filp", &f, &e, reason, sizeof(reason)), LABEL_NORMAL);
}

static void classify__remote_frees_of_one_size__false_sharing(void **state)
{
	(void)state;
	f.raw[FEAT_LOCALITY] = 0.02;
	e.frees = 4500;
	e.remote_frees = 4410;
	e.same_size_share = 1.0;
	e.lifetime_p50_ns = 23000;
	assert_int_equal(classify(&rules, "skbuff_head_cache", &f, &e, reason, sizeof(reason)),
			 LABEL_FALSE_SHARING);
	assert_string_equal(reason, "false_sharing: skbuff_head_cache 98% of 4500 frees on another CPU than the alloc (44100/s), 100% of allocs one size, median lifetime 23.0 us");
	/* mixed sizes: not the one-line pattern */
	e.same_size_share = 0.5;
	assert_int_equal(classify(&rules, "x", &f, &e, reason, sizeof(reason)), LABEL_NORMAL);
	/* a few remote frees, as when a forked child exits elsewhere */
	e.same_size_share = 1.0;
	e.remote_frees = 43;
	assert_int_equal(classify(&rules, "x", &f, &e, reason, sizeof(reason)), LABEL_NORMAL);
	/* many, but of objects that lived for seconds: a teardown, not ping-pong */
	e.remote_frees = 4410;
	e.lifetime_p50_ns = 5000000000ull;
	assert_int_equal(classify(&rules, "x", &f, &e, reason, sizeof(reason)), LABEL_NORMAL);
}

static void classify__fast_churn_short_lives__thrash(void **state)
{
	(void)state;
	f.raw[FEAT_FREQ] = 250000;
	e.lifetime_p50_ns = 2100;
	assert_int_equal(classify(&rules, "kmalloc-64", &f, &e, reason, sizeof(reason)), LABEL_THRASH);
	assert_string_equal(reason, "thrash: kmalloc-64 churns 250000 allocs+frees/s, median lifetime 2.1 us");
	e.lifetime_p50_ns = 50000;
	assert_int_equal(classify(&rules, "kmalloc-64", &f, &e, reason, sizeof(reason)), LABEL_NORMAL);
}

static void classify__several_rules_hold__refault_thrash_first(void **state)
{
	(void)state;
	e.page_adds = 100;
	e.refault_pages = 100;
	e.refault_share = 1;
	e.grew_windows = 50;
	e.growth_per_s = 100;
	e.free_ratio = 0;
	assert_int_equal(classify(&rules, "k", &f, &e, reason, sizeof(reason)), LABEL_THRASH);
	e.refault_pages = 0;
	e.refault_share = 0;
	assert_int_equal(classify(&rules, "k", &f, &e, reason, sizeof(reason)), LABEL_LEAK);
}

static void classify__anomaly_of_a_gpu_process__reason_carries_gpu_work(void **state)
{
	(void)state;
	e.page_adds = 18;
	e.refault_pages = 18;
	e.refault_share = 1;
	e.refault_dist_p50 = 7;
	e.gpu_kernel_ns = 12500000;
	e.gpu_kv_kernel_ns = 3000000;
	e.gpu_copy_bytes = 2000000;
	assert_int_equal(classify(&rules, "kv-pool-gpu", &f, &e, reason, sizeof(reason)), LABEL_THRASH);
	assert_string_equal(reason, "thrash: kv-pool-gpu 18 of 18 inserted pages refaulted (100%), median refault distance 7 evictions; "
			    "GPU meanwhile: 12.5 ms kernels (3.0 ms KV), 2.00 MB copied");
	/* a normal vector says nothing of the GPU */
	e.refault_pages = 0;
	e.refault_share = 0;
	assert_int_equal(classify(&rules, "kv-pool-gpu", &f, &e, reason, sizeof(reason)), LABEL_NORMAL);
	assert_null(strstr(reason, "GPU"));
	/* a short buffer stays terminated */
	e.refault_pages = 18;
	e.refault_share = 1;
	assert_int_equal(classify(&rules, "kv-pool-gpu", &f, &e, reason, 40), LABEL_THRASH);
	assert_int_equal(strlen(reason), 39);
}

static void rules_set__known_and_unknown_names__applied_or_rejected(void **state)
{
	(void)state;
	assert_int_equal(rules_set(&rules, "leak_min_windows=30"), 0);
	assert_true(rules.v[R_LEAK_MIN_WINDOWS] == 30);
	assert_int_equal(rules_set(&rules, " thrash_refault_share = 0.5 "), 0);
	assert_true(rules.v[R_THRASH_REFAULT_SHARE] == 0.5);
	assert_int_equal(rules_set(&rules, "no_such_rule=1"), -ENOENT);
	assert_int_equal(rules_set(&rules, "leak_min_windows"), -EINVAL);
	assert_int_equal(rules_set(&rules, "leak_min_windows=abc"), -EINVAL);
	assert_int_equal(rules_set(&rules, "leak_min_windows=-1"), -EINVAL);
	assert_int_equal(rules_set(&rules, "leak_min_windows=nan"), -EINVAL);
	assert_true(rules.v[R_LEAK_MIN_WINDOWS] == 30);
	/* with the raised threshold, 24 windows of growth no longer count */
	e.free_ratio = 0;
	e.growth_per_s = 100;
	e.grew_windows = 24;
	assert_int_equal(classify(&rules, "filp", &f, &e, reason, sizeof(reason)), LABEL_NORMAL);
}

static void rules_load__file_with_comments__applied_and_bad_line_named(void **state)
{
	char path[] = "/tmp/cs-rules-XXXXXX";
	int fd = mkstemp(path), line;
	FILE *fp = fdopen(fd, "w");

	(void)state;
	fputs("# calibrated on host A\n\nleak_min_growth_s = 50  # objects/s\n"
	      "false_sharing_max_locality=0.2\n", fp);
	fclose(fp);
	assert_int_equal(rules_load(&rules, path, &line), 0);
	assert_int_equal(line, 0);
	assert_true(rules.v[R_LEAK_MIN_GROWTH_S] == 50);
	assert_true(rules.v[R_FS_MAX_LOCALITY] == 0.2);
	fp = fopen(path, "w");
	fputs("leak_min_growth_s = 5\nbogus = 1\n", fp);
	fclose(fp);
	assert_int_equal(rules_load(&rules, path, &line), -ENOENT);
	assert_int_equal(line, 2);
	unlink(path);
	assert_int_equal(rules_load(&rules, path, &line), -ENOENT);
	assert_int_equal(line, 0);
}

static void classify_cluster__majority_anomaly__cluster_takes_it(void **state)
{
	unsigned int counts[LABEL_COUNT] = { 0 };

	(void)state;
	counts[LABEL_NORMAL] = 40;
	counts[LABEL_LEAK] = 60;
	assert_int_equal(classify_cluster(&rules, counts, 100), LABEL_LEAK);
	counts[LABEL_NORMAL] = 60;
	counts[LABEL_LEAK] = 40;
	assert_int_equal(classify_cluster(&rules, counts, 100), LABEL_NORMAL);
	counts[LABEL_NORMAL] = 0;
	counts[LABEL_LEAK] = 30;
	counts[LABEL_THRASH] = 70;
	assert_int_equal(classify_cluster(&rules, counts, 100), LABEL_THRASH);
	memset(counts, 0, sizeof(counts));
	assert_int_equal(classify_cluster(&rules, counts, 0), LABEL_NORMAL);
	assert_string_equal(label_name(LABEL_FALSE_SHARING), "false_sharing");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(classify__ordinary_churn__normal, setup),
		cmocka_unit_test_setup(classify__refaults_dominate__thrash_with_numbers, setup),
		cmocka_unit_test_setup(classify__sustained_growth_without_frees__leak, setup),
		cmocka_unit_test_setup(classify__remote_frees_of_one_size__false_sharing, setup),
		cmocka_unit_test_setup(classify__fast_churn_short_lives__thrash, setup),
		cmocka_unit_test_setup(classify__several_rules_hold__refault_thrash_first, setup),
		cmocka_unit_test_setup(classify__anomaly_of_a_gpu_process__reason_carries_gpu_work, setup),
		cmocka_unit_test_setup(rules_set__known_and_unknown_names__applied_or_rejected, setup),
		cmocka_unit_test_setup(rules_load__file_with_comments__applied_and_bad_line_named, setup),
		cmocka_unit_test_setup(classify_cluster__majority_anomaly__cluster_takes_it, setup),
	};

	return cmocka_run_group_tests_name("classify", tests, NULL, NULL);
}
