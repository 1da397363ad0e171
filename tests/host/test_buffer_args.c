/*
 * Argument checks of every public function of buffer.h, of the device object (device.h) and of
 * the memory part of interop.h (and cm_stream_wrap(), which adopts the simulated CUDA streams):
 * NULL arguments, zero sizes, ranges past the end or overflowing size_t (offset SIZE_MAX), a
 * stream of the wrong device, released streams, destroyed handles (use after destroy, double
 * destroy), pointers that are no handle, handles of the wrong kind. Each failure must return
 * CM_ERROR_INVALID_ARGUMENT with a message that names the numbers and a hint, and must write
 * nothing (device memory and host destinations keep their sentinel bytes). The accessors
 * cm_buffer_info() and cm_host_buffer_info() are checked field by field.
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
    cm_stream_t *w0, *w1, *w2; /* library streams wrapping FAKE_STREAM(0), (1), (2) */
    cm_stream_t *dead_s;   /* a wrapped stream of device 0, released */
    cm_buffer_t *b;        /* N bytes on device 0, synchronous */
    cm_buffer_t *bs;       /* N bytes on device 0, stream-ordered on w0 */
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
    if (cm_stream_wrap(g.dev0, FAKE_STREAM(0), &g.w0) ||
        cm_stream_wrap(g.dev1, FAKE_STREAM(1), &g.w1) ||
        cm_stream_wrap(g.dev2, FAKE_STREAM(2), &g.w2) ||
        cm_stream_wrap(g.dev0, FAKE_STREAM(0), &g.dead_s) || cm_stream_release(g.dead_s))
        return -1;
    if (cm_buffer_create(g.dev0, N, &g.b) || cm_buffer_create(g.dev1, N, &g.b1) ||
        cm_buffer_create_on_stream(g.w0, g.dev0, N, &g.bs) ||
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
    bad |= cm_stream_release(g.w0) | cm_stream_release(g.w1) | cm_stream_release(g.w2);
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
    EXPECT_FAIL(cm_buffer_create_on_stream(g.w0, g.dev0, 16, NULL), INV, "out is NULL");
    EXPECT_FAIL(cm_buffer_create_on_stream(g.w0, NULL, 16, &out), INV, "dev is NULL");
    EXPECT_FAIL(cm_buffer_create_on_stream(g.w0, g.dead_dev, 16, &out), INV, "already closed");
    /* a stream of another device */
    EXPECT_FAIL(cm_buffer_create_on_stream(g.w1, g.dev0, 16, &out), INV,
                "the stream belongs to device 1 but the buffer to device 0");
    /* a released stream, a pointer that is no handle, a handle of another kind */
    EXPECT_FAIL(cm_buffer_create_on_stream(g.dead_s, g.dev0, 16, &out), INV,
                "stream was already released");
    char junk_stream[64];
    EXPECT_FAIL(cm_buffer_create_on_stream((cm_stream_t *)junk_stream, g.dev0, 16, &out), INV,
                "is not a live");
    EXPECT_FAIL(cm_buffer_create_on_stream((cm_stream_t *)g.b, g.dev0, 16, &out), INV,
                "is a cm_buffer_t");
    /* a CUDA stream that is not one, or of another device, or a default stream, cannot be
     * wrapped in the first place */
    cm_stream_t *w = (cm_stream_t *)(uintptr_t)0x42;
    EXPECT_FAIL(cm_stream_wrap(g.dev0, FAKE_BAD_STREAM, &w), INV, "not a valid CUDA stream");
    assert_null(w);
    EXPECT_FAIL(cm_stream_wrap(g.dev0, FAKE_STREAM(1), &w), INV,
                "the stream belongs to device 1 but the device object to device 0");
    EXPECT_FAIL(cm_stream_wrap(g.dev0, 0, &w), INV, "cannot wrap a default stream");
    EXPECT_FAIL(cm_stream_wrap(g.dev0, cudaStreamLegacy, &w), INV, "cannot wrap a default stream");
    EXPECT_FAIL(cm_stream_wrap(g.dev0, FAKE_STREAM(0), NULL), INV, "out is NULL");
    EXPECT_FAIL(cm_stream_wrap(NULL, FAKE_STREAM(0), &w), INV, "dev is NULL");
    EXPECT_FAIL(cm_stream_wrap(g.dead_dev, FAKE_STREAM(0), &w), INV, "already closed");
    assert_null(w);
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
    CM_ASSERT_OK(cm_buffer_destroy_on_stream(g.w0, NULL));
    EXPECT_FAIL(cm_buffer_destroy_on_stream(g.w0, g.dead), INV, "already destroyed");
    /* destroy on a stream of another device is refused and leaves the buffer alive */
    EXPECT_FAIL(cm_buffer_destroy_on_stream(g.w2, g.bs), INV,
                "the stream belongs to device 2 but the buffer to device 0");
    assert_int_equal(fake_buffer_bytes(g.bs), N);
    cm_buffer_scope_exit(NULL); /* no-op */

    void *ptr = (void *)(uintptr_t)0x77;
    EXPECT_FAIL(cm_buffer_device_ptr(NULL, &ptr), INV, "buf is NULL");
    EXPECT_FAIL(cm_buffer_device_ptr(g.b, NULL), INV, "ptr is NULL");
    EXPECT_FAIL(cm_buffer_device_ptr(g.dead, &ptr), INV, "already destroyed");
    assert_ptr_equal(ptr, (void *)(uintptr_t)0x77);
}

