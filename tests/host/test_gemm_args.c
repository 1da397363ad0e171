/*
 * cm_gemm() without a GPU: argument checks (enums, sizes, leading dimensions per layout and op,
 * handles, byte offsets that are not a multiple of the element size, bounds and overflow,
 * devices, streams, C overlapping A / B), the normalisation of
 * every (layout, op_a, op_b) to the kernels' one form (checked against the public definition on
 * random matrices, in float64), the shape classes, the dispatch table and the demotions of the
 * kernel choice, the configuration names, and the bf16 conversions (rounding ties to even,
 * overflow, infinities, NaN, every bf16 value round trip).
 *
 * Runs on the simulated devices and streams of test_buffer_fake.h / test_stream_fake.h: every
 * failure here is decided before any kernel is queued.
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/interop.h>
#include <cudamodel/kernels.h>

#include "gemm.h"
#include "gemm_internal.h"
#include "test_stream_fake.h" /* and test_buffer_fake.h */

#define NF 1024     /* floats in each buffer */
#define NB (NF * 4) /* bytes */
#define INV CM_ERROR_INVALID_ARGUMENT
#define R CM_GEMM_ROW_MAJOR
#define CO CM_GEMM_COL_MAJOR
#define N_ CM_GEMM_OP_N
#define T_ CM_GEMM_OP_T
#define F32 CM_GEMM_FP32
#define F4 sizeof(float)     /* bytes of a float element: offsets are bytes */
#define H2 sizeof(cm_bf16_t) /* bytes of a bf16 element */

typedef struct fixture {
    cm_device_t *dev0, *dev1;
    cm_buffer_t *x, *y, *z; /* NB bytes on device 0 */
    cm_buffer_t *x1;        /* NB bytes on device 1 */
    cm_buffer_t *dead;
    cm_stream_t *s0, *s1, *gone;
} fixture_t;

static fixture_t g;

static void fill_all(unsigned char v) {
    cm_buffer_t *bs[4] = {g.x, g.y, g.z, g.x1};
    for (int i = 0; i < 4; ++i) {
        void *p = NULL;
        CM_ASSERT_OK(cm_buffer_device_ptr(bs[i], &p));
        memset(p, v, NB);
    }
}

static void expect_untouched(void) {
    unsigned char ab[NB];
    memset(ab, 0xAB, NB);
    cm_buffer_t *bs[4] = {g.x, g.y, g.z, g.x1};
    for (int i = 0; i < 4; ++i) {
        void *p = NULL;
        CM_ASSERT_OK(cm_buffer_device_ptr(bs[i], &p));
        assert_memory_equal(p, ab, NB);
    }
}

static int setup(void **state) {
    (void)state;
    xfake_install(2);
    memset(&g, 0, sizeof g);
    if (cm_device_open(0, &g.dev0) || cm_device_open(1, &g.dev1)) return -1;
    if (cm_stream_acquire(g.dev0, CM_STREAM_PRIORITY_LOW, &g.s0) ||
        cm_stream_acquire(g.dev1, CM_STREAM_PRIORITY_LOW, &g.s1) ||
        cm_stream_acquire(g.dev0, CM_STREAM_PRIORITY_LOW, &g.gone) || cm_stream_release(g.gone))
        return -1;
    if (cm_buffer_create(g.dev0, NB, &g.x) || cm_buffer_create(g.dev0, NB, &g.y) ||
        cm_buffer_create(g.dev0, NB, &g.z) || cm_buffer_create(g.dev1, NB, &g.x1))
        return -1;
    if (cm_buffer_create(g.dev0, 64, &g.dead) || cm_buffer_destroy(g.dead)) return -1;
    fill_all(0xAB);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    int bad = cm_buffer_destroy(g.x) | cm_buffer_destroy(g.y) | cm_buffer_destroy(g.z) |
              cm_buffer_destroy(g.x1);
    bad |= cm_stream_release(g.s0) | cm_stream_release(g.s1);
    bad |= cm_device_close(g.dev0) | cm_device_close(g.dev1);
    int left = fake_outstanding(), violations = fake.violations;
    xfake_uninstall();
    return (bad || left || violations) ? -1 : 0;
}

/* C(8x8) = A(8x4) B(4x8), packed row-major: A 32 floats in x, B 32 in y, C 64 in z */
static cm_status_t ok_call(cm_stream_t *s, size_t m) {
    return cm_gemm(s, F32, R, N_, N_, m, 8, 4, 1.0f, g.x, 0, 4, g.y, 0, 8, 0.0f, g.z, 0, 8);
}

static void test_enums_and_sizes(void **state) {
    (void)state;
    EXPECT_FAIL(cm_gemm(NULL, (cm_gemm_precision_t)7, R, N_, N_, 8, 8, 4, 1, g.x, 0, 4, g.y, 0,
                        8, 0, g.z, 0, 8), INV, "unknown precision 7");
    EXPECT_FAIL(cm_gemm(NULL, F32, (cm_gemm_layout_t)2, N_, N_, 8, 8, 4, 1, g.x, 0, 4, g.y, 0,
                        8, 0, g.z, 0, 8), INV, "unknown layout 2");
    EXPECT_FAIL(cm_gemm(NULL, F32, R, (cm_gemm_op_t)3, N_, 8, 8, 4, 1, g.x, 0, 4, g.y, 0, 8, 0,
                        g.z, 0, 8), INV, "unknown op_a 3");
    EXPECT_FAIL(cm_gemm(NULL, F32, R, N_, (cm_gemm_op_t)-1, 8, 8, 4, 1, g.x, 0, 4, g.y, 0, 8, 0,
                        g.z, 0, 8), INV, "unknown op_b -1");
    EXPECT_FAIL(cm_gemm(NULL, F32, R, N_, N_, (size_t)1 << 31, 8, 4, 1, g.x, 0, 4, g.y, 0, 8, 0,
                        g.z, 0, 8), INV, "M = 2147483648");
    EXPECT_FAIL(cm_gemm(NULL, F32, R, N_, N_, 8, 8, SIZE_MAX, 1, g.x, 0, 4, g.y, 0, 8, 0, g.z, 0,
                        8), INV, "at most 2^31 - 1");
    expect_untouched();
    /* M = 0 / N = 0: checked, nothing queued */
    CM_ASSERT_OK(ok_call(NULL, 0));
    CM_ASSERT_OK(ok_call(g.s0, 0));
    CM_ASSERT_OK(cm_gemm(NULL, F32, CO, T_, T_, 5, 0, 3, 1, g.x, 0, 3, g.y, 0, 1, 0, g.z, 0, 5));
    expect_untouched();
}

static void test_leading_dimensions(void **state) {
    (void)state;
    /* row-major: ld >= columns of the stored matrix */
    EXPECT_FAIL(cm_gemm(NULL, F32, R, N_, N_, 8, 8, 4, 1, g.x, 0, 3, g.y, 0, 8, 0, g.z, 0, 8),
                INV, "lda = 3 is less than 4, the number of columns of the stored A (row-major, "
                     "op_a = N: 8 x 4)");
    EXPECT_FAIL(cm_gemm(NULL, F32, R, T_, N_, 8, 8, 4, 1, g.x, 0, 7, g.y, 0, 8, 0, g.z, 0, 8),
                INV, "lda = 7 is less than 8, the number of columns of the stored A (row-major, "
                     "op_a = T: 4 x 8)");
    EXPECT_FAIL(cm_gemm(NULL, F32, R, N_, T_, 8, 8, 4, 1, g.x, 0, 4, g.y, 0, 3, 0, g.z, 0, 8),
                INV, "ldb = 3 is less than 4");
    EXPECT_FAIL(cm_gemm(NULL, F32, R, N_, N_, 8, 8, 4, 1, g.x, 0, 4, g.y, 0, 8, 0, g.z, 0, 7),
                INV, "ldc = 7 is less than 8, the number of columns of the stored C");
    /* column-major: ld >= rows */
    EXPECT_FAIL(cm_gemm(NULL, F32, CO, N_, N_, 8, 8, 4, 1, g.x, 0, 4, g.y, 0, 4, 0, g.z, 0, 8),
                INV, "lda = 4 is less than 8, the number of rows of the stored A (column-major");
    EXPECT_FAIL(cm_gemm(NULL, F32, CO, N_, T_, 8, 8, 4, 1, g.x, 0, 8, g.y, 0, 4, 0, g.z, 0, 8),
                INV, "ldb = 4 is less than 8, the number of rows of the stored B (column-major, "
                     "op_b = T: 8 x 4)");
    EXPECT_FAIL(cm_gemm(NULL, F32, CO, N_, N_, 8, 8, 4, 1, g.x, 0, 8, g.y, 0, 4, 0, g.z, 0, 0),
                INV, "ldc = 0 is less than 8");
    /* ld 0 with an empty dimension: still at least 1 */
    EXPECT_FAIL(cm_gemm(NULL, F32, R, N_, N_, 8, 8, 0, 1, g.x, 0, 0, g.y, 0, 8, 0, g.z, 0, 8),
                INV, "lda = 0 is less than 1");
    expect_untouched();
}

static void test_handles_bounds_devices(void **state) {
    (void)state;
    EXPECT_FAIL(cm_gemm(NULL, F32, R, N_, N_, 8, 8, 4, 1, NULL, 0, 4, g.y, 0, 8, 0, g.z, 0, 8),
                INV, "A is NULL");
    EXPECT_FAIL(cm_gemm(NULL, F32, R, N_, N_, 8, 8, 4, 1, g.x, 0, 4, g.dead, 0, 8, 0, g.z, 0, 8),
                INV, "B");
    EXPECT_FAIL(cm_gemm(NULL, F32, R, N_, N_, 8, 8, 4, 1, g.x, 0, 4, g.y, 0, 8, 0, NULL, 0, 8),
                INV, "C is NULL");
    /* C spans 63 * 16 + 16 = 1024 floats with ldc 16: fits exactly; one more row does not */
    EXPECT_FAIL(cm_gemm(NULL, F32, R, N_, N_, 65, 16, 4, 1, g.x, 0, 4, g.y, 0, 16, 0, g.z, 0, 16),
                INV, "element offset 0 + 1040 elements spanned = 1040 is past the end");
    /* offsets are bytes; the message counts elements */
    EXPECT_FAIL(cm_gemm(NULL, F32, R, N_, N_, 8, 8, 4, 1, g.x, 1021 * F4, 4, g.y, 0, 8, 0, g.z, 0,
                        8), INV, "A out of bounds: element offset 1021 + 32");
    EXPECT_FAIL(cm_gemm(NULL, F32, CO, N_, N_, 8, 8, 4, 1, g.x, 0, 8, g.y, 0, SIZE_MAX / 2, 0,
                        g.z, 0, 8), INV, "overflows size_t");
    EXPECT_FAIL(cm_gemm(NULL, F32, R, N_, N_, 8, 8, 4, 1, g.x, SIZE_MAX - (F4 - 1), 4, g.y, 0, 8,
                        0, g.z, 0, 8), INV, "A out of bounds");
    /* bf16: the same bytes hold twice the elements; C bf16 too */
    CM_ASSERT_OK(cm_gemm(NULL, CM_GEMM_BF16_OUT_BF16, R, N_, N_, 0, 64, 32, 1, g.x, 0, 32, g.y, 0,
                         64, 0, g.z, 0, 64));
    CM_ASSERT_OK(cm_gemm(NULL, CM_GEMM_BF16, R, N_, N_, 0, 64, 32, 1, g.x, 0, 32, g.y, 0, 64, 0,
                         g.z, 0, 64)); /* B 32 x 64 bf16 fills its 4096 bytes exactly */
    EXPECT_FAIL(cm_gemm(NULL, CM_GEMM_BF16, R, N_, N_, 8, 64, 40, 1, g.x, 0, 40, g.y, 0, 64, 0,
                        g.z, 0, 64), INV, "B out of bounds: element offset 0 + 2560");
    EXPECT_FAIL(cm_gemm(NULL, CM_GEMM_BF16, R, N_, N_, 65, 8, 32, 1, g.x, 0, 32, g.y, 0, 8, 0,
                        g.z, 0, 8), INV, "2048 cm_bf16_t elements");
    /* devices and streams */
    EXPECT_FAIL(cm_gemm(NULL, F32, R, N_, N_, 8, 8, 4, 1, g.x1, 0, 4, g.y, 0, 8, 0, g.z, 0, 8),
                INV, "A is on device 1 but C is on device 0");
    EXPECT_FAIL(cm_gemm(NULL, F32, R, N_, N_, 8, 8, 4, 1, g.x, 0, 4, g.x1, 0, 8, 0, g.z, 0, 8),
                INV, "B is on device 1");
    EXPECT_FAIL(cm_gemm(g.s1, F32, R, N_, N_, 8, 8, 4, 1, g.x, 0, 4, g.y, 0, 8, 0, g.z, 0, 8), INV,
                "stream belongs to device 1 but the matrices are on device 0");
    EXPECT_FAIL(cm_gemm(g.gone, F32, R, N_, N_, 8, 8, 4, 1, g.x, 0, 4, g.y, 0, 8, 0, g.z, 0, 8),
                INV, NULL);
    expect_untouched();
}

/* cm_gemm_strided_batched: every matrix of the batch checked before anything is queued */
static void test_batched_arguments(void **state) {
    (void)state;
    /* 4 x 8 x 8 C matrices of 32 floats: 32 of them fill z (1024 floats) with stride 32 */
    CM_ASSERT_OK(cm_gemm_strided_batched(NULL, F32, R, N_, N_, 0, 8, 4, 1, g.x, 0, 4, 32, g.y, 0,
                                         8, 32, 0, g.z, 0, 8, 32, 32)); /* m = 0: nothing */
    CM_ASSERT_OK(cm_gemm_strided_batched(NULL, F32, R, N_, N_, 4, 8, 4, 1, g.x, 0, 4, 16, g.y, 0,
                                         8, 32, 0, g.z, 0, 8, 32, 0)); /* batch 0: nothing */
    /* the 33rd C matrix would end at element 1056 of 1024 */
    EXPECT_FAIL(cm_gemm_strided_batched(NULL, F32, R, N_, N_, 4, 8, 4, 1, g.x, 0, 4, 0, g.y, 0, 8,
                                        0, 0, g.z, 0, 8, 32, 33),
                INV, "C out of bounds: the batch's last C (matrix 32, element offset 0 + 32 x "
                     "stride 32) ends at element 1056");
    /* C matrices overlapping each other */
    EXPECT_FAIL(cm_gemm_strided_batched(NULL, F32, R, N_, N_, 4, 8, 4, 1, g.x, 0, 4, 16, g.y, 0,
                                        8, 32, 0, g.z, 0, 8, 31, 2),
                INV, "stride_c = 31 is less than the 32 elements one 4 x 8 C spans");
    EXPECT_FAIL(cm_gemm_strided_batched(NULL, F32, R, N_, N_, 4, 8, 4, 1, g.x, 0, 4, 16, g.y, 0,
                                        8, 32, 0, g.z, 0, 8, 0, 2),
                INV, "stride_c = 0");
    /* A's batch past its buffer; a broadcast A (stride 0) fits */
    EXPECT_FAIL(cm_gemm_strided_batched(NULL, F32, R, N_, N_, 4, 8, 4, 1, g.x, 0, 4, 512, g.y, 0,
                                        8, 0, 0, g.z, 0, 8, 32, 3),
                INV, "A out of bounds: the batch's last A (matrix 2");
    /* C's batch reaching into B's batch in the same buffer */
    EXPECT_FAIL(cm_gemm_strided_batched(NULL, F32, R, N_, N_, 4, 8, 4, 1, g.x, 0, 4, 16, g.z, 0,
                                        8, 40, 0, g.z, 512 * F4, 8, 32, 16),
                INV, "overlaps B");
    EXPECT_FAIL(cm_gemm_strided_batched(g.s1, F32, R, N_, N_, 4, 8, 4, 1, g.x, 0, 4, 16, g.y, 0,
                                        8, 32, 0, g.z, 0, 8, 32, 2),
                INV, "stream belongs to device 1");
    EXPECT_FAIL(cm_gemm_strided_batched(NULL, F32, R, N_, N_, 4, 8, 4, 1, g.x, 2, 4, 16, g.y, 0,
                                        8, 32, 0, g.z, 0, 8, 32, 2),
                INV, "a_offset 2 is not a multiple");
    expect_untouched();
}

/* Offsets count bytes: a_offset and b_offset in the inputs' element size (float, or cm_bf16_t
 * for the bf16 precisions), c_offset in C's (float, or cm_bf16_t for CM_GEMM_BF16_OUT_BF16).
 * One that is not a multiple is refused, naming the argument, before anything is queued. */
static void test_misaligned_offsets(void **state) {
    (void)state;
    EXPECT_FAIL(cm_gemm(NULL, F32, R, N_, N_, 8, 8, 4, 1, g.x, 6, 4, g.y, 0, 8, 0, g.z, 0, 8),
                INV, "a_offset 6 is not a multiple of the 4-byte element; nothing was queued");
    assert_non_null(strstr(cm_last_error()->hint, "offsets count bytes"));
    EXPECT_FAIL(cm_gemm(g.s0, F32, R, N_, N_, 8, 8, 4, 1, g.x, 0, 4, g.y, 2, 8, 0, g.z, 0, 8),
                INV, "b_offset 2 is not a multiple of the 4-byte element; nothing was queued");
    EXPECT_FAIL(cm_gemm(NULL, CM_GEMM_TF32, CO, T_, N_, 8, 8, 4, 1, g.x, 0, 4, g.y, 0, 4, 0, g.z,
                        1, 8), INV, "c_offset 1 is not a multiple of the 4-byte element");
    /* bf16 inputs: 2-byte elements; C float or bf16 by precision */
    EXPECT_FAIL(cm_gemm(NULL, CM_GEMM_BF16, R, N_, N_, 8, 8, 8, 1, g.x, 3, 8, g.y, 0, 8, 0, g.z, 0,
                        8), INV, "a_offset 3 is not a multiple of the 2-byte element");
    EXPECT_FAIL(cm_gemm(NULL, CM_GEMM_BF16, R, N_, N_, 8, 8, 8, 1, g.x, 0, 8, g.y, 0, 8, 0, g.z, 2,
                        8), INV, "c_offset 2 is not a multiple of the 4-byte element");
    EXPECT_FAIL(cm_gemm(NULL, CM_GEMM_BF16_OUT_BF16, R, N_, N_, 8, 8, 8, 1, g.x, 0, 8, g.y, 5, 8,
                        0, g.z, 0, 8), INV, "b_offset 5 is not a multiple of the 2-byte element");
    EXPECT_FAIL(cm_gemm(NULL, CM_GEMM_BF16_OUT_BF16, R, N_, N_, 8, 8, 8, 1, g.x, 0, 8, g.y, 0, 8,
                        0, g.z, 3, 8), INV, "c_offset 3 is not a multiple of the 2-byte element");
    /* refused even when there is nothing to do (M = 0) */
    EXPECT_FAIL(cm_gemm(NULL, F32, R, N_, N_, 0, 8, 4, 1, g.x, 0, 4, g.y, 0, 8, 0, g.z, 6, 8), INV,
                "c_offset 6 is not a multiple of the 4-byte element");
    expect_untouched();
    /* element-aligned byte offsets pass (M = 0: checked, nothing queued) */
    CM_ASSERT_OK(cm_gemm(NULL, CM_GEMM_BF16_OUT_BF16, R, N_, N_, 0, 8, 8, 1, g.x, 2, 8, g.y, 6, 8,
                         0, g.z, 2, 8));
    CM_ASSERT_OK(cm_gemm(g.s0, F32, R, N_, N_, 0, 8, 4, 1, g.x, 4, 4, g.y, 8, 8, 0, g.z, 12, 8));
    expect_untouched();
}

static void test_aliasing(void **state) {
    (void)state;
    /* C overlapping A or B is refused; A overlapping B is fine (m = 0: nothing queued) */
    EXPECT_FAIL(cm_gemm(NULL, F32, R, N_, N_, 8, 8, 4, 1, g.x, 0, 4, g.y, 0, 8, 0, g.x, 16 * F4,
                        8), INV,
                "C (elements 16 .. 80 of its buffer) overlaps A (elements 0 .. 32");
    EXPECT_FAIL(cm_gemm(NULL, F32, R, N_, N_, 8, 8, 4, 1, g.x, 0, 4, g.y, 0, 8, 0, g.y, 31 * F4,
                        8), INV, "overlaps B");
    EXPECT_FAIL(cm_gemm(NULL, F32, R, N_, N_, 8, 8, 4, 1, g.x, 0, 4, g.y, 0, 8, 0, g.x, 0, 8),
                INV, "overlaps A");
    /* bf16 A (2-byte elements) against float C: byte ranges decide */
    EXPECT_FAIL(cm_gemm(NULL, CM_GEMM_BF16, R, N_, N_, 8, 8, 8, 1, g.x, 100 * H2, 8, g.y, 0, 8, 0,
                        g.x, 80 * F4, 8), INV, "overlaps A (elements 100 .. 164 of the same "
                                               "buffer, in C's element size: 50 .. 82)");
    expect_untouched();
    /* adjacent, not overlapping; A and B the same range */
    CM_ASSERT_OK(cm_gemm(NULL, F32, R, N_, N_, 0, 8, 4, 1, g.x, 0, 4, g.x, 0, 8, 0, g.x, 32 * F4,
                         8));
    CM_ASSERT_OK(cm_gemm(NULL, F32, R, N_, N_, 8, 0, 4, 1, g.x, 0, 4, g.x, 0, 4, 0, g.x, 0, 8));
}

/* ---------------------------------------------------------------- normalisation */

static uint64_t rs = 0x9E3779B97F4A7C15ull;
static double rnd(void) {
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (double)(rs >> 11) * 0x1.0p-52 - 1.0;
}

/* stored element (i, j) of a matrix in layout */
static double at(const double *p, int layout, size_t ld, size_t i, size_t j) {
    return layout == R ? p[i * ld + j] : p[j * ld + i];
}

static void test_normalisation(void **state) {
    (void)state;
    for (int layout = 0; layout < 2; ++layout)
        for (int oa = 0; oa < 2; ++oa)
            for (int ob = 0; ob < 2; ++ob) {
                const int m = 5, n = 7, k = 3;
                /* stored shapes and padded leading dimensions */
                const size_t ar = oa ? k : m, ac = oa ? m : k, br = ob ? n : k, bc = ob ? k : n;
                const size_t lda = (layout == R ? ac : ar) + 2, ldb = (layout == R ? bc : br) + 1;
                const size_t ldc = (layout == R ? n : m) + 3;
                double A[64], B[64], C1[64], C2[64];
                for (int i = 0; i < 64; ++i) { A[i] = rnd(); B[i] = rnd(); C1[i] = C2[i] = 0; }
                /* public definition */
                for (int i = 0; i < m; ++i)
                    for (int j = 0; j < n; ++j) {
                        double s = 0;
                        for (int l = 0; l < k; ++l) {
                            double av = oa ? at(A, layout, lda, l, i) : at(A, layout, lda, i, l);
                            double bv = ob ? at(B, layout, ldb, j, l) : at(B, layout, ldb, l, j);
                            s += av * bv;
                        }
                        if (layout == R) C1[i * ldc + j] = s; else C1[j * ldc + i] = s;
                    }
                /* internal form */
                cm__gemm_args_t p;
                cm__gemm_normalize(layout, oa, ob, m, n, k, A, (int64_t)lda, B, (int64_t)ldb, C2,
                                   (int64_t)ldc, &p);
                assert_int_equal(p.m, layout == R ? m : n);
                assert_int_equal(p.n, layout == R ? n : m);
                assert_int_equal(p.k, k);
                const double *pa = p.a, *pb = p.b;
                double *pc = p.c;
                for (int i = 0; i < p.m; ++i)
                    for (int j = 0; j < p.n; ++j) {
                        double s = 0;
                        for (int l = 0; l < p.k; ++l) {
                            double av = p.a_kmajor ? pa[i * p.lda + l] : pa[l * p.lda + i];
                            double bv = p.b_kmajor ? pb[j * p.ldb + l] : pb[l * p.ldb + j];
                            s += av * bv;
                        }
                        pc[i * p.ldc + j] = s;
                    }
                for (int i = 0; i < 64; ++i)
                    if (C1[i] != C2[i])
                        fail_msg("layout %d op_a %d op_b %d: element %d %g vs %g", layout, oa, ob,
                                 i, C1[i], C2[i]);
                /* the "TN" cases (both K-contiguous) are row-major N,T and column-major T,N */
                const int tn = p.a_kmajor && p.b_kmajor;
                assert_int_equal(tn, (layout == R && !oa && ob) || (layout == CO && oa && !ob));
            }
}

/* ---------------------------------------------------------------- dispatch */

static cm__gemm_args_t args(int m, int n, int k, int a_k, int b_k, int in, int64_t lda) {
    cm__gemm_args_t p;
    memset(&p, 0, sizeof p);
    p.m = m;
    p.n = n;
    p.k = k;
    p.a = (const void *)(uintptr_t)4096;
    p.b = (const void *)(uintptr_t)8192;
    p.c = (void *)(uintptr_t)12288;
    p.lda = lda;
    p.ldb = 4096;
    p.ldc = n;
    p.a_kmajor = a_k;
    p.b_kmajor = b_k;
    p.in_type = in;
    return p;
}

/* A packed column-major problem (op(B) N, leading dimensions minimal) through
 * cm__gemm_normalize, the way cm_gemm sees a user's call */
static cm__gemm_args_t col_major(int op_a, int m, int n, int k, int in) {
    cm__gemm_args_t q;
    cm__gemm_normalize(CM_GEMM_COL_MAJOR, op_a, CM_GEMM_OP_N, m, n, k,
                       (const void *)(uintptr_t)4096, op_a == CM_GEMM_OP_N ? m : k,
                       (const void *)(uintptr_t)(1 << 24), k, (void *)(uintptr_t)(1 << 26), m,
                       &q);
    q.in_type = in;
    return q;
}

/* The realignment's copied form of q: each operand without 16-byte rows copied K-contiguous
 * into rows of K rounded up to 16 bytes at an aligned base (cm__gemm_staged_form) */
static cm__gemm_args_t copied_form(const cm__gemm_args_t *q) {
    cm__gemm_args_t st = *q;
    const int64_t ldk = ((int64_t)q->k + 3) / 4 * 4;
    if (q->lda % 4 != 0 || (uintptr_t)q->a % 16 != 0)
        st.a = (const void *)(uintptr_t)256, st.lda = ldk, st.a_kmajor = 1;
    if (q->ldb % 4 != 0 || (uintptr_t)q->b % 16 != 0)
        st.b = (const void *)(uintptr_t)256, st.ldb = ldk, st.b_kmajor = 1;
    return st;
}

/* The realignment's mode for q as cm_gemm asks it: after the selection's own choice */
static int realign_of(int prec, int maj, int sms, const cm__gemm_args_t *q, int sm90,
                      cm__gemm_choice_t *tiles) {
    return cm__gemm_realign_mode(prec, maj, 0, sms, q,
                                 cm__gemm_select(prec, maj, 0, sms, q, sm90, NULL), sm90, NULL,
                                 tiles);
}

/* Split-K's parts for FP32 p on FFMA configuration `config` (132 SMs) */
static int ffma_parts(const cm__gemm_args_t *p, int config) {
    return cm__gemm_splitk_parts(p, (cm__gemm_choice_t){CM__GEMM_KERNEL_FFMA, config},
                                 CM_GEMM_FP32, 132, 0);
}

/* A shape the skinny kernel takes by default: "skinny" once CM__GEMM_SKINNY_DISPATCH is 1, the
 * tiles' choice before (forced, it is "skinny" either way). */
#define EXPECT_SKINNY(name)                                                                  \
    do {                                                                                     \
        if (CM__GEMM_SKINNY_DISPATCH) assert_string_equal((name), "skinny");                \
        else assert_string_not_equal((name), "skinny");                                      \
    } while (0)

/* TF32 with an operand MN-major with 16-byte rows: the register-A form where it is dispatched */
#define AT_OR_PACK (CM__GEMM_SM90_AT_DISPATCH ? "sm90+at" : "sm90+pack")
#define NAME(prec, maj, p, sm90, ov) cm__gemm_choice_name(cm__gemm_select((prec), (maj), 0, 132, &(p), (sm90), (ov)))

/* TF32 "NN" in the column-major sense (row-major C^T here: A K-major, B MN-major with rows of n)
 * on sm_90 with the Hopper kernel built: fails unless the dispatch names `want`; returns the
 * arguments for the row's further checks */
static cm__gemm_args_t tf32_nn_expect(int m, int n, int k, const char *want) {
    cm__gemm_args_t w = args(m, n, k, 1, 0, CM__GEMM_F32, k);
    w.ldb = n;
    const char *tf = NAME(CM_GEMM_TF32, 9, w, 1, NULL);
    if (strcmp(tf, want) != 0)
        fail_msg("TF32 NN %d x %d x %d: %s, expected %s", m, n, k, tf, want);
    return w;
}

