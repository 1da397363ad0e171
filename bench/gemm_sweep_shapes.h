/*
 * The shape space of bench_gemm --sweep (issue #15), shared with the host test of the
 * dispatch's plans over it (tests/host/test_gemm_plans.c): 49 shapes (m, n, k) column-major,
 * with m, n, k from {1, 7, 64, 127, 512, 1000, 3001, 4096}, each with its class.
 */
#ifndef CM_BENCH_GEMM_SWEEP_SHAPES_H
#define CM_BENCH_GEMM_SWEEP_SHAPES_H

#include <stddef.h>

/* the shape space of issue #15: m, n, k from {1, 7, 64, 127, 512, 1000, 3001, 4096} */
typedef struct sweep_shape {
    size_t m, n, k;
    const char *cls;
} sweep_shape_t;

static const sweep_shape_t k_sweep[] = {
    /* matrix-vector, m = 1 */
    {1, 4096, 4096, "gemv"}, {1, 3001, 3001, "gemv"}, {1, 4096, 127, "gemv"},
    {1, 1000, 4096, "gemv"}, {1, 127, 3001, "gemv"},  {1, 7, 512, "gemv"},
    {1, 64, 1000, "gemv"},   {1, 512, 7, "gemv"},     {1, 1, 4096, "gemv"},
    /* matrix-vector, n = 1 */
    {4096, 1, 4096, "gemv"}, {3001, 1, 3001, "gemv"}, {4096, 1, 127, "gemv"},
    {1000, 1, 4096, "gemv"}, {127, 1, 3001, "gemv"},  {7, 1, 512, "gemv"},
    {64, 1, 1000, "gemv"},   {512, 1, 7, "gemv"},
    /* small k */
    {4096, 4096, 1, "small-k"}, {4096, 4096, 7, "small-k"},   {4096, 4096, 64, "small-k"},
    {3001, 1000, 64, "small-k"}, {512, 512, 7, "small-k"},    {1000, 3001, 1, "small-k"},
    /* skinny: one of m, n <= 64, long k */
    {7, 4096, 4096, "skinny"},  {4096, 7, 4096, "skinny"},    {64, 4096, 4096, "skinny"},
    {4096, 64, 1000, "skinny"}, {7, 3001, 3001, "skinny"},    {64, 64, 4096, "skinny"},
    /* (column-major here; 4096 x 64 x 4096 is the row-major 64 x 4096 x 4096 of a caller, the
     * library's other orientation of the case above) */
    {4096, 64, 4096, "skinny"},
    /* tall-skinny and short-wide: one large dimension, the others small */
    {4096, 127, 127, "tall"}, {3001, 64, 127, "tall"}, {127, 4096, 127, "wide"},
    {4096, 7, 64, "tall"},
    /* odd sizes: no multiple of any tile */
    {7, 7, 7, "odd"},           {127, 127, 127, "odd"},    {1000, 1000, 1000, "odd"},
    {3001, 3001, 3001, "odd"},  {1000, 3001, 127, "odd"},  {3001, 127, 1000, "odd"},
    {127, 1000, 3001, "odd"},   {1000, 127, 3001, "odd"}, /* the two orientations */
    /* squares and large */
    {64, 64, 64, "square"},       {512, 512, 512, "square"},    {4096, 4096, 4096, "large"},
    {4096, 4096, 3001, "large"},  {3001, 4096, 1000, "large"},  {1000, 4096, 4096, "large"},
    {512, 4096, 512, "large"},
};
#define N_SWEEP (sizeof k_sweep / sizeof k_sweep[0])

#endif /* CM_BENCH_GEMM_SWEEP_SHAPES_H */
