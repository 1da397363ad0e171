#!/usr/bin/env bash
# The one-call GPU check: build, test (nothing may skip), sanitize, diagnose, run the examples
# and the benchmarks on a machine with an NVIDIA GPU, then print a summary table.
#
#   scripts/fetch-deps.sh                 # first, on a machine with network: CMocka -> .deps/debs
#   bash scripts/gpu-check.sh             # on the GPU machine, from the repository root
#                                         # (device tool: carry [".deps"])
#
# Stages (every stage runs even when an earlier one failed, so the table is complete):
#   build       configure build-gpu/ (Release, CUDA architectures CUDAMODEL_CUDA_ARCHITECTURES,
#               default 90 = H200) and build with every core
#   tests       every ctest test with CUDAMODEL_REQUIRE_GPU=1: a GPU test that would skip fails
#   sanitizer   each GPU test executable (label gpu, not label faulting) under
#               compute-sanitizer --tool memcheck --error-exitcode 1 --report-api-errors no
#               (the tests provoke failing CUDA calls on purpose, e.g. an out-of-memory
#               cudaMalloc; memcheck still fails the run on any bad device memory access);
#               then --tool initcheck over CM_INITCHECK_TESTS ("<executable>:<test filter>"
#               words, default test_gpu_gemm:test_fp32_pitched; empty: none)
#   racecheck   compute-sanitizer --tool racecheck over CM_RACECHECK_TESTS (default
#               test_gpu_stream test_gpu_kernels), after a planted shared-memory race is caught
#   doctor      build-gpu/tools/cudamodel-doctor, text and --json: must exit 0
#   examples    every program in build-gpu/examples: must exit 0
#   bench       every build-gpu/bench/bench_* (none built yet is not a failure), with
#               CM_BENCH_COMMIT=<git describe> and CM_BENCH_RESULTS=$OUT/h200.jsonl when OUT is set;
#               a benchmark named in bench_extra_runs below runs again once per word there, with
#               that word as its argument (bench_gemm --sweep: the shape sweep of issue #15), each
#               run a process of its own under the same timeout
#   soak        build-gpu/bench/soak (bench/soak.c, issue #17): 8 threads hammer the public API at
#               random on GPU 0 for CM_SOAK_SECONDS (default 60) checking every result, then no
#               leak and the free memory back; its ops/s rows go to h200.jsonl like a benchmark's.
#               Then again for CM_SOAK_SANITIZER_SECONDS (default 10) under compute-sanitizer
#               --tool memcheck --error-exitcode 1 --report-api-errors no (no rows recorded).
#               Each run under the per-run timeout, raised to the soak's seconds + 120 (plain) or
#               + 240 (memcheck) when that is longer. About 1.5-2.5 minutes on an H200.
# Full logs go to ${OUT:-/tmp}/gpu-check-<stage>.log (7 logs, plus h200.jsonl from the benchmarks).
# The last lines printed are the summary table and a verdict: PASS; FAIL (a stage failed); or
# INCOMPLETE (none failed, but CM_GPU_CHECK_ONLY / _TESTS / _BENCHES left some out). The exit
# status is 0 for PASS only.
#
# CMocka comes from .deps/debs/*.deb (unpacked with dpkg -x into .deps/root, nothing installed
# system-wide) when the machine has none; pkg-config likewise when it has none.
#
# Environment:
#   CUDAMODEL_CUDA_ARCHITECTURES  architectures to build (CMake syntax), default 90
#   CM_BENCH_COMMIT               overrides the recorded commit (git describe --always --dirty);
#                                 through the device tool pass it from the checkout you measure
#                                 (the machine's copy of .git was seen to report an older HEAD)
#   CM_GPU_CHECK_ONLY             run build, tests and only these later stages (e.g. "bench"):
#                                 a targeted run; the rest is recorded SKIP (INCOMPLETE)
#   CM_GPU_CHECK_TIMEOUT          seconds allowed to each example, benchmark or sanitized test
#                                 (default 300)
#   CM_GPU_CHECK_TESTS            a ctest -R regular expression: the tests stage (and the
#                                 sanitizer's list) runs only the matching tests, e.g.
#                                 "test_gpu_core|test_gpu_buffer$"; a targeted run (INCOMPLETE)
#   CM_GPU_CHECK_SANITIZER_TESTS  a ctest -R regular expression for the sanitizer's list alone
#                                 (default: CM_GPU_CHECK_TESTS's), e.g. "." for every GPU test
#                                 while the tests stage runs a few (scripts/gpu-check-part.sh b);
#                                 any other value is a targeted run (INCOMPLETE)
#   CM_GPU_CHECK_BENCHES          names of the benchmarks to run, e.g. "bench_buffer bench_stream"
#                                 (the others are not run; a targeted run: INCOMPLETE)
#   CM_SOAK_SECONDS               seconds of the plain soak run (default 60; whole seconds)
#   CM_SOAK_SANITIZER_SECONDS     seconds of the soak under memcheck (default 10; whole seconds)
#                                 (bench/soak.c lists its other knobs: CM_SOAK_SEED, _THREADS...)
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
root="$(pwd)"
logdir="${OUT:-/tmp}"
mkdir -p "$logdir"
jobs="$(nproc 2>/dev/null || echo 4)"
per_run_timeout="${CM_GPU_CHECK_TIMEOUT:-300}"
bdir="$root/build-gpu"

