/*
 * Strided batches of GEMMs on a real GPU against float64 references computed on the CPU, matrix
 * by matrix.
 *
 * Through cm_gemm_strided_batched(): every precision, both layouts, every (op_a, op_b); batches
 * of 1 and more of small odd shapes, of 64^3 tiles, of matrix-vector shapes (the gemv kernel);
 * matrices one element into their buffers (no 16-byte alignment anywhere) and 16-byte aligned
 * ones, whose strides keep the alignment or break it (an odd stride: matrix 0 aligned, the
 * others not); a broadcast A (stride 0); padded strides whose gaps must stay untouched; more
 * matrices than one launch's grid takes (70000); every kernel family forced
 * (cm__gemm_config_override_set_for_tests) on batches it can and cannot take; batch = 0; and
 * the refusals (overlapping C matrices, a last matrix past its buffer, C overlapping A, strides
 * below a matrix's span for C).
 *
 * The kernels' own batch dimension (kernels/gemm.h: cm__gemm_args_t batch and strides, one
 * launch per 65535 matrices as gridDim.z), launcher by launcher on the internal form: every
 * FFMA configuration this build compiled (general, fast and pipelined forms: whole tiles with
 * aligned operands reach the fast / pipelined kernels), mma.sync (TF32, BF16), the matrix-vector
 * kernel and the Hopper kernel (bf16 / tf32, 2-D and 3-D tensor maps) with the four operand
 * orientations (TN only for Hopper), batch 0 (one), 1, 2, 3, 65536 and 70000 (several launches,
 * the last of 65536 a single matrix), aligned strides, odd strides (the 16-byte paths must be
 * refused for matrices >= 1: mma.sync and Hopper answer cudaErrorNotSupported and write
 * nothing, FFMA / gemv take their scalar paths), broadcast A or B (stride 0), an odd stride of
 * C only; C poisoned with NaN where beta = 0 (never read).
 *
 * Bounds as test_gpu_gemm.c: FP32 (and 3xTF32) 1e-6 sqrt(K) + 1e-6 relative Frobenius per matrix
 * against the exact product; TF32 1e-3; BF16 1e-4 against the product of the bf16 inputs (float
 * C), 1e-2 with a bf16 C.
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

#include "gemm.h"          /* cm__gemm_args_t and the launchers (kernels/) */
#include "gemm_sm90.h"     /* the Hopper launcher (a stub answers "not supported" without it) */
#include "gemm_internal.h" /* cm__gemm_config_override_set_for_tests (src/) */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static float rnd_f(void) { return (float)(2.0 * cm_test_rand_unit(&rng_state) - 1.0); }

typedef struct ctx {
    cm_device_t *dev;
    cm_stream_t *stream;
} ctx_t;
static ctx_t c;

static int setup(void **state) {
    (void)state;
    return cm_test_gpu_setup(&c.dev, &c.stream);
}

static int teardown(void **state) {
    (void)state;
    return cm_test_gpu_teardown(&c.dev, &c.stream);
}

static size_t round8(size_t x) { return (x + 7) / 8 * 8; }

static int prec_bf16_in(cm_gemm_precision_t p) {
    return p == CM_GEMM_BF16 || p == CM_GEMM_BF16_OUT_BF16;
}

static double prec_bound(cm_gemm_precision_t p, size_t k) {
    switch (p) {
    case CM_GEMM_FP32:
    case CM_GEMM_FP32_3XTF32: return 1e-6 * sqrt((double)k) + 1e-6;
    case CM_GEMM_TF32: return 1e-3;
    case CM_GEMM_BF16: return 1e-4;
    default: return 1e-2;
    }
}

/* ====================================================================== the public API */

