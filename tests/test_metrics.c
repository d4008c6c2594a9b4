// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the Prometheus exposition (daemon/metrics.c). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "../daemon/metrics.h"

static void sample(struct metrics *m)
{
	memset(m, 0, sizeof(*m));
	m->version = "0.1";
	m->produced = 1000;
	m->consumed = 990;
	m->dropped = 10;
	m->page_refaults = 7;
	m->kv_swap_ins = 3;
	m->sample_shift = 4;
	metrics_hist_observe(&m->clustering, 0.0002);
	metrics_hist_observe(&m->clustering, 0.03);
	metrics_named_set(&m->control, "served", 12);
	metrics_named_set(&m->control, "denied", 1);
	m->bpf_stats_enabled = 1;
	m->nprogs = 1;
	snprintf(m->progs[0].name, sizeof(m->progs[0].name), "tp_kmem_alloc");
	m->progs[0].run_ns = 2500000000ull;
	m->progs[0].run_cnt = 10;
	m->progs[0].recursion_misses = 3;
	m->proc.ok = true;
	m->proc.cpu_s = 1.5;
	m->proc.resident_bytes = 4096;
	m->proc.start_time_s = 1800000000;
	m->proc.open_fds = 9;
	m->proc.max_fds = 1024;
	metrics_named_set(&m->vectors, "normal", 40);
	metrics_named_set(&m->vectors, "leak", 5);
	metrics_named_set(&m->anomalous, "normal", 9);
	metrics_named_set(&m->anomalous, "leak", 2);
	metrics_named_set(&m->usdt_rejected, "kv_block", 1);
}

static char *render(const struct metrics *m, const struct metrics_keys *ks)
{
	struct metrics_detail det = { .live = ks };
	size_t len;
	char *out;

	assert_int_equal(metrics_render(m, &det, &out, &len), 0);
	assert_non_null(out);
	assert_int_equal(strlen(out), len);
	return out;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (; (hay = strstr(hay, needle)); hay++)
		n++;
	return n;
}

