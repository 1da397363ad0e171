/*
 * cm_gemm() on a real GPU against float64 references.
 *
 * Small and odd shapes (1x1x1, 17x33x65, 64^3, 130x67x129, K = 0, 251x253x509) x every
 * precision x both layouts x every (op_a, op_b), packed and with padded leading dimensions and
 * misaligned offsets (which move TF32 / BF16 off the tensor-core paths), alpha / beta general
 * and beta = 0 with C full of NaN; every tile configuration the library was built with forced
 * (cm__gemm_config_override_set_for_tests: the library reads CUDAMODEL_GEMM_CONFIG once per
 * process); one large 4096^3 per precision checked on 4096 sampled entries;
 * the same bits on a repeated call. Inputs random in [-1, 3) (never zeros; the range the test
 * has always drawn, although this line said [-1, 1): mean 1, so sums cancel less than they
 * would around 0; moving to cm_test_rand_unit's [-1, 1) tightens the test and waits for a GPU
 * run), drawn fresh per case; C's whole buffer poisoned (NaN, or random values when beta != 0) and every element
 * checked, the gaps between rows / columns and the tail included (must be untouched).
 *
 * Error measure: relative Frobenius norm ||C - ref|| / ||ref|| over the matrix, float64
 * reference on the CPU (every element finite: NaN never passes). Bounds:
 *   FP32                    1e-6 * sqrt(K) + 1e-6 against the exact product (FP32 summation of K
 *                           products: typical error 2^-24 * sqrt(K); the bound leaves ~10x)
 *   TF32                    1e-3 against the exact product (inputs rounded to 10-bit mantissas:
 *                           2^-11 relative each, RMS about 4e-4 per product) and 3e-4 against
 *                           the product of the inputs rounded as cvt.rna.tf32 does (a kernel
 *                           that truncates instead differs by up to one TF32 unit per input), or
 *                           the FP32 bound against the exact product where TF32 runs the FP32
 *                           kernel (sm_75, operands not 16-byte aligned)
 *   BF16 (float C)          1e-4 against the product of the bf16 inputs (exact products, FP32
 *                           sums), 1e-2 against the product of the unrounded floats
 *   BF16 (bf16 C)           1e-2 against the product of the bf16 inputs (one bf16 rounding, 2^-9)
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

#include "gemm.h"          /* CM__FFMA_COUNT, CM__MMA_COUNT (kernels/) */
#include "gemm_check.h"    /* gemm_check_tf32_round, gemm_check_prec_name (tests/gpu/) */
#include "gemm_internal.h" /* cm__gemm_choice_name (src/) */

static uint64_t rng_state = 0x243F6A8885A308D3ull;
/* uniform in [-1, 3): the very values every H200 run of this test used (bit for bit); the
 * header says why not [-1, 1) */
static float rnd_f(void) { return (float)(2.0 * cm_test_rand_unit(&rng_state) + 1.0); }

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


typedef struct gcase {
    cm_gemm_precision_t prec;
    cm_gemm_layout_t layout;
    cm_gemm_op_t oa, ob;
    size_t m, n, k;
    float alpha, beta;
    size_t pad;    /* added to each minimal leading dimension */
    size_t off;    /* element offset of each matrix (cm_gemm takes it in bytes) */
    const char *config; /* forced configuration (a CUDAMODEL_GEMM_CONFIG name) or NULL */
    size_t samples;     /* 0: check every element; else that many sampled entries */
} gcase_t;

/* A case's misaligned form: leading dimensions padded by 3, every matrix one element off its
 * base, beta 0 over a C full of NaN (which must never be read) */
static void misalign(gcase_t *g) {
    g->pad = 3;
    g->off = 1;
    g->beta = 0.0f;
}

/* The kernel cm_gemm chooses for g's shape on device 0 (cm_gemm_config_name), under g->config
 * when one is forced */
static const char *chosen(const gcase_t *g) {
    const char *name = NULL;
    if (g->config) cm__gemm_config_override_set_for_tests(g->config);
    const cm_status_t st =
        cm_gemm_config_name(0, g->prec, g->layout, g->oa, g->ob, g->m, g->n, g->k, &name);
    if (g->config) cm__gemm_config_override_set_for_tests(NULL);
    CM_ASSERT_OK(st);
    return name;
}

/* An attribute of the calling thread's current device */
static int current_attr(enum cudaDeviceAttr attr) {
    int dev = 0, value = 0;
    assert_int_equal(cudaGetDevice(&dev), cudaSuccess);
    assert_int_equal(cudaDeviceGetAttribute(&value, attr, dev), cudaSuccess);
    return value;
}

/* The compute capability's major number of the calling thread's current device */
static int current_major(void) { return current_attr(cudaDevAttrComputeCapabilityMajor); }

/* Whether the current device is a Hopper of 132 multiprocessors (H100 SXM, H200), where the
 * dispatch's expected choices below were measured */
static bool hopper_132_sms(void) {
    return current_attr(cudaDevAttrMultiProcessorCount) == 132 && current_major() == 9;
}

/* The default choice for a row-major "NN" product of m x n x k in precision p */
static const char *nn_choice(cm_gemm_precision_t p, size_t m, size_t n, size_t k) {
    const gcase_t g = {p, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, m, n, k,
                       1.0f, 0.0f, 0, 0, NULL, 0};
    return chosen(&g);
}

/* Whether device 0 runs the Hopper wgmma kernel (bf16 "TN" 4096^3 goes to it where it does) */
static bool hopper_kernel_chosen(void) {
    const gcase_t g = {CM_GEMM_BF16, CM_GEMM_COL_MAJOR, CM_GEMM_OP_T, CM_GEMM_OP_N, 4096, 4096,
                       4096, 1.0f, 0.0f, 0, 0, NULL, 0};
    return strcmp(chosen(&g), "sm90") == 0;
}

/* A Hopper-only test's opening: true (said so) where this device has no Hopper kernel */
static bool no_hopper_kernel(void) {
    if (hopper_kernel_chosen()) return false;
    print_message("no Hopper kernel on this device: nothing to test\n");
    return true;
}

/* reference of element (i, j) from float operands (already rounded as wanted):
 * gemm_check_dot over g's layout, ops and K */
static double ref_at(const gcase_t *g, const float *A, size_t lda, const float *B, size_t ldb,
                     size_t i, size_t j, int absolute) {
    return gemm_check_dot(g->layout, g->oa, g->ob, g->k, A, lda, B, ldb, i, j, absolute);
}

/* The float64 references of run_case's checked elements of C (elems[t]: the element's index
 * in C's buffer), computed by cm_test_parallel_for: ref from the values the kernel multiplies
 * (Ar, Br), exact from the unrounded inputs (A, B) and scale the sum of the terms' magnitudes
 * (both only where the precision rounds its inputs). The matrices start at the pointers
 * given (g->off elements into their buffers). */
typedef struct ref_job {
    const gcase_t *g;
    int row;
    size_t ldc;
    const float *A, *Ar;
    size_t lda;
    const float *B, *Br;
    size_t ldb;
    size_t *elems;
    double *ref, *exact, *scale;
    size_t n;
} ref_job_t;

static void ref_range(size_t lo, size_t hi, void *ctx) {
    const ref_job_t *j = ctx;
    const gcase_t *g = j->g;
    for (size_t t = lo; t < hi; ++t) {
        const size_t q = (j->elems[t] - g->off) / j->ldc, r = (j->elems[t] - g->off) % j->ldc;
        const size_t i = j->row ? q : r, col = j->row ? r : q;
        j->ref[t] = ref_at(g, j->Ar, j->lda, j->Br, j->ldb, i, col, 0);
        if (g->prec != CM_GEMM_FP32) {
            j->exact[t] = ref_at(g, j->A, j->lda, j->B, j->ldb, i, col, 0);
            j->scale[t] = ref_at(g, j->A, j->lda, j->B, j->ldb, i, col, 1);
        }
    }
}

/* x as the kernel of precision p multiplies it (bf16- or TF32-rounded, or as it is) */
static float multiplied(cm_gemm_precision_t p, float x) {
    if (p == CM_GEMM_BF16 || p == CM_GEMM_BF16_OUT_BF16)
        return cm_bf16_to_float(cm_bf16_from_float(x));
    return p == CM_GEMM_TF32 ? gemm_check_tf32_round(x) : x;
}

/* runs one case, fails the test when it is wrong, returns its relative error (Frobenius, against
 * float64 from the values the kernel multiplies) */
static double run_case(const gcase_t *g, size_t idx) {
    const int row = g->layout == CM_GEMM_ROW_MAJOR;
    const int bf = g->prec == CM_GEMM_BF16 || g->prec == CM_GEMM_BF16_OUT_BF16;
    const int cbf = g->prec == CM_GEMM_BF16_OUT_BF16;
    const size_t ar = g->oa == CM_GEMM_OP_N ? g->m : g->k, ac = g->oa == CM_GEMM_OP_N ? g->k : g->m;
    const size_t br = g->ob == CM_GEMM_OP_N ? g->k : g->n, bc = g->ob == CM_GEMM_OP_N ? g->n : g->k;
    size_t lda = (row ? ac : ar) + g->pad, ldb = (row ? bc : br) + g->pad;
    size_t ldc = (row ? g->n : g->m) + g->pad;
    if (lda == 0) lda = 1;
    if (ldb == 0) ldb = 1;
    if (ldc == 0) ldc = 1;
    const size_t a_el = g->off + (row ? ar : ac) * lda + 7;
    const size_t b_el = g->off + (row ? br : bc) * ldb + 7;
    const size_t c_el = g->off + (row ? g->m : g->n) * ldc + 7;
    const size_t in_sz = bf ? 2 : 4, out_sz = cbf ? 2 : 4;

    float *A = malloc(a_el * 4), *B = malloc(b_el * 4), *Ar = malloc(a_el * 4), *Br = malloc(b_el * 4);
    float *C0 = malloc(c_el * 4), *C = malloc(c_el * 4);
    void *hA = malloc(a_el * in_sz), *hB = malloc(b_el * in_sz), *hC = malloc(c_el * out_sz);
    assert_true(A && B && Ar && Br && C0 && C && hA && hB && hC);
    for (size_t i = 0; i < a_el; ++i) A[i] = rnd_f();
    for (size_t i = 0; i < b_el; ++i) B[i] = rnd_f();
    /* the values the kernel multiplies */
    for (size_t i = 0; i < a_el; ++i) Ar[i] = multiplied(g->prec, A[i]);
    for (size_t i = 0; i < b_el; ++i) Br[i] = multiplied(g->prec, B[i]);
    if (bf) {
        cm_bf16_from_float_array(hA, A, a_el);
        cm_bf16_from_float_array(hB, B, b_el);
    } else {
        memcpy(hA, A, a_el * 4);
        memcpy(hB, B, b_el * 4);
    }
    /* C: NaN everywhere when beta == 0 (must never be read), else random; gaps keep it */
    for (size_t i = 0; i < c_el; ++i) {
        if (g->beta == 0.0f) {
            uint32_t nan = 0xffffffffu;
            memcpy(&C0[i], &nan, 4);
        } else {
            C0[i] = rnd_f();
        }
    }
    if (cbf) {
        cm_bf16_from_float_array(hC, C0, c_el);
        cm_bf16_to_float_array(C0, hC, c_el); /* beta * C reads the bf16 C */
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
    /* NULL (synchronous) or the pooled stream; offsets in bytes, leading dimensions in elements */
    cm_stream_t *s = (idx & 1) ? c.stream : NULL;
    CM_ASSERT_OK(cm_gemm(s, g->prec, g->layout, g->oa, g->ob, g->m, g->n, g->k, g->alpha, dA,
                         g->off * in_sz, lda, dB, g->off * in_sz, ldb, g->beta, dC,
                         g->off * out_sz, ldc));
    if (g->config) cm__gemm_config_override_set_for_tests(NULL);
    CM_ASSERT_OK(cm_stream_synchronize(c.stream));
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, dC, 0, hC, c_el * out_sz));
    if (cbf) cm_bf16_to_float_array(C, hC, c_el); else memcpy(C, hC, c_el * 4);

    /* every element: inside C -> compare; outside -> untouched (bitwise). First the elements
     * to check (every one, or every step-th with samples), then their float64 references on
     * every CPU (cm_test_parallel_for: the reference is most of this test's time), then the
     * sums in element order as before */
    double e_num = 0, e_den = 0, x_num = 0, x_den = 0;
    size_t outside_bad = 0, nonfinite = 0;
    const size_t outer = row ? g->m : g->n, inner = row ? g->n : g->m;
    const size_t step = g->samples ? (g->m * g->n + g->samples - 1) / g->samples : 1;
    size_t count = 0;
    ref_job_t job = {g, row, ldc, A + g->off, Ar + g->off, lda, B + g->off, Br + g->off, ldb,
                     NULL, NULL, NULL, NULL, 0};
    const size_t cap = g->samples ? g->samples + 1 : g->m * g->n;
    job.elems = malloc((cap ? cap : 1) * sizeof *job.elems);
    job.ref = malloc((cap ? cap : 1) * sizeof *job.ref);
    job.exact = malloc((cap ? cap : 1) * sizeof *job.exact);
    job.scale = malloc((cap ? cap : 1) * sizeof *job.scale);
    assert_true(job.elems && job.ref && job.exact && job.scale);
    for (size_t e = 0; e < c_el; ++e) {
        const int in_range = e >= g->off && (e - g->off) / ldc < outer && (e - g->off) % ldc < inner;
        if (!in_range) {
            if (memcmp(&C[e], &C0[e], 4) != 0 && !(isnan(C[e]) && isnan(C0[e]))) ++outside_bad;
            continue;
        }
        const size_t q = (e - g->off) / ldc, r = (e - g->off) % ldc;
        const size_t i = row ? q : r, j = row ? r : q;
        if (g->samples && ((i * g->n + j) % step) != 0) continue;
        ++count;
        if (!isfinite(C[e])) { ++nonfinite; continue; }
        assert_true(job.n < cap);
        job.elems[job.n++] = e;
    }
    cm_test_parallel_for(job.n, 64, ref_range, &job);
    for (size_t t = 0; t < job.n; ++t) {
        const size_t e = job.elems[t];
        const double base = g->beta != 0.0f ? (double)g->beta * C0[e] : 0.0;
        const double ref = (double)g->alpha * job.ref[t] + base;
        e_num += (C[e] - ref) * (C[e] - ref);
        e_den += ref * ref;
        if (g->prec != CM_GEMM_FP32) {
            const double exact = (double)g->alpha * job.exact[t] + base;
            /* against the size of the terms, not of their sum: rounding the inputs moves each
             * product by ~2^-9 of itself, and alpha A B + beta C may cancel (1x1x1 did) */
            const double scale = fabs((double)g->alpha) * job.scale[t] + fabs(base);
            x_num += (C[e] - exact) * (C[e] - exact);
            x_den += scale * scale;
        }
    }
    free(job.elems);
    free(job.ref);
    free(job.exact);
    free(job.scale);
    const double err = e_den > 0 ? sqrt(e_num / e_den) : sqrt(e_num);
    const double xerr = x_den > 0 ? sqrt(x_num / x_den) : sqrt(x_num);
    double bound = 0, xbound = 1;
    switch (g->prec) {
    case CM_GEMM_FP32: bound = 1e-6 * sqrt((double)g->k) + 1e-6; break;
    case CM_GEMM_TF32: bound = 3e-4; xbound = 1e-3; break;
    case CM_GEMM_BF16: bound = 1e-4; xbound = 1e-2; break;
    case CM_GEMM_FP32_3XTF32: /* FP32 accuracy from TF32 tensor cores: the FP32 bounds */
        bound = xbound = 1e-6 * sqrt((double)g->k) + 1e-6;
        break;
    default: bound = 1e-2; xbound = 2e-2; break;
    }
    const char *name = NULL;
    (void)cm_gemm_config_name(0, g->prec, g->layout, g->oa, g->ob, g->m, g->n, g->k, &name);
    /* TF32 may run the FP32 kernel (sm_75, operands not 16-byte aligned): then it is exact FP32 */
    const double fp32_bound = 1e-6 * sqrt((double)g->k) + 1e-6;
    const int ok_err = err <= bound || (g->prec == CM_GEMM_TF32 && xerr <= fp32_bound);
    if (outside_bad || nonfinite || !ok_err || !(xerr <= xbound) || count == 0) {
        fail_msg("%s %s op_a=%c op_b=%c %zux%zux%zu pad %zu off %zu alpha %g beta %g config %s "
                 "(default %s): err %.3g (bound %.3g) vs exact %.3g (bound %.3g), %zu non-finite, "
                 "%zu touched outside C, %zu checked",
                 gemm_check_prec_name(g->prec), row ? "row" : "col", g->oa ? 'T' : 'N',
                 g->ob ? 'T' : 'N', g->m, g->n, g->k, g->pad, g->off, (double)g->alpha,
                 (double)g->beta, g->config ? g->config : "-", name ? name : "?", err, bound,
                 xerr, xbound, nonfinite, outside_bad, count);
    }
    CM_ASSERT_OK(cm_buffer_destroy(dA));
    CM_ASSERT_OK(cm_buffer_destroy(dB));
    CM_ASSERT_OK(cm_buffer_destroy(dC));
    free(A); free(B); free(Ar); free(Br); free(C0); free(C); free(hA); free(hB); free(hC);
    return err;
}

