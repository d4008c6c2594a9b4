/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Principal components of a few dimensions, for cachescope plot's scatter.
 */
#ifndef CS_PCA_H
#define CS_PCA_H

#include <stddef.h>

/* The first two principal components of n points of dim doubles
 * (row-major; centred, not scaled): out2 gets 2 coordinates per point, var2
 * (may be NULL) the share of the variance each component explains, load
 * (may be NULL) dim x 2 loadings (the unit eigenvectors, row d for feature
 * d; each with its largest entry positive).  Returns 0 or -EINVAL (dim
 * outside 1..8). */
int pca2(const double *pts, size_t n, unsigned int dim, double *out2, double *var2,
	 double *load);

#endif
