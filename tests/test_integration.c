// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Integration tests: run the real cachescoped (real BPF programs on real
 * tracepoints) beside helpers whose effect is known independently, then
 * read the CSV and the summary it wrote.  Needs root; without it every test
 * is skipped and says why.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers/harness.h"
#include "helpers/tmpdir.h"

/* ---- tests ---- */

static void slab__eventfd_churn__filp_and_dentry_counted(void **state)
{
	struct daemon d;
	struct table t;
	char out[256];
	long pid;

	need_root(state);
	pid = run_beside(&d, "slab", 3, NULL, &t, out, sizeof(out),
			 "%s/tests/helpers/fdchurn 2000 2", build);
	/* 2 rounds of 2000 eventfds: one struct file and one dentry each */
	assert_true(sum(&t, "filp", pid, "allocs") >= 4000);
	assert_true(sum(&t, "filp", pid, "frees") >= 4000);
	assert_true(sum(&t, "dentry", pid, "allocs") >= 4000);
	assert_true(sum(&t, "dentry", pid, "frees") >= 4000);
	/* every closed file was freed: nothing of the helper stays live */
	assert_true(sum(&t, "filp", pid, "allocs") - sum(&t, "filp", pid, "frees") < 10);
}

static void slab__eventfd_leak__live_filp_grows(void **state)
{
	struct daemon d;
	struct table t;
	char out[256];
	int64_t last_live = 0;
	long pid;
	int r;

	need_root(state);
	/* 3 rounds of 1000 fds kept open, then exit closes them all at once */
	pid = run_beside(&d, "leak", 3, NULL, &t, out, sizeof(out),
			 "%s/tests/helpers/fdchurn 1000 3 --leak", build);
	assert_true(sum(&t, "filp", pid, "allocs") >= 3000);
	for (r = 0; r < t.nrows; r++) {
		if (strcmp(cell(&t, r, "key"), "filp") || atol(cell(&t, r, "tgid")) != pid)
			continue;
		if (atoll(cell(&t, r, "live_objs")) > last_live)
			last_live = atoll(cell(&t, r, "live_objs"));
	}
	assert_true(last_live >= 3000);
}

static void page__reread_after_dontneed__refaults_on_file_key(void **state)
{
	char cmd[512], out[256], key[64], ckey[64];
	struct daemon d;
	struct table t;
	long pid;

	need_root(state);
	daemon_start(&d, "page", 3, NULL);
	/* the shell prints its pid, then becomes the helper */
	snprintf(cmd, sizeof(cmd), "sh -c 'echo pid $$; exec %s/tests/helpers/refault %s/refault.dat 2048 3'",
		 build, datadir);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	pid = helper_pid(out);
	assert_int_equal(sscanf(strstr(out, "key "), "key %63s", key), 1);
	/* control: a file read again without dropping its pages */
	snprintf(cmd, sizeof(cmd), "%s/tests/helpers/refault %s/control.dat 2048 3 --keep",
		 build, datadir);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	assert_int_equal(sscanf(strstr(out, "key "), "key %63s", ckey), 1);
	assert_int_equal(daemon_wait(&d), 0);
	check_summary(&d, true);
	table_read(&t, d.csv);
	/* 3 passes of 512 pages each came back after being dropped */
	assert_true(sum(&t, key, pid, "refaults") >= 3);
	assert_true(sum(&t, key, pid, "refault_pages") >= 3 * 512 * 9 / 10);
	assert_true(sum(&t, key, pid, "page_adds") >= 3 * 512);
	assert_int_equal(sum(&t, ckey, 0, "refaults"), 0);
	assert_true(sum(&t, ckey, 0, "page_adds") >= 512);
}

/* Two files one after the other under one inode number (ext4 hands a freed
 * number out again at once): rows of the second file carry its own name. */
static void page__inode_number_reused__rows_name_the_new_file(void **state)
{
	char cmd[900], out[256], a[32], b[32];
	struct daemon d;
	struct table t;
	int r, k, na = 0, nb = 0;

	need_root(state);
	daemon_start(&d, "reuse", 3, NULL);
	/* ext4 mostly, not always, reuses the number: try a few pairs */
	snprintf(cmd, sizeof(cmd),
		 "cd %s && for k in 1 2 3 4 5 6 7 8; do "
		 "dd if=/dev/zero of=cs-reuse-A$k bs=64k count=16 conv=fsync status=none; "
		 "i=$(stat -c %%i cs-reuse-A$k); rm cs-reuse-A$k; "
		 "dd if=/dev/zero of=cs-reuse-B$k bs=64k count=16 conv=fsync status=none; "
		 "j=$(stat -c %%i cs-reuse-B$k); rm cs-reuse-B$k; "
		 "if [ $i = $j ]; then echo reused $k; break; fi; done", datadir);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	assert_int_equal(daemon_wait(&d), 0);
	if (sscanf(out, "reused %d", &k) != 1) {
		fprintf(stderr, "this file system never gave the number out again: skipped\n");
		skip();
	}
	snprintf(a, sizeof(a), "cs-reuse-A%d", k);
	snprintf(b, sizeof(b), "cs-reuse-B%d", k);
	table_read(&t, d.csv);
	for (r = 0; r < t.nrows; r++) {
		na += !strcmp(cell(&t, r, "file"), a);
		nb += !strcmp(cell(&t, r, "file"), b);
	}
	assert_true(na > 0);
	assert_true(nb > 0);
}

static void filter__pid__only_that_process(void **state)
{
	const char *extra[3] = { "--pid", NULL, NULL };
	char pidbuf[16];
	struct daemon d;
	struct table t;
	int go[2], r, i;
	pid_t child;

	need_root(state);
	assert_int_equal(pipe(go), 0);
	child = fork();
	if (!child) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		for (i = 0; i < 500; i++)
			close(eventfd(0, 0));
		_exit(0);
	}
	close(go[0]);
	snprintf(pidbuf, sizeof(pidbuf), "%d", child);
	extra[1] = pidbuf;
	daemon_start(&d, "filter", 2, extra);
	/* unrelated activity that must not show */
	assert_int_equal(run_cmd("for i in 1 2 3; do cat /proc/self/status; done", NULL, 0), 0);
	assert_int_equal(write(go[1], "x", 1), 1);
	close(go[1]);
	waitpid(child, NULL, 0);
	assert_int_equal(daemon_wait(&d), 0);
	table_read(&t, d.csv);
	assert_true(t.nrows > 0);
	for (r = 0; r < t.nrows; r++)
		assert_int_equal(atol(cell(&t, r, "tgid")), child);
	assert_true(sum(&t, "filp", child, "allocs") >= 500);
}

static void filter__comm__only_tasks_of_that_name(void **state)
{
	const char *extra[] = { "--comm", "fdchurn", NULL };
	struct daemon d;
	struct table t;
	char out[256];
	long pid;
	int r;

	need_root(state);
	pid = run_beside(&d, "comm", 2, extra, &t, out, sizeof(out),
			 "cat /proc/self/status > /dev/null; %s/tests/helpers/fdchurn 300", build);
	assert_true(t.nrows > 0);
	for (r = 0; r < t.nrows; r++)
		assert_string_equal(cell(&t, r, "comm"), "fdchurn");
	assert_true(sum(&t, "filp", pid, "allocs") >= 300);
}

/* A process at both ends of a loopback TCP connection: its sends run the
 * receive path in a softirq on the IRQ stack while it is current, and what
 * that frees of its objects is the interrupt's, not the process's own
 * (in_irq_ctx: where the program's frame is).  Traced alone (--comm), so
 * every irq_free counted is one of its objects. */
static void interrupts__loopback_tcp__softirq_frees_not_its_own(void **state)
{
	const char *extra[] = { "--comm", "tcploop", NULL };
	char out[256], sum_out[8192], *p;
	unsigned long long irq_frees;
	struct daemon d;
	struct table t;
	long pid;
	FILE *f;
	size_t n;

	need_root(state);
	pid = run_beside(&d, "irq", 3, extra, &t, out, sizeof(out),
			 "%s/tests/helpers/tcploop 2", build);
	assert_true(pid > 0);
	f = fopen(d.out, "r");
	assert_non_null(f);
	n = fread(sum_out, 1, sizeof(sum_out) - 1, f);
	fclose(f);
	sum_out[n] = 0;
	p = strstr(sum_out, " irq_frees=");
	assert_non_null(p);
	irq_frees = strtoull(p + strlen(" irq_frees="), NULL, 10);
	fprintf(stderr, "tcploop: %lld frees of its objects, %llu of them in an interrupt\n",
		(long long)sum(&t, NULL, pid, "frees"), irq_frees);
	assert_true(irq_frees > 0);
	/* and not every free: the struct file of each round's eventfd is
	 * freed by the process itself (were the programs' frames off the task
	 * stack everywhere, on a private stack, all would count) */
	assert_true(sum(&t, "filp", pid, "frees") > 1000);
	assert_true(irq_frees <= sum(&t, NULL, pid, "frees") - sum(&t, "filp", pid, "frees"));
}

