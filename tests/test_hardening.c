// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Integration tests of cachescoped as a root service that other users can
 * reach: the privileges it keeps once it traces, the files it refuses to
 * run or inject, and its control socket facing slow, greedy or
 * unprivileged clients.  Needs root; without it every test is skipped.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers/harness.h"

static long ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
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

static int sock_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Ask req and read the answer to its end; how long it took (ms), or -1
 * when it did not end within timeout_ms.  The first n - 1 bytes in buf. */
static long ask(const char *sock, const char *req, char *buf, size_t n, long timeout_ms)
{
	long t0 = ms_now(), len = 0;
	struct pollfd p;
	int fd = sock_connect(sock);
	char tmp[8192];
	ssize_t k;

	buf[0] = '\0';
	if (fd < 0)
		return -1;
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0) {
		close(fd);
		return -1;
	}
	p.fd = fd;
	p.events = POLLIN;
	while (ms_now() - t0 < timeout_ms) {
		if (poll(&p, 1, 50) <= 0)
			continue;
		k = read(fd, tmp, sizeof(tmp));
		if (k <= 0) {
			close(fd);
			return ms_now() - t0;
		}
		if ((size_t)len < n - 1) {
			size_t take = len + k < (long)n - 1 ? (size_t)k : n - 1 - len;

			memcpy(buf + len, tmp, take);
			len += take;
			buf[len] = '\0';
		}
	}
	close(fd);
	return -1;
}

static uint64_t stat_of(const char *stats, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "\n%s ", name);
	p = strstr(stats, key);
	assert_non_null(p);
	return strtoull(p + strlen(key), NULL, 10);
}

static void stop_daemon(struct daemon *d)
{
	assert_int_equal(kill(d->pid, SIGTERM), 0);
	assert_int_equal(daemon_wait(d), 0);
}

/* Where this kernel's bpf() needs it for map lookups and test runs
 * (before 6.5, with unprivileged BPF off), CAP_BPF may stay. */
#define MAY_KEEP (1ull << CAP_BPF)

/* ---- privileges ---- */

static void privs__tracing__capabilities_dropped_no_new_privs(void **state)
{
	struct daemon d;
	unsigned long long eff;
	char out[4096];

	need_root(state);
	daemon_start(&d, "privs", 30, NULL);
	/* the socket answers: it is tracing, and has dropped what it can */
	eff = status_field(d.pid, "CapEff");
	assert_int_equal(eff & ~MAY_KEEP, 0);
	assert_int_equal(status_field(d.pid, "CapPrm"), eff);
	assert_int_equal(status_field(d.pid, "CapBnd"), eff);
	assert_int_equal(status_field(d.pid, "CapAmb"), 0);
	assert_int_equal(status_field(d.pid, "NoNewPrivs"), 1);
	/* and still does its work: rings, maps, the flush, its CSV */
	assert_true(ask(d.sock, "stats\n", out, sizeof(out), 2000) >= 0);
	assert_true(stat_of(out, "consumed") > 0);
	stop_daemon(&d);
	check_summary(&d, false);
	assert_int_equal(access(d.csv, F_OK), 0);
	assert_int_equal(access(d.sock, F_OK), -1);
}

/* uid 0 without capabilities still writes what root's owner bits allow
 * (a 0644 sysctl, any root-owned file): after set-up, in the daemon's
 * mount namespace, every mount is read-only but its CSV's and socket's
 * directory, so not even full root writes a root-owned file there. */
