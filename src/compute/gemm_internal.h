/*
 * GEMM internals shared by src/gemm_api.c and the host tests: the normalisation of every
 * (layout, op_a, op_b) to the kernels' one form (kernels/gemm.h), the shape classes, the
 * dispatch table and the kernel choice. All pure functions (no CUDA calls).
 */
#ifndef CUDAMODEL_SRC_GEMM_INTERNAL_H
#define CUDAMODEL_SRC_GEMM_INTERNAL_H

#include <stdint.h>

#include "gemm.h"

/** 1 when the library carries the Hopper kernel (kernels/gemm_sm90.cu; CMakeLists.txt defines it
 *  as 1 then), else 0: every user tests its value with #if, never whether it is defined. */
#ifndef CM_HAVE_GEMM_SM90
#  define CM_HAVE_GEMM_SM90 0
#endif

/** Kernels cm_gemm() can run (GEMV: the matrix-vector kernel, m == 1 or n == 1; SKINNY: the
 *  one-pass kernel for 2 <= min(m, n) <= CM__GEMM_SKINNY_MAX, kernels/gemm_skinny.cu). */
enum {
    CM__GEMM_KERNEL_FFMA = 0,
    CM__GEMM_KERNEL_MMA = 1,
    CM__GEMM_KERNEL_SM90 = 2,
    CM__GEMM_KERNEL_GEMV = 3,
    CM__GEMM_KERNEL_SKINNY = 4
};

/** 1: cm__gemm_select gives skinny shapes to the skinny kernel; 0: only a forced "skinny" runs
 *  it (the setting while the kernel had not yet run on a GPU). 1 since its GPU tests and the
 *  sweep passed on the H200 (bench/NOTES-gemm.md); host tests expect either setting. */
#define CM__GEMM_SKINNY_DISPATCH 1

/** The skinny kernel runs a problem whose small side is 2 .. CM__GEMM_SKINNY_MAX when its large
 *  side (times the batch) has at least this many rows: 8 of its 32-column blocks; below that a
 *  tile kernel's few tiles are as good. */
#define CM__GEMM_SKINNY_MIN_ROWS 256
/** ... and either at least this many rows per multiprocessor (16: a block of 16 warps per 32 of
 *  them) or K at most CM__GEMM_SKINNY_SHORT_K: with fewer rows and a long K its few blocks
 *  would each run the whole K, where the tiles split K over the multiprocessors. */
#define CM__GEMM_SKINNY_ROWS_PER_SM 16
#define CM__GEMM_SKINNY_SHORT_K 2048
/** ... and K at least this long: at K = 64 the tiles measured faster (1.42-1.56x cuBLAS against
 *  its 1.23-1.27x at 4096 x 7 x 64), the products too short for its one pass over K to pay. The
 *  dispatch also needs the long side's matrix K-contiguous and, for bf16 with a small side
 *  above CM__GEMM_SKINNY_TC_BF16, not both operands K-contiguous with 16-byte rows (the
 *  tensor-core tiles' case): cm__gemm_select. */
#define CM__GEMM_SKINNY_MIN_K 256
/** ... but at least this long for one product (a batch keeps CM__GEMM_SKINNY_MIN_K:
 *  unmeasured) with a small side of at most CM__GEMM_SKINNY_NARROW (the 4- and 8-vector
 *  forms, 4 blocks a multiprocessor): there the one pass wins from short K on (H100
 *  against cuBLAS, tiles -> skinny: 5 x 10000 x 127 0.87 -> 1.24-1.38x, 2 x 50000 x 100 0.63 ->
 *  1.06-1.16x, 7 x 4096 x 127 1.2 -> 1.5-1.7x, 3001 x 8 x 200 "TN" 0.73 -> 1.17x, bf16 alike),
 *  while the 16-vector form lost at K = 160-200 (16 x 10000 x 200 TF32 "TN" 0.86 -> 0.64x;
 *  bench/NOTES-gemm.md). */
#define CM__GEMM_SKINNY_MIN_K_NARROW 96
#define CM__GEMM_SKINNY_NARROW 8
/** A small side of 9 .. 16 (the 16-vector form) also takes the skinny kernel from
 *  CM__GEMM_SKINNY_MIN_K_NARROW, for one product, where the long side is at most this many rows
 *  per multiprocessor (the 64-row tiles over it fill at most half of them) and the tensor-core
 *  tiles would not read both operands as they are (FP32, or TF32 / bf16 with an operand's rows
 *  off 16 bytes). H100 against cuBLAS, the tiles -> skinny at K = 255: 12 x 4096 FP32
 *  1.17-1.21 -> 1.62-1.66x, TF32 0.84-0.85 -> 1.33-1.37x, bf16 0.90-0.97 -> 1.26-1.28x;
 *  4096 x 12 "TN" FP32 0.98-1.10 -> 1.59-1.63x, TF32 0.77-0.82 -> 1.34-1.40x; 4096 x 16 "TN"
 *  FP32 1.04 -> 1.46-1.49x; 16 x 4096 x 160 FP32 1.37-1.38 -> 1.40-1.49x. Where the tiles read
 *  16-byte rows as they are they stay (16 x 4096 x 160 TF32 / bf16 "NN": mma:64x64 1.11-1.20x,
 *  skinny 0.89-1.01x), and so do longer sides (16 x 10000 x 200 "NN": FP32 0.90-0.97x against
 *  0.73-0.80x, bf16 0.90-0.91x against 0.52-0.61x; at 6000-8192 rows the two tie;
 *  bench/NOTES-gemm.md). */
