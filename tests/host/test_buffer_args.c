/*
 * Argument checks of every public function of buffer.h, of the device object (device.h) and of
 * the memory part of interop.h: NULL arguments, zero sizes, ranges past the end or overflowing
 * size_t (offset SIZE_MAX), a stream of the wrong device, destroyed handles (use after destroy,
 * double destroy), pointers that are no handle, handles of the wrong kind. Each failure must
 * return CM_ERROR_INVALID_ARGUMENT with a message that names the numbers and a hint, and must
 * write nothing (device memory and host destinations keep their sentinel bytes).
 *
 * FAULT INJECTION: runs on a simulated device (test_buffer_fake.h); no GPU needed.
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/interop.h>

#include "test_buffer_fake.h"

#define N 4096
#define INV CM_ERROR_INVALID_ARGUMENT

typedef struct fixture {
    cm_device_t *dev0, *dev1, *dev2;
    cm_buffer_t *b;        /* N bytes on device 0, synchronous */
    cm_buffer_t *bs;       /* N bytes on device 0, stream-ordered */
    cm_buffer_t *b1;       /* N bytes on device 1 */
    cm_host_buffer_t *hb;  /* N pinned bytes */
    cm_buffer_t *dead;     /* destroyed */
    cm_host_buffer_t *dead_h;
    cm_device_t *dead_dev; /* closed */
    unsigned char host[N];
} fixture_t;

static fixture_t g;

static void fill_sentinels(void) {
    void *p = NULL;
    CM_ASSERT_OK(cm_buffer_device_ptr(g.b, &p));
    memset(p, 0xAB, N); /* simulated device memory is host-addressable */
    CM_ASSERT_OK(cm_buffer_device_ptr(g.bs, &p));
    memset(p, 0xAB, N);
    CM_ASSERT_OK(cm_host_buffer_data(g.hb, &p));
    memset(p, 0xAB, N);
    memset(g.host, 0xCD, N);
}

static void expect_sentinels(void) {
    void *p = NULL;
    unsigned char ab[N], cd[N];
    memset(ab, 0xAB, N);
    memset(cd, 0xCD, N);
    CM_ASSERT_OK(cm_buffer_device_ptr(g.b, &p));
    assert_memory_equal(p, ab, N);
    CM_ASSERT_OK(cm_buffer_device_ptr(g.bs, &p));
    assert_memory_equal(p, ab, N);
    CM_ASSERT_OK(cm_host_buffer_data(g.hb, &p));
    assert_memory_equal(p, ab, N);
    assert_memory_equal(g.host, cd, N);
}

static int setup(void **state) {
    (void)state;
    fake_install(3, (size_t)64 << 20);
    memset(&g, 0, sizeof g);
    if (cm_device_open(0, &g.dev0) || cm_device_open(1, &g.dev1) || cm_device_open(2, &g.dev2))
        return -1;
    if (cm_buffer_create(g.dev0, N, &g.b) || cm_buffer_create(g.dev1, N, &g.b1) ||
        cm_buffer_create_on_cuda_stream(g.dev0, N, FAKE_STREAM(0), &g.bs) ||
        cm_host_buffer_create(g.dev0, N, CM_HOST_BUFFER_DEFAULT, &g.hb))
        return -1;
    if (cm_buffer_create_labeled(g.dev0, 100, "doomed", &g.dead) || cm_buffer_destroy(g.dead))
        return -1;
    if (cm_host_buffer_create(g.dev0, 10, 0, &g.dead_h) || cm_host_buffer_destroy(g.dead_h))
        return -1;
    /* a closed device stays remembered while other handles are alive */
    if (cm_device_open(0, &g.dead_dev) || cm_device_close(g.dead_dev)) return -1;
    fill_sentinels();
    return 0;
}

static int teardown(void **state) {
    (void)state;
    int bad = 0;
    bad |= cm_buffer_destroy(g.b) | cm_buffer_destroy(g.bs) | cm_buffer_destroy(g.b1);
    bad |= cm_host_buffer_destroy(g.hb);
    bad |= cm_device_close(g.dev0) | cm_device_close(g.dev1) | cm_device_close(g.dev2);
    int left = fake_outstanding(), violations = fake.violations;
    fake_uninstall();
    return (bad || left || violations) ? -1 : 0;
}

/* ---------------------------------------------------------------- device object */

