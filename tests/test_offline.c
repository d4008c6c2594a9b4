// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the offline analysis (tools/offline.c): the PCA, and the
 * daemon's CSV read back into labels and clusters.  The fixtures are the
 * workload's rows of real runs, whose label column is what the daemon
 * said: tests/data/offline-leak.csv of 'cachescoped --workload leak
 * --duration 20 --csv' (kvref leaking fds and KV blocks),
 * tests/data/offline-mixed.csv of '--workload mixed --duration 40' (its
 * normal, thrash, false sharing and leak phases, 10 s each).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <getopt.h>
#include <cmocka.h>
#include "helpers/tmpdir.h"
#include "../tools/offline.h"
#include "../tools/pca.h"

#define FIXTURE "tests/data/offline-leak.csv"
#define MIXED "tests/data/offline-mixed.csv"

static char dir[] = "/tmp/cs-test-offline-XXXXXX";

TMPDIR_GROUP(dir)

static const struct offline_params defaults = { .eps = 0.08, .min_pts = 5 };

/* The fixtures' rows were labelled by a daemon of 2026-12-02, under the
 * rules of then (tests/data/offline-recorded.rules: a leak amid churn rose
 * 2 s, and thrash had no cost test, the page cache's stall not being in a
 * CSV).  The offline path reproduces that daemon under those rules; today's
 * defaults differ on purpose. */
#define RECORDED_RULES "tests/data/offline-recorded.rules"
static struct offline_params recorded;

static const struct offline_params *as_recorded(void)
{
	recorded = defaults;
	recorded.rules_path = RECORDED_RULES;
	return &recorded;
}

static const struct off_key *find_key(const struct offline *o, const char *name)
{
	size_t i;

	for (i = 0; i < o->nkeys; i++)
		if (!strcmp(o->keys[i].name, name) && !strcmp(o->keys[i].comm, "kvref"))
			return &o->keys[i];
	return NULL;
}

static void pca2__points_on_a_line__first_component_along_it(void **state)
{
	double pts[50 * 5], xy[50 * 2], var[2], load[10];
	int i;

	(void)state;
	for (i = 0; i < 50; i++) {
		double t = i / 49.0;

		pts[i * 5 + 0] = t;
		pts[i * 5 + 1] = 2 * t;
		pts[i * 5 + 2] = 0.5;
		pts[i * 5 + 3] = (i % 2) * 1e-3;	/* a little spread across */
		pts[i * 5 + 4] = 0;
	}
	assert_int_equal(pca2(pts, 50, 5, xy, var, load), 0);
	assert_true(var[0] > 0.999);
	assert_true(var[1] < 0.001);
	assert_true(fabs(load[0 * 2] - 1 / sqrt(5)) < 1e-9);
	assert_true(fabs(load[1 * 2] - 2 / sqrt(5)) < 1e-9);
	assert_true(fabs(load[2 * 2]) < 1e-9);
	assert_true(fabs(fabs(load[3 * 2 + 1]) - 1) < 1e-6);
	/* centred: the ends of the line at -/+ half its length */
	assert_true(fabs(xy[0] + sqrt(5) / 2) < 1e-5);
	assert_true(fabs(xy[49 * 2] - sqrt(5) / 2) < 1e-5);
	assert_int_equal(pca2(pts, 50, 9, xy, var, load), -EINVAL);
}

/* The acceptance: the daemon's leak keys are labelled leak again, as many
 * vectors as the daemon had, and a leak cluster holds them. */
