// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* How each output shows the counters' snapshot: see counters.h. */
#include <stdio.h>
#include <string.h>
#include "counters.h"
#include "loader.h"
#include "metrics.h"
#include "report.h"
#include "status.h"
#include "summary.h"

static uint64_t unseen_frees(const struct counters *c)
{
	return c->k.live_replaced + c->k.track_reclaimed;
}

void counters_status(const struct counters *c, struct report_fields *f)
{
	char name[48];
	unsigned int r;

	report_dbl(f, "uptime_s", c->uptime_s, 1);
	report_u64(f, "produced", c->k.produced);
	report_u64(f, "consumed", c->consumed);
	report_u64(f, "dropped", c->k.dropped);
	report_u64(f, "windows", c->w.windows);
	report_u64(f, "rows", c->w.rows);
	report_u64(f, "keys", c->w.keys);
	report_u64(f, "late", c->w.late);
	report_u64(f, "free_unmatched", c->k.free_unmatched);
	report_u64(f, "unseen_frees", unseen_frees(c));
	report_u64(f, "irq_frees", c->k.irq_frees);
	report_u64(f, "ring_backoff", c->k.ring_backoff);
	report_u64(f, "recursion_misses", c->recursion_misses);
	report_u64(f, "sample_shift", c->sample_shift);
	report_u64(f, "sample_shift_peak", c->sample_shift_peak);
	report_u64(f, "sample_slots", c->sample_slots);
	report_u64(f, "sample_changes", c->sample_changes);
	/* --budget: the limit (0: off), the last second's cost and its parts,
	 * where the BPF part came from, the slab records budget and what is
	 * shed now, and how often the controller acted */
	report_dbl(f, "budget_pct", c->budget.pct, 1);
	report_dbl(f, "budget_cost_pct", c->budget.cost_pct, 2);
	report_dbl(f, "budget_bpf_pct", c->budget.bpf_pct, 2);
	report_dbl(f, "budget_daemon_pct", c->budget.daemon_pct, 2);
	report_dbl(f, "budget_peak_pct", c->budget.peak_pct, 2);
	report_u64(f, "budget_bpf_kernel", c->budget.kernel);	/* 0: estimated */
	report_u64(f, "budget_records_per_s", c->budget.records);
	/* 0 none, 1 the page-cache programs, 2 those and kmalloc's
	 * allocations, 3 to 5 those and the alloc programs attached
	 * 1/2, 1/4, 1/8 of the time, 6 the free programs with them */
	report_u64(f, "budget_shed_level", c->budget.level);
	/* sampling in time: the share of the time the alloc programs are
	 * meant to be attached, the share it was while cycling, its slices
	 * and the attaches the kernel refused */
	report_dbl(f, "budget_alloc_share", duty_share(&c->duty), 3);
	report_dbl(f, "budget_alloc_share_measured", duty_share_measured(&c->duty), 3);
	report_u64(f, "budget_alloc_slices", c->duty.cycles);
	report_u64(f, "budget_alloc_attach_failures", c->duty.failures);
	report_u64(f, "budget_alloc_slices_missed", c->duty.missed);
	/* --sample-time-frees: the frees' programs cycle with them */
	report_u64(f, "budget_frees_in_time", c->duty.frees);
	report_u64(f, "budget_lowered", c->budget.lowered);
	report_u64(f, "budget_raised", c->budget.raised);
	report_u64(f, "budget_sheds", c->budget.sheds);
	report_u64(f, "budget_restores", c->budget.restores);
	report_u64(f, "budget_over_s", c->budget.over_s);
	report_u64(f, "page_evictions", c->k.evictions);
	report_u64(f, "keys_dropped", c->w.keys_dropped);
	report_u64(f, "keys_exited", c->w.keys_exited);
	report_u64(f, "keys_idle_merged", c->w.keys_idle_merged);
	report_u64(f, "keys_evicted", c->w.keys_evicted);
	report_u64(f, "others_events", c->w.others_events);
	report_u64(f, "share_events", c->w.share_events);
	report_u64(f, "history_vectors", c->history_vectors);
	report_dbl(f, "history_s", c->history_s, 1);
	report_u64(f, "history_trimmed", c->history_trimmed);
	report_u64(f, "stacks_taken", c->k.stack_sampled);
	report_u64(f, "stacks_limited", c->k.stack_limited);
	report_u64(f, "stacks_ring_full", c->k.stack_dropped);
	report_u64(f, "stacks_kept", c->stacks.kept);
	report_u64(f, "stacks_turned_away", c->stacks.turned_away);
	report_u64(f, "stacks_unwound", c->stacks.unwound);
	report_u64(f, "stacks_named_again", c->stacks.named_again);
	report_u64(f, "stacks_unreadable", c->stacks.unreadable);
	report_dbl(f, "stacks_unwind_ms", c->stacks.unwind_ns / 1e6, 1);
	report_u64(f, "csv_rows", c->csv_rows);
	report_u64(f, "csv_rotations", c->csv_rotations);
	report_u64(f, "csv_files_dropped", c->csv_files_dropped);
	report_u64(f, "csv_rows_dropped", c->csv_rows_dropped);
	report_u64(f, "export_rows", c->rows.rows);
	report_u64(f, "export_bytes", c->rows.bytes);
	report_u64(f, "export_max_bytes", c->rows.max_bytes);
	report_u64(f, "export_rows_evicted", c->rows.evicted);
	report_u64(f, "export_rows_lost", c->rows.lost);
	report_dbl(f, "export_oldest_ts", c->rows.oldest_ts, 3);
	report_u64(f, "cluster_runs", c->cluster_runs);
	report_dbl(f, "cluster_ms", c->cluster_ms, 1);
	report_u64(f, "rules_reloads", c->reloads);
	report_u64(f, "anomalies_now", c->anomalies_now);
	report_u64(f, "anomalies_started", c->anomalies_started);
	report_u64(f, "anomalies_ended", c->anomalies_ended);
	report_u64(f, "anomaly_events_logged", c->anomaly_events_said);
	report_u64(f, "anomaly_events_limited", c->anomaly_events_limited);
	report_u64(f, "anomalies_not_held", c->anomalies_not_held);
	report_u64(f, "behaviour_changes", c->changes);
	report_u64(f, "gpu_records", c->gpu_records);
	report_u64(f, "gpu_bins", c->gpu_bins);
	report_u64(f, "cupti_dropped", c->cupti_dropped);
	report_u64(f, "gpu_release_unmatched", c->w.gpu_release_unmatched);
	report_u64(f, "gpu_unjoined", c->w.gpu_unjoined);
	/* records of user-space probes rejected (untrusted, out of bounds), by reason */
	report_u64(f, "usdt_rejected", c->w.rejected);
	for (r = 0; r < REJ_N; r++) {
		snprintf(name, sizeof(name), "usdt_rejected_%s", usdt_reject_name(r));
		report_u64(f, name, c->w.rejected_by[r]);
	}
	report_u64(f, "usdt_rejected_last_tgid", c->w.rejected_tgid);
	report_u64(f, "kv_blocks", c->w.kv_blocks);
	report_u64(f, "kv_queue_full", c->w.kv_queue_full);
	report_u64(f, "control_served", c->ctl.served);
	report_u64(f, "control_timeouts", c->ctl.timeouts);
	report_u64(f, "control_denied", c->ctl.denied);
	report_u64(f, "control_busy", c->ctl.busy);
	report_u64(f, "control_too_long", c->ctl.too_long);
}