static void filter__cgroup__only_tasks_in_it(void **state)
{
	const char *extra[] = { "--cgroup", NULL, NULL };
	const char *root = cgroup2_root();
	char cg[300], out[256];
	struct daemon d;
	struct table t;
	long pid;
	int r;

	need_root(state);
	if (!root) {
		fprintf(stderr, "no cgroup v2 hierarchy mounted: skipped\n");
		skip();
	}
	snprintf(cg, sizeof(cg), "%s/cs-test-%d", root, getpid());
	assert_int_equal(mkdir(cg, 0755), 0);
	extra[1] = cg;
	pid = run_beside(&d, "cgroup", 2, extra, &t, out, sizeof(out),
			 "cat /proc/self/status > /dev/null; sh -c 'echo $$ > %s/cgroup.procs && exec %s/tests/helpers/fdchurn 300'",
			 cg, build);
	rmdir(cg);
	assert_true(t.nrows > 0);
	for (r = 0; r < t.nrows; r++)
		assert_int_equal(atol(cell(&t, r, "tgid")), pid);
	assert_true(sum(&t, "filp", pid, "allocs") >= 300);
}

static void tracepoints__classic__same_events(void **state)
{
	const char *extra[] = { "--tracepoints", "classic", NULL };
	struct daemon d;
	struct table t;
	char out[256];
	long pid;

	need_root(state);
	pid = run_beside(&d, "classic", 2, extra, &t, out, sizeof(out),
			 "%s/tests/helpers/fdchurn 1000", build);
	assert_true(sum(&t, "filp", pid, "allocs") >= 1000);
	assert_true(sum(&t, "filp", pid, "frees") >= 1000);
}

static void cli__running_daemon__stats_and_top(void **state)
{
	char cmd[700], out[4096];
	struct daemon d;

	need_root(state);
	daemon_start(&d, "cli", 2, NULL);
	sleep_ms(300);
	snprintf(cmd, sizeof(cmd), "%s/cachescope --socket %s stats", build, d.sock);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "produced "));
	assert_non_null(strstr(out, "dropped 0"));
	snprintf(cmd, sizeof(cmd), "%s/cachescope --socket %s top 5", build, d.sock);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "domain"));
	snprintf(cmd, sizeof(cmd), "%s/cachescope --socket %s top x 2>&1", build, d.sock);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 2);	/* a bad command line */
	assert_non_null(strstr(out, "invalid count of keys 'x'"));
	snprintf(cmd, sizeof(cmd), "%s/cachescope --socket %s clusters", build, d.sock);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "clusters: "));
	/* SIGUSR1 prints the cluster table on the daemon's stdout */
	assert_int_equal(kill(d.pid, SIGUSR1), 0);
	assert_int_equal(daemon_wait(&d), 0);
	assert_true(count_in_file(d.out, "clusters: ") >= 2);
	/* the socket goes away with the daemon */
	assert_int_equal(access(d.sock, F_OK), -1);
}

/* The built CUPTI library into lib, or the test is skipped (no CUDA
 * toolkit, no library). */
static void cupti_lib(void **state, char *lib, size_t n)
{
	(void)state;
	snprintf(lib, n, "%s/libcachescope_cupti.so", build);
	if (access(lib, R_OK)) {
		fprintf(stderr, "no %s (no CUDA toolkit): skipped\n", lib);
		skip();
	}
}

static void gpu__cupti_records__gpu_keys_and_host_join(void **state)
{
	unsigned long lib_records, rejected, batches, bins, unheard;
	char out[512], lib[300], want[128];
	struct daemon d;
	struct table t;
	const char *p;
	long pid;
	int r, joined = 0;

	need_root(state);
	cupti_lib(state, lib, sizeof(lib));
	/* 1 s of records: 100 rounds of 3 kernels, 2 KV kernels, 1 MiB in,
	 * 256 KiB out, one 2 MiB allocation released a round later */
	pid = run_beside(&d, "gpu", 3, (const char *const[]){ "--gpu-lib", lib, NULL },
			 &t, out, sizeof(out), "%s/tests/helpers/gpufeed %s 1", build, lib);
	/* gpu-kernels counts every kernel, gpu-kv-kernels the KV ones again */
	assert_int_equal(sum(&t, "gpu-kernels", pid, "gpu_kernels"), 500);
	assert_int_equal(sum(&t, "gpu-kernels", pid, "gpu_kernel_ns"), 300 * 100000 + 200 * 50000);
	assert_int_equal(sum(&t, "gpu-kv-kernels", pid, "gpu_kernels"), 200);
	assert_int_equal(sum(&t, "gpu-kv-kernels", pid, "gpu_kernel_ns"), 200 * 50000);
	assert_int_equal(sum(&t, "gpu-memory", pid, "gpu_copy_in_bytes"), 100ull << 20);
	assert_int_equal(sum(&t, "gpu-memory", pid, "gpu_copy_out_bytes"), 25ull << 20);
	assert_int_equal(sum(&t, "gpu-memory", pid, "allocs"), 100);
	assert_int_equal(sum(&t, "gpu-memory", pid, "frees"), 100);
	/* the records the bins stand for: 500 kernels + 200 KV again + 200
	 * copies + 200 allocations and releases, and CUPTI dropped nothing */
	assert_int_equal(count_in_file(d.out, "gpu: records=1100 cupti_dropped=0 "), 1);
	/* one probe a round (a buffer's walk), and every bin of them came:
	 * the library's count of what it handed over is the daemon's */
	assert_non_null(p = strstr(out, "library: "));
	assert_int_equal(sscanf(p, "library: records %lu rejected %lu batches %lu bins %lu unheard %lu",
				&lib_records, &rejected, &batches, &bins, &unheard), 5);
	assert_int_equal(lib_records, 900);
	assert_int_equal(rejected, 0);
	assert_int_equal(batches, 101);		/* 100 rounds and the last release */
	assert_int_equal(unheard, 0);
	snprintf(want, sizeof(want), "gpu: records=1100 cupti_dropped=0 bins=%lu ", bins);
	assert_int_equal(count_in_file(d.out, want), 1);
	assert_true(bins < 1100);
	/* genuine values are never rejected */
	assert_int_equal(count_in_file(d.out, "usdt: rejected=0 "), 1);
	/* host rows of the same process carry its GPU work of the window */
	for (r = 0; r < t.nrows; r++)
		joined += !strcmp(cell(&t, r, "domain"), "slab") &&
			  atol(cell(&t, r, "tgid")) == pid &&
			  atoll(cell(&t, r, "tgid_gpu_kernel_ns")) > 0;
	assert_true(joined > 0);
}

/* Values no device gives, through the real probes and programs, a probe
 * per record: the daemon rejects each (BPF flags the device id too wide),
 * counts them, and sums only the genuine records. */
/* 0.1 s of gpufeed with its forged records beside a daemon reading the
 * library's probes (which: --gpu-probes); gpufeed's pid. */
static long forged_beside(void **state, struct daemon *d, struct table *t, char *out,
			  size_t n, const char *probes)
{
	char lib[300], name[32];
	long pid;

	need_root(state);
	cupti_lib(state, lib, sizeof(lib));
	snprintf(name, sizeof(name), "forged-%s", probes);
	pid = run_beside(d, name, 2,
			 (const char *const[]){ "--gpu-lib", lib, "--gpu-probes", probes, NULL },
			 t, out, n, "%s/tests/helpers/gpufeed %s 0.1 forged", build, lib);
	assert_true(pid > 0);
	return pid;
}

static void gpu__forged_cupti_values__rejected_and_counted(void **state)
{
	struct daemon d;
	struct table t;
	char out[512];
	long pid = forged_beside(state, &d, &t, out, sizeof(out), "records");

	/* 10 rounds: 5 kernels, 2 KV kernels again, 2 copies, 2 memory records
	 * each, and the 4 forged records */
	/* a rejected record counts in the rejections alone */
	assert_int_equal(count_in_file(d.out, "gpu: records=110 cupti_dropped=0"), 1);
	assert_int_equal(count_in_file(d.out, "usdt: rejected=4 "), 1);
	assert_int_equal(count_in_file(d.out, "range=1 gpu_time=1 gpu_bytes=1 gpu_kind=1 "), 1);
	assert_int_equal(sum(&t, "gpu-kernels", pid, "gpu_kernels"), 50);
	assert_int_equal(sum(&t, "gpu-kernels", pid, "gpu_kernel_ns"), 30 * 100000 + 20 * 50000);
	assert_int_equal(sum(&t, "gpu-memory", pid, "gpu_copy_in_bytes"), 10ull << 20);
	/* no batch was asked for */
	assert_non_null(strstr(out, "batches 0 bins 0 unheard 0"));
}