typedef struct bcase {
    cm_gemm_precision_t prec;
    cm_gemm_layout_t layout;
    cm_gemm_op_t oa, ob;
    size_t m, n, k, batch;
    size_t pad_a, pad_b, pad_c; /* extra elements between matrices (stride = span + pad) */
    int broadcast_a;            /* stride_a = 0 */
    float alpha, beta;
    int aligned;        /* 1: offset 0, leading dimensions and spans rounded up to 16 bytes (a
                           pad then breaks the alignment of matrices >= 1 only); 0: the
                           matrices start one element into their buffers */
    const char *config; /* forced configuration (a CUDAMODEL_GEMM_CONFIG name) or NULL */
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
    const int bf = prec_bf16_in(g->prec), cbf = g->prec == CM_GEMM_BF16_OUT_BF16;
    const size_t in_sz = bf ? 2 : 4, out_sz = cbf ? 2 : 4;
    size_t ra, ca, rb, cb, rc, cc;
    stored(g, 0, &ra, &ca);
    stored(g, 1, &rb, &cb);
    stored(g, 2, &rc, &cc);
    size_t lda = ca ? ca : 1, ldb = cb ? cb : 1, ldc = cc ? cc : 1;
    if (g->aligned) {
        lda = round8(lda);
        ldb = round8(ldb);
        ldc = round8(ldc);
    }
    const size_t off = g->aligned ? 0 : 1; /* elements before matrix 0 */
    const size_t span_a = ra * lda, span_b = rb * ldb, span_c = rc * ldc;
    const size_t base_a = g->aligned ? round8(span_a) : span_a;
    const size_t base_b = g->aligned ? round8(span_b) : span_b;
    const size_t base_c = g->aligned ? round8(span_c) : span_c;
    const size_t sa = g->broadcast_a ? 0 : base_a + g->pad_a, sb = base_b + g->pad_b,
                 sc = base_c + g->pad_c;
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
    /* the library reads CUDAMODEL_GEMM_CONFIG once per process: the test hook forces instead */
    if (g->config) cm__gemm_config_override_set_for_tests(g->config);
    /* offsets in bytes */
    CM_ASSERT_OK(cm_gemm_strided_batched(c.stream, g->prec, g->layout, g->oa, g->ob, g->m, g->n,
                                         g->k, g->alpha, dA, off * in_sz, lda, sa, dB,
                                         off * in_sz, ldb, sb, g->beta, dC, off * out_sz, ldc,
                                         sc, g->batch));
    if (g->config) cm__gemm_config_override_set_for_tests(NULL);
    CM_ASSERT_OK(cm_stream_synchronize(c.stream));
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, dC, 0, hC, c_el * out_sz));
    if (cbf) cm_bf16_to_float_array(C, hC, c_el); else memcpy(C, hC, c_el * 4);

    const double bound = prec_bound(g->prec, g->k);
    unsigned char *inside = calloc(c_el, 1);
    assert_non_null(inside);
    for (size_t b = 0; b < g->batch; ++b) {
        const float *Ab = A + off + b * sa, *Bb = B + off + b * sb;
        double num = 0, den = 0;
        for (size_t i = 0; i < g->m; ++i)
            for (size_t j = 0; j < g->n; ++j) {
                double s = 0;
                for (size_t l = 0; l < g->k; ++l)
                    s += (double)Ab[at(g, 0, lda, i, l)] * (double)Bb[at(g, 1, ldb, l, j)];
                const size_t e = off + b * sc +
                                 (g->layout == CM_GEMM_ROW_MAJOR ? i * ldc + j : j * ldc + i);
                inside[e] = 1;
                const double ref = (double)g->alpha * s + (double)g->beta * C0[e];
                if (!isfinite(C[e]))
                    fail_msg("%s: batch %zu (%zu, %zu): %g", g->config ? g->config : "-", b, i, j,
                             (double)C[e]);
                num += (C[e] - ref) * (C[e] - ref);
                den += ref * ref;
            }
        const double err = den > 0 ? sqrt(num / den) : sqrt(num);
        if (!(err <= bound))
            fail_msg("prec %d layout %d op %d%d %zux%zux%zu aligned %d pads %zu/%zu/%zu config %s: "
                     "batch %zu of %zu: err %.3g > %.3g",
                     (int)g->prec, (int)g->layout, (int)g->oa, (int)g->ob, g->m, g->n, g->k,
                     g->aligned, g->pad_a, g->pad_b, g->pad_c, g->config ? g->config : "-", b,
                     g->batch, err, bound);
    }
    for (size_t e = 0; e < c_el; ++e) /* gaps and the element before the first matrix */
        if (!inside[e] && memcmp(&C[e], &C0[e], 4) != 0)
            fail_msg("element %zu outside every C matrix was written (config %s)", e,
                     g->config ? g->config : "-");
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
                                       {70, 1, 33, 4},  {130, 67, 129, 2}, {5, 7, 0, 3},
                                       {40, 24, 16, 1}};
    /* under compute-sanitizer (slow launches): the aligned variants of op N, N only */
    const int sanitizer = cm_test_under_sanitizer();
    for (int p = 0; p <= CM_GEMM_FP32_3XTF32; ++p)
        for (int l = 0; l < 2; ++l)
            for (int oa = 0; oa < 2; ++oa)
                for (int ob = 0; ob < 2; ++ob)
                    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
                        for (int al = 0; al < 2 - (sanitizer && (oa || ob)); ++al) {
                            bcase_t g = {(cm_gemm_precision_t)p, (cm_gemm_layout_t)l,
                                         (cm_gemm_op_t)oa, (cm_gemm_op_t)ob, shapes[s][0],
                                         shapes[s][1], shapes[s][2], shapes[s][3], 0, 0, 0, 0,
                                         1.5f, -0.5f, al, NULL};
                            run_batched(&g);
                            g.pad_a = 3; /* padded strides: gaps between the C matrices untouched;
                                            aligned: matrices >= 1 lose the 16-byte alignment */
                            g.pad_b = 5;
                            g.pad_c = 7;
                            g.beta = 0.0f;
                            run_batched(&g);
                            g.broadcast_a = 1; /* one A for every batch */
                            g.beta = 1.0f;
                            run_batched(&g);
                        }
}

/* Every kernel family forced on batches it takes whole (aligned, whole tiles) and on ones that
 * break its 16-byte paths: the choice falls back where it must, the results stay right
 * ("sm90+bt": bf16 NN batches through the transposed-B kernel's 3-D map; "sm90+at": TF32 NN
 * batches through the register-A kernel's, C column-major). */