static void metrics_render__counters__total_suffix_help_and_type(void **state)
{
	struct metrics_keys ks = { 0 };
	struct metrics m;
	char *out;

	(void)state;
	sample(&m);
	out = render(&m, &ks);
	assert_non_null(strstr(out, "# HELP cachescope_events_produced_total "));
	assert_non_null(strstr(out, "# TYPE cachescope_events_produced_total counter\n"
				    "cachescope_events_produced_total 1000\n"));
	assert_non_null(strstr(out, "\ncachescope_events_dropped_total 10\n"));
	assert_non_null(strstr(out, "\ncachescope_page_refaults_total 7\n"));
	assert_non_null(strstr(out, "\ncachescope_kv_swap_ins_total 3\n"));
	assert_non_null(strstr(out, "# TYPE cachescope_slab_sample_shift gauge\n"
				    "cachescope_slab_sample_shift 4\n"));
	assert_non_null(strstr(out, "\ncachescope_build_info{version=\"0.1\"} 1\n"));
	assert_non_null(strstr(out, "\ncachescope_vectors_total{pattern=\"leak\"} 5\n"));
	assert_non_null(strstr(out, "\ncachescope_anomalous_keys{pattern=\"leak\"} 2\n"));
	assert_non_null(strstr(out, "\ncachescope_usdt_rejected_total{reason=\"kv_block\"} 1\n"));
	/* a histogram: cumulative buckets, sum and count */
	assert_non_null(strstr(out, "# TYPE cachescope_clustering_duration_seconds histogram\n"));
	assert_non_null(strstr(out, "\ncachescope_clustering_duration_seconds_bucket{le=\"0.0005\"} 1\n"));
	assert_non_null(strstr(out, "\ncachescope_clustering_duration_seconds_bucket{le=\"0.025\"} 1\n"));
	assert_non_null(strstr(out, "\ncachescope_clustering_duration_seconds_bucket{le=\"0.05\"} 2\n"));
	assert_non_null(strstr(out, "\ncachescope_clustering_duration_seconds_bucket{le=\"+Inf\"} 2\n"));
	assert_non_null(strstr(out, "\ncachescope_clustering_duration_seconds_sum 0.030200\n"));
	assert_non_null(strstr(out, "\ncachescope_clustering_duration_seconds_count 2\n"));
	/* one counter with a result label, not one counter a result */
	assert_non_null(strstr(out, "\ncachescope_control_requests_total{result=\"served\"} 12\n"));
	assert_non_null(strstr(out, "\ncachescope_control_requests_total{result=\"denied\"} 1\n"));
	/* the process's own cost, named as client libraries name it */
	assert_non_null(strstr(out, "\nprocess_cpu_seconds_total 1.500000\n"));
	assert_non_null(strstr(out, "\nprocess_resident_memory_bytes 4096\n"));
	assert_non_null(strstr(out, "\nprocess_start_time_seconds 1800000000.000000\n"));
	assert_non_null(strstr(out, "\nprocess_open_fds 9\n"));
	assert_non_null(strstr(out, "\nprocess_max_fds 1024\n"));
	/* BPF programs: their run time where the kernel accounts it */
	assert_non_null(strstr(out, "\ncachescope_bpf_stats_enabled 1\n"));
	assert_non_null(strstr(out, "\ncachescope_bpf_program_run_seconds_total{program=\"tp_kmem_alloc\"} 2.500000000\n"));
	assert_non_null(strstr(out, "\ncachescope_bpf_program_runs_total{program=\"tp_kmem_alloc\"} 10\n"));
	assert_non_null(strstr(out, "\ncachescope_bpf_program_recursion_misses_total{program=\"tp_kmem_alloc\"} 3\n"));
	/* no uptime gauge: the start time says it */
	assert_null(strstr(out, "uptime"));
	/* every metric has its HELP and TYPE once; counters end in _total */
	{
		char *save, *dup = strdup(out), *line;

		for (line = strtok_r(dup, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char name[128], type[16], help[160];

			if (sscanf(line, "# TYPE %127s %15s", name, type) != 2)
				continue;
			assert_true(!strncmp(name, "cachescope_", 11) || !strncmp(name, "process_", 8));
			snprintf(help, sizeof(help), "# HELP %s ", name);
			assert_int_equal(count(out, help), 1);
			if (!strcmp(type, "counter"))
				assert_string_equal(name + strlen(name) - 6, "_total");
			else if (!strcmp(type, "histogram"))
				assert_string_equal(name + strlen(name) - 8, "_seconds");
			else
				assert_string_equal(type, "gauge");
			/* no unit suffix but base units: seconds and bytes */
			assert_null(strstr(name, "_ms"));
			assert_null(strstr(name, "_kb"));
		}
		free(dup);
	}
	/* no process ids or paths as labels */
	assert_null(strstr(out, "tgid="));
	assert_null(strstr(out, "pid="));
	free(out);
}

static void metrics_escape__quote_backslash_newline__per_format(void **state)
{
	char buf[METRICS_ESC_SIZE(32)];

	(void)state;
	assert_string_equal(metrics_escape(buf, sizeof(buf), "kmalloc-64"), "kmalloc-64");
	assert_string_equal(metrics_escape(buf, sizeof(buf), "a\"b"), "a\\\"b");
	assert_string_equal(metrics_escape(buf, sizeof(buf), "a\\b"), "a\\\\b");
	assert_string_equal(metrics_escape(buf, sizeof(buf), "a\nb"), "a\\nb");
	/* valid UTF-8 passes */
	assert_string_equal(metrics_escape(buf, sizeof(buf), "caf\xc3\xa9"), "caf\xc3\xa9");
}

static void metrics_escape__invalid_utf8_and_controls__hex_text(void **state)
{
	char buf[METRICS_ESC_SIZE(32)];

	(void)state;
	/* the value reads \xff: its backslash escaped on the wire */
	assert_string_equal(metrics_escape(buf, sizeof(buf), "a\xff" "b"), "a\\\\xffb");
	assert_string_equal(metrics_escape(buf, sizeof(buf), "\x1b[0m"), "\\\\x1b[0m");
	assert_string_equal(metrics_escape(buf, sizeof(buf), "\t\x7f"), "\\\\x09\\\\x7f");
	/* a cut sequence, an overlong one, a C1 control */
	assert_string_equal(metrics_escape(buf, sizeof(buf), "\xe2\x82"), "\\\\xe2\\\\x82");
	assert_string_equal(metrics_escape(buf, sizeof(buf), "\xc0\xaf"), "\\\\xc0\\\\xaf");
	assert_string_equal(metrics_escape(buf, sizeof(buf), "\xc2\x85"), "\\\\xc2\\\\x85");
	/* never half an escape: "ab" and 5 of \\xff do not fit in 7 */
	assert_string_equal(metrics_escape(buf, 7, "ab\xff"), "ab");
}

static void metrics_render__label_values__escaped(void **state)
{
	struct metrics_keys ks = { 0 };
	struct metrics m;
	char *out;

	(void)state;
	sample(&m);
	metrics_keys_add(&ks, "page", "we\"ird\\na\nme\xff", 3, 12288);
	metrics_keys_finish(&ks, METRICS_MAX_KEYS);
	out = render(&m, &ks);
	assert_non_null(strstr(out, "cachescope_live_bytes{domain=\"page\",key=\"we\\\"ird\\\\na\\nme\\\\xff\"} 12288\n"));
	free(out);
	metrics_keys_release(&ks);
}

static void metrics_keys_finish__same_key_many_processes__summed_empty_dropped(void **state)
{
	struct metrics_keys ks = { 0 };

	(void)state;
	metrics_keys_add(&ks, "slab", "filp", 10, 2560);
	metrics_keys_add(&ks, "slab", "dentry", 1, 192);
	metrics_keys_add(&ks, "slab", "filp", 5, 1280);
	metrics_keys_add(&ks, "page", "filp", 2, 8192);	/* another domain */
	metrics_keys_add(&ks, "slab", "empty", 3, 768);
	metrics_keys_add(&ks, "slab", "empty", -3, -768);	/* freed by another process */
	metrics_keys_add(&ks, "page", "idle", 0, 0);
	metrics_keys_finish(&ks, METRICS_MAX_KEYS);
	assert_int_equal(ks.n, 3);
	assert_int_equal(ks.omitted, 0);
	/* most live bytes first */
	assert_string_equal(ks.v[0].domain, "page");
	assert_string_equal(ks.v[1].key, "filp");
	assert_int_equal(ks.v[1].live_objs, 15);
	assert_int_equal(ks.v[1].live_bytes, 3840);
	assert_string_equal(ks.v[2].key, "dentry");
	metrics_keys_release(&ks);
}

static void metrics_render__many_keys__bounded_rest_counted(void **state)
{
	struct metrics_keys ks = { 0 };
	struct metrics m;
	char name[32], *out;
	int i;

	(void)state;
	sample(&m);
	for (i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "cache-%d", i);
		metrics_keys_add(&ks, "slab", name, 1, i);
	}
	metrics_keys_finish(&ks, METRICS_MAX_KEYS);
	assert_int_equal(ks.n, METRICS_MAX_KEYS);
	assert_int_equal(ks.omitted, 1000 - METRICS_MAX_KEYS);
	out = render(&m, &ks);
	assert_int_equal(count(out, "\ncachescope_live_bytes{"), METRICS_MAX_KEYS);
	assert_int_equal(count(out, "\ncachescope_live_objects{"), METRICS_MAX_KEYS);
	/* the biggest kept, the smallest left out */
	assert_non_null(strstr(out, "key=\"cache-999\"} 999\n"));
	assert_null(strstr(out, "key=\"cache-0\"}"));
	assert_non_null(strstr(out, "\ncachescope_live_keys_omitted 744\n"));
	/* left out: 0 + 1 + ... + 743 bytes */
	assert_non_null(strstr(out, "\ncachescope_live_omitted_bytes 276396\n"));
	free(out);
	metrics_keys_release(&ks);
}