/* cm_buffer_destroy_on_stream(): the stream is required and must be of the buffer's device; a
 * refusal leaves the buffer alive (usable, counted, destroyable afterwards). */
static void test_destroy_on_stream_arguments(void **state) {
    (void)state;
    cm_buffer_t *sync = NULL, *ordered = NULL;
    CM_ASSERT_OK(cm_buffer_create(g.dev0, 64, &sync));
    CM_ASSERT_OK(cm_buffer_create_on_stream(g.w0, g.dev0, 64, &ordered));
    cm_buffer_t *const both[] = {sync, ordered};
    for (size_t i = 0; i < 2; ++i) {
        EXPECT_FAIL(cm_buffer_destroy_on_stream(NULL, both[i]), INV,
                    "stream is NULL; the buffer was left alive");
        assert_non_null(strstr(cm_last_error()->hint, "cm_buffer_destroy()"));
        assert_int_equal(fake_buffer_bytes(both[i]), 64);
        EXPECT_FAIL(cm_buffer_destroy_on_stream(g.w1, both[i]), INV,
                    "the stream belongs to device 1 but the buffer to device 0");
        assert_int_equal(fake_buffer_bytes(both[i]), 64);
        EXPECT_FAIL(cm_buffer_destroy_on_stream(g.w2, both[i]), INV,
                    "the stream belongs to device 2 but the buffer to device 0");
        EXPECT_FAIL(cm_buffer_destroy_on_stream(g.dead_s, both[i]), INV,
                    "stream was already released");
        assert_int_equal(fake_buffer_bytes(both[i]), 64);
    }
    EXPECT_FAIL(cm_buffer_destroy_on_stream(NULL, NULL), INV, "stream is NULL");
    /* still usable after the refusals */
    unsigned char h[64];
    memset(h, 0x3C, sizeof h);
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, ordered, 0, h, sizeof h));
    CM_ASSERT_OK(cm_buffer_copy(NULL, sync, 0, ordered, 0, sizeof h));
    cm_memory_report_t r;
    CM_ASSERT_OK(cm_device_memory_report(g.dev0, &r));
    assert_int_equal(r.live_buffers, 4); /* b, bs, sync, ordered */
    unsigned long frees = fake.calls[FAKE_FREE], async_frees = fake.calls[FAKE_FREE_ASYNC];
    /* a synchronous buffer destroyed on a stream is freed like cudaFree; a stream-ordered one in
     * the order of the stream given */
    CM_ASSERT_OK(cm_buffer_destroy_on_stream(g.w0, sync));
    assert_int_equal(fake.calls[FAKE_FREE], frees + 1);
    CM_ASSERT_OK(cm_buffer_destroy_on_stream(g.w0, ordered));
    assert_int_equal(fake.calls[FAKE_FREE_ASYNC], async_frees + 1);
    EXPECT_FAIL(cm_buffer_destroy_on_stream(g.w0, ordered), INV, "already destroyed");
    CM_ASSERT_OK(cm_device_memory_report(g.dev0, &r));
    assert_int_equal(r.live_buffers, 2);
    expect_sentinels();
}

/* cm_buffer_info() and cm_host_buffer_info(): every field, and the refusals (NULL arguments,
 * destroyed handles, handles of another kind), which leave info as it was. */
