#!/usr/bin/env bash
# Session 27, one device call (carry .deps): the whole --sweep twice with time_pair's order
# (ours, cuBLAS, cuBLAS, ours), rows into $OUT/h200.jsonl, then the K-tail shapes (FP32).
set -u
R="${OUT:?}"
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
t0=$(date +%s)
(CM_GPU_CHECK_ONLY=none CM_GPU_CHECK_TESTS='^test_gpu_core$' OUT=/tmp/gc bash scripts/gpu-check.sh) >/tmp/build.txt 2>&1
grep "^build " /tmp/build.txt; echo "build done $(( $(date +%s) - t0 )) s"
M="$PWD/.deps/root/usr/lib/x86_64-linux-gnu"
export LD_LIBRARY_PATH="$M${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
CM_BENCH_COMMIT="${1:?commit}" CM_BENCH_RESULTS="$R/h200.jsonl" build-gpu/bench/bench_gemm --sweep >"$R/sweep1.txt" 2>&1
echo "sweep 1 rc $? $(( $(date +%s) - t0 )) s"
build-gpu/bench/bench_gemm --sweep >"$R/sweep2.txt" 2>&1
echo "sweep 2 rc $? $(( $(date +%s) - t0 )) s"
SH="1000x4096x4096 3001x3001x3001 4096x4096x3001 3001x4096x1000 4093x4093x4093 2000x2000x2000 1000x1000x1000 4096x4096x1000"
CM_BENCH_SWEEP_ONLY=fp32 CM_BENCH_SWEEP_SHAPES="$SH" build-gpu/bench/bench_gemm --sweep >"$R/shapes.txt" 2>&1
echo "all done $(( $(date +%s) - t0 )) s"
