/*
 * FAULT INJECTION: 2-D pitched buffers, CUDA arrays and 2-D copies of memspace.h on the
 * simulated GPUs of test_full_fake.h: creation rules (formats, extents, overflow, the device's
 * 2-D limits, flags), info, destroyed and foreign handles, the out-of-memory report, the leak
 * report, and every rule of cm_copy_2d (places, rectangles against each handle, host pitches,
 * directions, element sizes, devices, streams) with the data each accepted copy moves.
 */
#include "test_memspace.h"

/* ---------------------------------------------------------------- pitched buffers */

static void test_pitched_create_and_info(void **state) {
    (void)state;
    cm_device_t *d = ms_open(0);
    cm_pitched_t *p = NULL;
    MS_OK(cm_pitched_create_at(d, 100, 30, CM_FORMAT_F32X2, &p, "image", "img.c", 7));
    cm_pitched_info_t info;
    MS_OK(cm_pitched_info(p, &info));
    assert_int_equal(info.width, 100);
    assert_int_equal(info.height, 30);
    assert_int_equal(info.format, CM_FORMAT_F32X2);
    assert_int_equal(info.element_bytes, 8);
    assert_int_equal(info.row_bytes, 800);
    assert_int_equal(info.pitch, 1024); /* the simulation rounds rows up to 512 bytes */
    assert_int_equal(info.bytes, 1024 * 30);
    assert_non_null(info.device_ptr);
    assert_ptr_equal(info.device, d);
    assert_int_equal(info.ordinal, 0);
    assert_string_equal(info.label, "image");
    char report[1024];
    MS_OK(cm_device_leak_report(d, report, sizeof report, NULL));
    assert_non_null(strstr(report, "1 live buffer, 30.00 KiB (30720 bytes): 0 on the device, 0 "
                                   "pinned on the host, 1 of memspace.h"));
    assert_non_null(strstr(report, "pitched buffer of 100 x 30 CM_FORMAT_F32X2 (pitch 1024 "
                                   "bytes), 30.00 KiB (30720 bytes), created at img.c:7 \"image\""));
    MS_FAIL_HINT(cm_device_close(d), CM_ERROR_BUSY, "pitched buffer of 100 x 30",
                 "cm_pitched_destroy()");
    MS_OK(cm_pitched_destroy(p));
    MS_OK(cm_pitched_destroy(NULL));
    MS_FAIL_HINT(cm_pitched_info(p, &info), CM_ERROR_INVALID_ARGUMENT,
                 "img was already destroyed: it was a pitched buffer (cm_pitched_t) of 30.00 KiB "
                 "(30720 bytes) on device 0, created at img.c:7 \"image\"",
                 "after cm_pitched_destroy()");
    MS_FAIL(cm_pitched_destroy(p), CM_ERROR_INVALID_ARGUMENT, "already destroyed");
    MS_OK(cm_device_close(d));
}

