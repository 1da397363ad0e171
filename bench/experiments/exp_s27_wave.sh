#!/usr/bin/env bash
# Session 27, one device call (carry .deps): the last wave's split (4033b45): test_gpu_gemm
# whole (plain), test_wave_split under memcheck, then FP32 shapes with the split (default) and
# without it (CUDAMODEL_GEMM_SPLITK=1), each run twice, alternating. Writes into $OUT.
set -u
R="${OUT:?}"
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
t0=$(date +%s)
(CM_GPU_CHECK_ONLY=none CM_GPU_CHECK_TESTS='^test_gpu_core$' OUT=/tmp/gc bash scripts/gpu-check.sh) >/tmp/build.txt 2>&1
grep "^build " /tmp/build.txt; echo "build done $(( $(date +%s) - t0 )) s"
M="$PWD/.deps/root/usr/lib/x86_64-linux-gnu"
export LD_LIBRARY_PATH="$M${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
SH="3001x3001x3001 3001x1601x2053 2176x2048x1024 2300x2300x2300 3001x4096x1000 4096x4096x3001"
for i in 1 2; do
    CM_BENCH_SWEEP_ONLY=fp32 CM_BENCH_SWEEP_SHAPES="$SH" build-gpu/bench/bench_gemm --sweep >"$R/on$i.txt" 2>&1
    CUDAMODEL_GEMM_SPLITK=1 CM_BENCH_SWEEP_ONLY=fp32 CM_BENCH_SWEEP_SHAPES="$SH" build-gpu/bench/bench_gemm --sweep >"$R/off$i.txt" 2>&1
done
echo "bench done $(( $(date +%s) - t0 )) s"
OUT=/tmp bash scripts/gpu-test-one.sh -s 150 test_gpu_gemm; echo "test_gpu_gemm rc $? $(( $(date +%s) - t0 )) s"
cp /tmp/one-test_gpu_gemm-none.txt "$R/gemm.txt"
CUDAMODEL_REQUIRE_GPU=1 CM_TEST_TIER=gpu CM_TEST_FILTER=test_wave_split build-gpu/tests/test_gpu_gemm >"$R/wave.txt" 2>&1; echo "wave plain rc $?"
OUT=/tmp bash scripts/gpu-test-one.sh -t memcheck -s 110 -f test_wave_split test_gpu_gemm; echo "memcheck rc $? $(( $(date +%s) - t0 )) s"
cp /tmp/one-test_gpu_gemm-memcheck.txt "$R/memcheck.txt"