static void test_info_arguments_and_fields(void **state) {
    (void)state;
    cm_buffer_info_t info, before;
    memset(&info, 0x5A, sizeof info);
    memcpy(&before, &info, sizeof info);
    EXPECT_FAIL(cm_buffer_info(NULL, &info), INV, "buf is NULL");
    EXPECT_FAIL(cm_buffer_info(g.b, NULL), INV, "info is NULL");
    EXPECT_FAIL(cm_buffer_info(g.dead, &info), INV, "already destroyed");
    assert_non_null(strstr(cm_last_error()->message, "\"doomed\""));
    EXPECT_FAIL(cm_buffer_info((cm_buffer_t *)g.hb, &info), INV,
                "is a cm_host_buffer_t, not a cm_buffer_t");
    char junk[64];
    EXPECT_FAIL(cm_buffer_info((cm_buffer_t *)junk, &info), INV, "is not a live cm_buffer_t");
    assert_memory_equal(&info, &before, sizeof info);

    /* a synchronous buffer */
    void *ptr = NULL;
    CM_ASSERT_OK(cm_buffer_device_ptr(g.b, &ptr));
    CM_ASSERT_OK(cm_buffer_info(g.b, &info));
    assert_int_equal(info.bytes, N);
    assert_ptr_equal(info.device, g.dev0);
    assert_int_equal(info.ordinal, 0);
    assert_false(info.stream_ordered);
    assert_null(info.stream);
    assert_ptr_equal(info.device_ptr, ptr);
    assert_non_null(info.device_ptr);
    assert_string_equal(info.label, "");
    /* a stream-ordered one: the stream it was created on */
    CM_ASSERT_OK(cm_buffer_device_ptr(g.bs, &ptr));
    CM_ASSERT_OK(cm_buffer_info(g.bs, &info));
    assert_int_equal(info.bytes, N);
    assert_ptr_equal(info.device, g.dev0);
    assert_int_equal(info.ordinal, 0);
    assert_true(info.stream_ordered);
    assert_ptr_equal(info.stream, g.w0);
    assert_ptr_equal(info.device_ptr, ptr);
    assert_string_equal(info.label, "");
    /* another device; a label; an empty buffer */
    CM_ASSERT_OK(cm_buffer_info(g.b1, &info));
    assert_ptr_equal(info.device, g.dev1);
    assert_int_equal(info.ordinal, 1);
    cm_buffer_t *lab = NULL, *empty = NULL, *longlab = NULL;
    CM_ASSERT_OK(cm_buffer_create_labeled(g.dev2, 24, "weights", &lab));
    CM_ASSERT_OK(cm_buffer_create_on_stream(g.w2, g.dev2, 0, &empty));
    char label[80];
    memset(label, 'L', sizeof label - 1);
    label[sizeof label - 1] = '\0';
    CM_ASSERT_OK(cm_buffer_create_labeled(g.dev2, 8, label, &longlab));
    CM_ASSERT_OK(cm_buffer_info(lab, &info));
    assert_int_equal(info.bytes, 24);
    assert_ptr_equal(info.device, g.dev2);
    assert_int_equal(info.ordinal, 2);
    assert_false(info.stream_ordered);
    assert_string_equal(info.label, "weights");
    CM_ASSERT_OK(cm_buffer_info(empty, &info));
    assert_int_equal(info.bytes, 0);
    assert_null(info.device_ptr);
    assert_true(info.stream_ordered);
    assert_ptr_equal(info.stream, g.w2);
    assert_int_equal(info.ordinal, 2);
    CM_ASSERT_OK(cm_buffer_info(longlab, &info));
    assert_int_equal(strlen(info.label), sizeof info.label - 1); /* up to 63 characters */
    assert_memory_equal(info.label, label, sizeof info.label - 1);
    CM_ASSERT_OK(cm_buffer_destroy(lab));
    CM_ASSERT_OK(cm_buffer_destroy(empty));
    CM_ASSERT_OK(cm_buffer_destroy(longlab));
    memcpy(&before, &info, sizeof info);
    EXPECT_FAIL(cm_buffer_info(lab, &info), INV, "already destroyed");
    assert_memory_equal(&info, &before, sizeof info);

    /* pinned host buffers */
    cm_host_buffer_info_t hi, hbefore;
    memset(&hi, 0x5A, sizeof hi);
    memcpy(&hbefore, &hi, sizeof hi);
    EXPECT_FAIL(cm_host_buffer_info(NULL, &hi), INV, "buf is NULL");
    EXPECT_FAIL(cm_host_buffer_info(g.hb, NULL), INV, "info is NULL");
    EXPECT_FAIL(cm_host_buffer_info(g.dead_h, &hi), INV, "already destroyed");
    EXPECT_FAIL(cm_host_buffer_info((cm_host_buffer_t *)g.b, &hi), INV,
                "is a cm_buffer_t, not a cm_host_buffer_t");
    assert_memory_equal(&hi, &hbefore, sizeof hi);
    void *data = NULL;
    CM_ASSERT_OK(cm_host_buffer_data(g.hb, &data));
    CM_ASSERT_OK(cm_host_buffer_info(g.hb, &hi));
    assert_int_equal(hi.bytes, N);
    assert_int_equal(hi.flags, CM_HOST_BUFFER_DEFAULT);
    assert_false(hi.registered);
    assert_ptr_equal(hi.data, data);
    assert_non_null(hi.data);
    assert_null(hi.device_ptr);
    assert_ptr_equal(hi.device, g.dev0);
    assert_string_equal(hi.label, "");
    /* mapped and labeled, on device 1 */
    cm_host_buffer_t *m = NULL, *r = NULL, *z = NULL;
    const unsigned mapped = CM_HOST_BUFFER_MAPPED | CM_HOST_BUFFER_PORTABLE;
    CM_ASSERT_OK(cm_host_buffer_create_at(g.dev1, 128, mapped, &m, "staging-in", __FILE__,
                                          __LINE__));
    void *dptr = NULL;
    CM_ASSERT_OK(cm_host_buffer_device_ptr(m, &dptr));
    CM_ASSERT_OK(cm_host_buffer_data(m, &data));
    CM_ASSERT_OK(cm_host_buffer_info(m, &hi));
    assert_int_equal(hi.bytes, 128);
    assert_int_equal(hi.flags, mapped);
    assert_false(hi.registered);
    assert_ptr_equal(hi.data, data);
    assert_ptr_equal(hi.device_ptr, dptr);
    assert_non_null(hi.device_ptr);
    assert_ptr_equal(hi.device, g.dev1);
    assert_string_equal(hi.label, "staging-in");
    /* registered memory of the caller; an empty buffer */
    unsigned char mine[96];
    CM_ASSERT_OK(cm_host_buffer_register(g.dev2, mine, sizeof mine, CM_HOST_BUFFER_PORTABLE, &r));
    CM_ASSERT_OK(cm_host_buffer_info(r, &hi));
    assert_int_equal(hi.bytes, sizeof mine);
    assert_int_equal(hi.flags, CM_HOST_BUFFER_PORTABLE);
    assert_true(hi.registered);
    assert_ptr_equal(hi.data, mine);
    assert_null(hi.device_ptr);
    assert_ptr_equal(hi.device, g.dev2);
    assert_string_equal(hi.label, "");
    CM_ASSERT_OK(cm_host_buffer_create(g.dev0, 0, 0, &z));
    CM_ASSERT_OK(cm_host_buffer_info(z, &hi));
    assert_int_equal(hi.bytes, 0);
    assert_null(hi.data);
    CM_ASSERT_OK(cm_host_buffer_destroy(m));
    CM_ASSERT_OK(cm_host_buffer_destroy(r));
    CM_ASSERT_OK(cm_host_buffer_destroy(z));
    memcpy(&hbefore, &hi, sizeof hi);
    EXPECT_FAIL(cm_host_buffer_info(m, &hi), INV, "already destroyed");
    assert_memory_equal(&hi, &hbefore, sizeof hi);
}

