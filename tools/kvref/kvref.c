// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * kvref: the reference KV-cache inference workload.  A small decoder-only
 * transformer (llama2.c layout) serves requests over a paged KV cache with
 * prefix caching, LRU eviction and a swap file, in one of the scenarios
 * that make a cache pattern happen (see workload.c), and reports at exit
 * what really happened, so detection can be scored against it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "backend.h"
#include "probes.h"
#include "model.h"
#include "workload.h"
#include "../../daemon/strutil.h"

#define CUDA_LIB "kvref_cuda.so"

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
		"  --swap-dir DIR      where the swap files go (default /var/tmp), each made in a\n"
		"                      private 0700 directory and unlinked at once\n"
		"  --seed N            weights and requests (default 1)\n"
		"  --model FILE        load a llama2.c checkpoint instead of generating weights\n"
		"  --save-model FILE   write the generated weights as a llama2.c checkpoint\n"
		"  --backend NAME      cpu (default) or cuda: weights, KV block pool and forward\n"
		"                      pass on GPU 0, from " CUDA_LIB " beside kvref (built by make\n"
		"                      where nvcc exists)\n"
		"  --cuda-lib FILE     the CUDA backend to load instead of " CUDA_LIB " beside kvref\n"
		"                      (a /proc/self/fd/N path: one cachescoped opened for it)\n"
		"  --check             instead of serving: run the same token streams through the\n"
		"                      chosen backend and the CPU one, blocks swapped out and back\n"
		"                      in between, and compare every logit (exit 1 if they differ)\n"
		"  --json              print the report as JSON\n"
		"  -q, --quiet         no phase lines while running\n"
		"  --no-probes         reach none of kvref's USDT probes: to a tracer, an engine\n"
		"                      with no probes of its own (its GPU work through CUPTI alone)\n"
		"  -h, --help          this text\n");
}

static int parse_long(const char *opt, const char *arg, long min, long max, long *out)
{
	if (str_to_long(arg, min, max, out)) {
		fprintf(stderr, "kvref: invalid --%s '%s': expected an integer in %ld..%ld\n",
			opt, arg, min, max);
		return -EINVAL;
	}
	return 0;
}

/* What to call a library in a message: the file a /proc/self/fd/N path
 * stands for (cachescoped hands its files over as descriptors), or the
 * path itself. */
static const char *lib_name(const char *path, char *buf, size_t n)
{
	ssize_t len;

	if (strncmp(path, "/proc/self/fd/", 14))
		return path;
	len = readlink(path, buf, n - 1);
	if (len <= 0)
		return path;
	buf[len] = '\0';
	return buf;
}

/* Opens the CUDA backend: lib (--cuda-lib), else CUDA_LIB in kvref's own
 * directory. */
static int open_cuda(const struct kv_model *m, struct kv_backend *b, void **dl, const char *lib)
{
	char path[4096], why[256] = "", name[4096];
	const char *inject = getenv("CUDA_INJECTION64_PATH");
	kvref_cuda_open_fn *fn;
	ssize_t n;
	char *slash;
	int err;

	if (lib) {
		snprintf(path, sizeof(path), "%s", lib);
	} else {
		n = readlink("/proc/self/exe", path, sizeof(path) - sizeof(CUDA_LIB) - 1);
		if (n <= 0 || !(slash = memrchr(path, '/', (size_t)n))) {
			fprintf(stderr, "kvref: cannot find my own directory to load %s\n", CUDA_LIB);
			return -ENOENT;
		}
		strcpy(slash + 1, CUDA_LIB);
	}
	/* the driver loads it in cuInit and says nothing when it cannot */
	if (inject && access(inject, R_OK)) {
		fprintf(stderr, "kvref: cannot read the CUPTI library %s (CUDA_INJECTION64_PATH) as uid %u: %s\n",
			lib_name(inject, name, sizeof(name)), (unsigned int)getuid(), strerror(errno));
		return -errno;
	}
	*dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!*dl) {
		fprintf(stderr, "kvref: --backend cuda needs %s (built by make where nvcc exists): %s\n",
			lib_name(path, name, sizeof(name)), dlerror());
		return -ENOENT;
	}
	fn = (kvref_cuda_open_fn *)dlsym(*dl, KVREF_CUDA_OPEN);
	if (!fn) {
		fprintf(stderr, "kvref: %s has no %s\n", lib_name(path, name, sizeof(name)),
			KVREF_CUDA_OPEN);
		return -ENOENT;
	}
	err = fn(m, b, why, sizeof(why));
	if (err)
		fprintf(stderr, "kvref: cannot start the CUDA backend: %s\n", why);
	return err;
}