static void test_dispatch(void **state) {
    (void)state;
    assert_int_equal(cm__gemm_shape_class(512, 512, 512, 132), CM__GEMM_SHAPE_TINY);
    assert_int_equal(cm__gemm_shape_class(1024, 1024, 1024, 132), CM__GEMM_SHAPE_SMALL);
    assert_int_equal(cm__gemm_shape_class(8192, 8192, 128, 132), CM__GEMM_SHAPE_SKINNY);
    assert_int_equal(cm__gemm_shape_class(65536, 128, 128, 132), CM__GEMM_SHAPE_SKINNY);
    assert_int_equal(cm__gemm_shape_class(128, 65536, 4096, 132), CM__GEMM_SHAPE_SKINNY);
    assert_int_equal(cm__gemm_shape_class(4096, 4096, 4096, 132), CM__GEMM_SHAPE_LARGE);
    assert_int_equal(cm__gemm_shape_class(4093, 4093, 4093, 132), CM__GEMM_SHAPE_LARGE);
    assert_int_equal(cm__gemm_shape_class(1, 1, 1, 0), CM__GEMM_SHAPE_SKINNY); /* 0 SMs: 1 */
    assert_int_equal(cm__gemm_arch_class(7, 5), CM__GEMM_ARCH_SM75);
    assert_int_equal(cm__gemm_arch_class(8, 6), CM__GEMM_ARCH_SM80);
    assert_int_equal(cm__gemm_arch_class(9, 0), CM__GEMM_ARCH_SM90);
    assert_int_equal(cm__gemm_arch_class(12, 0), CM__GEMM_ARCH_SM80);

    cm__gemm_args_t big = args(4096, 4096, 4096, 1, 1, CM__GEMM_F32, 4096);
    cm__gemm_args_t bigbf = args(4096, 4096, 4096, 1, 1, CM__GEMM_BF16, 4096);
    cm__gemm_args_t nn = args(4096, 4096, 4096, 0, 0, CM__GEMM_F32, 4096);
    cm__gemm_args_t mis = args(4096, 4096, 4096, 1, 1, CM__GEMM_F32, 4093);
    cm__gemm_args_t tiny = args(512, 512, 512, 1, 1, CM__GEMM_F32, 512);
    /* FP32 is FFMA everywhere, whatever the override says */
    assert_string_equal(NAME(CM_GEMM_FP32, 9, big, 1, NULL), "ffma:128x128x16q3");
    assert_string_equal(NAME(CM_GEMM_FP32, 9, tiny, 1, NULL), "ffma:32x64x16");
    assert_string_equal(NAME(CM_GEMM_FP32, 9, big, 1, "mma:128x128"), "ffma:128x128x8");
    assert_string_equal(NAME(CM_GEMM_FP32, 9, big, 1, "sm90"), "ffma:128x128x8");
    assert_string_equal(NAME(CM_GEMM_FP32, 9, big, 1, "ffma:64x64x16"), "ffma:64x64x16");
    /* a configuration outside the shipped set is forced only where the build compiled it */
    assert_string_equal(NAME(CM_GEMM_FP32, 9, big, 1, "ffma:256x128x8"),
                        CM_GEMM_TUNING ? "ffma:256x128x8" : "ffma:128x128x16q3");
    assert_string_equal(NAME(CM_GEMM_FP32, 9, big, 1, "bogus"), "ffma:128x128x16q3");
    /* TF32: sm90 for TN on Hopper when carried, else mma, else FFMA */
    assert_string_equal(NAME(CM_GEMM_TF32, 9, big, 1, NULL), "sm90");
    assert_string_equal(NAME(CM_GEMM_TF32, 9, big, 0, NULL), "mma:128x128");
    /* not "TN": the transposing pre-pass on the large class, forced anywhere, else mma */
    /* an operand MN-major with 16-byte rows: read as it is by the register-A form ("sm90+at") */
    assert_string_equal(NAME(CM_GEMM_TF32, 9, nn, 1, NULL), AT_OR_PACK);
    assert_string_equal(NAME(CM_GEMM_TF32, 9, nn, 0, NULL), "mma:128x128");
    assert_string_equal(NAME(CM_GEMM_TF32, 8, nn, 1, NULL), "mma:128x128");
    assert_string_equal(NAME(CM_GEMM_TF32, 9, nn, 1, "sm90"), AT_OR_PACK);
    assert_string_equal(NAME(CM_GEMM_TF32, 9, nn, 1, "sm90+at"), "sm90+at");
    /* "sm90+pack" by name transposes it whatever the default's form */
    assert_string_equal(NAME(CM_GEMM_TF32, 9, nn, 1, "sm90+pack"), "sm90+pack");
    assert_string_equal(NAME(CM_GEMM_TF32, 9, mis, 1, "sm90+at"), "sm90+pack"); /* K-major */
    assert_string_equal(NAME(CM_GEMM_TF32, 9, big, 1, "sm90+at"), "sm90");
    assert_string_equal(NAME(CM_GEMM_FP32, 9, nn, 1, "sm90+at"), "ffma:128x128x8");
    assert_string_equal(NAME(CM_GEMM_TF32, 9, big, 1, "sm90"), "sm90");
    assert_string_equal(NAME(CM_GEMM_TF32, 9, big, 1, "sm90+pack"), "sm90");
    assert_string_equal(NAME(CM_GEMM_TF32, 9, mis, 1, NULL), "sm90+pack");
    {
        /* "TN" with K-contiguous rows of an odd number of 16 bytes, K >= 256, C large enough
         * (m n / (m + n) >= CM__GEMM_STAGE32_MIN_HM): staged into rows of whole 128-byte lines
         * ("sm90+pack"); rows of a multiple of 32 bytes, a short K or a small C read as they
         * are ("sm90") */
        static const struct {
            int m, n, k, in;
            int64_t lda, ldb;
            const char *want;
        } st[] = {
            {4096, 4096, 3004, CM__GEMM_F32, 3004, 3004, "sm90+pack"}, /* 12016 bytes */
            {4096, 4096, 3000, CM__GEMM_F32, 3004, 3000, "sm90+pack"}, /* A's rows only */
            {4096, 4096, 3000, CM__GEMM_F32, 3000, 3000, "sm90"},      /* 12000: 32 x 375 */
            {4096, 4096, 3000, CM__GEMM_BF16, 3000, 3000, "sm90+pack"}, /* 6000 bytes */
            {4096, 4096, 3008, CM__GEMM_BF16, 3008, 3008, "sm90"},
            {4096, 4096, 252, CM__GEMM_F32, 252, 252, "sm90"},          /* K under 256 */
            {1024, 1024, 3004, CM__GEMM_F32, 3004, 3004, "sm90"},       /* m n / (m + n) 512 */
        };
        for (size_t i = 0; i < sizeof st / sizeof st[0]; ++i) {
            cm__gemm_args_t q = args(st[i].m, st[i].n, st[i].k, 1, 1, st[i].in, st[i].lda);
            q.ldb = st[i].ldb;
            const int prec = st[i].in == CM__GEMM_BF16 ? CM_GEMM_BF16 : CM_GEMM_TF32;
            assert_string_equal(NAME(prec, 9, q, 1, NULL), st[i].want);
        }
    }
    cm__gemm_args_t skinny_nn = args(8192, 8192, 128, 0, 0, CM__GEMM_F32, 8192);
    cm__gemm_args_t tiny_nt = args(512, 512, 512, 0, 1, CM__GEMM_F32, 512);
    /* the small and skinny classes pack too once K >= CM__GEMM_PACK_MIN_K; below it, mma */
    /* (the register-A form from K = CM__GEMM_SM90_AT_MIN_K, or forced, at any K) */
    assert_string_equal(NAME(CM_GEMM_TF32, 9, skinny_nn, 1, NULL), "sm90+pack");
    assert_string_equal(NAME(CM_GEMM_TF32, 9, skinny_nn, 1, "sm90+at"), "sm90+at");
    cm__gemm_args_t short_k_nn = args(8192, 8192, CM__GEMM_PACK_MIN_K - 1, 0, 0, CM__GEMM_F32,
                                      8192);
    assert_string_equal(NAME(CM_GEMM_TF32, 9, short_k_nn, 1, NULL), "mma:128x128");
    short_k_nn.k = CM__GEMM_PACK_MIN_K;
    assert_string_equal(NAME(CM_GEMM_TF32, 9, short_k_nn, 1, NULL), "sm90+pack");
    short_k_nn.k = CM__GEMM_SM90_AT_MIN_K - 1;
    assert_string_equal(NAME(CM_GEMM_TF32, 9, short_k_nn, 1, NULL), "sm90+pack");
    short_k_nn.k = CM__GEMM_SM90_AT_MIN_K;
    assert_string_equal(NAME(CM_GEMM_TF32, 9, short_k_nn, 1, NULL), AT_OR_PACK);
    assert_string_equal(NAME(CM_GEMM_BF16, 9, tiny_nt, 1, "sm90"), "sm90+pack");
    assert_string_equal(NAME(CM_GEMM_FP32, 9, nn, 1, "sm90+pack"), "ffma:128x128x8");
    assert_string_equal(NAME(CM_GEMM_TF32, 8, big, 1, NULL), "mma:128x128");
    assert_string_equal(NAME(CM_GEMM_TF32, 8, mis, 1, NULL), "ffma:128x128x8");
    assert_string_equal(NAME(CM_GEMM_TF32, 7, big, 1, NULL), "ffma:128x128x8");
    /* the tiny class: TF32 on the Hopper kernel in parts of K from K = 512 (512^3: 2 parts);
     * bf16, a shorter K or another generation: mma:64x64 */
    assert_string_equal(NAME(CM_GEMM_TF32, 9, tiny, 1, NULL), "sm90");
    {
        cm__gemm_args_t t = tiny;
        t.in_type = CM__GEMM_BF16;
        assert_string_equal(NAME(CM_GEMM_BF16, 9, t, 1, NULL), "mma:64x64");
        t = tiny;
        t.k = t.lda = t.ldb = 508;
        assert_string_equal(NAME(CM_GEMM_TF32, 9, t, 1, NULL), "mma:64x64");
        assert_string_equal(NAME(CM_GEMM_TF32, 9, tiny, 0, NULL), "mma:64x64");
        assert_string_equal(NAME(CM_GEMM_TF32, 8, tiny, 1, NULL), "mma:64x64");
        t = tiny; /* a B that is N-contiguous would need the pre-pass */
        t.b_kmajor = 0;
        assert_string_equal(NAME(CM_GEMM_TF32, 9, t, 1, NULL), "mma:64x64");
    }
    cm__gemm_args_t small_tn = args(1024, 1024, 1024, 1, 1, CM__GEMM_F32, 1024);
    cm__gemm_args_t small_nn = args(1024, 1024, 1024, 0, 0, CM__GEMM_F32, 1024);
    assert_string_equal(NAME(CM_GEMM_TF32, 9, small_tn, 1, NULL), "sm90");
    assert_string_equal(NAME(CM_GEMM_TF32, 9, small_nn, 1, NULL), AT_OR_PACK);
    cm__gemm_args_t small_nnbf = args(1024, 1024, 1024, 1, 0, CM__GEMM_BF16, 1024);
    assert_string_equal(NAME(CM_GEMM_BF16, 9, small_nnbf, 1, NULL),
                        CM__GEMM_SM90_BT_DISPATCH ? "sm90+bt" : "sm90+pack");
    assert_string_equal(NAME(CM_GEMM_BF16, 9, small_nnbf, 1, "sm90"),
                        CM__GEMM_SM90_BT_DISPATCH ? "sm90+bt" : "sm90+pack");
    assert_string_equal(NAME(CM_GEMM_BF16, 9, small_nnbf, 1, "sm90+bt"), "sm90+bt");
    assert_string_equal(NAME(CM_GEMM_BF16, 9, small_nnbf, 1, "sm90+pack"), "sm90+pack");
    small_nnbf.k = 7; /* a short K: the pre-pass would cost more than the product */
    assert_string_equal(NAME(CM_GEMM_BF16, 9, small_nnbf, 1, NULL), "mma:128x128");
    assert_string_equal(NAME(CM_GEMM_TF32, 8, small_tn, 1, NULL), "mma:64x64");
    /* the tiny class's rule 1 for TF32: K 512 .. 1023 over at least sms / 16 tiles of 128 x
     * 128 keeps the Hopper kernel (run with K whole); fewer tiles, a longer or a shorter K
     * take mma.sync */
    cm__gemm_args_t tiny_tn = args(384, 384, 600, 1, 1, CM__GEMM_F32, 600);
    assert_string_equal(NAME(CM_GEMM_TF32, 9, tiny_tn, 1, NULL), "sm90"); /* 9 tiles */
    tiny_tn.k = tiny_tn.lda = tiny_tn.ldb = 1020;
    assert_string_equal(NAME(CM_GEMM_TF32, 9, tiny_tn, 1, NULL), "sm90");
    tiny_tn.k = tiny_tn.lda = tiny_tn.ldb = 1024; /* CM__GEMM_SM90_LONG_K */
    assert_string_equal(NAME(CM_GEMM_TF32, 9, tiny_tn, 1, NULL), "mma:64x64");
    tiny_tn.k = tiny_tn.lda = tiny_tn.ldb = 300; /* under CM__GEMM_SM90_TF32_TINY_MIN_K */
    assert_string_equal(NAME(CM_GEMM_TF32, 9, tiny_tn, 1, NULL), "mma:64x64");
    cm__gemm_args_t tiny_few = args(256, 256, 600, 1, 1, CM__GEMM_F32, 600); /* 4 tiles */
    assert_string_equal(NAME(CM_GEMM_TF32, 9, tiny_few, 1, NULL), "mma:64x64");
    tiny_few = args(128, 128, 1500, 1, 1, CM__GEMM_F32, 1500);
    assert_string_equal(NAME(CM_GEMM_TF32, 9, tiny_few, 1, NULL), "mma:64x64");
    tiny_few = args(512, 512, 512, 1, 1, CM__GEMM_F32, 512); /* 16 tiles */
    assert_string_equal(NAME(CM_GEMM_TF32, 9, tiny_few, 1, NULL), "sm90");
    /* a forced mma.sync tile (mma:128x64 only where this build compiled it: a tuning build) */
    assert_string_equal(NAME(CM_GEMM_TF32, 9, big, 1, "mma:64x64"), "mma:64x64");
    assert_string_equal(NAME(CM_GEMM_TF32, 9, big, 1, "mma:128x64"),
                        CM_GEMM_TUNING ? "mma:128x64" : "sm90");
    cm__gemm_args_t k0 = args(4096, 4096, 0, 1, 1, CM__GEMM_F32, 4096);
    /* TF32 on the FFMA tiles runs FP32's choice of them */
    assert_string_equal(NAME(CM_GEMM_TF32, 9, k0, 1, NULL), NAME(CM_GEMM_FP32, 9, k0, 1, NULL));
    assert_string_equal(NAME(CM_GEMM_TF32, 9, k0, 1, "sm90"), "ffma:64x64x16");
    /* BF16 */
    assert_string_equal(NAME(CM_GEMM_BF16, 9, bigbf, 1, NULL), "sm90");
    assert_string_equal(NAME(CM_GEMM_BF16_OUT_BF16, 8, bigbf, 1, NULL), "mma:128x128");
    assert_string_equal(NAME(CM_GEMM_BF16, 7, bigbf, 1, NULL), "ffma:128x128x8");
    assert_string_equal(NAME(CM_GEMM_BF16, 7, bigbf, 1, "ffma:256x128x8"), "ffma:128x128x8");
    assert_string_equal(NAME(CM_GEMM_BF16, 7, bigbf, 1, "ffma:32x64x16"), "ffma:64x64x16");
    assert_string_equal(NAME(CM_GEMM_BF16, 8, bigbf, 1, "mma:64x64"), "mma:64x64");
    bigbf.lda = 4092; /* not a multiple of 8 bf16: no 16-byte chunks */
    assert_string_equal(NAME(CM_GEMM_BF16, 8, bigbf, 1, NULL), "ffma:128x128x8");
    assert_string_equal(NAME(CM_GEMM_BF16, 9, bigbf, 1, NULL), "sm90+pack"); /* copied aligned */
    bigbf.lda = 4096;
    bigbf.b = (const void *)(uintptr_t)8200; /* base not 16-byte aligned */
    assert_string_equal(NAME(CM_GEMM_BF16, 8, bigbf, 1, NULL), "ffma:128x128x8");

    /* realignment: TF32 / BF16 on sm_80+ whose operands lack 16-byte rows (K = 3001) and that
     * the selection therefore gives to FFMA are copied aligned first when the aligned form runs
     * on tensor cores, K is at least CM__GEMM_REALIGN_MIN_K and the product has at least
     * CM__GEMM_REALIGN_MIN_FLOPS flops (BF16: CM__GEMM_REALIGN_MIN_FLOPS_BF16); FP32, sm_75, a forced kernel, small K, small products and aligned
     * operands are left as they are */
    {
        cm__gemm_args_t odd = args(127, 1000, 3001, 1, 1, CM__GEMM_F32, 3001);
        odd.ldb = 3001;
        cm__gemm_args_t oddbf = odd;
        oddbf.in_type = CM__GEMM_BF16;
#define WANT(prec, maj, q, sm90, ov)                                                           \
    cm__gemm_realign_wanted((prec), (maj), 0, 132, &(q),                                     \
                            cm__gemm_select((prec), (maj), 0, 132, &(q), (sm90), (ov)), (sm90), \
                            (ov))
        /* demoted to FFMA: FP32's choice of those tiles */
        assert_string_equal(NAME(CM_GEMM_TF32, 9, odd, 1, NULL), "ffma:64x64x16q3");
        assert_string_equal(NAME(CM_GEMM_FP32, 9, odd, 1, NULL), "ffma:64x64x16q3");
        assert_true(WANT(CM_GEMM_TF32, 9, odd, 1, NULL));
        assert_true(WANT(CM_GEMM_TF32, 8, odd, 0, NULL));
        assert_true(WANT(CM_GEMM_BF16, 9, oddbf, 1, NULL));
        assert_true(WANT(CM_GEMM_BF16_OUT_BF16, 9, oddbf, 1, NULL));
        assert_false(WANT(CM_GEMM_FP32, 9, odd, 1, NULL));
        assert_false(WANT(CM_GEMM_FP32_3XTF32, 9, odd, 1, NULL));
        assert_false(WANT(CM_GEMM_TF32, 7, odd, 0, NULL));
        assert_false(WANT(CM_GEMM_TF32, 9, odd, 1, "ffma:32x64x16"));
        cm__gemm_args_t small = args(64, 64, 301, 1, 1, CM__GEMM_F32, 301); /* 2.5 Mflop */
        assert_false(WANT(CM_GEMM_TF32, 9, small, 1, NULL));
        /* 4096 x 127 x 127 (132 Mflop): BF16 realigned from its own floor, TF32 from 2^28 */
        cm__gemm_args_t tall = args(4096, 127, 127, 1, 1, CM__GEMM_BF16, 127);
        tall.ldb = 127;
        const int tall_bf = 2.0 * 4096 * 127 * 127 >= CM__GEMM_REALIGN_MIN_FLOPS_BF16;
        assert_int_equal(WANT(CM_GEMM_BF16, 9, tall, 1, NULL), tall_bf);
        assert_int_equal(WANT(CM_GEMM_BF16_OUT_BF16, 8, tall, 0, NULL), tall_bf);
        tall.in_type = CM__GEMM_F32;
        assert_false(WANT(CM_GEMM_TF32, 9, tall, 1, NULL));
        /* K under CM__GEMM_REALIGN_MIN_K: bound by writing C, left to FFMA at any size */
        cm__gemm_args_t flat = args(8192, 8192, 7, 1, 1, CM__GEMM_F32, 7); /* 940 Mflop */
        flat.ldb = 7;
        assert_int_equal(cm__gemm_select(CM_GEMM_TF32, 9, 0, 132, &flat, 1, NULL).kernel,
                         CM__GEMM_KERNEL_FFMA); /* demoted by the misaligned rows */
        assert_false(WANT(CM_GEMM_TF32, 9, flat, 1, NULL));
        flat.in_type = CM__GEMM_BF16;
        assert_false(WANT(CM_GEMM_BF16, 9, flat, 1, NULL));
        flat.k = flat.lda = flat.ldb = CM__GEMM_REALIGN_MIN_K + 1; /* from the minimum on */
        assert_true(WANT(CM_GEMM_BF16, 9, flat, 1, NULL));
        flat.in_type = CM__GEMM_F32;
        assert_true(WANT(CM_GEMM_TF32, 9, flat, 1, NULL));
        cm__gemm_args_t tinybf = args(127, 127, 127, 1, 1, CM__GEMM_BF16, 127); /* 4 Mflop */
        tinybf.ldb = 127;
        assert_int_equal(WANT(CM_GEMM_BF16, 9, tinybf, 1, NULL),
                         2.0 * 127 * 127 * 127 >= CM__GEMM_REALIGN_MIN_FLOPS_BF16);
        cm__gemm_args_t tinier = args(64, 64, 127, 1, 1, CM__GEMM_BF16, 127); /* 1 Mflop */
        tinier.ldb = 127;
        assert_int_equal(WANT(CM_GEMM_BF16, 9, tinier, 1, NULL),
                         2.0 * 64 * 64 * 127 >= CM__GEMM_REALIGN_MIN_FLOPS_BF16);
        cm__gemm_args_t even = odd; /* 16-byte rows: already a tensor-core kernel */
        even.lda = even.ldb = 3004;
        assert_false(WANT(CM_GEMM_TF32, 9, even, 1, NULL));
        cm__gemm_args_t one = odd; /* only A misaligned: still worth it */
        one.ldb = 3004;
        assert_true(WANT(CM_GEMM_TF32, 9, one, 1, NULL));
        cm__gemm_args_t mnb = odd; /* B N-contiguous, misaligned: transposed into scratch */
        mnb.b_kmajor = 0;
        mnb.ldb = 1001;
        assert_true(WANT(CM_GEMM_BF16, 9, mnb, 1, NULL));
#undef WANT
        /* 1 where cm__gemm_realign_mode takes the align1 form for q (*out: its tiles) */
#define ALIGN1(prec, maj, sms, q, sm90, out)                                                   \
    (realign_of((prec), (maj), (sms), (q), (sm90), (out)) == CM__REALIGN_ALIGN1)
        /* the TF32 align1 form instead of the copy (kernels/gemm.h, CM__GEMM_MMA_ALIGN1): where
         * the copied form runs mma.sync tiles of 128 x 128 or 64 x 64, TF32 only, 4-byte
         * aligned bases; off, or not built, nothing */
        cm__gemm_choice_t a1 = {-1, -1};
        cm__gemm_align1_set_for_tests(0);
        assert_false(ALIGN1(CM_GEMM_TF32, 8, 108, &odd, 0, &a1));
        assert_int_equal(a1.kernel, -1); /* untouched */
        cm__gemm_align1_set_for_tests(-1);
        /* by default the form is taken where it carries code: sm_90 (any architecture in a
         * tuning build), not the A100's sm_80, whose product is copied */
        assert_int_equal(cm__gemm_mma_align1_for(9), cm__gemm_mma_align1_built());
        assert_int_equal(cm__gemm_mma_align1_for(8),
                         cm__gemm_mma_align1_built() && CM_GEMM_TUNING);
        assert_int_equal(cm__gemm_mma_align1_for(10),
                         cm__gemm_mma_align1_built() && CM_GEMM_TUNING);
        assert_int_equal(ALIGN1(CM_GEMM_TF32, 8, 108, &odd, 0, &a1),
                         cm__gemm_mma_align1_for(8));
        a1 = (cm__gemm_choice_t){-1, -1};
        assert_int_equal(ALIGN1(CM_GEMM_TF32, 9, 132, &odd, 1, &a1),
                         cm__gemm_mma_align1_for(9));
        cm__gemm_align1_set_for_tests(1);
        a1 = (cm__gemm_choice_t){-1, -1};
        assert_true(ALIGN1(CM_GEMM_TF32, 8, 108, &odd, 0, &a1));
        {
            cm__gemm_args_t staged = odd; /* the copy's form: rows of 3004 at an aligned base */
            staged.a = staged.b = (const void *)(uintptr_t)256;
            staged.lda = staged.ldb = 3004;
            const cm__gemm_choice_t want = cm__gemm_select(CM_GEMM_TF32, 8, 0, 108, &staged, 0,
                                                           NULL);
            assert_int_equal(want.kernel, CM__GEMM_KERNEL_MMA);
            assert_int_equal(a1.kernel, want.kernel); /* what the copy would have run */
            assert_int_equal(a1.config, want.config);
        }
        /* on the H200 this shape's copied form (both operands K-contiguous) runs mma:64x64
         * (the tiny class's rule 1 from K = 1024 with no side of 2048), where rule 1 at any C
         * would run the Hopper kernel split over K (8 tiles of C): the 128 x 128 tiles' align1
         * form, split into parts of at least 128 of K (16 parts: about one per multiprocessor) */
        {
            const cm__gemm_args_t st = copied_form(&odd);
            assert_string_equal(NAME(CM_GEMM_TF32, 9, st, 1, NULL), "mma:64x64");
        }
        a1 = (cm__gemm_choice_t){-1, -1};
        assert_true(ALIGN1(CM_GEMM_TF32, 9, 132, &odd, 1, &a1));
        assert_int_equal(a1.kernel, CM__GEMM_KERNEL_MMA);
        assert_int_equal(a1.config, CM__MMA_128x128);
        assert_int_equal(cm__gemm_splitk_parts(&odd, a1, CM_GEMM_TF32, 132, 0), 16);
        {
            /* K under 512: rule 1 never takes it; the copied form's 64 x 64 tiles */
            cm__gemm_args_t sk = odd;
            sk.m = 300;
            sk.k = 509;
            sk.lda = sk.ldb = 509;
            const cm__gemm_args_t st = copied_form(&sk);
            assert_string_equal(NAME(CM_GEMM_TF32, 9, st, 1, NULL), "mma:64x64");
            a1 = (cm__gemm_choice_t){-1, -1};
            assert_true(ALIGN1(CM_GEMM_TF32, 9, 132, &sk, 1, &a1));
            assert_int_equal(a1.config, CM__MMA_64x64);
        }
        {
            /* a copied form on the Hopper kernel split over K (rule 2's long and thin C, 16
             * tiles of 128 x 256): the 128 x 128 tiles' align1 form instead, split into parts
             * of at least 128 of K (16 parts: about one per multiprocessor) */
            cm__gemm_args_t lt = odd;
            lt.n = 4096;
            a1 = (cm__gemm_choice_t){-1, -1};
            assert_true(ALIGN1(CM_GEMM_TF32, 9, 132, &lt, 1, &a1));
            assert_int_equal(a1.kernel, CM__GEMM_KERNEL_MMA);
            assert_int_equal(a1.config, CM__MMA_128x128);
            assert_int_equal(cm__gemm_splitk_parts(&lt, a1, CM_GEMM_TF32, 132, 0), 4);
            a1 = (cm__gemm_choice_t){CM__GEMM_KERNEL_MMA, CM__MMA_128x128};
        }
        {
            /* a copied form on the Hopper kernel over at most a quarter of the multiprocessors
             * (column-major "TN" 64 x 3001 x 2001: 24 tiles of 128 x 256) that its split's
             * parts of CM__GEMM_SM90_LONG_K leave whole: the 128 x 128 tiles' align1 form too,
             * in 5 parts; over more tiles (64 x 4225: 34) the copy */
            cm__gemm_args_t tn = args(3001, 64, 2001, 1, 1, CM__GEMM_F32, 2001);
            tn.ldb = 2001;
            const cm__gemm_args_t st = copied_form(&tn);
            assert_string_equal(NAME(CM_GEMM_TF32, 9, st, 1, NULL), "sm90");
            assert_int_equal(cm__gemm_splitk_parts(&st, (cm__gemm_choice_t){CM__GEMM_KERNEL_SM90,
                                                                             0},
                                                   CM_GEMM_TF32, 132, 0),
                             1);
            cm__gemm_choice_t t1 = {-1, -1};
            assert_int_equal(realign_of(CM_GEMM_TF32, 9, 132, &tn, 1, &t1), CM__REALIGN_ALIGN1);
            assert_int_equal(t1.kernel, CM__GEMM_KERNEL_MMA);
            assert_int_equal(t1.config, CM__MMA_128x128);
            assert_int_equal(cm__gemm_splitk_parts(&tn, t1, CM_GEMM_TF32, 132, 0), 5);
            tn.m = 128 * 33; /* 33 tiles: 4 x 33 = 132 */
            assert_int_equal(realign_of(CM_GEMM_TF32, 9, 132, &tn, 1, &t1), CM__REALIGN_ALIGN1);
            tn.m = 128 * 33 + 1; /* 34 tiles */
            assert_int_equal(realign_of(CM_GEMM_TF32, 9, 132, &tn, 1, &t1), CM__REALIGN_COPY);
            tn.m = 3001;
            /* under K = CM__GEMM_SM90_LONG_K (gemm_api.c) the copied form is on mma:64x64:
             * those tiles' align1 form */
            tn.k = tn.lda = tn.ldb = 1023;
            assert_int_equal(realign_of(CM_GEMM_TF32, 9, 132, &tn, 1, &t1), CM__REALIGN_ALIGN1);
            assert_int_equal(t1.config, CM__MMA_64x64);
        }
        {
            /* the same tiles on operands with 16-byte rows: TF32 on mma.sync takes parts of at
             * least 128 of K in either form, 16 too; BF16 there keeps parts of 256 (11) */
            cm__gemm_args_t al = odd;
            al.lda = al.ldb = 3004;
            assert_int_equal(cm__gemm_splitk_parts(&al, a1, CM_GEMM_TF32, 132, 0), 16);
            al.in_type = CM__GEMM_BF16;
            al.lda = al.ldb = 3008; /* 16-byte rows of bf16 */
            assert_int_equal(cm__gemm_splitk_parts(&al, a1, CM_GEMM_BF16, 132, 0), 11);
        }
        assert_false(ALIGN1(CM_GEMM_BF16, 9, 132, &oddbf, 1, &a1));
        assert_false(ALIGN1(CM_GEMM_BF16_OUT_BF16, 8, 108, &oddbf, 0, &a1));
        assert_false(ALIGN1(CM_GEMM_FP32, 9, 132, &odd, 1, &a1));
        assert_false(ALIGN1(CM_GEMM_FP32_3XTF32, 9, 132, &odd, 1, &a1));
        /* forced mma.sync tiles on the misaligned TF32 product: the align1 form where on,
         * else (and for BF16, and for a tile without the form) the FFMA stand-in */
        assert_string_equal(NAME(CM_GEMM_TF32, 9, odd, 1, "mma:64x64"), "mma:64x64");
        assert_string_equal(NAME(CM_GEMM_TF32, 8, odd, 0, "mma:128x128"), "mma:128x128");
        assert_string_equal(NAME(CM_GEMM_BF16, 9, oddbf, 1, "mma:64x64"), "ffma:64x64x16");
        if (cm__gemm_mma_built(CM__MMA_128x64))
            assert_string_equal(NAME(CM_GEMM_TF32, 8, odd, 0, "mma:128x64"), "ffma:128x128x8");
        cm__gemm_align1_set_for_tests(0);
        assert_string_equal(NAME(CM_GEMM_TF32, 9, odd, 1, "mma:64x64"), "ffma:64x64x16");
        cm__gemm_align1_set_for_tests(1);
        cm__gemm_args_t bytes_off = odd; /* a base 2 bytes off a float: no 4-byte copies */
        bytes_off.a = (const void *)(uintptr_t)258;
        assert_false(ALIGN1(CM_GEMM_TF32, 9, 132, &bytes_off, 1, &a1));
        assert_string_equal(NAME(CM_GEMM_TF32, 9, bytes_off, 1, "mma:64x64"), "ffma:64x64x16");
        {
            /* under the flop floor (100 x 300 x 2001: 120 Mflop; A K-contiguous in rows of
             * 2001, B N-contiguous in rows of 300; demoted to FFMA) a TF32 K of at least
             * CM__GEMM_REALIGN_A1_MIN_K takes the align1 form (the copied form's tiles,
             * mma.sync), a shorter K nothing; never the copy there */
            cm__gemm_args_t lo = args(100, 300, 2001, 1, 0, CM__GEMM_F32, 2001);
            lo.ldb = 300;
            assert_true(2.0 * 100 * 300 * 2001 < CM__GEMM_REALIGN_MIN_FLOPS);
            assert_int_equal(cm__gemm_select(CM_GEMM_TF32, 9, 0, 132, &lo, 1, NULL).kernel,
                             CM__GEMM_KERNEL_FFMA);
            a1 = (cm__gemm_choice_t){-1, -1};
            assert_true(ALIGN1(CM_GEMM_TF32, 9, 132, &lo, 1, &a1));
            assert_int_equal(a1.kernel, CM__GEMM_KERNEL_MMA);
            assert_true(ALIGN1(CM_GEMM_TF32, 8, 108, &lo, 0, &a1));
            cm__gemm_args_t lo_k = lo; /* K under the bound */
            lo_k.k = lo_k.lda = lo_k.ldb = CM__GEMM_REALIGN_A1_MIN_K - 1;
            assert_int_equal(realign_of(CM_GEMM_TF32, 9, 132, &lo_k, 1, &a1), CM__REALIGN_NONE);
            cm__gemm_align1_set_for_tests(0); /* the form off: below the floor, no copy */
            assert_int_equal(realign_of(CM_GEMM_TF32, 9, 132, &lo, 1, &a1), CM__REALIGN_NONE);
            cm__gemm_align1_set_for_tests(1);
        }
        /* over shapes of every class, both operands misaligned, every orientation, H200 and
         * A100 facts: the form is taken exactly where the copied form runs mma.sync tiles of
         * 128 x 128 or 64 x 64 (those tiles) or the Hopper kernel split over K (128 x 128), and
         * both cases occur (else the copy stays: the form off, a BF16 product or a base off
         * whole floats, above) */
        {
            static const int shp[][3] = {{127, 1000, 3001}, {3001, 127, 1000}, {4096, 4096, 4097},
                                         {1000, 1000, 1001}, {64, 4096, 4095}, {3001, 1000, 65},
                                         {7, 4096, 4097}, {512, 512, 511}, {2047, 129, 2047},
                                         {3001, 3001, 3001}};
            int taken[2] = {0, 0}, from_sm90 = 0;
            for (size_t i = 0; i < sizeof shp / sizeof shp[0]; ++i)
                for (int o = 0; o < 4; ++o)
                    for (int maj = 8; maj <= 9; ++maj) {
                        const int sms = maj == 9 ? 132 : 108, h = maj == 9;
                        cm__gemm_args_t q = args(shp[i][0], shp[i][1], shp[i][2], o & 1, o >> 1,
                                                 CM__GEMM_F32, 1);
                        q.lda = (o & 1 ? q.k : q.m) | 1; /* odd: no 16-byte rows */
                        q.ldb = (o >> 1 ? q.k : q.n) | 1;
                        const cm__gemm_choice_t ch =
                            cm__gemm_select(CM_GEMM_TF32, maj, 0, sms, &q, h, NULL);
                        if (!cm__gemm_realign_wanted(CM_GEMM_TF32, maj, 0, sms, &q, ch, h, NULL))
                            continue;
                        const cm__gemm_args_t st = copied_form(&q); /* both staged */
                        const cm__gemm_choice_t sc =
                            cm__gemm_select(CM_GEMM_TF32, maj, 0, sms, &st, h, NULL);
                        const int on_tiles = sc.kernel == CM__GEMM_KERNEL_MMA &&
                                             (sc.config == CM__MMA_128x128 ||
                                              sc.config == CM__MMA_64x64);
                        const int split_sm90 =
                            sc.kernel == CM__GEMM_KERNEL_SM90 &&
                            cm__gemm_splitk_parts(&st, sc, CM_GEMM_TF32, sms, 0) > 1;
                        const int want = on_tiles || split_sm90;
                        cm__gemm_choice_t got = {-1, -1};
                        if (ALIGN1(CM_GEMM_TF32, maj, sms, &q, h, &got) !=
                            want)
                            fail_msg("%dx%dx%d orientation %d sm_%d0: align1 %s, the copied form "
                                     "runs %s", q.m, q.n, q.k, o, maj, want ? "not taken" : "taken",
                                     cm__gemm_choice_name(sc));
                        if (want) {
                            assert_int_equal(got.kernel, CM__GEMM_KERNEL_MMA);
                            /* sm_90's copied form on mma:64x64 where rule 1 at any C would
                             * split the Hopper kernel: 128 x 128 (127 x 1000 x 3001 above) */
                            const int tiny_to_128 = h && on_tiles &&
                                                    sc.config == CM__MMA_64x64 &&
                                                    got.config == CM__MMA_128x128;
                            if (!tiny_to_128)
                                assert_int_equal(got.config,
                                                 on_tiles ? sc.config : CM__MMA_128x128);
                        }
                        taken[maj - 8] += want;
                        from_sm90 += split_sm90;
                    }
            assert_true(taken[0] > 0 && taken[1] > 0);
            assert_true(from_sm90 > 0);
        }
        cm__gemm_align1_set_for_tests(-1);
#undef ALIGN1
    }

    /* Hopper FP32: the 64 x 64 and 32 x 64 FFMA tiles take their q3 forms only where their
     * plan splits K and K is at least CM__FFMA_Q3_MIN_K; other archs keep the plain tiles */
    {
        cm__gemm_args_t s1 = args(1000, 127, 3001, 0, 0, CM__GEMM_F32, 3001);
        s1.lda = 3001, s1.ldb = 127, s1.ldc = 127;
        assert_true(ffma_parts(&s1, CM__FFMA_64x64x16) > 1);
        assert_string_equal(NAME(CM_GEMM_FP32, 9, s1, 1, NULL), "ffma:64x64x16q3");
        assert_string_equal(NAME(CM_GEMM_FP32, 8, s1, 1, NULL), "ffma:32x64x16");
        assert_string_equal(NAME(CM_GEMM_FP32, 9, s1, 1, "ffma:64x64x16"), "ffma:64x64x16");
        cm__gemm_args_t s2 = args(64, 64, 4096, 1, 1, CM__GEMM_F32, 4096);
        s2.ldc = 64;
        assert_string_equal(NAME(CM_GEMM_FP32, 9, s2, 1, NULL), "ffma:32x64x16q3");
        s2.k = CM__FFMA_Q3_MIN_K - 1; /* split, but K under the floor */
        assert_true(ffma_parts(&s2, CM__FFMA_32x64x16) > 1);
        assert_string_equal(NAME(CM_GEMM_FP32, 9, s2, 1, NULL), "ffma:32x64x16");
        /* K whole (C fills the GPU): the plain tiles */
        cm__gemm_args_t s3 = args(1000, 1000, 1000, 1, 1, CM__GEMM_F32, 1000);
        s3.ldb = 1000, s3.ldc = 1000;
        assert_int_equal(ffma_parts(&s3, CM__FFMA_64x64x16), 1);
        assert_string_equal(NAME(CM_GEMM_FP32, 9, s3, 1, NULL), "ffma:64x64x16");
    }

    /* Hopper FP32, C of at most 64 rows beside many columns from K = 32
     * (cm__gemm_ffma_narrow_config): up to 32 rows the 32 x 64 tiles in place of the table's
     * 64 x 64 or 128 x 128 ones (or the short-K rule's 64 x 64), up to 64 rows (or columns)
     * the 64 x 64 ones in place of 128 x 128; under K = 32 the 32 x 64 ones at a short side up
     * to 32 and the 64 x 64 ones above it up to 64; either layout; not a batch, not before
     * sm_90 */
    {
        static const struct {
            int m, n, k;
            const char *fp32;
        } narrow[] = {
            {32, 12000, 900, "ffma:32x64x16"},   {32, 20000, 900, "ffma:32x64x16"},
            {24, 16384, 1024, "ffma:32x64x16"},  {48, 20000, 1024, "ffma:64x64x16"},
            {64, 30000, 512, "ffma:64x64x16"},   {20000, 32, 900, "ffma:64x64x16"},
            {30000, 64, 600, "ffma:64x64x16"},   {32, 20000, 256, "ffma:32x64x16"},
            {32, 20000, 128, "ffma:32x64x16"},   {32, 12000, 384, "ffma:32x64x16"},
            {64, 30000, 256, "ffma:64x64x16"},   {20000, 32, 256, "ffma:64x64x16"},
            {32, 40000, 32, "ffma:32x64x16"},    {32, 40000, 31, "ffma:32x64x16"},
            {65, 30000, 512, "ffma:128x128x16q3"}, {30000, 65, 512, "ffma:128x128x16q3"},
            /* K under 32: the 32 x 64 tiles at a short side up to 32, 64 x 64 up to 64 */
            {64, 20000, 24, "ffma:64x64x16"},    {20000, 64, 24, "ffma:64x64x16"},
            {24, 30000, 8, "ffma:32x64x16"},     {40000, 32, 16, "ffma:32x64x16"},
            {32, 40000, 16, "ffma:32x64x16"},    {16, 50000, 12, "ffma:32x64x16"},
            {33, 30000, 16, "ffma:64x64x16"},    {30000, 33, 16, "ffma:64x64x16"},
            {48, 30000, 1, "ffma:64x64x16"},     {25000, 48, 20, "ffma:64x64x16"},
            {56, 30000, 31, "ffma:64x64x16"},    {65, 30000, 16, "ffma:128x128x16q3"},
            {30000, 65, 16, "ffma:128x128x16q3"},
        };
        for (size_t i = 0; i < sizeof narrow / sizeof narrow[0]; ++i) {
            for (int lay = 0; lay < 2; ++lay) {
                cm__gemm_args_t w = args(narrow[i].m, narrow[i].n, narrow[i].k, 1, lay,
                                         CM__GEMM_F32, narrow[i].k);
                w.ldb = lay ? narrow[i].k : narrow[i].n;
                const char *got = NAME(CM_GEMM_FP32, 9, w, 1, NULL);
                if (strcmp(got, narrow[i].fp32) != 0)
                    fail_msg("FP32 %d x %d x %d (B %s): %s, expected %s", narrow[i].m,
                             narrow[i].n, narrow[i].k, lay ? "K-major" : "MN-major", got,
                             narrow[i].fp32);
            }
        }
        cm__gemm_args_t b = args(32, 20000, 900, 1, 1, CM__GEMM_F32, 900);
        b.ldb = 900;
        assert_string_equal(NAME(CM_GEMM_FP32, 8, b, 1, NULL), "ffma:128x128x8");
        assert_string_equal(NAME(CM_GEMM_FP32, 9, b, 1, "ffma:128x128x16q3"),
                            "ffma:128x128x16q3"); /* forced */
        b.batch = 2;
        b.stride_a = 32 * 900;
        b.stride_b = 20000 * 900;
        b.stride_c = 32 * 20000;
        assert_string_equal(NAME(CM_GEMM_FP32, 9, b, 1, NULL), "ffma:128x128x16q3");
    }

    /* the tiny class with a long K on Hopper (TF32 / BF16, both operands K-contiguous with
     * 16-byte rows, one product): the Hopper kernel where its split (sms / (2 tiles) parts)
     * fills 3/4 of the SMs with parts of at least 1024 of K; else the table's mma:64x64 */
    {
        cm__gemm_args_t lk = args(64, 4096, 4096, 1, 1, CM__GEMM_F32, 4096);
        lk.ldb = 4096;
        assert_string_equal(NAME(CM_GEMM_TF32, 9, lk, 1, NULL), "sm90");
        assert_string_equal(NAME(CM_GEMM_TF32, 9, lk, 0, NULL), "mma:64x64"); /* not carried */
        assert_string_equal(NAME(CM_GEMM_TF32, 8, lk, 0, NULL), "mma:64x64");
        assert_string_equal(NAME(CM_GEMM_TF32, 9, lk, 1, "mma:64x64"), "mma:64x64");
        /* FP32: the 64 x 64 FFMA tiles, whose split fills their slots (cm__gemm_ffma_64_fills),
         * in their pipelined form since they split a long K (CM__FFMA_Q3_MIN_K) */
        assert_string_equal(NAME(CM_GEMM_FP32, 9, lk, 1, NULL), "ffma:64x64x16q3");
        assert_string_equal(NAME(CM_GEMM_FP32, 8, lk, 1, NULL), "ffma:32x64x16"); /* Hopper only */
        assert_string_equal(NAME(CM_GEMM_FP32, 9, lk, 1, "ffma:32x64x16"), "ffma:32x64x16");
        {
            /* 4 parts of 64 tiles fill 256 of 264 slots; K = 1000 (no split of 64 tiles): 64
             * blocks; 127 x 1000 x 3001: 32 tiles in 8 parts; 127^3: 4 tiles; a batch: never */
            cm__gemm_args_t f = lk;
            f.k = f.lda = f.ldb = 1000;
            assert_string_equal(NAME(CM_GEMM_FP32, 9, f, 1, NULL), "ffma:32x64x16");
            f = args(127, 1000, 3001, 1, 1, CM__GEMM_F32, 3001);
            f.ldb = 3001;
            assert_string_equal(NAME(CM_GEMM_FP32, 9, f, 1, NULL), "ffma:64x64x16q3"); /* split */
            f.m = f.n = f.k = 127;
            assert_string_equal(NAME(CM_GEMM_FP32, 9, f, 1, NULL), "ffma:32x64x16");
            f = lk; /* a side under 64 (63 rows; its 64 x 64 tiles would run part empty) */
            f.m = 63; /* its split K of 4096: the pipelined form */
            assert_string_equal(NAME(CM_GEMM_FP32, 9, f, 1, NULL), "ffma:32x64x16q3");
            f = lk;
            f.batch = 2;
            f.stride_a = f.stride_b = 4096 * 4096;
            f.stride_c = 64 * 4096;
            assert_string_equal(NAME(CM_GEMM_FP32, 9, f, 1, NULL), "ffma:32x64x16");
            /* 3xTF32 off its Hopper kernel: FP32's choice (cm__gemm_run_precision) */
            assert_string_equal(NAME(CM_GEMM_FP32_3XTF32, 9, lk, 1, NULL),
                                NAME(CM_GEMM_FP32, 9, lk, 1, NULL));
            assert_string_equal(NAME(CM_GEMM_FP32_3XTF32, 9, lk, 1, NULL), "ffma:64x64x16q3");
        }
        /* the small class (fewer 128 x 128 tiles than SMs, not fewer 64 x 64 ones): the
         * pipelined 128 x 128 tiles where their split gives 3/4 of the SMs a block from K = 512
         * (cm__gemm_ffma_128_fills); else the table's 64 x 64 */
        {
            cm__gemm_args_t s = args(768, 768, 4096, 1, 1, CM__GEMM_F32, 4096);
            s.ldb = 4096;
            assert_int_equal(cm__gemm_shape_class(768, 768, 4096, 132), CM__GEMM_SHAPE_SMALL);
            assert_string_equal(NAME(CM_GEMM_FP32, 9, s, 1, NULL), "ffma:128x128x16q3");
            s.a_kmajor = s.b_kmajor = 0; /* NN */
            s.lda = s.ldb = 768;
            assert_string_equal(NAME(CM_GEMM_FP32, 9, s, 1, NULL), "ffma:128x128x16q3");
            assert_string_equal(NAME(CM_GEMM_FP32, 8, s, 1, NULL), "ffma:64x64x16"); /* Hopper */
            assert_string_equal(NAME(CM_GEMM_FP32, 9, s, 1, "ffma:64x64x16"), "ffma:64x64x16");
            /* 3xTF32 without the Hopper kernel: FP32's choice */
            assert_string_equal(NAME(CM_GEMM_FP32_3XTF32, 9, s, 0, NULL), "ffma:128x128x16q3");
            /* 512 x 4096 x 512: 128 tiles whole, 128 of 132 SMs a block */
            cm__gemm_args_t w = args(512, 4096, 512, 1, 1, CM__GEMM_F32, 512);
            w.ldb = 512;
            assert_string_equal(NAME(CM_GEMM_FP32, 9, w, 1, NULL), "ffma:128x128x16q3");
            w.k = w.lda = w.ldb = 511; /* under K = 512 */
            assert_string_equal(NAME(CM_GEMM_FP32, 9, w, 1, NULL), "ffma:64x64x16");
            /* the parts test_gpu_gemm's test_ffma_small_class expects on the H200 */
            {
                const cm__gemm_choice_t q3 = {CM__GEMM_KERNEL_FFMA, CM__FFMA_128x128x16q3};
                const cm__gemm_choice_t f64 = {CM__GEMM_KERNEL_FFMA, CM__FFMA_64x64x16};
                cm__gemm_args_t e = args(768, 768, 4096, 0, 0, CM__GEMM_F32, 768);
                e.ldb = 768;
                assert_int_equal(cm__gemm_splitk_parts(&e, q3, CM_GEMM_FP32, 132, 0), 7);
                e = args(700, 900, 3000, 0, 0, CM__GEMM_F32, 3000);
                e.ldb = 900;
                assert_string_equal(NAME(CM_GEMM_FP32, 9, e, 1, NULL), "ffma:128x128x16q3");
                assert_int_equal(cm__gemm_splitk_parts(&e, q3, CM_GEMM_FP32, 132, 0), 5);
                e = args(1024, 1024, 1024, 0, 0, CM__GEMM_F32, 1024);
                e.ldb = 1024;
                assert_int_equal(cm__gemm_splitk_parts(&e, f64, CM_GEMM_FP32, 132, 0), 2);
                assert_int_equal(cm__gemm_splitk_parts(&e, q3, CM_GEMM_FP32, 132, 0), 4);
            }
            /* 1024^3: 64 tiles in 4 parts of 256; 1024^2 x 1600: in 4 of 400; 1024^2 x 1023:
             * unsplit (split-K from K = 1024 there), 64 blocks, too few */
            cm__gemm_args_t q = args(1024, 1024, 1024, 1, 1, CM__GEMM_F32, 1024);
            q.ldb = 1024;
            assert_string_equal(NAME(CM_GEMM_FP32, 9, q, 1, NULL), "ffma:128x128x16q3");
            q.k = q.lda = q.ldb = 1600;
            assert_string_equal(NAME(CM_GEMM_FP32, 9, q, 1, NULL), "ffma:128x128x16q3");
            q.k = q.lda = q.ldb = 1023;
            assert_string_equal(NAME(CM_GEMM_FP32, 9, q, 1, NULL), "ffma:64x64x16");
            /* a short K on C of at least 132 tiles of 128 x 128: those tiles only where they
             * fill a wave (264 slots) and 7/8 of the waves' slots, else 64 x 64 */
            {
                static const struct {
                    int m, n, k;
                    const char *tile;
                } sk[] = {{3001, 1000, 64, "ffma:64x64x16"},   /* 192 tiles: 0.73 wave */
                          {1500, 3000, 64, "ffma:64x64x16"},   /* 288: 1.09 waves */
                          {2000, 2000, 64, "ffma:64x64x16"},   /* 256: 0.97 */
                          {3001, 3001, 100, "ffma:64x64x16"},  /* 576: 2.18 */
                          {2500, 2500, 64, "ffma:64x64x16"},   /* 400: 1.52 */
                          {8192, 8192, 128, "ffma:128x128x16q3"}, /* 4096: 0.97 of 16 */
                          {1000, 3001, 127, "ffma:64x64x16"},  /* 192 */
                          {4096, 2048, 64, "ffma:128x128x16q3"}, /* 512: 1.94 */
                          {4096, 4096, 64, "ffma:128x128x16q3"}, /* 1024: 3.88 */
                          {4224, 2048, 64, "ffma:128x128x16q3"}, /* 528: 2 whole */
                          {3001, 1000, 16, "ffma:128x128x16q3"}, /* K under 32 */
                          {3001, 1000, 129, "ffma:128x128x16q3"}}; /* K over 128 */
                for (size_t i = 0; i < sizeof sk / sizeof sk[0]; ++i) {
                    cm__gemm_args_t e = args(sk[i].m, sk[i].n, sk[i].k, 1, 1, CM__GEMM_F32,
                                             sk[i].k);
                    e.ldb = sk[i].k;
                    if (strcmp(NAME(CM_GEMM_FP32, 9, e, 1, NULL), sk[i].tile) != 0)
                        fail_msg("fp32 %dx%dx%d on the H200: %s, expected %s", sk[i].m, sk[i].n,
                                 sk[i].k, NAME(CM_GEMM_FP32, 9, e, 1, NULL), sk[i].tile);
                    /* TF32 and other archs are not this rule's */
                    if (strcmp(sk[i].tile, "ffma:64x64x16") == 0)
                        assert_string_not_equal(NAME(CM_GEMM_FP32, 8, e, 0, NULL),
                                                "ffma:64x64x16");
                }
            }
            /* 1000^3: 64 tiles, K = 1000 unsplit on them: 64 blocks, too few */
            cm__gemm_args_t t = args(1000, 1000, 1000, 1, 1, CM__GEMM_F32, 1000);
            t.ldb = 1000;
            assert_string_equal(NAME(CM_GEMM_FP32, 9, t, 1, NULL), "ffma:64x64x16");
            /* 768^2 x 4096 on 120 SMs: still the small class, 36 tiles x 7 parts */
            assert_string_equal(
                cm__gemm_choice_name(cm__gemm_select(CM_GEMM_FP32, 9, 0, 120, &s, 1, NULL)),
                "ffma:128x128x16q3");
            /* a batch of two 768^2 x 4096: never split, 72 tiles under 3/4 of 132 */
            s.batch = 2;
            s.stride_a = s.stride_b = 768 * 4096;
            s.stride_c = 768 * 768;
            assert_string_equal(NAME(CM_GEMM_FP32, 9, s, 1, NULL), "ffma:64x64x16");
        }
        cm__gemm_args_t lkb = lk;
        lkb.in_type = CM__GEMM_BF16;
        assert_string_equal(NAME(CM_GEMM_BF16, 9, lkb, 1, NULL), "sm90");
        assert_string_equal(NAME(CM_GEMM_BF16_OUT_BF16, 9, lkb, 1, NULL), "sm90");
        /* bf16 and TF32 apart: each shape (cm_gemm's m x n x k, both operands K-contiguous,
         * packed, K a multiple of 8: 16-byte rows in either type) with the name each gets */
        static const struct {
            int m, n, k;
            const char *bf16, *tf32;
        } tn[] = {
            /* bf16: 4 parts of 1022, too short for the first rule; the long-and-thin one */
            {64, 4096, 4088, "sm90", "sm90"},
            /* 127 x 1000 (4 tiles: 16 parts, 128 blocks) from K = 16384 for bf16; TF32 from K =
             * 1024 only with a side of at least 2048 */
            {127, 1000, 16384, "sm90", "mma:64x64"},
            {127, 1000, 3000, "mma:64x64", "mma:64x64"},
            {64, 64, 65536, "mma:64x64", "mma:64x64"}, /* bf16: 1 tile, 64 blocks, under 3/4 */
            /* 4096 x 64 (the sweep's column-major 64 x 4096 x 4096): 32 tiles, 2 parts, 128
             * blocks, from K = 2048 for bf16 */
            {4096, 64, 2048, "sm90", "sm90"},
            /* 1 part of K: whole, by the long-and-thin rule (K under 2048); 1023 none */
            {4096, 64, 2040, "sm90", "sm90"},
            {4096, 64, 1016, "mma:64x64", "mma:64x64"},
            {2040, 64, 2040, "mma:64x64", "mma:64x64"}, /* no side of 2048 */
            {4352, 64, 8192, "mma:64x64", "mma:64x64"}, /* 34 tiles: no split */
            {63, 4096, 8192, "sm90", "sm90"},
            {31, 4096, 8192, "mma:64x64", "mma:64x64"}, /* bf16 7 x 4096 x 4096 lost; TF32
                                                          * from K = 1024 needs 32 */
            /* TF32 with a small side of at most CM__GEMM_SKINNY_TC_TF32: the skinny kernel */
            {7, 4096, 4096, "mma:64x64", "skinny"},
            {12, 4096, 4096, "mma:64x64", "mma:64x64"},
            {32, 4096, 4096, "sm90", "sm90"},
            {24, 4096, 1000, "mma:64x64", "sm90"}, /* TF32 K under 1024: whole, 32 tiles */
            {24, 4096, 1024, "mma:64x64", "mma:64x64"},
            {127, 3001, 1000, "mma:64x64", "sm90"},
            {64, 4096, 1000, "mma:64x64", "sm90"},
            {64, 4096, 504, "mma:64x64", "mma:64x64"}, /* TF32 from K = 512 */
            {4096, 63, 8192, "mma:64x64", "mma:64x64"}, /* N under 64: a 256-column tile */
            {4096, 7, 4096, "mma:64x64", "skinny"},
            {4096, 12, 4096, "mma:64x64", "mma:64x64"},
            /* bf16 with a small side of at most CM__GEMM_SKINNY_TC_BF16: the skinny kernel */
            {4, 4096, 4096, "skinny", "skinny"},
            {4096, 3, 4096, "skinny", "skinny"},
        };
        for (size_t i = 0; i < sizeof tn / sizeof tn[0]; ++i) {
            cm__gemm_args_t t = args(tn[i].m, tn[i].n, tn[i].k, 1, 1, CM__GEMM_F32, tn[i].k);
            t.ldb = tn[i].k;
            const char *tf = NAME(CM_GEMM_TF32, 9, t, 1, NULL);
            if (strcmp(tf, tn[i].tf32) != 0)
                fail_msg("TF32 %d x %d x %d: %s, expected %s", tn[i].m, tn[i].n, tn[i].k, tf,
                         tn[i].tf32);
            assert_string_not_equal(NAME(CM_GEMM_TF32, 9, t, 0, NULL), "sm90"); /* not built */
            t.in_type = CM__GEMM_BF16;
            const char *bf = NAME(CM_GEMM_BF16, 9, t, 1, NULL);
            if (strcmp(bf, tn[i].bf16) != 0)
                fail_msg("bf16 %d x %d x %d: %s, expected %s", tn[i].m, tn[i].n, tn[i].k, bf,
                         tn[i].bf16);
        }
        /* bf16 skinny with a small side of CM__GEMM_SKINNY_SM90_BF16 .. 16 and K from
         * CM__GEMM_SKINNY_SM90_BF16_K that the tensor-core tiles do not take (an odd K: rows
         * off 16 bytes): the wgmma kernel after its pre-pass; a smaller side, a shorter K, a
         * batch, sm_80, a build without the Hopper kernel or a forced skinny: skinny */
        {
            const int lo = CM__GEMM_SKINNY_SM90_BF16, kk = CM__GEMM_SKINNY_SM90_BF16_K | 1;
            cm__gemm_args_t t = args(16, 3001, 2001, 1, 1, CM__GEMM_BF16, 2001);
            t.ldb = 2001;
            assert_string_equal(NAME(CM_GEMM_BF16, 9, t, 1, NULL), "sm90+pack");
            assert_string_equal(NAME(CM_GEMM_BF16_OUT_BF16, 9, t, 1, NULL), "sm90+pack");
            assert_string_equal(NAME(CM_GEMM_BF16, 9, t, 1, "skinny"), "skinny");
            assert_string_equal(NAME(CM_GEMM_BF16, 8, t, 1, NULL), "skinny");
            assert_string_equal(NAME(CM_GEMM_BF16, 9, t, 0, NULL), "skinny");
            t.m = lo;
            assert_string_equal(NAME(CM_GEMM_BF16, 9, t, 1, NULL), "sm90+pack");
            t.m = lo - 1;
            assert_string_equal(NAME(CM_GEMM_BF16, 9, t, 1, NULL), "skinny");
            t.m = 12;
            t.k = t.lda = t.ldb = kk;
            assert_string_equal(NAME(CM_GEMM_BF16, 9, t, 1, NULL), "sm90+pack");
            t.k = t.lda = t.ldb = kk - 2;
            assert_string_equal(NAME(CM_GEMM_BF16, 9, t, 1, NULL), "skinny");
            t.k = t.lda = t.ldb = 2001;
            t.batch = 2;
            assert_string_equal(NAME(CM_GEMM_BF16, 9, t, 1, NULL), "skinny");
            t.batch = 1; /* the long side on A, B's rows N-contiguous: the transposed-B form */
            t = args(3001, 16, 2001, 1, 0, CM__GEMM_BF16, 2001);
            t.ldb = 16;
            assert_string_equal(NAME(CM_GEMM_BF16, 9, t, 1, NULL), "sm90+bt");
            /* TF32 keeps skinny (mma:64x64 won only "NN" at 16 x 3001 x 2001) */
            t = args(16, 3001, 2001, 1, 1, CM__GEMM_F32, 2001);
            t.ldb = 2001;
            assert_string_equal(NAME(CM_GEMM_TF32, 9, t, 1, NULL), "skinny");
        }
        /* B N-contiguous (the sweep's column-major NN): the long-and-thin rule, bf16 through
         * the transposed-B form (its tiles over C), TF32 through the register-A form on C^T
         * (its tiles over C^T: 64 rows of C^T, 4 parts; 64 columns, 2 parts from K = 2048) */
        static const struct {
            int m, n, k;
            const char *bf16, *tf32;
            int bf16_parts, tf32_parts;
        } thin[] = {
            {4096, 64, 1024, "sm90+bt", "sm90+at", 1, 4},
            {4096, 64, 8192, "sm90+bt", "sm90+at", 2, 4},
            {64, 4096, 1024, "sm90+bt", "mma:64x64", 4, 1}, /* TF32 whole: no */
            {64, 4096, 2048, "sm90+bt", "sm90+at", 4, 2},
            {4096, 32, 4096, "mma:64x64", "sm90+at", 2, 4}, /* bf16: 32 columns */
            {32, 4096, 4096, "sm90+bt", "mma:64x64", 4, 2}, /* TF32: 32 columns of C^T */
            {2048, 128, 4096, "sm90+bt", "sm90+at", 4, 8},
            /* under 1024 of K: whole (cm__gemm_sm90_thin_whole); rule 3 wants 4096 rows of
             * C^T, here 64 */
            {4096, 64, 1016, "mma:64x64", "mma:64x64", 1, 1},
        };
        for (size_t i = 0; i < sizeof thin / sizeof thin[0]; ++i) {
            cm__gemm_args_t t =
                args(thin[i].m, thin[i].n, thin[i].k, 1, 0, CM__GEMM_F32, thin[i].k);
            t.ldb = thin[i].n;
            assert_string_equal(NAME(CM_GEMM_TF32, 9, t, 1, NULL), thin[i].tf32);
            const cm__gemm_choice_t at = {CM__GEMM_KERNEL_SM90, CM__GEMM_SM90_AT};
            assert_int_equal(cm__gemm_splitk_parts(&t, at, CM_GEMM_TF32, 132, 0),
                             thin[i].tf32_parts);
            t.in_type = CM__GEMM_BF16;
            assert_string_equal(NAME(CM_GEMM_BF16, 9, t, 1, NULL), thin[i].bf16);
            assert_string_equal(NAME(CM_GEMM_BF16_OUT_BF16, 9, t, 1, NULL), thin[i].bf16);
            const cm__gemm_choice_t bt = {CM__GEMM_KERNEL_SM90, CM__GEMM_SM90_BT};
            assert_int_equal(cm__gemm_splitk_parts(&t, bt, CM_GEMM_BF16, 132, 0),
                             thin[i].bf16_parts);
            /* not on sm_80, not without the Hopper kernel, not with A MN-major too, not in
             * rows off 16 bytes, not forced otherwise */
            assert_string_equal(NAME(CM_GEMM_BF16, 8, t, 1, NULL), "mma:64x64");
            assert_string_equal(NAME(CM_GEMM_BF16, 9, t, 0, NULL), "mma:64x64");
            assert_string_equal(NAME(CM_GEMM_BF16, 9, t, 1, "mma:64x64"), "mma:64x64");
            cm__gemm_args_t u = t;
            u.a_kmajor = 0;
            u.lda = u.m;
            assert_string_equal(NAME(CM_GEMM_BF16, 9, u, 1, NULL), "mma:64x64");
            u = t;
            u.ldb = u.n + 1; /* the tiles' own fallback for such rows */
            assert_int_not_equal(strncmp(NAME(CM_GEMM_BF16, 9, u, 1, NULL), "sm90", 4), 0);
            u.in_type = CM__GEMM_F32;
            assert_int_not_equal(strncmp(NAME(CM_GEMM_TF32, 9, u, 1, NULL), "sm90", 4), 0);
        }
        /* TF32, B MN-major, K 512 .. 1023, C^T's rows (n here) at least 4096 and its columns
         * at least 64: the register-A form on C^T with K whole (rule 3); 40 to 63 columns
         * only where its 128-row tiles number sms / 3 (44 of 132: above 5504 rows); 2048
         * rows, under 40 columns, K = 256 or K = 1024 (rule 2's, split) not by this rule */
        static const struct {
            int m, n, k;
            const char *tf32;
            int parts;
        } whole[] = {
            {64, 4096, 1000, "sm90+at", 1},  {64, 4096, 512, "sm90+at", 1},
            {64, 8192, 1000, "sm90+at", 1},  {32, 4096, 1000, "mma:64x64", 1},
            {48, 4096, 900, "mma:64x64", 1}, {32, 4096, 900, "mma:64x64", 1},
            {128, 4096, 1000, "sm90+at", 1}, {64, 2048, 1000, "mma:64x64", 1},
            {64, 4096, 256, "mma:64x64", 1}, {16, 4096, 1000, "mma:64x64", 1},
            {40, 6000, 700, "sm90+at", 1},   {32, 8192, 800, "mma:64x64", 1},
            {40, 5508, 700, "sm90+at", 1},   {40, 5504, 700, "mma:64x64", 1},
            {63, 5504, 900, "mma:64x64", 1}, {32, 7000, 600, "mma:64x64", 1},
            {48, 5600, 800, "sm90+at", 1},   {56, 6000, 1000, "sm90+at", 1},
            {39, 8192, 800, "mma:64x64", 1},
            /* past the tiny class (about 8700 rows) too: mma:64x64 under 64 columns
             * (cm__gemm_sm90_at_too_narrow) */
            {32, 12000, 900, "mma:64x64", 1}, {24, 20000, 700, "mma:64x64", 1},
            {48, 12000, 900, "mma:64x64", 1}, {40, 9000, 1000, "mma:64x64", 1},
        };
        for (size_t i = 0; i < sizeof whole / sizeof whole[0]; ++i) {
            cm__gemm_args_t w = tf32_nn_expect(whole[i].m, whole[i].n, whole[i].k, whole[i].tf32);
            const cm__gemm_choice_t at = {CM__GEMM_KERNEL_SM90, CM__GEMM_SM90_AT};
            assert_int_equal(cm__gemm_splitk_parts(&w, at, CM_GEMM_TF32, 132, 0),
                             whole[i].parts);
            /* "TN" (both K-contiguous), M the short side: the Hopper kernel whole from K =
             * 512 (rule 1 with cm__gemm_sm90_thin_whole; TF32 takes any M) */
            cm__gemm_args_t u = w;
            u.b_kmajor = 1;
            u.ldb = u.k;
            const cm__gemm_choice_t sm90 = {CM__GEMM_KERNEL_SM90, 0};
            assert_int_equal(cm__gemm_splitk_parts(&u, sm90, CM_GEMM_TF32, 132, 0), 1);
            if (u.m >= 32) /* 16 rows: the skinny kernel's */
                assert_string_equal(NAME(CM_GEMM_TF32, 9, u, 1, NULL),
                                    u.k >= 512 ? "sm90" : "mma:64x64");
            /* bf16 keeps its split (16 tiles of 128 x 256: 4 parts, at most K / 256) */
            u.in_type = CM__GEMM_BF16;
            if (u.k >= 512 && u.n == 4096)
                assert_true(cm__gemm_splitk_parts(&u, sm90, CM_GEMM_BF16, 132, 0) > 1);
        }
        cm__gemm_args_t t = lk; /* a batch */
        t.batch = 2;
        t.stride_a = t.stride_b = 4096 * 4096;
        assert_string_equal(NAME(CM_GEMM_TF32, 9, t, 1, NULL), "mma:64x64");
    }
    /* TF32 "NN" where the Hopper kernel's register-A form would run over a C one 64 x 64 tile
     * deep whose mma:64x64 tiles number more than half and at most two thirds of its resident
     * slots (133-176 on 132 multiprocessors, cm__gemm_splitk_tf32_row): mma:64x64 in
     * CM__SPLITK_TF32_ROW_PARTS parts where K takes the split; K under its floor (384), fewer or
     * more tiles, a C two tiles deep, a batch or both operands K-contiguous keep the Hopper
     * kernel */
    {
        static const struct {
            int m, n, k;
            const char *tf32;
        } band[] = {
            {40, 9000, 2048, "mma:64x64"},  {64, 8800, 900, "mma:64x64"},
            {40, 10200, 1500, "mma:64x64"}, {56, 9500, 1200, "mma:64x64"},
            {40, 11264, 2048, "mma:64x64"}, {40, 8452, 4096, "mma:64x64"},
            {62, 7000, 800, "sm90+at"},     {40, 8448, 2048, "sm90+at"},
            {40, 11268, 2048, "sm90+at"},   {40, 9000, 300, "sm90+at"},
            {65, 9000, 2048, "sm90+at"},
        };
        for (size_t i = 0; i < sizeof band / sizeof band[0]; ++i) {
            cm__gemm_args_t w = tf32_nn_expect(band[i].m, band[i].n, band[i].k, band[i].tf32);
            if (strcmp(band[i].tf32, "mma:64x64") == 0) {
                const cm__gemm_choice_t m64 = {CM__GEMM_KERNEL_MMA, CM__MMA_64x64};
                assert_int_equal(cm__gemm_splitk_parts(&w, m64, CM_GEMM_TF32, 132, 0), 3);
                assert_string_equal(NAME(CM_GEMM_TF32, 9, w, 1, "sm90+at"), "sm90+at");
                cm__gemm_args_t u = w; /* "TN": the Hopper kernel as it is */
                u.b_kmajor = 1;
                u.ldb = u.k;
                assert_string_equal(NAME(CM_GEMM_TF32, 9, u, 1, NULL), "sm90");
                u = w; /* a batch */
                u.batch = 2;
                u.stride_a = (int64_t)u.m * u.k;
                u.stride_b = (int64_t)u.n * u.k;
                u.stride_c = (int64_t)u.m * u.n;
                assert_string_not_equal(NAME(CM_GEMM_TF32, 9, u, 1, NULL), "mma:64x64");
            }
        }
    }

    {
        /* rule 4 (cm__gemm_sm90_bf16_narrow): BF16 over a C of 32-64 by at least 5000 with K
         * from 768 to under 1024, in the tiny class: the Hopper kernel whole in place of
         * mma:64x64 split, B MN-major by the transposed-B form ("NN"), both K-contiguous as
         * they are ("TN"); either output type; outside its bounds mma:64x64 stays */
        static const struct {
            int m, n, k;
            int hopper;
        } bn[] = {
            {32, 8192, 900, 1},  {32, 6000, 900, 1},  {48, 8192, 900, 1}, {40, 7000, 800, 1},
            {32, 8192, 768, 1},  {48, 6000, 1023, 1}, {32, 5000, 896, 1}, {56, 8192, 896, 1},
            {49, 8192, 900, 1},  {32, 4999, 900, 0},  {57, 8192, 900, 1}, {32, 8192, 767, 0},
            {64, 8192, 900, 1},  {32, 4096, 900, 0},  {31, 8192, 900, 0}, {40, 5000, 700, 0},
            {60, 6000, 896, 1},  {64, 8192, 896, 1},  {64, 4999, 900, 0},
        };
        for (size_t i = 0; i < sizeof bn / sizeof bn[0]; ++i) {
            for (int turned = 0; turned < 2; ++turned) {
                const int m = turned ? bn[i].n : bn[i].m, n = turned ? bn[i].m : bn[i].n;
                for (int lay = 0; lay < 2; ++lay) {
                    /* leading dimensions on 16 bytes (the realignment's copied form) */
                    const int ka = (bn[i].k + 7) / 8 * 8, na = (n + 7) / 8 * 8;
                    cm__gemm_args_t w = args(m, n, bn[i].k, 1, lay, CM__GEMM_BF16, ka);
                    w.ldb = lay ? ka : na;
                    const char *want = !bn[i].hopper ? "mma:64x64" : lay ? "sm90" : "sm90+bt";
                    const char *got = NAME(CM_GEMM_BF16, 9, w, 1, NULL);
                    const char *got_o = NAME(CM_GEMM_BF16_OUT_BF16, 9, w, 1, NULL);
                    if (strcmp(got, want) != 0 || strcmp(got_o, want) != 0)
                        fail_msg("BF16 %d x %d x %d (B %s): %s / %s, expected %s", m, n,
                                 bn[i].k, lay ? "K-major" : "MN-major", got, got_o, want);
                    if (bn[i].hopper) {
                        const cm__gemm_choice_t h = {CM__GEMM_KERNEL_SM90,
                                                     lay ? 0 : CM__GEMM_SM90_BT};
                        assert_int_equal(cm__gemm_splitk_parts(&w, h, CM_GEMM_BF16, 132, 0), 1);
                        /* sm_80 and a forced kernel are untouched */
                        assert_string_equal(NAME(CM_GEMM_BF16, 8, w, 1, NULL), "mma:64x64");
                        assert_string_equal(NAME(CM_GEMM_BF16, 9, w, 1, "mma:64x64"),
                                            "mma:64x64");
                    }
                }
            }
        }
    }

    /* "sm90+bt": a bf16 B that is MN-major with 16-byte rows read as it is by the transposed-B
     * kernel (forced; by default once CM__GEMM_SM90_BT_DISPATCH is 1), every other case as
     * "sm90+pack" or, TN and aligned, "sm90" */
    cm__gemm_args_t nnbf = args(4096, 4096, 4096, 1, 0, CM__GEMM_BF16, 4096);
    cm__gemm_choice_t btc = {-1, -1};
    assert_true(cm__gemm_parse_name("sm90+bt", &btc));
    assert_int_equal(btc.kernel, CM__GEMM_KERNEL_SM90);
    assert_int_equal(btc.config, CM__GEMM_SM90_BT);
    assert_string_equal(cm__gemm_choice_name(btc), "sm90+bt");
    assert_string_equal(NAME(CM_GEMM_BF16, 9, nnbf, 1, "sm90+bt"), "sm90+bt");
    assert_string_equal(NAME(CM_GEMM_BF16_OUT_BF16, 9, nnbf, 1, "sm90+bt"), "sm90+bt");
    assert_string_equal(NAME(CM_GEMM_BF16, 9, nnbf, 1, NULL),
                        CM__GEMM_SM90_BT_DISPATCH ? "sm90+bt" : "sm90+pack");
    nnbf.a_kmajor = 0; /* A packed, B still as it is */
    assert_string_equal(NAME(CM_GEMM_BF16, 9, nnbf, 1, "sm90+bt"), "sm90+bt");
    nnbf.a_kmajor = 1;
    nnbf.ldb = 4093; /* rows off 16 bytes: packed */
    assert_string_equal(NAME(CM_GEMM_BF16, 9, nnbf, 1, "sm90+bt"), "sm90+pack");
    nnbf.ldb = 4096;
    {
        /* by default, B's rows an odd number of 16 bytes (2000) on a C large enough for the
         * copy (cm__gemm_stage32): transposed into rows of whole 128-byte lines ("sm90+pack");
         * forced, read as it is; rows of a multiple of 32 bytes as before */
        cm__gemm_args_t odd = args(4096, 1000, 4096, 1, 0, CM__GEMM_BF16, 4096);
        odd.ldb = 1000;
        assert_string_equal(NAME(CM_GEMM_BF16, 9, odd, 1, NULL), "sm90+pack");
        assert_string_equal(NAME(CM_GEMM_BF16_OUT_BF16, 9, odd, 1, NULL), "sm90+pack");
        assert_string_equal(NAME(CM_GEMM_BF16, 9, odd, 1, "sm90+bt"), "sm90+bt");
        odd.n = 1008;
        odd.ldb = 1008;
        assert_string_equal(NAME(CM_GEMM_BF16, 9, odd, 1, NULL),
                            CM__GEMM_SM90_BT_DISPATCH ? "sm90+bt" : "sm90+pack");
        odd.n = 1000;
        odd.ldb = 1000;
        odd.m = 600; /* m n / (m + n) = 375: C too small for the copy to pay */
        assert_string_equal(NAME(CM_GEMM_BF16, 9, odd, 1, NULL),
                            CM__GEMM_SM90_BT_DISPATCH ? "sm90+bt" : "sm90+pack");
        odd = args(4096, 1000, 320, 1, 0, CM__GEMM_BF16, 320); /* test_sm90_stage32's */
        odd.ldb = 1000;
        assert_string_equal(NAME(CM_GEMM_BF16, 9, odd, 1, NULL), "sm90+pack");
        odd.k = 248; /* K under 256 */
        odd.lda = 248;
        assert_string_equal(NAME(CM_GEMM_BF16, 9, odd, 1, NULL),
                            CM__GEMM_SM90_BT_DISPATCH ? "sm90+bt" : "sm90+pack");
    }
    nnbf.b_kmajor = 1; /* TN, aligned: straight to the kernel */
    assert_string_equal(NAME(CM_GEMM_BF16, 9, nnbf, 1, "sm90+bt"), "sm90");
    cm__gemm_args_t nntf = args(4096, 4096, 4096, 1, 0, CM__GEMM_F32, 4096);
    /* bf16 only: TF32 as a forced "sm90", which reads this B by the register-A form */
    assert_string_equal(NAME(CM_GEMM_TF32, 9, nntf, 1, "sm90+bt"),
                        AT_OR_PACK);
    assert_string_equal(NAME(CM_GEMM_BF16, 8, nnbf, 1, "sm90+bt"), "mma:128x128");

    /* "sm90+at": a TF32 operand that is MN-major with 16-byte rows read as it is by the
     * register-A kernel (A directly, B through the transposed product), the other packed where
     * it needs to be; no such operand: "sm90+pack", or, TN and aligned, "sm90" */
    cm__gemm_choice_t atc = {-1, -1};
    assert_true(cm__gemm_parse_name("sm90+at", &atc));
    assert_int_equal(atc.kernel, CM__GEMM_KERNEL_SM90);
    assert_int_equal(atc.config, CM__GEMM_SM90_AT);
    assert_string_equal(cm__gemm_choice_name(atc), "sm90+at");
    assert_string_equal(NAME(CM_GEMM_TF32, 9, nntf, 1, "sm90+at"), "sm90+at"); /* B as it is */
    nntf.a_kmajor = 0;
    nntf.b_kmajor = 1;
    assert_string_equal(NAME(CM_GEMM_TF32, 9, nntf, 1, "sm90+at"), "sm90+at"); /* A as it is */
    nntf.lda = 4093; /* A's rows off 16 bytes, B K-major: packed */
    assert_string_equal(NAME(CM_GEMM_TF32, 9, nntf, 1, "sm90+at"), "sm90+pack");
    nntf.b_kmajor = 0; /* B MN-major with 16-byte rows: B as it is, A packed */
    assert_string_equal(NAME(CM_GEMM_TF32, 9, nntf, 1, NULL),
                        AT_OR_PACK);
    nntf.lda = 4096;
    assert_string_equal(NAME(CM_GEMM_TF32, 8, nntf, 1, "sm90+at"), "mma:128x128");
    /* bf16 takes the transposed-B form for its MN-major B, as by default */
    assert_string_equal(NAME(CM_GEMM_BF16, 9, nnbf, 1, "sm90+at"), "sm90");
    nnbf.b_kmajor = 0;
    assert_string_equal(NAME(CM_GEMM_BF16, 9, nnbf, 1, "sm90+at"),
                        CM__GEMM_SM90_BT_DISPATCH ? "sm90+bt" : "sm90+pack");

    /* CM_GEMM_FP32_3XTF32: the split-TF32 Hopper path where the problem fills the GPU and K is
     * at least CM__GEMM_3X_MIN_K, in every layout and alignment (the split pre-pass writes its
     * own operands); else FP32's own choice (the FP32 kernels: cm__gemm_run_precision runs it
     * as FP32, split of K included), never mma.sync or the plain TF32 kernel */
    const int X3 = CM_GEMM_FP32_3XTF32;
    assert_string_equal(NAME(X3, 9, big, 1, NULL), "sm90+3xtf32");
    assert_string_equal(NAME(X3, 9, nn, 1, NULL), "sm90+3xtf32");
    assert_string_equal(NAME(X3, 9, mis, 1, NULL), "sm90+3xtf32");
    assert_string_equal(NAME(X3, 9, big, 0, NULL), "ffma:128x128x16q3"); /* not carried */
    assert_string_equal(NAME(X3, 8, big, 1, NULL), "ffma:128x128x8");
    assert_string_equal(NAME(X3, 7, big, 1, NULL), "ffma:128x128x8");
    assert_string_equal(NAME(X3, 9, tiny, 1, NULL), NAME(CM_GEMM_FP32, 9, tiny, 1, NULL));
    assert_string_equal(NAME(X3, 9, small_tn, 1, NULL),
                        NAME(CM_GEMM_FP32, 9, small_tn, 1, NULL));
    assert_string_equal(NAME(X3, 9, small_tn, 1, NULL), "ffma:128x128x16q3");
    /* skinny: many tiles take it when K >= CM__GEMM_3X_MIN_K (below, FP32's own error is under
     * the split's floor: FFMA); a narrow C (few 128 x 256 tiles) does not */
    assert_string_equal(NAME(X3, 9, skinny_nn, 1, NULL), NAME(CM_GEMM_FP32, 9, skinny_nn, 1, NULL));
    cm__gemm_args_t narrow = args(65536, 256, 128, 1, 1, CM__GEMM_F32, 128);
    assert_string_equal(NAME(X3, 9, narrow, 1, NULL), NAME(CM_GEMM_FP32, 9, narrow, 1, NULL));
    narrow.k = CM__GEMM_3X_MIN_K - 1;
    assert_string_equal(NAME(X3, 9, narrow, 1, NULL), NAME(CM_GEMM_FP32, 9, narrow, 1, NULL));
    narrow.k = CM__GEMM_3X_MIN_K;
    narrow.lda = narrow.ldb = CM__GEMM_3X_MIN_K;
    assert_string_equal(NAME(X3, 9, narrow, 1, NULL), "sm90+3xtf32"); /* 512 tiles */
    cm__gemm_args_t narrow2 = args(16384, 256, 8192, 1, 1, CM__GEMM_F32, 8192);
    assert_string_equal(NAME(X3, 9, narrow2, 1, NULL), "ffma:128x128x16q3"); /* 128 tiles */
    /* a C whose short side is at most CM__GEMM_3X_NARROW_SIDE (128): FP32's choice (up to 64
     * its narrow rule's 32 x 64 or 64 x 64 tiles) however many 128 x 192 tiles would cover it */
    {
        static const int nw[][3] = {{20000, 32, 900},   {32, 20000, 900},   {30000, 64, 600},
                                    {64, 30000, 600},   {40000, 48, 2048},  {30000, 96, 1024},
                                    {96, 30000, 1024},  {30000, 128, 1024}, {128, 30000, 1024},
                                    {20000, 112, 2048}, {65536, 128, 512},  {30000, 65, 600}};
        for (size_t i = 0; i < sizeof nw / sizeof nw[0]; ++i) {
            cm__gemm_args_t w = args(nw[i][0], nw[i][1], nw[i][2], 1, 1, CM__GEMM_F32, nw[i][2]);
            w.ldb = nw[i][2];
            assert_string_equal(NAME(X3, 9, w, 1, NULL), NAME(CM_GEMM_FP32, 9, w, 1, NULL));
            assert_string_not_equal(NAME(X3, 9, w, 1, NULL), "sm90+3xtf32");
            assert_string_equal(NAME(X3, 9, w, 1, "sm90+3xtf32"), "sm90+3xtf32"); /* forced */
        }
        cm__gemm_args_t w = args(30000, 129, 600, 1, 1, CM__GEMM_F32, 600);
        w.ldb = 600;
        /* 235 tiles over 129 columns */
        assert_string_equal(NAME(X3, 9, w, 1, NULL), "sm90+3xtf32");
        w = args(129, 30000, 600, 1, 1, CM__GEMM_F32, 600);
        w.ldb = 600;
        assert_string_equal(NAME(X3, 9, w, 1, NULL), "sm90+3xtf32"); /* over 129 rows */
    }
    /* forced: an SM90 name takes the split path anywhere it can run; mma is never run;
     * an FFMA name is kept */
    assert_string_equal(NAME(X3, 9, tiny, 1, "sm90"), "sm90+3xtf32");
    assert_string_equal(NAME(X3, 9, tiny, 1, "sm90+3xtf32"), "sm90+3xtf32");
    assert_string_equal(NAME(X3, 8, tiny, 1, "sm90+3xtf32"), "ffma:32x64x16");
    assert_string_equal(NAME(X3, 9, big, 1, "mma:128x128"), "ffma:128x128x16q3");
    assert_string_equal(NAME(X3, 9, big, 1, "ffma:64x64x16"), "ffma:64x64x16");
    assert_string_equal(NAME(X3, 9, k0, 1, NULL), NAME(CM_GEMM_FP32, 9, k0, 1, NULL)); /* as FP32 */
    assert_string_equal(NAME(X3, 9, k0, 1, "sm90+3xtf32"),
                        NAME(CM_GEMM_FP32, 9, k0, 1, "sm90+3xtf32")); /* K = 0: FFMA */
    /* the 3xTF32 name forced on another precision is the Hopper kernel as "sm90" forced */
    assert_string_equal(NAME(CM_GEMM_TF32, 9, nn, 1, "sm90+3xtf32"), AT_OR_PACK);
    assert_string_equal(NAME(CM_GEMM_TF32, 9, big, 1, "sm90+3xtf32"), "sm90");
    assert_string_equal(NAME(CM_GEMM_FP32, 9, big, 1, "sm90+3xtf32"), "ffma:128x128x8");
    cm__gemm_choice_t x3 = {-1, -1};
    assert_true(cm__gemm_parse_name("sm90+3xtf32", &x3));
    assert_string_equal(cm__gemm_choice_name(x3), "sm90+3xtf32");

    /* a strided batch: the classes count the whole batch's tiles; matrices of at most
     * 128 x 128 take the tiny class's small tiles; strides off 16 bytes keep the direct
     * Hopper kernel away */
    cm__gemm_args_t b512 = args(512, 512, 512, 1, 1, CM__GEMM_F32, 512);
    b512.ldb = 512;
    b512.batch = 64;
    b512.stride_a = b512.stride_b = b512.stride_c = 512 * 512;
    assert_string_equal(NAME(CM_GEMM_TF32, 9, b512, 1, NULL), "sm90");
    assert_string_equal(NAME(CM_GEMM_FP32, 9, b512, 1, NULL), "ffma:128x128x16q3");
    b512.batch = 1;
    assert_string_equal(NAME(CM_GEMM_TF32, 9, b512, 1, NULL), "sm90"); /* one: tiny, in 2 parts */
    b512.batch = 64;
    b512.a_kmajor = 0;
    assert_string_equal(NAME(CM_GEMM_TF32, 9, b512, 1, NULL), AT_OR_PACK);
    b512.a_kmajor = 1;
    b512.stride_a = 512 * 512 + 1; /* matrix 1 off 16 bytes: packed (copied aligned) */
    assert_string_equal(NAME(CM_GEMM_TF32, 9, b512, 1, NULL), "sm90+pack");
    cm__gemm_args_t b64 = args(64, 64, 64, 1, 1, CM__GEMM_F32, 64);
    b64.ldb = 64;
    b64.batch = 1024;
    b64.stride_a = b64.stride_b = b64.stride_c = 64 * 64;
    assert_string_equal(NAME(CM_GEMM_TF32, 9, b64, 1, NULL), "mma:64x64");
    assert_string_equal(NAME(CM_GEMM_BF16, 9, b64, 1, NULL), "mma:64x64");
    assert_string_equal(NAME(CM_GEMM_FP32, 9, b64, 1, NULL), "ffma:32x64x16");
    assert_string_equal(NAME(CM_GEMM_FP32_3XTF32, 9, b64, 1, NULL), "ffma:32x64x16");

    /* a vector side of C (m or n == 1, k >= 1): the matrix-vector kernel, every precision and
     * architecture, operands aligned or not; an override of another kernel is respected there,
     * "gemv" forced elsewhere runs the table's choice; k == 0 stays C = beta C (FFMA) */
    cm__gemm_args_t row_vec = args(1, 4096, 4096, 1, 0, CM__GEMM_F32, 4096);
    cm__gemm_args_t col_vec = args(4096, 1, 4096, 0, 1, CM__GEMM_BF16, 4093);
    cm__gemm_args_t dot = args(1, 1, 100, 1, 1, CM__GEMM_F32, 100);
    for (int prec = 0; prec <= CM_GEMM_FP32_3XTF32; ++prec)
        for (int maj = 7; maj <= 9; ++maj) {
            assert_string_equal(NAME(prec, maj, row_vec, 1, NULL), "gemv");
            assert_string_equal(NAME(prec, maj, col_vec, 0, NULL), "gemv");
            assert_string_equal(NAME(prec, maj, dot, 1, NULL), "gemv");
        }
    /* a short K (<= CM__GEMM_GEMV_SHORT_K) over 16 rows per SM read along K, one product:
     * the skinny kernel; across K, a longer K, fewer rows, a batch, or "gemv" forced: gemv */
    cm__gemm_args_t short_row = args(1, 16 * 132, CM__GEMM_GEMV_SHORT_K, 1, 1, CM__GEMM_F32, 128);
    cm__gemm_args_t short_col = args(4096, 1, 127, 1, 0, CM__GEMM_F32, 127);
    for (int prec = 0; prec <= CM_GEMM_FP32_3XTF32; ++prec) {
        EXPECT_SKINNY(NAME(prec, 9, short_row, 1, NULL));
        EXPECT_SKINNY(NAME(prec, 7, short_col, 0, NULL));
    }
    assert_string_equal(NAME(CM_GEMM_FP32, 9, short_row, 1, "gemv"), "gemv");
    cm__gemm_args_t v = short_row;
    v.b_kmajor = 0; /* m == 1: the matrix is B */
    assert_string_equal(NAME(CM_GEMM_FP32, 9, v, 1, NULL), "gemv");
    v = short_row;
    v.k = CM__GEMM_GEMV_SHORT_K + 1;
    assert_string_equal(NAME(CM_GEMM_FP32, 9, v, 1, NULL), "gemv");
    v = short_row;
    v.n = 16 * 132 - 1;
    v.ldc = v.n;
    assert_string_equal(NAME(CM_GEMM_FP32, 9, v, 1, NULL), "gemv");
    v = short_row;
    v.batch = 2;
    v.stride_a = 128;
    v.stride_b = 128 * 4096;
    v.stride_c = v.n;
    assert_string_equal(NAME(CM_GEMM_FP32, 9, v, 1, NULL), "gemv");
    v = short_col;
    v.a_kmajor = 0; /* n == 1: the matrix is A */
    assert_string_equal(NAME(CM_GEMM_FP32, 9, v, 1, NULL), "gemv");
    assert_string_equal(NAME(CM_GEMM_FP32, 9, row_vec, 1, "ffma:64x64x16"), "ffma:64x64x16");
    assert_string_equal(NAME(CM_GEMM_FP32, 9, row_vec, 1, "gemv"), "gemv");
    assert_string_equal(NAME(CM_GEMM_FP32, 9, big, 1, "gemv"), "ffma:128x128x16q3");
    assert_string_equal(NAME(CM_GEMM_TF32, 9, big, 1, "gemv"), "sm90");
    cm__gemm_args_t vec_k0 = args(1, 4096, 0, 1, 1, CM__GEMM_F32, 4096);
    assert_string_equal(NAME(CM_GEMM_FP32, 9, vec_k0, 1, NULL), "ffma:32x64x16");
    assert_string_equal(NAME(CM_GEMM_TF32, 9, vec_k0, 1, NULL), "ffma:32x64x16"); /* FP32's */
    cm__gemm_choice_t gv = {-1, -1};
    assert_true(cm__gemm_parse_name("gemv", &gv));
    assert_int_equal(gv.kernel, CM__GEMM_KERNEL_GEMV);

    /* a side of 2 .. CM__GEMM_SKINNY_MAX with at least CM__GEMM_SKINNY_MIN_ROWS rows on the
     * other (times the batch), K >= CM__GEMM_SKINNY_MIN_K (CM__GEMM_SKINNY_MIN_K_NARROW for a
     * small side up to CM__GEMM_SKINNY_NARROW) and the long side's matrix
     * K-contiguous: the skinny kernel, every precision and architecture; an override of another
     * kernel is respected there, "skinny" forced elsewhere runs the table's choice; 17 rows, too
     * few large rows, a short K, the long matrix across K, bf16 on tensor-core-ready operands
     * (sm_80+) or k == 0 keep the table */
    cm__gemm_args_t sk_m = args(7, 4096, 4096, 1, 1, CM__GEMM_F32, 4096);
    /* bf16, both K-contiguous, but rows of 4093 elements: no tensor-core tiles, so skinny */
    cm__gemm_args_t sk_n = args(4096, CM__GEMM_SKINNY_MAX, 3001, 1, 1, CM__GEMM_BF16, 4093);
    cm__gemm_args_t sk_2 = args(2, CM__GEMM_SKINNY_MIN_ROWS, CM__GEMM_SKINNY_MIN_K, 0, 1,
                                CM__GEMM_F32, 64);
    /* few rows (under 16 per SM of 132) and a long K: the tiles (split-K); K short: skinny */
    cm__gemm_args_t sk_longk = args(7, 1000, 3001, 1, 1, CM__GEMM_F32, 3001);
    cm__gemm_args_t sk_shortk = args(7, 1000, CM__GEMM_SKINNY_SHORT_K, 1, 1, CM__GEMM_F32, 4096);
    assert_string_not_equal(NAME(CM_GEMM_FP32, 9, sk_longk, 1, NULL), "skinny");
    EXPECT_SKINNY(NAME(CM_GEMM_FP32, 9, sk_shortk, 1, NULL));
    sk_longk.n = 16 * 132; /* 16 rows per SM: skinny again */
    sk_longk.ldc = sk_longk.n;
    EXPECT_SKINNY(NAME(CM_GEMM_BF16, 9, sk_longk, 1, NULL));
    for (int prec = 0; prec <= CM_GEMM_FP32_3XTF32; ++prec)
        for (int maj = 7; maj <= 9; ++maj) {
            /* TF32 on both operands K-contiguous with 16-byte rows: skinny for a small side of
             * at most CM__GEMM_SKINNY_TC_TF32, the tensor-core tiles above it (below) */
            EXPECT_SKINNY(NAME(prec, maj, sk_m, 1, NULL));
            EXPECT_SKINNY(NAME(prec, maj, sk_n, 0, NULL));
            EXPECT_SKINNY(NAME(prec, maj, sk_2, 1, NULL));
        }
    cm__gemm_args_t wide17 = args(CM__GEMM_SKINNY_MAX + 1, 4096, 4096, 1, 1, CM__GEMM_F32, 4096);
    cm__gemm_args_t few = args(7, CM__GEMM_SKINNY_MIN_ROWS - 1, 4096, 1, 1, CM__GEMM_F32, 4096);
    cm__gemm_args_t sk_k0 = args(7, 4096, 0, 1, 1, CM__GEMM_F32, 4096);
    /* the long side's matrix across K (small m: B; small n: A), either orientation */
    cm__gemm_args_t across_m = args(7, 4096, 4096, 1, 0, CM__GEMM_F32, 4096);
    cm__gemm_args_t across_n = args(4096, 7, 4096, 0, 1, CM__GEMM_F32, 4096);
    /* K under the minimum: CM__GEMM_SKINNY_MIN_K_NARROW for a small side of at most
     * CM__GEMM_SKINNY_NARROW, CM__GEMM_SKINNY_MIN_K above it */
    cm__gemm_args_t short_k = args(CM__GEMM_SKINNY_NARROW, 4096, CM__GEMM_SKINNY_MIN_K_NARROW - 1,
                                   1, 1, CM__GEMM_F32, 4096);
    /* (9 .. 16 over more than CM__GEMM_SKINNY_FEW_ROWS_PER_SM rows per SM; fewer: below) */
    cm__gemm_args_t short_k9 = args(CM__GEMM_SKINNY_NARROW + 1,
                                    CM__GEMM_SKINNY_FEW_ROWS_PER_SM * 132 + 1,
                                    CM__GEMM_SKINNY_MIN_K - 1, 1, 1, CM__GEMM_F32, 4096);
    cm__gemm_args_t narrow_k = short_k; /* from the narrow minimum on: skinny */
    narrow_k.k = CM__GEMM_SKINNY_MIN_K_NARROW;
    for (int prec = 0; prec <= CM_GEMM_FP32_3XTF32; ++prec) {
        assert_string_not_equal(NAME(prec, 9, across_m, 1, NULL), "skinny");
        assert_string_not_equal(NAME(prec, 9, across_n, 1, NULL), "skinny");
        assert_string_not_equal(NAME(prec, 9, short_k, 1, NULL), "skinny");
        assert_string_not_equal(NAME(prec, 9, short_k9, 1, NULL), "skinny");
        EXPECT_SKINNY(NAME(prec, 9, narrow_k, 1, NULL));
    }
    {
        cm__gemm_args_t nb = narrow_k; /* a batch keeps CM__GEMM_SKINNY_MIN_K */
        nb.batch = 4;
        nb.stride_a = (int64_t)nb.m * nb.lda;
        nb.stride_b = (int64_t)nb.n * nb.ldb;
        nb.stride_c = (int64_t)nb.m * nb.ldc;
        assert_string_not_equal(NAME(CM_GEMM_FP32, 9, nb, 1, NULL), "skinny");
        nb.k = CM__GEMM_SKINNY_MIN_K;
        EXPECT_SKINNY(NAME(CM_GEMM_FP32, 9, nb, 1, NULL));
    }
    {
        /* a small side of 9 .. 16, one product over at most CM__GEMM_SKINNY_FEW_ROWS_PER_SM rows
         * per SM: skinny from CM__GEMM_SKINNY_MIN_K_NARROW, unless TF32 / bf16 tiles on sm_80+
         * read both operands as they are (16-byte rows); more rows, a batch or a shorter K keep
         * the tiles */
        const int few_rows = CM__GEMM_SKINNY_FEW_ROWS_PER_SM * 132;
        for (int small = CM__GEMM_SKINNY_NARROW + 1; small <= CM__GEMM_SKINNY_MAX; small += 7)
            for (int prec = 0; prec <= CM_GEMM_FP32_3XTF32; ++prec) {
                const int in = prec == CM_GEMM_BF16 || prec == CM_GEMM_BF16_OUT_BF16
                                   ? CM__GEMM_BF16
                                   : CM__GEMM_F32;
                const int tc = prec == CM_GEMM_TF32 || in == CM__GEMM_BF16;
                /* rows of 255 elements (off 16 bytes), the long side's B K-contiguous */
                cm__gemm_args_t f = args(small, few_rows, 255, 0, 1, in, small);
                f.ldb = 255;
                EXPECT_SKINNY(NAME(prec, 9, f, 1, NULL));
                EXPECT_SKINNY(NAME(prec, 8, f, 0, NULL));
                f.k = CM__GEMM_SKINNY_MIN_K_NARROW;
                EXPECT_SKINNY(NAME(prec, 9, f, 1, NULL));
                cm__gemm_args_t w = f; /* a shorter K */
                w.k = CM__GEMM_SKINNY_MIN_K_NARROW - 1;
                assert_string_not_equal(NAME(prec, 9, w, 1, NULL), "skinny");
                w = f; /* one row more than the bound */
                w.n = few_rows + 1, w.ldc = w.n;
                assert_string_not_equal(NAME(prec, 9, w, 1, NULL), "skinny");
                w = f; /* a batch */
                w.batch = 2, w.stride_a = (int64_t)w.m * w.k, w.stride_b = (int64_t)w.n * 255;
                w.stride_c = (int64_t)w.m * w.n;
                assert_string_not_equal(NAME(prec, 9, w, 1, NULL), "skinny");
                w = f; /* 16-byte rows: the tiles for TF32 / bf16 on sm_80+, skinny otherwise */
                w.k = 160, w.lda = 16, w.ldb = 160;
                if (tc) {
                    assert_string_not_equal(NAME(prec, 9, w, 1, NULL), "skinny");
                    assert_string_not_equal(NAME(prec, 8, w, 0, NULL), "skinny");
                    EXPECT_SKINNY(NAME(prec, 7, w, 0, NULL));
                } else {
                    EXPECT_SKINNY(NAME(prec, 9, w, 1, NULL));
                }
            }
        /* the public layouts measured (column-major): 12 x 4096 x 255 "NN" and 4096 x 12 x 255
         * "TN" skinny in every precision, 4096 x 12 x 255 "NN" (the long side across K) not */
        for (int prec = 0; prec <= CM_GEMM_BF16; ++prec) {
            const int in = prec == CM_GEMM_BF16 ? CM__GEMM_BF16 : CM__GEMM_F32;
            cm__gemm_args_t q = col_major(CM_GEMM_OP_N, 12, 4096, 255, in);
            EXPECT_SKINNY(NAME(prec, 9, q, 1, NULL));
            q = col_major(CM_GEMM_OP_T, 4096, 12, 255, in);
            EXPECT_SKINNY(NAME(prec, 9, q, 1, NULL));
            q = col_major(CM_GEMM_OP_N, 4096, 12, 255, in);
            assert_string_not_equal(NAME(prec, 9, q, 1, NULL), "skinny");
        }
    }
    /* bf16, both K-contiguous, 16-byte rows: the tensor-core tiles on sm_80+, skinny on sm_75 */
    cm__gemm_args_t tc_ready = args(7, 4096, 4096, 1, 1, CM__GEMM_BF16, 4096);
    assert_string_not_equal(NAME(CM_GEMM_BF16, 9, tc_ready, 1, NULL), "skinny");
    assert_string_not_equal(NAME(CM_GEMM_BF16, 8, tc_ready, 0, NULL), "skinny");
    EXPECT_SKINNY(NAME(CM_GEMM_BF16, 7, tc_ready, 0, NULL));
    tc_ready.a_kmajor = 0; /* the small side across K: the tiles would need a pre-pass */
    EXPECT_SKINNY(NAME(CM_GEMM_BF16, 9, tc_ready, 1, NULL));
    /* the public layouts of test_gpu_gemm's test_skinny cases (column-major, through
     * cm__gemm_normalize, H200: 132 SMs): bf16 NN 8 x 2048 x 1024 "sm90+bt", 7 x ...
     * "sm90+pack"; TF32 TN 7 x 2048 x 1024 and 2048 x 7 x 1024 skinny, 12 x 2048 x 1024
     * mma:64x64, 2048 x 12 x 1024 too (cm_gemm's 12 x 2048: TF32 rule 1 from K = 1024 needs a
     * short side of at least 32); FP32 NN 64 x 2048 x 2048 ffma:64x64x16 */
    {
        static const struct {
            int prec, in, op_a;
            int m, n, k;
            const char *name;
        } pub[] = {
            {CM_GEMM_BF16, CM__GEMM_BF16, CM_GEMM_OP_N, 8, 2048, 1024, "sm90+bt"},
            {CM_GEMM_BF16, CM__GEMM_BF16, CM_GEMM_OP_N, 7, 2048, 1024, "sm90+pack"},
            {CM_GEMM_TF32, CM__GEMM_F32, CM_GEMM_OP_T, 7, 2048, 1024, "skinny"},
            {CM_GEMM_TF32, CM__GEMM_F32, CM_GEMM_OP_T, 2048, 7, 1024, "skinny"},
            {CM_GEMM_TF32, CM__GEMM_F32, CM_GEMM_OP_T, 12, 2048, 1024, "mma:64x64"},
            {CM_GEMM_TF32, CM__GEMM_F32, CM_GEMM_OP_T, 2048, 12, 1024, "mma:64x64"},
            {CM_GEMM_FP32, CM__GEMM_F32, CM_GEMM_OP_N, 64, 2048, 2048, "ffma:64x64x16q3"},
        };
        for (size_t i = 0; i < sizeof pub / sizeof pub[0]; ++i) {
            cm__gemm_args_t q = col_major(pub[i].op_a, pub[i].m, pub[i].n, pub[i].k, pub[i].in);
            assert_string_equal(NAME(pub[i].prec, 9, q, 1, NULL), pub[i].name);
        }
    }
    /* TF32 likewise on sm_80+ for a small side above CM__GEMM_SKINNY_TC_TF32 (mma:64x64, the
     * tiny class's tile, on Hopper too: from K = 1024 the wgmma kernel takes a long C over at
     * least CM__GEMM_SM90_TF32_TINY_MIN_SIDE rows); FP32 and 3xTF32 keep skinny */
    cm__gemm_args_t sk_w = sk_m;
    sk_w.m = CM__GEMM_SKINNY_TC_TF32 + 1;
    assert_string_equal(NAME(CM_GEMM_TF32, 9, sk_w, 1, NULL), "mma:64x64");
    assert_string_equal(NAME(CM_GEMM_TF32, 9, sk_w, 0, NULL), "mma:64x64");
    assert_string_equal(NAME(CM_GEMM_TF32, 8, sk_w, 0, NULL), "mma:64x64");
    EXPECT_SKINNY(NAME(CM_GEMM_TF32, 7, sk_w, 0, NULL));
    {
        cm__gemm_args_t t = sk_m; /* TF32 under K = CM__SPLITK_LONG_K: skinny */
        t.k = t.lda = t.ldb = CM__SPLITK_LONG_K - 16;
        EXPECT_SKINNY(NAME(CM_GEMM_TF32, 9, t, 1, NULL));
    }
    {
        /* TF32 with a small side of CM__GEMM_SKINNY_TC_TF32_ANY and A MN-major (rows of 16
         * elements of M, B K-contiguous): the tensor-core tiles on sm_80+ (mma:64x64 reads A as
         * it is); a side one less, a K under CM__SPLITK_LONG_K, FP32 or sm_75: skinny; rows
         * off 16 bytes: the tiles (their align1 form) over at most
         * CM__GEMM_SKINNY_TF32_16_A1_ROWS_PER_SM rows a multiprocessor, else, in a batch or
         * with both operands K-contiguous skinny */
        cm__gemm_args_t t = args(CM__GEMM_SKINNY_TC_TF32_ANY, 4096, 4096, 0, 1, CM__GEMM_F32,
                                 CM__GEMM_SKINNY_TC_TF32_ANY);
        assert_string_equal(NAME(CM_GEMM_TF32, 9, t, 1, NULL), "mma:64x64");
        assert_string_equal(NAME(CM_GEMM_TF32, 8, t, 0, NULL), "mma:64x64");
        EXPECT_SKINNY(NAME(CM_GEMM_TF32, 7, t, 0, NULL));
        EXPECT_SKINNY(NAME(CM_GEMM_FP32, 9, t, 1, NULL));
        cm__gemm_args_t u = t;
        u.m = CM__GEMM_SKINNY_TC_TF32_ANY - 1; /* lda stays 16 */
        EXPECT_SKINNY(NAME(CM_GEMM_TF32, 9, u, 1, NULL));
        u = t;
        u.ldb = 4093;
        assert_string_not_equal(NAME(CM_GEMM_TF32, 9, u, 1, NULL), "skinny");
        cm__gemm_choice_t a1 = {0, 0};
        assert_int_equal(realign_of(CM_GEMM_TF32, 9, 132, &u, 1, &a1), CM__REALIGN_ALIGN1);
        assert_int_equal(a1.kernel, CM__GEMM_KERNEL_MMA);
        u.n = (size_t)CM__GEMM_SKINNY_TF32_16_A1_ROWS_PER_SM * 132;
        assert_string_not_equal(NAME(CM_GEMM_TF32, 9, u, 1, NULL), "skinny");
        u.n += 1;
        EXPECT_SKINNY(NAME(CM_GEMM_TF32, 9, u, 1, NULL));
        u.n = 4096;
        u.batch = 2;
        EXPECT_SKINNY(NAME(CM_GEMM_TF32, 9, u, 1, NULL));
        u.batch = 1;
        u.k = CM__SPLITK_LONG_K - 3; /* with ldb 4093: under the K measured */
        EXPECT_SKINNY(NAME(CM_GEMM_TF32, 9, u, 1, NULL));
        u = t;
        u.lda = u.k = 4093; /* A K-contiguous too, B's rows off 16 bytes */
        u.a_kmajor = 1;
        EXPECT_SKINNY(NAME(CM_GEMM_TF32, 9, u, 1, NULL));
        u = t;
        u.k = CM__SPLITK_LONG_K - 16;
        EXPECT_SKINNY(NAME(CM_GEMM_TF32, 9, u, 1, NULL));
    }
    {
        /* TF32 under K = CM__SPLITK_LONG_K, both operands K-contiguous with 16-byte rows, a
         * small side above CM__GEMM_SKINNY_TC_TF32: the tensor-core tiles where the 64 x 64 tiles
         * over C cover CM__GEMM_SKINNY_TC_TF32_FILL quarters of the SMs (7000 x 16 x 300: 110
         * tiles against 99 of 132 or 81 of 108), skinny where fewer (4096 x 16 x 512: 64); the
         * tile count counts a batch; FP32 keeps skinny */
        cm__gemm_args_t t = args(7000, 16, 300, 1, 1, CM__GEMM_F32, 300);
        t.ldb = 300;
        assert_true(4 * ((t.m + 63) / 64) >= CM__GEMM_SKINNY_TC_TF32_FILL * 132);
        assert_string_equal(NAME(CM_GEMM_TF32, 9, t, 1, NULL), "mma:64x64");
        assert_string_equal(NAME(CM_GEMM_TF32, 8, t, 0, NULL), "mma:64x64");
        EXPECT_SKINNY(NAME(CM_GEMM_FP32, 9, t, 1, NULL));
        t.n = 12;
        assert_string_equal(NAME(CM_GEMM_TF32, 9, t, 1, NULL), "mma:64x64");
        t.n = CM__GEMM_SKINNY_TC_TF32; /* the 8-vector form keeps skinny */
        EXPECT_SKINNY(NAME(CM_GEMM_TF32, 9, t, 1, NULL));
        t.n = 16;
        t.m = 4096;
        t.k = t.lda = t.ldb = 512;
        assert_true(4 * ((t.m + 63) / 64) < CM__GEMM_SKINNY_TC_TF32_FILL * 132);
        EXPECT_SKINNY(NAME(CM_GEMM_TF32, 9, t, 1, NULL));
        t.batch = 2; /* 128 tiles over the batch */
        t.stride_a = (int64_t)t.m * t.k, t.stride_b = (int64_t)t.n * t.k;
        t.stride_c = (int64_t)t.m * t.n;
        assert_string_equal(NAME(CM_GEMM_TF32, 9, t, 1, NULL), "mma:64x64");
    }
    {
        /* TF32 under the realignment's flop floor with K of at least CM__GEMM_REALIGN_A1_MIN_K,
         * rows off 16 bytes, where the copied form would run the Hopper kernel (column-major
         * 2049 x 40 x 1101 "NN": a long C over 40 rows) or mma:64x64 (3001 x 12 x 2001 "NN",
         * 12 rows; 127 x 127 x 3001 and 64 x 127 x 3001 "TN": no side of 2048, K from 1024):
         * the 64 x 64 tiles' align1 form */
        static const struct { int m, n, k, op_a; } lo[] = {{2049, 40, 1101, CM_GEMM_OP_N},
                                                          {3001, 12, 2001, CM_GEMM_OP_N},
                                                          {127, 127, 3001, CM_GEMM_OP_T},
                                                          {64, 127, 3001, CM_GEMM_OP_T}};
        cm__gemm_align1_set_for_tests(1);
        for (size_t i = 0; i < sizeof lo / sizeof lo[0]; ++i) {
            cm__gemm_args_t q = col_major(lo[i].op_a, lo[i].m, lo[i].n, lo[i].k, CM__GEMM_F32);
            assert_true(2.0 * lo[i].m * lo[i].n * lo[i].k < CM__GEMM_REALIGN_MIN_FLOPS);
            const cm__gemm_choice_t ch = cm__gemm_select(CM_GEMM_TF32, 9, 0, 132, &q, 1, NULL);
            assert_int_equal(ch.kernel, CM__GEMM_KERNEL_FFMA);
            const cm__gemm_args_t st = copied_form(&q);
            const cm__gemm_choice_t sc = cm__gemm_select(CM_GEMM_TF32, 9, 0, 132, &st, 1, NULL);
            if (i == 0 ? sc.kernel != CM__GEMM_KERNEL_SM90
                       : sc.kernel != CM__GEMM_KERNEL_MMA || sc.config != CM__MMA_64x64)
                fail_msg("%dx%dx%d: the copied form runs %s", lo[i].m, lo[i].n, lo[i].k,
                         cm__gemm_choice_name(sc));
            cm__gemm_choice_t a1 = {-1, -1};
            assert_int_equal(cm__gemm_realign_mode(CM_GEMM_TF32, 9, 0, 132, &q, ch, 1, NULL, &a1),
                             CM__REALIGN_ALIGN1);
            assert_int_equal(a1.kernel, CM__GEMM_KERNEL_MMA);
            assert_int_equal(a1.config, CM__MMA_64x64);
            /* the form off: nothing (never the copy under the floor) */
            cm__gemm_align1_set_for_tests(0);
            assert_int_equal(cm__gemm_realign_mode(CM_GEMM_TF32, 9, 0, 132, &q, ch, 1, NULL, &a1),
                             CM__REALIGN_NONE);
            cm__gemm_align1_set_for_tests(1);
        }
        cm__gemm_align1_set_for_tests(-1);
    }
    {
        /* one thin TF32 product (a side of CM__GEMM_SKINNY_TC_TF32 .. CM__GEMM_SKINNY_MAX) under
         * the flop floor, K from CM__GEMM_REALIGN_A1_THIN_MIN_K, rows off 16 bytes, demoted to
         * FFMA (column-major "NN": the long side across K, no skinny): the 64 x 64 tiles'
         * align1 form, whatever tensor-core kernel the copied form runs; a shorter K, a side
         * outside the range, a batch, FP32 or the form off: nothing */
        static const struct { int m, n, k; } th[] = {{4096, 12, 255}, {3001, 8, 200},
                                                    {3001, 12, 500}, {4096, 12, 767},
                                                    {8192, 16, 255}, {16, 8192, 255},
                                                    {4096, 12, CM__GEMM_REALIGN_A1_THIN_MIN_K}};
        cm__gemm_align1_set_for_tests(1);
        for (size_t i = 0; i < sizeof th / sizeof th[0]; ++i) {
            cm__gemm_args_t q = col_major(CM_GEMM_OP_N, th[i].m, th[i].n, th[i].k, CM__GEMM_F32);
            if (th[i].k % 4 == 0) { /* K-contiguous rows of 255 elements: off 16 bytes */
                if (q.a_kmajor) q.lda = 255;
                if (q.b_kmajor) q.ldb = 255;
            }
            assert_true(2.0 * th[i].m * th[i].n * th[i].k < CM__GEMM_REALIGN_MIN_FLOPS);
            cm__gemm_choice_t ch = cm__gemm_select(CM_GEMM_TF32, 9, 0, 132, &q, 1, NULL);
            if (ch.kernel != CM__GEMM_KERNEL_FFMA)
                fail_msg("%dx%dx%d runs %s", th[i].m, th[i].n, th[i].k, cm__gemm_choice_name(ch));
            cm__gemm_choice_t a1 = {-1, -1};
            if (cm__gemm_realign_mode(CM_GEMM_TF32, 9, 0, 132, &q, ch, 1, NULL, &a1) !=
                CM__REALIGN_ALIGN1)
                fail_msg("%dx%dx%d: no align1 form", th[i].m, th[i].n, th[i].k);
            assert_int_equal(a1.kernel, CM__GEMM_KERNEL_MMA);
            assert_int_equal(a1.config, CM__MMA_64x64);
            a1 = (cm__gemm_choice_t){-1, -1};
            assert_int_equal(realign_of(CM_GEMM_TF32, 8, 108, &q, 0, &a1),
                             CM__REALIGN_ALIGN1); /* sm_80 alike */
            assert_int_equal(a1.config, CM__MMA_64x64);
            assert_int_equal(cm__gemm_realign_mode(CM_GEMM_FP32, 9, 0, 132, &q, ch, 1, NULL, &a1),
                             CM__REALIGN_NONE);
            cm__gemm_align1_set_for_tests(0);
            assert_int_equal(cm__gemm_realign_mode(CM_GEMM_TF32, 9, 0, 132, &q, ch, 1, NULL, &a1),
                             CM__REALIGN_NONE);
            cm__gemm_align1_set_for_tests(1);
        }
        static const struct { int m, n, k; } no[] = {{4096, 12, CM__GEMM_REALIGN_A1_THIN_MIN_K - 1},
                                                    {4096, CM__GEMM_SKINNY_TC_TF32 - 1, 255},
                                                    {4096, CM__GEMM_SKINNY_MAX + 1, 255}};
        for (size_t i = 0; i < sizeof no / sizeof no[0]; ++i) {
            cm__gemm_args_t q = col_major(CM_GEMM_OP_N, no[i].m, no[i].n, no[i].k, CM__GEMM_F32);
            assert_true(2.0 * no[i].m * no[i].n * no[i].k < CM__GEMM_REALIGN_MIN_FLOPS);
            cm__gemm_choice_t a1 = {-1, -1};
            assert_int_equal(realign_of(CM_GEMM_TF32, 9, 132, &q, 1, &a1), CM__REALIGN_NONE);
        }
        cm__gemm_args_t bq = col_major(CM_GEMM_OP_N, 4096, 12, 255, CM__GEMM_F32);
        bq.batch = 2; /* a batch of two (under the floor times two) */
        bq.stride_a = bq.lda * (int64_t)(bq.a_kmajor ? bq.m : bq.k);
        bq.stride_b = bq.ldb * (int64_t)(bq.b_kmajor ? bq.n : bq.k);
        bq.stride_c = bq.ldc * (int64_t)bq.m;
        cm__gemm_choice_t a1 = {-1, -1};
        assert_int_equal(realign_of(CM_GEMM_TF32, 9, 132, &bq, 1, &a1), CM__REALIGN_NONE);
        cm__gemm_align1_set_for_tests(-1);
    }
    EXPECT_SKINNY(NAME(CM_GEMM_TF32, 7, sk_m, 0, NULL));
    EXPECT_SKINNY(NAME(CM_GEMM_FP32, 9, sk_m, 1, NULL));
    EXPECT_SKINNY(NAME(CM_GEMM_FP32_3XTF32, 9, sk_m, 1, NULL));
    /* bf16 on Hopper, the long side on A (K-contiguous, 16-byte rows), B MN-major: the wgmma
     * kernel, B staged (rows of 7: "sm90+pack") or read as it is (rows of 8: "sm90+bt") */
    {
        cm__gemm_args_t sb = args(4096, 7, 4096, 1, 0, CM__GEMM_BF16, 4096);
        sb.ldb = 7;
        assert_string_equal(NAME(CM_GEMM_BF16, 9, sb, 1, NULL), "sm90+pack");
        assert_string_equal(NAME(CM_GEMM_BF16_OUT_BF16, 9, sb, 1, NULL), "sm90+pack");
        sb.ldb = 8;
        assert_string_equal(NAME(CM_GEMM_BF16, 9, sb, 1, NULL), "sm90+bt");
        EXPECT_SKINNY(NAME(CM_GEMM_BF16, 9, sb, 0, NULL)); /* the wgmma kernel not built */
        EXPECT_SKINNY(NAME(CM_GEMM_BF16, 8, sb, 0, NULL)); /* not Hopper */
        EXPECT_SKINNY(NAME(CM_GEMM_BF16, 9, sb, 1, "skinny"));
        cm__gemm_args_t t = sb; /* K under CM__GEMM_SM90_LONG_K */
        t.k = t.lda = 1000;
        EXPECT_SKINNY(NAME(CM_GEMM_BF16, 9, t, 1, NULL));
        t = sb; /* A's rows not whole 16 bytes: it would be staged too */
        t.lda = 4093;
        EXPECT_SKINNY(NAME(CM_GEMM_BF16, 9, t, 1, NULL));
        t = sb; /* float operands: skinny */
        t.in_type = CM__GEMM_F32;
        EXPECT_SKINNY(NAME(CM_GEMM_FP32, 9, t, 1, NULL));
        /* the long side on B (m < n), A MN-major: not measured, skinny */
        cm__gemm_args_t lb = args(7, 4096, 4096, 0, 1, CM__GEMM_BF16, 8);
        EXPECT_SKINNY(NAME(CM_GEMM_BF16, 9, lb, 1, NULL));
    }
    assert_string_not_equal(NAME(CM_GEMM_FP32, 9, wide17, 1, NULL), "skinny");
    assert_string_not_equal(NAME(CM_GEMM_FP32, 9, few, 1, NULL), "skinny");
    assert_string_equal(NAME(CM_GEMM_FP32, 9, sk_k0, 1, NULL), "ffma:32x64x16");
    /* a batch counts its rows: 64 matrices of 7 x 8 take it */
    cm__gemm_args_t sk_batch = args(7, 8, 512, 1, 1, CM__GEMM_F32, 512);
    sk_batch.batch = 64;
    sk_batch.stride_a = 7 * 512;
    sk_batch.stride_b = 8 * 4096;
    sk_batch.stride_c = 7 * 8;
    EXPECT_SKINNY(NAME(CM_GEMM_BF16, 9, sk_batch, 1, NULL));
    assert_string_equal(NAME(CM_GEMM_FP32, 9, sk_m, 1, "ffma:64x64x16"), "ffma:64x64x16");
    assert_string_equal(NAME(CM_GEMM_FP32, 9, sk_m, 1, "skinny"), "skinny");
    assert_string_equal(NAME(CM_GEMM_FP32, 9, big, 1, "skinny"), "ffma:128x128x16q3");
    assert_string_equal(NAME(CM_GEMM_TF32, 9, big, 1, "skinny"), "sm90");
    /* forced, it takes any shape whose small side is 1 .. 16 (k >= 1): a vector side, few rows */
    assert_string_equal(NAME(CM_GEMM_FP32, 9, row_vec, 1, "skinny"), "skinny");
    assert_string_equal(NAME(CM_GEMM_BF16, 8, few, 1, "skinny"), "skinny");
    assert_string_equal(NAME(CM_GEMM_FP32, 9, sk_k0, 1, "skinny"), "ffma:32x64x16");
    cm__gemm_choice_t skc = {-1, -1};
    assert_true(cm__gemm_parse_name("skinny", &skc));
    assert_int_equal(skc.kernel, CM__GEMM_KERNEL_SKINNY);

    /* names round-trip; unknown names are refused */
    for (int i = 0; i < CM__FFMA_COUNT; ++i) {
        cm__gemm_choice_t c = {CM__GEMM_KERNEL_FFMA, i}, d = {-1, -1};
        assert_true(cm__gemm_parse_name(cm__gemm_choice_name(c), &d));
        assert_int_equal(d.kernel, c.kernel);
        assert_int_equal(d.config, c.config);
        int bm = 0, bn = 0;
        cm__gemm_ffma_tile(i, &bm, &bn);
        assert_true(bm >= 32 && bn >= 64);
    }
    for (int i = 0; i < CM__MMA_COUNT; ++i) {
        cm__gemm_choice_t c = {CM__GEMM_KERNEL_MMA, i}, d = {-1, -1};
        assert_true(cm__gemm_parse_name(cm__gemm_choice_name(c), &d));
        assert_int_equal(d.config, i);
    }
    cm__gemm_choice_t d;
    assert_false(cm__gemm_parse_name("ffma:1x1x1", &d));
    assert_false(cm__gemm_parse_name(NULL, &d));
    /* every table entry can be named */
    for (int a = 0; a < CM__GEMM_ARCH_COUNT; ++a)
        for (int f = 0; f < CM__GEMM_FAM_COUNT; ++f)
            for (int s = 0; s < CM__GEMM_SHAPE_COUNT; ++s) {
                cm__gemm_choice_t c = cm__gemm_table_entry(a, f, s);
                assert_string_not_equal(cm__gemm_choice_name(c), "?");
                if (f == CM__GEMM_FAM_FP32) assert_int_equal(c.kernel, CM__GEMM_KERNEL_FFMA);
                if (a == CM__GEMM_ARCH_SM75) assert_int_equal(c.kernel, CM__GEMM_KERNEL_FFMA);
            }
}

