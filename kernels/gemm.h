/*
 * The host interface of the GEMM device code (kernels/gemm_ffma.cu, kernels/gemm_mma.cu and,
 * when built, kernels/gemm_sm90.cu): thin launchers with C linkage, called from src/gemm_api.c
 * only, which has checked every argument and normalised the problem to the one internal form
 * below. They return the CUDA error of the launch and never record details themselves.
 *
 * The internal form (see src/gemm_api.c, cm__gemm_normalize): C is row-major M x N,
 *   C[m*ldc + n] = alpha * sum_k A(m,k) B(k,n) + beta * C[m*ldc + n]   (beta == 0: C never read)
 * with A(m,k) = a_kmajor ? a[m*lda + k] : a[k*lda + m]   ("K contiguous" or "M contiguous")
 * and  B(k,n) = b_kmajor ? b[n*ldb + k] : b[k*ldb + n]   ("K contiguous" or "N contiguous").
 * Every (layout, op_a, op_b) of the public API is one of these four cases.
 */
#ifndef CUDAMODEL_KERNELS_GEMM_H
#define CUDAMODEL_KERNELS_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Element types of A and B, and of C. */
enum { CM__GEMM_F32 = 0, CM__GEMM_BF16 = 1 };

/** One normalised problem (see above), or a strided batch of them. m, n, k >= 0 and each
 *  < 2^31; the pointers are device addresses of the current device; every element the problem
 *  touches lies inside its buffer.
 *
 *  Batch: matrix z (0 <= z < batch) of the batch is the problem above with a, b, c moved by
 *  z * stride_a, z * stride_b, z * stride_c ELEMENTS (of in_type for a and b, of out_type for c;
 *  the strides of the normalised operands: cm__gemm_normalize swaps A and B for a column-major
 *  C, and so must the caller swap stride_a and stride_b). batch 0 or 1 is one matrix and the
 *  strides are ignored (a zero-initialised struct is the single problem it always was);
 *  batch > 1 needs strides >= 0 (0: every matrix reads the same operand; the C matrices must not
 *  overlap, which the caller checked). Every launcher below runs the whole batch: one launch per
 *  65535 matrices (CM__GEMM_MAX_BATCH_PER_LAUNCH, grid.z), in order; a 16-byte (or 8-byte)
 *  vector path is taken only where every matrix's base keeps the alignment (base aligned and
 *  stride * element size a multiple of it). */
typedef struct cm__gemm_args {
    int m, n, k;
    float alpha, beta;
    const void *a;
    int64_t lda;
    int a_kmajor;
    const void *b;
    int64_t ldb;
    int b_kmajor;
    void *c;
    int64_t ldc;
    int in_type;  /* CM__GEMM_F32 or CM__GEMM_BF16 (A and B) */
    int out_type; /* CM__GEMM_F32 or CM__GEMM_BF16 (C) */
    int batch;    /* matrices; 0 or 1: one */
    int64_t stride_a, stride_b, stride_c; /* elements between consecutive matrices (batch > 1) */
    int k_last;   /* 1 .. k: K of the batch's last matrix (see below); 0: every matrix has k */
    /* 1: A's (B's) rows along M (N) may be read up to M (N) rounded up to a multiple of 4
     * elements, the last row's too (the pitched copy's scratch: src/compute/gemm_api.c); the
     * pipelined FFMA tile then moves a last tile past M (N) back to end there */
    int a_pad4, b_pad4;
    /* 1 (sm_90+ only): queued right after the operand staging's kernel (cm__gemm_pack_pair,
     * cm__gemm_pack_batched) whose output it reads: the Hopper and mma.sync launchers launch
     * it as a programmatic dependent of that kernel (kernels/pdl.cuh), their kernels waiting
     * for it before they read A and B; the other launchers launch as always */
    int pdl;
    /* 1: split-K's parts (their batch into float scratch, the reduction after them: a
     * dependent launch already): never launched as a dependent of a staging before them
     * (cm__gemm_stage), since the chain of three dependent launches lost to plain ones
     * where a staging preceded split parts (bench/NOTES-gemm.md) */
    int split_part;
} cm__gemm_args_t;

/** k_last (split-K's parts, src/compute/gemm_api.c): the batch's matrices are the K ranges of
 *  one product, all k long but the last, which is k_last long (0 < k_last <= k; a single matrix
 *  with k_last set is the problem with K = k_last). The launch then reads nothing of the last
 *  matrix's A and B past k_last, so the ranges tile a K that is not a multiple of k in one
 *  launch. Taken by cm__gemm_ffma (a PIPE / PIPE4 configuration runs its fallback's kernels
 *  for it), cm__gemm_mma, cm__gemm_gemv and cm__gemm_skinny; the Hopper launchers take no
 *  cm__gemm_args_t and split-K gives them whole parts only. */

