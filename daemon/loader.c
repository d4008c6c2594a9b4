// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * BPF loader: skeleton open -> rodata and map sizes -> load -> rings ->
 * attach, with one cleanup path.  The one idea to keep in mind: each event
 * has a BTF tracepoint and a classic tracepoint program, and exactly one of
 * the two is loaded, chosen per event from the kernel's BTF.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <linux/magic.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "cachescope.skel.h"
#include "loader.h"
#include "tpproto.h"
#include "log.h"
#include "ptree.h"

#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"

struct tp_pair {
	const char *name;	/* tracepoint name, also btf_trace_<name> */
	const char *category;
};

static const struct tp_pair tps[LOADER_NR_TP] = {
	{ "kmem_cache_alloc", "kmem" },
	{ "kmem_cache_free", "kmem" },
	{ "kmalloc", "kmem" },
	{ "kfree", "kmem" },
	{ "mm_filemap_add_to_page_cache", "filemap" },
	{ "mm_filemap_delete_from_page_cache", "filemap" },
	{ "sched_process_exec", "sched" },
	{ "sched_process_fork", "sched" },
	{ "sched_process_exit", "sched" },
};

static void tp_progs(struct cachescope_bpf *skel, int i,
		     struct bpf_program **btf, struct bpf_program **classic)
{
	struct bpf_program *b[LOADER_NR_TP] = {
		skel->progs.btf_kmem_cache_alloc, skel->progs.btf_kmem_cache_free,
		skel->progs.btf_kmalloc, skel->progs.btf_kfree,
		skel->progs.btf_page_add, skel->progs.btf_page_del,
		skel->progs.btf_exec,
		skel->progs.btf_fork, skel->progs.btf_exit_task,
	};
	struct bpf_program *c[LOADER_NR_TP] = {
		skel->progs.tp_kmem_cache_alloc, skel->progs.tp_kmem_cache_free,
		skel->progs.tp_kmalloc, skel->progs.tp_kfree,
		skel->progs.tp_page_add, skel->progs.tp_page_del,
		skel->progs.tp_exec,
		skel->progs.tp_fork, skel->progs.tp_exit_task,
	};

	*btf = b[i];
	*classic = c[i];
}

/* The skeleton's link of tracepoint i's BTF program (the only kind the
 * daemon detaches and attaches again: loader_can_detach). */
static struct bpf_link **btf_link(struct cachescope_bpf *skel, int i)
{
	struct bpf_link **b[LOADER_NR_TP] = {
		&skel->links.btf_kmem_cache_alloc, &skel->links.btf_kmem_cache_free,
		&skel->links.btf_kmalloc, &skel->links.btf_kfree,
		&skel->links.btf_page_add, &skel->links.btf_page_del,
		&skel->links.btf_exec,
		&skel->links.btf_fork, &skel->links.btf_exit_task,
	};

	return b[i];
}

/* libbpf's messages: shown with -vv; otherwise the last warning is kept so
 * that a failed load can name what failed in one line. */
static char last_libbpf_msg[256];

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	va_list aq;

	/* keep the first warning: it names the program, later ones only
	 * say that the object failed */
	if (level == LIBBPF_WARN && !last_libbpf_msg[0]) {
		va_copy(aq, ap);
		vsnprintf(last_libbpf_msg, sizeof(last_libbpf_msg), fmt, aq);
		va_end(aq);
		last_libbpf_msg[strcspn(last_libbpf_msg, "\n")] = '\0';
	}
	if (!log_shows(CS_LOG_DEBUG))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static bool has_cap(int cap)
{
	unsigned long long eff = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return eff & (1ull << cap);
}

static int check_privileges(void)
{
	/* CAP_SYS_ADMIN 21, CAP_PERFMON 38, CAP_BPF 39 */
	if (geteuid() == 0 || has_cap(21) || (has_cap(38) && has_cap(39)))
		return 0;
	log_err("cannot trace: not root (run as root, or with CAP_BPF and CAP_PERFMON)");
	return -EPERM;
}

static int check_btf(void)
{
	if (access(VMLINUX_BTF, R_OK) == 0)
		return 0;
	log_err("cannot trace: kernel has no BTF (%s missing; needs CONFIG_DEBUG_INFO_BTF=y)",
		VMLINUX_BTF);
	return -ENOENT;
}

