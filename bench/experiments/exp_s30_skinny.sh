#!/usr/bin/env bash
# The skinny kernel's rows orientation, two steps (kernels/gemm_skinny.cu):
#   A. skinny-shifted-rows.patch: rows that are not 16-byte aligned read as aligned vectors
#      shifted into place through a shuffle instead of element loads (index logic checked on
#      the host by skinny_shift_emu.py);
#   B. on top of A, KC 256 -> 512 (k values staged a chunk: twice the matrix loads in flight a
#      lane between barriers; 33 KB of static shared memory a block; ptxas sm_90: 80 -> 192-202
#      registers, no spill, so one block of 8 warps an SM instead of three).
# Run after exp_s29_b.sh in the same call (its build is reused). Into $OUT, 3 files:
#   skinny-ab.txt        "=== head" / "=== patch" / "=== patch+kc512", each the shapes twice
#   skinny.txt           test_gpu_gemm's test_skinny with A, plain and under memcheck (its
#   skinny-memcheck.txt  misaligned cases: odd K as ld, offset pointers, K tails); with B,
#                        plain, appended to skinny.txt
# The patch and the KC change stay applied. Shapes (bench_gemm's column-major m x n x k): C
# with 7 / 16 / 5 / 2 rows over a long operand read along K, rows of odd length, and two
# aligned ones (7 x 4096 x 4096, 1 x 4096 x 127).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build # cached after exp_s29_b.sh; sets the loader path for CMocka
shapes="7x3001x3001 7x4096x4095 16x3001x2001 5x10000x999 2x8191x1023 7x4096x4096 1x4096x127"
ab="$R/skinny-ab.txt"
runs() { # LABEL
    local i
    echo "=== $1" >>"$ab"
    for i in 1 2; do
        CM_BENCH_SWEEP_ONLY="bf16 tf32 fp32" CM_BENCH_SWEEP_SHAPES="$shapes" timeout 120 \
            build-gpu/bench/bench_gemm --sweep >>"$ab" 2>&1
    done
    exp_say "$1 done"
}
rebuild() {
    cmake --build build-gpu --parallel 16 >/tmp/patch-build.txt 2>&1 ||
        { echo "build failed"; tail -30 /tmp/patch-build.txt; exit 1; }
    exp_say "build done"
}
runs head
git apply bench/experiments/skinny-shifted-rows.patch || { echo "patch failed"; exit 1; }
rebuild
exp_gemm_test_memcheck test_skinny skinny
runs patch
sed -i 's/^constexpr int KC = 256; /constexpr int KC = 512; /' kernels/gemm_skinny.cu
grep -q '^constexpr int KC = 512; ' kernels/gemm_skinny.cu || { echo "KC edit failed"; exit 1; }
rebuild
{
    echo "=== KC 512"
    CUDAMODEL_REQUIRE_GPU=1 CM_TEST_TIER=gpu CM_TEST_FILTER=test_skinny timeout 300 \
        build-gpu/tests/test_gpu_gemm
} >>"$R/skinny.txt" 2>&1
exp_say "test_skinny KC 512 rc $?"
runs patch+kc512
exp_say "done"
