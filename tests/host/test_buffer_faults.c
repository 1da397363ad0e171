/*
 * FAULT INJECTION: every CUDA call of the memory module is made to fail in turn (through the
 * internal hooks, on a simulated device: test_buffer_fake.h), and each path must return the
 * right status with a detail naming the call, leave the out-parameters alone, and leak nothing:
 * no simulated device memory, pinned memory, event or pool stays behind, and no handle is left
 * counted in the device object.
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

#include "memory_internal.h"
#include "test_buffer_fake.h"

#define MiB ((size_t)1 << 20)

static int setup(void **state) {
    (void)state;
    fake_install(2, 64 * MiB);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    int left = fake_outstanding(), violations = fake.violations;
    fake_uninstall();
    return (left || violations) ? -1 : 0;
}

static size_t live_count(cm_device_t *dev) {
    cm_memory_report_t r;
    CM_ASSERT_OK(cm_device_memory_report(dev, &r));
    return r.live_buffers + r.live_host_buffers;
}

static void expect_call(const char *text) {
    if (strstr(cm_last_error()->call, text) == NULL) {
        print_error("detail call \"%s\" does not name \"%s\"\n", cm_last_error()->call, text);
        fail();
    }
}

static void test_open_faults(void **state) {
    (void)state;
    static const struct {
        enum fake_call call;
        cudaError_t err;
        cm_status_t status;
        const char *names;
    } cases[] = {
        {FAKE_GET_DEVICE_COUNT, cudaErrorNoDevice, CM_ERROR_NO_DEVICE, "cudaGetDeviceCount"},
        {FAKE_PROPS, cudaErrorUnknown, CM_ERROR_CUDA, "cudaGetDeviceProperties(0)"},
        {FAKE_ATTR, cudaErrorUnknown, CM_ERROR_CUDA, "cudaDevAttrMemoryPoolsSupported"},
        {FAKE_POOL_CREATE, cudaErrorNotSupported, CM_ERROR_NOT_SUPPORTED, "cudaMemPoolCreate"},
        {FAKE_POOL_SET, cudaErrorUnknown, CM_ERROR_CUDA, "cudaMemPoolSetAttribute"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        cm_device_t *dev = (cm_device_t *)(uintptr_t)0x1;
        fake_fail(cases[i].call, cases[i].err, 1);
        assert_int_equal(cm_device_open(0, &dev), cases[i].status);
        expect_call(cases[i].names);
        assert_ptr_equal(dev, (cm_device_t *)(uintptr_t)0x1);
        EXPECT_CLEAN(); /* the pool of a half-opened device was destroyed */
        fake_fail_clear();
    }
    /* making the device current fails (the caller is on device 1) */
    fake.current = 1;
    cm_device_t *dev = NULL;
    fake_fail(FAKE_SET_DEVICE, cudaErrorDevicesUnavailable, 1);
    assert_int_not_equal(cm_device_open(0, &dev), CM_OK);
    expect_call("cuCtxPushCurrent(primary context of device 0)");
    assert_null(dev);
    EXPECT_CLEAN();
}