static void offline_load__real_leak_run__leak_on_the_daemons_keys(void **state)
{
	char *files[] = { FIXTURE }, err[700];
	const struct off_key *pool, *dentry, *skb;
	struct offline o;
	bool leak_cluster = false;
	size_t i;

	(void)state;
	assert_int_equal(offline_load(&o, files, 1, as_recorded(), err, sizeof(err)), 0);
	assert_int_equal(o.rows, 1160);
	assert_int_equal(o.nhosts, 1);
	assert_string_equal(o.hosts[0], "vm");
	assert_false(o.host_missing);
	pool = find_key(&o, "kv-pool");
	dentry = find_key(&o, "dentry");
	skb = find_key(&o, "skbuff_head_cache");
	assert_non_null(pool);
	assert_non_null(dentry);
	assert_non_null(skb);
	assert_true(pool->daemon[LABEL_LEAK] > 100);
	assert_int_equal(pool->counts[LABEL_LEAK], pool->daemon[LABEL_LEAK]);
	assert_int_equal(pool->counts[LABEL_NORMAL], pool->daemon[LABEL_NORMAL]);
	assert_true(dentry->daemon[LABEL_LEAK] > 100);
	assert_true(dentry->counts[LABEL_LEAK] >= dentry->daemon[LABEL_LEAK]);
	/* what the kernel's count would have said is not in the file: never
	 * fewer leaks than the daemon, and no other anomaly on a clean key */
	assert_int_equal(skb->counts[LABEL_LEAK] + skb->counts[LABEL_THRASH] +
			 skb->counts[LABEL_FALSE_SHARING], 0);
	assert_int_equal(o.confusion[LABEL_LEAK][LABEL_NORMAL], 0);
	/* leaking and balanced fd churn share their five features: the
	 * leak's vectors sit in a cluster of their shape, which carries them
	 * in its counts (its label is its members' majority) */
	for (i = 0; i < o.an.nclusters; i++)
		if (o.an.clusters[i].counts[LABEL_LEAK] >= 100 &&
		    (o.an.clusters[i].label == LABEL_LEAK || strstr(o.an.clusters[i].reason, "leak")))
			leak_cluster = true;
	assert_true(leak_cluster);
	offline_release(&o);
}

/* The labels that rest on history rebuilt from the rows (refaults of a
 * file or pool over its last 32 windows, locality over the last second)
 * come out as the daemon's, vector for vector, key by key. */
static void offline_load__real_mixed_run__thrash_and_false_sharing_as_the_daemon(void **state)
{
	static const char *const keys[] = { "kv-pool", "kmalloc-512", "skbuff_head_cache",
					    "254:0:1122529", "dentry", "filp" };
	char *files[] = { MIXED }, err[700];
	struct offline o;
	bool thrash_cluster = false;
	size_t i;
	int l;

	(void)state;
	assert_int_equal(offline_load(&o, files, 1, as_recorded(), err, sizeof(err)), 0);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const struct off_key *k = find_key(&o, keys[i]);

		assert_non_null(k);
		for (l = 0; l < LABEL_COUNT; l++)
			assert_int_equal(k->counts[l], k->daemon[l]);
	}
	assert_true(find_key(&o, "kv-pool")->counts[LABEL_THRASH] > 50);
	assert_true(find_key(&o, "254:0:1122529")->counts[LABEL_THRASH] > 50);
	assert_true(find_key(&o, "skbuff_head_cache")->counts[LABEL_FALSE_SHARING] > 50);
	/* the only difference: leaks the kernel's count (not in the file)
	 * had contradicted */
	for (l = 0; l < LABEL_COUNT; l++)
		for (i = 0; i < LABEL_COUNT; i++)
			if ((int)i != l && !(l == LABEL_NORMAL && i == LABEL_LEAK))
				assert_int_equal(o.confusion[l][i], 0);
	for (i = 0; i < o.an.nclusters; i++)
		if (o.an.clusters[i].label == LABEL_THRASH &&
		    strstr(o.an.clusters[i].keys, "254:0:1122529"))
			thrash_cluster = true;
	assert_true(thrash_cluster);
	offline_release(&o);
}