static void test_small_all_combinations(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    static const size_t shapes[][3] = {{1, 1, 1}, {17, 33, 65}, {64, 64, 64}, {130, 67, 129},
                                       {9, 7, 0}, {3, 200, 5}};
    size_t idx = 0;
    for (int p = 0; p <= CM_GEMM_FP32_3XTF32; ++p)
        for (int l = 0; l < 2; ++l)
            for (int oa = 0; oa < 2; ++oa)
                for (int ob = 0; ob < 2; ++ob)
                    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
                        for (int v = 0; v < 2; ++v) {
                            gcase_t g = {(cm_gemm_precision_t)p, (cm_gemm_layout_t)l,
                                         (cm_gemm_op_t)oa, (cm_gemm_op_t)ob, shapes[s][0],
                                         shapes[s][1], shapes[s][2], 1.5f, -0.75f, 0, 0, NULL, 0};
                            /* 3xTF32 takes its Hopper split path only on large problems:
                             * forced here (other devices run FFMA either way) */
                            if (p == CM_GEMM_FP32_3XTF32) g.config = "sm90+3xtf32";
                            if (v) { /* padded, misaligned, beta = 0 over NaN */
                                misalign(&g);
                                g.alpha = -0.5f;
                            }
                            run_case(&g, idx++);
                        }
}

static void test_medium_odd(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    size_t idx = 0;
    for (int p = 0; p <= CM_GEMM_FP32_3XTF32; ++p)
        for (int l = 0; l < 2; ++l)
            for (int oa = 0; oa < 2; ++oa)
                for (int ob = 0; ob < 2; ++ob) {
                    gcase_t g = {(cm_gemm_precision_t)p, (cm_gemm_layout_t)l, (cm_gemm_op_t)oa,
                                 (cm_gemm_op_t)ob, 251, 253, 509, 1.0f, 0.5f, 0, 0, NULL, 0};
                    if (p == CM_GEMM_FP32_3XTF32) g.config = "sm90+3xtf32";
                    run_case(&g, idx++);
                }
}

/* every tile configuration the library was built with (the shipped FFMA set, or all of them in
 * a -DCUDAMODEL_BUILD_TUNING=ON build), forced, on a shape with tails in every dimension, on
 * whole tiles, and on misaligned operands */
static void test_every_config(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    /* the library's own lists of names (src/gemm_api.c), in its order: a new configuration is
     * tested without being listed here again */
    const char *ffma[CM__FFMA_COUNT], *tc[CM__MMA_COUNT + 1];
    size_t nffma = 0;
    for (int i = 0; i < CM__FFMA_COUNT; ++i)
        if (cm__gemm_ffma_built(i))
            ffma[nffma++] = cm__gemm_choice_name((cm__gemm_choice_t){CM__GEMM_KERNEL_FFMA, i});
    assert_true(nffma >= 5); /* the shipped set at least */
    assert_int_equal(nffma == (size_t)CM__FFMA_COUNT, CM_GEMM_TUNING);
    for (int i = 0; i < CM__MMA_COUNT; ++i)
        tc[i] = cm__gemm_choice_name((cm__gemm_choice_t){CM__GEMM_KERNEL_MMA, i});
    tc[CM__MMA_COUNT] = "sm90";
    size_t idx = 0;
    for (int l = 0; l < 2; ++l)
        for (int oa = 0; oa < 2; ++oa)
            for (int ob = 0; ob < 2; ++ob) {
                for (size_t i = 0; i < nffma; ++i) {
                    gcase_t g = {CM_GEMM_FP32, (cm_gemm_layout_t)l, (cm_gemm_op_t)oa,
                                 (cm_gemm_op_t)ob, 300, 264, 77, 0.75f, 0.25f, 0, 0, ffma[i], 0};
                    run_case(&g, idx++);
                    g.prec = CM_GEMM_BF16; /* the sm_75 fallback kernel, wherever we are */
                    run_case(&g, idx++);
                    /* BF16 in and out, tails, C's rows off 16 bytes and C read (beta != 0):
                     * the BF16 stores of the epilogue for unaligned C */
                    g.prec = CM_GEMM_BF16_OUT_BF16;
                    g.pad = 3;
                    g.off = 1;
                    g.beta = -0.5f;
                    run_case(&g, idx++);
                    /* whole tiles, packed 16-byte rows: the fast interior kernels ("...f") */
                    gcase_t w = {CM_GEMM_FP32, (cm_gemm_layout_t)l, (cm_gemm_op_t)oa,
                                 (cm_gemm_op_t)ob, 256, 512, 96, -1.25f, 0.5f, 0, 0, ffma[i], 0};
                    run_case(&w, idx++);
                    /* misaligned bases (element offset 1) and odd leading dimensions: scalar
                     * loads and stores everywhere (the offset pins the reference's indexing) */
                    misalign(&w);
                    run_case(&w, idx++);
                    /* 16-byte aligned bases but leading dimensions not a multiple of 4 */
                    w.pad = 1;
                    w.off = 4;
                    run_case(&w, idx++);
                    /* tails in every dimension with K >= CM__FFMA_EDGE_MIN_K: the pipelined
                     * configurations' edge kernel, misaligned and aligned */
                    gcase_t e = {CM_GEMM_FP32, (cm_gemm_layout_t)l, (cm_gemm_op_t)oa,
                                 (cm_gemm_op_t)ob, 300, 131, CM__FFMA_EDGE_MIN_K + 7, 0.5f,
                                 -1.0f, 3, 1, ffma[i], 0};
                    run_case(&e, idx++);
                    e.pad = 0;
                    e.off = 0;
                    e.beta = 0.0f;
                    run_case(&e, idx++);
                }
                for (size_t i = 0; i < sizeof tc / sizeof tc[0]; ++i)
                    for (int p = 1; p < 4; ++p) {
                        gcase_t g = {(cm_gemm_precision_t)p, (cm_gemm_layout_t)l, (cm_gemm_op_t)oa,
                                     (cm_gemm_op_t)ob, 300, 264, 77, 0.75f, 0.25f, 0, 0, tc[i], 0};
                        run_case(&g, idx++);
                        g.beta = 0.0f;
                        g.k = 136;
                        run_case(&g, idx++);
                        /* misaligned bases and leading dimensions: "sm90" then packs (copies or
                         * transposes) every operand into aligned scratch first */
                        misalign(&g);
                        run_case(&g, idx++);
                        /* aligned bases, odd leading dimensions, beta != 0: C's rows start on
                         * odd elements every other row and C is read ("sm90": the epilogue
                         * staged through shared memory, its single-element and pair paths) */
                        g.pad = 1;
                        g.off = 0;
                        g.beta = -0.5f;
                        g.k = 77;
                        run_case(&g, idx++);
                    }
            }
}

/* Each shape in every precision (under compute-sanitizer only FP32 and BF16 -> BF16 when
 * sanitizer_subset: the float and the bf16-in / bf16-out instantiations), layout and transpose,
 * first aligned, then with padded leading dimensions, misaligned and beta 0 over NaN. The
 * dispatch must name `expect` for each (NULL: not checked); `force` (NULL: none) is forced;
 * shapes with K >= sample_k (0: none) are checked on 2048 sampled entries. Returns idx. */
static size_t run_every_layout(const size_t (*shapes)[3], size_t n_shapes, const char *expect,
                               const char *force, bool sanitizer_subset, size_t sample_k,
                               size_t idx) {
    for (int p = 0; p <= CM_GEMM_FP32_3XTF32; ++p) {
        if (sanitizer_subset && cm_test_under_sanitizer() && p != CM_GEMM_FP32 &&
            p != CM_GEMM_BF16_OUT_BF16)
            continue;
        for (int l = 0; l < 2; ++l)
            for (int oa = 0; oa < 2; ++oa)
                for (int ob = 0; ob < 2; ++ob)
                    for (size_t s = 0; s < n_shapes; ++s)
                        for (int v = 0; v < 2; ++v) {
                            gcase_t g = {(cm_gemm_precision_t)p, (cm_gemm_layout_t)l,
                                         (cm_gemm_op_t)oa, (cm_gemm_op_t)ob, shapes[s][0],
                                         shapes[s][1], shapes[s][2], 1.25f, -0.5f, 0, 0, NULL, 0};
                            if (v) misalign(&g); /* padded, misaligned, beta 0 over NaN */
                            if (sample_k > 0 && shapes[s][2] >= sample_k) g.samples = 2048;
                            if (expect != NULL) assert_string_equal(chosen(&g), expect);
                            g.config = force;
                            run_case(&g, idx++);
                        }
    }
    return idx;
}

/* matrix-vector shapes (m == 1 or n == 1): the "gemv" kernel (forced), every precision,
 * layout and transpose (so both of its orientations, each operand contiguous or strided),
 * aligned and misaligned, with few rows (several warps per row), some, and many (a warp per
 * row) */
static void test_matrix_vector(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    static const size_t shapes[][3] = {{1, 300, 77},   {300, 1, 77},    {1, 1, 1000},
                                       {40, 1, 70000}, {1, 500, 9000},  {5000, 1, 333},
                                       {1, 8191, 64},  {1027, 1, 1031}, {1, 4096, 4096}};
    /* forced: the dispatch gives a short K over many rows read along K ({1, 8191, 64} in some
     * layouts) to the skinny kernel instead */
    size_t idx = run_every_layout(shapes, sizeof shapes / sizeof shapes[0], NULL, "gemv", false,
                                  0, 0);
    /* the dispatch's own choice on this GPU: gemv for a long K, skinny for a short K along K
     * (row-major N,T: B's rows K-contiguous), gemv again across K (N,N) */
    for (int p = 0; p <= CM_GEMM_FP32_3XTF32; ++p) {
        gcase_t d = {(cm_gemm_precision_t)p, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_T, 1,
                     8192, 127, 1.0f, 0.0f, 0, 0, NULL, 0};
        if (CM__GEMM_SKINNY_DISPATCH) assert_string_equal(chosen(&d), "skinny");
        run_case(&d, idx++);
        d.ob = CM_GEMM_OP_N;
        assert_string_equal(chosen(&d), "gemv");
        d.ob = CM_GEMM_OP_T;
        d.k = 4096;
        assert_string_equal(chosen(&d), "gemv");
    }
    /* "gemv" forced on a shape that is not a matrix-vector product runs the table's kernel */
    gcase_t g = {CM_GEMM_FP32, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 70, 90, 33, 1.0f,
                 0.0f, 0, 0, "gemv", 0};
    run_case(&g, idx++);
}

/* skinny shapes (the small side of C 2 .. 16, the other long): the "skinny" kernel (forced: the
 * dispatch gives it only some layouts of these shapes; which, the host tests check),
 * every precision, layout and transpose (so both of its orientations, the long operand
 * K-contiguous or not, the small one either way), aligned and misaligned (scalar loads), K with
 * a tail after the 256-element chunks, R = 2, 7, 16; then forced on shapes the dispatch leaves
 * to the tiles (a vector side, few rows) */