/* libbpf finds classic tracepoints through tracefs; mount it if needed. */
static int ensure_tracefs(void)
{
	if (!access("/sys/kernel/tracing/events", F_OK) ||
	    !access("/sys/kernel/debug/tracing/events", F_OK))
		return 0;
	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL)) {
		log_err("cannot mount tracefs on /sys/kernel/tracing: %s", strerror(errno));
		return -errno;
	}
	log_info("mounted tracefs on /sys/kernel/tracing for classic tracepoints");
	return 0;
}

static int choose_tracepoints(struct loader *ld, enum tp_mode mode)
{
	struct bpf_program *btfp, *classic;
	struct btf *vmlinux = NULL;
	bool any_classic = false;
	int i;

	if (mode == TP_AUTO) {
		vmlinux = btf__load_vmlinux_btf();
		if (!vmlinux) {
			log_err("cannot read kernel BTF from %s: %s", VMLINUX_BTF,
				strerror(errno));
			return -errno;
		}
	}
	for (i = 0; i < LOADER_NR_TP; i++) {
		if (mode == TP_CLASSIC)
			ld->classic[i] = true;
		else if (mode == TP_BTF)
			ld->classic[i] = false;
		else
			ld->classic[i] = !tpproto_ok(vmlinux, tps[i].name);
		if (ld->classic[i] && mode == TP_AUTO)
			log_warn("%s: no BTF tracepoint of the prototype ours takes in this kernel (bpf/core_fixes.bpf.h), using the classic tracepoint %s/%s",
				 tps[i].name, tps[i].category, tps[i].name);
		tp_progs(ld->skel, i, &btfp, &classic);
		bpf_program__set_autoload(btfp, !ld->classic[i]);
		bpf_program__set_autoload(classic, ld->classic[i]);
		any_classic |= ld->classic[i];
	}
	btf__free(vmlinux);
	return any_classic ? ensure_tracefs() : 0;
}

static int create_rings(struct loader *ld, size_t ring_bytes);

/* --cgroup: held open until the cgroup array takes it after load; a path
 * that is not a cgroup v2 directory is refused here, before any load. */
static int open_cgroup(struct loader *ld, const char *path)
{
	struct statfs sf;
	int err;

	ld->cgroup_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ld->cgroup_fd < 0) {
		err = -errno;
		log_err("cannot use --cgroup %s: %s", path, strerror(errno));
		return err;
	}
	if (fstatfs(ld->cgroup_fd, &sf) || sf.f_type != CGROUP2_SUPER_MAGIC) {
		log_err("cannot use --cgroup %s: not a cgroup v2 directory", path);
		return -EINVAL;
	}
	return 0;
}

static int configure(struct loader *ld, const struct env *env)
{
	struct cachescope_bpf *skel = ld->skel;
	size_t ring_bytes = (size_t)env->ring_kb << 10;
	int err, i;

	skel->rodata->self_tgid = getpid();
	skel->rodata->filter_tgid = env->npids > 0;
	skel->rodata->wakeup_bytes = ring_bytes / 8;
	skel->rodata->ring_bytes = ring_bytes;
	skel->rodata->ring_backoff_on = env->sample_shift < 0;
	skel->rodata->page_shift = __builtin_ctz(sysconf(_SC_PAGESIZE));
	/* processes named with --pid are what the user wants apart */
	skel->rodata->time_runs = env->bpf_stats;
	skel->rodata->fold_young_ns = env->npids ? 0 : (uint64_t)env->fold_ms * 1000000ull;
	/* whose user-space probe records are believed (CS_F_FOREIGN) */
	for (i = 0; i < env->nprobe_uids; i++)
		skel->rodata->probe_uids[i] = env->probe_uids[i];
	skel->rodata->probe_nuids = env->nprobe_uids;
	skel->rodata->stack_per_s = env->leak_stacks;
	if (env->comm[0]) {
		skel->rodata->filter_comm = true;
		memcpy((char *)skel->rodata->comm_filter, env->comm, sizeof(env->comm));
	}
	if (env->cgroup_path) {
		err = open_cgroup(ld, env->cgroup_path);
		if (err)
			return err;
		skel->rodata->filter_cgroup = true;
	}

	if (ld->nr_cpus > CS_MAX_CPUS) {
		log_err("cannot trace: %d possible CPUs, at most %d supported",
			ld->nr_cpus, CS_MAX_CPUS);
		return -E2BIG;
	}
	err = create_rings(ld, ring_bytes);
	if (err)
		return err;
	/* The first ring is the template of the array's inner maps (setting
	 * the inner map's size through libbpf 1.1 crashes). */
	err = bpf_map__set_max_entries(skel->maps.rings, ld->nr_cpus);
	if (!err)
		err = bpf_map__set_inner_map_fd(skel->maps.rings, ld->rings[0].fd);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.live, env->live_entries);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.evicted, env->evicted_entries);
	if (!err && env->pid_tree)
		err = bpf_map__set_max_entries(skel->maps.tgids, CS_TREE_MAX_ENTRIES);
	if (err) {
		log_err("cannot size BPF maps: %s", strerror(-err));
		return err;
	}
	err = choose_tracepoints(ld, env->tp_mode);
	/* the GPU batch program walks its bins with bpf_loop (5.17) */
	if (!err && libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_loop, NULL) <= 0) {
		log_warn("this kernel has no bpf_loop: the CUPTI library's batches cannot be read (cachescoped --gpu-probes records can)");
		bpf_program__set_autoload(skel->progs.gpu_batch, false);
	}
	if (!err && !env->pid_tree)
		for (i = LOADER_NR_TP - 2; i < LOADER_NR_TP; i++) {
			struct bpf_program *btfp, *classic;

			tp_progs(skel, i, &btfp, &classic);
			bpf_program__set_autoload(btfp, false);
			bpf_program__set_autoload(classic, false);
		}
	return err;
}