static void test_batched_forced(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    static const char *const configs[] = {
        "ffma:32x64x16", "ffma:64x64x16", "ffma:128x128x8", "ffma:128x128x8f",
        "ffma:128x128x16q3", "mma:64x64", "mma:128x64", "mma:128x128", "sm90", "sm90+bt",
        "sm90+at", "gemv"}; /* (mma:128x64 outside a tuning build: ignored, the table decides) */
    /* 70 x 50 x 1030: tails with K past CM__FFMA_EDGE_MIN_K (the pipelined FFMA
     * configuration's edge kernel, on batches) */
    static const size_t shapes[][4] = {{128, 128, 64, 2}, {128, 128, 32, 1}, {70, 50, 40, 3},
                                       {1, 96, 64, 3},    {96, 1, 64, 3},    {70, 50, 1030, 3}};
    /* under compute-sanitizer (slow launches): one layout */
    const int layouts = cm_test_under_sanitizer() ? 1 : 2;
    for (size_t f = 0; f < sizeof configs / sizeof configs[0]; ++f)
        for (int p = 0; p <= CM_GEMM_FP32_3XTF32; ++p)
            for (int l = 0; l < layouts; ++l)
                for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
                    for (int pad = 0; pad < 2; ++pad) {
                        /* row-major NT / column-major TN: the "TN" form the Hopper kernel
                         * takes directly; NN also (sm90+pack, mma and FFMA orientations) */
                        for (int o = 0; o < 2; ++o) {
                            const cm_gemm_op_t oa = o ? CM_GEMM_OP_N
                                                      : (l ? CM_GEMM_OP_T : CM_GEMM_OP_N);
                            const cm_gemm_op_t ob = o ? CM_GEMM_OP_N
                                                      : (l ? CM_GEMM_OP_N : CM_GEMM_OP_T);
                            bcase_t g = {(cm_gemm_precision_t)p, (cm_gemm_layout_t)l, oa, ob,
                                         shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3],
                                         pad, pad, pad ? 3 : 0, 0, 1.25f, pad ? 0.5f : 0.0f, 1,
                                         configs[f]};
                            run_batched(&g);
                        }
                    }
}

static void test_many_batches(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    /* more batches than one launch's grid dimension takes (65535) */
    bcase_t g = {CM_GEMM_FP32, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 3, 2, 4, 70000,
                 0, 0, 0, 0, 1.0f, 0.25f, 0, NULL};
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
    g.aligned = 1; /* 16-byte aligned: the tensor-core kernels */
    g.prec = CM_GEMM_BF16_OUT_BF16;
    g.layout = CM_GEMM_ROW_MAJOR;
    g.ob = CM_GEMM_OP_T;
    g.batch = 70000;
    run_batched(&g);
    g.config = "sm90";
    g.batch = 65537;
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

/* ====================================================================== the launchers */

enum { K_FFMA, K_MMA, K_GEMV, K_SM90, K_SKINNY };
/* strides: aligned (multiples of 16 bytes), odd (matrices >= 1 of A, B and C lose the 16-byte
 * alignment), A or B shared by the whole batch (stride 0), only C's stride odd */
enum { S_ALIGNED, S_ODD, S_BCAST_A, S_BCAST_B, S_ODD_C };

typedef struct kcase {
    int kind;     /* K_* */
    int config;   /* FFMA or MMA configuration */
    int tf32;     /* mma.sync: TF32 (in_type F32) */
    int in_type;  /* CM__GEMM_F32 / CM__GEMM_BF16 */
    int out_type;
    int m, n, k, a_kmajor, b_kmajor, batch; /* batch 0 means 1 */
    int strides;  /* S_* */
    float alpha, beta;
    int k_last;   /* > 0: K of the batch's last matrix (split-K's shorter last part) */
} kcase_t;

static const char *kind_name(int k) {
    return k == K_FFMA ? "ffma" : k == K_MMA ? "mma" : k == K_GEMV ? "gemv"
           : k == K_SKINNY ? "skinny" : "sm90";
}

static int sm_count(void) {
    int v = 1;
    (void)cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0);
    return v > 0 ? v : 1;
}

static int device_major(void) {
    int v = 0;
    (void)cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor, 0);
    return v;
}

/* One launcher call on a batch; returns 0 when the launcher declined (cudaErrorNotSupported,
 * C checked untouched), 1 when it ran and every matrix checked. */