static void test_skinny(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    static const size_t shapes[][3] = {{7, 700, 300},  {700, 7, 300},  {2, 300, 1029},
                                       {300, 16, 513}, {16, 520, 33},  {3, 2049, 2000}};
    size_t idx = run_every_layout(shapes, sizeof shapes / sizeof shapes[0], NULL, "skinny",
                                  true, 2000, 0);
    /* the dispatch's own choice on this GPU (not forced): the long matrix along K (row-major
     * N,T: B's rows K-contiguous) takes it; across K (N,N) the tiles */
    for (int p = 0; p <= CM_GEMM_FP32_3XTF32; ++p) {
        if (p == CM_GEMM_BF16 || p == CM_GEMM_BF16_OUT_BF16) continue; /* TN bf16: the tiles */
        gcase_t g = {(cm_gemm_precision_t)p, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_T, 7,
                     4096, 1000, 1.0f, 0.0f, 0, 0, NULL, 0};
        if (CM__GEMM_SKINNY_DISPATCH) assert_string_equal(chosen(&g), "skinny");
        run_case(&g, idx++);
        g.ob = CM_GEMM_OP_N;
        assert_string_not_equal(chosen(&g), "skinny");
    }
    /* a small side of 9 .. 16 over few rows (CM__GEMM_SKINNY_FEW_ROWS_PER_SM a
     * multiprocessor: at most that many) and K under CM__GEMM_SKINNY_MIN_K, from
     * CM__GEMM_SKINNY_MIN_K_NARROW on: skinny in FP32, and in TF32 / bf16 with rows off 16
     * bytes (K = 201), column-major "NN" with the small side on M and "TN" with it on N; beta
     * over C. What ran is read back (cm_gemm_config_name would name rows of 204). */
    {
        const size_t rows = (size_t)CM__GEMM_SKINNY_FEW_ROWS_PER_SM *
                            (size_t)current_attr(cudaDevAttrMultiProcessorCount);
        for (int p = CM_GEMM_FP32; p <= CM_GEMM_BF16; ++p)
            for (int o = 0; o < 2; ++o) {
                gcase_t g = {(cm_gemm_precision_t)p, CM_GEMM_COL_MAJOR,
                             o ? CM_GEMM_OP_T : CM_GEMM_OP_N, CM_GEMM_OP_N, o ? rows : 12,
                             o ? 12 : rows, 201, 1.0f, 0.5f, 0, 0, NULL, 0};
                run_case(&g, idx++);
                cm__gemm_ran_t ran;
                cm__gemm_last_ran_for_tests(&ran);
                if (CM__GEMM_SKINNY_DISPATCH &&
                    strcmp(cm__gemm_choice_name(ran.choice), "skinny") != 0)
                    fail_msg("precision %d %zux%zux201 %s: ran %s, skinny expected", p, g.m,
                             g.n, o ? "TN" : "NN", cm__gemm_choice_name(ran.choice));
            }
    }
    /* skinny shapes the dispatch gives other kernels on Hopper (cm__gemm_select): bf16
     * column-major NN with M of 2 .. 16 and K >= 1024, B contiguous along K in 16-byte rows:
     * the wgmma kernel, A read as it is where its rows are 16 bytes (M = 8: "sm90+bt") and
     * staged where not (M = 7: "sm90+pack"); TF32 "TN" from K = 1024 with a small side above
     * CM__GEMM_SKINNY_TC_TF32: mma:64x64 for M = 12 and for N = 12 (cm_gemm's N is then 2048:
     * the wgmma kernel takes such a long C from K = 1024 only over at least 32 rows), and
     * skinny for 7; TF32 "TN" 7000 x 16 x 300 (K under 1024):
     * mma:64x64 where its 110 tiles over C cover 3/4 of the multiprocessors, else skinny;
     * FP32 64 x 2048 x 2048 (split-K fills the 64 x 64 tiles' slots, K of 2048 split): their
     * pipelined form, ffma:64x64x16q3. Against float64. */
    if (hopper_kernel_chosen()) {
        gcase_t h = {CM_GEMM_BF16, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 8, 2048, 1024,
                     1.0f, 0.0f, 0, 0, NULL, 0};
        assert_string_equal(chosen(&h), "sm90+bt");
        run_case(&h, idx++);
        h.m = 7; /* lda = 7: 14-byte rows */
        run_case(&h, idx++);
        gcase_t t = {CM_GEMM_TF32, CM_GEMM_COL_MAJOR, CM_GEMM_OP_T, CM_GEMM_OP_N, 12, 2048, 1024,
                     1.0f, 0.0f, 0, 0, NULL, 0};
        assert_string_equal(chosen(&t), "mma:64x64");
        run_case(&t, idx++);
        t.m = 7;
        if (CM__GEMM_SKINNY_DISPATCH) assert_string_equal(chosen(&t), "skinny");
        run_case(&t, idx++);
        t.m = 2048;
        t.n = 12;
        assert_string_equal(chosen(&t), "mma:64x64");
        run_case(&t, idx++);
        /* TF32 with a small side of 16 and A contiguous along M (column-major "NN", 64-byte
         * columns): mma:64x64 (CM__GEMM_SKINNY_TC_TF32_ANY); with 15, skinny */
        gcase_t w = {CM_GEMM_TF32, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 16, 2048, 1024,
                     1.0f, 0.5f, 0, 0, NULL, 0};
        assert_string_equal(chosen(&w), "mma:64x64");
        run_case(&w, idx++);
        w.m = 15;
        if (CM__GEMM_SKINNY_DISPATCH) assert_string_equal(chosen(&w), "skinny");
        run_case(&w, idx++);
        gcase_t s = {CM_GEMM_TF32, CM_GEMM_COL_MAJOR, CM_GEMM_OP_T, CM_GEMM_OP_N, 7000, 16, 300,
                     1.0f, 0.5f, 0, 0, NULL, 0};
        if (4 * ((7000 + 63) / 64) >=
            CM__GEMM_SKINNY_TC_TF32_FILL * current_attr(cudaDevAttrMultiProcessorCount))
            assert_string_equal(chosen(&s), "mma:64x64");
        else if (CM__GEMM_SKINNY_DISPATCH)
            assert_string_equal(chosen(&s), "skinny");
        run_case(&s, idx++);
        gcase_t f = {CM_GEMM_FP32, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 64, 2048, 2048,
                     0.5f, 0.0f, 0, 0, NULL, 4096};
        assert_string_equal(chosen(&f), "ffma:64x64x16q3") /* K split: its pipelined form */;
        run_case(&f, idx++);
        /* bf16 with both operands K-contiguous in rows off 16 bytes (K = 1001): a small side
         * of CM__GEMM_SKINNY_SM90_BF16 .. 16 runs the wgmma kernel after its pre-pass, one of
         * 8 the skinny kernel (its 8-vector form with element loads); both in bf16 out too.
         * What ran is read back (cm__gemm_last_ran_for_tests): cm_gemm_config_name assumes
         * packed leading dimensions rounded up to 16 bytes, so it names the choice for rows
         * of 1008, not 1001 */
        for (int p = CM_GEMM_BF16; p <= CM_GEMM_BF16_OUT_BF16; ++p) {
            gcase_t o = {(cm_gemm_precision_t)p, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_T,
                         12, 2200, 1001, 1.0f, 0.5f, 0, 0, NULL, 0};
            cm__gemm_ran_t ran;
            run_case(&o, idx++);
            cm__gemm_last_ran_for_tests(&ran);
            assert_string_equal(cm__gemm_choice_name(ran.choice), "sm90+pack");
            o.m = 8;
            run_case(&o, idx++);
            cm__gemm_last_ran_for_tests(&ran);
            if (CM__GEMM_SKINNY_DISPATCH)
                assert_string_equal(cm__gemm_choice_name(ran.choice), "skinny");
        }
    }
    /* X's vectors contiguous in 16-byte aligned columns (column-major "NN", the small side on
     * M, lda a multiple of 4 floats): the 16-vector bucket's 16-byte staging of X
     * (kernels/gemm_skinny.cu, stage_x_vec), in FP32 and TF32, forced: small sides off a
     * multiple of 4 (13, 11: the group that crosses R), 4 rows a warp (8191 rows), K off the
     * 256-element chunk and beta over C; the 4- and 8-vector buckets (5, 4, 8) keep the
     * per-k staging over the same padded X; then the dispatch's own plan for 16 x 4096 x 4096
     * (lda = 16: the skinny kernel with K in parts on Hopper, sampled) */
    {
        static const size_t xv[][3] = {{16, 700, 301}, {13, 8191, 301}, {5, 3000, 513},
                                       {4, 2000, 260}, {8, 999, 1000},  {16, 8191, 600},
                                       {11, 300, 2049}};
        for (int p = CM_GEMM_FP32; p <= CM_GEMM_TF32; ++p)
            for (size_t s = 0; s < sizeof xv / sizeof xv[0]; ++s) {
                const size_t pad = (4 - xv[s][0] % 4) % 4 + 4; /* lda: M up to 4s, plus 4 */
                gcase_t g = {(cm_gemm_precision_t)p, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N,
                             CM_GEMM_OP_N, xv[s][0], xv[s][1], xv[s][2], 0.5f, 2.0f, pad, 0,
                             "skinny", 0};
                run_case(&g, idx++);
            }
        gcase_t d = {CM_GEMM_FP32, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 16, 4096,
                     4096, 1.0f, 0.0f, 0, 0, NULL, 2048};
        run_case(&d, idx++);
    }
    /* forced on shapes the dispatch does not give it: a vector side, few rows, one element;
     * then FP32 rows in the 16-vector form with 4 rows a warp (kernels/gemm_skinny.cu,
     * rows_take_rpw4: 8191 or 7000 rows are at least a block of 32 rows a multiprocessor up
     * to 218 multiprocessors): 13 vectors (52 outputs a warp, two a lane), 16 on N, a
     * last block of 31 rows, K off the 256-element chunk and off 16-byte rows (K = 301) */
    static const size_t forced[][3] = {{1, 300, 77},   {300, 1, 600},    {5, 40, 300},
                                       {1, 1, 9},      {13, 8191, 301},  {7000, 16, 300},
                                       {9, 8192, 520}};
    for (int p = 0; p <= CM_GEMM_BF16_OUT_BF16; ++p)
        for (size_t s = 0; s < sizeof forced / sizeof forced[0]; ++s) {
            gcase_t g = {(cm_gemm_precision_t)p, CM_GEMM_COL_MAJOR, CM_GEMM_OP_T, CM_GEMM_OP_N,
                         forced[s][0], forced[s][1], forced[s][2], 0.5f, 2.0f, 1, 0, "skinny", 0};
            run_case(&g, idx++);
        }
}

/* The small and skinny classes with operands that are not "TN": on Hopper, from K =
 * CM__GEMM_PACK_MIN_K, the default dispatch runs the wgmma kernel after its pre-pass
 * ("sm90+pack", or "sm90+bt" for a bf16 B contiguous along N, "sm90+at" from K =
 * CM__GEMM_SM90_AT_MIN_K for a TF32 operand contiguous along M or N); a shorter K runs
 * mma.sync. Every
 * precision, layout and transpose, padded / misaligned operands, beta over NaN; sampled
 * entries against float64 (each case has 10^5-10^6 of them). */
static void test_small_skinny_packed(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    if (hopper_kernel_chosen()) { /* what the dispatch names there */
        /* (TF32 below CM__GEMM_SM90_AT_MIN_K packs; from it, "sm90+at") */
        assert_string_equal(nn_choice(CM_GEMM_TF32, 1000, 1000, 200), "sm90+pack");
        assert_string_equal(nn_choice(CM_GEMM_TF32, 1000, 1000, CM__GEMM_SM90_AT_MIN_K),
                            CM__GEMM_SM90_AT_DISPATCH ? "sm90+at" : "sm90+pack");
        assert_string_equal(nn_choice(CM_GEMM_BF16, 1000, 1000, 200),
                            CM__GEMM_SM90_BT_DISPATCH ? "sm90+bt" : "sm90+pack");
        assert_string_equal(nn_choice(CM_GEMM_TF32, 8192, 300, 100), "sm90+pack");
        assert_string_equal(nn_choice(CM_GEMM_BF16, 1000, 1000, CM__GEMM_PACK_MIN_K - 8),
                            "mma:128x128");
    }
    /* small class; skinny class (K <= 256); small class below the pre-pass's K */
    static const size_t shapes[][3] = {
        {1000, 1000, 200}, {8192, 300, 100}, {1000, 1000, CM__GEMM_PACK_MIN_K - 1}};
    /* under compute-sanitizer: the small-class shape only (its time) */
    const size_t n_shapes = cm_test_under_sanitizer() ? 1 : sizeof shapes / sizeof shapes[0];
    (void)run_every_layout(shapes, n_shapes, NULL, NULL, true, 1, 0);
}

static void test_large_sampled(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess || free_b < ((size_t)1 << 30)) {
        print_message("skipping the 4096^3 cases: less than 1 GiB free\n");
        return;
    }
    for (int p = 0; p <= CM_GEMM_FP32_3XTF32; ++p) {
        gcase_t g = {(cm_gemm_precision_t)p, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N,
                     p == 0 ? CM_GEMM_OP_N : CM_GEMM_OP_T, 4096, 4096, 4096, 1.0f, 0.0f, 0, 0,
                     NULL, 4096};
        run_case(&g, (size_t)p);
    }
    /* tensor cores on "NN" 4096^3 (not K-contiguous: the large class takes the transposing
     * pre-pass on Hopper, "sm90+pack", or for a bf16 B contiguous along N "sm90+bt"; mma.sync
     * elsewhere), row- and column-major */
    for (int p = 1; p < 3; ++p) {
        gcase_t g = {(cm_gemm_precision_t)p, p == 1 ? CM_GEMM_ROW_MAJOR : CM_GEMM_COL_MAJOR,
                     CM_GEMM_OP_N, CM_GEMM_OP_N, 4096, 4096, 4096, 1.0f, 0.0f, 0, 0, NULL, 4096};
        run_case(&g, (size_t)(10 + p));
    }
    /* 4093^3 (every tail), FP32, column-major T,N; not under compute-sanitizer (tails are
     * checked on small shapes there) */
    if (cm_test_under_sanitizer()) return;
    gcase_t g = {CM_GEMM_FP32, CM_GEMM_COL_MAJOR, CM_GEMM_OP_T, CM_GEMM_OP_N, 4093, 4093, 4093,
                 1.0f, 1.0f, 0, 0, NULL, 2048};
    run_case(&g, 0);
}

/* split-K: shapes whose C leaves most multiprocessors idle while K is long run as a batch over
 * K plus an ordered reduction (src/compute/gemm_api.c). Every precision (CM_GEMM_FP32_3XTF32
 * on the FP32 kernels, split as FP32), layout and op on the smallest, misaligned / padded
 * operands, beta over NaN and beta != 0, a chunk remainder (K not a multiple of the chunk) and
 * a bf16 C. */
static void test_split_k(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    size_t idx = 0;
    for (int p = 0; p <= CM_GEMM_FP32_3XTF32; ++p)
        for (int l = 0; l < 2; ++l)
            for (int oa = 0; oa < 2; ++oa)
                for (int ob = 0; ob < 2; ++ob)
                    for (int v = 0; v < 2; ++v) {
                        gcase_t g = {(cm_gemm_precision_t)p, (cm_gemm_layout_t)l,
                                     (cm_gemm_op_t)oa, (cm_gemm_op_t)ob, 64, 64, 4096, 1.25f,
                                     -0.5f, 0, 0, NULL, 0};
                        if (v) { /* padded, misaligned, K with a remainder, beta 0 over NaN */
                            g.k = 4001;
                            misalign(&g);
                        }
                        run_case(&g, idx++);
                    }
    /* shapes the default rules split (cm__gemm_splitk_parts): a few tiles over a long K, tiles
     * that fill less than half the resident slots with K >= 1024 (64 x 2500 x 1200, with a
     * remainder of K), the same for float inputs on 32 x 64 FFMA tiles from K >= 768 (4096 x 64 x
     * 1000 and 64 x 3001 x 900, remainders of K), skinny with K >= 2048 (2100 x 5 x 2500 "TN"),
     * gemv across K over 1000 rows (1000 x 1 x 4096, column-major "NN"); TF32 / BF16 with
     * both operands K-contiguous on Hopper, the tiny class with a long K (row-major 64 x 4096
     * x 4100: the Hopper kernel in 4 parts of 128 x 128 tiles; column-major 64 x 4096 x 2100,
     * 4096 x 64 to the library: in 2 parts; remainders of K); the long-and-thin rule of the
     * tiny class on Hopper with B MN-major (column-major "NN": bf16 through the transposed-B
     * form in 2 / 4 parts, TF32 through the register-A form on C^T in 4 / 2 parts, 4096 x 32
     * x 1100 bf16 in 4, TF32 on mma:64x64) and whole (column-major "TN" 64 x 4096 x 1040);
     * a short K on float 32 x 64 FFMA tiles (3001 x 12 x 500 FP32 in 6 parts, 700 x 300 x 400
     * in 4) and on TF32's align1 form over a C 12 wide (3001 x 12 x 500 in 2, 4095 x 12 x 767
     * in 4; remainders of K), and over a longer K into the fewest parts whose blocks outnumber
     * the slots with a 3/4-full last layer (6001 x 16 x 2001 in 4, 3001 x 16 x 1500 in 8);
     * gemv across K over few rows (127 x 1 x 3001 "NN": 19 parts; 1 x 200 x 2000 "NT", bf16
     * in pairs: 13); TF32 "TN" 64 x 3001 x 2001 (rows off 16 bytes) on the 128 x 128 tiles'
     * align1 form in 5 parts where the copied form's Hopper kernel would run K whole */
    static const struct {
        size_t m, n, k;
        cm_gemm_layout_t l;
        cm_gemm_op_t oa, ob;
    } sh[] = {{7, 3001, 3001, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N},
              {127, 1000, 3001, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N},
              {300, 200, 2500, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_T},
              {64, 2500, 1200, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_T},
              {2100, 5, 2500, CM_GEMM_COL_MAJOR, CM_GEMM_OP_T, CM_GEMM_OP_N},
              {1000, 1, 4096, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N},
              {4096, 64, 1000, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N},
              {64, 3001, 900, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_T, CM_GEMM_OP_N},
              {64, 4096, 4100, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_T},
              {64, 4096, 2100, CM_GEMM_COL_MAJOR, CM_GEMM_OP_T, CM_GEMM_OP_N},
              {64, 4096, 2100, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N},
              {4096, 64, 2100, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N},
              {4096, 32, 1100, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N},
              {64, 4096, 1040, CM_GEMM_COL_MAJOR, CM_GEMM_OP_T, CM_GEMM_OP_N},
              {3001, 12, 500, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N},
              {4095, 12, 767, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N},
              {6001, 16, 2001, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N},
              {3001, 16, 1500, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N},
              {700, 300, 400, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N},
              {127, 1, 3001, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N},
              {1, 200, 2000, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_T},
              {64, 3001, 2001, CM_GEMM_COL_MAJOR, CM_GEMM_OP_T, CM_GEMM_OP_N}};
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; ++i)
        for (int p = 0; p < CM_GEMM_FP32_3XTF32; ++p) {
            if (cm_test_under_sanitizer() && i > 0 && p > 0) break;
            gcase_t g = {(cm_gemm_precision_t)p, sh[i].l, sh[i].oa, sh[i].ob, sh[i].m, sh[i].n,
                         sh[i].k, 1.0f, 0.75f, 0, 0, NULL, 2048};
            run_case(&g, idx++);
        }
}

