// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the control socket (daemon/control.c) over the event loop
 * (daemon/loop.c): the per-client buffers, and a real server on a socket in
 * a temporary folder, driven one turn of the loop at a time by the test, so
 * a client that stalls shows up as another client not answered.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "helpers/tmpdir.h"
#include "../daemon/control.h"
#include "../daemon/loop.h"

static char dir[] = "/tmp/cs-test-control-XXXXXX";
static char sock[100];
static int nsock;

TMPDIR_GROUP(dir)

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- per-client buffers ---- */

static void control_client_feed__whole_line__command_without_line_end(void **state)
{
	struct control_client c = { .fd = -1 };

	(void)state;
	assert_int_equal(control_client_feed(&c, "stats\r\n", 7, false, 256), 1);
	assert_string_equal(c.in, "stats");
}

static void control_client_feed__one_byte_at_a_time__whole_at_newline(void **state)
{
	struct control_client c = { .fd = -1 };
	const char *req = "top 5\n";
	size_t i;

	(void)state;
	for (i = 0; i + 1 < strlen(req); i++)
		assert_int_equal(control_client_feed(&c, req + i, 1, false, 256), 0);
	assert_int_equal(control_client_feed(&c, "\n", 1, false, 256), 1);
	assert_string_equal(c.in, "top 5");
}

static void control_client_feed__eof_after_bytes__whole(void **state)
{
	struct control_client c = { .fd = -1 };

	(void)state;
	assert_int_equal(control_client_feed(&c, "stats", 5, false, 256), 0);
	assert_int_equal(control_client_feed(&c, "", 0, true, 256), 1);
	assert_string_equal(c.in, "stats");
}

static void control_client_feed__past_limit__e2big(void **state)
{
	struct control_client c = { .fd = -1 };
	char big[300];

	(void)state;
	memset(big, 'a', sizeof(big));
	/* at the limit without a newline: too long already */
	assert_int_equal(control_client_feed(&c, big, 10, false, 10), 0);
	assert_int_equal(control_client_feed(&c, big, 1, false, 10), -E2BIG);
	/* more than the buffer in one go */
	memset(&c, 0, sizeof(c));
	assert_int_equal(control_client_feed(&c, big, sizeof(big), false, 256), -E2BIG);
	/* the newline beyond the limit */
	memset(&c, 0, sizeof(c));
	big[20] = '\n';
	assert_int_equal(control_client_feed(&c, big, 21, false, 16), -E2BIG);
}

static void control_client_flush__full_socket__rest_after_reader_drains(void **state)
{
	struct control_client c = { 0 };
	size_t n = 1 << 20, got = 0;
	char buf[65536];
	int sv[2], r;
	ssize_t k;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	c.fd = sv[0];
	c.out = malloc(n);
	assert_non_null(c.out);
	memset(c.out, 'x', n);
	c.out_len = n;
	/* nobody reads: part is written and it returns at once */
	assert_int_equal(control_client_flush(&c), 0);
	assert_true(c.out_off > 0 && c.out_off < n);
	while ((r = control_client_flush(&c)) == 0) {
		k = read(sv[1], buf, sizeof(buf));
		assert_true(k > 0);
		got += k;
	}
	assert_int_equal(r, 1);
	while ((k = read(sv[1], buf, sizeof(buf))) > 0)
		got += k;
	assert_int_equal(got, n);
	/* the reader gone: an error, not a signal */
	close(sv[1]);
	c.out_off = 0;
	assert_int_equal(control_client_flush(&c), -EPIPE);
	free(c.out);
	close(sv[0]);
}

/* ---- the loop ---- */

static int fired;

static void del_other(int fd, uint32_t events, void *data)
{
	struct loop *l = ((void **)data)[0];
	int other = *(int *)((void **)data)[1];

	(void)fd;
	(void)events;
	fired++;
	loop_del(l, other);
}

static void loop_del__from_another_handler_same_batch__not_called(void **state)
{
	struct loop l;
	int a[2], b[2];
	void *da[2], *db[2];

	(void)state;
	assert_int_equal(loop_init(&l), 0);
	assert_int_equal(pipe(a), 0);
	assert_int_equal(pipe(b), 0);
	da[0] = db[0] = &l;
	da[1] = &b[0];
	db[1] = &a[0];
	assert_int_equal(loop_add(&l, a[0], EPOLLIN, del_other, da), 0);
	assert_int_equal(loop_add(&l, b[0], EPOLLIN, del_other, db), 0);
	assert_int_equal(loop_add(&l, b[0], EPOLLIN, del_other, db), -EEXIST);
	assert_int_equal(write(a[1], "x", 1), 1);
	assert_int_equal(write(b[1], "x", 1), 1);
	fired = 0;
	/* both are ready in one batch; whichever runs first removes the other */
	assert_int_equal(loop_run_once(&l, 1000), 2);
	assert_int_equal(fired, 1);
	loop_release(&l);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
}

/* ---- a real server ---- */

