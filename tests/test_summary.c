// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the tables at exit (daemon/summary.c): the busiest keys,
 * the labelled keys with their counts from analysis, the counters. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "../daemon/summary.h"

#define WIN_NS 100000000ull

static struct acc keys[3];

static void make_keys(struct summary_keys *k)
{
	static const char *names[3] = { "filp", "kmalloc-64", "dentry" };
	int i;

	memset(keys, 0, sizeof(keys));
	memset(k, 0, sizeof(*k));
	for (i = 0; i < 3; i++) {
		keys[i].key = (struct wkey){ .domain = DOM_SLAB, .id = (uint64_t)i + 1, .tgid = 100 };
		snprintf(keys[i].name, sizeof(keys[i].name), "%s", names[i]);
		snprintf(keys[i].comm, sizeof(keys[i].comm), "app");
		assert_int_equal(summary_add_key(&keys[i], k), 0);
	}
	keys[2].key.tgid = CS_TGID_OTHER;
	snprintf(keys[2].comm, sizeof(keys[2].comm), "(others)");
}

/* what a table printed, NUL-terminated once its stream is closed */
static char text[4096];

static FILE *out(void)
{
	FILE *f = fmemopen(text, sizeof(text), "w");

	assert_non_null(f);
	return f;
}

static void summary_busiest__three_keys_top_two__most_events_first(void **state)
{
	struct summary_keys k;
	FILE *f;

	(void)state;
	make_keys(&k);
	keys[0].total_allocs = 10;
	keys[0].total_frees = 10;
	keys[1].total_allocs = 300;
	keys[1].total_frees = 200;
	keys[1].live_objs = 100;
	keys[2].total_allocs = 50;
	summary_busiest(&k, 2, f = out());
	fclose(f);
	assert_string_equal(text,
		"busiest keys:\n"
		"domain key                          file                 tgid comm                 allocs      frees      live   pg_adds   pg_dels refaults\n"
		"slab   kmalloc-64                                         100 app                     300        200       100         0         0        0\n"
		"slab   dentry                                          others (others)                 50          0         0         0         0        0\n");
	/* the caller's keys keep their order */
	assert_ptr_equal(k.v[0], &keys[0]);
	summary_busiest(&k, 0, stderr);	/* top 0: nothing */
	summary_keys_release(&k);
	assert_null(k.v);
}

static void summary_labelled__counts_merged_in_analysis__shown_under_the_others_key(void **state)
{
	struct analysis_params p = { .eps = 0.08, .min_pts = 3, .history_windows = 50 };
	struct analysis an;
	struct rules rules;
	struct summary_keys k;
	struct wslot s;
	struct wrow r;
	uint32_t *c;
	FILE *f;
	int i;

	(void)state;
	rules_defaults(&rules);
	analysis_init(&an, &rules, &p);
	make_keys(&k);
	summary_labelled(&k, &an, f = out());
	fclose(f);
	assert_non_null(strstr(text, "  (none: every vector was normal)\n"));
	/* vectors of filp and kmalloc-64, counted by analysis */
	memset(&s, 0, sizeof(s));
	memset(&r, 0, sizeof(r));
	s.allocs = s.frees = s.same_cpu_frees = 500;
	r.s = &s;
	for (i = 0; i < 2; i++) {
		wrow_of_key(&r, &keys[i]);
		assert_non_null(analysis_add(&an, &r, WIN_NS));
		assert_non_null(analysis_add(&an, &r, WIN_NS));
	}
	/* what the rules said of them does not matter here: say filp had
	 * three leak vectors and kmalloc-64 one thrash */
	c = (uint32_t *)analysis_key_labels(&an, &keys[0].key);
	memset(c, 0, LABEL_COUNT * sizeof(*c));
	c[LABEL_NORMAL] = 1;
	c[LABEL_LEAK] = 3;
	c = (uint32_t *)analysis_key_labels(&an, &keys[1].key);
	memset(c, 0, LABEL_COUNT * sizeof(*c));
	c[LABEL_NORMAL] = 2;
	c[LABEL_THRASH] = 1;
	summary_labelled(&k, &an, f = out());
	fclose(f);
	assert_string_equal(text,
		"labelled keys (vectors per label):\n"
		"domain key                              tgid comm              normal  thrash f_share    leak\n"
		"slab   filp                              100 app                    1       0       0       3\n"
		"slab   kmalloc-64                        100 app                    2       1       0       0\n");
	/* the window table merged filp into dentry's others key (as for an
	 * exited process): its counts are shown there */
	analysis_key_gone(&an, &keys[0].key, &keys[2].key);
	summary_keys_release(&k);
	make_keys(&k);
	k.n = 0;
	assert_int_equal(summary_add_key(&keys[1], &k), 0);
	assert_int_equal(summary_add_key(&keys[2], &k), 0);
	summary_labelled(&k, &an, f = out());
	fclose(f);
	assert_string_equal(text,
		"labelled keys (vectors per label):\n"
		"domain key                              tgid comm              normal  thrash f_share    leak\n"
		"slab   dentry                         others (others)               1       0       0       3\n"
		"slab   kmalloc-64                        100 app                    2       1       0       0\n");
	summary_keys_release(&k);
	analysis_release(&an);
}

