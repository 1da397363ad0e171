#!/usr/bin/env bash
# Build libcudamodel and run the whole test suite, the way CI does (.ci/run runs exactly this).
#
#   scripts/test.sh
#
# Stages, in order (each later stage runs even when an earlier test stage failed, so one run
# shows every problem; a failed build stops the stages that need it):
#   1. dependencies   as scripts/quickstart.sh (scripts/deps.sh); as root valgrind and doxygen are
#                     installed too
#   2. build/         Release, for one CUDA architecture (below), then the count of functions
#                     the shared library exports, then `ctest --test-dir build` over all labels:
#                     host tests, GPU tests (they skip themselves without a GPU), the doctor's CLI
#                     tests and the install/packaging test; then the `docs` target (Doxygen over
#                     the public headers, warnings are errors) when doxygen is installed
#   3. build-asan/    Debug with CUDAMODEL_SANITIZE=ON (AddressSanitizer + UBSan), sm_75 only,
#                     no examples; `ctest -L host -LE install`
#   4. build-tsan/    Debug with CUDAMODEL_SANITIZE_THREAD=ON (ThreadSanitizer), sm_75 only, no
#                     examples; `ctest -L host -LE install`, any race report fails the test
#                     (halt_on_error). Not run, with the reason, where a probe program built
#                     with -fsanitize=thread cannot link or start (the stage's comment says why)
#   5. valgrind       memcheck (--leak-check=full --error-exitcode=1) over every host test
#                     executable of build/, when valgrind is installed; tests/valgrind.supp is
#                     used when it exists (none is needed today: without a driver libcudart
#                     runs clean under memcheck)
#   6. fuzz           the API fuzzer (scripts/fuzz.sh: libFuzzer, clang, build-fuzz/), when
#                     clang is installed (as root it is, with its libFuzzer runtime), in rounds
#                     until it has made at least CUDAMODEL_FUZZ_MIN_CALLS public library calls
#                     (default 1000000); prints the count. A crash (a broken invariant or a
#                     sanitizer report) fails the run.
# The exit status is non-zero when any build or test failed. The last lines are a summary with
# each stage's time, ctest's own summary lines and a "total: N passed, N failed, N skipped"
# line, which adds up the ctest runs and the valgrind runs (a failed build counts as one
# failure).
#
# CUDA architectures of build/ (cm_pick_cuda_architectures, scripts/deps.sh): without a GPU, as
# in CI, "75" only (sm_75): the host tests run no device code, so one architecture is enough,
# and it keeps the whole script near 15 minutes on 2 cores, where building build/ alone for
# the project's default list (every architecture from sm_75 to sm_120) takes about 25. With a
# GPU that nvidia-smi reports, its own architecture, so the GPU tests run on it. .ci/run builds
# the library with the default list as well, after this script.
#
# Environment:
#   CUDAMODEL_CUDA_ARCHITECTURES  build/'s CUDA architectures instead (CMake syntax, e.g. "90";
#                                 "default" for the project's full list)
#   CUDAMODEL_TEST_JOBS           parallel build and test jobs (default: nproc)
#   CUDAMODEL_FUZZ_MIN_CALLS      library calls the fuzz stage makes at least (default 1000000;
#                                 0 skips the stage)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$(pwd)"
# shellcheck source=scripts/deps.sh
. scripts/deps.sh

say() { printf '\n==> %s\n' "$*"; }

say "checking build dependencies"
if [ "$(id -u)" -eq 0 ]; then
    # clang and its libFuzzer runtime (the fuzz stage): the runtime is installed with clang
    cm_deps_ensure --optional valgrind:valgrind --optional doxygen:doxygen \
        --optional clang:clang --optional libclang-rt-dev:clang || exit 1
else
    cm_deps_ensure || exit 1
fi

jobs="${CUDAMODEL_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}"
cm_pick_cuda_architectures

# Summary bookkeeping.
summary=()          # one line per stage
ctest_lines=()      # ctest's own "N% tests passed, ..." lines
total_passed=0 total_failed=0 total_skipped=0
status=0
stage_start=$SECONDS stage_t=""
# Sets stage_t to the time since the previous call: the time of the stage that just ended.
stage_end() { stage_t="$((SECONDS - stage_start))s"; stage_start=$SECONDS; }