static void test_create_destroy_faults(void **state) {
    (void)state;
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    cm_stream_t *w = fake_wrap(dev, 0);
    cm_buffer_t *b = NULL;
    fake_fail(FAKE_MALLOC, cudaErrorUnknown, 1);
    assert_int_equal(cm_buffer_create(dev, 100, &b), CM_ERROR_CUDA);
    expect_call("cudaMalloc(100 bytes) in cm_buffer_create_at");
    fake_fail(FAKE_MALLOC_ASYNC, cudaErrorUnknown, 1);
    assert_int_equal(cm_buffer_create_on_stream(w, dev, 100, &b), CM_ERROR_CUDA);
    expect_call("cudaMallocFromPoolAsync(100 bytes)");
    /* a passing out-of-memory: the retry succeeds and nothing is reported */
    unsigned long base = fake.calls[FAKE_MALLOC];
    fake_fail(FAKE_MALLOC, cudaErrorMemoryAllocation, 1);
    CM_ASSERT_OK(cm_buffer_create(dev, 100, &b));
    assert_int_equal(fake.calls[FAKE_MALLOC] - base, 2);
    CM_ASSERT_OK(cm_buffer_destroy(b));
    b = NULL;
    /* out of memory first (for real: 50 MiB where 40 of the device's 64 MiB are held
     * elsewhere), then another error on the retry: that error is reported, not an
     * out-of-memory report */
    fake.external = 40 * MiB;
    fake_fail(FAKE_MALLOC_ASYNC, cudaErrorUnknown, 2);
    assert_int_equal(cm_buffer_create_on_stream(w, dev, 50 * MiB, &b), CM_ERROR_CUDA);
    expect_call("cudaMallocFromPoolAsync(52428800 bytes)");
    assert_null(strstr(cm_last_error()->message, "out of memory"));
    fake.external = 0;
    /* the driver is asked about a CUDA stream once, when it is wrapped: a failed context query
     * falls back to the device query, whose failure names the stream */
    cm_stream_t *bad = NULL;
    fake_fail(FAKE_STREAM_CTX, cudaErrorInvalidResourceHandle, 1);
    fake_fail(FAKE_STREAM_DEVICE, cudaErrorInvalidResourceHandle, 1);
    assert_int_equal(cm_stream_wrap(dev, FAKE_STREAM(0), &bad), CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cm_last_error()->message, "not a valid CUDA stream"));
    assert_null(bad);
    fake.current = 1;
    fake_fail(FAKE_SET_DEVICE, cudaErrorUnknown, 1);
    assert_int_equal(cm_buffer_create(dev, 100, &b), CM_ERROR_CUDA);
    expect_call("cuCtxPushCurrent(primary context of device 0)");
    assert_int_equal(fake.current, 1);
    assert_null(b);
    assert_int_equal(live_count(dev), 0);

    /* a free that fails: the status says so, the handle is released all the same */
    CM_ASSERT_OK(cm_buffer_create(dev, 100, &b));
    void *p = NULL;
    CM_ASSERT_OK(cm_buffer_device_ptr(b, &p));
    fake_fail(FAKE_FREE, cudaErrorUnknown, 1);
    assert_int_equal(cm_buffer_destroy(b), CM_ERROR_CUDA);
    expect_call("cudaFree(buffer) in cm_buffer_destroy");
    assert_int_equal(live_count(dev), 0);
    assert_int_equal(cm_buffer_destroy(b), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(fake_free(p), cudaSuccess); /* what the refused free left in the simulation */

    /* a stream-ordered free that fails falls back to cudaFree: nothing leaks */
    CM_ASSERT_OK(cm_buffer_create_on_stream(w, dev, 100, &b));
    fake_fail(FAKE_FREE_ASYNC, cudaErrorInvalidValue, 1);
    unsigned long frees = fake.calls[FAKE_FREE];
    assert_int_equal(cm_buffer_destroy(b), CM_ERROR_INVALID_ARGUMENT);
    expect_call("cudaFreeAsync(buffer, stream)");
    assert_int_equal(fake.calls[FAKE_FREE], frees + 1);
    assert_int_equal(live_count(dev), 0);

    CM_ASSERT_OK(cm_stream_release(w));
    CM_ASSERT_OK(cm_device_close(dev));
    EXPECT_CLEAN();
}

static void test_host_buffer_faults(void **state) {
    (void)state;
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    cm_host_buffer_t *h = NULL;
    fake_fail(FAKE_HOST_ALLOC, cudaErrorUnknown, 1);
    assert_int_equal(cm_host_buffer_create(dev, 100, 0, &h), CM_ERROR_CUDA);
    expect_call("cudaHostAlloc(100 bytes)");
    fake_fail(FAKE_HOST_DEVPTR, cudaErrorUnknown, 1);
    assert_int_equal(cm_host_buffer_create(dev, 100, CM_HOST_BUFFER_MAPPED, &h), CM_ERROR_CUDA);
    expect_call("cudaHostGetDevicePointer");
    unsigned char mem[128];
    fake_fail(FAKE_HOST_REGISTER, cudaErrorNotSupported, 1);
    assert_int_equal(cm_host_buffer_register(dev, mem, sizeof mem, 0, &h), CM_ERROR_NOT_SUPPORTED);
    fake_fail(FAKE_HOST_DEVPTR, cudaErrorUnknown, 1);
    assert_int_equal(cm_host_buffer_register(dev, mem, sizeof mem, CM_HOST_BUFFER_MAPPED, &h),
                     CM_ERROR_CUDA);
    assert_null(h);
    assert_int_equal(live_count(dev), 0);
    /* the failed registrations were undone: registering now works */
    CM_ASSERT_OK(cm_host_buffer_register(dev, mem, sizeof mem, 0, &h));
    fake_fail(FAKE_HOST_UNREGISTER, cudaErrorHostMemoryNotRegistered, 1);
    assert_int_equal(cm_host_buffer_destroy(h), CM_ERROR_INVALID_ARGUMENT);
    expect_call("cudaHostUnregister");
    assert_int_equal(fake_host_unregister(mem), cudaSuccess);
    CM_ASSERT_OK(cm_host_buffer_create(dev, 100, 0, &h));
    void *p = NULL;
    CM_ASSERT_OK(cm_host_buffer_data(h, &p));
    fake_fail(FAKE_FREE_HOST, cudaErrorUnknown, 1);
    assert_int_equal(cm_host_buffer_destroy(h), CM_ERROR_CUDA);
    expect_call("cudaFreeHost");
    assert_int_equal(live_count(dev), 0);
    assert_int_equal(fake_free_host(p), cudaSuccess);
    CM_ASSERT_OK(cm_device_close(dev));
    EXPECT_CLEAN();
}