static void privs__after_setup__root_files_and_sysctls_read_only(void **state)
{
	char dir[64], file[128], cmd[600], out[1024], ns[64], line[512];
	unsigned int rw_mounts = 0, mounts = 0;
	struct daemon d;
	FILE *f;
	int fd;

	need_root(state);
	snprintf(dir, sizeof(dir), "/tmp/cs-test-rofile-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/owned-by-root", dir);
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "kept\n", 5), 5);
	close(fd);
	daemon_start(&d, "privs-ro", 30, NULL);
	assert_int_equal(status_field(d.pid, "Uid"), 0);
	snprintf(ns, sizeof(ns), "/proc/%d/ns/mnt", (int)d.pid);
	snprintf(cmd, sizeof(cmd), "nsenter --mount=%s sh -c 'echo forged >> %s' 2>&1", ns, file);
	assert_int_not_equal(run_cmd(cmd, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "Read-only file system"));
	/* a sysctl written with the value it has: refused all the same */
	snprintf(cmd, sizeof(cmd),
		 "nsenter --mount=%s sh -c 'cat /proc/sys/vm/stat_interval > /proc/sys/vm/stat_interval' 2>&1",
		 ns);
	assert_int_not_equal(run_cmd(cmd, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "Read-only file system"));
	/* every mount it sees is read-only but the two directories it writes */
	snprintf(cmd, sizeof(cmd), "/proc/%d/mountinfo", (int)d.pid);
	assert_non_null(f = fopen(cmd, "r"));
	while (fgets(line, sizeof(line), f)) {
		char point[256], opts[128];

		assert_int_equal(sscanf(line, "%*s %*s %*s %*s %255s %127s", point, opts), 2);
		mounts++;
		if (strncmp(opts, "ro", 2) || (opts[2] && opts[2] != ',')) {
			rw_mounts++;
			assert_true(!strcmp(point, tmpdir));
		}
	}
	fclose(f);
	assert_true(mounts > 3);
	assert_int_equal(rw_mounts, 1);		/* the CSV and the socket share tmpdir */
	/* its own writes still land */
	stop_daemon(&d);
	check_summary(&d, false);
	assert_int_equal(access(d.csv, F_OK), 0);
	assert_non_null(f = fopen(file, "r"));
	assert_non_null(fgets(line, sizeof(line), f));
	assert_string_equal(line, "kept\n");
	fclose(f);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* The pids of pid's children, into kids (at most n); how many. */
static int children_of(pid_t pid, pid_t *kids, int n)
{
	char path[64];
	int m = 0;
	FILE *f;
	long k;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	f = fopen(path, "r");
	assert_non_null(f);
	while (m < n && fscanf(f, "%ld", &k) == 1)
		kids[m++] = (pid_t)k;
	fclose(f);
	return m;
}

/* The CSV and the socket in a directory uid 0's mode bits may not write
 * in (nobody's, 0700): the daemon keeps no capability for it; a keeper
 * process, holding nothing of the daemon's but a socket pair, alone has
 * CAP_DAC_OVERRIDE, binds the socket, and renames the CSV into place and
 * removes the socket at exit.  Before, the daemon kept CAP_DAC_OVERRIDE
 * for the whole run. */
static void privs__locked_directory__dac_override_in_keeper_alone(void **state)
{
	char dir[64], csv[128], sock[128], dur[16], fdir[64], comm[32], out[4096];
	const char *argv[] = { NULL, "--duration", dur, "--csv", csv, "--socket", sock, "--top", "0",
			       NULL };
	char daemon_path[300];
	pid_t pid, kids[4];
	struct dirent *de;
	struct stat st;
	int i, status, fds = 0;
	DIR *dp;
	FILE *f;

	need_root(state);
	snprintf(dir, sizeof(dir), "/tmp/cs-test-locked-XXXXXX");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chown(dir, 65534, 65534), 0);
	assert_int_equal(chmod(dir, 0700), 0);
	snprintf(csv, sizeof(csv), "%s/rows.csv", dir);
	snprintf(sock, sizeof(sock), "%s/cs.sock", dir);
	snprintf(dur, sizeof(dur), "30");
	snprintf(daemon_path, sizeof(daemon_path), "%s/cachescoped", build);
	argv[0] = daemon_path;
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		execv(daemon_path, (char *const *)argv);
		_exit(127);
	}
	for (i = 0; i < 300 && !socket_up(sock); i++)
		usleep(100000);
	assert_true(socket_up(sock));
	assert_int_equal(status_field(pid, "CapEff") & ~MAY_KEEP, 0);
	assert_int_equal(status_field(pid, "CapPrm") & ~MAY_KEEP, 0);
	assert_int_equal(children_of(pid, kids, 4), 1);
	snprintf(fdir, sizeof(fdir), "/proc/%d/comm", (int)kids[0]);
	assert_non_null(f = fopen(fdir, "r"));
	assert_non_null(fgets(comm, sizeof(comm), f));
	fclose(f);
	assert_string_equal(comm, "cs-keeper\n");
	assert_int_equal(status_field(kids[0], "CapEff"), 1ull << CAP_DAC_OVERRIDE);
	assert_int_equal(status_field(kids[0], "CapPrm"), 1ull << CAP_DAC_OVERRIDE);
	assert_int_equal(status_field(kids[0], "CapBnd"), 1ull << CAP_DAC_OVERRIDE);
	assert_int_equal(status_field(kids[0], "NoNewPrivs"), 1);
	/* stdout, stderr, its end of the pair and the socket it bound; no
	 * map, ring, program or perf event (anon inodes all) */
	snprintf(fdir, sizeof(fdir), "/proc/%d/fd", (int)kids[0]);
	assert_non_null(dp = opendir(fdir));
	while ((de = readdir(dp))) {
		char link[400], to[128];
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		fds++;
		snprintf(link, sizeof(link), "%s/%s", fdir, de->d_name);
		n = readlink(link, to, sizeof(to) - 1);
		assert_true(n > 0);
		to[n] = '\0';
		if (strstr(to, "anon_inode"))
			fail_msg("the keeper holds %s", to);
	}
	closedir(dp);
	assert_true(fds <= 4);
	assert_true(ask(sock, "stats\n", out, sizeof(out), 2000) >= 0);
	assert_true(stat_of(out, "consumed") > 0);
	assert_int_equal(kill(pid, SIGTERM), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(stat(csv, &st), 0);
	assert_true(st.st_size > 0);
	assert_int_equal(lstat(sock, &st), -1);
	assert_int_equal(kill(kids[0], 0), -1);
	snprintf(out, sizeof(out), "rm -rf '%s'", dir);
	assert_int_equal(system(out), 0);
}

