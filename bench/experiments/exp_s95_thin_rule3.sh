#!/usr/bin/env bash
# TF32 rule 3's narrow columns (b94f9d3): 32-63 columns of C^T (column-major "NN" N) take the
# register-A form on C^T with K whole where M gives at least sms / 3 tiles of 128 rows (above
# 5504 on 132). The default against sm90+at and mma:64x64 forced, TF32 only, two rounds, over
# the shapes that chose it (6000 x 40 x 700, 8192 x 32 x 800) and held-out ones on both sides
# of the floor: 5600 x 48 x 800, 7000 x 32 x 600, 12000 x 32 x 900, 6000 x 56 x 1000 (taken),
# 5000 x 40 x 900, 4608 x 32 x 700 (left to mma:64x64). Run right after gpu-check part a on
# the warm machine (build-gpu/ cached). Into $OUT: thin1.txt, thin2.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build
thin="6000x40x700 8192x32x800 5600x48x800 7000x32x600 12000x32x900 6000x56x1000 5000x40x900 4608x32x700"
for i in 1 2; do
    CM_BENCH_SWEEP_ONLY=tf32 exp_config_sweeps "thin$i.txt" "$thin" sm90+at mma:64x64
done
exp_say "done"
