/*
 * Argument checks of every public function of kernels.h, the reduction's size-to-grid
 * arithmetic, and the choice between the vectorized and the scalar path (head / body / tail; by
 * example and over every alignment combination of 1..3 operands). NULL, destroyed and foreign
 * handles; byte offsets that are not a multiple of the element size; element ranges past the
 * end of a buffer or overflowing size_t; operands on two devices; overlaps that are not allowed
 * (partial overlap of an input with the output, a reduction's result inside its input); NULL
 * host results. Each failure returns CM_ERROR_INVALID_ARGUMENT with a message and a hint and
 * writes nothing. Offsets are bytes (kernels.h); the range messages still count elements.
 *
 * Runs on the simulated devices and streams of test_buffer_fake.h / test_stream_fake.h: every
 * failure here is decided before any kernel is queued, so no GPU is needed.
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/interop.h>
#include <cudamodel/kernels.h>

#include "kernels.h"
#include "test_stream_fake.h" /* and test_buffer_fake.h */

#define NF 1024            /* floats in each buffer */
#define NB (NF * 4)        /* bytes */
#define INV CM_ERROR_INVALID_ARGUMENT
#define F4 sizeof(float)   /* bytes of one float element: offsets are bytes */
#define D8 sizeof(double)  /* bytes of one double element */
/* The largest byte offset that is a multiple of an element of e bytes (e a power of two). */
#define TOP(e) (SIZE_MAX - ((e) - 1))

typedef struct fixture {
    cm_device_t *dev0, *dev1;
    cm_buffer_t *x, *y;   /* NB bytes on device 0 */
    cm_buffer_t *x1;      /* NB bytes on device 1 */
    cm_buffer_t *dead;    /* destroyed */
    cm_stream_t *s0, *s1; /* pooled streams of devices 0 and 1 */
    cm_stream_t *gone;    /* released */
} fixture_t;

static fixture_t g;

static void fill_sentinels(void) {
    void *p = NULL;
    CM_ASSERT_OK(cm_buffer_device_ptr(g.x, &p));
    memset(p, 0xAB, NB);
    CM_ASSERT_OK(cm_buffer_device_ptr(g.y, &p));
    memset(p, 0xAB, NB);
    CM_ASSERT_OK(cm_buffer_device_ptr(g.x1, &p));
    memset(p, 0xAB, NB);
}

static void expect_sentinels(void) {
    unsigned char ab[NB];
    memset(ab, 0xAB, NB);
    void *p = NULL;
    CM_ASSERT_OK(cm_buffer_device_ptr(g.x, &p));
    assert_memory_equal(p, ab, NB);
    CM_ASSERT_OK(cm_buffer_device_ptr(g.y, &p));
    assert_memory_equal(p, ab, NB);
    CM_ASSERT_OK(cm_buffer_device_ptr(g.x1, &p));
    assert_memory_equal(p, ab, NB);
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
        cm_buffer_create(g.dev1, NB, &g.x1))
        return -1;
    if (cm_buffer_create(g.dev0, 64, &g.dead) || cm_buffer_destroy(g.dead)) return -1;
    fill_sentinels();
    return 0;
}

static int teardown(void **state) {
    (void)state;
    int bad = cm_buffer_destroy(g.x) | cm_buffer_destroy(g.y) | cm_buffer_destroy(g.x1);
    bad |= cm_stream_release(g.s0) | cm_stream_release(g.s1);
    bad |= cm_device_close(g.dev0) | cm_device_close(g.dev1);
    int left = fake_outstanding(), violations = fake.violations;
    xfake_uninstall();
    return (bad || left || violations) ? -1 : 0;
}

/* ---------------------------------------------------------------- vector operations */

static void test_add_arguments(void **state) {
    (void)state;
    EXPECT_FAIL(cm_vector_add_f32(NULL, NULL, 0, g.x, 0, g.y, 0, 4), INV, "out is NULL");
    EXPECT_FAIL(cm_vector_add_f32(NULL, g.x, 0, NULL, 0, g.y, 0, 4), INV, "x is NULL");
    EXPECT_FAIL(cm_vector_add_f32(NULL, g.x, 0, g.y, 0, NULL, 0, 4), INV, "y is NULL");
    EXPECT_FAIL(cm_vector_add_f32(NULL, g.x, 0, g.dead, 0, g.y, 0, 4), INV, "x");
    EXPECT_FAIL(cm_vector_add_f32(NULL, g.x, 0, g.y, 0, g.y, 0, NF + 1), INV,
                "past the end of out");
    EXPECT_FAIL(cm_vector_add_f32(NULL, g.x, 0, g.y, 1 * F4, g.y, 0, NF), INV,
                "past the end of x");
    EXPECT_FAIL(cm_vector_add_f32(NULL, g.x, 0, g.y, 0, g.y, (NF + 1) * F4, 0), INV, "y range");
    EXPECT_FAIL(cm_vector_add_f32(NULL, g.x, TOP(F4), g.y, 0, g.y, 0, 2), INV, "out range");
    EXPECT_FAIL(cm_vector_add_f32(NULL, g.x, 4 * F4, g.y, 0, g.y, 0, SIZE_MAX), INV, "overflows");
    EXPECT_FAIL(cm_vector_add_f32(NULL, g.x, 0, g.x1, 0, g.y, 0, 4), INV,
                "x is on device 1 but out is on device 0");
    EXPECT_FAIL(cm_vector_add_f32(NULL, g.x, 0, g.y, 0, g.x1, 0, 4), INV, "y is on device 1");
    EXPECT_FAIL(cm_vector_add_f32(NULL, g.x, 0, g.x, 1 * F4, g.y, 0, 8), INV, "overlaps x");
    EXPECT_FAIL(cm_vector_add_f32(NULL, g.x, 4 * F4, g.y, 0, g.x, 0, 8), INV, "overlaps y");
    /* f64: the same buffers hold half as many elements */
    EXPECT_FAIL(cm_vector_add_f64(NULL, g.x, 0, g.y, 0, g.y, 0, NF / 2 + 1), INV,
                "past the end of out");
    EXPECT_FAIL(cm_vector_add_f64(NULL, g.x, 0, g.y, 0, g.x1, 0, 1), INV, "device 1");
    EXPECT_FAIL(cm_vector_add_f64(NULL, g.x, 0, g.x, 1 * D8, g.y, 0, 4), INV, "overlaps x");
    EXPECT_FAIL(cm_vector_add_f64(NULL, g.x, 0, NULL, 0, g.y, 0, 4), INV, "x is NULL");
    expect_sentinels();
    /* allowed: in place (exact alias), disjoint ranges of one buffer, n = 0 anywhere in range */
    CM_ASSERT_OK(cm_vector_add_f32(NULL, g.x, 0, g.x, 0, g.x, 0, 0));
    CM_ASSERT_OK(cm_vector_add_f32(NULL, g.x, NF * F4, g.y, NF * F4, g.y, NF * F4, 0));
    CM_ASSERT_OK(cm_vector_add_f64(NULL, g.x, 0, g.x, 0, g.y, 0, 0));
    expect_sentinels();
}

