#!/usr/bin/env bash
# Skinny products (M or N at most 16) whose K-contiguous rows are not 16-byte aligned (odd K)
# against every kernel the library could run instead. At session 35 on an H100 the skinny
# kernel ran bf16 16 x 3001 x 2001 NN at 0.35-0.37x cuBLAS (TN 0.55-0.60), 7 x 4096 x 4095 NN
# 0.52-0.54x, TF32 16 x 3001 x 2001 NN 0.57-0.61x; the sweep's 7 x 3001 x 3001 NN 0.70-0.75x
# on both cards. The aligned controls (16 x 3001 x 2000, 7 x 4096 x 4096) show what the rows'
# alignment costs. A dispatch question (no patch): where a forced kernel beats the default
# beyond the two rounds' spread, the skinny rule takes odd K out or moves its floor. One
# device call, carry .deps; reuses build-gpu/ of an earlier call (~75 s of build on a fresh
# one). Into $OUT, 2 files:
#   skinny.txt   scripts/gemm-sweep-configs.sh's sweeps over $shapes (TF32, BF16, NN and TN):
#                the default, then each forced, twice (sweep_compare.py --table)
#   summary.txt  the exp_say lines
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
shapes="16x3001x2001 16x3001x2000 7x4096x4095 7x4096x4096 7x3001x3001 5x10000x999 8x3001x2001 16x4096x1001"
CM_BENCH_SWEEP_ONLY="tf32 bf16" exp_config_sweeps skinny.txt "$shapes" skinny mma:64x64 \
    sm90 sm90+pack splitk=1 skinny mma:64x64 sm90 sm90+pack | tee -a "$R/summary.txt"
exp_say "done" | tee -a "$R/summary.txt"
