# shellcheck shell=bash
# Build dependencies of libcudamodel, shared by scripts/quickstart.sh and scripts/test.sh.
# Source it, then call:
#
#   cm_deps_ensure [--optional PKG:COMMAND ...]
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
