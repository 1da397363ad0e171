/*
 * "no kernel image is available for execution on the device", diagnosed before launch.
 *
 * noimage_kernel.cu is built for sm_120 only (SASS, no PTX; see tests/noimage.cmake). On a GPU
 * that cannot run sm_120 code (the H200 is sm_90) cm_kernel_check_image and cm_launch must say
 * CM_ERROR_NO_KERNEL_IMAGE before any launch, naming the device's architecture and the rebuild
 * flag, and CUDA itself must refuse a raw launch with cudaErrorNoKernelImageForDevice. On an
 * sm_12x GPU the kernel has native code, and the test checks that it runs instead.
 */
#include "cm_test.h"

#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include <cudamodel/device.h>
#include <cudamodel/interop.h>
#include <cudamodel/launch.h>

/* from noimage_kernel.cu */
const void *noimage_kernel_ptr(void);
unsigned noimage_kernel_marker(void);

#define CUDA_OK(call)                                                                        \
    do {                                                                                     \
        cudaError_t e_ = (call);                                                             \
        if (e_ != cudaSuccess) fail_msg("%s: %s", #call, cudaGetErrorName(e_));              \
    } while (0)

static void expect_detail(const cm_error_t *e, int cc) {
    char sm[16], flag[64];
    snprintf(sm, sizeof sm, "sm_%d", cc);
    snprintf(flag, sizeof flag, "-DCMAKE_CUDA_ARCHITECTURES=%d", cc);
    char report[2048];
    cm_error_format(e, report, sizeof report);
    print_message("%s\n", report);
    assert_int_equal(e->status, CM_ERROR_NO_KERNEL_IMAGE);
    if (strstr(e->message, sm) == NULL) fail_msg("the message does not name %s: %s", sm, e->message);
    if (strstr(e->hint, flag) == NULL) fail_msg("the hint does not give %s: %s", flag, e->hint);
    assert_false(e->context_lost);
}

static void test_sm120_only_kernel_is_diagnosed_before_launch(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    CUDA_OK(cudaSetDevice(0));
    cm_sync_mode_set(false);
    cm_device_limits_t l;
    CM_ASSERT_OK(cm_device_get_limits(0, &l));
    const int cc = l.cc_major * 10 + l.cc_minor;
    const void *fn = noimage_kernel_ptr();
    unsigned *d = NULL;
    CUDA_OK(cudaMalloc((void **)&d, sizeof(unsigned)));
    CUDA_OK(cudaMemset(d, 0xab, sizeof(unsigned)));
    void *args[] = {&d};
    cm_launch_config_t cfg = CM_LAUNCH_CONFIG_INIT;
    cfg.grid.x = 1;
    cfg.block.x = 32;

    if (l.cc_major == 12) {
        /* sm_120 code runs natively on sm_12x: then the kernel must simply work */
        print_message("device 0 is sm_%d: the sm_120-only kernel has native code here\n", cc);
        cm_kernel_image_report_t rep;
        CM_ASSERT_OK(cm_kernel_check_image(fn, 0, &rep));
        assert_int_equal(rep.binary_version, 120);
        CM_ASSERT_OK(CM_LAUNCH(NULL, fn, &cfg, args)); /* NULL stream: complete on return */
        unsigned h = 0;
        CUDA_OK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
        assert_int_equal(h, noimage_kernel_marker());
        CUDA_OK(cudaFree(d));
        return;
    }

    /* 1. the library's check, first to touch the kernel */
    cm_kernel_image_report_t rep;
    cm_last_error_clear();
    assert_int_equal(cm_kernel_check_image(fn, 0, &rep), CM_ERROR_NO_KERNEL_IMAGE);
    expect_detail(cm_last_error(), cc);
    assert_int_equal(rep.device_cc, cc);
    assert_int_equal(rep.binary_version, 0);
    char sm[16];
    snprintf(sm, sizeof sm, "sm_%d", cc);
    assert_non_null(strstr(rep.message, sm));
    assert_int_equal(cudaGetLastError(), cudaSuccess);

    cm_kernel_attrs_t attrs;
    assert_int_equal(cm_kernel_attrs_get(fn, 0, &attrs), CM_ERROR_NO_KERNEL_IMAGE);
    expect_detail(cm_last_error(), cc);

    /* 2. cm_launch refuses before launching: nothing ran, nothing pending */
    cm_last_error_clear();
    int line = __LINE__ + 1;
    cm_status_t s = CM_LAUNCH(NULL, fn, &cfg, args);
    assert_int_equal(s, CM_ERROR_NO_KERNEL_IMAGE);
    const cm_error_t *e = cm_last_error();
    expect_detail(e, cc);
    if (strstr(e->file, "test_gpu_noimage.c") == NULL || e->line != line)
        fail_msg("the detail names %s:%d, not the caller's test_gpu_noimage.c:%d", e->file,
                 e->line, line);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    /* twice: the failure is not cached as success */
    assert_int_equal(cm_launch(NULL, fn, &cfg, args), CM_ERROR_NO_KERNEL_IMAGE);
    unsigned h = 0;
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    assert_int_equal(h, 0xababababu);

    /* 3. CUDA itself agrees */
    struct cudaFuncAttributes fa;
    cudaError_t ae = cudaFuncGetAttributes(&fa, fn);
    (void)cudaGetLastError();
    dim3 g = {1, 1, 1}, b = {32, 1, 1};
    cudaError_t le = cudaLaunchKernel(fn, g, b, args, 0, 0);
    cudaError_t last = cudaGetLastError();
    print_message("raw CUDA: cudaFuncGetAttributes -> %s, cudaLaunchKernel -> %s \"%s\"\n",
                  cudaGetErrorName(ae), cudaGetErrorName(le), cudaGetErrorString(le));
    assert_int_equal(ae, cudaErrorNoKernelImageForDevice);
    assert_int_equal(le, cudaErrorNoKernelImageForDevice);
    assert_true(last == cudaErrorNoKernelImageForDevice || last == cudaSuccess);

    /* 4. not sticky: the context still works */
    assert_int_equal(cm_check_context(0), CM_OK);
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    assert_int_equal(h, 0xababababu);
    CUDA_OK(cudaFree(d));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sm120_only_kernel_is_diagnosed_before_launch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
