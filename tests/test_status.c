// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the --interval status line (daemon/status.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "../daemon/status.h"

static struct vec_entry vec(uint64_t window, uint64_t id, const char *name, const char *comm,
			    enum cs_label label)
{
	struct vec_entry e;

	memset(&e, 0, sizeof(e));
	e.window = window;
	e.key.id = id;
	e.key.tgid = 100;
	snprintf(e.name, sizeof(e.name), "%s", name);
	snprintf(e.comm, sizeof(e.comm), "%s", comm);
	e.label = label;
	return e;
}

static void status_format__counts_and_labels__one_line(void **state)
{
	struct status st = { .uptime_s = 12.04, .events = 120345, .events_per_s = 10234.4,
			     .dropped = 7, .keys = 45 };
	struct vec_entry v[2] = { vec(3, 1, "filp", "kvref", LABEL_LEAK),
				  vec(4, 2, "kvref-swap", "kvref", LABEL_THRASH) };
	const struct vec_entry *newest[2] = { &v[1], &v[0] };
	char buf[512];
	int n;

	(void)state;
	st.anomalous[LABEL_THRASH] = 1;
	st.anomalous[LABEL_LEAK] = 2;
	n = status_format(buf, sizeof(buf), &st, newest, 2);
	assert_int_equal(n, (int)strlen(buf));
	assert_string_equal(buf, "12.0 s: 120345 events (10234/s), 7 dropped, 45 keys, 3 anomalous "
				 "(thrash 1, leak 2); newest anomalies: thrash kvref-swap (kvref), leak filp (kvref)");
}

static void status_format__first_line_quiet__no_rate_no_labels(void **state)
{
	struct status st = { .uptime_s = 1, .events = 5, .events_per_s = -1, .keys = 1 };
	char buf[256];

	(void)state;
	assert_true(status_format(buf, sizeof(buf), &st, NULL, 0) > 0);
	assert_string_equal(buf, "1.0 s: 5 events, 0 dropped, 1 keys, 0 anomalous");
	assert_null(strchr(buf, '\n'));
}

static void status_format__names_with_controls__escaped(void **state)
{
	struct status st = { .events_per_s = -1 };
	struct vec_entry v = vec(1, 1, "a\033[2Jb", "x\ny", LABEL_FALSE_SHARING);
	const struct vec_entry *newest[1] = { &v };
	char buf[256];

	(void)state;
	assert_true(status_format(buf, sizeof(buf), &st, newest, 1) > 0);
	assert_non_null(strstr(buf, "false_sharing a\\x1b[2Jb (x\\x0ay)"));
	assert_null(strchr(buf, '\033'));
	assert_null(strchr(buf, '\n'));
}

static void status_format__small_buffer__cut_enospc(void **state)
{
	struct status st = { .uptime_s = 99, .events = 123456789, .events_per_s = -1 };
	char buf[16];

	(void)state;
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(status_format(buf, sizeof(buf), &st, NULL, 0), -ENOSPC);
	assert_int_equal(strlen(buf), sizeof(buf) - 1);
	assert_memory_equal(buf, "99.0 s: 1234567", 15);
}

static void status_newest__history__newest_anomalies_each_key_once(void **state)
{
	struct vec_entry v[] = {
		vec(1, 9, "old", "", LABEL_LEAK),	/* before from_window */
		vec(5, 1, "filp", "a", LABEL_LEAK),
		vec(6, 2, "dentry", "b", LABEL_NORMAL),
		vec(7, 3, "skb", "c", LABEL_FALSE_SHARING),
		vec(8, 1, "filp", "a", LABEL_LEAK),	/* the same key again */
		vec(9, 4, "page", "d", LABEL_THRASH),
	};
	const struct vec_entry *out[STATUS_NEWEST];
	size_t n;

	(void)state;
	n = status_newest(v, 6, 2, out, STATUS_NEWEST);
	assert_int_equal(n, 3);
	assert_ptr_equal(out[0], &v[5]);
	assert_ptr_equal(out[1], &v[4]);
	assert_ptr_equal(out[2], &v[3]);
	/* filp's older leak (v[1]) is not named again, old's is too old */
	assert_int_equal(status_newest(v, 6, 2, out, 5), 3);
	/* fewer wanted, or nothing recent */
	assert_int_equal(status_newest(v, 6, 2, out, 1), 1);
	assert_ptr_equal(out[0], &v[5]);
	assert_int_equal(status_newest(v, 6, 10, out, STATUS_NEWEST), 0);
	assert_int_equal(status_newest(v, 3, 0, out, STATUS_NEWEST), 2);
	assert_ptr_equal(out[0], &v[1]);
	assert_ptr_equal(out[1], &v[0]);
}

static void status_phase__kvref_name__escaped_line(void **state)
{
	char buf[128];

	(void)state;
	assert_int_equal(status_phase(buf, sizeof(buf), "leak", 12.34),
			 (int)strlen("workload: phase leak starts at 12.3 s"));
	assert_string_equal(buf, "workload: phase leak starts at 12.3 s");
	assert_true(status_phase(buf, sizeof(buf), "x\033y", 0) > 0);
	assert_string_equal(buf, "workload: phase x\\x1by starts at 0.0 s");
	assert_int_equal(status_phase(buf, 10, "leak", 1), -ENOSPC);
	assert_int_equal(strlen(buf), 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(status_format__counts_and_labels__one_line),
		cmocka_unit_test(status_format__first_line_quiet__no_rate_no_labels),
		cmocka_unit_test(status_format__names_with_controls__escaped),
		cmocka_unit_test(status_format__small_buffer__cut_enospc),
		cmocka_unit_test(status_newest__history__newest_anomalies_each_key_once),
		cmocka_unit_test(status_phase__kvref_name__escaped_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