static void privs__workload__keeps_only_cap_kill(void **state)
{
	const char *extra[] = { "--workload", "normal", NULL };
	struct daemon d;

	need_root(state);
	daemon_start(&d, "privs-wl", 30, extra);
	assert_int_equal(status_field(d.pid, "CapEff") & ~MAY_KEEP, 1ull << CAP_KILL);
	assert_int_equal(status_field(d.pid, "NoNewPrivs"), 1);
	/* it still stops kvref and scores it */
	stop_daemon(&d);
	assert_true(count_in_file(d.out, "score: ") > 0);
}

/* A copy of cachescoped in dir, with file beside it (copied from the build). */
static void install(const char *dir, const char *file)
{
	char cmd[1200];

	snprintf(cmd, sizeof(cmd), "rm -rf %s && mkdir -m 0755 %s && cp %s/cachescoped %s/%s %s/",
		 dir, dir, build, build, file, dir);
	assert_int_equal(run_cmd(cmd, NULL, 0), 0);
}

static void expect_refused(const char *cmd, const char *what, const char *why)
{
	char out[2048];

	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 1);
	assert_int_equal(count_lines(out), 1);
	assert_non_null(strstr(out, what));
	assert_non_null(strstr(out, why));
}

static void privs__untrusted_kvref__refused_one_line(void **state)
{
	char dir[300], path[400], cmd[1200];

	need_root(state);
	snprintf(dir, sizeof(dir), "%s/inst-kvref", tmpdir);
	snprintf(path, sizeof(path), "%s/kvref", dir);
	snprintf(cmd, sizeof(cmd), "%s/cachescoped --workload normal --duration 6 --socket none "
		 "--top 0 2>&1 >/dev/null", dir);

	install(dir, "kvref");
	assert_int_equal(chown(path, 65534, 65534), 0);
	expect_refused(cmd, "refusing to run", "not owned by root");

	install(dir, "kvref");
	assert_int_equal(chmod(path, 0757), 0);
	expect_refused(cmd, "refusing to run", "writable by group or others");

	install(dir, "kvref");
	assert_int_equal(chmod(dir, 0777), 0);
	expect_refused(cmd, "refusing to run", "its directory is writable by group or others");
}

static void privs__untrusted_cupti_library__refused_one_line(void **state)
{
	char dir[300], lib[400], cmd[1200];

	need_root(state);
	snprintf(lib, sizeof(lib), "%s/libcachescope_cupti.so", build);
	if (access(lib, R_OK))
		skip();		/* built where the CUDA toolkit is */
	snprintf(dir, sizeof(dir), "%s/inst-cupti", tmpdir);
	snprintf(lib, sizeof(lib), "%s/libcachescope_cupti.so", dir);

	/* the one beside cachescoped, world-writable */
	install(dir, "libcachescope_cupti.so");
	assert_int_equal(chmod(lib, 0666), 0);
	snprintf(cmd, sizeof(cmd), "%s/cachescoped --duration 2 --socket none --top 0 2>&1 >/dev/null",
		 dir);
	expect_refused(cmd, "refusing to load", "writable by group or others");

	/* named with --gpu-lib, someone else's */
	install(dir, "libcachescope_cupti.so");
	assert_int_equal(chown(lib, 65534, 65534), 0);
	snprintf(cmd, sizeof(cmd), "%s/cachescoped --duration 2 --socket none --top 0 --gpu-lib %s "
		 "2>&1 >/dev/null", build, lib);
	expect_refused(cmd, "refusing to load", "not owned by root");
}

