// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tables at exit (summary.h).  The key tables sort a copy of the keys
 * in the window table's order, so that keys that tie come out as the
 * sort leaves them, run after run of the same table.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"
#include "log.h"
#include "report.h"
#include "strutil.h"
#include "summary.h"

/* Names other processes chose, for a terminal */
#define ESC(buf, s) str_escape(buf, sizeof(buf), s, 0)
struct esc_names {
	char name[STR_ESC_SIZE(64)];
	char file[STR_ESC_SIZE(CS_CACHE_NAME_LEN)];
	char comm[STR_ESC_SIZE(CS_COMM_LEN)];
};

int summary_add_key(struct acc *a, void *keys)
{
	struct summary_keys *k = keys;

	if (array_room(&k->v, &k->cap, k->n, sizeof(*k->v), 256))
		return 1;
	k->v[k->n++] = a;
	return 0;
}

void summary_keys_release(struct summary_keys *k)
{
	free(k->v);
	memset(k, 0, sizeof(*k));
}

/* ---- the busiest keys ---- */

static uint64_t acc_events(const struct acc *a)
{
	return a->total_allocs + a->total_frees + a->total_page_adds + a->total_page_dels;
}

static int events_cmp(const void *a, const void *b)
{
	uint64_t x = acc_events(*(const struct acc *const *)a);
	uint64_t y = acc_events(*(const struct acc *const *)b);

	return x < y ? 1 : x > y ? -1 : 0;
}

void summary_busiest(const struct summary_keys *k, long top, FILE *out)
{
	const struct acc **v;
	size_t i;

	if (top <= 0)
		return;
	v = malloc((k->n ? k->n : 1) * sizeof(*v));
	fprintf(out, "busiest keys:\n");
	fprintf(out, "%-6s %-28s %-16s %8s %-16s %10s %10s %9s %9s %9s %8s\n", "domain", "key",
		"file", "tgid", "comm", "allocs", "frees", "live", "pg_adds",
		"pg_dels", "refaults");
	if (!v)
		return;
	memcpy(v, k->v, k->n * sizeof(*v));
	qsort(v, k->n, sizeof(*v), events_cmp);
	for (i = 0; i < k->n && (long)i < top; i++) {
		const struct acc *a = v[i];
		struct esc_names e;
		char t[16];

		fprintf(out, "%-6s %-28s %-16.16s %8s %-16s %10" PRIu64 " %10" PRIu64
			" %9" PRId64 " %9" PRIu64 " %9" PRIu64 " %8" PRIu64 "\n",
			domain_name(a->key.domain), ESC(e.name, a->name), ESC(e.file, a->file),
			report_tgid_str(a->key.tgid, t, sizeof(t)),
			ESC(e.comm, a->comm), a->total_allocs, a->total_frees, a->live_objs,
			a->total_page_adds, a->total_page_dels, a->total_refaults);
	}
	free(v);
}

/* ---- the labelled keys ---- */

struct labelled {
	const struct acc *a;
	uint32_t c[LABEL_COUNT];
	uint32_t anomalies;
};

static int anomaly_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct labelled *)a)->anomalies;
	uint32_t y = ((const struct labelled *)b)->anomalies;

	return x < y ? 1 : x > y ? -1 : 0;
}

void summary_labelled(const struct summary_keys *k, const struct analysis *an, FILE *out)
{
	struct labelled *v = malloc((k->n ? k->n : 1) * sizeof(*v));
	size_t i;

	fprintf(out, "labelled keys (vectors per label):\n");
	fprintf(out, "%-6s %-28s %8s %-16s %7s %7s %7s %7s\n", "domain", "key", "tgid", "comm",
		label_short(LABEL_NORMAL), label_short(LABEL_THRASH),
		label_short(LABEL_FALSE_SHARING), label_short(LABEL_LEAK));
	if (!v)
		return;
	for (i = 0; i < k->n; i++) {
		const uint32_t *c = analysis_key_labels(an, &k->v[i]->key);

		v[i].a = k->v[i];
		if (c)
			memcpy(v[i].c, c, sizeof(v[i].c));
		else
			memset(v[i].c, 0, sizeof(v[i].c));
		v[i].anomalies = v[i].c[LABEL_THRASH] + v[i].c[LABEL_FALSE_SHARING] +
				 v[i].c[LABEL_LEAK];
	}
	qsort(v, k->n, sizeof(*v), anomaly_cmp);
	for (i = 0; i < k->n && v[i].anomalies; i++) {
		const struct acc *a = v[i].a;
		struct esc_names e;
		char t[16];

		fprintf(out, "%-6s %-28s %8s %-16s %7u %7u %7u %7u\n", domain_name(a->key.domain),
			ESC(e.name, a->name), report_tgid_str(a->key.tgid, t, sizeof(t)),
			ESC(e.comm, a->comm), v[i].c[LABEL_NORMAL], v[i].c[LABEL_THRASH],
			v[i].c[LABEL_FALSE_SHARING], v[i].c[LABEL_LEAK]);
	}
	if (!i)
		fprintf(out, "  (none: every vector was normal)\n");
	free(v);
}