/* Every buffer call given a stream of device 1 for buffers of device 0 is refused, naming both
 * devices, before anything is written; the handle knows its device, so no driver query is made
 * about the stream. */
static void test_stream_of_another_device_refused_everywhere(void **state) {
    (void)state;
    const char *msg = "the stream belongs to device 1 but the buffer to device 0";
    unsigned char src[64];
    memset(src, 0x11, sizeof src);
    float one = 1.0f;
    unsigned long ctxq = fake.calls[FAKE_STREAM_CTX], devq = fake.calls[FAKE_STREAM_DEVICE];
    cm_buffer_t *out = (cm_buffer_t *)(uintptr_t)0x42;
    EXPECT_FAIL(cm_buffer_create_on_stream(g.w1, g.dev0, 64, &out), INV, msg);
    assert_ptr_equal(out, (cm_buffer_t *)(uintptr_t)0x42);
    EXPECT_FAIL(cm_buffer_create_on_stream(g.w1, g.dev0, 0, &out), INV, msg);
    EXPECT_FAIL(cm_buffer_destroy_on_stream(g.w1, g.b), INV, msg);
    EXPECT_FAIL(cm_buffer_destroy_on_stream(g.w1, g.bs), INV, msg);
    EXPECT_FAIL(cm_buffer_copy_from_host(g.w1, g.b, 0, src, 16), INV, msg);
    EXPECT_FAIL(cm_buffer_copy_to_host(g.w1, g.bs, 0, g.host, 16), INV, msg);
    EXPECT_FAIL(cm_buffer_copy_from_host_buffer(g.w1, g.b, 0, g.hb, 0, 16), INV, msg);
    EXPECT_FAIL(cm_buffer_copy_to_host_buffer(g.w1, g.bs, 0, g.hb, 0, 16), INV, msg);
    EXPECT_FAIL(cm_buffer_copy(g.w1, g.b, 0, g.bs, 0, 16), INV, msg);
    EXPECT_FAIL(cm_buffer_set(g.w1, g.b, 0, 16, 0), INV, msg);
    EXPECT_FAIL(cm_buffer_fill(g.w1, g.bs, 0, 16, &one, 4), INV, msg);
    assert_non_null(strstr(cm_last_error()->hint, "device 0"));
    assert_int_equal(cm_last_error()->device, 0);
    /* even for zero bytes */
    EXPECT_FAIL(cm_buffer_copy_from_host(g.w1, g.b, 0, NULL, 0), INV, msg);
    EXPECT_FAIL(cm_buffer_set(g.w1, g.b, 0, 0, 0), INV, msg);
    assert_int_equal(fake.calls[FAKE_STREAM_CTX], ctxq);
    assert_int_equal(fake.calls[FAKE_STREAM_DEVICE], devq);
    assert_int_equal(fake.calls[FAKE_MEMCPY] + fake.calls[FAKE_MEMCPY_ASYNC] +
                         fake.calls[FAKE_MEMSET_ASYNC] + fake.calls[FAKE_FILL],
                     0);
    cm_memory_report_t r;
    CM_ASSERT_OK(cm_device_memory_report(g.dev0, &r));
    assert_int_equal(r.live_buffers, 2); /* b and bs are alive */
    expect_sentinels();
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
    EXPECT_FAIL(cm_host_buffer_data(NULL, &ptr), INV, "buf is NULL");
    EXPECT_FAIL(cm_host_buffer_data(g.hb, NULL), INV, "ptr is NULL");
    EXPECT_FAIL(cm_host_buffer_data(g.dead_h, &ptr), INV, "already destroyed");
    EXPECT_FAIL(cm_host_buffer_device_ptr(NULL, &ptr), INV, "buf is NULL");
    EXPECT_FAIL(cm_host_buffer_device_ptr(g.hb, NULL), INV, "ptr is NULL");
    EXPECT_FAIL(cm_host_buffer_device_ptr(g.dead_h, &ptr), INV, "already destroyed");
    EXPECT_FAIL(cm_host_buffer_device_ptr(g.hb, &ptr), INV, "is not mapped");
    assert_ptr_equal(ptr, (void *)(uintptr_t)0x77);
    /* size and flags are read through cm_host_buffer_info() (test_info_arguments_and_fields) */
    cm_host_buffer_info_t hi;
    memset(&hi, 0x5A, sizeof hi);
    EXPECT_FAIL(cm_host_buffer_info(g.dead_h, &hi), INV, "already destroyed");
    assert_int_equal(hi.flags, 0x5A5A5A5Au);
}