/* ---- the control socket ---- */

/* A child that sends one byte every 190 ms.  To fd out it writes 0 once
 * connected, then how long it lasted (ms) once the daemon drops it, or -1
 * after 20 s. */
static pid_t trickler(const char *sock, int out)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid) {
		long t0 = ms_now(), took = -1, started = 0;
		int fd = sock_connect(sock);
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char c;

		/* connected, and its first byte sent */
		if (fd < 0 || send(fd, "s", 1, MSG_NOSIGNAL) < 0 ||
		    write(out, &started, sizeof(started)) != sizeof(started))
			_exit(1);
		while (fd >= 0 && ms_now() - t0 < 20000) {
			if (send(fd, "s", 1, MSG_NOSIGNAL) < 0 ||
			    (poll(&p, 1, 190) > 0 && read(fd, &c, 1) <= 0)) {
				took = ms_now() - t0;
				break;
			}
		}
		_exit(write(out, &took, sizeof(took)) == sizeof(took) ? 0 : 1);
	}
	return pid;
}

static void control__trickling_client__others_answered_ingest_goes_on(void **state)
{
	char out[4096];
	struct daemon d;
	uint64_t w1, w2;
	long took = 0;
	int p[2], st;
	pid_t t;

	need_root(state);
	daemon_start(&d, "trickle", 60, NULL);
	assert_int_equal(pipe(p), 0);
	t = trickler(d.sock, p[1]);
	close(p[1]);
	assert_int_equal(read(p[0], &took, sizeof(took)), sizeof(took));
	assert_int_equal(took, 0);
	/* while it trickles, others are answered at once, twice, and the
	 * windows still close between */
	assert_true(ask(d.sock, "stats\n", out, sizeof(out), 1000) >= 0);
	w1 = stat_of(out, "windows");
	assert_true(ask(d.sock, "stats\n", out, sizeof(out), 1000) >= 0);
	while ((w2 = stat_of(out, "windows")) == w1)
		assert_true(ask(d.sock, "stats\n", out, sizeof(out), 1000) >= 0);
	/* its request deadline (2 s) drops it, long before its 256 bytes */
	assert_int_equal(read(p[0], &took, sizeof(took)), sizeof(took));
	assert_int_equal(waitpid(t, &st, 0), t);
	close(p[0]);
	assert_true(took > 0 && took < 6000);
	assert_true(ask(d.sock, "stats\n", out, sizeof(out), 1000) >= 0);
	assert_true(stat_of(out, "control_timeouts") >= 1);
	assert_true(w2 > w1);
	stop_daemon(&d);
}

/* The default send buffer of a socket (a Unix stream socket's too). */
static long wmem_default(void)
{
	FILE *f = fopen("/proc/sys/net/core/wmem_default", "r");
	long v = 0;

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%ld", &v), 1);
	fclose(f);
	assert_true(v > 0);
	return v;
}

static void control__unread_large_reply__other_client_answered(void **state)
{
	const char *extra[] = { "--window-ms", "2000", NULL };
	char big[256], out[4096];
	struct daemon d;
	pid_t storm;
	long t0, len = 0, need;
	int a, st;

	need_root(state);
	harness_exact_keys = true;	/* every short process its own keys */
	daemon_start(&d, "unread", 60, extra);
	harness_exact_keys = false;
	storm = fork();
	assert_true(storm >= 0);
	if (!storm) {
		execl("/bin/sh", "sh", "-c", "end=$(($(date +%s) + 20)); "
		      "while [ $(date +%s) -lt $end ]; do /bin/true; done", (char *)NULL);
		_exit(127);
	}
	/* wait until a window holds a reply far larger than a socket buffer
	 * (a fork loop's 2 s windows make about 520 KB of them on this 2-CPU
	 * VM; its 1 s windows 290-440 KB, too close to 1.5 buffers) */
	need = 3 * wmem_default() / 2;
	for (t0 = ms_now(); ms_now() - t0 < 15000 && len < need;) {
		int fd = sock_connect(d.sock);
		char tmp[65536];
		ssize_t k;

		assert_true(fd >= 0);
		assert_int_equal(send(fd, "top 1000000\n", 12, MSG_NOSIGNAL), 12);
		for (len = 0; (k = read(fd, tmp, sizeof(tmp))) > 0;)
			len += k;
		close(fd);
	}
	if (len < need)
		fail_msg("the largest reply was %ld bytes, not %ld", len, need);
	/* one asks for it and never reads; another is answered all the same */
	a = sock_connect(d.sock);
	assert_true(a >= 0);
	assert_int_equal(send(a, "top 1000000\n", 12, MSG_NOSIGNAL), 12);
	assert_true(ask(d.sock, "stats\n", out, sizeof(out), 1000) >= 0);
	assert_non_null(strstr(out, "produced "));
	assert_true(ask(d.sock, "clusters\n", big, sizeof(big), 1000) >= 0);
	assert_non_null(strstr(big, "clusters: "));
	kill(storm, SIGKILL);
	waitpid(storm, &st, 0);
	close(a);
	stop_daemon(&d);
}