/* The enum forms: an operation or type outside what the call takes, and operands the operation
 * does not read, are refused before anything is queued. */
static void test_enum_forms_arguments(void **state) {
    (void)state;
    const float one = 1.0f, two = 2.0f;
    /* the scalar: required where the operation reads it, refused where it does not */
    EXPECT_FAIL(cm_vector(NULL, CM_VECTOR_SCALE, CM_DTYPE_F32, 4, NULL, g.x, 0, g.y, 0, NULL, 0),
                INV, "alpha is NULL");
    EXPECT_FAIL(cm_vector(NULL, CM_VECTOR_FILL, CM_DTYPE_F64, 4, NULL, g.x, 0, NULL, 0, NULL, 0),
                INV, "alpha is NULL");
    EXPECT_FAIL(cm_vector(NULL, CM_VECTOR_ADD, CM_DTYPE_F32, 4, &one, g.x, 0, g.y, 0, g.y, 0), INV,
                "does not read alpha");
    EXPECT_FAIL(cm_vector(NULL, (cm_vector_op_t)9, CM_DTYPE_F32, 4, NULL, g.x, 0, g.y, 0, NULL, 0),
                INV, "not a cm_vector_op_t");
    EXPECT_FAIL(cm_vector(NULL, CM_VECTOR_COPY, CM_DTYPE_I32, 4, NULL, g.x, 0, g.y, 0, NULL, 0), INV,
                "CM_DTYPE_I32");
    EXPECT_FAIL(cm_vector(NULL, CM_VECTOR_FILL, CM_DTYPE_BF16, 4, &one, g.x, 0, NULL, 0, NULL, 0),
                INV, "CM_DTYPE_BF16");
    EXPECT_FAIL(cm_vector(NULL, CM_VECTOR_FILL, CM_DTYPE_F32, 4, &one, g.x, 0, g.y, 0, NULL, 0), INV,
                "does not read x");
    EXPECT_FAIL(cm_vector(NULL, CM_VECTOR_SCALE, CM_DTYPE_F32, 4, &two, g.x, 0, g.y, 0, g.y, 0), INV,
                "does not read y");
    EXPECT_FAIL(cm_vector(NULL, CM_VECTOR_AXPY, CM_DTYPE_F32, 4, &two, g.x, 0, g.y, 0, NULL, 0), INV,
                "y is NULL");
    EXPECT_FAIL(cm_vector(NULL, CM_VECTOR_AXPY, CM_DTYPE_F32, 8, &two, g.x, 0, g.y, 0, g.x, 1 * F4),
                INV, "overlaps y");
    float f = 0.0f;
    uint64_t idx = 0;
    EXPECT_FAIL(cm_reduce(NULL, (cm_reduce_op_t)7, CM_DTYPE_F32, 4, g.x, 0, NULL, 0, g.y, 0), INV,
                "not a cm_reduce_op_t");
    EXPECT_FAIL(cm_reduce(NULL, CM_REDUCE_ARGMIN, CM_DTYPE_I32, 4, g.x, 0, NULL, 0, g.y, 0), INV,
                "CM_REDUCE_ARGMIN is not available for CM_DTYPE_I32");
    EXPECT_FAIL(cm_reduce(NULL, CM_REDUCE_SUM, CM_DTYPE_U8, 4, g.x, 0, NULL, 0, g.y, 0), INV,
                "CM_DTYPE_U8");
    EXPECT_FAIL(cm_reduce(NULL, CM_REDUCE_SUM, CM_DTYPE_F32, 4, g.x, 0, g.x, 0, g.y, 0), INV,
                "does not read y");
    EXPECT_FAIL(cm_reduce_to_host(NULL, CM_REDUCE_MAX, CM_DTYPE_F32, 4, g.x, 0, NULL, 0, &f, &f),
                INV, "value is not NULL");
    EXPECT_FAIL(cm_reduce_to_host(NULL, CM_REDUCE_ARGMAX, CM_DTYPE_F32, 4, g.x, 0, NULL, 0, NULL,
                                  NULL), INV, "NULL");
    (void)idx;
    expect_sentinels();
}

