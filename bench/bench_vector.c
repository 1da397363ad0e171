/*
 * bench_vector: kernels.h against its peers, measured in the same run (float32).
 *
 *   bench "vector":
 *     add_{2^28, 2^20, 2^28-3_off1}   cm_vector_add_f32 bandwidth (3 x 4 bytes per element: two
 *     axpy_{...}                       reads, one write) vs a device-to-device cudaMemcpyAsync
 *                                      (2 x 4 bytes per element): goal >= 0.98x at 2^28, >= 0.9x
 *                                      at 2^20 and at 2^28 - 3 with pointers at element 1
 *   bench "reduce":
 *     sum / max / argmax_2^28          cm_reduce_*_f32 (device result) read bandwidth vs
 *                                      cub::DeviceReduce::Sum / Max / ArgMax: goal >= 1.0x
 *     sum_latency_{2^10, 2^16, 2^20}   time per call of 20 calls back to back vs CUB's Sum: goal
 *                                      <= 0.8x its time (sum_latency_single_call_*: one call
 *                                      timed alone, printed with no goal; see main())
 *     dot_2^28                         cm_reduce_dot_f32 read bandwidth (8 bytes per element) vs
 *                                      CUB Sum's (4 bytes per element): goal >= 0.98x
 *   size sweep, n = 2^10, 2^12, ..., 2^28 floats at element offset 0 (scripts/plot_bench.py
 *   plots these rows: bandwidth against size):
 *     add_f32_sweep_2^k   (bench "vector")  cm_vector_add_f32 GB/s (12 bytes per element) vs a
 *                                      device-to-device cudaMemcpyAsync of one array (8 bytes per
 *                                      element): goal >= 0.98x at 2^28, >= 0.90x from 2^20 up
 *     sum_f32_sweep_2^k   (bench "reduce")  cm_reduce_sum_f32 (device result) read GB/s vs
 *                                      cub::DeviceReduce::Sum: goal >= 1.0x from 2^20 up
 *   Below 2^20 the sweep rows are information only: goal "info: no goal below 2^20", meets true
 *   (the small-size goal is sum latency, judged by sum_latency_*). The sweep keeps its
 *   data out of L2: every call works on its own set of the operands (set s at element
 *   s * (n + 64)), with as many sets as make 128 MiB of each operand (over twice the H200's
 *   60 MiB L2; one set from 2^25 up), so a set is revisited only after >= 128 MiB of each operand
 *   went by, and at 2^18 and below not at all within the 55 calls; the peer gets the same sets.
 *   So at small sizes it measures cold calls (launch + HBM latency), unlike sum_latency_* (16
 *   sets, L2-resident at 2^10 and 2^16). Checked after timing: add's output was poisoned (0xFF bytes) before the timed
 *   calls and every element of every set used is compared with a + b on the device, the poison
 *   between the sets included; the sum's result slots are poisoned before the timed calls and
 *   ours (kernels.h's bound) and CUB's (1e-5 of sum|x|) are compared with a float64 CPU sum of
 *   the set the last call read.
 *
 * Inputs are random, drawn on the device with a fresh seed for every case; sizes whose inputs
 * fit in L2 rotate among 16 input sets (64 MiB and more in all) so that repeated calls do not
 * measure the cache. Every case's result is checked against the peer's once (sum within 1e-5
 * of sum|x|, max and argmax equal). CUDA-event timing, median of REPS, on one stream acquired
 * from the device's pool: the library's calls are given it, the peers (memcpy, CUB, the empty
 * kernel) and the events its CUDA stream (a NULL stream would make every library call
 * synchronous, which is not what the rows measure). Offsets are passed to kernels.h in bytes.
 * Runtime: estimated at well under 60 s on an H200 (the sweep adds about 1 s of GPU work and
 * about 2 s of float64 reference sums on the CPU); not yet measured.
 * Usage: bench_vector   (needs a GPU with 4 GiB free; CM_BENCH_RESULTS / CM_BENCH_COMMIT as in
 * bench_common.h)
 *
 * Predictions before the first H200 run (../shared/anchors/h200.md: D2D memcpy 4154 GB/s, CUB
 * sum 4405 GB/s read-only): add / axpy at 2^28 move 3.22 GB, about 0.78 ms at memcpy's rate;
 * at 2^20 (12.6 MB, from L2-rotated sets) launch cost is a visible share, so 0.9x is the risk;
 * sum / max / argmax at 2^28 read 1.07 GB, about 0.24 ms at CUB's rate (argmax does the most
 * arithmetic per element: 64-bit index compares, still far under the issue rate); dot reads
 * 2.15 GB, about 0.49 ms. Sum latency: one launch plus a 4-byte memset when the grid has more
 * than one block (from 2^12 floats up); at 2^10 one block and no memset. If 2^16 / 2^20 miss
 * the 0.8x goal, the memset is the first suspect (a per-stream zeroed counter would remove it).
 * Sweep (predicted before its first run): up to about 2^16 both sides are per-call cost bound
 * (a few us: GB/s grows about 4x per step of 2^2 and the ratio is the ratio of call costs, the
 * sum paying a memset from 2^12 up); from 2^24 up both approach their 2^28 figures.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/interop.h>
#include <cudamodel/kernels.h>
#include <cudamodel/stream.h>

#include "bench_common.h"

/* bench_vector_kernels.cu */
cudaError_t bench_empty_launch(cudaStream_t s);
cudaError_t bench_random_fill(float *p, size_t n, uint32_t seed, cudaStream_t s);
cudaError_t bench_cub_reduce(int op, void *d_temp, size_t *temp_bytes, const float *in, void *out,
                             size_t n, cudaStream_t s);
