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
 * Usage: streams_overlap [MiB] [K]   (default 256 MiB, K = 16). Median of 5 runs after warm-up.
 * Exit status: 0 on success (whatever the speedup); 1 on errors or without a usable GPU.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cudamodel/cudamodel.h>
#include <cudamodel/interop.h> /* cm_buffer_device_ptr(): the kernels take raw pointers */

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

/* Queue the whole pipeline: chunk c on streams[c % n_streams]. */
static cm_status_t run(pipeline_t *p, int n_streams) {
    for (int c = 0; c < p->k; ++c) {
        cm_stream_t *s = p->streams[c % n_streams];
        size_t first = (size_t)c * p->chunk_elems;
        size_t elems = first + p->chunk_elems <= p->n ? p->chunk_elems : p->n - first;
        size_t bytes = elems * sizeof(float), off = first * sizeof(float);
        CM_TRY(cm_buffer_copy_from_host_buffer_on_stream(p->d_in[c], 0, p->in, off, bytes, s));
        void *y = NULL, *x = NULL;
        CM_TRY(cm_buffer_device_ptr(p->d_out[c], &y));
        CM_TRY(cm_buffer_device_ptr(p->d_in[c], &x));
        unsigned long long ne = elems;
        int iters = ITERS;
        void *args[] = {&y, &x, &ne, &iters};
        cm_launch_config_t cfg = CM_LAUNCH_CONFIG_INIT;
        CM_TRY(cm_launch_config_1d(ne, 256, &cfg));
        if (cfg.grid.x > 132u * 16u) cfg.grid.x = 132u * 16u; /* grid-stride */
        cfg.stream = s;
        CM_TRY(CM_LAUNCH(example_transform_kernel(), &cfg, args));
        CM_TRY(cm_buffer_copy_to_host_buffer_on_stream(p->d_out[c], 0, p->out, off, bytes, s));
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
    int k = argc > 2 ? atoi(argv[2]) : 16;
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
    for (size_t i = 0; i < p.n; ++i) in[i] = (float)(i % 1000) * 0.001f;

    double serial = 0.0, overlapped = 0.0;
    if (time_run(&p, 1, &serial) != CM_OK) return fail();
    float probe = out[p.n - 1];
    memset(out, 0, bytes);
    if (time_run(&p, k, &overlapped) != CM_OK) return fail();
    if (out[p.n - 1] != probe || out[0] == 0.0f) {
        fprintf(stderr, "the overlapped run's output differs from the serial run's\n");
        return 1;
    }
    double gb = 2.0 * (double)bytes / 1e9;
    double speedup = serial / overlapped;
    printf("streams_overlap on %s: %zu MiB in %d chunks, H2D -> kernel -> D2H, pinned memory\n",
           lim.name, mib, k);
    printf("  serial (1 stream):        %8.3f ms  (%.1f GB/s both directions)\n", serial, gb / serial * 1e3);
    printf("  overlapped (%2d streams):  %8.3f ms  (%.1f GB/s both directions)\n", k, overlapped,
           gb / overlapped * 1e3);
    printf("  speedup: %.2fx (goal on an H200: >= 1.8x) %s\n", speedup,
           speedup >= 1.8 ? "meets" : "below the goal");

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
