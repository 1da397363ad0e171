/* The benchmark harness (bench_common.h). */
#define _POSIX_C_SOURCE 200809L

#include "bench_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cudamodel/device.h>
#include <cudamodel/status.h>

#define CM_BENCH_MAX_REPS 10000

static int cuda_check(cudaError_t e, const char *what) {
    if (e == cudaSuccess) return 0;
    fprintf(stderr, "bench: %s: %s (%s)\n", what, cudaGetErrorName(e), cudaGetErrorString(e));
    return -1;
}

int cm_bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int cm_bench_time(cm_bench_fn_t fn, void *ctx, cudaStream_t stream, int warmup, int reps,
                  cm_bench_stats_t *out) {
    if (fn == NULL || out == NULL || reps < 1 || reps > CM_BENCH_MAX_REPS || warmup < 0) {
        fprintf(stderr, "bench: cm_bench_time: bad arguments\n");
        return -1;
    }
    int rc = -1;
    double *ms = malloc((size_t)reps * sizeof *ms);
    cudaEvent_t start = NULL, stop = NULL;
    if (ms == NULL) {
        fprintf(stderr, "bench: out of host memory\n");
        return -1;
    }
    if (cuda_check(cudaEventCreate(&start), "cudaEventCreate") ||
        cuda_check(cudaEventCreate(&stop), "cudaEventCreate"))
        goto done;
    for (int i = 0; i < warmup; ++i) {
        if (fn(ctx) != 0) goto done;
    }
    if (cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize after warm-up")) goto done;
    for (int i = 0; i < reps; ++i) {
        if (cuda_check(cudaEventRecord(start, stream), "cudaEventRecord")) goto done;
        if (fn(ctx) != 0) goto done;
        if (cuda_check(cudaEventRecord(stop, stream), "cudaEventRecord") ||
            cuda_check(cudaEventSynchronize(stop), "cudaEventSynchronize"))
            goto done;
        float t = 0.0f;
        if (cuda_check(cudaEventElapsedTime(&t, start, stop), "cudaEventElapsedTime")) goto done;
        ms[i] = (double)t;
    }
    qsort(ms, (size_t)reps, sizeof *ms, cm_bench_cmp_double);
    out->min_ms = ms[0];
    out->max_ms = ms[reps - 1];
    out->median_ms = reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]);
    out->reps = reps;
    rc = 0;
done:
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    free(ms);
    return rc;
}

double cm_bench_ratio_time(double ours, double peer) {
    return ours > 0.0 ? peer / ours : NAN;
}

double cm_bench_ratio_rate(double ours, double peer) {
    return peer > 0.0 ? ours / peer : NAN;
}

char *cm_bench_date(char *buf, size_t size) {
    time_t now = time(NULL);
    struct tm tm;
    if (size == 0) return buf;
    if (gmtime_r(&now, &tm) == NULL || strftime(buf, size, "%Y-%m-%d", &tm) == 0) buf[0] = '\0';
    return buf;
}

void cm_bench_print_header(void) {
    printf("%-28s %12s %12s %8s  %-24s %s\n", "case", "ours", "peer", "ratio", "goal", "meets");
}

/* JSON string: quotes, backslashes and control characters escaped */
static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; ++p) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

/* JSON number (null for NaN or infinity) */
static void json_number(FILE *f, double v) {
    if (isfinite(v)) fprintf(f, "%.6g", v);
    else fputs("null", f);
}

int cm_bench_report(const cm_bench_row_t *row) {
    char ours[32], peer[32];
    snprintf(ours, sizeof ours, "%.4g %s", row->ours, row->unit);
    snprintf(peer, sizeof peer, "%.4g %s", row->peer, row->unit);
    printf("%-28s %12s %12s %8.3f  %-24s %s\n", row->case_name, ours, peer, row->ratio, row->goal,
           row->meets ? "yes" : "NO");
    fflush(stdout);

    const char *path = getenv("CM_BENCH_RESULTS");
    if (path == NULL || *path == '\0') return 0;
    FILE *f = fopen(path, "a");
    if (f == NULL) {
        perror(path);
        return -1;
    }
    const char *commit = getenv("CM_BENCH_COMMIT");
    if (commit == NULL || *commit == '\0') commit = "unknown";
    char date[16];
    cm_bench_date(date, sizeof date);
    fputs("{\"bench\":", f);
    json_string(f, row->bench);
    fputs(",\"case\":", f);
    json_string(f, row->case_name);
    fputs(",\"unit\":", f);
    json_string(f, row->unit);
    fputs(",\"ours\":", f);
    json_number(f, row->ours);
    fputs(",\"peer\":", f);
    json_number(f, row->peer);
    fputs(",\"peer_name\":", f);
    json_string(f, row->peer_name);
    fputs(",\"ratio\":", f);
    json_number(f, row->ratio);
    fputs(",\"goal\":", f);
    json_string(f, row->goal);
    fprintf(f, ",\"meets\":%s,\"commit\":", row->meets ? "true" : "false");
    json_string(f, commit);
    fputs(",\"date\":", f);
    json_string(f, date);
    fputs("}\n", f);
    if (fclose(f) != 0) {
        perror(path);
        return -1;
    }
    return 0;
}

bool cm_bench_have_gpu(const char *prog) {
    int count = 0;
    if (cm_device_count(&count) == CM_OK && count > 0) return true;
    char report[2048];
    cm_error_format(NULL, report, sizeof report);
    fprintf(stderr, "%s needs a GPU:\n%s\n", prog, report);
    return false;
}

double cm_bench_now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e6 * (double)t.tv_sec + 1e-3 * (double)t.tv_nsec;
}
