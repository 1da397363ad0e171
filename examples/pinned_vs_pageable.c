/*
 * pinned_vs_pageable: host <-> device bandwidth of the three ways to copy.
 *
 *   raw pageable      cudaMemcpy from/to memory of malloc (the driver stages it, slowly)
 *   staged pageable   cm_buffer_copy_from_host / cm_buffer_copy_to_host on the same memory
 *                     (the library's pipeline: chunks, pinned staging buffers, host threads)
 *   raw pinned        cudaMemcpy from/to page-locked memory (cm_host_buffer_t)
 *
 * plus the library's own pinned copy (cm_buffer_copy_from_host_buffer) and the host's memcpy
 * bandwidth with one thread, which bounds any staging done by one thread.
 *
 * Usage: pinned_vs_pageable [MiB]   (default 256). Median of 5 runs after a warm-up.
 * Exit status: 0 on success; 1 without a usable GPU (the library's report is printed).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/interop.h>
#include <cudamodel/status.h>

#define REPS 5

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int report_failure(const char *what) {
    char text[2048];
    cm_error_format(NULL, text, sizeof text);
    fprintf(stderr, "pinned_vs_pageable: %s failed:\n%s\n", what, text);
    return 1;
}

enum way { RAW_PAGEABLE, STAGED_PAGEABLE, RAW_PINNED, LIB_PINNED, WAYS };
static const char *const way_name[WAYS] = {"raw pageable (cudaMemcpy)",
                                           "staged pageable (libcudamodel)",
                                           "raw pinned (cudaMemcpy)",
                                           "pinned (libcudamodel)"};

typedef struct ctx {
    cm_buffer_t *dev_buf;
    void *dev_ptr;
    unsigned char *pageable;
    cm_host_buffer_t *pinned_buf;
    void *pinned;
    size_t n;
} ctx_t;

/* One timed copy; returns seconds, or a negative value on failure (detail recorded). */
static double copy_once(const ctx_t *c, enum way w, int to_device) {
    double t0 = now_s();
    cm_status_t s = CM_OK;
    switch (w) {
    case RAW_PAGEABLE:
        s = cm_record_cuda_error(to_device ? cudaMemcpy(c->dev_ptr, c->pageable, c->n,
                                                        cudaMemcpyHostToDevice)
                                           : cudaMemcpy(c->pageable, c->dev_ptr, c->n,
                                                        cudaMemcpyDeviceToHost),
                                 "cudaMemcpy (pageable)", __FILE__, __LINE__);
        break;
    case STAGED_PAGEABLE: /* a NULL stream: synchronous, like cudaMemcpy */
        s = to_device ? cm_buffer_copy_from_host(NULL, c->dev_buf, 0, c->pageable, c->n)
                      : cm_buffer_copy_to_host(NULL, c->dev_buf, 0, c->pageable, c->n);
        break;
    case RAW_PINNED:
        s = cm_record_cuda_error(to_device ? cudaMemcpy(c->dev_ptr, c->pinned, c->n,
                                                        cudaMemcpyHostToDevice)
                                           : cudaMemcpy(c->pinned, c->dev_ptr, c->n,
                                                        cudaMemcpyDeviceToHost),
                                 "cudaMemcpy (pinned)", __FILE__, __LINE__);
        break;
    case LIB_PINNED: /* a NULL stream: synchronous, like cudaMemcpy */
        s = to_device ? cm_buffer_copy_from_host_buffer(NULL, c->dev_buf, 0, c->pinned_buf, 0,
                                                        c->n)
                      : cm_buffer_copy_to_host_buffer(NULL, c->dev_buf, 0, c->pinned_buf, 0,
                                                      c->n);
        break;
    case WAYS: break;
    }
    double t = now_s() - t0;
    return s == CM_OK ? t : -1.0;
}

