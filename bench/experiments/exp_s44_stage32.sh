#!/usr/bin/env bash
# "TN" products on the Hopper kernel whose K-contiguous rows are an odd number of 16 bytes
# (16 mod 32): at session 35 on an H100 TF32 4096 x 4096 x 3004 TN (rows of 12016 bytes) ran
# 0.66x cuBLAS, 4092 0.60x, bf16 3000 / 3064 0.57-0.63x, while rows of 12000 / 12256 bytes
# (multiples of 32, not of 128) ran 1.0x. stage32.patch stages only such rows into rows of
# whole 128-byte lines first (stage128.patch staged every row that is not a multiple of 128
# bytes and lost 20 % on the 32-byte multiples), where K >= 256 and m n / (m + n) >= 1536.
# Run after exp_s42_copy16.sh's verdict: BF16 staging was bound by the copy. One device call,
# carry .deps; reuses build-gpu/ of an earlier call (~60 s of build on a fresh one). Into
# $OUT, 3 files:
#   stage32.txt  the sweep over $shapes (TF32, BF16) twice at the checkout ("head#i"), twice
#                with stage32.patch ("stage32#i"), then once with pack-copy16.patch on top
#                ("stage32+copy16#1": skipped if the checkout already has it), then
#                "hm768#1": shapes under the floor staged (CM_EXP_STAGE32_HM=768)
#   tests.txt    test_sm90_stage32 (new with the patch), test_sm90*, test_realigned,
#                test_explain* plain, then test_sm90_stage32 under memcheck
#   summary.txt  the exp_say lines
# The patches stay applied (exp_apply notes them); the environment hook CM_EXP_STAGE32_HM is
# for this script only (a shipped rule keeps the constant, without the getenv).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
shapes="4096x4096x3004 4096x4096x3000 4096x4096x3008 4096x4096x3064 4096x4096x4092 4096x4096x4096 3004x3004x3004 8192x8192x3000 2048x8192x3004 3001x4096x1000 1000x4096x3004"
exp_sweeps_ab stage32.txt bench/experiments/stage32.patch stage32 "$shapes" "tf32 bf16" 150
if git apply --check bench/experiments/pack-copy16.patch 2>/dev/null; then
    exp_patch_build bench/experiments/pack-copy16.patch >>"$R/summary.txt"
    exp_sweep1 "stage32+copy16#1" "$shapes" "tf32 bf16" 150 >>"$R/stage32.txt" 2>&1
    exp_say "stage32+copy16 done" | tee -a "$R/summary.txt"
fi
exp_sweep1 "hm768#1" "1000x4096x3004 2048x2048x3004 1500x4096x3000 3004x3004x3004" \
    "tf32 bf16" 100 CM_EXP_STAGE32_HM=768 >>"$R/stage32.txt" 2>&1
exp_say "hm768 done" | tee -a "$R/summary.txt"
{
    exp_test_runs none 300 test_sm90_stage32 'test_sm90*' test_realigned 'test_explain*'
    exp_test_runs memcheck 200 test_sm90_stage32
} >"$R/tests.txt" 2>&1
exp_say "done" | tee -a "$R/summary.txt"
