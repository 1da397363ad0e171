# shellcheck shell=bash
# Sourced by the device-call experiment scripts of bench/experiments (exp_s27_*.sh): the
# steps they share. On the device machine, from the script's own directory:
#   . "$(dirname "${BASH_SOURCE[0]}")/exp_lib.sh"
#   exp_start        $R = $OUT, cd to the repository root, the clock started
#   exp_build        scripts/gpu-check.sh's build (build-gpu/, its CMocka unpacked: a bare
#                    cmake --build there lacks it) and the test binaries' loader path
#   exp_say WORDS    WORDS and the seconds since exp_start
#   exp_shapes FILE SHAPES [VAR=VALUE ...]
#                    bench_gemm's FP32 sweep over SHAPES ("MxNxK ...") into $R/FILE, with the
#                    environment words given
#   exp_fp32_sweeps N
#                    bench_gemm's whole FP32 sweep N times ($R/sweep1.txt ...)
#   exp_gemm_tests FILTER ...
#                    each test_gpu_gemm FILTER plain through scripts/gpu-test-one.sh
#                    ($R/FILTER.txt: a line a run, the output of a failed one)
#   exp_gemm_test_memcheck FILTER NAME
#                    test_gpu_gemm's FILTER plain ($R/NAME.txt, its whole output) and under
#                    memcheck ($R/NAME-memcheck.txt, as exp_gemm_tests writes)
#   exp_config_sweeps FILE SHAPES CONFIG ...
#                    scripts/gemm-sweep-configs.sh over SHAPES ("MxNxK ...": the default
#                    dispatch, then each CONFIG forced) into $R/FILE; the precisions are
#                    CM_BENCH_SWEEP_ONLY's
#   exp_apply PATCH  git apply PATCH, its files noted in build-gpu/.cm-patched: the device
#                    keeps build-gpu/ between calls but copies the tree afresh with the files'
#                    old times, so a later call's build would keep the patched objects;
#                    scripts/gpu-check.sh touches the noted files before it builds
#   exp_patch_build PATCH
#                    exp_apply PATCH, then build-gpu/ rebuilt (a failed build's last lines on
#                    stdout)
#   exp_sweep1 LABEL SHAPES PRECISIONS SECS [VAR=VALUE ...]
#                    bench_gemm --sweep over SHAPES ("MxNxK ...") in PRECISIONS
#                    (CM_BENCH_SWEEP_ONLY) once, after a line "=== config LABEL", with the
#                    environment words given, limited to SECS; on stdout, no rows to the results
#                    file
#   exp_variant_sweeps VAR "VALUES" SHAPES PRECISIONS SECS
#                    exp_sweep1 for each VALUE of the environment variable VAR, labelled
#                    vVALUE#1 then (a second round) vVALUE#2; on stdout
#   exp_sweeps2 LABEL SHAPES PRECISIONS SECS
#                    exp_sweep1 twice, labelled LABEL#1 and LABEL#2
#   exp_sweeps_ab FILE PATCH LABEL SHAPES PRECISIONS SECS
#                    exp_sweeps2 head at the checkout into $R/FILE, then PATCH applied and
#                    built (exp_patch_build), then exp_sweeps2 LABEL appended; progress lines
#                    to $R/summary.txt. Not in a pipeline: a failed apply ends the script
#   exp_test_runs TOOL SECS FILTER ...
#                    each test_gpu_gemm FILTER through scripts/gpu-test-one.sh under TOOL (none:
#                    plain; SECS a run), on stdout after "=== FILTER TOOL": its exit status and
#                    the last lines of its output
#   exp_ab_patch PATCH SHAPES
#                    SHAPES twice at the checkout ($R/head1.txt, head2.txt), then PATCH applied
#                    and built, twice again ($R/patch1.txt, patch2.txt); the patch stays applied
#                    (exp_unpatch PATCH takes it out)
#   exp_step WORDS   exp_say WORDS, also appended to $R/summary.txt
#   exp_patched PATCH
#                    exp_patch_build PATCH (its output into $R/summary.txt), then exp_step
#                    "patched build done"
#   exp_unpatched PATCH
#                    exp_unpatch_build PATCH (its output into $R/summary.txt), then exp_step
#                    "done"
#   exp_unpatch_build PATCH
#                    exp_unpatch PATCH, then build-gpu/ rebuilt (a failed build's last lines on
#                    stdout): the checkout's objects again for whatever runs after
exp_start() {
    R="${OUT:?OUT is not set (the device tool sets it)}"
    cd "$(dirname "${BASH_SOURCE[1]}")/../.." || exit 2
    t0=$(date +%s)
}
exp_say() { echo "$* $(($(date +%s) - t0)) s"; }
exp_build() {
    (CM_GPU_CHECK_ONLY=none CM_GPU_CHECK_TESTS='^test_gpu_core$' OUT=/tmp/gc \
        bash scripts/gpu-check.sh) >/tmp/build.txt 2>&1
    grep "^build " /tmp/build.txt
    local m="$PWD/.deps/root/usr/lib/x86_64-linux-gnu"
    export LD_LIBRARY_PATH="$m${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    exp_say "build done"
}
exp_shapes() {
    local file="$1" shapes="$2"
    shift 2
    env "$@" CM_BENCH_SWEEP_ONLY=fp32 CM_BENCH_SWEEP_SHAPES="$shapes" timeout 120 \
        build-gpu/bench/bench_gemm --sweep >"$R/$file" 2>&1
}
exp_fp32_sweeps() {
    local i
    for ((i = 1; i <= $1; ++i)); do
        CM_BENCH_SWEEP_ONLY=fp32 build-gpu/bench/bench_gemm --sweep >"$R/sweep$i.txt" 2>&1
        exp_say "sweep $i done"
    done
}
exp_gemm_tests() {
    local f
    for f in "$@"; do
        OUT=/tmp bash scripts/gpu-test-one.sh -f "$f" test_gpu_gemm
        exp_say "$f rc $?"
        cp /tmp/one-test_gpu_gemm-none.txt "$R/$f.txt"
    done
}
exp_gemm_test_memcheck() {
    local filter="$1" name="$2"
    CUDAMODEL_REQUIRE_GPU=1 CM_TEST_TIER=gpu CM_TEST_FILTER="$filter" timeout 300 \
        build-gpu/tests/test_gpu_gemm >"$R/$name.txt" 2>&1
    exp_say "$name plain rc $?"
    OUT=/tmp bash scripts/gpu-test-one.sh -t memcheck -s 300 -f "$filter" test_gpu_gemm
    exp_say "$name memcheck rc $?"
    cp /tmp/one-test_gpu_gemm-memcheck.txt "$R/$name-memcheck.txt"
}
exp_config_sweeps() {
    local file="$1" shapes="$2"
    shift 2
    CM_BENCH_SWEEP_SHAPES="$shapes" OUT=/tmp bash scripts/gemm-sweep-configs.sh "$@" >/dev/null
    cp /tmp/sweeps.txt "$R/$file"
    exp_say "$file done"
}
# exp_config_sweeps twice, into configs1.txt and configs2.txt (rounds to compare the spread)
exp_config_rounds() {
    local shapes="$1" i
    shift
    for i in 1 2; do exp_config_sweeps "configs$i.txt" "$shapes" "$@"; done
}
exp_note_patched() {
    mkdir -p build-gpu
    grep '^+++ b/' "$1" | sed 's|^+++ b/||' >>build-gpu/.cm-patched
}
exp_apply() {
    exp_note_patched "$1"
    git apply "$1" || { echo "patch $1 failed"; exit 1; }
}
exp_patch_build() {
    exp_apply "$1"
    cmake --build build-gpu --parallel 16 >/tmp/patch-build.txt 2>&1 ||
        { echo "patched build failed"; tail -30 /tmp/patch-build.txt; }
}
exp_sweep1() {
    local label="$1" shapes="$2" only="$3" secs="$4"
    shift 4
    echo "=== config $label"
    env "$@" CM_BENCH_SWEEP_ONLY="$only" CM_BENCH_SWEEP_SHAPES="$shapes" timeout "$secs" \
        env -u CM_BENCH_RESULTS build-gpu/bench/bench_gemm --sweep
}
# exp_variant_sweeps VAR "VALUES" SHAPES PRECISIONS SECS: exp_sweep1 once for each VALUE of the
# environment variable VAR (labelled vVALUE#ROUND), in two rounds, on stdout
exp_variant_sweeps() {
    local var="$1" values="$2" shapes="$3" only="$4" secs="$5" round v
    for round in 1 2; do
        for v in $values; do exp_sweep1 "v$v#$round" "$shapes" "$only" "$secs" "$var=$v"; done
    done
}
exp_sweeps2() {
    local i
    for i in 1 2; do exp_sweep1 "$1#$i" "$2" "$3" "$4"; done
}
exp_sweeps_ab() {
    local file="$1" patch="$2" label="$3" shapes="$4" only="$5" secs="$6"
    exp_sweeps2 head "$shapes" "$only" "$secs" >"$R/$file" 2>&1
    exp_say "head done" | tee -a "$R/summary.txt"
    exp_patch_build "$patch" >>"$R/summary.txt"
    exp_say "patched build done" | tee -a "$R/summary.txt"
    exp_sweeps2 "$label" "$shapes" "$only" "$secs" >>"$R/$file" 2>&1
    exp_say "$label done" | tee -a "$R/summary.txt"
}
# exp_test_exe TOOL SECS EXE [FILTER]: one GPU test executable (plain for TOOL none, else under
# that compute-sanitizer tool), only the cmocka tests FILTER names if given: its exit status and
# the last lines of gpu-test-one.sh's report
exp_test_exe() {
    local tool="$1" secs="$2" exe="$3" f="${4:-}"
    echo "=== $exe ${f:-all} $tool"
    OUT=/tmp bash scripts/gpu-test-one.sh -t "$tool" -s "$secs" ${f:+-f "$f"} "$exe"
    echo "rc $?"
    tail -5 "/tmp/one-$exe-$tool.txt"
}
# exp_test_runs TOOL SECS FILTER...: test_gpu_gemm once per filter
exp_test_runs() {
    local tool="$1" secs="$2" f
    shift 2
    for f in "$@"; do exp_test_exe "$tool" "$secs" test_gpu_gemm "$f"; done
}
exp_ab_patch() {
    local patch="$1" shapes="$2" i
    for i in 1 2; do exp_shapes "head$i.txt" "$shapes"; done
    exp_say "head shapes done"
    exp_patch_build "$patch"
    exp_say "patched build done"
    for i in 1 2; do exp_shapes "patch$i.txt" "$shapes"; done
    exp_say "patch shapes done"
}
exp_unpatch() {
    exp_note_patched "$1"
    git apply -R "$1"
}
exp_unpatch_build() {
    exp_unpatch "$1"
    cmake --build build-gpu --parallel 16 >/tmp/unpatch-build.txt 2>&1 ||
        { echo "unpatched build failed"; tail -20 /tmp/unpatch-build.txt; }
}
exp_step() { exp_say "$@" | tee -a "$R/summary.txt"; }
exp_patched() {
    exp_patch_build "$1" >>"$R/summary.txt"
    exp_step "patched build done"
}
# exp_patch_variants PATCH VAR "VALUES" SHAPES PRECISIONS SECS: the tree's build, then PATCH's,
# then exp_variant_sweeps of VAR over VALUES into $R/sweeps.txt (the step lines in summary.txt)
exp_patch_variants() {
    local patch="$1"
    shift
    exp_build | tee -a "$R/summary.txt"
    exp_patched "$patch"
    exp_variant_sweeps "$@" >"$R/sweeps.txt" 2>&1
    exp_step "sweeps done"
}
exp_unpatched() {
    exp_unpatch_build "$1" >>"$R/summary.txt"
    exp_step "done"
}
