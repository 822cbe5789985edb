#!/usr/bin/env bash
# Runs the kernels.def parser fuzzer for a fixed time, as CI does: one fuzzing process per core
# (libFuzzer's fork mode), a temporary writable corpus seeded from tests/fuzz/corpus, the
# dictionary, and limits that turn hangs and memory blow-ups into failures. Exits non-zero on any
# crash, leak, timeout or out-of-memory, keeping the reproducer; prints the number of executions
# either way.
#
# usage: run_parser_fuzzer.sh FUZZER_BINARY SECONDS
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 FUZZER_BINARY SECONDS" >&2
  exit 2
fi
fuzzer=$1
seconds=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/ansor-parser-fuzz.XXXXXX")
mkdir "$work/corpus" "$work/artifacts"
cp "$here"/corpus/* "$work/corpus/"

status=0
# Fork mode would go on past a timeout or an out-of-memory input: the first failure of any kind
# ends the run.
"$fuzzer" "$work/corpus" -fork="$(nproc)" -ignore_crashes=0 -ignore_timeouts=0 -ignore_ooms=0 \
  -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -dict="$here/kernels_def.dict" \
  -artifact_prefix="$work/artifacts/" >"$work/fuzzer.log" 2>&1 || status=$?

# The fork mode's progress lines: "#EXECUTIONS: cov: ... exec/s RATE ...".
executions=$(sed -n 's/^#\([0-9]*\): cov:.*/\1/p' "$work/fuzzer.log" | tail -n 1)
rate=$(sed -n 's/^#[0-9]*: cov:.* exec\/s \([0-9]*\) .*/\1/p' "$work/fuzzer.log" | tail -n 1)
artifacts=$(find "$work/artifacts" -type f)

if [ "$status" -ne 0 ] || [ -n "$artifacts" ]; then
  tail -n 80 "$work/fuzzer.log"
  for artifact in $artifacts; do
    echo "--- reproducer $artifact (base64):"
    base64 "$artifact"
  done
  echo "parser fuzzer FAILED (exit status $status) after ${executions:-?} executions; log and reproducers kept in $work"
  exit 1
fi

echo "parser fuzzer: ${executions:-0} executions in ${seconds} s on $(nproc) cores (${rate:-?} per second), no failures"
rm -rf "$work"
