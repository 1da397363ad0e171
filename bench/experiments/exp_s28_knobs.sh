#!/usr/bin/env bash
# The last wave's split's limits on the H200 (session 28): wave-split-knobs.patch reads the
# most whole waves (CM_WS_WAVES, default CM__WAVE_SPLIT_MAX_WAVES 4) and the least K
# (CM_WS_MINK, default CM__SPLITK_LONG_K 1024) from the environment; FP32 shapes with whole
# waves 1..8 and last waves under half full (W) and with K 512..900 (K), each under the default,
# 16 waves, K from 512, and the split off (CUDAMODEL_GEMM_SPLITK=1), twice, alternating.
# The patch applies to ce45b80's src/compute/gemm_api.c (run there; d9a6fff took its results).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_apply bench/experiments/wave-split-knobs.patch
exp_build
W="2400x2400x2048 3200x3200x2048 3800x3800x2048 4300x4300x2048 4800x4800x1536 5000x5000x2048 6000x6000x1024 4096x1200x4096"
K="3001x3001x768 3001x3001x512 2176x2048x640 3200x3200x900 4300x4300x768"
# both runs of a setting into one file (at most 8 files come back from $OUT)
two() { exp_shapes one.txt "$@"; cat "$R/one.txt" >>"$R/$f"; rm -f "$R/one.txt"; }
for i in 1 2; do
    f=w_def.txt two "$W"
    f=w_16.txt two "$W" CM_WS_WAVES=16
    f=w_off.txt two "$W" CUDAMODEL_GEMM_SPLITK=1
    f=k_def.txt two "$K"
    f=k_512.txt two "$K" CM_WS_MINK=512
done
exp_say "done"
