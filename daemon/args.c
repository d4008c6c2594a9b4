// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Command line of cachescoped.  argp runs with ARGP_NO_EXIT so that a bad
 * option comes back as an error code (and so can be tested), and every
 * number goes through one checked strtol.  It also runs with ARGP_NO_HELP:
 * --help, --usage and --version are options of ours, because argp's own set brings two
 * hidden ones, --HANG (sleep for an hour) and --program-name (rename us in
 * every message), that a daemon must not have.
 */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "args.h"
#include "budget.h"
#include "csv.h"
#include "cachescope.h"
#include "classify.h"
#include "metrics.h"
#include "strutil.h"

const char *argp_program_version = "cachescoped " CACHESCOPED_VERSION;
static const char doc[] =
"cachescoped -- watch slab, page-cache and KV-cache behaviour\n"
"\n"
"Traces kmem_cache/kmalloc allocations and frees and page-cache inserts and\n"
"deletes with BPF, turns each (window, key) into a 5-D feature vector,\n"
"clusters the recent vectors with DBSCAN every second and labels them\n"
"thrash, false_sharing, leak or normal with a reason.  Needs root (or\n"
"CAP_BPF + CAP_PERFMON, with CAP_SYS_ADMIN for USDT probes and CAP_SYSLOG\n"
"for kernel symbols: see cachescoped(8)) and a kernel with BTF.  SIGUSR1\n"
"prints the cluster table; SIGHUP re-reads --rules; the cachescope CLI asks\n"
"over the control socket.\n"
"\n"
"Examples:\n"
"  cachescoped --duration 10 --csv /tmp/cs.csv\n"
"  cachescoped --pid 1234 --window-ms 250 -v\n"
"  cachescoped --pid 1234 --pid-tree --csv engine.csv\n"
"  cachescoped --cgroup /sys/fs/cgroup/system.slice/docker-ID.scope\n"
"  cachescoped --workload mixed --duration 60 --csv run.csv\n"
"  cachescoped --workload leak --metrics-addr 127.0.0.1:10422\n";

enum {
	OPT_RING_KB = 0x100,
	OPT_LIVE,
	OPT_EVICTED,
	OPT_SOCKET,
	OPT_TP,
	OPT_TOP,
	OPT_CGROUP,
	OPT_BPF_STATS,
	OPT_EPS,
	OPT_MIN_PTS,
	OPT_HISTORY,
	OPT_RULE,
	OPT_RULES,
	OPT_WORKLOAD,
	OPT_GPU_LIB,
	OPT_GPU_PROBES,
	OPT_WORKLOAD_BACKEND,
	OPT_WORKLOAD_CUDA_LIB,
	OPT_HISTORY_MAX,
	OPT_MAX_KEYS,
	OPT_FOLD_MS,
	OPT_SAMPLE,
	OPT_SAMPLE_BUDGET,
	OPT_SAMPLE_TIME,
	OPT_SAMPLE_TIME_FREES,
	OPT_BUDGET,
	OPT_NICE,
	OPT_USAGE,
	OPT_EXPORT_MB,
	OPT_METRICS_ADDR,
	OPT_WEB_CONFIG,
	OPT_INTERVAL,
	OPT_PID_TREE,
	OPT_PROBE_USER,
	OPT_CSV_MAX_MB,
	OPT_CSV_KEEP,
	OPT_LEAK_STACKS,
};

/* parse_opt's "help was printed": ends the parse, args_parse returns 1 */
#define HELP_PRINTED ECANCELED

