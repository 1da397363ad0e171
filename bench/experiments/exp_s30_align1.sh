#!/usr/bin/env bash
# The TF32 "align1" form of the mma.sync tiles (kernels/gemm_mma.cu: every element of A and B
# its own 4-byte cp.async, any base and leading dimension; CM__GEMM_MMA_ALIGN1, 0 in the tree),
# built for this experiment by mma-align1-on.patch (gemm_mma.cu alone recompiles). With it,
# a TF32 product whose realignment copy would lead to mma.sync tiles runs those tiles on its
# operands as they are, and a forced mma:64x64 / mma:128x128 runs them on any TF32 product
# without 16-byte rows (e.g. 127 x 1000 x 3001 "NN", which copies both operands and runs the
# Hopper kernel in 9 parts today: 0.63x cuBLAS; cuBLAS runs an align1 kernel there).
# Into $OUT, 7 files:
#   copy.txt             TF32 sweeps of misaligned shapes at the checkout, twice ("=== config
#                        copy" / "copy#2"): the realignment's copy, as shipped
#   a1.txt               the same with the patch: the default ("=== config default": the copy
#                        replaced where it led to mma.sync), then mma:64x64 and mma:128x128
#                        forced (align1 on every misaligned shape, each with its own split-K),
#                        then mma:128x128 in 16 parts (cuBLAS's align1 plan for 127 x 1000 x
#                        3001) and mma:64x64 in 4;
#                        scripts/sweep_compare.py --table copy.txt a1.txt
#   align1.txt           test_gpu_gemm's test_tf32_align1 plain (every layout and transpose,
#   align1-memcheck.txt  odd sizes, misaligned bases, split K; forced and default), and under
#                        memcheck
#   test_realigned.txt, test_explain_matches_run.txt
#                        those test_gpu_gemm tests with the form built (cm_gemm_explain must
#                        name what ran)
#   batched.txt          test_gpu_gemm_batched's kernel tests of mma.sync (odd batch strides
#                        run by the form) and k_last, plain
# The patch stays applied.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build
# 4096 x 4096 x 3004 and 3004^3: the 16-byte form on the tiles, forced, beside the align1 form
# on 4096 x 4096 x 3001 and 3001^3 (on sm_80 the form would replace the copy there too)
shapes="127x1000x3001 1000x127x3001 3001x127x1000 1000x3001x127 127x127x127 3001x3001x3001 7x3001x3001 7x4096x4096 4096x7x4096 3001x1000x64 4096x127x127 3001x64x127 127x4096x127 4096x4096x3001 3001x4096x1000 2047x129x2047 4096x4096x3004 3004x3004x3004"
{
    for i in 1 2; do
        echo "=== config copy"
        CM_BENCH_SWEEP_ONLY=sweep_tf32 CM_BENCH_SWEEP_SHAPES="$shapes" timeout 120 \
            env -u CM_BENCH_RESULTS build-gpu/bench/bench_gemm --sweep
    done
} >"$R/copy.txt" 2>&1
exp_say "copy sweeps done"
git apply bench/experiments/mma-align1-on.patch || { echo "patch failed"; exit 1; }
cmake --build build-gpu --parallel 16 >/tmp/patch-build.txt 2>&1 ||
    { echo "patched build failed"; tail -30 /tmp/patch-build.txt; exit 1; }
exp_say "patched build done"
CM_BENCH_SWEEP_ONLY=sweep_tf32 exp_config_sweeps a1.txt "$shapes" mma:64x64 mma:128x128 \
    mma:128x128,splitk=16 mma:64x64,splitk=4
exp_gemm_test_memcheck test_tf32_align1 align1
exp_gemm_tests test_realigned test_explain_matches_run
OUT=/tmp bash scripts/gpu-test-one.sh -f 'test_kernels_mma*' test_gpu_gemm_batched
exp_say "kernels_mma rc $?"
cp /tmp/one-test_gpu_gemm_batched-none.txt "$R/batched.txt"
OUT=/tmp bash scripts/gpu-test-one.sh -f 'test_kernels_k_last' test_gpu_gemm_batched
exp_say "k_last rc $?"
cat /tmp/one-test_gpu_gemm_batched-none.txt >>"$R/batched.txt"
exp_say "done"
