/*
 * cm_gemm_strided_batched() on a real GPU against float64 references computed on the CPU, batch
 * by batch: every precision, both layouts, every (op_a, op_b); batches of small odd shapes, of
 * 64^3 tiles, of matrix-vector shapes (the gemv kernel), a broadcast A (stride 0), padded
 * strides whose gaps must stay untouched, more batches than one launch's grid takes (70000),
 * batch = 0; and the refusals (overlapping C matrices, a last matrix past its buffer, C
 * overlapping A, strides below a matrix's span for C).
 *
 * Bounds as test_gpu_gemm.c: FP32 1e-6 sqrt(K) + 1e-6 relative Frobenius per batch against the
 * exact product; TF32 1e-3; BF16 1e-4 against the product of the bf16 inputs (float C), 1e-2
 * with a bf16 C.
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

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static float rnd_f(void) { return (float)(2.0 * cm_test_rand_unit(&rng_state) - 1.0); }

typedef struct ctx {
    cm_device_t *dev;
    cm_stream_t *stream;
} ctx_t;
static ctx_t c;

static int setup(void **state) {
    (void)state;
    char reason[256];
    if (!cm_test_have_gpu(reason, sizeof reason)) return 0;
    if (cm_device_open(0, &c.dev) != CM_OK) return -1;
    if (cm_stream_acquire(c.dev, CM_STREAM_PRIORITY_LOW, &c.stream) != CM_OK) return -1;
    return 0;
}

static int teardown(void **state) {
    (void)state;
    if (c.dev == NULL) return 0;
    int bad = cm_stream_release(c.stream) | cm_device_close(c.dev);
    c.dev = NULL;
    return bad ? -1 : 0;
}

typedef struct bcase {
    cm_gemm_precision_t prec;
    cm_gemm_layout_t layout;
    cm_gemm_op_t oa, ob;
    size_t m, n, k, batch;
    size_t pad_a, pad_b, pad_c; /* extra elements between matrices (stride = span + pad) */
    int broadcast_a;            /* stride_a = 0 */
    float alpha, beta;
} bcase_t;

/* rows x cols of the stored operand */
static void stored(const bcase_t *g, int which, size_t *rows, size_t *cols) {
    const int row = g->layout == CM_GEMM_ROW_MAJOR;
    size_t r, q;
    if (which == 0) { /* A: m x k as op(A) */
        r = g->oa == CM_GEMM_OP_N ? g->m : g->k;
        q = g->oa == CM_GEMM_OP_N ? g->k : g->m;
    } else if (which == 1) { /* B: k x n */
        r = g->ob == CM_GEMM_OP_N ? g->k : g->n;
        q = g->ob == CM_GEMM_OP_N ? g->n : g->k;
    } else {
        r = g->m;
        q = g->n;
    }
    *rows = row ? r : q; /* outer dimension (rows in row-major, columns in column-major) */
    *cols = row ? q : r; /* inner (contiguous) dimension = the minimum leading dimension */
}

/* element (i, j) of op(X) in storage with leading dimension ld, for X = A (which 0) or B (1) */
static size_t at(const bcase_t *g, int which, size_t ld, size_t i, size_t j) {
    const int row = g->layout == CM_GEMM_ROW_MAJOR;
    const int t = which == 0 ? g->oa == CM_GEMM_OP_T : g->ob == CM_GEMM_OP_T;
    /* stored (r, q) of op(X)(i, j): transposed swaps */
    const size_t r = t ? j : i, q = t ? i : j;
    return row ? r * ld + q : q * ld + r;
}