/* Without bpf_stats the run-time series are absent (a zero would read as
 * "free"), the gauge says why; recursion misses are counted always. */
static void metrics_render__bpf_stats_off__no_run_time_gauge_says_so(void **state)
{
	struct metrics_keys ks = { 0 };
	struct metrics m;
	char *out;

	(void)state;
	sample(&m);
	m.bpf_stats_enabled = 0;
	out = render(&m, &ks);
	assert_non_null(strstr(out, "\ncachescope_bpf_stats_enabled 0\n"));
	assert_null(strstr(out, "cachescope_bpf_program_run_seconds_total{"));
	assert_null(strstr(out, "cachescope_bpf_program_runs_total{"));
	assert_non_null(strstr(out, "cachescope_bpf_program_recursion_misses_total{program=\"tp_kmem_alloc\"} 3\n"));
	free(out);
}

/* Sampling in time: the share of the time the alloc programs are
 * attached, and the frees' (1 unless --sample-time-frees cycles them);
 * whether kmalloc's is held attached meanwhile. */
static void metrics_render__sampling_in_time__alloc_and_free_shares(void **state)
{
	struct metrics_keys ks = { 0 };
	struct metrics m;
	char *out;

	(void)state;
	sample(&m);
	m.duty.shift = 2;
	out = render(&m, &ks);
	assert_non_null(strstr(out, "\ncachescope_budget_alloc_traced_share 0.250\n"));
	assert_non_null(strstr(out, "\ncachescope_budget_free_traced_share 1.000\n"));
	free(out);
	m.duty.frees = true;
	out = render(&m, &ks);
	assert_non_null(strstr(out, "\ncachescope_budget_alloc_traced_share 0.250\n"));
	assert_non_null(strstr(out, "\ncachescope_budget_free_traced_share 0.250\n"));
	assert_non_null(strstr(out, "\ncachescope_budget_kmalloc_held 0\n"));
	free(out);
	/* kmalloc's program held attached while the allocs cycle */
	m.duty.kmalloc_held = true;
	out = render(&m, &ks);
	assert_non_null(strstr(out, "\ncachescope_budget_kmalloc_held 1\n"));
	free(out);
	/* not cycling at all: nothing held */
	m.duty.shift = 0;
	out = render(&m, &ks);
	assert_non_null(strstr(out, "\ncachescope_budget_kmalloc_held 0\n"));
	free(out);
}

