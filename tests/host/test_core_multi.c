/*
 * Host tests of the multi module on the core: device sets, split arrays and
 * communicators are handle values of the one handle table, and a set whose member lost its
 * context still closes.
 *
 * - A member's lost context does not block cm_device_set_close(): the set is released (host side
 *   for the lost member), the handle ends, the close returns CM_ERROR_CONTEXT_LOST, and the
 *   scope-exit form clears the variable instead of leaking the set.
 * - Stale set and split handles are reported as stale by every entry point, forever, also after
 *   new sets and splits were created (a value never names a second object).
 *
 * Runs on the simulated devices and streams of test_buffer_fake.h / test_stream_fake.h; the
 * lost context is made like tests/host/test_context_lost.c does, by recording a sticky error,
 * here inside a scope of the member's device so that the failure names it.
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
#include <cudamodel/multi.h>

#include "handle.h"
#include "internal.h"
#include "multi_internal.h"
#include "test_stream_fake.h" /* and test_buffer_fake.h */

#define INV CM_ERROR_INVALID_ARGUMENT

static int setup(void **state) {
    (void)state;
    xfake_install(3);
    return 0;
}

/* The module's handles are all gone (also after a lost context). */
static int check_handles(void) {
    size_t sets = cm__handle_live_count(CM__KIND_DEVICE_SET);
    size_t splits = cm__handle_live_count(CM__KIND_SPLIT);
    if (sets || splits) {
        print_error("left %zu live sets and %zu live splits\n", sets, splits);
        return -1;
    }
    return 0;
}

static int teardown(void **state) {
    (void)state;
    int bad = check_handles();
    int left = fake_outstanding(), violations = fake.violations;
    int streams = atomic_load(&xfake.streams);
    xfake_uninstall();
    if (left || violations || streams) {
        print_error("simulation left %d allocations, %d violations, %d streams\n", left,
                    violations, streams);
        return -1;
    }
    return bad;
}

/* After a lost context: the memory and streams of the lost device are the CUDA context's (the
 * library does not call CUDA on it), so only the host side is checked. */
static int teardown_lost(void **state) {
    (void)state;
    int bad = check_handles();
    xfake_uninstall();
    return bad;
}

static cm_device_set_t *open_set(const int *ord, int n) {
    cm_device_set_t *set = NULL;
    CM_ASSERT_OK(cm_device_set_open(ord, n, &set));
    assert_non_null(set);
    return set;
}

/* Lose device d's context: a sticky error recorded while d is the scope's device. */
static void lose_context(int d) {
    cm__scope_t sc;
    CM_ASSERT_OK(cm__enter(d, 0, &sc));
    assert_int_equal(cm_record_cuda_error(cudaErrorIllegalAddress, "cudaStreamSynchronize(s)",
                                          "pipeline.c", 40),
                     CM_ERROR_CONTEXT_LOST);
    cm__leave(&sc);
    assert_int_equal(cm_check_context(d), CM_ERROR_CONTEXT_LOST);
    cm_last_error_clear();
}

/* ---------------------------------------------------------------- closing a set with a lost member */

static void test_set_close_is_not_blocked_by_a_lost_member(void **state) {
    (void)state;
    const int ord[3] = {0, 1, 2};
    cm_device_set_t *set = open_set(ord, 3);
    assert_int_equal(cm__handle_live_count(CM__KIND_DEVICE_SET), 1);
    lose_context(1);

    /* closed all the same: the status says why the member's work could not be waited for */
    assert_int_equal(cm_device_set_close(set), CM_ERROR_CONTEXT_LOST);
    assert_true(cm_last_error()->context_lost);
    assert_int_equal(cm_last_error()->device, 1);
    assert_int_equal(cm__handle_live_count(CM__KIND_DEVICE_SET), 0);
    /* the handle is gone (multi.h: on any status but BUSY and INVALID_ARGUMENT) */
    int count = 0;
    EXPECT_FAIL(cm_device_set_count(set, &count), INV, "was already closed");
    /* the healthy members' devices were closed too: they open again */
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    CM_ASSERT_OK(cm_device_close(dev));
}