/* Split-K forced (CUDAMODEL_GEMM_SPLITK through the tests' hook) on every kernel: the tiles,
 * gemv and skinny (which the heuristic splits in a few shape ranges only) and the Hopper
 * kernel (its first rule only), into 2, 3 and 7 parts, K with a remainder, alpha / beta
 * general and beta = 0 over NaN, BF16 out. Each case is checked in full against float64. */
static void test_split_k_forced(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    static const struct {
        cm_gemm_layout_t l;
        cm_gemm_op_t oa, ob;
        size_t m, n, k;
        const char *config;
    } sh[] = {
        {CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 64, 64, 1000, NULL},
        {CM_GEMM_COL_MAJOR, CM_GEMM_OP_T, CM_GEMM_OP_N, 96, 80, 1031, NULL},
        {CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_T, 1, 3000, 1000, "gemv"},
        {CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 3000, 1, 1000, "gemv"},
        {CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_T, 7, 3001, 777, "skinny"},
        {CM_GEMM_COL_MAJOR, CM_GEMM_OP_T, CM_GEMM_OP_N, 2100, 5, 1000, "skinny"},
        {CM_GEMM_COL_MAJOR, CM_GEMM_OP_T, CM_GEMM_OP_N, 200, 300, 2048, "sm90"},
        {CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 130, 260, 1500, "sm90"},
    };
    static const int parts[] = {2, 3, 7};
    size_t idx = 0;
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; ++i)
        for (int p = 0; p < CM_GEMM_FP32_3XTF32; ++p)
            for (size_t q = 0; q < sizeof parts / sizeof parts[0]; ++q) {
                if (cm_test_under_sanitizer() && q > 0) break;
                gcase_t g = {(cm_gemm_precision_t)p, sh[i].l, sh[i].oa, sh[i].ob, sh[i].m,
                             sh[i].n, sh[i].k, 1.25f, -0.5f, 0, 0, sh[i].config, 0};
                if (q == 1) misalign(&g); /* padded, misaligned, beta = 0 over NaN */
                cm__gemm_splitk_override_set_for_tests(parts[q]);
                run_case(&g, idx++);
                cm__gemm_splitk_override_set_for_tests(-1);
            }
}

/* FP32 on the pipelined FFMA tile (forced "ffma:128x128x16q3") with tails in M, N and K, in
 * each of the four orientations of the two operands:
 *  - its whole-tile kernel where every last tile past M / N moves back to end there (the
 *    operand along that side along K, or along M / N with that side a multiple of 4): the rows
 *    / columns before the previous tile's end are computed again but not stored (beta != 0
 *    shows a second store); a K tail in it, after its main loop (one operand along K, the
 *    other along M / N) or before its pipeline (both along K or both along M / N), or, those
 *    with M and N whole tiles from K = CM__FFMA_KTAIL_APART_MIN_K, first on the fallback's
 *    kernel, the whole K tiles then adding to what it stored (beta 0 over NaN shows a read of
 *    the old C);
 *  - its bounded form (from K = CM__FFMA_BOUNDED_MIN_K) where a last tile cannot move back
 *    and the operands contiguous along M or N have 16-byte rows (leading dimensions padded to
 *    a multiple of 4, a last group of 4 partly past M or N): blocks inside M and N (the
 *    whole-tile copies on every K tile but the last) and blocks past them (checked copies);
 *  - a tail in K only, K under CM__FFMA_EDGE_MIN_K; the edge kernel where the operands along
 *    M / N have not 16-byte rows (padded by 3 from odd sizes; from K = CM__FFMA_EDGE_MIN_K);
 * each with beta -0.5, with beta 0 over NaN, and split over K into 3 parts (run as a batch whose
 * last part is shorter, the k_last: the bounded form). Against float64 (sampled under
 * compute-sanitizer). */
static void test_ffma_tails(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    static const struct {
        cm_gemm_layout_t l;
        cm_gemm_op_t oa, ob;
        size_t m, n, k, pad;
    } sh[] = {
        {CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 1001, 1030, 1100, 2}, /* B along N */
        {CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 1001, 1030, 1100, 3}, /* A along M */
        {CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_T, 1001, 1029, 1027, 3}, /* both */
        {CM_GEMM_COL_MAJOR, CM_GEMM_OP_T, CM_GEMM_OP_N, 1001, 1030, 1100, 0}, /* along K */
        {CM_GEMM_ROW_MAJOR, CM_GEMM_OP_T, CM_GEMM_OP_T, 130, 300, 1031, 2},   /* A along M */
        {CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 1001, 1031, 1100, 3}, /* edge */
        {CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 1000, 1030, 1100, 0}, /* M % 4 == 0 */
        {CM_GEMM_COL_MAJOR, CM_GEMM_OP_T, CM_GEMM_OP_N, 1000, 1030, 300, 0},  /* along K */
        {CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 384, 256, 1101, 0},   /* K tail only */
        {CM_GEMM_COL_MAJOR, CM_GEMM_OP_T, CM_GEMM_OP_T, 256, 512, 1029, 0},   /* K tail only */
        {CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 517, 390, 300, 2},    /* short K */
        {CM_GEMM_COL_MAJOR, CM_GEMM_OP_T, CM_GEMM_OP_N, 390, 517, 257, 1},    /* along K */
        /* long K with a tail */
        {CM_GEMM_COL_MAJOR, CM_GEMM_OP_T, CM_GEMM_OP_N, 1001, 1030, 2100, 1}, /* along K */
        {CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 1000, 1030, 2061, 0}, /* M % 4 == 0 */
        {CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 384, 256, 2053, 0},   /* K tail only */
        {CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_T, 256, 384, 2049, 3},   /* K tail only */
        /* both along K / both along M / N, the tail before the pipeline */
        {CM_GEMM_COL_MAJOR, CM_GEMM_OP_T, CM_GEMM_OP_N, 256, 384, 1029, 1},   /* K tail only */
        {CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_T, 1000, 1028, 1100, 0}, /* M, N % 4 == 0 */
    };
    size_t idx = 0;
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; ++i)
        for (int v = 0; v < 3; ++v) {
            /* v 1: split-K; v 2: beta 0 over a C of NaN (the whole-tile kernel's K tail runs
             * first with beta 0, then the whole K tiles add to what it stored) */
            const int split = v == 1;
            gcase_t g = {CM_GEMM_FP32, sh[i].l, sh[i].oa, sh[i].ob, sh[i].m, sh[i].n, sh[i].k,
                         1.25f, v == 2 ? 0.0f : -0.5f, sh[i].pad, 0, "ffma:128x128x16q3", 0};
            if (cm_test_under_sanitizer()) g.samples = 2048;
            if (split) { /* 3 parts of about K / 3, each K >= CM__FFMA_BOUNDED_MIN_K */
                g.k = 3 * g.k + 17;
                cm__gemm_splitk_override_set_for_tests(3);
            }
            run_case(&g, idx++);
            cm__gemm_splitk_override_set_for_tests(-1);
        }
}

/* The last wave's split (cm__gemm_wave_split): FP32 products on the default 128 x 128 FFMA tile
 * whose last wave of tiles is at most CM__WAVE_SPLIT_MAX_FILL full run their leading rows
 * (columns) of whole waves, then the rest split over K into float scratch and added in order:
 * both layouts, the four orientations, beta != 0, and misaligned (beta 0 over NaN; the pitched
 * copy first where the rule takes it); each against float64 (sampled). On 132 multiprocessors
 * (H200) every shape of the table splits (cm__gemm_last_ran_for_tests' wave_parts); with
 * split-K forced off (CUDAMODEL_GEMM_SPLITK=1's hook) nothing does, and the result is the same;
 * a last wave over the limit (2400^2) runs whole. */
static void test_wave_split(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    int sms = 0;
    assert_int_equal(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0),
                     cudaSuccess);
    /* 576 tiles (2 waves of 264 and 48), 312 (1 and 48), 272 (1 and 8: parts capped by K),
     * the same with K under 1024 (2 parts of 320) */
    static const size_t shapes[][3] = {
        {3001, 3001, 3001}, {3001, 1601, 2053}, {2176, 2048, 1024}, {2176, 2048, 640}};
    size_t idx = 0;
    cm__gemm_wave_split_set_for_tests(1); /* (a test before may have turned it off) */
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; ++sh)
        for (int l = 0; l < 2; ++l)
            for (int o = 0; o < 4; ++o)
                for (int v = 0; v < 2; ++v) {
                    if (cm_test_under_sanitizer() && (sh < 2 || l || o > 1)) continue;
                    gcase_t g = {CM_GEMM_FP32, (cm_gemm_layout_t)l, (cm_gemm_op_t)(o & 1),
                                 (cm_gemm_op_t)(o >> 1), shapes[sh][0], shapes[sh][1],
                                 shapes[sh][2], 1.25f, -0.5f, 0, 0, NULL, 4096};
                    if (v) misalign(&g);
                    run_case(&g, idx++);
                    cm__gemm_ran_t ran;
                    cm__gemm_last_ran_for_tests(&ran);
                    print_message("fp32 %zux%zux%zu layout %d ops %d%s: %s, last wave in %d "
                                  "parts\n", g.m, g.n, g.k, l, o, v ? " misaligned" : "",
                                  cm__gemm_choice_name(ran.choice), ran.wave_parts);
                    const int q3 = strcmp(chosen(&g), "ffma:128x128x16q3") == 0;
                    if (q3 && sms == 132 && ran.wave_parts < 2)
                        fail_msg("fp32 %zux%zux%zu layout %d ops %d: the last wave not split",
                                 g.m, g.n, g.k, l, o);
                }
    cm__gemm_splitk_override_set_for_tests(1); /* never split: the last wave runs as it is */
    gcase_t g = {CM_GEMM_FP32, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 2176, 2048, 1024,
                 1.25f, -0.5f, 0, 0, NULL, 4096};
    run_case(&g, idx++);
    cm__gemm_splitk_override_set_for_tests(-1);
    cm__gemm_ran_t ran;
    cm__gemm_last_ran_for_tests(&ran);
    assert_int_equal(ran.wave_parts, 0);
    /* a last wave over CM__WAVE_SPLIT_MAX_FILL: 2400^2 (361 tiles, 97 of 264 left) whole */
    gcase_t h = {CM_GEMM_FP32, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 2400, 2400, 1100,
                 1.25f, -0.5f, 0, 0, NULL, 4096};
    run_case(&h, idx++);
    cm__gemm_last_ran_for_tests(&ran);
    if (sms == 132 && strcmp(chosen(&h), "ffma:128x128x16q3") == 0)
        assert_int_equal(ran.wave_parts, 0);
    /* 3xTF32 on the Hopper kernel with its last wave's split on (the tests' switch; off by
     * default, CM__GEMM_WAVE_SPLIT_3XTF32): 4096 x 4096 x 1000 is 704 tiles of 128 x 192, 5
     * waves of 132 and 44 left, so 3840 rows run whole and 256 in 3 parts of K (352, 352 and
     * 296: the last zero-padded), each part split into TF32 blocks of its own and run as one
     * batch; both layouts, "TN" and "NN", beta != 0, against float64 (sampled) */
    if (hopper_kernel_chosen() && !cm_test_under_sanitizer()) {
        cm__gemm_wave_3xtf32_set_for_tests(1);
        for (int l = 0; l < 2; ++l)
            for (int o = 0; o < 2; ++o) {
                gcase_t x = {CM_GEMM_FP32_3XTF32, (cm_gemm_layout_t)l,
                             o ? CM_GEMM_OP_T : CM_GEMM_OP_N, CM_GEMM_OP_N, 4096, 4096, 1000,
                             1.25f, -0.5f, 0, 0, NULL, 4096};
                run_case(&x, idx++);
                cm__gemm_last_ran_for_tests(&ran);
                print_message("3xtf32 4096x4096x1000 layout %d op_a %d: %s, last wave in %d "
                              "parts\n", l, o, cm__gemm_choice_name(ran.choice),
                              ran.wave_parts);
                if (sms == 132 && strcmp(cm__gemm_choice_name(ran.choice), "sm90+3xtf32") == 0)
                    assert_int_equal(ran.wave_parts, 3);
            }
        cm__gemm_wave_3xtf32_set_for_tests(-1);
    }
    cm__gemm_wave_split_set_for_tests(-1);
}

/* FP32's small class (fewer 128 x 128 tiles of C than multiprocessors, not fewer 64 x 64 ones)
 * on Hopper: the pipelined 128 x 128 tiles where their split along K gives 3/4 of the
 * multiprocessors a block, from K = 512 (768 x 768 x 4096: 7 parts; 512 x 4096 x 512: 128
 * tiles whole; 700 x 900 x 3000: tails in M, N and K; 1024^3: 4 parts of 256), the table's 64 x
 * 64 tiles where not (1000^3: 64 tiles whole). With them, the neighbouring rules: a short K on
 * C of many 128 x 128 tiles that leave a thin last wave runs 64 x 64 tiles (3001 x 1000 x 64),
 * and the tiny class's 32 x 64 tiles split K from 512 (512^3: 4 parts of 128). Every layout and
 * transpose, plain and misaligned (leading dimensions padded by 3, bases one float off, beta 0
 * over NaN), against float64; on an H200 (132 multiprocessors, compute capability 9.0) the
 * dispatch's tile (cm_gemm_config_name) is checked too, and for the plain cases the tile and
 * parts that ran (cm__gemm_last_ran_for_tests). */
