/*
 * FAULT INJECTION: the library at process exit (issue #17, process-level hygiene), on the
 * simulated CUDA of test_full_fake.h. Each case runs in a process of its own (this binary again,
 * with a mode argument) under a watchdog: the process must exit with status 0, not be killed by
 * a signal, and not hang (it is killed and the case fails after WATCHDOG_S seconds).
 *
 *   --exit-live      exits (exit()) with live handles of every kind of multi.h on top of
 *                    test_fork's set: a device set, a split array, a communicator with a
 *                    collective queued, and an aborted one (a timed-out collective);
 *   --return-live    the same, returning from main (static destructors and atexit handlers of
 *                    the C library run after main's frame is gone);
 *   --close-atexit   releases everything from an atexit handler that runs AFTER the CUDA
 *                    runtime was torn down (a handler registered later runs first: it makes
 *                    every CUDA and NCCL call fail with cudaErrorCudartUnloading, as cudart's own
 *                    exit handler leaves the runtime): every release returns a status from the
 *                    list, ends its handle, and nothing crashes or hangs;
 *   --close-dtor     the same from a static destructor (__attribute__((destructor))).
 * The real runtime's unloading is not reproduced here (no GPU): tests/gpu/test_gpu_multi_timeout.c
 * has the one-GPU collective part; exit with a real context is what every GPU test does.
 */
#define _POSIX_C_SOURCE 200809L
#define _GNU_SOURCE

#include "cm_test.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/multi.h>
#include <cudamodel/stream.h>

#include "handle.h"
#include "multi_internal.h"
#include "test_full_fake.h"


#define MiB ((size_t)1 << 20)
#define WATCHDOG_S 30

/* ---------------------------------------------------------------- the child's handles */

static struct {
    cm_device_t *dev;
    cm_buffer_t *buf;
    cm_host_buffer_t *host;
    cm_stream_t *stream;
    cm_event_t *event;
    cm_device_set_t *set;
    cm_split_t *split;
    cm_comm_t *comm;
    cm_buffer_t *part[2];
} h;

static int fail_child(const char *what) {
    fprintf(stderr, "exit hygiene: %s: %s\n", what, cm_last_error()->message);
    return 3;
}

/* Handles of every kind alive, work queued; with_comm: a communicator with a collective queued. */
static int make_handles(bool with_comm) {
    cmf_install(2, 64 * MiB);
    int ords[2] = {0, 1};
    if (cm_device_open(0, &h.dev) != CM_OK || cm_buffer_create(h.dev, 4096, &h.buf) != CM_OK ||
        cm_host_buffer_create(h.dev, 4096, 0, &h.host) != CM_OK ||
        cm_stream_acquire(h.dev, CM_STREAM_PRIORITY_LOW, &h.stream) != CM_OK ||
        cm_event_acquire(h.dev, CM_EVENT_SYNC_ONLY, &h.event) != CM_OK ||
        cm_buffer_set(h.stream, h.buf, 0, 4096, 7) != CM_OK ||
        cm_device_set_open(ords, 2, &h.set) != CM_OK ||
        cm_split_create(h.set, 1000, sizeof(float), &h.split) != CM_OK)
        return fail_child("making handles");
    if (!with_comm || !cm__nccl_built()) return 0;
    if (cm_comm_create(h.set, &h.comm) != CM_OK) return fail_child("cm_comm_create");
    for (int k = 0; k < 2; ++k) {
        size_t first = 0, count = 0;
        if (cm_split_part(h.split, k, &h.part[k], &first, &count) != CM_OK)
            return fail_child("cm_split_part");
    }
    if (cm_comm_all_reduce(h.comm, h.part, h.part, 200, CM_DTYPE_F32, CM_COMM_SUM) != CM_OK)
        return fail_child("cm_comm_all_reduce");
    return 0;
}

/* A second set whose communicator was aborted by a timed-out collective (its stream never
 * finishes in the simulation: cudaStreamQuery answers "not ready" for device 1's streams). */
static cudaError_t (*real_query)(cudaStream_t);
static cudaError_t hung_query(cudaStream_t s) {
    cmf_obj_t *o = cmf_any(s, CMF_STREAM);
    if (o != NULL && o->device == 1) return cudaErrorNotReady;
    return real_query(s);
}
static int make_aborted_comm(void) {
    if (!cm__nccl_built()) return 0;
    int one = 1;
    cm_device_set_t *set = NULL;
    cm_comm_t *c = NULL;
    cm_buffer_t *b = NULL;
    if (cm_device_set_open(&one, 1, &set) != CM_OK ||
        cm_device_set_set_collective_timeout(set, 20) != CM_OK ||
        cm_comm_create(set, &c) != CM_OK)
        return fail_child("aborted set");
    cm_device_t *dev1 = NULL;
    if (cm_device_set_device(set, 0, &dev1) != CM_OK || cm_buffer_create(dev1, 64, &b) != CM_OK ||
        cm_comm_all_reduce(c, &b, &b, 16, CM_DTYPE_F32, CM_COMM_SUM) != CM_OK)
        return fail_child("aborted set's collective");
    real_query = cm__cuda.stream_query;
    cm__cuda.stream_query = hung_query;
    cm_status_t s = cm_comm_synchronize(c);
    cm__cuda.stream_query = real_query;
    if (s != CM_ERROR_BUSY) {
        fprintf(stderr, "exit hygiene: the hung collective returned %s\n", cm_status_name(s));
        return 4;
    }
    return 0; /* set, c and b stay alive */
}

