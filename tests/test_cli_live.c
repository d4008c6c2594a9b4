// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The cachescope CLI against a real cachescoped (real BPF programs): JSON
 * that jq accepts, a leak cluster under --workload leak, export's file
 * with the daemon's own CSV header, reload and SIGHUP re-reading --rules
 * while the daemon goes on, the messages and exit codes for a daemon
 * that is not there and a caller that may not ask, and JSON errors of
 * every command under --json.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "helpers/harness.h"

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int cli(const struct daemon *d, char *out, size_t n, const char *args)
{
	char cmd[1200];

	snprintf(cmd, sizeof(cmd), "%s/cachescope --socket=%s %s", build, d->sock, args);
	return run_cmd(cmd, out, n);
}

static void first_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	assert_non_null(fgets(buf, n, f));
	fclose(f);
}

static void need_tool(void **state, const char *tool)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null", tool);
	if (run_cmd(cmd, NULL, 0)) {
		fprintf(stderr, "%s is not installed (make test-deps): skipped\n", tool);
		skip();
	}
}

/* jq passes every answer; a cluster with leak vectors shows once kvref's
 * leak phase had time; export writes the daemon's CSV header and rows. */
static void cli_live__leak_workload__json_clusters_and_export(void **state)
{
	char out[65536], path[300], args[400], mine[8192], theirs[8192];
	struct daemon d;
	const char *extra[] = { "--workload", "leak", NULL };
	bool leak = false;
	long end;

	need_root(state);
	need_tool(state, "jq");
	daemon_start(&d, "clilive", 22, extra);
	assert_int_equal(cli(&d, out, sizeof(out), "--json status | jq -e '.produced >= 0' >/dev/null"), 0);
	assert_int_equal(cli(&d, out, sizeof(out), "-j top 5 | jq -e '.keys | type == \"array\"' >/dev/null"), 0);
	for (end = now_ms() + 18000; !leak && now_ms() < end; sleep_ms(1000))
		leak = !cli(&d, out, sizeof(out), "--json clusters | jq -e "
			    "'[.clusters[] | select(.label == \"leak\" or .labels.leak > 0)] | length > 0'");
	assert_true(leak);
	assert_int_equal(cli(&d, out, sizeof(out), "--json clusters --label leak | jq -e "
			     "'.clusters | length > 0' >/dev/null"), 0);
	assert_int_equal(cli(&d, out, sizeof(out), "--json vectors --since 5 | jq -e "
			     "'[.vectors[] | select(.label == \"leak\")] | length > 0' >/dev/null"), 0);
	snprintf(path, sizeof(path), "%s/export.csv", tmpdir);
	snprintf(args, sizeof(args), "export --csv %s", path);
	assert_int_equal(cli(&d, out, sizeof(out), args), 0);
	assert_non_null(strstr(out, "wrote "));
	/* only the file itself: the temporary one was renamed */
	snprintf(args, sizeof(args), "ls -a %s | grep -c export", tmpdir);
	assert_int_equal(run_cmd(args, out, sizeof(out)), 0);
	assert_string_equal(out, "1\n");
	snprintf(args, sizeof(args), "test $(wc -l < %s) -gt 10", path);
	assert_int_equal(run_cmd(args, NULL, 0), 0);
	snprintf(args, sizeof(args), "-j export --since 2 --csv %s | jq -e '.rows > 0' >/dev/null",
		 path);
	assert_int_equal(cli(&d, out, sizeof(out), args), 0);
	assert_int_equal(daemon_wait(&d), 0);
	first_line(path, mine, sizeof(mine));
	first_line(d.csv, theirs, sizeof(theirs));
	assert_string_equal(mine, theirs);
	assert_non_null(strstr(mine, "ts,window,window_ms,domain,key,"));
}

/* reload and SIGHUP read --rules again: a broken file is refused by name
 * and the rules in force stay; the daemon goes on either way. */
