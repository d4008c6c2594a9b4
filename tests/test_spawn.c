// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of daemon/spawn.c: files opened by root and handed to a child
 * of another user as descriptors, from a directory that user cannot
 * search; the reasons given when a file may not or cannot be run; and the
 * child's environment.  The tests that change users skip without root.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "helpers/tmpdir.h"
#include "../daemon/spawn.h"

static char dir[64];		/* 0700, as a home directory */
static char sub[128];		/* root's 0755 inside it, as a build folder */

static int setup(void **state)
{
	(void)state;
	if (tmpdir_make(dir, sizeof(dir), "spawn") || chmod(dir, 0700))
		return -1;
	snprintf(sub, sizeof(sub), "%s/a build", dir);
	return mkdir(sub, 0755);
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

/* Copy from into sub/name with mode. */
static void copy_in(char *path, size_t n, const char *from, const char *name, mode_t mode)
{
	char cmd[600];

	snprintf(path, n, "%s/%s", sub, name);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, path);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(chmod(path, mode), 0);
}

static void write_in(char *path, size_t n, const char *name, const char *text, mode_t mode)
{
	FILE *f;

	snprintf(path, n, "%s/%s", sub, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
}

/* Run r and return what it wrote on stdout, reaped; its exit status in *st. */
static void run_read(struct spawn_req *r, char *out, size_t n, int *st)
{
	char why[256] = "";
	ssize_t k, len = 0;
	int p[2];
	pid_t pid;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	r->stdout_fd = p[1];
	if (spawn_run(r, &pid, why, sizeof(why)))
		fail_msg("spawn_run: %s", why);
	close(p[1]);
	while ((k = read(p[0], out + len, n - 1 - len)) > 0)
		len += k;
	out[len] = '\0';
	close(p[0]);
	assert_int_equal(waitpid(pid, st, 0), pid);
}

/* A shell from a directory nobody cannot search runs as nobody, in /, and
 * reads the file handed to it by its /proc/self/fd name. */
static void spawn_run__exe_and_lib_in_0700_dir__run_and_read_as_nobody(void **state)
{
	struct spawn_file sh, lib;
	struct spawn_user u;
	struct passwd *pw = getpwnam("nobody");
	char shp[256], libp[256], why[256], script[400], out[512], want[160];
	char *argv[] = { "sh", "-c", script, NULL };
	char *envp[] = { "PATH=/usr/bin:/bin", NULL };
	const struct spawn_file *pass[] = { &lib, NULL };
	struct spawn_req r = { .exe = &sh, .argv = argv, .envp = envp, .pass = pass, .user = &u };
	int st;

	(void)state;
	if (geteuid() != 0 || !pw)
		skip();
	copy_in(shp, sizeof(shp), "/bin/sh", "sh", 0755);
	write_in(libp, sizeof(libp), "lib.so", "the library\n", 0644);
	assert_int_equal(spawn_user_get(&u, "nobody"), 0);
	assert_true(u.drop);
	assert_int_equal(u.uid, pw->pw_uid);
	assert_int_equal(spawn_open(&sh, shp, &u, X_OK, why, sizeof(why)), 0);
	assert_int_equal(spawn_open(&lib, libp, &u, R_OK, why, sizeof(why)), 0);
	snprintf(script, sizeof(script), "id -u; id -G; pwd; cat %s; test -e '%s' || echo unreachable",
		 lib.fdpath, libp);
	run_read(&r, out, sizeof(out), &st);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	snprintf(want, sizeof(want), "%u\n%u\n/\nthe library\nunreachable\n",
		 (unsigned int)pw->pw_uid, (unsigned int)pw->pw_gid);
	assert_string_equal(out, want);
	spawn_close(&sh);
	spawn_close(&lib);
	spawn_close(&lib);		/* twice does nothing */
	assert_int_equal(sh.fd, -1);
}

/* Only the descriptors passed stay open in the child. */
static void spawn_run__not_passed__closed_at_exec(void **state)
{
	struct spawn_file sh, lib;
	struct spawn_user u;
	char shp[256], libp[256], why[256], script[400], out[256];
	char *argv[] = { "sh", "-c", script, NULL };
	char *envp[] = { "PATH=/usr/bin:/bin", NULL };
	struct spawn_req r = { .exe = &sh, .argv = argv, .envp = envp, .user = &u };
	int st;

	(void)state;
	assert_int_equal(spawn_user_get(&u, "nobody"), 0);	/* not root: ourselves */
	copy_in(shp, sizeof(shp), "/bin/sh", "sh", 0755);
	write_in(libp, sizeof(libp), "kept.so", "x\n", 0644);
	assert_int_equal(spawn_open(&sh, shp, &u, X_OK, why, sizeof(why)), 0);
	assert_int_equal(spawn_open(&lib, libp, &u, R_OK, why, sizeof(why)), 0);
	snprintf(script, sizeof(script), "test -e %s && echo open || echo closed", lib.fdpath);
	run_read(&r, out, sizeof(out), &st);
	assert_string_equal(out, "closed\n");
	spawn_close(&sh);
	spawn_close(&lib);
}

static void spawn_open__not_executable_by_user__eacces_names_user_and_mode(void **state)
{
	struct spawn_file f;
	struct spawn_user u;
	char p[256], why[256];

	(void)state;
	if (geteuid() != 0)
		skip();
	assert_int_equal(spawn_user_get(&u, "nobody"), 0);
	copy_in(p, sizeof(p), "/bin/true", "private", 0700);
	assert_int_equal(spawn_open(&f, p, &u, X_OK, why, sizeof(why)), -EACCES);
	assert_string_equal(why, "it is not executable by nobody (mode 0700, owner uid 0) (EACCES)");
	assert_int_equal(f.fd, -1);
	write_in(p, sizeof(p), "unreadable.so", "x", 0711);
	assert_int_equal(spawn_open(&f, p, &u, R_OK, why, sizeof(why)), -EACCES);
	assert_string_equal(why, "it is not readable by nobody (mode 0711, owner uid 0) (EACCES)");
}

/* The trust checks keep their meaning: root hands out only root's files. */
static void spawn_open__writable_by_others_or_missing__refused(void **state)
{
	struct spawn_file f;
	struct spawn_user u;
	char p[256], why[256];

	(void)state;
	assert_int_equal(spawn_user_get(&u, "nobody"), 0);	/* not root: ourselves */
	copy_in(p, sizeof(p), "/bin/true", "open-to-all", 0777);
	assert_int_equal(spawn_open(&f, p, &u, X_OK, why, sizeof(why)), -EPERM);
	assert_string_equal(why, "writable by group or others (it must be root's and writable by root alone)");
	snprintf(p, sizeof(p), "%s/none", sub);
	assert_int_equal(spawn_open(&f, p, &u, X_OK, why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "cannot open it: No such file or directory (ENOENT)");
	assert_int_equal(f.fd, -1);
}

/* A failure after fork comes back as the step and its errno, not as an
 * exit status: a file the kernel cannot run. */
static void spawn_run__not_a_program__enoexec_in_one_line(void **state)
{
	struct spawn_file f;
	struct spawn_user u;
	char p[256], why[256] = "";
	char *argv[] = { "junk", NULL };
	char *envp[] = { NULL };
	struct spawn_req r = { .exe = &f, .argv = argv, .envp = envp, .user = &u, .stdout_fd = -1 };
	pid_t pid = 0;

	(void)state;
	assert_int_equal(spawn_user_get(&u, "nobody"), 0);	/* not root: ourselves */
	write_in(p, sizeof(p), "junk", "not a program\n", 0755);
	assert_int_equal(spawn_open(&f, p, &u, X_OK, why, sizeof(why)), 0);
	assert_int_equal(spawn_run(&r, &pid, why, sizeof(why)), -ENOEXEC);
	assert_string_equal(why, "it is not a program this kernel can run (ENOEXEC)");
	assert_int_equal(pid, 0);		/* not written on failure */
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);	/* reaped */
	spawn_close(&f);
}

static void spawn_user_get__unknown_or_root__enoent(void **state)
{
	struct spawn_user u;

	(void)state;
	if (geteuid() != 0)
		skip();
	assert_int_equal(spawn_user_get(&u, "no-such-user-cs"), -ENOENT);
	assert_int_equal(spawn_user_get(&u, "root"), -ENOENT);
}

/* Three uids of the dynamic range no account names, else skip. */
static uid_t free_trio(void)
{
	uid_t u;

	for (u = 65000; u < 65400; u += 3)
		if (!getpwuid(u) && !getpwuid(u + 1) && !getpwuid(u + 2))
			return u;
	skip();
	return 0;
}

/*
 * A user of its own: of a range of three, one a process runs as (a child
 * setuid to it, as gid too) and one another daemon holds (its lock): the
 * lease is the third, its lock held; with that held too none is left
 * (-EAGAIN); released, it is to be had again.
 */
static void spawn_user_own__running_or_held__third_leased(void **state)
{
	struct spawn_user a, b, c;
	char locks[128];
	int p[2], st;
	uid_t base;
	pid_t kid;
	char ok;

	(void)state;
	if (geteuid() != 0)
		skip();
	base = free_trio();
	snprintf(locks, sizeof(locks), "%s/locks", dir);
	/* base + 2 runs a process; the kernel holds its ids while it lives */
	assert_int_equal(pipe(p), 0);
	kid = fork();
	assert_true(kid >= 0);
	if (!kid) {
		close(p[0]);
		if (setgid(base + 2) || setuid(base + 2))
			_exit(1);
		ok = 1;
		if (write(p[1], &ok, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &ok, 1), 1);
	close(p[0]);
	/* two leases from the three: never base + 2, never the same twice */
	assert_int_equal(spawn_user_own(&a, locks, base, base + 2), 0);
	assert_true(a.drop && a.lock_fd >= 0 && a.uid == a.gid);
	assert_true(a.uid == base || a.uid == base + 1);
	assert_int_equal(spawn_user_own(&b, locks, base, base + 2), 0);
	assert_true(b.uid == base || b.uid == base + 1);
	assert_int_not_equal(a.uid, b.uid);
	assert_int_equal(spawn_user_own(&c, locks, base, base + 2), -EAGAIN);
	/* a lease ended is free again; the process's uid is still not */
	spawn_user_release(&a);
	assert_int_equal(a.lock_fd, -1);
	spawn_user_release(&a);		/* twice does nothing */
	assert_int_equal(spawn_user_own(&c, locks, base, base + 2), 0);
	assert_int_equal(c.uid, a.uid);
	assert_string_equal(c.name, a.name);
	spawn_user_release(&b);
	spawn_user_release(&c);
	kill(kid, SIGKILL);
	assert_int_equal(waitpid(kid, &st, 0), kid);
	assert_int_equal(spawn_user_own(&a, locks, base, base + 1), 0);
	assert_int_equal(spawn_user_own(&a, locks, base + 1, base), -EINVAL);
	assert_int_equal(spawn_user_own(&a, locks, 0, 5), -EINVAL);
}

/* Where the lock directory cannot be made, the lease still excludes the
 * uids processes run as, unlocked. */
static void spawn_user_own__no_lock_dir__unlocked_lease(void **state)
{
	struct spawn_user u;
	uid_t base;

	(void)state;
	if (geteuid() != 0)
		skip();
	base = free_trio();
	assert_int_equal(spawn_user_own(&u, "/proc/no-such/locks", base, base), 0);
	assert_int_equal(u.uid, base);
	assert_int_equal(u.lock_fd, -1);
}

static void spawn_env__drops_and_replaces_names(void **state)
{
	char *in[] = { "A=1", "CUDA_INJECTION64_PATH=/x", "AB=2", "B=old", NULL };
	const char *drop[] = { "CUDA_INJECTION64_PATH", "A", NULL };
	const char *add[] = { "B=new", "C=3", NULL };
	char **env = spawn_env(in, drop, add);

	(void)state;
	assert_non_null(env);
	assert_string_equal(env[0], "AB=2");
	assert_string_equal(env[1], "B=new");
	assert_string_equal(env[2], "C=3");
	assert_null(env[3]);
	free(env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(spawn_run__exe_and_lib_in_0700_dir__run_and_read_as_nobody),
		cmocka_unit_test(spawn_run__not_passed__closed_at_exec),
		cmocka_unit_test(spawn_open__not_executable_by_user__eacces_names_user_and_mode),
		cmocka_unit_test(spawn_open__writable_by_others_or_missing__refused),
		cmocka_unit_test(spawn_run__not_a_program__enoexec_in_one_line),
		cmocka_unit_test(spawn_user_get__unknown_or_root__enoent),
		cmocka_unit_test(spawn_user_own__running_or_held__third_leased),
		cmocka_unit_test(spawn_user_own__no_lock_dir__unlocked_lease),
		cmocka_unit_test(spawn_env__drops_and_replaces_names),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
