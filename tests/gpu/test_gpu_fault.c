/*
 * A real sticky error: a kernel writes through an invalid pointer. In synchronous debug mode
 * the check after the launch names the kernel and its launch site, says the context is lost,
 * and later library calls fail fast with that cause. A cm_launch with a NULL stream is
 * synchronous: it reports the fault itself, naming the kernel and the launch's file:line (in a
 * child process, since the fault ends the process's context). Labelled "faulting": it is not
 * run under compute-sanitizer (which would report the planted fault).
 */
#include "cm_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cuda_runtime_api.h>

#include <cudamodel/device.h>
#include <cudamodel/interop.h>
#include <cudamodel/launch.h>

void launch_fault(void);
const void *fault_kernel_ptr(void);

static const char *g_self;

/* Run this executable again with one argument; its exit status (0: the child's checks held). */
static int run_child(const char *mode) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %s", g_self, mode);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 99;
}

/* The child of test_null_stream_launch_reports_its_own_fault: exit 0 when every check held, a
 * distinct code per failed check. */
static int child_null_stream_fault(void) {
    if (cudaSetDevice(0) != cudaSuccess) return 2;
    cm_sync_mode_set(false); /* synchronous because of the NULL stream, not the debug mode */
    int *bad = (int *)0x10;  /* never a device allocation */
    void *args[] = {&bad};
    cm_launch_config_t cfg = CM_LAUNCH_CONFIG_INIT;
    cfg.grid.x = 1;
    cfg.block.x = 32;
    cm_last_error_clear();
    const int line = __LINE__ + 1;
    cm_status_t st = CM_LAUNCH(NULL, fault_kernel_ptr(), &cfg, args);
    char report[2048];
    cm_error_format(NULL, report, sizeof report);
    fprintf(stderr, "child: the NULL-stream launch returned %s\n%s\n", cm_status_name(st), report);
    /* the launch itself reports the kernel's fault: the kernel's name, the launch's place */
    if (st != CM_ERROR_CONTEXT_LOST) return 3;
    const cm_error_t *e = cm_last_error();
    if (!e->context_lost) return 4;
    if (!cm_cuda_error_is_sticky((cudaError_t)e->cuda_error)) return 5;
    if (strstr(e->message, "fault_kernel") == NULL) return 6;
    if (strstr(e->message, "failed while running") == NULL) return 7;
    char where[1024];
    snprintf(where, sizeof where, "launched at %s:%d", __FILE__, line);
    if (strstr(e->message, where) == NULL) return 8;
    if (strstr(e->file, "test_gpu_fault.c") == NULL || e->line != line) return 9;
    /* later calls fail fast, with this launch as the cause */
    cm_last_error_clear();
    if (cm_check_context(0) != CM_ERROR_CONTEXT_LOST) return 10;
    if (strstr(cm_last_error()->message, "fault_kernel") == NULL) return 11;
    cm_device_limits_t l;
    if (cm_device_get_limits(0, &l) != CM_ERROR_CONTEXT_LOST) return 12;
    return 0;
}

static void test_null_stream_launch_reports_its_own_fault(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    assert_int_equal(run_child("--child-null-stream-fault"), 0);
}

static void test_fault_names_its_launch_and_later_calls_fail_fast(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    int *warm = NULL;
    assert_int_equal(cudaMalloc((void **)&warm, 64), cudaSuccess);
    cm_sync_mode_set(true);
    launch_fault();
    cm_status_t s = cm_check_launch("fault_kernel<<<1, 32>>>", "test_gpu_fault.c", 1234);
    assert_int_equal(s, CM_ERROR_CONTEXT_LOST);
    const cm_error_t *e = cm_last_error();
    assert_true(e->context_lost);
    assert_true(cm_cuda_error_is_sticky((cudaError_t)e->cuda_error));
    assert_non_null(strstr(e->message, "fault_kernel<<<1, 32>>> launched at test_gpu_fault.c:1234"));
    assert_non_null(strstr(e->hint, "restart"));
    char report[2048];
    cm_error_format(NULL, report, sizeof report);
    print_message("%s\n", report);
    int first_error = e->cuda_error;

    /* later library calls fail fast with the same cause */
    cm_last_error_clear();
    cm_device_limits_t l;
    assert_int_equal(cm_device_get_limits(0, &l), CM_ERROR_CONTEXT_LOST);
    assert_int_equal(cm_last_error()->cuda_error, first_error);
    assert_non_null(strstr(cm_last_error()->message, "fault_kernel"));
    assert_int_equal(cm_check_context(0), CM_ERROR_CONTEXT_LOST);

    /* and CUDA itself agrees the context is gone */
    void *p = NULL;
    cudaError_t raw = cudaMalloc(&p, 64);
    assert_int_not_equal(raw, cudaSuccess);
    assert_int_equal(cm_record_cuda_error(raw, "cudaMalloc after the fault", __FILE__, __LINE__),
                     CM_ERROR_CONTEXT_LOST);
    cm_sync_mode_set(false);
}

int main(int argc, char **argv) {
    g_self = argv[0];
    if (argc == 2 && strcmp(argv[1], "--child-null-stream-fault") == 0)
        return child_null_stream_fault();
    const struct CMUnitTest tests[] = {
        /* first: the child's fault is its own; this process faults in the next test */
        cmocka_unit_test(test_null_stream_launch_reports_its_own_fault),
        cmocka_unit_test(test_fault_names_its_launch_and_later_calls_fail_fast),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