static void test_axpy_scale_arguments(void **state) {
    (void)state;
    EXPECT_FAIL(cm_vector_axpy_f32(NULL, 2.0f, NULL, 0, g.y, 0, 4), INV, "x is NULL");
    EXPECT_FAIL(cm_vector_axpy_f32(NULL, 2.0f, g.x, 0, NULL, 0, 4), INV, "y is NULL");
    EXPECT_FAIL(cm_vector_axpy_f32(NULL, 2.0f, g.x, 0, g.y, 1 * F4, NF), INV, "past the end of y");
    EXPECT_FAIL(cm_vector_axpy_f32(NULL, 2.0f, g.x, TOP(F4), g.y, 0, 1), INV, "x range");
    EXPECT_FAIL(cm_vector_axpy_f32(NULL, 2.0f, g.x1, 0, g.y, 0, 4), INV, "x is on device 1");
    EXPECT_FAIL(cm_vector_axpy_f32(NULL, 2.0f, g.y, 2 * F4, g.y, 0, 4), INV, "overlaps x");
    EXPECT_FAIL(cm_vector_axpy_f32(NULL, 2.0f, g.dead, 0, g.y, 0, 4), INV, "x");
    EXPECT_FAIL(cm_vector_axpy_f64(NULL, 2.0, g.x, 0, g.y, 0, NF / 2 + 1), INV, "past the end");
    EXPECT_FAIL(cm_vector_axpy_f64(NULL, 2.0, g.x, 0, g.x1, 0, 1), INV, "device");
    EXPECT_FAIL(cm_vector_axpy_f64(NULL, 2.0, g.y, 1 * D8, g.y, 0, 4), INV, "overlaps x");
    EXPECT_FAIL(cm_vector_scale_f32(NULL, 2.0f, NULL, 0, g.x, 0, 4), INV, "out is NULL");
    EXPECT_FAIL(cm_vector_scale_f32(NULL, 2.0f, g.y, 0, NULL, 0, 4), INV, "x is NULL");
    EXPECT_FAIL(cm_vector_scale_f32(NULL, 2.0f, g.y, 0, g.x, 0, NF + 1), INV, "past the end");
    EXPECT_FAIL(cm_vector_scale_f32(NULL, 2.0f, g.y, 0, g.x1, 0, 4), INV, "device 1");
    EXPECT_FAIL(cm_vector_scale_f32(NULL, 2.0f, g.y, 3 * F4, g.y, 0, 4), INV, "overlaps x");
    EXPECT_FAIL(cm_vector_scale_f64(NULL, 2.0, g.y, 0, g.x, SIZE_MAX / 2 + 1, 4), INV, "x range");
    EXPECT_FAIL(cm_vector_scale_f64(NULL, 2.0, g.y, 0, g.x, 0, SIZE_MAX), INV, "out range");
    EXPECT_FAIL(cm_vector_scale_f64(NULL, 2.0, g.x1, 0, g.x, 0, 4), INV, "device");
    expect_sentinels();
    CM_ASSERT_OK(cm_vector_axpy_f32(NULL, 2.0f, g.y, 0, g.y, 0, 0));
    CM_ASSERT_OK(cm_vector_scale_f64(NULL, 2.0, g.y, 0, g.y, 0, 0));
    expect_sentinels();
}

static void test_fill_copy_arguments(void **state) {
    (void)state;
    EXPECT_FAIL(cm_vector_fill_f32(NULL, NULL, 0, 1.0f, 4), INV, "out is NULL");
    EXPECT_FAIL(cm_vector_fill_f32(NULL, g.dead, 0, 1.0f, 4), INV, "out");
    EXPECT_FAIL(cm_vector_fill_f32(NULL, g.x, (NF - 3) * F4, 1.0f, 4), INV, "past the end of out");
    EXPECT_FAIL(cm_vector_fill_f32(NULL, g.x, (NF + 1) * F4, 1.0f, 0), INV, "out range");
    EXPECT_FAIL(cm_vector_fill_f64(NULL, g.x, 1 * D8, 1.0, SIZE_MAX), INV, "overflows");
    EXPECT_FAIL(cm_vector_fill_f64(NULL, g.x, NF / 2 * D8, 1.0, 1), INV, "past the end");
    EXPECT_FAIL(cm_vector_copy_f32(NULL, NULL, 0, g.x, 0, 4), INV, "out is NULL");
    EXPECT_FAIL(cm_vector_copy_f32(NULL, g.y, 0, NULL, 0, 4), INV, "x is NULL");
    EXPECT_FAIL(cm_vector_copy_f32(NULL, g.y, 0, g.x, 1 * F4, NF), INV, "past the end of x");
    EXPECT_FAIL(cm_vector_copy_f32(NULL, g.y, 0, g.x1, 0, 4), INV, "x is on device 1");
    EXPECT_FAIL(cm_vector_copy_f32(NULL, g.x, 1 * F4, g.x, 0, 4), INV, "overlaps x");
    EXPECT_FAIL(cm_vector_copy_f64(NULL, g.y, 0, g.x, 0, NF / 2 + 1), INV, "past the end");
    EXPECT_FAIL(cm_vector_copy_f64(NULL, g.x1, 0, g.x, 0, 4), INV, "device");
    EXPECT_FAIL(cm_vector_copy_f64(NULL, g.x, 0, g.x, 1 * D8, 4), INV, "overlaps x");
    expect_sentinels();
    CM_ASSERT_OK(cm_vector_fill_f32(NULL, g.x, NF * F4, 1.0f, 0));
    CM_ASSERT_OK(cm_vector_copy_f64(NULL, g.x, 0, g.x, 0, 0));
    expect_sentinels();
}

/* Offsets count bytes: one that is not a multiple of the operand's element size is refused,
 * the message naming the offset argument, its value and the element size, before any check of
 * the buffers and before anything is queued (a stream or NULL alike). */
