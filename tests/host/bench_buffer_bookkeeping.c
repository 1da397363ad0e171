/*
 * bench_buffer_bookkeeping: the library's own cost of a stream-ordered buffer create + destroy,
 * on the host, with no GPU: the CUDA calls go to the simulation of test_buffer_fake.h.
 *
 *   empty_ordered          cm_buffer_create_on_stream(s, dev, 0) + cm_buffer_destroy_on_stream(s)
 *                          on a wrapped simulated stream (zero bytes: no CUDA call at all, the
 *                          bookkeeping alone)
 *   empty_ordered_10k_live the same with 10000 other buffers alive (a loaded registry)
 *   empty_sync             cm_buffer_create(dev, 0) + cm_buffer_destroy
 *   fake_1MiB_ordered      1 MiB stream-ordered pairs (simulated cudaMallocFromPoolAsync)
 *   fake_1MiB_raw          the simulated cudaMallocFromPoolAsync + cudaFreeAsync alone (peer)
 *   empty_ordered_2threads two threads at once on one device (ns per pair of either thread)
 *
 * Each case: one warm-up run, then the median of REPS runs of N pairs; ns per pair.
 * Not a ctest test (timing only; it asserts nothing but success of every call).
 * Usage: bench_buffer_bookkeeping [pairs per run (default 1000000)] [runs (default 7)] [case]
 * (case: run only the cases named, comma-separated; fake_1MiB runs both 1 MiB cases)
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/interop.h>

#include "test_buffer_fake.h"

static long g_pairs = 1000000;
static int g_reps = 7;
static const char *g_only = NULL;

/* Whether case name is in the comma-separated list g_only (NULL: every case). */
static int want(const char *name) {
    if (g_only == NULL) return 1;
    size_t n = strlen(name);
    for (const char *p = g_only; *p != '\0';) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0) return 1;
        if (end == NULL) break;
        p = end + 1;
    }
    return 0;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void die(const char *what) {
    char report[2048];
    cm_error_format(NULL, report, sizeof report);
    fprintf(stderr, "bench_buffer_bookkeeping: %s failed:\n%s\n", what, report);
    exit(1);
}

enum { EMPTY_ORDERED, EMPTY_SYNC, FAKE_1MIB_ORDERED, FAKE_1MIB_RAW };

typedef struct {
    cm_device_t *dev;
    cm_stream_t *stream; /* the library stream wrapping FAKE_STREAM(0) */
    cudaMemPool_t pool;
    int which;
    long pairs;
} job_t;

static void loop(const job_t *j) {
    const size_t mib = (size_t)1 << 20;
    cudaStream_t s = FAKE_STREAM(0);
    cm_stream_t *w = j->stream;
    switch (j->which) {
    case EMPTY_ORDERED:
        for (long i = 0; i < j->pairs; ++i) {
            cm_buffer_t *b = NULL;
            if (cm_buffer_create_on_stream(w, j->dev, 0, &b) != CM_OK) die("create 0");
            if (cm_buffer_destroy_on_stream(w, b) != CM_OK) die("destroy 0");
        }
        break;
    case EMPTY_SYNC:
        for (long i = 0; i < j->pairs; ++i) {
            cm_buffer_t *b = NULL;
            if (cm_buffer_create(j->dev, 0, &b) != CM_OK) die("create 0 sync");
            if (cm_buffer_destroy(b) != CM_OK) die("destroy 0 sync");
        }
        break;
    case FAKE_1MIB_ORDERED:
        for (long i = 0; i < j->pairs; ++i) {
            cm_buffer_t *b = NULL;
            if (cm_buffer_create_on_stream(w, j->dev, mib, &b) != CM_OK) die("create 1 MiB");
            if (cm_buffer_destroy_on_stream(w, b) != CM_OK) die("destroy 1 MiB");
        }
        break;
    case FAKE_1MIB_RAW:
        for (long i = 0; i < j->pairs; ++i) {
            void *p = NULL;
            if (cm__cuda.malloc_from_pool_async(&p, mib, j->pool, s) != cudaSuccess ||
                cm__cuda.free_async(p, s) != cudaSuccess)
                die("simulated malloc/free");
        }
        break;
    default:
        break;
    }
}

static void *thread_main(void *p) {
    loop(p);
    return NULL;
}

