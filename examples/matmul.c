/*
 * matmul: C = A B with cm_gemm(), the seed's "shared memory as a cache for data reuse" made
 * concrete. The kernel behind CM_GEMM_FP32 is kernels/gemm_ffma.cu: its opening comment is a
 * tour of the tiling (block tiles staged in shared memory, thread tiles in registers, double
 * buffering, padding, tails). This program multiplies two random matrices of the sizes given on
 * the command line, checks 64 sampled entries against a float64 product on the CPU, and prints
 * the time and TFLOP/s (median of 10 calls after 2 warm-up calls), the kernel that ran and, from
 * cm_gemm_explain(), why it ran (an odd K, 1001 say, shows the copy it makes first).
 *
 * Usage: matmul [M [N [K [fp32|tf32|bf16|3xtf32]]]]   (default 1024 1024 1024 fp32; 3xtf32: FP32
 *        accuracy from TF32 tensor cores, CM_GEMM_FP32_3XTF32)
 * Exit status: 0 when every sampled entry is within the precision's bound; 1 otherwise or
 * without a usable GPU.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudamodel/cudamodel.h>

static int fail(void) {
    char report[2048];
    cm_error_format(NULL, report, sizeof report);
    fprintf(stderr, "%s\n", report);
    return 1;
}

typedef struct job {
    cm_gemm_precision_t prec;
    size_t m, n, k;
    cm_buffer_t *a, *b, *c;
} job_t;

/* C (m x n) = A (m x k) B (k x n), all row-major and packed */
static cm_status_t multiply(void *user, cm_stream_t *stream) {
    const job_t *j = user;
    return cm_gemm(stream, j->prec, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, j->m, j->n,
                   j->k, 1.0f, j->a, 0, j->k, j->b, 0, j->n, 0.0f, j->c, 0, j->n);
}