static void test_device_object_arguments(void **state) {
    (void)state;
    cm_device_t *d = (cm_device_t *)(uintptr_t)0x1234;
    EXPECT_FAIL(cm_device_open(0, NULL), INV, "out is NULL");
    EXPECT_FAIL(cm_device_open(3, &d), INV, "device 3 does not exist: 3 devices are visible");
    EXPECT_FAIL(cm_device_open(-1, &d), INV, "device -1 does not exist");
    assert_ptr_equal(d, (cm_device_t *)(uintptr_t)0x1234); /* out untouched */

    CM_ASSERT_OK(cm_device_close(NULL));
    EXPECT_FAIL(cm_device_close(g.dead_dev), INV, "already closed");
    int local = 0;
    EXPECT_FAIL(cm_device_close((cm_device_t *)&local), INV, "is not a live cm_device_t");
    EXPECT_FAIL(cm_device_close((cm_device_t *)g.b), INV, "is a cm_buffer_t, not a cm_device_t");

    int ord = 77;
    EXPECT_FAIL(cm_device_ordinal(NULL, &ord), INV, "dev is NULL");
    EXPECT_FAIL(cm_device_ordinal(g.dev0, NULL), INV, "ordinal is NULL");
    EXPECT_FAIL(cm_device_ordinal(g.dead_dev, &ord), INV, "already closed");
    assert_int_equal(ord, 77);
    CM_ASSERT_OK(cm_device_ordinal(g.dev1, &ord));
    assert_int_equal(ord, 1);

    char text[64] = "untouched";
    size_t len = 99;
    EXPECT_FAIL(cm_device_leak_report(NULL, text, sizeof text, &len), INV, "dev is NULL");
    EXPECT_FAIL(cm_device_leak_report(g.dev0, NULL, 10, &len), INV, "size is 10");
    EXPECT_FAIL(cm_device_leak_report(g.dead_dev, text, sizeof text, &len), INV, "already closed");
    assert_string_equal(text, "untouched");
    assert_int_equal(len, 99);
    CM_ASSERT_OK(cm_device_leak_report(g.dev0, NULL, 0, &len)); /* measuring is fine */
    assert_true(len > 0);

    cm_memory_report_t r;
    memset(&r, 0x5A, sizeof r);
    cm_memory_report_t before = r;
    EXPECT_FAIL(cm_device_memory_report(NULL, &r), INV, "dev is NULL");
    EXPECT_FAIL(cm_device_memory_report(g.dev0, NULL), INV, "out is NULL");
    EXPECT_FAIL(cm_device_memory_report(g.dead_dev, &r), INV, "already closed");
    assert_memory_equal(&r, &before, sizeof r);
    EXPECT_FAIL(cm_memory_report_format(NULL, text, sizeof text, NULL), INV, "report is NULL");
    CM_ASSERT_OK(cm_device_memory_report(g.dev0, &r));
    EXPECT_FAIL(cm_memory_report_format(&r, NULL, 5, NULL), INV, "size is 5");

    cudaMemPool_t pool = (cudaMemPool_t)(uintptr_t)0x99;
    EXPECT_FAIL(cm_device_memory_pool(NULL, &pool), INV, "dev is NULL");
    EXPECT_FAIL(cm_device_memory_pool(g.dev0, NULL), INV, "pool is NULL");
    EXPECT_FAIL(cm_device_memory_pool(g.dead_dev, &pool), INV, "already closed");
    assert_ptr_equal(pool, (cudaMemPool_t)(uintptr_t)0x99);

    EXPECT_FAIL(cm_device_pool_set_release_threshold(NULL, 0), INV, "dev is NULL");
    EXPECT_FAIL(cm_device_pool_set_release_threshold(g.dead_dev, 0), INV, "already closed");
    EXPECT_FAIL(cm_device_pool_trim(NULL, 0), INV, "dev is NULL");
    EXPECT_FAIL(cm_device_pool_trim(g.dead_dev, 0), INV, "already closed");

    cm_staging_config_t c = CM_STAGING_CONFIG_INIT;
    EXPECT_FAIL(cm_device_staging_configure(NULL, &c), INV, "dev is NULL");
    EXPECT_FAIL(cm_device_staging_configure(g.dev0, NULL), INV, "cfg is NULL");
    EXPECT_FAIL(cm_device_staging_configure(g.dead_dev, &c), INV, "already closed");
    c.chunk_bytes = 100;
    EXPECT_FAIL(cm_device_staging_configure(g.dev0, &c), INV, "chunk_bytes is 100");
    c.chunk_bytes = 0;
    c.buffers = 1;
    EXPECT_FAIL(cm_device_staging_configure(g.dev0, &c), INV, "buffers is 1");
    c.buffers = CM_STAGING_MAX_BUFFERS + 1;
    EXPECT_FAIL(cm_device_staging_configure(g.dev0, &c), INV, "buffers is 9");
    c.buffers = 0;
    c.host_threads = CM_STAGING_MAX_THREADS + 1;
    EXPECT_FAIL(cm_device_staging_configure(g.dev0, &c), INV, "host_threads is 17");
    cm_staging_config_t got;
    EXPECT_FAIL(cm_device_staging_config(NULL, &got), INV, "dev is NULL");
    EXPECT_FAIL(cm_device_staging_config(g.dev0, NULL), INV, "out is NULL");
    CM_ASSERT_OK(cm_device_staging_config(g.dev0, &got));
    assert_int_equal(got.chunk_bytes, (size_t)8 << 20); /* a refused configuration changed nothing */
    assert_int_equal(got.buffers, 3);
}