static void test_pitched_create_rules(void **state) {
    (void)state;
    cm_device_t *d = ms_open(0);
    cm_pitched_t *p = NULL;
    MS_FAIL(cm_pitched_create(d, 4, 4, CM_FORMAT_U8, NULL), CM_ERROR_INVALID_ARGUMENT,
            "out is NULL");
    MS_FAIL(cm_pitched_create(NULL, 4, 4, CM_FORMAT_U8, &p), CM_ERROR_INVALID_ARGUMENT,
            "dev is NULL");
    MS_FAIL_HINT(cm_pitched_create(d, 4, 4, CM_FORMAT_NONE, &p), CM_ERROR_INVALID_ARGUMENT,
                 "format 0 is not a cm_format_t (1 .. 24)", "CM_FORMAT_F32");
    MS_FAIL(cm_pitched_create(d, 4, 4, (cm_format_t)25, &p), CM_ERROR_INVALID_ARGUMENT,
            "format 25 is not a cm_format_t");
    MS_FAIL(cm_pitched_create(d, 0, 4, CM_FORMAT_U8, &p), CM_ERROR_INVALID_ARGUMENT,
            "a pitched buffer of 0 x 4 elements is empty");
    MS_FAIL(cm_pitched_create(d, 4, 0, CM_FORMAT_U8, &p), CM_ERROR_INVALID_ARGUMENT,
            "a pitched buffer of 4 x 0 elements is empty");
    MS_FAIL(cm_pitched_create(d, SIZE_MAX / 8, 1, CM_FORMAT_U32X4, &p), CM_ERROR_INVALID_ARGUMENT,
            "overflows size_t");
    assert_null(p);
    /* more than the device's 64 MiB: refused without a CUDA call; the report names the
     * request */
    MS_FAIL_HINT(cm_pitched_create(d, 8192, 8192, CM_FORMAT_F32, &p),
                 CM_ERROR_DEVICE_OUT_OF_MEMORY, "cannot allocate 256.00 MiB", NULL);
    assert_non_null(strstr(cm_last_error()->call, "cudaMallocPitch"));
    assert_non_null(strstr(cm_last_error()->call, "not called: more than the device has"));
    assert_non_null(strstr(cm_last_error()->message, "not attempted"));
    assert_null(p);
    /* a closed device */
    MS_OK(cm_device_close(d));
    MS_FAIL(cm_pitched_create(d, 4, 4, CM_FORMAT_U8, &p), CM_ERROR_INVALID_ARGUMENT,
            "already closed");
}

/* ---------------------------------------------------------------- arrays */

static void test_array_create_rules_and_info(void **state) {
    (void)state;
    cm_device_t *d = ms_open(1);
    cm_array_t *a = NULL;
    MS_OK(cm_array_create_at(d, 640, 480, CM_FORMAT_U8X4, CM_ARRAY_SURFACE_LOAD_STORE, &a, "frame",
                             "cam.c", 3));
    cm_array_info_t info;
    MS_OK(cm_array_info(a, &info));
    assert_int_equal(info.width, 640);
    assert_int_equal(info.height, 480);
    assert_int_equal(info.format, CM_FORMAT_U8X4);
    assert_int_equal(info.element_bytes, 4);
    assert_int_equal(info.flags, CM_ARRAY_SURFACE_LOAD_STORE);
    assert_non_null(info.cuda_array);
    assert_int_equal(info.ordinal, 1);
    assert_string_equal(info.label, "frame");
    char report[1024];
    MS_OK(cm_device_leak_report(d, report, sizeof report, NULL));
    assert_non_null(strstr(report, "CUDA array of 640 x 480 CM_FORMAT_U8X4 (surface load/store), "
                                   "1.17 MiB (1228800 bytes), created at cam.c:3 \"frame\""));
    MS_OK(cm_array_destroy(a));
    MS_FAIL(cm_array_info(a, &info), CM_ERROR_INVALID_ARGUMENT,
            "arr was already destroyed: it was a CUDA array (cm_array_t)");
    a = NULL;
    MS_FAIL(cm_array_create(d, 4, 4, CM_FORMAT_F32, 2, &a), CM_ERROR_INVALID_ARGUMENT,
            "flags 0x2 has unknown bits 0x2");
    MS_FAIL(cm_array_create(d, 0, 4, CM_FORMAT_F32, 0, &a), CM_ERROR_INVALID_ARGUMENT,
            "a CUDA array of 0 x 4 elements is empty");
    MS_FAIL(cm_array_create(d, 4, 4, CM_FORMAT_NONE, 0, &a), CM_ERROR_INVALID_ARGUMENT,
            "not a cm_format_t");
    /* the device's 2-D limits, texture or surface */
    cmf_set_attr(1, cudaDevAttrMaxTexture2DWidth, 4096);
    cmf_set_attr(1, cudaDevAttrMaxSurface2DHeight, 1024);
    MS_FAIL_HINT(cm_array_create(d, 4097, 16, CM_FORMAT_F32, 0, &a), CM_ERROR_INVALID_ARGUMENT,
                 "a CUDA array of 4097 x 16 elements exceeds device 1's 2-D texture limit of "
                 "4096 x 65536", "tiles of at most 4096 x 65536");
    MS_FAIL(cm_array_create(d, 16, 1025, CM_FORMAT_F32, CM_ARRAY_SURFACE_LOAD_STORE, &a),
            CM_ERROR_INVALID_ARGUMENT, "exceeds device 1's 2-D surface limit of 131072 x 1024");
    MS_OK(cm_array_create(d, 16, 1025, CM_FORMAT_F32, 0, &a));
    MS_OK(cm_array_destroy(a));
    a = NULL;
    /* out of memory (more than the device has): the report, nothing left behind */
    MS_FAIL(cm_array_create(d, 8192, 8192, CM_FORMAT_F32, 0, &a), CM_ERROR_INVALID_ARGUMENT,
            "exceeds");
    cmf_set_attr(1, cudaDevAttrMaxTexture2DWidth, 131072);
    MS_FAIL(cm_array_create(d, 8192, 8192, CM_FORMAT_F32, 0, &a), CM_ERROR_DEVICE_OUT_OF_MEMORY,
            "cannot allocate 256.00 MiB");
    assert_non_null(strstr(cm_last_error()->call, "not called"));
    assert_null(a);
    MS_OK(cm_device_close(d));
}

