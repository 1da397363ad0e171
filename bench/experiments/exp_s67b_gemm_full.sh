#!/usr/bin/env bash
# test_gpu_gemm and test_gpu_gemm_large whole, plain (after exp_s67 on a warm machine: its build).
# Into $OUT: tests.txt, summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
{
    exp_test_exe none 300 test_gpu_gemm
    exp_test_exe none 120 test_gpu_gemm_large
} >"$R/tests.txt" 2>&1
exp_step "done"
