/*
 * The core's multi-device guarantees on two real GPUs (label multi-gpu: skipped with the reason
 * on a machine with one GPU, the only skip the GPU check allows):
 *  - a buffer of device 1 created, used and destroyed synchronously (NULL stream) and one
 *    stream-ordered on a CUDA stream of device 1 wrapped as a library stream, while device 0 is
 *    current, live on device 1, and device 0 stays current;
 *  - a launch on a stream of device 1 while device 0 is current runs on device 1;
 *  - a sticky fault raised by device 1's work, seen while device 0 is current, marks device 1
 *    lost and leaves device 0 usable (in a child process: the fault ends its contexts);
 *  - a process that names only device 1 creates no context on device 0 (primary context state
 *    of device 0 stays inactive; in a child process that touches nothing else).
 */
#include "cm_test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/interop.h>
#include <cudamodel/launch.h>
#include <cudamodel/stream.h>

#include "internal.h"

const void *gm_iota_kernel(void);

#define N 4096u

static const char *g_self;

static bool two_gpus(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
    if (n < 2) {
        print_message("skipping: these scenarios need two GPUs; %d visible\n", n);
        return false;
    }
    return true;
}

/* Run this executable again with one argument; its exit status (0: the child's checks held). */
static int run_child(const char *mode) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %s", g_self, mode);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 99;
}

static void test_stream_ordered_buffer_of_device1_with_device0_current(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    if (!two_gpus()) skip();
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    cm_device_t *d1 = NULL;
    CM_ASSERT_OK(cm_device_open(1, &d1));
    /* a CUDA stream of device 1 (made while device 1 is current), wrapped for its object */
    cudaStream_t cs1 = NULL;
    assert_int_equal(cudaSetDevice(1), cudaSuccess);
    assert_int_equal(cudaStreamCreateWithFlags(&cs1, cudaStreamNonBlocking), cudaSuccess);
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    cm_stream_t *w1 = NULL;
    CM_ASSERT_OK(cm_stream_wrap(d1, cs1, &w1));
    /* k = 0: synchronous (NULL stream); k = 1: stream-ordered on the wrapped stream */
    cm_stream_t *streams[2] = {NULL, w1};
    for (int k = 0; k < 2; ++k) {
        cm_buffer_t *b = NULL;
        CM_ASSERT_OK(cm_buffer_create_on_stream(streams[k], d1, N * sizeof(unsigned), &b));
        cm_buffer_info_t info;
        CM_ASSERT_OK(cm_buffer_info(b, &info));
        assert_int_equal(info.ordinal, 1);
        assert_int_equal(info.stream_ordered, k == 1);
        assert_ptr_equal(info.stream, streams[k]);
        void *p = NULL;
        CM_ASSERT_OK(cm_buffer_device_ptr(b, &p));
        struct cudaPointerAttributes at;
        assert_int_equal(cudaPointerGetAttributes(&at, p), cudaSuccess);
        assert_int_equal(at.device, 1);
        unsigned pattern = 0xabcd0000u + (unsigned)k;
        CM_ASSERT_OK(cm_buffer_fill(streams[k], b, 0, N * sizeof(unsigned), &pattern,
                                    sizeof pattern));
        unsigned host[N];
        /* on the same stream (a pageable destination is complete on return) */
        CM_ASSERT_OK(cm_buffer_copy_to_host(streams[k], b, 0, host, sizeof host));
        for (unsigned i = 0; i < N; ++i) assert_int_equal(host[i], pattern);
        if (k == 0) CM_ASSERT_OK(cm_buffer_destroy(b));
        else CM_ASSERT_OK(cm_buffer_destroy_on_stream(w1, b));
        int cur = -1;
        assert_int_equal(cudaGetDevice(&cur), cudaSuccess);
        assert_int_equal(cur, 0);
    }
    CM_ASSERT_OK(cm_stream_synchronize(w1));
    CM_ASSERT_OK(cm_stream_release(w1)); /* the wrapper goes before the CUDA stream */
    assert_int_equal(cudaSetDevice(1), cudaSuccess);
    assert_int_equal(cudaStreamDestroy(cs1), cudaSuccess);
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    CM_ASSERT_OK(cm_device_close(d1));
}

static void test_launch_runs_on_the_streams_device(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    if (!two_gpus()) skip();
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    cm_device_t *d1 = NULL;
    CM_ASSERT_OK(cm_device_open(1, &d1));
    cm_buffer_t *b = NULL;
    CM_ASSERT_OK(cm_buffer_create(d1, N * sizeof(unsigned), &b));
    cm_stream_t *s = NULL;
    CM_ASSERT_OK(cm_stream_acquire(d1, CM_STREAM_PRIORITY_LOW, &s));
    void *p = NULL;
    CM_ASSERT_OK(cm_buffer_device_ptr(b, &p));
    unsigned n = N, base = 11;
    void *args[] = {&p, &n, &base};
    cm_launch_config_t cfg = CM_LAUNCH_CONFIG_INIT;
    cfg.grid.x = N / 256;
    cfg.block.x = 256;
    CM_ASSERT_OK(CM_LAUNCH(s, gm_iota_kernel(), &cfg, args));
    CM_ASSERT_OK(cm_stream_synchronize(s));
    unsigned host[N];
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, b, 0, host, sizeof host));
    for (unsigned i = 0; i < N; ++i) assert_int_equal(host[i], 11 + i);
    int cur = -1;
    assert_int_equal(cudaGetDevice(&cur), cudaSuccess);
    assert_int_equal(cur, 0);
    CM_ASSERT_OK(cm_stream_release(s));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_device_close(d1));
}

