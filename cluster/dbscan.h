/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Exact DBSCAN over points in a few dimensions (Euclidean), with a grid
 * index.  A plain C library: no daemon, BPF or logging dependency.
 *
 * Definitions follow scikit-learn's DBSCAN: q is a neighbour of p when
 * sum((p_i - q_i)^2) <= eps^2 (computed in double, dimensions in order,
 * each square rounded before it is added, eps^2 rounded too); p is a core
 * point when it has at least min_pts neighbours, itself included.  (That is
 * the test sklearn's kd-tree applies point by point; its shortcut for whole
 * tree nodes compares an unsquared bound with eps, so for a pair one bit
 * beyond eps^2 sklearn can, rarely, say otherwise.)
 * Core points within eps of each other share a cluster; a non-core point
 * within eps of a core point is a border point of one such cluster; every
 * other point is noise.
 */
#ifndef CS_DBSCAN_H
#define CS_DBSCAN_H

#include <stddef.h>
#include <stdint.h>

#define DBSCAN_MAX_DIM 8
#define DBSCAN_NOISE (-1)

/*
 * Cluster n points of dim doubles each (row-major in points).
 *
 * labels[i] receives the cluster of point i (0, 1, ...) or DBSCAN_NOISE.
 * Clusters are numbered in the order of their lowest-index core point.  A
 * border point near several clusters joins the lowest-numbered one.
 * is_core, when not NULL, receives 1 for core points and 0 otherwise.
 *
 * Returns the number of clusters, or -EINVAL (n == 0 is fine and returns 0;
 * dim outside 1..DBSCAN_MAX_DIM, eps not finite or <= 0, min_pts == 0, a
 * non-finite coordinate, or points or labels NULL with n > 0 are errors) or
 * -ENOMEM (out of memory, or n > INT_MAX, more points than labels can
 * number).  labels and is_core are written only on success.  Thread-safe:
 * no state outside the call.
 */
int dbscan_run(const double *points, size_t n, unsigned int dim, double eps,
	       unsigned int min_pts, int *labels, uint8_t *is_core);

#endif
