/*
 * Explicit device: the cm__enter / cm__leave pair (src/core/internal.h) directly, and what the
 * library does with it, on the simulated devices of test_buffer_fake.h (fault injection), which
 * model the driver's context stack (fake.has_ctx, fake.ctx_depth, fake.ctx_created[d]).
 *
 * - Scopes nest: a push only when the named device is not current, each leave undoes exactly
 *   its enter, make_current = 0 switches nothing, a failed enter leaves nothing to undo, the
 *   scope is per thread.
 * - A thread with NO current context that works on device 3 gets "no current
 *   context" back, and no context is ever created on device 0 (no cudaSetDevice at all).
 * - A sticky error raised by work of device 1 while device 0 is current marks device 1
 *   lost, names device 1, and leaves device 0 usable.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/interop.h>
#include <cudamodel/status.h>
#include <cudamodel/stream.h>

#include "test_stream_fake.h"

/* ---------------------------------------------------------------- observing the fake */

/* The library has no cudaSetDevice to call: the call table carries none, and
 * test_call_table_faults' source scan finds no direct CUDA call outside core/calls.c. */
static unsigned pushed_mask; /* devices whose context was pushed */

static cudaError_t w_ctx_push(void *ctx) {
    int d = (int)(uintptr_t)ctx - 1;
    if (d >= 0 && d < 32) pushed_mask |= 1u << d;
    return fake_ctx_push(ctx);
}

static void observe(void) {
    pushed_mask = 0;
    cm__cuda.ctx_push_current = w_ctx_push;
}

static int setup4(void **state) {
    (void)state;
    fake_install(4, (size_t)1 << 30);
    observe();
    return 0;
}

static int setup2(void **state) {
    (void)state;
    fake_install(2, (size_t)1 << 30);
    observe();
    fake.current = 0;
    fake.has_ctx = 1;
    return 0;
}

static int setup_x2(void **state) {
    (void)state;
    xfake_install(2);
    observe();
    fake.current = 0;
    fake.has_ctx = 1;
    return 0;
}


/* After a lost context the simulation may keep what the library could not free. */
static int teardown_lenient(void **state) {
    (void)state;
    fake_uninstall();
    return 0;
}


/* The thread has no current context, and nothing is left pushed. */
#define EXPECT_NO_CONTEXT()                                                                  \
    do {                                                                                     \
        assert_int_equal(fake.has_ctx, 0);                                                   \
        assert_int_equal(fake.ctx_depth, 0);                                                 \
    } while (0)

/* ---------------------------------------------------------------- the pair itself */

static void test_enter_leave_nesting(void **state) {
    (void)state;
    EXPECT_NO_CONTEXT();
    assert_int_equal(cm__scope_device(), -1);
    cm__scope_t a, b, c, d;
    CM_ASSERT_OK(cm__enter(2, 1, &a));
    assert_int_equal(cm__scope_device(), 2);
    assert_int_equal(fake.current, 2);
    assert_int_equal(fake.has_ctx, 1);
    assert_int_equal(fake.ctx_depth, 1);
    assert_int_equal(fake.ctx_created[2], 1);

    CM_ASSERT_OK(cm__enter(2, 1, &b)); /* already current: no second push */
    assert_int_equal(fake.ctx_depth, 1);
    assert_int_equal(cm__scope_device(), 2);

    CM_ASSERT_OK(cm__enter(3, 0, &c)); /* names device 3, switches nothing */
    assert_int_equal(cm__scope_device(), 3);
    assert_int_equal(fake.current, 2);
    assert_int_equal(fake.ctx_depth, 1);
    assert_int_equal(fake.ctx_created[3], 0);
    /* a failure recorded inside names the scope's device, not the current one */
    cm__cuda_fail(cudaErrorInvalidValue, __FILE__, __LINE__, "cudaSomething(x)");
    assert_int_equal(cm_last_error()->device, 3);

    CM_ASSERT_OK(cm__enter(1, 1, &d));
    assert_int_equal(cm__scope_device(), 1);
    assert_int_equal(fake.current, 1);
    assert_int_equal(fake.ctx_depth, 2);
    cm__leave(&d);
    assert_int_equal(cm__scope_device(), 3);
    assert_int_equal(fake.current, 2);
    assert_int_equal(fake.ctx_depth, 1);
    cm__leave(&c);
    assert_int_equal(cm__scope_device(), 2);
    assert_int_equal(fake.current, 2);
    cm__leave(&b);
    assert_int_equal(cm__scope_device(), 2);
    assert_int_equal(fake.ctx_depth, 1); /* b pushed nothing, so popped nothing */
    cm__leave(&a);
    assert_int_equal(cm__scope_device(), -1);
    EXPECT_NO_CONTEXT();
    assert_int_equal(fake.ctx_created[0], 0);

    /* nested scopes of one device: the inner one pushes nothing, and leaving it keeps the
     * outer one's device */
    cm__scope_t s1, s2;
    CM_ASSERT_OK(cm__enter(3, 1, &s1));
    assert_int_equal(fake.current, 3);
    assert_int_equal(fake.ctx_depth, 1);
    assert_int_equal(cm__scope_device(), 3);
    CM_ASSERT_OK(cm__enter(3, 1, &s2));
    assert_int_equal(fake.ctx_depth, 1);
    CM_ASSERT_OK(cm__enter(1, 1, &a)); /* a third scope of another device inside */
    assert_int_equal(fake.current, 1);
    cm__leave(&a);
    cm__leave(&s2);
    assert_int_equal(fake.current, 3);
    assert_int_equal(fake.ctx_depth, 1);
    assert_int_equal(cm__scope_device(), 3);
    cm__leave(&s1);
    assert_int_equal(cm__scope_device(), -1);
    EXPECT_NO_CONTEXT();
    assert_int_equal(fake.ctx_created[0], 0);
}

