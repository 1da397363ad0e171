#!/usr/bin/env bash
# Experiment (issue #15): why the FFMA tile's bounded form (problems that are not whole tiles)
# runs ~39 TFLOP/s where the whole-tile kernel runs ~46 on the H200, even after 6a58c59 gave
# its inside K tiles the whole-tile copies. Shapes that tell the suspects apart, column-major
# FP32, ours against cuBLAS in one run (bench_gemm's sweep over CM_BENCH_SWEEP_SHAPES; TN = both
# operands along K, lda = ldb = K):
#   4096 x 4096 x 2992   whole tiles, rows of 2992 floats (32-byte sectors: 11968 B = 374)
#   4096 x 4096 x 3000   bounded, a K tail only, rows on 32-byte sectors (12000 B = 375)
#   4096 x 4096 x 3001   bounded, a K tail only, rows off 32-byte sectors
#   1024 / 1000 x 4096 x 4096   whole against rows past M in one row of tiles (one wave of
#                               256 blocks: the edge blocks set the time)
#   3072 x 4096 x 1008 / 3001 x 4096 x 1000   whole against bounded at short K
# then Nsight Compute (bench/experiments/exp_gemm_ncu.sh) over three of them.
# Run on the device from the repository root, carry .deps; writes into $OUT.
set -u
R="${OUT:-/tmp}"
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCUDAMODEL_BUILD_TESTS=OFF -DCUDAMODEL_BUILD_EXAMPLES=OFF -DCUDAMODEL_BUILD_TOOLS=OFF \
    >"$R/exp-build.txt" 2>&1 &&
    cmake --build build-gpu --parallel "$(nproc)" --target bench_gemm >>"$R/exp-build.txt" 2>&1 ||
    { tail -20 "$R/exp-build.txt"; exit 1; }
export CM_BENCH_SWEEP_ONLY=fp32
export CM_BENCH_SWEEP_SHAPES="${CM_EXP_SHAPES:-4096x4096x2992 4096x4096x3000 4096x4096x3001 \
1024x4096x4096 1000x4096x4096 3072x4096x1008 3001x4096x1000}"
env -u CM_BENCH_RESULTS build-gpu/bench/bench_gemm --sweep >"$R/exp-sweep.txt" 2>&1
grep -E 'fp32' "$R/exp-sweep.txt" | head -40
CM_NCU_SECTIONS="${CM_EXP_SECTIONS:-SpeedOfLight Occupancy WarpStateStats MemoryWorkloadAnalysis}" \
    bash bench/experiments/exp_gemm_ncu.sh ${CM_EXP_NCU:-fp32_4096x4096x2992_TN \
    fp32_4096x4096x3000_TN fp32_4096x4096x3001_TN} >"$R/exp-ncu.txt" 2>&1
wc -l "$R/exp-ncu.txt"
