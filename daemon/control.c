// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The control socket.  Requests are one short line, so each client is served
 * to completion inside the event loop, with a receive timeout that keeps a
 * silent client from stalling ingest.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include "control.h"

static int fill_addr(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

int control_check(const char *path)
{
	struct sockaddr_un sa;
	struct stat st;
	int probe, err;

	err = fill_addr(path, &sa);
	if (err)
		return err;
	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe < 0)
		return -errno;
	err = connect(probe, (struct sockaddr *)&sa, sizeof(sa)) ? 0 : -EADDRINUSE;
	close(probe);
	return err;
}

/* the inode of the socket we bound: only that one is removed at exit */
static ino_t bound_ino;

int control_listen(const char *path)
{
	struct sockaddr_un sa;
	struct stat st;
	mode_t old;
	int fd, err;

	err = control_check(path);
	if (err)
		return err;
	err = fill_addr(path, &sa);
	if (err)
		return err;
	if (!lstat(path, &st) && S_ISSOCK(st.st_mode))
		unlink(path);	/* stale: nothing answered */

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	old = umask(0177);
	err = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (err || listen(fd, 16)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!stat(path, &st))
		bound_ino = st.st_ino;
	return fd;
}

void control_serve(int lfd, control_cmd_fn fn, void *ctx)
{
	struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };
	char cmd[256];
	size_t len = 0;
	ssize_t n;
	FILE *out;
	int cfd;

	cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (cfd < 0)
		return;
	setsockopt(cfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(cfd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (len < sizeof(cmd) - 1) {
		n = read(cfd, cmd + len, sizeof(cmd) - 1 - len);
		if (n <= 0)
			break;
		len += n;
		if (memchr(cmd, '\n', len))
			break;
	}
	cmd[len] = '\0';
	cmd[strcspn(cmd, "\r\n")] = '\0';
	out = fdopen(cfd, "w");
	if (!out) {
		close(cfd);
		return;
	}
	fn(cmd, out, ctx);
	fclose(out);
}

void control_close(int lfd, const char *path)
{
	struct stat st;

	if (lfd < 0)
		return;
	close(lfd);
	/* not a socket someone else made there since */
	if (!lstat(path, &st) && S_ISSOCK(st.st_mode) && st.st_ino == bound_ino)
		unlink(path);
}
