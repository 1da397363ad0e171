/*
 * The host interface of the GEMM device code (kernels/gemm_ffma.cu, kernels/gemm_mma.cu and,
 * when built, kernels/gemm_sm90.cu): thin launchers with C linkage, called from src/gemm_api.c
 * only, which has checked every argument and normalised the problem to the one internal form
 * below. They return the CUDA error of the launch and never record details themselves.
 *
 * The internal form (see src/gemm_api.c, cm__gemm_normalize): C is row-major M x N,
 *   C[m*ldc + n] = alpha * sum_k A(m,k) B(k,n) + beta * C[m*ldc + n]   (beta == 0: C never read)
 * with A(m,k) = a_kmajor ? a[m*lda + k] : a[k*lda + m]   ("K contiguous" or "M contiguous")
 * and  B(k,n) = b_kmajor ? b[n*ldb + k] : b[k*ldb + n]   ("K contiguous" or "N contiguous").
 * Every (layout, op_a, op_b) of the public API is one of these four cases.
 */
#ifndef CUDAMODEL_KERNELS_GEMM_H
#define CUDAMODEL_KERNELS_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Element types of A and B, and of C. */
enum { CM__GEMM_F32 = 0, CM__GEMM_BF16 = 1 };

/** One normalised problem (see above). m, n, k >= 0 and each < 2^31; the pointers are device
 *  addresses of the current device; every element the problem touches lies inside its buffer. */
typedef struct cm__gemm_args {
    int m, n, k;
    float alpha, beta;
    const void *a;
    int64_t lda;
    int a_kmajor;
    const void *b;
    int64_t ldb;
    int b_kmajor;
    void *c;
    int64_t ldc;
    int in_type;  /* CM__GEMM_F32 or CM__GEMM_BF16 (A and B) */
    int out_type; /* CM__GEMM_F32 or CM__GEMM_BF16 (C) */
} cm__gemm_args_t;

/* ---------------------------------------------------------------- FFMA (CUDA cores, any sm) */

/** Tile configurations of the FFMA kernel: block tile BMxBN, K step BK, thread tile TMxTN.
 *  The names are what CUDAMODEL_GEMM_CONFIG and `bench_gemm --tune` use. */
enum {
    CM__FFMA_128x128x8 = 0,  /* 256 threads, 8x8 per thread */
    CM__FFMA_128x128x16,     /* 256 threads, 8x8, BK 16 */
    CM__FFMA_128x64x8,       /* 128 threads, 8x8 */
    CM__FFMA_64x64x16,       /* 128 threads, 8x4 */
    CM__FFMA_32x64x16,       /* 128 threads, 4x4 */
    CM__FFMA_128x256x8,      /* 256 threads, 8x16 */
    CM__FFMA_256x128x8,      /* 256 threads, 16x8 */
    /* the same tiles with the fast interior path ("f" in the name; kernels/gemm_ffma.cu) */
    CM__FFMA_128x128x8f,     /* 256 threads, 8x8 */
    CM__FFMA_128x128x16f,    /* 256 threads, 8x8, BK 16, 2 blocks per SM */
    CM__FFMA_128x128x8f4,    /* 256 threads, 8x8, warps of 8 (m) x 4 (n) threads */
    CM__FFMA_128x256x8f,     /* 256 threads, 8x16 */
    CM__FFMA_256x128x8f,     /* 256 threads, 16x8 */
    CM__FFMA_128x256x8f4,    /* 256 threads, 8x16, warps of 8 (m) x 4 (n) threads */
    /* pipelined whole-tile kernels ("pR": cp.async R tiles deep for both operands, K-contiguous
     * ones transposed in shared memory one tile ahead; kernels/gemm_ffma.cu) */
    CM__FFMA_128x128x8p2,    /* 256 threads, 8x8, 2 stages, 2 blocks per SM */
    CM__FFMA_128x128x8p3,    /* 256 threads, 8x8, 3 stages, 2 blocks per SM */
    CM__FFMA_128x128x8p4,    /* 256 threads, 8x8, 4 stages, 2 blocks per SM */
    CM__FFMA_128x128x16p3,   /* 256 threads, 8x8, BK 16, 3 stages, 2 blocks per SM */
    CM__FFMA_128x256x8p3,    /* 256 threads, 8x16, 3 stages, 1 block per SM */
    CM__FFMA_256x128x8p3,    /* 256 threads, 16x8, 3 stages, 1 block per SM */
    /* the same pipeline with K-contiguous operands copied 4 bytes at a time straight into
     * their transposed place (no private ring, no transposing pass) */
    CM__FFMA_128x128x8q3,    /* 256 threads, 8x8, 3 stages, 2 blocks per SM */
    CM__FFMA_128x128x8q4,    /* 256 threads, 8x8, 4 stages, 2 blocks per SM */
    CM__FFMA_128x128x16q3,   /* 256 threads, 8x8, BK 16, 3 stages, 2 blocks per SM */
    CM__FFMA_128x256x8q3,    /* 256 threads, 8x16, 3 stages, 1 block per SM */
    CM__FFMA_128x128x8q3t,   /* 128 threads, 16x8, 3 stages, 2 blocks per SM */
    CM__FFMA_128x128x8q4t,   /* 128 threads, 16x8, 4 stages, 2 blocks per SM */
    CM__FFMA_128x128x16q3t,  /* 128 threads, 16x8, BK 16, 3 stages, 2 blocks per SM */
    CM__FFMA_128x128x16q4,   /* 256 threads, 8x8, BK 16, 4 stages, 2 blocks per SM */
    CM__FFMA_COUNT
};

