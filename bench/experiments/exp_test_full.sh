#!/usr/bin/env bash
# One GPU test run in full, for a failure whose last lines (exp_test_exe's) do not say enough:
#   bash bench/experiments/exp_test_full.sh <test executable> [<cmocka test name or glob>] [tool]
# (e.g. test_gpu_gemm test_skinny; tool: none (default), memcheck, ...). Builds as exp_build
# does (cached on a warm machine), which also puts the carried CMocka on the library path: a
# raw device command running build-gpu/tests/<exe> itself fails to find libcmocka.so.0.
# Prints the run's output without its OK / RUN lines. Carry .deps.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
exe="${1:?usage: $0 <test executable> [<test name>] [tool]}"
f="${2:-}"
tool="${3:-none}"
exp_start
exp_build
exp_test_exe "$tool" 300 "$exe" "$f"
grep -v "^\[ *OK\|RUN" "/tmp/one-$exe-$tool.txt" | tail -60
