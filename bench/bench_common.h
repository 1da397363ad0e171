/*
 * A small harness for the benchmarks: time a callable with CUDA events, report one row per
 * case against a peer measured in the same run, and append the row as one JSON object per
 * line to the file named by CM_BENCH_RESULTS (only printed when it is unset).
 *
 * Timing: warm-up calls first (module load, caches, handle creation stay out of the numbers),
 * then `reps` calls, each between two events recorded on `stream`; the result is the minimum,
 * median and maximum of the per-call times in milliseconds. The callable must enqueue its
 * work on `stream` (or on the legacy default stream when stream is 0).
 *
 * JSON fields, exactly: {"bench","case","unit","ours","peer","peer_name","ratio","goal",
 * "meets","commit","date"}; commit comes from CM_BENCH_COMMIT ("unknown" when unset) and date
 * is today's UTC date, YYYY-MM-DD. (bench_gemm appends fields of its own after these in some
 * rows: the 3xTF32 rows' errors, and "kernel", the tag of what cm_gemm ran from
 * cm_gemm_explain, which scripts/results_compare.py shows and filters by.)
 */
#ifndef CM_BENCH_COMMON_H
#define CM_BENCH_COMMON_H

#include <stdbool.h>
#include <stdio.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The work to time: returns 0 on success, non-zero on an error (the harness stops). */
typedef int (*cm_bench_fn_t)(void *ctx);

/** Per-call times of a callable, milliseconds. */
typedef struct cm_bench_stats {
    double min_ms;
    double median_ms;
    double max_ms;
    int reps;
} cm_bench_stats_t;

/**
 * Time fn(ctx) with CUDA events on stream: `warmup` untimed calls, then `reps` timed ones
 * (1 <= reps <= 10000). Returns 0; -1 when fn failed or a CUDA call failed (printed to stderr).
 */
int cm_bench_time(cm_bench_fn_t fn, void *ctx, cudaStream_t stream, int warmup, int reps,
                  cm_bench_stats_t *out);

/** One row of results. */
typedef struct cm_bench_row {
    const char *bench;      /**< the benchmark, e.g. "launch" */
    const char *case_name;  /**< the case, e.g. "empty_kernel_launch" */
    const char *unit;       /**< "us", "GB/s", ... */
    double ours;            /**< our figure */
    double peer;            /**< the peer's figure in the same run */
    const char *peer_name;  /**< e.g. "cudaLaunchKernel" */
    double ratio;           /**< peer/ours for times, ours/peer for rates: higher is better */
    const char *goal;       /**< the goal in words, e.g. "<= raw + 0.3 us" */
    bool meets;             /**< whether ours meets the goal */
} cm_bench_row_t;

/** Ratio where higher is better: peer / ours for a time (lower is better). */
/** Host monotonic clock in microseconds (for host-side costs: allocation, pools, API calls). */
double cm_bench_now_us(void);

/** qsort comparator for doubles, ascending. */
int cm_bench_cmp_double(const void *a, const void *b);

double cm_bench_ratio_time(double ours, double peer);
/** Ratio where higher is better: ours / peer for a rate (higher is better). */
double cm_bench_ratio_rate(double ours, double peer);

/** Print the table header (case, ours, peer, ratio, goal, meets) to stdout. */
void cm_bench_print_header(void);

/**
 * Print one table row to stdout and, when CM_BENCH_RESULTS names a file, append the row to it
 * as one JSON line. Returns 0; -1 when the file could not be written (printed to stderr).
 */
int cm_bench_report(const cm_bench_row_t *row);

/** Today's UTC date as YYYY-MM-DD into buf (at least 11 bytes). Returns buf. */
char *cm_bench_date(char *buf, size_t size);

/**
 * Whether a GPU is usable: true, or false after printing the library's report of why not
 * (cm_device_count) to stderr, prefixed by prog.
 */
bool cm_bench_have_gpu(const char *prog);

#ifdef __cplusplus
}
#endif

#endif /* CM_BENCH_COMMON_H */
