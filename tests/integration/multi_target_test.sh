#!/usr/bin/env bash
# Integration test, a library for several CPU targets: the consumer is built (package mode)
# with TARGETS host x86-64-v2 x86-64-v3 x86-64-v4; each named target's kernels are compiled
# with its own -march (never -march=native), and its programs pass with every variant forced
# through ANSOR_KERNEL_TARGET that this CPU runs; unforced, the library picks the variant that
# needs the most features the CPU has; a forced variant the library lacks is reported.
source "$(dirname "$0")/common.sh"

install_ansor
build=$WORK_DIR/consumer-build
targets="host;x86-64-v2;x86-64-v3;x86-64-v4"

step "building the consumer for $targets"
configure_consumer "$WORK_DIR/configure.log" "$CONSUMER_SOURCE_DIR" "$build" \
  -DANSOR_CONSUMER_MODE=package "-DCMAKE_PREFIX_PATH=$PREFIX" "-DCONSUMER_TARGETS=$targets"
build_consumer "$WORK_DIR/build.log" "$build" --verbose
for variant in x86_64_v2 x86_64_v3 x86_64_v4; do
  level=${variant//_/-}
  line=$(grep -E "clang.* -c [^ ]*/consumer_kernels__${variant}_matmul\.cpp" "$WORK_DIR/build.log" | head -1)
  [[ -n $line ]] || fail "no compile of the $level matmul (see $WORK_DIR/build.log)"
  grep -q -- "-march=$level " <<<"$line" || fail "the $level variant was not compiled with -march=$level: $line"
  if grep -q -- "-march=native" <<<"$line"; then fail "the $level variant was compiled with -march=native: $line"; fi
done
grep -E "clang.* -c [^ ]*/consumer_kernels__host_matmul\.cpp" "$WORK_DIR/build.log" | grep -q -- "-march=native" ||
  fail "the host variant was not compiled with -march=native"
grep -E "clang.* -c [^ ]*/consumer_kernels_dispatch\.cpp" "$WORK_DIR/build.log" | grep -q -- "-march=x86-64 " ||
  fail "the dispatcher was not compiled for the baseline x86-64"

runs() { ANSOR_KERNEL_TARGET=$1 "$build/consumer_cpp" 2>&1; }
step "running every variant this CPU runs"
ran=0
for t in host x86-64-v2 x86-64-v3 x86-64-v4; do
  if [[ $t == x86-64-v4 ]] && ! grep -qw avx512f /proc/cpuinfo; then
    echo "skipping $t: this CPU has no AVX-512"
    continue
  fi
  out=$(runs "$t") || fail "the consumer failed with ANSOR_KERNEL_TARGET=$t: $out"
  grep -q "all kernels match their references (target $t)" <<<"$out" || fail "ANSOR_KERNEL_TARGET=$t did not run $t: $out"
  ANSOR_KERNEL_TARGET=$t run "$WORK_DIR/run_c_$t.log" "$build/consumer_c"
  ran=$((ran + 1))
done
[[ $ran -ge 3 ]] || fail "fewer than three variants ran"

step "unforced: the most demanding variant this CPU runs"
out=$(runs "") || fail "the consumer failed unforced: $out"
grep -q "(target host)" <<<"$out" || fail "unforced, the library did not pick the host variant on its build machine: $out"
out=$(runs "x86-64-v9") || fail "the consumer failed with an unknown target forced: $out"
# The library's targets, listed in the order it tries them: the most demanding first, which puts
# x86-64-v4 before the host on a CPU without AVX-512.
listed=$(sed -n 's/.*ANSOR_KERNEL_TARGET=x86-64-v9: not a target of this library (\([^)]*\)).*/\1/p' <<<"$out")
[[ -n $listed ]] || fail "an unknown forced target was not reported: $out"
for t in host x86-64-v2 x86-64-v3 x86-64-v4; do
  grep -qw -- "$t" <<<"${listed//, / }" || fail "the report of an unknown target does not list $t: $listed"
done
echo
echo "PASS: multi_target"