# Read a ctest log: append its summary line and add its counts to the totals.
# Skipped tests count as passed in ctest's line; they are listed as "(Skipped)" below it.
account_ctest() {
    local label="$1" log="$2" line n_total n_failed n_skipped
    # ctest 3.x: "N% tests passed, M tests failed out of K"; ctest 4 when all pass: "100% tests passed out of K"
    line="$(grep -E '^[0-9]+% tests passed(, [0-9]+ tests? failed)? out of [0-9]+' "$log" | tail -n 1 || true)"
    if [ -z "$line" ]; then
        ctest_lines+=("$label: (no ctest summary line)")
        return
    fi
    ctest_lines+=("$label: $line")
    n_failed=0
    if [[ "$line" =~ ,\ ([0-9]+)\ tests?\ failed ]]; then n_failed="${BASH_REMATCH[1]}"; fi
    n_total="$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$line")"
    n_skipped="$(grep -cE '\(Skipped\)[[:space:]]*$' "$log" || true)"
    total_failed=$((total_failed + n_failed))
    total_skipped=$((total_skipped + n_skipped))
    total_passed=$((total_passed + n_total - n_failed - n_skipped))
}

# ------------------------------------------------------------------ build/ and its tests
build_ok=1
say "configuring build/ (Release, CUDA architectures ${cm_arch_list[*]})"
echo "why: $cm_arch_why"
if cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${cm_arch_args[@]}" &&
   say "building build/ with $jobs jobs" &&
   cmake --build build --parallel "$jobs"; then
    stage_end
    summary+=("build/       build          PASS ($stage_t, CUDA architectures ${cm_arch_list[*]})")
else
    build_ok=0
    status=1
    total_failed=$((total_failed + 1))
    stage_end
    summary+=("build/       build          FAIL ($stage_t)")
fi

# The public surface: functions the shared library exports (nm type T, cm_ prefix). Printed
# for CI's log, never a failure: issue #14 aims at 150 or fewer.
exports_line="exported functions: not counted (no build/libcudamodel.so)"
if [ "$build_ok" -eq 1 ] && [ -f build/libcudamodel.so ]; then
    if command -v nm >/dev/null 2>&1; then
        n_exports="$(nm -D --defined-only build/libcudamodel.so | grep -c ' T cm_' || true)"
        exports_line="exported functions: $n_exports"
    else
        exports_line="exported functions: not counted (nm is not installed)"
    fi
fi
say "$exports_line (build/libcudamodel.so; target: 150 or fewer)"

if [ "$build_ok" -eq 1 ]; then
    say "ctest --test-dir build (all labels; GPU tests skip themselves without a GPU)"
    rc=0
    ctest --test-dir build --output-on-failure --no-tests=error --parallel "$jobs" 2>&1 |
        tee build/ctest-all.log || rc=$?
    account_ctest "build/ ctest (all labels)" build/ctest-all.log
    if [ "$rc" -eq 0 ]; then
        stage_end
        summary+=("build/       ctest          PASS ($stage_t)")
    else
        status=1
        stage_end
        summary+=("build/       ctest          FAIL (exit $rc, $stage_t)")
    fi
fi

# ------------------------------------------------------------------ the API reference
# Doxygen over the public headers and docs/model.md, warnings as errors (CI installs doxygen as
# root; elsewhere the stage says how to get it).
if [ "$build_ok" -eq 1 ] && command -v doxygen >/dev/null 2>&1; then
    say "cmake --build build --target docs (Doxygen, warnings are errors)"
    if cmake --build build --target docs; then
        stage_end
        summary+=("build/       docs           PASS ($stage_t)")
    else
        status=1
        total_failed=$((total_failed + 1))
        stage_end
        summary+=("build/       docs           FAIL ($stage_t)")
    fi
elif [ "$build_ok" -eq 1 ]; then
    summary+=("build/       docs           not run (doxygen is not installed: apt-get install doxygen)")
fi

# ------------------------------------------------------------------ sanitizer builds
# sanitized_host_tests DIR OPTION WHAT [VAR=VALUE...]: configure DIR/ (Debug, the CMake option
# OPTION on, sm_75 only, no examples) and build it, then run `ctest -L host -LE install` there
# with the environment given; a summary line for the build and one for the tests
sanitized_host_tests() {
    local dir="$1" option="$2" what="$3" label rc=0
    shift 3
    label="$(printf '%-12s' "$dir/")"
    say "configuring $dir/ (Debug, $option=ON, sm_75 only, no examples)"
    if ! { cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug "-D$option=ON" \
               -DCUDAMODEL_BUILD_EXAMPLES=OFF -DCMAKE_CUDA_ARCHITECTURES=75 &&
           say "building $dir/ with $jobs jobs" &&
           cmake --build "$dir" --parallel "$jobs"; }; then
        status=1
        total_failed=$((total_failed + 1))
        stage_end
        summary+=("$label build          FAIL ($stage_t)")
        return
    fi
    stage_end
    summary+=("$label build          PASS ($stage_t)")
    say "ctest --test-dir $dir -L host -LE install ($what)"
    env "$@" ctest --test-dir "$dir" -L host -LE install --output-on-failure \
        --no-tests=error --parallel "$jobs" 2>&1 | tee "$dir/ctest-host.log" || rc=$?
    account_ctest "$dir/ ctest -L host" "$dir/ctest-host.log"
    stage_end
    if [ "$rc" -eq 0 ]; then
        summary+=("$label ctest -L host  PASS ($stage_t)")
    else
        status=1
        summary+=("$label ctest -L host  FAIL (exit $rc, $stage_t)")
    fi
}