#define CM__GEMM_SKINNY_FEW_ROWS_PER_SM 32
/** The tensor-core tiles take a skinny bf16 / long-K TF32 problem with both operands
 *  K-contiguous and 16-byte rows (and bf16 with A so on Hopper: the wgmma kernel) only where its
 *  small side is above these: up to them the skinny kernel's 4- or 8-vector form, which keeps 4
 *  blocks per SM, measured faster (cm__gemm_select). */
#define CM__GEMM_SKINNY_TC_BF16 4
#define CM__GEMM_SKINNY_TC_TF32 8
/** From this small side a long-K TF32 skinny problem with 16-byte rows takes the tensor-core
 *  tiles with an MN-major operand too, not only both K-contiguous (cm__gemm_select). */
#define CM__GEMM_SKINNY_TC_TF32_ANY 16
/** With rows off 16 bytes and an MN-major operand such a TF32 product (one, a small side of
 *  CM__GEMM_SKINNY_TC_TF32_ANY, K >= CM__SPLITK_LONG_K) takes those tiles' align1 form over at
 *  most this many rows of its long side per multiprocessor; more keep the skinny kernel
 *  (cm__gemm_select). */
#define CM__GEMM_SKINNY_TF32_16_A1_ROWS_PER_SM 48
/** A TF32 skinny problem with K under CM__SPLITK_LONG_K takes those tiles where the 64 x 64
 *  tiles over C cover at least this many quarters of the multiprocessors (3: 3/4; shorter K
 *  with fewer tiles keeps the skinny kernel, whose blocks fill the GPU; cm__gemm_select). */
#define CM__GEMM_SKINNY_TC_TF32_FILL 3
/** On Hopper, a bf16 skinny problem with a small side of at least CM__GEMM_SKINNY_SM90_BF16
 *  (above the skinny kernel's 8-vector form: its 16-vector one keeps 2 blocks per SM) and K of
 *  at least CM__GEMM_SKINNY_SM90_BF16_K, which the tensor-core tiles do not take (an operand
 *  not K-contiguous in 16-byte rows: an odd K), runs the wgmma kernel after its pre-pass
 *  instead of the skinny kernel (cm__gemm_select). Measured: H100 from K = 1001; H200, small
 *  side 16: K = 999 0.78x cuBLAS against skinny's 0.50x (16 x 10000 x 999), K = 501 skinny
 *  0.96-0.99x against 0.90-0.94x (16 x 3001 x 501); the bound sits between, unmeasured there
 *  (bench/NOTES-gemm.md). */
#define CM__GEMM_SKINNY_SM90_BF16 9
#define CM__GEMM_SKINNY_SM90_BF16_K 768
/** A matrix-vector product (m or n == 1, one matrix) with K at most this, read along K, over at
 *  least CM__GEMM_SKINNY_ROWS_PER_SM rows per multiprocessor runs the skinny kernel instead of
 *  gemv (measured at K = 127 and 4096 rows; K = 512 over 7 rows and K >= 1000 stay gemv's). */
#define CM__GEMM_GEMV_SHORT_K 128

/** CM_GEMM_FP32_3XTF32 takes the split-TF32 Hopper path only from this K on. The split's error
 *  has a floor that does not shrink with K (the tensor cores' truncated additions within each
 *  promoted block: ~1.7e-7 relative on the H200), while FP32's own rounding error grows with K
 *  (1.3e-7 at K = 64, 2.6e-7 at 300, 4.1e-7 at 777 on the test's data): from 512 on the split
 *  is the more accurate with a margin; below, the FFMA kernels give FP32 accuracy by
 *  definition (bench/NOTES-gemm.md). */
#define CM__GEMM_3X_MIN_K 512

/** CM_GEMM_FP32_3XTF32 takes the split-TF32 Hopper path only over a C whose short side (rows or
 *  columns) is above this: its 128 x 192 tiles stand one deep over such a C, idle over a third
 *  or more of each tile where the short side runs along their 192; the FP32 kernels fit it
 *  (their narrow rule's 32 x 64 or 64 x 64 tiles up to 64). Against cuBLAS, column-major, the
 *  Hopper path -> the FFMA tiles (FP32's choice): H200 32 x 20000 x 900 0.29x -> 0.68-0.71x;
 *  H100, two rounds, "NN" / "TN", 96 x 30000 x 1024 0.55-0.57x -> 0.83-0.88x, 128 x 30000 x
 *  1024 0.58-0.60x -> 0.92-1.00x, 112 x 20000 x 2048 0.54-0.58x -> 0.57-0.63x
 *  (bench/NOTES-gemm.md). */
