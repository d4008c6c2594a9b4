// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fdchurn: create and close eventfds, the independent count that the
 * integration tests compare the daemon's filp counts with.
 *
 *   fdchurn N [ROUNDS] [--leak | --keep K] [--period-ms MS]
 *
 * Each round opens N eventfds and closes them again, then sleeps MS
 * milliseconds (default 150; none after a single round).  With --leak it
 * keeps them all open, as a leaking server would; with --keep K it keeps K of
 * each round's N open and closes the rest, a leak hidden in churn.  Kept fds
 * stay open until 500 ms after the last round, when exit closes them all at
 * once.  Prints "pid PID" first.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static void usage(void)
{
	fprintf(stderr, "usage: fdchurn N [ROUNDS] [--leak | --keep K] [--period-ms MS]\n");
	exit(2);
}

static long num(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	long n, rounds = 1, r, i, keep = 0, period_ms = 150;
	struct rlimit rl;
	int *fds, a = 2;

	if (argc < 2)
		usage();
	n = num(argv[1]);
	if (argc > 2 && argv[2][0] != '-') {
		rounds = num(argv[2]);
		a = 3;
	}
	for (; a < argc; a++) {
		if (!strcmp(argv[a], "--leak"))
			keep = n;
		else if (!strcmp(argv[a], "--keep") && a + 1 < argc)
			keep = num(argv[++a]);
		else if (!strcmp(argv[a], "--period-ms") && a + 1 < argc)
			period_ms = num(argv[++a]);
		else
			usage();
	}
	if (n <= 0 || rounds <= 0 || keep > n) {
		fprintf(stderr, "fdchurn: N and ROUNDS must be positive, K at most N\n");
		return 2;
	}
	if (keep) {
		rl.rlim_cur = rl.rlim_max = keep * rounds + n + 64;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	fds = calloc(n, sizeof(*fds));
	if (!fds)
		return 1;
	printf("pid %d\n", getpid());
	fflush(stdout);
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < n; i++) {
			fds[i] = eventfd(0, EFD_CLOEXEC);
			if (fds[i] < 0) {
				fprintf(stderr, "fdchurn: eventfd: %s\n", strerror(errno));
				return 1;
			}
		}
		for (i = keep; i < n; i++)
			close(fds[i]);
		if (rounds > 1 && period_ms)
			nanosleep(&(struct timespec){ period_ms / 1000,
						      (period_ms % 1000) * 1000000 }, NULL);
	}
	if (keep)
		nanosleep(&(struct timespec){ 0, 500000000 }, NULL);
	free(fds);
	return 0;
}
