/* Status names and texts, the thread-local detail, its formatting, CM_TRY, the sync mode. */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cudamodel/status.h>

#include "internal.h"

static void test_every_status_has_a_unique_name_and_text(void **state) {
    (void)state;
    for (int i = 0; i < CM_STATUS_COUNT; ++i) {
        const char *name = cm_status_name((cm_status_t)i);
        const char *text = cm_status_string((cm_status_t)i);
        assert_non_null(name);
        assert_non_null(text);
        assert_true(strncmp(name, "CM_", 3) == 0);
        assert_string_not_equal(name, "CM_STATUS_UNKNOWN");
        assert_true(strlen(text) > 5);
        for (int j = 0; j < i; ++j) {
            assert_string_not_equal(name, cm_status_name((cm_status_t)j));
            assert_string_not_equal(text, cm_status_string((cm_status_t)j));
        }
    }
    assert_string_equal(cm_status_name(CM_OK), "CM_OK");
    assert_string_equal(cm_status_name(CM_ERROR_NO_DRIVER), "CM_ERROR_NO_DRIVER");
    assert_non_null(strstr(cm_status_string(CM_ERROR_NO_DRIVER), "no NVIDIA driver"));
}

static void test_out_of_range_status(void **state) {
    (void)state;
    assert_string_equal(cm_status_name((cm_status_t)CM_STATUS_COUNT), "CM_STATUS_UNKNOWN");
    assert_string_equal(cm_status_name((cm_status_t)-1), "CM_STATUS_UNKNOWN");
    assert_string_equal(cm_status_string((cm_status_t)1000), "unknown status");
}

static void test_last_error_starts_clear_and_clears(void **state) {
    (void)state;
    cm_last_error_clear();
    const cm_error_t *e = cm_last_error();
    assert_non_null(e);
    assert_int_equal(e->status, CM_OK);
    assert_int_equal(e->device, -1);
    assert_string_equal(e->cuda_error_name, "");
    cm__fail(CM_ERROR_INVALID_ARGUMENT, 2, "f.c", 7, "cm_thing", "do this", "bad %d", 42);
    assert_int_equal(e->status, CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(e->device, 2);
    assert_int_equal(e->line, 7);
    assert_string_equal(e->file, "f.c");
    assert_string_equal(e->call, "cm_thing");
    assert_string_equal(e->message, "bad 42");
    assert_string_equal(e->hint, "do this");
    cm_last_error_clear();
    assert_int_equal(cm_last_error()->status, CM_OK);
    assert_string_equal(cm_last_error()->message, "");
}

static void test_format_report(void **state) {
    (void)state;
    cm__fail(CM_ERROR_INVALID_LAUNCH, 0, "main.c", 12, "cm_launch", "use 1024 threads or fewer",
             "block has %d threads; NVIDIA H200 (sm_90) allows %d", 2048, 1024);
    char buf[1024];
    size_t need = cm_error_format(NULL, buf, sizeof buf);
    assert_int_equal(need, strlen(buf));
    assert_non_null(strstr(buf, "CM_ERROR_INVALID_LAUNCH: block has 2048 threads"));
    assert_non_null(strstr(buf, "at cm_launch (main.c:12)"));
    assert_non_null(strstr(buf, "device 0"));
    assert_non_null(strstr(buf, "hint: use 1024 threads or fewer"));
    /* snprintf rules: the length needed, and a truncated but terminated string */
    assert_int_equal(cm_error_format(NULL, NULL, 0), need);
    char small[16];
    memset(small, 'x', sizeof small);
    assert_int_equal(cm_error_format(NULL, small, sizeof small), need);
    assert_int_equal(strlen(small), sizeof small - 1);
    /* an explicit detail, and one with a CUDA error and a lost context */
    cm_error_t e;
    memset(&e, 0, sizeof e);
    e.status = CM_ERROR_CONTEXT_LOST;
    e.cuda_error = 700;
    e.cuda_error_name = "cudaErrorIllegalAddress";
    e.device = -1;
    e.context_lost = true;
    cm_error_format(&e, buf, sizeof buf);
    assert_non_null(strstr(buf, "cudaErrorIllegalAddress (700)"));
    assert_non_null(strstr(buf, "restart the process"));
    assert_null(strstr(buf, "device"));
    cm_last_error_clear();
}

static cm_status_t try_helper(cm_status_t inner, int *reached_end) {
    CM_TRY(inner);
    *reached_end = 1;
    return CM_OK;
}

static cm_status_t try_goto_helper(cm_status_t inner, int *cleaned) {
    cm_status_t s = CM_OK;
    CM_TRY_GOTO(inner, s, cleanup);
    s = CM_OK;
cleanup:
    *cleaned = 1;
    return s;
}

static void test_try_macros(void **state) {
    (void)state;
    int reached = 0;
    assert_int_equal(try_helper(CM_ERROR_BUSY, &reached), CM_ERROR_BUSY);
    assert_int_equal(reached, 0);
    assert_int_equal(try_helper(CM_OK, &reached), CM_OK);
    assert_int_equal(reached, 1);
    int cleaned = 0;
    assert_int_equal(try_goto_helper(CM_ERROR_NO_DEVICE, &cleaned), CM_ERROR_NO_DEVICE);
    assert_int_equal(cleaned, 1);
    cleaned = 0;
    assert_int_equal(try_goto_helper(CM_OK, &cleaned), CM_OK);
    assert_int_equal(cleaned, 1);
}

static void *thread_fail(void *arg) {
    (void)arg;
    cm_last_error_clear();
    int before = cm_last_error()->status;
    cm__fail(CM_ERROR_HOST_OUT_OF_MEMORY, -1, "t.c", 1, "thread", NULL, "in the thread");
    int after = cm_last_error()->status;
    return (void *)(intptr_t)(before == CM_OK && after == CM_ERROR_HOST_OUT_OF_MEMORY);
}

static void test_detail_is_per_thread(void **state) {
    (void)state;
    cm__fail(CM_ERROR_BUSY, -1, "main.c", 3, "main", NULL, "in main");
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, thread_fail, NULL), 0);
    void *ok = NULL;
    assert_int_equal(pthread_join(t, &ok), 0);
    assert_true((intptr_t)ok == 1);
    /* the other thread's failure did not touch ours */
    assert_int_equal(cm_last_error()->status, CM_ERROR_BUSY);
    assert_string_equal(cm_last_error()->message, "in main");
    cm_last_error_clear();
}