static int run_kernel_case(const kcase_t *t) {
    const int bf = t->in_type == CM__GEMM_BF16, cbf = t->out_type == CM__GEMM_BF16;
    const size_t in_sz = bf ? 2 : 4, out_sz = cbf ? 2 : 4;
    const size_t m = (size_t)t->m, n = (size_t)t->n, k = (size_t)t->k;
    const size_t nb = t->batch > 1 ? (size_t)t->batch : 1;
    /* stored A: rows x cols (cols contiguous); leading dimensions in whole 16 bytes */
    const size_t a_rows = t->a_kmajor ? m : k, a_cols = t->a_kmajor ? k : m;
    const size_t b_rows = t->b_kmajor ? n : k, b_cols = t->b_kmajor ? k : n;
    const size_t lda = round8(a_cols), ldb = round8(b_cols), ldc = round8(n) + 8;
    const size_t span_a = a_rows * lda, span_b = b_rows * ldb, span_c = m * ldc;
    const int odd = t->strides == S_ODD;
    size_t sa = round8(span_a) + (odd ? 1 : 0), sb = round8(span_b) + (odd ? 3 : 0),
           sc = round8(span_c) + (odd || t->strides == S_ODD_C ? 5 : 0);
    if (t->strides == S_BCAST_A) sa = 0;
    if (t->strides == S_BCAST_B) sb = 0;
    const size_t a_el = (nb - 1) * sa + span_a, b_el = (nb - 1) * sb + span_b,
                 c_el = (nb - 1) * sc + span_c;
    float *A = malloc(a_el * 4), *B = malloc(b_el * 4), *C0 = malloc(c_el * 4);
    void *hA = malloc(a_el * in_sz), *hB = malloc(b_el * in_sz), *hC0 = malloc(c_el * out_sz),
         *hC = malloc(c_el * out_sz);
    assert_non_null(A); assert_non_null(B); assert_non_null(C0);
    assert_non_null(hA); assert_non_null(hB); assert_non_null(hC0); assert_non_null(hC);
    for (size_t i = 0; i < a_el; ++i) A[i] = rnd_f();
    for (size_t i = 0; i < b_el; ++i) B[i] = rnd_f();
    /* beta = 0: C never read, so it starts as NaN (a read would show) */
    for (size_t i = 0; i < c_el; ++i) C0[i] = t->beta != 0.0f ? rnd_f() : NAN;
    if (bf) {
        cm_bf16_from_float_array(hA, A, a_el);
        cm_bf16_from_float_array(hB, B, b_el);
        cm_bf16_to_float_array(A, hA, a_el);
        cm_bf16_to_float_array(B, hB, b_el);
    } else {
        memcpy(hA, A, a_el * 4);
        memcpy(hB, B, b_el * 4);
    }
    if (cbf) {
        cm_bf16_from_float_array(hC0, C0, c_el);
        cm_bf16_to_float_array(C0, hC0, c_el);
    } else {
        memcpy(hC0, C0, c_el * 4);
    }
    cm_buffer_t *dA = NULL, *dB = NULL, *dC = NULL;
    CM_ASSERT_OK(cm_buffer_create(c.dev, a_el * in_sz, &dA));
    CM_ASSERT_OK(cm_buffer_create(c.dev, b_el * in_sz, &dB));
    CM_ASSERT_OK(cm_buffer_create(c.dev, c_el * out_sz, &dC));
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, dA, 0, hA, a_el * in_sz));
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, dB, 0, hB, b_el * in_sz));
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, dC, 0, hC0, c_el * out_sz));
    void *pa = NULL, *pb = NULL, *pc = NULL;
    CM_ASSERT_OK(cm_buffer_device_ptr(dA, &pa));
    CM_ASSERT_OK(cm_buffer_device_ptr(dB, &pb));
    CM_ASSERT_OK(cm_buffer_device_ptr(dC, &pc));
    const cm__gemm_args_t args = {
        .m = t->m, .n = t->n, .k = t->k, .alpha = t->alpha, .beta = t->beta,
        .a = pa, .lda = (int64_t)lda, .a_kmajor = t->a_kmajor,
        .b = pb, .ldb = (int64_t)ldb, .b_kmajor = t->b_kmajor,
        .c = pc, .ldc = (int64_t)ldc, .in_type = t->in_type, .out_type = t->out_type,
        .batch = t->batch, .stride_a = (int64_t)sa, .stride_b = (int64_t)sb,
        .stride_c = (int64_t)sc, .k_last = t->k_last};
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    cudaError_t err = cudaErrorInvalidValue;
    switch (t->kind) {
    case K_FFMA: err = cm__gemm_ffma(&args, t->config, 0); break;
    case K_MMA: err = cm__gemm_mma(&args, t->tf32, t->config, 0); break;
    case K_GEMV: err = cm__gemm_gemv(&args, sm_count(), 0); break;
    case K_SKINNY: err = cm__gemm_skinny(&args, sm_count(), 0); break;
    default:
        err = cm__gemm_sm90_batched(t->in_type == CM__GEMM_BF16 ? CM__GEMM_SM90_BF16
                                                               : CM__GEMM_SM90_TF32,
                                    cbf, t->m, t->n, t->k, t->alpha, pa, (int64_t)lda, pb,
                                    (int64_t)ldb, t->beta, pc, (int64_t)ldc, t->batch,
                                    (int64_t)sa, (int64_t)sb, (int64_t)sc, 0);
        break;
    }
    if (err != cudaSuccess && err != cudaErrorNotSupported)
        fail_msg("%s config %d %dx%dx%d batch %d strides %d: %s", kind_name(t->kind), t->config,
                 t->m, t->n, t->k, t->batch, t->strides, cudaGetErrorName(err));
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, dC, 0, hC, c_el * out_sz));
    int ran = err == cudaSuccess;
    if (!ran) {
        (void)cudaGetLastError();
        if (memcmp(hC, hC0, c_el * out_sz) != 0)
            fail_msg("%s config %d declined (%s) but wrote C", kind_name(t->kind), t->config,
                     cudaGetErrorName(err));
    } else {
        float *C = malloc(c_el * 4);
        unsigned char *inside = calloc(c_el, 1);
        assert_non_null(C);
        assert_non_null(inside);
        if (cbf) cm_bf16_to_float_array(C, hC, c_el); else memcpy(C, hC, c_el * 4);
        double bound;
        if (bf) bound = cbf ? 1e-2 : 1e-4;
        else if ((t->kind == K_MMA && t->tf32) || t->kind == K_SM90) bound = 1e-3;
        else bound = 1e-6 * sqrt((double)k) + 1e-6;
        for (size_t z = 0; z < nb; ++z) {
            const float *Az = A + z * sa, *Bz = B + z * sb;
            /* the last matrix's K is k_last when set: what lies past it must not count */
            const size_t kz = z + 1 == nb && t->k_last > 0 ? (size_t)t->k_last : k;
            double num = 0, den = 0;
            for (size_t i = 0; i < m; ++i)
                for (size_t j = 0; j < n; ++j) {
                    double s = 0;
                    for (size_t l = 0; l < kz; ++l) {
                        const double av = t->a_kmajor ? Az[i * lda + l] : Az[l * lda + i];
                        const double bv = t->b_kmajor ? Bz[j * ldb + l] : Bz[l * ldb + j];
                        s += av * bv;
                    }
                    const size_t e = z * sc + i * ldc + j;
                    inside[e] = 1;
                    const double ref =
                        (double)t->alpha * s + (t->beta != 0.0f ? (double)t->beta * C0[e] : 0.0);
                    if (!isfinite(C[e]))
                        fail_msg("%s config %d %dx%dx%d (%d%d) batch %d strides %d: matrix %zu "
                                 "(%zu, %zu) = %g",
                                 kind_name(t->kind), t->config, t->m, t->n, t->k, t->a_kmajor,
                                 t->b_kmajor, t->batch, t->strides, z, i, j, (double)C[e]);
                    num += (C[e] - ref) * (C[e] - ref);
                    den += ref * ref;
                }
            const double e2 = den > 0 ? sqrt(num / den) : sqrt(num);
            if (!(e2 <= bound))
                fail_msg("%s config %d tf32 %d in %d out %d %dx%dx%d (%d%d) batch %d strides %d: "
                         "matrix %zu err %.3g > %.3g",
                         kind_name(t->kind), t->config, t->tf32, t->in_type, t->out_type, t->m,
                         t->n, t->k, t->a_kmajor, t->b_kmajor, t->batch, t->strides, z, e2,
                         bound);
        }
        for (size_t e = 0; e < c_el; ++e)
            if (!inside[e] && memcmp((const char *)hC + e * out_sz,
                                     (const char *)hC0 + e * out_sz, out_sz) != 0)
                fail_msg("%s config %d batch %d strides %d: element %zu outside every C matrix "
                         "was written",
                         kind_name(t->kind), t->config, t->batch, t->strides, e);
        free(C);
        free(inside);
    }
    CM_ASSERT_OK(cm_buffer_destroy(dA));
    CM_ASSERT_OK(cm_buffer_destroy(dB));
    CM_ASSERT_OK(cm_buffer_destroy(dC));
    free(A); free(B); free(C0); free(hA); free(hB); free(hC0); free(hC);
    return ran;
}

