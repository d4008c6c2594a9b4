// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Integration tests of what `make install` lays out, run from a DESTDIR:
 * the files and their modes, the systemd unit (systemd-analyze verify),
 * the man pages (mandoc and groff lint, the options of --help in them and
 * back, the signals the daemon handles in SIGNALS),
 * the installed daemon finding kvref and the CUPTI library in its
 * lib/cachescope directory, the daemon under the unit's capability bounding
 * set, the Grafana dashboard's metric names against a real scrape, and
 * `make uninstall`.  The tests after the first use its tree.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "helpers/harness.h"

#define PREFIX "/usr/local"

static char dest[300];		/* DESTDIR */
static bool installed;

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* dest + PREFIX + rel */
static const char *in_dest(char *buf, size_t n, const char *rel)
{
	snprintf(buf, n, "%s" PREFIX "/%s", dest, rel);
	return buf;
}

static bool have(const char *tool)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	return !system(cmd);
}

static void need(const char *tool)
{
	if (!have(tool)) {
		fprintf(stderr, "%s not installed (make test-deps): skipped\n", tool);
		skip();
	}
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, n, f), (size_t)n);
	fclose(f);
	return buf;
}

static int make_in_dest(const char *target, char *out, size_t n)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -s OUTPUT=%s DESTDIR=%s %s 2>&1",
		 build, dest, target);
	return run_cmd(cmd, out, n);
}

static void ensure_installed(void)
{
	char out[8192];

	if (installed)
		return;
	snprintf(dest, sizeof(dest), "%s/destdir", tmpdir);
	/* kvref runs as a user of its own, from here */
	assert_int_equal(chmod(tmpdir, 0755), 0);
	if (make_in_dest("install", out, sizeof(out))) {
		fprintf(stderr, "%s", out);
		fail_msg("make install DESTDIR=%s failed", dest);
	}
	installed = true;
}

static void expect_file(const char *rel, mode_t mode)
{
	char p[600];
	struct stat st;

	in_dest(p, sizeof(p), rel);
	if (lstat(p, &st))
		fail_msg("%s: %s", p, strerror(errno));
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, mode);
	assert_int_equal(st.st_uid, geteuid());
}

static bool built(const char *name)
{
	char p[400];

	snprintf(p, sizeof(p), "%s/%s", build, name);
	return !access(p, F_OK);
}

static void install__destdir__every_file_in_place(void **state)
{
	char p[600], link[600];
	ssize_t n;

	need_root(state);
	ensure_installed();
	expect_file("sbin/cachescoped", 0755);
	expect_file("bin/cachescope", 0755);
	expect_file("lib/cachescope/kvref", 0755);
	if (built("libcachescope_cupti.so"))
		expect_file("lib/cachescope/libcachescope_cupti.so", 0755);
	if (built("kvref_cuda.so"))
		expect_file("lib/cachescope/kvref_cuda.so", 0755);
	expect_file("share/man/man8/cachescoped.8", 0644);
	expect_file("share/man/man1/cachescope.1", 0644);
	expect_file("lib/systemd/system/cachescoped.service", 0644);
	expect_file("share/cachescope/grafana/cachescope.json", 0644);
	expect_file("share/cachescope/prometheus/cachescope.rules.yml", 0644);
	expect_file("share/cachescope/clickhouse/schema.sql", 0644);
	/* the service's options, at Debian's place whatever the prefix: the
	 * commented defaults, an operator's own kept at the next install */
	{
		char def[600], out[4096];
		struct stat st;
		FILE *f;

		snprintf(def, sizeof(def), "%s/etc/default/cachescoped", dest);
		assert_int_equal(lstat(def, &st), 0);
		assert_int_equal(st.st_mode & 07777, 0644);
		f = fopen(def, "w");
		assert_non_null(f);
		fputs("CACHESCOPED_OPTS=\"--metrics-addr 127.0.0.1:9999\"\n", f);
		fclose(f);
		assert_int_equal(make_in_dest("install", out, sizeof(out)), 0);
		assert_string_equal(slurp(def), "CACHESCOPED_OPTS=\"--metrics-addr 127.0.0.1:9999\"\n");
		/* and restored, for what follows */
		snprintf(out, sizeof(out), "cp tools/systemd/cachescoped.default '%s'", def);
		assert_int_equal(run_cmd(out, NULL, 0), 0);
	}
	/* kvref on PATH points where it is installed, not into DESTDIR */
	n = readlink(in_dest(p, sizeof(p), "bin/kvref"), link, sizeof(link) - 1);
	assert_true(n > 0);
	link[n] = '\0';
	assert_string_equal(link, PREFIX "/lib/cachescope/kvref");
	/* the unit runs the installed daemon */
	{
		char *unit = slurp(in_dest(p, sizeof(p), "lib/systemd/system/cachescoped.service"));

		assert_non_null(strstr(unit, "\nExecStart=" PREFIX "/sbin/cachescoped $CACHESCOPED_OPTS\n"));
		assert_non_null(strstr(unit, "\nEnvironmentFile=-/etc/default/cachescoped\n"));
		assert_non_null(strstr(unit, "\nStateDirectory=cachescope\n"));
		assert_non_null(strstr(unit, "\nExecReload=" PREFIX "/bin/cachescope reload\n"));
		assert_null(strstr(unit, "@SBINDIR@"));
		assert_null(strstr(unit, "@DEFAULTFILE@"));
		free(unit);
	}
}