/* ---------------------------------------------------------------- create, destroy, accessors */

static void test_create_destroy_arguments(void **state) {
    (void)state;
    cm_buffer_t *out = (cm_buffer_t *)(uintptr_t)0x42;
    EXPECT_FAIL(cm_buffer_create(g.dev0, 16, NULL), INV, "out is NULL");
    EXPECT_FAIL(cm_buffer_create(NULL, 16, &out), INV, "dev is NULL");
    EXPECT_FAIL(cm_buffer_create(g.dead_dev, 16, &out), INV, "already closed");
    EXPECT_FAIL(cm_buffer_create_on_cuda_stream(g.dev0, 16, FAKE_STREAM(0), NULL), INV, "out is NULL");
    EXPECT_FAIL(cm_buffer_create_on_cuda_stream(NULL, 16, FAKE_STREAM(0), &out), INV, "dev is NULL");
    /* a stream of another device */
    EXPECT_FAIL(cm_buffer_create_on_cuda_stream(g.dev0, 16, FAKE_STREAM(1), &out), INV,
                "the stream belongs to device 1 but the buffer to device 0");
    /* a stream that is not one */
    EXPECT_FAIL(cm_buffer_create_on_cuda_stream(g.dev0, 16, FAKE_BAD_STREAM, &out), INV,
                "not a valid CUDA stream");
    /* more than the device has: out of memory, not a crash */
    EXPECT_FAIL(cm_buffer_create(g.dev0, SIZE_MAX, &out), CM_ERROR_DEVICE_OUT_OF_MEMORY,
                "(18446744073709551615 bytes)");
    assert_ptr_equal(out, (cm_buffer_t *)(uintptr_t)0x42);

    CM_ASSERT_OK(cm_buffer_destroy(NULL));
    EXPECT_FAIL(cm_buffer_destroy(g.dead), INV, "already destroyed");
    /* the detail remembers what the handle was and where it was created */
    assert_non_null(strstr(cm_last_error()->message, "100 bytes"));
    assert_non_null(strstr(cm_last_error()->message, "test_buffer_args.c"));
    assert_non_null(strstr(cm_last_error()->message, "\"doomed\""));
    assert_non_null(strstr(cm_last_error()->hint, "CM_SCOPED"));
    char junk[64];
    EXPECT_FAIL(cm_buffer_destroy((cm_buffer_t *)junk), INV, "is not a live cm_buffer_t");
    EXPECT_FAIL(cm_buffer_destroy((cm_buffer_t *)g.hb), INV, "is a cm_host_buffer_t, not a cm_buffer_t");
    EXPECT_FAIL(cm_buffer_destroy((cm_buffer_t *)g.dev0), INV, "is a cm_device_t, not a cm_buffer_t");
    CM_ASSERT_OK(cm_buffer_destroy_on_cuda_stream(NULL, FAKE_STREAM(0)));
    EXPECT_FAIL(cm_buffer_destroy_on_cuda_stream(g.dead, FAKE_STREAM(0)), INV, "already destroyed");
    /* destroy on a stream of another device is refused and leaves the buffer alive */
    EXPECT_FAIL(cm_buffer_destroy_on_cuda_stream(g.bs, FAKE_STREAM(2)), INV,
                "the stream belongs to device 2 but the buffer to device 0");
    size_t size = 0;
    CM_ASSERT_OK(cm_buffer_size(g.bs, &size));
    assert_int_equal(size, N);
    cm_buffer_scope_exit(NULL); /* no-op */

    size_t bytes = 7;
    cm_device_t *dev = NULL;
    bool ordered = false;
    void *ptr = (void *)(uintptr_t)0x77;
    cudaStream_t s = (cudaStream_t)(uintptr_t)0x77;
    EXPECT_FAIL(cm_buffer_size(NULL, &bytes), INV, "buf is NULL");
    EXPECT_FAIL(cm_buffer_size(g.b, NULL), INV, "bytes is NULL");
    EXPECT_FAIL(cm_buffer_size(g.dead, &bytes), INV, "already destroyed");
    EXPECT_FAIL(cm_buffer_device(NULL, &dev), INV, "buf is NULL");
    EXPECT_FAIL(cm_buffer_device(g.b, NULL), INV, "dev is NULL");
    EXPECT_FAIL(cm_buffer_device(g.dead, &dev), INV, "already destroyed");
    EXPECT_FAIL(cm_buffer_is_stream_ordered(NULL, &ordered), INV, "buf is NULL");
    EXPECT_FAIL(cm_buffer_is_stream_ordered(g.b, NULL), INV, "stream_ordered is NULL");
    EXPECT_FAIL(cm_buffer_is_stream_ordered(g.dead, &ordered), INV, "already destroyed");
    EXPECT_FAIL(cm_buffer_device_ptr(NULL, &ptr), INV, "buf is NULL");
    EXPECT_FAIL(cm_buffer_device_ptr(g.b, NULL), INV, "ptr is NULL");
    EXPECT_FAIL(cm_buffer_device_ptr(g.dead, &ptr), INV, "already destroyed");
    EXPECT_FAIL(cm_buffer_cuda_stream(NULL, &s), INV, "buf is NULL");
    EXPECT_FAIL(cm_buffer_cuda_stream(g.b, NULL), INV, "stream is NULL");
    EXPECT_FAIL(cm_buffer_cuda_stream(g.dead, &s), INV, "already destroyed");
    assert_int_equal(bytes, 7);
    assert_null(dev);
    assert_false(ordered);
    assert_ptr_equal(ptr, (void *)(uintptr_t)0x77);
    assert_ptr_equal(s, (cudaStream_t)(uintptr_t)0x77);

    CM_ASSERT_OK(cm_buffer_device(g.b1, &dev));
    assert_ptr_equal(dev, g.dev1);
    CM_ASSERT_OK(cm_buffer_is_stream_ordered(g.bs, &ordered));
    assert_true(ordered);
    CM_ASSERT_OK(cm_buffer_cuda_stream(g.bs, &s));
    assert_ptr_equal(s, FAKE_STREAM(0));
    CM_ASSERT_OK(cm_buffer_cuda_stream(g.b, &s));
    assert_null(s);
}