/* ---------------------------------------------------------------- 2-D copies: results */

static void fill_pattern(unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; ++i) p[i] = (unsigned char)(i * 31u + seed);
}

static void test_copy_2d_moves_the_rectangle(void **state) {
    (void)state;
    cm_device_t *d = ms_open(0);
    cm_stream_t *s = ms_stream(d);
    cm_pitched_t *p = NULL, *q = NULL;
    cm_array_t *a = NULL;
    MS_OK(cm_pitched_create(d, 40, 20, CM_FORMAT_U16, &p));
    MS_OK(cm_pitched_create(d, 40, 20, CM_FORMAT_U16, &q));
    MS_OK(cm_array_create(d, 40, 20, CM_FORMAT_F16, 0, &a)); /* 2-byte elements too */
    /* host (pitch 100 bytes, 30 elements used) -> pitched at (5, 3) */
    unsigned char host[10 * 100], back[10 * 100];
    fill_pattern(host, sizeof host, 1);
    MS_OK(cm_copy_2d(NULL, cm_place_pitched(p, 5, 3), cm_place_host(host, 100), 30, 10));
    cm_pitched_info_t pi;
    MS_OK(cm_pitched_info(p, &pi));
    for (size_t y = 0; y < 10; ++y)
        assert_memory_equal((unsigned char *)pi.device_ptr + (3 + y) * pi.pitch + 5 * 2,
                            host + y * 100, 60);
    /* pitched -> array -> pitched -> host (packed rows), on a stream */
    MS_OK(cm_copy_2d(s, cm_place_array(a, 1, 2), cm_place_pitched(p, 5, 3), 30, 10));
    MS_OK(cm_copy_2d(s, cm_place_pitched(q, 0, 0), cm_place_array(a, 1, 2), 30, 10));
    MS_OK(cm_stream_synchronize(s));
    memset(back, 0, sizeof back);
    MS_OK(cm_copy_2d(NULL, cm_place_host(back, 0), cm_place_pitched(q, 0, 0), 30, 10));
    for (size_t y = 0; y < 10; ++y) assert_memory_equal(back + y * 60, host + y * 100, 60);
    /* array -> host, host -> array */
    memset(back, 0, sizeof back);
    MS_OK(cm_copy_2d(NULL, cm_place_host(back, 64), cm_place_array(a, 1, 2), 30, 10));
    for (size_t y = 0; y < 10; ++y) assert_memory_equal(back + y * 64, host + y * 100, 60);
    unsigned char whole[20 * 80]; /* the whole array: 20 rows of 40 two-byte elements */
    fill_pattern(whole, sizeof whole, 9);
    MS_OK(cm_copy_2d(s, cm_place_array(a, 0, 0), cm_place_host(whole, 0), 40, 20));
    MS_OK(cm_stream_synchronize(s));
    cm_array_info_t ai;
    MS_OK(cm_array_info(a, &ai));
    assert_memory_equal(cmf_array_data(ai.cuda_array, NULL), whole, sizeof whole);
    /* an empty rectangle is checked and does nothing */
    MS_OK(cm_copy_2d(NULL, cm_place_pitched(p, 40, 20), cm_place_host(NULL, 0), 0, 0));
    MS_OK(cm_copy_2d(NULL, cm_place_pitched(p, 0, 0), cm_place_host(NULL, 0), 40, 0));
    MS_OK(cm_stream_release(s));
    MS_OK(cm_pitched_destroy(p));
    MS_OK(cm_pitched_destroy(q));
    MS_OK(cm_array_destroy(a));
    MS_OK(cm_device_close(d));
}

