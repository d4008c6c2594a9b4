// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Driving kvref.  kvref prints "phase NAME start S s mono_ns N" as each
 * phase begins, on the clock of BPF's timestamps, so every vector of the
 * workload can be placed in its phase and scored against that phase's
 * truth: which label must appear on which key, and that nothing else may
 * be labelled there once the phase has settled.
 *
 * kvref needs no privilege (its swap-page drops are posix_fadvise on its
 * own file, its probes are read by the daemon's uprobes), so a daemon
 * running as root starts it as a user of its own (spawn_user_own): a
 * fault in the workload is then not root's, and no other process shares
 * its uid to trace it or speak through its probes, whose records the
 * daemon believes.  Its executable and libraries come as descriptors
 * root opened (spawn.h): that user needs no path to them.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "clock.h"
#include "strutil.h"
#include "workload.h"

struct truth {
	const char *scenario;
	enum cs_label label;
	const char *key;	/* a prefix of the key or file name */
	const char *key2;	/* another key that may carry it too, or NULL */
};

/* thrash and leak happen in the KV cache itself as well: its kv-pool key
 * (from kvref's USDT probes) may carry them beside the kernel's keys.  The
 * thrash is the pool's: its blocks swapped out and back in; the swap
 * file's page-cache refaults come from kvref's own fadvise, with no
 * memory stall (PSI), so they are not thrash by the rules' cost, but may
 * be labelled so where a kernel has no PSI */
static const struct truth truths[] = {
	{ "normal", LABEL_NORMAL, NULL, NULL },
	{ "thrash", LABEL_THRASH, "kv-pool", "kvref-swap" },
	{ "false_sharing", LABEL_FALSE_SHARING, "skbuff_head_cache", NULL },
	{ "leak", LABEL_LEAK, "filp", "kv-pool" },
};

int wl_start(struct wl *w, const struct wl_files *f, const struct spawn_user *u,
	     const char *scenario, long duration_s, const char *backend, char *why, size_t n)
{
	/* an injection path of our own environment is not what kvref loads */
	static const char *const drop[] = { "CUDA_INJECTION64_PATH", NULL };
	const struct spawn_file *pass[3] = { NULL, NULL, NULL };
	const char *add[2] = { NULL, NULL };
	char dur[24], inject[64], **envp;
	char *argv[] = {
		"kvref", "--scenario", (char *)scenario, "--duration", dur,
		"--backend", backend ? (char *)backend : "cpu", NULL, NULL, NULL,
	};
	struct spawn_req r = {
		.exe = &f->exe, .argv = argv, .pass = pass, .user = u,
		/* its own group: ^C at the terminal stops the daemon, which
		 * stops kvref (SIGTERM) and still prints the score; and it
		 * goes when the daemon goes, however that dies */
		.own_group = true, .die_with_parent = true,
	};
	int pfd[2], np = 0, err;

	memset(w, 0, sizeof(*w));
	w->fd = -1;
	w->user_lock = -1;
	w->grace_ns = 2000000000ull;
	snprintf(dur, sizeof(dur), "%ld", duration_s);
	if (f->backend.fd >= 0) {
		argv[7] = "--cuda-lib";
		argv[8] = (char *)f->backend.fdpath;
		pass[np++] = &f->backend;
	}
	if (f->inject.fd >= 0) {
		/* the CUDA driver loads the CUPTI library in cuInit */
		snprintf(inject, sizeof(inject), "CUDA_INJECTION64_PATH=%s", f->inject.fdpath);
		add[0] = inject;
		pass[np++] = &f->inject;
	}
	if (pipe2(pfd, O_CLOEXEC)) {
		err = -errno;
		snprintf(why, n, "cannot make a pipe: %s", strerror(-err));
		return err;
	}
	envp = spawn_env(environ, drop, add);
	if (!envp) {
		close(pfd[0]);
		close(pfd[1]);
		snprintf(why, n, "out of memory (ENOMEM)");
		return -ENOMEM;
	}
	r.envp = envp;
	r.stdout_fd = pfd[1];
	err = spawn_run(&r, &w->pid, why, n);
	free(envp);
	close(pfd[1]);
	if (err) {
		close(pfd[0]);
		w->pid = 0;
		return err;
	}
	w->tgid = w->pid;
	w->uid = u->uid;
	w->user_lock = u->lock_fd;
	fcntl(pfd[0], F_SETFL, O_NONBLOCK);
	w->fd = pfd[0];
	return 0;
}

void wl_files_close(struct wl_files *f)
{
	spawn_close(&f->exe);
	spawn_close(&f->backend);
	spawn_close(&f->inject);
}

static void on_line(struct wl *w, const char *line)
{
	struct wl_phase *p;
	unsigned long long mono;
	char name[32];
	double s;
	size_t n;

	if (sscanf(line, "phase %31s start %lf s mono_ns %llu", name, &s, &mono) == 3) {
		if (w->nphases == WL_MAX_PHASES) {
			if (!w->phases_past++)
				w->past_ns = mono;
			return;
		}
		p = &w->phases[w->nphases++];
		memset(p, 0, sizeof(*p));
		snprintf(p->scenario, sizeof(p->scenario), "%s", name);
		p->start_ns = mono;
		return;
	}
	n = strlen(line);
	if (w->report_len + n + 2 < sizeof(w->report)) {
		memcpy(w->report + w->report_len, line, n);
		w->report_len += n;
		w->report[w->report_len++] = '\n';
		w->report[w->report_len] = '\0';
	}
}

/* kvref is gone: its pid and its user are free again (it forks no
 * process that could outlive it under that user) */
static void reap(struct wl *w)
{
	waitpid(w->pid, &w->status, 0);
	w->pid = 0;
	w->reaped_ns = clock_ns(CLOCK_MONOTONIC);
	if (w->user_lock >= 0)
		close(w->user_lock);
	w->user_lock = -1;
}

void wl_read(struct wl *w, uint64_t now_ns)
{
	char buf[1024];
	ssize_t n, i;

	if (w->fd < 0)
		return;
	while ((n = read(w->fd, buf, sizeof(buf))) > 0) {
		for (i = 0; i < n; i++) {
			if (buf[i] == '\n' || w->len == sizeof(w->line) - 1) {
				w->line[w->len] = '\0';
				on_line(w, w->line);
				w->len = 0;
				if (buf[i] == '\n')
					continue;
			}
			w->line[w->len++] = buf[i];
		}
	}
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		close(w->fd);
		w->fd = -1;
		w->exited = true;
		w->exit_ns = now_ns;
		reap(w);
	}
}

