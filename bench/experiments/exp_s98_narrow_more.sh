#!/usr/bin/env bash
# Where the narrow-C rules of 95e8011 stop, measured: (1) FP32 on Hopper over C of 32-64 rows
# (row-major; the sweep's column-major shapes name them as columns) beside many columns with K
# under CM__GEMM_FFMA_NARROW_MIN_K (512), which keeps the table's tiles: 20000 x 32 x 256,
# 20000 x 32 x 128, 16384 x 48 x 384, 30000 x 64 x 256, 12000 x 32 x 384 and the turned
# 32 x 20000 x 256; default against the 32 x 64, 64 x 64 and 128 x 128 tiles forced. (2) The
# narrow shapes of exp_s97 in CM_GEMM_FP32_3XTF32 mode (bench_gemm runs them with
# CM_BENCH_SWEEP_ONLY=3xtf32 over CM_BENCH_SWEEP_SHAPES), and three small ones (2000 x 32 x
# 2000, 127 x 1000 x 3001, 1000^3), whose FFMA fallback runs as FP32 since 8e41222 (FP32's
# tiles and split; before it the table's tiles, K whole): default against the three tiles
# forced, the peer cuBLAS's FP32 (compare the default with FP32's own sweep rows). (3) BF16 8192 x 32 x 900 a second
# time (session 52's one round: default mma:64x64 0.75 / 0.69x, sm90+bt 0.87x "NN", sm90+pack
# 0.79x "TN"), with 6000 x 32 x 900 and 8192 x 48 x 900; default against mma:64x64, sm90+pack,
# sm90+bt. One device call (~3 min cold), carry .deps. Into $OUT: fp32_short_k.txt,
# x3_narrow.txt, bf16_narrow.txt, summary.txt. A rule is worth making where the default
# loses to one forced column by more than the rounds' spread in both layouts.
# EXP_S98_PARTS (default "fp32 x3 bf16") names the parts to run, for a call with less device
# time left (bf16 alone: ~40 s after part b's build).
set -u
parts="${EXP_S98_PARTS:-fp32 x3 bf16}"
want() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
short="20000x32x256 20000x32x128 16384x48x384 30000x64x256 12000x32x384 32x20000x256"
want fp32 && CM_BENCH_SWEEP_ONLY=fp32 exp_config_sweeps fp32_short_k.txt "$short" ffma:32x64x16 \
    ffma:64x64x16 ffma:128x128x16q3
x3="12000x32x900 20000x32x900 30000x64x512 20000x48x1024 32x20000x900 2000x32x2000 \
127x1000x3001 1000x1000x1000"
want x3 && CM_BENCH_SWEEP_ONLY=3xtf32 exp_config_sweeps x3_narrow.txt "$x3" ffma:32x64x16 ffma:64x64x16 \
    ffma:128x128x16q3
bf="8192x32x900 6000x32x900 8192x48x900"
want bf16 && CM_BENCH_SWEEP_ONLY=bf16 exp_config_sweeps bf16_narrow.txt "$bf" mma:64x64 sm90+pack sm90+bt
exp_say "done" | tee -a "$R/summary.txt"
