#!/usr/bin/env bash
# Split-K over a thin C with K under 512 (cm__gemm_splitk_parts_of never splits K < 2 x
# CM__SPLITK_MIN_K): exp_s76 left FP32 3001x12x500 "NN" at 0.70-0.71x cuBLAS on unsplit
# ffma:32x64x16 (94 tiles), while 4096x12x767, split in 4, ran 1.29x; TF32 4096x12x767 "NN" on
# mma:64x64's align1 form unsplit 0.90x against ffma:32x64x16 in 4 parts 1.10-1.13x. No patch:
# the default against CUDAMODEL_GEMM_SPLITK = 2 / 3 / 4 (on the default's kernel) and
# ffma:32x64x16 split 2 / 4, two rounds, FP32 and TF32, thin shapes with K 256-767 (and a
# side of 64 / 127 at K 500 to see where the floor's other side lies). One device call, carry
# .deps. Then splitk-floor.patch (CM_SPLITK_FLOOR_EXP=N: split from K = N, not 512) at 0 / 256
# over the same shapes, and test_split_k / test_medium_odd with it at 256.
# Into $OUT: configs1.txt, configs2.txt, sweeps.txt, tests.txt, summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
shapes="3001x12x500 4096x12x400 3001x8x300 2000x16x500 8192x12x300 3001x12x256 4096x12x767 3001x64x500 3001x127x500"
CM_BENCH_SWEEP_ONLY="fp32 tf32" exp_config_rounds "$shapes" splitk=2 splitk=3 splitk=4 \
    ffma:32x64x16,splitk=2 ffma:32x64x16,splitk=4
exp_step "configs done"
p=bench/experiments/splitk-floor.patch
exp_patched "$p"
exp_variant_sweeps CM_SPLITK_FLOOR_EXP "0 256" "$shapes" "fp32 tf32" 150 >"$R/sweeps.txt" 2>&1
exp_step "sweeps done"
CM_SPLITK_FLOOR_EXP=256 exp_test_runs none 240 test_split_k test_medium_odd >"$R/tests.txt" 2>&1
exp_step "tests done"
exp_unpatched "$p"
