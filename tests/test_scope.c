// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Integration tests of what is traced, and of what rows say about where a
 * process runs: --cgroup over a whole subtree, the cgroup column, and
 * --pid-tree over the traced process's descendants (those at start and
 * those forked later).  Real cachescoped, real BPF; needs root.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers/harness.h"

static bool has_rows_of(const struct table *t, long tgid)
{
	int r;

	for (r = 0; r < t->nrows; r++)
		if (atol(cell(t, r, "tgid")) == tgid)
			return true;
	return false;
}

/* A process in parent/child is traced with --cgroup parent, one outside
 * is not, and the rows of the first name the child cgroup. */
static void filter__cgroup_parent__child_cgroup_seen_outside_not(void **state)
{
	const char *extra[] = { "--cgroup", NULL, NULL };
	const char *root = cgroup2_root();
	char parent[300], child[320], rel[64], cmd[900], out[256];
	long inside, outside;
	struct daemon d;
	struct table t;
	int r, named = 0;

	need_root(state);
	if (!root) {
		fprintf(stderr, "no cgroup v2 hierarchy mounted: skipped\n");
		skip();
	}
	snprintf(rel, sizeof(rel), "/cs-test-%d/child", getpid());
	snprintf(parent, sizeof(parent), "%s/cs-test-%d", root, getpid());
	snprintf(child, sizeof(child), "%s/child", parent);
	assert_int_equal(mkdir(parent, 0755), 0);
	assert_int_equal(mkdir(child, 0755), 0);
	extra[1] = parent;
	daemon_start(&d, "cgtree", 2, extra);
	/* two rounds: alive when the daemon reads its cgroup (its first
	 * records, a tick later) */
	snprintf(cmd, sizeof(cmd), "sh -c 'echo $$ > %s/cgroup.procs && exec %s/tests/helpers/fdchurn 300 2 --period-ms 400'",
		 child, build);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	inside = helper_pid(out);
	snprintf(cmd, sizeof(cmd), "%s/tests/helpers/fdchurn 300", build);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	outside = helper_pid(out);
	assert_int_equal(daemon_wait(&d), 0);
	rmdir(child);
	rmdir(parent);
	check_summary(&d, true);
	table_read(&t, d.csv);
	assert_true(sum(&t, "filp", inside, "allocs") >= 600);
	assert_false(has_rows_of(&t, outside));
	for (r = 0; r < t.nrows; r++) {
		if (atol(cell(&t, r, "tgid")) != inside)
			continue;
		assert_string_equal(cell(&t, r, "cgroup"), rel);
		assert_string_equal(cell(&t, r, "container"), "");
		named++;
	}
	assert_true(named > 0);
}

/* Rows of processes in the root cgroup or anywhere say where, too: the
 * test's own helper, untraced by filter, carries its cgroup path. */
static void columns__cgroup__path_of_each_process(void **state)
{
	char self[4096], want[4096], out[256], cmd[600];
	struct daemon d;
	struct table t;
	long pid;
	int r, named = 0;
	FILE *f;
	size_t len;

	need_root(state);
	f = fopen("/proc/self/cgroup", "r");
	assert_non_null(f);
	len = fread(self, 1, sizeof(self) - 1, f);
	fclose(f);
	self[len] = '\0';
	if (!strstr(self, "0::")) {
		fprintf(stderr, "no cgroup v2 line in /proc/self/cgroup: skipped\n");
		skip();
	}
	snprintf(want, sizeof(want), "%s", strstr(self, "0::") + 3);
	want[strcspn(want, "\n")] = '\0';
	daemon_start(&d, "cgcol", 2, NULL);
	/* the helper stays in the test's cgroup */
	snprintf(cmd, sizeof(cmd), "%s/tests/helpers/fdchurn 300 2 --period-ms 400", build);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	pid = helper_pid(out);
	assert_int_equal(daemon_wait(&d), 0);
	table_read(&t, d.csv);
	for (r = 0; r < t.nrows; r++) {
		if (atol(cell(&t, r, "tgid")) != pid)
			continue;
		assert_string_equal(cell(&t, r, "cgroup"), want);
		named++;
	}
	assert_true(named > 0);
}

static void churn(int n)
{
	int i;

	for (i = 0; i < n; i++)
		close(eventfd(0, 0));
}

