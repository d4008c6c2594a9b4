/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The keeper: where the CSV's or the socket's directory is not writable by
 * uid 0's mode bits, a process of its own, forked at the drop, alone keeps
 * CAP_DAC_OVERRIDE for the steps that need it (the socket bound and its
 * descriptor handed over, the CSV's files moved up at its bound, the CSV
 * renamed into place or its temporary file removed, the socket removed at
 * exit).  The daemon keeps none; the keeper
 * holds no descriptor but its end of a socket pair, reads one byte per
 * request and knows its paths from the fork, so a compromised daemon can
 * ask it for nothing else.
 */
#ifndef CS_KEEPER_H
#define CS_KEEPER_H

#include <sys/types.h>

struct keeper {
	pid_t pid;	/* 0: none */
	int fd;
};

/* Fork the keeper for these paths (csv_tmp and csv_path NULL without a
 * CSV, sock NULL without a socket; csv_keep older files kept at the CSV's
 * bound).  Call it with CAP_DAC_OVERRIDE and CAP_SETPCAP still effective.
 * 0 or -errno. */
int keeper_start(struct keeper *k, const char *csv_tmp, const char *csv_path, int csv_keep,
		 const char *sock);
/* The control socket bound and listening (control_listen), as a
 * descriptor of this process; or -errno. */
int keeper_listen(struct keeper *k);
/* The CSV's files moved up at its bound (csv_shift_files) and a new
 * temporary file made, its descriptor into *fd; 0 or -errno. */
int keeper_rotate_csv(struct keeper *k, int *fd);
/* The CSV's temporary file renamed over its path (and the directory
 * synced; after a rotation the files moved up): 1 when that removed or
 * replaced a file, 0, or -errno. */
int keeper_commit_csv(struct keeper *k);
/* The CSV's temporary file removed; 0 or -errno. */
int keeper_abort_csv(struct keeper *k);
/* The socket it bound removed (if it is still the one); 0 or -errno. */
int keeper_unlink_socket(struct keeper *k);
/* Tell it to go and reap it.  Nothing for a keeper never started. */
void keeper_stop(struct keeper *k);

#endif