/* Copy the fixture with each line changed by fn. */
static void copy_fixture(const char *to, void (*fn)(char *line, size_t n))
{
	static char buf[16384];		/* fn may lengthen a line: room */
	FILE *in = fopen(FIXTURE, "r"), *out = fopen(to, "w");
	char *line = NULL;
	size_t cap = 0, n = 0;

	assert_non_null(in);
	assert_non_null(out);
	while (getline(&line, &cap, in) > 0) {
		assert_true(strlen(line) < sizeof(buf) / 2);
		strcpy(buf, line);
		fn(buf, ++n);
		fputs(buf, out);
	}
	free(line);
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

/* the host column is the last: cut it off (the fixture's host is "vm") */
static void drop_host(char *line, size_t n)
{
	char *comma = strrchr(line, ',');

	(void)n;
	if (comma)
		strcpy(comma, "\n");
}

static void bad_line_5(char *line, size_t n)
{
	char *p;

	if (n != 5)
		return;
	/* ts,window,window_ms,domain,key,... : window becomes "x" */
	p = strchr(line, ',');
	if (p)
		*++p = 'x';
}

/* The last row's window: the fixture's 1160th row (line 1161) */
static const char *last_window;

static void set_last_window(char *line, size_t n)
{
	char *p, *q, rest[8192];

	if (n != 1161)
		return;
	/* ts,window,... : window becomes last_window */
	p = strchr(line, ',');
	assert_non_null(p);
	q = strchr(p + 1, ',');
	assert_non_null(q);
	snprintf(rest, sizeof(rest), "%s", q);
	sprintf(p + 1, "%s%s", last_window, rest);
}

/*
 * A window no run reaches (the largest count there is) is one clear error;
 * a far one, past a gap of 10^10 windows, is read at once.  Both hung
 * before: the collections between two windows were replayed one by one,
 * and past 2^64 the count wrapped.  The alarm fails the test if it hangs.
 */
static void offline_load__window_far_or_past_the_clock__read_or_refused_at_once(void **state)
{
	char path[256], *files[1] = { path }, err[700], want[400];
	struct offline o;

	(void)state;
	snprintf(path, sizeof(path), "%s/window.csv", dir);
	last_window = "18446744073709551615";
	copy_fixture(path, set_last_window);
	alarm(20);
	assert_int_equal(offline_load(&o, files, 1, &defaults, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:1161: column window: 18446744073709551615 windows of 100 ms pass what a clock can count",
		 path);
	assert_string_equal(err, want);
	offline_release(&o);
	last_window = "10000000000";
	copy_fixture(path, set_last_window);
	assert_int_equal(offline_load(&o, files, 1, as_recorded(), err, sizeof(err)), 0);
	assert_int_equal(o.rows, 1160);
	offline_release(&o);
	alarm(0);
}

/* kv-pool's rows made a family's, whose tgid cell says what it likes: a
 * terminal's escape (the CSV is anyone's to write) */
static void family_tgid_escape(char *line, size_t n)
{
	char out[16384], *p = line, *q;
	size_t i;

	(void)n;
	if (!strstr(line, ",kv-pool,"))
		return;
	for (i = 0; i < 6; i++)		/* to the tgid cell: the 7th */
		p = strchr(p, ',') + 1;
	q = strchr(p, ',');
	snprintf(out, sizeof(out), "%.*s\x1b]0;owned\x07%.*s", (int)(p - line), line,
		 (int)(strlen(q)), q);
	strcpy(line, out);
	/* key_kind, the 54th cell, after the quoted reason (the 41st) */
	p = line;
	for (i = 0; i < 40; i++)
		p = strchr(p, ',') + 1;
	assert_true(*p == '"');
	for (p++; !(p[0] == '"' && p[1] != '"'); p += p[0] == '"' ? 2 : 1)
		;
	p += 2;				/* past '",': the 42nd cell */
	for (i = 42; i < 54; i++)
		p = strchr(p, ',') + 1;
	q = p + strcspn(p, ",\n");
	snprintf(out, sizeof(out), "%.*sfamily%s", (int)(p - line), line, q);
	strcpy(line, out);
}

/* cachescope cluster (argv: "cluster" and one file) run here, its stdout
 * into fd; its exit code. */
static int cluster_into(int fd, char **argv)
{
	int saved, rc;

	fflush(stdout);
	saved = dup(1);
	assert_true(saved >= 0);
	assert_int_equal(dup2(fd, 1), 1);
	optind = 0;
	rc = offline_cluster_main(2, argv);
	fflush(stdout);
	assert_int_equal(dup2(saved, 1), 1);
	close(saved);
	return rc;
}

/* cachescope cluster prints a family's tgid cell escaped, as every other
 * name from the CSV (it went out raw before) */
static void cluster__family_tgid_from_the_file__printed_escaped(void **state)
{
	char path[256], outpath[300], out[65536], *argv[] = { "cluster", path, NULL };
	int fd;
	ssize_t n;

	(void)state;
	snprintf(path, sizeof(path), "%s/family.csv", dir);
	copy_fixture(path, family_tgid_escape);
	/* cachescope cluster FILE, here, its stdout into a file */
	snprintf(outpath, sizeof(outpath), "%s/family.out", dir);
	fd = open(outpath, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(cluster_into(fd, argv), 0);
	n = pread(fd, out, sizeof(out) - 1, 0);
	close(fd);
	assert_true(n > 0);
	out[n] = '\0';
	assert_non_null(strstr(out, "kv-pool"));
	assert_null(strchr(out, '\x1b'));
	assert_null(strchr(out, '\x07'));
	assert_non_null(strstr(out, "\\x1b]0;owned"));
}

/* Too few vectors for any cluster: the table is printed empty (make fuzz's
 * cluster harness found an empty cluster table copied from NULL, which
 * UBSan stops; the unit tests' ASan build runs this under it). */
static void cluster__too_few_vectors__no_clusters_printed(void **state)
{
	char path[256], cmd[600], *argv[] = { "cluster", path, NULL };
	int null;

	(void)state;
	/* the harness's input, as it found it */
	snprintf(path, sizeof(path), "%s/no-clusters.csv", dir);
	snprintf(cmd, sizeof(cmd), "cp tests/fuzz/corpus/cluster/no-clusters.csv '%s'", path);
	assert_int_equal(system(cmd), 0);
	null = open("/dev/null", O_WRONLY);
	assert_true(null >= 0);
	assert_int_equal(cluster_into(null, argv), 0);
	close(null);
}

static void offline_load__no_host_column__same_labels(void **state)
{
	char path[256], *files[2] = { FIXTURE, path }, err[700];
	struct offline o;
	const struct off_key *a = NULL, *b = NULL;
	size_t i, n = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/nohost.csv", dir);
	copy_fixture(path, drop_host);
	/* both files at once: two keys each, and one of them has no host */
	assert_int_equal(offline_load(&o, files, 2, &defaults, err, sizeof(err)), 0);
	assert_true(o.host_missing);
	assert_int_equal(o.nhosts, 2);
	assert_int_equal(o.rows, 2 * 1160);
	for (i = 0; i < o.nkeys; i++) {
		if (strcmp(o.keys[i].name, "kv-pool"))
			continue;
		n++;
		if (o.keys[i].file == 0)
			a = &o.keys[i];
		else
			b = &o.keys[i];
	}
	assert_int_equal(n, 2);
	assert_non_null(a);
	assert_non_null(b);
	assert_memory_equal(a->counts, b->counts, sizeof(a->counts));
	assert_string_equal(o.hosts[b->host], "");
	offline_release(&o);
}

static void offline_load__bad_row__file_and_line(void **state)
{
	char path[256], *files[1] = { path }, err[700], want[400];
	struct offline o;

	(void)state;
	snprintf(path, sizeof(path), "%s/bad.csv", dir);
	copy_fixture(path, bad_line_5);
	assert_int_equal(offline_load(&o, files, 1, &defaults, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:5: column window: not a count: 'x", path);
	assert_true(!strncmp(err, want, strlen(want)));
	assert_null(strchr(err, '\n'));
	offline_release(&o);

	files[0] = "/nonexistent/x.csv";
	assert_int_equal(offline_load(&o, files, 1, &defaults, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "cannot open /nonexistent/x.csv: No such file or directory");
	offline_release(&o);
}

static void offline_load__rules_file__thresholds_apply(void **state)
{
	char path[256], *files[1] = { FIXTURE }, err[700], want[300];
	struct offline_params p = defaults;
	struct offline o;
	size_t i;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/rules", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "# no rise is that big\nleak_min_objects = 1000000\n");
	assert_int_equal(fclose(f), 0);
	p.rules_path = path;
	assert_int_equal(offline_load(&o, files, 1, &p, err, sizeof(err)), 0);
	for (i = 0; i < o.nkeys; i++)
		assert_int_equal(o.keys[i].counts[LABEL_LEAK], 0);
	offline_release(&o);

	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "leak_min_objects = 3\nno_such_rule = 1\n");
	assert_int_equal(fclose(f), 0);
	assert_int_not_equal(offline_load(&o, files, 1, &p, err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "invalid --rules %s: line 2: no such rule", path);
	assert_true(!strncmp(err, want, strlen(want)));
	offline_release(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pca2__points_on_a_line__first_component_along_it),
		cmocka_unit_test(offline_load__real_leak_run__leak_on_the_daemons_keys),
		cmocka_unit_test(offline_load__real_mixed_run__thrash_and_false_sharing_as_the_daemon),
		cmocka_unit_test(offline_load__no_host_column__same_labels),
		cmocka_unit_test(offline_load__window_far_or_past_the_clock__read_or_refused_at_once),
		cmocka_unit_test(cluster__family_tgid_from_the_file__printed_escaped),
		cmocka_unit_test(cluster__too_few_vectors__no_clusters_printed),
		cmocka_unit_test(offline_load__bad_row__file_and_line),
		cmocka_unit_test(offline_load__rules_file__thresholds_apply),
	};

	return cmocka_run_group_tests_name("offline", tests, setup, teardown);
}