/* ---------------------------------------------------------------- 2-D copies: rules */

static void test_copy_2d_rules(void **state) {
    (void)state;
    cm_device_t *d = ms_open(0), *d1 = ms_open(1);
    cm_pitched_t *p = NULL, *p1 = NULL, *wide = NULL;
    cm_array_t *a = NULL, *a2 = NULL;
    MS_OK(cm_pitched_create(d, 64, 16, CM_FORMAT_F32, &p));
    MS_OK(cm_pitched_create(d, 64, 16, CM_FORMAT_U8, &wide));
    MS_OK(cm_pitched_create(d1, 64, 16, CM_FORMAT_F32, &p1));
    MS_OK(cm_array_create(d, 64, 16, CM_FORMAT_F32, 0, &a));
    MS_OK(cm_array_create(d, 64, 16, CM_FORMAT_F32, 0, &a2));
    float host[16][64];
    memset(host, 0, sizeof host);
    cm_place_t none = cm_place_host(host, 0);
    none.kind = CM_PLACE_NONE;
    MS_FAIL_HINT(cm_copy_2d(NULL, none, cm_place_pitched(p, 0, 0), 4, 4), CM_ERROR_INVALID_ARGUMENT,
                 "dst.kind is 0: not a place", "cm_place_host()");
    none.kind = (cm_place_kind_t)9;
    MS_FAIL(cm_copy_2d(NULL, cm_place_pitched(p, 0, 0), none, 4, 4), CM_ERROR_INVALID_ARGUMENT,
            "src.kind is 9");
    MS_FAIL_HINT(cm_copy_2d(NULL, cm_place_host(host, 0), cm_place_host(host, 0), 4, 4),
                 CM_ERROR_INVALID_ARGUMENT, "both dst and src are host memory", "memcpy()");
    /* rectangles against each handle */
    MS_FAIL_HINT(cm_copy_2d(NULL, cm_place_pitched(p, 10, 0), cm_place_host(host, 0), 60, 4),
                 CM_ERROR_INVALID_ARGUMENT,
                 "dst rectangle out of bounds: 60 x 4 elements at column 10, row 0 run past the "
                 "width of the pitched buffer's 64 x 16", "from (10, 0) at most 54 x 16 fit");
    MS_FAIL(cm_copy_2d(NULL, cm_place_host(host, 0), cm_place_array(a, 0, 15), 8, 2),
            CM_ERROR_INVALID_ARGUMENT,
            "src rectangle out of bounds: 8 x 2 elements at column 0, row 15 run past the height "
            "of the CUDA array's 64 x 16");
    MS_FAIL(cm_copy_2d(NULL, cm_place_pitched(p, 70, 20), cm_place_host(host, 0), 1, 1),
            CM_ERROR_INVALID_ARGUMENT, "run past both the width and the height");
    MS_FAIL(cm_copy_2d(NULL, cm_place_pitched(p, SIZE_MAX, 0), cm_place_host(host, 0), 2, 1),
            CM_ERROR_INVALID_ARGUMENT, "dst rectangle out of bounds");
    MS_FAIL(cm_copy_2d(NULL, cm_place_pitched(p, 0, 0), cm_place_host(host, 0), SIZE_MAX / 2, 1),
            CM_ERROR_INVALID_ARGUMENT, "overflows size_t");
    /* host sides */
    MS_FAIL_HINT(cm_copy_2d(NULL, cm_place_pitched(p, 0, 0), cm_place_host(host, 100), 32, 4),
                 CM_ERROR_INVALID_ARGUMENT,
                 "src.host_pitch 100 is smaller than a row of the rectangle (128 bytes)",
                 "at least the row's 128 bytes");
    MS_FAIL(cm_copy_2d(NULL, cm_place_host(NULL, 0), cm_place_pitched(p, 0, 0), 4, 4),
            CM_ERROR_INVALID_ARGUMENT, "dst.host is NULL");
    cm_pitched_info_t pi;
    MS_OK(cm_pitched_info(p1, &pi));
    MS_FAIL(cm_copy_2d(NULL, cm_place_pitched(p, 0, 0), cm_place_host(pi.device_ptr, pi.pitch), 4, 4),
            CM_ERROR_INVALID_ARGUMENT, "src.host");
    assert_non_null(strstr(cm_last_error()->message, "is device memory, not host memory: wrong "
                                                     "direction"));
    /* two handles */
    MS_FAIL_HINT(cm_copy_2d(NULL, cm_place_pitched(wide, 0, 0), cm_place_pitched(p, 0, 0), 4, 4),
                 CM_ERROR_INVALID_ARGUMENT,
                 "dst has 1-byte elements (CM_FORMAT_U8) but src 4-byte ones (CM_FORMAT_F32)",
                 "elements of one size");
    MS_FAIL(cm_copy_2d(NULL, cm_place_pitched(p1, 0, 0), cm_place_pitched(p, 0, 0), 4, 4),
            CM_ERROR_INVALID_ARGUMENT, "dst is on device 1 but src on device 0");
    MS_FAIL_HINT(cm_copy_2d(NULL, cm_place_array(a2, 0, 0), cm_place_array(a, 0, 0), 4, 4),
                 CM_ERROR_NOT_SUPPORTED, "from an array to an array", "through a pitched buffer");
    /* streams */
    cm_stream_t *s1 = ms_stream(d1);
    MS_FAIL(cm_copy_2d(s1, cm_place_array(a, 0, 0), cm_place_host(host, 0), 4, 4),
            CM_ERROR_INVALID_ARGUMENT, "the stream belongs to device 1 but the array to device 0");
    MS_OK(cm_copy_2d(s1, cm_place_pitched(p1, 0, 0), cm_place_host(host, 0), 4, 4));
    MS_OK(cm_stream_synchronize(s1));
    MS_OK(cm_stream_release(s1));
    /* destroyed and foreign handles */
    cm_pitched_t *stale = ms_stale_pitched(d);
    MS_FAIL(cm_copy_2d(NULL, cm_place_pitched(stale, 0, 0), cm_place_host(host, 0), 1, 1),
            CM_ERROR_INVALID_ARGUMENT,
            "dst.pitched was already destroyed: it was a pitched buffer (cm_pitched_t)");
    MS_FAIL(cm_copy_2d(NULL, cm_place_host(host, 0),
                       cm_place_array((const cm_array_t *)(const void *)p, 0, 0), 1, 1),
            CM_ERROR_INVALID_ARGUMENT, "src.array is a cm_pitched_t, not a cm_array_t");
    MS_FAIL(cm_copy_2d(NULL, cm_place_pitched(NULL, 0, 0), cm_place_host(host, 0), 1, 1),
            CM_ERROR_INVALID_ARGUMENT, "dst.pitched is NULL");
    /* a refused copy wrote nothing */
    cm_pitched_info_t info;
    MS_OK(cm_pitched_info(p, &info));
    unsigned char before[256];
    memcpy(before, info.device_ptr, sizeof before);
    float src[16][64];
    memset(src, 0x3f, sizeof src);
    MS_FAIL(cm_copy_2d(NULL, cm_place_pitched(p, 0, 0), cm_place_host(src, 0), 64, 17),
            CM_ERROR_INVALID_ARGUMENT, "out of bounds");
    assert_memory_equal(info.device_ptr, before, sizeof before);
    MS_OK(cm_pitched_destroy(p));
    MS_OK(cm_pitched_destroy(p1));
    MS_OK(cm_pitched_destroy(wide));
    MS_OK(cm_array_destroy(a));
    MS_OK(cm_array_destroy(a2));
    MS_OK(cm_device_close(d));
    MS_OK(cm_device_close(d1));
}

