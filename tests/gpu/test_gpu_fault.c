/*
 * A real sticky error: a kernel writes through an invalid pointer. In synchronous debug mode
 * the check after the launch names the kernel and its launch site, says the context is lost,
 * and later library calls fail fast with that cause. Labelled "faulting": it is not run under
 * compute-sanitizer (which would report the planted fault).
 */
#include "cm_test.h"

#include <string.h>

#include <cuda_runtime_api.h>

#include <cudamodel/device.h>
#include <cudamodel/interop.h>

void launch_fault(void);

static void test_fault_names_its_launch_and_later_calls_fail_fast(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    int *warm = NULL;
    assert_int_equal(cudaMalloc((void **)&warm, 64), cudaSuccess);
    cm_sync_mode_set(true);
    launch_fault();
    cm_status_t s = cm_check_launch("fault_kernel<<<1, 32>>>", "test_gpu_fault.c", 1234);
    assert_int_equal(s, CM_ERROR_CONTEXT_LOST);
    const cm_error_t *e = cm_last_error();
    assert_true(e->context_lost);
    assert_true(cm_cuda_error_is_sticky((cudaError_t)e->cuda_error));
    assert_non_null(strstr(e->message, "fault_kernel<<<1, 32>>> launched at test_gpu_fault.c:1234"));
    assert_non_null(strstr(e->hint, "restart"));
    char report[2048];
    cm_error_format(NULL, report, sizeof report);
    print_message("%s\n", report);
    int first_error = e->cuda_error;

    /* later library calls fail fast with the same cause */
    cm_last_error_clear();
    cm_device_limits_t l;
    assert_int_equal(cm_device_get_limits(0, &l), CM_ERROR_CONTEXT_LOST);
    assert_int_equal(cm_last_error()->cuda_error, first_error);
    assert_non_null(strstr(cm_last_error()->message, "fault_kernel"));
    assert_int_equal(cm_check_context(0), CM_ERROR_CONTEXT_LOST);

    /* and CUDA itself agrees the context is gone */
    void *p = NULL;
    cudaError_t raw = cudaMalloc(&p, 64);
    assert_int_not_equal(raw, cudaSuccess);
    assert_int_equal(cm_record_cuda_error(raw, "cudaMalloc after the fault", __FILE__, __LINE__),
                     CM_ERROR_CONTEXT_LOST);
    cm_sync_mode_set(false);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fault_names_its_launch_and_later_calls_fail_fast),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