/* An application with device 1 current that calls into device 0 work gets device 1 back. */
static void test_enter_restores_the_callers_device(void **state) {
    (void)state;
    fake.current = 1;
    fake.has_ctx = 1;
    cm__scope_t a;
    CM_ASSERT_OK(cm__enter(0, 1, &a));
    assert_int_equal(fake.current, 0);
    cm__leave(&a);
    assert_int_equal(fake.current, 1);
    assert_int_equal(fake.has_ctx, 1);
    assert_int_equal(fake.ctx_depth, 0);
    CM_ASSERT_OK(cm__enter(1, 1, &a)); /* the current one: nothing pushed */
    assert_int_equal(fake.ctx_depth, 0);
    cm__leave(&a);
    assert_int_equal(fake.current, 1);
    assert_int_equal(fake.ctx_depth, 0);
}

static void test_failed_enter_leaves_nothing_to_undo(void **state) {
    (void)state;
    cm__scope_t a, b;
    CM_ASSERT_OK(cm__enter(2, 1, &a));
    assert_int_equal(cm__enter(-1, 1, &b), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cm__scope_device(), 2);
    assert_int_equal(cm__enter(CM__MAX_DEVICES, 1, &b), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cm__scope_device(), 2);
    assert_int_equal(cm__enter(-1, 0, &b), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cm__scope_device(), 2);
    /* the primary context cannot be retained */
    fake_fail(FAKE_CTX_RETAIN, cudaErrorInvalidDevice, 1);
    assert_int_not_equal(cm__enter(1, 1, &b), CM_OK);
    assert_int_equal(cm__scope_device(), 2);
    assert_int_equal(fake.current, 2);
    assert_int_equal(fake.ctx_depth, 1);
    /* the push fails (counted as FAKE_SET_DEVICE by the fake) */
    fake_fail(FAKE_SET_DEVICE, cudaErrorInvalidValue, 1);
    assert_int_not_equal(cm__enter(3, 1, &b), CM_OK);
    assert_int_equal(cm__scope_device(), 2);
    assert_int_equal(fake.current, 2);
    assert_int_equal(fake.ctx_depth, 1);
    fake_fail_clear();
    assert_int_not_equal(cm__enter(-3, 1, &b), CM_OK);
    assert_int_equal(cm__scope_device(), 2);
    assert_int_equal(fake.ctx_depth, 1);
    cm__leave(&a);
    assert_int_equal(cm__scope_device(), -1);
    EXPECT_NO_CONTEXT();
    /* and it works again afterwards */
    CM_ASSERT_OK(cm__enter(3, 1, &b));
    assert_int_equal(fake.current, 3);
    cm__leave(&b);
    EXPECT_NO_CONTEXT();
}

static void *other_thread_scope(void *arg) {
    *(int *)arg = cm__scope_device();
    return NULL;
}

static void test_scope_is_per_thread(void **state) {
    (void)state;
    cm__scope_t a;
    CM_ASSERT_OK(cm__enter(3, 0, &a));
    int seen = 99;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, other_thread_scope, &seen), 0);
    pthread_join(t, NULL);
    assert_int_equal(seen, -1);
    assert_int_equal(cm__scope_device(), 3);
    cm__leave(&a);
    assert_int_equal(cm__scope_device(), -1);
}

