#!/usr/bin/env bash
# The skinny kernel's 16-vector form with X staged before the matrix loads only where X is
# K-contiguous (skinny-xfirst16.patch: CM_SKINNY_EXP=3; 2 everywhere; 0 as the tree). exp_s55
# (H200, FP32): everywhere gained "TN" 5-14 % at 9-16 x 4096 x 4096 and lost 9x4096x4096 NN 1-3
# % and 16x3001x2001 TN 3 %. Rounds of 0 / 2 / 3 over FP32 and TF32 (the small side on M and
# on N: with the small side on N, "NN" has X K-contiguous), then test_skinny with 3 and 2.
# One device call, carry .deps; the patch is taken out at the end. Into $OUT: sweeps.txt
# (scripts/sweep_compare.py --table), tests.txt, summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
p=bench/experiments/skinny-xfirst16.patch
shapes="9x4096x4096 12x4096x4096 16x4096x4096 12x8192x1024 13x4096x2048 10x3001x2001 16x3001x2001 16x10000x999 4096x12x4096 3001x16x2001"
exp_patch_variants "$p" CM_SKINNY_EXP "0 2 3" "$shapes" "fp32 tf32" 120
{
    CM_SKINNY_EXP=3 exp_test_runs none 240 test_skinny
    CM_SKINNY_EXP=2 exp_test_runs none 240 test_skinny
} >"$R/tests.txt" 2>&1
exp_step "tests done"
exp_unpatched "$p"