/** Matrices one launch takes (gridDim.z); the launchers split larger batches. */
#define CM__GEMM_MAX_BATCH_PER_LAUNCH 65535

/** Whether the FFMA kernels may write g's C in vectors of 4 elements (16 bytes of float, 8 of
 *  BF16): ldc a multiple of 4 and every matrix of the batch starting on such a vector (the
 *  base, and stride_c where batch > 1). Else they write it element by element. Pure; the
 *  launchers' Params::vecc and cm_gemm_explain's account of C both come from it. */
static inline int cm__gemm_c_vec4(const cm__gemm_args_t *g) {
    const uint64_t vec = g->out_type == CM__GEMM_BF16 ? 8u : 16u;
    return g->ldc % 4 == 0 && (uintptr_t)g->c % vec == 0 &&
           (g->batch <= 1 || g->stride_c % 4 == 0);
}

/** FFMA tiles of fewer outputs than this (bm x bn) stage a C without vector rows
 *  (cm__gemm_c_vec4 false) through shared memory in their sm_90 code, so that a warp writes
 *  consecutive elements of a row (kernels/gemm_ffma.cu's rows_out); the 128 x 128 tiles, at
 *  their register cap, store it element by element in place. */
#define CM__FFMA_ROWS_OUT_BELOW (128 * 128)

/* ---------------------------------------------------------------- FFMA (CUDA cores, any sm) */

/** 1 in a -DCUDAMODEL_BUILD_TUNING=ON build (CMakeLists.txt defines it for every target): every
 *  FFMA configuration below is compiled; else 0: only the shipped ones. Tested with #if. */
#ifndef CM_GEMM_TUNING
#  define CM_GEMM_TUNING 0
#endif

/** Kernel forms of an FFMA configuration (kernels/gemm_ffma.cu):
 *  GENERAL  double-buffered kernel with tails and scalar fallbacks everywhere;
 *  FAST     ("f") the same tile, plus a kernel without predicates for problems in whole tiles
 *           with 16-byte operands (the general kernel runs the rest);
 *  PIPE     ("p") cp.async ring of `stages` K tiles, K-contiguous operands transposed in shared
 *           memory one tile ahead; problems in whole tiles only, the rest runs the kernels
 *           of the configuration named `fallback`;
 *  PIPE4    ("q") the same pipeline with K-contiguous operands copied 4 bytes at a time straight
 *           into their transposed place (so of any leading dimension); one matrix whose
 *           last tiles past M / N can all move back to end there (an operand along K, or
 *           along M / N with that side a multiple of 4 or its padding readable: a_pad4 /
 *           b_pad4) runs the whole-tile kernel so (its MOVED form), and a K tail (K % BK)
 *           from K = CM__FFMA_BOUNDED_MIN_K in that kernel (before its pipeline, or after
 *           its main loop where one operand is along K and the other along M / N) or, both
 *           along K or both along M / N with M and N whole tiles, apart first (the
 *           fallback's kernel, then beta 1) from K = CM__FFMA_KTAIL_APART_MIN_K; other
 *           problems that are not whole tiles of 16-byte rows run its bounded form (any M,
 *           N and K; the copies zero-fill past them; from K = CM__FFMA_BOUNDED_MIN_K) where
 *           the operands contiguous along M or N have 16-byte rows, else from K =
 *           CM__FFMA_EDGE_MIN_K its edge kernel (every element of both operands a
 *           zero-filled 4-byte copy, any M, N and leading dimension), and `fallback` the
 *           rest (shorter K, an in-slab offset past 32 bits, no room for its shared memory). */
/** The shortest K the PIPE4 configurations' bounded form runs: its blocks with no row past M
 *  or N run the whole-tile kernel's copies on every K tile but a last partial one, so it
 *  costs about what the whole-tile kernel does; below, the fallback's kernels. */
#define CM__FFMA_BOUNDED_MIN_K 256
/** The shortest K the PIPE4 configurations' edge kernel runs (below, its ring's prologue and
 *  4-byte copies of every element cost more than the pipeline hides). */