/* shapes of the launcher tests: odd tails, whole 128 x 128 tiles (the FFMA fast and pipelined
 * kernels, mma's full tiles), broadcast operands */
typedef struct kshape {
    int m, n, k, batch, strides;
    float beta;
} kshape_t;

static const kshape_t kshapes[] = {
    {37, 29, 19, 3, S_ODD, -0.5f},     {37, 29, 19, 3, S_ALIGNED, 0.75f},
    {128, 128, 32, 3, S_ALIGNED, 0.0f}, {128, 128, 32, 1, S_ALIGNED, 0.5f},
    {128, 128, 32, 0, S_ALIGNED, 0.0f}, {128, 128, 32, 3, S_ODD, 0.0f},
    {128, 128, 32, 2, S_ODD_C, 1.0f},  {64, 96, 40, 2, S_BCAST_A, 1.0f},
    {64, 96, 40, 2, S_BCAST_B, 0.0f},
};
#define KSHAPES (sizeof kshapes / sizeof kshapes[0])

static void test_kernels_ffma(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    int built = 0;
    for (int cfg = 0; cfg < CM__FFMA_COUNT; ++cfg) {
        if (!cm__gemm_ffma_built(cfg)) continue;
        ++built;
        for (int lay = 0; lay < 4; ++lay)
            for (size_t s = 0; s < KSHAPES; ++s) {
                const kshape_t *h = &kshapes[s];
                kcase_t t = {K_FFMA, cfg, 0, CM__GEMM_F32, CM__GEMM_F32, h->m, h->n, h->k,
                             lay & 1, lay >> 1, h->batch, h->strides, 1.5f, h->beta, 0};
                assert_true(run_kernel_case(&t));
            }
    }
    assert_true(built >= 5);
    /* bf16 inputs (the sm_75 fallback of the BF16 precisions): two tiles, float or bf16 C */
    static const int bcfg[] = {CM__FFMA_64x64x16, CM__FFMA_128x128x8};
    for (int i = 0; i < 2; ++i)
        for (int out = 0; out < 2; ++out)
            for (int lay = 0; lay < 4; ++lay)
                for (size_t s = 0; s < KSHAPES; s += 2) {
                    const kshape_t *h = &kshapes[s];
                    kcase_t t = {K_FFMA, bcfg[i], 0, CM__GEMM_BF16,
                                 out ? CM__GEMM_BF16 : CM__GEMM_F32, h->m, h->n, h->k, lay & 1,
                                 lay >> 1, h->batch, h->strides, 1.5f, h->beta, 0};
                    assert_true(run_kernel_case(&t));
                }
    /* more matrices than one launch takes */
    kcase_t t = {K_FFMA, CM__FFMA_32x64x16, 0, CM__GEMM_F32, CM__GEMM_F32, 5, 3, 7, 1, 0, 70000,
                 S_ODD, 1.0f, 0.25f, 0};
    assert_true(run_kernel_case(&t));
    kcase_t u = {K_FFMA, CM__FFMA_64x64x16, 0, CM__GEMM_BF16, CM__GEMM_BF16, 6, 9, 8, 1, 1,
                 70000, S_ALIGNED, 1.0f, 0.0f, 0};
    assert_true(run_kernel_case(&u));
}

