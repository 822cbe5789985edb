#!/usr/bin/env bash
# Integration test, the task scheduler: `ansor-gen tune DEF` without --kernel shares one budget
# among the kernels of a file with a network; the records hold exactly the budget; a second run
# with the same budget measures nothing (the budget counts what the cache holds); a larger budget
# continues from the records; a bad objective for the file's networks is an error.
source "$(dirname "$0")/common.sh"

require_generator
def=$WORK_DIR/kernels.def
cache=$WORK_DIR/cache
cat >"$def" <<'DEF'
kernel mm_small {
  A = input f32[32, 48]
  B = const f32[48, 32]
  C = relu(matmul(A, B))
}
kernel mm_large {
  A = input f32[64, 64]
  B = const f32[64, 64]
  C = relu(matmul(A, B))
}
kernel rows (weight = 2) {
  X = input f32[16, 64]
  Y = softmax(X, axis = -1)
}
network net (latency_ms = 50) { mm_small, mm_large * 3 }
DEF
records() { trial_records "$cache"/*.jsonl | wc -l; }
tune() { "$gen" tune "$def" --cache "$cache" --batch 2 --min-seconds 0.001 "$@"; }

step "10 trials for the three kernels, the gradient scheduler deciding"
run "$WORK_DIR/tune.log" tune --total-trials 10
[[ $(records) -eq 10 ]] || fail "expected 10 records, found $(records) (see $WORK_DIR/tune.log)"
grep -Eq '^\[schedule\] 3 kernels on cpu:[a-z0-9_:.+-]+, 10 trials in all \(0 in the cache, 10 to go\), gradient scheduler' "$WORK_DIR/tune.log" || fail "no plan line"
grep -q '^\[schedule\] 10/10 trials; round to ' "$WORK_DIR/tune.log" || fail "no progress line reached the budget"
for k in mm_small mm_large rows; do
  grep -q "^\[tune\] $k: " "$WORK_DIR/tune.log" || fail "$k had no warm-up round"
  grep -Eq "^$k +[0-9.]+ +[0-9.]+ +[0-9.]+x +[0-9]+ +0$" "$WORK_DIR/tune.log" || fail "$k is missing from the summary"
done
# Weights in the summary: mm_large runs 3 times in the network, rows (in none) has its weight.
grep -Eq '^mm_large +3 ' "$WORK_DIR/tune.log" || fail "mm_large's weight should be its count in the network"
grep -Eq '^rows +2 ' "$WORK_DIR/tune.log" || fail "rows' weight should be its attribute"

step "the same budget again: spent, nothing measured"
run "$WORK_DIR/again.log" tune --total-trials 10
[[ $(records) -eq 10 ]] || fail "a run whose budget the cache already holds measured (see $WORK_DIR/again.log)"
grep -q 'the budget is spent: the cache holds 10 trials' "$WORK_DIR/again.log" || fail "no 'budget spent' line"

step "a larger budget continues from the records, with round robin"
run "$WORK_DIR/more.log" tune --total-trials 16 --scheduler round-robin
[[ $(records) -eq 16 ]] || fail "expected 16 records after continuing, found $(records)"
grep -q '(10 in the cache, 6 to go), round-robin scheduler' "$WORK_DIR/more.log" || fail "the continued run did not count the cache"
# The resumed run skips the warm-up: its rounds go round robin over the kernels in order.
# Per kernel: mm_large starts from mm_small's schedules (the same computation), so the same steps
# may serve both.
steps=$(trial_records "$cache"/*.jsonl | sed -e 's/.*"steps":\(\[.*\]\),"target".*"workload":"\([0-9a-f]*\)".*/\2 \1/')
[[ $(sort <<<"$steps" | uniq -d | wc -l) -eq 0 ]] || fail "a schedule was tried twice (see $cache)"

step "objective f3 needs reference latencies"
if "$gen" tune "$def" --cache "$cache" --total-trials 20 --objective f3 >"$WORK_DIR/f3.log" 2>&1; then
  fail "f3 without reference latencies succeeded (see $WORK_DIR/f3.log)"
fi
grep -q "geometric-speedup needs a reference latency for network 'net'" "$WORK_DIR/f3.log" || fail "unclear f3 error (see $WORK_DIR/f3.log)"
[[ $(records) -eq 16 ]] || fail "the failed run measured"
echo
echo "PASS: tune_scheduler"