/* ---------------------------------------------------------------- copies */

static void test_copy_host_arguments(void **state) {
    (void)state;
    unsigned char src[N];
    memset(src, 0x11, N);
    /* NULL and destroyed handles, NULL host pointers */
    EXPECT_FAIL(cm_buffer_copy_from_host(NULL, NULL, 0, src, 1), INV, "dst is NULL");
    EXPECT_FAIL(cm_buffer_copy_from_host(NULL, g.dead, 0, src, 1), INV, "already destroyed");
    EXPECT_FAIL(cm_buffer_copy_from_host(NULL, g.b, 0, NULL, 1), INV, "src is NULL but bytes is 1");
    EXPECT_FAIL(cm_buffer_copy_to_host(NULL, NULL, 0, g.host, 1), INV, "src is NULL");
    EXPECT_FAIL(cm_buffer_copy_to_host(NULL, g.dead, 0, g.host, 1), INV, "already destroyed");
    EXPECT_FAIL(cm_buffer_copy_to_host(NULL, g.b, 0, NULL, 1), INV, "dst is NULL but bytes is 1");
    /* ranges: one past the end, offset past the end, offset SIZE_MAX, length SIZE_MAX */
    EXPECT_FAIL(cm_buffer_copy_from_host(NULL, g.b, 1, src, N), INV,
                "offset 1 + 4096 bytes = 4097 is past the end of the 4096-byte cm_buffer_t");
    EXPECT_FAIL(cm_buffer_copy_from_host(NULL, g.b, N + 1, src, 0), INV, "offset 4097 + 0 bytes");
    EXPECT_FAIL(cm_buffer_copy_from_host(NULL, g.b, SIZE_MAX, src, 1), INV,
                "offset 18446744073709551615 + 1 bytes overflows size_t (the cm_buffer_t has 4096 bytes)");
    EXPECT_FAIL(cm_buffer_copy_from_host(NULL, g.b, 16, src, SIZE_MAX), INV, "overflows size_t");
    EXPECT_FAIL(cm_buffer_copy_to_host(NULL, g.b, N - 3, g.host, 4), INV,
                "offset 4093 + 4 bytes = 4097 is past the end of the 4096-byte cm_buffer_t");
    EXPECT_FAIL(cm_buffer_copy_to_host(NULL, g.b, SIZE_MAX, g.host, SIZE_MAX), INV,
                "overflows size_t");
    assert_non_null(strstr(cm_last_error()->hint, "offsets into src run from 0 to its size, 4096"));
    /* wrong direction: device memory where host memory is expected */
    void *dptr = NULL;
    CM_ASSERT_OK(cm_buffer_device_ptr(g.b1, &dptr));
    EXPECT_FAIL(cm_buffer_copy_from_host(NULL, g.b, 0, dptr, 16), INV,
                "is device memory of device 1, not host memory: wrong direction");
    EXPECT_FAIL(cm_buffer_copy_to_host(NULL, g.b, 0, dptr, 16), INV, "wrong direction");
    assert_non_null(strstr(cm_last_error()->hint, "cm_buffer_copy()"));
    /* a stream of another device, a released stream, a pointer that is no stream */
    EXPECT_FAIL(cm_buffer_copy_from_host(g.w1, g.b, 0, src, 16), INV,
                "the stream belongs to device 1 but the buffer to device 0");
    EXPECT_FAIL(cm_buffer_copy_to_host(g.w2, g.b, 0, g.host, 16), INV,
                "the stream belongs to device 2");
    EXPECT_FAIL(cm_buffer_copy_to_host(g.dead_s, g.b, 0, g.host, 16), INV,
                "stream was already released");
    EXPECT_FAIL(cm_buffer_copy_from_host((cm_stream_t *)g.hb, g.b, 0, src, 16), INV,
                "is a cm_host_buffer_t");
    EXPECT_FAIL(cm_buffer_copy_from_host(g.w0, g.b, 8, src, N), INV, "past the end");
    EXPECT_FAIL(cm_buffer_copy_from_host(g.w0, NULL, 0, src, 1), INV, "dst is NULL");
    EXPECT_FAIL(cm_buffer_copy_to_host(g.w0, g.dead, 0, g.host, 1), INV, "already destroyed");
    /* the detail names the public function */
    assert_string_equal(cm_last_error()->call, "cm_buffer_copy_to_host");
    expect_sentinels();

    /* zero bytes: valid anywhere up to the end, even with NULL host pointers */
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, g.b, N, NULL, 0));
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, g.b, 0, NULL, 0));
    CM_ASSERT_OK(cm_buffer_copy_from_host(g.w0, g.bs, N, src, 0));
    expect_sentinels();
    assert_int_equal(fake.calls[FAKE_MEMCPY] + fake.calls[FAKE_MEMCPY_ASYNC], 0);
}