log_build="$logdir/gpu-check-build.log"
log_tests="$logdir/gpu-check-tests.log"
log_sanitizer="$logdir/gpu-check-sanitizer.log"
log_doctor="$logdir/gpu-check-doctor.log"
log_examples="$logdir/gpu-check-examples.log"
log_bench="$logdir/gpu-check-bench.log"
log_soak="$logdir/gpu-check-soak.log"
: >"$log_build"; : >"$log_tests"; : >"$log_sanitizer"; : >"$log_doctor"; : >"$log_examples"; : >"$log_bench"
: >"$log_soak"

say() { printf '\n==> %s\n' "$*"; }
# Print the end of a log to stdout (the full log is in $logdir).
show_tail() { echo "--- last $2 lines of $1:"; tail -n "$2" "$1"; echo "---"; }

declare -A stage_result stage_detail stage_seconds
stages=(build tests sanitizer racecheck doctor examples bench soak)
overall=0
failed=0    # a stage failed (overall is also 1 for a targeted run that left stages out)
targeted="" # what a targeted run left out, for the last line
left_out() { # left_out WHAT: a targeted run left WHAT out; the check cannot pass as a whole
    overall=1
    targeted="${targeted:+$targeted, }$1"
}
record() {  # record STAGE PASS|FAIL|N/A DETAIL SECONDS
    stage_result[$1]="$2"; stage_detail[$1]="$3"; stage_seconds[$1]="$4"
    [ "$2" = FAIL ] && { overall=1; failed=1; }
    echo "[$1] $2: $3"
}
# CM_GPU_CHECK_ONLY="bench examples" runs build, tests and only the named later stages (for a
# targeted run; the others are recorded SKIP and the check cannot pass as a whole).
stage_on() {
    [ -z "${CM_GPU_CHECK_ONLY:-}" ] && return 0
    case " $CM_GPU_CHECK_ONLY " in *" $1 "*) return 0 ;; esac
    record "$1" SKIP "not selected (CM_GPU_CHECK_ONLY=$CM_GPU_CHECK_ONLY)" 0
    left_out "$1 not selected"
    return 1
}

# ------------------------------------------------------------------ environment
say "environment"
command -v nvcc >/dev/null 2>&1 || export PATH="$PATH:/usr/local/cuda/bin"
commit="${CM_BENCH_COMMIT:-$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)}"
[ -n "$commit" ] || commit=unknown
echo "commit: $commit"
gpu_line=""
if command -v nvidia-smi >/dev/null 2>&1; then
    gpu_line="$(nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap \
                --format=csv,noheader 2>/dev/null | head -n 1)"
    [ -n "$gpu_line" ] || gpu_line="$(nvidia-smi -L 2>&1 | head -n 1)"
fi
gpu_line="${gpu_line:-nvidia-smi not available}"
echo "nvidia-smi: $gpu_line"
echo "nvcc: $(nvcc --version 2>/dev/null | grep -o 'release [0-9.]*' || echo 'not found')"
echo "cmake: $(cmake --version 2>/dev/null | head -n 1)"
echo "cores: $jobs; logs: $logdir"

