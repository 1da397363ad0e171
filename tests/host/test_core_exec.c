/*
 * Host tests of the execution module's core guarantees on simulated CUDA:
 *   - an event names the stream it was recorded on by handle: a stream released since (its
 *     pool even resized, the slots freed) is never read, and a re-acquired pooled stream's new
 *     launch is not blamed for an old record;
 *   - per-stream reduction scratch is freed when the pool is resized, on its device, and two
 *     threads doing the first allocation on one stream leave one block;
 *   - cm_launch on a library stream runs with the stream's device current, whatever device the
 *     caller has current, and gives the caller's context back after.
 */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cudamodel/interop.h>
#include <cudamodel/launch.h>
#include <cudamodel/stream.h>

#include "core/device.h"
#include "test_stream_fake.h"


/* ---------------------------------------------------------------- fault attribution by stream handle */

static void test_event_fault_names_stream_by_handle_not_by_freed_slot(void **state) {
    (void)state;
    cm_device_t *dev = xfake_open_dev(0);
    cm_stream_t *s = NULL;
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
    cudaStream_t cs = NULL;
    int ordinal = -1;
    CM_ASSERT_OK(cm__stream_for_launch(s, NULL, "old_launch.c", 11, "cm_launch", &cs, &ordinal));
    assert_int_equal(ordinal, 0);
    cm_event_t *e = NULL;
    CM_ASSERT_OK(cm_event_acquire(dev, CM_EVENT_SYNC_ONLY, &e));
    CM_ASSERT_OK(cm_event_record(e, s));

    /* while the stream is held, a fault names its last launch */
    xfake_fail(XF_EVENT_SYNC, cudaErrorInvalidValue, 1);
    assert_int_not_equal(cm_event_synchronize(e), CM_OK);
    assert_non_null(strstr(cm_last_error()->message, "old_launch.c:11"));

    /* release the stream and resize the pool: the slots the event saw are freed */
    CM_ASSERT_OK(cm_stream_release(s));
    cm_stream_pool_config_t cfg = {1, 1};
    CM_ASSERT_OK(cm_stream_pool_configure(dev, &cfg));
    xfake_fail(XF_EVENT_SYNC, cudaErrorInvalidValue, 1);
    assert_int_not_equal(cm_event_synchronize(e), CM_OK);
    assert_non_null(strstr(cm_last_error()->message, "its stream was released since"));
    assert_null(strstr(cm_last_error()->message, "old_launch.c"));

    /* the one pooled low stream, acquired again: a new handle, and its launch is not blamed for
     * the record made through the old one */
    cm_stream_t *again = NULL;
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &again));
    CM_ASSERT_OK(cm__stream_for_launch(again, NULL, "first.c", 1, "cm_launch", &cs, &ordinal));
    CM_ASSERT_OK(cm_event_record(e, again));
    CM_ASSERT_OK(cm_stream_release(again));
    cm_stream_t *third = NULL;
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &third));
    assert_ptr_not_equal(third, again); /* same pooled stream, new handle */
    CM_ASSERT_OK(cm__stream_for_launch(third, NULL, "innocent.c", 99, "cm_launch", &cs, &ordinal));
    xfake_fail(XF_EVENT_SYNC, cudaErrorInvalidValue, 1);
    assert_int_not_equal(cm_event_synchronize(e), CM_OK);
    assert_null(strstr(cm_last_error()->message, "innocent.c"));
    assert_non_null(strstr(cm_last_error()->message, "its stream was released since"));
    /* the old handle is stale for good, the new one works */
    EXPECT_FAIL(cm_stream_synchronize(again), CM_ERROR_INVALID_ARGUMENT, NULL);
    CM_ASSERT_OK(cm_stream_synchronize(third));

    CM_ASSERT_OK(cm_event_release(e));
    CM_ASSERT_OK(cm_stream_release(third));
    CM_ASSERT_OK(cm_device_close(dev));
    assert_int_equal(xfake_live(), 0);
    cm_last_error_clear();
}

/* ---------------------------------------------------------------- per-stream scratch */

/* cudaMemsetAsync on the simulated pooled streams (the memory fake knows only its own). */
static cudaError_t memset_any_stream(void *p, int v, size_t n, cudaStream_t s) {
    (void)s;
    memset(p, v, n);
    return cudaSuccess;
}

