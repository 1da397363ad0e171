/*
 * FAULT INJECTION: what a destroy, release or close does when it cannot finish (issue #17), on
 * the simulated CUDA of test_full_fake.h. The API fuzzer's inputs in tests/fuzz/regressions/
 * show each case inside a longer sequence; these tests state the rules one by one:
 *   - a destroy whose device scope cannot be entered (cuCtxPushCurrent fails) is refused before
 *     anything is released: the object stays alive and the destroy may be repeated (buffers,
 *     host buffers, graphs, device objects);
 *   - a synchronous buffer (and a split) is not destroyed while the thread captures a graph
 *     (CUDA would refuse the cudaFree and invalidate the capture): CM_ERROR_BUSY, still alive;
 *   - memory whose free cannot happen now (a failed cudaFreeAsync during a capture, whose
 *     cudaFree fallback CUDA would refuse) goes on the device's deferred-free list: freed at the
 *     end of the capture, or when the device is closed;
 *   - cm_graph_capture_end may be repeated after it failed to enter the device's scope;
 *   - cm_device_close reports what it could not release (a failed cudaStreamDestroy);
 *   - a device's or a set's close is refused while the thread captures a graph;
 *   - a memory pool that a close of the library's own device object (a set's member) could not
 *     destroy is destroyed at the next open or close of that device;
 *   - cm_device_staging_configure changes nothing when the device's scope cannot be entered;
 *   - a sticky error recorded on one device leaves no runtime error behind for another;
 *   - a copy between two devices charges a sticky error to the context that holds it;
 *   - a pageable copy on a stream being captured is captured as one copy of the caller's memory,
 *     never through the device's staging buffers (which later copies reuse).
 * Every test ends with nothing leaked and no runtime call made without a current context.
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/multi.h>
#include <cudamodel/stream.h>

#include "handle.h"
#include "test_full_fake.h"

#define KiB ((size_t)1 << 10)

static int setup(void **state) {
    (void)state;
    cmf_install(2, 64 * KiB * 1024);
    return 0;
}

/* No live handle of any kind. */
static void expect_no_handles(void) {
    for (int k = 1; k < CM__KIND_COUNT; ++k) {
        size_t live = cm__handle_live_count((cm__kind_t)k);
        if (live != 0) fail_msg("%zu live %s handle(s) left", live, cm__kind_name((cm__kind_t)k));
    }
}

/* Nothing live, nothing held, no implicit context, no violation. */
static void expect_clean(void) {
    expect_no_handles();
    char why[256];
    if (cmf_outstanding(why, sizeof why) != 0) fail_msg("the library still holds %s", why);
    for (const cmf_alloc_t *a = cmf.allocs; a != NULL; a = a->next)
        if (a->refused_in_capture && !a->orphan)
            fail_msg("%zu bytes whose free was refused in a capture were never freed", a->n);
    if (cmf.violations != 0) fail_msg("simulation violation: %s", cmf.last_violation);
    if (cmf.implicit_ctx != 0)
        fail_msg("runtime call with no current context: %s", cmf.implicit_what);
    assert_int_equal(cmf_ctx_depth(), 0);
    assert_int_equal(cmf_ctx_bound(), -1);
}

static int teardown(void **state) {
    (void)state;
    cmf_disarm();
    cmf_uninstall();
    return 0;
}

/* Fail the next cuCtxPushCurrent of this thread (a device scope that cannot be entered). */
static void fail_next_push(void) {
    cmf_arm(CMF_IDX_ctx_push_current, 0, 1, cudaErrorUnknown);
}

/* The simulated allocation of a buffer (NULL: none). */
static cmf_alloc_t *alloc_of(cm_buffer_t *b) {
    void *p = NULL;
    CM_ASSERT_OK(cm_buffer_device_ptr(b, &p));
    return cmf_find_exact(p);
}

static bool buffer_alive(const cm_buffer_t *b) {
    cm_buffer_info_t info;
    return cm_buffer_info(b, &info) == CM_OK;
}

/* ---------------------------------------------------------------- scope failures */

