/*
 * cm_gemm() (include/cudamodel/kernels.h): argument checks, the normalisation of every
 * (layout, op_a, op_b) to the kernels' one form, the dispatch table and the launch of the
 * chosen kernel (kernels/gemm_ffma.cu, kernels/gemm_mma.cu, kernels/gemm_sm90.cu when built).
 * The bf16 conversions are inline in kernels.h.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include <cudamodel/kernels.h>

#include "gemm.h"
#include "gemm_internal.h"
#include "../core/internal.h"
#include "compute_internal.h"
#include "../memory/memory_internal.h"
#include "../exec/stream_internal.h"

#if CM_HAVE_GEMM_SM90
#  include "gemm_sm90.h"
#endif

/* ====================================================================== normalisation */

void cm__gemm_normalize(int layout, int op_a, int op_b, int m, int n, int k, const void *a,
                        int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc,
                        cm__gemm_args_t *out) {
    /* op(A)(i, l) is contiguous along l (K) when the stored A is row-major and not transposed
     * or column-major and transposed; op(B)(l, j) is contiguous along l when B is row-major
     * and transposed or column-major and not transposed. */
    const int row = layout == CM_GEMM_ROW_MAJOR;
    const int a_k = row == (op_a == CM_GEMM_OP_N);
    const int b_k = row == (op_b == CM_GEMM_OP_T);
    memset(out, 0, sizeof *out);
    out->k = k;
    out->c = c;
    out->ldc = ldc;
    if (row) {
        out->m = m;
        out->n = n;
        out->a = a;
        out->lda = lda;
        out->a_kmajor = a_k;
        out->b = b;
        out->ldb = ldb;
        out->b_kmajor = b_k;
    } else {
        /* column-major C (m x n) is row-major C^T (n x m) = op(B)^T op(A)^T:
         * A' (n x k) = op(B)^T, K-contiguous iff op(B) is; B' (k x m) = op(A)^T likewise. */
        out->m = n;
        out->n = m;
        out->a = b;
        out->lda = ldb;
        out->a_kmajor = b_k;
        out->b = a;
        out->ldb = lda;
        out->b_kmajor = a_k;
    }
}

/* ====================================================================== dispatch */

int cm__gemm_shape_class(int m, int n, int k, int sm_count) {
    if (sm_count < 1) sm_count = 1;
    const int64_t t64 = ((int64_t)m + 63) / 64 * (((int64_t)n + 63) / 64);
    const int64_t t128 = ((int64_t)m + 127) / 128 * (((int64_t)n + 127) / 128);
    if (t64 < sm_count) return CM__GEMM_SHAPE_TINY;
    if (t128 < sm_count) return CM__GEMM_SHAPE_SMALL;
    if ((m < n ? m : n) <= 256 || k <= 256) return CM__GEMM_SHAPE_SKINNY;
    return CM__GEMM_SHAPE_LARGE;
}

int cm__gemm_arch_class(int major, int minor) {
    (void)minor;
    if (major == 9) return CM__GEMM_ARCH_SM90;
    if (major >= 8) return CM__GEMM_ARCH_SM80;
    return CM__GEMM_ARCH_SM75;
}

int cm__gemm_family(int precision) {
    switch (precision) {
    case CM_GEMM_TF32: return CM__GEMM_FAM_TF32;
    case CM_GEMM_BF16:
    case CM_GEMM_BF16_OUT_BF16: return CM__GEMM_FAM_BF16;
    default: return CM__GEMM_FAM_FP32;
    }
}

#define FF(c) {CM__GEMM_KERNEL_FFMA, CM__FFMA_##c}
#define MM(c) {CM__GEMM_KERNEL_MMA, CM__MMA_##c}
#define S90 {CM__GEMM_KERNEL_SM90, 0}

/*
 * THE DISPATCH TABLE: [architecture][precision family][shape class] -> kernel and tile.
 * Shape classes: tiny, small, skinny, large (cm__gemm_shape_class).
 *
 * The sm_90 row holds the tile each class measured best against cuBLAS on an H200
 * (`bench_gemm --tune` and `--ops`; figures in bench/NOTES-gemm.md):
 *   fp32  tiny 32x64x16, small 64x64x16; skinny and large the pipelined 128x128x16q3 (BK 16,
 *         3 cp.async stages, K-contiguous operands copied 4 bytes at a time into place); one
 *         matrix whose last tiles past M / N all move back inside runs its whole-tile kernel
 *         so, a K tail in that kernel from K = 256 (both operands along K or both along
 *         M / N with M and N whole tiles: apart first from K = 2048,
 *         CM__FFMA_KTAIL_APART_MIN_K); other tails run its bounded form from K = 256
 *         (CM__FFMA_BOUNDED_MIN_K) where the operands contiguous along M / N have 16-byte
 *         rows (or get them from the pitched copy, cm__gemm_pitch_wanted), else its edge
 *         kernel (every element a zero-filled 4-byte copy) from K = 1024
 *         (CM__FFMA_EDGE_MIN_K); the rest, the 128x128x8 kernels.
 *   tf32 / bf16  tiny mma:64x64; small, skinny and large "sm90" (the wgmma kernel); where that
 *         kernel is not built they run mma:128x128, the best mma.sync tile there.
 * The sm_75 and sm_80 rows are tile sizes the occupancy arithmetic suggests (not measured).
 */
static const cm__gemm_choice_t cm__gemm_table[CM__GEMM_ARCH_COUNT][CM__GEMM_FAM_COUNT]
                                             [CM__GEMM_SHAPE_COUNT] = {
    /* sm_75: FFMA for everything (TF32 runs FP32 math; BF16 widened to float) */
    {{FF(32x64x16), FF(64x64x16), FF(128x128x8), FF(128x128x8)},
     {FF(32x64x16), FF(64x64x16), FF(128x128x8), FF(128x128x8)},
     {FF(64x64x16), FF(64x64x16), FF(128x128x8), FF(128x128x8)}},
    /* sm_80 class (Ampere, Ada, Blackwell...) */
    {{FF(32x64x16), FF(64x64x16), FF(128x128x8), FF(128x128x8)},
     {MM(64x64), MM(64x64), MM(128x128), MM(128x128)},
     {MM(64x64), MM(64x64), MM(128x128), MM(128x128)}},
    /* sm_90 (Hopper); skinny / large fp32: the pipelined 128x128x16q3 (a problem that is not
     * whole tiles of 16-byte rows runs its bounded form or edge kernel) */
    {{FF(32x64x16), FF(64x64x16), FF(128x128x16q3), FF(128x128x16q3)},
     {MM(64x64), S90, S90, S90},
     {MM(64x64), S90, S90, S90}},
};

#undef FF
#undef MM
#undef S90

cm__gemm_choice_t cm__gemm_table_entry(int arch, int family, int shape) {
    cm__gemm_choice_t none = {CM__GEMM_KERNEL_FFMA, CM__FFMA_128x128x8};
    if (arch < 0 || arch >= CM__GEMM_ARCH_COUNT || family < 0 || family >= CM__GEMM_FAM_COUNT ||
        shape < 0 || shape >= CM__GEMM_SHAPE_COUNT)
        return none;
    return cm__gemm_table[arch][family][shape];
}

/* "ffma:<id>" for every configuration of the table (kernels/gemm.h), built or not: a name of
 * one this build did not compile still parses (cm__gemm_select then ignores it) */
#define CM__FFMA_NAME_(id, bm, bn, bk, tm, tn, minb, wtx, form, stages, fallback, ship) \
    "ffma:" #id,
static const char *const cm__ffma_names[CM__FFMA_COUNT] = {CM__FFMA_CONFIGS(CM__FFMA_NAME_)};
#undef CM__FFMA_NAME_
static const char *const cm__mma_names[CM__MMA_COUNT] = {"mma:128x128", "mma:128x64",
                                                         "mma:64x64"};

const char *cm__gemm_choice_name(cm__gemm_choice_t c) {
    if (c.kernel == CM__GEMM_KERNEL_FFMA && c.config >= 0 && c.config < CM__FFMA_COUNT)
        return cm__ffma_names[c.config];
    if (c.kernel == CM__GEMM_KERNEL_MMA && c.config >= 0 && c.config < CM__MMA_COUNT)
        return cm__mma_names[c.config];
    if (c.kernel == CM__GEMM_KERNEL_SM90)
        return c.config == CM__GEMM_SM90_PACK     ? "sm90+pack"
               : c.config == CM__GEMM_SM90_3XTF32 ? "sm90+3xtf32"
               : c.config == CM__GEMM_SM90_BT     ? "sm90+bt"
               : c.config == CM__GEMM_SM90_AT     ? "sm90+at"
                                                   : "sm90";
    if (c.kernel == CM__GEMM_KERNEL_GEMV) return "gemv";
    if (c.kernel == CM__GEMM_KERNEL_SKINNY) return "skinny";
    return "?";
}

int cm__gemm_parse_name(const char *name, cm__gemm_choice_t *out) {
    if (name == NULL || out == NULL) return 0;
    for (int i = 0; i < CM__FFMA_COUNT; ++i)
        if (strcmp(name, cm__ffma_names[i]) == 0) {
            *out = (cm__gemm_choice_t){CM__GEMM_KERNEL_FFMA, i};
            return 1;
        }
    for (int i = 0; i < CM__MMA_COUNT; ++i)
        if (strcmp(name, cm__mma_names[i]) == 0) {
            *out = (cm__gemm_choice_t){CM__GEMM_KERNEL_MMA, i};
            return 1;
        }
    if (strcmp(name, "gemv") == 0) {
        *out = (cm__gemm_choice_t){CM__GEMM_KERNEL_GEMV, 0};
        return 1;
    }
    if (strcmp(name, "skinny") == 0) {
        *out = (cm__gemm_choice_t){CM__GEMM_KERNEL_SKINNY, 0};
        return 1;
    }
    if (strcmp(name, "sm90+3xtf32") == 0) {
        /* CM_GEMM_FP32_3XTF32's Hopper path; on another precision, as "sm90" */
        *out = (cm__gemm_choice_t){CM__GEMM_KERNEL_SM90, CM__GEMM_SM90_3XTF32};
        return 1;
    }
    if (strcmp(name, "sm90+bt") == 0) {
        /* as "sm90+pack", a bf16 MN-major B read as it is */
        *out = (cm__gemm_choice_t){CM__GEMM_KERNEL_SM90, CM__GEMM_SM90_BT};
        return 1;
    }
    if (strcmp(name, "sm90+at") == 0) {
        /* as "sm90+pack", a TF32 operand that is MN-major with 16-byte rows read as it is */
        *out = (cm__gemm_choice_t){CM__GEMM_KERNEL_SM90, CM__GEMM_SM90_AT};
        return 1;
    }
    if (strcmp(name, "sm90") == 0) {
        /* forced: the pre-pass wherever the operands need it, in the default's form (an
         * MN-major operand with 16-byte rows read as it is where the default would) */
        *out = (cm__gemm_choice_t){CM__GEMM_KERNEL_SM90, CM__GEMM_SM90_PACK};
        return 1;
    }
    if (strcmp(name, "sm90+pack") == 0) {
        /* forced: the transposing pre-pass for every operand that needs one */
        *out = (cm__gemm_choice_t){CM__GEMM_KERNEL_SM90, CM__GEMM_SM90_PACK_ALL};
        return 1;
    }
    return 0;
}

/* Bytes per element of p's operands: 2 for bf16, 4 for float (FP32 / TF32 / 3xTF32) */
static int64_t cm__gemm_elem_bytes(const cm__gemm_args_t *p) {
    return p->in_type == CM__GEMM_BF16 ? 2 : 4;
}

/* One operand (every matrix of a batch of p->batch) starts on 16 bytes with rows of whole
 * 16 bytes: what the Hopper kernel's tensor copies read without a pre-pass */
static int cm__operand_aligned16(const cm__gemm_args_t *p, const void *x, int64_t ld,
                                 int64_t stride) {
    const int64_t e = cm__gemm_elem_bytes(p);
    return (uintptr_t)x % 16u == 0 && ld * e % 16 == 0 && (p->batch <= 1 || stride * e % 16 == 0);
}

/* How the Hopper pre-pass's choice `config` reads p's operands (the return value: one of
 * CM__SM90_FORM_*), and which go through scratch (*pack_a, *pack_b, each may be NULL): an
 * operand the kernel cannot read as it is (not K-contiguous, or a base, leading dimension or
 * batch stride off 16 bytes) unless the form reads it as it is. */
enum {
    CM__SM90_FORM_PACK = 0, /* both operands K-contiguous with 16-byte rows, after the pre-pass */
    CM__SM90_FORM_BT = 1,   /* bf16: B MN-major, read by the transposed-B form */
    CM__SM90_FORM_AT = 2,   /* TF32: A MN-major, read by the register-A form */
    CM__SM90_FORM_AT_CC = 3 /* TF32: B MN-major, the register-A form on C^T = B A^T */
};
/* 1 when rows of ld elements of p's operands are an odd number of 16 bytes and the product is
 * large enough to stage such an operand first into rows of whole 128-byte lines: with such
 * rows every other row's 128-byte tensor-copy boxes start in the middle of a 32-byte sector
 * (on an H100 TF32 4096 x 4096 x 3004 "TN", rows of 12016 bytes, ran 0.66x cuBLAS where rows
 * of 12000 or 12256 bytes, multiples of 32, ran 1.0x; bf16 1000 x 4096 x 4096 "NN" with the
 * MN-major operand read as it is, rows of 2000 bytes, 0.71x, staged 0.87x). K is at least 256
 * (shorter products are bound by writing C) and C large enough for the copy's O((m + n) k)
 * bytes to cost less than the slower reads: m n / (m + n) >= CM__GEMM_STAGE32_MIN_HM
 * (bench/NOTES-gemm.md) */
#ifndef CM__GEMM_STAGE32_MIN_HM
#  define CM__GEMM_STAGE32_MIN_HM 768
#endif
static int cm__gemm_stage32(const cm__gemm_args_t *p, int64_t ld) {
    const int64_t e = cm__gemm_elem_bytes(p);
    if (p->k < 256 || (ld * e) % 32 == 0) return 0;
    const double m = p->m, n = p->n;
    return m * n >= (double)CM__GEMM_STAGE32_MIN_HM * (m + n);
}

/* cm__gemm_stage32 for a "TN" product (both operands K-contiguous): the operand of ld is
 * staged */
static int cm__gemm_stage32_tn(const cm__gemm_args_t *p, int64_t ld) {
    return p->a_kmajor && p->b_kmajor && cm__gemm_stage32(p, ld);
}

static int cm__gemm_sm90_operands(const cm__gemm_args_t *p, int config, int *pack_a,
                                  int *pack_b) {
    const int al_a = cm__operand_aligned16(p, p->a, p->lda, p->stride_a) &&
                     !cm__gemm_stage32_tn(p, p->lda);
    const int al_b = cm__operand_aligned16(p, p->b, p->ldb, p->stride_b) &&
                     !cm__gemm_stage32_tn(p, p->ldb);
    const int tf32 = p->in_type != CM__GEMM_BF16;
    int form = CM__SM90_FORM_PACK;
    if (config == CM__GEMM_SM90_BT && !tf32 && !p->b_kmajor && al_b)
        form = CM__SM90_FORM_BT;
    else if (config == CM__GEMM_SM90_AT && tf32 && !p->a_kmajor && al_a)
        form = CM__SM90_FORM_AT;
    else if (config == CM__GEMM_SM90_AT && tf32 && !p->b_kmajor && al_b)
        form = CM__SM90_FORM_AT_CC;
    if (pack_a) *pack_a = form != CM__SM90_FORM_AT && !(p->a_kmajor && al_a);
    if (pack_b)
        *pack_b =
            form != CM__SM90_FORM_BT && form != CM__SM90_FORM_AT_CC && !(p->b_kmajor && al_b);
    return form;
}

/* The Hopper kernel's 128 x 256 tiles over p's C in the kernel's orientation (C^T's for the
 * register-A form on C^T: "sm90+at" reading B as it is) */
static int64_t cm__gemm_sm90_wide_tiles(const cm__gemm_args_t *p, int config) {
    const int on_ct = config == CM__GEMM_SM90_AT &&
                      cm__gemm_sm90_operands(p, config, NULL, NULL) == CM__SM90_FORM_AT_CC;
    const int64_t tm = on_ct ? p->n : p->m, tn = on_ct ? p->m : p->n;
    return (tm + 127) / 128 * ((tn + 255) / 256);
}

/* Whether the long side's matrix (B when m <= n, else A) is read along K (its rows
 * K-contiguous): the orientation of the gemv and skinny kernels, and of split-K's gemv rule */
static int cm__gemm_long_along_k(const cm__gemm_args_t *p) {
    return p->m <= p->n ? p->b_kmajor : p->a_kmajor;
}

/* A and B both */
static int cm__aligned16(const cm__gemm_args_t *p) {
    return cm__operand_aligned16(p, p->a, p->lda, p->stride_a) &&
           cm__operand_aligned16(p, p->b, p->ldb, p->stride_b);
}

/* C's short side and its long side */
static int cm__gemm_c_short(const cm__gemm_args_t *p) {
    return p->m < p->n ? p->m : p->n;
}
static int cm__gemm_c_long(const cm__gemm_args_t *p) {
    return p->m < p->n ? p->n : p->m;
}

/* The shape class of p as the table sees it: a strided batch fills the multiprocessors with all
 * its matrices' tiles (as one matrix on sm_count / batch of them), and a batch of matrices of
 * at most 128 x 128 takes the tiny class's small tiles (a 128 x 256 tile would run mostly
 * empty). */
static int cm__gemm_select_shape(const cm__gemm_args_t *p, int sm_count) {
    const int batch = p->batch > 1 ? p->batch : 1;
    if (batch == 1) return cm__gemm_shape_class(p->m, p->n, p->k, sm_count);
    if (p->m <= 128 && p->n <= 128) return CM__GEMM_SHAPE_TINY;
    const int sms = sm_count < 1 ? 1 : sm_count;
    return cm__gemm_shape_class(p->m, p->n, p->k, (sms + batch - 1) / batch);
}

/* The tiny class (mma:64x64 in the table) on Hopper: the Hopper kernel's configuration for p
 * (0, CM__GEMM_SM90_BT or CM__GEMM_SM90_AT) where it runs p faster than mma:64x64, else -1.
 * The rules take one product whose operands the Hopper kernel reads as they are (16-byte
 * rows; A K-contiguous; B K-contiguous, or MN-major through the transposed-B form for bf16 and
 * the register-A form on C^T for TF32). Its split is cm__gemm_splitk_parts' (its parts run as
 * 128 x 128 tiles, twice its 128 x 256 tiles a part); rule 1 below CM__GEMM_SM90_LONG_K of TF32
 * K runs whole (cm__gemm_sm90_tf32_short), where the split it is taken for would give 2 parts
 * or more.
 *  1. Both operands K-contiguous, N at least 64 (a 256-column tile for 7 columns loses to
 *     mma:64x64), where the split gives at least 2 parts:
 *     - BF16: M at least 64 too, and the split gives at least 3/4 of the multiprocessors a
 *       block with a part of at least CM__GEMM_SM90_LONG_K of K. Shorter parts or fewer
 *       blocks lost to mma:64x64 on the H200 (bf16 "TN" shapes rule 2 does not take).
 *     - TF32 (mma.sync reaches a smaller share of the tensor cores' rate there than with
 *       bf16): from K = CM__GEMM_SM90_TF32_TINY_MIN_K, where C has a side of at least
 *       CM__GEMM_SM90_THIN_LONG_SIDE and one of at least CM__GEMM_SM90_TF32_TINY_MIN_SIDE
 *       or, under CM__GEMM_SM90_LONG_K of K (run whole), at least sms / 16 tiles of 128 x 128
 *       (CM__GEMM_SM90_TF32_TINY_TILES). The long sides were measured on the H200 when
 *       mma:64x64 took parts of 256 of K: 64 x 4096 x 1000 0.74x -> 0.87-0.94x cuBLAS (7 x
 *       4096 x 4096 0.89x -> 0.94-1.04x then; the skinny kernel's since). With its parts of
 *       128, mma:64x64 beat the split Hopper kernel over 16 rows: 16 x 3001 x 1500 1.20x
 *       against 0.91-0.92x (H100, two rounds), hence the short side's floor, rule 2's rows.
 *       The rest, H100 against cuBLAS, two rounds, the sweep's
 *       column-major "TN", this rule's Hopper kernel against mma:64x64 (its parts of at least
 *       128 of K, CM__SPLITK_ALIGN1_MIN_K): the Hopper kernel won over 9-16 tiles (384^2 x 600
 *       1.21x against 1.11x, 512^3 1.21x / 1.10x, 1024 x 256 x 700 1.09x / 1.04x) and lost
 *       over fewer (256^2 x 600 0.96-0.97x against 1.00x, 64^2 x 700 0.93-0.94x / 0.98-1.01x,
 *       64^2 x 1000 0.74-0.75x / 0.93-0.94x); 300 x 700 x 900 (18 tiles) 0.99x against
 *       1.02-1.03x. From K = 1024 its split lost everywhere measured: 128^2 x 1500 0.67x
 *       against 0.96-0.98x, 256 x 128 x 1200 0.71x / 1.02-1.03x, 256^2 x 1100 0.73x / 1.03x,
 *       512 x 256 x 1500 0.92-0.93x / 1.07-1.09x, 1000 x 64 x 1200 0.82x / 1.17-1.20x, 256^2 x
 *       3000 0.77-0.78x / 1.07-1.08x, 100^2 x 5000 0.71x / 1.07-1.09x, 128^2 x 2048 1.04-1.06x
 *       / 1.14x, 64^2 x 4096 1.04-1.05x / 1.08x (bench/NOTES-gemm.md). A long and
 *       thin C with M the short side, under CM__GEMM_SM90_LONG_K of K
 *       (cm__gemm_sm90_thin_whole), is taken whole, in one part, at any tile count (the other
 *       way round, a 256-column tile over 64 columns, was not measured).
 *  2. Long and thin: K at least CM__GEMM_SM90_LONG_K and, in the kernel's own orientation
 *     (C^T's for the register-A form on C^T), one side at least CM__GEMM_SM90_THIN_LONG_SIDE,
 *     rows at least 32 and columns at least 64, where the split gives at least 2 parts or,
 *     but for the register-A form on C^T, K is under 2 CM__GEMM_SM90_LONG_K (whole, it
 *     measured better there). H200 against cuBLAS, the column-major sweep's 64 / 32 / 128 x
 *     4096 / 2048 shapes at K = 1024 .. 8192 both ways round, NN and TN: of the 23 this rule
 *     moves, 22 were measured in the split it gives, mma:64x64 (4 parts) 0.64-0.89x ->
 *     0.77-1.09x, each one better. What it leaves measured no better: 32 columns (bf16
 *     0.66-0.79x against 0.72-0.77x, TF32 on C^T 0.62-0.69x against 0.78-0.82x) and C^T's
 *     64 columns at K = 1024 (2 parts 0.86x against 0.86-0.91x). A C of more tiles than
 *     the split takes (34 of 128 x 256 at long K) was not measured and keeps mma:64x64.
 *  3. TF32 with B MN-major (the register-A form on C^T), K from CM__GEMM_SM90_TF32_TINY_MIN_K
 *     to under CM__GEMM_SM90_LONG_K, C^T's rows at least CM__GEMM_SM90_AT_WHOLE_MIN_ROWS and
 *     its columns at least CM__GEMM_SM90_AT_WHOLE_MIN_COLS: K whole (cm__gemm_sm90_thin_whole). H100 against cuBLAS, two
 *     rounds, the sweep's column-major "NN", mma:64x64 -> this: 4096 x 64 x 1000 0.82-0.84x ->
 *     1.10-1.15x, 4096 x 64 x 512 0.85-0.89x -> 0.97-0.99x, 8192 x 64 x 1000 0.75-0.78x ->
 *     0.91-0.94x, 4096 x 32 x 1000 0.83-0.85x -> 0.99-1.00x, 4096 x 128 x 1000 0.72x ->
 *     0.94-0.95x; at 2048 rows mma:64x64 (3 parts) won, 0.98-1.01x against 0.88-0.91x, and at
 *     K = 256 the two were even. With mma.sync's TF32 parts of 128 of K (more parts than when
 *     the above was measured) 32 columns went back to mma:64x64: 4096 x 32 x 900 in its 4
 *     parts 1.08-1.09x against this form's 0.94-0.97x, where 64 columns stayed even (4096 x
 *     64 x 1000 1.09-1.10x against 1.11-1.15x): the columns' floor is
 *     CM__GEMM_SM90_AT_WHOLE_MIN_COLS. Under it, from CM__GEMM_SM90_AT_WHOLE_NARROW_COLS, this
 *     form still wins where C^T's rows give at least sms / CM__GEMM_SM90_AT_WHOLE_NARROW_TILES
 *     of its 128-row tiles (mma:64x64 then splits K in only 2-3 parts): 6000 x 56 x 1000
 *     0.83-0.92x against mma:64x64's 0.74-0.77x, 5600 x 48 x 800 0.95x against 0.89-0.92x,
 *     6000 x 40 x 700 0.89-1.00x against 0.84-0.90x (four rounds). At fewer rows mma:64x64 won
 *     (4096 x 32 x 900 1.08-1.13x against 0.99-1.00x, 4096 x 48 x 900 1.05-1.08x against
 *     1.04-1.05x, 5000 x 40 x 900 1.11x against 0.96-0.98x), and at 32 columns at any rows
 *     (12000 x 32 x 900 0.88-0.90x against 0.63-0.68x, 7000 x 32 x 600 0.90x against
 *     0.83-0.91x, 8192 x 32 x 800 0.84-0.86x against 0.82-0.88x; a 128-wide tile over 32
 *     columns computes four times what it keeps). H100, two rounds each but where noted.
 *  4. BF16 over a narrow and long C with K under CM__GEMM_SM90_LONG_K
 *     (cm__gemm_sm90_bf16_narrow: the short side 32-64, the long side at least 5000, K from
 *     768): the Hopper kernel whole, B MN-major through the transposed-B form. mma:64x64
 *     splits such a K in 2 parts over 188-256 tiles and loses to the Hopper kernel's 47-64
 *     whole tiles of 128 x 128. H100 against cuBLAS, the sweep's column-major shapes with
 *     leading dimensions off 16 bytes (both kernels behind the realignment's copy),
 *     mma:64x64 -> this, "NN" (sm90+bt) / "TN" (both copied K-contiguous): 8192 x 32 x 900
 *     0.75-0.76 / 0.69-0.71x -> 0.87-0.91 / 0.78-0.82x (two rounds), 6000 x 32 x 900 0.84 /
 *     0.76x -> 0.97 / 0.81-0.85x, 8192 x 48 x 900 0.76 / 0.62x -> 0.94 / 0.72-0.77x (one
 *     round). H200, two rounds, 16-byte rows (no copy), mma:64x64 split -> this, "NN" / "TN":
 *     within 32-48 by 6000, 8192 x 32 x 896, 6000 x 48 x 1000, 7000 x 40 x 800, 6000 x 32 x
 *     768 and 16384 x 40 x 960 0.96-1.18x (the default) against mma:64x64's 0.81-0.97x; just
 *     past those bounds, 5000 x 32 x 896 (3 parts) 0.89-1.03x -> 1.00-1.20x and 8192 x 56 x
 *     896 (2 parts) 0.80-0.86x -> 1.06-1.20x, so the bounds were 56 and 5000. H100, two rounds,
 *     past 56, the default (mma:64x64) -> this, "NN" / "TN": 8192 x 64 x 896 0.78-0.83 /
 *     0.75-0.81x -> 1.12-1.15 / 1.14x, 6000 x 60 x 896 0.80-0.88 / 0.79-0.84x -> 1.05-1.14 /
 *     1.07-1.13x: the short side's bound is 64, the widest measured (mma:64x64's tile).
 *     From 12000 rows the class is another, whose table entry is the Hopper kernel;
 *     at K = CM__GEMM_SM90_LONG_K and beyond, rule 2's note: over 32 columns the split
 *     mma:64x64 held.
 * The figures are in bench/NOTES-gemm.md. */