static void test_vector_misaligned_offsets(void **state) {
    (void)state;
    const float two = 2.0f;
    EXPECT_FAIL(cm_vector_add_f32(NULL, g.x, 2, g.y, 0, g.y, 0, 4), INV,
                "out_offset 2 is not a multiple of the 4-byte element; nothing was queued");
    assert_non_null(strstr(cm_last_error()->hint, "offsets count bytes"));
    EXPECT_FAIL(cm_vector_add_f32(NULL, g.x, 0, g.y, 6, g.y, 0, 4), INV,
                "x_offset 6 is not a multiple of the 4-byte element; nothing was queued");
    EXPECT_FAIL(cm_vector_add_f32(g.s0, g.x, 0, g.y, 0, g.y, 1, 4), INV,
                "y_offset 1 is not a multiple of the 4-byte element; nothing was queued");
    /* a multiple of 4 is not enough for doubles */
    EXPECT_FAIL(cm_vector_add_f64(NULL, g.x, 0, g.y, 4, g.y, 0, 4), INV,
                "x_offset 4 is not a multiple of the 8-byte element");
    EXPECT_FAIL(cm_vector_axpy_f64(g.s0, 2.0, g.x, 12, g.y, 0, 4), INV,
                "x_offset 12 is not a multiple of the 8-byte element");
    EXPECT_FAIL(cm_vector_scale_f32(NULL, 2.0f, g.y, 5, g.x, 0, 4), INV,
                "out_offset 5 is not a multiple of the 4-byte element");
    EXPECT_FAIL(cm_vector_fill_f64(NULL, g.x, 20, 1.0, 4), INV,
                "out_offset 20 is not a multiple of the 8-byte element");
    EXPECT_FAIL(cm_vector_copy_f32(g.s0, g.y, 0, g.x, 7, 4), INV,
                "x_offset 7 is not a multiple of the 4-byte element");
    EXPECT_FAIL(cm_vector(NULL, CM_VECTOR_AXPY, CM_DTYPE_F32, 4, &two, g.x, 0, g.y, 0, g.y, 3),
                INV, "y_offset 3 is not a multiple of the 4-byte element");
    /* refused even with n = 0 (nothing to do) */
    EXPECT_FAIL(cm_vector_copy_f64(NULL, g.y, 0, g.x, 9, 0), INV,
                "x_offset 9 is not a multiple of the 8-byte element");
    expect_sentinels();
    /* element-aligned byte offsets are accepted (n = 0: nothing queued) */
    CM_ASSERT_OK(cm_vector_add_f32(NULL, g.x, 4, g.y, 8, g.y, 12, 0));
    CM_ASSERT_OK(cm_vector_fill_f64(g.s0, g.x, 8, 1.0, 0));
    expect_sentinels();
}

/* ---------------------------------------------------------------- reductions */

/* A device-result reduction f(stream, x, x_offset, n, result, result_offset) of element size
 * elem and result size rsize, checked through every rule (offsets in bytes). */
typedef cm_status_t (*reduce_fn_t)(cm_stream_t *, const cm_buffer_t *, size_t, size_t,
                                   cm_buffer_t *, size_t);

static void check_reduce(reduce_fn_t f, const char *name, size_t elem, size_t rsize) {
    print_message("%s\n", name);
    const size_t n = NB / elem, rn = NB / rsize;
    EXPECT_FAIL(f(NULL, NULL, 0, 4, g.y, 0), INV, "x is NULL");
    EXPECT_FAIL(f(NULL, g.dead, 0, 4, g.y, 0), INV, "x");
    EXPECT_FAIL(f(NULL, g.x, 0, 4, NULL, 0), INV, "result is NULL");
    EXPECT_FAIL(f(NULL, g.x, 0, n + 1, g.y, 0), INV, "past the end of x");
    EXPECT_FAIL(f(NULL, g.x, 1 * elem, n, g.y, 0), INV, "past the end of x");
    EXPECT_FAIL(f(NULL, g.x, TOP(elem), 1, g.y, 0), INV, "x range");
    EXPECT_FAIL(f(NULL, g.x, 2 * elem, SIZE_MAX, g.y, 0), INV, "overflows");
    EXPECT_FAIL(f(NULL, g.x, 0, 4, g.y, rn * rsize), INV, "past the end of result");
    EXPECT_FAIL(f(NULL, g.x, 0, 4, g.y, TOP(rsize)), INV, "result range");
    EXPECT_FAIL(f(NULL, g.x1, 0, 4, g.y, 0), INV, "is on device");
    EXPECT_FAIL(f(NULL, g.x, 0, 4, g.x1, 0), INV, "result is on device 1");
    /* the result may not lie in the input: first, middle and last element of the range */
    EXPECT_FAIL(f(NULL, g.x, 0, n, g.x, 0), INV, "overlaps x");
    EXPECT_FAIL(f(NULL, g.x, 0, n, g.x, rn / 2 * rsize), INV, "overlaps x");
    EXPECT_FAIL(f(NULL, g.x, 0, n, g.x, (rn - 1) * rsize), INV, "overlaps x");
    expect_sentinels();
}

typedef cm_status_t (*dot_fn_t)(cm_stream_t *, const cm_buffer_t *, size_t, const cm_buffer_t *,
                                size_t, size_t, cm_buffer_t *, size_t);

static void check_dot(dot_fn_t f, const char *name, size_t elem) {
    print_message("%s\n", name);
    const size_t n = NB / elem;
    EXPECT_FAIL(f(NULL, NULL, 0, g.x, 0, 4, g.y, 0), INV, "x is NULL");
    EXPECT_FAIL(f(NULL, g.x, 0, NULL, 0, 4, g.y, 0), INV, "y is NULL");
    EXPECT_FAIL(f(NULL, g.x, 0, g.x, 0, 4, NULL, 0), INV, "result is NULL");
    EXPECT_FAIL(f(NULL, g.x, 0, g.x, 1 * elem, n, g.y, 0), INV, "past the end of y");
    EXPECT_FAIL(f(NULL, g.x, 0, g.x, TOP(elem), 1, g.y, 0), INV, "y range");
    EXPECT_FAIL(f(NULL, g.x, 0, g.x1, 0, 4, g.y, 0), INV, "y is on device 1");
    /* the result of a dot has the inputs' type: elem bytes */
    EXPECT_FAIL(f(NULL, g.x, 0, g.y, 0, 4, g.y, 1 * elem), INV, "overlaps y");
    EXPECT_FAIL(f(NULL, g.x, 0, g.x, 0, 4, g.y, NB), INV, "past the end of result");
    expect_sentinels();
}