/* systemd-analyze verify in a root holding the install and systemd's own
 * units (sysinit.target...), man pages looked up there too: silent. */
static void install__unit__systemd_analyze_verify_clean(void **state)
{
	char root[400], cmd[2400], out[8192];

	need_root(state);
	need("systemd-analyze");
	ensure_installed();
	snprintf(root, sizeof(root), "%s/verify-root", tmpdir);
	snprintf(cmd, sizeof(cmd), "rm -rf %s && mkdir -p %s/usr/lib/systemd && "
		 "cp -a /usr/lib/systemd/system %s/usr/lib/systemd/ && cp -a %s/. %s/ 2>&1",
		 root, root, root, dest, root);
	assert_int_equal(run_cmd(cmd, NULL, 0), 0);
	snprintf(cmd, sizeof(cmd), "MANPATH=%s" PREFIX "/share/man systemd-analyze verify "
		 "--root=%s " PREFIX "/lib/systemd/system/cachescoped.service 2>&1", root, root);
	if (run_cmd(cmd, out, sizeof(out)) || out[0])
		fail_msg("systemd-analyze verify: %s", out);
	/* the sandbox's exposure, as systemd scores it (4.3 at 0f97250) */
	snprintf(cmd, sizeof(cmd), "systemd-analyze security --offline=yes --root=%s "
		 PREFIX "/lib/systemd/system/cachescoped.service 2>&1 | grep 'Overall exposure level'", root);
	if (!run_cmd(cmd, out, sizeof(out))) {
		const char *p = strstr(out, "cachescoped.service: ");
		double score;

		assert_non_null(p);
		assert_int_equal(sscanf(p + 21, "%lf", &score), 1);
		fprintf(stderr, "systemd-analyze security: %.1f\n", score);
		assert_true(score <= 4.5);
	}
}

static void install__man_pages__lint_clean(void **state)
{
	const char *pages[] = { "share/man/man8/cachescoped.8", "share/man/man1/cachescope.1" };
	char p[600], cmd[1400], out[8192];
	size_t i;

	need_root(state);
	need("mandoc");
	need("groff");
	ensure_installed();
	for (i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
		in_dest(p, sizeof(p), pages[i]);
		snprintf(cmd, sizeof(cmd), "mandoc -Tlint -Wwarning %s 2>&1", p);
		if (run_cmd(cmd, out, sizeof(out)) || out[0])
			fail_msg("mandoc -Tlint %s: %s", p, out);
		snprintf(cmd, sizeof(cmd), "LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z %s 2>&1", p);
		if (run_cmd(cmd, out, sizeof(out)) || out[0])
			fail_msg("groff -ww %s: %s", p, out);
	}
}

