/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Driving the reference workload: start kvref, read its phase lines, tell
 * its rows apart from the system's, and score the labels of each phase
 * against the scenario's truth.
 */
#ifndef CS_WORKLOAD_H
#define CS_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "classify.h"
#include "spawn.h"

#define WL_MAX_PHASES 8
/* kvref runs as a user of its own when the daemon is root (spawn_user_own),
 * leased by a lock in this directory */
#define WL_RUNDIR "/run/cachescope"
#define WL_UID_LOCKDIR WL_RUNDIR "/kvref-uid"

/* keys tallied apart per phase; the last slot is every key past them
 * (WL_KEYS_PAST), whose labels still count against the phase */
#define WL_MAX_KEYS 64
#define WL_KEYS_PAST "(keys past 63)"

struct wl_key {
	char name[64];
	unsigned int counts[LABEL_COUNT];
};

struct wl_phase {
	char scenario[32];
	uint64_t start_ns;		/* CLOCK_MONOTONIC */
	struct wl_key keys[WL_MAX_KEYS];
	unsigned int nkeys;
};

struct wl {
	pid_t pid;			/* while it runs */
	pid_t tgid;			/* its process, also after it exited */
	uint64_t reaped_ns;		/* CLOCK_MONOTONIC when it was reaped */
	uid_t uid;			/* the user it runs as */
	int user_lock;			/* that user's lease (spawn_user_own) until reaped */
	int fd;				/* kvref's stdout, or -1 once closed */
	bool exited;
	uint64_t exit_ns;
	int status;
	char line[512];
	size_t len;
	char report[4096];		/* kvref's closing report */
	size_t report_len;
	struct wl_phase phases[WL_MAX_PHASES];
	int nphases;
	unsigned int phases_past;	/* phases kvref began past WL_MAX_PHASES:
					 * not scored, and not ok */
	uint64_t past_ns;		/* when the first of them began */
	uint64_t grace_ns;		/* transition time not scored */
};

/* The files kvref is run from, opened by the daemon (spawn_open): its
 * executable, and on cuda its CUDA backend and the CUPTI library; fd -1
 * where there is none. */
struct wl_files {
	struct spawn_file exe;
	struct spawn_file backend;	/* kvref --cuda-lib */
	struct spawn_file inject;	/* CUDA_INJECTION64_PATH */
};

/* Start kvref from f->exe as u with --scenario, --duration and --backend
 * (NULL: cpu); its stdout comes back through w->fd.  Returns 0 once it
 * runs (u's lease is then w's, ended when kvref is reaped), or -errno
 * with the reason in why (spawn_run). */
int wl_start(struct wl *w, const struct wl_files *f, const struct spawn_user *u,
	     const char *scenario, long duration_s, const char *backend, char *why, size_t n);
/* Close the files of f (kvref has its own copies once it runs). */
void wl_files_close(struct wl_files *f);
/* Read what kvref printed; notes phases, keeps its report, sees EOF. */
void wl_read(struct wl *w, uint64_t now_ns);
bool wl_is_workload(const struct wl *w, uint32_t tgid);
/* Whether a record of process tgid stamped ts_ns (CLOCK_MONOTONIC) is of
 * the kvref this started: its pid, and it was not reaped before ts_ns. */
bool wl_started(const struct wl *w, uint32_t tgid, uint64_t ts_ns);
/* Count one labelled vector of a workload key at time ts_ns. */
void wl_tally(struct wl *w, uint64_t ts_ns, const char *key, enum cs_label label);
/* Print kvref's report and the score; returns the phases labelled as the
 * scenario says they should be. */
int wl_print_score(const struct wl *w, FILE *out);
/* Whether kvref ended on its own and not well (why: how); false while it
 * runs or when we stopped it. */
bool wl_failed(const struct wl *w, char *why, size_t n);
/* Stop kvref if it still runs and reap it. */
void wl_stop(struct wl *w);

#endif
