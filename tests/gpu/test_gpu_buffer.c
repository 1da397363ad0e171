/*
 * The memory module on a real GPU: the device object and its reports, round trips of random
 * data through every copy call (pageable staged and direct, pinned, registered, mapped, device
 * to device; synchronous with a NULL stream, or queued on the test's own CUDA streams wrapped
 * with cm_stream_wrap()), set and fill (a NULL-stream fill is complete on return), what
 * cm_buffer_info() / cm_host_buffer_info() tell, stream-ordered buffers on a wrapped stream,
 * destroying a buffer in stream order while a kernel still writes it, the pool's cache and
 * trim, and a real out-of-memory (more than the card has) that produces the report and leaves
 * the process usable. Peer copies: test_gpu_buffer_peer.c.
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/interop.h>
#include <cudamodel/stream.h>

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

/* test_gpu_buffer_kernels.cu */
cudaError_t test_spin_write(unsigned *buf, size_t n, long long cycles, unsigned *done,
                            unsigned blocks, cudaStream_t stream);
cudaError_t test_write_index(unsigned *p, size_t n, cudaStream_t stream);

static void fill_random(unsigned char *p, size_t n, uint32_t seed) {
    uint32_t x = seed * 2654435761u + 12345u;
    for (size_t i = 0; i < n; ++i) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = (unsigned char)(x >> 7);
    }
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void test_device_object(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    int ord = -1;
    CM_ASSERT_OK(cm_device_ordinal(dev, &ord));
    assert_int_equal(ord, 0);
    int pools = 0;
    assert_int_equal(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, 0), cudaSuccess);
    cudaMemPool_t pool = NULL;
    CM_ASSERT_OK(cm_device_memory_pool(dev, &pool));
    assert_true((pool != NULL) == (pools != 0));
    unsigned long long threshold = 0;
    if (pool != NULL) {
        assert_int_equal(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold),
                         cudaSuccess);
        assert_true(threshold == ~0ull); /* keeps memory cached by default */
    }
    cm_memory_report_t r;
    CM_ASSERT_OK(cm_device_memory_report(dev, &r));
    size_t f = 0, t = 0;
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    assert_int_equal(cudaMemGetInfo(&f, &t), cudaSuccess);
    assert_int_equal(r.device_total_bytes, t);
    assert_true(r.device_free_bytes > 0 && r.device_free_bytes <= t);
    assert_int_equal(r.live_buffers + r.live_host_buffers, 0);
    char text[1024];
    CM_ASSERT_OK(cm_memory_report_format(&r, text, sizeof text, NULL));
    print_message("%s", text);
    CM_ASSERT_OK(cm_device_leak_report(dev, text, sizeof text, NULL));
    assert_non_null(strstr(text, "no live buffers"));
    CM_ASSERT_OK(cm_device_close(dev));
}

/* Upload bytes at dev_off, download them again, compare, and check the device bytes around the
 * range kept the fill value. Synchronous (s NULL) or on the library stream s. */
static void round_trip(cm_device_t *dev, size_t bytes, size_t dev_off, size_t host_off,
                       cm_stream_t *s, uint32_t seed) {
    const size_t cap = dev_off + bytes + 9;
    cm_buffer_t *b = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, cap, &b));
    CM_ASSERT_OK(cm_buffer_set(NULL, b, 0, cap, 0xEE));
    unsigned char *src = malloc(bytes + host_off), *dst = malloc(bytes + host_off + 1);
    unsigned char *all = malloc(cap);
    assert_true(src && dst && all);
    fill_random(src, bytes + host_off, seed);
    memset(dst, 0x77, bytes + host_off + 1);
    /* NULL: synchronous; on a stream, a pageable source has been read and a pageable
     * destination is complete when the call returns */
    CM_ASSERT_OK(cm_buffer_copy_from_host(s, b, dev_off, src + host_off, bytes));
    CM_ASSERT_OK(cm_buffer_copy_to_host(s, b, dev_off, dst + host_off, bytes));
    if (memcmp(dst + host_off, src + host_off, bytes) != 0) {
        size_t i = 0;
        while (dst[host_off + i] == src[host_off + i]) ++i;
        fail_msg("%zu bytes at device offset %zu (host offset %zu, %s): first difference at byte "
                 "%zu: 0x%02x instead of 0x%02x", bytes, dev_off, host_off,
                 s != NULL ? "stream" : "sync", i, dst[host_off + i], src[host_off + i]);
    }
    for (size_t i = 0; i < host_off; ++i) assert_int_equal(dst[i], 0x77);
    assert_int_equal(dst[host_off + bytes], 0x77);
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, b, 0, all, cap));
    for (size_t i = 0; i < dev_off; ++i) assert_int_equal(all[i], 0xEE);
    for (size_t i = dev_off + bytes; i < cap; ++i) assert_int_equal(all[i], 0xEE);
    free(src);
    free(dst);
    free(all);
    CM_ASSERT_OK(cm_buffer_destroy(b));
}

