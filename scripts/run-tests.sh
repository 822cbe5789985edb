#!/usr/bin/env bash
# The whole test suite: installs what is missing, then
#  1. builds everything (Release, the default compiler) and runs every test with ctest;
#  2. builds again with clang++ under AddressSanitizer and UndefinedBehaviorSanitizer
#     (generator, runtime and emitted kernels) and runs the unit and kernel tests there;
#  3. runs the kernels.def parser fuzzer on every core for ANSOR_FUZZ_SECONDS (default 30).
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
jobs=$(nproc)
build=${ANSOR_BUILD_DIR:-build}
asan_build=${ANSOR_ASAN_BUILD_DIR:-build-asan}
fuzz_seconds=${ANSOR_FUZZ_SECONDS:-30}

start=$(date +%s)
echo "== build and test ($build)"
./scripts/configure.sh "$build" -DCMAKE_BUILD_TYPE=Release -DANSOR_WARNINGS_AS_ERRORS=ON -DANSOR_DEMO_TRIALS=0
cmake --build "$build" --parallel "$jobs"
ctest --test-dir "$build" --output-on-failure --parallel "$jobs"

echo "== sanitizers ($asan_build)"
# Line tables are all the sanitizers' reports need, and build faster than full debug information;
# -O1 compiles a tenth faster than -O2, and the tests run as fast (measured on the lowering tests).
cmake -S . -B "$asan_build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" \
  -DANSOR_SANITIZE=address,undefined -DANSOR_BUILD_FUZZERS=ON -DANSOR_WARNINGS_AS_ERRORS=ON \
  -DANSOR_GEN_EXECUTABLE="$(cd "$build" && pwd)/generator/ansor-gen" -DANSOR_BUILD_KERNELS=OFF -DANSOR_BUILD_BENCHMARKS=OFF
cmake --build "$asan_build" --parallel "$jobs"
# Reports keep 10 frames of where a block was allocated instead of 30: the generator allocates
# its expression trees node by node, and walking 30 frames each time made its tests a third slower.
ASAN_OPTIONS=${ASAN_OPTIONS:-malloc_context_size=10} \
  ctest --test-dir "$asan_build" --output-on-failure --parallel "$jobs" --label-exclude integration

echo "== fuzzing the kernels.def front end for ${fuzz_seconds}s"
tests/fuzz/run_parser_fuzzer.sh "$asan_build/tests/fuzz/ansor_parser_fuzzer" "$fuzz_seconds"

echo "== all tests passed in $(( $(date +%s) - start ))s"