# build-asan/: AddressSanitizer + UBSan. protect_shadow_gap=0: the CUDA runtime maps memory
# where ASan's shadow gap would be.
asan_env=(
    "ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=1:abort_on_error=0:${ASAN_OPTIONS:-}"
    "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
)
if [ -f tests/lsan.supp ]; then
    asan_env+=("LSAN_OPTIONS=suppressions=$root/tests/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}")
fi
sanitized_host_tests build-asan CUDAMODEL_SANITIZE "AddressSanitizer + UBSan" "${asan_env[@]}"

# build-tsan/: ThreadSanitizer over the host tests: the core's registries, pools and
# once-per-device state are shared by every thread of a process, and the threaded host tests
# (handles, buffers, streams, events, NVML) drive them from many threads at once through the
# fakes. A probe first: a kernel whose address-space layout ThreadSanitizer does not support
# makes every instrumented program die at start, which says nothing of the library, so the
# stage then reports that it did not run and why.
tsan_probe_dir="$(mktemp -d)"
cat >"$tsan_probe_dir/probe.c" <<'PROBE'
#include <pthread.h>
static int shared;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *body(void *arg) {
    (void)arg;
    pthread_mutex_lock(&lock);
    ++shared;
    pthread_mutex_unlock(&lock);
    return 0;
}
int main(void) {
    pthread_t t;
    if (pthread_create(&t, 0, body, 0) != 0) return 1;
    body(0);
    pthread_join(t, 0);
    return shared == 2 ? 0 : 1;
}
PROBE
tsan_why=""
if ! "${CC:-cc}" -fsanitize=thread -pthread -o "$tsan_probe_dir/probe" "$tsan_probe_dir/probe.c" \
        >"$tsan_probe_dir/log" 2>&1; then
    tsan_why="the C compiler cannot link -fsanitize=thread: $(head -n 1 "$tsan_probe_dir/log")"
elif ! "$tsan_probe_dir/probe" >"$tsan_probe_dir/log" 2>&1; then
    tsan_why="a ThreadSanitizer program cannot run here: $(grep -m 1 . "$tsan_probe_dir/log")"
fi
rm -rf "$tsan_probe_dir"
if [ -n "$tsan_why" ]; then
    echo "ThreadSanitizer stage not run: $tsan_why"
    summary+=("build-tsan/  ctest -L host  not run ($tsan_why)")
else
    sanitized_host_tests build-tsan CUDAMODEL_SANITIZE_THREAD ThreadSanitizer \
        "TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:${TSAN_OPTIONS:-}"
fi

# ------------------------------------------------------------------ valgrind over build/
if [ "$build_ok" -eq 1 ] && command -v valgrind >/dev/null 2>&1; then
    say "valgrind --leak-check=full over the host test executables of build/"
    vg_dir=build/valgrind
    rm -rf "$vg_dir"
    mkdir -p "$vg_dir"
    vg_args=(--leak-check=full --error-exitcode=1 --errors-for-leak-kinds=definite,possible
             --track-origins=yes --num-callers=30)
    if [ -f tests/valgrind.supp ]; then
        vg_args+=("--suppressions=$root/tests/valgrind.supp")
    fi
    vg_passed=0 vg_failed=0 vg_failed_names=()
    shopt -s nullglob
    sources=(tests/host/test_*.c)
    shopt -u nullglob
    for src in "${sources[@]}"; do
        name="$(basename "$src" .c)"
        exe="$root/build/tests/$name"
        if [ ! -x "$exe" ]; then
            echo "valgrind: $name: executable $exe not found"
            vg_failed=$((vg_failed + 1)); vg_failed_names+=("$name"); continue
        fi
        # Same environment and working directory as ctest gives the test.
        rc=0
        (cd build/tests && CM_TEST_TIER=host valgrind "${vg_args[@]}" \
            --log-file="$root/$vg_dir/$name.log" "$exe" >"$root/$vg_dir/$name.out" 2>&1) || rc=$?
        if [ "$rc" -eq 0 ]; then
            echo "valgrind: $name: passed"
            vg_passed=$((vg_passed + 1))
        else
            echo "valgrind: $name: FAILED (exit $rc); test output and valgrind log:"
            cat "$vg_dir/$name.out" "$vg_dir/$name.log"
            vg_failed=$((vg_failed + 1)); vg_failed_names+=("$name")
        fi
    done
    total_passed=$((total_passed + vg_passed))
    total_failed=$((total_failed + vg_failed))
    stage_end
    if [ "$vg_failed" -eq 0 ] && [ "$vg_passed" -gt 0 ]; then
        summary+=("build/       valgrind       PASS ($stage_t, $vg_passed executables)")
    elif [ "$vg_failed" -eq 0 ]; then
        status=1
        summary+=("build/       valgrind       FAIL ($stage_t, no host test executables found)")
    else
        status=1
        summary+=("build/       valgrind       FAIL ($stage_t, $vg_failed of $((vg_passed + vg_failed)): ${vg_failed_names[*]})")
    fi
