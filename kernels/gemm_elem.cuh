// Element conversions of the bandwidth-bound GEMM kernels (kernels/gemv.cu, gemm_skinny.cu):
// FP32 arithmetic on float or bf16 (uint16_t bits) operands, and the epilogue
// y = alpha * acc + beta * y (beta == 0: y never read) stored as float or bf16.
#ifndef CUDAMODEL_KERNELS_GEMM_ELEM_CUH
#define CUDAMODEL_KERNELS_GEMM_ELEM_CUH

#include <stdint.h>

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

#endif // CUDAMODEL_KERNELS_GEMM_ELEM_CUH
