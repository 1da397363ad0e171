/*
 * Bookkeeping of the device object: live-buffer counts and bytes, the high-water mark, the leak
 * report (and the refused close with its detail), the memory report and its text, zero-byte
 * buffers, CM_SCOPED cleanup on early returns, pool settings, many handles (registry growth and
 * quarantine), and data round trips through every copy call on the simulated device.
 *
 * FAULT INJECTION: runs on a simulated device (test_buffer_fake.h); no GPU needed.
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/interop.h>

#include "test_buffer_fake.h"

static int setup(void **state) {
    (void)state;
    fake_install(2, (size_t)256 << 20);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    int left = fake_outstanding(), violations = fake.violations;
    fake_uninstall();
    return (left || violations) ? -1 : 0;
}

static void test_counts_peak_and_leak_report(void **state) {
    (void)state;
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    cm_stream_t *w = fake_wrap(dev, 0);
    cm_buffer_t *a = NULL, *b = NULL, *s = NULL;
    cm_host_buffer_t *h = NULL;
    CM_ASSERT_OK(cm_buffer_create_labeled(dev, 4 << 20, "weights", &a));
    int line_b = __LINE__ + 1;
    CM_ASSERT_OK(cm_buffer_create(dev, 1000, &b));
    CM_ASSERT_OK(cm_buffer_create_at(w, dev, 2 << 20, &s, "activations", "train.c", 42));
    CM_ASSERT_OK(cm_host_buffer_create(dev, 4096, CM_HOST_BUFFER_MAPPED | CM_HOST_BUFFER_PORTABLE, &h));

    cm_memory_report_t r;
    CM_ASSERT_OK(cm_device_memory_report(dev, &r));
    assert_int_equal(r.device, 0);
    assert_int_equal(r.live_buffers, 3);
    assert_int_equal(r.live_bytes, (4 << 20) + 1000 + (2 << 20));
    assert_int_equal(r.peak_live_bytes, r.live_bytes);
    assert_int_equal(r.live_host_buffers, 1);
    assert_int_equal(r.live_host_bytes, 4096);
    assert_int_equal(r.pool_used_bytes, 2 << 20);
    assert_int_equal(r.pool_reserved_bytes, 2 << 20);
    assert_true(r.pool_release_threshold == ~0ull); /* default: keep everything cached */
    assert_int_equal(r.device_total_bytes, (size_t)256 << 20);
    assert_int_equal(r.device_free_bytes, ((size_t)256 << 20) - (4 << 20) - 1000 - (2 << 20));
    assert_int_equal(r.staging_bytes, 0);

    /* closing now is refused with the leak in the detail */
    EXPECT_FAIL(cm_device_close(dev), CM_ERROR_BUSY, "cannot close device 0 (Fake GPU): 4 buffers are still alive");
    const cm_error_t *e = cm_last_error();
    assert_non_null(strstr(e->message, "\"weights\""));
    assert_non_null(strstr(e->message, "train.c:42 \"activations\""));
    assert_non_null(strstr(e->message, "stream-ordered"));
    char where[64];
    snprintf(where, sizeof where, "test_buffer_accounting.c:%d", line_b);
    assert_non_null(strstr(e->message, where));
    assert_non_null(strstr(e->hint, "cm_device_leak_report()"));

    /* the full report lists every buffer in creation order */
    char report[2048];
    size_t len = 0;
    CM_ASSERT_OK(cm_device_leak_report(dev, report, sizeof report, &len));
    assert_int_equal(len, strlen(report));
    assert_non_null(strstr(report, "device 0 (Fake GPU): 4 live buffers, 6.00 MiB (6296552 bytes): "
                                   "3 on the device, 1 pinned on the host"));
    const char *p1 = strstr(report, "#1 device buffer of 4.00 MiB (4194304 bytes)");
    const char *p2 = strstr(report, "#2 device buffer of 1000 B (1000 bytes), created at");
    const char *p3 = strstr(report, "#3 device buffer of 2.00 MiB (2097152 bytes), stream-ordered, "
                                    "created at train.c:42 \"activations\"");
    const char *p4 = strstr(report, "#4 pinned host buffer of 4.00 KiB (4096 bytes), portable, "
                                    "mapped, created at");
    assert_true(p1 && p2 && p3 && p4 && p1 < p2 && p2 < p3 && p3 < p4);

    /* truncation: snprintf rules, the full length is still reported */
    char small[16];
    size_t need = 0;
    CM_ASSERT_OK(cm_device_leak_report(dev, small, sizeof small, &need));
    assert_int_equal(need, len);
    assert_int_equal(strlen(small), sizeof small - 1);
    assert_memory_equal(small, report, sizeof small - 1);

    /* destroying updates the counts; the peak stays */
    CM_ASSERT_OK(cm_buffer_destroy(a));
    CM_ASSERT_OK(cm_buffer_destroy(s));
    CM_ASSERT_OK(cm_stream_release(w)); /* after the buffer freed on it */
    CM_ASSERT_OK(cm_device_memory_report(dev, &r));
    assert_int_equal(r.live_buffers, 1);
    assert_int_equal(r.live_bytes, 1000);
    assert_int_equal(r.peak_live_bytes, (4 << 20) + 1000 + (2 << 20));
    assert_int_equal(r.pool_used_bytes, 0);
    assert_int_equal(r.pool_reserved_bytes, 2 << 20); /* cached by the pool */
    CM_ASSERT_OK(cm_device_leak_report(dev, report, sizeof report, NULL));
    assert_null(strstr(report, "weights"));
    assert_non_null(strstr(report, "2 live buffers"));

    char text[1024];
    CM_ASSERT_OK(cm_memory_report_format(&r, text, sizeof text, &len));
    assert_int_equal(len, strlen(text));
    assert_non_null(strstr(text, "device buffers: 1 live, 1000 B (peak 6.00 MiB)"));
    assert_non_null(strstr(text, "pinned host buffers: 1 live, 4.00 KiB"));
    assert_non_null(strstr(text, "pool: 2.00 MiB reserved, 0 B in use, 2.00 MiB cached"));
    assert_non_null(strstr(text, "release threshold none (keeps all)"));
    assert_non_null(strstr(text, "free of 256.00 MiB"));

    EXPECT_FAIL(cm_device_close(dev), CM_ERROR_BUSY, "2 buffers are still alive");
    CM_ASSERT_OK(cm_buffer_destroy(b));
    EXPECT_FAIL(cm_device_close(dev), CM_ERROR_BUSY, "1 buffer is still alive, 4.00 KiB (4096 bytes)");
    CM_ASSERT_OK(cm_host_buffer_destroy(h));
    CM_ASSERT_OK(cm_device_leak_report(dev, report, sizeof report, NULL));
    assert_string_equal(report, "device 0 (Fake GPU): no live buffers\n");
    CM_ASSERT_OK(cm_device_close(dev));
    EXPECT_CLEAN();
}

