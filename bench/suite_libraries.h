// The vendor implementations that the operators of the paper's suite (bench/suite.def), of the
// real networks' layer shapes (bench/shapes.def) and of their low-precision layers
// (bench/lowp.def) are timed against: oneDNN's convolutions, deconvolution, matmul, inner
// product, softmax and layer normalisation, and OpenBLAS's GEMM and 2-norm (f32 only: OpenBLAS
// has no int8 GEMM, and Debian's 0.3.21 is built without its bf16 one, cblas_sbgemm). Both
// libraries are optional: the benchmark is built with those found at configure time and names
// the others as missing.
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
// "conv3x3", "conv1x1", "conv3x3valid", "dense", "densebiasgelu"; of a bench/lowp.def one:
// "densebf16", "densebf16biasrelu", "matmulu8s8", "conv3x3bf16") at the shapes and data types of
// `kernel`'s arguments, called by the protocol (protocol.h); none where no library implements
// the operator. The operators' attributes (stride, padding, dilation, groups, epilogue) are those
// of the files; the benchmark checks every library's output against ours, so a mismatch between
// a file and this mapping shows as a failed check, not as a silently different timing.
std::vector<NamedPreparer> suite_libraries(const std::string& op, const ansor_kernel_info& kernel);

}  // namespace ansor::bench
