/*
 * bench_gemm: cm_gemm() against cuBLAS, measured in the same run (bench "gemm").
 *
 *   fp32_<shape>_<ops>   CM_GEMM_FP32 vs cublasSgemm (default math: no tensor cores), TFLOP/s.
 *                        Goal >= 0.9x at 4096^3 and 8192^3, >= 0.6x on the sweep (square 512 ..
 *                        8192, 4093^3, M = N = 8192 with K = 128, 65536 x 128 x 128)
 *   tf32_<shape>_TN      CM_GEMM_TF32 vs cublasGemmEx CUBLAS_COMPUTE_32F_FAST_TF32: >= 0.8x at
 *                        4096^3 / 8192^3
 *   bf16_<shape>_TN      CM_GEMM_BF16 (bf16 in, FP32 accumulate and out) vs cublasGemmEx
 *                        CUDA_R_16BF -> CUDA_R_32F, CUBLAS_COMPUTE_32F: >= 0.8x at 4096^3 / 8192^3
 *   bf16o_<shape>_TN     CM_GEMM_BF16_OUT_BF16 vs the same with a bf16 C (no goal)
 *   tf32/bf16_<shape>_NN 4096^3 / 8192^3 column-major NN (op(A) not contiguous along K: on
 *                        Hopper the transposing pre-pass + wgmma, "sm90+pack") (no goal)
 *
 * All matrices column-major (cuBLAS's order); <ops> is op_a op_b (NN: C = A B; TN: C = A^T B,
 * both operands contiguous along K). alpha = 1, beta = 0. Inputs random in [-1, 1) drawn on the
 * device; shapes whose A + B are smaller than 256 MiB rotate among several input sets (> 4x the
 * 60 MiB L2 of an H200). CUDA-event timing, median of REPS after warm-up, on one stream
 * acquired from the device's pool: cm_gemm is given it, cuBLAS (cublasSetStream) and the events
 * its CUDA stream (a NULL stream would make every cm_gemm synchronous). cm_gemm's operand offsets
 * are in bytes.
 * Every case is checked once, ours and cuBLAS's, on 256 sampled entries against a float64 GPU
 * reference (relative Frobenius error printed; "BAD" past the bound of tests/gpu/test_gpu_gemm.c).
 *
 * Usage: bench_gemm [--quick] [--tune] [--ops [CONFIG ...]]
 *   --quick  only 4096^3 of each precision
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
#include "../kernels/gemm.h" /* CM__FFMA_CONFIGS: the names of every FFMA configuration */

cudaError_t bench_gemm_fill(void *p, size_t n, int bf16, uint32_t seed, cudaStream_t s);
cudaError_t bench_gemm_ref(int bf16, int opa, int opb, const void *A, long long lda,
                           const void *B, long long ldb, int k, const int *ij, int count,
                           double *out, cudaStream_t s);
cudaError_t bench_gemm_gather(const void *C, long long ldc, int bf16, const int *ij, int count,
                              double *out, cudaStream_t s);

#define ROT_BYTES ((size_t)256 << 20)
#define SAMPLES 256

static cm_device_t *g_dev;
static cm_stream_t *g_stream; /* the timing stream: cm_gemm is queued on it */
static cudaStream_t g_cs;     /* its CUDA stream: cuBLAS, the checks' kernels and the events */
static cublasHandle_t g_blas;
static int g_fail;

typedef struct run_ctx {
    int peer; /* 0: ours, 1: cuBLAS */
    cm_gemm_precision_t prec;
    cm_gemm_op_t oa, ob;
    size_t m, n, k, lda, ldb, ldc;
    cm_buffer_t *ab, *c; /* all input sets; C */
    unsigned char *pab, *pc;
    size_t set_bytes, a_bytes, in_elem;
    size_t sets, set;
} run_ctx_t;

static int report_fail(const char *what) {
    char report[2048];
    cm_error_format(NULL, report, sizeof report);
    fprintf(stderr, "bench_gemm: %s failed:\n%s\n", what, report);
    return -1;
}