#define CM__FFMA_EDGE_MIN_K 1024
/** The shortest K whose tail (K % 16) the PIPE4 whole-tile kernels run apart first (on the
 *  fallback's kernel, then the whole K tiles with beta 1: two passes over C more), where both
 *  operands are along K or both along M / N and M and N are whole tiles; below it, and where a
 *  last tile moves, the moved-tile kernel runs the tail before its pipeline (from
 *  CM__FFMA_BOUNDED_MIN_K). H200 against cuBLAS, the tail apart against in the moved-tile
 *  kernel: 4096 x 4096 x 3001 TN 0.90 against 0.89x; 3001^3 TN (tiles moved) 0.91 against
 *  0.96x; 3001 x 4096 x 1000 TN 0.75 against 0.83x (bench/NOTES-gemm.md). */
#define CM__FFMA_KTAIL_APART_MIN_K 2048

enum {
    CM__FFMA_FORM_GENERAL = 0,
    CM__FFMA_FORM_FAST = 1,
    CM__FFMA_FORM_PIPE = 2,
    CM__FFMA_FORM_PIPE4 = 3
};

/**
 * THE FFMA CONFIGURATION TABLE: one line per tile configuration; the enum below, the names
 * ("ffma:" id: what CUDAMODEL_GEMM_CONFIG and `bench_gemm --tune` use; src/compute/gemm_api.c),
 * the tiles and the launcher (kernels/gemm_ffma.cu) and bench_gemm's --tune list expand from it.
 * Adding a configuration is adding a line.
 *
 *   X(id, bm, bn, bk, tm, tn, minb, wtx, form, stages, fallback, ship)
 *   bm x bn   block tile of C; bk: K step; tm x tn: outputs per thread ((bm/tm)(bn/tn) threads)
 *   minb      blocks per multiprocessor asked of the compiler (__launch_bounds__)
 *   wtx       threads of a warp along n (8: a warp covers 4 x 8 thread tiles, 4: 8 x 4)
 *   form      GENERAL, FAST, PIPE or PIPE4 (CM__FFMA_FORM_*); stages: cp.async ring depth (PIPE*)
 *   fallback  the configuration whose GENERAL / FAST kernels run what a PIPE* one cannot (tails,
 *             misaligned operands, no room for its shared memory); itself for the others
 *   ship      1: compiled in every build; 0: only with -DCUDAMODEL_BUILD_TUNING=ON (a forced
 *             name of one that is not compiled is ignored: cm__gemm_select)
 *
 * The shipped set is everything cm_gemm() can run in a build without tuning:
 *   32x64x16      the dispatch table's tiny FP32 class (every architecture) and TF32 on sm_75
 *   64x64x16      the table's small FP32 class; K = 0 (C = beta C) of the tensor-core
 *                 precisions; the FFMA stand-in of mma:64x64 (demotion in cm__gemm_select,
 *                 fallback in cm__gemm_launch); BF16 on FFMA for tiles below 128 x 128
 *   128x128x8     the table's skinny / large FP32 classes on sm_75 and the sm_80 class; the
 *                 FFMA stand-in of mma:128x128, mma:128x64 and sm90 (demotions in
 *                 cm__gemm_select, fallbacks in cm__gemm_launch); BF16 on FFMA for the larger
 *                 tiles; the default of cm__gemm_table_entry; its general kernel is also
 *                 128x128x8f's (the same type)
 *   128x128x16q3  the table's skinny / large FP32 classes on sm_90
 *   128x128x8f    128x128x16q3's fallback (launch_pipe: tails, misaligned operands, no room for
 *                 the pipeline's shared memory)
 * The BF16-input kernels of cm__gemm_ffma use only the 64x64x16 and 128x128x8 tiles.
 * tests/host/test_gemm_args.c checks that every table entry, every demotion target and the
 * fallback of every shipped configuration is shipped.
 */