static void test_buffer_destroy_scope_failure_keeps_it(void **state) {
    (void)state;
    cm_device_t *dev = NULL;
    cm_buffer_t *buf = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    CM_ASSERT_OK(cm_buffer_create(dev, 4 * KiB, &buf));
    fail_next_push();
    cm_status_t st = cm_buffer_destroy(buf);
    assert_int_not_equal(cmf_disarm(), 0);
    assert_int_equal(st, CM_ERROR_CUDA);
    assert_non_null(strstr(cm_last_error()->call, "cuCtxPushCurrent"));
    assert_true(buffer_alive(buf)); /* nothing released: the destroy may be repeated */
    assert_non_null(alloc_of(buf));
    CM_ASSERT_OK(cm_buffer_destroy(buf));
    CM_ASSERT_OK(cm_device_close(dev));
    expect_clean();
}

static void test_host_buffer_destroy_scope_failure_keeps_it(void **state) {
    (void)state;
    cm_device_t *dev = NULL;
    cm_host_buffer_t *h = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    CM_ASSERT_OK(cm_host_buffer_create(dev, 4 * KiB, 0, &h));
    fail_next_push();
    assert_int_equal(cm_host_buffer_destroy(h), CM_ERROR_CUDA);
    cmf_disarm();
    void *p = NULL;
    CM_ASSERT_OK(cm_host_buffer_data(h, &p));
    CM_ASSERT_OK(cm_host_buffer_destroy(h));
    CM_ASSERT_OK(cm_device_close(dev));
    expect_clean();
}

static void test_graph_destroy_scope_failure_keeps_it(void **state) {
    (void)state;
    cm_device_t *dev = NULL;
    cm_stream_t *s = NULL;
    cm_buffer_t *buf = NULL;
    cm_graph_t *g = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    CM_ASSERT_OK(cm_buffer_create(dev, KiB, &buf));
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
    CM_ASSERT_OK(cm_graph_capture_begin(s));
    CM_ASSERT_OK(cm_buffer_set(s, buf, 0, KiB, 7));
    CM_ASSERT_OK(cm_graph_capture_end(s, &g));
    fail_next_push();
    assert_int_equal(cm_graph_destroy(g), CM_ERROR_CUDA);
    cmf_disarm();
    size_t nodes = 0;
    CM_ASSERT_OK(cm_graph_node_count(g, &nodes)); /* still alive */
    CM_ASSERT_OK(cm_graph_destroy(g));
    CM_ASSERT_OK(cm_stream_release(s));
    CM_ASSERT_OK(cm_buffer_destroy(buf));
    CM_ASSERT_OK(cm_device_close(dev));
    expect_clean();
}

static void test_device_close_scope_failure_keeps_it(void **state) {
    (void)state;
    cm_device_t *dev = NULL;
    cm_stream_t *s = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s)); /* a CUDA stream made */
    CM_ASSERT_OK(cm_stream_release(s));
    fail_next_push();
    assert_int_equal(cm_device_close(dev), CM_ERROR_CUDA);
    cmf_disarm();
    int ordinal = -1;
    CM_ASSERT_OK(cm_device_ordinal(dev, &ordinal)); /* still open: nothing was released */
    CM_ASSERT_OK(cm_device_close(dev));
    expect_clean(); /* the pool and the pooled stream were destroyed by the second close */
}

static void test_device_close_lists_what_it_left(void **state) {
    (void)state;
    cm_device_t *dev = NULL;
    cm_stream_t *s = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
    CM_ASSERT_OK(cm_stream_release(s));
    cmf_arm(CMF_IDX_stream_destroy, 0, 1, cudaErrorUnknown);
    cm_status_t st = cm_device_close(dev);
    cmf_disarm();
    assert_int_equal(st, CM_ERROR_CUDA);
    const cm_error_t *e = cm_last_error();
    assert_non_null(strstr(e->message, "is closed, but not everything"));
    assert_non_null(strstr(e->message, "1 CUDA stream"));
    assert_non_null(strstr(e->message, "cudaStreamDestroy"));
    int ordinal = -1;
    assert_int_equal(cm_device_ordinal(dev, &ordinal), CM_ERROR_INVALID_ARGUMENT); /* closed */
    expect_clean(); /* the stream the failed destroy kept is the driver's (an orphan) */
}