/* The same in batches: the library keeps the forged records out of its
 * bins (counted), so the bins hold only genuine work and the daemon has
 * nothing to reject. */
static void gpu__forged_cupti_values_in_batches__kept_out_by_library(void **state)
{
	struct daemon d;
	struct table t;
	char out[512];
	long pid = forged_beside(state, &d, &t, out, sizeof(out), "batch");

	assert_non_null(strstr(out, "library: records 94 rejected 4 "));
	assert_int_equal(count_in_file(d.out, "gpu: records=110 cupti_dropped=0 "), 1);
	assert_int_equal(count_in_file(d.out, "usdt: rejected=0 "), 1);
	assert_int_equal(sum(&t, "gpu-kernels", pid, "gpu_kernels"), 50);
	assert_int_equal(sum(&t, "gpu-kernels", pid, "gpu_kernel_ns"), 30 * 100000 + 20 * 50000);
	assert_int_equal(sum(&t, "gpu-kv-kernels", pid, "gpu_kernels"), 20);
	assert_int_equal(sum(&t, "gpu-memory", pid, "gpu_copy_in_bytes"), 10ull << 20);
	assert_int_equal(sum(&t, "gpu-memory", pid, "allocs"), 10);
}

/* One line's number after "<prefix>pid " or "<prefix>library: ... bins ". */
static unsigned long feed_value(const char *out, const char *prefix, const char *what)
{
	const char *line = out;
	char head[64];
	unsigned long v;
	const char *p;

	snprintf(head, sizeof(head), "%s%s", prefix, !strcmp(what, "pid") ? "pid " : "library: ");
	for (; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (strncmp(line, head, strlen(head)))
			continue;
		if (!strcmp(what, "pid"))
			return strtoul(line + strlen(head), NULL, 10);
		assert_non_null(p = strstr(line, " bins "));
		assert_int_equal(sscanf(p, " bins %lu", &v), 1);
		return v;
	}
	fail_msg("no '%s' line in: %s", head, out);
	return 0;
}

/* A user named by --probe-user is believed: nobody's gpufeed beside
 * root's, through one copy of the library both can read, and both count
 * to the record.  (Without --probe-user nobody's records are rejected:
 * test_adversary.) */
static void gpu__probe_user__neighbour_believed(void **state)
{
	char lib[300], dir[64], copy[128], cmd[1600], out[2048];
	struct daemon d;
	struct table t;
	long mine, theirs;

	need_root(state);
	cupti_lib(state, lib, sizeof(lib));
	if (run_cmd("command -v setpriv >/dev/null", NULL, 0)) {
		fprintf(stderr, "no setpriv: skipped\n");
		skip();
	}
	assert_int_equal(tmpdir_make(dir, sizeof(dir), "neighbour"), 0);
	assert_int_equal(chmod(dir, 0755), 0);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/tests/helpers/gpufeed' '%s/' && chmod 0755 '%s'/*",
		 lib, build, dir, dir);
	assert_int_equal(run_cmd(cmd, NULL, 0), 0);
	snprintf(copy, sizeof(copy), "%s/libcachescope_cupti.so", dir);
	run_beside(&d, "neighbour-believed", 4,
		   (const char *const[]){ "--gpu-lib", copy, "--probe-user", "nobody", NULL },
		   &t, out, sizeof(out),
		   "{ setpriv --reuid=nobody --regid=nogroup --clear-groups %s/gpufeed %s 1"
		   " | sed 's/^/nobody /'; } & %s/gpufeed %s 1; wait",
		   dir, copy, dir, copy);
	mine = (long)feed_value(out, "", "pid");
	theirs = (long)feed_value(out, "nobody ", "pid");
	assert_true(mine > 0 && theirs > 0 && mine != theirs);
	assert_int_equal(sum(&t, "gpu-kernels", mine, "gpu_kernels"), 500);
	assert_int_equal(sum(&t, "gpu-memory", mine, "allocs"), 100);
	assert_int_equal(sum(&t, "gpu-kernels", theirs, "gpu_kernels"), 500);
	assert_int_equal(sum(&t, "gpu-memory", theirs, "allocs"), 100);
	assert_int_equal(count_in_file(d.out, "gpu: records=2200 cupti_dropped=0 "), 1);
	assert_int_equal(count_in_file(d.out, "usdt: rejected=0 "), 1);
	assert_int_equal(tmpdir_remove(dir), 0);
}

/*
 * The CUDA backend without a GPU: kvref_cuda.cu built over
 * tests/helpers/fakecuda (runtime and cuBLAS on host memory) with its kernels
 * run as coroutines by cuda_emu.h.  Its logits must equal the CPU backend's
 * across blocks swapped out of the pool and back in through the staging
 * buffer, and under the daemon its pool is the kv-pool-gpu key.
 */
/*
 * Device memory of an engine seen through CUPTI alone (tests/gpu/gpumem.cu
 * over the emulated driver, no probes of its own): the library remembers
 * each allocation, so a release says how old its memory was and the
 * daemon's old population is what still lives.  A caching allocator that
 * grows for its first 3 s and stays is never a leak; memory allocated all
 * along and never released is, once past the start-up, with its reason.
 */
static void gpu_memory_run(void **state, const char *mode, int secs, struct table *t, long *pid,
			   unsigned long *kept)
{
	unsigned long allocs, releases, live;
	char out[1024], lib[300];
	const char *p;
	struct daemon d;

	need_root(state);
	cupti_lib(state, lib, sizeof(lib));
	*pid = run_beside(&d, mode, secs + 2, (const char *const[]){ "--gpu-lib", lib, NULL }, t, out,
			  sizeof(out), "CUDA_INJECTION64_PATH='%s' '%s/tests/gpu/gpumem_emu' %s %d",
			  lib, build, mode, secs);
	assert_non_null(p = strstr(out, "gpumem: "));
	assert_int_equal(sscanf(p + strlen("gpumem: ") + strlen(mode), " allocs %lu releases %lu live %lu",
				&allocs, &releases, &live), 3);
	*kept = allocs - releases;
	/* every allocation and release the program made, and no more */
	assert_int_equal(sum(t, "gpu-memory", *pid, "allocs"), allocs);
	assert_int_equal(sum(t, "gpu-memory", *pid, "frees"), releases);
	assert_int_equal(count_in_file(d.out, "usdt: rejected=0 "), 1);
	assert_int_equal(count_in_file(d.out, " cupti_dropped=0 "), 1);
}

static void gpu__caching_allocator_warm_up__not_a_leak(void **state)
{
	unsigned long kept;
	struct table t;
	long pid;
	int r, rows = 0;

	gpu_memory_run(state, "pool", 12, &t, &pid, &kept);
	for (r = 0; r < t.nrows; r++)
		rows += !strcmp(cell(&t, r, "key"), "gpu-memory") && atol(cell(&t, r, "tgid")) == pid;
	assert_true(rows > 50);
	assert_int_equal(rows_labelled(&t, "gpu-memory", pid, "leak"), 0);
	assert_true(kept >= 30);	/* segments of its first 3 s */
}

static void gpu__memory_never_released__leak_past_the_start_up(void **state)
{
	const char *why = NULL;
	unsigned long kept;
	struct table t;
	long pid;
	int r;

	gpu_memory_run(state, "leak", 12, &t, &pid, &kept);
	assert_true(kept >= 100);
	assert_true(rows_labelled(&t, "gpu-memory", pid, "leak") > 0);
	for (r = 0; r < t.nrows && !why; r++)
		if (!strcmp(cell(&t, r, "key"), "gpu-memory") && atol(cell(&t, r, "tgid")) == pid &&
		    !strcmp(cell(&t, r, "label"), "leak"))
			why = cell(&t, r, "reason");
	assert_non_null(why);
	assert_non_null(strstr(why, "leak: gpu-memory "));
	assert_non_null(strstr(why, " past the start-up; "));
	assert_non_null(strstr(why, " MiB live"));
}

/*
 * KV blocks of an engine seen through CUPTI alone: its copies at the
 * runtime's entry points say which host buffer a block went to and came
 * back from.  Blocks preempted and back within a pool's worth are GPU KV
 * thrash, with the evidence; blocks back only after the pool turned over
 * many times, and copies out that never come back, are not.
 */
static const char *gpu_memory_reason(const struct table *t, long pid, const char *label)
{
	int r;

	for (r = 0; r < t->nrows; r++)
		if (!strcmp(cell(t, r, "key"), "gpu-memory") && atol(cell(t, r, "tgid")) == pid &&
		    !strcmp(cell(t, r, "label"), label))
			return cell(t, r, "reason");
	return NULL;
}

