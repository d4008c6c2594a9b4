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
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "../daemon/httpd.h"
#include "../daemon/loop.h"

struct fixture {
	struct loop loop;
	struct httpd *h;
	size_t body_len;	/* what render gives: 'x' * body_len + "\n" */
	int fail;		/* render returns this */
	int renders;
};

static int render(void *ctx, char **body, size_t *len)
{
	struct fixture *f = ctx;

	f->renders++;
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
	f->h = httpd_start(&f->loop, (struct sockaddr *)&a, sizeof(a), render, f, &err);
	assert_non_null(f->h);
	assert_true(httpd_port(f->h) > 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	httpd_stop(f->h);
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

#define GET(path) "GET " path " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"

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
	fd = client(f, "POST /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
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
	assert_null(httpd_start(&f->loop, (struct sockaddr *)&a, sizeof(a), render, f, &err));
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

/* Idle connections past the limit: once the first ones time out, the next
 * are accepted and time out, and then a scrape is answered (MHD only puts
 * its listening socket back inside MHD_run: without a timer of its own
 * nothing ran again). */
static void httpd__idle_past_limit__served_after_timeouts(void **state)
{
	struct fixture *f = *state;
	int idle[2 * HTTPD_MAX_CONNS], i, fd;
	char buf[4096];

	for (i = 0; i < 2 * HTTPD_MAX_CONNS; i++)
		idle[i] = client(f, "GET /metr");
	fd = client(f, GET("/metrics"));
	exchange(f, fd, buf, sizeof(buf), (3 * HTTPD_TIMEOUT_S + 3) * 1000);
	assert_non_null(strstr(buf, "HTTP/1.1 200"));
	close(fd);
	for (i = 0; i < 2 * HTTPD_MAX_CONNS; i++)
		close(idle[i]);
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
	};

	return cmocka_run_group_tests_name("httpd", tests, NULL, NULL);
}