static void test_staging_configure_scope_failure_changes_nothing(void **state) {
    (void)state;
    cm_device_t *dev = NULL;
    cm_buffer_t *buf = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    const cm_staging_config_t small = {4 * KiB, 2, 1, 1};
    CM_ASSERT_OK(cm_device_staging_configure(dev, &small));
    CM_ASSERT_OK(cm_buffer_create(dev, 16 * KiB, &buf));
    unsigned char *host = calloc(16 * KiB, 1);
    assert_non_null(host);
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, buf, 0, host, 16 * KiB)); /* staged */
    const cm_staging_config_t other = {8 * KiB, 3, 1, 1};
    fail_next_push();
    assert_int_equal(cm_device_staging_configure(dev, &other), CM_ERROR_CUDA);
    cmf_disarm();
    cm_staging_config_t now;
    CM_ASSERT_OK(cm_device_staging_config(dev, &now));
    assert_int_equal(now.chunk_bytes, small.chunk_bytes);
    assert_int_equal(now.buffers, small.buffers);
    CM_ASSERT_OK(cm_device_staging_configure(dev, &other));
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, buf, 0, host, 16 * KiB));
    free(host);
    CM_ASSERT_OK(cm_buffer_destroy(buf));
    CM_ASSERT_OK(cm_device_close(dev));
    expect_clean();
}

/* ---------------------------------------------------------------- captures */

static void test_capture_end_repeatable_after_scope_failure(void **state) {
    (void)state;
    cm_device_t *dev = NULL;
    cm_stream_t *s = NULL;
    cm_buffer_t *buf = NULL;
    cm_graph_t *g = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    CM_ASSERT_OK(cm_buffer_create(dev, KiB, &buf));
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
    CM_ASSERT_OK(cm_graph_capture_begin(s));
    CM_ASSERT_OK(cm_buffer_set(s, buf, 0, KiB, 3));
    fail_next_push();
    assert_int_equal(cm_graph_capture_end(s, &g), CM_ERROR_CUDA);
    cmf_disarm();
    assert_null(g);
    assert_int_equal(cmf_thread_captures(), 1); /* CUDA still captures */
    CM_ASSERT_OK(cm_graph_capture_end(s, &g)); /* the end is repeated */
    assert_int_equal(cmf_thread_captures(), 0);
    size_t nodes = 0;
    CM_ASSERT_OK(cm_graph_node_count(g, &nodes));
    assert_int_equal(nodes, 1);
    CM_ASSERT_OK(cm_graph_destroy(g));
    CM_ASSERT_OK(cm_stream_release(s));
    CM_ASSERT_OK(cm_buffer_destroy(buf));
    CM_ASSERT_OK(cm_device_close(dev));
    expect_clean();
}

static void test_sync_buffer_destroy_refused_in_capture(void **state) {
    (void)state;
    cm_device_t *dev = NULL;
    cm_stream_t *s = NULL;
    cm_buffer_t *buf = NULL;
    cm_graph_t *g = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    CM_ASSERT_OK(cm_buffer_create(dev, KiB, &buf));
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
    CM_ASSERT_OK(cm_graph_capture_begin(s));
    assert_int_equal(cm_buffer_destroy(buf), CM_ERROR_BUSY);
    assert_non_null(strstr(cm_last_error()->message, "still alive"));
    assert_true(buffer_alive(buf));
    assert_int_equal(cmf.capture_leaks, 0); /* no cudaFree was tried: the capture is intact */
    CM_ASSERT_OK(cm_graph_capture_end(s, &g));
    CM_ASSERT_OK(cm_buffer_destroy(buf)); /* once the capture has ended */
    CM_ASSERT_OK(cm_graph_destroy(g));
    CM_ASSERT_OK(cm_stream_release(s));
    CM_ASSERT_OK(cm_device_close(dev));
    expect_clean();
}

/* A stream-ordered buffer destroyed during a capture whose cudaFreeAsync fails: its memory is
 * kept on the device's deferred-free list and freed when the capture ends. */
static void test_deferred_free_at_capture_end(void **state) {
    (void)state;
    cm_device_t *dev = NULL;
    cm_stream_t *s = NULL, *cap = NULL;
    cm_buffer_t *buf = NULL;
    cm_graph_t *g = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &cap));
    CM_ASSERT_OK(cm_buffer_create_on_stream(s, dev, 4 * KiB, &buf));
    cmf_alloc_t *a = alloc_of(buf);
    assert_non_null(a);
    void *mem = a->p;
    CM_ASSERT_OK(cm_graph_capture_begin(cap));
    cmf_arm(CMF_IDX_free_async, 0, 1, cudaErrorUnknown);
    cm_status_t st = cm_buffer_destroy(buf);
    cmf_disarm();
    assert_int_equal(st, CM_ERROR_CUDA);
    assert_non_null(strstr(cm_last_error()->message, "freed later"));
    assert_false(buffer_alive(buf)); /* the handle ended; the memory did not get lost */
    assert_non_null(cmf_find_exact(mem));
    CM_ASSERT_OK(cm_graph_capture_end(cap, &g)); /* the capture survived (no cudaFree tried) */
    assert_null(cmf_find_exact(mem));            /* freed at its end */
    CM_ASSERT_OK(cm_graph_destroy(g));
    CM_ASSERT_OK(cm_stream_release(cap));
    CM_ASSERT_OK(cm_stream_release(s));
    CM_ASSERT_OK(cm_device_close(dev));
    expect_clean();
}

