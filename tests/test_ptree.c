// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the process tree from /proc (daemon/ptree.c), over a /proc
 * copy in a temporary folder. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <unistd.h>
#include <cmocka.h>
#include "helpers/tmpdir.h"
#include "../daemon/ptree.h"

static char proc[64];

static void add_proc(int pid, const char *comm, int ppid)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", proc, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/stat", proc, pid);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%d (%s) S %d %d %d 0 -1 4194560 100 0 0 0\n", pid, comm, ppid, pid, pid);
	fclose(f);
}

static int proc_setup(void **state)
{
	(void)state;
	return tmpdir_make(proc, sizeof(proc), "ptree");
}

static int proc_teardown(void **state)
{
	(void)state;
	return tmpdir_remove(proc);
}

static int cmp_pid(const void *a, const void *b)
{
	return *(const pid_t *)a - *(const pid_t *)b;
}

static void ptree_parse_stat__odd_comm__ppid(void **state)
{
	pid_t ppid = -1;

	(void)state;
	assert_int_equal(ptree_parse_stat("42 (bash) S 7 42 42 0", &ppid), 0);
	assert_int_equal(ppid, 7);
	/* a comm with spaces and parentheses: the last ')' ends it */
	assert_int_equal(ptree_parse_stat("43 (a) b (c) d) R 9 43", &ppid), 0);
	assert_int_equal(ppid, 9);
	assert_int_equal(ptree_parse_stat("1 (init) S 0 1 1", &ppid), 0);
	assert_int_equal(ppid, 0);
}

static void ptree_parse_stat__malformed__einval(void **state)
{
	pid_t ppid = 5;

	(void)state;
	assert_int_equal(ptree_parse_stat("42 bash S 7", &ppid), -EINVAL);
	assert_int_equal(ptree_parse_stat("42 (bash) S", &ppid), -EINVAL);
	assert_int_equal(ptree_parse_stat("42 (bash) S x", &ppid), -EINVAL);
	assert_int_equal(ptree_parse_stat("", &ppid), -EINVAL);
	assert_int_equal(ppid, 5);
}

static void ptree_descendants__tree__all_below_roots_only(void **state)
{
	pid_t roots[] = { 10, 40 }, *d;
	pid_t want[] = { 11, 12, 13, 14, 41 };
	size_t n, i;

	(void)state;
	/* 1 -> 10 -> {11, 12 -> 13 -> 14}; 1 -> 20 -> 21 (unrelated);
	 * 1 -> 40 -> 41; a stat that is no number is skipped */
	add_proc(1, "init", 0);
	add_proc(10, "engine", 1);
	add_proc(11, "worker", 10);
	add_proc(12, "worker (x)", 10);
	add_proc(13, "sh", 12);
	add_proc(14, "gcc", 13);
	add_proc(20, "other", 1);
	add_proc(21, "other", 20);
	add_proc(40, "second", 1);
	add_proc(41, "child", 40);
	{
		char junk[128];

		snprintf(junk, sizeof(junk), "%s/self", proc);
		mkdir(junk, 0755);
	}
	assert_int_equal(ptree_descendants(proc, roots, 2, &d, &n), 0);
	assert_int_equal(n, 5);
	qsort(d, n, sizeof(*d), cmp_pid);
	for (i = 0; i < n; i++)
		assert_int_equal(d[i], want[i]);
	free(d);
	/* a root below another root is not listed as a descendant */
	roots[1] = 12;
	assert_int_equal(ptree_descendants(proc, roots, 2, &d, &n), 0);
	assert_int_equal(n, 3);	/* 11, 13, 14 */
	free(d);
	/* a leaf: none */
	roots[0] = 14;
	assert_int_equal(ptree_descendants(proc, roots, 1, &d, &n), 0);
	assert_int_equal(n, 0);
	assert_null(d);
	assert_true(ptree_alive(proc, 14));
	assert_false(ptree_alive(proc, 15));
}

static void ptree_descendants__no_proc__enoent(void **state)
{
	pid_t root = 1, *d = (pid_t *)1;
	size_t n = 9;

	(void)state;
	assert_int_equal(ptree_descendants("/nonexistent-proc", &root, 1, &d, &n), -ENOENT);
	assert_int_equal(n, 9);
}

static void ptree_descendants__real_proc__finds_a_child(void **state)
{
	pid_t self = getpid(), child, *d;
	size_t n, i;
	bool found = false;

	(void)state;
	child = fork();
	if (!child) {
		pause();
		_exit(0);
	}
	assert_int_equal(ptree_descendants("/proc", &self, 1, &d, &n), 0);
	for (i = 0; i < n; i++)
		found |= d[i] == child;
	free(d);
	kill(child, 9);
	assert_true(found);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ptree_parse_stat__odd_comm__ppid),
		cmocka_unit_test(ptree_parse_stat__malformed__einval),
		cmocka_unit_test(ptree_descendants__tree__all_below_roots_only),
		cmocka_unit_test(ptree_descendants__no_proc__enoent),
		cmocka_unit_test(ptree_descendants__real_proc__finds_a_child),
	};

	return cmocka_run_group_tests_name("ptree", tests, proc_setup, proc_teardown);
}