static void test_copy_2d_failures(void **state) {
    (void)state;
    cm_device_t *d = ms_open(0);
    cm_pitched_t *p = NULL;
    MS_OK(cm_pitched_create(d, 16, 16, CM_FORMAT_U8, &p));
    unsigned char host[256] = {0};
    /* a failed synchronisation of a synchronous copy is named */
    cmf_arm(cmf_member_index("stream_synchronize"), 0, 1, cudaErrorLaunchTimeout);
    MS_FAIL(cm_copy_2d(NULL, cm_place_host(host, 0), cm_place_pitched(p, 0, 0), 16, 16),
            CM_ERROR_CONTEXT_LOST, NULL);
    (void)cmf_disarm();
    assert_non_null(strstr(cm_last_error()->call, "cudaStreamSynchronize(0) after the 2-D copy"));
    /* device 0 is lost now: its memory goes with the context, the handles can still end */
    MS_FAIL(cm_copy_2d(NULL, cm_place_host(host, 0), cm_place_pitched(p, 0, 0), 16, 16),
            CM_ERROR_CONTEXT_LOST, NULL);
    MS_FAIL(cm_pitched_destroy(p), CM_ERROR_CONTEXT_LOST, NULL);
    MS_FAIL(cm_pitched_info(p, &(cm_pitched_info_t){0}), CM_ERROR_INVALID_ARGUMENT,
            "already destroyed");
    MS_OK(cm_device_close(d));
}