static void control__unprivileged_peer__permission_denied(void **state)
{
	char got[256] = "", out[4096];
	struct daemon d;
	int p[2], st;
	ssize_t k;
	pid_t pid;

	need_root(state);
	daemon_start(&d, "peer", 60, NULL);
	/* the file's mode would let anyone in: SO_PEERCRED must not */
	assert_int_equal(chmod(tmpdir, 0711), 0);
	assert_int_equal(chmod(d.sock, 0666), 0);
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		char buf[256];
		int fd, n = 0;

		close(p[0]);
		if (setgid(65534) || setuid(65534))
			_exit(2);
		fd = sock_connect(d.sock);
		if (fd < 0)
			_exit(3);
		send(fd, "stats\n", 6, MSG_NOSIGNAL);	/* refused maybe before */
		while (n < (int)sizeof(buf) - 1 && (k = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
			n += k;
		_exit(write(p[1], buf, n) == n ? 0 : 4);
	}
	close(p[1]);
	k = read(p[0], got, sizeof(got) - 1);
	got[k > 0 ? k : 0] = '\0';
	close(p[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	chmod(tmpdir, 0700);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_string_equal(got, "permission denied\n");
	assert_true(ask(d.sock, "stats\n", out, sizeof(out), 1000) >= 0);
	assert_int_equal(stat_of(out, "control_denied"), 1);
	stop_daemon(&d);
}

/* kvref stops 2 s before the daemon; its pipe's fd number, closed at its
 * eof, is the next client's: that client must still be answered. */
static void control__after_workload_exits__clients_answered(void **state)
{
	const char *extra[] = { "--workload", "normal", NULL };
	char cmd[64], out[4096];
	struct daemon d;
	long t0;

	need_root(state);
	daemon_start(&d, "wl-exit", 7, extra);
	snprintf(cmd, sizeof(cmd), "pgrep -P %d -x kvref >/dev/null", d.pid);
	for (t0 = ms_now(); ms_now() - t0 < 15000 && !run_cmd(cmd, NULL, 0);)
		sleep_ms(20);
	/* the daemon goes on for a second after kvref's end */
	assert_true(ask(d.sock, "stats\n", out, sizeof(out), 1000) >= 0);
	assert_non_null(strstr(out, "produced "));
	assert_int_equal(daemon_wait(&d), 0);
}

static void control__overlong_request__refused(void **state)
{
	char req[1001], out[4096];
	struct daemon d;

	need_root(state);
	daemon_start(&d, "long", 60, NULL);
	memset(req, 'a', sizeof(req) - 2);
	req[sizeof(req) - 2] = '\n';
	req[sizeof(req) - 1] = '\0';
	assert_true(ask(d.sock, req, out, sizeof(out), 1000) >= 0);
	assert_string_equal(out, "error: request too long (at most 256 bytes)\n");
	assert_true(ask(d.sock, "stats\n", out, sizeof(out), 1000) >= 0);
	assert_int_equal(stat_of(out, "control_too_long"), 1);
	stop_daemon(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(privs__tracing__capabilities_dropped_no_new_privs),
		cmocka_unit_test(privs__workload__keeps_only_cap_kill),
		cmocka_unit_test(privs__after_setup__root_files_and_sysctls_read_only),
		cmocka_unit_test(privs__locked_directory__dac_override_in_keeper_alone),
		cmocka_unit_test(privs__untrusted_kvref__refused_one_line),
		cmocka_unit_test(privs__untrusted_cupti_library__refused_one_line),
		cmocka_unit_test(control__trickling_client__others_answered_ingest_goes_on),
		cmocka_unit_test(control__unread_large_reply__other_client_answered),
		cmocka_unit_test(control__unprivileged_peer__permission_denied),
		cmocka_unit_test(control__overlong_request__refused),
		cmocka_unit_test(control__after_workload_exits__clients_answered),
	};

	return cmocka_run_group_tests(tests, harness_setup, harness_teardown);
}
