#!/usr/bin/env bash
# Integration test: a consumer whose kernels.def has an error fails at configure time, with a
# message naming kernels.def:LINE:COL, and generates nothing; so does a CUDA TARGET in a project
# without the CUDA language; once both are fixed, the same build directory configures.
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
echo
echo "PASS: a broken kernels.def is a configure error at $def:$line:$column"
