/*
 * streams_overlap: copy/compute overlap with the library's stream pool.
 *
 * A copy-bound pipeline over N floats in pinned host memory, cut in K chunks: each chunk goes
 * host -> device, through a light kernel, and device -> host.
 *   serial      every chunk on one stream: copies and kernels run one after the other
 *   overlapped  chunk k on stream k (K pooled streams): while chunk k is copied in, chunk k-1
 *               is computed and chunk k-2 copied out. Host-to-device and device-to-host copies
 *               use separate copy engines, so both directions move at once.
 * Both produce the same output (checked). The speedup is printed; on an H200 the goal is
 * >= 1.8x (the bound is about 2x + the kernel's share for a copy-bound pipeline).
 *
 * Usage: streams_overlap [MiB] [K]   (default 256 MiB, K = 32). Median of 5 runs after warm-up.
 * Inputs are random; both runs' outputs are poisoned first and every element is checked against a
 * float64 reference (tolerance 1e-5 relative). With CM_BENCH_RESULTS=<file> the speedup is
 * appended there as one JSON line (bench "stream", case "copy_compute_overlap_256MiB"), with
 * CM_BENCH_COMMIT as its commit.
 * Exit status: 0 on success (whatever the speedup); 1 on errors or without a usable GPU.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cudamodel/cudamodel.h>

/* from kernels/example_kernels.cu */
const void *example_transform_kernel(void);

#define REPS 5
#define MAX_K 64
#define ITERS 8

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int fail(void) {
    char report[2048];
    cm_error_format(NULL, report, sizeof report);
    fprintf(stderr, "%s\n", report);
    return 1;
}

typedef struct {
    cm_device_t *dev;
    cm_host_buffer_t *in, *out;
    cm_buffer_t *d_in[MAX_K], *d_out[MAX_K];
    cm_stream_t *streams[MAX_K];
    int k;
    size_t chunk_elems, n;
} pipeline_t;

/* Every element against a float64 reference of the kernel's arithmetic. */
static int check(const float *in, const float *out, size_t n, const char *which) {
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
        double v = in[i];
        for (int k = 0; k < ITERS; ++k) v = v * 0.999 + 0.001;
        if (!(fabs((double)out[i] - v) <= 1e-5 * fabs(v) + 1e-6)) {
            if (bad++ < 3) fprintf(stderr, "%s run: out[%zu] = %.9g, expected %.9g\n", which, i, out[i], v);
        }
    }
    if (bad) fprintf(stderr, "%s run: %zu of %zu elements wrong\n", which, bad, n);
    return bad ? 1 : 0;
}

/* Append the speedup as one JSON line to $CM_BENCH_RESULTS (the benchmarks' record format). */
static void record(double speedup, size_t mib, int k) {
    const char *path = getenv("CM_BENCH_RESULTS");
    if (path == NULL || path[0] == '\0') return;
    const char *commit = getenv("CM_BENCH_COMMIT");
    char date[16] = "unknown";
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm) != NULL) strftime(date, sizeof date, "%Y-%m-%d", &tm);
    FILE *f = fopen(path, "a");
    if (f == NULL) return;
    fprintf(f, "{\"bench\":\"stream\",\"case\":\"copy_compute_overlap_%zuMiB_%d_streams\",\"unit\":\"x\","
               "\"ours\":%.4f,\"peer\":1.0,\"peer_name\":\"same pipeline on one stream\","
               "\"ratio\":%.4f,\"goal\":\">= 1.8x\",\"meets\":%s,\"commit\":\"%s\",\"date\":\"%s\"}\n",
            mib, k, speedup, speedup, speedup >= 1.8 ? "true" : "false",
            commit && commit[0] ? commit : "unknown", date);
    fclose(f);
}

/* Queue the whole pipeline: chunk c on streams[c % n_streams]. */
static cm_status_t run(pipeline_t *p, int n_streams) {
    for (int c = 0; c < p->k; ++c) {
        cm_stream_t *s = p->streams[c % n_streams];
        size_t first = (size_t)c * p->chunk_elems;
        size_t elems = first + p->chunk_elems <= p->n ? p->chunk_elems : p->n - first;
        size_t bytes = elems * sizeof(float), off = first * sizeof(float);
        CM_TRY(cm_buffer_copy_from_host_buffer(s, p->d_in[c], 0, p->in, off, bytes));
        void *y = NULL, *x = NULL;
        CM_TRY(cm_buffer_device_ptr(p->d_out[c], &y));
        CM_TRY(cm_buffer_device_ptr(p->d_in[c], &x));
        unsigned long long ne = elems;
        int iters = ITERS;
        void *args[] = {&y, &x, &ne, &iters};
        cm_launch_config_t cfg = CM_LAUNCH_CONFIG_INIT;
        CM_TRY(cm_launch_config_1d(ne, 256, &cfg));
        if (cfg.grid.x > 132u * 16u) cfg.grid.x = 132u * 16u; /* grid-stride */
        CM_TRY(CM_LAUNCH(s, example_transform_kernel(), &cfg, args));
        CM_TRY(cm_buffer_copy_to_host_buffer(s, p->d_out[c], 0, p->out, off, bytes));
    }
    return CM_OK;
}