#define CM__GEMM_SM90_LONG_K 1024
#define CM__GEMM_SM90_TF32_TINY_MIN_K 512
/* rule 1's TF32 floor of C's 128 x 128 tiles: sms / CM__GEMM_SM90_TF32_TINY_TILES; and of the
 * short side of a long C from K = CM__GEMM_SM90_LONG_K (rule 2's rows) */
#define CM__GEMM_SM90_TF32_TINY_TILES 16
#define CM__GEMM_SM90_TF32_TINY_MIN_SIDE 32
#define CM__GEMM_SM90_THIN_LONG_SIDE 2048
/* Rule 3's long side: C^T's rows (the columns of C) */
#define CM__GEMM_SM90_AT_WHOLE_MIN_ROWS 4096
/* and its columns (C's rows) */
#define CM__GEMM_SM90_AT_WHOLE_MIN_COLS 64
/* fewer columns, down to this, where C^T's 128-row tiles number at least
 * sms / CM__GEMM_SM90_AT_WHOLE_NARROW_TILES */
#define CM__GEMM_SM90_AT_WHOLE_NARROW_COLS 40
#define CM__GEMM_SM90_AT_WHOLE_NARROW_TILES 3
/* TF32 on the Hopper kernel over a long and thin C (one side at least
 * CM__GEMM_SM90_THIN_LONG_SIDE, the other at most 128) with K under CM__GEMM_SM90_LONG_K: K
 * whole, not split (cm__gemm_splitk_parts). The split's parts of 256-320 of K cost more in the
 * reduction than the idle multiprocessors do. H100 against cuBLAS, two rounds, the sweep's
 * column-major "TN" 4 parts -> whole: 4096 x 64 x 1000 0.89-0.94x -> 1.06-1.23x, 4096 x 128 x
 * 1000 0.96-0.98x -> 1.32-1.43x, 4096 x 32 x 1000 0.87-0.94x -> 1.09-1.20x, 3001 x 64 x 1000
 * 0.93x -> 1.11-1.15x, 2048 x 64 x 1000 0.87-0.92x -> 0.98-1.05x; 4096 x 64 x 512 2 parts
 * 0.95-1.00x -> 1.03-1.10x; from K = 2048 the split won (4096 x 64 x 2048 1.10-1.22x against
 * 0.93-1.03x). The register-A form on C^T in 4 parts lost the same way (2048 x 64 x 1000 "NN"
 * 0.64x against 0.88-0.91x whole; bench/NOTES-gemm.md). */
static int cm__gemm_sm90_thin_whole(const cm__gemm_args_t *p) {
    return p->in_type != CM__GEMM_BF16 && p->k < CM__GEMM_SM90_LONG_K &&
           cm__gemm_c_short(p) <= 128 && cm__gemm_c_long(p) >= CM__GEMM_SM90_THIN_LONG_SIDE;
}
/* TF32 on the Hopper kernel reading both operands as they are (configuration 0) with K under
 * CM__GEMM_SM90_LONG_K: K whole. Rule 1 takes such products where the split gives at least 2
 * parts, but whole they ran faster. H100 against cuBLAS, two runs, the column-major sweep's
 * "TN", split -> whole: 256^2 x 600 0.76-0.78x -> 0.99-1.01x (3 parts before), 64^2 x 700
 * 0.72x -> 0.93-0.94x, 384^2 x 600 0.91-0.94x -> 1.18-1.19x, 1024 x 256 x 700 0.87-0.89x ->
 * 1.07-1.11x, 512^3 1.12-1.19x -> 1.20x (2), 300 x 700 x 900 0.95-0.99x -> 0.98-0.99x,
 * 64^2 x 1000 0.72-0.73x -> 0.75x; from K = 1024 the split held or won (256 x 128 x 1200
 * 0.72-0.73x against 0.71-0.72x, 128^2 x 1500 0.67-0.68x against 0.53x; bench/NOTES-gemm.md) */
static int cm__gemm_sm90_tf32_short(const cm__gemm_args_t *p, int config) {
    return config == 0 && p->in_type == CM__GEMM_F32 && p->k < CM__GEMM_SM90_LONG_K;
}
/* Rule 3's products (the register-A form on C^T with K whole) and cm__gemm_sm90_at_too_narrow's:
 * TF32 with B MN-major, K from CM__GEMM_SM90_TF32_TINY_MIN_K to under CM__GEMM_SM90_LONG_K */
static int cm__gemm_sm90_at_short_k(int precision, const cm__gemm_args_t *p) {
    return precision == CM_GEMM_TF32 && !p->b_kmajor && p->k >= CM__GEMM_SM90_TF32_TINY_MIN_K &&
           p->k < CM__GEMM_SM90_LONG_K;
}
/* Rule 4's products: BF16 with K from CM__GEMM_SM90_BF16_NARROW_MIN_K to under
 * CM__GEMM_SM90_LONG_K over a C whose short side is CM__GEMM_SM90_BF16_NARROW_MIN_SHORT to
 * CM__GEMM_SM90_BF16_NARROW_MAX_SHORT and whose long side is at least
 * CM__GEMM_SM90_BF16_NARROW_MIN_LONG */
#define CM__GEMM_SM90_BF16_NARROW_MIN_K 768
#define CM__GEMM_SM90_BF16_NARROW_MIN_SHORT 32
#define CM__GEMM_SM90_BF16_NARROW_MAX_SHORT 64
#define CM__GEMM_SM90_BF16_NARROW_MIN_LONG 5000
static int cm__gemm_sm90_bf16_narrow(const cm__gemm_args_t *p) {
    const int lo = cm__gemm_c_short(p), hi = cm__gemm_c_long(p);
    return p->in_type == CM__GEMM_BF16 && p->k >= CM__GEMM_SM90_BF16_NARROW_MIN_K &&
           p->k < CM__GEMM_SM90_LONG_K && lo >= CM__GEMM_SM90_BF16_NARROW_MIN_SHORT &&
           lo <= CM__GEMM_SM90_BF16_NARROW_MAX_SHORT && hi >= CM__GEMM_SM90_BF16_NARROW_MIN_LONG;
}
static int cm__gemm_splitk_parts_of(const cm__gemm_args_t *p, cm__gemm_choice_t ch,
                                    int precision, int sms, int forced, int thin_whole);
static int cm__gemm_splitk_tf32_row(const cm__gemm_args_t *p, cm__gemm_choice_t ch, int sms);
/* cm__gemm_sm90_tiny; tf32_any_c 1: TF32 rule 1 at any C and K from
 * CM__GEMM_SM90_TF32_TINY_MIN_K (without its long-side / tile-count condition: the realignment's
 * test of a copied form that the Hopper kernel would run split, cm__gemm_realign_mode) */
static int cm__gemm_sm90_tiny_of(int precision, int arch, int fam, int have_sm90, int sms,
                                 const cm__gemm_args_t *p, int tf32_any_c) {
    const int tf32 = precision == CM_GEMM_TF32;
    if (arch != CM__GEMM_ARCH_SM90 || !have_sm90 || fam == CM__GEMM_FAM_FP32 || p->batch > 1 ||
        sms < 1 || p->k < 1 || !p->a_kmajor || !cm__aligned16(p) ||
        cm__gemm_select_shape(p, sms) != CM__GEMM_SHAPE_TINY)
        return -1;
    if (p->b_kmajor) {
        /* the parts the kernel's split gives, but for cm__gemm_sm90_tf32_short's K whole:
         * rule 1 takes the products that split would cut (BF16 is never thin_whole nor
         * tf32_short, so its count is cm__gemm_splitk_parts' too) */
        const int thin_whole = cm__gemm_sm90_thin_whole(p);
        const int parts = thin_whole ? 1
                                     : cm__gemm_splitk_parts_of(
                                           p, (cm__gemm_choice_t){CM__GEMM_KERNEL_SM90, 0},
                                           precision, sms, 0, 0);
        const int64_t tiles = cm__gemm_sm90_wide_tiles(p, 0);
        const int64_t tiles128 = ((int64_t)p->m + 127) / 128 * (((int64_t)p->n + 127) / 128);
        const int rule1 = p->n >= 64 &&
                          (tf32 ? p->k >= CM__GEMM_SM90_TF32_TINY_MIN_K &&
                                      (parts >= 2 || (p->m < p->n && thin_whole)) &&
                                      (tf32_any_c ||
                                       (cm__gemm_c_long(p) >= CM__GEMM_SM90_THIN_LONG_SIDE &&
                                        cm__gemm_c_short(p) >=
                                            CM__GEMM_SM90_TF32_TINY_MIN_SIDE) ||
                                       (p->k < CM__GEMM_SM90_LONG_K &&
                                        CM__GEMM_SM90_TF32_TINY_TILES * tiles128 >= sms))
                                : parts >= 2 && p->m >= 64 &&
                                      8 * tiles * parts >= 3 * (int64_t)sms &&
                                      p->k >= (int64_t)CM__GEMM_SM90_LONG_K * parts);
        if (rule1) return 0;
    }
    const int on_ct = tf32 && !p->b_kmajor; /* the register-A form on C^T */
    const int config = p->b_kmajor ? 0 : tf32 ? CM__GEMM_SM90_AT : CM__GEMM_SM90_BT;
    const int rows = on_ct ? p->n : p->m, cols = on_ct ? p->m : p->n;
    /* rule 3 */
    if (cm__gemm_sm90_at_short_k(precision, p) && rows >= CM__GEMM_SM90_AT_WHOLE_MIN_ROWS &&
        (cols >= CM__GEMM_SM90_AT_WHOLE_MIN_COLS ||
         (cols >= CM__GEMM_SM90_AT_WHOLE_NARROW_COLS &&
          CM__GEMM_SM90_AT_WHOLE_NARROW_TILES * (((int64_t)rows + 127) / 128) >= sms)))
        return config;
    /* rule 4 */
    if (cm__gemm_sm90_bf16_narrow(p)) return config;
    /* rule 2 */
    if (p->k < CM__GEMM_SM90_LONG_K || rows < 32 || cols < 64 ||
        cm__gemm_c_long(p) < CM__GEMM_SM90_THIN_LONG_SIDE)
        return -1;
    const int parts = cm__gemm_splitk_parts(p, (cm__gemm_choice_t){CM__GEMM_KERNEL_SM90, config},
                                            precision, sms, 0);
    return parts >= 2 || (!on_ct && p->k < 2 * CM__GEMM_SM90_LONG_K) ? config : -1;
}
/* One product of rule 3's precision, layout and K (cm__gemm_sm90_at_short_k: the Hopper kernel
 * would run the register-A form on C^T) with C^T of fewer than CM__GEMM_SM90_AT_WHOLE_MIN_COLS
 * columns (C's rows) that rule 3 does not take: mma:64x64 rather than the Hopper kernel at any
 * number of C^T's rows. Rule 3 leaves such products to mma:64x64 in the tiny class; from about
 * 8700 rows (on 132 multiprocessors) the class is another, whose table entry is the Hopper
 * kernel in its 256-row tiles: H100 against cuBLAS, column-major "NN", that -> mma:64x64,
 * 12000 x 32 x 900 0.62-0.68x -> 0.86-0.90x (four rounds; a 128-wide tile over 32 columns
 * computes four times what it keeps), 12000 x 48 x 900 0.62-0.65x -> 0.77-0.81x, 9000 x 40 x
 * 1000 0.65-0.70x -> 0.75-0.80x (three rounds each); held out, one round: 30000 x 48 x 900
 * 0.58x -> 0.69-0.71x, 12000 x 56 x 800 0.65x -> 0.68x, 20000 x 60 x 1000 0.72x -> 0.81-0.85x. */
static int cm__gemm_sm90_at_too_narrow(int precision, const cm__gemm_args_t *p) {
    return p->batch <= 1 && cm__gemm_sm90_at_short_k(precision, p) &&
           p->m < CM__GEMM_SM90_AT_WHOLE_MIN_COLS;
}
static int cm__gemm_sm90_tiny(int precision, int arch, int fam, int have_sm90, int sms,
                              const cm__gemm_args_t *p) {
    return cm__gemm_sm90_tiny_of(precision, arch, fam, have_sm90, sms, p, 0);
}

/* FP32 on Hopper, the tiny class's 32 x 64 FFMA tiles (4 blocks a multiprocessor): the 64 x 64
 * ones instead (2 a multiprocessor, twice the work per operand load) where split-K
 * (cm__gemm_splitk_parts) gives those at least 3/4 of their resident slots. H200 against
 * cuBLAS, two sweeps: 64 x 4096 x 4096 0.72-0.78x -> 0.84-0.87x (either orientation),
 * 127 x 1000 x 3001 TN 0.73x -> 0.87-0.89x, 1000 x 127 x 3001 0.74-0.80x -> 0.86-0.96x; where
 * the 64 x 64 tiles are not split (K under 1024 with more than a quarter of the SMs' tiles:
 * 4096 x 64 x 1000 0.93-0.99x -> 0.54-0.58x, 3001 x 127 x 1000, 512^3) or too few (127^3) they
 * lost, and those keep 32 x 64; so did a side under 64 (4096 x 7 x 4096 NN 1.58x -> 0.93x: a
 * 64-row tile over 7 rows), which keeps it too (bench/NOTES-gemm.md). One product only (split-K
 * never splits a batch). */
/* The blocks FFMA configuration `config` runs p in on sm_count multiprocessors: its tiles of C
 * times the parts of K cm__gemm_splitk_parts gives it (in *parts); 0 for a configuration this
 * build did not compile. One FP32 product (split-K never splits a batch). */
static int64_t cm__gemm_ffma_split_blocks(const cm__gemm_args_t *p, int config, int sm_count,
                                          int *parts) {
    *parts = 1;
    if (!cm__gemm_ffma_built(config)) return 0;
    int bm = 0, bn = 0;
    cm__gemm_ffma_tile(config, &bm, &bn);
    if (bm < 1 || bn < 1) return 0;
    const cm__gemm_choice_t ch = {CM__GEMM_KERNEL_FFMA, config};
    *parts = cm__gemm_splitk_parts(p, ch, CM_GEMM_FP32, sm_count, 0);
    return ((int64_t)p->m + bm - 1) / bm * (((int64_t)p->n + bn - 1) / bn) * *parts;
}

static int cm__gemm_ffma_64_fills(const cm__gemm_args_t *p, int sm_count) {
    if (p->batch > 1 || sm_count < 1 || p->k < 1 || p->m < 64 || p->n < 64) return 0;
    int parts = 1;
    const int64_t blocks = cm__gemm_ffma_split_blocks(p, CM__FFMA_64x64x16, sm_count, &parts);
    return 4 * blocks >= 3 * 2 * (int64_t)sm_count;
}

/* FP32 on Hopper, the small class's 64 x 64 FFMA tiles (C of fewer 128 x 128 tiles than
 * multiprocessors but at least as many 64 x 64 ones): the pipelined 128 x 128 ones (128x128x16q3,
 * twice the work per operand load) instead where those, split along K by cm__gemm_splitk_parts,
 * give at least 3/4 of the multiprocessors a block, from K = CM__GEMM_FFMA_128_SMALL_MIN_K (the
 * parts: split-K's own, at least CM__SPLITK_MIN_K of K). H200 against cuBLAS, the 64 x 64 tiles
 * (their split) -> the 128 x 128 ones (theirs), NN and TN: 768^2 x 4096 0.70x -> 0.93-0.95x, 1024^2 x
 * 8192 0.73-0.78x -> 0.91-0.98x, 256 x 4096 x 4096 0.74-0.76x -> 0.91-0.94x, 96 x 5000 x 3000
 * 0.74-0.77x -> 0.82-0.87x, 640^2 x 2048 0.92-0.94x -> 0.98-1.01x, 512 x 4096 x 512 (128 tiles,
 * whole) 0.85-0.95x -> 0.96-1.08x; with parts of 256-375 of K, 1024^3 (4 parts) 0.91-0.94x ->
 * 1.04-1.09x, 1024^2 x 1500 (4) 0.81-0.82x -> 0.91-0.93x, 1100^2 x 1024 (3) 0.73-0.88x ->
 * 0.93-1.10x; 1000^3 (64 tiles, whole: too few) 0.85-0.92x -> 0.59-0.60x keeps 64 x 64
 * (bench/NOTES-gemm.md). One product only (split-K never splits a batch). */
#define CM__GEMM_FFMA_128_SMALL_MIN_K 512
static int cm__gemm_ffma_128_fills(const cm__gemm_args_t *p, int sm_count) {
    if (p->batch > 1 || sm_count < 1 || p->k < CM__GEMM_FFMA_128_SMALL_MIN_K) return 0;
    int parts = 1;
    const int64_t blocks =
        cm__gemm_ffma_split_blocks(p, CM__FFMA_128x128x16q3, sm_count, &parts);
    return 4 * blocks >= 3 * (int64_t)sm_count;
}

/* FP32 on Hopper, a short K (CM__GEMM_FFMA_SHORT_K_MIN .. CM__GEMM_FFMA_SHORT_K, the range
 * measured; shorter ones are bound by writing C) on C of at least as many 128 x 128 tiles as
 * multiprocessors (the skinny class, whose table entry is 128x128x16q3): those tiles only where
 * they fill at least one whole wave of their resident blocks and use at least 7/8 of the slots
 * of the waves they take (a thin last wave weighs little only behind many full ones); else the
 * 64 x 64 tiles, four times the blocks (a short K makes each block's work small). H200 against
 * cuBLAS, 128x128x16q3 -> ffma:64x64x16, NN / TN, the tiles over 264 slots: 1500 x 3000 x 64
 * (288 tiles: 0.55 of 2 waves used) 0.80x -> 1.11-1.12x, 2500^2 x 64 (0.76) 0.92-0.93x ->
 * 1.09-1.11x, 3001^2 x 100 (0.73) 0.65x -> 0.74x, 3001 x 1000 x 64 (under a wave) 0.70-0.73x ->
 * 0.78-0.84x, 1000 x 3001 x 127 (under) 0.92-0.99x -> 0.97-1.05x, 2000^2 x 64 (under, 0.97)
 * 0.91-1.03x -> 0.98-1.08x; 4096 x 2048 x 64 (0.97 of 2 waves) keeps them, 1.11-1.22x against
 * 0.96-1.02x (bench/NOTES-gemm.md). One product only (a batch was not measured). */
#define CM__GEMM_FFMA_SHORT_K_MIN 32
#define CM__GEMM_FFMA_SHORT_K 128
static int cm__gemm_ffma_128_thin_wave(const cm__gemm_args_t *p, int sm_count) {
    if (p->batch > 1 || p->k < CM__GEMM_FFMA_SHORT_K_MIN || p->k > CM__GEMM_FFMA_SHORT_K ||
        sm_count < 1 || !cm__gemm_ffma_built(CM__FFMA_64x64x16))
        return 0;
    int parts = 1; /* 1: a K this short is never split */
    const int64_t blocks = cm__gemm_ffma_split_blocks(p, CM__FFMA_128x128x16q3, sm_count, &parts);
    const int64_t slots =
        (int64_t)sm_count * cm__gemm_ffma_blocks_per_sm(CM__FFMA_128x128x16q3);
    if (blocks < 1 || slots < 1) return 0;
    const int64_t waves = (blocks + slots - 1) / slots;
    return blocks < slots || 8 * blocks < 7 * waves * slots;
}

/* FP32 on Hopper, a C of few rows (C row-major; at most 64) beside many columns with K from
 * CM__GEMM_FFMA_NARROW_MIN_K (the short-K floor, CM__GEMM_FFMA_SHORT_K_MIN), where the class's
 * table entry, the short-K rule's 64 x 64 tiles (cm__gemm_ffma_128_thin_wave) or the small
 * class's 64 x 64 ones would run:
 * tiles that fit those rows. 128 x 128 tiles over 32 rows compute four times what they keep, 64
 * x 64 ones twice: up to 32 rows the 32 x 64 tiles, up to 64 the 64 x 64 ones (in place of
 * 128 x 128; a C of at most 64 columns beside many rows takes them too, the same fit turned).
 * Each keeps its own split of K (cm__gemm_splitk_parts). H100 against cuBLAS, two rounds, the
 * column-major sweep's "NN" / "TN" (C^T: its n here is C's rows), table entry -> this: 12000 x
 * 32 x 900 (64 x 64) 0.65-0.77x -> 1.05-1.33x, 20000 x 32 x 900 (128 x 128) 0.30-0.35x ->
 * 0.95-1.01x, 16384 x 32 x 1024 0.46-0.58x -> 0.95-1.32x, 9000 x 32 x 2000 0.39-0.56x ->
 * 0.89-1.28x, 20000 x 48 x 1024 0.40-0.47x -> 0.84-0.99x (32 x 64: 0.83-0.91x), 30000 x 64 x
 * 512 0.51-0.58x -> 0.86-0.96x (32 x 64: 0.71-0.76x); held out, one round, 128 x 128 tiles
 * forced -> this: 15000 x 24 x 700 0.54x -> 1.08-1.17x, 25000 x 56 x 800 0.45-0.47x ->
 * 0.94-0.98x, 40000 x 32 x 3000 0.35-0.52x -> 0.92-1.25x, and turned (C of few columns) 32 x
 * 20000 x 900 0.32-0.34x -> 0.68-0.70x, 64 x 30000 x 600 0.52-0.61x -> 0.89-1.02x. K under
 * 512 behaves the same (H200, one round): 20000 x 32 x 256 (128 x 128) 0.44-0.48x -> 1.26-1.28x,
 * 20000 x 32 x 128 (64 x 64, short-K rule) 1.01-1.06x -> 1.37-1.41x, 12000 x 32 x 384 (64 x 64)
 * 0.82-0.87x -> 1.24-1.30x, 30000 x 64 x 256 (128 x 128) 0.63-0.69x -> 1.02-1.15x, turned 32 x
 * 20000 x 256 0.45-0.49x -> 0.93-0.95x; bench/NOTES-gemm.md. One product only (a batch was
 * not measured). */
#define CM__GEMM_FFMA_NARROW_MIN_K CM__GEMM_FFMA_SHORT_K_MIN
/* Under that floor (K of 1-31, bound by writing C), a C whose short side is at most
 * CM__GEMM_FFMA_NARROW_SHORT_K_32 rows or columns takes the 32 x 64 tiles (the most blocks),
 * and one whose short side is above that and at most CM__GEMM_FFMA_NARROW_SHORT_K_SIDE the 64 x
 * 64 ones. H100 against cuBLAS, two rounds each, the column-major sweep's "NN" / "TN", the
 * 128 x 128 tiles / 32 x 64 / 64 x 64: short side up to 32, 40000 x 32 x 16
 * 1.10-1.18x / 1.49-1.76x / 1.18-1.41x, 30000 x 24 x 8 1.47-1.53x / 1.59-1.65x / 1.45-1.55x,
 * 50000 x 16 x 12 0.89-1.10x / 1.35-1.37x / 1.12-1.31x, turned 32 x 40000 x 16 1.05-1.11x /
 * 1.41-1.45x / 1.19-1.41x; above 32, 25000 x 48 x 20 1.12-1.32x / 1.19-1.23x / 1.36-1.54x,
 * 30000 x 56 x 31 1.07-1.15x / 1.19-1.25x / 1.32-1.49x, turned 64 x 30000 x 8 1.31-1.40x /
 * 1.29-1.32x / 1.38-1.58x, 3000 x 64 x 16 1.23-1.26x / 1.60-1.63x / 1.55-1.75x, 20000 x 64 x
 * 24 1.24-1.31x / 1.49-1.56x / 1.26-1.47x; bench/NOTES-gemm.md. */
#define CM__GEMM_FFMA_NARROW_SHORT_K_32 32
#define CM__GEMM_FFMA_NARROW_SHORT_K_SIDE 64
static int cm__gemm_ffma_narrow_config(const cm__gemm_args_t *p, int config) {
    if (p->batch > 1 || p->k < 1 ||
        (config != CM__FFMA_128x128x16q3 && config != CM__FFMA_64x64x16))
        return config;
    if (p->k < CM__GEMM_FFMA_NARROW_MIN_K) {
        const int side = cm__gemm_c_short(p);
        if (side <= CM__GEMM_FFMA_NARROW_SHORT_K_32 && cm__gemm_ffma_built(CM__FFMA_32x64x16))
            return CM__FFMA_32x64x16;
        if (side <= CM__GEMM_FFMA_NARROW_SHORT_K_SIDE && cm__gemm_ffma_built(CM__FFMA_64x64x16))
            return CM__FFMA_64x64x16;
        return config;
    }
    if (p->m <= 32 && cm__gemm_ffma_built(CM__FFMA_32x64x16)) return CM__FFMA_32x64x16;
    if (config == CM__FFMA_128x128x16q3 && (p->m <= 64 || p->n <= 64) &&
        cm__gemm_ffma_built(CM__FFMA_64x64x16))
        return CM__FFMA_64x64x16;
    return config;
}

/* ---------------------------------------------------------------------- TF32 align1
 * A TF32 product that the realignment would copy and then run on mma.sync tiles runs those
 * tiles' align1 form on the operands as they are instead, where the build has it
 * (kernels/gemm.h, CM__GEMM_MMA_ALIGN1): the copy of (m + n) k floats each way is saved for
 * 4-byte copies into shared memory in place of 16-byte ones (cm__gemm_realign_mode); a forced
 * mma:128x128 / mma:64x64 runs it on any such TF32 product (cm__gemm_select). BF16 has no such
 * form (cp.async copies 4, 8 or 16 bytes, and a bf16 row of odd length starts on 2 bytes). */
static int cm__gemm_align1_state = -1; /* -1: cm__gemm_mma_align1_for(major) */

void cm__gemm_align1_set_for_tests(int on) {
    cm__gemm_align1_state = on < 0 ? -1 : (on != 0);
}

/* Whether the align1 form of mma.sync configuration `config` takes p in precision on a device
 * of compute capability `major`: the form on (built with code for that architecture:
 * cm__gemm_mma_align1_for), TF32, a tile that has the form, A and B on whole floats (the
 * kernel's conditions, cm__gemm_mma) */
static int cm__gemm_align1_takes(int precision, int major, const cm__gemm_args_t *p,
                                 int config) {
    const int on = cm__gemm_align1_state >= 0 ? cm__gemm_align1_state
                                              : cm__gemm_mma_align1_for(major);
    return on && precision == CM_GEMM_TF32 && p->in_type == CM__GEMM_F32 &&
           (config == CM__MMA_128x128 || config == CM__MMA_64x64) &&
           (uintptr_t)p->a % 4u == 0 && (uintptr_t)p->b % 4u == 0;
}

