#!/usr/bin/env bash
# After 6f2019e: the BF16 element-load 8-vector skinny form (no minimum of blocks) checked and
# measured, and the odd-K BF16 skinny shapes (small side 5 .. 16) against the Hopper kernel for
# the dispatch rule: test_gpu_gemm's test_skinny plain and under memcheck, test_split_k plain and
# test_gpu_gemm_batched's test_kernels_skinny plain; scripts/gemm-sweep-configs.sh over $odd (BF16, NN and TN): the
# default, then skinny, sm90, sm90+pack forced. One device call, carry .deps. Into $OUT:
# tests.txt, configs.txt, summary.txt. S54_WHOLE=1: test_gpu_gemm and test_gpu_gemm_batched
# whole too; S54_SHAPES: other shapes.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
odd="${S54_SHAPES:-5x3001x2001 7x3001x2001 8x3001x2001 10x3001x2001 12x3001x2001 16x3001x2001 8x4096x1001 16x4096x1001 8x2000x3001 12x5000x1501 7x3001x3001 5x10000x999 8x10000x999 16x10000x999}"
CM_BENCH_SWEEP_ONLY="bf16" exp_config_sweeps configs.txt "$odd" skinny sm90 sm90+pack |
    tee -a "$R/summary.txt"
{
    exp_test_runs none 240 test_skinny test_split_k
    exp_test_exe none 240 test_gpu_gemm_batched test_kernels_skinny
    exp_test_runs memcheck 300 test_skinny
    if [ "${S54_WHOLE:-0}" = 1 ]; then # the dispatch rule too: every GEMM test, plain
        exp_test_exe none 300 test_gpu_gemm
        exp_test_exe none 300 test_gpu_gemm_batched
    fi
} >"$R/tests.txt" 2>&1
exp_say "tests done" | tee -a "$R/summary.txt"
