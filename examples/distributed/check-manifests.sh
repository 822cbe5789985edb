#!/usr/bin/env bash
# check-manifests.sh: validates the examples of this directory, offline once the validators are
# installed (from PyPI, into a Python virtual environment):
#   - the shell scripts and the Slurm batch scripts: bash -n and shellcheck;
#   - kubernetes/*.yaml: kubernetes-validate --strict against the API schemas it bundles, for
#     each of K8S_VERSIONS, and the manifests' agreement with each other (shard count, claim);
#   - github-actions/tune.yml: check-jsonschema against its bundled GitHub workflow schema, and
#     the scripts of its steps checked by shellcheck;
#   - Dockerfile: parsed by the `dockerfile` package (Docker's own parser), the files it copies
#     present in the repository, shellcheck on its RUN commands;
#   - slurm/*.sbatch: `sbatch --test-only` when a Slurm controller answers here (else skipped).
#
# Exits with 77 (skipped) when the validators cannot be installed (no package registry).
#
#   VENV          where the virtual environment is, or goes (default: a temporary directory)
#   K8S_VERSIONS  Kubernetes versions to validate against (default: "1.27.0 1.37.0")
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
k8s_versions=${K8S_VERSIONS:-1.27.0 1.37.0}

need_apt() { # need_apt COMMAND PACKAGE: installs PACKAGE from Debian when COMMAND fails
  if ! eval "$1" >/dev/null 2>&1; then
    [[ $(id -u) -eq 0 ]] || { echo "check-manifests.sh: install the Debian package $2" >&2; exit 1; }
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" >/dev/null
  fi
}
need_apt "command -v shellcheck" shellcheck
need_apt "python3 -c 'import ensurepip, venv'" python3-venv

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
venv=${VENV:-$work/venv}
[[ -x $venv/bin/python ]] || python3 -m venv "$venv"
if ! "$venv/bin/pip" install -q --disable-pip-version-check \
  check-jsonschema==0.39.0 kubernetes-validate==1.37.0 dockerfile==3.4.0 PyYAML; then
  echo "check-manifests.sh: the validators could not be installed from PyPI: nothing was checked" >&2
  exit 77
fi
py=$venv/bin/python

echo "== shell scripts: bash -n, $(shellcheck --version | sed -n 's/^version: /shellcheck /p')"
scripts=("$here"/*.sh "$here"/slurm/*.sh "$here"/slurm/*.sbatch)
for s in "${scripts[@]}"; do bash -n "$s"; done
(cd "$here" && shellcheck -x "${scripts[@]#"$here/"}")

echo "== kubernetes: kubernetes-validate $("$venv/bin/kubernetes-validate" --version | awk '{print $NF}')"
for v in $k8s_versions; do
  "$venv/bin/kubernetes-validate" --strict --kubernetes-version "$v" "$here"/kubernetes/*.yaml
done
"$py" - "$here/kubernetes" <<'PY'
import glob, sys, yaml
docs = {d["metadata"]["name"]: d for f in sorted(glob.glob(sys.argv[1] + "/*.yaml")) for d in yaml.safe_load_all(open(f))}
tune, merge, claim = docs["ansor-tune"]["spec"], docs["ansor-merge"]["spec"], docs["ansor-records"]
env = lambda spec: {e["name"]: e.get("value") for e in spec["template"]["spec"]["containers"][0]["env"]}
assert tune["completionMode"] == "Indexed", "the tuning Job must be an Indexed Job"
n = tune["completions"]
assert tune["parallelism"] == n and env(tune)["ANSOR_SHARD_COUNT"] == str(n), "completions, parallelism and ANSOR_SHARD_COUNT differ"
assert env(merge)["SHARDS"] == str(n), "the merge Job's SHARDS is not the tuning Job's completions"
assert "ReadWriteMany" in claim["spec"]["accessModes"], "the claim must be ReadWriteMany"
for name, d in docs.items():
    pod = d["spec"]["template"]["spec"] if d["kind"] == "Job" else d["spec"] if d["kind"] == "Pod" else None
    if pod:
        claims = {v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"] if "persistentVolumeClaim" in v}
        assert claims == {"ansor-records"}, f"{name} mounts {claims}"
print(f"consistent: {n} shards, every pod on the claim ansor-records")
PY

echo "== github actions: check-jsonschema $("$venv/bin/check-jsonschema" --version | awk '{print $NF}')"
"$venv/bin/check-jsonschema" --builtin-schema vendor.github-workflows "$here/github-actions/tune.yml"
steps=$work/scripts
mkdir "$steps"
"$py" - "$here/github-actions/tune.yml" "$steps" <<'PY'
import re, sys, yaml
workflow = yaml.safe_load(open(sys.argv[1]))
n = 0
for job in workflow["jobs"].values():
    for step in job["steps"]:
        if "run" in step:
            n += 1
            # An expression is replaced before the shell sees it: a word stands in for it here.
            script = re.sub(r"\$\{\{.*?\}\}", "EXPRESSION", step["run"])
            open(f"{sys.argv[2]}/step{n}.sh", "w").write("#!/usr/bin/env bash\nset -eo pipefail\n" + script)
print(f"{n} run steps")
PY
shellcheck "$steps"/*.sh

echo "== Dockerfile: dockerfile $("$venv/bin/pip" show dockerfile | sed -n 's/^Version: //p')"
"$py" - "$here/Dockerfile" "$root" "$steps" <<'PY'
import os, sys, dockerfile
commands = dockerfile.parse_file(sys.argv[1])
n = 0
for c in commands:
    if c.cmd == "COPY" and not any(f.startswith("--from=") for f in c.flags):
        for src in c.value[:-1]:
            assert os.path.exists(os.path.join(sys.argv[2], src)), f"COPY {src}: not in the repository"
    if c.cmd == "RUN":
        n += 1
        open(f"{sys.argv[3]}/run{n}.sh", "w").write("#!/bin/sh\n" + " ".join(c.value) + "\n")
stages = [c.value for c in commands if c.cmd == "FROM"]
assert stages[0][0] == "debian:12", "the image is built on debian:12"
print(f"{len(commands)} instructions, {len(stages)} stages, {n} RUN commands")
PY
shellcheck "$steps"/run*.sh

echo "== slurm"
if command -v sbatch >/dev/null && scontrol ping 2>/dev/null | grep -q UP; then
  export SCRIPTS=$here DEF=$root/kernels.def RECORDS=${TMPDIR:-/tmp}
  sbatch --test-only "$here/slurm/tune.sbatch"
  sbatch --test-only "$here/slurm/merge.sbatch"
else
  echo "no Slurm controller answers here: the batch scripts were only checked by bash -n and shellcheck"
fi
echo "check-manifests.sh: all checks passed"
