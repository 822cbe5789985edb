#!/usr/bin/env bash
# Integration test: a consumer whose kernels.def has an error fails at configure time, with a
# message naming kernels.def:LINE:COL, and generates nothing; so does a CUDA TARGET in a project
# without the CUDA language; once both are fixed, the same build directory configures. Its
# warnings: installing a -march=native (TARGET host) package names the portable targets, a
# named CPU does not warn, and a library without a CACHE_DIR is said to run untuned.
source "$(dirname "$0")/common.sh"

install_ansor
source_dir=$WORK_DIR/consumer
build=$WORK_DIR/consumer-build
cp -r "$CONSUMER_SOURCE_DIR" "$source_dir"
def=$source_dir/kernels.def

step "breaking the matmul in a copy of kernels.def: B[k, j] becomes the unknown tensor Bt[k, j]"
line=$(grep -n -F 'A[i, k] * B[k, j]' "$def" | cut -d: -f1) ||
  fail "cannot find the matmul's computation 'A[i, k] * B[k, j]' in $def"
[[ $line =~ ^[0-9]+$ ]] || fail "the matmul's computation 'A[i, k] * B[k, j]' is on more than one line of $def"
text=$(sed -n "${line}p" "$def")
before=${text%%"* B[k, j]"*}
column=$((${#before} + 3)) # the column of B, after '* '
sed -i "${line}s/\* B\[k, j\]/* Bt[k, j]/" "$def"
echo "line $line: $(sed -n "${line}p" "$def")"
expected="$def:$line:$column: error: unknown tensor 'Bt'"

step "configuring the broken consumer must fail"
configure=("$CMAKE" -S "$source_dir" -B "$build" "${CONSUMER_CMAKE_ARGS[@]}" -DANSOR_CONSUMER_MODE=package
  "-DCMAKE_PREFIX_PATH=$PREFIX")
echo "+ ${configure[*]}"
if "${configure[@]}" >"$WORK_DIR/configure.log" 2>&1; then
  cat "$WORK_DIR/configure.log"
  fail "configuring with a broken kernels.def succeeded"
fi
cat "$WORK_DIR/configure.log"
grep -qF "$expected" "$WORK_DIR/configure.log" || fail "the configure error does not say: $expected"
[[ ! -e $build/ansor/consumer_kernels/consumer_kernels.h ]] ||
  fail "a broken kernels.def left a generated header in $build/ansor/consumer_kernels"

step "fixing kernels.def, but asking for TARGET cuda:sm_80 in a project without the CUDA language"
cp "$CONSUMER_SOURCE_DIR/kernels.def" "$def"
if "$CMAKE" -S "$source_dir" -B "$build" -DCONSUMER_TARGET=cuda:sm_80 >"$WORK_DIR/cuda.log" 2>&1; then
  cat "$WORK_DIR/cuda.log"
  fail "configuring for TARGET cuda:sm_80 succeeded"
fi
cat "$WORK_DIR/cuda.log"
grep -qF "TARGET cuda:sm_80 builds CUDA kernels" "$WORK_DIR/cuda.log" || fail "the configure error does not name the target"

step "configuring the same build directory again for the host"
run "$WORK_DIR/reconfigure.log" "$CMAKE" -S "$source_dir" -B "$build" -DCONSUMER_TARGET=host
[[ -f $build/ansor/consumer_kernels/consumer_kernels.h ]] || fail "the fixed kernels.def generated no header"
# CMake wraps and indents a warning's text: read the log as one line, spaces squeezed (grep
# reads all of it: no early exit to break the pipe under pipefail).
flat() { tr '\n' ' ' <"$1" | tr -s ' '; }
flat "$WORK_DIR/reconfigure.log" | grep -F "ansor_install_kernels(consumer_kernels): the package ships kernels built with -march=native (host)" >/dev/null &&
  flat "$WORK_DIR/reconfigure.log" | grep -F "TARGET x86-64-v3 (any AVX2 CPU)" >/dev/null ||
  fail "installing a TARGET host library gave no warning about -march=native and no portable alternative"
! flat "$WORK_DIR/reconfigure.log" | grep -F "no CACHE_DIR" >/dev/null || fail "a consumer with a CACHE_DIR was warned that it has none"

step "configuring for a named CPU: the package is portable, no warning"
run "$WORK_DIR/named-cpu.log" "$CMAKE" -S "$source_dir" -B "$build" -DCONSUMER_TARGET=x86-64-v3
! flat "$WORK_DIR/named-cpu.log" | grep -F "built with -march=native" >/dev/null || fail "a TARGET x86-64-v3 package was called -march=native"

step "configuring without a CACHE_DIR: every kernel is untuned, and the configure says so"
run "$WORK_DIR/no-cache.log" "$CMAKE" -S "$source_dir" -B "$build" -DCONSUMER_CACHE_DIR= -DCONSUMER_TRIALS=8
flat "$WORK_DIR/no-cache.log" | grep -F "ansor_add_kernels(consumer_kernels): no CACHE_DIR" >/dev/null &&
  flat "$WORK_DIR/no-cache.log" | grep -F "TRIALS 8 does nothing without one" >/dev/null ||
  fail "without a CACHE_DIR the configure did not warn that every kernel runs untuned"
echo
echo "PASS: a broken kernels.def is a configure error at $def:$line:$column"
