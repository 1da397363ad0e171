/*
 * Experiment (issue #15): does the FFMA tile slow down when K-contiguous rows start off
 * 64-byte boundaries? cm_gemm FP32, column-major TN (A stored K x M, B K x N, both along K),
 * the same M, N, K run with lda = ldb = K and with them padded to a multiple of 16 floats, and
 * the whole-tile case (K a multiple of 16) with rows that straddle 128-byte lines (lda = K + 8).
 * Medians of 15 synchronous calls after 3 warm-up ones, TFLOP/s; the kernel that ran from
 * cm_gemm_config_name. Inputs random in [-1, 1). Not a benchmark of record (no peer): the
 * ratios between its own rows are the point.
 *   exp_ffma_ld [M N K lda ...]   (default: the cases below)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cudamodel/cudamodel.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}
static int cmp(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    static const size_t def[][4] = {
        {4096, 4096, 2992, 2992}, {4096, 4096, 2992, 3000}, {4096, 4096, 2992, 3001},
        {4096, 4096, 3000, 3000}, {4096, 4096, 3000, 3008}, {4096, 4096, 3001, 3001},
        {4096, 4096, 3001, 3008}, {4096, 4096, 3001, 3012}, {1000, 4096, 4096, 4096},
        {1024, 4096, 4096, 4096}, {3001, 4096, 1000, 1000}, {3001, 4096, 1000, 1008},
        {3072, 4096, 1008, 1008}};
    size_t (*cases)[4] = (size_t(*)[4])def;
    size_t ncases = sizeof def / sizeof def[0];
    size_t mine[16][4];
    if (argc > 1) {
        ncases = 0;
        for (int i = 1; i + 3 < argc && ncases < 16; i += 4, ++ncases)
            for (int q = 0; q < 4; ++q) mine[ncases][q] = strtoull(argv[i + q], NULL, 10);
        cases = mine;
    }
    cm_device_t *dev = NULL;
    if (cm_device_open(0, &dev) != CM_OK) return 1;
    const size_t cap = (size_t)4096 * 4200;
    float *h = malloc(cap * 4);
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < cap; ++i) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        h[i] = (float)((double)(x >> 11) * 0x1.0p-52 * 2.0 - 1.0);
    }
    cm_buffer_t *a = NULL, *b = NULL, *c = NULL;
    if (cm_buffer_create(dev, cap * 4, &a) != CM_OK || cm_buffer_create(dev, cap * 4, &b) != CM_OK ||
        cm_buffer_create(dev, cap * 4, &c) != CM_OK ||
        cm_buffer_copy_from_host(NULL, a, 0, h, cap * 4) != CM_OK ||
        cm_buffer_copy_from_host(NULL, b, 0, h, cap * 4) != CM_OK)
        return 1;
    for (size_t i = 0; i < ncases; ++i) {
        const size_t m = cases[i][0], n = cases[i][1], k = cases[i][2], ld = cases[i][3];
        if (ld * (m > n ? m : n) > cap || ld < k) continue;
        double t[15];
        for (int r = 0; r < 18; ++r) {
            const double t0 = now();
            if (cm_gemm(NULL, CM_GEMM_FP32, CM_GEMM_COL_MAJOR, CM_GEMM_OP_T, CM_GEMM_OP_N, m, n, k,
                        1.0f, a, 0, ld, b, 0, ld, 0.0f, c, 0, m) != CM_OK) {
                char msg[1024];
                cm_error_format(NULL, msg, sizeof msg);
                fprintf(stderr, "%s\n", msg);
                return 1;
            }
            if (r >= 3) t[r - 3] = now() - t0;
        }
        qsort(t, 15, sizeof t[0], cmp);
        const char *name = "?";
        cm_gemm_config_name(0, CM_GEMM_FP32, CM_GEMM_COL_MAJOR, CM_GEMM_OP_T, CM_GEMM_OP_N, m, n,
                            k, &name);
        printf("TN %5zu x %5zu x %5zu lda=ldb %5zu (rows %3zu B past 128): %7.2f TFLOP/s  %s\n",
               m, n, k, ld, ld * 4 % 128, 2.0 * m * n * k / t[7] * 1e-12, name);
    }
    cm_buffer_destroy(a);
    cm_buffer_destroy(b);
    cm_buffer_destroy(c);
    cm_device_close(dev);
    free(h);
    return 0;
}
