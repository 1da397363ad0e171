#!/usr/bin/env bash
# Session 27, one device call (carry .deps): the K-tail shapes at HEAD and with
# bench/experiments/ffma-moved-tail-samek.patch applied (every K tail in the moved-tile kernel:
# both-along-K before the pipeline, mixed in the epilogue), each twice, then test_ffma_tails
# and test_fp32_pitched on the patched build. Writes into $OUT.
set -u
R="${OUT:?}"
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
t0=$(date +%s)
(CM_GPU_CHECK_ONLY=none CM_GPU_CHECK_TESTS='^test_gpu_core$' OUT=/tmp/gc bash scripts/gpu-check.sh) >"$R/build.txt" 2>&1
echo "build done $(( $(date +%s) - t0 )) s"
M="$PWD/.deps/root/usr/lib/x86_64-linux-gnu"
export LD_LIBRARY_PATH="$M${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for i in 1 2; do
    CM_BENCH_SWEEP_ONLY=fp32 build-gpu/bench/bench_gemm --sweep >"$R/sweep$i.txt" 2>&1
done
SH="1000x4096x4096 3001x3001x3001 4096x4096x3001 3001x4096x1000 4093x4093x4093 2000x2000x2000 1000x1000x1000 4096x4096x1000 4096x4096x4096"
for i in 1 2; do
    CM_BENCH_SWEEP_ONLY=fp32 CM_BENCH_SWEEP_SHAPES="$SH" build-gpu/bench/bench_gemm --sweep >"$R/head$i.txt" 2>&1
done
echo "head shapes done $(( $(date +%s) - t0 )) s"
git apply bench/experiments/ffma-moved-tail-samek.patch || { echo "patch failed"; exit 1; }
cmake --build build-gpu --parallel 16 >/tmp/patch-build.txt 2>&1 || { echo "patched build failed"; tail -30 /tmp/patch-build.txt; }
echo "patched build done $(( $(date +%s) - t0 )) s"
for i in 1 2; do
    CM_BENCH_SWEEP_ONLY=fp32 CM_BENCH_SWEEP_SHAPES="$SH" build-gpu/bench/bench_gemm --sweep >"$R/patch$i.txt" 2>&1
done
echo "patch shapes done $(( $(date +%s) - t0 )) s"
OUT=/tmp bash scripts/gpu-test-one.sh -f test_ffma_tails test_gpu_gemm; echo "ffma_tails rc $?"
cp /tmp/one-test_gpu_gemm-none.txt "$R/tails.txt"
OUT=/tmp bash scripts/gpu-test-one.sh -f test_fp32_pitched test_gpu_gemm; echo "pitched rc $?"
git apply -R bench/experiments/ffma-moved-tail-samek.patch
echo "all done $(( $(date +%s) - t0 )) s"
