// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the metrics endpoint's HTTP side (daemon/httpd.c) over
 * loopback, in one thread: the test's clients are non-blocking and the
 * loop (daemon/loop.c) is run between their steps, as the daemon runs it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <crypt.h>
#include "../daemon/httpd.h"
#include "../daemon/loop.h"
#include "../daemon/webconfig.h"

struct fixture {
	struct loop loop;
	struct httpd *h;
	size_t body_len;	/* what render gives: 'x' * body_len + "\n" */
	int fail;		/* render returns this */
	int renders;
	bool detail;		/* of the last render */
	struct webconfig *wc;
};

static int render(void *ctx, bool detail, char **body, size_t *len)
{
	struct fixture *f = ctx;

	f->renders++;
	f->detail = detail;
	if (f->fail)
		return f->fail;
	*body = malloc(f->body_len + 1);
	if (!*body)
		return -ENOMEM;
	memset(*body, 'x', f->body_len);
	(*body)[f->body_len] = '\n';
	*len = f->body_len + 1;
	return 0;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int setup(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct fixture *f = calloc(1, sizeof(*f));
	int err;

	assert_non_null(f);
	f->body_len = 10;
	assert_int_equal(loop_init(&f->loop), 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	f->h = httpd_start(&f->loop, (struct sockaddr *)&a, sizeof(a), NULL, render, f, &err);
	assert_non_null(f->h);
	assert_true(httpd_port(f->h) > 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	httpd_stop(f->h);
	webconfig_free(f->wc);
	loop_release(&f->loop);
	free(f);
	return 0;
}

static int client(struct fixture *f, const char *req)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	assert_true(fd >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)httpd_port(f->h));
	assert_true(!connect(fd, (struct sockaddr *)&a, sizeof(a)) || errno == EINPROGRESS);
	if (req) {
		long end = now_ms() + 2000;
		ssize_t n;

		while ((n = write(fd, req, strlen(req))) < 0 && errno == EAGAIN && now_ms() < end)
			loop_run_once(&f->loop, 10);
		assert_int_equal(n, (ssize_t)strlen(req));
	}
	return fd;
}

/* Run the loop and read fd until the server closes it (Connection:
 * close), or the deadline; the bytes read, NUL-terminated, in buf. */
static size_t exchange(struct fixture *f, int fd, char *buf, size_t n, long ms)
{
	long end = now_ms() + ms;
	size_t got = 0;
	ssize_t r;

	while (now_ms() < end && got + 1 < n) {
		loop_run_once(&f->loop, 10);
		r = read(fd, buf + got, n - 1 - got);
		if (r == 0)
			break;
		if (r > 0)
			got += r;
	}
	buf[got] = 0;
	return got;
}

#define GET(path) "GET " path " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"

static void httpd__get_metrics__body_and_content_type(void **state)
{
	struct fixture *f = *state;
	struct httpd_stats st;
	char buf[4096];
	int fd = client(f, GET("/metrics"));

	exchange(f, fd, buf, sizeof(buf), 3000);
	close(fd);
	assert_non_null(strstr(buf, "HTTP/1.1 200"));
	assert_non_null(strstr(buf, "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
	assert_non_null(strstr(buf, "\r\n\r\nxxxxxxxxxx\n"));
	httpd_get_stats(f->h, &st);
	assert_int_equal(st.served, 1);
	assert_int_equal(f->renders, 1);
}

static void httpd__other_path_or_method__404_405_not_rendered(void **state)
{
	struct fixture *f = *state;
	struct httpd_stats st;
	char buf[4096];
	int fd = client(f, GET("/metricsx"));

	exchange(f, fd, buf, sizeof(buf), 3000);
	close(fd);
	assert_non_null(strstr(buf, "HTTP/1.1 404"));
	fd = client(f, "POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
		       "Content-Length: 0\r\n\r\n");
	exchange(f, fd, buf, sizeof(buf), 3000);
	close(fd);
	assert_non_null(strstr(buf, "HTTP/1.1 405"));
	assert_int_equal(f->renders, 0);
	httpd_get_stats(f->h, &st);
	assert_int_equal(st.not_found, 2);
	assert_int_equal(st.served, 0);
}

static void httpd_start__port_taken__null_eaddrinuse(void **state)
{
	struct fixture *f = *state;
	struct sockaddr_in a = { .sin_family = AF_INET };
	int err = 0;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)httpd_port(f->h));
	assert_null(httpd_start(&f->loop, (struct sockaddr *)&a, sizeof(a), NULL, render, f, &err));
	assert_int_equal(err, -EADDRINUSE);
}

static void httpd__render_fails__500(void **state)
{
	struct fixture *f = *state;
	struct httpd_stats st;
	char buf[4096];
	int fd;

	f->fail = -ENOMEM;
	fd = client(f, GET("/metrics"));
	exchange(f, fd, buf, sizeof(buf), 3000);
	close(fd);
	assert_non_null(strstr(buf, "HTTP/1.1 500"));
	httpd_get_stats(f->h, &st);
	assert_int_equal(st.failed, 1);
	assert_int_equal(st.served, 0);
}

/* A scraper that asks for 8 MB and never reads, and one that sends half a
 * request: another is answered in full meanwhile (the loop never waits on
 * a socket). */
static void httpd__stuck_scrapers__other_answered(void **state)
{
	struct fixture *f = *state;
	static char buf[9 << 20];
	int stuck, half, fd;
	size_t got;

	f->body_len = 8 << 20;
	stuck = client(f, GET("/metrics"));
	half = client(f, "GET /metr");
	/* the first is being answered (its buffers fill), the second waits */
	while (f->renders < 1)
		loop_run_once(&f->loop, 10);
	fd = client(f, GET("/metrics"));
	got = exchange(f, fd, buf, sizeof(buf), 5000);
	assert_true(got > f->body_len);
	assert_true(buf[got - 1] == '\n' && buf[got - 2] == 'x');
	assert_int_equal(f->renders, 2);
	close(fd);
	close(stuck);
	close(half);
}

/* A child as another user opens n connections to port, sends the start
 * of a request on each and then one byte on each every 200 ms, for ms
 * (for -ms, nothing more: they stay idle); returns its pid once they are
 * all open. */
static pid_t trickler(int port, uid_t uid, int n, long ms)
{
	int p[2], fds[64], i;
	pid_t pid;
	char c = 1;

	assert_true(n <= 64);
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct sockaddr_in a = { .sin_family = AF_INET };
		long end;

		close(p[0]);
		if (setgid(uid) || setuid(uid))
			_exit(2);
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		a.sin_port = htons((uint16_t)port);
		for (i = 0; i < n; i++) {
			fds[i] = socket(AF_INET, SOCK_STREAM, 0);
			if (fds[i] < 0 || connect(fds[i], (struct sockaddr *)&a, sizeof(a)) ||
			    write(fds[i], "GET /metr", 9) != 9)
				_exit(3);
		}
		if (write(p[1], &c, 1) != 1)
			_exit(4);
		signal(SIGPIPE, SIG_IGN);
		for (end = now_ms() + (ms < 0 ? -ms : ms); now_ms() < end;) {
			usleep(200 * 1000);
			for (i = 0; ms > 0 && i < n; i++)
				(void)!write(fds[i], "x", 1);	/* shut by the server: fine */
		}
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	return pid;
}

static void reap(pid_t pid)
{
	int st;

	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) || (WIFEXITED(st) && !WEXITSTATUS(st)));
}

