// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Beyond one host: the rows of two daemons (two hosts: the second in a
 * UTS namespace of its own, named gpu-node-b, as a container's host name
 * would be, tracing a balanced program alone) go into a real ClickHouse server on loopback through the
 * shipped schema and the documented pipe (`cachescope export` into
 * `clickhouse-client ... FORMAT CSVWithNames`), and docs/fleet.md's query
 * answers which hosts have leaking keys and since when; `cachescope
 * cluster` reads both hosts' files in one run.  clickhouse-server and
 * clickhouse-client come from Debian's packages (tools/deps.sh); without
 * them the test is skipped.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "helpers/harness.h"

#define NODE_B "gpu-node-b"

/* what a failed assertion leaves running, for the teardown to stop */
static pid_t servers[4];

static void started(pid_t pid)
{
	unsigned int i;

	for (i = 0; i < 4; i++)
		if (!servers[i]) {
			servers[i] = pid;
			return;
		}
}

static int teardown(void **state)
{
	unsigned int i;

	for (i = 0; i < 4; i++)
		if (servers[i] > 0 && !kill(servers[i], SIGKILL))
			waitpid(servers[i], NULL, 0);
	return harness_teardown(state);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* docs/fleet.md's query, word for word (the test checks the doc holds it) */
#define LEAKS_QUERY \
	"SELECT host, domain, key, comm, toDateTime(toUInt32(min(ts))) AS since, " \
	"count() AS leak_vectors FROM cachescope.rows WHERE label = 'leak' " \
	"GROUP BY host, domain, key, comm ORDER BY since"

/* A ClickHouse server of its own in dir, on tcp port; its pid once it
 * answers. */
static pid_t clickhouse(const char *dir, int port)
{
	char cmd[1600];
	pid_t pid;
	long end;

	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		char a[6][400], log[400];
		int fd;

		snprintf(log, sizeof(log), "%s/clickhouse.out", dir);
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		snprintf(a[0], sizeof(a[0]), "--path=%s/data/", dir);
		snprintf(a[1], sizeof(a[1]), "--tmp_path=%s/tmp/", dir);
		snprintf(a[2], sizeof(a[2]), "--user_files_path=%s/user_files/", dir);
		snprintf(a[3], sizeof(a[3]), "--tcp_port=%d", port);
		snprintf(a[4], sizeof(a[4]), "--logger.log=%s/clickhouse.log", dir);
		snprintf(a[5], sizeof(a[5]), "--logger.errorlog=%s/clickhouse.err", dir);
		execlp("clickhouse-server", "clickhouse-server",
		       "--config-file=/etc/clickhouse-server/config.xml", "--", a[0], a[1], a[2], a[3],
		       "--http_port=0", "--interserver_http_port=0", "--listen_host=127.0.0.1",
		       "--logger.console=0", a[4], a[5], (char *)NULL);
		_exit(127);
	}
	snprintf(cmd, sizeof(cmd), "clickhouse-client --port %d --query 'SELECT 1' >/dev/null 2>&1",
		 port);
	for (end = now_ms() + 30000; now_ms() < end; sleep_ms(250))
		if (!run_cmd(cmd, NULL, 0))
			return pid;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	fail_msg("clickhouse-server did not answer within 30 s (see %s/clickhouse.out)", dir);
	return 0;
}

