/* Version macros and run-time version calls agree, and match the project version. */
#include "cm_test.h"

#include <stdio.h>
#include <string.h>

#include <cudamodel/version.h>

static void test_macros_match_functions(void **state) {
    (void)state;
    assert_int_equal(cm_version_number(), CM_VERSION_NUMBER);
    assert_string_equal(cm_version_string(), CM_VERSION_STRING);
    char expect[32];
    snprintf(expect, sizeof expect, "%d.%d.%d", CM_VERSION_MAJOR, CM_VERSION_MINOR, CM_VERSION_PATCH);
    assert_string_equal(cm_version_string(), expect);
    assert_int_equal(CM_VERSION_NUMBER, CM_VERSION_MAJOR * 10000 + CM_VERSION_MINOR * 100 + CM_VERSION_PATCH);
}

static void test_version_is_0_1_0(void **state) {
    (void)state;
    /* bump together with project(VERSION) in CMakeLists.txt */
    assert_string_equal(CM_VERSION_STRING, "0.1.0");
    assert_int_equal(cm_version_number(), 100);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_macros_match_functions),
        cmocka_unit_test(test_version_is_0_1_0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