/* ---- the counters ---- */

void summary_add_prog(const struct loader_prog_stats *ps, void *summary)
{
	struct summary *s = summary;

	if (s->nprogs < SUMMARY_PROGS)
		s->progs[s->nprogs++] = *ps;
	else
		s->progs_left_out++;
}

static void print_progs(const struct summary *s, FILE *out)
{
	const struct loader_run_times *rt = s->run_times;
	size_t i;
	int p;

	if (s->kernel_stats)
		fprintf(out, "bpf programs (kernel run-time accounting):\n");
	for (i = 0; i < s->nprogs; i++) {
		const struct loader_prog_stats *ps = &s->progs[i];

		if (!ps->run_cnt)
			continue;
		fprintf(out, "  %-24s %12" PRIu64 " runs %8.0f ns/run %6" PRIu64
			" recursion misses\n", ps->name, ps->run_cnt,
			(double)ps->run_time_ns / ps->run_cnt, ps->recursion_misses);
	}
	if (s->progs_left_out)
		fprintf(out, "  (%zu more programs not shown)\n", s->progs_left_out);
	if (!rt)
		return;
	fprintf(out, "bpf programs (their own timing, median and 90th percentile):\n");
	for (p = 0; p < CS_RUN_PROGS; p++)
		if (rt->prog[p].runs)
			fprintf(out, "  %-24s %12" PRIu64 " runs %8" PRIu64 " ns median %8" PRIu64
				" ns p90\n", rt->prog[p].name, rt->prog[p].runs,
				rt->prog[p].p50_ns, rt->prog[p].p90_ns);
}

static void warn_rejected(const struct wtable_stats *w)
{
	char by[256];
	size_t o = 0;
	unsigned int r;

	for (r = 0; r < REJ_N && o < sizeof(by); r++)
		if (w->rejected_by[r])
			o += snprintf(by + o, sizeof(by) - o, " %s=%" PRIu64,
				      usdt_reject_name(r), w->rejected_by[r]);
	log_warn("%" PRIu64 " user-space probe records rejected, by reason (%s ),"
		 " the last from pid %u", w->rejected, by, w->rejected_tgid);
}