static void test_host_buffer_arguments(void **state) {
    (void)state;
    cm_host_buffer_t *out = (cm_host_buffer_t *)(uintptr_t)0x42;
    EXPECT_FAIL(cm_host_buffer_create(g.dev0, 16, 0, NULL), INV, "out is NULL");
    EXPECT_FAIL(cm_host_buffer_create(NULL, 16, 0, &out), INV, "dev is NULL");
    EXPECT_FAIL(cm_host_buffer_create(g.dead_dev, 16, 0, &out), INV, "already closed");
    EXPECT_FAIL(cm_host_buffer_create(g.dev0, 16, 0x10, &out), INV, "unknown bits 0x10");
    char mem[64];
    EXPECT_FAIL(cm_host_buffer_register(g.dev0, mem, sizeof mem, 0, NULL), INV, "out is NULL");
    EXPECT_FAIL(cm_host_buffer_register(NULL, mem, sizeof mem, 0, &out), INV, "dev is NULL");
    EXPECT_FAIL(cm_host_buffer_register(g.dev0, NULL, 64, 0, &out), INV,
                "ptr is NULL but bytes is 64");
    EXPECT_FAIL(cm_host_buffer_register(g.dev0, mem, sizeof mem, CM_HOST_BUFFER_WRITE_COMBINED, &out),
                INV, "WRITE_COMBINED cannot be applied");
    EXPECT_FAIL(cm_host_buffer_register(g.dev0, mem, sizeof mem, 0x80, &out), INV, "unknown bits");
    assert_ptr_equal(out, (cm_host_buffer_t *)(uintptr_t)0x42);
    /* registering memory twice is refused by CUDA; the status says so */
    cm_host_buffer_t *r = NULL;
    CM_ASSERT_OK(cm_host_buffer_register(g.dev0, mem, sizeof mem, CM_HOST_BUFFER_PORTABLE, &r));
    EXPECT_FAIL(cm_host_buffer_register(g.dev0, mem, sizeof mem, 0, &out), INV, NULL);
    assert_int_equal(cm_last_error()->cuda_error, cudaErrorHostMemoryAlreadyRegistered);
    CM_ASSERT_OK(cm_host_buffer_destroy(r));

    CM_ASSERT_OK(cm_host_buffer_destroy(NULL));
    EXPECT_FAIL(cm_host_buffer_destroy(g.dead_h), INV, "already destroyed");
    assert_non_null(strstr(cm_last_error()->message, "host buffer (cm_host_buffer_t) of 10 B"));
    EXPECT_FAIL(cm_host_buffer_destroy((cm_host_buffer_t *)g.b), INV,
                "is a cm_buffer_t, not a cm_host_buffer_t");
    cm_host_buffer_scope_exit(NULL);

    void *ptr = (void *)(uintptr_t)0x77;
    size_t bytes = 7;
    unsigned flags = 7;
    EXPECT_FAIL(cm_host_buffer_data(NULL, &ptr), INV, "buf is NULL");
    EXPECT_FAIL(cm_host_buffer_data(g.hb, NULL), INV, "ptr is NULL");
    EXPECT_FAIL(cm_host_buffer_data(g.dead_h, &ptr), INV, "already destroyed");
    EXPECT_FAIL(cm_host_buffer_size(NULL, &bytes), INV, "buf is NULL");
    EXPECT_FAIL(cm_host_buffer_size(g.hb, NULL), INV, "bytes is NULL");
    EXPECT_FAIL(cm_host_buffer_size(g.dead_h, &bytes), INV, "already destroyed");
    EXPECT_FAIL(cm_host_buffer_flags(NULL, &flags), INV, "buf is NULL");
    EXPECT_FAIL(cm_host_buffer_flags(g.hb, NULL), INV, "flags is NULL");
    EXPECT_FAIL(cm_host_buffer_flags(g.dead_h, &flags), INV, "already destroyed");
    EXPECT_FAIL(cm_host_buffer_device_ptr(NULL, &ptr), INV, "buf is NULL");
    EXPECT_FAIL(cm_host_buffer_device_ptr(g.hb, NULL), INV, "ptr is NULL");
    EXPECT_FAIL(cm_host_buffer_device_ptr(g.dead_h, &ptr), INV, "already destroyed");
    EXPECT_FAIL(cm_host_buffer_device_ptr(g.hb, &ptr), INV, "is not mapped");
    assert_ptr_equal(ptr, (void *)(uintptr_t)0x77);
    assert_int_equal(bytes, 7);
    assert_int_equal(flags, 7);
}

