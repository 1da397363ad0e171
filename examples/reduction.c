/*
 * reduction: the sum and the argmax of random floats on the library's reductions, timed with
 * the stream timer helpers and checked against a float64 reference computed on the CPU.
 *
 *   1. n random floats in [-1, 1) go to a device buffer (cm_buffer_copy_from_host with a NULL
 *      stream: synchronous).
 *   2. The synchronous forms give the answers on the host: cm_reduce_sum_f32_to_host and
 *      cm_reduce_argmax_f32_to_host (the first index of the largest element, and its value).
 *   3. They are checked: the sum within the bound kernels.h states (float64 accumulation,
 *      rounded once to float: |error| <= 2^-24 |sum| + (n / 256 + 24) 2^-53 sum|x|), the argmax
 *      exactly (the first index of the maximum, as the CPU finds it).
 *   4. The device-result forms (cm_reduce_sum_f32 / cm_reduce_argmax_f32, stream-ordered, no
 *      host round trip) are timed on a pooled stream: one call between the two events of a
 *      cm_timer, then cm_time_callable (median of 20 calls after 3 warm-up calls); their last
 *      results are read back and must be the same bits as step 2's (the reductions are
 *      reproducible run to run).
 *   5. It prints each result, its error against float64, the times and the bandwidth (4 bytes
 *      read per element).
 *
 * Usage: reduction [n]   (n elements, default 16777216 = 2^24; at least 1)
 * Exit status: 0 when both results are right; 1 on a wrong result, on an error, or without a
 * usable GPU (the library's report of why is printed); 64 on a bad command line.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudamodel/cudamodel.h>

typedef struct work {
    const cm_buffer_t *x;
    cm_buffer_t *result; /* float sum at byte 0, argmax index (uint64) at byte 8 */
    size_t n;
} work_t;

static cm_status_t sum_once(void *user, cm_stream_t *stream) {
    work_t *w = user;
    return cm_reduce_sum_f32(stream, w->x, 0, w->n, w->result, 0); /* float at byte 0 */
}

static cm_status_t argmax_once(void *user, cm_stream_t *stream) {
    work_t *w = user;
    /* result_offset counts bytes: the uint64_t index goes to bytes 8 .. 15 */
    return cm_reduce_argmax_f32(stream, w->x, 0, w->n, w->result, sizeof(uint64_t));
}

/* xorshift64: uniform floats in [-1, 1) (24 random bits), never all zeros */
static uint64_t rng = 0x2545F4914F6CDD1Dull;
static float random_unit(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)(rng >> 40) * 0x1p-23f - 1.0f;
}

static int report(const char *what) {
    char text[2048];
    cm_error_format(NULL, text, sizeof text);
    fprintf(stderr, "reduction: %s failed:\n%s\n", what, text);
    return 1;
}

/* Time fn: one call with a timer, then the median of 20. Returns CM_OK or the failing status. */
static cm_status_t time_it(cm_device_t *dev, cm_stream_t *stream, cm_timed_fn_t fn, work_t *w,
                           float *one_ms, cm_timing_stats_t *st) {
    cm_timer_t *timer = NULL;
    CM_TRY(fn(w, stream)); /* warm-up: module load and pool growth stay out of the timer */
    CM_TRY(cm_timer_create(dev, &timer));
    cm_status_t s = cm_timer_start(timer, stream);
    if (s == CM_OK) s = fn(w, stream);
    if (s == CM_OK) s = cm_timer_stop(timer);
    if (s == CM_OK) s = cm_timer_elapsed_ms(timer, one_ms);
    cm_status_t d = cm_timer_destroy(timer);
    CM_TRY(s);
    CM_TRY(d);
    return cm_time_callable(stream, fn, w, 3, 20, st);
}

static void print_time(const char *what, size_t n, float one_ms, const cm_timing_stats_t *st) {
    const double gbs = st->median_ms > 0.0 ? 4.0 * (double)n / (st->median_ms * 1e-3) / 1e9 : 0.0;
    printf("%-7s time: one call %.4f ms (cm_timer); median of 20 %.4f ms (min %.4f, max %.4f, "
           "cm_time_callable): %.0f GB/s read\n",
           what, (double)one_ms, st->median_ms, st->min_ms, st->max_ms, gbs);
}