/* Every --long option of text, each once, into v (n at most). */
static int long_options(const char *text, char v[][32], int n, bool roff)
{
	const char *s = text;
	int k = 0, i;

	while ((s = strstr(s, roff ? "\\-\\-" : "--"))) {
		char name[32];
		size_t len = 0;

		s += roff ? 4 : 2;
		while (len + 1 < sizeof(name) && (islower((unsigned char)*s) || *s == '-' ||
						   (roff && *s == '\\' && s[1] == '-'))) {
			if (*s == '\\')
				s++;
			name[len++] = *s++;
		}
		name[len] = '\0';
		if (!len)
			continue;
		for (i = 0; i < k && strcmp(v[i], name); i++)
			;
		if (i == k && k < n)
			snprintf(v[k++], 32, "%s", name);
	}
	return k;
}

static bool listed(char v[][32], int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(v[i], name))
			return true;
	return false;
}

/* The pages say what --help says: the daemon's options both ways, every
 * option and command of the CLI's help in its page. */
static void install__man_pages__options_match_help(void **state)
{
	static char help[96][32], page[96][32];
	char p[600], cmd[700], out[16384], *man, *line;
	int nh, np, i;

	need_root(state);
	ensure_installed();
	snprintf(cmd, sizeof(cmd), "%s --help", in_dest(p, sizeof(p), "sbin/cachescoped"));
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	nh = long_options(out, help, 96, false);
	man = slurp(in_dest(p, sizeof(p), "share/man/man8/cachescoped.8"));
	np = long_options(man, page, 96, true);
	assert_true(nh > 20);
	for (i = 0; i < nh; i++)
		if (!listed(page, np, help[i]))
			fail_msg("cachescoped.8 lacks --%s", help[i]);
	for (i = 0; i < np; i++)
		if (!listed(help, nh, page[i]))
			fail_msg("cachescoped.8 has --%s, which --help does not", page[i]);
	free(man);

	snprintf(cmd, sizeof(cmd), "%s --help", in_dest(p, sizeof(p), "bin/cachescope"));
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	man = slurp(in_dest(p, sizeof(p), "share/man/man1/cachescope.1"));
	nh = long_options(out, help, 96, false);
	np = long_options(man, page, 96, true);
	for (i = 0; i < nh; i++)
		if (!listed(page, np, help[i]))
			fail_msg("cachescope.1 lacks --%s", help[i]);
	/* and back: each option of the page is in the help of the CLI or of
	 * one of its offline verbs (cachescope cluster --help, plot --help) */
	for (i = 0; i < np; i++) {
		static char verb[96][32];
		char vout[32768];
		int nv, k;
		bool found = listed(help, nh, page[i]);

		/* or the daemon's, which the page names where they matter */
		for (k = 0; !found && k < 3; k++) {
			if (k == 2)
				snprintf(cmd, sizeof(cmd), "%s --help",
					 in_dest(p, sizeof(p), "sbin/cachescoped"));
			else
				snprintf(cmd, sizeof(cmd), "%s %s --help",
					 in_dest(p, sizeof(p), "bin/cachescope"), k ? "plot" : "cluster");
			assert_int_equal(run_cmd(cmd, vout, sizeof(vout)), 0);
			nv = long_options(vout, verb, 96, false);
			found = listed(verb, nv, page[i]);
		}
		if (!found)
			fail_msg("cachescope.1 has --%s, which no --help of cachescope does", page[i]);
	}
	/* the commands: the first word of each line under "commands:" (a
	 * line indented further continues the one before) */
	line = strstr(out, "commands:\n");
	assert_non_null(line);
	for (line = strchr(line, '\n') + 1; line[0] == ' '; line = strchr(line, '\n') + 1) {
		char word[32], want[40];

		if (!strncmp(line, "   ", 3))
			continue;
		assert_int_equal(sscanf(line, " %31s", word), 1);
		snprintf(want, sizeof(want), "\n.B %s\n", word);
		if (!strstr(man, want)) {
			snprintf(want, sizeof(want), "\n.BR %s ", word);
			if (!strstr(man, want))
				fail_msg("cachescope.1 lacks the command %s", word);
		}
	}
	free(man);
}

