/*
 * bench_gemm: cm_gemm() against cuBLAS, measured in the same run (bench "gemm").
 *
 * Default run (no mode flag; what scripts/gpu-check.sh runs first):
 *   fp32_<shape>_<ops>   CM_GEMM_FP32 vs cublasSgemm (default math: no tensor cores), TFLOP/s.
 *                        Goal >= 1.0x at 4096^3 and 8192^3 (issue #15's FP32 parity), >= 0.6x
 *                        on the others (square 512 .. 2048, 4093^3, M = N = 8192 with K = 128,
 *                        65536 x 128 x 128)
 *   tf32_<shape>_TN      CM_GEMM_TF32 vs cublasGemmEx CUBLAS_COMPUTE_32F_FAST_TF32: >= 0.8x at
 *                        4096^3 / 8192^3
 *   bf16_<shape>_TN      CM_GEMM_BF16 (bf16 in, FP32 accumulate and out) vs cublasGemmEx
 *                        CUDA_R_16BF -> CUDA_R_32F, CUBLAS_COMPUTE_32F: >= 0.8x at 4096^3 / 8192^3
 *   bf16o_<shape>_TN     CM_GEMM_BF16_OUT_BF16 vs the same with a bf16 C (no goal)
 *   tf32/bf16/bf16o_<shape>_NN  4096^3 / 8192^3 column-major NN (op(A) not contiguous along
 *                        K): >= 0.95x (issue #15: TF32 / BF16 / BF16-out problems not TN)
 *   matrix-vector rows   m = 1 or n = 1 at 4096 / 8192, every precision: >= 0.9x
 *   then the --batched and --3xtf32 rows below.
 *
 * --batched  batched_<prec>_<batch>x<shape>_<ops>: cm_gemm_strided_batched vs
 *            cublasGemmStridedBatchedEx (the compute type of each precision as below), packed
 *            matrices (stride = one matrix), 64 x 512^3 and 1024 x 64^3, FP32 / TF32 / BF16,
 *            NN and TN: goal >= 0.9x (issue #15). Checked on three matrices of the batch.
 * --3xtf32   3xtf32_<shape>_<ops>: CM_GEMM_FP32_3XTF32 vs cublasGemmEx CUBLAS_COMPUTE_32F
 *            (plain FP32, what cublasSgemm runs) at 4096^3 and 8192^3, NN and TN. The goal of
 *            issue #15: >= 2.0x the throughput AND an error no larger than cuBLAS's on the same
 *            data. Error = |c - ref| / sum_k |a_ik b_kj| per sampled element (2048 samples,
 *            float64 reference); the row's err_ours / err_peer are the mean of it, err_ours_max
 *            / err_peer_max the maximum, err_fp32 / err_tf32 the mean of our CM_GEMM_FP32 and
 *            CM_GEMM_TF32 on the same inputs (context). "meets" needs ratio >= 2 and
 *            err_ours <= err_peer. The row's JSON carries these six fields after the usual ones.
 * --sweep    sweep_<prec>_<shape>_<ops>: the shape space of issue #15: 49 shapes (m, n, k) with
 *            m, n, k from {1, 7, 64, 127, 512, 1000, 3001, 4096} (matrix-vector m = 1 and
 *            n = 1, small k, skinny, tall-skinny / short-wide, odd sizes, large), each in FP32,
 *            TF32 and BF16 (bf16 in, FP32 out), NN and TN: 294 cases, goal >= 0.9x each, peer
 *            cublasGemmEx with CUBLAS_COMPUTE_32F / CUBLAS_COMPUTE_32F_FAST_TF32 / bf16 in FP32
 *            out. Timing adapts to the case (a probe call, then about 30 ms of calls, 5 .. 200);
 *            estimated 10 .. 20 s on an H200 (budgeted < 90 s). Ends with a summary: the worst
 *            ratio per precision (its case) and how many are under 0.9x.
 *            CM_BENCH_SWEEP_ONLY="fp32 _1x" keeps the cases whose name contains any of the words;
 *            with CM_BENCH_SWEEP_SHAPES, a CM_BENCH_SWEEP_ONLY naming "3xtf32" adds the
 *            CM_GEMM_FP32_3XTF32 cases of those shapes (against cublasGemmEx 32F).
 *            CM_BENCH_SWEEP_SHAPES="64x4096x2048 4096x64x8192" runs these shapes (m x n x k,
 *            at most 64, each side 1 .. 65536) instead of the 49, for an experiment (with
 *            scripts/gemm-sweep-configs.sh: forced configurations over chosen shapes); such a
 *            run writes no rows to CM_BENCH_RESULTS. With such shapes, CM_BENCH_LDC_PAD=P
 *            (0 .. 4096) stores C with P more elements a column (ldc = m + P, ours and
 *            cuBLAS's alike): what C's row alignment costs (3001 rows against 3004).
 * --list     print the cases the other flags select (and the sweep's shapes), run nothing.
 * --overhead a diagnostic over the sweep's cases (CM_BENCH_SWEEP_ONLY selects): per call, ours
 *            and cuBLAS's, the event time of one call alone, of one call among 64 queued back
 *            to back, and the host's time per call; a table, no result rows, no other mode.
 * Mode flags combine (e.g. --sweep --batched --3xtf32 runs the issue-#15 set); with none the
 * default run above.
 *
 * All matrices column-major (cuBLAS's order); <ops> is op_a op_b (NN: C = A B; TN: C = A^T B,
 * both operands contiguous along K); leading dimensions packed (rows of the stored matrix).
 * alpha = 1, beta = 0. Inputs random in [-1, 1) drawn on the device; shapes whose A + B are
 * smaller than 256 MiB rotate among several input sets (> 4x the 60 MiB L2 of an H200).
 * CUDA-event timing, median of the timed calls after warm-up, ours and cuBLAS's each measured
 * twice in the order ours, cuBLAS, cuBLAS, ours (time_pair), on one stream acquired from the
 * device's pool: cm_gemm is given it, cuBLAS (cublasSetStream) and the events its CUDA stream
 * (a NULL stream would make every cm_gemm synchronous). cm_gemm's operand offsets are in bytes.
 * Every case is checked once, ours and cuBLAS's: C is poisoned (all bits set: NaN), computed,
 * then every element of C must be finite (written) and sampled entries (256; 2048 for 3xtf32)
 * are compared with a float64 GPU reference (relative Frobenius error printed; "BAD" past the
 * bound of tests/gpu/test_gpu_gemm.c, and the run exits 1). A goal missed is a row with meets
 * false, not a failure of the run.
 *
 * Usage: bench_gemm [--quick] [--sweep] [--batched] [--3xtf32] [--list] [--overhead] [--tune]
 *                   [--ops [CONFIG ...]]
 *   --quick  only 4096^3 of each precision (and two matrix-vector shapes); with no other mode
 *   --ops    FP32 4096^3 and 8192^3 in each of the four (op_a, op_b) combinations, for each named
 *            tile configuration (CUDAMODEL_GEMM_CONFIG names; none: the dispatch table's choice),
 *            ratio to cublasSgemm of the same ops; printed only, nothing goes to the results.
 *            CM_BENCH_OPS="NN TN" keeps those op pairs; CM_BENCH_OPS_SHAPES="4096^3 8192x8192x128"
 *            those shapes (of 4096^3, 8192^3, 8192x8192x128, 65536x128x128)
 *   --tune   time every tile configuration on each shape class's representative shapes (via
 *            CUDAMODEL_GEMM_CONFIG) and print the best per class as rows of the dispatch table
 *            in src/gemm_api.c, ready to paste (with the device and commit to cite)
 *   --tune and --ops need a build configured with -DCUDAMODEL_BUILD_TUNING=ON (every FFMA
 *   configuration compiled, CUDAMODEL_GEMM_CONFIG read at each call); otherwise they say so and
 *   exit with 2.
 * CM_BENCH_RESULTS / CM_BENCH_COMMIT as in bench_common.h.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/interop.h>
#include <cudamodel/kernels.h>
#include <cudamodel/stream.h>

#include "bench_common.h"
#include "gemm_sweep_shapes.h"
#include "../kernels/gemm.h" /* CM__FFMA_CONFIGS: the names of every FFMA configuration */

cudaError_t bench_gemm_fill(void *p, size_t n, int bf16, uint32_t seed, cudaStream_t s);
cudaError_t bench_gemm_ref(int bf16, int opa, int opb, const void *A, long long lda,
                           const void *B, long long ldb, int k, const int *ij, int count,
                           double *out, double *abs_out, cudaStream_t s);
cudaError_t bench_gemm_gather(const void *C, long long ldc, int bf16, const int *ij, int count,
                              double *out, cudaStream_t s);