static void test_copy_faults(void **state) {
    (void)state;
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    cm_buffer_t *b = NULL;
    cm_host_buffer_t *h = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, 4096, &b));
    CM_ASSERT_OK(cm_host_buffer_create(dev, 4096, 0, &h));
    cm_stream_t *w = fake_wrap(dev, 0);
    unsigned char host[4096];
    memset(host, 1, sizeof host);

    fake_fail(FAKE_PTR_ATTR, cudaErrorUnknown, 1);
    assert_int_equal(cm_buffer_copy_from_host(NULL, b, 0, host, 16), CM_ERROR_CUDA);
    expect_call("cudaPointerGetAttributes(src)");
    /* cudaErrorInvalidValue too is the failure it is (no runtime the library runs on says so
     * of pageable memory): nothing is copied, the buffer keeps its bytes */
    unsigned char before[16], after[16];
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, b, 0, host, 16)); /* known bytes first */
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, b, 0, before, sizeof before));
    memset(host, 7, 16);
    fake_fail(FAKE_PTR_ATTR, cudaErrorInvalidValue, 1);
    assert_int_equal(cm_buffer_copy_from_host(NULL, b, 0, host, 16), CM_ERROR_INVALID_ARGUMENT);
    expect_call("cudaPointerGetAttributes(src)");
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, b, 0, after, sizeof after));
    assert_memory_equal(before, after, sizeof before);
    memset(host, 1, sizeof host);
    fake_fail(FAKE_MEMCPY, cudaErrorUnknown, 1);
    assert_int_equal(cm_buffer_copy_to_host(NULL, b, 0, host, 16), CM_ERROR_CUDA);
    expect_call("cudaMemcpy(16 bytes, device to host)");
    fake_fail(FAKE_MEMCPY, cudaErrorUnknown, 1);
    assert_int_equal(cm_buffer_copy_from_host_buffer(NULL, b, 0, h, 0, 16), CM_ERROR_CUDA);
    expect_call("cudaMemcpy(16 bytes, host to device, pinned)");
    fake_fail(FAKE_MEMCPY_ASYNC, cudaErrorUnknown, 1);
    assert_int_equal(cm_buffer_copy_to_host_buffer(w, b, 0, h, 0, 16), CM_ERROR_CUDA);
    expect_call("cudaMemcpyAsync(16 bytes, device to host, pinned)");
    fake_fail(FAKE_STREAM_SYNC, cudaErrorUnknown, 1);
    assert_int_equal(cm_buffer_copy_to_host(w, b, 0, host, 16), CM_ERROR_CUDA);
    expect_call("cudaStreamSynchronize(stream)");
    fake_fail(FAKE_MEMSET_ASYNC, cudaErrorUnknown, 1);
    assert_int_equal(cm_buffer_set(NULL, b, 0, 16, 0), CM_ERROR_CUDA);
    expect_call("cudaMemsetAsync(16 bytes)");
    fake_fail(FAKE_STREAM_SYNC, cudaErrorUnknown, 1);
    assert_int_equal(cm_buffer_set(NULL, b, 0, 16, 0), CM_ERROR_CUDA);
    expect_call("cudaStreamSynchronize(0) after the fill");
    float f = 1.0f;
    fake_fail(FAKE_FILL, cudaErrorNoKernelImageForDevice, 1);
    assert_int_equal(cm_buffer_fill(NULL, b, 0, 16, &f, 4), CM_ERROR_NO_KERNEL_IMAGE);
    expect_call("fill kernel(16 bytes)");
    CM_ASSERT_OK(cm_stream_release(w));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_host_buffer_destroy(h));
    CM_ASSERT_OK(cm_device_close(dev));
    EXPECT_CLEAN();
}

