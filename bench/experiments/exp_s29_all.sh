#!/usr/bin/env bash
# The next GPU session's first call (written in session 28, which had no device time left):
# one build, then
#   1. test_gpu_gemm's test_wave_split (175bb89's cases: K = 640, 2400^2 whole) plain and
#      under memcheck                                          -> wave.txt, wave-memcheck.txt
#   2. FP32 shapes off the sweep that the dispatch runs on 64 x 64 FFMA tiles in split-K where
#      cuBLAS is far ahead (768^2 x 4096 0.70x, 1024^2 x 8192 0.78x at 50d8002), forced onto
#      the 128 x 128 tiles, with and without split-K                 -> tiles.txt
#   3. the sweep's mid-size FP32 cases under 0.9x whose plans split nothing or little
#      (1000^3 on 64 x 64, 512^3 on 32 x 64, 3001 x 1000 x 64 on 128 x 128 q3, ...) under
#      each shipped FFMA tile and forced split-K                     -> small.txt
# scripts/gemm-sweep-configs.sh: "=== config <name>" before each sweep, "default" first;
# compare with scripts/sweep_compare.py. FP32 only (CM_BENCH_SWEEP_ONLY).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build
exp_gemm_test_memcheck test_wave_split wave
export CM_BENCH_SWEEP_ONLY=fp32
exp_config_sweeps tiles.txt "768x768x4096 1024x1024x8192 512x2048x8192 256x4096x4096 96x5000x3000 640x640x2048 2048x256x4096 1024x512x4096" \
    ffma:128x128x16q3 ffma:128x128x8 ffma:64x64x16 ffma:128x128x16q3,splitk=2 \
    ffma:128x128x16q3,splitk=4 ffma:128x128x16q3,splitk=8
exp_config_sweeps small.txt "1000x1000x1000 512x512x512 512x4096x512 3001x1000x64 3001x127x1000 127x1000x3001 3001x4096x1000" \
    ffma:32x64x16 ffma:64x64x16 ffma:128x128x16q3 ffma:128x128x8 splitk=2 splitk=4 \
    ffma:32x64x16,splitk=2 ffma:64x64x16,splitk=2
exp_say "done"
