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
	m->cluster_s_total = 0.25;
	metrics_named_set(&m->vectors, "normal", 40);
	metrics_named_set(&m->vectors, "leak", 5);
	metrics_named_set(&m->anomalous, "normal", 9);
	metrics_named_set(&m->anomalous, "leak", 2);
	metrics_named_set(&m->usdt_rejected, "kv_block", 1);
}

static char *render(const struct metrics *m, const struct metrics_keys *ks)
{
	size_t len;
	char *out;

	assert_int_equal(metrics_render(m, ks, &out, &len), 0);
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
	assert_non_null(strstr(out, "\ncachescope_vectors_total{label=\"leak\"} 5\n"));
	assert_non_null(strstr(out, "\ncachescope_anomalous_keys{label=\"leak\"} 2\n"));
	assert_non_null(strstr(out, "\ncachescope_usdt_rejected_total{reason=\"kv_block\"} 1\n"));
	assert_non_null(strstr(out, "\ncachescope_clustering_seconds_total 0.250000\n"));
	/* every metric has its HELP and TYPE once; counters end in _total */
	{
		char *save, *dup = strdup(out), *line;

		for (line = strtok_r(dup, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char name[128], type[16], help[160];

			if (sscanf(line, "# TYPE %127s %15s", name, type) != 2)
				continue;
			assert_true(!strncmp(name, "cachescope_", 11));
			snprintf(help, sizeof(help), "# HELP %s ", name);
			assert_int_equal(count(out, help), 1);
			if (!strcmp(type, "counter"))
				assert_string_equal(name + strlen(name) - 6, "_total");
			else
				assert_string_equal(type, "gauge");
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
		cmocka_unit_test(metrics_parse_addr__forms__parsed_or_refused),
	};

	return cmocka_run_group_tests_name("metrics", tests, NULL, NULL);
}
