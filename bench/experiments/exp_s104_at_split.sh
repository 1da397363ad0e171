#!/usr/bin/env bash
# TF32 "NN" over a C one 64 x 64 tile deep past the tiny class, where mma:64x64 (whole or in 3
# parts) stays at 0.67-0.83x cuBLAS and "TN" runs the Hopper kernel at 1.0-1.3x: whether the
# Hopper kernel's register-A form split over K fills the GPU where whole it gives 0.3-0.6 tiles
# a multiprocessor (its 256-row side over C's 33-64 columns). The default against sm90+at
# whole and in 2, 3 and 4 parts, two rounds: 10500 x 56 x 1000, 8500 x 40 x 1000, 11000 x 40 x
# 1000, 9800 x 48 x 640, 14000 x 40 x 1000 (219 tiles of 64 x 64, past the 3-part band),
# 12000 x 32 x 900, 9000 x 40 x 2048 (the register-A exception of 8c20204). One device call
# (~2 min cold; carry .deps). Into $OUT (tar it): tf32_{1,2}.txt, summary.txt. A rule only
# where one column wins both rounds beyond their spread in both rounds.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
tf="10500x56x1000 8500x40x1000 11000x40x1000 9800x48x640 14000x40x1000 12000x32x900 \
9000x40x2048"
for i in 1 2; do
    CM_BENCH_SWEEP_ONLY=tf32 exp_config_sweeps "tf32_$i.txt" "$tf" sm90+at "sm90+at,splitk=2" \
        "sm90+at,splitk=3" "sm90+at,splitk=4"
    exp_say "tf32 round $i" | tee -a "$R/summary.txt"
done
exp_say "done" | tee -a "$R/summary.txt"
