// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The integration tests' harness: see harness.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "harness.h"

#define TMPFS_MAGIC 0x01021994

const char *build = "build";
char tmpdir[256];
char datadir[256];

/* ---- running things ---- */

void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

bool socket_up(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	bool ok;

	assert_true(strlen(path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	ok = !connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	return ok;
}

/* Start cachescoped with its CSV, socket and output in tmpdir, plus extra
 * arguments; return once the control socket answers (programs attached). */
bool harness_exact_keys;
const char *harness_sample;
const char *harness_daemon_dir;

void daemon_start(struct daemon *d, const char *name, int duration,
			 const char *const *extra)
{
	char dur[16], bin[300];
	const char *argv[32];
	int i = 0, n, fd;

	snprintf(d->csv, sizeof(d->csv), "%s/%s.csv", tmpdir, name);
	snprintf(d->sock, sizeof(d->sock), "%s/%s.sock", tmpdir, name);
	snprintf(d->out, sizeof(d->out), "%s/%s.out", tmpdir, name);
	snprintf(dur, sizeof(dur), "%d", duration);
	snprintf(bin, sizeof(bin), "%s/cachescoped", harness_daemon_dir ? harness_daemon_dir : build);
	argv[i++] = bin;
	argv[i++] = "--duration";
	argv[i++] = dur;
	argv[i++] = "--csv";
	argv[i++] = d->csv;
	argv[i++] = "--socket";
	argv[i++] = d->sock;
	argv[i++] = "--top";
	argv[i++] = "0";
	if (harness_exact_keys) {
		argv[i++] = "--fold-ms";
		argv[i++] = "0";
	}
	if (harness_sample) {
		argv[i++] = "--sample";
		argv[i++] = harness_sample;
	}
	for (n = 0; extra && extra[n]; n++)
		argv[i++] = extra[n];
	argv[i] = NULL;

	d->pid = fork();
	assert_true(d->pid >= 0);
	if (!d->pid) {
		fd = open(d->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		execv(bin, (char **)argv);
		_exit(127);
	}
	for (n = 0; n < 300; n++) {
		if (socket_up(d->sock))
			return;
		if (waitpid(d->pid, NULL, WNOHANG) == d->pid)
			fail_msg("cachescoped exited before attaching; see %s", d->out);
		sleep_ms(50);
	}
	fail_msg("cachescoped did not attach within 15 s; see %s", d->out);
}

int daemon_wait(struct daemon *d)
{
	int status;

	assert_int_equal(waitpid(d->pid, &status, 0), d->pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Run a command, return its exit code; its stdout goes to out (if any). */
int run_cmd(const char *cmd, char *out, size_t n)
{
	FILE *p = popen(cmd, "r");
	size_t len = 0, r;
	int status;

	assert_non_null(p);
	if (out) {
		while (len + 1 < n && (r = fread(out + len, 1, n - 1 - len, p)) > 0)
			len += r;
		out[len] = '\0';
	} else {
		char sink[4096];

		while (fread(sink, 1, sizeof(sink), p) > 0)
			;
	}
	status = pclose(p);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ---- reading the CSV ---- */


/* Split one RFC 4180 record starting at *p; advances *p past it. */
static int split_record(char **p, char **fields, int max)
{
	char *s = *p, *w;
	int n = 0;

	if (!*s)
		return 0;
	for (;;) {
		w = s;
		fields[n] = w;
		if (*s == '"') {
			s++;
			for (;;) {
				if (*s == '"' && s[1] == '"') {
					*w++ = '"';
					s += 2;
				} else if (*s == '"') {
					s++;
					break;
				} else if (!*s) {
					break;
				} else {
					*w++ = *s++;
				}
			}
		} else {
			while (*s && *s != ',' && *s != '\n')
				*w++ = *s++;
		}
		n++;
		if (*s == ',') {
			*w = '\0';
			s++;
			if (n == max)
				return -1;
			continue;
		}
		if (*s == '\n')
			s++;
		*w = '\0';
		break;
	}
	*p = s;
	return n;
}

void table_read(struct table *t, const char *path)
{
	char *buf, *p, *f[MAX_COLS];
	struct stat st;
	FILE *fp;
	int n;

	memset(t, 0, sizeof(*t));
	fp = fopen(path, "r");
	if (!fp)
		fail_msg("cannot open %s: %s", path, strerror(errno));
	fstat(fileno(fp), &st);
	buf = calloc(1, st.st_size + 1);
	assert_int_equal(fread(buf, 1, st.st_size, fp), st.st_size);
	fclose(fp);
	p = buf;
	t->ncols = split_record(&p, t->hdr, MAX_COLS);
	assert_true(t->ncols > 10);
	t->rows = calloc((st.st_size / 20 + 1) * t->ncols, sizeof(char *));
	while ((n = split_record(&p, f, MAX_COLS)) > 0) {
		assert_int_equal(n, t->ncols);
		memcpy(&t->rows[t->nrows * t->ncols], f, n * sizeof(char *));
		t->nrows++;
	}
}

int col(const struct table *t, const char *name)
{
	int i;

	for (i = 0; i < t->ncols; i++)
		if (!strcmp(t->hdr[i], name))
			return i;
	fail_msg("no column %s", name);
	return -1;
}

const char *cell(const struct table *t, int row, const char *name)
{
	return t->rows[row * t->ncols + col(t, name)];
}

/* Sum a column over the rows of (key, tgid); tgid 0 means any. */
uint64_t sum(const struct table *t, const char *key, long tgid,
		    const char *column)
{
	uint64_t s = 0;
	int r;

	for (r = 0; r < t->nrows; r++) {
		if (key && strcmp(cell(t, r, "key"), key))
			continue;
		if (tgid && atol(cell(t, r, "tgid")) != tgid)
			continue;
		s += strtoull(cell(t, r, column), NULL, 10);
	}
	return s;
}

/* Sum a column over the rows of key counted under the family of young
 * processes named comm (key_kind "family"). */
uint64_t sum_family(const struct table *t, const char *key, const char *comm,
		    const char *column)
{
	uint64_t s = 0;
	int r;

	for (r = 0; r < t->nrows; r++)
		if (!strcmp(cell(t, r, "key"), key) && !strcmp(cell(t, r, "comm"), comm) &&
		    !strcmp(cell(t, r, "key_kind"), "family"))
			s += strtoull(cell(t, r, column), NULL, 10);
	return s;
}

/* The summary line must balance: produced = consumed + dropped. */
void check_summary(const struct daemon *d, bool want_no_drops)
{
	char line[MAX_LINE];
	uint64_t produced, consumed, dropped;
	bool seen = false;
	FILE *f = fopen(d->out, "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "events: produced=%" SCNu64 " consumed=%" SCNu64
			   " dropped=%" SCNu64, &produced, &consumed, &dropped) == 3)
			seen = true;
	}
	fclose(f);
	if (!seen)
		fail_msg("no summary line in %s", d->out);
	assert_true(produced > 0);
	assert_int_equal(produced, consumed + dropped);
	if (want_no_drops)
		assert_int_equal(dropped, 0);
}

int count_in_file(const char *path, const char *needle)
{
	char line[MAX_LINE];
	FILE *f = fopen(path, "r");
	int n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

long helper_pid(const char *out)
{
	const char *p = strstr(out, "pid ");

	assert_non_null(p);
	return atol(p + 4);
}

/* Start the daemon, run cmd (a shell line, made from fmt) beside it, wait
 * for the daemon to exit 0, check its summary and read its CSV.  Returns the
 * pid the command printed; its output is left in out. */
long run_beside(struct daemon *d, const char *name, int secs,
		       const char *const *extra, struct table *t, char *out,
		       size_t n, const char *fmt, ...)
{
	char cmd[2600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	daemon_start(d, name, secs, extra);
	assert_int_equal(run_cmd(cmd, out, n), 0);
	assert_int_equal(daemon_wait(d), 0);
	check_summary(d, true);
	table_read(t, d->csv);
	return strstr(out, "pid ") ? helper_pid(out) : 0;
}

int need_root(void **state)
{
	(void)state;
	if (geteuid()) {
		fprintf(stderr, "integration tests need root: skipped\n");
		skip();
	}
	return 0;
}

/* Rows of (key, tgid) carrying label; key NULL means any key. */
int rows_labelled(const struct table *t, const char *key, long tgid,
			 const char *label)
{
	int r, n = 0;

	for (r = 0; r < t->nrows; r++) {
		if (key && strcmp(cell(t, r, "key"), key))
			continue;
		if (tgid && atol(cell(t, r, "tgid")) != tgid)
			continue;
		n += !strcmp(cell(t, r, "label"), label);
	}
	return n;
}

/* Rows of tgid (0: of any process but skip) with an anomaly label on a key
 * outside the allowed list (NULL-terminated). */
int anomalies_outside(const struct table *t, long tgid, long skip,
			     const char *const *allowed, const char **first)
{
	int r, n = 0, i;

	for (r = 0; r < t->nrows; r++) {
		const char *label = cell(t, r, "label");
		long tg = atol(cell(t, r, "tgid"));
		bool ok = false;

		if (!*label || !strcmp(label, "normal"))
			continue;
		if ((tgid && tg != tgid) || (!tgid && tg == skip))
			continue;
		for (i = 0; allowed && allowed[i]; i++)
			ok |= !strcmp(cell(t, r, "key"), allowed[i]) ||
			      (allowed[i][strlen(allowed[i]) - 1] == '*' &&
			       !strncmp(cell(t, r, "key"), allowed[i], strlen(allowed[i]) - 1));
		if (!ok) {
			if (!n && first)
				*first = cell(t, r, "reason");
			n++;
		}
	}
	return n;
}

void expect_no_anomalies(const struct table *t, long tgid, long skip,
				const char *const *allowed)
{
	const char *first = NULL;
	int n = anomalies_outside(t, tgid, skip, allowed, &first);

	if (n)
		fail_msg("%d unexpected anomaly rows, first: %s", n, first);
}

bool disk_backed(const char *dir)
{
	struct statfs sf;

	return !statfs(dir, &sf) && sf.f_type != TMPFS_MAGIC;
}

int harness_setup(void **state)
{
	const char *b = getenv("CS_BUILD");
	const char *cands[] = { NULL, "/var/tmp", "/root", NULL };
	int i;

	(void)state;
	if (b)
		build = b;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/cs-integ-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	cands[0] = build;
	for (i = 0; cands[i]; i++) {
		if (disk_backed(cands[i])) {
			snprintf(datadir, sizeof(datadir), "%s/cs-integ-data-%d",
				 cands[i], getpid());
			return mkdir(datadir, 0755);
		}
	}
	fprintf(stderr, "no disk-backed directory for the page-cache test\n");
	return -1;
}

int harness_teardown(void **state)
{
	char cmd[2600];

	(void)state;
	if (getenv("CS_KEEP_TMP"))
		return 0;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", tmpdir, datadir);
	return system(cmd);
}

/* The mount point of the cgroup v2 hierarchy, or NULL. */
const char *cgroup2_root(void)
{
	static char root[256];
	char dev[64], dir[256], type[64];
	FILE *f = fopen("/proc/mounts", "r");

	if (!f)
		return NULL;
	while (fscanf(f, "%63s %255s %63s %*[^\n]", dev, dir, type) == 3) {
		if (!strcmp(type, "cgroup2")) {
			snprintf(root, sizeof(root), "%s", dir);
			fclose(f);
			return root;
		}
	}
	fclose(f);
	return NULL;
}

/* A loopback port nobody listens on now. */
int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	assert_true(fd >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}
