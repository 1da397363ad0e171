/*
 * Launch validation on every built-in target: each rule at its boundary on both sides, every
 * violation listed, kernel attributes (launch bounds, registers, shared-memory opt-in) and
 * clusters. No GPU needed: the limits come from the built-in target tables.
 */
#include "cm_test.h"

#include <stdio.h>
#include <string.h>

#include <cudamodel/launch.h>

static cm_launch_config_t cfg3(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, size_t dyn) {
    cm_launch_config_t c = CM_LAUNCH_CONFIG_INIT;
    c.grid.x = gx, c.grid.y = gy, c.grid.z = gz;
    c.block.x = bx, c.block.y = by, c.block.z = bz;
    c.dynamic_shared_bytes = dyn;
    return c;
}

static cm_kernel_attrs_t plain_kernel(int regs) {
    cm_kernel_attrs_t k;
    memset(&k, 0, sizeof k);
    strcpy(k.name, "k");
    k.num_regs = regs;
    k.max_threads_per_block = 1024;
    k.max_dynamic_shared_bytes = 48 * 1024;
    return k;
}

/* expect a verdict; on a violation check the count of rules and a substring of the message */
static void expect(const cm_launch_config_t *c, const cm_device_limits_t *l, const cm_kernel_attrs_t *k,
                   int rules, const char *needle, const char *what) {
    cm_last_error_clear();
    cm_status_t s = cm_launch_config_validate(c, l, k);
    if (rules == 0) {
        if (s != CM_OK) {
            print_error("%s on %s: rejected: %s\n", what, l->name, cm_last_error()->message);
            fail();
        }
        return;
    }
    if (s != CM_ERROR_INVALID_LAUNCH) {
        print_error("%s on %s: accepted, expected %d broken rule(s)\n", what, l->name, rules);
        fail();
    }
    char head[32];
    snprintf(head, sizeof head, "%d launch rule%s broken", rules, rules == 1 ? "" : "s");
    const char *msg = cm_last_error()->message;
    if (strstr(msg, head) == NULL || (needle != NULL && strstr(msg, needle) == NULL)) {
        print_error("%s on %s: message \"%s\" lacks \"%s\" / \"%s\"\n", what, l->name, msg, head,
                    needle ? needle : "");
        fail();
    }
}

static void test_thread_and_dimension_limits_on_every_target(void **state) {
    (void)state;
    assert_int_equal(cm_target_count(), 8);
    for (int t = 0; t < cm_target_count(); ++t) {
        cm_device_limits_t l;
        CM_ASSERT_OK(cm_target_limits(cm_target_name(t), &l));
        cm_launch_config_t c;
        c = cfg3(1, 1, 1, 1024, 1, 1, 0), expect(&c, &l, NULL, 0, NULL, "1024 threads");
        c = cfg3(1, 1, 1, 32, 32, 1, 0), expect(&c, &l, NULL, 0, NULL, "32 x 32");
        c = cfg3(1, 1, 1, 33, 32, 1, 0), expect(&c, &l, NULL, 1, "block has 1056 threads", "33 x 32");
        c = cfg3(1, 1, 1, 1025, 1, 1, 0), expect(&c, &l, NULL, 2, "block.x is 1025", "1025 threads");
        c = cfg3(1, 1, 1, 2048, 1, 1, 0), expect(&c, &l, NULL, 2, "allows 1024 per block", "2048");
        c = cfg3(1, 1, 1, 1, 1, 64, 0), expect(&c, &l, NULL, 0, NULL, "block.z 64");
        c = cfg3(1, 1, 1, 1, 1, 65, 0), expect(&c, &l, NULL, 1, "block.z is 65", "block.z 65");
        c = cfg3(1, 1, 1, 1, 1024, 1, 0), expect(&c, &l, NULL, 0, NULL, "block.y 1024");
        c = cfg3(1, 1, 1, 0, 1, 1, 0), expect(&c, &l, NULL, 1, "block.x is 0", "block.x 0");
        c = cfg3(2147483647u, 65535, 65535, 1, 1, 1, 0), expect(&c, &l, NULL, 0, NULL, "max grid");
        c = cfg3(2147483648u, 1, 1, 1, 1, 1, 0), expect(&c, &l, NULL, 1, "grid.x is 2147483648", "grid.x");
        c = cfg3(1, 65536, 1, 1, 1, 1, 0), expect(&c, &l, NULL, 1, "grid.y is 65536", "grid.y");
        c = cfg3(1, 1, 65536, 1, 1, 1, 0), expect(&c, &l, NULL, 1, "grid.z is 65536", "grid.z");
        /* y and z of 0 mean 1; grid.x of 0 is an empty launch */
        c = cfg3(0, 0, 0, 256, 0, 0, 0), expect(&c, &l, NULL, 0, NULL, "zeros");
    }
}