/* ---------------------------------------------------------------- copies */

static void test_copy_host_arguments(void **state) {
    (void)state;
    unsigned char src[N];
    memset(src, 0x11, N);
    /* NULL and destroyed handles, NULL host pointers */
    EXPECT_FAIL(cm_buffer_copy_from_host(NULL, 0, src, 1), INV, "dst is NULL");
    EXPECT_FAIL(cm_buffer_copy_from_host(g.dead, 0, src, 1), INV, "already destroyed");
    EXPECT_FAIL(cm_buffer_copy_from_host(g.b, 0, NULL, 1), INV, "src is NULL but bytes is 1");
    EXPECT_FAIL(cm_buffer_copy_to_host(NULL, 0, g.host, 1), INV, "src is NULL");
    EXPECT_FAIL(cm_buffer_copy_to_host(g.dead, 0, g.host, 1), INV, "already destroyed");
    EXPECT_FAIL(cm_buffer_copy_to_host(g.b, 0, NULL, 1), INV, "dst is NULL but bytes is 1");
    /* ranges: one past the end, offset past the end, offset SIZE_MAX, length SIZE_MAX */
    EXPECT_FAIL(cm_buffer_copy_from_host(g.b, 1, src, N), INV,
                "offset 1 + 4096 bytes = 4097 is past the end of the 4096-byte cm_buffer_t");
    EXPECT_FAIL(cm_buffer_copy_from_host(g.b, N + 1, src, 0), INV, "offset 4097 + 0 bytes");
    EXPECT_FAIL(cm_buffer_copy_from_host(g.b, SIZE_MAX, src, 1), INV,
                "offset 18446744073709551615 + 1 bytes overflows size_t (the cm_buffer_t has 4096 bytes)");
    EXPECT_FAIL(cm_buffer_copy_from_host(g.b, 16, src, SIZE_MAX), INV, "overflows size_t");
    EXPECT_FAIL(cm_buffer_copy_to_host(g.b, N - 3, g.host, 4), INV,
                "offset 4093 + 4 bytes = 4097 is past the end of the 4096-byte cm_buffer_t");
    EXPECT_FAIL(cm_buffer_copy_to_host(g.b, SIZE_MAX, g.host, SIZE_MAX), INV, "overflows size_t");
    assert_non_null(strstr(cm_last_error()->hint, "offsets into src run from 0 to its size, 4096"));
    /* wrong direction: device memory where host memory is expected */
    void *dptr = NULL;
    CM_ASSERT_OK(cm_buffer_device_ptr(g.b1, &dptr));
    EXPECT_FAIL(cm_buffer_copy_from_host(g.b, 0, dptr, 16), INV,
                "is device memory of device 1, not host memory: wrong direction");
    EXPECT_FAIL(cm_buffer_copy_to_host(g.b, 0, dptr, 16), INV, "wrong direction");
    assert_non_null(strstr(cm_last_error()->hint, "cm_buffer_copy()"));
    /* a stream of another device, a stream that is not one */
    EXPECT_FAIL(cm_buffer_copy_from_host_on_cuda_stream(g.b, 0, src, 16, FAKE_STREAM(1)), INV,
                "the stream belongs to device 1 but the buffer to device 0");
    EXPECT_FAIL(cm_buffer_copy_to_host_on_cuda_stream(g.b, 0, g.host, 16, FAKE_STREAM(2)), INV,
                "the stream belongs to device 2");
    EXPECT_FAIL(cm_buffer_copy_to_host_on_cuda_stream(g.b, 0, g.host, 16, FAKE_BAD_STREAM), INV,
                "not a valid CUDA stream");
    EXPECT_FAIL(cm_buffer_copy_from_host_on_cuda_stream(g.b, 8, src, N, FAKE_STREAM(0)), INV,
                "past the end");
    EXPECT_FAIL(cm_buffer_copy_from_host_on_cuda_stream(NULL, 0, src, 1, FAKE_STREAM(0)), INV,
                "dst is NULL");
    EXPECT_FAIL(cm_buffer_copy_to_host_on_cuda_stream(g.dead, 0, g.host, 1, FAKE_STREAM(0)), INV,
                "already destroyed");
    expect_sentinels();

    /* zero bytes: valid anywhere up to the end, even with NULL host pointers */
    CM_ASSERT_OK(cm_buffer_copy_from_host(g.b, N, NULL, 0));
    CM_ASSERT_OK(cm_buffer_copy_to_host(g.b, 0, NULL, 0));
    CM_ASSERT_OK(cm_buffer_copy_from_host_on_cuda_stream(g.bs, N, src, 0, FAKE_STREAM(0)));
    expect_sentinels();
    assert_int_equal(fake.calls[FAKE_MEMCPY] + fake.calls[FAKE_MEMCPY_ASYNC], 0);
}

