/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cuBLAS as cuda/kvref_cuda.cu uses it, on the host (see cuda_runtime.h
 * here): cublasSgemv as the cuBLAS documentation defines it, column-major
 * A of m rows and n columns with leading dimension lda,
 *   CUBLAS_OP_N: y[i] = alpha * sum_j A[i + j * lda] x[j] + beta * y[i], i < m
 *   CUBLAS_OP_T: y[j] = alpha * sum_i A[i + j * lda] x[i] + beta * y[j], j < n
 * (beta 0: y is not read).
 */
#ifndef CACHESCOPE_FAKE_CUBLAS_V2_H
#define CACHESCOPE_FAKE_CUBLAS_V2_H

#include "cuda_runtime.h"

enum cublasStatus_t {
	CUBLAS_STATUS_SUCCESS = 0,
	CUBLAS_STATUS_INVALID_VALUE = 7,
};

enum cublasOperation_t {
	CUBLAS_OP_N = 0,
	CUBLAS_OP_T = 1,
};

typedef struct fake_blas {
	cudaStream_t stream;
} *cublasHandle_t;

inline const char *cublasGetStatusString(cublasStatus_t s)
{
	return s == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS" : "CUBLAS_STATUS_INVALID_VALUE";
}

inline cublasStatus_t cublasCreate(cublasHandle_t *h)
{
	*h = (cublasHandle_t)calloc(1, sizeof(**h));
	return *h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

inline cublasStatus_t cublasDestroy(cublasHandle_t h)
{
	free(h);
	return CUBLAS_STATUS_SUCCESS;
}

inline cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t s)
{
	h->stream = s;
	return CUBLAS_STATUS_SUCCESS;
}

inline cublasStatus_t cublasSgemv(cublasHandle_t h, cublasOperation_t op, int m, int n,
				  const float *alpha, const float *A, int lda, const float *x,
				  int incx, const float *beta, float *y, int incy)
{
	int rows = op == CUBLAS_OP_N ? m : n, len = op == CUBLAS_OP_N ? n : m;

	uint64_t t0 = cupti_emu_now();

	(void)h;
	if (m < 0 || n < 0 || lda < (m > 1 ? m : 1) || !incx || !incy)
		return CUBLAS_STATUS_INVALID_VALUE;
	for (int r = 0; r < rows; r++) {
		double acc = 0;

		for (int k = 0; k < len; k++) {
			float a = op == CUBLAS_OP_N ? A[r + (size_t)k * lda] : A[k + (size_t)r * lda];

			acc += (double)a * x[(size_t)k * incx];
		}
		y[(size_t)r * incy] = (float)(*alpha * acc + (*beta != 0.0f ? *beta * y[(size_t)r * incy] : 0.0));
	}
	/* one kernel, as cuBLAS launches for a gemv; not a KV kernel */
	cupti_emu_kernel("cublas_emu_gemv", t0, cupti_emu_now(), (unsigned int)(rows + 127) / 128, 128, 0);
	return CUBLAS_STATUS_SUCCESS;
}

#endif