static void test_shared_memory_on_every_target(void **state) {
    (void)state;
    for (int t = 0; t < cm_target_count(); ++t) {
        cm_device_limits_t l;
        CM_ASSERT_OK(cm_target_limits(cm_target_name(t), &l));
        size_t optin = l.shared_mem_per_block_optin;
        cm_launch_config_t c;
        /* without kernel attributes only the hard (opt-in) limit applies */
        c = cfg3(1, 1, 1, 128, 1, 1, optin), expect(&c, &l, NULL, 0, NULL, "optin");
        c = cfg3(1, 1, 1, 128, 1, 1, optin + 1), expect(&c, &l, NULL, 1, "even with opt-in", "optin+1");
        /* a kernel that did not opt in: 48 KiB is its dynamic limit */
        cm_kernel_attrs_t k = plain_kernel(32);
        c = cfg3(1, 1, 1, 128, 1, 1, 48 * 1024), expect(&c, &l, &k, 0, NULL, "48 KiB");
        c = cfg3(1, 1, 1, 128, 1, 1, 48 * 1024 + 1),
        expect(&c, &l, &k, 1, "cudaFuncAttributeMaxDynamicSharedMemorySize", "48 KiB + 1");
        /* after opting in to the maximum */
        k.max_dynamic_shared_bytes = optin;
        c = cfg3(1, 1, 1, 128, 1, 1, optin), expect(&c, &l, &k, 0, NULL, "opted in");
        /* static + dynamic over the opt-in limit */
        k.static_shared_bytes = 4096;
        k.max_dynamic_shared_bytes = optin - 4096;
        c = cfg3(1, 1, 1, 128, 1, 1, optin - 4096), expect(&c, &l, &k, 0, NULL, "static+dyn");
        c = cfg3(1, 1, 1, 128, 1, 1, optin - 4095),
        expect(&c, &l, &k, 1, "4096 static", "static+dyn+1");
    }
}

static void test_kernel_limits(void **state) {
    (void)state;
    for (int t = 0; t < cm_target_count(); ++t) {
        cm_device_limits_t l;
        CM_ASSERT_OK(cm_target_limits(cm_target_name(t), &l));
        cm_launch_config_t c;
        /* __launch_bounds__(256) */
        cm_kernel_attrs_t k = plain_kernel(32);
        k.max_threads_per_block = 256;
        c = cfg3(10, 1, 1, 256, 1, 1, 0), expect(&c, &l, &k, 0, NULL, "bounds 256");
        c = cfg3(10, 1, 1, 257, 1, 1, 0), expect(&c, &l, &k, 1, "can run at most 256", "bounds 257");
        /* registers: 64 x 1024 fills the 64K register file exactly; 65 does not fit */
        k = plain_kernel(64);
        c = cfg3(1, 1, 1, 1024, 1, 1, 0), expect(&c, &l, &k, 0, NULL, "64 regs x 1024");
        k = plain_kernel(65);
        c = cfg3(1, 1, 1, 1024, 1, 1, 0), expect(&c, &l, &k, 1, "registers", "65 regs x 1024");
        c = cfg3(1, 1, 1, 512, 1, 1, 0), expect(&c, &l, &k, 0, NULL, "65 regs x 512");
        k = plain_kernel(255);
        c = cfg3(1, 1, 1, 256, 1, 1, 0), expect(&c, &l, &k, 0, NULL, "255 regs x 256");
        c = cfg3(1, 1, 1, 288, 1, 1, 0), expect(&c, &l, &k, 1, "255 per thread", "255 regs x 288");
    }
}

static void test_clusters(void **state) {
    (void)state;
    cm_device_limits_t h, ada;
    CM_ASSERT_OK(cm_target_limits("sm_90", &h));
    CM_ASSERT_OK(cm_target_limits("sm_89", &ada));
    cm_launch_config_t c = cfg3(8, 2, 1, 128, 1, 1, 0);
    c.cluster.x = 2;
    expect(&c, &h, NULL, 0, NULL, "cluster 2");
    expect(&c, &ada, NULL, 1, "no thread-block clusters", "cluster on sm_89");
    c.grid.x = 7;
    expect(&c, &h, NULL, 1, "grid.x = 7 is not a multiple of cluster.x = 2", "grid 7");
    c = cfg3(8, 1, 1, 128, 1, 1, 0);
    c.cluster.x = 8;
    expect(&c, &h, NULL, 0, NULL, "cluster 8");
    c = cfg3(16, 1, 1, 128, 1, 1, 0);
    c.cluster.x = 16;
    expect(&c, &h, NULL, 1, "cluster has 16 blocks; at most 8", "cluster 16 portable");
    cm_kernel_attrs_t k = plain_kernel(32);
    k.non_portable_cluster_allowed = 1;
    expect(&c, &h, &k, 0, NULL, "cluster 16 non-portable");
    c = cfg3(4, 4, 2, 128, 1, 1, 0);
    c.cluster.x = 2, c.cluster.y = 2, c.cluster.z = 2;
    expect(&c, &h, NULL, 0, NULL, "cluster 2x2x2");
    c.grid.z = 3;
    expect(&c, &h, NULL, 1, "grid.z = 3", "grid.z 3");
}

