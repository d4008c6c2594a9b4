// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cachescoped: load the tracing programs, then run one epoll loop over the
 * per-CPU rings, a signalfd, the window timer, the control socket and the
 * metrics endpoint.
 *
 * The window timer is the clock of the daemon: on every tick it drains all
 * rings and only then closes the windows that ended, so a window's rows hold
 * every event of that window that reached a ring.  Only when a tick comes
 * a window late (the loop stalled) does an event two windows ahead close
 * the windows before it from inside wtable_add (window.h says why).
 */
#include <errno.h>
#include <malloc.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include "clock.h"
#include "analysis.h"
#include "anomaly.h"
#include "change.h"
#include "psi.h"
#include "pyproc.h"
#include "args.h"
#include "budget.h"
#include "duty.h"
#include "cgroup.h"
#include "classify.h"
#include "control.h"
#include "counters.h"
#include "csv.h"
#include "discover.h"
#include "event.h"
#include "httpd.h"
#include "metrics.h"
#include "kstate.h"
#include "privs.h"
#include "proto.h"
#include "report.h"
#include "rowcsv.h"
#include "rows.h"
#include "keeper.h"
#include "loader.h"
#include "log.h"
#include "loop.h"
#include "paths.h"
#include "webconfig.h"
#include "window.h"
#include "sample.h"
#include "stacks.h"
#include "status.h"
#include "summary.h"
#include "workload.h"

/* Ticks fire this long after a window's end, so that records reserved just
 * before the end have been submitted. */
#define TICK_SLACK_NS 2000000ull

/* processes remembered as asked whether they are Python (ask_python) */
#define PYASKED 64

struct daemon {
	struct env env;
	struct loader ld;
	struct wtable *wt;
	struct analysis an;
	struct anomalies anom;		/* the keys anomalous now; their starts and ends logged */
	struct changes chg;		/* keys whose vectors left their cluster (change.h) */
	/* memory pressure stalls (PSI), the system's and of the cgroups the
	 * thrash rule asked about, read at every tick */
	struct psi_track psi;
	bool psi_on;			/* the kernel has PSI */
	char cg2root[256];		/* the cgroup v2 mount, or "" */
	uint64_t psi_gc_ns;
	struct wl wl;
	bool driving;			/* runs kvref (--workload) */
	bool confined;			/* its filesystem read-only (privs_confine) */
	struct keeper keeper;		/* CAP_DAC_OVERRIDE's steps, where needed */
	/* who owns a process, for the key budget's fair shares: the owner of
	 * its /proc directory, remembered a second (a key's first records
	 * ask; a user past its share asks at every record) */
	struct owner_ent {
		uint32_t tgid, uid;
		uint64_t at_ns;
	} owners[1024];
	char gpu_lib[4200];		/* the CUPTI library watched, or "" */
	struct csv *csv;
	struct csv *mem_csv;		/* rows for export when there is no --csv file */
	struct rows rows;		/* the newest CSV rows, for 'cachescope export' */
	struct cgcache *cg;		/* cgroup and container per process, for the CSV */
	struct csv_stats csv_st;	/* at commit */
	bool csv_done;
	char host[256];			/* the CSV's host column (gethostname) */
	struct kstate *ks;		/* the kernel's object counts */
	struct ksyms *syms;		/* /proc/kallsyms, loaded at start */
	struct stacks *stacks;		/* allocation stacks (--leak-stacks), or NULL */
	/* processes asked whether they are Python (pyproc.h), and when */
	struct { uint32_t tgid; bool py; uint64_t asked_ns; } pyasked[PYASKED];
	uint64_t stacks_until;		/* stacks are taken until then; 0: none */
	uint64_t last_recluster_ns, last_kstate_ns, last_trim_ns;
	struct loop loop;		/* every source: rings, signals, timer, socket, kvref */
	struct control *ctl;
	struct httpd *http;		/* --metrics-addr, or NULL */
	struct webconfig *wc;		/* --web-config, or NULL */
	/* for the metrics: sums over closed rows, and clustering time */
	uint64_t page_refaults, kv_swap_ins;
	uint64_t vectors[LABEL_COUNT];
	uint64_t cluster_runs_seen;
	double cluster_s_total;
	struct metrics_hist clustering;	/* each run's duration */
	struct metrics_totals totals;	/* events by (domain, key), for per-key counters */
	int sfd, tfd, lfd;
	uint64_t start_ns, real_off_ns;
	uint64_t bad_records, lost_nomem;
	/* from the CUPTI library: the CUPTI records its bins stand for, the
	 * bins (a record each, in records mode), records CUPTI dropped */
	uint64_t gpu_records, gpu_bins, cupti_dropped;
	struct sampler smp;		/* how many slab objects are tracked */
	struct budget budget;		/* --budget: what tracing may cost */
	struct duty duty;		/* its last levels: the alloc programs' slices */
	int dfd;			/* their timer, or -1 */
	/* the estimate of the programs' run time where the kernel does not
	 * time them: slab events the records stand for (the records
	 * themselves: loader_consumed) */
	uint64_t est_runs;
	/* of which kmalloc's allocs, since the last look at whether to hold
	 * its program attached (update_kmalloc_hold), and that look's clock
	 * and its program's attached clock; the duty its records carry; the
	 * CPU of its last attach while it cycles */
	uint64_t kmalloc_runs, kmalloc_look_ns, kmalloc_look_att_ns;
	unsigned int kmalloc_duty;
	uint64_t kmalloc_att_cpu_ns;
	/* records dropped (rings full): the count at the last tick, and for
	 * the rows of the window being closed, those since the window before */
	uint64_t dropped_now, dropped_at_window, drop_window, window_drops;
	/* --interval: the last status line, and kvref's phases echoed */
	uint64_t status_ns, status_events;
	int phases_echoed;
	bool stop;
	/* rows of the last closed window, for 'cachescope top' */
	struct report_snap snap;
	uint64_t t0;			/* CLOCK_MONOTONIC start of window 0 */
	uint64_t reloads;		/* rules re-read (reload, SIGHUP) */
};

/* ---- ingest ---- */

static int on_sample(void *ctx, int cpu, const void *data, size_t size)
{
	struct daemon *d = ctx;
	struct cs_event e;

	(void)cpu;
	if (event_decode(data, size, &e)) {
		d->bad_records++;
		return 0;
	}
	/* a probe record rejected (not believed, out of bounds) counts
	 * nowhere but in the rejections */
	if (wtable_reject(d->wt, &e))
		return 0;
	if (e.type == CS_EV_GPU) {
		if (e.gpu.op == CS_GPU_DROPPED) {	/* a count, not a record */
			d->cupti_dropped += e.gpu.bytes;
			return 0;
		}
		d->gpu_bins++;
		d->gpu_records += e.gpu.count;
	} else if (e.type == CS_EV_SLAB_ALLOC || e.type == CS_EV_SLAB_FREE) {
		/* each record of a tracked object stands for 2^shift events;
		 * while a program is attached 1/2^duty of the time (the allocs',
		 * kmalloc's unless held, the frees' too with
		 * --sample-time-frees), for 2^(shift - duty) runs of it */
		unsigned int duty = e.type == CS_EV_SLAB_ALLOC ?
				    ((e.flags & CS_F_KMALLOC) ? d->kmalloc_duty : d->duty.shift) :
				    d->duty.frees ? d->duty.shift : 0;
		uint64_t runs = 1ull << ((e.slab.shift >= duty ? e.slab.shift - duty :
					  e.slab.shift) & 31);

		sampler_count(&d->smp, e.slot);
		d->est_runs += runs;
		if (e.type == CS_EV_SLAB_ALLOC && (e.flags & CS_F_KMALLOC))
			d->kmalloc_runs += runs;
		/* a free, or an alloc that reports the unseen free of the
		 * object it replaced: that object's stack goes */
		if (d->stacks && (e.type == CS_EV_SLAB_FREE || (e.flags & CS_F_UNSEEN)))
			stacks_freed(d->stacks, e.slab.ptr, e.ts_ns - e.slab.lifetime_ns);
	}
	if (wtable_apply(d->wt, &e))
		d->lost_nomem++;
	return 0;
}

/* Whether a leak suspect's process is a CPython 3.11, asked once every
 * PYASK_AGAIN_NS: its stacks then carry its Python frames. */
#define PYASK_AGAIN_NS (30 * NSEC_PER_SEC)

static void ask_python(struct daemon *d, uint32_t tgid, uint64_t now)
{
	static char maps[64 << 10];
	uint64_t runtime = 0;
	int i, slot = 0, err;

	for (i = 0; i < PYASKED; i++) {
		if (d->pyasked[i].tgid == tgid) {
			if (now - d->pyasked[i].asked_ns < PYASK_AGAIN_NS)
				return;
			slot = i;
			break;
		}
		if (d->pyasked[i].asked_ns < d->pyasked[slot].asked_ns)
			slot = i;
	}
	if (d->pyasked[slot].tgid != tgid && d->pyasked[slot].py)
		loader_py_register(&d->ld, d->pyasked[slot].tgid, 0);	/* the oldest goes */
	d->pyasked[slot].tgid = tgid;
	d->pyasked[slot].asked_ns = now;
	err = loader_read_maps(&d->ld, tgid, maps, sizeof(maps)) > 0 ?
	      pyproc_find(maps, &runtime) : -ENOENT;
	d->pyasked[slot].py = !err && !loader_py_register(&d->ld, tgid, runtime);
	if (!err)
		log_debug("leak stacks: pid %u is a Python 3.11, _PyRuntime at 0x%llx", tgid,
			  (unsigned long long)runtime);
	else if (err == -ENOTSUP)
		log_debug("leak stacks: pid %u is a Python other than 3.11: native frames only", tgid);
}

/* A process's slab key whose old objects still rise, in steps, is a leak
 * suspect: the stacks of its objects are taken from now on, for
 * STACKS_WANT_NS past the last window that said so. */
#define STACKS_WANT_NS (5 * NSEC_PER_SEC)