static void test_busy_message_is_bounded(void **state) {
    (void)state;
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(1, &dev));
    enum { COUNT = 50 };
    cm_buffer_t *b[COUNT];
    for (int i = 0; i < COUNT; ++i) {
        char label[32];
        snprintf(label, sizeof label, "tensor-%02d", i);
        CM_ASSERT_OK(cm_buffer_create_labeled(dev, (size_t)i + 1, label, &b[i]));
    }
    EXPECT_FAIL(cm_device_close(dev), CM_ERROR_BUSY, "50 buffers are still alive");
    const char *m = cm_last_error()->message;
    assert_true(strlen(m) < CM_ERROR_MESSAGE_MAX);
    assert_non_null(strstr(m, "\"tensor-00\""));
    assert_non_null(strstr(m, " more"));
    for (int i = 0; i < COUNT; ++i) CM_ASSERT_OK(cm_buffer_destroy(b[i]));
    CM_ASSERT_OK(cm_device_close(dev));
    EXPECT_CLEAN();
}

static void test_zero_byte_buffers(void **state) {
    (void)state;
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    cm_stream_t *w = fake_wrap(dev, 0);
    cm_buffer_t *z = NULL, *zs = NULL;
    cm_host_buffer_t *zh = NULL, *zr = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, 0, &z));
    CM_ASSERT_OK(cm_buffer_create_on_stream(w, dev, 0, &zs));
    CM_ASSERT_OK(cm_host_buffer_create(dev, 0, CM_HOST_BUFFER_MAPPED, &zh));
    CM_ASSERT_OK(cm_host_buffer_register(dev, NULL, 0, 0, &zr));
    /* no CUDA allocation at all */
    assert_int_equal(fake.calls[FAKE_MALLOC] + fake.calls[FAKE_MALLOC_ASYNC] +
                         fake.calls[FAKE_HOST_ALLOC] + fake.calls[FAKE_HOST_REGISTER],
                     0);
    void *p = (void *)1;
    CM_ASSERT_OK(cm_buffer_device_ptr(z, &p));
    assert_null(p);
    assert_int_equal(fake_buffer_bytes(z), 0);
    cm_buffer_info_t info;
    CM_ASSERT_OK(cm_buffer_info(zs, &info));
    assert_int_equal(info.bytes, 0);
    assert_true(info.stream_ordered);
    assert_ptr_equal(info.stream, w);
    assert_null(info.device_ptr);
    CM_ASSERT_OK(cm_host_buffer_data(zh, &p));
    assert_null(p);
    unsigned char h[4];
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, z, 0, h, 0));
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, zs, 0, h, 0));
    CM_ASSERT_OK(cm_buffer_copy_to_host(w, zs, 0, h, 0));
    CM_ASSERT_OK(cm_buffer_copy(NULL, z, 0, zs, 0, 0));
    CM_ASSERT_OK(cm_buffer_copy_from_host_buffer(NULL, z, 0, zh, 0, 0));
    CM_ASSERT_OK(cm_buffer_set(NULL, z, 0, 0, 7));
    EXPECT_FAIL(cm_buffer_copy_from_host(NULL, z, 0, h, 1), CM_ERROR_INVALID_ARGUMENT,
                "offset 0 + 1 bytes = 1 is past the end of the 0-byte cm_buffer_t");
    /* they are buffers all the same: counted, and leaks if forgotten */
    cm_memory_report_t r;
    CM_ASSERT_OK(cm_device_memory_report(dev, &r));
    assert_int_equal(r.live_buffers, 2);
    assert_int_equal(r.live_bytes, 0);
    assert_int_equal(r.live_host_buffers, 2);
    EXPECT_FAIL(cm_device_close(dev), CM_ERROR_BUSY, "4 buffers are still alive");
    CM_ASSERT_OK(cm_buffer_destroy(z));
    CM_ASSERT_OK(cm_buffer_destroy(zs));
    CM_ASSERT_OK(cm_host_buffer_destroy(zh));
    CM_ASSERT_OK(cm_host_buffer_destroy(zr));
    assert_int_equal(fake.calls[FAKE_FREE] + fake.calls[FAKE_FREE_ASYNC] + fake.calls[FAKE_FREE_HOST] +
                         fake.calls[FAKE_HOST_UNREGISTER],
                     0);
    CM_ASSERT_OK(cm_stream_release(w));
    CM_ASSERT_OK(cm_device_close(dev));
    EXPECT_CLEAN();
}

