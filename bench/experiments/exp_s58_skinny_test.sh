#!/usr/bin/env bash
# test_gpu_gemm's test_skinny, plain and under memcheck, after its bf16 odd-K cases read back
# what ran (cm__gemm_last_ran_for_tests) instead of cm_gemm_config_name's packed-16-byte guess.
# Into $OUT: skinny-test.txt. Carry .deps.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build >"$R/skinny-test.txt"
{
    exp_test_runs none 240 test_skinny
    exp_test_runs memcheck 300 test_skinny
} >>"$R/skinny-test.txt" 2>&1
exp_say "skinny test done" | tee -a "$R/skinny-test.txt"