static int run(void *p) {
    run_ctx_t *r = p;
    const size_t s = r->set;
    r->set = (r->set + 1) % r->sets;
    const size_t a_off = s * r->set_bytes, b_off = a_off + r->a_bytes; /* bytes, 256-aligned */
    if (!r->peer) {
        cm_status_t st = cm_gemm(g_stream, r->prec, CM_GEMM_COL_MAJOR, r->oa, r->ob, r->m, r->n,
                                 r->k, 1.0f, r->ab, a_off, r->lda, r->ab, b_off, r->ldb, 0.0f,
                                 r->c, 0, r->ldc);
        return st == CM_OK ? 0 : report_fail("cm_gemm");
    }
    const float one = 1.0f, zero = 0.0f;
    const cublasOperation_t oa = r->oa == CM_GEMM_OP_T ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t ob = r->ob == CM_GEMM_OP_T ? CUBLAS_OP_T : CUBLAS_OP_N;
    const void *A = r->pab + a_off, *B = r->pab + b_off;
    cublasStatus_t bs;
    switch (r->prec) {
    case CM_GEMM_FP32:
        bs = cublasSgemm(g_blas, oa, ob, (int)r->m, (int)r->n, (int)r->k, &one, A, (int)r->lda, B,
                         (int)r->ldb, &zero, (float *)r->pc, (int)r->ldc);
        break;
    case CM_GEMM_TF32:
        bs = cublasGemmEx(g_blas, oa, ob, (int)r->m, (int)r->n, (int)r->k, &one, A, CUDA_R_32F,
                          (int)r->lda, B, CUDA_R_32F, (int)r->ldb, &zero, r->pc, CUDA_R_32F,
                          (int)r->ldc, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
        break;
    default:
        bs = cublasGemmEx(g_blas, oa, ob, (int)r->m, (int)r->n, (int)r->k, &one, A, CUDA_R_16BF,
                          (int)r->lda, B, CUDA_R_16BF, (int)r->ldb, &zero, r->pc,
                          r->prec == CM_GEMM_BF16 ? CUDA_R_32F : CUDA_R_16BF, (int)r->ldc,
                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        break;
    }
    if (bs != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "bench_gemm: cuBLAS status %d\n", (int)bs);
        return -1;
    }
    return 0;
}

typedef struct gcase {
    cm_gemm_precision_t prec;
    cm_gemm_op_t oa, ob;
    size_t m, n, k;
} gcase_t;

typedef struct prepared {
    run_ctx_t r;
    int *d_ij;
    double *d_ref, *d_got;
} prepared_t;

static const char *prec_tag(cm_gemm_precision_t p) {
    static const char *t[] = {"fp32", "tf32", "bf16", "bf16o"};
    return t[p];
}

static int prepare(const gcase_t *g, prepared_t *P, uint32_t seed) {
    memset(P, 0, sizeof *P);
    run_ctx_t *r = &P->r;
    r->prec = g->prec;
    r->oa = g->oa;
    r->ob = g->ob;
    r->m = g->m;
    r->n = g->n;
    r->k = g->k;
    const int bf = g->prec >= CM_GEMM_BF16;
    r->in_elem = bf ? 2 : 4;
    const size_t out_elem = g->prec == CM_GEMM_BF16_OUT_BF16 ? 2 : 4;
    /* column-major stored shapes */
    const size_t a_rows = g->oa == CM_GEMM_OP_N ? g->m : g->k;
    const size_t a_cols = g->oa == CM_GEMM_OP_N ? g->k : g->m;
    const size_t b_rows = g->ob == CM_GEMM_OP_N ? g->k : g->n;
    const size_t b_cols = g->ob == CM_GEMM_OP_N ? g->n : g->k;
    r->lda = a_rows;
    r->ldb = b_rows;
    r->ldc = g->m;
    r->a_bytes = (a_rows * a_cols * r->in_elem + 255) / 256 * 256;
    r->set_bytes = r->a_bytes + (b_rows * b_cols * r->in_elem + 255) / 256 * 256;
    r->sets = (ROT_BYTES + r->set_bytes - 1) / r->set_bytes;
    if (r->sets < 1) r->sets = 1;
    if (r->sets > 64) r->sets = 64;
    if (cm_buffer_create(g_dev, r->sets * r->set_bytes, &r->ab) != CM_OK ||
        cm_buffer_create(g_dev, g->m * g->n * out_elem, &r->c) != CM_OK)
        return report_fail("cm_buffer_create");
    void *p = NULL;
    (void)cm_buffer_device_ptr(r->ab, &p);
    r->pab = p;
    (void)cm_buffer_device_ptr(r->c, &p);
    r->pc = p;
    if (bench_gemm_fill(r->pab, r->sets * r->set_bytes / r->in_elem, bf, seed, 0) != cudaSuccess)
        return -1;
    /* sample positions */
    int ij[2 * SAMPLES];
    uint64_t x = 0x9E3779B97F4A7C15ull ^ seed;
    for (int s = 0; s < SAMPLES; ++s) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        ij[2 * s] = (int)(x % g->m);
        ij[2 * s + 1] = (int)((x >> 32) % g->n);
    }
    if (cudaMalloc((void **)&P->d_ij, sizeof ij) != cudaSuccess ||
        cudaMalloc((void **)&P->d_ref, SAMPLES * 8) != cudaSuccess ||
        cudaMalloc((void **)&P->d_got, SAMPLES * 8) != cudaSuccess ||
        cudaMemcpy(P->d_ij, ij, sizeof ij, cudaMemcpyHostToDevice) != cudaSuccess)
        return -1;
    if (bench_gemm_ref(bf, g->oa == CM_GEMM_OP_T, g->ob == CM_GEMM_OP_T, r->pab, (long long)r->lda,
                       r->pab + r->a_bytes, (long long)r->ldb, (int)g->k, P->d_ij, SAMPLES,
                       P->d_ref, 0) != cudaSuccess)
        return -1;
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : -1;
}

