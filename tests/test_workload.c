// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of daemon/workload.c's scoring: kvref's phase lines read from
 * a pipe as the daemon reads them, labelled vectors tallied into their
 * phase, and the score printed.  What the tallies have no room for still
 * counts: keys past the per-phase slots share the last one, phases past
 * the first WL_MAX_PHASES are said and scored as missed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "../daemon/workload.h"

#define S 1000000000ull

/* A wl reading the lines of text as kvref's stdout. */
static void feed(struct wl *w, const char *text)
{
	int p[2];

	memset(w, 0, sizeof(*w));
	w->user_lock = -1;
	w->grace_ns = 2 * S;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], text, strlen(text)), (ssize_t)strlen(text));
	close(p[1]);
	w->fd = p[0];
	w->pid = fork();	/* a child for wl_read to reap at end of file */
	assert_true(w->pid >= 0);
	if (!w->pid)
		_exit(0);
	wl_read(w, 0);
	assert_int_equal(w->fd, -1);	/* end of file seen */
	assert_int_equal(w->pid, 0);	/* and the child reaped */
	assert_true(w->exited && WIFEXITED(w->status));
}

/* The score's text, and the phases found ok. */
static int score(const struct wl *w, char *out, size_t n)
{
	FILE *f = fmemopen(out, n, "w");
	int good;

	assert_non_null(f);
	good = wl_print_score(w, f);
	fclose(f);
	return good;
}

/* A normal phase whose 70th key gets a leak label: before, keys past 64
 * were not tallied at all and the phase read "ok". */
static void wl_tally__anomaly_on_key_past_slots__phase_missed(void **state)
{
	char key[32], out[8192];
	struct wl w;
	int i;

	(void)state;
	feed(&w, "phase normal start 0.1 s mono_ns 1000000000\n");
	assert_int_equal(w.nphases, 1);
	for (i = 0; i < 70; i++) {
		snprintf(key, sizeof(key), "cache-%d", i);
		wl_tally(&w, 4 * S, key, LABEL_NORMAL);
	}
	wl_tally(&w, 4 * S, "cache-69", LABEL_LEAK);
	assert_int_equal(w.phases[0].nkeys, WL_MAX_KEYS);
	assert_int_equal(score(&w, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "also leak (keys past 63) (1) -> MISSED"));
	assert_non_null(strstr(out, "score: 0 of 1 phases"));
}

/* Ten phases: the first eight scored, the last two said and missed, and
 * their vectors not counted in the eighth. */
static void wl_read__phases_past_max__said_and_missed(void **state)
{
	char text[2048] = "", line[96], out[8192];
	size_t len = 0;
	struct wl w;
	int i;

	(void)state;
	for (i = 0; i < 10; i++) {
		snprintf(line, sizeof(line), "phase %s start %d s mono_ns %llu\n",
			 i % 2 ? "leak" : "normal", 10 * i, (unsigned long long)(10 * i) * S);
		len += snprintf(text + len, sizeof(text) - len, "%s", line);
	}
	feed(&w, text);
	assert_int_equal(w.nphases, WL_MAX_PHASES);
	assert_int_equal(w.phases_past, 2);
	/* a leak in each leak phase, on filp, past its grace time */
	for (i = 1; i < 10; i += 2)
		wl_tally(&w, (10 * i + 5) * S, "filp", LABEL_LEAK);
	/* the eighth phase (a leak phase) is scored on its own vectors alone:
	 * a thrash vector of the ninth does not spoil it */
	wl_tally(&w, 85 * S, "kvref-swap", LABEL_THRASH);
	assert_int_equal(score(&w, out, sizeof(out)), WL_MAX_PHASES);
	assert_non_null(strstr(out, "2 phases past the first 8 not scored -> MISSED"));
	assert_non_null(strstr(out, "score: 8 of 10 phases"));
	assert_null(strstr(out, "thrash"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(wl_tally__anomaly_on_key_past_slots__phase_missed),
		cmocka_unit_test(wl_read__phases_past_max__said_and_missed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
