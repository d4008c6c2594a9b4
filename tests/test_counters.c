// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the counters' snapshot and its outputs (daemon/counters.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "../daemon/counters.h"
#include "../daemon/metrics.h"
#include "../daemon/report.h"
#include "../daemon/status.h"
#include "../daemon/summary.h"

/* every counter a different value: a field shown under another's name
 * shows up as a wrong number */
static void fill(struct counters *c)
{
	uint64_t v = 1000;
	unsigned int i;

	memset(c, 0, sizeof(*c));
	c->uptime_s = 12.5;
	c->k.produced = v++;
	c->k.dropped = v++;
	c->k.free_unmatched = v++;
	c->k.live_replaced = v++;
	c->k.track_reclaimed = v++;
	c->k.evictions = v++;
	c->consumed = v++;
	c->w.windows = v++;
	c->w.rows = v++;
	c->w.keys = v++;
	c->w.late = v++;
	c->w.rejected = v++;
	for (i = 0; i < REJ_N; i++)
		c->w.rejected_by[i] = v++;
	c->bad_records = v++;
	c->lost_nomem = v++;
	c->page_refaults = v++;
	c->kv_swap_ins = v++;
	for (i = 0; i < LABEL_COUNT; i++) {
		c->vectors[i] = v++;
		c->anomalous[i] = v++;
	}
	c->sample_shift = 3;
	c->sample_shift_peak = 5;
	c->sample_slots = 77;
	c->sample_changes = v++;
	c->history_vectors = v++;
	c->history_trimmed = v++;
	c->reloads = v++;
	c->w.keys_exited = v++;
	c->w.keys_evicted = v++;
	c->w.keys_idle_merged = v++;
	c->anomalies_started = v++;
	c->anomaly_events_limited = v++;
	c->cluster_runs = v++;
	c->cluster_ms = 2.5;
	c->gpu_records = v++;
	c->cupti_dropped = v++;
	c->ctl.served = v++;
	c->ctl.timeouts = v++;
	c->ctl.denied = v++;
	c->ctl.busy = v++;
	c->ctl.too_long = v++;
	c->http.served = v++;
	c->http.client_limit = v++;
	c->http.deadline = v++;
	c->http.bad_host = v++;
}

static uint64_t field(const struct report_fields *f, const char *name)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (!strcmp(f->v[i].name, name))
			return f->v[i].u;
	fail_msg("no status field %s", name);
	return 0;
}

static uint64_t named(const struct metrics_named *n, const char *name)
{
	unsigned int i;

	for (i = 0; i < n->n; i++)
		if (!strcmp(n->name[i], name))
			return n->v[i];
	fail_msg("no metric named %s", name);
	return 0;
}

static void counters_status_and_metrics__one_snapshot__same_values(void **state)
{
	struct report_fields f = { .n = 0 };
	struct metrics m = { 0 };
	struct counters c;
	char name[64];
	unsigned int i;

	(void)state;
	fill(&c);
	counters_status(&c, &f);
	counters_metrics(&c, &m);
	assert_int_equal(field(&f, "produced"), m.produced);
	assert_int_equal(field(&f, "consumed"), m.consumed);
	assert_int_equal(field(&f, "dropped"), m.dropped);
	assert_int_equal(field(&f, "keys"), m.keys);
	assert_int_equal(field(&f, "unseen_frees"), m.unseen_frees);
	assert_int_equal(m.unseen_frees, c.k.live_replaced + c.k.track_reclaimed);
	assert_int_equal(field(&f, "sample_shift"), m.sample_shift);
	assert_int_equal(field(&f, "sample_shift_peak"), m.sample_shift_peak);
	assert_int_equal(field(&f, "sample_slots"), m.sample_slots);
	assert_int_equal(field(&f, "sample_changes"), m.sample_changes);
	assert_int_equal(field(&f, "cluster_runs"), c.cluster_runs);
	assert_int_equal(field(&f, "history_trimmed"), m.history_trimmed);
	assert_int_equal(field(&f, "rules_reloads"), m.rules_reloads);
	assert_int_equal(field(&f, "late"), m.late);
	assert_int_equal(field(&f, "anomalies_started"), m.anomalies_started);
	assert_int_equal(field(&f, "anomaly_events_limited"), m.anomaly_events_limited);
	assert_int_equal(field(&f, "keys_exited"), named(&m.keys_merged, "exited"));
	assert_int_equal(field(&f, "keys_evicted"), named(&m.keys_merged, "evicted"));
	assert_int_equal(field(&f, "gpu_records"), m.gpu_records);
	assert_int_equal(field(&f, "cupti_dropped"), m.cupti_dropped);
	assert_int_equal(field(&f, "control_served"), named(&m.control, "served"));
	assert_int_equal(field(&f, "control_timeouts"), named(&m.control, "timeout"));
	assert_int_equal(field(&f, "control_denied"), named(&m.control, "denied"));
	assert_int_equal(field(&f, "control_busy"), named(&m.control, "busy"));
	assert_int_equal(field(&f, "control_too_long"), named(&m.control, "too_long"));
	for (i = 0; i < REJ_N; i++) {
		snprintf(name, sizeof(name), "usdt_rejected_%s", usdt_reject_name(i));
		assert_int_equal(field(&f, name), named(&m.usdt_rejected, usdt_reject_name(i)));
		assert_int_equal(c.w.rejected_by[i], named(&m.usdt_rejected, usdt_reject_name(i)));
	}
	for (i = 0; i < LABEL_COUNT; i++) {
		assert_int_equal(named(&m.vectors, label_name(i)), c.vectors[i]);
		if (i != LABEL_NORMAL)
			assert_int_equal(named(&m.anomalous, label_name(i)), c.anomalous[i]);
	}
	assert_int_equal(m.scrapes, c.http.served);
	assert_int_equal(named(&m.http_refused, "client_limit"), c.http.client_limit);
	assert_int_equal(named(&m.http_refused, "deadline"), c.http.deadline);
	assert_int_equal(named(&m.http_refused, "host"), c.http.bad_host);
	assert_int_equal(m.bad_records, c.bad_records);
	assert_int_equal(m.lost_nomem, c.lost_nomem);
	assert_int_equal(m.page_refaults, c.page_refaults);
	assert_int_equal(m.kv_swap_ins, c.kv_swap_ins);
}

static void counters_line_and_summary__one_snapshot__same_values(void **state)
{
	struct summary s = { 0 };
	struct status st = { 0 };
	struct counters c;
	unsigned int i;

	(void)state;
	fill(&c);
	counters_line(&c, &st);
	counters_summary(&c, &s);
	assert_int_equal(st.events, c.k.produced);
	assert_int_equal(st.dropped, c.k.dropped);
	assert_int_equal(st.keys, c.w.keys);
	for (i = 0; i < LABEL_COUNT; i++)
		assert_int_equal(st.anomalous[i], c.anomalous[i]);
	assert_int_equal(s.k.produced, st.events);
	assert_int_equal(s.consumed, c.consumed);
	assert_int_equal(s.w.keys, st.keys);
	assert_int_equal(s.w.rejected, c.w.rejected);
	assert_int_equal(s.bad_records, c.bad_records);
	assert_int_equal(s.lost_nomem, c.lost_nomem);
	assert_int_equal(s.history_vectors, c.history_vectors);
	assert_int_equal(s.gpu_records, c.gpu_records);
	assert_int_equal(s.cupti_dropped, c.cupti_dropped);
	assert_true(s.elapsed_s == st.uptime_s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counters_status_and_metrics__one_snapshot__same_values),
		cmocka_unit_test(counters_line_and_summary__one_snapshot__same_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