static void test_all_violations_are_listed(void **state) {
    (void)state;
    cm_device_limits_t l;
    CM_ASSERT_OK(cm_target_limits("sm_89", &l));
    cm_launch_config_t c = cfg3(1, 70000, 1, 2048, 1, 1, 200 * 1024);
    c.cluster.x = 2;
    /* threads, block.x, grid.y, shared memory, no clusters on sm_89 */
    expect(&c, &l, NULL, 5, "(5)", "five at once");
    const char *m = cm_last_error()->message;
    assert_non_null(strstr(m, "(1) block has 2048 threads"));
    assert_non_null(strstr(m, "grid.y is 70000"));
    assert_non_null(strstr(m, "200 KiB of shared memory"));
    assert_non_null(strstr(m, "no thread-block clusters"));
    assert_non_null(strstr(cm_last_error()->hint, "cudamodel-doctor"));
}

static void test_real_device_wording(void **state) {
    (void)state;
    /* limits as read from a device carry its name and architecture into the message */
    cm_device_limits_t l;
    CM_ASSERT_OK(cm_target_limits("sm_90", &l));
    strcpy(l.name, "NVIDIA H200");
    l.ordinal = 0;
    cm_launch_config_t c = cfg3(1, 1, 1, 2048, 1, 1, 0);
    expect(&c, &l, NULL, 2, "block has 2048 threads (2048 x 1 x 1); NVIDIA H200 (sm_90) allows 1024 per block",
           "H200 wording");
    assert_int_equal(cm_last_error()->device, 0);
}

static void test_arguments(void **state) {
    (void)state;
    cm_device_limits_t l;
    CM_ASSERT_OK(cm_target_limits("sm_90", &l));
    cm_launch_config_t c = cfg3(1, 1, 1, 32, 1, 1, 0);
    assert_int_equal(cm_launch_config_validate(NULL, &l, NULL), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cm_launch_config_validate(&c, NULL, NULL), CM_ERROR_INVALID_ARGUMENT);
}

static void test_2d_config(void **state) {
    (void)state;
    cm_launch_config_t c;
    CM_ASSERT_OK(cm_launch_config_2d(1920, 1080, 16, 16, &c));
    assert_int_equal(c.grid.x, 120);
    assert_int_equal(c.grid.y, 68);
    assert_int_equal(c.block.x, 16);
    assert_int_equal(c.block.y, 16);
    CM_ASSERT_OK(cm_launch_config_2d(0, 1080, 16, 16, &c));
    assert_int_equal(c.grid.x, 0);
    assert_int_equal(cm_launch_config_2d(10, 10, 64, 32, &c), CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cm_last_error()->message, "2048 threads"));
    assert_int_equal(cm_launch_config_2d(10, 10, 0, 32, &c), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cm_launch_config_2d(10, 65536u * 16 + 1, 16, 16, &c), CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cm_last_error()->message, "65537"));
    assert_int_equal(cm_launch_config_2d(10, 10, 16, 16, NULL), CM_ERROR_INVALID_ARGUMENT);
    /* the result validates on every target */
    CM_ASSERT_OK(cm_launch_config_2d(4096, 4096, 32, 32, &c));
    for (int t = 0; t < cm_target_count(); ++t) {
        cm_device_limits_t l;
        CM_ASSERT_OK(cm_target_limits(cm_target_name(t), &l));
        CM_ASSERT_OK(cm_launch_config_validate(&c, &l, NULL));
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thread_and_dimension_limits_on_every_target),
        cmocka_unit_test(test_shared_memory_on_every_target),
        cmocka_unit_test(test_kernel_limits),
        cmocka_unit_test(test_clusters),
        cmocka_unit_test(test_all_violations_are_listed),
        cmocka_unit_test(test_real_device_wording),
        cmocka_unit_test(test_arguments),
        cmocka_unit_test(test_2d_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