#if defined(__GNUC__) || defined(__clang__)
static cm_status_t scoped_work(cm_device_t *dev, bool fail_early, size_t *live_inside) {
    CM_SCOPED(cm_buffer) cm_buffer_t *a = NULL;
    CM_SCOPED(cm_host_buffer) cm_host_buffer_t *h = NULL;
    CM_TRY(cm_buffer_create(dev, 128, &a));
    CM_TRY(cm_host_buffer_create(dev, 128, 0, &h));
    cm_memory_report_t r;
    CM_TRY(cm_device_memory_report(dev, &r));
    *live_inside = r.live_buffers + r.live_host_buffers;
    if (fail_early) return cm_buffer_copy_from_host(NULL, a, 100, "x", 100); /* range error */
    CM_TRY(cm_buffer_copy_from_host_buffer(NULL, a, 0, h, 0, 128));
    return CM_OK;
}

static void test_scoped_cleanup(void **state) {
    (void)state;
    CM_SCOPED(cm_device) cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    size_t inside = 0;
    CM_ASSERT_OK(scoped_work(dev, false, &inside));
    assert_int_equal(inside, 2);
    inside = 0;
    assert_int_equal(scoped_work(dev, true, &inside), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(inside, 2);
    cm_memory_report_t r;
    CM_ASSERT_OK(cm_device_memory_report(dev, &r));
    assert_int_equal(r.live_buffers + r.live_host_buffers, 0); /* released on both paths */
    /* the scope-exit functions set the variable to NULL and accept NULL */
    cm_buffer_t *b = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, 8, &b));
    cm_buffer_scope_exit(&b);
    assert_null(b);
    cm_buffer_scope_exit(&b);
    /* a device with live buffers is left open by its scope exit (the detail says why) */
    cm_device_t *d2 = NULL;
    CM_ASSERT_OK(cm_device_open(1, &d2));
    cm_host_buffer_t *h = NULL;
    CM_ASSERT_OK(cm_host_buffer_create(d2, 8, 0, &h));
    cm_device_scope_exit(&d2);
    assert_non_null(d2);
    assert_int_equal(cm_last_error()->status, CM_ERROR_BUSY);
    cm_host_buffer_scope_exit(&h);
    assert_null(h);
    cm_device_scope_exit(&d2);
    assert_null(d2);
    /* dev is closed here by its own cleanup; teardown checks nothing is left */
}
#endif

