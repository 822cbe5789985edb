#!/usr/bin/env bash
# The main job: installs what is missing, builds the generator, tunes (within the build's trial
# budget) and builds the project's kernels.def, and runs the demo, which checks every kernel
# against the naive reference and prints its time and GFLOP/s.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
build=${ANSOR_BUILD_DIR:-build}
./scripts/configure.sh "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" --target ansor_demo
"$build/examples/demo/ansor_demo"
