#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <pthread.h>
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

typedef struct cm_test_range {
    void (*body)(size_t lo, size_t hi, void *ctx);
    void *ctx;
    size_t lo, hi;
} cm_test_range_t;

static void *cm_test_range_main(void *arg) {
    const cm_test_range_t *r = arg;
    r->body(r->lo, r->hi, r->ctx);
    return NULL;
}

void cm_test_parallel_for(size_t n, size_t min_chunk, void (*body)(size_t lo, size_t hi, void *ctx),
                          void *ctx) {
    enum { MAX_THREADS = 64 };
    if (n == 0) return;
    long want = sysconf(_SC_NPROCESSORS_ONLN);
    const char *v = getenv("CM_TEST_THREADS");
    if (v != NULL && v[0] != '\0') want = strtol(v, NULL, 10);
    if (want < 1) want = 1;
    if (want > MAX_THREADS) want = MAX_THREADS;
    if (min_chunk < 1) min_chunk = 1;
    size_t parts = (size_t)want;
    if (parts > n / min_chunk) parts = n / min_chunk;
    if (parts <= 1) {
        body(0, n, ctx);
        return;
    }
    cm_test_range_t r[MAX_THREADS];
    pthread_t th[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    for (size_t t = 0; t < parts; ++t)
        r[t] = (cm_test_range_t){body, ctx, n / parts * t + (t < n % parts ? t : n % parts),
                                 n / parts * (t + 1) + (t + 1 < n % parts ? t + 1 : n % parts)};
    /* ranges 1 .. parts - 1 on threads (one that cannot start runs here), range 0 here */
    for (size_t t = 1; t < parts; ++t) {
        started[t] = pthread_create(&th[t], NULL, cm_test_range_main, &r[t]) == 0;
        if (!started[t]) body(r[t].lo, r[t].hi, ctx);
    }
    body(r[0].lo, r[0].hi, ctx);
    for (size_t t = 1; t < parts; ++t)
        if (started[t]) (void)pthread_join(th[t], NULL);
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

cm_test_gpu_fixture_t cm_test_gpu;

int cm_test_gpu_group_setup(void **state) {
    (void)state;
    return cm_test_gpu_setup(&cm_test_gpu.dev, &cm_test_gpu.stream);
}

int cm_test_gpu_group_teardown(void **state) {
    (void)state;
    return cm_test_gpu_teardown(&cm_test_gpu.dev, &cm_test_gpu.stream);
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
