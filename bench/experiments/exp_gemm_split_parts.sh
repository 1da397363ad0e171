#!/usr/bin/env bash
# Experiment (issue #15): split-K part counts and tile configurations forced on the sweep's
# worst cases (TF32 / bf16 / FP32 127 x 1000 x 3001 and 64 x 4096 x 4096 on mma:64x64 or FFMA
# tiles; bf16 / TF32 3001 x 1000 x 64), to see what each wants before changing the dispatch.
# Run on the GPU machine after a build of build-gpu/ (scripts/gpu-check.sh builds it):
#   bash bench/experiments/exp_gemm_split_parts.sh [set] > exp.txt
# set "parts" (default): the part counts alone; "tiles": the Hopper kernel and other tiles.
# Prints the sweep's rows and kernel lines; nothing goes to bench/results. A forced
# configuration turns the realignment off (gemm_api.c), "sm90" then packs the operands.
set -u
b=build-gpu/bench/bench_gemm
run() {
    echo "=== $*"
    env -u CM_BENCH_RESULTS "$@" "$b" --sweep 2>&1 | grep -E "^sweep_|kernel" || true
}
cases="127x1000x3001,64x4096x4096"
if [ "${1:-parts}" = parts ]; then
    run CM_BENCH_SWEEP_ONLY="$cases"
    for s in 3 8 11 16 24; do
        run CM_BENCH_SWEEP_ONLY="$cases" CUDAMODEL_GEMM_SPLITK=$s
    done
else
    tc="tf32_127x1000x3001,bf16_127x1000x3001,tf32_64x4096x4096,bf16_64x4096x4096"
    for s in 4 8 12 16; do
        run CM_BENCH_SWEEP_ONLY="$tc" CUDAMODEL_GEMM_CONFIG=sm90 CUDAMODEL_GEMM_SPLITK=$s
    done
    run CM_BENCH_SWEEP_ONLY="$tc" CUDAMODEL_GEMM_CONFIG=mma:128x128 CUDAMODEL_GEMM_SPLITK=16
    fc="fp32_64x4096x4096,fp32_127x1000x3001"
    for s in 2 4 8; do
        run CM_BENCH_SWEEP_ONLY="$fc" CUDAMODEL_GEMM_CONFIG=64x64x16 CUDAMODEL_GEMM_SPLITK=$s
    done
    run CM_BENCH_SWEEP_ONLY="$fc" CUDAMODEL_GEMM_CONFIG=128x128x8 CUDAMODEL_GEMM_SPLITK=8
    kc="3001x1000x64"
    run CM_BENCH_SWEEP_ONLY="$kc"
    for c in mma:128x128 mma:64x64 sm90 sm90+bt; do
        run CM_BENCH_SWEEP_ONLY="$kc" CUDAMODEL_GEMM_CONFIG=$c
    done
fi