static void gpu__blocks_out_and_back__thrash_only_within_a_pool(void **state)
{
	unsigned long kept;
	const char *why;
	struct table t;
	long pid;

	gpu_memory_run(state, "swap", 5, &t, &pid, &kept);
	assert_true(rows_labelled(&t, "gpu-memory", pid, "thrash") > 0);
	assert_non_null(why = gpu_memory_reason(&t, pid, "thrash"));
	assert_non_null(strstr(why, "thrash: gpu-memory "));
	assert_non_null(strstr(why, " copies out of device memory and "));
	assert_non_null(strstr(why, " blocks back in from where they went; "));
	assert_non_null(strstr(why, "100% of them within a pool's worth of copies out"));
	/* no probes of its own: nothing but CUPTI saw its pool */
	assert_int_equal(rows_labelled(&t, "kv-pool-gpu", pid, "thrash"), 0);

	gpu_memory_run(state, "far", 5, &t, &pid, &kept);
	assert_int_equal(rows_labelled(&t, "gpu-memory", pid, "thrash"), 0);
	assert_non_null(why = gpu_memory_reason(&t, pid, "normal"));
	assert_true(sum(&t, "gpu-memory", pid, "refault_pages") > 100);

	gpu_memory_run(state, "offload", 5, &t, &pid, &kept);
	assert_int_equal(rows_labelled(&t, "gpu-memory", pid, "thrash"), 0);
	assert_int_equal(sum(&t, "gpu-memory", pid, "refault_pages"), 0);
}

static void cuda_backend__on_host__logits_equal_cpu_across_swap(void **state)
{
	char cmd[700], out[1024];
	unsigned long steps, outs, ins;
	double diff;
	const char *p;

	(void)state;
	snprintf(cmd, sizeof(cmd), "'%s/kvref' --backend cuda --cuda-lib '%s/tests/kvref_cuda_emu.so' --check 2>&1",
		 build, build);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	p = strstr(out, "check: cuda vs cpu: ");
	assert_non_null(p);
	assert_int_equal(sscanf(p, "check: cuda vs cpu: %lu steps, %lu blocks swapped out, %lu back in, "
				"largest logit difference %lf", &steps, &outs, &ins, &diff), 4);
	assert_true(steps > 200);
	assert_true(outs > 0 && ins > 0);
	assert_true(diff <= 1e-4);
}

static void cuda_backend__on_host__kv_pool_gpu_under_daemon(void **state)
{
	char lib[300], cupti[300];
	const char *extra[] = { "--workload", "normal", "--workload-backend", "cuda",
				"--workload-cuda-lib", lib, NULL };
	struct daemon d;
	struct table t;
	int r, gpu_pool = 0, host_pool = 0;

	need_root(state);
	snprintf(lib, sizeof(lib), "%s/tests/kvref_cuda_emu.so", build);
	snprintf(cupti, sizeof(cupti), "%s/libcachescope_cupti.so", build);
	if (access(cupti, R_OK)) {
		fprintf(stderr, "no CUPTI library (no CUDA toolkit): skipped\n");
		skip();
	}
	daemon_start(&d, "cudaemu", 6, extra);
	assert_int_equal(daemon_wait(&d), 0);
	check_summary(&d, true);
	/* kvref's own probes and the CUPTI library's carry genuine values */
	assert_int_equal(count_in_file(d.out, "usdt: rejected=0 "), 1);
	/* kvref's start line (its report may not come: a request takes seconds
	 * on the host, and the daemon stops kvref if it has not finished) */
	assert_int_equal(count_in_file(d.out, "kvref: cuda backend on cuda_emu"), 1);
	table_read(&t, d.csv);
	for (r = 0; r < t.nrows; r++) {
		if (strcmp(cell(&t, r, "scope"), "workload"))
			continue;
		gpu_pool += !strcmp(cell(&t, r, "key"), "kv-pool-gpu");
		host_pool += !strcmp(cell(&t, r, "key"), "kv-pool");
	}
	assert_true(gpu_pool > 0);
	assert_int_equal(host_pool, 0);
	assert_true(sum(&t, "kv-pool-gpu", 0, "allocs") > 0);
	/* the emulated driver's CUPTI records of kvref's launches, copies and
	 * allocations, through the library injected as on a GPU */
	assert_true(sum(&t, "gpu-kernels", 0, "gpu_kernels") > 0);
	assert_true(sum(&t, "gpu-kv-kernels", 0, "gpu_kernels") > 0);
	assert_true(sum(&t, "gpu-memory", 0, "gpu_copy_in_bytes") > 0);
	assert_true(sum(&t, "gpu-memory", 0, "allocs") > 0);
	assert_int_equal(count_in_file(d.out, " cupti_dropped=0 "), 1);
}

/*
 * tests/gpu/knownwork.cu, the device check's program of known work, over
 * the emulated runtime and driver: launched as a CUDA program with the
 * library injected (CUDA_INJECTION64_PATH), its GPU rows under the daemon
 * hold exactly the kernels, KV kernels, bytes and allocations it printed.
 */
static void gpu__knownwork_emulated__exact_counts_under_daemon(void **state)
{
	unsigned long k, kv, in, out_b, allocs, releases;
	char out[1024], lib[300];
	struct daemon d;
	struct table t;
	const char *p;
	long pid;

	need_root(state);
	cupti_lib(state, lib, sizeof(lib));
	/* (it lives 0.1 s: harness_exact_keys gives it its own keys) */
	pid = run_beside(&d, "known", 3, (const char *const[]){ "--gpu-lib", lib, NULL }, &t, out,
			 sizeof(out), "CUDA_INJECTION64_PATH='%s' '%s/tests/gpu/knownwork_emu' 100", lib,
			 build);
	assert_non_null(p = strstr(out, "knownwork: "));
	assert_int_equal(sscanf(p, "knownwork: kernels %lu kv_kernels %lu copy_in %lu copy_out %lu "
				"allocs %lu releases %lu", &k, &kv, &in, &out_b, &allocs, &releases), 6);
	assert_int_equal(k, 400);
	assert_int_equal(kv, 100);
	assert_int_equal(sum(&t, "gpu-kernels", pid, "gpu_kernels"), k);
	assert_int_equal(sum(&t, "gpu-kv-kernels", pid, "gpu_kernels"), kv);
	assert_int_equal(sum(&t, "gpu-memory", pid, "gpu_copy_in_bytes"), in);
	assert_int_equal(sum(&t, "gpu-memory", pid, "gpu_copy_out_bytes"), out_b);
	assert_int_equal(sum(&t, "gpu-memory", pid, "allocs"), allocs);
	assert_int_equal(sum(&t, "gpu-memory", pid, "frees"), releases);
	assert_true(sum(&t, "gpu-kv-kernels", pid, "gpu_kernel_ns") > 0);
	assert_int_equal(count_in_file(d.out, " cupti_dropped=0 "), 1);
	assert_int_equal(count_in_file(d.out, "usdt: rejected=0 "), 1);
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void errors__bad_input__one_line_and_nonzero_exit(void **state)
{
	char cmd[700], out[1024];

	(void)state;
	snprintf(cmd, sizeof(cmd), "%s/cachescoped --window-ms 5 2>&1", build);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 2);
	assert_int_equal(count_lines(out), 1);
	assert_non_null(strstr(out, "--window-ms"));

	need_root(state);
	snprintf(cmd, sizeof(cmd), "%s/cachescoped --duration 1 --socket none --csv /nonexistent-cs/x.csv 2>&1",
		 build);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 1);
	assert_int_equal(count_lines(out), 1);
	assert_non_null(strstr(out, "cannot create /nonexistent-cs/x.csv"));

	snprintf(cmd, sizeof(cmd), "%s/cachescoped --duration 1 --socket none --cgroup /nonexistent-cg 2>&1",
		 build);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 1);
	assert_int_equal(count_lines(out), 1);
	assert_non_null(strstr(out, "--cgroup /nonexistent-cg"));
}

/* Without a GPU, --backend cuda says why in one line and fails, and so
 * does a daemon driving it: nothing pretends to have run. */
static void errors__cuda_backend_without_gpu__one_line_and_daemon_fails(void **state)
{
	char cmd[700], out[2048];

	if (!access("/dev/nvidia0", F_OK)) {
		fprintf(stderr, "a GPU is here (tests/gpu/device-check.sh tests it): skipped\n");
		skip();
	}
	snprintf(cmd, sizeof(cmd), "%s/kvref --backend cuda --duration 1 2>&1", build);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 1);
	assert_int_equal(count_lines(out), 1);
	assert_true(strstr(out, "no CUDA device") || strstr(out, "kvref_cuda.so"));

	need_root(state);
	snprintf(cmd, sizeof(cmd), "%s/cachescoped --workload normal --workload-backend cuda "
		 "--duration 5 --socket none 2>&1 >/dev/null", build);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 1);
	/* (no CUDA toolkit at build time: no CUPTI library to inject either) */
	assert_true(strstr(out, "the workload (kvref) failed: exit status 1") ||
		    strstr(out, "needs the CUPTI library"));
}