cudaError_t bench_check_add(const float *a, const float *b, const float *out, size_t off, size_t n,
                            size_t stride, size_t sets, size_t range, unsigned long long *d_bad,
                            cudaStream_t s);

#define BIG ((size_t)1 << 28)
#define ELEMS (BIG + 64) /* each operand buffer */
#define REPS 50
#define WARMUP 5
#define LAT_BATCH 20 /* calls per timed batch of the latency rows */
#define SETS_BYTES ((size_t)64 << 20)
#define SWEEP_ROT_BYTES ((size_t)128 << 20) /* of each operand, between two calls on one set */
#define SWEEP_MIN_LOG2 10
#define SWEEP_MAX_LOG2 28
#define SWEEP_COUNT ((SWEEP_MAX_LOG2 - SWEEP_MIN_LOG2) / 2 + 1)
#define SWEEP_GOAL_LOG2 20 /* goals from 2^20 up; information only below */

enum {
    K_EMPTY, K_ADD, K_AXPY, K_MEMCPY, K_SUM, K_MAX, K_ARGMAX, K_DOT, K_CUB_SUM, K_CUB_MAX, K_CUB_ARGMAX
};

typedef struct ctx {
    cm_device_t *dev;
    cm_stream_t *stream; /* the timing stream: the library's calls are queued on it */
    cudaStream_t cs;     /* its CUDA stream: the peers' calls and the events */
    cm_buffer_t *a, *b, *out, *res;
    float *pa, *pb, *pout;
    unsigned char *pres;
    void *temp;
    size_t temp_bytes;
    int which;
    size_t n, off, sets, set, stride;
    int batch; /* > 0: run() issues the case this many times back to back */
} ctx_t;

static int fail_report(const char *what) {
    char report[2048];
    cm_error_format(NULL, report, sizeof report);
    fprintf(stderr, "bench_vector: %s failed:\n%s\n", what, report);
    return -1;
}

static int run_one(ctx_t *c);

static int run(void *p) {
    ctx_t *c = p;
    int times = c->batch > 0 ? c->batch : 1;
    for (int i = 0; i < times; ++i)
        if (run_one(c) != 0) return -1;
    return 0;
}

