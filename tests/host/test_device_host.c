/*
 * Device module logic that needs no GPU: architecture lists, the "which image runs" rule,
 * limits from a cudaDeviceProp, argument checks, and the device count's failure statuses
 * (fault injection through the internal hooks).
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <stdlib.h>
#include <string.h>

#include <cudamodel/device.h>
#include <cudamodel/interop.h>
#include <cudamodel/version.h>

#include "internal.h"

#define DEFAULT_ARCHS "75-real;80-real;86-real;89-real;90-real;100-real;110-real;120"

static void test_parse_default_list(void **state) {
    (void)state;
    cm_arch_list_t a;
    CM_ASSERT_OK(cm_arch_list_parse(DEFAULT_ARCHS, &a));
    assert_int_equal(a.n_sass, 8);
    assert_int_equal(a.n_ptx, 1);
    assert_int_equal(a.sass[0], 75);
    assert_int_equal(a.sass[4], 90);
    assert_int_equal(a.sass[7], 120);
    assert_int_equal(a.ptx[0], 120);
    for (int i = 0; i < a.n_sass; ++i) assert_int_equal(a.sass_specific[i], 0);
}

static void test_parse_suffixes(void **state) {
    (void)state;
    cm_arch_list_t a;
    CM_ASSERT_OK(cm_arch_list_parse("90a-real;100f-real;120-virtual;86", &a));
    assert_int_equal(a.n_sass, 3);
    assert_int_equal(a.sass[0], 90);
    assert_int_equal(a.sass_specific[0], 1);
    assert_int_equal(a.sass[1], 100);
    assert_int_equal(a.sass_specific[1], 0);
    assert_int_equal(a.sass[2], 86);
    assert_int_equal(a.n_ptx, 2);
    assert_int_equal(a.ptx[0], 120);
    assert_int_equal(a.ptx[1], 86);
}

static void test_parse_rejects_garbage(void **state) {
    (void)state;
    const char *bad[] = {"", "abc", "90-fake", "90;;80", "9", "90x", "-real", ";90", "12345"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        cm_arch_list_t a;
        memset(&a, 0x11, sizeof a);
        cm_arch_list_t before = a;
        if (cm_arch_list_parse(bad[i], &a) != CM_ERROR_INVALID_ARGUMENT) {
            print_error("\"%s\" was accepted\n", bad[i]);
            fail();
        }
        assert_memory_equal(&a, &before, sizeof a); /* output untouched */
    }
    assert_non_null(strstr(cm_last_error()->message, "12345"));
    assert_int_equal(cm_arch_list_parse(NULL, NULL), CM_ERROR_INVALID_ARGUMENT);
    /* too many entries */
    char many[512] = "";
    for (int i = 0; i < CM_ARCH_LIST_MAX + 1; ++i) strcat(many, i ? ";75-real" : "75-real");
    cm_arch_list_t a;
    assert_int_equal(cm_arch_list_parse(many, &a), CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cm_last_error()->message, "more than"));
}

static void test_build_architectures(void **state) {
    (void)state;
    cm_version_info_t vi;
    CM_ASSERT_OK(cm_version_info(&vi));
    const char *archs = vi.cuda_architectures;
    assert_non_null(archs);
    cm_arch_list_t a;
    CM_ASSERT_OK(cm_arch_list_parse(archs, &a));
    assert_true(a.n_sass + a.n_ptx > 0);
}

typedef struct {
    const char *archs;
    int cc;
    cm_image_kind_t kind;
    int used;
} image_case_t;