static void test_copy_host_buffer_arguments(void **state) {
    (void)state;
    EXPECT_FAIL(cm_buffer_copy_from_host_buffer(NULL, 0, g.hb, 0, 1), INV, "dst is NULL");
    EXPECT_FAIL(cm_buffer_copy_from_host_buffer(g.b, 0, NULL, 0, 1), INV, "src is NULL");
    EXPECT_FAIL(cm_buffer_copy_from_host_buffer(g.b, 0, g.dead_h, 0, 1), INV, "already destroyed");
    EXPECT_FAIL(cm_buffer_copy_from_host_buffer(g.dead, 0, g.hb, 0, 1), INV, "already destroyed");
    EXPECT_FAIL(cm_buffer_copy_from_host_buffer(g.b, 0, g.hb, 1, N), INV,
                "src range out of bounds: offset 1 + 4096 bytes = 4097 is past the end of the "
                "4096-byte cm_host_buffer_t");
    EXPECT_FAIL(cm_buffer_copy_from_host_buffer(g.b, 2, g.hb, 0, N), INV,
                "dst range out of bounds: offset 2 + 4096 bytes = 4098");
    EXPECT_FAIL(cm_buffer_copy_from_host_buffer(g.b, 0, g.hb, SIZE_MAX, 2), INV, "overflows size_t");
    EXPECT_FAIL(cm_buffer_copy_to_host_buffer(NULL, 0, g.hb, 0, 1), INV, "src is NULL");
    EXPECT_FAIL(cm_buffer_copy_to_host_buffer(g.b, 0, NULL, 0, 1), INV, "dst is NULL");
    EXPECT_FAIL(cm_buffer_copy_to_host_buffer(g.b, 0, g.dead_h, 0, 1), INV, "already destroyed");
    EXPECT_FAIL(cm_buffer_copy_to_host_buffer(g.b, SIZE_MAX, g.hb, 0, 1), INV, "overflows size_t");
    EXPECT_FAIL(cm_buffer_copy_to_host_buffer(g.b, 0, g.hb, N, 1), INV,
                "dst range out of bounds: offset 4096 + 1 bytes = 4097");
    EXPECT_FAIL(cm_buffer_copy_from_host_buffer_on_cuda_stream(g.b, 0, g.hb, 0, 8, FAKE_STREAM(1)),
                INV, "the stream belongs to device 1 but the buffer to device 0");
    EXPECT_FAIL(cm_buffer_copy_to_host_buffer_on_cuda_stream(g.b1, 0, g.hb, 0, 8, FAKE_STREAM(0)),
                INV, "the stream belongs to device 0 but the buffer to device 1");
    EXPECT_FAIL(cm_buffer_copy_from_host_buffer_on_cuda_stream(g.b, 0, g.hb, 0, N + 1,
                                                                FAKE_STREAM(0)), INV, "past the end");
    EXPECT_FAIL(cm_buffer_copy_to_host_buffer_on_cuda_stream(g.b, 0, NULL, 0, 1, FAKE_STREAM(0)),
                INV, "dst is NULL");
    expect_sentinels();
    CM_ASSERT_OK(cm_buffer_copy_from_host_buffer(g.b, N, g.hb, N, 0));
    CM_ASSERT_OK(cm_buffer_copy_to_host_buffer(g.b, 0, g.hb, 0, 0));
    expect_sentinels();
}