/* The largest |a - b| over n logits, relative to the largest |b|. */
static double logit_diff(const float *a, const float *b, int n)
{
	double d = 0, scale = 1e-6;
	int i;

	for (i = 0; i < n; i++) {
		if (fabs(a[i] - b[i]) > d || isnan(a[i]))
			d = isnan(a[i]) ? INFINITY : fabs(a[i] - b[i]);
		if (fabs(b[i]) > scale)
			scale = fabs(b[i]);
	}
	return d / scale;
}

/*
 * --check: three sequences of `len` tokens through both backends, each over
 * its own small pool with a swap file: A, then B (which evicts A's blocks to
 * the swap file), then A again, whose prefix comes back from the swap file
 * and whose last block is recomputed.  Every step's logits are compared.
 */
static int check_backend(const struct kv_model *m, const struct kv_backend *be,
			 const struct workload_opts *o)
{
	const struct kv_config *c = &m->config;
	int len = c->seq_len < 100 ? c->seq_len : 100, bs = o->block_size;
	int nb = (len + bs - 1) / bs + 1, i, k, err = 0, steps = 0;
	struct kv_backend cpu;
	const struct kv_backend *b[2] = { be, &cpu };
	struct kv_cache *kc[2] = { NULL, NULL };
	void *st[2] = { NULL, NULL };
	int *tok = malloc(2 * (size_t)len * sizeof(int));
	float *lg[2], *keep = malloc((size_t)c->vocab_size * sizeof(float));
	double worst = 0, d;
	char name[2][64];
	uint64_t rng = o->seed;

	kv_backend_cpu(&cpu, m);
	if (!tok || !keep) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < 2 * len; i++)
		tok[i] = (int)(kv_rand_next(&rng) % (uint64_t)c->vocab_size);
	for (k = 0; k < 2 && !err; k++) {
		struct kv_cache_params p;

		snprintf(name[k], sizeof(name[k]), "kvref-check-%d-%d.bin", getpid(), k);
		kv_cache_params_default(&p, c->n_layers, kv_config_kv_dim(c));
		p.block_size = bs;
		p.n_blocks = nb;
		p.swap_dir = o->swap_dir;
		p.swap_name = name[k];
		p.storage = b[k]->storage;
		p.storage_ctx = b[k]->ctx;
		err = kv_cache_new(&kc[k], &p);
		if (!err)
			err = b[k]->state_new(b[k]->ctx, &st[k]);
	}
	for (int round = 0; round < 3 && !err; round++) {
		const int *t = tok + (round == 1 ? len : 0);
		struct kv_seq seq[2];
		int start[2];

		for (k = 0; k < 2; k++) {
			kv_seq_init(&seq[k]);
			start[k] = kv_seq_match_prefix(kc[k], &seq[k], t, len - 1);
		}
		if (start[0] != start[1] || start[0] < 0) {
			fprintf(stderr, "kvref: check: prefix match differs (%d vs %d)\n", start[0], start[1]);
			err = -EIO;
		}
		for (i = start[0]; i < len && !err; i++) {
			for (k = 0; k < 2 && !err; k++) {
				err = b[k]->forward(st[k], kc[k], &seq[k], t[i], i, &lg[k]);
				if (!err && k == 0) {
					memcpy(keep, lg[0], (size_t)c->vocab_size * sizeof(float));
					lg[0] = keep;
				}
			}
			if (err)
				break;
			d = logit_diff(lg[0], lg[1], c->vocab_size);
			if (d > worst)
				worst = d;
			steps++;
		}
		for (k = 0; k < 2; k++)
			kv_seq_release(kc[k], &seq[k]);
		if (round == 2 && !err) {
			struct kv_cache_stats s;

			kv_cache_get_stats(kc[0], &s);
			printf("check: %s vs cpu: %d steps, %llu blocks swapped out, %llu back in, "
			       "largest logit difference %.2e of the largest logit\n",
			       be->name, steps, (unsigned long long)s.swap_outs,
			       (unsigned long long)s.swap_ins, worst);
			if (!s.swap_ins)
				err = -EIO;
		}
	}
	if (err && err != -EIO)
		fprintf(stderr, "kvref: check: %s\n", strerror(-err));
out:
	for (k = 0; k < 2; k++) {
		if (st[k])
			b[k]->state_free(b[k]->ctx, st[k]);
		kv_cache_free(kc[k]);
	}
	free(tok);
	free(keep);
	if (err)
		return 1;
	return worst <= 1e-3 ? 0 : 1;
}

