// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Integration tests of the metrics endpoint (--metrics-addr): the real
 * daemon under kvref's leak workload, its /metrics checked by promtool (a
 * real parser), a slow scraper that must not stall the daemon, and a real
 * Prometheus server that scrapes it and answers a query for the leak.
 * curl, promtool and prometheus come from Debian's curl and prometheus
 * packages (tools/deps.sh); without them the tests are skipped.  Loopback
 * only; every wait has a deadline.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <crypt.h>
#include "helpers/harness.h"

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool have(const char *tool)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	return !system(cmd);
}

static void need_tools(void **state, const char *const *tools)
{
	need_root(state);
	for (; *tools; tools++) {
		if (!have(*tools)) {
			fprintf(stderr, "%s not installed (make test-deps): skipped\n", *tools);
			skip();
		}
	}
}

/* GET /metrics into path; curl's exit code. */
static int scrape(int port, const char *path)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "curl -sf --max-time 5 -o %s http://127.0.0.1:%d/metrics", path,
		 port);
	return run_cmd(cmd, NULL, 0);
}

/* The value of the sample named exactly series ("name{labels}"), or -1. */
static double sample_of(const char *path, const char *series)
{
	char line[MAX_LINE];
	size_t n = strlen(series);
	double v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, series, n) && line[n] == ' ')
			v = strtod(line + n + 1, NULL);
	fclose(f);
	return v;
}

static void start_with_metrics(struct daemon *d, const char *name, int secs, int port,
			       char *addr, size_t n, const char *web_config)
{
	const char *extra[] = { "--workload", "leak", "--metrics-addr", addr,
				web_config ? "--web-config" : NULL, web_config, NULL };

	snprintf(addr, n, "127.0.0.1:%d", port);
	daemon_start(d, name, secs, extra);
}

/* Every scrape parses; the leak shows once kvref's leak phase had time. */
static void metrics__leak_workload__promtool_passes_and_leak_shows(void **state)
{
	const char *tools[] = { "curl", "promtool", NULL };
	char path[300], cmd[600], out[4096], addr[64];
	double leak_vec = -1, leak_keys = -1;
	int port, scrapes = 0;
	struct daemon d;
	long end;

	need_tools(state, tools);
	port = free_port();
	start_with_metrics(&d, "metrics", 25, port, addr, sizeof(addr), NULL);
	snprintf(path, sizeof(path), "%s/metrics.txt", tmpdir);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s 2>&1", path);
	/* up as soon as the control socket is */
	assert_int_equal(scrape(port, path), 0);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	assert_true(sample_of(path, "cachescope_build_info{version=\"0.1\"}") == 1);
	for (end = now_ms() + 22000; now_ms() < end; sleep_ms(500)) {
		assert_int_equal(scrape(port, path), 0);
		scrapes++;
		if (run_cmd(cmd, out, sizeof(out)))
			fail_msg("promtool: %s", out);
		leak_vec = sample_of(path, "cachescope_vectors_total{label=\"leak\"}");
		leak_keys = sample_of(path, "cachescope_anomalous_keys{label=\"leak\"}");
		if (leak_vec > 0 && leak_keys > 0)
			break;
	}
	assert_true(leak_vec > 0);
	assert_true(leak_keys > 0);
	assert_true(sample_of(path, "cachescope_events_consumed_total") > 0);
	/* a key of kvref's pool, summed over its processes, and slab caches
	 * one by one: root scrapes, and root may read /proc/slabinfo */
	assert_true(count_in_file(path, "cachescope_live_bytes{domain=\"kv\",key=\"kv") >= 1);
	assert_true(count_in_file(path, "cachescope_live_bytes{domain=\"slab\",key=\"") > 1);
	/* another user gets one sum a domain: no cache, file or pool named */
	snprintf(cmd, sizeof(cmd), "setpriv --reuid=65534 --regid=65534 --clear-groups "
		 "curl -sf --max-time 5 http://127.0.0.1:%d/metrics > %s/nobody.txt", port, tmpdir);
	assert_int_equal(run_cmd(cmd, NULL, 0), 0);
	snprintf(path, sizeof(path), "%s/nobody.txt", tmpdir);
	assert_int_equal(count_in_file(path, "cachescope_live_bytes{domain=\"slab\",key=\"\"}"), 1);
	assert_int_equal(count_in_file(path, "cachescope_live_bytes{domain=\"slab\""), 1);
	assert_int_equal(count_in_file(path, "cachescope_live_bytes{domain=\"kv\",key=\"kv"), 0);
	assert_true(sample_of(path, "cachescope_events_consumed_total") > 0);
	snprintf(path, sizeof(path), "%s/metrics.txt", tmpdir);
	/* counted as answered, and only /metrics is served */
	assert_true(sample_of(path, "cachescope_scrapes_total") >= scrapes);
	snprintf(cmd, sizeof(cmd), "curl -s -o /dev/null -w '%%{http_code}' http://127.0.0.1:%d/x",
		 port);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	assert_string_equal(out, "404");
	assert_int_equal(daemon_wait(&d), 0);
}

