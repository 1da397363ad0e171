/*
 * cm_gemm() and cm_gemm_strided_batched() from several host threads at once, on one device.
 *
 * Eight threads (four under compute-sanitizer) start together behind a gate; each runs the
 * same list of products, starting at its own place in it, so that the first calls of the
 * process reach every kernel family at the same time (the per-device kernel attributes, the
 * environment override and the device facts are prepared by whichever thread gets there
 * first), and then every thread runs every product. The products cover the dispatch's
 * classes: matrix-vector in both orientations, skinny (a side of 7 with odd leading
 * dimensions), split-K (small C, long K), the staging of misaligned operands (leading
 * dimensions padded by 3, matrices one element off), the large tiles (Hopper's wgmma kernel
 * where the device has it), 3xTF32, BF16 with a BF16 C, and a strided batch. Each thread
 * alternates its own pooled stream and the synchronous NULL stream.
 *
 * Inputs random in [-1, 1), for TF32 and BF16 drawn as values of those types, so that every
 * kernel multiplies exactly the inputs whether it rounds, truncates or runs in FP32, and the
 * error is only the sums'. Checks, per product: sampled elements of C against a float64
 * reference, as a relative Frobenius error within gemm_check_bound (gemm_check.h: bounds for
 * sums of K random-sign terms); every element of C finite; every element of C's buffer
 * outside the matrices (the padding between rows, the tail) untouched. Then each thread runs
 * its whole list a second time with the same inputs: every C must come out bit for bit as in
 * the first round (the kernels use no atomics and sum in a fixed order, so a difference means
 * one thread's work read or wrote another's, e.g. scratch of the staging or of split-K).
 * Inputs fresh per thread and product; C poisoned with NaN where beta is 0.
 *
 * cmocka's assertions longjmp and are not for other threads: each worker records its first
 * failure (with the library's report) and the test asserts after joining them.
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/kernels.h>
#include <cudamodel/status.h>
#include <cudamodel/stream.h>

#include "gemm_check.h"

typedef struct tcase {
    cm_gemm_precision_t prec;
    cm_gemm_layout_t layout;
    cm_gemm_op_t oa, ob;
    size_t m, n, k;
    size_t batch; /* 1: cm_gemm; more: cm_gemm_strided_batched */
    size_t pad;   /* added to each minimal leading dimension */
    size_t off;   /* element offset of each operand in its buffer */
    float alpha, beta;
} tcase_t;

#define N_ CM_GEMM_OP_N
#define T_ CM_GEMM_OP_T
#define ROW CM_GEMM_ROW_MAJOR
#define COL CM_GEMM_COL_MAJOR

static const tcase_t cases[] = {
    {CM_GEMM_FP32, ROW, N_, N_, 517, 389, 700, 1, 0, 0, 1.0f, 0.0f},         /* FFMA, edges */
    {CM_GEMM_TF32, COL, T_, N_, 1024, 768, 512, 1, 0, 0, 1.0f, 0.5f},        /* large tiles */
    {CM_GEMM_BF16, ROW, N_, N_, 1000, 1000, 300, 1, 3, 1, -0.5f, 0.0f},      /* staged */
    {CM_GEMM_BF16_OUT_BF16, COL, N_, T_, 640, 520, 1024, 1, 0, 0, 1.0f, 0.0f},
    {CM_GEMM_FP32_3XTF32, ROW, N_, N_, 1024, 1024, 512, 1, 0, 0, 1.0f, 0.0f},
    {CM_GEMM_FP32, COL, N_, N_, 1, 4096, 2048, 1, 0, 0, 1.0f, 0.0f},         /* matrix-vector */
    {CM_GEMM_BF16, ROW, T_, N_, 3000, 1, 1000, 1, 0, 0, 2.0f, 1.0f},         /* matrix-vector */
    {CM_GEMM_TF32, COL, N_, N_, 7, 3001, 1501, 1, 0, 0, 1.0f, 0.0f},         /* skinny */
    {CM_GEMM_TF32, ROW, N_, N_, 64, 96, 8192, 1, 0, 0, 1.0f, 0.0f},          /* split-K */
    {CM_GEMM_BF16, COL, N_, N_, 128, 96, 200, 16, 0, 0, 1.0f, -1.0f},        /* batched */
    {CM_GEMM_FP32, ROW, T_, T_, 300, 200, 4096, 1, 3, 1, 1.0f, 0.0f},        /* split-K, odd */
    {CM_GEMM_TF32, COL, N_, N_, 3001, 127, 1000, 1, 3, 1, 1.0f, 0.0f},       /* staged */
};
#define N_CASES (sizeof cases / sizeof cases[0])

