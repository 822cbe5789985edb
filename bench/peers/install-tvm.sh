#!/usr/bin/env bash
# TVM's MetaSchedule in a virtual environment beside the project (default ./tvm-venv), for the
# comparison in bench/peers/metaschedule.py. Never a dependency of ansor.
set -euo pipefail
venv=${1:-tvm-venv}
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet apache-tvm==0.27.0.post1 apache-tvm-ffi==0.1.14.post1 xgboost psutil cloudpickle
echo "run: $venv/bin/python bench/peers/metaschedule.py --help"
