/*
 * bench_stream: what the execution module's pools and graphs save, against the raw runtime in
 * the same run.
 *   stream_acquire_release  cm_stream_acquire + cm_stream_release (pool hit) vs
 *                           cudaStreamCreateWithFlags(non-blocking) + cudaStreamDestroy;
 *                           host clock, median of 7 rounds.            goal: >= 10x faster
 *   event_acquire_release   cm_event_acquire + cm_event_release (sync-only) vs
 *                           cudaEventCreateWithFlags(disable timing) + cudaEventDestroy;
 *                           host clock, median of 7 rounds.            goal: ours <= peer
 *   graph_replay_100        cm_graph_launch of a captured graph of 100 small cm_launch
 *                           launches vs the same 100 cm_launch calls issued directly on the
 *                           same stream; CUDA events (cm_time_callable), us per launch.
 *                                                                      goal: >= 5x faster
 * Exits 0 whether or not the goals are met (the table says), 1 on errors or without a GPU.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include <cudamodel/buffer.h>
#include <cudamodel/interop.h>
#include <cudamodel/launch.h>
#include <cudamodel/stream.h>

#include "bench_common.h"

/* from bench_stream_kernels.cu */
const void *bench_stream_tick_kernel(void);

#define ROUNDS 7
#define GRAPH_LAUNCHES 100

static int report_error(const char *what) {
    char report[2048];
    cm_error_format(NULL, report, sizeof report);
    fprintf(stderr, "bench_stream: %s failed:\n%s\n", what, report);
    return 1;
}

static int cuda_error(const char *what, cudaError_t e) {
    fprintf(stderr, "bench_stream: %s: %s (%s)\n", what, cudaGetErrorName(e), cudaGetErrorString(e));
    return 1;
}

/* median over rounds of the per-pair time, microseconds */
static double median_of(double *v) {
    qsort(v, ROUNDS, sizeof v[0], cm_bench_cmp_double);
    return v[ROUNDS / 2];
}

typedef struct {
    void *counter;
    cm_graph_t *graph;
} graph_ctx_t;

static cm_status_t direct_launches(void *user, cm_stream_t *s) {
    graph_ctx_t *c = user;
    void *args[] = {&c->counter};
    cm_launch_config_t cfg = CM_LAUNCH_CONFIG_INIT;
    cfg.grid.x = 1;
    cfg.block.x = 32;
    for (int i = 0; i < GRAPH_LAUNCHES; ++i) {
        cm_status_t st = cm_launch(s, bench_stream_tick_kernel(), &cfg, args); /* queued on s */
        if (st != CM_OK) return st;
    }
    return CM_OK;
}

static cm_status_t graph_replay(void *user, cm_stream_t *s) {
    graph_ctx_t *c = user;
    return cm_graph_launch(c->graph, s);
}

