#!/usr/bin/env bash
# Two dispatch bounds measured before any rule (dispatch-floors.patch adds the switches):
# - CM_A1_EXP=N: TF32 products under the realignment's 2^28-flop floor with K >= N take the
#   mma.sync tiles' align1 form (no copy) instead of FFMA (exp_s55: 16x2001x3001 NN / TN ffma
#   0.73 / 0.72 against forced mma:64x64 align1 0.93 / 0.86); rounds of 0 / 1024 over $a1;
# - CM_SKMINK_EXP=N in place of CM__GEMM_SKINNY_MIN_K (256) (exp_s54: 12x4096x255 skinny 1.24 /
#   1.17 against mma+copy 0.98 / 0.91); rounds of 256 / 128 / 96 over $mink, FP32, TF32, BF16.
# Then test_skinny, test_realigned, test_explain_matches_run, test_medium_odd with both
# switches on (a test that asserts the tree's choice by name may fail: read its message), and
# test_realigned under memcheck. One device call, carry .deps; the patch is taken out at the
# end. Into $OUT: a1.txt, mink.txt (scripts/sweep_compare.py --table), tests.txt, summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
p=bench/experiments/dispatch-floors.patch
exp_patched "$p"
a1="16x2001x3001 12x2001x3001 16x1000x3001 8x1000x4001 64x127x3001 100x300x2001 127x127x3001"
exp_variant_sweeps CM_A1_EXP "0 1024" "$a1" "tf32" 120 >"$R/a1.txt" 2>&1
exp_step "a1 sweeps done"
mink="4096x12x255 12x4096x255 3001x8x200 5x10000x127 16x4096x160 2x50000x100 7x4096x127 4096x7x127 16x10000x200 8x8192x127"
exp_variant_sweeps CM_SKMINK_EXP "256 128 96" "$mink" "fp32 tf32 bf16" 120 >"$R/mink.txt" 2>&1
exp_step "mink sweeps done"
{
    CM_A1_EXP=1024 CM_SKMINK_EXP=96 exp_test_runs none 240 test_skinny test_realigned \
        test_explain_matches_run test_medium_odd
    CM_A1_EXP=1024 CM_SKMINK_EXP=96 exp_test_runs memcheck 240 test_realigned
} >"$R/tests.txt" 2>&1
exp_step "tests done"
exp_unpatched "$p"