/* ---------------------------------------------------------------- releasing after teardown */

static int released_bad;

/* One release after the runtime is gone: a status from the list, and the handle ended (a second
 * release says it is not alive any more). */
#define RELEASE(call, again)                                                                  \
    do {                                                                                      \
        cm_status_t s_ = (call);                                                              \
        fprintf(stderr, "after teardown: %s -> %s%s%s\n", #call, cm_status_name(s_),          \
                s_ != CM_OK ? ": " : "", s_ != CM_OK ? cm_last_error()->message : "");        \
        if ((int)s_ < 0 || (int)s_ >= CM_STATUS_COUNT || s_ == CM_ERROR_INVALID_ARGUMENT ||   \
            s_ == CM_ERROR_BUSY)                                                              \
            released_bad = 1;                                                                 \
        if ((again) != CM_ERROR_INVALID_ARGUMENT) released_bad = 1;                           \
    } while (0)

static void runtime_teardown(void) {
    /* what cudart's exit handler leaves: every call fails with cudaErrorCudartUnloading (driver
     * calls: CUDA_ERROR_DEINITIALIZED, which the table maps to the same), NCCL's fail too */
    cmf_arm_any(0, (int)cudaErrorCudartUnloading, 2 /* ncclSystemError */);
    cmf_tl_arms[cmf_tl_n_arms - 1].count = -1;
}

static void release_all(void) {
    if (h.comm != NULL) RELEASE(cm_comm_destroy(h.comm), cm_comm_destroy(h.comm));
    RELEASE(cm_split_destroy(h.split), cm_split_destroy(h.split));
    RELEASE(cm_device_set_close(h.set), cm_device_set_close(h.set));
    RELEASE(cm_buffer_destroy(h.buf), cm_buffer_destroy(h.buf));
    RELEASE(cm_host_buffer_destroy(h.host), cm_host_buffer_destroy(h.host));
    RELEASE(cm_event_release(h.event), cm_event_release(h.event));
    RELEASE(cm_stream_release(h.stream), cm_stream_release(h.stream));
    RELEASE(cm_device_close(h.dev), cm_device_close(h.dev));
    if (cmf_disarm() == 0) released_bad = 1; /* the failures were really injected */
    for (int k = 1; k < CM__KIND_COUNT; ++k)
        if (cm__handle_live_count((cm__kind_t)k) != 0) {
            fprintf(stderr, "after teardown: %zu live %s handle(s)\n",
                    cm__handle_live_count((cm__kind_t)k), cm__kind_name((cm__kind_t)k));
            released_bad = 1;
        }
    if (released_bad) _exit(5);
}

static int dtor_mode;
__attribute__((destructor)) static void release_in_destructor(void) {
    if (!dtor_mode) return;
    runtime_teardown();
    release_all();
}

/* ---------------------------------------------------------------- the parent */

/* Run this binary with mode under the watchdog: exit status 0, no signal, no hang. */
static void run_self(const char *mode) {
    const pid_t pid = (pid_t)cm_test_spawn_self(mode);
    int status = 0;
    struct timespec start, now, nap = {0, 10 * 1000 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        assert_int_equal(r, 0);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > WATCHDOG_S) {
            kill(pid, SIGKILL);
            (void)waitpid(pid, &status, 0);
            fail_msg("%s: the process hung at exit (killed after %d s)", mode, WATCHDOG_S);
        }
        nanosleep(&nap, NULL);
    }
    if (WIFSIGNALED(status)) fail_msg("%s: killed by signal %d", mode, WTERMSIG(status));
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) != 0) fail_msg("%s: exit status %d", mode, WEXITSTATUS(status));
}

static void test_exit_with_live_handles(void **state) {
    (void)state;
    run_self("--exit-live");
    run_self("--return-live");
}

static void test_release_after_runtime_teardown(void **state) {
    (void)state;
    run_self("--close-atexit");
    run_self("--close-dtor");
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "--exit-live") == 0) {
        if (make_handles(true) != 0 || make_aborted_comm() != 0) return 3;
        exit(0);
    }
    if (strcmp(mode, "--return-live") == 0)
        return make_handles(true) != 0 || make_aborted_comm() != 0 ? 3 : 0;
    if (strcmp(mode, "--close-atexit") == 0) {
        atexit(release_all);      /* registered first: runs last, after the teardown */
        if (make_handles(true) != 0) return 3;
        atexit(runtime_teardown); /* as cudart registers its handler at its first use */
        return 0;
    }
    if (strcmp(mode, "--close-dtor") == 0) {
        if (make_handles(true) != 0) return 3;
        dtor_mode = 1;
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exit_with_live_handles),
        cmocka_unit_test(test_release_after_runtime_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