static void test_image_prediction_table(void **state) {
    (void)state;
    const image_case_t cases[] = {
        /* the default build on the GPUs people own */
        {DEFAULT_ARCHS, 75, CM_IMAGE_NATIVE, 75},  {DEFAULT_ARCHS, 80, CM_IMAGE_NATIVE, 80},
        {DEFAULT_ARCHS, 86, CM_IMAGE_NATIVE, 86},  {DEFAULT_ARCHS, 89, CM_IMAGE_NATIVE, 89},
        {DEFAULT_ARCHS, 90, CM_IMAGE_NATIVE, 90},  {DEFAULT_ARCHS, 100, CM_IMAGE_NATIVE, 100},
        /* Jetson Orin (sm_87) and B300 (sm_103) run the sm_86 / sm_100 machine code */
        {DEFAULT_ARCHS, 87, CM_IMAGE_NATIVE, 86},  {DEFAULT_ARCHS, 103, CM_IMAGE_NATIVE, 100},
        {DEFAULT_ARCHS, 110, CM_IMAGE_NATIVE, 110}, {DEFAULT_ARCHS, 120, CM_IMAGE_NATIVE, 120},
        /* sm_121 (DGX Spark) runs sm_120 machine code: same major, higher minor */
        {DEFAULT_ARCHS, 121, CM_IMAGE_NATIVE, 120},
        /* an unknown future GPU: only the PTX of 120 */
        {DEFAULT_ARCHS, 130, CM_IMAGE_PTX_JIT, 120},
        /* Volta is older than anything carried */
        {DEFAULT_ARCHS, 70, CM_IMAGE_NONE, 0},
        /* machine code never runs on an older minor or another major */
        {"86-real", 80, CM_IMAGE_NONE, 0},
        {"90-real", 100, CM_IMAGE_NONE, 0},
        {"80-real", 86, CM_IMAGE_NATIVE, 80},
        {"80-real;90-virtual", 100, CM_IMAGE_PTX_JIT, 90},
        {"80-real;90-virtual", 89, CM_IMAGE_NATIVE, 80},
        {"120-real", 90, CM_IMAGE_NONE, 0},
        {"120-virtual", 90, CM_IMAGE_NONE, 0},
        /* arch-specific machine code runs on exactly its architecture */
        {"90a-real", 90, CM_IMAGE_NATIVE, 90},
        {"90a-real", 100, CM_IMAGE_NONE, 0},
        /* with several candidates the newest compatible one is used */
        {"80-real;86-real;89-real", 89, CM_IMAGE_NATIVE, 89},
        {"80-real;86-real", 89, CM_IMAGE_NATIVE, 86},
        {"75-virtual;80-virtual", 90, CM_IMAGE_PTX_JIT, 80},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        cm_arch_list_t a;
        CM_ASSERT_OK(cm_arch_list_parse(cases[i].archs, &a));
        int used = -1;
        cm_image_kind_t k = cm_arch_image_for(&a, cases[i].cc, &used);
        if (k != cases[i].kind || used != cases[i].used) {
            print_error("archs \"%s\" on sm_%d: got %s via %d, expected %s via %d\n",
                        cases[i].archs, cases[i].cc, cm_image_kind_name(k), used,
                        cm_image_kind_name(cases[i].kind), cases[i].used);
            fail();
        }
    }
    assert_int_equal(cm_arch_image_for(NULL, 90, NULL), CM_IMAGE_NONE);
    cm_arch_list_t a;
    CM_ASSERT_OK(cm_arch_list_parse("90", &a));
    assert_int_equal(cm_arch_image_for(&a, 0, NULL), CM_IMAGE_NONE);
    assert_string_equal(cm_image_kind_name(CM_IMAGE_NATIVE), "native");
    assert_string_equal(cm_image_kind_name(CM_IMAGE_PTX_JIT), "PTX JIT");
    assert_string_equal(cm_image_kind_name(CM_IMAGE_NONE), "none");
}

static void test_arch_name(void **state) {
    (void)state;
    char buf[16];
    assert_string_equal(cm_arch_name(90, buf, sizeof buf), "sm_90");
    assert_string_equal(cm_arch_name(120, buf, sizeof buf), "sm_120");
    assert_string_equal(cm_arch_name(0, buf, sizeof buf), "sm_?");
    assert_null(cm_arch_name(90, NULL, 0));
}

