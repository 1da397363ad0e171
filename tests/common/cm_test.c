#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include <cudamodel/device.h>
#include <cudamodel/status.h>
#include <cudamodel/stream.h>

bool cm_test_gpu_required(void) {
    const char *v = getenv("CUDAMODEL_REQUIRE_GPU");
    return v != NULL && strcmp(v, "1") == 0;
}

bool cm_test_under_sanitizer(void) {
    const char *v = getenv("CM_TEST_UNDER_SANITIZER");
    return v != NULL && strcmp(v, "1") == 0;
}

void cm_test_filter_from_env(void) {
    const char *v = getenv("CM_TEST_FILTER");
    if (v != NULL && v[0] != '\0') cmocka_set_test_filter(v);
}

uint64_t cm_test_rand(uint64_t *state) {
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return x;
}

double cm_test_rand_unit(uint64_t *state) {
    return (double)(cm_test_rand(state) >> 11) * 0x1.0p-52 - 1.0;
}

bool cm_test_have_gpu(char *reason, size_t size) {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        snprintf(reason, size, "cudaGetDeviceCount: %s (%s)", cudaGetErrorName(err),
                 cudaGetErrorString(err));
        (void)cudaGetLastError();
        return false;
    }
    if (count == 0) {
        snprintf(reason, size, "no CUDA device visible");
        return false;
    }
    reason[0] = '\0';
    return true;
}

void cm_test_assert_ok(int status, const char *expr, const char *file, int line) {
    if (status != CM_OK) {
        char report[2048];
        cm_error_format(NULL, report, sizeof report);
        print_error("%s returned %s\n%s\n", expr, cm_status_name((cm_status_t)status), report);
        _fail(file, line);
    }
}

void cm_test_assert_status(int status, int expected, const char *expr, const char *file, int line) {
    if (status != expected) {
        char report[2048];
        cm_error_format(NULL, report, sizeof report);
        print_error("%s returned %s, expected %s\n%s\n", expr,
                    cm_status_name((cm_status_t)status), cm_status_name((cm_status_t)expected),
                    report);
        _fail(file, line);
    }
}

int cm_test_gpu_setup(cm_device_t **dev, cm_stream_t **stream) {
    *dev = NULL;
    *stream = NULL;
    char reason[256];
    if (!cm_test_have_gpu(reason, sizeof reason)) return 0;
    if (cm_device_open(0, dev) != CM_OK) return -1;
    if (cm_stream_acquire(*dev, CM_STREAM_PRIORITY_LOW, stream) != CM_OK) return -1;
    return 0;
}

int cm_test_gpu_teardown(cm_device_t **dev, cm_stream_t **stream) {
    if (*dev == NULL) return 0;
    int bad = cm_stream_release(*stream) | cm_device_close(*dev);
    *dev = NULL;
    *stream = NULL;
    return bad ? -1 : 0;
}

extern char **environ;

int cm_test_spawn_self(const char *arg) {
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) fail_msg("readlink(/proc/self/exe) failed");
    exe[n] = '\0';
    char *argv[] = {exe, (char *)arg, NULL};
    pid_t pid = 0;
    fflush(NULL);
    const int rc = posix_spawn(&pid, exe, NULL, NULL, argv, environ);
    if (rc != 0) fail_msg("posix_spawn of %s %s: %s", exe, arg, strerror(rc));
    return (int)pid;
}
