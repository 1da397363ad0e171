#!/usr/bin/env bash
# A targeted check of the GEMM code where device time is short of a full check's part a: build,
# every ctest matching gemm|kernels|pack|skinny (GPU and host) plain, test_gpu_gemm's
# test_skinny / test_realigned / test_split_k* and test_gpu_gemm_threads under memcheck, then
# (S51_SWEEPS=1) exp_s50's new/old sweeps. One device call, carry .deps; ~75 s of build on a
# fresh machine. Into $OUT:
#   check.txt    scripts/gpu-check.sh's output (build, the tests stage's summary)
#   tests.txt    the tests stage's log
#   memcheck.txt the memcheck runs (gpu-test-one.sh's lines and failures)
#   sweeps.txt   with S51_SWEEPS=1: exp_s50's "new#1" and "old#1"
#   summary.txt  the exp_say lines
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exp_start
(CM_GPU_CHECK_ONLY=none CM_GPU_CHECK_TESTS='gemm|kernels|pack|skinny' OUT=/tmp/gc \
    bash scripts/gpu-check.sh) >"$R/check.txt" 2>&1
cp /tmp/gc/gpu-check-tests.log "$R/tests.txt"
m="$PWD/.deps/root/usr/lib/x86_64-linux-gnu"
export LD_LIBRARY_PATH="$m${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
exp_say "build and tests done" | tee -a "$R/summary.txt"
{
    exp_test_runs memcheck 200 test_skinny test_realigned 'test_split_k*'
    exp_test_exe memcheck 200 test_gpu_gemm_threads
} >"$R/memcheck.txt" 2>&1
exp_say "memcheck done" | tee -a "$R/summary.txt"
if [ "${S51_SWEEPS:-0}" = 1 ]; then
    S50_SWEEPS_ONLY=1 bash bench/experiments/exp_s50_rb_dispatch.sh >>"$R/summary.txt" 2>&1
fi
exp_say "done" | tee -a "$R/summary.txt"
