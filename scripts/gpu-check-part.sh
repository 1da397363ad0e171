#!/usr/bin/env bash
# The whole GPU check (scripts/gpu-check.sh) in two device calls: on the H200 it takes ~10
# minutes, more than one call of the device tool may run (600 s). Run the parts back to back,
# part b right after part a, so that it finds the warm machine and part a's build-gpu/ (a
# machine idle for ~30 s is given back; a fresh one rebuilds, which part b does by itself):
#
#   scripts/gpu-check-part.sh a <commit>   build, tests, doctor (~400 s on a fresh H100)
#   scripts/gpu-check-part.sh b <commit>   build (cached), test_gpu_core, sanitizer (memcheck
#                                          over every GPU test), racecheck, examples, bench,
#                                          soak (~380 s on a warm H100; ~100 s more on a
#                                          fresh machine, which rebuilds)
# The sanitizer runs in part b so that each part stays well under the call's 600 s: part a's
# ctest alone takes ~290 s on an H100, the sanitizer's list ~210 s.
#
# <commit> is the commit measured (git rev-parse --short HEAD here, written literally into the
# device command: the machine's copy has no usable history). Carry .deps (CMocka).
# Into $OUT, 3 files (the device tool brings back 8, so a command may add 5 of its own):
# check-<part>.txt (the script's output and its summary table), logs-<part>.txt (the stage logs
# that have content, each after a line "===== gpu-check-<stage>.log") and h200.jsonl (part b's:
# the streams_overlap example's, the benchmarks' and the soak's rows) to append to
# bench/results/h200.jsonl. A ninth file in $OUT is not brought back. Each part's
# summary lists the other part's stages as SKIP; the check passes when every stage that is not
# SKIP passed in both parts. Exit status: 0 when this part's stages all passed, 1 otherwise (a
# stage failed, the part ran out of time, or gpu-check ended without its summary), 2 on a usage
# error.
set -uo pipefail

usage() {
    echo "usage: OUT=<dir> $0 a|b <commit>" >&2
    exit 2
}
[ $# -eq 2 ] || usage
part="$1"
commit="$2"
real_out="${OUT:-}"
[ -n "$real_out" ] || { echo "$0: OUT is not set (the device tool sets it)" >&2; exit 2; }
case "$part" in
a)
    only="doctor"
    tests=""
    san_tests=""
    logs="build tests doctor"
    ;;
b)
    only="sanitizer racecheck examples bench soak"
    tests='^test_gpu_core$'
    san_tests="."
    logs="build tests sanitizer examples bench soak"
    ;;
*) usage ;;
esac

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
work="$(mktemp -d)"
summary="$real_out/check-$part.txt"
# The part stops itself before the device call's 600 s do (CM_PART_LIMIT_S, default 570), so
# that its logs still come back and its verdict says which stage ran out of time (part a at
# be98dcd took the whole 600 s and came back with nothing but its summary so far).
limit="${CM_PART_LIMIT_S:-570}"
timeout -k 10 "$limit" env OUT="$work" CM_BENCH_COMMIT="$commit" CM_GPU_CHECK_ONLY="$only" \
    ${tests:+CM_GPU_CHECK_TESTS="$tests"} ${san_tests:+CM_GPU_CHECK_SANITIZER_TESTS="$san_tests"} \
    bash scripts/gpu-check.sh >"$summary" 2>&1
rc=$?
# the stage logs with content, one after another in logs-<part>.txt (each after a line
# "===== gpu-check-<stage>.log"): one returned file, not one per stage
for l in $logs; do
    [ -s "$work/gpu-check-$l.log" ] || continue
    echo "===== gpu-check-$l.log"
    cat "$work/gpu-check-$l.log"
done >"$real_out/logs-$part.txt"
[ -s "$real_out/logs-$part.txt" ] || rm -f "$real_out/logs-$part.txt"
[ -s "$work/h200.jsonl" ] && cp "$work/h200.jsonl" "$real_out/"
rm -rf "$work"
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    stage="$(grep -E '^==> ' "$summary" | tail -n 1 | sed -E 's/^==> ([a-z]+).*/\1/')"
    echo "gpu-check part $part: FAIL (ran out of its $limit s in the ${stage:-?} stage) at $commit"
    exit 1
fi
# this part's verdict: a stage row of the summary table that is FAIL, or no table at all
# ("no-summary": gpu-check ended before printing it)
. scripts/gpu-stages.sh
failed="$(cm_failed_stages "$summary")"
if [ -n "$failed" ]; then
    echo "gpu-check part $part: FAIL ($failed) at $commit"
    exit 1
fi
echo "gpu-check part $part: every stage of this part passed at $commit"
exit 0