static void summary_print__counters__their_lines(void **state)
{
	struct summary s = { 0 };
	struct sampler smp = { .top_shift = 3, .peak_shift = 4, .sampled = 7, .changes = 62,
			       .budget = 20000 };
	struct budget b = { .pct = 25, .cost_pct = 24.5, .bpf_pct = 20.25, .daemon_pct = 4.25,
			    .peak_pct = 61.5, .kernel = false, .records = 20000, .lowered = 3,
			    .level = BUDGET_SHED_PAGE, .sheds = 1, .over_s = 4, .measured = 21 };
	struct loader_prog_stats ps = { .name = "tp_kmem_alloc", .run_cnt = 4, .run_time_ns = 400,
					.recursion_misses = 1 };
	struct loader_prog_stats idle = { .name = "tp_idle" };
	FILE *f = out();

	(void)state;
	s.elapsed_s = 21.104;
	s.k.produced = 100;
	s.k.dropped = 0;
	s.consumed = 100;
	s.w.windows = 201;
	s.w.rows = 9104;
	s.w.keys = 1822;
	s.w.keys_exited = 996;
	s.smp = &smp;
	s.budget = &b;
	s.sample_budget = 50000;
	s.max_keys = 4096;
	s.history_max = 16384;
	s.history_vectors = 6057;
	s.kernel_stats = true;
	summary_add_prog(&ps, &s);
	summary_add_prog(&idle, &s);
	s.csv = true;
	s.csv_st.rows = 9104;
	summary_print(&s, f);
	fclose(f);
	assert_string_equal(text,
		"bpf programs (kernel run-time accounting):\n"
		"  tp_kmem_alloc                       4 runs      100 ns/run      1 recursion misses\n"
		"cachescoped: 21.10 s, 201 windows, 9104 rows, 1822 keys\n"
		"events: produced=100 consumed=100 dropped=0 (produced = consumed + dropped) late=0 bad=0 lost_nomem=0\n"
		"kernel: recursion_misses=0 free_unmatched=0 unseen_frees=0 live_map_evictions=0 evicted_map_evictions=0 page_evictions=0 page_truncations=0 irq_frees=0 ring_backoff=0\n"
		"sampling: auto, 1 in 8 slab objects tracked in the busiest caches at the end (7 of 1024 slots of (cache, process) thinned), 1 in 16 at most, 62 changes (records budget 20000/s of --sample-budget 50000)\n"
		"budget: 25% of a CPU; cost in the last second 24.5% (BPF 20.2% estimated, daemon 4.2%), peak 61.5%, over in 4 of 21 seconds; slab records budget 20000/s (lowered 3, raised 0); shed now page_cache (shed 1, restored 0)\n"
		"keys: now=1822 dropped=0 exited=996 idle_merged=0 evicted=0 (budget 4096) others_events=0 share_events=0; history: 6057 vectors, 0 trimmed (max 16384)\n"
		"usdt: rejected=0 kv_blocks=0 kv_queue_full=0\n"
		"csv: rows=9104 lost=0 rotations=0 files_dropped=0 rows_dropped=0\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(summary_busiest__three_keys_top_two__most_events_first),
		cmocka_unit_test(summary_labelled__counts_merged_in_analysis__shown_under_the_others_key),
		cmocka_unit_test(summary_print__counters__their_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