/* ---------------------------------------------------------------- no context created on a device nobody named */

/* A thread with no current context (a fresh thread, a process that never touched CUDA) works
 * on device 3 only: afterwards it still has no current context, and no context was created on
 * any other device (a "restore" through cudaSetDevice(0) would create one on GPU 0). */
static void test_no_current_context_is_restored_and_device_0_untouched(void **state) {
    (void)state;
    EXPECT_NO_CONTEXT();
    cm_device_t *d = NULL;
    CM_ASSERT_OK(cm_device_open(3, &d));
    EXPECT_NO_CONTEXT();
    unsigned char host[4096], back[4096];
    for (size_t i = 0; i < sizeof host; ++i) host[i] = (unsigned char)(i * 7);
    cm_buffer_t *b = NULL, *so = NULL;
    CM_ASSERT_OK(cm_buffer_create(d, sizeof host, &b));
    EXPECT_NO_CONTEXT();
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, b, 0, host, sizeof host));
    EXPECT_NO_CONTEXT();
    CM_ASSERT_OK(cm_buffer_set(NULL, b, 0, 16, 0));
    EXPECT_NO_CONTEXT();
    cm_stream_t *w = NULL;
    CM_ASSERT_OK(cm_stream_wrap(d, FAKE_STREAM(3), &w));
    EXPECT_NO_CONTEXT();
    CM_ASSERT_OK(cm_buffer_create_on_stream(w, d, 256, &so));
    EXPECT_NO_CONTEXT();
    CM_ASSERT_OK(cm_buffer_copy(NULL, so, 0, b, 0, 256));
    EXPECT_NO_CONTEXT();
    CM_ASSERT_OK(cm_buffer_copy(w, so, 0, b, 0, 256));
    EXPECT_NO_CONTEXT();
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, b, 0, back, sizeof back));
    EXPECT_NO_CONTEXT();
    for (size_t i = 0; i < sizeof back; ++i) assert_int_equal(back[i], i < 16 ? 0 : host[i]);
    cm_memory_report_t rep;
    CM_ASSERT_OK(cm_device_memory_report(d, &rep));
    assert_int_equal(rep.device, 3);
    EXPECT_NO_CONTEXT();
    size_t fr = 0, tot = 0;
    CM_ASSERT_OK(cm_device_memory_info(3, &fr, &tot));
    EXPECT_NO_CONTEXT();
    CM_ASSERT_OK(cm_device_pool_trim(d, 0));
    EXPECT_NO_CONTEXT();
    CM_ASSERT_OK(cm_buffer_destroy(so));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    EXPECT_NO_CONTEXT();
    CM_ASSERT_OK(cm_stream_release(w));
    EXPECT_NO_CONTEXT();
    CM_ASSERT_OK(cm_device_close(d));
    EXPECT_NO_CONTEXT();

    for (int k = 0; k < 3; ++k)
        if (fake.ctx_created[k] != 0) fail_msg("a context was created on device %d", k);
    if ((pushed_mask & ~(1u << 3)) != 0) fail_msg("contexts pushed: mask 0x%x", pushed_mask);
    EXPECT_CLEAN();
}

/* ---------------------------------------------------------------- sticky errors charged to the working device */

/* A sticky error in a synchronous copy of a device-1 buffer while device 0 is current. */
static void test_sticky_error_marks_the_work_device_lost(void **state) {
    (void)state;
    cm_device_t *d0 = NULL, *d1 = NULL;
    CM_ASSERT_OK(cm_device_open(0, &d0));
    CM_ASSERT_OK(cm_device_open(1, &d1));
    cm_buffer_t *b1 = NULL;
    CM_ASSERT_OK(cm_buffer_create(d1, 4096, &b1));
    unsigned char host[64] = {1};
    /* whichever of the copy or its completion wait the copy makes, it faults */
    fake_fail_always(FAKE_STREAM_SYNC, cudaErrorIllegalAddress);
    fake_fail_always(FAKE_MEMCPY, cudaErrorIllegalAddress);
    assert_int_equal(cm_buffer_copy_from_host(NULL, b1, 0, host, sizeof host),
                     CM_ERROR_CONTEXT_LOST);
    fake_fail_clear();
    const cm_error_t *e = cm_last_error();
    assert_int_equal(e->device, 1);
    assert_true(e->context_lost);
    assert_int_equal(fake.current, 0);
    assert_int_equal(fake.ctx_depth, 0);

    assert_int_equal(cm_check_context(1), CM_ERROR_CONTEXT_LOST);
    assert_int_equal(cm_last_error()->device, 1);
    CM_ASSERT_OK(cm_check_context(0));
    /* device 0 works on */
    cm_buffer_t *b0 = NULL;
    CM_ASSERT_OK(cm_buffer_create(d0, 64, &b0));
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, b0, 0, host, sizeof host));
    CM_ASSERT_OK(cm_buffer_destroy(b0));
    /* device 1 fails fast with the cause */
    assert_int_equal(cm_buffer_set(NULL, b1, 0, 64, 0), CM_ERROR_CONTEXT_LOST);
    cm_buffer_t *x = NULL;
    assert_int_equal(cm_buffer_create(d1, 64, &x), CM_ERROR_CONTEXT_LOST);
    assert_null(x);
    (void)cm_buffer_destroy(b1); /* released whatever it returns */
    (void)cm_device_close(d1);
    CM_ASSERT_OK(cm_device_close(d0));
}

