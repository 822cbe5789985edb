#!/usr/bin/env bash
# merge.sh: unites the caches that tune-shard.sh left in $RECORDS/shard-* into one cache
# directory, $RECORDS/merged unless MERGED says otherwise, and prints what that cache holds.
#
# Settings, from the environment:
#   RECORDS    the directory of the shards' caches (required)
#   MERGED     the merged cache (default: $RECORDS/merged); records already there are kept
#   SHARDS     when set, the number of shard directories there must be (a missing one is an error)
#   ANSOR_GEN  the ansor-gen executable (default: ansor-gen on PATH)
set -euo pipefail

gen=${ANSOR_GEN:-ansor-gen}
records=${RECORDS:?set RECORDS to the directory of the shard caches}
merged=${MERGED:-$records/merged}

shopt -s nullglob
shards=("$records"/shard-*/)
if ((${#shards[@]} == 0)); then
  echo "merge.sh: no shard directory in $records" >&2
  exit 1
fi
if [[ -n ${SHARDS:-} ]] && ((${#shards[@]} != SHARDS)); then
  echo "merge.sh: $records has ${#shards[@]} shard directories, not $SHARDS" >&2
  exit 1
fi

"$gen" cache merge "$merged" "${shards[@]%/}"
"$gen" cache stats "$merged"
