#!/usr/bin/env bash
# Integration test, the ansor search policy: `ansor-gen tune --policy ansor` with a tiny budget
# on a small kernel appends its records to the cache (and, with --confirm, measurements of its
# fastest schedules that are no trials), a second run with the same cache and a
# larger budget continues (the budget counts the cached trials) and adds only schedules not
# measured before, and `ansor-gen emit` replays the best record into the kernel's source without
# measuring. Runs the build's own ansor-gen (no consumer project).
source "$(dirname "$0")/common.sh"

require_generator
def=$WORK_DIR/kernels.def
cache=$WORK_DIR/cache
cat >"$def" <<'DEF'
kernel mm_relu {
  A = input f32[64, 48]
  B = const f32[48, 32]
  C = relu(matmul(A, B))
}
DEF

step "tuning with --policy ansor, 4 trials in batches of 2, the 2 fastest confirmed"
run "$WORK_DIR/tune.log" "$gen" tune "$def" --cache "$cache" --policy ansor --trials 4 --batch 2 --min-seconds 0.001 --confirm 2
grep -Eq '^mm_relu +1 +[0-9.]+ +[0-9.]+x +4 +0$' "$WORK_DIR/tune.log" || fail "expected 4 trials of mm_relu in the summary (see $WORK_DIR/tune.log)"
[[ $(trial_records "$cache"/*.jsonl | wc -l) -eq 4 ]] || fail "expected 4 trials in $cache"
grep -q '"remeasure":true' "$cache"/*.jsonl || fail "the fastest schedules were not measured again (see $cache)"
grep -q '^\[tune\] mm_relu: confirmed the fastest schedules with [0-9]* more measurements' "$WORK_DIR/tune.log" ||
  fail "no confirmation line (see $WORK_DIR/tune.log)"

step "tuning again with the same cache and seed to 6 trials: 2 more, none measured before"
run "$WORK_DIR/tune2.log" "$gen" tune "$def" --cache "$cache" --policy ansor --trials 6 --batch 2 --min-seconds 0.001
[[ $(trial_records "$cache"/*.jsonl | wc -l) -eq 6 ]] || fail "expected 6 trials in $cache"
# The steps of every trial, one line each: no schedule was tried twice.
steps=$(trial_records "$cache"/*.jsonl | sed -e 's/.*"steps":\(\[.*\]\),"target".*/\1/')
[[ $(sort <<<"$steps" | uniq -d | wc -l) -eq 0 ]] || fail "a schedule was tried twice (see $cache)"

step "emitting from the records"
run "$WORK_DIR/emit.log" "$gen" emit "$def" --name lib --out "$WORK_DIR/out" --cache "$cache"
grep -q 'mm_relu: tuned record' "$WORK_DIR/emit.log" || fail "emit did not use a tuned record (see $WORK_DIR/emit.log)"
grep -q 'schedule: tuned' "$WORK_DIR/out/lib_mm_relu.cpp" || fail "the kernel was not emitted from its tuned record"
if grep -q '^\[tune\]' "$WORK_DIR/emit.log"; then
  fail "emit measured although the kernel has records (see $WORK_DIR/emit.log)"
fi
echo
echo "PASS: tune_ansor"
