#!/usr/bin/env bash
# Racecheck of one GPU test RUNS times (default 2, each under `timeout LIMIT`, default 120 s);
# a run still alive after DUMP_AT seconds (default 75) gets every thread's stack (gdb, when
# the machine has it) and each thread's kernel wait channel and state, into
# $OUT/stacks<i>.txt; the run's output goes to $OUT/race<i>.txt with its exit status and
# seconds (STOP_ON_HANG=1: no more runs after one that needed a dump). Needs build-gpu/ (scripts/gpu-check.sh builds it). Usage:
#   OUT=<dir> bench/experiments/race_hang_probe.sh [test name, default test_gpu_stream]
set -u
root="$(cd "$(dirname "$0")/../.." && pwd)"
name="${1:-test_gpu_stream}"
runs="${RUNS:-2}" limit="${LIMIT:-120}" dump_at="${DUMP_AT:-75}"
# CMocka from the carried packages, as scripts/gpu-check.sh unpacks them
if [ -d "$root/.deps/debs" ] && [ ! -d "$root/.deps/root/usr/lib" ]; then
    mkdir -p "$root/.deps/root"
    for deb in "$root"/.deps/debs/*.deb; do dpkg -x "$deb" "$root/.deps/root"; done
fi
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$root/.deps/root/usr/lib/x86_64-linux-gnu"
san="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
for i in $(seq 1 "$runs"); do
    log="$OUT/race$i.txt" stacks="$OUT/stacks$i.txt"
    start=$SECONDS
    (cd "$root/build-gpu/tests" && CM_TEST_TIER=gpu CUDAMODEL_REQUIRE_GPU=1 \
        CM_TEST_UNDER_SANITIZER=1 timeout "$limit" "$san" --tool racecheck --error-exitcode 1 \
        "./$name") >"$log" 2>&1 &
    bg=$!
    dumped=0
    while kill -0 "$bg" 2>/dev/null; do
        sleep 1
        if [ "$dumped" -eq 0 ] && [ $((SECONDS - start)) -ge "$dump_at" ]; then
            dumped=1
            for p in $(pgrep -x "$name"); do
                echo "===== pid $p alive after $((SECONDS - start)) s" >>"$stacks"
                for t in /proc/"$p"/task/*; do
                    # the blocked system call's user PC, named by the mapping that holds it
                    sc="$(cat "$t/syscall" 2>/dev/null)" pc="${sc##* }" lib=""
                    if [ "${pc#0x}" != "$pc" ]; then
                        pcv=$((pc))
                        while read -r range _ off _ _ path; do
                            lo=$((16#${range%-*})) hi=$((16#${range#*-}))
                            if [ "$pcv" -ge "$lo" ] && [ "$pcv" -lt "$hi" ]; then
                                lib="$(printf '%s+0x%x' "$path" $((pcv - lo + 16#$off)))"
                                break
                            fi
                        done <"/proc/$p/maps"
                    fi
                    echo "tid ${t##*/} $(cat "$t/comm") wchan=$(cat "$t/wchan")" \
                        "state=$(awk '{print $3}' "$t/stat") syscall=${sc%% *} pc=$pc $lib" \
                        >>"$stacks"
                done
                if command -v python3 >/dev/null; then
                    timeout 60 python3 "$root/bench/experiments/stack_scan.py" "$p" >>"$stacks" 2>&1
                fi
                if command -v gdb >/dev/null; then
                    timeout 60 gdb -p "$p" -batch -ex "set pagination off" \
                        -ex "thread apply all bt 25" >>"$stacks" 2>&1
                else
                    echo "(no gdb on this machine)" >>"$stacks"
                fi
            done
        fi
    done
    wait "$bg"
    rc=$?
    echo "run $i: exit $rc after $((SECONDS - start)) s (dump taken: $dumped)" | tee -a "$log"
    if [ -n "${STOP_ON_HANG:-}" ] && [ "$dumped" -eq 1 ]; then break; fi
done
