/*
 * The staging pipeline of pageable copies: the chunk plan (a pure function: size, chunk size,
 * staging buffers -> the sequence of chunks, which slot each uses and which earlier chunk's DMA
 * it must wait for), the split of a chunk over host threads, configuration checks, and staged
 * copies on a simulated device at odd sizes and offsets, with one and with several host threads,
 * verified byte for byte with the bytes around the range untouched.
 *
 * FAULT INJECTION: the copy tests run on a simulated device (test_buffer_fake.h).
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/interop.h>

#include "memory_internal.h"
#include "test_buffer_fake.h"

/* ---------------------------------------------------------------- the plan */

static void test_chunk_plan_small_cases(void **state) {
    (void)state;
    cm__chunk_t c;
    assert_int_equal(cm__staging_chunk_count(0, 4096), 0);
    assert_int_equal(cm__staging_chunk_count(10, 0), 0);
    assert_false(cm__staging_chunk_at(0, 4096, 2, 0, &c));
    assert_false(cm__staging_chunk_at(10, 4096, 0, 0, &c));
    assert_false(cm__staging_chunk_at(10, 4096, 2, 0, NULL));

    assert_int_equal(cm__staging_chunk_count(1, 4096), 1);
    assert_true(cm__staging_chunk_at(1, 4096, 2, 0, &c));
    assert_int_equal(c.offset, 0);
    assert_int_equal(c.bytes, 1);
    assert_int_equal(c.slot, 0);
    assert_false(c.reuses_slot);

    /* 10000 bytes in 4096-byte chunks over 3 buffers: 4096, 4096, 1808 in slots 0, 1, 2 */
    assert_int_equal(cm__staging_chunk_count(10000, 4096), 3);
    const size_t off[] = {0, 4096, 8192}, len[] = {4096, 4096, 1808};
    for (size_t i = 0; i < 3; ++i) {
        assert_true(cm__staging_chunk_at(10000, 4096, 3, i, &c));
        assert_int_equal(c.index, i);
        assert_int_equal(c.offset, off[i]);
        assert_int_equal(c.bytes, len[i]);
        assert_int_equal(c.slot, i);
        assert_false(c.reuses_slot);
    }
    memset(&c, 0x5A, sizeof c);
    cm__chunk_t before = c;
    assert_false(cm__staging_chunk_at(10000, 4096, 3, 3, &c)); /* past the end: untouched */
    assert_memory_equal(&c, &before, sizeof c);

    /* exact multiple: no empty tail chunk */
    assert_int_equal(cm__staging_chunk_count(8192, 4096), 2);
    assert_true(cm__staging_chunk_at(8192, 4096, 2, 1, &c));
    assert_int_equal(c.bytes, 4096);

    /* two buffers alternate; from the third chunk on, each waits for the chunk two before */
    const size_t n = 4 * 4096 + 1;
    assert_int_equal(cm__staging_chunk_count(n, 4096), 5);
    const unsigned slots[] = {0, 1, 0, 1, 0};
    for (size_t i = 0; i < 5; ++i) {
        assert_true(cm__staging_chunk_at(n, 4096, 2, i, &c));
        assert_int_equal(c.slot, slots[i]);
        assert_int_equal(c.reuses_slot, i >= 2);
        if (i >= 2) assert_int_equal(c.previous, i - 2);
    }
    assert_int_equal(c.bytes, 1);
}