static void errors__not_root__one_line_naming_cause(void **state)
{
	char cmd[700], out[1024];

	need_root(state);
	/* drop to nobody, keeping no capabilities */
	snprintf(cmd, sizeof(cmd), "setpriv --reuid=65534 --regid=65534 --clear-groups "
		 "--inh-caps=-all %s/cachescoped --duration 1 --socket none 2>&1", build);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 1);
	assert_int_equal(count_lines(out), 1);
	assert_non_null(strstr(out, "not root"));
}


/* The "keys:" line of the daemon's summary. */
static void keys_line(const struct daemon *d, unsigned long *now, unsigned long *evicted,
		      unsigned long *others)
{
	char line[512];
	FILE *f = fopen(d->out, "r");
	const char *p;
	bool found = false;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "keys: now=", 10))
			continue;
		found = true;
		*now = strtoul(line + 10, NULL, 10);
		p = strstr(line, "evicted=");
		*evicted = p ? strtoul(p + 8, NULL, 10) : 0;
		p = strstr(line, "others_events=");
		*others = p ? strtoul(p + 14, NULL, 10) : 0;
	}
	fclose(f);
	assert_true(found);
}

#define STORM "for i in $(seq 1500); do /bin/true; done"

/* A shell forking /bin/true 1500 times: every child lives for a
 * millisecond, so all of them count under two families (bash before the
 * exec, true after), not 1500 processes' worth of keys. */
static void keys__fork_storm__young_processes_in_families(void **state)
{
	const char *extra[] = { "--fold-ms", "1000", NULL };
	unsigned long now, evicted, others;
	struct daemon d;
	struct table t;
	int r, own = 0;

	need_root(state);
	daemon_start(&d, "storm", 5, extra);
	assert_int_equal(run_cmd(STORM, NULL, 0), 0);
	assert_int_equal(daemon_wait(&d), 0);
	check_summary(&d, false);
	keys_line(&d, &now, &evicted, &others);
	assert_true(now < 1000);
	table_read(&t, d.csv);
	for (r = 0; r < t.nrows; r++)
		own += !strcmp(cell(&t, r, "comm"), "true") &&
		       strcmp(cell(&t, r, "key_kind"), "family");
	assert_int_equal(own, 0);
	/* every child's mm: at least one vma each */
	assert_true(sum_family(&t, "vm_area_struct", "true", "allocs") >= 1500);
}

/* The same storm with every process apart and a budget of 64 keys: the
 * table stays within it (plus one others key per cache), and what did
 * not fit is counted on others keys, not lost. */
static void keys__past_budget__others_keys_nothing_lost(void **state)
{
	const char *extra[] = { "--max-keys", "64", NULL };
	unsigned long now, evicted, others;
	struct daemon d;
	struct table t;
	uint64_t vmas = 0;
	int r;

	need_root(state);
	daemon_start(&d, "budget", 5, extra);
	assert_int_equal(run_cmd(STORM, NULL, 0), 0);
	assert_int_equal(daemon_wait(&d), 0);
	check_summary(&d, false);
	keys_line(&d, &now, &evicted, &others);
	assert_true(now <= 64 + 200);
	assert_true(evicted + others > 0);
	table_read(&t, d.csv);
	for (r = 0; r < t.nrows; r++)
		if (!strcmp(cell(&t, r, "key"), "vm_area_struct"))
			vmas += strtoull(cell(&t, r, "allocs"), NULL, 10);
	assert_true(vmas >= 1500);
	assert_true(sum_family(&t, "vm_area_struct", "true", "allocs") == 0);
}

/* Rings far too small for the load: records are dropped, every one is
 * counted, and the rows say in which windows: the window_drops of the
 * windows add up to the summary's dropped. */
static void drops__rings_too_small__counted_per_window(void **state)
{
	const char *extra[] = { "--ring-kb", "64", NULL };
	char cmd[600], line[512];
	uint64_t dropped = 0, sum = 0, last = UINT64_MAX;
	struct daemon d;
	struct table t;
	FILE *f;
	int r;

	need_root(state);
	daemon_start(&d, "drops", 4, extra);
	/* more workers than CPUs: the daemon gets a share of a CPU at best */
	snprintf(cmd, sizeof(cmd), "%s/bench/slabload 100000 %ld pipe > /dev/null",
		 build, 2 * sysconf(_SC_NPROCESSORS_ONLN));
	assert_int_equal(run_cmd(cmd, NULL, 0), 0);
	assert_int_equal(daemon_wait(&d), 0);
	check_summary(&d, false);
	f = fopen(d.out, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "events: ", 8))
			assert_int_equal(sscanf(strstr(line, "dropped="), "dropped=%" SCNu64, &dropped), 1);
	fclose(f);
	table_read(&t, d.csv);
	/* rows come window by window: one value per window */
	for (r = 0; r < t.nrows; r++) {
		uint64_t w = strtoull(cell(&t, r, "window"), NULL, 10);

		if (w != last)
			sum += strtoull(cell(&t, r, "window_drops"), NULL, 10);
		last = w;
	}
	if (!dropped)
		fprintf(stderr, "no record was dropped here: only the sum is checked\n");
	assert_int_equal(sum, dropped);
}

/* The slabload run's estimated count of a cache: allocs, frees. */
static void slabload_counts(const struct table *t, long pid, const char *cache,
			    uint64_t *allocs, uint64_t *frees, uint64_t *max_sample)
{
	int r;

	*allocs = sum(t, cache, pid, "allocs");
	*frees = sum(t, cache, pid, "frees");
	*max_sample = 0;
	for (r = 0; r < t->nrows; r++) {
		uint64_t smp;

		if (strcmp(cell(t, r, "key"), cache) || atol(cell(t, r, "tgid")) != pid)
			continue;
		smp = strtoull(cell(t, r, "sample"), NULL, 10);
		if (smp > *max_sample)
			*max_sample = smp;
	}
}

/* 1 in 16 slab objects tracked, at random: 200 000 eventfd open+close
 * (one struct file each) are estimated within 5 % (the binomial spread is
 * 0.9 %), allocs and frees alike, and the rows say they are estimates.
 * A choice by address would be far off: the allocator hands the same few
 * addresses out again and again. */
static void sampling__fixed_1_in_16__counts_estimated_within_5_percent(void **state)
{
	const char *extra[] = { "--sample", "16", NULL };
	uint64_t allocs, frees, smp;
	char out[64];
	struct table t;
	struct daemon d;
	long pid;

	need_root(state);
	pid = run_beside(&d, "sample16", 3, extra, &t, out, sizeof(out),
			 "%s/bench/slabload 200000 > /dev/null & echo pid $!; wait", build);
	slabload_counts(&t, pid, "filp", &allocs, &frees, &smp);
	fprintf(stderr, "filp: %" PRIu64 " allocs, %" PRIu64 " frees estimated of 200000\n",
		allocs, frees);
	assert_int_equal(smp, 16);
	assert_true(allocs > 190000 && allocs < 210000);
	assert_true(frees > 190000 && frees < 210000);
	assert_true(count_in_file(d.out, "sampling: fixed, 1 in 16") == 1);
}

/* Sampling in time: kmem_cache_alloc's program attached a quarter of each
 * window, each object it tracks standing for 4 more: 2 000 000 eventfd
 * open+close (2-3 s, some 25 windows), the frees (seen whenever they come,
 * each for its object's weight) alike.  What is counted is what happens in
 * the slices, and a process the tracing slows does less in them: this
 * loop, all of whose work is slab events (the empty programs alone take
 * it to 0.74x), reads 0.79-0.85 of the truth here with auto sampling
 * (0.59 with every object tracked, --sample 1, hence auto):
 * low by the slowdown, never high.  The program really was taken off and
 * put back: slices counted, some 10 a second, none refused. */