static void test_copy_device_arguments(void **state) {
    (void)state;
    EXPECT_FAIL(cm_buffer_copy(NULL, 0, g.b, 0, 1), INV, "dst is NULL");
    EXPECT_FAIL(cm_buffer_copy(g.bs, 0, NULL, 0, 1), INV, "src is NULL");
    EXPECT_FAIL(cm_buffer_copy(g.bs, 0, g.dead, 0, 1), INV, "already destroyed");
    EXPECT_FAIL(cm_buffer_copy(g.dead, 0, g.b, 0, 1), INV, "already destroyed");
    EXPECT_FAIL(cm_buffer_copy(g.bs, 0, g.b, 4000, 100), INV,
                "src range out of bounds: offset 4000 + 100 bytes = 4100");
    EXPECT_FAIL(cm_buffer_copy(g.bs, 4000, g.b, 0, 100), INV,
                "dst range out of bounds: offset 4000 + 100 bytes = 4100");
    EXPECT_FAIL(cm_buffer_copy(g.bs, SIZE_MAX, g.b, SIZE_MAX, SIZE_MAX), INV, "overflows size_t");
    /* overlapping ranges of one buffer */
    EXPECT_FAIL(cm_buffer_copy(g.b, 0, g.b, 100, 200), INV,
                "the ranges overlap within one buffer: 200 bytes from offset 100 to offset 0");
    EXPECT_FAIL(cm_buffer_copy(g.b, 10, g.b, 0, 11), INV, "overlap");
    /* streams: same-device copy needs that device's stream; a cross-device copy either's */
    EXPECT_FAIL(cm_buffer_copy_on_cuda_stream(g.b, 0, g.bs, 0, 16, FAKE_STREAM(1)), INV,
                "the stream belongs to device 1 but the buffer to device 0");
    EXPECT_FAIL(cm_buffer_copy_on_cuda_stream(g.b, 0, g.b1, 0, 16, FAKE_STREAM(2)), INV,
                "takes a stream of either");
    EXPECT_FAIL(cm_buffer_copy_on_cuda_stream(g.b, 0, g.b1, 0, N + 1, FAKE_STREAM(0)), INV,
                "past the end");
    expect_sentinels();
    CM_ASSERT_OK(cm_buffer_copy(g.b, 0, g.b, 0, 0));       /* empty: no overlap */
    CM_ASSERT_OK(cm_buffer_copy(g.b, 0, g.b, 2048, 2048)); /* adjacent halves do not overlap */
    CM_ASSERT_OK(cm_buffer_copy_on_cuda_stream(g.b, 0, g.b1, 0, 0, FAKE_STREAM(1)));
    fill_sentinels();
}

static void test_set_fill_arguments(void **state) {
    (void)state;
    float one = 1.0f;
    EXPECT_FAIL(cm_buffer_set(NULL, 0, 1, 0), INV, "buf is NULL");
    EXPECT_FAIL(cm_buffer_set(g.dead, 0, 1, 0), INV, "already destroyed");
    EXPECT_FAIL(cm_buffer_set(g.b, 0, 1, 256), INV, "value 256 is not a byte (0 .. 255)");
    EXPECT_FAIL(cm_buffer_set(g.b, 0, 1, -1), INV, "value -1 is not a byte");
    assert_non_null(strstr(cm_last_error()->hint, "cm_buffer_fill()"));
    EXPECT_FAIL(cm_buffer_set(NULL, 0, 1, 300), INV, "buf is NULL"); /* handle first */
    EXPECT_FAIL(cm_buffer_set(g.b, N, 1, 0), INV, "offset 4096 + 1 bytes = 4097");
    EXPECT_FAIL(cm_buffer_set(g.b, SIZE_MAX, 2, 0), INV, "overflows size_t");
    EXPECT_FAIL(cm_buffer_set_on_cuda_stream(g.b, 0, 1, 0, FAKE_STREAM(1)), INV,
                "the stream belongs to device 1");
    EXPECT_FAIL(cm_buffer_set_on_cuda_stream(g.b, 0, 1, 999, FAKE_STREAM(0)), INV, "value 999");
    EXPECT_FAIL(cm_buffer_fill(NULL, 0, 4, &one, 4), INV, "buf is NULL");
    EXPECT_FAIL(cm_buffer_fill(g.dead, 0, 4, &one, 4), INV, "already destroyed");
    EXPECT_FAIL(cm_buffer_fill(g.b, 0, 4, NULL, 4), INV, "pattern is NULL");
    EXPECT_FAIL(cm_buffer_fill(g.b, 0, 4, &one, 3), INV, "pattern_bytes is 3");
    EXPECT_FAIL(cm_buffer_fill(g.b, 0, 4, &one, 0), INV, "pattern_bytes is 0");
    EXPECT_FAIL(cm_buffer_fill(g.b, 0, 4, &one, 16), INV, "pattern_bytes is 16");
    EXPECT_FAIL(cm_buffer_fill(g.b, 2, 4, &one, 4), INV,
                "offset 2 and bytes 4 must both be multiples of the 4-byte pattern");
    EXPECT_FAIL(cm_buffer_fill(g.b, 0, 6, &one, 4), INV, "multiples of the 4-byte pattern");
    EXPECT_FAIL(cm_buffer_fill(g.b, N - 4, 8, &one, 4), INV, "offset 4092 + 8 bytes = 4100");
    EXPECT_FAIL(cm_buffer_fill(g.b, SIZE_MAX - 3, 4, &one, 4), INV, "overflows size_t");
    EXPECT_FAIL(cm_buffer_fill_on_cuda_stream(g.b, 0, 4, &one, 4, FAKE_STREAM(2)), INV,
                "the stream belongs to device 2");
    EXPECT_FAIL(cm_buffer_fill_on_cuda_stream(g.b, 0, 4, NULL, 4, FAKE_STREAM(0)), INV,
                "pattern is NULL");
    expect_sentinels();
    CM_ASSERT_OK(cm_buffer_set(g.b, N, 0, 0));
    CM_ASSERT_OK(cm_buffer_fill(g.b, N, 0, &one, 4));
    expect_sentinels();
    assert_int_equal(fake.calls[FAKE_MEMSET_ASYNC] + fake.calls[FAKE_FILL], 0);
}

