/*
 * cm_gemm() with matrices of more than 2^31 elements: indices into C, or into the large
 * operand, past what a 32-bit int holds, on each kernel family such shapes reach on an H200
 * (as cm_gemm_explain names them on a simulated one): the FFMA and Hopper tiles over a C of
 * 2^31+ elements; matrix-vector over a matrix of 2^31+ elements in both orientations; the
 * skinny kernel along K, and across K where forced (the only way it runs there); the FFMA
 * tiles over an M-contiguous A whose in-slab offsets pass 32 bits (their fallback from the
 * pipelined kernel, kernels/gemm_ffma.cu's slab_offsets_fit); the Hopper kernel's tensor
 * copies of an A of 2^31+ elements, read as it is (K-contiguous, and through the
 * transposed-B form) and staged by the transposing pre-pass. Each case prints the kernel
 * configuration that ran.
 *
 * Inputs random in [-1, 1) (values of TF32 / BF16 for those precisions, so that any kernel
 * multiplies them exactly), drawn from a hash of the element's index so that filling 2^31
 * elements takes seconds on the host's CPUs. C poisoned with NaN (beta 0, never read) with a
 * guard of 64 elements after it that must stay untouched. Checked: 1024 sampled elements of C
 * spread over the whole matrix, its last element and its first element past 2^31 among them,
 * against float64 (relative Frobenius error within gemm_check_bound, gemm_check.h), and the
 * guard. Each case needs up to ~18 GiB of device memory (its operands, room for a staged copy
 * of them, C): a case is skipped, saying so, where the device has less free (never asked for); the whole test is skipped under
 * compute-sanitizer (CM_TEST_UNDER_SANITIZER: tens of GiB through memcheck's shadow memory),
 * whose runs cover the same kernels on small shapes.
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/kernels.h>
#include <cudamodel/stream.h>

#include "gemm_check.h"
#include "gemm_internal.h" /* cm__gemm_config_override_set_for_tests (src/) */

#define TWO31 ((size_t)1 << 31)
#define GUARD 64
#define SAMPLES 1024

typedef struct lcase {
    cm_gemm_precision_t prec;
    cm_gemm_layout_t layout;
    cm_gemm_op_t oa, ob;
    size_t m, n, k;
    const char *config; /* forced configuration, or NULL for the dispatch's */
    const char *what;
} lcase_t;

