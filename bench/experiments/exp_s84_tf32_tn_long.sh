#!/usr/bin/env bash
# TF32 products that stayed under 0.9x cuBLAS after session 45 (H100, exp_s82): "TN" tiny ones
# on the Hopper kernel at K 1000-1500 (128^2 x 1500 0.67x in 6 parts, 0.53x whole; 256 x 128 x
# 1200 0.73x; 64^2 x 1000 0.73-0.75x), 2048 x 128 x 500 TN 0.87x (mma:64x64 in 2), and the thin
# align1 16 x 6000 x 2001 NN (0.81x in 2 parts, 0.92x whole). The default against forced
# mma:64x64 (with its TF32 split), mma:128x128, sm90 in 2 / 8 parts and splitk 1 / 2 / 8, two
# rounds (no patch). One device call, carry .deps. Into $OUT: configs1.txt, configs2.txt,
# summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
shapes="128x128x1500 256x128x1200 64x64x1000 128x128x1024 256x256x1100 512x256x1500 \
2048x128x500 1000x64x1200 16x6000x2001 16x4000x2001 6000x16x2001 3001x16x1500"
CM_BENCH_SWEEP_ONLY=tf32 exp_config_rounds "$shapes" mma:64x64 mma:128x128 sm90,splitk=2 \
    sm90,splitk=8 splitk=1 splitk=2 splitk=8
exp_step "configs done"
