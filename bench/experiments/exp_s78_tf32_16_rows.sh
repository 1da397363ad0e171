#!/usr/bin/env bash
# Where TF32 at a small side of 16, column-major "NN" (A 16 x K contiguous along M, B's rows of
# an odd K: off 16 bytes), should leave skinny for mma.sync's align1 tiles. exp_s74 (H100,
# tf32-16-align1.patch, CM_TF32_16A1_EXP=2: "NN" only): 16x3001x2001 skinny 0.69 -> align1 in
# 5 parts 0.90-0.92x, 16x5000x1501 0.70 -> 1.11-1.13x (3 parts), but 16x8192x2001 0.90 -> 0.81
# (2 parts), 16x8191x4095 0.67-0.69 both, 16x10000x999 0.80 -> 0.76 (copied, sm90+at): the
# rows per SM seem to decide (23 and 38 won, 62 lost). Same patch, variants 0 / 2 over a grid
# of long sides 2000-7000 and K 1100-3001, so that a rows-per-SM bound can be set from data.
# One device call, carry .deps. Into $OUT: sweeps.txt, summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
p=bench/experiments/tf32-16-align1.patch
s="16x2000x2001 16x3001x1100 16x3001x3001 16x4000x1501 16x4000x2001 16x5000x2001 16x6000x1501 16x6000x2001 16x7000x1501 16x7000x3001 16x3001x2001 16x5000x1501"
exp_patch_variants "$p" CM_TF32_16A1_EXP "0 2" "$s" "tf32" 150
exp_unpatched "$p"
