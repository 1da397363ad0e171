#!/usr/bin/env bash
# TF32 "TN" products of the tiny class that rule 1 of cm__gemm_sm90_tiny gives the Hopper kernel
# (src/compute/gemm_api.c): at K 1000-1500 exp_s84 (H100) measured mma:64x64 forced, in the
# parts of 256 of K then, above it on 6 of 7 shapes (128^2 x 1500 0.80x against 0.67x,
# 256 x 128 x 1200 0.84 / 0.72, 64^2 x 1000 0.95 / 0.74, 256^2 x 1100 0.89 / 0.73, 512 x 256
# x 1500 1.01 / 0.93, 1000 x 64 x 1200 0.97 / 0.83, 3001 x 16 x 1500 1.20 / 0.88; 128^2 x 1024
# 0.87 / 0.96-1.00). Since fe7b9a5 TF32 on mma.sync splits in parts of at least 128. The
# default against mma:64x64 forced (its own split) over K 500-4096, rule 1's measured shapes
# (64^2 x 4096, 7 x 4096 x 4096, 127 x 3001 x 1000, 512^3) included, two rounds (no patch),
# TF32 only. One device call, carry .deps. Into $OUT: configs1.txt, configs2.txt, summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
shapes="128x128x1500 256x128x1200 64x64x1000 128x128x1024 256x256x1100 512x256x1500 \
1000x64x1200 3001x16x1500 64x64x700 256x256x600 384x384x600 1024x256x700 300x700x900 512x512x512 \
64x64x4096 7x4096x4096 127x3001x1000 128x128x2048 256x256x3000 100x100x5000 64x4096x1000"
CM_BENCH_SWEEP_ONLY=tf32 exp_config_rounds "$shapes" mma:64x64
exp_step "configs done"