static void test_ffma_small_class(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    const bool h200 = hopper_132_sms();
    static const struct {
        size_t m, n, k;
        const char *tile; /* on the H200 */
        int parts;
    } shapes[] = {{768, 768, 4096, "ffma:128x128x16q3", 7},
                  {512, 4096, 512, "ffma:128x128x16q3", 1},
                  {700, 900, 3000, "ffma:128x128x16q3", 5},
                  {1000, 1000, 1000, "ffma:64x64x16", 1},
                  {1024, 1024, 1024, "ffma:128x128x16q3", 4},
                  {3001, 1000, 64, "ffma:64x64x16", 1},
                  {512, 512, 512, "ffma:32x64x16", 4}};
    size_t idx = 0;
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; ++sh)
        for (int l = 0; l < 2; ++l)
            for (int o = 0; o < 4; ++o)
                for (int v = 0; v < 2; ++v) {
                    if (cm_test_under_sanitizer() && (sh > 2 || l || o > 1)) continue;
                    gcase_t g = {CM_GEMM_FP32, (cm_gemm_layout_t)l, (cm_gemm_op_t)(o & 1),
                                 (cm_gemm_op_t)(o >> 1), shapes[sh].m, shapes[sh].n,
                                 shapes[sh].k, 0.75f, 1.5f, 0, 0, NULL, 4096};
                    if (v) misalign(&g);
                    run_case(&g, idx++);
                    cm__gemm_ran_t ran;
                    cm__gemm_last_ran_for_tests(&ran);
                    const char *tile = cm__gemm_choice_name(ran.choice);
                    print_message("fp32 %zux%zux%zu layout %d ops %d%s: %s in %d parts\n", g.m,
                                  g.n, g.k, l, o, v ? " misaligned" : "", tile, ran.parts);
                    if (!h200) continue;
                    assert_string_equal(chosen(&g), shapes[sh].tile);
                    /* misaligned, the tile's launcher may run another of its forms (its
                     * fallback's kernels under K = 1024): the dispatch's choice only */
                    if (v) continue;
                    if (strcmp(tile, shapes[sh].tile) != 0 || ran.parts != shapes[sh].parts)
                        fail_msg("fp32 %zux%zux%zu layout %d ops %d: ran %s in %d parts, "
                                 "expected %s in %d", g.m, g.n, g.k, l, o, tile, ran.parts,
                                 shapes[sh].tile, shapes[sh].parts);
                }
}

/* The narrow-C rules on Hopper (src/compute/gemm_api.c), column-major as cuBLAS users call
 * them, each against a float64 reference on sampled entries: FP32 with K under 32 over a C
 * whose short side is at most 32 on the 32 x 64 FFMA tiles, 33-64 on the 64 x 64 ones
 * (CM__GEMM_FFMA_NARROW_SHORT_K_32 / _SIDE); TF32 "NN" on mma:64x64 over a C one tile deep with
 * 133-176 tiles, K in 3 parts (CM__SPLITK_TF32_ROW_PARTS), also where the Hopper kernel's
 * register-A form was the choice (K of 2048), which keeps 110 tiles; BF16 over 57-64 by at
 * least 5000 on the Hopper kernel whole (rule 4's short side); CM_GEMM_FP32_3XTF32 over a C
 * whose short side is 65-128 on FP32's choice (CM__GEMM_3X_NARROW_SIDE). The choice and the parts are checked on a GPU of 132 SMs of compute
 * capability 9 (H100 / H200), the results everywhere. */
static void test_narrow_c_rules(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    const bool hopper132 = hopper_132_sms();
    static const struct {
        cm_gemm_precision_t prec;
        int ob; /* op(B): 0 N, 1 T */
        size_t m, n, k;
        const char *choice;
        int parts;
    } cases[] = {
        {CM_GEMM_FP32, 0, 40000, 32, 16, "ffma:32x64x16", 1},
        {CM_GEMM_FP32, 1, 40000, 32, 16, "ffma:32x64x16", 1},
        {CM_GEMM_FP32, 0, 20000, 64, 24, "ffma:64x64x16", 1},
        {CM_GEMM_FP32, 0, 32, 40000, 16, "ffma:32x64x16", 1},
        {CM_GEMM_FP32, 0, 30000, 48, 1, "ffma:64x64x16", 1},
        {CM_GEMM_FP32, 1, 25000, 48, 20, "ffma:64x64x16", 1},
        {CM_GEMM_TF32, 0, 8500, 40, 1000, "mma:64x64", 3},
        {CM_GEMM_TF32, 0, 11000, 40, 1000, "mma:64x64", 3},
        {CM_GEMM_TF32, 1, 8500, 40, 1000, "mma:64x64", 3},
        {CM_GEMM_TF32, 0, 14000, 40, 1000, "mma:64x64", 1},
        {CM_GEMM_TF32, 0, 9000, 40, 2048, "mma:64x64", 3},
        {CM_GEMM_TF32, 0, 7000, 62, 800, "sm90+at", 1},
        {CM_GEMM_FP32_3XTF32, 0, 96, 30000, 1024, "ffma:128x128x16q3", 1},
        {CM_GEMM_FP32_3XTF32, 1, 128, 30000, 1024, "ffma:128x128x16q3", 1},
        {CM_GEMM_BF16, 0, 8192, 64, 896, "sm90+bt", 1},
        {CM_GEMM_BF16, 0, 6000, 60, 896, "sm90+bt", 1},
        {CM_GEMM_BF16_OUT_BF16, 0, 8192, 64, 896, "sm90+bt", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        if (cm_test_under_sanitizer() && i % 3 != 0) continue;
        gcase_t g = {cases[i].prec, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N,
                     cases[i].ob ? CM_GEMM_OP_T : CM_GEMM_OP_N, cases[i].m, cases[i].n,
                     cases[i].k, 0.75f, -0.5f, 0, 0, NULL, 4096};
        run_case(&g, i);
        cm__gemm_ran_t ran;
        cm__gemm_last_ran_for_tests(&ran);
        const char *name = cm__gemm_choice_name(ran.choice);
        print_message("prec %d %zux%zux%zu op(B) %c: %s in %d part(s)\n", (int)g.prec, g.m, g.n,
                      g.k, cases[i].ob ? 'T' : 'N', name, ran.parts);
        if (!hopper132) continue;
        if (strcmp(name, cases[i].choice) != 0 || ran.parts != cases[i].parts)
            fail_msg("prec %d %zux%zux%zu: ran %s in %d part(s), expected %s in %d",
                     (int)g.prec, g.m, g.n, g.k, name, ran.parts, cases[i].choice,
                     cases[i].parts);
    }
}

/* FP32 operands contiguous along M or N without 16-byte rows (odd leading dimensions, a base
 * one float off) copied as they are into scratch rows of whole 16 bytes first, where the
 * default FFMA tile then runs its pipelined kernel (cm__gemm_pitch_wanted): every layout and
 * transpose, beta != 0 and beta 0 over NaN; whether the copy ran must be what
 * cm__gemm_pitch_wanted's rule says for the shape (cm__gemm_last_ran_for_tests), and the
 * result match float64 either way; then the same with the copy switched off. */
static void test_fp32_pitched(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    /* the large class (at least 132 tiles of 128 x 128), K from CM__FFMA_BOUNDED_MIN_K */
    /* the last: the moved-tile kernel, its last tiles moved back over the copy's padding */
    static const size_t shapes[][3] = {
        {1539, 1537, 1001}, {1537, 1539, 300}, {2050, 1100, 1027}, {1537, 1539, 2053}};
    size_t idx = 0;
    for (int off = 0; off < 2; ++off)
        for (int l = 0; l < 2; ++l)
            for (int o = 0; o < 4; ++o)
                for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; ++sh) {
                    if (cm_test_under_sanitizer() && (l || o != 0 || (sh > 0 && sh != 3)))
                        continue;
                    /* pad 2: leading dimensions with and without 16-byte rows (1539 + 2,
                     * 300 + 2 not, 2050 + 2 yes); misalign: pad 3, bases one float off, beta 0
                     * over NaN */
                    gcase_t g = {CM_GEMM_FP32, (cm_gemm_layout_t)l, (cm_gemm_op_t)(o & 1),
                                 (cm_gemm_op_t)(o >> 1), shapes[sh][0], shapes[sh][1],
                                 shapes[sh][2], 1.25f, 0.5f, 2, 0, NULL, 4096};
                    if (off) misalign(&g);
                    run_case(&g, idx++);
                    const int q3 = strcmp(chosen(&g), "ffma:128x128x16q3") == 0;
                    cm__gemm_ran_t ran;
                    cm__gemm_last_ran_for_tests(&ran);
                    /* an operand along M / N without 16-byte rows (its leading dimension as
                     * run_case lays it out, or its base) is copied where the default tile is
                     * the pipelined one (sm_90); every side here is long enough for it */
                    const int row = l == CM_GEMM_ROW_MAJOR;
                    const int a_along_mn = row ? (o & 1) != 0 : (o & 1) == 0;
                    const int b_along_mn = row ? (o >> 1) == 0 : (o >> 1) != 0;
                    const size_t lda = (a_along_mn ? g.m : g.k) + g.pad;
                    const size_t ldb = (b_along_mn ? g.n : g.k) + g.pad;
                    const int a_off = a_along_mn && (lda % 4 != 0 || g.off % 4 != 0);
                    const int b_off = b_along_mn && (ldb % 4 != 0 || g.off % 4 != 0);
                    const int expect = (a_off || b_off) && q3;
                    if (ran.realigned != expect)
                        fail_msg("fp32 %zux%zux%zu layout %d ops %d off %d: %s, expected %s "
                                 "(ran %s)", g.m, g.n, g.k, l, o, off,
                                 ran.realigned ? "copied" : "not copied",
                                 expect ? "the copy" : "none", cm__gemm_choice_name(ran.choice));
                    if (ran.realigned &&
                        strcmp(cm__gemm_choice_name(ran.choice), "ffma:128x128x16q3") != 0)
                        fail_msg("%zux%zux%zu layout %d ops %d: copied, then ran %s", g.m, g.n,
                                 g.k, l, o, cm__gemm_choice_name(ran.choice));
                    print_message("fp32 %zux%zux%zu layout %d ops %d off %d: %s%s\n", g.m, g.n,
                                  g.k, l, o, off, cm__gemm_choice_name(ran.choice),
                                  ran.realigned ? " after the pitched copy" : "");
                }
    /* switched off: nothing is copied, the result is the same */
    cm__gemm_realign_set_for_tests(0);
    gcase_t g = {CM_GEMM_FP32, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 1539, 1537, 1001,
                 1.0f, 0.0f, 3, 1, NULL, 4096};
    run_case(&g, idx++);
    cm__gemm_ran_t ran;
    cm__gemm_last_ran_for_tests(&ran);
    cm__gemm_realign_set_for_tests(-1);
    assert_false(ran.realigned);
}

/* CM_GEMM_FP32_3XTF32 against CM_GEMM_FP32 (FFMA, the cublasSgemm contract) on the same data:
 * the split-TF32 result must be as accurate. Shapes the default selection sends to the Hopper
 * path (large, every layout, a long odd K, the shortest K it takes: CM__GEMM_3X_MIN_K, where
 * FP32's own error is smallest and the split's floor shows most); on other devices both run
 * FFMA. Then shorter K forced onto the Hopper path: printed, not asserted (the dispatch leaves
 * them to FFMA because the split's floor is above FP32's error there). */
static void test_3xtf32_accuracy(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    static const struct { size_t m, n, k; int layout, oa, ob; } sh[] = {
        {2048, 2048, 2048, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N},
        {2048, 1536, 2304, CM_GEMM_COL_MAJOR, CM_GEMM_OP_T, CM_GEMM_OP_N},
        {1500, 2100, 3001, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_T},
        {3000, 1000, 777, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_T, CM_GEMM_OP_T},
        {4096, 2048, CM__GEMM_3X_MIN_K, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N},
        /* forced (below): */
        {1000, 1200, 300, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N},
        {1024, 1024, 64, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N},
    };
    const size_t first_forced = 5;
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; ++i) {
        if (cm_test_under_sanitizer() && i > 0) break; /* one shape is enough for memcheck */
        /* inputs of their own (not what earlier tests left in rng_state): a failure repeats */
        rng_state = 0x3c6ef372fe94f82bull + 0x9e3779b97f4a7c15ull * (uint64_t)i;
        const uint64_t seed = rng_state;
        const bool forced = i >= first_forced;
        gcase_t g = {CM_GEMM_FP32_3XTF32, (cm_gemm_layout_t)sh[i].layout,
                     (cm_gemm_op_t)sh[i].oa, (cm_gemm_op_t)sh[i].ob, sh[i].m, sh[i].n, sh[i].k,
                     1.0f, 0.0f, 0, 0, forced ? "sm90+3xtf32" : NULL, 2048};
        const char *name = chosen(&g);
        const double e3 = run_case(&g, i);
        rng_state = seed; /* the same inputs for FP32 */
        g.prec = CM_GEMM_FP32;
        g.config = NULL;
        const double e1 = run_case(&g, i);
        print_message("3xTF32 %zux%zux%zu (%s): rel. error %.3g, FP32 (FFMA) %.3g\n", g.m, g.n,
                      g.k, name, e3, e1);
        if (!forced && !(e3 <= 1.25 * e1 + 1e-9))
            fail_msg("3xTF32 %zux%zux%zu (%s) less accurate than FP32: %.3g vs %.3g", g.m, g.n,
                     g.k, name, e3, e1);
    }
}

/* 3xTF32 on Hopper in several passes over K (the split's scratch capped at 1 MiB: passes of
 * 1 MiB / ((M + N) 8 bytes) of K, rounded down to 32, beta 1 after the first; the 1 GiB cap
 * takes that path only for (M + N) K above 2^27), forced "sm90+3xtf32": a K that ends in a
 * partial pass, beta != 0, padded and misaligned operands, both layouts; the error against
 * float64 as the one-pass products' (run_case's 3xTF32 bound). */
static void test_3xtf32_passes(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    if (no_hopper_kernel()) return;
    cm__gemm_3x_scratch_set_for_tests((size_t)1 << 20);
    /* 300 + 200 rows: passes of 256 of K (4 for K = 1000, the last 232) */
    static const size_t shapes[][3] = {{300, 200, 1000}, {129, 257, 700}};
    size_t idx = 0;
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; ++sh)
        for (int l = 0; l < 2; ++l)
            for (int v = 0; v < 2; ++v) {
                if (cm_test_under_sanitizer() && sh > 0) continue;
                gcase_t g = {CM_GEMM_FP32_3XTF32, (cm_gemm_layout_t)l, CM_GEMM_OP_N,
                             l ? CM_GEMM_OP_T : CM_GEMM_OP_N, shapes[sh][0], shapes[sh][1],
                             shapes[sh][2], 1.25f, 0.5f, 0, 0, "sm90+3xtf32", 0};
                if (v) misalign(&g);
                assert_string_equal(chosen(&g), "sm90+3xtf32");
                run_case(&g, idx++);
            }
    cm__gemm_3x_scratch_set_for_tests(0);
}

/* Realignment (gemm_api.c): TF32 / BF16 products whose operands lack 16-byte rows (K or the
 * leading dimension odd) and are large enough are copied into aligned scratch and run on tensor
 * cores instead of the FFMA kernel (turned on here whatever CM__GEMM_REALIGN_DEFAULT says; one
 * case runs with it off too). Every layout and transpose, bf16 C, beta != 0, padded and
 * misaligned bases. On sm_80+ a TF32 result must match the product of the TF32-rounded inputs
 * (run_case's error, against them, under 1e-5): the tensor cores ran. The FFMA kernel would
 * multiply the unrounded inputs and be ~1e-4 off them. */
