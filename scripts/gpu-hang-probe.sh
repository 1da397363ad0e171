#!/usr/bin/env bash
# Look for a GPU test that hangs, alone and beside the others: every thread's backtrace of a
# process that outlives a limit (bench/NOTES-core.md has the case it was written for). Run after
# `CM_GPU_CHECK_TESTS=<none> bash scripts/gpu-check.sh` built build-gpu/.
#   PROBE_TEST   the test to watch (default test_gpu_core)
#   PROBE_AFTER  seconds its process may live before every thread's backtrace is taken (default 30)
# Writes to ${OUT:-/tmp}: probe-alone.log, probe-parallel.log, probe-bt-<pid>.txt.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
out="${OUT:-/tmp}"
t="${PROBE_TEST:-test_gpu_core}"
after="${PROBE_AFTER:-30}"
exe="build-gpu/tests/$t"
[ -x "$exe" ] || { echo "no $exe: build first"; exit 1; }
watch() { # backtrace of every live process of the watched test older than $after seconds
    while sleep 2; do
        for pid in $(pgrep -x "$t"); do
            age=$(ps -o etimes= -p "$pid" 2>/dev/null | tr -d ' ')
            if [ -n "$age" ] && [ "$age" -ge "$after" ] && [ ! -e "$out/probe-bt-$pid.txt" ]; then
                echo "== $t pid $pid alive for ${age}s: backtraces" | tee -a "$out/probe-watch.log"
                timeout 60 cuda-gdb -p "$pid" -batch -ex 'info threads' -ex 'thread apply all bt' \
                    >"$out/probe-bt-$pid.txt" 2>&1
                nvidia-smi >>"$out/probe-bt-$pid.txt" 2>&1
            fi
        done
    done
}
watch & wpid=$!
echo "== alone, 3 times"
for i in 1 2 3; do
    s=$SECONDS
    CUDAMODEL_REQUIRE_GPU=1 timeout 45 "$exe" >>"$out/probe-alone.log" 2>&1
    echo "run $i: exit $? in $((SECONDS - s)) s"
done
echo "== every gpu test, -j$(nproc)"
s=$SECONDS
CUDAMODEL_REQUIRE_GPU=1 ctest --test-dir build-gpu -L gpu --parallel "$(nproc)" --timeout 150 \
    --output-on-failure >"$out/probe-parallel.log" 2>&1
echo "ctest exit $? in $((SECONDS - s)) s"
grep -E 'tests passed|\(Failed\)|\(Timeout\)|\(Skipped\)|Not Run' "$out/probe-parallel.log"
grep -E "$t " "$out/probe-parallel.log" | head
kill "$wpid" 2>/dev/null
