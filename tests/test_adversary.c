// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A root daemon among untrusted neighbours.  One cachescoped runs as root,
 * as a service would (its socket's directory 0755, metrics on loopback,
 * the CUPTI library and kvref installed 0755 where anyone may run them,
 * --workload's kvref beside it), and an unprivileged user (nobody, uid
 * 65534) tries what a local account on an inference host could try: forge
 * GPU records through the library, run kvref to speak through its probes,
 * read per-cache slab figures over /metrics, rebind a host name, hold the
 * endpoint with trickling connections, ask the control socket, signal or
 * trace the daemon and its kvref, name a process with a terminal escape
 * and a spreadsheet formula, fork a storm named like root's programs,
 * crowd the key budget with its own busy processes, hand root a CSV that
 * hung the offline reader, and write the rules file.  Each test asserts
 * what the daemon reports (its status, its metrics) and, at its exit, what
 * it kept: root's figures exact, nothing of nobody's believed, every
 * record accounted for.
 *
 * The tests run in order against the one daemon; the first starts it, the
 * last stops it and reads its CSV.  Needs root; without it every test is
 * skipped.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/capability.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers/harness.h"

#define NOBODY 65534
#define AS_NOBODY "setpriv --reuid=65534 --regid=65534 --clear-groups "
/* the key budget nobody's processes crowd */
#define MAX_KEYS 400
/* nobody's long-lived busy processes: more keys than the budget */
#define CROWD 300
/* the comm nobody gives a process: a formula and a terminal escape */
#define EVIL_COMM "=1+2\033[2Jx"

static struct daemon d;		/* root's daemon, for every test */
static char share[64];		/* root's 0755: what anyone may run */
static int port;		/* its metrics */
static bool have_gpu;		/* a CUPTI library was built */
/* what the last test checks in the CSV */
static long root_feed, nobody_feed, nobody_kvref, evil_pid, root_churn;
static bool storms_run, crowd_run;

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The test needs the daemon the first test started. */
static void need_daemon(void **state)
{
	need_root(state);
	if (!d.pid)
		fail_msg("the daemon did not start (see the first test)");
}

/* A number of the daemon's JSON status (root asks). */
static uint64_t status_u64(const char *name)
{
	char cmd[700], out[16384], key[96];
	const char *p;

	snprintf(cmd, sizeof(cmd), "'%s/cachescope' --socket '%s' -j status", build, d.sock);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	snprintf(key, sizeof(key), "\"%s\":", name);
	p = strstr(out, key);
	if (!p)
		fail_msg("no %s in the status: %s", name, out);
	return strtoull(p + strlen(key), NULL, 10);
}

/* Wait up to ms for status name to reach at least want; its value. */
static uint64_t status_reaches(const char *name, uint64_t want, long ms)
{
	long end = now_ms() + ms;
	uint64_t v;

	while ((v = status_u64(name)) < want && now_ms() < end)
		sleep_ms(100);
	return v;
}

/* The number after prefix on the line of out that begins with line_head. */
static unsigned long line_value(const char *out, const char *line_head, const char *prefix)
{
	const char *l, *p;

	for (l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, line_head, strlen(line_head)))
			continue;
		p = strstr(l, prefix);
		if (p && (!strchr(l, '\n') || p < strchr(l, '\n')))
			return strtoul(p + strlen(prefix), NULL, 10);
	}
	fail_msg("no '%s...%s' in: %s", line_head, prefix, out);
	return 0;
}

static int rm_rf(const char *dir)
{
	char cmd[400];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return run_cmd(cmd, NULL, 0);
}

static pid_t kvref_of(pid_t daemon)
{
	char path[96], comm[32];
	long kid;
	FILE *f, *c;
	pid_t found = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)daemon, (int)daemon);
	f = fopen(path, "r");
	assert_non_null(f);
	while (!found && fscanf(f, "%ld", &kid) == 1) {
		snprintf(path, sizeof(path), "/proc/%ld/comm", kid);
		c = fopen(path, "r");
		if (c && fgets(comm, sizeof(comm), c) && !strcmp(comm, "kvref\n"))
			found = (pid_t)kid;
		if (c)
			fclose(c);
	}
	fclose(f);
	return found;
}

