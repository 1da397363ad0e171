#!/usr/bin/env bash
# The first GPU run of 6af0da0's three rules (gemm_api.c), each the default against the
# choices around it, two rounds: (1) TF32 on mma:64x64's 16-byte form over a C one tile deep
# with 133-176 tiles, K in 3 parts (CM__SPLITK_TF32_ROW_PARTS): held-out shapes in the band
# (8700 x 36, 10500 x 56, 9800 x 48 x 640) and exp_s101's two, against K whole
# (",splitk=1") and 4 parts; and the band's shapes whose default is the Hopper kernel's
# register-A form (sm90+at: 9000 x 40 x 2048, 8800 x 64 x 900, 10200 x 40 x 1500, 7000 x 62 x
# 800) against mma:64x64 in its rule's parts, for a later rule; (2) FP32 with K under 32 over a
# C whose short side is at most 64: the 32 x 64 tiles (CM__GEMM_FFMA_NARROW_SHORT_K_SIDE) on
# held-out shapes against 64 x 64 and 128 x 128; (3) BF16 rule 4's short side up to 64:
# held-out shapes against mma:64x64 and sm90+bt, 72 columns (outside) as a control;
# (4) CM_GEMM_FP32_3XTF32 over a C whose short side is 96-128 (past CM__GEMM_3X_NARROW_SIDE):
# its Hopper path (the default) against the FP32 tiles, for a later bound. Round 1, the
# selection GPU tests (test_gpu_gemm's test_every*, test_3xtf32*, test_explain*,
# test_split_k*, medium_odd, skinny, ffma_small_class, narrow_c_rules), round 2. One device call (~4 min
# cold), carry .deps. Into $OUT (tar it): tf32_{1,2}.txt, fp32k_{1,2}.txt, bf16_{1,2}.txt,
# x3_{1,2}.txt, tests.txt, summary.txt. A rule stands where the default is within the rounds'
# spread of the best column in both layouts. EXP_S102_ROUNDS=1 skips round 2 (a call with
# little device time left).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
tf="8700x36x900 10500x56x1000 9800x48x640 8500x40x1000 11000x40x1000 9000x40x2048 8800x64x900 \
10200x40x1500 7000x62x800"
fk="25000x48x20 50000x16x12 64x30000x8 30000x56x31 3000x64x16 40000x32x16"
bf="7000x62x800 5000x64x900 6000x64x1000 8192x64x896 6000x72x896"
x3="96x30000x1024 128x30000x1024 30000x96x800 112x20000x2048"
round() {
    CM_BENCH_SWEEP_ONLY=tf32 exp_config_sweeps "tf32_$1.txt" "$tf" mma:64x64 \
        "mma:64x64,splitk=1" "mma:64x64,splitk=4"
    exp_say "tf32 round $1" | tee -a "$R/summary.txt"
    CM_BENCH_SWEEP_ONLY=fp32 exp_config_sweeps "fp32k_$1.txt" "$fk" ffma:64x64x16 \
        ffma:128x128x16q3
    exp_say "fp32 round $1" | tee -a "$R/summary.txt"
    CM_BENCH_SWEEP_ONLY=bf16 exp_config_sweeps "bf16_$1.txt" "$bf" mma:64x64 sm90+bt
    exp_say "bf16 round $1" | tee -a "$R/summary.txt"
    CM_BENCH_SWEEP_ONLY=3xtf32 exp_config_sweeps "x3_$1.txt" "$x3" ffma:64x64x16 \
        ffma:128x128x16q3
    exp_say "x3 round $1" | tee -a "$R/summary.txt"
}
round 1
exp_test_runs none 200 'test_every*' 'test_3xtf32*' 'test_explain*' 'test_split_k*' \
    test_medium_odd test_skinny test_ffma_small_class test_narrow_c_rules >"$R/tests.txt" 2>&1
exp_say "tests" | tee -a "$R/summary.txt"
[ "${EXP_S102_ROUNDS:-2}" -ge 2 ] && round 2
exp_say "done" | tee -a "$R/summary.txt"