/* cudaMallocPitch answering out of memory once: the pools are trimmed and the retry succeeds. */
static void test_pitched_retry_after_trim(void **state) {
    (void)state;
    cm_device_t *d = ms_open(0);
    cm_pitched_t *p = NULL;
    cmf_arm(cmf_member_index("malloc_pitch"), 0, 1, cudaErrorMemoryAllocation);
    MS_OK(cm_pitched_create(d, 64, 64, CM_FORMAT_F32, &p));
    assert_int_equal(cmf_disarm(), 1);
    MS_OK(cm_pitched_destroy(p));
    /* a failure other than out-of-memory is not retried */
    cmf_arm(cmf_member_index("malloc_array"), 0, 1, cudaErrorInvalidValue);
    cm_array_t *a = NULL;
    MS_FAIL(cm_array_create(d, 64, 64, CM_FORMAT_F32, 0, &a), CM_ERROR_INVALID_ARGUMENT, NULL);
    assert_int_equal(cmf_disarm(), 1);
    assert_non_null(strstr(cm_last_error()->call, "cudaMallocArray(16384 bytes)"));
    MS_OK(cm_device_close(d));
}

/* CUDA refuses cudaFree and cudaFreeArray while the thread captures a graph: the destroys are
 * refused before anything is released, and work once the capture has ended. */