void summary_print(const struct summary *s, FILE *out)
{
	const struct wtable_stats *w = &s->w;
	const struct cs_stats *k = &s->k;

	print_progs(s, out);
	fprintf(out, "cachescoped: %.2f s, %" PRIu64 " windows, %" PRIu64 " rows, %" PRIu64
		" keys\n", s->elapsed_s, w->windows, w->rows, w->keys);
	fprintf(out, "events: produced=%" PRIu64 " consumed=%" PRIu64 " dropped=%" PRIu64
		" (%s) late=%" PRIu64 " bad=%" PRIu64 " lost_nomem=%" PRIu64 "\n",
		(uint64_t)k->produced, s->consumed, (uint64_t)k->dropped,
		k->produced == s->consumed + k->dropped ? "produced = consumed + dropped" :
							  "MISMATCH",
		w->late, s->bad_records, s->lost_nomem);
	fprintf(out, "kernel: recursion_misses=%" PRIu64 " free_unmatched=%" PRIu64
		" unseen_frees=%" PRIu64 " live_map_evictions=%" PRIu64
		" evicted_map_evictions=%" PRIu64 " page_evictions=%" PRIu64
		" page_truncations=%" PRIu64 " irq_frees=%" PRIu64 " ring_backoff=%" PRIu64 "\n",
		s->recursion_misses, (uint64_t)k->free_unmatched,
		(uint64_t)(k->live_replaced + k->track_reclaimed), s->live_evictions,
		s->evicted_evictions, (uint64_t)k->evictions, (uint64_t)k->truncations,
		(uint64_t)k->irq_frees, (uint64_t)k->ring_backoff);
	if (s->stacks)
		fprintf(out, "stacks: received=%" PRIu64 " taken=%" PRIu64 " limited=%" PRIu64
			" ring_full=%" PRIu64 " unwound=%" PRIu64 " unreadable=%" PRIu64
			" turned_away=%" PRIu64 " freed_first=%" PRIu64 " kept=%" PRIu64
			" distinct=%" PRIu64
			" unwind_ms=%.1f\n",
			s->stacks_st.received, (uint64_t)k->stack_sampled,
			(uint64_t)k->stack_limited, (uint64_t)k->stack_dropped,
			s->stacks_st.unwound, s->stacks_st.unreadable, s->stacks_st.turned_away,
			s->stacks_st.freed_first, s->stacks_st.kept, s->stacks_st.unique, s->stacks_st.unwind_ns / 1e6);
	fprintf(out, "sampling: %s, 1 in %u slab objects tracked in the busiest caches at the end"
		" (%u of %u slots of (cache, process) thinned), 1 in %u at most, %" PRIu64
		" changes (records budget %ld/s of --sample-budget %ld)\n",
		s->smp->fixed ? "fixed" : "auto", 1u << s->smp->top_shift, s->smp->sampled,
		CS_SHIFT_SLOTS, 1u << s->smp->peak_shift, s->smp->changes,
		/* per second of the wall clock: the sampler's is per second
		 * attached (sample.h) */
		(long)(s->smp->budget >> (s->duty ? s->duty->shift : 0)), s->sample_budget);
	if (s->budget && s->budget->pct > 0)
		fprintf(out, "budget: %g%% of a CPU; cost in the last second %.1f%% (BPF %.1f%% %s, daemon %.1f%%), peak %.1f%%, over in %" PRIu64
			" of %" PRIu64 " seconds; slab records budget %" PRIu64 "/s (lowered %" PRIu64 ", raised %" PRIu64
			"); shed now %s (shed %" PRIu64 ", restored %" PRIu64 ")\n",
			s->budget->pct, s->budget->cost_pct, s->budget->bpf_pct,
			s->budget->kernel ? "kernel" : "estimated", s->budget->daemon_pct,
			s->budget->peak_pct, s->budget->over_s, s->budget->measured, s->budget->records,
			s->budget->lowered, s->budget->raised, budget_level_name(s->budget->level),
			s->budget->sheds, s->budget->restores);
	else if (s->budget)
		fprintf(out, "budget: off; cost in the last second %.1f%% (BPF %.1f%% %s, daemon %.1f%%), peak %.1f%%\n",
			s->budget->cost_pct, s->budget->bpf_pct,
			s->budget->kernel ? "kernel" : "estimated", s->budget->daemon_pct,
			s->budget->peak_pct);
	if (s->duty && (s->duty->cycles || s->duty->shift))
		fprintf(out, "sampling in time: the alloc programs%s attached 1/%u of the time at the end, %.1f%% while sampling in time (%" PRIu64
			" slices, %" PRIu64 " missed, %" PRIu64 " attaches refused); kmalloc's %s (held %" PRIu64 " times: cycling it cost more than it saved)\n",
			s->duty->frees ? " and the frees'" : "", 1u << s->duty->shift,
			100.0 * duty_share_measured(s->duty),
			s->duty->cycles, s->duty->missed, s->duty->failures,
			s->duty->shift && s->duty->kmalloc_held ? "held attached at the end" : "cycling with them",
			s->duty->kmalloc_holds);
	fprintf(out, "keys: now=%" PRIu64 " dropped=%" PRIu64 " exited=%" PRIu64
		" idle_merged=%" PRIu64 " evicted=%" PRIu64 " (budget %ld) others_events=%" PRIu64
		" share_events=%" PRIu64
		"; history: %zu vectors, %" PRIu64 " trimmed (max %ld)\n",
		w->keys, w->keys_dropped, w->keys_exited, w->keys_idle_merged, w->keys_evicted,
		s->max_keys, w->others_events, w->share_events, s->history_vectors, s->history_trimmed,
		s->history_max);
	if (s->gpu)
		fprintf(out, "gpu: records=%" PRIu64 " cupti_dropped=%" PRIu64 " bins=%" PRIu64
			" run_timed=%" PRIu64 " late=%" PRIu64 " split=%" PRIu64
			" release_unmatched=%" PRIu64 " unjoined=%" PRIu64 "\n",
			s->gpu_records, s->cupti_dropped, s->gpu_bins, w->gpu_run_timed,
			w->gpu_late, w->gpu_split, w->gpu_release_unmatched, w->gpu_unjoined);
	fprintf(out, "usdt: rejected=%" PRIu64 " kv_blocks=%" PRIu64 " kv_queue_full=%" PRIu64
		"\n", w->rejected, w->kv_blocks, w->kv_queue_full);
	if (w->rejected)
		warn_rejected(w);
	if (s->csv)
		fprintf(out, "csv: rows=%" PRIu64 " lost=%" PRIu64 " rotations=%" PRIu64
			" files_dropped=%" PRIu64 " rows_dropped=%" PRIu64 "%s%s\n", s->csv_st.rows,
			s->csv_st.lost, s->csv_st.rotations, s->csv_st.files_dropped,
			s->csv_st.rows_dropped, s->csv_st.err ? " write_error=" : "",
			s->csv_st.err ? strerror(-s->csv_st.err) : "");
	if (k->dropped)
		log_warn("%" PRIu64 " records dropped (rings full); try a larger --ring-kb",
			 (uint64_t)k->dropped);
	if (s->cupti_dropped)
		log_warn("CUPTI dropped %" PRIu64 " GPU activity records (its buffers were full); "
			 "try CACHESCOPE_CUPTI_BUFFER_MB=8 or a shorter CACHESCOPE_CUPTI_FLUSH_MS",
			 s->cupti_dropped);
}
