// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * kvref: the reference KV-cache inference workload.  A small decoder-only
 * transformer (llama2.c layout) serves requests over a paged KV cache with
 * prefix caching, LRU eviction and a swap file, in one of the scenarios
 * that make a cache pattern happen (see workload.c), and reports at exit
 * what really happened, so detection can be scored against it.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"
#include "workload.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: kvref [OPTIONS]\n"
		"\n"
		"Serve generated requests with a small transformer over a paged KV cache.\n"
		"\n"
		"  --scenario NAME     normal, thrash, false_sharing, leak or mixed (default normal)\n"
		"  --duration SEC      how long to serve (default 10; mixed: a quarter per phase)\n"
		"  --workers N         front-end/worker thread pairs (default 2)\n"
		"  --kv-blocks N       block pool of the normal and false_sharing phases, 4x for leak,\n"
		"                      thrash uses 24 (default 512)\n"
		"  --block-size N      tokens per block (default 16)\n"
		"  --swap-dir DIR      where the swap file goes (default /var/tmp)\n"
		"  --seed N            weights and requests (default 1)\n"
		"  --model FILE        load a llama2.c checkpoint instead of generating weights\n"
		"  --save-model FILE   write the generated weights as a llama2.c checkpoint\n"
		"  --backend cpu       the CPU backend (the CUDA one comes with the GPU stream)\n"
		"  --json              print the report as JSON\n"
		"  -q, --quiet         no phase lines while running\n"
		"  -h, --help          this text\n");
}

static int parse_long(const char *opt, const char *arg, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max) {
		fprintf(stderr, "kvref: invalid --%s '%s': expected an integer in %ld..%ld\n",
			opt, arg, min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "scenario", required_argument, NULL, 's' },
		{ "duration", required_argument, NULL, 'd' },
		{ "workers", required_argument, NULL, 'w' },
		{ "kv-blocks", required_argument, NULL, 'b' },
		{ "block-size", required_argument, NULL, 'B' },
		{ "swap-dir", required_argument, NULL, 'S' },
		{ "seed", required_argument, NULL, 'r' },
		{ "model", required_argument, NULL, 'm' },
		{ "save-model", required_argument, NULL, 'M' },
		{ "backend", required_argument, NULL, 'k' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct workload_opts o = {
		.scenario = SC_NORMAL, .duration_s = 10, .workers = 2,
		.kv_blocks = 512, .block_size = 16, .swap_dir = "/var/tmp", .seed = 1,
	};
	const char *model_path = NULL, *save_path = NULL;
	struct kv_model m = { 0 };
	struct run_report rep;
	struct kv_config c;
	bool json = false;
	int opt, err, sc;
	long v;

	while ((opt = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
		switch (opt) {
		case 's':
			sc = scenario_parse(optarg);
			if (sc < 0) {
				fprintf(stderr, "kvref: invalid --scenario '%s': expected normal, thrash, false_sharing, leak or mixed\n",
					optarg);
				return 2;
			}
			o.scenario = sc;
			break;
		case 'd':
			if (parse_long("duration", optarg, 1, 86400, &v))
				return 2;
			o.duration_s = v;
			break;
		case 'w':
			if (parse_long("workers", optarg, 1, 64, &v))
				return 2;
			o.workers = v;
			break;
		case 'b':
			if (parse_long("kv-blocks", optarg, 8, 1 << 20, &v))
				return 2;
			o.kv_blocks = v;
			break;
		case 'B':
			if (parse_long("block-size", optarg, 1, 48, &v))
				return 2;
			if (48 % v) {
				fprintf(stderr, "kvref: invalid --block-size '%s': expected a divisor of 48 (the system prompt)\n",
					optarg);
				return 2;
			}
			o.block_size = v;
			break;
		case 'S':
			o.swap_dir = optarg;
			break;
		case 'r':
			if (parse_long("seed", optarg, 0, LONG_MAX, &v))
				return 2;
			o.seed = v;
			break;
		case 'm':
			model_path = optarg;
			break;
		case 'M':
			save_path = optarg;
			break;
		case 'k':
			if (strcmp(optarg, "cpu")) {
				fprintf(stderr, "kvref: invalid --backend '%s': this build has the cpu backend only\n",
					optarg);
				return 2;
			}
			break;
		case 'j':
			json = true;
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "kvref: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	o.quiet |= json;

	if (model_path) {
		err = model_load(&m, model_path);
		if (err) {
			fprintf(stderr, "kvref: cannot load model %s: %s\n", model_path,
				err == -EINVAL ? "not a llama2.c checkpoint of a sane shape" : strerror(-err));
			return 1;
		}
	} else {
		kv_config_default(&c);
		err = model_init_random(&m, &c, o.seed);
		if (err) {
			fprintf(stderr, "kvref: cannot generate weights: %s\n", strerror(-err));
			return 1;
		}
	}
	if (save_path) {
		err = model_save(&m, save_path);
		if (err) {
			fprintf(stderr, "kvref: cannot write %s: %s\n", save_path, strerror(-err));
			model_release(&m);
			return 1;
		}
	}
	err = workload_run(&m, &o, &rep);
	if (err) {
		fprintf(stderr, "kvref: cannot serve: %s\n", strerror(-err));
		model_release(&m);
		return 1;
	}
	if (json)
		report_json(&rep, stdout);
	else
		report_print(&rep, stdout);
	model_release(&m);
	return 0;
}
