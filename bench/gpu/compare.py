#!/usr/bin/env python3
"""Times the library equivalent of each kernel of bench/gpu/gpu.def on the GPU, with the protocol
ansor's measurer times candidates with, and prints the table of both.

The protocol (docs/cuda.md, "Measured on a GPU"): one call first, then timed calls until they add
up to MIN_SECONDS (at least 3), each timed alone with CUDA events, twice the L2 size written
before each timed call when the arguments fit in L2; the median is kept. TF32 is off (fp32
kernels compare with fp32 libraries), and so are cuBLAS's f16 and bf16 reductions in reduced
precision (the f16 kernels sum in f32, as ours do); cuDNN picks its fastest algorithm
(benchmark mode).

  compare.py KERNELS_JSON OURS_JSON [--min-seconds S] > table.md
KERNELS_JSON: `ansor-gen list gpu.def --json`; OURS_JSON: `ansor-gen cache stats CACHE --json`.
Then the libraries' f16 and bf16 matmul with tensor cores, for reference.
"""
import argparse
import json
import statistics
import sys

import torch
import torch.nn.functional as F


def library_call(kernel, args):
    """The library's implementation of one kernel of gpu.def, and its name."""
    name = kernel["name"]
    if name.startswith("matmul_"):
        return (lambda: torch.matmul(args[0], args[1])), "cuBLAS (torch.matmul)"
    if name.startswith("conv3x3"):
        return (lambda: F.conv2d(args[0], args[1], padding=1)), "cuDNN (torch conv2d)"
    if name.startswith("softmax"):
        return (lambda: torch.softmax(args[0], dim=-1)), "PyTorch softmax"
    if name.startswith("layer_norm"):
        width = args[0].shape[-1]
        return (lambda: F.layer_norm(args[0], (width,), args[1], args[2])), "PyTorch layer_norm"
    raise SystemExit(f"compare.py: no library call for kernel '{name}'")


DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def time_call(call, argument_bytes, l2_bytes, min_seconds):
    flush = torch.empty(2 * l2_bytes, dtype=torch.uint8, device="cuda") if argument_bytes <= l2_bytes else None
    call()
    torch.cuda.synchronize()
    times, total = [], 0.0
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    while len(times) < 3 or total < min_seconds:
        if flush is not None:
            flush.fill_(len(times) & 0xFF)
        start.record()
        call()
        end.record()
        end.synchronize()
        seconds = start.elapsed_time(end) * 1e-3
        times.append(seconds)
        total += seconds
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("kernels")
    parser.add_argument("ours")
    parser.add_argument("--min-seconds", type=float, default=0.1)
    options = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    kernels = json.load(open(options.kernels))
    ours = {}
    for target in json.load(open(options.ours)):
        if target["target"].startswith("cuda:"):
            for w in target.get("workloads", []):
                ours[w["workload_key"]] = (target["target"], w)
    device = torch.cuda.get_device_properties(0)
    l2_bytes = device.L2_cache_size
    print(f"GPU: {device.name}, {device.multi_processor_count} SMs, L2 {l2_bytes >> 20} MiB; torch {torch.__version__}, "
          f"cuDNN {torch.backends.cudnn.version()}; TF32 off; medians of timed calls, L2 flushed when the arguments fit in it\n")
    print("| kernel | trials | ours ms | library | library ms | ours / library (speed) |")
    print("|---|---:|---:|---|---:|---:|")
    for k in kernels:
        args = [torch.rand(*t["shape"], device="cuda", dtype=DTYPES[t["dtype"]]) for t in k["inputs"]]
        call, implementation = library_call(k, args)
        outputs = sum(torch.Size(t["shape"]).numel() * torch.tensor([], dtype=DTYPES[t["dtype"]]).element_size() for t in k["outputs"])
        argument_bytes = sum(a.numel() * a.element_size() for a in args) + outputs
        library = time_call(call, argument_bytes, l2_bytes, options.min_seconds)
        target, w = ours.get(k["workload_key"], (None, None))
        mine = w.get("best_seconds") if w else None
        ratio = f"{library / mine:.2f}x" if mine else "-"
        mine_text = f"{mine * 1e3:.4f}" if mine else "no record"
        print(f"| {k['name']} | {w['trials'] if w else 0} | {mine_text} | {implementation} | {library * 1e3:.4f} | {ratio} |")
        sys.stdout.flush()
    # Where tensor cores put the libraries (issue 29's f16 goal), with the same protocol.
    n = 4096
    print(f"\nLibraries with tensor cores, {n}x{n}x{n} matmul (the goal of a tensor-core path):\n")
    print("| dtype | library | ms | TFLOP/s |")
    print("|---|---|---:|---:|")
    for dtype in (torch.float16, torch.bfloat16):
        a = torch.rand(n, n, device="cuda", dtype=dtype)
        b = torch.rand(n, n, device="cuda", dtype=dtype)
        seconds = time_call(lambda: torch.matmul(a, b), 3 * n * n * a.element_size(), l2_bytes, options.min_seconds)
        print(f"| {str(dtype).removeprefix('torch.')} | cuBLAS (torch.matmul) | {seconds * 1e3:.4f} | {2 * n**3 / seconds / 1e12:.0f} |")


if __name__ == "__main__":
    main()
