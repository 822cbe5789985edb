#!/usr/bin/env python3
"""TVM's MetaSchedule on the search benchmark's kernels (bench/search.cpp), for comparison only.

Not a dependency of ansor: run it from the virtual environment that install-tvm.sh makes,
on the same machine and in the same session as bench_search, so that both searches meet the
same load. For each kernel, MetaSchedule tunes once from an empty work directory for the largest
budget; for each budget, the best of the first N trials (in the order its database committed
them) is taken, built again and timed in this process by TVM's time evaluator (median of single
calls adding up to 0.5 s), as bench_search times ours. Prints and writes (--csv) GFLOP/s, the
best time MetaSchedule's own runner measured, and the wall seconds of the whole search.

Fair to MetaSchedule as the protocol is to the libraries: TVM's runtime runs --cores threads
(TVM_NUM_THREADS, checked), and the weights (ansor's const inputs, packed once outside the
timing) are layout-free, so that its RewriteLayout may choose their layout outside the timing
too.

    bench/peers/metaschedule.py [--kernel NAME]... [--shapes] [--lowp] [--trials 128,1000]
                                [--csv FILE] [--keep DIR]

Kernels: those of bench_support.h's kPaperKernels, bench/search_other_shapes.def and
bench/shapes.def (by the same names; --shapes for all of the last), and the four u8 x i8 -> i32
products of bench/lowp.def (matmulu8s8_*, by the same names; --lowp for all four). These are
tuned with MetaSchedule's VNNI auto-tensorization, as TVM tunes int8 dense: its default space
generator picks its x86 VNNI rule set (MultiLevelTilingWithIntrin with the dot_16x4_vnni tensor
intrinsic, RewriteTensorize) by itself for a target whose mcpu has avx512vnni, and B is given in
the layout that intrinsic reads, [N/16, K/4, 16, 4] (topi's dense_vnni layout, packed once outside
the timing, as ansor packs its const B). Two repairs for TVM 0.27, without which its VNNI path
builds nothing or wastes trials: its dot_16x4_vnni intrinsic is registered again with the i8
operands LLVM 22's vpdpbusd takes, and a postprocessor drops the candidates it cannot build (the
tensorized block in a vectorized loop) before they are measured. Each best schedule is checked
exactly against numpy (int64 sums, u8 inputs over 0..255, i8 over -128..127) before it is timed,
and its trace and assembly are shown (the tensorize with dot_16x4_vnni; vpdpbusd). Their GFLOP/s
are GOP/s, 2*M*N*K integer operations per call, as bench_suite counts.
"""
import argparse
import json
import math
import os
import shutil
import tempfile
import threading
import time

# TVM's runtime takes its thread count from TVM_NUM_THREADS, else from the physical cores it
# detects, which on a 2-vCPU virtual machine was 1: set before tvm is imported, and checked
# against --cores in main().
os.environ.setdefault("TVM_NUM_THREADS", str(os.cpu_count()))

import numpy as np
import tvm
from tvm import te, tirx
from tvm.ir.utils import derived_object
from tvm.s_tir import meta_schedule as ms
from tvm.s_tir import SBlock, SBlockRealize, TensorIntrin
from tvm.s_tir.tensor_intrin import x86 as x86_intrin
from tvm.script import tirx as T


def prim_func(tensors, weights):
    # The function, its weights marked layout-free (ansor's const inputs: both sides may pack them
    # once, outside the timing, so MetaSchedule's RewriteLayout may choose their layout too).
    func = te.create_prim_func(tensors)
    return func.with_attr("layout_free_buffers", [tensors.index(w) for w in weights])


def matmul(m, k, n):
    a = te.placeholder((m, k), "float32", name="A")
    b = te.placeholder((k, n), "float32", name="B")
    r = te.reduce_axis((0, k), name="k")
    c = te.compute((m, n), lambda i, j: te.sum(a[i, r] * b[r, j], axis=r), name="C")
    return prim_func([a, b, c], [b]), 2.0 * m * n * k


