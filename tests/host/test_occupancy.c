/*
 * Built-in targets (by architecture and by product name) and host occupancy through
 * cuda_occupancy.h, checked against figures worked out by hand from the programming guide's
 * per-compute-capability table.
 */
#include "cm_test.h"

#include <math.h>
#include <string.h>

#include <cudamodel/launch.h>

static void test_target_names_and_values(void **state) {
    (void)state;
    static const struct {
        const char *name;
        int cc, threads_per_sm, blocks_per_sm;
        size_t smem_per_sm, optin, reserved;
    } want[] = {
        {"sm_75", 75, 1024, 16, 65536, 65536, 0},
        {"sm_80", 80, 2048, 32, 167936, 166912, 1024},
        {"sm_86", 86, 1536, 16, 102400, 101376, 1024},
        {"sm_87", 87, 1536, 16, 167936, 166912, 1024},
        {"sm_89", 89, 1536, 24, 102400, 101376, 1024},
        {"sm_90", 90, 2048, 32, 233472, 232448, 1024},
        {"sm_100", 100, 2048, 32, 233472, 232448, 1024},
        {"sm_120", 120, 1536, 32, 102400, 101376, 1024},
    };
    assert_int_equal(cm_target_count(), (int)(sizeof want / sizeof want[0]));
    for (int i = 0; i < cm_target_count(); ++i) {
        assert_string_equal(cm_target_name(i), want[i].name);
        cm_device_limits_t l;
        CM_ASSERT_OK(cm_target_limits(want[i].name, &l));
        assert_int_equal(l.cc_major * 10 + l.cc_minor, want[i].cc);
        assert_int_equal(l.ordinal, -1);
        assert_int_equal(l.max_threads_per_multiprocessor, want[i].threads_per_sm);
        assert_int_equal(l.max_blocks_per_multiprocessor, want[i].blocks_per_sm);
        assert_int_equal(l.shared_mem_per_multiprocessor, want[i].smem_per_sm);
        assert_int_equal(l.shared_mem_per_block_optin, want[i].optin);
        assert_int_equal(l.reserved_shared_mem_per_block, want[i].reserved);
        assert_int_equal(l.shared_mem_per_block, 49152);
        assert_int_equal(l.regs_per_multiprocessor, 65536);
        assert_int_equal(l.max_threads_per_block, 1024);
        assert_int_equal(l.warp_size, 32);
        assert_int_equal(l.cluster_launch, want[i].cc >= 90);
        assert_true(l.multiprocessor_count > 0);
        assert_non_null(strstr(l.name, want[i].name));
    }
    assert_null(cm_target_name(-1));
    assert_null(cm_target_name(cm_target_count()));
}

static void test_target_spellings_and_products(void **state) {
    (void)state;
    static const struct {
        const char *name;
        int cc;
    } cases[] = {
        {"sm_89", 89},        {"89", 89},          {"8.9", 89},           {"compute_89", 89},
        {"  SM_90  ", 90},    {"sm_90a", 90},      {"RTX 4060 Ti", 89},   {"GeForce RTX 4090", 89},
        {"H200", 90},         {"NVIDIA H100 80GB HBM3", 90},              {"A100-SXM4-80GB", 80},
        {"Tesla T4", 75},     {"Jetson AGX Orin", 87},                    {"RTX 5090", 120},
        {"B200", 100},        {"RTX 3090", 86},    {"NVIDIA L4", 89},     {"L40S", 89},
        {"A10", 86},          {"GTX 1660 Ti", 75}, {"RTX 2080", 75},      {"rtx 50", 120},
        {"12.0", 120},        {"10.0", 100},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        cm_device_limits_t l;
        cm_status_t s = cm_target_limits(cases[i].name, &l);
        if (s != CM_OK || l.cc_major * 10 + l.cc_minor != cases[i].cc) {
            print_error("\"%s\": status %s, sm_%d%d, expected sm_%d\n", cases[i].name,
                        cm_status_name(s), l.cc_major, l.cc_minor, cases[i].cc);
            fail();
        }
    }
}