static void answer(const char *cmd, FILE *out, void *ctx)
{
	size_t i;

	(void)ctx;
	if (!strcmp(cmd, "big")) {
		for (i = 0; i < (4u << 20) / 64; i++)
			fprintf(out, "%063zu\n", i);
		return;
	}
	fprintf(out, "answer %s\n", cmd);
}

struct server {
	struct loop l;
	struct control *c;
	int lfd;
};

static void server_start(struct server *s, const struct control_limits *lim)
{
	struct control_limits def;

	if (!lim) {
		control_limits_default(&def);
		def.allow_uid = getuid();
		lim = &def;
	}
	assert_int_equal(loop_init(&s->l), 0);
	/* a socket of its own: a failed test leaves its server behind */
	snprintf(sock, sizeof(sock), "%s/ctl%d.sock", dir, nsock++);
	s->lfd = control_listen(sock);
	assert_true(s->lfd >= 0);
	s->c = control_new(&s->l, s->lfd, lim, answer, NULL);
	assert_non_null(s->c);
}

static void server_stop(struct server *s)
{
	control_free(s->c);
	control_close(s->lfd, sock);
	loop_release(&s->l);
}

static int client(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* Turn the loop for ms. */
static void pump(struct server *s, long ms)
{
	uint64_t end = ms_now() + ms;

	while (ms_now() < end)
		loop_run_once(&s->l, 10);
}

/* Turn the loop until fd has sent its whole answer (eof), at most ms;
 * the answer's first bytes go to buf.  Returns the bytes read, or -1 if
 * it did not end in time. */
static long answer_within(struct server *s, int fd, char *buf, size_t n, long ms)
{
	uint64_t end = ms_now() + ms;
	size_t len = 0;
	long total = 0;
	char tmp[4096];
	ssize_t k;

	buf[0] = '\0';
	while (ms_now() < end) {
		loop_run_once(&s->l, 10);
		while ((k = read(fd, tmp, sizeof(tmp))) > 0) {
			size_t take = len + k < n - 1 ? (size_t)k : n - 1 - len;

			memcpy(buf + len, tmp, take);
			len += take;
			buf[len] = '\0';
			total += k;
		}
		if (k == 0)
			return total;
		if (k < 0 && errno != EAGAIN)
			return total;
	}
	return -1;
}

static void control__trickling_client__others_answered_then_dropped(void **state)
{
	struct control_limits lim;
	struct control_stats st;
	struct server s;
	bool dropped = false;
	char buf[256];
	uint64_t t0;
	int a, b;

	(void)state;
	control_limits_default(&lim);
	lim.allow_uid = getuid();
	lim.request_ms = 500;
	server_start(&s, &lim);
	a = client();
	assert_int_equal(write(a, "s", 1), 1);
	loop_run_once(&s.l, 10);
	b = client();
	assert_int_equal(write(b, "stats\n", 6), 6);
	t0 = ms_now();
	assert_true(answer_within(&s, b, buf, sizeof(buf), 300) > 0);
	assert_string_equal(buf, "answer stats\n");
	assert_true(ms_now() - t0 < 300);
	/* the trickler keeps sending a byte now and then: past its deadline
	 * it is dropped all the same */
	while (!dropped && ms_now() - t0 < 2000) {
		char c;
		ssize_t k;

		pump(&s, 190);
		send(a, "t", 1, MSG_NOSIGNAL);
		k = read(a, &c, 1);
		dropped = k == 0 || (k < 0 && errno != EAGAIN);
	}
	assert_true(dropped);
	assert_true(ms_now() - t0 < 1000);
	control_get_stats(s.c, &st);
	assert_int_equal(st.timeouts, 1);
	assert_int_equal(st.served, 1);
	close(a);
	close(b);
	server_stop(&s);
}

static void control__reader_never_reads__others_answered_then_dropped(void **state)
{
	struct control_limits lim;
	struct control_stats st;
	struct server s;
	char buf[256];
	uint64_t t0;
	int a, b;

	(void)state;
	control_limits_default(&lim);
	lim.allow_uid = getuid();
	lim.reply_ms = 500;
	server_start(&s, &lim);
	a = client();
	assert_int_equal(write(a, "big\n", 4), 4);
	loop_run_once(&s.l, 10);
	loop_run_once(&s.l, 10);
	b = client();
	assert_int_equal(write(b, "x\n", 2), 2);
	t0 = ms_now();
	assert_true(answer_within(&s, b, buf, sizeof(buf), 300) > 0);
	assert_string_equal(buf, "answer x\n");
	/* a's 4 MB wait in the daemon's buffer until its deadline */
	while (ms_now() - t0 < 2000) {
		control_get_stats(s.c, &st);
		if (st.timeouts)
			break;
		loop_run_once(&s.l, 50);
	}
	assert_int_equal(st.timeouts, 1);
	assert_int_equal(st.served, 1);
	close(a);
	close(b);
	server_stop(&s);
}

static void control__big_reply_read_slowly__arrives_whole(void **state)
{
	struct server s;
	char buf[128];
	int a;

	(void)state;
	server_start(&s, NULL);
	a = client();
	assert_int_equal(write(a, "big\n", 4), 4);
	assert_int_equal(answer_within(&s, a, buf, sizeof(buf), 5000), 4u << 20);
	assert_memory_equal(buf, "000000000000000000000000000000000000000000000000000000000000000\n", 64);
	close(a);
	server_stop(&s);
}

static void control__request_too_long__error_line(void **state)
{
	struct control_stats st;
	struct server s;
	char req[1000], buf[256];
	int a;

	(void)state;
	server_start(&s, NULL);
	a = client();
	memset(req, 'a', sizeof(req));
	req[sizeof(req) - 1] = '\n';
	assert_int_equal(write(a, req, sizeof(req)), sizeof(req));
	assert_true(answer_within(&s, a, buf, sizeof(buf), 1000) > 0);
	assert_string_equal(buf, "error: request too long (at most 256 bytes)\n");
	control_get_stats(s.c, &st);
	assert_int_equal(st.too_long, 1);
	assert_int_equal(st.served, 0);
	close(a);
	server_stop(&s);
}

static void control__too_many_clients__refused_with_a_line(void **state)
{
	struct control_limits lim;
	struct control_stats st;
	struct server s;
	char buf[256];
	int fds[3], i, extra;

	(void)state;
	control_limits_default(&lim);
	lim.allow_uid = getuid();
	lim.max_clients = 3;
	server_start(&s, &lim);
	for (i = 0; i < 3; i++)
		fds[i] = client();
	loop_run_once(&s.l, 10);
	extra = client();
	assert_true(answer_within(&s, extra, buf, sizeof(buf), 1000) > 0);
	assert_string_equal(buf, "error: too many clients, try again\n");
	control_get_stats(s.c, &st);
	assert_int_equal(st.busy, 1);
	/* those connected are still served */
	assert_int_equal(write(fds[0], "a\n", 2), 2);
	assert_true(answer_within(&s, fds[0], buf, sizeof(buf), 1000) > 0);
	assert_string_equal(buf, "answer a\n");
	for (i = 0; i < 3; i++)
		close(fds[i]);
	close(extra);
	server_stop(&s);
}

static void control__probe_connects_and_closes__nothing_served(void **state)
{
	struct control_stats st;
	struct server s;
	char buf[64];
	int a;

	(void)state;
	server_start(&s, NULL);
	a = client();
	close(a);
	answer_within(&s, client(), buf, sizeof(buf), 50);	/* turns the loop */
	control_get_stats(s.c, &st);
	assert_int_equal(st.served + st.timeouts + st.too_long, 0);
	server_stop(&s);
}

/* SO_PEERCRED, not the socket file's mode, decides: a peer of another
 * uid gets one line and is closed. */
static void control__peer_of_other_uid__permission_denied(void **state)
{
	struct control_stats st;
	struct server s;
	char buf[64] = "";
	int p[2], status = -1;
	pid_t pid;
	ssize_t k;

	if (getuid() != 0)
		skip();
	(void)state;
	server_start(&s, NULL);
	chmod(dir, 0711);
	chmod(sock, 0666);
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		char got[64] = "";
		int fd, n = 0;

		if (setgid(65534) || setuid(65534))
			_exit(2);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			_exit(3);
		/* refused at once, maybe before this arrives */
		send(fd, "stats\n", 6, MSG_NOSIGNAL);
		while (n < (int)sizeof(got) - 1) {
			ssize_t r = read(fd, got + n, sizeof(got) - 1 - n);

			if (r <= 0)
				break;
			n += r;
		}
		_exit(write(p[1], got, n) == n ? 0 : 5);
	}
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	for (uint64_t end = ms_now() + 5000; ms_now() < end;) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		loop_run_once(&s.l, 10);
	}
	k = read(p[0], buf, sizeof(buf) - 1);
	buf[k > 0 ? k : 0] = '\0';
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_string_equal(buf, "permission denied\n");
	control_get_stats(s.c, &st);
	assert_int_equal(st.denied, 1);
	assert_int_equal(st.served, 0);
	close(p[0]);
	server_stop(&s);
	chmod(dir, 0700);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(control_client_feed__whole_line__command_without_line_end),
		cmocka_unit_test(control_client_feed__one_byte_at_a_time__whole_at_newline),
		cmocka_unit_test(control_client_feed__eof_after_bytes__whole),
		cmocka_unit_test(control_client_feed__past_limit__e2big),
		cmocka_unit_test(control_client_flush__full_socket__rest_after_reader_drains),
		cmocka_unit_test(loop_del__from_another_handler_same_batch__not_called),
		cmocka_unit_test(control__trickling_client__others_answered_then_dropped),
		cmocka_unit_test(control__reader_never_reads__others_answered_then_dropped),
		cmocka_unit_test(control__big_reply_read_slowly__arrives_whole),
		cmocka_unit_test(control__request_too_long__error_line),
		cmocka_unit_test(control__too_many_clients__refused_with_a_line),
		cmocka_unit_test(control__probe_connects_and_closes__nothing_served),
		cmocka_unit_test(control__peer_of_other_uid__permission_denied),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
