/*
 * constant_conv: a 1-D convolution whose filter taps live in constant memory.
 *
 * A __constant__ array is defined in kernels/constant_conv_kernels.cu and exported to C by
 * the address of its host shadow (constant_conv_taps_symbol(), the pattern of memspace.h). The
 * program
 *
 * 1. asks cm_symbol_address() for the symbol's size (63 floats: radius up to 31);
 * 2. tries to copy 64 taps into it: refused before anything is written, the message naming
 *    both sizes;
 * 3. copies 31 binomial taps (radius 15) with cm_symbol_copy_from_host() and reads them back
 *    with cm_symbol_copy_to_host();
 * 4. convolves 2^24 random floats (edges clamped) with the taps read from constant memory
 *    (every thread of a warp reads the same tap at once: a broadcast), and again with the same
 *    taps in global memory; both are timed (cm_time_callable: median of 10 after 2 warm-ups)
 *    and both outputs checked against a float64 CPU reference (every element near the edges,
 *    every 7th elsewhere).
 *
 * Usage: constant_conv
 * Exit status: 0 when both outputs match the reference; 1 on a wrong result, an error or
 * without a usable GPU (the library's report is printed).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudamodel/cudamodel.h>

/* from kernels/constant_conv_kernels.cu */
const void *constant_conv_taps_symbol(void);
const void *constant_conv_kernel(void);
const void *constant_conv_global_kernel(void);

#define RADIUS 15
#define TAPS (2 * RADIUS + 1)

static int report(const char *what) {
    char text[2048];
    cm_error_format(NULL, text, sizeof text);
    fprintf(stderr, "constant_conv: %s failed:\n%s\n", what, text);
    return 1;
}

typedef struct conv {
    void *out, *in, *taps; /* taps: NULL for the constant-memory kernel */
    unsigned long long n;
    int radius;
    unsigned blocks;
} conv_t;

static cm_status_t run(void *user, cm_stream_t *s) {
    conv_t *c = user;
    cm_launch_config_t cfg = CM_LAUNCH_CONFIG_INIT;
    cfg.grid.x = c->blocks;
    cfg.block.x = 256;
    if (c->taps == NULL) {
        void *args[] = {&c->out, &c->in, &c->n, &c->radius};
        return CM_LAUNCH(s, constant_conv_kernel(), &cfg, args);
    }
    void *args[] = {&c->out, &c->in, &c->n, &c->radius, &c->taps};
    return CM_LAUNCH(s, constant_conv_global_kernel(), &cfg, args);
}

/* Worst |out - reference| over the checked elements; *bad counts those beyond the tolerance
 * (float accumulation of TAPS terms of magnitude <= 1: far under 2e-5). */
static double check(const float *out, const float *in, const float *taps, size_t n, int *bad) {
    double worst = 0.0;
    *bad = 0;
    for (size_t i = 0; i < n;) {
        double ref = 0.0;
        for (int k = 0; k < TAPS; ++k) {
            long long j = (long long)i + k - RADIUS;
            j = j < 0 ? 0 : j >= (long long)n ? (long long)n - 1 : j;
            ref += (double)taps[k] * (double)in[j];
        }
        double err = (double)out[i] - ref;
        if (err < 0) err = -err;
        if (!(err <= 2e-5)) {
            if (*bad < 5)
                fprintf(stderr, "  element %zu: %.9g, reference %.9g\n", i, (double)out[i], ref);
            ++*bad;
        }
        if (err > worst) worst = err;
        i += (i < 4 * RADIUS || i + 4 * RADIUS >= n) ? 1 : 7;
    }
    return worst;
}