static void test_destroy_refused_during_capture(void **state) {
    (void)state;
    cm_device_t *d = ms_open(0);
    cm_stream_t *s = ms_stream(d);
    cm_pitched_t *p = NULL;
    cm_array_t *a = NULL;
    cm_managed_t *m = NULL;
    MS_OK(cm_pitched_create(d, 8, 8, CM_FORMAT_F32, &p));
    MS_OK(cm_array_create(d, 8, 8, CM_FORMAT_F32, 0, &a));
    MS_OK(cm_managed_create(d, 4096, &m));
    MS_OK(cm_graph_capture_begin(s));
    MS_FAIL_HINT(cm_pitched_destroy(p), CM_ERROR_BUSY,
                 "a pitched buffer cannot be freed while this thread captures a graph",
                 "once the capture has ended");
    MS_FAIL(cm_array_destroy(a), CM_ERROR_BUSY, "a CUDA array cannot be freed while");
    MS_FAIL(cm_managed_destroy(m), CM_ERROR_BUSY, "a managed buffer cannot be freed while");
    cm_graph_t *g = NULL;
    MS_OK(cm_graph_capture_end(s, &g));
    MS_OK(cm_graph_destroy(g));
    MS_OK(cm_pitched_destroy(p));
    MS_OK(cm_array_destroy(a));
    MS_OK(cm_managed_destroy(m));
    MS_OK(cm_stream_release(s));
    MS_OK(cm_device_close(d));
}

/* A 2-D copy into pageable host memory queued on a stream being captured: captured (no wait
 * for it, which would invalidate the capture); each launch writes the host rectangle. */
static void test_copy_2d_to_pageable_in_capture(void **state) {
    (void)state;
    cm_device_t *d = ms_open(0);
    cm_stream_t *s = ms_stream(d);
    cm_pitched_t *p = NULL;
    MS_OK(cm_pitched_create(d, 16, 4, CM_FORMAT_F32, &p));
    float src[4][16], dst[4][16];
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 16; ++c) src[r][c] = (float)(r * 16 + c);
    memset(dst, 0, sizeof dst);
    cm_graph_t *g = NULL;
    MS_OK(cm_graph_capture_begin(s));
    MS_OK(cm_copy_2d(s, cm_place_pitched(p, 0, 0), cm_place_host(src, 0), 16, 4));
    MS_OK(cm_copy_2d(s, cm_place_host(dst, 0), cm_place_pitched(p, 0, 0), 16, 4));
    MS_OK(cm_graph_capture_end(s, &g));
    assert_float_equal(dst[3][15], 0.0f, 0.0f); /* nothing ran yet */
    for (int round = 1; round <= 2; ++round) {
        src[2][7] = (float)(1000 * round);
        MS_OK(cm_graph_launch(g, s));
        MS_OK(cm_stream_synchronize(s));
        assert_memory_equal(dst, src, sizeof src);
    }
    MS_OK(cm_graph_destroy(g));
    MS_OK(cm_pitched_destroy(p));
    MS_OK(cm_stream_release(s));
    MS_OK(cm_device_close(d));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pitched_create_and_info, ms_setup, ms_teardown),
        cmocka_unit_test_setup_teardown(test_pitched_create_rules, ms_setup, ms_teardown),
        cmocka_unit_test_setup_teardown(test_array_create_rules_and_info, ms_setup, ms_teardown),
        cmocka_unit_test_setup_teardown(test_copy_2d_moves_the_rectangle, ms_setup, ms_teardown),
        cmocka_unit_test_setup_teardown(test_copy_2d_rules, ms_setup, ms_teardown),
        cmocka_unit_test_setup_teardown(test_copy_2d_failures, ms_setup, ms_teardown),
        cmocka_unit_test_setup_teardown(test_pitched_retry_after_trim, ms_setup, ms_teardown),
        cmocka_unit_test_setup_teardown(test_destroy_refused_during_capture, ms_setup,
                                        ms_teardown),
        cmocka_unit_test_setup_teardown(test_copy_2d_to_pageable_in_capture, ms_setup,
                                        ms_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
