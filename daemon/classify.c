// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The rules.  A vector is checked against them in a fixed order (refault
 * thrash, leak, false sharing): the first that holds names it, and its
 * reason quotes the evidence that made it hold and what contradicts it.
 * Rules rest on shares, ages and persistence rather than on rates, so that a
 * busy CPU that slows the traced work does not change its label.  The thresholds
 * were calibrated on induced behaviour: bench/calibrate.py, results and
 * margins in bench/calibration.md.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "classify.h"
#include "strutil.h"

const struct rule_def rule_defs[RULE_COUNT] = {
	[R_THRASH_REFAULT_SHARE] = { "thrash_refault_share", 0.3,
		"refaulted / inserted pages of the window, or of the file (pool) over its recent 32 windows, at or above this ..." },
	[R_THRASH_MIN_REFAULT_PAGES] = { "thrash_min_refault_pages", 32,
		"... with at least this many pages refaulted over the recent 32 windows ..." },
	[R_THRASH_MIN_SPAN_S] = { "thrash_min_span_s", 1.0,
		"... spread over at least this many seconds, with pages that come back soon: ..." },
	[R_THRASH_MAX_QUIET_S] = { "thrash_max_quiet_s", 1.0,
		"... the last of them at most this long ago (thrashing still, not a second ago) ..." },
	[R_THRASH_MIN_REPEAT_SHARE] = { "thrash_min_repeat_share", 0.25,
		"... this share of them back a second time or more (kv: within a pool's worth of evictions), and ..." },
	[R_THRASH_NEAR_SHARE] = { "thrash_near_share", 0.25,
		"... page cache: median refault distance at most this share of the file LRU pages, is thrash; pages back once each are a cold re-read ..." },
	[R_THRASH_MIN_REFAULT_KIB_S] = { "thrash_min_refault_kib_s", 256,
		"... when it costs something: page cache and kv, at least this many KiB a second refaulted over the span (fewer is cold pages now and then, such as proactive reclaim's) ..." },
	[R_THRASH_MIN_STALL_SHARE] = { "thrash_min_stall_share", 0.01,
		"... and page cache, where the kernel has PSI, memory stalls (PSI some) of the process's cgroup or the system for at least this share of the span: refaults with no stall are the kernel's proactive reclaim coming back" },
	[R_FS_MAX_LOCALITY] = { "false_sharing_max_locality", 0.2,
		"frees on the allocating CPU / frees over the key's last 10 windows below this ..." },
	[R_FS_MIN_SAME_SIZE] = { "false_sharing_min_same_size", 0.92,
		"... with this share of allocs of one size ..." },
	[R_FS_MIN_REMOTE_FREES] = { "false_sharing_min_remote_frees", 8,
		"... at least this many remote frees in the window ..." },
	[R_FS_MAX_LIFETIME_NS] = { "false_sharing_max_lifetime_ns", 1000000,
		"... of objects whose median lifetime, in the window and over the key's history, is at most this (ns) ..." },
	[R_FS_MIN_OWN_SHARE] = { "false_sharing_min_own_share", 0.5,
		"... this share of the remote frees of those windows by the allocating process's own threads (a hand-off inside one program; a socket's peer, a kernel thread or an interrupt freeing on its CPU is I/O between programs) ..." },
	[R_FS_MIN_WINDOWS] = { "false_sharing_min_windows", 5,
		"... in at least this many of them (a handoff that lasts, not a burst) is false sharing" },
	[R_LEAK_MIN_GROWTH_S] = { "leak_min_growth_s", 0.5,
		"old objects (see leak_min_age_s) rose by at least this many per second ..." },
	[R_LEAK_MIN_RISE_S] = { "leak_min_rise_s", 1.5,
		"... over at least this many seconds without falling, when the key's frees are seen (a leak amid churn) ..." },
	[R_LEAK_SEEN_FREE_SHARE] = { "leak_seen_free_share", 0.25,
		"... (frees seen / allocs of the rise above this, or above this / d where the frees are traced 1/d of the time: the key's frees are visible) ..." },
	[R_LEAK_MIN_STEPS] = { "leak_min_steps", 4,
		"... in at least this many windows (steadily, not one jump) ..." },
	[R_LEAK_MIN_STEPS_SAMPLED] = { "leak_min_steps_sampled", 3,
		"... or this many where allocations are traced only part of the time (a leak in bursts rises in a window 1/d as often) ..." },
	[R_LEAK_MIN_STEPS_S] = { "leak_min_steps_s", 1.0,
		"... and at least this many per second of the rise (spread over it, not a flat stretch and a burst) ..." },
	[R_LEAK_MAX_STEP_SHARE] = { "leak_max_step_share", 0.5,
		"... none of them more than this share of the whole rise ..." },
	[R_LEAK_MIN_OBJECTS] = { "leak_min_objects", 8,
		"... by at least this many objects in all ..." },
	[R_LEAK_MIN_SHARE] = { "leak_min_share", 0.01,
		"... and by at least this share of the key's allocs meanwhile (not a residue of heavy churn) ..." },
	[R_LEAK_MAX_QUIET_S] = { "leak_max_quiet_s", 1.0,
		"... the last of them at most this many seconds ago (still rising, not a warm-up that ended) ..." },
	[R_LEAK_BLIND_RISE_S] = { "leak_blind_rise_s", 8.0,
		"... or, when frees seen / allocs of the rise is at or below leak_seen_free_share (frees unseen or absent), over at least this many seconds ..." },
	[R_LEAK_MIN_AGE_S] = { "leak_min_age_s", 0.5,
		"... objects older than this (s) ..." },
	[R_LEAK_AGE_LIFETIMES] = { "leak_age_lifetimes", 10,
		"... and than this many median lifetimes of the key being old ..." },
	[R_LEAK_MIN_CACHE_SHARE] = { "leak_min_cache_share", 0.5,
		"... only while the kernel's own count of the cache grows by this share of the key's growth" },
	[R_LEAK_MIN_WARMUP_S] = { "leak_min_warmup_s", 5.0,
		"a rise too small for the kernel's count to confirm, and any rise of GPU memory, counts only from this long after the key's first event (a process's start-up grows, a caching allocator warms up): what rises after it must still last leak_min_rise_s (or leak_blind_rise_s)" },
	[R_LEAK_CONFIRM_FREE_SHARE] = { "leak_confirm_free_share", 0.93,
		"... or when frees seen / allocs of the rise is at least this, with no unseen frees (the events see the key's frees)" },
	[R_LEAK_UNSEEN_SHARE] = { "leak_unseen_share", 0.1,
		"with the frees sampled in time too (--sample-time-frees, or the budget's last level), a rise the kernel's count cannot confirm is a leak only where the frees it may hide (d - 1 unseen for each old object's free seen, traced 1/d of the time, and one not yet found for each found later by its address) are at most this share of it" },
	[R_LEAK_CACHE_PAID_SHARE] = { "leak_cache_paid_share", 0.9,
		"... or where the kernel's count of the cache grew by at least this share of the rises of all the cache's keys together, each by its last rising row of the last 4 s (the count is the whole cache's: it confirms one key's rise only where it pays for every key's; sampled in time, for their sum less one standard error)" },
	[R_CLUSTER_MIN_SHARE] = { "cluster_min_share", 0.5,
		"a cluster takes an anomaly label when this share of its members carry it" },
};