static void test_kernels_mma(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    if (device_major() < 8) {
        /* mma.sync needs sm_80: the launcher declines everything */
        kcase_t t = {K_MMA, CM__MMA_64x64, 1, CM__GEMM_F32, CM__GEMM_F32, 16, 16, 16, 1, 1, 3,
                     S_ALIGNED, 1.0f, 0.0f, 0};
        assert_false(run_kernel_case(&t));
        print_message("mma.sync needs sm_80 or later: declined, as it must be\n");
        return;
    }
    /* tf32 (float C), bf16 with float C, bf16 with bf16 C */
    static const int prec[3][3] = {{1, CM__GEMM_F32, CM__GEMM_F32},
                                   {0, CM__GEMM_BF16, CM__GEMM_F32},
                                   {0, CM__GEMM_BF16, CM__GEMM_BF16}};
    for (int cfg = 0; cfg < CM__MMA_COUNT; ++cfg)
        for (int p = 0; p < 3; ++p)
            for (int lay = 0; lay < 4; ++lay)
                for (size_t s = 0; s < KSHAPES; ++s) {
                    const kshape_t *h = &kshapes[s];
                    kcase_t t = {K_MMA, cfg, prec[p][0], prec[p][1], prec[p][2], h->m, h->n, h->k,
                                 lay & 1, lay >> 1, h->batch, h->strides, 1.5f, h->beta, 0};
                    const cm__gemm_args_t q = {.a = (const void *)(uintptr_t)256, .lda = 64,
                                               .b = (const void *)(uintptr_t)512, .ldb = 64,
                                               .in_type = t.in_type, .batch = t.batch,
                                               .stride_a = h->strides == S_ODD ? 4097 : 4096,
                                               .stride_b = h->strides == S_ODD ? 4099 : 4096};
                    /* odd strides of A / B: refused (matrices >= 1 not 16-byte aligned) but
                     * by the TF32 align1 form of 128 x 128 and 64 x 64 where it has code
                     * for the device */
                    const int refuse = h->strides == S_ODD && t.batch > 1;
                    const int align1 = t.tf32 && (cfg == CM__MMA_128x128 ||
                                                  cfg == CM__MMA_64x64) &&
                                       cm__gemm_mma_align1_for(device_major());
                    assert_int_equal(cm__gemm_mma_aligned(&q), !refuse);
                    /* a tile this build did not compile (mma:128x64 outside tuning builds)
                     * is declined with nothing written */
                    assert_int_equal(run_kernel_case(&t),
                                     (!refuse || align1) && cm__gemm_mma_built(cfg));
                }
    kcase_t t = {K_MMA, CM__MMA_64x64, 1, CM__GEMM_F32, CM__GEMM_F32, 16, 16, 16, 1, 0, 70000,
                 S_ALIGNED, 1.0f, 0.5f, 0};
    assert_true(run_kernel_case(&t));
}

/* The vector-like kernels (kind K_GEMV or K_SKINNY) on each shape, every type pair and layout,
 * batches of 0, 1 and 3 with every stride kind (beta 0 with aligned strides, -0.5 otherwise). */
static void run_vector_kernel_cases(int kind, const int (*shapes)[3], size_t n_shapes) {
    static const int types[3][2] = {{CM__GEMM_F32, CM__GEMM_F32},
                                     {CM__GEMM_BF16, CM__GEMM_F32},
                                     {CM__GEMM_BF16, CM__GEMM_BF16}};
    static const int strides[] = {S_ALIGNED, S_ODD, S_BCAST_A, S_BCAST_B};
    static const int batches[] = {0, 1, 3};
    for (size_t s = 0; s < n_shapes; ++s)
        for (int ty = 0; ty < 3; ++ty)
            for (int lay = 0; lay < 4; ++lay)
                for (int b = 0; b < 3; ++b)
                    for (int st = 0; st < 4; ++st) {
                        kcase_t t = {kind, 0, 0, types[ty][0], types[ty][1], shapes[s][0],
                                     shapes[s][1], shapes[s][2], lay & 1, lay >> 1, batches[b],
                                     strides[st], 1.5f, st == 0 ? 0.0f : -0.5f, 0};
                        assert_true(run_kernel_case(&t));
                    }
}

