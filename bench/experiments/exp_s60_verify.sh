#!/usr/bin/env bash
# ad7454d (short K-contiguous rows staged by the pair kernel) and a70dd03 (the odd-K bf16
# Hopper rule from K = 768) as committed: test_gpu_gemm's test_realigned, test_skinny,
# test_explain_matches_run plain, test_realigned under memcheck, and one bf16 / tf32 sweep of
# the K = 127 and K = 768-999 shapes (default only). Into $OUT: verify.txt. Carry .deps.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build >"$R/verify.txt"
{
    exp_test_runs none 120 test_realigned test_skinny test_explain_matches_run
    exp_test_runs memcheck 120 test_realigned
    CM_BENCH_SWEEP_ONLY="bf16 tf32" CM_BENCH_SWEEP_SHAPES="127x4096x127 4096x127x127 3001x64x127 127x127x127 1000x3001x127 16x10000x999 12x5000x801 16x3001x1001" \
        timeout 60 env -u CM_BENCH_RESULTS build-gpu/bench/bench_gemm --sweep
} >>"$R/verify.txt" 2>&1
exp_say "verify done" | tee -a "$R/verify.txt"