/* Idle connections fill the endpoint: they are dropped at the timeout and
 * the daemon's windows close meanwhile (the control socket says). */
static void metrics__idle_scrapers__ingest_goes_on_then_served(void **state)
{
	const char *tools[] = { "curl", NULL };
	char path[300], cmd[600], out[8192], addr[64];
	struct sockaddr_in a = { .sin_family = AF_INET };
	unsigned long w1 = 0, w2 = 0;
	int fds[16], i, port, rc = -1;
	struct daemon d;
	const char *p;
	long end;

	need_tools(state, tools);
	port = free_port();
	start_with_metrics(&d, "idle", 40, port, addr, sizeof(addr), NULL);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(port);
	for (i = 0; i < 16; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM, 0);
		assert_true(fds[i] >= 0);
		assert_int_equal(connect(fds[i], (struct sockaddr *)&a, sizeof(a)), 0);
		/* half a request, never finished */
		assert_int_equal(write(fds[i], "GET /metr", 9), 9);
	}
	snprintf(cmd, sizeof(cmd), "%s/cachescope --socket %s stats", build, d.sock);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	p = strstr(out, "\nwindows ");
	assert_non_null(p);
	w1 = strtoul(p + 9, NULL, 10);
	for (end = now_ms() + 5000; now_ms() < end && w2 <= w1; sleep_ms(100)) {
		assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
		p = strstr(out, "\nwindows ");
		assert_non_null(p);
		w2 = strtoul(p + 9, NULL, 10);
	}
	assert_true(w2 > w1);	/* the held connections stall nothing */
	/* past the 5 s idle timeout they are gone and a scrape is answered */
	snprintf(path, sizeof(path), "%s/idle.txt", tmpdir);
	for (end = now_ms() + 20000; now_ms() < end && rc; sleep_ms(250))
		rc = scrape(port, path);
	assert_int_equal(rc, 0);
	assert_true(sample_of(path, "cachescope_events_produced_total") > 0);
	for (i = 0; i < 16; i++)
		close(fds[i]);
	assert_int_equal(kill(d.pid, SIGTERM), 0);
	assert_int_equal(daemon_wait(&d), 0);
}

/* A real Prometheus server scrapes the daemon every second, over TLS and
 * as a --web-config user (its password's bcrypt hash made here), and
 * answers a query for the leak series through its HTTP API, and one for a
 * pool's own series, which only such a user is shown. */