/* The signals the daemon handles (its signalfd mask and the ones it
 * ignores, read from daemon/main.c) are the ones cachescoped.8's SIGNALS
 * section names, and the unit's ExecReload does what SIGHUP does
 * (cachescope reload; both are tested live by test_cli_live). */
static void install__man_signals__match_the_daemons(void **state)
{
	static const char *const names[] = { "SIGINT", "SIGTERM", "SIGHUP", "SIGUSR1", "SIGUSR2",
					     "SIGPIPE", "SIGQUIT", "SIGCHLD", "SIGALRM" };
	char p[600], want[64], *src, *man, *sect, *end, *unit;
	size_t i;

	need_root(state);
	ensure_installed();
	src = slurp("daemon/main.c");
	man = slurp(in_dest(p, sizeof(p), "share/man/man8/cachescoped.8"));
	sect = strstr(man, "\n.SH SIGNALS\n");
	assert_non_null(sect);
	end = strstr(sect + 1, "\n.SH ");
	assert_non_null(end);
	*end = '\0';
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		bool handled, named;

		snprintf(want, sizeof(want), "sigaddset(&mask, %s)", names[i]);
		handled = strstr(src, want);
		snprintf(want, sizeof(want), "signal(%s, ", names[i]);
		handled = handled || strstr(src, want);
		named = strstr(sect, names[i]);
		if (handled && !named)
			fail_msg("cachescoped.8's SIGNALS lacks %s, which the daemon handles", names[i]);
		if (!handled && named)
			fail_msg("cachescoped.8's SIGNALS names %s, which the daemon does not handle",
				 names[i]);
	}
	assert_non_null(strstr(sect, "systemctl reload"));
	/* the reload asks the daemon as SIGHUP would, and says how it went */
	unit = slurp(in_dest(p, sizeof(p), "lib/systemd/system/cachescoped.service"));
	snprintf(want, sizeof(want), "\nExecReload=" PREFIX "/bin/cachescope reload\n");
	if (!strstr(unit, want))
		fail_msg("the unit lacks %s", want + 1);
	free(unit);
	free(man);
	free(src);
}

/* The installed daemon runs kvref and watches the CUPTI library from its
 * lib/cachescope directory; --interval and the phase echo on stderr. */
static void installed_daemon__workload__found_in_pkglib_status_and_phases(void **state)
{
	char p[600], cmd[1600], out[300], err[300], lib[700], *o, *e;
	const char *s;
	int lines = 0;

	need_root(state);
	ensure_installed();
	snprintf(out, sizeof(out), "%s/inst.out", tmpdir);
	snprintf(err, sizeof(err), "%s/inst.err", tmpdir);
	snprintf(cmd, sizeof(cmd), "%s --workload normal --duration 5 --socket none --top 0 "
		 "--interval 1 -v >%s 2>%s", in_dest(p, sizeof(p), "sbin/cachescoped"), out, err);
	if (run_cmd(cmd, NULL, 0)) {
		e = slurp(err);
		fail_msg("the installed daemon failed: %s", e);
	}
	o = slurp(out);
	e = slurp(err);
	/* kvref ran (its report and the score), the phase was echoed */
	assert_non_null(strstr(o, "workload report (kvref):"));
	assert_non_null(strstr(o, "\nscore: "));	/* how well is not this test's */
	assert_non_null(strstr(e, "cachescoped: workload: phase normal starts at "));
	for (s = e; (s = strstr(s, " events (")); s++)
		lines++;
	assert_true(lines >= 2);	/* 5 s, one a second */
	assert_non_null(strstr(e, " dropped, "));
	if (built("libcachescope_cupti.so")) {
		snprintf(lib, sizeof(lib), "watching CUPTI records of every process that loads %s",
			 in_dest(p, sizeof(p), "lib/cachescope/libcachescope_cupti.so"));
		if (!strstr(e, lib))
			fail_msg("no '%s' in: %s", lib, e);
	}
	free(o);
	free(e);
}