static void want_stacks(struct daemon *d, const struct wrow *r)
{
	const struct wkey *k = r->key;
	uint64_t now;

	if (!d->stacks || k->domain != DOM_SLAB || k->tgid == CS_TGID_OTHER ||
	    tgid_is_family(k->tgid) || r->old_rise <= 0 || r->old_steps < 2 ||
	    r->old_quiet_s >= 1.0)
		return;
	now = clock_ns(CLOCK_MONOTONIC);
	ask_python(d, k->tgid, now);
	if (!loader_want_stacks(&d->ld, k->tgid, k->id, now + STACKS_WANT_NS))
		d->stacks_until = now + STACKS_WANT_NS;
}

/* no suspect left: the programs skip the look-up again */
static void stacks_idle(struct daemon *d, uint64_t now)
{
	if (d->stacks_until && now > d->stacks_until) {
		loader_want_stacks(&d->ld, 0, 0, 0);
		d->stacks_until = 0;
	}
}

static ssize_t read_maps(void *ctx, uint32_t pid, char *buf, size_t n)
{
	struct daemon *d = ctx;

	return loader_read_maps(&d->ld, pid, buf, n);
}

static void on_stack(void *ctx, const void *data, size_t size)
{
	struct daemon *d = ctx;

	if (d->stacks)
		stacks_add(d->stacks, data, size);
}

static void resolve_key(struct acc *a, void *ctx)
{
	struct daemon *d = ctx;

	if (a->key.domain == DOM_SLAB && a->key.id >= CS_KMALLOC_ID_MAX)
		loader_cache_name(&d->ld, a->key.id, a->name, sizeof(a->name));
	if (a->key.domain == DOM_PAGE)
		loader_file_name(&d->ld, a->key.dev, a->key.id, a->key.gen, a->file,
				 sizeof(a->file));
	if (a->key.tgid != CS_TGID_OTHER &&
	    loader_comm(&d->ld, a->key.tgid, a->comm, sizeof(a->comm)))
		snprintf(a->comm, sizeof(a->comm), "?");
	/* while the process is there: its rows come after it may be gone */
	cgcache_get(d->cg, a->key.tgid, clock_ns(CLOCK_MONOTONIC));
}

/* the window table merged or forgot a key: so do its label counts */
static void key_gone(const struct wkey *key, const struct wkey *into, void *ctx)
{
	struct daemon *d = ctx;

	analysis_key_gone(&d->an, key, into);
	anomalies_key_gone(&d->anom, key, clock_ns(CLOCK_MONOTONIC));
	changes_key_gone(&d->chg, key);
}

/* A key's anomaly starts or ends: one line, at warning when it starts and
 * at notice when it ends (the journal's priorities 4 and 5); a flood is
 * cut to ANOMALY_EVENTS_PER_S a second by anomalies.c, and counted. */
#define ANOMALY_EVENTS_PER_S 2.0
#define ANOMALY_EVENTS_BURST 20.0

static void on_anomaly(enum anomaly_event ev, const struct anomaly *a, uint64_t now_ns, void *ctx)
{
	char line[1024];

	(void)ctx;
	anomaly_line(line, sizeof(line), ev, a, now_ns);
	if (ev == ANOMALY_STARTS)
		log_warn("%s", line);
	else
		log_notice("%s", line);
}

/* /proc shows every process, whatever our capabilities */
static bool process_alive(uint32_t tgid, void *ctx)
{
	char path[32];

	(void)ctx;
	snprintf(path, sizeof(path), "/proc/%u", tgid);
	return !access(path, F_OK) || errno != ENOENT;
}

/* ---- the kernel's own numbers, for the rules ---- */

#define KSTATE_EVERY_NS 200000000ull
/* Keys come and go in their thousands at a full key budget, and the
 * allocator keeps the pages they freed: hand them back this often (the
 * first tick too, after what loading the programs freed). */
#define TRIM_EVERY_NS (10 * NSEC_PER_SEC)

static int kview_cache_growth(void *ctx, const char *cache, double span_s,
			   double *per_s, double *got_s)
{
	struct daemon *d = ctx;

	return kstate_growth(d->ks, cache, (uint64_t)(span_s * NSEC_PER_SEC), per_s, got_s);
}

static unsigned int kview_alloc_duty(void *ctx, double span_s, bool kmalloc,
				     double *periods_per_s)
{
	struct daemon *d = ctx;
	uint64_t now = clock_ns(CLOCK_MONOTONIC), span = (uint64_t)(span_s * NSEC_PER_SEC);

	/* where the frees cycled within the span, kmalloc cycled with them */
	return kmalloc && !duty_frees_within(&d->duty, now, span) ?
	       duty_kmalloc_shift_within(&d->duty, now, span, periods_per_s) :
	       duty_shift_within(&d->duty, now, span, periods_per_s);
}

static bool kview_frees_in_time(void *ctx, double span_s)
{
	struct daemon *d = ctx;

	return duty_frees_within(&d->duty, clock_ns(CLOCK_MONOTONIC), (uint64_t)(span_s * NSEC_PER_SEC));
}

static int kview_cache_reclaimable(void *ctx, const char *cache)
{
	struct daemon *d = ctx;

	return kstate_reclaimable(d->ks, cache);
}

static long kview_cache_resolution(void *ctx, const char *cache)
{
	struct daemon *d = ctx;

	return kstate_resolution(d->ks, cache);
}

static int kview_file_lru(void *ctx, uint64_t *pages)
{
	struct daemon *d = ctx;

	return kstate_file_lru(d->ks, pages);
}

/* PSI of process tgid's cgroup v2 where it has a memory.pressure of its
 * own and it was sampled over the span, else the system's; a cgroup asked
 * about is read from then on (psi_tick). */
static int kview_memory_stall(void *ctx, uint32_t tgid, uint64_t from_ns, uint64_t to_ns,
			      double *share, char *where, size_t n)
{
	struct daemon *d = ctx;
	const struct cgroup_info *cg;
	char path[sizeof(d->psi.src[0]->path)];
	uint64_t some, full;

	if (!d->psi_on)
		return -ENOTSUP;
	cg = cgcache_get(d->cg, tgid, clock_ns(CLOCK_MONOTONIC));
	if (cg && cg->path && cg->path[0] && strcmp(cg->path, "/") && d->cg2root[0] &&
	    (size_t)snprintf(path, sizeof(path), "%s%s/memory.pressure", d->cg2root, cg->path) <
		    sizeof(path)) {
		if (!psi_track_share(&d->psi, path, from_ns, to_ns, NSEC_PER_SEC / 2, share)) {
			snprintf(where, n, "cgroup %s", cg->path);
			return 0;
		}
		/* from now on; meanwhile the system's */
		if (!psi_read(path, &some, &full))
			psi_track_note(&d->psi, path, clock_ns(CLOCK_MONOTONIC), some);
	}
	snprintf(where, n, "the system");
	return psi_track_share(&d->psi, PSI_SYSTEM, from_ns, to_ns, NSEC_PER_SEC / 2, share);
}

/* Every source's total now; a cgroup gone (its file too) is dropped by
 * the collection once nobody asks about it. */
static void psi_tick(struct daemon *d, uint64_t now)
{
	uint64_t some, full;
	unsigned int i;

	for (i = 0; d->psi_on && i < d->psi.n; i++) {
		if (!psi_read(d->psi.src[i]->path, &some, &full))
			psi_track_note(&d->psi, d->psi.src[i]->path, now, some);
		else
			d->psi.read_errors++;
	}
	if (now - d->psi_gc_ns >= 10 * NSEC_PER_SEC) {
		d->psi_gc_ns = now;
		psi_track_gc(&d->psi, now > 60 * NSEC_PER_SEC ? now - 60 * NSEC_PER_SEC : 0);
	}
}

static int kview_site_name(void *ctx, uint64_t addr, char *buf, size_t n)
{
	struct daemon *d = ctx;

	return ksyms_name(d->syms, addr, buf, n);
}

static int kview_leak_stack(void *ctx, uint32_t tgid, uint64_t cache, uint64_t age_ns,
			    struct stack_top *top)
{
	struct daemon *d = ctx;

	if (!d->stacks)
		return -ENOENT;
	return stacks_top(d->stacks, tgid, cache, clock_ns(CLOCK_MONOTONIC), age_ns, top);
}

/* ---- output ---- */

static bool is_workload(uint32_t tgid, void *ctx)
{
	struct daemon *d = ctx;

	return d->driving && wl_is_workload(&d->wl, tgid);
}

/* kvref runs as a user of its own: its probe records are believed as the
 * daemon started it (its pid, while it lived) */
static bool started_here(uint32_t tgid, uint64_t ts_ns, void *ctx)
{
	struct daemon *d = ctx;

	return d->driving && wl_started(&d->wl, tgid, ts_ns);
}

static uint32_t process_owner(uint32_t tgid, void *ctx)
{
	struct daemon *d = ctx;
	struct owner_ent *o = &d->owners[tgid % (sizeof(d->owners) / sizeof(d->owners[0]))];
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	char path[32];
	struct stat st;

	if (o->tgid == tgid && o->at_ns && now - o->at_ns < NSEC_PER_SEC)
		return o->uid;
	snprintf(path, sizeof(path), "/proc/%u", tgid);
	o->tgid = tgid;
	o->uid = stat(path, &st) ? UINT32_MAX : st.st_uid;
	o->at_ns = now;
	return o->uid;
}

/* exec renames a process after its first keys were named: read its comm
 * again once a second */
#define COMM_REFRESH_NS NSEC_PER_SEC