/* What the command line asks beyond the workload's options. */
struct kvref_cli {
	const char *model_path, *save_path, *cuda_lib;
	bool cuda, check, json;
};

/* The command line into o and cl: -1 to go on, else the exit status (0
 * after --help, 2 for a bad command line, said on stderr). */
static int parse_args(int argc, char **argv, struct workload_opts *o, struct kvref_cli *cl)
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
		{ "cuda-lib", required_argument, NULL, 'L' },
		{ "json", no_argument, NULL, 'j' },
		{ "check", no_argument, NULL, 'c' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "no-probes", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int opt, sc;
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
			o->scenario = sc;
			break;
		case 'd':
			if (parse_long("duration", optarg, 1, 86400, &v))
				return 2;
			o->duration_s = v;
			break;
		case 'w':
			if (parse_long("workers", optarg, 1, 64, &v))
				return 2;
			o->workers = v;
			break;
		case 'b':
			if (parse_long("kv-blocks", optarg, 8, 1 << 20, &v))
				return 2;
			o->kv_blocks = v;
			break;
		case 'B':
			if (parse_long("block-size", optarg, 1, 48, &v))
				return 2;
			if (48 % v) {
				fprintf(stderr, "kvref: invalid --block-size '%s': expected a divisor of 48 (the system prompt)\n",
					optarg);
				return 2;
			}
			o->block_size = v;
			break;
		case 'S':
			o->swap_dir = optarg;
			break;
		case 'r':
			if (parse_long("seed", optarg, 0, LONG_MAX, &v))
				return 2;
			o->seed = v;
			break;
		case 'm':
			cl->model_path = optarg;
			break;
		case 'M':
			cl->save_path = optarg;
			break;
		case 'k':
			if (strcmp(optarg, "cpu") && strcmp(optarg, "cuda")) {
				fprintf(stderr, "kvref: invalid --backend '%s': expected cpu or cuda\n",
					optarg);
				return 2;
			}
			cl->cuda = !strcmp(optarg, "cuda");
			break;
		case 'L':
			cl->cuda_lib = optarg;
			break;
		case 'c':
			cl->check = true;
			break;
		case 'j':
			cl->json = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'P':
			kvref_probes_on = false;
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
	o->quiet |= cl->json;
	return -1;
}

/* The model: loaded from the checkpoint asked for, or made of random
 * weights from seed; saved where asked.  0, or 1 (said on stderr). */
static int make_model(struct kv_model *m, const struct kvref_cli *cl, uint64_t seed)
{
	struct kv_config c;
	int err;

	if (cl->model_path) {
		err = model_load(m, cl->model_path);
		if (err) {
			fprintf(stderr, "kvref: cannot load model %s: %s\n", cl->model_path,
				err == -EINVAL ? "not a llama2.c checkpoint of a sane shape" : strerror(-err));
			return 1;
		}
	} else {
		kv_config_default(&c);
		err = model_init_random(m, &c, seed);
		if (err) {
			fprintf(stderr, "kvref: cannot generate weights: %s\n", strerror(-err));
			return 1;
		}
	}
	if (cl->save_path) {
		err = model_save(m, cl->save_path);
		if (err) {
			fprintf(stderr, "kvref: cannot write %s: %s\n", cl->save_path, strerror(-err));
			model_release(m);
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct workload_opts o = {
		.scenario = SC_NORMAL, .duration_s = 10, .workers = 2,
		.kv_blocks = 512, .block_size = 16, .swap_dir = "/var/tmp", .seed = 1,
	};
	struct kvref_cli cl = { 0 };
	struct kv_model m = { 0 };
	struct run_report rep;
	struct kv_backend be;
	void *dl = NULL;
	int err;

	err = parse_args(argc, argv, &o, &cl);
	if (err >= 0)
		return err;
	if (make_model(&m, &cl, o.seed))
		return 1;
	if (cl.cuda) {
		err = open_cuda(&m, &be, &dl, cl.cuda_lib);
		if (err) {
			model_release(&m);
			return 1;
		}
	} else {
		kv_backend_cpu(&be, &m);
	}
	o.backend = &be;
	if (cl.check) {
		err = check_backend(&m, &be, &o);
		be.close(be.ctx);
		model_release(&m);
		return err;
	}
	err = workload_run(&m, &o, &rep);
	be.close(be.ctx);
	if (err) {
		fprintf(stderr, "kvref: cannot serve: %s\n", strerror(-err));
		model_release(&m);
		return 1;
	}
	if (cl.json)
		report_json(&rep, stdout);
	else
		report_print(&rep, stdout);
	model_release(&m);
	return 0;
}
