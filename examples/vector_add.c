/*
 * vector_add: the CUDA programming model's five steps on the library's tuned vector kernel.
 *
 *   1. open the device                       cm_device_open, cm_device_get_limits
 *   2. allocate on the device                cm_buffer_create (a, b and the output c)
 *   3. copy host -> device                   cm_buffer_copy_from_host with a NULL stream
 *                                            (synchronous); c poisoned (all bits set: NaN) with
 *                                            cm_buffer_set so a missed element shows
 *   4. launch                                cm_vector_add_f32 on a pooled stream: the library
 *                                            checks the operands and picks the grid and the
 *                                            16-byte vector loads itself (any n, any byte
 *                                            offset that is a multiple of 4)
 *   5. copy device -> host, verify, free     every element against the CPU: IEEE addition is
 *                                            correctly rounded, so c[i] must equal the float64
 *                                            sum a[i] + b[i] rounded to float, bit for bit
 *
 * Then it times the add (cm_time_callable: median of 20 calls after 3 warm-up calls, CUDA
 * events) and prints the bandwidth, counting every byte read and written (12 per element).
 * Any failure prints the library's report (what failed, the numbers, how to fix it); on a
 * machine without a GPU that report says "no NVIDIA driver".
 *
 * Usage: vector_add [n]   (n elements, default 16777216 = 2^24)
 * Exit status: 0 when every element is right; 1 on a wrong element, on an error, or without a
 * usable GPU; 64 on a bad command line.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudamodel/cudamodel.h>

typedef struct work {
    cm_buffer_t *c, *a, *b;
    size_t n;
} work_t;

/* the timed work: one add on the timing stream */
static cm_status_t add_once(void *user, cm_stream_t *stream) {
    work_t *w = user;
    return cm_vector_add_f32(stream, w->c, 0, w->a, 0, w->b, 0, w->n);
}

/* xorshift64: uniform floats in [-1, 1) (24 random bits), never all zeros */
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static float random_unit(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)(rng >> 40) * 0x1p-23f - 1.0f;
}

static int report(const char *what) {
    char text[2048];
    cm_error_format(NULL, text, sizeof text);
    fprintf(stderr, "vector_add: %s failed:\n%s\n", what, text);
    return 1;
}

int main(int argc, char **argv) {
    size_t n = (size_t)1 << 24;
    if (argc > 1) {
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(argv[1], &end, 10);
        if (end == argv[1] || *end != '\0' || errno != 0 || argv[1][0] == '-' ||
            v > SIZE_MAX / (3 * sizeof(float))) {
            fprintf(stderr, "usage: %s [n]   (n: number of elements, default 16777216)\n", argv[0]);
            return 64;
        }
        n = (size_t)v;
    }
    const size_t bytes = n * sizeof(float);
    int rc = 1;
    cm_device_t *dev = NULL;
    cm_stream_t *stream = NULL;
    work_t w = {NULL, NULL, NULL, n};
    float *h_a = NULL, *h_b = NULL, *h_c = NULL;

    /* 1. the device */
    cm_device_limits_t lim;
    if (cm_device_open(0, &dev) != CM_OK) return report("opening device 0");
    if (cm_device_get_limits(0, &lim) != CM_OK) {
        rc = report("reading the device's limits");
        goto done;
    }
    printf("device 0: %s (sm_%d%d, %d SMs)\n", lim.name, lim.cc_major, lim.cc_minor,
           lim.multiprocessor_count);

    h_a = malloc(bytes + 1);
    h_b = malloc(bytes + 1);
    h_c = malloc(bytes + 1);
    if (h_a == NULL || h_b == NULL || h_c == NULL) {
        fprintf(stderr, "vector_add: host allocation of 3 x %zu bytes failed\n", bytes);
        goto done;
    }
    for (size_t i = 0; i < n; ++i) {
        h_a[i] = random_unit();
        h_b[i] = random_unit();
    }

    /* 2. allocate on the device; 3. host -> device, the output poisoned */
    if (cm_buffer_create(dev, bytes, &w.a) != CM_OK || cm_buffer_create(dev, bytes, &w.b) != CM_OK ||
        cm_buffer_create(dev, bytes, &w.c) != CM_OK) {
        rc = report("allocating 3 device buffers");
        goto done;
    }
    /* NULL stream: synchronous, the data is on the device when each call returns */
    if (cm_buffer_copy_from_host(NULL, w.a, 0, h_a, bytes) != CM_OK ||
        cm_buffer_copy_from_host(NULL, w.b, 0, h_b, bytes) != CM_OK ||
        cm_buffer_set(NULL, w.c, 0, bytes, 0xFF) != CM_OK) {
        rc = report("copying the inputs to the device");
        goto done;
    }

    /* 4. launch on a pooled stream, and wait for it */
    if (cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &stream) != CM_OK) {
        rc = report("acquiring a stream");
        goto done;
    }
    if (cm_vector_add_f32(stream, w.c, 0, w.a, 0, w.b, 0, n) != CM_OK) {
        rc = report("cm_vector_add_f32");
        goto done;
    }
    if (cm_stream_synchronize(stream) != CM_OK) {
        rc = report("waiting for the add");
        goto done;
    }

    /* 5. device -> host and verify every element */
    if (cm_buffer_copy_to_host(NULL, w.c, 0, h_c, bytes) != CM_OK) {
        rc = report("copying the result to the host");
        goto done;
    }
    size_t bad = 0, first_bad = 0;
    for (size_t i = 0; i < n; ++i) {
        const float want = (float)((double)h_a[i] + (double)h_b[i]);
        if (memcmp(&h_c[i], &want, sizeof want) != 0 && bad++ == 0) first_bad = i;
    }
    printf("verify: %zu of %zu elements wrong (exact: the float64 sum rounded to float)\n", bad, n);
    if (bad != 0) {
        const size_t i = first_bad;
        fprintf(stderr, "vector_add: FAILED: first wrong element %zu: %.9g + %.9g gave %.9g\n", i,
                (double)h_a[i], (double)h_b[i], (double)h_c[i]);
        goto done;
    }

    /* timing: median of 20 calls after 3 warm-up calls */
    cm_timing_stats_t st;
    if (cm_time_callable(stream, add_once, &w, 3, 20, &st) != CM_OK) {
        rc = report("timing the add");
        goto done;
    }
    printf("time: median %.4f ms (min %.4f, max %.4f) over 20 calls", st.median_ms, st.min_ms,
           st.max_ms);
    if (n > 0 && st.median_ms > 0.0)
        printf(": %.0f GB/s (12 bytes per element: 2 read, 1 written)",
               12.0 * (double)n / (st.median_ms * 1e-3) / 1e9);
    printf("\nvector_add: PASSED\n");
    rc = 0;

done: /* each release is tried; NULL handles are no-ops */
    if (cm_stream_release(stream) != CM_OK) rc = report("releasing the stream");
    if (cm_buffer_destroy(w.a) != CM_OK) rc = report("destroying a");
    if (cm_buffer_destroy(w.b) != CM_OK) rc = report("destroying b");
    if (cm_buffer_destroy(w.c) != CM_OK) rc = report("destroying c");
    if (cm_device_close(dev) != CM_OK) rc = report("closing the device");
    free(h_a);
    free(h_b);
    free(h_c);
    return rc;
}