static unsigned long long status_field(pid_t pid, const char *field)
{
	char path[64], line[256];
	unsigned long long v = ~0ull;
	size_t n = strlen(field);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':')
			v = strtoull(line + n + 1, NULL, !strncmp(field, "Cap", 3) ? 16 : 10);
	fclose(f);
	return v;
}

/* Become nobody, with no supplementary group (in a child). */
static void become_nobody(void)
{
	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
		_exit(120);
}

/* ---- the daemon ---- */

/*
 * Root's daemon as a service runs it: metrics on loopback, the socket's
 * directory 0755 (as /run/cachescope), the CUPTI library and kvref where
 * any user may load and run them (as an installed tree), and --workload's
 * kvref beside it.  After set-up: uid 0 with no capability but CAP_KILL
 * (to stop kvref), no_new_privs, every mount read-only but its own
 * directory; kvref as a user of its own.
 */
static void adversary__root_daemon__confined_beside_others(void **state)
{
	char cmd[1600], lib[300], maxk[16], metrics[32], line[512];
	const char *extra[16];
	unsigned int rw = 0;
	unsigned long long eff;
	pid_t kv;
	FILE *f;
	int i = 0, n;

	need_root(state);
	if (run_cmd("command -v setpriv curl >/dev/null", NULL, 0)) {
		fprintf(stderr, "no setpriv or curl (make test-deps): skipped\n");
		skip();
	}
	snprintf(share, sizeof(share), "/tmp/cs-test-share-XXXXXX");
	assert_non_null(mkdtemp(share));
	assert_int_equal(chmod(share, 0755), 0);
	snprintf(lib, sizeof(lib), "%s/libcachescope_cupti.so", build);
	have_gpu = !access(lib, R_OK);
	/* run from the checkout (tests/run.sh): its data beside the build */
	snprintf(cmd, sizeof(cmd),
		 "install -m 0644 tests/data/offline-leak.csv '%s'/ && cd '%s' && "
		 "install -m 0755 cachescoped cachescope kvref tests/helpers/fdchurn '%s'/",
		 share, build, share);
	if (have_gpu)
		snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd),
			 " && install -m 0755 libcachescope_cupti.so tests/helpers/gpufeed '%s'/", share);
	if (run_cmd(cmd, NULL, 0))
		fail_msg("cannot stage the programs: %s", cmd);
	/* the socket's directory as /run/cachescope is: 0755 */
	assert_int_equal(chmod(tmpdir, 0755), 0);
	port = free_port();
	snprintf(metrics, sizeof(metrics), "127.0.0.1:%d", port);
	snprintf(maxk, sizeof(maxk), "%d", MAX_KEYS);
	snprintf(lib, sizeof(lib), "%s/libcachescope_cupti.so", share);
	extra[i++] = "--workload";
	extra[i++] = "normal";
	extra[i++] = "--metrics-addr";
	extra[i++] = metrics;
	extra[i++] = "--max-keys";
	extra[i++] = maxk;
	extra[i++] = "--gpu-lib";
	extra[i++] = have_gpu ? lib : "none";
	extra[i] = NULL;
	harness_daemon_dir = share;
	daemon_start(&d, "adversary", 150, extra);
	harness_daemon_dir = NULL;

	/* what is left to a compromised daemon after set-up */
	assert_int_equal(status_field(d.pid, "Uid"), 0);
	eff = status_field(d.pid, "CapEff");
	assert_int_equal(eff & ~(1ull << CAP_BPF), 1ull << CAP_KILL);
	assert_int_equal(status_field(d.pid, "CapPrm"), eff);
	assert_int_equal(status_field(d.pid, "CapBnd"), eff);
	assert_int_equal(status_field(d.pid, "NoNewPrivs"), 1);
	snprintf(cmd, sizeof(cmd), "/proc/%d/mountinfo", (int)d.pid);
	assert_non_null(f = fopen(cmd, "r"));
	while (fgets(line, sizeof(line), f)) {
		char point[256], opts[128];

		assert_int_equal(sscanf(line, "%*s %*s %*s %*s %255s %127s", point, opts), 2);
		if (strncmp(opts, "ro", 2) || (opts[2] && opts[2] != ',')) {
			rw++;
			assert_string_equal(point, tmpdir);
		}
	}
	fclose(f);
	assert_int_equal(rw, 1);
	/* kvref: a uid of its own, no other process's */
	for (n = 0; n < 100 && !(kv = kvref_of(d.pid)); n++)
		sleep_ms(100);
	assert_true(kv > 0);
	assert_true(status_field(kv, "Uid") >= 61184 && status_field(kv, "Uid") <= 65519);
	fprintf(stderr, "daemon %d: Uid 0, CapEff %016llx, NoNewPrivs 1, %u writable mount; kvref uid %llu\n",
		(int)d.pid, eff, rw, status_field(kv, "Uid"));
}