int main(int argc, char **argv) {
    size_t n = (size_t)1 << 24;
    if (argc > 1) {
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(argv[1], &end, 10);
        if (end == argv[1] || *end != '\0' || errno != 0 || argv[1][0] == '-' || v < 1 ||
            v > SIZE_MAX / sizeof(float)) {
            fprintf(stderr, "usage: %s [n]   (n >= 1: number of elements, default 16777216)\n",
                    argv[0]);
            return 64;
        }
        n = (size_t)v;
    }
    const size_t bytes = n * sizeof(float);
    int rc = 1;
    cm_device_t *dev = NULL;
    cm_stream_t *stream = NULL;
    cm_buffer_t *x = NULL, *result = NULL;
    float *h = NULL;

    if (cm_device_open(0, &dev) != CM_OK) return report("opening device 0");
    h = malloc(bytes);
    if (h == NULL) {
        fprintf(stderr, "reduction: host allocation of %zu bytes failed\n", bytes);
        goto done;
    }
    /* the data and the float64 reference: sum, sum of |x|, first index of the maximum */
    double ref = 0.0, sum_abs = 0.0;
    size_t ref_index = 0;
    for (size_t i = 0; i < n; ++i) {
        h[i] = random_unit();
        ref += (double)h[i];
        sum_abs += fabs((double)h[i]);
        if (h[i] > h[ref_index]) ref_index = i;
    }

    /* 1. to the device; a 16-byte result buffer for the device-result forms */
    if (cm_buffer_create(dev, bytes, &x) != CM_OK || cm_buffer_create(dev, 16, &result) != CM_OK ||
        cm_buffer_copy_from_host(NULL, x, 0, h, bytes) != CM_OK ||
        cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &stream) != CM_OK) {
        rc = report("preparing the input");
        goto done;
    }

    /* 2. the synchronous forms */
    float sum = 0.0f, max_value = 0.0f;
    uint64_t max_index = 0;
    if (cm_reduce_sum_f32_to_host(stream, x, 0, n, &sum) != CM_OK ||
        cm_reduce_argmax_f32_to_host(stream, x, 0, n, &max_index, &max_value) != CM_OK) {
        rc = report("the reductions");
        goto done;
    }

    /* 3. checks against the float64 reference */
    const double err = fabs((double)sum - ref);
    const double bound = 0x1p-24 * fabs(ref) + ((double)n / 256.0 + 24.0) * 0x1p-53 * sum_abs;
    const int sum_ok = err <= bound; /* false for NaN too */
    const int argmax_ok = max_index == (uint64_t)ref_index && max_value == h[ref_index];
    printf("n = %zu random floats in [-1, 1)\n", n);
    const double ulp = (double)nextafterf(fabsf(sum), INFINITY) - fabs((double)sum);
    printf("sum:    %.9g (float64 reference %.17g): error %.3g = %.2f ulp of the result; bound "
           "%.3g: %s\n", (double)sum, ref, err, err / ulp, bound, sum_ok ? "ok" : "WRONG");
    printf("argmax: index %llu, value %.9g (CPU: first maximum at %zu, %.9g): %s\n",
           (unsigned long long)max_index, (double)max_value, ref_index, (double)h[ref_index],
           argmax_ok ? "ok" : "WRONG");
    if (!sum_ok || !argmax_ok) {
        fprintf(stderr, "reduction: FAILED: %s differs from the float64 reference\n",
                !sum_ok ? "the sum" : "the argmax");
        goto done;
    }

    /* 4. the device-result forms, timed; their last results read back */
    work_t w = {x, result, n};
    float one_sum = 0.0f, one_arg = 0.0f;
    cm_timing_stats_t st_sum, st_arg;
    if (cm_buffer_set(stream, result, 0, 16, 0xFF) != CM_OK ||
        time_it(dev, stream, sum_once, &w, &one_sum, &st_sum) != CM_OK ||
        time_it(dev, stream, argmax_once, &w, &one_arg, &st_arg) != CM_OK ||
        cm_stream_synchronize(stream) != CM_OK) {
        rc = report("timing the reductions");
        goto done;
    }
    unsigned char dev_result[16];
    if (cm_buffer_copy_to_host(NULL, result, 0, dev_result, sizeof dev_result) != CM_OK) {
        rc = report("reading the device results");
        goto done;
    }
    if (memcmp(dev_result, &sum, 4) != 0 || memcmp(dev_result + 8, &max_index, 8) != 0) {
        fprintf(stderr, "reduction: FAILED: the device-result forms gave other bits than the "
                "synchronous ones\n");
        goto done;
    }

    /* 5. times and bandwidth */
    print_time("sum", n, one_sum, &st_sum);
    print_time("argmax", n, one_arg, &st_arg);
    printf("reduction: PASSED (the device-result forms gave the same bits)\n");
    rc = 0;

done: /* each release is tried; NULL handles are no-ops */
    if (cm_stream_release(stream) != CM_OK) rc = report("releasing the stream");
    if (cm_buffer_destroy(x) != CM_OK) rc = report("destroying x");
    if (cm_buffer_destroy(result) != CM_OK) rc = report("destroying the result buffer");
    if (cm_device_close(dev) != CM_OK) rc = report("closing the device");
    free(h);
    return rc;
}