static void test_realigned(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    const int major = current_major();
    static const size_t shapes[][3] = {{127, 1000, 3001}, {301, 700, 1001}, {1000, 129, 2047}};
    size_t idx = 0;
    cm__gemm_realign_set_for_tests(0);
    gcase_t off = {CM_GEMM_BF16, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 127, 1000, 3001,
                   1.0f, 0.0f, 0, 0, NULL, 2048};
    run_case(&off, idx++);
    cm__gemm_realign_set_for_tests(1);
    for (int p = CM_GEMM_TF32; p <= CM_GEMM_BF16_OUT_BF16; ++p)
        for (int l = 0; l < 2; ++l)
            for (int oa = 0; oa < 2; ++oa)
                for (int ob = 0; ob < 2; ++ob)
                    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; ++sh) {
                        /* memcheck: TF32 and bf16, row-major N,N, one shape (its time) */
                        if (cm_test_under_sanitizer() &&
                            (p == CM_GEMM_BF16_OUT_BF16 || l || oa || ob || sh > 0))
                            continue;
                        gcase_t g = {(cm_gemm_precision_t)p, (cm_gemm_layout_t)l,
                                     (cm_gemm_op_t)oa, (cm_gemm_op_t)ob, shapes[sh][0],
                                     shapes[sh][1], shapes[sh][2], 0.75f, 0.5f, 0, 0, NULL,
                                     2048};
                        if ((sh + (size_t)oa) % 2) { /* padded, misaligned bases */
                            g.pad = 1;
                            g.off = 1;
                        }
                        const double err = run_case(&g, idx++);
                        if (p == CM_GEMM_TF32 && major >= 8 && !(err < 1e-5)) {
                            cm__gemm_realign_set_for_tests(-1);
                            fail_msg("TF32 %zux%zux%zu layout %d ops %d%d: %.3g off the product "
                                     "of the TF32-rounded inputs: the FFMA kernel ran, not the "
                                     "tensor cores", g.m, g.n, g.k, l, oa, ob, err);
                        }
                    }
    /* BF16 shapes of 4-132 Mflop with K = 127, every layout and transpose: realigned from
     * CM__GEMM_REALIGN_MIN_FLOPS_BF16 on, else the FFMA kernel runs them */
    static const size_t bf_shapes[][3] = {
        {4096, 127, 127}, {3001, 64, 127}, {127, 4096, 127}, {127, 127, 127}, {100, 90, 129}};
    for (int p = CM_GEMM_BF16; p <= CM_GEMM_BF16_OUT_BF16; ++p)
        for (int l = 0; l < 2; ++l)
            for (int o = 0; o < 4; ++o)
                for (size_t sh = 0; sh < sizeof bf_shapes / sizeof bf_shapes[0]; ++sh) {
                    if (cm_test_under_sanitizer() && (l || o || sh > 0)) continue;
                    gcase_t g = {(cm_gemm_precision_t)p, (cm_gemm_layout_t)l,
                                 (cm_gemm_op_t)(o & 1), (cm_gemm_op_t)(o >> 1),
                                 bf_shapes[sh][0], bf_shapes[sh][1], bf_shapes[sh][2], 1.5f,
                                 -0.25f, 0, 0, NULL, 4096};
                    if ((sh + (size_t)o) % 2) misalign(&g); /* padded, misaligned bases */
                    run_case(&g, idx++);
                }
    cm__gemm_realign_set_for_tests(-1);
}

/* The TF32 align1 form of the mma.sync tiles (kernels/gemm.h, CM__GEMM_MMA_ALIGN1; skipped
 * where the build has not compiled it): operands without 16-byte rows (odd leading dimensions,
 * bases one float off), every layout and transpose, sizes off every tile and K step, K long
 * enough to be split; forced mma:128x128 and mma:64x64, and the default where the
 * realignment's copy would have run mma.sync tiles or (on Hopper) the Hopper kernel split over
 * K (127 x 1000 x 3001: the tiles split instead). The tensor cores must have run (the
 * error against the TF32-rounded inputs under 1e-5, as in test_realigned), the tile must be
 * what ran, and nothing copied first. */
static void test_tf32_align1(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    const int major = current_major();
    if (!cm__gemm_mma_align1_for(major) || major < 8) {
        print_message("the TF32 align1 form is %s: nothing to test\n",
                      major < 8                      ? "for sm_80 and later"
                      : !cm__gemm_mma_align1_built() ? "not built (CM__GEMM_MMA_ALIGN1 0)"
                                                     : "compiled for sm_90 only outside "
                                                       "tuning builds");
        skip();
    }
    static const size_t shapes[][3] = {{127, 1000, 3001}, {301, 700, 1001}, {65, 33, 17},
                                       {200, 129, 4099}, {1000, 127, 1000}};
    static const char *const configs[] = {"mma:64x64", "mma:128x128", NULL};
    size_t idx = 0;
    int defaults = 0;
    for (size_t f = 0; f < 3; ++f)
        for (int l = 0; l < 2; ++l)
            for (int o = 0; o < 4; ++o)
                for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; ++sh) {
                    if (cm_test_under_sanitizer() && (l || o % 3 != 0 || sh % 2 != 0)) continue;
                    gcase_t g = {CM_GEMM_TF32, (cm_gemm_layout_t)l, (cm_gemm_op_t)(o & 1),
                                 (cm_gemm_op_t)(o >> 1), shapes[sh][0], shapes[sh][1],
                                 shapes[sh][2], 0.75f, 0.5f, 1, 0, configs[f], 4096};
                    if ((sh + (size_t)o) % 2) misalign(&g); /* pad 3, one float off */
                    const double err = run_case(&g, idx++);
                    cm__gemm_ran_t ran;
                    cm__gemm_last_ran_for_tests(&ran);
                    const char *name = cm__gemm_choice_name(ran.choice);
                    /* by default the FFMA kernel may run a small product, the Hopper kernel
                     * one copied first; mma.sync tiles never after a copy */
                    const int mma = ran.choice.kernel == CM__GEMM_KERNEL_MMA;
                    const int tc = mma || ran.choice.kernel == CM__GEMM_KERNEL_SM90;
                    if ((tc && !(err < 1e-5)) || (mma && ran.realigned) ||
                        (configs[f] != NULL && (strcmp(name, configs[f]) != 0 || ran.realigned)))
                        fail_msg("TF32 %zux%zux%zu layout %d ops %d %s: ran %s%s, %.3g off the "
                                 "product of the TF32-rounded inputs",
                                 g.m, g.n, g.k, l, o, configs[f] ? configs[f] : "(default)",
                                 name, ran.realigned ? " after a copy" : "", err);
                    defaults += configs[f] == NULL && ran.choice.kernel == CM__GEMM_KERNEL_MMA;
                    /* 127 x 1000 x 3001 by default on Hopper: its copied form would run the
                     * Hopper kernel split over K (C: 8 of its tiles) or mma:64x64; the align1
                     * form of the 128 x 128 / 64 x 64 tiles runs instead, split over K too */
                    if (configs[f] == NULL && sh == 0 && major == 9 && hopper_kernel_chosen() &&
                        (!mma || ran.realigned || ran.parts < 2))
                        fail_msg("TF32 127x1000x3001 layout %d ops %d by default: ran %s in %d "
                                 "parts%s; the mma.sync tiles' align1 form split over K expected",
                                 l, o, name, ran.parts, ran.realigned ? " after a copy" : "");
                }
    /* under the realignment's flop floor with K >= 1024, where the copy would lead to the
     * Hopper kernel (127 x 127 x 3001, 64 x 127 x 3001, every layout and transpose): the 64 x
     * 64 tiles' align1 form by default, nothing copied, the tensor cores' error */
    static const size_t lo[][3] = {{127, 127, 3001}, {64, 127, 3001}};
    for (int l = 0; l < 2; ++l)
        for (int o = 0; o < 4; ++o)
            for (size_t sh = 0; sh < sizeof lo / sizeof lo[0]; ++sh) {
                if (cm_test_under_sanitizer() && (l || o != 1 || sh > 0)) continue;
                gcase_t g = {CM_GEMM_TF32, (cm_gemm_layout_t)l, (cm_gemm_op_t)(o & 1),
                             (cm_gemm_op_t)(o >> 1), lo[sh][0], lo[sh][1], lo[sh][2], 0.75f,
                             0.5f, 1, 0, NULL, 4096};
                if ((sh + (size_t)o) % 2) misalign(&g);
                const double err = run_case(&g, idx++);
                cm__gemm_ran_t ran;
                cm__gemm_last_ran_for_tests(&ran);
                if (major == 9 && hopper_kernel_chosen() &&
                    (ran.choice.kernel != CM__GEMM_KERNEL_MMA || ran.realigned || !(err < 1e-5)))
                    fail_msg("TF32 %zux%zux%zu layout %d ops %d by default: ran %s%s, %.3g off "
                             "the product of the TF32-rounded inputs; the mma.sync tiles' align1 "
                             "form expected",
                             g.m, g.n, g.k, l, o, cm__gemm_choice_name(ran.choice),
                             ran.realigned ? " after a copy" : "", err);
            }
    /* one thin product (a side of 8 .. 16) under the floor with K of
     * CM__GEMM_REALIGN_A1_THIN_MIN_K .. 1023, column-major "NN" (A or B in rows off 16 bytes;
     * the long side across K, so not skinny): the 64 x 64 tiles' align1 form by default
     * on sm_80+, nothing copied, the tensor cores' error; 4095 x 12 x 767 split along K on
     * 132 multiprocessors; a small side of 16 over a long K with B's rows off 16 bytes (16 x
     * 3001 x 2001: skinny's shape, the tiles' below CM__GEMM_SKINNY_TF32_16_A1_ROWS_PER_SM
     * rows a multiprocessor) likewise */
    static const size_t thin[][3] = {{4096, 12, 255}, {3001, 8, 200}, {3001, 16, 767},
                                     {4095, 12, 767}, {16, 3001, 2001}};
    for (size_t sh = 0; sh < sizeof thin / sizeof thin[0]; ++sh) {
        if (cm_test_under_sanitizer() && sh > 0) continue;
        gcase_t g = {CM_GEMM_TF32, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, thin[sh][0],
                     thin[sh][1], thin[sh][2], 0.75f, 0.5f, 0, 0, NULL, 0};
        const double err = run_case(&g, idx++);
        cm__gemm_ran_t ran;
        cm__gemm_last_ran_for_tests(&ran);
        if (major >= 8 && cm__gemm_mma_built(CM__MMA_64x64) &&
            (strcmp(cm__gemm_choice_name(ran.choice), "mma:64x64") != 0 || ran.realigned ||
             !(err < 1e-5)))
            fail_msg("TF32 %zux%zux%zu NN by default: ran %s%s, %.3g off the product of the "
                     "TF32-rounded inputs; mma:64x64's align1 form expected",
                     g.m, g.n, g.k, cm__gemm_choice_name(ran.choice),
                     ran.realigned ? " after a copy" : "", err);
    }
    print_message("%zu TF32 products without 16-byte rows on the align1 form (%d by default)\n",
                  idx, defaults);
}

/* bf16 "NN" through the Hopper kernel's transposed-B form ("sm90+bt", forced here; the
 * default dispatch's too with CM__GEMM_SM90_BT_DISPATCH): B is read MN-major as it is, with
 * wgmma's imm-trans-b and a descriptor of its own (kernels/gemm_sm90.cu). Both layouts of "NN"
 * (A K-contiguous, B not), and op(A) transposed (A then packed, B still as it is); bf16 and
 * bf16 C; sizes that are not multiples of the 128 x 256 tile or of the 64-element K step, K tails, beta != 0; padded and
 * misaligned operands (the pack path then). On a GPU without the Hopper kernel the forced name
 * runs the usual path, which is checked just the same. */
static void test_sm90_mn_b(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    const bool hopper = hopper_kernel_chosen();
    static const size_t shapes[][3] = {{256, 256, 64}, {296, 520, 200}, {136, 264, 1000},
                                       {1000, 1024, 777}};
    size_t idx = 0;
    for (int p = CM_GEMM_BF16; p <= CM_GEMM_BF16_OUT_BF16; ++p)
        for (int l = 0; l < 2; ++l)
            for (int oa = 0; oa < 2; ++oa)
                for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; ++sh)
                    for (int v = 0; v < 2; ++v) {
                        /* memcheck: bf16, op(A) N, the smallest shape (its time) */
                        if (cm_test_under_sanitizer() && (p != CM_GEMM_BF16 || oa || sh > 0))
                            continue;
                        gcase_t g = {(cm_gemm_precision_t)p, (cm_gemm_layout_t)l,
                                     (cm_gemm_op_t)oa, CM_GEMM_OP_N, shapes[sh][0],
                                     shapes[sh][1], shapes[sh][2], 1.25f, -0.5f, 0, 0,
                                     "sm90+bt", 0};
                        if (v) misalign(&g);
                        if (hopper && !v) {
                            /* the transposed-B kernel where the normalised B (row-major: B,
                             * column-major: A) is N-contiguous; column-major T,N is "TN" */
                            const bool mn_b = l == CM_GEMM_ROW_MAJOR || oa == CM_GEMM_OP_N;
                            assert_string_equal(chosen(&g), mn_b ? "sm90+bt" : "sm90");
                        }
                        run_case(&g, idx++);
                    }
    if (cm_test_under_sanitizer()) return;
    /* one large product, sampled, every element written */
    gcase_t big = {CM_GEMM_BF16, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 2048, 2304,
                   1536, 1.0f, 0.5f, 0, 0, "sm90+bt", 2048};
    run_case(&big, idx++);
}

/* TF32 with an MN-major operand through the Hopper kernel's register-A form ("sm90+at", forced
 * here; the default dispatch's too with CM__GEMM_SM90_AT_DISPATCH): an MN-major A is staged as
 * it is and loaded into registers for wgmma; an MN-major B (when A is K-contiguous) is the A of
 * the transposed product, written to a column-major C (kernels/gemm_sm90.cu, AT). Both layouts,
 * every (op_a, op_b); sizes that are not multiples of the 128 x 256 tile or of the 32-element
 * K step, a K of one partial step, beta != 0; padded and misaligned operands (the pack path
 * then). On a GPU without the Hopper kernel the forced name runs the usual path, which is
 * checked just the same. */
static void test_sm90_mn_tf32(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    const bool hopper = hopper_kernel_chosen();
    static const size_t shapes[][3] = {{256, 256, 64}, {296, 520, 200}, {136, 264, 1000},
                                       {130, 140, 8},  {1000, 1024, 777}};
    size_t idx = 0;
    for (int l = 0; l < 2; ++l)
        for (int oa = 0; oa < 2; ++oa)
            for (int ob = 0; ob < 2; ++ob)
                for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; ++sh)
                    for (int v = 0; v < 2; ++v) {
                        /* memcheck: the two smallest shapes */
                        if (cm_test_under_sanitizer() && sh != 0 && sh != 3) continue;
                        gcase_t g = {CM_GEMM_TF32, (cm_gemm_layout_t)l, (cm_gemm_op_t)oa,
                                     (cm_gemm_op_t)ob, shapes[sh][0], shapes[sh][1],
                                     shapes[sh][2], 1.25f, -0.5f, 0, 0, "sm90+at", 0};
                        if (v) misalign(&g);
                        if (hopper && !v) {
                            /* "TN" after normalisation (row-major N,T / column-major T,N) goes
                             * straight to the kernel; every other pair has an MN-major operand
                             * with 16-byte rows */
                            const bool tn = l == CM_GEMM_ROW_MAJOR ? (!oa && ob) : (oa && !ob);
                            assert_string_equal(chosen(&g), tn ? "sm90" : "sm90+at");
                        }
                        run_case(&g, idx++);
                    }
    if (cm_test_under_sanitizer()) return;
    /* one large product of each form, sampled, every element written: column-major NN (B
     * through the transposed product) and TT (A as it is) */
    gcase_t big = {CM_GEMM_TF32, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, 2048, 2304,
                   1536, 1.0f, 0.5f, 0, 0, "sm90+at", 2048};
    run_case(&big, idx++);
    big.oa = CM_GEMM_OP_T;
    big.ob = CM_GEMM_OP_T;
    run_case(&big, idx++);
}