static void test_set_scope_exit_does_not_leak_a_set_with_a_lost_member(void **state) {
    (void)state;
    const int ord[2] = {2, 1};
    cm_device_set_t *set = open_set(ord, 2);
    lose_context(1);
    cm_device_set_scope_exit(&set);
    assert_null(set); /* released, not left open and forgotten */
    assert_int_equal(cm__handle_live_count(CM__KIND_DEVICE_SET), 0);
    assert_int_equal(cm_last_error()->status, CM_ERROR_CONTEXT_LOST);
}

static void test_lost_member_still_refuses_close_while_a_split_lives(void **state) {
    (void)state;
    const int ord[2] = {0, 1};
    cm_device_set_t *set = open_set(ord, 2);
    cm_split_t *sp = NULL;
    CM_ASSERT_OK(cm_split_create(set, 1000, 4, &sp));
    lose_context(1);
    /* BUSY keeps the handle (the contract), and the scope-exit form keeps the variable */
    EXPECT_FAIL(cm_device_set_close(set), CM_ERROR_BUSY, "1 live split array");
    cm_device_set_scope_exit(&set);
    assert_non_null(set);
    /* the split releases its parts also on the lost member, then the set closes */
    assert_int_equal(cm_split_destroy(sp), CM_ERROR_CONTEXT_LOST);
    assert_int_equal(cm__handle_live_count(CM__KIND_SPLIT), 0);
    assert_int_equal(cm_device_set_close(set), CM_ERROR_CONTEXT_LOST);
    assert_int_equal(cm__handle_live_count(CM__KIND_DEVICE_SET), 0);
}

/* ---------------------------------------------------------------- stale handles */

/* Every entry point taking a set reports the stale value. */
static void expect_stale_set(cm_device_set_t *set) {
    const char *why = "was already closed";
    int i = 0;
    cm_device_t *dev = NULL;
    cm_stream_t *s = NULL;
    cm_split_t *sp = NULL;
    cm_peer_info_t m[9];
    EXPECT_FAIL(cm_device_set_count(set, &i), INV, why);
    EXPECT_FAIL(cm_device_set_device(set, 0, &dev), INV, why);
    EXPECT_FAIL(cm_device_set_ordinal(set, 0, &i), INV, why);
    EXPECT_FAIL(cm_device_set_stream(set, 0, &s), INV, why);
    EXPECT_FAIL(cm_device_set_synchronize(set), INV, why);
    EXPECT_FAIL(cm_device_set_enable_peer_access(set, &i), INV, why);
    EXPECT_FAIL(cm_device_set_peer_matrix(set, 0, m, 9), INV, why);
    EXPECT_FAIL(cm_split_create(set, 10, 4, &sp), INV, why);
    assert_null(sp);
    EXPECT_FAIL(cm_device_set_close(set), INV, why);
    if (cm__nccl_built()) {
        cm_comm_t *c = NULL;
        EXPECT_FAIL(cm_comm_create(set, &c), INV, why);
        assert_null(c);
    }
}

static void test_stale_set_handles_stay_stale(void **state) {
    (void)state;
    const int ord[2] = {0, 1};
    cm_device_set_t *old = open_set(ord, 2);
    CM_ASSERT_OK(cm_device_set_close(old));
    expect_stale_set(old);
    /* new sets never take the old value: it stays stale while they live */
    cm_device_set_t *sets[8];
    for (int i = 0; i < 8; ++i) {
        sets[i] = open_set(ord, 1 + i % 2);
        assert_ptr_not_equal(sets[i], old);
        expect_stale_set(old);
        int count = 0;
        CM_ASSERT_OK(cm_device_set_count(sets[i], &count));
        assert_int_equal(count, 1 + i % 2);
        CM_ASSERT_OK(cm_device_set_close(sets[i]));
        expect_stale_set(sets[i]);
    }
    /* a handle of another kind is named as such */
    cm_device_set_t *set = open_set(ord, 2);
    cm_split_t *sp = NULL;
    CM_ASSERT_OK(cm_split_create(set, 10, 4, &sp));
    int count = 0;
    EXPECT_FAIL(cm_device_set_count((const cm_device_set_t *)(const void *)sp, &count), INV,
                "is a cm_split_t, not a cm_device_set_t");
    CM_ASSERT_OK(cm_split_destroy(sp));
    CM_ASSERT_OK(cm_device_set_close(set));
}

