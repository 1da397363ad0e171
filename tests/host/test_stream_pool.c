/*
 * Host tests of the execution module (stream.h) on simulated CUDA (fault injection):
 * pool bookkeeping (acquire all, release, double release, foreign handles), close with lent
 * streams, resizing, CUDA failures, events, timers, dependencies, callbacks, fault attribution,
 * graphs, and 8 threads sharing one pool.
 */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <cudamodel/interop.h>
#include <cudamodel/stream.h>

#include "test_stream_fake.h"


/* ---------------------------------------------------------------- pool bookkeeping */

static void test_acquire_all_release_reuse(void **state) {
    (void)state;
    cm_device_t *dev = xfake_open_dev(0);
    cm_stream_t *low[16], *high[4];
    for (int i = 0; i < 16; ++i) CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &low[i]));
    for (int i = 0; i < 4; ++i) CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_HIGH, &high[i]));
    /* all distinct, with distinct CUDA streams */
    for (int i = 0; i < 16; ++i) {
        for (int j = i + 1; j < 16; ++j) assert_ptr_not_equal(low[i], low[j]);
        cudaStream_t a = NULL;
        CM_ASSERT_OK(cm_stream_cuda(low[i], &a));
        assert_non_null(a);
    }
    cm_stream_t *extra = NULL;
    EXPECT_FAIL(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &extra), CM_ERROR_BUSY,
                "all 16 low-priority streams of device 0 are acquired");
    assert_null(extra);
    EXPECT_FAIL(cm_stream_acquire(dev, CM_STREAM_PRIORITY_HIGH, &extra), CM_ERROR_BUSY, "all 4 high");

    cm_stream_pool_stats_t st;
    CM_ASSERT_OK(cm_stream_pool_stats(dev, &st));
    assert_int_equal(st.capacity[0], 16);
    assert_int_equal(st.capacity[1], 4);
    assert_int_equal(st.acquired[0], 16);
    assert_int_equal(st.acquired[1], 4);
    assert_int_equal(st.created[0] + st.created[1], 20);
    assert_int_equal(atomic_load(&xfake.streams), 20);

    for (int i = 0; i < 16; ++i) CM_ASSERT_OK(cm_stream_release(low[i]));
    for (int i = 0; i < 4; ++i) CM_ASSERT_OK(cm_stream_release(high[i]));
    CM_ASSERT_OK(cm_stream_pool_stats(dev, &st));
    assert_int_equal(st.acquired[0] + st.acquired[1], 0);
    assert_int_equal(st.peak_acquired[0], 16);

    /* acquiring again creates no CUDA stream */
    long created = atomic_load(&xfake.calls[XF_STREAM_CREATE]);
    for (int i = 0; i < 16; ++i) CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &low[i]));
    assert_int_equal(atomic_load(&xfake.calls[XF_STREAM_CREATE]), created);
    for (int i = 0; i < 16; ++i) CM_ASSERT_OK(cm_stream_release(low[i]));
    CM_ASSERT_OK(cm_stream_release(NULL));

    CM_ASSERT_OK(cm_device_close(dev));
    assert_int_equal(xfake_live(), 0); /* every CUDA stream destroyed with the device */
    EXPECT_CLEAN();
}

static void test_double_release_and_foreign_handles(void **state) {
    (void)state;
    cm_device_t *dev = xfake_open_dev(0);
    cm_stream_t *s = NULL;
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_HIGH, &s));
    CM_ASSERT_OK(cm_stream_release(s));
    EXPECT_FAIL(cm_stream_release(s), CM_ERROR_INVALID_ARGUMENT, "was already released");
    assert_non_null(strstr(cm_last_error()->message, "test_stream_pool.c:"));
    EXPECT_FAIL(cm_stream_synchronize(s), CM_ERROR_INVALID_ARGUMENT, "released");

    int not_a_stream = 0;
    EXPECT_FAIL(cm_stream_release((cm_stream_t *)(void *)&not_a_stream), CM_ERROR_INVALID_ARGUMENT,
                "is not a live cm_stream_t");
    /* an event is not a stream */
    cm_event_t *e = NULL;
    CM_ASSERT_OK(cm_event_acquire(dev, CM_EVENT_SYNC_ONLY, &e));
    EXPECT_FAIL(cm_stream_release((cm_stream_t *)(void *)e), CM_ERROR_INVALID_ARGUMENT,
                "is a cm_event_t, not a cm_stream_t");
    EXPECT_FAIL(cm_event_release((cm_event_t *)(void *)&not_a_stream), CM_ERROR_INVALID_ARGUMENT,
                "is not a live cm_event_t");
    CM_ASSERT_OK(cm_event_release(e));
    EXPECT_FAIL(cm_event_release(e), CM_ERROR_INVALID_ARGUMENT, "was already released");

    /* a stream of a closed device is not followed */
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
    CM_ASSERT_OK(cm_stream_release(s));
    CM_ASSERT_OK(cm_device_close(dev));
    EXPECT_FAIL(cm_stream_release(s), CM_ERROR_INVALID_ARGUMENT, "stream was already released");
    assert_int_equal(xfake_live(), 0);
    EXPECT_CLEAN();
}

