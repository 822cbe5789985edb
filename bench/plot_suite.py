#!/usr/bin/env python3
"""Draws bench_suite's results: per-kernel bars (ours, each library, naive) and each kernel's
tuning curve (best GFLOP/s against trials and against seconds), from suite.csv and curves.csv.

    plot_suite.py RESULTS_DIR        writes suite_bars.png, curves_trials.png, curves_seconds.png
"""
import csv
import math
import sys
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend is chosen first)


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def gflops(row, column):
    value = row.get(column, "")
    return float(row["flops"]) / (float(value) * 1e-3) / 1e9 if value else 0.0


def plot_bars(rows, out):
    # A library's time columns are empty where its implementation is not native (bench/README.md).
    libraries = [c[: -len("_implementation")] for c in rows[0] if c.endswith("_implementation")]
    series = [("ours (tuned)", "ours_ms")] + [(lib, lib + "_ms") for lib in libraries] + [("naive", "naive_ms")]
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(max(10, 0.55 * len(rows)), 5))
    for i, (label, column) in enumerate(series):
        xs = [k + (i - (len(series) - 1) / 2) * width for k in range(len(rows))]
        ax.bar(xs, [gflops(r, column) for r in rows], width, label=label)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r["kernel"] for r in rows], rotation=60, ha="right")
    ax.set_yscale("log")
    ax.set_ylabel("GFLOP/s (log)")
    ax.set_title("Operator suite: tuned kernels, libraries and the naive program")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))  # beside the bars, never over them
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def plot_curves(curves, x_column, x_label, out):
    kernels = list(curves)
    cols = 7
    rows = math.ceil(len(kernels) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3 * cols, 2.4 * rows), squeeze=False)
    for ax, kernel in zip(axes.flat, kernels):
        points = curves[kernel]
        ax.plot([float(p[x_column]) for p in points], [float(p["best_gflops"]) for p in points])
        ax.set_title(kernel, fontsize=9)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    for ax in axes.flat[len(kernels):]:
        ax.axis("off")
    fig.supxlabel(x_label)
    fig.supylabel("best GFLOP/s so far")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    results = Path(sys.argv[1])
    rows = read_rows(results / "suite.csv")
    if not rows:
        sys.exit(f"plot_suite: {results / 'suite.csv'} has no kernels")
    plot_bars(rows, results / "suite_bars.png")
    curves = defaultdict(list)
    for point in read_rows(results / "curves.csv"):
        curves[point["kernel"]].append(point)
    plot_curves(curves, "trial", "trials", results / "curves_trials.png")
    plot_curves(curves, "seconds", "seconds of tuning", results / "curves_seconds.png")
    print(f"plot_suite: wrote {', '.join(str(results / n) for n in ('suite_bars.png', 'curves_trials.png', 'curves_seconds.png'))}")


if __name__ == "__main__":
    main()
