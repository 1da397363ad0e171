#!/usr/bin/env bash
# Session 27, one device call (carry .deps): the whole --sweep twice with time_pair's order
# (ours, cuBLAS, cuBLAS, ours), the first's rows into $OUT/h200.jsonl (commit $1), then the
# K-tail shapes (FP32).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build
CM_BENCH_COMMIT="${1:?commit}" CM_BENCH_RESULTS="$R/h200.jsonl" \
    build-gpu/bench/bench_gemm --sweep >"$R/sweep1.txt" 2>&1
exp_say "sweep 1 rc $?"
build-gpu/bench/bench_gemm --sweep >"$R/sweep2.txt" 2>&1
exp_say "sweep 2 rc $?"
exp_shapes shapes.txt "1000x4096x4096 3001x3001x3001 4096x4096x3001 3001x4096x1000 \
4093x4093x4093 2000x2000x2000 1000x1000x1000 4096x4096x1000"
exp_say "all done"
