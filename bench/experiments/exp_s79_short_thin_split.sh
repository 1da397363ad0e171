#!/usr/bin/env bash
# Split-K below K = 512 on the float 32 x 64 FFMA tiles, and on the TF32 align1 form of the
# mma.sync tiles over a thin C. exp_s77 (H100, forced CUDAMODEL_GEMM_SPLITK on the default's
# kernel): FP32 NN thin shapes with K 256-500 on ffma:32x64x16 0.71-0.93x cuBLAS unsplit ->
# 1.07-1.25x in 4 parts (2 parts: 0.95-1.02x), 3001x64x500 0.88 -> 1.16-1.22x, 3001x127x500
# 0.88 -> 1.02-1.04x in 2 (0.85 in 4); TF32 NN on mma:64x64's align1 form 3001x12x500 1.06 ->
# 1.31x in 4, 4096x12x767 0.91 -> 1.26x in 4; skinny lost in any split. splitk-short-thin.patch
# (CM_SK_EXP bits: 1 float FFMA 32x64 slot rule from K 256 with parts >= 64 below 512; 2 parts
# >= 64 below 768 too; 4 mma align1 over a C with a side <= 16 on the slot rule from K 384;
# 8 no last-layer trim for float FFMA 32x64 within one wave of resident blocks) at 0 1 3 5 13
# 15 over thin and small-C shapes with K 256-1000, FP32 and TF32, two rounds; then
# test_gpu_gemm's split and odd-shape tests with CM_SK_EXP=15 plain. One device call, carry
# .deps. Into $OUT: sweeps.txt, tests.txt, summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
p=bench/experiments/splitk-short-thin.patch
shapes="3001x12x500 4096x12x400 3001x8x300 2000x16x500 8192x12x300 3001x12x256 4096x12x767 \
3001x64x500 3001x127x500 512x512x300 384x384x400 700x300x400 1000x127x300 256x1024x300 \
3001x12x600 384x384x600 1000x127x512 3001x64x700 4096x16x1000"
CM_BENCH_SWEEP_ONLY="fp32 tf32" exp_patch_variants "$p" CM_SK_EXP "0 1 3 5 13 15" "$shapes" \
    "fp32 tf32" 240
CM_SK_EXP=15 exp_test_runs none 300 test_split_k test_split_k_forced test_medium_odd \
    test_tf32_align1 test_wave_split test_ffma_small_class test_reproducible \
    test_small_all_combinations >"$R/tests.txt" 2>&1
exp_step "tests done"
exp_unpatched "$p"
