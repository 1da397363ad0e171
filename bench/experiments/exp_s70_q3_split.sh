#!/usr/bin/env bash
# The pipelined small FFMA tiles only where the plan splits K (ffma-q3-rule.patch,
# CM_FFMA_Q3_EXP=3; 2: everywhere from K = 256; 0: the tree). exp_s59 (H100, the whole FP32
# sweep, v2 against v0): 64x64x4096 +12-15 %, 1000x127x3001 +9-11 %, 127x1000x3001 TN +5 % (all
# split); 1000^3 "TN" (one part) -4 %, 4096x64x1000 TN (4 parts) -6 % within a 6 % spread.
# Rounds of 0 / 2 / 3 over the whole FP32 sweep plus split shapes, then test_every_config and
# test_split_k with 3 plain and test_medium_odd under memcheck. One device call, carry .deps;
# the patch is taken out at the end (S70_LAST=1: not rebuilt). Into $OUT: sweeps.txt,
# extra.txt (scripts/sweep_compare.py --table), tests.txt, summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
p=bench/experiments/ffma-q3-rule.patch
exp_patch_variants "$p" CM_FFMA_Q3_EXP "0 2 3" "" "fp32" 150
extra="64x64x8192 128x128x8192 96x200x4096 200x200x8192 1000x1000x1000 2000x2000x1000 4096x64x2000 64x2048x2048 500x500x3001"
exp_variant_sweeps CM_FFMA_Q3_EXP "0 3" "$extra" "fp32" 150 >"$R/extra.txt" 2>&1
exp_step "extra done"
{
    CM_FFMA_Q3_EXP=3 exp_test_runs none 300 test_every_config "test_split_k*" test_medium_odd
    CM_FFMA_Q3_EXP=3 exp_test_runs memcheck 300 test_medium_odd
} >"$R/tests.txt" 2>&1
exp_step "tests done"
if [ "${S70_LAST:-0}" = 1 ]; then exp_step "left patched (S70_LAST)"; else exp_unpatched "$p"; fi