bool wl_is_workload(const struct wl *w, uint32_t tgid)
{
	return w->tgid && (pid_t)tgid == w->tgid;
}

/* Until it is reaped its pid is its own (a zombie holds it); records
 * stamped after that may be of a process that got the pid again. */
bool wl_started(const struct wl *w, uint32_t tgid, uint64_t ts_ns)
{
	return wl_is_workload(w, tgid) && (w->pid > 0 || ts_ns <= w->reaped_ns);
}

void wl_tally(struct wl *w, uint64_t ts_ns, const char *key, enum cs_label label)
{
	struct wl_phase *p = NULL;
	unsigned int i;
	int k;

	for (k = w->nphases - 1; k >= 0; k--) {
		if (ts_ns >= w->phases[k].start_ns) {
			p = &w->phases[k];
			break;
		}
	}
	/* a vector of a phase not scored is not the last scored one's */
	if (!p || (unsigned int)label >= LABEL_COUNT || (w->phases_past && ts_ns >= w->past_ns))
		return;
	for (i = 0; i < p->nkeys && strcmp(p->keys[i].name, key); i++)
		;
	if (i == p->nkeys) {
		/* the last slot takes every key past the others: a label there
		 * still counts against the phase */
		if (p->nkeys == WL_MAX_KEYS - 1)
			snprintf(p->keys[i].name, sizeof(p->keys[i].name), "%s", WL_KEYS_PAST);
		else if (p->nkeys == WL_MAX_KEYS)
			i = WL_MAX_KEYS - 1;
		else
			snprintf(p->keys[i].name, sizeof(p->keys[i].name), "%s", key);
		if (i == p->nkeys)
			p->nkeys++;
	}
	/* the first seconds of a phase still carry the last one's state */
	if (ts_ns < p->start_ns + w->grace_ns && label != LABEL_NORMAL)
		return;
	p->keys[i].counts[label]++;
}