/* ---- records believed from chosen processes only ---- */

/*
 * nobody loads the installed CUPTI library and hands it records (forged
 * values among them) while a root process does the same: every record of
 * nobody's is rejected as untrusted, exactly its bins, and the last
 * rejected is its pid; root's process is believed (checked to the record
 * in the CSV at the end).
 */
static void adversary__forged_gpu_records__rejected_untrusted(void **state)
{
	char cmd[1600], out[4096];
	uint64_t before, after, bins;

	need_daemon(state);
	if (!have_gpu) {
		fprintf(stderr, "no CUPTI library (no CUDA toolkit): skipped\n");
		skip();
	}
	before = status_u64("usdt_rejected_untrusted");
	snprintf(cmd, sizeof(cmd),
		 "{ " AS_NOBODY "'%s/gpufeed' '%s/libcachescope_cupti.so' 1 forged | sed 's/^/nobody /'; } & "
		 "'%s/gpufeed' '%s/libcachescope_cupti.so' 1; wait",
		 share, share, share, share);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	root_feed = (long)line_value(out, "pid ", "pid ");
	nobody_feed = (long)line_value(out, "nobody pid ", "pid ");
	bins = line_value(out, "nobody library: ", " bins ");
	assert_true(root_feed > 0 && nobody_feed > 0 && bins > 0);
	/* its library kept its forged values out of the bins */
	assert_int_equal(line_value(out, "nobody library: ", " rejected "), 4);
	after = status_reaches("usdt_rejected_untrusted", before + bins, 10000);
	sleep_ms(300);
	after = status_u64("usdt_rejected_untrusted");
	assert_int_equal(after - before, bins);
	assert_int_equal(status_u64("usdt_rejected_last_tgid"), (uint64_t)nobody_feed);
	assert_int_equal(status_u64("gpu_release_unmatched"), 0);
}

/*
 * nobody runs the installed kvref, the binary whose probes the daemon
 * reads for its workload: its KV records are rejected as untrusted (it
 * could otherwise take the workload's KV block budget), while the
 * workload's own kvref, started by the daemon, is believed.
 */
static void adversary__own_kvref__kv_records_rejected(void **state)
{
	char cmd[1600], out[4096];
	uint64_t before;

	need_daemon(state);
	before = status_u64("usdt_rejected_untrusted");
	snprintf(cmd, sizeof(cmd),
		 AS_NOBODY "sh -c 'echo pid $$; exec \"%s/kvref\" --scenario normal --duration 2' 2>&1",
		 share);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	nobody_kvref = (long)line_value(out, "pid ", "pid ");
	assert_true(status_reaches("usdt_rejected_untrusted", before + 1, 10000) > before);
	assert_int_equal(status_u64("usdt_rejected_last_tgid"), (uint64_t)nobody_kvref);
	assert_int_equal(status_u64("usdt_rejected_kv_budget"), 0);
}

/* ---- what /metrics tells other users ---- */

static int scrape_as(bool as_nobody, const char *host, const char *path, char *code, size_t n)
{
	char cmd[900];

	snprintf(cmd, sizeof(cmd), "%scurl -s --max-time 8 -o '%s' -w '%%{http_code}' %s%s%s "
		 "http://127.0.0.1:%d/metrics", as_nobody ? AS_NOBODY : "", path,
		 host ? "-H 'Host: " : "", host ? host : "", host ? "'" : "", port);
	return run_cmd(cmd, code, n);
}

/*
 * Root's scrape has one series per slab cache; nobody's has the sums a
 * domain that /proc/meminfo tells every user, and no cache, file or pool
 * named; a Host: naming another machine (DNS rebinding) gets 421.
 */
