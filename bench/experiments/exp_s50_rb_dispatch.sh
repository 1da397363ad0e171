#!/usr/bin/env bash
# The bucketed skinny kernel (e21d33e), the bounded pair-kernel staging (241428a) and the
# skinny-keeps dispatch rule (8335cf8) against the code before them (16003d1:
# s50-rb-dispatch.revert.patch), in one run, and the kernels the dispatch could give the odd-K
# skinny shapes instead (exp_s47 measured those against the old skinny kernel). One device call,
# carry .deps; ~75 s of build on a fresh machine. Into $OUT, 4 files:
#   configs.txt  scripts/gemm-sweep-configs.sh over $odd (TF32, BF16, NN and TN): the default,
#                then skinny, mma:64x64, sm90, sm90+pack forced (sweep_compare.py --table)
#   sweeps.txt   bench_gemm's sweep over $shapes (FP32, TF32, BF16) at the checkout ("new#1"),
#                then with the revert patch ("old#1"), then the checkout again ("new#2")
#   tests.txt    at the checkout: test_gpu_gemm's test_skinny, test_realigned plain and under
#                memcheck; test_gpu_gemm_threads plain
#   summary.txt  the exp_say lines
# S50_SWEEPS_ONLY=1: sweeps.txt alone, without "new#2" (after a full check's part a on the warm
# machine: its tests cover the checkout's).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
odd="16x3001x2001 8x3001x2001 16x4096x1001 7x4096x4095 12x4096x4096 8x4096x4096 5x10000x999"
shapes="7x3001x3001 7x4096x4096 4096x7x4096 16x3001x2001 12x4096x4096 3x8192x4096 5x10000x999 2x50000x1000 127x4096x127 3001x64x127 127x127x127 1000x3001x127 2047x2047x2047 1000x127x3001"
p=bench/experiments/s50-rb-dispatch.revert.patch
[ "${S50_SWEEPS_ONLY:-0}" = 1 ] || {
{
    exp_test_runs none 240 test_skinny test_realigned
    exp_test_runs memcheck 240 test_skinny test_realigned
    exp_test_exe none 240 test_gpu_gemm_threads
} >"$R/tests.txt" 2>&1
exp_say "tests done" | tee -a "$R/summary.txt"
CM_BENCH_SWEEP_ONLY="tf32 bf16" exp_config_sweeps configs.txt "$odd" skinny mma:64x64 sm90 \
    sm90+pack | tee -a "$R/summary.txt"
}
exp_sweep1 "new#1" "$shapes" "fp32 tf32 bf16" 200 >"$R/sweeps.txt" 2>&1
exp_say "new#1 done" | tee -a "$R/summary.txt"
exp_patch_build "$p" >>"$R/summary.txt"
exp_say "revert build done" | tee -a "$R/summary.txt"
exp_sweep1 "old#1" "$shapes" "fp32 tf32 bf16" 200 >>"$R/sweeps.txt" 2>&1
exp_say "old#1 done" | tee -a "$R/summary.txt"
[ "${S50_SWEEPS_ONLY:-0}" = 1 ] && { exp_say "done" | tee -a "$R/summary.txt"; exit 0; }
exp_unpatch_build "$p"
exp_sweep1 "new#2" "$shapes" "fp32 tf32 bf16" 200 >>"$R/sweeps.txt" 2>&1
exp_say "done" | tee -a "$R/summary.txt"