/* ns per pair of one run; threads > 1: that many threads at once, pairs each. */
static double run_once(job_t *j, int threads) {
    double t0 = now_s();
    if (threads <= 1) {
        loop(j);
    } else {
        pthread_t t[8];
        for (int i = 0; i < threads; ++i)
            if (pthread_create(&t[i], NULL, thread_main, j) != 0) die("pthread_create");
        for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
    }
    double dt = now_s() - t0;
    return dt * 1e9 / ((double)j->pairs * (threads > 1 ? threads : 1));
}

static double median(job_t *j, int threads) {
    double t[64];
    int reps = g_reps < 64 ? g_reps : 64;
    (void)run_once(j, threads); /* warm-up */
    for (int i = 0; i < reps; ++i) t[i] = run_once(j, threads);
    qsort(t, (size_t)reps, sizeof t[0], cmp_double);
    return t[reps / 2];
}

int main(int argc, char **argv) {
    if (argc > 1) g_pairs = atol(argv[1]);
    if (argc > 2) g_reps = atoi(argv[2]);
    if (argc > 3) g_only = argv[3];
    if (g_pairs <= 0 || g_reps <= 0) {
        fprintf(stderr, "usage: %s [pairs per run] [runs]\n", argv[0]);
        return 2;
    }
    fake_install(1, (size_t)64 << 30);
    cm_device_t *dev = NULL;
    if (cm_device_open(0, &dev) != CM_OK) die("cm_device_open");
    cudaMemPool_t pool = NULL;
    if (cm_device_memory_pool(dev, &pool) != CM_OK) die("cm_device_memory_pool");
    cm_stream_t *w = NULL;
    if (cm_stream_wrap(dev, FAKE_STREAM(0), &w) != CM_OK) die("cm_stream_wrap");
    job_t j = {dev, w, pool, 0, g_pairs};

    printf("bench_buffer_bookkeeping: %ld pairs per run, median of %d runs (ns per create+destroy "
           "pair)\n", g_pairs, g_reps);
    j.which = EMPTY_ORDERED;
    if (want("empty_ordered")) printf("  %-24s %8.1f ns\n", "empty_ordered", median(&j, 1));

    if (want("empty_ordered_10k_live")) {
        enum { LIVE = 10000 };
        cm_buffer_t **live = calloc(LIVE, sizeof *live);
        if (live == NULL) die("calloc");
        for (int i = 0; i < LIVE; ++i)
            if (cm_buffer_create_on_stream(w, dev, 0, &live[i]) != CM_OK)
                die("live");
        printf("  %-24s %8.1f ns\n", "empty_ordered_10k_live", median(&j, 1));
        for (int i = 0; i < LIVE; ++i)
            if (cm_buffer_destroy(live[(i * 7919) % LIVE]) != CM_OK) die("destroy live");
        free(live);
    }

    j.which = EMPTY_SYNC;
    if (want("empty_sync")) printf("  %-24s %8.1f ns\n", "empty_sync", median(&j, 1));
    if (want("fake_1MiB")) {
        j.which = FAKE_1MIB_ORDERED;
        double ours = median(&j, 1);
        j.which = FAKE_1MIB_RAW;
        double raw = median(&j, 1);
        printf("  %-24s %8.1f ns\n", "fake_1MiB_ordered", ours);
        printf("  %-24s %8.1f ns   (ours - raw: %.1f ns)\n", "fake_1MiB_raw", raw, ours - raw);
    }
    j.which = EMPTY_ORDERED;
    if (want("empty_ordered_2threads"))
        printf("  %-24s %8.1f ns\n", "empty_ordered_2threads", median(&j, 2));

    cm_memory_report_t r;
    if (cm_device_memory_report(dev, &r) != CM_OK) die("report");
    if (r.live_buffers != 0 || r.live_bytes != 0) {
        fprintf(stderr, "bench_buffer_bookkeeping: %zu buffers still counted\n", r.live_buffers);
        return 1;
    }
    if (cm_stream_release(w) != CM_OK) die("cm_stream_release");
    if (cm_device_close(dev) != CM_OK) die("cm_device_close");
    int left = fake_outstanding();
    fake_uninstall();
    if (left != 0) {
        fprintf(stderr, "bench_buffer_bookkeeping: %d simulated resources leaked\n", left);
        return 1;
    }
    return 0;
}
