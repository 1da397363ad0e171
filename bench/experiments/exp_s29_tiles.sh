#!/usr/bin/env bash
# For the session after 28 (its plan's item 1): FP32 shapes off the sweep where the dispatch
# runs 64 x 64 FFMA tiles in split-K and cuBLAS is far ahead (768^2 x 4096 0.70x, 1024^2 x
# 8192 0.78x at 50d8002), under the dispatch's choice and forced onto the shipped 128 x 128
# tiles (scripts/gemm-sweep-configs.sh: one sweep per configuration into $OUT/sweeps.txt).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build
export CM_BENCH_SWEEP_ONLY=fp32
export CM_BENCH_SWEEP_SHAPES="768x768x4096 1024x1024x8192 512x2048x8192 256x4096x4096 96x5000x3000 640x640x2048 2048x256x4096 1024x512x4096"
OUT="$R" bash scripts/gemm-sweep-configs.sh ffma:128x128x16q3 ffma:128x128x8 ffma:64x64x16 \
    ffma:128x128x16q3,splitk=4 ffma:128x128x16q3,splitk=8
exp_say "done"