cm__gemm_choice_t cm__gemm_select(int precision, int major, int minor, int sm_count,
                                  const cm__gemm_args_t *p, int have_sm90, const char *override) {
    const int arch = cm__gemm_arch_class(major, minor);
    const int fam = cm__gemm_family(precision);
    const int shape = cm__gemm_select_shape(p, sm_count);
    cm__gemm_choice_t c = cm__gemm_table_entry(arch, fam, shape);
    cm__gemm_choice_t forced;
    /* an FFMA or mma.sync configuration this build did not compile (CUDAMODEL_BUILD_TUNING=OFF)
     * is ignored like an unknown name: the table decides */
    const int is_forced =
        override != NULL && override[0] != '\0' && cm__gemm_parse_name(override, &forced) &&
        !(forced.kernel == CM__GEMM_KERNEL_FFMA && !cm__gemm_ffma_built(forced.config)) &&
        !(forced.kernel == CM__GEMM_KERNEL_MMA && !cm__gemm_mma_built(forced.config));
    if (is_forced) c = forced;
    const int small = cm__gemm_c_short(p), large = cm__gemm_c_long(p);
    /* the orientation of the gemv and skinny kernels: the long side's matrix read along K (its
     * rows K-contiguous) or across */
    const int along_k = cm__gemm_long_along_k(p);
    /* a vector side of C (m or n == 1): the bandwidth-bound matrix-vector kernel, any arch;
     * but a single product with a short K over many rows read along K takes the skinny kernel:
     * gemv gives a row a warp, whose lanes then hold a few elements each (1 x 4096 x 127:
     * skinny 1.11-1.40x cuBLAS, gemv 0.85-0.88x; bench/NOTES-gemm.md) */
    const int vector_shape = p->k > 0 && (p->m == 1 || p->n == 1);
    const int vector_short_k = CM__GEMM_SKINNY_DISPATCH && vector_shape && along_k &&
                               p->batch <= 1 && p->k <= CM__GEMM_GEMV_SHORT_K &&
                               large >= CM__GEMM_SKINNY_ROWS_PER_SM * sm_count;
    if (vector_shape && (is_forced ? c.kernel == CM__GEMM_KERNEL_GEMV : !vector_short_k))
        return (cm__gemm_choice_t){CM__GEMM_KERNEL_GEMV, 0};
    /* a side of 2 .. 16 (and enough rows on the other): the one-pass skinny kernel, any arch,
     * along K only (across K it measured 0.06-0.22x cuBLAS where the tiles ran 0.43-0.55x:
     * bench/NOTES-gemm.md) */
    const int64_t skinny_rows = (int64_t)large * (p->batch > 1 ? p->batch : 1);
    const int skinny_fits = p->k > 0 && small >= 1 && small <= CM__GEMM_SKINNY_MAX;
    /* enough rows for its blocks to fill the GPU, or a K short enough that few blocks finish
     * quickly (a long K over few rows is the tiles' split-K's) */
    const int skinny_fills = skinny_rows >= (int64_t)CM__GEMM_SKINNY_ROWS_PER_SM * sm_count ||
                             p->k <= CM__GEMM_SKINNY_SHORT_K;
    /* bf16 with both operands K-contiguous and 16-byte rows: the tensor-core tiles are faster
     * (1.09x against skinny's 0.81x cuBLAS at 7 x 4096 x 4096); TF32 likewise from K =
     * CM__SPLITK_LONG_K, where split-K fills the GPU with the tiles' blocks (H200: 7 x 4096 x
     * 4096 TN mma:64x64 0.89-0.90x against 0.78-0.81x, 4096 x 7 x 4096 TN 0.84x against 0.65x),
     * and over a shorter K where C alone gives the 64 x 64 tiles at least
     * CM__GEMM_SKINNY_TC_TF32_FILL of the multiprocessors (H100 against cuBLAS: 7000 x 16 x 300
     * TN mma:64x64 0.99-1.06x against skinny's 0.73x, 7000 x 12 x 300 TN 1.00-1.08x against
     * 0.76x, 16 x 8192 x 512 "TN" 0.86-0.90x against 0.79-0.81x; fewer tiles not measured;
     * bench/NOTES-gemm.md) */
    const int64_t tiles64 = ((int64_t)large + 63) / 64 * (p->batch > 1 ? p->batch : 1);
    const int tc_family =
        p->in_type == CM__GEMM_BF16 ||
        (precision == CM_GEMM_TF32 &&
         (p->k >= CM__SPLITK_LONG_K ||
          4 * tiles64 >= (int64_t)CM__GEMM_SKINNY_TC_TF32_FILL * sm_count));
    /* but a small side the skinny kernel runs in its 4- or 8-vector form (kernels/
     * gemm_skinny.cu: registers for 4 blocks per SM) keeps it: at most 4 for bf16, 8 for TF32
     * (H100 against cuBLAS: TF32 7 x 4096 x 4096 TN skinny 1.13-1.15x, mma:64x64 0.98x; 3 x
     * 8192 x 4096 TN 1.37x against 0.98x; 12 x 4096 x 4096 TN 0.68x against 0.86x; bf16 2 x
     * 50000 x 1000 TN 1.12x against the wgmma kernel's 0.72x, 3 x 8192 x 4096 NN 1.78x against
     * its 1.28x, 7 x 4096 x 4096 TN 1.01x against mma:64x64's 1.76x; bench/NOTES-gemm.md) */
    const int skinny_keeps = small <= (p->in_type == CM__GEMM_BF16 ? CM__GEMM_SKINNY_TC_BF16
                                                                   : CM__GEMM_SKINNY_TC_TF32);
    /* TF32 with a small side of CM__GEMM_SKINNY_TC_TF32_ANY (the 16-vector form's full
     * bucket) and 16-byte rows takes the tiles with an MN-major operand too, which mma.sync
     * reads as it is (H100 against cuBLAS, "NN": 16 x 4096 x 4096 mma:64x64 0.86x against
     * skinny's 0.68x, 16 x 8192 x 8192 0.77x against 0.57x; at 12 x 4096 x 4096 the two tie,
     * 0.85-0.86x). Rows off 16 bytes with both operands K-contiguous keep skinny (16 x 3001 x
     * 2001 "TN": skinny 0.98x, ffma:64x64x16 0.70x). With an MN-major operand, one product
     * over at most CM__GEMM_SKINNY_TF32_16_A1_ROWS_PER_SM rows a multiprocessor takes the
     * tiles with K >= CM__SPLITK_LONG_K (the range measured, 1100-3001), which run their
     * align1 form split along K (H100 against cuBLAS, column-major "NN", skinny -> the tiles:
     * 16 x 3001 x 2001 0.66-0.71x -> 0.94-0.95x, 16 x 3001 x 3001 0.56-0.58x -> 0.88-0.90x, 16
     * x 5000 x 1501 0.65-0.70x -> 1.14x, 16 x 6000 x 2001 0.61-0.64x -> 0.83x; at 7000 rows (53
     * a multiprocessor) they tie or lose, 1.04-1.09x -> 1.03x, and at 8192 lose, 0.90x ->
     * 0.81x; bench/NOTES-gemm.md) */
    const int tf32_full_bucket = precision == CM_GEMM_TF32 &&
                              small >= CM__GEMM_SKINNY_TC_TF32_ANY;
    const int tf32_16_a1 =
        tf32_full_bucket && p->batch <= 1 && p->k >= CM__SPLITK_LONG_K &&
        !(p->a_kmajor && p->b_kmajor) &&
        large <= (int64_t)CM__GEMM_SKINNY_TF32_16_A1_ROWS_PER_SM * sm_count;
    const int skinny_tc_better =
        major >= 8 && tc_family && !skinny_keeps &&
        (cm__gemm_mma_aligned(p) ? (p->a_kmajor && p->b_kmajor) || tf32_full_bucket
                                 : tf32_16_a1);
    /* The Hopper kernel for one bf16 skinny product (a batch keeps skinny: unmeasured), where
     * it is built and the device runs it, by one of two rules:
     * - the long side on A (m > n), A K-contiguous with 16-byte rows (the wgmma kernel reads it
     *   as it is) and B MN-major: that kernel, B (a few columns) staged or read as it is
     *   ("sm90+bt"). H200 against cuBLAS at 7 x 4096 x 4096 column-major NN (A here is the
     *   caller's B): skinny 0.59-0.64x, the wgmma kernel 1.37-1.39x; with A staged too (rows of
     *   3001) it lost (0.46x against skinny's 0.67x), so A must be read as it is. The other
     *   orientation (the long side on B) was not measured and keeps skinny.
     * - a small side of 9 .. 16 (the skinny kernel's 16-vector form, 2 blocks per SM) and a K
     *   of at least CM__GEMM_SKINNY_SM90_BF16_K that the tensor-core rule above leaves to
     *   skinny (an operand not K-contiguous in 16-byte rows): the wgmma kernel after its
     *   pre-pass. H100 against cuBLAS, NN / TN: 16 x 3001 x 2001 sm90 0.81 / 0.83x against
     *   skinny 0.57 / 0.56x, 12 x 3001 x 2001 0.74 / 0.82x against 0.64 / 0.57x, 16 x 4096 x
     *   1001 0.94 / 1.02x against 0.83 / 0.84x; H200: 16 x 10000 x 999 0.78x against 0.50x
     *   (bench/NOTES-gemm.md). */
    const int sm90_bf16_one = arch == CM__GEMM_ARCH_SM90 && have_sm90 &&
                              p->in_type == CM__GEMM_BF16 && precision != CM_GEMM_FP32_3XTF32 &&
                              p->batch <= 1;
    const int sm90_long_a = !skinny_keeps && p->m > p->n && p->k >= CM__GEMM_SM90_LONG_K &&
                            p->a_kmajor && !p->b_kmajor &&
                            cm__operand_aligned16(p, p->a, p->lda, p->stride_a);
    const int sm90_wide = !skinny_tc_better && small >= CM__GEMM_SKINNY_SM90_BF16 &&
                          p->k >= CM__GEMM_SKINNY_SM90_BF16_K;
    const int skinny_sm90_better = sm90_bf16_one && (sm90_long_a || sm90_wide);
    /* one product takes it from the shorter K at a small side up to CM__GEMM_SKINNY_NARROW,
     * and above it over few rows (CM__GEMM_SKINNY_FEW_ROWS_PER_SM) where the tensor-core tiles
     * would not read both operands as they are */
    const int tc_as_is = major >= 8 &&
                         (p->in_type == CM__GEMM_BF16 || precision == CM_GEMM_TF32) &&
                         cm__gemm_mma_aligned(p);
    const int skinny_short_k =
        p->batch <= 1 &&
        (small <= CM__GEMM_SKINNY_NARROW ||
         (large <= (int64_t)CM__GEMM_SKINNY_FEW_ROWS_PER_SM * sm_count && !tc_as_is));
    /* the shapes the skinny kernel is made for; the rules above give some of them others */
    const int skinny_class = skinny_fits && small >= 2 &&
                             skinny_rows >= CM__GEMM_SKINNY_MIN_ROWS && skinny_fills &&
                             along_k &&
                             p->k >= (skinny_short_k ? CM__GEMM_SKINNY_MIN_K_NARROW
                                                     : CM__GEMM_SKINNY_MIN_K);
    const int skinny_shape = CM__GEMM_SKINNY_DISPATCH && skinny_class && !skinny_tc_better &&
                             !skinny_sm90_better;
    /* forced, it takes any shape it can run (a vector side, few rows) */
    if (is_forced ? c.kernel == CM__GEMM_KERNEL_SKINNY && skinny_fits
                  : skinny_shape || vector_short_k)
        return (cm__gemm_choice_t){CM__GEMM_KERNEL_SKINNY, 0};
    if (!is_forced && skinny_class && skinny_sm90_better)
        c = (cm__gemm_choice_t){CM__GEMM_KERNEL_SM90, CM__GEMM_SM90_PACK};
    if (c.kernel == CM__GEMM_KERNEL_GEMV || c.kernel == CM__GEMM_KERNEL_SKINNY)
        c = cm__gemm_table_entry(arch, fam, shape);
    if (!is_forced) {
        const int tiny_sm90 = cm__gemm_sm90_tiny(precision, arch, fam, have_sm90, sm_count, p);
        if (tiny_sm90 >= 0) c = (cm__gemm_choice_t){CM__GEMM_KERNEL_SM90, tiny_sm90};
        else if (cm__gemm_sm90_at_too_narrow(precision, p) && c.kernel == CM__GEMM_KERNEL_SM90)
            c = (cm__gemm_choice_t){CM__GEMM_KERNEL_MMA, CM__MMA_64x64};
    }
    /* FP32 on Hopper (CM_GEMM_FP32_3XTF32 too, whose choice off its Hopper kernel is FP32's,
     * below): the tiny class's 32 x 64 tiles or the small class's 64 x 64 ones give way to
     * the next larger tile where its split fills the GPU (cm__gemm_ffma_64_fills,
     * cm__gemm_ffma_128_fills); the skinny class's 128 x 128 ones over a short K to 64 x 64
     * ones where they would leave a thin last wave (cm__gemm_ffma_128_thin_wave) */
    if (!is_forced && arch == CM__GEMM_ARCH_SM90 &&
        (precision == CM_GEMM_FP32 || precision == CM_GEMM_FP32_3XTF32) &&
        c.kernel == CM__GEMM_KERNEL_FFMA) {
        if (c.config == CM__FFMA_32x64x16 && cm__gemm_ffma_64_fills(p, sm_count))
            c.config = CM__FFMA_64x64x16;
        else if (c.config == CM__FFMA_64x64x16 && shape == CM__GEMM_SHAPE_SMALL &&
                 cm__gemm_ffma_128_fills(p, sm_count))
            c.config = CM__FFMA_128x128x16q3;
        else if (c.config == CM__FFMA_128x128x16q3 && shape == CM__GEMM_SHAPE_SKINNY &&
                 cm__gemm_ffma_128_thin_wave(p, sm_count))
            c.config = CM__FFMA_64x64x16;
        c.config = cm__gemm_ffma_narrow_config(p, c.config);
        /* the 64 x 64 and 32 x 64 tiles where their plan splits a long K
         * (CM__FFMA_Q3_MIN_K): the same tiles with a 3-stage cp.async pipeline. H100 against
         * cuBLAS: 64 x 64 x 4096 1.17x -> 1.29x, 64 x 64 x 8192 0.98x -> 1.20x, 1000 x 127 x
         * 3001 0.95-1.00x -> 1.04-1.05x, 500 x 500 x 3001 0.90x -> 0.98x; K whole ("TN" 1000^3)
         * lost 4 % in an earlier round, so it keeps the plain tiles (bench/NOTES-gemm.md) */
        if ((c.config == CM__FFMA_64x64x16 || c.config == CM__FFMA_32x64x16) &&
            p->k >= CM__FFMA_Q3_MIN_K &&
            cm__gemm_splitk_parts(p, c, CM_GEMM_FP32, sm_count, 0) > 1)
            c.config = c.config == CM__FFMA_64x64x16 ? CM__FFMA_64x64x16q3 : CM__FFMA_32x64x16q3;
    }
    /* demote to what can run; K = 0 (C = beta C, no products) always takes the FFMA kernel */
    if (p->k == 0 && c.kernel != CM__GEMM_KERNEL_FFMA)
        c = (cm__gemm_choice_t){CM__GEMM_KERNEL_FFMA, CM__FFMA_64x64x16};
    if (precision == CM_GEMM_FP32_3XTF32) {
        /* FP32 accuracy: the split-TF32 Hopper path where it fills the GPU and K is long enough
         * (or is forced), else the FP32 kernels (the same accuracy); never a TF32-only
         * tensor-core kernel */
        const int64_t tiles = cm__gemm_sm90_wide_tiles(p, CM__GEMM_SM90_3XTF32) *
                              (p->batch > 1 ? p->batch : 1);
        const int fills = (shape == CM__GEMM_SHAPE_LARGE ||
                           (shape == CM__GEMM_SHAPE_SKINNY && tiles >= sm_count)) &&
                          cm__gemm_c_short(p) > CM__GEMM_3X_NARROW_SIDE;
        const int want = is_forced ? c.kernel == CM__GEMM_KERNEL_SM90
                                   : fills && p->k >= CM__GEMM_3X_MIN_K;
        if (want && p->k > 0 && arch == CM__GEMM_ARCH_SM90 && have_sm90)
            return (cm__gemm_choice_t){CM__GEMM_KERNEL_SM90, CM__GEMM_SM90_3XTF32};
        /* else FP32's own choice, tuned for that work (the FP32 kernels do not see the
         * precision; cm__gemm_run_precision: its split of K too): everything above is FP32's
         * selection, which keeps an FFMA tile as it is from here on; a forced tensor-core name
         * leaves the choice to FP32's rules */
        return c.kernel == CM__GEMM_KERNEL_FFMA
                   ? c
                   : cm__gemm_select(CM_GEMM_FP32, major, minor, sm_count, p, have_sm90, NULL);
    }
    /* "sm90+3xtf32" forced on another precision: the Hopper kernel as "sm90" forced */
    if (c.kernel == CM__GEMM_KERNEL_SM90 && c.config == CM__GEMM_SM90_3XTF32)
        c.config = CM__GEMM_SM90_PACK;
    if (c.kernel == CM__GEMM_KERNEL_SM90) {
        if (!(arch == CM__GEMM_ARCH_SM90 && have_sm90 && fam != CM__GEMM_FAM_FP32))
            c = (cm__gemm_choice_t){CM__GEMM_KERNEL_MMA, CM__MMA_128x128};
        else if (p->a_kmajor && p->b_kmajor && cm__aligned16(p) &&
                 !cm__gemm_stage32(p, p->lda) && !cm__gemm_stage32(p, p->ldb))
            c.config = 0;
        else if (c.config == CM__GEMM_SM90_PACK || c.config == CM__GEMM_SM90_BT ||
                 c.config == CM__GEMM_SM90_AT || c.config == CM__GEMM_SM90_PACK_ALL ||
                 shape == CM__GEMM_SHAPE_LARGE ||
                 p->k >= CM__GEMM_PACK_MIN_K) {
            /* transposing pre-pass: O((m + n) k) bytes against O(m n k) flops pays off on the
             * large class, and on the small and skinny ones from K = CM__GEMM_PACK_MIN_K
             * (measured: bench/NOTES-gemm.md); a forced "sm90" packs anywhere.
             * A bf16 B that is MN-major with 16-byte rows needs none with the transposed-B
             * kernel: forced "sm90+bt", or by default with CM__GEMM_SM90_BT_DISPATCH where its
             * rows are not an odd number of 16 bytes (cm__gemm_stage32: packed); a TF32
             * operand that is MN-major with 16-byte rows none with the register-A kernel:
             * forced "sm90+at", or by default with CM__GEMM_SM90_AT_DISPATCH */
            const int b_as_is = fam == CM__GEMM_FAM_BF16 &&
                                cm__gemm_sm90_operands(p, CM__GEMM_SM90_BT, NULL, NULL) ==
                                    CM__SM90_FORM_BT;
            const int mn_as_is = fam == CM__GEMM_FAM_TF32 &&
                                 cm__gemm_sm90_operands(p, CM__GEMM_SM90_AT, NULL, NULL) !=
                                     CM__SM90_FORM_PACK;
            /* by default from K = CM__GEMM_SM90_AT_MIN_K */
            const int at_default = CM__GEMM_SM90_AT_DISPATCH && p->k >= CM__GEMM_SM90_AT_MIN_K;
            c.config = c.config == CM__GEMM_SM90_PACK_ALL ? CM__GEMM_SM90_PACK
                       : b_as_is && (c.config == CM__GEMM_SM90_BT ||
                                     (CM__GEMM_SM90_BT_DISPATCH && !cm__gemm_stage32(p, p->ldb)))
                           ? CM__GEMM_SM90_BT
                       : mn_as_is && (c.config == CM__GEMM_SM90_AT || at_default)
                           ? CM__GEMM_SM90_AT
                           : CM__GEMM_SM90_PACK;
        } else {
            c = (cm__gemm_choice_t){CM__GEMM_KERNEL_MMA, CM__MMA_128x128};
        }
    }
    /* TF32 on the Hopper kernel's register-A form over a C one 64 x 64 tile deep whose
     * mma:64x64 tiles fill more than half and at most two thirds of that tile's resident slots
     * (cm__gemm_splitk_tf32_row): mma:64x64 with K split in CM__SPLITK_TF32_ROW_PARTS parts,
     * where K allows the split. The Hopper kernel's 256 x 128 tiles leave most multiprocessors
     * idle there (69-80 tiles on 132). H100 against cuBLAS, column-major "NN" (the register-A
     * form on C^T), two rounds each in two experiments, sm90+at -> mma:64x64 in 3 parts: 9000
     * x 40 x 2048 0.59-0.68x -> 0.98-1.00x, 8800 x 64 x 900 0.71-0.75x -> 0.86-0.88x, 10200 x
     * 40 x 1500 0.65-0.66x -> 0.97x, 9500 x 56 x 1200 0.83-0.86x -> 0.98x; below the band, 7000
     * x 62 x 800 (110 tiles; mma:64x64 keeps K whole) sm90+at 0.84x against 0.70x
     * (bench/NOTES-gemm.md) */
    if (!is_forced && precision == CM_GEMM_TF32 && p->batch <= 1 &&
        c.kernel == CM__GEMM_KERNEL_SM90 && c.config == CM__GEMM_SM90_AT) {
        const cm__gemm_choice_t m64 = {CM__GEMM_KERNEL_MMA, CM__MMA_64x64};
        if (cm__gemm_splitk_tf32_row(p, m64, sm_count) > 0 &&
            cm__gemm_splitk_parts(p, m64, precision, sm_count, 0) > 1)
            c = m64;
    }
    /* mma.sync tiles need 16-byte rows; forced, a TF32 product without them runs the tiles'
     * align1 form where it takes them (by default cm__gemm_realign_mode chooses it) */
    const int forced_align1 = is_forced && cm__gemm_align1_takes(precision, major, p, c.config);
    if (c.kernel == CM__GEMM_KERNEL_MMA &&
        !(arch != CM__GEMM_ARCH_SM75 && fam != CM__GEMM_FAM_FP32 &&
          (cm__gemm_mma_aligned(p) || forced_align1))) {
        int bm = 0;
        cm__gemm_mma_tile(c.config, &bm, NULL);
        c = (cm__gemm_choice_t){CM__GEMM_KERNEL_FFMA,
                                bm >= 128 ? CM__FFMA_128x128x8 : CM__FFMA_64x64x16};
    }
    if (c.kernel == CM__GEMM_KERNEL_FFMA && fam == CM__GEMM_FAM_BF16 &&
        c.config != CM__FFMA_128x128x8 && c.config != CM__FFMA_64x64x16) {
        int bm = 0;
        cm__gemm_ffma_tile(c.config, &bm, NULL);
        c.config = bm >= 128 ? CM__FFMA_128x128x8 : CM__FFMA_64x64x16;
    }
    /* TF32 on the FFMA tiles is FP32's work exactly (float inputs, FP32 FMAs: the kernel does
     * not see the precision), so it runs FP32's choice of them, tuned for that work, where FP32
     * takes the tiles. H100 against cuBLAS TF32, the 64 x 64 / 128 x 128 fallback -> FP32's
     * choice: 3001 x 64 x 500 NN (operands off 16 bytes) 0.57x -> 0.95x (32 x 64 tiles in 4
     * parts), 3001 x 64 x 127 NN / TN 0.98 / 0.81x -> 1.08 / 0.88x, 127^3 0.87x -> 1.04x;
     * 4096 x 127 x 127 and 512 x 512 x 7 alike (bench/NOTES-gemm.md) */
    if (!is_forced && precision == CM_GEMM_TF32 && c.kernel == CM__GEMM_KERNEL_FFMA) {
        const cm__gemm_choice_t f =
            cm__gemm_select(CM_GEMM_FP32, major, minor, sm_count, p, have_sm90, NULL);
        if (f.kernel == CM__GEMM_KERNEL_FFMA) c = f;
    }
    return c;
}

/* ====================================================================== the override */

/* the tests' overrides (cm__gemm_config_override_set_for_tests: NULL when none;
 * cm__gemm_splitk_override_set_for_tests: -1 when none) */
static const char *_Atomic cm__gemm_test_config = NULL;
static _Atomic int cm__gemm_splitk_test = -1;

void cm__gemm_config_override_set_for_tests(const char *name) {
    atomic_store(&cm__gemm_test_config, name);
}

void cm__gemm_splitk_override_set_for_tests(int parts) {
    atomic_store(&cm__gemm_splitk_test, parts < 0 ? -1 : parts);
}

/* CUDAMODEL_GEMM_SPLITK's value: a decimal 1 .. CM__SPLITK_MAX, else 0 (unset or invalid) */
static int cm__gemm_splitk_parse(const char *v) {
    if (v == NULL || v[0] < '0' || v[0] > '9') return 0;
    char *end = NULL;
    const long n = strtol(v, &end, 10);
    return *end == '\0' && n >= 1 && n <= CM__SPLITK_MAX ? (int)n : 0;
}

/* The environment's overrides. The tuning build reads them at every call, so that bench_gemm
 * --tune / --ops (which reach the library through its public API only) switch them with
 * setenv(); every other build once per process (CUDAMODEL_GEMM_CONFIG: "" when unset, or
 * longer than any name: a value cut to fit could become another, valid name). */
#if !CM_GEMM_TUNING
static char cm__gemm_env_config[64];
static int cm__gemm_env_splitk;
static pthread_once_t cm__gemm_env_once = PTHREAD_ONCE_INIT;

static void cm__gemm_env_read(void) {
    const char *v = getenv("CUDAMODEL_GEMM_CONFIG");
    const size_t len = v != NULL ? strlen(v) : 0;
    if (len > 0 && len < sizeof cm__gemm_env_config) memcpy(cm__gemm_env_config, v, len + 1);
    cm__gemm_env_splitk = cm__gemm_splitk_parse(getenv("CUDAMODEL_GEMM_SPLITK"));
}
#endif

const char *cm__gemm_config_override(void) {
    const char *t = atomic_load(&cm__gemm_test_config);
    if (t != NULL) return t;
#if CM_GEMM_TUNING
    return getenv("CUDAMODEL_GEMM_CONFIG");
#else
    (void)pthread_once(&cm__gemm_env_once, cm__gemm_env_read);
    return cm__gemm_env_config[0] != '\0' ? cm__gemm_env_config : NULL;
#endif
}

int cm__gemm_splitk_override(void) {
    const int t = atomic_load(&cm__gemm_splitk_test);
    if (t >= 0) return t;
#if CM_GEMM_TUNING
    return cm__gemm_splitk_parse(getenv("CUDAMODEL_GEMM_SPLITK"));
#else
    (void)pthread_once(&cm__gemm_env_once, cm__gemm_env_read);
    return cm__gemm_env_splitk;
#endif
}

/* ====================================================================== device facts */

typedef struct cm__gemm_dev {
    _Atomic int known; /* 0 unknown, 1 known */
    _Atomic int major, minor, sms;
} cm__gemm_dev_t;

static cm__gemm_dev_t cm__gemm_devs[CM__MAX_DEVICES];

void cm__gemm_device_facts_forget_for_tests(void) {
    for (int i = 0; i < CM__MAX_DEVICES; ++i)
        atomic_store_explicit(&cm__gemm_devs[i].known, 0, memory_order_release);
}

static cm_status_t cm__gemm_device_facts(int ordinal, int *major, int *minor, int *sms,
                                         const char *func) {
    if (ordinal >= 0 && ordinal < CM__MAX_DEVICES &&
        atomic_load_explicit(&cm__gemm_devs[ordinal].known, memory_order_acquire)) {
        *major = atomic_load_explicit(&cm__gemm_devs[ordinal].major, memory_order_relaxed);
        *minor = atomic_load_explicit(&cm__gemm_devs[ordinal].minor, memory_order_relaxed);
        *sms = atomic_load_explicit(&cm__gemm_devs[ordinal].sms, memory_order_relaxed);
        return CM_OK;
    }
    int v[3] = {0, 0, 0};
    const enum cudaDeviceAttr attrs[3] = {cudaDevAttrComputeCapabilityMajor,
                                          cudaDevAttrComputeCapabilityMinor,
                                          cudaDevAttrMultiProcessorCount};
    for (int i = 0; i < 3; ++i) {
        cudaError_t err = cm__cuda.device_get_attribute(&v[i], attrs[i], ordinal);
        if (err != cudaSuccess)
            return cm__cuda_fail(err, __FILE__, __LINE__,
                                 "cudaDeviceGetAttribute(%d, device %d) in %s", (int)attrs[i],
                                 ordinal, func);
    }
    *major = v[0];
    *minor = v[1];
    *sms = v[2] > 0 ? v[2] : 1;
    if (ordinal >= 0 && ordinal < CM__MAX_DEVICES) {
        atomic_store_explicit(&cm__gemm_devs[ordinal].major, v[0], memory_order_relaxed);
        atomic_store_explicit(&cm__gemm_devs[ordinal].minor, v[1], memory_order_relaxed);
        atomic_store_explicit(&cm__gemm_devs[ordinal].sms, *sms, memory_order_relaxed);
        atomic_store_explicit(&cm__gemm_devs[ordinal].known, 1, memory_order_release);
    }
    return CM_OK;
}

/* ====================================================================== checks */

static const char *cm__gemm_prec_name(int p) {
    switch (p) {
    case CM_GEMM_FP32: return "CM_GEMM_FP32";
    case CM_GEMM_TF32: return "CM_GEMM_TF32";
    case CM_GEMM_BF16: return "CM_GEMM_BF16";
    case CM_GEMM_BF16_OUT_BF16: return "CM_GEMM_BF16_OUT_BF16";
    case CM_GEMM_FP32_3XTF32: return "CM_GEMM_FP32_3XTF32";
    default: return "?";
    }
}

