#!/usr/bin/env bash
# Installs what attnsim needs on Debian 12 (bookworm), with apt-get, only when something is
# missing. Idempotent and quiet when everything is already there. Needs root or sudo.
#   scripts/setup.sh           build and test dependencies, hipcc for the validation kernels
set -euo pipefail

packages=(
  build-essential      # g++ 12 (C++20), make
  cmake                # >= 3.25 (bookworm has 3.25.1)
  libboost-graph-dev   # Boost.Graph: tile-program DAGs
  libtbb-dev           # oneTBB: parallel sweeps and functional checks
  doctest-dev          # unit tests
  libtomlplusplus-dev  # toml++ 3.3: configs
  libcli11-dev         # CLI11: the command line
  nlohmann-json3-dev   # JSON output
  libopenmpi-dev       # Open MPI: cluster sweeps
  openmpi-bin          # mpirun
  chromium             # headless browser: the sweep report test
  hipcc                # HIP compiler (ROCm 5.2): the validation kernels for AMD GPUs
  libamdhip64-dev      # HIP runtime headers and library
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -eq 0 ]]; then
  sudo=()
elif command -v sudo >/dev/null; then
  sudo=(sudo)
else
  echo "setup.sh: missing packages (${missing[*]}) and not root; run as root or install sudo" >&2
  exit 1
fi
echo "setup.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup.sh: done"