def conv2d_nhwc_bias_relu(size, channels, filters):
    # X [1, H, W, C], W [3, 3, C, K] (R, S, C, K), stride 1, pad 1, then bias and relu.
    x = te.placeholder((1, size, size, channels), "float32", name="X")
    w = te.placeholder((3, 3, channels, filters), "float32", name="W")
    bias = te.placeholder((filters,), "float32", name="b")
    padded = te.compute(
        (1, size + 2, size + 2, channels),
        lambda n, h, v, c: te.if_then_else(
            te.all(h >= 1, h < size + 1, v >= 1, v < size + 1), x[n, h - 1, v - 1, c], tvm.tirx.const(0.0, "float32")
        ),
        name="Xpad",
    )
    r = te.reduce_axis((0, 3), name="r")
    s = te.reduce_axis((0, 3), name="s")
    c = te.reduce_axis((0, channels), name="c")
    conv = te.compute(
        (1, size, size, filters),
        lambda n, h, v, k: te.sum(padded[n, h + r, v + s, c] * w[r, s, c, k], axis=[r, s, c]),
        name="Conv",
    )
    y = te.compute(
        (1, size, size, filters), lambda n, h, v, k: te.max(conv[n, h, v, k] + bias[k], tvm.tirx.const(0.0, "float32")), name="Y"
    )
    return prim_func([x, w, bias, y], [w, bias]), 2.0 * size * size * channels * filters * 9


def dense_bias_gelu(m, k, n):
    # X [M, K], W [N, K]: Y = gelu(X·Wᵀ + b), the exact (erf) gelu.
    x = te.placeholder((m, k), "float32", name="X")
    w = te.placeholder((n, k), "float32", name="W")
    bias = te.placeholder((n,), "float32", name="b")
    r = te.reduce_axis((0, k), name="k")
    dense = te.compute((m, n), lambda i, j: te.sum(x[i, r] * w[j, r], axis=r), name="D")

    def gelu(v):
        return 0.5 * v * (1.0 + te.erf(v * (1.0 / math.sqrt(2.0))))

    y = te.compute((m, n), lambda i, j: gelu(dense[i, j] + bias[j]), name="Y")
    return prim_func([x, w, bias, y], [w, bias]), 2.0 * m * k * n


def conv2d_nhwc(size, channels, filters, kernel, pad):
    # X [1, H, W, C], W [R, S, C, K], stride 1: bench/shapes.def's convolutions.
    out = size + 2 * pad - kernel + 1
    x = te.placeholder((1, size, size, channels), "float32", name="X")
    w = te.placeholder((kernel, kernel, channels, filters), "float32", name="W")
    source = x
    if pad:
        source = te.compute(
            (1, size + 2 * pad, size + 2 * pad, channels),
            lambda n, h, v, c: te.if_then_else(
                te.all(h >= pad, h < size + pad, v >= pad, v < size + pad), x[n, h - pad, v - pad, c], tvm.tirx.const(0.0, "float32")
            ),
            name="Xpad",
        )
    r = te.reduce_axis((0, kernel), name="r")
    s = te.reduce_axis((0, kernel), name="s")
    c = te.reduce_axis((0, channels), name="c")
    y = te.compute(
        (1, out, out, filters),
        lambda n, h, v, k: te.sum(source[n, h + r, v + s, c] * w[r, s, c, k], axis=[r, s, c]),
        name="Y",
    )
    return prim_func([x, w, y], [w]), 2.0 * out * out * channels * filters * kernel * kernel


def dense(m, k, n):
    # X [M, K], W [N, K]: Y = X·Wᵀ.
    x = te.placeholder((m, k), "float32", name="X")
    w = te.placeholder((n, k), "float32", name="W")
    r = te.reduce_axis((0, k), name="k")
    y = te.compute((m, n), lambda i, j: te.sum(x[i, r] * w[j, r], axis=r), name="Y")
    return prim_func([x, w, y], [w]), 2.0 * m * k * n


