#!/usr/bin/env bash
# ebafa33's two dispatch rules as committed: the skinny kernel from K = 96 at a small side of
# 9-16 over at most 32 rows per SM (no tensor-core tiles reading both operands as they are),
# and thin TF32 (side 8-16, under the flop floor, K 192-1023, rows off 16 bytes) on mma:64x64's
# align1 form. First the GEMM tests that cover them (test_skinny, test_tf32_align1, and
# test_skinny / test_tf32_align1 under memcheck), then the default against forced kernels in
# two rounds over exp_s71 / exp_s75's shapes and some the rules move unmeasured (16x1000x200,
# 12x2000x200, 9x4224x100, 13x6000x192). One device call, carry .deps.
# Into $OUT: tests.txt, configs1.txt, configs2.txt, summary.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build | tee -a "$R/summary.txt"
{
    exp_test_runs none 240 test_skinny test_tf32_align1
    exp_test_runs memcheck 240 test_skinny test_tf32_align1
} >"$R/tests.txt" 2>&1
exp_step "tests done"
shapes="4096x12x255 12x4096x255 3001x8x200 4096x16x255 8192x12x255 3001x12x500 4096x12x767 16x4096x160 16x1000x200 12x2000x200 9x4224x100 13x6000x192"
CM_BENCH_SWEEP_ONLY="fp32 tf32 bf16" exp_config_rounds "$shapes" mma:64x64 ffma:32x64x16 \
    ffma:64x64x16 skinny
exp_step "done"