/* Idle connections past the limit, HTTPD_CLIENT_CONNS from each of as
 * many users as it takes: once the first ones time out, the next are
 * accepted and time out, and then a scrape is answered (MHD only puts
 * its listening socket back inside MHD_run: without a timer of its own
 * nothing ran again). */
static void httpd__idle_past_limit__served_after_timeouts(void **state)
{
	struct fixture *f = *state;
	pid_t kids[2 * HTTPD_MAX_CONNS / HTTPD_CLIENT_CONNS];
	char buf[4096];
	unsigned int i;
	int fd;

	if (geteuid())
		skip();
	for (i = 0; i < sizeof(kids) / sizeof(kids[0]); i++) {
		kids[i] = trickler(httpd_port(f->h), 65534 - i, HTTPD_CLIENT_CONNS, -60000);
	}
	fd = client(f, GET("/metrics"));
	exchange(f, fd, buf, sizeof(buf), (3 * HTTPD_TIMEOUT_S + 3) * 1000);
	if (!strstr(buf, "HTTP/1.1 200")) {
		struct httpd_stats st;

		httpd_get_stats(f->h, &st);
		fail_msg("got '%.40s' limit=%lu deadline=%lu", buf, (unsigned long)st.client_limit,
			 (unsigned long)st.deadline);
	}
	close(fd);
	for (i = 0; i < sizeof(kids) / sizeof(kids[0]); i++)
		reap(kids[i]);
}

