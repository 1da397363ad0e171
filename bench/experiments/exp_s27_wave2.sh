#!/usr/bin/env bash
# Session 27, the last device call (carry .deps): the fixed last wave's split: test_wave_split
# plain, then 3001^3 and 2176 x 2048 x 1024 with the split and without (CUDAMODEL_GEMM_SPLITK=1).
set -u
R="${OUT:?}"
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
t0=$(date +%s)
(CM_GPU_CHECK_ONLY=none CM_GPU_CHECK_TESTS='^test_gpu_core$' OUT=/tmp/gc bash scripts/gpu-check.sh) >/tmp/build.txt 2>&1
grep "^build " /tmp/build.txt; echo "build done $(( $(date +%s) - t0 )) s"
M="$PWD/.deps/root/usr/lib/x86_64-linux-gnu"
export LD_LIBRARY_PATH="$M${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
CUDAMODEL_REQUIRE_GPU=1 CM_TEST_TIER=gpu CM_TEST_FILTER=test_wave_split timeout 60 build-gpu/tests/test_gpu_gemm >"$R/wave.txt" 2>&1; echo "wave plain rc $? $(( $(date +%s) - t0 )) s"
SH="3001x3001x3001 2176x2048x1024 3001x1601x2053"
CM_BENCH_SWEEP_ONLY=fp32 CM_BENCH_SWEEP_SHAPES="$SH" timeout 20 build-gpu/bench/bench_gemm --sweep >"$R/on.txt" 2>&1
CUDAMODEL_GEMM_SPLITK=1 CM_BENCH_SWEEP_ONLY=fp32 CM_BENCH_SWEEP_SHAPES="$SH" timeout 20 build-gpu/bench/bench_gemm --sweep >"$R/off.txt" 2>&1
echo "done $(( $(date +%s) - t0 )) s"