static void sampling__in_time_1_in_4__counts_low_by_the_slowdown_only(void **state)
{
	const char *extra[] = { "--sample", "auto", "--sample-time", "4", "--budget", "off", NULL };
	uint64_t allocs, frees, smp;
	unsigned long slices = 0, refused = 1;
	char out[64], cmd[600];
	struct table t;
	struct daemon d;
	long pid;

	need_root(state);
	pid = run_beside(&d, "sampletime", 6, extra, &t, out, sizeof(out),
			 "%s/bench/slabload 2000000 > /dev/null & echo pid $!; wait", build);
	slabload_counts(&t, pid, "filp", &allocs, &frees, &smp);
	fprintf(stderr, "filp: %" PRIu64 " allocs, %" PRIu64 " frees estimated of 2000000, "
		"1 in %" PRIu64 "\n", allocs, frees, smp);
	assert_true(smp >= 4);
	assert_true(allocs > 1200000 && allocs < 2100000);
	assert_true(frees > 1200000 && frees < 2100000);
	assert_int_equal(count_in_file(d.out, "sampling in time: the alloc programs attached 1/4"), 1);
	snprintf(cmd, sizeof(cmd), "sed -n 's/.*(\\([0-9]*\\) slices, [0-9]* missed, \\([0-9]*\\) attaches refused).*/\\1 \\2/p' '%s'",
		 d.out);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	assert_int_equal(sscanf(out, "%lu %lu", &slices, &refused), 2);
	fprintf(stderr, "%lu slices, %lu attaches refused\n", slices, refused);
	/* 10 a second */
	assert_true(slices >= 20);
	assert_int_equal(refused, 0);
}

/* The same with --sample-time-frees: the frees' programs go with the
 * allocs', so a tracked object freed between the slices is reported when
 * a slice sees its address handed out again (an unseen free): every
 * object's free is found (the eventfd loop's addresses are handed out
 * again at once).  The frees' programs really were off: the kernel ran
 * kmem_cache_free's about as often as kmem_cache_alloc's, not for each
 * of the loop's 6 000 000 frees.  The counts read low by the slowdown
 * inside the slices, which is larger than with the frees attached: the
 * loop runs at full speed between them. */
static void sampling__in_time_frees_too__frees_found_again_by_their_addresses(void **state)
{
	const char *extra[] = { "--sample", "auto", "--sample-time", "4", "--sample-time-frees",
				"--budget", "off", "--bpf-stats", NULL };
	uint64_t allocs, frees, smp;
	unsigned long long alloc_runs = 0, free_runs = 0;
	char out[64], cmd[600];
	struct table t;
	struct daemon d;
	long pid;

	need_root(state);
	pid = run_beside(&d, "sampletimefrees", 6, extra, &t, out, sizeof(out),
			 "%s/bench/slabload 2000000 > /dev/null & echo pid $!; wait", build);
	slabload_counts(&t, pid, "filp", &allocs, &frees, &smp);
	fprintf(stderr, "filp: %" PRIu64 " allocs, %" PRIu64 " frees estimated of 2000000, "
		"1 in %" PRIu64 "\n", allocs, frees, smp);
	assert_int_equal(count_in_file(d.out, "sampling in time: the alloc programs and the frees' attached 1/4"), 1);
	/* the kernel's run counts (--bpf-stats): kmem_cache_free's program ran
	 * about as often as kmem_cache_alloc's, both a quarter of the loop's
	 * 3 events of each an iteration or so */
	snprintf(cmd, sizeof(cmd), "awk '$1 == \"btf_kmem_cache_alloc\" {a = $2} $1 == \"btf_kmem_cache_free\" {f = $2} END {print a + 0, f + 0}' '%s'",
		 d.out);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	assert_int_equal(sscanf(out, "%llu %llu", &alloc_runs, &free_runs), 2);
	fprintf(stderr, "runs: kmem_cache_alloc %llu, kmem_cache_free %llu\n", alloc_runs, free_runs);
	assert_true(alloc_runs > 0 && free_runs > 0);
	assert_true(free_runs < 3000000);
	assert_true(free_runs < 2 * alloc_runs);
	/* low by the slowdown, which is larger here: outside the slices the
	 * loop runs at full speed, inside at a third of it under --bpf-stats
	 * (0.35-0.39 of the truth here) */
	assert_true(smp >= 4);
	assert_true(allocs > 400000 && allocs < 2100000);
	/* every tracked object's free found, seen or by its address */
	assert_true(frees >= allocs / 100 * 95 && frees <= allocs);
}

/* Sampling in time where the kmalloc tracepoint fires rarely (this host,
 * idle but for a sleep): cycling kmalloc's program would cost more CPU
 * (an attach and a detach, ten times a second) than its detach saves, so
 * the daemon holds it attached once it has measured a cycle, and says so
 * at the end and in the metric; kmem_cache_alloc's still cycles. */
static void sampling__in_time_rare_kmalloc__held_attached(void **state)
{
	const char *extra[] = { "--sample-time", "4", "--budget", "off", NULL };
	unsigned long slices = 0;
	char out[64], cmd[600];
	struct table t;
	struct daemon d;

	need_root(state);
	run_beside(&d, "kmallochold", 4, extra, &t, out, sizeof(out), "sleep 3");
	assert_int_equal(count_in_file(d.out, "kmalloc's held attached at the end (held 1 times"), 1);
	snprintf(cmd, sizeof(cmd), "sed -n 's/.*(\\([0-9]*\\) slices, .*/\\1/p' '%s'", d.out);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	assert_int_equal(sscanf(out, "%lu", &slices), 1);
	assert_true(slices >= 20);
}

/* auto: every object while the records stay within the budget; a loop that
 * makes far more than the budget has its caches thinned at once, and the
 * estimates still hold (within 20 %: the shift goes up to 1 in 1024),
 * while quiet caches of the same moments keep every object. */
static void sampling__auto_past_budget__shift_raised_estimates_hold(void **state)
{
	const char *extra[] = { "--sample", "auto", "--sample-budget", "20000", NULL };
	uint64_t allocs, frees, smp;
	bool quiet_exact = false;
	char out[64];
	struct table t;
	struct daemon d;
	long pid;
	int r;

	need_root(state);
	pid = run_beside(&d, "sampleauto", 3, extra, &t, out, sizeof(out),
			 "%s/bench/slabload 300000 > /dev/null & echo pid $!; wait", build);
	slabload_counts(&t, pid, "filp", &allocs, &frees, &smp);
	fprintf(stderr, "filp: %" PRIu64 " allocs, %" PRIu64 " frees estimated of 300000, "
		"1 in %" PRIu64 " at most\n", allocs, frees, smp);
	assert_true(smp >= 4);
	assert_true(allocs > 240000 && allocs < 360000);
	assert_true(frees > 240000 && frees < 360000);
	assert_int_equal(count_in_file(d.out, "sampling: auto"), 1);
	/* in the windows where filp was thinned, other caches were not */
	for (r = 0; r < t.nrows && !quiet_exact; r++) {
		uint64_t w;
		int q;

		if (strcmp(cell(&t, r, "key"), "filp") || atol(cell(&t, r, "tgid")) != pid ||
		    atol(cell(&t, r, "sample")) < 4)
			continue;
		w = strtoull(cell(&t, r, "window"), NULL, 10);
		for (q = 0; q < t.nrows; q++)
			if (strtoull(cell(&t, q, "window"), NULL, 10) == w &&
			    !strcmp(cell(&t, q, "domain"), "slab") &&
			    atol(cell(&t, q, "sample")) == 1 && atol(cell(&t, q, "allocs")) > 0)
				quiet_exact = true;
	}
	assert_true(quiet_exact);
}

/* The pid of a child of parent named comm, or 0. */
static pid_t child_named(pid_t parent, const char *comm)
{
	char cmd[200], out[64];

	snprintf(cmd, sizeof(cmd), "pgrep -P %d -x %s", (int)parent, comm);
	if (run_cmd(cmd, out, sizeof(out)))
		return 0;
	return (pid_t)atol(out);
}

/* SIGINT 5 s into a 60 s workload: the daemon stops kvref and exits at
 * once (it used to wait for kvref's whole run: kvref inherited the
 * daemon's blocked signals), and a daemon killed outright takes kvref with
 * it (PR_SET_PDEATHSIG).  The deadlines are liveness bounds, generous
 * against a busy machine, not timings. */
static void workload__sigint__daemon_and_kvref_stop(void **state)
{
	const char *extra[] = { "--workload", "normal", NULL };
	struct daemon d;
	pid_t kv;
	int i, status;

	need_root(state);
	daemon_start(&d, "wl-int", 60, extra);
	sleep_ms(5000);
	kv = child_named(d.pid, "kvref");
	assert_true(kv > 0);
	assert_int_equal(kill(d.pid, SIGINT), 0);
	for (i = 0; i < 100 && waitpid(d.pid, &status, WNOHANG) != d.pid; i++)
		sleep_ms(100);
	assert_true(i < 100);		/* within 10 s, not kvref's 55 s */
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_true(kill(kv, 0) && errno == ESRCH);
	assert_true(count_in_file(d.out, "score: 1 of 1 phases") > 0);	/* it still scores */

	daemon_start(&d, "wl-kill", 60, extra);
	sleep_ms(3000);
	kv = child_named(d.pid, "kvref");
	assert_true(kv > 0);
	assert_int_equal(kill(d.pid, SIGKILL), 0);
	waitpid(d.pid, &status, 0);
	for (i = 0; i < 100 && !kill(kv, 0); i++)
		sleep_ms(100);
	assert_true(i < 100);
}

