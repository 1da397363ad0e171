#!/usr/bin/env bash
# One GPU test, run N times, plain or under a compute-sanitizer tool, with the environment
# scripts/gpu-check.sh gives its stages: the carried CMocka on the loader path (without it the
# test exits before its first CUDA call: libcmocka.so.0 not found), CM_TEST_TIER=gpu,
# CUDAMODEL_REQUIRE_GPU=1 and, under a sanitizer, CM_TEST_UNDER_SANITIZER=1 (the tests' smaller
# sizes). For a targeted rerun on the device machine after gpu-check.sh built build-gpu/:
#
#   scripts/gpu-test-one.sh [-t memcheck|racecheck|synccheck|initcheck|none] [-n N] [-s SECS]
#                           [-f FILTER] <test name>
#
#   -t  the compute-sanitizer tool (default none: the plain test)
#   -n  how many runs (default 1)
#   -s  each run's time limit in seconds (default 300)
#   -f  CM_TEST_FILTER (the cmocka test names to run, a glob)
# Writes ${OUT:-/tmp}/one-<test>-<tool>.txt: one line a run ("run I rc=R S s"), then the output
# of the runs that failed (rc != 0), each after a line "===== run I". Exit status: 0 when every
# run passed, 1 when one failed, 2 on a usage error or a test that is not built.
set -uo pipefail
usage() {
    echo "usage: $0 [-t memcheck|racecheck|synccheck|initcheck|none] [-n N] [-s SECS]" \
         "[-f FILTER] <test name>" >&2
    exit 2
}
tool=none runs=1 limit=300 filter=""
while getopts "t:n:s:f:" opt; do
    case "$opt" in
    t) tool="$OPTARG" ;;
    n) runs="$OPTARG" ;;
    s) limit="$OPTARG" ;;
    f) filter="$OPTARG" ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
case "$tool" in none | memcheck | racecheck | synccheck | initcheck) ;; *) usage ;; esac
case "$runs" in '' | *[!0-9]*) usage ;; esac
case "$limit" in '' | *[!0-9]*) usage ;; esac
if [ "$runs" -lt 1 ] || [ "$limit" -lt 1 ]; then usage; fi
name="$1"
case "$name" in '' | */* | .*) usage ;; esac
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
root="$PWD"
exe="$root/build-gpu/tests/$name"
[ -x "$exe" ] || { echo "$0: $exe is not built (run scripts/gpu-check.sh first)" >&2; exit 2; }
multiarch="$root/.deps/root/usr/lib/x86_64-linux-gnu"
[ -d "$multiarch" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$multiarch"
command -v compute-sanitizer >/dev/null 2>&1 || export PATH="$PATH:/usr/local/cuda/bin"
cmd=("$exe")
san_env=()
if [ "$tool" != none ]; then
    command -v compute-sanitizer >/dev/null 2>&1 ||
        { echo "$0: compute-sanitizer not found" >&2; exit 2; }
    cmd=(compute-sanitizer --tool "$tool" --error-exitcode 1)
    [ "$tool" = memcheck ] && cmd+=(--report-api-errors no)
    cmd+=("$exe")
    san_env=(CM_TEST_UNDER_SANITIZER=1)
fi
out="${OUT:-/tmp}/one-$name-$tool.txt"
: >"$out"
fails=""
failed=0
for i in $(seq 1 "$runs"); do
    log="$(mktemp)"
    echo "===== run $i" >"$log"
    t0=$SECONDS
    rc=0
    (cd "$(dirname "$exe")" && env CM_TEST_TIER=gpu CUDAMODEL_REQUIRE_GPU=1 "${san_env[@]}" \
        ${filter:+CM_TEST_FILTER="$filter"} timeout "$limit" "${cmd[@]}") >>"$log" 2>&1 || rc=$?
    echo "run $i rc=$rc $((SECONDS - t0)) s" | tee -a "$out"
    if [ "$rc" -ne 0 ]; then
        failed=1
        fails="$fails $log"
    else
        rm -f "$log"
    fi
done
for f in $fails; do
    cat "$f" >>"$out"
    rm -f "$f"
done
exit "$failed"