/* Anomalous keys by name, only with detail: the same key, command,
 * container and pattern of several processes is one series (bytes
 * summed, the earliest start), bounded with the rest counted; the reason
 * a fixed phrase; no pid. */
static void metrics_render__anomalies__named_merged_bounded(void **state)
{
	struct metrics_anomalies ma = { 0 };
	struct metrics_keys ks = { 0 };
	struct metrics_detail det = { .live = &ks, .anomalies = &ma };
	struct metrics_anomaly a = { .domain = "slab", .key = "filp", .comm = "nginx",
				     .container = "web-1", .pattern = "leak",
				     .reason = "objects older than their lifetimes keep growing and are not freed",
				     .live_bytes = 1000, .start_time_s = 1800000100 };
	struct metrics m;
	char name[32], *out;
	size_t len;
	int i;

	(void)state;
	sample(&m);
	metrics_anomalies_add(&ma, &a);
	a.live_bytes = 500;
	a.start_time_s = 1800000050;	/* another nginx, earlier */
	metrics_anomalies_add(&ma, &a);
	snprintf(a.comm, sizeof(a.comm), "ev\x1bil");
	a.live_bytes = 10;
	metrics_anomalies_add(&ma, &a);
	for (i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "cache-%d", i);
		snprintf(a.key, sizeof(a.key), "%s", name);
		a.live_bytes = i;
		metrics_anomalies_add(&ma, &a);
	}
	metrics_anomalies_finish(&ma, METRICS_MAX_ANOMALIES);
	assert_int_equal(ma.n, METRICS_MAX_ANOMALIES);
	assert_int_equal(ma.omitted, 102 - METRICS_MAX_ANOMALIES);
	assert_int_equal(metrics_render(&m, &det, &out, &len), 0);
	assert_non_null(strstr(out, "\ncachescope_anomaly_live_bytes{domain=\"slab\",key=\"filp\",comm=\"nginx\","
				    "container=\"web-1\",pattern=\"leak\",reason=\"objects older than their lifetimes keep growing and are not freed\"} 1500\n"));
	assert_non_null(strstr(out, "\ncachescope_anomaly_start_time_seconds{domain=\"slab\",key=\"filp\",comm=\"nginx\","
				    "container=\"web-1\",pattern=\"leak\",reason=\"objects older than their lifetimes keep growing and are not freed\"} 1800000050.000\n"));
	assert_non_null(strstr(out, "comm=\"ev\\\\x1bil\""));
	assert_int_equal(count(out, "\ncachescope_anomaly_live_bytes{"), METRICS_MAX_ANOMALIES);
	assert_non_null(strstr(out, "\ncachescope_anomalies_omitted 38\n"));
	assert_null(strstr(out, "pid"));
	free(out);
	/* without detail: none of it */
	det.anomalies = NULL;
	assert_int_equal(metrics_render(&m, &det, &out, &len), 0);
	assert_null(strstr(out, "cachescope_anomaly_live_bytes"));
	free(out);
	metrics_anomalies_release(&ma);
}

