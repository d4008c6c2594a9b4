// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer harness of the control protocol's request side
 * (daemon/control.c): the input is cut into chunks (each chunk's length is
 * its first byte) and fed to a client's buffer as if read from the socket,
 * then sent whole to a real server over the event loop.  Invariants: the
 * buffer never holds more than its size; a whole request has no line end
 * and fits the limit; the server answers a request it accepts with exactly
 * the command the buffer saw, and anything longer with the one error line.
 *
 *   clang -fsanitize=fuzzer,address,undefined -iquote bpf -iquote daemon -D_GNU_SOURCE \
 *     tests/fuzz/fuzz_control.c daemon/control.c daemon/loop.c -o /tmp/fc
 *   /tmp/fc -max_total_time=30 tests/fuzz/corpus/control
 *
 * (-iquote, not -I: -Idaemon would put daemon/features.h before glibc's
 * <features.h>.)
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "../../daemon/control.h"
#include "../../daemon/loop.h"

static struct loop loop;
static struct control *server;
static char sock[108];
static int lfd = -1;

static void echo(const char *cmd, FILE *out, void *ctx)
{
	(void)ctx;
	fprintf(out, "answer %s\n", cmd);
}

static char dir[] = "/tmp/cs-fuzz-control-XXXXXX";

static void clean(void)
{
	control_close(lfd, sock);
	rmdir(dir);
}

static void start(void)
{
	struct control_limits lim;

	if (!mkdtemp(dir) || loop_init(&loop))
		abort();
	atexit(clean);
	snprintf(sock, sizeof(sock), "%s/s", dir);
	lfd = control_listen(sock);
	control_limits_default(&lim);
	lim.allow_uid = getuid();
	server = lfd < 0 ? NULL : control_new(&loop, lfd, &lim, echo, NULL);
	if (!server)
		abort();
}

/* Feed the chunks; the command the buffer saw (or "" if none), and the
 * result of the last feed. */
static int feed_all(const uint8_t *data, size_t size, char *cmd, size_t n)
{
	struct control_client c = { .fd = -1 };
	size_t off = 0;
	int r = 0;

	cmd[0] = '\0';
	while (off < size && r == 0) {
		size_t len = data[off++] % 64 + 1;

		if (len > size - off)
			len = size - off;
		r = control_client_feed(&c, (const char *)data + off, len, false,
					CONTROL_MAX_REQUEST);
		off += len;
		if (c.in_len > sizeof(c.in) - 1)
			abort();
	}
	if (r == 0)
		r = control_client_feed(&c, "", 0, true, CONTROL_MAX_REQUEST);
	if (r == 1) {
		if (strlen(c.in) > CONTROL_MAX_REQUEST || strpbrk(c.in, "\n"))
			abort();
		snprintf(cmd, n, "%s", c.in);
	}
	if (r != 0 && r != 1 && r != -E2BIG)
		abort();
	return r;
}

/* The payload the chunks carry, in one piece. */
static size_t payload(const uint8_t *data, size_t size, char *out)
{
	size_t off = 0, n = 0;

	while (off < size) {
		size_t len = data[off++] % 64 + 1;

		if (len > size - off)
			len = size - off;
		memcpy(out + n, data + off, len);
		n += len;
		off += len;
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char cmd[CONTROL_MAX_REQUEST + 1], want[CONTROL_MAX_REQUEST + 16], got[512];
	char *req;
	size_t n, len = 0;
	bool done;
	int r, fd, i;

	if (size > 4096)
		return 0;
	if (!server)
		start();
	r = feed_all(data, size, cmd, sizeof(cmd));
	req = malloc(size + 1);
	if (!req)
		return 0;
	n = payload(data, size, req);

	/* the same bytes through the server */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		abort();
	if (n)
		send(fd, req, n, MSG_NOSIGNAL);
	shutdown(fd, SHUT_WR);
	for (i = 0, done = false; i < 200 && !done; i++) {
		ssize_t k;

		loop_run_once(&loop, 5);
		while ((k = read(fd, got + len, sizeof(got) - 1 - len)) > 0)
			len += k;
		done = k == 0 || (k < 0 && errno != EAGAIN) || len == sizeof(got) - 1;
	}
	got[len] = '\0';
	close(fd);
	free(req);
	if (r == 1) {
		snprintf(want, sizeof(want), "answer %s\n", cmd);
		if (strcmp(got, want))
			abort();
	} else if (r == -E2BIG) {
		if (strncmp(got, "error: request too long", 23))
			abort();
	} else if (len) {
		abort();	/* nothing asked, nothing answered */
	}
	return 0;
}
