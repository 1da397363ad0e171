#!/usr/bin/env bash
# FP32 / TF32 skinny products with a small side of exactly 16 run far behind cuBLAS in "NN"
# (exp_s55, H200: 16x4096x4096 0.66-0.70, 16x8192x8192 0.52-0.53, 16x10000x999 0.59-0.63) where
# sides of 12-14 run 0.98-1.70 in the same 16-vector form. Which kernel cuBLAS's speed calls
# for: scripts/gemm-sweep-configs.sh over sides 12 / 16 / 24 in both orientations, the default
# then skinny, ffma:32x64x16, ffma:64x64x16 and mma:64x64 forced, FP32 and TF32. No patch.
# One device call, carry .deps. Into $OUT: configs.txt (scripts/sweep_compare.py --table).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build
shapes="16x4096x4096 12x4096x4096 24x4096x4096 16x8192x8192 16x10000x999 16x3001x2001 4096x16x4096 8192x16x8192"
CM_BENCH_SWEEP_ONLY="fp32 tf32" exp_config_sweeps configs.txt "$shapes" skinny ffma:32x64x16 \
    ffma:64x64x16 mma:64x64
exp_say "done"
