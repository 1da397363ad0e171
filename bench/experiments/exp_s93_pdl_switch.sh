#!/usr/bin/env bash
# The GEMM after the operand staging as a programmatic dependent launch, measured per shape
# with the run-time switch of pdl-stage-switch.patch (CM_PDL_STAGE=0: every GEMM launched as the
# checkout does; 1: the dependent launch), both in one patched build and two rounds each, so
# that a rule can say where it pays: exp_s49 measured the patch against the checkout only once
# (mixed: 1000x3001x127 +8-10 %, bf16 127x1000x3001 NN -18 %) and its five test failures were
# a wrong argument of the narrow register-A launch, mended before exp_s56 passed them on and
# off. Shapes: the staged products ("+copy" / "sm90+pack") of the sweep under 0.9x and held-out
# ones (other K, M-contiguous A over other M). Then the staged tests with the switch on, plain,
# and test_realigned / test_sm90* under memcheck. One device call (~5 min warm), carry .deps.
# Into $OUT: sweeps.txt (scripts/sweep_compare.py --table reads it: v0#1 v1#1 v0#2 v1#2),
# tests.txt, summary.txt. The patch is taken out at the end.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
p=bench/experiments/pdl-stage-switch.patch
shapes="3001x1000x64 4096x4096x64 2001x1500x96 1000x3001x127 127x4096x127 3001x64x127 \
4096x127x127 127x127x127 1000x127x3001 127x1000x3001 1000x4096x4096 3001x3001x3001"
exp_patch_variants "$p" CM_PDL_STAGE "0 1" "$shapes" "tf32 bf16" 150
{
    CM_PDL_STAGE=1 exp_test_runs none 240 test_realigned 'test_sm90*' 'test_split_k*' \
        'test_explain*'
    CM_PDL_STAGE=1 exp_test_runs memcheck 240 test_realigned 'test_sm90*'
} >"$R/tests.txt" 2>&1
exp_step "tests done"
exp_unpatched "$p"
