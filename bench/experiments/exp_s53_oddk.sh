#!/usr/bin/env bash
# The odd-K skinny shapes under the bucketed skinny kernel (e21d33e) against the kernels the
# dispatch could give them instead: scripts/gemm-sweep-configs.sh over $odd (TF32, BF16, NN and
# TN), the default then skinny, mma:64x64, sm90, sm90+pack forced. exp_s50's configs.txt alone
# (its tests ran in the full check). One device call, carry .deps. Into $OUT: configs.txt,
# summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
odd="16x3001x2001 8x3001x2001 12x3001x2001 16x4096x1001 7x4096x4095 12x4096x4096 8x4096x4096 5x10000x999"
CM_BENCH_SWEEP_ONLY="tf32 bf16" exp_config_sweeps configs.txt "$odd" skinny mma:64x64 sm90 \
    sm90+pack | tee -a "$R/summary.txt"