#define CM__GEMM_3X_NARROW_SIDE 128

/** Shape classes (cm__gemm_shape_class). */
enum {
    CM__GEMM_SHAPE_TINY = 0,   /* fewer 64 x 64 tiles of C than multiprocessors (512^2 on 132) */
    CM__GEMM_SHAPE_SMALL = 1,  /* fewer 128 x 128 tiles than multiprocessors (1024^2 on 132) */
    CM__GEMM_SHAPE_SKINNY = 2, /* min(M, N) <= 256 or K <= 256 (and not smaller classes) */
    CM__GEMM_SHAPE_LARGE = 3,  /* the rest */
    CM__GEMM_SHAPE_COUNT
};

/** Architecture classes of the table. */
enum {
    CM__GEMM_ARCH_SM75 = 0,  /* Turing: FFMA only */
    CM__GEMM_ARCH_SM80 = 1,  /* Ampere, Ada, Blackwell and later: FFMA + mma.sync */
    CM__GEMM_ARCH_SM90 = 2,  /* Hopper: FFMA + mma.sync + wgmma */
    CM__GEMM_ARCH_COUNT
};

/** Precision families of the table: FP32, TF32, BF16 (both outputs). */
enum { CM__GEMM_FAM_FP32 = 0, CM__GEMM_FAM_TF32 = 1, CM__GEMM_FAM_BF16 = 2, CM__GEMM_FAM_COUNT };

/** SM90's config: 0 the operands go straight to the kernel ("TN", aligned), CM__GEMM_SM90_PACK
 *  the transposing pre-pass first ("sm90+pack"; "sm90" in an override: pack where needed, in
 *  the default's form),
 *  CM__GEMM_SM90_3XTF32 the 3xTF32 split pre-pass of CM_GEMM_FP32_3XTF32 ("sm90+3xtf32"),
 *  CM__GEMM_SM90_BT as PACK, but a bf16 B that is MN-major with 16-byte rows goes to the
 *  kernel's transposed-B form as it is ("sm90+bt"; A is packed if it needs to be). */
enum {
    CM__GEMM_SM90_PACK = 1,
    CM__GEMM_SM90_3XTF32 = 2,
    CM__GEMM_SM90_BT = 3,
    CM__GEMM_SM90_AT = 4,
    /* an override's "sm90+pack": PACK for every operand the kernel cannot read as it is, never
     * the BT / AT forms; cm__gemm_select turns it into PACK (never in a selected choice) */
    CM__GEMM_SM90_PACK_ALL = 5
};
/** CM__GEMM_SM90_AT ("sm90+at", TF32): as PACK, but an operand that is MN-major with 16-byte rows
 *  is read as it is by the kernel's register-A form (kernels/gemm_sm90.h, CM__GEMM_SM90_TF32_AT):
 *  A directly; B, when A is not such an operand, as the A of the transposed product C^T = B A^T
 *  with a column-major C (CM__GEMM_SM90_TF32_AT_CC). The other operand is packed if it needs
 *  to be. */

/** 1: the default dispatch takes CM__GEMM_SM90_BT wherever it would pack only a bf16 B that the
 *  kernel can read MN-major (bf16 "NN" on Hopper); 0: only a forced "sm90+bt" runs it. On since
 *  the transposed-B kernel (kernels/gemm_sm90.cu, BT) passed its GPU test (test_gpu_gemm's
 *  test_sm90_mn_b) and beat the pack on the H200's bf16 NN rows (4096^3 0.96x cuBLAS against
 *  0.81x; bench/NOTES-gemm.md). */
#define CM__GEMM_SM90_BT_DISPATCH 1

/** 1: the default dispatch takes CM__GEMM_SM90_AT wherever a TF32 product it would pack has an
 *  operand the register-A form reads as it is (TF32 "NN" and "TT" on Hopper); 0: only a forced
 *  "sm90+at" runs it. */
#define CM__GEMM_SM90_AT_DISPATCH 1

/** The shortest K at which the default dispatch reads a TF32 operand as it is ("sm90+at") rather
 *  than packing it: the pack moves O((m + n) k) bytes, while the register-A form of a product
 *  whose MN-major operand is B writes C column by column (8 rows of a column a store), which
 *  costs more than the pack saves when K is short against C. On the H200 K >= 512 gained and
 *  K = 64 / 127 lost; 256 lies between them, unmeasured (bench/NOTES-gemm.md). A forced
 *  "sm90+at" takes any K. */
#define CM__GEMM_SM90_AT_MIN_K 256