/* The same free deferred outside a capture (its fallback cudaFree had no scope): freed when the
 * device is closed, before its pool is destroyed. */
static void test_deferred_free_at_close(void **state) {
    (void)state;
    cm_device_t *dev = NULL;
    cm_stream_t *s = NULL;
    cm_buffer_t *buf = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
    CM_ASSERT_OK(cm_buffer_create_on_stream(s, dev, 4 * KiB, &buf));
    void *mem = alloc_of(buf)->p;
    cmf_arm(CMF_IDX_free_async, 0, 1, cudaErrorUnknown);
    fail_next_push(); /* the synchronous fallback cannot enter the device's scope */
    assert_int_equal(cm_buffer_destroy(buf), CM_ERROR_CUDA);
    cmf_disarm();
    assert_false(buffer_alive(buf));
    assert_non_null(cmf_find_exact(mem)); /* kept, not lost */
    CM_ASSERT_OK(cm_stream_release(s));
    CM_ASSERT_OK(cm_device_close(dev));
    assert_null(cmf_find_exact(mem));
    expect_clean();
}

static void test_split_destroy_refused_in_capture(void **state) {
    (void)state;
    int ords[2] = {0, 1};
    cm_device_set_t *set = NULL;
    cm_split_t *split = NULL;
    cm_device_t *dev = NULL;
    cm_stream_t *s = NULL;
    cm_graph_t *g = NULL;
    CM_ASSERT_OK(cm_device_set_open(ords, 2, &set));
    CM_ASSERT_OK(cm_split_create(set, 1000, 4, &split));
    CM_ASSERT_OK(cm_device_open(0, &dev));
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
    CM_ASSERT_OK(cm_graph_capture_begin(s));
    assert_int_equal(cm_split_destroy(split), CM_ERROR_BUSY);
    size_t n = 0;
    CM_ASSERT_OK(cm_split_info(split, &n, NULL, NULL));
    assert_int_equal(n, 1000);
    CM_ASSERT_OK(cm_graph_capture_end(s, &g));
    CM_ASSERT_OK(cm_split_destroy(split));
    CM_ASSERT_OK(cm_graph_destroy(g));
    CM_ASSERT_OK(cm_stream_release(s));
    CM_ASSERT_OK(cm_device_close(dev));
    CM_ASSERT_OK(cm_device_set_close(set));
    expect_clean();
}

/* ---------------------------------------------------------------- sticky errors */

/* A sticky error recorded on device 0 is cleared from the runtime's last error, so the next
 * checked call on device 1 does not read it and lose device 1 as well. */
static void test_sticky_error_stays_with_its_device(void **state) {
    (void)state;
    cm_device_t *d0 = NULL, *d1 = NULL;
    cm_buffer_t *b0 = NULL, *b1 = NULL;
    CM_ASSERT_OK(cm_device_open(0, &d0));
    CM_ASSERT_OK(cm_device_open(1, &d1));
    CM_ASSERT_OK(cm_buffer_create(d0, KiB, &b0));
    CM_ASSERT_OK(cm_buffer_create(d1, KiB, &b1));
    cmf_arm(CMF_IDX_device_free, 0, 1, cudaErrorIllegalAddress);
    assert_int_equal(cm_buffer_destroy(b0), CM_ERROR_CONTEXT_LOST);
    cmf_disarm();
    assert_int_equal(cm_last_error()->device, 0);
    assert_int_equal(cmf_tl_last_error, 0); /* nothing left for cudaGetLastError */
    size_t free_bytes = 0, total = 0;
    CM_ASSERT_OK(cm_device_memory_info(1, &free_bytes, &total)); /* device 1 is healthy */
    unsigned char host[64] = {0};
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, b1, 0, host, sizeof host));
    CM_ASSERT_OK(cm_buffer_destroy(b1));
    CM_ASSERT_OK(cm_device_close(d1));
    assert_int_equal(cm_device_close(d0), CM_OK); /* a lost context's objects went with it */
    cm__context_reset_for_tests();
    expect_no_handles();
}