static void test_close_with_acquired_streams(void **state) {
    (void)state;
    cm_device_t *dev = xfake_open_dev(0);
    cm_stream_t *a = NULL, *b = NULL;
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &a));
    int line_b = __LINE__ + 1;
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_HIGH, &b));
    cm_event_t *e = NULL;
    CM_ASSERT_OK(cm_event_acquire(dev, CM_EVENT_TIMING, &e));
    EXPECT_FAIL(cm_device_close(dev), CM_ERROR_BUSY, "2 streams are still acquired");
    char where[64];
    snprintf(where, sizeof where, "test_stream_pool.c:%d", line_b);
    assert_non_null(strstr(cm_last_error()->message, where));
    assert_non_null(strstr(cm_last_error()->message, "1 event is lent"));
    /* the device is still usable */
    CM_ASSERT_OK(cm_stream_synchronize(a));
    CM_ASSERT_OK(cm_stream_release(a));
    CM_ASSERT_OK(cm_stream_release(b));
    EXPECT_FAIL(cm_device_close(dev), CM_ERROR_BUSY, "0 streams are still acquired; 1 event is lent");
    CM_ASSERT_OK(cm_event_release(e));
    CM_ASSERT_OK(cm_device_close(dev));
    assert_int_equal(xfake_live(), 0);
    EXPECT_CLEAN();
}

/* A caller's CUDA stream adopted with cm_stream_wrap: usable wherever a library stream is, of
 * its device only, never destroyed by the library, stale after release, and counted by close. */
static void test_wrap_cuda_stream(void **state) {
    (void)state;
    cm_device_t *d0 = xfake_open_dev(0);
    cm_stream_t *w = NULL, *w2 = NULL;
    EXPECT_FAIL(cm_stream_wrap(d0, FAKE_STREAM(0), NULL), CM_ERROR_INVALID_ARGUMENT, "out is NULL");
    EXPECT_FAIL(cm_stream_wrap(d0, 0, &w), CM_ERROR_INVALID_ARGUMENT, "cannot wrap a default stream");
    EXPECT_FAIL(cm_stream_wrap(d0, cudaStreamPerThread, &w), CM_ERROR_INVALID_ARGUMENT,
                "default stream");
    EXPECT_FAIL(cm_stream_wrap(d0, FAKE_STREAM(1), &w), CM_ERROR_INVALID_ARGUMENT,
                "the stream belongs to device 1 but the device object to device 0");
    assert_null(w);
    EXPECT_FAIL(cm_stream_wrap(NULL, FAKE_STREAM(0), &w), CM_ERROR_INVALID_ARGUMENT, "dev");
    long destroys = atomic_load(&xfake.calls[XF_STREAM_DESTROY]);
    int line_w = __LINE__ + 1;
    CM_ASSERT_OK(cm_stream_wrap(d0, FAKE_STREAM(0), &w));
    CM_ASSERT_OK(cm_stream_wrap(d0, FAKE_STREAM(0), &w2)); /* two wrappers of one stream */
    assert_ptr_not_equal(w, w2);
    cudaStream_t cs = NULL;
    CM_ASSERT_OK(cm_stream_cuda(w, &cs));
    assert_ptr_equal(cs, FAKE_STREAM(0));
    long syncs = atomic_load(&xfake.calls[XF_STREAM_SYNC]);
    CM_ASSERT_OK(cm_stream_synchronize(w));
    assert_int_equal(atomic_load(&xfake.calls[XF_STREAM_SYNC]), syncs + 1);
    cm_device_t *owner = NULL;
    CM_ASSERT_OK(cm_stream_device(w, &owner));
    assert_ptr_equal(owner, d0);
    int ordinal = -1;
    CM_ASSERT_OK(cm__stream_for_launch(w, NULL, "k.c", 3, "cm_launch", &cs, &ordinal));
    assert_ptr_equal(cs, FAKE_STREAM(0));
    assert_int_equal(ordinal, 0);
    /* close is refused while a wrapper is alive, and says where it was made */
    EXPECT_FAIL(cm_device_close(d0), CM_ERROR_BUSY, "2 streams are still acquired");
    char where[64];
    snprintf(where, sizeof where, "test_stream_pool.c:%d", line_w);
    assert_non_null(strstr(cm_last_error()->message, where));
    CM_ASSERT_OK(cm_stream_release(w));
    EXPECT_FAIL(cm_stream_synchronize(w), CM_ERROR_INVALID_ARGUMENT, "wrapped CUDA stream");
    EXPECT_FAIL(cm_stream_release(w), CM_ERROR_INVALID_ARGUMENT, "stream");
    CM_ASSERT_OK(cm_stream_release(w2));
    /* the library never destroyed the caller's stream */
    assert_int_equal(atomic_load(&xfake.calls[XF_STREAM_DESTROY]), destroys);
    CM_ASSERT_OK(cm_device_close(d0));
    EXPECT_CLEAN();
}