/* Another user trickles a byte every 200 ms on as many connections as
 * the endpoint takes: MHD's idle timeout never fires, and before each
 * client had a share of its own, no scrape was answered while they
 * trickled.  Now that user holds HTTPD_CLIENT_CONNS, the rest are shut at
 * once, and root's scrape is answered well before any deadline. */
static void httpd__trickling_user__scrape_answered(void **state)
{
	struct fixture *f = *state;
	struct httpd_stats st;
	char buf[4096];
	pid_t kid;
	long end;
	int fd;

	if (geteuid())
		skip();
	kid = trickler(httpd_port(f->h), 65534, HTTPD_MAX_CONNS, 30000);
	for (end = now_ms() + 500; now_ms() < end;)
		loop_run_once(&f->loop, 10);	/* all of them accepted */
	fd = client(f, GET("/metrics"));
	/* less than HTTPD_REQUEST_S: the deadline does not rescue it */
	exchange(f, fd, buf, sizeof(buf), (HTTPD_REQUEST_S - 4) * 1000);
	close(fd);
	reap(kid);
	assert_non_null(strstr(buf, "HTTP/1.1 200"));
	httpd_get_stats(f->h, &st);
	assert_int_equal(st.client_limit, HTTPD_MAX_CONNS - HTTPD_CLIENT_CONNS);
	assert_int_equal(st.deadline, 0);
}

/* Connections whose peer has gone (the process exited before they were
 * accepted): the peer's socket is a time-wait mini socket that reads uid
 * 0, and counting them as root's once refused root's own scrape. */
static void httpd__closed_peers__not_root(void **state)
{
	struct fixture *f = *state;
	char buf[4096];
	pid_t kid;
	int fd;

	if (geteuid())
		skip();
	kid = trickler(httpd_port(f->h), 65534, HTTPD_CLIENT_CONNS, 0);
	assert_int_equal(waitpid(kid, NULL, 0), kid);
	fd = client(f, GET("/metrics"));
	exchange(f, fd, buf, sizeof(buf), 3000);
	close(fd);
	assert_non_null(strstr(buf, "HTTP/1.1 200"));
}

/* A request that trickles a byte every 500 ms: closed by the server once
 * it has taken HTTPD_REQUEST_S (before, the idle timeout was reset by
 * every byte and it stayed for as long as it trickled). */
static void httpd__trickling_request__closed_at_deadline(void **state)
{
	struct fixture *f = *state;
	struct httpd_stats st;
	int fd = client(f, "GET /metr");
	long end = now_ms() + (HTTPD_REQUEST_S + 5) * 1000, next = 0;
	bool closed = false;
	char c;

	signal(SIGPIPE, SIG_IGN);
	while (!closed && now_ms() < end) {
		loop_run_once(&f->loop, 10);
		if (now_ms() >= next) {
			next = now_ms() + 500;
			if (write(fd, "x", 1) != 1)
				closed = true;
		}
		if (read(fd, &c, 1) == 0)
			closed = true;
	}
	close(fd);
	assert_true(closed);
	httpd_get_stats(f->h, &st);
	assert_int_equal(st.deadline, 1);
}