cudaError_t bench_gemm_count_nonfinite(const void *C, size_t n, int bf16,
                                       unsigned long long *count, cudaStream_t s);


#define ROT_BYTES ((size_t)256 << 20)
#define SAMPLES 256       /* sampled entries per checked matrix */
#define SAMPLES_3X 2048   /* for the 3xTF32 error comparison */
#define MAX_SAMPLES 2048
#define MAX_CHECKED 3     /* matrices of a batch checked: the first, the middle, the last */

static cm_device_t *g_dev;
static cm_stream_t *g_stream; /* the timing stream: cm_gemm is queued on it */
static cudaStream_t g_cs;     /* its CUDA stream: cuBLAS, the checks' kernels and the events */
static cublasHandle_t g_blas;
static int g_fail;

typedef struct run_ctx {
    int peer;    /* 0: ours, 1: cuBLAS */
    int gemm_ex; /* FP32 peer: cublasGemmEx CUBLAS_COMPUTE_32F rather than cublasSgemm */
    cm_gemm_precision_t prec;
    cm_gemm_op_t oa, ob;
    size_t m, n, k, lda, ldb, ldc;
    size_t batch, stride_a, stride_b, stride_c; /* strides in elements; batch 1: cm_gemm */
    cm_buffer_t *ab, *c; /* all input sets; C */
    unsigned char *pab, *pc;
    size_t set_bytes, a_bytes, in_elem, out_elem;
    size_t sets, set;
} run_ctx_t;

/* elements added to each column of C (ldc = m + g_ldc_pad): CM_BENCH_LDC_PAD, read with
 * CM_BENCH_SWEEP_SHAPES only (custom_shapes) */
static size_t g_ldc_pad = 0;

/* cm_bench_report with extra numbers (keys, vals) and the kernel's tag (NULL: none) in the
 * results file's row */
static void report_with_extras(const cm_bench_row_t *row, const char *const *keys,
                               const double *vals, int count, const char *kernel);

/* What cm_gemm runs for r's first input set, from cm_gemm_explain (the real leading dimensions,
 * offsets and strides): tag is the kernel's name (the text up to its first ':'), "+copy" when
 * it copies or transposes operands first, "+a1" when the TF32 align1 form reads them as they
 * are, and "/N" for N parts of split-K; text is the whole explanation ("?" when it failed). */
static void plan_of(const run_ctx_t *r, char *tag, size_t tag_size, char *text, size_t size) {
    const int batched = r->batch > 1;
    if (cm_gemm_explain(r->prec, CM_GEMM_COL_MAJOR, r->oa, r->ob, r->m, r->n, r->k, r->ab, 0,
                        r->lda, batched ? r->stride_a : 0, r->ab, r->a_bytes, r->ldb,
                        batched ? r->stride_b : 0, r->c, 0, r->ldc, batched ? r->stride_c : 0,
                        batched ? r->batch : 1, text, size, NULL) != CM_OK)
        snprintf(text, size, "?");
    const size_t name_len = strcspn(text, ":");
    const char *split = strstr(text, " is split into ");
    int parts = 0;
    if (split != NULL && sscanf(split, " is split into %d", &parts) != 1) parts = 0;
    snprintf(tag, tag_size, "%.*s%s", (int)(name_len < 24 ? name_len : 24), text,
             strstr(text, "; first ") != NULL      ? "+copy"
             : strstr(text, "align1 form") != NULL ? "+a1"
                                                   : "");
    if (parts > 1) {
        const size_t used = strlen(tag);
        snprintf(tag + used, tag_size - used, "/%d", parts);
    }
}

static int report_fail(const char *what) {
    char report[2048];
    cm_error_format(NULL, report, sizeof report);
    fprintf(stderr, "bench_gemm: %s failed:\n%s\n", what, report);
    return -1;
}

static int is_bf16_in(cm_gemm_precision_t p) {
    return p == CM_GEMM_BF16 || p == CM_GEMM_BF16_OUT_BF16;
}

/* cuBLAS's types for a precision: FP32 and 3xTF32 (FP32 accuracy) run plain FP32 */
static void blas_types(cm_gemm_precision_t p, cudaDataType_t *ab, cudaDataType_t *c,
                       cublasComputeType_t *compute) {
    *ab = is_bf16_in(p) ? CUDA_R_16BF : CUDA_R_32F;
    *c = p == CM_GEMM_BF16_OUT_BF16 ? CUDA_R_16BF : CUDA_R_32F;
    *compute = p == CM_GEMM_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

static int run(void *p) {
    run_ctx_t *r = p;
    const size_t s = r->set;
    r->set = (r->set + 1) % r->sets;
    const size_t a_off = s * r->set_bytes, b_off = a_off + r->a_bytes; /* bytes, 256-aligned */
    if (!r->peer) {
        const cm_status_t st =
            r->batch > 1
                ? cm_gemm_strided_batched(g_stream, r->prec, CM_GEMM_COL_MAJOR, r->oa, r->ob, r->m,
                                          r->n, r->k, 1.0f, r->ab, a_off, r->lda, r->stride_a,
                                          r->ab, b_off, r->ldb, r->stride_b, 0.0f, r->c, 0,
                                          r->ldc, r->stride_c, r->batch)
                : cm_gemm(g_stream, r->prec, CM_GEMM_COL_MAJOR, r->oa, r->ob, r->m, r->n, r->k,
                          1.0f, r->ab, a_off, r->lda, r->ab, b_off, r->ldb, 0.0f, r->c, 0,
                          r->ldc);
        return st == CM_OK ? 0 : report_fail(r->batch > 1 ? "cm_gemm_strided_batched" : "cm_gemm");
    }
    const float one = 1.0f, zero = 0.0f;
    const cublasOperation_t oa = r->oa == CM_GEMM_OP_T ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t ob = r->ob == CM_GEMM_OP_T ? CUBLAS_OP_T : CUBLAS_OP_N;
    const void *A = r->pab + a_off, *B = r->pab + b_off;
    cudaDataType_t tab, tc;
    cublasComputeType_t ct;
    blas_types(r->prec, &tab, &tc, &ct);
    cublasStatus_t bs;
    if (r->batch > 1)
        bs = cublasGemmStridedBatchedEx(g_blas, oa, ob, (int)r->m, (int)r->n, (int)r->k, &one, A,
                                        tab, (int)r->lda, (long long)r->stride_a, B, tab,
                                        (int)r->ldb, (long long)r->stride_b, &zero, r->pc, tc,
                                        (int)r->ldc, (long long)r->stride_c, (int)r->batch, ct,
                                        CUBLAS_GEMM_DEFAULT);
    else if (r->prec == CM_GEMM_FP32 && !r->gemm_ex)
        bs = cublasSgemm(g_blas, oa, ob, (int)r->m, (int)r->n, (int)r->k, &one, A, (int)r->lda, B,
                         (int)r->ldb, &zero, (float *)r->pc, (int)r->ldc);
    else
        bs = cublasGemmEx(g_blas, oa, ob, (int)r->m, (int)r->n, (int)r->k, &one, A, tab,
                          (int)r->lda, B, tab, (int)r->ldb, &zero, r->pc, tc, (int)r->ldc, ct,
                          CUBLAS_GEMM_DEFAULT);
    if (bs != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "bench_gemm: cuBLAS status %d\n", (int)bs);
        return -1;
    }
    return 0;
}

static const char *peer_name_of(const run_ctx_t *r) {
    if (r->batch > 1)
        return r->prec == CM_GEMM_FP32   ? "cublasGemmStridedBatchedEx_32F"
               : r->prec == CM_GEMM_TF32 ? "cublasGemmStridedBatchedEx_FAST_TF32"
                                         : "cublasGemmStridedBatchedEx_BF16";
    if (r->prec == CM_GEMM_FP32_3XTF32) return "cublasGemmEx_32F(=Sgemm)";
    if (r->prec == CM_GEMM_FP32) return r->gemm_ex ? "cublasGemmEx_32F" : "cublasSgemm";
    return r->prec == CM_GEMM_TF32 ? "cublasGemmEx_FAST_TF32" : "cublasGemmEx_BF16";
}

typedef struct gcase {
    cm_gemm_precision_t prec;
    cm_gemm_op_t oa, ob;
    size_t m, n, k;
} gcase_t;

typedef struct prepared {
    run_ctx_t r;
    int ns;                  /* samples per checked matrix */
    int nchk;                /* matrices checked (batch: first, middle, last) */
    size_t chk[MAX_CHECKED]; /* their batch indices */
    int *d_ij;
    double *d_ref, *d_abs, *d_got; /* nchk * ns each */
    unsigned long long *d_bad;     /* non-finite elements of C after a call */
} prepared_t;