static void adversary__metrics__no_per_cache_figures_host_checked(void **state)
{
	char mine[300], theirs[300], code[16];
	long end;

	need_daemon(state);
	snprintf(mine, sizeof(mine), "%s/root-metrics.txt", tmpdir);
	snprintf(theirs, sizeof(theirs), "/tmp/cs-adversary-nobody-%d.txt", (int)getpid());
	/* the per-cache series come with the first closed windows */
	for (end = now_ms() + 10000; now_ms() < end; sleep_ms(250)) {
		assert_int_equal(scrape_as(false, NULL, mine, code, sizeof(code)), 0);
		if (count_in_file(mine, "cachescope_live_bytes{domain=\"slab\",key=\"") > 1)
			break;
	}
	assert_string_equal(code, "200");
	assert_true(count_in_file(mine, "cachescope_live_bytes{domain=\"slab\",key=\"") > 1);
	assert_int_equal(scrape_as(true, NULL, theirs, code, sizeof(code)), 0);
	assert_string_equal(code, "200");
	assert_int_equal(count_in_file(theirs, "cachescope_live_bytes{domain=\"slab\""), 1);
	assert_int_equal(count_in_file(theirs, "cachescope_live_bytes{domain=\"slab\",key=\"\"}"), 1);
	assert_int_equal(count_in_file(theirs, "cachescope_live_objects{domain=\"slab\",key=\"k"), 0);
	assert_int_equal(count_in_file(theirs, "key=\"kv-pool"), 0);
	unlink(theirs);
	assert_int_equal(scrape_as(true, "evil.example:80", theirs, code, sizeof(code)), 0);
	assert_string_equal(code, "421");
	unlink(theirs);
}

/* A child as nobody holds n connections to the endpoint, trickling a
 * byte on each every 200 ms, for ms; its pid once they are open. */
static pid_t trickle(int n, long ms)
{
	int p[2], fds[64], i;
	pid_t pid;
	char c = 1;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct sockaddr_in a = { .sin_family = AF_INET };
		long end;

		close(p[0]);
		become_nobody();
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		a.sin_port = htons((uint16_t)port);
		for (i = 0; i < n; i++) {
			fds[i] = socket(AF_INET, SOCK_STREAM, 0);
			if (fds[i] < 0 || connect(fds[i], (struct sockaddr *)&a, sizeof(a)))
				_exit(3);
			(void)!write(fds[i], "GET /metr", 9);	/* refused ones are shut */
		}
		if (write(p[1], &c, 1) != 1)
			_exit(4);
		signal(SIGPIPE, SIG_IGN);
		for (end = now_ms() + ms; now_ms() < end;) {
			usleep(200 * 1000);
			for (i = 0; i < n; i++)
				(void)!write(fds[i], "x", 1);
		}
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	return pid;
}

/*
 * nobody opens 16 connections and trickles a byte on each: 4 are its
 * share, the rest refused at once (client_limit), and root's scrape is
 * answered meanwhile.
 */
#define LIMITED "cachescope_http_refused_total{reason=\"client_limit\"} "
static void adversary__trickling_connections__root_scrape_answered(void **state)
{
	char path[300], code[16], line[256];
	unsigned long refused = 0;
	pid_t kid;
	FILE *f;
	int st;

	need_daemon(state);
	kid = trickle(16, 12000);
	snprintf(path, sizeof(path), "%s/during-trickle.txt", tmpdir);
	assert_int_equal(scrape_as(false, NULL, path, code, sizeof(code)), 0);
	assert_string_equal(code, "200");
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, LIMITED, strlen(LIMITED)))
			refused = strtoul(line + strlen(LIMITED), NULL, 10);
	fclose(f);
	assert_true(refused >= 12);
	kill(kid, SIGKILL);
	assert_int_equal(waitpid(kid, &st, 0), kid);
}

/* ---- the control socket, signals, /proc ---- */

/* nobody can reach the socket's name (its directory is 0755), but the
 * socket is 0600: the kernel refuses the connection before the daemon
 * hears of it (its SO_PEERCRED check, control_denied, is the second
 * wall); the CLI says so, exit 4. */
static void adversary__control_socket__denied_counted(void **state)
{
	char cmd[900], out[1024];
	uint64_t denied;

	need_daemon(state);
	denied = status_u64("control_denied");
	snprintf(cmd, sizeof(cmd), AS_NOBODY "'%s/cachescope' --socket '%s' status 2>&1", share,
		 d.sock);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 4);
	assert_non_null(strstr(out, "permission denied"));
	assert_int_equal(status_u64("control_denied"), denied);
}

