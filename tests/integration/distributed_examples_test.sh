#!/usr/bin/env bash
# Integration test, examples/distributed: tune-shard.sh run four times, as a Slurm array task
# would run it (two shards) and as a Kubernetes Indexed Job's pod would (two shards), then
# merge.sh. Each kernel is tuned by exactly one shard, the shards' trials add up to the budget,
# and the merged cache holds every record of the shards, once; the library built from it is the
# one built from the shards' files put together, and from its distilled cache too; a damaged
# input loses only its bad lines. A second round resumes from the merged cache: the same budget
# measures nothing, a larger one tunes on to it.
source "$(dirname "$0")/common.sh"

require_generator
examples=$ANSOR_SOURCE_DIR/examples/distributed
def=$WORK_DIR/kernels.def
records=$WORK_DIR/records
merged=$records/merged
cat >"$def" <<'DEF'
kernel mm_a {
  A = input f32[32, 48]
  B = const f32[48, 32]
  C = matmul(A, B)
}
kernel mm_relu {
  A = input f32[16, 32]
  B = const f32[32, 48]
  C = relu(matmul(A, B))
}
kernel dense_b {
  X = input f32[8, 64]
  W = const f32[32, 64]
  Y = dense(X, W)
}
kernel soft_rows {
  X = input f32[16, 64]
  Y = softmax(X, axis = -1)
}
kernel soft_cols {
  X = input f32[32, 48]
  Y = softmax(X, axis = -1)
}
kernel relu_a {
  X = input f32[32, 48]
  Y = relu(X)
}
kernel gelu_a {
  X = input f32[48, 32]
  Y = gelu(X)
}
kernel row_sum {
  X = input f32[32, 64]
  S[i:32] = sum(k:64, X[i, k])
}
DEF
kernels=(mm_a mm_relu dense_b soft_rows soft_cols relu_a gelu_a row_sum)

# The settings of tune-shard.sh and merge.sh; no shard variable of this process's own engine.
unset ANSOR_SHARD ANSOR_SHARD_COUNT JOB_COMPLETION_INDEX SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_MIN SLURM_ARRAY_TASK_COUNT
export ANSOR_GEN=$gen DEF=$def RECORDS=$records TOTAL_TRIALS=16 TUNE_ARGS="--batch 2 --min-seconds 0.001"
unset MERGED SHARDS SEED_CACHE TRIALS TARGET

# tune_shards LOG_PREFIX: the four shards, each as its engine gives it its index.
tune_shards() {
  local p=$1
  run "$WORK_DIR/$p-0.log" env SLURM_ARRAY_TASK_ID=10 SLURM_ARRAY_TASK_MIN=10 SLURM_ARRAY_TASK_COUNT=4 "$examples/tune-shard.sh"
  run "$WORK_DIR/$p-1.log" env SLURM_ARRAY_TASK_ID=11 SLURM_ARRAY_TASK_MIN=10 SLURM_ARRAY_TASK_COUNT=4 "$examples/tune-shard.sh"
  run "$WORK_DIR/$p-2.log" env JOB_COMPLETION_INDEX=2 ANSOR_SHARD_COUNT=4 "$examples/tune-shard.sh"
  run "$WORK_DIR/$p-3.log" env JOB_COMPLETION_INDEX=3 ANSOR_SHARD_COUNT=4 "$examples/tune-shard.sh"
  local i
  for i in 0 1 2 3; do
    grep -q "^tune-shard.sh: shard $i of 4, records in $records/shard-$i\$" "$WORK_DIR/$p-$i.log" || fail "run $i did not tune shard $i of 4 (see $WORK_DIR/$p-$i.log)"
  done
}
# kernels_of FILE...: the kernel names of the trial records of FILEs, one per line, sorted, once.
kernels_of() { trial_records "$@" | grep -o '"kernel":"[^"]*"' | sed 's/"kernel":"\(.*\)"/\1/' | sort -u; }
count() { trial_records "$@" | wc -l; }

step "no engine variable: tune-shard.sh asks which shard"
if "$examples/tune-shard.sh" >"$WORK_DIR/noshard.log" 2>&1; then
  fail "tune-shard.sh without a shard succeeded (see $WORK_DIR/noshard.log)"
fi
grep -q "which shard?" "$WORK_DIR/noshard.log" || fail "unclear error without a shard (see $WORK_DIR/noshard.log)"
[[ ! -e $records ]] || fail "tune-shard.sh without a shard wrote $records"