static void on_row(const struct wrow *r, void *ctx)
{
	struct daemon *d = ctx;
	struct acc *a = (struct acc *)r->acc;
	const struct vec_entry *v;

	if (r->window != d->drop_window) {
		d->drop_window = r->window;
		d->window_drops = d->dropped_now - d->dropped_at_window;
		d->dropped_at_window = d->dropped_now;
	}
	if (a->key.tgid != CS_TGID_OTHER &&
	    (r->window - a->comm_window) * d->env.window_ms * 1000000ull >= COMM_REFRESH_NS) {
		a->comm_window = r->window;
		loader_comm(&d->ld, a->key.tgid, a->comm, sizeof(a->comm));
	}

	/* per key and name, for the metrics' per-key counters */
	metrics_totals_add(&d->totals, domain_name(a->key.domain), r->file[0] ? r->file : r->name,
			   r->s->allocs + r->s->page_adds, r->s->frees + r->s->page_dels,
			   r->s->refaults, r->start_ns);
	if (a->key.domain == DOM_PAGE)
		d->page_refaults += r->s->refaults;
	if (a->key.domain == DOM_KV)
		d->kv_swap_ins += r->s->kv_swap_ins;
	want_stacks(d, r);
	v = analysis_add(&d->an, r, d->env.window_ms * 1000000ull);
	if (v && v->label < LABEL_COUNT)
		d->vectors[v->label]++;
	if (v && v->label != LABEL_NORMAL && v->label < LABEL_COUNT) {
		const struct cgroup_info *cg = cgcache_get(d->cg, r->key->tgid,
							   clock_ns(CLOCK_MONOTONIC));

		if (anomalies_vector(&d->anom, r, v->label, v->reason, cg ? cg->container : NULL))
			d->lost_nomem++;
	}
	if (v && d->driving && wl_is_workload(&d->wl, r->key->tgid))
		wl_tally(&d->wl, r->start_ns, r->file[0] ? r->file : r->name,
			 v->label);
	if (d->csv || d->mem_csv)
		rowcsv_row(d->csv ? d->csv : d->mem_csv, &(struct rowcsv_ctx){
				.real_off_ns = d->real_off_ns,
				.window_ms = d->env.window_ms,
				.host = d->host,
				.cg = d->cg,
				.syms = d->syms,
				.is_workload = is_workload,
				.leak_stack = kview_leak_stack,
				.ctx = d,
				.window_drops = d->window_drops,
			   }, r, v);
	report_snap_add(&d->snap, r, v ? v->label : LABEL_NONE);
}

/* ---- counters and tables ---- */

/* ---- the counters: one snapshot for every report (counters.h) ---- */

static int count_anomalous(struct daemon *d, uint64_t now, uint64_t *by_label)
{
	uint64_t w = wtable_window_of(d->wt, now);
	uint64_t back = ANOMALY_RECENT_NS / (d->env.window_ms * 1000000ull);

	return analysis_count_recent(&d->an, w > back ? w - back : 0, by_label);
}

/* Every counter now but the anomalous keys, which the outputs that show
 * them count (count_anomalous: a sort of the history). */
static void counters_take(struct daemon *d, struct counters *c)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	struct loader_prog_stats ps;

	memset(c, 0, sizeof(*c));
	c->uptime_s = (double)(now - d->start_ns) / NSEC_PER_SEC;
	loader_read_stats(&d->ld, &c->k);
	c->consumed = loader_consumed(&d->ld);
	wtable_get_stats(d->wt, &c->w);
	loader_prog_stats(&d->ld, &ps, NULL, NULL);
	c->recursion_misses = ps.recursion_misses;
	c->bad_records = d->bad_records;
	c->lost_nomem = d->lost_nomem;
	c->page_refaults = d->page_refaults;
	c->kv_swap_ins = d->kv_swap_ins;
	memcpy(c->vectors, d->vectors, sizeof(c->vectors));
	c->sample_shift = d->smp.top_shift;
	c->sample_shift_peak = d->smp.peak_shift;
	c->sample_slots = d->smp.sampled;
	c->sample_changes = d->smp.changes;
	c->budget = d->budget;
	c->duty = d->duty;
	c->history_vectors = d->an.n;
	c->history_trimmed = d->an.history_trimmed;
	c->history_s = analysis_history_s(&d->an, wtable_window_of(d->wt, now),
					  d->env.window_ms * 1000000ull);
	rows_get_stats(&d->rows, &c->rows);
	c->cluster_runs = d->an.runs;
	c->cluster_ms = d->an.last_run_ms;
	c->cluster_s_total = d->cluster_s_total;
	c->clustering = d->clustering;
	c->anomalies_now = d->anom.by_key.n;
	c->anomalies_started = d->anom.started;
	c->anomalies_ended = d->anom.ended;
	c->anomaly_events_said = d->anom.events_said;
	c->anomaly_events_limited = d->anom.events_limited;
	c->anomalies_not_held = d->anom.not_held;
	c->changes = d->chg.found;
	c->reloads = d->reloads;
	c->gpu_records = d->gpu_records;
	c->gpu_bins = d->gpu_bins;
	c->cupti_dropped = d->cupti_dropped;
	if (d->csv || d->csv_done) {
		struct csv_stats cs = d->csv_st;

		if (d->csv)
			csv_get_stats(d->csv, &cs);
		c->csv_rows = cs.rows;
		c->csv_rotations = cs.rotations;
		c->csv_files_dropped = cs.files_dropped;
		c->csv_rows_dropped = cs.rows_dropped;
	}
	if (d->stacks)
		stacks_get_stats(d->stacks, &c->stacks);
	control_get_stats(d->ctl, &c->ctl);
	httpd_get_stats(d->http, &c->http);
}

/* ---- the metrics endpoint (metrics.h renders, httpd.h serves) ---- */

struct collect {
	struct metrics_keys ks;
	bool detail;
};

/* Without detail one series a domain: the sum over its caches, files and
 * pools (key ""), which /proc/meminfo's Slab: and Cached: already tell
 * every user; per-cache counts are what /proc/slabinfo (0400) keeps from
 * them, and a file's or pool's name is its owner's business. */
static int collect_key(struct acc *a, void *ctx)
{
	struct collect *co = ctx;

	metrics_keys_add(&co->ks, domain_name(a->key.domain),
			 !co->detail ? "" : a->file[0] ? a->file : a->name,
			 a->live_objs, a->live_bytes);
	return co->ks.err;
}

/* The keys anomalous now, one series per (domain, key, comm, container,
 * pattern): no process id in a label. */
static int collect_anomalies(struct daemon *d, struct metrics_anomalies *ma)
{
	const struct anomaly **v;
	int n = anomalies_sorted(&d->anom, &v), i;

	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		struct metrics_anomaly m = {
			.pattern = label_name(v[i]->label),
			.reason = label_cause(v[i]->label, v[i]->key.domain),
			.live_bytes = v[i]->live_bytes,
			.start_time_s = (double)(v[i]->since_ns + d->real_off_ns) / NSEC_PER_SEC,
		};

		snprintf(m.domain, sizeof(m.domain), "%s", domain_name(v[i]->key.domain));
		snprintf(m.key, sizeof(m.key), "%s", v[i]->name);
		snprintf(m.comm, sizeof(m.comm), "%s", v[i]->comm);
		snprintf(m.container, sizeof(m.container), "%s", v[i]->container);
		metrics_anomalies_add(ma, &m);
	}
	free(v);
	metrics_anomalies_finish(ma, METRICS_MAX_ANOMALIES);
	return ma->err;
}

static void collect_prog(const struct loader_prog_stats *ps, void *ctx)
{
	struct metrics *m = ctx;
	struct metrics_prog *p;

	if (m->nprogs >= METRICS_MAX_PROGS)
		return;
	p = &m->progs[m->nprogs++];
	snprintf(p->name, sizeof(p->name), "%s", ps->name);
	p->run_ns = ps->run_time_ns;
	p->run_cnt = ps->run_cnt;
	p->recursion_misses = ps->recursion_misses;
}

/* kernel.bpf_stats_enabled: 1, 0, or -1 (cannot say) */
static int bpf_stats_enabled(const struct daemon *d)
{
	FILE *f = fopen("/proc/sys/kernel/bpf_stats_enabled", "re");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return d->env.bpf_stats || v > 0 ? 1 : v;
}

