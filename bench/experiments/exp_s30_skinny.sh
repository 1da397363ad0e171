#!/usr/bin/env bash
# The skinny kernel's rows that are not 16-byte aligned (skinny-shifted-rows.patch: aligned
# vector loads and a shuffle instead of element loads; its index logic checked on the host by
# skinny_shift_emu.py). Run after exp_s29_b.sh in the same call (its build is reused):
#   1. the shapes at the checkout, twice                            -> head.txt
#   2. the patch applied and built; test_gpu_gemm's test_skinny plain and under memcheck (its
#      misaligned cases: odd K as ld, offset pointers, K tails)    -> skinny.txt,
#                                                                     skinny-memcheck.txt
#   3. the shapes with the patch, twice                             -> patch.txt
# The patch stays applied. Shapes (bench_gemm's column-major m x n x k): C with 7 / 16 / 5 / 2
# rows over a long operand read along K with rows of odd length.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build # cached after exp_s29_b.sh; sets the loader path for CMocka
shapes="7x3001x3001 7x4096x4095 16x3001x2001 5x10000x999 2x8191x1023 7x4096x4096 1x4096x127"
runs() { # FILE
    local i
    for i in 1 2; do
        echo "=== run $i"
        CM_BENCH_SWEEP_ONLY="bf16 tf32 fp32" CM_BENCH_SWEEP_SHAPES="$shapes" timeout 120 \
            build-gpu/bench/bench_gemm --sweep
    done >"$R/$1" 2>&1
    exp_say "$1 done"
}
runs head.txt
git apply bench/experiments/skinny-shifted-rows.patch || { echo "patch failed"; exit 1; }
cmake --build build-gpu --parallel 16 >/tmp/patch-build.txt 2>&1 ||
    { echo "patched build failed"; tail -30 /tmp/patch-build.txt; exit 1; }
exp_say "patched build done"
exp_gemm_test_memcheck test_skinny skinny
runs patch.txt
exp_say "done"