static void test_chunk_plan_properties(void **state) {
    (void)state;
    /* for many sizes, chunk sizes and buffer counts: chunks are contiguous, cover the range
     * exactly, are never empty or larger than a chunk, and reuse a slot only after the chunk
     * that last used it */
    srand(11);
    for (int trial = 0; trial < 2000; ++trial) {
        size_t chunk = 4096 + (size_t)(rand() % 70000);
        size_t bytes = (size_t)rand() % (chunk * 9) + (size_t)(trial % 3);
        unsigned buffers = 2 + (unsigned)(rand() % 7);
        size_t count = cm__staging_chunk_count(bytes, chunk);
        size_t expect = 0;
        size_t last_user[CM_STAGING_MAX_BUFFERS];
        for (unsigned s = 0; s < CM_STAGING_MAX_BUFFERS; ++s) last_user[s] = SIZE_MAX;
        for (size_t i = 0; i < count; ++i) {
            cm__chunk_t c;
            assert_true(cm__staging_chunk_at(bytes, chunk, buffers, i, &c));
            assert_int_equal(c.offset, expect);
            assert_true(c.bytes > 0 && c.bytes <= chunk);
            assert_true(c.slot < buffers);
            if (last_user[c.slot] == SIZE_MAX) {
                assert_false(c.reuses_slot);
            } else {
                assert_true(c.reuses_slot);
                assert_int_equal(c.previous, last_user[c.slot]);
            }
            last_user[c.slot] = i;
            expect += c.bytes;
        }
        assert_int_equal(expect, bytes);
    }
}

static void test_chunk_plan_near_size_max(void **state) {
    (void)state;
    const size_t chunk = (size_t)8 << 20;
    size_t count = cm__staging_chunk_count(SIZE_MAX, chunk);
    assert_int_equal(count, SIZE_MAX / chunk + 1);
    cm__chunk_t c;
    assert_true(cm__staging_chunk_at(SIZE_MAX, chunk, 3, count - 1, &c));
    assert_int_equal(c.offset + c.bytes, SIZE_MAX); /* the last chunk ends exactly at the end */
    assert_int_equal(c.bytes, SIZE_MAX % chunk);
    assert_false(cm__staging_chunk_at(SIZE_MAX, chunk, 3, count, &c));
    assert_int_equal(cm__staging_chunk_count(SIZE_MAX, 1), SIZE_MAX);
}

static void test_split_range(void **state) {
    (void)state;
    size_t off = 1, len = 1;
    cm__split_range(1000, 0, 0, &off, &len);
    assert_int_equal(off, 0);
    assert_int_equal(len, 0);
    cm__split_range(1000, 4, 4, &off, &len);
    assert_int_equal(len, 0);
    for (unsigned parts = 1; parts <= CM_STAGING_MAX_THREADS; ++parts) {
        const size_t sizes[] = {0, 1, 63, 64, 1000, 4096, 1048576 + 7, 8388608};
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
            size_t expect = 0;
            for (unsigned k = 0; k < parts; ++k) {
                cm__split_range(sizes[s], parts, k, &off, &len);
                assert_int_equal(off, expect);
                if (k + 1 < parts) assert_int_equal((off + len) % 64, 0); /* cache-line cuts */
                expect += len;
            }
            assert_int_equal(expect, sizes[s]);
        }
    }
    /* 1 MiB over 4 threads: equal quarters */
    cm__split_range(1 << 20, 4, 1, &off, &len);
    assert_int_equal(off, 1 << 18);
    assert_int_equal(len, 1 << 18);
}

static void test_config_resolution(void **state) {
    (void)state;
    cm_staging_config_t in = CM_STAGING_CONFIG_INIT, out;
    CM_ASSERT_OK(cm__staging_resolve(&in, &out));
    assert_int_equal(out.chunk_bytes, (size_t)8 << 20);
    assert_int_equal(out.buffers, 3);
    {
        /* min(8, CPUs / 2), at least 1 */
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        long want = cpus / 2 > 8 ? 8 : (cpus / 2 < 1 ? 1 : cpus / 2);
        assert_int_equal(out.host_threads, want);
    }
    assert_int_equal(out.min_bytes, (size_t)1 << 20);
    in.chunk_bytes = 4095;
    memset(&out, 0x33, sizeof out);
    cm_staging_config_t before = out;
    EXPECT_FAIL(cm__staging_resolve(&in, &out), CM_ERROR_INVALID_ARGUMENT,
                "staging chunk_bytes is 4095; it must be between 4096 and 268435456 (or 0)");
    assert_memory_equal(&out, &before, sizeof out);
    in.chunk_bytes = ((size_t)256 << 20) + 1;
    EXPECT_FAIL(cm__staging_resolve(&in, &out), CM_ERROR_INVALID_ARGUMENT, "chunk_bytes is 268435457");
    in.chunk_bytes = 4096;
    in.buffers = 1;
    EXPECT_FAIL(cm__staging_resolve(&in, &out), CM_ERROR_INVALID_ARGUMENT,
                "staging buffers is 1; it must be between 2 and 8 (or 0)");
    in.buffers = 8;
    in.host_threads = 16;
    in.min_bytes = 1;
    CM_ASSERT_OK(cm__staging_resolve(&in, &out));
    assert_int_equal(out.chunk_bytes, 4096);
    assert_int_equal(out.buffers, 8);
    assert_int_equal(out.host_threads, 16);
    assert_int_equal(out.min_bytes, 1);
}