static void test_unknown_targets(void **state) {
    (void)state;
    const char *bad[] = {"sm_70", "GTX 1080", "", "sm_", "9.", "banana", "sm_999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        cm_device_limits_t l;
        memset(&l, 0x42, sizeof l);
        cm_device_limits_t before = l;
        if (cm_target_limits(bad[i], &l) != CM_ERROR_NOT_SUPPORTED) {
            print_error("\"%s\" was accepted\n", bad[i]);
            fail();
        }
        assert_memory_equal(&l, &before, sizeof l);
    }
    assert_non_null(strstr(cm_last_error()->hint, "sm_89"));
    cm_device_limits_t l;
    assert_int_equal(cm_target_limits(NULL, &l), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cm_target_limits("sm_90", NULL), CM_ERROR_INVALID_ARGUMENT);
}

static cm_kernel_attrs_t kern(int regs, size_t static_smem) {
    cm_kernel_attrs_t k;
    memset(&k, 0, sizeof k);
    k.num_regs = regs;
    k.static_shared_bytes = static_smem;
    k.max_threads_per_block = 1024;
    k.max_dynamic_shared_bytes = 232448;
    return k;
}

typedef struct {
    const char *target;
    int regs;
    size_t static_smem, dyn_smem;
    unsigned threads;
    int blocks;           /* resident blocks per SM, worked out by hand */
    double occupancy;
    unsigned limiter;     /* a limiter that must be reported */
} occ_case_t;

static void test_occupancy_by_hand(void **state) {
    (void)state;
    const occ_case_t cases[] = {
        /* sm_90, 256 threads, 32 regs: 8 warps/block; warps 64/8 = 8; regs 65536/(32*32*8) = 8 */
        {"sm_90", 32, 0, 0, 256, 8, 1.0, CM_OCC_LIMIT_WARPS},
        /* 64 regs: 16384 per block -> 4 blocks, 32 of 64 warps */
        {"sm_90", 64, 0, 0, 256, 4, 0.5, CM_OCC_LIMIT_REGISTERS},
        /* sm_86, 128 threads, 32 regs: warps 48/4 = 12 (blocks 16, regs 16) */
        {"sm_86", 32, 0, 0, 128, 12, 1.0, CM_OCC_LIMIT_WARPS},
        /* sm_75, 1024 threads: 32 warps fill the SM in one block */
        {"sm_75", 32, 0, 0, 1024, 1, 1.0, CM_OCC_LIMIT_WARPS},
        /* sm_75, 32 threads: 16 blocks/SM cap -> 16 of 32 warps */
        {"sm_75", 16, 0, 0, 32, 16, 0.5, CM_OCC_LIMIT_BLOCKS},
        /* sm_89, 64 threads: 24 blocks x 2 warps = 48 warps, both caps bind */
        {"sm_89", 16, 0, 0, 64, 24, 1.0, CM_OCC_LIMIT_BLOCKS},
        /* sm_80, 128 threads, 48 KiB dynamic: (48 + 1 reserved) KiB per block in 164 KiB -> 3 */
        {"sm_80", 16, 0, 48 * 1024, 128, 3, 12.0 / 64.0, CM_OCC_LIMIT_SHARED_MEMORY},
        /* sm_90, 8 KiB static + 24 KiB dynamic: 33 KiB per block in 228 KiB -> 6 blocks of 8 warps */
        {"sm_90", 32, 8 * 1024, 24 * 1024, 256, 6, 48.0 / 64.0, CM_OCC_LIMIT_SHARED_MEMORY},
        /* sm_120, 256 threads, 32 regs: 48 warps / 8 = 6 */
        {"sm_120", 32, 0, 0, 256, 6, 1.0, CM_OCC_LIMIT_WARPS},
        /* sm_90, 1024 threads x 72 regs does not fit the register file at all */
        {"sm_90", 72, 0, 0, 1024, 0, 0.0, CM_OCC_LIMIT_REGISTERS},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        cm_device_limits_t l;
        CM_ASSERT_OK(cm_target_limits(cases[i].target, &l));
        cm_kernel_attrs_t k = kern(cases[i].regs, cases[i].static_smem);
        cm_occupancy_t o;
        CM_ASSERT_OK(cm_occupancy_compute(&l, &k, cases[i].threads, cases[i].dyn_smem, &o));
        if (o.active_blocks_per_sm != cases[i].blocks || fabs(o.occupancy - cases[i].occupancy) > 1e-9 ||
            !(o.limiters & cases[i].limiter)) {
            print_error("case %zu (%s, %d regs, %zu+%zu smem, %u threads): %d blocks, %.4f, limiters "
                        "0x%x; expected %d blocks, %.4f, limiter 0x%x\n",
                        i, cases[i].target, cases[i].regs, cases[i].static_smem, cases[i].dyn_smem,
                        cases[i].threads, o.active_blocks_per_sm, o.occupancy, o.limiters,
                        cases[i].blocks, cases[i].occupancy, cases[i].limiter);
            fail();
        }
        assert_int_equal(o.active_warps_per_sm, o.active_blocks_per_sm * (int)((cases[i].threads + 31) / 32));
    }
    /* a block above the kernel's own maximum (__launch_bounds__(256)) cannot launch, but like
     * cudaOccupancyMaxActiveBlocksPerMultiprocessor (checked on the H200) the calculator counts
     * only the device's limits: validation, not occupancy, rejects such a block */
    {
        cm_device_limits_t l;
        CM_ASSERT_OK(cm_target_limits("sm_90", &l));
        cm_kernel_attrs_t k = kern(32, 0);
        k.max_threads_per_block = 256;
        cm_occupancy_t o;
        CM_ASSERT_OK(cm_occupancy_compute(&l, &k, 256, 0, &o));
        assert_int_equal(o.active_blocks_per_sm, 8);
        CM_ASSERT_OK(cm_occupancy_compute(&l, &k, 288, 0, &o));
        assert_int_equal(o.active_blocks_per_sm, 7); /* 64 warps / 9 per block */
    }
    assert_string_equal(cm_occupancy_limiter_name(CM_OCC_LIMIT_REGISTERS | CM_OCC_LIMIT_WARPS), "registers");
    assert_string_equal(cm_occupancy_limiter_name(CM_OCC_LIMIT_SHARED_MEMORY), "shared memory");
    assert_string_equal(cm_occupancy_limiter_name(0), "none");
}

