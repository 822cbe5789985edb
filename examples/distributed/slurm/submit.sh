#!/usr/bin/env bash
# submit.sh [SBATCH OPTIONS...]: queues the tuning array (with the options given, e.g.
# --partition=cpu --array=0-7) and the merge after it. DEF and RECORDS (on a file system every
# node sees) come from the environment, as do the other settings of tune-shard.sh; sbatch hands
# the environment on to the jobs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
DEF=$(realpath -e "${DEF:?set DEF to the kernels.def to tune}")
RECORDS=$(realpath -m "${RECORDS:?set RECORDS to a directory on shared storage}")
SCRIPTS=$(dirname "$here")
export DEF RECORDS SCRIPTS
mkdir -p "$RECORDS"
array=$(sbatch --parsable "$@" "$here/tune.sbatch")
array=${array%%;*}
merge=$(sbatch --parsable --dependency="afterok:$array" "$here/merge.sbatch")
echo "tuning: job array $array; merge: job ${merge%%;*}, into $RECORDS/merged"