/* A copy between two devices fails with the sticky error of either context, also with that of a
 * fault on the source that the library has not yet seen (another thread's kernel: here, set in
 * the simulation directly). It is charged to the device whose context holds it: the other device
 * keeps working and its memory is freed (the API fuzzer found device 0's memory left behind when
 * the copy marked the healthy destination lost). Every direction, one device lost at a time. */
static void test_peer_copy_sticky_error_charged_to_its_context(void **state) {
    (void)state;
    for (int c = 0; c < 8; ++c) {
        /* peer access set up before the fault or by the failing copy, the lost device, the
         * source device */
        const int prepared = c >> 2, lost = (c >> 1) & 1, src_dev = c & 1;
        cm_device_t *d[2] = {NULL, NULL};
        cm_buffer_t *b[2] = {NULL, NULL};
        for (int i = 0; i < 2; ++i) {
            CM_ASSERT_OK(cm_device_open(i, &d[i]));
            CM_ASSERT_OK(cm_buffer_create(d[i], KiB, &b[i]));
        }
        const int dst_dev = 1 - src_dev;
        /* a first copy enables peer access (else the failing copy does it, and peer
         * access or the pool's access fails first); then the fault the library has not
         * seen */
        if (prepared) CM_ASSERT_OK(cm_buffer_copy(NULL, b[dst_dev], 0, b[src_dev], 0, 64));
        cmf.lost[lost] = cudaErrorIllegalAddress;
        assert_int_equal(cm_buffer_copy(NULL, b[dst_dev], 0, b[src_dev], 0, 64),
                         CM_ERROR_CONTEXT_LOST);
        if (cm_last_error()->device != lost)
            fail_msg("copy from device %d to %d (peer access %s) with device %d lost: "
                     "charged to device %d (%s)", src_dev, dst_dev,
                     prepared ? "set up before" : "set up by this copy", lost,
                     cm_last_error()->device, cm_last_error()->message);
        assert_int_equal(cm_check_context(lost), CM_ERROR_CONTEXT_LOST);
        CM_ASSERT_OK(cm_check_context(1 - lost)); /* the healthy device is not marked */
        size_t free_bytes = 0, total = 0;
        CM_ASSERT_OK(cm_device_memory_info(1 - lost, &free_bytes, &total));
        CM_ASSERT_OK(cm_buffer_destroy(b[1 - lost])); /* freed: checked by expect_clean */
        (void)cm_buffer_destroy(b[lost]);             /* went with the context */
        for (int i = 0; i < 2; ++i) (void)cm_device_close(d[i]);
        expect_clean();
        /* a fresh simulation and library state for the next case (the lost device's
         * memory stays in this one) */
        cm__context_reset_for_tests();
        cmf_uninstall();
        cmf_install(2, 64 * KiB * 1024);
    }
}

/* A device set's open that fails after its member's device object was made closes that object
 * all the same; with every cuCtxPushCurrent failing from some point on, the close cannot enter
 * the device's scope and its memory pool cannot be destroyed then: it is left to the next open
 * or close of the device, not to the driver until exit. Every point of failure is tried; at
 * least one leaves a pool (the case this is about). */
static void test_failed_set_open_pool_left_to_next_open(void **state) {
    (void)state;
    const int ord[1] = {0};
    int left_over = 0;
    for (long skip = 0; skip < 12; ++skip) {
        cm_device_set_t *set = NULL;
        cmf_arm(CMF_IDX_ctx_push_current, skip, -1, cudaErrorUnknown);
        cm_status_t st = cm_device_set_open(ord, 1, &set);
        cmf_disarm();
        if (st == CM_OK) {
            CM_ASSERT_OK(cm_device_set_close(set));
        } else {
            assert_null(set);
            if (cmf_outstanding(NULL, 0) != 0) ++left_over; /* the member's pool, for now */
        }
        cm_device_t *d = NULL;
        CM_ASSERT_OK(cm_device_open(0, &d)); /* destroys what an earlier close left */
        CM_ASSERT_OK(cm_device_close(d));
        expect_clean();
    }
    assert_true(left_over > 0);
}