/* /proc/stat's btime: the boot time, seconds since the epoch */
static double boot_time_s(void)
{
	char line[256];
	double bt = 0;
	FILE *f = fopen("/proc/stat", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %lf", &bt) == 1)
			break;
	fclose(f);
	return bt;
}

static int render_metrics(void *ctx, bool detail, char **body, size_t *len)
{
	struct daemon *d = ctx;
	struct metrics m = { .version = CACHESCOPED_VERSION };
	struct collect co = { .detail = detail };
	struct metrics_anomalies ma = { 0 };
	const struct metrics_total *top[METRICS_TOP_RATES];
	struct metrics_detail det = { .live = &co.ks };
	struct loader_prog_stats sum;
	struct counters c;
	int err;

	counters_take(d, &c);
	err = count_anomalous(d, clock_ns(CLOCK_MONOTONIC), c.anomalous);
	if (err)
		return err;
	counters_metrics(&c, &m);
	metrics_process_read(&m.proc, "/proc/self", boot_time_s());
	m.bpf_stats_enabled = bpf_stats_enabled(d);
	loader_prog_stats(&d->ld, &sum, collect_prog, &m);
	wtable_foreach(d->wt, collect_key, &co);
	err = co.ks.err;
	if (!err && detail) {
		err = collect_anomalies(d, &ma);
		det.anomalies = &ma;
		det.nrates = metrics_totals_top(&d->totals, clock_ns(CLOCK_MONOTONIC), top,
						METRICS_TOP_RATES);
		det.rates = top;
	}
	if (!err) {
		metrics_keys_finish(&co.ks, METRICS_MAX_KEYS);
		err = metrics_render(&m, &det, body, len);
	}
	metrics_keys_release(&co.ks);
	metrics_anomalies_release(&ma);
	return err;
}

static int start_metrics(struct daemon *d)
{
	int err;

	d->http = httpd_start(&d->loop, (struct sockaddr *)&d->env.metrics_sa, d->env.metrics_salen,
			      d->wc, render_metrics, d, &err);
	if (!d->http) {
		log_err("cannot serve metrics on %s: %s", d->env.metrics_addr,
			err == -EPROTONOSUPPORT ? "this libmicrohttpd has no TLS" : strerror(-err));
		return err;
	}
	log_info("serving Prometheus metrics at http%s://%s/metrics%s", webconfig_cert(d->wc) ? "s" : "",
		 d->env.metrics_addr, webconfig_users(d->wc) ? " to its --web-config users" : "");
	return 0;
}

static int reload_rules(struct daemon *d, char *msg, size_t n);

static void on_command(const char *cmd, FILE *out, void *ctx)
{
	struct daemon *d = ctx;
	struct report_request rq;
	struct report_fields f = { .n = 0 };
	char err[512];

	if (report_parse_request(cmd, &rq, err, sizeof(err))) {
		report_error(rq.fmt, out, "%s", err);
		return;
	}
	switch (rq.cmd) {
	case CMD_STATUS: {
		struct counters c;

		counters_take(d, &c);
		counters_status(&c, &f);
		report_stats(&f, rq.fmt, out);
		break;
	}
	case CMD_CLUSTERS:
		report_clusters(&d->an, rq.label, rq.fmt, out);
		break;
	case CMD_TOP:
		report_top(&d->snap, d->env.window_ms, rq.n, rq.fmt, out);
		break;
	case CMD_CHANGES: {
		struct report_clock clk = { d->t0, d->env.window_ms * 1000000ull, d->real_off_ns };

		report_changes(&d->chg, &clk, rq.fmt, out);
		break;
	}
	case CMD_ANOMALIES: {
		struct report_clock clk = { d->t0, d->env.window_ms * 1000000ull, d->real_off_ns };

		report_anomalies(&d->anom, &clk, clock_ns(CLOCK_MONOTONIC), rq.fmt, out);
		break;
	}
	case CMD_VECTORS: {
		uint64_t window_ns = d->env.window_ms * 1000000ull;
		struct report_clock clk = { d->t0, window_ns, d->real_off_ns };
		uint64_t now = wtable_window_of(d->wt, clock_ns(CLOCK_MONOTONIC));
		uint64_t back = (uint64_t)rq.since_s * NSEC_PER_SEC / window_ns;

		report_vectors(&d->an, &clk, rq.since_s && now > back ? now - back : 0,
			       rq.key[0] ? rq.key : NULL, rq.fmt, out);
		break;
	}
	case CMD_EXPORT:
		/* CSV text whatever the format: the CLI writes it to the file */
		if (!d->env.export_mb) {
			report_error(rq.fmt, out, "no rows kept: cachescoped runs with --export-mb 0");
			break;
		}
		rows_write(&d->rows, rq.since_s ? (double)clock_ns(CLOCK_REALTIME) / NSEC_PER_SEC - rq.since_s : 0,
			   out);
		break;
	case CMD_RELOAD:
		if (reload_rules(d, err, sizeof(err)))
			report_error(rq.fmt, out, "%s", err);
		else
			report_ok(rq.fmt, out, err);
		break;
	}
}

/* ---- the tables at exit (summary.h) ---- */

static void print_tables(struct daemon *d)
{
	struct summary_keys keys = { 0 };

	wtable_foreach(d->wt, summary_add_key, &keys);
	summary_busiest(&keys, d->env.top, stdout);
	summary_keys_release(&keys);
	/* gathered again, in the table's order: ties stay as they were */
	wtable_foreach(d->wt, summary_add_key, &keys);
	summary_labelled(&keys, &d->an, stdout);
	summary_keys_release(&keys);
}

static void print_summary(struct daemon *d)
{
	struct summary sum = { 0 }, *s = &sum;
	struct loader_run_times rt;
	struct loader_prog_stats ps;
	struct counters c;

	counters_take(d, &c);
	counters_summary(&c, s);
	s->kernel_stats = d->env.bpf_stats && d->ld.stats_fd >= 0;
	loader_prog_stats(&d->ld, &ps, d->env.bpf_stats ? summary_add_prog : NULL, s);
	if (d->env.bpf_stats && !loader_run_times(&d->ld, &rt))
		s->run_times = &rt;
	loader_map_evictions(&d->ld, &s->k, &s->live_evictions, &s->evicted_evictions);
	s->smp = &d->smp;
	s->budget = &d->budget;
	s->duty = &d->duty;
	s->sample_budget = d->env.sample_budget;
	s->max_keys = d->env.max_keys;
	s->history_max = d->env.history_max;
	s->gpu = d->gpu_lib[0];
	s->csv = d->csv_done;
	s->csv_st = d->csv_st;
	s->stacks = d->stacks != NULL;
	summary_print(s, stdout);
}

/* ---- the loop ---- */


/* GPU records come through the CUPTI library's probes, for every process
 * that loads it; without the library there is nothing to watch. */
static int watch_gpu(struct daemon *d)
{
	char path[PATH_MAX];
	int err = discover_gpu_lib(&d->env, path, sizeof(path));

	if (err || !path[0])
		return err;
	err = loader_attach_gpu(&d->ld, path, d->env.gpu_per_record);
	if (!err) {
		log_info("watching CUPTI records of every process that loads %s (%s)", path,
			 d->env.gpu_per_record ? "a probe per record" : "batches");
		snprintf(d->gpu_lib, sizeof(d->gpu_lib), "%s", path);
	}
	return err;
}

static void on_workload(int fd, uint32_t events, void *data)
{
	struct daemon *d = data;

	(void)events;
	wl_read(&d->wl, clock_ns(CLOCK_MONOTONIC));
	for (; d->phases_echoed < d->wl.nphases; d->phases_echoed++) {
		const struct wl_phase *p = &d->wl.phases[d->phases_echoed];
		char line[256];

		status_phase(line, sizeof(line), p->scenario,
			     p->start_ns > d->start_ns ? (double)(p->start_ns - d->start_ns) / NSEC_PER_SEC : 0);
		fprintf(stderr, "cachescoped: %s\n", line);
	}
	/* at kvref's eof wl_read closed the pipe: its number is free for
	 * the next client, so it must leave the loop now */
	if (d->wl.fd < 0)
		loop_del(&d->loop, fd);
}

/* kvref lives beside cachescoped in the build folder, or in the package
 * library directory of an installed tree (paths.h). */
static int start_workload(struct daemon *d)
{
	struct wl_files f = { .exe.fd = -1, .backend.fd = -1, .inject.fd = -1 };
	char path[PATH_MAX], why[512];
	struct spawn_user user;
	int err;

	err = discover_workload(&d->env, d->gpu_lib, path, &user, &f);
	if (err)
		return err;
	err = loader_attach_usdt(&d->ld, path);
	if (err) {
		spawn_user_release(&user);
		goto cleanup;
	}
	/* kvref stops two seconds before the daemon, so its last windows close;
	 * on the GPU it reaches us through the CUPTI library we watch */
	err = wl_start(&d->wl, &f, &user, d->env.workload, d->env.duration_s - 2,
		       d->env.workload_backend, why, sizeof(why));
	if (err) {
		log_err("cannot run %s as %s: %s", path, user.name, why);
		spawn_user_release(&user);
		goto cleanup;
	}
	log_info("workload: kvref runs as %s, a user of its own", user.name);
	d->driving = true;
	err = loop_add(&d->loop, d->wl.fd, EPOLLIN, on_workload, d);
	if (err)
		log_err("cannot watch the workload's output: %s", strerror(-err));
cleanup:
	wl_files_close(&f);
	return err;
}

static int check_access(void *ctx)
{
	struct daemon *d = ctx;

	return loader_check_access(&d->ld);
}

/* Everything only root could do is done: programs loaded and attached,
 * rings mapped, kallsyms read, kvref started.  Keep what the later steps
 * were measured to need (DESIGN.md, "Privileges"), nothing else. */
static int drop_privileges(struct daemon *d)
{
	struct privs_needs needs = {
		.bpf_needs_cap = privs_probe(check_access, d) != 0,
		.cap_bpf = CAP_IS_SUPPORTED(CAP_BPF),
		.signals_others = d->driving,
		.dir_locked = (d->csv && !privs_dir_writable(d->env.csv_path)) ||
			      (d->env.socket_path && !privs_dir_writable(d->env.socket_path)),
	};
	const char *writes[] = { d->env.csv_path, d->env.socket_path };
	cap_value_t keep[PRIVS_KEEP_MAX];
	int n = privs_policy(&needs, keep), err;
	char names[128], step[128];

	/* the filesystem read-only but where the CSV and the socket go: a
	 * refusal (a seccomp filter, a container without CAP_SYS_ADMIN) is
	 * said, and the drop goes on */
	err = privs_confine(writes, 2, step, sizeof(step));
	d->confined = !err;
	if (err)
		log_warn("cannot make the filesystem read-only (%s: %s): the daemon keeps uid 0's write access to root's files",
			 step, strerror(-err));
	/* a directory uid 0's mode bits may not write in: the keeper alone
	 * keeps CAP_DAC_OVERRIDE, for the socket's bind and the steps at exit */
	if (needs.dir_locked) {
		err = keeper_start(&d->keeper, d->csv ? csv_tmp_path(d->csv) : NULL,
				   d->csv ? d->env.csv_path : NULL, (int)d->env.csv_keep,
				   d->env.socket_path);
		if (err)
			log_warn("cannot start the keeper process (%s): CAP_DAC_OVERRIDE is kept",
				 strerror(-err));
		else {
			needs.dir_locked = false;
			n = privs_policy(&needs, keep);
		}
	}
	err = privs_drop(keep, n);
	if (err) {
		log_err("cannot drop privileges: %s", strerror(-err));
		return err;
	}
	privs_names(keep, n, names, sizeof(names));
	log_info("dropped privileges, no_new_privs set, filesystem %s; capabilities kept: %s%s",
		 d->confined ? "read-only but for the CSV's and the socket's directories" : "writable",
		 names, d->keeper.pid ? " (CAP_DAC_OVERRIDE by the keeper process alone)" : "");
	return 0;
}

/* The rules: defaults, then --rules FILE, then each --rule.  Returns 0, or
 * -errno with the one-line reason in msg. */
static int load_rules(const struct env *env, struct rules *rules, char *msg, size_t n)
{
	/* what another user may write decides nothing of what we report */
	return rules_from(rules, env->rules_path, privs_check_opened, env->rule_args,
			  env->nrule_args, msg, n);
}

static void set_window_rules(struct daemon *d)
{
	wtable_set_rules(d->wt, &(struct wtable_rules){
		.age_min_ns = (uint64_t)(d->an.rules.v[R_LEAK_MIN_AGE_S] * NSEC_PER_SEC),
		.age_lifetimes = d->an.rules.v[R_LEAK_AGE_LIFETIMES],
		.expiry_ns = rules_expiry_ns,
	});
}

/* 'cachescope reload' and SIGHUP: the rules again from --rules and --rule;
 * on any error the rules in force stay.  msg says what happened. */
static int reload_rules(struct daemon *d, char *msg, size_t n)
{
	struct rules rules;
	int err = load_rules(&d->env, &rules, msg, n);

	if (err) {
		log_err("rules not reloaded (the rules in force stay): %s", msg);
		return err;
	}
	d->an.rules = rules;
	set_window_rules(d);
	d->reloads++;
	snprintf(msg, n, "rules reloaded: defaults, then %s%s, then %d --rule",
		 d->env.rules_path ? "--rules " : "no --rules file",
		 d->env.rules_path ? d->env.rules_path : "", d->env.nrule_args);
	log_info("%s", msg);
	return 0;
}

/* --web-config, read while the daemon may still read any file: its key
 * may be one only its owner reads. */
static int setup_web_config(struct daemon *d)
{
	char why[512];

	if (!d->env.web_config)
		return 0;
	d->wc = webconfig_load(d->env.web_config, why, sizeof(why));
	if (!d->wc) {
		log_err("invalid --web-config: %s", why);
		return -EINVAL;
	}
	return 0;
}

static int setup_rules(struct daemon *d)
{
	struct analysis_params p = {
		.eps = d->env.eps,
		.min_pts = d->env.min_pts,
		.history_windows = d->env.history_s * 1000 / d->env.window_ms,
		.history_max = (size_t)d->env.history_max,
	};
	struct rules rules;
	char msg[512];
	int err = load_rules(&d->env, &rules, msg, sizeof(msg));

	if (err) {
		log_err("%s", msg);
		return err;
	}
	analysis_init(&d->an, &rules, &p);
	d->an.kview.cache_growth = kview_cache_growth;
	d->an.kview.site_name = kview_site_name;
	d->an.kview.leak_stack = kview_leak_stack;
	d->an.kview.cache_resolution = kview_cache_resolution;
	d->an.kview.cache_reclaimable = kview_cache_reclaimable;
	d->an.kview.file_lru_pages = kview_file_lru;
	d->an.kview.memory_stall = kview_memory_stall;
	d->an.kview.alloc_duty = kview_alloc_duty;
	d->an.kview.frees_in_time = kview_frees_in_time;
	d->an.kview.ctx = d;
	return 0;
}

/* The kernel's object counts and symbols: without them the rules still
 * run, and leak reasons say the kernel's count was not checked. */
static void setup_kstate(struct daemon *d)
{
	int err;

	d->ks = kstate_new(NULL, NULL, NULL);
	if (d->ks && (err = kstate_sample(d->ks, clock_ns(CLOCK_MONOTONIC)))) {
		log_warn("cannot read /proc/slabinfo: %s; leaks are not checked against the kernel's counts",
			 strerror(-err));
		kstate_free(d->ks);
		d->ks = NULL;
	}
	d->syms = ksyms_load(NULL);
	if (!d->syms)
		log_warn("cannot read kernel symbols from /proc/kallsyms; call sites are shown as addresses");
	if (d->stacks)
		stacks_set_ksyms(d->stacks, d->syms);
	/* what refaults cost: the system's memory stalls, and a cgroup's
	 * where its processes have one (v2) */
	{
		uint64_t some, full, now = clock_ns(CLOCK_MONOTONIC);

		d->psi_on = !psi_read(PSI_SYSTEM, &some, &full);
		if (d->psi_on)
			psi_track_note(&d->psi, PSI_SYSTEM, now, some);
		else
			log_info("no %s: a thrash label rests on refaulted bytes a second alone", PSI_SYSTEM);
		if (psi_cgroup2_root("/proc/self/mountinfo", d->cg2root, sizeof(d->cg2root)))
			d->cg2root[0] = '\0';
		d->psi_gc_ns = now;
	}
}

/* The newest CSV rows, for 'cachescope export': the file's rows as they
 * are built, or rows built for that alone when there is no --csv. */
static int setup_export(struct daemon *d)
{
	rows_init(&d->rows, (size_t)d->env.export_mb << 20);
	if (!d->env.export_mb)
		return 0;
	if (!d->csv && csv_new_mem(&d->mem_csv))
		return -ENOMEM;
	return rowcsv_keep(&d->rows, d->csv ? d->csv : d->mem_csv);
}

static void socket_error(const char *path, int err)
{
	if (err == -EADDRINUSE)
		log_err("cannot listen on %s: another cachescoped answers there (stop it, or use --socket)",
			path);
	else if (err == -EEXIST)
		log_err("cannot listen on %s: it exists and is not a socket (not removed; use --socket)",
			path);
	else
		log_err("cannot listen on %s: %s", path, strerror(-err));
}

static void report_orphan(const char *tmp, long pid, void *ctx)
{
	(void)ctx;
	log_warn("found %s, the temporary CSV of a cachescoped that is gone (pid %ld): its rows are kept there, not removed",
		 tmp, pid);
}

static int setup_signals(struct daemon *d)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &mask, NULL))
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	d->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	return d->sfd < 0 ? -errno : 0;
}