static void test_sync_mode_env_and_switch(void **state) {
    (void)state;
    unsetenv("CUDAMODEL_SYNC");
    cm__sync_mode_reload_for_tests();
    assert_false(cm_sync_mode());
    setenv("CUDAMODEL_SYNC", "1", 1);
    cm__sync_mode_reload_for_tests();
    assert_true(cm_sync_mode());
    cm_sync_mode_set(false); /* the API overrides the environment */
    assert_false(cm_sync_mode());
    setenv("CUDAMODEL_SYNC", "0", 1);
    cm__sync_mode_reload_for_tests();
    assert_false(cm_sync_mode());
    cm_sync_mode_set(true);
    assert_true(cm_sync_mode());
    unsetenv("CUDAMODEL_SYNC");
    cm__sync_mode_reload_for_tests();
    assert_false(cm_sync_mode());
}

static void test_check_context_arguments(void **state) {
    (void)state;
    cm__context_reset_for_tests();
    assert_int_equal(cm_check_context(-2), CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cm_last_error()->message, "-2"));
    assert_int_equal(cm_check_context(-1), CM_OK);
    assert_int_equal(cm_check_context(0), CM_OK);
    cm_last_error_clear();
}

/* Kernel names in messages read as the source does: a C++ symbol demangled, a C name and a
 * name the demangler refuses as they are, a short buffer truncated. */
static void test_kernel_names_demangled(void **state) {
    (void)state;
    char buf[128];
    assert_string_equal(cm__kernel_name("_Z12saxpy_kernelfPKfPfm", buf, sizeof buf),
                        "saxpy_kernel(float, float const*, float*, unsigned long)");
    assert_string_equal(cm__kernel_name("plain_c_kernel", buf, sizeof buf), "plain_c_kernel");
    assert_string_equal(cm__kernel_name("_Zgarbage", buf, sizeof buf), "_Zgarbage");
    char small[8];
    assert_string_equal(cm__kernel_name("_Z12saxpy_kernelfPKfPfm", small, sizeof small), "saxpy_k");
    assert_null(cm__kernel_name(NULL, buf, sizeof buf));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_status_has_a_unique_name_and_text),
        cmocka_unit_test(test_kernel_names_demangled),
        cmocka_unit_test(test_out_of_range_status),
        cmocka_unit_test(test_last_error_starts_clear_and_clears),
        cmocka_unit_test(test_format_report),
        cmocka_unit_test(test_try_macros),
        cmocka_unit_test(test_detail_is_per_thread),
        cmocka_unit_test(test_sync_mode_env_and_switch),
        cmocka_unit_test(test_check_context_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
