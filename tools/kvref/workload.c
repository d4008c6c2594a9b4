// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kvref serving loop.
 *
 * Each worker slot is a pair of threads, as in an inference server: a front
 * end that makes requests (a system prompt shared with other requests plus
 * a user part) and streams the answer back, and a worker that runs the
 * model over the paged KV cache.  The front end hands a request to its
 * worker over a socketpair, the worker streams every generated token back
 * over it and signals the end on the request's eventfd.  So every request
 * really allocates and frees kernel objects (skbs, a struct file), and the
 * scenarios change one physical thing each:
 *
 *   normal         pool large enough, 4 shared prefixes, fds closed, each
 *                  front end on its worker's CPU, counters on own lines;
 *   thrash         a 24-block pool under 16 prefixes of 3 blocks (twice the
 *                  pool, of which running sequences hold half): blocks are
 *                  evicted to the swap file and read back again and again,
 *                  half of them within a pool's worth of evictions, and the
 *                  swap file's pages are dropped every 20 ms (as memory
 *                  pressure would), so swap-ins refault the page cache;
 *   false_sharing  front end and worker on different CPUs (every skb is
 *                  freed on another CPU than it was allocated on), and the
 *                  workers' token counters share one cache line;
 *   leak           one finished sequence in two keeps its blocks, and its
 *                  eventfd is never closed;
 *   mixed          the four in turn, a quarter of the time each.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "probes.h"

bool kvref_probes_on = true;
#include "workload.h"

#define PREFIX_TOKENS 48
#define MAX_USER_TOKENS 32
#define MAX_GEN_TOKENS 48
#define END_OF_STREAM (-1)

struct scenario_params {
	int pool_blocks;	/* 0: opts->kv_blocks * pool_mult */
	int pool_mult;
	int n_prefixes;
	bool cross_cpu;
	bool shared_counters;
	int leak_every;		/* 0: no leak */
	bool drop_swap_pages;
};

static const struct scenario_params params[SC_MIXED] = {
	[SC_NORMAL] = { 0, 1, 4, false, false, 0, false },
	[SC_THRASH] = { 24, 1, 16, false, false, 0, true },
	[SC_FALSE_SHARING] = { 0, 1, 4, true, true, 0, false },
	/* leaked sequences pile up: room for about half a minute of them */
	[SC_LEAK] = { 0, 4, 4, false, false, 2, false },
};

static const char *const names[SC_COUNT] = {
	"normal", "thrash", "false_sharing", "leak", "mixed",
};

const char *scenario_name(enum kvref_scenario s)
{
	return (unsigned int)s < SC_COUNT ? names[s] : "?";
}