static int run_one(ctx_t *c) {
    const size_t o = c->off + c->set * c->stride; /* in elements (raw pointers) */
    const size_t ob = o * sizeof(float);          /* in bytes (kernels.h) */
    c->set = (c->set + 1) % c->sets;
    cm_status_t st = CM_OK;
    cudaError_t err = cudaSuccess;
    size_t tb = c->temp_bytes;
    switch (c->which) {
    case K_EMPTY: err = bench_empty_launch(c->cs); break;
    case K_ADD: st = cm_vector_add_f32(c->stream, c->out, ob, c->a, ob, c->b, ob, c->n); break;
    case K_AXPY: st = cm_vector_axpy_f32(c->stream, 1.5f, c->a, ob, c->out, ob, c->n); break;
    case K_MEMCPY:
        err = cudaMemcpyAsync(c->pout + o, c->pa + o, c->n * 4, cudaMemcpyDeviceToDevice, c->cs);
        break;
    case K_SUM: st = cm_reduce_sum_f32(c->stream, c->a, ob, c->n, c->res, 0); break;
    case K_MAX: st = cm_reduce_max_f32(c->stream, c->a, ob, c->n, c->res, 0); break;
    case K_ARGMAX: st = cm_reduce_argmax_f32(c->stream, c->a, ob, c->n, c->res, 0); break;
    case K_DOT: st = cm_reduce_dot_f32(c->stream, c->a, ob, c->b, ob, c->n, c->res, 0); break;
    case K_CUB_SUM:
        err = bench_cub_reduce(0, c->temp, &tb, c->pa + o, c->pres + 32, c->n, c->cs);
        break;
    case K_CUB_MAX:
        err = bench_cub_reduce(1, c->temp, &tb, c->pa + o, c->pres + 32, c->n, c->cs);
        break;
    case K_CUB_ARGMAX:
        err = bench_cub_reduce(2, c->temp, &tb, c->pa + o, c->pres + 32, c->n, c->cs);
        break;
    default: return -1;
    }
    if (st != CM_OK) return fail_report("kernels.h call");
    if (err != cudaSuccess) {
        fprintf(stderr, "bench_vector: %s\n", cudaGetErrorString(err));
        return -1;
    }
    return 0;
}

/* Fresh random inputs over the whole buffers (a and b). */
static int refresh(ctx_t *c, uint32_t seed) {
    if (bench_random_fill(c->pa, ELEMS, seed * 2u + 1u, 0) != cudaSuccess ||
        bench_random_fill(c->pb, ELEMS, seed * 2u + 2u, 0) != cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess)
        return -1;
    return 0;
}

/* median time in seconds of case `which` over n elements at element offset off, call i working
 * on set i mod sets (set s at element off + s * (n + 64) of each operand) */
static double time_sets(ctx_t *c, int which, size_t n, size_t off, size_t sets) {
    c->which = which;
    c->n = n;
    c->off = off;
    c->set = 0;
    c->stride = n + 64;
    c->sets = sets;
    cm_bench_stats_t s;
    if (cm_bench_time(run, c, c->cs, WARMUP, REPS, &s) != 0) return -1;
    return s.median_ms * 1e-3;
}

/* the fixed cases: 16 sets below 64 MiB per operand, one above */
static double time_case(ctx_t *c, int which, size_t n, size_t off) {
    size_t sets = 1;
    if (n * 4 < SETS_BYTES) {
        sets = 16;
        if (sets * (n + 64) > BIG) sets = BIG / (n + 64);
    }
    return time_sets(c, which, n, off, sets);
}

/* the sweep: enough sets for SWEEP_ROT_BYTES of each operand, within the buffers */
static size_t sweep_sets(size_t n) {
    size_t sets = (SWEEP_ROT_BYTES + n * 4 - 1) / (n * 4);
    if (sets > 1 && sets * (n + 64) > BIG) sets = BIG / (n + 64);
    return sets < 1 ? 1 : sets;
}

static void row(const char *bench, const char *name, const char *unit, double ours, double peer,
                const char *peer_name, int rate, const char *goal, double min_ratio) {
    cm_bench_row_t r;
    memset(&r, 0, sizeof r);
    r.bench = bench;
    r.case_name = name;
    r.unit = unit;
    r.ours = ours;
    r.peer = peer;
    r.peer_name = peer_name;
    r.ratio = rate ? cm_bench_ratio_rate(ours, peer) : cm_bench_ratio_time(ours, peer);
    r.goal = goal;
    r.meets = r.ratio >= min_ratio;
    cm_bench_report(&r);
}

