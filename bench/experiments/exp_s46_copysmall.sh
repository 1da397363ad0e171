#!/usr/bin/env bash
# Small staged ("+copy") products with and without the staging copy kernel of 8a7b8ae. At
# 47d484d on an H100 the bench stage ran the sweep's small staged bf16 cases far under the
# runs before (bf16 1000 x 127 x 3001 NN 1.15 -> 0.34, 127 x 4096 x 127 NN 0.91 -> 0.64,
# 3001 x 64 x 127 NN 1.00 -> 0.68), but cases on paths no commit touched fell as well (gemv
# bf16 127 x 1 x 3001 TN 1.68 -> 0.69, sum_latency 2^10 1.07 -> 0.77), so that run was noisy.
# Since 8a7b8ae a realignment that stages both operands, one transposed and one K-contiguous,
# runs two kernels (the pair kernel, then the copy kernel) where one pair kernel ran both.
# Here the sweep over $shapes (TF32, BF16) at the checkout ("head#1"), with
# copy16.revert.patch (staging as before 8a7b8ae; "old#1", "old#2"), with copy16-mixed.patch
# (the pair kernel takes a K-contiguous side along where it runs for the other side: one
# launch; "mixed#1", "mixed#2"), at the checkout again ("head#2"): the in-run verdict. One
# device call, carry .deps; reuses build-gpu/ of an earlier call (~75 s of build on a fresh
# one). Into $OUT, 3 files:
#   copysmall.txt  the six sweeps (scripts/sweep_compare.py --table reads it)
#   tests.txt      with copy16-mixed.patch: test_realigned, test_sm90*, test_explain* plain,
#                  test_realigned under memcheck, test_gpu_gemm_batched plain
#   summary.txt    the exp_say lines
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
shapes="1000x127x3001 127x1000x3001 127x4096x127 4096x127x127 3001x64x127 127x127x127 7x3001x3001 3001x1000x64 1000x3001x127 2047x2047x2047 4096x4096x3001"
p=bench/experiments/copy16.revert.patch
{
    exp_sweep1 "head#1" "$shapes" "tf32 bf16" 150
    exp_patch_build "$p" >>"$R/summary.txt"
    exp_sweeps2 old "$shapes" "tf32 bf16" 150
    exp_unpatch "$p"
    exp_patch_build bench/experiments/copy16-mixed.patch >>"$R/summary.txt"
    exp_sweeps2 mixed "$shapes" "tf32 bf16" 150
} >"$R/copysmall.txt" 2>&1
exp_say "sweeps done" | tee -a "$R/summary.txt"
{
    exp_test_runs none 300 test_realigned 'test_sm90*' 'test_explain*'
    exp_test_runs memcheck 200 test_realigned
    echo "=== test_gpu_gemm_batched none"
    OUT=/tmp bash scripts/gpu-test-one.sh -s 300 test_gpu_gemm_batched
    echo "rc $?"
} >"$R/tests.txt" 2>&1
exp_unpatch bench/experiments/copy16-mixed.patch
cmake --build build-gpu --parallel 16 >/tmp/unpatch-build.txt 2>&1 || tail -20 /tmp/unpatch-build.txt
exp_sweep1 "head#2" "$shapes" "tf32 bf16" 150 >>"$R/copysmall.txt" 2>&1
exp_say "done" | tee -a "$R/summary.txt"