int scenario_parse(const char *name)
{
	int i;

	for (i = 0; i < SC_COUNT; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -EINVAL;
}

struct request {
	int tokens[PREFIX_TOKENS + MAX_USER_TOKENS];
	int n;
	int gen;
	int efd;		/* completion */
	bool leak;		/* leak scenario: keep the blocks and the fd */
};

/* per-worker token counters: one cache line each, or all in one line */
struct padded_counter {
	_Alignas(64) uint64_t v;
};

struct phase;

struct slot {
	struct phase *ph;
	int idx, fe_cpu, wk_cpu;
	int sv[2];		/* [0] front end, [1] worker */
	pthread_t fe, wk;
	void *st;		/* the backend's per-worker state */
	uint64_t rng;
	uint64_t *counter;	/* this worker's token counter */
	double fe_cpu_s, wk_cpu_s;	/* each thread's CPU time, at its end */
};

struct phase {
	const struct kv_model *m;
	const struct kv_backend *be;
	const struct workload_opts *opts;
	const struct scenario_params *sp;
	struct kv_cache *kc;
	char swap_name[64];
	int prefixes[96][PREFIX_TOKENS];
	atomic_int stop;
	/* counters */
	atomic_ullong requests, tokens, prefill, cached, leaked_seqs, leaked_fds;
	atomic_ullong cross, same, failed, drops, issued;
	/* leaked sequences, released when the phase ends */
	pthread_mutex_t lock;
	struct kv_seq **leaked;
	size_t nleaked, capleaked;
	struct padded_counter own[64];
	_Alignas(64) uint64_t shared[64];
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static double thread_cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* ---- probes: the cache's hooks fire them ---- */

static void hook_alloc(void *ctx, int block, uint64_t hash, int64_t arg)
{
	(void)ctx; (void)arg;
	KVREF_PROBE3(block_alloc, block, hash, 0);
}

static void hook_free(void *ctx, int block, uint64_t hash, int64_t arg)
{
	(void)ctx; (void)arg;
	KVREF_PROBE3(block_free, block, hash, 0);
}

static void hook_evict(void *ctx, int block, uint64_t hash, int64_t arg)
{
	(void)ctx;
	KVREF_PROBE3(evict, block, hash, arg);
}

static void hook_swap_out(void *ctx, int block, uint64_t hash, int64_t arg)
{
	(void)ctx;
	KVREF_PROBE3(swap_out, block, hash, arg);
}

static void hook_swap_in(void *ctx, int block, uint64_t hash, int64_t arg)
{
	(void)ctx;
	KVREF_PROBE3(swap_in, block, hash, arg);
}

static void hook_prefix_hit(void *ctx, int block, uint64_t hash, int64_t arg)
{
	(void)ctx;
	KVREF_PROBE3(prefix_hit, block, hash, arg);
}

static void hook_prefix_miss(void *ctx, int block, uint64_t hash, int64_t arg)
{
	(void)ctx; (void)block; (void)hash;
	KVREF_PROBE3(prefix_miss, arg, 0, 0);
}

static void hook_release(void *ctx, int block, uint64_t hash, int64_t arg)
{
	(void)ctx; (void)arg;
	KVREF_PROBE3(release, block, hash, 0);
}

/* ---- the worker: prefill, decode, stream ---- */

static int serve(struct slot *s, struct request *rq)
{
	struct phase *ph = s->ph;
	struct kv_seq *seq = malloc(sizeof(*seq));
	int pos, tok, i, err = 0, matched;
	float *logits;

	if (!seq)
		return -ENOMEM;
	kv_seq_init(seq);
	matched = kv_seq_match_prefix(ph->kc, seq, rq->tokens, rq->n - 1);
	if (matched < 0) {
		err = matched;
		goto out;
	}
	atomic_fetch_add(&ph->cached, matched);
	atomic_fetch_add(&ph->prefill, rq->n - matched);
	for (pos = matched; pos < rq->n; pos++) {
		err = ph->be->forward(s->st, ph->kc, seq, rq->tokens[pos], pos, &logits);
		if (err)
			goto out;
	}
	tok = sample_argmax(logits, ph->m->config.vocab_size);
	for (i = 0; i < rq->gen && pos < ph->m->config.seq_len; i++, pos++) {
		KVREF_PROBE3(step_begin, (uintptr_t)seq, pos, s->idx);
		err = ph->be->forward(s->st, ph->kc, seq, tok, pos, &logits);
		KVREF_PROBE3(step_end, (uintptr_t)seq, pos, s->idx);
		if (err)
			goto out;
		/* stream the token to the front end, as a server streams to
		 * its client */
		if (write(s->sv[1], &tok, sizeof(tok)) != sizeof(tok)) {
			err = -EIO;
			goto out;
		}
		(*s->counter)++;
		atomic_fetch_add(&ph->tokens, 1);
		tok = sample_argmax(logits, ph->m->config.vocab_size);
	}
out:
	if (!err && rq->leak) {
		/* the leak: a finished sequence that keeps its blocks */
		pthread_mutex_lock(&ph->lock);
		if (ph->nleaked == ph->capleaked) {
			size_t cap = ph->capleaked ? ph->capleaked * 2 : 256;
			struct kv_seq **v = realloc(ph->leaked, cap * sizeof(*v));

			if (v) {
				ph->leaked = v;
				ph->capleaked = cap;
			}
		}
		if (ph->nleaked < ph->capleaked) {
			ph->leaked[ph->nleaked++] = seq;
			seq = NULL;
			atomic_fetch_add(&ph->leaked_seqs, 1);
		}
		pthread_mutex_unlock(&ph->lock);
	}
	if (seq) {
		kv_seq_release(ph->kc, seq);
		free(seq);
	}
	return err;
}

static void *worker_main(void *arg)
{
	struct slot *s = arg;
	struct request *rq;
	uint64_t one = 1;
	int end = END_OF_STREAM, failed;

	pin(s->wk_cpu);
	for (;;) {
		if (read(s->sv[1], &rq, sizeof(rq)) != sizeof(rq) || !rq)
			break;
		failed = serve(s, rq) != 0;
		if (failed)
			atomic_fetch_add(&s->ph->failed, 1);
		/* a failed request ends its stream at once; the front end backs off */
		end = failed ? END_OF_STREAM - 1 : END_OF_STREAM;
		if (write(s->sv[1], &end, sizeof(end)) != sizeof(end))
			break;
		if (write(rq->efd, &one, sizeof(one)) != sizeof(one))
			break;
	}
	s->wk_cpu_s = thread_cpu_seconds();
	return NULL;
}

/* ---- the front end: make requests, read the stream ---- */

static void make_request(struct slot *s, struct request *rq)
{
	struct phase *ph = s->ph;
	int p = kv_rand_next(&s->rng) % ph->sp->n_prefixes;
	int user = 8 + kv_rand_next(&s->rng) % (MAX_USER_TOKENS - 8);
	int vocab = ph->m->config.vocab_size, i;

	memcpy(rq->tokens, ph->prefixes[p], sizeof(ph->prefixes[p]));
	for (i = 0; i < user; i++)
		rq->tokens[PREFIX_TOKENS + i] = kv_rand_next(&s->rng) % vocab;
	rq->n = PREFIX_TOKENS + user;
	rq->gen = 16 + kv_rand_next(&s->rng) % (MAX_GEN_TOKENS - 16);
}

static void *frontend_main(void *arg)
{
	struct slot *s = arg;
	struct phase *ph = s->ph;
	struct request *rq, *none = NULL;
	uint64_t done;
	int tok;

	pin(s->fe_cpu);
	while (!atomic_load(&ph->stop)) {
		rq = malloc(sizeof(*rq));
		if (!rq)
			break;
		make_request(s, rq);
		rq->leak = ph->sp->leak_every &&
			   atomic_fetch_add(&ph->issued, 1) % ph->sp->leak_every == 0;
		rq->efd = eventfd(0, EFD_CLOEXEC);
		if (rq->efd < 0) {
			free(rq);
			break;
		}
		if (write(s->sv[0], &rq, sizeof(rq)) != sizeof(rq))
			break;
		if (s->fe_cpu != s->wk_cpu)
			atomic_fetch_add(&ph->cross, 1);
		else
			atomic_fetch_add(&ph->same, 1);
		while (read(s->sv[0], &tok, sizeof(tok)) == sizeof(tok) && tok >= 0)
			;
		if (read(rq->efd, &done, sizeof(done)) != sizeof(done))
			break;
		atomic_fetch_add(&ph->requests, 1);
		if (tok < END_OF_STREAM)	/* no free block: back off as a server would */
			nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
		if (rq->leak)
			atomic_fetch_add(&ph->leaked_fds, 1);	/* the fd stays open */
		else
			close(rq->efd);
		free(rq);
	}
	if (write(s->sv[0], &none, sizeof(none)) != sizeof(none))
		shutdown(s->sv[0], SHUT_WR);
	s->fe_cpu_s = thread_cpu_seconds();
	return NULL;
}

/* thrash: drop the swap file's pages as memory pressure would */
static void *dropper_main(void *arg)
{
	struct phase *ph = arg;
	int fd = kv_cache_swap_fd(ph->kc);

	if (fd < 0)
		return NULL;
	while (!atomic_load(&ph->stop)) {
		fdatasync(fd);
		if (!posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
			atomic_fetch_add(&ph->drops, 1);
		nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
	}
	return NULL;
}

/* ---- one phase ---- */

static int phase_cache(struct phase *ph, int slot_tag)
{
	const struct kv_config *c = &ph->m->config;
	struct kv_cache_params p;
	int err;

	snprintf(ph->swap_name, sizeof(ph->swap_name), "kvref-swap-%d-%d.bin", getpid(),
		 slot_tag);
	kv_cache_params_default(&p, c->n_layers, kv_config_kv_dim(c));
	p.block_size = ph->opts->block_size;
	p.n_blocks = ph->sp->pool_blocks ? ph->sp->pool_blocks :
					   ph->opts->kv_blocks * ph->sp->pool_mult;
	p.swap_dir = ph->opts->swap_dir;
	p.swap_name = ph->swap_name;
	p.swap_slots = ph->sp->n_prefixes * (PREFIX_TOKENS / p.block_size + 1);
	p.storage = ph->be->storage;
	p.storage_ctx = ph->be->ctx;
	p.hooks = (struct kv_cache_hooks){
		.alloc = hook_alloc, .free = hook_free, .evict = hook_evict,
		.swap_out = hook_swap_out, .swap_in = hook_swap_in,
		.prefix_hit = hook_prefix_hit, .prefix_miss = hook_prefix_miss,
		.release = hook_release,
	};
	err = kv_cache_new(&ph->kc, &p);
	if (!err)
		KVREF_PROBE4(pool, p.n_blocks, kv_cache_block_bytes(ph->kc), p.block_size,
			     p.storage != NULL);
	return err;
}

static int run_phase(const struct kv_model *m, const struct kv_backend *be,
		     const struct workload_opts *opts, enum kvref_scenario sc, double secs,
		     uint64_t t0, struct phase_report *rep)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), i, j, err, nslots = 0;
	struct phase *ph = calloc(1, sizeof(*ph));
	struct slot *slots = calloc(opts->workers, sizeof(*slots));
	uint64_t rng = opts->seed ^ (0x9e3779b97f4a7c15ull * (sc + 1));
	pthread_t dropper;
	bool dropping = false;
	double cpu0;
	size_t k;

	if (!ph || !slots) {
		err = -ENOMEM;
		goto out;
	}
	if (ncpu < 1)
		ncpu = 1;
	ph->m = m;
	ph->be = be;
	ph->opts = opts;
	ph->sp = &params[sc];
	pthread_mutex_init(&ph->lock, NULL);
	for (i = 0; i < ph->sp->n_prefixes; i++)
		for (j = 0; j < PREFIX_TOKENS; j++)
			ph->prefixes[i][j] = kv_rand_next(&rng) % m->config.vocab_size;
	err = phase_cache(ph, sc);
	if (err)
		goto out;

	memset(rep, 0, sizeof(*rep));
	rep->scenario = sc;
	rep->start_mono_ns = mono_ns();
	rep->start_s = (rep->start_mono_ns - t0) / 1e9;
	if (!opts->quiet) {
		printf("phase %s start %.3f s mono_ns %llu\n", scenario_name(sc), rep->start_s,
		       (unsigned long long)rep->start_mono_ns);
		fflush(stdout);
	}
	cpu0 = cpu_seconds();
	for (i = 0; i < opts->workers; i++, nslots++) {
		struct slot *s = &slots[i];

		s->ph = ph;
		s->idx = i;
		s->fe_cpu = i % ncpu;
		s->wk_cpu = ph->sp->cross_cpu ? (i + 1) % ncpu : s->fe_cpu;
		s->rng = rng + i;
		s->counter = ph->sp->shared_counters ? &ph->shared[i % 64] : &ph->own[i % 64].v;
		err = be->state_new(be->ctx, &s->st);
		if (!err && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s->sv))
			err = -errno;
		if (!err && pthread_create(&s->wk, NULL, worker_main, s))
			err = -EAGAIN;
		if (!err && pthread_create(&s->fe, NULL, frontend_main, s)) {
			err = -EAGAIN;
			shutdown(s->sv[0], SHUT_RDWR);
			pthread_join(s->wk, NULL);
		}
		if (err) {
			be->state_free(be->ctx, s->st);
			break;
		}
	}
	if (!err && ph->sp->drop_swap_pages)
		dropping = !pthread_create(&dropper, NULL, dropper_main, ph);
	if (!err)
		nanosleep(&(struct timespec){ (time_t)secs,
					      (long)((secs - (time_t)secs) * 1e9) }, NULL);
	atomic_store(&ph->stop, 1);
	for (i = 0; i < nslots; i++) {
		pthread_join(slots[i].fe, NULL);
		pthread_join(slots[i].wk, NULL);
		close(slots[i].sv[0]);
		close(slots[i].sv[1]);
		be->state_free(be->ctx, slots[i].st);
	}
	if (dropping)
		pthread_join(dropper, NULL);

	rep->end_s = (mono_ns() - t0) / 1e9;
	rep->cpu_s = cpu_seconds() - cpu0;
	rep->nslots = nslots < 64 ? nslots : 64;
	for (i = 0; i < rep->nslots; i++) {
		rep->worker_cpu_s[i] = slots[i].wk_cpu_s;
		rep->frontend_cpu_s[i] = slots[i].fe_cpu_s;
	}
	rep->requests = ph->requests;
	rep->tokens = ph->tokens;
	rep->prefill_tokens = ph->prefill;
	rep->cached_tokens = ph->cached;
	rep->leaked_seqs = ph->leaked_seqs;
	rep->leaked_fds = ph->leaked_fds;
	rep->handoffs_cross_cpu = ph->cross;
	rep->handoffs_same_cpu = ph->same;
	rep->swap_file_drops = ph->drops;
	rep->failed = ph->failed;
	kv_cache_get_stats(ph->kc, &rep->kv);
out:
	if (ph) {
		for (k = 0; k < ph->nleaked; k++) {
			kv_seq_release(ph->kc, ph->leaked[k]);
			free(ph->leaked[k]);
		}
		free(ph->leaked);
		kv_cache_free(ph->kc);	/* the swap file goes with its fd */
		pthread_mutex_destroy(&ph->lock);
	}
	free(ph);
	free(slots);
	return err;
}