static void test_reduce_arguments(void **state) {
    (void)state;
    check_reduce(cm_reduce_sum_f32, "sum_f32", 4, 4);
    check_reduce(cm_reduce_sum_f64, "sum_f64", 8, 8);
    check_reduce(cm_reduce_sum_i32, "sum_i32", 4, 8);
    check_reduce(cm_reduce_min_f32, "min_f32", 4, 4);
    check_reduce(cm_reduce_min_f64, "min_f64", 8, 8);
    check_reduce(cm_reduce_min_i32, "min_i32", 4, 4);
    check_reduce(cm_reduce_max_f32, "max_f32", 4, 4);
    check_reduce(cm_reduce_max_f64, "max_f64", 8, 8);
    check_reduce(cm_reduce_max_i32, "max_i32", 4, 4);
    check_reduce(cm_reduce_argmin_f32, "argmin_f32", 4, 8);
    check_reduce(cm_reduce_argmin_f64, "argmin_f64", 8, 8);
    check_reduce(cm_reduce_argmax_f32, "argmax_f32", 4, 8);
    check_reduce(cm_reduce_argmax_f64, "argmax_f64", 8, 8);
    check_dot(cm_reduce_dot_f32, "dot_f32", 4);
    check_dot(cm_reduce_dot_f64, "dot_f64", 8);
}

static void test_reduce_to_host_arguments(void **state) {
    (void)state;
    float f = 7.0f;
    double d = 7.0;
    int64_t l = 7;
    int32_t i = 7;
    uint64_t idx = 7;
    EXPECT_FAIL(cm_reduce_sum_f32_to_host(NULL, g.x, 0, 4, NULL), INV, "result pointer is NULL");
    EXPECT_FAIL(cm_reduce_sum_f32_to_host(NULL, NULL, 0, 4, &f), INV, "x is NULL");
    EXPECT_FAIL(cm_reduce_sum_f32_to_host(NULL, g.x, 1 * F4, NF, &f), INV, "past the end of x");
    EXPECT_FAIL(cm_reduce_sum_f64_to_host(NULL, g.x, 0, NF / 2 + 1, &d), INV, "past the end");
    EXPECT_FAIL(cm_reduce_sum_f64_to_host(NULL, g.x, 0, 4, NULL), INV, "NULL");
    EXPECT_FAIL(cm_reduce_sum_i32_to_host(NULL, g.x, TOP(4), 1, &l), INV, "x range");
    EXPECT_FAIL(cm_reduce_sum_i32_to_host(NULL, g.dead, 0, 1, &l), INV, "x");
    EXPECT_FAIL(cm_reduce_min_f32_to_host(NULL, g.x, 0, NF + 1, &f), INV, "past the end");
    EXPECT_FAIL(cm_reduce_min_f64_to_host(NULL, NULL, 0, 1, &d), INV, "x is NULL");
    EXPECT_FAIL(cm_reduce_min_i32_to_host(NULL, g.x, 0, 1, NULL), INV, "NULL");
    EXPECT_FAIL(cm_reduce_max_f32_to_host(NULL, g.x, 3 * F4, SIZE_MAX, &f), INV, "overflows");
    EXPECT_FAIL(cm_reduce_max_f64_to_host(NULL, g.x, 0, 4, NULL), INV, "NULL");
    EXPECT_FAIL(cm_reduce_max_i32_to_host(NULL, g.x, 0, NF + 1, &i), INV, "past the end");
    EXPECT_FAIL(cm_reduce_argmin_f32_to_host(NULL, g.x, 0, 4, NULL, &f), INV, "NULL");
    EXPECT_FAIL(cm_reduce_argmin_f32_to_host(NULL, g.x, 0, NF + 1, &idx, NULL), INV,
                "past the end");
    EXPECT_FAIL(cm_reduce_argmin_f64_to_host(NULL, NULL, 0, 4, &idx, &d), INV, "x is NULL");
    EXPECT_FAIL(cm_reduce_argmax_f32_to_host(NULL, g.x, 0, 4, NULL, NULL), INV, "NULL");
    EXPECT_FAIL(cm_reduce_argmax_f64_to_host(NULL, g.x, NF * D8, 1, &idx, &d), INV, "x range");
    EXPECT_FAIL(cm_reduce_dot_f32_to_host(NULL, g.x, 0, g.x1, 0, 4, &f), INV, "device 1");
    EXPECT_FAIL(cm_reduce_dot_f32_to_host(NULL, g.x, 0, g.y, 0, 4, NULL), INV, "NULL");
    EXPECT_FAIL(cm_reduce_dot_f64_to_host(NULL, g.x, 0, g.y, 1 * D8, NF / 2, &d), INV,
                "past the end of y");
    EXPECT_FAIL(cm_reduce_dot_f64_to_host(NULL, g.x, 0, NULL, 0, 4, &d), INV, "y is NULL");
    /* nothing was written on failure */
    assert_true(f == 7.0f && d == 7.0 && l == 7 && i == 7 && idx == 7);
    expect_sentinels();
}

/* Offsets count bytes for the reductions too: x_offset and y_offset in the input's element
 * size, result_offset in the result type's (float, double, int64_t for an int32 sum, int32_t
 * for an int32 min / max, uint64_t for argmin / argmax). A misaligned one is refused, naming
 * the argument, and nothing is written. */
