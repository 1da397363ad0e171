#!/usr/bin/env bash
# Two questions exp_s77 / exp_s79 left (H100 figures there):
# - the first split rule (C's 32 x 64 FFMA tiles on at most a quarter of the SMs) keeps parts of
#   >= 256 of K below K 2048, so FP32 2000x16x500 "NN" (32 tiles) ran whole at 0.66x cuBLAS
#   while forced into 4 parts it ran 1.25x: CM_SK1_EXP=N takes parts of >= 64 there below
#   K 768 where m n k >= N x 2^20 (1: always; 16: not 64x64x300, 1000x16x300, 128^2x500);
# - TF32 on the FFMA tiles (operands off 16 bytes under the copy's floor) takes 64 x 64 tiles
#   where FP32 takes 32 x 64 ones and splits them: TF32 3001x64x500 "NN" 0.57-0.64x,
#   3001x64x127 "TN" 0.84x; CM_TF32_FFMA_EXP=1 gives such a product FP32's choice.
# splitk-first-rule-tf32-ffma.patch, variants: none, SK1 1, SK1 16, TF32 1, TF32 1 + SK1 16;
# FP32 and TF32, "NN" / "TN", two rounds; then test_gpu_gemm's split / small tests with both
# on. One device call, carry .deps. Into $OUT: sweeps.txt, tests.txt, summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
p=bench/experiments/splitk-first-rule-tf32-ffma.patch
s="2000x16x500 1000x16x300 2000x16x700 256x256x300 256x256x600 128x512x400 64x64x300 \
64x64x700 128x128x500 200x200x400 500x64x600 1000x32x400 3001x64x500 3001x64x127 \
4096x127x127 127x127x127 3001x127x500 1000x127x300 512x512x7 4096x64x300"
exp_build | tee -a "$R/summary.txt"
exp_patched "$p"
for round in 1 2; do
    exp_sweep1 "base#$round" "$s" "fp32 tf32" 200
    exp_sweep1 "sk1#$round" "$s" "fp32 tf32" 200 CM_SK1_EXP=1
    exp_sweep1 "sk16#$round" "$s" "fp32 tf32" 200 CM_SK1_EXP=16
    exp_sweep1 "tf#$round" "$s" "fp32 tf32" 200 CM_TF32_FFMA_EXP=1
    exp_sweep1 "tf_sk16#$round" "$s" "fp32 tf32" 200 CM_TF32_FFMA_EXP=1 CM_SK1_EXP=16
done >"$R/sweeps.txt" 2>&1
exp_step "sweeps done"
CM_SK1_EXP=1 CM_TF32_FFMA_EXP=1 exp_test_runs none 200 test_split_k test_ffma_small_class \
    test_small_all_combinations test_medium_odd test_reproducible >"$R/tests.txt" 2>&1
exp_step "tests done"
exp_unpatched "$p"
