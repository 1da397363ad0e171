#!/usr/bin/env bash
# Small odd-K staging: where both operands are K-contiguous with rows off 16 bytes (TN with
# K = 127, 1001...), both go to the row-copy kernel; the staging before 8a7b8ae
# (cudaMemcpy2DAsync) beat it on small products (H100, bf16 4096x127x127 TN 0.90 against 0.77,
# tf32 1000x3001x127 TN 1.07 against 0.94) and lost on large ones. pack-pair-all.patch sends
# both sides to the pair kernel (an element a thread, 4x the blocks at K = 127) where together
# they are at most CM_PACK_EXP MiB (0: as the tree). Rounds of 0 / 1 / 4 / 8 over BF16 and TF32
# shapes, NN and TN, in one build (sweeps.txt, for scripts/sweep_compare.py --table), then
# test_realigned plain and under memcheck with CM_PACK_EXP=64 (every staged side through the
# pair kernel). One device call, carry .deps; the patch is taken out at the end. Into $OUT:
# sweeps.txt, tests.txt, summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
p=bench/experiments/pack-pair-all.patch
shapes="${S57_SHAPES:-127x4096x127 4096x127x127 3001x64x127 127x127x127 1000x3001x127 512x512x1001 1000x1000x1001 127x1000x3001 1000x127x3001 2047x2047x2047 300x300x3001}"
exp_patched "$p"
exp_variant_sweeps CM_PACK_EXP "0 1 4 8" "$shapes" "bf16 tf32" 120 >"$R/sweeps.txt" 2>&1
exp_step "sweeps done"
{
    CM_PACK_EXP=64 exp_test_runs none 240 test_realigned "test_sm90*"
    CM_PACK_EXP=64 exp_test_runs memcheck 300 test_realigned
} >"$R/tests.txt" 2>&1
exp_step "tests done"
exp_unpatched "$p"