static void test_reduce_misaligned_offsets(void **state) {
    (void)state;
    float f = 7.0f;
    double d = 7.0;
    uint64_t idx = 7;
    EXPECT_FAIL(cm_reduce_sum_f32(NULL, g.x, 2, 4, g.y, 0), INV,
                "x_offset 2 is not a multiple of the 4-byte element; nothing was queued");
    assert_non_null(strstr(cm_last_error()->hint, "offsets count bytes"));
    EXPECT_FAIL(cm_reduce_sum_f32(g.s0, g.x, 0, 4, g.y, 6), INV,
                "result_offset 6 is not a multiple of the 4-byte element; nothing was queued");
    EXPECT_FAIL(cm_reduce_sum_f64(NULL, g.x, 4, 4, g.y, 0), INV,
                "x_offset 4 is not a multiple of the 8-byte element");
    EXPECT_FAIL(cm_reduce_sum_f64(NULL, g.x, 0, 4, g.y, 12), INV,
                "result_offset 12 is not a multiple of the 8-byte element");
    /* the result type decides: int64_t for an int32 sum, uint64_t for argmin / argmax */
    EXPECT_FAIL(cm_reduce_sum_i32(NULL, g.x, 0, 4, g.y, 4), INV,
                "result_offset 4 is not a multiple of the 8-byte element");
    EXPECT_FAIL(cm_reduce_min_i32(NULL, g.x, 3, 4, g.y, 4), INV,
                "x_offset 3 is not a multiple of the 4-byte element");
    EXPECT_FAIL(cm_reduce_max_i32(NULL, g.x, 0, 4, g.y, 2), INV,
                "result_offset 2 is not a multiple of the 4-byte element");
    EXPECT_FAIL(cm_reduce_argmin_f32(NULL, g.x, 0, 4, g.y, 12), INV,
                "result_offset 12 is not a multiple of the 8-byte element");
    EXPECT_FAIL(cm_reduce_argmax_f64(g.s0, g.x, 20, 4, g.y, 0), INV,
                "x_offset 20 is not a multiple of the 8-byte element");
    EXPECT_FAIL(cm_reduce_dot_f32(NULL, g.x, 0, g.x, 2, 4, g.y, 0), INV,
                "y_offset 2 is not a multiple of the 4-byte element");
    EXPECT_FAIL(cm_reduce_dot_f64(NULL, g.x, 0, g.x, 0, 4, g.y, 4), INV,
                "result_offset 4 is not a multiple of the 8-byte element");
    EXPECT_FAIL(cm_reduce(NULL, CM_REDUCE_MAX, CM_DTYPE_F32, 0, g.x, 5, NULL, 0, g.y, 0), INV,
                "x_offset 5 is not a multiple of the 4-byte element");
    /* the host-result forms */
    EXPECT_FAIL(cm_reduce_sum_f32_to_host(NULL, g.x, 6, 4, &f), INV,
                "x_offset 6 is not a multiple of the 4-byte element; nothing was queued");
    EXPECT_FAIL(cm_reduce_max_f64_to_host(g.s0, g.x, 12, 4, &d), INV,
                "x_offset 12 is not a multiple of the 8-byte element");
    EXPECT_FAIL(cm_reduce_argmin_f32_to_host(NULL, g.x, 1, 4, &idx, &f), INV,
                "x_offset 1 is not a multiple of the 4-byte element");
    EXPECT_FAIL(cm_reduce_dot_f64_to_host(NULL, g.x, 0, g.y, 4, 4, &d), INV,
                "y_offset 4 is not a multiple of the 8-byte element");
    EXPECT_FAIL(cm_reduce_to_host(NULL, CM_REDUCE_ARGMAX, CM_DTYPE_F64, 4, g.x, 2, NULL, 0, &idx,
                                  &d), INV, "x_offset 2 is not a multiple of the 8-byte element");
    assert_true(f == 7.0f && d == 7.0 && idx == 7);
    expect_sentinels();
}

/* ---------------------------------------------------------------- streams */

static void test_stream_arguments(void **state) {
    (void)state;
    float f = 7.0f;
    double d = 7.0;
    uint64_t idx = 7;
    /* a stream of another device than the operands' */
    EXPECT_FAIL(cm_vector_add_f32(g.s1, g.x, 0, g.y, 0, g.y, 0, 4), INV,
                "stream belongs to device 1 but the buffers are on device 0");
    EXPECT_FAIL(cm_vector_axpy_f64(g.s1, 1.0, g.x, 0, g.y, 0, 4), INV, "stream belongs to device 1");
    EXPECT_FAIL(cm_vector_fill_f32(g.s0, g.x1, 0, 1.0f, 4), INV, "stream belongs to device 0");
    EXPECT_FAIL(cm_vector_copy_f32(g.s1, g.y, 0, g.x, 0, 0), INV, "stream belongs to device 1");
    EXPECT_FAIL(cm_reduce_sum_f32(g.s1, g.x, 0, 4, g.y, 0), INV, "stream belongs to device 1");
    EXPECT_FAIL(cm_reduce_sum_f32_to_host(g.s1, g.x, 0, 4, &f), INV, "stream belongs");
    EXPECT_FAIL(cm_reduce_argmax_f32_to_host(g.s0, g.x1, 0, 4, &idx, &f), INV, "stream belongs");
    EXPECT_FAIL(cm_reduce_dot_f32_to_host(g.s1, g.x, 0, g.y, 0, 4, &f), INV, "stream belongs");
    /* a released stream */
    assert_int_equal(cm_vector_scale_f32(g.gone, 2.0f, g.y, 0, g.x, 0, 4), INV);
    assert_int_equal(cm_reduce_max_f64_to_host(g.gone, g.x, 0, 4, &d), INV);
    assert_int_equal(cm_reduce_min_i32(g.gone, g.x, 0, 4, g.y, 0), INV);
    assert_true(f == 7.0f && d == 7.0 && idx == 7);
    expect_sentinels();
    /* the operands' own device's stream, nothing to do */
    CM_ASSERT_OK(cm_vector_add_f32(g.s0, g.x, 0, g.y, 0, g.y, 0, 0));
    CM_ASSERT_OK(cm_vector_fill_f64(g.s1, g.x1, 3 * D8, 1.0, 0));
    expect_sentinels();
}