static void get_host(struct fixture *f, const char *host, const char *want)
{
	char req[512], buf[4096];
	int fd;

	snprintf(req, sizeof(req), "GET /metrics HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n",
		 host);
	fd = client(f, req);
	exchange(f, fd, buf, sizeof(buf), 3000);
	close(fd);
	if (!strstr(buf, want))
		fail_msg("Host: %s: want %s, got %.40s", host, want, buf);
}

/* DNS rebinding: a page whose name now points at this address sends its
 * own name, and is refused; addresses and localhost are answered, and on
 * loopback this machine's name is not (nothing remote reaches it). */
static void httpd__foreign_host__421(void **state)
{
	struct fixture *f = *state;
	struct httpd_stats st;
	struct utsname un;

	assert_int_equal(uname(&un), 0);
	get_host(f, "127.0.0.1:9464", "HTTP/1.1 200");
	get_host(f, "[::1]:9464", "HTTP/1.1 200");
	get_host(f, "LocalHost", "HTTP/1.1 200");
	get_host(f, "10.1.2.3", "HTTP/1.1 200");
	get_host(f, "attacker.example:9464", "HTTP/1.1 421");
	get_host(f, "127.0.0.1.attacker.example", "HTTP/1.1 421");
	get_host(f, "localhost:80x", "HTTP/1.1 421");
	get_host(f, "[::1", "HTTP/1.1 421");
	get_host(f, un.nodename, "HTTP/1.1 421");
	assert_int_equal(f->renders, 4);
	httpd_get_stats(f->h, &st);
	assert_int_equal(st.bad_host, 5);
	assert_int_equal(st.served, 4);
}

/* Listening beyond loopback, this machine's name, alone or under a
 * domain, is answered; a name that only starts like it is not. */
static void httpd__any_addr__own_name_answered(void **state)
{
	struct fixture *f = *state;
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct utsname un;
	char name[300];
	int err;

	httpd_stop(f->h);
	a.sin_addr.s_addr = htonl(INADDR_ANY);
	f->h = httpd_start(&f->loop, (struct sockaddr *)&a, sizeof(a), NULL, render, f, &err);
	assert_non_null(f->h);
	assert_int_equal(uname(&un), 0);
	un.nodename[strcspn(un.nodename, ".")] = 0;
	get_host(f, un.nodename, "HTTP/1.1 200");
	snprintf(name, sizeof(name), "%s.cluster.internal:9464", un.nodename);
	get_host(f, name, "HTTP/1.1 200");
	snprintf(name, sizeof(name), "%sx.cluster.internal", un.nodename);
	get_host(f, name, "HTTP/1.1 421");
	get_host(f, "attacker.example", "HTTP/1.1 421");
}

/* req sent as uid from a child (a blocking client), its answer's first
 * line compared with want; the loop runs here meanwhile. */