/*
 * As nobody: no signal reaches the daemon or its kvref (a uid of its own:
 * as nobody, kvref was nobody's to kill), neither can be traced, neither's
 * environment read, and the CSV being written is not readable.
 */
static void adversary__signals_ptrace_proc__refused(void **state)
{
	char csvtmp[400], path[96];
	int p[2], st, errs[7];
	glob_t g;
	pid_t kv, kid;
	ssize_t n;

	need_daemon(state);
	kv = kvref_of(d.pid);
	assert_true(kv > 0);
	/* the CSV being written: FILE.tmp.PID.XXXXXX */
	snprintf(csvtmp, sizeof(csvtmp), "%s.tmp.%d.*", d.csv, (int)d.pid);
	assert_int_equal(glob(csvtmp, 0, NULL, &g), 0);
	assert_int_equal(g.gl_pathc, 1);
	snprintf(csvtmp, sizeof(csvtmp), "%s", g.gl_pathv[0]);
	globfree(&g);
	assert_int_equal(pipe(p), 0);
	kid = fork();
	assert_true(kid >= 0);
	if (!kid) {
		int r[7], i = 0;

		close(p[0]);
		become_nobody();
		r[i++] = kill(d.pid, SIGTERM) ? errno : 0;
		r[i++] = kill(kv, SIGTERM) ? errno : 0;
		r[i++] = ptrace(PTRACE_ATTACH, d.pid, 0, 0) ? errno : 0;
		r[i++] = ptrace(PTRACE_ATTACH, kv, 0, 0) ? errno : 0;
		snprintf(path, sizeof(path), "/proc/%d/environ", (int)d.pid);
		r[i++] = open(path, O_RDONLY) < 0 ? errno : 0;
		snprintf(path, sizeof(path), "/proc/%d/environ", (int)kv);
		r[i++] = open(path, O_RDONLY) < 0 ? errno : 0;
		r[i++] = open(csvtmp, O_RDONLY) < 0 ? errno : 0;
		_exit(write(p[1], r, sizeof(r)) == sizeof(r) ? 0 : 1);
	}
	close(p[1]);
	n = read(p[0], errs, sizeof(errs));
	close(p[0]);
	assert_int_equal(waitpid(kid, &st, 0), kid);
	assert_true(WIFEXITED(st) && !WEXITSTATUS(st));
	assert_int_equal(n, sizeof(errs));
	assert_int_equal(errs[0], EPERM);
	assert_int_equal(errs[1], EPERM);
	assert_int_equal(errs[2], EPERM);
	assert_int_equal(errs[3], EPERM);
	assert_int_equal(errs[4], EACCES);
	assert_int_equal(errs[5], EACCES);
	/* the CSV is 0600 in a 0755 directory */
	assert_int_equal(errs[6], EACCES);
	assert_int_equal(kill(d.pid, 0), 0);
	assert_int_equal(kill(kv, 0), 0);
}

/* ---- names anyone sets ---- */

/*
 * nobody names a busy process "=1+2<ESC>[2Jx": root's `cachescope top`
 * shows it escaped, never the ESC (a terminal would obey it), and the CSV
 * writes it guarded (a spreadsheet would evaluate it), both checked at
 * the end.
 */