static void run_batched(const bcase_t *g) {
    const int bf = g->prec >= CM_GEMM_BF16, cbf = g->prec == CM_GEMM_BF16_OUT_BF16;
    const size_t in_sz = bf ? 2 : 4, out_sz = cbf ? 2 : 4;
    size_t ra, ca, rb, cb, rc, cc;
    stored(g, 0, &ra, &ca);
    stored(g, 1, &rb, &cb);
    stored(g, 2, &rc, &cc);
    const size_t lda = ca ? ca : 1, ldb = cb ? cb : 1, ldc = cc ? cc : 1;
    const size_t span_a = ra * lda, span_b = rb * ldb, span_c = rc * ldc;
    const size_t sa = g->broadcast_a ? 0 : span_a + g->pad_a, sb = span_b + g->pad_b,
                 sc = span_c + g->pad_c;
    const size_t nb = g->batch ? g->batch : 1;
    const size_t a_el = (nb - 1) * sa + span_a + 1, b_el = (nb - 1) * sb + span_b + 1,
                 c_el = (nb - 1) * sc + span_c + 1;
    float *A = malloc(a_el * 4), *B = malloc(b_el * 4), *C0 = malloc(c_el * 4),
          *C = malloc(c_el * 4);
    void *hA = malloc(a_el * in_sz), *hB = malloc(b_el * in_sz), *hC = malloc(c_el * out_sz);
    assert_non_null(A); assert_non_null(B); assert_non_null(C0); assert_non_null(C);
    assert_non_null(hA); assert_non_null(hB); assert_non_null(hC);
    for (size_t i = 0; i < a_el; ++i) A[i] = rnd_f();
    for (size_t i = 0; i < b_el; ++i) B[i] = rnd_f();
    for (size_t i = 0; i < c_el; ++i) C0[i] = rnd_f();
    if (bf) { /* the reference uses the bf16 inputs */
        cm_bf16_from_float_array(hA, A, a_el);
        cm_bf16_from_float_array(hB, B, b_el);
        cm_bf16_to_float_array(A, hA, a_el);
        cm_bf16_to_float_array(B, hB, b_el);
    } else {
        memcpy(hA, A, a_el * 4);
        memcpy(hB, B, b_el * 4);
    }
    if (cbf) {
        cm_bf16_from_float_array(hC, C0, c_el);
        cm_bf16_to_float_array(C0, hC, c_el);
    } else {
        memcpy(hC, C0, c_el * 4);
    }
    cm_buffer_t *dA = NULL, *dB = NULL, *dC = NULL;
    CM_ASSERT_OK(cm_buffer_create(c.dev, a_el * in_sz, &dA));
    CM_ASSERT_OK(cm_buffer_create(c.dev, b_el * in_sz, &dB));
    CM_ASSERT_OK(cm_buffer_create(c.dev, c_el * out_sz, &dC));
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, dA, 0, hA, a_el * in_sz));
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, dB, 0, hB, b_el * in_sz));
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, dC, 0, hC, c_el * out_sz));
    /* the matrices start one element in (byte offsets), so the first is not 16-byte aligned */
    CM_ASSERT_OK(cm_gemm_strided_batched(c.stream, g->prec, g->layout, g->oa, g->ob, g->m, g->n,
                                         g->k, g->alpha, dA, in_sz, lda, sa, dB, in_sz, ldb, sb,
                                         g->beta, dC, out_sz, ldc, sc, g->batch));
    CM_ASSERT_OK(cm_stream_synchronize(c.stream));
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, dC, 0, hC, c_el * out_sz));
    if (cbf) cm_bf16_to_float_array(C, hC, c_el); else memcpy(C, hC, c_el * 4);

    double bound;
    switch (g->prec) {
    case CM_GEMM_FP32: bound = 1e-6 * sqrt((double)g->k) + 1e-6; break;
    case CM_GEMM_TF32: bound = 1e-3; break;
    case CM_GEMM_BF16: bound = 1e-4; break;
    default: bound = 1e-2; break;
    }
    unsigned char *inside = calloc(c_el, 1);
    assert_non_null(inside);
    for (size_t b = 0; b < g->batch; ++b) {
        const float *Ab = A + 1 + b * sa, *Bb = B + 1 + b * sb;
        double num = 0, den = 0;
        for (size_t i = 0; i < g->m; ++i)
            for (size_t j = 0; j < g->n; ++j) {
                double s = 0;
                for (size_t l = 0; l < g->k; ++l)
                    s += (double)Ab[at(g, 0, lda, i, l)] * (double)Bb[at(g, 1, ldb, l, j)];
                const size_t e = 1 + b * sc +
                                 (g->layout == CM_GEMM_ROW_MAJOR ? i * ldc + j : j * ldc + i);
                inside[e] = 1;
                const double ref = (double)g->alpha * s + (double)g->beta * C0[e];
                if (!isfinite(C[e])) fail_msg("batch %zu (%zu, %zu): %g", b, i, j, (double)C[e]);
                num += (C[e] - ref) * (C[e] - ref);
                den += ref * ref;
            }
        const double err = den > 0 ? sqrt(num / den) : sqrt(num);
        if (!(err <= bound))
            fail_msg("prec %d layout %d op %d%d %zux%zux%zu batch %zu of %zu: err %.3g > %.3g",
                     (int)g->prec, (int)g->layout, (int)g->oa, (int)g->ob, g->m, g->n, g->k, b,
                     g->batch, err, bound);
    }
    for (size_t e = 0; e < c_el; ++e) /* gaps and the element before the first matrix */
        if (!inside[e] && memcmp(&C[e], &C0[e], 4) != 0)
            fail_msg("element %zu outside every C matrix was written", e);
    free(inside);
    CM_ASSERT_OK(cm_buffer_destroy(dA));
    CM_ASSERT_OK(cm_buffer_destroy(dB));
    CM_ASSERT_OK(cm_buffer_destroy(dC));
    free(A); free(B); free(C0); free(C); free(hA); free(hB); free(hC);
}