static void get_as(struct fixture *f, uid_t uid, const char *req, const char *want)
{
	long end = now_ms() + 5000;
	pid_t pid = fork();
	int st = -1;

	assert_true(pid >= 0);
	if (!pid) {
		struct sockaddr_in a = { .sin_family = AF_INET };
		char buf[4096];
		size_t got = 0;
		ssize_t r;
		int fd;

		if (setgid(uid) || setuid(uid))
			_exit(2);
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		a.sin_port = htons((uint16_t)httpd_port(f->h));
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) ||
		    write(fd, req, strlen(req)) != (ssize_t)strlen(req))
			_exit(3);
		while (got + 1 < sizeof(buf) && (r = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
			got += (size_t)r;
		buf[got] = 0;
		if (strncmp(buf, want, strlen(want))) {
			fprintf(stderr, "uid %u: want %s, got %.60s\n", (unsigned int)uid, want, buf);
			_exit(1);
		}
		_exit(0);
	}
	while (now_ms() < end && waitpid(pid, &st, WNOHANG) == 0)
		loop_run_once(&f->loop, 10);
	if (st == -1) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* Per-cache figures only to whom the kernel shows /proc/slabinfo: a root
 * peer's render has detail, another user's has not. */
static void httpd__other_user__no_detail(void **state)
{
	struct fixture *f = *state;

	if (geteuid())
		skip();
	get_as(f, 0, GET("/metrics"), "HTTP/1.1 200");
	assert_true(f->detail);
	get_as(f, 65534, GET("/metrics"), "HTTP/1.1 200");
	assert_false(f->detail);
	assert_int_equal(f->renders, 2);
}

/* A web config with a user, its bcrypt hash made here at cost 4. */
static char *auth_config(char *dir, size_t n, const char *extra)
{
	struct crypt_data cd = { 0 };
	char salt[CRYPT_GENSALT_OUTPUT_SIZE], *path;
	FILE *fp;

	snprintf(dir, n, "/tmp/cs-httpd.XXXXXX");
	assert_non_null(mkdtemp(dir));
	assert_non_null(crypt_gensalt_rn("$2y$", 4, NULL, 0, salt, sizeof(salt)));
	assert_non_null(crypt_rn("secret", salt, &cd, sizeof(cd)));
	assert_int_equal(asprintf(&path, "%s/web.yml", dir) > 0, 1);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "# as the exporter toolkit reads it\nbasic_auth_users:\n  alice: %s\n%s",
		cd.output, extra ? extra : "");
	assert_int_equal(fclose(fp), 0);
	return path;
}

static void restart_with(struct fixture *f, const char *path)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	char why[512];
	int err;

	f->wc = webconfig_load(path, why, sizeof(why));
	if (!f->wc)
		fail_msg("%s", why);
	httpd_stop(f->h);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	f->h = httpd_start(&f->loop, (struct sockaddr *)&a, sizeof(a), f->wc, render, f, &err);
	assert_non_null(f->h);
}

#define AUTH_GET(b64) "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic " b64 \
	"\r\nConnection: close\r\n\r\n"
#define ALICE_SECRET "YWxpY2U6c2VjcmV0"	/* alice:secret */
#define ALICE_WRONG "YWxpY2U6d3Jvbmc="	/* alice:wrong */
#define BOB_SECRET "Ym9iOnNlY3JldA=="	/* bob:secret */

/* With users every request must name one (401 and WWW-Authenticate, root
 * too), and a user's render has detail, whatever uid scrapes; a second
 * bcrypt check within a second of a client's last is refused (429), and
 * a pair verified once is not checked again. */
static void httpd__web_config_users__401_or_detail(void **state)
{
	struct fixture *f = *state;
	char dir[64], buf[4096], *path = auth_config(dir, sizeof(dir), NULL);
	struct httpd_stats st;
	int fd;

	restart_with(f, path);
	fd = client(f, GET("/metrics"));
	exchange(f, fd, buf, sizeof(buf), 3000);
	close(fd);
	assert_non_null(strstr(buf, "HTTP/1.1 401"));
	assert_non_null(strstr(buf, "WWW-Authenticate: Basic realm=\"cachescoped\""));
	fd = client(f, AUTH_GET(ALICE_SECRET));
	exchange(f, fd, buf, sizeof(buf), 3000);
	close(fd);
	assert_non_null(strstr(buf, "HTTP/1.1 200"));
	assert_true(f->detail);
	/* cached: no check, so not refused for the rate */
	fd = client(f, AUTH_GET(ALICE_SECRET));
	exchange(f, fd, buf, sizeof(buf), 3000);
	close(fd);
	assert_non_null(strstr(buf, "HTTP/1.1 200"));
	/* a wrong password right after that check: 429, then 401 */
	fd = client(f, AUTH_GET(ALICE_WRONG));
	exchange(f, fd, buf, sizeof(buf), 3000);
	close(fd);
	assert_non_null(strstr(buf, "HTTP/1.1 429"));
	usleep((HTTPD_CHECK_GAP_MS + 100) * 1000);
	fd = client(f, AUTH_GET(ALICE_WRONG));
	exchange(f, fd, buf, sizeof(buf), 3000);
	close(fd);
	assert_non_null(strstr(buf, "HTTP/1.1 401"));
	usleep((HTTPD_CHECK_GAP_MS + 100) * 1000);
	fd = client(f, AUTH_GET(BOB_SECRET));	/* no such user */
	exchange(f, fd, buf, sizeof(buf), 3000);
	close(fd);
	assert_non_null(strstr(buf, "HTTP/1.1 401"));
	httpd_get_stats(f->h, &st);
	assert_int_equal(st.served, 2);
	assert_int_equal(st.auth_failed, 3);
	assert_int_equal(st.auth_rate, 1);
	if (geteuid() == 0) {
		/* another uid is another client: its own check, and detail */
		f->detail = false;
		get_as(f, 65534, AUTH_GET(ALICE_SECRET), "HTTP/1.1 200");
		assert_true(f->detail);
	}
	unlink(path);
	rmdir(dir);
	free(path);
}