static void adversary__comm_escape_and_formula__shown_inert(void **state)
{
	char cmd[900], *out;
	int p[2], st, i;
	long end;
	char c;

	need_daemon(state);
	assert_int_equal(pipe(p), 0);
	evil_pid = fork();
	assert_true(evil_pid >= 0);
	if (!evil_pid) {
		close(p[0]);
		become_nobody();
		prctl(PR_SET_NAME, EVIL_COMM, 0, 0, 0);
		c = 1;
		(void)!write(p[1], &c, 1);
		for (end = now_ms() + 3000; now_ms() < end;)
			for (i = 0; i < 256; i++)
				close(eventfd(0, 0));
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	out = malloc(1 << 20);
	assert_non_null(out);
	snprintf(cmd, sizeof(cmd), "'%s/cachescope' --socket '%s' top 1000", build, d.sock);
	for (end = now_ms() + 10000; now_ms() < end; sleep_ms(300)) {
		assert_int_equal(run_cmd(cmd, out, 1 << 20), 0);
		if (strstr(out, "=1+2"))
			break;
	}
	if (!strstr(out, "=1+2"))
		fail_msg("nobody's busy process not in top 1000");
	assert_null(strchr(out, '\033'));
	free(out);
	assert_int_equal(waitpid(evil_pid, &st, 0), evil_pid);
}

#define STORM(n) "for i in $(seq " #n "); do /bin/true; done"

/* nobody's fork storm named like root's (comm is anyone's to set) is a
 * family of its own: checked in the CSV at the end. */
static void adversary__fork_storm_named_like_root__family_apart(void **state)
{
	need_daemon(state);
	assert_int_equal(run_cmd(AS_NOBODY "sh -c '" STORM(800) "' & " STORM(1500) "; wait",
				 NULL, 0), 0);
	storms_run = true;
}

/* What decides the crowd's test, shown when it fails; the crowd, which
 * runs till killed, is killed. */
static void crowd_fail(pid_t crowd, const char *what)
{
	static const char *const f[] = {
		"keys", "others_events", "share_events", "keys_evicted", "keys_dropped",
		"keys_idle_merged", "keys_exited", "sample_shift_peak", "sample_slots",
		"budget_records_per_s", "budget_shed_level", "dropped", "late",
	};
	size_t i;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		print_message("%s %llu\n", f[i], (unsigned long long)status_u64(f[i]));
	kill(crowd, SIGKILL);
	waitpid(crowd, NULL, 0);
	(void)!system("pkill -KILL -u 65534 fdchurn");
	fail_msg("%s", what);
}

/*
 * nobody runs CROWD long-lived busy processes, more keys than the whole
 * budget: once the table is full, root's new process still gets keys of
 * its own (root is below its share of the budget), while nobody's past
 * its share count on the others keys (share_events).
 */
static void adversary__many_processes__root_keeps_its_own_keys(void **state)
{
	char cmd[900], out[4096];
	uint64_t keys;
	pid_t crowd;
	int st;

	need_daemon(state);
	crowd = fork();
	assert_true(crowd >= 0);
	if (!crowd) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		snprintf(cmd, sizeof(cmd),
			 "for i in $(seq %d); do '%s/fdchurn' 4 100000 --period-ms 100 & done; wait",
			 CROWD, share);
		become_nobody();
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	keys = status_reaches("keys", MAX_KEYS, 20000);
	if (keys < MAX_KEYS)
		crowd_fail(crowd, "the crowd never filled the table");
	/* the table is full of nobody's busy keys; root's process comes */
	sleep_ms(1500);
	/* 8 000 eventfds in 2 s: sampling is per slot of (cache, process),
	 * and 300 busy processes fill every one of the 1 024 slots, so the
	 * sampler may track root's new process 1 in 1 024 like the crowd
	 * (120 files left no filp row of root's in one run of four, 2 000
	 * in one of six); at 8 000 all are passed over at 1 in 1 024 with a
	 * chance of e^-7.8, 1 in 2 400.  The key budget, not the sampler, is
	 * under test here. */
	snprintf(cmd, sizeof(cmd), "'%s/fdchurn' 100 80 --period-ms 20", share);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	root_churn = helper_pid(out);
	/* the crowd's keys come as the sampler tracks their objects: wait
	 * for one of nobody's past its share (the crowd runs till killed) */
	if (!status_reaches("share_events", 1, 15000))
		crowd_fail(crowd, "none of nobody's events past its share");
	/* the table stays within the budget and the quarter past it that
	 * shares may take (the others keys, one a cache, come on top) */
	if (status_u64("keys") > MAX_KEYS + MAX_KEYS / 4 + 400)
		crowd_fail(crowd, "more keys than the budget and the shares allow");
	kill(-crowd, SIGKILL);
	kill(crowd, SIGKILL);
	assert_int_equal(waitpid(crowd, &st, 0), crowd);
	assert_int_equal(run_cmd("pkill -KILL -u 65534 fdchurn; true", NULL, 0), 0);
	crowd_run = true;
}

/* ---- files anyone writes ---- */

/*
 * nobody writes a CSV whose last row's window is 2^64-1 (the shape that
 * made `cachescope cluster` loop for ever) and a comm with a terminal
 * escape; root reads it offline: one clear error line in time, no ESC.
 */
static void adversary__forged_csv__offline_reader_ends_in_time(void **state)
{
	char dir[64], cmd[1600], out[8192];
	int rc;

	need_root(state);
	snprintf(dir, sizeof(dir), "/tmp/cs-test-evilcsv-XXXXXX");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chown(dir, NOBODY, NOBODY), 0);
	snprintf(cmd, sizeof(cmd),
		 AS_NOBODY "sh -c \"head -200 '%s/offline-leak.csv' | awk -F, -v OFS=, "
		 "'NR > 1 { \\$2 = NR == 200 ? \\\"18446744073709551615\\\" : \\$2 } { print }' "
		 "> '%s/evil.csv'\"", share, dir);
	assert_int_equal(run_cmd(cmd, NULL, 0), 0);
	snprintf(cmd, sizeof(cmd), "timeout 20 '%s/cachescope' cluster '%s/evil.csv' 2>&1", build, dir);
	rc = run_cmd(cmd, out, sizeof(out));
	if (rc == 124)
		fail_msg("cachescope cluster still ran after 20 s on a forged CSV");
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, "evil.csv:200: column window: 18446744073709551615 windows of"));
	assert_null(strchr(strchr(out, '\n') + 1, '\n'));	/* one line */
	/* every process named with a terminal escape: shown escaped */
	snprintf(cmd, sizeof(cmd),
		 AS_NOBODY "sh -c \"head -200 '%s/offline-leak.csv' | awk -F, -v OFS=, "
		 "'NR > 1 { \\$8 = \\\"x\\033[2Jx\\\" } { print }' > '%s/escape.csv'\"", share, dir);
	assert_int_equal(run_cmd(cmd, NULL, 0), 0);
	snprintf(cmd, sizeof(cmd), "grep -c \"$(printf '\\033')\" '%s/escape.csv'", dir);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	assert_int_equal(atoi(out), 199);
	snprintf(cmd, sizeof(cmd), "timeout 20 '%s/cachescope' cluster '%s/escape.csv' 2>&1", build,
		 dir);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "clusters: "));
	assert_non_null(strstr(out, " x\\x1b[2Jx "));
	assert_null(strchr(out, '\033'));
	assert_int_equal(rm_rf(dir), 0);
}