int workload_run(const struct kv_model *m, const struct workload_opts *opts,
		 struct run_report *rep)
{
	uint64_t t0 = mono_ns();
	int i, err, n = opts->scenario == SC_MIXED ? 4 : 1;
	struct kv_backend cpu;
	const struct kv_backend *be = opts->backend;

	if (!be) {
		kv_backend_cpu(&cpu, m);
		be = &cpu;
	}
	memset(rep, 0, sizeof(*rep));
	rep->backend = be->name;
	for (i = 0; i < n; i++) {
		enum kvref_scenario sc = n == 1 ? opts->scenario : (enum kvref_scenario)i;

		err = run_phase(m, be, opts, sc, opts->duration_s / n, t0, &rep->phases[i]);
		if (err)
			return err;
		rep->nphases++;
		rep->tokens += rep->phases[i].tokens;
	}
	rep->seconds = (mono_ns() - t0) / 1e9;
	return 0;
}

void report_print(const struct run_report *rep, FILE *out)
{
	int i;

	fprintf(out, "kvref: %s backend, %.1f s, %llu tokens, %.0f tokens/s\n", rep->backend, rep->seconds,
		(unsigned long long)rep->tokens, rep->tokens / rep->seconds);
	for (i = 0; i < rep->nphases; i++) {
		const struct phase_report *p = &rep->phases[i];
		uint64_t prompt = p->prefill_tokens + p->cached_tokens;

		fprintf(out, "phase %-13s %6.1f-%6.1f s: %llu requests, %.0f tokens/s, prefix hit %.0f%%, "
			"blocks alloc %llu free %llu evict %llu, swap out %llu in %llu (recent %llu), "
			"leaked seqs %llu fds %llu, handoffs cross-CPU %llu same-CPU %llu, "
			"swap drops %llu, failed %llu, cpu %.1f s\n",
			scenario_name(p->scenario), p->start_s, p->end_s,
			(unsigned long long)p->requests,
			p->tokens / (p->end_s - p->start_s > 0 ? p->end_s - p->start_s : 1),
			prompt ? 100.0 * p->cached_tokens / prompt : 0,
			(unsigned long long)p->kv.allocated, (unsigned long long)p->kv.freed,
			(unsigned long long)p->kv.evicted, (unsigned long long)p->kv.swap_outs,
			(unsigned long long)p->kv.swap_ins, (unsigned long long)p->kv.swap_ins_recent,
			(unsigned long long)p->leaked_seqs, (unsigned long long)p->leaked_fds,
			(unsigned long long)p->handoffs_cross_cpu,
			(unsigned long long)p->handoffs_same_cpu,
			(unsigned long long)p->swap_file_drops, (unsigned long long)p->failed,
			p->cpu_s);
		fprintf(out, "      threads (CPU s):");
		for (int k = 0; k < p->nslots; k++)
			fprintf(out, " worker%d %.1f front%d %.2f", k, p->worker_cpu_s[k], k,
				p->frontend_cpu_s[k]);
		fputc('\n', out);
	}
}

