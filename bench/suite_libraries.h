// The vendor implementations that the operators of the paper's suite (bench/suite.def) and of the
// real networks' layer shapes (bench/shapes.def) are timed against: oneDNN's convolutions,
// deconvolution, matmul, inner product, softmax and layer normalisation, and OpenBLAS's GEMM and
// 2-norm. Both libraries are optional: the benchmark is built with those found at configure time
// and names the others as missing.
#pragma once

#include <ansor/runtime.h>

#include <string>
#include <vector>

#include "protocol.h"

namespace ansor::bench {

// The libraries this benchmark was built with, and a line for each one it was built without.
std::vector<std::string> libraries_found();
std::vector<std::string> libraries_missing();

// The libraries' implementations of the operator `op` (a suite kernel's name without its "_bN"
// batch suffix: "c2d", "softmax", ...; the first word of a bench/shapes.def kernel's name:
// "conv3x3", "conv1x1", "conv3x3valid", "dense", "densebiasgelu") at the shapes of `kernel`'s
// arguments, called by the protocol (protocol.h); none where no library implements the operator.
// The operators' attributes (stride, padding, dilation, groups) are those of the two files; the benchmark
// checks every library's output against ours, so a mismatch between the two files shows as a
// failed check, not as a silently different timing.
std::vector<NamedPreparer> suite_libraries(const std::string& op, const ansor_kernel_info& kernel);

}  // namespace ansor::bench