/*
 * A --rules file nobody may write (its own, in its own directory) would
 * let nobody raise the thresholds that name a leak: refused, one line,
 * exit 2, before anything is traced.
 */
static void adversary__rules_file_nobody_writes__refused(void **state)
{
	char dir[64], cmd[1200], out[2048], want[400];

	need_root(state);
	snprintf(dir, sizeof(dir), "/tmp/cs-test-evilrules-XXXXXX");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chown(dir, NOBODY, NOBODY), 0);
	snprintf(cmd, sizeof(cmd), AS_NOBODY "sh -c 'echo leak_min_growth_s = 1e9 > %s/rules.conf'",
		 dir);
	assert_int_equal(run_cmd(cmd, NULL, 0), 0);
	snprintf(cmd, sizeof(cmd), "'%s/cachescoped' --rules '%s/rules.conf' --duration 2 "
		 "--socket none --top 0 2>&1", build, dir);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 2);
	snprintf(want, sizeof(want), "cachescoped: error: refusing --rules %s/rules.conf: not owned by root "
		 "(it must be root's and writable by root alone)\n", dir);
	assert_string_equal(out, want);
	assert_int_equal(rm_rf(dir), 0);
}

/* ---- what the daemon kept ---- */

static int gpu_or_kv_rows_of(const struct table *t, long tgid)
{
	int r, n = 0;

	for (r = 0; r < t->nrows; r++)
		n += atol(cell(t, r, "tgid")) == tgid &&
		     (!strcmp(cell(t, r, "domain"), "gpu") || !strcmp(cell(t, r, "domain"), "kv"));
	return n;
}

/*
 * The daemon stops cleanly (exit 0, every record produced consumed or
 * counted dropped) and its CSV holds root's GPU figures to the record,
 * nothing of nobody's GPU or KV records, the workload's KV pool, nobody's
 * name guarded, two families named true where the storms met, and root's
 * process's own keys among nobody's crowd.
 */