/* The shipped set (kernels/gemm.h, CM__FFMA_CONFIGS' ship column) holds everything the
 * library can select: the table's entries, the demotions of cm__gemm_select for every kind of
 * problem and override, and the fallbacks of those configurations. A table entry or a demotion
 * naming a configuration outside it fails here, in either build. */
static int built_name(const char *name) {
    cm__gemm_choice_t c;
    if (!cm__gemm_parse_name(name, &c)) return 0;
    return c.kernel != CM__GEMM_KERNEL_FFMA || cm__gemm_ffma_built(c.config);
}

static void expect_shipped(cm__gemm_choice_t c, const char *what) {
    if (c.kernel == CM__GEMM_KERNEL_MMA && !cm__gemm_mma_built(c.config))
        fail_msg("%s selects %s, which this build did not compile (kernels/gemm.h)", what,
                 cm__gemm_choice_name(c));
    if (c.kernel != CM__GEMM_KERNEL_FFMA) return;
    if (!cm__gemm_ffma_shipped(c.config))
        fail_msg("%s selects %s, which is not in the shipped set (kernels/gemm.h)", what,
                 cm__gemm_choice_name(c));
}

static void test_shipped_set(void **state) {
    (void)state;
    /* the table, including its answer to an index out of range */
    for (int a = 0; a < CM__GEMM_ARCH_COUNT; ++a)
        for (int f = 0; f < CM__GEMM_FAM_COUNT; ++f)
            for (int sh = 0; sh < CM__GEMM_SHAPE_COUNT; ++sh)
                expect_shipped(cm__gemm_table_entry(a, f, sh), "the dispatch table");
    expect_shipped(cm__gemm_table_entry(CM__GEMM_ARCH_COUNT, 0, 0), "cm__gemm_table_entry");

    /* every configuration: names round-trip, tiles known; the fallback of a shipped one is
     * shipped; shipped ones are built in every build, all of them in a tuning build */
    int shipped = 0;
    for (int i = 0; i < CM__FFMA_COUNT; ++i) {
        cm__gemm_choice_t c = {CM__GEMM_KERNEL_FFMA, i}, d = {-1, -1};
        const char *name = cm__gemm_choice_name(c);
        assert_int_equal(strncmp(name, "ffma:", 5), 0);
        assert_true(cm__gemm_parse_name(name, &d));
        assert_int_equal(d.kernel, CM__GEMM_KERNEL_FFMA);
        assert_int_equal(d.config, i);
        const int fb = cm__gemm_ffma_fallback(i);
        assert_true(fb >= 0 && fb < CM__FFMA_COUNT);
        int bm = 0, bn = 0, fbm = 0, fbn = 0;
        cm__gemm_ffma_tile(i, &bm, &bn);
        cm__gemm_ffma_tile(fb, &fbm, &fbn);
        assert_true(fbm > 0 && fbm <= bm && fbn > 0 && fbn <= bn);
        if (cm__gemm_ffma_shipped(i)) {
            ++shipped;
            assert_true(cm__gemm_ffma_shipped(fb));
            assert_true(cm__gemm_ffma_built(i));
        }
        assert_int_equal(cm__gemm_ffma_built(i), cm__gemm_ffma_shipped(i) || CM_GEMM_TUNING);
    }
    assert_int_equal(cm__gemm_ffma_shipped(-1), 0);
    assert_int_equal(cm__gemm_ffma_built(CM__FFMA_COUNT), 0);
    assert_int_equal(cm__gemm_ffma_fallback(CM__FFMA_COUNT), -1);
    assert_true(shipped >= 4 && shipped < CM__FFMA_COUNT);
    /* the tiles cm__gemm_ffma's BF16-input kernels and cm__gemm_launch's mma fallbacks use */
    assert_true(cm__gemm_ffma_shipped(CM__FFMA_128x128x8));
    assert_true(cm__gemm_ffma_shipped(CM__FFMA_64x64x16));

    /* every demotion: each precision, architecture (sm_75 .. sm_120), shape class and vector
     * shape, K = 0, TN / NN / NT, aligned and not, with and without the Hopper kernel, with no
     * override and with every name this build can force */
    const char *overrides[CM__FFMA_COUNT + CM__MMA_COUNT + 6];
    int nov = 0;
    overrides[nov++] = NULL;
    overrides[nov++] = "sm90";
    overrides[nov++] = "sm90+pack";
    overrides[nov++] = "gemv";
    overrides[nov++] = "bogus";
    for (int i = 0; i < CM__MMA_COUNT; ++i)
        overrides[nov++] = cm__gemm_choice_name((cm__gemm_choice_t){CM__GEMM_KERNEL_MMA, i});
    for (int i = 0; i < CM__FFMA_COUNT; ++i)
        if (cm__gemm_ffma_shipped(i))
            overrides[nov++] = cm__gemm_choice_name((cm__gemm_choice_t){CM__GEMM_KERNEL_FFMA, i});
    static const int shapes[][3] = {{512, 512, 512},  {1024, 1024, 1024}, {8192, 8192, 128},
                                    {65536, 128, 128}, {4096, 4096, 4096}, {4093, 4093, 4093},
                                    {4096, 4096, 0},   {1, 4096, 4096},    {4096, 1, 0},
                                    {7, 9, 3}};
    static const int majors[] = {7, 8, 9, 10, 12};
    size_t checked = 0;
    for (int prec = 0; prec < 4; ++prec)
        for (size_t mj = 0; mj < sizeof majors / sizeof majors[0]; ++mj)
            for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; ++sh)
                for (int lay = 0; lay < 3; ++lay)
                    for (int al = 0; al < 2; ++al)
                        for (int sm90 = 0; sm90 < 2; ++sm90)
                            for (int o = 0; o < nov; ++o) {
                                cm__gemm_args_t p =
                                    args(shapes[sh][0], shapes[sh][1], shapes[sh][2], lay != 1,
                                         lay == 0, prec >= CM_GEMM_BF16 ? CM__GEMM_BF16
                                                                        : CM__GEMM_F32,
                                         al ? 4096 : 4093);
                                const cm__gemm_choice_t c = cm__gemm_select(
                                    prec, majors[mj], 0, 132, &p, sm90, overrides[o]);
                                char what[160];
                                snprintf(what, sizeof what,
                                         "precision %d on sm_%d0, %dx%dx%d, override %s", prec,
                                         majors[mj], p.m, p.n, p.k,
                                         overrides[o] ? overrides[o] : "none");
                                expect_shipped(c, what);
                                ++checked;
                            }
    assert_true(checked > 10000);

    /* a forced configuration this build did not compile is ignored (the table decides, as for
     * an unknown name); in a tuning build it is forced */
    cm__gemm_args_t big = args(4096, 4096, 4096, 1, 1, CM__GEMM_F32, 4096);
    cm__gemm_args_t tiny = args(512, 512, 512, 1, 1, CM__GEMM_F32, 512);
    cm__gemm_args_t vec = args(1, 4096, 4096, 1, 0, CM__GEMM_F32, 4096);
    int not_built = 0;
    for (int i = 0; i < CM__FFMA_COUNT; ++i) {
        const char *name = cm__gemm_choice_name((cm__gemm_choice_t){CM__GEMM_KERNEL_FFMA, i});
        assert_int_equal(built_name(name), cm__gemm_ffma_built(i));
        if (cm__gemm_ffma_built(i)) {
            assert_string_equal(NAME(CM_GEMM_FP32, 9, big, 1, name), name);
            assert_string_equal(NAME(CM_GEMM_FP32, 9, vec, 1, name), name);
        } else {
            ++not_built;
            assert_string_equal(NAME(CM_GEMM_FP32, 9, big, 1, name), "ffma:128x128x16q3");
            assert_string_equal(NAME(CM_GEMM_FP32, 7, big, 1, name), "ffma:128x128x8");
            assert_string_equal(NAME(CM_GEMM_FP32, 9, tiny, 1, name), "ffma:32x64x16");
            assert_string_equal(NAME(CM_GEMM_TF32, 9, big, 1, name), "sm90");
            assert_string_equal(NAME(CM_GEMM_FP32, 9, vec, 1, name), "gemv");
        }
    }
    assert_int_equal(not_built, CM_GEMM_TUNING ? 0 : CM__FFMA_COUNT - shipped);
    /* mma.sync: the two tiles the table selects in every build, 128 x 64 in tuning builds only
     * (a forced name of it is ignored elsewhere, as an FFMA one) */
    assert_int_equal(cm__gemm_mma_built(CM__MMA_128x128), 1);
    assert_int_equal(cm__gemm_mma_built(CM__MMA_64x64), 1);
    assert_int_equal(cm__gemm_mma_built(CM__MMA_128x64), CM_GEMM_TUNING != 0);
    assert_int_equal(cm__gemm_mma_built(-1), 0);
    assert_int_equal(cm__gemm_mma_built(CM__MMA_COUNT), 0);
    for (int i = 0; i < CM__MMA_COUNT; ++i) {
        const char *name = cm__gemm_choice_name((cm__gemm_choice_t){CM__GEMM_KERNEL_MMA, i});
        assert_string_equal(NAME(CM_GEMM_TF32, 9, big, 1, name),
                            cm__gemm_mma_built(i) ? name : "sm90");
        assert_string_equal(NAME(CM_GEMM_TF32, 8, big, 0, name),
                            cm__gemm_mma_built(i) ? name : "mma:128x128");
    }
}