elif [ "$build_ok" -eq 1 ]; then
    summary+=("build/       valgrind       not run (valgrind is not installed: apt-get install valgrind)")
fi

# ------------------------------------------------------------------ the API fuzzer
# scripts/fuzz.sh runs for a given time; the stage runs it in rounds (the corpus grows in
# build-fuzz/corpus from one round to the next) until the rounds add up to the calls asked for,
# each round's time from the rate of the ones before (the first: 30 s, about 1.5 million calls
# on 2 cores; the build of build-fuzz/ before it takes a few minutes).
fuzz_min="${CUDAMODEL_FUZZ_MIN_CALLS:-1000000}"
if [ "$fuzz_min" -gt 0 ] && command -v clang >/dev/null 2>&1; then
    say "the API fuzzer (scripts/fuzz.sh) until it has made $fuzz_min library calls"
    fuzz_calls=0 fuzz_secs=0 fuzz_round=0 fuzz_rc=0 secs=30
    mkdir -p build-fuzz
    while [ "$fuzz_calls" -lt "$fuzz_min" ] && [ "$fuzz_round" -lt 6 ]; do
        fuzz_round=$((fuzz_round + 1))
        rc=0
        bash scripts/fuzz.sh "$secs" 2>&1 | tee build-fuzz/test-round.log || rc=$?
        # "cudamodel fuzzer: N inputs, M library calls executed" (fuzz_main.c, at exit)
        n="$(sed -nE 's/^cudamodel fuzzer: [0-9]+ inputs, ([0-9]+) library calls executed.*/\1/p' \
             build-fuzz/test-round.log | tail -n 1)"
        fuzz_calls=$((fuzz_calls + ${n:-0}))
        fuzz_secs=$((fuzz_secs + secs))
        if [ "$rc" -ne 0 ]; then
            fuzz_rc=$rc
            break
        fi
        if [ -z "$n" ] || [ "$n" -eq 0 ]; then
            fuzz_rc=1
            echo "fuzz: round $fuzz_round reported no library calls"
            break
        fi
        # the rest at the rate seen so far, with a margin; at least 30 s a round
        secs=$(( ( (fuzz_min - fuzz_calls) * fuzz_secs * 12 / 10 ) / fuzz_calls + 1 ))
        [ "$secs" -ge 30 ] || secs=30
    done
    echo "fuzz: $fuzz_calls library calls in $fuzz_round round(s), ${fuzz_secs}s of fuzzing"
    stage_end
    if [ "$fuzz_rc" -eq 0 ] && [ "$fuzz_calls" -ge "$fuzz_min" ]; then
        total_passed=$((total_passed + 1))
        summary+=("build-fuzz/  fuzz           PASS ($stage_t, $fuzz_calls library calls, 0 crashes)")
    else
        status=1
        total_failed=$((total_failed + 1))
        if [ "$fuzz_rc" -ne 0 ]; then
            summary+=("build-fuzz/  fuzz           FAIL ($stage_t, exit $fuzz_rc after $fuzz_calls library calls; build-fuzz/crashes/)")
        else
            summary+=("build-fuzz/  fuzz           FAIL ($stage_t, $fuzz_calls library calls, fewer than $fuzz_min)")
        fi
    fi
elif [ "$fuzz_min" -gt 0 ]; then
    summary+=("build-fuzz/  fuzz           not run (clang is not installed: apt-get install clang libclang-rt-dev)")
fi

# ------------------------------------------------------------------ summary
echo
echo "==================== scripts/test.sh summary ===================="
printf '%s\n' "${summary[@]}"
echo "$exports_line"
echo "ctest:"
printf '  %s\n' "${ctest_lines[@]}"
if [ "$status" -eq 0 ]; then
    echo "result: all builds and tests passed"
else
    echo "result: FAILED (see the stages above)"
fi
echo "total: $total_passed passed, $total_failed failed, $total_skipped skipped"
echo "time: ${SECONDS}s"
exit "$status"
