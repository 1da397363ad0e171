/*
 * GPU tests of the collective timeout (multi.h, "Collectives that fail instead of hang") on one
 * GPU: a device set of one member and its communicator run collectives with the timeout
 * machinery active (a short timeout, polled waits) and finish well inside it, with the right
 * data; the set stays usable and closes. The timeout and abort paths themselves (a peer that
 * never arrives, NCCL's asynchronous error) need a second rank that misbehaves: they are tested
 * on the host fakes (tests/host/test_multi_timeout.c); their multi-process GPU run belongs to the
 * two-GPU verification.
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/multi.h>
#include <cudamodel/version.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void test_one_gpu_collectives_with_timeout(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_version_info_t vi;
    CM_ASSERT_OK(cm_version_info(&vi));
    int zero = 0;
    cm_device_set_t *set = NULL;
    CM_ASSERT_OK(cm_device_set_open(&zero, 1, &set));
    uint32_t ms = 0;
    CM_ASSERT_OK(cm_device_set_collective_timeout(set, &ms));
    if (getenv("CUDAMODEL_COLLECTIVE_TIMEOUT_MS") == NULL)
        assert_int_equal(ms, CM_COLLECTIVE_TIMEOUT_DEFAULT_MS);
    cm_comm_t *comm = NULL;
    if (!vi.nccl_built) {
        CM_ASSERT_STATUS(cm_comm_create(set, &comm), CM_ERROR_NOT_SUPPORTED);
        CM_ASSERT_OK(cm_device_set_close(set));
        print_message("built without NCCL: nothing to time out\n");
        return;
    }
    /* 20 s: far above a one-GPU collective (NCCL's first one sets up its kernels), far below
     * the test's ctest TIMEOUT: a wait that hung would fail here, not hold the run */
    CM_ASSERT_OK(cm_device_set_set_collective_timeout(set, 20000));
    CM_ASSERT_OK(cm_comm_create(set, &comm));
    CM_ASSERT_OK(cm_comm_timeout(comm, &ms));
    assert_int_equal(ms, 20000);
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_set_device(set, 0, &dev));
    const size_t n = (size_t)1 << 22; /* 16 MiB of floats */
    cm_buffer_t *buf = NULL, *gather = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, n * sizeof(float), &buf));
    CM_ASSERT_OK(cm_buffer_create(dev, n * sizeof(float), &gather));
    float *host = malloc(n * sizeof(float));
    assert_non_null(host);
    for (size_t i = 0; i < n; ++i) host[i] = (float)(i % 1000);
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, buf, 0, host, n * sizeof(float)));
    double worst = 0;
    for (int round = 0; round < 20; ++round) {
        CM_ASSERT_OK(cm_comm_all_reduce(comm, &buf, &buf, n, CM_DTYPE_F32, CM_COMM_SUM));
        CM_ASSERT_OK(cm_comm_broadcast(comm, &buf, &buf, n, CM_DTYPE_F32, 0));
        CM_ASSERT_OK(cm_comm_all_gather(comm, &buf, &gather, n, CM_DTYPE_F32));
        double t0 = now_ms();
        CM_ASSERT_OK(cm_comm_synchronize(comm));
        double t = now_ms() - t0;
        if (t > worst) worst = t;
    }
    print_message("20 rounds of all-reduce + broadcast + all-gather of 16 MiB: the longest wait "
                  "%.2f ms (timeout 20000 ms)\n", worst);
    assert_true(worst < 20000.0);
    memset(host, 0, n * sizeof(float));
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, gather, 0, host, n * sizeof(float)));
    for (size_t i = 0; i < n; i += 4099)
        if (host[i] != (float)(i % 1000)) fail_msg("element %zu is %g", i, (double)host[i]);
    bool usable = false;
    CM_ASSERT_OK(cm_device_set_usable(set, &usable));
    assert_true(usable);
    CM_ASSERT_OK(cm_device_set_synchronize(set));
    /* with no limit the same waits work */
    CM_ASSERT_OK(cm_comm_set_timeout(comm, CM_COLLECTIVE_TIMEOUT_NONE));
    CM_ASSERT_OK(cm_comm_all_reduce(comm, &buf, &buf, n, CM_DTYPE_F32, CM_COMM_MAX));
    CM_ASSERT_OK(cm_comm_destroy(comm)); /* waits (polled) before ncclCommDestroy */
    CM_ASSERT_OK(cm_buffer_destroy(buf));
    CM_ASSERT_OK(cm_buffer_destroy(gather));
    CM_ASSERT_OK(cm_device_set_close(set));
    free(host);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_gpu_collectives_with_timeout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
