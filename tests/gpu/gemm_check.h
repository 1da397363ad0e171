/*
 * Helpers the cm_gemm GPU tests share (test_gpu_gemm.c, test_gpu_gemm_threads.c,
 * test_gpu_gemm_large.c): TF32 rounding as the tensor cores' conversion does it, inputs drawn
 * as values of the precision's input type, the precisions' names, and the bounds of a
 * relative Frobenius error for sums of K random-sign terms.
 */
#ifndef CM_TEST_GEMM_CHECK_H
#define CM_TEST_GEMM_CHECK_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <cudamodel/kernels.h>

/* TF32 rounding as cvt.rna.tf32.f32: nearest, ties away from zero, 10 mantissa bits kept */
static inline float gemm_check_tf32_round(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7f800000u) != 0x7f800000u) {
        u += 0x1000u;
        u &= 0xffffe000u;
    }
    memcpy(&f, &u, 4);
    return f;
}

/* f as a value of precision p's input type: TF32-rounded for TF32, BF16-rounded for the BF16
 * precisions, itself for FP32 and 3xTF32 (whose split is what they test). Inputs drawn so are
 * multiplied exactly by every kernel, whether it rounds, truncates or runs in FP32. */
static inline float gemm_check_input(cm_gemm_precision_t p, float f) {
    if (p == CM_GEMM_TF32) return gemm_check_tf32_round(f);
    if (p == CM_GEMM_BF16 || p == CM_GEMM_BF16_OUT_BF16)
        return cm_bf16_to_float(cm_bf16_from_float(f));
    return f;
}

static inline const char *gemm_check_prec_name(int p) {
    static const char *n[] = {"FP32", "TF32", "BF16", "BF16->BF16", "3xTF32"};
    return p >= 0 && p < 5 ? n[p] : "?";
}

/* Element (i, j) of a float matrix stored with leading dimension ld in `layout` */
static inline double gemm_check_at(const float *p, cm_gemm_layout_t layout, size_t ld, size_t i,
                                   size_t j) {
    return layout == CM_GEMM_ROW_MAJOR ? p[i * ld + j] : p[j * ld + i];
}

/* The float64 reference of element (i, j) of op(A) op(B) over k: the sum over l of op(A)(i, l)
 * op(B)(l, j), or with `absolute` of |op(A)(i, l) op(B)(l, j)| (A, B: each matrix's first
 * element, stored in `layout`) */
static inline double gemm_check_dot(cm_gemm_layout_t layout, cm_gemm_op_t oa, cm_gemm_op_t ob,
                                    size_t k, const float *A, size_t lda, const float *B,
                                    size_t ldb, size_t i, size_t j, int absolute) {
    double s = 0.0;
    for (size_t l = 0; l < k; ++l) {
        const double a = oa == CM_GEMM_OP_N ? gemm_check_at(A, layout, lda, i, l)
                                            : gemm_check_at(A, layout, lda, l, i);
        const double b = ob == CM_GEMM_OP_N ? gemm_check_at(B, layout, ldb, l, j)
                                            : gemm_check_at(B, layout, ldb, j, l);
        s += absolute ? fabs(a * b) : a * b;
    }
    return s;
}

/* The bound of the relative Frobenius error of C against a float64 reference from the very
 * inputs the kernel multiplies (gemm_check_input's), for sums of K terms of random sign
 * (inputs in [-1, 1)): FP32 1e-6 sqrt(K) + 1e-6 (IEEE FFMA: typical error 2^-24 sqrt(K));
 * TF32 and BF16 1e-5 sqrt(K) + 1e-5, 3xTF32 3e-6 sqrt(K) + 3e-6 (tensor cores accumulate
 * without IEEE rounding: up to about 2^-24 K); a BF16 C 1e-2 (one BF16 rounding, 2^-9). */
static inline double gemm_check_bound(cm_gemm_precision_t p, size_t k) {
    const double rk = sqrt((double)k);
    switch (p) {
    case CM_GEMM_FP32: return 1e-6 * rk + 1e-6;
    case CM_GEMM_TF32:
    case CM_GEMM_BF16: return 1e-5 * rk + 1e-5;
    case CM_GEMM_FP32_3XTF32: return 3e-6 * rk + 3e-6;
    default: return 1e-2;
    }
}

#endif /* CM_TEST_GEMM_CHECK_H */
