#!/usr/bin/env bash
# Integration test: incremental builds of a consumer (package mode). After a full build, a build
# with no change does nothing; editing a comment of kernels.def re-runs configure but regenerates
# nothing; changing the body of one kernel regenerates and recompiles that kernel alone.
source "$(dirname "$0")/common.sh"

install_ansor
source_dir=$WORK_DIR/consumer
build=$WORK_DIR/consumer-build
cp -r "$CONSUMER_SOURCE_DIR" "$source_dir"
def=$source_dir/kernels.def
all_kernels="conv2d_bias_relu int_dot matmul softmax"

# kernels ACTION LOG: the kernels that the build in LOG ran ACTION (generating or compiling)
# for, sorted, on one line.
kernels() {
  sed -n "s/.*ansor: $1 consumer_kernels kernel \([A-Za-z0-9_]*\).*/\1/p" "$2" | sort | xargs
}

# expect_kernels LOG GENERATED COMPILED: the build in LOG generated and compiled exactly these.
expect_kernels() {
  local generated compiled
  generated=$(kernels generating "$1")
  compiled=$(kernels compiling "$1")
  [[ $generated == "$2" ]] || fail "the build generated kernels '$generated', expected '$2' (see $1)"
  [[ $compiled == "$3" ]] || fail "the build compiled kernels '$compiled', expected '$3' (see $1)"
  echo "generated: '${generated}'; compiled: '${compiled}'"
}

# expect_reconfigured LOG: the build in LOG re-ran CMake because kernels.def changed.
expect_reconfigured() {
  grep -q "Configuring done" "$1" || fail "changing kernels.def did not re-run configure (see $1)"
}

step "configuring and building the consumer (package mode)"
configure_consumer "$WORK_DIR/configure.log" "$source_dir" "$build" \
  -DANSOR_CONSUMER_MODE=package "-DCMAKE_PREFIX_PATH=$PREFIX"
build_consumer "$WORK_DIR/build1.log" "$build"
expect_kernels "$WORK_DIR/build1.log" "$all_kernels" "$all_kernels"

step "building again with no change"
build_consumer "$WORK_DIR/build2.log" "$build"
expect_kernels "$WORK_DIR/build2.log" "" ""
if grep -q "Linking" "$WORK_DIR/build2.log"; then fail "a build with no change relinked (see $WORK_DIR/build2.log)"; fi

step "editing a comment of kernels.def"
sed -i 's/^# Matrix multiplication in index form/# Matrix multiplication (edited comment) in index form/' "$def"
grep -q "edited comment" "$def" || fail "the matmul's comment line was not found in $def"
build_consumer "$WORK_DIR/build3.log" "$build"
expect_reconfigured "$WORK_DIR/build3.log"
expect_kernels "$WORK_DIR/build3.log" "" ""
if grep -q "Linking" "$WORK_DIR/build3.log"; then fail "editing a comment relinked (see $WORK_DIR/build3.log)"; fi

step "changing the body of the matmul: A[i, k] * B[k, j] becomes B[k, j] * A[i, k]"
sed -i 's/A\[i, k\] \* B\[k, j\]/B[k, j] * A[i, k]/' "$def"
grep -qF 'B[k, j] * A[i, k]' "$def" || fail "the matmul's computation was not found in $def"
build_consumer "$WORK_DIR/build4.log" "$build"
expect_reconfigured "$WORK_DIR/build4.log"
expect_kernels "$WORK_DIR/build4.log" "matmul" "matmul"

step "building again with no change"
build_consumer "$WORK_DIR/build5.log" "$build"
expect_kernels "$WORK_DIR/build5.log" "" ""

# The product is the same, so the rebuilt library still passes every check.
run_consumer "$build"
echo
echo "PASS: incremental builds regenerate only the kernels that changed"