static void test_batched_shapes(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    static const size_t shapes[][4] = {{33, 17, 9, 3},  {64, 64, 64, 8}, {1, 100, 50, 5},
                                       {70, 1, 33, 4},  {130, 67, 129, 2}, {5, 7, 0, 3}};
    for (int p = 0; p < 4; ++p)
        for (int l = 0; l < 2; ++l)
            for (int oa = 0; oa < 2; ++oa)
                for (int ob = 0; ob < 2; ++ob)
                    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
                        bcase_t g = {(cm_gemm_precision_t)p, (cm_gemm_layout_t)l,
                                     (cm_gemm_op_t)oa, (cm_gemm_op_t)ob, shapes[s][0],
                                     shapes[s][1], shapes[s][2], shapes[s][3], 0, 0, 0, 0,
                                     1.5f, -0.5f};
                        run_batched(&g);
                        g.pad_a = 3; /* padded strides: gaps between the C matrices untouched */
                        g.pad_b = 5;
                        g.pad_c = 7;
                        g.beta = 0.0f;
                        run_batched(&g);
                        g.broadcast_a = 1; /* one A for every batch */
                        g.beta = 1.0f;
                        run_batched(&g);
                    }
}

static void test_many_batches(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    /* more batches than one launch's grid dimension takes (65535) */
    bcase_t g = {CM_GEMM_FP32, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 3, 2, 4, 70000,
                 0, 0, 0, 0, 1.0f, 0.25f};
    run_batched(&g);
    g.prec = CM_GEMM_BF16;
    g.m = 1; /* the gemv kernel */
    run_batched(&g);
    g.prec = CM_GEMM_TF32;
    g.m = 16;
    g.n = 16;
    g.k = 16;
    g.batch = 66000;
    run_batched(&g);
}

static void test_batched_refusals(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_buffer_t *a = NULL, *b = NULL, *cc = NULL;
    CM_ASSERT_OK(cm_buffer_create(c.dev, 64 * 64 * 4 * 4, &a));
    CM_ASSERT_OK(cm_buffer_create(c.dev, 64 * 64 * 4 * 4, &b));
    CM_ASSERT_OK(cm_buffer_create(c.dev, 64 * 64 * 4 * 4, &cc));
    /* batch 0: nothing, even with NULL-free arguments that would be too small */
    CM_ASSERT_OK(cm_gemm_strided_batched(NULL, CM_GEMM_FP32, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N,
                                         CM_GEMM_OP_N, 64, 64, 64, 1.0f, a, 0, 64, 4096, b, 0,
                                         64, 4096, 0.0f, cc, 0, 64, 4096, 0));
    /* C matrices overlap each other (stride below C's span) */
    CM_ASSERT_STATUS(cm_gemm_strided_batched(NULL, CM_GEMM_FP32, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N,
                                             CM_GEMM_OP_N, 64, 64, 64, 1.0f, a, 0, 64, 4096, b, 0,
                                             64, 4096, 0.0f, cc, 0, 64, 4000, 2),
                     CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cm_last_error()->message, "stride_c"));
    /* the fifth A runs past its buffer (4 fit) */
    CM_ASSERT_STATUS(cm_gemm_strided_batched(NULL, CM_GEMM_FP32, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N,
                                             CM_GEMM_OP_N, 64, 64, 64, 1.0f, a, 0, 64, 4096, b, 0,
                                             64, 0, 0.0f, cc, 0, 64, 0, 1),
                     CM_OK);
    CM_ASSERT_STATUS(cm_gemm_strided_batched(NULL, CM_GEMM_FP32, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N,
                                             CM_GEMM_OP_N, 64, 64, 64, 1.0f, a, 0, 64, 4096, b, 0,
                                             64, 0, 0.0f, cc, 0, 64, 4096, 5),
                     CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cm_last_error()->message, "A"));
    /* C in the same buffer as A's matrices */
    CM_ASSERT_STATUS(cm_gemm_strided_batched(NULL, CM_GEMM_FP32, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N,
                                             CM_GEMM_OP_N, 64, 64, 64, 1.0f, a, 0, 64, 4096, b, 0,
                                             64, 4096, 0.0f, a, 4096 * 4, 64, 4096, 2),
                     CM_ERROR_INVALID_ARGUMENT);
    CM_ASSERT_OK(cm_buffer_destroy(a));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_buffer_destroy(cc));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batched_refusals),
        cmocka_unit_test(test_batched_shapes),
        cmocka_unit_test(test_many_batches),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
