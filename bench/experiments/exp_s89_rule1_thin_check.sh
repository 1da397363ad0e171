#!/usr/bin/env bash
# Session 48's dispatch changes on the GPU, measured against what they replaced (TF32 only, two
# rounds each, no patch; one device call, carry .deps):
# 1. TF32 tiny-class rule 1 (src/compute/gemm_api.c, cm__gemm_sm90_tiny): the default against
#    the Hopper kernel forced ("sm90", the old choice from K 1024 and over few tiles),
#    mma:64x64 and mma:128x128 forced, over exp_s87's shapes and held-out ones (200^2 x 1500,
#    320^2 x 800, 640 x 384 x 700, 96 x 3000 x 1200, 127 x 1000 x 3001, whose misaligned "NN"
#    keeps the 128 x 128 align1 tiles while its aligned "TN" now runs mma:64x64);
# 2. the same for the misaligned thin "TN" shapes on sm90+copy (64 x 3001 x 2001 0.64x in
#    exp_s88; 64 x 4096 x 3001, 128 x 3001 x 2001): mma:64x64 forced is their align1 form;
# 3. the same for a long C over 12-24 rows from K 1024 (the sweep's n x m: 3001 x 16 x 1500,
#    4096 x 12 x 4096, 4096 x 24 x 2048, 8192 x 16 x 1024), which rule 1's short-side floor of
#    32 leaves to mma:64x64 (4096 x 32 x 2048 keeps the Hopper kernel);
# 4. the align1 form over a thin C (cm__gemm_a1_thin_parts): the default against splitk = 2, 3,
#    4, 6, 8, 12 forced over exp_s88's thin shapes and held-out ones (odd K or rows), and four
#    thin shapes with 16-byte rows (16 x 4096 x 4096, 16 x 8192 x 8192, 4096 x 16 x 4096,
#    16 x 6000 x 2000: that form keeps the slot rule's 2-4 parts, 0.78-0.88x in exp_s86), to
#    see whether the thin rule's counts would serve it too.
# Into $OUT: rule1_1.txt, rule1_2.txt, thin_1.txt, thin_2.txt, summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
r1="128x128x1500 256x128x1200 64x64x1000 256x256x1100 512x256x1500 1000x64x1200 64x64x700 \
256x256x600 384x384x600 1024x256x700 300x700x900 512x512x512 128x128x2048 100x100x5000 \
200x200x1500 320x320x800 640x384x700 96x3000x1200 127x1000x3001 1000x127x3001 64x3001x2001 \
64x4096x3001 128x3001x2001 \
3001x16x1500 4096x12x4096 4096x24x2048 8192x16x1024 4096x32x2048"
thin="16x6000x2001 6000x16x2001 16x4000x2001 3001x16x1500 16x3001x2001 16x5000x1501 \
8192x12x1999 16x2000x3001 2000x16x4095 16x7000x1801 5001x12x2501 16x2500x2501 3501x16x1201 \
16x4500x3001 6501x16x1701 16x4096x4096 16x8192x8192 4096x16x4096 16x6000x2000"
for i in 1 2; do
    CM_BENCH_SWEEP_ONLY=tf32 exp_config_sweeps "rule1_$i.txt" "$r1" sm90 mma:64x64 mma:128x128
done
for i in 1 2; do
    CM_BENCH_SWEEP_ONLY=tf32 exp_config_sweeps "thin_$i.txt" "$thin" splitk=2 splitk=3 \
        splitk=4 splitk=6 splitk=8 splitk=12
done
exp_step "configs done"
