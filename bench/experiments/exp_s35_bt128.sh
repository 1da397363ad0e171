#!/usr/bin/env bash
# BF16 "NN" on the transposed-B form ("sm90+bt") whose MN-major B (the user's column-major A,
# rows of M elements) has rows of 16 but not 128 bytes: bf16 1000 x 4096 x 4096 NN (rows of
# 2000 bytes) ran 0.79-0.84x cuBLAS in every sweep since the form shipped, the same shape TN
# 1.00-1.05x, 4096^3 NN (rows of 8192 bytes) as fast as TN. stage128.patch's second arm
# (cm__gemm_bt128) copies such a B first, still MN-major, into rows of whole 128-byte lines
# (one cudaMemcpy2DAsync into scratch from the device's pool) where one matrix, K >= 256 and
# the side not copied (the kernel's M, the user's N) >= CM__GEMM_BT128_MIN_M (2048;
# CM_EXP_BT128_M overrides). One device call, carry .deps; on a machine that ran the full
# check (build-gpu/ reused) or a fresh one (~70 s of build). If exp_s33_stage128.sh ran
# before on the same machine, its build left the patch in build-gpu/ (exp_apply's note:
# gpu-check.sh rebuilds the noted files at the checkout first).
# Into $OUT, 3 files (the sweep's kernel column says what ran; "+copy" where B was copied):
#   bt.txt       BF16 shapes whose A has rows of 2000 / 4000 / 6000 / 8000 bytes (M = 1000 ..
#                4000) against 2048 / 8192 (M = 1024, 4096), N from 1024 to 8192, K 4096, NN
#                (the arm) and TN (unchanged): twice at the checkout ("=== config head#i"),
#                twice patched ("stage128#i"), once patched with CM_EXP_BT128_M=0 ("bt0#1":
#                every such shape copied, to see where the floor belongs). Ship the arm if
#                the copied NN shapes gain beyond head#1 / head#2's spread and the controls
#                (M = 1024 / 4096, every TN) do not move; set the floor from bt0.
#   tests.txt    test_gpu_gemm's test_sm90_stage128 (the arm's correctness: forced "sm90+bt",
#                copied and not) and test_sm90_mn_b with the patch, plain, then under memcheck
#   summary.txt  the exp_say lines
# The patch stays applied (exp_apply notes it for the next build); exp_unpatch takes it out.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
bt="1000x4096x4096 2000x4096x4096 3000x4096x4096 4000x4096x4096 1024x4096x4096 4096x4096x4096 1000x1024x4096 1000x2048x4096 1000x8192x4096"
exp_sweeps_ab bt.txt bench/experiments/stage128.patch stage128 "$bt" "bf16" 120
exp_sweep1 "bt0#1" "$bt" "bf16" 120 CM_EXP_BT128_M=0 >>"$R/bt.txt" 2>&1
exp_say "bt0 done" | tee -a "$R/summary.txt"
{
    exp_test_runs none 200 test_sm90_stage128 test_sm90_mn_b
    exp_test_runs memcheck 200 test_sm90_stage128
} >"$R/tests.txt" 2>&1
exp_say "tests done" | tee -a "$R/summary.txt"
exp_say "done" | tee -a "$R/summary.txt"