static void test_pageable_round_trips_default_staging(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    /* below the 1 MiB threshold: direct; above: staged in 8 MiB chunks */
    const size_t sizes[] = {1, 3, 4095, 4097, MiB - 1, MiB + 1, 24 * MiB + 7, 100 * MiB + 13};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
        round_trip(dev, sizes[i], 5 + i, i % 8, NULL, (uint32_t)i + 1);
    cm_memory_report_t r;
    CM_ASSERT_OK(cm_device_memory_report(dev, &r));
    cm_staging_config_t c;
    CM_ASSERT_OK(cm_device_staging_config(dev, &c));
    assert_int_equal(r.staging_bytes, c.buffers * c.chunk_bytes); /* the staged path was used */
    CM_ASSERT_OK(cm_device_close(dev));
}

static void test_staged_odd_sizes_and_offsets(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    cudaStream_t s = NULL;
    assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    cm_stream_t *w = NULL; /* the test's CUDA stream as a library stream */
    CM_ASSERT_OK(cm_stream_wrap(dev, s, &w));
    const cm_staging_config_t cfgs[] = {
        {64 * KiB, 2, 1, 1},  /* every copy staged, small chunks, one host thread */
        {256 * KiB, 3, 4, 1}, /* chunks split over four host threads */
        {4 * KiB, 8, 2, 1},   /* the smallest chunk, the most buffers */
    };
    const size_t sizes[] = {1, 63, 4097, 64 * KiB - 1, 64 * KiB + 1, 3 * 64 * KiB + 17,
                            MiB + 5, 8 * MiB + 13};
    for (size_t c = 0; c < sizeof cfgs / sizeof cfgs[0]; ++c) {
        CM_ASSERT_OK(cm_device_staging_configure(dev, &cfgs[c]));
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
            round_trip(dev, sizes[i], 1 + 2 * i, (i * 3) % 7, NULL, (uint32_t)(100 * c + i));
            round_trip(dev, sizes[i], 3 + i, (i * 5) % 7, w, (uint32_t)(1000 * c + i));
        }
        cm_memory_report_t r;
        CM_ASSERT_OK(cm_device_memory_report(dev, &r));
        assert_int_equal(r.staging_bytes, cfgs[c].buffers * cfgs[c].chunk_bytes);
    }
    CM_ASSERT_OK(cm_stream_release(w)); /* the wrapper goes before the CUDA stream */
    assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
    CM_ASSERT_OK(cm_device_close(dev));
}

static void test_staged_256_mib_round_trip(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    /* 256 MiB through the default staging, both directions, verified; the bandwidths against
     * raw pageable cudaMemcpy are printed for the log (the ratios are measured in bench/, not
     * asserted here: this test also runs under compute-sanitizer) */
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    const size_t n = 256 * MiB;
    unsigned char *h = malloc(n), *back = malloc(n);
    assert_true(h && back);
    fill_random(h, n, 9);
    cm_buffer_t *b = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, n, &b));
    void *d = NULL;
    CM_ASSERT_OK(cm_buffer_device_ptr(b, &d));
    double best[4] = {1e9, 1e9, 1e9, 1e9};
    for (int rep = 0; rep < 2; ++rep) {
        double t0 = now_s();
        assert_int_equal(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice), cudaSuccess);
        double t1 = now_s();
        CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, b, 0, h, n));
        double t2 = now_s();
        assert_int_equal(cudaMemcpy(back, d, n, cudaMemcpyDeviceToHost), cudaSuccess);
        double t3 = now_s();
        memset(back, 0, n);
        double t4 = now_s();
        CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, b, 0, back, n));
        double t5 = now_s();
        assert_memory_equal(back, h, n);
        double dt[4] = {t1 - t0, t2 - t1, t3 - t2, t5 - t4};
        for (int k = 0; k < 4; ++k)
            if (dt[k] < best[k]) best[k] = dt[k];
    }
    double gb = (double)n / 1e9;
    print_message("256 MiB pageable: H2D raw %.1f GB/s, staged %.1f GB/s; D2H raw %.1f GB/s, "
                  "staged %.1f GB/s\n", gb / best[0], gb / best[1], gb / best[2], gb / best[3]);
    CM_ASSERT_OK(cm_buffer_destroy(b));
    free(h);
    free(back);
    CM_ASSERT_OK(cm_device_close(dev));
}

