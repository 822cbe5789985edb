#!/usr/bin/env bash
# run.sh: the whole of a GPU run in one command, on a lent GPU machine, from the repository's
# root, with the kit of make-kit.sh carried (.gpu-kit). It tunes bench/gpu/gpu.def for the GPU
# there, starting from the repository's records of that GPU (cache/cuda-sm_XX.jsonl), for at most
# TUNE_SECONDS (an interrupted run keeps every finished record), candidates compiled by nvcc on
# all cores; then times the library equivalents with the measurer's protocol (compare.py) and
# writes into $OUT: table.md, the records (cuda-sm_XX.jsonl, to copy into cache/), tune.log.
#
#   TOTAL_TRIALS  trials of all kernels together, the records' included (default 1000)
#   TARGET        the CUDA target (default cuda: the architecture of the GPU present)
#   TUNE_SECONDS  the tuning's time limit (default 420: with start-up and the libraries' timing,
#                 a run fits in the 10 minutes of one command)
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?set OUT to the directory the results go to}"
kit=${KIT:-.gpu-kit}
export LD_LIBRARY_PATH=$kit/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
gen=$kit/bin/ansor-gen
def=bench/gpu/gpu.def
cache=$OUT/cache
mkdir -p "$cache"

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt" || echo "run.sh: no nvidia-smi"
"$gen" --version
# The records' file of the target: the cache key's part before its hash names it.
records=$("$gen" cache key "$def" --target "${TARGET:-cuda}")
records=${records#ansor-}
records=${records%-*}.jsonl
if [[ -f cache/$records ]]; then cp "cache/$records" "$cache/"; fi

set +e
timeout "${TUNE_SECONDS:-420}" "$gen" tune "$def" --target "${TARGET:-cuda}" --cache "$cache" --total-trials "${TOTAL_TRIALS:-1000}" \
  2>&1 | tee "$OUT/tune.log"
status=${PIPESTATUS[0]}
set -e
[[ $status -eq 0 || $status -eq 124 ]] || { echo "run.sh: tuning failed ($status)"; exit "$status"; }
[[ $status -eq 124 ]] && echo "run.sh: tuning stopped at its time limit; its records are kept"

"$gen" list "$def" --json >"$OUT/kernels.json"
"$gen" cache stats "$cache" --json >"$OUT/ours.json"
"$gen" cache stats "$cache" | tee "$OUT/stats.txt"
PYTHONUNBUFFERED=1 python3 bench/gpu/compare.py "$OUT/kernels.json" "$OUT/ours.json" | tee "$OUT/table.md"
cp "$cache"/*.jsonl "$OUT/"
