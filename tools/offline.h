/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Offline analysis of the daemon's CSV (cachescope cluster, cachescope
 * plot): the rows of one or many files, of one or many hosts, turned back
 * into what the daemon's rules read, then the daemon's own features,
 * rules and DBSCAN over all of them at once.
 */
#ifndef CS_OFFLINE_H
#define CS_OFFLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../daemon/analysis.h"

/* One key of one file: (domain, key, process) as the daemon had it. */
struct off_key {
	unsigned int file;
	unsigned int host;	/* into offline.hosts */
	int domain;		/* enum cs_domain */
	char name[64];
	char comm[16];
	char tgid[16];		/* as the CSV says it: a number or empty */
	char kind[8];		/* process, family, others */
	char file_name[64];	/* page keys: the file's name, when the daemon had it */
	uint64_t ops;		/* all its rows: allocs + frees (page: adds + deletes) */
	uint64_t rows;
	unsigned int counts[LABEL_COUNT];	/* its vectors per label, here */
	unsigned int daemon[LABEL_COUNT];	/* the same rows, as the daemon labelled them */
	struct off_hist *h;	/* the history its rows rebuild */
};

/* Beside each vector of the analysis (same index). */
struct off_vec {
	unsigned int key;
	double t;		/* window start, s since the earliest row of all files */
	int daemon_label;	/* the file's label of the row, or -1 */
};

/* An index of interned names: slots of index + 1, open addressing. */
struct name_ix {
	size_t *slot;
	size_t cap;
};

struct offline {
	struct analysis an;
	struct off_vec *vec;
	size_t vcap;
	struct off_key *keys;
	size_t nkeys, kcap;
	char **hosts;		/* distinct host column values ("" where none) */
	size_t nhosts, hcap;
	struct name_ix host_ix;
	char **files;
	size_t nfiles;
	bool host_missing;	/* a file without the host column */
	uint64_t window_ns;	/* the windows' length (of the first file) */
	double t0, t1;		/* Unix time of the first window start, last window end */
	uint64_t rows;
	uint64_t daemon_vectors, agree;	/* vectors the file labelled, and agreeing */
	uint64_t confusion[LABEL_COUNT][LABEL_COUNT];	/* [the file's][ours] */
	const char *scope;
	char **sites;		/* hot_site names; a vector's top_site is index + 1 */
	size_t nsites, scap;
	struct name_ix site_ix;
	int nclusters;
	/* the private state of the loader (key lookup, refault histories) */
	struct off_state *st;
};

struct offline_params {
	double eps;
	unsigned int min_pts;
	const char *rules_path;	/* NULL: the daemon's defaults */
	const char *scope;	/* only rows of this scope (workload, system), or NULL */
};

/* Read files (CSV written by cachescoped --csv), rebuild each key's
 * history, label every vector with the rules and cluster them all.
 * Returns 0, or -errno with a one-line message in err (a bad file names
 * the file and line). */
int offline_load(struct offline *o, char *const *files, size_t nfiles,
		 const struct offline_params *p, char *err, size_t errlen);
void offline_release(struct offline *o);

/* What the CSV does not carry that the live path reads: one line. */
extern const char offline_missing[];

/* The verbs, called by cachescope's main with argv[0] the verb. */
int offline_cluster_main(int argc, char **argv);
int offline_plot_main(int argc, char **argv);

/* Render the loaded analysis as a self-contained SVG at path (atomically:
 * a temporary file renamed over it).  top: the busiest keys shown in the
 * timeline.  Returns 0 or -errno. */
int svg_write(const struct offline *o, const char *path, unsigned int top);

#endif
