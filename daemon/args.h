/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Command line of cachescoped, parsed into one struct env.
 */
#ifndef CS_ARGS_H
#define CS_ARGS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include "../bpf/cachescope.h"
#include "proto.h"

#define ENV_MAX_PIDS 1024
#define ENV_DEFAULT_RUNDIR PROTO_DEFAULT_RUNDIR
#define ENV_DEFAULT_SOCKET PROTO_DEFAULT_SOCKET
#define CACHESCOPED_VERSION "0.1"

enum tp_mode {
	TP_AUTO,	/* BTF tracepoints, classic where the BTF one is missing */
	TP_BTF,
	TP_CLASSIC,
};

struct env {
	long duration_s;	/* 0: until SIGINT/SIGTERM */
	long window_ms;
	pid_t pids[ENV_MAX_PIDS];
	int npids;
	bool pid_tree;		/* --pid-tree: and their descendants */
	/* real uids whose processes' probe records are believed: root's
	 * first, then --probe-user's (bpf/cachescope.h: CS_F_FOREIGN) */
	uint32_t probe_uids[CS_PROBE_UIDS];
	int nprobe_uids;
	char comm[16];
	const char *cgroup_path;
	const char *csv_path;
	const char *socket_path;	/* NULL: no control socket */
	const char *metrics_addr;	/* --metrics-addr as given; NULL: none */
	struct sockaddr_storage metrics_sa;	/* ... parsed */
	socklen_t metrics_salen;
	const char *web_config;		/* --web-config FILE, or NULL */
	long ring_kb;
	long live_entries;
	long evicted_entries;
	long top;
	enum tp_mode tp_mode;
	bool bpf_stats;		/* enable kernel run-time accounting */
	long interval_s;	/* a status line this often; 0: none */
	double eps;
	long min_pts;
	long history_s;
	long history_max;	/* vectors kept for clustering at most */
	long export_mb;		/* MiB of CSV rows kept for export */
	long csv_max_mb;	/* --csv's file bound (0: none) */
	long csv_keep;		/* older --csv files kept past the bound */
	long leak_stacks;	/* allocation stacks a second per process (0: none) */
	long max_keys;		/* keys tracked apart at most */
	long fold_ms;		/* processes younger than this count under their
				 * command's family; 0: never */
	int sample_shift;	/* track 1 in 2^shift slab objects; -1: auto */
	int sample_time_shift;	/* the alloc programs attached 1/2^this of the time */
	bool sample_time_auto;	/* --sample-time auto: as --budget decides */
	bool sample_time_frees;	/* --sample-time-frees: the frees' programs with them */
	long sample_budget;	/* auto: slab records per second to stay under */
	double budget_pct;	/* --budget: share of one CPU; 0: off */
	long nice;		/* --nice: the daemon's scheduling priority */
	const char *rules_path;
	const char *workload;		/* kvref scenario to drive, or NULL */
	const char *workload_backend;	/* kvref --backend; NULL: cpu */
	const char *workload_cuda_lib;	/* kvref --cuda-lib; NULL: beside kvref */
	const char *gpu_lib;		/* CUPTI library to watch; NULL: beside us */
	bool no_gpu;
	bool gpu_per_record;		/* --gpu-probes records */
	const char *rule_args[64];	/* NAME=VALUE overrides, in order */
	int nrule_args;
	int verbose;
};

void env_defaults(struct env *env);

/*
 * Parse argv into env (which env_defaults() has set).  Returns 0 on success,
 * 1 when --help or --usage was printed, and -EINVAL after printing a one-line
 * error naming the option.
 */
int args_parse(int argc, char **argv, struct env *env);

#endif