static void test_staging_faults(void **state) {
    (void)state;
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    cm_staging_config_t cfg = {4096, 3, 1, 1};
    CM_ASSERT_OK(cm_device_staging_configure(dev, &cfg));
    cm_buffer_t *b = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, 40000, &b));
    unsigned char *src = malloc(40000), *dst = malloc(40000);
    assert_true(src && dst);
    for (int i = 0; i < 40000; ++i) src[i] = (unsigned char)(i * 7);
    cm_memory_report_t r;

    /* staging buffers cannot be pinned: host out of memory, nothing half-made stays */
    fake_fail(FAKE_HOST_ALLOC, cudaErrorMemoryAllocation, 2);
    assert_int_equal(cm_buffer_copy_from_host(NULL, b, 0, src, 40000), CM_ERROR_HOST_OUT_OF_MEMORY);
    assert_non_null(strstr(cm_last_error()->message, "cannot pin 3 staging buffers of 4096 bytes"));
    CM_ASSERT_OK(cm_device_memory_report(dev, &r));
    assert_int_equal(r.staging_bytes, 0);
    assert_int_equal(fake.events, 0);
    fake_fail(FAKE_HOST_ALLOC, cudaErrorUnknown, 3);
    assert_int_equal(cm_buffer_copy_to_host(NULL, b, 0, dst, 40000), CM_ERROR_CUDA);
    expect_call("cudaHostAlloc(staging buffer 2 of 4096 bytes)");
    fake_fail(FAKE_EVENT_CREATE, cudaErrorUnknown, 2);
    assert_int_equal(cm_buffer_copy_from_host(NULL, b, 0, src, 40000), CM_ERROR_CUDA);
    expect_call("cudaEventCreateWithFlags(staging event 1)");
    assert_int_equal(fake.events, 0);
    CM_ASSERT_OK(cm_device_memory_report(dev, &r));
    assert_int_equal(r.staging_bytes, 0);

    /* a DMA fails in the middle (chunk 4 of 10), in each direction */
    fake_fail(FAKE_MEMCPY_ASYNC, cudaErrorUnknown, 4);
    assert_int_equal(cm_buffer_copy_from_host(NULL, b, 0, src, 40000), CM_ERROR_CUDA);
    expect_call("cudaMemcpyAsync(staged chunk 3 of 10, 4096 bytes, host to device)");
    fake_fail(FAKE_MEMCPY_ASYNC, cudaErrorUnknown, 5);
    assert_int_equal(cm_buffer_copy_to_host(NULL, b, 0, dst, 40000), CM_ERROR_CUDA);
    expect_call("staged chunk 4 of 10, 4096 bytes, device to host");
    fake_fail(FAKE_EVENT_RECORD, cudaErrorUnknown, 2);
    assert_int_equal(cm_buffer_copy_from_host(NULL, b, 0, src, 40000), CM_ERROR_CUDA);
    expect_call("cudaEventRecord(staging event 1)");
    fake_fail(FAKE_EVENT_SYNC, cudaErrorUnknown, 1);
    assert_int_equal(cm_buffer_copy_to_host(NULL, b, 0, dst, 40000), CM_ERROR_CUDA);
    expect_call("cudaEventSynchronize(staging event");

    /* after all that the pipeline works and the data is right */
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, b, 0, src, 40000));
    memset(dst, 0, 40000);
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, b, 0, dst, 40000));
    assert_memory_equal(dst, src, 40000);
    free(src);
    free(dst);
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_device_close(dev));
    EXPECT_CLEAN();
}

