// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cachescope plot and cluster, end to end, on the CSV of a real daemon run
 * (tests/data/offline-mixed.csv: the workload's rows of 'cachescoped
 * --workload mixed --duration 40 --csv', kvref through its normal, thrash,
 * false sharing and leak phases; no BPF is loaded here).  The SVG
 * must be well-formed XML (xmllint), self-contained (no script, link or
 * external reference), carry names others chose escaped, and render in
 * headless Chromium to a picture that is not blank and shows the label
 * colours: cells of each of the four labels, far more than the legend's
 * squares (tests/helpers/pngcolours.py counts them, with PIL).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "helpers/tmpdir.h"

#define FIXTURE "tests/data/offline-mixed.csv"
#define RECORDED_RULES "tests/data/offline-recorded.rules"

static char dir[] = "/tmp/cs-test-plot-XXXXXX";
static char csv[256], svg[256], png[256];
static const char *bin;

/* Run cmd through sh with stdout+stderr to out (may be NULL); its exit
 * status, or -1. */
static int run(const char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int run(const char *out, const char *fmt, ...)
{
	char cmd[2048], full[2400];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full), "%s >%s 2>&1", cmd, out ? out : "/dev/null");
	st = system(full);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n + 1);
	if (buf && fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = '\0';
	fclose(f);
	return buf;
}

/* The fixture with the workload's comm renamed to text an SVG must escape:
 * markup, a quote and a byte that is not UTF-8. */