static void test_pool_settings(void **state) {
    (void)state;
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    cudaMemPool_t pool = NULL;
    CM_ASSERT_OK(cm_device_memory_pool(dev, &pool));
    assert_non_null(pool);
    fake_pool_t *fp = (fake_pool_t *)(void *)pool;
    assert_true(fp->threshold == ~0ull);
    CM_ASSERT_OK(cm_device_pool_set_release_threshold(dev, 1 << 20));
    assert_int_equal(fp->threshold, 1 << 20);
    cm_memory_report_t r;
    CM_ASSERT_OK(cm_device_memory_report(dev, &r));
    assert_int_equal(r.pool_release_threshold, 1 << 20);

    cm_stream_t *w = fake_wrap(dev, 0);
    cm_buffer_t *b = NULL;
    CM_ASSERT_OK(cm_buffer_create_on_stream(w, dev, 8 << 20, &b));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_stream_release(w));
    assert_int_equal(fp->reserved, 8 << 20);
    CM_ASSERT_OK(cm_device_pool_trim(dev, 3 << 20));
    assert_int_equal(fp->reserved, 3 << 20);
    CM_ASSERT_OK(cm_device_pool_trim(dev, 0));
    assert_int_equal(fp->reserved, 0);
    char text[1024];
    CM_ASSERT_OK(cm_device_memory_report(dev, &r));
    CM_ASSERT_OK(cm_memory_report_format(&r, text, sizeof text, NULL));
    assert_non_null(strstr(text, "release threshold 1048576 bytes"));
    assert_non_null(strstr(text, "peak reserved 8.00 MiB"));
    CM_ASSERT_OK(cm_device_close(dev));

    /* a device without memory pools: synchronous buffers only */
    fake.pools_supported = 0;
    CM_ASSERT_OK(cm_device_open(1, &dev));
    CM_ASSERT_OK(cm_device_memory_pool(dev, &pool));
    assert_null(pool);
    w = fake_wrap(dev, 1);
    EXPECT_FAIL(cm_buffer_create_on_stream(w, dev, 16, &b), CM_ERROR_NOT_SUPPORTED,
                "has no memory pools");
    CM_ASSERT_OK(cm_stream_release(w));
    EXPECT_FAIL(cm_device_pool_set_release_threshold(dev, 0), CM_ERROR_NOT_SUPPORTED, "no memory pools");
    CM_ASSERT_OK(cm_device_pool_trim(dev, 0));
    CM_ASSERT_OK(cm_buffer_create(dev, 16, &b));
    CM_ASSERT_OK(cm_device_memory_report(dev, &r));
    assert_int_equal(r.pool_reserved_bytes, 0);
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_device_close(dev));
    EXPECT_CLEAN();
}