/* cudaMalloc that lets the first `gate` callers in only together (up to a second), so that two
 * threads doing a first allocation really overlap. */
static atomic_int malloc_waiting, malloc_gate;
static cudaError_t malloc_gated(void **p, size_t n) {
    if (atomic_load(&malloc_gate) > 0) {
        atomic_fetch_add(&malloc_waiting, 1);
        for (int i = 0; i < 1000 && atomic_load(&malloc_waiting) < atomic_load(&malloc_gate); ++i) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
    }
    return fake_malloc(p, n);
}

typedef struct {
    struct cm__device *dev;
    cm_stream_t *s;
    cudaStream_t cs;
    void *got;
    cm_status_t st;
} scratch_job_t;

static void *scratch_worker(void *arg) {
    scratch_job_t *j = arg;
    j->st = cm__stream_scratch(j->dev, j->s, j->cs, 256, &j->got);
    return NULL;
}

static void test_stream_scratch_single_and_freed_on_pool_resize(void **state) {
    (void)state;
    cm__cuda.memset_async = memset_any_stream;
    cm__cuda.device_malloc = malloc_gated;
    cm_device_t *d0 = xfake_open_dev(0), *d1 = xfake_open_dev(1);
    struct cm__device *obj1 = cm__device_obj(d1);
    assert_non_null(obj1);
    cm_stream_t *s = NULL;
    CM_ASSERT_OK(cm_stream_acquire(d1, CM_STREAM_PRIORITY_LOW, &s));
    cudaStream_t cs = NULL;
    CM_ASSERT_OK(cm_stream_cuda(s, &cs));
    size_t base0 = fake.sync_used[0], base1 = fake.sync_used[1];

    /* two threads, first reduction on one stream: one block stays */
    atomic_store(&malloc_waiting, 0);
    atomic_store(&malloc_gate, 2);
    scratch_job_t jobs[2] = {{obj1, s, cs, NULL, CM_OK}, {obj1, s, cs, NULL, CM_OK}};
    pthread_t th[2];
    for (int i = 0; i < 2; ++i) assert_int_equal(pthread_create(&th[i], NULL, scratch_worker, &jobs[i]), 0);
    for (int i = 0; i < 2; ++i) pthread_join(th[i], NULL);
    atomic_store(&malloc_gate, 0);
    CM_ASSERT_OK(jobs[0].st);
    CM_ASSERT_OK(jobs[1].st);
    assert_non_null(jobs[0].got);
    assert_ptr_equal(jobs[0].got, jobs[1].got);
    assert_int_equal(fake.sync_used[1] - base1, 256); /* on the stream's device, once */
    assert_int_equal(fake.sync_used[0], base0);
    void *again = NULL;
    long mallocs = (long)fake.calls[FAKE_MALLOC];
    CM_ASSERT_OK(cm__stream_scratch(obj1, s, cs, 128, &again));
    assert_ptr_equal(again, jobs[0].got);
    assert_int_equal((long)fake.calls[FAKE_MALLOC], mallocs); /* no second allocation */

    /* resizing the pool frees the scratch of its streams */
    CM_ASSERT_OK(cm_stream_release(s));
    cm_stream_pool_config_t cfg = {3, 1};
    CM_ASSERT_OK(cm_stream_pool_configure(d1, &cfg));
    assert_int_equal(fake.sync_used[1], base1);
    assert_int_equal(fake.violations, 0);

    CM_ASSERT_OK(cm_device_close(d0));
    CM_ASSERT_OK(cm_device_close(d1));
    assert_int_equal(xfake_live(), 0);
    assert_int_equal(fake_outstanding(), 0);
    cm_last_error_clear();
}

/* ---------------------------------------------------------------- launches on the stream's device */

static int launch_device = -1, launch_has_ctx = -1, launch_depth = -1;
static cudaStream_t launch_stream;
static const char kernel_marker = 0; /* stands for a __global__ function */

static cudaError_t launch_record(const cudaLaunchConfig_t *lc, const void *fn, void **args) {
    (void)fn;
    (void)args;
    launch_device = fake.current;
    launch_has_ctx = fake.has_ctx;
    launch_depth = fake.ctx_depth;
    launch_stream = lc->stream;
    return cudaSuccess;
}

