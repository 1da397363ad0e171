/*
 * Launch configuration helpers of launch.h: the 1-D covering config and thread counts; and
 * cm_launch()'s stream argument (it comes first; NULL is synchronous): a released stream, or a
 * handle that is not a stream, is refused before anything is launched. The stream checks run on
 * the simulated devices and streams of test_buffer_fake.h / test_stream_fake.h (no GPU).
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <string.h>

#include <cudamodel/buffer.h>
#include <cudamodel/launch.h>
#include <cudamodel/stream.h>

#include "test_stream_fake.h" /* and test_buffer_fake.h */

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
    assert_int_equal(c.dynamic_shared_bytes, 0);
    assert_int_equal(c.cluster.x, 0); /* the fields past grid and block are zeroed */
    assert_int_equal(c.cluster.y, 0);
    assert_int_equal(c.cluster.z, 0);
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

/* ---------------------------------------------------------------- cm_launch and its stream */

static atomic_int g_launches; /* kernel launches that reached CUDA */

static cudaError_t count_launch(const cudaLaunchConfig_t *cfg, const void *fn, void **args) {
    (void)cfg;
    (void)fn;
    (void)args;
    atomic_fetch_add(&g_launches, 1);
    return cudaSuccess;
}

/* Stands for a __global__ function: never called, its address only is passed. */
static void not_a_kernel(void) {}

static void test_launch_refuses_a_released_stream(void **state) {
    (void)state;
    xfake_install(1);
    cm__cuda.launch_kernel_ex = count_launch; /* restored by xfake_uninstall() */
    atomic_store(&g_launches, 0);
    cm_device_t *dev = xfake_open_dev(0);
    cm_stream_t *s = NULL, *gone = NULL;
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_HIGH, &gone));
    CM_ASSERT_OK(cm_stream_release(gone));
    cm_launch_config_t cfg = CM_LAUNCH_CONFIG_INIT;
    CM_ASSERT_OK(cm_launch_config_1d(1000, 256, &cfg));
    const void *k = (const void *)(uintptr_t)not_a_kernel;
    EXPECT_FAIL(cm_launch(gone, k, &cfg, NULL), CM_ERROR_INVALID_ARGUMENT,
                "stream was already released");
    /* with the caller's file:line: the failure is reported there */
    EXPECT_FAIL(CM_LAUNCH(gone, k, &cfg, NULL), CM_ERROR_INVALID_ARGUMENT,
                "stream was already released");
    assert_non_null(strstr(cm_last_error()->file, "test_launch_config.c"));
    EXPECT_FAIL(cm_launch_at(gone, k, &cfg, NULL, "mine.c", 7), CM_ERROR_INVALID_ARGUMENT,
                "stream was already released");
    assert_string_equal(cm_last_error()->file, "mine.c");
    assert_int_equal(cm_last_error()->line, 7);
    /* an empty launch (grid.x = 0) on a released stream is refused all the same */
    cm_launch_config_t empty = CM_LAUNCH_CONFIG_INIT;
    EXPECT_FAIL(cm_launch(gone, k, &empty, NULL), CM_ERROR_INVALID_ARGUMENT, "released");
    /* a handle of another kind passed as the stream: the message names its kind */
    cm_buffer_t *buf = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, 64, &buf));
    EXPECT_FAIL(cm_launch((cm_stream_t *)(void *)buf, k, &cfg, NULL), CM_ERROR_INVALID_ARGUMENT,
                "stream is a cm_buffer_t, not a cm_stream_t");
    CM_ASSERT_OK(cm_buffer_destroy(buf));
    assert_int_equal(atomic_load(&g_launches), 0); /* nothing reached CUDA */
    /* the acquired stream itself is accepted: an empty launch does nothing and succeeds */
    CM_ASSERT_OK(cm_launch(s, k, &empty, NULL));
    assert_int_equal(atomic_load(&g_launches), 0);
    CM_ASSERT_OK(cm_stream_release(s));
    CM_ASSERT_OK(cm_device_close(dev));
    const int left = fake_outstanding(), live = xfake_live();
    xfake_uninstall();
    assert_int_equal(left, 0);
    assert_int_equal(live, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_1d_small_sizes),
        cmocka_unit_test(test_1d_zero_elements_is_an_empty_launch),
        cmocka_unit_test(test_1d_beyond_2_pow_31),
        cmocka_unit_test(test_1d_rejects_big_blocks),
        cmocka_unit_test(test_threads_count),
        cmocka_unit_test(test_launch_refuses_a_released_stream),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
