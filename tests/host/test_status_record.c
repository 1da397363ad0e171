/*
 * Recording CUDA errors: the detail, the "no driver" vs "driver too old" split, hidden devices,
 * and the checked-call macros of interop.h. Fault injection: the driver/runtime version and the
 * current device come from the internal hooks (src/internal.h).
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <stdlib.h>
#include <string.h>

#include <cudamodel/interop.h>
#include <cudamodel/status.h>

#include "internal.h"

static int g_driver_version;
static int g_device = 3;

static cudaError_t fake_driver_version(int *v) {
    *v = g_driver_version;
    return cudaSuccess;
}
static cudaError_t fake_runtime_version(int *v) {
    *v = 13000;
    return cudaSuccess;
}
static cudaError_t fake_get_device(int *d) {
    *d = g_device;
    return cudaSuccess;
}

static cm__cuda_t g_saved;

static int install_hooks(void **state) {
    (void)state;
    g_saved = cm__cuda;
    cm__cuda.driver_get_version = fake_driver_version;
    cm__cuda.runtime_get_version = fake_runtime_version;
    cm__cuda.get_device = fake_get_device;
    return 0;
}

static int restore_hooks(void **state) {
    (void)state;
    cm__cuda = g_saved;
    cm_last_error_clear();
    return 0;
}

static void test_success_records_nothing(void **state) {
    (void)state;
    cm__fail(CM_ERROR_BUSY, -1, "x.c", 1, "x", NULL, "earlier");
    assert_int_equal(cm_record_cuda_error(cudaSuccess, "call", "f.c", 1), CM_OK);
    assert_int_equal(cm_last_error()->status, CM_ERROR_BUSY);
    assert_string_equal(cm_last_error()->message, "earlier");
}

static void test_detail_fields(void **state) {
    (void)state;
    g_device = 3;
    assert_int_equal(cm_record_cuda_error(cudaErrorMemoryAllocation, "cudaMalloc(&p, n)", "alloc.c", 99),
                     CM_ERROR_DEVICE_OUT_OF_MEMORY);
    const cm_error_t *e = cm_last_error();
    assert_int_equal(e->status, CM_ERROR_DEVICE_OUT_OF_MEMORY);
    assert_int_equal(e->cuda_error, 2);
    assert_string_equal(e->cuda_error_name, "cudaErrorMemoryAllocation");
    assert_string_equal(e->call, "cudaMalloc(&p, n)");
    assert_string_equal(e->file, "alloc.c");
    assert_int_equal(e->line, 99);
    assert_int_equal(e->device, 3);
    assert_false(e->context_lost);
    assert_non_null(strstr(e->message, "cudaMalloc(&p, n) failed"));
    assert_non_null(strstr(e->hint, "nvidia-smi"));
}

static void test_null_call_and_file_are_allowed(void **state) {
    (void)state;
    assert_int_equal(cm_record_cuda_error(cudaErrorInvalidValue, NULL, NULL, 0),
                     CM_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cm_last_error()->call, "");
    assert_string_equal(cm_last_error()->file, "");
    assert_true(strlen(cm_last_error()->message) > 0);
}

static void test_no_driver_is_not_called_insufficient(void **state) {
    (void)state;
    g_driver_version = 0; /* what cudaDriverGetVersion says when libcuda is absent */
    assert_int_equal(cm_record_cuda_error(cudaErrorInsufficientDriver, "cudaGetDeviceCount", "d.c", 5),
                     CM_ERROR_NO_DRIVER);
    const cm_error_t *e = cm_last_error();
    assert_int_equal(e->status, CM_ERROR_NO_DRIVER);
    assert_true(strncmp(e->message, "no NVIDIA driver is installed", 29) == 0);
    assert_non_null(strstr(e->hint, "install the NVIDIA driver"));
    assert_non_null(strstr(e->hint, "--gpus all"));
}

static void test_driver_too_old_names_both_versions(void **state) {
    (void)state;
    g_driver_version = 12020;
    assert_int_equal(cm_record_cuda_error(cudaErrorInsufficientDriver, "cudaGetDeviceCount", "d.c", 5),
                     CM_ERROR_DRIVER_TOO_OLD);
    const cm_error_t *e = cm_last_error();
    assert_non_null(strstr(e->message, "supports CUDA 12.2"));
    assert_non_null(strstr(e->message, "runtime 13.0"));
}

static void test_no_device_names_cuda_visible_devices(void **state) {
    (void)state;
    setenv("CUDA_VISIBLE_DEVICES", "", 1);
    assert_int_equal(cm_record_cuda_error(cudaErrorNoDevice, "cudaGetDeviceCount", "d.c", 5),
                     CM_ERROR_NO_DEVICE);
    assert_non_null(strstr(cm_last_error()->message, "CUDA_VISIBLE_DEVICES=''"));
    assert_non_null(strstr(cm_last_error()->hint, "unset CUDA_VISIBLE_DEVICES"));
    unsetenv("CUDA_VISIBLE_DEVICES");
    assert_int_equal(cm_record_cuda_error(cudaErrorNoDevice, "cudaGetDeviceCount", "d.c", 5),
                     CM_ERROR_NO_DEVICE);
    assert_null(strstr(cm_last_error()->message, "CUDA_VISIBLE_DEVICES"));
    assert_non_null(strstr(cm_last_error()->message, "sees no CUDA device"));
}

static cm_status_t uses_cuda_try(cudaError_t injected) {
    CM_CUDA_TRY(injected);
    return CM_OK;
}

static cm_status_t uses_cuda_try_goto(cudaError_t injected, int *cleaned) {
    cm_status_t s = CM_OK;
    CM_CUDA_TRY_GOTO(injected, s, out);
out:
    *cleaned = 1;
    return s;
}

static void test_checked_call_macros(void **state) {
    (void)state;
    assert_int_equal(uses_cuda_try(cudaSuccess), CM_OK);
    assert_int_equal(uses_cuda_try(cudaErrorInvalidConfiguration), CM_ERROR_INVALID_LAUNCH);
    assert_string_equal(cm_last_error()->call, "injected");
    assert_non_null(strstr(cm_last_error()->file, "test_status_record.c"));
    assert_true(cm_last_error()->line > 0);
    int cleaned = 0;
    assert_int_equal(uses_cuda_try_goto(cudaErrorNoKernelImageForDevice, &cleaned),
                     CM_ERROR_NO_KERNEL_IMAGE);
    assert_int_equal(cleaned, 1);
    assert_non_null(strstr(cm_last_error()->hint, "CMAKE_CUDA_ARCHITECTURES"));
}

static void test_unknown_error_value(void **state) {
    (void)state;
    assert_int_equal(cm_record_cuda_error((cudaError_t)4242, "future_call", "f.c", 1), CM_ERROR_CUDA);
    assert_int_equal(cm_last_error()->cuda_error, 4242);
    assert_non_null(cm_last_error()->cuda_error_name);
    assert_non_null(strstr(cm_last_error()->hint, "not known"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_success_records_nothing),
        cmocka_unit_test(test_detail_fields),
        cmocka_unit_test(test_null_call_and_file_are_allowed),
        cmocka_unit_test(test_no_driver_is_not_called_insufficient),
        cmocka_unit_test(test_driver_too_old_names_both_versions),
        cmocka_unit_test(test_no_device_names_cuda_visible_devices),
        cmocka_unit_test(test_checked_call_macros),
        cmocka_unit_test(test_unknown_error_value),
    };
    return cmocka_run_group_tests(tests, install_hooks, restore_hooks);
}