static void cli_live__reload_and_sighup__rules_reread_daemon_runs(void **state)
{
	char rules[300], out[8192], cmd[600];
	const char *extra[] = { "--rules", rules, "-v", NULL };
	struct daemon d;
	long end;
	FILE *f;

	need_root(state);
	snprintf(rules, sizeof(rules), "%s/rules.conf", tmpdir);
	f = fopen(rules, "w");
	assert_non_null(f);
	fputs("# tighter leaks\nleak_min_age_s = 2\n", f);
	fclose(f);
	daemon_start(&d, "clireload", 30, extra);
	assert_int_equal(cli(&d, out, sizeof(out), "reload"), 0);
	assert_non_null(strstr(out, "rules reloaded"));
	assert_int_equal(cli(&d, out, sizeof(out), "status | grep '^rules_reloads '"), 0);
	assert_string_equal(out, "rules_reloads 1\n");
	/* a broken file: refused, named, the daemon answers on */
	f = fopen(rules, "w");
	assert_non_null(f);
	fputs("leak_min_age_s = 2\nno_such_rule = 1\n", f);
	fclose(f);
	assert_int_equal(cli(&d, out, sizeof(out), "-j reload 2>&1"), 1);
	assert_non_null(strstr(out, "\"error\":\"invalid --rules "));
	assert_non_null(strstr(out, "line 2: no such rule"));
	assert_int_equal(kill(d.pid, SIGHUP), 0);
	sleep_ms(300);
	assert_int_equal(cli(&d, out, sizeof(out), "status | grep '^rules_reloads '"), 0);
	assert_string_equal(out, "rules_reloads 1\n");
	/* fixed: SIGHUP reloads, and does not stop the daemon */
	f = fopen(rules, "w");
	assert_non_null(f);
	fputs("leak_min_age_s = 3\n", f);
	fclose(f);
	assert_int_equal(kill(d.pid, SIGHUP), 0);
	for (end = now_ms() + 5000; now_ms() < end; sleep_ms(100))
		if (!cli(&d, out, sizeof(out), "status | grep '^rules_reloads '") &&
		    !strcmp(out, "rules_reloads 2\n"))
			break;
	assert_string_equal(out, "rules_reloads 2\n");
	assert_int_equal(kill(d.pid, SIGTERM), 0);
	assert_int_equal(daemon_wait(&d), 0);
	/* once for reload, once for the first SIGHUP */
	assert_true(count_in_file(d.out, "rules not reloaded (the rules in force stay): invalid --rules") == 2);
	assert_true(count_in_file(d.out, "rules reloaded: defaults, then --rules") == 2);
	snprintf(cmd, sizeof(cmd), "grep -c 'signal 1: stopping' %s", d.out);
	assert_int_not_equal(run_cmd(cmd, NULL, 0), 0);
}

/* An unprivileged caller: told permission denied and to run as root, exit
 * 4, both where the socket's mode refuses it and where the daemon's own
 * check does; no daemon: exit 3, said so. */
static void cli_live__unprivileged_or_no_daemon__said_so(void **state)
{
	char out[8192], cmd[1200];
	struct daemon d;

	need_root(state);
	need_tool(state, "setpriv");
	snprintf(cmd, sizeof(cmd), "%s/cachescope --socket=%s/none.sock status 2>&1", build, tmpdir);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 3);
	assert_non_null(strstr(out, "cachescoped is not running"));
	snprintf(cmd, sizeof(cmd), "%s/cachescope --socket=%s/none.sock --json status", build, tmpdir);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 3);
	assert_non_null(strstr(out, "{\"error\":\"cachescoped is not running"));

	daemon_start(&d, "cliperm", 10, NULL);
	assert_int_equal(chmod(tmpdir, 0711), 0);
	snprintf(cmd, sizeof(cmd), "setpriv --reuid=nobody --regid=nogroup --clear-groups "
		 "%s/cachescope --socket=%s status 2>&1", build, d.sock);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 4);
	assert_non_null(strstr(out, "permission denied"));
	assert_non_null(strstr(out, "run cachescope as root"));
	assert_null(strstr(out, "not running"));
	/* the socket's mode let through: the daemon's SO_PEERCRED check says no */
	assert_int_equal(chmod(d.sock, 0666), 0);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 4);
	assert_non_null(strstr(out, "permission denied"));
	assert_int_equal(cli(&d, out, sizeof(out), "status | grep '^control_denied '"), 0);
	assert_string_equal(out, "control_denied 1\n");
	assert_int_equal(chmod(tmpdir, 0700), 0);
	assert_int_equal(kill(d.pid, SIGTERM), 0);
	assert_int_equal(daemon_wait(&d), 0);
}

/* Under --json every command's error is one JSON document on stdout,
 * {"error": ...}, with nothing on stderr and a non-zero exit: the
 * commands that ask the daemon (none here) and the offline ones alike. */
static void cli_json__bad_input_of_every_command__one_json_error(void **state)
{
	static const char *const bad[] = {
		"status extra", "stats extra", "clusters --label bogus", "top abc", "keys 0",
		"vectors --since x", "export", "reload extra", "bogus", "--bogus status",
		"cluster", "cluster none.csv", "cluster --eps 9 none.csv", "cluster --top 0 none.csv",
		"plot", "plot none.csv", "plot none.csv --svg out.svg", "plot --min-pts x none.csv",
	};
	char out[4096], cmd[1600];
	size_t i;

	need_tool(state, "jq");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(cmd, sizeof(cmd),
			 "e='%s/err'; out=$('%s/cachescope' --socket='%s/none.sock' --json %s 2>\"$e\"); "
			 "rc=$?; printf '%%s' \"$out\" | jq -e 'keys == [\"error\"]' >/dev/null && "
			 "[ ! -s \"$e\" ] && [ $rc -ne 0 ] || { echo \"rc=$rc out=$out\"; cat \"$e\"; exit 1; }",
			 tmpdir, build, tmpdir, bad[i]);
		if (run_cmd(cmd, out, sizeof(out)))
			fail_msg("cachescope --json %s: %s", bad[i], out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cli_live__leak_workload__json_clusters_and_export),
		cmocka_unit_test(cli_live__reload_and_sighup__rules_reread_daemon_runs),
		cmocka_unit_test(cli_live__unprivileged_or_no_daemon__said_so),
		cmocka_unit_test(cli_json__bad_input_of_every_command__one_json_error),
	};

	if (getenv("CS_TEST_FILTER"))
		cmocka_set_test_filter(getenv("CS_TEST_FILTER"));
	return cmocka_run_group_tests(tests, harness_setup, harness_teardown);
}