static void release(prepared_t *P) {
    (void)cm_buffer_destroy(P->r.ab);
    (void)cm_buffer_destroy(P->r.c);
    cudaFree(P->d_ij);
    cudaFree(P->d_ref);
    cudaFree(P->d_got);
}

/* one call of ours or the peer on set 0, then the sampled relative error; the poison, the call
 * and the gather in order on the timing stream (it does not synchronise with the legacy one) */
static double check(prepared_t *P, int peer) {
    run_ctx_t *r = &P->r;
    r->peer = peer;
    r->set = 0;
    if (cudaMemsetAsync(r->pc, 0xFF, r->m * r->n * (r->prec == CM_GEMM_BF16_OUT_BF16 ? 2 : 4),
                        g_cs) != cudaSuccess ||
        run(r) != 0)
        return NAN;
    if (bench_gemm_gather(r->pc, (long long)r->ldc, r->prec == CM_GEMM_BF16_OUT_BF16, P->d_ij,
                          SAMPLES, P->d_got, g_cs) != cudaSuccess ||
        cudaStreamSynchronize(g_cs) != cudaSuccess)
        return NAN;
    double ref[SAMPLES], got[SAMPLES];
    if (cudaMemcpy(ref, P->d_ref, sizeof ref, cudaMemcpyDeviceToHost) != cudaSuccess ||
        cudaMemcpy(got, P->d_got, sizeof got, cudaMemcpyDeviceToHost) != cudaSuccess)
        return NAN;
    double num = 0, den = 0;
    for (int s = 0; s < SAMPLES; ++s) {
        if (!isfinite(got[s])) return NAN;
        num += (got[s] - ref[s]) * (got[s] - ref[s]);
        den += ref[s] * ref[s];
    }
    return sqrt(num / (den > 0 ? den : 1));
}

static double bound_for(const gcase_t *g) {
    switch (g->prec) {
    case CM_GEMM_FP32: return 1e-6 * sqrt((double)g->k) + 1e-6;
    case CM_GEMM_TF32: return 1e-3;
    case CM_GEMM_BF16: return 1e-4; /* inputs are bf16 already: only the FP32 sums */
    default: return 1e-2;
    }
}

/* median seconds of ours (peer 0) or cuBLAS (1); -1 on failure */
static double g_budget_s = 0.3; /* timed seconds per measurement (--tune: less) */

