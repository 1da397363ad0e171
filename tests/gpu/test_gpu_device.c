/* Device module on a real GPU: counts, limits, memory, the kernel-image probe, current device. */
#include "cm_test.h"

#include <string.h>

#include <cuda_runtime_api.h>

#include <cudamodel/device.h>
#include <cudamodel/interop.h>

static void test_count_matches_runtime(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    int n = 0, raw = 0;
    CM_ASSERT_OK(cm_device_count(&n));
    assert_int_equal(cudaGetDeviceCount(&raw), cudaSuccess);
    assert_int_equal(n, raw);
    assert_true(n >= 1);
}

static void test_limits_match_properties(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    int n = 0;
    CM_ASSERT_OK(cm_device_count(&n));
    for (int d = 0; d < n; ++d) {
        cm_device_limits_t l;
        CM_ASSERT_OK(cm_device_get_limits(d, &l));
        struct cudaDeviceProp p;
        assert_int_equal(cudaGetDeviceProperties(&p, d), cudaSuccess);
        assert_string_equal(l.name, p.name);
        assert_int_equal(l.ordinal, d);
        assert_int_equal(l.cc_major, p.major);
        assert_int_equal(l.cc_minor, p.minor);
        assert_int_equal(l.multiprocessor_count, p.multiProcessorCount);
        assert_int_equal(l.max_threads_per_block, p.maxThreadsPerBlock);
        assert_int_equal(l.max_grid_dim[0], p.maxGridSize[0]);
        assert_int_equal(l.shared_mem_per_block_optin, p.sharedMemPerBlockOptin);
        assert_int_equal(l.regs_per_multiprocessor, p.regsPerMultiprocessor);
        assert_int_equal(l.total_global_mem, p.totalGlobalMem);
        assert_int_equal(l.warp_size, 32);
        assert_true(l.cc_major * 10 + l.cc_minor >= 75);
        assert_true(strlen(l.pci_bus_id) == 12);
        /* the attribute query agrees with the properties */
        int attr = 0;
        assert_int_equal(cudaDeviceGetAttribute(&attr, cudaDevAttrMultiProcessorCount, d), cudaSuccess);
        assert_int_equal(attr, l.multiprocessor_count);
        print_message("device %d: %s sm_%d%d, %d SMs, %zu MiB, bus %s\n", d, l.name, l.cc_major,
                      l.cc_minor, l.multiprocessor_count, l.total_global_mem >> 20, l.pci_bus_id);
    }
    cm_device_limits_t l;
    assert_int_equal(cm_device_get_limits(n, &l), CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cm_last_error()->message, "does not exist"));
}

static void test_memory_info(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    size_t f = 0, t = 0, rf = 0, rt = 0;
    CM_ASSERT_OK(cm_device_memory_info(0, &f, &t));
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    assert_int_equal(cudaMemGetInfo(&rf, &rt), cudaSuccess);
    assert_true(f > 0 && f <= t);
    assert_int_equal(t, rt);
}

static void test_kernel_image_probe(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_limits_t l;
    CM_ASSERT_OK(cm_device_get_limits(0, &l));
    int cc = l.cc_major * 10 + l.cc_minor;
    cm_kernel_image_t img;
    CM_ASSERT_OK(cm_device_check_kernel_image(0, &img));
    assert_int_equal(img.cuda_error, 0);
    assert_true(img.launch_ok);
    assert_true(img.ptx_version > 0);
    /* the prediction from the build's list agrees with what the runtime loaded */
    if (img.predicted == CM_IMAGE_NATIVE) {
        assert_int_equal(img.binary_version, img.predicted_arch);
    } else {
        assert_int_equal(img.predicted, CM_IMAGE_PTX_JIT);
        assert_int_equal(img.binary_version, cc);
    }
    print_message("library kernels on sm_%d: %s (binaryVersion %d, ptxVersion %d)\n", cc,
                  cm_image_kind_name(img.predicted), img.binary_version, img.ptx_version);
}

static void test_current_device_is_restored(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    int n = 0;
    CM_ASSERT_OK(cm_device_count(&n));
    int last = n - 1;
    assert_int_equal(cudaSetDevice(last), cudaSuccess);
    size_t f, t;
    cm_kernel_image_t img;
    CM_ASSERT_OK(cm_device_memory_info(0, &f, &t));
    CM_ASSERT_OK(cm_device_check_kernel_image(0, &img));
    int cur = -1;
    assert_int_equal(cudaGetDevice(&cur), cudaSuccess);
    assert_int_equal(cur, last);
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count_matches_runtime),
        cmocka_unit_test(test_limits_match_properties),
        cmocka_unit_test(test_memory_info),
        cmocka_unit_test(test_kernel_image_probe),
        cmocka_unit_test(test_current_device_is_restored),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
