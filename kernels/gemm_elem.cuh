// Pieces the GEMM kernels share: element conversions (kernels/gemm_ffma.cu, gemm_mma.cu, gemv.cu,
// gemm_skinny.cu: FP32 arithmetic on float or bf16 (uint16_t bits) operands), the epilogue
// y = alpha * acc + beta * y (beta == 0: y never read) stored as float or bf16, and the
// "rows times vectors" view of a problem with a small side (gemv.cu, gemm_skinny.cu).
#ifndef CUDAMODEL_KERNELS_GEMM_ELEM_CUH
#define CUDAMODEL_KERNELS_GEMM_ELEM_CUH

#include <stdint.h>

#include "gemm.h"

namespace cm_gemm_elem {

__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(uint16_t h) { return __uint_as_float((uint32_t)h << 16); }

// float -> bf16 bits, round to nearest even; NaN stays NaN (quiet).
__device__ __forceinline__ uint16_t f2bf(float f) {
    uint32_t u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

__device__ __forceinline__ void store(float *p, float v) { *p = v; }
__device__ __forceinline__ void store(uint16_t *p, float v) { *p = f2bf(v); }

template <typename TO>
__device__ __forceinline__ void epilogue(TO *y, float acc, float alpha, float beta) {
    float o = alpha * acc;
    if (beta != 0.0f) o = fmaf(beta, to_f(*y), o);
    store(y, o);
}

} // namespace cm_gemm_elem

// A product with a small side as rows of one matrix times R vectors:
//   Y(i, r) = sum_k Mat(i, k) X(k, r),  Mat(i, k) = kmajor ? mat[i*ld + k] : mat[k*ld + i],
//   X(k, r) = x[k*xk + r*xr],  Y(i, r) = y[i*yi + r*yr],  i < rows, r < R,
// and per matrix of a batch mat, x, y moved by smat, sx, sy elements. small_m: the M side is
// the vectors (Mat = B, i over N, X(k, r) = A(r, k), Y(i, r) = C(r, i)); else the N side
// (Mat = A, i over M, X = B, Y = C).
struct cm__gemm_vec_view {
    int rows, R, kmajor;
    const void *mat, *x;
    void *y;
    int64_t ld, xk, xr, yi, yr, smat, sx, sy;
};

static inline cm__gemm_vec_view cm__gemm_vec_view_of(const cm__gemm_args_t *p, bool small_m) {
    cm__gemm_vec_view v;
    v.y = p->c;
    v.sy = p->stride_c;
    if (small_m) {
        v.R = p->m;
        v.rows = p->n;
        v.mat = p->b;
        v.ld = p->ldb;
        v.kmajor = p->b_kmajor;
        v.smat = p->stride_b;
        v.x = p->a;
        v.xk = p->a_kmajor ? 1 : p->lda;
        v.xr = p->a_kmajor ? p->lda : 1;
        v.sx = p->stride_a;
        v.yi = 1;
        v.yr = p->ldc;
    } else {
        v.R = p->n;
        v.rows = p->m;
        v.mat = p->a;
        v.ld = p->lda;
        v.kmajor = p->a_kmajor;
        v.smat = p->stride_a;
        v.x = p->b;
        v.xk = p->b_kmajor ? 1 : p->ldb;
        v.xr = p->b_kmajor ? p->ldb : 1;
        v.sx = p->stride_b;
        v.yi = p->ldc;
        v.yr = 1;
    }
    return v;
}

#endif // CUDAMODEL_KERNELS_GEMM_ELEM_CUH
