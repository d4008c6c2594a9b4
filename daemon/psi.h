/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Memory pressure stall information (PSI): the kernel's own measure of what
 * memory scarcity costs, the time tasks spent stalled on memory (reclaim,
 * refaults of their working set), as /proc/pressure/memory and a cgroup
 * v2 directory's memory.pressure give it ("some ... total=US": at least
 * one task stalled, microseconds since boot).  Meta's Senpai/TMO steer by
 * it.  A thrash label must cost something: refaults that coincide with no
 * stall where PSI exists are the kernel's proactive reclaim taking cold
 * pages that then come back, not a working set that does not fit.
 *
 * The tracker keeps, per source (the system, or a cgroup), the totals read
 * at the daemon's ticks over the last PSI_KEEP_NS, so a rule can ask how
 * much of a span was stalled.  Pure but for psi_read, which reads a file.
 */
#ifndef CS_PSI_H
#define CS_PSI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PSI_KEEP_NS (30 * 1000000000ull)	/* history a source keeps */
#define PSI_SAMPLES 512				/* at most, a source */
#define PSI_SOURCES 64				/* cgroups tracked at once, the system included */

/* "some avg10=... total=US\nfull ... total=US\n": the two totals.
 * 0, or -EINVAL when there is no "some" line with a total. */
int psi_parse(const char *text, uint64_t *some_us, uint64_t *full_us);
/* Read and parse the file at path.  0, or -errno (-ENOENT: no PSI there). */
int psi_read(const char *path, uint64_t *some_us, uint64_t *full_us);

#define PSI_SYSTEM "/proc/pressure/memory"

/* The mount point of the cgroup v2 hierarchy (mountinfo's cgroup2 line:
 * /sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid host) into buf.
 * 0, or -ENOENT. */
int psi_cgroup2_root(const char *mountinfo, char *buf, size_t n);

struct psi_source {
	char path[256];			/* the pressure file */
	uint64_t last_used_ns;
	struct {
		uint64_t at_ns, some_us;
	} s[PSI_SAMPLES];
	unsigned int head, n;		/* ring */
};

struct psi_track {
	struct psi_source *src[PSI_SOURCES];
	unsigned int n;
	uint64_t read_errors;
};

void psi_track_release(struct psi_track *t);
/* Note the "some" total of the source at path, read at at_ns. */
void psi_track_note(struct psi_track *t, const char *path, uint64_t at_ns, uint64_t some_us);
/* The share of [from_ns, to_ns] that path's tasks stalled on memory,
 * from the samples nearest inside the span (at least two, at least
 * min_span_ns apart).  0 with *share set, -ENOENT when the source or
 * enough samples are missing. */
int psi_track_share(const struct psi_track *t, const char *path, uint64_t from_ns,
		    uint64_t to_ns, uint64_t min_span_ns, double *share);
/* Forget sources not asked about since before older_ns. */
void psi_track_gc(struct psi_track *t, uint64_t older_ns);
/* The paths the tracker holds (to read them again at a tick). */
static inline unsigned int psi_track_sources(const struct psi_track *t)
{
	return t->n;
}

#endif