/* one check of ours against CUB on the current data: sum close, max and argmax equal */
static int check_reductions(ctx_t *c, size_t n) {
    float s_ours = 0, s_cub = 0, m_ours = 0, m_cub = 0;
    uint64_t i_ours = 0;
    int64_t i_cub = -1;
    size_t tb = c->temp_bytes;
    if (cm_reduce_sum_f32_to_host(NULL, c->a, 0, n, &s_ours) != CM_OK ||
        cm_reduce_argmax_f32_to_host(NULL, c->a, 0, n, &i_ours, &m_ours) != CM_OK)
        return fail_report("check");
    if (bench_cub_reduce(0, c->temp, &tb, c->pa, c->pres + 32, n, 0) != cudaSuccess ||
        cudaMemcpy(&s_cub, c->pres + 32, 4, cudaMemcpyDeviceToHost) != cudaSuccess ||
        bench_cub_reduce(2, c->temp, &tb, c->pa, c->pres + 32, n, 0) != cudaSuccess ||
        cudaMemcpy(&m_cub, c->pres + 32, 4, cudaMemcpyDeviceToHost) != cudaSuccess ||
        cudaMemcpy(&i_cub, c->pres + 40, 8, cudaMemcpyDeviceToHost) != cudaSuccess)
        return -1;
    printf("check n=%zu: sum ours %.9g cub %.9g; argmax ours %llu (%.9g) cub %lld (%.9g)\n", n,
           s_ours, s_cub, (unsigned long long)i_ours, m_ours, (long long)i_cub, m_cub);
    /* CUB sums in float: allow 1e-6 of sum|x| (about n / 2 for uniform [-1, 1)) */
    if (fabs((double)s_ours - s_cub) > 1e-6 * 0.5 * (double)n + 1e-5 * fabs(s_cub) || m_ours != m_cub ||
        (int64_t)i_ours != i_cub) {
        fprintf(stderr, "bench_vector: results differ from CUB's\n");
        return -1;
    }
    return 0;
}

/* One size of the sweep: add vs memcpy and sum vs CUB on rotated sets, each checked (see the
 * header). GB/s out: add (12 bytes per element), memcpy (8), sum and CUB (4). */
static int sweep_case(ctx_t *c, size_t n, double *add, double *cpy, double *sum, double *cub) {
    const size_t sets = sweep_sets(n), stride = n + 64;
    const size_t used = sets < (size_t)(WARMUP + REPS) ? sets : (size_t)(WARMUP + REPS);
    const size_t last = (size_t)(WARMUP + REPS - 1) % sets;
    size_t range = (used - 1) * stride + n + 64; /* the sets used and the gap after the last */
    if (range > ELEMS) range = ELEMS;
    const double dn = (double)n;

    /* the poisons go on the timing stream, ahead of the timed calls (it does not synchronise
     * with the legacy default stream); the checks after a timing run on the legacy stream, the
     * timed work being complete (cm_bench_time waits for its last event) */
    double tm = time_sets(c, K_MEMCPY, n, 0, sets);
    if (tm < 0 || cudaMemsetAsync(c->pout, 0xFF, range * 4, c->cs) != cudaSuccess) return -1;
    double ta = time_sets(c, K_ADD, n, 0, sets);
    unsigned long long bad = ~0ull, *d_bad = (unsigned long long *)(c->pres + 48);
    if (ta < 0 || cudaMemset(d_bad, 0, 8) != cudaSuccess ||
        bench_check_add(c->pa, c->pb, c->pout, 0, n, stride, used, range, d_bad, 0) != cudaSuccess ||
        cudaMemcpy(&bad, d_bad, 8, cudaMemcpyDeviceToHost) != cudaSuccess)
        return -1;
    if (bad != 0) {
        fprintf(stderr, "bench_vector: sweep n=%zu: add wrote %llu wrong elements (of %zu sets "
                "and the poison between them)\n", n, bad, used);
        return -1;
    }

    if (cudaMemsetAsync(c->pres, 0xFF, 48, c->cs) != cudaSuccess) return -1;
    double ts = time_sets(c, K_SUM, n, 0, sets);
    double tc = time_sets(c, K_CUB_SUM, n, 0, sets);
    float got[2] = {0.0f, 0.0f};
    if (ts < 0 || tc < 0 || cudaMemcpy(&got[0], c->pres, 4, cudaMemcpyDeviceToHost) != cudaSuccess ||
        cudaMemcpy(&got[1], c->pres + 32, 4, cudaMemcpyDeviceToHost) != cudaSuccess)
        return -1;
    float *h = malloc(n * 4);
    if (h == NULL) {
        fprintf(stderr, "bench_vector: out of host memory\n");
        return -1;
    }
    if (cudaMemcpy(h, c->pa + last * stride, n * 4, cudaMemcpyDeviceToHost) != cudaSuccess) {
        free(h);
        return -1;
    }
    double ref = 0.0, sabs = 0.0;
    for (size_t i = 0; i < n; ++i) {
        ref += (double)h[i];
        sabs += fabs((double)h[i]);
    }
    free(h);
    /* kernels.h's bound for ours (K <= n / 256 + 22); CUB sums in float: 1e-5 of sum|x| */
    const double tol_ours = 0x1p-24 * fabs(ref) + (dn / 256.0 + 24.0) * 0x1p-53 * sabs;
    if (!(fabs((double)got[0] - ref) <= tol_ours) || !(fabs((double)got[1] - ref) <= 1e-5 * sabs)) {
        fprintf(stderr, "bench_vector: sweep n=%zu: sum ours %.9g, CUB %.9g, float64 %.17g "
                "(tolerance %.3g / %.3g)\n", n, got[0], got[1], ref, tol_ours, 1e-5 * sabs);
        return -1;
    }
    *cpy = 8.0 * dn / tm / 1e9;
    *add = 12.0 * dn / ta / 1e9;
    *sum = 4.0 * dn / ts / 1e9;
    *cub = 4.0 * dn / tc / 1e9;
    return 0;
}