static void test_config_name(void **state) {
    (void)state;
    const char *name = NULL;
    EXPECT_FAIL(cm_gemm_config_name(0, F32, R, N_, N_, 8, 8, 8, NULL), INV, "name is NULL");
    EXPECT_FAIL(cm_gemm_config_name(0, (cm_gemm_precision_t)9, R, N_, N_, 8, 8, 8, &name), INV,
                "unknown precision 9");
    /* the simulated devices report compute capability 0: the sm_75 row (FFMA); the dispatch's
     * own choice, whatever CUDAMODEL_GEMM_CONFIG the environment holds (an empty test
     * override forces nothing and hides it) */
    cm__gemm_config_override_set_for_tests("");
    const cm_status_t st =
        cm_gemm_config_name(0, CM_GEMM_BF16, R, N_, T_, 4096, 4096, 4096, &name);
    cm__gemm_config_override_set_for_tests(NULL);
    CM_ASSERT_OK(st);
    assert_string_equal(name, "ffma:128x128x8");
}

/* cm_gemm_explain of a column-major FP32 product op_a(A) B with C (m x n) of ldc m, one
 * matrix, no offsets (test_explain's pitched-copy cases) */
static void explain_pitched(cm_gemm_op_t op_a, size_t m, size_t n, size_t k, const cm_buffer_t *a,
                            size_t lda, const cm_buffer_t *b, size_t ldb, const cm_buffer_t *c,
                            char *text, size_t size) {
    size_t len = 0;
    CM_ASSERT_OK(cm_gemm_explain(F32, CO, op_a, N_, m, n, k, a, 0, lda, 0, b, 0, ldb, 0, c, 0, m,
                                 0, 1, text, size, &len));
}