static void adversary__daemon_exit__root_figures_kept_nothing_of_nobody(void **state)
{
	uint64_t untrusted;
	struct table t;
	int r, evil = 0, both = 0, own = 0, kv = 0, q;
	const char *comm;

	need_daemon(state);
	untrusted = status_u64("usdt_rejected_untrusted");
	assert_int_equal(kill(d.pid, SIGTERM), 0);
	assert_int_equal(daemon_wait(&d), 0);
	check_summary(&d, false);
	assert_int_equal(count_in_file(d.out, "score: 1 of 1 phases labelled as expected"), 1);
	{
		char want[96];

		snprintf(want, sizeof(want), " untrusted=%" PRIu64 " ", untrusted);
		assert_int_equal(count_in_file(d.out, want), 1);
	}
	table_read(&t, d.csv);
	if (root_feed) {
		assert_int_equal(sum(&t, "gpu-kernels", root_feed, "gpu_kernels"), 500);
		assert_int_equal(sum(&t, "gpu-kv-kernels", root_feed, "gpu_kernels"), 200);
		assert_int_equal(sum(&t, "gpu-memory", root_feed, "gpu_copy_in_bytes"), 100ull << 20);
		assert_int_equal(sum(&t, "gpu-memory", root_feed, "allocs"), 100);
		assert_int_equal(sum(&t, "gpu-memory", root_feed, "frees"), 100);
		assert_int_equal(gpu_or_kv_rows_of(&t, nobody_feed), 0);
	}
	assert_int_equal(gpu_or_kv_rows_of(&t, nobody_kvref), 0);
	for (r = 0; r < t.nrows; r++) {
		comm = cell(&t, r, "comm");
		kv += !strcmp(cell(&t, r, "key"), "kv-pool") &&
		      !strcmp(cell(&t, r, "scope"), "workload");
		if (atol(cell(&t, r, "tgid")) == evil_pid && evil_pid) {
			evil++;
			/* guarded: a spreadsheet shows it as text */
			assert_int_equal(strncmp(comm, "'=1+2", 5), 0);
		}
		if (root_churn && atol(cell(&t, r, "tgid")) == root_churn &&
		    !strcmp(cell(&t, r, "key"), "filp"))
			own++;
		if (!storms_run || strcmp(comm, "true") || strcmp(cell(&t, r, "key_kind"), "family") ||
		    strcmp(cell(&t, r, "key"), "vm_area_struct"))
			continue;
		for (q = r + 1; q < t.nrows && !strcmp(cell(&t, q, "window"), cell(&t, r, "window")); q++)
			both += !strcmp(cell(&t, q, "comm"), "true") &&
				!strcmp(cell(&t, q, "key_kind"), "family") &&
				!strcmp(cell(&t, q, "key"), "vm_area_struct");
	}
	assert_true(kv > 0);
	assert_true(evil > 0);
	if (storms_run)
		assert_true(both > 0);
	if (crowd_run && !own) {
		for (r = 0; r < t.nrows; r++)
			if (atol(cell(&t, r, "tgid")) == root_churn)
				print_message("root's churn %ld: window %s key %s allocs %s\n", root_churn,
					      cell(&t, r, "window"), cell(&t, r, "key"),
					      cell(&t, r, "allocs"));
		fail_msg("no filp row of root's churn %ld among nobody's crowd", root_churn);
	}
	assert_int_equal(rm_rf(share), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(adversary__root_daemon__confined_beside_others),
		cmocka_unit_test(adversary__forged_gpu_records__rejected_untrusted),
		cmocka_unit_test(adversary__own_kvref__kv_records_rejected),
		cmocka_unit_test(adversary__metrics__no_per_cache_figures_host_checked),
		cmocka_unit_test(adversary__trickling_connections__root_scrape_answered),
		cmocka_unit_test(adversary__control_socket__denied_counted),
		cmocka_unit_test(adversary__signals_ptrace_proc__refused),
		cmocka_unit_test(adversary__comm_escape_and_formula__shown_inert),
		cmocka_unit_test(adversary__fork_storm_named_like_root__family_apart),
		cmocka_unit_test(adversary__many_processes__root_keeps_its_own_keys),
		cmocka_unit_test(adversary__forged_csv__offline_reader_ends_in_time),
		cmocka_unit_test(adversary__rules_file_nobody_writes__refused),
		cmocka_unit_test(adversary__daemon_exit__root_figures_kept_nothing_of_nobody),
	};

	if (getenv("CS_TEST_FILTER"))
		cmocka_set_test_filter(getenv("CS_TEST_FILTER"));
	return cmocka_run_group_tests(tests, harness_setup, harness_teardown);
}