/* cudaDeviceProp as an H200 reports it (figures from shared/anchors/h200.md). */
static struct cudaDeviceProp h200_props(void) {
    struct cudaDeviceProp p;
    memset(&p, 0, sizeof p);
    strcpy(p.name, "NVIDIA H200");
    p.major = 9;
    p.minor = 0;
    p.multiProcessorCount = 132;
    p.warpSize = 32;
    p.maxThreadsPerBlock = 1024;
    p.maxThreadsDim[0] = 1024;
    p.maxThreadsDim[1] = 1024;
    p.maxThreadsDim[2] = 64;
    p.maxGridSize[0] = 2147483647;
    p.maxGridSize[1] = 65535;
    p.maxGridSize[2] = 65535;
    p.sharedMemPerBlock = 48 * 1024;
    p.sharedMemPerBlockOptin = 227 * 1024;
    p.sharedMemPerMultiprocessor = 228 * 1024;
    p.reservedSharedMemPerBlock = 1024;
    p.regsPerBlock = 65536;
    p.regsPerMultiprocessor = 65536;
    p.maxThreadsPerMultiProcessor = 2048;
    p.maxBlocksPerMultiProcessor = 32;
    p.l2CacheSize = 60 * 1024 * 1024;
    p.totalGlobalMem = (size_t)139 * 1024 * 1024 * 1024;
    p.clusterLaunch = 1;
    p.pciDomainID = 0;
    p.pciBusID = 0x3b;
    p.pciDeviceID = 0;
    return p;
}

static void test_limits_from_props(void **state) {
    (void)state;
    struct cudaDeviceProp p = h200_props();
    cm_device_limits_t l;
    CM_ASSERT_OK(cm_device_limits_from_props(&p, 0, &l));
    assert_string_equal(l.name, "NVIDIA H200");
    assert_int_equal(l.ordinal, 0);
    assert_int_equal(l.cc_major, 9);
    assert_int_equal(l.cc_minor, 0);
    assert_int_equal(l.multiprocessor_count, 132);
    assert_int_equal(l.max_threads_per_block, 1024);
    assert_int_equal(l.max_block_dim[2], 64);
    assert_int_equal(l.max_grid_dim[0], 2147483647);
    assert_int_equal(l.max_grid_dim[1], 65535);
    assert_int_equal(l.shared_mem_per_block, 48 * 1024);
    assert_int_equal(l.shared_mem_per_block_optin, 227 * 1024);
    assert_int_equal(l.shared_mem_per_multiprocessor, 228 * 1024);
    assert_int_equal(l.reserved_shared_mem_per_block, 1024);
    assert_int_equal(l.regs_per_multiprocessor, 65536);
    assert_int_equal(l.max_threads_per_multiprocessor, 2048);
    assert_int_equal(l.max_blocks_per_multiprocessor, 32);
    assert_int_equal(l.l2_cache_bytes, 60 * 1024 * 1024);
    assert_int_equal(l.cluster_launch, 1);
    assert_string_equal(l.pci_bus_id, "0000:3b:00.0");
    /* a target description carries no bus id */
    CM_ASSERT_OK(cm_device_limits_from_props(&p, -1, &l));
    assert_string_equal(l.pci_bus_id, "");
}

static void test_limits_from_props_arguments(void **state) {
    (void)state;
    struct cudaDeviceProp p;
    memset(&p, 0, sizeof p);
    cm_device_limits_t l;
    memset(&l, 0x77, sizeof l);
    cm_device_limits_t before = l;
    assert_int_equal(cm_device_limits_from_props(&p, 0, &l), CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cm_last_error()->message, "never filled"));
    assert_memory_equal(&l, &before, sizeof l);
    assert_int_equal(cm_device_limits_from_props(NULL, 0, &l), CM_ERROR_INVALID_ARGUMENT);
    p = h200_props();
    assert_int_equal(cm_device_limits_from_props(&p, 0, NULL), CM_ERROR_INVALID_ARGUMENT);
}