static const char *prec_tag(cm_gemm_precision_t p) {
    static const char *t[] = {"fp32", "tf32", "bf16", "bf16o", "3xtf32"};
    return (unsigned)p < sizeof t / sizeof t[0] ? t[p] : "?";
}

/* allocate and fill the inputs of `batch` packed matrices per operand (batch 1: one GEMM),
 * draw ns sample positions and compute their float64 reference (and sum |a b|) */
static int prepare_ex(const gcase_t *g, size_t batch, int ns, prepared_t *P, uint32_t seed) {
    memset(P, 0, sizeof *P);
    run_ctx_t *r = &P->r;
    r->prec = g->prec;
    r->oa = g->oa;
    r->ob = g->ob;
    r->m = g->m;
    r->n = g->n;
    r->k = g->k;
    r->batch = batch < 1 ? 1 : batch;
    const int bf = is_bf16_in(g->prec);
    r->in_elem = bf ? 2 : 4;
    r->out_elem = g->prec == CM_GEMM_BF16_OUT_BF16 ? 2 : 4;
    /* column-major stored shapes */
    const size_t a_rows = g->oa == CM_GEMM_OP_N ? g->m : g->k;
    const size_t a_cols = g->oa == CM_GEMM_OP_N ? g->k : g->m;
    const size_t b_rows = g->ob == CM_GEMM_OP_N ? g->k : g->n;
    const size_t b_cols = g->ob == CM_GEMM_OP_N ? g->n : g->k;
    r->lda = a_rows;
    r->ldb = b_rows;
    r->ldc = g->m + g_ldc_pad;
    r->stride_a = a_rows * a_cols;
    r->stride_b = b_rows * b_cols;
    r->stride_c = r->ldc * g->n;
    r->a_bytes = (r->batch * r->stride_a * r->in_elem + 255) / 256 * 256;
    r->set_bytes = r->a_bytes + (r->batch * r->stride_b * r->in_elem + 255) / 256 * 256;
    r->sets = (ROT_BYTES + r->set_bytes - 1) / r->set_bytes;
    if (r->sets < 1) r->sets = 1;
    if (r->sets > 64) r->sets = 64;
    P->ns = ns < 1 ? 1 : ns > MAX_SAMPLES ? MAX_SAMPLES : ns;
    P->nchk = r->batch > 2 ? 3 : (int)r->batch;
    P->chk[0] = 0;
    P->chk[1] = r->batch > 2 ? r->batch / 2 : 1;
    P->chk[P->nchk - 1] = r->batch - 1;
    if (cm_buffer_create(g_dev, r->sets * r->set_bytes, &r->ab) != CM_OK ||
        cm_buffer_create(g_dev, r->batch * r->stride_c * r->out_elem, &r->c) != CM_OK)
        return report_fail("cm_buffer_create");
    void *p = NULL;
    (void)cm_buffer_device_ptr(r->ab, &p);
    r->pab = p;
    (void)cm_buffer_device_ptr(r->c, &p);
    r->pc = p;
    if (bench_gemm_fill(r->pab, r->sets * r->set_bytes / r->in_elem, bf, seed, 0) != cudaSuccess)
        return -1;
    /* sample positions */
    static int ij[2 * MAX_SAMPLES];
    uint64_t x = 0x9E3779B97F4A7C15ull ^ seed;
    for (int s = 0; s < P->ns; ++s) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        ij[2 * s] = (int)(x % g->m);
        ij[2 * s + 1] = (int)((x >> 32) % g->n);
    }
    const size_t nd = (size_t)P->nchk * (size_t)P->ns * sizeof(double);
    if (cudaMalloc((void **)&P->d_ij, 2 * (size_t)P->ns * sizeof(int)) != cudaSuccess ||
        cudaMalloc((void **)&P->d_ref, nd) != cudaSuccess ||
        cudaMalloc((void **)&P->d_abs, nd) != cudaSuccess ||
        cudaMalloc((void **)&P->d_got, nd) != cudaSuccess ||
        cudaMalloc((void **)&P->d_bad, sizeof *P->d_bad) != cudaSuccess ||
        cudaMemcpy(P->d_ij, ij, 2 * (size_t)P->ns * sizeof(int), cudaMemcpyHostToDevice) !=
            cudaSuccess)
        return -1;
    for (int c = 0; c < P->nchk; ++c) {
        const unsigned char *A = r->pab + P->chk[c] * r->stride_a * r->in_elem;
        const unsigned char *B = r->pab + r->a_bytes + P->chk[c] * r->stride_b * r->in_elem;
        if (bench_gemm_ref(bf, g->oa == CM_GEMM_OP_T, g->ob == CM_GEMM_OP_T, A, (long long)r->lda,
                           B, (long long)r->ldb, (int)g->k, P->d_ij, P->ns,
                           P->d_ref + (size_t)c * (size_t)P->ns,
                           P->d_abs + (size_t)c * (size_t)P->ns, 0) != cudaSuccess)
            return -1;
    }
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : -1;
}

static int prepare(const gcase_t *g, prepared_t *P, uint32_t seed) {
    return prepare_ex(g, 1, SAMPLES, P, seed);
}

static void release(prepared_t *P) {
    (void)cm_buffer_destroy(P->r.ab);
    (void)cm_buffer_destroy(P->r.c);
    cudaFree(P->d_ij);
    cudaFree(P->d_ref);
    cudaFree(P->d_abs);
    cudaFree(P->d_got);
    cudaFree(P->d_bad);
}

/* the errors of one result on the samples: frob = ||c - ref|| / ||ref|| over the samples (NaN
 * when a sample or any element of C is not finite, or a call failed); rel = |c - ref| / sum|a b|
 * per sample, its maximum and mean; unwritten = non-finite elements of the whole C */
typedef struct errs {
    double frob, rel_max, rel_mean;
    unsigned long long unwritten;
} errs_t;

/* one call of ours or the peer on set 0, then its errors; the poison, the call, the scan and
 * the gathers in order on the timing stream (it does not synchronise with the legacy one) */
static errs_t check_full(prepared_t *P, int peer) {
    static double ref[MAX_CHECKED * MAX_SAMPLES], sabs[MAX_CHECKED * MAX_SAMPLES],
        got[MAX_CHECKED * MAX_SAMPLES];
    errs_t e = {NAN, NAN, NAN, 0};
    run_ctx_t *r = &P->r;
    r->peer = peer;
    r->set = 0;
    const int obf = r->prec == CM_GEMM_BF16_OUT_BF16;
    const size_t c_elems = r->batch * r->stride_c;
    if (cudaMemsetAsync(r->pc, 0xFF, c_elems * r->out_elem, g_cs) != cudaSuccess ||
        cudaMemsetAsync(P->d_bad, 0, sizeof *P->d_bad, g_cs) != cudaSuccess || run(r) != 0 ||
        bench_gemm_count_nonfinite(r->pc, c_elems, obf, P->d_bad, g_cs) != cudaSuccess)
        return e;
    for (int c = 0; c < P->nchk; ++c)
        if (bench_gemm_gather(r->pc + P->chk[c] * r->stride_c * r->out_elem, (long long)r->ldc,
                              obf, P->d_ij, P->ns, P->d_got + (size_t)c * (size_t)P->ns,
                              g_cs) != cudaSuccess)
            return e;
    if (cudaStreamSynchronize(g_cs) != cudaSuccess) return e;
    const size_t n = (size_t)P->nchk * (size_t)P->ns;
    if (cudaMemcpy(ref, P->d_ref, n * sizeof(double), cudaMemcpyDeviceToHost) != cudaSuccess ||
        cudaMemcpy(sabs, P->d_abs, n * sizeof(double), cudaMemcpyDeviceToHost) != cudaSuccess ||
        cudaMemcpy(got, P->d_got, n * sizeof(double), cudaMemcpyDeviceToHost) != cudaSuccess ||
        cudaMemcpy(&e.unwritten, P->d_bad, sizeof e.unwritten, cudaMemcpyDeviceToHost) !=
            cudaSuccess)
        return e;
    double num = 0, den = 0, rmax = 0, rsum = 0;
    for (size_t s = 0; s < n; ++s) {
        if (!isfinite(got[s])) return e;
        const double d = fabs(got[s] - ref[s]);
        num += d * d;
        den += ref[s] * ref[s];
        const double rel = sabs[s] > 0 ? d / sabs[s] : d > 0 ? INFINITY : 0.0;
        rmax = rel > rmax ? rel : rmax;
        rsum += rel;
    }
    e.rel_max = rmax;
    e.rel_mean = rsum / (double)n;
    e.frob = e.unwritten ? NAN : sqrt(num / (den > 0 ? den : 1));
    if (e.unwritten)
        fprintf(stderr, "bench_gemm: %s %s %zux%zux%zu: %llu of %zu elements of C not finite "
                        "after the call (unwritten?)\n",
                peer ? "cuBLAS" : "ours", prec_tag(r->prec), r->m, r->n, r->k, e.unwritten,
                c_elems);
    return e;
}