static const struct {
	const char *name, *short_name;
} label_names[LABEL_COUNT] = {
	[LABEL_NORMAL] = { "normal", "normal" },
	[LABEL_THRASH] = { "thrash", "thrash" },
	[LABEL_FALSE_SHARING] = { "false_sharing", "f_share" },
	[LABEL_LEAK] = { "leak", "leak" },
};

const char *label_name(enum cs_label l)
{
	return (unsigned int)l < LABEL_COUNT ? label_names[l].name : "?";
}

const char *label_short(enum cs_label l)
{
	return (unsigned int)l < LABEL_COUNT ? label_names[l].short_name : "?";
}

const char *label_cause(enum cs_label l, int domain)
{
	switch (l) {
	case LABEL_LEAK:
		return domain == DOM_GPU ? "device memory allocated and not released, past the start-up" :
		       domain == DOM_KV ? "KV blocks taken and not released" :
		       "objects older than their lifetimes keep growing and are not freed";
	case LABEL_THRASH:
		return domain == DOM_GPU ? "blocks copied out of device memory and back in, again and again" :
		       domain == DOM_KV ? "KV blocks swapped out and back in soon after" :
		       "pages evicted and read back soon after, again and again";
	case LABEL_FALSE_SHARING:
		return "objects freed on another CPU than the one that allocated them, one size";
	default:
		return "";
	}
}

enum cs_label label_of(const char *name)
{
	int l;

	for (l = 0; l < LABEL_COUNT; l++)
		if (!strcmp(name, label_names[l].name))
			return l;
	return LABEL_NONE;
}