#define CM__FFMA_CONFIGS(X)                                                                   \
    X(128x128x8,     128, 128,  8,  8,  8, 2, 8, GENERAL, 0, 128x128x8,     1)                \
    X(128x128x16,    128, 128, 16,  8,  8, 1, 8, GENERAL, 0, 128x128x16,    0)                \
    X(128x64x8,      128,  64,  8,  8,  8, 3, 8, GENERAL, 0, 128x64x8,      0)                \
    X(64x64x16,       64,  64, 16,  8,  4, 4, 8, GENERAL, 0, 64x64x16,      1)                \
    X(32x64x16,       32,  64, 16,  4,  4, 4, 8, GENERAL, 0, 32x64x16,      1)                \
    X(128x256x8,     128, 256,  8,  8, 16, 1, 8, GENERAL, 0, 128x256x8,     0)                \
    X(256x128x8,     256, 128,  8, 16,  8, 1, 8, GENERAL, 0, 256x128x8,     0)                \
    X(128x128x8f,    128, 128,  8,  8,  8, 2, 8, FAST,    0, 128x128x8f,    1)                \
    X(128x128x16f,   128, 128, 16,  8,  8, 2, 8, FAST,    0, 128x128x16f,   0)                \
    X(128x128x8f4,   128, 128,  8,  8,  8, 2, 4, FAST,    0, 128x128x8f4,   0)                \
    X(128x256x8f,    128, 256,  8,  8, 16, 1, 8, FAST,    0, 128x256x8f,    0)                \
    X(256x128x8f,    256, 128,  8, 16,  8, 1, 8, FAST,    0, 256x128x8f,    0)                \
    X(128x256x8f4,   128, 256,  8,  8, 16, 1, 4, FAST,    0, 128x256x8f4,   0)                \
    X(128x128x8p2,   128, 128,  8,  8,  8, 2, 8, PIPE,    2, 128x128x8f,    0)                \
    X(128x128x8p3,   128, 128,  8,  8,  8, 2, 8, PIPE,    3, 128x128x8f,    0)                \
    X(128x128x8p4,   128, 128,  8,  8,  8, 2, 8, PIPE,    4, 128x128x8f,    0)                \
    X(128x128x16p3,  128, 128, 16,  8,  8, 2, 8, PIPE,    3, 128x128x8f,    0)                \
    X(128x256x8p3,   128, 256,  8,  8, 16, 1, 8, PIPE,    3, 128x256x8f,    0)                \
    X(256x128x8p3,   256, 128,  8, 16,  8, 1, 8, PIPE,    3, 256x128x8f,    0)                \
    X(128x128x8q3,   128, 128,  8,  8,  8, 2, 8, PIPE4,   3, 128x128x8f,    0)                \
    X(128x128x8q4,   128, 128,  8,  8,  8, 2, 8, PIPE4,   4, 128x128x8f,    0)                \
    X(128x128x16q3,  128, 128, 16,  8,  8, 2, 8, PIPE4,   3, 128x128x8f,    1)                \
    X(128x256x8q3,   128, 256,  8,  8, 16, 1, 8, PIPE4,   3, 128x256x8f,    0)                \
    X(128x128x8q3t,  128, 128,  8, 16,  8, 2, 8, PIPE4,   3, 128x128x8q3t,  0)                \
    X(128x128x8q4t,  128, 128,  8, 16,  8, 2, 8, PIPE4,   4, 128x128x8q4t,  0)                \
    X(128x128x16q3t, 128, 128, 16, 16,  8, 2, 8, PIPE4,   3, 128x128x16q3t, 0)                \
    X(128x128x16q4,  128, 128, 16,  8,  8, 2, 8, PIPE4,   4, 128x128x8f,    0)                \
    X(64x64x16q3,     64,  64, 16,  8,  4, 4, 8, PIPE4,   3, 64x64x16,      1)                \
    X(32x64x16q3,     32,  64, 16,  4,  4, 4, 8, PIPE4,   3, 32x64x16,      1)

/** Whether a configuration of ship flag `ship` is compiled in this build. */
#define CM__FFMA_BUILT(ship) ((ship) || CM_GEMM_TUNING)

#define CM__FFMA_ENUM_(id, bm, bn, bk, tm, tn, minb, wtx, form, stages, fallback, ship) \
    CM__FFMA_##id,
/** FFMA configurations, in the table's order. */
enum { CM__FFMA_CONFIGS(CM__FFMA_ENUM_) CM__FFMA_COUNT };
#undef CM__FFMA_ENUM_

/** Block tile (bm x bn) of an FFMA configuration; 0 for an unknown one (pure). */
void cm__gemm_ffma_tile(int config, int *bm, int *bn);
/** The resident blocks a multiprocessor configuration `config` is built for (its
 *  __launch_bounds__ minimum: the `minb` column above); 0 for an unknown configuration. */
int cm__gemm_ffma_blocks_per_sm(int config);

/** 1 when the configuration is in the shipped set (compiled in every build), else 0 (pure). */
int cm__gemm_ffma_shipped(int config);

/** 1 when this build compiled the configuration's kernels (shipped, or a tuning build), else 0;
 *  cm__gemm_ffma() refuses the others with cudaErrorNotSupported (pure). */
int cm__gemm_ffma_built(int config);

/** The configuration whose kernels run what `config` cannot (itself for GENERAL and FAST
 *  ones); -1 for an unknown one (pure). */
int cm__gemm_ffma_fallback(int config);