static void test_configure(void **state) {
    (void)state;
    cm_device_t *dev = xfake_open_dev(0);
    cm_stream_pool_config_t cfg = {2, 1};
    CM_ASSERT_OK(cm_stream_pool_configure(dev, &cfg));
    cm_stream_t *s[3] = {NULL, NULL, NULL};
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s[0]));
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s[1]));
    EXPECT_FAIL(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s[2]), CM_ERROR_BUSY, "all 2 low");
    EXPECT_FAIL(cm_stream_pool_configure(dev, NULL), CM_ERROR_BUSY, "2 streams are acquired");
    CM_ASSERT_OK(cm_stream_release(s[0]));
    CM_ASSERT_OK(cm_stream_release(s[1]));
    cm_stream_pool_config_t big = {CM_STREAM_POOL_MAX + 1, 0};
    EXPECT_FAIL(cm_stream_pool_configure(dev, &big), CM_ERROR_INVALID_ARGUMENT, "257 low");
    cfg.low_streams = 40;
    CM_ASSERT_OK(cm_stream_pool_configure(dev, &cfg));
    assert_int_equal(atomic_load(&xfake.streams), 0); /* the old streams are destroyed */
    cm_stream_pool_stats_t st;
    CM_ASSERT_OK(cm_stream_pool_stats(dev, &st));
    assert_int_equal(st.capacity[0], 40);
    assert_int_equal(st.capacity[1], 1);
    /* a handle of the old pool is stale */
    EXPECT_FAIL(cm_stream_release(s[0]), CM_ERROR_INVALID_ARGUMENT, "already released");
    CM_ASSERT_OK(cm_device_close(dev));
    EXPECT_CLEAN();
    assert_int_equal(xfake_live(), 0);
}

static void test_cuda_failures(void **state) {
    (void)state;
    cm_device_t *dev = xfake_open_dev(0);
    cm_stream_t *s = NULL;
    xfake_fail(XF_STREAM_CREATE, cudaErrorMemoryAllocation, 1);
    assert_int_not_equal(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s), CM_OK);
    assert_null(s);
    assert_non_null(strstr(cm_last_error()->call, "cudaStreamCreateWithPriority"));
    cm_stream_pool_stats_t st;
    CM_ASSERT_OK(cm_stream_pool_stats(dev, &st));
    assert_int_equal(st.acquired[0], 0); /* the slot went back */
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));

    cm_event_t *e = NULL;
    xfake_fail(XF_EVENT_CREATE, cudaErrorMemoryAllocation, 1);
    assert_int_not_equal(cm_event_acquire(dev, CM_EVENT_TIMING, &e), CM_OK);
    assert_null(e);
    xfake_fail(XF_EVENT_RECORD, cudaErrorInvalidResourceHandle, 1);
    CM_ASSERT_OK(cm_stream_wait(s, s)); /* the same stream: nothing to do, no CUDA call */
    cm_stream_t *t = NULL;
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &t));
    assert_int_not_equal(cm_stream_wait(t, s), CM_OK);
    assert_non_null(strstr(cm_last_error()->call, "cudaEventRecord"));
    CM_ASSERT_OK(cm_stream_pool_stats(dev, &st));
    assert_int_equal(st.events_acquired, 0); /* the pooled event went back */
    CM_ASSERT_OK(cm_stream_wait(t, s));

    xfake_fail_clear();
    CM_ASSERT_OK(cm_stream_release(s));
    CM_ASSERT_OK(cm_stream_release(t));
    CM_ASSERT_OK(cm_device_close(dev));
    assert_int_equal(xfake_live(), 0);
    EXPECT_CLEAN();
}

/* ---------------------------------------------------------------- events, timers */

static void test_events_pooled_and_kept_apart(void **state) {
    (void)state;
    cm_device_t *dev = xfake_open_dev(0);
    cm_event_t *t1 = NULL, *s1 = NULL, *again = NULL;
    CM_ASSERT_OK(cm_event_acquire(dev, CM_EVENT_TIMING, &t1));
    CM_ASSERT_OK(cm_event_acquire(dev, CM_EVENT_SYNC_ONLY, &s1));
    cudaEvent_t ce_t1 = NULL, ce_s1 = NULL, ce_got = NULL;
    CM_ASSERT_OK(cm_event_cuda(t1, &ce_t1));
    CM_ASSERT_OK(cm_event_cuda(s1, &ce_s1));
    CM_ASSERT_OK(cm_event_release(t1));
    CM_ASSERT_OK(cm_event_release(s1));
    long created = atomic_load(&xfake.calls[XF_EVENT_CREATE]);
    CM_ASSERT_OK(cm_event_acquire(dev, CM_EVENT_SYNC_ONLY, &again));
    /* the pooled CUDA event comes back under a new handle; a sync-only event never comes back
     * as a timing one; the released handle stays stale */
    CM_ASSERT_OK(cm_event_cuda(again, &ce_got));
    assert_ptr_equal(ce_got, ce_s1);
    assert_ptr_not_equal(again, s1);
    EXPECT_FAIL(cm_event_cuda(s1, &ce_got), CM_ERROR_INVALID_ARGUMENT, "already released");
    cm_event_t *t2 = NULL;
    CM_ASSERT_OK(cm_event_acquire(dev, CM_EVENT_TIMING, &t2));
    CM_ASSERT_OK(cm_event_cuda(t2, &ce_got));
    assert_ptr_equal(ce_got, ce_t1);
    assert_int_equal(atomic_load(&xfake.calls[XF_EVENT_CREATE]), created);

    cm_stream_t *s = NULL;
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
    float ms = -1.0f;
    EXPECT_FAIL(cm_event_elapsed_ms(t2, again, &ms), CM_ERROR_INVALID_ARGUMENT,
                "stop is a synchronisation-only event");
    cm_event_t *t3 = NULL;
    CM_ASSERT_OK(cm_event_acquire(dev, CM_EVENT_TIMING, &t3));
    EXPECT_FAIL(cm_event_elapsed_ms(t2, t3, &ms), CM_ERROR_INVALID_ARGUMENT, "start was never recorded");
    CM_ASSERT_OK(cm_event_record(t2, s));
    CM_ASSERT_OK(cm_event_record(t3, s));
    xfake_fail(XF_ELAPSED, cudaErrorNotReady, 1);
    EXPECT_FAIL(cm_event_elapsed_ms(t2, t3, &ms), CM_ERROR_BUSY, "has not completed");
    CM_ASSERT_OK(cm_event_synchronize(t3));
    CM_ASSERT_OK(cm_event_elapsed_ms(t2, t3, &ms));
    assert_true(ms > 0.0f);
    bool done = false;
    CM_ASSERT_OK(cm_event_query(t3, &done));
    assert_true(done);
    xfake_fail(XF_EVENT_QUERY, cudaErrorNotReady, 1);
    CM_ASSERT_OK(cm_event_query(t3, &done));
    assert_false(done);
    CM_ASSERT_OK(cm_stream_wait_event(s, again));
    cudaEvent_t ce = NULL;
    CM_ASSERT_OK(cm_event_cuda(t3, &ce));
    assert_non_null(ce);

    cm_stream_pool_stats_t st;
    CM_ASSERT_OK(cm_stream_pool_stats(dev, &st));
    assert_int_equal(st.events_timing, 2);
    assert_int_equal(st.events_sync_only, 1);
    assert_int_equal(st.events_acquired, 3);

    CM_ASSERT_OK(cm_event_release(t2));
    CM_ASSERT_OK(cm_event_release(t3));
    CM_ASSERT_OK(cm_event_release(again));
    CM_ASSERT_OK(cm_stream_release(s));
    CM_ASSERT_OK(cm_device_close(dev));
    assert_int_equal(xfake_live(), 0);
    EXPECT_CLEAN();
}

