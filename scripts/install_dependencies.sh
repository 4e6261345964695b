#!/usr/bin/env bash
# What sgemm needs beside the CUDA toolkit, found or else installed. `make` runs this
# before it configures, so that `make` and `make test` do all the set-up on a fresh
# Debian or Ubuntu machine; .ci/run runs it too. The list of needs lives here alone.
#
# Each need is looked for the way the build looks for it (a command, a CMake package
# config, a Python module), not by its package name, so a machine that has it from
# elsewhere installs nothing. What is missing is installed from Debian's packages, as
# root or through sudo; where neither is possible, one line says what to install and the
# script fails before anything is configured or built.
#
#   scripts/install_dependencies.sh            find, and install what is missing
#   scripts/install_dependencies.sh --check    say what is missing, install nothing
#
# Where to look can be narrowed (the tests do): SGEMM_DEPENDENCY_PREFIXES (default
# "/usr /usr/local", plus CMAKE_PREFIX_PATH) for CMake packages, SGEMM_PYTHONS (default
# "python3 /usr/bin/python3", the Pythons the build tries) for matplotlib.
set -euo pipefail

readonly MIN_CMAKE=3.24

say() { echo "sgemm: $*" >&2; }

cmake_is_recent() {
    command -v cmake >/dev/null || return 1
    local version
    version=$(cmake --version | sed -n '1s/[^0-9]*\([0-9][0-9.]*\).*/\1/p')
    [[ $(printf '%s\n' "$MIN_CMAKE" "$version" | sort -V | head -n 1) == "$MIN_CMAKE" ]]
}

# A CMake package config where find_package(NAME CONFIG) looks: <prefix>/(lib/<arch>|lib*|share)/cmake/<name>*/.
has_cmake_package() {
    local name=$1 lower prefix dir
    lower=$(tr '[:upper:]' '[:lower:]' <<<"$name")
    local prefixes="${SGEMM_DEPENDENCY_PREFIXES:-/usr /usr/local} ${CMAKE_PREFIX_PATH:-}"
    prefixes=${prefixes//:/ }
    shopt -s nullglob
    for prefix in $prefixes; do
        for dir in "$prefix"/{lib,lib64,lib/*,share}/cmake/"$name"*/; do
            if [[ -f $dir/${name}Config.cmake || -f $dir/${lower}-config.cmake ]]; then
                shopt -u nullglob
                return 0
            fi
        done
    done
    shopt -u nullglob
    return 1
}

has_matplotlib() {
    local python
    for python in ${SGEMM_PYTHONS:-python3 /usr/bin/python3}; do
        command -v "$python" >/dev/null && "$python" -c 'import matplotlib' 2>/dev/null && return 0
    done
    return 1
}

# Each need: the Debian package that brings it, and how to tell it is there.
missing_packages() {
    local missing=()
    cmake_is_recent || missing+=(cmake)
    command -v make >/dev/null || missing+=(make)
    command -v g++ >/dev/null || missing+=(g++)
    has_cmake_package fmt || missing+=(libfmt-dev)
    has_cmake_package CLI11 || missing+=(libcli11-dev)
    has_cmake_package GTest || missing+=(libgtest-dev)
    has_matplotlib || missing+=(python3-matplotlib)
    echo "${missing[*]}"
}

if ! command -v nvcc >/dev/null && [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
    say "the CUDA toolkit (with cuBLAS) is needed: nvcc is neither on PATH nor in /usr/local/cuda/bin"
    exit 1
fi

missing_list=$(missing_packages)  # not in < <(...): an error there must stop the script
read -ra missing <<<"$missing_list"
((${#missing[@]} == 0)) && exit 0
if [[ ${1:-} == --check ]]; then
    say "missing: ${missing[*]}"
    exit 1
fi

as_root=()
if [[ $(id -u) -ne 0 ]]; then
    # sudo where it can be used: without a password, or with a terminal to ask for one.
    if command -v sudo >/dev/null && { sudo -n true 2>/dev/null || [[ -t 0 ]]; }; then
        as_root=(sudo)
    else
        say "install these Debian packages first, as root (apt-get install ${missing[*]}), then run make again"
        exit 1
    fi
fi
if ! command -v apt-get >/dev/null; then
    say "install what these Debian packages hold with your system's package manager, then run make again: ${missing[*]}"
    exit 1
fi

say "installing ${missing[*]} (Debian packages that the build and the scripts need)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { "${as_root[@]}" apt-get update -qq &&
       "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
           apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
    cat "$log" >&2
    say "apt-get could not install ${missing[*]}"
    exit 1
fi

missing_list=$(missing_packages)
read -ra still_missing <<<"$missing_list"
if ((${#still_missing[@]} > 0)); then
    say "still missing after apt-get install: ${still_missing[*]}"
    [[ " ${still_missing[*]} " == *" cmake "* ]] && say "the build needs CMake $MIN_CMAKE or newer"
    exit 1
fi
