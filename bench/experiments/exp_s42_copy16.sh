#!/usr/bin/env bash
# The K-contiguous operand copies of the GEMM's staging (Hopper pack, realignment) with 16-byte
# stores (pack-copy16.patch: a copy kernel beside the pair kernel of kernels/gemm_pack.cu,
# 16 bytes a thread into dst rows that start on 16 bytes, loads as wide as the source's
# alignment allows; one staged operand goes through it instead of cudaMemcpy2DAsync). The
# pair kernel copied such operands an element a thread (bf16: 2 bytes), and the pitched
# cudaMemcpy2DAsync cost about three times its bytes' time (session 34): at session 35 on an
# H100 bf16 4096 x 4096 x 3004 TN ran 412 TFLOP/s with both operands staged against 604 for
# the aligned 3008. One device call, carry .deps; reuses build-gpu/ of an earlier call (~60 s
# of build on a fresh one). Into $OUT, 3 files:
#   copy.txt     the sweep over $shapes (TF32, BF16) twice at the checkout ("=== config
#                head#i"), twice patched ("=== config copy16#i"); the kernel column says which
#                ran "+copy" (scripts/sweep_compare.py --table reads it)
#   tests.txt    test_gpu_gemm's staging tests with the patch, plain, then test_realigned and
#                test_sm90* under memcheck; test_gpu_gemm_batched plain (strided batches
#                staged)
#   summary.txt  the exp_say lines
# The patch stays applied (exp_apply notes it); exp_unpatch takes it out.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
shapes="3001x1000x64 1000x3001x127 3001x4096x1000 4096x4096x3001 4096x4096x3004 4096x4096x3000 4096x1000x1001 2047x2047x2047 3001x3001x3001 7x4096x4096 127x1000x3001 4096x4096x4096"
exp_sweeps_ab copy.txt bench/experiments/pack-copy16.patch copy16 "$shapes" "tf32 bf16" 150
{
    exp_test_runs none 300 test_realigned 'test_sm90*' 'test_large*' 'test_explain*' \
        'test_every*' 'test_split_k*'
    exp_test_runs memcheck 300 test_realigned 'test_sm90*'
    echo "=== test_gpu_gemm_batched none"
    OUT=/tmp bash scripts/gpu-test-one.sh -s 300 test_gpu_gemm_batched
    echo "rc $?"
    tail -5 /tmp/one-test_gpu_gemm_batched-none.txt
} >"$R/tests.txt" 2>&1
exp_say "done" | tee -a "$R/summary.txt"