static int calls_made;
static cm_status_t timed_work(void *user, cm_stream_t *s) {
    (void)s;
    ++*(int *)user;
    return CM_OK;
}
static cm_status_t failing_work(void *user, cm_stream_t *s) {
    (void)user;
    (void)s;
    return cm__fail(CM_ERROR_INVALID_LAUNCH, 0, __FILE__, __LINE__, "work", "a hint", "work failed");
}

static void test_timers(void **state) {
    (void)state;
    cm_device_t *dev = xfake_open_dev(0);
    cm_stream_t *s = NULL;
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
    cm_timer_t *t = NULL;
    CM_ASSERT_OK(cm_timer_create(dev, &t));
    float ms = 0.0f;
    EXPECT_FAIL(cm_timer_stop(t), CM_ERROR_INVALID_ARGUMENT, "never started");
    EXPECT_FAIL(cm_timer_elapsed_ms(t, &ms), CM_ERROR_INVALID_ARGUMENT, "never started");
    CM_ASSERT_OK(cm_timer_start(t, s));
    EXPECT_FAIL(cm_timer_elapsed_ms(t, &ms), CM_ERROR_INVALID_ARGUMENT, "started but not stopped");
    CM_ASSERT_OK(cm_timer_stop(t));
    xfake.elapsed_next = 2.5f;
    CM_ASSERT_OK(cm_timer_elapsed_ms(t, &ms));
    assert_true(ms == 2.5f);
    CM_ASSERT_OK(cm_timer_destroy(t));
    EXPECT_FAIL(cm_timer_destroy(t), CM_ERROR_INVALID_ARGUMENT, "timer was already destroyed");
    CM_ASSERT_OK(cm_timer_destroy(NULL));

    /* the helper: 4 warm-up calls untimed, 5 timed; the simulation's times are 10, 11, ... */
    calls_made = 0;
    xfake.elapsed_next = 10.0f;
    cm_timing_stats_t r;
    CM_ASSERT_OK(cm_time_callable(s, timed_work, &calls_made, 4, 5, &r));
    assert_int_equal(calls_made, 9);
    assert_int_equal(r.reps, 5);
    assert_true(r.min_ms == 10.0 && r.median_ms == 12.0 && r.max_ms == 14.0);
    CM_ASSERT_OK(cm_time_callable(s, timed_work, &calls_made, 0, 4, &r));
    assert_true(r.median_ms == 16.5); /* 15, 16, 17, 18 */
    EXPECT_FAIL(cm_time_callable(s, failing_work, NULL, 0, 3, &r), CM_ERROR_INVALID_LAUNCH,
                "work failed");
    EXPECT_FAIL(cm_time_callable(s, timed_work, &calls_made, 0, 0, &r), CM_ERROR_INVALID_ARGUMENT,
                "reps is 0");

    cm_stream_pool_stats_t st;
    CM_ASSERT_OK(cm_stream_pool_stats(dev, &st));
    assert_int_equal(st.events_acquired, 0); /* timers gave their events back */
    CM_ASSERT_OK(cm_stream_release(s));
    CM_ASSERT_OK(cm_device_close(dev));
    assert_int_equal(xfake_live(), 0);
    EXPECT_CLEAN();
}

/* ---------------------------------------------------------------- dependencies, faults */

static void bump(void *user) {
    ++*(int *)user;
}

