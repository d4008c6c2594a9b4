// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Integration tests of the metrics endpoint (--metrics-addr) and what an
 * operator builds on it: the real daemon under kvref's leak workload, its
 * /metrics checked by promtool (a real parser), a slow scraper that must
 * not stall the daemon, a real Prometheus server that scrapes it and
 * answers a query for the leak; a leaking program's key by name in a
 * scrape and its start and end in the journal's form; the shipped rule
 * file under promtool; and the loop end to end: Prometheus evaluating the
 * shipped rules, a real Alertmanager, a webhook receiver getting the leak
 * alert and its resolve.  curl, promtool, prometheus and
 * prometheus-alertmanager come from Debian's packages (tools/deps.sh);
 * without them the tests are skipped.  Loopback only; every wait has a
 * deadline.
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
		leak_vec = sample_of(path, "cachescope_vectors_total{pattern=\"leak\"}");
		leak_keys = sample_of(path, "cachescope_anomalous_keys{pattern=\"leak\"}");
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
		 "--data-urlencode 'query=cachescope_vectors_total{pattern=\"leak\",job=\"cachescope\"} > 0'",
		 pport);
	for (end = now_ms() + 40000; now_ms() < end && !found; sleep_ms(500)) {
		if (run_cmd(cmd, out, sizeof(out)))
			continue;	/* not listening yet */
		found = strstr(out, "\"status\":\"success\"") &&
			strstr(out, "\"__name__\":\"cachescope_vectors_total\"") &&
			strstr(out, "\"pattern\":\"leak\"");
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

/* ---- anomalies by name, in the journal, and alerted on ---- */

/* The shipped rule file: promtool's check, and its unit tests over
 * series as the daemon exports them (tests/prometheus/). */
static void rules__shipped__promtool_check_and_unit_tests_pass(void **state)
{
	const char *tools[] = { "promtool", NULL };
	char out[8192];

	need_tools(state, tools);
	if (run_cmd("promtool check rules tools/prometheus/cachescope.rules.yml 2>&1", out, sizeof(out)))
		fail_msg("promtool check rules: %s", out);
	assert_non_null(strstr(out, "SUCCESS: 5 rules found"));
	if (run_cmd("promtool test rules tests/prometheus/cachescope.rules.test.yml 2>&1", out, sizeof(out)))
		fail_msg("promtool test rules: %s", out);
	assert_non_null(strstr(out, "SUCCESS"));
}

/* Start the daemon with metrics on port and stderr as the journal sees
 * it: JOURNAL_STREAM names the output file's device and inode, as systemd
 * names its stream's, so the daemon writes syslog priorities. */
static void start_as_service(struct daemon *d, const char *name, int secs, int port, char *addr,
			     size_t n)
{
	const char *extra[] = { "--metrics-addr", addr, NULL };
	char out[300], js[64];
	struct stat st;
	int fd;

	snprintf(addr, n, "127.0.0.1:%d", port);
	/* the harness truncates the file it names: made first, the same inode */
	snprintf(out, sizeof(out), "%s/%s.out", tmpdir, name);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	close(fd);
	snprintf(js, sizeof(js), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", js, 1);
	daemon_start(d, name, secs, extra);
	unsetenv("JOURNAL_STREAM");
}

/* A line of path that begins with head and holds needle, or NULL (into
 * buf). */
static const char *line_with(const char *path, const char *head, const char *needle, char *buf,
			     size_t n)
{
	FILE *f = fopen(path, "r");
	const char *found = NULL;

	if (!f)
		return NULL;
	while (!found && fgets(buf, (int)n, f))
		if (!strncmp(buf, head, strlen(head)) && strstr(buf, needle))
			found = buf;
	fclose(f);
	return found;
}

/*
 * A program leaking file descriptors amid churn: a scrape shows the key
 * by name (domain, key, comm, pattern, the reason's fixed phrase, its
 * live bytes and start time); the journal gets one warning line when it
 * starts and one notice when it ends, with the key, the process and the
 * reason, as journald reads priorities ("<4>", "<5>").
 */
static void metrics__leaking_program__anomalous_key_by_name_and_journal_lines(void **state)
{
	const char *tools[] = { "curl", NULL };
	char addr[64], path[300], cmd[600], out[512], line[2048], want[128];
	struct daemon d;
	bool named = false;
	long end, pid;
	pid_t kid;
	int st;

	need_tools(state, tools);
	start_as_service(&d, "byname", 45, free_port(), addr, sizeof(addr));
	kid = fork();
	assert_true(kid >= 0);
	if (!kid) {
		int fd;

		snprintf(cmd, sizeof(cmd), "%s/tests/helpers/fdchurn", build);
		snprintf(path, sizeof(path), "%s/leaker.pid", tmpdir);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		execl(cmd, "fdchurn", "50", "150", "--keep", "10", "--period-ms", "100", (char *)NULL);
		_exit(127);
	}
	snprintf(path, sizeof(path), "%s/byname.txt", tmpdir);
	for (end = now_ms() + 25000; now_ms() < end && !named; sleep_ms(500)) {
		snprintf(cmd, sizeof(cmd), "curl -sf --max-time 5 -o %s http://%s/metrics", path, addr);
		if (run_cmd(cmd, NULL, 0))
			continue;
		named = count_in_file(path, "cachescope_anomaly_live_bytes{domain=\"slab\",key=\"filp\",comm=\"fdchurn\",container=\"\",pattern=\"leak\",reason=\"objects older than their lifetimes keep growing and are not freed\"} ") == 1;
	}
	if (!named)
		fail_msg("no anomaly series of fdchurn's filp within 25 s (last scrape: %s)", path);
	assert_int_equal(count_in_file(path, "cachescope_anomaly_start_time_seconds{domain=\"slab\",key=\"filp\",comm=\"fdchurn\""), 1);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s 2>&1", path);
	if (have("promtool") && run_cmd(cmd, out, sizeof(out)))
		fail_msg("promtool: %s", out);
	kill(kid, SIGTERM);
	assert_int_equal(waitpid(kid, &st, 0), kid);
	snprintf(path, sizeof(path), "%s/leaker.pid", tmpdir);
	{
		FILE *f = fopen(path, "r");

		assert_non_null(f);
		assert_int_equal(fscanf(f, "pid %ld", &pid), 1);
		fclose(f);
	}
	/* its key leaves the table within a collection (6.4 s): the end */
	snprintf(want, sizeof(want), "filp of pid %ld (fdchurn)", pid);
	for (end = now_ms() + 20000; now_ms() < end; sleep_ms(250))
		if (line_with(d.out, "<5>leak ends after ", want, line, sizeof(line)))
			break;
	assert_int_equal(kill(d.pid, SIGTERM), 0);
	assert_int_equal(daemon_wait(&d), 0);
	if (!line_with(d.out, "<4>leak starts: slab ", want, line, sizeof(line)))
		fail_msg("no '<4>leak starts: slab %s' line in %s", want, d.out);
	assert_non_null(strstr(line, ": leak: filp "));	/* the reason, with its numbers */
	fprintf(stderr, "%s", line);
	if (!line_with(d.out, "<5>leak ends after ", want, line, sizeof(line)))
		fail_msg("no '<5>leak ends after ... %s' line in %s", want, d.out);
	fprintf(stderr, "%s", line);
	/* the rest of its output is the journal's too: no program-name prefix */
	assert_int_equal(count_in_file(d.out, "cachescoped: warning: "), 0);
}

/* A webhook receiver on loopback: a child that answers each POST 200 and
 * appends its body, one line, to path; its pid. */
static pid_t webhook(int port, const char *path)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	pid_t pid;

	assert_true(lfd >= 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)port);
	assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(lfd, 8), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid) {
		close(lfd);
		return pid;
	}
	for (;;) {
		static char buf[1 << 20];
		int fd = accept(lfd, NULL, NULL);
		size_t have = 0;

		if (fd < 0)
			continue;
		/* requests one after the other on the connection (keep-alive) */
		for (;;) {
			char *hend, *cl;
			size_t body, need;
			ssize_t k;
			FILE *f;

			while (!(hend = memmem(buf, have, "\r\n\r\n", 4)) && have < sizeof(buf) &&
			       (k = read(fd, buf + have, sizeof(buf) - have)) > 0)
				have += (size_t)k;
			if (!hend)
				break;
			*hend = 0;
			cl = strcasestr(buf, "content-length:");
			body = cl ? strtoul(cl + 15, NULL, 10) : 0;
			need = (size_t)(hend + 4 - buf) + body;
			while (have < need && have < sizeof(buf) &&
			       (k = read(fd, buf + have, sizeof(buf) - have)) > 0)
				have += (size_t)k;
			if (have < need)
				break;
			f = fopen(path, "a");
			if (f) {
				fwrite(hend + 4, 1, body, f);
				fputc('\n', f);
				fclose(f);
			}
			(void)!write(fd, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 38);
			memmove(buf, buf + need, have - need);
			have -= need;
		}
		close(fd);
	}
}