static void test_fault_on_device1_marks_device1_lost(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    if (!two_gpus()) skip();
    assert_int_equal(run_child("--child-fault-on-1"), 0);
}

static void test_naming_device1_creates_no_context_on_device0(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    if (!two_gpus()) skip();
    assert_int_equal(run_child("--child-only-device-1"), 0);
}

/* ---- children: exit 0 when the scenario holds, a distinct code per failed check */

static int child_only_device_1(void) {
    cm_device_t *d1 = NULL;
    cm_buffer_t *b = NULL;
    if (cm_device_open(1, &d1) != CM_OK) return 2;
    /* synchronous (NULL stream) work on device 1 */
    if (cm_buffer_create(d1, 1 << 20, &b) != CM_OK) return 3;
    if (cm_buffer_set(NULL, b, 0, 1 << 20, 1) != CM_OK) return 4;
    if (cm_buffer_destroy(b) != CM_OK) return 5;
    /* stream-ordered work on a pooled stream of device 1 */
    cm_stream_t *s = NULL;
    if (cm_stream_acquire(d1, CM_STREAM_PRIORITY_LOW, &s) != CM_OK) return 10;
    if (cm_buffer_create_on_stream(s, d1, 1 << 20, &b) != CM_OK) return 11;
    if (cm_buffer_set(s, b, 0, 1 << 20, 1) != CM_OK) return 12;
    if (cm_buffer_destroy_on_stream(s, b) != CM_OK) return 13;
    if (cm_stream_synchronize(s) != CM_OK) return 14;
    if (cm_stream_release(s) != CM_OK) return 15;
    if (cm_device_close(d1) != CM_OK) return 6;
    unsigned flags = 0;
    int active0 = -1, active1 = -1;
    if (cm__drv_primary_ctx_state(0, &flags, &active0) != cudaSuccess) return 7;
    if (cm__drv_primary_ctx_state(1, &flags, &active1) != cudaSuccess) return 8;
    fprintf(stderr, "child: primary context active on device 0: %d, device 1: %d\n", active0,
            active1);
    return active0 == 0 && active1 == 1 ? 0 : 9;
}

/* Writes far out of bounds on device 1 (a sticky illegal address). */
static int child_fault_on_1(void) {
    if (cudaSetDevice(0) != cudaSuccess) return 2;
    cm_device_t *d1 = NULL;
    if (cm_device_open(1, &d1) != CM_OK) return 3;
    cm_stream_t *s = NULL;
    if (cm_stream_acquire(d1, CM_STREAM_PRIORITY_LOW, &s) != CM_OK) return 4;
    void *bad = (void *)(uintptr_t)0x10; /* never a device allocation */
    unsigned n = N, base = 0;
    void *args[] = {&bad, &n, &base};
    cm_launch_config_t cfg = CM_LAUNCH_CONFIG_INIT;
    cfg.grid.x = N / 256;
    cfg.block.x = 256;
    if (CM_LAUNCH(s, gm_iota_kernel(), &cfg, args) != CM_OK) return 5;
    cm_status_t st = cm_stream_synchronize(s);
    if (st == CM_OK) return 6;
    fprintf(stderr, "child: fault seen as %s on device %d\n", cm_status_name(st),
            cm_last_error()->device);
    if (cm_last_error()->device != 1) return 7;
    if (cm_check_context(1) != CM_ERROR_CONTEXT_LOST) return 8;
    if (cm_check_context(0) != CM_OK) return 9;
    cm_device_t *d0 = NULL;
    cm_buffer_t *b = NULL;
    if (cm_device_open(0, &d0) != CM_OK) return 10;
    if (cm_buffer_create(d0, 4096, &b) != CM_OK) return 11;
    if (cm_buffer_set(NULL, b, 0, 4096, 3) != CM_OK) return 12;
    unsigned char host[4096];
    if (cm_buffer_copy_to_host(NULL, b, 0, host, sizeof host) != CM_OK) return 13;
    if (host[4095] != 3) return 14;
    return 0;
}

int main(int argc, char **argv) {
    g_self = argv[0];
    if (argc == 2 && strcmp(argv[1], "--child-only-device-1") == 0) return child_only_device_1();
    if (argc == 2 && strcmp(argv[1], "--child-fault-on-1") == 0) return child_fault_on_1();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_ordered_buffer_of_device1_with_device0_current),
        cmocka_unit_test(test_launch_runs_on_the_streams_device),
        cmocka_unit_test(test_fault_on_device1_marks_device1_lost),
        cmocka_unit_test(test_naming_device1_creates_no_context_on_device0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