/* cm_gemm_explain: the checks of cm_gemm_strided_batched, then the plan for the real
 * operands, in the caller's names (on simulated devices whose compute capability and
 * multiprocessor count the test sets). */
static void explain_facts(int major, int minor, int sms) {
    fake.cc_major = major;
    fake.cc_minor = minor;
    fake.sm_count = sms;
    cm__gemm_device_facts_forget_for_tests();
}

static void test_explain(void **state) {
    (void)state;
    char text[1024];
    size_t len = 0;
    cm__gemm_config_override_set_for_tests(""); /* the dispatch's own choice */
    cm__gemm_splitk_override_set_for_tests(-1);
    /* arguments: a NULL buf with a size, and the refusals of cm_gemm_strided_batched with
     * their messages (the text stays empty) */
    EXPECT_FAIL(cm_gemm_explain(F32, R, N_, N_, 8, 8, 4, g.x, 0, 4, 0, g.y, 0, 8, 0, g.z, 0, 8, 0,
                                1, NULL, 8, &len),
                INV, "buf is NULL");
    strcpy(text, "junk");
    EXPECT_FAIL(cm_gemm_explain((cm_gemm_precision_t)7, R, N_, N_, 8, 8, 4, g.x, 0, 4, 0, g.y, 0,
                                8, 0, g.z, 0, 8, 0, 1, text, sizeof text, &len),
                INV, "precision");
    assert_string_equal(text, "");
    assert_int_equal(len, 0);
    EXPECT_FAIL(cm_gemm_explain(F32, R, N_, N_, 8, 8, 4, g.x, 0, 4, 0, g.y, 0, 8, 0, g.x, 0, 8, 0,
                                1, text, sizeof text, &len),
                INV, "overlaps A");
    EXPECT_FAIL(cm_gemm_explain(F32, R, N_, N_, 8, 8, 4, g.x, 0, 4, 0, g.y, 0, 8, 0, g.x1, 0, 8,
                                0, 1, text, sizeof text, &len),
                INV, "is on device 0 but C is on device 1");
    EXPECT_FAIL(cm_gemm_explain(F32, R, N_, N_, 8, 8, 4, g.x, 0, 3, 0, g.y, 0, 8, 0, g.z, 0, 8, 0,
                                1, text, sizeof text, &len),
                INV, "lda");
    /* nothing to run */
    CM_ASSERT_OK(cm_gemm_explain(F32, R, N_, N_, 0, 8, 4, g.x, 0, 4, 0, g.y, 0, 8, 0, g.z, 0, 8,
                                 0, 1, text, sizeof text, &len));
    assert_string_equal(text, "nothing to run: m is 0, so the call returns at once");
    assert_int_equal(len, strlen(text));

    /* TF32 on an sm_80 device of 108 multiprocessors, 512 x 512 x 1001, row-major NN: A (512 x
     * 1001) has rows of 1001 floats, so the tensor-core kernels need a copy first (without the
     * align1 form, whatever the build: it is tested on its own below) */
    cm__gemm_align1_set_for_tests(0);
    const size_t m = 512, n = 512, k = 1001;
    cm_buffer_t *a = NULL, *b = NULL, *c = NULL;
    CM_ASSERT_OK(cm_buffer_create(g.dev0, m * k * 4, &a));
    CM_ASSERT_OK(cm_buffer_create(g.dev0, k * n * 4, &b));
    CM_ASSERT_OK(cm_buffer_create(g.dev0, m * n * 4, &c));
    explain_facts(8, 0, 108);
    CM_ASSERT_OK(cm_gemm_explain(CM_GEMM_TF32, R, N_, N_, m, n, k, a, 0, k, 0, b, 0, n, 0, c, 0,
                                 n, 0, 1, text, sizeof text, &len));
    assert_int_equal(len, strlen(text));
    assert_non_null(strstr(text, "mma:"));
    assert_non_null(strstr(text, "first A is copied into"));
    /* the staged rows: whole 128-byte lines from K of 128 bytes (cm__gemm_ldk) */
    assert_non_null(strstr(text, "K-contiguous with rows of whole 128-byte lines, since"));
    assert_non_null(strstr(text, "lda = 1001 is not a multiple of 4 elements (16 bytes; 1004 "
                               "would be)"));
    assert_non_null(strstr(text, "without the copy: ffma:"));
    /* mma:64x64 on 512 x 512, TF32 below K = 1024: 64 tiles in 2 x 108 slots -> 3 parts */
    assert_non_null(strstr(text, "K = 1001 is split into 3 parts of 352 (the last of 297)"));
    assert_non_null(strstr(text, " tiles of 64 x 64 over the 3 parts of C, "));
    assert_non_null(strstr(text, "mma:64x64: "));
    assert_non_null(strstr(text, "[compute capability 8.0, 108 multiprocessors]"));
    assert_null(strstr(text, "ldb"));
    /* the same call with the TF32 align1 form: the tiles read A as it is, no copy */
    cm__gemm_align1_set_for_tests(1);
    CM_ASSERT_OK(cm_gemm_explain(CM_GEMM_TF32, R, N_, N_, m, n, k, a, 0, k, 0, b, 0, n, 0, c, 0,
                                 n, 0, 1, text, sizeof text, &len));
    assert_non_null(strstr(text, "mma:64x64: "));
    assert_non_null(strstr(text, "; A and B are read as they are by the tiles' align1 form, every "
                                 "element a 4-byte copy into shared memory, since the 16-byte "
                                 "copies need 16-byte rows (lda = 1001 is not a multiple of 4 "
                                 "elements"));
    assert_non_null(strstr(text, "); no copy to such rows first"));
    assert_null(strstr(text, "copied into"));
    assert_null(strstr(text, "of scratch from the device's pool"));
    assert_non_null(strstr(text, " tiles of 64 x 64 over C, "));
    /* forced mma:64x64: the align1 form, named as such, and the override */
    cm__gemm_config_override_set_for_tests("mma:64x64");
    CM_ASSERT_OK(cm_gemm_explain(CM_GEMM_TF32, R, N_, N_, m, n, k, a, 0, k, 0, b, 0, n, 0, c, 0,
                                 n, 0, 1, text, sizeof text, &len));
    assert_non_null(strstr(text, "mma:64x64: "));
    assert_non_null(strstr(text, "by the tiles' align1 form"));
    assert_non_null(strstr(text, "(forced by CUDAMODEL_GEMM_CONFIG=mma:64x64)"));
    assert_null(strstr(text, "copied into"));
    cm__gemm_align1_set_for_tests(0); /* off: the forced tile falls back to FFMA */
    CM_ASSERT_OK(cm_gemm_explain(CM_GEMM_TF32, R, N_, N_, m, n, k, a, 0, k, 0, b, 0, n, 0, c, 0,
                                 n, 0, 1, text, sizeof text, &len));
    assert_non_null(strstr(text, "ffma:"));
    assert_null(strstr(text, "align1"));
    cm__gemm_config_override_set_for_tests(NULL);
    cm__gemm_align1_set_for_tests(1);
    /* BF16 has no align1 form: copied as before */
    CM_ASSERT_OK(cm_gemm_explain(CM_GEMM_BF16, R, N_, N_, m, n, k, a, 0, k, 0, b, 0, n, 0, c, 0,
                                 n, 0, 1, text, sizeof text, &len));
    assert_non_null(strstr(text, "first A is copied into"));
    assert_null(strstr(text, "align1"));
    /* K of 66 bytes (33 BF16 elements): rows of whole 16 bytes */
    CM_ASSERT_OK(cm_gemm_explain(CM_GEMM_BF16, R, N_, N_, m, n, 33, a, 0, 33, 0, b, 0, n, 0, c,
                                 0, n, 0, 1, text, sizeof text, &len));
    assert_non_null(strstr(text, "first A is copied into "));
    assert_non_null(strstr(text, "K-contiguous with rows of whole 16 bytes, since"));
    cm__gemm_align1_set_for_tests(0);
    /* column-major storage, where B (1001 x 512, ldb = 1001) has the rows without 16 bytes:
     * the text names the caller's B and ldb (the kernels' form swaps A and B) */
    CM_ASSERT_OK(cm_gemm_explain(CM_GEMM_TF32, CO, N_, N_, m, n, k, a, 0, m, 0, b, 0, k, 0, c, 0,
                                 m, 0, 1, text, sizeof text, &len));
    assert_non_null(strstr(text, "first B is copied into"));
    assert_non_null(strstr(text, "ldb = 1001 is not a multiple of 4 elements"));
    assert_null(strstr(text, "lda ="));
    /* a misaligned offset is named (4 bytes past a 16-byte boundary), with its fix */
    CM_ASSERT_OK(cm_gemm_explain(CM_GEMM_TF32, R, N_, N_, m, n, 1000, a, 4, 1000, 0, b, 0, n, 0,
                                 c, 0, n, 0, 1, text, sizeof text, &len));
    assert_non_null(strstr(text, "A starts 4 bytes past a 16-byte boundary"));
    /* truncation: snprintf rules, the full length still reported; size 0 with no buffer */
    char small[16];
    size_t full = 0;
    CM_ASSERT_OK(cm_gemm_explain(CM_GEMM_TF32, R, N_, N_, m, n, k, a, 0, k, 0, b, 0, n, 0, c, 0,
                                 n, 0, 1, small, sizeof small, &full));
    assert_int_equal(strlen(small), sizeof small - 1);
    assert_int_equal(full, len > 0 ? full : 0);
    assert_true(full > sizeof small);
    size_t needed = 0;
    CM_ASSERT_OK(cm_gemm_explain(CM_GEMM_TF32, R, N_, N_, m, n, k, a, 0, k, 0, b, 0, n, 0, c, 0,
                                 n, 0, 1, NULL, 0, &needed));
    assert_int_equal(needed, full);

    /* TF32 1024^3 on a Hopper-sized device, with the Hopper kernel built: column-major NN
     * reads the caller's A (M-contiguous, 16-byte rows) as it is by the register-A form of the
     * transposed product; row-major TT the same A directly; a misaligned A (lda 1001) is
     * transposed first */
    if (CM_HAVE_GEMM_SM90) {
        cm_buffer_t *a3 = NULL, *b3 = NULL, *c3 = NULL;
        CM_ASSERT_OK(cm_buffer_create(g.dev0, 1024 * 1024 * 4, &a3));
        CM_ASSERT_OK(cm_buffer_create(g.dev0, 1024 * 1024 * 4, &b3));
        CM_ASSERT_OK(cm_buffer_create(g.dev0, 1024 * 1024 * 4, &c3));
        explain_facts(9, 0, 132);
        CM_ASSERT_OK(cm_gemm_explain(CM_GEMM_TF32, CO, N_, N_, 1024, 1024, 1024, a3, 0, 1024, 0,
                                     b3, 0, 1024, 0, c3, 0, 1024, 0, 1, text, sizeof text,
                                     &len));
        assert_non_null(strstr(text, "sm90+at: "));
        assert_non_null(strstr(text, "; A is read as it is by the register-A form (the product "
                                     "runs transposed"));
        assert_null(strstr(text, "first "));
        CM_ASSERT_OK(cm_gemm_explain(CM_GEMM_TF32, R, T_, T_, 1024, 1024, 1024, a3, 0, 1024, 0,
                                     b3, 0, 1024, 0, c3, 0, 1024, 0, 1, text, sizeof text,
                                     &len));
        assert_non_null(strstr(text, "; A is read as it is by the register-A form; "));
        assert_null(strstr(text, "first "));
        CM_ASSERT_OK(cm_gemm_explain(CM_GEMM_TF32, CO, N_, N_, 1000, 1000, 1000, a3, 0, 1001, 0,
                                     b3, 0, 1000, 0, c3, 0, 1000, 0, 1, text, sizeof text,
                                     &len));
        assert_non_null(strstr(text, "sm90+pack: "));
        assert_non_null(strstr(text, "first A is transposed into"));
        CM_ASSERT_OK(cm_buffer_destroy(a3));
        CM_ASSERT_OK(cm_buffer_destroy(b3));
        CM_ASSERT_OK(cm_buffer_destroy(c3));
    }

    /* FP32 64 x 64 x 4096 on a Hopper-sized device: C's few tiles split K, and the text says
     * how (parts, their reduction) */
    cm_buffer_t *a2 = NULL, *b2 = NULL, *c2 = NULL;
    CM_ASSERT_OK(cm_buffer_create(g.dev0, 64 * 4096 * 4, &a2));
    CM_ASSERT_OK(cm_buffer_create(g.dev0, 4096 * 64 * 4, &b2));
    CM_ASSERT_OK(cm_buffer_create(g.dev0, 64 * 64 * 4, &c2));
    explain_facts(9, 0, 132);
    CM_ASSERT_OK(cm_gemm_explain(F32, R, N_, T_, 64, 64, 4096, a2, 0, 4096, 0, b2, 0, 4096, 0, c2,
                                 0, 64, 0, 1, text, sizeof text, &len));
    assert_non_null(strstr(text, "ffma:"));
    assert_non_null(strstr(text, "FP32 FMA tiles on the CUDA cores"));
    assert_non_null(strstr(text, "K = 4096 is split into"));
    assert_non_null(strstr(text, " parts of C, ")); /* the tiles of every part counted */
    assert_non_null(strstr(text, "132 multiprocessors"));
    assert_non_null(strstr(text, "since C alone would leave most of the 132 multiprocessors "
                                 "idle"));
    /* TF32 column-major "NN" 8500 x 40 x 1000 on mma:64x64: 133 tiles, one row of them, more
     * than half of the 264 resident slots: 3 parts, and the text says why */
    {
        cm_buffer_t *a3 = NULL, *b3 = NULL, *c3 = NULL;
        CM_ASSERT_OK(cm_buffer_create(g.dev0, (size_t)8500 * 1000 * 4, &a3));
        CM_ASSERT_OK(cm_buffer_create(g.dev0, (size_t)1000 * 40 * 4, &b3));
        CM_ASSERT_OK(cm_buffer_create(g.dev0, (size_t)8500 * 40 * 4, &c3));
        CM_ASSERT_OK(cm_gemm_explain(CM_GEMM_TF32, CO, N_, N_, 8500, 40, 1000, a3, 0, 8500, 0,
                                     b3, 0, 1000, 0, c3, 0, 8500, 0, 1, text, sizeof text,
                                     &len));
        assert_non_null(strstr(text, "mma:64x64: "));
        assert_non_null(strstr(text, "K = 1000 is split into 3 parts of 352 (the last of 296) "
                                     "since C's one row of tiles would give most of the 132 "
                                     "multiprocessors one block where each holds 2"));
        CM_ASSERT_OK(cm_buffer_destroy(a3));
        CM_ASSERT_OK(cm_buffer_destroy(b3));
        CM_ASSERT_OK(cm_buffer_destroy(c3));
    }
    /* "NN" 8800 x 64 x 900 (the Hopper kernel's register-A form by rule 3 before the band's
     * exception): 138 tiles, mma:64x64 in 3 parts with the same reason; and
     * CM_GEMM_FP32_3XTF32 over 96 x 4096 x 512 (a short side of at most 128): the FP32
     * kernels, and the text says why (both with the Hopper kernel built: the exception
     * replaces it, and without it 3xTF32 gives that as the reason) */
    if (CM_HAVE_GEMM_SM90) {
        cm_buffer_t *a3 = NULL, *b3 = NULL, *c3 = NULL;
        CM_ASSERT_OK(cm_buffer_create(g.dev0, (size_t)8800 * 900 * 4, &a3));
        CM_ASSERT_OK(cm_buffer_create(g.dev0, (size_t)512 * 4096 * 4, &b3));
        CM_ASSERT_OK(cm_buffer_create(g.dev0, (size_t)8800 * 64 * 4, &c3));
        CM_ASSERT_OK(cm_gemm_explain(CM_GEMM_TF32, CO, N_, N_, 8800, 64, 900, a3, 0, 8800, 0,
                                     b3, 0, 900, 0, c3, 0, 8800, 0, 1, text, sizeof text,
                                     &len));
        assert_non_null(strstr(text, "mma:64x64: "));
        assert_non_null(strstr(text, "K = 900 is split into 3 parts"));
        assert_non_null(strstr(text, "since C's one row of tiles would give most of the 132 "
                                     "multiprocessors one block where each holds 2"));
        CM_ASSERT_OK(cm_gemm_explain(CM_GEMM_FP32_3XTF32, CO, N_, N_, 96, 4096, 512, a3, 0, 96,
                                     0, b3, 0, 512, 0, c3, 0, 96, 0, 1, text, sizeof text,
                                     &len));
        assert_null(strstr(text, "sm90+3xtf32"));
        assert_non_null(strstr(text, "CM_GEMM_FP32_3XTF32 runs this on the FP32 kernels"));
        assert_non_null(strstr(text, "C's short side (96) is at most 128, which its "
                                     "tensor-core path's 128 x 192 tiles would cover one tile "
                                     "deep, partly idle; the FP32 tiles fit it"));
        CM_ASSERT_OK(cm_buffer_destroy(a3));
        CM_ASSERT_OK(cm_buffer_destroy(b3));
        CM_ASSERT_OK(cm_buffer_destroy(c3));
    }
    /* a forced configuration is named as forced; a forced single part is not split */
    cm__gemm_config_override_set_for_tests("ffma:64x64x16");
    cm__gemm_splitk_override_set_for_tests(1);
    CM_ASSERT_OK(cm_gemm_explain(F32, R, N_, T_, 64, 64, 4096, a2, 0, 4096, 0, b2, 0, 4096, 0, c2,
                                 0, 64, 0, 1, text, sizeof text, &len));
    assert_non_null(strstr(text, "ffma:64x64x16: FP32 FMA tiles"));
    assert_non_null(strstr(text, "(forced by CUDAMODEL_GEMM_CONFIG=ffma:64x64x16)"));
    assert_null(strstr(text, "split"));
    cm__gemm_config_override_set_for_tests("");
    cm__gemm_splitk_override_set_for_tests(3);
    CM_ASSERT_OK(cm_gemm_explain(F32, R, N_, T_, 64, 64, 4096, a2, 0, 4096, 0, b2, 0, 4096, 0, c2,
                                 0, 64, 0, 1, text, sizeof text, &len));
    assert_non_null(strstr(text, "K = 4096 is split into 3 parts of 1376 (the last of 1344) as "
                                 "CUDAMODEL_GEMM_SPLITK=3 asks"));
    cm__gemm_splitk_override_set_for_tests(-1);
    /* K = 0: no product */
    CM_ASSERT_OK(cm_gemm_explain(F32, R, N_, N_, 8, 8, 0, g.x, 0, 1, 0, g.y, 0, 8, 0, g.z, 0, 8, 0,
                                 1, text, sizeof text, &len));
    assert_non_null(strstr(text, "; K is 0: C = beta C, no product"));
    /* a device object without a memory pool: nothing is copied or split (the realigned TF32
     * call of above, on such a device) */
    explain_facts(8, 0, 108);
    fake.pools_supported = 0;
    cm_device_t *nopool = NULL;
    CM_ASSERT_OK(cm_device_open(1, &nopool));
    fake.pools_supported = 1;
    cm_buffer_t *na = NULL, *nb = NULL, *nc = NULL;
    CM_ASSERT_OK(cm_buffer_create(nopool, m * k * 4, &na));
    CM_ASSERT_OK(cm_buffer_create(nopool, k * n * 4, &nb));
    CM_ASSERT_OK(cm_buffer_create(nopool, m * n * 4, &nc));
    CM_ASSERT_OK(cm_gemm_explain(CM_GEMM_TF32, R, N_, N_, m, n, k, na, 0, k, 0, nb, 0, n, 0, nc, 0,
                                 n, 0, 1, text, sizeof text, &len));
    assert_non_null(strstr(text, "ffma:"));
    assert_non_null(strstr(text, "has no memory pool"));
    assert_null(strstr(text, "copied into"));
    /* the align1 form needs no scratch: it runs there too */
    cm__gemm_align1_set_for_tests(1);
    CM_ASSERT_OK(cm_gemm_explain(CM_GEMM_TF32, R, N_, N_, m, n, k, na, 0, k, 0, nb, 0, n, 0, nc, 0,
                                 n, 0, 1, text, sizeof text, &len));
    assert_non_null(strstr(text, "mma:64x64: "));
    assert_non_null(strstr(text, "by the tiles' align1 form"));
    assert_non_null(strstr(text, "has no memory pool"));
    cm__gemm_align1_set_for_tests(-1);
    CM_ASSERT_OK(cm_buffer_destroy(na));
    CM_ASSERT_OK(cm_buffer_destroy(nb));
    CM_ASSERT_OK(cm_buffer_destroy(nc));
    CM_ASSERT_OK(cm_device_close(nopool));
    /* packed operands with 16-byte rows: the kernel it names is cm_gemm_config_name's (both
     * the dispatch's choice), on every architecture class, precision, layout and transpose */
    cm_buffer_t *big[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; ++i) CM_ASSERT_OK(cm_buffer_create(g.dev0, (size_t)16 << 20, &big[i]));
    static const int archs[][3] = {{7, 5, 40}, {8, 0, 108}, {9, 0, 132}};
    static const size_t sides[] = {1, 7, 64, 1000}, ks[] = {7, 127, 3001};
    int compared = 0;
    for (size_t ar = 0; ar < 3; ++ar) {
        explain_facts(archs[ar][0], archs[ar][1], archs[ar][2]);
        for (int pr = CM_GEMM_FP32; pr <= CM_GEMM_FP32_3XTF32; ++pr)
            for (int lay = 0; lay < 2; ++lay)
                for (int o = 0; o < 4; ++o)
                    for (size_t i = 0; i < 4; ++i)
                        for (size_t j = 0; j < 4; ++j)
                            for (size_t l = 0; l < 3; ++l) {
                                const cm_gemm_precision_t prec = (cm_gemm_precision_t)pr;
                                const cm_gemm_op_t oa = (cm_gemm_op_t)(o & 1);
                                const cm_gemm_op_t ob = (cm_gemm_op_t)(o >> 1);
                                const size_t mm = sides[i], nn = sides[j], kk = ks[l];
                                const int row = lay == 0;
                                const size_t e = prec == CM_GEMM_BF16 ||
                                                         prec == CM_GEMM_BF16_OUT_BF16
                                                     ? 8
                                                     : 4;
                                /* stored A: rows x cols with ld rounded up to 16 bytes */
                                const size_t ar_ = oa == N_ ? mm : kk, ac = oa == N_ ? kk : mm;
                                const size_t br = ob == N_ ? kk : nn, bc = ob == N_ ? nn : kk;
                                const size_t lda = ((row ? ac : ar_) + e - 1) / e * e;
                                const size_t ldb = ((row ? bc : br) + e - 1) / e * e;
                                const size_t ldc = row ? nn : mm;
                                const char *want = NULL;
                                CM_ASSERT_OK(cm_gemm_config_name(0, prec, (cm_gemm_layout_t)lay,
                                                                 oa, ob, mm, nn, kk, &want));
                                CM_ASSERT_OK(cm_gemm_explain(
                                    prec, (cm_gemm_layout_t)lay, oa, ob, mm, nn, kk, big[0], 0,
                                    lda, 0, big[1], 0, ldb, 0, big[2], 0, ldc, 0, 1, text,
                                    sizeof text, &len));
                                const size_t wl = strlen(want);
                                if (strncmp(text, want, wl) != 0 || text[wl] != ':')
                                    fail_msg("cc %d.%d prec %d layout %d ops %d %zux%zux%zu: "
                                             "cm_gemm_config_name says %s, cm_gemm_explain: %s",
                                             archs[ar][0], archs[ar][1], pr, lay, o, mm, nn, kk,
                                             want, text);
                                ++compared;
                            }
    }
    assert_int_equal(compared, 3 * 5 * 2 * 4 * 4 * 4 * 3);
    /* the skinny kernel's line names its limit on the small side (CM__GEMM_SKINNY_MAX); the
     * loop left the 9.0 / 132 device */
    if (CM__GEMM_SKINNY_DISPATCH) {
        CM_ASSERT_OK(cm_gemm_explain(F32, R, N_, T_, 7, 4096, 1000, big[0], 0, 1000, 0, big[1],
                                     0, 1000, 0, big[2], 0, 4096, 0, 1, text, sizeof text,
                                     &len));
        char want[96];
        snprintf(want, sizeof want, "skinny: the skinny kernel (a side of C of at most %d: ",
                 CM__GEMM_SKINNY_MAX);
        assert_non_null(strstr(text, want));
    }
    for (int i = 0; i < 3; ++i) CM_ASSERT_OK(cm_buffer_destroy(big[i]));
    cm__gemm_config_override_set_for_tests(NULL);
    /* FP32 on a Hopper-sized device, column-major NN with lda = 3003 (A along M without
     * 16-byte rows): A is first copied as it is into rows of whole 16 bytes, so that the
     * pipelined FFMA tile runs its moved-tile kernel; the text says what would run without it (K
     * 1100: the edge kernel; K 1001: the fallback's kernel); with N under
     * CM__GEMM_PITCH_MIN_SIDE, or the copy switched off, nothing is copied */
    {
        cm_buffer_t *pa = NULL, *pb = NULL, *pc = NULL;
        CM_ASSERT_OK(cm_buffer_create(g.dev0, 3003 * 1100 * 4, &pa));
        CM_ASSERT_OK(cm_buffer_create(g.dev0, 3001 * 3001 * 4, &pb));
        CM_ASSERT_OK(cm_buffer_create(g.dev0, 3001 * 3001 * 4, &pc));
        explain_facts(9, 0, 132);
        cm__gemm_config_override_set_for_tests("");
        /* each call's text: what it must say and what it must not (wave: the last wave's
         * split forced on / off through its hook, -1 its default) */
        static const struct {
            cm_gemm_op_t op_a;
            size_t m, n, k, lda, ldb;
            int a_pb, wave; /* A in pb (else pa); B is in pb */
            const char *has[7], *lacks;
        } ex[] = {
            /* column-major NN, lda 3003: A copied; after the copy the whole-tile kernel, last
             * tiles moved back over the copy's padding, K's tail (1100 % 16) after its main
             * loop (B along K, A along M); without the copy: the edge kernel (K 1100) or the
             * fallback's kernel (K 1001) */
            {N_, 3001, 3001, 1100, 3003, 1100, 0, -1,
             {"ffma:128x128x16q3: ", "; first A is copied as it is into ",
              "of scratch from the device's pool with rows of whole 16 bytes",
              "lda = 3003 is not a multiple of 4 elements", "without the copy: its edge kernel",
              "; the last tiles past the edge of C move back inside",
              "; K's last 12 run in the kernel after its main loop"},
             "ldb ="},
            {N_, 3001, 3001, 1001, 3003, 1001, 0, -1,
             {"; first A is copied as it is into ", "without the copy: its fallback's kernel",
              "; K's last 9 run in the kernel after its main loop"},
             NULL},
            /* both operands along K (column-major TN): tiles to move, K 3001 and 1100: the
             * tail in the moved-tile kernel before its pipeline; 576 tiles, 2 waves of 264 and
             * 48 left: split over K where the last wave's split is on, said nowhere where it
             * is off */
            {CM_GEMM_OP_T, 3001, 3001, 3001, 3001, 3001, 1, 0,
             {"ffma:128x128x16q3: ", "; the last tiles past the edge of C move back inside",
              "; K's last 9 run in the kernel before its pipeline"},
             "C's leading"},
            {CM_GEMM_OP_T, 3001, 3001, 3001, 3001, 3001, 1, 1,
             {"; C's leading 2816 columns (528 tiles) run as whole waves of the 264 resident "
              "blocks (2 a multiprocessor), its last 48 tiles split over K into 5 parts"},
             NULL},
            {CM_GEMM_OP_T, 3001, 3001, 1100, 1100, 1100, 0, -1,
             {"; the last tiles past the edge of C move back inside",
              "; K's last 12 run in the kernel before its pipeline"},
             NULL},
            /* whole tiles in M and N, K 3001: apart first (from CM__FFMA_KTAIL_APART_MIN_K);
             * K 1100: in the moved-tile kernel */
            {CM_GEMM_OP_T, 2048, 2048, 3001, 3001, 3001, 1, -1,
             {"ffma:128x128x16q3: ", "; K's last 9 run first on a kernel of their own"},
             "move back"},
            {CM_GEMM_OP_T, 2048, 2048, 1100, 1100, 1100, 0, -1,
             {"; K's last 12 run in the kernel before its pipeline"}, "move back"},
            /* N under CM__GEMM_PITCH_MIN_SIDE: nothing copied */
            {N_, 3001, 1000, 1100, 3003, 1100, 0, -1, {NULL}, "first "},
        };
        for (size_t e = 0; e < sizeof ex / sizeof ex[0]; ++e) {
            cm__gemm_wave_split_set_for_tests(ex[e].wave);
            explain_pitched(ex[e].op_a, ex[e].m, ex[e].n, ex[e].k, ex[e].a_pb ? pb : pa,
                            ex[e].lda, pb, ex[e].ldb, pc, text, sizeof text);
            cm__gemm_wave_split_set_for_tests(-1);
            for (size_t h = 0; h < 7 && ex[e].has[h] != NULL; ++h)
                if (strstr(text, ex[e].has[h]) == NULL)
                    fail_msg("explain %zu: \"%s\" missing from: %s", e, ex[e].has[h], text);
            if (ex[e].lacks != NULL && strstr(text, ex[e].lacks) != NULL)
                fail_msg("explain %zu: \"%s\" in: %s", e, ex[e].lacks, text);
        }
        cm__gemm_realign_set_for_tests(0);
        explain_pitched(N_, 3001, 3001, 1100, pa, 3003, pb, 1100, pc, text, sizeof text);
        assert_null(strstr(text, "first "));
        cm__gemm_realign_set_for_tests(-1);
        /* row-major NN: B (1000 x 2999, ldb 3001) along N, the kernels' b */
        CM_ASSERT_OK(cm_gemm_explain(F32, R, N_, N_, 3001, 2999, 1000, pa, 0, 1000, 0, pb, 0,
                                     3001, 0, pc, 0, 2999, 0, 1, text, sizeof text, &len));
        assert_non_null(strstr(text, "; first B is copied as it is into "));
        assert_non_null(strstr(text, "ldb = 3001 is not a multiple of 4 elements"));
        /* C without rows of 4-element vectors (the FFMA tiles' stores): column-major 3001 x
         * 1000 x 64, ldc 3001, on the 64 x 64 tile; on Hopper staged through shared memory */
        CM_ASSERT_OK(cm_gemm_explain(F32, CO, N_, N_, 3001, 1000, 64, pa, 0, 3004, 0, pb, 0, 64,
                                     0, pc, 0, 3001, 0, 1, text, sizeof text, &len));
        assert_non_null(strstr(text, "ffma:64x64"));
        assert_non_null(strstr(text, "; C's rows are not on 16-byte vectors (ldc = 3001 is not "
                                     "a multiple of 4 elements; 3004 would be), so the tiles "
                                     "write C element by element, staged through shared "
                                     "memory so that a warp writes consecutive elements of a "
                                     "row; with such rows they would write 4 elements at a "
                                     "time"));
        /* ldc 3004: nothing to say about C */
        CM_ASSERT_OK(cm_gemm_explain(F32, CO, N_, N_, 3001, 1000, 64, pa, 0, 3004, 0, pb, 0, 64,
                                     0, pc, 0, 3004, 0, 1, text, sizeof text, &len));
        assert_null(strstr(text, "C's rows"));
        /* C 4 bytes past 16 (ldc 3004); BF16 out on the 64 x 64 tile forced (8-byte vectors:
         * 2 bytes past); then on an sm_80 device: not staged */
        CM_ASSERT_OK(cm_gemm_explain(F32, CO, N_, N_, 3001, 1000, 64, pa, 0, 3004, 0, pb, 0, 64,
                                     0, pc, 4, 3004, 0, 1, text, sizeof text, &len));
        assert_non_null(strstr(text, "(C starts 4 bytes past a 16-byte boundary), so the tiles "
                                     "write C element by element, staged"));
        cm__gemm_config_override_set_for_tests("ffma:64x64x16");
        CM_ASSERT_OK(cm_gemm_explain(CM_GEMM_BF16_OUT_BF16, CO, N_, N_, 300, 100, 8, pa, 0, 304,
                                     0, pb, 0, 8, 0, pc, 2, 300, 0, 1, text, sizeof text, &len));
        cm__gemm_config_override_set_for_tests("");
        assert_non_null(strstr(text, "ffma:64x64x16: "));
        assert_non_null(strstr(text, "; C's rows are not on 8-byte vectors (C starts 2 bytes past "
                                     "a 8-byte boundary), so the tiles write C element by "
                                     "element, staged"));
        explain_facts(8, 0, 108);
        CM_ASSERT_OK(cm_gemm_explain(F32, CO, N_, N_, 3001, 1000, 64, pa, 0, 3004, 0, pb, 0, 64,
                                     0, pc, 0, 3001, 0, 1, text, sizeof text, &len));
        assert_non_null(strstr(text, "so the tiles write C element by element; with such rows"));
        /* split over K: the parts go to scratch, the sum writes C (nothing said about C) */
        cm__gemm_splitk_override_set_for_tests(4);
        CM_ASSERT_OK(cm_gemm_explain(F32, CO, N_, N_, 301, 100, 3000, pa, 0, 304, 0, pb, 0, 3000,
                                     0, pc, 0, 301, 0, 1, text, sizeof text, &len));
        cm__gemm_splitk_override_set_for_tests(-1);
        assert_non_null(strstr(text, "; K = 3000 is split into 4 parts"));
        assert_null(strstr(text, "C's rows"));
        explain_facts(9, 0, 132);
        CM_ASSERT_OK(cm_buffer_destroy(pa));
        CM_ASSERT_OK(cm_buffer_destroy(pb));
        CM_ASSERT_OK(cm_buffer_destroy(pc));
    }
    explain_facts(0, 0, 0);
    /* nothing was queued and no buffer written: the fake saw no launch and C keeps its bytes */
    expect_untouched();
    CM_ASSERT_OK(cm_buffer_destroy(a));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_buffer_destroy(c));
    CM_ASSERT_OK(cm_buffer_destroy(a2));
    CM_ASSERT_OK(cm_buffer_destroy(b2));
    CM_ASSERT_OK(cm_buffer_destroy(c2));
}

