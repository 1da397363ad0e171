#!/usr/bin/env bash
# Experiment (issue #15): Nsight Compute over the sweep's small-K and tiny cases, ours and
# cuBLAS's kernels, to see where their time goes (3001 x 1000 x 64: every kernel of ours runs
# 11-13 TFLOP/s, 30-35 us for 384 Mflop and a 12 MB C, cuBLAS 17-19; TF32 127 x 1000 x 3001:
# 0.49x with the realignment's copies, the parts and the reduction).
# Run on the GPU machine after a build of build-gpu/ (scripts/gpu-check.sh builds it), where
# ncu reads the counters (Firecracker runtime; device README):
#   bash bench/experiments/exp_gemm_ncu.sh [case ...] > ncu.txt   (sweep case names without
#   "sweep_"; default: the four below)
# --clock-control none leaves the clocks alone (METHOD.md). Each case runs once under ncu
# with few timed calls (CM_BENCH_MIN_CALLS is not a knob: the sweep's own adaptive count
# applies); --launch-count caps the kernels profiled. The harness's own kernels (fills, the
# non-finite count, the reference samples) are dropped from the output and every other line is
# kept whole (our kernels' metrics sort after the harness's, so a cap on lines would cut them).
set -u
b=build-gpu/bench/bench_gemm
cases=("$@")
[ ${#cases[@]} -gt 0 ] ||
    cases=(tf32_3001x1000x64_TN bf16_3001x1000x64_NN fp32_3001x1000x64_NN tf32_127x1000x3001_TN)
# Two passes a case, each with its own --launch-count: our kernels (gemm_*, skinny_*, gemv_*,
# the names in kernels/), then cuBLAS's (sm90_xmma..., cutlass..., splitKreduce...); one pass
# over every kernel spent its count on cuBLAS's warm-up calls and never reached ours.
# CM_NCU_SECTIONS="WarpStateStats MemoryWorkloadAnalysis" replaces the default sections (its
# metrics print whole: the filter below keeps only the default sections' lines otherwise).
sections=(--section SpeedOfLight --section LaunchStats --section Occupancy)
keep='Duration|DRAM Throughput|Compute \(SM\) Throughput|Grid Size|Block Size'
keep2='Achieved Occupancy|Registers|Dynamic Shared|^ *sweep_'
if [ -n "${CM_NCU_SECTIONS:-}" ]; then
    sections=()
    for x in $CM_NCU_SECTIONS; do sections+=(--section "$x"); done
    keep='.' keep2='.'
fi
for c in "${cases[@]}"; do
    for who in ours cublas; do
        if [ "$who" = ours ]; then filter='regex:^(gemm_|skinny_|gemv_)'
        else filter='regex:^(sm[0-9]|cutlass|splitK|gemmSN|gemmk|Kernel|xmma|ampere)'; fi
        echo "=== $c ($who)"
        env -u CM_BENCH_RESULTS CM_BENCH_SWEEP_ONLY="$c" timeout 120 ncu --clock-control none \
            --kernel-name "$filter" --launch-count 12 "${sections[@]}" --csv --page details \
            "$b" --sweep 2>&1 |
            grep -E '^"|^ *sweep_' |
            grep -E -e "$keep" -e "$keep2" |
            awk -F'","' '{ if (NF > 10) print $5 " | " $(NF-2) " | " $NF; else print }' |
            sort | uniq -c
    done
done
