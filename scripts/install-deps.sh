#!/usr/bin/env bash
# Installs what building, testing and benchmarking ansor needs on Debian 12, from Debian's
# registry only. Idempotent: packages already present are left alone.
set -euo pipefail

packages=(
  build-essential cmake ninja-build git
  clang-14 libclang-rt-14-dev lld-14 llvm-14-dev
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev libxxhash-dev
  libxgboost-dev
  libopenblas-dev libdnnl-dev
  # bench/plot_suite.py draws the suite benchmark's plots.
  python3-matplotlib
  # Debian's oneDNN CMake package looks for OpenCL; it is only a recommendation of libdnnl-dev.
  ocl-icd-opencl-dev
  # examples/distributed/check-manifests.sh: shell scripts checked, validators in a venv.
  shellcheck python3-venv
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: everything is installed"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