/* cm_gemm_explain on random calls, valid and not (sizes up to 2^31 and SIZE_MAX, leading
 * dimensions and strides around their minimum, byte offsets of any alignment, batches, buffers
 * of another device, destroyed, NULL, in-place): the status is CM_OK or
 * CM_ERROR_INVALID_ARGUMENT; a refusal is cm_gemm_strided_batched's own (the same status and
 * message, which it gives before anything is queued); an explanation names a kernel (or says
 * there is nothing to run, where cm_gemm_strided_batched returns CM_OK at once) and its
 * length is the text's, also when truncated. */
static uint64_t ex_rng = 0x9E3779B97F4A7C15ull;
static uint64_t ex_next(void) {
    ex_rng ^= ex_rng << 13;
    ex_rng ^= ex_rng >> 7;
    ex_rng ^= ex_rng << 17;
    return ex_rng;
}

static size_t ex_pick(const size_t *v, size_t n) { return v[ex_next() % n]; }

static void test_explain_random(void **state) {
    (void)state;
    cm__gemm_config_override_set_for_tests("");
    explain_facts(9, 0, 132);
    cm_buffer_t *big[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; ++i) CM_ASSERT_OK(cm_buffer_create(g.dev0, (size_t)48 << 20, &big[i]));
    /* mostly usable buffers (A and B may share one), sometimes another device's, a destroyed
     * one, NULL or a small one */
    cm_buffer_t *const bufs[] = {big[0], big[1], big[2], big[0], big[1], big[2],
                                 g.x,    g.x1,   g.dead, NULL};
    static const size_t dims[] = {0, 1, 7, 8, 64, 127, 512, 1000, 3001, (size_t)1 << 31,
                                  SIZE_MAX};
    static const size_t offs[] = {0, 0, 0, 0, 16, 4096, 2, 4, 8, (size_t)1 << 26, SIZE_MAX - 3};
    static const size_t batches[] = {1, 1, 1, 1, 0, 2, 3, 7, (size_t)1 << 31, SIZE_MAX};
    int ok = 0, refused = 0, aligned1 = 0;
    for (int it = 0; it < 4000; ++it) {
        const uint64_t r = ex_next();
        /* one in 16 outside its enum */
        const cm_gemm_precision_t prec =
            (cm_gemm_precision_t)(r % 16 == 0 ? 5 + (int)((r >> 4) % 2) : (int)((r >> 4) % 5));
        const cm_gemm_layout_t lay = (cm_gemm_layout_t)((r >> 8) % 16 == 0 ? 2 : (r >> 12) % 2);
        const cm_gemm_op_t oa = (cm_gemm_op_t)((r >> 13) % 16 == 0 ? 2 : (r >> 17) % 2);
        const cm_gemm_op_t ob = (cm_gemm_op_t)((r >> 18) % 2);
        const size_t m = ex_pick(dims, 9 + (it % 5 == 0 ? 2 : 0)),
                     n = ex_pick(dims, 9 + (it % 7 == 0 ? 2 : 0)),
                     k = ex_pick(dims, 9 + (it % 11 == 0 ? 2 : 0));
        /* leading dimensions: the minimum for the layout, give or take */
        const int row = lay != CM_GEMM_COL_MAJOR;
        const size_t ac = oa == N_ ? k : m, ar = oa == N_ ? m : k;
        const size_t bc = ob == N_ ? n : k, br = ob == N_ ? k : n;
        const size_t adj[] = {0, 0, 1, 3, 4, 8, (size_t)-1};
        const size_t lda = (row ? ac : ar) + ex_pick(adj, 7);
        const size_t ldb = (row ? bc : br) + ex_pick(adj, 7);
        const size_t ldc = (row ? n : m) + ex_pick(adj, 6);
        const size_t batch = ex_pick(batches, 10);
        const size_t sa = batch > 1 ? ar * ac + ex_pick(adj, 7) : 0;
        const size_t sb = batch > 1 ? (ex_next() % 4 == 0 ? 0 : br * bc + ex_pick(adj, 7)) : 0;
        const size_t sc = batch > 1 ? m * n + ex_pick(adj, 7) : 0;
        const uint64_t w = ex_next();
        cm_buffer_t *a = bufs[w % 7 < 6 ? 0 : w % 10];
        cm_buffer_t *b = bufs[(w >> 8) % 7 < 6 ? 1 + (w >> 12) % 2 * 2 : (w >> 8) % 10];
        cm_buffer_t *c = bufs[(w >> 16) % 7 < 6 ? 1 + (w >> 20) % 2 : (w >> 16) % 10];
        const size_t ao = ex_pick(offs, 11), bo = ex_pick(offs, 11), co = ex_pick(offs, 11);
        char text[512], tiny[8];
        size_t len = 0, len2 = 0;
        /* every third call with the TF32 align1 form on (its branches of the explanation),
         * alternately on an sm_80 device (where more copied forms run mma.sync tiles) */
        cm__gemm_align1_set_for_tests(it % 3 == 0 ? 1 : -1);
        const int a100 = it % 3 == 0 && it % 2;
        explain_facts(a100 ? 8 : 9, 0, a100 ? 108 : 132);
        cm_last_error_clear();
        const cm_status_t st = cm_gemm_explain(prec, lay, oa, ob, m, n, k, a, ao, lda, sa, b, bo,
                                               ldb, sb, c, co, ldc, sc, batch, text, sizeof text,
                                               &len);
        if (st == CM_OK) {
            ++ok;
            aligned1 += strstr(text, "align1 form") != NULL;
            assert_int_equal(len, strlen(text) < sizeof text - 1 ? strlen(text) : len);
            if (strncmp(text, "nothing to run", 14) == 0) {
                CM_ASSERT_OK(cm_gemm_strided_batched(NULL, prec, lay, oa, ob, m, n, k, 1.0f, a,
                                                     ao, lda, sa, b, bo, ldb, sb, 0.0f, c, co,
                                                     ldc, sc, batch));
            } else {
                const size_t name = strcspn(text, ":");
                if (name == 0 || name > 16 || text[name] != ':')
                    fail_msg("case %d: no kernel name first: %s", it, text);
            }
            CM_ASSERT_OK(cm_gemm_explain(prec, lay, oa, ob, m, n, k, a, ao, lda, sa, b, bo, ldb,
                                         sb, c, co, ldc, sc, batch, tiny, sizeof tiny, &len2));
            assert_int_equal(len2, len);
            assert_int_equal(strlen(tiny), len < sizeof tiny ? len : sizeof tiny - 1);
            continue;
        }
        ++refused;
        if (st != INV) fail_msg("case %d: status %s", it, cm_status_name(st));
        assert_string_equal(text, "");
        assert_int_equal(len, 0);
        char why[CM_ERROR_MESSAGE_MAX];
        snprintf(why, sizeof why, "%s", cm_last_error()->message);
        cm_last_error_clear();
        const cm_status_t st2 = cm_gemm_strided_batched(NULL, prec, lay, oa, ob, m, n, k, 1.0f, a,
                                                        ao, lda, sa, b, bo, ldb, sb, 0.0f, c, co,
                                                        ldc, sc, batch);
        if (st2 != st || strcmp(cm_last_error()->message, why) != 0) {
            /* the messages may name their function: compare with it swapped */
            char want[CM_ERROR_MESSAGE_MAX];
            const char *at = strstr(why, "cm_gemm_explain");
            if (at != NULL)
                snprintf(want, sizeof want, "%.*scm_gemm_strided_batched%s", (int)(at - why), why,
                         at + strlen("cm_gemm_explain"));
            if (st2 != st || at == NULL || strcmp(cm_last_error()->message, want) != 0)
                fail_msg("case %d: cm_gemm_explain refused with \"%s\", cm_gemm_strided_batched "
                         "returned %s \"%s\"", it, why, cm_status_name(st2),
                         cm_last_error()->message);
        }
    }
    cm__gemm_align1_set_for_tests(-1);
    print_message("explained %d (%d on the align1 form), refused %d\n", ok, aligned1, refused);
    assert_true(ok > 300 && refused > 300); /* both paths, many times (a fixed seed) */
    assert_true(aligned1 > 0);
    for (int i = 0; i < 3; ++i) CM_ASSERT_OK(cm_buffer_destroy(big[i]));
    cm__gemm_config_override_set_for_tests(NULL);
    explain_facts(0, 0, 0);
    expect_untouched();
}