static void test_dependencies_callbacks_devices(void **state) {
    (void)state;
    cm_device_t *d0 = xfake_open_dev(0), *d1 = xfake_open_dev(1), *d0b = xfake_open_dev(0);
    cm_stream_t *a = NULL, *b = NULL, *c = NULL, *e = NULL;
    CM_ASSERT_OK(cm_stream_acquire(d0, CM_STREAM_PRIORITY_LOW, &a));
    CM_ASSERT_OK(cm_stream_acquire(d0, CM_STREAM_PRIORITY_HIGH, &b));
    CM_ASSERT_OK(cm_stream_acquire(d1, CM_STREAM_PRIORITY_LOW, &c));
    CM_ASSERT_OK(cm_stream_acquire(d0b, CM_STREAM_PRIORITY_LOW, &e));
    long waits = atomic_load(&xfake.calls[XF_WAIT_EVENT]);
    CM_ASSERT_OK(cm_stream_wait(b, a));
    assert_int_equal(atomic_load(&xfake.calls[XF_WAIT_EVENT]), waits + 1);
    EXPECT_FAIL(cm_stream_wait(a, c), CM_ERROR_INVALID_ARGUMENT,
                "waiter belongs to device 0 but signaler to device 1");
    EXPECT_FAIL(cm_stream_wait(a, e), CM_ERROR_INVALID_ARGUMENT, "two device objects");

    /* a launch on a stream of another device than the current one runs on the stream's device */
    cudaStream_t cs = NULL;
    int launch_device = -1;
    CM_ASSERT_OK(cm__stream_for_launch(c, NULL, "k.c", 7, "cm_launch", &cs, &launch_device));
    assert_int_equal(launch_device, 1);
    assert_non_null(cs);
    cm_event_t *ev = NULL;
    CM_ASSERT_OK(cm_event_acquire(d1, CM_EVENT_SYNC_ONLY, &ev));
    EXPECT_FAIL(cm_event_record(ev, a), CM_ERROR_INVALID_ARGUMENT,
                "the event belongs to device 1 but the stream to device 0");
    CM_ASSERT_OK(cm_event_release(ev));

    int n = 0;
    CM_ASSERT_OK(cm_stream_host_callback(a, bump, &n));
    assert_int_equal(n, 1);

    /* an asynchronous fault names the stream's last library launch */
    CM_ASSERT_OK(cm__stream_for_launch(a, NULL, "my_kernels.c", 42, "cm_launch", &cs, &launch_device));
    xfake_fail(XF_STREAM_SYNC, cudaErrorInvalidValue, 1);
    assert_int_not_equal(cm_stream_synchronize(a), CM_OK);
    assert_non_null(strstr(cm_last_error()->message, "the last launch the library queued on this "
                                                     "stream"));
    assert_non_null(strstr(cm_last_error()->message, "my_kernels.c:42"));
    assert_non_null(strstr(cm_last_error()->hint, "CUDAMODEL_SYNC=1"));
    xfake_fail(XF_DEVICE_SYNC, cudaErrorInvalidValue, 1);
    assert_int_not_equal(cm_device_synchronize(d0), CM_OK);
    assert_non_null(strstr(cm_last_error()->message, "my_kernels.c:42"));
    CM_ASSERT_OK(cm_device_synchronize(d0));
    /* a library operation (kernels.h, cm_gemm) that queues on the stream is named instead */
    CM_ASSERT_OK(cm__stream_for_device(a, 0, "buffers", "cm_reduce_sum_f32", &cs));
    xfake_fail(XF_STREAM_SYNC, cudaErrorInvalidValue, 1);
    assert_int_not_equal(cm_stream_synchronize(a), CM_OK);
    assert_non_null(strstr(cm_last_error()->message, "was a kernel of cm_reduce_sum_f32"));
    assert_null(strstr(cm_last_error()->message, "my_kernels.c:42"));
    xfake_fail(XF_DEVICE_SYNC, cudaErrorInvalidValue, 1);
    assert_int_not_equal(cm_device_synchronize(d0), CM_OK);
    assert_non_null(strstr(cm_last_error()->message, "cm_reduce_sum_f32"));
    /* a stream of another device is refused and records nothing */
    EXPECT_FAIL(cm__stream_for_device(c, 0, "buffers", "cm_gemm", &cs), CM_ERROR_INVALID_ARGUMENT,
                "stream belongs to device 1");
    CM_ASSERT_OK(cm_device_synchronize(d0));
    bool idle = false;
    CM_ASSERT_OK(cm_stream_query(a, &idle));
    assert_true(idle);
    xfake_fail(XF_STREAM_QUERY, cudaErrorNotReady, 1);
    CM_ASSERT_OK(cm_stream_query(a, &idle));
    assert_false(idle);
    cm_device_t *owner = NULL;
    CM_ASSERT_OK(cm_stream_device(c, &owner));
    assert_ptr_equal(owner, d1);

    CM_ASSERT_OK(cm_stream_release(a));
    CM_ASSERT_OK(cm_stream_release(b));
    CM_ASSERT_OK(cm_stream_release(c));
    CM_ASSERT_OK(cm_stream_release(e));
    CM_ASSERT_OK(cm_device_close(d0));
    CM_ASSERT_OK(cm_device_close(d1));
    CM_ASSERT_OK(cm_device_close(d0b));
    assert_int_equal(xfake_live(), 0);
    EXPECT_CLEAN();
}

/* ---------------------------------------------------------------- graphs */