/** The shortest K at which a TF32 / BF16 product that is not "TN" (or lacks 16-byte rows) takes
 *  the Hopper kernel after its pre-pass in the small and skinny classes too (the large class
 *  always does): the pre-pass moves O((m + n) k) bytes, and from K = 64 the wgmma kernel wins
 *  that back over mma.sync (H200: 1000^3 NN 1.23-1.38x, 4096 x 4096 x 64 NN 1.68-2.00x the
 *  mma.sync figure); at K = 1 or 7 the pre-pass costs more than the product (0.4-0.6x). */
#define CM__GEMM_PACK_MIN_K 64

typedef struct cm__gemm_choice {
    int kernel; /* CM__GEMM_KERNEL_* */
    int config; /* CM__FFMA_* or CM__MMA_* (SM90: 0 or CM__GEMM_SM90_PACK) */
} cm__gemm_choice_t;

/**
 * Normalise C = alpha op(A) op(B) + beta C in `layout` (0 row-major, 1 column-major) to the
 * kernels' form (kernels/gemm.h: row-major C, A / B K- or M/N-contiguous): a column-major
 * problem becomes C^T = op(B)^T op(A)^T (m and n swap, A and B swap). Fills every field of
 * *out but alpha, beta, in_type and out_type.
 */
void cm__gemm_normalize(int layout, int op_a, int op_b, int m, int n, int k, const void *a,
                        int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc,
                        cm__gemm_args_t *out);

/** Shape class of an m x n x k problem (normalised or not: symmetric in m, n) on a device of
 *  sm_count multiprocessors. */
int cm__gemm_shape_class(int m, int n, int k, int sm_count);

/** Architecture class of compute capability major.minor. */
int cm__gemm_arch_class(int major, int minor);

/** Family of a public precision (0..3). */
int cm__gemm_family(int precision);

/** The table's entry (src/gemm_api.c). */
cm__gemm_choice_t cm__gemm_table_entry(int arch, int family, int shape);

/**
 * The kernel for a normalised problem p of `precision` on a device of compute capability
 * major.minor with sm_count multiprocessors: the override (a CUDAMODEL_GEMM_CONFIG name; NULL,
 * an unknown name, an FFMA configuration this build did not compile (cm__gemm_ffma_built) or one
 * that cannot serve the problem: ignored), else the matrix-vector kernel ("gemv") when
 * m == 1 or n == 1 and k >= 1, else the skinny kernel ("skinny") when 2 <= min(m, n) <=
 * CM__GEMM_SKINNY_MAX, k >= 1, max(m, n) x batch >= CM__GEMM_SKINNY_MIN_ROWS and either
 * max(m, n) x batch >= CM__GEMM_SKINNY_ROWS_PER_SM x sm_count or k <= CM__GEMM_SKINNY_SHORT_K,
 * k at least CM__GEMM_SKINNY_MIN_K (CM__GEMM_SKINNY_MIN_K_NARROW for one product with a small
 * side up to CM__GEMM_SKINNY_NARROW, or over at most CM__GEMM_SKINNY_FEW_ROWS_PER_SM rows per SM
 * without tensor-core tiles reading both operands as they are), the long side's matrix
 * K-contiguous, where the tensor-core and Hopper rules of gemm_api.c do not take it
 * (and CM__GEMM_SKINNY_DISPATCH is 1) ("skinny"
 * forced: any 1 <= min(m, n) <= CM__GEMM_SKINNY_MAX with k >= 1), else the table's entry ("gemv"
 * or "skinny" forced on a shape it cannot take: the table's entry), then demoted to what can run: K = 0 always runs FFMA 64x64x16 (C = beta C only); SM90 needs arch sm_90, have_sm90
 * (the library carries the kernel) and a TF32/BF16 precision, else MMA; a problem that is not
 * "TN" (a_kmajor and b_kmajor) with 16-byte aligned operands takes SM90 with the transposing
 * pre-pass ("sm90+pack") on the large shape class or when forced, else MMA;
 * MMA needs sm_80+, a TF32/BF16 precision and cm__gemm_mma_aligned(p), else FFMA (FP32 math);
 * FP32 is always FFMA. BF16 on FFMA takes 128x128x8 or 64x64x16 only. CM_GEMM_FP32_3XTF32 takes
 * "sm90+3xtf32" on sm_90 with have_sm90 and K >= 1 when the problem fills the GPU (the large
 * class, or the skinny class with at least sm_count 128 x 256 tiles) or an SM90 name is forced,
 * else the FP32 row of the table (FFMA; a forced FFMA name is kept).
 */
cm__gemm_choice_t cm__gemm_select(int precision, int major, int minor, int sm_count,
                                  const cm__gemm_args_t *p, int have_sm90, const char *override);

/**
 * The override cm_gemm() and cm_gemm_config_name() pass to cm__gemm_select: the tests' one when
 * set (cm__gemm_config_override_set_for_tests), else CUDAMODEL_GEMM_CONFIG, read once per
 * process (thread-safe; NULL when unset); in a tuning build (CM_GEMM_TUNING) at every call
 * instead, so that bench_gemm --tune / --ops can switch configurations with setenv().
 */
