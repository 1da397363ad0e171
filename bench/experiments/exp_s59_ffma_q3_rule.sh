#!/usr/bin/env bash
# The pipelined small FFMA tiles as a Hopper FP32 rule (exp_s30_ffmaq3 on the H200: forced
# 64x64x16q3 beat 64x64x16 on 9 of 11 shapes by 5-21 %, lost at K = 64 and 1000^3 TN).
# ffma-q3-rule.patch ships 64x64x16q3 and 32x64x16q3 and adds CM_FFMA_Q3_EXP to
# cm__gemm_select: 1 turns the FP32 Hopper choice 64x64x16 into 64x64x16q3 from K >= 256; 2
# also 32x64x16 into 32x64x16q3; 0: as the tree. Rounds of 0 / 1 / 2 over the whole FP32 sweep
# (sweeps.txt, for scripts/sweep_compare.py --table), then test_gpu_gemm's test_every_config
# and test_medium_odd with CM_FFMA_Q3_EXP=2, plain and under memcheck (tests.txt). One device
# call, carry .deps; the patch is taken out at the end. Into $OUT: sweeps.txt, tests.txt,
# summary.txt. S59_LAST=1 (the session's last device call): no rebuild without the patch at
# the end (~90 s; build-gpu/.cm-patched still names the patched files for the next build).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
p=bench/experiments/ffma-q3-rule.patch
exp_patched "$p"
for round in 1 2; do
    for v in 0 1 2; do
        echo "=== config v$v#$round"
        CM_FFMA_Q3_EXP=$v CM_BENCH_SWEEP_ONLY=fp32 timeout 150 \
            env -u CM_BENCH_RESULTS build-gpu/bench/bench_gemm --sweep
    done
done >"$R/sweeps.txt" 2>&1
exp_step "sweeps done"
{
    CM_FFMA_Q3_EXP=2 exp_test_runs none 300 test_every_config test_medium_odd "test_split_k*"
    CM_FFMA_Q3_EXP=2 exp_test_runs memcheck 300 test_medium_odd
} >"$R/tests.txt" 2>&1
exp_step "tests done"
[ "${S59_LAST:-0}" = 1 ] || exp_unpatched "$p"
