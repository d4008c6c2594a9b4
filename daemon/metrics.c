// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Prometheus text exposition of the daemon's numbers (metrics.h).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "array.h"
#include "metrics.h"

void metrics_keys_add(struct metrics_keys *ks, const char *domain, const char *key,
		      int64_t live_objs, int64_t live_bytes)
{
	struct metrics_key *k;

	if (array_room(&ks->v, &ks->cap, ks->n, sizeof(*ks->v), 256)) {
		ks->err = -ENOMEM;
		return;
	}
	k = &ks->v[ks->n++];
	snprintf(k->domain, sizeof(k->domain), "%s", domain);
	snprintf(k->key, sizeof(k->key), "%s", key);
	k->live_objs = live_objs;
	k->live_bytes = live_bytes;
}

static int by_name(const void *a, const void *b)
{
	const struct metrics_key *x = a, *y = b;
	int c = strcmp(x->domain, y->domain);

	return c ? c : strcmp(x->key, y->key);
}

static int by_bytes(const void *a, const void *b)
{
	const struct metrics_key *x = a, *y = b;

	if (x->live_bytes != y->live_bytes)
		return x->live_bytes < y->live_bytes ? 1 : -1;
	return by_name(a, b);
}

void metrics_keys_finish(struct metrics_keys *ks, size_t limit)
{
	size_t i, n = 0;

	if (!ks->n)
		return;
	qsort(ks->v, ks->n, sizeof(*ks->v), by_name);
	for (i = 1; i < ks->n; i++) {
		if (!by_name(&ks->v[n], &ks->v[i])) {
			ks->v[n].live_objs += ks->v[i].live_objs;
			ks->v[n].live_bytes += ks->v[i].live_bytes;
		} else {
			ks->v[++n] = ks->v[i];
		}
	}
	ks->n = n + 1;
	/* keys that hold nothing get no series */
	for (i = n = 0; i < ks->n; i++)
		if (ks->v[i].live_objs || ks->v[i].live_bytes)
			ks->v[n++] = ks->v[i];
	ks->n = n;
	qsort(ks->v, ks->n, sizeof(*ks->v), by_bytes);
	for (i = limit; i < ks->n; i++) {
		ks->omitted++;
		ks->omitted_objs += ks->v[i].live_objs;
		ks->omitted_bytes += ks->v[i].live_bytes;
	}
	if (ks->n > limit)
		ks->n = limit;
}

void metrics_keys_release(struct metrics_keys *ks)
{
	free(ks->v);
	memset(ks, 0, sizeof(*ks));
}

void metrics_named_set(struct metrics_named *s, const char *name, uint64_t v)
{
	if (s->n >= METRICS_MAX_NAMES)
		return;
	s->name[s->n] = name;
	s->v[s->n++] = v;
}