static void test_copy_host_buffer_arguments(void **state) {
    (void)state;
    EXPECT_FAIL(cm_buffer_copy_from_host_buffer(NULL, NULL, 0, g.hb, 0, 1), INV, "dst is NULL");
    EXPECT_FAIL(cm_buffer_copy_from_host_buffer(NULL, g.b, 0, NULL, 0, 1), INV, "src is NULL");
    EXPECT_FAIL(cm_buffer_copy_from_host_buffer(NULL, g.b, 0, g.dead_h, 0, 1), INV,
                "already destroyed");
    EXPECT_FAIL(cm_buffer_copy_from_host_buffer(NULL, g.dead, 0, g.hb, 0, 1), INV,
                "already destroyed");
    EXPECT_FAIL(cm_buffer_copy_from_host_buffer(NULL, g.b, 0, g.hb, 1, N), INV,
                "src range out of bounds: offset 1 + 4096 bytes = 4097 is past the end of the "
                "4096-byte cm_host_buffer_t");
    EXPECT_FAIL(cm_buffer_copy_from_host_buffer(NULL, g.b, 2, g.hb, 0, N), INV,
                "dst range out of bounds: offset 2 + 4096 bytes = 4098");
    EXPECT_FAIL(cm_buffer_copy_from_host_buffer(NULL, g.b, 0, g.hb, SIZE_MAX, 2), INV,
                "overflows size_t");
    EXPECT_FAIL(cm_buffer_copy_to_host_buffer(NULL, NULL, 0, g.hb, 0, 1), INV, "src is NULL");
    EXPECT_FAIL(cm_buffer_copy_to_host_buffer(NULL, g.b, 0, NULL, 0, 1), INV, "dst is NULL");
    EXPECT_FAIL(cm_buffer_copy_to_host_buffer(NULL, g.b, 0, g.dead_h, 0, 1), INV,
                "already destroyed");
    EXPECT_FAIL(cm_buffer_copy_to_host_buffer(NULL, g.b, SIZE_MAX, g.hb, 0, 1), INV,
                "overflows size_t");
    EXPECT_FAIL(cm_buffer_copy_to_host_buffer(NULL, g.b, 0, g.hb, N, 1), INV,
                "dst range out of bounds: offset 4096 + 1 bytes = 4097");
    EXPECT_FAIL(cm_buffer_copy_from_host_buffer(g.w1, g.b, 0, g.hb, 0, 8), INV,
                "the stream belongs to device 1 but the buffer to device 0");
    EXPECT_FAIL(cm_buffer_copy_to_host_buffer(g.w0, g.b1, 0, g.hb, 0, 8), INV,
                "the stream belongs to device 0 but the buffer to device 1");
    EXPECT_FAIL(cm_buffer_copy_from_host_buffer(g.w0, g.b, 0, g.hb, 0, N + 1), INV, "past the end");
    EXPECT_FAIL(cm_buffer_copy_to_host_buffer(g.w0, g.b, 0, NULL, 0, 1), INV, "dst is NULL");
    EXPECT_FAIL(cm_buffer_copy_to_host_buffer(g.dead_s, g.b, 0, g.hb, 0, 1), INV,
                "stream was already released");
    expect_sentinels();
    CM_ASSERT_OK(cm_buffer_copy_from_host_buffer(NULL, g.b, N, g.hb, N, 0));
    CM_ASSERT_OK(cm_buffer_copy_to_host_buffer(NULL, g.b, 0, g.hb, 0, 0));
    expect_sentinels();
}