/* BF16 output on the Hopper kernel with rows of C on 16 bytes (ldc a multiple of 8) and beta 0:
 * the epilogue's 16-byte stores (kernels/gemm_sm90.cu, c_vec 2), a partial last run of 8
 * columns (n = 1003: a pair and a single element), rows past M (299, 995); beta != 0 and ldc
 * off 16 bytes keep the pair stores. Row- and column-major, forced "sm90" (operands staged as
 * needed). */
static void test_sm90_bf16_store16(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    if (no_hopper_kernel()) return;
    /* m, n, k, pad: m + pad and n + pad multiples of 8 (so ldc is, either layout) but the last */
    static const size_t shapes[][4] = {{299, 1003, 256, 5}, {256, 1000, 200, 0},
                                       {128, 136, 64, 8},   {995, 1003, 1000, 5},
                                       {300, 1003, 256, 3}};
    size_t idx = 0;
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; ++sh)
        for (int l = 0; l < 2; ++l)
            for (int b = 0; b < 2; ++b) {
                if (cm_test_under_sanitizer() && sh == 3) continue;
                gcase_t g = {CM_GEMM_BF16_OUT_BF16, (cm_gemm_layout_t)l,
                             l == CM_GEMM_ROW_MAJOR ? CM_GEMM_OP_N : CM_GEMM_OP_T,
                             l == CM_GEMM_ROW_MAJOR ? CM_GEMM_OP_T : CM_GEMM_OP_N, shapes[sh][0],
                             shapes[sh][1], shapes[sh][2], 1.5f, b ? 0.5f : 0.0f,
                             shapes[sh][3], 0, "sm90", sh == 3 ? 4096 : 0};
                assert_string_equal(chosen(&g), "sm90");
                run_case(&g, idx++);
            }
}

/* TF32 / BF16 "TN" on Hopper whose K-contiguous rows are an odd number of 16 bytes, with C
 * large enough (m n / (m + n) >= CM__GEMM_STAGE32_MIN_HM): staged into rows of whole 128-byte
 * lines first ("sm90+pack"); rows of a multiple of 32 bytes go straight to the kernel ("sm90").
 * Row-major N,T and column-major T,N; beta != 0; each also with leading dimensions padded by
 * 8 elements (TF32: 32 bytes, whether staged kept; BF16: 16 bytes, flipped). Then bf16 "NN"
 * whose MN-major operand's rows are an odd number of 16 bytes: transposed, not read as they
 * are by the transposed-B form, unless that is forced. */
static void test_sm90_stage32(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    if (no_hopper_kernel()) return;
    /* k: TF32 300 (1200-byte rows: 75 x 16), 320 (1280: 40 x 32); BF16 312 (624: 39 x 16),
     * 320 (640) */
    static const struct {
        cm_gemm_precision_t p;
        size_t k;
    } cases[] = {{CM_GEMM_TF32, 300},
                 {CM_GEMM_TF32, 320},
                 {CM_GEMM_BF16, 312},
                 {CM_GEMM_BF16_OUT_BF16, 312},
                 {CM_GEMM_BF16, 320}};
    size_t idx = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        for (int l = 0; l < 2; ++l)
            for (size_t pad = 0; pad <= 8; pad += 8) {
                if (cm_test_under_sanitizer() && (l || pad)) continue;
                const size_t e = cases[i].p == CM_GEMM_TF32 ? 4 : 2;
                const int staged = (cases[i].k + pad) * e / 16 % 2 == 1;
                gcase_t g = {cases[i].p, (cm_gemm_layout_t)l,
                             l == CM_GEMM_ROW_MAJOR ? CM_GEMM_OP_N : CM_GEMM_OP_T,
                             l == CM_GEMM_ROW_MAJOR ? CM_GEMM_OP_T : CM_GEMM_OP_N, 3072, 3200,
                             cases[i].k, 1.0f, 0.5f, pad, 0, NULL, 2048};
                /* cm_gemm_config_name names packed operands' choice (pad 0) */
                if (pad == 0) assert_string_equal(chosen(&g), staged ? "sm90+pack" : "sm90");
                run_case(&g, idx++);
            }
    /* bf16 column-major "NN": A's M-contiguous rows of 2000 bytes (an odd number of 16) are
     * transposed into 128-byte lines ("sm90+pack"); 1008 (2016 bytes) are read as they are by
     * the transposed-B form; forced "sm90+bt", 2000 too */
    static const struct {
        size_t m;
        const char *config, *want;
    } nn[] = {{1000, NULL, "sm90+pack"}, {1008, NULL, "sm90+bt"}, {1000, "sm90+bt", "sm90+bt"}};
    for (size_t i = 0; i < sizeof nn / sizeof nn[0]; ++i)
        for (int o = 0; o < 2; ++o) {
            if (cm_test_under_sanitizer() && (i || o)) continue;
            const cm_gemm_precision_t prec = o ? CM_GEMM_BF16_OUT_BF16 : CM_GEMM_BF16;
            gcase_t g = {prec, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, nn[i].m, 4096, 320,
                         1.0f, 0.5f, 0, 0, nn[i].config, 2048};
            if (CM__GEMM_SM90_BT_DISPATCH || nn[i].config)
                assert_string_equal(chosen(&g), nn[i].want);
            run_case(&g, idx++);
        }
}

/* the same call twice: the same bits (no atomics, fixed order) */
/* el random inputs of precision p into x, their multiplied values into xr and a new device
 * buffer *d (h: host staging of el elements) */
static void random_operand(cm_gemm_precision_t p, size_t el, float *x, float *xr, void *h,
                           cm_buffer_t **d) {
    const int bf = p == CM_GEMM_BF16 || p == CM_GEMM_BF16_OUT_BF16;
    for (size_t i = 0; i < el; ++i) {
        x[i] = rnd_f();
        xr[i] = multiplied(p, x[i]);
    }
    if (bf) cm_bf16_from_float_array(h, x, el); else memcpy(h, x, el * 4);
    CM_ASSERT_OK(cm_buffer_create(c.dev, el * (bf ? 2 : 4), d));
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, *d, 0, h, el * (bf ? 2 : 4)));
}

/* Staged products back to back on one stream (the Hopper pre-pass's transposition, the
 * realignment's copy), each call's A overwritten on the stream just before it from one of two
 * sources: the staging scratch comes from the same pool every call, so a product that read its
 * staged operand before that call's staging had finished (the kernel after a staging is a
 * programmatic dependent launch of it: kernels/pdl.cuh) would multiply the other source's A.
 * Every product is checked at sampled elements against float64 from the A it was given. */
static void test_staged_back_to_back(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    static const struct {
        cm_gemm_precision_t prec;
        size_t m, n, k;
        const char *kernel; /* the chosen configuration's prefix where Hopper's kernel is */
    } cases[] = {{CM_GEMM_TF32, 3001, 1000, 64, "sm90"},
                 {CM_GEMM_BF16, 3001, 1000, 64, "sm90"},
                 {CM_GEMM_BF16, 127, 4096, 127, "mma"}};
    enum { MAX_REPS = 6 };
    const bool hopper = hopper_kernel_chosen();
    const int reps = cm_test_under_sanitizer() ? 2 : MAX_REPS;
    const size_t samples = cm_test_under_sanitizer() ? 256 : 2048;
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; ++t) {
        if (cm_test_under_sanitizer() && t > 0) break;
        /* column-major N, N: A m x k (lda = m, contiguous along M: staged), B k x n, C m x n */
        const gcase_t g = {cases[t].prec, CM_GEMM_COL_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N,
                           cases[t].m, cases[t].n, cases[t].k, 1.0f, 0.0f, 0, 0, NULL, 0};
        if (hopper)
            assert_int_equal(strncmp(chosen(&g), cases[t].kernel, strlen(cases[t].kernel)), 0);
        const size_t in_sz = g.prec == CM_GEMM_BF16 ? 2 : 4, a_el = g.m * g.k, b_el = g.k * g.n,
                     c_el = g.m * g.n;
        float *A[2], *Ar[2], *B = malloc(b_el * 4), *Br = malloc(b_el * 4),
                             *C = malloc(c_el * 4);
        void *h = malloc((a_el > b_el ? a_el : b_el) * in_sz);
        assert_true(B && Br && C && h);
        cm_buffer_t *src[2] = {NULL, NULL}, *dA = NULL, *dB = NULL, *dC[MAX_REPS] = {NULL};
        for (int v = 0; v < 2; ++v) {
            A[v] = malloc(a_el * 4);
            Ar[v] = malloc(a_el * 4);
            assert_true(A[v] && Ar[v]);
            random_operand(g.prec, a_el, A[v], Ar[v], h, &src[v]);
        }
        random_operand(g.prec, b_el, B, Br, h, &dB);
        CM_ASSERT_OK(cm_buffer_create(c.dev, a_el * in_sz, &dA));
        for (int r = 0; r < reps; ++r) {
            CM_ASSERT_OK(cm_buffer_create(c.dev, c_el * 4, &dC[r]));
            CM_ASSERT_OK(cm_buffer_copy(c.stream, dA, 0, src[r % 2], 0, a_el * in_sz));
            CM_ASSERT_OK(cm_gemm(c.stream, g.prec, g.layout, g.oa, g.ob, g.m, g.n, g.k, g.alpha,
                                 dA, 0, g.m, dB, 0, g.k, g.beta, dC[r], 0, g.m));
        }
        CM_ASSERT_OK(cm_stream_synchronize(c.stream));
        for (int r = 0; r < reps; ++r) {
            CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, dC[r], 0, C, c_el * 4));
            for (size_t q = 0; q < samples; ++q) {
                const size_t e = (size_t)(cm_test_rand_unit(&rng_state) * 0.5 * (double)c_el +
                                          0.5 * (double)c_el) % c_el;
                const size_t i = e % g.m, j = e / g.m;
                const double ref = ref_at(&g, Ar[r % 2], g.m, Br, g.k, i, j, 0);
                const double scale = ref_at(&g, Ar[r % 2], g.m, Br, g.k, i, j, 1);
                if (!(fabs((double)C[e] - ref) <= 1e-4 * scale + 1e-6))
                    fail_msg("%s %zux%zux%zu call %d of %d, C(%zu, %zu) = %.9g, float64 %.9g "
                             "(scale %.3g): the product did not use this call's A",
                             chosen(&g), g.m, g.n, g.k, r + 1, reps, i, j, (double)C[e], ref,
                             scale);
            }
            CM_ASSERT_OK(cm_buffer_destroy(dC[r]));
        }
        for (int v = 0; v < 2; ++v) {
            CM_ASSERT_OK(cm_buffer_destroy(src[v]));
            free(A[v]);
            free(Ar[v]);
        }
        CM_ASSERT_OK(cm_buffer_destroy(dA));
        CM_ASSERT_OK(cm_buffer_destroy(dB));
        free(B);
        free(Br);
        free(C);
        free(h);
    }
}

static void test_reproducible(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    const size_t m = 333, n = 197, k = 1000;
    float *h = malloc((m * k + k * n) * 4), *r1 = malloc(m * n * 4), *r2 = malloc(m * n * 4);
    assert_true(h && r1 && r2);
    for (size_t i = 0; i < m * k + k * n; ++i) h[i] = rnd_f();
    cm_buffer_t *a = NULL, *cc = NULL;
    CM_ASSERT_OK(cm_buffer_create(c.dev, (m * k + k * n) * 4, &a));
    CM_ASSERT_OK(cm_buffer_create(c.dev, m * n * 4, &cc));
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, a, 0, h, (m * k + k * n) * 4));
    for (int p = 0; p < 2; ++p) {
        float *out[2] = {r1, r2};
        for (int rep = 0; rep < 2; ++rep) {
            CM_ASSERT_OK(cm_buffer_set(NULL, cc, 0, m * n * 4, 0xFF));
            /* B starts m * k floats into a's buffer (offsets count bytes) */
            CM_ASSERT_OK(cm_gemm(NULL, (cm_gemm_precision_t)p, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N,
                                 CM_GEMM_OP_N, m, n, k, 1.0f, a, 0, k, a, m * k * sizeof(float), n,
                                 0.0f, cc, 0, n));
            CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, cc, 0, out[rep], m * n * 4));
        }
        assert_memory_equal(r1, r2, m * n * 4);
    }
    CM_ASSERT_OK(cm_buffer_destroy(a));
    CM_ASSERT_OK(cm_buffer_destroy(cc));
    free(h); free(r1); free(r2);
}

/* Split-K captured into a graph (cm_graph_capture_begin on the test's stream) and replayed:
 * the parts' kernel, the reduction (on sm_90+ a programmatic dependent launch, which the
 * capture keeps as the graph's edge between the two) and the scratch's stream-ordered
 * allocation and free are captured. Each replay, C poisoned before, must give the bits of the same call run
 * directly on the stream (the split is deterministic), for FP32 on the FFMA tiles, TF32 / BF16
 * on the tensor-core kernels, and a TF32 product on operands without 16-byte rows (the align1
 * form, split too). */
static void test_split_k_graph(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    static const struct {
        cm_gemm_precision_t p;
        size_t m, n, k, ld_pad;
    } cases[] = {{CM_GEMM_FP32, 64, 64, 4096, 0},
                 {CM_GEMM_TF32, 64, 64, 4096, 0},
                 {CM_GEMM_BF16, 64, 64, 4096, 0},
                 {CM_GEMM_FP32, 512, 512, 512, 0},
                 {CM_GEMM_TF32, 127, 1000, 3001, 0},
                 {CM_GEMM_TF32, 100, 200, 2001, 3}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const size_t m = cases[i].m, n = cases[i].n, k = cases[i].k;
        const size_t lda = k + cases[i].ld_pad, ldb = n + cases[i].ld_pad; /* row-major N, N */
        const size_t es = cases[i].p == CM_GEMM_BF16 ? 2 : 4;
        const size_t bytes_a = m * lda * es, bytes_b = k * ldb * es, bytes_c = m * n * 4;
        const size_t elems = (bytes_a + bytes_b) / es;
        float *f = malloc(elems * 4), *direct = malloc(bytes_c), *replay = malloc(bytes_c);
        void *h = malloc(bytes_a + bytes_b);
        assert_true(f && h && direct && replay);
        for (size_t e = 0; e < elems; ++e) f[e] = rnd_f();
        if (es == 2)
            cm_bf16_from_float_array(h, f, elems);
        else
            memcpy(h, f, elems * 4);
        cm_buffer_t *a = NULL, *b = NULL, *cc = NULL;
        CM_ASSERT_OK(cm_buffer_create(c.dev, bytes_a, &a));
        CM_ASSERT_OK(cm_buffer_create(c.dev, bytes_b, &b));
        CM_ASSERT_OK(cm_buffer_create(c.dev, bytes_c, &cc));
        CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, a, 0, h, bytes_a));
        CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, b, 0, (unsigned char *)h + bytes_a, bytes_b));
        CM_ASSERT_OK(cm_buffer_set(NULL, cc, 0, bytes_c, 0xFF));
        CM_ASSERT_OK(cm_gemm(c.stream, cases[i].p, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N,
                             m, n, k, 1.0f, a, 0, lda, b, 0, ldb, 0.0f, cc, 0, n));
        CM_ASSERT_OK(cm_stream_synchronize(c.stream));
        cm__gemm_ran_t ran;
        cm__gemm_last_ran_for_tests(&ran);
        CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, cc, 0, direct, bytes_c));
        for (size_t e = 0; e < m * n; ++e)
            if (!isfinite(direct[e]))
                fail_msg("%s %zux%zux%zu: C[%zu] not written by the direct call",
                         gemm_check_prec_name(cases[i].p), m, n, k, e);
        cm_graph_t *graph = NULL;
        CM_ASSERT_OK(cm_graph_capture_begin(c.stream));
        const cm_status_t st =
            cm_gemm(c.stream, cases[i].p, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, m, n,
                    k, 1.0f, a, 0, lda, b, 0, ldb, 0.0f, cc, 0, n);
        CM_ASSERT_OK(cm_graph_capture_end(c.stream, &graph));
        CM_ASSERT_OK(st);
        print_message("%s %zux%zux%zu: %s in %d parts, captured and replayed\n",
                      gemm_check_prec_name(cases[i].p), m, n, k, cm__gemm_choice_name(ran.choice),
                      ran.parts);
        for (int rep = 0; rep < 3; ++rep) {
            CM_ASSERT_OK(cm_buffer_set(NULL, cc, 0, bytes_c, 0xFF));
            CM_ASSERT_OK(cm_graph_launch(graph, c.stream));
            CM_ASSERT_OK(cm_stream_synchronize(c.stream));
            CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, cc, 0, replay, bytes_c));
            if (memcmp(direct, replay, bytes_c) != 0)
                fail_msg("%s %zux%zux%zu (%s in %d parts): replay %d of the captured product "
                         "differs from the direct call",
                         gemm_check_prec_name(cases[i].p), m, n, k,
                         cm__gemm_choice_name(ran.choice), ran.parts, rep);
        }
        CM_ASSERT_OK(cm_graph_destroy(graph));
        CM_ASSERT_OK(cm_buffer_destroy(a));
        CM_ASSERT_OK(cm_buffer_destroy(b));
        CM_ASSERT_OK(cm_buffer_destroy(cc));
        free(f);
        free(h);
        free(direct);
        free(replay);
    }
}