/* ---------------------------------------------------------------- staged copies */

static int setup(void **state) {
    (void)state;
    fake_install(1, (size_t)64 << 20);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    int left = fake_outstanding(), violations = fake.violations;
    fake_uninstall();
    return (left || violations) ? -1 : 0;
}

static void fill_random(unsigned char *p, size_t n, unsigned seed) {
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; ++i) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = (unsigned char)x;
    }
}

/* Copy `bytes` at dev_off into a buffer of `cap` bytes and back to host memory at host_off,
 * staged (sync or on a stream); check every byte and the untouched surroundings. */
static void round_trip(cm_device_t *dev, size_t cap, size_t dev_off, size_t host_off, size_t bytes,
                       bool on_stream, unsigned seed) {
    cm_buffer_t *b = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, cap, &b));
    CM_ASSERT_OK(cm_buffer_set(NULL, b, 0, cap, 0xEE));
    unsigned char *src = malloc(bytes + host_off + 1), *dst = malloc(bytes + host_off + 2);
    assert_true(src && dst);
    fill_random(src, bytes + host_off + 1, seed);
    memset(dst, 0x77, bytes + host_off + 2);
    if (on_stream) {
        cm_stream_t *w = fake_wrap(dev, 0);
        CM_ASSERT_OK(cm_buffer_copy_from_host(w, b, dev_off, src + host_off, bytes));
        CM_ASSERT_OK(cm_buffer_copy_to_host(w, b, dev_off, dst + host_off + 1, bytes));
        CM_ASSERT_OK(cm_stream_release(w));
    } else {
        CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, b, dev_off, src + host_off, bytes));
        CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, b, dev_off, dst + host_off + 1, bytes));
    }
    assert_memory_equal(dst + host_off + 1, src + host_off, bytes);
    for (size_t i = 0; i < host_off + 1; ++i) assert_int_equal(dst[i], 0x77);
    assert_int_equal(dst[host_off + 1 + bytes], 0x77);
    /* device bytes outside the range are untouched */
    void *p = NULL;
    CM_ASSERT_OK(cm_buffer_device_ptr(b, &p));
    const unsigned char *d = p;
    for (size_t i = 0; i < dev_off; ++i) assert_int_equal(d[i], 0xEE);
    for (size_t i = dev_off + bytes; i < cap; ++i) assert_int_equal(d[i], 0xEE);
    free(src);
    free(dst);
    CM_ASSERT_OK(cm_buffer_destroy(b));
}

static void test_staged_copies_single_thread(void **state) {
    (void)state;
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    cm_staging_config_t cfg = {4096, 2, 1, 1}; /* tiny chunks: many of them */
    CM_ASSERT_OK(cm_device_staging_configure(dev, &cfg));
    const size_t sizes[] = {1, 7, 4095, 4096, 4097, 3 * 4096 + 17, 65536 + 3};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        unsigned long before = fake.calls[FAKE_MEMCPY_ASYNC];
        round_trip(dev, sizes[i] + 40, 13, i % 5, sizes[i], false, (unsigned)i);
        /* one DMA per chunk in each direction */
        assert_int_equal(fake.calls[FAKE_MEMCPY_ASYNC] - before,
                         2 * cm__staging_chunk_count(sizes[i], 4096));
    }
    assert_int_equal(fake.calls[FAKE_MEMCPY], 0); /* nothing went the direct way */
    cm_memory_report_t r;
    CM_ASSERT_OK(cm_device_memory_report(dev, &r));
    assert_int_equal(r.staging_bytes, 2 * 4096);
    assert_int_equal(fake.calls[FAKE_HOST_ALLOC], 2); /* allocated once, reused */
    CM_ASSERT_OK(cm_device_close(dev));
    EXPECT_CLEAN();
}

