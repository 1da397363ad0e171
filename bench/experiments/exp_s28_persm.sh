#!/usr/bin/env bash
# Split-K's resident blocks from the FFMA table (session 28): splitk-table-per-sm.patch makes
# cm__gemm_splitk_parts count an FFMA tile's resident blocks a multiprocessor from its
# configuration's __launch_bounds__ minimum (64 x 64: 4, was guessed 2; 128 x 128: 2, was 1),
# so its slot rules give twice the parts. FP32 shapes whose parts change (the sweep's four and
# others), at the checkout and with the patch, twice each (exp_ab_patch). The patch applies to
# d9a6fff's src/compute/gemm_api.c (run at 822eafa; 50d8002 took it, with the layer rule).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build
S="64x4096x4096 4096x64x4096 127x1000x3001 1000x127x3001 256x4096x4096 1024x1024x8192 512x2048x8192 2048x256x4096 128x8192x2048 96x5000x3000 200x200x8192 384x384x8192 768x768x4096 1024x512x4096 300x1500x2048 100x3000x1024 2000x100x2048 640x640x2048 512x512x4096"
exp_ab_patch bench/experiments/splitk-table-per-sm.patch "$S"
exp_say "done"