typedef struct cm__gemm_mat {
    const char *name;  /* "A", "B", "C" */
    const char *ldname; /* "lda" ... */
    const cm_buffer_t *buf;  /* the handle value */
    struct cm__buffer *obj;  /* its object (after the checks) */
    size_t offset, ld;
    size_t rows, cols; /* of the stored matrix */
    size_t elem;       /* bytes */
    size_t extent;     /* elements spanned from offset by the whole batch (0: empty) */
    unsigned char *ptr;
    int ordinal;
    size_t stride;     /* elements between the batch's matrices (cm_gemm_strided_batched) */
    size_t batch;      /* matrices (1 for cm_gemm) */
    size_t one;        /* elements one matrix spans */
} cm__gemm_mat_t;

static cm_status_t cm__gemm_mat_check(cm__gemm_mat_t *x, int row_major, const char *op_text,
                                      const char *func) {
    const size_t outer = row_major ? x->rows : x->cols;
    const size_t inner = row_major ? x->cols : x->rows;
    const size_t need = inner > 0 ? inner : 1;
    if (x->ld < need) {
        char hint[CM_ERROR_HINT_MAX];
        snprintf(hint, sizeof hint, "%s is the distance between consecutive %s of the stored %s: "
                 "pass at least %zu (%zu when the %s are packed)", x->ldname,
                 row_major ? "rows" : "columns", x->name, need, need,
                 row_major ? "rows" : "columns");
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint,
                        "%s = %zu is less than %zu, the number of %s of the stored %s (%s, %s: "
                        "%zu x %zu); nothing was queued",
                        x->ldname, x->ld, need, row_major ? "columns" : "rows", x->name,
                        row_major ? "row-major" : "column-major", op_text, x->rows, x->cols);
    }
    CM_TRY(cm__buffer_get(x->buf, x->name, func, &x->obj));
    x->ordinal = x->obj->a.dev->ordinal;
    const size_t bytes = x->obj->a.bytes;
    const size_t cap = bytes / x->elem;
    bool overflow = false;
    x->extent = 0;
    if (outer > 0 && inner > 0) {
        if (outer - 1 > (SIZE_MAX - inner) / x->ld)
            overflow = true;
        else
            x->extent = (outer - 1) * x->ld + inner;
    }
    x->one = x->extent;
    size_t last = 0; /* first element of the batch's last matrix, from offset */
    if (!overflow && x->batch > 1 && x->extent > 0) {
        if (x->stride != 0 && x->batch - 1 > (SIZE_MAX - x->extent) / x->stride)
            overflow = true;
        else {
            last = (x->batch - 1) * x->stride;
            x->extent = last + x->one;
        }
    }
    const char *tn = x->elem == 2 ? "cm_bf16_t" : "float";
    if (!overflow && x->offset <= cap && x->extent <= cap - x->offset) {
        /* an empty buffer has no address: NULL + 0 would be undefined behaviour */
        x->ptr = x->obj->ptr == NULL ? NULL
                                     : (unsigned char *)x->obj->ptr + x->offset * x->elem;
        return CM_OK;
    }
    char hint[CM_ERROR_HINT_MAX];
    snprintf(hint, sizeof hint, "a %zu x %zu %s matrix with %s = %zu spans (%zu - 1) x %zu + %zu "
             "elements from its offset; pass a larger buffer, a smaller offset or check the sizes",
             x->rows, x->cols, row_major ? "row-major" : "column-major", x->ldname, x->ld, outer,
             x->ld, inner);
    if (overflow)
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, x->ordinal, __FILE__, __LINE__, func, hint,
                        "%s out of bounds: (%zu - 1) x %s %zu + %zu elements (times a batch of "
                        "%zu at a stride of %zu) overflows size_t; nothing was queued", x->name,
                        outer, x->ldname, x->ld, inner, x->batch, x->stride);
    if (x->batch > 1)
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, x->ordinal, __FILE__, __LINE__, func, hint,
                        "%s out of bounds: the batch's last %s (matrix %zu, element offset %zu + "
                        "%zu x stride %zu) ends at element %zu, past the end of its buffer (%zu "
                        "bytes: %zu %s elements); nothing was queued",
                        x->name, x->name, x->batch - 1, x->offset, x->batch - 1, x->stride,
                        x->offset > SIZE_MAX - x->extent ? SIZE_MAX : x->offset + x->extent,
                        bytes, cap, tn);
    return cm__fail(CM_ERROR_INVALID_ARGUMENT, x->ordinal, __FILE__, __LINE__, func, hint,
                    "%s out of bounds: element offset %zu + %zu elements spanned = %zu is past "
                    "the end of its buffer (%zu bytes: %zu %s elements); nothing was queued",
                    x->name, x->offset, x->extent,
                    x->offset > SIZE_MAX - x->extent ? SIZE_MAX : x->offset + x->extent, bytes,
                    cap, tn);
}

static bool cm__gemm_overlap(const cm__gemm_mat_t *x, const cm__gemm_mat_t *y) {
    if (x->obj != y->obj || x->extent == 0 || y->extent == 0) return false;
    const size_t x0 = x->offset * x->elem, x1 = x0 + x->extent * x->elem;
    const size_t y0 = y->offset * y->elem, y1 = y0 + y->extent * y->elem;
    return x0 < y1 && y0 < x1;
}

static cm_status_t cm__gemm_enums(int precision, int layout, int op_a, int op_b,
                                  const char *func) {
    if (precision < CM_GEMM_FP32 || precision > CM_GEMM_FP32_3XTF32)
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        "pass CM_GEMM_FP32, CM_GEMM_TF32, CM_GEMM_BF16, CM_GEMM_BF16_OUT_BF16 or "
                        "CM_GEMM_FP32_3XTF32",
                        "unknown precision %d", precision);
    if (layout != CM_GEMM_ROW_MAJOR && layout != CM_GEMM_COL_MAJOR)
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        "pass CM_GEMM_ROW_MAJOR or CM_GEMM_COL_MAJOR", "unknown layout %d",
                        layout);
    if (op_a != CM_GEMM_OP_N && op_a != CM_GEMM_OP_T)
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        "pass CM_GEMM_OP_N or CM_GEMM_OP_T", "unknown op_a %d", op_a);
    if (op_b != CM_GEMM_OP_N && op_b != CM_GEMM_OP_T)
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        "pass CM_GEMM_OP_N or CM_GEMM_OP_T", "unknown op_b %d", op_b);
    return CM_OK;
}

static cm_status_t cm__gemm_dims(size_t m, size_t n, size_t k, const char *func) {
    const size_t lim = (size_t)INT32_MAX;
    if (m > lim || n > lim || k > lim)
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        "split the product into blocks of fewer than 2^31 rows / columns",
                        "M = %zu, N = %zu, K = %zu: each must be at most 2^31 - 1 = %zu", m, n, k,
                        lim);
    return CM_OK;
}

/* ====================================================================== cm_gemm */

/* ---------------------------------------------------------------------- realignment
 * TF32 and BF16 run on tensor cores only from operands with 16-byte rows (mma.sync's 16-byte
 * cp.async chunks, the Hopper kernel's tensor copies): the selection sends a problem whose A or
 * B has an odd leading dimension (K = 3001, 127...) to the FFMA kernel, at FP32 speed (bf16
 * 127 x 1000 x 3001 ran 0.09x cuBLAS on the H200, TF32 0.31x). When the same product with
 * aligned operands would run on tensor cores and is large enough for a copy to pay, the
 * misaligned operands are first staged into K-contiguous scratch with 16-byte rows (the
 * staging below, which the Hopper pack uses too; rows of whole 128-byte lines from K of 128
 * bytes, cm__gemm_ldk) and the product is selected and run on that. */
/* the floors in flops: CM__GEMM_REALIGN_MIN_FLOPS(_BF16), gemm_internal.h */
#define CM__GEMM_REALIGN_MAX_BYTES ((size_t)1 << 30)

/* The row length of a staged operand: K rounded up to whole 128 bytes of elements of p, or
 * to 16 bytes where K is under 128 bytes. The Hopper kernel's 128-byte boxes then start on
 * whole lines (and sectors) of every row: TF32 4096 x 4096 x 3001 runs 2.3-2.4x cuBLAS with
 * such rows, 1.4-1.75x with rows of 16 bytes (H100; bench/NOTES-gemm.md) */
static int64_t cm__gemm_ldk(const cm__gemm_args_t *p) {
    const int64_t e = cm__gemm_elem_bytes(p);
    const int64_t unit = (int64_t)p->k * e >= 128 ? 128 / e : 16 / e;
    return ((int64_t)p->k + unit - 1) / unit * unit;
}

/* the staged rows of p as cm_gemm_explain names them */
static const char *cm__gemm_ldk_text(const cm__gemm_args_t *p) {
    const int64_t e = cm__gemm_elem_bytes(p);
    return cm__gemm_ldk(p) * e % 128 == 0 ? "whole 128-byte lines" : "whole 16 bytes";
}

/* The matrices the staging copies of an operand with batch stride `stride`: one per matrix of
 * the batch, or one when the batch shares it (stride 0) */
static int cm__gemm_stage_count(const cm__gemm_args_t *p, int64_t stride) {
    return p->batch > 1 && stride != 0 ? p->batch : 1;
}

/* Staging, shared by the Hopper pack ("sm90+pack") and the realignment: operand A (stage_a)
 * and / or B (stage_b) copied K-contiguous into rows of cm__gemm_ldk(p) elements, one matrix
 * per matrix of the batch (one when the batch shares it: stride 0). This is p as the kernels
 * then see it, with the staged operands at a_at / b_at. */
static cm__gemm_args_t cm__gemm_staged_form(const cm__gemm_args_t *p, int stage_a, int stage_b,
                                            const void *a_at, const void *b_at) {
    const int64_t ldk = cm__gemm_ldk(p);
    cm__gemm_args_t q = *p;
    if (stage_a) {
        q.a = a_at;
        q.lda = ldk;
        q.a_kmajor = 1;
        q.stride_a = cm__gemm_stage_count(p, p->stride_a) > 1 ? (int64_t)p->m * ldk : 0;
    }
    if (stage_b) {
        q.b = b_at;
        q.ldb = ldk;
        q.b_kmajor = 1;
        q.stride_b = cm__gemm_stage_count(p, p->stride_b) > 1 ? (int64_t)p->n * ldk : 0;
    }
    return q;
}

/* The scratch of the staging: A's part (rounded up to 256 bytes, so that B's starts aligned)
 * and B's */
static void cm__gemm_stage_bytes(const cm__gemm_args_t *p, int stage_a, int stage_b,
                                 size_t *bytes_a, size_t *bytes_b) {
    const int64_t e = cm__gemm_elem_bytes(p), ldk = cm__gemm_ldk(p);
    const int na = cm__gemm_stage_count(p, p->stride_a), nb = cm__gemm_stage_count(p, p->stride_b);
    *bytes_a =
        stage_a ? ((size_t)na * (size_t)p->m * (size_t)ldk * (size_t)e + 255u) / 256u * 256u : 0;
    *bytes_b = stage_b ? (size_t)nb * (size_t)p->n * (size_t)ldk * (size_t)e : 0;
}

/* The staging into scratch from the pool on cs (cm__gemm_pack_pair, or cm__gemm_pack_batched
 * for one rows-contiguous operand alone): *q is p on it, *scratch the allocation (the caller
 * frees it on cs after the product, whatever this returned). dependent (an sm_90+ device):
 * q->pdl is set, the product to be queued right after the staging's kernel launching as its
 * programmatic dependent, except where p is split-K's parts (cm__gemm_args_t::split_part).
 * cudaErrorNotSupported with nothing queued and *scratch NULL when there is no pool, nothing
 * to stage, the scratch would pass max_bytes or cannot be had; else the first failing
 * launch's status. */
static cudaError_t cm__gemm_stage(const cm__gemm_args_t *p, int stage_a, int stage_b,
                                  size_t max_bytes, int dependent, cudaMemPool_t pool,
                                  cudaStream_t cs, cm__gemm_args_t *q, void **scratch) {
    *scratch = NULL;
    *q = *p;
    if (pool == NULL || (!stage_a && !stage_b)) return cudaErrorNotSupported;
    const int64_t e = cm__gemm_elem_bytes(p), ldk = cm__gemm_ldk(p);
    const int na = cm__gemm_stage_count(p, p->stride_a), nb = cm__gemm_stage_count(p, p->stride_b);
    size_t bytes_a = 0, bytes_b = 0;
    cm__gemm_stage_bytes(p, stage_a, stage_b, &bytes_a, &bytes_b);
    if (bytes_a + bytes_b > max_bytes ||
        cm__cuda.malloc_from_pool_async(scratch, bytes_a + bytes_b, pool, cs) != cudaSuccess) {
        (void)cm__cuda.get_last_error();
        *scratch = NULL;
        return cudaErrorNotSupported;
    }
    unsigned char *const base = *scratch;
    *q = cm__gemm_staged_form(p, stage_a, stage_b, base, base + bytes_a);
    q->pdl = dependent && !p->split_part;
    const cm__gemm_pack_side_t sa = {p->a, p->lda, p->a_kmajor, p->m, na, p->stride_a,
                                     base, ldk, q->stride_a};
    const cm__gemm_pack_side_t sb = {p->b, p->ldb, p->b_kmajor, p->n, nb, p->stride_b,
                                     base + bytes_a, ldk, q->stride_b};
    /* one rows-contiguous operand alone: its own transpose kernel; else the pair call (a
     * K-contiguous operand goes to the 16-byte row copy, where a pitched cudaMemcpy2DAsync
     * cost about three times its bytes' time on the H200; both operands in one launch of
     * each kernel they need). The columns K .. ldk of the scratch are left as they are:
     * every kernel reads K elements of a row. */
    const cm__gemm_pack_side_t *one = stage_a && stage_b ? NULL : stage_a ? &sa : &sb;
    if (one != NULL && !one->kmajor)
        return cm__gemm_pack_batched((int)e, one->src, one->ld, p->k, one->rows, one->dst,
                                     one->ldd, one->count, one->src_stride, one->dst_stride, cs);
    return cm__gemm_pack_pair((int)e, p->k, stage_a ? &sa : NULL, stage_b ? &sb : NULL, cs);
}

/* the realignment stages the operands without 16-byte rows */
static int cm__gemm_misaligned_a(const cm__gemm_args_t *p) {
    return !cm__operand_aligned16(p, p->a, p->lda, p->stride_a);
}
static int cm__gemm_misaligned_b(const cm__gemm_args_t *p) {
    return !cm__operand_aligned16(p, p->b, p->ldb, p->stride_b);
}

/* The align1 form of mma.sync tile `config` on p where that tile is built and the form takes
 * p (*tiles: those tiles), else nothing */
static int cm__gemm_align1_on(int precision, int major, const cm__gemm_args_t *p, int config,
                              cm__gemm_choice_t *tiles) {
    if (!cm__gemm_mma_built(config) || !cm__gemm_align1_takes(precision, major, p, config))
        return CM__REALIGN_NONE;
    *tiles = (cm__gemm_choice_t){CM__GEMM_KERNEL_MMA, config};
    return CM__REALIGN_ALIGN1;
}

/* Whether the copied form q of p, on the Hopper kernel's choice c, is split over K (C too
 * small for the GPU) and the 128 x 128 tiles' align1 form takes p instead (*tiles: those) */
static int cm__gemm_split_a1(int precision, int major, int sm_count, const cm__gemm_args_t *p,
                             const cm__gemm_args_t *q, cm__gemm_choice_t c,
                             cm__gemm_choice_t *tiles) {
    return cm__gemm_splitk_parts_of(q, c, precision, sm_count, 0, 0) > 1 &&
           cm__gemm_align1_on(precision, major, p, CM__MMA_128x128, tiles) == CM__REALIGN_ALIGN1;
}

int cm__gemm_realign_mode(int precision, int major, int minor, int sm_count,
                          const cm__gemm_args_t *p, cm__gemm_choice_t chosen, int have_sm90,
                          const char *override, cm__gemm_choice_t *tiles) {
    if (precision != CM_GEMM_TF32 && precision != CM_GEMM_BF16 &&
        precision != CM_GEMM_BF16_OUT_BF16)
        return CM__REALIGN_NONE;
    if (override != NULL && override[0] != '\0')
        return CM__REALIGN_NONE; /* a forced kernel stays forced */
    if (major < 8 || chosen.kernel != CM__GEMM_KERNEL_FFMA || p->k < CM__GEMM_REALIGN_MIN_K)
        return CM__REALIGN_NONE; /* small K: bound by writing C, which FFMA does best */
    const double batch = p->batch > 1 ? (double)p->batch : 1.0;
    const double floor = p->in_type == CM__GEMM_BF16 ? CM__GEMM_REALIGN_MIN_FLOPS_BF16
                                                     : CM__GEMM_REALIGN_MIN_FLOPS;
    /* below the floor only the align1 form, and only for a long TF32 K, or a shorter one of a
     * thin product (CM__GEMM_REALIGN_A1_THIN_MIN_K: the 64 x 64 tiles) */
    const int below = 2.0 * p->m * (double)p->n * (double)p->k * batch < floor;
    const int small = cm__gemm_c_short(p);
    const int thin_short = below && precision == CM_GEMM_TF32 && p->batch <= 1 &&
                           small >= CM__GEMM_SKINNY_TC_TF32 && small <= CM__GEMM_SKINNY_MAX &&
                           p->k >= CM__GEMM_REALIGN_A1_THIN_MIN_K &&
                           p->k < CM__GEMM_REALIGN_A1_MIN_K;
    if (below && !(precision == CM_GEMM_TF32 && p->k >= CM__GEMM_REALIGN_A1_MIN_K) && !thin_short)
        return CM__REALIGN_NONE;
    const int pa = cm__gemm_misaligned_a(p), pb = cm__gemm_misaligned_b(p);
    if (!pa && !pb) return CM__REALIGN_NONE; /* aligned already: FFMA is the table's choice */
    /* a thin C over a short K: the 64 x 64 tiles, whatever the copied form would run (the
     * skinny kernel too, where the copy makes the long side K-contiguous; the 128 x 128 tiles
     * leave most of their tile empty: unsplit 0.48-1.03x cuBLAS over the thin shapes measured,
     * 64 x 64 0.80-1.46x; bench/NOTES-gemm.md) */
    if (thin_short) return cm__gemm_align1_on(precision, major, p, CM__MMA_64x64, tiles);
    const void *aligned_at = (const void *)(uintptr_t)256; /* where the scratch would be */
    const cm__gemm_args_t q = cm__gemm_staged_form(p, pa, pb, aligned_at, aligned_at);
    const cm__gemm_choice_t c = cm__gemm_select(precision, major, minor, sm_count, &q, have_sm90,
                                                NULL);
    if (c.kernel != CM__GEMM_KERNEL_MMA && c.kernel != CM__GEMM_KERNEL_SM90)
        return CM__REALIGN_NONE;
    /* above the flop floor, a copied form on mma:64x64 that rule 1 at any C
     * (cm__gemm_sm90_tiny_of) would give the Hopper kernel split over K: the 128 x 128 tiles'
     * align1 form in their own split, as for a copied form on that split further down. H200,
     * TF32 127 x 1000 x 3001 NN / TN: 0.90 / 0.91x cuBLAS in 16 parts, the 64 x 64 tiles'
     * align1 form 0.78 / 0.71x in 8 (bench/NOTES-gemm.md). Under the floor: the 64 x 64 tiles,
     * as there. */
    if (!below && c.kernel == CM__GEMM_KERNEL_MMA && c.config == CM__MMA_64x64 &&
        cm__gemm_sm90_tiny_of(precision, cm__gemm_arch_class(major, minor),
                              cm__gemm_family(precision), have_sm90, sm_count, &q, 1) == 0 &&
        cm__gemm_split_a1(precision, major, sm_count, p, &q,
                          (cm__gemm_choice_t){CM__GEMM_KERNEL_SM90, 0}, tiles))
        return CM__REALIGN_ALIGN1;
    if (c.kernel == CM__GEMM_KERNEL_MMA && cm__gemm_align1_takes(precision, major, p, c.config)) {
        *tiles = c; /* the copied form's tiles, on the operands as they are */
        return CM__REALIGN_ALIGN1;
    }
    /* below the floor where the copied form would take the Hopper kernel: the 64 x 64 tiles'
     * align1 form, split by its own rule (H100 against cuBLAS, TF32: 3001 x 12 x 2001 "NN"
     * 1.08x against the FFMA tiles' 0.69x, 3001 x 16 x 2001 1.06-1.08x against 0.70x; the
     * 128 x 128 ones 0.90-0.95x; bench/NOTES-gemm.md) */
    if (below)
        return c.kernel == CM__GEMM_KERNEL_SM90
                   ? cm__gemm_align1_on(precision, major, p, CM__MMA_64x64, tiles)
                   : CM__REALIGN_NONE;
    /* the copied form on the Hopper kernel split over K (C too small for the GPU): the 128 x
     * 128 tiles' align1 form instead, split by its own rule; the copy costs as much as the
     * product there (H200: TF32 127 x 1000 x 3001 0.60x cuBLAS copied, 0.90x align1 in 16
     * parts; 1000 x 127 x 3001 TN 0.71x -> 1.17x; 2047 x 129 x 2047 0.66-0.68x -> 0.75-0.81x;
     * bench/NOTES-gemm.md) */
    if (c.kernel == CM__GEMM_KERNEL_SM90 &&
        cm__gemm_split_a1(precision, major, sm_count, p, &q, c, tiles))
        return CM__REALIGN_ALIGN1;
    /* the same where the copied form's 128 x 256 tiles fill at most a quarter of the
     * multiprocessors from K = CM__GEMM_SM90_LONG_K, but its split's parts of that K leave K
     * whole: the copy and one wave of a few blocks over all of K. H100 against cuBLAS, two
     * rounds, TF32 column-major "TN" (24 tiles, K whole), copied -> the 128 x 128 tiles' align1
     * form in 5 parts: 64 x 3001 x 2001 0.63-0.65x -> 0.99x, 128 x 3001 x 2001 0.73-0.74x ->
     * 1.08-1.32x (the 64 x 64 tiles' 0.82-0.85x / 0.56x; bench/NOTES-gemm.md) */
    if (c.kernel == CM__GEMM_KERNEL_SM90 && p->k >= CM__GEMM_SM90_LONG_K &&
        4 * cm__gemm_sm90_wide_tiles(&q, c.config) <= sm_count &&
        cm__gemm_align1_on(precision, major, p, CM__MMA_128x128, tiles) == CM__REALIGN_ALIGN1)
        return CM__REALIGN_ALIGN1;
    return CM__REALIGN_COPY;
}

int cm__gemm_realign_wanted(int precision, int major, int minor, int sm_count,
                            const cm__gemm_args_t *p, cm__gemm_choice_t chosen, int have_sm90,
                            const char *override) {
    cm__gemm_choice_t tiles;
    return cm__gemm_realign_mode(precision, major, minor, sm_count, p, chosen, have_sm90,
                                 override, &tiles) != CM__REALIGN_NONE;
}

/* ---------------------------------------------------------------------- FP32 pitched copy
 * The pipelined FFMA tile copies an operand contiguous along M or N 16 bytes (4 floats) at a
 * time, so it needs that operand's rows on 16 bytes; without them (an odd leading dimension:
 * 3001, 4093, a base one float off) a problem that is not whole tiles runs its edge kernel
 * (every element a 4-byte copy), and one with K below CM__FFMA_EDGE_MIN_K the fallback's
 * general kernel. Where the FFMA tile would run its pipelined kernel (bounded or whole) with
 * such rows, those operands are first copied, in the same orientation, into scratch rows of
 * whole 16 bytes (one cudaMemcpy2DAsync each). The copy reads and writes the operand once, in
 * time against the product's about 2 / (the other side of C) of it, hence the floors. */
/* M or N padded to whole 16 bytes of floats: the row length of a pitched operand */
static int64_t cm__gemm_ld16(int rows) { return ((int64_t)rows + 3) / 4 * 4; }

/* p with the pitched operands at a_at / b_at (stage_a: A, rows of cm__gemm_ld16(m)) */
static cm__gemm_args_t cm__gemm_pitched_form(const cm__gemm_args_t *p, int stage_a,
                                             int stage_b, const void *a_at, const void *b_at) {
    cm__gemm_args_t q = *p;
    /* the scratch holds every row's padding (cm__gemm_pitch_bytes): the pipelined tile may
     * read a row to M (N) rounded up to 4 and so move a last tile back to end there */
    if (stage_a) {
        q.a = a_at;
        q.lda = cm__gemm_ld16(p->m);
        q.stride_a = 0;
        q.a_pad4 = 1;
    }
    if (stage_b) {
        q.b = b_at;
        q.ldb = cm__gemm_ld16(p->n);
        q.stride_b = 0;
        q.b_pad4 = 1;
    }
    return q;
}

/* The scratch of the pitched copy: A's part (rounded up to 256 bytes) and B's */
static void cm__gemm_pitch_bytes(const cm__gemm_args_t *p, int stage_a, int stage_b,
                                 size_t *bytes_a, size_t *bytes_b) {
    *bytes_a = stage_a ? ((size_t)cm__gemm_ld16(p->m) * (size_t)p->k * 4u + 255u) / 256u * 256u
                       : 0;
    *bytes_b = stage_b ? (size_t)cm__gemm_ld16(p->n) * (size_t)p->k * 4u : 0;
}

int cm__gemm_pitch_wanted(int precision, int major, const cm__gemm_args_t *p,
                          cm__gemm_choice_t chosen, const char *override, int *stage_a,
                          int *stage_b) {
    *stage_a = *stage_b = 0;
    if (precision != CM_GEMM_FP32 && precision != CM_GEMM_FP32_3XTF32) return 0;
    if (override != NULL && override[0] != '\0') return 0; /* a forced kernel stays forced */
    if (major < 8 || chosen.kernel != CM__GEMM_KERNEL_FFMA || p->batch > 1 || p->k_last != 0 ||
        p->in_type != CM__GEMM_F32 || p->out_type != CM__GEMM_F32 || p->k <= 0)
        return 0;
    if (2.0 * p->m * (double)p->n * (double)p->k < CM__GEMM_PITCH_MIN_FLOPS) return 0;
    /* the operands along M / N without 16-byte rows, each where the other side of C is long
     * enough for its copy to pay */
    const int pa = !p->a_kmajor && cm__gemm_misaligned_a(p) && p->n >= CM__GEMM_PITCH_MIN_SIDE;
    const int pb = !p->b_kmajor && cm__gemm_misaligned_b(p) && p->m >= CM__GEMM_PITCH_MIN_SIDE;
    if (!pa && !pb) return 0;
    const int before = cm__gemm_ffma_runs(p, chosen.config);
    if (before == CM__FFMA_RUNS_WHOLE || before == CM__FFMA_RUNS_BOUNDED) return 0;
    size_t bytes_a = 0, bytes_b = 0;
    cm__gemm_pitch_bytes(p, pa, pb, &bytes_a, &bytes_b);
    if (bytes_a + bytes_b > CM__GEMM_REALIGN_MAX_BYTES) return 0;
    const void *at = (const void *)(uintptr_t)256; /* where the scratch would be */
    const cm__gemm_args_t q = cm__gemm_pitched_form(p, pa, pb, at, at);
    const int after = cm__gemm_ffma_runs(&q, chosen.config);
    if (after != CM__FFMA_RUNS_WHOLE && after != CM__FFMA_RUNS_BOUNDED) return 0;
    *stage_a = pa;
    *stage_b = pb;
    return 1;
}

/* The pitched copy into scratch from the pool on cs: *q is p on it, *scratch the allocation
 * (the caller frees it on cs after the product, whatever this returned). cudaErrorNotSupported
 * with nothing queued and *scratch NULL when there is no pool or no memory for it. */