/** What cm__gemm_ffma runs for g on configuration `config` (pure; g as the launcher gets it,
 *  one launch's batch): CM__FFMA_RUNS_WHOLE the whole-tile pipelined kernel (for a PIPE4
 *  configuration also its moved-tile form and a K tail in its epilogue or apart: above),
 *  CM__FFMA_RUNS_BOUNDED its bounded form, CM__FFMA_RUNS_EDGE its edge kernel (the three of a
 *  PIPE / PIPE4 configuration), CM__FFMA_RUNS_TILE the configuration's own or its fallback's
 *  GENERAL / FAST kernels (every other configuration, BF16 input, an unknown one). A device
 *  that cannot give the pipeline its shared memory, or one of another architecture than
 *  sm_90 outside a tuning build (the pipelined kernels carry code for sm_90 only there:
 *  gemm_ffma.cu, CM__FFMA_PIPE_BODY), runs the fallback's kernels whatever this says. */
enum {
    CM__FFMA_RUNS_TILE = 0,
    CM__FFMA_RUNS_WHOLE = 1,
    CM__FFMA_RUNS_BOUNDED = 2,
    CM__FFMA_RUNS_EDGE = 3
};
int cm__gemm_ffma_runs(const cm__gemm_args_t *g, int config);

/** Where the PIPE4 whole-tile kernels run a K tail (K % BK): none; apart first on the
 *  fallback's kernel, then the whole K tiles with beta 1; in the MOVED kernel before its
 *  pipeline; in the MOVED kernel after its main loop. */
enum {
    CM__FFMA_KTAIL_NONE = 0,
    CM__FFMA_KTAIL_APART = 1,
    CM__FFMA_KTAIL_BEFORE = 2,
    CM__FFMA_KTAIL_AFTER = 3
};

/** For a problem cm__gemm_ffma_runs gives CM__FFMA_RUNS_WHOLE on a PIPE4 configuration (else
 *  all 0, pure): *moved 1 where a last tile past M or N moves back inside (its MOVED kernel),
 *  *k_tail the K % BK its whole K tiles leave, *tail_at where that tail runs (CM__FFMA_KTAIL_*).
 *  Any pointer may be NULL. */
void cm__gemm_ffma_whole_form(const cm__gemm_args_t *g, int config, int *moved, int *k_tail,
                              int *tail_at);

/** Launch the FFMA kernel. in_type F32 with out_type F32 takes every configuration this build
 *  compiled (cm__gemm_ffma_built(); cudaErrorNotSupported, nothing launched, for another one);
 *  BF16 input (the sm_75 fallback of the BF16 precisions) runs the CM__FFMA_128x128x8 or the
 *  CM__FFMA_64x64x16 tile (smaller block tiles than 128 x 128 the latter). m, n or k == 0 is the
 *  caller's business (it never calls with m or n == 0; k == 0 is valid: C = beta C).
 *  A batch (p->batch > 1) takes any configuration and any strides: every form has a batch
 *  dimension (a FAST configuration runs its general kernel for a batch, its fast-interior one for
 *  one matrix only; a PIPE one its pipelined kernel where every matrix keeps the 16-byte
 *  alignment, else its fallback's kernels); 16-byte (bf16: 8-byte) vector loads and stores only
 *  where every matrix keeps that alignment. The first failing launch's error is returned (the
 *  launches before it stay queued). */
cudaError_t cm__gemm_ffma(const cm__gemm_args_t *p, int config, cudaStream_t stream);

/* ---------------------------------------------------------------- mma.sync (sm_80+) */

/** Tile configurations of the mma.sync kernel (block tile, warps, pipeline stages). */
enum {
    CM__MMA_128x128 = 0, /* 8 warps (2x4), warp tile 64x32, 4 stages */
    CM__MMA_128x64,      /* 4 warps (2x2), warp tile 64x32, 4 stages (tuning builds only) */
    CM__MMA_64x64,       /* 4 warps (2x2), warp tile 32x32, 4 stages */
    CM__MMA_COUNT
};

void cm__gemm_mma_tile(int config, int *bm, int *bn);

/** 1 when this build compiled the mma.sync configuration's kernels, else 0 (pure): the ones the
 *  dispatch can select (CM__MMA_128x128 and CM__MMA_64x64: the sm_80 rows of the table, the
 *  tiny TF32 / BF16 class on sm_90 and the fallback of the Hopper kernel) in every build;
 *  CM__MMA_128x64 only with -DCUDAMODEL_BUILD_TUNING=ON (CUDAMODEL_GEMM_CONFIG and
 *  `bench_gemm --tune`). cm__gemm_mma() refuses the others with cudaErrorNotSupported. */
int cm__gemm_mma_built(int config);

