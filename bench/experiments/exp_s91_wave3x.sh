#!/usr/bin/env bash
# The last wave's split for 3xTF32 on the Hopper kernel (63127d8, cm__gemm_sm90_3xtf32_parts;
# off by default, CM__GEMM_WAVE_SPLIT_3XTF32 0): 1. test_gpu_gemm's test_wave_split, whose
# 3xTF32 cases turn it on through the tests' switch (4096 x 4096 x 1000, both layouts, "TN" and
# "NN", against float64), plain; 2. bench_gemm --3xtf32 (4096^3, 8192^3, NN / TN, against
# cublasGemmEx FP32, error against float64) twice on the tree's build (off), then twice with
# wave-3x-on.patch (on; 8192^3, 20.8 waves, keeps running whole: the control). Flip the
# default where 4096^3 gains beyond the rounds' spread at an error no larger. One device call
# (~3 min cold), carry .deps. Into $OUT: tests.txt, off1.txt, off2.txt, on1.txt, on2.txt,
# summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
p=bench/experiments/wave-3x-on.patch
exp_build | tee -a "$R/summary.txt"
exp_test_exe none 300 test_gpu_gemm test_wave_split >"$R/tests.txt" 2>&1
exp_step "tests done"
for i in 1 2; do
    timeout 120 env -u CM_BENCH_RESULTS build-gpu/bench/bench_gemm --3xtf32 >"$R/off$i.txt" 2>&1
done
exp_step "off done"
exp_patched "$p"
for i in 1 2; do
    timeout 120 env -u CM_BENCH_RESULTS build-gpu/bench/bench_gemm --3xtf32 >"$R/on$i.txt" 2>&1
done
exp_step "on done"
exp_unpatch "$p" # no rebuild: gpu-check.sh rebuilds the noted files on a later call