static void test_copy_device_arguments(void **state) {
    (void)state;
    EXPECT_FAIL(cm_buffer_copy(NULL, NULL, 0, g.b, 0, 1), INV, "dst is NULL");
    EXPECT_FAIL(cm_buffer_copy(NULL, g.bs, 0, NULL, 0, 1), INV, "src is NULL");
    EXPECT_FAIL(cm_buffer_copy(NULL, g.bs, 0, g.dead, 0, 1), INV, "already destroyed");
    EXPECT_FAIL(cm_buffer_copy(NULL, g.dead, 0, g.b, 0, 1), INV, "already destroyed");
    EXPECT_FAIL(cm_buffer_copy(NULL, g.bs, 0, g.b, 4000, 100), INV,
                "src range out of bounds: offset 4000 + 100 bytes = 4100");
    EXPECT_FAIL(cm_buffer_copy(NULL, g.bs, 4000, g.b, 0, 100), INV,
                "dst range out of bounds: offset 4000 + 100 bytes = 4100");
    EXPECT_FAIL(cm_buffer_copy(NULL, g.bs, SIZE_MAX, g.b, SIZE_MAX, SIZE_MAX), INV,
                "overflows size_t");
    /* overlapping ranges of one buffer */
    EXPECT_FAIL(cm_buffer_copy(NULL, g.b, 0, g.b, 100, 200), INV,
                "the ranges overlap within one buffer: 200 bytes from offset 100 to offset 0");
    EXPECT_FAIL(cm_buffer_copy(NULL, g.b, 10, g.b, 0, 11), INV, "overlap");
    /* streams: same-device copy needs that device's stream; a cross-device copy either's */
    EXPECT_FAIL(cm_buffer_copy(g.w1, g.b, 0, g.bs, 0, 16), INV,
                "the stream belongs to device 1 but the buffer to device 0");
    assert_string_equal(cm_last_error()->call, "cm_buffer_copy");
    EXPECT_FAIL(cm_buffer_copy(g.w2, g.b, 0, g.b1, 0, 16), INV, "takes a stream of either");
    EXPECT_FAIL(cm_buffer_copy(g.w0, g.b, 0, g.b1, 0, N + 1), INV, "past the end");
    EXPECT_FAIL(cm_buffer_copy(g.dead_s, g.b, 0, g.bs, 0, 16), INV, "stream was already released");
    expect_sentinels();
    CM_ASSERT_OK(cm_buffer_copy(NULL, g.b, 0, g.b, 0, 0));       /* empty: no overlap */
    CM_ASSERT_OK(cm_buffer_copy(NULL, g.b, 0, g.b, 2048, 2048)); /* adjacent halves: none */
    CM_ASSERT_OK(cm_buffer_copy(g.w1, g.b, 0, g.b1, 0, 0));
    fill_sentinels();
}