/* A sample is one record, or a CPU's stage of several back to back. */
static int ring_sample(void *ctx, void *data, size_t size)
{
	struct loader_ring *r = ctx;
	const size_t rec = sizeof(struct cs_event);
	size_t off;

	if (size <= rec || size % rec) {
		r->consumed++;
		return r->ld->sample_fn(r->ld->sample_ctx, r->cpu, data, size);
	}
	for (off = 0; off < size; off += rec) {
		r->consumed++;
		r->ld->sample_fn(r->ld->sample_ctx, r->cpu, (char *)data + off, rec);
	}
	return 0;
}

void loader_flush(const struct loader *ld)
{
	int fd = bpf_program__fd(ld->skel->progs.flush_stage), cpu;

	if (fd < 0)
		return;
	for (cpu = 0; cpu < ld->nr_cpus; cpu++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .flags = BPF_F_TEST_RUN_ON_CPU,
			    .cpu = cpu);

		bpf_prog_test_run_opts(fd, &opts);	/* offline CPUs: ENXIO */
	}
}

int loader_check_access(const struct loader *ld)
{
	int fd = bpf_program__fd(ld->skel->progs.flush_stage), err;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = 0);
	struct cs_stats *per = calloc(ld->nr_cpus, sizeof(*per));
	__u32 zero = 0;

	if (!per)
		return -ENOMEM;
	err = bpf_map_lookup_elem(bpf_map__fd(ld->skel->maps.stats), &zero, per) ? -errno : 0;
	free(per);
	if (!err && fd >= 0 && bpf_prog_test_run_opts(fd, &opts) && errno != ENXIO)
		err = -errno;
	return err;
}

static int create_rings(struct loader *ld, size_t ring_bytes)
{
	int cpu, fd;

	ld->rings = calloc(ld->nr_cpus, sizeof(*ld->rings));
	if (!ld->rings)
		return -ENOMEM;
	for (cpu = 0; cpu < ld->nr_cpus; cpu++)
		ld->rings[cpu].fd = -1;
	for (cpu = 0; cpu < ld->nr_cpus; cpu++) {
		struct loader_ring *r = &ld->rings[cpu];

		r->ld = ld;
		r->cpu = cpu;
		fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "cs_ring", 0, 0,
				    ring_bytes, NULL);
		if (fd < 0) {
			log_err("cannot create ring buffer for CPU %d (%zu KiB): %s",
				cpu, ring_bytes >> 10, strerror(errno));
			return -errno;
		}
		r->fd = fd;
	}
	return 0;
}

