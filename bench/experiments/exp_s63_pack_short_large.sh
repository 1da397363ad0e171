#!/usr/bin/env bash
# ad7454d sends K-contiguous rows under 512 bytes to the pack pair kernel only while both
# staged sides total at most 4 MiB (the measured range). pack-short-any.patch raises that bound
# to CM_PACK_SHORT_MIB MiB: rounds of 0 (the tree) / 16 / 64 over products with larger
# short-row sides (bf16 and TF32, NN and TN), then test_realigned with 64, plain and under
# memcheck. One device call, carry .deps; the patch is taken out at the end. Into $OUT:
# sweeps.txt (scripts/sweep_compare.py --table), tests.txt, summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
p=bench/experiments/pack-short-any.patch
shapes="8192x8192x127 16384x4096x127 4096x16384x127 16384x16384x127 65536x2048x127 16384x16384x200 127x16384x127 8192x8192x255"
exp_patch_variants "$p" CM_PACK_SHORT_MIB "0 16 64" "$shapes" "bf16 tf32" 150
{
    CM_PACK_SHORT_MIB=64 exp_test_runs none 240 test_realigned
    CM_PACK_SHORT_MIB=64 exp_test_runs memcheck 240 test_realigned
} >"$R/tests.txt" 2>&1
exp_step "tests done"
exp_unpatched "$p"
