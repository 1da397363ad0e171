/*
 * Copies between two GPUs (peer access when the pair supports it, staged by CUDA otherwise) and
 * streams of the wrong device. Needs two GPUs: on a machine with one it is skipped with the
 * reason (the only skip the H200 run allows; kept in its own executable so that the single-GPU
 * tests of test_gpu_buffer.c never count as skipped).
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/interop.h>

#define MiB ((size_t)1 << 20)

static bool two_gpus(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
    if (n < 2) {
        print_message("skipping: peer copies need two GPUs; %d visible\n", n);
        return false;
    }
    return true;
}

static void test_copies_between_two_gpus(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    if (!two_gpus()) skip();
    int can01 = 0, can10 = 0;
    assert_int_equal(cudaDeviceCanAccessPeer(&can01, 0, 1), cudaSuccess);
    assert_int_equal(cudaDeviceCanAccessPeer(&can10, 1, 0), cudaSuccess);
    print_message("peer access 0->1: %s, 1->0: %s\n", can01 ? "yes" : "no", can10 ? "yes" : "no");
    cm_device_t *d0 = NULL, *d1 = NULL;
    CM_ASSERT_OK(cm_device_open(0, &d0));
    CM_ASSERT_OK(cm_device_open(1, &d1));
    const size_t n = 8 * MiB + 3;
    unsigned char *src = malloc(n), *out = malloc(n);
    assert_true(src && out);
    for (size_t i = 0; i < n; ++i) src[i] = (unsigned char)(i * 131u + 7u);
    cudaStream_t s0 = NULL, s1 = NULL;
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    assert_int_equal(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking), cudaSuccess);
    assert_int_equal(cudaSetDevice(1), cudaSuccess);
    assert_int_equal(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), cudaSuccess);
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    /* the test's CUDA streams as library streams, each wrapped with its own device's object */
    cm_stream_t *w0 = NULL, *w1 = NULL;
    CM_ASSERT_OK(cm_stream_wrap(d0, s0, &w0));
    CM_ASSERT_OK(cm_stream_wrap(d1, s1, &w1));

    cm_buffer_t *a = NULL, *b = NULL, *c = NULL;
    CM_ASSERT_OK(cm_buffer_create(d0, n, &a));
    CM_ASSERT_OK(cm_buffer_create_on_stream(w1, d1, n + 5, &b));
    CM_ASSERT_OK(cm_buffer_create_on_stream(w0, d0, n, &c));
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, a, 0, src, n));
    /* the stream-ordered allocations are usable on other streams once their streams get there */
    assert_int_equal(cudaStreamSynchronize(s0), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(s1), cudaSuccess);
    /* the chain without pauses: the synchronous copy must be finished when it returns, also for
     * a non-blocking stream of the other device that reads its result right away */
    CM_ASSERT_OK(cm_buffer_copy(NULL, b, 5, a, 0, n));                          /* 0 -> 1, sync */
    CM_ASSERT_OK(cm_buffer_copy(w1, c, 0, b, 5, n));                     /* 1 -> 0 on 1's stream */
    assert_int_equal(cudaStreamSynchronize(s1), cudaSuccess);
    memset(out, 0xee, n);
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, c, 0, out, n));
    if (memcmp(out, src, n) != 0)
        fail_msg("host -> device 0 -> device 1 -> device 0 without pauses lost the data");
    CM_ASSERT_OK(cm_buffer_set(NULL, b, 0, n + 5, 0));
    CM_ASSERT_OK(cm_buffer_set(NULL, c, 0, n, 0));
    /* each hop checked on its own, so a failure names the hop */
    memset(out, 0xee, n);
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, a, 0, out, n));
    if (memcmp(out, src, n) != 0) fail_msg("host -> device 0 (staged) lost the data");
    CM_ASSERT_OK(cm_buffer_copy(NULL, b, 5, a, 0, n));                          /* 0 -> 1, sync */
    memset(out, 0xee, n);
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, b, 5, out, n));
    if (memcmp(out, src, n) != 0)
        fail_msg("device 0 -> device 1 (cm_buffer_copy, sync) lost the data");
    CM_ASSERT_OK(cm_buffer_copy(w1, c, 0, b, 5, n));                     /* 1 -> 0 on 1's stream */
    assert_int_equal(cudaStreamSynchronize(s1), cudaSuccess);
    memset(out, 0xee, n);
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, c, 0, out, n));
    if (memcmp(out, src, n) != 0)
        fail_msg("device 1 -> device 0 (cm_buffer_copy on device 1's stream) lost the data");
    /* the caller's current device is left alone */
    int cur = -1;
    assert_int_equal(cudaGetDevice(&cur), cudaSuccess);
    assert_int_equal(cur, 0);

    /* streams of the wrong device are refused with both devices named: a stream of device 1
     * on buffer calls of device 0 (the handle knows its device), and device 1's CUDA stream
     * wrapped for device 0's object (the driver says whose it is) */
    assert_int_equal(cm_buffer_copy_from_host(w1, a, 0, src, 16), CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cm_last_error()->message,
                           "the stream belongs to device 1 but the buffer to device 0"));
    assert_string_equal(cm_last_error()->call, "cm_buffer_copy_from_host"); /* the public name */
    cm_buffer_t *x = NULL;
    assert_int_equal(cm_buffer_create_on_stream(w1, d0, 64, &x), CM_ERROR_INVALID_ARGUMENT);
    assert_null(x);
    assert_int_equal(cm_buffer_destroy_on_stream(w1, c), CM_ERROR_INVALID_ARGUMENT);
    cm_stream_t *wrong = NULL;
    assert_int_equal(cm_stream_wrap(d0, s1, &wrong), CM_ERROR_INVALID_ARGUMENT);
    assert_null(wrong);
    assert_non_null(strstr(cm_last_error()->message,
                           "the stream belongs to device 1 but the device object to device 0"));

    CM_ASSERT_OK(cm_buffer_destroy(a));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_buffer_destroy(c));
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    /* the wrappers go before the CUDA streams */
    CM_ASSERT_OK(cm_stream_release(w0));
    CM_ASSERT_OK(cm_stream_release(w1));
    assert_int_equal(cudaStreamDestroy(s0), cudaSuccess);
    assert_int_equal(cudaStreamDestroy(s1), cudaSuccess);
    free(src);
    free(out);
    CM_ASSERT_OK(cm_device_close(d0));
    CM_ASSERT_OK(cm_device_close(d1));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copies_between_two_gpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
