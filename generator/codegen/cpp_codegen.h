// C++ code generation for CPU kernels: a lowered kernel becomes an `extern "C"` function over
// the runtime (parallel loops on its thread pool, workspace from its allocator).
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel_signature.h"
#include "lower/lowered_kernel.h"

namespace ansor {

// The C functions of one kernel, each returning 0, or 1 when workspace could not be allocated:
//   int symbol(params...)                 the kernel on plain (row-major) tensors
//   int symbol_packed(params...)          the same with const inputs in packed form
//   int symbol_pack_W(const T* W, T* W_packed), int64_t symbol_W_packed_elements(void)
//                                         for every const input W
// A const input whose layout the schedule does not rewrite packs as a plain copy, so the
// interface does not depend on the schedule. Throws std::invalid_argument for a program lowered
// for a GPU target.
std::string emit_cpp_kernel(const LoweredKernel& kernel, const std::vector<ParamDecl>& params, const std::string& symbol);

}  // namespace ansor
