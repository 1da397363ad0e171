#!/usr/bin/env bash
# The first GPU run of c6d1e3e's BF16 rule 4 (cm__gemm_sm90_bf16_narrow: a C of 32-48 by at
# least 6000, K 768-1023, in the tiny class: the Hopper kernel whole in place of mma:64x64
# split in 2), made from forced runs at leading dimensions off 16 bytes (ld 900, both kernels
# behind the realignment's copy). Two rounds, the default against mma:64x64, sm90+bt and
# sm90+pack: (1) the shapes behind the rule; (2) held out, with 16-byte rows (K a multiple of
# 8: no copy, where a forced mma:64x64 runs as itself rather than the FFMA fallback), the
# bounds (6000 rows, 48 columns, K 768) and just outside them (5000 rows, 56 columns). Then
# test_gpu_gemm's test_every*. (3) TF32 "NN" over C^T of 40-60 columns past the tiny class,
# where the default mma:64x64 runs K whole over 141-469 tiles (1.07-3.55 a multiprocessor, 0.68-
# 0.81x cuBLAS in exp_s97): forced splits of 2, 3 and 4 parts of K on the same tiles, two
# rounds; no split was measured there before. One device call (~4 min cold), carry .deps.
# Into $OUT (tar it: more than 8 files): behind1.txt, behind2.txt, held1.txt, held2.txt,
# tf32split1.txt, tf32split2.txt, tests.txt, summary.txt. The rule stands where the default
# is within the rounds' spread of the best column in both layouts; a split rule for (3) only
# where a split wins both rounds beyond the spread.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
behind="8192x32x900 6000x32x900 8192x48x900"
held="8192x32x896 6000x48x1000 7000x40x800 6000x32x768 16384x40x960 5000x32x896 8192x56x896"
for i in 1 2; do
    CM_BENCH_SWEEP_ONLY=bf16 exp_config_sweeps "behind$i.txt" "$behind" mma:64x64 sm90+bt \
        sm90+pack
    CM_BENCH_SWEEP_ONLY=bf16 exp_config_sweeps "held$i.txt" "$held" mma:64x64 sm90+bt sm90+pack
done
tf="12000x48x900 9000x40x1000 30000x48x900 20000x60x1000 12000x56x800"
for i in 1 2; do
    CM_BENCH_SWEEP_ONLY=tf32 exp_config_sweeps "tf32split$i.txt" "$tf" "mma:64x64,splitk=2" \
        "mma:64x64,splitk=3" "mma:64x64,splitk=4"
done
exp_test_runs none 200 'test_every*' >"$R/tests.txt" 2>&1
exp_say "done" | tee -a "$R/summary.txt"
