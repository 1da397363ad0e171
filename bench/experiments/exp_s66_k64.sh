#!/usr/bin/env bash
# The sweep's K = 64 "NN" misses (part b at 63a8fae, H200: bf16 3001x1000x64 0.78x cuBLAS,
# tf32 0.82x, both sm90+pack+copy; tf32 4096x4096x64 0.85x; bf16 4096x4096x64 sm90+bt 0.89x):
# which kernel and staging cuBLAS's speed calls for. scripts/gemm-sweep-configs.sh over K = 64
# shapes (A's rows off 16 bytes at M = 3001, on them at 4096 / 1000), the default then
# sm90, sm90+bt, sm90+at, mma:64x64, mma:128x128, ffma:64x64x16 forced, bf16 and tf32. No
# patch. One device call, carry .deps. Into $OUT: configs.txt (scripts/sweep_compare.py
# --table).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build
shapes="3001x1000x64 1000x3001x64 4096x4096x64 3001x3001x64 2048x2048x64 4096x1024x64"
CM_BENCH_SWEEP_ONLY="bf16 tf32" exp_config_sweeps configs.txt "$shapes" sm90 sm90+bt sm90+at \
    mma:64x64 mma:128x128 ffma:64x64x16
exp_say "done"
