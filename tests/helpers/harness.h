/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The harness of the integration tests: start the real cachescoped beside
 * a command, wait on conditions (the socket answers, the daemon exits), read
 * the CSV it wrote and ask questions of it.  Used with cmocka: failures are
 * cmocka assertions.
 */
#ifndef CS_HARNESS_H
#define CS_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAX_COLS 80
#define MAX_LINE 4096

extern const char *build;	/* the build folder (CS_BUILD) */
extern char tmpdir[256];	/* per run, removed by harness_teardown */
extern char datadir[256];	/* disk-backed: fadvise must really drop */

struct daemon {
	int pid;
	char csv[300], sock[300], out[300];
};

struct table {
	char *hdr[MAX_COLS];
	int ncols;
	char **rows;	/* ncols fields per row */
	int nrows;
};

void sleep_ms(long ms);
bool socket_up(const char *path);
/* Start cachescoped with its CSV, socket and output in tmpdir, plus extra
 * arguments; return once the control socket answers (programs attached). */
void daemon_start(struct daemon *d, const char *name, int duration,
		  const char *const *extra);
/* Wait for it; its exit code, or 128 + signal. */
int daemon_wait(struct daemon *d);
/* Run a shell command, return its exit code; its stdout goes to out (if any). */
int run_cmd(const char *cmd, char *out, size_t n);

void table_read(struct table *t, const char *path);
const char *cell(const struct table *t, int row, const char *name);
/* Sum a column over the rows of (key, tgid); tgid 0 means any. */
/* key NULL: every key */
uint64_t sum(const struct table *t, const char *key, long tgid, const char *column);
uint64_t sum_family(const struct table *t, const char *key, const char *comm,
		    const char *column);
/* Set: daemons run with --fold-ms 0, every process its own keys at once
 * (tests that count one short-lived helper's events exactly). */
extern bool harness_exact_keys;
/* Set: daemons run with --sample VALUE ("1": every slab object tracked,
 * for tests that count events exactly); NULL: the daemon's default. */
extern const char *harness_sample;
/* Set: daemons are run from this directory instead of the build folder
 * (a copy of the build somewhere else). */
extern const char *harness_daemon_dir;
/* The summary line must balance: produced = consumed + dropped. */
void check_summary(const struct daemon *d, bool want_no_drops);
int count_in_file(const char *path, const char *needle);
long helper_pid(const char *out);
/* Start the daemon, run cmd (a shell line, made from fmt) beside it, wait
 * for the daemon to exit 0, check its summary and read its CSV.  Returns the
 * pid the command printed ("pid N"), else 0; its output is left in out. */
long run_beside(struct daemon *d, const char *name, int secs,
		const char *const *extra, struct table *t, char *out,
		size_t n, const char *fmt, ...) __attribute__((format(printf, 8, 9)));
int need_root(void **state);
/* Rows of (key, tgid) carrying label; key NULL means any key, tgid 0 any. */
int rows_labelled(const struct table *t, const char *key, long tgid, const char *label);
/* Rows of tgid (0: of any process but skip) with an anomaly label on a key
 * outside the allowed list (NULL-terminated; "x*" matches a prefix). */
int anomalies_outside(const struct table *t, long tgid, long skip,
		      const char *const *allowed, const char **first);
void expect_no_anomalies(const struct table *t, long tgid, long skip,
			 const char *const *allowed);

/* The mount point of the cgroup v2 hierarchy, or NULL. */
const char *cgroup2_root(void);
/* A loopback port nobody listens on now. */
int free_port(void);

/* cmocka group setup and teardown: tmpdir, datadir. */
int harness_setup(void **state);
int harness_teardown(void **state);

#endif
