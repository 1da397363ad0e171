#!/usr/bin/env bash
# The skinny kernel's minimum K for a small side of 9-16 (skinny16-min-k.patch,
# CM_SKMINK16_EXP=N; the tree: 256). exp_s61 (H100, before the 4-row form of 5f14ed1): 96-128
# won 12x4096x255 by 1.3-1.6x in every precision and 4096x12x255 "TN", lost 16x4096x160 (TF32 /
# bf16 NN 1.06 / 1.17 -> 0.89 / 0.88) and 16x10000x200 (TF32 TN 0.85 -> 0.64). Rounds of 256 /
# 160 / 96 over FP32 / TF32 / bf16, then test_skinny with 96. One device call, carry .deps; the
# patch is taken out at the end. Into $OUT: sweeps.txt, tests.txt, summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
p=bench/experiments/skinny16-min-k.patch
shapes="12x4096x255 4096x12x255 16x4096x160 16x10000x200 12x10000x200 9x8192x127 16x8192x255 13x6000x192 4096x16x200"
exp_patch_variants "$p" CM_SKMINK16_EXP "256 160 96" "$shapes" "fp32 tf32 bf16" 150
CM_SKMINK16_EXP=96 exp_test_runs none 240 test_skinny >"$R/tests.txt" 2>&1
exp_step "tests done"
exp_unpatched "$p"