int main(int argc, char **argv) {
    job_t j = {CM_GEMM_FP32, 1024, 1024, 1024, NULL, NULL, NULL};
    if (argc > 1) j.m = (size_t)strtoull(argv[1], NULL, 10);
    if (argc > 2) j.n = (size_t)strtoull(argv[2], NULL, 10);
    if (argc > 3) j.k = (size_t)strtoull(argv[3], NULL, 10);
    if (argc > 4) {
        if (strcmp(argv[4], "tf32") == 0) j.prec = CM_GEMM_TF32;
        else if (strcmp(argv[4], "bf16") == 0) j.prec = CM_GEMM_BF16;
        else if (strcmp(argv[4], "3xtf32") == 0) j.prec = CM_GEMM_FP32_3XTF32;
        else if (strcmp(argv[4], "fp32") != 0) {
            fprintf(stderr, "usage: %s [M [N [K [fp32|tf32|bf16|3xtf32]]]]\n", argv[0]);
            return 1;
        }
    }
    if (j.m == 0 || j.n == 0 || j.k == 0) {
        fprintf(stderr, "matmul: sizes must be positive\n");
        return 1;
    }
    const int bf = j.prec == CM_GEMM_BF16;
    const size_t in_elem = bf ? 2 : 4;

    /* 1. host matrices: random values in [-1, 1) */
    float *ha = malloc(j.m * j.k * 4), *hb = malloc(j.k * j.n * 4), *hc = malloc(j.m * j.n * 4);
    cm_bf16_t *ha16 = bf ? malloc(j.m * j.k * 2) : NULL, *hb16 = bf ? malloc(j.k * j.n * 2) : NULL;
    if (!ha || !hb || !hc || (bf && (!ha16 || !hb16))) {
        fprintf(stderr, "matmul: out of host memory\n");
        return 1;
    }
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < j.m * j.k + j.k * j.n; ++i) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        const float v = (float)((double)(x >> 11) * 0x1.0p-52 * 2.0 - 1.0);
        if (i < j.m * j.k) ha[i] = v; else hb[i - j.m * j.k] = v;
    }
    if (bf) { /* bf16 storage; the reference uses the rounded values the GPU sees */
        cm_bf16_from_float_array(ha16, ha, j.m * j.k);
        cm_bf16_from_float_array(hb16, hb, j.k * j.n);
        cm_bf16_to_float_array(ha, ha16, j.m * j.k);
        cm_bf16_to_float_array(hb, hb16, j.k * j.n);
    }

    /* 2. device buffers and copies (a NULL stream: synchronous, done on return) */
    cm_device_t *dev = NULL;
    cm_stream_t *stream = NULL;
    if (cm_device_open(0, &dev) != CM_OK) return fail();
    if (cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &stream) != CM_OK ||
        cm_buffer_create(dev, j.m * j.k * in_elem, &j.a) != CM_OK ||
        cm_buffer_create(dev, j.k * j.n * in_elem, &j.b) != CM_OK ||
        cm_buffer_create(dev, j.m * j.n * 4, &j.c) != CM_OK ||
        cm_buffer_copy_from_host(NULL, j.a, 0, bf ? (const void *)ha16 : ha, j.m * j.k * in_elem) ||
        cm_buffer_copy_from_host(NULL, j.b, 0, bf ? (const void *)hb16 : hb, j.k * j.n * in_elem))
        return fail();

    /* 3. multiply, timed */
    cm_timing_stats_t st;
    if (cm_time_callable(stream, multiply, &j, 2, 10, &st) != CM_OK) return fail();
    if (cm_stream_synchronize(stream) != CM_OK) return fail();
    if (cm_buffer_copy_to_host(NULL, j.c, 0, hc, j.m * j.n * 4) != CM_OK) return fail();
    /* what ran and why, for these very operands (the kernel's name is the text up to ':') */
    char plan[1024], kernel[32];
    if (cm_gemm_explain(j.prec, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, j.m, j.n, j.k, j.a,
                        0, j.k, 0, j.b, 0, j.n, 0, j.c, 0, j.n, 0, 1, plan, sizeof plan,
                        NULL) != CM_OK)
        snprintf(plan, sizeof plan, "?");
    snprintf(kernel, sizeof kernel, "%.*s", (int)strcspn(plan, ":"), plan);

    /* 4. check 64 sampled entries against float64 */
    double num = 0, den = 0;
    int nonfinite = 0;
    for (int s = 0; s < 64; ++s) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        const size_t i = (size_t)(x % j.m), jj = (size_t)((x >> 32) % j.n);
        double ref = 0;
        for (size_t l = 0; l < j.k; ++l) ref += (double)ha[i * j.k + l] * hb[l * j.n + jj];
        const double got = hc[i * j.n + jj];
        if (!isfinite(got)) nonfinite++;
        num += (got - ref) * (got - ref);
        den += ref * ref;
    }
    const double err = sqrt(num / (den > 0 ? den : 1));
    /* 3xTF32: FP32 accuracy from tensor cores, so the FP32 bound */
    const double bound = j.prec == CM_GEMM_FP32 || j.prec == CM_GEMM_FP32_3XTF32
                             ? 1e-6 * sqrt((double)j.k) + 1e-6
                         : j.prec == CM_GEMM_TF32 ? 1e-3 : 1e-4;
    const double tflops = 2.0 * (double)j.m * (double)j.n * (double)j.k / (st.median_ms * 1e-3) * 1e-12;
    printf("%zu x %zu x %zu %s: %.3f ms median (min %.3f), %.2f TFLOP/s, kernel %s\n", j.m, j.n,
           j.k,
           j.prec == CM_GEMM_FP32   ? "FP32"
           : j.prec == CM_GEMM_TF32 ? "TF32"
           : j.prec == CM_GEMM_BF16 ? "BF16"
                                    : "3xTF32",
           st.median_ms, st.min_ms, tflops, kernel);
    printf("64 sampled entries vs float64: relative error %.2e (bound %.1e)%s\n", err, bound,
           nonfinite ? ", NON-FINITE values" : "");
    printf("plan (cm_gemm_explain): %s\n", plan);

    /* 5. release */
    int bad = cm_buffer_destroy(j.a) | cm_buffer_destroy(j.b) | cm_buffer_destroy(j.c);
    bad |= cm_stream_release(stream) | cm_device_close(dev);
    free(ha); free(hb); free(hc); free(ha16); free(hb16);
    return (bad || nonfinite || !(err <= bound)) ? 1 : 0;
}
