#!/usr/bin/env bash
# Integration test, tuning at build time: the consumer is built against the installed package
# with TRIALS 6 and an empty cache, so every kernel is tuned while it builds (progress lines, and
# records appended to the cache); its programs then check the tuned kernels. A rebuild does
# nothing; after `consumer_kernels_tune` adds records, a rebuild generates again exactly the
# kernels whose records changed and compiles exactly those whose source changed. A clean rebuild
# with the same cache replays the records: no kernel is measured again; the tune target with
# ANSOR_TUNE_SHARD tunes one shard of the kernels. TRIALS 0 with an empty
# cache builds correct default kernels and says in one line which kernels are untuned.
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
records=$(trial_records "$cache"/*.jsonl | wc -l)
[[ $records -ge $((6 * kernels)) ]] || fail "expected at least $((6 * kernels)) records in $cache, found $records"
grep -q 'schedule: tuned' "$build"/ansor/consumer_kernels/consumer_kernels_matmul.cpp ||
  fail "the matmul kernel was not emitted from its tuned record"
run_consumer "$build"

# kernels ACTION LOG: the kernels the build in LOG ran ACTION (generating or compiling) for.
kernels_that() {
  sed -n "s/.*ansor: $1 consumer_kernels kernel \([A-Za-z0-9_]*\).*/\1/p" "$2" | sort | xargs
}
out_dir=$build/ansor/consumer_kernels

step "building again with no change: nothing is generated or compiled"
build_consumer "$WORK_DIR/build-again.log" "$build"
[[ -z $(kernels_that generating "$WORK_DIR/build-again.log") ]] || fail "a build with no change generated kernels (see $WORK_DIR/build-again.log)"
[[ -z $(kernels_that compiling "$WORK_DIR/build-again.log") ]] || fail "a build with no change compiled kernels"

step "raising TRIALS to 10: kernels with records are not tuned again"
configure_consumer "$WORK_DIR/configure-10.log" "$CONSUMER_SOURCE_DIR" "$build" -DCONSUMER_TRIALS=10
build_consumer "$WORK_DIR/build-10.log" "$build"
if grep -q '^\[tune\]' "$WORK_DIR/build-10.log"; then fail "kernels with records were tuned again (see $WORK_DIR/build-10.log)"; fi
[[ -z $(kernels_that compiling "$WORK_DIR/build-10.log") ]] || fail "sources changed although the records did not"

step "consumer_kernels_tune to 10 trials a kernel, then a rebuild"
rm -rf "$WORK_DIR/before" && mkdir -p "$WORK_DIR/before"
cp -r "$out_dir/stamps" "$WORK_DIR/before/stamps"
cp "$out_dir"/consumer_kernels_*.cpp "$WORK_DIR/before/"
build_consumer "$WORK_DIR/tune-target.log" "$build" --target consumer_kernels_tune
grep -q "(${records} in the cache, $((10 * kernels - records)) to go)" "$WORK_DIR/tune-target.log" ||
  fail "the tune target did not continue from the cache's records (see $WORK_DIR/tune-target.log)"
