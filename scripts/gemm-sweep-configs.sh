#!/usr/bin/env bash
# bench_gemm --sweep once with the dispatch's own choice and once per forced configuration
# (CUDAMODEL_GEMM_CONFIG), all into one file, for scripts/sweep_compare.py: which kernel wins
# each shape of the sweep, measured in one session on one GPU. An experiment for the dispatch
# table (src/compute/gemm_api.c), not a check: its rows do not go to the results file.
#
#   scripts/gemm-sweep-configs.sh [config ...]   default list: sm90 sm90+bt sm90+at skinny
#                                                mma:64x64 mma:128x128 ffma:32x64x16
#                                                ffma:64x64x16
#
# An entry "splitk=N" runs the default configuration with CUDAMODEL_GEMM_SPLITK=N instead (N
# parts of K on every kernel, 1: never split); "<config>,splitk=N" both.
#
# Needs build-gpu/bench/bench_gemm (scripts/gpu-check.sh's build, or part a of
# scripts/gpu-check-part.sh). Writes ${OUT:-/tmp}/sweeps.txt: "=== config <name>" before each
# sweep ("default" first). About 7 s a sweep on the H200. CM_BENCH_SWEEP_SHAPES (bench_gemm.c)
# passes through: the sweeps then run those shapes instead of the issue's 49. A forced name a shape cannot take
# runs what the dispatch falls back to (the sweep's kernel column says what was chosen).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
bench=build-gpu/bench/bench_gemm
[ -x "$bench" ] || { echo "$0: $bench is not built" >&2; exit 2; }
out="${OUT:-/tmp}/sweeps.txt"
configs=("$@")
[ ${#configs[@]} -gt 0 ] ||
    configs=(sm90 sm90+bt sm90+at skinny mma:64x64 mma:128x128 ffma:32x64x16 ffma:64x64x16)
{
    echo "=== config default"
    env -u CUDAMODEL_GEMM_CONFIG -u CUDAMODEL_GEMM_SPLITK -u CM_BENCH_RESULTS \
        timeout 120 "$bench" --sweep
    for c in "${configs[@]}"; do
        echo "=== config $c"
        name="${c%%,splitk=*}" split=""
        case "$c" in *splitk=*) split="${c##*splitk=}" ;; esac
        case "$c" in splitk=*) name="" ;; esac
        env -u CM_BENCH_RESULTS -u CUDAMODEL_GEMM_CONFIG -u CUDAMODEL_GEMM_SPLITK \
            ${name:+CUDAMODEL_GEMM_CONFIG="$name"} ${split:+CUDAMODEL_GEMM_SPLITK="$split"} \
            timeout 120 "$bench" --sweep
    done
} >"$out" 2>&1
echo "sweeps of ${#configs[@]} forced configurations and the default in $out"
