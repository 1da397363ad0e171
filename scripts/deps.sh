# shellcheck shell=bash
# Build dependencies of libcudamodel and the CUDA architectures to build, shared by
# scripts/quickstart.sh and scripts/test.sh. Source it, then call:
#
#   cm_deps_ensure [--optional PKG:COMMAND ...]
#   cm_pick_cuda_architectures        (after cm_deps_ensure, which puts nvcc on PATH)
#
# It checks for what the build needs besides the CUDA toolkit (cmake, make, a C and C++
# compiler, pkg-config, CMocka) and, when something is missing:
#   - as root: runs `apt-get update` and `apt-get install -y` for the missing Debian packages;
#   - otherwise: prints the exact sudo command to run and returns 1 (the caller exits non-zero).
# An --optional PKG:COMMAND pair (e.g. valgrind:valgrind) is installed too when running as root,
# and only reported when not (the caller decides what to do without it).
# The CUDA toolkit itself is not installed from here: the script only puts
# /usr/local/cuda/bin on PATH when nvcc is there but not on PATH, and says so when it is absent.

cm_deps_log() { printf '[deps] %s\n' "$*"; }

# Whether the CMocka development files are visible to pkg-config (what tests/CMakeLists.txt uses).
cm_deps_have_cmocka() {
    command -v pkg-config >/dev/null 2>&1 && pkg-config --exists cmocka 2>/dev/null
}

