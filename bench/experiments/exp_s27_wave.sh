#!/usr/bin/env bash
# Session 27, one device call (carry .deps): the last wave's split (4033b45): FP32 shapes with
# the split (default then) and without it (CUDAMODEL_GEMM_SPLITK=1), each twice, alternating;
# test_gpu_gemm whole (plain); test_wave_split plain and under memcheck. Writes into $OUT.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build
sh="3001x3001x3001 3001x1601x2053 2176x2048x1024 2300x2300x2300 3001x4096x1000 4096x4096x3001"
for i in 1 2; do
    exp_shapes "on$i.txt" "$sh"
    exp_shapes "off$i.txt" "$sh" CUDAMODEL_GEMM_SPLITK=1
done
exp_say "bench done"
OUT=/tmp bash scripts/gpu-test-one.sh -s 150 test_gpu_gemm; exp_say "test_gpu_gemm rc $?"
cp /tmp/one-test_gpu_gemm-none.txt "$R/gemm.txt"
CUDAMODEL_REQUIRE_GPU=1 CM_TEST_TIER=gpu CM_TEST_FILTER=test_wave_split \
    build-gpu/tests/test_gpu_gemm >"$R/wave.txt" 2>&1
echo "wave plain rc $?"
OUT=/tmp bash scripts/gpu-test-one.sh -t memcheck -s 110 -f test_wave_split test_gpu_gemm
exp_say "memcheck rc $?"
cp /tmp/one-test_gpu_gemm-memcheck.txt "$R/memcheck.txt"
