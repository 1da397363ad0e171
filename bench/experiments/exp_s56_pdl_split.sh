#!/usr/bin/env bash
# Why pdl-stage.patch failed five tests (exp_s49): pdl-stage-switch.patch is that patch with a
# run-time switch, CM_PDL_STAGE=0 launching every GEMM as the checkout does (cm__gemm_args_t
# keeps its new field and the staging kernels their griddepcontrol.launch_dependents). Each
# failing test runs with the switch on and off in one patched build: failing only "on" points
# at the dependent launch (a kernel reading A / B before its wait, or the chain of three), failing
# "off" too at the build or the struct. One device call, carry .deps. Into $OUT: tests.txt
# (exit status and last lines of each run), summary.txt. The patch is taken out at the end.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
p=bench/experiments/pdl-stage-switch.patch
exp_patched "$p"
for on in 1 0; do
    for f in test_split_k test_sm90_mn_tf32 test_split_k_forced test_explain_matches_run; do
        CM_PDL_STAGE=$on exp_test_runs none 180 "$f" | sed "s/^=== /=== pdl=$on /"
    done
    CM_PDL_STAGE=$on exp_test_exe none 240 test_gpu_gemm_batched test_batched_forced |
        sed "s/^=== /=== pdl=$on /"
done >"$R/tests.txt" 2>&1
exp_step "tests done"
exp_unpatched "$p"