/* TLS from tls_server_config: curl, trusting the certificate made here,
 * gets the body over https; plain HTTP is not answered. */
static void httpd__tls__https_answered(void **state)
{
	struct fixture *f = *state;
	char dir[64], cmd[1024], extra[256], buf[4096], *path;
	long end;
	pid_t pid;
	int st = -1, fd;

	if (system("command -v openssl >/dev/null && command -v curl >/dev/null")) {
		fail_msg("openssl and curl wanted (make test installs them)");
	}
	snprintf(extra, sizeof(extra), "tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n");
	path = auth_config(dir, sizeof(dir), extra);
	snprintf(cmd, sizeof(cmd),
		 "cd %s && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
		 "-keyout k.pem -out c.pem -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 "
		 ">/dev/null 2>&1 && chmod 600 k.pem", dir);
	assert_int_equal(system(cmd), 0);
	restart_with(f, path);
	snprintf(cmd, sizeof(cmd), "curl -sf --max-time 4 --cacert %s/c.pem -u alice:secret "
		 "-o %s/body https://127.0.0.1:%d/metrics", dir, dir, httpd_port(f->h));
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	for (end = now_ms() + 6000; now_ms() < end && waitpid(pid, &st, WNOHANG) == 0;)
		loop_run_once(&f->loop, 10);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_true(f->detail);
	assert_int_equal(f->renders, 1);
	fd = client(f, AUTH_GET(ALICE_SECRET));
	exchange(f, fd, buf, sizeof(buf), 2000);
	close(fd);
	assert_null(strstr(buf, "HTTP/1.1 200"));
	assert_int_equal(f->renders, 1);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(httpd__get_metrics__body_and_content_type, setup, teardown),
		cmocka_unit_test_setup_teardown(httpd__other_path_or_method__404_405_not_rendered, setup, teardown),
		cmocka_unit_test_setup_teardown(httpd_start__port_taken__null_eaddrinuse, setup, teardown),
		cmocka_unit_test_setup_teardown(httpd__render_fails__500, setup, teardown),
		cmocka_unit_test_setup_teardown(httpd__stuck_scrapers__other_answered, setup, teardown),
		cmocka_unit_test_setup_teardown(httpd__idle_past_limit__served_after_timeouts, setup, teardown),
		cmocka_unit_test_setup_teardown(httpd__trickling_user__scrape_answered, setup, teardown),
		cmocka_unit_test_setup_teardown(httpd__closed_peers__not_root, setup, teardown),
		cmocka_unit_test_setup_teardown(httpd__trickling_request__closed_at_deadline, setup, teardown),
		cmocka_unit_test_setup_teardown(httpd__foreign_host__421, setup, teardown),
		cmocka_unit_test_setup_teardown(httpd__any_addr__own_name_answered, setup, teardown),
		cmocka_unit_test_setup_teardown(httpd__other_user__no_detail, setup, teardown),
		cmocka_unit_test_setup_teardown(httpd__web_config_users__401_or_detail, setup, teardown),
		cmocka_unit_test_setup_teardown(httpd__tls__https_answered, setup, teardown),
	};

	return cmocka_run_group_tests_name("httpd", tests, NULL, NULL);
}