/*
 * Whether the receiver got a notification of status for CachescopeLeak of
 * fdchurn's filp or dentry: one alert a notification (group_by key);
 * with *key "" the first such key is put there, else only that key
 * counts.
 */
static bool hook_alert(const char *path, const char *status, char *key, size_t n)
{
	char head[96], line[1 << 14];
	bool found = false;
	FILE *f = fopen(path, "r");

	if (!f)
		return false;
	snprintf(head, sizeof(head), "{\"receiver\":\"hook\",\"status\":\"%s\"", status);
	while (!found && fgets(line, sizeof(line), f)) {
		const char *k = strstr(line, "\"key\":\"");
		char got[64];

		if (strncmp(line, head, strlen(head)) || !strstr(line, "\"alertname\":\"CachescopeLeak\"") ||
		    !strstr(line, "\"comm\":\"fdchurn\"") || !k ||
		    sscanf(k + 7, "%63[^\"]", got) != 1 || (strcmp(got, "filp") && strcmp(got, "dentry")))
			continue;
		if (!*key)
			snprintf(key, n, "%s", got);
		found = !strcmp(key, got);
	}
	fclose(f);
	return found;
}

/* Run a server in the background, its output into log; its pid. */
static pid_t server(const char *log, char *const argv[])
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(fd, 1);
		dup2(fd, 2);
		setpgid(0, 0);
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static void stop(pid_t pid)
{
	int st;

	kill(pid, SIGTERM);
	assert_int_equal(waitpid(pid, &st, 0), pid);
}