static void fleet__two_hosts_exports__clickhouse_answers_which_hosts_leak(void **state)
{
	char chdir[300], cmd[2000], out[8192], me[256], bsock[300], bcsv[300], bout[300], ea[300], eb[300];
	int port = free_port(), st, r, ours = 0;
	struct daemon a;
	pid_t ch, b, kid, balanced;
	long leaker = 0, end;
	const char *p;

	need_root(state);
	if (run_cmd("command -v clickhouse-server clickhouse-client unshare >/dev/null", NULL, 0)) {
		fprintf(stderr, "no clickhouse-server, clickhouse-client or unshare (make test-deps): skipped\n");
		skip();
	}
	assert_int_equal(gethostname(me, sizeof(me)), 0);
	assert_string_not_equal(me, NODE_B);
	snprintf(chdir, sizeof(chdir), "%s/clickhouse", tmpdir);
	assert_int_equal(mkdir(chdir, 0700), 0);
	ch = clickhouse(chdir, port);
	started(ch);
	/* host A traces everything: the leaker is its; host B traces a
	 * program that frees all it opens: rows, and no leak */
	balanced = fork();
	assert_true(balanced >= 0);
	started(balanced);
	if (!balanced) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		snprintf(cmd, sizeof(cmd), "%s/tests/helpers/fdchurn", build);
		execl(cmd, "fdchurn", "20", "400", "--period-ms", "50", (char *)NULL);
		_exit(127);
	}
	daemon_start(&a, "host-a", 40, NULL);
	snprintf(bsock, sizeof(bsock), "%s/host-b.sock", tmpdir);
	snprintf(bcsv, sizeof(bcsv), "%s/host-b.csv", tmpdir);
	snprintf(bout, sizeof(bout), "%s/host-b.out", tmpdir);
	b = fork();
	assert_true(b >= 0);
	started(b);
	if (!b) {
		int fd = open(bout, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(fd, 1);
		dup2(fd, 2);
		snprintf(cmd, sizeof(cmd), "hostname %s && exec '%s/cachescoped' --duration 40 --pid %d "
			 "--socket '%s' --csv '%s' --top 0", NODE_B, build, (int)balanced, bsock, bcsv);
		execlp("unshare", "unshare", "--uts", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	for (end = now_ms() + 15000; now_ms() < end && !socket_up(bsock); sleep_ms(100))
		;
	assert_true(socket_up(bsock));
	/* 8 s of 10 descriptors kept of every 50 opened */
	kid = fork();
	assert_true(kid >= 0);
	if (!kid) {
		snprintf(cmd, sizeof(cmd), "%s/tests/helpers/fdchurn", build);
		snprintf(ea, sizeof(ea), "%s/leaker.out", tmpdir);
		r = open(ea, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(r, 1);
		execl(cmd, "fdchurn", "50", "80", "--keep", "10", "--period-ms", "100", (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(kid, &st, 0), kid);
	snprintf(ea, sizeof(ea), "%s/leaker.out", tmpdir);
	{
		FILE *f = fopen(ea, "r");

		assert_non_null(f);
		assert_int_equal(fscanf(f, "pid %ld", &leaker), 1);
		fclose(f);
	}
	/* each host's rows: the export, then the documented pipe */
	snprintf(ea, sizeof(ea), "%s/export-a.csv", tmpdir);
	snprintf(eb, sizeof(eb), "%s/export-b.csv", tmpdir);
	snprintf(cmd, sizeof(cmd), "'%s/cachescope' --socket '%s' export --csv '%s' && "
		 "'%s/cachescope' --socket '%s' export --csv '%s'", build, a.sock, ea, build, bsock, eb);
	assert_int_equal(run_cmd(cmd, NULL, 0), 0);
	snprintf(cmd, sizeof(cmd), "clickhouse-client --port %d --multiquery < tools/clickhouse/schema.sql && "
		 "clickhouse-client --port %d --query 'INSERT INTO cachescope.rows FORMAT CSVWithNames' < '%s' && "
		 "clickhouse-client --port %d --query 'INSERT INTO cachescope.rows FORMAT CSVWithNames' < '%s' 2>&1",
		 port, port, ea, port, eb);
	if (run_cmd(cmd, out, sizeof(out)))
		fail_msg("loading the exports failed: %s", out);
	snprintf(cmd, sizeof(cmd), "clickhouse-client --port %d --query \"SELECT host, count() FROM cachescope.rows "
		 "GROUP BY host ORDER BY host FORMAT TSV\"", port);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	assert_non_null(strstr(out, NODE_B "\t"));
	assert_non_null(strstr(out, me));
	/* the question, in one query */
	snprintf(cmd, sizeof(cmd), "clickhouse-client --port %d --query \"" LEAKS_QUERY " FORMAT TSV\"", port);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	fprintf(stderr, "%s", out);
	for (p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		char host[256], domain[16], key[64], comm[32];

		if (sscanf(p, "%255[^\t]\t%15[^\t]\t%63[^\t]\t%31[^\t]", host, domain, key, comm) != 4)
			continue;
		/* host B traced the balanced program alone: no leak there */
		assert_string_not_equal(host, NODE_B);
		ours += !strcmp(host, me) && !strcmp(comm, "fdchurn") &&
			(!strcmp(key, "filp") || !strcmp(key, "dentry"));
	}
	assert_true(ours > 0);
	/* the docs hold the query the test asked */
	assert_int_equal(count_in_file("docs/fleet.md", LEAKS_QUERY), 1);
	/* the offline clustering reads both hosts' files in one run */
	snprintf(cmd, sizeof(cmd), "'%s/cachescope' cluster '%s' '%s'", build, ea, eb);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "2 files, hosts "));
	assert_non_null(strstr(out, NODE_B));
	kill(ch, SIGTERM);
	assert_int_equal(waitpid(ch, &st, 0), ch);
	kill(balanced, SIGKILL);
	waitpid(balanced, NULL, 0);
	memset(servers, 0, sizeof(servers));
	kill(a.pid, SIGTERM);
	assert_int_equal(daemon_wait(&a), 0);
	kill(b, SIGTERM);
	assert_int_equal(waitpid(b, &st, 0), b);
	assert_true(WIFEXITED(st) && !WEXITSTATUS(st));
	/* a daemon started by the harness stops with the test's failure
	 * too: its duration bounds it */
	(void)leaker;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fleet__two_hosts_exports__clickhouse_answers_which_hosts_leak),
	};

	return cmocka_run_group_tests(tests, harness_setup, teardown);
}