/* A close frees deferred memory and destroys the pool: CUDA refuses both while the thread
 * captures a graph, so a device's (and a set's) close is refused then, nothing closed, and
 * works once the capture has ended. The deferred free here is that of a stream-ordered buffer
 * of device 0 whose cudaFreeAsync failed while the thread captured a stream of device 1. */
static void test_close_refused_in_capture(void **state) {
    (void)state;
    cm_device_t *d0 = NULL, *d1 = NULL;
    cm_stream_t *s0 = NULL, *s1 = NULL;
    cm_buffer_t *buf = NULL;
    cm_graph_t *g = NULL;
    const int ord[1] = {0};
    cm_device_set_t *set = NULL;
    CM_ASSERT_OK(cm_device_set_open(ord, 1, &set));
    CM_ASSERT_OK(cm_device_open(0, &d0));
    CM_ASSERT_OK(cm_device_open(1, &d1));
    CM_ASSERT_OK(cm_stream_acquire(d0, CM_STREAM_PRIORITY_LOW, &s0));
    CM_ASSERT_OK(cm_stream_acquire(d1, CM_STREAM_PRIORITY_LOW, &s1));
    CM_ASSERT_OK(cm_buffer_create_on_stream(s0, d0, 4 * KiB, &buf));
    CM_ASSERT_OK(cm_graph_capture_begin(s1));
    cmf_arm(CMF_IDX_free_async, 0, 1, cudaErrorUnknown);
    assert_int_not_equal(cm_buffer_destroy_on_stream(s0, buf), CM_OK); /* the free deferred */
    cmf_disarm();
    CM_ASSERT_OK(cm_stream_release(s0));
    assert_int_equal(cm_device_close(d0), CM_ERROR_BUSY);
    assert_non_null(strstr(cm_last_error()->message, "captures a graph"));
    assert_non_null(strstr(cm_last_error()->message, "nothing was closed"));
    int o = -1;
    CM_ASSERT_OK(cm_device_ordinal(d0, &o)); /* still open */
    assert_int_equal(cm_device_set_close(set), CM_ERROR_BUSY);
    assert_non_null(strstr(cm_last_error()->message, "nothing was closed"));
    int n = 0;
    CM_ASSERT_OK(cm_device_set_count(set, &n)); /* still open */
    CM_ASSERT_OK(cm_graph_capture_end(s1, &g));
    CM_ASSERT_OK(cm_graph_destroy(g));
    CM_ASSERT_OK(cm_stream_release(s1));
    CM_ASSERT_OK(cm_device_close(d0));
    CM_ASSERT_OK(cm_device_set_close(set));
    CM_ASSERT_OK(cm_device_close(d1));
    expect_clean(); /* the deferred free ran after the capture (none refused inside it) */
}

/* A capture whose device's context is lost (a sticky error) went with the context: its end
 * reports CM_ERROR_CONTEXT_LOST and the thread no longer counts a capture, so its closes are not
 * refused for one. */
static void test_capture_end_after_context_lost(void **state) {
    (void)state;
    cm_device_t *d0 = NULL, *d1 = NULL;
    cm_stream_t *s1 = NULL;
    cm_buffer_t *b1 = NULL;
    cm_graph_t *g = NULL;
    CM_ASSERT_OK(cm_device_open(0, &d0));
    CM_ASSERT_OK(cm_device_open(1, &d1));
    CM_ASSERT_OK(cm_stream_acquire(d1, CM_STREAM_PRIORITY_LOW, &s1));
    CM_ASSERT_OK(cm_buffer_create(d1, KiB, &b1));
    CM_ASSERT_OK(cm_graph_capture_begin(s1));
    CM_ASSERT_OK(cm_buffer_set(s1, b1, 0, KiB, 1));
    /* the end's own scope finds the context lost */
    cmf_arm(CMF_IDX_ctx_push_current, 0, 1, cudaErrorIllegalAddress);
    assert_int_equal(cm_graph_capture_end(s1, &g), CM_ERROR_CONTEXT_LOST);
    cmf_disarm();
    cmf_abort_thread_captures(); /* the simulation's capture went with the context too */
    assert_null(g);
    /* the capture is over: a second end finds the stream not being captured */
    assert_int_equal(cm_graph_capture_end(s1, &g), CM_ERROR_INVALID_ARGUMENT);
    CM_ASSERT_OK(cm_device_close(d0)); /* not refused as if the thread still captured */
    (void)cm_buffer_destroy(b1);
    (void)cm_stream_release(s1);
    (void)cm_device_close(d1);
    cm__context_reset_for_tests();
    expect_no_handles();
}

