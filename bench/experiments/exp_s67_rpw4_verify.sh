#!/usr/bin/env bash
# Verifies the skinny kernel's 4-rows-a-warp form (kernels/gemm_skinny.cu, rows_take_rpw4) and
# TF32's MN-major rule at a small side of 16 (cm__gemm_select, CM__GEMM_SKINNY_TC_TF32_ANY) as
# committed: test_skinny, test_split_k, test_explain_matches_run and test_medium_odd plain,
# test_gpu_gemm_batched plain (its skinny cases now pass the SM count), test_skinny under
# memcheck; then the default against forced skinny and mma:64x64 in one run (two rounds) over
# FP32 / TF32 shapes with a small side of 9-16 (compare with exp_s65's and exp_s64's figures:
# the tree before). One device call, carry .deps. Into $OUT: tests.txt, configs1.txt,
# configs2.txt (scripts/sweep_compare.py --table), summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
exp_step "build done"
{
    exp_test_runs none 240 test_skinny test_split_k test_explain_matches_run test_medium_odd
    exp_test_exe none 120 test_gpu_gemm_batched
    exp_test_runs memcheck 300 test_skinny
} >"$R/tests.txt" 2>&1
exp_step "tests done"
shapes="16x4096x4096 12x4096x4096 9x4096x4096 16x8192x8192 16x10000x999 13x4096x2048 12x8192x1024 4096x16x4096 3001x12x2001 16x3001x2001 7000x16x300"
CM_BENCH_SWEEP_ONLY="fp32 tf32" exp_config_rounds "$shapes" skinny mma:64x64
exp_step "done"
