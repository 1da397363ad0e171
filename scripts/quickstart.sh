#!/usr/bin/env bash
# Quick start: install what is missing, build libcudamodel (build/, Release), then run the
# environment check (cudamodel-doctor) and the vector-add example.
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
# Environment: CUDAMODEL_CUDA_ARCHITECTURES narrows the CUDA architectures built (CMake syntax,
# e.g. "90" for an H200); unset, the project's default list is built.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/deps.sh
. scripts/deps.sh

say() { printf '\n==> %s\n' "$*"; }

say "checking build dependencies"
cm_deps_ensure || exit 1

# Unset, the project's default list applies, also in a build/ configured earlier with another.
arch_args=(-UCMAKE_CUDA_ARCHITECTURES)
if [ -n "${CUDAMODEL_CUDA_ARCHITECTURES:-}" ]; then
    arch_args=("-DCMAKE_CUDA_ARCHITECTURES=${CUDAMODEL_CUDA_ARCHITECTURES}")
fi
jobs="$(nproc 2>/dev/null || echo 2)"

say "configuring build/ (Release)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${arch_args[@]}"
say "building with $jobs jobs"
cmake --build build --parallel "$jobs"

say "build/tools/cudamodel-doctor"
doctor_rc=0
build/tools/cudamodel-doctor || doctor_rc=$?
echo "(cudamodel-doctor exited $doctor_rc)"

say "build/examples/vector_add"
example_rc=0
build/examples/vector_add || example_rc=$?
echo "(vector_add exited $example_rc)"

echo
case "$doctor_rc" in
    2|4)
        echo "this machine has no usable GPU: the diagnosis above is the result"
        echo "(the library, tools, examples and tests are built in build/; run scripts/test.sh for the tests)"
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