static void test_best_block_size(void **state) {
    (void)state;
    cm_device_limits_t l;
    CM_ASSERT_OK(cm_target_limits("sm_90", &l));
    cm_kernel_attrs_t k = kern(32, 0);
    unsigned block = 0;
    int grid = 0;
    CM_ASSERT_OK(cm_occupancy_best_block_size(&l, &k, 0, &block, &grid));
    /* a light kernel reaches full occupancy; the calculator prefers the largest such block */
    cm_occupancy_t o;
    CM_ASSERT_OK(cm_occupancy_compute(&l, &k, block, 0, &o));
    assert_true(o.occupancy > 0.999);
    assert_int_equal(block, 1024);
    assert_int_equal(grid, 2 * l.multiprocessor_count);
    /* 128 registers per thread: at most 512 threads fit, and full occupancy is out of reach */
    k = kern(128, 0);
    CM_ASSERT_OK(cm_occupancy_best_block_size(&l, &k, 0, &block, NULL));
    assert_true(block <= 512);
    CM_ASSERT_OK(cm_occupancy_compute(&l, &k, block, 0, &o));
    assert_true(fabs(o.occupancy - 0.25) < 1e-9);
    /* arguments */
    assert_int_equal(cm_occupancy_best_block_size(NULL, &k, 0, &block, NULL), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cm_occupancy_best_block_size(&l, &k, 0, NULL, NULL), CM_ERROR_INVALID_ARGUMENT);
    /* a kernel whose shared memory never fits */
    k = kern(32, 0);
    assert_int_equal(cm_occupancy_best_block_size(&l, &k, 300 * 1024, &block, NULL), CM_ERROR_INVALID_ARGUMENT);
}

static void test_occupancy_arguments(void **state) {
    (void)state;
    cm_device_limits_t l;
    CM_ASSERT_OK(cm_target_limits("sm_90", &l));
    cm_kernel_attrs_t k = kern(32, 0);
    cm_occupancy_t o;
    assert_int_equal(cm_occupancy_compute(NULL, &k, 256, 0, &o), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cm_occupancy_compute(&l, NULL, 256, 0, &o), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cm_occupancy_compute(&l, &k, 256, 0, NULL), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cm_occupancy_compute(&l, &k, 0, 0, &o), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cm_occupancy_compute(&l, &k, 2048, 0, &o), CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cm_last_error()->message, "block of 2048 threads"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_target_names_and_values),
        cmocka_unit_test(test_target_spellings_and_products),
        cmocka_unit_test(test_unknown_targets),
        cmocka_unit_test(test_occupancy_by_hand),
        cmocka_unit_test(test_best_block_size),
        cmocka_unit_test(test_occupancy_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
