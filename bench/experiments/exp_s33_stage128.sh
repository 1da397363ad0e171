#!/usr/bin/env bash
# TF32 / BF16 "TN" products whose K-contiguous rows are 16-byte but not 128-byte multiples
# (TF32 4096 x 4096 x 3004 TN ran 0.76x cuBLAS at 7a784b2, 4096^3 1.02x, the same shape NN
# 0.99x): at the checkout, then with stage128.patch, which stages such operands into rows of
# whole 128-byte lines before the Hopper kernel where m n / (m + n) >= 1536 and K >= 256 (and
# rounds every staged row to 128 bytes, as pack-ld128.patch; its BF16 transposed-B arm is
# exp_s35_bt128.sh's to measure: no shape here takes it). One device call, carry .deps;
# on a machine that ran the full check (build-gpu/ reused) or a fresh one (~70 s of build).
# Into $OUT, 4 files (the sweep's kernel column says what ran):
#   stride.txt   the sweep over $shapes, TF32 and BF16, twice at the checkout ("=== config
#                head#i"), twice patched ("=== config stage128#i"): K = 3004 / 3000 / 3064 /
#                4092 (rows of 16 but not 128 bytes: 3000 for BF16, whose 3004 is realigned)
#                against 3008 / 3072 / 4096; 1000 x 4096 x 3004 stays unstaged (the control);
#                3001 x 4096 x 1000 TN (rows of 4000 bytes) is staged too (2.56x cuBLAS at
#                7a784b2: must not lose); then "=== config hm1024#1": four shapes under the
#                floor staged (CM_EXP_STAGE128_HM=1024), to set the floor
#   gemv.txt     FP32 / BF16 matrix-vector shapes by default twice (splitk=0) and in 1, 2, 4,
#                8, 16 parts of K forced (scripts/gemm-sweep-configs.sh), with the patch (which
#                touches no gemv path)
#   tests.txt    test_gpu_gemm's Hopper, staging and matrix-vector tests with the patch, plain,
#                then the first two under memcheck
#   summary.txt  the exp_say lines
# The patch stays applied (exp_apply notes it for the next build); exp_unpatch takes it out.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
shapes="4096x4096x3004 4096x4096x3008 4096x4096x3000 4096x4096x3064 4096x4096x3072 4096x4096x4092 4096x4096x4096 3004x3004x3004 3072x3072x3072 8192x8192x3000 2048x8192x3004 1000x4096x3004 3001x4096x1000"
exp_sweeps_ab stride.txt bench/experiments/stage128.patch stage128 "$shapes" "tf32 bf16" 140
# the floor m n / (m + n) >= 1536 is a guess from one shape: below it, 1024 (3004^3: 1502)
exp_sweep1 "hm1024#1" "3004x3004x3004 2048x2048x3004 1500x4096x3004 3001x3001x3000" \
    "tf32 bf16" 100 CM_EXP_STAGE128_HM=1024 >>"$R/stride.txt" 2>&1
exp_say "hm1024 done" | tee -a "$R/summary.txt"
# matrix-vector products over few rows read across K (gemv's "cols" orientation: split-K's gemv
# rule starts at 512 rows, measured at 1000 x 1 x 4096; 127 x 1 x 3001 NN ran 0.89-0.92x
# cuBLAS whole in every precision), and the bf16 ones that f8663a1 gives blocks of 32 columns
gemv="127x1x3001 64x1x4096 200x1x8192 300x1x2048 32x1x8192 127x1x1000 400x1x5000 1x127x3001 1x300x4096 4096x1x4096 3001x1x3001 8192x1x8192"
CM_BENCH_SWEEP_ONLY="fp32 bf16" exp_config_sweeps gemv.txt "$gemv" splitk=0 splitk=1 splitk=2 \
    splitk=4 splitk=8 splitk=16
{
    exp_test_runs none 300 'test_sm90*' test_realigned 'test_large*' 'test_explain*' 'test_matrix*'
    exp_test_runs memcheck 200 'test_sm90*' test_realigned
} >"$R/tests.txt" 2>&1
exp_say "tests done" | tee -a "$R/summary.txt"
exp_say "done" | tee -a "$R/summary.txt"