static void test_pinned_registered_and_mapped(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    const size_t n = MiB + 5;
    cm_buffer_t *b = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, n + 16, &b));
    cm_host_buffer_t *back = NULL;
    CM_ASSERT_OK(cm_host_buffer_create(dev, n + 16, CM_HOST_BUFFER_DEFAULT, &back));
    void *backp = NULL;
    CM_ASSERT_OK(cm_host_buffer_data(back, &backp));
    const unsigned flag_sets[] = {CM_HOST_BUFFER_DEFAULT, CM_HOST_BUFFER_PORTABLE,
                                  CM_HOST_BUFFER_MAPPED, CM_HOST_BUFFER_WRITE_COMBINED,
                                  CM_HOST_BUFFER_PORTABLE | CM_HOST_BUFFER_MAPPED};
    unsigned char *ref = malloc(n);
    assert_non_null(ref);
    for (size_t k = 0; k < sizeof flag_sets / sizeof flag_sets[0]; ++k) {
        cm_host_buffer_t *h = NULL;
        CM_ASSERT_OK(cm_host_buffer_create(dev, n + 3, flag_sets[k], &h));
        void *p = NULL;
        CM_ASSERT_OK(cm_host_buffer_data(h, &p));
        struct cudaPointerAttributes attr;
        assert_int_equal(cudaPointerGetAttributes(&attr, p), cudaSuccess);
        assert_int_equal(attr.type, cudaMemoryTypeHost);
        fill_random(ref, n, (uint32_t)k + 50);
        memcpy((unsigned char *)p + 3, ref, n);
        CM_ASSERT_OK(cm_buffer_copy_from_host_buffer(NULL, b, 7, h, 3, n));
        memset(backp, 0, n + 16);
        CM_ASSERT_OK(cm_buffer_copy_to_host_buffer(NULL, b, 7, back, 1, n));
        assert_memory_equal((unsigned char *)backp + 1, ref, n);
        /* the raw pinned pointer goes the direct way through the pointer-based calls too */
        memset(backp, 0, n + 16);
        CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, b, 0, (unsigned char *)p + 3, n));
        CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, b, 0, backp, n));
        assert_memory_equal(backp, ref, n);
        /* what the handle tells about itself */
        cm_host_buffer_info_t hi;
        memset(&hi, 0x5c, sizeof hi);
        CM_ASSERT_OK(cm_host_buffer_info(h, &hi));
        assert_int_equal(hi.flags, flag_sets[k]);
        assert_int_equal(hi.bytes, n + 3);
        assert_false(hi.registered);
        assert_ptr_equal(hi.data, p);
        assert_ptr_equal(hi.device, dev);
        assert_string_equal(hi.label, "");
        if (!(flag_sets[k] & CM_HOST_BUFFER_MAPPED)) assert_null(hi.device_ptr);
        if (flag_sets[k] & CM_HOST_BUFFER_MAPPED) {
            void *dp = NULL;
            CM_ASSERT_OK(cm_host_buffer_device_ptr(h, &dp));
            assert_ptr_equal(hi.device_ptr, dp);
            assert_int_equal(test_write_index(dp, 1000, 0), cudaSuccess);
            assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
            const unsigned *u = p;
            for (size_t i = 0; i < 1000; ++i) assert_int_equal(u[i], i * 3 + 1);
        }
        CM_ASSERT_OK(cm_host_buffer_destroy(h));
    }
    /* memory the caller owns, registered */
    const size_t rn = 2 * MiB;
    unsigned char *mine = aligned_alloc(4096, rn);
    assert_non_null(mine);
    fill_random(mine, rn, 77);
    memcpy(ref, mine, n);
    cm_host_buffer_t *reg = NULL;
    CM_ASSERT_OK(cm_host_buffer_register(dev, mine, rn, CM_HOST_BUFFER_PORTABLE | CM_HOST_BUFFER_MAPPED,
                                         &reg));
    struct cudaPointerAttributes attr;
    assert_int_equal(cudaPointerGetAttributes(&attr, mine), cudaSuccess);
    assert_int_equal(attr.type, cudaMemoryTypeHost);
    cm_host_buffer_info_t ri;
    CM_ASSERT_OK(cm_host_buffer_info(reg, &ri));
    assert_true(ri.registered);
    assert_ptr_equal(ri.data, mine);
    assert_int_equal(ri.bytes, rn);
    assert_int_equal(ri.flags, CM_HOST_BUFFER_PORTABLE | CM_HOST_BUFFER_MAPPED);
    assert_non_null(ri.device_ptr);
    CM_ASSERT_OK(cm_buffer_copy_from_host_buffer(NULL, b, 0, reg, 0, n));
    memset(mine, 0, rn);
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, b, 0, mine, n));
    assert_memory_equal(mine, ref, n);
    CM_ASSERT_OK(cm_host_buffer_destroy(reg));
    assert_int_equal(cudaPointerGetAttributes(&attr, mine), cudaSuccess);
    assert_int_equal(attr.type, cudaMemoryTypeUnregistered);
    mine[0] = 1; /* still the caller's */
    free(mine);
    free(ref);
    CM_ASSERT_OK(cm_host_buffer_destroy(back));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_device_close(dev));
}