static cm_status_t time_run(pipeline_t *p, int n_streams, double *median_ms) {
    double t[REPS];
    CM_TRY(run(p, n_streams)); /* warm-up */
    CM_TRY(cm_device_synchronize(p->dev));
    for (int r = 0; r < REPS; ++r) {
        double t0 = now_ms();
        CM_TRY(run(p, n_streams));
        CM_TRY(cm_device_synchronize(p->dev));
        t[r] = now_ms() - t0;
    }
    qsort(t, REPS, sizeof t[0], cmp_double);
    *median_ms = t[REPS / 2];
    return CM_OK;
}

int main(int argc, char **argv) {
    size_t mib = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 256;
    int k = argc > 2 ? atoi(argv[2]) : 32;
    if (mib < 1 || mib > 16384 || k < 2 || k > MAX_K) {
        fprintf(stderr, "usage: %s [MiB 1..16384] [K 2..%d]\n", argv[0], MAX_K);
        return 64;
    }
    cm_device_limits_t lim;
    if (cm_device_get_limits(0, &lim) != CM_OK) return fail();
    pipeline_t p;
    memset(&p, 0, sizeof p);
    p.k = k;
    p.n = mib * 1024 * 1024 / sizeof(float);
    p.chunk_elems = (p.n + (size_t)k - 1) / (size_t)k;
    size_t bytes = p.n * sizeof(float);
    if (cm_device_open(0, &p.dev) != CM_OK) return fail();
    cm_stream_pool_config_t pool = {(unsigned)k, 0};
    if (cm_stream_pool_configure(p.dev, &pool) != CM_OK) return fail();
    if (cm_host_buffer_create(p.dev, bytes, CM_HOST_BUFFER_DEFAULT, &p.in) != CM_OK ||
        cm_host_buffer_create(p.dev, bytes, CM_HOST_BUFFER_DEFAULT, &p.out) != CM_OK)
        return fail();
    for (int c = 0; c < k; ++c) {
        if (cm_buffer_create(p.dev, p.chunk_elems * sizeof(float), &p.d_in[c]) != CM_OK ||
            cm_buffer_create(p.dev, p.chunk_elems * sizeof(float), &p.d_out[c]) != CM_OK ||
            cm_stream_acquire(p.dev, CM_STREAM_PRIORITY_LOW, &p.streams[c]) != CM_OK)
            return fail();
    }
    float *in = NULL, *out = NULL;
    if (cm_host_buffer_data(p.in, (void **)&in) != CM_OK || cm_host_buffer_data(p.out, (void **)&out) != CM_OK)
        return fail();
    uint64_t state = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < p.n; ++i) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        in[i] = (float)((double)(state >> 11) / 9007199254740992.0 * 2.0 - 1.0);
    }

    double serial = 0.0, overlapped = 0.0;
    memset(out, 0xff, bytes); /* NaN: an element nobody wrote fails the check */
    if (time_run(&p, 1, &serial) != CM_OK) return fail();
    if (check(in, out, p.n, "serial") != 0) return 1;
    memset(out, 0xff, bytes);
    if (time_run(&p, k, &overlapped) != CM_OK) return fail();
    if (check(in, out, p.n, "overlapped") != 0) return 1;
    double gb = 2.0 * (double)bytes / 1e9;
    double speedup = serial / overlapped;
    printf("streams_overlap on %s: %zu MiB in %d chunks, H2D -> kernel -> D2H, pinned memory\n",
           lim.name, mib, k);
    printf("  serial (1 stream):        %8.3f ms  (%.1f GB/s both directions)\n", serial, gb / serial * 1e3);
    printf("  overlapped (%2d streams):  %8.3f ms  (%.1f GB/s both directions)\n", k, overlapped,
           gb / overlapped * 1e3);
    printf("  speedup: %.2fx (goal on an H200: >= 1.8x) %s\n", speedup,
           speedup >= 1.8 ? "meets" : "below the goal");
    record(speedup, mib, k);

    for (int c = 0; c < k; ++c) {
        if (cm_stream_release(p.streams[c]) != CM_OK || cm_buffer_destroy(p.d_in[c]) != CM_OK ||
            cm_buffer_destroy(p.d_out[c]) != CM_OK)
            return fail();
    }
    if (cm_host_buffer_destroy(p.in) != CM_OK || cm_host_buffer_destroy(p.out) != CM_OK ||
        cm_device_close(p.dev) != CM_OK)
        return fail();
    return 0;
}
