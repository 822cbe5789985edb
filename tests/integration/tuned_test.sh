#!/usr/bin/env bash
# Integration test, tuning at build time: the consumer is built against the installed package
# with TRIALS 6 and an empty cache, so every kernel is tuned while it builds (progress lines, and
# records appended to the cache); its programs then check the tuned kernels. A clean rebuild
# with the same cache replays the records: no kernel is measured again.
source "$(dirname "$0")/common.sh"

install_ansor
cache=$WORK_DIR/cache
build=$WORK_DIR/consumer-build
kernels=$(grep -c '^kernel ' "$CONSUMER_SOURCE_DIR/kernels.def")

step "building the consumer with TRIALS 6 and an empty cache"
configure_consumer "$WORK_DIR/configure.log" "$CONSUMER_SOURCE_DIR" "$build" \
  -DANSOR_CONSUMER_MODE=package "-DCMAKE_PREFIX_PATH=$PREFIX" -DCONSUMER_TRIALS=6 "-DCONSUMER_CACHE_DIR=$cache"
build_consumer "$WORK_DIR/build.log" "$build"
tuned=$(grep -c '^\[tune\] .*: done, 6 trials' "$WORK_DIR/build.log" || true)
[[ $tuned -eq $kernels ]] || fail "expected $kernels kernels tuned with 6 trials each, found $tuned (see $WORK_DIR/build.log)"
records=$(cat "$cache"/*.jsonl | wc -l)
[[ $records -ge $((6 * kernels)) ]] || fail "expected at least $((6 * kernels)) records in $cache, found $records"
grep -q 'schedule: tuned' "$build"/ansor/consumer_kernels/consumer_kernels_matmul.cpp ||
  fail "the matmul kernel was not emitted from its tuned record"
run_consumer "$build"

step "rebuilding from scratch with the same cache: records are replayed, nothing is measured"
rm -rf "$build"
configure_consumer "$WORK_DIR/configure2.log" "$CONSUMER_SOURCE_DIR" "$build" \
  -DANSOR_CONSUMER_MODE=package "-DCMAKE_PREFIX_PATH=$PREFIX" -DCONSUMER_TRIALS=6 "-DCONSUMER_CACHE_DIR=$cache"
build_consumer "$WORK_DIR/build2.log" "$build"
if grep -q '^\[tune\]' "$WORK_DIR/build2.log"; then
  fail "the rebuild tuned again although every kernel has a record (see $WORK_DIR/build2.log)"
fi
[[ $(cat "$cache"/*.jsonl | wc -l) -eq $records ]] || fail "the rebuild added records"
run_consumer "$build"
echo
echo "PASS: tuned"
