#!/usr/bin/env bash
# Verifies three dispatch rules as committed (no patch): Hopper FP32 64x64x16 / 32x64x16 tiles
# take their q3 forms where the plan splits K; TF32 below the realignment floor takes the
# 64 x 64 tiles' align1 form where the copied form would take the Hopper kernel; a TF32 skinny
# product with both operands K-contiguous takes the tensor-core tiles under K = 1024 where the
# 64 x 64 tiles over C cover 3/4 of the SMs. GEMM tests plain and under memcheck, then the
# default against the forced old choices on the shapes concerned. One device call, carry .deps.
# Into $OUT: tests.txt, tf32.txt, fp32.txt (gemm-sweep-configs tables), summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
{
    exp_test_runs none 300 test_every_config "test_split_k*" test_realigned test_skinny \
        test_medium_odd test_explain_matches_run test_sm90_mn_tf32
    exp_test_runs memcheck 300 test_realigned test_medium_odd test_skinny
} >"$R/tests.txt" 2>&1
exp_step "tests done"
t="64x127x3001 127x127x3001 100x300x2001 3001x12x2001 3001x16x2001 7000x16x300 7000x12x300 16x8192x512 12x8192x512 4096x12x256 2000x16x300 4096x16x512"
CM_BENCH_SWEEP_ONLY="tf32" exp_config_sweeps tf32.txt "$t" skinny ffma:64x64x16 mma:64x64
f="64x64x4096 64x64x8192 1000x127x3001 500x500x3001 1000x1000x1000 4096x64x2000 200x200x8192"
CM_BENCH_SWEEP_ONLY="fp32" exp_config_sweeps fp32.txt "$f" ffma:64x64x16 ffma:32x64x16
exp_step "done"
