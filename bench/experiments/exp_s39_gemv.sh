#!/usr/bin/env bash
# The gemv revert (58bcb5a: kernels/gemv.cu back to f8663a1^'s 64-column bf16 "cols" kernels)
# on the H200: the matrix-vector shapes f8663a1 lost (bf16 4096 x 1 x 4096 NN 0.579x,
# 1 x 4096 x 4096 NT 0.567x at 9007654; 0.85-0.93x at 7a784b2 with these kernels) and the ones
# it left alone, twice in bf16 and fp32, then test_gpu_gemm's test_matrix_vector plain and
# under memcheck. One device call, carry .deps. Into $OUT, 3 files:
#   gemv.txt      the two sweeps ("=== config head#i"; no rows to the results file)
#   gemvtests.txt test_matrix_vector plain and under memcheck
#   summary.txt   the exp_say lines
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
gv="4096x1x4096 1x4096x4096 8192x1x8192 1000x1x4096 3001x1x3001 1x8192x8192 1027x1x4096"
exp_sweeps2 head "$gv" "bf16 fp32" 120 >"$R/gemv.txt" 2>&1
exp_say "gemv sweeps done" | tee -a "$R/summary.txt"
{
    exp_test_runs none 200 test_matrix_vector
    exp_test_runs memcheck 300 test_matrix_vector
} >"$R/gemvtests.txt" 2>&1
exp_say "gemv tests done" | tee -a "$R/summary.txt"