static int setup_timer(struct daemon *d, uint64_t t0)
{
	uint64_t first = t0 + d->env.window_ms * 1000000ull + TICK_SLACK_NS;
	struct itimerspec its = {
		.it_value = { first / NSEC_PER_SEC, first % NSEC_PER_SEC },
		.it_interval = { d->env.window_ms / 1000, (d->env.window_ms % 1000) * 1000000 },
	};

	d->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (d->tfd < 0)
		return -errno;
	return timerfd_settime(d->tfd, TFD_TIMER_ABSTIME, &its, NULL) ? -errno : 0;
}

/* A key left the cluster its history lived in: one notice. */
static void on_change(const struct change *ch, void *ctx)
{
	char line[768];

	(void)ctx;
	log_notice("change: %s", change_line(line, sizeof(line), ch));
}

static void recluster(struct daemon *d, uint64_t now)
{
	uint64_t w = wtable_window_of(d->wt, now);
	int err = analysis_recluster(&d->an, w);

	if (err < 0)
		log_warn("cannot cluster %zu vectors: %s", d->an.n, strerror(-err));
	if (d->an.runs != d->cluster_runs_seen) {
		d->cluster_runs_seen = d->an.runs;
		d->cluster_s_total += d->an.last_run_ms / 1000;
		metrics_hist_observe(&d->clustering, d->an.last_run_ms / 1000);
		/* what the new clusters say of each key's recent moves */
		if (changes_scan(&d->chg, &d->an, w, d->env.window_ms * 1000000ull, on_change, d) < 0)
			d->chg.lost++;
	}
}

static void read_drops(struct daemon *d)
{
	struct cs_stats k;

	loader_read_stats(&d->ld, &k);
	d->dropped_now = k.dropped;
}

/* The records received set how many slab objects are tracked next. */
/* The programs read the shifts from the mapped bss: 1024 byte stores. */
static void set_shifts(struct daemon *d)
{
	unsigned int i;

	for (i = 0; i < CS_SHIFT_SLOTS; i++)
		loader_set_sample_shift(&d->ld, i, d->smp.slot[i].shift);
}

static void update_sampling(struct daemon *d, uint64_t now)
{
	unsigned int was = d->smp.top_shift;

	if (!sampler_update(&d->smp, duty_attached_clock(&d->duty, now)))
		return;
	set_shifts(d);
	if (d->smp.top_shift != was)
		log_info("tracking 1 in %u slab objects of the busiest caches (%u of %u slots of (cache, process) thinned)",
			 1u << d->smp.top_shift, d->smp.sampled, CS_SHIFT_SLOTS);
}

/* The auto sampler's records budget: the budget's, per second the
 * alloc programs are attached (their rates are on that clock,
 * sample.h), so while they are attached 1/2^duty of the time the records a
 * second fall in that share with the cost of the objects tracked; but
 * not below the budget's floor of records a second of the wall clock
 * (at 1/4 of a floor of 1 000 a second attached, kvref's false sharing
 * went unseen under nginx at --budget 5, run-all 23:58 UTC). */
static void set_records_budget(struct daemon *d)
{
	uint64_t floor = (uint64_t)BUDGET_MIN_RECORDS << d->duty.shift;

	if (!d->smp.fixed)
		d->smp.budget = d->budget.records > floor ? d->budget.records : floor;
}

/* A program the duty could not attach or detach: said the first
 * time and every 100th. */
static void duty_warn(struct daemon *d, bool on, const char *which, int err)
{
	if (d->duty.failures <= 1 || d->duty.failures % 100 == 0)
		log_warn("cannot %s %s program: %s (%" PRIu64 " times): its events are not traced until it is",
			 on ? "attach" : "detach", which, strerror(-err), d->duty.failures);
}

/* The timer of the alloc programs' next change (duty.h). */
static void duty_arm(struct daemon *d)
{
	struct itimerspec its = { 0 };

	its.it_value.tv_sec = d->duty.next_ns / NSEC_PER_SEC;
	its.it_value.tv_nsec = d->duty.next_ns % NSEC_PER_SEC;
	if (d->dfd >= 0 && timerfd_settime(d->dfd, TFD_TIMER_ABSTIME, &its, NULL))
		log_warn("cannot set the alloc programs' timer: %s", strerror(errno));
}

