#!/usr/bin/env bash
# run.sh: the whole of a GPU run in one command, on a lent GPU machine, from the repository's
# root, with the kit of make-kit.sh carried (.gpu-kit). It tunes bench/gpu/gpu.def for the GPU
# there, starting from the repository's records of that GPU (cache/cuda-sm_XX.jsonl), for at most
# TUNE_SECONDS (an interrupted run keeps every finished record), candidates compiled by nvcc on
# all cores; then times the library equivalents with the measurer's protocol (compare.py), prints
# the best programs and what ptxas makes of them, and writes into $OUT at most the 8 files a lent
# machine gives back:
#   table.md         ours against the libraries
#   cuda-sm_XX.jsonl the records (this run's and the repository's), to copy into cache/, and
#                    beside them the cost model the tuner saved (cuda-sm_XX.model.ubj)
#   tune.log         the tuning's progress
#   details.tgz      the GPU's name, the kernel list, the cache statistics, the best programs'
#                    .cu sources and ptxas's report of their registers, spills and shared memory
#
#   TOTAL_TRIALS  trials of all kernels together, the records' included (default 1000)
#   SCHEDULER     the task scheduler (default round-robin: each kernel is compared with its own
#                 library at a number of trials, and the gradient scheduler, minimising the sum of
#                 latencies, gave a 3.5 ms matmul every trial and a 0.13 ms one none)
#   KERNELS       instead: only these kernels (space-separated), TRIALS more trials each (default
#                 64), one after the other
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
target=${TARGET:-cuda}
work=$(mktemp -d)
details=$work/details
# The cache is $OUT itself: the records come back even when the command is stopped at its limit.
cache=$OUT
mkdir -p "$details"

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$details/gpu.txt" || echo "run.sh: no nvidia-smi"
"$gen" --version
# The records' file of the target: the cache key's part before its hash names it.
records=$("$gen" cache key "$def" --target "$target")
records=${records#ansor-}
records=${records%-*}.jsonl
if [[ -f cache/$records ]]; then cp "cache/$records" "$cache/"; fi

budget=(--total-trials "${TOTAL_TRIALS:-1000}" --scheduler "${SCHEDULER:-round-robin}")
if [[ -n ${KERNELS:-} ]]; then
  budget=(--trials "${TRIALS:-64}")
  for kernel in $KERNELS; do budget+=(--kernel "$kernel"); done
fi
set +e
timeout "${TUNE_SECONDS:-420}" "$gen" tune "$def" --target "$target" --cache "$cache" "${budget[@]}" 2>&1 | tee "$OUT/tune.log"
status=${PIPESTATUS[0]}
set -e
[[ $status -eq 0 || $status -eq 124 ]] || { echo "run.sh: tuning failed ($status)"; exit "$status"; }
[[ $status -eq 124 ]] && echo "run.sh: tuning stopped at its time limit; its records are kept"

"$gen" list "$def" --json >"$details/kernels.json"
"$gen" cache stats "$cache" --json >"$details/ours.json"
"$gen" cache stats "$cache" | tee "$details/stats.txt"
PYTHONUNBUFFERED=1 python3 bench/gpu/compare.py "$details/kernels.json" "$details/ours.json" | tee "$OUT/table.md"

# The best program of each kernel and ptxas's account of it; a failure here loses no result.
set +e
"$gen" emit "$def" --target "$target" --cache "$cache" --schedule best --trials 0 --name gpu_bench --out "$details/best" \
  >"$details/emit.log" 2>&1
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.')
for source in "$details"/best/*.cu; do
  echo "== $(basename "$source")"
  nvcc -arch="sm_${arch:-90}" -O3 -Xptxas -v -I"$kit/include" -I"$details/best" -c "$source" -o /dev/null 2>&1
done >"$details/ptxas.txt"
grep -E "registers|spill" "$details/ptxas.txt" | sort | uniq -c | sort -rn | head -20
tar -czf "$OUT/details.tgz" -C "$work" details