static void test_staged_copies_with_threads(void **state) {
    (void)state;
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    /* chunks big enough to be split over 4 threads */
    cm_staging_config_t cfg = {(size_t)1 << 20, 3, 4, 1};
    CM_ASSERT_OK(cm_device_staging_configure(dev, &cfg));
    round_trip(dev, (5 << 20) + 200, 7, 3, (5 << 20) + 123, false, 1);
    round_trip(dev, (3 << 20) + 1, 1, 0, 3 << 20, true, 2);
    round_trip(dev, (1 << 20) + 64, 64, 1, (1 << 20) - 1, false, 3);
    cm_staging_config_t got;
    CM_ASSERT_OK(cm_device_staging_config(dev, &got));
    assert_int_equal(got.chunk_bytes, (size_t)1 << 20);
    assert_int_equal(got.buffers, 3);
    assert_int_equal(got.host_threads, 4);
    /* reconfiguring releases the old staging buffers; the next copy makes new ones */
    cm_staging_config_t c2 = {(size_t)64 << 10, 2, 2, 1};
    CM_ASSERT_OK(cm_device_staging_configure(dev, &c2));
    cm_memory_report_t r;
    CM_ASSERT_OK(cm_device_memory_report(dev, &r));
    assert_int_equal(r.staging_bytes, 0);
    round_trip(dev, 300001, 99, 2, 300000 - 99, true, 4);
    CM_ASSERT_OK(cm_device_memory_report(dev, &r));
    assert_int_equal(r.staging_bytes, 2 * ((size_t)64 << 10));
    CM_ASSERT_OK(cm_device_close(dev));
    EXPECT_CLEAN();
}

static void test_threshold_and_pinned_go_direct(void **state) {
    (void)state;
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    /* default threshold 1 MiB: a small pageable copy goes straight to cudaMemcpy */
    round_trip(dev, 1000, 10, 0, 900, false, 5);
    assert_int_equal(fake.calls[FAKE_MEMCPY], 2);
    assert_int_equal(fake.calls[FAKE_HOST_ALLOC], 0);
    /* at the threshold it is staged (default chunks of 8 MiB: one chunk) */
    round_trip(dev, 1 << 20, 0, 0, 1 << 20, false, 6);
    assert_int_equal(fake.calls[FAKE_MEMCPY], 2);
    assert_int_equal(fake.calls[FAKE_MEMCPY_ASYNC], 2);
    /* pinned memory (a host buffer's data) is copied directly at any size */
    cm_host_buffer_t *h = NULL;
    CM_ASSERT_OK(cm_host_buffer_create(dev, 2 << 20, 0, &h));
    void *hp = NULL;
    CM_ASSERT_OK(cm_host_buffer_data(h, &hp));
    cm_buffer_t *b = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, 2 << 20, &b));
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, b, 0, hp, 2 << 20));
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, b, 0, hp, 2 << 20));
    assert_int_equal(fake.calls[FAKE_MEMCPY], 4);
    assert_int_equal(fake.calls[FAKE_MEMCPY_ASYNC], 2);
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_host_buffer_destroy(h));
    CM_ASSERT_OK(cm_device_close(dev));
    EXPECT_CLEAN();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chunk_plan_small_cases),
        cmocka_unit_test(test_chunk_plan_properties),
        cmocka_unit_test(test_chunk_plan_near_size_max),
        cmocka_unit_test(test_split_range),
        cmocka_unit_test(test_config_resolution),
        cmocka_unit_test_setup_teardown(test_staged_copies_single_thread, setup, teardown),
        cmocka_unit_test_setup_teardown(test_staged_copies_with_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threshold_and_pinned_go_direct, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