static void test_peer_faults(void **state) {
    (void)state;
    cm_device_t *d0 = NULL, *d1 = NULL;
    CM_ASSERT_OK(cm_device_open(0, &d0));
    CM_ASSERT_OK(cm_device_open(1, &d1));
    cm_buffer_t *a = NULL, *b = NULL, *c = NULL;
    CM_ASSERT_OK(cm_buffer_create(d0, 256, &a));
    CM_ASSERT_OK(cm_buffer_create(d0, 256, &c));
    CM_ASSERT_OK(cm_buffer_create(d1, 256, &b));
    fake_fail(FAKE_MEMCPY, cudaErrorUnknown, 1);
    assert_int_equal(cm_buffer_copy(NULL, a, 0, c, 0, 16), CM_ERROR_CUDA);
    expect_call("cudaMemcpy(16 bytes, device 0 to device 0)");
    fake_fail(FAKE_STREAM_SYNC, cudaErrorUnknown, 1);
    assert_int_equal(cm_buffer_copy(NULL, a, 0, c, 0, 16), CM_ERROR_CUDA);
    fake_fail(FAKE_CAN_PEER, cudaErrorUnknown, 1);
    assert_int_equal(cm_buffer_copy(NULL, a, 0, b, 0, 16), CM_ERROR_CUDA);
    expect_call("cudaDeviceCanAccessPeer(0, 1)");
    fake_fail(FAKE_ENABLE_PEER, cudaErrorUnknown, 2);
    assert_int_equal(cm_buffer_copy(NULL, a, 0, b, 0, 16), CM_ERROR_CUDA);
    expect_call("cudaDeviceEnablePeerAccess(0) on device 1");
    fake_fail(FAKE_POOL_ACCESS, cudaErrorUnknown, 1);
    assert_int_equal(cm_buffer_copy(NULL, a, 0, b, 0, 16), CM_ERROR_CUDA);
    expect_call("cudaMemPoolSetAccess(pool of device 1, device 0)");
    /* "already enabled" (the application did it) is fine */
    fake_fail_always(FAKE_ENABLE_PEER, cudaErrorPeerAccessAlreadyEnabled);
    CM_ASSERT_OK(cm_buffer_copy(NULL, a, 0, b, 0, 16));
    fake_fail_clear();
    fake_fail(FAKE_MEMCPY_PEER, cudaErrorUnknown, 1);
    assert_int_equal(cm_buffer_copy(NULL, b, 0, a, 0, 16), CM_ERROR_CUDA);
    expect_call("cudaMemcpyPeer(16 bytes, device 0 to device 1)");
    cm_stream_t *w0 = fake_wrap(d0, 0);
    fake_fail(FAKE_MEMCPY_PEER_ASYNC, cudaErrorUnknown, 1);
    assert_int_equal(cm_buffer_copy(w0, b, 0, a, 0, 16), CM_ERROR_CUDA);
    expect_call("cudaMemcpyPeerAsync");
    CM_ASSERT_OK(cm_stream_release(w0));
    CM_ASSERT_OK(cm_buffer_destroy(a));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_buffer_destroy(c));
    CM_ASSERT_OK(cm_device_close(d0));
    CM_ASSERT_OK(cm_device_close(d1));

    /* a pair without peer access: no enabling, the copy is still made (staged by CUDA) */
    fake.peer_ok = 0;
    CM_ASSERT_OK(cm_device_open(0, &d0));
    CM_ASSERT_OK(cm_device_open(1, &d1));
    CM_ASSERT_OK(cm_buffer_create(d0, 64, &a));
    CM_ASSERT_OK(cm_buffer_create(d1, 64, &b));
    unsigned long enables = fake.calls[FAKE_ENABLE_PEER];
    CM_ASSERT_OK(cm_buffer_copy(NULL, b, 0, a, 0, 64));
    assert_int_equal(fake.calls[FAKE_ENABLE_PEER], enables);
    CM_ASSERT_OK(cm_buffer_destroy(a));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_device_close(d0));
    CM_ASSERT_OK(cm_device_close(d1));
    EXPECT_CLEAN();
}

