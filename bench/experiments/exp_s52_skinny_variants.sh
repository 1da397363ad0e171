#!/usr/bin/env bash
# The bucketed skinny kernel's losses with a K-contiguous small operand (bf16 7 x 3001 x 3001
# TN 0.83 -> 0.78, 5 x 10000 x 999 TN 0.97 -> 0.83, fp32 12 x 4096 x 4096 TN 0.97 -> 0.93 in
# exp_s48): skinny-variants.patch builds four forms of skinny_rows, chosen at run time by
# CM_SKINNY_EXP (0: the checkout's; 1: no minimum of blocks in the launch bounds; 2: X staged
# before the matrix loads; 3: both). One device call, carry .deps; best on a warm machine after
# the full check (its build-gpu/). Into $OUT, 3 files:
#   sweeps.txt   bench_gemm's sweep over $shapes (FP32, BF16) for variants 0 1 2 3, twice
#   tests.txt    test_gpu_gemm's test_skinny and test_split_k under each variant (patched build)
#   summary.txt  the exp_say lines
# The patch is taken out and build-gpu/ rebuilt at the end.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
p=bench/experiments/skinny-variants.patch
shapes="7x3001x3001 5x10000x999 12x4096x4096 7x4096x4096 2x50000x1000 16x3001x2001 3x8192x4096 4096x7x4096"
exp_patch_build "$p" >>"$R/summary.txt"
exp_say "patched build done" | tee -a "$R/summary.txt"
for v in 1 2 3; do
    for f in test_skinny test_split_k; do
        CM_SKINNY_EXP=$v exp_test_runs none 120 "$f"
    done
done >"$R/tests.txt" 2>&1
exp_say "tests done" | tee -a "$R/summary.txt"
exp_variant_sweeps CM_SKINNY_EXP "0 1 2 3" "$shapes" "fp32 bf16" 120 >"$R/sweeps.txt" 2>&1
exp_say "sweeps done" | tee -a "$R/summary.txt"
exp_unpatch_build "$p" >>"$R/summary.txt"
exp_say "done" | tee -a "$R/summary.txt"
