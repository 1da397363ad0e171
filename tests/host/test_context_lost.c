/*
 * Sticky errors: after a fault that loses the context, the detail says so and later library
 * calls on that device fail fast with the original cause. Fault injection: the faults are
 * recorded through cm_record_cuda_error and the device count/current device come from hooks,
 * so no GPU is needed (tests/gpu/test_gpu_fault.c does it with a real faulting kernel).
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <string.h>

#include <cudamodel/device.h>
#include <cudamodel/interop.h>
#include <cudamodel/status.h>

#include "internal.h"

static int g_device;

static cudaError_t fake_get_device(int *d) {
    *d = g_device;
    return cudaSuccess;
}
static cudaError_t fake_device_count(int *n) {
    *n = 2;
    return cudaSuccess;
}

static cm__cuda_t g_saved;

static int setup(void **state) {
    (void)state;
    g_saved = cm__cuda;
    cm__cuda.get_device = fake_get_device;
    cm__cuda.get_device_count = fake_device_count;
    cm__context_reset_for_tests();
    cm_last_error_clear();
    return 0;
}

static int teardown(void **state) {
    (void)state;
    cm__cuda = g_saved;
    cm__context_reset_for_tests();
    cm_last_error_clear();
    return 0;
}

static void test_sticky_error_marks_the_context_lost(void **state) {
    (void)state;
    g_device = 1;
    assert_int_equal(cm_record_cuda_error(cudaErrorIllegalAddress, "cudaStreamSynchronize(s)",
                                          "pipeline.c", 40),
                     CM_ERROR_CONTEXT_LOST);
    const cm_error_t *e = cm_last_error();
    assert_true(e->context_lost);
    assert_int_equal(e->device, 1);
    assert_non_null(strstr(e->hint, "restart the process"));
    char report[2048];
    cm_error_format(NULL, report, sizeof report);
    assert_non_null(strstr(report, "context is lost"));
}

static void test_later_calls_fail_fast_with_the_cause(void **state) {
    (void)state;
    cm_last_error_clear();
    /* device 1 is lost, device 0 is not */
    assert_int_equal(cm_check_context(0), CM_OK);
    assert_int_equal(cm_check_context(1), CM_ERROR_CONTEXT_LOST);
    const cm_error_t *e = cm_last_error();
    assert_string_equal(e->call, "cudaStreamSynchronize(s)");
    assert_string_equal(e->file, "pipeline.c");
    assert_int_equal(e->line, 40);
    assert_int_equal(e->cuda_error, 700);
    assert_non_null(strstr(e->message, "lost earlier"));
    assert_int_equal(cm_check_context(-1), CM_ERROR_CONTEXT_LOST);

    /* a library call on device 1 fails fast instead of reaching CUDA */
    cm_device_limits_t lim;
    memset(&lim, 0x5a, sizeof lim);
    cm_device_limits_t before = lim;
    assert_int_equal(cm_device_get_limits(1, &lim), CM_ERROR_CONTEXT_LOST);
    assert_memory_equal(&lim, &before, sizeof lim); /* output untouched */
    assert_int_equal(cm_last_error()->cuda_error, 700);

    /* the application's own launch check, too */
    g_device = 1;
    assert_int_equal(cm_check_launch("my_kernel", "app.c", 10), CM_ERROR_CONTEXT_LOST);
}

static void test_non_sticky_errors_do_not_lose_the_context(void **state) {
    (void)state;
    cm__context_reset_for_tests();
    g_device = 0;
    assert_int_equal(cm_record_cuda_error(cudaErrorMemoryAllocation, "cudaMalloc", "a.c", 1),
                     CM_ERROR_DEVICE_OUT_OF_MEMORY);
    assert_false(cm_last_error()->context_lost);
    assert_int_equal(cm_check_context(0), CM_OK);
    assert_int_equal(cm_check_context(-1), CM_OK);
}

static void test_unknown_device_poisons_every_device(void **state) {
    (void)state;
    cm__context_reset_for_tests();
    g_device = -1;
    assert_int_equal(cm_record_cuda_error(cudaErrorLaunchFailure, "k<<<>>>", "a.c", 2),
                     CM_ERROR_CONTEXT_LOST);
    assert_int_equal(cm_check_context(0), CM_ERROR_CONTEXT_LOST);
    assert_int_equal(cm_check_context(5), CM_ERROR_CONTEXT_LOST);
    assert_int_equal(cm_last_error()->cuda_error, 719);
}

static void test_first_cause_is_kept(void **state) {
    (void)state;
    cm__context_reset_for_tests();
    g_device = 0;
    cm_record_cuda_error(cudaErrorMisalignedAddress, "first", "a.c", 1);
    cm_record_cuda_error(cudaErrorIllegalAddress, "second", "a.c", 2);
    assert_int_equal(cm_check_context(0), CM_ERROR_CONTEXT_LOST);
    assert_string_equal(cm_last_error()->call, "first");
    assert_int_equal(cm_last_error()->cuda_error, 716);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sticky_error_marks_the_context_lost),
        cmocka_unit_test(test_later_calls_fail_fast_with_the_cause),
        cmocka_unit_test(test_non_sticky_errors_do_not_lose_the_context),
        cmocka_unit_test(test_unknown_device_poisons_every_device),
        cmocka_unit_test(test_first_cause_is_kept),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
