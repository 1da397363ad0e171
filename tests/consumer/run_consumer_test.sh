#!/usr/bin/env bash
# The packaging test (ctest label "install", registered by tests/install.cmake).
#
# Builds libcudamodel twice more from the source tree, shared and static, installs each with
# `cmake --install <build> --prefix <dir>` (the README's command) and checks, for each install,
# what a user meets:
#   - the installed headers: each one compiles on its own as C11 and as C++ with
#     -Wall -Wextra -Wpedantic -Werror, and none except interop.h includes a CUDA header;
#   - pkg-config: `cc consumer.c $(pkg-config --cflags --libs cudamodel)` builds and runs
#     tests/consumer/consumer.c, and the .pc file points into the prefix it was installed to;
#   - CMake: tests/consumer/CMakeLists.txt finds the package with find_package(cudamodel) and
#     links cudamodel::cudamodel; the program builds and runs;
#   - the shared library: SONAME libcudamodel.so.0, exports cm_status_name, exports no cm__
#     (internal) symbol; the static install has libcudamodel.a and no .so;
#   - the installed cudamodel-doctor runs and exits with one of its documented codes.
# Works without a GPU (consumer.c accepts "no driver" and "no device").
#
# Usage: run_consumer_test.sh --source DIR --work DIR [--cmake PATH] [--cuda-compiler PATH]
#                             [--c-compiler PATH] [--generator NAME] [--kinds "shared static"]
# Exit status: 0 when every check passed, 1 otherwise. The work directory is emptied first and
# kept afterwards for inspection.
set -uo pipefail

src="" work="" cmake_bin="cmake" cuda_compiler="" c_compiler="" generator="" kinds="shared static"
while [ $# -gt 0 ]; do
    case "$1" in
        --source) src="$2"; shift 2 ;;
        --work) work="$2"; shift 2 ;;
        --cmake) cmake_bin="$2"; shift 2 ;;
        --cuda-compiler) cuda_compiler="$2"; shift 2 ;;
        --c-compiler) c_compiler="$2"; shift 2 ;;
        --generator) generator="$2"; shift 2 ;;
        --kinds) kinds="$2"; shift 2 ;;
        *) echo "usage: $0 --source DIR --work DIR [--cmake PATH] [--cuda-compiler PATH]" \
                "[--c-compiler PATH] [--generator NAME] [--kinds \"shared static\"]" >&2
           exit 2 ;;
    esac
done
if [ -z "$src" ] || [ -z "$work" ] || [ ! -f "$src/CMakeLists.txt" ]; then
    echo "install test: --source must name the libcudamodel source tree and --work a directory" >&2
    exit 2
fi
src="$(cd "$src" && pwd)"
case "$work" in /*) ;; *) work="$(pwd)/$work" ;; esac
jobs="$(nproc 2>/dev/null || echo 2)"

failures=0
checks=0
step() { printf '\n--- %s\n' "$*"; }
pass() { checks=$((checks + 1)); echo "ok: $*"; }
fail() { checks=$((checks + 1)); failures=$((failures + 1)); echo "FAILED: $*"; }

# Nothing from the calling environment may point the consumers at another copy of the library.
unset PKG_CONFIG_PATH PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR CMAKE_PREFIX_PATH cudamodel_DIR \
      CUDAARCHS CMAKE_BUILD_TYPE 2>/dev/null || true

rm -rf "$work"
mkdir -p "$work" || { echo "install test: cannot create $work" >&2; exit 1; }

gen_args=()
[ -n "$generator" ] && gen_args+=(-G "$generator")
compiler_args=()
[ -n "$cuda_compiler" ] && compiler_args+=("-DCMAKE_CUDA_COMPILER=$cuda_compiler")
[ -n "$c_compiler" ] && compiler_args+=("-DCMAKE_C_COMPILER=$c_compiler")

# The directory holding lib*/pkgconfig/cudamodel.pc under a prefix (lib, lib64 or lib/<triplet>).
find_libdir() {
    local prefix="$1" pc
    pc="$(find "$prefix" -path '*/pkgconfig/cudamodel.pc' -print 2>/dev/null | head -n 1)"
    [ -n "$pc" ] || return 1
    dirname "$(dirname "$pc")"
}

