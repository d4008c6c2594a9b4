// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of daemon/privs.c: which files root may run or hand to other
 * processes, and what a process holds after privs_drop (run in a child,
 * read back from its /proc/self/status).  The tests that need root skip
 * without it.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "helpers/tmpdir.h"
#include "../daemon/privs.h"

static char dir[] = "/tmp/cs-test-privs-XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) && !chmod(dir, 0755) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

static void make_file(char *path, size_t n, const char *sub, const char *name, mode_t mode)
{
	int fd;

	if (sub) {
		snprintf(path, n, "%s/%s", dir, sub);
		mkdir(path, 0755);
		snprintf(path, n, "%s/%s/%s", dir, sub, name);
	} else {
		snprintf(path, n, "%s/%s", dir, name);
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chmod(path, mode), 0);
}

static void privs_check_file__own_0755_file__accepted(void **state)
{
	const char *why = "unset";
	char path[256];

	(void)state;
	make_file(path, sizeof(path), NULL, "good", 0755);
	assert_int_equal(privs_check_file(path, &why), 0);
}

static void privs_check_file__world_writable__refused(void **state)
{
	const char *why = NULL;
	char path[256];

	(void)state;
	make_file(path, sizeof(path), NULL, "ww", 0757);
	assert_int_equal(privs_check_file(path, &why), -EPERM);
	assert_string_equal(why, "writable by group or others");
	make_file(path, sizeof(path), NULL, "gw", 0775);
	assert_int_equal(privs_check_file(path, &why), -EPERM);
}

static void privs_check_file__directory_writable_by_others__refused(void **state)
{
	const char *why = NULL;
	char path[256], sub[256];

	(void)state;
	make_file(path, sizeof(path), "open", "lib.so", 0755);
	snprintf(sub, sizeof(sub), "%s/open", dir);
	assert_int_equal(chmod(sub, 01777), 0);
	assert_int_equal(privs_check_file(path, &why), -EPERM);
	assert_string_equal(why, "its directory is writable by group or others");
}

static void privs_check_file__not_root_owned__refused(void **state)
{
	const char *why = NULL;
	char path[256];

	if (geteuid() != 0)
		skip();
	(void)state;
	make_file(path, sizeof(path), NULL, "nobodys", 0755);
	assert_int_equal(chown(path, 65534, 65534), 0);
	assert_int_equal(privs_check_file(path, &why), -EPERM);
	assert_string_equal(why, "not owned by root");
}

static void privs_check_file__missing_or_directory__refused(void **state)
{
	const char *why = NULL;
	char path[256];

	(void)state;
	snprintf(path, sizeof(path), "%s/none", dir);
	assert_int_equal(privs_check_file(path, &why), -ENOENT);
	assert_int_equal(privs_check_file(dir, &why), -EPERM);
	assert_string_equal(why, "not a regular file");
}

/* What was opened is what is checked: a name swapped for a writable file
 * after the open does not change the verdict on the descriptor. */
static void privs_check_opened__name_swapped_after_open__checks_the_fd(void **state)
{
	const char *why = NULL;
	char path[256], other[256];
	int fd;

	(void)state;
	make_file(path, sizeof(path), NULL, "opened", 0755);
	make_file(other, sizeof(other), NULL, "swapped-in", 0777);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(rename(other, path), 0);
	assert_int_equal(privs_check_opened(fd, path, &why), 0);
	assert_int_equal(privs_check_file(path, &why), -EPERM);
	assert_string_equal(why, "writable by group or others");
	close(fd);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(privs_check_opened(fd, path, &why), -EPERM);
	close(fd);
}

/* The kernel's order of classes: the owner's bits decide for the owner
 * even when others may, then the group's, then others'. */
static void privs_user_may__owner_group_others__first_class_decides(void **state)
{
	struct stat st = { .st_uid = 0, .st_gid = 0, .st_mode = S_IFREG | 0755 };

	(void)state;
	assert_true(privs_user_may(&st, 65534, 65534, X_OK));
	assert_true(privs_user_may(&st, 65534, 65534, R_OK | X_OK));
	st.st_mode = S_IFREG | 0711;
	assert_true(privs_user_may(&st, 65534, 65534, X_OK));
	assert_false(privs_user_may(&st, 65534, 65534, R_OK));
	st.st_mode = S_IFREG | 0700;
	assert_false(privs_user_may(&st, 65534, 65534, X_OK));
	st.st_mode = S_IFREG | 0750;
	st.st_gid = 65534;
	assert_true(privs_user_may(&st, 65534, 65534, R_OK | X_OK));
	st.st_mode = S_IFREG | 0705;	/* of its group: others' bits do not help */
	assert_false(privs_user_may(&st, 1000, 65534, R_OK));
	st.st_uid = 1000;
	st.st_mode = S_IFREG | 0075;	/* the owner: its own bits only */
	assert_false(privs_user_may(&st, 1000, 1000, R_OK));
}

static void privs_dir_writable__by_mode_not_capabilities(void **state)
{
	char path[256], sub[256];

	(void)state;
	make_file(path, sizeof(path), "ro", "x.csv", 0600);
	assert_true(privs_dir_writable(path) == (geteuid() == 0));
	snprintf(sub, sizeof(sub), "%s/ro", dir);
	assert_int_equal(chmod(sub, 0555), 0);
	/* root could write there only with CAP_DAC_OVERRIDE */
	assert_false(privs_dir_writable(path));
	assert_int_equal(chmod(sub, 0755), 0);
}

static unsigned long long status_hex(const char *status, const char *field)
{
	const char *p = strstr(status, field);

	assert_non_null(p);
	return strtoull(p + strlen(field), NULL, 16);
}