step "four shards of 8 kernels, 16 trials in all: two as Slurm array tasks, two as Indexed Job pods"
tune_shards tune
for k in "${kernels[@]}"; do
  n=0
  for i in 0 1 2 3; do
    if kernels_of "$records/shard-$i"/*.jsonl | grep -qx "$k"; then n=$((n + 1)); fi
  done
  [[ $n -eq 1 ]] || fail "kernel $k has records in $n shards' caches, not in exactly one"
done
[[ $(kernels_of "$records"/shard-*/*.jsonl | wc -l) -eq ${#kernels[@]} ]] || fail "the shards' records name other kernels than the file's"
[[ $(count "$records"/shard-*/*.jsonl) -eq 16 ]] || fail "the shards hold $(count "$records"/shard-*/*.jsonl) trial records, not the budget's 16"

step "merge.sh: the union of the shards, without duplicates"
run "$WORK_DIR/merge.log" env SHARDS=4 "$examples/merge.sh"
# check_union: the merged cache holds each record of the shards once, and nothing else, file by file.
check_union() {
  local f name
  for f in "$records"/shard-*/*.jsonl; do basename "$f"; done | sort -u >"$WORK_DIR/shard-files"
  for f in "$merged"/*.jsonl; do basename "$f"; done | sort >"$WORK_DIR/merged-files"
  diff "$WORK_DIR/shard-files" "$WORK_DIR/merged-files" >/dev/null || fail "the merged cache's files are not the shards' target files (see $merged)"
  while read -r name; do
    sort -u "$records"/shard-*/"$name" >"$WORK_DIR/union"
    sort "$merged/$name" >"$WORK_DIR/merged-sorted"
    [[ -z $(uniq -d "$WORK_DIR/merged-sorted") ]] || fail "$merged/$name holds a record twice"
    diff -q "$WORK_DIR/union" "$WORK_DIR/merged-sorted" >/dev/null || fail "$merged/$name is not the union of the shards' $name"
  done <"$WORK_DIR/merged-files"
}
check_union
[[ $(count "$merged"/*.jsonl) -eq 16 ]] || fail "the merged cache holds $(count "$merged"/*.jsonl) trial records, not 16"
grep -Eq '^ +8 kernels, 16 trials' "$WORK_DIR/merge.log" || fail "merge.sh printed no statistics of the merged cache (see $WORK_DIR/merge.log)"

# emit_library CACHE OUT: the library of the file from CACHE's records alone (nothing measured).
emit_library() { run "$WORK_DIR/emit-$(basename "$2").log" "$gen" emit "$def" --name shards --out "$2" --cache "$1" --trials 0; }

step "the library from the merged cache is the one from the shards' files put together"
mkdir -p "$WORK_DIR/concatenated"
for f in "$merged"/*.jsonl; do cat "$records"/shard-*/"$(basename "$f")" >"$WORK_DIR/concatenated/$(basename "$f")"; done
emit_library "$merged" "$WORK_DIR/lib-merged"
emit_library "$WORK_DIR/concatenated" "$WORK_DIR/lib-concatenated"
diff -r "$WORK_DIR/lib-merged" "$WORK_DIR/lib-concatenated" || fail "the merged cache's library differs from the shards' files'"
[[ $(grep -l 'schedule: tuned' "$WORK_DIR/lib-merged"/shards_*.cpp | wc -l) -eq ${#kernels[@]} ]] || fail "not every kernel was emitted from a record"

step "cache distill keeps the library the same and says how much smaller the cache is"
run "$WORK_DIR/distill.log" "$gen" cache distill "$merged" --out "$WORK_DIR/distilled" --keep 1 --train 0
grep -Eq '^\[distill\] 1 files: [0-9]+ -> [0-9]+ bytes \([0-9]+% smaller\)' "$WORK_DIR/distill.log" || fail "distill said no size (see $WORK_DIR/distill.log)"
[[ $(count "$WORK_DIR/distilled"/*.jsonl) -le ${#kernels[@]} ]] || fail "distill --keep 1 kept more than a schedule per kernel"
emit_library "$WORK_DIR/distilled" "$WORK_DIR/lib-distilled"
# The sources and header, not the stamps: those list the records a build would try after the
# first (kept by the default --keep 4).
diff -r -x stamps "$WORK_DIR/lib-merged" "$WORK_DIR/lib-distilled" || fail "the distilled cache's library differs"

step "cache merge of damaged files keeps every good record and names the bad lines"
damaged=$WORK_DIR/damaged
mkdir -p "$damaged"
file=$(ls "$merged"/*.jsonl | head -n 1)
good=$(wc -l <"$file")
{ head -n 2 "$file"; echo '{"version": 1, "steps": "not a list"}'; tail -n +3 "$file"; printf '%s' '{"version": 1, "workl'; } >"$damaged/records.jsonl"
run "$WORK_DIR/merge-damaged.log" "$gen" cache merge "$WORK_DIR/from-damaged" "$damaged/records.jsonl"
grep -q "^\[merge\] $good records read from 1 input(s): $good added to $WORK_DIR/from-damaged, 0 duplicates, 2 unreadable lines skipped" \
  "$WORK_DIR/merge-damaged.log" || fail "merge of a damaged file did not keep its $good good records (see $WORK_DIR/merge-damaged.log)"
grep -q "records.jsonl:3: skipped" "$WORK_DIR/merge-damaged.log" || fail "the bad line in the middle was not named"
grep -q "records.jsonl:$((good + 2)): skipped: the line is incomplete" "$WORK_DIR/merge-damaged.log" || fail "the torn last line was not named"

step "merging again changes nothing"
cp -r "$merged" "$WORK_DIR/merged-before"
run "$WORK_DIR/merge-again.log" "$examples/merge.sh"
diff -r "$WORK_DIR/merged-before" "$merged" >/dev/null || fail "a second merge of the same shards changed $merged"

step "resuming from the merged cache: the same budget measures nothing"
tune_shards resume
for i in 0 1 2 3; do
  grep -q "^tune-shard.sh: resuming from the records in $merged\$" "$WORK_DIR/resume-$i.log" || fail "shard $i did not start from $merged"
done
run "$WORK_DIR/merge-resume.log" "$examples/merge.sh"
check_union
[[ $(count "$merged"/*.jsonl) -eq 16 ]] || fail "a run with a spent budget measured: $(count "$merged"/*.jsonl) trial records"

step "a budget of 24 tunes on from the 16 trials"
export TOTAL_TRIALS=24
tune_shards more
run "$WORK_DIR/merge-more.log" "$examples/merge.sh"
check_union
[[ $(count "$merged"/*.jsonl) -eq 24 ]] || fail "expected 24 trial records after tuning on, found $(count "$merged"/*.jsonl)"
echo
echo "PASS: distributed_examples"