static void metrics__prometheus_server__answers_leak_query(void **state)
{
	const char *tools[] = { "curl", "prometheus", NULL };
	char conf[300], data[300], log[300], web[300], addr[64], cmd[1024], out[8192];
	char salt[CRYPT_GENSALT_OUTPUT_SIZE];
	struct crypt_data cd = { 0 };
	int port, pport, st;
	struct daemon d;
	bool found = false;
	pid_t prom;
	FILE *f;
	long end;

	need_tools(state, tools);
	port = free_port();
	pport = free_port();
	if (!have("openssl")) {
		fprintf(stderr, "openssl not installed (make test-deps): skipped\n");
		skip();
	}
	snprintf(web, sizeof(web), "%s/web.yml", tmpdir);
	snprintf(cmd, sizeof(cmd),
		 "cd %s && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
		 "-keyout tls.key -out tls.crt -days 1 -subj /CN=127.0.0.1 "
		 "-addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1 && chmod 600 tls.key", tmpdir);
	assert_int_equal(run_cmd(cmd, NULL, 0), 0);
	assert_non_null(crypt_gensalt_rn("$2y$", 6, NULL, 0, salt, sizeof(salt)));
	assert_non_null(crypt_rn("s3cret pass", salt, &cd, sizeof(cd)));
	f = fopen(web, "w");
	assert_non_null(f);
	fprintf(f, "tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n"
		   "basic_auth_users:\n  prometheus: %s\n", cd.output);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(web, 0600), 0);
	snprintf(conf, sizeof(conf), "%s/prometheus.yml", tmpdir);
	snprintf(data, sizeof(data), "%s/prom-data", tmpdir);
	snprintf(log, sizeof(log), "%s/prometheus.log", tmpdir);
	f = fopen(conf, "w");
	assert_non_null(f);
	fprintf(f, "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
		   "scrape_configs:\n  - job_name: cachescope\n"
		   "    scheme: https\n    tls_config:\n      ca_file: %s/tls.crt\n"
		   "    basic_auth:\n      username: prometheus\n      password: 's3cret pass'\n"
		   "    static_configs:\n      - targets: ['127.0.0.1:%d']\n", tmpdir, port);
	fclose(f);
	start_with_metrics(&d, "prom", 45, port, addr, sizeof(addr), web);
	prom = fork();
	assert_true(prom >= 0);
	if (!prom) {
		char a1[320], a2[320], a3[64];
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(fd, 1);
		dup2(fd, 2);
		snprintf(a1, sizeof(a1), "--config.file=%s", conf);
		snprintf(a2, sizeof(a2), "--storage.tsdb.path=%s", data);
		snprintf(a3, sizeof(a3), "--web.listen-address=127.0.0.1:%d", pport);
		execlp("prometheus", "prometheus", a1, a2, a3, (char *)NULL);
		_exit(127);
	}
	/* query until the series is there with a value above 0 */
	snprintf(cmd, sizeof(cmd), "curl -s --max-time 3 'http://127.0.0.1:%d/api/v1/query' "
		 "--data-urlencode 'query=cachescope_vectors_total{label=\"leak\",job=\"cachescope\"} > 0'",
		 pport);
	for (end = now_ms() + 40000; now_ms() < end && !found; sleep_ms(500)) {
		if (run_cmd(cmd, out, sizeof(out)))
			continue;	/* not listening yet */
		found = strstr(out, "\"status\":\"success\"") &&
			strstr(out, "\"__name__\":\"cachescope_vectors_total\"") &&
			strstr(out, "\"label\":\"leak\"");
	}
	snprintf(cmd, sizeof(cmd), "curl -s --max-time 3 'http://127.0.0.1:%d/api/v1/query' "
		 "--data-urlencode 'query=cachescope_live_bytes{domain=\"kv\",key=~\"kv.+\",job=\"cachescope\"}'",
		 pport);
	if (found) {
		assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
		if (!strstr(out, "\"domain\":\"kv\""))
			fail_msg("no pool's own series through the web config user: %s", out);
	}
	kill(prom, SIGTERM);
	assert_int_equal(waitpid(prom, &st, 0), prom);
	if (!found)
		fail_msg("prometheus never answered with the leak series; last answer: %s "
			 "(its log: %s)", out, log);
	assert_int_equal(kill(d.pid, SIGTERM), 0);
	assert_int_equal(daemon_wait(&d), 0);
}

/* A port another process listens on: one line naming it, exit 1, no
 * socket left behind; a malformed address: one line, exit 2. */
static void metrics__port_taken__one_line_and_exit(void **state)
{
	const char *tools[] = { NULL };
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	char cmd[700], out[4096], want[128];
	int fd, port;

	need_tools(state, tools);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 1), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	port = ntohs(a.sin_port);
	snprintf(cmd, sizeof(cmd), "%s/cachescoped --duration 5 --socket %s/taken.sock "
		 "--metrics-addr 127.0.0.1:%d 2>&1", build, tmpdir, port);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 1);
	snprintf(want, sizeof(want), "cannot serve metrics on 127.0.0.1:%d: Address already in use\n",
		 port);
	assert_non_null(strstr(out, want));
	snprintf(cmd, sizeof(cmd), "test -e %s/taken.sock", tmpdir);
	assert_int_not_equal(run_cmd(cmd, NULL, 0), 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "%s/cachescoped --metrics-addr localhost:9464 2>&1", build);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 2);
	assert_non_null(strstr(out, "invalid --metrics-addr 'localhost:9464'"));
	assert_null(strchr(strchr(out, '\n') + 1, '\n'));	/* one line */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(metrics__leak_workload__promtool_passes_and_leak_shows),
		cmocka_unit_test(metrics__idle_scrapers__ingest_goes_on_then_served),
		cmocka_unit_test(metrics__prometheus_server__answers_leak_query),
		cmocka_unit_test(metrics__port_taken__one_line_and_exit),
	};

	/* CS_TEST_FILTER=metrics__idle* runs the tests whose names match */
	if (getenv("CS_TEST_FILTER"))
		cmocka_set_test_filter(getenv("CS_TEST_FILTER"));
	return cmocka_run_group_tests(tests, harness_setup, harness_teardown);
}
