#!/usr/bin/env bash
# skinny-rb.patch: the skinny kernel's K-contiguous form (skinny_rows) with the vectors in
# buckets of 4 / 8 / 16 (loops without a test a vector, 2 RB sums instead of 32 registers),
# a chunk's matrix words all loaded before X's staging, and X staged one k a thread with all
# its loads in flight (no division by R). The SASS of the checkout (sm_90, nvcc 13.0) has per
# chunk the staging's loads in groups of at most 4 (7 for R = 7: four L2 latencies in a row),
# then one segment's matrix loads, its sums, the next segment's loads: about six latencies a
# chunk; the patch's loop has one of each. Same sums in the same order: the same bits as the
# checkout's kernel. ptxas sm_90: 62-64 registers for R <= 8 (4 blocks an SM, as the
# checkout's float form; bf16 was 78, 3 blocks), 109-120 for R 9 .. 16 (2 blocks; the
# checkout 78-80, 3), FP32 R <= 8 a 12-byte spill outside the sums.
# The persistent sweep gaps it is for: bf16 7 x 3001 x 3001 NN 0.70-0.75x, TF32 7 x 4096 x
# 4096 NN 0.79-0.87x (both skinny/2).
# One device call, carry .deps, ~8 minutes (four sweeps of 48 cases, two forced ones, the
# tests, two rebuilds of gemm_skinny.cu); reuses build-gpu/ of an earlier call (~75 s of build
# on a fresh one); what ran before a timeout still comes back. Into $OUT, 4 files:
#   skinny.txt   bench_gemm's sweep over $shapes (FP32, TF32, BF16; NN and TN; the default
#                dispatch, skinny where it runs it) at the checkout ("head#1", "head#2"), then
#                with the patch ("rb#1", "rb#2"); scripts/sweep_compare.py --table reads it
#   forced.txt   the same shapes with "skinny" forced (CUDAMODEL_GEMM_CONFIG), patched, then at
#                the checkout again: shapes the default gives other kernels
#   tests.txt    with the patch: test_gpu_gemm's test_skinny, test_every_config, test_split_k
#                plain and test_skinny under memcheck; test_gpu_gemm_batched's
#                test_kernels_skinny plain and under memcheck; test_gpu_gemm_large and
#                test_gpu_gemm_threads plain
#   summary.txt  the exp_say lines
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
p=bench/experiments/skinny-rb.patch
shapes="7x3001x3001 7x4096x4096 4096x7x4096 16x3001x2001 12x4096x4096 3x8192x4096 5x10000x999 2x50000x1000"
exp_sweeps_ab skinny.txt "$p" rb "$shapes" "fp32 tf32 bf16" 200
{
    exp_test_runs none 240 test_skinny test_every_config 'test_split_k*'
    exp_test_runs memcheck 240 test_skinny
    exp_test_exe none 240 test_gpu_gemm_batched test_kernels_skinny
    exp_test_exe memcheck 240 test_gpu_gemm_batched test_kernels_skinny
    exp_test_exe none 240 test_gpu_gemm_large
    exp_test_exe none 240 test_gpu_gemm_threads
} >"$R/tests.txt" 2>&1
exp_say "tests done" | tee -a "$R/summary.txt"
{
    exp_sweep1 "rb-forced" "$shapes" "fp32 tf32 bf16" 200 CUDAMODEL_GEMM_CONFIG=skinny
} >"$R/forced.txt" 2>&1
exp_say "forced (patched) done" | tee -a "$R/summary.txt"
exp_unpatch_build "$p"
{
    exp_sweep1 "head-forced" "$shapes" "fp32 tf32 bf16" 200 CUDAMODEL_GEMM_CONFIG=skinny
} >>"$R/forced.txt" 2>&1
exp_say "done" | tee -a "$R/summary.txt"