static void test_set_fill_arguments(void **state) {
    (void)state;
    float one = 1.0f;
    EXPECT_FAIL(cm_buffer_set(NULL, NULL, 0, 1, 0), INV, "buf is NULL");
    EXPECT_FAIL(cm_buffer_set(NULL, g.dead, 0, 1, 0), INV, "already destroyed");
    EXPECT_FAIL(cm_buffer_set(NULL, g.b, 0, 1, 256), INV, "value 256 is not a byte (0 .. 255)");
    EXPECT_FAIL(cm_buffer_set(NULL, g.b, 0, 1, -1), INV, "value -1 is not a byte");
    assert_non_null(strstr(cm_last_error()->hint, "cm_buffer_fill()"));
    EXPECT_FAIL(cm_buffer_set(NULL, NULL, 0, 1, 300), INV, "buf is NULL"); /* handle first */
    EXPECT_FAIL(cm_buffer_set(NULL, g.b, N, 1, 0), INV, "offset 4096 + 1 bytes = 4097");
    EXPECT_FAIL(cm_buffer_set(NULL, g.b, SIZE_MAX, 2, 0), INV, "overflows size_t");
    EXPECT_FAIL(cm_buffer_set(g.w1, g.b, 0, 1, 0), INV, "the stream belongs to device 1");
    assert_string_equal(cm_last_error()->call, "cm_buffer_set");
    EXPECT_FAIL(cm_buffer_set(g.w0, g.b, 0, 1, 999), INV, "value 999");
    EXPECT_FAIL(cm_buffer_set(g.dead_s, g.b, 0, 1, 0), INV, "stream was already released");
    EXPECT_FAIL(cm_buffer_fill(NULL, NULL, 0, 4, &one, 4), INV, "buf is NULL");
    EXPECT_FAIL(cm_buffer_fill(NULL, g.dead, 0, 4, &one, 4), INV, "already destroyed");
    EXPECT_FAIL(cm_buffer_fill(NULL, g.b, 0, 4, NULL, 4), INV, "pattern is NULL");
    EXPECT_FAIL(cm_buffer_fill(NULL, g.b, 0, 4, &one, 3), INV, "pattern_bytes is 3");
    EXPECT_FAIL(cm_buffer_fill(NULL, g.b, 0, 4, &one, 0), INV, "pattern_bytes is 0");
    EXPECT_FAIL(cm_buffer_fill(NULL, g.b, 0, 4, &one, 16), INV, "pattern_bytes is 16");
    EXPECT_FAIL(cm_buffer_fill(NULL, g.b, 2, 4, &one, 4), INV,
                "offset 2 and bytes 4 must both be multiples of the 4-byte pattern");
    EXPECT_FAIL(cm_buffer_fill(NULL, g.b, 0, 6, &one, 4), INV, "multiples of the 4-byte pattern");
    EXPECT_FAIL(cm_buffer_fill(NULL, g.b, N - 4, 8, &one, 4), INV, "offset 4092 + 8 bytes = 4100");
    EXPECT_FAIL(cm_buffer_fill(NULL, g.b, SIZE_MAX - 3, 4, &one, 4), INV, "overflows size_t");
    EXPECT_FAIL(cm_buffer_fill(g.w2, g.b, 0, 4, &one, 4), INV, "the stream belongs to device 2");
    assert_string_equal(cm_last_error()->call, "cm_buffer_fill");
    EXPECT_FAIL(cm_buffer_fill(g.w0, g.b, 0, 4, NULL, 4), INV, "pattern is NULL");
    expect_sentinels();
    CM_ASSERT_OK(cm_buffer_set(NULL, g.b, N, 0, 0));
    CM_ASSERT_OK(cm_buffer_fill(NULL, g.b, N, 0, &one, 4));
    CM_ASSERT_OK(cm_buffer_fill(g.w0, g.bs, N, 0, &one, 4));
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
    cm_buffer_info_t info;
    cm_status_t got[] = {
        cm_buffer_destroy(b),
        cm_buffer_destroy_on_stream(g.w0, b),
        cm_buffer_info(b, &info),
        cm_buffer_copy_from_host(NULL, b, 0, h, 1),
        cm_buffer_copy_to_host(NULL, b, 0, h, 1),
        cm_buffer_copy_from_host_buffer(NULL, b, 0, g.hb, 0, 1),
        cm_buffer_copy_to_host_buffer(NULL, b, 0, g.hb, 0, 1),
        cm_buffer_copy(NULL, b, 0, g.b, 0, 1),
        cm_buffer_copy(NULL, g.b, 0, b, 0, 1),
        cm_buffer_set(NULL, b, 0, 1, 0),
        cm_buffer_fill(NULL, b, 0, 4, &v, 4),
        cm_buffer_copy_from_host(g.w0, b, 0, h, 1),
        cm_buffer_copy_to_host(g.w0, b, 0, h, 1),
        cm_buffer_copy_from_host_buffer(g.w0, b, 0, g.hb, 0, 1),
        cm_buffer_copy_to_host_buffer(g.w0, b, 0, g.hb, 0, 1),
        cm_buffer_copy(g.w0, b, 0, g.b, 0, 1),
        cm_buffer_set(g.w0, b, 0, 1, 0),
        cm_buffer_fill(g.w0, b, 0, 4, &v, 4),
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
    assert_int_equal(fake_buffer_bytes(fresh), 32);
    CM_ASSERT_OK(cm_buffer_destroy(fresh));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_device_object_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_destroy_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_destroy_on_stream_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_info_arguments_and_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream_of_another_device_refused_everywhere, setup,
                                        teardown),
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
