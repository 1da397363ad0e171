// Strided batches for the GEMM launchers (kernels/gemm_ffma.cu, gemm_mma.cu, gemv.cu): the
// batch rules of cm__gemm_args_t (kernels/gemm.h) in one place. A launch runs up to
// CM__GEMM_MAX_BATCH_PER_LAUNCH matrices as gridDim.z; its kernel moves its pointers by
// blockIdx.z * stride once, at the start (and C's in the epilogue).
#ifndef CUDAMODEL_KERNELS_GEMM_BATCH_CUH
#define CUDAMODEL_KERNELS_GEMM_BATCH_CUH

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "gemm.h"

// Whether every matrix of a batch starts `align`-byte aligned: the base is, and so is the
// distance between matrices (stride elements of elem bytes). A single matrix has stride 0
// (cm__gemm_for_each_launch), so this is the base's alignment alone.
static inline bool cm__gemm_batch_aligned(const void *base, int64_t stride, int64_t elem,
                                          uint64_t align) {
    return (uintptr_t)base % align == 0 && (uint64_t)(stride * elem) % align == 0;
}

// The K of the matrix a block of a batch launch works on: klast for the launch's last matrix
// (gridDim.z - 1) when klast > 0 (split-K's shorter last part: cm__gemm_args_t.k_last, which
// cm__gemm_for_each_launch below gives to the launch holding it), else k.
static __device__ __forceinline__ int cm__gemm_k_of_block(int k, int klast) {
    return klast > 0 && blockIdx.z == gridDim.z - 1 ? klast : k;
}

// f(const cm__gemm_args_t *q) for each launch of g's batch, in order, stopping at the first
// error: q is *g with batch = the launch's matrices (1 .. CM__GEMM_MAX_BATCH_PER_LAUNCH) and
// a, b, c moved to its first matrix, and k_last kept for the launch that holds the batch's last
// matrix only (0 elsewhere; a kernel gives matrix gridDim.z - 1 of a launch with k_last > 0 that
// K). A single matrix (batch 0 or 1) is one call with batch 1, the strides 0 and k_last folded
// into k, so that the launchers' alignment checks need not look at the batch.
template <class F>
static inline cudaError_t cm__gemm_for_each_launch(const cm__gemm_args_t *g, F &&f) {
    cm__gemm_args_t q = *g;
    if (g->batch <= 1) {
        q.batch = 1;
        q.stride_a = q.stride_b = q.stride_c = 0;
        if (g->k_last > 0 && g->k_last < g->k) q.k = g->k_last;
        q.k_last = 0;
        return f(&q);
    }
    const int64_t ein = g->in_type == CM__GEMM_BF16 ? 2 : 4;
    const int64_t eout = g->out_type == CM__GEMM_BF16 ? 2 : 4;
    for (int z0 = 0; z0 < g->batch; z0 += CM__GEMM_MAX_BATCH_PER_LAUNCH) {
        const int left = g->batch - z0;
        q.batch = left < CM__GEMM_MAX_BATCH_PER_LAUNCH ? left : CM__GEMM_MAX_BATCH_PER_LAUNCH;
        q.a = static_cast<const char *>(g->a) + (int64_t)z0 * g->stride_a * ein;
        q.b = static_cast<const char *>(g->b) + (int64_t)z0 * g->stride_b * ein;
        q.c = static_cast<char *>(g->c) + (int64_t)z0 * g->stride_c * eout;
        // the shorter last matrix (split-K) is the last launch's last one
        q.k_last = z0 + q.batch == g->batch && g->k_last > 0 && g->k_last < g->k ? g->k_last : 0;
        if (q.batch == 1 && q.k_last > 0) { // a launch of that matrix alone
            q.k = q.k_last;
            q.k_last = 0;
        }
        const cudaError_t err = f(static_cast<const cm__gemm_args_t *>(&q));
        if (err != cudaSuccess) return err;
    }
    return cudaSuccess;
}

#endif // CUDAMODEL_KERNELS_GEMM_BATCH_CUH