/* A sticky error reported by cudaStreamSynchronize of a pooled stream of device 1 (a call that
 * does not make the device current) while device 0 is current. */
static void test_sticky_error_on_stream_sync_names_the_streams_device(void **state) {
    (void)state;
    cm_device_t *d0 = NULL, *d1 = NULL;
    CM_ASSERT_OK(cm_device_open(0, &d0));
    CM_ASSERT_OK(cm_device_open(1, &d1));
    cm_stream_t *s1 = NULL, *s0 = NULL;
    CM_ASSERT_OK(cm_stream_acquire(d1, CM_STREAM_PRIORITY_LOW, &s1));
    CM_ASSERT_OK(cm_stream_acquire(d0, CM_STREAM_PRIORITY_LOW, &s0));
    xfake_fail(XF_STREAM_SYNC, cudaErrorIllegalAddress, 1);
    assert_int_equal(cm_stream_synchronize(s1), CM_ERROR_CONTEXT_LOST);
    xfake_fail_clear();
    assert_int_equal(cm_last_error()->device, 1);
    assert_true(cm_last_error()->context_lost);
    assert_int_equal(fake.current, 0);
    assert_int_equal(cm_check_context(1), CM_ERROR_CONTEXT_LOST);
    CM_ASSERT_OK(cm_check_context(0));
    CM_ASSERT_OK(cm_stream_synchronize(s0));
    assert_int_equal(cm_stream_synchronize(s1), CM_ERROR_CONTEXT_LOST);
    CM_ASSERT_OK(cm_stream_release(s0));
    (void)cm_stream_release(s1);
    (void)cm_device_close(d1);
    CM_ASSERT_OK(cm_device_close(d0));
}

/* The core rule behind both: a sticky error recorded inside a scope of device 3 (no switch)
 * marks device 3, whatever device is current. */
static void test_sticky_error_inside_scope_marks_the_scopes_device(void **state) {
    (void)state;
    cm__scope_t sc;
    CM_ASSERT_OK(cm__enter(1, 0, &sc));
    assert_int_equal(fake.current, 0);
    cm_status_t st = cm__cuda_fail(cudaErrorIllegalAddress, __FILE__, __LINE__, "cudaStreamSynchronize(s)");
    cm__leave(&sc);
    assert_int_equal(st, CM_ERROR_CONTEXT_LOST);
    assert_int_equal(cm_last_error()->device, 1);
    assert_int_equal(cm_check_context(1), CM_ERROR_CONTEXT_LOST);
    CM_ASSERT_OK(cm_check_context(0));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_enter_leave_nesting, setup4, fake_teardown_clean),
        cmocka_unit_test_setup_teardown(test_enter_restores_the_callers_device, setup2, fake_teardown_clean),
        cmocka_unit_test_setup_teardown(test_failed_enter_leaves_nothing_to_undo, setup4, fake_teardown_clean),
        cmocka_unit_test_setup_teardown(test_scope_is_per_thread, setup4, fake_teardown_clean),
        cmocka_unit_test_setup_teardown(test_no_current_context_is_restored_and_device_0_untouched,
                                        setup4, fake_teardown_clean),
        cmocka_unit_test_setup_teardown(test_sticky_error_marks_the_work_device_lost, setup2,
                                        teardown_lenient),
        cmocka_unit_test_setup_teardown(test_sticky_error_on_stream_sync_names_the_streams_device,
                                        setup_x2, xfake_teardown),
        cmocka_unit_test_setup_teardown(test_sticky_error_inside_scope_marks_the_scopes_device,
                                        setup2, teardown_lenient),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
