// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer harness: cachescoped's command line (daemon/args.c).  The input
 * is split on NUL bytes into argv[1..] (argv[0] is "cachescoped"), at most
 * 256 arguments, each a writable copy as the kernel gives them.  args_parse
 * must return 0, 1 (help printed) or -EINVAL, and on 0 every field of the
 * env must be in the range --help documents (abort() otherwise).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../daemon/args.h"

#define MAX_ARGS 256

static FILE *devnull;

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "fuzz_args: invariant failed at %s:%d: %s\n", __FILE__, __LINE__, #c); \
	abort(); } } while (0)

static bool in_args(const char *p, char *const *argv, int argc)
{
	int i;

	for (i = 0; i < argc; i++)
		if (p >= argv[i] && p <= argv[i] + strlen(argv[i]))
			return true;
	return false;
}

static bool one_of(const char *s, const char *const *names)
{
	for (; *names; names++)
		if (!strcmp(s, *names))
			return true;
	return false;
}

static void check_env(const struct env *e, char *const *argv, int argc)
{
	static const char *const workloads[] = { "normal", "thrash", "false_sharing", "leak",
						 "mixed", NULL };
	static const char *const backends[] = { "cpu", "cuda", NULL };
	int i;

	CHECK(e->duration_s >= 0 && e->duration_s <= 365L * 86400);
	CHECK(e->window_ms >= 10 && e->window_ms <= 60000);
	CHECK(e->npids >= 0 && e->npids <= ENV_MAX_PIDS);
	for (i = 0; i < e->npids; i++)
		CHECK(e->pids[i] >= 1);
	CHECK(memchr(e->comm, 0, sizeof(e->comm)));
	CHECK(e->ring_kb >= 64 && e->ring_kb <= 1L << 20 && !(e->ring_kb & (e->ring_kb - 1)));
	CHECK(e->live_entries >= 1024 && e->live_entries <= 1L << 26);
	CHECK(e->evicted_entries >= 1024 && e->evicted_entries <= 1L << 26);
	CHECK(e->top >= 0 && e->top <= 100000);
	CHECK(e->tp_mode == TP_AUTO || e->tp_mode == TP_BTF || e->tp_mode == TP_CLASSIC);
	CHECK(e->eps > 0 && e->eps <= 2.24);
	CHECK(e->min_pts >= 1 && e->min_pts <= 100000);
	CHECK(e->history_s >= 1 && e->history_s <= 3600);
	CHECK(e->history_max >= 256 && e->history_max <= 1L << 24);
	CHECK(e->max_keys >= 64 && e->max_keys <= 1L << 22);
	CHECK(e->fold_ms >= 0 && e->fold_ms <= 3600000);
	CHECK(e->nrule_args >= 0 &&
	      e->nrule_args <= (int)(sizeof(e->rule_args) / sizeof(e->rule_args[0])));
	for (i = 0; i < e->nrule_args; i++)
		CHECK(in_args(e->rule_args[i], argv, argc) && strchr(e->rule_args[i], '='));
	if (e->csv_path)
		CHECK(in_args(e->csv_path, argv, argc) && *e->csv_path);
	if (e->socket_path && strcmp(e->socket_path, ENV_DEFAULT_SOCKET))
		CHECK(in_args(e->socket_path, argv, argc));
	if (e->workload) {
		CHECK(one_of(e->workload, workloads));
		CHECK(e->duration_s >= 5);
	}
	if (e->workload_backend)
		CHECK(e->workload && one_of(e->workload_backend, backends));
	CHECK(e->verbose >= 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[MAX_ARGS + 2], *buf;
	FILE *saved_out, *saved_err;
	struct env env;
	size_t i, start = 0;
	int argc = 1, err;

	/* one copy, NUL-terminated: each argument points into it */
	buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[0] = (char[]){ "cachescoped" };
	for (i = 0; i <= size && argc <= MAX_ARGS; i++) {
		if (buf[i])
			continue;
		if (i < size || i > start)
			argv[argc++] = buf + start;
		start = i + 1;
	}
	argv[argc] = NULL;

	/* the messages (one a bad option) go nowhere; argp takes its streams
	 * from stdout and stderr when it starts */
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	saved_out = stdout;
	saved_err = stderr;
	stdout = stderr = devnull;
	env_defaults(&env);
	err = args_parse(argc, argv, &env);
	stdout = saved_out;
	stderr = saved_err;
	CHECK(err == 0 || err == 1 || err == -EINVAL);
	if (!err)
		check_env(&env, argv, argc);
	free(buf);
	return 0;
}