static double check(prepared_t *P, int peer) {
    return check_full(P, peer).frob;
}

static double bound_for(const gcase_t *g) {
    if (g->prec == CM_GEMM_FP32 || g->prec == CM_GEMM_FP32_3XTF32)
        return 1e-6 * sqrt((double)g->k) + 1e-6;
    if (g->prec == CM_GEMM_TF32) return 1e-3;
    if (g->prec == CM_GEMM_BF16) return 1e-4; /* inputs are bf16 already: only the FP32 sums */
    return 1e-2;
}

/* median seconds of ours (peer 0) or cuBLAS (1); -1 on failure */
static double g_budget_s = 0.3; /* timed seconds per measurement (--tune: less) */

static double time_one(prepared_t *P, int peer) {
    P->r.peer = peer;
    P->r.set = 0;
    const double flops =
        2.0 * (double)P->r.batch * (double)P->r.m * (double)P->r.n * (double)P->r.k;
    /* about g_budget_s of timed calls, 5..50 */
    int reps = (int)(g_budget_s / (flops / 40e12));
    if (reps < 5) reps = 5;
    if (reps > 50) reps = 50;
    cm_bench_stats_t s;
    if (cm_bench_time(run, &P->r, g_cs, 3, reps, &s) != 0) return -1;
    return s.median_ms * 1e-3;
}

/* median seconds, the repetitions sized by a probe: 2 warm-up calls and one timed call, then
 * budget_s worth of calls (5 .. max_reps) after one more warm-up; -1 on failure */
static double time_adaptive(prepared_t *P, int peer, double budget_s, int max_reps) {
    P->r.peer = peer;
    P->r.set = 0;
    cm_bench_stats_t s;
    if (cm_bench_time(run, &P->r, g_cs, 2, 1, &s) != 0) return -1;
    const double probe = s.median_ms * 1e-3;
    int reps = probe > 0 ? (int)fmin(budget_s / probe, (double)max_reps) : max_reps;
    if (reps < 5) reps = 5;
    if (cm_bench_time(run, &P->r, g_cs, 1, reps, &s) != 0) return -1;
    return s.median_ms * 1e-3;
}

/* Ours and cuBLAS's median seconds, measured in the order ours, cuBLAS, cuBLAS, ours (half the
 * repetitions each time) and each the mean of its two: a drift of the GPU's clocks across the
 * measurement (after a case of the heavier tensor-core load, the next case's first
 * measurement ran ~10 % slow: bench/NOTES-gemm.md, session 27) weighs on both sides alike.
 * budget_s <= 0: time_one's repetitions; else time_adaptive's. 0 on success, -1 on failure. */
static int time_pair(prepared_t *P, double budget_s, int max_reps, double *t_ours,
                     double *t_peer) {
    double t[4] = {-1, -1, -1, -1};
    static const int who[4] = {0, 1, 1, 0};
    const double saved = g_budget_s;
    if (budget_s <= 0) g_budget_s = saved / 2;
    for (int i = 0; i < 4; ++i) {
        t[i] = budget_s > 0 ? time_adaptive(P, who[i], budget_s / 2, (max_reps + 1) / 2)
                            : time_one(P, who[i]);
        if (t[i] <= 0) break;
    }
    g_budget_s = saved;
    *t_ours = *t_peer = -1;
    for (int i = 0; i < 4; ++i)
        if (t[i] <= 0) return -1;
    *t_ours = (t[0] + t[3]) / 2;
    *t_peer = (t[1] + t[2]) / 2;
    return 0;
}

static void shape_name(const gcase_t *g, char *buf, size_t size) {
    if (g->m == g->n && g->n == g->k)
        snprintf(buf, size, "%zu^3", g->m);
    else
        snprintf(buf, size, "%zux%zux%zu", g->m, g->n, g->k);
}

static void bench_case(const gcase_t *g, const char *goal, double goal_ratio, uint32_t seed) {
    prepared_t P;
    char shape[64], name[128];
    shape_name(g, shape, sizeof shape);
    snprintf(name, sizeof name, "%s_%s_%c%c", prec_tag(g->prec), shape, g->oa ? 'T' : 'N',
             g->ob ? 'T' : 'N');
    if (prepare(g, &P, seed) != 0) {
        fprintf(stderr, "bench_gemm: %s: setup failed\n", name);
        g_fail = 1;
        release(&P);
        return;
    }
    const double e_ours = check(&P, 0), e_peer = check(&P, 1);
    double t_ours = -1, t_peer = -1;
    (void)time_pair(&P, 0, 0, &t_ours, &t_peer);
    const double flops = 2.0 * (double)g->m * (double)g->n * (double)g->k;
    char cfg[48], plan[1024];
    plan_of(&P.r, cfg, sizeof cfg, plan, sizeof plan);
    if (t_ours <= 0 || t_peer <= 0) {
        fprintf(stderr, "bench_gemm: %s: timing failed\n", name);
        g_fail = 1;
        release(&P);
        return;
    }
    const double ours = flops / t_ours * 1e-12, peer = flops / t_peer * 1e-12;
    const double ratio = cm_bench_ratio_rate(ours, peer);
    const int bad = !(e_ours <= bound_for(g));
    if (bad) g_fail = 1;
    cm_bench_row_t row = {"gemm", name, "TFLOP/s", ours, peer, peer_name_of(&P.r), ratio,
                          goal ? goal : "-", goal ? ratio >= goal_ratio && !bad : !bad};
    report_with_extras(&row, NULL, NULL, 0, cfg);
    printf("    %-28s kernel %-16s err ours %.2e cuBLAS %.2e%s\n", name, cfg, e_ours, e_peer,
           bad ? "  BAD" : "");
    if (goal && ratio < goal_ratio) printf("      plan: %s\n", plan);
    release(&P);
}

/* ------------------------------------------------------------------ --sweep, --batched */

/* the 49 shapes of the sweep: k_sweep, N_SWEEP (gemm_sweep_shapes.h) */

/* The shapes the sweep and --overhead run: the table above, or CM_BENCH_SWEEP_SHAPES's */
#define SWEEP_SHAPES_MAX 64
#define SWEEP_DIM_MAX 65536
static sweep_shape_t g_custom[SWEEP_SHAPES_MAX];
static const sweep_shape_t *g_sweep = k_sweep;
static size_t g_nsweep = N_SWEEP;

/* CM_BENCH_SWEEP_SHAPES="MxNxK ..." (space- or comma-separated, each of m, n, k in 1 ..
 * SWEEP_DIM_MAX, at most SWEEP_SHAPES_MAX shapes): the sweep's cases over these shapes instead
 * of the table's, for an experiment (class "custom"). Returns 1 when the shapes were taken, 0
 * when the variable is unset or empty, -1 (after saying why) when it cannot be read. */
static int custom_shapes(void) {
    const char *v = getenv("CM_BENCH_SWEEP_SHAPES");
    if (v == NULL || *v == '\0') return 0;
    char words[4096];
    if (strlen(v) >= sizeof words) {
        fprintf(stderr, "bench_gemm: CM_BENCH_SWEEP_SHAPES is longer than %zu characters\n",
                sizeof words - 1);
        return -1;
    }
    snprintf(words, sizeof words, "%s", v);
    size_t n = 0;
    char *save = NULL;
    for (char *w = strtok_r(words, " ,", &save); w; w = strtok_r(NULL, " ,", &save)) {
        unsigned long long d[3] = {0, 0, 0};
        const char *q = w;
        int ok = 1;
        for (int j = 0; j < 3 && ok; ++j) {
            char *end = NULL;
            if (*q < '0' || *q > '9') ok = 0;
            else d[j] = strtoull(q, &end, 10);
            if (ok && (d[j] < 1 || d[j] > SWEEP_DIM_MAX)) ok = 0;
            if (ok) q = end;
            if (ok && j < 2) ok = *q++ == 'x';
        }
        if (!ok || *q != '\0') {
            fprintf(stderr,
                    "bench_gemm: CM_BENCH_SWEEP_SHAPES: \"%s\" is not MxNxK with each of m, n, k "
                    "in 1 .. %d (e.g. \"64x4096x4096 4096x64x1000\")\n",
                    w, SWEEP_DIM_MAX);
            return -1;
        }
        if (n == SWEEP_SHAPES_MAX) {
            fprintf(stderr, "bench_gemm: CM_BENCH_SWEEP_SHAPES: more than %d shapes\n",
                    SWEEP_SHAPES_MAX);
            return -1;
        }
        g_custom[n++] = (sweep_shape_t){(size_t)d[0], (size_t)d[1], (size_t)d[2], "custom"};
    }
    if (n == 0) return 0;
    g_sweep = g_custom;
    g_nsweep = n;
    const char *pad = getenv("CM_BENCH_LDC_PAD");
    if (pad != NULL && *pad != '\0') {
        char *end = NULL;
        const unsigned long long p = strtoull(pad, &end, 10);
        if (*pad < '0' || *pad > '9' || *end != '\0' || p > 4096) {
            fprintf(stderr, "bench_gemm: CM_BENCH_LDC_PAD: \"%s\" is not a number of elements "
                            "in 0 .. 4096\n", pad);
            return -1;
        }
        g_ldc_pad = (size_t)p;
        printf("C stored with ldc = m + %zu (CM_BENCH_LDC_PAD)\n", g_ldc_pad);
    }
    return 1;
}

