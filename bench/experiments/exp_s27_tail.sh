#!/usr/bin/env bash
# Session 27, one device call (carry .deps): the sweep's FP32 cases twice back to back (the
# run-to-run drift of one binary), then the K-tail shapes at HEAD and with
# bench/experiments/ffma-moved-tail-prologue.patch applied (each twice), then test_ffma_tails
# and test_fp32_pitched on the patched build. Writes into $OUT.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build
exp_fp32_sweeps 2
patch=bench/experiments/ffma-moved-tail-prologue.patch
exp_ab_patch "$patch" "1000x4096x4096 3001x3001x3001 4096x4096x3001 3001x4096x1000 \
4093x4093x4093 2000x2000x2000 1000x1000x1000 4096x4096x4096"
exp_gemm_tests test_ffma_tails test_fp32_pitched
exp_unpatch "$patch"
exp_say "all done"
