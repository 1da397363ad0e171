#!/usr/bin/env bash
# The session-36 GEMM commits at one commit (argument 1, written literally: the device copy has
# no history): 8a7b8ae (the staging copy kernel), a88cdc4 (rows of an odd number of 16 bytes
# staged; bf16 "NN" with such MN-major rows transposed instead of sm90+bt), 89be00d (TF32 long
# and thin C under K = 1024 whole; column-major "NN" on the register-A form there). One device
# call on a fresh machine (~75 s of build; ~330 s in all), carry .deps. Into $OUT, 5 files:
#   tests.txt     test_gpu_gemm's tests that reach the changes, plain
#   dispatch.txt  the sweep over $shapes (TF32, BF16) at the checkout ("head#1"), with
#                 s36-dispatch.revert.patch (gemm_api.c as at 8a7b8ae: the copy kernel, not the
#                 two dispatch commits; "old#1", "old#2"), at the checkout again ("head#2");
#                 scripts/sweep_compare.py --table reads it
#   check.txt     scripts/gpu-check.sh's bench stage at the checkout, after the sweeps (its
#                 summary), then test_gpu_gemm and test_gpu_gemm_batched under memcheck (the
#                 gpu-check sanitizer stage would run only the tests CM_GPU_CHECK_TESTS names)
#   h200.jsonl    that stage's rows (one per case) for bench/results/ (h100.jsonl on an H100)
#   summary.txt   the exp_say lines
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
commit="${1:?usage: exp_s45_verify.sh <commit>}"
exp_start
exp_build | tee -a "$R/summary.txt"
exp_test_runs none 300 test_sm90_stage32 'test_sm90*' test_realigned 'test_explain*' \
    'test_split_k*' 'test_large*' 'test_every*' test_tf32_align1 >"$R/tests.txt" 2>&1
exp_say "tests done" | tee -a "$R/summary.txt"
shapes="4096x64x1000 4096x64x512 8192x64x1000 4096x32x1000 4096x128x1000 2048x64x1000 3001x64x1000 3001x127x1000 4096x64x2048 4096x4096x3004 4096x4096x3000 3004x3004x3004 1000x4096x3004 3001x4096x1000 1000x4096x4096 3000x4096x4096 2000x4096x4096 4096x4096x4096"
p=bench/experiments/s36-dispatch.revert.patch
{
    exp_sweep1 "head#1" "$shapes" "tf32 bf16" 150
    exp_patch_build "$p" >>"$R/summary.txt"
    exp_sweeps2 old "$shapes" "tf32 bf16" 150
    exp_unpatch "$p"
    cmake --build build-gpu --parallel 16 >/tmp/unpatch-build.txt 2>&1 || tail -20 /tmp/unpatch-build.txt
    exp_sweep1 "head#2" "$shapes" "tf32 bf16" 150
} >"$R/dispatch.txt" 2>&1
exp_say "sweeps done" | tee -a "$R/summary.txt"
OUT=/tmp/gcb CM_BENCH_COMMIT="$commit" CM_GPU_CHECK_ONLY=bench \
    CM_GPU_CHECK_TESTS='^test_gpu_core$' timeout 200 bash scripts/gpu-check.sh >/tmp/gcb.txt 2>&1
tail -14 /tmp/gcb.txt >"$R/check.txt"
for t in test_gpu_gemm test_gpu_gemm_batched; do
    OUT=/tmp bash scripts/gpu-test-one.sh -t memcheck -s 220 "$t"
    echo "=== $t memcheck rc $?"
    tail -3 "/tmp/one-$t-memcheck.txt"
done >>"$R/check.txt" 2>&1
cp /tmp/gcb/h200.jsonl "$R/h200.jsonl" 2>/dev/null
exp_say "done" | tee -a "$R/summary.txt"
