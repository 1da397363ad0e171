#!/usr/bin/env bash
# The last wave's split on the H200 (carry .deps; written in session 27, run in session 28,
# when it turned the split on in the machine's copy; the split is on by default since ce45b80):
# builds, runs test_wave_split plain and under memcheck, then FP32 shapes with the split
# (default) and without it (CUDAMODEL_GEMM_SPLITK=1), twice each, alternating.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build
exp_gemm_test_memcheck test_wave_split wave
sh="3001x3001x3001 2176x2048x1024 3001x1601x2053 2300x2300x2300 1601x3001x4096 3001x4096x1000"
for i in 1 2; do
    exp_shapes "on$i.txt" "$sh"
    exp_shapes "off$i.txt" "$sh" CUDAMODEL_GEMM_SPLITK=1
done
exp_say "done"