static void test_stream_variants(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    cudaStream_t s = NULL, s2 = NULL;
    assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    assert_int_equal(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking), cudaSuccess);
    /* the test's CUDA streams, wrapped once as library streams */
    cm_stream_t *w = NULL, *w2 = NULL;
    CM_ASSERT_OK(cm_stream_wrap(dev, s, &w));
    CM_ASSERT_OK(cm_stream_wrap(dev, s2, &w2));
    const size_t n = 3 * MiB + 1;
    cm_buffer_t *a = NULL, *b = NULL;
    CM_ASSERT_OK(cm_buffer_create_on_stream(w, dev, n, &a));
    CM_ASSERT_OK(cm_buffer_create_on_stream(w, dev, n + 8, &b));
    cm_buffer_info_t info;
    CM_ASSERT_OK(cm_buffer_info(a, &info));
    assert_true(info.stream_ordered);
    assert_ptr_equal(info.stream, w);
    cudaStream_t got = NULL;
    CM_ASSERT_OK(cm_stream_cuda(info.stream, &got));
    assert_ptr_equal(got, s);
    cm_host_buffer_t *h = NULL, *back = NULL;
    CM_ASSERT_OK(cm_host_buffer_create(dev, n, 0, &h));
    CM_ASSERT_OK(cm_host_buffer_create(dev, n + 8, 0, &back));
    void *hp = NULL, *bp = NULL;
    CM_ASSERT_OK(cm_host_buffer_data(h, &hp));
    CM_ASSERT_OK(cm_host_buffer_data(back, &bp));
    fill_random(hp, n, 31);
    CM_ASSERT_OK(cm_buffer_set(w, b, 0, n + 8, 0xA5));
    CM_ASSERT_OK(cm_buffer_copy_from_host_buffer(w, a, 0, h, 0, n));
    CM_ASSERT_OK(cm_buffer_copy(w, b, 4, a, 0, n));
    uint32_t pat = 0xDEADBEEFu;
    CM_ASSERT_OK(cm_buffer_fill(w, b, n + 4 - ((n + 4) % 4), 4, &pat, 4));
    CM_ASSERT_OK(cm_buffer_copy_to_host_buffer(w, b, 0, back, 0, n + 8));
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    const unsigned char *o = bp;
    for (int i = 0; i < 4; ++i) assert_int_equal(o[i], 0xA5);
    /* the fill overwrote the last 4-aligned word inside the copied range */
    size_t fill_at = n + 4 - ((n + 4) % 4);
    assert_memory_equal(o + 4, hp, fill_at - 4);
    uint32_t word;
    memcpy(&word, o + fill_at, 4);
    assert_true(word == pat);
    /* pinned host memory given by pointer is queued too (cudaMemcpyAsync) */
    CM_ASSERT_OK(cm_buffer_copy_from_host(w, a, 0, bp, n));
    CM_ASSERT_OK(cm_buffer_copy_to_host(w, a, 0, hp, n));
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    assert_memory_equal(hp, bp, n);

    /* destroy a's memory in the order of another stream: after s's work, through an event */
    cudaEvent_t ev = NULL;
    assert_int_equal(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), cudaSuccess);
    assert_int_equal(cudaEventRecord(ev, s), cudaSuccess);
    assert_int_equal(cudaStreamWaitEvent(s2, ev, 0), cudaSuccess);
    CM_ASSERT_OK(cm_buffer_destroy_on_stream(w2, a));
    CM_ASSERT_OK(cm_buffer_destroy(b)); /* on s, the stream it was created on */
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_int_equal(cudaEventDestroy(ev), cudaSuccess);
    CM_ASSERT_OK(cm_host_buffer_destroy(h));
    CM_ASSERT_OK(cm_host_buffer_destroy(back));
    /* the wrappers go before the CUDA streams */
    CM_ASSERT_OK(cm_stream_release(w));
    CM_ASSERT_OK(cm_stream_release(w2));
    assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
    assert_int_equal(cudaStreamDestroy(s2), cudaSuccess);
    CM_ASSERT_OK(cm_device_close(dev));
}

static void test_set_and_fill(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    const size_t n = 1 << 16;
    cm_buffer_t *b = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, n, &b));
    unsigned char *ref = malloc(n), *got = malloc(n);
    assert_true(ref && got);
    CM_ASSERT_OK(cm_buffer_set(NULL, b, 0, n, 0x11));
    memset(ref, 0x11, n);
    CM_ASSERT_OK(cm_buffer_set(NULL, b, 3, 5, 0xFF));
    memset(ref + 3, 0xFF, 5);
    float f = -3.25f;
    CM_ASSERT_OK(cm_buffer_fill(NULL, b, 8, 4000, &f, sizeof f));
    for (size_t i = 8; i < 4008; i += 4) memcpy(ref + i, &f, 4);
    uint16_t hw = 0x1234;
    CM_ASSERT_OK(cm_buffer_fill(NULL, b, 5000, 1002, &hw, 2));
    for (size_t i = 5000; i < 6002; i += 2) memcpy(ref + i, &hw, 2);
    uint64_t q = 0x0102030405060708ull;
    CM_ASSERT_OK(cm_buffer_fill(NULL, b, 8192, n - 8192 - 64, &q, 8));
    for (size_t i = 8192; i < n - 64; i += 8) memcpy(ref + i, &q, 8);
    unsigned char one = 0x42;
    CM_ASSERT_OK(cm_buffer_fill(NULL, b, n - 64, 63, &one, 1));
    memset(ref + n - 64, 0x42, 63);
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, b, 0, got, n));
    assert_memory_equal(got, ref, n);
    free(ref);
    free(got);
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_device_close(dev));
}

