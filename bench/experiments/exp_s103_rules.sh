#!/usr/bin/env bash
# The first GPU run of 8c20204's three rules (gemm_api.c / gemm_internal.h), each the default
# against the choices around it on held-out shapes, two rounds: (1) TF32 "NN" where the Hopper
# kernel's register-A form was the choice over a C one 64 x 64 tile deep with 133-176 tiles:
# mma:64x64 in 3 parts (the default now) against sm90+at and mma:64x64 with K whole; (2) FP32
# with K under 32: 32 x 64 tiles up to a short side of 32, 64 x 64 at 33-64, against each
# other; (3) CM_GEMM_FP32_3XTF32 over a C whose short side is 65-128: FP32's choice (the
# default now) against its Hopper path forced, 100 x 60000 x 1024 (many waves) included, and
# 200 x 30000 x 1024 (the Hopper path by default) as a control. Round 1, the selection GPU tests
# (test_gpu_gemm's test_narrow_c_rules, test_every*, test_3xtf32*, test_explain*,
# test_split_k*), round 2. One device call (~3 min cold; carry .deps). Into $OUT (tar it):
# tf32_{1,2}.txt, fp32k_{1,2}.txt, x3_{1,2}.txt, tests.txt, summary.txt. A rule stands where
# the default is within the rounds' spread of the best column in both layouts.
# EXP_S103_ROUNDS=1 skips round 2.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
tf="9200x48x1100 10800x56x1800 8600x32x3000 9000x40x2048"
fk="35000x40x10 20000x60x28 48x40000x20 30000x20x24"
x3="80x40000x1024 120x25000x1536 100x60000x1024 128x65536x512 30000x112x2048 200x30000x1024"
round() {
    CM_BENCH_SWEEP_ONLY=tf32 exp_config_sweeps "tf32_$1.txt" "$tf" sm90+at \
        "mma:64x64,splitk=1"
    exp_say "tf32 round $1" | tee -a "$R/summary.txt"
    CM_BENCH_SWEEP_ONLY=fp32 exp_config_sweeps "fp32k_$1.txt" "$fk" ffma:32x64x16 ffma:64x64x16
    exp_say "fp32 round $1" | tee -a "$R/summary.txt"
    CM_BENCH_SWEEP_ONLY=3xtf32 exp_config_sweeps "x3_$1.txt" "$x3" sm90+3xtf32 \
        ffma:128x128x16q3
    exp_say "x3 round $1" | tee -a "$R/summary.txt"
}
round 1
exp_test_runs none 200 test_narrow_c_rules 'test_every*' 'test_3xtf32*' 'test_explain*' \
    'test_split_k*' >"$R/tests.txt" 2>&1
exp_say "tests" | tee -a "$R/summary.txt"
[ "${EXP_S103_ROUNDS:-2}" -ge 2 ] && round 2
exp_say "done" | tee -a "$R/summary.txt"
