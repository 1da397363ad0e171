/*
 * bench_multigpu: multi.h on two GPUs against one GPU and against the raw runtime / NCCL,
 * measured in the same run (bench "multigpu").
 *
 *   sum_2^30_split2      cm_split_sum_f32 of 2^30 floats already resident, split over GPUs 0 and
 *                        1 (2 GiB each), read bandwidth, vs cm_reduce_sum_f32_to_host of the same
 *                        2^30 floats on GPU 0 alone: goal >= 1.8x
 *   add_2^30_split2      cm_split_add_f32 + cm_device_set_synchronize (12 bytes per element) vs
 *                        cm_vector_add_f32 + cm_stream_synchronize on GPU 0 alone: goal >= 1.8x
 *   peer_copy_0to1 /     cm_buffer_copy on a stream, 256 MiB between the GPUs (peer access on)
 *   peer_copy_1to0       vs cudaMemcpyPeerAsync of the same buffers on the same stream, CUDA
 *                        events: goal >= 0.95x bandwidth
 *   gemm_tf32_16384x8192x8192_split2  cm_split_gemm (TF32, C = A B^T: A and C split by rows over
 *                        GPUs 0 and 1, B copied to both) + cm_device_set_synchronize vs cm_gemm of
 *                        the whole product + cm_stream_synchronize on GPU 0 alone, TFLOP/s:
 *                        goal >= 1.8x (issue #15's cm_split_gemm)
 *   allreduce_1GiB       cm_comm_all_reduce (sum, 2^28 floats) + cm_comm_synchronize, reported as
 *                        NCCL's bus bandwidth 2 (n - 1) / n x bytes / time, vs the raw
 *                        ncclGroupStart / ncclAllReduce x2 / ncclGroupEnd + cudaStreamSynchronize
 *                        x2 on communicators and streams of its own, timed the same way:
 *                        goal >= 0.95x (only in a build with NCCL)
 *
 * The split and one-GPU cases are synchronous calls timed with the host clock (median of REPS
 * after WARMUP). Both sides compute the same numbers from the same data (filled on the devices
 * by index, so split and whole arrays match), checked once: the sums within 1e-6 of sum|x|, the
 * adds bit-identical on the first and last 2^20 elements.
 *
 * With fewer than two GPUs it prints why the 2-GPU rows are skipped and exits 0.
 * Usage: bench_multigpu   (needs about 19 GiB free on GPU 0 and 7 GiB on GPU 1; the GEMM case
 *                        about 2 GiB more on GPU 0 and 0.75 GiB on GPU 1, after the split case
 *                        freed its arrays)
 *
 * Predictions before the first H200 run: one H200 reduces at about 4.4 TB/s (bench_vector, CUB),
 * 4 GiB in ~0.98 ms; two in ~0.49 ms plus one extra synchronisation (~10-20 us): ~1.9x. The add
 * moves 12.9 GB, ~3.1 ms on one, ~1.6 ms on two: ~1.95x. NVLink peer copies of 256 MiB: the
 * library adds its checks (~2 us) to a ~1 ms copy, ~0.99x. The all-reduce adds argument checks
 * and a group call on ~3 ms of NCCL work: ~0.99x.
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
#include <cudamodel/multi.h>
#include <cudamodel/stream.h>

#include "bench_common.h"

#if CM_BENCH_NCCL
#include <nccl.h>
#endif

/* bench_multigpu_kernels.cu */
cudaError_t bench_mg_random_fill(float *p, size_t n, uint64_t first, uint32_t seed,
                                 cudaStream_t s);

#define BIG ((size_t)1 << 30)
#define PEER_BYTES ((size_t)256 << 20)
#define AR_ELEMS ((size_t)1 << 28) /* 1 GiB of floats */
#define REPS 20
#define WARMUP 3

static int fail_report(const char *what) {
    char report[2048];
    cm_error_format(NULL, report, sizeof report);
    fprintf(stderr, "bench_multigpu: %s failed:\n%s\n", what, report);
    return -1;
}

