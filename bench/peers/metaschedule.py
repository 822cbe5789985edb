#!/usr/bin/env python3
"""TVM's MetaSchedule on the search benchmark's kernels (bench/search.cpp), for comparison only.

Not a dependency of ansor: run it from the virtual environment that install-tvm.sh makes,
on the same machine and in the same session as bench_search, so that both searches meet the
same load. For each kernel and trial budget: MetaSchedule tunes from an empty work directory,
and the script prints the best time its own runner measured, its GFLOP/s and the wall seconds.

    bench/peers/metaschedule.py [--kernel NAME]... [--trials 128,1000] [--csv FILE]
"""
import argparse
import math
import os
import shutil
import tempfile
import time

import tvm
from tvm import te
from tvm.s_tir import meta_schedule as ms


def matmul():
    a = te.placeholder((1024, 1024), "float32", name="A")
    b = te.placeholder((1024, 1024), "float32", name="B")
    k = te.reduce_axis((0, 1024), name="k")
    c = te.compute((1024, 1024), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    return te.create_prim_func([a, b, c]), 2.0 * 1024**3


def conv2d_nhwc_bias_relu():
    # X [1, 28, 28, 128], W [3, 3, 128, 128] (R, S, C, K), stride 1, pad 1, then bias and relu.
    x = te.placeholder((1, 28, 28, 128), "float32", name="X")
    w = te.placeholder((3, 3, 128, 128), "float32", name="W")
    bias = te.placeholder((128,), "float32", name="b")
    padded = te.compute(
        (1, 30, 30, 128),
        lambda n, h, v, c: te.if_then_else(
            te.all(h >= 1, h < 29, v >= 1, v < 29), x[n, h - 1, v - 1, c], tvm.tirx.const(0.0, "float32")
        ),
        name="Xpad",
    )
    r = te.reduce_axis((0, 3), name="r")
    s = te.reduce_axis((0, 3), name="s")
    c = te.reduce_axis((0, 128), name="c")
    conv = te.compute(
        (1, 28, 28, 128),
        lambda n, h, v, k: te.sum(padded[n, h + r, v + s, c] * w[r, s, c, k], axis=[r, s, c]),
        name="Conv",
    )
    y = te.compute((1, 28, 28, 128), lambda n, h, v, k: te.max(conv[n, h, v, k] + bias[k], tvm.tirx.const(0.0, "float32")), name="Y")
    return te.create_prim_func([x, w, bias, y]), 2.0 * 28 * 28 * 128 * 128 * 9


def dense_bias_gelu():
    # X [128, 768], W [3072, 768]: Y = gelu(X·Wᵀ + b), the exact (erf) gelu.
    x = te.placeholder((128, 768), "float32", name="X")
    w = te.placeholder((3072, 768), "float32", name="W")
    bias = te.placeholder((3072,), "float32", name="b")
    k = te.reduce_axis((0, 768), name="k")
    dense = te.compute((128, 3072), lambda i, j: te.sum(x[i, k] * w[j, k], axis=k), name="D")

    def gelu(v):
        return 0.5 * v * (1.0 + te.erf(v * (1.0 / math.sqrt(2.0))))

    y = te.compute((128, 3072), lambda i, j: gelu(dense[i, j] + bias[j]), name="Y")
    return te.create_prim_func([x, w, bias, y]), 2.0 * 128 * 768 * 3072


KERNELS = {"matmul": matmul, "conv2d_nhwc_bias_relu": conv2d_nhwc_bias_relu, "dense_bias_gelu": dense_bias_gelu}


def host_target(cores):
    # The host's CPU as LLVM names it, as ansor's kernels are built with -march=native.
    mcpu = tvm.target.codegen.llvm_get_system_cpu()
    return tvm.target.Target({"kind": "llvm", "mcpu": mcpu, "num-cores": cores})


def tune(name, trials, target, cores):
    func, flops = KERNELS[name]()
    work_dir = tempfile.mkdtemp(prefix=f"metaschedule-{name}-")
    start = time.monotonic()
    database = ms.tune_tir(
        mod=func,
        target=target,
        work_dir=work_dir,
        max_trials_global=trials,
        num_trials_per_iter=64,
        num_tuning_cores=cores,
    )
    wall = time.monotonic() - start
    record = database.query_tuning_record(ms.tir_integration._normalize_mod(func), target, workload_name="main")
    best = min(float(t) for t in record.run_secs) if record is not None else math.inf
    shutil.rmtree(work_dir, ignore_errors=True)
    return best, flops, wall


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernel", action="append", choices=sorted(KERNELS))
    parser.add_argument("--trials", default="128,1000")
    parser.add_argument("--cores", type=int, default=os.cpu_count())
    parser.add_argument("--csv")
    args = parser.parse_args()
    kernels = args.kernel or list(KERNELS)
    budgets = [int(t) for t in args.trials.split(",")]
    target = host_target(args.cores)
    print(f"MetaSchedule (TVM {tvm.__version__}) on {target}")
    rows = []
    for name in kernels:
        for trials in budgets:
            seconds, flops, wall = tune(name, trials, target, args.cores)
            rows.append((name, trials, wall, flops / seconds / 1e9))
    print(f"\n{'kernel':<22} {'trials':>6} {'wall s':>8} {'GFLOP/s':>9}")
    for name, trials, wall, gflops in rows:
        print(f"{name:<22} {trials:>6} {wall:>8.0f} {gflops:>9.1f}")
    if args.csv:
        with open(args.csv, "w") as out:
            out.write("kernel,trials,wall_seconds,best_gflops\n")
            for name, trials, wall, gflops in rows:
                out.write(f"{name},{trials},{wall:.1f},{gflops:.2f}\n")


if __name__ == "__main__":
    main()
