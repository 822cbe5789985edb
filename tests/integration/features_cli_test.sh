#!/usr/bin/env bash
# Integration test: `ansor-gen features` of this build, the real executable, on the consumer's
# kernels.def: every store of every kernel gets the 171 features by name, in table order, as
# numbers; the naive matmul's multiply-adds are M x N x K; a random schedule and a bad kernel
# name behave.
source "$(dirname "$0")/common.sh"

require_generator
def=$CONSUMER_SOURCE_DIR/kernels.def

kernels=$("$gen" list "$def" | grep -v '^ ') || fail "ansor-gen list found no kernels in $def"
for kernel in $kernels; do
  step "features of $kernel"
  log=$WORK_DIR/$kernel.log
  run "$log" "$gen" features "$def" --kernel "$kernel" --raw >/dev/null
  stores=$(grep -c '^store [0-9]*: ' "$log") || fail "$kernel: no store"
  features=$(grep -cE '^  [A-Za-z_0-9.]+ +-?[0-9.e+-]+$' "$log") || fail "$kernel: no feature line"
  [[ $features -eq $((stores * 171)) ]] || fail "$kernel: $features feature lines for $stores stores, not 171 each"
  first=$(grep -m1 -A1 '^store 0: ' "$log" | tail -1 | awk '{print $1}')
  last=$(tail -1 "$log" | awk '{print $1}')
  [[ $first == float_mad && $last == tensor_accumulators ]] || fail "$kernel: features run from $first to $last"
  echo "$kernel: $stores stores x 171 features"
done

step "the naive matmul: C[i, j] += A[i, k] * B[k, j] is 24 x 13 x 19 = 5928 multiply-adds"
grep -A1 '^store 1: C$' "$WORK_DIR/matmul.log" | grep -qE '^  float_mad +5928$' ||
  fail "store 1 of matmul does not have float_mad 5928: $(grep -A1 '^store 1' "$WORK_DIR/matmul.log")"

step "a random schedule, scaled"
run "$WORK_DIR/random.log" "$gen" features "$def" --kernel conv2d_bias_relu --schedule random --seed 3 >/dev/null
grep -q '^store 0: ' "$WORK_DIR/random.log" || fail "no store in the random schedule's features"

step "an unknown kernel is misuse (exit 2)"
status=0
"$gen" features "$def" --kernel nope >"$WORK_DIR/nope.log" 2>&1 || status=$?
[[ $status -eq 2 ]] || fail "exit status $status for an unknown kernel, not 2"
grep -qF "no kernel named 'nope'" "$WORK_DIR/nope.log" || fail "the error does not name the kernel: $(cat "$WORK_DIR/nope.log")"
echo
echo "PASS: ansor-gen features prints 171 named features per store"