static void test_kernels_gemv(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    static const int shapes[][3] = {{1, 100, 50}, {70, 1, 33}, {1, 1, 40}, {1, 300, 16}};
    run_vector_kernel_cases(K_GEMV, shapes, sizeof shapes / sizeof shapes[0]);
    kcase_t t = {K_GEMV, 0, 0, CM__GEMM_F32, CM__GEMM_F32, 1, 5, 8, 1, 0, 70000, S_ODD, 1.0f,
                 0.25f, 0};
    assert_true(run_kernel_case(&t));
    kcase_t u = {K_GEMV, 0, 0, CM__GEMM_BF16, CM__GEMM_BF16, 6, 1, 8, 0, 1, 65536, S_ALIGNED,
                 1.0f, 0.0f, 0};
    assert_true(run_kernel_case(&u));
}

/* the skinny kernel (small side 2 .. 16; also 1, which it runs when forced) in both
 * orientations, every type pair and layout, batches with every stride kind, then a batch past
 * one launch's grid.z */
static void test_kernels_skinny(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    static const int shapes[][3] = {{3, 100, 50}, {70, 2, 300}, {16, 40, 260}, {1, 33, 17}};
    run_vector_kernel_cases(K_SKINNY, shapes, sizeof shapes / sizeof shapes[0]);
    kcase_t t = {K_SKINNY, 0, 0, CM__GEMM_F32, CM__GEMM_F32, 4, 5, 8, 1, 0, 70000, S_ODD, 1.0f,
                 0.25f, 0};
    assert_true(run_kernel_case(&t));
}

/* k_last (kernels/gemm.h: split-K's shorter last part) on every launcher that takes it: the
 * batch's last matrix multiplies only its first k_last of K, the others all of it. FFMA: every
 * built configuration (the PIPE4 one over K >= CM__FFMA_EDGE_MIN_K runs its edge kernel, below
 * its fallback's general one), bf16 inputs; mma.sync; gemv; skinny; batches of 1 (k_last is
 * then the problem's K), 3 and past one launch (only the last launch's last matrix is short). */
static void test_kernels_k_last(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    static const struct {
        int m, n, k, batch, k_last;
    } sh[] = {{37, 29, 96, 3, 35}, {128, 128, 64, 3, 33}, {64, 96, 1088, 2, 1027},
              {40, 70, 64, 1, 17}};
    for (int cfg = 0; cfg < CM__FFMA_COUNT; ++cfg) {
        if (!cm__gemm_ffma_built(cfg)) continue;
        for (int lay = 0; lay < 4; ++lay)
            for (size_t s = 0; s < sizeof sh / sizeof sh[0]; ++s) {
                kcase_t t = {K_FFMA, cfg, 0, CM__GEMM_F32, CM__GEMM_F32, sh[s].m, sh[s].n,
                             sh[s].k, lay & 1, lay >> 1, sh[s].batch, S_ALIGNED, 1.0f, 0.0f,
                             sh[s].k_last};
                assert_true(run_kernel_case(&t));
            }
    }
    for (int lay = 0; lay < 4; ++lay) {
        kcase_t t = {K_FFMA, CM__FFMA_64x64x16, 0, CM__GEMM_BF16, CM__GEMM_F32, 37, 29, 96,
                     lay & 1, lay >> 1, 3, S_ALIGNED, 1.0f, 0.0f, 41};
        assert_true(run_kernel_case(&t));
        kcase_t u = {K_FFMA, CM__FFMA_32x64x16, 0, CM__GEMM_F32, CM__GEMM_F32, 5, 3, 64, lay & 1,
                     lay >> 1, 70000, S_ODD, 1.0f, 0.25f, 7};
        if (lay == 0) assert_true(run_kernel_case(&u));
        if (device_major() >= 8)
            for (int cfg = 0; cfg < CM__MMA_COUNT; ++cfg)
                for (int p = 0; p < 2; ++p)
                    for (size_t s = 0; s < sizeof sh / sizeof sh[0]; ++s) {
                        kcase_t v = {K_MMA, cfg, !p, p ? CM__GEMM_BF16 : CM__GEMM_F32,
                                     CM__GEMM_F32, sh[s].m, sh[s].n, sh[s].k, lay & 1, lay >> 1,
                                     sh[s].batch, S_ALIGNED, 1.0f, 0.0f, sh[s].k_last};
                        assert_int_equal(run_kernel_case(&v), cm__gemm_mma_built(cfg));
                    }
        static const int vec[][5] = {{1, 300, 600, 3, 77}, {500, 1, 512, 2, 300},
                                     {7, 300, 600, 3, 77}, {300, 5, 600, 2, 301}};
        for (int i = 0; i < 4; ++i)
            for (int p = 0; p < 2; ++p) {
                kcase_t v = {i < 2 ? K_GEMV : K_SKINNY, 0, 0, p ? CM__GEMM_BF16 : CM__GEMM_F32,
                             CM__GEMM_F32, vec[i][0], vec[i][1], vec[i][2], lay & 1, lay >> 1,
                             vec[i][3], p ? S_ODD : S_ALIGNED, 1.0f, p ? -0.5f : 0.0f,
                             vec[i][4]};
                assert_true(run_kernel_case(&v));
            }
    }
}

