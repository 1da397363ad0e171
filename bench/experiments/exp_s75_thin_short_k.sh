#!/usr/bin/env bash
# The thin, short-K misses exp_s68 left (H100, default dispatch): TF32 4096x12x255 / 12x4096x255
# on FFMA tiles 0.79-0.87x cuBLAS (rows off 16 bytes, K under CM__GEMM_REALIGN_A1_MIN_K: no
# align1, below the flop floor: no copy), FP32 4096x12x255 NN 0.87 and 3001x8x200 NN 0.85 on
# ffma:32x64x16. No patch: the default against each forced kernel (mma:64x64 / mma:128x128 run
# their align1 form on such rows when forced), two rounds, to find whether the align1 floor
# could go lower for a thin C and which FFMA tile suits these. One device call, carry .deps.
# Into $OUT: configs1.txt, configs2.txt (scripts/sweep_compare.py --table), summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
shapes="4096x12x255 12x4096x255 3001x8x200 4096x16x255 8192x12x255 3001x12x500 12x3001x500 4096x12x767"
CM_BENCH_SWEEP_ONLY="fp32 tf32" exp_config_rounds "$shapes" mma:64x64 mma:128x128 \
    ffma:32x64x16 ffma:64x64x16 skinny
exp_step "done"