/* the sweep's precisions; CM_BENCH_SWEEP_SHAPES's shapes also run the fourth, FP32 accuracy on
 * tensor cores (CM_GEMM_FP32_3XTF32 against cublasGemmEx with CUBLAS_COMPUTE_32F), where
 * CM_BENCH_SWEEP_ONLY names "3xtf32" (so "tf32" alone keeps selecting TF32 only); the issue's
 * own sweep runs the first three */
static const cm_gemm_precision_t k_sweep_precs[4] = {CM_GEMM_FP32, CM_GEMM_TF32, CM_GEMM_BF16,
                                                     CM_GEMM_FP32_3XTF32};
static int g_sweep_precs = 3;

/* per precision: the worst ratio and its case, cases under the goal, failed cases */
typedef struct sweep_stats {
    double worst, logsum;
    char worst_case[96];
    int cases, under, failed, timed;
} sweep_stats_t;

static int name_selected(const char *name) {
    const char *only = getenv("CM_BENCH_SWEEP_ONLY");
    if (only == NULL || *only == '\0') return 1;
    char words[512];
    snprintf(words, sizeof words, "%s", only);
    char *save = NULL;
    for (char *w = strtok_r(words, " ,", &save); w; w = strtok_r(NULL, " ,", &save))
        if (strstr(name, w)) return 1;
    return 0;
}

/* one row of a goal >= 0.9x: checked, timed (adaptive), reported; returns the ratio (NaN when
 * it failed) */
static double goal_case(const char *name, const gcase_t *g, size_t batch, const char *cls,
                        uint32_t seed) {
    prepared_t P;
    const double flops = 2.0 * (double)batch * (double)g->m * (double)g->n * (double)g->k;
    double ours = NAN, peer = NAN, ratio = NAN;
    errs_t eo = {NAN, NAN, NAN, 0}, ep = {NAN, NAN, NAN, 0};
    char cfg[48] = "?", plan[1024] = "?";
    int ok = prepare_ex(g, batch, SAMPLES, &P, seed) == 0;
    P.r.gemm_ex = 1;
    if (!ok) fprintf(stderr, "bench_gemm: %s: setup failed\n", name);
    if (ok) {
        eo = check_full(&P, 0);
        ep = check_full(&P, 1);
        double t_ours = -1, t_peer = -1;
        (void)time_pair(&P, 0.03, 200, &t_ours, &t_peer);
        if (t_ours > 0) ours = flops / t_ours * 1e-12;
        if (t_peer > 0) peer = flops / t_peer * 1e-12;
        if (t_ours > 0 && t_peer > 0) ratio = cm_bench_ratio_rate(ours, peer);
        else fprintf(stderr, "bench_gemm: %s: timing failed\n", name);
        plan_of(&P.r, cfg, sizeof cfg, plan, sizeof plan);
    }
    const int bad = !(eo.frob <= bound_for(g));
    if (bad || !(ratio > 0)) g_fail = 1;
    cm_bench_row_t row = {"gemm", name, "TFLOP/s", ours, peer, peer_name_of(&P.r), ratio,
                          ">=0.9", ratio >= 0.9 && !bad};
    report_with_extras(&row, NULL, NULL, 0, ok ? cfg : NULL);
    /* the kernel column from cm_gemm_explain on these very operands (leading dimensions,
     * offsets, strides); the whole plan under a case that misses its goal */
    printf("    %-30s %-7s kernel %-16s err ours %.2e cuBLAS %.2e%s\n", name, cls ? cls : "", cfg,
           eo.frob, ep.frob, bad ? "  BAD" : "");
    if (ok && !(ratio >= 0.9)) printf("      plan: %s\n", plan);
    release(&P);
    return bad ? NAN : ratio;
}

/* The sweep's case of precision index p, op_a transposed when t, shape i: its problem and
 * its name (sweep_<prec>_<shape>_<ops>) */
static gcase_t sweep_case(int p, int t, size_t i, char *name, size_t size) {
    const sweep_shape_t *s = &g_sweep[i];
    gcase_t g = {k_sweep_precs[p], t ? CM_GEMM_OP_T : CM_GEMM_OP_N, CM_GEMM_OP_N, s->m, s->n,
                 s->k};
    char shape[64];
    shape_name(&g, shape, sizeof shape);
    snprintf(name, size, "sweep_%s_%s_%cN", prec_tag(g.prec), shape, t ? 'T' : 'N');
    return g;
}

/* ------------------------------------------------------------------ --overhead */

#define OVH_CALLS 64 /* calls queued back to back in one timed round */
#define OVH_ROUNDS 7

