/*
 * The core on a real GPU (what needs the driver): explicit device and the
 * caller's context state, library work captured into a graph through interop streams, launches
 * on the stream's device. The two-GPU forms of these scenarios are in test_gpu_core_multi.c.
 */
#include "cm_test.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/interop.h>
#include <cudamodel/launch.h>
#include <cudamodel/stream.h>

#include "internal.h"

const void *gc_iota_kernel(void);

#define N 4096u

/* Library work on device 0 from a thread that has no current context: the thread still has none
 * afterwards (enter/leave restores "none" instead of making a device current). */
static void *no_context_worker(void *arg) {
    int *ok = arg;
    void *ctx = (void *)1;
    if (cm__cuda.ctx_get_current(&ctx) != cudaSuccess || ctx != NULL) return NULL; /* ok stays 0 */
    cm_device_t *dev = NULL;
    cm_buffer_t *buf = NULL, *ordered = NULL;
    cm_stream_t *s = NULL;
    unsigned host[N];
    if (cm_device_open(0, &dev) != CM_OK) return NULL;
    if (cm_buffer_create(dev, N * sizeof(unsigned), &buf) != CM_OK) return NULL;
    if (cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s) != CM_OK) return NULL;
    /* a stream-ordered buffer on the pooled stream, and synchronous (NULL-stream) work */
    if (cm_buffer_create_on_stream(s, dev, N * sizeof(unsigned), &ordered) != CM_OK) return NULL;
    if (cm_buffer_set(s, ordered, 0, N * sizeof(unsigned), 0) != CM_OK) return NULL;
    if (cm_buffer_set(NULL, buf, 0, N * sizeof(unsigned), 0xff) != CM_OK) return NULL;
    void *p = NULL;
    if (cm_buffer_device_ptr(buf, &p) != CM_OK) return NULL;
    unsigned n = N, base = 7;
    void *args[] = {&p, &n, &base};
    cm_launch_config_t cfg = CM_LAUNCH_CONFIG_INIT;
    cfg.grid.x = N / 256;
    cfg.block.x = 256;
    if (CM_LAUNCH(s, gc_iota_kernel(), &cfg, args) != CM_OK) return NULL;
    if (cm_stream_synchronize(s) != CM_OK) return NULL;
    if (cm_buffer_copy_to_host(NULL, buf, 0, host, sizeof host) != CM_OK) return NULL;
    for (unsigned i = 0; i < N; ++i)
        if (host[i] != 7 + i) return NULL;
    if (cm_buffer_destroy_on_stream(s, ordered) != CM_OK) return NULL;
    if (cm_stream_release(s) != CM_OK) return NULL;
    if (cm_buffer_destroy(buf) != CM_OK) return NULL;
    if (cm_device_close(dev) != CM_OK) return NULL;
    ctx = (void *)1;
    if (cm__cuda.ctx_get_current(&ctx) != cudaSuccess) return NULL;
    *ok = ctx == NULL ? 1 : 2;
    return NULL;
}

static void test_library_calls_leave_no_context_current(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    int ok = 0;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, no_context_worker, &ok), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    if (ok != 1) {
        char text[1024];
        cm_error_format(cm_last_error(), text, sizeof text);
        print_message("worker: %s (ok=%d: 2 means a context stayed current)\n", text, ok);
    }
    assert_int_equal(ok, 1);
}

/* Copies, sets and fills queued on a CUDA stream of the application that is capturing a graph
 * (wrapped before the capture) are captured: the buffer calls ask the driver nothing about the
 * stream (the wrapper knows its device), so nothing CUDA refuses while capturing is called. */
static void test_buffer_work_captured_on_interop_stream(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    cm_buffer_t *a = NULL, *b = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, N * sizeof(unsigned), &a));
    CM_ASSERT_OK(cm_buffer_create(dev, N * sizeof(unsigned), &b));
    CM_ASSERT_OK(cm_buffer_set(NULL, b, 0, N * sizeof(unsigned), 0xff));
    cudaStream_t cs;
    assert_int_equal(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking), cudaSuccess);
    cm_stream_t *w = NULL;
    CM_ASSERT_OK(cm_stream_wrap(dev, cs, &w));
    assert_int_equal(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    unsigned pattern = 0x01020304u;
    cm_status_t s1 = cm_buffer_fill(w, a, 0, N * sizeof(unsigned), &pattern, sizeof pattern);
    cm_status_t s2 = cm_buffer_copy(w, b, 0, a, 0, N / 2 * sizeof(unsigned));
    cm_status_t s3 = cm_buffer_set(w, b, N / 2 * sizeof(unsigned), N / 2 * sizeof(unsigned), 0);
    cudaGraph_t g = NULL;
    assert_int_equal(cudaStreamEndCapture(cs, &g), cudaSuccess);
    CM_ASSERT_OK(s1);
    CM_ASSERT_OK(s2);
    CM_ASSERT_OK(s3);
    cudaGraphExec_t ge = NULL;
    assert_int_equal(cudaGraphInstantiate(&ge, g, 0), cudaSuccess);
    assert_int_equal(cudaGraphLaunch(ge, cs), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(cs), cudaSuccess);
    unsigned host[N];
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, b, 0, host, sizeof host));
    for (unsigned i = 0; i < N; ++i) assert_int_equal(host[i], i < N / 2 ? pattern : 0u);
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    CM_ASSERT_OK(cm_stream_release(w)); /* the wrapper goes before the CUDA stream */
    cudaStreamDestroy(cs);
    CM_ASSERT_OK(cm_buffer_destroy(a));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_device_close(dev));
}

/* A stale handle of every kind is refused with its kind after the device was closed and opened
 * again, and never acts on the new objects. */
static void test_stale_handles_after_reopen_are_refused(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    cm_buffer_t *old = NULL;
    cm_stream_t *olds = NULL;
    cm_event_t *olde = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, 4096, &old));
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &olds));
    CM_ASSERT_OK(cm_event_acquire(dev, CM_EVENT_TIMING, &olde));
    CM_ASSERT_OK(cm_event_release(olde));
    CM_ASSERT_OK(cm_stream_release(olds));
    CM_ASSERT_OK(cm_buffer_destroy(old));
    cm_device_t *olddev = dev;
    CM_ASSERT_OK(cm_device_close(dev));
    CM_ASSERT_OK(cm_device_open(0, &dev));
    cm_buffer_t *fresh[64];
    for (int i = 0; i < 64; ++i) CM_ASSERT_OK(cm_buffer_create(dev, 4096, &fresh[i]));
    cm_stream_t *s = NULL;
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
    cm_buffer_info_t info;
    CM_ASSERT_STATUS(cm_buffer_info(old, &info), CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cm_last_error()->message, "buffer"));
    CM_ASSERT_STATUS(cm_stream_synchronize(olds), CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cm_last_error()->message, "stream"));
    bool done = false;
    CM_ASSERT_STATUS(cm_event_query(olde, &done), CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cm_last_error()->message, "event"));
    CM_ASSERT_STATUS(cm_device_close(olddev), CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cm_last_error()->message, "device"));
    for (int i = 0; i < 64; ++i) assert_ptr_not_equal(fresh[i], old);
    CM_ASSERT_OK(cm_stream_release(s));
    for (int i = 0; i < 64; ++i) CM_ASSERT_OK(cm_buffer_destroy(fresh[i]));
    CM_ASSERT_OK(cm_device_close(dev));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_library_calls_leave_no_context_current),
        cmocka_unit_test(test_buffer_work_captured_on_interop_stream),
        cmocka_unit_test(test_stale_handles_after_reopen_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