/* Thousands of handles over several devices: the registry grows and shrinks, the quarantine
 * recycles, and the counts stay exact. */
static void test_many_handles(void **state) {
    (void)state;
    cm_device_t *d0 = NULL, *d1 = NULL;
    CM_ASSERT_OK(cm_device_open(0, &d0));
    CM_ASSERT_OK(cm_device_open(1, &d1));
    cm_stream_t *w0 = fake_wrap(d0, 0), *w1 = fake_wrap(d1, 1);
    enum { COUNT = 3000 };
    cm_buffer_t **b = calloc(COUNT, sizeof *b);
    assert_non_null(b);
    size_t bytes0 = 0;
    for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < COUNT; ++i) {
            cm_device_t *d = (i % 3 == 0) ? d1 : d0;
            size_t n = (size_t)(i % 17) * 8;
            if (i % 2) CM_ASSERT_OK(cm_buffer_create(d, n, &b[i]));
            else CM_ASSERT_OK(cm_buffer_create_on_stream(d == d1 ? w1 : w0, d, n, &b[i]));
            if (d == d0 && round == 0) bytes0 += n;
        }
        cm_memory_report_t r;
        CM_ASSERT_OK(cm_device_memory_report(d0, &r));
        assert_int_equal(r.live_buffers, COUNT - (COUNT + 2) / 3);
        assert_int_equal(r.live_bytes, bytes0);
        /* destroy in a scattered order */
        for (int i = 0; i < COUNT; ++i) CM_ASSERT_OK(cm_buffer_destroy(b[(i * 7) % COUNT]));
        CM_ASSERT_OK(cm_device_memory_report(d0, &r));
        assert_int_equal(r.live_buffers, 0);
        assert_int_equal(r.live_bytes, 0);
        /* every stale handle is still recognised as not live */
        for (int i = 0; i < COUNT; i += 97)
            assert_int_equal(cm_buffer_destroy(b[i]), CM_ERROR_INVALID_ARGUMENT);
    }
    free(b);
    CM_ASSERT_OK(cm_stream_release(w0));
    CM_ASSERT_OK(cm_stream_release(w1));
    CM_ASSERT_OK(cm_device_close(d0));
    CM_ASSERT_OK(cm_device_close(d1));
    EXPECT_CLEAN();
}

/* Data goes where the offsets say, through every copy call (the simulation's device memory is
 * host memory, so each byte can be checked). */