static void test_graphs(void **state) {
    (void)state;
    cm_device_t *dev = xfake_open_dev(0), *d1 = xfake_open_dev(1);
    cm_stream_t *s = NULL, *other = NULL;
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
    CM_ASSERT_OK(cm_stream_acquire(d1, CM_STREAM_PRIORITY_LOW, &other));
    cm_graph_t *g = NULL;
    EXPECT_FAIL(cm_graph_capture_end(s, &g), CM_ERROR_INVALID_ARGUMENT, "not being captured");
    CM_ASSERT_OK(cm_graph_capture_begin(s));
    EXPECT_FAIL(cm_graph_capture_begin(s), CM_ERROR_BUSY, "already being captured");
    EXPECT_FAIL(cm_stream_release(s), CM_ERROR_BUSY, "being captured");
    CM_ASSERT_OK(cm_graph_capture_end(s, &g));
    size_t nodes = 0;
    CM_ASSERT_OK(cm_graph_node_count(g, &nodes));
    assert_int_equal(nodes, 3);
    CM_ASSERT_OK(cm_graph_launch(g, s));
    EXPECT_FAIL(cm_graph_launch(g, other), CM_ERROR_INVALID_ARGUMENT,
                "the graph belongs to device 0 but the stream to device 1");
    CM_ASSERT_OK(cm_graph_destroy(g));
    EXPECT_FAIL(cm_graph_destroy(g), CM_ERROR_INVALID_ARGUMENT, "graph was already destroyed");
    EXPECT_FAIL(cm_graph_launch(g, s), CM_ERROR_INVALID_ARGUMENT, "graph was already destroyed");

    /* an invalidated capture */
    CM_ASSERT_OK(cm_graph_capture_begin(s));
    xfake_fail(XF_END_CAPTURE, cudaErrorStreamCaptureInvalidated, 1);
    g = NULL;
    EXPECT_FAIL(cm_graph_capture_end(s, &g), CM_ERROR_NOT_SUPPORTED, "was invalidated");
    assert_null(g);
    /* the capture is over: the stream can be released */
    CM_ASSERT_OK(cm_stream_release(s));
    CM_ASSERT_OK(cm_stream_release(other));
    CM_ASSERT_OK(cm_device_close(dev));
    CM_ASSERT_OK(cm_device_close(d1));
    assert_int_equal(xfake_live(), 0);
    EXPECT_CLEAN();
}

/* ---------------------------------------------------------------- arguments */

