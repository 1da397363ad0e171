#!/usr/bin/env bash
# The first GPU run of c9b3497 (TF32 rule 3's narrow columns from 40: the register-A form on
# C^T with K whole for 40-63 columns where C^T's 128-row tiles number sms / 3) and 6cceba7
# (cm__gemm_sm90_at_too_narrow: under 40 columns mma:64x64 past the tiny class too, K 512 ..
# 1023). The default against sm90+at and mma:64x64 forced, TF32 only, two rounds: the shapes
# behind the rules (12000 x 32 x 900, 6000 x 56 x 1000, 5600 x 48 x 800, 6000 x 40 x 700) and
# held-out ones (20000 x 24 x 700, 16000 x 36 x 600, 10000 x 32 x 512, 12000 x 48 x 900,
# 9000 x 40 x 1000, 7000 x 44 x 800). The default should match the better forced column in
# "NN" (the rules' side) and stay where it was in "TN" (sm90). Then test_gpu_gemm's dispatch
# tests (test_every*, test_sm90*). One device call (~4 min cold), carry .deps. Into $OUT:
# narrow1.txt, narrow2.txt, tall_fp32.txt, tall_bf16.txt, tests.txt, summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
shapes="12000x32x900 6000x56x1000 5600x48x800 6000x40x700 20000x24x700 16000x36x600 \
10000x32x512 12000x48x900 9000x40x1000 7000x44x800"
for i in 1 2; do
    CM_BENCH_SWEEP_ONLY=tf32 exp_config_sweeps "narrow$i.txt" "$shapes" sm90+at mma:64x64
done
# Tall and narrow C for FP32 and BF16 (unmeasured): the dispatch's class changes near 8700
# rows on 132 multiprocessors (FP32 32 x 64 tiles in 4 parts -> 64 x 64 whole -> from ~20000
# rows 128 x 128 tiles over 32 columns; BF16 mma:64x64 in 2 parts -> sm90+pack / sm90+bt).
# One round each, the default against the tiles either side: tall_fp32.txt, tall_bf16.txt.
tall="8192x32x900 12000x32x900 20000x32x900 20000x48x1024 16384x32x1024 30000x64x512 9000x32x2000"
CM_BENCH_SWEEP_ONLY=fp32 exp_config_sweeps tall_fp32.txt "$tall" ffma:32x64x16 ffma:64x64x16 \
    ffma:128x128x16q3
CM_BENCH_SWEEP_ONLY=bf16 exp_config_sweeps tall_bf16.txt "$tall" mma:64x64 sm90+pack sm90+bt
exp_test_runs none 280 'test_every*' 'test_sm90*' >"$R/tests.txt" 2>&1
exp_say "done" | tee -a "$R/summary.txt"