/** Whether the mma.sync kernel takes p: the device is sm_80+ and built for it (checked by the
 *  launcher), A and B 16-byte aligned with leading dimensions a multiple of 16 bytes (cp.async
 *  of 16 bytes) and, for a batch (p->batch > 1), stride_a and stride_b too (every matrix's base
 *  16-byte aligned); C any. Pure (no device query): alignment only. */
int cm__gemm_mma_aligned(const cm__gemm_args_t *p);

/** Kernels that only Hopper's dispatch selects (the pipelined FFMA tiles of kernels/gemm_ffma.cu,
 *  the TF32 align1 form of kernels/gemm_mma.cu) carry code for sm_90 only, outside tuning builds
 *  (CM_GEMM_TUNING: every architecture): CM__GEMM_SM90_ONLY_BODY is 0 in the device code of
 *  the other architectures, whose bodies are then empty; 1 in sm_90's and in host code. */
#if defined(__CUDA_ARCH__) && !CM_GEMM_TUNING && (__CUDA_ARCH__ < 900 || __CUDA_ARCH__ >= 1000)
#  define CM__GEMM_SM90_ONLY_BODY 0
#else
#  define CM__GEMM_SM90_ONLY_BODY 1
#endif

/** Whether such a kernel carries code in a device's image whose code was compiled for virtual
 *  architecture ptx_version (cudaFuncAttributes::ptxVersion: 90 for sm_90's, also 80 for an
 *  image JIT-compiled on a Hopper from compute_80 PTX): 9.x, or any in a tuning build. Pure. */
static inline int cm__gemm_sm90_only_has_code(int ptx_version) {
    return CM_GEMM_TUNING || (ptx_version >= 90 && ptx_version < 100);
}

/** 1 (the default): kernels/gemm_mma.cu builds the TF32 "align1" form of CM__MMA_128x128 and
 *  CM__MMA_64x64 (every element of A and B its own zero-filled 4-byte cp.async, lanes along
 *  each row's contiguous dimension: any base and leading dimension of whole floats), which
 *  cm__gemm_mma runs for a TF32 product that cm__gemm_mma_aligned refuses, and
 *  src/compute/gemm_api.c then takes instead of the realignment's copy where that copy would
 *  have led to mma.sync tiles or to the Hopper kernel split over K (cm__gemm_realign_mode);
 *  0: not built, those products are copied first (the form's measurements against the copy:
 *  bench/NOTES-gemm.md). Outside tuning builds the form carries code for sm_90 only, where it
 *  was measured (cm__gemm_mma_align1_for): for the default list's seven sm_80+ architectures
 *  it took gemm_mma.cu from 95 to 140 s of nvcc on a 2-core machine; for sm_90 alone ~6 s. */
#ifndef CM__GEMM_MMA_ALIGN1
#  define CM__GEMM_MMA_ALIGN1 1
#endif

/** CM__GEMM_MMA_ALIGN1 of the build that compiled kernels/gemm_mma.cu (pure). */
int cm__gemm_mma_align1_built(void);

/** 1 when the align1 form carries code for devices of compute capability `major`: built
 *  (cm__gemm_mma_align1_built) and either a tuning build (CM_GEMM_TUNING: every architecture)
 *  or major 9 (Hopper); elsewhere its kernels are empty and cm__gemm_mma refuses such operands
 *  (pure). */
int cm__gemm_mma_align1_for(int major);

/** Launch the mma.sync kernel: tf32 != 0 rounds FP32 inputs to TF32 (m16n8k8); in_type BF16
 *  uses m16n8k16. Returns cudaErrorNotSupported (launching nothing) when the device is older than
 *  sm_80, the library carries no sm_80+ image, this build did not compile `config`
 *  (cm__gemm_mma_built) or cm__gemm_mma_aligned(p) is 0 (for a batch whose
 *  strides alone break the alignment, the caller may still run it one matrix at a time, with
 *  batch 1 and the pointers moved, or take FFMA) and p is not a TF32 product that the align1
 *  form takes (built with code for the device's image, cm__gemm_mma_align1_for;
 *  CM__MMA_128x128 or CM__MMA_64x64; A and B 4-byte aligned). A batch runs whole otherwise. */
cudaError_t cm__gemm_mma(const cm__gemm_args_t *p, int tf32, int config, cudaStream_t stream);

/* ---------------------------------------------------------------- matrix-vector (kernels/gemv.cu) */

/** Launch the matrix-vector kernel for a problem with m == 1 or n == 1 (and k >= 1): FP32
 *  arithmetic for every precision (in_type F32 or BF16; out_type F32, or BF16 with BF16 input),
 *  deterministic, no scratch. sm_count picks how many warps share a row (counting the rows of
 *  every product of a batch). A batch takes any strides (16-byte loads only where every product
 *  keeps the alignment). cudaErrorInvalidValue (nothing launched) for any other shape; else the
 *  first failing launch's error. */