static cudaError_t cm__gemm_pitch_stage(const cm__gemm_args_t *p, int stage_a, int stage_b,
                                        cudaMemPool_t pool, cudaStream_t cs, cm__gemm_args_t *q,
                                        void **scratch) {
    *scratch = NULL;
    *q = *p;
    if (pool == NULL || (!stage_a && !stage_b)) return cudaErrorNotSupported;
    size_t bytes_a = 0, bytes_b = 0;
    cm__gemm_pitch_bytes(p, stage_a, stage_b, &bytes_a, &bytes_b);
    /* the padding after each row's M (N) floats, 0 to 3 floats, is written too: the moved-tile
     * kernel reads it for rows of C it never stores (a_pad4 / b_pad4), and a read of memory
     * never written is what compute-sanitizer's initcheck reports. One 2-D copy each from a
     * strip of zeros (K rows of 12 bytes) at the scratch's end: cudaMemcpy2DAsync's source
     * pitch may not be shorter than its width, so the zeros are a strip, not one row. */
    const int64_t pad_a = stage_a ? cm__gemm_ld16(p->m) - p->m : 0;
    const int64_t pad_b = stage_b ? cm__gemm_ld16(p->n) - p->n : 0;
    const size_t zeros_at = (bytes_a + bytes_b + 255u) / 256u * 256u;
    const size_t zeros = pad_a > 0 || pad_b > 0 ? (size_t)p->k * 12u : 0;
    if (cm__cuda.malloc_from_pool_async(scratch, zeros_at + zeros, pool, cs) != cudaSuccess) {
        (void)cm__cuda.get_last_error();
        *scratch = NULL;
        return cudaErrorNotSupported;
    }
    unsigned char *const base = *scratch;
    *q = cm__gemm_pitched_form(p, stage_a, stage_b, base, base + bytes_a);
    cudaError_t err = cudaSuccess;
    if (zeros > 0) err = cm__cuda.memset_async(base + zeros_at, 0, zeros, cs);
    /* K rows of M (N) floats each, ld apart, into rows ld16 apart; then their padding */
    if (err == cudaSuccess && stage_a)
        err = cm__cuda.memcpy_2d_async(base, (size_t)q->lda * 4u, p->a, (size_t)p->lda * 4u,
                                       (size_t)p->m * 4u, (size_t)p->k,
                                       cudaMemcpyDeviceToDevice, cs);
    if (err == cudaSuccess && pad_a > 0)
        err = cm__cuda.memcpy_2d_async(base + (size_t)p->m * 4u, (size_t)q->lda * 4u,
                                       base + zeros_at, (size_t)pad_a * 4u, (size_t)pad_a * 4u,
                                       (size_t)p->k, cudaMemcpyDeviceToDevice, cs);
    if (err == cudaSuccess && stage_b)
        err = cm__cuda.memcpy_2d_async(base + bytes_a, (size_t)q->ldb * 4u, p->b,
                                       (size_t)p->ldb * 4u, (size_t)p->n * 4u, (size_t)p->k,
                                       cudaMemcpyDeviceToDevice, cs);
    if (err == cudaSuccess && pad_b > 0)
        err = cm__cuda.memcpy_2d_async(base + bytes_a + (size_t)p->n * 4u, (size_t)q->ldb * 4u,
                                       base + zeros_at, (size_t)pad_b * 4u, (size_t)pad_b * 4u,
                                       (size_t)p->k, cudaMemcpyDeviceToDevice, cs);
    return err;
}

static int cm__gemm_realign_state = -1; /* -1: CM__GEMM_REALIGN_DEFAULT */

void cm__gemm_realign_set_for_tests(int on) {
    cm__gemm_realign_state = on < 0 ? -1 : (on != 0);
}

static int cm__gemm_realign_on(void) {
    return cm__gemm_realign_state >= 0 ? cm__gemm_realign_state : CM__GEMM_REALIGN_DEFAULT;
}

/* The Hopper kernel for a problem that is not "TN" (choice "sm90+pack"): every operand that is not
 * K-contiguous with 16-byte rows is first transposed (or, K-contiguous but misaligned, copied)
 * into stream-ordered scratch from the device's memory pool, with K rounded up to 16 bytes; the
 * scratch is freed on the stream after the GEMM. cudaErrorNotSupported with nothing queued when
 * there is no pool or no memory for the scratch: the caller then runs the mma.sync path.
 * A batch packs every matrix of each operand (one when the batch shares it) and runs one
 * batched launch. Choice "sm90+bt": a bf16 B that is MN-major with 16-byte rows is not packed
 * but read by the kernel's transposed-B form (CM__GEMM_SM90_BF16_BT); choice "sm90+at": a TF32
 * operand that is MN-major with 16-byte rows is not packed but read by the register-A form
 * (CM__GEMM_SM90_TF32_AT; B through the transposed product, CM__GEMM_SM90_TF32_AT_CC). */
#if CM_HAVE_GEMM_SM90
/* cm__gemm_sm90_batched's flag for p's launch: a programmatic dependent of the staging */
static int cm__gemm_sm90_dep(const cm__gemm_args_t *p) {
    return p->pdl ? CM__GEMM_SM90_DEPENDENT : 0;
}
#endif

static cudaError_t cm__gemm_sm90_packed(const cm__gemm_args_t *p, int config, cudaMemPool_t pool,
                                        cudaStream_t cs) {
#if CM_HAVE_GEMM_SM90
    const int batch = p->batch > 1 ? p->batch : 1;
    int pack_a = 0, pack_b = 0;
    const int form = cm__gemm_sm90_operands(p, config, &pack_a, &pack_b);
    cm__gemm_args_t q = *p;
    void *scratch = NULL;
    cudaError_t err = cudaSuccess;
    if (pack_a || pack_b) {
        /* this is an sm_90 device: the product may depend on the staging programmatically */
        err = cm__gemm_stage(p, pack_a, pack_b, SIZE_MAX, 1, pool, cs, &q, &scratch);
        if (err == cudaErrorNotSupported && scratch == NULL) return err; /* nothing queued */
    } else if (form == CM__SM90_FORM_PACK) {
        return cudaErrorNotSupported; /* nothing to do here: "TN" and aligned */
    }
    if (err == cudaSuccess && form == CM__SM90_FORM_AT_CC) {
        /* C^T (n x m, column-major: C's own storage) = B A^T: B is the MN-major A of the
         * register-A form, A the K-contiguous B */
        err = cm__gemm_sm90_batched(CM__GEMM_SM90_TF32_AT_CC | cm__gemm_sm90_dep(&q),
                                    q.out_type == CM__GEMM_BF16, q.n, q.m, q.k, q.alpha, q.b,
                                    q.ldb, q.a, q.lda, q.beta, q.c, q.ldc, batch, q.stride_b,
                                    q.stride_a, q.stride_c, cs);
    } else if (err == cudaSuccess) {
        const int in = form == CM__SM90_FORM_BT     ? CM__GEMM_SM90_BF16_BT
                       : form == CM__SM90_FORM_AT   ? CM__GEMM_SM90_TF32_AT
                       : q.in_type == CM__GEMM_BF16 ? CM__GEMM_SM90_BF16
                                                    : CM__GEMM_SM90_TF32;
        err = cm__gemm_sm90_batched(in | cm__gemm_sm90_dep(&q), q.out_type == CM__GEMM_BF16, q.m,
                                    q.n, q.k, q.alpha, q.a, q.lda, q.b, q.ldb, q.beta, q.c,
                                    q.ldc, batch, q.stride_a, q.stride_b, q.stride_c, cs);
    }
    /* stream-ordered: after the GEMM; the packing already queued is harmless if it failed */
    if (scratch != NULL) {
        const cudaError_t ferr = cm__cuda.free_async(scratch, cs);
        if (err == cudaSuccess && ferr != cudaSuccess) err = ferr;
    }
    return err;
#else
    (void)p;
    (void)config;
    (void)pool;
    (void)cs;
    return cudaErrorNotSupported;
#endif
}

/* CM_GEMM_FP32_3XTF32 on the Hopper kernel (choice "sm90+3xtf32"): A and B are split into
 * K-contiguous TF32 operands of two K segments each (kernels/gemm_pack.cu,
 * cm__gemm_split_tf32: A' = [small | big], B' = [big | small]), and one TF32 GEMM over 3 K
 * (kernels/gemm_sm90.h, CM__GEMM_SM90_TF32X3: its third segment reads A's big and B's big
 * again) sums small_A big_B + big_A small_B + big_A big_B in FP32. The scratch comes from
 * the device's pool on the call's stream and goes back there after the product; a K whose
 * scratch would pass CM__GEMM_3X_SCRATCH bytes runs in passes of fewer K (beta = 1 after the
 * first). cudaErrorNotSupported with nothing queued when there is no pool or no memory: the
 * caller then runs the FP32 kernels (the same accuracy). */
#define CM__GEMM_3X_SCRATCH ((size_t)1 << 30)
static size_t cm__gemm_3x_scratch_cap = 0; /* 0: CM__GEMM_3X_SCRATCH */

void cm__gemm_3x_scratch_set_for_tests(size_t bytes) {
    cm__gemm_3x_scratch_cap = bytes;
}

#if CM_HAVE_GEMM_SM90
/* The scratch one 3xTF32 call may take: CM__GEMM_3X_SCRATCH, or the tests' cap */
static size_t cm__gemm_3x_cap(void) {
    return cm__gemm_3x_scratch_cap != 0 ? cm__gemm_3x_scratch_cap : CM__GEMM_3X_SCRATCH;
}

/* The split pre-pass of K range k0 .. k0 + kd of p's A and B: rows of [small | big] (A) and
 * [big | small] (B) at sa / sb, each segment kp long (zero past kd), rows 2 kp apart */
static cudaError_t cm__gemm_3x_split_range(const cm__gemm_args_t *p, int64_t k0, int kd,
                                           int64_t kp, float *sa, float *sb, cudaStream_t cs) {
    static const int order_a[2] = {1, 0}, order_b[2] = {0, 1};
    cudaError_t err = cm__gemm_split_tf32(p->a, p->lda, p->a_kmajor, (int)k0, kd, p->m, order_a,
                                          sa, kp, 2 * kp, cs);
    if (err == cudaSuccess)
        err = cm__gemm_split_tf32(p->b, p->ldb, p->b_kmajor, (int)k0, kd, p->n, order_b, sb, kp,
                                  2 * kp, cs);
    return err;
}
#endif

static cudaError_t cm__gemm_sm90_3xtf32_one(const cm__gemm_args_t *p, cudaMemPool_t pool,
                                            cudaStream_t cs) {
#if CM_HAVE_GEMM_SM90
    if (pool == NULL || p->k < 1 || p->in_type != CM__GEMM_F32 || p->out_type != CM__GEMM_F32)
        return cudaErrorNotSupported;
    /* K per pass: whole K steps of the kernel (32 floats = 128 bytes), scratch within the cap
     * (at least one step: an M + N so large that one step passes the cap still runs) */
    const size_t rows = (size_t)p->m + (size_t)p->n;
    size_t kc = cm__gemm_3x_cap() / (rows * 8u) / 32u * 32u;
    const size_t kpad_all = ((size_t)p->k + 31u) / 32u * 32u;
    if (kc < 32u) kc = 32u;
    if (kc > kpad_all) kc = kpad_all;
    const size_t ld = 2u * kc;
    const size_t bytes_a = ((size_t)p->m * ld * 4u + 255u) / 256u * 256u;
    const size_t bytes_b = (size_t)p->n * ld * 4u;
    void *scratch = NULL;
    if (cm__cuda.malloc_from_pool_async(&scratch, bytes_a + bytes_b, pool, cs) != cudaSuccess) {
        (void)cm__cuda.get_last_error();
        return cudaErrorNotSupported;
    }
    float *const sa = scratch;
    float *const sb = (float *)((unsigned char *)scratch + bytes_a);
    cudaError_t err = cudaSuccess;
    float beta = p->beta;
    for (int64_t k0 = 0; k0 < (int64_t)p->k && err == cudaSuccess; k0 += (int64_t)kc) {
        const int64_t left = (int64_t)p->k - k0;
        const int kd = (int)(left < (int64_t)kc ? left : (int64_t)kc);
        const int64_t kp = ((int64_t)kd + 31) / 32 * 32;
        err = cm__gemm_3x_split_range(p, k0, kd, kp, sa, sb, cs);
        if (err == cudaSuccess)
            err = cm__gemm_sm90(CM__GEMM_SM90_TF32X3, 0, p->m, p->n, (int)(3 * kp), p->alpha, sa,
                                2 * kp, sb, 2 * kp, beta, p->c, p->ldc, cs);
        /* a refusal of the first pass has written nothing: the caller's fallback runs it all;
         * a later pass cannot be refused (same operands, fewer K) */
        beta = 1.0f;
    }
    /* stream-ordered: after the GEMM; the splits already queued are harmless if it failed */
    const cudaError_t ferr = cm__cuda.free_async(scratch, cs);
    if (err == cudaSuccess && ferr != cudaSuccess) err = ferr;
    return err;
#else
    (void)p;
    (void)pool;
    (void)cs;
    return cudaErrorNotSupported;
#endif
}

/* A batch of 3xTF32 products: one matrix at a time (the split pre-pass and its scratch are per
 * matrix); a refusal (cudaErrorNotSupported) can only come from the first, before anything is
 * written, since every matrix has the same shape and the scratch is given back in between. */
static cudaError_t cm__gemm_sm90_3xtf32(const cm__gemm_args_t *p, cudaMemPool_t pool,
                                        cudaStream_t cs) {
    const int batch = p->batch > 1 ? p->batch : 1;
    cm__gemm_args_t q = *p;
    q.batch = 1;
    cudaError_t err = cudaSuccess;
    for (int z = 0; z < batch && err == cudaSuccess; ++z) {
        q.a = (const float *)p->a + (int64_t)z * p->stride_a;
        q.b = (const float *)p->b + (int64_t)z * p->stride_b;
        q.c = (float *)p->c + (int64_t)z * p->stride_c;
        err = cm__gemm_sm90_3xtf32_one(&q, pool, cs);
    }
    return err;
}

/* CM_GEMM_FP32_3XTF32 p (batch 1) on the Hopper kernel split over K into about `parts` parts
 * (cm__gemm_splitk's form of it; the last wave's second piece, cm__gemm_wave_split): each part's K range of A and B split
 * into its own TF32 block ([small | big] rows, cm__gemm_split_tf32; a shorter last part
 * zero-padded to the same length), the blocks one batch stride apart, then one batched
 * CM__GEMM_SM90_TF32X3 launch into float scratch and the split's reduction (alpha, beta, the
 * parts added in order). cudaErrorNotSupported with nothing of the product queued where the
 * kernel or the scratch cannot be had (the caller runs p whole). *ran: the parts. */
static cudaError_t cm__gemm_sm90_3xtf32_parts(const cm__gemm_args_t *p, int parts, int major,
                                              cudaMemPool_t pool, cudaStream_t cs, int *ran) {
    *ran = 1;
#if CM_HAVE_GEMM_SM90
    if (pool == NULL || parts < 2 || p->batch > 1 || p->k < 2 || p->m < 1 || p->n < 1 ||
        p->in_type != CM__GEMM_F32 || p->out_type != CM__GEMM_F32)
        return cudaErrorNotSupported;
    /* a part's K: whole steps of 32 floats; parts of that length cover K, the last shorter */
    const int64_t kp = (((int64_t)p->k + parts - 1) / parts + 31) / 32 * 32;
    const int64_t total = ((int64_t)p->k + kp - 1) / kp;
    if (total < 2 || total > CM__SPLITK_MAX) return cudaErrorNotSupported;
    const int64_t ld = 2 * kp, m = p->m, n = p->n;
    const size_t bytes_a = (size_t)(total * m * ld) * 4u, bytes_b = (size_t)(total * n * ld) * 4u;
    const size_t bytes_c = (size_t)(total * m * n) * 4u;
    if (bytes_a + bytes_b + bytes_c > cm__gemm_3x_cap()) return cudaErrorNotSupported;
    void *scratch = NULL;
    if (cm__cuda.malloc_from_pool_async(&scratch, bytes_a + bytes_b + bytes_c, pool, cs) !=
        cudaSuccess) {
        (void)cm__cuda.get_last_error();
        return cudaErrorNotSupported;
    }
    /* each block's rows are whole 256 bytes (ld a multiple of 64 floats): every block and C's
     * parts start on 256 bytes of the pool's allocation */
    float *const sa = scratch;
    float *const sb = (float *)((unsigned char *)scratch + bytes_a);
    float *const sc = (float *)((unsigned char *)scratch + bytes_a + bytes_b);
    cudaError_t err = cudaSuccess;
    if (!cm__gemm_sm90_batched_supported(CM__GEMM_SM90_TF32X3, 0, p->m, p->n, (int)(3 * kp), sa,
                                         ld, sb, ld, sc, p->n, (int)total, m * ld, n * ld,
                                         m * n))
        err = cudaErrorNotSupported;
    for (int64_t j = 0; j < total && err == cudaSuccess; ++j) {
        const int64_t k0 = j * kp, left = (int64_t)p->k - k0;
        err = cm__gemm_3x_split_range(p, k0, (int)(left < kp ? left : kp), kp, sa + j * m * ld,
                                      sb + j * n * ld, cs);
    }
    if (err == cudaSuccess)
        err = cm__gemm_sm90_batched(CM__GEMM_SM90_TF32X3, 0, p->m, p->n, (int)(3 * kp), 1.0f,
                                    sa, ld, sb, ld, 0.0f, sc, p->n, (int)total, m * ld, n * ld,
                                    m * n, cs);
    if (err == cudaSuccess)
        err = cm__gemm_splitk_reduce(sc, (int)total, p->m, p->n, p->alpha, p->beta, p->c,
                                     p->ldc, 0, major >= 9, cs);
    /* stream-ordered: after the reduction (or whatever was queued before a failure) */
    const cudaError_t ferr = cm__cuda.free_async(scratch, cs);
    if (err == cudaSuccess && ferr != cudaSuccess) err = ferr;
    if (err == cudaSuccess) *ran = (int)total;
    return err;
#else
    (void)p;
    (void)parts;
    (void)major;
    (void)pool;
    (void)cs;
    return cudaErrorNotSupported;
#endif
}

/* Run choice *ch for one matrix; when a kernel cannot take the operands (cudaErrorNotSupported,
 * nothing queued) fall back along SM90 -> mma.sync -> FFMA (CM_GEMM_FP32_3XTF32: SM90 -> the
 * FP32 table's FFMA tile, never a TF32-only kernel); *ch says what ran (or failed). */
static cudaError_t cm__gemm_launch(cm__gemm_choice_t *ch, int precision,
                                   const cm__gemm_args_t *p, int sms, cudaMemPool_t pool,
                                   cudaStream_t cs) {
    if (ch->kernel == CM__GEMM_KERNEL_GEMV) return cm__gemm_gemv(p, sms, cs);
    if (ch->kernel == CM__GEMM_KERNEL_SKINNY) return cm__gemm_skinny(p, sms, cs);
    cudaError_t err = cudaErrorNotSupported;
    if (ch->kernel == CM__GEMM_KERNEL_SM90) {
        if (precision == CM_GEMM_FP32_3XTF32) {
            err = cm__gemm_sm90_3xtf32(p, pool, cs);
        } else if (ch->config == CM__GEMM_SM90_PACK || ch->config == CM__GEMM_SM90_BT ||
                   ch->config == CM__GEMM_SM90_AT) {
            err = cm__gemm_sm90_packed(p, ch->config, pool, cs);
        } else {
#if CM_HAVE_GEMM_SM90
            const int in = p->in_type == CM__GEMM_BF16 ? CM__GEMM_SM90_BF16 : CM__GEMM_SM90_TF32;
            err = cm__gemm_sm90_batched(in | cm__gemm_sm90_dep(p), p->out_type == CM__GEMM_BF16,
                                        p->m, p->n, p->k, p->alpha, p->a, p->lda, p->b, p->ldb,
                                        p->beta, p->c, p->ldc, p->batch, p->stride_a,
                                        p->stride_b, p->stride_c, cs);
#endif
        }
        if (err != cudaErrorNotSupported) return err;
        (void)cm__cuda.get_last_error();
        *ch = precision == CM_GEMM_FP32_3XTF32
                  ? cm__gemm_table_entry(CM__GEMM_ARCH_SM90, CM__GEMM_FAM_FP32,
                                         cm__gemm_shape_class(p->m, p->n, p->k, sms))
                  : (cm__gemm_choice_t){CM__GEMM_KERNEL_MMA, CM__MMA_128x128};
    }
    if (ch->kernel == CM__GEMM_KERNEL_MMA) {
        err = cm__gemm_mma(p, precision == CM_GEMM_TF32, ch->config, cs);
        if (err != cudaErrorNotSupported) return err;
        (void)cm__cuda.get_last_error();
        int bm = 0;
        cm__gemm_mma_tile(ch->config, &bm, NULL);
        *ch = (cm__gemm_choice_t){CM__GEMM_KERNEL_FFMA,
                                  bm >= 128 ? CM__FFMA_128x128x8 : CM__FFMA_64x64x16};
    }
    return cm__gemm_ffma(p, ch->config, cs);
}

/* ---------------------------------------------------------------------- split-K
 * A single product whose C cannot keep the GPU busy but whose K is long (64 x 64 x 4096,
 * 64 x 4096 x 4096, 7 x 4096 x 4096 on 132 multiprocessors...: cm__gemm_splitk_parts' rules)
 * runs as a strided batch over K: part q multiplies the K range [q kc, min((q + 1) kc, K)) into
 * its own float m x n matrix of scratch (alpha 1, beta 0), and cm__gemm_splitk_reduce adds
 * the parts in order and applies alpha and beta (deterministic: the same bits every call). The
 * parts run as the batch dimension of the kernel chosen for the whole product. */

/* Parts for p under choice ch (cm__gemm_splitk_parts in gemm_internal.h), by kernel:
 *  - the tiles (FFMA, mma.sync): where C's tiles fill at most a quarter of the multiprocessors,
 *    about one wave of resident blocks (float inputs on the 32 x 64 FFMA tiles in parts of at
 *    least CM__SPLITK_FFMA_TINY_MIN_K of K) (slots
 *    / tiles parts, slots as below: the count the
 *    second rule gives too; on the H200 no better or worse than sms / tiles parts within the
 *    runs' spread, bench/NOTES-gemm.md); else, for K >= CM__SPLITK_LONG_K, where they
 *    leave at least half of the GPU's resident tile slots empty (slots: an FFMA tile's blocks
 *    a multiprocessor from its configuration, 4 of 32 x 64 and 64 x 64, 2 of 128 x 128; mma's
 *    4 of a 32 x 64 tile, 2 of a 64 x 64 one, 1 of a larger), slots / tiles parts (float
 *    inputs on the 32 x 64 FFMA tiles: from K >= CM__SPLITK_MIN_K, at least
 *    CM__SPLITK_FFMA_TINY_MIN_K of K per part below CM__SPLITK_FFMA_LONG_K and
 *    CM__SPLITK_FFMA_MIN_K from there; the TF32 align1 form over a C with a side of at most
 *    16, and TF32 on the 16-byte form below CM__SPLITK_LONG_K, from K >=
 *    CM__SPLITK_A1_THIN_K); both with at least CM__SPLITK_MIN_K of K per part
 *    (CM__SPLITK_ALIGN1_MIN_K for TF32 on the mma.sync tiles, either form, any K),
 *    at most CM__SPLITK_MAX; where those limits cut the parts so that the last layer of
 *    blocks over the multiprocessors is under 3/4 full, the most whole layers (not where the
 *    float 32 x 64 FFMA tiles' blocks all fit at once);
 *  - the Hopper kernel (one block a multiprocessor; its tiles over C^T in the register-A form
 *    on C^T, "sm90+at" reading B as it is): where its 128 x 256 tiles fill at most a
 *    quarter of the multiprocessors, sms / (2 tiles) parts, which its launcher runs as 128 x
 *    128 tiles in one wave (ceil(sms / tiles) parts would make a second wave); where they fill
 *    more than an eighth, each part at least CM__GEMM_SM90_LONG_K of K (parts of 500 of 1000^3,
 *    32 tiles, lost to the whole product on the H200; parts of 2048 of 4096 x 64 x 4096 beat
 *    mma:64x64); up to an eighth, parts of at least CM__SPLITK_MIN_K, the rule measured there
 *    before (bench/NOTES-gemm.md); never TF32 reading both operands as they are with K under
 *    CM__GEMM_SM90_LONG_K (cm__gemm_sm90_tf32_short), nor cm__gemm_sm90_thin_whole's C;
 *  - skinny, for K >= CM__SPLITK_SKINNY_K over at most CM__SPLITK_SKINNY_ROWS_PER_SM rows per
 *    multiprocessor: ceil(K / CM__SPLITK_SKINNY_K) parts, at most 4 (its blocks each run the
 *    whole K of their rows; measured at 3001-4096 rows, more rows fill the GPU by themselves);
 *  - gemv reading the matrix across K (its rows M-contiguous) over CM__SPLITK_GEMV_MIN_ROWS ..
 *    CM__SPLITK_GEMV_MAX_ROWS rows, K >= CM__SPLITK_SKINNY_K: min(8, K / 512) parts (too few
 *    rows to keep enough loads in flight);
 *  - never a batch or CM_GEMM_FP32_3XTF32 (which on the FP32 kernels runs as CM_GEMM_FP32:
 *    cm__gemm_run_precision).
 * H200 (bench/NOTES-gemm.md, the sweeps at c279dc8 with CUDAMODEL_GEMM_SPLITK forced): 64 x
 * 4096 x 4096 0.33-0.46x cuBLAS unsplit, 0.62-0.84x in 4 parts; 4096 x 7 x 4096 FP32 on the
 * tiles 0.43x -> 0.92x; 7 x 4096 x 4096 on skinny 0.68-0.75x -> 0.98-1.15x in 2; 1000 x 1 x 4096
 * gemv across K 0.67-0.82x -> 1.03-1.17x in 8. Below K = 1024 the split lost where the first
 * rule did not already take it (512^3 BF16 on mma 1.07x -> 0.77x in 2, 4096 x 64 x 1000);
 * later kernels changed that for TF32 on mma.sync (the comment at CM__SPLITK_A1_THIN_K).
 * The FFMA slots count the configuration table's blocks (4 of 64 x 64, 2 of 128 x 128): on the
 * H200 FP32 64 x 4096 x 4096 and 4096 x 64 x 4096 ran 6-11 % faster in the 8 parts that gives
 * than in 4, 768^2 x 4096 and 96 x 5000 x 3000 60 % faster in 3 than whole. */
#define CM__SPLITK_MIN_K 256
/* The small FFMA tiles (32 x 64, 4 blocks a multiprocessor) with float inputs (FP32
 * arithmetic, ~1/8 of the tensor cores' rate, so a part of K is worth more time against the
 * reduction): the slot rule from K = 768, parts of at least 192 of K. H200, sweep at 71fab4e
 * with CUDAMODEL_GEMM_SPLITK forced: FP32 4096 x 64 x 1000 (128 tiles of 32 x 64) TN / NN
 * 0.62 / 0.65x cuBLAS whole, 0.78 / 0.82x in 4 parts, 0.83 / 0.84x in 8; 3001 x 127 x 1000
 * (188 tiles) 0.66 / 0.69x whole, 0.72 / 0.71x in 2. On 64 x 64 FFMA tiles (TF32 3001 x 127 x
 * 1000, misaligned: 94 tiles) 2 parts lost (0.66 / 0.88x -> 0.61 / 0.73x), and the mma and
 * widened-bf16 tiles of 4096 x 64 x 1000 lost in any split (bench/NOTES-gemm.md); on the H100
 * since, TF32 on mma:64x64 forced there won in 4 parts, 0.63-0.83x -> 0.94-1.11x. */
/* The TF32 align1 form of the mma.sync tiles (4-byte copies into shared memory, more latency
 * to hide per element than the 16-byte form): parts of at least 128 of K. H200, forced
 * mma:128x128: TF32 127 x 1000 x 3001 (8 tiles) 0.84-0.86x cuBLAS in 11 parts (the 256 rule's
 * cap), 0.90-0.91x in 16; 1000 x 127 x 3001 1.00-1.06x -> 1.17-1.20x. */