/* Length of the valid UTF-8 character at s (of len bytes), 0 if none. */
static size_t utf8_len(const unsigned char *s, size_t len)
{
	size_t n, i;
	uint32_t c;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, c = s[0] & 0x07;
	else
		return 0;
	if (len < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* overlong, surrogates, past U+10FFFF */
	if ((n == 3 && c < 0x800) || (n == 4 && c < 0x10000) || c > 0x10ffff ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	/* C1 controls */
	if (c >= 0x80 && c <= 0x9f)
		return 0;
	return n;
}

const char *metrics_escape(char *buf, size_t n, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), o = 0, i = 0;

	while (i < len) {
		char e[8];
		size_t el, cl = utf8_len(p + i, len - i);

		if (p[i] == '\\' || p[i] == '"') {
			e[0] = '\\', e[1] = (char)p[i], el = 2;
		} else if (p[i] == '\n') {
			e[0] = '\\', e[1] = 'n', el = 2;
		} else if (!cl || p[i] < 0x20 || p[i] == 0x7f) {
			snprintf(e, sizeof(e), "\\\\x%02x", p[i]);
			el = 5;
			cl = 1;
		} else {
			memcpy(e, p + i, cl);
			el = cl;
		}
		if (o + el >= n)
			break;
		memcpy(buf + o, e, el);
		o += el;
		i += cl ? cl : 1;
	}
	buf[o] = 0;
	return buf;
}


const double metrics_hist_bounds[METRICS_HIST_BUCKETS] = {
	0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
};

void metrics_hist_observe(struct metrics_hist *h, double seconds)
{
	unsigned int i;

	for (i = 0; i < METRICS_HIST_BUCKETS; i++)
		if (seconds <= metrics_hist_bounds[i])
			h->le[i]++;
	h->count++;
	h->sum += seconds;
}

int metrics_process_read(struct metrics_process *p, const char *proc, double btime_s)
{
	char path[300], buf[1024], *c;
	unsigned long long utime, stime, start, vsize;
	long long rss;
	struct rlimit rl;
	struct dirent *e;
	long tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	DIR *fds;
	FILE *f;
	int n;

	memset(p, 0, sizeof(*p));
	snprintf(path, sizeof(path), "%s/stat", proc);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	/* the comm may hold spaces and parentheses: the fields follow the last ')' */
	c = n ? strrchr(buf, ')') : NULL;
	if (!c || tck <= 0 || page <= 0 ||
	    sscanf(c + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d %llu %llu %lld",
		   &utime, &stime, &start, &vsize, &rss) != 5)
		return -EINVAL;
	p->cpu_s = (double)(utime + stime) / tck;
	p->start_time_s = btime_s + (double)start / tck;
	p->virtual_bytes = vsize;
	p->resident_bytes = rss > 0 ? (uint64_t)rss * page : 0;
	snprintf(path, sizeof(path), "%s/fd", proc);
	fds = opendir(path);
	if (fds) {
		while ((e = readdir(fds)))
			p->open_fds += e->d_name[0] != '.';
		closedir(fds);
		p->open_fds--;		/* the one opendir holds */
	}
	if (!getrlimit(RLIMIT_NOFILE, &rl))
		p->max_fds = rl.rlim_cur == RLIM_INFINITY ? 0 : rl.rlim_cur;
	p->ok = true;
	return 0;
}

/* ---- anomalous keys ---- */

static int anomaly_cmp_key(const struct metrics_anomaly *x, const struct metrics_anomaly *y)
{
	int c = strcmp(x->domain, y->domain);

	if (!c)
		c = strcmp(x->key, y->key);
	if (!c)
		c = strcmp(x->comm, y->comm);
	if (!c)
		c = strcmp(x->container, y->container);
	if (!c)
		c = strcmp(x->pattern, y->pattern);
	return c;
}

void metrics_anomalies_add(struct metrics_anomalies *as, const struct metrics_anomaly *a)
{
	size_t i;

	for (i = 0; i < as->n; i++) {
		struct metrics_anomaly *m = &as->v[i];

		if (anomaly_cmp_key(m, a))
			continue;
		m->live_bytes += a->live_bytes;
		if (a->start_time_s < m->start_time_s)
			m->start_time_s = a->start_time_s;
		return;
	}
	/* the table is bounded before it is added to (ANOMALY_MAX), so the
	 * linear merge stays within METRICS_MAX_ANOMALIES' worth of work
	 * per anomaly a scrape */
	if (array_room(&as->v, &as->cap, as->n, sizeof(*as->v), 16)) {
		as->err = -ENOMEM;
		return;
	}
	as->v[as->n++] = *a;
}

static int anomaly_by_bytes(const void *a, const void *b)
{
	const struct metrics_anomaly *x = a, *y = b;

	if (x->live_bytes != y->live_bytes)
		return x->live_bytes < y->live_bytes ? 1 : -1;
	return anomaly_cmp_key(x, y);
}

void metrics_anomalies_finish(struct metrics_anomalies *as, size_t limit)
{
	if (as->n)
		qsort(as->v, as->n, sizeof(*as->v), anomaly_by_bytes);
	if (as->n > limit) {
		as->omitted += as->n - limit;
		as->n = limit;
	}
}

void metrics_anomalies_release(struct metrics_anomalies *as)
{
	free(as->v);
	memset(as, 0, sizeof(*as));
}

/* ---- per-key totals ---- */

static double decayed(const struct metrics_total *e, uint64_t now_ns)
{
	if (now_ns <= e->recent_ns)
		return e->recent;
	return e->recent * exp2(-(double)(now_ns - e->recent_ns) / METRICS_RATE_HALF_NS);
}

/* The slot of (domain, key) in the sorted array, or where it would go. */
static size_t totals_slot(const struct metrics_totals *t, const char *domain, const char *key,
			  bool *found)
{
	size_t lo = 0, hi = t->n;

	*found = false;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(t->v[mid].domain, domain);

		if (!c)
			c = strncmp(t->v[mid].key, key, METRICS_KEY_LEN - 1);
		if (!c) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void metrics_totals_add(struct metrics_totals *t, const char *domain, const char *key,
			uint64_t allocs, uint64_t frees, uint64_t refaults, uint64_t now_ns)
{
	struct metrics_total *e;
	bool found;
	size_t i;

	if (!allocs && !frees && !refaults)
		return;
	i = totals_slot(t, domain, key, &found);
	if (!found && t->n >= METRICS_TOTALS_MAX - 8) {
		/* the table is full: the domain's "(others)" sums the rest */
		key = "(others)";
		i = totals_slot(t, domain, key, &found);
		if (!found && t->n >= METRICS_TOTALS_MAX)
			return;
	}
	if (!found) {
		if (array_room(&t->v, &t->cap, t->n, sizeof(*t->v), 64)) {
			t->err = -ENOMEM;
			return;
		}
		memmove(&t->v[i + 1], &t->v[i], (t->n - i) * sizeof(*t->v));
		t->n++;
		e = &t->v[i];
		memset(e, 0, sizeof(*e));
		snprintf(e->domain, sizeof(e->domain), "%s", domain);
		snprintf(e->key, sizeof(e->key), "%s", key);
	}
	e = &t->v[i];
	e->allocs += allocs;
	e->frees += frees;
	e->refaults += refaults;
	e->recent = decayed(e, now_ns) + (double)(allocs + frees + refaults);
	e->recent_ns = now_ns;
}

struct by_recent {
	const struct metrics_total *e;
	double recent;
};

static int recent_cmp(const void *a, const void *b)
{
	const struct by_recent *x = a, *y = b;

	if (x->recent != y->recent)
		return x->recent < y->recent ? 1 : -1;
	return strcmp(x->e->key, y->e->key);
}

size_t metrics_totals_top(const struct metrics_totals *t, uint64_t now_ns,
			  const struct metrics_total **out, size_t n)
{
	struct by_recent *v;
	size_t i, k;

	if (!t->n || !n)
		return 0;
	v = malloc(t->n * sizeof(*v));
	if (!v)
		return 0;
	for (i = 0; i < t->n; i++) {
		v[i].e = &t->v[i];
		v[i].recent = decayed(&t->v[i], now_ns);
	}
	qsort(v, t->n, sizeof(*v), recent_cmp);
	for (k = 0; k < n && k < t->n; k++)
		out[k] = v[k].e;
	free(v);
	return k;
}

void metrics_totals_release(struct metrics_totals *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}

/* ---- the exposition ---- */

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void one_u64(FILE *f, const char *name, const char *type, const char *help,
		    uint64_t v)
{
	head(f, name, type, help);
	fprintf(f, "%s %" PRIu64 "\n", name, v);
}

static void one_dbl(FILE *f, const char *name, const char *type, const char *help,
		    double v)
{
	head(f, name, type, help);
	fprintf(f, "%s %.6f\n", name, v);
}

static void named(FILE *f, const char *name, const char *type, const char *help,
		  const char *label, const struct metrics_named *s)
{
	char esc[METRICS_ESC_SIZE(64)];
	unsigned int i;

	head(f, name, type, help);
	for (i = 0; i < s->n; i++)
		fprintf(f, "%s{%s=\"%s\"} %" PRIu64 "\n", name, label,
			metrics_escape(esc, sizeof(esc), s->name[i]), s->v[i]);
}

/* --budget: the limit, the last second's cost by part, the records budget
 * it leaves the sampler, what it sheds now and how often it acted */
static void budget_metrics(FILE *f, const struct budget *b, const struct duty *u)
{
	unsigned int l;

	one_dbl(f, "cachescope_budget_percent", "gauge",
		"--budget: what tracing may cost, percent of one CPU (0: off)", b->pct);
	head(f, "cachescope_cost_percent", "gauge",
	     "What tracing cost in the last second, percent of one CPU: the BPF programs' run time (source: kernel accounting or estimate) and the daemon's CPU");
	fprintf(f, "cachescope_cost_percent{part=\"bpf\",source=\"%s\"} %.3f\n",
		b->kernel ? "kernel" : "estimate", b->bpf_pct);
	fprintf(f, "cachescope_cost_percent{part=\"daemon\",source=\"cpu_clock\"} %.3f\n",
		b->daemon_pct);
	one_u64(f, "cachescope_budget_slab_records_per_second", "gauge",
		"The slab records a second the budget leaves the sampler (--sample-budget at most)",
		b->records);
	head(f, "cachescope_budget_shed", "gauge",
	     "Optional programs whose work --budget has shed now (1), by probe");
	for (l = BUDGET_SHED_PAGE; l <= BUDGET_SHED_KMALLOC; l++)
		fprintf(f, "cachescope_budget_shed{probe=\"%s\"} %d\n",
			l == BUDGET_SHED_PAGE ? "page_cache" : "kmalloc", b->level >= l);
	head(f, "cachescope_budget_alloc_traced_share", "gauge",
	     "Share of the time the alloc programs (kmem_cache_alloc, kmalloc) are attached: 1, or 1/2, 1/4, 1/8 where --budget samples in time (each tracked object then stands for 2, 4, 8 times more)");
	fprintf(f, "cachescope_budget_alloc_traced_share %.3f\n", duty_share(u));
	head(f, "cachescope_budget_free_traced_share", "gauge",
	     "Share of the time the free programs (kmem_cache_free, kfree) are attached: 1, or with --sample-time-frees or at the budget's last level the alloc programs' share (a tracked object freed between the slices is found when a slice sees its address again; a leak the cache's count cannot confirm is labelled only where the frees it may hide are a small part of it)");
	fprintf(f, "cachescope_budget_free_traced_share %.3f\n", u->frees ? duty_share(u) : 1.0);
	head(f, "cachescope_budget_kmalloc_held", "gauge",
	     "1 while the alloc programs cycle but kmalloc's is held attached all the time: cycling it would cost more CPU than its detach saves (its tracepoint fires rarely); its objects then stand for themselves alone");
	fprintf(f, "cachescope_budget_kmalloc_held %d\n", u->shift && u->kmalloc_held);
	one_u64(f, "cachescope_budget_alloc_slices_total", "counter",
		"Slices of time the alloc programs were attached for while --budget sampled in time",
		u->cycles);
	one_u64(f, "cachescope_budget_alloc_attach_failures_total", "counter",
		"Attaches of kmem_cache_alloc's program the kernel refused while --budget sampled in time (its allocations untraced until the next)",
		u->failures);
	one_u64(f, "cachescope_budget_alloc_slices_missed_total", "counter",
		"Slices of time the alloc programs were not attached for because the daemon woke past them (the traced share falls below the one the counts assume)",
		u->missed);
	head(f, "cachescope_budget_actions_total", "counter",
	     "What --budget did: records budget lowered or raised, a level shed or restored");
	fprintf(f, "cachescope_budget_actions_total{action=\"lowered\"} %" PRIu64 "\n", b->lowered);
	fprintf(f, "cachescope_budget_actions_total{action=\"raised\"} %" PRIu64 "\n", b->raised);
	fprintf(f, "cachescope_budget_actions_total{action=\"shed\"} %" PRIu64 "\n", b->sheds);
	fprintf(f, "cachescope_budget_actions_total{action=\"restored\"} %" PRIu64 "\n", b->restores);
}

static void keys(FILE *f, const struct metrics_keys *ks, bool bytes)
{
	char d[METRICS_ESC_SIZE(8)], k[METRICS_ESC_SIZE(METRICS_KEY_LEN)];
	const char *name = bytes ? "cachescope_live_bytes" : "cachescope_live_objects";
	size_t i;

	head(f, name, "gauge", bytes ?
	     "Bytes of the objects or pages a key holds now, summed over processes (top keys)" :
	     "Objects or pages a key holds now, summed over processes (top keys)");
	for (i = 0; ks && i < ks->n; i++)
		fprintf(f, "%s{domain=\"%s\",key=\"%s\"} %" PRId64 "\n", name,
			metrics_escape(d, sizeof(d), ks->v[i].domain),
			metrics_escape(k, sizeof(k), ks->v[i].key),
			bytes ? ks->v[i].live_bytes : ks->v[i].live_objs);
}

static void anomalies(FILE *f, const struct metrics_anomalies *as, bool start)
{
	char d[METRICS_ESC_SIZE(8)], k[METRICS_ESC_SIZE(METRICS_KEY_LEN)];
	char c[METRICS_ESC_SIZE(16)], ct[METRICS_ESC_SIZE(64)], r[METRICS_ESC_SIZE(128)];
	const char *name = start ? "cachescope_anomaly_start_time_seconds" : "cachescope_anomaly_live_bytes";
	size_t i;

	head(f, name, "gauge", start ?
	     "When the anomaly of a key began, in seconds since the epoch (keys anomalous now, most live bytes first)" :
	     "Live bytes of a key anomalous now, summed over its processes of the same command and container (reason: what the pattern means)");
	for (i = 0; as && i < as->n; i++) {
		const struct metrics_anomaly *a = &as->v[i];

		fprintf(f, "%s{domain=\"%s\",key=\"%s\",comm=\"%s\",container=\"%s\",pattern=\"%s\",reason=\"%s\"} ",
			name, metrics_escape(d, sizeof(d), a->domain),
			metrics_escape(k, sizeof(k), a->key), metrics_escape(c, sizeof(c), a->comm),
			metrics_escape(ct, sizeof(ct), a->container), a->pattern,
			metrics_escape(r, sizeof(r), a->reason));
		if (start)
			fprintf(f, "%.3f\n", a->start_time_s);
		else
			fprintf(f, "%" PRId64 "\n", a->live_bytes);
	}
}

static void rates(FILE *f, const struct metrics_detail *det, int which)
{
	static const char *const names[] = { "cachescope_key_allocs_total", "cachescope_key_frees_total",
					     "cachescope_key_refaults_total" };
	static const char *const helps[] = {
		"Allocations (slab objects, GPU memory, KV blocks) or page-cache inserts of a key since the daemon started, summed over processes (the keys busiest lately)",
		"Frees or page-cache deletes of a key since the daemon started, summed over processes (the keys busiest lately)",
		"Page-cache folios or KV blocks of a key that came back soon after eviction, since the daemon started (the keys busiest lately)",
	};
	char d[METRICS_ESC_SIZE(8)], k[METRICS_ESC_SIZE(METRICS_KEY_LEN)];
	size_t i;

	head(f, names[which], "counter", helps[which]);
	for (i = 0; i < det->nrates; i++) {
		const struct metrics_total *e = det->rates[i];

		fprintf(f, "%s{domain=\"%s\",key=\"%s\"} %" PRIu64 "\n", names[which],
			metrics_escape(d, sizeof(d), e->domain), metrics_escape(k, sizeof(k), e->key),
			which == 0 ? e->allocs : which == 1 ? e->frees : e->refaults);
	}
}

static void hist(FILE *f, const char *name, const char *help, const struct metrics_hist *h)
{
	unsigned int i;

	head(f, name, "histogram", help);
	for (i = 0; i < METRICS_HIST_BUCKETS; i++)
		fprintf(f, "%s_bucket{le=\"%g\"} %" PRIu64 "\n", name, metrics_hist_bounds[i], h->le[i]);
	fprintf(f, "%s_bucket{le=\"+Inf\"} %" PRIu64 "\n%s_sum %.6f\n%s_count %" PRIu64 "\n", name,
		h->count, name, h->sum, name, h->count);
}

static void process(FILE *f, const struct metrics_process *p)
{
	if (!p->ok)
		return;
	one_dbl(f, "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds",
		p->cpu_s);
	one_u64(f, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes",
		p->resident_bytes);
	one_u64(f, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes",
		p->virtual_bytes);
	one_dbl(f, "process_start_time_seconds", "gauge",
		"Start time of the process since unix epoch in seconds", p->start_time_s);
	one_u64(f, "process_open_fds", "gauge", "Number of open file descriptors", p->open_fds);
	if (p->max_fds)
		one_u64(f, "process_max_fds", "gauge", "Maximum number of open file descriptors",
			p->max_fds);
}

static void programs(FILE *f, const struct metrics *m)
{
	char n[METRICS_ESC_SIZE(40)];
	unsigned int i;

	head(f, "cachescope_bpf_stats_enabled", "gauge",
	     "Whether the kernel times every BPF program run (kernel.bpf_stats_enabled, or --bpf-stats): "
	     "without it cachescope_bpf_program_run_seconds_total and _runs_total are absent");
	fprintf(f, "cachescope_bpf_stats_enabled %d\n", m->bpf_stats_enabled > 0);
	/* the families always, their samples only where the kernel times
	 * the runs: a zero would read as free */
	head(f, "cachescope_bpf_program_run_seconds_total", "counter",
	     "Time the kernel spent running each BPF program (only while cachescope_bpf_stats_enabled is 1)");
	for (i = 0; m->bpf_stats_enabled > 0 && i < m->nprogs; i++)
		fprintf(f, "cachescope_bpf_program_run_seconds_total{program=\"%s\"} %.9f\n",
			metrics_escape(n, sizeof(n), m->progs[i].name), m->progs[i].run_ns / 1e9);
	head(f, "cachescope_bpf_program_runs_total", "counter",
	     "Runs of each BPF program (only while cachescope_bpf_stats_enabled is 1)");
	for (i = 0; m->bpf_stats_enabled > 0 && i < m->nprogs; i++)
		fprintf(f, "cachescope_bpf_program_runs_total{program=\"%s\"} %" PRIu64 "\n",
			metrics_escape(n, sizeof(n), m->progs[i].name), m->progs[i].run_cnt);
	head(f, "cachescope_bpf_program_recursion_misses_total", "counter",
	     "Runs of each BPF program the kernel skipped: the program was already running on that CPU (its events are not counted)");
	for (i = 0; i < m->nprogs; i++)
		fprintf(f, "cachescope_bpf_program_recursion_misses_total{program=\"%s\"} %" PRIu64 "\n",
			metrics_escape(n, sizeof(n), m->progs[i].name), m->progs[i].recursion_misses);
}

int metrics_render(const struct metrics *m, const struct metrics_detail *det,
		   char **out, size_t *len)
{
	const struct metrics_keys *ks = det ? det->live : NULL;
	char ver[METRICS_ESC_SIZE(32)];
	FILE *f;

	*out = NULL;
	*len = 0;
	f = open_memstream(out, len);
	if (!f)
		return -ENOMEM;
	head(f, "cachescope_build_info", "gauge", "The daemon's version, as a label; always 1");
	fprintf(f, "cachescope_build_info{version=\"%s\"} 1\n",
		metrics_escape(ver, sizeof(ver), m->version ? m->version : ""));
	process(f, &m->proc);
	one_u64(f, "cachescope_events_produced_total", "counter",
		"Records the BPF programs produced", m->produced);
	one_u64(f, "cachescope_events_consumed_total", "counter",
		"Records the daemon read from the rings", m->consumed);
	one_u64(f, "cachescope_events_dropped_total", "counter",
		"Records dropped because a ring was full", m->dropped);
	one_u64(f, "cachescope_events_bad_total", "counter",
		"Records that did not decode", m->bad_records);
	one_u64(f, "cachescope_events_lost_nomem_total", "counter",
		"Records the daemon had no memory to account", m->lost_nomem);
	one_u64(f, "cachescope_events_late_total", "counter",
		"Records of a window already closed (counted in the oldest open one)", m->late);
	one_u64(f, "cachescope_unseen_frees_total", "counter",
		"Frees of slab objects whose allocation was not seen", m->unseen_frees);
	one_u64(f, "cachescope_page_refaults_total", "counter",
		"Page-cache folios that refaulted, in closed windows", m->page_refaults);
	one_u64(f, "cachescope_kv_swap_ins_total", "counter",
		"KV-cache blocks swapped in, in closed windows", m->kv_swap_ins);
	one_u64(f, "cachescope_kv_queue_full_total", "counter",
		"KV records applied before their window closed: the reorder queue was full", m->kv_queue_full);
	one_u64(f, "cachescope_keys", "gauge",
		"Keys (domain, cache or file, process) tracked now", m->keys);
	named(f, "cachescope_keys_merged_total", "counter",
	      "Keys merged into their cache's others key, by why (exited: its process; idle: a family idle a minute; evicted: past --max-keys)",
	      "reason", &m->keys_merged);
	one_u64(f, "cachescope_keys_dropped_total", "counter",
		"Idle keys with nothing live forgotten", m->keys_dropped);
	one_u64(f, "cachescope_others_events_total", "counter",
		"Events counted on an others key: the key table was full of busy keys", m->others_events);
	one_u64(f, "cachescope_share_events_total", "counter",
		"Of those, events of a user that held its share of the full key budget", m->share_events);
	keys(f, ks, false);
	keys(f, ks, true);
	one_u64(f, "cachescope_live_keys_omitted", "gauge",
		"Keys left out of cachescope_live_objects and _bytes by the bound", ks ? ks->omitted : 0);
	head(f, "cachescope_live_omitted_bytes", "gauge", "Live bytes of the keys left out");
	fprintf(f, "cachescope_live_omitted_bytes %" PRId64 "\n", ks ? ks->omitted_bytes : 0);
	named(f, "cachescope_vectors_total", "counter", "Feature vectors made, by pattern",
	      "pattern", &m->vectors);
	named(f, "cachescope_anomalous_keys", "gauge",
	      "Keys whose latest vector of the last 10 s has the pattern", "pattern", &m->anomalous);
	one_u64(f, "cachescope_anomalies_started_total", "counter",
		"Anomalies begun: a key's first vector of an anomaly pattern", m->anomalies_started);
	one_u64(f, "cachescope_anomaly_events_limited_total", "counter",
		"Anomaly starts and ends not logged: past the log's rate limit", m->anomaly_events_limited);
	one_u64(f, "cachescope_behaviour_changes_total", "counter",
		"Keys whose newest vectors left every cluster of their history (cachescope changes)",
		m->changes);
	if (det && det->anomalies) {
		anomalies(f, det->anomalies, false);
		anomalies(f, det->anomalies, true);
		one_u64(f, "cachescope_anomalies_omitted", "gauge",
			"Anomalous keys left out of cachescope_anomaly_* by the bound",
			det->anomalies->omitted);
	}
	if (det && det->rates) {
		rates(f, det, 0);
		rates(f, det, 1);
		rates(f, det, 2);
	}
	hist(f, "cachescope_clustering_duration_seconds", "How long each DBSCAN run over the history took",
	     &m->clustering);
	one_u64(f, "cachescope_history_vectors", "gauge", "Vectors held for clustering",
		m->history_vectors);
	one_u64(f, "cachescope_history_trimmed_total", "counter",
		"Vectors dropped from the history before their time: --history-max", m->history_trimmed);
	one_u64(f, "cachescope_rules_reloads_total", "counter",
		"Rules read again (SIGHUP, cachescope reload)", m->rules_reloads);
	one_u64(f, "cachescope_gpu_records_total", "counter",
		"CUPTI activity records received from the CUPTI library (in its batches' bins, or one by one)",
		m->gpu_records);
	one_u64(f, "cachescope_gpu_bins_total", "counter",
		"Bins of the CUPTI library's batches received (a record each, in its per-record mode)",
		m->gpu_bins);
	one_u64(f, "cachescope_cupti_dropped_records_total", "counter",
		"Records CUPTI said it dropped", m->cupti_dropped);
	one_u64(f, "cachescope_gpu_late_records_total", "counter",
		"GPU records whose work ran in a window closed before they came (folded into the oldest open one)",
		m->gpu_late);
	one_u64(f, "cachescope_csv_rows_total", "counter", "Rows written to the --csv files",
		m->csv_rows);
	one_u64(f, "cachescope_csv_rotations_total", "counter",
		"--csv files committed at --csv-max-mb and a new one begun", m->csv_rotations);
	one_u64(f, "cachescope_csv_rows_dropped_total", "counter",
		"Rows of --csv files removed past --csv-keep", m->csv_rows_dropped);
	one_u64(f, "cachescope_gpu_release_unmatched_total", "counter",
		"GPU memory releases of more than their process had allocated (the live count stops at zero)",
		m->gpu_release_unmatched);
	one_u64(f, "cachescope_slab_sample_shift", "gauge",
		"Largest slab sampling shift now: 1 in 2^shift objects tracked", m->sample_shift);
	one_u64(f, "cachescope_slab_sample_shift_peak", "gauge",
		"Largest slab sampling shift so far", m->sample_shift_peak);
	one_u64(f, "cachescope_slab_sampled_slots", "gauge",
		"Slots of (cache, process) with a sampling shift now", m->sample_slots);
	one_u64(f, "cachescope_slab_sample_changes_total", "counter",
		"Sampling shifts changed", m->sample_changes);
	one_u64(f, "cachescope_slab_ring_backoff_total", "counter",
		"Slab allocations the sampler would track, passed over while their CPU's ring was over half full (those tracked then stand for more)",
		m->ring_backoff);
	budget_metrics(f, &m->budget, &m->duty);
	named(f, "cachescope_usdt_rejected_total", "counter",
	      "User-space probe records rejected, by reason: untrusted (a process not believed) or a value out of bounds", "reason",
	      &m->usdt_rejected);
	programs(f, m);
	named(f, "cachescope_control_requests_total", "counter",
	      "Control-socket requests and clients, by result (served; timeout: too slow; denied: its uid; busy: too many at once; too_long: the request)",
	      "result", &m->control);
	one_u64(f, "cachescope_scrapes_total", "counter", "Requests for /metrics answered",
		m->scrapes);
	named(f, "cachescope_http_refused_total", "counter",
	      "Metrics-endpoint connections or requests refused, by reason (client_limit: the client had its share open; deadline: the request took too long; host: Host: named another machine; auth: no or a wrong user; auth_rate: a password check a second)",
	      "reason", &m->http_refused);
	named(f, "cachescope_leak_stacks_total", "counter",
	      "Allocation stacks of leak suspects, by what became of them (taken: copied by the programs; limited: past --leak-stacks a second; ring_full: no room in the stack ring; turned_away: not kept, the key's share or the table full; unwound: named past their first frame; unreadable: the process's files could not be read)",
	      "result", &m->leak_stacks);
	one_u64(f, "cachescope_leak_stacks_kept", "gauge",
		"Sampled live objects held with their allocation stack", m->leak_stacks_kept);
	if (fclose(f) || !*out) {
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

int metrics_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[64];
	const char *port = NULL;
	unsigned long p;
	char *end;

	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		const char *c = strchr(s, ']');

		if (!c || c[1] != ':' || (size_t)(c - s - 1) >= sizeof(host))
			return -EINVAL;
		memcpy(host, s + 1, c - s - 1);
		host[c - s - 1] = 0;
		port = c + 2;
	} else if (strchr(s, ':')) {
		const char *c = strrchr(s, ':');

		if ((size_t)(c - s) >= sizeof(host) || strchr(s, ':') != c)
			return -EINVAL;
		memcpy(host, s, c - s);
		host[c - s] = 0;
		port = c + 1;
	} else {
		snprintf(host, sizeof(host), "127.0.0.1");
		port = s;
	}
	if (*port < '0' || *port > '9')
		return -EINVAL;
	errno = 0;
	p = strtoul(port, &end, 10);
	if (errno || *end || p > 65535)
		return -EINVAL;
	if (s[0] == '[') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			return -EINVAL;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)p);
		*len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			return -EINVAL;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)p);
		*len = sizeof(*a);
	}
	return 0;
}