static cudaError_t func_attrs(struct cudaFuncAttributes *a, const void *fn) {
    (void)fn;
    memset(a, 0, sizeof *a);
    a->maxThreadsPerBlock = 1024;
    a->numRegs = 32;
    a->binaryVersion = 90;
    a->ptxVersion = 90;
    a->maxDynamicSharedSizeBytes = 48 * 1024;
    return cudaSuccess;
}

static cudaError_t func_name(const char **name, const void *fn) {
    (void)fn;
    *name = "fake_kernel";
    return cudaSuccess;
}

/* Properties of a plausible sm_90 part (the memory fake leaves the limits 0). */
static cudaError_t props_h100(struct cudaDeviceProp *p, int d) {
    if (d < 0 || d >= fake.device_count) return cudaErrorInvalidDevice;
    memset(p, 0, sizeof *p);
    strcpy(p->name, "Fake GPU");
    p->major = 9;
    p->totalGlobalMem = fake.total;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = p->maxThreadsDim[1] = 1024;
    p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 0x7fffffff;
    p->maxGridSize[1] = p->maxGridSize[2] = 65535;
    p->maxThreadsPerMultiProcessor = 2048;
    p->multiProcessorCount = 132;
    p->regsPerBlock = p->regsPerMultiprocessor = 65536;
    p->warpSize = 32;
    p->sharedMemPerBlock = 48 * 1024;
    p->sharedMemPerMultiprocessor = 228 * 1024;
    p->sharedMemPerBlockOptin = 227 * 1024;
    p->reservedSharedMemPerBlock = 1024;
    return cudaSuccess;
}

static void test_launch_on_stream_runs_on_stream_device_and_restores(void **state) {
    (void)state;
    cm__launch_cache_reset_for_tests();
    cm__cuda.launch_kernel_ex = launch_record;
    cm__cuda.func_get_attributes = func_attrs;
    cm__cuda.func_get_name = func_name;
    cm__cuda.get_device_properties = props_h100;
    cm_device_t *d1 = xfake_open_dev(1);
    cm_stream_t *s = NULL;
    CM_ASSERT_OK(cm_stream_acquire(d1, CM_STREAM_PRIORITY_HIGH, &s));
    cudaStream_t cs = NULL;
    CM_ASSERT_OK(cm_stream_cuda(s, &cs));

    /* the caller has device 0 current */
    fake.current = 0;
    fake.has_ctx = 1;
    int depth = fake.ctx_depth;
    cm_launch_config_t cfg;
    CM_ASSERT_OK(cm_launch_config_1d(1000, 256, &cfg));
    CM_ASSERT_OK(cm_launch(s, &kernel_marker, &cfg, NULL));
    assert_int_equal(launch_device, 1);   /* the stream's device, during the launch */
    assert_int_equal(launch_has_ctx, 1);
    assert_int_equal(launch_depth, depth + 1);
    assert_ptr_equal(launch_stream, cs);
    assert_int_equal(fake.current, 0);    /* the caller's device, after */
    assert_int_equal(fake.has_ctx, 1);
    assert_int_equal(fake.ctx_depth, depth);

    /* a caller with no current context gets none back */
    fake.has_ctx = 0;
    launch_device = -1;
    CM_ASSERT_OK(cm_launch(s, &kernel_marker, &cfg, NULL));
    assert_int_equal(launch_device, 1);
    assert_int_equal(fake.has_ctx, 0);
    assert_int_equal(fake.ctx_depth, depth);

    /* a released stream is refused before anything runs */
    CM_ASSERT_OK(cm_stream_release(s));
    launch_device = -1;
    EXPECT_FAIL(cm_launch(s, &kernel_marker, &cfg, NULL), CM_ERROR_INVALID_ARGUMENT,
                "stream was already released");
    assert_int_equal(launch_device, -1);

    fake.has_ctx = 1;
    CM_ASSERT_OK(cm_device_close(d1));
    assert_int_equal(xfake_live(), 0);
    cm__launch_cache_reset_for_tests();
    cm_last_error_clear();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_event_fault_names_stream_by_handle_not_by_freed_slot,
                                        xfake_setup2, xfake_teardown),
        cmocka_unit_test_setup_teardown(test_stream_scratch_single_and_freed_on_pool_resize, xfake_setup2,
                                        xfake_teardown),
        cmocka_unit_test_setup_teardown(test_launch_on_stream_runs_on_stream_device_and_restores,
                                        xfake_setup2, xfake_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