static void test_argument_checks(void **state) {
    (void)state;
    cm_device_t *dev = xfake_open_dev(0);
    cm_stream_t *s = NULL;
    cm_event_t *e = NULL;
    cm_timer_t *t = NULL;
    cm_graph_t *g = NULL;
    float ms = 0.0f;
    bool flag = false;
    size_t n = 0;
    cm_stream_pool_stats_t st;
    cm_timing_stats_t ts;
    cudaStream_t cs = NULL;
    cudaEvent_t ce = NULL;
    cm_device_t *owner = NULL;
    int junk = 0;
    void *bogus = &junk;

    EXPECT_FAIL(cm_stream_pool_configure(NULL, NULL), CM_ERROR_INVALID_ARGUMENT, "dev");
    EXPECT_FAIL(cm_stream_pool_configure((cm_device_t *)bogus, NULL), CM_ERROR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(cm_stream_pool_stats(dev, NULL), CM_ERROR_INVALID_ARGUMENT, "out is NULL");
    EXPECT_FAIL(cm_stream_pool_stats(NULL, &st), CM_ERROR_INVALID_ARGUMENT, "dev");
    EXPECT_FAIL(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, NULL), CM_ERROR_INVALID_ARGUMENT,
                "out is NULL");
    EXPECT_FAIL(cm_stream_acquire(NULL, CM_STREAM_PRIORITY_LOW, &s), CM_ERROR_INVALID_ARGUMENT, "dev");
    EXPECT_FAIL(cm_stream_acquire(dev, (cm_stream_priority_t)7, &s), CM_ERROR_INVALID_ARGUMENT,
                "priority 7");
    EXPECT_FAIL(cm_stream_device(NULL, &owner), CM_ERROR_INVALID_ARGUMENT, "stream is NULL");
    EXPECT_FAIL(cm_stream_synchronize(NULL), CM_ERROR_INVALID_ARGUMENT, "stream is NULL");
    EXPECT_FAIL(cm_stream_query(NULL, &flag), CM_ERROR_INVALID_ARGUMENT, "stream is NULL");
    EXPECT_FAIL(cm_device_synchronize(NULL), CM_ERROR_INVALID_ARGUMENT, "dev");
    EXPECT_FAIL(cm_stream_wait(NULL, NULL), CM_ERROR_INVALID_ARGUMENT, "waiter is NULL");
    EXPECT_FAIL(cm_stream_host_callback(NULL, bump, NULL), CM_ERROR_INVALID_ARGUMENT, "stream is NULL");
    EXPECT_FAIL(cm_stream_cuda(NULL, &cs), CM_ERROR_INVALID_ARGUMENT, "stream is NULL");
    EXPECT_FAIL(cm_event_acquire(dev, CM_EVENT_TIMING, NULL), CM_ERROR_INVALID_ARGUMENT, "out is NULL");
    EXPECT_FAIL(cm_event_acquire(dev, (cm_event_kind_t)9, &e), CM_ERROR_INVALID_ARGUMENT, "kind 9");
    EXPECT_FAIL(cm_event_acquire(NULL, CM_EVENT_TIMING, &e), CM_ERROR_INVALID_ARGUMENT, "dev");
    CM_ASSERT_OK(cm_event_release(NULL));
    EXPECT_FAIL(cm_event_record(NULL, NULL), CM_ERROR_INVALID_ARGUMENT, "event is NULL");
    EXPECT_FAIL(cm_stream_wait_event(NULL, NULL), CM_ERROR_INVALID_ARGUMENT, "event is NULL");
    EXPECT_FAIL(cm_event_synchronize(NULL), CM_ERROR_INVALID_ARGUMENT, "event is NULL");
    EXPECT_FAIL(cm_event_query(NULL, &flag), CM_ERROR_INVALID_ARGUMENT, "event is NULL");
    EXPECT_FAIL(cm_event_elapsed_ms(NULL, NULL, &ms), CM_ERROR_INVALID_ARGUMENT, "start is NULL");
    EXPECT_FAIL(cm_event_cuda(NULL, &ce), CM_ERROR_INVALID_ARGUMENT, "event is NULL");
    EXPECT_FAIL(cm_timer_create(dev, NULL), CM_ERROR_INVALID_ARGUMENT, "out is NULL");
    EXPECT_FAIL(cm_timer_create(NULL, &t), CM_ERROR_INVALID_ARGUMENT, "dev");
    assert_null(t);
    EXPECT_FAIL(cm_timer_destroy((cm_timer_t *)bogus), CM_ERROR_INVALID_ARGUMENT, "is not a live cm_timer_t");
    EXPECT_FAIL(cm_timer_start(NULL, NULL), CM_ERROR_INVALID_ARGUMENT, "timer");
    EXPECT_FAIL(cm_timer_stop(NULL), CM_ERROR_INVALID_ARGUMENT, "timer");
    EXPECT_FAIL(cm_timer_elapsed_ms(NULL, &ms), CM_ERROR_INVALID_ARGUMENT, "timer");
    EXPECT_FAIL(cm_time_callable(NULL, timed_work, NULL, 0, 1, &ts), CM_ERROR_INVALID_ARGUMENT,
                "stream is NULL");
    EXPECT_FAIL(cm_time_callable(NULL, NULL, NULL, 0, 1, &ts), CM_ERROR_INVALID_ARGUMENT, "fn is NULL");
    EXPECT_FAIL(cm_graph_capture_begin(NULL), CM_ERROR_INVALID_ARGUMENT, "stream is NULL");
    EXPECT_FAIL(cm_graph_capture_end(NULL, NULL), CM_ERROR_INVALID_ARGUMENT, "out is NULL");
    EXPECT_FAIL(cm_graph_capture_end(NULL, &g), CM_ERROR_INVALID_ARGUMENT, "stream is NULL");
    EXPECT_FAIL(cm_graph_launch(NULL, NULL), CM_ERROR_INVALID_ARGUMENT, "graph");
    EXPECT_FAIL(cm_graph_node_count(NULL, &n), CM_ERROR_INVALID_ARGUMENT, "graph");
    EXPECT_FAIL(cm_graph_node_count((cm_graph_t *)bogus, NULL), CM_ERROR_INVALID_ARGUMENT, "count is NULL");
    EXPECT_FAIL(cm_graph_destroy((cm_graph_t *)bogus), CM_ERROR_INVALID_ARGUMENT, "is not a live cm_graph_t");
    CM_ASSERT_OK(cm_graph_destroy(NULL));

    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
    EXPECT_FAIL(cm_stream_device(s, NULL), CM_ERROR_INVALID_ARGUMENT, "dev is NULL");
    EXPECT_FAIL(cm_stream_query(s, NULL), CM_ERROR_INVALID_ARGUMENT, "idle is NULL");
    EXPECT_FAIL(cm_stream_host_callback(s, NULL, NULL), CM_ERROR_INVALID_ARGUMENT, "fn is NULL");
    EXPECT_FAIL(cm_stream_cuda(s, NULL), CM_ERROR_INVALID_ARGUMENT, "out is NULL");
    EXPECT_FAIL(cm_time_callable(s, timed_work, NULL, -1, 1, &ts), CM_ERROR_INVALID_ARGUMENT,
                "warmup -1");
    CM_ASSERT_OK(cm_event_acquire(dev, CM_EVENT_TIMING, &e));
    EXPECT_FAIL(cm_event_query(e, NULL), CM_ERROR_INVALID_ARGUMENT, "done is NULL");
    EXPECT_FAIL(cm_event_elapsed_ms(e, e, NULL), CM_ERROR_INVALID_ARGUMENT, "ms is NULL");
    EXPECT_FAIL(cm_event_cuda(e, NULL), CM_ERROR_INVALID_ARGUMENT, "out is NULL");
    EXPECT_FAIL(cm_event_record(e, NULL), CM_ERROR_INVALID_ARGUMENT, "stream is NULL");
    EXPECT_FAIL(cm_stream_wait(s, NULL), CM_ERROR_INVALID_ARGUMENT, "signaler is NULL");
    CM_ASSERT_OK(cm_event_release(e));
    CM_ASSERT_OK(cm_stream_release(s));
    CM_ASSERT_OK(cm_device_close(dev));
    EXPECT_CLEAN();
    assert_int_equal(xfake_live(), 0);
}

/* ---------------------------------------------------------------- threads */

#define THREADS 8
#define ROUNDS 2000
#define SLOTS 6 /* 4 low + 2 high: fewer streams than threads, so they contend */

static cm_device_t *shared_dev;
static cm_stream_t *slot_handle[SLOTS];
static atomic_int slot_owner[SLOTS]; /* 0 free, else thread id + 1 */
static atomic_int double_handouts, failures, unknown_handles;

static cudaStream_t slot_cuda[SLOTS];

/* Each acquire gives a new handle; the pooled stream behind it is named by its CUDA stream. */
static int slot_of(const cm_stream_t *s) {
    cudaStream_t cs = NULL;
    if (cm_stream_cuda(s, &cs) != CM_OK) return -1;
    for (int i = 0; i < SLOTS; ++i)
        if (slot_cuda[i] == cs) return i;
    return -1;
}

