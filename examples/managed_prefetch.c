/*
 * managed_prefetch: managed (unified) memory with and without prefetch and advice.
 *
 * Two managed buffers x and y (32 MiB each, at most 1/16 of the device's free memory each:
 * managed memory past the free memory can hang a GPU) hold floats the host writes; a kernel
 * computes y = 2 x + y; the host reads y back and checks every element. End to end (host
 * clock, from the host's last write to the host's check of the result), median of 5 runs:
 *
 *   on demand   nothing said: the kernel's first touches fault and migrate pages to the
 *               device, the host's reads fault them back
 *   prefetched  x advised CM_ADVISE_READ_MOSTLY (the device keeps a read-only copy), y
 *               prefetched to the device before the kernel and to the host after it, all on
 *               one stream (cm_managed_prefetch), so neither side takes a page fault
 *
 * Where the device has no concurrent managed access (WSL2, Windows, GPUs before Pascal)
 * prefetch and device advice are refused with CM_ERROR_NOT_SUPPORTED; the program prints the
 * library's explanation and runs the on-demand version only. Also shown: a copy past the
 * buffer's end refused (cm_managed_copy_from_host checks the range like the buffer copies).
 *
 * Usage: managed_prefetch
 * Exit status: 0 when every result is right; 1 on a wrong result, an error or without a usable
 * GPU (the library's report is printed).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cudamodel/cudamodel.h>

/* from kernels/managed_prefetch_kernels.cu */
const void *managed_prefetch_axpy_kernel(void);

#define REPS 5
#define MiB ((size_t)1 << 20)