/* A traced process P with a child A forked before the daemon starts; on
 * go, A churns, and P forks B, which churns.  Reports A and B. */
static pid_t spawn_tree(int go[2], int rep[2])
{
	pid_t p, a, b;
	char c;

	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(rep), 0);
	p = fork();
	assert_true(p >= 0);
	if (p)
		return p;
	close(go[1]);
	close(rep[0]);
	a = fork();
	if (!a) {
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		churn(500);
		_exit(0);
	}
	if (read(go[0], &c, 1) != 1)
		_exit(1);
	b = fork();
	if (!b) {
		churn(500);
		_exit(0);
	}
	waitpid(a, NULL, 0);
	waitpid(b, NULL, 0);
	if (write(rep[1], &a, sizeof(a)) != sizeof(a) || write(rep[1], &b, sizeof(b)) != sizeof(b))
		_exit(1);
	_exit(0);
}

/* Run the tree beside a daemon tracing P (with --pid-tree when tree);
 * the table, P, A and B. */
static void run_tree(bool tree, bool classic, struct table *t, pid_t *p, pid_t *a, pid_t *b)
{
	const char *extra[6] = { "--pid", NULL, NULL, NULL, NULL, NULL };
	int go[2], rep[2];
	char pidbuf[16];
	struct daemon d;

	*p = spawn_tree(go, rep);
	close(go[0]);
	close(rep[1]);
	snprintf(pidbuf, sizeof(pidbuf), "%d", *p);
	extra[1] = pidbuf;
	extra[2] = tree ? "--pid-tree" : NULL;
	if (classic) {
		extra[tree ? 3 : 2] = "--tracepoints";
		extra[tree ? 4 : 3] = "classic";
	}
	/* A exists before the daemon starts: wait until it is P's child */
	sleep_ms(50);
	daemon_start(&d, tree ? (classic ? "ptree-classic" : "ptree") : "pidonly", 2, extra);
	assert_int_equal(write(go[1], "xx", 2), 2);
	close(go[1]);
	assert_int_equal(read(rep[0], a, sizeof(*a)), sizeof(*a));
	assert_int_equal(read(rep[0], b, sizeof(*b)), sizeof(*b));
	close(rep[0]);
	waitpid(*p, NULL, 0);
	assert_int_equal(daemon_wait(&d), 0);
	check_summary(&d, true);
	table_read(t, d.csv);
}

static void check_tree(bool classic)
{
	struct table t;
	pid_t p, a, b;
	int r;

	run_tree(true, classic, &t, &p, &a, &b);
	assert_true(sum(&t, "filp", a, "allocs") >= 500);
	assert_true(sum(&t, "filp", b, "allocs") >= 500);
	/* nothing else: the filter is still the tree */
	for (r = 0; r < t.nrows; r++) {
		long tgid = atol(cell(&t, r, "tgid"));

		assert_true(tgid == p || tgid == a || tgid == b);
	}
}

static void filter__pid_tree__descendants_at_start_and_forked_later(void **state)
{
	need_root(state);
	check_tree(false);
}

/* the classic fork tracepoint names the child by thread id: the same */
static void filter__pid_tree_classic__same_descendants(void **state)
{
	need_root(state);
	check_tree(true);
}

static void filter__pid_alone__descendants_not_seen(void **state)
{
	struct table t;
	pid_t p, a, b;

	need_root(state);
	run_tree(false, false, &t, &p, &a, &b);
	assert_false(has_rows_of(&t, a));
	assert_false(has_rows_of(&t, b));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(filter__cgroup_parent__child_cgroup_seen_outside_not),
		cmocka_unit_test(columns__cgroup__path_of_each_process),
		cmocka_unit_test(filter__pid_tree__descendants_at_start_and_forked_later),
		cmocka_unit_test(filter__pid_tree_classic__same_descendants),
		cmocka_unit_test(filter__pid_alone__descendants_not_seen),
	};

	if (getenv("CS_TEST_FILTER"))
		cmocka_set_test_filter(getenv("CS_TEST_FILTER"));
	/* exact keys: a helper younger than the fold age keeps its own tgid */
	harness_exact_keys = true;
	harness_sample = "1";
	return cmocka_run_group_tests_name("scope", tests, harness_setup, harness_teardown);
}
