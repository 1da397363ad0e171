#!/usr/bin/env bash
# The dispatch rules shipped without a GPU run of their own (9b96191, 6ea68e8, 58dd0b3), by
# default at the checkout, beside the configurations they replaced (forced), and the staged
# operands' rows rounded to 128 bytes. One device call
# after the full check (its build-gpu/ is reused), carry .deps.
# Into $OUT, 5 files (the stride shapes, 16- but not 128-byte K rows, moved to
# exp_s33_stage128.sh, which measures them at the checkout and staged):
#   a1.txt       TF32 misaligned shapes that now run the align1 form in place of the copy:
#                the default twice ("splitk=0": the heuristic again), then mma:128x128 and
#                mma:64x64 forced with the library's split, mma:128x128 in 3 and 5 parts
#                (3001 x 127 x 1000 takes 5 by default); the copy cannot be forced back: its
#                figures of 7a784b2 are in bench/NOTES-gemm.md's session 31 section
#   fp32.txt     FP32 shapes the Hopper rules of 9b96191 and 9477cac move: the default twice
#                (splitk=0), then the tiles they replaced forced (ffma:64x64x16,
#                ffma:128x128x16q3), splitk=1 (no split) and 8 / 16 parts (the tiny tiles'
#                parts before 9477cac)
#   tests.txt    test_gpu_gemm's test_tf32_align1, test_ffma_small_class, test_split_k*, test_explain*,
#                plain, then test_tf32_align1 and test_split_k* under memcheck
#   ld128.txt    the staged operands' rows rounded to 128 bytes (pack-ld128.patch) against 16:
#                TF32 / BF16 shapes that run "sm90+pack" / "+copy", twice at the checkout
#                ("=== config head#i"), twice patched ("=== config ld128#i"); the patch stays
#                applied (exp_apply notes it for the next build)
#   summary.txt  the exp_say lines
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
a1="127x1000x3001 1000x127x3001 3001x127x1000 2047x129x2047 127x4096x3001 4096x127x3001"
CM_BENCH_SWEEP_ONLY=tf32 exp_config_sweeps a1.txt "$a1" splitk=0 mma:128x128 mma:64x64 \
    mma:128x128,splitk=3 mma:128x128,splitk=5
exp_say "a1 done" | tee -a "$R/summary.txt"
fp32="1024x1024x1024 1100x1100x1024 1024x1024x1500 1200x1200x1200 3001x1000x64 1500x3000x64 2500x2500x64 3001x3001x100 2000x2000x64 4096x2048x64 8192x8192x128 512x512x512 384x384x600 1000x127x512 256x1024x640 64x4096x767 64x128x2048 100x100x5000 64x64x4096 32x128x4096"
CM_BENCH_SWEEP_ONLY=fp32 exp_config_sweeps fp32.txt "$fp32" splitk=0 ffma:64x64x16 \
    ffma:128x128x16q3 splitk=1 splitk=8 splitk=16
exp_say "fp32 done" | tee -a "$R/summary.txt"
{
    exp_test_runs none 300 test_tf32_align1 test_ffma_small_class 'test_split_k*' 'test_explain*'
    exp_test_runs memcheck 300 test_tf32_align1 'test_split_k*'
} >"$R/tests.txt" 2>&1
exp_say "done" | tee -a "$R/summary.txt"
packed="4096x4096x3001 3001x3001x3001 3001x4096x1000 1000x3001x127 2047x2047x2047 4096x1000x1001"
exp_sweeps_ab ld128.txt bench/experiments/pack-ld128.patch ld128 "$packed" "tf32 bf16" 120
