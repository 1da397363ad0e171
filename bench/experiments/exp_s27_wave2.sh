#!/usr/bin/env bash
# The last wave's split on the H200 (carry .deps; written in session 27, whose device time ran
# out before it could run): turns CM__GEMM_WAVE_SPLIT_DEFAULT on in the machine's copy, builds,
# runs test_wave_split plain and under memcheck, then FP32 shapes with the split (default) and
# without it (CUDAMODEL_GEMM_SPLITK=1), twice each, alternating.
set -u
R="${OUT:?}"
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
t0=$(date +%s)
sed -i 's/^#define CM__GEMM_WAVE_SPLIT_DEFAULT 0$/#define CM__GEMM_WAVE_SPLIT_DEFAULT 1/' \
    src/compute/gemm_internal.h
grep -q '^#define CM__GEMM_WAVE_SPLIT_DEFAULT 1$' src/compute/gemm_internal.h ||
    { echo "could not turn the split on"; exit 1; }
(CM_GPU_CHECK_ONLY=none CM_GPU_CHECK_TESTS='^test_gpu_core$' OUT=/tmp/gc bash scripts/gpu-check.sh) >/tmp/build.txt 2>&1
grep "^build " /tmp/build.txt; echo "build done $(( $(date +%s) - t0 )) s"
M="$PWD/.deps/root/usr/lib/x86_64-linux-gnu"
export LD_LIBRARY_PATH="$M${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
CUDAMODEL_REQUIRE_GPU=1 CM_TEST_TIER=gpu CM_TEST_FILTER=test_wave_split timeout 60 build-gpu/tests/test_gpu_gemm >"$R/wave.txt" 2>&1; echo "wave plain rc $? $(( $(date +%s) - t0 )) s"
OUT=/tmp bash scripts/gpu-test-one.sh -t memcheck -s 150 -f test_wave_split test_gpu_gemm
echo "memcheck rc $? $(( $(date +%s) - t0 )) s"
cp /tmp/one-test_gpu_gemm-memcheck.txt "$R/memcheck.txt"
SH="3001x3001x3001 2176x2048x1024 3001x1601x2053 2300x2300x2300 1601x3001x4096 3001x4096x1000"
for i in 1 2; do
    CM_BENCH_SWEEP_ONLY=fp32 CM_BENCH_SWEEP_SHAPES="$SH" timeout 60 \
        build-gpu/bench/bench_gemm --sweep >"$R/on$i.txt" 2>&1
    CUDAMODEL_GEMM_SPLITK=1 CM_BENCH_SWEEP_ONLY=fp32 CM_BENCH_SWEEP_SHAPES="$SH" timeout 60 \
        build-gpu/bench/bench_gemm --sweep >"$R/off$i.txt" 2>&1
done
echo "done $(( $(date +%s) - t0 )) s"