static void test_null_arguments(void **state) {
    (void)state;
    assert_int_equal(cm_device_count(NULL), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cm_device_get_limits(0, NULL), CM_ERROR_INVALID_ARGUMENT);
    size_t f;
    assert_int_equal(cm_device_memory_info(0, NULL, &f), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cm_device_memory_info(0, &f, NULL), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cm_version_info(NULL), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cm_device_check_kernel_image(0, NULL), CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cm_last_error()->message, "NULL"));
}

/* ---- fault injection: what cudaGetDeviceCount answers */
static cudaError_t g_count_error;
static int g_count_value;
static int g_driver;
static cudaError_t fake_count(int *n) {
    *n = g_count_value;
    return g_count_error;
}
static cudaError_t fake_driver(int *v) {
    *v = g_driver;
    return cudaSuccess;
}

static void test_device_count_statuses(void **state) {
    (void)state;
    cm__cuda_t saved = cm__cuda;
    cm__cuda.get_device_count = fake_count;
    cm__cuda.driver_get_version = fake_driver;
    int n = -1;

    g_count_error = cudaErrorInsufficientDriver, g_driver = 0;
    assert_int_equal(cm_device_count(&n), CM_ERROR_NO_DRIVER);
    assert_int_equal(n, 0);
    g_driver = 12080;
    assert_int_equal(cm_device_count(&n), CM_ERROR_DRIVER_TOO_OLD);
    g_count_error = cudaErrorNoDevice;
    assert_int_equal(cm_device_count(&n), CM_ERROR_NO_DEVICE);
    g_count_error = cudaSuccess, g_count_value = 0;
    assert_int_equal(cm_device_count(&n), CM_ERROR_NO_DEVICE);
    g_count_value = 2;
    CM_ASSERT_OK(cm_device_count(&n));
    assert_int_equal(n, 2);

    /* an ordinal out of range names the count */
    cm_device_limits_t l;
    assert_int_equal(cm_device_get_limits(5, &l), CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cm_last_error()->message, "device 5 does not exist: 2 devices are visible"));
    assert_int_equal(cm_device_get_limits(-1, &l), CM_ERROR_INVALID_ARGUMENT);
    size_t f, t;
    assert_int_equal(cm_device_memory_info(2, &f, &t), CM_ERROR_INVALID_ARGUMENT);
    cm__cuda = saved;
    cm_last_error_clear();
}

static void test_real_device_count_is_consistent(void **state) {
    (void)state;
    /* whatever machine this is, the library's answer agrees with the runtime's */
    int n = -1, raw = -1;
    cm_status_t s = cm_device_count(&n);
    cudaError_t err = cudaGetDeviceCount(&raw);
    (void)cudaGetLastError();
    if (err == cudaSuccess && raw > 0) {
        CM_ASSERT_OK(s);
        assert_int_equal(n, raw);
    } else {
        assert_int_not_equal(s, CM_OK);
        assert_int_equal(n, 0);
        if (err == cudaErrorInsufficientDriver) {
            cm_version_info_t vi;
            CM_ASSERT_OK(cm_version_info(&vi));
            assert_int_equal(s, vi.driver == 0 ? CM_ERROR_NO_DRIVER : CM_ERROR_DRIVER_TOO_OLD);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_default_list),
        cmocka_unit_test(test_parse_suffixes),
        cmocka_unit_test(test_parse_rejects_garbage),
        cmocka_unit_test(test_build_architectures),
        cmocka_unit_test(test_image_prediction_table),
        cmocka_unit_test(test_arch_name),
        cmocka_unit_test(test_limits_from_props),
        cmocka_unit_test(test_limits_from_props_arguments),
        cmocka_unit_test(test_null_arguments),
        cmocka_unit_test(test_device_count_statuses),
        cmocka_unit_test(test_real_device_count_is_consistent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