static void test_device_copies_and_interop(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    const size_t n = MiB + 3;
    unsigned char *src = malloc(n), *out = malloc(n);
    assert_true(src && out);
    fill_random(src, n, 5);
    cm_buffer_t *a = NULL, *b = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, n, &a));
    CM_ASSERT_OK(cm_buffer_create(dev, n, &b));
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, a, 0, src, n));
    CM_ASSERT_OK(cm_buffer_copy(NULL, b, 1, a, 2, n - 5));
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, b, 1, out, n - 5));
    assert_memory_equal(out, src + 2, n - 5);
    /* within one buffer, without overlap */
    CM_ASSERT_OK(cm_buffer_copy(NULL, a, 0, a, n / 2 + 1, n / 2));
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, a, 0, out, n / 2));
    assert_memory_equal(out, src + n / 2 + 1, n / 2);
    assert_int_equal(cm_buffer_copy(NULL, a, 0, a, 10, 100), CM_ERROR_INVALID_ARGUMENT);
    /* the raw pointer works with the application's own CUDA calls */
    void *d = NULL;
    CM_ASSERT_OK(cm_buffer_device_ptr(b, &d));
    struct cudaPointerAttributes attr;
    assert_int_equal(cudaPointerGetAttributes(&attr, d), cudaSuccess);
    assert_int_equal(attr.type, cudaMemoryTypeDevice);
    assert_int_equal(attr.device, 0);
    assert_int_equal(cudaMemcpy(out, (unsigned char *)d + 1, n - 5, cudaMemcpyDeviceToHost), cudaSuccess);
    assert_memory_equal(out, src + 2, n - 5);
    /* a device pointer where host memory is expected is refused before any copy */
    assert_int_equal(cm_buffer_copy_from_host(NULL, a, 0, d, 16), CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cm_last_error()->message, "wrong direction"));
    free(src);
    free(out);
    CM_ASSERT_OK(cm_buffer_destroy(a));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_device_close(dev));
}

static void test_accounting_on_gpu(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    cm_buffer_t *z = NULL, *b = NULL;
    cm_host_buffer_t *h = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, 0, &z));
    CM_ASSERT_OK(cm_buffer_create_labeled(dev, 3 * MiB, "weights", &b));
    CM_ASSERT_OK(cm_host_buffer_create(dev, 0, 0, &h));
    /* what each handle tells about itself: size, device, stream, address, label */
    cm_buffer_info_t info;
    memset(&info, 0x5c, sizeof info);
    CM_ASSERT_OK(cm_buffer_info(z, &info));
    assert_int_equal(info.bytes, 0);
    assert_null(info.device_ptr); /* an empty buffer holds no memory */
    assert_false(info.stream_ordered);
    assert_null(info.stream);
    assert_string_equal(info.label, "");
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, z, 0, NULL, 0));
    CM_ASSERT_OK(cm_buffer_info(b, &info));
    assert_ptr_equal(info.device, dev);
    assert_int_equal(info.ordinal, 0);
    assert_int_equal(info.bytes, 3 * MiB);
    assert_false(info.stream_ordered);
    assert_null(info.stream);
    assert_string_equal(info.label, "weights");
    void *bp = NULL;
    CM_ASSERT_OK(cm_buffer_device_ptr(b, &bp));
    assert_non_null(bp);
    assert_ptr_equal(info.device_ptr, bp);
    assert_int_equal(cm_buffer_info(b, NULL), CM_ERROR_INVALID_ARGUMENT);
    cm_host_buffer_info_t hi;
    CM_ASSERT_OK(cm_host_buffer_info(h, &hi));
    assert_int_equal(hi.bytes, 0);
    assert_null(hi.data);
    assert_ptr_equal(hi.device, dev);
    assert_int_equal(cm_host_buffer_info(h, NULL), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cm_device_close(dev), CM_ERROR_BUSY);
    assert_non_null(strstr(cm_last_error()->message, "3 buffers are still alive"));
    assert_non_null(strstr(cm_last_error()->message, "\"weights\""));
    char report[1024];
    CM_ASSERT_OK(cm_device_leak_report(dev, report, sizeof report, NULL));
    print_message("%s", report);
    CM_ASSERT_OK(cm_buffer_destroy(z));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_host_buffer_destroy(h));
    /* destroyed handles are refused, the output left alone */
    info.bytes = 12345;
    assert_int_equal(cm_buffer_info(b, &info), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(info.bytes, 12345);
    assert_int_equal(cm_host_buffer_info(h, &hi), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cm_buffer_destroy(b), CM_ERROR_INVALID_ARGUMENT); /* double destroy */
    CM_ASSERT_OK(cm_device_close(dev));
}

/* Stream-ordered destroy while a kernel still writes the buffer: the destroy returns at once,
 * the memory is released only after the kernel, and memory allocated after it on the same
 * stream is not touched by the kernel. Run under compute-sanitizer by the GPU check. */