/*
 * The operator's loop, end to end on loopback: cachescoped, a real
 * Prometheus scraping it every second with the shipped rule file (its
 * `for:` cut from minutes to 5 s), a real Alertmanager routing to a
 * webhook receiver.  While a program leaks file descriptors the receiver
 * gets CachescopeLeak firing, with the key, the process and the reason in
 * it; after the program exits it gets the same alert resolved.
 */
static void alerts__leaking_program__webhook_gets_alert_then_resolve(void **state)
{
	const char *tools[] = { "curl", "prometheus", "prometheus-alertmanager", NULL };
	char addr[64], conf[300], rules[300], amconf[300], hook[300], cmd[1200], plog[300], alog[300];
	char pdata[300], adata[300], a1[320], a2[320], a3[64], a4[320], a5[64], key[64] = "";
	int pport = free_port(), aport = free_port(), hport = free_port(), dport = free_port();
	bool fired = false, resolved = false;
	pid_t hk, prom, am, kid;
	struct daemon d;
	long end;
	FILE *f;

	need_tools(state, tools);
	snprintf(hook, sizeof(hook), "%s/webhook.jsonl", tmpdir);
	hk = webhook(hport, hook);
	/* the shipped rules, their waits cut to seconds */
	snprintf(rules, sizeof(rules), "%s/cachescope.rules.yml", tmpdir);
	snprintf(cmd, sizeof(cmd), "sed -E 's/for: [0-9]+m/for: 5s/' tools/prometheus/cachescope.rules.yml > %s",
		 rules);
	assert_int_equal(run_cmd(cmd, NULL, 0), 0);
	snprintf(amconf, sizeof(amconf), "%s/alertmanager.yml", tmpdir);
	f = fopen(amconf, "w");
	assert_non_null(f);
	fprintf(f, "route:\n  receiver: hook\n  group_by: [alertname, key, comm]\n"
		   "  group_wait: 1s\n  group_interval: 1s\n  repeat_interval: 1h\n"
		   "receivers:\n  - name: hook\n    webhook_configs:\n"
		   "      - url: http://127.0.0.1:%d/hook\n        send_resolved: true\n", hport);
	fclose(f);
	snprintf(conf, sizeof(conf), "%s/prometheus-alerts.yml", tmpdir);
	f = fopen(conf, "w");
	assert_non_null(f);
	fprintf(f, "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
		   "rule_files:\n  - %s\n"
		   "alerting:\n  alertmanagers:\n    - static_configs:\n        - targets: ['127.0.0.1:%d']\n"
		   "scrape_configs:\n  - job_name: cachescope\n    static_configs:\n"
		   "      - targets: ['127.0.0.1:%d']\n", rules, aport, dport);
	fclose(f);
	snprintf(adata, sizeof(adata), "%s/am-data", tmpdir);
	snprintf(alog, sizeof(alog), "%s/alertmanager.log", tmpdir);
	snprintf(a1, sizeof(a1), "--config.file=%s", amconf);
	snprintf(a2, sizeof(a2), "--storage.path=%s", adata);
	snprintf(a3, sizeof(a3), "--web.listen-address=127.0.0.1:%d", aport);
	am = server(alog, (char *const[]){ "prometheus-alertmanager", a1, a2, a3,
					   "--cluster.listen-address=", NULL });
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", dport);
	daemon_start(&d, "alerting", 90, (const char *const[]){ "--metrics-addr", addr, NULL });
	snprintf(pdata, sizeof(pdata), "%s/prom-alerts-data", tmpdir);
	snprintf(plog, sizeof(plog), "%s/prometheus-alerts.log", tmpdir);
	snprintf(a4, sizeof(a4), "--config.file=%s", conf);
	snprintf(a2, sizeof(a2), "--storage.tsdb.path=%s", pdata);
	snprintf(a5, sizeof(a5), "--web.listen-address=127.0.0.1:%d", pport);
	prom = server(plog, (char *const[]){ "prometheus", a4, a2, a5, NULL });
	/* the leak: 30 s of 10 fds kept of every 50 opened */
	kid = fork();
	assert_true(kid >= 0);
	if (!kid) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		snprintf(cmd, sizeof(cmd), "%s/tests/helpers/fdchurn", build);
		execl(cmd, "fdchurn", "50", "300", "--keep", "10", "--period-ms", "100", (char *)NULL);
		_exit(127);
	}
	for (end = now_ms() + 60000; now_ms() < end && !fired; sleep_ms(500))
		fired = hook_alert(hook, "firing", key, sizeof(key));
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	for (end = now_ms() + 60000; fired && now_ms() < end && !resolved; sleep_ms(500))
		resolved = hook_alert(hook, "resolved", key, sizeof(key));
	stop(prom);
	stop(am);
	kill(hk, SIGKILL);
	waitpid(hk, NULL, 0);
	assert_int_equal(kill(d.pid, SIGTERM), 0);
	assert_int_equal(daemon_wait(&d), 0);
	if (!fired)
		fail_msg("no CachescopeLeak alert for fdchurn's filp or dentry reached the webhook in 60 s (%s, %s, %s)",
			 hook, plog, alog);
	if (!resolved)
		fail_msg("CachescopeLeak for fdchurn's %s not resolved within 60 s of its exit (%s)", key, hook);
	/* the alert names the key and says why */
	assert_true(!strcmp(key, "filp") || !strcmp(key, "dentry"));
	snprintf(cmd, sizeof(cmd), "grep '^{\"receiver\":\"hook\",\"status\":\"firing\"' %s | "
		 "grep -c 'objects older than their lifetimes keep growing and are not freed'", hook);
	assert_int_equal(run_cmd(cmd, NULL, 0), 0);
	snprintf(cmd, sizeof(cmd), "grep -m1 '^{\"receiver\":\"hook\",\"status\":\"firing\".*\"key\":\"%s\"' %s | head -c 1500 >&2; echo >&2; "
		 "grep -m1 '^{\"receiver\":\"hook\",\"status\":\"resolved\".*\"key\":\"%s\"' %s | head -c 700 >&2; echo >&2",
		 key, hook, key, hook);
	run_cmd(cmd, NULL, 0);
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
		cmocka_unit_test(rules__shipped__promtool_check_and_unit_tests_pass),
		cmocka_unit_test(metrics__leaking_program__anomalous_key_by_name_and_journal_lines),
		cmocka_unit_test(alerts__leaking_program__webhook_gets_alert_then_resolve),
	};

	/* CS_TEST_FILTER=metrics__idle* runs the tests whose names match */
	if (getenv("CS_TEST_FILTER"))
		cmocka_set_test_filter(getenv("CS_TEST_FILTER"));
	return cmocka_run_group_tests(tests, harness_setup, harness_teardown);
}