cm_deps_ensure() {
    local missing=() optional_missing=() arg pkg cmd

    # nvcc: the CUDA toolkit must be installed already (NVIDIA's packages, not Debian's).
    if ! command -v nvcc >/dev/null 2>&1; then
        if [ -x /usr/local/cuda/bin/nvcc ]; then
            export PATH="$PATH:/usr/local/cuda/bin"
            cm_deps_log "nvcc is not on PATH; using /usr/local/cuda/bin/nvcc"
        else
            cm_deps_log "error: nvcc not found (PATH or /usr/local/cuda/bin)."
            cm_deps_log "Install the CUDA toolkit (13.0 or newer) and put its bin/ on PATH, then run this again."
            return 1
        fi
    fi

    command -v cmake >/dev/null 2>&1 || missing+=(cmake)
    command -v make >/dev/null 2>&1 || missing+=(make)
    command -v cc >/dev/null 2>&1 || missing+=(gcc)
    command -v c++ >/dev/null 2>&1 || missing+=(g++)
    command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
    cm_deps_have_cmocka || missing+=(libcmocka-dev)

    for arg in "$@"; do
        case "$arg" in
            --optional) continue ;;
            *:*) pkg="${arg%%:*}"; cmd="${arg#*:}"
                 command -v "$cmd" >/dev/null 2>&1 || optional_missing+=("$pkg") ;;
            *) cm_deps_log "internal error: bad argument '$arg' to cm_deps_ensure"; return 1 ;;
        esac
    done

    if [ ${#missing[@]} -eq 0 ] && [ ${#optional_missing[@]} -eq 0 ]; then
        cm_deps_log "all build dependencies are installed"
        return 0
    fi

    if [ "$(id -u)" -eq 0 ]; then
        local all=("${missing[@]}" "${optional_missing[@]}")
        cm_deps_log "installing: ${all[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update || { cm_deps_log "error: apt-get update failed"; return 1; }
        apt-get install -y --no-install-recommends "${all[@]}" ||
            { cm_deps_log "error: apt-get install failed"; return 1; }
        if ! cm_deps_have_cmocka; then
            cm_deps_log "error: pkg-config still does not find cmocka after installing libcmocka-dev"
            return 1
        fi
        return 0
    fi

    if [ ${#missing[@]} -eq 0 ]; then
        cm_deps_log "optional, not installed: ${optional_missing[*]} (sudo apt-get install -y ${optional_missing[*]})"
        return 0
    fi
    cm_deps_log "missing: ${missing[*]}"
    cm_deps_log "run this, then run the script again:"
    printf '\n    sudo apt-get update && sudo apt-get install -y %s\n\n' "${missing[*]}"
    return 1
}

# The CUDA architecture of a build when no GPU says otherwise (see cm_pick_cuda_architectures).
CM_FALLBACK_CUDA_ARCH=75

# cm_pick_cuda_architectures: the CUDA architectures that a build for this machine needs, so
# that it takes minutes: the project's default list (every architecture from sm_75 to sm_120,
# what a plain `cmake -S . -B DIR` builds) takes about 17 minutes on 2 cores for the library
# alone and about 25 for the whole tree, nearly all of it device code, one compiler pass per
# architecture. In order:
#   - CUDAMODEL_CUDA_ARCHITECTURES set: that list (CMake syntax, e.g. "90"), or "default" for
#     the project's default list;
#   - the GPUs that nvidia-smi reports: each distinct one's own architecture (compute
#     capability 9.0 -> "90"), so tests and examples run native code there;
#   - no GPU: CM_FALLBACK_CUDA_ARCH, "75" (sm_75 code and PTX). Nothing here runs device code,
#     so one architecture is enough; sm_75 (Turing) is the oldest the library supports and the
#     one the sanitizer build of scripts/test.sh and the packaging test build. It is added as
#     well for a GPU that this nvcc cannot build for (the doctor then says what that GPU needs).
# Sets cm_arch_args (cmake arguments), cm_arch_list (the architectures, for messages) and
# cm_arch_why (why those), which the sourcing script reads.
# shellcheck disable=SC2034
cm_pick_cuda_architectures() {
    local line name cap arch buildable="" smi_lines="" smi_state found="" unbuildable=()
    cm_arch_list=() cm_arch_args=() cm_arch_why=""
    if [ "${CUDAMODEL_CUDA_ARCHITECTURES:-}" = default ]; then
        # Unset in the cache, CMakeLists.txt puts the project's default list back.
        cm_arch_args=(-UCMAKE_CUDA_ARCHITECTURES)
        cm_arch_list=("the project's default list")
        cm_arch_why="CUDAMODEL_CUDA_ARCHITECTURES=default"
        return 0
    fi
    if [ -n "${CUDAMODEL_CUDA_ARCHITECTURES:-}" ]; then
        cm_arch_list=("$CUDAMODEL_CUDA_ARCHITECTURES")
        cm_arch_args=("-DCMAKE_CUDA_ARCHITECTURES=$CUDAMODEL_CUDA_ARCHITECTURES")
        cm_arch_why="from CUDAMODEL_CUDA_ARCHITECTURES"
        return 0
    fi

    # The real architectures this nvcc builds ("sm_75 sm_80 ..."); empty when it cannot tell.
    buildable="$("${CUDACXX:-nvcc}" --list-gpu-code 2>/dev/null | tr '\n' ' ' || true)"
    if ! command -v nvidia-smi >/dev/null 2>&1; then
        smi_state="nvidia-smi is not installed"
    elif ! smi_lines="$(nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader 2>/dev/null)" ||
         [ -z "$smi_lines" ]; then
        smi_lines=""
        smi_state="nvidia-smi reported none: no GPU, no driver, or a driver too old to report compute_cap"
    else
        smi_state="nvidia-smi reports"
    fi

    # One "name, major.minor" line per GPU.
    while IFS= read -r line; do
        [ -n "$line" ] || continue
        name="${line%,*}"
        cap="$(tr -d '[:space:]' <<<"${line##*,}")"
        if [[ ! "$cap" =~ ^([0-9]+)\.([0-9]+)$ ]]; then
            unbuildable+=("$name (compute capability '$cap' not understood)")
            continue
        fi
        arch="${BASH_REMATCH[1]}${BASH_REMATCH[2]}"
        if [ -n "$buildable" ] && [[ " $buildable " != *" sm_$arch "* ]]; then
            unbuildable+=("$name (sm_$arch, which this nvcc cannot build)")
            continue
        fi
        [[ ", $found, " == *", $name with compute capability $cap, "* ]] ||
            found+="${found:+, }$name with compute capability $cap"
        [[ " ${cm_arch_list[*]} " == *" $arch "* ]] || cm_arch_list+=("$arch")
    done <<<"$smi_lines"

    if [ ${#cm_arch_list[@]} -gt 0 ]; then
        cm_arch_why="the GPU's own: $smi_state $found"
    fi
    if [ ${#unbuildable[@]} -gt 0 ]; then
        cm_arch_list+=("$CM_FALLBACK_CUDA_ARCH")
        cm_arch_why+="${cm_arch_why:+; }$CM_FALLBACK_CUDA_ARCH for ${unbuildable[*]}: the oldest"
        cm_arch_why+=" architecture libcudamodel supports; the doctor says what that GPU needs"
    elif [ ${#cm_arch_list[@]} -eq 0 ]; then
        cm_arch_list=("$CM_FALLBACK_CUDA_ARCH")
        cm_arch_why="no GPU here ($smi_state), so nothing runs device code and one architecture"
        cm_arch_why+=" is enough: sm_$CM_FALLBACK_CUDA_ARCH (Turing), the oldest libcudamodel"
        cm_arch_why+=" supports and the one its sanitizer build and packaging test use"
    fi
    cm_arch_args=("-DCMAKE_CUDA_ARCHITECTURES=$(IFS=';'; echo "${cm_arch_list[*]}")")
}