/* Put every ring in the array the programs look up, and in one epoll set. */
static int install_rings(struct loader *ld)
{
	int outer = bpf_map__fd(ld->skel->maps.rings);
	int cpu;

	for (cpu = 0; cpu < ld->nr_cpus; cpu++) {
		struct loader_ring *r = &ld->rings[cpu];

		if (bpf_map_update_elem(outer, &cpu, &r->fd, BPF_ANY)) {
			log_err("cannot install ring buffer for CPU %d: %s", cpu,
				strerror(errno));
			return -errno;
		}
		if (!ld->rb)
			ld->rb = ring_buffer__new(r->fd, ring_sample, r, NULL);
		else if (ring_buffer__add(ld->rb, r->fd, ring_sample, r))
			goto fail;
		if (!ld->rb)
			goto fail;
	}
	return 0;
fail:
	log_err("cannot open ring buffer of CPU %d: %s", cpu, strerror(errno));
	return -errno;
}

static int stack_sample(void *ctx, void *data, size_t size)
{
	struct loader *ld = ctx;

	if (ld->stack_fn)
		ld->stack_fn(ld->sample_ctx, data, size);
	return 0;
}

void loader_on_stacks(struct loader *ld, loader_stack_fn fn)
{
	ld->stack_fn = fn;
}

int loader_py_register(struct loader *ld, uint32_t pid, uint64_t runtime)
{
	int fd = bpf_map__fd(ld->skel->maps.py_procs);

	if (!runtime)
		return bpf_map_delete_elem(fd, &pid) && errno != ENOENT ? -errno : 0;
	return bpf_map_update_elem(fd, &pid, &runtime, BPF_ANY) ? -errno : 0;
}

int loader_want_stacks(struct loader *ld, uint32_t tgid, uint64_t cache, uint64_t until_ns)
{
	struct cs_stack_key k = { .cache = cache, .tgid = tgid };

	if (!until_ns) {
		ld->skel->bss->stack_any = 0;
		return 0;
	}
	if (bpf_map_update_elem(bpf_map__fd(ld->skel->maps.stack_keys), &k, &until_ns, BPF_ANY))
		return -errno;
	ld->skel->bss->stack_any = 1;
	return 0;
}

/* One line of the stack_maps iterator (nonce, start, end, offset, dev,
 * inode, then the path's components innermost first after tabs) as
 * "start end offset path\n" into out; 0 when it is not one of this read's
 * lines or its path is not the file mapped. */
static size_t maps_line(char *line, uint64_t nonce, char *out, size_t n)
{
	unsigned long long nc, start, end, off, ino;
	char path[PATH_MAX], *comp[32], *save = NULL, *c;
	unsigned int dev;
	size_t len = 0;
	struct stat st;
	int at = 0, nc_ = 0, i;

	if (sscanf(line, "%llx %llx %llx %llx %u %llu%n", &nc, &start, &end, &off, &dev, &ino,
		   &at) < 6 || nc != nonce || line[at] != '\t')
		return 0;
	for (c = strtok_r(line + at, "\t", &save); c && nc_ < 32; c = strtok_r(NULL, "\t", &save))
		comp[nc_++] = c;
	path[0] = 0;
	for (i = nc_ - 1; i >= 0 && len + 1 < sizeof(path); i--)
		len += snprintf(path + len, sizeof(path) - len, "/%s", comp[i]);
	if (!nc_ || len >= sizeof(path) || stat(path, &st) || st.st_ino != ino ||
	    st.st_dev != makedev(dev >> 20, dev & 0xfffff))
		return 0;
	len = snprintf(out, n, "%llx %llx %llx %s\n", start, end, off, path);
	return len < n ? len : 0;
}

