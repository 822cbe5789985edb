// The descriptor every generated kernel defines for programs that handle kernels generically
// (ansor_kernel_info, runtime/include/ansor/runtime.h): its argument table and the adapters from
// `void* const* args` to its typed C functions. Every code generator prints the same one.
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel_signature.h"
#include "dag/compute_dag.h"

namespace ansor {

// The definitions of the descriptor `symbol_info` of kernel `kernel_name` over the functions
// `symbol`, `symbol_packed`, `symbol_pack_W` and `symbol_W_packed_elements`; `device` is the
// ansor_device enumerator of where the arguments live ("ANSOR_DEVICE_CPU").
std::string kernel_descriptor(const std::vector<ParamDecl>& params, const ComputeDAG& dag, const std::string& kernel_name,
                              const std::string& symbol, const std::string& origin, const std::string& device);

}  // namespace ansor
