#!/usr/bin/env bash
# The FP32 small-class rule cm__gemm_ffma_128_fills (on Hopper: 128x128x16q3 where its
# split-K gives 3/4 of the SMs a block) and its neighbours:
#   1. test_gpu_gemm whole, plain                                   -> gemm.txt
#   2. FP32 small-class shapes off the sweep: the default (the rule's choice) against the 64 x
#      64 and 128 x 128 tiles forced, twice each (1024^3 keeps 64 x 64 by the rule's
#      400-long parts; is that right?)                              -> small128.txt
#   3. FP32 short K (<= 128) on C of many tiles: 128x128x16q3 (skinny class's table entry)
#      against the 32 x 64 and 64 x 64 tiles                        -> shortk.txt
#   4. FP32 tiny class at K = 512 .. 767 (no split-K today): forced 2 and 4 parts
#                                                                   -> tinyk.txt
#   5. FP32 tiny C over a long K (64 x 64 x 4096 runs 0.79-0.84x in 16 parts of 256, 32 blocks
#      on 132 SMs; cuBLAS ~19 us, ours ~23): 8 and 32 parts, 64 x 64 tiles in 32
#                                                                   -> tinylong.txt
# scripts/gemm-sweep-configs.sh: "=== config <name>" before each sweep, "default" first;
# compare with scripts/sweep_compare.py.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build
CUDAMODEL_REQUIRE_GPU=1 CM_TEST_TIER=gpu timeout 300 build-gpu/tests/test_gpu_gemm >"$R/gemm.txt" 2>&1
exp_say "test_gpu_gemm rc $?"
export CM_BENCH_SWEEP_ONLY=fp32
exp_config_sweeps small128.txt "1200x1200x1200 1024x1024x1024 1024x1024x1500 1000x1000x1000 768x768x4096 640x640x2048 1000x1500x2000 700x900x3000 1500x1100x600 1408x1280x768 1100x1100x1024 512x4096x512 2000x600x1500 300x3000x2500" \
    ffma:64x64x16 ffma:128x128x16q3 ffma:64x64x16 ffma:128x128x16q3
exp_config_sweeps shortk.txt "3001x1000x64 2000x2000x64 1500x3000x64 2500x2500x64 3001x3001x100 1000x3001x127 4096x2048x64 3001x1000x32" \
    ffma:32x64x16 ffma:64x64x16 ffma:128x128x8
exp_config_sweeps tinyk.txt "512x512x512 256x1024x640 384x384x600 4096x64x512 700x300x700 1000x127x512 512x512x700" \
    splitk=2 splitk=4 splitk=2 splitk=4
exp_config_sweeps tinylong.txt "64x64x4096 64x64x8192 32x128x4096 100x100x5000 64x128x2048 128x128x8192" \
    splitk=8 splitk=32 ffma:64x64x16,splitk=32 ffma:32x64x16,splitk=32
exp_say "done"