/* kvref needs no privilege: under a root daemon it runs as a user of its
 * own (a uid of systemd's dynamic range no account names, a gid of the
 * same number, no supplementary group) that no other process runs as, and
 * holds no file of the daemon's (the CSV's temporary file is O_CLOEXEC). */
static bool runs_as(pid_t pid, unsigned int uid)
{
	char path[64], line[256];
	unsigned int id[4];
	bool as = false;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %u %u %u %u", &id[0], &id[1], &id[2], &id[3]) == 4 ||
		    sscanf(line, "Gid: %u %u %u %u", &id[0], &id[1], &id[2], &id[3]) == 4)
			for (i = 0; i < 4; i++)
				as |= id[i] == uid;
	fclose(f);
	return as;
}

static void workload__kvref__runs_as_own_user_without_daemon_fds(void **state)
{
	const char *extra[] = { "--workload", "normal", NULL };
	char path[64], line[256], link[4200];
	unsigned int id[4], uid = 0;
	bool uid_seen = false, gid_seen = false, groups_seen = false;
	struct dirent *e;
	struct daemon d;
	pid_t kv = 0;
	DIR *fds;
	FILE *f;
	int i, others = 0;

	need_root(state);
	daemon_start(&d, "wl-priv", 6, extra);
	for (i = 0; i < 100 && !(kv = child_named(d.pid, "kvref")); i++)
		sleep_ms(100);
	assert_true(kv > 0);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)kv);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Uid: %u %u %u %u", &id[0], &id[1], &id[2], &id[3]) == 4) {
			uid_seen = true;
			uid = id[0];
			assert_true(uid >= 61184 && uid <= 65519);
			assert_null(getpwuid(uid));
			for (i = 0; i < 4; i++)
				assert_int_equal(id[i], uid);
		} else if (sscanf(line, "Gid: %u %u %u %u", &id[0], &id[1], &id[2], &id[3]) == 4) {
			gid_seen = true;
			for (i = 0; i < 4; i++)
				assert_int_equal(id[i], uid);
		} else if (!strncmp(line, "Groups:", 7)) {
			groups_seen = true;
			assert_int_equal(strspn(line + 7, " \t\n"), strlen(line + 7));
		}
	}
	fclose(f);
	assert_true(uid_seen && gid_seen && groups_seen);
	/* no other process runs as it */
	fds = opendir("/proc");
	assert_non_null(fds);
	while ((e = readdir(fds)))
		if (atoi(e->d_name) > 0 && atoi(e->d_name) != kv)
			others += runs_as(atoi(e->d_name), uid);
	closedir(fds);
	assert_int_equal(others, 0);
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)kv);
	fds = opendir(path);
	assert_non_null(fds);
	while ((e = readdir(fds))) {
		char fp[330];
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		snprintf(fp, sizeof(fp), "%s/%s", path, e->d_name);
		n = readlink(fp, link, sizeof(link) - 1);
		if (n < 0)
			continue;
		link[n] = '\0';
		if (strstr(link, d.csv))
			fail_msg("kvref holds fd %s -> %s", e->d_name, link);
	}
	closedir(fds);
	assert_int_equal(daemon_wait(&d), 0);
}

/* Copy build/name into dir, as root's 0755. */
static void copy_built(const char *dir, const char *name)
{
	char cmd[1400];

	snprintf(cmd, sizeof(cmd), "install -m 0755 '%s/%s' '%s/%s'", build, name, dir, name);
	assert_int_equal(run_cmd(cmd, NULL, 0), 0);
}

/*
 * A build other users cannot reach, as a checkout in a 0700 home directory
 * (and a path with spaces): the daemon opens kvref as root and hands it
 * over as a descriptor, so kvref still runs, as a user of its own, and its
 * probes are read.  Where kvref's own mode bars others, one line names the
 * file, the user and the errno, and the daemon exits 1.
 */
static void workload__build_in_0700_dir__kvref_runs_as_own_user(void **state)
{
	const char *extra[] = { "--workload", "normal", NULL };
	char home[400], dir[500], cmd[1600], out[2048], want[700];
	unsigned int u1, u2;
	struct daemon d;
	struct table t;
	int r, kv = 0;

	need_root(state);
	snprintf(home, sizeof(home), "%s/private home", tmpdir);
	snprintf(dir, sizeof(dir), "%s/cache scope build", home);
	assert_int_equal(mkdir(home, 0700), 0);
	assert_int_equal(mkdir(dir, 0755), 0);
	copy_built(dir, "cachescoped");
	copy_built(dir, "kvref");
	/* nobody cannot even see it */
	snprintf(cmd, sizeof(cmd), "setpriv --reuid=nobody --regid=nogroup --clear-groups "
		 "test -x '%s/kvref'", dir);
	assert_int_not_equal(run_cmd(cmd, NULL, 0), 0);

	harness_daemon_dir = dir;
	daemon_start(&d, "wl-0700", 6, extra);
	harness_daemon_dir = NULL;
	assert_int_equal(daemon_wait(&d), 0);
	assert_int_equal(count_in_file(d.out, "workload report (kvref):"), 1);
	assert_int_equal(count_in_file(d.out, "error"), 0);
	table_read(&t, d.csv);
	for (r = 0; r < t.nrows; r++)
		kv += !strcmp(cell(&t, r, "scope"), "workload") && !strcmp(cell(&t, r, "key"), "kv-pool");
	assert_true(kv > 0);		/* kvref's USDT probes fired */

	snprintf(cmd, sizeof(cmd), "chmod 0700 '%s/kvref' && '%s/cachescoped' --workload normal "
		 "--duration 5 --socket none --top 0 2>&1", dir, dir);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 1);
	/* the user is leased anew each run: "as uid N: ... by uid N (" */
	snprintf(want, sizeof(want), "cachescoped: error: cannot run %s/kvref as uid ", dir);
	if (strncmp(out, want, strlen(want)) || count_lines(out) != 1 ||
	    sscanf(out + strlen(want), "%u: it is not executable by uid %u (", &u1, &u2) != 2 ||
	    u1 != u2 || u1 < 61184 || u1 > 65519 ||
	    !strstr(out, " (mode 0700, owner uid 0) (EACCES)\n"))
		fail_msg("expected one line '%s N: it is not executable by uid N (mode 0700, owner uid 0) (EACCES)', got '%s'",
			 want, out);
}

/* Whether the file at path holds the byte c. */
static bool file_has_byte(const char *path, int c)
{
	FILE *f = fopen(path, "r");
	int ch;

	assert_non_null(f);
	while ((ch = fgetc(f)) != EOF && ch != c)
		;
	fclose(f);
	return ch == c;
}

/* A process that names itself "\e[31mevil": what reaches a terminal (the
 * CLI's top, the tables at exit) shows the name escaped, never the ESC. */
static void terminal__comm_with_escape__shown_escaped(void **state)
{
	const char *extra[] = { "--pid", NULL, "--top", "20", NULL };
	char pidbuf[16], cmd[600], out[16384], c = 'x';
	int go[2], stop[2], i;
	struct daemon d;
	pid_t child;

	need_root(state);
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(stop), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		close(go[1]);
		close(stop[1]);
		prctl(PR_SET_NAME, "\x1b[31mevil");
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		fcntl(stop[0], F_SETFL, O_NONBLOCK);
		/* churn until told to stop: its key is in every window */
		while (read(stop[0], &c, 1) < 0 && errno == EAGAIN) {
			for (i = 0; i < 200; i++)
				close(eventfd(0, 0));
			usleep(10000);
		}
		_exit(0);
	}
	close(go[0]);
	close(stop[0]);
	snprintf(pidbuf, sizeof(pidbuf), "%d", child);
	extra[1] = pidbuf;
	daemon_start(&d, "escape", 5, extra);
	assert_int_equal(write(go[1], "x", 1), 1);
	snprintf(cmd, sizeof(cmd), "%s/cachescope --socket %s top 50", build, d.sock);
	for (i = 0; i < 100; i++) {
		assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
		if (strstr(out, "evil"))
			break;
		sleep_ms(100);
	}
	assert_true(i < 100);
	assert_null(strchr(out, '\x1b'));
	assert_non_null(strstr(out, "\\x1b[31mevil"));
	/* JSON holds the same escaped text (as the JSON string "\\x1b...") */
	snprintf(cmd, sizeof(cmd), "%s/cachescope --socket %s --json top 50 | jq -e "
		 "'[.keys[] | select(.comm == \"\\\\x1b[31mevil\")] | length > 0'", build, d.sock);
	assert_int_equal(run_cmd(cmd, NULL, 0), 0);
	assert_int_equal(write(stop[1], "x", 1), 1);
	close(go[1]);
	close(stop[1]);
	waitpid(child, NULL, 0);
	assert_int_equal(daemon_wait(&d), 0);
	assert_true(count_in_file(d.out, "\\x1b[31mevil") > 0);	/* busiest keys */
	assert_false(file_has_byte(d.out, 0x1b));
	/* and so does the CSV */
	assert_true(count_in_file(d.csv, ",\\x1b[31mevil,") > 0);
	assert_false(file_has_byte(d.csv, 0x1b));
}

