// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of cachescoped's command line (daemon/args.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "../daemon/args.h"

#define ARGV(...) ((char *[]){ "cachescoped", __VA_ARGS__, NULL })
#define ARGC(...) ((int)(sizeof((char *[]){ "cachescoped", __VA_ARGS__ }) / sizeof(char *)))
#define PARSE(env, ...) args_parse(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), (env))

/* The service's options file (tools/systemd/cachescoped.default, installed
 * as /etc/default/cachescoped) holds options the daemon takes: split as
 * systemd splits $CACHESCOPED_OPTS (on white space), parsed, and what it
 * says is what the daemon gets. */
static void args_parse__service_defaults_file__parsed(void **state)
{
	char line[1024], *argv[64], *opts = NULL, *save, *w;
	FILE *f = fopen("tools/systemd/cachescoped.default", "r");
	struct env env;
	int argc = 0;

	(void)state;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "CACHESCOPED_OPTS=\"", 18))
			opts = strdup(line + 18);
	fclose(f);
	assert_non_null(opts);
	*strchr(opts, '"') = 0;
	argv[argc++] = "cachescoped";
	for (w = strtok_r(opts, " ", &save); w && argc < 63; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	env_defaults(&env);
	assert_int_equal(args_parse(argc, argv, &env), 0);
	assert_string_equal(env.metrics_addr, "127.0.0.1:10422");
	assert_string_equal(env.csv_path, "/var/lib/cachescope/cachescope.csv");
	assert_int_equal(env.csv_max_mb, 256);
	assert_int_equal(env.csv_keep, 4);
	assert_int_equal(env.interval_s, 300);
	free(opts);
}

static void args_parse__no_options__defaults(void **state)
{
	struct env env;
	char *argv[] = { "cachescoped", NULL };

	(void)state;
	env_defaults(&env);
	assert_int_equal(args_parse(1, argv, &env), 0);
	assert_int_equal(env.window_ms, 100);
	assert_int_equal(env.duration_s, 0);
	assert_int_equal(env.npids, 0);
	assert_null(env.csv_path);
	assert_string_equal(env.socket_path, ENV_DEFAULT_SOCKET);
	assert_int_equal(env.tp_mode, TP_AUTO);
}

static void args_parse__all_options__stored(void **state)
{
	struct env env;

	(void)state;
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--duration", "5", "--window-ms", "250",
			       "--pid", "10", "-p", "11", "--comm", "kvref",
			       "--csv", "/tmp/x.csv", "--socket", "none",
			       "--ring-kb", "1024", "--tracepoints", "classic",
			       "--top", "3", "--bpf-stats", "-v", "-v"), 0);
	assert_int_equal(env.duration_s, 5);
	assert_int_equal(env.window_ms, 250);
	assert_int_equal(env.npids, 2);
	assert_int_equal(env.pids[0], 10);
	assert_int_equal(env.pids[1], 11);
	assert_string_equal(env.comm, "kvref");
	assert_string_equal(env.csv_path, "/tmp/x.csv");
	assert_null(env.socket_path);
	assert_int_equal(env.ring_kb, 1024);
	assert_int_equal(env.tp_mode, TP_CLASSIC);
	assert_int_equal(env.top, 3);
	assert_true(env.bpf_stats);
	assert_int_equal(env.verbose, 2);
}

static void args_parse__bad_numbers__einval(void **state)
{
	struct env env;

	(void)state;
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--window-ms", "5"), -EINVAL);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--window-ms", "100ms"), -EINVAL);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--duration", "abc"), -EINVAL);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--duration", "0"), -EINVAL);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--duration", "99999999999999999999"), -EINVAL);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--pid", "-1"), -EINVAL);
	env_defaults(&env);	/* a tree needs its root */
	assert_int_equal(PARSE(&env, "--pid-tree"), -EINVAL);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--pid-tree", "--pid", "7"), 0);
	assert_true(env.pid_tree);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--ring-kb", "100"), -EINVAL);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--ring-kb", "32"), -EINVAL);
}

static void args_parse__bad_words__einval(void **state)
{
	struct env env;

	(void)state;
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--comm", "a-name-longer-than-15"), -EINVAL);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--tracepoints", "kprobe"), -EINVAL);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--csv", ""), -EINVAL);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "stray"), -EINVAL);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--no-such-option"), -EINVAL);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--workload", "thrash", "--workload-backend", "rocm"), -EINVAL);
	env_defaults(&env);	/* a backend without a workload to run on it */
	assert_int_equal(PARSE(&env, "--workload-backend", "cuda"), -EINVAL);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--gpu-probes", "kernels"), -EINVAL);
}

static void args_parse__gpu_probes__batch_by_default(void **state)
{
	struct env env;

	(void)state;
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--duration", "5"), 0);
	assert_false(env.gpu_per_record);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--gpu-probes", "records"), 0);
	assert_true(env.gpu_per_record);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--gpu-probes", "batch"), 0);
	assert_false(env.gpu_per_record);
}

