#!/usr/bin/env bash
# The first GPU run of the narrow-C rules from exp_s96's figures: FP32 on Hopper over C of at
# most 64 rows (row-major; the sweep's column-major shapes name them as columns) beside many
# columns, K >= 512: 32 x 64 FFMA tiles up to 32 rows, 64 x 64 ones up to 64 rows or columns
# (cm__gemm_ffma_narrow_config); TF32 with B MN-major, K 512-1023, C^T of under 64 columns past
# the tiny class: mma:64x64 (cm__gemm_sm90_at_too_narrow, was under 40). One round each, the
# default against the tiles it replaced and the others: the shapes behind the rules and
# held-out ones (15000 x 24 x 700, 25000 x 56 x 800, the turned 32 x 20000 x 900 and
# 64 x 30000 x 600, 40000 x 32 x 3000). Then test_gpu_gemm's test_every*. One device call
# (~3 min cold), carry .deps. Into $OUT: fp32.txt, tf32.txt, tests.txt, summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
fp="12000x32x900 20000x32x900 16384x32x1024 9000x32x2000 20000x48x1024 30000x64x512 \
15000x24x700 25000x56x800 32x20000x900 64x30000x600 40000x32x3000"
CM_BENCH_SWEEP_ONLY=fp32 exp_config_sweeps fp32.txt "$fp" ffma:32x64x16 ffma:64x64x16 \
    ffma:128x128x16q3
tf="12000x48x900 9000x40x1000 30000x48x900 12000x56x800 20000x60x1000 7000x44x800"
CM_BENCH_SWEEP_ONLY=tf32 exp_config_sweeps tf32.txt "$tf" mma:64x64 sm90+at
exp_test_runs none 200 'test_every*' >"$R/tests.txt" 2>&1
exp_say "done" | tee -a "$R/summary.txt"
