#!/usr/bin/env bash
# The sweep's worst cases on the H200 (session 28): the plans of the shapes furthest under
# 0.9x cuBLAS at the full check of 5a4634b, in all three precisions, under the library's own
# split-K rule and forced to 1, 2, 4, 8 and 16 parts (CUDAMODEL_GEMM_SPLITK), and --overhead
# (one call alone, one among 64, host time) for the default.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build
S="127x1000x3001 1000x127x3001 7x3001x3001 3001x127x1000 3001x1000x64 7x4096x4096 64x64x4096 4096x64x4096 64x4096x4096"
run() {
    local f="$1"
    shift
    env "$@" CM_BENCH_SWEEP_SHAPES="$S" timeout 120 build-gpu/bench/bench_gemm --sweep \
        >>"$R/$f" 2>&1
}
run default.txt
for s in 1 2 4 8 16; do run split.txt CUDAMODEL_GEMM_SPLITK=$s; echo "=== end $s" >>"$R/split.txt"; done
run default.txt
CM_BENCH_SWEEP_SHAPES="$S" timeout 120 build-gpu/bench/bench_gemm --overhead \
    >"$R/overhead.txt" 2>&1
# the last wave's split at d9a6fff's limits (its knobs run's shapes either side of them)
exp_shapes limits.txt "2176x2048x640 3200x3200x900 4300x4300x768 5000x5000x2048 2400x2400x2048 3001x3001x3001"
exp_say "done"