ssize_t loader_read_maps(struct loader *ld, uint32_t pid, char *buf, size_t n)
{
	struct bpf_link *link = ld->skel ? ld->skel->links.stack_maps : NULL;
	char raw[64 << 10], *line, *save = NULL;
	size_t got = 0, out = 0;
	uint64_t nonce;
	ssize_t r;
	int fd;

	if (!link || !n)
		return -ENOTSUP;
	if (getrandom(&nonce, sizeof(nonce), 0) != sizeof(nonce))
		return -EIO;
	ld->skel->bss->maps_tgid = pid;
	ld->skel->bss->maps_nonce = nonce;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0)
		return -errno;
	while (got + 1 < sizeof(raw) && (r = read(fd, raw + got, sizeof(raw) - 1 - got)) > 0)
		got += r;
	raw[got] = 0;
	close(fd);
	buf[0] = 0;
	for (line = strtok_r(raw, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		out += maps_line(line, nonce, buf + out, n - out);
	return (ssize_t)out;
}

/* The allocation stacks' ring (one for all CPUs: a few records a second),
 * the first the consumer reads: an object's stack record is read before
 * the free record that comes after it (which the stage holds back). */
static int install_stack_ring(struct loader *ld)
{
	int fd = bpf_map__fd(ld->skel->maps.stack_ring);

	ld->rb = ring_buffer__new(fd, stack_sample, ld, NULL);
	if (!ld->rb) {
		log_err("cannot open the stack ring: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

static int populate_filters(struct loader *ld, const struct env *env)
{
	int fd = bpf_map__fd(ld->skel->maps.tgids), i;
	__u32 zero = 0;
	__u8 one = 1;

	if (ld->cgroup_fd >= 0) {
		if (bpf_map_update_elem(bpf_map__fd(ld->skel->maps.cgroup_filter), &zero,
					&ld->cgroup_fd, BPF_ANY)) {
			log_err("cannot use --cgroup %s: %s", env->cgroup_path, strerror(errno));
			return -errno;
		}
		close(ld->cgroup_fd);
		ld->cgroup_fd = -1;
	}
	for (i = 0; i < env->npids; i++) {
		__u32 tgid = env->pids[i];

		if (bpf_map_update_elem(fd, &tgid, &one, BPF_ANY)) {
			log_err("cannot add --pid %d to the filter: %s",
				env->pids[i], strerror(errno));
			return -errno;
		}
	}
	return 0;
}

/* --pid-tree: the roots' descendants alive now, after the fork program is
 * attached.  Walk /proc until a walk adds none: every process in the map
 * then was there before the last walk began, so a child it forks later
 * is the program's, and one it forked earlier was in that walk.  A process
 * gone by the time it was added is taken out again (its exit may have
 * come before its entry). */
static int seed_tree(struct loader *ld, const struct env *env)
{
	int fd = bpf_map__fd(ld->skel->maps.tgids), err, walks = 0;
	size_t n, i, added;
	pid_t *desc;
	__u8 one = 1;

	do {
		err = ptree_descendants("/proc", env->pids, env->npids, &desc, &n);
		if (err) {
			log_err("cannot find the descendants of --pid in /proc: %s",
				strerror(-err));
			return err;
		}
		for (i = added = 0; i < n; i++) {
			__u32 tgid = desc[i];

			if (bpf_map_update_elem(fd, &tgid, &one, BPF_NOEXIST)) {
				if (errno == EEXIST)
					continue;
				log_err("cannot add process %u to the --pid-tree filter: %s",
					tgid, strerror(errno));
				free(desc);
				return -errno;
			}
			added++;
			if (!ptree_alive("/proc", desc[i]))
				bpf_map_delete_elem(fd, &tgid);
		}
		free(desc);
		walks++;
	} while (added && walks < 64);	/* converges in 2 unless a tree keeps forking */
	log_debug("--pid-tree: %zu descendants at start (%d walks of /proc)", n, walks);
	return 0;
}

int loader_start(struct loader *ld, const struct env *env,
		 loader_sample_fn fn, void *ctx)
{
	int err;

	memset(ld, 0, sizeof(*ld));
	ld->stats_fd = -1;
	ld->cgroup_fd = -1;
	ld->sample_fn = fn;
	ld->sample_ctx = ctx;
	libbpf_set_print(libbpf_print);

	err = check_privileges();
	if (!err)
		err = check_btf();
	if (err)
		return err;
	ld->nr_cpus = libbpf_num_possible_cpus();
	if (ld->nr_cpus <= 0) {
		log_err("cannot count possible CPUs: %s", strerror(-ld->nr_cpus));
		return ld->nr_cpus ? ld->nr_cpus : -EINVAL;
	}

	ld->skel = cachescope_bpf__open();
	if (!ld->skel) {
		err = -errno;
		log_err("cannot open BPF object: %s", strerror(errno));
		return err;
	}
	err = configure(ld, env);
	if (err)
		goto cleanup;
	last_libbpf_msg[0] = '\0';
	err = cachescope_bpf__load(ld->skel);
	if (err) {
		log_err("cannot load BPF programs: %s%s%s (rerun with -vv for the verifier log)",
			strerror(-err), last_libbpf_msg[0] ? "; " : "", last_libbpf_msg);
		goto cleanup;
	}
	err = install_stack_ring(ld);
	if (!err)
		err = install_rings(ld);
	if (!err)
		err = populate_filters(ld, env);
	if (err)
		goto cleanup;
	if (env->bpf_stats) {
		ld->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (ld->stats_fd < 0)
			log_warn("cannot enable BPF run-time stats: %s", strerror(errno));
	}
	bpf_program__set_autoattach(ld->skel->progs.flush_stage, false);
	err = cachescope_bpf__attach(ld->skel);
	if (err) {
		log_err("cannot attach BPF programs: %s%s%s", strerror(-err),
			last_libbpf_msg[0] ? "; libbpf: " : "", last_libbpf_msg);
		goto cleanup;
	}
	if (env->pid_tree) {
		err = seed_tree(ld, env);
		if (err)
			goto cleanup;
	}
	return 0;
cleanup:
	loader_stop(ld);
	return err;
}

struct usdt_target {
	struct bpf_program *prog;
	struct bpf_link **link;
	const char *probe;
};

/* Attach each program to its probe of provider in binary, for every
 * process; the skeleton's links are destroyed with it. */
static int attach_usdts(const struct usdt_target *t, size_t n, const char *binary,
			const char *provider)
{
	size_t i;
	int err;

	for (i = 0; i < n; i++) {
		*t[i].link = bpf_program__attach_usdt(t[i].prog, -1, binary, provider,
						      t[i].probe, NULL);
		if (!*t[i].link) {
			err = -errno;
			log_err("cannot attach to USDT probe %s:%s of %s: %s", provider,
				t[i].probe, binary, strerror(-err));
			return err;
		}
	}
	return 0;
}

int loader_attach_usdt(struct loader *ld, const char *binary)
{
	struct cachescope_bpf *k = ld->skel;
	const struct usdt_target t[] = {
		{ k->progs.kv_block_alloc, &k->links.kv_block_alloc, "block_alloc" },
		{ k->progs.kv_prefix_hit, &k->links.kv_prefix_hit, "prefix_hit" },
		{ k->progs.kv_release, &k->links.kv_release, "release" },
		{ k->progs.kv_swap_out, &k->links.kv_swap_out, "swap_out" },
		{ k->progs.kv_swap_in, &k->links.kv_swap_in, "swap_in" },
		{ k->progs.kv_pool, &k->links.kv_pool, "pool" },
	};

	return attach_usdts(t, sizeof(t) / sizeof(t[0]), binary, "kvref");
}

int loader_attach_gpu(struct loader *ld, const char *library, bool per_record)
{
	struct cachescope_bpf *k = ld->skel;
	const struct usdt_target records[] = {
		{ k->progs.gpu_kernel, &k->links.gpu_kernel, "kernel" },
		{ k->progs.gpu_kv_kernel, &k->links.gpu_kv_kernel, "kv_kernel" },
		{ k->progs.gpu_memcpy, &k->links.gpu_memcpy, "memcpy" },
		{ k->progs.gpu_memory, &k->links.gpu_memory, "memory" },
		{ k->progs.gpu_dropped, &k->links.gpu_dropped, "dropped" },
	};
	const struct usdt_target batch[] = {
		{ k->progs.gpu_batch, &k->links.gpu_batch, "batch" },
	};

	if (!per_record && bpf_program__fd(k->progs.gpu_batch) < 0)
		return -EOPNOTSUPP;	/* no bpf_loop: said at load */
	/* the library fires only the probes a tracer is attached to */
	if (per_record)
		return attach_usdts(records, sizeof(records) / sizeof(records[0]), library,
				    "cachescope_gpu");
	return attach_usdts(batch, 1, library, "cachescope_gpu");
}

void loader_detach(struct loader *ld)
{
	if (ld->skel)
		cachescope_bpf__detach(ld->skel);
}

void loader_stop(struct loader *ld)
{
	int cpu;

	ring_buffer__free(ld->rb);
	ld->rb = NULL;
	if (ld->rings) {
		for (cpu = 0; cpu < ld->nr_cpus; cpu++)
			if (ld->rings[cpu].fd >= 0)
				close(ld->rings[cpu].fd);
		free(ld->rings);
		ld->rings = NULL;
	}
	cachescope_bpf__destroy(ld->skel);
	ld->skel = NULL;
	if (ld->cgroup_fd >= 0)
		close(ld->cgroup_fd);
	ld->cgroup_fd = -1;
	if (ld->stats_fd >= 0)
		close(ld->stats_fd);
	ld->stats_fd = -1;
}

int loader_epoll_fd(const struct loader *ld)
{
	return ring_buffer__epoll_fd(ld->rb);
}

int loader_drain(struct loader *ld)
{
	return ring_buffer__consume(ld->rb);
}

uint64_t loader_consumed(const struct loader *ld)
{
	uint64_t sum = 0;
	int cpu;

	for (cpu = 0; cpu < ld->nr_cpus; cpu++)
		sum += ld->rings[cpu].consumed;
	return sum;
}

void loader_set_shed(struct loader *ld, unsigned int mask)
{
	__atomic_store_n(&ld->skel->bss->shed_mask, mask, __ATOMIC_RELAXED);
}

bool loader_can_detach(const struct loader *ld, int tp)
{
	struct bpf_program *btfp, *classic;

	if (tp < 0 || tp >= LOADER_NR_TP || !ld->skel || ld->classic[tp])
		return false;
	tp_progs(ld->skel, tp, &btfp, &classic);
	return bpf_program__fd(btfp) >= 0;
}

int loader_set_attached(struct loader *ld, int tp, bool on)
{
	struct bpf_program *btfp, *classic;
	struct bpf_link **lb, *link;

	if (!loader_can_detach(ld, tp))
		return -EOPNOTSUPP;
	tp_progs(ld->skel, tp, &btfp, &classic);
	lb = btf_link(ld->skel, tp);
	if (on == (*lb != NULL))
		return 0;
	if (!on) {
		/* the kernel takes the program off the tracepoint at once;
		 * a run in flight on another CPU finishes */
		link = *lb;
		*lb = NULL;
		return bpf_link__destroy(link) ?: 1;
	}
	link = bpf_program__attach(btfp);
	if (!link)
		return -errno;
	*lb = link;
	return 1;
}

void loader_set_alloc_duty(struct loader *ld, unsigned int duty)
{
	__atomic_store_n(&ld->skel->bss->alloc_duty_shift,
			 duty > CS_DUTY_SHIFT_MAX ? CS_DUTY_SHIFT_MAX : duty, __ATOMIC_RELAXED);
}

void loader_set_kmalloc_duty(struct loader *ld, unsigned int duty)
{
	__atomic_store_n(&ld->skel->bss->kmalloc_duty_shift,
			 duty > CS_DUTY_SHIFT_MAX ? CS_DUTY_SHIFT_MAX : duty, __ATOMIC_RELAXED);
}

void loader_set_sample_shift(struct loader *ld, unsigned int slot, unsigned int shift)
{
	/* the bss is mapped: the programs read it at their next alloc */
	__atomic_store_n(&ld->skel->bss->cache_shift[slot % CS_SHIFT_SLOTS], (uint8_t)shift,
			 __ATOMIC_RELAXED);
}

void loader_read_stats(const struct loader *ld, struct cs_stats *sum)
{
	struct cs_stats *per = calloc(ld->nr_cpus, sizeof(*per));
	__u32 zero = 0;
	int cpu, i, n = sizeof(*sum) / sizeof(__u64);

	memset(sum, 0, sizeof(*sum));
	if (!per)
		return;
	if (!bpf_map_lookup_elem(bpf_map__fd(ld->skel->maps.stats), &zero, per)) {
		for (cpu = 0; cpu < ld->nr_cpus; cpu++)
			for (i = 0; i < n; i++)
				((__u64 *)sum)[i] += ((__u64 *)&per[cpu])[i];
	}
	free(per);
}

void loader_prog_stats(const struct loader *ld, struct loader_prog_stats *sum,
		       void (*fn)(const struct loader_prog_stats *ps, void *ctx),
		       void *ctx)
{
	struct bpf_program *prog;

	memset(sum, 0, sizeof(*sum));
	bpf_object__for_each_program(prog, ld->skel->obj) {
		struct bpf_prog_info info = {};
		struct loader_prog_stats ps;
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		ps.name = bpf_program__name(prog);
		ps.recursion_misses = info.recursion_misses;
		ps.run_cnt = info.run_cnt;
		ps.run_time_ns = info.run_time_ns;
		sum->recursion_misses += ps.recursion_misses;
		sum->run_cnt += ps.run_cnt;
		sum->run_time_ns += ps.run_time_ns;
		if (fn)
			fn(&ps, ctx);
	}
}

int loader_run_times(const struct loader *ld, struct loader_run_times *rt)
{
	int fd = bpf_map__fd(ld->skel->maps.run_hist), ncpu = libbpf_num_possible_cpus();
	static const char *const names[CS_RUN_PROGS] = {
		"kmem_cache_alloc", "kmem_cache_free", "kmalloc", "kfree",
		"page_add", "page_del",
	};
	uint64_t *v, h[CS_RUN_BUCKETS];
	uint32_t p, b, key;
	int c;

	if (ncpu <= 0)
		return -EINVAL;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	memset(rt, 0, sizeof(*rt));
	for (p = 0; p < CS_RUN_PROGS; p++) {
		uint64_t n = 0, seen = 0;

		rt->prog[p].name = names[p];
		for (b = 0; b < CS_RUN_BUCKETS; b++) {
			key = p * CS_RUN_BUCKETS + b;
			h[b] = 0;
			if (bpf_map_lookup_elem(fd, &key, v))
				continue;
			for (c = 0; c < ncpu; c++)
				h[b] += v[c];
			n += h[b];
		}
		rt->prog[p].runs = n;
		for (b = 0; b < CS_RUN_BUCKETS && n; b++) {
			/* the bucket's middle; the open last bucket says ">=" */
			uint64_t ns = b * CS_RUN_BUCKET_NS + CS_RUN_BUCKET_NS / 2;

			if (!rt->prog[p].p50_ns && (seen + h[b]) * 2 >= n)
				rt->prog[p].p50_ns = ns;
			if (!rt->prog[p].p90_ns && (seen + h[b]) * 10 >= n * 9)
				rt->prog[p].p90_ns = ns;
			seen += h[b];
		}
	}
	free(v);
	return 0;
}

static uint64_t map_entries(int fd)
{
	char key[64], next[64];
	void *prev = NULL;
	uint64_t n = 0;

	while (!bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, sizeof(key));
		prev = key;
		n++;
	}
	return n;
}

void loader_map_evictions(const struct loader *ld, const struct cs_stats *st,
			  uint64_t *live, uint64_t *evicted)
{
	uint64_t in_live = map_entries(bpf_map__fd(ld->skel->maps.live));
	uint64_t in_evicted = map_entries(bpf_map__fd(ld->skel->maps.evicted));
	int64_t l = (int64_t)(st->live_inserted - st->live_deleted - st->track_reclaimed - in_live);
	int64_t e = (int64_t)(st->evicted_inserted - st->evicted_deleted - in_evicted);

	*live = l > 0 ? l : 0;
	*evicted = e > 0 ? e : 0;
}

int loader_cache_name(const struct loader *ld, uint64_t cache, char *buf, size_t n)
{
	struct cs_cache_info info;

	if (bpf_map_lookup_elem(bpf_map__fd(ld->skel->maps.cache_info), &cache, &info))
		return -ENOENT;
	info.name[sizeof(info.name) - 1] = '\0';
	snprintf(buf, n, "%s", info.name);
	return 0;
}

int loader_comm(const struct loader *ld, uint32_t tgid, char *buf, size_t n)
{
	char comm[CS_COMM_LEN];

	if (bpf_map_lookup_elem(bpf_map__fd(ld->skel->maps.task_comm), &tgid, comm)) {
		/* named once per CPU's task cache miss, and the map is an
		 * LRU: a long-lived process may have dropped out of it */
		char path[40];
		FILE *f;

		if ((tgid & CS_TGID_FAMILY) || !tgid)
			return -ENOENT;
		snprintf(path, sizeof(path), "/proc/%u/comm", tgid);
		f = fopen(path, "re");
		if (!f)
			return -ENOENT;
		if (!fgets(comm, sizeof(comm), f)) {
			fclose(f);
			return -ENOENT;
		}
		fclose(f);
		comm[strcspn(comm, "\n")] = '\0';
	}
	comm[sizeof(comm) - 1] = '\0';
	snprintf(buf, n, "%s", comm);
	return 0;
}

int loader_file_name(const struct loader *ld, uint32_t dev, uint64_t ino, uint32_t gen,
		     char *buf, size_t n)
{
	struct cs_file_key key = { .ino = ino, .dev = dev, .gen = gen };
	char name[CS_CACHE_NAME_LEN];

	if (bpf_map_lookup_elem(bpf_map__fd(ld->skel->maps.file_name), &key, name))
		return -ENOENT;
	name[sizeof(name) - 1] = '\0';
	snprintf(buf, n, "%s", name);
	return 0;
}
