#!/usr/bin/env bash
# Installs the Debian packages cucore's build and tests need, when they are missing.
# As root it runs apt-get; otherwise it prints the exact command and fails.
# The CUDA toolkit itself (/usr/local/cuda or CUDA_HOME) is expected to be installed already.
set -euo pipefail

packages=(cmake make gcc pkg-config libcmocka-dev libdlpack-dev libxxhash-dev zlib1g-dev python3 doxygen)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  if [ "$(id -u)" -ne 0 ]; then
    echo "cucore: missing Debian packages: ${missing[*]}" >&2
    echo "install them with:  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "cucore: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || true
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cuda="${CUDA_HOME:-${CUDA_PATH:-/usr/local/cuda}}"
if [ ! -f "$cuda/include/cuda.h" ]; then
  echo "cucore: the CUDA toolkit headers are not at $cuda/include; install the toolkit or set CUDA_HOME" >&2
  exit 1
fi