static double median_of(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cm_bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Three costs of one call, in microseconds: alone (the sweep's measure: events around one call
 * on an idle stream, so host work before the launch counts), queued (events around OVH_CALLS
 * calls back to back: the device time a call takes when the host keeps ahead) and host (the
 * host's time to return from one call of those rounds). Medians; 0 on success. */
static int call_costs(prepared_t *P, int peer, double out[3]) {
    P->r.peer = peer;
    P->r.set = 0;
    cm_bench_stats_t s;
    if (cm_bench_time(run, &P->r, g_cs, 3, 31, &s) != 0) return -1;
    out[0] = s.median_ms * 1e3;
    cudaEvent_t e0 = NULL, e1 = NULL;
    double q[OVH_ROUNDS], h[OVH_ROUNDS];
    int rc = -1;
    if (cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess) goto done;
    for (int i = 0; i < OVH_ROUNDS; ++i) {
        if (cudaStreamSynchronize(g_cs) != cudaSuccess) goto done;
        if (cudaEventRecord(e0, g_cs) != cudaSuccess) goto done;
        const double t0 = cm_bench_now_us();
        for (int c = 0; c < OVH_CALLS; ++c)
            if (run(&P->r) != 0) goto done;
        const double t1 = cm_bench_now_us();
        float ms = 0.0f;
        if (cudaEventRecord(e1, g_cs) != cudaSuccess || cudaEventSynchronize(e1) != cudaSuccess ||
            cudaEventElapsedTime(&ms, e0, e1) != cudaSuccess)
            goto done;
        q[i] = 1e3 * (double)ms / OVH_CALLS;
        h[i] = (t1 - t0) / OVH_CALLS;
    }
    out[1] = median_of(q, OVH_ROUNDS);
    out[2] = median_of(h, OVH_ROUNDS);
    rc = 0;
done:
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    return rc;
}

/* --overhead: for the sweep's cases (CM_BENCH_SWEEP_ONLY selects), what a call costs alone,
 * queued and on the host, ours and cuBLAS's: where "alone" exceeds "queued", the device waited
 * for the host. A diagnostic: prints a table, writes no result rows. */
static void overhead(void) {
    printf("%-32s %-22s %9s %9s %9s   %9s %9s %9s\n", "case", "kernel", "alone us", "queued",
           "host", "cuBLAS", "queued", "host");
    for (int p = 0; p < 3; ++p)
        for (int t = 0; t < 2; ++t)
            for (size_t i = 0; i < g_nsweep; ++i) {
                char name[128];
                gcase_t g = sweep_case(p, t, i, name, sizeof name);
                if (!name_selected(name)) continue;
                prepared_t P;
                char cfg[48] = "?", plan[1024];
                double o[3], b[3];
                if (prepare_ex(&g, 1, 1, &P, 1000u + (uint32_t)i) != 0) {
                    fprintf(stderr, "bench_gemm: %s: setup failed\n", name);
                    g_fail = 1;
                    release(&P);
                    continue;
                }
                P.r.gemm_ex = 1;
                plan_of(&P.r, cfg, sizeof cfg, plan, sizeof plan);
                if (call_costs(&P, 0, o) != 0 || call_costs(&P, 1, b) != 0) {
                    fprintf(stderr, "bench_gemm: %s: timing failed\n", name);
                    g_fail = 1;
                } else {
                    printf("%-32s %-22s %9.2f %9.2f %9.2f   %9.2f %9.2f %9.2f\n", name, cfg, o[0],
                           o[1], o[2], b[0], b[1], b[2]);
                }
                release(&P);
            }
}

static void sweep(int list_only) {
    sweep_stats_t st[4];
    memset(st, 0, sizeof st);
    for (int p = 0; p < 4; ++p) st[p].worst = INFINITY;
    const double t0 = cm_bench_now_us();
    int index = 0;
    if (list_only) printf("sweep: %zu shapes x %d precisions x NN/TN\n", g_nsweep, g_sweep_precs);
    for (size_t i = 0; i < g_nsweep; ++i)
        for (int p = 0; p < g_sweep_precs; ++p)
            for (int t = 0; t < 2; ++t, ++index) {
                char name[96];
                gcase_t g = sweep_case(p, t, i, name, sizeof name);
                if (!name_selected(name)) continue;
                if (list_only) {
                    printf("  %-32s %s\n", name, g_sweep[i].cls);
                    continue;
                }
                const double ratio =
                    goal_case(name, &g, 1, g_sweep[i].cls, 1000u + (uint32_t)index);
                sweep_stats_t *x = &st[p];
                ++x->cases;
                if (!(ratio > 0)) {
                    ++x->failed;
                    continue;
                }
                ++x->timed;
                x->logsum += log(ratio);
                if (ratio < 0.9) ++x->under;
                if (ratio < x->worst) {
                    x->worst = ratio;
                    snprintf(x->worst_case, sizeof x->worst_case, "%s", name);
                }
            }
    if (list_only) return;
    printf("\nsweep summary (%d cases in %.1f s; goal >= 0.9x cuBLAS in each):\n",
           st[0].cases + st[1].cases + st[2].cases + st[3].cases,
           (cm_bench_now_us() - t0) * 1e-6);
    printf("  %-5s %6s %8s %-34s %9s %7s %7s\n", "prec", "cases", "worst", "worst case",
           "geo.mean", "<0.9x", "failed");
    for (int p = 0; p < g_sweep_precs; ++p) {
        const sweep_stats_t *x = &st[p];
        if (x->cases == 0) continue;
        printf("  %-5s %6d %7.3fx %-34s %8.3fx %7d %7d\n", prec_tag(k_sweep_precs[p]), x->cases,
               x->timed ? x->worst : NAN, x->timed ? x->worst_case : "-",
               x->timed ? exp(x->logsum / x->timed) : NAN, x->under, x->failed);
    }
    fflush(stdout);
}

static void batched(int list_only) {
    static const size_t shapes[2][4] = {{64, 512, 512, 512}, {1024, 64, 64, 64}};
    for (int s = 0; s < 2; ++s)
        for (int p = 0; p < 3; ++p)
            for (int t = 0; t < 2; ++t) {
                gcase_t g = {k_sweep_precs[p], t ? CM_GEMM_OP_T : CM_GEMM_OP_N, CM_GEMM_OP_N,
                             shapes[s][1], shapes[s][2], shapes[s][3]};
                char shape[64], name[96];
                shape_name(&g, shape, sizeof shape);
                snprintf(name, sizeof name, "batched_%s_%zux%s_%cN", prec_tag(g.prec),
                         shapes[s][0], shape, t ? 'T' : 'N');
                if (list_only) printf("  %s\n", name);
                else (void)goal_case(name, &g, shapes[s][0], "batched",
                                     500u + (uint32_t)(12 * s + 2 * p + t));
            }
}

/* ------------------------------------------------------------------ --3xtf32 */

static void json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *q = (const unsigned char *)(s ? s : ""); *q; ++q) {
        if (*q == '"' || *q == '\\') fprintf(f, "\\%c", *q);
        else if (*q < 0x20) fprintf(f, "\\u%04x", *q);
        else fputc(*q, f);
    }
    fputc('"', f);
}

static void json_num(FILE *f, const char *key, double v) {
    fprintf(f, ",\"%s\":", key);
    if (isfinite(v)) fprintf(f, "%.6g", v);
    else fputs("null", f);
}

/* cm_bench_report's table row and JSON line, the line with extra numeric fields: the table row
 * through cm_bench_report with CM_BENCH_RESULTS hidden, the line written here */
static void report_with_extras(const cm_bench_row_t *row, const char *const *keys,
                               const double *vals, int count, const char *kernel) {
    const char *path = getenv("CM_BENCH_RESULTS");
    char *saved = path && *path ? strdup(path) : NULL;
    if (saved) unsetenv("CM_BENCH_RESULTS");
    cm_bench_report(row);
    if (!saved) return;
    setenv("CM_BENCH_RESULTS", saved, 1);
    FILE *f = fopen(saved, "a");
    if (f == NULL) {
        perror(saved);
        free(saved);
        g_fail = 1;
        return;
    }
    const char *commit = getenv("CM_BENCH_COMMIT");
    char date[16];
    fputs("{\"bench\":", f);
    json_str(f, row->bench);
    fputs(",\"case\":", f);
    json_str(f, row->case_name);
    fputs(",\"unit\":", f);
    json_str(f, row->unit);
    json_num(f, "ours", row->ours);
    json_num(f, "peer", row->peer);
    fputs(",\"peer_name\":", f);
    json_str(f, row->peer_name);
    json_num(f, "ratio", row->ratio);
    fputs(",\"goal\":", f);
    json_str(f, row->goal);
    fprintf(f, ",\"meets\":%s,\"commit\":", row->meets ? "true" : "false");
    json_str(f, commit && *commit ? commit : "unknown");
    fputs(",\"date\":", f);
    json_str(f, cm_bench_date(date, sizeof date));
    for (int i = 0; i < count; ++i) json_num(f, keys[i], vals[i]);
    if (kernel != NULL) {
        fputs(",\"kernel\":", f);
        json_str(f, kernel);
    }
    fputs("}\n", f);
    if (fclose(f) != 0) {
        perror(saved);
        g_fail = 1;
    }
    free(saved);
}

static void three_tf32(int list_only) {
    static const size_t sizes[2] = {4096, 8192};
    for (int s = 0; s < 2; ++s)
        for (int t = 0; t < 2; ++t) {
            gcase_t g = {CM_GEMM_FP32_3XTF32, t ? CM_GEMM_OP_T : CM_GEMM_OP_N, CM_GEMM_OP_N, sizes[s],
                         sizes[s], sizes[s]};
            char shape[64], name[96];
            shape_name(&g, shape, sizeof shape);
            snprintf(name, sizeof name, "3xtf32_%s_%cN", shape, t ? 'T' : 'N');
            if (list_only) {
                printf("  %s\n", name);
                continue;
            }
            prepared_t P;
            errs_t eo = {NAN, NAN, NAN, 0}, ep = eo, e32 = eo, etf = eo;
            double ours = NAN, peer = NAN, ratio = NAN;
            const char *cfg = "?";
            const double flops = 2.0 * (double)g.m * (double)g.n * (double)g.k;
            const int ok = prepare_ex(&g, 1, SAMPLES_3X, &P, 700u + (uint32_t)(2 * s + t)) == 0;
            P.r.gemm_ex = 1;
            if (!ok) fprintf(stderr, "bench_gemm: %s: setup failed\n", name);
            if (ok) {
                eo = check_full(&P, 0);
                ep = check_full(&P, 1);
                P.r.prec = CM_GEMM_FP32; /* same inputs: our FP32 and TF32 for context */
                e32 = check_full(&P, 0);
                P.r.prec = CM_GEMM_TF32;
                etf = check_full(&P, 0);
                P.r.prec = CM_GEMM_FP32_3XTF32;
                double t_ours = -1, t_peer = -1;
                (void)time_pair(&P, 0, 0, &t_ours, &t_peer);
                if (t_ours > 0) ours = flops / t_ours * 1e-12;
                if (t_peer > 0) peer = flops / t_peer * 1e-12;
                if (t_ours > 0 && t_peer > 0) ratio = cm_bench_ratio_rate(ours, peer);
                else fprintf(stderr, "bench_gemm: %s: timing failed\n", name);
                (void)cm_gemm_config_name(0, g.prec, CM_GEMM_COL_MAJOR, g.oa, g.ob, g.m, g.n,
                                          g.k, &cfg);
            }
            const int bad = !(eo.frob <= bound_for(&g));
            if (bad || !(ratio > 0)) g_fail = 1;
            const int err_ok = eo.rel_mean <= ep.rel_mean * 1.0;
            cm_bench_row_t row = {"gemm", name, "TFLOP/s", ours, peer, peer_name_of(&P.r),
                                  ratio, ">=2.0 & err<=Sgemm", ratio >= 2.0 && err_ok && !bad};
            static const char *const keys[6] = {"err_ours",     "err_peer", "err_ours_max",
                                                "err_peer_max", "err_fp32", "err_tf32"};
            const double vals[6] = {eo.rel_mean, ep.rel_mean, eo.rel_max,
                                    ep.rel_max,  e32.rel_mean, etf.rel_mean};
            report_with_extras(&row, keys, vals, 6, NULL);
            printf("    %-28s kernel %-16s err |c-ref|/sum|ab| mean / max over %d samples:%s\n",
                   name, cfg, SAMPLES_3X, bad ? "  BAD" : "");
            printf("      3xTF32 (ours) %.3e / %.3e  cuBLAS FP32 %.3e / %.3e  (%s cuBLAS)\n",
                   eo.rel_mean, eo.rel_max, ep.rel_mean, ep.rel_max, err_ok ? "<=" : "ABOVE");
            printf("      our FP32      %.3e / %.3e  our TF32    %.3e / %.3e  (Frobenius: 3xTF32 "
                   "%.2e, cuBLAS %.2e)\n",
                   e32.rel_mean, e32.rel_max, etf.rel_mean, etf.rel_max, eo.frob, ep.frob);
            fflush(stdout);
            release(&P);
        }
}

