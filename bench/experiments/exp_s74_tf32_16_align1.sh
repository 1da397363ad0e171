#!/usr/bin/env bash
# TF32 with a small side of 16 and rows off 16 bytes keeps the skinny kernel, which exp_s69 (H100)
# measured at 0.70x cuBLAS on 16 x 3001 x 2001 "NN" (mma:64x64 align1 forced 0.91-0.93x,
# mma:128x128 0.94-0.95x) and 0.78x on 16 x 10000 x 999 "NN" (mma:128x128 align1 0.91-0.96x),
# while "TN" there favoured skinny (0.96-1.01x). tf32-16-align1.patch, CM_TF32_16A1_EXP: 1 sends
# such products to the tiles (then the realignment picks align1 or the copy: 16 x 10000 x 999
# takes the copy to sm90+at / sm90+pack), 2 only with an operand MN-major ("NN"), 0 the tree.
# Rounds of 0 / 1 / 2, then mma:128x128 forced, then test_skinny and test_realigned with 1
# (plain, and test_realigned under memcheck). One device call, carry .deps; the patch is taken
# out at the end. Into $OUT: sweeps.txt, forced.txt, tests.txt, summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
p=bench/experiments/tf32-16-align1.patch
s="16x3001x2001 16x10000x999 16x8192x2001 16x2000x3001 16x4096x1001 3001x16x2001 16x5000x1501 16x8191x4095"
exp_patch_variants "$p" CM_TF32_16A1_EXP "0 1 2" "$s" "tf32" 150
CM_BENCH_SWEEP_ONLY="tf32" exp_config_sweeps forced.txt "$s" mma:128x128 mma:64x64 skinny
{
    CM_TF32_16A1_EXP=1 exp_test_runs none 300 test_skinny test_realigned test_explain_matches_run
    CM_TF32_16A1_EXP=1 exp_test_runs memcheck 300 test_realigned
} >"$R/tests.txt" 2>&1
exp_step "tests done"
exp_unpatched "$p"