#define TRY(expr)                                                                            \
    do {                                                                                     \
        if ((expr) != CM_OK) return fail_report(#expr);                                      \
    } while (0)
#define CUDA_TRY(expr)                                                                       \
    do {                                                                                     \
        cudaError_t e_ = (expr);                                                             \
        if (e_ != cudaSuccess) {                                                             \
            fprintf(stderr, "bench_multigpu: %s: %s\n", #expr, cudaGetErrorString(e_));      \
            return -1;                                                                       \
        }                                                                                    \
    } while (0)

static void row(const char *name, const char *unit, double ours, double peer,
                const char *peer_name, const char *goal, double min_ratio) {
    cm_bench_row_t r;
    memset(&r, 0, sizeof r);
    r.bench = "multigpu";
    r.case_name = name;
    r.unit = unit;
    r.ours = ours;
    r.peer = peer;
    r.peer_name = peer_name;
    r.ratio = cm_bench_ratio_rate(ours, peer);
    r.goal = goal;
    r.meets = r.ratio >= min_ratio;
    cm_bench_report(&r);
}

/* Host-clock median (ms) of REPS calls of fn after WARMUP. */
typedef int (*host_fn_t)(void *ctx);
static double host_median_ms(host_fn_t fn, void *ctx) {
    double t[REPS];
    for (int i = 0; i < WARMUP; ++i)
        if (fn(ctx) != 0) return -1.0;
    for (int i = 0; i < REPS; ++i) {
        double t0 = cm_bench_now_us();
        if (fn(ctx) != 0) return -1.0;
        t[i] = (cm_bench_now_us() - t0) * 1e-3;
    }
    qsort(t, REPS, sizeof t[0], cm_bench_cmp_double);
    return 0.5 * (t[REPS / 2 - 1] + t[REPS / 2]);
}

typedef struct ctx {
    cm_device_set_t *pair, *one;   /* {0, 1} and {0} */
    cm_stream_t *s0;               /* the one-GPU set's stream of device 0 */
    cm_split_t *x, *y, *z;         /* 2^30 floats over the pair */
    cm_buffer_t *wx, *wy, *wz;     /* 2^30 floats on device 0 */
    float sum;
} ctx_t;

/* cm_split_for_each: fill each part with the whole array's values (first: the index of the
 * part's first element in the whole array) */
static cm_status_t fill_part(void *user, int index, cm_stream_t *stream, cm_buffer_t *part,
                             size_t first, size_t count) {
    (void)index;
    const uint32_t seed = *(const uint32_t *)user;
    cudaStream_t cs = NULL;
    void *p = NULL;
    CM_TRY(cm_stream_cuda(stream, &cs));
    CM_TRY(cm_buffer_device_ptr(part, &p));
    cudaError_t err = bench_mg_random_fill(p, count, first, seed, cs);
    return err == cudaSuccess ? CM_OK : cm_record_cuda_error(err, "bench_mg_random_fill", __FILE__, __LINE__);
}

static int fill_whole(cm_buffer_t *b, uint32_t seed) {
    void *p = NULL;
    TRY(cm_buffer_device_ptr(b, &p));
    CUDA_TRY(cudaSetDevice(0));
    CUDA_TRY(bench_mg_random_fill(p, BIG, 0, seed, 0));
    CUDA_TRY(cudaDeviceSynchronize());
    return 0;
}

static int run_split_sum(void *v) {
    ctx_t *c = v;
    return cm_split_sum_f32(c->x, &c->sum) == CM_OK ? 0 : fail_report("cm_split_sum_f32");
}
static int run_one_sum(void *v) {
    ctx_t *c = v;
    return cm_reduce_sum_f32_to_host(c->s0, c->wx, 0, BIG, &c->sum) == CM_OK
               ? 0 : fail_report("cm_reduce_sum_f32_to_host");
}
static int run_split_add(void *v) {
    ctx_t *c = v;
    if (cm_split_add_f32(c->z, c->x, c->y) != CM_OK) return fail_report("cm_split_add_f32");
    return cm_device_set_synchronize(c->pair) == CM_OK ? 0 : fail_report("synchronize");
}
static int run_one_add(void *v) {
    ctx_t *c = v;
    if (cm_vector_add_f32(c->s0, c->wz, 0, c->wx, 0, c->wy, 0, BIG) != CM_OK)
        return fail_report("cm_vector_add_f32");
    return cm_stream_synchronize(c->s0) == CM_OK ? 0 : fail_report("synchronize");
}

static int bench_split(ctx_t *c) {
    int dev_pair[2] = {0, 1}, dev_one[1] = {0};
    TRY(cm_device_set_open(dev_pair, 2, &c->pair));
    TRY(cm_device_set_open(dev_one, 1, &c->one));
    TRY(cm_device_set_stream(c->one, 0, &c->s0));
    cm_device_t *d0 = NULL;
    TRY(cm_device_set_device(c->one, 0, &d0));
    TRY(cm_split_create(c->pair, BIG, 4, &c->x));
    TRY(cm_split_create(c->pair, BIG, 4, &c->y));
    TRY(cm_split_create(c->pair, BIG, 4, &c->z));
    TRY(cm_buffer_create(d0, BIG * 4, &c->wx));
    TRY(cm_buffer_create(d0, BIG * 4, &c->wy));
    TRY(cm_buffer_create(d0, BIG * 4, &c->wz));
    uint32_t s1 = 11, s2 = 22;
    TRY(cm_split_for_each(c->x, fill_part, &s1));
    TRY(cm_split_for_each(c->y, fill_part, &s2));
    TRY(cm_device_set_synchronize(c->pair));
    if (fill_whole(c->wx, s1) != 0 || fill_whole(c->wy, s2) != 0) return -1;

    /* check once: the same sums (within 1e-6 of sum|x| ~ 2^29) and the same adds */
    float split_sum = 0, one_sum = 0;
    TRY(cm_split_sum_f32(c->x, &split_sum));
    TRY(cm_reduce_sum_f32_to_host(c->s0, c->wx, 0, BIG, &one_sum));
    if (fabs((double)split_sum - (double)one_sum) > 1e-6 * (double)BIG * 0.5) {
        fprintf(stderr, "bench_multigpu: sums differ: split %.9g, one GPU %.9g\n", split_sum,
                one_sum);
        return -1;
    }
    if (run_split_add(c) != 0 || run_one_add(c) != 0) return -1;
    const size_t probe = (size_t)1 << 20;
    float *a = malloc(probe * 4), *b = malloc(probe * 4);
    cm_buffer_t *last = NULL;
    size_t last_first = 0, last_cnt = 0;
    TRY(cm_split_part(c->z, 1, &last, &last_first, &last_cnt));
    int bad = a == NULL || b == NULL || last_cnt < probe;
    if (!bad) {
        cm_buffer_t *first = NULL;
        bad |= cm_split_part(c->z, 0, &first, NULL, NULL) != CM_OK;
        /* NULL stream: synchronous copies; their offsets are in bytes */
        bad |= cm_buffer_copy_to_host(NULL, first, 0, a, probe * 4) != CM_OK;
        bad |= cm_buffer_copy_to_host(NULL, c->wz, 0, b, probe * 4) != CM_OK;
        bad |= memcmp(a, b, probe * 4) != 0;
        bad |= cm_buffer_copy_to_host(NULL, last, (last_cnt - probe) * 4, a, probe * 4) != CM_OK;
        bad |= cm_buffer_copy_to_host(NULL, c->wz, (BIG - probe) * 4, b, probe * 4) != CM_OK;
        bad |= memcmp(a, b, probe * 4) != 0;
    }
    free(a);
    free(b);
    if (bad) {
        fprintf(stderr, "bench_multigpu: the split add and the one-GPU add differ\n");
        return -1;
    }

    double t_split = host_median_ms(run_split_sum, c), t_one = host_median_ms(run_one_sum, c);
    if (t_split < 0 || t_one < 0) return -1;
    const double gb = (double)BIG * 4 / 1e9;
    row("sum_2^30_split2", "GB/s", gb / (t_split * 1e-3), gb / (t_one * 1e-3),
        "cm_reduce_sum_f32 on 1 GPU", ">= 1.8x one GPU", 1.8);
    t_split = host_median_ms(run_split_add, c);
    t_one = host_median_ms(run_one_add, c);
    if (t_split < 0 || t_one < 0) return -1;
    row("add_2^30_split2", "GB/s", 3 * gb / (t_split * 1e-3), 3 * gb / (t_one * 1e-3),
        "cm_vector_add_f32 on 1 GPU", ">= 1.8x one GPU", 1.8);

    TRY(cm_buffer_destroy(c->wx));
    TRY(cm_buffer_destroy(c->wy));
    TRY(cm_buffer_destroy(c->wz));
    TRY(cm_split_destroy(c->x));
    TRY(cm_split_destroy(c->y));
    TRY(cm_split_destroy(c->z));
    TRY(cm_device_set_close(c->one));
    return 0;
}

/* ---------------------------------------------------------------- row-block GEMM */

#define SG_M ((size_t)16384)
#define SG_N ((size_t)8192)
#define SG_K ((size_t)8192)

typedef struct gctx {
    cm_device_set_t *pair, *one;
    cm_stream_t *s0;
    cm_split_t *a, *c;          /* rows of A and C over the pair */
    cm_buffer_t *b[2];          /* B (SG_N x SG_K, row-major: op T) on each member */
    cm_buffer_t *wa, *wb, *wc;  /* the whole problem on GPU 0 */
} gctx_t;

typedef struct rows_fill {
    uint32_t seed;
    size_t cols;
} rows_fill_t;

/* cm_split_for_each: a part of `count` rows of `cols` floats gets the whole matrix's values */
static cm_status_t fill_rows(void *user, int index, cm_stream_t *stream, cm_buffer_t *part,
                             size_t first, size_t count) {
    (void)index;
    const rows_fill_t *f = user;
    cudaStream_t cs = NULL;
    void *p = NULL;
    CM_TRY(cm_stream_cuda(stream, &cs));
    CM_TRY(cm_buffer_device_ptr(part, &p));
    cudaError_t err = bench_mg_random_fill(p, count * f->cols, first * f->cols, f->seed, cs);
    return err == cudaSuccess ? CM_OK : cm_record_cuda_error(err, "bench_mg_random_fill", __FILE__, __LINE__);
}

static int fill_on(int device, cm_buffer_t *b, size_t n, uint32_t seed) {
    void *p = NULL;
    TRY(cm_buffer_device_ptr(b, &p));
    CUDA_TRY(cudaSetDevice(device));
    CUDA_TRY(bench_mg_random_fill(p, n, 0, seed, 0));
    CUDA_TRY(cudaDeviceSynchronize());
    return 0;
}

static int run_split_gemm(void *v) {
    gctx_t *g = v;
    if (cm_split_gemm(CM_GEMM_TF32, CM_GEMM_OP_T, SG_N, SG_K, 1.0f, g->a, g->b, SG_K, 0.0f,
                      g->c) != CM_OK)
        return fail_report("cm_split_gemm");
    return cm_device_set_synchronize(g->pair) == CM_OK ? 0 : fail_report("synchronize");
}
static int run_one_gemm(void *v) {
    gctx_t *g = v;
    if (cm_gemm(g->s0, CM_GEMM_TF32, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, CM_GEMM_OP_T, SG_M, SG_N,
                SG_K, 1.0f, g->wa, 0, SG_K, g->wb, 0, SG_K, 0.0f, g->wc, 0, SG_N) != CM_OK)
        return fail_report("cm_gemm");
    return cm_stream_synchronize(g->s0) == CM_OK ? 0 : fail_report("synchronize");
}

static int bench_split_gemm(cm_device_set_t *pair) {
    gctx_t g;
    memset(&g, 0, sizeof g);
    g.pair = pair;
    int dev_one[1] = {0};
    TRY(cm_device_set_open(dev_one, 1, &g.one));
    TRY(cm_device_set_stream(g.one, 0, &g.s0));
    cm_device_t *d0 = NULL;
    TRY(cm_device_set_device(g.one, 0, &d0));
    TRY(cm_split_create(pair, SG_M, SG_K * 4, &g.a));
    TRY(cm_split_create(pair, SG_M, SG_N * 4, &g.c));
    rows_fill_t fa = {33, SG_K};
    TRY(cm_split_for_each(g.a, fill_rows, &fa));
    for (int k = 0; k < 2; ++k) {
        cm_device_t *d = NULL;
        TRY(cm_device_set_device(pair, k, &d));
        TRY(cm_buffer_create(d, SG_N * SG_K * 4, &g.b[k]));
        if (fill_on(k, g.b[k], SG_N * SG_K, 44) != 0) return -1;
    }
    TRY(cm_device_set_synchronize(pair));
    TRY(cm_buffer_create(d0, SG_M * SG_K * 4, &g.wa));
    TRY(cm_buffer_create(d0, SG_N * SG_K * 4, &g.wb));
    TRY(cm_buffer_create(d0, SG_M * SG_N * 4, &g.wc));
    if (fill_on(0, g.wa, SG_M * SG_K, 33) != 0 || fill_on(0, g.wb, SG_N * SG_K, 44) != 0)
        return -1;
    /* check once: the first and the last row of C agree between the split and the whole
     * product within 2^-10 of K (TF32 inputs, FP32 sums of K products of magnitude <= 1) */
    if (run_split_gemm(&g) != 0 || run_one_gemm(&g) != 0) return -1;
    float *x = malloc(SG_N * 4), *y = malloc(SG_N * 4);
    int bad = x == NULL || y == NULL;
    cm_buffer_t *part = NULL;
    size_t first = 0, count = 0;
    for (int k = 0; k < 2 && !bad; ++k) {
        bad |= cm_split_part(g.c, k, &part, &first, &count) != CM_OK || count == 0;
        if (bad) break;
        const size_t row = k == 0 ? 0 : count - 1; /* first row of part 0, last of part 1 */
        bad |= cm_buffer_copy_to_host(NULL, part, row * SG_N * 4, x, SG_N * 4) != CM_OK;
        bad |= cm_buffer_copy_to_host(NULL, g.wc, (first + row) * SG_N * 4, y, SG_N * 4) != CM_OK;
        for (size_t j = 0; j < SG_N && !bad; ++j)
            bad |= !(fabsf(x[j] - y[j]) <= (float)SG_K / 1024.0f);
    }
    free(x);
    free(y);
    if (bad) {
        fprintf(stderr, "bench_multigpu: the split GEMM and the one-GPU GEMM differ\n");
        return -1;
    }
    const double t_split = host_median_ms(run_split_gemm, &g), t_one = host_median_ms(run_one_gemm, &g);
    if (t_split < 0 || t_one < 0) return -1;
    const double tflop = 2.0 * (double)SG_M * (double)SG_N * (double)SG_K / 1e12;
    row("gemm_tf32_16384x8192x8192_split2", "TFLOP/s", tflop / (t_split * 1e-3),
        tflop / (t_one * 1e-3), "cm_gemm on 1 GPU", ">= 1.8x one GPU", 1.8);
    TRY(cm_buffer_destroy(g.wa));
    TRY(cm_buffer_destroy(g.wb));
    TRY(cm_buffer_destroy(g.wc));
    TRY(cm_buffer_destroy(g.b[0]));
    TRY(cm_buffer_destroy(g.b[1]));
    TRY(cm_split_destroy(g.a));
    TRY(cm_split_destroy(g.c));
    TRY(cm_device_set_close(g.one));
    return 0;
}

/* ---------------------------------------------------------------- peer copies */

typedef struct pctx {
    cm_stream_t *stream;
    cudaStream_t cs;
    cm_buffer_t *dst, *src;
    void *pdst, *psrc;
    int ddev, sdev;
} pctx_t;

static int run_peer_ours(void *v) {
    pctx_t *p = v;
    return cm_buffer_copy(p->stream, p->dst, 0, p->src, 0, PEER_BYTES) == CM_OK
               ? 0 : fail_report("cm_buffer_copy");
}
static int run_peer_raw(void *v) {
    pctx_t *p = v;
    cudaError_t e = cudaMemcpyPeerAsync(p->pdst, p->ddev, p->psrc, p->sdev, PEER_BYTES, p->cs);
    return e == cudaSuccess ? 0 : -1;
}

static int bench_peer(cm_device_set_t *pair) {
    int pairs = 0;
    TRY(cm_device_set_enable_peer_access(pair, &pairs));
    cm_buffer_t *b[2] = {NULL, NULL};
    for (int k = 0; k < 2; ++k) {
        cm_device_t *d = NULL;
        TRY(cm_device_set_device(pair, k, &d));
        TRY(cm_buffer_create(d, PEER_BYTES, &b[k]));
        TRY(cm_buffer_set(NULL, b[k], 0, PEER_BYTES, 0x3c + k));
    }
    for (int from = 0; from < 2; ++from) {
        pctx_t p;
        memset(&p, 0, sizeof p);
        p.sdev = from;
        p.ddev = 1 - from;
        p.src = b[from];
        p.dst = b[1 - from];
        TRY(cm_device_set_stream(pair, from, &p.stream)); /* the source device's stream */
        TRY(cm_stream_cuda(p.stream, &p.cs));
        TRY(cm_buffer_device_ptr(p.src, &p.psrc));
        TRY(cm_buffer_device_ptr(p.dst, &p.pdst));
        CUDA_TRY(cudaSetDevice(from)); /* the harness's events belong to the stream's device */
        cm_bench_stats_t ours, raw;
        if (cm_bench_time(run_peer_ours, &p, p.cs, 3, 20, &ours) != 0 ||
            cm_bench_time(run_peer_raw, &p, p.cs, 3, 20, &raw) != 0)
            return -1;
        const double gb = (double)PEER_BYTES / 1e9;
        row(from == 0 ? "peer_copy_0to1_256MiB" : "peer_copy_1to0_256MiB", "GB/s",
            gb / (ours.median_ms * 1e-3), gb / (raw.median_ms * 1e-3), "cudaMemcpyPeerAsync",
            ">= 0.95x raw", 0.95);
    }
    printf("(peer access: %d of 2 directions)\n", pairs);
    TRY(cm_buffer_destroy(b[0]));
    TRY(cm_buffer_destroy(b[1]));
    return 0;
}

/* ---------------------------------------------------------------- NCCL all-reduce */

#if CM_BENCH_NCCL
typedef struct actx {
    cm_comm_t *comm;
    cm_buffer_t *send[2], *recv[2];
    void *psend[2], *precv[2];
    ncclComm_t raw[2];
    cudaStream_t rs[2];
} actx_t;

static int run_ar_ours(void *v) {
    actx_t *a = v;
    if (cm_comm_all_reduce(a->comm, a->send, a->recv, AR_ELEMS, CM_DTYPE_F32, CM_COMM_SUM) != CM_OK)
        return fail_report("cm_comm_all_reduce");
    return cm_comm_synchronize(a->comm) == CM_OK ? 0 : fail_report("cm_comm_synchronize");
}

static int run_ar_raw(void *v) {
    actx_t *a = v;
    if (ncclGroupStart() != ncclSuccess) return -1;
    for (int k = 0; k < 2; ++k)
        if (ncclAllReduce(a->psend[k], a->precv[k], AR_ELEMS, ncclFloat32, ncclSum, a->raw[k],
                          a->rs[k]) != ncclSuccess)
            return -1;
    if (ncclGroupEnd() != ncclSuccess) return -1;
    for (int k = 0; k < 2; ++k) {
        if (cudaSetDevice(k) != cudaSuccess || cudaStreamSynchronize(a->rs[k]) != cudaSuccess)
            return -1;
    }
    return 0;
}

static int bench_allreduce(cm_device_set_t *pair) {
    actx_t a;
    memset(&a, 0, sizeof a);
    TRY(cm_comm_create(pair, &a.comm));
    for (int k = 0; k < 2; ++k) {
        cm_device_t *d = NULL;
        TRY(cm_device_set_device(pair, k, &d));
        TRY(cm_buffer_create(d, AR_ELEMS * 4, &a.send[k]));
        TRY(cm_buffer_create(d, AR_ELEMS * 4, &a.recv[k]));
        TRY(cm_buffer_device_ptr(a.send[k], &a.psend[k]));
        TRY(cm_buffer_device_ptr(a.recv[k], &a.precv[k]));
        CUDA_TRY(cudaSetDevice(k));
        CUDA_TRY(bench_mg_random_fill(a.psend[k], AR_ELEMS, 0, 100u + (uint32_t)k, 0));
        CUDA_TRY(cudaDeviceSynchronize());
        CUDA_TRY(cudaStreamCreateWithFlags(&a.rs[k], cudaStreamNonBlocking));
    }
    int devs[2] = {0, 1};
    if (ncclCommInitAll(a.raw, 2, devs) != ncclSuccess) {
        fprintf(stderr, "bench_multigpu: ncclCommInitAll failed\n");
        return -1;
    }
    double t_ours = host_median_ms(run_ar_ours, &a), t_raw = host_median_ms(run_ar_raw, &a);
    if (t_ours < 0 || t_raw < 0) return -1;
    const double bytes = (double)AR_ELEMS * 4, busbw = 2.0 * (2 - 1) / 2 * bytes / 1e9;
    row("allreduce_1GiB_busbw", "GB/s", busbw / (t_ours * 1e-3), busbw / (t_raw * 1e-3),
        "ncclAllReduce (raw)", ">= 0.95x raw NCCL", 0.95);
    for (int k = 0; k < 2; ++k) {
        (void)ncclCommDestroy(a.raw[k]);
        (void)cudaSetDevice(k);
        (void)cudaStreamDestroy(a.rs[k]);
    }
    TRY(cm_comm_destroy(a.comm));
    for (int k = 0; k < 2; ++k) {
        TRY(cm_buffer_destroy(a.send[k]));
        TRY(cm_buffer_destroy(a.recv[k]));
    }
    return 0;
}
#endif

int main(void) {
    if (!cm_bench_have_gpu("bench_multigpu")) return 1;
    int n = 0;
    if (cm_device_count(&n) != CM_OK) return fail_report("cm_device_count") ? 1 : 1;
    if (n < 2) {
        printf("bench_multigpu: %d GPU visible; the rows of this benchmark (a split over two GPUs "
               "against one, peer copies between two GPUs, an all-reduce across two GPUs) need "
               "two: skipped\n", n);
        return 0;
    }
    cm_bench_print_header();
    ctx_t c;
    memset(&c, 0, sizeof c);
    if (bench_split(&c) != 0) return 1;
    if (bench_peer(c.pair) != 0) return 1;
    if (bench_split_gemm(c.pair) != 0) return 1;
#if CM_BENCH_NCCL
    if (bench_allreduce(c.pair) != 0) return 1;
#else
    printf("allreduce_1GiB_busbw: skipped: this libcudamodel was built without NCCL\n");
#endif
    if (cm_device_set_close(c.pair) != CM_OK) return fail_report("cm_device_set_close") ? 1 : 1;
    return 0;
}
