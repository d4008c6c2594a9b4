// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * slabload: a slab-heavy loop for measuring tracing overhead.  Each
 * iteration opens and closes an eventfd (a struct file, a dentry and their
 * kmalloc'ed companions: about 10 traced slab events).  Prints ns per
 * iteration, measured with CLOCK_MONOTONIC around the loop.
 *
 *   slabload ITERATIONS
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec a, b;
	long n, i;
	double ns;

	n = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
	if (n <= 0) {
		fprintf(stderr, "usage: slabload ITERATIONS\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		close(eventfd(0, 0));
	clock_gettime(CLOCK_MONOTONIC, &b);
	ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
	printf("%.1f\n", ns / n);
	return 0;
}