check_headers() {
    local prefix="$1" incdir="$1/include/cudamodel" h bad cflags
    [ -d "$incdir" ] || { fail "no $incdir"; return; }
    [ -f "$incdir/version.h" ] && pass "generated version.h is installed" ||
        fail "version.h is not installed in $incdir"

    # No public header except interop.h may include a CUDA header (C users need no CUDA -I).
    local cuda_re='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](cuda[._/A-Z]|cu(Complex|blas|fft|rand|sparse|solver|dnn)|nvrtc|nvtx|nvml|driver_types|vector_types|host_defines|builtin_types|crt/)'
    bad="$(grep -lE "$cuda_re" "$incdir"/*.h | grep -v '/interop\.h$' || true)"
    if [ -z "$bad" ]; then
        pass "no public header except interop.h includes a CUDA header"
    else
        fail "public headers that include a CUDA header: $bad"
    fi
    # The same pattern must see interop.h's include, or the check above proves nothing.
    if grep -qE "$cuda_re" "$incdir/interop.h"; then
        pass "interop.h includes the CUDA runtime header (the pattern works)"
    else
        fail "interop.h does not match the CUDA include pattern: the header check is broken"
    fi

    # Each header compiles alone, as C11 and as C++, warning-free. CUDA's own headers (for
    # interop.h) are system headers here: their warnings are not ours.
    cflags="-isystem $(pkg-config --variable=cuda_includedir cudamodel) $(pkg-config --cflags cudamodel)"
    for h in "$incdir"/*.h; do
        h="$(basename "$h")"
        # shellcheck disable=SC2086
        if printf '#include <cudamodel/%s>\nint cm_header_check_%s;\n' "$h" "${h%.h}" |
            cc -std=c11 -Wall -Wextra -Wpedantic -Werror -fsyntax-only $cflags -x c - &&
           printf '#include <cudamodel/%s>\nint cm_header_check;\n' "$h" |
            c++ -Wall -Wextra -Wpedantic -Werror -fsyntax-only $cflags -x c++ -; then
            :
        else
            fail "installed header cudamodel/$h does not compile alone as C11 and C++"
            return
        fi
    done
    pass "every installed header compiles alone as C11 and as C++ (-Wall -Wextra -Wpedantic -Werror)"
}

run_one_kind() {
    local kind="$1" shared bdir prefix libdir run_env=()
    case "$kind" in
        shared) shared=ON ;;
        static) shared=OFF ;;
        *) fail "unknown kind $kind"; return ;;
    esac
    bdir="$work/build-$kind"
    prefix="$work/prefix-$kind"

    step "[$kind] configure and build (BUILD_SHARED_LIBS=$shared, sm_75 only, no tests or examples)"
    if ! "$cmake_bin" -S "$src" -B "$bdir" "${gen_args[@]}" "${compiler_args[@]}" \
            -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS="$shared" \
            -DCMAKE_CUDA_ARCHITECTURES=75 -DCUDAMODEL_BUILD_TESTS=OFF \
            -DCUDAMODEL_BUILD_EXAMPLES=OFF; then
        fail "[$kind] configure"; return
    fi
    if ! "$cmake_bin" --build "$bdir" --parallel "$jobs"; then
        fail "[$kind] build"; return
    fi
    pass "[$kind] configured and built"

    step "[$kind] cmake --install $bdir --prefix $prefix"
    if ! "$cmake_bin" --install "$bdir" --prefix "$prefix"; then
        fail "[$kind] install"; return
    fi
    if ! libdir="$(find_libdir "$prefix")"; then
        fail "[$kind] no pkgconfig/cudamodel.pc under $prefix"; return
    fi
    pass "[$kind] installed; libdir $libdir"
    [ "$kind" = shared ] && run_env=("LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")

    # ------------------------------------------------------------ the library file itself
    step "[$kind] the installed library"
    if [ "$kind" = shared ]; then
        local so="$libdir/libcudamodel.so" soname exports
        if [ ! -e "$so" ] || [ ! -e "$libdir/libcudamodel.so.0" ]; then
            fail "[shared] $so or its libcudamodel.so.0 link is missing"
        else
            soname="$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')"
            [ "$soname" = "libcudamodel.so.0" ] && pass "[shared] SONAME is $soname" ||
                fail "[shared] SONAME is '$soname', want libcudamodel.so.0"
            exports="$(nm -D --defined-only "$so" | awk '{print $NF}')"
            grep -qx 'cm_status_name' <<<"$exports" && pass "[shared] exports cm_status_name" ||
                fail "[shared] does not export cm_status_name"
            if grep -q '^cm__' <<<"$exports"; then
                fail "[shared] exports internal symbols: $(grep '^cm__' <<<"$exports" | tr '\n' ' ')"
            else
                pass "[shared] exports no cm__ symbol"
            fi
            local others
            others="$(grep -vE '^(cm_|_init$|_fini$|_edata$|_end$|__bss_start$)' <<<"$exports" | head -n 20 | tr '\n' ' ')"
            [ -n "$others" ] && echo "note: [shared] exports outside the cm_ prefix: $others"
            echo "[shared] $(grep -c '^cm_' <<<"$exports") cm_ symbols exported"
        fi
        if ls "$libdir"/libcudamodel.a >/dev/null 2>&1; then
            fail "[shared] a static libcudamodel.a was installed too"
        fi
    else
        [ -f "$libdir/libcudamodel.a" ] && pass "[static] libcudamodel.a is installed" ||
            fail "[static] $libdir/libcudamodel.a is missing"
        if ls "$libdir"/libcudamodel.so* >/dev/null 2>&1; then
            fail "[static] a shared libcudamodel.so was installed too"
        fi
    fi

    # ------------------------------------------------------------ headers
    step "[$kind] installed headers"
    export PKG_CONFIG_PATH="$libdir/pkgconfig"
    check_headers "$prefix"

    # ------------------------------------------------------------ pkg-config consumer
    step "[$kind] pkg-config consumer: cc consumer.c \$(pkg-config --cflags --libs cudamodel)"
    local pcdir="$work/consumer-pc-$kind" pc_prefix
    mkdir -p "$pcdir"
    cp "$src/tests/consumer/consumer.c" "$pcdir/"
    echo "PKG_CONFIG_PATH=$PKG_CONFIG_PATH"
    echo "pkg-config --modversion: $(pkg-config --modversion cudamodel 2>&1)"
    echo "pkg-config --cflags --libs: $(pkg-config --cflags --libs cudamodel 2>&1)"
    pc_prefix="$(pkg-config --variable=prefix cudamodel 2>/dev/null || true)"
    if [ -n "$pc_prefix" ] && [ "$(cd "$pc_prefix" 2>/dev/null && pwd -P)" = "$(cd "$prefix" && pwd -P)" ]; then
        pass "[$kind] cudamodel.pc points into the install prefix"
    else
        fail "[$kind] cudamodel.pc has prefix '$pc_prefix', but it was installed to $prefix (is the .pc relocatable?)"
    fi
    # shellcheck disable=SC2046
    if (cd "$pcdir" && cc consumer.c $(pkg-config --cflags --libs cudamodel)); then
        pass "[$kind] pkg-config consumer compiled and linked"
        if [ "$kind" = static ] && readelf -d "$pcdir/a.out" | grep -q 'NEEDED.*libcudamodel'; then
            fail "[static] the pkg-config consumer depends on a shared libcudamodel"
        fi
        if (cd "$pcdir" && env "${run_env[@]}" ./a.out); then
            pass "[$kind] pkg-config consumer ran"
        else
            fail "[$kind] pkg-config consumer exited non-zero"
        fi
    else
        fail "[$kind] cc consumer.c \$(pkg-config --cflags --libs cudamodel) failed"
    fi
    unset PKG_CONFIG_PATH

    # ------------------------------------------------------------ CMake consumer
    step "[$kind] CMake consumer: find_package(cudamodel) + cudamodel::cudamodel"
    local cmdir="$work/consumer-cmake-$kind" found_dir
    if "$cmake_bin" -S "$src/tests/consumer" -B "$cmdir" "${gen_args[@]}" \
            ${c_compiler:+"-DCMAKE_C_COMPILER=$c_compiler"} \
            -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release &&
       "$cmake_bin" --build "$cmdir" --parallel "$jobs"; then
        pass "[$kind] CMake consumer configured and built"
        found_dir="$(sed -n 's/^cudamodel_DIR:[A-Z]*=//p' "$cmdir/CMakeCache.txt")"
        case "$(cd "$found_dir" 2>/dev/null && pwd -P)" in
            "$(cd "$prefix" && pwd -P)"/*) pass "[$kind] find_package used $found_dir" ;;
            *) fail "[$kind] find_package found cudamodel in '$found_dir', not under $prefix" ;;
        esac
        # The build tree's RPATH points at the imported library: no LD_LIBRARY_PATH needed.
        if "$cmdir/consumer"; then
            pass "[$kind] CMake consumer ran"
        else
            fail "[$kind] CMake consumer exited non-zero"
        fi
    else
        fail "[$kind] CMake consumer did not configure or build"
    fi

    # ------------------------------------------------------------ the installed doctor
    step "[$kind] installed cudamodel-doctor"
    if [ -x "$prefix/bin/cudamodel-doctor" ]; then
        local drc=0
        env "${run_env[@]}" "$prefix/bin/cudamodel-doctor" || drc=$?
        case "$drc" in
            0|2|3|4|5|6) pass "[$kind] installed cudamodel-doctor ran (exit $drc, a documented code)" ;;
            *) fail "[$kind] installed cudamodel-doctor exited $drc (not a documented code)" ;;
        esac
    else
        fail "[$kind] $prefix/bin/cudamodel-doctor is not installed"
    fi
}

for kind in $kinds; do
    run_one_kind "$kind"
done

echo
if [ "$failures" -eq 0 ]; then
    echo "install test: all $checks checks passed ($kinds)"
    exit 0
fi
echo "install test: $failures of $checks checks FAILED"
exit 1