static const struct argp_option options[] = {
	{ "duration", 'd', "SEC", 0, "Run SEC seconds, then exit 0 (default: until SIGINT/SIGTERM)", 0 },
	{ "window-ms", 'w', "N", 0, "Window length in milliseconds, 10..60000 (default 100)", 0 },
	{ "pid", 'p', "PID", 0, "Trace only this process (repeatable)", 0 },
	{ "comm", 'c', "NAME", 0, "Trace only tasks with this command name", 0 },
	{ "pid-tree", OPT_PID_TREE, NULL, 0, "With --pid: also trace the processes' descendants, those alive at start and those forked later", 0 },
	{ "probe-user", OPT_PROBE_USER, "USER", 0, "Believe the GPU and KV probe records of this user's processes too (repeatable, at most 7; default: root's, those of --pid and --cgroup processes and --workload's kvref; others are rejected as untrusted)", 0 },
	{ "cgroup", OPT_CGROUP, "PATH", 0, "Trace only tasks in this cgroup v2 directory or any cgroup below it", 0 },
	{ "csv", 'o', "FILE", 0, "Write one row per (window, key) to FILE (atomically, at exit)", 0 },
	{ "csv-max-mb", OPT_CSV_MAX_MB, "MB", 0, "Past MB MiB the --csv file so far is committed and a new one begun: FILE is the newest, FILE.1 the one before... (default 256; 0: no bound)", 0 },
	{ "csv-keep", OPT_CSV_KEEP, "N", 0, "Keep N older --csv files (FILE.1 ... FILE.N) past the bound and of earlier runs, the oldest removed and counted (default 4, at most 64; 0: a run replaces FILE)", 0 },
	{ "leak-stacks", OPT_LEAK_STACKS, "N", 0, "Take the user stacks of about N tracked slab allocations a second per process (at most 2N), of the keys whose old objects rise, to name the code behind a leak (default 64; 0: none)", 0 },
	{ "socket", OPT_SOCKET, "PATH", 0, "Control socket for the cachescope CLI (default " ENV_DEFAULT_SOCKET "; 'none' for none)", 0 },
	{ "metrics-addr", OPT_METRICS_ADDR, "[ADDR:]PORT", 0, "Serve Prometheus metrics at http://ADDR:PORT/metrics (ADDR numeric, [v6] in brackets; only a port: 127.0.0.1; suggested port 10422; default: no endpoint)", 0 },
	{ "web-config", OPT_WEB_CONFIG, "FILE", 0, "TLS and users of the metrics endpoint, as the Prometheus exporter toolkit's web config (tls_server_config: cert_file, key_file; basic_auth_users: bcrypt hashes); per-cache figures go to those users only, or without users to root (default: plain HTTP, per-cache figures to root only)", 0 },
	{ "top", OPT_TOP, "N", 0, "Print the N busiest keys at exit (default 10, 0 for none)", 0 },
	{ "ring-kb", OPT_RING_KB, "KB", 0, "Ring buffer per CPU in KiB, a power of two >= 64 (default 4096)", 0 },
	{ "live-entries", OPT_LIVE, "N", 0, "Capacity of the live-object map (default 262144)", 0 },
	{ "evicted-entries", OPT_EVICTED, "N", 0, "Capacity of the evicted-page map (default 131072)", 0 },
	{ "tracepoints", OPT_TP, "MODE", 0, "auto (default), btf or classic", 0 },
	{ "eps", OPT_EPS, "X", 0, "DBSCAN radius in the scaled feature space, (0, 2.24] (default 0.08)", 0 },
	{ "min-pts", OPT_MIN_PTS, "N", 0, "DBSCAN core-point threshold, itself included (default 5)", 0 },
	{ "history-s", OPT_HISTORY, "SEC", 0, "Re-cluster the vectors of the last SEC seconds (default 60)", 0 },
	{ "export-mb", OPT_EXPORT_MB, "MB", 0, "Keep the newest MB MiB of CSV rows (full chunks compressed) for 'cachescope export' (default 4; 0: none kept)", 0 },
	{ "history-max", OPT_HISTORY_MAX, "N", 0, "Keep at most N vectors for clustering; past it the oldest go first and the history is shorter (default 16384)", 0 },
	{ "max-keys", OPT_MAX_KEYS, "N", 0, "Track at most N keys apart; past it the longest idle are merged into their cache's 'others' key (default 4096)", 0 },
	{ "fold-ms", OPT_FOLD_MS, "MS", 0, "Count a process younger than MS under its user's and command's family (comm*), so a fork storm is a few keys; 0 never (default 1000)", 0 },
	{ "sample", OPT_SAMPLE, "N|auto", 0, "Track 1 in N slab allocations, at random (a power of two, 1..1024; 1: every object), or auto: every object while the records stay within --sample-budget, past it fewer of the busiest caches (default auto)", 0 },
	{ "sample-budget", OPT_SAMPLE_BUDGET, "N", 0, "Slab records per second that auto sampling aims to stay under (default 50000)", 0 },
	{ "sample-time", OPT_SAMPLE_TIME, "N|auto", 0, "Trace slab allocations 1 in N of the time (1, 2, 4 or 8): the kmem_cache_alloc and kmalloc programs attached for a slice of each window at random and detached the rest, where an alloc then costs nothing, not even the tracepoint's dispatch (kmalloc's held attached where cycling it would cost more than it saves); each tracked object stands for N times more, every free is still seen, and the leak rule allows for the clusters this samples in; or auto: all the time, unless --budget is still over with all else shed (default auto)", 0 },
	{ "sample-time-frees", OPT_SAMPLE_TIME_FREES, NULL, 0, "Where allocations are traced only part of the time, detach the kmem_cache_free and kfree programs between the slices too, so that frees cost nothing there either; a tracked object freed between slices counts as live until a slice sees its address handed out again, so a leak the kernel's count of its cache cannot confirm is labelled only where the frees it may hide are a small part of its rise (leak_unseen_share)", 0 },
	{ "budget", OPT_BUDGET, "PERCENT|off", 0, "What tracing may cost, in percent of one CPU (the BPF programs' run time plus the daemon's CPU, measured each second); over it fewer slab objects are tracked, then the page-cache programs and kmalloc's allocations are shed, then (with --sample-time auto, the default) allocations are traced half, a quarter, an eighth of the time, then the frees with them, and all come back as the cost falls (default 25)", 0 },
	{ "nice", OPT_NICE, "N", 0, "The daemon's scheduling priority, -20..19: ahead of the processes it watches, so that it keeps up with their records while they keep the CPUs busy (--budget bounds what it takes); programs it starts run at 0 (default -5)", 0 },
	{ "rule", OPT_RULE, "NAME=VALUE", 0, "Override one labelling threshold (repeatable; see --rules)", 0 },
	{ "rules", OPT_RULES, "FILE", 0, "Read threshold overrides, one NAME = VALUE per line", 0 },
	{ "workload", OPT_WORKLOAD, "SCENARIO", 0, "Run kvref (normal, thrash, false_sharing, leak or mixed) for --duration (default 60) and score the labels of each phase", 0 },
	{ "workload-backend", OPT_WORKLOAD_BACKEND, "NAME", 0, "Run kvref on cpu (default) or cuda; cuda runs it on GPU 0 with the CUPTI library injected (CUDA_INJECTION64_PATH)", 0 },
	{ "workload-cuda-lib", OPT_WORKLOAD_CUDA_LIB, "FILE", 0, "The CUDA backend kvref loads on cuda (default: kvref_cuda.so beside kvref); it must pass the same checks as kvref", 0 },
	{ "gpu-lib", OPT_GPU_LIB, "PATH", 0, "Watch the CUPTI records of every process that loads this libcachescope_cupti.so (default: the one beside cachescoped or in its lib/cachescope directory, if any; 'none' for none)", 0 },
	{ "gpu-probes", OPT_GPU_PROBES, "WHICH", 0, "batch (default): the library's one probe per CUPTI buffer, its records folded into 1 ms bins; records: a probe per CUPTI record (costs a uprobe hit per kernel in the traced process)", 0 },
	{ "interval", OPT_INTERVAL, "SEC", 0, "Print a status line on stderr every SEC seconds, 1..3600: events, drops, keys, anomalous keys and the newest labels (default: none)", 0 },
	{ "bpf-stats", OPT_BPF_STATS, NULL, 0, "Have the kernel time every program run; print ns per event at exit", 0 },
	{ "verbose", 'v', NULL, 0, "More messages (repeat for debug)", 0 },
	{ "help", '?', NULL, 0, "Give this help list", -1 },
	{ "usage", OPT_USAGE, NULL, 0, "Give a short usage message", -1 },
	{ "version", 'V', NULL, 0, "Print program version", -1 },
	{ 0 },
};