static uint64_t mix64(uint64_t x) { /* splitmix64's finaliser */
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* element i of an input: uniform in [-1, 1) on a grid of 2^-23, as a value of the precision's
 * input type */
static float input_at(cm_gemm_precision_t p, uint64_t seed, size_t i) {
    return gemm_check_input(p, (float)((double)(mix64(seed ^ (uint64_t)i) >> 40) * 0x1p-23 - 1.0));
}

typedef struct fill_job {
    void *h;
    int bf;
    cm_gemm_precision_t prec;
    uint64_t seed;
} fill_job_t;

static void fill_range(size_t lo, size_t hi, void *ctx) {
    const fill_job_t *j = ctx;
    for (size_t i = lo; i < hi; ++i) {
        const float v = input_at(j->prec, j->seed, i);
        if (j->bf) ((cm_bf16_t *)j->h)[i] = cm_bf16_from_float(v);
        else ((float *)j->h)[i] = v;
    }
}

/* element i of a host array of BF16 (bf) or float values */
static double val(const void *h, int bf, size_t i) {
    return bf ? (double)cm_bf16_to_float(((const cm_bf16_t *)h)[i]) : (double)((const float *)h)[i];
}

/* runs one case (packed leading dimensions); returns 0 when it was skipped for memory */
static int run_large(const lcase_t *g) {
    const int row = g->layout == CM_GEMM_ROW_MAJOR;
    const int bf = g->prec == CM_GEMM_BF16 || g->prec == CM_GEMM_BF16_OUT_BF16;
    const int cbf = g->prec == CM_GEMM_BF16_OUT_BF16;
    const size_t ar = g->oa == CM_GEMM_OP_N ? g->m : g->k, ac = g->oa == CM_GEMM_OP_N ? g->k : g->m;
    const size_t br = g->ob == CM_GEMM_OP_N ? g->k : g->n, bc = g->ob == CM_GEMM_OP_N ? g->n : g->k;
    const size_t lda = row ? ac : ar, ldb = row ? bc : br, ldc = row ? g->n : g->m;
    const size_t a_el = ar * ac, b_el = br * bc, c_el = g->m * g->n + GUARD;
    const size_t in_sz = bf ? 2 : 4, out_sz = cbf ? 2 : 4;
    /* the operands, room for a staged copy of them (the pre-passes' scratch) and 1 GiB */
    const size_t need = 2 * (a_el * in_sz + b_el * in_sz) + c_el * out_sz;
    size_t free_b = 0, total_b = 0;
    assert_int_equal(cudaMemGetInfo(&free_b, &total_b), cudaSuccess);
    if (free_b < need + ((size_t)1 << 30)) {
        print_message("skipping %s: it needs %.1f GiB and the device has %.1f GiB free\n", g->what,
                      (double)need / (1 << 30), (double)free_b / (1 << 30));
        return 0;
    }
    void *hA = malloc(a_el * in_sz), *hB = malloc(b_el * in_sz), *hC = malloc(c_el * out_sz);
    assert_true(hA && hB && hC);
    fill_job_t fa = {hA, bf, g->prec, 0xA5A5A5A5ull}, fb = {hB, bf, g->prec, 0x5A5A5A5Aull};
    cm_test_parallel_for(a_el, 1 << 20, fill_range, &fa);
    cm_test_parallel_for(b_el, 1 << 20, fill_range, &fb);
    /* C: NaN everywhere, the guard included (beta 0: never read) */
    memset(hC, 0xff, c_el * out_sz);

    cm_buffer_t *dA = NULL, *dB = NULL, *dC = NULL;
    CM_ASSERT_OK(cm_buffer_create(cm_test_gpu.dev, a_el * in_sz, &dA));
    CM_ASSERT_OK(cm_buffer_create(cm_test_gpu.dev, b_el * in_sz, &dB));
    CM_ASSERT_OK(cm_buffer_create(cm_test_gpu.dev, c_el * out_sz, &dC));
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, dA, 0, hA, a_el * in_sz));
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, dB, 0, hB, b_el * in_sz));
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, dC, 0, hC, c_el * out_sz));
    const char *name = "?";
    if (g->config) cm__gemm_config_override_set_for_tests(g->config);
    (void)cm_gemm_config_name(0, g->prec, g->layout, g->oa, g->ob, g->m, g->n, g->k, &name);
    const cm_status_t st = cm_gemm(cm_test_gpu.stream, g->prec, g->layout, g->oa, g->ob, g->m,
                                   g->n, g->k, 1.0f, dA, 0, lda, dB, 0, ldb, 0.0f, dC, 0, ldc);
    if (g->config) cm__gemm_config_override_set_for_tests(NULL);
    CM_ASSERT_OK(st);
    CM_ASSERT_OK(cm_stream_synchronize(cm_test_gpu.stream));
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, dC, 0, hC, c_el * out_sz));

    /* samples: spread over C in storage order, plus its last element and the first one past
     * 2^31 when C has it */
    const size_t mn = g->m * g->n;
    size_t idx[SAMPLES + 2];
    size_t ns = 0;
    for (size_t t = 0; t < SAMPLES; ++t) idx[ns++] = (size_t)((double)t / SAMPLES * (double)mn);
    idx[ns++] = mn - 1;
    if (mn > TWO31) idx[ns++] = TWO31;
    double e_num = 0, e_den = 0;
    size_t nonfinite = 0;
    for (size_t t = 0; t < ns; ++t) {
        const size_t e = idx[t]; /* storage index in C: ldc is packed */
        const size_t i = row ? e / ldc : e % ldc, j = row ? e % ldc : e / ldc;
        const double v = val(hC, cbf, e);
        if (!isfinite(v)) {
            ++nonfinite;
            continue;
        }
        double s = 0.0;
        for (size_t l = 0; l < g->k; ++l) {
            const size_t ia = g->oa == CM_GEMM_OP_N ? (row ? i * lda + l : l * lda + i)
                                                    : (row ? l * lda + i : i * lda + l);
            const size_t ib = g->ob == CM_GEMM_OP_N ? (row ? l * ldb + j : j * ldb + l)
                                                    : (row ? j * ldb + l : l * ldb + j);
            s += val(hA, bf, ia) * val(hB, bf, ib);
        }
        e_num += (v - s) * (v - s);
        e_den += s * s;
    }
    size_t guard_bad = 0;
    for (size_t e = mn; e < c_el; ++e) guard_bad += !isnan(val(hC, cbf, e));
    const double err = e_den > 0 ? sqrt(e_num / e_den) : sqrt(e_num);
    const double bound = gemm_check_bound(g->prec, g->k);
    print_message("%s: %zu x %zu x %zu on %s, error %.3g over %zu samples\n", g->what, g->m,
                  g->n, g->k, name, err, ns);
    if (!(err <= bound) || nonfinite || guard_bad)
        fail_msg("%s (%zu x %zu x %zu, %s): error %.3g (bound %.3g), %zu of %zu samples "
                 "non-finite, %zu guard elements after C written",
                 g->what, g->m, g->n, g->k, name, err, bound, nonfinite, ns, guard_bad);
    CM_ASSERT_OK(cm_buffer_destroy(dA));
    CM_ASSERT_OK(cm_buffer_destroy(dB));
    CM_ASSERT_OK(cm_buffer_destroy(dC));
    free(hA);
    free(hB);
    free(hC);
    return 1;
}

