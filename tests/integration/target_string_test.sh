#!/usr/bin/env bash
# Integration test: a full CPU target string means what it says. For
# cpu:x86_64:x86-64-v3:avx2:t2, `ansor-gen configure` gives the build -march=x86-64-v3, not the
# host's -march=native, and `tune` measures with it (its records' compiler says so) where this CPU
# runs AVX2 code; a string whose ISA those flags do not give (avx512) is refused by configure,
# emit and tune with an error naming the target, what it asks for and what the flags give, and
# nothing is written. Runs the build's own ansor-gen (no consumer project); skipped off x86-64.
source "$(dirname "$0")/common.sh"

require_generator
if [[ $(uname -m) != x86_64 ]]; then
  echo "SKIP: the target strings of this test are x86-64's"
  exit 77
fi
def=$WORK_DIR/kernels.def
cat >"$def" <<'DEF'
kernel add1 {
  X = input f32[64]
  Y[i:64] = X[i] + 1.0
}
DEF
good=cpu:x86_64:x86-64-v3:avx2:t2
bad=cpu:x86_64:x86-64-v3:avx512:t2

step "configure for $good: the build compiles with -march=x86-64-v3"
run "$WORK_DIR/configure.log" "$gen" configure "$def" --name lib --out "$WORK_DIR/good" --target "$good"
cmake_text=$WORK_DIR/good/lib_kernels.cmake
grep -F 'set(ANSOR_KERNEL_FLAGS_lib ' "$cmake_text" | grep -qF '"-march=x86-64-v3"' ||
  fail "the build's flags for $good are not -march=x86-64-v3: $(grep -F ANSOR_KERNEL_FLAGS_lib "$cmake_text")"
! grep -qF -- '-march=native' "$cmake_text" || fail "$cmake_text builds $good with -march=native"

if grep -qw avx2 /proc/cpuinfo; then
  step "tune for $good, 2 trials: measured with -march=x86-64-v3, and the records say so"
  cache=$WORK_DIR/cache
  run "$WORK_DIR/tune.log" "$gen" tune "$def" --cache "$cache" --target "$good" --kernel add1 --trials 2 --batch 2 --min-seconds 0.001
  grep -qE "^\[tune\] add1: 2 trials on $good with .* -march=x86-64-v3( |$)" "$WORK_DIR/tune.log" ||
    fail "tune did not measure $good with -march=x86-64-v3 (see $WORK_DIR/tune.log)"
  records=$cache/cpu-x86_64-x86-64-v3-avx2-t2.jsonl
  [[ $(trial_records "$records" | wc -l) -eq 2 ]] || fail "expected 2 trials in $records"
  ! trial_records "$records" | grep -v '"compiler":"[^"]* -march=x86-64-v3 ' || fail "a record of $records was not compiled with -march=x86-64-v3"
  run "$WORK_DIR/emit.log" "$gen" emit "$def" --name lib --out "$WORK_DIR/good" --cache "$cache" --target "$good"
  grep -q 'add1: tuned record' "$WORK_DIR/emit.log" || fail "emit for $good did not replay its records (see $WORK_DIR/emit.log)"
else
  echo "this CPU runs no AVX2 code: $good is not tuned here"
fi

expected="target $bad names ISA avx512 but -march=x86-64-v3 gives avx2"
# refused NAME OUTPUT COMMAND...: COMMAND fails (exit 1) saying $expected and leaves no OUTPUT.
refused() {
  local name=$1 output=$2
  shift 2
  step "$name for $bad is refused and writes nothing"
  local status=0
  "$@" >"$WORK_DIR/$name-bad.log" 2>&1 || status=$?
  cat "$WORK_DIR/$name-bad.log"
  [[ $status -eq 1 ]] || fail "$name for $bad exited with status $status, not 1"
  grep -qF "$expected" "$WORK_DIR/$name-bad.log" || fail "$name's error does not say: $expected"
  [[ ! -e $output ]] || fail "$name for $bad left $output"
}
refused configure "$WORK_DIR/bad" "$gen" configure "$def" --name lib --out "$WORK_DIR/bad" --target "$bad"
refused emit "$WORK_DIR/bad" "$gen" emit "$def" --name lib --out "$WORK_DIR/bad" --schedule default --target "$bad"
refused tune "$WORK_DIR/bad-cache" "$gen" tune "$def" --cache "$WORK_DIR/bad-cache" --target "$bad" --trials 2
echo
echo "PASS: $good builds with -march=x86-64-v3, and $bad is refused"
