/*
 * multi_gpu: the multi-GPU pattern with libcudamodel.
 *
 * In raw CUDA each GPU has its own memory and its own context, the program switches between
 * them with cudaSetDevice, allocates and launches on each in turn, enables peer access between
 * pairs that support it, and synchronizes each at the end. Here a device set does the
 * switching (and always puts the caller's current device back), a split array puts one part of
 * the data in each GPU's memory, and each operation is queued on every GPU before any is waited
 * for, so the GPUs work at the same time from this one thread.
 *
 * The program: every visible GPU with its memory, the peer-access matrix with measured copy
 * bandwidths, then y = a x + y (20 times) and the dot product x . y over 2^26 floats, first on
 * a set of one GPU, then on all of them, with each GPU's share of the elements and its own time
 * (CUDA events on its stream), and the speedup. With one GPU the speedup is about 1.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cudamodel/cudamodel.h>

#define N ((size_t)1 << 26)
#define ITERS 20

static int report(const char *what) {
    char text[2048];
    cm_error_format(NULL, text, sizeof text);
    fprintf(stderr, "multi_gpu: %s failed:\n%s\n", what, text);
    return 1;
}

#define CHECK(expr)                                                                          \
    do {                                                                                     \
        if ((expr) != CM_OK) return report(#expr);                                           \
    } while (0)

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

/* y = a x + y ITERS times and x . y on a set; per-member times from events on its stream. */
static int run(cm_device_set_t *set, const float *hx, const float *hy, double *wall_ms,
               float *dot) {
    int count = 0;
    CHECK(cm_device_set_count(set, &count));
    cm_split_t *x = NULL, *y = NULL;
    CHECK(cm_split_create(set, N, sizeof(float), &x));
    CHECK(cm_split_create(set, N, sizeof(float), &y));
    CHECK(cm_split_scatter_from_host(x, hx, N));    /* host -> each GPU's part */
    CHECK(cm_split_scatter_from_host(y, hy, N));
    cm_timer_t *timers[CM_DEVICE_SET_MAX] = {NULL};
    for (int k = 0; k < count; ++k) {
        cm_device_t *dev = NULL;
        cm_stream_t *s = NULL;
        CHECK(cm_device_set_device(set, k, &dev));
        CHECK(cm_device_set_stream(set, k, &s));
        CHECK(cm_timer_create(dev, &timers[k]));
        CHECK(cm_timer_start(timers[k], s));
    }
    const double t0 = now_ms();
    for (int i = 0; i < ITERS; ++i) CHECK(cm_split_axpy_f32(0.5f, x, y)); /* queued on every GPU */
    for (int k = 0; k < count; ++k) CHECK(cm_timer_stop(timers[k]));
    CHECK(cm_split_dot_f32(x, y, dot));                                   /* waits, combines */
    *wall_ms = now_ms() - t0;
    for (int k = 0; k < count; ++k) {
        int ordinal = -1;
        size_t first = 0, elems = 0;
        float ms = 0.0f;
        CHECK(cm_device_set_ordinal(set, k, &ordinal));
        CHECK(cm_split_part(x, k, NULL, &first, &elems));
        CHECK(cm_timer_elapsed_ms(timers[k], &ms));
        printf("    GPU %d: elements %zu .. %zu (%zu), %d axpy in %.3f ms (%.0f GB/s)\n", ordinal,
               first, first + elems, elems, ITERS, ms,
               ms > 0 ? (double)elems * 12.0 * ITERS / (ms * 1e-3) / 1e9 : 0.0);
        CHECK(cm_timer_destroy(timers[k]));
    }
    CHECK(cm_split_destroy(x));
    CHECK(cm_split_destroy(y));
    return 0;
}

int main(void) {
    int count = 0;
    if (cm_device_count(&count) != CM_OK) return report("cm_device_count");
    printf("%d GPU(s) visible\n", count);

    cm_device_set_t *all = NULL;
    if (cm_device_set_open_all(&all) != CM_OK) return report("cm_device_set_open_all");
    CHECK(cm_device_set_count(all, &count));
    for (int k = 0; k < count; ++k) {
        int ordinal = -1;
        cm_device_limits_t lim;
        size_t free_b = 0, total_b = 0;
        CHECK(cm_device_set_ordinal(all, k, &ordinal));
        CHECK(cm_device_get_limits(ordinal, &lim));
        CHECK(cm_device_memory_info(ordinal, &free_b, &total_b));
        printf("  GPU %d: %s (sm_%d%d), %d SMs, %.1f of %.1f GiB free, PCI %s\n", ordinal,
               lim.name, lim.cc_major, lim.cc_minor, lim.multiprocessor_count,
               (double)free_b / 1073741824.0, (double)total_b / 1073741824.0, lim.pci_bus_id);
    }

    cm_peer_info_t *m = calloc((size_t)count * (size_t)count, sizeof *m);
    if (m == NULL) return 1;
    CHECK(cm_device_set_peer_matrix(all, CM_PEER_MEASURE_BANDWIDTH, m,
                                    (size_t)count * (size_t)count));
    char text[8192];
    CHECK(cm_peer_matrix_format(m, count, text, sizeof text, NULL));
    printf("%s", text);
    free(m);
    int pairs = 0;
    CHECK(cm_device_set_enable_peer_access(all, &pairs));
    printf("peer access enabled in %d direction(s)\n", pairs);

    float *hx = malloc(N * sizeof(float)), *hy = malloc(N * sizeof(float));
    if (hx == NULL || hy == NULL) return 1;
    uint32_t s = 12345u;
    for (size_t i = 0; i < N; ++i) {
        s = s * 1664525u + 1013904223u;
        hx[i] = (float)(s >> 8) * (1.0f / 16777216.0f) - 0.5f;
        s = s * 1664525u + 1013904223u;
        hy[i] = (float)(s >> 8) * (1.0f / 16777216.0f) - 0.5f;
    }

    const int first = 0;
    cm_device_set_t *one = NULL;
    CHECK(cm_device_set_open(&first, 1, &one));
    double t_one = 0, t_all = 0;
    float dot_one = 0, dot_all = 0;
    printf("one GPU, %zu floats:\n", N);
    if (run(one, hx, hy, &t_one, &dot_one) != 0) return 1;
    printf("  %.3f ms, x . y = %.6g\n", t_one, dot_one);
    printf("%d GPU(s), %zu floats:\n", count, N);
    if (run(all, hx, hy, &t_all, &dot_all) != 0) return 1;
    printf("  %.3f ms, x . y = %.6g\n", t_all, dot_all);
    printf("speedup with %d GPU(s): %.2fx%s\n", count, t_all > 0 ? t_one / t_all : 0.0,
           count == 1 ? " (one GPU: nothing to split)" : "");
    /* the dots differ at most in the last bits: each adds float64 partials of other parts */

    CHECK(cm_device_set_close(one));
    CHECK(cm_device_set_close(all));
    free(hx);
    free(hy);
    return 0;
}
