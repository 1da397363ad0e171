#!/usr/bin/env bash
# Experiment (issue #15): the sweep of bench_gemm under forced split-K part counts and forced
# tile configurations, to see which shape classes each helps before changing the dispatch.
# Run on the GPU machine after a build of build-gpu/ (scripts/gpu-check.sh builds it):
#   bash bench/experiments/exp_gemm_split_tiles.sh > exp.txt
# Each run prints the sweep's table (ours / cuBLAS per case); nothing is appended to
# bench/results (no CM_BENCH_RESULTS).
set -u
b=build-gpu/bench/bench_gemm
run() {
    echo "=== $*"
    env -u CM_BENCH_RESULTS "$@" "$b" --sweep 2>&1 | grep -E "sweep_|summary|cases|^  (fp32|tf32|bf16) " || true
}
run CUDAMODEL_GEMM_SPLITK=2
run CUDAMODEL_GEMM_SPLITK=4
run CUDAMODEL_GEMM_SPLITK=8
run CM_BENCH_SWEEP_ONLY="tf32 bf16" CUDAMODEL_GEMM_CONFIG=mma:128x128
run CM_BENCH_SWEEP_ONLY="tf32 bf16" CUDAMODEL_GEMM_CONFIG=mma:64x64
run CM_BENCH_SWEEP_ONLY="tf32 bf16" CUDAMODEL_GEMM_CONFIG=mma:64x64 CUDAMODEL_GEMM_SPLITK=4
run CM_BENCH_SWEEP_ONLY="fp32" CUDAMODEL_GEMM_CONFIG=64x64x16
run CM_BENCH_SWEEP_ONLY="fp32" CUDAMODEL_GEMM_CONFIG=64x64x16 CUDAMODEL_GEMM_SPLITK=4