static void test_kernels_sm90(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    int major = 0, minor = 0;
    (void)cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
    (void)cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
    /* the operand rules hold on any device: odd strides of A or B are refused, stride_c not */
    const void *p16 = (const void *)(uintptr_t)4096;
    const int have = cm__gemm_sm90_batched_supported(CM__GEMM_SM90_BF16, 0, 64, 64, 64, p16, 64,
                                                     p16, 64, p16, 64, 1, 0, 0, 0);
    if (have) {
        assert_int_equal(cm__gemm_sm90_batched_supported(CM__GEMM_SM90_BF16, 0, 64, 64, 64, p16,
                                                         64, p16, 64, p16, 64, 3, 4097, 4096,
                                                         4096), 0);
        assert_int_equal(cm__gemm_sm90_batched_supported(CM__GEMM_SM90_TF32, 0, 64, 64, 64, p16,
                                                         64, p16, 64, p16, 64, 3, 4096, 4098,
                                                         4096), 0);
        assert_int_equal(cm__gemm_sm90_batched_supported(CM__GEMM_SM90_TF32, 0, 64, 64, 64, p16,
                                                         64, p16, 64, p16, 64, 3, 4096, 0, 4097),
                         1);
        /* the same odd stride is ignored for one matrix */
        assert_int_equal(cm__gemm_sm90_batched_supported(CM__GEMM_SM90_BF16, 0, 64, 64, 64, p16,
                                                         64, p16, 64, p16, 64, 1, 4097, 4097,
                                                         4097), 1);
    }
    if (!(major == 9 && minor == 0) || !have) {
        print_message("the Hopper kernel needs cc 9.0 and a library built for it (cc %d.%d, "
                      "built: %d): not run\n", major, minor, have);
        if (major == 9 && minor == 0 && cm_test_gpu_required())
            fail_msg("cc 9.0 but the library carries no Hopper GEMM kernel");
        return;
    }
    /* bf16 (float or bf16 C), tf32 (float C); "TN" only */
    static const int prec[3][2] = {{CM__GEMM_BF16, CM__GEMM_F32},
                                   {CM__GEMM_BF16, CM__GEMM_BF16},
                                   {CM__GEMM_F32, CM__GEMM_F32}};
    static const kshape_t sh[] = {
        {200, 300, 100, 3, S_ALIGNED, -0.5f}, {200, 300, 100, 1, S_ALIGNED, 0.0f},
        {200, 300, 100, 0, S_ALIGNED, 0.5f},  {130, 20, 72, 3, S_BCAST_A, 1.0f},
        {130, 20, 72, 3, S_BCAST_B, 0.0f},    {64, 64, 64, 3, S_ODD_C, 0.25f},
        {64, 64, 64, 3, S_ODD, 0.0f},         {256, 512, 128, 2, S_ALIGNED, 0.0f},
    };
    for (int p = 0; p < 3; ++p)
        for (size_t s = 0; s < sizeof sh / sizeof sh[0]; ++s) {
            kcase_t t = {K_SM90, 0, 0, prec[p][0], prec[p][1], sh[s].m, sh[s].n, sh[s].k, 1, 1,
                         sh[s].batch, sh[s].strides, 1.5f, sh[s].beta, 0};
            const int refuse = sh[s].strides == S_ODD && sh[s].batch > 1;
            assert_int_equal(run_kernel_case(&t), !refuse);
        }
    /* more matrices than one launch takes: the tensor maps encoded again per launch */
    kcase_t t = {K_SM90, 0, 0, CM__GEMM_BF16, CM__GEMM_F32, 8, 8, 16, 1, 1, 70000, S_ALIGNED,
                 1.0f, 0.5f, 0};
    assert_true(run_kernel_case(&t));
    /* 65535 + 1: the last launch is a single matrix (2-D maps, the single-matrix kernel) */
    kcase_t u = {K_SM90, 0, 0, CM__GEMM_F32, CM__GEMM_F32, 8, 24, 32, 1, 1, 65536, S_BCAST_B,
                 1.0f, 0.0f, 0};
    assert_true(run_kernel_case(&u));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batched_refusals),
        cmocka_unit_test(test_kernels_ffma),
        cmocka_unit_test(test_kernels_mma),
        cmocka_unit_test(test_kernels_gemv),
        cmocka_unit_test(test_kernels_skinny),
        cmocka_unit_test(test_kernels_k_last),
        cmocka_unit_test(test_kernels_sm90),
        cmocka_unit_test(test_batched_shapes),
        cmocka_unit_test(test_batched_forced),
        cmocka_unit_test(test_many_batches),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
