#!/usr/bin/env bash
# Split-K's reduction as a programmatic dependent launch (pdl-splitk.patch, not yet run on a
# GPU): every GEMM kernel executes griddepcontrol.launch_dependents at its start,
# and cm__gemm_splitk_reduce launches its kernel with
# cudaLaunchAttributeProgrammaticStreamSerialization on sm_90+, the kernel first waiting
# (griddepcontrol.wait) for the parts' kernel to complete and its writes to be visible. The
# reduction's blocks are then scheduled on the multiprocessors the parts' last wave leaves
# idle instead of after the parts' kernel ends: what that saves is the gap between the two
# kernels (not measured yet; a few microseconds at most), on split-K shapes of 20-40 us.
# Into $OUT, 5 files:
#   head1.txt, head2.txt     sweeps of split-K shapes, every precision, at the checkout
#   patch1.txt, patch2.txt   the same with the patch (gemm_*.cu, gemv.cu rebuilt)
#   split.txt                test_gpu_gemm's test_split_k, test_split_k_forced, test_wave_split
#                            and test_reproducible with the patch, plain, then under memcheck
#                            (appended, "=== <test> <tool>" before each)
# The patch stays applied.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
exp_build
shapes="64x64x4096 127x1000x3001 1000x127x3001 7x4096x4096 4096x7x4096 64x4096x4096 4096x64x4096 3001x127x1000 768x768x4096 200x200x8192"
sweep() { # FILE
    CM_BENCH_SWEEP_SHAPES="$shapes" timeout 200 env -u CM_BENCH_RESULTS \
        build-gpu/bench/bench_gemm --sweep >"$R/$1" 2>&1
}
sweep head1.txt
sweep head2.txt
exp_say "head sweeps done"
git apply bench/experiments/pdl-splitk.patch || { echo "patch failed"; exit 1; }
cmake --build build-gpu --parallel 16 >/tmp/patch-build.txt 2>&1 ||
    { echo "patched build failed"; tail -30 /tmp/patch-build.txt; exit 1; }
exp_say "patched build done"
sweep patch1.txt
sweep patch2.txt
exp_say "patch sweeps done"
for tool in none memcheck; do
    for f in 'test_split_k*' test_wave_split test_reproducible; do # one cmocka pattern a run
        OUT=/tmp bash scripts/gpu-test-one.sh -t "$tool" -s 300 -f "$f" test_gpu_gemm
        exp_say "$f under $tool rc $?"
        { echo "=== $f $tool"; cat "/tmp/one-test_gpu_gemm-$tool.txt"; } >>"$R/split.txt"
    done
done
exp_say "done"