static cm_status_t visit_part(void *user, int index, cm_stream_t *stream, cm_buffer_t *part,
                              size_t first, size_t count) {
    (void)stream;
    (void)part;
    (void)first;
    (void)count;
    ++*(int *)user;
    (void)index;
    return CM_OK;
}

/* Every entry point taking a split reports the stale value. */
static void expect_stale_split(cm_split_t *sp) {
    const char *why = "was already destroyed";
    size_t n = 0;
    float f = 0.0f, host[16] = {0};
    int visits = 0;
    EXPECT_FAIL(cm_split_info(sp, &n, NULL, NULL), INV, why);
    EXPECT_FAIL(cm_split_part(sp, 0, NULL, NULL, &n), INV, why);
    EXPECT_FAIL(cm_split_scatter_from_host(sp, host, 16), INV, why);
    EXPECT_FAIL(cm_split_gather_to_host(sp, host, 16), INV, why);
    EXPECT_FAIL(cm_split_scatter(sp, NULL, 0), INV, why);
    EXPECT_FAIL(cm_split_gather(sp, NULL, 0), INV, why);
    EXPECT_FAIL(cm_split_fill_f32(sp, 1.0f), INV, why);
    EXPECT_FAIL(cm_split_sum_f32(sp, &f), INV, why);
    EXPECT_FAIL(cm_split_for_each(sp, visit_part, &visits), INV, why);
    assert_int_equal(visits, 0);
    EXPECT_FAIL(cm_split_destroy(sp), INV, why);
}

static void test_stale_split_handles_stay_stale(void **state) {
    (void)state;
    const int ord[3] = {0, 1, 2};
    cm_device_set_t *set = open_set(ord, 3);
    cm_split_t *old = NULL;
    CM_ASSERT_OK(cm_split_create(set, 16, 4, &old));
    CM_ASSERT_OK(cm_split_destroy(old));
    expect_stale_split(old);
    for (int i = 0; i < 8; ++i) {
        cm_split_t *sp = NULL;
        CM_ASSERT_OK(cm_split_create(set, 16, 4, &sp));
        assert_ptr_not_equal(sp, old);
        expect_stale_split(old);
        /* a live split next to the stale one: an operation mixing them names the stale one */
        EXPECT_FAIL(cm_split_add_f32(sp, sp, old), INV, "b was already destroyed");
        int visits = 0;
        CM_ASSERT_OK(cm_split_for_each(sp, visit_part, &visits));
        assert_int_equal(visits, 3);
        cm_device_set_t *of = NULL;
        CM_ASSERT_OK(cm_split_info(sp, NULL, NULL, &of));
        assert_ptr_equal(of, set);
        CM_ASSERT_OK(cm_split_destroy(sp));
    }
    /* the split count of the set went back to 0: it closes */
    CM_ASSERT_OK(cm_device_set_close(set));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_set_close_is_not_blocked_by_a_lost_member, setup,
                                        teardown_lost),
        cmocka_unit_test_setup_teardown(test_set_scope_exit_does_not_leak_a_set_with_a_lost_member,
                                        setup, teardown_lost),
        cmocka_unit_test_setup_teardown(test_lost_member_still_refuses_close_while_a_split_lives,
                                        setup, teardown_lost),
        cmocka_unit_test_setup_teardown(test_stale_set_handles_stay_stale, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stale_split_handles_stay_stale, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