const char *cm__gemm_config_override(void);

/**
 * 1 when the realignment applies to p (gemm_api.c): cm_gemm first copies p's misaligned
 * operands into K-contiguous scratch with 16-byte rows, or runs the copied form's mma.sync
 * tiles' TF32 align1 form instead (cm__gemm_realign_mode says which): a TF32 / BF16 product on
 * sm_80+ that the selection
 * gave `chosen` = the FFMA kernel only because an operand lacks 16-byte rows, whose aligned form
 * the selection gives to a tensor-core kernel (mma.sync or the Hopper kernel), with K of at
 * least CM__GEMM_REALIGN_MIN_K and at least CM__GEMM_REALIGN_MIN_FLOPS flops (BF16:
 * CM__GEMM_REALIGN_MIN_FLOPS_BF16) times the batch, with no configuration forced (override NULL
 * or ""); below that floor only a TF32 product with K of at least CM__GEMM_REALIGN_A1_MIN_K
 * (one thin product: CM__GEMM_REALIGN_A1_THIN_MIN_K), and only where the align1 form takes it
 * (never the copy). Pure.
 */
int cm__gemm_realign_wanted(int precision, int major, int minor, int sm_count,
                            const cm__gemm_args_t *p, cm__gemm_choice_t chosen, int have_sm90,
                            const char *override);

/** What the realignment does with p (cm__gemm_realign_mode). */
enum { CM__REALIGN_NONE = 0, CM__REALIGN_COPY = 1, CM__REALIGN_ALIGN1 = 2 };

/**
 * CM__REALIGN_NONE where cm__gemm_realign_wanted is 0; else CM__REALIGN_ALIGN1 where the
 * TF32 align1 form of mma.sync tiles (kernels/gemm.h, CM__GEMM_MMA_ALIGN1) takes p as it is
 * (the form on: built with code for compute capability major, cm__gemm_mma_align1_for, or
 * cm__gemm_align1_set_for_tests; TF32; A and B 4-byte aligned) and
 * either the copied form's selection gives mma.sync tiles of 128 x 128 or 64 x 64 (*tiles:
 * that choice) or it gives the Hopper kernel and split-K would cut that kernel's product into
 * parts (cm__gemm_splitk_parts, no override: C too small for the GPU; *tiles: mma:128x128);
 * *tiles then runs without the copy (else *tiles is untouched); otherwise CM__REALIGN_COPY.
 * Pure.
 */
int cm__gemm_realign_mode(int precision, int major, int minor, int sm_count,
                          const cm__gemm_args_t *p, cm__gemm_choice_t chosen, int have_sm90,
                          const char *override, cm__gemm_choice_t *tiles);

/** For tests: 1 or 0 turns the align1 form's choice on or off for the process (on without the
 *  form's code for the device, cm__gemm_mma refuses it and the FFMA kernel runs), -1 goes back
 *  to cm__gemm_mma_align1_for(major). Not synchronised: set it while no GEMM is being issued. */
void cm__gemm_align1_set_for_tests(int on);

/**
 * 1 when cm_gemm should first copy p's operands contiguous along M or N that lack 16-byte rows
 * into scratch rows of whole 16 bytes, in the same orientation (gemm_api.c, "FP32 pitched
 * copy"; *stage_a / *stage_b: which): an FP32 (or 3xTF32 on FFMA) product of one matrix on
 * sm_80+ whose `chosen` FFMA configuration runs, for p, neither its whole-tile pipelined
 * kernel nor its bounded form (cm__gemm_ffma_runs) and does run one of them once those rows
 * are copied; each copied operand's other side of C at least CM__GEMM_PITCH_MIN_SIDE, at
 * least CM__GEMM_PITCH_MIN_FLOPS flops, at most 1 GiB of scratch, no configuration forced.
 * Pure.
 */
int cm__gemm_pitch_wanted(int precision, int major, const cm__gemm_args_t *p,
                          cm__gemm_choice_t chosen, const char *override, int *stage_a,
                          int *stage_b);

/** The FP32 pitched copy's floor in flops: 2^30, ~25 us of the FFMA tile, against a copy of
 *  a few microseconds at least (a launch, the pool's allocation). */
#define CM__GEMM_PITCH_MIN_FLOPS 1073741824.0

/** The pitched copy of an operand needs the other side of C (N for A, M for B) at least this
 *  long: the copy reads and writes the operand once, 8 bytes an element, in about 45 / side
 *  of the product's time on the H200 (~3 TB/s copies against ~40 TFLOP/s of FFMA), 4.5 % at
 *  1024 against the 10-15 % the pipelined kernel gains over the edge kernel. */
#define CM__GEMM_PITCH_MIN_SIDE 1024

/** The realignment's floor in flops (times the batch): 2^28, ~10 us of the FFMA kernel, below
 *  which the staging copies would cost more than the tensor cores save. */
#define CM__GEMM_REALIGN_MIN_FLOPS 268435456.0

