#!/usr/bin/env bash
# TF32 "NN" (C^T of 33-64 columns, op(B) read along N) past the tiny class, where the default is
# mma:64x64 with K whole: exp_s99 (H200, two rounds) found a split of K in 4 parts 0.98x
# cuBLAS against 0.76-0.79x whole on 9000 x 40 x 1000 (141 tiles of 64 x 64, 1.07 a
# multiprocessor), and no gain from a split on 12000-30000 rows (188-469 tiles). Whether a
# split pays wherever the 64 x 64 tiles number a little over one a multiprocessor: shapes of
# 130-160 tiles over K 768-2048 (at 64 columns or K from 1024 the default is sm90+at: the
# split against it), and two above that band, the default against
# mma:64x64 forced with splits of 2, 3 and 4, two rounds. Then FP32 over a C of 24-64 rows by
# many with K under 32 (below 9155c4f's narrow rule's floor): the default against the FFMA
# tiles forced. One device call (~3 min cold), carry .deps. Into $OUT (tar it): tf32_{1,2}.txt,
# fp32k_{1,2}.txt, summary.txt. A rule only where one column wins both rounds beyond the
# spread in every shape of its band.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
tf="8500x40x1000 9000x48x1000 10000x40x800 9500x56x1200 8800x64x900 9000x40x2048 \
10000x33x768 9000x40x1000 11000x40x1000 14000x40x1000"
fk="40000x32x16 30000x24x8 20000x64x24 32x40000x16"
for i in 1 2; do
    CM_BENCH_SWEEP_ONLY=tf32 exp_config_sweeps "tf32_$i.txt" "$tf" "mma:64x64,splitk=2" \
        "mma:64x64,splitk=3" "mma:64x64,splitk=4"
    exp_say "tf32 round $i" | tee -a "$R/summary.txt"
    CM_BENCH_SWEEP_ONLY=fp32 exp_config_sweeps "fp32k_$i.txt" "$fk" ffma:32x64x16 ffma:64x64x16 \
        ffma:128x128x16q3
    exp_say "fp32 round $i" | tee -a "$R/summary.txt"
done
exp_say "done" | tee -a "$R/summary.txt"
