// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The keeper (keeper.h): one request a byte, one answer an int (the
 * listening socket's descriptor with it, as SCM_RIGHTS).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "control.h"
#include "csv.h"
#include "keeper.h"
#include "privs.h"

enum { OP_LISTEN = 'L', OP_ROTATE = 'R', OP_COMMIT = 'C', OP_ABORT = 'A', OP_UNLINK = 'U' };

static int send_answer(int fd, int err, int pass)
{
	char ctl[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = &err, .iov_len = sizeof(err) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	if (pass >= 0) {
		msg.msg_control = ctl;
		msg.msg_controllen = sizeof(ctl);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &pass, sizeof(int));
	}
	return sendmsg(fd, &msg, MSG_NOSIGNAL) == sizeof(err) ? 0 : -errno;
}

/* The answer to a request, with the descriptor passed along (or -1). */
static int ask(struct keeper *k, char op, int *passed)
{
	char ctl[CMSG_SPACE(sizeof(int))];
	int err = -EPIPE;
	struct iovec iov = { .iov_base = &err, .iov_len = sizeof(err) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			      .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c;
	ssize_t n;

	if (passed)
		*passed = -1;
	if (!k->pid)
		return -ENOSYS;
	if (send(k->fd, &op, 1, MSG_NOSIGNAL) != 1)
		return -errno;
	do
		n = recvmsg(k->fd, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n != sizeof(err))
		return n < 0 ? -errno : -EPIPE;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			if (passed)
				memcpy(passed, CMSG_DATA(c), sizeof(int));
			else {
				int fd;

				memcpy(&fd, CMSG_DATA(c), sizeof(int));
				close(fd);
			}
		}
	return err;
}

static void serve(int fd, const char *tmp, const char *path, int keep, const char *sock)
{
	bool dropped;
	int lfd = -1, err, nfd;
	char op;

	for (;;) {
		ssize_t n = read(fd, &op, 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n != 1)
			break;	/* the daemon has gone */
		err = -EINVAL;
		switch (op) {
		case OP_LISTEN:
			if (!sock || lfd >= 0)
				break;
			lfd = control_listen(sock);
			if (lfd < 0) {
				err = lfd;
				lfd = -1;
				break;
			}
			send_answer(fd, 0, lfd);
			continue;
		case OP_ROTATE:
			if (!tmp)
				break;
			err = csv_shift_files(path, tmp, keep, &dropped);
			if (err)
				break;
			nfd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
			if (nfd < 0) {
				err = -errno;
				break;
			}
			send_answer(fd, 0, nfd);
			close(nfd);
			continue;
		case OP_COMMIT:
			if (tmp)
				err = csv_shift_files(path, tmp, keep, &dropped) ?:
				      dropped;
			tmp = NULL;	/* once */
			break;
		case OP_ABORT:
			if (tmp)
				err = unlink(tmp) ? -errno : 0;
			tmp = NULL;
			break;
		case OP_UNLINK:
			if (lfd >= 0) {
				control_close(lfd, sock);
				lfd = -1;
				err = 0;
			}
			break;
		}
		send_answer(fd, err, -1);
	}
	if (lfd >= 0)
		close(lfd);	/* the socket is left: the daemon died first */
}

int keeper_start(struct keeper *k, const char *csv_tmp, const char *csv_path, int csv_keep,
		 const char *sock)
{
	const cap_value_t dac = CAP_DAC_OVERRIDE;
	int sv[2];
	pid_t pid;

	k->pid = 0;
	k->fd = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return -errno;
	}
	if (!pid) {
		/* nothing of the daemon's but stderr and its end of the pair:
		 * not the maps, the rings, the perf events */
		close(sv[0]);
		if (sv[1] != 3 && (dup2(sv[1], 3) < 0 || close(sv[1])))
			_exit(1);
		close_range(4, ~0u, 0);
		close(STDIN_FILENO);
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
		prctl(PR_SET_NAME, "cs-keeper", 0, 0, 0);
		if (privs_drop(&dac, 1))
			_exit(1);
		/* the daemon's signals stay blocked (signalfd): it ends when
		 * the daemon closes its end, however the daemon ends */
		serve(3, csv_tmp, csv_path, csv_keep, sock);
		_exit(0);
	}
	close(sv[1]);
	k->pid = pid;
	k->fd = sv[0];
	return 0;
}

int keeper_listen(struct keeper *k)
{
	int fd, err = ask(k, OP_LISTEN, &fd);

	if (err) {
		if (fd >= 0)
			close(fd);
		return err;
	}
	if (fd < 0)
		return -EPROTO;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return fd;
}

int keeper_rotate_csv(struct keeper *k, int *fd)
{
	int err = ask(k, OP_ROTATE, fd);

	if (err && *fd >= 0) {
		close(*fd);
		*fd = -1;
	}
	return err ? err : *fd < 0 ? -EPROTO : 0;
}

int keeper_commit_csv(struct keeper *k)
{
	return ask(k, OP_COMMIT, NULL);
}

int keeper_abort_csv(struct keeper *k)
{
	return ask(k, OP_ABORT, NULL);
}

int keeper_unlink_socket(struct keeper *k)
{
	return ask(k, OP_UNLINK, NULL);
}

void keeper_stop(struct keeper *k)
{
	if (!k->pid)
		return;
	close(k->fd);
	k->fd = -1;
	while (waitpid(k->pid, NULL, 0) < 0 && errno == EINTR)
		;
	k->pid = 0;
}