/* an input in [-1, 1) as a value of p's input type (gemm_check_input) */
static float input(cm_gemm_precision_t p, uint64_t *rng) {
    return gemm_check_input(p, (float)cm_test_rand_unit(rng));
}

/* One product's geometry: stored rows / columns of each operand, leading dimensions, the
 * elements one matrix spans, the strides of the batch and the buffers' elements */
typedef struct geom {
    int row, bf, cbf;
    size_t lda, ldb, ldc, span_a, span_b, span_c, sa, sb, sc, a_el, b_el, c_el;
} geom_t;

static geom_t geometry(const tcase_t *g) {
    geom_t q;
    q.row = g->layout == CM_GEMM_ROW_MAJOR;
    q.bf = g->prec == CM_GEMM_BF16 || g->prec == CM_GEMM_BF16_OUT_BF16;
    q.cbf = g->prec == CM_GEMM_BF16_OUT_BF16;
    const size_t ar = g->oa == CM_GEMM_OP_N ? g->m : g->k, ac = g->oa == CM_GEMM_OP_N ? g->k : g->m;
    const size_t br = g->ob == CM_GEMM_OP_N ? g->k : g->n, bc = g->ob == CM_GEMM_OP_N ? g->n : g->k;
    q.lda = (q.row ? ac : ar) + g->pad;
    q.ldb = (q.row ? bc : br) + g->pad;
    q.ldc = (q.row ? g->n : g->m) + g->pad;
    q.span_a = (q.row ? ar : ac) * q.lda;
    q.span_b = (q.row ? br : bc) * q.ldb;
    q.span_c = (q.row ? g->m : g->n) * q.ldc;
    /* a batch's matrices follow each other, 5 elements apart (odd: misaligned if pad is) */
    q.sa = q.span_a + (g->pad ? 5 : 0);
    q.sb = q.span_b + (g->pad ? 5 : 0);
    q.sc = q.span_c + (g->pad ? 5 : 0);
    q.a_el = g->off + (g->batch - 1) * q.sa + q.span_a + 7;
    q.b_el = g->off + (g->batch - 1) * q.sb + q.span_b + 7;
    q.c_el = g->off + (g->batch - 1) * q.sc + q.span_c + 7;
    return q;
}

#define SAMPLES 384 /* sampled elements of C per matrix of the batch */

/* The start: every worker waits until the test has started them all (go 1), or gives up when
 * one could not be started (go -1) */
typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int go;
} gate_t;

static int gate_wait(gate_t *g) {
    pthread_mutex_lock(&g->mu);
    while (g->go == 0) pthread_cond_wait(&g->cv, &g->mu);
    const int go = g->go;
    pthread_mutex_unlock(&g->mu);
    return go;
}

static void gate_open(gate_t *g, int go) {
    pthread_mutex_lock(&g->mu);
    g->go = go;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

typedef struct worker {
    int id;
    gate_t *start;
    cm_stream_t *stream;
    uint64_t rng;
    uint64_t hash[N_CASES]; /* round 0's bits of C, per product */
    size_t runs;
    char fail[1024]; /* the first failure, "" when none */
} worker_t;

static void failf(worker_t *w, const char *fmt, ...) {
    if (w->fail[0] != '\0') return;
    int n = snprintf(w->fail, sizeof w->fail, "thread %d: ", w->id);
    if (n < 0 || (size_t)n >= sizeof w->fail) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->fail + n, sizeof w->fail - (size_t)n, fmt, ap);
    va_end(ap);
}