def matmul_u8s8(m, k, n):
    # bench/lowp.def's C[i, j] = sum(k, i32(A[i, k]) * i32(B[k, j])), A u8 [M, K], B i8 [K, N], with
    # B given as TVM's int8 dense gives it to its VNNI schedules (topi.x86 dense_vnni_compute): in
    # [N/16, K/4, 16, 4], so that the 16 x 4 bytes one vpdpbusd takes are contiguous. B is constant
    # (ansor's const input, packed once) and stays layout-free, so RewriteLayout may change it too.
    a = te.placeholder((m, k), "uint8", name="A")
    b = te.placeholder((n // 16, k // 4, 16, 4), "int8", name="B")
    r = te.reduce_axis((0, k), name="k")
    c = te.compute(
        (m, n),
        lambda i, j: te.sum(
            a[i, r].astype("int32") * b[j // 16, r // 4, j % 16, r % 4].astype("int32"), axis=r
        ),
        name="C",
    )

    def reference(rng):
        # The inputs in the function's parameter order (B packed from its [K, N] form) and the
        # exact result, summed in int64.
        a_np = rng.integers(0, 256, size=(m, k), dtype=np.uint8)
        b_np = rng.integers(-128, 128, size=(k, n), dtype=np.int8)
        packed = np.ascontiguousarray(b_np.reshape(k // 4, 4, n // 16, 16).transpose(2, 0, 3, 1))
        expected = a_np.astype(np.int64) @ b_np.astype(np.int64)
        return [a_np, packed, np.zeros((m, n), np.int32)], expected

    return prim_func([a, b, c], [b]), 2.0 * m * n * k, reference


# bench/lowp.def's u8 x i8 products (M x K x N), by the same names: tuned with VNNI.
LOWP = {
    "matmulu8s8_bertbase_128x768x768": lambda: matmul_u8s8(128, 768, 768),
    "matmulu8s8_bertbase_128x768x3072": lambda: matmul_u8s8(128, 768, 3072),
    "matmulu8s8_bertbase_128x3072x768": lambda: matmul_u8s8(128, 3072, 768),
    "matmulu8s8_bertbase_128x768x2304": lambda: matmul_u8s8(128, 768, 2304),
}

# bench/shapes.def, by the same names.
SHAPES = {
    "conv3x3_resnet50_28x28x128": lambda: conv2d_nhwc(28, 128, 128, 3, 1),
    "conv3x3_resnet50_14x14x256": lambda: conv2d_nhwc(14, 256, 256, 3, 1),
    "conv1x1_resnet50_56x56x64x256": lambda: conv2d_nhwc(56, 64, 256, 1, 0),
    "conv1x1_mobilenetv2_28x28x32x192": lambda: conv2d_nhwc(28, 32, 192, 1, 0),
    "conv1x1_mobilenetv2_14x14x384x96": lambda: conv2d_nhwc(14, 384, 96, 1, 0),
    "conv1x1_efficientnetb0_14x14x480x80": lambda: conv2d_nhwc(14, 480, 80, 1, 0),
    "conv3x3_inceptionv3_35x35x64x96": lambda: conv2d_nhwc(35, 64, 96, 3, 1),
    "conv3x3valid_inceptionv3_73x73x80x192": lambda: conv2d_nhwc(73, 80, 192, 3, 0),
    "dense_resnet50fc_32x2048x1000": lambda: dense(32, 2048, 1000),
    "dense_lstm650_64x1300x2600": lambda: dense(64, 1300, 2600),
    "dense_bertbase_128x768x2304": lambda: dense(128, 768, 2304),
    "dense_bertbase_128x3072x768": lambda: dense(128, 3072, 768),
    "densebiasgelu_bertbase_64x768x3072": lambda: dense_bias_gelu(64, 768, 3072),
}

KERNELS = {
    "matmul": lambda: matmul(1024, 1024, 1024),
    "conv2d_nhwc_bias_relu": lambda: conv2d_nhwc_bias_relu(28, 128, 128),
    "dense_bias_gelu": lambda: dense_bias_gelu(128, 768, 3072),
    "matmul_512": lambda: matmul(512, 512, 512),
    "conv2d_nhwc_bias_relu_56x64": lambda: conv2d_nhwc_bias_relu(56, 64, 64),
    "dense_bias_gelu_128x1024x4096": lambda: dense_bias_gelu(128, 1024, 4096),
    **SHAPES,
    **LOWP,
}
DEFAULT_KERNELS = ["matmul", "conv2d_nhwc_bias_relu", "dense_bias_gelu"]


def host_target(cores):
    # The host's CPU as LLVM names it, as ansor's kernels are built with -march=native.
    mcpu = tvm.target.codegen.llvm_get_system_cpu()
    return tvm.target.Target({"kind": "llvm", "mcpu": mcpu, "num-cores": cores})


@T.prim_func(s_tir=True)
def _dot_16x4_u8i8i32_vnni_i8_operands(
    A: T.Buffer((4,), "uint8", offset_factor=1),
    B: T.Buffer((16, 4), "int8", offset_factor=1),
    C: T.Buffer((16,), "int32", offset_factor=1),
) -> None:
    # TVM's dot_16x4_vnni implementation with the operands LLVM 22 wants: vpdpbusd.512 takes
    # (<16 x i32>, <64 x i8>, <64 x i8>) since LLVM PR 155194 (it took three <16 x i32> before, as
    # TVM 0.27's intrinsic still passes them, which fails LLVM's module verification).
    with T.sblock("root"):
        T.reads(C[0:16], A[0:4], B[0:16, 0:4])
        T.writes(C[0:16])
        A_i32 = T.reinterpret(A.vload([0], "uint8x4"), dtype="int32")
        A_u8x64 = T.reinterpret(T.broadcast(A_i32, 16), dtype="uint8x64")
        B_i8x64 = B.vload([0, 0], dtype="int8x64")
        C_i32x16 = C.vload([0], dtype="int32x16")
        C[T.ramp(T.int32(0), 1, 16)] = T.call_llvm_pure_intrin(
            T.llvm_lookup_intrinsic_id("llvm.x86.avx512.vpdpbusd.512"),
            C_i32x16,
            A_u8x64,
            B_i8x64,
            dtype="int32x16",
        )


def enable_vnni(target):
    # MetaSchedule's default space generator picks its x86 VNNI rules for a target whose mcpu has
    # avx512vnni (the host's, as LLVM names it: znver5 on the Zen 5 machine); without it, the u8 x
    # i8 kernels would be tuned without VNNI, so refuse. The rules name the dot_16x4_vnni
    # intrinsic: with TVM's LLVM 22, it is registered again under that name with i8 operands
    # (the same description, so the same tensorization; only the call's operand types differ).
    if not tvm.target.codegen.target_has_features("avx512vnni", target):
        raise SystemExit(f"{target} has no avx512vnni: MetaSchedule would not use VNNI for the u8 x i8 kernels")
    if tvm.target.codegen.llvm_version_major() >= 22:
        TensorIntrin.register(
            x86_intrin.VNNI_DOT_16x4_INTRIN,
            x86_intrin.dot_product_16x4_u8i8i32_desc,
            _dot_16x4_u8i8i32_vnni_i8_operands,
            override=True,
        )


def tensorized_in_vector_loop(stmt, vectorized=False):
    # Whether a tensorized block (one with match_buffers: tensorize's) lies in a vectorized loop
    # wider than 1.
    if isinstance(stmt, tirx.For):
        wide = stmt.kind == tirx.ForKind.VECTORIZED and not (isinstance(stmt.extent, tirx.IntImm) and stmt.extent.value == 1)
        return tensorized_in_vector_loop(stmt.body, vectorized or wide)
    if isinstance(stmt, SBlockRealize):
        return tensorized_in_vector_loop(stmt.block, vectorized)
    if isinstance(stmt, SBlock):
        if vectorized and len(stmt.match_buffers) > 0:
            return True
        if stmt.init is not None and tensorized_in_vector_loop(stmt.init, vectorized):
            return True
        return tensorized_in_vector_loop(stmt.body, vectorized)
    if isinstance(stmt, tirx.SeqStmt):
        return any(tensorized_in_vector_loop(s, vectorized) for s in stmt.seq)
    return any(
        getattr(stmt, field, None) is not None and tensorized_in_vector_loop(getattr(stmt, field), vectorized)
        for field in ("body", "then_case", "else_case")
    )


@derived_object
class RejectVectorizedTensorize(ms.postproc.PyPostproc):
    # Drops a candidate whose tensorized block RewriteParallelVectorizeUnroll put in a vectorized
    # loop (when the innermost N tile, outside the 16 lanes of the intrinsic, is over 1): TVM 0.27
    # cannot build it ("Cannot broadcast lanes=16 ... to 64"), and without this check such
    # candidates were 5 of 8 trials, each a failed build counted as a trial. Dropped here, the
    # search samples another instead; every candidate that builds is kept as it was.
    def _initialize_with_tune_context(self, context):
        pass

    def apply(self, sch):
        return not tensorized_in_vector_loop(sch.mod["main"].body)

    def clone(self):
        return RejectVectorizedTensorize()


def vnni_space(func, target):
    # MetaSchedule's own space for the target (its rules, postprocessors and mutators, as
    # tune_tir's default "post-order-apply" takes them), checked to hold its VNNI tiling rule,
    # with RejectVectorizedTensorize after its postprocessors.
    generator = ms.TuneContext(mod=func, target=target, space_generator="post-order-apply", task_name="vnni").space_generator
    rules = [type(rule).__name__ for rule in generator.sch_rules]
    if "MultiLevelTilingWithIntrin" not in rules:
        raise SystemExit(f"MetaSchedule's rules for {target} hold no tensorizing rule: {rules}")
    return ms.space_generator.PostOrderApply(
        sch_rules="from-target",
        postprocs=[postproc.clone() for postproc in generator.postprocs] + [RejectVectorizedTensorize()],
        mutator_probs="from-target",
    )


def records_in_commit_order(work_dir):
    # The JSON database appends each record as it is committed; its in-memory view is sorted by
    # time, so the file is read for the order of the trials.
    with open(os.path.join(work_dir, "database_workload.json")) as f:
        workloads = [ms.database.Workload.from_json(json.loads(line)) for line in f if line.strip()]
    records = []
    with open(os.path.join(work_dir, "database_tuning_record.json")) as f:
        for line in f:
            if line.strip():
                index, record = json.loads(line)
                records.append(ms.database.TuningRecord.from_json(record, workloads[index]))
    return records


def mean_run_seconds(record):
    secs = [float(t) for t in record.run_secs] if record.run_secs is not None else []
    return sum(secs) / len(secs) if secs and all(math.isfinite(t) and t < 1e9 for t in secs) else math.inf


def scheduled_module(record):
    # The record's schedule built again as MetaSchedule's builder builds it: the weights' layout
    # rewrite left out of the function, which then takes them already rewritten.
    sch = tvm.s_tir.Schedule(record.workload.mod)
    record.trace.apply_to_schedule(sch, remove_postproc=False)
    return tvm.s_tir.transform.RemoveWeightLayoutRewriteBlock(skip_tensor_rewrite=True)(sch.mod)


def random_input(rng, shape, dtype):
    if dtype == "float32":
        return rng.uniform(-1, 1, size=shape).astype("float32")
    info = np.iinfo(dtype)
    return rng.integers(info.min, int(info.max) + 1, size=shape, dtype=dtype)


def check_record(name, record, mod, executable, target, reference):
    # MetaSchedule's result against numpy, exactly, before it is timed; then its assembly for
    # vpdpbusd, the VNNI instruction. When RewriteLayout changed B's layout, the function timed
    # takes B rewritten: the same schedule with its layout rewrite left in takes B as given.
    dev = tvm.cpu()
    inputs, expected = reference(np.random.default_rng(2))
    shapes = [[int(d) for d in param.shape] for param in mod["main"].params]
    lib = executable.jit()
    if shapes != [list(x.shape) for x in inputs]:
        sch = tvm.s_tir.Schedule(record.workload.mod)
        record.trace.apply_to_schedule(sch, remove_postproc=False)
        lib = tvm.compile(sch.mod, target=target).jit()
    args = [tvm.runtime.tensor(x, dev) for x in inputs]
    lib["main"](*args)
    result = args[-1].numpy().astype(np.int64)
    if not np.array_equal(result, expected):
        raise SystemExit(f"{name}: MetaSchedule's result differs from numpy's in {np.count_nonzero(result != expected)} elements")
    asm = executable.mod.inspect_source("asm")
    tensorized = [line.strip() for line in str(record.trace).splitlines() if "tensorize(" in line]
    print(f"{name}: exact; {asm.count('vpdpbusd')} vpdpbusd in its assembly; trace: {'; '.join(tensorized) or 'not tensorized'}")


def time_record(name, record, target, reference=None):
    # The scheduled module timed by TVM's evaluator: single calls (number=1), repeated until they
    # add up to 0.5 s and at least 5, the median kept.
    mod = scheduled_module(record)
    func = mod["main"]
    executable = tvm.compile(mod, target=target)
    if reference is not None:
        check_record(name, record, mod, executable, target, reference)
    lib = executable.jit()
    dev = tvm.cpu()
    rng = np.random.default_rng(1)
    args = [
        tvm.runtime.tensor(random_input(rng, [int(d) for d in param.shape], str(param.dtype)), dev)
        for param in func.params
    ]
    once = lib.time_evaluator("main", dev, number=1, repeat=1)(*args).mean
    repeat = max(5, int(0.5 / max(once, 1e-6)))
    return float(np.median(lib.time_evaluator("main", dev, number=1, repeat=repeat)(*args).results))


def tune(name, budgets, target, cores, keep):
    func, flops, *reference = KERNELS[name]()
    if keep:
        work_dir = os.path.join(keep, name)
        shutil.rmtree(work_dir, ignore_errors=True)
        os.makedirs(work_dir)
    else:
        work_dir = tempfile.mkdtemp(prefix=f"metaschedule-{name}-")
    start = time.monotonic()
    reached = {}  # budget: wall seconds when the database first held that many records
    done = threading.Event()

    def watch():
        path = os.path.join(work_dir, "database_tuning_record.json")
        while not done.wait(0.5):
            count = sum(1 for _ in open(path)) if os.path.exists(path) else 0
            for budget in budgets:
                if count >= budget and budget not in reached:
                    reached[budget] = time.monotonic() - start

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    ms.tune_tir(
        mod=func,
        target=target,
        work_dir=work_dir,
        max_trials_global=max(budgets),
        num_trials_per_iter=64,
        num_tuning_cores=cores,
        space=vnni_space(func, target) if name in LOWP else "post-order-apply",
    )
    wall = time.monotonic() - start
    done.set()
    watcher.join()
    records = records_in_commit_order(work_dir)
    rows = []
    for budget in budgets:
        first = records[:budget]
        at = reached.get(budget, wall)
        best = min(first, key=mean_run_seconds, default=None)
        if best is None or not math.isfinite(mean_run_seconds(best)):
            rows.append((name, budget, len(first), at, math.nan, math.nan))
            continue
        seconds = time_record(f"{name} ({budget} trials)", best, target, *reference)
        rows.append((name, budget, len(first), at, flops / seconds / 1e9, flops / mean_run_seconds(best) / 1e9))
        if keep:
            with open(os.path.join(work_dir, f"best-{budget}.txt"), "w") as out:
                out.write(f"# {name}: the best of the first {budget} records\n# trace\n{best.trace}\n\n")
                out.write(f"# scheduled TIR\n{scheduled_module(best).script()}\n")
    if not keep:
        shutil.rmtree(work_dir, ignore_errors=True)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernel", action="append", choices=sorted(KERNELS))
    parser.add_argument("--trials", default="128,1000")
    parser.add_argument("--cores", type=int, default=os.cpu_count())
    parser.add_argument("--csv")
    parser.add_argument("--shapes", action="store_true", help="every kernel of bench/shapes.def")
    parser.add_argument("--lowp", action="store_true",
                        help="the u8 x i8 products of bench/lowp.def (matmulu8s8_*), tuned with VNNI")
    parser.add_argument("--keep", metavar="DIR",
                        help="keep each kernel's database in DIR/KERNEL, with its best schedule of each budget "
                        "(trace and scheduled TIR) in best-TRIALS.txt")
    args = parser.parse_args()
    kernels = list(args.kernel or [])
    kernels += [k for k in (list(SHAPES) if args.shapes else []) + (list(LOWP) if args.lowp else []) if k not in kernels]
    kernels = kernels or DEFAULT_KERNELS
    budgets = sorted(int(t) for t in args.trials.split(","))
    threads = tvm.get_global_func("runtime.NumThreads")()
    if threads != args.cores:
        parser.error(f"TVM's runtime runs {threads} threads, not --cores {args.cores}: set TVM_NUM_THREADS={args.cores}")
    target = host_target(args.cores)
    if any(k in LOWP for k in kernels):
        enable_vnni(target)
    print(f"MetaSchedule (TVM {tvm.__version__}) on {target}, {threads} runtime threads")
    rows = []
    for name in kernels:
        rows += tune(name, budgets, target, args.cores, args.keep)
    header = f"\n{'kernel':<30} {'trials':>6} {'records':>7} {'wall s':>8} {'GFLOP/s':>9} {'its runner':>10}"
    print(header)
    for name, trials, count, wall, gflops, runner in rows:
        print(f"{name:<30} {trials:>6} {count:>7} {wall:>8.0f} {gflops:>9.1f} {runner:>10.1f}")
    if args.csv:
        with open(args.csv, "w") as out:
            out.write("kernel,trials,records,wall_seconds,best_gflops,runner_gflops\n")
            for name, trials, count, wall, gflops, runner in rows:
                out.write(f"{name},{trials},{count},{wall:.1f},{gflops:.2f},{runner:.2f}\n")


if __name__ == "__main__":
    main()