void env_defaults(struct env *env)
{
	memset(env, 0, sizeof(*env));
	env->window_ms = 100;
	env->socket_path = ENV_DEFAULT_SOCKET;
	env->ring_kb = 4096;
	env->live_entries = 256 << 10;
	env->evicted_entries = 128 << 10;
	env->top = 10;
	env->tp_mode = TP_AUTO;
	env->eps = 0.08;
	env->min_pts = 5;
	env->history_s = 60;
	env->history_max = 16384;
	env->export_mb = 4;
	env->csv_max_mb = 256;
	env->csv_keep = 4;
	env->leak_stacks = 64;
	env->max_keys = 4096;
	env->fold_ms = 1000;
	env->sample_shift = -1;
	env->sample_budget = 50000;
	env->budget_pct = BUDGET_DEFAULT_PCT;
	env->sample_time_auto = true;
	env->nice = -5;
	env->probe_uids[0] = 0;
	env->nprobe_uids = 1;
}

/* strtol with range and trailing-garbage checks; one line on failure. */
static int parse_long(const char *opt, const char *arg, long min, long max,
		      long *out)
{
	if (str_to_long(arg, min, max, out)) {
		fprintf(stderr, "cachescoped: invalid --%s '%s': expected an integer in %ld..%ld\n",
			opt, arg, min, max);
		return -EINVAL;
	}
	return 0;
}

