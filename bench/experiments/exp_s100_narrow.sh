#!/usr/bin/env bash
# The first GPU run of three narrow-C rules (gemm_api.c), each the default against the choice it
# replaced, two rounds: (1) FP32 on Hopper, C of at most 64 rows or columns beside many, K from
# 32 (cm__gemm_ffma_narrow_config, whose floor was 512): the shapes exp_s98 measured (one round
# there) and held-out ones at K 32-480, and a K of 16 below the new floor; (2)
# CM_GEMM_FP32_3XTF32 over a C of at most 64 rows or columns: the FP32 kernels in place of its
# Hopper path (CM__GEMM_3X_NARROW_SIDE); (3) BF16 rule 4 widened to a short side of 32-56 and a
# long side from 5000 (cm__gemm_sm90_bf16_narrow): held-out shapes inside and just outside the
# new bounds. Round 1, then test_gpu_gemm's tests of the selection (test_every*, test_3xtf32*,
# test_explain*, test_split_k*, medium_odd, skinny, ffma_small_class), then round 2. One
# device call (~4 min cold), carry .deps. Into $OUT
# (tar it: more than 8 files): fp32_{1,2}.txt, x3_{1,2}.txt, bf16_{1,2}.txt, tests.txt,
# summary.txt. A rule stands where the default is within the rounds' spread of the best column
# in both layouts. EXP_S100_ROUNDS=1 skips round 2 (a call with little device time left).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
fp="20000x32x256 20000x32x128 30000x64x256 12000x32x384 32x20000x256 25000x24x200 40000x32x64 \
16000x64x100 64x30000x300 18000x40x480 32x12000x48 50000x16x160 20000x32x32 40000x32x16"
x3="32x20000x900 64x30000x600 48x40000x2048 20000x32x900 30000x64x600 96x30000x1024"
bf="4096x32x896 5000x48x800 8192x64x896 5500x56x1000 10000x40x768 4500x40x896 6000x60x896 \
5000x56x960"
round() {
    CM_BENCH_SWEEP_ONLY=fp32 exp_config_sweeps "fp32_$1.txt" "$fp" ffma:32x64x16 ffma:64x64x16 \
        ffma:128x128x16q3
    exp_say "fp32 round $1" | tee -a "$R/summary.txt"
    CM_BENCH_SWEEP_ONLY=3xtf32 exp_config_sweeps "x3_$1.txt" "$x3" sm90+3xtf32 ffma:32x64x16 \
        ffma:64x64x16
    exp_say "x3 round $1" | tee -a "$R/summary.txt"
    CM_BENCH_SWEEP_ONLY=bf16 exp_config_sweeps "bf16_$1.txt" "$bf" mma:64x64 sm90+bt
    exp_say "bf16 round $1" | tee -a "$R/summary.txt"
}
round 1
exp_test_runs none 200 'test_every*' 'test_3xtf32*' 'test_explain*' 'test_split_k*' \
    test_medium_odd test_skinny test_ffma_small_class >"$R/tests.txt" 2>&1
exp_say "tests" | tee -a "$R/summary.txt"
[ "${EXP_S100_ROUNDS:-2}" -ge 2 ] && round 2
exp_say "done" | tee -a "$R/summary.txt"