/* --sample-time-frees: the free programs on or off with the allocs'. */
static void duty_frees(struct daemon *d, bool on)
{
	static const int frees[] = { LOADER_TP_CACHE_FREE, LOADER_TP_KFREE };
	unsigned int i;
	int e;

	for (i = 0; i < sizeof(frees) / sizeof(frees[0]); i++)
		if ((e = loader_set_attached(&d->ld, frees[i], on)) < 0)
			duty_warn(d, on, "a free", e);
}

/* Attach or detach the alloc programs as the duty says (kmalloc's not
 * while the budget sheds it), with --sample-time-frees the frees' too, and
 * set the timer for the next change.  The frees' go on first and off
 * last, so that an object tracked in a slice is not freed unseen at its
 * edges.  kmem_cache_alloc's attach times (the frees' with them) set the
 * lead. */
static void duty_apply(struct daemon *d, bool on, uint64_t now)
{
	bool kmalloc = (on || d->duty.kmalloc_held) && d->budget.level < BUDGET_SHED_KMALLOC;
	uint64_t t = clock_ns(CLOCK_MONOTONIC), c;
	int r, e;

	if (d->duty.frees && on)
		duty_frees(d, true);
	r = loader_set_attached(&d->ld, LOADER_TP_CACHE_ALLOC, on);
	/* an attach's time (not one that found it attached) sets the lead */
	if (on && r != 0)
		duty_attached(&d->duty, now, r > 0, clock_ns(CLOCK_MONOTONIC) - t);
	if (r < 0)
		duty_warn(d, on, "the kmem_cache_alloc", r);
	if (loader_can_detach(&d->ld, LOADER_TP_KMALLOC)) {
		/* the CPU of its attach and detach, for whether to hold it */
		c = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		e = loader_set_attached(&d->ld, LOADER_TP_KMALLOC, kmalloc);
		c = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c;
		if (e < 0)
			duty_warn(d, on, "the kmalloc", e);
		else if (e > 0 && kmalloc)
			d->kmalloc_att_cpu_ns = c;
		else if (e > 0 && d->kmalloc_att_cpu_ns)
			duty_kmalloc_cycled(&d->duty, d->kmalloc_att_cpu_ns + c);
	}
	if (d->duty.frees && !on)
		duty_frees(d, false);
	duty_arm(d);
}

static void on_duty(int fd, uint32_t events, void *data)
{
	struct daemon *d = data;
	uint64_t expirations, now;

	(void)events;
	if (read(fd, &expirations, sizeof(expirations)) < 0)
		return;
	now = clock_ns(CLOCK_MONOTONIC);
	if (d->duty.next_ns && now < d->duty.next_ns)
		duty_arm(d);	/* early: set again */
	else if (d->duty.next_ns)
		duty_apply(d, duty_step(&d->duty, now), now);
}

/* The duty kmalloc's tracked objects carry: the allocs' while its
 * program cycles with theirs, none while it is held attached or cannot
 * be detached (a classic tracepoint's). */
static void set_kmalloc_duty(struct daemon *d, unsigned int duty)
{
	d->kmalloc_duty = d->duty.kmalloc_held || !loader_can_detach(&d->ld, LOADER_TP_KMALLOC) ?
			  0 : duty;
	loader_set_kmalloc_duty(&d->ld, d->kmalloc_duty);
}

/* kmalloc's program held attached (hold) or cycling with the allocs'
 * again: the duty its objects carry, and attached or detached now where
 * the allocs' are off (the budget's shed level kept). */
static void hold_kmalloc(struct daemon *d, bool hold, uint64_t now)
{
	duty_hold_kmalloc(&d->duty, hold, now);
	set_kmalloc_duty(d, d->duty.shift);
	if (!d->duty.on && (!hold || d->budget.level < BUDGET_SHED_KMALLOC))
		loader_set_attached(&d->ld, LOADER_TP_KMALLOC, hold);
}

/* Once a second while the alloc programs cycle: hold kmalloc's attached
 * where cycling it costs more than its detach saves, and let it cycle
 * again where that turns (duty_kmalloc_cycles).  Its runs a second come
 * from its records, on its own attached clock. */
static void update_kmalloc_hold(struct daemon *d, uint64_t now)
{
	uint64_t att = duty_attached_clock(&d->duty, now), span;
	double periods = d->duty.period_ns ? 1e9 / (double)d->duty.period_ns : 0, runs_per_s;
	bool hold;

	if (d->kmalloc_look_ns && now < d->kmalloc_look_ns + NSEC_PER_SEC)
		return;
	span = d->duty.kmalloc_held ? now - d->kmalloc_look_ns : att - d->kmalloc_look_att_ns;
	runs_per_s = d->kmalloc_look_ns && span ? (double)d->kmalloc_runs * NSEC_PER_SEC / span : 0;
	d->kmalloc_runs = 0;
	d->kmalloc_look_ns = now;
	d->kmalloc_look_att_ns = att;
	if (!loader_can_detach(&d->ld, LOADER_TP_KMALLOC))
		return;
	hold = d->duty.shift && !duty_kmalloc_cycles(&d->duty, runs_per_s, BUDGET_EST_RUN_NS, periods);
	if (hold == d->duty.kmalloc_held)
		return;
	hold_kmalloc(d, hold, now);
	if (!d->duty.shift)	/* attached for good with the allocs */
		return;
	if (hold)
		log_info("sampling in time: kmalloc's program held attached: it ran %.0f times a second, and an attach and detach of it cost %.2f ms of CPU, %.0f a second",
			 runs_per_s, (double)d->duty.kmalloc_cycle_ns / 1e6, periods);
	else
		log_info("sampling in time: kmalloc's program cycles with the allocs' again: it ran %.0f times a second",
			 runs_per_s);
}

/* The alloc programs' share of the time: the budget's level's, and
 * --sample-time's at least; where it changes, the programs' shift, the
 * slices and the records budget follow. */
static void set_duty(struct daemon *d, uint64_t now)
{
	unsigned int duty = budget_alloc_duty(d->budget.level);
	bool frees = d->env.sample_time_frees || budget_frees_in_time(d->budget.level);

	if (frees != d->duty.frees) {
		duty_set_frees(&d->duty, frees, now);
		/* kmalloc's program cycles with the frees (duty_kmalloc_cycles) */
		if (frees && d->duty.kmalloc_held)
			hold_kmalloc(d, false, now);
		/* back for good now; or off from now where the slice is */
		if (!frees || (d->duty.shift && !d->duty.on))
			duty_frees(d, !frees);
	}
	if (duty < (unsigned int)d->env.sample_time_shift)
		duty = (unsigned int)d->env.sample_time_shift;
	if (duty == d->duty.shift)
		return;
	loader_set_alloc_duty(&d->ld, duty);
	set_kmalloc_duty(d, duty);
	duty_apply(d, duty_set(&d->duty, duty, now), now);
	set_records_budget(d);
}

/* What a shed level takes off the tracepoints: the page-cache programs
 * and kmalloc's are detached (the .bss mask stops them first, and holds
 * where one cannot be: a classic tracepoint's), and the alloc programs are
 * attached only their share of the time. */
static void shed_programs(struct daemon *d, uint64_t now)
{
	static const struct { int tp; unsigned int level; const char *name; } opt[] = {
		{ LOADER_TP_PAGE_ADD, BUDGET_SHED_PAGE, "page-cache add" },
		{ LOADER_TP_PAGE_DEL, BUDGET_SHED_PAGE, "page-cache delete" },
		{ LOADER_TP_KMALLOC, BUDGET_SHED_KMALLOC, "kmalloc" },
	};
	unsigned int level = d->budget.level, i;
	bool want;
	int err;

	loader_set_shed(&d->ld, budget_shed_mask(level));
	for (i = 0; i < sizeof(opt) / sizeof(opt[0]); i++) {
		if (!loader_can_detach(&d->ld, opt[i].tp))
			continue;
		want = level < opt[i].level;
		/* kmalloc's comes back with the next slice where the alloc
		 * programs cycle (duty_apply) */
		if (opt[i].tp == LOADER_TP_KMALLOC && d->duty.shift && !d->duty.on &&
		    !d->duty.kmalloc_held)
			want = false;
		err = loader_set_attached(&d->ld, opt[i].tp, want);
		if (err < 0)
			log_warn("budget: cannot %s the %s program: %s", want ? "attach" : "detach",
				 opt[i].name, strerror(-err));
	}
	set_duty(d, now);
}

/* --budget: measure the cost once a second and apply what the controller
 * decides: the sampler's records budget, the programs shed.  The BPF part
 * from the kernel's accounting when it is on (kernel.bpf_stats_enabled,
 * --bpf-stats), else estimated from the events the records stand for. */
