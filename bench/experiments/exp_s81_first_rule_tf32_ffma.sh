#!/usr/bin/env bash
# Two questions exp_s77 / exp_s79 left (H100 figures there):
# - the first split rule (C's 32 x 64 FFMA tiles on at most a quarter of the SMs) keeps parts of
#   >= 256 of K below K 2048, so FP32 2000x16x500 "NN" (32 tiles) ran whole at 0.66x cuBLAS
#   while forced into 4 parts it ran 1.25x: CM_SK1_EXP=N takes parts of >= 64 there below
#   K 768 where m n k >= N x 2^20 (1: always; 16: not 64x64x300, 1000x16x300, 128^2x500);
# - TF32 on the FFMA tiles (operands off 16 bytes under the copy's floor) takes 64 x 64 tiles
#   where FP32 takes 32 x 64 ones and splits them: TF32 3001x64x500 "NN" 0.57-0.64x,
#   3001x64x127 "TN" 0.84x; CM_TF32_FFMA_EXP=1 gives such a product FP32's choice.
# - the skinny rows kernel at R = 16 (FP32 16 x 6000 x 2001 NN 0.59x, 16 x 5000 x 1501 NN 0.60x
#   on 2 rows a warp: its 4-row form needs a grid of 3/2 blocks an SM): CM_RPW4_MINR (least R,
#   default 9) and CM_RPW4_Q (least grid in quarters of the SMs, default 6) -> rpw.txt, with
#   skinny forced on the TF32 16-wide "NN" shapes the align1 tiles take by default.
# - the mma.sync tiles (TF32, BF16) split only from K 512 (K 1024 over more than a quarter of the
#   SMs' tiles) though forced 4 parts beat them (H100: TF32 384x384x600 NN 0.87 -> 1.10x,
#   4096x16x1000 NN 0.86 -> 1.15x, 256x256x600 NN 0.88 -> 1.06x): CM_MMA_SK_EXP=1 splits them
#   from K 256 into parts of >= 128 wherever the tiles fill under half the slots -> mma.txt.
# splitk-first-rule-tf32-ffma.patch, variants: none, SK1 1, SK1 16, TF32 1, TF32 1 + SK1 16;
# FP32 and TF32, "NN" / "TN", two rounds; then test_gpu_gemm's split / small tests with all
# on. One device call, carry .deps. Into $OUT: sweeps.txt, rpw.txt, mma.txt, tests.txt, summary.txt.
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
r="16x3001x2001 16x5000x1501 16x6000x2001 16x2000x1000 16x4096x2048 13x4096x2048 12x6000x2001 \
3001x16x2001 6000x16x2001 3001x12x2001 16x1000x4096 16x8192x1024 14x5000x1500 10x5000x1500"
f="16x3001x2001 16x5000x1501 16x6000x2001 16x4096x2048"
for round in 1 2; do
    exp_sweep1 "rpw_base#$round" "$r" "fp32 tf32" 200
    exp_sweep1 "rpw_q2#$round" "$r" "fp32 tf32" 200 CM_RPW4_Q=2
    exp_sweep1 "rpw_r16q0#$round" "$r" "fp32 tf32" 200 CM_RPW4_MINR=16 CM_RPW4_Q=0
    exp_sweep1 "rpw_r14q2#$round" "$r" "fp32 tf32" 200 CM_RPW4_MINR=14 CM_RPW4_Q=2
    exp_sweep1 "sk_base#$round" "$f" tf32 100 CUDAMODEL_GEMM_CONFIG=skinny
    exp_sweep1 "sk_r16q0#$round" "$f" tf32 100 CUDAMODEL_GEMM_CONFIG=skinny CM_RPW4_MINR=16 \
        CM_RPW4_Q=0
done >"$R/rpw.txt" 2>&1
exp_step "rpw done"
m="384x384x400 384x384x600 700x300x400 4096x16x1000 256x256x600 256x256x300 512x512x512 \
1024x256x700 300x700x900 4096x64x600 2048x128x500 1000x1000x500 768x768x384 3001x64x500"
for round in 1 2; do
    exp_sweep1 "mma_base#$round" "$m" "tf32 bf16" 200
    exp_sweep1 "mma_sk#$round" "$m" "tf32 bf16" 200 CM_MMA_SK_EXP=1
done >"$R/mma.txt" 2>&1
exp_step "mma done"
CM_SK1_EXP=1 CM_TF32_FFMA_EXP=1 CM_RPW4_MINR=16 CM_RPW4_Q=0 CM_MMA_SK_EXP=1 \
    exp_test_runs none 200 test_split_k test_ffma_small_class \
    test_small_all_combinations test_medium_odd test_reproducible test_skinny >"$R/tests.txt" 2>&1
exp_step "tests done"
exp_unpatch "$p" # no rebuild: gpu-check.sh rebuilds the noted files on a later call