/* TF32 on the 16-byte form takes the same least part at any K (it had parts of at least 256
 * from CM__SPLITK_LONG_K). H100 against cuBLAS, two rounds, the sweep's column-major "NN",
 * mma:64x64 in the parts of 256 (4-5) -> 7-8 parts forced: 128^2 x 1500 0.87x -> 1.05x, 256 x
 * 128 x 1200 0.87x -> 1.05-1.07x, 128^2 x 1024 0.91-0.92x -> 1.09x, 256^2 x 1100 0.97x ->
 * 1.12x, 512 x 256 x 1500 0.95-0.96x -> 1.07-1.10x, 1000 x 64 x 1200 0.98x -> 1.15-1.16x
 * (bench/NOTES-gemm.md). */
#define CM__SPLITK_ALIGN1_MIN_K 128
/* The TF32 align1 form over a thin C (a side of at most 16: cm__gemm_realign_mode's thin
 * route, 47-64 tiles of 64 x 64 for 3001-4096 rows, under a layer of 132 multiprocessors)
 * takes the slot rule from K = CM__SPLITK_A1_THIN_K, not CM__SPLITK_LONG_K. H100 against
 * cuBLAS, NN: 3001 x 12 x 500 0.95x -> 1.19x (2 parts), 3001 x 12 x 600 0.96x -> 1.09x (2),
 * 4096 x 12 x 767 0.85x -> 1.23x (4); below K = 384 forced splits gained nothing (3001 x 12 x
 * 256 1.31x whole, 1.27x in 2) (bench/NOTES-gemm.md). */
#define CM__SPLITK_A1_THIN_K 384
/* TF32 on the mma.sync tiles' 16-byte form over a C one tile deep (its short side at most the
 * tile's) whose tiles fill more than half the resident slots but at most two thirds of them
 * (the slot rule above leaves K whole there: 133-176 tiles of 64 x 64 on 132 multiprocessors,
 * one block on most of them, two on a few): K in this many parts, 1.5-2 layers of blocks.
 * H100 against cuBLAS, two rounds, the sweep's column-major "NN" with mma:64x64, whole -> 3
 * parts (2 / 4 parts): 8500 x 40 x 1000 0.73-0.75x -> 0.84x (0.80 / 0.82-0.83x), 9000 x 48 x
 * 1000 0.77-0.78x -> 0.87x, 10000 x 40 x 800 0.72-0.73x -> 0.77-0.78x, 10000 x 33 x 768
 * 0.75-0.76x -> 0.79-0.81x, 9000 x 40 x 1000 0.80x -> 0.90-0.92x, 11000 x 40 x 1000 (172
 * tiles) 0.74-0.75x -> 0.79x; at 14000 rows (219 tiles) no count gained (0.78x whole, 0.77x in
 * 3); bench/NOTES-gemm.md. */
#define CM__SPLITK_TF32_ROW_PARTS 3
/* TF32 on the mma.sync tiles' 16-byte form with K under
 * CM__SPLITK_LONG_K splits as the align1 form over a thin C does: from K = CM__SPLITK_A1_THIN_K,
 * parts of at least CM__SPLITK_ALIGN1_MIN_K, wherever C's tiles leave half the slots empty (the
 * rule took such products only from K 512, and over more than a quarter of the multiprocessors'
 * worth of tiles only from K 1024). H100 against cuBLAS, whole -> split: 384^2 x 600 NN 0.82x
 * -> 1.02x (3 parts), 4096 x 16 x 1000 NN 0.81x -> 1.16x (4), 256^2 x 600 NN 0.82x -> 0.98x (4;
 * 2 before), 512^3 NN 0.84x -> 0.94x (4), 1024 x 256 x 700 NN 0.77x -> 0.97x, 300 x 700 x 900
 * NN 0.82x -> 1.07x, 2048 x 128 x 500 TN 0.75x -> 0.84x (2), 3001 x 64 x 500 TN 0.94x -> 1.08x,
 * 384^2 x 400 TN 0.81x -> 0.91x (3); 700 x 300 x 400 NN 0.89x -> 0.86x (2), the one loss;
 * mma:64x64 forced on 4096 x 64 x 1000 / 4096 x 64 x 600 NN 0.81 / 0.78x -> 1.06-1.11 /
 * 0.92-0.94x in 4 (the "NT" / "TT" that run there by default). At K
 * 300 (from K 256, 2 parts) nothing gained (256^2 x 300 NN 0.94x -> 0.90x). BF16 on the same
 * tiles lost as often as it gained (512^3 1.00x -> 0.89x, 4096 x 64 x 600 0.95x -> 0.89x;
 * 4096 x 16 x 1000 0.90x -> 1.01x) and keeps the rule (bench/NOTES-gemm.md). */
#define CM__SPLITK_FFMA_LONG_K 768
#define CM__SPLITK_FFMA_MIN_K 192
/* BF16 on the mma.sync tiles over more than a quarter of the multiprocessors' worth of tiles
 * takes the slot rule from K = CM__SPLITK_BF16_MMA_K, not CM__SPLITK_LONG_K, in parts of at
 * least CM__SPLITK_BF16_MMA_MIN_K of K. H100 against cuBLAS, two rounds, 4096 x 64 x 1000 on
 * mma:64x64 (64 tiles, 264 slots), whole -> 4 parts forced: "NN" 0.83x -> 0.90-0.92x, "TN"
 * 0.79-0.80x -> 0.83-0.85x (2 parts: 0.85-0.91x / 0.77-0.80x); 4096 x 16 x 1000 0.90x ->
 * 1.01x before. Below this K the split lost (4096 x 64 x 600 0.95x -> 0.89x, 512^3 1.00x ->
 * 0.89x; bench/NOTES-gemm.md). */
#define CM__SPLITK_BF16_MMA_K 768
#define CM__SPLITK_BF16_MMA_MIN_K 192
/* Below CM__SPLITK_FFMA_LONG_K, from K = CM__SPLITK_MIN_K, the same tiles take the second slot
 * rule (over more than a quarter of the multiprocessors' worth of tiles) with parts of at
 * least CM__SPLITK_FFMA_TINY_MIN_K of K, and keep a split that fits one wave of resident
 * blocks untrimmed. H200, tiny-class FP32 shapes at K = 512 .. 700 on the 32 x 64 tiles
 * (unsplit before) against cuBLAS, whole -> 4 parts forced, NN / TN:
 * 512^3 0.85-0.92x -> 1.08-1.10x, 384^2 x 600 0.67-0.73x -> 1.00-1.12x, 1000 x 127 x 512
 * 0.62-0.71x -> 0.93-1.25x, 256 x 1024 x 640 0.80x -> 1.02-1.17x, 700 x 300 x 700 0.69-0.75x
 * -> 0.96-0.99x (2 parts: about half the gain). H100, the rule against the earlier one (K from
 * 512, parts of at least 128, trimmed to whole layers of 132), FP32 NN: 3001 x 12 x 500
 * 0.65x -> 1.19x (6 parts), 4096 x 12 x 400 0.75x -> 1.17x, 3001 x 12 x 256 0.76x -> 1.07x,
 * 3001 x 12 x 600 0.93x -> 1.27x (7 parts, 2 before), 3001 x 64 x 500 0.78x -> 1.15x, 384^2 x
 * 400 0.99x -> 1.35x, 4096 x 12 x 767 1.30x -> 1.42x (8, 4 before); TN alike
 * (bench/NOTES-gemm.md). */
/* Float inputs on the 32 x 64 FFMA tiles over at most a quarter of the multiprocessors' worth
 * of tiles (the first rule): parts of at least CM__SPLITK_FFMA_TINY_MIN_K of K at any K from
 * CM__SPLITK_MIN_K (each block's part is short work over FP32 arithmetic; more blocks hide its
 * latency). H200, FP32 against cuBLAS, 256-of-K parts -> 32 parts forced, NN / TN: 64 x 128 x
 * 2048 (8 parts) 0.90 / 0.77x -> 1.15 / 1.13x, 100 x 100 x 5000 (16) 0.88 / 0.94x -> 1.03 /
 * 1.11x, 64 x 64 x 4096 (16) 0.82 / 1.07x -> 1.03 / 1.05x, 32 x 128 x 4096 (16) 0.95 / 0.96x
 * -> 1.02 / 1.01x. H100, the rule below K 768 (whole, or 2 parts of 256+, before), NN / TN:
 * 2000 x 16 x 500 0.65x -> 1.25x (6 parts), 1000 x 16 x 300 0.77x -> 1.14x (4), 256^2 x 300
 * 0.89 / 0.93x -> 1.17 / 1.33x, 256^2 x 600 0.91 / 0.87x -> 1.39 / 1.35x (7), 128 x 512 x 400
 * 0.85 / 0.75x -> 1.42 / 1.28x, 128^2 x 500 0.78 / 0.63x -> 1.40 / 1.25x, 200^2 x 400 0.85 /
 * 0.77x -> 1.39 / 1.34x, 64^2 x 700 0.81x -> 1.33x (8), 1000 x 32 x 400 0.67 / 0.77x -> 1.14 /
 * 1.37x; no shape lost (bench/NOTES-gemm.md). K 768-2047 between the two measured ranges. */
#define CM__SPLITK_FFMA_TINY_MIN_K 64
#define CM__SPLITK_SKINNY_K 2048
#define CM__SPLITK_GEMV_MIN_ROWS 512
#define CM__SPLITK_GEMV_MAX_ROWS 2048
/* gemv across K (the matrix M-contiguous) over few rows: its blocks of 1024 threads each take
 * 32 rows (64 for bf16 read in pairs: kernels/gemv.cu) and run all of K, so 127 rows are 4
 * blocks on 4 multiprocessors, each warp a chain of dependent load batches down K. From K =
 * CM__SPLITK_GEMV_FEW_K, K is split into as many parts as give every multiprocessor one block
 * (sms / the blocks of a part), parts of at least CM__SPLITK_GEMV_FEW_MIN_K, at most
 * CM__SPLITK_MAX, where that makes at least CM__SPLITK_GEMV_FEW_PARTS parts (fewer lost to the
 * whole K: 3001 / 4096 rows in 2 parts 0.63-0.97x against 1.0-1.1x); the rule above takes
 * over where it gives more. H100 against cuBLAS, two rounds, the column-major "NN", whole ->
 * the forced parts on either side of this count (this count): FP32 127 x 1 x 3001 0.84-1.19x
 * -> 1.21-1.29x (16-32; 23), 64 x 1 x 4096 0.74-0.80x -> 1.22-1.35x (16-32; 32), 200 x 1 x
 * 2000 0.96-1.02x -> 1.20-1.25x (16; 15), 300 x 1 x 8192 0.49-0.58x -> 1.12-1.18x (8-16; 13),
 * 512 x 1 x 3001 1.16-1.19x (5 parts) -> 1.25-1.26x (8; 8); BF16 127 x 1 x 3001 0.80-0.91x
 * -> 1.18-1.30x (16-32; 23), 64 x 1 x 4096 0.71-0.83x -> 1.20-1.24x (32; 32), 200 x 1 x 2000
 * 0.99-1.15x -> 1.33-1.40x (16; 15), 300 x 1 x 8192 0.34-0.38x -> 0.81-1.14x (16-32; 26),
 * 512 x 1 x 3001 0.90-0.94x (5 parts) -> 1.29-1.38x (16; 16). At K = 1500 - 1536 the parts
 * gained little or lost (127 x 1 x 1500: 1.03-1.18x whole, 1.05-1.15x in 8-16; 96 x 1 x 1536
 * in this rule's 12 parts FP32 / TF32 / BF16 0.91-1.00 / 0.93-1.00 / 1.15-1.24x against
 * whole 1.04-1.05 / 1.00-1.04 / 1.30-1.32x), from K = 2000 they won (200 x 1 x 2000 in 13
 * parts 1.09-1.35x against whole 0.94-1.07x): 2000, the least K measured to gain, is the
 * floor. The matrix read along K (one warp or more a row) gained from no split
 * (bench/NOTES-gemm.md). */
#define CM__SPLITK_GEMV_FEW_K 2000
#define CM__SPLITK_GEMV_FEW_MIN_K 128
#define CM__SPLITK_GEMV_FEW_PARTS 4
/* the fewest rows measured (under 32 a warp of gemv's blocks runs with idle lanes, another
 * regime: 1 x 1 x 4096 and 7 x 1 x 512 keep K whole) */
#define CM__SPLITK_GEMV_FEW_MIN_ROWS 64
#define CM__SPLITK_SKINNY_ROWS_PER_SM 64
/* Resident blocks a multiprocessor of choice ch's bm x bn tiles: an FFMA configuration's from
 * its table (the __launch_bounds__ minimum: 4 of 32 x 64 and 64 x 64, 2 of 128 x 128); else 4
 * of a 32 x 64 tile, 2 of a 64 x 64 one, 1 larger */
static int cm__gemm_resident_blocks(cm__gemm_choice_t ch, int bm, int bn) {
    const int table = ch.kernel == CM__GEMM_KERNEL_FFMA ? cm__gemm_ffma_blocks_per_sm(ch.config)
                                                        : 0;
    if (table > 0) return table;
    return bm * bn <= 2048 ? 4 : bm * bn <= 4096 ? 2 : 1;
}

/* The most parts of K: min_k of K at least each, at most CM__SPLITK_MAX */
static int64_t cm__gemm_parts_cap(int64_t k, int64_t min_k) {
    return k / min_k < CM__SPLITK_MAX ? k / min_k : CM__SPLITK_MAX;
}

/* gemv across K over few rows (CM__SPLITK_GEMV_FEW_K; at least CM__SPLITK_GEMV_FEW_MIN_ROWS of
 * them): sms / (its blocks of one part) parts,
 * capped by K / CM__SPLITK_GEMV_FEW_MIN_K and CM__SPLITK_MAX; 1 under
 * CM__SPLITK_GEMV_FEW_PARTS. The matrix is A where C is a column (n == 1), else B; bf16 rows
 * go in pairs where the kernel reads them so (an even leading dimension, a 4-byte base). */
static int cm__gemm_gemv_few_parts(const cm__gemm_args_t *p, int rows, int sms) {
    if (p->k < CM__SPLITK_GEMV_FEW_K || rows < CM__SPLITK_GEMV_FEW_MIN_ROWS || sms < 1) return 1;
    const void *mat = p->n == 1 ? p->a : p->b;
    const int64_t ld = p->n == 1 ? p->lda : p->ldb;
    const int pairs = p->in_type == CM__GEMM_BF16 && ld % 2 == 0 && (uintptr_t)mat % 4u == 0;
    const int64_t per_block = pairs ? 64 : 32;
    const int64_t blocks = (rows + per_block - 1) / per_block;
    int64_t parts = sms / blocks;
    const int64_t cap = cm__gemm_parts_cap(p->k, CM__SPLITK_GEMV_FEW_MIN_K);
    if (parts > cap) parts = cap;
    return parts >= CM__SPLITK_GEMV_FEW_PARTS ? (int)parts : 1;
}

/* The TF32 align1 form over a thin C (a1_thin in cm__gemm_splitk_parts_of) where C's tiles
 * fill at most half the resident slots (sms x per_sm): the fewest parts of K (each at least
 * CM__SPLITK_ALIGN1_MIN_K) whose blocks outnumber the slots with the last layer of blocks over
 * the multiprocessors at least 3/4 full; 0 where no count up to the cap does (the slot rule
 * then). These tiles run mostly empty (16 of their 64 rows or columns), so a block is short
 * work bound by its loads' latency: a second wave of blocks behind the resident ones paid, a
 * thin last layer did not. H100 against cuBLAS, two rounds, TF32 in the sweep's column-major
 * cases (64 x 64 tiles, 264 slots), the slot rule's parts -> these: 16 x 6000 x 2001 NN 0.79x
 * (2) -> 1.02x (4), 6000 x 16 x 2001 NN 0.89x (2) -> 1.10-1.11x (4), 16 x 3001 x 2001 NN 0.89x
 * (5) -> 1.01x (8), 3001 x 16 x 1500 NN 1.07x (5) -> 1.11x (8), 8192 x 12 x 1999 NN 0.97x (2)
 * -> 1.02x (3), 16 x 2000 x 3001 NN / TN 0.92 / 0.87x (8) -> 0.95-0.96 / 0.91x (12), 16 x
 * 4000 x 2001 NN 0.87x (4) -> 0.89-0.90x (6); 2000 x 16 x 4095 NN / TN 1.09 / 1.13x (8) ->
 * 1.09 / 1.10x (12). Under this count's K (3001 x 12 x 500 .. 600, 4096 x 12 x 767) the slot
 * rule's 2-4 parts stand as measured (bench/NOTES-gemm.md). */
static int cm__gemm_a1_thin_parts(int64_t tiles, int64_t k, int sms, int per_sm) {
    const int64_t slots = (int64_t)sms * per_sm;
    if (tiles < 1 || sms < 1 || 2 * tiles > slots) return 0;
    const int64_t cap = cm__gemm_parts_cap(k, CM__SPLITK_ALIGN1_MIN_K);
    for (int64_t parts = 2; parts <= cap; ++parts) {
        const int64_t blocks = tiles * parts, rest = blocks % sms;
        if (blocks > slots && (rest == 0 || 4 * rest >= 3 * (int64_t)sms)) return (int)parts;
    }
    return 0;
}

/* Whether CM__SPLITK_TF32_ROW_PARTS's rule takes choice ch over p: TF32 on mma:64x64's 16-byte
 * form, C one tile deep, its tiles more than half and at most two thirds of the resident slots
 * (cm__gemm_splitk_parts_of gives the parts where K allows them; cm_gemm_explain says why).
 * Returns the tile's resident blocks a multiprocessor where it does, else 0. */
static int cm__gemm_splitk_tf32_row(const cm__gemm_args_t *p, cm__gemm_choice_t ch, int sms) {
    if (ch.kernel != CM__GEMM_KERNEL_MMA || ch.config != CM__MMA_64x64 ||
        p->in_type != CM__GEMM_F32 || !cm__gemm_mma_aligned(p) || sms < 1)
        return 0;
    int bm = 0, bn = 0;
    cm__gemm_mma_tile(ch.config, &bm, &bn);
    if (bm < 1 || bn < 1 || cm__gemm_c_short(p) > (bm < bn ? bm : bn)) return 0;
    const int64_t tiles = ((int64_t)p->m + bm - 1) / bm * (((int64_t)p->n + bn - 1) / bn);
    const int per_sm = cm__gemm_resident_blocks(ch, bm, bn);
    const int64_t slots = (int64_t)sms * per_sm;
    return 2 * tiles > slots && 3 * tiles <= 2 * slots ? per_sm : 0;
}

/* cm__gemm_splitk_parts; thin_whole 0: without cm__gemm_sm90_thin_whole's exception (the
 * realignment's test of a C too small for the GPU) */
static int cm__gemm_splitk_parts_of(const cm__gemm_args_t *p, cm__gemm_choice_t ch,
                                    int precision, int sms, int forced, int thin_whole) {
    if (p->batch > 1 || p->m < 1 || p->n < 1 || precision == CM_GEMM_FP32_3XTF32) return 1;
    if (forced >= 1) {
        /* any kernel (each has a batch dimension), parts of at least CM__SPLITK_FORCED_MIN_K */
        int64_t parts = forced < CM__SPLITK_MAX ? forced : CM__SPLITK_MAX;
        if (parts > p->k / CM__SPLITK_FORCED_MIN_K) parts = p->k / CM__SPLITK_FORCED_MIN_K;
        return parts < 2 ? 1 : (int)parts;
    }
    if (p->k < CM__SPLITK_MIN_K || sms < 1) return 1;
    const int rows = p->m <= p->n ? p->n : p->m; /* the long side */
    if (ch.kernel == CM__GEMM_KERNEL_SKINNY) {
        if (p->k < CM__SPLITK_SKINNY_K ||
            (int64_t)rows > (int64_t)CM__SPLITK_SKINNY_ROWS_PER_SM * sms)
            return 1;
        const int parts = p->k / CM__SPLITK_SKINNY_K + (p->k % CM__SPLITK_SKINNY_K != 0);
        return parts > 4 ? 4 : parts;
    }
    if (ch.kernel == CM__GEMM_KERNEL_GEMV) {
        if (cm__gemm_long_along_k(p)) return 1;
        const int few = cm__gemm_gemv_few_parts(p, rows, sms);
        int parts = 1;
        if (p->k >= CM__SPLITK_SKINNY_K && rows >= CM__SPLITK_GEMV_MIN_ROWS &&
            rows <= CM__SPLITK_GEMV_MAX_ROWS)
            parts = p->k / 512 > 8 ? 8 : p->k / 512;
        return few > parts ? few : parts;
    }
    int bm = 128, bn = 256; /* the Hopper kernel's tile */
    if (ch.kernel == CM__GEMM_KERNEL_FFMA) cm__gemm_ffma_tile(ch.config, &bm, &bn);
    if (ch.kernel == CM__GEMM_KERNEL_MMA) cm__gemm_mma_tile(ch.config, &bm, &bn);
    if (bm < 1 || bn < 1) return 1;
    const int64_t tiles = ch.kernel == CM__GEMM_KERNEL_SM90
                              ? cm__gemm_sm90_wide_tiles(p, ch.config)
                              : ((int64_t)p->m + bm - 1) / bm * (((int64_t)p->n + bn - 1) / bn);
    const int per_sm = cm__gemm_resident_blocks(ch, bm, bn);
    const int ffma_float = ch.kernel == CM__GEMM_KERNEL_FFMA && p->in_type != CM__GEMM_BF16 &&
                           bm * bn <= 2048;
    /* the TF32 align1 form (mma.sync on operands without 16-byte rows), and that form over a
     * C with a side of at most 16 */
    const int align1 = ch.kernel == CM__GEMM_KERNEL_MMA && !cm__gemm_mma_aligned(p);
    const int a1_thin = align1 && (p->m <= 16 || p->n <= 16);
    /* TF32 on the mma.sync tiles (either form), and on their 16-byte form below
     * CM__SPLITK_LONG_K, which splits like a1_thin (measured at CM__SPLITK_A1_THIN_K) */
    const int tf32_mma = ch.kernel == CM__GEMM_KERNEL_MMA && p->in_type == CM__GEMM_F32;
    const int tf32_short = tf32_mma && !align1 && p->k < CM__SPLITK_LONG_K;
    const int mma_short = a1_thin || tf32_short;
    /* BF16 on the mma.sync tiles between CM__SPLITK_BF16_MMA_K and CM__SPLITK_LONG_K */
    const int bf16_mma_mid = ch.kernel == CM__GEMM_KERNEL_MMA && p->in_type == CM__GEMM_BF16 &&
                             p->k >= CM__SPLITK_BF16_MMA_K && p->k < CM__SPLITK_LONG_K;
    /* the K a split starts from: those lower than the rest (the Hopper kernel's, and skinny's
     * and gemv's above, higher still) */
    const int64_t k_floor = ffma_float ? CM__SPLITK_MIN_K
                            : mma_short ? CM__SPLITK_A1_THIN_K
                                        : 2 * CM__SPLITK_MIN_K;
    if (p->k < k_floor) return 1;
    int64_t parts = 1;
    /* the align1 form and TF32 on the mma.sync tiles at any K: parts of at least
     * CM__SPLITK_ALIGN1_MIN_K */
    int min_k = align1 || tf32_mma ? CM__SPLITK_ALIGN1_MIN_K : CM__SPLITK_MIN_K;
    if (a1_thin) {
        const int a1_parts = cm__gemm_a1_thin_parts(tiles, p->k, sms, per_sm);
        if (a1_parts > 1) return a1_parts;
    }
    if (ch.kernel == CM__GEMM_KERNEL_SM90) {
        if (thin_whole &&
            (cm__gemm_sm90_thin_whole(p) || cm__gemm_sm90_tf32_short(p, ch.config)))
            return 1;
        /* one block a multiprocessor; where 2 x tiles x parts <= sms its launcher runs 128 x
         * 128 tiles, twice the blocks (kernels/gemm_sm90.cu): one wave of those; tiles on more
         * than an eighth of the SMs take parts of at least CM__GEMM_SM90_LONG_K of K */
        if (4 * tiles <= sms) parts = sms / (2 * tiles);
        if (8 * tiles > sms) min_k = CM__GEMM_SM90_LONG_K;
    } else if (4 * tiles <= sms) {
        parts = (int64_t)sms * per_sm / tiles; /* about one wave of resident blocks */
        if (ffma_float) min_k = CM__SPLITK_FFMA_TINY_MIN_K;
    } else if (ffma_float || mma_short || bf16_mma_mid || p->k >= CM__SPLITK_LONG_K) {
        const int64_t slots = (int64_t)sms * per_sm;
        if (2 * tiles <= slots) parts = slots / tiles;
        else if (cm__gemm_splitk_tf32_row(p, ch, sms))
            parts = CM__SPLITK_TF32_ROW_PARTS;
        if (ffma_float)
            min_k = p->k >= CM__SPLITK_FFMA_LONG_K ? CM__SPLITK_FFMA_MIN_K
                                                   : CM__SPLITK_FFMA_TINY_MIN_K;
        if (bf16_mma_mid) min_k = CM__SPLITK_BF16_MMA_MIN_K;
    }
    const int64_t cap = cm__gemm_parts_cap(p->k, min_k);
    if (parts > cap) {
        parts = cap;
        /* capped: a last layer of blocks (tiles x parts over the multiprocessors) under 3/4
         * full runs behind the others; the most whole layers instead (H200: 127 x 1000 x 3001
         * on 32 tiles of 64 x 64, 11 parts = 2.67 layers 4-8 % under 8 parts = 1.94; 200 x 200
         * x 8192, 16 tiles in 32 parts = 3.88 layers, kept) */
        const int64_t blocks = parts * tiles, layers = blocks / sms, rest = blocks % sms;
        /* the float 32 x 64 FFMA tiles' blocks that all fit at once (per_sm of them a
         * multiprocessor) have no last layer to wait for: kept */
        const int one_wave = ffma_float && blocks <= (int64_t)sms * per_sm;
        if (ch.kernel != CM__GEMM_KERNEL_SM90 && layers >= 1 && rest != 0 &&
            4 * rest < 3 * sms && !one_wave)
            parts = layers * sms / tiles;
    }
    return parts < 2 ? 1 : (int)parts;
}

int cm__gemm_splitk_parts(const cm__gemm_args_t *p, cm__gemm_choice_t ch, int precision,
                          int sms, int forced) {
    return cm__gemm_splitk_parts_of(p, ch, precision, sms, forced, 1);
}

/* Whether choice ch runs split-K's shorter last part in the parts' own launch (the k_last of
 * kernels/gemm.h): FFMA (its PIPE forms through the edge / fallback kernels), mma.sync (whose
 * fallback is FFMA), gemv and skinny; not the Hopper kernel. */
static int cm__gemm_takes_k_last(cm__gemm_choice_t ch) {
    return ch.kernel == CM__GEMM_KERNEL_FFMA || ch.kernel == CM__GEMM_KERNEL_MMA ||
           ch.kernel == CM__GEMM_KERNEL_GEMV || ch.kernel == CM__GEMM_KERNEL_SKINNY;
}

void cm__gemm_splitk_chunks(int64_t k, int parts, int last_short, int64_t *kc, int *full,
                            int64_t *rem) {
    /* (gemm_internal.h has the rule; the remainder's launch of the Hopper form cost 18-26 % of
     * the time of TF32 127 x 1000 x 3001 on the H200 when every kernel ran it: NOTES-gemm) */
    int64_t c = last_short ? (k + parts - 1) / parts : k / parts / 32 * 32;
    if (c < 32) c = 32;
    if ((last_short ? (k + c - 1) / c : k / c) > CM__SPLITK_MAX)
        c = (k + CM__SPLITK_MAX - 1) / CM__SPLITK_MAX;
    c = (c + 31) / 32 * 32;
    *kc = c;
    *full = (int)(k / c);
    *rem = k - (int64_t)*full * c;
}

/* Run p (batch 1) split over K in `parts`; cudaErrorNotSupported with nothing queued when the
 * scratch cannot be had (the caller runs it whole). *ch: what the parts ran. */