static void test_round_trips(void **state) {
    (void)state;
    cm_device_t *d0 = NULL, *d1 = NULL;
    CM_ASSERT_OK(cm_device_open(0, &d0));
    CM_ASSERT_OK(cm_device_open(1, &d1));
    enum { SZ = 10007 };
    unsigned char *src = malloc(SZ), *out = malloc(SZ);
    assert_true(src && out);
    srand(7);
    for (size_t i = 0; i < SZ; ++i) src[i] = (unsigned char)rand();
    cm_stream_t *w0 = fake_wrap(d0, 0), *w1 = fake_wrap(d1, 1);
    cm_buffer_t *a = NULL, *b = NULL, *c = NULL;
    cm_host_buffer_t *h = NULL;
    CM_ASSERT_OK(cm_buffer_create(d0, SZ, &a));
    CM_ASSERT_OK(cm_buffer_create_on_stream(w0, d0, SZ, &b));
    CM_ASSERT_OK(cm_buffer_create(d1, SZ, &c));
    CM_ASSERT_OK(cm_host_buffer_create(d0, SZ, CM_HOST_BUFFER_WRITE_COMBINED, &h));
    CM_ASSERT_OK(cm_buffer_set(NULL, a, 0, SZ, 0));
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, a, 3, src, SZ - 5));    /* a[3..] = src[0..] */
    CM_ASSERT_OK(cm_buffer_copy(NULL, b, 1, a, 3, SZ - 5));             /* b[1..] = src[0..] */
    CM_ASSERT_OK(cm_buffer_copy(w1, c, 0, b, 1, SZ - 5));               /* peer */
    void *hp = NULL;
    CM_ASSERT_OK(cm_host_buffer_data(h, &hp));
    memset(hp, 0, SZ);
    CM_ASSERT_OK(cm_buffer_copy_to_host_buffer(NULL, c, 0, h, 2, SZ - 5)); /* h[2..] = src[0..] */
    CM_ASSERT_OK(cm_buffer_copy_from_host_buffer(w0, a, 0, h, 2, SZ - 5));
    memset(out, 0, SZ);
    CM_ASSERT_OK(cm_buffer_copy_to_host(w0, a, 0, out, SZ - 5));
    assert_memory_equal(out, src, SZ - 5);
    memset(out, 0, SZ);
    CM_ASSERT_OK(cm_buffer_copy_to_host_buffer(w0, b, 1, h, 0, 100));
    assert_memory_equal(hp, src, 100);
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, c, 0, out, SZ - 5));
    assert_memory_equal(out, src, SZ - 5);
    assert_int_equal(fake.calls[FAKE_CAN_PEER], 2);     /* peer access prepared once per pair */
    assert_int_equal(fake.calls[FAKE_ENABLE_PEER], 2);
    assert_int_equal(fake.calls[FAKE_POOL_ACCESS], 2);
    CM_ASSERT_OK(cm_buffer_copy(NULL, c, 0, a, 0, 10));
    assert_int_equal(fake.calls[FAKE_CAN_PEER], 2);
    assert_int_equal(fake.calls[FAKE_MEMCPY_PEER], 1);
    assert_int_equal(fake.calls[FAKE_MEMCPY_PEER_ASYNC], 1);

    /* set and fill */
    CM_ASSERT_OK(cm_buffer_set(w0, b, 5, 10, 0x3C));
    float f = 2.5f;
    CM_ASSERT_OK(cm_buffer_fill(NULL, a, 8, 4000, &f, sizeof f));
    uint16_t hw = 0x0101; /* equal bytes: a memset */
    CM_ASSERT_OK(cm_buffer_fill(w0, a, 4008, 2, &hw, 2));
    uint64_t q = 0x0102030405060708ull;
    CM_ASSERT_OK(cm_buffer_fill(NULL, c, 16, 64, &q, 8));
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, b, 0, out, SZ));
    for (size_t i = 5; i < 15; ++i) assert_int_equal(out[i], 0x3C);
    assert_int_equal(out[15], src[14]);
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, a, 0, out, SZ));
    for (size_t i = 8; i < 4008; i += 4) {
        float g;
        memcpy(&g, out + i, 4);
        assert_true(g == 2.5f);
    }
    assert_int_equal(out[4008], 1);
    assert_int_equal(out[4009], 1);
    assert_int_equal(out[4010], src[4010]);
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, c, 16, out, 64));
    for (size_t i = 0; i < 64; i += 8) {
        uint64_t g;
        memcpy(&g, out + i, 8);
        assert_true(g == q);
    }
    assert_int_equal(fake.calls[FAKE_FILL], 2); /* float and uint64 patterns; the rest memsets */

    CM_ASSERT_OK(cm_buffer_destroy(a));
    CM_ASSERT_OK(cm_buffer_destroy_on_stream(w0, b));
    CM_ASSERT_OK(cm_buffer_destroy_on_stream(w1, c)); /* synchronous: cudaFree */
    CM_ASSERT_OK(cm_host_buffer_destroy(h));
    CM_ASSERT_OK(cm_stream_release(w0));
    CM_ASSERT_OK(cm_stream_release(w1));
    free(src);
    free(out);
    CM_ASSERT_OK(cm_device_close(d0));
    CM_ASSERT_OK(cm_device_close(d1));
    EXPECT_CLEAN();
}

