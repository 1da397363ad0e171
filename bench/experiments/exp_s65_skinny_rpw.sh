#!/usr/bin/env bash
# The skinny kernel's 16-vector bucket reads its staged X from shared memory once per 8 sums
# (2 rows a warp, 4 k a 16-byte read): at R = 16 that is about twice the time of its FMAs and
# above the matrix's DRAM time, which fits FP32 16x4096x4096 NN at 0.66x cuBLAS (exp_s55).
# skinny-rpw.patch gives the bucket more rows a warp (CM_SKINNY_RPW: 3 = 3 rows, 123-126
# registers, no spills; 4 = 4 rows under the 2-blocks bound, 128 registers, 12-96 bytes of
# spills; 41 = 4 rows, 1 block a multiprocessor, 149-156 registers; 0 = the tree). Rounds of
# 0 / 3 / 4 / 41 over FP32, TF32 and BF16 shapes with a small side of 9-16, then test_skinny
# and test_split_k with 3, 4 and 41 (plain), and test_skinny with 4 under memcheck. One device
# call, carry .deps; the patch is taken out at the end. Into $OUT: sweeps.txt
# (scripts/sweep_compare.py --table), tests.txt, summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
p=bench/experiments/skinny-rpw.patch
exp_patched "$p"
shapes="16x4096x4096 12x4096x4096 9x4096x4096 16x8192x8192 16x10000x999 13x4096x2048 12x8192x1024 4096x16x4096 3001x12x2001"
exp_variant_sweeps CM_SKINNY_RPW "0 3 4 41" "$shapes" "fp32 tf32 bf16" 150 >"$R/sweeps.txt" 2>&1
exp_step "sweeps done"
{
    for v in 3 4 41; do
        CM_SKINNY_RPW=$v exp_test_runs none 240 test_skinny test_split_k | sed "s/^=== /=== rpw=$v /"
    done
    CM_SKINNY_RPW=4 exp_test_runs memcheck 300 test_skinny
} >"$R/tests.txt" 2>&1
exp_step "tests done"
exp_unpatched "$p"