int main(void) {
    if (!cm_bench_have_gpu("bench_stream")) return 1;
    cudaError_t ce = cudaSetDevice(0);
    if (ce != cudaSuccess) return cuda_error("cudaSetDevice(0)", ce);
    if (cm_sync_mode()) {
        printf("note: CUDAMODEL_SYNC is set; the benchmark turns synchronous mode off\n");
        cm_sync_mode_set(false);
    }
    cm_device_limits_t lim;
    if (cm_device_get_limits(0, &lim) != CM_OK) return report_error("cm_device_get_limits");
    cm_device_t *dev = NULL;
    if (cm_device_open(0, &dev) != CM_OK) return report_error("cm_device_open");

    /* ---- streams: warm the pool (the CUDA stream is created on the first hand-out) */
    cm_stream_t *s = NULL;
    if (cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s) != CM_OK) return report_error("acquire");
    if (cm_stream_release(s) != CM_OK) return report_error("release");
    double ours_s[ROUNDS], raw_s[ROUNDS], ours_e[ROUNDS], raw_e[ROUNDS];
    const int n_pool = 20000, n_raw = 2000;
    for (int r = 0; r < ROUNDS; ++r) {
        double t0 = cm_bench_now_us();
        for (int i = 0; i < n_pool; ++i) {
            if (cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s) != CM_OK) return report_error("acquire");
            if (cm_stream_release(s) != CM_OK) return report_error("release");
        }
        ours_s[r] = (cm_bench_now_us() - t0) / n_pool;
        t0 = cm_bench_now_us();
        for (int i = 0; i < n_raw; ++i) {
            cudaStream_t cs = NULL;
            if ((ce = cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking)) != cudaSuccess)
                return cuda_error("cudaStreamCreateWithFlags", ce);
            if ((ce = cudaStreamDestroy(cs)) != cudaSuccess) return cuda_error("cudaStreamDestroy", ce);
        }
        raw_s[r] = (cm_bench_now_us() - t0) / n_raw;
    }
    /* ---- events */
    cm_event_t *e = NULL;
    if (cm_event_acquire(dev, CM_EVENT_SYNC_ONLY, &e) != CM_OK || cm_event_release(e) != CM_OK)
        return report_error("event warm-up");
    for (int r = 0; r < ROUNDS; ++r) {
        double t0 = cm_bench_now_us();
        for (int i = 0; i < n_pool; ++i) {
            if (cm_event_acquire(dev, CM_EVENT_SYNC_ONLY, &e) != CM_OK) return report_error("event acquire");
            if (cm_event_release(e) != CM_OK) return report_error("event release");
        }
        ours_e[r] = (cm_bench_now_us() - t0) / n_pool;
        t0 = cm_bench_now_us();
        for (int i = 0; i < n_raw; ++i) {
            cudaEvent_t ev = NULL;
            if ((ce = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming)) != cudaSuccess)
                return cuda_error("cudaEventCreateWithFlags", ce);
            if ((ce = cudaEventDestroy(ev)) != cudaSuccess) return cuda_error("cudaEventDestroy", ce);
        }
        raw_e[r] = (cm_bench_now_us() - t0) / n_raw;
    }
    double os = median_of(ours_s), rs = median_of(raw_s), oe = median_of(ours_e), re = median_of(raw_e);

    /* ---- graphs */
    if (cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s) != CM_OK) return report_error("acquire");
    cm_buffer_t *counter = NULL;
    if (cm_buffer_create(dev, sizeof(unsigned), &counter) != CM_OK) return report_error("cm_buffer_create");
    graph_ctx_t g;
    memset(&g, 0, sizeof g);
    if (cm_buffer_device_ptr(counter, &g.counter) != CM_OK) return report_error("cm_buffer_device_ptr");
    if (direct_launches(&g, s) != CM_OK) return report_error("direct launches (warm-up)");
    if (cm_stream_synchronize(s) != CM_OK) return report_error("cm_stream_synchronize");
    if (cm_graph_capture_begin(s) != CM_OK) return report_error("cm_graph_capture_begin");
    if (direct_launches(&g, s) != CM_OK) return report_error("captured launches");
    if (cm_graph_capture_end(s, &g.graph) != CM_OK) return report_error("cm_graph_capture_end");
    cm_timing_stats_t direct[ROUNDS], replay[ROUNDS];
    double d_m[ROUNDS], g_m[ROUNDS];
    for (int r = 0; r < ROUNDS; ++r) {
        if (cm_time_callable(s, direct_launches, &g, 3, 20, &direct[r]) != CM_OK)
            return report_error("timing direct launches");
        if (cm_time_callable(s, graph_replay, &g, 3, 20, &replay[r]) != CM_OK)
            return report_error("timing graph replays");
        d_m[r] = direct[r].median_ms * 1000.0 / GRAPH_LAUNCHES;
        g_m[r] = replay[r].median_ms * 1000.0 / GRAPH_LAUNCHES;
    }
    double du = median_of(d_m), gu = median_of(g_m);

    printf("bench_stream on %s (sm_%d%d): host clock for pools (%d pool pairs, %d raw pairs per "
           "round, median of %d rounds); CUDA events for graphs (median of 20 after 3 warm-up, "
           "median of %d rounds)\n",
           lim.name, lim.cc_major, lim.cc_minor, n_pool, n_raw, ROUNDS, ROUNDS);
    printf("  stream acquire+release %.3f us, cudaStreamCreate+Destroy %.3f us (anchor 3.88 us)\n", os, rs);
    printf("  event acquire+release  %.3f us, cudaEventCreate+Destroy  %.3f us (anchor 0.63 us)\n", oe, re);
    printf("  100 small launches: direct %.3f us per launch, graph replay %.3f us per launch\n\n", du, gu);

    cm_bench_row_t rows[3];
    memset(rows, 0, sizeof rows);
    rows[0] = (cm_bench_row_t){"stream", "stream_acquire_release", "us", os, rs,
                               "cudaStreamCreate+cudaStreamDestroy", cm_bench_ratio_time(os, rs),
                               ">= 10x faster", rs >= 10.0 * os};
    rows[1] = (cm_bench_row_t){"stream", "event_acquire_release", "us", oe, re,
                               "cudaEventCreate+cudaEventDestroy", cm_bench_ratio_time(oe, re),
                               "<= peer", oe <= re};
    rows[2] = (cm_bench_row_t){"stream", "graph_replay_100_launches", "us/launch", gu, du,
                               "direct cm_launch x100", cm_bench_ratio_time(gu, du), ">= 5x faster",
                               du >= 5.0 * gu};
    cm_bench_print_header();
    int rc = 0;
    for (int i = 0; i < 3; ++i)
        if (cm_bench_report(&rows[i]) != 0) rc = 1;

    if (cm_graph_destroy(g.graph) != CM_OK) return report_error("cm_graph_destroy");
    if (cm_buffer_destroy(counter) != CM_OK) return report_error("cm_buffer_destroy");
    if (cm_stream_release(s) != CM_OK) return report_error("cm_stream_release");
    if (cm_device_close(dev) != CM_OK) return report_error("cm_device_close");
    return rc;
}