static void update_budget(struct daemon *d, uint64_t now)
{
	static const char *const shed_what[BUDGET_LEVELS] = {
		[BUDGET_SHED_PAGE] = "the page-cache programs",
		[BUDGET_SHED_KMALLOC] = "kmalloc's allocations",
		[BUDGET_SHED_ALLOC_HALF] = "the alloc programs half of the time",
		[BUDGET_SHED_ALLOC_QUARTER] = "the alloc programs 3/4 of the time",
		[BUDGET_SHED_ALLOC_EIGHTH] = "the alloc programs 7/8 of the time",
		[BUDGET_SHED_FREES] = "the free programs with them, 7/8 of the time",
	};
	struct loader_prog_stats ps;
	uint64_t bpf_ns, fixed_ns, was = d->budget.records;
	unsigned int level = d->budget.level;
	bool kernel;

	if (d->budget.started && now < d->budget.last_ns + BUDGET_EVERY_NS)
		return;
	kernel = bpf_stats_enabled(d) > 0;
	fixed_ns = (uint64_t)((double)d->est_runs * BUDGET_EST_RUN_NS);
	if (kernel) {
		loader_prog_stats(&d->ld, &ps, NULL, NULL);
		bpf_ns = ps.run_time_ns;
	} else {
		bpf_ns = fixed_ns + (uint64_t)((double)loader_consumed(&d->ld) * BUDGET_EST_RECORD_NS);
	}
	if (!budget_update(&d->budget, now, clock_ns(CLOCK_PROCESS_CPUTIME_ID), bpf_ns, fixed_ns,
			   kernel))
		return;
	set_records_budget(d);
	if (d->budget.level != level) {
		shed_programs(d, now);
		if (d->budget.level > level)
			log_warn("budget: tracing cost %.1f%% of a CPU (BPF %.1f%%%s, daemon %.1f%%), over --budget %g%% with the fewest objects tracked: shedding %s (%s)",
				 d->budget.cost_pct, d->budget.bpf_pct, kernel ? "" : " estimated",
				 d->budget.daemon_pct, d->budget.pct, shed_what[d->budget.level],
				 d->budget.level == BUDGET_SHED_PAGE ? "no refaults, no thrash label on files, until they are back" :
				 d->budget.level == BUDGET_SHED_KMALLOC ? "no new kmalloc-* objects tracked until they are back" :
				 d->duty.frees ? "sampling in time, the frees too: events counted in slices of each window, each tracked object standing for more; a leak the cache's count cannot confirm labelled only where the frees it may hide are a small part of it" :
				 "sampling in time: allocations counted in slices of each window, each tracked object standing for more; every free still seen");
		else
			log_notice("budget: tracing cost %.1f%% of a CPU, under --budget %g%%: shed now %s",
				   d->budget.cost_pct, d->budget.pct, budget_level_name(d->budget.level));
	} else if (d->budget.records != was) {
		log_info("budget: tracing cost %.1f%% of a CPU (BPF %.1f%%%s, daemon %.1f%%), --budget %g%%: slab records budget %" PRIu64 " -> %" PRIu64 "/s",
			 d->budget.cost_pct, d->budget.bpf_pct, kernel ? "" : " estimated",
			 d->budget.daemon_pct, d->budget.pct, was, d->budget.records);
	}
}

/* --interval's line (status.h); anomalous keys as the metrics count them */
static void print_status(struct daemon *d, uint64_t now)
{
	const struct vec_entry *newest[STATUS_NEWEST];
	uint64_t back = ANOMALY_RECENT_NS / (d->env.window_ms * 1000000ull);
	uint64_t w = wtable_window_of(d->wt, now);
	struct status st = { .events_per_s = -1 };
	struct counters c;
	uint64_t since;
	char line[1024];
	size_t n;

	counters_take(d, &c);
	count_anomalous(d, now, c.anomalous);
	counters_line(&c, &st);
	since = d->status_ns ? d->status_ns : d->start_ns;
	if (now > since)
		st.events_per_s = (double)(st.events - d->status_events) * NSEC_PER_SEC / (now - since);
	n = status_newest(d->an.v, d->an.n, w > back ? w - back : 0, newest, STATUS_NEWEST);
	status_format(line, sizeof(line), &st, newest, n);
	fprintf(stderr, "cachescoped: %s\n", line);
	d->status_ns = now;
	d->status_events = st.events;
}

static void on_tick(struct daemon *d)
{
	uint64_t expirations, now;
	int err;

	if (read(d->tfd, &expirations, sizeof(expirations)) < 0)
		return;
	loader_flush(&d->ld);
	loader_drain(&d->ld);
	now = clock_ns(CLOCK_MONOTONIC);
	read_drops(d);
	wtable_note_drops(d->wt, d->dropped_now, now);
	update_budget(d, now);
	update_kmalloc_hold(d, now);
	update_sampling(d, now);
	if (d->ks && now - d->last_kstate_ns >= KSTATE_EVERY_NS) {
		d->last_kstate_ns = now;
		kstate_sample(d->ks, now);
	}
	psi_tick(d, now);
	stacks_idle(d, now);
	wtable_close_until(d->wt, now - TICK_SLACK_NS);
	anomalies_expire(&d->anom, now - TICK_SLACK_NS);
	if (now - d->last_recluster_ns >= NSEC_PER_SEC) {
		d->last_recluster_ns = now;
		recluster(d, now);
	}
	if (now - d->last_trim_ns >= TRIM_EVERY_NS) {
		d->last_trim_ns = now;
		malloc_trim(0);
	}
	/* a full disk costs the CSV's later rows, not the run */
	if (d->csv && (err = csv_flush(d->csv))) {
		struct csv_stats st;

		csv_get_stats(d->csv, &st);
		log_err("cannot write %s: %s; its %" PRIu64 " rows so far are kept, later rows "
			"are counted as lost, tracing goes on", csv_tmp_path(d->csv), strerror(-err),
			st.rows);
	}
	if (d->env.interval_s &&
	    now - (d->status_ns ? d->status_ns : d->start_ns) >= (uint64_t)d->env.interval_s * NSEC_PER_SEC)
		print_status(d, now);
	if (d->env.duration_s && now - d->start_ns >= (uint64_t)d->env.duration_s * NSEC_PER_SEC)
		d->stop = true;
	/* the workload's last windows must close before the end */
	if (d->driving && d->wl.exited && now - d->wl.exit_ns >= NSEC_PER_SEC)
		d->stop = true;
}

/* ---- the sources of the loop: each its handler ---- */

static void on_rings(int fd, uint32_t events, void *data)
{
	struct daemon *d = data;

	(void)fd;
	(void)events;
	loader_drain(&d->ld);
	/* a burst raises the shift before the tick */
	update_sampling(d, clock_ns(CLOCK_MONOTONIC));
}

static void on_timer(int fd, uint32_t events, void *data)
{
	(void)fd;
	(void)events;
	on_tick(data);
}

static void on_signal(int fd, uint32_t events, void *data)
{
	struct daemon *d = data;
	struct signalfd_siginfo si;

	(void)events;
	if (read(fd, &si, sizeof(si)) != sizeof(si))
		return;
	if (si.ssi_signo == SIGUSR1) {
		report_clusters(&d->an, LABEL_NONE, REPORT_TEXT, stdout);
		fflush(stdout);
		return;
	}
	if (si.ssi_signo == SIGHUP) {
		char msg[512];

		reload_rules(d, msg, sizeof(msg));	/* it logs either way */
		return;
	}
	log_info("signal %u: stopping", si.ssi_signo);
	d->stop = true;
}

static int run_loop(struct daemon *d)
{
	int n;

	while (!d->stop) {
		n = loop_run_once(&d->loop, -1);
		if (n < 0) {
			log_err("epoll_wait failed: %s", strerror(-n));
			return n;
		}
	}
	return 0;
}

/* Detach, then drain twice: a program still running on another CPU when
 * the links went away may submit one more record. */
static void finish(struct daemon *d)
{
	loader_detach(&d->ld);
	loader_flush(&d->ld);
	loader_drain(&d->ld);
	usleep(10000);
	loader_flush(&d->ld);
	loader_drain(&d->ld);
	read_drops(d);
	wtable_close_all(d->wt);
}

/* ---- main: named phases, each logs its own failure ---- */

/* The command line and the rules: 0, 1 (--help or --version: done), or
 * -EINVAL (exit 2). */
static int parse(struct daemon *d, int argc, char **argv)
{
	int err;

	env_defaults(&d->env);
	err = args_parse(argc, argv, &d->env);
	if (err)
		return err > 0 ? 1 : -EINVAL;
	log_verbosity = d->env.verbose;
	return setup_rules(d) || setup_web_config(d) ? -EINVAL : 0;
}

/* Signals and the outputs, before anything is loaded. */
/* The --csv file's bound reached: its files moved up by the keeper where
 * the directory is locked, else by csv.c itself. */
static int rotate_by_keeper(void *ctx, int *fd)
{
	struct keeper *k = ctx;

	return k->pid ? keeper_rotate_csv(k, fd) : -ENOSYS;
}

static int setup(struct daemon *d)
{
	int err = setup_signals(d);

	if (err) {
		log_err("cannot set up signals: %s", strerror(-err));
		return err;
	}
	if (d->env.csv_path) {
		csv_orphans(d->env.csv_path, report_orphan, NULL);
		err = csv_open(d->env.csv_path, &d->csv);
		if (err) {
			log_err("cannot create %s: %s", d->env.csv_path, strerror(-err));
			return err;
		}
		/* bounded before its first row, the header of every file */
		csv_set_rotation(d->csv, (uint64_t)d->env.csv_max_mb << 20, (int)d->env.csv_keep,
				 rotate_by_keeper, &d->keeper);
		rowcsv_header(d->csv);
	}
	/* rows (the --csv file's, export's) of many hosts can be read
	 * together (cachescope cluster) */
	if (gethostname(d->host, sizeof(d->host) - 1))
		d->host[0] = '\0';
	d->cg = cgcache_new("/proc", COMM_REFRESH_NS);
	if (!d->cg) {
		log_err("cannot allocate the cgroup table: out of memory");
		return -ENOMEM;
	}
	err = setup_export(d);
	if (err) {
		log_err("cannot keep rows for export: out of memory");
		return err;
	}
	/* the default socket's directory: made by systemd (RuntimeDirectory=)
	 * or here; any other --socket names a directory that must exist */
	if (d->env.socket_path && !strcmp(d->env.socket_path, ENV_DEFAULT_SOCKET) &&
	    mkdir(ENV_DEFAULT_RUNDIR, 0755) && errno != EEXIST) {
		err = -errno;
		log_err("cannot create %s: %s", ENV_DEFAULT_RUNDIR, strerror(errno));
		return err;
	}
	/* before anything is loaded or started: the socket must be free */
	if (d->env.socket_path && (err = control_check(d->env.socket_path))) {
		socket_error(d->env.socket_path, err);
		return err;
	}
	return 0;
}