/** Below the floor a TF32 product with at least this K still takes the align1 form of the
 *  mma.sync tiles where cm__gemm_realign_mode would (it copies nothing, so the floor's reason
 *  does not hold; the copy stays above the floor): the FFMA kernel's long K loses to the tensor
 *  cores already at these sizes (H100 against cuBLAS, FFMA -> align1: 16 x 2001 x 3001 0.70 ->
 *  0.91x, 16 x 1000 x 3001 0.73 -> 1.04x, 8 x 1000 x 4001 0.69 -> 0.98x, 64 x 127 x 3001 NN
 *  0.70 -> 1.10x, 100 x 300 x 2001 NN 0.77 -> 1.21x; bench/NOTES-gemm.md). */
#define CM__GEMM_REALIGN_A1_MIN_K 1024

/** ... and one thin TF32 product (a side of C of CM__GEMM_SKINNY_TC_TF32 .. CM__GEMM_SKINNY_MAX)
 *  from this K takes the 64 x 64 tiles' align1 form there, whatever the copied form would run:
 *  the FFMA tiles leave a thin C's tensor-core work undone (H100 against cuBLAS,
 *  rows off 16 bytes, FFMA -> mma:64x64 align1: 4096 x 12 x 255 "NN" 0.82-0.87 -> 1.19-1.22x,
 *  "TN" 0.79-0.85 -> 1.31-1.32x, 8192 x 12 x 255 "TN" 0.70-0.72 -> 1.17-1.20x, 3001 x 8 x 200
 *  "NN" 0.87-0.89 -> 1.31x, 3001 x 12 x 500 "NN" 0.55-0.56 -> 0.96-0.98x, 4096 x 12 x 767 "NN"
 *  0.48 -> 0.86-0.91x; the 128 x 128 tiles' form unsplit 0.48-1.03x; bench/NOTES-gemm.md). */
#define CM__GEMM_REALIGN_A1_THIN_MIN_K 192

/** BF16's floor, lower: the FFMA kernel converts every bf16 input and ran bf16 at 0.37-0.52x
 *  cuBLAS at 49-132 Mflop (4096 x 127 x 127, 3001 x 64 x 127, 127 x 4096 x 127) and 0.48-0.58x
 *  at 127^3 (4 Mflop), where TF32 on it stays at 0.85-1.08x; realigned (staged, then
 *  mma.sync), the 49-132 Mflop shapes ran 0.64-0.95x, and from 2^21 on 127^3 too: 0.65-0.72x
 *  TN, 0.79-0.83x NN (H200: bench/NOTES-gemm.md). Set it to CM__GEMM_REALIGN_MIN_FLOPS to
 *  treat BF16 like TF32. */
#define CM__GEMM_REALIGN_MIN_FLOPS_BF16 2097152.0

/** The realignment needs K of at least this many elements: below it a product does 2K flops per
 *  element of C and is bound by writing C, which the FFMA kernel does at cuBLAS's speed or
 *  better and the tensor-core kernels, fed K padded to whole 16-byte rows, did not (bf16
 *  4096 x 4096 x 1 and x 7: FFMA 1.19-1.26x cuBLAS, realigned 0.43-0.61x, H200). */
#define CM__GEMM_REALIGN_MIN_K 32

/** 1: cm_gemm realigns where cm__gemm_realign_wanted says so; 0: never (FFMA runs those
 *  products). On since the realignment passed its GPU test (test_gpu_gemm's test_realigned,
 *  results checked against a float64 reference) on the H200. */
#define CM__GEMM_REALIGN_DEFAULT 1

/** For tests: 1 or 0 turns the realignment on or off for the process, -1 goes back to
 *  CM__GEMM_REALIGN_DEFAULT. Not synchronised: set it while no GEMM is being issued. */
void cm__gemm_realign_set_for_tests(int on);

/** Split-K (gemm_api.c): a single product runs as a batch over K of at most this many parts
 *  into float scratch (the last part shorter; on the Hopper kernel, whose parts are whole, one
 *  more launch for what is left of K), then a reduction adds them in order (deterministic). */
#define CM__SPLITK_MAX 32
/** A forced split (CUDAMODEL_GEMM_SPLITK) gives every part at least this much of K. */
#define CM__SPLITK_FORCED_MIN_K 64
/** The tiles whose C fills more than a quarter of the multiprocessors split from this K
 *  (cm__gemm_splitk_parts' rules in gemm_api.c); TF32 leaves skinny for the tiles from here. */
#define CM__SPLITK_LONG_K 1024
/** Hopper FP32: from this K the 64 x 64 and 32 x 64 FFMA tiles whose plan splits K run their
 *  3-stage pipelined forms (64x64x16q3, 32x64x16q3; cm__gemm_select). H100 against cuBLAS:
 *  from K = 3001 they won 5-22 %; at K of 512-1000 in 2-4 parts they lost 2-5 % (512^3,
 *  4096 x 64 x 1000, 3001 x 127 x 1000); at 4096 in 8 parts they tied, +-4.5 %
 *  (bench/NOTES-gemm.md). */
