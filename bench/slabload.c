// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * slabload: a slab-heavy loop for measuring tracing overhead.  Each
 * iteration opens and closes an eventfd (a struct file, a dentry and their
 * kmalloc'ed companions: about 10 traced slab events).  Prints ns per
 * iteration, measured with CLOCK_MONOTONIC around the loop.  With WORKERS,
 * each of that many processes runs ITERATIONS, and the line is the ns per
 * iteration of the whole (wall time / all iterations): the ingest test's
 * many-CPU variant.  Processes, not threads: threads would share one fd
 * table and wait on its lock instead of the allocator.  eventfd() files
 * all share the one anonymous inode, so they do not scale over CPUs
 * either; the pipe mode (pipe() and two closes: two files, an inode, the
 * pipe's buffers, about twice the events) does.  The leak mode (one
 * process) keeps every 100th eventfd open, a leak amid churn, and times
 * ITERATIONS only after 2 s of the same loop (ITERATIONS and the 2 s
 * stay within the hard limit of open files, kept open): a tracer that does more for
 * a key it suspects of leaking is timed once it suspects it.
 *
 *   slabload ITERATIONS [WORKERS [eventfd|pipe|leak]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long n;
static int use_pipe;	/* 1: pipe, 2: leak */

static void leak_loop(long iterations, long *k)
{
	long i;

	for (i = 0; i < iterations; i++, (*k)++) {
		int fd = eventfd(0, 0);

		if (*k % 100)
			close(fd);
	}
}

/* 2 s of the leaking loop, untimed */
static void leak_warm_up(long *k)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		leak_loop(10000, k);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while (b.tv_sec - a.tv_sec < 2);
}

static void loop(void)
{
	int p[2];
	long i;

	for (i = 0; i < n; i++) {
		if (!use_pipe) {
			close(eventfd(0, 0));
		} else if (!pipe(p)) {
			close(p[0]);
			close(p[1]);
		}
	}
}

int main(int argc, char **argv)
{
	struct timespec a, b;
	int status, bad = 0;
	pid_t pid;
	long t = 1, i;
	double ns;

	n = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
	if (argc > 2)
		t = strtol(argv[2], NULL, 10);
	if (argc > 3)
		use_pipe = !strcmp(argv[3], "pipe") ? 1 : !strcmp(argv[3], "leak") ? 2 :
			   strcmp(argv[3], "eventfd") ? -1 : 0;
	if (n <= 0 || t < 1 || t > 256 || use_pipe < 0 || (use_pipe == 2 && t != 1)) {
		fprintf(stderr, "usage: slabload ITERATIONS [WORKERS (1..256) [eventfd|pipe]] | ITERATIONS 1 leak\n");
		return 2;
	}
	if (use_pipe == 2) {
		struct rlimit rl;
		long k = 0;

		/* the leaked fds need room: up to the hard limit */
		getrlimit(RLIMIT_NOFILE, &rl);
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl)) {
			perror("slabload: setrlimit");
			return 1;
		}
		leak_warm_up(&k);
		clock_gettime(CLOCK_MONOTONIC, &a);
		leak_loop(n, &k);
	} else {
		clock_gettime(CLOCK_MONOTONIC, &a);
	}
	if (use_pipe == 2) {
		/* timed above */
	} else if (t == 1) {
		loop();
	} else {
		for (i = 0; i < t; i++) {
			pid = fork();
			if (pid < 0) {
				perror("slabload: fork");
				return 1;
			}
			if (!pid) {
				loop();
				_exit(0);
			}
		}
		while (wait(&status) > 0)
			bad |= !WIFEXITED(status) || WEXITSTATUS(status);
		if (bad)
			return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
	printf("%.1f\n", ns / ((double)n * t));
	return 0;
}