/* Offsets count bytes and must be a multiple of each operand's element size (float, or bf16
 * for the bf16 inputs / output): a misaligned one is refused before anything is queued, naming
 * the argument and the element size, on either stream; C is left as it was. */
static void test_misaligned_offset_refused(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    const size_t m = 8, n = 8, k = 8, bytes = m * k * 4 + 64;
    cm_buffer_t *ab = NULL, *cb = NULL;
    CM_ASSERT_OK(cm_buffer_create(c.dev, bytes, &ab)); /* A and B: both read from ab */
    CM_ASSERT_OK(cm_buffer_create(c.dev, bytes, &cb));
    CM_ASSERT_OK(cm_buffer_set(NULL, ab, 0, bytes, 0));
    CM_ASSERT_OK(cm_buffer_set(NULL, cb, 0, bytes, 0xAB));
    static const struct {
        cm_gemm_precision_t prec;
        size_t a_off, b_off, c_off;
        const char *arg;
        size_t value, elem;
    } bad[] = {
        {CM_GEMM_FP32, 6, 0, 0, "a_offset", 6, 4},
        {CM_GEMM_TF32, 0, 2, 0, "b_offset", 2, 4},
        {CM_GEMM_FP32, 0, 0, 1, "c_offset", 1, 4},
        {CM_GEMM_BF16, 3, 0, 0, "a_offset", 3, 2},
        {CM_GEMM_BF16, 0, 0, 2, "c_offset", 2, 4},            /* float C */
        {CM_GEMM_BF16_OUT_BF16, 0, 0, 3, "c_offset", 3, 2}, /* bf16 C */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        for (int on_stream = 0; on_stream < 2; ++on_stream) {
            cm_last_error_clear();
            CM_ASSERT_STATUS(cm_gemm(on_stream ? c.stream : NULL, bad[i].prec, CM_GEMM_ROW_MAJOR,
                                     CM_GEMM_OP_N, CM_GEMM_OP_N, m, n, k, 1.0f, ab, bad[i].a_off,
                                     k, ab, bad[i].b_off, n, 0.0f, cb, bad[i].c_off, n),
                             CM_ERROR_INVALID_ARGUMENT);
            char want[128];
            snprintf(want, sizeof want,
                     "%s %zu is not a multiple of the %zu-byte element; nothing was queued",
                     bad[i].arg, bad[i].value, bad[i].elem);
            if (strstr(cm_last_error()->message, want) == NULL)
                fail_msg("case %zu: the message does not say \"%s\": %s", i, want,
                         cm_last_error()->message);
        }
    }
    /* nothing ran: C still holds its poison */
    CM_ASSERT_OK(cm_stream_synchronize(c.stream));
    unsigned char *h = malloc(bytes);
    assert_non_null(h);
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, cb, 0, h, bytes));
    for (size_t i = 0; i < bytes; ++i) assert_int_equal(h[i], 0xAB);
    free(h);
    CM_ASSERT_OK(cm_buffer_destroy(ab));
    CM_ASSERT_OK(cm_buffer_destroy(cb));
}

/* cm_gemm_explain against what cm_gemm then runs on this GPU (cm__gemm_last_ran_for_tests:
 * the choice after the launchers' fallbacks, the parts of split-K, the realignment), over
 * every precision, layout and transpose and shapes of every class (matrix-vector, skinny,
 * small K, long K, odd sizes, square): the kernel it names first, "split into N parts" and
 * the realignment's copy must be what ran. Packed operands (odd K and sizes give rows without
 * 16 bytes). */
static void test_explain_matches_run(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    static const size_t shapes[][3] = {{1, 512, 1000},   {7, 1000, 3001},  {64, 64, 4096},
                                       {127, 1000, 3001}, {1000, 127, 1000}, {512, 512, 512},
                                       {3001, 1000, 64},  {1000, 1000, 1000}, {4096, 64, 1000},
                                       {64, 4096, 1000}, {64, 4096, 2100}, {4096, 64, 2100},
                                       {4096, 32, 1100}, {17000, 32, 512}, {32, 20000, 256}};
    const size_t cap = (size_t)40 << 20; /* 17000 x 512 floats: 35 MB */
    cm_buffer_t *a = NULL, *b = NULL, *cc = NULL;
    CM_ASSERT_OK(cm_buffer_create(c.dev, cap, &a));
    CM_ASSERT_OK(cm_buffer_create(c.dev, cap, &b));
    CM_ASSERT_OK(cm_buffer_create(c.dev, cap, &cc));
    CM_ASSERT_OK(cm_buffer_set(NULL, a, 0, cap, 0));
    CM_ASSERT_OK(cm_buffer_set(NULL, b, 0, cap, 0));
    int compared = 0;
    for (int p = CM_GEMM_FP32; p <= CM_GEMM_FP32_3XTF32; ++p)
        for (int lay = 0; lay < 2; ++lay)
            for (int o = 0; o < 4; ++o)
                for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; ++sh) {
                    if (cm_test_under_sanitizer() && (lay || o || sh % 3 != 0)) continue;
                    const cm_gemm_precision_t prec = (cm_gemm_precision_t)p;
                    const cm_gemm_layout_t layout = (cm_gemm_layout_t)lay;
                    const cm_gemm_op_t oa = (cm_gemm_op_t)(o & 1), ob = (cm_gemm_op_t)(o >> 1);
                    const size_t m = shapes[sh][0], n = shapes[sh][1], k = shapes[sh][2];
                    const int row = layout == CM_GEMM_ROW_MAJOR;
                    const size_t ar = oa == CM_GEMM_OP_N ? m : k, ac = oa == CM_GEMM_OP_N ? k : m;
                    const size_t br = ob == CM_GEMM_OP_N ? k : n, bc = ob == CM_GEMM_OP_N ? n : k;
                    const size_t lda = row ? ac : ar, ldb = row ? bc : br, ldc = row ? n : m;
                    char text[2048];
                    CM_ASSERT_OK(cm_gemm_explain(prec, layout, oa, ob, m, n, k, a, 0, lda, 0, b,
                                                 0, ldb, 0, cc, 0, ldc, 0, 1, text, sizeof text,
                                                 NULL));
                    CM_ASSERT_OK(cm_gemm(c.stream, prec, layout, oa, ob, m, n, k, 1.0f, a, 0, lda,
                                         b, 0, ldb, 0.0f, cc, 0, ldc));
                    cm__gemm_ran_t ran;
                    cm__gemm_last_ran_for_tests(&ran);
                    const char *name = cm__gemm_choice_name(ran.choice);
                    const size_t nl = strlen(name);
                    const char *split = strstr(text, " is split into ");
                    int parts = 1;
                    if (split != NULL && sscanf(split, " is split into %d", &parts) != 1)
                        parts = -1;
                    const int realign = strstr(text, "of scratch from the device's pool") != NULL;
                    if (strncmp(text, name, nl) != 0 || text[nl] != ':' || parts != ran.parts ||
                        realign != ran.realigned)
                        fail_msg("prec %d layout %d ops %d %zux%zux%zu: ran %s in %d part(s)%s; "
                                 "cm_gemm_explain said: %s",
                                 p, lay, o, m, n, k, name, ran.parts,
                                 ran.realigned ? " after the realignment" : "", text);
                    ++compared;
                }
    CM_ASSERT_OK(cm_stream_synchronize(c.stream));
    print_message("cm_gemm_explain matched what ran in %d calls\n", compared);
    CM_ASSERT_OK(cm_buffer_destroy(a));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_buffer_destroy(cc));
}

/* Products whose C is one wave of the Hopper kernel's tiles with multiprocessors to spare
 * (the kernels' form 1000 x 3001: 96 tiles of 128 x 256 on 132 SMs; what a 128 x 192 tile
 * would make one full wave of), TF32, bf16 and bf16 out, K = 64 and 200 (a K tail), beta
 * 0.5, C rows of 3001 (odd) elements; row-major "TN" (read as it is) and column-major "NN"
 * (A transposed first), against float64. On another GPU the same shapes run its kernels. */
static void test_sm90_one_wave(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    static const size_t ks[] = {64, 200};
    size_t idx = 8000;
    for (int p = CM_GEMM_TF32; p <= CM_GEMM_BF16_OUT_BF16; ++p)
        for (int form = 0; form < 2; ++form)
            for (size_t i = 0; i < sizeof ks / sizeof ks[0]; ++i) {
                if (cm_test_under_sanitizer() && (p != CM_GEMM_BF16 || i > 0)) continue;
                /* form 0: row-major C 1000 x 3001 = A B^T; form 1: column-major C 3001 x
                 * 1000 = A B (the benchmark's "NN"), the same kernels' form */
                gcase_t g = {(cm_gemm_precision_t)p, form ? CM_GEMM_COL_MAJOR : CM_GEMM_ROW_MAJOR,
                             CM_GEMM_OP_N, form ? CM_GEMM_OP_N : CM_GEMM_OP_T, form ? 3001 : 1000,
                             form ? 1000 : 3001, ks[i], 1.0f, 0.5f, 0, 0, NULL, 4096};
                run_case(&g, idx++);
            }
}

/* cm_gemm_explain on the real device: it names the device's compute capability and
 * multiprocessor count as CUDA reports them; a TF32 product whose A has rows of 1001 floats runs
 * on sm_80+ the mma.sync tiles' align1 form (or, where that form has no code for the device,
 * is copied to 16-byte rows first) and the text names lda and 1004;
 * then the same call runs on the tensor cores (its error against the product of the
 * TF32-rounded inputs), and explaining queued nothing (C untouched before the run). */
static void test_explain_on_device(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    int dev = 0, major = 0, minor = 0, sms = 0;
    assert_int_equal(cudaGetDevice(&dev), cudaSuccess);
    assert_int_equal(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev),
                     cudaSuccess);
    assert_int_equal(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev),
                     cudaSuccess);
    assert_int_equal(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev),
                     cudaSuccess);
    const size_t m = 512, n = 512, k = 1001;
    cm_buffer_t *a = NULL, *b = NULL, *cc = NULL;
    CM_ASSERT_OK(cm_buffer_create(c.dev, m * k * 4, &a));
    CM_ASSERT_OK(cm_buffer_create(c.dev, k * n * 4, &b));
    CM_ASSERT_OK(cm_buffer_create(c.dev, m * n * 4, &cc));
    CM_ASSERT_OK(cm_buffer_set(NULL, cc, 0, m * n * 4, 0xAB));
    char text[1024], facts[96];
    size_t len = 0;
    CM_ASSERT_OK(cm_gemm_explain(CM_GEMM_TF32, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, m,
                                 n, k, a, 0, k, 0, b, 0, n, 0, cc, 0, n, 0, 1, text, sizeof text,
                                 &len));
    print_message("cm_gemm_explain: %s\n", text);
    assert_int_equal(len, strlen(text));
    snprintf(facts, sizeof facts, "[compute capability %d.%d, %d multiprocessors]", major, minor,
             sms);
    assert_non_null(strstr(text, facts));
    if (major >= 8) {
        /* the align1 form (when built) reads such rows as they are; without it A is copied to
         * 16-byte rows first; either way the text names lda and the padded width */
        if (cm__gemm_mma_align1_for(major))
            assert_non_null(strstr(text, "read as they are by the tiles' align1 form"));
        else
            assert_non_null(strstr(text, "first A is copied into"));
        assert_non_null(strstr(text, "lda = 1001 is not a multiple of 4 elements (16 bytes; 1004 "
                                     "would be)"));
    }
    unsigned char *h = malloc(m * n * 4);
    assert_non_null(h);
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, cc, 0, h, m * n * 4));
    for (size_t i = 0; i < m * n * 4; ++i) assert_int_equal(h[i], 0xAB);
    free(h);
    CM_ASSERT_OK(cm_buffer_destroy(a));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_buffer_destroy(cc));
    /* the explained call itself, against float64 */
    gcase_t g = {CM_GEMM_TF32, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_N, m, n, k, 1.0f,
                 0.0f, 0, 0, NULL, 2048};
    const double err = run_case(&g, 7001);
    /* sm_80+: the tensor cores ran, as the text said (the FFMA kernel's FP32 product would be
     * ~1e-4 off the product of the TF32-rounded inputs: test_realigned) */
    if (major >= 8 && !(err < 1e-5))
        fail_msg("%.3g off the product of the TF32-rounded inputs: not the tensor cores that "
                 "cm_gemm_explain named: %s", err, text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_misaligned_offset_refused),
        cmocka_unit_test(test_small_all_combinations),
        cmocka_unit_test(test_medium_odd),
        cmocka_unit_test(test_matrix_vector),
        cmocka_unit_test(test_skinny),
        cmocka_unit_test(test_every_config),
        cmocka_unit_test(test_small_skinny_packed),
        cmocka_unit_test(test_large_sampled),
        cmocka_unit_test(test_3xtf32_accuracy),
        cmocka_unit_test(test_3xtf32_passes),
        cmocka_unit_test(test_sm90_mn_b),
        cmocka_unit_test(test_sm90_mn_tf32),
        cmocka_unit_test(test_sm90_bf16_store16),
        cmocka_unit_test(test_sm90_stage32),
        cmocka_unit_test(test_realigned),
        cmocka_unit_test(test_staged_back_to_back),
        cmocka_unit_test(test_tf32_align1),
        cmocka_unit_test(test_split_k_graph),
        cmocka_unit_test(test_explain_on_device),
        cmocka_unit_test(test_explain_matches_run),
        cmocka_unit_test(test_sm90_one_wave),
        cmocka_unit_test(test_split_k),
        cmocka_unit_test(test_split_k_forced),
        cmocka_unit_test(test_ffma_tails),
        cmocka_unit_test(test_fp32_pitched),
        cmocka_unit_test(test_wave_split),
        cmocka_unit_test(test_ffma_small_class),
        cmocka_unit_test(test_narrow_c_rules),
        cmocka_unit_test(test_reproducible),
    };
    cm_test_filter_from_env();
    return cmocka_run_group_tests(tests, setup, teardown);
}
