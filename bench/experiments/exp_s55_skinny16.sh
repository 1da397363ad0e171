#!/usr/bin/env bash
# Two open skinny questions of session 39, measured before any rule:
# - FP32 in the skinny kernel's 16-vector bucket with X staged before the matrix loads
#   (skinny-xfirst16.patch, CM_SKINNY_EXP=2 against 0; exp_s52: 12x4096x4096 TN 0.93 -> 1.02,
#   16x3001x2001 TN 1.05 -> 0.99): $shapes16, FP32, two rounds each (sweeps.txt);
# - TF32 "NN" with a small side of 12 .. 16 and odd K, where mma:64x64 beat skinny once
#   (16x3001x2001 NN 0.90 against 0.65, TN the reverse): scripts/gemm-sweep-configs.sh over
#   $tf32 (TF32, NN and TN), the default then skinny and mma:64x64 forced (configs.txt).
# One device call, carry .deps; the patch is taken out at the end. Into $OUT: sweeps.txt,
# configs.txt, summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
tf32="12x3001x2001 14x3001x2001 16x3001x2001 16x2001x3001 16x5000x1501 13x4096x1001 16x4096x1001 12x8192x999"
CM_BENCH_SWEEP_ONLY="tf32" exp_config_sweeps configs.txt "$tf32" skinny mma:64x64 |
    tee -a "$R/summary.txt"
p=bench/experiments/skinny-xfirst16.patch
shapes16="9x4096x4096 12x4096x4096 16x4096x4096 16x8192x8192 12x8192x1024 13x4096x2048 10x3001x2001 16x3001x2001 16x10000x999"
exp_patched "$p"
exp_variant_sweeps CM_SKINNY_EXP "0 2" "$shapes16" "fp32" 120 >"$R/sweeps.txt" 2>&1
exp_step "sweeps done"
exp_unpatched "$p"
