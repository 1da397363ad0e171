/*
 * Version macros and the run-time version query agree, and match the project version;
 * cm_version_info() fills every field (the CUDA runtime and driver, the build, NCCL), answers 0
 * for what it cannot read (no driver, a failing runtime or NCCL call: fault injection through
 * the call table) without failing, and refuses a NULL out.
 */
#include "cm_test.h"

#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include <cudamodel/device.h>
#include <cudamodel/version.h>

#include "build_info.h"
#include "internal.h"

static cm_version_info_t query(void) {
    cm_version_info_t vi;
    memset(&vi, 0x5a, sizeof vi); /* every field is written */
    CM_ASSERT_OK(cm_version_info(&vi));
    return vi;
}

static void test_macros_match_functions(void **state) {
    (void)state;
    cm_version_info_t vi = query();
    assert_int_equal(vi.library, CM_VERSION_NUMBER);
    assert_string_equal(cm_version_string(), CM_VERSION_STRING);
    assert_string_equal(vi.library_string, cm_version_string());
    char expect[32];
    snprintf(expect, sizeof expect, "%d.%d.%d", CM_VERSION_MAJOR, CM_VERSION_MINOR, CM_VERSION_PATCH);
    assert_string_equal(cm_version_string(), expect);
    assert_int_equal(CM_VERSION_NUMBER, CM_VERSION_MAJOR * 10000 + CM_VERSION_MINOR * 100 + CM_VERSION_PATCH);
}

static void test_version_is_0_1_0(void **state) {
    (void)state;
    /* bump together with project(VERSION) in CMakeLists.txt */
    assert_string_equal(CM_VERSION_STRING, "0.1.0");
    assert_int_equal(query().library, 100);
}

static void test_info_cuda_versions(void **state) {
    (void)state;
    cm_last_error_clear();
    cm_version_info_t vi = query();
    assert_int_equal(cm_last_error()->status, CM_OK); /* records nothing */
    assert_int_equal(vi.runtime_built, CUDART_VERSION);
    int rt = 0;
    assert_int_equal(cudaRuntimeGetVersion(&rt), cudaSuccess);
    assert_int_equal(vi.runtime, rt);
    assert_true(vi.runtime >= 13000);
    int drv = -1;
    assert_int_equal(cudaDriverGetVersion(&drv), cudaSuccess);
    assert_int_equal(vi.driver, drv); /* 0 without a driver */
    assert_true(vi.driver >= 0);
}

static void test_info_build_architectures(void **state) {
    (void)state;
    cm_version_info_t vi = query();
    assert_non_null(vi.cuda_architectures);
    assert_string_equal(vi.cuda_architectures, CM_BUILD_CUDA_ARCHITECTURES);
    cm_arch_list_t a;
    CM_ASSERT_OK(cm_arch_list_parse(vi.cuda_architectures, &a));
    assert_true(a.n_sass + a.n_ptx > 0);
}

static void test_info_nccl(void **state) {
    (void)state;
    cm_version_info_t vi = query();
    assert_int_equal(vi.nccl_built, CM_HAVE_NCCL != 0);
    if (!vi.nccl_built) {
        assert_int_equal(vi.nccl_built_version, 0);
        assert_int_equal(vi.nccl, 0);
        return;
    }
#if CM_HAVE_NCCL
    assert_int_equal(vi.nccl_built_version, NCCL_VERSION_CODE);
    assert_true(vi.nccl_built_version >= 20000);
    int v = 0;
    assert_int_equal(ncclGetVersion(&v), ncclSuccess);
    assert_int_equal(vi.nccl, v);
    assert_int_equal(vi.nccl / 10000, vi.nccl_built_version / 10000); /* same major */
#endif
}

/* ---- fault injection: no driver, a failing runtime, a failing NCCL */
static cudaError_t no_driver(int *v) {
    *v = 0;
    return cudaSuccess; /* what cudaDriverGetVersion answers without a driver */
}
static cudaError_t failing_driver(int *v) {
    *v = 12345;
    return cudaErrorInsufficientDriver;
}
static cudaError_t failing_runtime(int *v) {
    *v = 12345;
    return cudaErrorInvalidValue;
}
#if CM_HAVE_NCCL
static ncclResult_t failing_nccl(int *v) {
    *v = 12345;
    return ncclSystemError;
}
#endif

static void test_info_no_driver_is_not_an_error(void **state) {
    (void)state;
    cm__cuda.driver_get_version = no_driver;
    cm_last_error_clear();
    cm_version_info_t vi = query();
    assert_int_equal(vi.driver, 0);
    assert_int_equal(vi.runtime_built, CUDART_VERSION);
    assert_int_equal(cm_last_error()->status, CM_OK);

    /* the call itself failing gives 0 as well */
    cm__cuda.driver_get_version = failing_driver;
    cm__cuda.runtime_get_version = failing_runtime;
#if CM_HAVE_NCCL
    cm__cuda.nccl_get_version = failing_nccl;
#endif
    vi = query();
    assert_int_equal(vi.driver, 0);
    assert_int_equal(vi.runtime, 0);
    assert_int_equal(vi.nccl, 0);
    assert_int_equal(vi.nccl_built, CM_HAVE_NCCL != 0); /* build facts stay */
    assert_int_equal(vi.runtime_built, CUDART_VERSION);
    assert_int_equal(vi.library, CM_VERSION_NUMBER);
    assert_int_equal(cm_last_error()->status, CM_OK);
    cm__cuda_restore();
}

static void test_info_null_out(void **state) {
    (void)state;
    CM_ASSERT_STATUS(cm_version_info(NULL), CM_ERROR_INVALID_ARGUMENT);
    const cm_error_t *e = cm_last_error();
    assert_int_equal(e->status, CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(e->message, "out is NULL"));
    assert_non_null(strstr(e->hint, "address of a cm_version_info_t"));
    cm_last_error_clear();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_macros_match_functions),
        cmocka_unit_test(test_version_is_0_1_0),
        cmocka_unit_test(test_info_cuda_versions),
        cmocka_unit_test(test_info_build_architectures),
        cmocka_unit_test(test_info_nccl),
        cmocka_unit_test(test_info_no_driver_is_not_an_error),
        cmocka_unit_test(test_info_null_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