/* Use after destroy through every entry point that takes a buffer. */
static void test_every_call_rejects_a_destroyed_buffer(void **state) {
    (void)state;
    cm_buffer_t *b = NULL;
    CM_ASSERT_OK(cm_buffer_create_labeled(g.dev0, 64, "gone", &b));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    unsigned char h[64] = {0};
    int v = 0;
    cm_status_t got[] = {
        cm_buffer_destroy(b),
        cm_buffer_destroy_on_cuda_stream(b, FAKE_STREAM(0)),
        cm_buffer_copy_from_host(b, 0, h, 1),
        cm_buffer_copy_to_host(b, 0, h, 1),
        cm_buffer_copy_from_host_buffer(b, 0, g.hb, 0, 1),
        cm_buffer_copy_to_host_buffer(b, 0, g.hb, 0, 1),
        cm_buffer_copy(b, 0, g.b, 0, 1),
        cm_buffer_copy(g.b, 0, b, 0, 1),
        cm_buffer_set(b, 0, 1, 0),
        cm_buffer_fill(b, 0, 4, &v, 4),
        cm_buffer_copy_from_host_on_cuda_stream(b, 0, h, 1, FAKE_STREAM(0)),
        cm_buffer_copy_to_host_on_cuda_stream(b, 0, h, 1, FAKE_STREAM(0)),
        cm_buffer_copy_from_host_buffer_on_cuda_stream(b, 0, g.hb, 0, 1, FAKE_STREAM(0)),
        cm_buffer_copy_to_host_buffer_on_cuda_stream(b, 0, g.hb, 0, 1, FAKE_STREAM(0)),
        cm_buffer_copy_on_cuda_stream(b, 0, g.b, 0, 1, FAKE_STREAM(0)),
        cm_buffer_set_on_cuda_stream(b, 0, 1, 0, FAKE_STREAM(0)),
        cm_buffer_fill_on_cuda_stream(b, 0, 4, &v, 4, FAKE_STREAM(0)),
    };
    for (size_t i = 0; i < sizeof got / sizeof got[0]; ++i) {
        if (got[i] != INV) {
            print_error("call %zu returned %s\n", i, cm_status_name(got[i]));
            fail();
        }
    }
    assert_non_null(strstr(cm_last_error()->message, "already destroyed"));
    assert_non_null(strstr(cm_last_error()->message, "\"gone\""));
    expect_sentinels();
}

/* A handle address that the allocator hands out again is not mistaken for the old handle while
 * the old one is in quarantine: destroy, create, and the stale pointer is still "destroyed". */
static void test_stale_handle_after_reuse(void **state) {
    (void)state;
    cm_buffer_t *old = NULL, *fresh = NULL;
    CM_ASSERT_OK(cm_buffer_create(g.dev0, 32, &old));
    CM_ASSERT_OK(cm_buffer_destroy(old));
    CM_ASSERT_OK(cm_buffer_create(g.dev0, 32, &fresh));
    assert_ptr_not_equal(old, fresh);
    EXPECT_FAIL(cm_buffer_destroy(old), INV, "already destroyed");
    size_t size = 0;
    CM_ASSERT_OK(cm_buffer_size(fresh, &size));
    assert_int_equal(size, 32);
    CM_ASSERT_OK(cm_buffer_destroy(fresh));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_device_object_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_destroy_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_host_buffer_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copy_host_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copy_host_buffer_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copy_device_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_fill_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_call_rejects_a_destroyed_buffer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stale_handle_after_reuse, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