/* Per-key counters never fall (a process's exit takes nothing away), the
 * busiest lately come first, and past the table's bound the rest sum
 * under "(others)". */
static void metrics_totals__busiest_lately_first_bounded(void **state)
{
	struct metrics_totals t = { 0 };
	const struct metrics_total *top[4];
	char name[32];
	size_t n;
	int i;

	(void)state;
	metrics_totals_add(&t, "slab", "filp", 100, 90, 0, 0);
	metrics_totals_add(&t, "page", "data.db", 50, 50, 7, 0);
	metrics_totals_add(&t, "slab", "dentry", 10, 10, 0, 0);
	/* a minute later, dentry is the busy one; filp's old counts decayed */
	metrics_totals_add(&t, "slab", "dentry", 30, 30, 0, 60ull * 1000000000);
	metrics_totals_add(&t, "slab", "filp", 0, 0, 0, 60ull * 1000000000);
	n = metrics_totals_top(&t, 60ull * 1000000000, top, 2);
	assert_int_equal(n, 2);
	assert_string_equal(top[0]->key, "dentry");
	assert_int_equal(top[0]->allocs, 40);
	assert_int_equal(top[0]->frees, 40);
	assert_string_equal(top[1]->key, "filp");
	assert_int_equal(top[1]->allocs, 100);
	for (i = 0; i < METRICS_TOTALS_MAX + 100; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		metrics_totals_add(&t, "page", name, 1, 0, 0, 61ull * 1000000000);
	}
	assert_true(t.n <= METRICS_TOTALS_MAX);
	{
		uint64_t sum = 0;
		size_t k;

		for (k = 0; k < t.n; k++)
			if (!strcmp(t.v[k].domain, "page"))
				sum += t.v[k].allocs;
		assert_int_equal(sum, 50 + METRICS_TOTALS_MAX + 100);	/* nothing lost */
	}
	metrics_totals_release(&t);
}

/* /proc/self as the daemon reads it: this process's own figures. */
static void metrics_process_read__self__plausible(void **state)
{
	struct metrics_process p;

	(void)state;
	assert_int_equal(metrics_process_read(&p, "/proc/self", 1000), 0);
	assert_true(p.ok);
	assert_true(p.resident_bytes > 0 && p.virtual_bytes >= p.resident_bytes);
	assert_true(p.open_fds >= 3);
	assert_true(p.start_time_s > 1000);
	assert_int_equal(metrics_process_read(&p, "/proc/no-such", 0), -ENOENT);
	assert_false(p.ok);
}