static const struct truth *truth_of(const char *scenario)
{
	size_t i;

	for (i = 0; i < sizeof(truths) / sizeof(truths[0]); i++)
		if (!strcmp(truths[i].scenario, scenario))
			return &truths[i];
	return NULL;
}

static bool key_is(const char *key, const char *prefix)
{
	return prefix && !strncmp(key, prefix, strlen(prefix));
}

/* The expected label was found on the phase's main key. */
static bool expected_hit(const struct wl_phase *p, const struct truth *t)
{
	unsigned int i;

	for (i = 0; i < p->nkeys; i++)
		if (key_is(p->keys[i].name, t->key) && p->keys[i].counts[t->label])
			return true;
	return false;
}

int wl_print_score(const struct wl *w, FILE *out)
{
	int k, good = 0;
	unsigned int i, l;

	if (w->report_len) {
		/* kvref runs unprivileged: its lines reach root's terminal escaped */
		char safe[STR_ESC_SIZE(sizeof(w->report))];

		fprintf(out, "workload report (kvref):\n%s",
			str_escape(safe, sizeof(safe), w->report, STR_KEEP_NL));
	}
	fprintf(out, "score (vectors of the workload per phase; the first %.0f s of a phase not scored):\n",
		w->grace_ns / 1e9);
	for (k = 0; k < w->nphases; k++) {
		const struct wl_phase *p = &w->phases[k];
		const struct truth *t = truth_of(p->scenario);
		unsigned int extra = 0;
		char found[256] = "", others[256] = "";
		size_t fl = 0, ol = 0;

		for (i = 0; i < p->nkeys; i++) {
			const struct wl_key *key = &p->keys[i];
			char name[STR_ESC_SIZE(sizeof(key->name))];

			str_escape(name, sizeof(name), key->name, 0);
			for (l = LABEL_NORMAL + 1; l < LABEL_COUNT; l++) {
				if (!key->counts[l])
					continue;
				if (t && l == t->label &&
				    (key_is(key->name, t->key) || key_is(key->name, t->key2))) {
					if (fl < sizeof(found))
						fl += snprintf(found + fl, sizeof(found) - fl, "%s%s %s (%u)",
							       fl ? ", " : "", label_name(l), name,
							       key->counts[l]);
				} else if (!t || l != t->label) {
					extra += key->counts[l];
					if (ol < sizeof(others))
						ol += snprintf(others + ol, sizeof(others) - ol, "%s%s %s (%u)",
							       ol ? ", " : "", label_name(l), name,
							       key->counts[l]);
				}
			}
		}
		bool ok = t && (t->label == LABEL_NORMAL ? !extra : expected_hit(p, t) && !extra);
		char want[96];

		if (!t)
			snprintf(want, sizeof(want), "(unknown scenario)");
		else if (t->label == LABEL_NORMAL)
			snprintf(want, sizeof(want), "no anomaly");
		else
			snprintf(want, sizeof(want), "%s on %s*", label_name(t->label), t->key);
		good += ok;
		fprintf(out, "  %-13s expected %-30s found %s%s%s -> %s\n", p->scenario, want,
			fl ? found : "nothing", ol ? "; also " : "", others,
			ok ? "ok" : "MISSED");
	}
	if (w->phases_past)
		fprintf(out, "  %u phases past the first %d not scored -> MISSED\n", w->phases_past,
			WL_MAX_PHASES);
	fprintf(out, "score: %d of %u phases labelled as expected\n", good,
		w->nphases + w->phases_past);
	return good;
}

bool wl_failed(const struct wl *w, char *why, size_t n)
{
	if (!w->exited)		/* still ran when we stopped it */
		return false;
	if (WIFEXITED(w->status) && !WEXITSTATUS(w->status))
		return false;
	if (WIFEXITED(w->status))
		snprintf(why, n, "exit status %d", WEXITSTATUS(w->status));
	else
		snprintf(why, n, "signal %d", WIFSIGNALED(w->status) ? WTERMSIG(w->status) : 0);
	return true;
}

void wl_stop(struct wl *w)
{
	if (w->pid > 0) {
		kill(w->pid, SIGTERM);
		reap(w);
	}
	if (w->fd >= 0) {
		close(w->fd);
		w->fd = -1;
	}
}
