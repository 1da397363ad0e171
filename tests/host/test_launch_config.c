/* Launch configuration helpers of launch.h: the 1-D covering config and thread counts. */
#include "cm_test.h"

#include <string.h>

#include <cudamodel/launch.h>

static void test_1d_small_sizes(void **state) {
    (void)state;
    cm_launch_config_t c = CM_LAUNCH_CONFIG_INIT;
    CM_ASSERT_OK(cm_launch_config_1d(1, 256, &c));
    assert_int_equal(c.grid.x, 1);
    assert_int_equal(c.block.x, 256);
    assert_int_equal(c.grid.y, 1);
    assert_int_equal(c.block.z, 1);
    CM_ASSERT_OK(cm_launch_config_1d(256, 256, &c));
    assert_int_equal(c.grid.x, 1);
    CM_ASSERT_OK(cm_launch_config_1d(257, 256, &c));
    assert_int_equal(c.grid.x, 2);
    CM_ASSERT_OK(cm_launch_config_1d(1000, 0, &c)); /* 0 picks 256 */
    assert_int_equal(c.block.x, 256);
    assert_int_equal(c.grid.x, 4);
    CM_ASSERT_OK(cm_launch_config_1d(1000, 1024, &c));
    assert_int_equal(c.grid.x, 1);
    CM_ASSERT_OK(cm_launch_config_1d(1000, 1, &c));
    assert_int_equal(c.grid.x, 1000);
}

static void test_1d_zero_elements_is_an_empty_launch(void **state) {
    (void)state;
    cm_launch_config_t c;
    memset(&c, 0x33, sizeof c);
    CM_ASSERT_OK(cm_launch_config_1d(0, 128, &c));
    assert_int_equal(c.grid.x, 0);
    assert_null(c.stream);
    assert_int_equal(c.dynamic_shared_bytes, 0);
    assert_int_equal(cm_launch_config_threads(&c), 0);
}

static void test_1d_beyond_2_pow_31(void **state) {
    (void)state;
    cm_launch_config_t c;
    /* 2^33 elements at 1024 per block: 2^23 blocks */
    CM_ASSERT_OK(cm_launch_config_1d(UINT64_C(1) << 33, 1024, &c));
    assert_int_equal(c.grid.x, 1u << 23);
    /* the largest n that still fits grid.x at 1024 threads */
    uint64_t max_n = (uint64_t)CM_MAX_GRID_X * 1024u;
    CM_ASSERT_OK(cm_launch_config_1d(max_n, 1024, &c));
    assert_int_equal(c.grid.x, CM_MAX_GRID_X);
    assert_true(cm_launch_config_threads(&c) == max_n);
    /* one more element needs one block too many */
    cm_launch_config_t before = c;
    assert_int_equal(cm_launch_config_1d(max_n + 1, 1024, &c), CM_ERROR_INVALID_ARGUMENT);
    assert_memory_equal(&c, &before, sizeof c);
    assert_non_null(strstr(cm_last_error()->message, "2147483648 blocks"));
    assert_non_null(strstr(cm_last_error()->hint, "grid-stride"));
    /* no overflow near UINT64_MAX */
    assert_int_equal(cm_launch_config_1d(UINT64_MAX, 1024, &c), CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cm_last_error()->message, "18014398509481984 blocks"));
}

static void test_1d_rejects_big_blocks(void **state) {
    (void)state;
    cm_launch_config_t c;
    assert_int_equal(cm_launch_config_1d(100, 1025, &c), CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cm_last_error()->message, "1025 threads"));
    assert_non_null(strstr(cm_last_error()->message, "1024"));
    assert_int_equal(cm_launch_config_1d(100, 256, NULL), CM_ERROR_INVALID_ARGUMENT);
}

static void test_threads_count(void **state) {
    (void)state;
    cm_launch_config_t c = CM_LAUNCH_CONFIG_INIT;
    assert_int_equal(cm_launch_config_threads(NULL), 0);
    assert_int_equal(cm_launch_config_threads(&c), 0); /* grid.x 0: empty */
    c.grid.x = 2;
    c.grid.y = 3;
    c.block.x = 4;
    c.block.y = 5;
    assert_int_equal(cm_launch_config_threads(&c), 120); /* the seed's (2,3) x (4,5) */
    c.grid.x = 0xffffffffu;
    c.grid.y = 0xffffffffu;
    c.grid.z = 0xffffffffu;
    c.block.x = c.block.y = c.block.z = 1024;
    assert_true(cm_launch_config_threads(&c) == UINT64_MAX); /* saturates */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_1d_small_sizes),
        cmocka_unit_test(test_1d_zero_elements_is_an_empty_launch),
        cmocka_unit_test(test_1d_beyond_2_pow_31),
        cmocka_unit_test(test_1d_rejects_big_blocks),
        cmocka_unit_test(test_threads_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