#if CM_GEMM_TUNING
/* ------------------------------------------------------------------ --tune */

typedef struct tune_shape {
    size_t m, n, k;
} tune_shape_t;

static void tune(void) {
#define FFMA_NAME(id, bm, bn, bk, tm, tn, minb, wtx, form, stages, fallback, ship) "ffma:" #id,
    static const char *ffma[] = {CM__FFMA_CONFIGS(FFMA_NAME)};
#undef FFMA_NAME
    static const char *tc[] = {"mma:128x128", "mma:128x64", "mma:64x64", "sm90"};
    static const char *class_names[] = {"tiny", "small", "skinny", "large"};
    static const tune_shape_t reps[4][2] = {{{512, 512, 512}, {768, 384, 1024}},
                                            {{1024, 1024, 1024}, {1536, 1024, 2048}},
                                            {{8192, 8192, 128}, {65536, 128, 128}},
                                            {{4096, 4096, 4096}, {8192, 8192, 8192}}};
    static const cm_gemm_precision_t precs[3] = {CM_GEMM_FP32, CM_GEMM_TF32, CM_GEMM_BF16};
    const char *best[3][4];
    const char *probe = "?";
    (void)cm_gemm_config_name(0, CM_GEMM_BF16, CM_GEMM_COL_MAJOR, CM_GEMM_OP_T, CM_GEMM_OP_N, 4096,
                              4096, 4096, &probe);
    const int have_sm90 = strcmp(probe, "sm90") == 0; /* else "sm90" would run mma:128x128 */
    g_budget_s = 0.12;
    for (int f = 0; f < 3; ++f) {
        const char **names = f == 0 ? ffma : tc;
        const int count = f == 0 ? (int)(sizeof ffma / sizeof ffma[0]) : (have_sm90 ? 4 : 3);
        for (int cls = 0; cls < 4; ++cls) {
            double best_score = 0;
            int have_best = 0;
            best[f][cls] = "?";
            double peer_t[2] = {0, 0};
            for (int i = 0; i < count; ++i) {
                setenv("CUDAMODEL_GEMM_CONFIG", names[i], 1);
                double logsum = 0;
                int ok = 1;
                printf("tune %-4s %-6s %-16s", prec_tag(precs[f]), class_names[cls], names[i]);
                for (int s = 0; s < 2; ++s) {
                    gcase_t g = {precs[f], f == 0 ? CM_GEMM_OP_N : CM_GEMM_OP_T, CM_GEMM_OP_N,
                                 reps[cls][s].m, reps[cls][s].n, reps[cls][s].k};
                    prepared_t P;
                    if (prepare(&g, &P, 77u + (uint32_t)s) != 0) { ok = 0; release(&P); break; }
                    const double e = check(&P, 0);
                    const double t = time_one(&P, 0);
                    if (peer_t[s] <= 0) peer_t[s] = time_one(&P, 1); /* once per shape */
                    const double tp = peer_t[s];
                    const double fl = 2.0 * (double)g.m * (double)g.n * (double)g.k;
                    release(&P);
                    if (!(e <= bound_for(&g)) || t <= 0) { ok = 0; printf("  err %.1e BAD", e); break; }
                    printf("  %zux%zux%zu %6.1f TF/s (%.2fx)", g.m, g.n, g.k, fl / t * 1e-12, tp / t);
                    logsum += log(tp / t);
                }
                printf("\n");
                if (ok && (!have_best || logsum > best_score)) {
                    have_best = 1;
                    best_score = logsum;
                    best[f][cls] = names[i];
                }
            }
            unsetenv("CUDAMODEL_GEMM_CONFIG");
        }
    }
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    const char *commit = getenv("CM_BENCH_COMMIT");
    char date[16];
    printf("\n/* row for sm_%d%d from `bench_gemm --tune` on %s, commit %s, %s (best geometric-mean "
           "ratio to cuBLAS over each class's two shapes) */\n",
           prop.major, prop.minor, prop.name, commit ? commit : "unknown",
           cm_bench_date(date, sizeof date));
    for (int f = 0; f < 3; ++f) {
        printf("    {");
        for (int cls = 0; cls < 4; ++cls) {
            const char *b = best[f][cls];
            char macro[40];
            if (strncmp(b, "ffma:", 5) == 0) snprintf(macro, sizeof macro, "FF(%s)", b + 5);
            else if (strncmp(b, "mma:", 4) == 0) snprintf(macro, sizeof macro, "MM(%s)", b + 4);
            else if (strcmp(b, "sm90") == 0) snprintf(macro, sizeof macro, "S90");
            else snprintf(macro, sizeof macro, "?");
            printf("%s%s", macro, cls < 3 ? ", " : "");
        }
        printf("}%s   /* %s */\n", f < 2 ? "," : "", prec_tag(precs[f]));
    }
}

/* ------------------------------------------------------------------ --ops */

/* the layout cost of each configuration: column-major NN has op(B) K-contiguous (the kernels'
 * A' after normalisation), TN has both, NT neither, TT op(A) only */
static void ops_sweep(const char *const *configs, int count) {
    static const gcase_t shapes[] = {{CM_GEMM_FP32, CM_GEMM_OP_N, CM_GEMM_OP_N, 4096, 4096, 4096},
                                     {CM_GEMM_FP32, CM_GEMM_OP_N, CM_GEMM_OP_N, 8192, 8192, 8192},
                                     {CM_GEMM_FP32, CM_GEMM_OP_N, CM_GEMM_OP_N, 8192, 8192, 128},
                                     {CM_GEMM_FP32, CM_GEMM_OP_N, CM_GEMM_OP_N, 65536, 128, 128}};
    const char *table_choice[1] = {NULL};
    if (count == 0) {
        configs = table_choice;
        count = 1;
    }
    g_budget_s = 0.2;
    const char *only_ops = getenv("CM_BENCH_OPS"), *only_shapes = getenv("CM_BENCH_OPS_SHAPES");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
        for (int o = 0; o < 4; ++o) {
            gcase_t g = shapes[s];
            g.oa = (cm_gemm_op_t)(o >> 1);
            g.ob = (cm_gemm_op_t)(o & 1);
            const char tag[3] = {g.oa ? 'T' : 'N', g.ob ? 'T' : 'N', 0};
            char shape[64];
            shape_name(&g, shape, sizeof shape);
            if (!only_shapes && s >= 2) continue; /* default: the two squares */
            if ((only_ops && !strstr(only_ops, tag)) || (only_shapes && !strstr(only_shapes, shape)))
                continue;
            prepared_t P;
            if (prepare(&g, &P, 91u + (uint32_t)(4 * s + (size_t)o)) != 0) {
                g_fail = 1;
                release(&P);
                return;
            }
            const double tp = time_one(&P, 1);
            const double fl = 2.0 * (double)g.m * (double)g.n * (double)g.k;
            for (int i = 0; i < count; ++i) {
                if (configs[i]) setenv("CUDAMODEL_GEMM_CONFIG", configs[i], 1);
                else unsetenv("CUDAMODEL_GEMM_CONFIG");
                const char *cfg = "?";
                (void)cm_gemm_config_name(0, g.prec, CM_GEMM_COL_MAJOR, g.oa, g.ob, g.m, g.n,
                                          g.k, &cfg);
                const double e = check(&P, 0);
                const double t = time_one(&P, 0);
                const int bad = !(e <= bound_for(&g)) || t <= 0 || tp <= 0;
                if (bad) g_fail = 1;
                printf("ops fp32 %-14s %s %-19s %6.1f TF/s  cuBLAS %6.1f  %.3fx  err %.1e%s\n",
                       shape, tag, cfg, t > 0 ? fl / t * 1e-12 : 0, tp > 0 ? fl / tp * 1e-12 : 0,
                       t > 0 ? tp / t : 0, e, bad ? "  BAD" : "");
                fflush(stdout);
            }
            unsetenv("CUDAMODEL_GEMM_CONFIG");
            release(&P);
        }
}

