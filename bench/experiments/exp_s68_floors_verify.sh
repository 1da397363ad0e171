#!/usr/bin/env bash
# Verifies 337cc3a as committed: TF32 under the realignment's flop floor with K >= 1024 takes
# the align1 form (CM__GEMM_REALIGN_A1_MIN_K), and the skinny kernel from K = 96 for a small side
# of 2-8 (CM__GEMM_SKINNY_MIN_K_NARROW); exp_s61 measured both as a patch (dispatch-floors.patch,
# now shipped). test_realigned, test_skinny, test_explain_matches_run and test_medium_odd plain,
# test_realigned and test_skinny under memcheck; then the default over exp_s61's shapes, two
# rounds (compare with exp_s61's v1024 / v96 columns). One device call, carry .deps. Into
# $OUT: tests.txt, a1.txt, mink.txt (scripts/sweep_compare.py --table), summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
{
    exp_test_runs none 240 test_realigned test_skinny test_explain_matches_run test_medium_odd
    exp_test_runs memcheck 300 test_realigned test_skinny
} >"$R/tests.txt" 2>&1
exp_step "tests done"
a1="16x2001x3001 12x2001x3001 16x1000x3001 8x1000x4001 64x127x3001 100x300x2001 127x127x3001 7x4096x4096"
exp_sweeps2 head "$a1" "tf32" 120 >"$R/a1.txt" 2>&1
mink="4096x12x255 12x4096x255 3001x8x200 5x10000x127 2x50000x100 7x4096x127 4096x7x127 8x8192x127 3x20000x96 6x6000x100"
exp_sweeps2 head "$mink" "fp32 tf32 bf16" 120 >"$R/mink.txt" 2>&1
exp_step "done"