void rules_defaults(struct rules *r)
{
	int i;

	for (i = 0; i < RULE_COUNT; i++)
		r->v[i] = rule_defs[i].value;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

int rules_set(struct rules *r, const char *assignment)
{
	char buf[128], *eq, *name, *val, *end;
	double v;
	int i;

	if (strlen(assignment) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, assignment);
	eq = strchr(buf, '=');
	if (!eq)
		return -EINVAL;
	*eq = '\0';
	name = trim(buf);
	val = trim(eq + 1);
	errno = 0;
	v = strtod(val, &end);
	if (errno || end == val || *end || !isfinite(v) || v < 0)
		return -EINVAL;
	for (i = 0; i < RULE_COUNT; i++) {
		if (!strcmp(rule_defs[i].name, name)) {
			r->v[i] = v;
			return 0;
		}
	}
	return -ENOENT;
}

/* Lines of any length (a long comment is one line); a NUL ends a line. */
#define RULES_MAX_BYTES (1 << 20)

int rules_load(struct rules *r, const char *path, int *bad_line)
{
	const char *why;

	return rules_load_trusted(r, path, NULL, bad_line, &why);
}

int rules_load_trusted(struct rules *r, const char *path, rules_trust_fn trust, int *bad_line,
		       const char **why)
{
	char *line = NULL, *s;
	size_t cap = 0;
	int n = 0, err = 0, fd;
	FILE *f;

	*bad_line = 0;
	*why = NULL;
	/* a FIFO would block the loop that reloads (SIGHUP): a regular file,
	 * of a size a list of rules has */
	fd = open_regular(path, RULES_MAX_BYTES, NULL);
	if (fd < 0)
		return fd;
	/* the file opened is the one checked */
	if (trust && (err = trust(fd, path, why))) {
		close(fd);
		return err;
	}
	f = fdopen(fd, "r");
	if (!f) {
		err = -errno;
		close(fd);
		return err;
	}
	errno = 0;
	while (getline(&line, &cap, f) >= 0) {
		n++;
		line[strcspn(line, "#\n")] = '\0';
		s = trim(line);
		if (!*s)
			continue;
		err = rules_set(r, s);
		if (err) {
			*bad_line = n;
			goto cleanup;
		}
	}
	if (ferror(f))	/* errno is the failed read's (a directory: EISDIR) */
		err = errno ? -errno : -EIO;
cleanup:
	free(line);
	fclose(f);
	return err;
}

static void fmt_ns(char *buf, size_t n, uint64_t ns)
{
	if (ns >= 1000000000ull)
		snprintf(buf, n, "%.1f s", ns / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, n, "%.1f ms", ns / 1e6);
	else if (ns >= 1000)
		snprintf(buf, n, "%.1f us", ns / 1e3);
	else
		snprintf(buf, n, "%llu ns", (unsigned long long)ns);
}

/* Objects the kernel keeps for a set time by design and frees from a timer:
 * they are not old, let alone leaked, before it runs out.  TIME_WAIT
 * sockets live TCP_TIMEWAIT_LEN (60 s); a SYN_RECV request socket up to
 * about 63 s with the default SYN-ACK retries. */
static const struct {
	const char *prefix;
	uint64_t ns;
} expiry[] = {
	{ "tw_sock_", 65000000000ull },
	{ "request_sock_", 65000000000ull },
};

uint64_t rules_expiry_ns(const char *cache)
{
	size_t i;

	for (i = 0; i < sizeof(expiry) / sizeof(expiry[0]); i++)
		if (!strncmp(cache, expiry[i].prefix, strlen(expiry[i].prefix)))
			return expiry[i].ns;
	return 0;
}

/* Call sites whose objects belong to another object and are freed with
 * it: its own key (and the kernel's count of it) says whether that leaks. */
static const struct {
	const char *site, *keys, *why;	/* keys: a prefix of the keys it is for */
} owned_sites[] = {
	/* per-slab vectors (memcg charges, allocation tags) that live as
	 * long as the slab page they describe */
	{ "alloc_slab_obj_exts", "", "for other caches' slabs: freed with them" },
	/* the names of dentries too long to hold inline (kmalloc; the
	 * dentry itself comes from the same function): cached with their
	 * dentry, which the dcache keeps after the file is closed and the
	 * kernel reclaims; the dentry key counts the ones in use */
	{ "__d_alloc", "kmalloc-", "as dentry names: cached with their dentries (see the dentry key)" },
	/* the security modules' blobs of inodes and files: freed with them */
	{ "security_inode_alloc", "", "for inodes: freed with them, which the kernel reclaims" },
	{ "security_file_alloc", "", "for files: freed with them (see the filp key)" },
	/* socket buffers' data, queued for a reader that has not read it yet
	 * (a database's clients while its backends are busy): freed when
	 * read, a queue bounded by the socket's buffer; a leaked socket's
	 * own objects (filp, sock) are the leak's key */
	{ "__alloc_skb", "kmalloc-", "as socket buffers' data queued for a reader: freed when read, bounded by the socket's buffer (a leaked socket shows on filp and its sock)" },
	/* the bind buckets of the local ports that connects and binds take
	 * (inet_bind_bucket_create, inlined): freed with the last socket on
	 * the port, a TIME_WAIT one 60 s after its close (stress-ng --sock's
	 * connects, +150/s in the cache that eventpoll_epi names where
	 * slabs are merged); a leaked socket shows on filp and its sock */
	{ "__inet_hash_connect", "", "as bind buckets of local ports: freed with the last socket on the port, a TIME_WAIT one 60 s after its close (see the tw_sock_ and sock keys)" },
	{ "inet_csk_get_port", "", "as bind buckets of local ports: freed with the last socket on the port, a TIME_WAIT one 60 s after its close (see the tw_sock_ and sock keys)" },
};

/* Call sites that allocate a new task's own objects as its parent forks
 * it (its signal handlers, signal state, task struct, pid, files and
 * mm): the child uses them on the CPU it runs on and its parent frees
 * them when it reaps it, wherever the parent runs then.  Such objects
 * cross CPUs with the task, not while they are hot: a fork loop's
 * sighand_cache is freed 80% remotely by the forking process's own
 * thread, which is not false sharing. */
static const char *const fork_sites[] = {
	"copy_process", "dup_task_struct", "copy_signal", "copy_sighand", "alloc_pid",
	"dup_fd", "dup_mm", "mm_alloc", "copy_fs", "copy_files", "prepare_creds",
	"copy_creds", "alloc_thread_stack_node",
};

/* Whether sym ("name+0xoff") is in function fn. */
static bool site_in(const char *sym, const char *fn)
{
	size_t len = strlen(fn);

	return !strncmp(sym, fn, len) && sym[len] == '+';
}

/* Whether the key's busiest call site of the window is a fork site. */
static bool forked_objects(const struct wrow *row, const struct kview *kview, char *sym,
			   size_t n)
{
	size_t i;

	if (!row->top_site || !kview || !kview->site_name ||
	    kview->site_name(kview->ctx, row->top_site, sym, n))
		return false;
	for (i = 0; i < sizeof(fork_sites) / sizeof(fork_sites[0]); i++)
		if (site_in(sym, fork_sites[i]))
			return true;
	return false;
}

/* Append printf text to reason. */
/* Frees no tracepoint saw, in % of the window's allocs. */
/* The objects each tracked one stood for (1 where every object is): a
 * minimum count of objects in a rule is a count of tracked ones, so that
 * two sampled frees are not sixteen seen ones. */
static double sample_of(const struct evidence *e)
{
	return e->sample ? e->sample : 1;
}

/* The tracked objects (records) behind the old population's rise: the
 * evidence, whatever each one stands for.  Objects tracked before the
 * sampling rose count whole; where only the estimate is known (CSV), the
 * estimate over the row's sample. */
static double tracked_rise(const struct evidence *e)
{
	const struct wrow *row = e->r;

	return row->old_rise_tracked ? (double)row->old_rise_tracked : row->old_rise / sample_of(e);
}

static double unseen_pct(const struct evidence *e)
{
	const struct wrow *row = e->r;
	const struct wslot *s = row->s;

	return s->allocs ? 100.0 * s->unseen_frees / s->allocs : 100.0;
}

static void add_site(const struct evidence *e, const struct kview *kview,
		     char *reason, size_t n)
{
	const struct wrow *row = e->r;
	char sym[128];

	if (!row->top_site || !kview || !kview->site_name)
		return;
	kview->site_name(kview->ctx, row->top_site, sym, sizeof(sym));
	str_append(reason, n, ", hot site %s", sym);
}

/* A leak's code: the allocation stack most of the key's old sampled
 * objects came from, and the kernel path under it. */
static void add_stack(const struct evidence *e, const struct kview *kview,
		      char *reason, size_t n)
{
	const struct wrow *row = e->r;
	struct stack_top top;

	if (!kview || !kview->leak_stack ||
	    kview->leak_stack(kview->ctx, row->key->tgid, row->key->id, row->age_ns, &top))
		return;
	str_append(reason, n, "; allocated at %s [kernel: %s] (%u of %u sampled old objects)",
	    top.user, top.kernel[0] ? top.kernel : "?", top.with, top.of);
}

/* A refault pattern that is thrash by its shape must cost something to be
 * called so: enough bytes a second refaulted over its span, and (page
 * cache, where the kernel has PSI) memory stalls of the process's cgroup
 * or the system in the same span.  A few pages back now and then, or pages
 * back with nobody stalled, are the kernel's proactive reclaim (DAMON)
 * taking cold pages that then come back, which no operator acts on. */
static enum cs_label thrash_cost(const struct rules *r, int dom, const char *key,
				 const struct evidence *e, const struct kview *kview, uint64_t lru,
				 bool near, double repeat, char *reason, size_t n)
{
	const struct wrow *row = e->r;
	const struct wslot *s = row->s;
	const double *t = r->v;
	double span = row->refault_span_s > e->window_s ? row->refault_span_s : e->window_s;
	double kib_s = (double)row->recent_refault_pages * 4.0 / span, stall = 0;
	char where[160] = "";
	int serr = -ENOTSUP;

	if (kib_s < t[R_THRASH_MIN_REFAULT_KIB_S]) {
		snprintf(reason, n, "normal: %s refaults too few to cost: %.0f KiB/s over %.1f s (%llu pages, %.0f%% back a second time; thrash needs %.0f KiB/s): cold pages coming back now and then, such as proactive reclaim's",
			 key, kib_s, row->refault_span_s, (unsigned long long)row->recent_refault_pages,
			 100 * repeat, t[R_THRASH_MIN_REFAULT_KIB_S]);
		return LABEL_NORMAL;
	}
	if (dom == DOM_PAGE && kview && kview->memory_stall && row->key) {
		uint64_t to = row->start_ns + (uint64_t)(e->window_s * 1e9);
		uint64_t back = (uint64_t)((span + e->window_s) * 1e9);

		serr = kview->memory_stall(kview->ctx, row->key->tgid, to > back ? to - back : 0, to,
					   &stall, where, sizeof(where));
	}
	if (!serr && stall < t[R_THRASH_MIN_STALL_SHARE]) {
		snprintf(reason, n, "normal: %s refaults with no memory stall: %.0f KiB/s refaulted over %.1f s, but %s stalled on memory %.2f%% of the time (PSI some; thrash needs %.1f%%): the kernel's proactive reclaim taking cold pages that come back, not a working set that does not fit",
			 key, kib_s, row->refault_span_s, where, 100 * stall,
			 100 * t[R_THRASH_MIN_STALL_SHARE]);
		return LABEL_NORMAL;
	}
	snprintf(reason, n, "thrash: %s %llu of %llu inserted pages refaulted (%.0f%%); %llu refaulted over %.1f s (%.1f MiB/s), %.0f%% of them back a second time or more; median refault distance %llu evictions",
		 key, (unsigned long long)s->refault_pages, (unsigned long long)s->page_adds,
		 100 * e->refault_share, (unsigned long long)row->recent_refault_pages,
		 row->refault_span_s, kib_s / 1024, 100 * repeat,
		 (unsigned long long)row->refault_dist_p50);
	if (near)
		str_append(reason, n, " of %llu file LRU pages", (unsigned long long)lru);
	if (!serr)
		str_append(reason, n, "; memory stall %.1f%% of the time (%s)", 100 * stall, where);
	else if (dom == DOM_PAGE)
		str_append(reason, n, "; no memory stall figure (%s)",
		    serr == -ENOTSUP ? "no PSI in this kernel or view" : "too little sampled yet");
	return LABEL_THRASH;
}

/* Thrash: pages of a cache too small for its working set come back again
 * and again.  One pass of refaults after a one-off eviction (drop_caches,
 * a memory spike, a restart) is a cold re-read. */
static enum cs_label classify_refaults(const struct rules *r, int dom, const char *key,
				       const struct evidence *e, const struct kview *kview,
				       char *reason, size_t n)
{
	const struct wrow *row = e->r;
	const struct wslot *s = row->s;
	const double *t = r->v;
	double repeat = row->recent_refault_pages ?
		(double)row->recent_repeat_pages / row->recent_refault_pages : 0;
	uint64_t lru = 0;
	bool near;

	/* the kernel's workingset test: evicted and back before the LRU
	 * turned over, so a somewhat larger cache would have kept it */
	bool known = dom == DOM_PAGE && kview && kview->file_lru_pages && !kview->file_lru_pages(kview->ctx, &lru);
	near = known && (double)row->refault_dist_p50 <= t[R_THRASH_NEAR_SHARE] * (double)lru;
	/* the same pages again and again, and (page cache, where the LRU's
	 * size is known) soon after their eviction: pages that come back
	 * once each, however soon, are one pass over them (a cold re-read
	 * after drop_caches, or after proactive reclaim took them) */
	bool again = repeat >= t[R_THRASH_MIN_REPEAT_SHARE];
	bool back = again && (!known || near);

	/* device memory: blocks copied out and back in (CUPTI's callbacks);
	 * "again" is back within a pool's worth of copies out */
	if (dom == DOM_GPU) {
		bool lasts = row->recent_refault_pages >= t[R_THRASH_MIN_REFAULT_PAGES] &&
			     row->refault_span_s >= t[R_THRASH_MIN_SPAN_S] &&
			     row->refault_quiet_s <= t[R_THRASH_MAX_QUIET_S];

		snprintf(reason, n, "%s: %s %llu copies out of device memory and %llu blocks back in from where they went; %llu back over %.1f s, %.0f%% of them within a pool's worth of copies out (%.1f MiB of device memory)%s",
			 lasts && again ? "thrash" : "normal", key, (unsigned long long)s->page_dels,
			 (unsigned long long)s->refault_pages, (unsigned long long)row->recent_refault_pages,
			 row->refault_span_s, 100 * repeat, row->live_bytes / 1048576.0,
			 lasts && again ? "" : again ? ": not sustained" : ": from far, each once");
		return lasts && again ? LABEL_THRASH : LABEL_NORMAL;
	}
	if (row->recent_refault_pages >= t[R_THRASH_MIN_REFAULT_PAGES] &&
	    row->refault_span_s >= t[R_THRASH_MIN_SPAN_S] &&
	    row->refault_quiet_s <= t[R_THRASH_MAX_QUIET_S] && back)
		return thrash_cost(r, dom, key, e, kview, lru, near, repeat, reason, n);
	if (back)	/* soon back, but not for long (yet) */
		snprintf(reason, n, "normal: %s refaults not sustained: %llu pages (%llu refaulted over %.1f s, %.0f%% back a second time, median refault distance %llu evictions",
			 key, (unsigned long long)s->refault_pages,
			 (unsigned long long)row->recent_refault_pages, row->refault_span_s, 100 * repeat,
			 (unsigned long long)row->refault_dist_p50);
	else if (again)	/* again and again, but evicted long before */
		snprintf(reason, n, "normal: %s refaults from far: %llu pages (%llu refaulted over %.1f s, %.0f%% back a second time, but median refault distance %llu evictions",
			 key, (unsigned long long)s->refault_pages,
			 (unsigned long long)row->recent_refault_pages, row->refault_span_s, 100 * repeat,
			 (unsigned long long)row->refault_dist_p50);
	else
		snprintf(reason, n, "normal: %s cold re-read: %llu pages refaulted once (%llu refaulted over %.1f s, %.0f%% back a second time, median refault distance %llu evictions",
			 key, (unsigned long long)(s->refault_pages - s->repeat_pages),
			 (unsigned long long)row->recent_refault_pages, row->refault_span_s, 100 * repeat,
			 (unsigned long long)row->refault_dist_p50);
	if (lru)
		str_append(reason, n, " of %llu file LRU pages", (unsigned long long)lru);
	str_append(reason, n, ")");
	return LABEL_NORMAL;
}

/* Sampling in time (duty.h) over a leak's rise: the alloc programs
 * attached 1/d of each of periods_s periods a second (d 1: all the time),
 * the frees' with them where frees is set (--sample-time-frees).  Its
 * tracked objects come in clusters, one a slice: a leak of one burst a
 * period is caught in 1 period of d, at random.  So the rules
 * allow for what that leaves unseen (sampled_quiet_s, the steps a second)
 * and for the error of its count (rise_low), by the numbers of periods,
 * not of objects. */
struct duty_view {
	double d, periods_s;
	bool frees;
};

/* What sampling in time traced part of the time, for a reason. */
static const char *duty_traced(const struct duty_view *v)
{
	return v->frees ? "allocations and frees" : "allocations";
}

/* kmalloc: a kmalloc-* key's (its program may have been held attached) */
static struct duty_view duty_view_of(const struct evidence *e, const struct kview *kview,
				     bool kmalloc)
{
	const struct wrow *row = e->r;
	struct duty_view v = { 1, 0, false };
	unsigned int shift;

	if (!kview || !kview->alloc_duty)
		return v;
	/* over the rise, the age before it and the quiet after it */
	shift = kview->alloc_duty(kview->ctx, row->old_rise_s + row->old_quiet_s + row->age_ns / 1e9,
				  kmalloc, &v.periods_s);
	if (shift && v.periods_s > 0) {
		v.d = (double)(1u << (shift > 8 ? 8 : shift));
		v.frees = kview->frees_in_time &&
			  kview->frees_in_time(kview->ctx, row->old_rise_s + row->old_quiet_s + row->age_ns / 1e9);
	}
	return v;
}

/* The longest run of periods with no slice that caught a leak of a burst a
 * period, but for 1 chance in 100: ln 0.01 / ln(1 - 1/d) periods (1.7 s at
 * 1/4 of 10 periods a second); none where sampling is not in time. */
static double sampled_quiet_s(const struct duty_view *v)
{
	return v->d > 1 ? ceil(log(0.01) / log(1 - 1 / v->d)) / v->periods_s : 0;
}

/* A lower bound of a rise of old objects counted over rise_s seconds: the
 * count of caught periods is binomial, of n periods at 1/d each, its
 * relative error sqrt((d - 1) / n); one of those below (two left a ramp of
 * 1.5 s that the kernel's count put at a fifth of the events' uncontradicted,
 * stress-ng --sock's epoll entries).  The rise itself where sampling is not
 * in time. */
static double rise_low(const struct duty_view *v, double rise, double rise_s)
{
	double n = rise_s * v->periods_s, err;

	if (v->d <= 1)
		return rise;
	err = n > 0 ? sqrt((v->d - 1) / n) : 1;
	return err < 1 ? rise * (1 - err) : 0;
}

/* A lower bound of the rises of every rising key of the row's cache
 * together (window.c, cache_rises), what the kernel's count of the cache
 * must pay for: sampled in time, each key's rise is counted by its
 * periods, with rise_low's error, and their variances add; one standard
 * error below the sum (the sum itself where sampling is not in time).
 * nginx-leak's two workers at 1/4 of the time, +688 and +424/s over 7.8 s
 * by the events against the count's +986/s: the sum at least +954/s. */
static double cache_rise_low(const struct duty_view *v, const struct wrow *row)
{
	double sd, low;

	if (v->d <= 1 || v->periods_s <= 0)
		return row->cache_rise_per_s;
	sd = sqrt((v->d - 1) / v->periods_s * row->cache_rise_var);
	low = row->cache_rise_per_s - sd;
	return low > 0 ? low : 0;
}

/* The frees that a rise of old objects may hide with the frees sampled in
 * time: for each old object's free seen, d - 1 not seen (an old object
 * dies at any moment of the periods); and for each free found later, when
 * a slice saw its address handed out again, one not found yet (a young
 * object freed just after its slice, by RCU or a worker: sh's pipe
 * inodes, lsm_inode_cache, under sqlite-mmap, their frees 37% found so). */
static double hidden_frees(const struct duty_view *v, const struct wrow *row)
{
	return (v->d - 1) * (double)row->old_rise_old_frees + (double)row->old_rise_unseen;
}

/* The leak test on the events alone: the population of objects older than
 * the row's age rose, in steps, long enough, by enough of the allocations
 * meanwhile and not in one jump, and lately.  fr: frees / allocs over the
 * rise; seen: the key's frees are visible (fr above the rule's share).
 * Sampled in time (v): 1/d of the steps a second, fewer windows with a
 * step (a leak in bursts rises only in a window whose slices caught a
 * burst: fd-leak-60-in-1000's filp in 4 windows of 34 at 1/4, the fourth
 * 8 s after the first), and a quiet as long as periods that no slice
 * caught may run. */
static bool old_rises(const double *t, const struct evidence *e, const struct duty_view *v,
		      double *fr, bool *seen)
{
	const struct wrow *row = e->r;
	double rise_s = row->old_rise_s, quiet = sampled_quiet_s(v), steps = t[R_LEAK_MIN_STEPS];

	if (quiet < t[R_LEAK_MAX_QUIET_S])
		quiet = t[R_LEAK_MAX_QUIET_S];
	if (v->d > 1 && t[R_LEAK_MIN_STEPS_SAMPLED] < steps)
		steps = t[R_LEAK_MIN_STEPS_SAMPLED];
	*fr = row->old_rise_allocs ? (double)row->old_rise_frees / row->old_rise_allocs : 0;
	/* with the frees sampled in time, a free is seen 1 time in d at
	 * least (one at a random moment lands in a slice so often, one soon
	 * after its alloc more): kvref's filp, half of them freed, read
	 * 0.25-0.27 so, and its rise was held to the blind 8 s */
	*seen = *fr > t[R_LEAK_SEEN_FREE_SHARE] / (v->frees ? v->d : 1);
	return row->old_objs > 0 && row->old_steps >= steps &&
	       row->old_steps >= t[R_LEAK_MIN_STEPS_S] / v->d * rise_s &&
	       tracked_rise(e) >= t[R_LEAK_MIN_OBJECTS] &&
	       (double)row->old_rise >= t[R_LEAK_MIN_SHARE] * (double)row->old_rise_allocs &&
	       (double)row->old_max_step <= t[R_LEAK_MAX_STEP_SHARE] * (double)row->old_rise &&
	       row->old_quiet_s <= quiet &&
	       rise_s >= (*seen ? t[R_LEAK_MIN_RISE_S] : t[R_LEAK_BLIND_RISE_S]) &&
	       row->old_rise >= t[R_LEAK_MIN_GROWTH_S] * rise_s;
}

/* Old objects of slab cache key that nobody leaks: owned by others and
 * freed with their owner, vmalloc areas the kernel frees lazily, a cache
 * the kernel reclaims under memory pressure.  True, with the reason, when
 * the rise (what) is one of those. */
static bool kernel_keeps(const char *key, const char *what, const struct evidence *e,
			 const struct kview *kview, char *reason, size_t n)
{
	const struct wrow *row = e->r;

	/* objects owned by others (the slab allocator's own bookkeeping,
	 * dentry names), freed with their owner: they follow it.  The key's
	 * site where the window allocated nothing (sampled in time, most
	 * windows of a slow key hold only frees) */
	uint64_t site = row->top_site ? row->top_site : row->key_top_site;

	if (site && kview && kview->site_name) {
		char sym[128];
		size_t i;

		kview->site_name(kview->ctx, site, sym, sizeof(sym));
		for (i = 0; i < sizeof(owned_sites) / sizeof(owned_sites[0]); i++) {
			if (site_in(sym, owned_sites[i].site) &&
			    !strncmp(key, owned_sites[i].keys, strlen(owned_sites[i].keys))) {
				snprintf(reason, n, "normal: %s %s, allocated by %s %s",
					 key, what, sym, owned_sites[i].why);
				return true;
			}
		}
	}
	/* vmalloc areas: the kernel frees them lazily, in batches (and the
	 * kernel stacks of exited tasks only after an RCU grace period, which
	 * lazy RCU stretches to seconds): in use by no process */
	if (!strcmp(key, "vmap_area")) {
		snprintf(reason, n, "normal: %s %s: vmalloc areas the kernel frees lazily, in batches",
			 key, what);
		return true;
	}
	/* page-cache helpers (buffer_head, radix_tree_node), inodes: freed
	 * when memory is short; only dentries have a count of those in use */
	if (strcmp(key, "dentry") && kview && kview->cache_reclaimable &&
	    kview->cache_reclaimable(kview->ctx, key) == 1) {
		snprintf(reason, n, "normal: %s %s, in a cache the kernel reclaims under memory pressure: cached, not leaked",
			 key, what);
		return true;
	}
	return false;
}

/* A rise of old objects in slab cache key (what; growth per s over span s)
 * against the kernel's own count of the cache: confirmed, contradicted (frees
 * the tracepoints did not see), or too coarse to tell, and then trusted only
 * where the events see the key's frees or the rise outlasts its start-up. */
static enum cs_label leak_by_count(const double *t, const char *key, const char *what,
				   double growth, double fr, bool seen, const struct evidence *e,
				   const struct duty_view *v, const struct kview *kview,
				   char *reason, size_t n)
{
	const struct wrow *row = e->r;
	const struct wslot *s = row->s;
	double rise_s = row->old_rise_s, low = rise_low(v, growth, rise_s), kgrowth, got, startup;
	bool coarse, counted, paid;
	long res;
	int err;

	err = kview && kview->cache_growth ?
	      kview->cache_growth(kview->ctx, key, rise_s, &kgrowth, &got) : -ENOSYS;
	res = !err && kview->cache_resolution ? kview->cache_resolution(kview->ctx, key) : 0;
	/* the kernel's count moves in steps of whole slabs: it can only
	 * contradict a rise larger than the objects it cannot see, or by
	 * falling further than that (a smaller fall is the cache's other
	 * users filling and emptying their slabs) */
	coarse = !err && res > 0 && (double)row->old_rise <= (double)res &&
		 kgrowth * got >= -(double)res;
	/* sampled in time, the events' count is checked by its lower bound */
	if (!err && !coarse && kgrowth < t[R_LEAK_MIN_CACHE_SHARE] * low) {
		snprintf(reason, n, "normal: %s %s by events, but the kernel's count of cache %s %+.0f/s over %.1f s: frees the tracepoints did not see",
			 key, what, key, kgrowth, got);
		if (v->d > 1)
			str_append(reason, n, " (%s traced 1/%.0f of the time: the events' rise at least %+.0f/s)",
				   duty_traced(v), v->d, low);
		if (s->unseen_frees)
			str_append(reason, n, " (unseen frees %.0f%% of allocs)", unseen_pct(e));
		return LABEL_NORMAL;
	}
	/* unconfirmed, and frees may have been lost to full rings */
	if (coarse && row->old_rise_dropped) {
		snprintf(reason, n, "normal: %s %s, but records were dropped meanwhile and the kernel's count (in slabs hiding %ld) cannot confirm it: lost frees could make it",
			 key, what, res);
		return LABEL_NORMAL;
	}
	/* unconfirmed, and tracked objects freed between the slices count
	 * as live until a slice sees their addresses again: a rise they
	 * can make (sqlite's kmalloc-16 under --sample-time 4
	 * --sample-time-frees: +46/s for 5.8 s, the cache's count flat).
	 * Where the frees it may hide (hidden_frees) are a small part of it,
	 * or the kernel's count rose with it all the same within what its
	 * slabs hide (kvref's filp: +19/s to the events' +21/s over 7.8 s),
	 * the rise is the key's own.  A count that confirms it is the whole
	 * cache's: another key's leak makes it grow (nginx's sockets under
	 * nginx-leak, while wrk's filp rose by frees it missed); it confirms
	 * the rise only where it pays for the rises of every key of the
	 * cache together (window.c, cache_rises: nginx's two workers' filp,
	 * +361 and +421/s, against the count's +822/s) */
	counted = coarse && kgrowth >= t[R_LEAK_MIN_CACHE_SHARE] * low;
	paid = !err && !coarse && row->cache_rise_per_s > 0 && kgrowth > 0 &&
	       kgrowth >= t[R_LEAK_CACHE_PAID_SHARE] * cache_rise_low(v, row);
	if (v->frees && !counted && !paid &&
	    hidden_frees(v, row) > t[R_LEAK_UNSEEN_SHARE] * low * rise_s) {
		snprintf(reason, n, "normal: %s %s, but frees are traced 1/%.0f of the time and ",
			 key, what, v->d);
		if (coarse)
			str_append(reason, n, "the kernel's count (%+.0f/s, in slabs hiding %ld) cannot confirm it",
				   kgrowth, res);
		else if (!err && row->cache_rising_keys > 1)
			str_append(reason, n, "the kernel's count (%+.0f/s over %.1f s) is the whole cache's and pays for less than the rises of its %u rising keys together (%+.0f/s, at least %+.0f/s)",
				   kgrowth, got, row->cache_rising_keys, row->cache_rise_per_s,
				   cache_rise_low(v, row));
		else if (!err)
			str_append(reason, n, "the kernel's count (%+.0f/s over %.1f s) is the whole cache's, not the key's",
				   kgrowth, got);
		else
			str_append(reason, n, "there is no kernel count of this cache to confirm it");
		str_append(reason, n, ": objects freed between the slices could make it (old objects seen freed %llu, frees found later %llu: about %.0f unseen)",
			   (unsigned long long)row->old_rise_old_frees,
			   (unsigned long long)row->old_rise_unseen, hidden_frees(v, row));
		return LABEL_NORMAL;
	}
	/* unconfirmed: trust the events where they see the key's frees
	 * (nothing unseen), or the part of the rise past the key's start-up:
	 * it must last as long as a rise must, after the start-up is over */
	startup = row->old_warmup_s < t[R_LEAK_MIN_WARMUP_S] ?
		  t[R_LEAK_MIN_WARMUP_S] - row->old_warmup_s : 0;
	if (coarse && rise_s - startup < (seen ? t[R_LEAK_MIN_RISE_S] : t[R_LEAK_BLIND_RISE_S]) &&
	    (fr < t[R_LEAK_CONFIRM_FREE_SHARE] || s->unseen_frees)) {
		snprintf(reason, n, "normal: %s %s, %.1f s after the key's first event: start-up growth that the kernel's count (in slabs hiding %ld) cannot confirm",
			 key, what, row->old_warmup_s, res);
		return LABEL_NORMAL;
	}
	snprintf(reason, n, "leak: %s %s", key, what);
	if (coarse)
		str_append(reason, n, "; cache %s %+.0f/s over %.1f s, too coarse to see %lld objects (slabs hide %ld)",
		    key, kgrowth, got, (long long)row->old_rise, res);
	else if (!err)
		str_append(reason, n, "; cache %s %+.0f/s over %.1f s", key, kgrowth, got);
	else
		str_append(reason, n, "; no kernel count of this cache to check");
	if (v->frees && paid && row->cache_rising_keys > 1)
		str_append(reason, n, ", the rises of its %u rising keys together %+.0f/s",
			   row->cache_rising_keys, row->cache_rise_per_s);
	if (v->d > 1)
		str_append(reason, n, "; %s traced 1/%.0f of the time", duty_traced(v), v->d);
	if (v->frees)	/* only where sampling is in time (duty_view_of) */
		str_append(reason, n, " (old objects seen freed meanwhile %llu, frees found later %llu)",
			   (unsigned long long)row->old_rise_old_frees,
			   (unsigned long long)row->old_rise_unseen);
	if (s->unseen_frees)
		str_append(reason, n, "; unseen frees %.0f%% of allocs", unseen_pct(e));
	add_site(e, kview, reason, n);
	return LABEL_LEAK;
}

/* Leak: live objects that grow and are not freed.  The test is on the old
 * objects (older than a second and ten median lifetimes): their population
 * rises steadily, in many steps, and still rises now.  Where the key's
 * frees are seen (a leak amid churn), two seconds of that rise are enough.
 * Where they are not (a pure leak, or frees no tracepoint reports: kfree_rcu
 * batches drain every 5 s), only a rise longer than that drain is a leak.
 * For slab keys the kernel's own count of the cache must grow too. */
static enum cs_label classify_leak(const struct rules *r, int dom, const char *key,
				   const struct evidence *e, const struct kview *kview,
				   char *reason, size_t n)
{
	const struct wrow *row = e->r;
	const double *t = r->v;
	struct duty_view v;
	enum cs_label label;
	double growth, fr;
	char what[200];
	bool seen;

	v = duty_view_of(e, kview, dom == DOM_SLAB && row->key && row->key->id < CS_KMALLOC_ID_MAX);
	if (!old_rises(t, e, &v, &fr, &seen))
		return LABEL_NONE;
	growth = row->old_rise / row->old_rise_s;
	snprintf(what, sizeof(what), "%lld objects older than %.1f s, %+.0f/s for %.1f s%s (frees/allocs %.2f)",
		 (long long)row->old_objs, row->age_ns / 1e9, growth, row->old_rise_s,
		 seen ? " amid churn" : "", fr);
	/* a family counts what processes allocate in their first second; a
	 * process that lives on keeps its start-up's objects (a database's
	 * backends, a compiler's writeback), so the family's old objects rise
	 * with every process that grows up.  A leak of a process shows on its
	 * own key once it is past that second */
	if (e->family) {
		snprintf(reason, n, "normal: %s %s of young processes: what each allocated in its first second and keeps as it grows up; a process's own leak shows on its own key",
			 key, what);
		return LABEL_NORMAL;
	}
	if (dom != DOM_SLAB) {
		if (row->old_rise_dropped) {
			snprintf(reason, n, "normal: %s %s, but records were dropped meanwhile: lost releases could make it",
				 key, what);
			return LABEL_NORMAL;
		}
		/* device memory: a caching allocator (PyTorch's) or a KV pool
		 * (vLLM's) grows at the start and then stays; only the part of
		 * the rise past the key's start-up, as long as a rise must last,
		 * is a leak */
		if (dom == DOM_GPU) {
			double startup = row->old_warmup_s < t[R_LEAK_MIN_WARMUP_S] ?
					 t[R_LEAK_MIN_WARMUP_S] - row->old_warmup_s : 0;

			if (row->old_rise_s - startup < (seen ? t[R_LEAK_MIN_RISE_S] : t[R_LEAK_BLIND_RISE_S])) {
				snprintf(reason, n, "normal: %s %s, %.1f s after the key's first event: a caching allocator's or a pool's start-up growth, not yet past it",
					 key, what, row->old_warmup_s);
				return LABEL_NORMAL;
			}
			snprintf(reason, n, "leak: %s %s, past the start-up; %.1f MiB live", key, what,
				 row->live_bytes / 1048576.0);
			return LABEL_LEAK;
		}
		snprintf(reason, n, "leak: %s %s", key, what);
		return LABEL_LEAK;
	}
	if (kernel_keeps(key, what, e, kview, reason, n))
		return LABEL_NORMAL;
	label = leak_by_count(t, key, what, growth, fr, seen, e, &v, kview, reason, n);
	if (label == LABEL_LEAK)
		add_stack(e, kview, reason, n);
	return label;
}

static enum cs_label classify_host(const struct rules *r, int dom, const char *key,
				   const struct fvec *f, const struct evidence *e,
				   const struct kview *kview, char *reason, size_t n)
{
	const struct wrow *row = e->r;
	const struct wslot *s = row->s;
	const double *t = r->v;
	double locality = f->raw[FEAT_LOCALITY];
	char life[32], site[128];
	enum cs_label l;
	bool handoff;

	/* a file (pool) is thrashing for as long as its recent windows say
	 * so, including windows that inserted pages (used blocks) without a
	 * refault */
	if ((s->refault_pages && e->refault_share >= t[R_THRASH_REFAULT_SHARE]) ||
	    ((s->page_adds || (dom == DOM_KV && e->ops)) && row->recent_page_adds &&
	     row->recent_refault_pages >= t[R_THRASH_REFAULT_SHARE] * row->recent_page_adds)) {
		l = classify_refaults(r, dom, key, e, kview, reason, n);
		if (l != LABEL_NORMAL)
			return l;
		/* a cold re-read: the slab rules may still name something */
	}
	l = classify_leak(r, dom, key, e, kview, reason, n);
	if (l != LABEL_NONE)
		return l;
	/* objects handed between CPUs while hot: many short-lived objects
	 * freed remotely by the program's own threads; a burst of old objects
	 * freed elsewhere (process exit, reclaim) is not it, nor what a
	 * family of processes that live under a second hands over as they
	 * are born and die (SIGCHLD's sigqueue, freed by the parent on its
	 * CPU), nor what another process frees on its CPU: a server's
	 * replies read by its clients, the I/O between programs, cross CPUs
	 * wherever the scheduler puts the two */
	handoff = s->remote_frees && !e->family && row->recent_locality < t[R_FS_MAX_LOCALITY] &&
		  row->recent_windows >= t[R_FS_MIN_WINDOWS] &&
		  row->same_size_share >= t[R_FS_MIN_SAME_SIZE] &&
		  s->remote_frees >= t[R_FS_MIN_REMOTE_FREES] * sample_of(e) &&
		  row->lifetime_p50_ns <= t[R_FS_MAX_LIFETIME_NS] &&
		  row->key_lifetime_p50_ns <= t[R_FS_MAX_LIFETIME_NS];
	if (handoff && row->recent_own_share >= t[R_FS_MIN_OWN_SHARE] &&
	    forked_objects(row, kview, site, sizeof(site))) {
		snprintf(reason, n, "normal: %s %.0f%% of %llu frees on another CPU than the alloc, allocated by %s: a new task's own objects, used on its CPU and freed as its parent reaps it (a fork loop), not handed over while hot",
			 key, 100 * (1 - locality), (unsigned long long)(s->frees - s->unseen_frees),
			 site);
		return LABEL_NORMAL;
	}
	if (handoff && row->recent_own_share >= t[R_FS_MIN_OWN_SHARE]) {
		fmt_ns(life, sizeof(life), row->lifetime_p50_ns);
		snprintf(reason, n, "false_sharing: %s %.0f%% of %llu frees on another CPU than the alloc (%.0f/s; %.0f%% over its last %u windows, %.0f%% of those by its own threads), %.0f%% of allocs one size, median lifetime %s",
			 key, 100 * (1 - locality), (unsigned long long)(s->frees - s->unseen_frees),
			 s->remote_frees / e->window_s, 100 * (1 - row->recent_locality),
			 row->recent_windows, 100 * row->recent_own_share,
			 100 * row->same_size_share, life);
		if (s->unseen_frees)
			str_append(reason, n, "; %llu frees unseen (CPU unknown)",
			    (unsigned long long)s->unseen_frees);
		add_site(e, kview, reason, n);
		return LABEL_FALSE_SHARING;
	}
	if (s->refault_pages && (e->refault_share >= t[R_THRASH_REFAULT_SHARE] ||
				 (row->recent_page_adds && row->recent_refault_pages >=
				  t[R_THRASH_REFAULT_SHARE] * row->recent_page_adds)))
		return LABEL_NORMAL;	/* the cold re-read's reason stands */
	fmt_ns(life, sizeof(life), row->lifetime_p50_ns);
	snprintf(reason, n, "normal: %s %.0f ops/s, locality %.2f, live %+.0f/s, median lifetime %s",
		 key, f->raw[FEAT_FREQ], locality, row->growth_per_s, life);
	if (s->unseen_frees)
		str_append(reason, n, ", %llu unseen frees", (unsigned long long)s->unseen_frees);
	if (handoff)
		str_append(reason, n, "; %.0f%% freed on other CPUs over its last %u windows, %.0f%% of those by its own threads (the rest by other processes: I/O between programs)",
		    100 * (1 - row->recent_locality), row->recent_windows, 100 * row->recent_own_share);
	return LABEL_NORMAL;
}

/* What the process did on the GPU in the same window, after the reason of
 * an anomaly: the host-GPU join, in words. */
static void gpu_evidence(const struct evidence *e, char *reason, size_t n)
{
	const struct wrow *row = e->r;
	size_t len = strlen(reason);

	if ((!row->tgid_gpu_kernel_ns && !row->tgid_gpu_copy_bytes) || len + 1 >= n)
		return;
	snprintf(reason + len, n - len, "; GPU meanwhile: %.1f ms kernels (%.1f ms KV), %.2f MB copied",
		 row->tgid_gpu_kernel_ns / 1e6, row->tgid_gpu_kv_kernel_ns / 1e6, row->tgid_gpu_copy_bytes / 1e6);
}

enum cs_label classify(const struct rules *r, int dom, const char *key,
		       const struct fvec *f, const struct evidence *e,
		       const struct kview *kview, char *reason, size_t n)
{
	enum cs_label l = classify_host(r, dom, key, f, e, kview, reason, n);

	if (l == LABEL_NORMAL)
		return l;
	/* counts that rest on sampled objects (the sampler, --budget) say so */
	if (dom == DOM_SLAB && sample_of(e) > 1)
		str_append(reason, n, "; from 1 in %u objects tracked (sampled: counts estimated)",
			   (unsigned int)sample_of(e));
	gpu_evidence(e, reason, n);
	return l;
}

enum cs_label classify_cluster(const struct rules *r, const unsigned int *counts,
			       unsigned int members)
{
	unsigned int i, best = LABEL_NORMAL + 1;

	for (i = best + 1; i < LABEL_COUNT; i++)
		if (counts[i] > counts[best])
			best = i;
	if (members && counts[best] &&
	    counts[best] >= r->v[R_CLUSTER_MIN_SHARE] * members)
		return best;
	return LABEL_NORMAL;
}

int rules_from(struct rules *r, const char *path, rules_trust_fn trust,
	       const char *const *args, int nargs, char *msg, size_t n)
{
	const char *why;
	int i, err, line;

	rules_defaults(r);
	if (path && (err = rules_load_trusted(r, path, trust, &line, &why))) {
		if (err == -EPERM && why)
			snprintf(msg, n, "refusing --rules %s: %s (it must be root's and writable by root alone)",
				 path, why);
		else if (line)
			snprintf(msg, n, "invalid --rules %s: line %d: %s", path, line,
				 err == -ENOENT ? "no such rule" : "expected NAME = VALUE >= 0");
		else if (err == -EINVAL)
			snprintf(msg, n, "cannot read --rules %s: not a regular file", path);
		else
			snprintf(msg, n, "cannot read --rules %s: %s", path, strerror(-err));
		return err;
	}
	for (i = 0; i < nargs; i++) {
		err = rules_set(r, args[i]);
		if (err) {
			snprintf(msg, n, "invalid --rule '%s': %s", args[i],
				 err == -ENOENT ? "no such rule" : "expected NAME=VALUE >= 0");
			return err;
		}
	}
	return 0;
}