cudaError_t cm__gemm_gemv(const cm__gemm_args_t *p, int sm_count, cudaStream_t stream);

/* ---------------------------------------------------------------- skinny (kernels/gemm_skinny.cu) */

/** The largest small side (min(m, n)) cm__gemm_skinny takes. */
#define CM__GEMM_SKINNY_MAX 16

/** Launch the skinny kernel for a problem whose smaller side of C, min(m, n), is at most
 *  CM__GEMM_SKINNY_MAX (and k >= 1): one bandwidth-bound pass over the large operand that keeps
 *  min(m, n) sums per row of it, FP32 arithmetic for every precision (in_type F32 or BF16;
 *  out_type F32, or BF16 with BF16 input), deterministic, no scratch. A batch takes any strides
 *  (16-byte loads only where every product keeps the alignment). sm_count (the device's
 *  multiprocessors; < 1: unknown) picks how many rows a warp takes in the 16-vector form.
 *  cudaErrorInvalidValue (nothing launched) for any other shape; else the first failing launch's
 *  error. */
cudaError_t cm__gemm_skinny(const cm__gemm_args_t *p, int sm_count, cudaStream_t stream);

/* ---------------------------------------------------------------- packing (kernels/gemm_pack.cu) */

/** One operand of cm__gemm_pack_pair: `rows` x kdim elements at src, K-contiguous
 *  (kmajor: element (r, k) at src[r*ld + k], ld >= kdim) or rows-contiguous (src[k*ld + r],
 *  ld >= rows), `count` matrices (< 1: one) src_stride elements apart, staged into dst
 *  K-contiguous (dst[r*ldd + k], ldd >= kdim), dst_stride apart. */
typedef struct cm__gemm_pack_side {
    const void *src;
    int64_t ld;
    int kmajor;
    int rows;
    int count;
    int64_t src_stride;
    void *dst;
    int64_t ldd;
    int64_t dst_stride;
} cm__gemm_pack_side_t;

/** A launch of the pack pair kernel (an element a thread) takes a K-contiguous side of at most
 *  this many bytes along rather than leave it to a second launch of the row-copy kernel. */
#define CM__PACK_PAIR_TAKES_BYTES (4ull << 20)

/** K-contiguous rows shorter than this many bytes (one warp's 32 16-byte stores) leave lanes of
 *  the row-copy kernel idle and its grid one block-column wide: a product whose staged sides
 *  together hold at most CM__PACK_PAIR_TAKES_BYTES copies them in the pair kernel instead. */
#define CM__PACK_SHORT_ROW_BYTES 512u

/** Which kernel of cm__gemm_pack_pair copies a K-contiguous side whose destination rows start
 *  on 16 bytes: 1 the row-copy kernel (16-byte stores), 0 the pair kernel. side_bytes: this
 *  side's bytes (rows x kdim x count x elem_bytes); all_bytes: both staged sides'; pair_runs:
 *  the pair kernel runs anyway (a transposed side, or one whose destination rows are off 16
 *  bytes). The pair kernel takes a side
 *  - where both sides are small and their rows short (CM__PACK_SHORT_ROW_BYTES; H200 in-run,
 *    the pair kernel against the row-copy kernel: bf16 4096 x 127 x 127 TN 0.92-0.96x cuBLAS
 *    against 0.78-0.81x, 3001 x 64 x 127 TN 0.86-0.88x against 0.76x, 127 x 4096 x 127 TN
 *    0.82-0.85x against 0.74-0.79x, tf32 1000 x 3001 x 127 TN 1.04-1.06x against 0.96-0.97x;
 *    with rows of 1001 or 3001 elements it lost up to 13 %: bench/NOTES-gemm.md), or
 *  - where it runs anyway and this side is at most CM__PACK_PAIR_TAKES_BYTES: one launch where a
 *    second would cost more than 16-byte stores save (H100, bf16 127 x 4096 x 127 NN 0.66x ->
 *    0.90x; larger sides stay with the row-copy kernel: bf16 2047^3 NN lost 6 % taken along).
 *  Pure. */
static inline int cm__gemm_pack_copy_kernel(int elem_bytes, int kdim,
                                            unsigned long long side_bytes,
                                            unsigned long long all_bytes, int pair_runs) {
    const int short_rows = (unsigned long long)kdim * (unsigned long long)elem_bytes <
                           CM__PACK_SHORT_ROW_BYTES;
    if (short_rows && all_bytes <= CM__PACK_PAIR_TAKES_BYTES) return 0;
    return !(pair_runs && side_bytes <= CM__PACK_PAIR_TAKES_BYTES);
}

