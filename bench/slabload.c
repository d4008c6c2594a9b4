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
 * pipe's buffers, about twice the events) does.
 *
 *   slabload ITERATIONS [WORKERS [eventfd|pipe]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long n;
static int use_pipe;

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
		use_pipe = !strcmp(argv[3], "pipe") ? 1 : strcmp(argv[3], "eventfd") ? -1 : 0;
	if (n <= 0 || t < 1 || t > 256 || use_pipe < 0) {
		fprintf(stderr, "usage: slabload ITERATIONS [WORKERS (1..256) [eventfd|pipe]]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (t == 1) {
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
