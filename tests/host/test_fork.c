/*
 * FAULT INJECTION: the library across fork() and at process exit (issue #17, process-level
 * hygiene), on the simulated CUDA of test_full_fake.h, which models what CUDA does in a child
 * forked after the parent used it: every CUDA and NCCL call of the child fails
 * (cudaErrorInitializationError).
 *
 * What holds today (test_fork):
 *   - a child that calls into the library with its parent's handles is not crashed: every call
 *     returns a cm_status_t, a failure's cm_last_error() has that status and a message, and the
 *     parent's handles and data are untouched by whatever the child did;
 *   - a process that exits with live handles (exit(), or returning from main) exits cleanly.
 * What the issue expects (test_fork_expected, run with CM_FORK_EXPECTED=1; the library detects
 * a fork with a pthread_atfork hook in core/handle.c): in the child, EVERY call with a parent's
 * handle is refused, including those that make no CUDA call (info accessors, device pointers,
 * destroys), with a message that says the handle belongs to the parent process, and opening a
 * device says CUDA cannot be used after fork().
 */
#define _POSIX_C_SOURCE 200809L
#define _GNU_SOURCE

#include "cm_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/multi.h>
#include <cudamodel/stream.h>

#include "handle.h"
#include "test_full_fake.h"


#define KiB ((size_t)1 << 10)

static bool expected_mode(void) {
    const char *v = getenv("CM_FORK_EXPECTED");
    return v != NULL && strcmp(v, "1") == 0;
}

/* The handles a parent holds when it forks. */
typedef struct parent_handles {
    cm_device_t *dev;
    cm_buffer_t *buf;
    cm_host_buffer_t *host;
    cm_stream_t *stream;
    cm_event_t *event;
    cm_timer_t *timer;
    unsigned char data[256];
} parent_handles_t;

static void parent_make(parent_handles_t *p) {
    memset(p, 0, sizeof *p);
    CM_ASSERT_OK(cm_device_open(0, &p->dev));
    CM_ASSERT_OK(cm_buffer_create(p->dev, sizeof p->data, &p->buf));
    CM_ASSERT_OK(cm_host_buffer_create(p->dev, 4 * KiB, 0, &p->host));
    CM_ASSERT_OK(cm_stream_acquire(p->dev, CM_STREAM_PRIORITY_LOW, &p->stream));
    CM_ASSERT_OK(cm_event_acquire(p->dev, CM_EVENT_TIMING, &p->event));
    CM_ASSERT_OK(cm_timer_create(p->dev, &p->timer));
    for (size_t i = 0; i < sizeof p->data; ++i) p->data[i] = (unsigned char)(i * 13 + 7);
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, p->buf, 0, p->data, sizeof p->data));
}

static void parent_release(parent_handles_t *p) {
    CM_ASSERT_OK(cm_timer_destroy(p->timer));
    CM_ASSERT_OK(cm_event_release(p->event));
    CM_ASSERT_OK(cm_stream_release(p->stream));
    CM_ASSERT_OK(cm_host_buffer_destroy(p->host));
    CM_ASSERT_OK(cm_buffer_destroy(p->buf));
    CM_ASSERT_OK(cm_device_close(p->dev));
}

/* ---------------------------------------------------------------- in the child */

static int child_problems;

/* One call of the child: a documented status, a consistent detail; in the expected mode also
 * refused, saying why. */
static void child_check(cm_status_t st, const char *what) {
    if ((int)st < 0 || (int)st >= CM_STATUS_COUNT) {
        fprintf(stderr, "child: %s returned %d, not a cm_status_t\n", what, (int)st);
        ++child_problems;
        return;
    }
    const cm_error_t *e = cm_last_error();
    if (st != CM_OK && (e->status != st || e->message[0] == '\0')) {
        fprintf(stderr, "child: %s returned %s but the detail says %s: \"%s\"\n", what,
                cm_status_name(st), cm_status_name(e->status), e->message);
        ++child_problems;
    }
    if (!expected_mode()) return;
    if (st == CM_OK) {
        fprintf(stderr, "child: %s used a handle of the parent process and returned CM_OK\n", what);
        ++child_problems;
    } else if (strstr(e->message, "fork") == NULL) {
        fprintf(stderr, "child: %s was refused (%s) but the message does not say why (fork): "
                "\"%s\"\n", what, cm_status_name(st), e->message);
        ++child_problems;
    }
}

#define CHILD(expr) child_check((expr), #expr)