static void args_parse__interval__off_by_default_range_checked(void **state)
{
	struct env env;

	(void)state;
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--duration", "5"), 0);
	assert_int_equal(env.interval_s, 0);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--interval", "5"), 0);
	assert_int_equal(env.interval_s, 5);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--interval", "0"), -EINVAL);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--interval", "3601"), -EINVAL);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--interval", "1s"), -EINVAL);
}

/* root's probe records are always believed; --probe-user adds a user by
 * name or uid, once each, at most CS_PROBE_UIDS - 1 of them */
static void args_parse__probe_user__root_first_names_and_uids(void **state)
{
	struct env env;

	(void)state;
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--duration", "5"), 0);
	assert_int_equal(env.nprobe_uids, 1);
	assert_int_equal(env.probe_uids[0], 0);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--probe-user", "nobody", "--probe-user", "1000",
			       "--probe-user", "65534", "--probe-user", "root"), 0);
	assert_int_equal(env.nprobe_uids, 3);
	assert_int_equal(env.probe_uids[0], 0);
	assert_int_equal(env.probe_uids[1], 65534);
	assert_int_equal(env.probe_uids[2], 1000);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--probe-user", "no-such-user-here"), -EINVAL);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--probe-user", ""), -EINVAL);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--probe-user", "-1"), -EINVAL);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--probe-user", "4294967295"), -EINVAL);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--probe-user", "1", "--probe-user", "2", "--probe-user", "3",
			       "--probe-user", "4", "--probe-user", "5", "--probe-user", "6",
			       "--probe-user", "7"), 0);
	assert_int_equal(env.nprobe_uids, CS_PROBE_UIDS);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--probe-user", "1", "--probe-user", "2", "--probe-user", "3",
			       "--probe-user", "4", "--probe-user", "5", "--probe-user", "6",
			       "--probe-user", "7", "--probe-user", "8"), -EINVAL);
}

static void args_parse__workload_on_cuda__backend_stored(void **state)
{
	struct env env;

	(void)state;
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--workload", "thrash", "--workload-backend", "cuda"), 0);
	assert_string_equal(env.workload, "thrash");
	assert_string_equal(env.workload_backend, "cuda");
	assert_int_equal(env.duration_s, 60);
}

static void args_parse__sample__power_of_two_or_auto(void **state)
{
	struct env env;

	(void)state;
	env_defaults(&env);
	assert_int_equal(env.sample_shift, -1);	/* auto */
	assert_int_equal(env.sample_budget, 50000);
	assert_int_equal(PARSE(&env, "--sample", "16", "--sample-budget", "2000"), 0);
	assert_int_equal(env.sample_shift, 4);
	assert_int_equal(env.sample_budget, 2000);
	assert_int_equal(PARSE(&env, "--sample", "1"), 0);
	assert_int_equal(env.sample_shift, 0);
	assert_int_equal(PARSE(&env, "--sample", "auto"), 0);
	assert_int_equal(env.sample_shift, -1);
	assert_int_equal(PARSE(&env, "--sample", "12"), -EINVAL);
	assert_int_equal(PARSE(&env, "--sample", "0"), -EINVAL);
	assert_int_equal(PARSE(&env, "--sample", "2048"), -EINVAL);
	assert_int_equal(PARSE(&env, "--sample-budget", "10"), -EINVAL);
	/* --sample-time: 1, 2, 4 or 8, kept as the shift */
	env_defaults(&env);
	assert_int_equal(env.sample_time_shift, 0);
	assert_true(env.sample_time_auto);	/* as --budget decides */
	assert_int_equal(PARSE(&env, "--sample-time", "4"), 0);
	assert_false(env.sample_time_auto);
	assert_int_equal(env.sample_time_shift, 2);
	assert_int_equal(PARSE(&env, "--sample-time", "8"), 0);
	assert_int_equal(env.sample_time_shift, 3);
	assert_int_equal(PARSE(&env, "--sample-time", "1"), 0);
	assert_int_equal(env.sample_time_shift, 0);
	assert_int_equal(PARSE(&env, "--sample-time", "3"), -EINVAL);
	assert_int_equal(PARSE(&env, "--sample-time", "16"), -EINVAL);
	assert_int_equal(PARSE(&env, "--sample-time", "0"), -EINVAL);
	assert_false(env.sample_time_auto);
	assert_int_equal(PARSE(&env, "--sample-time", "auto"), 0);
	assert_true(env.sample_time_auto);
	assert_int_equal(env.sample_time_shift, 0);
	/* --sample-time-frees: off by default, a flag */
	env_defaults(&env);
	assert_false(env.sample_time_frees);
	assert_int_equal(PARSE(&env, "--sample-time-frees"), 0);
	assert_true(env.sample_time_frees);
	assert_int_equal(PARSE(&env, "--sample-time-frees=1"), -EINVAL);
	/* --budget: percent of one CPU, or off */
	env_defaults(&env);
	assert_true(env.budget_pct == 25);
	assert_int_equal(PARSE(&env, "--budget", "2.5"), 0);
	assert_true(env.budget_pct == 2.5);
	assert_int_equal(PARSE(&env, "--budget", "off"), 0);
	assert_true(env.budget_pct == 0);
	assert_int_equal(PARSE(&env, "--budget", "0"), -EINVAL);
	assert_int_equal(PARSE(&env, "--budget", "-3"), -EINVAL);
	assert_int_equal(PARSE(&env, "--budget", "900"), -EINVAL);
	assert_int_equal(PARSE(&env, "--budget", "5%"), -EINVAL);
}

