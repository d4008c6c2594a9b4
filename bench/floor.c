// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Load bench/peers/floor.bpf.c's empty programs (the object beside this
 * binary, or the one named), attach every one, say "ready", and hold them
 * until SIGINT or SIGTERM: the dispatch floor the benches compare with.
 *
 *   sudo build/bench/floor [OBJECT]
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	char path[PATH_MAX], self[PATH_MAX];
	struct bpf_object *obj;
	struct bpf_program *prog;
	ssize_t n;
	int err, links = 0;

	if (argc > 2) {
		fprintf(stderr, "usage: floor [OBJECT]\n");
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
	bpf_object__for_each_program(prog, obj) {
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