/* a failed call: its status and the library's report */
static void fail_call(worker_t *w, const char *what, cm_status_t st) {
    char report[640];
    (void)cm_error_format(NULL, report, sizeof report);
    failf(w, "%s returned %s: %s", what, cm_status_string(st), report);
}

#define CALL(w, what, expr)                                                                  \
    do {                                                                                     \
        const cm_status_t st_ = (expr);                                                      \
        if (st_ != CM_OK) {                                                                  \
            fail_call((w), (what), st_);                                                     \
            goto out;                                                                        \
        }                                                                                    \
    } while (0)

static uint64_t fnv1a(const void *p, size_t n) {
    const unsigned char *b = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* Runs cases[ci] once on stream s (NULL: synchronous) with inputs from seed; round 0 keeps
 * the bits of C in w->hash[ci], later rounds compare with them. */
static void run_one(worker_t *w, size_t ci, cm_stream_t *s, uint64_t seed, int round) {
    const tcase_t *g = &cases[ci];
    const geom_t q = geometry(g);
    const size_t in_sz = q.bf ? 2 : 4, out_sz = q.cbf ? 2 : 4;
    float *A = malloc(q.a_el * 4), *B = malloc(q.b_el * 4);
    float *C0 = malloc(q.c_el * 4), *C = malloc(q.c_el * 4);
    void *hA = malloc(q.a_el * in_sz), *hB = malloc(q.b_el * in_sz), *hC = malloc(q.c_el * out_sz);
    cm_buffer_t *dA = NULL, *dB = NULL, *dC = NULL;
    const char *name = "?";
    if (!A || !B || !C0 || !C || !hA || !hB || !hC) {
        failf(w, "out of host memory");
        goto out;
    }
    uint64_t rng = seed;
    for (size_t i = 0; i < q.a_el; ++i) A[i] = input(g->prec, &rng);
    for (size_t i = 0; i < q.b_el; ++i) B[i] = input(g->prec, &rng);
    for (size_t i = 0; i < q.c_el; ++i) {
        if (g->beta == 0.0f) {
            const uint32_t nan = 0xffffffffu; /* must never be read */
            memcpy(&C0[i], &nan, 4);
        } else {
            C0[i] = (float)cm_test_rand_unit(&rng);
        }
    }
    if (q.bf) {
        cm_bf16_from_float_array(hA, A, q.a_el);
        cm_bf16_from_float_array(hB, B, q.b_el);
    } else {
        memcpy(hA, A, q.a_el * 4);
        memcpy(hB, B, q.b_el * 4);
    }
    if (q.cbf) {
        cm_bf16_from_float_array(hC, C0, q.c_el);
        cm_bf16_to_float_array(C0, hC, q.c_el); /* beta * C reads the bf16 C */
    } else {
        memcpy(hC, C0, q.c_el * 4);
    }
    (void)cm_gemm_config_name(0, g->prec, g->layout, g->oa, g->ob, g->m, g->n, g->k, &name);

    CALL(w, "cm_buffer_create", cm_buffer_create(cm_test_gpu.dev, q.a_el * in_sz, &dA));
    CALL(w, "cm_buffer_create", cm_buffer_create(cm_test_gpu.dev, q.b_el * in_sz, &dB));
    CALL(w, "cm_buffer_create", cm_buffer_create(cm_test_gpu.dev, q.c_el * out_sz, &dC));
    CALL(w, "cm_buffer_copy_from_host", cm_buffer_copy_from_host(s, dA, 0, hA, q.a_el * in_sz));
    CALL(w, "cm_buffer_copy_from_host", cm_buffer_copy_from_host(s, dB, 0, hB, q.b_el * in_sz));
    CALL(w, "cm_buffer_copy_from_host", cm_buffer_copy_from_host(s, dC, 0, hC, q.c_el * out_sz));
    if (g->batch == 1)
        CALL(w, "cm_gemm",
             cm_gemm(s, g->prec, g->layout, g->oa, g->ob, g->m, g->n, g->k, g->alpha, dA,
                     g->off * in_sz, q.lda, dB, g->off * in_sz, q.ldb, g->beta, dC,
                     g->off * out_sz, q.ldc));
    else
        CALL(w, "cm_gemm_strided_batched",
             cm_gemm_strided_batched(s, g->prec, g->layout, g->oa, g->ob, g->m, g->n, g->k,
                                     g->alpha, dA, g->off * in_sz, q.lda, q.sa, dB,
                                     g->off * in_sz, q.ldb, q.sb, g->beta, dC, g->off * out_sz,
                                     q.ldc, q.sc, g->batch));
    CALL(w, "cm_buffer_copy_to_host", cm_buffer_copy_to_host(s, dC, 0, hC, q.c_el * out_sz));
    if (s != NULL) CALL(w, "cm_stream_synchronize", cm_stream_synchronize(s));
    if (q.cbf) cm_bf16_to_float_array(C, hC, q.c_el);
    else memcpy(C, hC, q.c_el * 4);

    const uint64_t h = fnv1a(hC, q.c_el * out_sz);
    if (round == 0) {
        w->hash[ci] = h;
    } else if (h != w->hash[ci]) {
        failf(w, "%s %s %c%c %zux%zux%zu batch %zu (%s): C differs from the same call's in "
                 "round 0 (same inputs)",
              gemm_check_prec_name((int)g->prec), q.row ? "row" : "col", g->oa ? 'T' : 'N',
              g->ob ? 'T' : 'N', g->m, g->n, g->k, g->batch, name);
        goto out;
    }

    /* outside the matrices: untouched; inside: finite */
    const size_t outer = q.row ? g->m : g->n, inner = q.row ? g->n : g->m;
    size_t outside_bad = 0, nonfinite = 0;
    for (size_t e = 0; e < q.c_el; ++e) {
        int inside = 0;
        if (e >= g->off) {
            const size_t rel = e - g->off, z = rel / q.sc, r = rel % q.sc;
            inside = z < g->batch && r < q.span_c && r % q.ldc < inner && r / q.ldc < outer;
        }
        if (!inside) {
            if (memcmp(&C[e], &C0[e], 4) != 0 && !(isnan(C[e]) && isnan(C0[e]))) ++outside_bad;
        } else if (!isfinite(C[e])) {
            ++nonfinite;
        }
    }
    /* sampled elements of every matrix against float64 */
    double e_num = 0, e_den = 0;
    const size_t total = g->m * g->n;
    const size_t step = total > SAMPLES ? total / SAMPLES : 1;
    for (size_t z = 0; z < g->batch; ++z) {
        const float *Az = A + g->off + z * q.sa, *Bz = B + g->off + z * q.sb;
        for (size_t t = (z * 7) % step; t < total; t += step) {
            const size_t i = t / g->n, j = t % g->n;
            const size_t e = g->off + z * q.sc + (q.row ? i * q.ldc + j : j * q.ldc + i);
            if (!isfinite(C[e])) continue; /* counted above */
            const double base = g->beta != 0.0f ? (double)g->beta * C0[e] : 0.0;
            const double dot =
                gemm_check_dot(g->layout, g->oa, g->ob, g->k, Az, q.lda, Bz, q.ldb, i, j, 0);
            const double ref = (double)g->alpha * dot + base;
            e_num += (C[e] - ref) * (C[e] - ref);
            e_den += ref * ref;
        }
    }
    const double err = e_den > 0 ? sqrt(e_num / e_den) : sqrt(e_num);
    const double bound = gemm_check_bound(g->prec, g->k);
    if (!(err <= bound) || outside_bad || nonfinite)
        failf(w, "%s %s %c%c %zux%zux%zu batch %zu pad %zu off %zu (%s), round %d, %s stream: "
                 "error %.3g (bound %.3g); %zu non-finite; %zu touched outside C",
              gemm_check_prec_name((int)g->prec), q.row ? "row" : "col", g->oa ? 'T' : 'N',
              g->ob ? 'T' : 'N', g->m, g->n, g->k, g->batch, g->pad, g->off, name, round,
              s ? "pooled" : "NULL", err, bound, nonfinite, outside_bad);
    ++w->runs;
out:
    if (dA) (void)cm_buffer_destroy(dA);
    if (dB) (void)cm_buffer_destroy(dB);
    if (dC) (void)cm_buffer_destroy(dC);
    free(A); free(B); free(C0); free(C); free(hA); free(hB); free(hC);
}

static void *worker_main(void *arg) {
    worker_t *w = arg;
    const cm_status_t st = cm_stream_acquire(cm_test_gpu.dev, CM_STREAM_PRIORITY_LOW, &w->stream);
    if (st != CM_OK) fail_call(w, "cm_stream_acquire", st);
    if (gate_wait(w->start) < 0 || st != CM_OK) {
        if (st == CM_OK) (void)cm_stream_release(w->stream);
        return NULL;
    }
    for (int round = 0; round < 2 && w->fail[0] == '\0'; ++round)
        for (size_t j = 0; j < N_CASES && w->fail[0] == '\0'; ++j) {
            const size_t ci = ((size_t)w->id + j) % N_CASES;
            /* the same inputs in both rounds; the stream alternates between them */
            const uint64_t seed = 0x9E3779B97F4A7C15ull * (uint64_t)(w->id * 64 + (int)ci + 1);
            cm_stream_t *s = ((size_t)w->id + j + (size_t)round) % 2 ? w->stream : NULL;
            run_one(w, ci, s, seed, round);
        }
    const cm_status_t rs = cm_stream_release(w->stream);
    if (rs != CM_OK) fail_call(w, "cm_stream_release", rs);
    return NULL;
}

static void test_gemm_from_threads(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    enum { MAX_THREADS = 8 };
    const int threads = cm_test_under_sanitizer() ? 4 : MAX_THREADS;
    worker_t ws[MAX_THREADS];
    pthread_t tids[MAX_THREADS];
    gate_t start = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    memset(ws, 0, sizeof ws);
    int started = 0;
    for (int i = 0; i < threads; ++i) {
        ws[i].id = i;
        ws[i].start = &start;
        if (pthread_create(&tids[i], NULL, worker_main, &ws[i]) != 0) break;
        ++started;
    }
    /* a thread that could not start: the started ones give up, and the test fails */
    gate_open(&start, started == threads ? 1 : -1);
    for (int i = 0; i < started; ++i) assert_int_equal(pthread_join(tids[i], NULL), 0);
    assert_int_equal(started, threads);
    size_t runs = 0;
    for (int i = 0; i < threads; ++i) {
        if (ws[i].fail[0] != '\0') fail_msg("%s", ws[i].fail);
        runs += ws[i].runs;
    }
    assert_int_equal(runs, (size_t)threads * 2 * N_CASES);
    print_message("%d threads, %zu products, every one checked\n", threads, runs);
    /* the device is usable afterwards: no sticky error, nothing left queued */
    CM_ASSERT_OK(cm_device_synchronize(cm_test_gpu.dev));
}

int main(void) {
    cm_test_filter_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_from_threads),
    };
    return cmocka_run_group_tests(tests, cm_test_gpu_group_setup, cm_test_gpu_group_teardown);
}
