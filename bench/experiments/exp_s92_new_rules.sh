#!/usr/bin/env bash
# Session 49's dispatch changes (eda5b80, c3355ba) on the GPU as the library's default, against
# what they replaced (forced), two rounds each; one device call (~2.5 min cold), carry .deps:
# 1. test_gpu_gemm's test_split_k plain and under memcheck (its new shapes: 127 x 1 x 3001 "NN",
#    1 x 200 x 2000 "NT", 64 x 3001 x 2001 "TN"; 4096 x 64 x 1000 BF16 now in 4 parts):
#    split_k.txt, split_k-memcheck.txt;
# 2. gemv across K over few rows (cm__gemm_gemv_few_parts): the default against splitk=1 (the
#    old whole K) and 8 / 16 forced, over the measured shapes and held-out ones (96 / 160 /
#    250 / 400 rows, K 1536 .. 6000, M == 1 ones): gemv1.txt, gemv2.txt;
# 3. the TF32 align1 form in place of a copied Hopper kernel that runs a small C whole
#    (cm__gemm_realign_mode): the default against "sm90" forced (the copy) and mma:64x64, over
#    64 / 128 x 3001 x 2001 and held-out misaligned "TN" shapes (96 x 4001 x 1501, 100 x 2500 x
#    1025, 33 x 3001 x 1999, 128 x 4200 x 1111); BF16 4096 x 64 x 1000 and held-out BF16 shapes at
#    K 768 .. 1023 (4096 x 32 x 900, 3001 x 64 x 800, 2048 x 128 x 1000, 4096 x 64 x 777) against
#    splitk=1 (the old whole K): rules1.txt, rules2.txt.
# 4. TF32 over a 16-wide aligned C on mma:64x64 (16 x 4096 x 4096 0.86-0.89x, 16 x 8192 x 8192
#    0.78-0.80x in exp_s89) against the skinny kernel forced (FP32's stage_x_vec path ran those
#    shapes at 1.00-1.12x in exp_s86): skinny1.txt, skinny2.txt.
# Keep each rule where its default matches or beats what it replaced beyond the rounds' spread.
# Into $OUT: split_k.txt, split_k-memcheck.txt, gemv1.txt, gemv2.txt, rules1.txt, rules2.txt,
# skinny1.txt, skinny2.txt, summary.txt (9 files: tar the folder, as exp_s89 was).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
exp_gemm_test_memcheck test_split_k split_k
exp_step "tests done"
gemv="127x1x3001 64x1x4096 300x1x8192 512x1x3001 200x1x2000 96x1x1536 160x1x6000 250x1x2500 \
400x1x4096 1x127x3001 1x300x5000 127x1x1500"
for i in 1 2; do
    exp_config_sweeps "gemv$i.txt" "$gemv" splitk=1 splitk=8 splitk=16
done
exp_step "gemv done"
rules="64x3001x2001 128x3001x2001 96x4001x1501 100x2500x1025 33x3001x1999 128x4200x1111 \
4096x64x1000 4096x32x900 3001x64x800 2048x128x1000 4096x64x777"
for i in 1 2; do
    CM_BENCH_SWEEP_ONLY="tf32 bf16" exp_config_sweeps "rules$i.txt" "$rules" splitk=1 sm90 \
        mma:64x64
done
exp_step "rules done"
skinny="16x4096x4096 16x8192x8192 4096x16x4096 16x6000x2000 12x8192x1024 16x3000x3000"
for i in 1 2; do
    CM_BENCH_SWEEP_ONLY=tf32 exp_config_sweeps "skinny$i.txt" "$skinny" skinny mma:64x64
done
exp_step "skinny done"