static void test_report_and_pool_faults(void **state) {
    (void)state;
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    cm_memory_report_t r;
    memset(&r, 0x44, sizeof r);
    cm_memory_report_t before = r;
    fake_fail(FAKE_MEM_INFO, cudaErrorUnknown, 1);
    assert_int_equal(cm_device_memory_report(dev, &r), CM_ERROR_CUDA);
    expect_call("cudaMemGetInfo");
    fake_fail(FAKE_POOL_GET, cudaErrorUnknown, 2);
    assert_int_equal(cm_device_memory_report(dev, &r), CM_ERROR_CUDA);
    expect_call("cudaMemPoolGetAttribute(cudaMemPoolAttrUsedMemCurrent)");
    assert_memory_equal(&r, &before, sizeof r);
    fake_fail(FAKE_POOL_SET, cudaErrorUnknown, 1);
    assert_int_equal(cm_device_pool_set_release_threshold(dev, 5), CM_ERROR_CUDA);
    expect_call("cudaMemPoolSetAttribute(cudaMemPoolAttrReleaseThreshold, 5)");
    CM_ASSERT_OK(cm_device_memory_report(dev, &r));
    assert_true(r.pool_release_threshold == ~0ull); /* unchanged */
    fake_fail(FAKE_POOL_TRIM, cudaErrorUnknown, 1);
    assert_int_equal(cm_device_pool_trim(dev, 0), CM_ERROR_CUDA);
    expect_call("cudaMemPoolTrimTo(pool, 0)");

    /* the OOM report when the memory query fails too */
    fake_fail_always(FAKE_MEM_INFO, cudaErrorUnknown);
    cm_buffer_t *b = NULL;
    assert_int_equal(cm_buffer_create(dev, 100 * MiB, &b), CM_ERROR_DEVICE_OUT_OF_MEMORY);
    assert_non_null(strstr(cm_last_error()->message, "free and total memory could not be read"));
    fake_fail_clear();

    /* a pool that cannot be destroyed: the close reports it, the handle is gone anyway */
    cudaMemPool_t pool = NULL;
    CM_ASSERT_OK(cm_device_memory_pool(dev, &pool));
    fake_fail(FAKE_POOL_DESTROY, cudaErrorUnknown, 1);
    assert_int_equal(cm_device_close(dev), CM_ERROR_CUDA);
    expect_call("cudaMemPoolDestroy(device 0)");
    assert_int_equal(cm_device_close(dev), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(fake_pool_destroy(pool), cudaSuccess);
    EXPECT_CLEAN();
}

/* A sticky error loses the context: later calls on that device fail fast, handles can still be
 * released, and other devices go on working. */
static void test_sticky_error(void **state) {
    (void)state;
    cm_device_t *d0 = NULL, *d1 = NULL;
    CM_ASSERT_OK(cm_device_open(0, &d0));
    CM_ASSERT_OK(cm_device_open(1, &d1));
    cm_buffer_t *keep = NULL, *b = NULL, *other = NULL;
    CM_ASSERT_OK(cm_buffer_create(d0, 64, &keep));
    CM_ASSERT_OK(cm_buffer_create(d1, 64, &other));
    void *kp = NULL;
    CM_ASSERT_OK(cm_buffer_device_ptr(keep, &kp));
    fake_fail(FAKE_MALLOC, cudaErrorIllegalAddress, 1);
    assert_int_equal(cm_buffer_create(d0, 64, &b), CM_ERROR_CONTEXT_LOST);
    assert_true(cm_last_error()->context_lost);
    unsigned long mallocs = fake.calls[FAKE_MALLOC];
    assert_int_equal(cm_buffer_create(d0, 64, &b), CM_ERROR_CONTEXT_LOST);
    assert_int_equal(fake.calls[FAKE_MALLOC], mallocs); /* failed fast, no CUDA call */
    unsigned char h[64];
    assert_int_equal(cm_buffer_copy_to_host(NULL, keep, 0, h, 64), CM_ERROR_CONTEXT_LOST);
    assert_int_equal(cm_buffer_destroy(keep), CM_ERROR_CONTEXT_LOST);
    assert_int_equal(cm_buffer_destroy(keep), CM_ERROR_INVALID_ARGUMENT); /* released */
    /* the other device is fine */
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, other, 0, h, 64));
    CM_ASSERT_OK(cm_buffer_destroy(other));
    cudaMemPool_t pool0 = NULL;
    CM_ASSERT_OK(cm_device_memory_pool(d0, &pool0));
    CM_ASSERT_OK(cm_device_close(d0)); /* the lost context's pool is not touched */
    CM_ASSERT_OK(cm_device_close(d1));
    /* what the lost context still held in the simulation */
    assert_int_equal(fake_free(kp), cudaSuccess);
    assert_int_equal(fake_pool_destroy(pool0), cudaSuccess);
    cm__context_reset_for_tests();
    EXPECT_CLEAN();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_open_faults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_destroy_faults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_host_buffer_faults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copy_faults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_staging_faults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_peer_faults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_and_pool_faults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sticky_error, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
