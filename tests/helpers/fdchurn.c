// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fdchurn: create and close eventfds, the independent count that the
 * integration tests compare the daemon's filp counts with.
 *
 *   fdchurn N [ROUNDS] [--leak]
 *
 * Each round opens N eventfds and closes them again.  With --leak it keeps
 * them open, as a leaking server would, until 500 ms after the last round,
 * when exit closes them all at once.  Prints "pid PID" first.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n, rounds = 1, r, i;
	int leak = 0, *fds;
	struct rlimit rl;

	if (argc < 2) {
		fprintf(stderr, "usage: fdchurn N [ROUNDS] [--leak]\n");
		return 2;
	}
	n = strtol(argv[1], NULL, 10);
	if (argc > 2 && argv[2][0] != '-')
		rounds = strtol(argv[2], NULL, 10);
	leak = argc > 2 && !strcmp(argv[argc - 1], "--leak");
	if (n <= 0 || rounds <= 0) {
		fprintf(stderr, "fdchurn: N and ROUNDS must be positive\n");
		return 2;
	}
	if (leak) {
		rl.rlim_cur = rl.rlim_max = n * rounds + 64;
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
		if (!leak)
			for (i = 0; i < n; i++)
				close(fds[i]);
		if (rounds > 1)
			nanosleep(&(struct timespec){ 0, 150000000 }, NULL);
	}
	if (leak)
		nanosleep(&(struct timespec){ 0, 500000000 }, NULL);
	free(fds);
	return 0;
}
