#!/usr/bin/env bash
# The skinny kernel's rows orientation (kernels/gemm_skinny.cu), three steps, each on the last:
#   A. skinny-shifted-rows.patch: rows that are not 16-byte aligned read as the aligned vectors
#      around them, shifted into place through a shuffle, instead of element loads (bf16 7 x
#      3001 x 3001 NN runs 0.72x cuBLAS on 2-byte loads; index logic checked on the host by
#      skinny_shift_emu.py). ptxas sm_90: 78-80 registers, 8 bytes of spill in the bf16 forms.
#   B. skinny-loads-first.patch: a chunk's matrix loads issued before the barrier and X's
#      staging (the shuffle and the shift after it), so that their latency overlaps the
#      staging's instead of following it. ptxas sm_90: 110-128 registers, no spill (two blocks
#      of 8 warps an SM instead of three). skinny_rows_emu.py emulates A+B's loads of whole
#      rows on the host (element sizes, ld residues, K tails, KC 256 / 512, vec modes).
#   C. KC 256 -> 512 (twice the matrix loads in flight a lane, half the barriers; 33 KB of
#      static shared memory a block; 117-128 registers).
# Run after exp_s29_b.sh in the same call (its build is reused). Into $OUT, 3 files:
#   skinny-ab.txt        "=== head" / "=== A" / "=== A+B" / "=== A+B+C", each the shapes twice
#   skinny.txt           test_gpu_gemm's test_skinny with A+B, plain, then under memcheck
#   skinny-memcheck.txt  (skinny-memcheck.txt); with A alone and with A+B+C, plain, appended to
#                        skinny.txt (its misaligned cases: odd K as ld, offset pointers, tails)
# The patches and the KC change stay applied. Shapes (bench_gemm's column-major m x n x k): C
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
plain() { # LABEL FILE: test_skinny plain, appended to FILE
    {
        echo "=== $1"
        CUDAMODEL_REQUIRE_GPU=1 CM_TEST_TIER=gpu CM_TEST_FILTER=test_skinny timeout 300 \
            build-gpu/tests/test_gpu_gemm
    } >>"$2" 2>&1
    exp_say "test_skinny $1 rc $?"
}
runs head
exp_apply bench/experiments/skinny-shifted-rows.patch
rebuild
rm -f /tmp/skinny-A.txt
plain A /tmp/skinny-A.txt
runs A
exp_apply bench/experiments/skinny-loads-first.patch
rebuild
exp_gemm_test_memcheck test_skinny skinny # writes skinny.txt (A+B) and skinny-memcheck.txt
cat /tmp/skinny-A.txt >>"$R/skinny.txt"
runs A+B
sed -i 's/^constexpr int KC = 256; /constexpr int KC = 512; /' kernels/gemm_skinny.cu
grep -q '^constexpr int KC = 512; ' kernels/gemm_skinny.cu || { echo "KC edit failed"; exit 1; }
rebuild
plain A+B+C "$R/skinny.txt"
runs A+B+C
exp_say "done"