void report_json(const struct run_report *rep, FILE *out)
{
	int i;

	fprintf(out, "{\"backend\": \"%s\", \"seconds\": %.3f, \"tokens\": %llu, \"tokens_per_s\": %.1f, \"phases\": [",
		rep->backend, rep->seconds, (unsigned long long)rep->tokens, rep->tokens / rep->seconds);
	for (i = 0; i < rep->nphases; i++) {
		const struct phase_report *p = &rep->phases[i];

		fprintf(out, "%s{\"scenario\": \"%s\", \"start_s\": %.3f, \"end_s\": %.3f, "
			"\"start_mono_ns\": %llu, \"requests\": %llu, \"tokens\": %llu, "
			"\"prefill_tokens\": %llu, \"cached_tokens\": %llu, "
			"\"blocks_allocated\": %llu, \"blocks_freed\": %llu, \"blocks_evicted\": %llu, "
			"\"swap_outs\": %llu, \"swap_ins\": %llu, \"swap_ins_recent\": %llu, "
			"\"leaked_seqs\": %llu, \"leaked_fds\": %llu, \"handoffs_cross_cpu\": %llu, "
			"\"handoffs_same_cpu\": %llu, \"swap_file_drops\": %llu, \"failed\": %llu, "
			"\"cpu_s\": %.3f",
			i ? ", " : "", scenario_name(p->scenario), p->start_s, p->end_s,
			(unsigned long long)p->start_mono_ns, (unsigned long long)p->requests,
			(unsigned long long)p->tokens, (unsigned long long)p->prefill_tokens,
			(unsigned long long)p->cached_tokens, (unsigned long long)p->kv.allocated,
			(unsigned long long)p->kv.freed, (unsigned long long)p->kv.evicted,
			(unsigned long long)p->kv.swap_outs, (unsigned long long)p->kv.swap_ins,
			(unsigned long long)p->kv.swap_ins_recent, (unsigned long long)p->leaked_seqs,
			(unsigned long long)p->leaked_fds, (unsigned long long)p->handoffs_cross_cpu,
			(unsigned long long)p->handoffs_same_cpu,
			(unsigned long long)p->swap_file_drops, (unsigned long long)p->failed,
			p->cpu_s);
		fprintf(out, ", \"worker_cpu_s\": [");
		for (int k = 0; k < p->nslots; k++)
			fprintf(out, "%s%.3f", k ? ", " : "", p->worker_cpu_s[k]);
		fprintf(out, "], \"frontend_cpu_s\": [");
		for (int k = 0; k < p->nslots; k++)
			fprintf(out, "%s%.3f", k ? ", " : "", p->frontend_cpu_s[k]);
		fprintf(out, "]}");
	}
	fprintf(out, "]}\n");
}