static void test_destroy_while_kernel_runs(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    cudaStream_t s = NULL;
    assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    int clock_khz = 0, sms = 0;
    assert_int_equal(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0), cudaSuccess);
    assert_int_equal(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
    const long long cycles = (long long)clock_khz * 300; /* about 300 ms */
    const size_t words = MiB / 4;
    cm_stream_t *w = NULL; /* s as a library stream */
    CM_ASSERT_OK(cm_stream_wrap(dev, s, &w));

    cm_buffer_t *done = NULL, *b = NULL, *after = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, sizeof(unsigned), &done));
    CM_ASSERT_OK(cm_buffer_set(NULL, done, 0, sizeof(unsigned), 0));
    void *done_p = NULL, *p = NULL;
    CM_ASSERT_OK(cm_buffer_device_ptr(done, &done_p));
    CM_ASSERT_OK(cm_buffer_create_on_stream(w, dev, words * 4, &b));
    CM_ASSERT_OK(cm_buffer_device_ptr(b, &p));
    assert_int_equal(test_spin_write(p, words, cycles, done_p, (unsigned)sms, s), cudaSuccess);
    double t0 = now_s();
    CM_ASSERT_OK(cm_buffer_destroy(b)); /* stream-ordered: queued behind the kernel */
    double dt = now_s() - t0;
    assert_int_equal(cudaStreamQuery(s), cudaErrorNotReady); /* the kernel still runs */
    (void)cudaGetLastError(); /* "not ready" is no error; make sure it is not kept as one */
    assert_true(dt < 0.1);                                 /* and destroy did not wait for it */
    cm_memory_report_t r;
    CM_ASSERT_OK(cm_device_memory_report(dev, &r));
    assert_int_equal(r.live_buffers, 1); /* only `done` */
    /* memory allocated after the destroy on the same stream is the kernel's no more */
    CM_ASSERT_OK(cm_buffer_create_on_stream(w, dev, words * 4, &after));
    CM_ASSERT_OK(cm_buffer_set(w, after, 0, words * 4, 0x5A));
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    unsigned finished = 0;
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, done, 0, &finished, sizeof finished));
    assert_int_equal(finished, (unsigned)sms); /* every block ran to its end */
    unsigned char *check = malloc(words * 4);
    assert_non_null(check);
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, after, 0, check, words * 4));
    for (size_t i = 0; i < words * 4; ++i) assert_int_equal(check[i], 0x5A);
    free(check);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    CM_ASSERT_OK(cm_buffer_destroy(after));
    CM_ASSERT_OK(cm_buffer_destroy(done));
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    CM_ASSERT_OK(cm_stream_release(w)); /* the wrapper goes before the CUDA stream */
    assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
    CM_ASSERT_OK(cm_device_close(dev));
}

static void test_pool_cache_and_trim(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    cudaMemPool_t pool = NULL;
    CM_ASSERT_OK(cm_device_memory_pool(dev, &pool));
    assert_non_null(pool); /* an H200 has memory pools */
    cudaStream_t s = NULL;
    assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    cm_stream_t *w = NULL; /* s as a library stream */
    CM_ASSERT_OK(cm_stream_wrap(dev, s, &w));
    cm_buffer_t *b = NULL;
    CM_ASSERT_OK(cm_buffer_create_on_stream(w, dev, 64 * MiB, &b));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    cm_memory_report_t r;
    CM_ASSERT_OK(cm_device_memory_report(dev, &r));
    assert_true(r.pool_reserved_bytes >= 64 * MiB); /* cached: the default keeps it */
    assert_int_equal(r.pool_used_bytes, 0);
    assert_true(r.pool_peak_reserved_bytes >= 64 * MiB);
    CM_ASSERT_OK(cm_device_pool_trim(dev, 0));
    CM_ASSERT_OK(cm_device_memory_report(dev, &r));
    assert_int_equal(r.pool_reserved_bytes, 0);
    /* threshold 0: memory goes back at the next synchronization */
    CM_ASSERT_OK(cm_device_pool_set_release_threshold(dev, 0));
    CM_ASSERT_OK(cm_buffer_create_on_stream(w, dev, 32 * MiB, &b));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    CM_ASSERT_OK(cm_device_memory_report(dev, &r));
    assert_int_equal(r.pool_reserved_bytes, 0);
    assert_int_equal(r.pool_release_threshold, 0);
    CM_ASSERT_OK(cm_stream_release(w)); /* the wrapper goes before the CUDA stream */
    assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
    CM_ASSERT_OK(cm_device_close(dev));
}

/* A stream-ordered buffer on a CUDA stream of the test's own, wrapped as a library stream:
 * created on it, copied on it (host to device, device to device, device to host) and destroyed
 * in its order; cm_buffer_info() names the wrapper as the buffer's stream. */