#endif /* CM_GEMM_TUNING */


int main(int argc, char **argv) {
    int quick = 0, do_tune = 0, ops_at = 0, do_sweep = 0, do_batched = 0, do_3x = 0, list = 0;
    int do_overhead = 0;
    for (int i = 1; i < argc && !ops_at; ++i) {
        if (strcmp(argv[i], "--quick") == 0) quick = 1;
        else if (strcmp(argv[i], "--tune") == 0) do_tune = 1;
        else if (strcmp(argv[i], "--ops") == 0) ops_at = i + 1;
        else if (strcmp(argv[i], "--sweep") == 0) do_sweep = 1;
        else if (strcmp(argv[i], "--batched") == 0) do_batched = 1;
        else if (strcmp(argv[i], "--3xtf32") == 0) do_3x = 1;
        else if (strcmp(argv[i], "--list") == 0) list = 1;
        else if (strcmp(argv[i], "--overhead") == 0) do_overhead = 1;
        else {
            fprintf(stderr,
                    "usage: %s [--quick] [--sweep] [--batched] [--3xtf32] [--list] [--overhead] "
                    "[--tune] [--ops [CONFIG ...]]\n",
                    argv[0]);
            return 2;
        }
    }
    const int custom = custom_shapes();
    if (custom < 0) return 2;
    {
        const char *only = getenv("CM_BENCH_SWEEP_ONLY");
        if (custom && only != NULL && strstr(only, "3xtf32") != NULL) g_sweep_precs = 4;
    }
    if (custom && !list && getenv("CM_BENCH_RESULTS") != NULL) {
        /* the results file keeps the sweep: an experiment's shapes are printed only */
        fprintf(stderr, "bench_gemm: CM_BENCH_SWEEP_SHAPES is set: no rows go to "
                        "CM_BENCH_RESULTS in this run\n");
        unsetenv("CM_BENCH_RESULTS");
    }
    const int modes = do_sweep || do_batched || do_3x; /* none: the default run */
    if (list) {
        if (!modes) printf("default run: the fixed rows (the header of bench_gemm.c), then\n");
        if (!modes || do_batched) {
            printf("batched:\n");
            batched(1);
        }
        if (!modes || do_3x) {
            printf("3xtf32:\n");
            three_tf32(1);
        }
        if (do_sweep) sweep(1);
        return 0;
    }
#if !CM_GEMM_TUNING
    if (do_tune || ops_at) {
        fprintf(stderr, "bench_gemm: --tune and --ops need the tuning configurations: configure "
                        "with -DCUDAMODEL_BUILD_TUNING=ON\n");
        return 2;
    }
#endif
    if (!cm_bench_have_gpu("bench_gemm")) return 1;
    if (cm_device_open(0, &g_dev) != CM_OK) return report_fail("cm_device_open");
    if (cm_stream_acquire(g_dev, CM_STREAM_PRIORITY_LOW, &g_stream) != CM_OK ||
        cm_stream_cuda(g_stream, &g_cs) != CM_OK)
        return report_fail("acquiring the timing stream") ? 1 : 1;
    if (cublasCreate(&g_blas) != CUBLAS_STATUS_SUCCESS ||
        cublasSetStream(g_blas, g_cs) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "bench_gemm: cublasCreate / cublasSetStream failed\n");
        return 1;
    }
    cublasSetMathMode(g_blas, CUBLAS_DEFAULT_MATH);
#if CM_GEMM_TUNING
    if (ops_at) {
        ops_sweep((const char *const *)argv + ops_at, argc - ops_at);
    } else if (do_tune) {
        tune();
    } else
#endif
    if (do_overhead) {
        overhead();
    } else if (modes) {
        cm_bench_print_header();
        if (do_batched) batched(0);
        if (do_3x) three_tf32(0);
        if (do_sweep) sweep(0);
    } else {
        cm_bench_print_header();
        static const size_t fp32_sq[] = {512, 1024, 2048, 4096, 8192, 4093};
        const size_t nsq = quick ? 1 : sizeof fp32_sq / sizeof fp32_sq[0];
        for (size_t i = 0; i < nsq; ++i) {
            const size_t s = quick ? 4096 : fp32_sq[i];
            gcase_t g = {CM_GEMM_FP32, CM_GEMM_OP_N, CM_GEMM_OP_N, s, s, s};
            /* issue #15's FP32 parity: >= 1.0x cublasSgemm at 4096^3 and 8192^3 */
            const int big = s == 4096 || s == 8192;
            bench_case(&g, big ? ">=1.0" : ">=0.6", big ? 1.0 : 0.6, (uint32_t)i + 1);
        }
        if (!quick) {
            gcase_t g1 = {CM_GEMM_FP32, CM_GEMM_OP_N, CM_GEMM_OP_N, 8192, 8192, 128};
            gcase_t g2 = {CM_GEMM_FP32, CM_GEMM_OP_N, CM_GEMM_OP_N, 65536, 128, 128};
            gcase_t g3 = {CM_GEMM_FP32, CM_GEMM_OP_T, CM_GEMM_OP_N, 4096, 4096, 4096};
            bench_case(&g1, ">=0.6", 0.6, 11);
            bench_case(&g2, ">=0.6", 0.6, 12);
            bench_case(&g3, ">=1.0", 1.0, 13);
        }
        static const size_t tc_sq[] = {1024, 4096, 8192};
        for (int p = 1; p < 4; ++p)
            for (size_t i = quick ? 1 : 0; i < (quick ? 2u : 3u); ++i) {
                const size_t s = tc_sq[i];
                gcase_t g = {(cm_gemm_precision_t)p, CM_GEMM_OP_T, CM_GEMM_OP_N, s, s, s};
                const int goal = s >= 4096 && p < 3;
                bench_case(&g, goal ? ">=0.8" : NULL, 0.8, (uint32_t)(20 + p * 4 + (int)i));
            }
        /* matrix-vector shapes (the "gemv" kernel: bandwidth-bound, so the ratio is one of
         * bytes per second too); both orientations of the matrix: op N keeps the vector side's
         * dimension contiguous, op T the K dimension. Goal of issue #15: >= 0.9x cuBLAS */
        {
            static const size_t mv[][3] = {{8192, 1, 8192}, {1, 8192, 8192}, {4096, 1, 4096},
                                           {1, 4096, 4096}};
            const size_t nmv = quick ? 2 : sizeof mv / sizeof mv[0];
            for (int p = 0; p < (quick ? 1 : 4); ++p)
                for (size_t i = 0; i < nmv; ++i)
                    for (int t = 0; t < 2; ++t) {
                        /* the matrix operand transposed or not, the vector plain */
                        const cm_gemm_op_t oa = mv[i][1] == 1 && t ? CM_GEMM_OP_T : CM_GEMM_OP_N;
                        const cm_gemm_op_t ob = mv[i][0] == 1 && t ? CM_GEMM_OP_T : CM_GEMM_OP_N;
                        gcase_t g = {(cm_gemm_precision_t)p, oa, ob, mv[i][0], mv[i][1], mv[i][2]};
                        bench_case(&g, ">=0.9", 0.9, (uint32_t)(60 + 8 * p + 2 * (int)i + t));
                    }
        }
        if (!quick) /* NN, TF32 / BF16 / BF16-out at 4096^3 and 8192^3: issue #15's goal for
                     * problems that are not TN, >= 0.95x cuBLAS */
            for (int p = 1; p < 4; ++p)
                for (size_t i = 1; i < 3; ++i) {
                    gcase_t g = {(cm_gemm_precision_t)p, CM_GEMM_OP_N, CM_GEMM_OP_N, tc_sq[i],
                                 tc_sq[i], tc_sq[i]};
                    bench_case(&g, ">=0.95", 0.95, (uint32_t)(40 + 2 * p + (int)i));
                }
        if (!quick) {
            batched(0);
            three_tf32(0);
        }
    }
    cublasDestroy(g_blas);
    (void)cm_stream_release(g_stream);
    (void)cm_device_close(g_dev);
    return g_fail;
}