/* The unit's CapabilityBoundingSet= as setpriv's -all,+bpf,+perfmon... */
static void unit_caps(char *buf, size_t n)
{
	char p[600], *unit, *line, *tok, *save;
	size_t len;

	unit = slurp(in_dest(p, sizeof(p), "lib/systemd/system/cachescoped.service"));
	line = strstr(unit, "\nCapabilityBoundingSet=");
	assert_non_null(line);
	line += strlen("\nCapabilityBoundingSet=");
	line[strcspn(line, "\n")] = '\0';
	len = snprintf(buf, n, "-all");
	for (tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *c;

		assert_true(!strncmp(tok, "CAP_", 4));
		len += snprintf(buf + len, n - len, ",+");
		for (c = tok + 4; *c && len + 1 < n; c++)
			buf[len++] = tolower((unsigned char)*c);
		buf[len] = '\0';
	}
	free(unit);
}

/* A metric name of the scrape's "# TYPE name kind" lines, or a series of
 * a histogram's (name_bucket, _sum, _count of "# TYPE name histogram"). */
static bool exported(const char *scrape, const char *name)
{
	static const char *const parts[] = { "_bucket", "_sum", "_count" };
	char want[160];
	size_t i, n = strlen(name);

	snprintf(want, sizeof(want), "\n# TYPE %s ", name);
	if (strstr(scrape, want))
		return true;
	for (i = 0; i < 3; i++) {
		size_t k = strlen(parts[i]);

		if (n > k && !strcmp(name + n - k, parts[i])) {
			snprintf(want, sizeof(want), "\n# TYPE %.*s histogram\n", (int)(n - k), name);
			return strstr(scrape, want) != NULL;
		}
	}
	return false;
}

/* Grafana's variables as Prometheus would get them: a range, any instance */
static void grafana_vars(char *out, size_t n, const char *q)
{
	static const char *const from[] = { "$__rate_interval", "$__range", "$instance" };
	static const char *const to[] = { "1m", "1h", ".*" };
	size_t len = 0, i;

	while (*q && len + 8 < n) {
		for (i = 0; i < 3 && strncmp(q, from[i], strlen(from[i])); i++)
			;
		if (i < 3) {
			len += snprintf(out + len, n - len, "%s", to[i]);
			q += strlen(from[i]);
		} else {
			out[len++] = *q++;
		}
	}
	out[len] = '\0';
}

/* Every cachescope_* name the dashboard's queries use is exported, and
 * each query parses as PromQL (promtool, with Grafana's variables put in). */