static int parse_double(const char *opt, const char *arg, double min, double max,
			double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v > min) || v > max) {
		fprintf(stderr, "cachescoped: invalid --%s '%s': expected a number in (%g, %g]\n",
			opt, arg, min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* The options that take a whole number in a range, and where it goes. */
static const struct num_opt {
	int key;
	const char *name;
	long min, max;
	size_t off;		/* of its long in struct env */
} num_opts[] = {
/* f must be a long: comparing its address with a long * says so */
#define NUM_OPT(k, n, lo, hi, f) \
	{ k, n, lo, hi, offsetof(struct env, f) + 0 * sizeof((long *)0 == &((struct env *)0)->f) }
	NUM_OPT('d', "duration", 1, 365L * 86400, duration_s),
	NUM_OPT('w', "window-ms", 10, 60000, window_ms),
	NUM_OPT(OPT_TOP, "top", 0, 100000, top),
	NUM_OPT(OPT_LIVE, "live-entries", 1024, 1L << 26, live_entries),
	NUM_OPT(OPT_EVICTED, "evicted-entries", 1024, 1L << 26, evicted_entries),
	NUM_OPT(OPT_MIN_PTS, "min-pts", 1, 100000, min_pts),
	NUM_OPT(OPT_HISTORY, "history-s", 1, 3600, history_s),
	NUM_OPT(OPT_HISTORY_MAX, "history-max", 256, 1l << 24, history_max),
	NUM_OPT(OPT_EXPORT_MB, "export-mb", 0, 1024, export_mb),
	NUM_OPT(OPT_CSV_MAX_MB, "csv-max-mb", 0, 1l << 20, csv_max_mb),
	NUM_OPT(OPT_CSV_KEEP, "csv-keep", 0, CSV_KEEP_MAX, csv_keep),
	NUM_OPT(OPT_LEAK_STACKS, "leak-stacks", 0, 10000, leak_stacks),
	NUM_OPT(OPT_MAX_KEYS, "max-keys", 64, 1l << 22, max_keys),
	NUM_OPT(OPT_FOLD_MS, "fold-ms", 0, 3600000, fold_ms),
	NUM_OPT(OPT_SAMPLE_BUDGET, "sample-budget", 1000, 100000000, sample_budget),
	NUM_OPT(OPT_INTERVAL, "interval", 1, 3600, interval_s),
	NUM_OPT(OPT_NICE, "nice", -20, 19, nice),
#undef NUM_OPT
};

/* A number option: 0 or EINVAL (said on stderr); -1 for any other key. */
static int num_opt(int key, const char *arg, struct env *env)
{
	size_t i;

	for (i = 0; i < sizeof(num_opts) / sizeof(num_opts[0]); i++)
		if (num_opts[i].key == key)
			return parse_long(num_opts[i].name, arg, num_opts[i].min, num_opts[i].max,
					  (long *)((char *)env + num_opts[i].off)) ? EINVAL : 0;
	return -1;
}

/* --probe-user: a user name, else a numeric uid; root is always believed. */
static int probe_user(const char *arg, struct env *env)
{
	const struct passwd *pw = *arg ? getpwnam(arg) : NULL;
	uint32_t uid;
	long v;
	int i;

	if (pw)
		uid = pw->pw_uid;
	else if (!str_to_long(arg, 0, UINT32_MAX - 1, &v))
		uid = (uint32_t)v;
	else {
		fprintf(stderr, "cachescoped: invalid --probe-user '%s': no such user\n", arg);
		return EINVAL;
	}
	for (i = 0; i < env->nprobe_uids; i++)
		if (env->probe_uids[i] == uid)
			return 0;
	if (env->nprobe_uids >= CS_PROBE_UIDS) {
		fprintf(stderr, "cachescoped: too many --probe-user options (at most %d)\n",
			CS_PROBE_UIDS - 1);
		return EINVAL;
	}
	env->probe_uids[env->nprobe_uids++] = uid;
	return 0;
}

/* Which processes are traced (--pid, --comm, --pid-tree, --cgroup): 0 or
 * EINVAL (said on stderr); -1 for any other key. */
static int scope_opt(int key, const char *arg, struct env *env)
{
	long v;

	switch (key) {
	case 'p':
		if (parse_long("pid", arg, 1, INT_MAX, &v))
			return EINVAL;
		if (env->npids >= ENV_MAX_PIDS) {
			fprintf(stderr, "cachescoped: too many --pid options (at most %d)\n",
				ENV_MAX_PIDS);
			return EINVAL;
		}
		env->pids[env->npids++] = (pid_t)v;
		return 0;
	case 'c':
		if (!*arg || strlen(arg) >= sizeof(env->comm)) {
			fprintf(stderr, "cachescoped: invalid --comm '%s': expected 1..%zu characters\n",
				arg, sizeof(env->comm) - 1);
			return EINVAL;
		}
		strcpy(env->comm, arg);
		return 0;
	case OPT_PID_TREE:
		env->pid_tree = true;
		return 0;
	case OPT_CGROUP:
		env->cgroup_path = arg;
		return 0;
	case OPT_PROBE_USER:
		return probe_user(arg, env);
	default:
		return -1;
	}
}

/* The workload driven and the GPU library watched: 0 or EINVAL (said on
 * stderr); -1 for any other key. */
static int workload_opt(int key, char *arg, struct env *env)
{
	switch (key) {
	case OPT_WORKLOAD:
		/* kvref's scenarios: one a label, and all of them */
		if (label_of(arg) == LABEL_NONE && strcmp(arg, "mixed")) {
			fprintf(stderr, "cachescoped: invalid --workload '%s': expected normal, thrash, false_sharing, leak or mixed\n",
				arg);
			return EINVAL;
		}
		env->workload = arg;
		return 0;
	case OPT_WORKLOAD_BACKEND:
		if (strcmp(arg, "cpu") && strcmp(arg, "cuda")) {
			fprintf(stderr, "cachescoped: invalid --workload-backend '%s': expected cpu or cuda\n",
				arg);
			return EINVAL;
		}
		env->workload_backend = arg;
		return 0;
	case OPT_WORKLOAD_CUDA_LIB:
		env->workload_cuda_lib = arg;
		return 0;
	case OPT_GPU_LIB:
		if (!strcmp(arg, "none"))
			env->no_gpu = true;
		else
			env->gpu_lib = arg;
		return 0;
	case OPT_GPU_PROBES:
		if (strcmp(arg, "batch") && strcmp(arg, "records")) {
			fprintf(stderr, "cachescoped: invalid --gpu-probes '%s': expected batch or records\n",
				arg);
			return EINVAL;
		}
		env->gpu_per_record = !strcmp(arg, "records");
		return 0;
	default:
		return -1;
	}
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct env *env = state->input;
	long v;
	int rc;

	if ((rc = num_opt(key, arg, env)) >= 0 || (rc = scope_opt(key, arg, env)) >= 0 ||
	    (rc = workload_opt(key, arg, env)) >= 0)
		return rc;
	switch (key) {
	case 'o':
		if (!*arg) {
			fprintf(stderr, "cachescoped: invalid --csv '': expected a file name\n");
			return EINVAL;
		}
		env->csv_path = arg;
		return 0;
	case OPT_SOCKET:
		env->socket_path = strcmp(arg, "none") ? arg : NULL;
		return 0;
	case OPT_METRICS_ADDR:
		if (metrics_parse_addr(arg, &env->metrics_sa, &env->metrics_salen)) {
			fprintf(stderr, "cachescoped: invalid --metrics-addr '%s': expected PORT, ADDR:PORT or [ADDR6]:PORT with a numeric address and a port in 0..65535\n",
				arg);
			return EINVAL;
		}
		env->metrics_addr = arg;
		return 0;
	case OPT_WEB_CONFIG:
		env->web_config = arg;
		return 0;
	case OPT_RING_KB:
		if (parse_long("ring-kb", arg, 64, 1L << 20, &v))
			return EINVAL;
		if (v & (v - 1)) {
			fprintf(stderr, "cachescoped: invalid --ring-kb '%s': expected a power of two\n", arg);
			return EINVAL;
		}
		env->ring_kb = v;
		return 0;
	case OPT_TP:
		if (!strcmp(arg, "auto"))
			env->tp_mode = TP_AUTO;
		else if (!strcmp(arg, "btf"))
			env->tp_mode = TP_BTF;
		else if (!strcmp(arg, "classic"))
			env->tp_mode = TP_CLASSIC;
		else {
			fprintf(stderr, "cachescoped: invalid --tracepoints '%s': expected auto, btf or classic\n", arg);
			return EINVAL;
		}
		return 0;
	case OPT_EPS:
		return parse_double("eps", arg, 0, 2.24, &env->eps) ? EINVAL : 0;
	case OPT_BUDGET:
		if (!strcmp(arg, "off")) {
			env->budget_pct = 0;
			return 0;
		}
		return parse_double("budget", arg, 0, 800, &env->budget_pct) ? EINVAL : 0;
	case OPT_SAMPLE_TIME_FREES:
		env->sample_time_frees = true;
		return 0;
	case OPT_SAMPLE_TIME: {
		long n;

		env->sample_time_auto = !strcmp(arg, "auto");
		if (env->sample_time_auto) {
			env->sample_time_shift = 0;
			return 0;
		}
		if (parse_long("sample-time", arg, 1, 1L << CS_DUTY_SHIFT_MAX, &n))
			return EINVAL;
		if (n & (n - 1)) {
			fprintf(stderr, "cachescoped: invalid --sample-time '%s': expected 1, 2, 4, 8 or auto\n", arg);
			return EINVAL;
		}
		env->sample_time_shift = __builtin_ctzl(n);
		return 0;
	}
	case OPT_SAMPLE: {
		long n;

		if (!strcmp(arg, "auto")) {
			env->sample_shift = -1;
			return 0;
		}
		if (parse_long("sample", arg, 1, 1L << CS_SAMPLE_SHIFT_MAX, &n))
			return EINVAL;
		if (n & (n - 1)) {
			fprintf(stderr, "cachescoped: invalid --sample '%s': expected auto or a power of two in 1..%d\n",
				arg, 1 << CS_SAMPLE_SHIFT_MAX);
			return EINVAL;
		}
		env->sample_shift = __builtin_ctzl(n);
		return 0;
	}
	case OPT_RULE:
		if (!strchr(arg, '=')) {
			fprintf(stderr, "cachescoped: invalid --rule '%s': expected NAME=VALUE\n", arg);
			return EINVAL;
		}
		if (env->nrule_args >= (int)(sizeof(env->rule_args) / sizeof(env->rule_args[0]))) {
			fprintf(stderr, "cachescoped: too many --rule options\n");
			return EINVAL;
		}
		env->rule_args[env->nrule_args++] = arg;
		return 0;
	case OPT_RULES:
		env->rules_path = arg;
		return 0;
	case OPT_BPF_STATS:
		env->bpf_stats = true;
		return 0;
	case 'v':
		env->verbose++;
		return 0;
	case '?':
		argp_state_help(state, stdout, ARGP_HELP_STD_HELP);
		return HELP_PRINTED;
	case OPT_USAGE:
		argp_state_help(state, stdout, ARGP_HELP_USAGE);
		return HELP_PRINTED;
	case 'V':
		printf("%s\n", argp_program_version);
		return HELP_PRINTED;
	case ARGP_KEY_ARG:
		fprintf(stderr, "cachescoped: unexpected argument '%s'\n", arg);
		return EINVAL;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

int args_parse(int argc, char **argv, struct env *env)
{
	static const struct argp argp = { options, parse_opt, NULL, doc, NULL, NULL, NULL };
	int idx = 0;
	error_t err;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-?") ||
		    !strcmp(argv[i], "--usage") || !strcmp(argv[i], "-V") ||
		    !strcmp(argv[i], "--version")) {
			argp_parse(&argp, 2, (char *[]){ argv[0], argv[i], NULL },
				   ARGP_NO_EXIT | ARGP_NO_HELP, NULL, env);
			return 1;
		}
	}
	err = argp_parse(&argp, argc, argv, ARGP_NO_EXIT | ARGP_NO_HELP, &idx, env);
	if (err == HELP_PRINTED)
		return 1;	/* an abbreviation: --he, --us */
	if (err)
		return -EINVAL;
	if (env->pid_tree && !env->npids) {
		fprintf(stderr, "cachescoped: --pid-tree needs --pid\n");
		return -EINVAL;
	}
	if (env->web_config && !env->metrics_addr) {
		fprintf(stderr, "cachescoped: --web-config needs --metrics-addr\n");
		return -EINVAL;
	}
	if (env->workload_backend && !env->workload) {
		fprintf(stderr, "cachescoped: --workload-backend needs --workload\n");
		return -EINVAL;
	}
	if (env->workload && !env->duration_s)
		env->duration_s = 60;
	if (env->workload && env->duration_s < 5) {
		fprintf(stderr, "cachescoped: invalid --duration %ld with --workload: expected at least 5\n",
			env->duration_s);
		return -EINVAL;
	}
	return 0;
}