/* The real parser, where Debian's prometheus package is installed. */
static void metrics_render__output__promtool_accepts(void **state)
{
	struct metrics_keys ks = { 0 };
	char path[] = "/tmp/cs-metrics-XXXXXX", cmd[128];
	struct metrics m;
	char *out;
	FILE *f;
	int fd;

	(void)state;
	if (system("command -v promtool >/dev/null 2>&1")) {
		skip();
		return;
	}
	sample(&m);
	metrics_keys_add(&ks, "page", "a\"b\\c\nd\xff", 3, 12288);
	metrics_keys_add(&ks, "slab", "kmalloc-64", -2, -128);
	metrics_keys_finish(&ks, METRICS_MAX_KEYS);
	out = render(&m, &ks);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(out, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s", path);
	assert_int_equal(system(cmd), 0);
	unlink(path);
	free(out);
	metrics_keys_release(&ks);
}

static void metrics_parse_addr__forms__parsed_or_refused(void **state)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *a = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;

	(void)state;
	assert_int_equal(metrics_parse_addr("9464", &ss, &len), 0);
	assert_int_equal(a->sin_family, AF_INET);
	assert_int_equal(ntohs(a->sin_port), 9464);
	assert_int_equal(ntohl(a->sin_addr.s_addr), INADDR_LOOPBACK);
	assert_int_equal(metrics_parse_addr("0.0.0.0:80", &ss, &len), 0);
	assert_int_equal(a->sin_addr.s_addr, 0);
	assert_int_equal(ntohs(a->sin_port), 80);
	assert_int_equal(len, sizeof(struct sockaddr_in));
	assert_int_equal(metrics_parse_addr("[::1]:9464", &ss, &len), 0);
	assert_int_equal(a6->sin6_family, AF_INET6);
	assert_int_equal(ntohs(a6->sin6_port), 9464);
	assert_int_equal(len, sizeof(struct sockaddr_in6));
	assert_int_equal(metrics_parse_addr("", &ss, &len), -EINVAL);
	assert_int_equal(metrics_parse_addr("65536", &ss, &len), -EINVAL);
	assert_int_equal(metrics_parse_addr("-1", &ss, &len), -EINVAL);
	assert_int_equal(metrics_parse_addr("localhost:9464", &ss, &len), -EINVAL);
	assert_int_equal(metrics_parse_addr("127.0.0.1:", &ss, &len), -EINVAL);
	assert_int_equal(metrics_parse_addr("127.0.0.1:94x", &ss, &len), -EINVAL);
	assert_int_equal(metrics_parse_addr("::1:9464", &ss, &len), -EINVAL);
	assert_int_equal(metrics_parse_addr("[::1]9464", &ss, &len), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(metrics_render__counters__total_suffix_help_and_type),
		cmocka_unit_test(metrics_escape__quote_backslash_newline__per_format),
		cmocka_unit_test(metrics_escape__invalid_utf8_and_controls__hex_text),
		cmocka_unit_test(metrics_render__label_values__escaped),
		cmocka_unit_test(metrics_keys_finish__same_key_many_processes__summed_empty_dropped),
		cmocka_unit_test(metrics_render__many_keys__bounded_rest_counted),
		cmocka_unit_test(metrics_render__output__promtool_accepts),
		cmocka_unit_test(metrics_render__bpf_stats_off__no_run_time_gauge_says_so),
		cmocka_unit_test(metrics_render__sampling_in_time__alloc_and_free_shares),
		cmocka_unit_test(metrics_render__anomalies__named_merged_bounded),
		cmocka_unit_test(metrics_totals__busiest_lately_first_bounded),
		cmocka_unit_test(metrics_process_read__self__plausible),
		cmocka_unit_test(metrics_parse_addr__forms__parsed_or_refused),
	};

	return cmocka_run_group_tests_name("metrics", tests, NULL, NULL);
}