/* ---------------------------------------------------------------- size-to-grid arithmetic */

static void test_reduce_grid(void **state) {
    (void)state;
    /* 256 threads x 64 bytes = 16 KiB of input per block, one wave of resident blocks at most */
    assert_int_equal(cm__reduce_grid(0, 4, 132, 8), 1);
    assert_int_equal(cm__reduce_grid(1, 4, 132, 8), 1);
    assert_int_equal(cm__reduce_grid(4096, 4, 132, 8), 1);
    assert_int_equal(cm__reduce_grid(4097, 4, 132, 8), 2);
    assert_int_equal(cm__reduce_grid(2048, 8, 132, 8), 1);
    assert_int_equal(cm__reduce_grid(2049, 8, 132, 8), 2);
    assert_int_equal(cm__reduce_grid((size_t)1 << 16, 4, 132, 8), 16);
    assert_int_equal(cm__reduce_grid((size_t)1 << 20, 4, 132, 8), 256);
    assert_int_equal(cm__reduce_grid((size_t)1 << 28, 4, 132, 8), 132 * 8);
    assert_int_equal(cm__reduce_grid((size_t)1 << 28, 4, 132, 5), 132 * 5);   /* registers bind */
    assert_int_equal(cm__reduce_grid((size_t)1 << 20, 4, 132, 1), 132);
    assert_int_equal(cm__reduce_grid((size_t)1 << 28, 4, 0, 8), 8);           /* unknown SMs */
    assert_int_equal(cm__reduce_grid((size_t)1 << 28, 4, 132, 0), 132 * 4);   /* unknown occupancy */
    assert_int_equal(cm__reduce_grid(SIZE_MAX, 8, 132, 8), 132 * 8);          /* no overflow */
    assert_int_equal(cm__reduce_grid(SIZE_MAX, 8, 100000, 32), CM__REDUCE_MAX_BLOCKS);
    assert_int_equal(cm__reduce_grid(SIZE_MAX, 0, 1, 8), 8);
    /* the scratch the grid needs stays small: the largest is 8192 x 16 + 64 bytes */
    assert_true(CM__REDUCE_PARTIALS_OFFSET + (size_t)CM__REDUCE_MAX_BLOCKS * CM__REDUCE_PARTIAL_BYTES
                <= ((size_t)129 << 10));
}

/* ---------------------------------------------------------------- variant selection */

static void expect_plan(const uintptr_t *a, int count, size_t elem, size_t n, int vec, size_t head,
                        size_t nvec, size_t tail) {
    cm__vec_plan_t p = cm__vector_plan(a, count, elem, n);
    if (p.vectorized != vec || p.head != head || p.nvec != nvec || p.tail != tail)
        fail_msg("plan(%zu-byte elements, n=%zu, %d operands at 0x%lx...): got {%d, %zu, %zu, %zu} "
                 "want {%d, %zu, %zu, %zu}", elem, n, count, (unsigned long)a[0], p.vectorized,
                 p.head, p.nvec, p.tail, vec, head, nvec, tail);
    /* whatever the plan, it covers n elements exactly */
    assert_int_equal(p.head + p.nvec * (16 / elem) + p.tail, n);
}

static void test_vector_plan(void **state) {
    (void)state;
    const uintptr_t base = 0x7f0000000000u; /* 256-aligned, like cudaMalloc */
    uintptr_t a[3];
    /* aligned floats: all vectors, the tail is n mod 4 */
    a[0] = base;
    expect_plan(a, 1, 4, 0, 1, 0, 0, 0);
    expect_plan(a, 1, 4, 1, 1, 0, 0, 1);
    expect_plan(a, 1, 4, 32, 1, 0, 8, 0);
    expect_plan(a, 1, 4, 33, 1, 0, 8, 1);
    expect_plan(a, 1, 4, 1023, 1, 0, 255, 3);
    /* float at element 1: 3 scalar head elements, then vectors */
    a[0] = base + 4;
    expect_plan(a, 1, 4, 31, 1, 3, 7, 0);
    expect_plan(a, 1, 4, 2, 1, 2, 0, 0);   /* shorter than the head */
    expect_plan(a, 1, 4, ((size_t)1 << 28) - 3, 1, 3, ((size_t)1 << 26) - 2, 2);
    /* float at element 3: 1 head element */
    a[0] = base + 12;
    expect_plan(a, 1, 4, 33, 1, 1, 8, 0);
    /* doubles at element 1: 1 head element, vectors of 2 */
    a[0] = base + 8;
    expect_plan(a, 1, 8, 31, 1, 1, 15, 0);
    expect_plan(a, 1, 8, 32, 1, 1, 15, 1);
    /* three operands at the same element offset: vectorized together */
    a[0] = base + 4; a[1] = base + 0x1000 + 4; a[2] = base + 0x2000 + 4;
    expect_plan(a, 3, 4, 1027, 1, 3, 256, 0);
    /* operands misaligned differently: all scalar */
    a[1] = base + 0x1000 + 8;
    expect_plan(a, 3, 4, 1027, 0, 0, 0, 1027);
    expect_plan(a, 2, 4, 5, 0, 0, 0, 5);
    a[0] = base; a[1] = base + 8;
    expect_plan(a, 2, 8, 9, 0, 0, 0, 9);
    /* but 16 bytes apart is the same alignment */
    a[1] = base + 16;
    expect_plan(a, 2, 8, 9, 1, 0, 4, 1);
}