#define CM__FFMA_Q3_MIN_K 2048

/**
 * How many parts split-K cuts p (batch 1, after the selection chose `ch`) into; 1 for no split.
 * forced 0: the heuristic (a long K under a C whose tiles or rows leave the GPU underused, by
 * kernel: gemm_api.c; never a batch or CM_GEMM_FP32_3XTF32); forced 1: no split; forced 2 or
 * more: that many parts (at most CM__SPLITK_MAX) on any kernel, fewer where K gives a part less
 * than CM__SPLITK_FORCED_MIN_K (never a batch or CM_GEMM_FP32_3XTF32). The split itself cuts K
 * into chunks of K / parts rounded up to 32 elements, the last one shorter (FFMA, mma.sync,
 * gemv, skinny: one launch), or rounded down with one more launch for the rest (the Hopper
 * kernel), so that batch may hold a few more (at most CM__SPLITK_MAX). Pure.
 */
int cm__gemm_splitk_parts(const cm__gemm_args_t *p, cm__gemm_choice_t ch, int precision,
                          int sms, int forced);

/**
 * Split-K's chunks of K: every part but the last covers *kc of K, a multiple of 32 (so that a
 * K-contiguous operand's 16-byte alignment holds in every part). last_short (a kernel that
 * takes a shorter last part in the same launch: k_last, kernels/gemm.h): *kc = ceil(k / parts)
 * rounded up to 32, *full parts of it and, when *rem > 0, one more of *rem < *kc (3001 in 5:
 * four of 608 and one of 569): at most `parts` in all. Else (the Hopper kernel, whose parts
 * are whole) *kc = k / parts rounded down to 32, *full parts of it, and *rem (less than 32 per
 * part asked for) is left for one more launch; the batch may then hold a few more parts than
 * asked (4000 in 30: 31 of 128 and 32 left). Either way at most CM__SPLITK_MAX parts of *kc:
 * past that, the chunk is ceil(k / CM__SPLITK_MAX) rounded up to 32 (9184 in 32: 35 of 256
 * would be too many, so 31 of 288 and 256 left).
 * k >= 1, parts >= 1. Pure.
 */
void cm__gemm_splitk_chunks(int64_t k, int parts, int last_short, int64_t *kc, int *full,
                            int64_t *rem);

/**
 * The last wave's split (gemm_api.c): a single FP32 product on an FFMA tile of at least 128 x
 * 128 with K >= CM__WAVE_SPLIT_MIN_K whose tiles make 1 to CM__WAVE_SPLIT_MAX_WAVES whole
 * waves of resident blocks and a last wave at most CM__WAVE_SPLIT_MAX_FILL full runs in two
 * pieces: the first `lead` rows (along_n 0) or columns (along_n 1) of C, whole tiles, as one
 * launch of (nearly) whole waves, then the rest split over K in `parts` parts
 * (cm__gemm_splitk), which fills the last wave's multiprocessors that would otherwise sit idle
 * or run one block alone. Returns parts (>= 2) and fills *w, or 1 (no split: *w zeroed).
 * forced: cm__gemm_splitk_override()'s value; any forced split (including 1, never) turns
 * this off. Pure.
 */
typedef struct cm__gemm_wave {
    int along_n;       /* 1: the pieces are column ranges of C, 0: row ranges */
    int lead;          /* rows (columns) of C in the first piece, whole tiles */
    int parts;         /* K parts of the second piece */
    long long tiles1;  /* tiles of the first piece, and of the second */
    long long tiles2;
} cm__gemm_wave_t;
/* The limits: on the H200 a last wave of 0.03-0.21 of the slots split gained 4-30 % (3001^3,
 * 4096 x 1200 x 4096, 2176 x 2048 x 640, 5000^2 x 2048 at 6 whole waves), one of 0.37-0.47
 * gained nothing at K 1536-2048 and lost 4 % at K 768-900; at 8 whole waves the split is even
 * (bench/NOTES-gemm.md). */
#define CM__WAVE_SPLIT_MAX_FILL 0.3
#define CM__WAVE_SPLIT_MAX_WAVES 8
#define CM__WAVE_SPLIT_MIN_K 512
/* CM_GEMM_FP32_3XTF32 on the Hopper kernel ("sm90+3xtf32", 128 x 192 tiles, one block a
 * multiprocessor) takes the same split where CM__GEMM_WAVE_SPLIT_3XTF32 is 1 (or the tests'
 * switch turns it on), its last wave up to CM__WAVE_SPLIT_SM90_MAX_FILL full (one block a
 * multiprocessor: an idle multiprocessor's whole share is lost), the second piece's parts each
 * split into TF32 parts of their own and run as one batch (cm__gemm_sm90_3xtf32_parts). Off by
 * default until measured on a GPU: 4096^3 is 5 waves and 44 of 132 tiles. */
