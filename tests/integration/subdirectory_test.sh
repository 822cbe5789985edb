#!/usr/bin/env bash
# Integration test, subdirectory mode: builds the consumer project with add_subdirectory() of
# the ansor source tree and runs its programs. With no installed generator, ansor_add_kernels()
# builds one at configure time, which takes a few minutes.
source "$(dirname "$0")/common.sh"

build=$WORK_DIR/consumer-build

step "configuring the consumer (subdirectory mode, gcc)"
configure_consumer "$WORK_DIR/configure.log" "$CONSUMER_SOURCE_DIR" "$build" \
  -DANSOR_CONSUMER_MODE=subdirectory "-DANSOR_SOURCE_DIR=$ANSOR_SOURCE_DIR"
[[ -x $build/_ansor_generator/generator/ansor-gen ]] ||
  fail "subdirectory mode did not build the generator at configure time in $build/_ansor_generator"

step "building the consumer"
build_consumer "$WORK_DIR/build.log" "$build"

run_consumer "$build"
echo
echo "PASS: subdirectory mode"
