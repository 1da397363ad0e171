#!/usr/bin/env bash
# Download the Debian packages that the GPU machine lacks and cannot fetch (it has no network):
# CMocka (libcmocka0, libcmocka-dev) and, in case that machine has no pkg-config, pkgconf
# (pkgconf-bin, libpkgconf3). They land in .deps/debs/ (ignored by git); the GPU check
# (scripts/gpu-check.sh) unpacks them there with dpkg -x, so nothing is installed system-wide.
#
#   scripts/fetch-deps.sh        # here, on a machine with Debian's package registry
#   # then, through the device tool: run `bash scripts/gpu-check.sh` with carry [".deps"]
#
# Needs apt-get (Debian or Ubuntu). Runs `apt-get update` first when apt does not know the
# packages yet (as root; otherwise it prints the sudo command).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
packages=(libcmocka0 libcmocka-dev pkgconf-bin libpkgconf3)

command -v apt-get >/dev/null 2>&1 || { echo "fetch-deps: apt-get not found (Debian/Ubuntu only)" >&2; exit 1; }

known() { apt-cache show "$1" >/dev/null 2>&1; }
need_update=0
for p in "${packages[@]}"; do known "$p" || need_update=1; done
if [ "$need_update" -eq 1 ]; then
    if [ "$(id -u)" -eq 0 ]; then
        echo "fetch-deps: apt-get update"
        apt-get update
    else
        echo "fetch-deps: apt does not know ${packages[*]} yet; run: sudo apt-get update" >&2
        exit 1
    fi
fi

# Download into a fresh folder beside .deps/debs and replace the old packages only when all of
# them came: without network (e.g. on the GPU machine) the download fails and the packages
# already there stay usable.
mkdir -p .deps
tmp="$(mktemp -d .deps/debs.new.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
# apt-get download writes into the current directory; as root it drops privileges to _apt,
# which must be able to write there (a warning otherwise, but the files still land).
if ! (cd "$tmp" && apt-get download "${packages[@]}"); then
    echo "fetch-deps: download failed; .deps/debs left as it was" >&2
    exit 1
fi
n="$(find "$tmp" -name '*.deb' | wc -l)"
if [ "$n" -ne "${#packages[@]}" ]; then
    echo "fetch-deps: expected ${#packages[@]} .deb files, downloaded $n; .deps/debs left as it was" >&2
    exit 1
fi
rm -rf .deps/debs
mv "$tmp" .deps/debs
trap - EXIT

echo "fetch-deps: downloaded into .deps/debs:"
ls -l .deps/debs
echo "fetch-deps: done. On the GPU machine: bash scripts/gpu-check.sh (device tool, carry [\".deps\"])"