static void test_registered_and_mapped(void **state) {
    (void)state;
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    unsigned char *mine = malloc(8192);
    assert_non_null(mine);
    memset(mine, 0x42, 8192);
    cm_host_buffer_t *r = NULL, *m = NULL;
    CM_ASSERT_OK(cm_host_buffer_register(dev, mine, 8192, CM_HOST_BUFFER_MAPPED, &r));
    void *p = NULL;
    CM_ASSERT_OK(cm_host_buffer_data(r, &p));
    assert_ptr_equal(p, mine);
    CM_ASSERT_OK(cm_host_buffer_device_ptr(r, &p));
    assert_non_null(p);
    cm_host_buffer_info_t hi;
    CM_ASSERT_OK(cm_host_buffer_info(r, &hi));
    assert_int_equal(hi.flags, CM_HOST_BUFFER_MAPPED);
    assert_int_equal(hi.bytes, 8192);
    assert_true(hi.registered);
    assert_ptr_equal(hi.data, mine);
    assert_ptr_equal(hi.device_ptr, p);
    assert_ptr_equal(hi.device, dev);
    assert_string_equal(hi.label, "");
    CM_ASSERT_OK(cm_host_buffer_create(dev, 100, CM_HOST_BUFFER_MAPPED | CM_HOST_BUFFER_WRITE_COMBINED, &m));
    CM_ASSERT_OK(cm_host_buffer_device_ptr(m, &p));
    assert_non_null(p);
    /* copying from registered memory by raw pointer is a pinned (direct) copy, not staged */
    cm_buffer_t *b = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, 8192, &b));
    cm_staging_config_t cfg = CM_STAGING_CONFIG_INIT;
    cfg.min_bytes = 1;
    CM_ASSERT_OK(cm_device_staging_configure(dev, &cfg));
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, b, 0, mine, 8192));
    assert_int_equal(fake.calls[FAKE_MEMCPY], 1);
    assert_int_equal(fake.calls[FAKE_HOST_ALLOC], 1); /* only m; no staging buffers */
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_host_buffer_destroy(r));
    CM_ASSERT_OK(cm_host_buffer_destroy(m));
    /* the caller's memory is untouched and still the caller's */
    for (int i = 0; i < 8192; ++i) assert_int_equal(mine[i], 0x42);
    free(mine);
    CM_ASSERT_OK(cm_device_close(dev));
    EXPECT_CLEAN();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_counts_peak_and_leak_report, setup, teardown),
        cmocka_unit_test_setup_teardown(test_busy_message_is_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_zero_byte_buffers, setup, teardown),
#if defined(__GNUC__) || defined(__clang__)
        cmocka_unit_test_setup_teardown(test_scoped_cleanup, setup, teardown),
#endif
        cmocka_unit_test_setup_teardown(test_pool_settings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_handles, setup, teardown),
        cmocka_unit_test_setup_teardown(test_round_trips, setup, teardown),
        cmocka_unit_test_setup_teardown(test_registered_and_mapped, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
