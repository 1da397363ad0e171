#!/usr/bin/env bash
# The pipelined small FFMA tiles (kernels/gemm.h: 64x64x16q3 and 32x64x16q3, PIPE4 forms with
# 3 cp.async stages; tuning-only in the tree), shipped for this experiment by
# ffma-small-q3-ship.patch so that build-gpu/ (scripts/gpu-check.sh's build, sm_90) compiles
# them without a whole tuning build (the 64 x 64 / 32 x 64 tiles run the tiny and small FP32
# classes and most FP32 cases under 0.9x: 3001 x 127 x 1000, 127 x 1000 x 3001, 1000^3,
# 64 x 64 x 4096, 3001 x 1000 x 64). Into $OUT, 3 files:
#   every.txt, every-memcheck.txt  test_gpu_gemm's test_every_config (every built
#                                  configuration forced on tails, whole tiles and misaligned
#                                  operands: the two new ones included), plain and under memcheck
#   smallq3.txt                    FP32 sweeps: default, then the new tiles and the old ones
#                                  forced (each with its own split-K), for
#                                  scripts/sweep_compare.py --table
# The patch stays applied. S30_MEMCHECK=0: test_every_config plain only (every.txt).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build
exp_apply bench/experiments/ffma-small-q3-ship.patch
cmake --build build-gpu --parallel 16 >/tmp/patch-build.txt 2>&1 ||
    { echo "patched build failed"; tail -30 /tmp/patch-build.txt; exit 1; }
exp_say "patched build done"
if [ "${S30_MEMCHECK:-1}" = 0 ]; then
    CUDAMODEL_REQUIRE_GPU=1 CM_TEST_TIER=gpu CM_TEST_FILTER=test_every_config timeout 300 \
        build-gpu/tests/test_gpu_gemm >"$R/every.txt" 2>&1
    exp_say "every plain rc $?"
else
    exp_gemm_test_memcheck test_every_config every
fi
CM_BENCH_SWEEP_ONLY=fp32 exp_config_sweeps smallq3.txt "3001x127x1000 127x1000x3001 1000x127x3001 1000x1000x1000 512x512x512 64x64x4096 3001x1000x64 64x4096x4096 4096x64x4096 4096x64x1000 768x768x4096 96x5000x3000 127x127x127 2000x300x800" \
    ffma:64x64x16q3 ffma:32x64x16q3 ffma:64x64x16 ffma:32x64x16 ffma:64x64x16q3 ffma:32x64x16q3
exp_say "done"