static void args_parse__metrics_addr__parsed_or_refused(void **state)
{
	struct env env;

	(void)state;
	env_defaults(&env);
	assert_null(env.metrics_addr);	/* opt-in */
	assert_int_equal(PARSE(&env, "--metrics-addr", "9464"), 0);
	assert_string_equal(env.metrics_addr, "9464");
	assert_int_equal(env.metrics_sa.ss_family, AF_INET);
	assert_int_equal(ntohs(((struct sockaddr_in *)&env.metrics_sa)->sin_port), 9464);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--metrics-addr", "localhost:9464"), -EINVAL);
	assert_null(env.metrics_addr);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--metrics-addr", "127.0.0.1:70000"), -EINVAL);
	/* a web config is of the endpoint: not without one */
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--web-config", "/etc/cachescope/web.yml"), -EINVAL);
	env_defaults(&env);
	assert_int_equal(PARSE(&env, "--metrics-addr", "9464", "--web-config", "w.yml"), 0);
	assert_string_equal(env.web_config, "w.yml");
}

static void args_parse__help__returns_one(void **state)
{
	struct env env;
	FILE *saved = stdout;

	(void)state;
	env_defaults(&env);
	stdout = fopen("/dev/null", "w");
	assert_int_equal(PARSE(&env, "--window-ms", "50", "--help"), 1);
	fclose(stdout);
	stdout = saved;
}

/* args_parse with its messages and help thrown away */
static int quiet_parse(int argc, char **argv, struct env *env)
{
	FILE *saved_out = stdout, *saved_err = stderr, *null = fopen("/dev/null", "w");
	int err;

	assert_non_null(null);
	stdout = stderr = null;
	err = args_parse(argc, argv, env);
	stdout = saved_out;
	stderr = saved_err;
	fclose(null);
	return err;
}

#define QUIET(env, ...) quiet_parse(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), (env))

/* argp's hidden --HANG sleeps (an hour by default) and --program-name
 * renames the daemon in its messages: neither exists (found by
 * tests/fuzz/fuzz_args: a timeout); --help, --usage and --version still
 * do, and so do their abbreviations */
static void args_parse__argp_hidden_options__einval(void **state)
{
	struct env env;

	(void)state;
	env_defaults(&env);
	assert_int_equal(QUIET(&env, "--HANG=0"), -EINVAL);
	assert_int_equal(QUIET(&env, "--HANG"), -EINVAL);
	assert_int_equal(QUIET(&env, "--program-name=evil"), -EINVAL);
	assert_int_equal(QUIET(&env, "--usage"), 1);
	assert_int_equal(QUIET(&env, "-?"), 1);
	assert_int_equal(QUIET(&env, "--he"), 1);
	assert_int_equal(QUIET(&env, "--window-ms", "50", "--usa"), 1);
	assert_int_equal(QUIET(&env, "-V"), 1);
	assert_int_equal(QUIET(&env, "--vers"), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(args_parse__no_options__defaults),
		cmocka_unit_test(args_parse__service_defaults_file__parsed),
		cmocka_unit_test(args_parse__all_options__stored),
		cmocka_unit_test(args_parse__bad_numbers__einval),
		cmocka_unit_test(args_parse__bad_words__einval),
		cmocka_unit_test(args_parse__interval__off_by_default_range_checked),
		cmocka_unit_test(args_parse__gpu_probes__batch_by_default),
		cmocka_unit_test(args_parse__workload_on_cuda__backend_stored),
		cmocka_unit_test(args_parse__probe_user__root_first_names_and_uids),
		cmocka_unit_test(args_parse__sample__power_of_two_or_auto),
		cmocka_unit_test(args_parse__metrics_addr__parsed_or_refused),
		cmocka_unit_test(args_parse__help__returns_one),
		cmocka_unit_test(args_parse__argp_hidden_options__einval),
	};

	return cmocka_run_group_tests_name("args", tests, NULL, NULL);
}