static int setup(void **state)
{
	static char b[256];
	FILE *in, *out;
	char *line = NULL, *p;
	size_t cap = 0;

	(void)state;
	snprintf(b, sizeof(b), "%s/cachescope", getenv("CS_BUILD") ? getenv("CS_BUILD") : "build");
	bin = b;
	if (!mkdtemp(dir))
		return -1;
	snprintf(csv, sizeof(csv), "%s/run<1>&.csv", dir);
	snprintf(svg, sizeof(svg), "%s/out.svg", dir);
	snprintf(png, sizeof(png), "%s/out.png", dir);
	in = fopen(FIXTURE, "r");
	out = fopen(csv, "w");
	if (!in || !out)
		return -1;
	while (getline(&line, &cap, in) > 0) {
		p = strstr(line, ",kvref,");
		if (p) {
			fwrite(line, 1, p - line, out);
			fputs(",\"<&\"\"\xff'>kv\",", out);
			fputs(p + strlen(",kvref,"), out);
		} else {
			fputs(line, out);
		}
	}
	free(line);
	fclose(in);
	return fclose(out);
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

static void cluster__real_mixed_run__names_the_keys_of_each_label(void **state)
{
	char out[300], *text;

	(void)state;
	snprintf(out, sizeof(out), "%s/cluster.txt", dir);
	/* under the rules the daemon that recorded the fixture ran with */
	assert_int_equal(run(out, "%s cluster --rules " RECORDED_RULES " '%s'", bin, csv), 0);
	text = slurp(out);
	assert_non_null(text);
	/* the keys the daemon labelled, per label (its vectors too) */
	assert_non_null(strstr(text, "thrash: 254:0:1122529"));
	assert_non_null(strstr(text, "false_sharing kmalloc-512 90 skbuff_head_cache 90"));
	assert_non_null(strstr(text, "leak          kv-pool 64 dentry 64 kmalloc-64 64 filp 64"));
	assert_non_null(strstr(text, "not in the CSV"));
	/* the daemon's labels again, nearly all (the rules change; the file
	 * lacks the kernel's counts the daemon checked leaks against) */
	{
		const char *l = strstr(text, "labels: ");
		unsigned int same = 0, all = 0;

		assert_non_null(l);
		assert_int_equal(sscanf(l, "labels: %u of %u vectors as the daemon labelled them",
					&same, &all), 2);
		assert_int_equal(all, 3529);
		assert_true(same >= all * 95 / 100);
	}
	/* the comm is escaped for the terminal (\xff, not the byte) */
	assert_non_null(strstr(text, "<&\"\\xff'>kv"));
	assert_null(strchr(text, '\xff'));
	free(text);
	/* JSON that a parser takes */
	assert_int_equal(run(NULL, "%s cluster -j '%s' | /usr/bin/python3 -m json.tool", bin, csv), 0);
	/* bad use: one line, exit 2; a bad file: one line naming it, exit 1 */
	assert_int_equal(run(out, "%s cluster --eps 3 '%s'", bin, csv), 2);
	text = slurp(out);
	assert_string_equal(text, "cachescope cluster: --eps: '3' is not a number in (0, 2.24]\n");
	free(text);
	assert_int_equal(run(out, "%s cluster %s/none.csv", bin, dir), 1);
	text = slurp(out);
	assert_non_null(strstr(text, "cannot open"));
	assert_int_equal(strchr(text, '\n') - text, (long)strlen(text) - 1);
	free(text);
}

static void plot__real_mixed_run__svg_renders_with_the_label_colours(void **state)
{
	char out[300], *s, *p;
	long w = 0, h = 0, colours = 0, white = 0, normal = 0, thrash = 0, fs = 0, leak = 0;
	struct stat st;
	FILE *f;

	(void)state;
	snprintf(out, sizeof(out), "%s/plot.txt", dir);
	assert_int_equal(run(out, "%s plot '%s' --svg %s", bin, csv, svg), 0);
	assert_int_equal(stat(svg, &st), 0);
	/* written whole and renamed: no temporary file left */
	assert_int_equal(run(NULL, "ls %s | grep -q tmp", dir), 1);
	assert_int_equal(run(NULL, "xmllint --noout %s", svg), 0);
	s = slurp(svg);
	assert_non_null(s);
	/* self-contained: nothing to run, nothing to fetch */
	assert_null(strstr(s, "<script"));
	assert_null(strstr(s, "href"));
	assert_null(strstr(s, "url("));
	assert_null(strstr(s, "@import"));
	assert_null(strstr(s, "<image"));
	/* names others chose: escaped for XML, the non-UTF-8 byte as \xff */
	assert_non_null(strstr(s, "&lt;&amp;&quot;\\xff&apos;&gt;kv"));
	assert_null(strchr(s, '\xff'));
	assert_non_null(strstr(s, "run&lt;1&gt;&amp;.csv"));
	assert_non_null(strstr(s, "host vm"));
	/* the picture's own height, for the window */
	p = strstr(s, "height=\"");
	assert_non_null(p);
	h = strtol(p + 8, NULL, 10);
	assert_true(h > 600);
	free(s);

	assert_int_equal(run(NULL, "cd %s && HOME=%s timeout 120 chromium --headless --no-sandbox "
			     "--disable-gpu --hide-scrollbars --screenshot=%s --window-size=1280,%ld "
			     "file://%s", dir, dir, png, h, svg), 0);
	snprintf(out, sizeof(out), "%s/png.txt", dir);
	assert_int_equal(run(out, "/usr/bin/python3 tests/helpers/pngcolours.py %s", png), 0);
	f = fopen(out, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "size %ld %ld colours %ld white %ld normal %ld thrash %ld "
				"false_sharing %ld leak %ld", &w, &h, &colours, &white, &normal,
				&thrash, &fs, &leak), 8);
	fclose(f);
	print_message("png %ldx%ld: %ld colours, white %ld, normal %ld thrash %ld false_sharing %ld leak %ld\n",
		      w, h, colours, white, normal, thrash, fs, leak);
	assert_int_equal(w, 1280);
	/* not blank: many colours, far from all white */
	assert_true(colours > 100);
	assert_true(white < w * h * 9 / 10);
	/* the run's cells of every label: seconds of each, where the
	 * legend's square is 14 x 14 px */
	assert_true(normal > 5000);
	assert_true(leak > 2000);
	assert_true(thrash > 2000);
	assert_true(fs > 2000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cluster__real_mixed_run__names_the_keys_of_each_label),
		cmocka_unit_test(plot__real_mixed_run__svg_renders_with_the_label_colours),
	};

	return cmocka_run_group_tests_name("plot", tests, setup, teardown);
}