static void test_stream_ordered_buffer_on_wrapped_stream(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    cudaStream_t cs = NULL;
    assert_int_equal(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking), cudaSuccess);
    cm_stream_t *w = NULL;
    CM_ASSERT_OK(cm_stream_wrap(dev, cs, &w));
    const size_t n = 2 * MiB + 3;
    cm_buffer_t *b = NULL, *b2 = NULL;
    CM_ASSERT_OK(cm_buffer_create_on_stream(w, dev, n, &b));
    CM_ASSERT_OK(cm_buffer_create_on_stream(w, dev, n, &b2));

    /* the buffer's own description: every field */
    cm_buffer_info_t info;
    memset(&info, 0x5c, sizeof info);
    CM_ASSERT_OK(cm_buffer_info(b, &info));
    assert_int_equal(info.bytes, n);
    assert_ptr_equal(info.device, dev);
    assert_int_equal(info.ordinal, 0);
    assert_true(info.stream_ordered);
    assert_ptr_equal(info.stream, w); /* the wrapper, as it was passed */
    assert_string_equal(info.label, "");
    void *p = NULL;
    CM_ASSERT_OK(cm_buffer_device_ptr(b, &p));
    assert_non_null(p);
    assert_ptr_equal(info.device_ptr, p);
    cudaStream_t got = NULL;
    CM_ASSERT_OK(cm_stream_cuda(info.stream, &got));
    assert_ptr_equal(got, cs);
    struct cudaPointerAttributes attr;
    assert_int_equal(cudaPointerGetAttributes(&attr, p), cudaSuccess);
    assert_int_equal(attr.type, cudaMemoryTypeDevice);
    assert_int_equal(attr.device, 0);

    /* everything on w, in its order: up, across, down (a pageable destination is complete on
     * return) */
    unsigned char *src = malloc(n), *out = malloc(n);
    assert_true(src && out);
    fill_random(src, n, 41);
    memset(out, 0, n);
    CM_ASSERT_OK(cm_buffer_copy_from_host(w, b, 0, src, n));
    CM_ASSERT_OK(cm_buffer_copy(w, b2, 0, b, 0, n));
    CM_ASSERT_OK(cm_buffer_copy_to_host(w, b2, 0, out, n));
    assert_memory_equal(out, src, n);

    /* destroyed in w's order: the handles go at once, the memory after w's work */
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_buffer_destroy_on_stream(w, b2));
    assert_int_equal(cm_buffer_info(b, &info), CM_ERROR_INVALID_ARGUMENT);
    cm_memory_report_t r;
    CM_ASSERT_OK(cm_device_memory_report(dev, &r));
    assert_int_equal(r.live_buffers, 0);
    CM_ASSERT_OK(cm_stream_synchronize(w));
    CM_ASSERT_OK(cm_device_memory_report(dev, &r));
    assert_int_equal(r.pool_used_bytes, 0);

    /* the wrapper goes before the CUDA stream, which stays the test's */
    CM_ASSERT_OK(cm_stream_release(w));
    assert_int_equal(cudaStreamSynchronize(cs), cudaSuccess);
    assert_int_equal(cudaStreamDestroy(cs), cudaSuccess);
    free(src);
    free(out);
    CM_ASSERT_OK(cm_device_close(dev));
}

/* NULL stream = synchronous: a fill queued behind a ~50 ms kernel on the legacy default stream
 * returns only once it is done, and a non-blocking stream (which does not wait for the legacy
 * one) reads the kernel's counter and the pattern right after, with no fence in between. */
static void test_sync_fill_complete_on_return(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    int clock_khz = 0;
    assert_int_equal(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0), cudaSuccess);
    const long long cycles = (long long)clock_khz * 50; /* about 50 ms */
    const size_t n = 16 * MiB;
    cm_buffer_t *spin = NULL, *done = NULL, *b = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, 1024 * sizeof(unsigned), &spin));
    CM_ASSERT_OK(cm_buffer_create(dev, sizeof(unsigned), &done));
    CM_ASSERT_OK(cm_buffer_create(dev, n, &b));
    CM_ASSERT_OK(cm_buffer_set(NULL, done, 0, sizeof(unsigned), 0));
    CM_ASSERT_OK(cm_buffer_set(NULL, b, 0, n, 0));
    void *spin_p = NULL, *done_p = NULL;
    CM_ASSERT_OK(cm_buffer_device_ptr(spin, &spin_p));
    CM_ASSERT_OK(cm_buffer_device_ptr(done, &done_p));
    cm_host_buffer_t *hb = NULL;
    CM_ASSERT_OK(cm_host_buffer_create(dev, n, CM_HOST_BUFFER_DEFAULT, &hb));
    void *hp = NULL;
    CM_ASSERT_OK(cm_host_buffer_data(hb, &hp));
    memset(hp, 0, n);
    cm_stream_t *s = NULL; /* a pooled stream: non-blocking */
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));

    /* one block spins ~50 ms on the legacy default stream (0); the fill queues behind it */
    assert_int_equal(test_spin_write(spin_p, 1024, cycles, done_p, 1, 0), cudaSuccess);
    const uint32_t pat = 0xC0FFEE11u;
    const double t0 = now_s();
    CM_ASSERT_OK(cm_buffer_fill(NULL, b, 0, n, &pat, sizeof pat));
    const double dt = now_s() - t0;
    /* complete on return: the legacy stream is idle and the fill waited for the kernel */
    assert_int_equal(cudaStreamQuery(0), cudaSuccess);
    print_message("synchronous fill behind a ~50 ms kernel returned after %.1f ms\n", dt * 1e3);
    assert_true(dt >= 0.02);
    /* read on the non-blocking stream with no synchronisation in between */
    unsigned finished = 0;
    CM_ASSERT_OK(cm_buffer_copy_to_host(s, done, 0, &finished, sizeof finished));
    assert_int_equal(finished, 1); /* the kernel ran to its end */
    CM_ASSERT_OK(cm_buffer_copy_to_host_buffer(s, b, 0, hb, 0, n));
    CM_ASSERT_OK(cm_stream_synchronize(s));
    const uint32_t *words = hp;
    for (size_t i = 0; i < n / 4; ++i)
        if (words[i] != pat) fail_msg("word %zu is 0x%08x, not the pattern", i, words[i]);
    assert_int_equal(cudaGetLastError(), cudaSuccess);

    CM_ASSERT_OK(cm_stream_release(s));
    CM_ASSERT_OK(cm_host_buffer_destroy(hb));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_buffer_destroy(done));
    CM_ASSERT_OK(cm_buffer_destroy(spin));
    CM_ASSERT_OK(cm_device_close(dev));
}

