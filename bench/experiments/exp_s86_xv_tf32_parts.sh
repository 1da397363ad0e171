#!/usr/bin/env bash
# Two library changes not yet run on a GPU, in one short device call (the order is what to keep
# if the call is cut off): the skinny rows kernel's 16-byte staging of X (stage_x_vec, exp_s83's
# question) and TF32 on the mma.sync tiles in parts of at least 128 of K at any K
# (CM__SPLITK_ALIGN1_MIN_K; exp_s84 measured 7-8 forced parts against the 4-5 of the parts of
# 256). 1. the tree's build: test_skinny (its XV cases), test_split_k, test_tf32_align1,
# test_gpu_gemm_batched's test_kernels_skinny; 2. skinny-xv-off.patch and sweeps of the
# default (v0) against CM_SKXV_OFF=1 (v1), two rounds (stage_x_vec runs at R > 8 only); 3. TF32
# default against splitk=8 over exp_s84's shapes and 64^2 x 4096 (the patched build: CM_SKXV_OFF unset is the tree's
# code); 4. test_skinny and test_split_k under memcheck. Carry .deps. Into $OUT: tests.txt,
# sweeps.txt, configs1.txt, memcheck.txt, summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
p=bench/experiments/skinny-xv-off.patch
s="16x3001x2001 16x5000x1501 16x6000x2001 16x4096x2048 16x8192x1024 16x2000x1000 12x6000x2001 \
13x4096x2048 8x8192x2048 8x3001x3001 4x8192x4096 4x3001x3001 16x4096x4096 12x8192x1024 \
16x8192x8192 16x1000x4096"
t="128x128x1500 256x128x1200 64x64x1000 128x128x1024 256x256x1100 512x256x1500 1000x64x1200 \
64x64x4096 16x6000x2001 6000x16x2001 3001x16x1500"
exp_build | tee -a "$R/summary.txt"
{
    exp_test_runs none 300 test_skinny test_split_k test_tf32_align1
    exp_test_exe none 200 test_gpu_gemm_batched test_kernels_skinny
} >"$R/tests.txt" 2>&1
exp_step "tests done"
exp_patched "$p"
exp_variant_sweeps CM_SKXV_OFF "0 1" "$s" "fp32 tf32" 200 >"$R/sweeps.txt" 2>&1
exp_step "sweeps done"
CM_BENCH_SWEEP_ONLY=tf32 exp_config_sweeps configs1.txt "$t" splitk=8
exp_step "configs done"
exp_test_runs memcheck 400 test_skinny test_split_k >"$R/memcheck.txt" 2>&1
exp_step "memcheck done"
exp_unpatch "$p" # no rebuild: gpu-check.sh rebuilds the noted files on a later call