static void check_dashboard(const char *scrape_path)
{
	char p[600], cmd[2000], names[8192], out[8192], rules[300];
	char *scrape = slurp(scrape_path), *name, *save;
	int n = 0;
	FILE *f;

	in_dest(p, sizeof(p), "share/cachescope/grafana/cachescope.json");
	snprintf(cmd, sizeof(cmd), "jq -e . %s >/dev/null", p);
	assert_int_equal(run_cmd(cmd, NULL, 0), 0);
	snprintf(cmd, sizeof(cmd), "jq -r '.. | objects | (.expr?, .query?.query?, .definition?) "
		 "// empty' %s | grep -o 'cachescope_[a-z0-9_]*' | sort -u", p);
	assert_int_equal(run_cmd(cmd, names, sizeof(names)), 0);
	for (name = strtok_r(names, "\n", &save); name; name = strtok_r(NULL, "\n", &save), n++)
		if (!exported(scrape, name))
			fail_msg("the dashboard queries %s, which the daemon does not export", name);
	assert_true(n >= 10);
	free(scrape);
	/* a top-N over a range shows N series, not N a step: every topk of
	 * a panel picks its keys once, at the range's end */
	snprintf(cmd, sizeof(cmd), "jq -r '.panels[].targets[].expr | select(test(\"topk\"))' %s", p);
	assert_int_equal(run_cmd(cmd, names, sizeof(names)), 0);
	for (name = strtok_r(names, "\n", &save), n = 0; name; name = strtok_r(NULL, "\n", &save), n++)
		if (!strstr(name, " @ end())") || !strstr(name, " and on(instance, domain, key) topk("))
			fail_msg("a topk panel whose series change over the range: %s", name);
	assert_true(n >= 5);
	/* the anomalous keys as a table, with their reasons and processes */
	snprintf(cmd, sizeof(cmd), "jq -e '[.panels[] | select(.type == \"table\" and "
		 "(.targets[].expr | test(\"cachescope_anomaly_live_bytes\")) and "
		 "(.transformations[].options.indexByName.reason != null) and "
		 "(.transformations[].options.indexByName.comm != null))] | length == 1' %s >/dev/null", p);
	assert_int_equal(run_cmd(cmd, NULL, 0), 0);
	/* and the daemon's own cost */
	snprintf(cmd, sizeof(cmd), "jq -e '[.panels[].targets[].expr | select(test(\"process_cpu_seconds_total\"))] | length >= 1' %s >/dev/null", p);
	assert_int_equal(run_cmd(cmd, NULL, 0), 0);
	if (!have("promtool"))
		return;
	snprintf(rules, sizeof(rules), "%s/dashboard-rules.yml", tmpdir);
	snprintf(cmd, sizeof(cmd), "jq -r '.panels[].targets[].expr' %s", p);
	assert_int_equal(run_cmd(cmd, names, sizeof(names)), 0);
	f = fopen(rules, "w");
	assert_non_null(f);
	fprintf(f, "groups:\n- name: dashboard\n  rules:\n");
	for (name = strtok_r(names, "\n", &save), n = 0; name;
	     name = strtok_r(NULL, "\n", &save), n++) {
		char q[1024];

		assert_null(strchr(name, '\''));
		grafana_vars(q, sizeof(q), name);
		fprintf(f, "  - record: dashboard:q%d\n    expr: '%s'\n", n, q);
	}
	assert_int_equal(fclose(f), 0);
	snprintf(cmd, sizeof(cmd), "promtool check rules %s 2>&1", rules);
	if (run_cmd(cmd, out, sizeof(out)))
		fail_msg("the dashboard's queries do not parse: %s", out);
}

#define SANDBOX "mount --make-rprivate / && mount --bind / / && mount -o remount,bind,ro / && " \
	"mount -o remount,bind,ro /proc && mount -o remount,bind,ro /sys && " \
	"mount -t tmpfs -o mode=0755 tmpfs /run && mount -t tmpfs tmpfs /home && exec \"$@\""
#define MDWE "import ctypes, os, sys\n" \
	"if ctypes.CDLL(None).prctl(65, 1, 0, 0, 0):\n" \
	"    sys.exit('cannot set PR_SET_MDWE')\n" \
	"os.execvp(sys.argv[1], sys.argv[1:])\n"

/* Under the unit's bounding set, no_new_privs, W^X memory and a read-only
 * file system the installed daemon loads, attaches (the CUPTI library's
 * USDT probes too), keeps nothing, serves metrics; the dashboard is
 * checked against that scrape. */
