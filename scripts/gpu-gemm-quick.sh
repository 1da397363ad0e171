#!/usr/bin/env bash
# A short GPU check of a GEMM dispatch change, for a session with little device time left
# (~5-6 minutes on the H200 with the machine's start, against ~12 for the full check in two
# parts). Through the device tool, carry [".deps"]:
#
#   scripts/gpu-gemm-quick.sh <commit>
#
# 1. scripts/gpu-check.sh's build, test_gpu_gemm_batched, the doctor and the bench stage with
#    bench_gemm only (its --sweep too): check.txt, its logs and h200.jsonl in $OUT (append
#    h200.jsonl to bench/results/h200.jsonl);
# 2. test_gpu_gemm's dispatch tests by name (CM_TEST_FILTER): test_s* (small combinations,
#    skinny, small/skinny packed, sm90 MN-major B, split-K), test_re* (realigned, reproducible),
#    test_large*, test_matrix*, test_medium* -- not test_every_config / test_3xtf32_accuracy,
#    whose kernels a dispatch change does not touch ($OUT/gemm.txt);
# 3. test_small_skinny_packed under compute-sanitizer memcheck ($OUT/san.txt); CM_QUICK_SAN=
#    another CM_TEST_FILTER pattern of test_gpu_gemm instead (the test of the change).
# Exit status: 0 when every step passed. It is not the full check: a change to kernels/ or to
# anything but the GEMM selection needs scripts/gpu-check-part.sh a and b.
set -uo pipefail
[ $# -eq 1 ] || { echo "usage: OUT=<dir> $0 <commit>" >&2; exit 2; }
commit="$1"
R="${OUT:?OUT is not set (the device tool sets it)}"
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
. scripts/gpu-stages.sh
fail=0
env OUT="$R" CM_BENCH_COMMIT="$commit" CM_GPU_CHECK_ONLY="doctor bench" \
    CM_GPU_CHECK_TESTS='^test_gpu_gemm_batched$' CM_GPU_CHECK_BENCHES=bench_gemm \
    bash scripts/gpu-check.sh >"$R/check.txt" 2>&1
failed="$(cm_failed_stages "$R/check.txt")"
[ -n "$failed" ] && fail=1
tail -12 "$R/check.txt"
M="$PWD/.deps/root/usr/lib/x86_64-linux-gnu"
[ -d "$M" ] && export LD_LIBRARY_PATH="$M${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CUDAMODEL_REQUIRE_GPU=1
for f in 'test_s*' 'test_re*' 'test_large*' 'test_matrix*' 'test_medium*'; do
    CM_TEST_FILTER="$f" build-gpu/tests/test_gpu_gemm
    rc=$?
    echo "filter $f: rc $rc"
    [ $rc -eq 0 ] || fail=1
done >"$R/gemm.txt" 2>&1
grep -E '^filter|PASSED|FAILED' "$R/gemm.txt"
S="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
san="${CM_QUICK_SAN:-test_small_skinny_packed}"
CM_TEST_UNDER_SANITIZER=1 CM_TEST_FILTER="$san" "$S" --tool memcheck \
    --error-exitcode 1 --report-api-errors no build-gpu/tests/test_gpu_gemm >"$R/san.txt" 2>&1
rc=$?
echo "memcheck $san: rc $rc"
[ $rc -eq 0 ] || fail=1
# the device tool brings back 8 files: drop the empty logs of the stages not run
find "$R" -type f -empty -delete
echo "gpu-gemm-quick: $([ $fail -eq 0 ] && echo PASS || echo "FAIL ${failed:-}") at $commit"
exit $fail
