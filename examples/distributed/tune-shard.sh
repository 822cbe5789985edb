#!/usr/bin/env bash
# tune-shard.sh: what every engine (a Kubernetes pod, a Slurm array task, a CI job) runs for its
# shard. It tunes that shard's kernels of DEF into a cache directory of its own,
# $RECORDS/shard-<index>; merge.sh unites the shards' directories afterwards.
#
# Settings, from the environment:
#   DEF           the kernels.def to tune (required)
#   RECORDS       the directory that holds the shards' caches (required; shared storage on a cluster)
#   ANSOR_GEN     the ansor-gen executable (default: ansor-gen on PATH)
#   TARGET        what to tune for: host (default), or a CPU name such as x86-64-v3 (-march=x86-64-v3)
#   TOTAL_TRIALS  the budget of all of DEF's kernels, all shards together, or
#   TRIALS        trials per kernel; with neither, ansor-gen's default
#   SEED_CACHE    records of earlier runs, copied into the shard's cache first so that tuning
#                 resumes and the cost model learns from them (default: $RECORDS/merged if it exists)
#   TUNE_ARGS     more options of `ansor-gen tune`, separated by spaces (--batch 8 --seed 1)
#
# The shard, in this order: ANSOR_SHARD=I/N; a Kubernetes Indexed Job's JOB_COMPLETION_INDEX with
# ANSOR_SHARD_COUNT=N; a Slurm job array's SLURM_ARRAY_TASK_ID (less SLURM_ARRAY_TASK_MIN) and
# SLURM_ARRAY_TASK_COUNT. The same order as ansor-gen's own; the script passes --shard I/N so that
# the directory's name and the shard tuned cannot disagree.
set -euo pipefail

gen=${ANSOR_GEN:-ansor-gen}
def=${DEF:?set DEF to the kernels.def to tune}
records=${RECORDS:?set RECORDS to the directory of the shard caches}

if [[ -n ${ANSOR_SHARD:-} ]]; then
  index=${ANSOR_SHARD%%/*}
  count=${ANSOR_SHARD#*/}
elif [[ -n ${JOB_COMPLETION_INDEX:-} ]]; then
  index=$JOB_COMPLETION_INDEX
  count=${ANSOR_SHARD_COUNT:?set ANSOR_SHARD_COUNT to the number of completions}
elif [[ -n ${SLURM_ARRAY_TASK_ID:-} ]]; then
  index=$((SLURM_ARRAY_TASK_ID - ${SLURM_ARRAY_TASK_MIN:-0}))
  count=${SLURM_ARRAY_TASK_COUNT:?SLURM_ARRAY_TASK_COUNT is not set}
else
  echo "tune-shard.sh: which shard? Set ANSOR_SHARD=I/N, or run as an Indexed Job or a Slurm array task" >&2
  exit 2
fi
if ! [[ $index =~ ^[0-9]+$ && $count =~ ^[1-9][0-9]*$ ]] || ((index >= count)); then
  echo "tune-shard.sh: '$index/$count' is not a shard I/N with 0 <= I < N" >&2
  exit 2
fi

cache=$records/shard-$index
mkdir -p "$cache"
seed=${SEED_CACHE:-$records/merged}
if compgen -G "$seed/*.jsonl" >/dev/null; then
  echo "tune-shard.sh: resuming from the records in $seed"
  "$gen" cache merge "$cache" "$seed"
fi

args=(tune "$def" --cache "$cache" --target "${TARGET:-host}" --shard "$index/$count")
if [[ -n ${TOTAL_TRIALS:-} ]]; then
  args+=(--total-trials "$TOTAL_TRIALS")
elif [[ -n ${TRIALS:-} ]]; then
  args+=(--trials "$TRIALS")
fi
read -ra extra <<<"${TUNE_ARGS:-}"
echo "tune-shard.sh: shard $index of $count, records in $cache"
exec "$gen" "${args[@]}" "${extra[@]}"