static double time_one(prepared_t *P, int peer) {
    P->r.peer = peer;
    P->r.set = 0;
    const double flops = 2.0 * (double)P->r.m * (double)P->r.n * (double)P->r.k;
    /* about g_budget_s of timed calls, 5..50 */
    int reps = (int)(g_budget_s / (flops / 40e12));
    if (reps < 5) reps = 5;
    if (reps > 50) reps = 50;
    cm_bench_stats_t s;
    if (cm_bench_time(run, &P->r, g_cs, 3, reps, &s) != 0) return -1;
    return s.median_ms * 1e-3;
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
    const double t_ours = time_one(&P, 0), t_peer = time_one(&P, 1);
    const double flops = 2.0 * (double)g->m * (double)g->n * (double)g->k;
    const char *cfg = "?";
    (void)cm_gemm_config_name(0, g->prec, CM_GEMM_COL_MAJOR, g->oa, g->ob, g->m, g->n, g->k, &cfg);
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
    const char *peer_name = g->prec == CM_GEMM_FP32   ? "cublasSgemm"
                            : g->prec == CM_GEMM_TF32 ? "cublasGemmEx_FAST_TF32"
                                                      : "cublasGemmEx_BF16";
    cm_bench_row_t row = {"gemm", name, "TFLOP/s", ours, peer, peer_name, ratio,
                          goal ? goal : "-", goal ? ratio >= goal_ratio && !bad : !bad};
    cm_bench_report(&row);
    printf("    %-28s kernel %-16s err ours %.2e cuBLAS %.2e%s\n", name, cfg, e_ours, e_peer,
           bad ? "  BAD" : "");
    release(&P);
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
    int quick = 0, do_tune = 0, ops_at = 0;
    for (int i = 1; i < argc && !ops_at; ++i) {
        if (strcmp(argv[i], "--quick") == 0) quick = 1;
        else if (strcmp(argv[i], "--tune") == 0) do_tune = 1;
        else if (strcmp(argv[i], "--ops") == 0) ops_at = i + 1;
        else {
            fprintf(stderr, "usage: %s [--quick] [--tune] [--ops [CONFIG ...]]\n", argv[0]);
            return 2;
        }
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
    {
        cm_bench_print_header();
        static const size_t fp32_sq[] = {512, 1024, 2048, 4096, 8192, 4093};
        const size_t nsq = quick ? 1 : sizeof fp32_sq / sizeof fp32_sq[0];
        for (size_t i = 0; i < nsq; ++i) {
            const size_t s = quick ? 4096 : fp32_sq[i];
            gcase_t g = {CM_GEMM_FP32, CM_GEMM_OP_N, CM_GEMM_OP_N, s, s, s};
            const int big = s == 4096 || s == 8192;
            bench_case(&g, big ? ">=0.9" : ">=0.6", big ? 0.9 : 0.6, (uint32_t)i + 1);
        }
        if (!quick) {
            gcase_t g1 = {CM_GEMM_FP32, CM_GEMM_OP_N, CM_GEMM_OP_N, 8192, 8192, 128};
            gcase_t g2 = {CM_GEMM_FP32, CM_GEMM_OP_N, CM_GEMM_OP_N, 65536, 128, 128};
            gcase_t g3 = {CM_GEMM_FP32, CM_GEMM_OP_T, CM_GEMM_OP_N, 4096, 4096, 4096};
            bench_case(&g1, ">=0.6", 0.6, 11);
            bench_case(&g2, ">=0.6", 0.6, 12);
            bench_case(&g3, ">=0.9", 0.9, 13);
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
        if (!quick) /* NN: on Hopper the transposing pre-pass + wgmma ("sm90+pack"), else
                     * mma.sync; no goal of the (its TF32 / BF16 rows are TN) */
            for (int p = 1; p < 3; ++p)
                for (size_t i = 1; i < 3; ++i) {
                    gcase_t g = {(cm_gemm_precision_t)p, CM_GEMM_OP_N, CM_GEMM_OP_N, tc_sq[i],
                                 tc_sq[i], tc_sq[i]};
                    bench_case(&g, NULL, 0, (uint32_t)(40 + 2 * p + (int)i));
                }
    }
    cublasDestroy(g_blas);
    (void)cm_stream_release(g_stream);
    (void)cm_device_close(g_dev);
    return g_fail;
}