[[ $(trial_records "$cache"/*.jsonl | wc -l) -eq $((10 * kernels)) ]] || fail "the tune target did not measure up to its budget"
records=$((10 * kernels))
build_consumer "$WORK_DIR/build-tuned.log" "$build"
changed_stamps=$(for f in "$out_dir"/stamps/*.stamp; do
  k=$(basename "$f" .stamp); k=${k#consumer_kernels_}
  cmp -s "$f" "$WORK_DIR/before/stamps/$(basename "$f")" || echo "$k"
done | sort | xargs)
changed_sources=$(for f in "$out_dir"/consumer_kernels_*.cpp; do
  k=$(basename "$f" .cpp); k=${k#consumer_kernels_}
  [[ $k == registry ]] || cmp -s "$f" "$WORK_DIR/before/$(basename "$f")" || echo "$k"
done | sort | xargs)
echo "records changed for: '$changed_stamps'; sources changed for: '$changed_sources'"
[[ $(kernels_that generating "$WORK_DIR/build-tuned.log") == "$changed_stamps" ]] ||
  fail "generated '$(kernels_that generating "$WORK_DIR/build-tuned.log")', but the records changed for '$changed_stamps'"
[[ $(kernels_that compiling "$WORK_DIR/build-tuned.log") == "$changed_sources" ]] ||
  fail "compiled '$(kernels_that compiling "$WORK_DIR/build-tuned.log")', but the sources changed for '$changed_sources'"
run_consumer "$build"

step "rebuilding from scratch with the same cache: records are replayed, nothing is measured"
lines=$(cat "$cache"/*.jsonl | wc -l)
rm -rf "$build"
configure_consumer "$WORK_DIR/configure2.log" "$CONSUMER_SOURCE_DIR" "$build" \
  -DANSOR_CONSUMER_MODE=package "-DCMAKE_PREFIX_PATH=$PREFIX" -DCONSUMER_TRIALS=10 "-DCONSUMER_CACHE_DIR=$cache"
build_consumer "$WORK_DIR/build2.log" "$build"
if grep -q '^\[tune\]' "$WORK_DIR/build2.log"; then
  fail "the rebuild tuned again although every kernel has a record (see $WORK_DIR/build2.log)"
fi
[[ $(cat "$cache"/*.jsonl | wc -l) -eq $lines ]] || fail "the rebuild added records"
run_consumer "$build"

step "ANSOR_TUNE_SHARD=1/2: the tune target tunes one shard of the kernels up to their 10 trials each"
# The budget of 10 a kernel was shared among all kernels by the task scheduler above, so a
# kernel may already hold more than 10 trials: the shard tunes its kernels up to their budget
# together, counting what they hold, and never touches the other shard's.
trial_records "$cache"/*.jsonl >"$WORK_DIR/records-before-shard"
configure_consumer "$WORK_DIR/configure-shard.log" "$CONSUMER_SOURCE_DIR" "$build" -DANSOR_TUNE_SHARD=1/2
build_consumer "$WORK_DIR/tune-shard.log" "$build" --target consumer_kernels_tune
shard_line=$(grep -E "^\[shard\] 1/2 \(--shard\): [0-9]+ of $kernels kernels" "$WORK_DIR/tune-shard.log") ||
  fail "the tune target did not tune shard 1/2 (see $WORK_DIR/tune-shard.log)"
read -ra shard_kernels <<<"${shard_line##*: }"
shard_kernels=("${shard_kernels[@]%,}")
shard_before=0 shard_records=0
for k in "${shard_kernels[@]}"; do
  shard_before=$((shard_before + $(grep -c "\"kernel\":\"$k\"" "$WORK_DIR/records-before-shard")))
  shard_records=$((shard_records + $(trial_records "$cache"/*.jsonl | grep -c "\"kernel\":\"$k\"")))
done
shard_budget=$((10 * ${#shard_kernels[@]}))
expected=$((shard_before > shard_budget ? shard_before : shard_budget))
[[ $shard_records -eq $expected ]] ||
  fail "the shard's ${#shard_kernels[@]} kernels hold $shard_records trials (they held $shard_before), not $expected (their budget is $shard_budget)"
[[ $(trial_records "$cache"/*.jsonl | wc -l) -eq $(($(wc -l <"$WORK_DIR/records-before-shard") + shard_records - shard_before)) ]] ||
  fail "the shard tuned kernels of the other shard"

step "TRIALS 0 and an empty cache: default schedules, and one line naming the untuned kernels"
rm -rf "$build"
configure_consumer "$WORK_DIR/configure3.log" "$CONSUMER_SOURCE_DIR" "$build" \
  -DANSOR_CONSUMER_MODE=package "-DCMAKE_PREFIX_PATH=$PREFIX" -DCONSUMER_TRIALS=0 "-DCONSUMER_CACHE_DIR=$WORK_DIR/empty-cache"
build_consumer "$WORK_DIR/build3.log" "$build"
if grep -q '^\[tune\]' "$WORK_DIR/build3.log"; then fail "TRIALS 0 measured (see $WORK_DIR/build3.log)"; fi
[[ $(grep -c "warning: $kernels kernels of consumer_kernels without a tuning record use the default schedule" "$WORK_DIR/build3.log") -eq 1 ]] ||
  fail "expected one line naming the untuned kernels (see $WORK_DIR/build3.log)"
grep -q "tune them with: cmake --build $build --target consumer_kernels_tune" "$WORK_DIR/build3.log" || fail "the untuned line names no command"
grep -q 'schedule: default' "$build"/ansor/consumer_kernels/consumer_kernels_matmul.cpp || fail "the matmul is not the default schedule"
run_consumer "$build"
echo
echo "PASS: tuned"