static int report(const char *what) {
    char text[2048];
    cm_error_format(NULL, text, sizeof text);
    fprintf(stderr, "managed_prefetch: %s failed:\n%s\n", what, text);
    return 1;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct job {
    cm_managed_t *mx, *my;
    float *x, *y;
    size_t bytes;
    unsigned long long n;
    unsigned blocks;
    cm_stream_t *s;
} job_t;

/* One end-to-end run; *ms its time, *wrong the elements that differ from 2 x + y. */
static cm_status_t run_once(job_t *j, bool prefetch, double *ms, unsigned long long *wrong) {
    for (unsigned long long i = 0; i < j->n; ++i) {
        j->x[i] = (float)(i & 255u);
        j->y[i] = (float)((i >> 8) & 255u);
    }
    double t0 = now_ms();
    if (prefetch) {
        CM_TRY(cm_managed_prefetch(j->s, j->mx, 0, j->bytes, 0));
        CM_TRY(cm_managed_prefetch(j->s, j->my, 0, j->bytes, 0));
    }
    float a = 2.0f;
    void *args[] = {&j->y, &j->x, &j->n, &a};
    cm_launch_config_t cfg = CM_LAUNCH_CONFIG_INIT;
    cfg.grid.x = j->blocks;
    cfg.block.x = 256;
    CM_TRY(cm_launch(j->s, managed_prefetch_axpy_kernel(), &cfg, args));
    if (prefetch) CM_TRY(cm_managed_prefetch(j->s, j->my, 0, j->bytes, CM_LOCATION_HOST));
    CM_TRY(cm_stream_synchronize(j->s));
    unsigned long long bad = 0;
    for (unsigned long long i = 0; i < j->n; ++i)
        if (j->y[i] != 2.0f * (float)(i & 255u) + (float)((i >> 8) & 255u)) ++bad;
    *ms = now_ms() - t0;
    *wrong = bad;
    return CM_OK;
}

/* The median of REPS runs after a warm-up run; *wrong adds up the wrong elements of all. */
static cm_status_t run_median(job_t *j, bool prefetch, double *ms, unsigned long long *wrong) {
    double t[REPS], warm = 0;
    unsigned long long bad = 0, w = 0;
    CM_TRY(run_once(j, prefetch, &warm, &w));
    bad += w;
    for (int r = 0; r < REPS; ++r) {
        CM_TRY(run_once(j, prefetch, &t[r], &w));
        bad += w;
    }
    qsort(t, REPS, sizeof t[0], cmp_double);
    *ms = t[REPS / 2];
    *wrong = bad;
    return CM_OK;
}

int main(void) {
    cm_device_t *dev = NULL;
    if (cm_device_open(0, &dev) != CM_OK) return report("opening device 0");
    int rc = 1;
    job_t j;
    memset(&j, 0, sizeof j);
    cm_device_limits_t lim;
    size_t free_b = 0, total_b = 0;
    if (cm_device_get_limits(0, &lim) != CM_OK || cm_device_memory_info(0, &free_b, &total_b) != CM_OK ||
        cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &j.s) != CM_OK) {
        report("setting up");
        goto done;
    }
    j.bytes = 32 * MiB;
    while (j.bytes > MiB && j.bytes > free_b / 16) j.bytes /= 2;
    j.n = j.bytes / sizeof(float);
    j.blocks = (unsigned)lim.multiprocessor_count * 8u;
    void *px = NULL, *py = NULL;
    cm_managed_info_t mi;
    if (cm_managed_create_at(dev, j.bytes, &j.mx, "x", __FILE__, __LINE__) != CM_OK ||
        cm_managed_create_at(dev, j.bytes, &j.my, "y", __FILE__, __LINE__) != CM_OK ||
        cm_managed_data(j.mx, &px) != CM_OK || cm_managed_data(j.my, &py) != CM_OK ||
        cm_managed_info(j.mx, &mi) != CM_OK) {
        report("creating the managed buffers");
        goto done;
    }
    j.x = px;
    j.y = py;
    printf("%s: two managed buffers of %zu MiB (%zu MiB free on the device); concurrent managed "
           "access: %s\n", lim.name, j.bytes >> 20, free_b >> 20, mi.concurrent_access ? "yes" : "no");

    /* the copies are checked like the buffer copies: one element past the end is refused */
    float four[4] = {1, 2, 3, 4};
    cm_status_t st = cm_managed_copy_from_host(NULL, j.mx, j.bytes - 3 * sizeof(float), four,
                                               sizeof four);
    printf("a 16-byte copy 12 bytes before the end: %s\n  %s\n", cm_status_name(st),
           cm_last_error()->message);
    if (st != CM_ERROR_INVALID_ARGUMENT) {
        fprintf(stderr, "managed_prefetch: the copy past the end was not refused\n");
        goto done;
    }

    double on_demand = 0, prefetched = 0;
    unsigned long long wrong = 0, w2 = 0;
    if (run_median(&j, false, &on_demand, &wrong) != CM_OK) {
        report("the on-demand runs");
        goto done;
    }
    printf("on demand (page faults):         %8.2f ms end to end, %llu wrong element(s)\n",
           on_demand, wrong);

    /* x is only read on the device: a read-only copy there, the host's stays valid */
    st = cm_managed_advise(j.mx, 0, j.bytes, CM_ADVISE_READ_MOSTLY, 0);
    if (st == CM_OK) st = cm_managed_prefetch(NULL, j.my, 0, j.bytes, CM_LOCATION_HOST);
    if (st == CM_ERROR_NOT_SUPPORTED) {
        printf("prefetch and advice are not possible on this device: %s\n  %s\n  hint: %s\n",
               cm_status_name(st), cm_last_error()->message, cm_last_error()->hint);
    } else if (st != CM_OK) {
        report("cm_managed_advise");
        goto done;
    } else {
        if (run_median(&j, true, &prefetched, &w2) != CM_OK) {
            report("the prefetched runs");
            goto done;
        }
        wrong += w2;
        printf("prefetched + read-mostly advice: %8.2f ms end to end, %llu wrong element(s): "
               "%.2fx the on-demand time\n", prefetched, w2, on_demand / prefetched);
        if (cm_managed_advise(j.mx, 0, j.bytes, CM_ADVISE_UNSET_READ_MOSTLY, 0) != CM_OK) {
            report("cm_managed_advise (unset)");
            goto done;
        }
    }
    if (wrong > 0) {
        fprintf(stderr, "managed_prefetch: %llu element(s) wrong\n", wrong);
        goto done;
    }
    printf("every element of every run checked\n");
    rc = 0;
done:
    if (cm_managed_destroy(j.mx) != CM_OK || cm_managed_destroy(j.my) != CM_OK ||
        cm_stream_release(j.s) != CM_OK || cm_device_close(dev) != CM_OK)
        rc = report("releasing");
    return rc;
}