/** Block tile (bm x bn) of an FFMA configuration; 0 for an unknown one (pure). */
void cm__gemm_ffma_tile(int config, int *bm, int *bn);

/** Launch the FFMA kernel. in_type F32 with out_type F32 takes every configuration; BF16 input
 *  (the sm_75 fallback of the BF16 precisions) takes CM__FFMA_128x128x8 or CM__FFMA_64x64x16
 *  (others are served by the nearer of the two). m, n or k == 0 is the caller's business (it
 *  never calls with m or n == 0; k == 0 is valid: C = beta C). */
cudaError_t cm__gemm_ffma(const cm__gemm_args_t *p, int config, cudaStream_t stream);

/* ---------------------------------------------------------------- mma.sync (sm_80+) */

/** Tile configurations of the mma.sync kernel (block tile, warps, pipeline stages). */
enum {
    CM__MMA_128x128 = 0, /* 8 warps (2x4), warp tile 64x32, 4 stages */
    CM__MMA_128x64,      /* 4 warps (2x2), warp tile 64x32, 4 stages */
    CM__MMA_64x64,       /* 4 warps (2x2), warp tile 32x32, 4 stages */
    CM__MMA_COUNT
};

void cm__gemm_mma_tile(int config, int *bm, int *bn);

/** Whether the mma.sync kernel takes p: the device is sm_80+ and built for it (checked by the
 *  launcher), A and B 16-byte aligned with leading dimensions a multiple of 16 bytes (cp.async
 *  of 16 bytes). Pure (no device query): alignment only. */
int cm__gemm_mma_aligned(const cm__gemm_args_t *p);

/** Launch the mma.sync kernel: tf32 != 0 rounds FP32 inputs to TF32 (m16n8k8); in_type BF16
 *  uses m16n8k16. Returns cudaErrorNotSupported (launching nothing) when the device is older than
 *  sm_80 or the library carries no sm_80+ image. */
cudaError_t cm__gemm_mma(const cm__gemm_args_t *p, int tf32, int config, cudaStream_t stream);

/* ---------------------------------------------------------------- matrix-vector (kernels/gemv.cu) */

/** Launch the matrix-vector kernel for a problem with m == 1 or n == 1 (and k >= 1): FP32
 *  arithmetic for every precision (in_type F32 or BF16; out_type F32, or BF16 with BF16 input),
 *  deterministic, no scratch. sm_count picks how many warps share a row. cudaErrorInvalidValue
 *  (nothing launched) for any other shape; else the launch's error. */
cudaError_t cm__gemm_gemv(const cm__gemm_args_t *p, int sm_count, cudaStream_t stream);

/* ---------------------------------------------------------------- packing (kernels/gemm_pack.cu) */

/** Transposing copy on `stream`: element (k, r) of a kdim x rdim matrix stored r-contiguous,
 *  src[k*ld + r], goes to dst[r*ldd + k] (K-contiguous), elem_bytes 4 (FP32/TF32) or 2 (BF16).
 *  The Hopper path's pre-pass for operands that are not K-contiguous. cudaErrorInvalidValue
 *  (nothing launched) for NULL pointers, negative sizes, ld < rdim, ldd < kdim or another
 *  element size; else the launch's error. */
cudaError_t cm__gemm_pack(int elem_bytes, const void *src, int64_t ld, int kdim, int rdim,
                          void *dst, int64_t ldd, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* CUDAMODEL_KERNELS_GEMM_H */