static cudaError_t cm__gemm_splitk(cm__gemm_choice_t *ch, int precision, const cm__gemm_args_t *p,
                                   int parts, int major, int minor, int sms, cudaMemPool_t pool,
                                   cudaStream_t cs, int *ran) {
    if (pool == NULL) return cudaErrorNotSupported;
    /* 3xTF32 on the Hopper kernel: its own form (a batch of 3xTF32 products runs one matrix
     * at a time, so the generic batch of parts would run them one after another) */
    if (precision == CM_GEMM_FP32_3XTF32 && ch->kernel == CM__GEMM_KERNEL_SM90)
        return cm__gemm_sm90_3xtf32_parts(p, parts, major, pool, cs, ran);
    const int64_t e = cm__gemm_elem_bytes(p);
    const int in_batch = cm__gemm_takes_k_last(*ch);
    int64_t kc = 0, rem = 0;
    int full = 0;
    cm__gemm_splitk_chunks(p->k, parts, in_batch, &kc, &full, &rem);
    const int total = full + (rem > 0);
    *ran = total;
    const int64_t mn = (int64_t)p->m * p->n;
    void *scratch = NULL;
    if (full < 1 ||
        cm__cuda.malloc_from_pool_async(&scratch, (size_t)total * (size_t)mn * 4u, pool, cs) !=
            cudaSuccess) {
        (void)cm__cuda.get_last_error();
        return cudaErrorNotSupported;
    }
    float *const part = scratch;
    cm__gemm_args_t q = *p;
    q.k = (int)kc;
    q.alpha = 1.0f;
    q.beta = 0.0f;
    q.c = part;
    q.ldc = p->n;
    q.out_type = CM__GEMM_F32;
    q.batch = in_batch ? total : full;
    q.k_last = in_batch && rem > 0 ? (int)rem : 0;
    q.stride_a = p->a_kmajor ? kc : kc * p->lda; /* K moves along a row, or down the rows */
    q.stride_b = p->b_kmajor ? kc : kc * p->ldb;
    q.stride_c = mn;
    /* launched as always after a staging (the scratch's allocation is queued between them too) */
    q.pdl = 0;
    q.split_part = 1;
    /* the parts' product is FP32 out whatever C is: a BF16-out problem's parts are BF16 */
    const int part_prec = precision == CM_GEMM_BF16_OUT_BF16 ? CM_GEMM_BF16 : precision;
    /* the parts run the kernel chosen for the whole product, whose tiles the split was sized
     * for (a new selection for a batch of parts could move them to a class whose kernel packs
     * every part: TF32 4096 x 7 x 4096 in 4 parts ran 0.43x cuBLAS so, against 0.68x in 2) */
    cudaError_t err = cm__gemm_launch(ch, part_prec, &q, sms, pool, cs);
    if (err == cudaSuccess && rem > 0 && !in_batch) {
        cm__gemm_args_t r = q;
        r.k = (int)rem;
        r.batch = 1;
        r.a = (const unsigned char *)p->a + (int64_t)full * q.stride_a * e;
        r.b = (const unsigned char *)p->b + (int64_t)full * q.stride_b * e;
        r.c = part + (int64_t)full * mn;
        /* the remainder is a problem of its own: the selection picks its kernel */
        cm__gemm_choice_t rc = cm__gemm_select(part_prec, major, minor, sms, &r,
                                               CM_HAVE_GEMM_SM90, cm__gemm_config_override());
        err = cm__gemm_launch(&rc, part_prec, &r, sms, pool, cs);
        if (err != cudaSuccess) *ch = rc;
    }
    if (err == cudaSuccess)
        err = cm__gemm_splitk_reduce(part, total, p->m, p->n, p->alpha, p->beta, p->c, p->ldc,
                                     p->out_type == CM__GEMM_BF16, major >= 9, cs);
    /* stream-ordered: after the reduction */
    const cudaError_t ferr = cm__cuda.free_async(scratch, cs);
    if (err == cudaSuccess && ferr != cudaSuccess) err = ferr;
    return err;
}

/* ---------------------------------------------------------------------- the last wave's split
 * The tiles of a product run in waves of the resident blocks (multiprocessors x blocks a
 * multiprocessor); a last wave that fills a small part of them leaves most multiprocessors idle
 * or running one block alone at a fraction of their rate: on the H200 the FFMA tile ran 3001^3
 * (576 tiles of 128 x 128, 2.18 waves of 264) at 0.80 of its 4096^3 rate, 0.87x cuBLAS NN.
 * Such a product runs as two pieces: the first rows (or columns) of C in whole tiles that make
 * whole waves, then the rest split over K (cm__gemm_splitk) into about as many parts as fill one
 * wave, each part a short K range of the same tiles, added in order by the split's reduction
 * (deterministic). */
static long long cm__gemm_tiles(cm__gemm_choice_t ch, const cm__gemm_args_t *q, int matrices,
                                int sms, int *bm, int *bn);
static int cm__gemm_wave_on = 1; /* the tests' switch (cm__gemm_wave_split_set_for_tests) */
/* -1: CM__GEMM_WAVE_SPLIT_3XTF32 (cm__gemm_wave_3xtf32_set_for_tests) */
static int cm__gemm_wave_3x_state = -1;

void cm__gemm_wave_split_set_for_tests(int on) {
    cm__gemm_wave_on = on != 0;
}

void cm__gemm_wave_3xtf32_set_for_tests(int on) {
    cm__gemm_wave_3x_state = on < 0 ? -1 : on != 0;
}

int cm__gemm_wave_split(const cm__gemm_args_t *p, cm__gemm_choice_t ch, int precision, int sms,
                        int forced, cm__gemm_wave_t *w) {
    *w = (cm__gemm_wave_t){0, 0, 0, 0, 0};
    if (forced != 0 || p == NULL || sms < 1) return 1; /* a forced split (1: none) rules */
    /* FP32 on the FFMA tiles, or 3xTF32 on the Hopper kernel where that is on */
    const int x3 = ch.kernel == CM__GEMM_KERNEL_SM90 && ch.config == CM__GEMM_SM90_3XTF32 &&
                   precision == CM_GEMM_FP32_3XTF32;
    const int x3_on = cm__gemm_wave_3x_state >= 0 ? cm__gemm_wave_3x_state
                                                  : CM__GEMM_WAVE_SPLIT_3XTF32;
    if (x3 ? !x3_on : ch.kernel != CM__GEMM_KERNEL_FFMA || precision != CM_GEMM_FP32) return 1;
    if (p->batch > 1 || p->k_last != 0 || p->in_type != CM__GEMM_F32 ||
        p->out_type != CM__GEMM_F32 || p->k < CM__WAVE_SPLIT_MIN_K || p->m < 1 || p->n < 1)
        return 1;
    int bm = 0, bn = 0;
    if (cm__gemm_tiles(ch, p, 1, sms, &bm, &bn) <= 0 || bm < 128 || bn < 128) return 1;
    const int per_sm = cm__gemm_resident_blocks(ch, bm, bn);
    const int64_t tm = ((int64_t)p->m + bm - 1) / bm, tn = ((int64_t)p->n + bn - 1) / bn;
    const int64_t tiles = tm * tn, slots = (int64_t)sms * per_sm;
    const int64_t waves = tiles / slots, last = tiles - waves * slots;
    const double fill = x3 ? CM__WAVE_SPLIT_SM90_MAX_FILL : CM__WAVE_SPLIT_MAX_FILL;
    if (waves < 1 || waves > CM__WAVE_SPLIT_MAX_WAVES || last == 0 ||
        (double)last > fill * (double)slots)
        return 1;
    /* the first piece: the most whole tile rows (columns) that fit in those whole waves */
    const int64_t rows1 = waves * slots / tn, cols1 = waves * slots / tm;
    const int along_n = cols1 * tm > rows1 * tn;
    const int64_t t1 = along_n ? cols1 * tm : rows1 * tn;
    const int64_t lead = along_n ? cols1 * bn : rows1 * bm;
    if (t1 < 1 || lead >= (along_n ? p->n : p->m)) return 1;
    const int64_t t2 = tiles - t1;
    int64_t parts = slots / t2;
    const int64_t cap = cm__gemm_parts_cap(p->k, CM__SPLITK_MIN_K);
    if (parts > cap) parts = cap;
    if (parts < 2) return 1;
    *w = (cm__gemm_wave_t){along_n, (int)lead, (int)parts, (long long)t1, (long long)t2};
    return (int)parts;
}

int cm__gemm_wave_taken(const cm__gemm_args_t *p, cm__gemm_choice_t ch, int precision, int sms,
                        int forced, int splitk_parts, cm__gemm_wave_t *w) {
    if (splitk_parts > 1 || !cm__gemm_wave_on) {
        *w = (cm__gemm_wave_t){0, 0, 0, 0, 0};
        return 0;
    }
    return cm__gemm_wave_split(p, ch, precision, sms, forced, w) > 1;
}

void cm__gemm_wave_pieces(const cm__gemm_args_t *p, const cm__gemm_wave_t *w,
                          cm__gemm_args_t *first, cm__gemm_args_t *rest) {
    *first = *p;
    *rest = *p;
    /* float operands and C (cm__gemm_wave_split: FP32 and 3xTF32 only); the kernels' C is m
     * rows of n (row i at c + i ldc), A's row i at a + i lda (along K) or a + i, B's column j
     * at b + j ldb (along K) or b + j */
    const int64_t at = w->lead;
    if (w->along_n) {
        first->n = w->lead;
        rest->n = p->n - w->lead;
        rest->b = (const float *)p->b + (p->b_kmajor ? at * p->ldb : at);
        rest->c = (float *)p->c + at;
    } else {
        first->m = w->lead;
        rest->m = p->m - w->lead;
        rest->a = (const float *)p->a + (p->a_kmajor ? at * p->lda : at);
        rest->c = (float *)p->c + at * p->ldc;
    }
}

/* Run p as cm__gemm_wave_split's two pieces (w): the first on *ch, the second split over K
 * (or whole, where split-K's scratch cannot be had). *parts: the second piece's parts. */
static cudaError_t cm__gemm_wave_run(cm__gemm_choice_t *ch, int precision,
                                     const cm__gemm_args_t *p, const cm__gemm_wave_t *w,
                                     int major, int minor, int sms, cudaMemPool_t pool,
                                     cudaStream_t cs, int *parts) {
    cm__gemm_args_t first, rest;
    cm__gemm_wave_pieces(p, w, &first, &rest);
    rest.pdl = 0; /* queued after the first piece, not after a staging */
    *parts = 1;
    cudaError_t err = cm__gemm_launch(ch, precision, &first, sms, pool, cs);
    if (err != cudaSuccess) return err;
    cm__gemm_choice_t rc = *ch;
    int split = 1;
    err = cm__gemm_splitk(&rc, precision, &rest, w->parts, major, minor, sms, pool, cs, &split);
    if (err == cudaErrorNotSupported) /* nothing queued: the rest runs whole */
        err = cm__gemm_launch(&rc, precision, &rest, sms, pool, cs);
    else
        *parts = split;
    if (err != cudaSuccess) *ch = rc;
    /* the first piece is queued: the caller must not run the whole product again */
    return err == cudaErrorNotSupported ? cudaErrorUnknown : err;
}

/* cm_gemm (batch 1) and cm_gemm_strided_batched: every matrix of the batch checked before
 * anything is queued, then one product per matrix on the stream with one kernel choice. */
/* The kernels' form of matrices b0 .. b0 + nb of a checked call (A, B, C as checked): the
 * normalised operands (a column-major C swaps A and B, and their batch strides with them) */
static void cm__gemm_piece(cm__gemm_args_t *p, int layout, int op_a, int op_b, size_t m,
                           size_t n, size_t k, float alpha, float beta, const cm__gemm_mat_t *A,
                           const cm__gemm_mat_t *B, const cm__gemm_mat_t *C, size_t in_elem,
                           size_t out_elem, int row, size_t stride_a, size_t stride_b,
                           size_t stride_c, size_t b0, size_t nb) {
    /* (an empty operand, K = 0, has no address: no NULL + offset) */
    cm__gemm_normalize(layout, op_a, op_b, (int)m, (int)n, (int)k,
                       A->ptr ? A->ptr + b0 * stride_a * in_elem : NULL, (int64_t)A->ld,
                       B->ptr ? B->ptr + b0 * stride_b * in_elem : NULL, (int64_t)B->ld,
                       C->ptr + b0 * stride_c * out_elem, (int64_t)C->ld, p);
    p->alpha = k == 0 ? 0.0f : alpha; /* K = 0: C = beta C, even for an infinite alpha */
    p->beta = beta;
    p->in_type = in_elem == 2 ? CM__GEMM_BF16 : CM__GEMM_F32;
    p->out_type = out_elem == 2 ? CM__GEMM_BF16 : CM__GEMM_F32;
    p->batch = (int)nb;
    p->stride_a = (int64_t)(row ? stride_a : stride_b);
    p->stride_b = (int64_t)(row ? stride_b : stride_a);
    p->stride_c = (int64_t)stride_c;
}

/* What the calling thread's last cm__gemm_impl piece ran (cm__gemm_last_ran_for_tests) */
static _Thread_local cm__gemm_ran_t cm__gemm_ran;

void cm__gemm_last_ran_for_tests(cm__gemm_ran_t *out) { *out = cm__gemm_ran; }

/* ====================================================================== explanation
 * cm_gemm_explain: the decisions cm__gemm_impl makes for one piece of the batch (the same
 * calls in the same order: the selection, the realignment's test and its staged selection,
 * split-K's parts, the Hopper pre-pass's operands), written for the caller in the caller's
 * names (a column-major problem swaps A and B in cm__gemm_args_t). */

/* The caller's name of the normalised operand a (norm_a) or b */
static const char *cm__gemm_user_op(int row, int norm_a) {
    return (norm_a != 0) == (row != 0) ? "A" : "B";
}

/* Why the normalised operand a (norm_a) or b lacks what the tensor-core kernels read as it
 * is: a 16-byte base, rows of whole 16 bytes, a batch stride of whole 16 bytes. */
static void cm__gemm_explain_rows(cm__text_t *t, const cm__gemm_args_t *p, int row, int norm_a) {
    const char *op = cm__gemm_user_op(row, norm_a);
    const int is_a = op[0] == 'A';
    const void *x = norm_a ? p->a : p->b;
    const int64_t ld = norm_a ? p->lda : p->ldb, stride = norm_a ? p->stride_a : p->stride_b;
    const int64_t e = cm__gemm_elem_bytes(p), per16 = 16 / e;
    const char *sep = "";
    if ((uintptr_t)x % 16u != 0) {
        cm__text_printf(t, "%s starts %u bytes past a 16-byte boundary (make its byte offset a "
                        "multiple of 16)", op, (unsigned)((uintptr_t)x % 16u));
        sep = ", ";
    }
    if (ld * e % 16 != 0) {
        cm__text_printf(t, "%s%s = %lld is not a multiple of %lld elements (16 bytes; %lld "
                        "would be)", sep, is_a ? "lda" : "ldb", (long long)ld, (long long)per16,
                        (long long)((ld + per16 - 1) / per16 * per16));
        sep = ", ";
    }
    if (p->batch > 1 && stride * e % 16 != 0)
        cm__text_printf(t, "%s%s = %lld is not a multiple of %lld elements", sep,
                        is_a ? "stride_a" : "stride_b", (long long)stride, (long long)per16);
}

/* Why the operands marked in pa (the kernels' a) and pb lack 16-byte rows, the caller's A
 * first (the kernels' a is the caller's B in column-major storage), "; " between them */
/* Flags of the kernels' operands a (fa) and b (fb) in the caller's order: out[0] for the
 * caller's A (the kernels' a is the caller's B in column-major storage) */
static void cm__gemm_user_order(int row, int fa, int fb, int out[2]) {
    out[0] = row ? fa : fb;
    out[1] = row ? fb : fa;
}

static void cm__gemm_explain_both_rows(cm__text_t *t, const cm__gemm_args_t *p, int row, int pa,
                                       int pb) {
    int first[2]; /* the caller's A, B */
    cm__gemm_user_order(row, pa, pb, first);
    for (int u = 0; u < 2; ++u) {
        if (!first[u]) continue;
        if (u == 1 && first[0]) cm__text_printf(t, "; ");
        cm__gemm_explain_rows(t, p, row, (u == 0) == (row != 0));
    }
}

/* The FFMA tiles' C without rows of 4-element vectors (cm__gemm_c_vec4): why, and how they
 * write it (staged: through shared memory, CM__FFMA_ROWS_OUT_BELOW); nothing where C has such
 * rows */
static void cm__gemm_explain_c_rows(cm__text_t *t, const cm__gemm_args_t *p, int staged) {
    if (cm__gemm_c_vec4(p)) return;
    const uint64_t vec = p->out_type == CM__GEMM_BF16 ? 8u : 16u;
    const unsigned past = (unsigned)((uintptr_t)p->c % vec);
    const int off_stride = p->batch > 1 && p->stride_c % 4 != 0;
    cm__text_printf(t, "; C's rows are not on %u-byte vectors (", (unsigned)vec);
    const char *sep = "";
    if (past != 0) {
        cm__text_printf(t, "C starts %u bytes past a %u-byte boundary", past, (unsigned)vec);
        sep = ", ";
    }
    if (p->ldc % 4 != 0) {
        cm__text_printf(t, "%sldc = %lld is not a multiple of 4 elements; %lld would be", sep,
                        (long long)p->ldc, (long long)((p->ldc + 3) / 4 * 4));
        sep = ", ";
    }
    if (off_stride)
        cm__text_printf(t, "%sstride_c = %lld is not a multiple of 4 elements", sep,
                        (long long)p->stride_c);
    cm__text_printf(t, "), so the tiles write C element by element%s; with such rows they "
                    "would write 4 elements at a time",
                    staged ? ", staged through shared memory so that a warp writes consecutive "
                             "elements of a row"
                           : "");
}

/* One kernel choice in words */
static void cm__gemm_explain_kernel(cm__text_t *t, cm__gemm_choice_t c) {
    const char *name = cm__gemm_choice_name(c);
    switch (c.kernel) {
    case CM__GEMM_KERNEL_GEMV:
        cm__text_printf(t, "%s: the matrix-vector kernel (m or n is 1; bound by reading the "
                        "matrix)", name);
        break;
    case CM__GEMM_KERNEL_SKINNY:
        cm__text_printf(t, "%s: the skinny kernel (a side of C of at most %d: each block "
                        "runs whole rows of the long operand)", name, CM__GEMM_SKINNY_MAX);
        break;
    case CM__GEMM_KERNEL_MMA:
        cm__text_printf(t, "%s: tensor-core tiles (mma.sync)", name);
        break;
    case CM__GEMM_KERNEL_SM90:
        if (c.config == CM__GEMM_SM90_3XTF32)
            cm__text_printf(t, "%s: FP32 accuracy from three TF32 products on Hopper's wgmma "
                            "tiles; A and B are first split into TF32 parts in scratch", name);
        else
            cm__text_printf(t, "%s: Hopper's wgmma tiles (tensor-memory copies)", name);
        break;
    default:
        cm__text_printf(t, "%s: FP32 FMA tiles on the CUDA cores (no tensor cores)", name);
        break;
    }
}

/* The Hopper pre-pass of "sm90+pack" / "sm90+bt" / "sm90+at" (cm__gemm_sm90_packed's
 * operands): which operands it stages and why */
static void cm__gemm_explain_sm90_pack(cm__text_t *t, const cm__gemm_args_t *p,
                                       cm__gemm_choice_t c, int row) {
    int pack[2] = {0, 0};
    const int form = cm__gemm_sm90_operands(p, c.config, &pack[0], &pack[1]);
    for (int side = 0; side < 2; ++side) {
        const int norm_a = side == 0;
        const int kmajor = norm_a ? p->a_kmajor : p->b_kmajor;
        const int al = norm_a ? cm__operand_aligned16(p, p->a, p->lda, p->stride_a)
                              : cm__operand_aligned16(p, p->b, p->ldb, p->stride_b);
        if (!norm_a && form == CM__SM90_FORM_BT) {
            cm__text_printf(t, "; %s is read as it is by the transposed-B form",
                            cm__gemm_user_op(row, 0));
            continue;
        }
        if ((norm_a && form == CM__SM90_FORM_AT) || (!norm_a && form == CM__SM90_FORM_AT_CC)) {
            cm__text_printf(t, "; %s is read as it is by the register-A form%s",
                            cm__gemm_user_op(row, norm_a),
                            norm_a ? ""
                                   : " (the product runs transposed, the operands' roles "
                                     "swapped)");
            continue;
        }
        if (!pack[side]) continue;
        if (kmajor && al) {
            const int64_t e = cm__gemm_elem_bytes(p);
            cm__text_printf(t, "; first %s is copied into K-contiguous scratch with rows of "
                            "whole 128-byte lines (its rows of %lld bytes are an odd number of "
                            "16 bytes, so half the kernel's 128-byte tensor copies would start "
                            "in the middle of a 32-byte sector; C is large enough for the copy "
                            "to pay)",
                            cm__gemm_user_op(row, norm_a),
                            (long long)((norm_a ? p->lda : p->ldb) * e));
            continue;
        }
        cm__text_printf(t,
                        "; first %s is %s into K-contiguous scratch with rows of %s (the "
                        "kernel reads K-contiguous operands with 16-byte rows only",
                        cm__gemm_user_op(row, norm_a), kmajor ? "copied" : "transposed",
                        cm__gemm_ldk_text(p));
        if (!kmajor)
            cm__text_printf(t, "; %s is stored with its other dimension contiguous",
                            cm__gemm_user_op(row, norm_a));
        if (!kmajor && al && !norm_a && p->in_type == CM__GEMM_BF16 &&
            cm__gemm_stage32(p, p->ldb))
            cm__text_printf(t, "; the transposed-B form could read it as it is, but its rows "
                            "of %lld bytes are an odd number of 16 bytes, so half its 128-byte "
                            "tensor copies would start in the middle of a 32-byte sector; C is "
                            "large enough for the transpose to pay",
                            (long long)(p->ldb * 2));
        if (!al) {
            cm__text_printf(t, "; ");
            cm__gemm_explain_rows(t, p, row, norm_a);
        }
        cm__text_printf(t, ")");
    }
}

/* How the tile kernels cover C: count tiles of bm x bn over `matrices` matrices (the batch, or
 * split-K's parts); the Hopper kernel's tile as its launcher picks it (128 x 128 where 128 x
 * 256 tiles would fill at most half of the multiprocessors; 3xTF32: 128 x 192). 0 for the
 * kernels without tiles of C (gemv, skinny). */
static long long cm__gemm_tiles(cm__gemm_choice_t ch, const cm__gemm_args_t *q, int matrices,
                                int sms, int *bm, int *bn) {
    *bm = 0;
    *bn = 0;
    if (ch.kernel == CM__GEMM_KERNEL_FFMA) {
        cm__gemm_ffma_tile(ch.config, bm, bn);
    } else if (ch.kernel == CM__GEMM_KERNEL_MMA) {
        cm__gemm_mma_tile(ch.config, bm, bn);
    } else if (ch.kernel == CM__GEMM_KERNEL_SM90) {
        /* "sm90+at" reading B as it is runs C^T: its tiles are 128 rows of C^T (columns of C) */
        const int swap = ch.config == CM__GEMM_SM90_AT &&
                         cm__gemm_sm90_operands(q, ch.config, NULL, NULL) == CM__SM90_FORM_AT_CC;
        const long long wide =
            (long long)cm__gemm_sm90_wide_tiles(q, ch.config) * (matrices > 1 ? matrices : 1);
        *bm = 128;
        *bn = ch.config == CM__GEMM_SM90_3XTF32 ? 192 : 2 * wide <= (long long)sms ? 128 : 256;
        if (swap) {
            const int tmp = *bm;
            *bm = *bn;
            *bn = tmp;
        }
    }
    if (*bm <= 0 || *bn <= 0) return 0;
    return (long long)((q->m + *bm - 1) / *bm) * ((q->n + *bn - 1) / *bn) *
           (matrices > 1 ? matrices : 1);
}

/* After the kernel: mma.sync tiles ch on operands without 16-byte rows run their TF32 align1
 * form (cm__gemm_realign_mode's choice, or forced): how it reads them; nothing otherwise */
static void cm__gemm_explain_align1(cm__text_t *t, const cm__gemm_args_t *p,
                                    cm__gemm_choice_t ch, int row) {
    if (ch.kernel != CM__GEMM_KERNEL_MMA || cm__gemm_mma_aligned(p)) return;
    cm__text_printf(t, "; A and B are read as they are by the tiles' align1 form, every element "
                    "a 4-byte copy into shared memory, since the 16-byte copies need 16-byte "
                    "rows (");
    cm__gemm_explain_both_rows(t, p, row, cm__gemm_misaligned_a(p), cm__gemm_misaligned_b(p));
    cm__text_printf(t, "); no copy to such rows first");
}

/* The precision a product runs as once its kernel is chosen (ch, of precision's selection):
 * CM_GEMM_FP32_3XTF32 on any kernel but its Hopper one ("sm90+3xtf32") is CM_GEMM_FP32's work
 * exactly (cm__gemm_select gives it FP32's choice: FP32 arithmetic throughout, FP32's
 * accuracy), so it runs as CM_GEMM_FP32 would, K split and last wave included, rather than
 * whole over a few blocks (a split of K never takes the Hopper 3xTF32 kernel's products:
 * cm__gemm_splitk_parts). Any other precision: itself. */
static int cm__gemm_run_precision(int precision, cm__gemm_choice_t ch) {
    return precision == CM_GEMM_FP32_3XTF32 && ch.kernel != CM__GEMM_KERNEL_SM90 ? CM_GEMM_FP32
                                                                                  : precision;
}

/* The explanation of one piece p of a call (device facts major, minor, sms; have_pool: C's
 * device object has a memory pool, where every copy, split and 3xTF32 scratch comes from) */