#ifndef CM__GEMM_WAVE_SPLIT_3XTF32
#define CM__GEMM_WAVE_SPLIT_3XTF32 0
#endif
#define CM__WAVE_SPLIT_SM90_MAX_FILL 0.5
int cm__gemm_wave_split(const cm__gemm_args_t *p, cm__gemm_choice_t ch, int precision, int sms,
                        int forced, cm__gemm_wave_t *w);

/** The two pieces of p under w (cm__gemm_wave_split gave it): *first the leading w->lead rows
 *  (columns) of the kernels' C with their rows of A (columns of B), *rest the others, each
 *  with the operands' and C's addresses moved to its part. Pure. */
void cm__gemm_wave_pieces(const cm__gemm_args_t *p, const cm__gemm_wave_t *w,
                          cm__gemm_args_t *first, cm__gemm_args_t *rest);

/** For tests: 0 turns the last wave's split (on in cm_gemm and cm_gemm_explain) off for the
 *  process, 1 or -1 back on. Not synchronised: set it while no GEMM is being issued. */
void cm__gemm_wave_split_set_for_tests(int on);

/** For tests: 1 turns the last wave's split of CM_GEMM_FP32_3XTF32 on the Hopper kernel on for
 *  the process, 0 off, -1 back to CM__GEMM_WAVE_SPLIT_3XTF32. Not synchronised. */
void cm__gemm_wave_3xtf32_set_for_tests(int on);

/** Whether cm_gemm takes the last wave's split for p under choice ch, given the split-K parts
 *  cm__gemm_splitk_parts gave it (split-K, where it splits, rules): 1 with *w filled (the
 *  split on and cm__gemm_wave_split's parts >= 2), else 0 with *w zeroed. cm_gemm and
 *  cm_gemm_explain both decide through it. Pure but for the tests' switch. */
int cm__gemm_wave_taken(const cm__gemm_args_t *p, cm__gemm_choice_t ch, int precision, int sms,
                        int forced, int splitk_parts, cm__gemm_wave_t *w);

/**
 * The split-K override cm_gemm passes to cm__gemm_splitk_parts: the tests' one when set
 * (cm__gemm_splitk_override_set_for_tests), else CUDAMODEL_GEMM_SPLITK (a decimal 1 ..
 * CM__SPLITK_MAX; another value counts as unset), read once per process (at every call in a
 * tuning build); 0 when unset.
 */
int cm__gemm_splitk_override(void);

/** Tests only: force split-K's parts (0: the heuristic, 1: never, 2 .. CM__SPLITK_MAX) for the
 *  process, or with -1 go back to CUDAMODEL_GEMM_SPLITK. Atomic. */
void cm__gemm_splitk_override_set_for_tests(int parts);

/** Tests only: the scratch cap of the 3xTF32 split in bytes (0: the library's 1 GiB), so that
 *  a small product runs in several passes over K (beta 1 after the first). Not synchronised:
 *  set it while no GEMM is being issued. */
void cm__gemm_3x_scratch_set_for_tests(size_t bytes);

/**
 * Tests only: force the configuration of every following cm_gemm() / cm_gemm_config_name() in
 * the process (a name as CUDAMODEL_GEMM_CONFIG takes; the string must stay valid until the
 * next call), or with NULL go back to CUDAMODEL_GEMM_CONFIG. The environment is read once, so
 * setenv() after the first GEMM changes nothing: tests/gpu/test_gpu_gemm.c forces its
 * configurations through this. Atomic; a test that forces on one thread and runs GEMMs on
 * others sees the change at their next call.
 */
void cm__gemm_config_override_set_for_tests(const char *name);

/** Forget the compute capability and multiprocessor count read for each ordinal (cm_gemm
 *  reads them once per ordinal), so that a host test's simulated device can change them. Not
 *  synchronised: call it while no GEMM is being issued. */
void cm__gemm_device_facts_forget_for_tests(void);

/** What the calling thread's last cm_gemm / cm_gemm_strided_batched piece ran, after the
 *  launchers' fallbacks: the kernel choice, the parts of split-K it ran in (1: whole) and
 *  whether operands were copied into scratch first: the TF32 / BF16 realignment or the FP32
 *  pitched copy (queued, not necessarily finished). For tests
 *  that compare cm_gemm_explain with what runs. */
typedef struct cm__gemm_ran {
    cm__gemm_choice_t choice;
    int parts;
    int realigned;
    int wave_parts; /* the last wave's split: its second piece's parts (0: none) */
} cm__gemm_ran_t;
void cm__gemm_last_ran_for_tests(cm__gemm_ran_t *out);

/** Static name of a choice ("ffma:128x128x8", "mma:64x64", "sm90"); "?" for none. */
const char *cm__gemm_choice_name(cm__gemm_choice_t choice);

/** Parse a name of cm__gemm_choice_name; 1 on success, 0 otherwise. */
int cm__gemm_parse_name(const char *name, cm__gemm_choice_t *out);

#endif /* CUDAMODEL_SRC_GEMM_INTERNAL_H */