static void installed_daemon__unit_capabilities__traces_and_keeps_none(void **state)
{
	char p[600], caps[256], addr[32], errp[300], scrape[300], cmd[400], *e;
	int port = free_port(), status, got = 0;
	long end;
	pid_t pid;

	need_root(state);
	need("setpriv");
	need("unshare");
	need("python3");
	need("curl");
	need("jq");
	ensure_installed();
	unit_caps(caps, sizeof(caps));
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	snprintf(errp, sizeof(errp), "%s/caps.err", tmpdir);
	snprintf(scrape, sizeof(scrape), "%s/scrape.txt", tmpdir);
	in_dest(p, sizeof(p), "sbin/cachescoped");
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		int fd = open(errp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		dup2(fd, STDERR_FILENO);
		dup2(open("/dev/null", O_WRONLY), STDOUT_FILENO);
		/* as the unit would have it: a read-only file system, /proc and
		 * /sys too, but for a fresh /run (ProtectSystem=strict,
		 * ReadOnlyPaths=, RuntimeDirectory=; the
		 * default socket), W^X memory (MemoryDenyWriteExecute=, as
		 * PR_SET_MDWE), no_new_privs, the unit's bounding set */
		execlp("unshare", "unshare", "-m", "sh", "-c", SANDBOX, "sh", "python3", "-c", MDWE,
		       "setpriv", "--bounding-set", caps, "--no-new-privs", p, "--duration", "4",
		       "--top", "0", "--metrics-addr", addr, "-v", (char *)NULL);
		_exit(127);
	}
	snprintf(cmd, sizeof(cmd), "curl -sf --max-time 2 -o %s http://%s/metrics", scrape, addr);
	for (end = now_ms() + 15000; !got && now_ms() < end;) {
		got = !run_cmd(cmd, NULL, 0);
		if (!got)
			sleep_ms(100);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	e = slurp(errp);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail_msg("under %s the daemon failed: %s", caps, e);
	assert_true(got);
	assert_non_null(strstr(e, "capabilities kept: none"));
	/* the unit's RestrictNamespaces= lets it make its own mounts read-only */
	assert_non_null(strstr(e, "filesystem read-only but for the CSV's and the socket's directories"));
	assert_null(strstr(e, "kallsyms"));	/* its addresses were read */
	if (built("libcachescope_cupti.so"))
		assert_non_null(strstr(e, "watching CUPTI records of every process that loads"));
	free(e);
	check_dashboard(scrape);
}

/*
 * make gpu-bundle's tarball, unpacked where users put things (a 0700 home
 * folder, a space in its path): each program finds every shared library
 * but glibc's and GCC's runtime in the bundle, and tests/gpu/device-check.sh
 * passes through the emulation (kvref's CUDA backend and the program of
 * known work over tests/helpers/fakecuda, whose driver half hands the CUPTI
 * library its records) and says that it has not run on a GPU.
 */
static void gpu_bundle__unpacked_in_private_folder__device_check_passes_emulated(void **state)
{
	static const char *const progs[] = { "cachescoped", "cachescope", "kvref",
					     "libcachescope_cupti.so", "kvref_cuda_emu.so",
					     "knownwork_emu" };
	static const char *const machine[] = { "linux-vdso.so", "ld-linux", "libc.so", "libm.so",
					       "libpthread.so", "libdl.so", "librt.so", "libutil.so",
					       "libstdc++.so", "libgcc_s.so" };
	char cmd[2048], home[400], tar[400], lib[500], *out, *line, *save;
	size_t i, j;
	int n;

	need_root(state);
	snprintf(tar, sizeof(tar), "%s/cachescope-gpu.tar.gz", build);
	snprintf(cmd, sizeof(cmd), "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -s "
		 "OUTPUT=%s gpu-bundle 2>&1", build);
	out = malloc(1 << 16);
	assert_non_null(out);
	if (run_cmd(cmd, out, 1 << 16)) {
		fprintf(stderr, "%s", out);
		fail_msg("make gpu-bundle failed");
	}
	assert_non_null(strstr(out, "gpu-bundle: "));
	if (!built("libcachescope_cupti.so")) {
		fprintf(stderr, "no CUPTI library (no CUDA toolkit): skipped\n");
		free(out);
		skip();
	}
	snprintf(home, sizeof(home), "%s/home dir", tmpdir);
	assert_int_equal(mkdir(home, 0700), 0);
	snprintf(cmd, sizeof(cmd), "tar -C '%s' -xzf '%s'", home, tar);
	assert_int_equal(system(cmd), 0);
	snprintf(lib, sizeof(lib), "%s/cachescope-gpu/lib/", home);
	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		snprintf(cmd, sizeof(cmd), "ldd '%s/cachescope-gpu/%s' 2>&1", home, progs[i]);
		assert_int_equal(run_cmd(cmd, out, 1 << 16), 0);
		for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			const char *arrow = strstr(line, "=> ");
			bool ok = false;

			while (*line == '\t' || *line == ' ')
				line++;
			if (strstr(line, "not found"))
				fail_msg("%s: %s", progs[i], line);
			if (!arrow || arrow[3] != '/')
				continue;
			for (j = 0; j < sizeof(machine) / sizeof(machine[0]); j++)
				ok |= !strncmp(line, machine[j], strlen(machine[j]));
			if (!ok && strncmp(arrow + 3, lib, strlen(lib)))
				fail_msg("%s takes %s from the machine, not the bundle", progs[i], line);
		}
	}
	snprintf(cmd, sizeof(cmd), "'%s/cachescope-gpu/device-check.sh' --emulate --secs 20 2>&1", home);
	n = run_cmd(cmd, out, 1 << 16);
	if (n || !strstr(out, "device-check: ran through the emulation: it has not run on a GPU")) {
		/* whole, to stderr: cmocka cuts a failure's message short */
		fprintf(stderr, "device-check.sh exited %d; its output:\n%s\n", n, out);
		line = strstr(out, "device-check: what failed:");
		fail_msg("device-check.sh exited %d: %.600s", n, line ? line : "(no failure listed)");
	}
	assert_non_null(strstr(out, " 0 failed (emulated (no GPU))"));
	assert_non_null(strstr(out, "ok    known    kernels: knownwork 400, the daemon 400"));
	assert_non_null(strstr(out, "ok    check    as nobody: "));
	/* emulated, 20 s may see too few blocks back in for thrash at all:
	 * the check says so from kvref's own count (the GPU run asks it) */
	assert_true(strstr(out, "ok    thrash   GPU KV thrash labelled on kv-pool-gpu") ||
		    strstr(out, "skip  thrash   score, label and swapped blocks: emulated kvref swapped "));
	assert_true(strstr(out, "ok    unmod    blocks back in through CUPTI's copy callbacks: ") ||
		    strstr(out, "skip  unmod    blocks back in through CUPTI's copy callbacks: "));
	free(out);
}

