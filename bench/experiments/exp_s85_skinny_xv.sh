#!/usr/bin/env bash
# The skinny rows kernel's 16-byte staging of X (kernels/gemm_skinny.cu, stage_x_vec: FP32 X
# with contiguous vectors in 16-byte aligned columns, small M "NN" with lda a multiple of 4),
# shipped in the tree this runs on. First the tree's build: test_skinny (its new XV cases),
# test_split_k, test_gpu_gemm_batched's test_kernels_skinny, test_skinny under memcheck; then
# skinny-xv-off.patch (CM_SKXV_OFF=1: the per-k staging, as before) and sweeps of the
# default (v0) against the per-k staging (v1), two rounds, FP32 and TF32 over 16-, 13-, 12-,
# 8- and 4-wide "NN" / "TN" shapes (TN and lda = 13 are controls: not touched). exp_s83's
# scalar form (skinny-x-r-contig.patch) won at R = 16 on 2 rows a warp and lost where it spilled
# (4 rows a warp, the 8-vector bucket) and at 13 x 4096 x 2048. One device call, carry .deps.
# Into $OUT: tests.txt, sweeps.txt, summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
p=bench/experiments/skinny-xv-off.patch
s="16x3001x2001 16x5000x1501 16x6000x2001 16x4096x2048 16x8192x1024 16x2000x1000 12x6000x2001 \
13x4096x2048 8x8192x2048 8x3001x3001 4x8192x4096 4x3001x3001 16x4096x4096 12x8192x1024 \
16x8192x8192 16x1000x4096"
exp_build | tee -a "$R/summary.txt"
{
    exp_test_runs none 300 test_skinny test_split_k
    exp_test_exe none 200 test_gpu_gemm_batched test_kernels_skinny
    exp_test_runs memcheck 400 test_skinny
} >"$R/tests.txt" 2>&1
exp_step "tests done"
exp_patched "$p"
exp_variant_sweeps CM_SKXV_OFF "0 1" "$s" "fp32 tf32" 200 >"$R/sweeps.txt" 2>&1
exp_step "sweeps done"
exp_unpatch "$p" # no rebuild: gpu-check.sh rebuilds the noted files on a later call
