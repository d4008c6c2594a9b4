// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The keeper (daemon/keeper.c) as a real child process: the socket it binds
 * answers through the descriptor it hands over, the CSV's files move up at
 * each rotation it does and at the commit, and a request it has no paths
 * for is refused.  The locked directory itself is test_hardening's (root,
 * a nobody-owned 0700 directory, a real daemon).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>
#include "helpers/tmpdir.h"
#include "../daemon/keeper.h"

static char dir[] = "/tmp/cs-test-keeper-XXXXXX";

TMPDIR_GROUP(dir)

static void put(int fd, const char *s)
{
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
}

static void expect_file(const char *path, const char *want)
{
	char got[256] = "";
	int fd = open(path, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, got, sizeof(got) - 1);
	assert_true(n >= 0);
	got[n] = '\0';
	close(fd);
	assert_string_equal(got, want);
}

static void keeper__csv_and_socket__done_for_the_daemon(void **state)
{
	char csv[128], tmp[160], sock[128], name[160];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct keeper k;
	int fd, lfd, c;

	(void)state;
	if (geteuid()) {
		fprintf(stderr, "the keeper drops capabilities: needs root, skipped\n");
		skip();
	}
	snprintf(csv, sizeof(csv), "%s/rows.csv", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp.1.abc", csv);
	snprintf(sock, sizeof(sock), "%s/cs.sock", dir);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	put(fd, "h\n1\n");
	close(fd);
	assert_int_equal(keeper_start(&k, tmp, csv, 1, sock), 0);
	/* the socket: bound by the keeper, listened on here */
	lfd = keeper_listen(&k);
	assert_true(lfd >= 0);
	assert_int_equal(keeper_listen(&k), -EINVAL);	/* once */
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(strlen(sock) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, sock, strlen(sock) + 1);
	assert_int_equal(connect(c, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(c);
	/* two rotations: rows.csv, then rows.csv.1, the oldest removed */
	assert_int_equal(keeper_rotate_csv(&k, &fd), 0);
	put(fd, "h\n2\n");
	close(fd);
	expect_file(csv, "h\n1\n");
	assert_int_equal(keeper_rotate_csv(&k, &fd), 0);
	put(fd, "h\n3\n");
	close(fd);
	snprintf(name, sizeof(name), "%s.1", csv);
	expect_file(name, "h\n1\n");
	expect_file(csv, "h\n2\n");
	/* the commit moves them up once more: the oldest goes (1) */
	assert_int_equal(keeper_commit_csv(&k), 1);
	expect_file(csv, "h\n3\n");
	expect_file(name, "h\n2\n");
	assert_int_equal(access(tmp, F_OK), -1);
	assert_int_equal(keeper_commit_csv(&k), -EINVAL);	/* once */
	assert_int_equal(keeper_abort_csv(&k), -EINVAL);
	/* the socket removed at exit */
	close(lfd);
	assert_int_equal(keeper_unlink_socket(&k), 0);
	assert_int_equal(access(sock, F_OK), -1);
	keeper_stop(&k);
	assert_int_equal(k.pid, 0);
	assert_int_equal(keeper_commit_csv(&k), -ENOSYS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keeper__csv_and_socket__done_for_the_daemon),
	};

	return cmocka_run_group_tests_name("keeper", tests, setup, teardown);
}