/* A pageable copy queued on a capturing stream (from the fuzzer: a captured staged copy's node
 * read a staging buffer that a later copy had refilled, so each launch of the graph wrote that
 * copy's bytes). Both directions are captured as direct copies: each launch reads the caller's
 * source as it is then and writes the caller's destination; staging is never set up. */
static void test_captured_pageable_copy_not_staged(void **state) {
    (void)state;
    const size_t n = 48 * KiB;
    cm_device_t *dev = NULL;
    cm_stream_t *s = NULL;
    cm_buffer_t *b = NULL, *other = NULL;
    cm_graph_t *g = NULL;
    unsigned char *src = malloc(n), *dst = malloc(n), *junk = malloc(n);
    assert_non_null(src);
    assert_non_null(dst);
    assert_non_null(junk);
    CM_ASSERT_OK(cm_device_open(0, &dev));
    cm_staging_config_t cfg = CM_STAGING_CONFIG_INIT;
    cfg.min_bytes = 1; /* every pageable copy would be staged */
    cfg.chunk_bytes = 16 * KiB;
    CM_ASSERT_OK(cm_device_staging_configure(dev, &cfg));
    CM_ASSERT_OK(cm_buffer_create(dev, n, &b));
    CM_ASSERT_OK(cm_buffer_create(dev, n, &other));
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
    const unsigned long host_allocs = cmf_hits[CMF_IDX_host_alloc];
    memset(src, 0x11, n);
    memset(dst, 0xa5, n);
    CM_ASSERT_OK(cm_graph_capture_begin(s));
    CM_ASSERT_OK(cm_buffer_copy_from_host(s, b, 0, src, n));
    CM_ASSERT_OK(cm_buffer_copy_to_host(s, b, 0, dst, n));
    CM_ASSERT_OK(cm_graph_capture_end(s, &g));
    assert_int_equal(cmf_hits[CMF_IDX_host_alloc], host_allocs); /* no staging buffers */
    for (size_t i = 0; i < n; ++i) assert_int_equal(dst[i], 0xa5); /* nothing ran yet */
    for (int round = 0; round < 3; ++round) {
        const unsigned char v = (unsigned char)(0x20 + round);
        memset(src, v, n);
        /* a staged copy outside the capture fills the staging buffers with other bytes */
        memset(junk, 0xee, n);
        CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, other, 0, junk, n));
        CM_ASSERT_OK(cm_graph_launch(g, s));
        CM_ASSERT_OK(cm_stream_synchronize(s));
        for (size_t i = 0; i < n; ++i)
            if (dst[i] != v)
                fail_msg("round %d: byte %zu is 0x%02x, not 0x%02x", round, i, dst[i], v);
    }
    CM_ASSERT_OK(cm_graph_destroy(g));
    CM_ASSERT_OK(cm_stream_release(s));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_buffer_destroy(other));
    CM_ASSERT_OK(cm_device_close(dev));
    free(src);
    free(dst);
    free(junk);
    expect_clean();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_buffer_destroy_scope_failure_keeps_it, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_host_buffer_destroy_scope_failure_keeps_it, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_graph_destroy_scope_failure_keeps_it, setup, teardown),
        cmocka_unit_test_setup_teardown(test_device_close_scope_failure_keeps_it, setup, teardown),
        cmocka_unit_test_setup_teardown(test_device_close_lists_what_it_left, setup, teardown),
        cmocka_unit_test_setup_teardown(test_staging_configure_scope_failure_changes_nothing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_capture_end_repeatable_after_scope_failure, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sync_buffer_destroy_refused_in_capture, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_deferred_free_at_capture_end, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deferred_free_at_close, setup, teardown),
        cmocka_unit_test_setup_teardown(test_split_destroy_refused_in_capture, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sticky_error_stays_with_its_device, setup, teardown),
        cmocka_unit_test_setup_teardown(test_peer_copy_sticky_error_charged_to_its_context, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_failed_set_open_pool_left_to_next_open, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_close_refused_in_capture, setup, teardown),
        cmocka_unit_test_setup_teardown(test_captured_pageable_copy_not_staged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_capture_end_after_context_lost, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