static int child_main(parent_handles_t *p) {
    unsigned char out[256];
    void *ptr = NULL;
    bool flag = false;
    float ms = 0.0f;
    int ordinal = -1;
    cm_buffer_info_t info;
    cm_memory_report_t report;
    /* the parent's handles: accessors first (no CUDA call behind them), then work, then ends */
    CHILD(cm_device_ordinal(p->dev, &ordinal));
    CHILD(cm_buffer_info(p->buf, &info));
    CHILD(cm_buffer_device_ptr(p->buf, &ptr));
    CHILD(cm_host_buffer_data(p->host, &ptr));
    CHILD(cm_buffer_copy_to_host(NULL, p->buf, 0, out, sizeof out));
    CHILD(cm_buffer_copy_from_host(NULL, p->buf, 0, out, sizeof out));
    CHILD(cm_buffer_set(p->stream, p->buf, 0, 16, 1));
    CHILD(cm_buffer_copy_to_host_buffer(NULL, p->buf, 0, p->host, 0, 64));
    CHILD(cm_stream_synchronize(p->stream));
    CHILD(cm_stream_query(p->stream, &flag));
    CHILD(cm_event_record(p->event, p->stream));
    CHILD(cm_event_query(p->event, &flag));
    CHILD(cm_timer_start(p->timer, p->stream));
    CHILD(cm_timer_elapsed_ms(p->timer, &ms));
    CHILD(cm_device_memory_report(p->dev, &report));
    CHILD(cm_device_synchronize(p->dev));
    CHILD(cm_timer_destroy(p->timer));
    CHILD(cm_event_release(p->event));
    CHILD(cm_stream_release(p->stream));
    CHILD(cm_host_buffer_destroy(p->host));
    CHILD(cm_buffer_destroy(p->buf));
    CHILD(cm_device_close(p->dev));
    /* and a device of its own: CUDA cannot be used after fork() */
    cm_device_t *own = NULL;
    CHILD(cm_device_open(0, &own));
    if (own != NULL) CHILD(cm_device_close(own));
    return child_problems == 0 ? 0 : 1;
}

/* ---------------------------------------------------------------- the tests */

static int setup(void **state) {
    (void)state;
    cmf_install(2, 64 * KiB * 1024);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    cmf_uninstall();
    return 0;
}

static void run_child_with_parent_handles(void) {
    parent_handles_t p;
    parent_make(&p);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) _exit(child_main(&p));
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status)) fail_msg("the child was killed by signal %d", WTERMSIG(status));
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) != 0) fail_msg("the child saw problems (its stderr says which)");
    /* the parent is untouched by what the child did */
    unsigned char out[256];
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, p.buf, 0, out, sizeof out));
    assert_memory_equal(out, p.data, sizeof out);
    CM_ASSERT_OK(cm_stream_synchronize(p.stream));
    parent_release(&p);
    for (int k = 1; k < CM__KIND_COUNT; ++k) assert_int_equal(cm__handle_live_count((cm__kind_t)k), 0);
    char why[128];
    if (cmf_outstanding(why, sizeof why) != 0) fail_msg("the parent leaked: %s", why);
    assert_int_equal(cmf.violations, 0);
}

static void test_child_with_parent_handles(void **state) {
    (void)state;
    run_child_with_parent_handles();
}

/* A process of its own (this test binary again) exits with live handles of every kind. */
static void run_self(const char *mode) {
    const pid_t pid = (pid_t)cm_test_spawn_self(mode);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status)) fail_msg("%s: killed by signal %d", mode, WTERMSIG(status));
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_exit_with_live_handles(void **state) {
    (void)state;
    run_self("--exit-with-live-handles");
    run_self("--return-with-live-handles");
}

/* Make one handle of every kind and leave them all alive. */
static int live_handles(void) {
    cmf_install(2, 64 * KiB * 1024);
    cm_device_t *dev = NULL;
    cm_buffer_t *buf = NULL, *ordered = NULL;
    cm_host_buffer_t *host = NULL;
    cm_stream_t *s = NULL;
    cm_event_t *e = NULL;
    cm_timer_t *tm = NULL;
    cm_graph_t *g = NULL;
    cm_device_set_t *set = NULL;
    int ords[2] = {0, 1};
    if (cm_device_open(0, &dev) != CM_OK || cm_buffer_create(dev, 1024, &buf) != CM_OK ||
        cm_host_buffer_create(dev, 1024, 0, &host) != CM_OK ||
        cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s) != CM_OK ||
        cm_buffer_create_on_stream(s, dev, 512, &ordered) != CM_OK ||
        cm_event_acquire(dev, CM_EVENT_SYNC_ONLY, &e) != CM_OK || cm_timer_create(dev, &tm) != CM_OK ||
        cm_graph_capture_begin(s) != CM_OK || cm_buffer_set(s, buf, 0, 64, 1) != CM_OK ||
        cm_graph_capture_end(s, &g) != CM_OK || cm_device_set_open(ords, 2, &set) != CM_OK) {
        fprintf(stderr, "live handles: %s\n", cm_last_error()->message);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--exit-with-live-handles") == 0) {
        if (live_handles() != 0) return 3;
        exit(0);
    }
    if (argc > 1 && strcmp(argv[1], "--return-with-live-handles") == 0) return live_handles() ? 3 : 0;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_child_with_parent_handles, setup, teardown),
        cmocka_unit_test(test_exit_with_live_handles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
