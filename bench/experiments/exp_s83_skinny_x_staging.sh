#!/usr/bin/env bash
# The skinny rows kernel's staging of X for a small M in "NN" (column-major): X(k, r) = A(r, k)
# has its vectors r contiguous (xr = 1), while thread t stages k0 + t of every vector, so a
# warp's load of one vector touches 32 rows of A 4 x lda bytes apart (32 sectors for 128 useful
# bytes); "TN" (k contiguous) is coalesced. H100, the same B (K-contiguous, ldb odd): FP32
# 16 x 6000 x 2001 NN 0.78-0.80x against TN 1.00-1.03x, 16 x 3001 x 2001 0.75-0.80x against
# 1.05-1.12x, 16 x 5000 x 1501 0.79x against 0.95x (exp_s82). skinny-x-r-contig.patch:
# CM_SKX_EXP=1 stages such an X with consecutive threads on consecutive vectors. Variants 0 / 1,
# two rounds, FP32 and TF32 over 16-, 12-, 8- and 4-wide "NN" / "TN" shapes (TN is the control:
# not touched); then test_skinny, test_split_k and test_gpu_gemm_batched's test_kernels_skinny
# with it on, test_skinny under memcheck. One device call, carry .deps. Into $OUT: sweeps.txt,
# tests.txt, summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
p=bench/experiments/skinny-x-r-contig.patch
s="16x3001x2001 16x5000x1501 16x6000x2001 16x4096x2048 16x8192x1024 16x2000x1000 12x6000x2001 \
13x4096x2048 8x8192x2048 8x3001x3001 4x8192x4096 4x3001x3001 16x4096x4096 7x4096x4096"
exp_build | tee -a "$R/summary.txt"
exp_patched "$p"
exp_variant_sweeps CM_SKX_EXP "0 1" "$s" "fp32 tf32" 200 >"$R/sweeps.txt" 2>&1
exp_step "sweeps done"
{
    CM_SKX_EXP=1 exp_test_runs none 200 test_skinny test_split_k
    CM_SKX_EXP=1 exp_test_exe none 200 test_gpu_gemm_batched test_kernels_skinny
    CM_SKX_EXP=1 exp_test_runs memcheck 300 test_skinny
} >"$R/tests.txt" 2>&1
exp_step "tests done"
exp_unpatch "$p" # no rebuild: gpu-check.sh rebuilds the noted files on a later call
