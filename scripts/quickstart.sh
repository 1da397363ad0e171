#!/usr/bin/env bash
# Quick start: install what is missing, build what the first run needs (build/, Release: the
# library, cudamodel-doctor and the vector-add example, for one CUDA architecture), then run
# the environment check (cudamodel-doctor) and the vector-add example. About 2 minutes of
# building on 2 cores; `cmake --build build` builds the rest (tests, other examples, benchmarks).
#
#   scripts/quickstart.sh
#
# Exit status:
#   non-zero  a dependency is missing (not root: the sudo command to run is printed) or the
#             build failed;
#   0         on a machine with no usable GPU (the doctor exits 2: no driver, or 4: no device)
#             once everything is built: the doctor's diagnosis is the result;
#   otherwise the vector-add example's status (or the doctor's, when the doctor found a
#             problem and the example still succeeded).
#
# CUDA architectures: those of the GPUs that nvidia-smi reports, or 75 (sm_75) when there is
# none, or CUDAMODEL_CUDA_ARCHITECTURES ("default": the project's full list, as a plain cmake
# configure builds it, about 17 minutes on 2 cores); cm_pick_cuda_architectures in
# scripts/deps.sh says why each. The line "CUDA architectures: ..." of the output names them.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/deps.sh
. scripts/deps.sh

say() { printf '\n==> %s\n' "$*"; }

say "checking build dependencies"
cm_deps_ensure || exit 1

cm_pick_cuda_architectures
jobs="$(nproc 2>/dev/null || echo 2)"
targets=(cudamodel-doctor vector_add)

say "CUDA architectures: ${cm_arch_list[*]}"
echo "why: $cm_arch_why"
echo "(every architecture of the project's list: CUDAMODEL_CUDA_ARCHITECTURES=default, about 17 minutes on 2 cores)"

say "configuring build/ (Release)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${cm_arch_args[@]}"
say "building ${targets[*]} (and the library) with $jobs jobs"
cmake --build build --parallel "$jobs" --target "${targets[@]}"

say "build/tools/cudamodel-doctor"
doctor_rc=0
build/tools/cudamodel-doctor || doctor_rc=$?
echo "(cudamodel-doctor exited $doctor_rc)"

say "build/examples/vector_add"
example_rc=0
build/examples/vector_add || example_rc=$?
echo "(vector_add exited $example_rc)"

echo
echo "(quick start: ${SECONDS}s)"
case "$doctor_rc" in
    2|4)
        echo "this machine has no usable GPU: the diagnosis above is the result"
        echo "(build/ holds the library, cudamodel-doctor and vector_add for ${cm_arch_list[*]}; \`cmake --build build\`"
        echo " builds the rest of it, scripts/test.sh builds and runs the tests)"
        exit 0
        ;;
    0)
        [ "$example_rc" -eq 0 ] && echo "quick start: OK (doctor and vector_add passed)"
        exit "$example_rc"
        ;;
    *)
        echo "cudamodel-doctor found a problem (exit $doctor_rc): its report above says what and how to fix it"
        if [ "$example_rc" -ne 0 ]; then exit "$example_rc"; fi
        exit "$doctor_rc"
        ;;
esac