static void *pool_worker(void *arg) {
    int id = (int)(intptr_t)arg;
    for (int r = 0; r < ROUNDS; ++r) {
        cm_stream_priority_t p = (r + id) % 3 == 0 ? CM_STREAM_PRIORITY_HIGH : CM_STREAM_PRIORITY_LOW;
        cm_stream_t *s = NULL;
        cm_status_t st = cm_stream_acquire(shared_dev, p, &s);
        if (st == CM_ERROR_BUSY) continue; /* every stream of the class is lent: allowed */
        if (st != CM_OK) {
            atomic_fetch_add(&failures, 1);
            continue;
        }
        int k = slot_of(s);
        if (k < 0) {
            atomic_fetch_add(&unknown_handles, 1);
            continue;
        }
        int free_mark = 0;
        if (!atomic_compare_exchange_strong(&slot_owner[k], &free_mark, id + 1))
            atomic_fetch_add(&double_handouts, 1); /* someone else holds it */
        cm_event_t *e = NULL;
        if (cm_event_acquire(shared_dev, (r & 1) ? CM_EVENT_TIMING : CM_EVENT_SYNC_ONLY, &e) != CM_OK ||
            cm_event_record(e, s) != CM_OK || cm_event_release(e) != CM_OK)
            atomic_fetch_add(&failures, 1);
        int mine = id + 1;
        if (!atomic_compare_exchange_strong(&slot_owner[k], &mine, 0))
            atomic_fetch_add(&double_handouts, 1);
        if (cm_stream_release(s) != CM_OK) atomic_fetch_add(&failures, 1);
    }
    return NULL;
}

static void acquire_every_slot(cm_stream_t **out) {
    for (int i = 0; i < 4; ++i) CM_ASSERT_OK(cm_stream_acquire(shared_dev, CM_STREAM_PRIORITY_LOW, &out[i]));
    for (int i = 4; i < SLOTS; ++i)
        CM_ASSERT_OK(cm_stream_acquire(shared_dev, CM_STREAM_PRIORITY_HIGH, &out[i]));
}

static void test_threads_share_a_pool(void **state) {
    (void)state;
    shared_dev = xfake_open_dev(0);
    cm_stream_pool_config_t cfg = {4, 2};
    CM_ASSERT_OK(cm_stream_pool_configure(shared_dev, &cfg));
    acquire_every_slot(slot_handle);
    for (int i = 0; i < SLOTS; ++i) CM_ASSERT_OK(cm_stream_cuda(slot_handle[i], &slot_cuda[i]));
    for (int i = 0; i < SLOTS; ++i) CM_ASSERT_OK(cm_stream_release(slot_handle[i]));
    atomic_store(&double_handouts, 0);
    atomic_store(&failures, 0);
    atomic_store(&unknown_handles, 0);
    for (int i = 0; i < SLOTS; ++i) atomic_store(&slot_owner[i], 0);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; ++i)
        assert_int_equal(pthread_create(&th[i], NULL, pool_worker, (void *)(intptr_t)i), 0);
    for (int i = 0; i < THREADS; ++i) pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&double_handouts), 0);
    assert_int_equal(atomic_load(&failures), 0);
    assert_int_equal(atomic_load(&unknown_handles), 0);
    cm_stream_pool_stats_t st;
    CM_ASSERT_OK(cm_stream_pool_stats(shared_dev, &st));
    assert_int_equal(st.acquired[0] + st.acquired[1], 0); /* nothing lost */
    assert_int_equal(st.events_acquired, 0);
    assert_int_equal(st.created[0] + st.created[1], SLOTS);
    /* every stream can be acquired at once afterwards: none was lost */
    cm_stream_t *all[SLOTS];
    acquire_every_slot(all);
    for (int i = 0; i < SLOTS; ++i) CM_ASSERT_OK(cm_stream_release(all[i]));
    CM_ASSERT_OK(cm_device_close(shared_dev));
    assert_int_equal(xfake_live(), 0);
    EXPECT_CLEAN();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_acquire_all_release_reuse, xfake_setup2, xfake_teardown),
        cmocka_unit_test_setup_teardown(test_double_release_and_foreign_handles, xfake_setup2, xfake_teardown),
        cmocka_unit_test_setup_teardown(test_close_with_acquired_streams, xfake_setup2, xfake_teardown),
        cmocka_unit_test_setup_teardown(test_configure, xfake_setup2, xfake_teardown),
        cmocka_unit_test_setup_teardown(test_wrap_cuda_stream, xfake_setup2, xfake_teardown),
        cmocka_unit_test_setup_teardown(test_cuda_failures, xfake_setup2, xfake_teardown),
        cmocka_unit_test_setup_teardown(test_events_pooled_and_kept_apart, xfake_setup2, xfake_teardown),
        cmocka_unit_test_setup_teardown(test_timers, xfake_setup2, xfake_teardown),
        cmocka_unit_test_setup_teardown(test_dependencies_callbacks_devices, xfake_setup2, xfake_teardown),
        cmocka_unit_test_setup_teardown(test_graphs, xfake_setup2, xfake_teardown),
        cmocka_unit_test_setup_teardown(test_argument_checks, xfake_setup2, xfake_teardown),
        cmocka_unit_test_setup_teardown(test_threads_share_a_pool, xfake_setup2, xfake_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
