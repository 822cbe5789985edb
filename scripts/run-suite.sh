#!/usr/bin/env bash
# run-suite.sh TRIALS [bench_suite options...]: the operator-suite benchmark (bench/suite.def)
# against oneDNN and OpenBLAS. Installs what is missing, builds bench_suite in Release, tunes
# every kernel of the suite until the cache holds TRIALS of its schedules (bench-results/cache:
# a later run continues it), times everything on a quiet machine, and writes bench-results/
# suite.md, suite.csv, curves.csv and the PNG plots. Extra options go to bench_suite, e.g.
# --kernels c2d_b1,gmm_b1 (see the top of bench/suite.cpp).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ] || ! [[ $1 =~ ^[0-9]+$ ]]; then
  echo "usage: $0 TRIALS [bench_suite options...]" >&2
  exit 2
fi
trials=$1
shift

./scripts/install-deps.sh
build=${ANSOR_BUILD_DIR:-build}
./scripts/configure.sh "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" --target bench_suite
# The benchmark sets every thread runtime's count and spin itself (bench/README.md).
"$build/bench/bench_suite" --trials "$trials" --cache bench-results/cache --out bench-results "$@"
# Debian's python3, which has python3-matplotlib (install-deps.sh).
/usr/bin/python3 bench/plot_suite.py bench-results