/* The programs loaded and attached, and the stages they feed. */
static int load_and_attach(struct daemon *d)
{
	uint64_t window_ns = d->env.window_ms * 1000000ull;
	int err = loader_start(&d->ld, &d->env, on_sample, d);

	if (err)
		return err;
	/* --nice: ahead of the busy processes it watches, so that it drains
	 * the rings while they run (a share --budget bounds); once tracing is
	 * sure (not root: that one line alone), before the sources and their
	 * threads, which inherit it (spawn.c gives the workload 0) */
	if (setpriority(PRIO_PROCESS, 0, (int)d->env.nice))
		log_warn("cannot set --nice %ld: %s; running at %d", d->env.nice, strerror(errno),
			 getpriority(PRIO_PROCESS, 0));
	if (d->env.leak_stacks) {
		d->stacks = stacks_new(read_maps, d);
		if (!d->stacks) {
			log_err("cannot allocate the stack table: out of memory");
			return -ENOMEM;
		}
		loader_on_stacks(&d->ld, on_stack);
	}
	d->start_ns = clock_ns(CLOCK_MONOTONIC);
	/* on duty.h's attached clock, 0 at duty_init */
	sampler_init(&d->smp, d->env.sample_shift, CS_SAMPLE_SHIFT_MAX, d->env.sample_budget, 0);
	/* a fixed --sample leaves the budget only the programs to shed */
	budget_init(&d->budget, d->env.budget_pct,
		    d->smp.fixed ? BUDGET_MIN_RECORDS : (uint64_t)d->env.sample_budget);
	set_shifts(d);
	d->real_off_ns = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC);
	d->t0 = d->start_ns - d->start_ns % window_ns;
	duty_init(&d->duty, d->t0, window_ns, d->start_ns ^ (uint64_t)getpid() << 32);
	d->duty.frees = d->env.sample_time_frees;
	/* the budget samples in time where --sample-time auto lets it, and
	 * the program is a BTF tracepoint's (budget.h) */
	if (!d->env.sample_time_auto || !loader_can_detach(&d->ld, LOADER_TP_CACHE_ALLOC))
		d->budget.top = BUDGET_SHED_KMALLOC;
	else if (!loader_can_detach(&d->ld, LOADER_TP_CACHE_FREE) ||
		 !loader_can_detach(&d->ld, LOADER_TP_KFREE))
		d->budget.top = BUDGET_SHED_ALLOC_EIGHTH;
	if (d->duty.frees && !d->env.sample_time_shift &&
	    (d->budget.top < BUDGET_SHED_ALLOC_HALF || d->env.budget_pct <= 0))
		log_warn("--sample-time-frees has no effect: nothing samples allocations in time (no --sample-time N, and --budget's ladder may not)");
	anomalies_init(&d->anom, window_ns, on_anomaly, d, ANOMALY_EVENTS_PER_S,
		       ANOMALY_EVENTS_BURST);
	changes_init(&d->chg);
	d->wt = wtable_new(d->t0, window_ns, on_row, resolve_key, d);
	if (!d->wt) {
		log_err("cannot allocate window table: out of memory");
		return -ENOMEM;
	}
	set_window_rules(d);
	wtable_set_limits(d->wt, &(struct wtable_limits){
		.max_keys = (size_t)d->env.max_keys,
		.alive = process_alive,
		.key_gone = key_gone,
		.believed = started_here,
		.owner = process_owner,
	});
	setup_kstate(d);
	return 0;
}

/* The loop's first sources (rings, signals, timer), the CUPTI library
 * watched, kvref started. */
static int start_sources(struct daemon *d)
{
	int err = loop_init(&d->loop);

	if (!err)
		err = setup_timer(d, d->t0);
	if (!err) {
		d->dfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		err = d->dfd < 0 ? -errno : loop_add(&d->loop, d->dfd, EPOLLIN, on_duty, d);
	}
	if (!err && d->env.sample_time_shift) {
		if (!loader_can_detach(&d->ld, LOADER_TP_CACHE_ALLOC)) {
			log_err("--sample-time needs the BTF tracepoint kmem_cache_alloc (a classic tracepoint's program cannot be attached again once the daemon's privileges are dropped)");
			return -EOPNOTSUPP;
		}
		set_duty(d, clock_ns(CLOCK_MONOTONIC));
	}
	if (!err)
		err = loop_add(&d->loop, loader_epoll_fd(&d->ld), EPOLLIN, on_rings, d);
	if (!err)
		err = loop_add(&d->loop, d->sfd, EPOLLIN, on_signal, d);
	if (!err)
		err = loop_add(&d->loop, d->tfd, EPOLLIN, on_timer, d);
	if (err) {
		log_err("cannot set up the event loop: %s", strerror(-err));
		return err;
	}
	err = watch_gpu(d);
	if (!err && d->env.workload)
		err = start_workload(d);
	return err;
}

/* Unprivileged by now: the metrics (a port below 1024 is refused,
 * EACCES), then the control socket last: a client that finds the socket
 * finds every probe attached, the privileges dropped and the metrics
 * served. */
static int serve(struct daemon *d)
{
	struct control_limits lim;
	int err;

	if (d->env.metrics_addr && (err = start_metrics(d)))
		return err;
	if (!d->env.socket_path)
		return 0;
	d->lfd = d->keeper.pid ? keeper_listen(&d->keeper) : control_listen(d->env.socket_path);
	if (d->lfd < 0) {
		socket_error(d->env.socket_path, d->lfd);
		return d->lfd;
	}
	control_limits_default(&lim);
	/* an export is answered whole */
	if (lim.max_reply < ((size_t)d->env.export_mb << 20) + (1u << 20))
		lim.max_reply = ((size_t)d->env.export_mb << 20) + (1u << 20);
	d->ctl = control_new(&d->loop, d->lfd, &lim, on_command, d);
	if (!d->ctl) {
		err = -errno;
		log_err("cannot set up the event loop: %s", strerror(-err));
		return err;
	}
	return 0;
}

static int commit_by_keeper(void *ctx)
{
	return keeper_commit_csv(ctx);
}

/* The --csv file committed (rename), or why not. */
static int commit_csv(struct daemon *d)
{
	int err = d->keeper.pid ? csv_commit_by(d->csv, commit_by_keeper, &d->keeper) :
				  csv_commit(d->csv);

	csv_get_stats(d->csv, &d->csv_st);
	d->csv_done = true;
	if (err) {
		log_err("cannot rename %s to %s: %s; its rows are kept there",
			csv_tmp_path(d->csv), d->env.csv_path, strerror(-err));
	} else if (d->csv_st.err) {
		log_err("%s holds %" PRIu64 " rows; %" PRIu64 " were lost after a write error: %s",
			d->env.csv_path, d->csv_st.rows, d->csv_st.lost, strerror(-d->csv_st.err));
		err = d->csv_st.err;
	} else if (d->csv_st.lost) {
		log_err("%s lacks %" PRIu64 " rows: no memory to build them", d->env.csv_path,
			d->csv_st.lost);
		err = -ENOMEM;
	}
	csv_free(d->csv);
	d->csv = NULL;
	return err;
}

/* After the loop: the CSV, the last clustering, the tables, kvref's score
 * and the counters.  Returns err, or the first failure of these. */
static int report(struct daemon *d, int err)
{
	char why[64];
	int cerr;

	if (d->csv && (cerr = commit_csv(d)))
		err = cerr;
	/* every start in the log has its end */
	anomalies_end_all(&d->anom, clock_ns(CLOCK_MONOTONIC));
	recluster(d, clock_ns(CLOCK_MONOTONIC));
	print_tables(d);
	report_clusters(&d->an, LABEL_NONE, REPORT_TEXT, stdout);
	if (d->driving) {
		wl_stop(&d->wl);
		wl_print_score(&d->wl, stdout);
		if (wl_failed(&d->wl, why, sizeof(why))) {
			log_err("the workload (kvref) failed: %s", why);
			err = -ECHILD;
		}
	}
	print_summary(d);
	return err;
}

static void release(struct daemon *d)
{
	if (d->keeper.pid && d->csv) {
		keeper_abort_csv(&d->keeper);
		csv_free(d->csv);
	} else {
		csv_abort(d->csv);
	}
	httpd_stop(d->http);
	webconfig_free(d->wc);
	control_free(d->ctl);
	if (d->keeper.pid && d->lfd >= 0) {
		close(d->lfd);
		keeper_unlink_socket(&d->keeper);
	} else {
		control_close(d->lfd, d->env.socket_path);
	}
	keeper_stop(&d->keeper);
	loop_release(&d->loop);
	if (d->tfd >= 0)
		close(d->tfd);
	if (d->dfd >= 0)
		close(d->dfd);
	if (d->sfd >= 0)
		close(d->sfd);
	wtable_free(d->wt);
	cgcache_free(d->cg);
	kstate_free(d->ks);
	loader_stop(&d->ld);
	stacks_free(d->stacks);
	ksyms_free(d->syms);
	report_snap_release(&d->snap);
	csv_free(d->mem_csv);
	rows_release(&d->rows);
	analysis_release(&d->an);
	anomalies_release(&d->anom);
	changes_release(&d->chg);
	psi_track_release(&d->psi);
	metrics_totals_release(&d->totals);
	if (d->driving)
		wl_stop(&d->wl);
}

int main(int argc, char **argv)
{
	struct daemon d = { .loop = { .epfd = -1 }, .sfd = -1, .tfd = -1, .lfd = -1, .dfd = -1,
			    .drop_window = UINT64_MAX };
	int err;

	err = parse(&d, argc, argv);
	if (err)
		return err > 0 ? 0 : 2;
	err = setup(&d);
	if (!err)
		err = load_and_attach(&d);
	if (!err)
		err = start_sources(&d);
	if (!err)
		err = drop_privileges(&d);
	if (!err)
		err = serve(&d);
	if (!err) {
		log_info("tracing %d CPUs, %ld ms windows%s", d.ld.nr_cpus, d.env.window_ms,
			 d.env.npids ? ", filtered by pid" : "");
		err = run_loop(&d);
		finish(&d);
		err = report(&d, err);
	}
	release(&d);
	return err ? 1 : 0;
}
