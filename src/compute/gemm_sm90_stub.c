/*
 * The Hopper GEMM's interface (kernels/gemm_sm90.h) when the library is built without
 * architecture 90: kernels/gemm_sm90.cu is not compiled (CM_HAVE_GEMM_SM90 is 0, its default in
 * gemm_internal.h), and these answer "not supported" so that the GEMM entry point takes its
 * generic path.
 */
#include "gemm_internal.h"
#include "gemm_sm90.h"

#if !CM_HAVE_GEMM_SM90

int cm__gemm_sm90_batched_supported(int in_type, int c_bf16, int m, int n, int k, const void *a,
                                    int64_t lda, const void *b, int64_t ldb, const void *c,
                                    int64_t ldc, int batch, int64_t stride_a, int64_t stride_b,
                                    int64_t stride_c) {
    (void)in_type, (void)c_bf16, (void)m, (void)n, (void)k, (void)a, (void)lda;
    (void)b, (void)ldb, (void)c, (void)ldc, (void)batch, (void)stride_a, (void)stride_b;
    (void)stride_c;
    return 0;
}

cudaError_t cm__gemm_sm90_batched(int in_type, int c_bf16, int m, int n, int k, float alpha,
                                  const void *a, int64_t lda, const void *b, int64_t ldb,
                                  float beta, void *c, int64_t ldc, int batch, int64_t stride_a,
                                  int64_t stride_b, int64_t stride_c, cudaStream_t stream) {
    (void)in_type, (void)c_bf16, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda;
    (void)b, (void)ldb, (void)beta, (void)c, (void)ldc, (void)batch, (void)stride_a;
    (void)stride_b, (void)stride_c, (void)stream;
    return cudaErrorNotSupported;
}

#else

/* ISO C wants a translation unit to declare something. */
typedef int cm__gemm_sm90_stub_unused_t;

#endif