void counters_metrics(const struct counters *c, struct metrics *m)
{
	unsigned int i;

	m->produced = c->k.produced;
	m->consumed = c->consumed;
	m->dropped = c->k.dropped;
	m->bad_records = c->bad_records;
	m->lost_nomem = c->lost_nomem;
	m->late = c->w.late;
	m->unseen_frees = unseen_frees(c);
	m->ring_backoff = c->k.ring_backoff;
	m->page_refaults = c->page_refaults;
	m->kv_swap_ins = c->kv_swap_ins;
	m->keys = c->w.keys;
	metrics_named_set(&m->keys_merged, "exited", c->w.keys_exited);
	metrics_named_set(&m->keys_merged, "idle", c->w.keys_idle_merged);
	metrics_named_set(&m->keys_merged, "evicted", c->w.keys_evicted);
	m->keys_dropped = c->w.keys_dropped;
	m->others_events = c->w.others_events;
	m->share_events = c->w.share_events;
	m->history_vectors = c->history_vectors;
	m->history_trimmed = c->history_trimmed;
	m->rules_reloads = c->reloads;
	m->anomalies_started = c->anomalies_started;
	m->anomaly_events_limited = c->anomaly_events_limited;
	m->changes = c->changes;
	m->kv_queue_full = c->w.kv_queue_full;
	for (i = 0; i < LABEL_COUNT; i++) {
		metrics_named_set(&m->vectors, label_name(i), c->vectors[i]);
		if (i != LABEL_NORMAL)	/* anomalies only */
			metrics_named_set(&m->anomalous, label_name(i), c->anomalous[i]);
	}
	m->clustering = c->clustering;
	m->gpu_records = c->gpu_records;
	m->gpu_bins = c->gpu_bins;
	m->cupti_dropped = c->cupti_dropped;
	m->gpu_late = c->w.gpu_late;
	m->gpu_release_unmatched = c->w.gpu_release_unmatched;
	m->csv_rows = c->csv_rows;
	m->csv_rotations = c->csv_rotations;
	m->csv_rows_dropped = c->csv_rows_dropped;
	m->sample_shift = c->sample_shift;
	m->sample_shift_peak = c->sample_shift_peak;
	m->sample_slots = c->sample_slots;
	m->sample_changes = c->sample_changes;
	m->budget = c->budget;
	m->duty = c->duty;
	for (i = 0; i < REJ_N; i++)
		metrics_named_set(&m->usdt_rejected, usdt_reject_name(i), c->w.rejected_by[i]);
	metrics_named_set(&m->control, "served", c->ctl.served);
	metrics_named_set(&m->control, "timeout", c->ctl.timeouts);
	metrics_named_set(&m->control, "denied", c->ctl.denied);
	metrics_named_set(&m->control, "busy", c->ctl.busy);
	metrics_named_set(&m->control, "too_long", c->ctl.too_long);
	m->scrapes = c->http.served;
	metrics_named_set(&m->leak_stacks, "taken", c->k.stack_sampled);
	metrics_named_set(&m->leak_stacks, "limited", c->k.stack_limited);
	metrics_named_set(&m->leak_stacks, "ring_full", c->k.stack_dropped);
	metrics_named_set(&m->leak_stacks, "turned_away", c->stacks.turned_away);
	metrics_named_set(&m->leak_stacks, "unwound", c->stacks.unwound);
	metrics_named_set(&m->leak_stacks, "unreadable", c->stacks.unreadable);
	m->leak_stacks_kept = c->stacks.kept;
	metrics_named_set(&m->http_refused, "client_limit", c->http.client_limit);
	metrics_named_set(&m->http_refused, "deadline", c->http.deadline);
	metrics_named_set(&m->http_refused, "host", c->http.bad_host);
	metrics_named_set(&m->http_refused, "auth", c->http.auth_failed);
	metrics_named_set(&m->http_refused, "auth_rate", c->http.auth_rate);
}

void counters_line(const struct counters *c, struct status *st)
{
	st->uptime_s = c->uptime_s;
	st->events = c->k.produced;
	st->dropped = c->k.dropped;
	st->keys = c->w.keys;
	memcpy(st->anomalous, c->anomalous, sizeof(st->anomalous));
}

void counters_summary(const struct counters *c, struct summary *s)
{
	s->elapsed_s = c->uptime_s;
	s->k = c->k;
	s->consumed = c->consumed;
	s->w = c->w;
	s->recursion_misses = c->recursion_misses;
	s->bad_records = c->bad_records;
	s->lost_nomem = c->lost_nomem;
	s->history_vectors = c->history_vectors;
	s->history_trimmed = c->history_trimmed;
	s->gpu_records = c->gpu_records;
	s->gpu_bins = c->gpu_bins;
	s->cupti_dropped = c->cupti_dropped;
	s->stacks_st = c->stacks;
}
