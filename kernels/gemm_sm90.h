/*
 * The Hopper (sm_90a) tensor-core GEMM of kernels/gemm_sm90.cu: wgmma fed by bulk tensor copies
 * (TMA). An internal interface, called by the GEMM entry point in src/ after it has validated
 * every argument; it records no status detail itself. When the library is built without
 * architecture 90, src/compute/gemm_sm90_stub.c provides both functions (0 /
 * cudaErrorNotSupported).
 */
#ifndef CUDAMODEL_KERNELS_GEMM_SM90_H
#define CUDAMODEL_KERNELS_GEMM_SM90_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    CM__GEMM_SM90_BF16 = 0,
    CM__GEMM_SM90_TF32 = 1,
    CM__GEMM_SM90_TF32X3 = 2,
    CM__GEMM_SM90_BF16_BT = 3,
    CM__GEMM_SM90_TF32_AT = 4,
    CM__GEMM_SM90_TF32_AT_CC = 5
};
/* or'ed into cm__gemm_sm90_batched's in_type: the launch is a programmatic dependent of the
 * operand staging's kernel before it on the stream (cm__gemm_args_t::pdl) */
#define CM__GEMM_SM90_DEPENDENT 0x100

/* "TN" GEMM on sm_90a tensor cores: C row-major M x N (ldc elements),
 * A row-major M x K (lda, K contiguous), B stored N x K row-major (ldb, K contiguous):
 *   C[m*ldc+n] = alpha * sum_k A[m*lda+k]*B[n*ldb+k] + beta*C[m*ldc+n]; beta == 0: C never read.
 * in_type: CM__GEMM_SM90_BF16 (A, B are uint16_t bf16) or CM__GEMM_SM90_TF32 (float), or
 * CM__GEMM_SM90_TF32X3: float operands already split for 3xTF32 (cm__gemm_split_tf32 of
 * kernels/gemm.h: TF32 values, so the copy engine's rounding keeps them) run by a 128 x 192
 * tile with two-level accumulation (the tensor cores' accumulator is added into a second FP32
 * one, round to nearest, every 256 K elements of the first two thirds of K, the cross terms,
 * and every 64 of the last third, big x big: k must be 3 x a multiple of 32), C float only.
 * k counts the product's three K segments of k / 3 each; A and B hold two segments per row
 * (2k / 3 elements, lda, ldb >= 2k / 3): the kernel reads A's segments 0, 1, 1 and B's 0, 1, 0
 * (A = [small | big], B = [big | small]: small x big, big x small, big x big).
 * CM__GEMM_SM90_BF16_BT: bf16 with B MN-major instead: B stored K x N row-major (ldb >= n,
 * N contiguous), B[k*ldb+n], read by wgmma's transposed-B form (no pre-pass); A as above.
 * CM__GEMM_SM90_TF32_AT: TF32 with A MN-major instead: A stored K x M row-major (lda >= m, M
 * contiguous), A[k*lda+m], staged as it is and read into registers by wgmma's register-A form
 * (no pre-pass); B as above. CM__GEMM_SM90_TF32_AT_CC: the same with C column-major,
 * C[m + n*ldc] (ldc >= m), so that a product whose MN-major operand is B runs transposed
 * (C^T = B A^T) without a pre-pass either.
 * c_bf16: 0 = C float, 1 = C bf16.
 *
 * Strided batch: batch matrices (0 or 1: one, and the strides are ignored), matrix z at
 * a + z*stride_a, b + z*stride_b (elements of in_type) and c + z*stride_c (elements of C), all
 * in one launch per 65535 matrices (CM__GEMM_MAX_BATCH_PER_LAUNCH of kernels/gemm.h, gridDim.z).
 *
 * cm__gemm_sm90_batched returns cudaErrorNotSupported (launching nothing) when the current
 * device is not cc 9.0, the code was not built for sm_90a, or the operands miss its alignment
 * needs (cm__gemm_sm90_batched_supported says which), so the caller falls back (for a batch
 * refused for its strides alone: one cm__gemm_sm90 call per matrix still runs, or another
 * kernel). It runs on `stream` (asynchronous) and returns the first launch's error.
 *
 * cm__gemm_sm90_batched_supported returns 1 when cm__gemm_sm90_batched would run these
 * operands, else 0. It needs: in_type and c_bf16 as above; m, n, k >= 1; a and b 16-byte
 * aligned; lda*elem and ldb*elem multiples of 16 bytes (elem = 2 for bf16, 4 for tf32),
 * lda >= k (TF32_AT*: >= m; TF32X3: >= 2k / 3, k a multiple of 96), ldb >= k (BF16_BT: >= n;
 * TF32X3: >= 2k / 3), ldc >= n (TF32_AT_CC: >= m), and
 * below 2^40 bytes; c aligned to its element;
 * ceil(m/128)*ceil(n/256) tiles fit in an int; and for batch > 1 (the 3-D tensor maps): every
 * stride >= 0, stride_a*elem and stride_b*elem multiples of 16 bytes and below 2^40 bytes
 * (0 is allowed: every matrix reads the same operand; stride_c takes any value). It checks no
 * device (cm__gemm_sm90_batched does: current device cc 9.0 and an sm_90a image of the kernel).
 * TF32: the float operands are rounded to nearest tf32 by the copy engine (tensor-map type
 * TFLOAT32), as cuBLAS's CUBLAS_COMPUTE_32F_FAST_TF32 does. */
int cm__gemm_sm90_batched_supported(int in_type, int c_bf16, int m, int n, int k, const void *a,
                                    int64_t lda, const void *b, int64_t ldb, const void *c,
                                    int64_t ldc, int batch, int64_t stride_a, int64_t stride_b,
                                    int64_t stride_c);
cudaError_t cm__gemm_sm90_batched(int in_type, int c_bf16, int m, int n, int k, float alpha,
                                  const void *a, int64_t lda, const void *b, int64_t ldb,
                                  float beta, void *c, int64_t ldc, int batch, int64_t stride_a,
                                  int64_t stride_b, int64_t stride_c, cudaStream_t stream);

/* One matrix (batch 1): the forms above without the batch arguments. */
static inline int cm__gemm_sm90_supported(int in_type, int c_bf16, int m, int n, int k,
                                          const void *a, int64_t lda, const void *b,
                                          int64_t ldb, const void *c, int64_t ldc) {
    return cm__gemm_sm90_batched_supported(in_type, c_bf16, m, n, k, a, lda, b, ldb, c, ldc, 1, 0,
                                           0, 0);
}
static inline cudaError_t cm__gemm_sm90(int in_type, int c_bf16, int m, int n, int k, float alpha,
                                        const void *a, int64_t lda, const void *b, int64_t ldb,
                                        float beta, void *c, int64_t ldc, cudaStream_t stream) {
    return cm__gemm_sm90_batched(in_type, c_bf16, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, 1,
                                 0, 0, 0, stream);
}

#ifdef __cplusplus
}
#endif

#endif /* CUDAMODEL_KERNELS_GEMM_SM90_H */
