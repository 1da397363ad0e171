/* The checked-call layer against the real runtime: out of memory, a bad launch, a good one. */
#include "cm_test.h"

#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include <cudamodel/interop.h>
#include <cudamodel/launch.h>

void launch_iota(int *d_out, int n, unsigned grid, unsigned block);

static cm_status_t alloc(void **p, size_t bytes) {
    CM_CUDA_TRY(cudaMalloc(p, bytes));
    return CM_OK;
}

static void test_out_of_memory_is_named(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    void *p = NULL;
    size_t tib = (size_t)1 << 40;
    assert_int_equal(alloc(&p, tib), CM_ERROR_DEVICE_OUT_OF_MEMORY);
    const cm_error_t *e = cm_last_error();
    assert_int_equal(e->cuda_error, cudaErrorMemoryAllocation);
    assert_string_equal(e->call, "cudaMalloc(p, bytes)");
    assert_int_equal(e->device, 0);
    assert_false(e->context_lost);
    /* the error was cleared: the next call is not blamed for it */
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    assert_int_equal(alloc(&p, 1024), CM_OK);
    assert_int_equal(cudaFree(p), cudaSuccess);
}

static void test_bad_launch_is_reported_by_the_check(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    int *d = NULL;
    assert_int_equal(cudaMalloc((void **)&d, 4096 * sizeof(int)), cudaSuccess);
    launch_iota(d, 4096, 2, 2048); /* 2048 threads per block: rejected by CUDA */
    cm_status_t s = cm_check_launch("iota_kernel<<<2, 2048>>>", __FILE__, __LINE__);
    assert_true(s == CM_ERROR_INVALID_ARGUMENT || s == CM_ERROR_INVALID_LAUNCH);
    const cm_error_t *e = cm_last_error();
    assert_true(e->cuda_error == cudaErrorInvalidValue || e->cuda_error == cudaErrorInvalidConfiguration);
    assert_non_null(strstr(e->call, "iota_kernel<<<2, 2048>>>"));
    assert_false(e->context_lost);
    print_message("CUDA said %s for 2048 threads per block\n", e->cuda_error_name);
    /* nothing sticky: the context still works */
    assert_int_equal(cm_check_context(0), CM_OK);
    assert_int_equal(cudaFree(d), cudaSuccess);
}

static void test_good_launch_in_both_modes(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    const int n = 100003;
    cm_launch_config_t cfg;
    CM_ASSERT_OK(cm_launch_config_1d((uint64_t)n, 256, &cfg));
    int *d = NULL;
    int *h = malloc(n * sizeof(int));
    assert_non_null(h);
    assert_int_equal(cudaMalloc((void **)&d, n * sizeof(int)), cudaSuccess);
    for (int mode = 0; mode < 2; ++mode) {
        cm_sync_mode_set(mode == 1);
        assert_int_equal(cudaMemset(d, 0xff, n * sizeof(int)), cudaSuccess); /* poison */
        launch_iota(d, n, cfg.grid.x, cfg.block.x);
        CM_ASSERT_OK(cm_check_launch("iota_kernel", __FILE__, __LINE__));
        assert_int_equal(cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
        for (int i = 0; i < n; ++i) {
            if (h[i] != 3 * i + 1) {
                print_error("mode %d: h[%d] = %d\n", mode, i, h[i]);
                fail();
            }
        }
    }
    cm_sync_mode_set(false);
    assert_int_equal(cudaFree(d), cudaSuccess);
    free(h);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_out_of_memory_is_named),
        cmocka_unit_test(test_bad_launch_is_reported_by_the_check),
        cmocka_unit_test(test_good_launch_in_both_modes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
