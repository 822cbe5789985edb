// The vendor implementations that the operators of the paper's suite (bench/suite.def) are timed
// against: oneDNN's convolutions, deconvolution, matmul, softmax, layer normalisation and
// reduction, and OpenBLAS's GEMM. Both libraries are optional: the benchmark is built with those
// found at configure time and names the others as missing.
#pragma once

#include <ansor/runtime.h>

#include <functional>
#include <string>
#include <vector>

#include "bench_support.h"

namespace ansor::bench {

// One library call timed: the median seconds and the implementation the library picked (oneDNN's
// "jit:avx512_core", "gemm:jit", "ref:any", ...), which says whether it had a fast path.
struct LibraryTiming {
  double seconds = 0;
  std::string implementation;
};

// Given the kernel's inputs in argument order, the timing, with the library's output in `out`.
using SuiteLibraryTimer = std::function<LibraryTiming(const std::vector<const float*>& inputs, float* out)>;

struct LibraryRun {
  std::string library;  // "oneDNN", "OpenBLAS"
  SuiteLibraryTimer time;
};

// The libraries this benchmark was built with, and a line for each one it was built without.
std::vector<std::string> libraries_found();
std::vector<std::string> libraries_missing();

// The library implementations of the suite's operator `op` (a kernel's name without its "_bN"
// batch suffix: "c2d", "softmax", ...) at the shapes of `kernel`'s arguments; none where no
// library implements the operator. The operators' attributes (stride, padding, dilation, groups)
// are those of bench/suite.def; the benchmark checks every library's output against ours, so a
// mismatch between the two files shows as a failed check, not as a silently different timing.
std::vector<LibraryRun> suite_library_runs(const std::string& op, const ansor_kernel_info& kernel);

}  // namespace ansor::bench
