#!/usr/bin/env bash
# What C's row alignment costs: most FP32 sweep cases under 0.9x have M = 3001 or 127 (C's
# columns of 3001 / 127 floats, no 16-byte rows: the FFMA kernels' epilogues then store every
# element alone, 4 scalar stores where a 16-byte one would do, each warp store touching 4 rows
# x 4-5 sectors for 32 floats): FP32 3001 x 1000 x 64 TN 0.74x / NN 0.79x, 3001 x 127 x 1000
# 0.79-0.80x, 3001 x 4096 x 1000 TN 0.83x, 127 x 1000 x 3001 NN 0.84x at 7a784b2, where the
# aligned 1000 x 3001 x 127 runs 1.00-1.06x. No library change: bench_gemm's CM_BENCH_LDC_PAD
# (custom shapes only) stores C with ldc = m + 3 (3004 / 130: 16-byte rows), ours and cuBLAS's
# alike. The TN cases of K = 64 / 1000 have 16-byte A and B rows, so there only C moves. If
# ours gains much more than cuBLAS from the padding, an epilogue that stores whole row runs for
# such C (staged through shared memory) is worth writing; if not, the loss is elsewhere.
# One device call, carry .deps; on a machine that ran the full check or a fresh one. Into
# $OUT, 2 files:
#   ldc.txt      the sweep over $shapes (FP32, TF32, BF16; NN and TN), "=== config ldc+0#i" /
#                "=== config ldc+3#i", i = 1, 2, in turn
#   summary.txt  the exp_say lines
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
shapes="3001x1000x64 3001x127x1000 3001x4096x1000 3001x64x127 127x1000x3001 127x4096x127 1000x3001x64 4096x1000x64"
for i in 1 2; do
    for pad in 0 3; do
        echo "=== config ldc+$pad#$i"
        CM_BENCH_LDC_PAD=$pad CM_BENCH_SWEEP_SHAPES="$shapes" timeout 120 \
            env -u CM_BENCH_RESULTS build-gpu/bench/bench_gemm --sweep
    done
done >"$R/ldc.txt" 2>&1
exp_say "done" | tee -a "$R/summary.txt"
