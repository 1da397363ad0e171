#!/usr/bin/env bash
# The sweep's worst misses of the H100 check at a9861d7 (session 48, part b: 26 cases under
# 0.9x) under every forced configuration, to find the existing kernel / split that runs each
# best before changing a rule: FP32 3001 x 127 x 1000 (0.78-0.80x), 3001 x 4096 x 1000
# (0.82-0.85x), 1000^3 NN (0.86x), 127 x 1000 x 3001 (FP32 0.86x, TF32 0.84-0.85x, BF16 0.83x);
# BF16 4096 x 64 x 1000 (0.78-0.82x), 3001 x 1000 x 64 (0.82x, TF32 0.87x), 127 x 4096 x 127
# (0.83x), 64 x 4096 x 4096 TN (0.85x), 1000 x 4096 x 4096 NN (0.85x); TF32 64 x 3001 x 2001
# TN (sm90+copy 0.64x in exp_s88). scripts/gemm-sweep-configs.sh's default list plus splitk =
# 2 and 4, all precisions, two rounds. One device call (~2 min cold), carry .deps. Into $OUT:
# configs1.txt, configs2.txt, summary.txt. Compare: scripts/sweep_compare.py --table.
# Then the gemv misses (127 x 1 x 3001 "NN" 0.78-0.84x: 4 blocks of 32 rows run all of K, no
# split under CM__SPLITK_GEMV_MIN_ROWS; 4096 x 1 x 4096 BF16 "NN" 0.90x, 3001 x 1 x 3001 "TN"
# 0.96x) and held-out ones (64 / 200 / 300 rows, K 1500-8192) under splitk = 2 .. 32 forced, two
# rounds: gemv1.txt, gemv2.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
shapes="3001x127x1000 3001x4096x1000 1000x1000x1000 127x1000x3001 4096x64x1000 3001x1000x64 \
127x4096x127 64x4096x4096 1000x4096x4096 64x3001x2001"
exp_config_rounds "$shapes" sm90 sm90+bt sm90+at skinny mma:64x64 mma:128x128 ffma:32x64x16 \
    ffma:64x64x16 splitk=2 splitk=4
exp_step "configs done"
gemv="127x1x3001 1x127x3001 4096x1x4096 3001x1x3001 64x1x4096 200x1x2000 300x1x8192 127x1x1500 \
1000x1x4096 512x1x3001"
for i in 1 2; do
    exp_config_sweeps "gemv$i.txt" "$gemv" splitk=2 splitk=4 splitk=8 splitk=16 splitk=32
done
exp_step "gemv done"
