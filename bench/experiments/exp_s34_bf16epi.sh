#!/usr/bin/env bash
# BF16 output on the Hopper kernel: the epilogue's 4-byte pair stores (a warp's store 8 rows of
# 16 bytes, half sectors) against sm90-bf16-store16.patch's 16-byte stores (the quad's lanes
# exchange their pairs with shuffles; rows of C on 16 bytes, beta 0; BF16 kernels only, the
# TF32 kernels' sm_90a SASS is unchanged). At 7a784b2 bf16o 4096^3 ran 0.93x cuBLAS TN and
# 0.91x NN where bf16 (FP32 out) ran 0.98x / 0.94x: cuBLAS gains from the halved C, we lose.
# One device call, carry .deps; reuses build-gpu/ of an earlier call on the same machine.
# Into $OUT, 3 files:
#   runs.txt     bench_gemm's default run (FP32 / TF32 / BF16 / BF16-out squares TN and NN,
#                the matrix-vector rows, batched, 3xTF32; no rows to the results file), then its
#                --quick run (the 4096^3 TN rows again), at the checkout ("=== config head#i")
#                and patched ("=== config store16#i")
#   tests.txt    test_gpu_gemm's test_sm90_bf16_store16 (new with the patch), test_sm90* and
#                test_large* plain, then test_sm90_bf16_store16 under memcheck
#   summary.txt  the exp_say lines
# The patch stays applied (exp_apply notes it); exp_unpatch takes it out.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
runs() {
    echo "=== config $1#1"
    timeout 150 env -u CM_BENCH_RESULTS build-gpu/bench/bench_gemm
    echo "=== config $1#2 (--quick)"
    timeout 60 env -u CM_BENCH_RESULTS build-gpu/bench/bench_gemm --quick
}
# CM_EXP_HEAD=0 leaves out the checkout's runs: after part b of scripts/gpu-check-part.sh in
# the same call, whose bench stage ran bench_gemm at the checkout on the same machine
if [ "${CM_EXP_HEAD:-1}" != 0 ]; then
    runs head >"$R/runs.txt" 2>&1
    exp_say "head done" | tee -a "$R/summary.txt"
fi
# not in a pipeline: a failed apply (exp_apply) ends the script
exp_patch_build bench/experiments/sm90-bf16-store16.patch >>"$R/summary.txt"
exp_say "patched build done" | tee -a "$R/summary.txt"
runs store16 >>"$R/runs.txt" 2>&1
exp_say "store16 done" | tee -a "$R/summary.txt"
{
    exp_test_runs none 300 test_sm90_bf16_store16 'test_sm90*' 'test_large*'
    exp_test_runs memcheck 200 test_sm90_bf16_store16
} >"$R/tests.txt" 2>&1
exp_say "done" | tee -a "$R/summary.txt"
