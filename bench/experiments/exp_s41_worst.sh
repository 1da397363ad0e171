#!/usr/bin/env bash
# The sweep's worst cases at d3c2943 (bench/NOTES-gemm.md, session 34), each against every
# kernel the library could run instead: bf16 3001 x 1000 x 64 NN 0.744 (sm90+pack+copy), bf16
# 7 x 3001 x 3001 NN 0.747 and TF32 7 x 4096 x 4096 NN 0.787 (skinny in 2 parts), bf16 4096 x
# 64 x 1000 TN 0.794 and TF32 NN 0.815 (mma), bf16 64 x 4096 x 4096 TN 0.807 (sm90 in 2
# parts), FP32 3001 x 4096 x 1000 TN 0.828 (ffma). A dispatch question only (no patch): where a
# forced kernel beats the default beyond the two rounds' spread, the table or a rule moves.
# One device call, carry .deps; reuses build-gpu/ of an earlier call on the same machine (~60 s
# of build on a fresh one). Into $OUT, 2 files:
#   worst.txt    scripts/gemm-sweep-configs.sh's sweeps over $shapes (FP32, TF32, BF16, NN
#                and TN): the default, then each forced, twice (sweep_compare.py --table)
#   summary.txt  the exp_say lines
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
shapes="3001x1000x64 7x3001x3001 7x4096x4096 4096x64x1000 64x4096x4096 3001x4096x1000"
exp_config_sweeps worst.txt "$shapes" sm90 sm90+bt skinny mma:64x64 mma:128x128 \
    ffma:64x64x16 ffma:128x128x16q3 splitk=1 sm90 skinny mma:64x64 ffma:64x64x16 |
    tee -a "$R/summary.txt"
exp_say "done" | tee -a "$R/summary.txt"