/* The CSV on a 64 KiB tmpfs: the disk fills within the first seconds.
 * Tracing goes on to the end, one line says so, the rows written before
 * are FILE at exit, the lost ones are counted, the daemon exits 1.  A
 * killed run's temporary file planted there beforehand is reported at
 * start, once, and left. */
static char full_mnt[300];

/* whatever the test's end, the tmpfs goes (the harness removes tmpdir) */
static int full_unmount(void **state)
{
	(void)state;
	if (full_mnt[0])
		umount2(full_mnt, MNT_DETACH);
	full_mnt[0] = '\0';
	return 0;
}

static void csv__disk_full__rows_kept_tracing_goes_on(void **state)
{
	char *mnt = full_mnt, csv[340], orphan[400], line[512];
	const char *extra[] = { "--csv", csv, NULL };
	unsigned long long rows = 0, lost = 0, windows = 0;
	struct daemon d;
	struct table t;
	struct stat st;
	pid_t gone;
	FILE *f;

	need_root(state);
	snprintf(mnt, sizeof(full_mnt), "%s/full", tmpdir);
	assert_int_equal(mkdir(mnt, 0700), 0);
	if (mount("cs-full", mnt, "tmpfs", 0, "size=64k")) {
		fprintf(stderr, "cannot mount a tmpfs (%s): skipped\n", strerror(errno));
		mnt[0] = '\0';
		skip();
	}
	snprintf(csv, sizeof(csv), "%s/run.csv", mnt);
	gone = fork();
	assert_true(gone >= 0);
	if (!gone)
		_exit(0);
	waitpid(gone, NULL, 0);
	snprintf(orphan, sizeof(orphan), "%s.tmp.%d.KiLLed", csv, (int)gone);
	f = fopen(orphan, "w");
	assert_non_null(f);
	fputs("ts\n", f);
	fclose(f);
	daemon_start(&d, "full", 4, extra);
	/* busy enough to fill 64 KiB with rows */
	assert_int_equal(run_cmd("for i in $(seq 200); do cat /proc/self/status; done", NULL, 0), 0);
	assert_int_equal(daemon_wait(&d), 1);
	assert_int_equal(count_in_file(d.out, "cannot write"), 1);
	assert_int_equal(count_in_file(d.out, "No space left on device"), 3);	/* line, exit, csv: */
	assert_int_equal(count_in_file(d.out, "the temporary CSV of a cachescoped that is gone"), 1);
	assert_int_equal(stat(orphan, &st), 0);
	f = fopen(d.out, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "csv: rows=%llu lost=%llu", &rows, &lost);
		sscanf(line, "cachescoped: %*f s, %llu windows", &windows);
	}
	fclose(f);
	assert_true(rows > 1 && lost > 0);
	assert_true(windows >= 30);		/* 4 s of 100 ms windows: it went on */
	table_read(&t, csv);			/* the header, then whole rows */
	assert_int_equal(t.nrows, (int)rows - 1);
	assert_int_equal(stat(csv, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
}

/* The socket path is checked before anything is loaded: a regular file
 * there is refused and left alone, and a second daemon on a live socket
 * refuses with one line, the first one still serving. */
static void control__socket_path_taken__refused_one_line(void **state)
{
	char path[300], cmd[900], out[512];
	struct daemon d;
	struct stat st;
	FILE *f;

	need_root(state);
	snprintf(path, sizeof(path), "%s/not-a-socket", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("keep me\n", f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s/cachescoped --duration 1 --socket %s 2>&1", build, path);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 1);
	assert_int_equal(count_lines(out), 1);
	assert_non_null(strstr(out, "is not a socket"));
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode) && st.st_size == 8);

	daemon_start(&d, "first", 4, NULL);
	snprintf(cmd, sizeof(cmd), "%s/cachescoped --duration 1 --socket %s 2>&1", build, d.sock);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 1);
	assert_int_equal(count_lines(out), 1);
	assert_non_null(strstr(out, "another cachescoped answers there"));
	snprintf(cmd, sizeof(cmd), "%s/cachescope --socket %s stats", build, d.sock);
	assert_int_equal(run_cmd(cmd, out, sizeof(out)), 0);
	assert_int_equal(daemon_wait(&d), 0);
	/* the first removed its own socket at exit */
	assert_int_equal(stat(d.sock, &st), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(slab__eventfd_churn__filp_and_dentry_counted),
		cmocka_unit_test(slab__eventfd_leak__live_filp_grows),
		cmocka_unit_test(page__reread_after_dontneed__refaults_on_file_key),
		cmocka_unit_test(page__inode_number_reused__rows_name_the_new_file),
		cmocka_unit_test(filter__pid__only_that_process),
		cmocka_unit_test(filter__comm__only_tasks_of_that_name),
		cmocka_unit_test(interrupts__loopback_tcp__softirq_frees_not_its_own),
		cmocka_unit_test(filter__cgroup__only_tasks_in_it),
		cmocka_unit_test(tracepoints__classic__same_events),
		cmocka_unit_test(cli__running_daemon__stats_and_top),
		cmocka_unit_test(keys__fork_storm__young_processes_in_families),
		cmocka_unit_test(keys__past_budget__others_keys_nothing_lost),
		cmocka_unit_test(drops__rings_too_small__counted_per_window),
		cmocka_unit_test(sampling__fixed_1_in_16__counts_estimated_within_5_percent),
		cmocka_unit_test(sampling__auto_past_budget__shift_raised_estimates_hold),
		cmocka_unit_test(sampling__in_time_1_in_4__counts_low_by_the_slowdown_only),
		cmocka_unit_test(sampling__in_time_frees_too__frees_found_again_by_their_addresses),
		cmocka_unit_test(sampling__in_time_rare_kmalloc__held_attached),
		cmocka_unit_test(workload__sigint__daemon_and_kvref_stop),
		cmocka_unit_test(workload__kvref__runs_as_own_user_without_daemon_fds),
		cmocka_unit_test(workload__build_in_0700_dir__kvref_runs_as_own_user),
		cmocka_unit_test(control__socket_path_taken__refused_one_line),
		cmocka_unit_test(terminal__comm_with_escape__shown_escaped),
		cmocka_unit_test_teardown(csv__disk_full__rows_kept_tracing_goes_on, full_unmount),
		cmocka_unit_test(gpu__cupti_records__gpu_keys_and_host_join),
		cmocka_unit_test(gpu__forged_cupti_values__rejected_and_counted),
		cmocka_unit_test(gpu__forged_cupti_values_in_batches__kept_out_by_library),
		cmocka_unit_test(gpu__probe_user__neighbour_believed),
		cmocka_unit_test(cuda_backend__on_host__logits_equal_cpu_across_swap),
		cmocka_unit_test(cuda_backend__on_host__kv_pool_gpu_under_daemon),
		cmocka_unit_test(gpu__knownwork_emulated__exact_counts_under_daemon),
		cmocka_unit_test(gpu__caching_allocator_warm_up__not_a_leak),
		cmocka_unit_test(gpu__memory_never_released__leak_past_the_start_up),
		cmocka_unit_test(gpu__blocks_out_and_back__thrash_only_within_a_pool),
		cmocka_unit_test(errors__bad_input__one_line_and_nonzero_exit),
		cmocka_unit_test(errors__cuda_backend_without_gpu__one_line_and_daemon_fails),
		cmocka_unit_test(errors__not_root__one_line_naming_cause),
	};

	/* CS_TEST_FILTER=page__* runs the tests whose names match */
	if (getenv("CS_TEST_FILTER"))
		cmocka_set_test_filter(getenv("CS_TEST_FILTER"));
	/* these tests count a short-lived helper's events on its own keys,
	 * exactly: every slab object tracked (the sampling tests say
	 * otherwise on their command line) */
	harness_exact_keys = true;
	harness_sample = "1";
	return cmocka_run_group_tests_name("integration", tests, harness_setup, harness_teardown);
}
