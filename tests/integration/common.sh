# Sourced by the integration test scripts: their settings and helpers. The scripts are run by
# ctest (tests/integration/CMakeLists.txt), which sets, and by hand can be run with:
#   ANSOR_SOURCE_DIR  the ansor repository
#   ANSOR_BUILD_DIR   a build of it whose install targets are built (for package mode)
#   WORK_DIR          a directory for this test alone; it is emptied first
#   CMAKE             the cmake executable (default: cmake)
# shellcheck shell=bash disable=SC2034  # the variables here are for the scripts that source it
set -eEuo pipefail
# Any other command that fails ends the test (set -e); say which.
trap 'echo "FAIL: $(basename "$0"), line $LINENO: \"$BASH_COMMAND\" failed" >&2' ERR

: "${ANSOR_SOURCE_DIR:?set ANSOR_SOURCE_DIR to the ansor repository}"
: "${WORK_DIR:?set WORK_DIR to a scratch directory for this test}"
CMAKE=${CMAKE:-cmake}
CONSUMER_SOURCE_DIR=$ANSOR_SOURCE_DIR/tests/integration/consumer
PREFIX=$WORK_DIR/prefix
JOBS=$(nproc)

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

step() {
  echo
  echo "==== $*"
}

# trial_records FILE...: the records of FILEs that are trials, one per line; the tuner's
# confirmations of its fastest schedules ("remeasure": true) are not.
trial_records() {
  cat "$@" 2>/dev/null | grep -v '"remeasure":true' || true
}

# run LOG COMMAND...: runs COMMAND, showing its output and keeping it in LOG; fails the test
# when COMMAND fails.
run() {
  local log=$1
  shift
  echo "+ $*"
  "$@" 2>&1 | tee "$log" || fail "command failed (output in $log): $*"
}

case $WORK_DIR in
  /?*) ;;
  *) fail "WORK_DIR must be an absolute path, not '$WORK_DIR'" ;;
esac
rm -rf "$WORK_DIR"
mkdir -p "$WORK_DIR"

# Installs the main build into $PREFIX and checks that the package holds what a consumer needs.
install_ansor() {
  : "${ANSOR_BUILD_DIR:?set ANSOR_BUILD_DIR to a build of ansor}"
  step "installing $ANSOR_BUILD_DIR into $PREFIX"
  run "$WORK_DIR/install.log" "$CMAKE" --install "$ANSOR_BUILD_DIR" --prefix "$PREFIX"
  [[ -x $PREFIX/bin/ansor-gen ]] || fail "the package has no executable bin/ansor-gen"
  [[ -f $PREFIX/include/ansor/runtime.h ]] || fail "the package has no include/ansor/runtime.h"
  [[ -f $PREFIX/include/ansor/kernel_support.h ]] || fail "the package has no include/ansor/kernel_support.h"
  [[ -n $(find "$PREFIX" -name libansor_runtime.a) ]] || fail "the package has no libansor_runtime.a"
  local file
  for file in AnsorConfig.cmake AnsorConfigVersion.cmake AnsorRuntimeTargets.cmake AnsorGeneratorTargets.cmake AnsorKernels.cmake; do
    [[ -n $(find "$PREFIX" -path "*/cmake/Ansor/$file") ]] || fail "the package has no cmake/Ansor/$file"
  done
}

# require_generator: sets gen to the main build's ansor-gen, for the tests that run it directly.
require_generator() {
  : "${ANSOR_BUILD_DIR:?set ANSOR_BUILD_DIR to a build of ansor}"
  gen=$ANSOR_BUILD_DIR/generator/ansor-gen
  [[ -x $gen ]] || fail "no ansor-gen at $gen"
}

# How the consumer project is configured: with gcc, so that the kernel archive (built by
# clang++) is linked by a different compiler, and with Ninja, whose output the tests read.
CONSUMER_CMAKE_ARGS=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=g++ -DCMAKE_C_COMPILER=gcc)

# configure_consumer LOG SOURCE_DIR BUILD_DIR ARGS...: configures the consumer project.
configure_consumer() {
  local log=$1 source=$2 build=$3
  shift 3
  run "$log" "$CMAKE" -S "$source" -B "$build" "${CONSUMER_CMAKE_ARGS[@]}" "$@"
}

# build_consumer LOG BUILD_DIR [ARGS...]: builds the consumer project.
build_consumer() {
  local log=$1 build=$2
  shift 2
  run "$log" "$CMAKE" --build "$build" --parallel "$JOBS" "$@"
}

# run_consumer BUILD_DIR: runs the consumer's C++ and C programs, which check the kernels.
run_consumer() {
  step "running the consumer's programs"
  run "$WORK_DIR/run_cpp.log" "$1/consumer_cpp"
  run "$WORK_DIR/run_c.log" "$1/consumer_c"
}