/* More than the card has: the report, then a fully usable process. */
static void test_real_out_of_memory(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    cm_device_limits_t lim;
    CM_ASSERT_OK(cm_device_get_limits(0, &lim));
    cm_buffer_t *hold = NULL;
    CM_ASSERT_OK(cm_buffer_create_labeled(dev, 512 * MiB, "held", &hold));
    const size_t ask = lim.total_global_mem + ((size_t)1 << 30);
    cm_buffer_t *b = NULL;
    CM_ASSERT_STATUS(cm_buffer_create(dev, ask, &b), CM_ERROR_DEVICE_OUT_OF_MEMORY);
    assert_null(b);
    const cm_error_t *e = cm_last_error();
    char expect[96];
    snprintf(expect, sizeof expect, "(%zu bytes) on device 0", ask);
    assert_non_null(strstr(e->message, expect));
    assert_non_null(strstr(e->message, "in total"));
    assert_non_null(strstr(e->message, "this process holds 512.00 MiB through libcudamodel"));
    /* more than the free memory: no probe (it would hold all the free memory for a moment) */
    assert_null(strstr(e->message, "the largest allocation"));
    assert_non_null(strstr(e->hint, "larger than the whole GPU"));
    /* refused without asking CUDA: the driver would hold most of the free memory for a moment
     * before it refused, and other processes' allocations would fail meanwhile */
    assert_non_null(strstr(e->message, "not attempted"));
    assert_non_null(strstr(e->call, "not called: more than the device has"));
    assert_int_equal(e->cuda_error, cudaErrorMemoryAllocation);
    assert_false(e->context_lost);
    char report[2048];
    cm_error_format(NULL, report, sizeof report);
    print_message("%s\n", report);

    cudaStream_t s = NULL;
    assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    cm_stream_t *w = NULL; /* s as a library stream */
    CM_ASSERT_OK(cm_stream_wrap(dev, s, &w));
    CM_ASSERT_STATUS(cm_buffer_create_on_stream(w, dev, ask, &b), CM_ERROR_DEVICE_OUT_OF_MEMORY);
    assert_non_null(strstr(cm_last_error()->message, "for a stream-ordered buffer"));

    /* the process is fully usable: no stale error, allocations and copies work */
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    CM_ASSERT_OK(cm_check_context(0));
    CM_ASSERT_OK(cm_buffer_create(dev, 256 * MiB, &b));
    cm_buffer_t *bs = NULL;
    CM_ASSERT_OK(cm_buffer_create_on_stream(w, dev, 64 * MiB, &bs));
    /* the stream-ordered allocation is usable on other streams once its stream got there */
    CM_ASSERT_OK(cm_stream_synchronize(w));
    unsigned char *h = malloc(MiB), *o = malloc(MiB);
    assert_true(h && o);
    fill_random(h, MiB, 3);
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, b, 255 * MiB, h, MiB));
    CM_ASSERT_OK(cm_buffer_copy(NULL, bs, 0, b, 255 * MiB, MiB));
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, bs, 0, o, MiB));
    assert_memory_equal(o, h, MiB);
    free(h);
    free(o);
    CM_ASSERT_OK(cm_buffer_destroy(bs));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_buffer_destroy(hold));
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    CM_ASSERT_OK(cm_stream_release(w)); /* the wrapper goes before the CUDA stream */
    assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
    CM_ASSERT_OK(cm_device_close(dev));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_object),
        cmocka_unit_test(test_pageable_round_trips_default_staging),
        cmocka_unit_test(test_staged_odd_sizes_and_offsets),
        cmocka_unit_test(test_staged_256_mib_round_trip),
        cmocka_unit_test(test_pinned_registered_and_mapped),
        cmocka_unit_test(test_stream_variants),
        cmocka_unit_test(test_set_and_fill),
        cmocka_unit_test(test_sync_fill_complete_on_return),
        cmocka_unit_test(test_device_copies_and_interop),
        cmocka_unit_test(test_accounting_on_gpu),
        cmocka_unit_test(test_destroy_while_kernel_runs),
        cmocka_unit_test(test_pool_cache_and_trim),
        cmocka_unit_test(test_stream_ordered_buffer_on_wrapped_stream),
        cmocka_unit_test(test_real_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