int main(void) {
    cm_device_t *dev = NULL;
    if (cm_device_open(0, &dev) != CM_OK) return report("opening device 0");
    int rc = 1;
    const size_t n = (size_t)1 << 24, bytes = n * sizeof(float);
    float *h_in = malloc(bytes), *h_out = malloc(bytes);
    cm_buffer_t *in = NULL, *out = NULL, *gtaps = NULL;
    cm_stream_t *s = NULL;
    conv_t c;
    memset(&c, 0, sizeof c);
    if (h_in == NULL || h_out == NULL) {
        fprintf(stderr, "constant_conv: no host memory\n");
        goto done;
    }

    /* 1. the symbol's size */
    const void *sym = constant_conv_taps_symbol();
    size_t sym_bytes = 0;
    if (cm_symbol_address(dev, sym, NULL, &sym_bytes) != CM_OK) {
        report("cm_symbol_address");
        goto done;
    }
    printf("1. __constant__ float conv_taps[]: %zu bytes (%zu taps at most)\n", sym_bytes,
           sym_bytes / sizeof(float));

    /* 2. one tap too many: refused, nothing written */
    float too_many[64];
    for (int k = 0; k < 64; ++k) too_many[k] = 1.0f;
    cm_status_t st = cm_symbol_copy_from_host(NULL, dev, sym, 0, too_many, sizeof too_many);
    printf("2. copying %zu bytes of taps: %s\n   %s\n   hint: %s\n", sizeof too_many,
           cm_status_name(st), cm_last_error()->message, cm_last_error()->hint);
    if (st != CM_ERROR_INVALID_ARGUMENT) {
        fprintf(stderr, "constant_conv: the oversized copy was not refused\n");
        goto done;
    }

    /* 3. binomial taps C(30, k) / 2^30: a Gaussian-like low-pass filter summing to 1 */
    float taps[TAPS], back[TAPS];
    double binom = 1.0;
    for (int k = 0; k < TAPS; ++k) {
        taps[k] = (float)(binom / 1073741824.0);
        binom = binom * (double)(TAPS - 1 - k) / (double)(k + 1);
    }
    if (cm_symbol_copy_from_host(NULL, dev, sym, 0, taps, sizeof taps) != CM_OK ||
        cm_symbol_copy_to_host(NULL, dev, sym, 0, back, sizeof back) != CM_OK) {
        report("copying the taps");
        goto done;
    }
    if (memcmp(taps, back, sizeof taps) != 0) {
        fprintf(stderr, "constant_conv: the taps read back differ\n");
        goto done;
    }
    printf("3. %d taps (radius %d) copied into the symbol and read back identical\n", TAPS, RADIUS);

    /* 4. the convolution, taps in constant memory, then in global memory */
    unsigned long long r = 0x2545F4914F6CDD1Dull;
    for (size_t i = 0; i < n; ++i) {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        h_in[i] = (float)((double)(r >> 11) * 0x1.0p-52 - 1.0);
    }
    cm_device_limits_t lim;
    if (cm_device_get_limits(0, &lim) != CM_OK || cm_buffer_create(dev, bytes, &in) != CM_OK ||
        cm_buffer_create(dev, bytes, &out) != CM_OK ||
        cm_buffer_create(dev, sizeof taps, &gtaps) != CM_OK ||
        cm_buffer_copy_from_host(NULL, in, 0, h_in, bytes) != CM_OK ||
        cm_buffer_copy_from_host(NULL, gtaps, 0, taps, sizeof taps) != CM_OK ||
        cm_buffer_device_ptr(in, &c.in) != CM_OK || cm_buffer_device_ptr(out, &c.out) != CM_OK ||
        cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s) != CM_OK) {
        report("setting up the signal");
        goto done;
    }
    c.n = n;
    c.radius = RADIUS;
    c.blocks = (unsigned)lim.multiprocessor_count * 8u;
    const char *names[2] = {"constant", "global  "};
    double med[2] = {0, 0};
    int bad_total = 0;
    for (int v = 0; v < 2; ++v) {
        c.taps = NULL;
        if (v == 1 && cm_buffer_device_ptr(gtaps, &c.taps) != CM_OK) {
            report("cm_buffer_device_ptr");
            goto done;
        }
        cm_timing_stats_t ts;
        if (cm_buffer_set(NULL, out, 0, bytes, 0xFF) != CM_OK || /* NaN: every element written */
            cm_time_callable(s, run, &c, 2, 10, &ts) != CM_OK || cm_stream_synchronize(s) != CM_OK ||
            cm_buffer_copy_to_host(NULL, out, 0, h_out, bytes) != CM_OK) {
            report("the convolution");
            goto done;
        }
        int bad = 0;
        double worst = check(h_out, h_in, taps, n, &bad);
        med[v] = ts.median_ms;
        printf("4. taps in %s memory: %.3f ms (median), %.0f GB/s of signal read + written, "
               "%.1f GFLOP/s; largest error %.2g, %d element(s) off\n", names[v], ts.median_ms,
               2.0 * (double)bytes / (ts.median_ms * 1e-3) / 1e9,
               2.0 * TAPS * (double)n / (ts.median_ms * 1e-3) / 1e9, worst, bad);
        bad_total += bad;
    }
    printf("   constant / global time: %.2f\n", med[0] / med[1]);
    if (bad_total > 0) {
        fprintf(stderr, "constant_conv: %d element(s) differ from the reference\n", bad_total);
        goto done;
    }
    rc = 0;
done:
    if (cm_stream_release(s) != CM_OK || cm_buffer_destroy(in) != CM_OK ||
        cm_buffer_destroy(out) != CM_OK || cm_buffer_destroy(gtaps) != CM_OK ||
        cm_device_close(dev) != CM_OK)
        rc = report("releasing");
    free(h_in);
    free(h_out);
    return rc;
}