int main(int argc, char **argv) {
    size_t mib = 256;
    if (argc > 1) {
        char *end = NULL;
        unsigned long v = strtoul(argv[1], &end, 10);
        if (end == argv[1] || *end != '\0' || v == 0 || v > 65536) {
            fprintf(stderr, "usage: %s [MiB]   (1 .. 65536, default 256)\n", argv[0]);
            return 2;
        }
        mib = v;
    }
    ctx_t c;
    memset(&c, 0, sizeof c);
    c.n = mib << 20;

    cm_device_t *dev = NULL;
    if (cm_device_open(0, &dev) != CM_OK) return report_failure("opening device 0");
    int rc = 1;
    c.pageable = malloc(c.n);
    if (c.pageable == NULL) {
        fprintf(stderr, "pinned_vs_pageable: cannot allocate %zu bytes of host memory\n", c.n);
        goto done;
    }
    memset(c.pageable, 1, c.n); /* touch every page: measure copies, not page faults */
    if (cm_buffer_create(dev, c.n, &c.dev_buf) != CM_OK ||
        cm_buffer_device_ptr(c.dev_buf, &c.dev_ptr) != CM_OK ||
        cm_host_buffer_create(dev, c.n, CM_HOST_BUFFER_DEFAULT, &c.pinned_buf) != CM_OK ||
        cm_host_buffer_data(c.pinned_buf, &c.pinned) != CM_OK) {
        rc = report_failure("allocating the buffers");
        goto done;
    }
    memset(c.pinned, 1, c.n);

    cm_device_limits_t lim;
    cm_staging_config_t st;
    if (cm_device_get_limits(0, &lim) != CM_OK || cm_device_staging_config(dev, &st) != CM_OK) {
        rc = report_failure("reading the device");
        goto done;
    }
    printf("%s, %zu MiB per copy, median of %d; staging: %zu KiB chunks, %u buffers, %u host "
           "threads\n\n", lim.name, mib, REPS, st.chunk_bytes >> 10, st.buffers, st.host_threads);
    printf("%-32s %12s %12s\n", "", "H2D GB/s", "D2H GB/s");

    double gbps[WAYS][2];
    for (int w = 0; w < WAYS; ++w) {
        for (int dir = 0; dir < 2; ++dir) {
            double t[REPS];
            if (copy_once(&c, (enum way)w, dir == 0) < 0) { /* warm-up */
                rc = report_failure(way_name[w]);
                goto done;
            }
            for (int r = 0; r < REPS; ++r) {
                t[r] = copy_once(&c, (enum way)w, dir == 0);
                if (t[r] < 0) {
                    rc = report_failure(way_name[w]);
                    goto done;
                }
            }
            qsort(t, REPS, sizeof t[0], cmp_double);
            gbps[w][dir] = (double)c.n / t[REPS / 2] / 1e9;
        }
        printf("%-32s %12.1f %12.1f\n", way_name[w], gbps[w][0], gbps[w][1]);
    }

    /* what one host thread can copy, pageable to pageable: the ceiling of single-thread staging */
    unsigned char *other = malloc(c.n);
    if (other != NULL) {
        memset(other, 2, c.n);
        double t[REPS];
        for (int r = 0; r < REPS; ++r) {
            double t0 = now_s();
            memcpy(other, c.pageable, c.n);
            t[r] = now_s() - t0;
        }
        qsort(t, REPS, sizeof t[0], cmp_double);
        printf("%-32s %12.1f\n", "host memcpy, 1 thread", (double)c.n / t[REPS / 2] / 1e9);
        free(other);
    }
    printf("\nstaged / raw pageable: H2D %.2fx, D2H %.2fx;  library pinned / raw pinned: H2D "
           "%.2fx, D2H %.2fx\n",
           gbps[STAGED_PAGEABLE][0] / gbps[RAW_PAGEABLE][0],
           gbps[STAGED_PAGEABLE][1] / gbps[RAW_PAGEABLE][1],
           gbps[LIB_PINNED][0] / gbps[RAW_PINNED][0], gbps[LIB_PINNED][1] / gbps[RAW_PINNED][1]);
    rc = 0;

done:
    if (cm_buffer_destroy(c.dev_buf) != CM_OK || cm_host_buffer_destroy(c.pinned_buf) != CM_OK ||
        cm_device_close(dev) != CM_OK)
        rc = report_failure("releasing");
    free(c.pageable);
    return rc;
}
