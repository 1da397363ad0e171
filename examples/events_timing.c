/*
 * events_timing: measuring GPU work with events (the seed's section 4.3), the library's way.
 *
 * 1. A timer (two pooled timing events) around one kernel on a pooled stream: elapsed ms and
 *    the bandwidth it implies, against a host clock around the same work (which also counts
 *    the launch and the synchronisation).
 * 2. cm_time_callable(): the same kernel 20 times after 3 warm-up calls: min / median / max.
 * 3. Ordering with an event: stream B waits for stream A without blocking the host.
 * 4. What goes wrong: timing with a synchronisation-only event is refused with an explanation.
 *
 * Usage: events_timing [MiB]   (default 256).
 * Exit status: 0 on success; 1 on errors or without a usable GPU.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cudamodel/cudamodel.h>

/* from kernels/example_kernels.cu */
const void *example_transform_kernel(void);

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

static int fail(void) {
    char report[2048];
    cm_error_format(NULL, report, sizeof report);
    fprintf(stderr, "%s\n", report);
    return 1;
}

typedef struct {
    void *y, *x;
    unsigned long long n;
} work_t;

static cm_status_t transform(void *user, cm_stream_t *s) {
    work_t *w = user;
    int iters = 1;
    void *args[] = {&w->y, &w->x, &w->n, &iters};
    cm_launch_config_t cfg = CM_LAUNCH_CONFIG_INIT;
    CM_TRY(cm_launch_config_1d(w->n, 256, &cfg));
    if (cfg.grid.x > 132u * 32u) cfg.grid.x = 132u * 32u;
    return CM_LAUNCH(s, example_transform_kernel(), &cfg, args); /* queued on s */
}

int main(int argc, char **argv) {
    size_t mib = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 256;
    if (mib < 1 || mib > 16384) {
        fprintf(stderr, "usage: %s [MiB 1..16384]\n", argv[0]);
        return 64;
    }
    cm_device_t *dev = NULL;
    if (cm_device_open(0, &dev) != CM_OK) return fail();
    size_t bytes = mib * 1024 * 1024;
    cm_buffer_t *x = NULL, *y = NULL;
    cm_stream_t *a = NULL, *b = NULL;
    if (cm_buffer_create(dev, bytes, &x) != CM_OK || cm_buffer_create(dev, bytes, &y) != CM_OK ||
        cm_buffer_set(NULL, x, 0, bytes, 0) != CM_OK || /* NULL stream: done on return */
        cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &a) != CM_OK ||
        cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &b) != CM_OK)
        return fail();
    work_t w = {NULL, NULL, bytes / sizeof(float)};
    if (cm_buffer_device_ptr(y, &w.y) != CM_OK || cm_buffer_device_ptr(x, &w.x) != CM_OK) return fail();

    /* 1. a timer around one launch (after a warm-up launch: module load stays out) */
    cm_timer_t *t = NULL;
    float ms = 0.0f;
    if (transform(&w, a) != CM_OK || cm_stream_synchronize(a) != CM_OK) return fail();
    double h0 = now_ms();
    if (cm_timer_create(dev, &t) != CM_OK || cm_timer_start(t, a) != CM_OK || transform(&w, a) != CM_OK ||
        cm_timer_stop(t) != CM_OK || cm_timer_elapsed_ms(t, &ms) != CM_OK)
        return fail();
    double host = now_ms() - h0;
    printf("1. one launch over %zu MiB: %.3f ms on the GPU (timer), %.3f ms on the host clock "
           "(launch + wait); %.0f GB/s read+write\n",
           mib, (double)ms, host, 2.0 * (double)bytes / 1e6 / (double)ms);

    /* 2. the timing helper */
    cm_timing_stats_t st;
    if (cm_time_callable(a, transform, &w, 3, 20, &st) != CM_OK) return fail();
    printf("2. 20 launches after 3 warm-up: min %.3f, median %.3f, max %.3f ms\n", st.min_ms,
           st.median_ms, st.max_ms);

    /* 3. B waits for A through an event: the host does not block */
    cm_event_t *e = NULL;
    bool done = true;
    if (transform(&w, a) != CM_OK || cm_event_acquire(dev, CM_EVENT_SYNC_ONLY, &e) != CM_OK ||
        cm_event_record(e, a) != CM_OK || cm_stream_wait_event(b, e) != CM_OK ||
        cm_stream_query(b, &done) != CM_OK)
        return fail();
    printf("3. stream B waits for A's event; right after queuing, B idle = %s\n", done ? "yes" : "no");
    if (cm_stream_synchronize(b) != CM_OK || cm_event_query(e, &done) != CM_OK) return fail();
    printf("   after synchronising B, A's event completed = %s\n", done ? "yes" : "no");

    /* 4. timing with a synchronisation-only event is refused, with the reason */
    if (cm_event_elapsed_ms(e, e, &ms) != CM_OK) {
        printf("4. timing with a sync-only event: %s: %s\n   hint: %s\n",
               cm_status_name(cm_last_error()->status), cm_last_error()->message, cm_last_error()->hint);
    }

    if (cm_event_release(e) != CM_OK || cm_timer_destroy(t) != CM_OK || cm_stream_release(a) != CM_OK ||
        cm_stream_release(b) != CM_OK || cm_buffer_destroy(x) != CM_OK || cm_buffer_destroy(y) != CM_OK ||
        cm_device_close(dev) != CM_OK)
        return fail();
    return 0;
}