/* ---------------------------------------------------------------- bf16 */

static float fbits(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint32_t bitsf(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static uint16_t b16(uint32_t u) { return cm_bf16_from_float(fbits(u)).bits; }

static void test_bf16(void **state) {
    (void)state;
    assert_int_equal(sizeof(cm_bf16_t), 2);
    /* exact values */
    assert_int_equal(b16(0x3f800000u), 0x3f80);            /* 1 */
    assert_int_equal(b16(0x80000000u), 0x8000);            /* -0 */
    assert_int_equal(b16(0x00000000u), 0x0000);
    /* ties to even: 1 + 2^-8 lies halfway between 1 and 1 + 2^-7 */
    assert_int_equal(b16(0x3f808000u), 0x3f80);            /* tie, down to even */
    assert_int_equal(b16(0x3f818000u), 0x3f82);            /* tie, up to even */
    assert_int_equal(b16(0x3f808001u), 0x3f81);            /* just above the tie */
    assert_int_equal(b16(0x3f807fffu), 0x3f80);            /* just below */
    assert_int_equal(b16(0xbf818000u), 0xbf82);            /* negative tie */
    /* overflow and infinities */
    assert_int_equal(b16(0x7f7fffffu), 0x7f80);            /* FLT_MAX rounds to +inf */
    assert_int_equal(b16(0x7f7f7fffu), 0x7f7f);            /* largest finite stays */
    assert_int_equal(b16(0x7f800000u), 0x7f80);
    assert_int_equal(b16(0xff800000u), 0xff80);
    /* NaN stays NaN (quiet), sign kept, even when rounding would carry into infinity */
    uint16_t q = b16(0x7fc00000u), s = b16(0x7f800001u), ng = b16(0xffffffffu);
    assert_true((q & 0x7f80) == 0x7f80 && (q & 0x7f) != 0);
    assert_true((s & 0x7f80) == 0x7f80 && (s & 0x7f) != 0);
    assert_true((ng & 0xff80) == 0xff80 && (ng & 0x7f) != 0);
    assert_true(isnan(cm_bf16_to_float((cm_bf16_t){s})));
    /* subnormals: the smallest float subnormal rounds to 0; a bf16 subnormal survives */
    assert_int_equal(b16(0x00000001u), 0x0000);
    assert_int_equal(b16(0x00010000u), 0x0001);
    assert_int_equal(b16(0x00018000u), 0x0002);             /* tie to even */
    /* every bf16 value converts to float exactly and back to itself */
    for (uint32_t v = 0; v <= 0xffffu; ++v) {
        const cm_bf16_t h = {(uint16_t)v};
        const float f = cm_bf16_to_float(h);
        assert_int_equal(bitsf(f), v << 16);
        if (!isnan(f)) assert_int_equal(cm_bf16_from_float(f).bits, v);
    }
    /* round to nearest against a float64 computation on random floats */
    for (int i = 0; i < 100000; ++i) {
        const float f = (float)(rnd() * 1e3);
        const float r = cm_bf16_to_float(cm_bf16_from_float(f));
        const double err = fabs((double)r - (double)f);
        /* half a unit in the last place of bf16 (8 significant bits) */
        assert_true(err <= ldexp(fabs((double)f), -8) + 0x1p-140);
    }
    /* arrays; NULL is a no-op */
    float in[3] = {1.0f, -2.5f, 3.0f}, out[3] = {0, 0, 0};
    cm_bf16_t mid[3];
    cm_bf16_from_float_array(mid, in, 3);
    cm_bf16_to_float_array(out, mid, 3);
    assert_memory_equal(in, out, sizeof in);
    cm_bf16_from_float_array(NULL, in, 3);
    cm_bf16_to_float_array(out, NULL, 3);
}

/* cm__gemm_splitk_chunks over every K up to 20000 and every part count: chunks are multiples
 * of 32 that tile K exactly; with a short last part, at most `parts` parts and the last one
 * shorter than the others; with whole parts, what is left is less than 32 per part asked for
 * (or one chunk, where the CM__SPLITK_MAX cap rounded it up); never more than CM__SPLITK_MAX
 * parts of a chunk; and the examples the header names. */
static void test_splitk_chunks(void **state) {
    (void)state;
    for (int64_t k = 1; k <= 20000; ++k)
        for (int parts = 2; parts <= CM__SPLITK_MAX; ++parts)
            for (int last_short = 0; last_short < 2; ++last_short) {
                int64_t kc = -1, rem = -1;
                int full = -1;
                cm__gemm_splitk_chunks(k, parts, last_short, &kc, &full, &rem);
                /* whole parts: the chunk K / parts rounded down, unless the cap rounded it up */
                const int64_t down = k / parts / 32 * 32 < 32 ? 32 : k / parts / 32 * 32;
                const int capped = k / down > CM__SPLITK_MAX;
                if (kc < 32 || kc % 32 != 0 || full < 0 || full > CM__SPLITK_MAX || rem < 0 ||
                    rem >= kc || (int64_t)full * kc + rem != k ||
                    (last_short && full + (rem > 0) > parts) ||
                    (!last_short && !capped && (kc != down || rem >= 32 * (int64_t)parts)))
                    fail_msg("k %lld in %d parts (last_short %d): chunk %lld, %d whole, %lld "
                             "left", (long long)k, parts, last_short, (long long)kc, full,
                             (long long)rem);
            }
    static const struct {
        int64_t k;
        int parts, last_short;
        int64_t kc;
        int full;
        int64_t rem;
    } ex[] = {{3001, 5, 1, 608, 4, 569}, {4000, 30, 0, 128, 31, 32}, {9184, 32, 0, 288, 31, 256},
              {4096, 3, 0, 1344, 3, 64}, {1000, 4, 1, 256, 3, 232}, {3001, 2, 1, 1504, 1, 1497},
              {4096, 4, 1, 1024, 4, 0}};
    for (size_t i = 0; i < sizeof ex / sizeof ex[0]; ++i) {
        int64_t kc = 0, rem = 0;
        int full = 0;
        cm__gemm_splitk_chunks(ex[i].k, ex[i].parts, ex[i].last_short, &kc, &full, &rem);
        assert_int_equal(kc, ex[i].kc);
        assert_int_equal(full, ex[i].full);
        assert_int_equal(rem, ex[i].rem);
    }
}

/* Split-K's parts: the heuristic by kernel (never a batch or 3xTF32), a forced count on any
 * kernel (at most CM__SPLITK_MAX, capped so that every part has CM__SPLITK_FORCED_MIN_K of K),
 * forced 1 = never; the tests' override hook. Each row: a problem (args(), then a batch), the
 * chosen kernel, the precision, the forced count, the parts expected (132 SMs). */
static void test_splitk_parts(void **state) {
    (void)state;
    enum { FFMA, MMA, SM90, GEMV, SKINNY, FFMA64, FFMAQ3 };
    static const cm__gemm_choice_t kernels[] = {{CM__GEMM_KERNEL_FFMA, CM__FFMA_32x64x16},
                                                {CM__GEMM_KERNEL_MMA, CM__MMA_64x64},
                                                {CM__GEMM_KERNEL_SM90, 0},
                                                {CM__GEMM_KERNEL_GEMV, 0},
                                                {CM__GEMM_KERNEL_SKINNY, 0},
                                                {CM__GEMM_KERNEL_FFMA, CM__FFMA_64x64x16},
                                                {CM__GEMM_KERNEL_FFMA, CM__FFMA_128x128x16q3}};
    static const struct {
        int m, n, k, a_k, batch, kernel, prec, forced, parts;
    } rows[] = {
        /* 64 x 64 x 4096: 2 tiles of 32 x 64 -> one wave, capped by K / 256 = 16; float
         * inputs on the 32 x 64 FFMA tiles by K / 64 and CM__SPLITK_MAX = 32 */
        {64, 64, 4096, 1, 1, FFMA, CM_GEMM_FP32, 0, 32},
        {64, 64, 2047, 1, 1, FFMA, CM_GEMM_FP32, 0, 31},
        {64, 128, 2048, 1, 1, FFMA, CM_GEMM_FP32, 0, 32},
        {64, 64, 4096, 1, 1, FFMA, CM_GEMM_BF16, 0, 16},
        {64, 64, 4096, 1, 1, MMA, CM_GEMM_TF32, 0, 32}, /* TF32 on mma.sync: parts >= 128 */
        {64, 64, 4096, 1, 1, SM90, CM_GEMM_TF32, 0, 16},
        {64, 64, 4096, 1, 1, GEMV, CM_GEMM_FP32, 0, 1},
        {64, 64, 4096, 1, 1, FFMA, CM_GEMM_FP32_3XTF32, 0, 1},
        /* skinny: ceil(K / 2048) parts, at most 4, from K = 2048, up to 64 rows per SM */
        {64, 64, 4096, 1, 1, SKINNY, CM_GEMM_FP32, 0, 2},
        {64, 64, 3001, 1, 1, SKINNY, CM_GEMM_FP32, 0, 2},
        {64, 64, 2047, 1, 1, SKINNY, CM_GEMM_FP32, 0, 1},
        {64, 64, 9000, 1, 1, SKINNY, CM_GEMM_BF16, 0, 4},
        {64, 64, 2147483647, 1, 1, SKINNY, CM_GEMM_BF16, 0, 4}, /* no overflow in ceil() */
        {64 * 132 + 1, 7, 4096, 1, 1, SKINNY, CM_GEMM_FP32, 0, 1},
        {64 * 132, 7, 4096, 1, 1, SKINNY, CM_GEMM_FP32, 0, 2},
        /* the tiles with a long K, over a quarter of the SMs: half the resident slots or less
         * -> fill them (64 x 4096: 128 tiles of 32 x 64 in 4 x 132 slots, 64 of 64 x 64 in
         * 2 x 132); below K = 1024 only the first rule, but for TF32 on the mma.sync tiles
         * (from K = 384, parts of >= 128), BF16 on them (from K = 768, parts of >= 192) and
         * float inputs on the 32 x 64 FFMA tiles */
        {64, 4096, 4096, 1, 1, FFMA, CM_GEMM_FP32, 0, 4},
        {64, 4096, 4096, 1, 1, MMA, CM_GEMM_TF32, 0, 4},
        {64, 4096, 1000, 1, 1, MMA, CM_GEMM_TF32, 0, 4},
        {64, 4096, 1000, 1, 1, MMA, CM_GEMM_BF16, 0, 4}, /* BF16 from K = 768, parts >= 192 */
        {64, 4096, 767, 1, 1, MMA, CM_GEMM_BF16, 0, 1},
        {64, 4096, 600, 1, 1, MMA, CM_GEMM_BF16, 0, 1},
        /* TF32 on mma:64x64's 16-byte form, C one tile deep with 133-176 tiles (more than
         * half of 2 x 132 slots, at most two thirds): 3 parts at any K the split takes; 132
         * tiles or fewer keep the slot rule (8000 rows: 125 tiles -> 2), more (14000: 219)
         * and a C two tiles deep (65 rows) keep K whole */
        {40, 8500, 1000, 1, 1, MMA, CM_GEMM_TF32, 0, 3},
        {8500, 40, 1000, 1, 0, MMA, CM_GEMM_TF32, 0, 3},
        {64, 11000, 768, 1, 1, MMA, CM_GEMM_TF32, 0, 3},
        {40, 9000, 2048, 1, 1, MMA, CM_GEMM_TF32, 0, 3},
        {40, 11264, 1000, 1, 1, MMA, CM_GEMM_TF32, 0, 3},
        {40, 11265, 1000, 1, 1, MMA, CM_GEMM_TF32, 0, 1},
        {40, 8000, 1000, 1, 1, MMA, CM_GEMM_TF32, 0, 2},
        {40, 14000, 1000, 1, 1, MMA, CM_GEMM_TF32, 0, 1},
        {65, 8500, 1000, 1, 1, MMA, CM_GEMM_TF32, 0, 1},
        {40, 8500, 383, 1, 1, MMA, CM_GEMM_TF32, 0, 1},
        {40, 8500, 1000, 1, 1, MMA, CM_GEMM_BF16, 0, 1},
        /* the first rule fills the resident slots: 127 x 1000, 32 tiles of 64 x 64 in 2 x 132
         * slots -> 8 parts (K / 256 = 11 allows them); 8 tiles of 32 x 64 in 4 x 132 -> 66,
         * capped by CM__SPLITK_MAX (float inputs: K / 64) */
        {127, 1000, 3001, 1, 1, MMA, CM_GEMM_TF32, 0, 8},
        {127, 127, 3001, 1, 1, FFMA, CM_GEMM_FP32, 0, 32},
        /* an FFMA tile's slots from its configuration (64 x 64: 4 a multiprocessor, 128 x
         * 128: 2): 64 x 4096, 64 tiles of 64 x 64 in 4 x 132 slots -> 8; 1024^2, 64 tiles of
         * 128 x 128 in 2 x 132 -> 4 */
        {64, 4096, 4096, 1, 1, FFMA64, CM_GEMM_FP32, 0, 8},
        {4096, 64, 4096, 0, 1, FFMA64, CM_GEMM_FP32, 0, 8},
        {1024, 1024, 8192, 1, 1, FFMAQ3, CM_GEMM_FP32, 0, 4},
        /* capped by K / 256 with the last layer of blocks under 3/4 full: the most whole
         * layers (127 x 1000, 32 tiles of 64 x 64: 16 parts, capped 11 = 352 blocks, 2.67
         * layers of 132 -> 2 layers, 8 parts); 200^2, 16 tiles: 33 capped 32 = 512 blocks, 3.88
         * layers, kept */
        {127, 1000, 3001, 1, 1, FFMA64, CM_GEMM_FP32, 0, 8},
        {200, 200, 8192, 1, 1, FFMA64, CM_GEMM_FP32, 0, 32},
        /* the Hopper kernel: sms / (2 tiles of 128 x 256) parts where 4 tiles fit the SMs (its
         * launcher then runs 128 x 128 tiles), parts of at least 1024 of K where the tiles
         * fill more than an eighth of the SMs: 16 tiles -> 4, 8 -> 8, 12 -> 5 (K = 1000 allows
         * 3), 32 -> 2, 34 -> none; 1000^3 (32 tiles) whole */
        {64, 4096, 4096, 1, 1, SM90, CM_GEMM_TF32, 0, 4},
        {512, 512, 4096, 1, 1, SM90, CM_GEMM_BF16, 0, 8},
        {127, 3001, 1000, 1, 1, SM90, CM_GEMM_BF16, 0, 3},
        {512, 512, 16384, 1, 1, SM90, CM_GEMM_BF16, 0, 8},
        {4096, 64, 4096, 1, 1, SM90, CM_GEMM_TF32, 0, 2},
        {1000, 1000, 4096, 1, 1, SM90, CM_GEMM_BF16, 0, 2},
        {1000, 1000, 1000, 1, 1, SM90, CM_GEMM_BF16, 0, 1},
        {1000, 1000, 2047, 1, 1, SM90, CM_GEMM_BF16, 0, 1},
        {4352, 64, 8192, 1, 1, SM90, CM_GEMM_BF16, 0, 1},
        /* float inputs on the 32 x 64 FFMA tiles: the slot rule from K = 768 with >= 192 of K
         * a part, from K = 256 with >= 64; a split whose blocks all fit at once (4 a
         * multiprocessor) is not trimmed to whole layers of 132 */
        {64, 4096, 1000, 1, 1, FFMA, CM_GEMM_FP32, 0, 4},
        {4096, 64, 1000, 0, 1, FFMA, CM_GEMM_TF32, 0, 4},
        {64, 4096, 768, 1, 1, FFMA, CM_GEMM_FP32, 0, 4},
        {64, 4096, 767, 1, 1, FFMA, CM_GEMM_FP32, 0, 4},
        {512, 512, 512, 1, 1, FFMA, CM_GEMM_FP32, 0, 4},
        {384, 384, 600, 1, 1, FFMA, CM_GEMM_FP32, 0, 7}, /* 72 tiles: 504 blocks of 528 */
        {64, 4096, 511, 1, 1, FFMA, CM_GEMM_FP32, 0, 4},  /* 128 tiles: 528 / 128 */
        {3001, 12, 500, 0, 1, FFMA, CM_GEMM_FP32, 0, 5},  /* 94 tiles: 528 / 94 */
        {4096, 12, 400, 0, 1, FFMA, CM_GEMM_FP32, 0, 4},  /* 128 tiles: 528 / 128 */
        {3001, 12, 256, 0, 1, FFMA, CM_GEMM_FP32, 0, 4},  /* capped by 256 / 64 */
        {3001, 12, 255, 0, 1, FFMA, CM_GEMM_FP32, 0, 1},
        {64, 64, 300, 0, 1, FFMA, CM_GEMM_FP32, 0, 4}, /* 2 tiles: the first rule, 300 / 64 */
        {2000, 16, 500, 0, 1, FFMA, CM_GEMM_FP32, 0, 7},  /* capped by 500 / 64 */
        {256, 256, 600, 0, 1, FFMA, CM_GEMM_FP32, 0, 9},  /* capped by 600 / 64 */
        {64, 64, 255, 0, 1, FFMA, CM_GEMM_FP32, 0, 1},   /* under CM__SPLITK_MIN_K */
        {1000, 1000, 300, 0, 1, FFMA, CM_GEMM_FP32, 0, 1}, /* 496 tiles: no slot free */
        /* the TF32 align1 form over a C with a side of at most 16 (lda = 3001 or 4095: rows off
         * 16 bytes), and TF32 on the 16-byte form below K = 1024: the slot rule from K = 384
         * (2 x 64 x 64 tiles a multiprocessor), parts of >= 128; the align1 form over a wider C
         * from K = 1024 as before, BF16 from K = 768 in parts of >= 192 */
        {3001, 12, 500, 0, 1, MMA, CM_GEMM_TF32, 0, 2},  /* 47 tiles: capped 3, one layer */
        /* the align1 form over a thin C where some count up to the cap gives more blocks than
         * the 264 slots and a last layer of 132 at least 3/4 full: the fewest such parts */
        {6001, 16, 2001, 0, 1, MMA, CM_GEMM_TF32, 0, 4},  /* 94 tiles: 376 blocks */
        {3001, 16, 1500, 0, 1, MMA, CM_GEMM_TF32, 0, 8},  /* 47 tiles: 376 */
        {8191, 12, 1999, 0, 1, MMA, CM_GEMM_TF32, 0, 3},  /* 128 tiles: 384 */
        {2001, 16, 3001, 0, 1, MMA, CM_GEMM_TF32, 0, 12}, /* 32 tiles: 384 */
        {4001, 16, 2001, 0, 1, MMA, CM_GEMM_TF32, 0, 6},  /* 63 tiles: 378 */
        {3001, 12, 600, 0, 1, MMA, CM_GEMM_TF32, 0, 2},   /* capped 4: the slot rule's */
        {4095, 12, 767, 0, 1, MMA, CM_GEMM_TF32, 0, 4},  /* 64 tiles: 264 / 64 */
        {3001, 12, 383, 0, 1, MMA, CM_GEMM_TF32, 0, 1},
        {4096, 12, 767, 0, 1, MMA, CM_GEMM_TF32, 0, 4},  /* aligned */
        {4096, 16, 1000, 0, 1, MMA, CM_GEMM_TF32, 0, 4},
        {384, 384, 600, 0, 1, MMA, CM_GEMM_TF32, 0, 3},  /* 36 tiles: 4 -> one layer of 3 */
        {256, 256, 300, 0, 1, MMA, CM_GEMM_TF32, 0, 1},  /* under 384 */
        {4096, 16, 1000, 0, 1, MMA, CM_GEMM_BF16, 0, 4}, /* BF16 from K = 768 */
        {4096, 16, 700, 0, 1, MMA, CM_GEMM_BF16, 0, 1},
        {3001, 17, 767, 0, 1, MMA, CM_GEMM_TF32, 0, 1},  /* a side of 17 */
        {64, 4096, 1000, 1, 1, FFMA, CM_GEMM_BF16, 0, 1},
        {1000, 4096, 1000, 1, 1, FFMA, CM_GEMM_FP32, 0, 1}, /* 2048 tiles: no slot free */
        {512, 4096, 4096, 1, 1, MMA, CM_GEMM_TF32, 0, 1},
        /* gemv across K (A M-contiguous) over 512 .. 2048 rows from K = 2048: K / 512, at most
         * 8; along K never */
        {1000, 1, 4096, 0, 1, GEMV, CM_GEMM_FP32, 0, 8},
        {1000, 1, 2500, 0, 1, GEMV, CM_GEMM_FP32, 0, 4},
        {1000, 1, 2500, 1, 1, GEMV, CM_GEMM_FP32, 0, 1},
        {2048, 1, 4096, 0, 1, GEMV, CM_GEMM_BF16, 0, 8},
        {4096, 1, 2500, 0, 1, GEMV, CM_GEMM_FP32, 0, 1},
        /* and over few rows (64 or more) from K = 2000: one block of a part a multiprocessor
         * (blocks of 32 rows, 64 of bf16 in pairs: even lda, 4-byte base), parts of >= 128 of
         * K, at most CM__SPLITK_MAX, none under 4 parts; the larger of the two rules (1000
         * rows of bf16 pairs: 16 blocks, 132 / 16 = 8 parts against K / 512 = 4) */
        {300, 1, 2500, 0, 1, GEMV, CM_GEMM_FP32, 0, 13},
        {300, 1, 8192, 0, 1, GEMV, CM_GEMM_BF16, 0, 26},
        {127, 1, 3001, 0, 1, GEMV, CM_GEMM_FP32, 0, 23},
        {127, 1, 3001, 0, 1, GEMV, CM_GEMM_BF16, 0, 23}, /* lda 127: no pairs, 4 blocks */
        {64, 1, 8192, 0, 1, GEMV, CM_GEMM_FP32, 0, CM__SPLITK_MAX},
        {64, 1, 1999, 0, 1, GEMV, CM_GEMM_FP32, 0, 1},
        {96, 1, 1536, 0, 1, GEMV, CM_GEMM_FP32, 0, 1},
        {64, 1, 2000, 0, 1, GEMV, CM_GEMM_FP32, 0, 15},
        {200, 1, 2000, 0, 1, GEMV, CM_GEMM_FP32, 0, 15},
        {64, 1, 4096, 1, 1, GEMV, CM_GEMM_FP32, 0, 1},
        {63, 1, 4096, 0, 1, GEMV, CM_GEMM_FP32, 0, 1}, /* under 64 rows: not measured */
        {1, 1, 4096, 0, 1, GEMV, CM_GEMM_FP32, 0, 1},
        {1000, 1, 2500, 0, 1, GEMV, CM_GEMM_BF16, 0, 8},
        {3001, 1, 3001, 0, 1, GEMV, CM_GEMM_FP32, 0, 1}, /* 94 blocks: 1 part */
        {3001, 1, 3001, 0, 1, GEMV, CM_GEMM_BF16, 0, 1},
        /* forced: any kernel, that many parts (at most CM__SPLITK_MAX), 1 = none */
        {64, 64, 4096, 1, 1, SKINNY, CM_GEMM_FP32, 4, 4},
        {64, 64, 4096, 1, 1, GEMV, CM_GEMM_BF16, 3, 3},
        {64, 64, 4096, 1, 1, FFMA, CM_GEMM_FP32, 1, 1},
        {64, 64, 4096, 1, 1, FFMA, CM_GEMM_FP32, CM__SPLITK_MAX, CM__SPLITK_MAX},
        {64, 64, 4096, 1, 1, FFMA, CM_GEMM_FP32_3XTF32, 4, 1},
        {64, 64, 4096, 1, 1, FFMA, CM_GEMM_FP32, 1000, CM__SPLITK_MAX},
        /* a short K: the heuristic keeps it whole; forced parts keep CM__SPLITK_FORCED_MIN_K */
        {64, 64, 200, 1, 1, FFMA, CM_GEMM_FP32, 0, 1},
        {64, 64, 300, 1, 1, FFMA, CM_GEMM_FP32, 8, 300 / CM__SPLITK_FORCED_MIN_K},
        {64, 64, CM__SPLITK_FORCED_MIN_K * 2 - 1, 1, 1, FFMA, CM_GEMM_FP32, 8, 1},
        /* a batch is never split */
        {64, 64, 4096, 1, 2, FFMA, CM_GEMM_FP32, 0, 1},
        {64, 64, 4096, 1, 2, FFMA, CM_GEMM_FP32, 4, 1},
        /* a C that fills the GPU: no split by the heuristic */
        {4096, 4096, 4096, 1, 1, FFMA, CM_GEMM_FP32, 0, 1},
        {4096, 4096, 4096, 1, 1, SM90, CM_GEMM_BF16, 0, 1},
        /* TF32 on the Hopper kernel (both operands K-contiguous) below K = 1024: whole; from
         * K = 1024 the first rule; forced, any K */
        {256, 256, 600, 1, 1, SM90, CM_GEMM_TF32, 0, 1},
        {64, 64, 1023, 1, 1, SM90, CM_GEMM_TF32, 0, 1},
        {64, 64, 1024, 1, 1, SM90, CM_GEMM_TF32, 0, 4},
        {128, 128, 1500, 1, 1, SM90, CM_GEMM_TF32, 0, 5},
        {256, 256, 600, 1, 1, SM90, CM_GEMM_TF32, 3, 3},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
        const int bf = rows[i].prec == CM_GEMM_BF16 || rows[i].prec == CM_GEMM_BF16_OUT_BF16;
        const int64_t lda = rows[i].a_k ? rows[i].k : rows[i].m;
        cm__gemm_args_t p = args(rows[i].m, rows[i].n, rows[i].k, rows[i].a_k, 1,
                                 bf ? CM__GEMM_BF16 : CM__GEMM_F32, lda);
        p.batch = rows[i].batch;
        const int got = cm__gemm_splitk_parts(&p, kernels[rows[i].kernel], rows[i].prec, 132,
                                              rows[i].forced);
        if (got != rows[i].parts)
            fail_msg("row %zu: %d x %d x %d kernel %d precision %d forced %d: %d parts, expected "
                     "%d", i, rows[i].m, rows[i].n, rows[i].k, rows[i].kernel, rows[i].prec,
                     rows[i].forced, got, rows[i].parts);
    }
    /* the hook: a count, 0 (the heuristic), -1 (back to the environment) */
    cm__gemm_splitk_override_set_for_tests(5);
    assert_int_equal(cm__gemm_splitk_override(), 5);
    cm__gemm_splitk_override_set_for_tests(0);
    assert_int_equal(cm__gemm_splitk_override(), 0);
    cm__gemm_splitk_override_set_for_tests(-1);
    const char *env = getenv("CUDAMODEL_GEMM_SPLITK");
    const int v = cm__gemm_splitk_override();
    assert_true(v >= 0 && v <= CM__SPLITK_MAX);
    if (env == NULL) assert_int_equal(v, 0);
    if (env != NULL && strcmp(env, "5") == 0) assert_int_equal(v, 5); /* read by the library */
    if (env != NULL && strcmp(env, "33") == 0) assert_int_equal(v, 0); /* over the limit */
}

/* Addresses of the kernels' form (kernels/gemm.h: C row-major m x n; A m x k along K (row i
 * at a + i lda) or along M; B k x n along K (column j at b + j ldb) or along N), floats */
static uintptr_t at_c(const cm__gemm_args_t *x, int64_t i, int64_t j) {
    return (uintptr_t)x->c + 4u * (uintptr_t)(i * x->ldc + j);
}
static uintptr_t at_a(const cm__gemm_args_t *x, int64_t i, int64_t kk) {
    return (uintptr_t)x->a + 4u * (uintptr_t)(x->a_kmajor ? i * x->lda + kk : kk * x->lda + i);
}
static uintptr_t at_b(const cm__gemm_args_t *x, int64_t kk, int64_t j) {
    return (uintptr_t)x->b + 4u * (uintptr_t)(x->b_kmajor ? j * x->ldb + kk : kk * x->ldb + j);
}

/* cm__gemm_c_vec4: C in 4-element vectors (16 bytes of float, 8 of BF16) where ldc, the base
 * and, for a batch, stride_c allow */
static void test_c_vec4(void **state) {
    (void)state;
    cm__gemm_args_t q = {0};
    q.c = (void *)(uintptr_t)0x1000;
    q.ldc = 3004;
    assert_true(cm__gemm_c_vec4(&q));
    q.ldc = 3001; /* rows off 4 elements */
    assert_false(cm__gemm_c_vec4(&q));
    q.ldc = 3004;
    q.c = (void *)(uintptr_t)0x1008; /* 8 bytes past 16: not for float, enough for BF16 */
    assert_false(cm__gemm_c_vec4(&q));
    q.out_type = CM__GEMM_BF16;
    assert_true(cm__gemm_c_vec4(&q));
    q.c = (void *)(uintptr_t)0x1002;
    assert_false(cm__gemm_c_vec4(&q));
    /* a batch: the stride too; one matrix ignores it */
    q.out_type = CM__GEMM_F32;
    q.c = (void *)(uintptr_t)0x1000;
    q.stride_c = 3004 * 7 + 2;
    q.batch = 1;
    assert_true(cm__gemm_c_vec4(&q));
    q.batch = 3;
    assert_false(cm__gemm_c_vec4(&q));
    q.stride_c = 3004 * 7;
    assert_true(cm__gemm_c_vec4(&q));
}

/* cm__gemm_wave_pieces: every element of C (a grid of rows and columns with the edges and the
 * pieces' border) lies in exactly one piece, at the same address there, with the same rows of
 * A and columns of B at k = 0 and K - 1; in each orientation of the operands, split along M
 * and along N. */
static void test_wave_pieces(void **state) {
    (void)state;
    static const int shapes[][3] = {{3001, 3001, 3001}, {3001, 1601, 2053}, {1601, 3001, 1024}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
        for (int o = 0; o < 4; ++o)
            for (int along_n = 0; along_n < 2; ++along_n) {
                const int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
                cm__gemm_args_t p = args(m, n, k, o & 1, o >> 1, CM__GEMM_F32, 0);
                p.lda = (o & 1 ? k : m) + 3;
                p.ldb = (o >> 1 ? k : n) + 5;
                p.ldc = n + 7;
                p.a = (const void *)(uintptr_t)((uintptr_t)1 << 32);
                p.b = (const void *)(uintptr_t)((uintptr_t)2 << 32);
                p.c = (void *)(uintptr_t)((uintptr_t)3 << 32);
                const int lead = along_n ? 1408 : 1536;
                const cm__gemm_wave_t w = {along_n, lead, 5, 0, 0};
                cm__gemm_args_t f, r;
                cm__gemm_wave_pieces(&p, &w, &f, &r);
                assert_int_equal(along_n ? f.n + r.n : f.m + r.m, along_n ? n : m);
                assert_int_equal(along_n ? f.m : f.n, along_n ? m : n);
                assert_int_equal(along_n ? r.m : r.n, along_n ? m : n);
                assert_int_equal(f.k, k);
                assert_int_equal(r.k, k);
                const int64_t rows[] = {0, 1, lead - 1, lead, lead + 1, m / 2, m - 2, m - 1};
                const int64_t cols[] = {0, 1, lead - 1, lead, lead + 1, n / 2, n - 2, n - 1};
                for (size_t a = 0; a < 8; ++a)
                    for (size_t b = 0; b < 8; ++b) {
                        const int64_t i = rows[a], j = cols[b];
                        const int second = along_n ? j >= lead : i >= lead;
                        const cm__gemm_args_t *x = second ? &r : &f;
                        const int64_t li = !along_n && second ? i - lead : i;
                        const int64_t lj = along_n && second ? j - lead : j;
                        if (li < 0 || li >= x->m || lj < 0 || lj >= x->n)
                            fail_msg("%dx%dx%d ops %d along_n %d: (%lld, %lld) in no piece", m,
                                     n, k, o, along_n, (long long)i, (long long)j);
                        assert_true(at_c(x, li, lj) == at_c(&p, i, j));
                        assert_true(at_a(x, li, 0) == at_a(&p, i, 0));
                        assert_true(at_a(x, li, k - 1) == at_a(&p, i, k - 1));
                        assert_true(at_b(x, 0, lj) == at_b(&p, 0, j));
                        assert_true(at_b(x, k - 1, lj) == at_b(&p, k - 1, j));
                    }
            }
}

/* The last wave's split (cm__gemm_wave_split): FP32 on the 128 x 128 FFMA tile (2 blocks a
 * multiprocessor) with K >= CM__WAVE_SPLIT_MIN_K whose tiles make 1 to CM__WAVE_SPLIT_MAX_WAVES
 * whole waves and a last one at most CM__WAVE_SPLIT_MAX_FILL full runs the tile rows
 * (columns) of the whole waves first, the rest split over K into about a wave of parts;
 * nothing else. */
static void test_wave_split(void **state) {
    (void)state;
    const int q3 = CM__FFMA_128x128x16q3;
    if (!cm__gemm_ffma_built(q3)) skip();
    assert_int_equal(cm__gemm_ffma_blocks_per_sm(q3), 2);
    assert_int_equal(cm__gemm_ffma_blocks_per_sm(-1), 0);
    const cm__gemm_choice_t ch = {CM__GEMM_KERNEL_FFMA, q3};
    cm__gemm_wave_t w;
    /* m, n, k -> parts (1: none), and where it splits the pieces (along_n, lead, tiles) */
    static const struct {
        int m, n, k, parts, along_n, lead, tiles1, tiles2;
    } rows[] = {
        /* 3001^3: 24 x 24 = 576 tiles, 2 waves of 264 and 48 left: 22 tile rows (2816 rows,
         * 528 tiles), then 48 tiles in 264 / 48 = 5 parts */
        {3001, 3001, 3001, 5, 0, 2816, 528, 48},
        /* 24 x 13 tiles (3001 x 1601): 312, 48 left; 20 whole tile rows of 13 make 260 tiles,
         * 11 whole tile columns of 24 make 264: the pieces are columns; the other way round,
         * rows */
        {3001, 1601, 3001, 5, 1, 11 * 128, 264, 48},
        {1601, 3001, 3001, 5, 0, 11 * 128, 264, 48},
        /* a last wave more than half full: 4096^2 (1024 tiles, 232 left of 264); over
         * CM__WAVE_SPLIT_MAX_FILL (0.3) but under half: 2400^2 (361 tiles, 97 left, 0.37) */
        {4096, 4096, 3001, 1, 0, 0, 0, 0},
        {2400, 2400, 3001, 1, 0, 0, 0, 0},
        /* 2200^2: 18^2 = 324 tiles, 60 left (0.23); 14 whole tile rows (252 tiles) first,
         * then 72 tiles in 264 / 72 = 3 parts */
        {2200, 2200, 3001, 3, 0, 14 * 128, 252, 72},
        /* under one wave: 2000^2 (256 tiles) */
        {2000, 2000, 3001, 1, 0, 0, 0, 0},
        /* CM__WAVE_SPLIT_MAX_WAVES (8) whole waves: 5000^2 (1600 tiles: 6 waves, 16 left)
         * splits (39 whole tile rows of 40, 1560 tiles, then 40 in 6 parts), 6200^2 (2401
         * tiles: 9 waves, 25 left) does not */
        {5000, 5000, 3001, 6, 0, 39 * 128, 1560, 40},
        {6200, 6200, 3001, 1, 0, 0, 0, 0},
        /* a short K; from CM__WAVE_SPLIT_MIN_K (512) parts of at least CM__SPLITK_MIN_K
         * (256): 2, at 1024 4 */
        {3001, 3001, CM__WAVE_SPLIT_MIN_K - 1, 1, 0, 0, 0, 0},
        {3001, 3001, CM__WAVE_SPLIT_MIN_K, 2, 0, 2816, 528, 48},
        {3001, 3001, 1024, 4, 0, 2816, 528, 48},
    };
    cm__gemm_args_t p = args(3001, 3001, 3001, 0, 1, CM__GEMM_F32, 3004);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
        cm__gemm_args_t q = p;
        q.m = rows[i].m;
        q.n = rows[i].n;
        q.k = rows[i].k;
        const int got = cm__gemm_wave_split(&q, ch, CM_GEMM_FP32, 132, 0, &w);
        const int split = rows[i].parts > 1;
        if (got != rows[i].parts || w.parts != (split ? rows[i].parts : 0) ||
            w.along_n != rows[i].along_n || w.lead != rows[i].lead ||
            w.tiles1 != rows[i].tiles1 || w.tiles2 != rows[i].tiles2)
            fail_msg("row %zu: %d x %d x %d: %d parts (w: %d along_n %d lead %d tiles %lld + "
                     "%lld), expected %d", i, q.m, q.n, q.k, got, w.parts, w.along_n, w.lead,
                     w.tiles1, w.tiles2, rows[i].parts);
    }
    /* a forced split (1: none), a batch, other precisions, kernels and tiles: none */
    assert_int_equal(cm__gemm_wave_split(&p, ch, CM_GEMM_FP32, 132, 1, &w), 1);
    assert_int_equal(cm__gemm_wave_split(&p, ch, CM_GEMM_FP32, 132, 3, &w), 1);
    cm__gemm_args_t q = p;
    q.batch = 2;
    assert_int_equal(cm__gemm_wave_split(&q, ch, CM_GEMM_FP32, 132, 0, &w), 1);
    assert_int_equal(cm__gemm_wave_split(&p, ch, CM_GEMM_FP32_3XTF32, 132, 0, &w), 1);
    assert_int_equal(cm__gemm_wave_split(&p, ch, CM_GEMM_TF32, 132, 0, &w), 1);
    const cm__gemm_choice_t small = {CM__GEMM_KERNEL_FFMA, CM__FFMA_64x64x16};
    assert_int_equal(cm__gemm_wave_split(&p, small, CM_GEMM_FP32, 132, 0, &w), 1);
    const cm__gemm_choice_t mma = {CM__GEMM_KERNEL_MMA, CM__MMA_128x128};
    assert_int_equal(cm__gemm_wave_split(&p, mma, CM_GEMM_FP32, 132, 0, &w), 1);
    assert_int_equal(cm__gemm_wave_split(&p, ch, CM_GEMM_FP32, 0, 0, &w), 1);
    assert_int_equal(cm__gemm_wave_split(NULL, ch, CM_GEMM_FP32, 132, 0, &w), 1);
    /* another GPU: 3001^3 on 108 multiprocessors (216 slots): 2 waves and 144 left, no */
    assert_int_equal(cm__gemm_wave_split(&p, ch, CM_GEMM_FP32, 108, 0, &w), 1);
    /* cm_gemm's and cm_gemm_explain's decision (cm__gemm_wave_taken): the split where split-K
     * does not split and the tests' switch is on */
    assert_int_equal(cm__gemm_wave_taken(&p, ch, CM_GEMM_FP32, 132, 0, 1, &w), 1);
    assert_int_equal(w.parts, 5);
    assert_int_equal(cm__gemm_wave_taken(&p, ch, CM_GEMM_FP32, 132, 0, 2, &w), 0);
    assert_int_equal(w.parts, 0);
    cm__gemm_wave_split_set_for_tests(0);
    assert_int_equal(cm__gemm_wave_taken(&p, ch, CM_GEMM_FP32, 132, 0, 1, &w), 0);
    cm__gemm_wave_split_set_for_tests(-1);
    assert_int_equal(cm__gemm_wave_taken(&p, ch, CM_GEMM_FP32, 132, 0, 1, &w), 1);
    assert_int_equal(cm__gemm_wave_taken(&p, ch, CM_GEMM_FP32, 132, 1, 1, &w), 0);
    {
        /* 3xTF32 on the Hopper kernel (128 x 192 tiles, one block a multiprocessor), where its
         * switch is on (CM__GEMM_WAVE_SPLIT_3XTF32, the tests' switch): 4096^3 is 32 x 22 =
         * 704 tiles, 5 waves of 132 and 44 left (1/3): 30 tile rows (3840 rows, 660 tiles),
         * then 44 tiles in 132 / 44 = 3 parts; a last wave over CM__WAVE_SPLIT_SM90_MAX_FILL
         * (0.5): 4096 x 5000 (32 x 27 = 864 tiles, 72 left) whole; the FFMA tile's choice is
         * not the Hopper kernel's */
        const cm__gemm_choice_t x3 = {CM__GEMM_KERNEL_SM90, CM__GEMM_SM90_3XTF32};
        cm__gemm_args_t sq = args(4096, 4096, 4096, 1, 1, CM__GEMM_F32, 4096);
        cm__gemm_wave_3xtf32_set_for_tests(0);
        assert_int_equal(cm__gemm_wave_split(&sq, x3, CM_GEMM_FP32_3XTF32, 132, 0, &w), 1);
        assert_int_equal(w.parts, 0);
        cm__gemm_wave_3xtf32_set_for_tests(1);
        assert_int_equal(cm__gemm_wave_split(&sq, x3, CM_GEMM_FP32_3XTF32, 132, 0, &w), 3);
        assert_int_equal(w.along_n, 0);
        assert_int_equal(w.lead, 3840);
        assert_int_equal((int)w.tiles1, 660);
        assert_int_equal((int)w.tiles2, 44);
        assert_int_equal(cm__gemm_wave_taken(&sq, x3, CM_GEMM_FP32_3XTF32, 132, 0, 1, &w), 1);
        cm__gemm_args_t pieces[2];
        cm__gemm_wave_pieces(&sq, &w, &pieces[0], &pieces[1]);
        assert_int_equal(pieces[0].m, 3840);
        assert_int_equal(pieces[1].m, 256);
        assert_ptr_equal(pieces[1].a, (const float *)sq.a + (int64_t)3840 * sq.lda);
        assert_ptr_equal(pieces[1].c, (float *)sq.c + (int64_t)3840 * sq.ldc);
        assert_ptr_equal(pieces[1].b, sq.b);
        cm__gemm_args_t wide = sq;
        wide.n = 5000;
        assert_int_equal(cm__gemm_wave_split(&wide, x3, CM_GEMM_FP32_3XTF32, 132, 0, &w), 1);
        assert_int_equal(cm__gemm_wave_split(&sq, x3, CM_GEMM_TF32, 132, 0, &w), 1);
        assert_int_equal(cm__gemm_wave_split(&sq, ch, CM_GEMM_FP32_3XTF32, 132, 0, &w), 1);
        const cm__gemm_choice_t tf = {CM__GEMM_KERNEL_SM90, 0};
        assert_int_equal(cm__gemm_wave_split(&sq, tf, CM_GEMM_FP32_3XTF32, 132, 0, &w), 1);
        /* a forced split and a batch: none */
        assert_int_equal(cm__gemm_wave_split(&sq, x3, CM_GEMM_FP32_3XTF32, 132, 1, &w), 1);
        cm__gemm_args_t b2 = sq;
        b2.batch = 2;
        assert_int_equal(cm__gemm_wave_split(&b2, x3, CM_GEMM_FP32_3XTF32, 132, 0, &w), 1);
        cm__gemm_wave_3xtf32_set_for_tests(-1);
        assert_int_equal(cm__gemm_wave_split(&sq, x3, CM_GEMM_FP32_3XTF32, 132, 0, &w) > 1,
                         CM__GEMM_WAVE_SPLIT_3XTF32 != 0);
    }
}

/* cm__gemm_ffma_whole_form's K tail of x on the pipelined FFMA tile: where it runs (tail_at,
 * CM__FFMA_KTAIL_*) and how long it is (K % 16, or 0 where it has none or x does not run the
 * whole-tile kernel) */
static void tail_at_is(const cm__gemm_args_t *x, int tail_at, int k_tail) {
    int moved = -1, kt = -1, at = -1;
    cm__gemm_ffma_whole_form(x, CM__FFMA_128x128x16q3, &moved, &kt, &at);
    if (at != tail_at || kt != k_tail)
        fail_msg("%dx%dx%d (a_kmajor %d, b_kmajor %d): tail_at %d, k_tail %d; expected %d, %d",
                 x->m, x->n, x->k, x->a_kmajor, x->b_kmajor, at, kt, tail_at, k_tail);
}

/* What the pipelined FFMA tile runs for a problem (cm__gemm_ffma_runs): the whole-tile kernel
 * for whole tiles of 16-byte rows, and (operands along K any rows) for one matrix whose every
 * last tile past M / N moves back inside and whose K tail (from K = CM__FFMA_BOUNDED_MIN_K) runs
 * in it or apart first (tail_at_is); the bounded form from K = CM__FFMA_BOUNDED_MIN_K where the
 * operands along M / N have 16-byte rows (K-contiguous ones need none); the edge kernel from K =
 * CM__FFMA_EDGE_MIN_K; else the fallback's kernels. And when cm_gemm copies FP32 operands to
 * 16-byte rows first (cm__gemm_pitch_wanted). */
static void test_ffma_forms_and_pitch(void **state) {
    (void)state;
    const int q3 = CM__FFMA_128x128x16q3;
    if (!cm__gemm_ffma_built(q3)) skip();
    /* packed column-major C^T form: a along M (lda = m), b along K */
    cm__gemm_args_t w = args(1024, 1024, 1024, 0, 1, CM__GEMM_F32, 1024);
    w.ldb = 1024;
    assert_int_equal(cm__gemm_ffma_runs(&w, q3), CM__FFMA_RUNS_WHOLE);
    assert_int_equal(cm__gemm_ffma_runs(&w, CM__FFMA_128x128x8), CM__FFMA_RUNS_TILE);
    assert_int_equal(cm__gemm_ffma_runs(&w, -1), CM__FFMA_RUNS_TILE);
    assert_int_equal(cm__gemm_ffma_runs(NULL, q3), CM__FFMA_RUNS_TILE);
    cm__gemm_args_t t = w; /* a tail in K only, a along M and b along K: the moved-tile
                              * kernel, its tail in the epilogue, from CM__FFMA_BOUNDED_MIN_K */
    t.k = t.ldb = 3001;
    assert_int_equal(cm__gemm_ffma_runs(&t, q3), CM__FFMA_RUNS_WHOLE);
    t.k = t.ldb = 1100;
    assert_int_equal(cm__gemm_ffma_runs(&t, q3), CM__FFMA_RUNS_WHOLE);
    t.k = t.ldb = CM__FFMA_BOUNDED_MIN_K + 1;
    assert_int_equal(cm__gemm_ffma_runs(&t, q3), CM__FFMA_RUNS_WHOLE);
    t.k = t.ldb = CM__FFMA_BOUNDED_MIN_K - 1;
    assert_int_equal(cm__gemm_ffma_runs(&t, q3), CM__FFMA_RUNS_TILE);
    t.k = t.ldb = 112; /* whole K tiles: any K */
    assert_int_equal(cm__gemm_ffma_runs(&t, q3), CM__FFMA_RUNS_WHOLE);
    t.k = t.ldb = 3001; /* a along M, b along K: after the main loop */
    tail_at_is(&t, CM__FFMA_KTAIL_AFTER, 9);
    t.k = t.ldb = 112;
    /* both along K, whole tiles in M and N: the tail apart from CM__FFMA_KTAIL_APART_MIN_K,
     * below it in the moved-tile kernel before its pipeline (from CM__FFMA_BOUNDED_MIN_K) */
    cm__gemm_args_t kk2 = t;
    kk2.a_kmajor = 1;
    kk2.k = kk2.lda = kk2.ldb = CM__FFMA_KTAIL_APART_MIN_K + 1;
    assert_int_equal(cm__gemm_ffma_runs(&kk2, q3), CM__FFMA_RUNS_WHOLE);
    tail_at_is(&kk2, CM__FFMA_KTAIL_APART, 1);
    kk2.k = kk2.lda = kk2.ldb = CM__FFMA_KTAIL_APART_MIN_K - 1;
    assert_int_equal(cm__gemm_ffma_runs(&kk2, q3), CM__FFMA_RUNS_WHOLE);
    tail_at_is(&kk2, CM__FFMA_KTAIL_BEFORE, 15);
    kk2.k = kk2.lda = kk2.ldb = CM__FFMA_BOUNDED_MIN_K - 1; /* under the pipelined forms' K */
    assert_int_equal(cm__gemm_ffma_runs(&kk2, q3), CM__FFMA_RUNS_TILE);
    tail_at_is(&kk2, CM__FFMA_KTAIL_NONE, 0); /* (not the whole-tile kernel: all 0) */
    cm__gemm_args_t mn2 = kk2; /* both along M / N (M, N multiples of 4), tiles to move */
    mn2.a_kmajor = mn2.b_kmajor = 0;
    mn2.m = 1000;
    mn2.n = 1028;
    mn2.lda = mn2.ldb = 1028;
    mn2.k = 3001;
    assert_int_equal(cm__gemm_ffma_runs(&mn2, q3), CM__FFMA_RUNS_WHOLE);
    tail_at_is(&mn2, CM__FFMA_KTAIL_BEFORE, 9);
    kk2.k = kk2.lda = kk2.ldb = 3001; /* tiles to move, a long K: before its pipeline */
    kk2.m = 1000;
    tail_at_is(&kk2, CM__FFMA_KTAIL_BEFORE, 9);
    kk2.m = 1024; /* apart for a batch too (whole tiles in M and N) */
    kk2.batch = 2;
    kk2.stride_a = kk2.stride_b = 1024LL * 3001;
    kk2.stride_c = 1024LL * 1024;
    assert_int_equal(cm__gemm_ffma_runs(&kk2, q3), CM__FFMA_RUNS_WHOLE);
    tail_at_is(&kk2, CM__FFMA_KTAIL_APART, 9);
    kk2.k = kk2.lda = kk2.ldb = 1100; /* a batch: its tail cannot run in the MOVED kernel */
    assert_int_equal(cm__gemm_ffma_runs(&kk2, q3), CM__FFMA_RUNS_BOUNDED);
    kk2.k = kk2.lda = kk2.ldb = 3001;
    kk2.m = 1000; /* a batch with tiles to move: bounded */
    assert_int_equal(cm__gemm_ffma_runs(&kk2, q3), CM__FFMA_RUNS_BOUNDED);
    cm__gemm_args_t tb = w; /* a batch with a K tail: the bounded form */
    tb.k = tb.ldb = 3001;
    tb.batch = 2;
    tb.stride_a = 1024LL * 3001;
    tb.stride_b = 1024LL * 3001;
    tb.stride_c = 1024LL * 1024;
    assert_int_equal(cm__gemm_ffma_runs(&tb, q3), CM__FFMA_RUNS_BOUNDED);
    tb.k = tb.ldb = 3008; /* a batch: whole tiles only (the MOVED kernel runs one matrix) */
    assert_int_equal(cm__gemm_ffma_runs(&tb, q3), CM__FFMA_RUNS_WHOLE);
    tb.n = 1000;
    assert_int_equal(cm__gemm_ffma_runs(&tb, q3), CM__FFMA_RUNS_BOUNDED);
    cm__gemm_args_t mv = w; /* last tiles past M / N that move back: the whole-tile kernel */
    mv.m = 1000;            /* a along M: M % 4 == 0 */
    mv.n = 1001;            /* b along K: any N */
    mv.k = mv.ldb = 3001;
    assert_int_equal(cm__gemm_ffma_runs(&mv, q3), CM__FFMA_RUNS_WHOLE);
    mv.m = 100; /* shorter than a tile: nothing to move back to */
    assert_int_equal(cm__gemm_ffma_runs(&mv, q3), CM__FFMA_RUNS_BOUNDED);
    mv.m = 1001; /* a along M, M % 4 != 0: bounded, unless its padding may be read */
    mv.lda = 1004;
    assert_int_equal(cm__gemm_ffma_runs(&mv, q3), CM__FFMA_RUNS_BOUNDED);
    mv.a_pad4 = 1;
    assert_int_equal(cm__gemm_ffma_runs(&mv, q3), CM__FFMA_RUNS_WHOLE);
    mv.k = mv.ldb = CM__FFMA_BOUNDED_MIN_K - 1; /* K under the pipelined forms' */
    assert_int_equal(cm__gemm_ffma_runs(&mv, q3), CM__FFMA_RUNS_TILE);
    cm__gemm_args_t mt = w; /* a tail in M, K-contiguous b without 16-byte rows: bounded */
    mt.m = 1001;
    mt.lda = 1004;
    mt.ldb = 1027;
    assert_int_equal(cm__gemm_ffma_runs(&mt, q3), CM__FFMA_RUNS_BOUNDED);
    mt.lda = 1003; /* a along M without 16-byte rows: the edge kernel from its K */
    assert_int_equal(cm__gemm_ffma_runs(&mt, q3), CM__FFMA_RUNS_EDGE);
    mt.k = CM__FFMA_EDGE_MIN_K - 1;
    assert_int_equal(cm__gemm_ffma_runs(&mt, q3), CM__FFMA_RUNS_TILE);
    mt.k = 1024;
    mt.lda = 1004;
    mt.a = (const void *)(uintptr_t)4100; /* a base off 16 bytes */
    assert_int_equal(cm__gemm_ffma_runs(&mt, q3), CM__FFMA_RUNS_EDGE);
    cm__gemm_args_t mis = w; /* whole tiles, b (along K: 4-byte copies) without 16-byte rows */
    mis.ldb = 1025;
    assert_int_equal(cm__gemm_ffma_runs(&mis, q3), CM__FFMA_RUNS_WHOLE);
    cm__gemm_args_t kl = w; /* split-K's shorter last part: not whole K tiles */
    kl.batch = 3;
    kl.k_last = 100;
    assert_int_equal(cm__gemm_ffma_runs(&kl, q3), CM__FFMA_RUNS_BOUNDED);
    cm__gemm_args_t bf = w;
    bf.in_type = CM__GEMM_BF16;
    assert_int_equal(cm__gemm_ffma_runs(&bf, q3), CM__FFMA_RUNS_TILE);
    cm__gemm_args_t huge = t; /* an in-slab offset past 32 bits: the fallback's kernels */
    huge.k = 1100;
    huge.lda = (int64_t)1 << 22;
    huge.m = 1001;
    assert_int_equal(cm__gemm_ffma_runs(&huge, q3), CM__FFMA_RUNS_TILE);

    /* the pitched copy: 3001^3 column-major NN in the kernels' form (a along M, lda 3001) */
    int sa = -1, sb = -1;
    const cm__gemm_choice_t ch = {CM__GEMM_KERNEL_FFMA, q3};
    cm__gemm_args_t p = args(3001, 3001, 3001, 0, 1, CM__GEMM_F32, 3001);
    p.ldb = 3001;
    assert_true(cm__gemm_pitch_wanted(CM_GEMM_FP32, 9, &p, ch, NULL, &sa, &sb));
    assert_int_equal(sa, 1);
    assert_int_equal(sb, 0);
    assert_true(cm__gemm_pitch_wanted(CM_GEMM_FP32_3XTF32, 8, &p, ch, "", &sa, &sb));
    assert_false(cm__gemm_pitch_wanted(CM_GEMM_TF32, 9, &p, ch, NULL, &sa, &sb));
    assert_int_equal(sa + sb, 0);
    assert_false(cm__gemm_pitch_wanted(CM_GEMM_FP32, 7, &p, ch, NULL, &sa, &sb));
    assert_false(cm__gemm_pitch_wanted(CM_GEMM_FP32, 9, &p, ch, "ffma:128x128x16q3", &sa, &sb));
    const cm__gemm_choice_t f8 = {CM__GEMM_KERNEL_FFMA, CM__FFMA_128x128x8};
    assert_false(cm__gemm_pitch_wanted(CM_GEMM_FP32, 9, &p, f8, NULL, &sa, &sb));
    const cm__gemm_choice_t mma = {CM__GEMM_KERNEL_MMA, CM__MMA_128x128};
    assert_false(cm__gemm_pitch_wanted(CM_GEMM_FP32, 9, &p, mma, NULL, &sa, &sb));
    cm__gemm_args_t b2 = p; /* a batch: left as it is */
    b2.batch = 2;
    b2.stride_a = 3001LL * 3001;
    assert_false(cm__gemm_pitch_wanted(CM_GEMM_FP32, 9, &b2, ch, NULL, &sa, &sb));
    cm__gemm_args_t nn = p; /* the other side of C (N for a) under CM__GEMM_PITCH_MIN_SIDE */
    nn.n = CM__GEMM_PITCH_MIN_SIDE - 1;
    assert_false(cm__gemm_pitch_wanted(CM_GEMM_FP32, 9, &nn, ch, NULL, &sa, &sb));
    nn.n = CM__GEMM_PITCH_MIN_SIDE;
    assert_true(cm__gemm_pitch_wanted(CM_GEMM_FP32, 9, &nn, ch, NULL, &sa, &sb));
    cm__gemm_args_t sk = p; /* K under the bounded form's: no form to gain */
    sk.k = CM__FFMA_BOUNDED_MIN_K - 1;
    sk.ldb = sk.k;
    assert_false(cm__gemm_pitch_wanted(CM_GEMM_FP32, 9, &sk, ch, NULL, &sa, &sb));
    cm__gemm_args_t few = args(1024, 1024, 400, 0, 1, CM__GEMM_F32, 1025); /* 0.84 Gflop */
    few.ldb = 400;
    assert_true(2.0 * 1024 * 1024 * 400 < CM__GEMM_PITCH_MIN_FLOPS);
    assert_false(cm__gemm_pitch_wanted(CM_GEMM_FP32, 9, &few, ch, NULL, &sa, &sb));
    cm__gemm_args_t al = p; /* 16-byte rows already */
    al.lda = 3004;
    assert_false(cm__gemm_pitch_wanted(CM_GEMM_FP32, 9, &al, ch, NULL, &sa, &sb));
    cm__gemm_args_t kk = p; /* along K without 16-byte rows: the bounded form reads it */
    kk.a_kmajor = 1;
    assert_false(cm__gemm_pitch_wanted(CM_GEMM_FP32, 9, &kk, ch, NULL, &sa, &sb));
    cm__gemm_args_t both = p; /* both along M / N, both off 16 bytes */
    both.b_kmajor = 0;
    both.ldb = 3003;
    assert_true(cm__gemm_pitch_wanted(CM_GEMM_FP32, 9, &both, ch, NULL, &sa, &sb));
    assert_int_equal(sa, 1);
    assert_int_equal(sb, 1);
    cm__gemm_args_t bm = both; /* N too short for a's copy, and b's alone does not do */
    bm.n = 1000;
    assert_false(cm__gemm_pitch_wanted(CM_GEMM_FP32, 9, &bm, ch, NULL, &sa, &sb));
    bm.a_kmajor = 1; /* a along K: b's copy alone gives the bounded form */
    assert_true(cm__gemm_pitch_wanted(CM_GEMM_FP32, 9, &bm, ch, NULL, &sa, &sb));
    assert_int_equal(sa, 0);
    assert_int_equal(sb, 1);
    cm__gemm_args_t wt = p; /* whole tiles with a base off 16 bytes: the whole-tile kernel */
    wt.m = wt.n = 2048;
    wt.k = 2048;
    wt.lda = 2048;
    wt.ldb = 2048;
    wt.a = (const void *)(uintptr_t)4100;
    assert_true(cm__gemm_pitch_wanted(CM_GEMM_FP32, 9, &wt, ch, NULL, &sa, &sb));
    assert_int_equal(sa, 1);
}

/* cm__gemm_pack_copy_kernel: which kernel copies a K-contiguous side of the staging */
static void test_pack_copy_kernel(void **state) {
    (void)state;
    const unsigned long long mib = 1ull << 20, cap = CM__PACK_PAIR_TAKES_BYTES;
    /* rows of 127 bf16 (254 bytes) or 127 floats (508): the pair kernel while both sides
     * together fit the bound, whether or not it runs anyway */
    assert_int_equal(cm__gemm_pack_copy_kernel(2, 127, mib, mib + 32768, 0), 0);
    assert_int_equal(cm__gemm_pack_copy_kernel(4, 127, 2 * mib, 2 * mib + 508000, 0), 0);
    assert_int_equal(cm__gemm_pack_copy_kernel(2, 255, cap / 2, cap, 0), 0);
    /* 512 bytes and more (one warp's 16-byte stores): the row-copy kernel */
    assert_int_equal(cm__gemm_pack_copy_kernel(2, 256, mib, 2 * mib, 0), 1);
    assert_int_equal(cm__gemm_pack_copy_kernel(4, 128, mib, 2 * mib, 0), 1);
    assert_int_equal(cm__gemm_pack_copy_kernel(2, 1001, 2 * mib, 4 * mib, 0), 1);
    /* short rows over the bound together: the row-copy kernel, unless the pair kernel runs
     * anyway and takes this side along (at most the bound) */
    assert_int_equal(cm__gemm_pack_copy_kernel(2, 127, 3 * mib, cap + 1, 0), 1);
    assert_int_equal(cm__gemm_pack_copy_kernel(2, 127, 3 * mib, cap + 1, 1), 0);
    assert_int_equal(cm__gemm_pack_copy_kernel(2, 127, cap + 1, cap + 1, 1), 1);
    /* long rows: taken along only where the pair kernel runs anyway, up to the bound */
    assert_int_equal(cm__gemm_pack_copy_kernel(2, 3001, cap, 2 * cap, 1), 0);
    assert_int_equal(cm__gemm_pack_copy_kernel(2, 3001, cap + 2, 2 * cap, 1), 1);
    assert_int_equal(cm__gemm_pack_copy_kernel(4, 3001, mib, mib, 0), 1);
    /* no overflow: K near INT_MAX */
    assert_int_equal(cm__gemm_pack_copy_kernel(4, 0x7fffffff, mib, mib, 0), 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_enums_and_sizes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_leading_dimensions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_handles_bounds_devices, setup, teardown),
        cmocka_unit_test_setup_teardown(test_misaligned_offsets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batched_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_aliasing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_explain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_explain_random, setup, teardown),
        cmocka_unit_test(test_normalisation),
        cmocka_unit_test(test_dispatch),
        cmocka_unit_test(test_shipped_set),
        cmocka_unit_test(test_bf16),
        cmocka_unit_test(test_splitk_parts),
        cmocka_unit_test(test_splitk_chunks),
        cmocka_unit_test(test_ffma_forms_and_pitch),
        cmocka_unit_test(test_wave_split),
        cmocka_unit_test(test_wave_pieces),
        cmocka_unit_test(test_c_vec4),
        cmocka_unit_test(test_pack_copy_kernel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
