#!/usr/bin/env bash
# Experiment (issue #15): split-K part counts forced on the sweep's worst split cases (TF32 /
# bf16 / FP32 127 x 1000 x 3001 on mma:64x64 or FFMA tiles; FP32 64 x 4096 x 4096), to see how
# many parts each wants before changing cm__gemm_splitk_parts. Run on the GPU machine after a
# build of build-gpu/ (scripts/gpu-check.sh builds it):
#   bash bench/experiments/exp_gemm_split_parts.sh > exp.txt
# Prints the sweep's rows and kernel lines; nothing goes to bench/results.
set -u
b=build-gpu/bench/bench_gemm
run() {
    echo "=== $*"
    env -u CM_BENCH_RESULTS "$@" "$b" --sweep 2>&1 | grep -E "^sweep_|kernel" || true
}
cases="127x1000x3001,64x4096x4096"
run CM_BENCH_SWEEP_ONLY="$cases"
for s in 3 8 11 16 24; do
    run CM_BENCH_SWEEP_ONLY="$cases" CUDAMODEL_GEMM_SPLITK=$s
done
