#!/usr/bin/env bash
# TF32 with a small side of 9-16: the skinny kernel against the tensor-core tiles where the
# dispatch still gives skinny (K under 1024, an operand MN-major with a side under 16, rows off
# 16 bytes) or FFMA. exp_s67 (H100, forced in one run): 16x10000x999 NN / TN skinny 0.78 / 1.03x,
# mma+a1 0.85 / 1.21x; 3001x12x2001 NN ffma 0.70x, mma+a1 1.10x; 16x3001x2001 NN skinny 0.70x,
# mma+a1 0.95x; 7000x16x300 TN skinny 0.70x, mma 1.06x. No patch: the default against forced
# skinny, mma:64x64 (its align1 form on rows off 16 bytes) and mma:128x128, two rounds, to find
# a rule by side, K and layout. One device call, carry .deps. Into $OUT: configs1.txt,
# configs2.txt (scripts/sweep_compare.py --table), summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
shapes="16x10000x999 12x10000x999 9x10000x999 16x3001x2001 12x3001x2001 3001x12x2001 3001x16x2001 7000x16x300 7000x12x300 16x8192x512 12x8192x512 9x4096x4096 12x4096x4096 13x4096x2048"
CM_BENCH_SWEEP_ONLY="tf32" exp_config_rounds "$shapes" skinny mma:64x64 mma:128x128
exp_step "done"