static void test_past_2g_elements(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    if (cm_test_under_sanitizer()) {
        print_message("not under compute-sanitizer: matrices of 4-9 GiB\n");
        return;
    }
    static const lcase_t cases[] = {
        /* C of 65600 x 32768 = 2^31 + 2097152 elements */
        {CM_GEMM_FP32, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 65600, 32768, 8, NULL,
         "FP32 C past 2^31"},
        {CM_GEMM_BF16_OUT_BF16, CM_GEMM_COL_MAJOR, CM_GEMM_OP_T, CM_GEMM_OP_N, 32768, 65600, 64,
         NULL, "BF16 C past 2^31"},
        {CM_GEMM_TF32, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_T, 65600, 32768, 32, NULL,
         "TF32 C past 2^31"},
        /* matrix-vector: B (K-contiguous) of 4096 x 524400 > 2^31 elements, then A
         * (M-contiguous) of 524400 x 4096 */
        {CM_GEMM_BF16, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 1, 524400, 4096, NULL,
         "M = 1, K-contiguous B past 2^31"},
        {CM_GEMM_BF16, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 524400, 1, 4096, NULL,
         "N = 1, M-contiguous A past 2^31"},
        /* N = 8 over an A of 2147500 x 1000: K-contiguous (skinny), M-contiguous in FP32 (the
         * FFMA tiles, in-slab offsets past 32 bits), in BF16 (transposed into scratch first),
         * and forced onto the skinny kernel */
        {CM_GEMM_BF16, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 2147500, 8, 1000, NULL,
         "N = 8, K-contiguous A past 2^31"},
        {CM_GEMM_FP32, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 2147500, 8, 1000, NULL,
         "FP32 N = 8, M-contiguous A past 2^31"},
        {CM_GEMM_BF16, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 2147500, 8, 1000, NULL,
         "BF16 N = 8, M-contiguous A past 2^31"},
        {CM_GEMM_FP32, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 2147500, 8, 1000,
         "skinny", "N = 8, M-contiguous A past 2^31, skinny forced"},
        /* N = 8, K = 2048, bf16 M-contiguous A of 1048600 x 2048 */
        {CM_GEMM_BF16, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 1048600, 8, 2048, NULL,
         "N = 8, K = 2048, M-contiguous A past 2^31"},
        /* tiles over an A of 524400 x 4096 (K-contiguous) and a C of 524400 x 256 */
        {CM_GEMM_TF32, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_T, 524400, 256, 4096, NULL,
         "TF32 K-contiguous A past 2^31"},
    };
    int ran = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) ran += run_large(&cases[i]);
    print_message("%d of %zu cases ran\n", ran, sizeof cases / sizeof cases[0]);
}

int main(void) {
    cm_test_filter_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_past_2g_elements),
    };
    return cmocka_run_group_tests(tests, cm_test_gpu_group_setup, cm_test_gpu_group_teardown);
}