/* Every alignment combination of 1..3 operands (each address at every element-aligned position
 * modulo 16, on bases that differ by multiples of 16 and by more than 16), 4- and 8-byte
 * elements, n from 0 to near SIZE_MAX: the plan covers n exactly, is vectorized exactly when all
 * operands share their address modulo 16, then its vector part starts 16-byte aligned for every
 * operand, the head is the shortest that gets there (or all of n), the body is as long as it can
 * be (tail shorter than a vector), and otherwise everything is scalar. */
static void test_vector_plan_all_alignments(void **state) {
    (void)state;
    const size_t ns[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 1023,
                         ((size_t)1 << 20) + 7, ((size_t)1 << 28) - 3, ((size_t)1 << 28),
                         SIZE_MAX / 16, SIZE_MAX - 2, SIZE_MAX};
    const size_t nn = sizeof ns / sizeof ns[0];
    /* 256-aligned bases (like cudaMalloc), and one that is only 16- and one 32-aligned */
    const uintptr_t bases[3] = {0x7f0000000000u, 0x7f0000101010u, 0x7f00002ff020u};
    size_t plans = 0, vectorized = 0, scalar = 0;
    for (size_t elem = 4; elem <= 8; elem += 4) {
        const size_t width = 16 / elem, slots = 16 / elem; /* element positions modulo 16 */
        for (int count = 1; count <= 3; ++count) {
            size_t combos = 1;
            for (int i = 0; i < count; ++i) combos *= slots;
            for (size_t combo = 0; combo < combos; ++combo) {
                uintptr_t a[3] = {0, 0, 0};
                size_t rest = combo;
                bool same = true;
                for (int i = 0; i < count; ++i) {
                    a[i] = bases[i] + (uintptr_t)((rest % slots) * elem);
                    rest /= slots;
                    if (a[i] % 16 != a[0] % 16) same = false;
                }
                for (size_t ni = 0; ni < nn; ++ni) {
                    const size_t n = ns[ni];
                    const cm__vec_plan_t p = cm__vector_plan(a, count, elem, n);
                    ++plans;
                    /* covers n exactly, without overflow: the parts are each <= n */
                    if (!(p.head <= n && p.tail <= n && p.nvec <= (n - p.head) / width &&
                          p.head + p.nvec * width + p.tail == n))
                        fail_msg("plan(%zu-byte, %d operands, combo %zu, n=%zu) = {%d, %zu, %zu, "
                                 "%zu} does not cover n", elem, count, combo, n, p.vectorized,
                                 p.head, p.nvec, p.tail);
                    if (!same) {
                        ++scalar;
                        if (p.vectorized || p.head != 0 || p.nvec != 0 || p.tail != n)
                            fail_msg("plan(%zu-byte, %d operands, combo %zu, n=%zu): operands "
                                     "misaligned differently must be all scalar, got {%d, %zu, "
                                     "%zu, %zu}", elem, count, combo, n, p.vectorized, p.head,
                                     p.nvec, p.tail);
                        continue;
                    }
                    ++vectorized;
                    if (!p.vectorized)
                        fail_msg("plan(%zu-byte, %d operands, combo %zu, n=%zu): same alignment "
                                 "but not vectorized", elem, count, combo, n);
                    /* the head: fewer than a vector's elements, and the shortest that reaches
                     * a 16-byte boundary, unless n ends first */
                    assert_true(p.head < width);
                    const bool reaches = (a[0] + p.head * elem) % 16 == 0;
                    if (!(p.head == n || reaches))
                        fail_msg("plan(%zu-byte, combo %zu, n=%zu): head %zu stops short of the "
                                 "boundary", elem, combo, n, p.head);
                    for (size_t h = 0; h < p.head; ++h)
                        assert_true((a[0] + h * elem) % 16 != 0); /* no shorter head */
                    /* the body starts 16-byte aligned in every operand */
                    if (p.nvec > 0)
                        for (int i = 0; i < count; ++i)
                            if ((a[i] + p.head * elem) % 16 != 0)
                                fail_msg("plan(%zu-byte, combo %zu, n=%zu): operand %d's vector "
                                         "part starts at 0x%lx", elem, combo, n, i,
                                         (unsigned long)(a[i] + p.head * elem));
                    /* the body is as long as it can be: the tail is shorter than a vector, and
                     * there is no tail unless the head reached the boundary */
                    assert_true(p.tail < width);
                    if (!reaches) assert_true(p.nvec == 0 && p.tail == 0);
                }
            }
        }
    }
    /* every combination ran: 2 element sizes x (slots + slots^2 + slots^3) x sizes */
    assert_int_equal(plans, (size_t)(4 + 16 + 64 + 2 + 4 + 8) * nn);
    assert_true(vectorized > 0 && scalar > 0);
    /* arguments the launchers never pass: all scalar, nothing read past count */
    const uintptr_t one = bases[0] + 4;
    cm__vec_plan_t p = cm__vector_plan(NULL, 1, 4, 10);
    assert_true(!p.vectorized && p.head == 0 && p.nvec == 0 && p.tail == 10);
    p = cm__vector_plan(&one, 0, 4, 10);
    assert_true(!p.vectorized && p.tail == 10);
    p = cm__vector_plan(&one, 1, 0, 10);
    assert_true(!p.vectorized && p.tail == 10);
    p = cm__vector_plan(&one, 1, 3, 10);
    assert_true(!p.vectorized && p.tail == 10);
    p = cm__vector_plan(&one, 1, 32, 10);
    assert_true(!p.vectorized && p.tail == 10);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_add_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_enum_forms_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_axpy_scale_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fill_copy_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vector_misaligned_offsets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reduce_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reduce_to_host_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reduce_misaligned_offsets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream_arguments, setup, teardown),
        cmocka_unit_test(test_reduce_grid),
        cmocka_unit_test(test_vector_plan),
        cmocka_unit_test(test_vector_plan_all_alignments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