static void cm__gemm_explain_piece(cm__text_t *t, int user_precision, int major, int minor,
                                   int sms, const cm__gemm_args_t *p, int row, int have_pool) {
    const char *override = cm__gemm_config_override();
    cm__gemm_choice_t ch = cm__gemm_select(user_precision, major, minor, sms, p,
                                           CM_HAVE_GEMM_SM90, override);
    const int precision = cm__gemm_run_precision(user_precision, ch); /* cm__gemm_impl's */
    const int forced = override != NULL && override[0] != '\0';
    if (p->k == 0) {
        cm__gemm_explain_kernel(t, ch);
        cm__text_printf(t, "; K is 0: C = beta C, no product");
        return;
    }
    /* the realignment (cm__gemm_impl's order); CM__REALIGN_ALIGN1 sets ch to the tiles */
    const int mode = cm__gemm_realign_on()
                         ? cm__gemm_realign_mode(precision, major, minor, sms, p, ch,
                                                 CM_HAVE_GEMM_SM90, override, &ch)
                         : CM__REALIGN_NONE;
    if (!have_pool) {
        /* cm__gemm_impl: no copy, no split; the Hopper pre-passes refuse and the launcher falls
         * back (cm__gemm_launch); the TF32 align1 form needs no scratch */
        cm__gemm_explain_kernel(t, ch);
        cm__gemm_explain_align1(t, p, ch, row);
        if (forced) cm__text_printf(t, " (forced by CUDAMODEL_GEMM_CONFIG=%s)", override);
        cm__text_printf(t, "; this device object has no memory pool (scratch comes from it), so "
                        "no operand is copied first and K is not split%s",
                        ch.kernel != CM__GEMM_KERNEL_SM90 || ch.config == 0 ? ""
                        : ch.config == CM__GEMM_SM90_3XTF32
                            ? ", and this kernel's split of the inputs needs it: the FP32 "
                              "kernels run instead"
                            : ", and where this kernel needs a copy it falls back to mma.sync "
                              "tiles (FFMA without 16-byte rows)");
        return;
    }
    cm__gemm_args_t q = *p;
    int realigned = 0, too_big = 0;
    const int pa = cm__gemm_misaligned_a(p), pb = cm__gemm_misaligned_b(p);
    int sa = 0, sb = 0; /* the FP32 pitched copy's operands */
    if (!cm__gemm_realign_on() || mode == CM__REALIGN_ALIGN1) {
        /* no copy of either kind */
    } else if (mode == CM__REALIGN_COPY) {
        size_t bytes_a = 0, bytes_b = 0;
        cm__gemm_stage_bytes(p, pa, pb, &bytes_a, &bytes_b);
        too_big = bytes_a + bytes_b > CM__GEMM_REALIGN_MAX_BYTES;
        if (!too_big) {
            const void *at = (const void *)(uintptr_t)256; /* where the scratch would be */
            q = cm__gemm_staged_form(p, pa, pb, at, at);
            ch = cm__gemm_select(precision, major, minor, sms, &q, CM_HAVE_GEMM_SM90, NULL);
            realigned = 1;
            char bytes[32];
            cm__format_bytes(bytes_a + bytes_b, bytes, sizeof bytes);
            cm__gemm_explain_kernel(t, ch);
            /* a K-contiguous operand is copied row by row, another one transposed; the
             * caller's A first */
            int staged[2], kmaj[2];
            cm__gemm_user_order(row, pa, pb, staged);
            cm__gemm_user_order(row, p->a_kmajor, p->b_kmajor, kmaj);
            cm__text_printf(t, "; first ");
            if (staged[0] && staged[1] && kmaj[0] == kmaj[1])
                cm__text_printf(t, "A and B are %s", kmaj[0] ? "copied" : "transposed");
            else
                for (int u = 0; u < 2; ++u)
                    if (staged[u])
                        cm__text_printf(t, "%s%s is %s", u == 1 && staged[0] ? " and " : "",
                                        u == 0 ? "A" : "B", kmaj[u] ? "copied" : "transposed");
            cm__text_printf(t,
                            " into %s of scratch from the device's pool, K-contiguous with "
                            "rows of %s, since the tensor-core kernels read only rows of whole "
                            "16 bytes (",
                            bytes, cm__gemm_ldk_text(p));
            cm__gemm_explain_both_rows(t, p, row, pa, pb);
            cm__text_printf(t, "); without the copy: %s",
                            cm__gemm_choice_name(cm__gemm_select(precision, major, minor, sms,
                                                                 p, CM_HAVE_GEMM_SM90,
                                                                 override)));
        }
    } else if (cm__gemm_pitch_wanted(precision, major, p, ch, override, &sa, &sb)) {
        size_t bytes_a = 0, bytes_b = 0;
        cm__gemm_pitch_bytes(p, sa, sb, &bytes_a, &bytes_b);
        const void *at = (const void *)(uintptr_t)256; /* where the scratch would be */
        q = cm__gemm_pitched_form(p, sa, sb, at, at);
        realigned = 1;
        char bytes[32];
        cm__format_bytes(bytes_a + bytes_b, bytes, sizeof bytes);
        cm__gemm_explain_kernel(t, ch);
        int staged[2];
        cm__gemm_user_order(row, sa, sb, staged);
        cm__text_printf(t, "; first %s copied as %s into %s of scratch from the device's pool "
                        "with rows of whole 16 bytes, since this tile copies the operands "
                        "along M or N 16 bytes at a time (",
                        staged[0] && staged[1] ? "A and B are"
                        : staged[0]            ? "A is"
                                               : "B is",
                        staged[0] && staged[1] ? "they are" : "it is", bytes);
        cm__gemm_explain_both_rows(t, p, row, sa, sb);
        cm__text_printf(t, "); without the copy: its %s",
                        cm__gemm_ffma_runs(p, ch.config) == CM__FFMA_RUNS_EDGE
                            ? "edge kernel, every element a 4-byte copy"
                            : "fallback's kernel without the pipeline");
    }
    if (!realigned) {
        cm__gemm_explain_kernel(t, ch);
        cm__gemm_explain_align1(t, p, ch, row);
        if (forced) cm__text_printf(t, " (forced by CUDAMODEL_GEMM_CONFIG=%s)", override);
        const int tc = precision == CM_GEMM_TF32 || precision == CM_GEMM_BF16 ||
                       precision == CM_GEMM_BF16_OUT_BF16;
        if (tc && !forced && ch.kernel == CM__GEMM_KERNEL_FFMA && major >= 8 && (pa || pb)) {
            cm__text_printf(t, "; the tensor-core kernels read only 16-byte rows (");
            cm__gemm_explain_both_rows(t, p, row, pa, pb);
            cm__text_printf(t, !cm__gemm_realign_on()
                                   ? ") and the copy to such rows is switched off"
                               : too_big ? ") and a copy to such rows would need more than "
                                           "the 1 GiB of scratch the library takes for it"
                                         : ") and this product is too small for a copy to pay");
        }
    }
    if (ch.kernel == CM__GEMM_KERNEL_SM90 &&
        (ch.config == CM__GEMM_SM90_PACK || ch.config == CM__GEMM_SM90_BT ||
         ch.config == CM__GEMM_SM90_AT))
        cm__gemm_explain_sm90_pack(t, &q, ch, row);
    const int split_forced = cm__gemm_splitk_override();
    const int parts = cm__gemm_splitk_parts(&q, ch, precision, sms, split_forced);
    int64_t kc = 0, rem = 0;
    int full = 0;
    if (parts > 1)
        cm__gemm_splitk_chunks(q.k, parts, cm__gemm_takes_k_last(ch), &kc, &full, &rem);
    if (parts > 1 && full >= 1) { /* (cm__gemm_splitk runs it whole without a full part) */
        const int total = full + (rem > 0);
        const int row_per_sm = cm__gemm_splitk_tf32_row(&q, ch, sms);
        cm__text_printf(t, "; K = %d is split into %d parts of %lld", q.k, total,
                        (long long)kc);
        if (rem > 0) cm__text_printf(t, " (the last of %lld)", (long long)rem);
        if (split_forced > 1)
            cm__text_printf(t, " as CUDAMODEL_GEMM_SPLITK=%d asks", split_forced);
        else if (row_per_sm > 0)
            cm__text_printf(t, " since C's one row of tiles would give most of the %d "
                            "multiprocessors one block where each holds %d",
                            sms, row_per_sm);
        else
            cm__text_printf(t, " since C alone would leave most of the %d multiprocessors idle",
                            sms);
        cm__text_printf(t, "; each part goes to float scratch, then one kernel adds the parts "
                        "in order (the same bits every call)");
    }
    cm__gemm_wave_t wv;
    if (cm__gemm_wave_taken(&q, ch, precision, sms, split_forced, parts, &wv)) {
        /* (the Hopper kernel: one block a multiprocessor) */
        const int per_sm =
            ch.kernel == CM__GEMM_KERNEL_SM90 ? 1 : cm__gemm_ffma_blocks_per_sm(ch.config);
        cm__text_printf(t, "; C's leading %d %s (%lld tiles) run as whole waves of the %d "
                        "resident blocks (%d a multiprocessor), its last %lld tiles split over K "
                        "into %d parts, since their wave alone would leave most multiprocessors "
                        "idle; the parts go to float scratch, then one kernel adds them in order",
                        wv.lead, wv.along_n == row ? "columns" : "rows", wv.tiles1,
                        per_sm * sms, per_sm, wv.tiles2, wv.parts);
    }
    const int matrices = parts > 1 && full >= 1 ? full + (rem > 0) : q.batch;
    int bm = 0, bn = 0;
    const long long tiles = cm__gemm_tiles(ch, &q, matrices, sms, &bm, &bn);
    if (tiles > 0) {
        cm__text_printf(t, "; %lld tiles of %d x %d over ", tiles, bm, bn);
        if (matrices <= 1) cm__text_printf(t, "C");
        else if (parts > 1 && full >= 1) cm__text_printf(t, "the %d parts of C", matrices);
        else cm__text_printf(t, "the %d matrices of C", matrices);
        cm__text_printf(t, ", %.2f a multiprocessor", (double)tiles / (double)(sms > 0 ? sms : 1));
    }
    if (ch.kernel == CM__GEMM_KERNEL_FFMA && major == 9 && matrices <= 1) {
        /* the pipelined FFMA tile's whole-tile kernel on a problem that is not whole tiles */
        int moved = 0, k_tail = 0, tail_at = CM__FFMA_KTAIL_NONE;
        cm__gemm_ffma_whole_form(&q, ch.config, &moved, &k_tail, &tail_at);
        if (moved)
            cm__text_printf(t, "; the last tiles past the edge of C move back inside it (the "
                            "rows of the tile before computed again, stored once)");
        if (k_tail > 0 && tail_at == CM__FFMA_KTAIL_APART)
            cm__text_printf(t, "; K's last %d run first on a kernel of their own, the whole K "
                            "tiles then adding to C (two passes over C more)", k_tail);
        else if (k_tail > 0)
            cm__text_printf(t, "; K's last %d run in the kernel %s, each thread reading its "
                            "rows and columns for them from global memory", k_tail,
                            tail_at == CM__FFMA_KTAIL_BEFORE ? "before its pipeline"
                                                             : "after its main loop");
    }
    /* C as the FFMA tiles write it (split-K's parts go to scratch: the sum writes C) */
    if (ch.kernel == CM__GEMM_KERNEL_FFMA && !(parts > 1 && full >= 1))
        cm__gemm_explain_c_rows(t, &q,
                                (major == 9 || CM_GEMM_TUNING) && bm > 0 && bn > 0 &&
                                    bm * bn < CM__FFMA_ROWS_OUT_BELOW);
    if (user_precision == CM_GEMM_FP32 && !forced) {
        const cm__gemm_choice_t x3 = cm__gemm_select(CM_GEMM_FP32_3XTF32, major, minor, sms, p,
                                                     CM_HAVE_GEMM_SM90, NULL);
        if (x3.kernel == CM__GEMM_KERNEL_SM90)
            cm__text_printf(t, "; CM_GEMM_FP32_3XTF32 would run this with FP32's accuracy on "
                            "tensor cores (%s)", cm__gemm_choice_name(x3));
    }
    /* 3xTF32 run as FP32 (cm__gemm_run_precision): why not on its tensor-core path, in
     * cm__gemm_select's order */
    if (user_precision == CM_GEMM_FP32_3XTF32 && precision == CM_GEMM_FP32) {
        cm__text_printf(t, "; CM_GEMM_FP32_3XTF32 runs this on the FP32 kernels (FP32's "
                        "accuracy, as it promises) since ");
        if (cm__gemm_arch_class(major, minor) != CM__GEMM_ARCH_SM90)
            cm__text_printf(t, "its tensor-core path needs compute capability 9.0");
        else if (!CM_HAVE_GEMM_SM90)
            cm__text_printf(t, "this build of the library has no Hopper kernel (CUDA "
                            "architecture 90a)");
        else if (forced)
            cm__text_printf(t, "CUDAMODEL_GEMM_CONFIG=%s names another kernel", override);
        else if (p->k < CM__GEMM_3X_MIN_K)
            cm__text_printf(t, "K = %d is under %d, where FP32's own rounding error is below "
                            "the error floor of its tensor-core path", p->k, CM__GEMM_3X_MIN_K);
        else if (cm__gemm_c_short(p) <= CM__GEMM_3X_NARROW_SIDE)
            cm__text_printf(t, "C's short side (%d) is at most %d, which its tensor-core path's "
                            "128 x 192 tiles would cover one tile deep, partly idle; the FP32 "
                            "tiles fit it", cm__gemm_c_short(p), CM__GEMM_3X_NARROW_SIDE);
        else
            cm__text_printf(t, "the product is too small to fill the GPU with its tensor-core "
                            "path's 128 x 192 tiles");
    }
}

static cm_status_t cm__gemm_impl(cm_stream_t *stream, cm_gemm_precision_t precision,
                                 cm_gemm_layout_t layout, cm_gemm_op_t op_a, cm_gemm_op_t op_b,
                                 size_t m, size_t n, size_t k, float alpha, const cm_buffer_t *a,
                                 size_t a_offset, size_t lda, size_t stride_a,
                                 const cm_buffer_t *b, size_t b_offset, size_t ldb,
                                 size_t stride_b, float beta, cm_buffer_t *c, size_t c_offset,
                                 size_t ldc, size_t stride_c, size_t batch, const char *func,
                                 cm__text_t *explain) {
    CM_TRY(cm__gemm_enums((int)precision, (int)layout, (int)op_a, (int)op_b, func));
    CM_TRY(cm__gemm_dims(m, n, k, func));
    const int row = layout == CM_GEMM_ROW_MAJOR;
    const size_t in_elem = cm__gemm_family((int)precision) == CM__GEMM_FAM_BF16 ? 2u : 4u;
    const size_t out_elem = precision == CM_GEMM_BF16_OUT_BF16 ? 2u : 4u;
    /* offsets come in bytes (the public convention) */
    CM_TRY(cm__elem_offset(a_offset, in_elem, "a_offset", func, &a_offset));
    CM_TRY(cm__elem_offset(b_offset, in_elem, "b_offset", func, &b_offset));
    CM_TRY(cm__elem_offset(c_offset, out_elem, "c_offset", func, &c_offset));
    char ta[32], tb[32];
    snprintf(ta, sizeof ta, "op_a = %s", op_a == CM_GEMM_OP_N ? "N" : "T");
    snprintf(tb, sizeof tb, "op_b = %s", op_b == CM_GEMM_OP_N ? "N" : "T");
    cm__gemm_mat_t A = {"A", "lda", a, NULL, a_offset, lda, op_a == CM_GEMM_OP_N ? m : k,
                        op_a == CM_GEMM_OP_N ? k : m, in_elem, 0, NULL, -1, stride_a, batch, 0};
    cm__gemm_mat_t B = {"B", "ldb", b, NULL, b_offset, ldb, op_b == CM_GEMM_OP_N ? k : n,
                        op_b == CM_GEMM_OP_N ? n : k, in_elem, 0, NULL, -1, stride_b, batch, 0};
    cm__gemm_mat_t C = {"C", "ldc", c, NULL, c_offset, ldc, m, n, out_elem, 0, NULL, -1,
                        stride_c, batch, 0};
    CM_TRY(cm__gemm_mat_check(&A, row, ta, func));
    CM_TRY(cm__gemm_mat_check(&B, row, tb, func));
    CM_TRY(cm__gemm_mat_check(&C, row, "the result", func));
    if (batch > 1 && C.one > 0 && stride_c < C.one) {
        char hint[CM_ERROR_HINT_MAX];
        snprintf(hint, sizeof hint, "pass stride_c >= %zu (the C matrices packed one after "
                 "another), or write the batch in several calls", C.one);
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, C.ordinal, __FILE__, __LINE__, func, hint,
                        "stride_c = %zu is less than the %zu elements one %zu x %zu C spans with "
                        "ldc = %zu: the batch's C matrices would overlap; nothing was queued",
                        stride_c, C.one, m, n, ldc);
    }
    const cm__gemm_mat_t *in[2] = {&A, &B};
    for (int i = 0; i < 2; ++i) {
        if (in[i]->ordinal != C.ordinal) {
            char hint[CM_ERROR_HINT_MAX];
            snprintf(hint, sizeof hint, "every matrix must be memory of one GPU; copy %s to "
                     "device %d first (cm_buffer_copy())", in[i]->name, C.ordinal);
            return cm__fail(CM_ERROR_INVALID_ARGUMENT, C.ordinal, __FILE__, __LINE__, func, hint,
                            "%s is on device %d but C is on device %d", in[i]->name,
                            in[i]->ordinal, C.ordinal);
        }
        if (cm__gemm_overlap(&C, in[i])) {
            char hint[CM_ERROR_HINT_MAX];
            snprintf(hint, sizeof hint, "write C to memory apart from %s (GEMM cannot work in "
                     "place: every C element reads a whole row / column of %s)", in[i]->name,
                     in[i]->name);
            return cm__fail(CM_ERROR_INVALID_ARGUMENT, C.ordinal, __FILE__, __LINE__, func, hint,
                            "C (elements %zu .. %zu of its buffer) overlaps %s (elements %zu .. "
                            "%zu of the same buffer, in C's element size: %zu .. %zu); nothing "
                            "was queued",
                            C.offset, C.offset + C.extent, in[i]->name, in[i]->offset,
                            in[i]->offset + in[i]->extent,
                            in[i]->offset * in[i]->elem / C.elem,
                            (in[i]->offset + in[i]->extent) * in[i]->elem / C.elem);
        }
    }
    const int ordinal = C.ordinal;
    cudaStream_t cs = 0;
    if (explain == NULL) CM_TRY(cm__stream_for_device(stream, ordinal, "matrices", func, &cs));
    if (m == 0 || n == 0 || batch == 0) {
        if (explain != NULL)
            cm__text_printf(explain, "nothing to run: %s is 0, so the call returns at once",
                            m == 0 ? "m" : n == 0 ? "n" : "batch");
        return CM_OK;
    }
    CM_TRY(cm__context_guard(ordinal));
    int major = 0, minor = 0, sms = 1;
    CM_TRY(cm__gemm_device_facts(ordinal, &major, &minor, &sms, func));
    if (explain != NULL) {
        /* the first piece of the batch: every piece has the same shape and strides */
        cm__gemm_args_t p;
        cm__gemm_piece(&p, (int)layout, (int)op_a, (int)op_b, m, n, k, alpha, beta, &A, &B, &C,
                       in_elem, out_elem, row, stride_a, stride_b, stride_c, 0, batch);
        cm__gemm_explain_piece(explain, (int)precision, major, minor, sms, &p, row,
                               C.obj->a.dev->pool != NULL);
        if (batch > (size_t)INT32_MAX)
            cm__text_printf(explain, "; the batch runs in pieces of 2^31 - 1 matrices");
        cm__text_printf(explain, " [compute capability %d.%d, %d multiprocessors]", major,
                        minor, sms);
        return CM_OK;
    }

    cm__gemm_args_t p;
    cm__scope_t sc;
    CM_TRY(cm__enter(ordinal, 1, &sc));
    CM__NVTX_PUSH("cm_gemm");
    cudaError_t err = cudaSuccess;
    cm__gemm_choice_t ch = {CM__GEMM_KERNEL_FFMA, 0};
    /* the whole batch in one launcher call (each kernel has a batch grid dimension), in pieces
     * of at most INT_MAX matrices; the batch strides follow the normalised operands (a
     * column-major C swaps A and B) */
    const size_t piece = (size_t)INT32_MAX;
    for (size_t b0 = 0; b0 < batch && err == cudaSuccess; b0 += piece) {
        const size_t nb = batch - b0 < piece ? batch - b0 : piece;
        cm__gemm_piece(&p, (int)layout, (int)op_a, (int)op_b, m, n, k, alpha, beta, &A, &B, &C,
                       in_elem, out_elem, row, stride_a, stride_b, stride_c, b0, nb);
        ch = cm__gemm_select((int)precision, major, minor, sms, &p, CM_HAVE_GEMM_SM90,
                             cm__gemm_config_override());
        const int prec = cm__gemm_run_precision((int)precision, ch);
        /* the pool of C's device object (set when the device was opened, never changed): the
         * Hopper pre-passes', the realignment's and split-K's scratch */
        cudaMemPool_t pool = C.obj->a.dev->pool;
        void *realigned = NULL;
        int sa = 0, sb = 0; /* the FP32 pitched copy's operands */
        /* CM__REALIGN_ALIGN1 sets ch to the tiles that read the operands as they are */
        const int mode = cm__gemm_realign_on()
                             ? cm__gemm_realign_mode(prec, major, minor, sms, &p, ch,
                                                     CM_HAVE_GEMM_SM90,
                                                     cm__gemm_config_override(), &ch)
                             : CM__REALIGN_NONE;
        if (!cm__gemm_realign_on() || mode == CM__REALIGN_ALIGN1) {
            /* no copy of either kind */
        } else if (mode == CM__REALIGN_COPY) {
            cm__gemm_args_t q;
            err = cm__gemm_stage(&p, cm__gemm_misaligned_a(&p), cm__gemm_misaligned_b(&p),
                                 CM__GEMM_REALIGN_MAX_BYTES, major >= 9, pool, cs, &q,
                                 &realigned);
            if (err == cudaSuccess) {
                p = q;
                ch = cm__gemm_select(prec, major, minor, sms, &p, CM_HAVE_GEMM_SM90,
                                     NULL);
            } else if (err == cudaErrorNotSupported && realigned == NULL) {
                err = cudaSuccess; /* nothing queued: the product runs as selected */
            }
        } else if (cm__gemm_pitch_wanted(prec, major, &p, ch,
                                         cm__gemm_config_override(), &sa, &sb)) {
            /* FP32 on the pipelined FFMA tile: operands along M / N copied to 16-byte rows */
            cm__gemm_args_t q;
            err = cm__gemm_pitch_stage(&p, sa, sb, pool, cs, &q, &realigned);
            if (err == cudaSuccess)
                p = q; /* the same FFMA tile, now with 16-byte rows */
            else if (err == cudaErrorNotSupported && realigned == NULL)
                err = cudaSuccess; /* nothing queued: the product runs as it is */
        }
        int parts_ran = 1, wave_ran = 0;
        if (err == cudaSuccess) {
            const int forced = cm__gemm_splitk_override();
            const int parts = cm__gemm_splitk_parts(&p, ch, prec, sms, forced);
            cm__gemm_wave_t wv;
            int split = 1;
            if (parts > 1)
                err = cm__gemm_splitk(&ch, prec, &p, parts, major, minor, sms, pool,
                                      cs, &split);
            else if (cm__gemm_wave_taken(&p, ch, prec, sms, forced, parts, &wv))
                err = cm__gemm_wave_run(&ch, prec, &p, &wv, major, minor, sms, pool,
                                        cs, &wave_ran);
            else
                err = cudaErrorNotSupported;
            if (err != cudaErrorNotSupported && parts > 1) parts_ran = split;
            if (err == cudaErrorNotSupported)
                err = cm__gemm_launch(&ch, prec, &p, sms, pool, cs);
        }
        /* what this piece ran (ch: after the launchers' fallbacks), for the tests */
        cm__gemm_ran = (cm__gemm_ran_t){ch, parts_ran, realigned != NULL, wave_ran};
        /* stream-ordered: after the product (and the copies, if the product failed) */
        if (realigned != NULL) {
            const cudaError_t ferr = cm__cuda.free_async(realigned, cs);
            if (err == cudaSuccess && ferr != cudaSuccess) err = ferr;
        }
    }
    cm_status_t status = CM_OK;
    if (err != cudaSuccess)
        status = cm__cuda_fail(err, __FILE__, __LINE__,
                               "GEMM kernel %s (%s, %zu x %zu x %zu, batch of %zu) in %s",
                               cm__gemm_choice_name(ch), cm__gemm_prec_name((int)precision), m, n,
                               k, batch, func);
    else if (stream == NULL)
        status = cm__finish_sync(func);
    CM__NVTX_POP();
    cm__leave(&sc);
    return status;
}

cm_status_t cm_gemm(cm_stream_t *stream, cm_gemm_precision_t precision, cm_gemm_layout_t layout,
                    cm_gemm_op_t op_a, cm_gemm_op_t op_b, size_t m, size_t n, size_t k,
                    float alpha, const cm_buffer_t *a, size_t a_offset, size_t lda,
                    const cm_buffer_t *b, size_t b_offset, size_t ldb, float beta,
                    cm_buffer_t *c, size_t c_offset, size_t ldc) {
    return cm__gemm_impl(stream, precision, layout, op_a, op_b, m, n, k, alpha, a, a_offset, lda,
                         0, b, b_offset, ldb, 0, beta, c, c_offset, ldc, 0, 1, __func__, NULL);
}

cm_status_t cm_gemm_strided_batched(cm_stream_t *stream, cm_gemm_precision_t precision,
                                    cm_gemm_layout_t layout, cm_gemm_op_t op_a, cm_gemm_op_t op_b,
                                    size_t m, size_t n, size_t k, float alpha,
                                    const cm_buffer_t *a, size_t a_offset, size_t lda,
                                    size_t stride_a, const cm_buffer_t *b, size_t b_offset,
                                    size_t ldb, size_t stride_b, float beta, cm_buffer_t *c,
                                    size_t c_offset, size_t ldc, size_t stride_c, size_t batch) {
    return cm__gemm_impl(stream, precision, layout, op_a, op_b, m, n, k, alpha, a, a_offset, lda,
                         stride_a, b, b_offset, ldb, stride_b, beta, c, c_offset, ldc, stride_c,
                         batch, __func__, NULL);
}

cm_status_t cm_gemm_config_name(int ordinal, cm_gemm_precision_t precision,
                                cm_gemm_layout_t layout, cm_gemm_op_t op_a, cm_gemm_op_t op_b,
                                size_t m, size_t n, size_t k, const char **name) {
    const char *func = __func__;
    CM__REQUIRE(name != NULL, "pass the address of a const char * for the name",
                "%s: name is NULL", func);
    *name = "?";
    CM_TRY(cm__gemm_enums((int)precision, (int)layout, (int)op_a, (int)op_b, func));
    CM_TRY(cm__gemm_dims(m, n, k, func));
    CM_TRY(cm__check_ordinal(ordinal));
    int major = 0, minor = 0, sms = 1;
    CM_TRY(cm__gemm_device_facts(ordinal, &major, &minor, &sms, func));
    /* packed leading dimensions, 16-byte aligned bases (a fake, aligned address) */
    const int row = layout == CM_GEMM_ROW_MAJOR;
    const size_t a_rows = op_a == CM_GEMM_OP_N ? m : k, a_cols = op_a == CM_GEMM_OP_N ? k : m;
    const size_t b_rows = op_b == CM_GEMM_OP_N ? k : n, b_cols = op_b == CM_GEMM_OP_N ? n : k;
    const int bf = cm__gemm_family((int)precision) == CM__GEMM_FAM_BF16;
    const size_t e = bf ? 8 : 4;
    size_t lda = row ? a_cols : a_rows, ldb = row ? b_cols : b_rows;
    lda = (lda + e - 1) / e * e;
    ldb = (ldb + e - 1) / e * e;
    if (lda == 0) lda = e;
    if (ldb == 0) ldb = e;
    cm__gemm_args_t p;
    cm__gemm_normalize((int)layout, (int)op_a, (int)op_b, (int)m, (int)n, (int)k,
                       (const void *)(uintptr_t)256, (int64_t)lda, (const void *)(uintptr_t)256,
                       (int64_t)ldb, (void *)(uintptr_t)256, row ? (int64_t)n : (int64_t)m, &p);
    p.in_type = bf ? CM__GEMM_BF16 : CM__GEMM_F32;
    p.out_type = precision == CM_GEMM_BF16_OUT_BF16 ? CM__GEMM_BF16 : CM__GEMM_F32;
    *name = cm__gemm_choice_name(cm__gemm_select((int)precision, major, minor, sms, &p,
                                                 CM_HAVE_GEMM_SM90,
                                                 cm__gemm_config_override()));
    return CM_OK;
}

cm_status_t cm_gemm_explain(cm_gemm_precision_t precision, cm_gemm_layout_t layout,
                            cm_gemm_op_t op_a, cm_gemm_op_t op_b, size_t m, size_t n, size_t k,
                            const cm_buffer_t *a, size_t a_offset, size_t lda, size_t stride_a,
                            const cm_buffer_t *b, size_t b_offset, size_t ldb, size_t stride_b,
                            const cm_buffer_t *c, size_t c_offset, size_t ldc, size_t stride_c,
                            size_t batch, char *buf, size_t size, size_t *length) {
    CM__REQUIRE(buf != NULL || size == 0, "pass a buffer for the text, or size 0 to learn its "
                "length through `length`", "%s: buf is NULL with size %zu", __func__, size);
    if (length != NULL) *length = 0;
    if (size > 0) buf[0] = '\0';
    cm__text_t t = {buf, size, 0};
    /* the checks of cm_gemm_strided_batched, then the decisions it would make; C is not
     * written (nothing is queued), so its handle may be const here */
    CM_TRY(cm__gemm_impl(NULL, precision, layout, op_a, op_b, m, n, k, 1.0f, a, a_offset, lda,
                         stride_a, b, b_offset, ldb, stride_b, 0.0f, (cm_buffer_t *)(uintptr_t)c,
                         c_offset, ldc, stride_c, batch, __func__, &t));
    if (length != NULL) *length = t.len;
    return CM_OK;
}
