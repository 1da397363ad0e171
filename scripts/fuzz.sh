#!/usr/bin/env bash
# Build the API-sequence fuzzer with clang in build-fuzz/ and run it for a bounded time.
#
#   scripts/fuzz.sh [seconds]          (default 60; or CUDAMODEL_FUZZ_SECONDS)
#
# The fuzzer (tests/fuzz/: libFuzzer, -fsanitize=fuzzer,address,undefined) turns each input
# into a sequence of public calls on the simulated CUDA of tests/host/test_full_fake.h, with
# injected CUDA/NCCL failures and one to three threads, and checks the library's invariants
# after every call (tests/fuzz/fuzz_driver.c says which). It starts from the committed seed
# corpus (tests/fuzz/corpus/, copied into build-fuzz/corpus/, where new inputs go) and prints
# the number of inputs and of library calls executed. A broken invariant or a sanitizer report
# is a crash: the input is saved under build-fuzz/crashes/ and the script fails. To keep it as
# a regression test, copy it to tests/fuzz/regressions/ (test_fuzz_corpus replays that folder
# with the project's compiler in the host suite; build-dev/tests/fuzz/test_fuzz_corpus FILE
# replays one input, CMFZ_VERBOSE=1 prints every operation).
#
# Environment:
#   CUDAMODEL_FUZZ_SECONDS  run time (the first argument wins)
#   CUDAMODEL_FUZZ_JOBS     parallel build jobs (default: nproc)
#   CMFZ_STRICT=1           the driver's known library issues count as crashes too
#   CUDAMODEL_FUZZ_ARGS     extra libFuzzer arguments (e.g. "-seed=1 -max_len=2048")
# clang is installed with apt-get when it is missing and the script runs as root.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$(pwd)"
secs="${1:-${CUDAMODEL_FUZZ_SECONDS:-60}}"
jobs="${CUDAMODEL_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}"
bdir="$root/build-fuzz"

if ! command -v clang >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "==> installing clang (libFuzzer)"
        apt-get install -y clang >/dev/null || { apt-get update >/dev/null && apt-get install -y clang >/dev/null; }
    else
        echo "fuzz.sh: clang is needed (apt-get install clang)" >&2
        exit 1
    fi
fi
# shellcheck source=scripts/deps.sh
. scripts/deps.sh
# shellcheck disable=SC2119  # no optional packages here
cm_deps_ensure >/dev/null || { echo "fuzz.sh: build dependencies missing (scripts/deps.sh)" >&2; exit 1; }

mkdir -p "$bdir"
echo "==> configuring build-fuzz/ (clang $(clang -dumpversion), CUDAMODEL_FUZZ=ON)"
# Only the fuzzer is built here: one CUDA architecture is enough (it runs no device code), and
# warnings are not errors (the project's warning flags are tuned for gcc).
cmake -S . -B "$bdir" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCUDAMODEL_FUZZ=ON -DCUDAMODEL_WERROR=OFF -DCUDAMODEL_BUILD_EXAMPLES=OFF \
    -DCUDAMODEL_BUILD_TOOLS=OFF -DCMAKE_CUDA_ARCHITECTURES=75-real >"$bdir/configure.log" 2>&1 ||
    { cat "$bdir/configure.log" >&2; exit 1; }
echo "==> building cm_fuzz_api"
cmake --build "$bdir" --target cm_fuzz_api --parallel "$jobs" >"$bdir/build.log" 2>&1 ||
    { tail -n 60 "$bdir/build.log" >&2; exit 1; }

mkdir -p "$bdir/corpus" "$bdir/crashes"
cp -n tests/fuzz/corpus/* "$bdir/corpus/" 2>/dev/null || true
echo "==> fuzzing for ${secs} s (corpus: build-fuzz/corpus, crashes: build-fuzz/crashes)"
rc=0
# shellcheck disable=SC2086  # CUDAMODEL_FUZZ_ARGS is a list of arguments
"$bdir/tests/fuzz/cm_fuzz_api" "$bdir/corpus" tests/fuzz/regressions \
    -max_total_time="$secs" -max_len=1024 -timeout=30 -rss_limit_mb=4096 \
    -artifact_prefix="$bdir/crashes/" -print_final_stats=1 ${CUDAMODEL_FUZZ_ARGS:-} \
    >"$bdir/fuzz.log" 2>&1 || rc=$?
grep -E "^(#[0-9]+ +DONE|Done|stat::number_of_executed_units|cudamodel fuzzer)" "$bdir/fuzz.log" || true
if [ "$rc" -ne 0 ]; then
    echo "==> the fuzzer FAILED (exit $rc): the report"
    grep -E -A40 "invariant broken|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error" \
        "$bdir/fuzz.log" | head -n 80
    find "$bdir/crashes" -type f -printf "    crash input: build-fuzz/crashes/%f\n" 2>/dev/null
    exit "$rc"
fi
echo "==> fuzzing PASSED: 0 crashes in ${secs} s"