static void uninstall__destdir__nothing_left(void **state)
{
	char cmd[600], out[4096];

	need_root(state);
	ensure_installed();
	assert_int_equal(make_in_dest("uninstall", out, sizeof(out)), 0);
	snprintf(cmd, sizeof(cmd), "find %s ! -type d", dest);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	if (out[0])
		fail_msg("left after make uninstall: %s", out);
	installed = false;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(install__destdir__every_file_in_place),
		cmocka_unit_test(install__unit__systemd_analyze_verify_clean),
		cmocka_unit_test(install__man_pages__lint_clean),
		cmocka_unit_test(install__man_pages__options_match_help),
		cmocka_unit_test(install__man_signals__match_the_daemons),
		cmocka_unit_test(installed_daemon__workload__found_in_pkglib_status_and_phases),
		cmocka_unit_test(installed_daemon__unit_capabilities__traces_and_keeps_none),
		cmocka_unit_test(gpu_bundle__unpacked_in_private_folder__device_check_passes_emulated),
		cmocka_unit_test(uninstall__destdir__nothing_left),
	};

	/* CS_TEST_FILTER=gpu_bundle__* runs the tests whose names match */
	if (getenv("CS_TEST_FILTER"))
		cmocka_set_test_filter(getenv("CS_TEST_FILTER"));
	return cmocka_run_group_tests(tests, harness_setup, harness_teardown);
}
