// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * leaker: a server loop that leaks from one known function, for the test
 * that a leak's allocation stack names it.
 *
 *   leaker SECONDS [KEEP_PER_S]
 *
 * Every 10 ms (on the clock: 100 requests a second) it serves a request:
 * handle_request() opens and closes 10 eventfds (1000 balanced opens a
 * second), and remember_client() opens one more that it never closes, for
 * KEEP_PER_S of the 100 requests a second (default 50), spread.  Both are
 * compiled as the distributions compile (-O2, no frame pointers), so only
 * the call-frame information finds remember_client's caller.  Prints
 * "pid PID" first.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static long kept;

__attribute__((noinline)) int remember_client(void)
{
	int fd = eventfd(0, EFD_CLOEXEC);

	if (fd >= 0)
		kept++;
	return fd;
}

__attribute__((noinline)) int handle_request(void)
{
	int i, fd;

	for (i = 0; i < 10; i++) {
		fd = eventfd(0, EFD_CLOEXEC);
		if (fd < 0)
			return -1;
		close(fd);
	}
	return 0;
}

int main(int argc, char **argv)
{
	long secs, keep_per_s = 50, tick = 0;
	struct timespec end, now, next;
	struct rlimit rl;

	if (argc < 2 || (secs = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: leaker SECONDS [KEEP_PER_S]\n");
		return 2;
	}
	if (argc > 2)
		keep_per_s = atol(argv[2]);
	if (keep_per_s < 0 || keep_per_s > 100) {
		fprintf(stderr, "leaker: KEEP_PER_S must be 0..100\n");
		return 2;
	}
	rl.rlim_cur = rl.rlim_max = secs * 100 + 256;
	setrlimit(RLIMIT_NOFILE, &rl);
	printf("pid %d\n", getpid());
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &end);
	next = end;
	end.tv_sec += secs;
	do {
		if (handle_request() < 0) {
			fprintf(stderr, "leaker: eventfd: %s\n", strerror(errno));
			return 1;
		}
		/* KEEP_PER_S of the 100 requests a second leak one, spread */
		if ((tick + 1) * keep_per_s / 100 > tick * keep_per_s / 100 &&
		    remember_client() < 0) {
			fprintf(stderr, "leaker: eventfd: %s\n", strerror(errno));
			return 1;
		}
		tick++;
		next.tv_nsec += 10000000;
		if (next.tv_nsec >= 1000000000) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec < end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
	printf("kept %ld\n", kept);
	return 0;
}
