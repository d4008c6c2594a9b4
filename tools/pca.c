// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * PCA for the plot's scatter (pca.h): the covariance's two largest
 * eigenvectors, by Jacobi rotations.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <string.h>
#include "pca.h"

int pca2(const double *pts, size_t n, unsigned int dim, double *out2, double *var2,
	 double *load)
{
	double mean[8] = { 0 }, c[8][8] = { { 0 } }, v[8][8] = { { 0 } }, total = 0;
	unsigned int i, j, k, sweep, best[2] = { 0, 1 };
	size_t p;

	if (dim < 1 || dim > 8)
		return -EINVAL;
	for (p = 0; p < n; p++)
		for (i = 0; i < dim; i++)
			mean[i] += pts[p * dim + i] / (double)n;
	for (p = 0; p < n; p++)
		for (i = 0; i < dim; i++)
			for (j = 0; j < dim; j++)
				c[i][j] += (pts[p * dim + i] - mean[i]) *
					   (pts[p * dim + j] - mean[j]) / (double)n;
	for (i = 0; i < dim; i++)
		v[i][i] = 1;
	for (sweep = 0; sweep < 64; sweep++) {
		double off = 0;

		for (i = 0; i < dim; i++)
			for (j = i + 1; j < dim; j++)
				off += c[i][j] * c[i][j];
		if (off < 1e-30)
			break;
		for (i = 0; i < dim; i++) {
			for (j = i + 1; j < dim; j++) {
				double th, t, cs, sn;

				if (fabs(c[i][j]) < 1e-300)
					continue;
				th = (c[j][j] - c[i][i]) / (2 * c[i][j]);
				t = (th >= 0 ? 1 : -1) / (fabs(th) + sqrt(th * th + 1));
				cs = 1 / sqrt(t * t + 1);
				sn = t * cs;
				for (k = 0; k < dim; k++) {	/* c = c * R */
					double a = c[k][i], b = c[k][j];

					c[k][i] = cs * a - sn * b;
					c[k][j] = sn * a + cs * b;
				}
				for (k = 0; k < dim; k++) {	/* c = R^T * c */
					double a = c[i][k], b = c[j][k];

					c[i][k] = cs * a - sn * b;
					c[j][k] = sn * a + cs * b;
				}
				for (k = 0; k < dim; k++) {
					double a = v[k][i], b = v[k][j];

					v[k][i] = cs * a - sn * b;
					v[k][j] = sn * a + cs * b;
				}
			}
		}
	}
	for (i = 0; i < dim; i++)
		total += c[i][i] > 0 ? c[i][i] : 0;
	if (dim == 1)
		best[1] = 0;
	for (i = 0; i < dim; i++) {
		if (c[i][i] > c[best[0]][best[0]]) {
			best[1] = best[0];
			best[0] = i;
		} else if (i != best[0] && (best[1] == best[0] || c[i][i] > c[best[1]][best[1]])) {
			best[1] = i;
		}
	}
	if (best[0] == best[1] && dim > 1)
		best[1] = best[0] ? 0 : 1;
	/* one sign for every run: the largest loading positive */
	for (k = 0; k < 2; k++) {
		unsigned int b = best[k], m = 0;

		for (i = 1; i < dim; i++)
			if (fabs(v[i][b]) > fabs(v[m][b]))
				m = i;
		if (v[m][b] < 0)
			for (i = 0; i < dim; i++)
				v[i][b] = -v[i][b];
	}
	for (p = 0; p < n; p++) {
		for (k = 0; k < 2; k++) {
			double s = 0;

			if (k == 1 && dim == 1) {
				out2[p * 2 + 1] = 0;
				continue;
			}
			for (i = 0; i < dim; i++)
				s += (pts[p * dim + i] - mean[i]) * v[i][best[k]];
			out2[p * 2 + k] = s;
		}
	}
	for (k = 0; load && k < 2; k++)
		for (i = 0; i < dim; i++)
			load[i * 2 + k] = k == 1 && dim == 1 ? 0 : v[i][best[k]];
	if (var2) {
		var2[0] = total > 0 ? c[best[0]][best[0]] / total : 0;
		var2[1] = total > 0 && dim > 1 ? c[best[1]][best[1]] / total : 0;
	}
	return 0;
}
