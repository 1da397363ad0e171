#!/usr/bin/env bash
# pdl-stage.patch: the GEMM after the operand staging as a programmatic dependent launch of the
# staging's kernel (kernels/pdl.cuh), as split-K's reduction after its parts since 58dd0b3
# (3-15 % on the split shapes then). The staging kernels (gemm_pack.cu: the transpose, the
# pair kernel, the row copy) trigger their dependents at their start; the Hopper and mma.sync
# GEMM kernels wait (griddepcontrol.wait) before they read A and B, so their launch, block
# scheduling and prologue (barriers, shared memory, tensor-map fetch) overlap the staging's
# tail instead of following the kernel boundary. Set by cm__gemm_args_t::pdl where
# cm__gemm_stage queued a kernel right before (sm90+pack / +bt / +at, the realignment on sm_90
# devices), CM__GEMM_SM90_DEPENDENT for the Hopper launcher; the FFMA, gemv and skinny
# launchers ignore it (their kernels have no wait). The sweep's staged products ("+copy") are
# most of its cases under 0.9x: bf16 3001 x 1000 x 64 NN 0.74-0.82x, TF32 4096 x 4096 x 64 NN
# 0.87x, bf16 127 x 4096 x 127 / 3001 x 64 x 127 / 127^3 NN 0.64-0.99x on one H100 day.
# The sweep plans are unchanged with the patch (host tests: test_gemm_plans, test_gemm_args).
# One device call, carry .deps, ~6-7 minutes; reuses build-gpu/ of an earlier call (~75 s of
# build on a fresh one; the patch rebuilds gemm_sm90 / gemm_mma / gemm_pack / gemm_api).
# Into $OUT, 3 files:
#   staged.txt   bench_gemm's sweep over $shapes (TF32, BF16; NN and TN) at the checkout
#                ("head#1", "head#2"), then with the patch ("pdl#1", "pdl#2");
#                scripts/sweep_compare.py --table reads it
#   tests.txt    with the patch: test_gpu_gemm's staged paths (test_realigned, test_sm90*,
#                test_small_skinny_packed, test_split_k*, test_explain*, test_every*) plain and
#                test_realigned / test_sm90* under memcheck and racecheck; test_gpu_gemm_batched
#                and test_gpu_gemm_threads plain
#   summary.txt  the exp_say lines
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
p=bench/experiments/pdl-stage.patch
shapes="4096x4096x64 3001x1000x64 1000x3001x127 127x4096x127 3001x64x127 4096x127x127 127x127x127 1000x127x3001 127x1000x3001 1000x1000x1000 3001x3001x3001 4096x4096x3001"
exp_sweeps_ab staged.txt "$p" pdl "$shapes" "tf32 bf16" 200
{
    exp_test_runs none 280 test_realigned 'test_sm90*' test_small_skinny_packed 'test_split_k*' \
        'test_explain*' 'test_every*'
    exp_test_runs memcheck 240 test_realigned 'test_sm90*'
    exp_test_runs racecheck 240 test_realigned
    exp_test_exe none 240 test_gpu_gemm_batched
    exp_test_exe none 240 test_gpu_gemm_threads
} >"$R/tests.txt" 2>&1
exp_say "tests done" | tee -a "$R/summary.txt"
exp_unpatch_build "$p"
exp_say "done" | tee -a "$R/summary.txt"
