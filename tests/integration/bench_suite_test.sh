#!/usr/bin/env bash
# bench_suite end to end at a tiny budget: three suite kernels (one per library column) tuned for
# 4 trials, timed, checked against oneDNN and OpenBLAS, written as a table, a CSV and tuning
# curves, and drawn when matplotlib is there; a second run with the cache only times, as does
# --time-only under a larger budget; a kernel whose library definition does not match ours is
# reported as differing and fails the run. The report follows the protocol (bench/README.md):
# matched thread waiting, rounds, named implementations, a native norm, and no reference
# implementation's time.
#   BENCH_SUITE  the bench_suite executable
source "$(dirname "$0")/common.sh"
: "${BENCH_SUITE:?set BENCH_SUITE to the bench_suite executable}"
rm -rf "$WORK_DIR"
mkdir -p "$WORK_DIR"
# The benchmark replaces a passive wait policy with the protocol's matched spin.
export OMP_WAIT_POLICY=passive

step "tune and time three kernels of bench/suite.def"
run "$WORK_DIR/first.log" "$BENCH_SUITE" --trials 4 --kernels nrm_b1,softmax_b1,gmm_b1 --cache "$WORK_DIR/cache" --out "$WORK_DIR/out"
for f in suite.md suite.csv curves.csv; do [ -s "$WORK_DIR/out/$f" ] || fail "bench_suite wrote no $f"; done
[ "$(tail -n +2 "$WORK_DIR/out/suite.csv" | wc -l)" -eq 3 ] || fail "suite.csv should have a row per kernel"
for k in nrm_b1 softmax_b1 gmm_b1; do
  grep -q "^| $k | 4 |" "$WORK_DIR/out/suite.md" || fail "suite.md has no row of $k with 4 trials"
  [ "$(grep -c "^$k," "$WORK_DIR/out/curves.csv")" -eq 4 ] || fail "curves.csv should have 4 points of $k"
done
# Memory-bound kernels are judged by GB/s against the copy; the GEMM is not.
grep -q "^| nrm_b1 | .*% |$" "$WORK_DIR/out/suite.md" || fail "nrm_b1 has no share of the streaming bandwidth"
grep -q "^| gmm_b1 | .* | |$" "$WORK_DIR/out/suite.md" || fail "gmm_b1 should not be judged by bandwidth"
step "the report follows the protocol"
md="$WORK_DIR/out/suite.md"
grep -q "Thread waiting matched: .*GOMP_SPINCOUNT=[0-9][0-9]* with OMP_WAIT_POLICY unset" "$md" || fail "the report does not show the matched spin"
grep -q "interleaved over 5 rounds" "$md" || fail "the report does not say how ours and the libraries were interleaved"
grep -q "An empty parallel call costs ansor pool: " "$md" || fail "the empty parallel call was not measured"
grep -q "1 thread: ours ms" "$md" || fail "there is no one-thread column"
if grep -q "Libraries: .*oneDNN" "$md"; then
  grep -q "^- softmax_b1 oneDNN: " "$md" || fail "softmax_b1 was not compared with oneDNN"
  grep -q "^- nrm_b1 oneDNN: \(brg\|jit\)" "$md" || fail "the norm's oneDNN formulation is not native"
  ! grep -q "ref:any" "$md" || fail "a reference implementation was timed"
  oncol=$(head -1 "$WORK_DIR/out/suite.csv" | tr ',' '\n' | grep -n '^oneDNN_ms$' | cut -d: -f1)
  [ -n "$(grep '^softmax_b1,' "$WORK_DIR/out/suite.csv" | cut -d, -f"$oncol")" ] || fail "suite.csv has no oneDNN time of softmax_b1"
fi
if grep -q "Libraries: .*OpenBLAS" "$md"; then
  grep -q "OpenBLAS ms" "$md" || fail "gmm_b1 was not timed with OpenBLAS"
  grep -q "^- gmm_b1 OpenBLAS: cblas_sgemm (.* kernels)" "$md" || fail "OpenBLAS's core is not named"
fi

step "a second run finds the budget spent and only times"
run "$WORK_DIR/second.log" "$BENCH_SUITE" --trials 4 --kernels nrm_b1 --cache "$WORK_DIR/cache" --out "$WORK_DIR/out2"
grep -q "nrm_b1: done, 0 trials" "$WORK_DIR/second.log" || fail "the second run measured schedules again"
grep -q "^| nrm_b1 | 4 |" "$WORK_DIR/out2/suite.md" || fail "the second run lost the first run's trials"

step "--time-only times what the cache holds under a larger budget"
run "$WORK_DIR/third.log" "$BENCH_SUITE" --time-only --trials 100 --kernels softmax_b1 --cache "$WORK_DIR/cache" --out "$WORK_DIR/out4"
grep -q "softmax_b1: done, 0 trials" "$WORK_DIR/third.log" || fail "--time-only measured schedules"
grep -q "timing the cache's best schedules" "$WORK_DIR/out4/suite.md" || fail "the report does not say that nothing was tuned"

if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  step "plots"
  run "$WORK_DIR/plot.log" /usr/bin/python3 "$ANSOR_SOURCE_DIR/bench/plot_suite.py" "$WORK_DIR/out"
  for f in suite_bars.png curves_trials.png curves_seconds.png; do
    [ "$(head -c 4 "$WORK_DIR/out/$f" | tail -c 3)" = "PNG" ] || fail "$f is not a PNG"
  done
else
  echo "matplotlib is not installed: the plots are not checked"
fi

step "a library that computes something else is caught"
# Small, since the one trial's program is timed over every round (half a second per call at the
# suite's shape).
cat > "$WORK_DIR/wrong.def" <<'DEF'
kernel softmax_b1 {
  X = input f32[1, 16, 24]
  Y = softmax(X, axis = 1)
}
DEF
if grep -q "Libraries: .*oneDNN" "$WORK_DIR/out/suite.md"; then
  set +e
  "$BENCH_SUITE" --trials 1 --def "$WORK_DIR/wrong.def" --cache "$WORK_DIR/cache" --out "$WORK_DIR/out3" > "$WORK_DIR/wrong.log" 2>&1
  status=$?
  set -e
  [ $status -eq 1 ] || fail "a softmax over another axis than oneDNN's should fail the run (exit $status)"
  grep -q "softmax_b1: oneDNN and ours differ" "$WORK_DIR/wrong.log" || fail "the difference was not reported"
fi
echo "PASS"