/** The GEMM's operand staging on `stream`: both operands of a product (either side NULL: not
 *  staged) into K-contiguous rows of ldd elements, elem_bytes 4 (FP32/TF32) or 2 (BF16): a
 *  transpose for a rows-contiguous side, a row copy for a K-contiguous one (16-byte stores
 *  where dst's rows start on 16 bytes, else an element a thread), one launch of each kernel
 *  needed per CM__GEMM_MAX_BATCH_PER_LAUNCH matrices. Columns kdim .. ldd of dst are not
 *  written.
 *  cudaErrorInvalidValue (nothing launched) for a NULL pointer of a side, negative sizes or
 *  strides, ld or ldd shorter than the rules above or another element size; else the launch's
 *  error. */
cudaError_t cm__gemm_pack_pair(int elem_bytes, int kdim, const cm__gemm_pack_side_t *a,
                               const cm__gemm_pack_side_t *b, cudaStream_t stream);

/** One operand's transpose on `stream`: element (k, r) of a kdim x rdim matrix stored
 *  r-contiguous, src[k*ld + r], goes to dst[r*ldd + k] (K-contiguous), elem_bytes 4 (FP32/TF32)
 *  or 2 (BF16), for `batch` matrices (< 1: one): matrix z reads src + z * src_stride and writes
 *  dst + z * dst_stride (elements; strides >= 0), one launch per CM__GEMM_MAX_BATCH_PER_LAUNCH
 *  matrices. The staging of a product with one operand to stage (cm__gemm_pack_pair is for
 *  two). cudaErrorInvalidValue (nothing launched) for NULL pointers, negative sizes, ld < rdim,
 *  ldd < kdim or another element size; else the launch's error. */
cudaError_t cm__gemm_pack_batched(int elem_bytes, const void *src, int64_t ld, int kdim,
                                  int rdim, void *dst, int64_t ldd, int batch,
                                  int64_t src_stride, int64_t dst_stride, cudaStream_t stream);

/** Split-K's reduction on `stream`: C = alpha * (sum of the `parts` row-major m x n float
 *  matrices at partials, m*n apart, summed in order) + beta * C (beta == 0: C not read); C
 *  row-major with ldc, float or (c_bf16) bf16. Deterministic. dependent != 0 (compute
 *  capability 9.0 and later only: the caller knows the device) makes it a programmatic
 *  dependent launch (kernels/pdl.cuh): scheduled while the kernel before it on `stream` (the
 *  parts' GEMM, which allows it at its start) still runs, it reads the partials only once that
 *  kernel has completed. cudaErrorInvalidValue (nothing launched) for NULL pointers, parts < 1,
 *  negative sizes or ldc < n; else the launch's error. */
cudaError_t cm__gemm_splitk_reduce(const float *partials, int parts, int m, int n, float alpha,
                                   float beta, void *c, int64_t ldc, int c_bf16, int dependent,
                                   cudaStream_t stream);

/** The 3xTF32 pre-pass (CM_GEMM_FP32_3XTF32, kernels/gemm_pack.cu): each float x of the
 *  rdim x kdim operand is split into big = tf32(x) (round to nearest) and small = tf32(x - big),
 *  and written K-contiguous as two segments of kpad elements per row r:
 *    dst[r*ldd + s*kpad + k] = part(order[s])(x(r, k))  for s = 0, 1 and k < kdim,
 *    0 for kdim <= k < kpad,
 *  where part(0) = big and part(1) = small; x(r, k) = src[r*ld + k] when kmajor, else
 *  src[k*ld + r]. The Hopper 3xTF32 kernel (kernels/gemm_sm90.h, CM__GEMM_SM90_TF32X3) reads
 *  A's segments 0, 1, 1 and B's 0, 1, 0 as its three K segments, so that A with order {1, 0}
 *  and B with {0, 1} give small*big + big*small + big*big: the FP32 product to about FP32
 *  accuracy (a third segment would repeat a part: 1/3 more writes). k0 moves the window:
 *  x(r, k0 + k) for k < kdim (chunks of a long K). cudaErrorInvalidValue (nothing launched) for
 *  NULL pointers, negative sizes, kpad < kdim, ldd < 2 kpad or ld below the stored extent; else
 *  the launch's error. */
cudaError_t cm__gemm_split_tf32(const float *src, int64_t ld, int kmajor, int k0, int kdim,
                                int rdim, const int order[2], float *dst, int64_t kpad,
                                int64_t ldd, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* CUDAMODEL_KERNELS_GEMM_H */