int main(void) {
    if (!cm_bench_have_gpu("bench_vector")) return 1;
    ctx_t c;
    memset(&c, 0, sizeof c);
    int rc = 1;
    if (cudaSetDevice(0) != cudaSuccess) return 1;
    if (cm_device_open(0, &c.dev) != CM_OK) return fail_report("cm_device_open") ? 1 : 1;
    if (cm_stream_acquire(c.dev, CM_STREAM_PRIORITY_LOW, &c.stream) != CM_OK ||
        cm_stream_cuda(c.stream, &c.cs) != CM_OK) {
        fail_report("acquiring the timing stream");
        goto out;
    }
    if (cm_buffer_create(c.dev, ELEMS * 4, &c.a) != CM_OK ||
        cm_buffer_create(c.dev, ELEMS * 4, &c.b) != CM_OK ||
        cm_buffer_create(c.dev, ELEMS * 4, &c.out) != CM_OK ||
        cm_buffer_create(c.dev, 64, &c.res) != CM_OK) {
        fail_report("cm_buffer_create");
        goto out;
    }
    if (cm_buffer_device_ptr(c.a, (void **)&c.pa) != CM_OK ||
        cm_buffer_device_ptr(c.b, (void **)&c.pb) != CM_OK ||
        cm_buffer_device_ptr(c.out, (void **)&c.pout) != CM_OK ||
        cm_buffer_device_ptr(c.res, (void **)&c.pres) != CM_OK)
        goto out;
    for (int op = 0; op < 3; ++op) {
        size_t tb = 0;
        if (bench_cub_reduce(op, NULL, &tb, c.pa, c.pres + 32, BIG, 0) != cudaSuccess) goto out;
        if (tb > c.temp_bytes) c.temp_bytes = tb;
    }
    if (cudaMalloc(&c.temp, c.temp_bytes) != cudaSuccess) goto out;
    uint32_t seed = 1;
    if (refresh(&c, seed++) != 0 || check_reductions(&c, BIG) != 0 ||
        check_reductions(&c, ((size_t)1 << 20) + 7) != 0)
        goto out;

    /* ------------------------------------------------ vector */
    struct { const char *name; size_t n, off; double goal; } vcases[] = {
        {"2^28", BIG, 0, 0.98}, {"2^20", (size_t)1 << 20, 0, 0.9}, {"2^28-3_off1", BIG - 3, 1, 0.9}};
    double vres[2][3], vpeer[3];
    for (int v = 0; v < 3; ++v) {
        if (refresh(&c, seed++) != 0) goto out;
        const double n = (double)vcases[v].n;
        double tm = time_case(&c, K_MEMCPY, vcases[v].n, vcases[v].off);
        double ta = time_case(&c, K_ADD, vcases[v].n, vcases[v].off);
        double tx = time_case(&c, K_AXPY, vcases[v].n, vcases[v].off);
        if (tm < 0 || ta < 0 || tx < 0) goto out;
        vpeer[v] = 8.0 * n / tm / 1e9;
        vres[0][v] = 12.0 * n / ta / 1e9;
        vres[1][v] = 12.0 * n / tx / 1e9;
    }
    /* ------------------------------------------------ reduce */
    if (refresh(&c, seed++) != 0) goto out;
    double t_sum = time_case(&c, K_SUM, BIG, 0), t_cub_sum = time_case(&c, K_CUB_SUM, BIG, 0);
    double t_max = time_case(&c, K_MAX, BIG, 0), t_cub_max = time_case(&c, K_CUB_MAX, BIG, 0);
    double t_am = time_case(&c, K_ARGMAX, BIG, 0), t_cub_am = time_case(&c, K_CUB_ARGMAX, BIG, 0);
    double t_dot = time_case(&c, K_DOT, BIG, 0);
    if (t_sum < 0 || t_cub_sum < 0 || t_max < 0 || t_cub_max < 0 || t_am < 0 || t_cub_am < 0 ||
        t_dot < 0)
        goto out;
    /* Latency, two ways: a call timed alone (events around one call: on this machine the GPU
     * then mostly waits for the host to submit, so each side pays a fixed ~5-7 us of event and
     * launch overhead whatever its launch count; printed, no goal), and the time per call of
     * LAT_BATCH calls issued back to back (events around the batch): the cost a loop of small
     * reductions sees, where the launches each call makes are what counts (CUB: two, ours: one).
     * The goal applies to the second. */
    const size_t lat_n[3] = {(size_t)1 << 10, (size_t)1 << 16, (size_t)1 << 20};
    double lat[3], lat_cub[3], lat1[3], lat1_cub[3];
    for (int i = 0; i < 3; ++i) {
        lat1[i] = time_case(&c, K_SUM, lat_n[i], 0);
        lat1_cub[i] = time_case(&c, K_CUB_SUM, lat_n[i], 0);
        c.batch = LAT_BATCH;
        lat[i] = time_case(&c, K_SUM, lat_n[i], 0) / LAT_BATCH;
        lat_cub[i] = time_case(&c, K_CUB_SUM, lat_n[i], 0) / LAT_BATCH;
        c.batch = 0;
        if (lat[i] < 0 || lat_cub[i] < 0 || lat1[i] < 0 || lat1_cub[i] < 0) goto out;
    }
    c.batch = LAT_BATCH;
    const double t_empty = time_case(&c, K_EMPTY, 1, 0) / LAT_BATCH;
    c.batch = 0;
    if (t_empty < 0) goto out;

    printf("\nbench_vector: median of %d calls after %d warm-up, CUDA events, float32\n", REPS,
           WARMUP);
    cm_bench_print_header();
    char name[64];
    for (int v = 0; v < 3; ++v) {
        char goal[32];
        snprintf(goal, sizeof goal, ">= %.2fx memcpy GB/s", vcases[v].goal);
        snprintf(name, sizeof name, "add_%s", vcases[v].name);
        row("vector", name, "GB/s", vres[0][v], vpeer[v], "cudaMemcpyAsync D2D", 1, goal,
            vcases[v].goal);
        snprintf(name, sizeof name, "axpy_%s", vcases[v].name);
        row("vector", name, "GB/s", vres[1][v], vpeer[v], "cudaMemcpyAsync D2D", 1, goal,
            vcases[v].goal);
    }
    const double gb = 4.0 * (double)BIG / 1e9;
    row("reduce", "sum_2^28", "GB/s", gb / t_sum, gb / t_cub_sum, "cub::DeviceReduce::Sum", 1,
        ">= 1.0x CUB", 1.0);
    row("reduce", "max_2^28", "GB/s", gb / t_max, gb / t_cub_max, "cub::DeviceReduce::Max", 1,
        ">= 1.0x CUB", 1.0);
    row("reduce", "argmax_2^28", "GB/s", gb / t_am, gb / t_cub_am, "cub::DeviceReduce::ArgMax", 1,
        ">= 1.0x CUB", 1.0);
    row("reduce", "dot_2^28", "GB/s", 2.0 * gb / t_dot, gb / t_cub_sum,
        "cub::DeviceReduce::Sum GB/s", 1, ">= 0.98x CUB sum GB/s", 0.98);
    const char *lat_names[3] = {"sum_latency_2^10", "sum_latency_2^16", "sum_latency_2^20"};
    const char *lat1_names[3] = {"sum_latency_single_call_2^10", "sum_latency_single_call_2^16",
                                 "sum_latency_single_call_2^20"};
    for (int i = 0; i < 3; ++i)
        row("reduce", lat_names[i], "us", lat[i] * 1e6, lat_cub[i] * 1e6,
            "cub::DeviceReduce::Sum", 0, "<= 0.8x CUB time per call, 20 back to back", 1.25);
    row("reduce", "empty_kernel_per_call", "us", t_empty * 1e6, lat_cub[0] * 1e6,
        "cub::DeviceReduce::Sum 2^10 per call", 0,
        "info: the floor of one launch, 20 back to back", 0.0);
    for (int i = 0; i < 3; ++i)
        row("reduce", lat1_names[i], "us", lat1[i] * 1e6, lat1_cub[i] * 1e6,
            "cub::DeviceReduce::Sum", 0, "info: one call alone", 0.0);

    /* ------------------------------------------------ size sweep */
    double sw_add[SWEEP_COUNT] = {0}, sw_cpy[SWEEP_COUNT] = {0}, sw_sum[SWEEP_COUNT] = {0},
           sw_cub[SWEEP_COUNT] = {0};
    for (int k = 0; k < SWEEP_COUNT; ++k) {
        const size_t n = (size_t)1 << (SWEEP_MIN_LOG2 + 2 * k);
        if (refresh(&c, seed++) != 0 ||
            sweep_case(&c, n, &sw_add[k], &sw_cpy[k], &sw_sum[k], &sw_cub[k]) != 0)
            goto out;
    }
    printf("\nsize sweep: float32, element offset 0, every call on its own set of the operands "
           "(>= 128 MiB of each between two calls on one set), outputs checked\n");
    cm_bench_print_header();
    for (int k = 0; k < SWEEP_COUNT; ++k) {
        const int lg = SWEEP_MIN_LOG2 + 2 * k;
        const double add_goal = lg >= SWEEP_MAX_LOG2 ? 0.98 : 0.90;
        char goal[48];
        if (lg >= SWEEP_GOAL_LOG2) snprintf(goal, sizeof goal, ">= %.2fx memcpy GB/s", add_goal);
        else snprintf(goal, sizeof goal, "info: no goal below 2^%d", SWEEP_GOAL_LOG2);
        snprintf(name, sizeof name, "add_f32_sweep_2^%d", lg);
        row("vector", name, "GB/s", sw_add[k], sw_cpy[k], "cudaMemcpyAsync D2D", 1, goal,
            lg >= SWEEP_GOAL_LOG2 ? add_goal : -INFINITY);
    }
    for (int k = 0; k < SWEEP_COUNT; ++k) {
        const int lg = SWEEP_MIN_LOG2 + 2 * k;
        char goal[48];
        if (lg >= SWEEP_GOAL_LOG2) snprintf(goal, sizeof goal, ">= 1.0x CUB GB/s");
        else snprintf(goal, sizeof goal, "info: no goal below 2^%d", SWEEP_GOAL_LOG2);
        snprintf(name, sizeof name, "sum_f32_sweep_2^%d", lg);
        row("reduce", name, "GB/s", sw_sum[k], sw_cub[k], "cub::DeviceReduce::Sum", 1, goal,
            lg >= SWEEP_GOAL_LOG2 ? 1.0 : -INFINITY);
    }
    rc = 0;
out:
    if (c.temp != NULL) cudaFree(c.temp);
    cm_buffer_destroy(c.a);
    cm_buffer_destroy(c.b);
    cm_buffer_destroy(c.out);
    cm_buffer_destroy(c.res);
    cm_stream_release(c.stream);
    cm_device_close(c.dev);
    return rc;
}
