// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Load bench/peers/floor.bpf.c's empty programs (the object beside this
 * binary, or the one named), attach every one, say "ready", and hold them
 * until SIGINT or SIGTERM: the dispatch floor the benches compare with.
 *
 * With --frees: only the two free programs (kmem_cache_free, kfree), the
 * floor of any tracer that sees every free, as sampling the allocations
 * in time (--sample-time without --sample-time-frees) does: what it costs
 * is the most that tracing the allocations less can save.
 *
 * With --cycle N: attach and detach each program N times instead, one
 * program after the other, and print what one attach and one detach cost
 * this process's CPU (in the kernel: a tracepoint's first probe patches
 * its static call at every call site and its jump label, each patch a
 * round of IPIs to every CPU, and its last probe patches them back) and
 * the wall time of a cycle (an attach soon after a detach waits for a
 * grace period): what sampling in time (--sample-time) pays 10 times a
 * second for each program it cycles.
 *
 *   sudo build/bench/floor [--frees] [OBJECT]
 *   sudo build/bench/floor --cycle N [OBJECT]
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double secs(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --cycle: each program attached and detached n times */
static int cycle(struct bpf_object *obj, long n)
{
	struct bpf_program *prog;
	struct bpf_link *link;
	double w0, a, b, c, att, det;
	long i;

	printf("%-24s %14s %14s %14s\n", "program", "attach CPU ms", "detach CPU ms", "cycle wall ms");
	bpf_object__for_each_program(prog, obj) {
		att = det = 0;
		w0 = secs(CLOCK_MONOTONIC);
		for (i = 0; i < n; i++) {
			a = secs(CLOCK_PROCESS_CPUTIME_ID);
			link = bpf_program__attach(prog);
			b = secs(CLOCK_PROCESS_CPUTIME_ID);
			if (!link) {
				fprintf(stderr, "floor: attaching %s: %s\n", bpf_program__name(prog),
					strerror(errno));
				return 1;
			}
			bpf_link__destroy(link);
			c = secs(CLOCK_PROCESS_CPUTIME_ID);
			att += b - a;
			det += c - b;
		}
		printf("%-24s %14.3f %14.3f %14.3f\n", bpf_program__name(prog), att * 1e3 / (double)n,
		       det * 1e3 / (double)n, (secs(CLOCK_MONOTONIC) - w0) * 1e3 / (double)n);
	}
	return 0;
}

int main(int argc, char **argv)
{
	char path[PATH_MAX], self[PATH_MAX];
	struct bpf_object *obj;
	struct bpf_program *prog;
	long ncycle = 0;
	bool frees = false;
	char *end;
	ssize_t n;
	int err, links = 0;

	if (argc > 1 && !strcmp(argv[1], "--cycle")) {
		errno = 0;
		ncycle = argc > 2 ? strtol(argv[2], &end, 10) : 0;
		if (argc < 3 || errno || *end || ncycle < 1 || ncycle > 100000) {
			fprintf(stderr, "floor: --cycle wants a count, 1..100000\n");
			return 2;
		}
		argc -= 2;
		argv += 2;
	}
	if (argc > 1 && !strcmp(argv[1], "--frees")) {
		frees = true;
		argc--;
		argv++;
	}
	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: floor [--cycle N | --frees] [OBJECT]\n");
		return 2;
	}
	if (argc == 2) {
		snprintf(path, sizeof(path), "%s", argv[1]);
	} else {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n < 0) {
			fprintf(stderr, "floor: /proc/self/exe: %s\n", strerror(errno));
			return 1;
		}
		self[n] = '\0';
		*strrchr(self, '/') = '\0';
		if ((size_t)snprintf(path, sizeof(path), "%s/floor.bpf.o", self) >= sizeof(path)) {
			fprintf(stderr, "floor: %s: path too long\n", self);
			return 1;
		}
	}
	obj = bpf_object__open_file(path, NULL);
	if (!obj) {
		fprintf(stderr, "floor: %s: %s\n", path, strerror(errno));
		return 1;
	}
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "floor: loading %s: %s\n", path, strerror(-err));
		return 1;
	}
	if (ncycle)
		return cycle(obj, ncycle);
	bpf_object__for_each_program(prog, obj) {
		if (frees && !strstr(bpf_program__name(prog), "free"))
			continue;
		if (!bpf_program__attach(prog)) {
			fprintf(stderr, "floor: attaching %s: %s\n", bpf_program__name(prog),
				strerror(errno));
			return 1;
		}
		links++;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("ready: %d empty programs attached\n", links);
	fflush(stdout);
	while (!stop)
		pause();
	/* the links go with the process */
	return 0;
}
