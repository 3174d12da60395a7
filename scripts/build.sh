#!/usr/bin/env bash
# Sets up a Debian 12 machine for paulistrings (installs missing packages with apt-get) and builds
# the Release configuration into build/. Idempotent: a second run only rebuilds what changed.
#
# usage: scripts/build.sh [preset]      (preset: release (default) or debug-asan)
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"

required_packages=(g++ cmake ninja-build libgtest-dev nlohmann-json3-dev libcli11-dev libopenmpi-dev openmpi-bin
                   python3-mpi4py python3-dev pybind11-dev python3-numpy python3-pytest)
missing=()
for package in "${required_packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "build.sh: installing ${missing[*]}" >&2
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
