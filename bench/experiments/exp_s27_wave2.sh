#!/usr/bin/env bash
# The last wave's split on the H200 (carry .deps; written in session 27, whose device time ran
# out before it could run): turns CM__GEMM_WAVE_SPLIT_DEFAULT on in the machine's copy, builds,
# runs test_wave_split plain and under memcheck, then FP32 shapes with the split (default) and
# without it (CUDAMODEL_GEMM_SPLITK=1), twice each, alternating.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
sed -i 's/^#define CM__GEMM_WAVE_SPLIT_DEFAULT 0$/#define CM__GEMM_WAVE_SPLIT_DEFAULT 1/' \
    src/compute/gemm_internal.h
grep -q '^#define CM__GEMM_WAVE_SPLIT_DEFAULT 1$' src/compute/gemm_internal.h ||
    { echo "could not turn the split on"; exit 1; }
exp_build
CUDAMODEL_REQUIRE_GPU=1 CM_TEST_TIER=gpu CM_TEST_FILTER=test_wave_split timeout 60 \
    build-gpu/tests/test_gpu_gemm >"$R/wave.txt" 2>&1
exp_say "wave plain rc $?"
OUT=/tmp bash scripts/gpu-test-one.sh -t memcheck -s 150 -f test_wave_split test_gpu_gemm
exp_say "memcheck rc $?"
cp /tmp/one-test_gpu_gemm-memcheck.txt "$R/memcheck.txt"
sh="3001x3001x3001 2176x2048x1024 3001x1601x2053 2300x2300x2300 1601x3001x4096 3001x4096x1000"
for i in 1 2; do
    exp_shapes "on$i.txt" "$sh"
    exp_shapes "off$i.txt" "$sh" CUDAMODEL_GEMM_SPLITK=1
done
exp_say "done"