/* In a child: drop to keep, then report /proc/self/status. */
static void drop_in_child(const cap_value_t *keep, int n, char *status, size_t size)
{
	int p[2], st;
	ssize_t k, len = 0;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		char buf[4096];
		int fd, r;

		close(p[0]);
		if (privs_drop(keep, n))
			_exit(1);
		fd = open("/proc/self/status", O_RDONLY);
		r = read(fd, buf, sizeof(buf));
		_exit(r > 0 && write(p[1], buf, r) == r ? 0 : 2);
	}
	close(p[1]);
	while ((k = read(p[0], status + len, size - 1 - len)) > 0)
		len += k;
	status[len] = '\0';
	close(p[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

static void privs_drop__keep_kill__only_kill_everywhere_and_no_new_privs(void **state)
{
	cap_value_t keep[] = { CAP_KILL };
	char status[4096];

	if (geteuid() != 0)
		skip();
	(void)state;
	drop_in_child(keep, 1, status, sizeof(status));
	assert_int_equal(status_hex(status, "CapEff:"), 1ull << CAP_KILL);
	assert_int_equal(status_hex(status, "CapPrm:"), 1ull << CAP_KILL);
	assert_int_equal(status_hex(status, "CapBnd:"), 1ull << CAP_KILL);
	assert_int_equal(status_hex(status, "CapInh:"), 0);
	assert_int_equal(status_hex(status, "CapAmb:"), 0);
	assert_non_null(strstr(status, "NoNewPrivs:\t1"));
}

static void privs_drop__keep_nothing__no_capability(void **state)
{
	char status[4096];

	if (geteuid() != 0)
		skip();
	(void)state;
	drop_in_child(NULL, 0, status, sizeof(status));
	assert_int_equal(status_hex(status, "CapEff:"), 0);
	assert_int_equal(status_hex(status, "CapPrm:"), 0);
	assert_int_equal(status_hex(status, "CapBnd:"), 0);
	assert_non_null(strstr(status, "NoNewPrivs:\t1"));
}

static int count_calls;

static int effective_now(void *ctx)
{
	cap_t c = cap_get_proc();
	cap_flag_value_t v = CAP_SET;

	(void)ctx;
	count_calls++;
	cap_get_flag(c, CAP_SYS_ADMIN, CAP_EFFECTIVE, &v);
	cap_free(c);
	return v == CAP_SET ? 1 : 0;
}

static void privs_probe__runs_without_effective__restores_them(void **state)
{
	if (geteuid() != 0)
		skip();
	(void)state;
	count_calls = 0;
	assert_int_equal(privs_probe(effective_now, NULL), 0);	/* none inside */
	assert_int_equal(count_calls, 1);
	assert_int_equal(effective_now(NULL), 1);		/* back after */
}

static void privs_policy__each_need__its_capability(void **state)
{
	cap_value_t keep[PRIVS_KEEP_MAX];
	struct privs_needs none = { .cap_bpf = true };

	(void)state;
	assert_int_equal(privs_policy(&none, keep), 0);
	/* bpf() wants a capability: CAP_BPF where the kernel has it */
	assert_int_equal(privs_policy(&(struct privs_needs){ .bpf_needs_cap = true, .cap_bpf = true },
				      keep), 1);
	assert_int_equal(keep[0], CAP_BPF);
	assert_int_equal(privs_policy(&(struct privs_needs){ .bpf_needs_cap = true }, keep), 1);
	assert_int_equal(keep[0], CAP_SYS_ADMIN);
	/* a capability known to the kernel alone is not asked for */
	assert_int_equal(privs_policy(&(struct privs_needs){ .cap_bpf = false }, keep), 0);
	assert_int_equal(privs_policy(&(struct privs_needs){ .signals_others = true }, keep), 1);
	assert_int_equal(keep[0], CAP_KILL);
	assert_int_equal(privs_policy(&(struct privs_needs){ .dir_locked = true }, keep), 1);
	assert_int_equal(keep[0], CAP_DAC_OVERRIDE);
	assert_int_equal(privs_policy(&(struct privs_needs){ .bpf_needs_cap = true, .cap_bpf = true,
							    .signals_others = true, .dir_locked = true },
				      keep), PRIVS_KEEP_MAX);
	assert_int_equal(keep[0], CAP_BPF);
	assert_int_equal(keep[1], CAP_KILL);
	assert_int_equal(keep[2], CAP_DAC_OVERRIDE);
}

static void privs_names__list_or_none(void **state)
{
	cap_value_t keep[] = { CAP_BPF, CAP_KILL };
	char buf[64];

	(void)state;
	privs_names(keep, 2, buf, sizeof(buf));
	assert_string_equal(buf, "cap_bpf,cap_kill");
	privs_names(NULL, 0, buf, sizeof(buf));
	assert_string_equal(buf, "none");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(privs_check_file__own_0755_file__accepted),
		cmocka_unit_test(privs_check_file__world_writable__refused),
		cmocka_unit_test(privs_check_file__directory_writable_by_others__refused),
		cmocka_unit_test(privs_check_file__not_root_owned__refused),
		cmocka_unit_test(privs_check_file__missing_or_directory__refused),
		cmocka_unit_test(privs_check_opened__name_swapped_after_open__checks_the_fd),
		cmocka_unit_test(privs_user_may__owner_group_others__first_class_decides),
		cmocka_unit_test(privs_dir_writable__by_mode_not_capabilities),
		cmocka_unit_test(privs_drop__keep_kill__only_kill_everywhere_and_no_new_privs),
		cmocka_unit_test(privs_drop__keep_nothing__no_capability),
		cmocka_unit_test(privs_probe__runs_without_effective__restores_them),
		cmocka_unit_test(privs_policy__each_need__its_capability),
		cmocka_unit_test(privs_names__list_or_none),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