# CMocka (and pkg-config) from the carried Debian packages when the machine lacks them.
have_cmocka() { command -v pkg-config >/dev/null 2>&1 && pkg-config --exists cmocka 2>/dev/null; }
if ! have_cmocka; then
    shopt -s nullglob
    debs=("$root"/.deps/debs/*.deb)
    shopt -u nullglob
    if [ ${#debs[@]} -eq 0 ]; then
        echo "no CMocka here and no .deps/debs/*.deb: run scripts/fetch-deps.sh where there is network" \
             "and carry .deps (the build will fail)"
    else
        rm -rf "$root/.deps/root"
        mkdir -p "$root/.deps/root"
        for deb in "${debs[@]}"; do dpkg -x "$deb" "$root/.deps/root"; done
        multiarch="$root/.deps/root/usr/lib/x86_64-linux-gnu"
        if ! command -v pkg-config >/dev/null 2>&1 && [ -x "$root/.deps/root/usr/bin/pkgconf" ]; then
            mkdir -p "$root/.deps/bin"
            ln -sf "$root/.deps/root/usr/bin/pkgconf" "$root/.deps/bin/pkg-config"
            export PATH="$PATH:$root/.deps/bin"
            echo "pkg-config: using the carried pkgconf"
        fi
        export PKG_CONFIG_PATH="$multiarch/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
        # Their cmocka.pc says /usr: the sysroot makes its -I and -L point into .deps/root.
        export PKG_CONFIG_SYSROOT_DIR="$root/.deps/root"
        export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$multiarch"
        if have_cmocka; then
            echo "cmocka: $(pkg-config --modversion cmocka) from .deps ($(pkg-config --cflags --libs cmocka))"
        else
            echo "cmocka: still not found after unpacking .deps/debs (the build will fail)"
        fi
    fi
else
    echo "cmocka: $(pkg-config --modversion cmocka) (installed)"
fi

# ------------------------------------------------------------------ build
say "build: build-gpu/ (CUDA architectures ${CUDAMODEL_CUDA_ARCHITECTURES:-90})"
t0=$SECONDS
gen_args=()
if [ ! -f "$bdir/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then
    gen_args=(-G Ninja)
fi
build_ok=1
# Files an experiment patched in an earlier call on this machine (bench/experiments/exp_lib.sh,
# exp_apply): the device copies the tree afresh with the files' own (older) times, so the
# build would keep the patched objects; touched, they are rebuilt.
if [ -f "$bdir/.cm-patched" ]; then
    while IFS= read -r f; do
        [ -n "$f" ] && [ -f "$root/$f" ] && touch "$root/$f"
    done <"$bdir/.cm-patched"
    echo "touched for a rebuild (patched by an earlier experiment): $(sort -u "$bdir/.cm-patched" | tr '\n' ' ')" >>"$log_build"
    rm -f "$bdir/.cm-patched"
fi
{
    echo "commit: $commit"; echo "nvidia-smi: $gpu_line"
    cmake -S "$root" -B "$bdir" "${gen_args[@]}" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CUDA_ARCHITECTURES="${CUDAMODEL_CUDA_ARCHITECTURES:-90}"
} >>"$log_build" 2>&1 || build_ok=0
if [ "$build_ok" -eq 1 ]; then
    # Keep going past errors so every target that can be built is (later stages still run).
    keep_going=(-k)
    grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja' "$bdir/CMakeCache.txt" 2>/dev/null && keep_going=(-k 0)
    cmake --build "$bdir" --parallel "$jobs" -- "${keep_going[@]}" >>"$log_build" 2>&1 || build_ok=0
fi
n_warnings="$(grep -c 'warning' "$log_build" || true)"
if [ "$build_ok" -eq 1 ]; then
    record build PASS "configured and built ($n_warnings warning lines)" $((SECONDS - t0))
else
    show_tail "$log_build" 60
    record build FAIL "configure or build failed (see gpu-check-build.log)" $((SECONDS - t0))
fi

# ------------------------------------------------------------------ tests
say "tests: ctest (all labels) with CUDAMODEL_REQUIRE_GPU=1"
t0=$SECONDS
rc=0
test_filter=()
if [ -n "${CM_GPU_CHECK_TESTS:-}" ]; then
    test_filter=(-R "$CM_GPU_CHECK_TESTS")
    echo "targeted: only the tests matching '$CM_GPU_CHECK_TESTS' (the check cannot pass as a whole)"
    left_out "tests limited to '$CM_GPU_CHECK_TESTS'"
fi
CUDAMODEL_REQUIRE_GPU=1 ctest --test-dir "$bdir" --output-on-failure --no-tests=error \
    --parallel "$jobs" "${test_filter[@]}" >"$log_tests" 2>&1 || rc=$?
# ctest 3.x: "N% tests passed, M tests failed out of K"; ctest 4 when all pass: "100% tests passed out of K"
line="$(grep -E '^[0-9]+% tests passed(, [0-9]+ tests? failed)? out of [0-9]+' "$log_tests" | tail -n 1)"
n_skipped="$(grep -cE '\(Skipped\)[[:space:]]*$' "$log_tests" || true)"
# Tests labelled multi-gpu may skip on a machine with fewer than two GPUs, and only those.
n_gpus="$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)"
allowed_skips=0
if [ "${n_gpus:-0}" -lt 2 ]; then
    for t in $(ctest --test-dir "$bdir" -L multi-gpu -N 2>/dev/null | sed -nE 's/^ *Test +#[0-9]+: ([A-Za-z0-9_]+).*/\1/p'); do
        if grep -qE "[0-9]+ - $t \(Skipped\)" "$log_tests"; then
            allowed_skips=$((allowed_skips + 1))
            echo "  allowed skip: $t needs two GPUs, this machine has ${n_gpus:-0}"
        fi
    done
fi
n_skipped=$((n_skipped - allowed_skips))
grep -E '^[0-9]+% tests passed|\(Failed\)|\(Skipped\)|\(Timeout\)|Not Run|Total Test time' "$log_tests"
if [ "$rc" -eq 0 ] && [ "$n_skipped" -eq 0 ] && [ -n "$line" ]; then
    record tests PASS "$line" $((SECONDS - t0))
else
    show_tail "$log_tests" 80
    record tests FAIL "${line:-no ctest summary} (exit $rc, $n_skipped skipped)" $((SECONDS - t0))
fi

# ------------------------------------------------------------------ sanitizer
if stage_on sanitizer; then
say "sanitizer: GPU tests (label gpu, not faulting) under compute-sanitizer memcheck"
t0=$SECONDS
sanitizer="$(command -v compute-sanitizer || true)"
for cand in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer \
            /opt/nvidia/compute-sanitizer/compute-sanitizer; do
    [ -z "$sanitizer" ] && [ -x "$cand" ] && sanitizer="$cand"
done
# The test executables, from ctest itself (name -> command), so the list follows the labels;
# CM_GPU_CHECK_SANITIZER_TESTS, where set, picks them in place of the tests stage's filter.
san_filter=("${test_filter[@]}")
if [ -n "${CM_GPU_CHECK_SANITIZER_TESTS:-}" ]; then
    san_filter=(-R "$CM_GPU_CHECK_SANITIZER_TESTS")
    [ "$CM_GPU_CHECK_SANITIZER_TESTS" = "." ] ||
        left_out "sanitizer limited to '$CM_GPU_CHECK_SANITIZER_TESTS'"
fi
gpu_tests=()
if command -v python3 >/dev/null 2>&1; then
    mapfile -t gpu_tests < <(ctest --test-dir "$bdir" -L gpu -LE faulting "${san_filter[@]}" \
                                   --show-only=json-v1 2>/dev/null |
        python3 -c 'import json,sys
try:
    d = json.load(sys.stdin)
except Exception:
    sys.exit(0)
for t in d.get("tests", []):
    cmd = t.get("command") or []
    if cmd: print(cmd[0])')
fi
if [ ${#gpu_tests[@]} -eq 0 ]; then
    # Fallback: names from ctest -N; each test is an executable of that name in build-gpu/tests.
    while read -r name; do
        [ -n "$name" ] && gpu_tests+=("$bdir/tests/$name")
    done < <(ctest --test-dir "$bdir" -N -L gpu -LE faulting "${san_filter[@]}" 2>/dev/null |
             sed -n 's/^ *Test *#[0-9]*: *\([^ ]*\).*/\1/p')
fi
san_pass=0 san_fail=0 san_unsupported=0 san_failed_names=()
# A canary first: memcheck must catch a planted out-of-bounds write, or a clean run proves nothing.
canary_ok=0
if [ -n "$sanitizer" ]; then
    cdir="$(mktemp -d)"
    cat >"$cdir/canary.cu" <<'EOF_CANARY'
#include <cuda_runtime.h>
__global__ void write_past_end(int *p) { p[threadIdx.x + 64] = 1; }
int main(void) {
    int *d = 0;
    if (cudaMalloc((void **)&d, sizeof(int)) != cudaSuccess) return 3;
    write_past_end<<<1, 1>>>(d);
    cudaDeviceSynchronize();
    cudaFree(d);
    return 0;
}
EOF_CANARY
    if nvcc -cudart shared -o "$cdir/canary" "$cdir/canary.cu" >>"$log_sanitizer" 2>&1; then
        echo "===== canary (a planted out-of-bounds write: memcheck must report it)" >>"$log_sanitizer"
        "$sanitizer" --tool memcheck --error-exitcode 1 "$cdir/canary" >"$cdir/out" 2>&1
        crc=$?
        cat "$cdir/out" >>"$log_sanitizer"
        if [ "$crc" -eq 1 ] && grep -q 'Invalid __global__ write' "$cdir/out"; then
            canary_ok=1; echo "  canary: memcheck caught the planted out-of-bounds write"
        else
            echo "  canary: memcheck did NOT report the planted out-of-bounds write (exit $crc)"
            grep -m 5 '=========' "$cdir/out"
        fi
    else
        echo "  canary: nvcc could not build it (see gpu-check-sanitizer.log)"
    fi
    rm -rf "$cdir"
fi
if [ -z "$sanitizer" ]; then
    echo "compute-sanitizer not found" | tee -a "$log_sanitizer"
    record sanitizer FAIL "compute-sanitizer not found" $((SECONDS - t0))
elif [ ${#gpu_tests[@]} -eq 0 ]; then
    echo "no GPU test executables found" | tee -a "$log_sanitizer"
    record sanitizer FAIL "no GPU test executables found (label gpu)" $((SECONDS - t0))
else
    # One run of executable $2 under compute-sanitizer tool $1, named $3 in the log and the
    # summary, with CM_TEST_FILTER=$4 when given; counted in san_pass / san_fail /
    # san_unsupported (the tool refusing the device).
    san_run() {
        local tool="$1" exe="$2" label="$3" filter="${4:-}" out rc=0
        echo "===== $label" >>"$log_sanitizer"
        out="$(mktemp)"
        (cd "$(dirname "$exe")" && env ${filter:+CM_TEST_FILTER="$filter"} CM_TEST_TIER=gpu \
            CUDAMODEL_REQUIRE_GPU=1 CM_TEST_UNDER_SANITIZER=1 \
            timeout "$per_run_timeout" "$sanitizer" --tool "$tool" --error-exitcode 1 \
                --report-api-errors no "$exe") \
            >"$out" 2>&1 || rc=$?
        cat "$out" >>"$log_sanitizer"
        if [ "$rc" -eq 0 ]; then
            san_pass=$((san_pass + 1)); echo "  $label: pass"
        elif grep -q 'Device not supported' "$out"; then
            san_unsupported=$((san_unsupported + 1)); echo "  $label: compute-sanitizer does not support this device"
        else
            san_fail=$((san_fail + 1)); san_failed_names+=("$label")
            echo "  $label: FAILED (exit $rc)"; grep -E '=========|FAILED|\[  ERROR' "$out" | head -n 30
        fi
        rm -f "$out"
    }
    for exe in "${gpu_tests[@]}"; do
        san_run memcheck "$exe" "$(basename "$exe")"
    done
    # initcheck (reads of device memory never written) over CM_INITCHECK_TESTS, words
    # "<executable>:<CM_TEST_FILTER>" (default test_gpu_gemm:test_fp32_pitched: the moved-tile
    # kernel reads the FP32 pitched copy's row padding, which the library must have written);
    # each counts as one more run, named <executable>[initcheck]
    runs=${#gpu_tests[@]}
    for spec in ${CM_INITCHECK_TESTS-test_gpu_gemm:test_fp32_pitched}; do
        iname="${spec%%:*}" iexe=""
        for exe in "${gpu_tests[@]}"; do [ "$(basename "$exe")" = "$iname" ] && iexe="$exe"; done
        [ -n "$iexe" ] || continue # not among this run's tests
        runs=$((runs + 1))
        san_run initcheck "$iexe" "${iname}[initcheck]" "${spec#*:}"
    done
    detail="$san_pass passed, $san_fail failed of $runs runs (${#gpu_tests[@]} executables under memcheck, $((runs - ${#gpu_tests[@]})) under initcheck)"
    if [ "$canary_ok" -ne 1 ] && [ "$san_unsupported" -ne "$runs" ]; then
        record sanitizer FAIL "$detail; but memcheck missed the planted canary error" $((SECONDS - t0))
    elif [ "$san_fail" -gt 0 ]; then
        record sanitizer FAIL "$detail: ${san_failed_names[*]}" $((SECONDS - t0))
    elif [ "$san_unsupported" -eq "$runs" ]; then
        # The tool itself refuses this machine's GPU (seen under gVisor): no verdict either way.
        record sanitizer N/A "compute-sanitizer refused the device ('Device not supported') for all $runs runs" $((SECONDS - t0))
    elif [ "$san_unsupported" -gt 0 ]; then
        record sanitizer FAIL "$detail, $san_unsupported refused ('Device not supported')" $((SECONDS - t0))
    else
        record sanitizer PASS "$detail, clean" $((SECONDS - t0))
    fi
fi

fi
# racecheck (shared-memory hazards) over the tests whose kernels share memory between threads
# (the reductions' block folds, the stream tests' ordering kernels), with its own canary.
race_tests="${CM_RACECHECK_TESTS:-test_gpu_stream test_gpu_kernels}"
[ -z "${sanitizer:-}" ] && sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
if stage_on racecheck && [ -x "$sanitizer" ]; then
    t1=$SECONDS
    say "sanitizer: racecheck over: $race_tests"
    rdir="$(mktemp -d)"
    cat >"$rdir/race.cu" <<'EOF_RACE'
#include <cuda_runtime.h>
__global__ void racy(int *out) {
    __shared__ int s[64];
    s[threadIdx.x] = (int)threadIdx.x;
    out[threadIdx.x] = s[(threadIdx.x + 1) % 64]; /* no __syncthreads: a read-after-write race */
}
int main(void) {
    int *d = 0;
    if (cudaMalloc((void **)&d, 64 * sizeof(int)) != cudaSuccess) return 3;
    racy<<<1, 64>>>(d);
    cudaDeviceSynchronize();
    cudaFree(d);
    return 0;
}
EOF_RACE
    race_canary=0 race_fail=0 race_names=()
    if nvcc -cudart shared -o "$rdir/race" "$rdir/race.cu" >>"$log_sanitizer" 2>&1; then
        "$sanitizer" --tool racecheck --error-exitcode 1 "$rdir/race" >"$rdir/out" 2>&1 && rrc=0 || rrc=$?
        cat "$rdir/out" >>"$log_sanitizer"
        if [ "$rrc" -eq 1 ] && grep -qi 'hazard' "$rdir/out"; then
            race_canary=1; echo "  racecheck canary: the planted shared-memory race was reported"
        else
            echo "  racecheck canary: NOT reported (exit $rrc)"
        fi
    fi
    rm -rf "$rdir"
    for name in $race_tests; do
        exe="$bdir/tests/$name"
        [ -x "$exe" ] || { race_fail=$((race_fail + 1)); race_names+=("$name(missing)"); continue; }
        echo "===== racecheck $name" >>"$log_sanitizer"
        out="$(mktemp)"
        rc=0
        (cd "$(dirname "$exe")" && CM_TEST_TIER=gpu CUDAMODEL_REQUIRE_GPU=1 CM_TEST_UNDER_SANITIZER=1 \
            timeout "$per_run_timeout" "$sanitizer" --tool racecheck --error-exitcode 1 "$exe") \
            >"$out" 2>&1 || rc=$?
        cat "$out" >>"$log_sanitizer"
        if [ "$rc" -eq 0 ]; then echo "  racecheck $name: pass"
        else race_fail=$((race_fail + 1)); race_names+=("$name"); echo "  racecheck $name: FAILED (exit $rc)"
             grep -E '=========|FAILED|\[  ERROR' "$out" | head -n 20; fi
        rm -f "$out"
    done
    n_race=$(echo $race_tests | wc -w)
    if [ "$race_canary" -ne 1 ]; then
        record racecheck FAIL "racecheck missed the planted race ($race_fail of $n_race failed)" $((SECONDS - t1))
    elif [ "$race_fail" -gt 0 ]; then
        record racecheck FAIL "$race_fail of $n_race failed: ${race_names[*]}" $((SECONDS - t1))
    else
        record racecheck PASS "$n_race executables clean: $race_tests" $((SECONDS - t1))
    fi
fi

# ------------------------------------------------------------------ doctor
if stage_on doctor; then
say "doctor: build-gpu/tools/cudamodel-doctor (text, then --json)"
t0=$SECONDS
doctor="$bdir/tools/cudamodel-doctor"
if [ -x "$doctor" ]; then
    drc=0 jrc=0 json_ok=1
    "$doctor" 2>&1 | tee -a "$log_doctor" || drc=$?
    echo "(exit $drc)" | tee -a "$log_doctor"
    json="$("$doctor" --json 2>>"$log_doctor")" || jrc=$?
    printf '%s\n(exit %s)\n' "$json" "$jrc" >>"$log_doctor"
    if command -v python3 >/dev/null 2>&1; then
        printf '%s' "$json" | python3 -m json.tool >/dev/null 2>&1 || json_ok=0
    fi
    echo "--json: exit $jrc, $( [ "$json_ok" -eq 1 ] && echo 'valid JSON' || echo 'INVALID JSON'), ${#json} bytes"
    if [ "$drc" -eq 0 ] && [ "$jrc" -eq 0 ] && [ "$json_ok" -eq 1 ]; then
        record doctor PASS "exit 0, --json exit 0 and valid" $((SECONDS - t0))
    else
        record doctor FAIL "exit $drc, --json exit $jrc, json $( [ "$json_ok" -eq 1 ] && echo valid || echo invalid)" $((SECONDS - t0))
    fi
else
    record doctor FAIL "$doctor was not built" $((SECONDS - t0))
fi

fi
# Benchmarks, and the examples that measure a goal (streams_overlap), record to $OUT/h200.jsonl.
bench_env=("CM_BENCH_COMMIT=$commit")
[ -n "${OUT:-}" ] && bench_env+=("CM_BENCH_RESULTS=$OUT/h200.jsonl")

# ------------------------------------------------------------------ examples
if stage_on examples; then
say "examples: every program in build-gpu/examples"
t0=$SECONDS
mapfile -t examples < <(find "$bdir/examples" -maxdepth 1 -type f -perm -u+x 2>/dev/null | sort)
ex_pass=0 ex_fail=0 ex_failed_names=()
for exe in "${examples[@]}"; do
    name="$(basename "$exe")"
    echo "===== $name" >>"$log_examples"
    rc=0
    (cd "$bdir/examples" && env "${bench_env[@]}" timeout "$per_run_timeout" "$exe") >>"$log_examples" 2>&1 || rc=$?
    echo "(exit $rc)" >>"$log_examples"
    if [ "$rc" -eq 0 ]; then
        ex_pass=$((ex_pass + 1)); echo "  $name: pass"
    else
        ex_fail=$((ex_fail + 1)); ex_failed_names+=("$name"); echo "  $name: FAILED (exit $rc)"
    fi
done
if [ ${#examples[@]} -eq 0 ]; then
    record examples FAIL "no examples built" $((SECONDS - t0))
elif [ "$ex_fail" -eq 0 ]; then
    record examples PASS "$ex_pass of ${#examples[@]} exited 0" $((SECONDS - t0))
else
    show_tail "$log_examples" 40
    record examples FAIL "$ex_fail of ${#examples[@]} failed: ${ex_failed_names[*]}" $((SECONDS - t0))
fi

fi
# ------------------------------------------------------------------ bench
if stage_on bench; then
say "bench: every build-gpu/bench/bench_*"
t0=$SECONDS
mapfile -t benches < <(find "$bdir/bench" -maxdepth 1 -type f -name 'bench_*' -perm -u+x 2>/dev/null | sort)
if [ -n "${CM_GPU_CHECK_BENCHES:-}" ]; then
    picked=()
    for exe in "${benches[@]}"; do
        case " $CM_GPU_CHECK_BENCHES " in *" $(basename "$exe") "*) picked+=("$exe") ;; esac
    done
    benches=("${picked[@]}")
    echo "targeted: only $CM_GPU_CHECK_BENCHES (the check cannot pass as a whole)"
    left_out "benchmarks limited to $CM_GPU_CHECK_BENCHES"
fi

# runs after a benchmark's default one: one per word, the word its argument
declare -A bench_extra_runs=([bench_gemm]="--sweep")
b_pass=0 b_fail=0 b_runs=0 b_failed_names=()
for exe in "${benches[@]}"; do
    name="$(basename "$exe")"
    for arg in "" ${bench_extra_runs[$name]:-}; do
        label="$name${arg:+ $arg}"
        echo "===== $label" >>"$log_bench"
        rc=0
        (cd "$bdir/bench" && env "${bench_env[@]}" timeout "$per_run_timeout" "$exe" ${arg:+"$arg"}) 2>&1 |
            tee -a "$log_bench" || rc=$?
        echo "(exit $rc)" >>"$log_bench"
        b_runs=$((b_runs + 1))
        if [ "$rc" -eq 0 ]; then
            b_pass=$((b_pass + 1))
        else
            b_fail=$((b_fail + 1)); b_failed_names+=("$label"); echo "  $label: FAILED (exit $rc)"
        fi
    done
done
if [ ${#benches[@]} -eq 0 ]; then
    echo "no benchmarks built" | tee -a "$log_bench"
    record bench N/A "no benchmarks built" $((SECONDS - t0))
elif [ "$b_fail" -eq 0 ]; then
    record bench PASS "$b_pass of $b_runs runs (${#benches[@]} benchmarks) passed${OUT:+; results in h200.jsonl}" $((SECONDS - t0))
else
    record bench FAIL "$b_fail of $b_runs runs failed: ${b_failed_names[*]}" $((SECONDS - t0))
fi

fi
# ------------------------------------------------------------------ soak
if stage_on soak; then
soak_secs="${CM_SOAK_SECONDS:-60}"
soak_san_secs="${CM_SOAK_SANITIZER_SECONDS:-10}"
say "soak: build-gpu/bench/soak for $soak_secs s, then $soak_san_secs s under compute-sanitizer memcheck"
t0=$SECONDS
soak="$bdir/bench/soak"
if [ ! -x "$soak" ]; then
    record soak FAIL "$soak was not built" $((SECONDS - t0))
elif ! [[ "$soak_secs" =~ ^[0-9]+$ && "$soak_san_secs" =~ ^[0-9]+$ ]]; then
    record soak FAIL "CM_SOAK_SECONDS=$soak_secs / CM_SOAK_SANITIZER_SECONDS=$soak_san_secs: whole seconds expected" 0
else
    soak_timeout=$per_run_timeout
    [ $((soak_secs + 120)) -gt "$soak_timeout" ] && soak_timeout=$((soak_secs + 120))
    echo "===== soak, $soak_secs s (timeout $soak_timeout s)" >>"$log_soak"
    src=0
    (cd "$bdir/bench" && env "${bench_env[@]}" CM_SOAK_SECONDS="$soak_secs" \
        timeout "$soak_timeout" "$soak") 2>&1 | tee -a "$log_soak" || src=$?
    echo "(exit $src)" >>"$log_soak"
    soak_summary="$(sed -nE 's/^soak: ([0-9.]+ s), [0-9]+ threads, seed ([0-9]+): ([0-9]+ operations, [0-9]+ failures?).*/\1, seed \2, \3/p' "$log_soak" | head -n 1)"

    [ -z "${sanitizer:-}" ] && sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
    msrc=0 mdetail=""
    if [ ! -x "$sanitizer" ]; then
        msrc=1 mdetail="compute-sanitizer not found"
    else
        san_timeout=$per_run_timeout
        [ $((soak_san_secs + 240)) -gt "$san_timeout" ] && san_timeout=$((soak_san_secs + 240))
        echo "===== soak under memcheck, $soak_san_secs s (timeout $san_timeout s)" >>"$log_soak"
        out="$(mktemp)"
        (cd "$bdir/bench" && env -u CM_BENCH_RESULTS CM_SOAK_SECONDS="$soak_san_secs" \
            CM_TEST_UNDER_SANITIZER=1 timeout "$san_timeout" "$sanitizer" --tool memcheck \
            --error-exitcode 1 --report-api-errors no "$soak") >"$out" 2>&1 || msrc=$?
        cat "$out" >>"$log_soak"
        echo "(exit $msrc)" >>"$log_soak"
        if [ "$msrc" -eq 0 ]; then
            mdetail="memcheck clean"
        elif grep -q 'Device not supported' "$out"; then
            msrc=-1 mdetail="compute-sanitizer refused the device"
        else
            mdetail="memcheck run FAILED (exit $msrc)"
            grep -E '=========|FAILED' "$out" | head -n 30
        fi
        rm -f "$out"
    fi
    echo "  soak under memcheck: $mdetail"
    detail="plain: exit $src${soak_summary:+ ($soak_summary)}; $mdetail"
    if [ "$src" -ne 0 ] || [ "$msrc" -gt 0 ]; then
        show_tail "$log_soak" 40
        record soak FAIL "$detail" $((SECONDS - t0))
    elif [ "$msrc" -lt 0 ]; then
        record soak N/A "$detail" $((SECONDS - t0))
    else
        record soak PASS "$detail" $((SECONDS - t0))
    fi
fi

fi
# ------------------------------------------------------------------ summary table (last)
echo
echo "==================== gpu-check summary ===================="
echo "commit $commit | $gpu_line | archs ${CUDAMODEL_CUDA_ARCHITECTURES:-90}"
printf '%-10s %-5s %6s  %s\n' stage result secs detail
for s in "${stages[@]}"; do
    printf '%-10s %-5s %6s  %s\n' "$s" "${stage_result[$s]:-FAIL}" "${stage_seconds[$s]:-0}" \
        "${stage_detail[$s]:-stage did not run}"
done
if [ "$overall" -eq 0 ]; then
    echo "gpu-check: PASS (logs in $logdir)"
elif [ "$failed" -eq 0 ] && [ -n "$targeted" ]; then
    # no stage failed, but a targeted run is not the whole check: exit status 1 all the same
    echo "gpu-check: INCOMPLETE, no stage failed but the run was targeted ($targeted) (logs in $logdir)"
else
    echo "gpu-check: FAIL (logs in $logdir)"
fi
exit "$overall"
